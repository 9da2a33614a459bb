r"""Plain-text renderers: the terminal and Markdown.

Both show the readable views (:mod:`polars_fairmetrics.report.views`). Every piece of text —
views, titles, notes, the inputs (column names, the source) — is made
:func:`~polars_fairmetrics.report.text.visible` first, so no control character (an ANSI escape
``\x1b[…``, a bidirectional override) reaches the output.

Markdown additionally neutralises every inline construct a text could form: ``& < >`` become
entities (no raw HTML), ``\ ` * _ { } [ ] ( ) ! # |`` are backslash-escaped (no emphasis,
link, image, code span or table cell break), ``~ @ $``, the dot of ``www.`` and the colon of
``https://``, ``mailto:`` are written as entities (no strikethrough, math, or autolinked URL or
e-mail address), and a text that starts a line cannot start a list, quote, heading or code block
(:func:`md_line`). A group named
``![img](http://x)`` or ``[x](javascript:alert(1))`` shows as that text.
"""

from __future__ import annotations

import re
import shutil
import textwrap
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from polars_fairmetrics.report.findings import FINDINGS_TITLE, anchors, findings, no_findings_text
from polars_fairmetrics.report.model import Contents
from polars_fairmetrics.report.text import UNDEFINED, visible
from polars_fairmetrics.report.views import View, section_views
from polars_fairmetrics.results import display_value

__all__ = [
    "LEGEND",
    "inputs_pairs",
    "markdown_table",
    "md_escape",
    "render_markdown",
    "render_terminal",
    "text_table",
]

LEGEND = f"{UNDEFINED} = undefined (0/0; see Undefined values)."


def generated_by() -> str:
    """``polars_fairmetrics <version> (polars <version>)``."""
    from importlib.metadata import PackageNotFoundError, version

    import polars as pl

    try:
        own = version("polars_fairmetrics")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        own = "unknown"
    return f"polars_fairmetrics {own} (polars {pl.__version__})"


def write_text(path: str | Path | None, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8) when a path is given."""
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")


def inputs_pairs(report: Contents) -> list[tuple[str, str]]:
    """What was audited, as (label, text) pairs (text made visible)."""
    i = report.inputs
    pred = i.get("y_pred") or f"{i.get('y_score')} >= {i.get('threshold')}"
    ref = i.get("reference")
    # group values as the tables label them (text quoted, a date as 2020-01-01, not a repr)
    if isinstance(ref, dict):
        ref_text = ", ".join(f"{k} = {display_value(v)}" for k, v in ref.items())
    elif isinstance(ref, list):
        ref_text = "(" + ", ".join(display_value(v) for v in ref) + ")"
    else:
        special = isinstance(ref, str) and ref in ("overall", "rest", "largest")
        ref_text = str(ref) if special else display_value(ref)
    pairs = [
        ("source", str(i.get("source") or "(a frame)")),
        ("true label", str(i.get("y_true"))),
        ("prediction", str(pred)),
    ]
    if i.get("weight"):
        pairs.append(("weight", str(i["weight"])))
    pairs += [
        (
            "groups",
            ", ".join(map(str, i.get("by", [])))
            + (" (intersectional)" if i.get("intersectional") else ""),
        ),
        ("reference", ref_text),
        (
            "rows",
            f"{i.get('n_rows')} ({i.get('n_counted')} counted, {i.get('n_null')} left out "
            "for a null label, prediction or weight)",
        ),
    ]
    if i.get("intervals") is not None:
        pairs.append(
            (
                "intervals",
                f"{i['intervals']} bootstrap resamples, {i.get('ci_method')} "
                f"{i.get('ci_level')}, random seed {i.get('seed')}",
            )
        )
    return [(k, visible(v)) for k, v in pairs]


# ---------------------------------------------------------------------------------------------
# Terminal
# ---------------------------------------------------------------------------------------------


def _width(text: str) -> int:
    """Columns a text takes on a terminal (wide East Asian characters: 2, combining: 0)."""
    total = 0
    for c in text:
        if unicodedata.combining(c):
            continue
        total += 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1
    return total


def _pad(text: str, width: int, right: bool) -> str:
    fill = " " * (width - _width(text))
    return fill + text if right else text + fill


def _wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` terminal columns: broken at spaces, a word longer
    than a line broken where it must (only labels and headings are wrapped, never a number)."""
    if _width(text) <= width:
        return [text]
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if _width(candidate) <= width:
            line = candidate
            continue
        if line:
            lines.append(line)
        line = ""
        for c in word:  # a word wider than a line: cut it
            if _width(line + c) > width:
                lines.append(line)
                line = ""
            line += c
    lines.append(line)
    return [x for x in lines if x] or [""]


