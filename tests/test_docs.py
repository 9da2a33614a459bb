"""Every ```python block of the README and of docs/*.md runs (docs are part of the feature).

Blocks of one page run in order in one namespace, so a page reads like a session. A page whose
examples need data that is not shipped marks those blocks ```python skip-test.

Blocks fenced ```python exec="on" ... session="<page>" are also run by markdown-exec when the site
is built, and their printed output is shown under them: the output on the site is produced by the
code itself, so it cannot drift. markdown-exec runs only those blocks, in their session, from the
directory of the build; so they run here a second time on their own, in a fresh namespace, and must
all name one session per page (the page's stem). Blocks fenced with ``html="true"`` print a figure
as inline SVG, which the site shows beneath them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python(?P<attrs>[ \t][^\n]*)?\n(?P<code>.*?)^```", re.S | re.M)
ATTR = re.compile(r'(\w+)="([^"]*)"')


def _blocks(page: Path) -> list[tuple[dict[str, str], str]]:
    """The page's runnable python blocks: (fence attributes, code); ``skip-test`` ones left out."""
    found = []
    for match in BLOCK.finditer(page.read_text(encoding="utf-8")):
        attrs = match["attrs"] or ""
        words = attrs.split()
        if "skip-test" in words or (words and "=" not in words[0]):
            continue  # ``python skip-test``, ``python spark``: run elsewhere or not at all
        found.append((dict(ATTR.findall(attrs)), match["code"]))
    return found


def _run(page: Path, blocks: list[str]) -> list[str]:
    """Run the blocks in one namespace; what each block printed with ``print``."""
    printed: list[str] = []

    def capture(*args: object, sep: str | None = " ", end: str | None = "\n", **_: object) -> None:
        printed[-1] += (" " if sep is None else sep).join(map(str, args))
        printed[-1] += "\n" if end is None else end

    namespace: dict[str, object] = {"__name__": f"doc_{page.stem}", "print": capture}
    for i, code in enumerate(blocks):
        printed.append("")
        try:
            exec(compile(code, f"{page.name}[block {i}]", "exec"), namespace)
        except Exception as exc:  # pragma: no cover - the message says which block failed
            raise AssertionError(f"{page.name} block {i} failed: {exc!r}\n{code}") from exc
    return printed


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_examples_run(page: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocks = _blocks(page)
    if not blocks:
        pytest.skip("no python examples")
    monkeypatch.chdir(tmp_path)
    _run(page, [code for _, code in blocks])
    executed = [(attrs, code) for attrs, code in blocks if attrs.get("exec") == "on"]
    if executed:
        # What the site build runs: the exec blocks alone, in one session named after the page.
        assert {attrs.get("session") for attrs, _ in executed} == {page.stem}
        exec_dir = tmp_path / "exec"
        exec_dir.mkdir()
        monkeypatch.chdir(exec_dir)
        printed = _run(page, [code for _, code in executed])
        # The build runs them from the repository root: they must not write files.
        assert sorted(p.name for p in exec_dir.iterdir()) == []
        # A block shown with a result box prints something; one without prints nothing (or its
        # output would be lost). A block with html="true" prints the HTML shown beneath it (a
        # figure as inline SVG): one element, never also a text result box.
        for (attrs, code), out in zip(executed, printed, strict=True):
            where = f"{page.name}: {attrs}\n{code}"
            if attrs.get("html") == "true":
                assert "result" not in attrs and attrs.get("source") == "block", where
                assert out.strip().startswith("<svg") and out.strip().endswith("</svg>"), where
            else:
                assert bool(out.strip()) == ("result" in attrs), where
