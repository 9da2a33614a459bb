"""The package's modules import each other one way: no cycle, not even a hidden one.

Every module's imports are read from its source (``ast``), at any depth: module level, inside
functions (the usual way to hide a cycle) and under ``if TYPE_CHECKING:`` (a cycle of type
annotations still couples the modules both ways). ``from polars_fairmetrics.x import y`` is an
edge to ``polars_fairmetrics.x.y`` when that is a module, else to ``polars_fairmetrics.x``;
importing a submodule does not count as importing its parent packages (Python runs their
``__init__`` first, but that is not a dependency the module chose).

The documented layering is also checked: the standalone plotting module never imports the report,
and the report never imports the CLI or the namespaces.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "polars_fairmetrics"


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    """The absolute module name of a ``from ... import`` (relative imports included)."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports_of(module: str) -> set[str]:
    """The package modules that ``module`` imports, anywhere in its source."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node, path.name == "__init__.py")
            if target.split(".")[0] != PACKAGE:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in MODULES else target)
    return {m for m in found if m in MODULES and m != module}


GRAPH = {m: imports_of(m) for m in MODULES}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _path(graph: dict[str, set[str]], start: str, goal: str) -> list[str]:
    """One import chain from ``start`` to ``goal`` (for the failure message)."""
    seen = {start}
    queue: list[list[str]] = [[start]]
    while queue:
        chain = queue.pop(0)
        for nxt in sorted(graph[chain[-1]]):
            if nxt == goal:
                return [*chain, nxt]
            if nxt not in seen:
                seen.add(nxt)
                queue.append([*chain, nxt])
    return []


def test_the_graph_is_read() -> None:
    assert "polars_fairmetrics.report" in MODULES
    assert "polars_fairmetrics.counts" in GRAPH["polars_fairmetrics.metrics"] or (
        "polars_fairmetrics.counts" in GRAPH["polars_fairmetrics.disparity"]
    )


def test_no_import_cycle() -> None:
    cycles = _cycles(GRAPH)
    described = []
    for component in cycles:
        a = component[0]
        back = next(b for b in component if b != a and a in _path(GRAPH, b, a))
        described.append(" -> ".join(_path(GRAPH, a, back) + _path(GRAPH, back, a)[1:]))
    assert not cycles, "import cycles:\n" + "\n".join(described)


def test_cycle_detection_works() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def _reaches(start: str, goal_prefix: str) -> list[str]:
    for goal in MODULES:
        if goal == goal_prefix or goal.startswith(goal_prefix + "."):
            chain = _path(GRAPH, start, goal)
            if chain:
                return chain
    return []


@pytest.mark.parametrize(
    ("module", "forbidden"),
    [
        ("polars_fairmetrics.plot", "polars_fairmetrics.report"),
        ("polars_fairmetrics.report", "polars_fairmetrics.cli"),
        ("polars_fairmetrics.report", "polars_fairmetrics._frame_namespace"),
        ("polars_fairmetrics.report", "polars_fairmetrics._namespaces"),
        ("polars_fairmetrics.disparity", "polars_fairmetrics.report"),
        ("polars_fairmetrics.metrics", "polars_fairmetrics.disparity"),
        ("polars_fairmetrics.counts", "polars_fairmetrics.metrics"),
    ],
)
def test_layers_point_one_way(module: str, forbidden: str) -> None:
    starts = [m for m in MODULES if m == module or m.startswith(module + ".")]
    for start in starts:
        chain = _reaches(start, forbidden)
        assert not chain, " -> ".join(chain)