_MIN_LABEL = 16
"""Narrowest the label (first) column is made when a table must fit a width."""


def _fitted_widths(view: View, width: int | None) -> list[int]:
    """Column widths: each column as wide as its widest cell and heading; to fit ``width``, a
    heading or a text cell (a label) is wrapped, never a number. The label column shares the
    width with the widest single other column."""
    cells = [max([0, *(_width(r[i]) for r in view.rows)]) for i in range(len(view.columns))]
    heads = [max(_width(w) for w in c.split(" ")) if c else 0 for c in view.columns]
    widths = [max(c, _width(h)) for c, h in zip(cells, view.columns, strict=True)]
    if width is None or len(widths) < 2:
        return widths
    # the label column: leave room for the widest number column beside it
    rest = max(cells[i] if view.numeric[i] else min(widths[i], 24) for i in range(1, len(cells)))
    widths[0] = min(widths[0], max(_MIN_LABEL, heads[0], width - 3 - rest))
    room = width - widths[0] - 3  # a column alone beside the label
    for i in range(1, len(widths)):
        floor = cells[i] if view.numeric[i] else min(cells[i], 12)
        widths[i] = max(min(widths[i], room), floor, min(heads[i], room))
    return widths


def text_table(view: View, width: int | None = None) -> list[str]:
    """A view as lines of a plain-text table (every number shown in full, on one line).

    With ``width``, a table wider than that is cut into blocks of whole columns, each block
    repeating the first (label) column, and headings and labels too long for a column wrap onto
    more lines; so no line is wider than ``width`` (unless one number alone is) and the terminal
    never wraps a cell mid-number.

    Examples
    --------
    >>> from polars_fairmetrics.report.views import View
    >>> v = View(None, ("metric", 'group="a"', 'group="b"'),
    ...          (("tpr", "0.50 [0.40, 0.60]", "0.70 [0.60, 0.80]"),), (False, True, True))
    >>> print("\\n".join(text_table(v, 30)))
    metric | group="a"
    -------+------------------
    tpr    | 0.50 [0.40, 0.60]
    <BLANKLINE>
    metric | group="b"
    -------+------------------
    tpr    | 0.70 [0.60, 0.80]
    """
    widths = _fitted_widths(view, width)
    blocks: list[list[int]] = [list(range(len(widths)))]
    if width is not None and len(widths) > 1 and sum(widths) + 3 * (len(widths) - 1) > width:
        blocks = [[0]]
        for i in range(1, len(widths)):
            used = sum(widths[j] for j in blocks[-1]) + 3 * (len(blocks[-1]) - 1)
            if len(blocks[-1]) > 1 and used + 3 + widths[i] > width:
                blocks.append([0])
            blocks[-1].append(i)

    def lines(cells: Sequence[str], cols: list[int], numeric: bool) -> list[str]:
        parts = [
            [cells[i]] if numeric and view.numeric[i] else _wrap(cells[i], widths[i]) for i in cols
        ]
        out = []
        for k in range(max(len(p) for p in parts)):
            out.append(
                " | ".join(
                    _pad(p[k] if k < len(p) else "", widths[i], numeric and view.numeric[i])
                    for p, i in zip(parts, cols, strict=True)
                ).rstrip()
            )
        return out

    out: list[str] = []
    for b, cols in enumerate(blocks):
        if b:
            out.append("")
        out += lines(view.columns, cols, False)
        out.append("-+-".join("-" * widths[i] for i in cols))
        for row in view.rows:
            out += lines(row, cols, True)
    return out


MIN_TERMINAL_WIDTH = 60
"""The narrowest terminal the report is laid out for (a table's numbers and intervals need it)."""


def render_terminal(report: Contents, *, width: int | None = None) -> str:
    """The report as plain text: a heading, what was audited and a table per attribute.

    Every line fits ``width`` columns (default: the terminal's, from 60 to 200): wide tables
    are cut into blocks of whole columns (:func:`text_table`), a number and its interval are
    never split across lines.
    """
    cols = width or max(MIN_TERMINAL_WIDTH, min(shutil.get_terminal_size((120, 24)).columns, 200))
    out: list[str] = ["Fairness audit", "=" * 14]

    def wrapped(text: str) -> list[str]:
        return textwrap.wrap(text, width=cols, subsequent_indent="  ") or [""]

    for k, v in inputs_pairs(report):
        out += wrapped(f"{k}: {v}")
    for n in report.notes:
        out += wrapped(f"note: {visible(n)}")
    out += ["", FINDINGS_TITLE, "-" * len(FINDINGS_TITLE)]
    found = findings(report)
    for f in found:
        where = f" [see {report.section(f.section).title}]" if f.section in report else ""
        lines = textwrap.wrap(visible(f.text + where), width=min(cols, 100) - 2)
        out += [("- " if i == 0 else "  ") + line for i, line in enumerate(lines)]
    if not found:
        out.append(no_findings_text(report))
    for s in report.sections.values():
        title = visible(s.title)
        out += ["", title, "-" * _width(title)]
        out += textwrap.wrap(visible(s.description), width=min(cols, 100))
        for view in section_views(s):
            if view.heading is not None:
                out += wrapped(f"[{view.heading}]")
            if view.height:
                out += text_table(view, cols)
        for n in s.notes:
            out += wrapped(f"note: {visible(n)}")
    out += ["", LEGEND]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------------------------

