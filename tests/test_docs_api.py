"""The API reference's docstring conversion (scripts/griffe_rst.py): no reST reaches the site.

The docstrings are numpydoc with Sphinx roles; a griffe extension rewrites them into Markdown
(autorefs cross-references, arithmatex math) before mkdocstrings renders them. These tests run the
conversion on every docstring of the package, without building the site.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

griffe = pytest.importorskip("griffe")

ROOT = Path(__file__).resolve().parents[1]
REST = re.compile(r":(func|class|mod|meth|attr|data|math|exc|obj):`|\.\. math::")


def _extension() -> ModuleType:
    spec = importlib.util.spec_from_file_location("griffe_rst", ROOT / "scripts" / "griffe_rst.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["griffe_rst"] = module
    spec.loader.exec_module(module)
    return module


rst = _extension()


def _package() -> Any:
    return griffe.load("polars_fairmetrics", search_paths=[str(ROOT)], resolve_aliases=False)


def test_no_rest_role_survives_in_any_docstring() -> None:
    package = _package()
    before = [o for o in rst._walk(package) if o.docstring and REST.search(o.docstring.value)]
    assert len(before) > 50  # the package does use reST roles: the test checks something
    changed = rst.convert_package(package)
    assert changed >= len(before)
    left = [
        (o.path, found.group())
        for o in rst._walk(package)
        if o.docstring and (found := REST.search(o.docstring.value))
    ]
    assert left == []
    # Double backticks are left only around code holding a backtick (valid Markdown there).
    literal = re.compile(r"``(?!`)((?:(?!``).)+?)``", re.S)
    doubled = [
        (o.path, m[1])
        for o in rst._walk(package)
        if o.docstring
        for m in literal.finditer(o.docstring.value)
        if "`" not in m[1]
    ]
    assert doubled == []


def test_sample_conversion_is_exact() -> None:
    text = (
        "Counts from :func:`~polars_fairmetrics.counts.confusion_counts` (see :mod:`polars.x`),\n"
        "with ``by`` and :math:`TPR_g = TP_g / (TP_g + FN_g)`:\n"
        "\n"
        "    .. math:: \\Delta = |c - c_{parity}|\n"
        "        + 1\n"
        "\n"
        "    end, :class:`Counts <polars_fairmetrics.metrics.Counts>` and "
        ":func:`polars_fairmetrics.metrics.metric`."
    )
    expected = (
        'Counts from <autoref identifier="polars_fairmetrics.counts.confusion_counts" optional>'
        "<code>confusion_counts</code></autoref> (see `polars.x`),\n"
        "with `by` and $TPR_g = TP_g / (TP_g + FN_g)$:\n"
        "\n"
        "    $$\n"
        "    \\Delta = |c - c_{parity}|\n"
        "    + 1\n"
        "    $$\n"
        "\n"
        '    end, <autoref identifier="polars_fairmetrics.metrics.Counts" optional>Counts</autoref>'
        ' and <autoref identifier="polars_fairmetrics.metrics.metric" optional>'
        "<code>polars_fairmetrics.metrics.metric</code></autoref>."
    )
    assert rst.rst_to_markdown(text) == expected


def test_math_block_on_following_lines_and_at_the_end() -> None:
    text = "Intro:\n\n.. math::\n\n    a = b\n\n    c = d\n"
    assert rst.rst_to_markdown(text) == "Intro:\n\n$$\na = b\nc = d\n$$\n"
    assert rst.rst_to_markdown(".. math:: x") == "$$\nx\n$$"
    assert rst.rst_to_markdown("``a `b` c`` and ``d\ne``") == "``a `b` c`` and `d\ne`"


def test_bare_names_resolve_relative_to_the_docstring() -> None:
    package = _package()
    resolver = rst._PackageResolver(package)
    # In monitor.window_change, ``read_counts`` is the monitor module's function; a re-export
    # of the package resolves to where it is defined; a name that is nowhere stays code.
    resolve = resolver.for_object(package["monitor.window_change"])
    assert resolve("func", "read_counts") == "polars_fairmetrics.monitor.read_counts"
    assert resolve("func", "polars_fairmetrics.combine_counts") == (
        "polars_fairmetrics.counts.combine_counts"
    )
    assert resolve("func", "no_such_function_anywhere") is None
    # A dotted name whose head is defined once elsewhere in the package.
    assert resolve("attr", "MetricSpec.proportion") == (
        "polars_fairmetrics.metrics.MetricSpec.proportion"
    )
    assert resolve("class", "polars.DataFrame") is None
    converted = rst.rst_to_markdown("See :func:`no_such_function_anywhere`.", resolve)
    assert converted == "See `no_such_function_anywhere`."
