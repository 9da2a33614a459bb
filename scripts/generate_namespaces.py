"""Generate the explicit `lf.fair` / `df.fair` delegates (polars_fairmetrics/_frame_namespace.py).

Every method is written out (no ``__getattr__`` forwarding), with the very signature and
docstring summary of the function it delegates to, so autocompletion, ``help()`` and the API
reference show every argument. Run after changing a public function's signature::

    python scripts/generate_namespaces.py

``tests/test_namespaces.py`` fails when the generated file is out of date.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

from polars_fairmetrics._lazy import LAZY_MODULES  # reached through a LazyModule

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "polars_fairmetrics" / "_frame_namespace.py"

FRAME_METHODS: list[tuple[str, str]] = [
    ("counts", "confusion_counts"),
    ("metrics", "group_metrics"),
    ("metrics", "metrics_from_counts"),
    ("disparity", "disparities"),
    ("disparity", "between_groups"),
    ("disparity", "fairness_criteria"),
    ("significance", "disparity_tests"),
    ("report", "audit"),
    ("bootstrap", "bootstrap_metrics"),
    ("bootstrap", "resample_counts"),
    ("bootstrap", "bootstrap_counts"),
    ("bootstrap", "bootstrap_rows"),
    ("ensemble", "ensemble_sample_metrics"),
    ("ensemble", "ensemble_labels"),
    ("ensemble", "ensemble_group_metrics"),
    ("ensemble", "ensemble_group_sums"),
    ("ensemble", "ensemble_metrics_from_sums"),
    ("ensemble", "ensemble_disparities"),
    ("weights", "with_importance_weights"),
    ("weights", "with_bias_adjusted_weights"),
    ("weights", "bias_adjusted_metrics"),
    ("weights", "importance_weighted_counts"),
    ("weights", "importance_weighted_metrics"),
    ("weights", "bias_adjusted_counts"),
    ("deployment", "deployment_counts"),
    ("deployment", "deployment_metrics"),
    ("deployment", "threshold_for_precision"),
    ("curves", "curve_counts"),
    ("curves", "roc_curve"),
    ("curves", "pr_curve"),
    ("curves", "curve_summaries"),
    ("curves", "summary_disparities"),
    ("calibration", "score_cells"),
    ("calibration", "reliability_curve"),
    ("calibration", "calibration_metrics"),
    ("calibration", "calibration_disparities"),
    ("models", "compare_models"),
    ("models", "compare_models_long"),
    ("monitor", "append_batch"),
    ("monitor", "period_criteria"),
    ("monitor", "period_disparities"),
]
"""(module of ``polars_fairmetrics``, function): the frame methods, in this order."""

_BUILTIN = {"str", "int", "float", "bool", "None", "tuple", "list", "dict", "type", "object"}

_TYPING = "polars_fairmetrics._typing"


def _home(module: str, name: str, seen: frozenset[str] = frozenset()) -> str:
    """The module that defines ``name`` as seen from ``module`` (follows ``from x import``)."""
    if module in seen:
        raise LookupError(f"import cycle resolving {name!r}")
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return module
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    for node in tree.body:
        targets: list[str] = []
        if isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target.id]
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            targets = [node.name]
        if name in targets:
            return module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    if node.module.startswith("polars_fairmetrics"):
                        return _home(node.module, alias.name, seen | {module})
                    return node.module
    raise LookupError(f"cannot find where {name!r} comes from in {module}")


def _names(annotation: str) -> set[str]:
    code = re.sub(r"'[^']*'|\"[^\"]*\"", "", annotation)
    found = {n.split(".")[0] for n in re.findall(r"[A-Za-z_][A-Za-z_0-9.]*", code)}
    return found - _BUILTIN


def _default(value: object) -> str:
    text = repr(value)
    if "<" in text:
        raise ValueError(f"default {text} cannot be written as code")
    return text


def render() -> str:
    """The generated module's source."""
    imports: dict[str, set[str]] = {}
    methods: list[str] = []
    for module_name, func_name in FRAME_METHODS:
        module = importlib.import_module(f"polars_fairmetrics.{module_name}")
        func = getattr(module, func_name)
        sig = inspect.signature(func)
        params = list(sig.parameters.values())
        first, rest = params[0], params[1:]
        lines = ["        self,"]
        call = ["            self._frame,"]
        star_done = False
        for p in rest:
            ann = str(p.annotation)
            for n in _names(ann):
                if n == "pl":
                    continue
                imports.setdefault(_home(func.__module__, n), set()).add(n)
            if p.kind is inspect.Parameter.VAR_KEYWORD:
                lines.append(f"        **{p.name}: {ann},")
                call.append(f"            **{p.name},")
                continue
            if p.kind is inspect.Parameter.KEYWORD_ONLY and not star_done:
                lines.append("        *,")
                star_done = True
            default = "" if p.default is inspect.Parameter.empty else f" = {_default(p.default)}"
            lines.append(f"        {p.name}: {ann}{default},")
            call.append(
                f"            {p.name}={p.name},"
                if p.kind is inspect.Parameter.KEYWORD_ONLY
                else f"            {p.name},"
            )
        ret = str(sig.return_annotation)
        for n in _names(ret):
            if n != "pl":
                imports.setdefault(_home(func.__module__, n), set()).add(n)
        summary = (inspect.getdoc(func) or "").splitlines()[0]
        doc = (
            f"{summary}\n\n        Delegates to :func:`polars_fairmetrics.{func_name}`\n"
            f"        with this frame as ``{first.name}``."
        )
        methods.append(
            f"    def {func_name}(\n"
            + "\n".join(lines)
            + f"\n    ) -> {ret}:\n"
            + f'        """{doc}\n        """\n'
            + f"        return _{module_name}.{func_name}(\n"
            + "\n".join(call)
            + "\n        )\n"
        )
    modules = sorted({m for m, _ in FRAME_METHODS})
    typing_only = {k: v for k, v in imports.items() if k in ("typing_extensions",)}
    runtime = {k: v for k, v in imports.items() if k not in typing_only}
    head = [
        '"""The ``lf.fair`` / ``df.fair`` delegates. GENERATED by scripts/generate_namespaces.py.',
        "",
        "Do not edit by hand: change the function, then run",
        "``python scripts/generate_namespaces.py``.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
    ]
    std = sorted(k for k in runtime if not k.startswith("polars_fairmetrics"))
    # own names are annotations only (strings, `from __future__ import annotations`), except the
    # type variable of `Generic[FrameT]`: importing them for type checkers only, and the modules
    # that import NumPy through a LazyModule, keeps `import polars_fairmetrics` light
    own = sorted(k for k in runtime if k.startswith("polars_fairmetrics") and k != _TYPING)
    typing_names = {"TYPE_CHECKING", "Generic"} | runtime.get("typing", set())
    for k in std:
        if k != "typing":
            head.append(f"from {k} import {', '.join(sorted(runtime[k]))}")
    head.append(f"from typing import {', '.join(sorted(typing_names))}")
    head += ["", "import polars as pl", ""]
    head += [
        f"from polars_fairmetrics import {m} as _{m}" for m in modules if m not in LAZY_MODULES
    ]
    head.append("from polars_fairmetrics._lazy import LazyModule")
    if _TYPING in runtime:
        head.append(f"from {_TYPING} import {', '.join(sorted(runtime[_TYPING]))}")
    head += ["", "if TYPE_CHECKING:"]
    for k, v in typing_only.items():
        head.append(f"    from {k} import {', '.join(sorted(v))}")
    head += [
        f"    from polars_fairmetrics import {m} as _{m}" for m in modules if m in LAZY_MODULES
    ]
    for k in own:
        head.append(f"    from {k} import {', '.join(sorted(runtime[k]))}")
    head.append("else:")
    head += [
        f'    _{m} = LazyModule("polars_fairmetrics.{m}")' for m in modules if m in LAZY_MODULES
    ]
    head += [
        "",
        "",
        "class FrameNamespace(Generic[FrameT]):",
        '    """``lf.fair.*`` / ``df.fair.*``: each method is the function of the same name with',
        '    this frame as its first argument (a LazyFrame gives a LazyFrame)."""',
        "",
        "    def __init__(self, frame: FrameT) -> None:",
        "        self._frame: FrameT = frame",
        "",
    ]
    return "\n".join(head) + "\n" + "\n".join(methods)


def formatted() -> str:
    """:func:`render`, sorted and formatted by ruff (what the file must contain)."""
    ruff = [sys.executable, "-m", "ruff"]
    name = ["--stdin-filename", str(TARGET)]
    fixed = subprocess.run(
        [*ruff, "check", "-q", "--fix-only", "--select", "I,F401", *name, "-"],
        input=render(),
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    return subprocess.run(
        [*ruff, "format", "-q", *name, "-"],
        input=fixed,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout


def main() -> int:
    TARGET.write_text(formatted(), encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