_MD_ENTITY = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "~": "&#126;",
    "@": "&#64;",
    "$": "&#36;",
}
_MD_BACKSLASH = set("\\`*_{}[]()!#|")
_SCHEME_END = re.compile(r"(?i)(mailto|xmpp)$")


def md_escape(text: str) -> str:
    r"""``text`` as Markdown that renders as exactly that text (made visible first).

    Examples
    --------
    >>> md_escape("![img](http://x) <b>")
    '\\!\\[img\\]\\(http&#58;//x\\) &lt;b&gt;'
    >>> md_escape("note: plain")
    'note: plain'
    """
    out: list[str] = []
    shown = visible(text)
    for i, c in enumerate(shown):
        if c in _MD_ENTITY:
            out.append(_MD_ENTITY[c])
        elif c in _MD_BACKSLASH:
            out.append("\\" + c)
        elif c == "." and shown[max(0, i - 3) : i].lower() == "www":  # no autolinked www.
            out.append("&#46;")
        elif c == ":" and (
            shown[i + 1 : i + 2] == "/" or _SCHEME_END.search(shown[max(0, i - 6) : i])
        ):  # no autolinked https://, ftp://, mailto:, xmpp:
            out.append("&#58;")
        else:
            out.append(c)
    return "".join(out)


def md_line(text: str) -> str:
    r""":func:`md_escape` for a text that starts a line: a leading list, quote or heading marker
    (``-``, ``+``, ``1.``) or indentation cannot form a block.

    Examples
    --------
    >>> md_line("- item"), md_line("1. first"), md_line("    code")
    ('\\- item', '1\\. first', '&#32;   code')
    """
    out = md_escape(text)
    if out[:1] in ("-", "+"):
        return "\\" + out
    m = re.match(r"(\d+)([.)])", out)
    if m:
        return f"{m.group(1)}\\{m.group(2)}{out[m.end() :]}"
    if out[:1] == " ":
        return "&#32;" + out[1:]
    return out


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    """A Markdown table, every cell escaped (:func:`md_escape`)."""
    head = "| " + " | ".join(md_escape(str(c)) for c in columns) + " |"
    sep = "|" + "|".join("---" for _ in columns) + "|"
    body = ["| " + " | ".join(md_escape(str(v)) for v in row) + " |" for row in rows]
    return [head, sep, *body]


def render_markdown(report: Contents, path: str | Path | None = None) -> str:
    """The report as Markdown (every text escaped), written to ``path`` when given."""
    out: list[str] = ["# Fairness audit", ""]
    out += [f"- {md_escape(k)}: {md_escape(v)}" for k, v in inputs_pairs(report)]
    out += [f"- note: {md_escape(n)}" for n in report.notes]
    ids = anchors(report)  # safe stems ([A-Za-z0-9_-]): raw HTML of our own, never the data's
    out += ["", '<a id="findings"></a>', "", f"## {FINDINGS_TITLE}", ""]
    found = findings(report)
    for f in found:
        link = (
            f" [See {md_escape(report.section(f.section).title)}](#{ids[f.section]})."
            if f.section in report
            else ""
        )
        out.append(f"- {md_escape(f.text)}{link}")
    if not found:
        out.append(md_line(no_findings_text(report)))
    out += ["", "## Contents", "", f"1. [{FINDINGS_TITLE}](#findings)"]
    out += [f"1. [{md_escape(s.title)}](#{ids[n]})" for n, s in report.sections.items()]
    for name, s in report.sections.items():
        out += ["", f'<a id="{ids[name]}"></a>', ""]
        out += [f"## {md_escape(s.title)}", "", md_line(s.description)]
        for view in section_views(s):
            if not view.height:
                continue
            out.append("")
            if view.heading is not None:
                out += [f"### {md_escape(view.heading)}", ""]
            out += markdown_table(view.columns, view.rows)
        for n in s.notes:
            out += ["", f"Note: {md_escape(n)}"]
    out += ["", f"*{md_escape(LEGEND)}*", "", f"Generated by {md_escape(generated_by())}."]
    text = "\n".join(out) + "\n"
    write_text(path, text)
    return text
