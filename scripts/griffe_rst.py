"""A griffe extension: the docstrings' reST roles become Markdown before mkdocstrings renders.

The docstrings are numpydoc with Sphinx roles (``:func:`~polars_fairmetrics.x.y```, ``:math:`x```,
``.. math::`` blocks, double-backtick literals); mkdocstrings renders Markdown, so without this they
show raw. Registered in ``mkdocs.yml`` under the python handler's ``extensions:`` option::

    extensions:
      - scripts/griffe_rst.py:RstToMarkdown

The conversion itself is :func:`rst_to_markdown`, a pure function of the text and a resolver (so
``tests/test_docs_api.py`` checks it on every public docstring without building the site):

* ``:func:`~a.b.c``` → an optional autorefs cross-reference titled ``c`` (``a.b.c`` without the
  ``~``): a link when the target is rendered somewhere in the site, plain code otherwise (the way
  mkdocstrings links signature annotations), so a reference to an undocumented helper never breaks
  ``mkdocs build --strict``. Bare names are resolved relative to the docstring's class and module,
  then the package; names that resolve nowhere (``polars.DataFrame``...) are shown as code.
* ``:math:`x``` → ``$x$`` and ``.. math::`` blocks → ``$$ ... $$``, rendered by
  ``pymdownx.arithmatex`` (generic mode) and KaTeX.
* ````x```` → ```x``` (kept in double backticks when ``x`` holds a backtick, as Markdown
  wants).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from typing import Any

import griffe

PACKAGE = "polars_fairmetrics"

ROLE = re.compile(r":(?:py:)?(func|class|mod|meth|attr|data|exc|obj|math):`([^`]*)`")
"""A Sphinx role with its argument, e.g. ``:func:`~polars_fairmetrics.counts.confusion_counts```."""

MATH_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\. math::[ \t]*(?P<rest>.*)$")
DOUBLE_BACKTICKS = re.compile(r"``(?!`)((?:(?!``|\n[ \t]*\n).)+?)``(?!`)", re.S)
"""A reST literal, possibly wrapped over lines (not over a paragraph break)."""

Resolver = Callable[[str, str], "str | None"]
"""Maps ``(role, target)`` to the full dotted identifier of a documented object, or ``None``."""


def _math_blocks(text: str) -> str:
    """Each ``.. math::`` directive (content on its line and/or indented below) as ``$$``."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = MATH_DIRECTIVE.match(lines[i])
        if match is None:
            out.append(lines[i])
            i += 1
            continue
        indent = match["indent"]
        body = [match["rest"].strip()] if match["rest"].strip() else []
        i += 1
        # The directive's content: the following lines indented deeper (blank lines inside kept).
        while i < len(lines):
            line = lines[i]
            if line.strip() == "":
                nxt = next((x for x in lines[i + 1 :] if x.strip()), None)
                if nxt is None or len(nxt) - len(nxt.lstrip()) <= len(indent) or not body:
                    if body:
                        break
                    i += 1
                    continue
                i += 1
                continue
            if len(line) - len(line.lstrip()) <= len(indent):
                break
            body.append(line.strip())
            i += 1
        if out and out[-1].strip():
            out.append("")
        out.append(f"{indent}$$")
        out.extend(f"{indent}{b}" for b in body)
        out.append(f"{indent}$$")
        if i < len(lines) and lines[i].strip():
            out.append("")
    return "\n".join(out)


def _title(target: str, tilde: bool) -> str:
    shown = target.rsplit(".", 1)[-1] if tilde else target
    return f"<code>{html.escape(shown)}</code>"


def rst_to_markdown(text: str, resolve: Resolver | None = None) -> str:
    """The docstring ``text`` with its reST roles, math and double backticks as Markdown.

    ``resolve(role, target)`` gives the full identifier of a cross-reference target (``None``: not
    a documented object, shown as code). Without a resolver, dotted targets under the package are
    taken as they are.
    """

    def role(match: re.Match[str]) -> str:
        kind, arg = match[1], match[2]
        if kind == "math":
            return f"${arg.strip()}$"
        explicit = re.fullmatch(r"(?s)(.*?)\s*<([^>]+)>", arg)
        label = explicit[1] if explicit else None
        target = explicit[2] if explicit else arg
        tilde = target.startswith("~")
        target = target.lstrip("~.").removesuffix("()")
        if resolve is not None:
            identifier = resolve(kind, target)
        else:
            identifier = target if target.startswith(PACKAGE + ".") or target == PACKAGE else None
        title = html.escape(label) if label else _title(target, tilde)
        if identifier is None:
            return title if label else f"`{target.rsplit('.', 1)[-1] if tilde else target}`"
        return f'<autoref identifier="{identifier}" optional>{title}</autoref>'

    text = _math_blocks(text)
    text = ROLE.sub(role, text)
    return DOUBLE_BACKTICKS.sub(_literal, text)


def _literal(match: re.Match[str]) -> str:
    """A reST literal as a Markdown code span (kept in double backticks if it holds a backtick)."""
    content = match[1]
    return f"``{content}``" if "`" in content else f"`{content}`"


def _walk(obj: griffe.Object) -> Iterator[griffe.Object]:
    yield obj
    for member in obj.members.values():
        if member.is_alias:
            continue
        assert isinstance(member, griffe.Object)
        yield from _walk(member)


class _PackageResolver:
    """Resolves role targets in the loaded package (aliases followed to their definition)."""

    def __init__(self, package: griffe.Module) -> None:
        self.package = package
        self.by_name: dict[str, list[str]] = {}
        for obj in _walk(package):
            if obj.is_module:
                continue
            self.by_name.setdefault(obj.name, []).append(obj.path)

    def lookup(self, path: str) -> str | None:
        if path == PACKAGE:
            return PACKAGE
        if not path.startswith(PACKAGE + "."):
            return None
        try:
            found: Any = self.package[path.removeprefix(PACKAGE + ".")]
            if found.is_alias:
                found = found.final_target
            return str(found.path)
        except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            return None

    def for_object(self, obj: griffe.Object) -> Resolver:
        def resolve(_kind: str, target: str) -> str | None:
            if target.startswith(PACKAGE):
                return self.lookup(target)
            scope: griffe.Object | None = obj
            while scope is not None:  # the docstring's class, module, then the package
                if target.split(".", 1)[0] in scope.members:
                    found = self.lookup(f"{scope.path}.{target}")
                    if found is not None:
                        return found
                scope = scope.parent
            # Elsewhere in the package, if the name (or a dotted path's head) is defined only once.
            head, _, rest = target.partition(".")
            candidates = self.by_name.get(head, [])
            if len(candidates) != 1:
                return None
            return self.lookup(f"{candidates[0]}.{rest}") if rest else candidates[0]

        return resolve


def convert_package(package: griffe.Module) -> int:
    """Rewrite every docstring of ``package`` in place; the number of docstrings rewritten."""
    resolver = _PackageResolver(package)
    changed = 0
    for obj in _walk(package):
        if obj.docstring is None:
            continue
        new = rst_to_markdown(obj.docstring.value, resolver.for_object(obj))
        if new != obj.docstring.value:
            obj.docstring.value = new
            changed += 1
    return changed


class RstToMarkdown(griffe.Extension):
    """Converts the reST of the package's docstrings to Markdown once the package is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name == PACKAGE:
            convert_package(pkg)
