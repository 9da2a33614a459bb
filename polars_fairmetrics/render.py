"""Renderers of a :class:`~polars_fairmetrics.report.Report`.

- :func:`render_terminal`: plain text tables;
- :func:`render_json` / :func:`report_to_dict`: JSON with a versioned, documented schema
  (``docs/report.md``): exact numbers, ``null`` for undefined values;
- :func:`write_parquet`: one tidy Parquet file per section plus ``manifest.json``;
- :func:`render_markdown`: Markdown tables;
- :func:`render_html`: one self-contained HTML page (inline CSS and SVG plots, no script, no
  network access needed to view it). Every value taken from the data is escaped.

Readable *views* (pivoted, formatted text) are used by the terminal, Markdown and HTML renderers;
JSON and Parquet carry the tidy tables unchanged.
"""

from __future__ import annotations

import html
import json
import math
import shutil
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from polars_fairmetrics.report import Report, Section

__all__ = [
    "MISSING_PLOT_NOTE",
    "render_html",
    "render_json",
    "render_markdown",
    "render_terminal",
    "report_to_dict",
    "section_views",
    "write_parquet",
]

UNDEFINED = "—"
"""How an undefined (null) value is shown in the readable views."""
LEGEND = f"{UNDEFINED} = undefined (0/0; see Undefined values)."
MISSING_PLOT_NOTE = (
    "Tables only: plots need matplotlib, which is not installed "
    "(pip install 'polars_fairmetrics[plot]')."
)
MAX_PIVOT_GROUPS = 12
"""Above this many groups, pivoted views put the groups in rows instead of columns."""

View = tuple[str | None, pl.DataFrame]
"""A readable view of a section: an optional sub-heading and a table of text."""


# ---------------------------------------------------------------------------------------------
# Formatting and views
# ---------------------------------------------------------------------------------------------


def _fmt(value: Any) -> str:
    """A value as text: 4 decimals for floats, the undefined mark for null."""
    if value is None:
        return UNDEFINED
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if value != 0.0 and abs(value) < 1e-4:
            return f"{value:.3g}"
        return f"{value:.4f}"
    return str(value)


def _cell(row: dict[str, Any], column: str) -> str:
    """A value with its interval when the row has one (``value [low, high]``)."""
    text = _fmt(row[column])
    lo, hi = (("ci_low", "ci_high") if column == "value"
              else (f"{column}_ci_low", f"{column}_ci_high"))
    if lo in row and hi in row and row[column] is not None:
        text += f" [{_fmt(row[lo])}, {_fmt(row[hi])}]"
    return text


def _text_frame(table: pl.DataFrame, columns: Sequence[str] | None = None) -> pl.DataFrame:
    """The table with every value formatted as text."""
    cols = list(columns) if columns is not None else table.columns
    data = {c: [_fmt(v) for v in table[c].to_list()] for c in cols}
    return pl.DataFrame(data, schema=dict.fromkeys(cols, pl.String))


def _pivot(table: pl.DataFrame, row_key: str, cell: Callable[[dict[str, Any]], str]
           ) -> list[View]:
    """Per attribute: ``row_key`` (metric / criterion) × group, cells formatted by ``cell``."""
    views: list[View] = []
    for (attr,), part in table.group_by("attribute", maintain_order=True):
        groups = list(dict.fromkeys(_fmt(g) if g is not None else "null"
                                    for g in part["group"].to_list()))
        names = list(dict.fromkeys(part[row_key].to_list()))
        cells: dict[tuple[str, str], str] = {}
        for r in part.iter_rows(named=True):
            g = _fmt(r["group"]) if r["group"] is not None else "null"
            cells[(r[row_key], g)] = cell(r)
        if len(groups) <= MAX_PIVOT_GROUPS:
            data: dict[str, list[str]] = {row_key: names}
            for g in groups:
                data[g] = [cells.get((m, g), "") for m in names]
        else:
            data = {"group": groups}
            for m in names:
                data[m] = [cells.get((m, g), "") for g in groups]
        frame = pl.DataFrame(data, schema=dict.fromkeys(data, pl.String))
        views.append((f"{attr}", frame))
    return views


def _per_attribute(table: pl.DataFrame) -> list[View]:
    views: list[View] = []
    for (attr,), part in table.group_by("attribute", maintain_order=True):
        views.append((f"{attr}", _text_frame(part.drop("attribute"))))
    return views


def _disparity_cell(r: dict[str, Any]) -> str:
    diff = _cell(r, "difference")
    ratio = _fmt(r["ratio"])
    return f"{diff} (×{ratio})" if r["ratio"] is not None else diff


def _curve_view(table: pl.DataFrame) -> list[View]:
    """The curves in brief (the points are in the JSON / Parquet output and the plots)."""
    brief = table.group_by("attribute", "group", maintain_order=True).agg(
        pl.len().alias("points"),
        pl.col("threshold").filter(pl.col("threshold").is_finite()).min().alias("lowest_threshold"),
        pl.col("threshold").filter(pl.col("threshold").is_finite()).max()
        .alias("highest_threshold"))
    return _per_attribute(brief)


VIEWS: dict[str, Callable[[pl.DataFrame], list[View]]] = {
    "curves": _curve_view,
    "metrics": lambda t: _pivot(t, "metric", lambda r: _cell(r, "value")),
    "disparities": lambda t: _pivot(t, "metric", _disparity_cell),
    "criteria": lambda t: _pivot(t, "criterion", lambda r: _cell(r, "value")),
    "between_groups": _per_attribute,
    "stability": lambda t: _pivot(t, "metric", lambda r: _cell(r, "value")),
    "stability_distribution": lambda t: _pivot(
        t.with_columns((pl.lit("[") + pl.col("bin_left").round(2).cast(pl.String) + pl.lit(", ")
                        + pl.col("bin_right").round(2).cast(pl.String) + pl.lit(")"))
                       .alias("bin")),
        "bin", lambda r: str(r["count"])),
}
"""Readable views by section name; other sections show their table, formatted."""


def section_views(section: Section) -> list[View]:
    """Readable views of a section: (sub-heading, table of text) pairs.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "b"], "y": [1, 0], "p": [1, 1]})
    >>> r = pfm.audit(df, y_true="y", y_pred="p", by="g", metrics=["selection_rate"])
    >>> section_views(r.section("metrics"))[0][1].rows()
    [('selection_rate', '1.0000', '1.0000')]
    """
    table = section.table
    view = VIEWS.get(section.name)
    if view is not None and "attribute" in table.columns and table.height:
        return view(table)
    return [(None, _text_frame(table))]


# ---------------------------------------------------------------------------------------------
# JSON and Parquet
# ---------------------------------------------------------------------------------------------


def _generated_by() -> str:
    from polars_fairmetrics import __version__

    return f"polars_fairmetrics {__version__} (polars {pl.__version__})"


def _json_value(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _json_value(x) for k, x in v.items()}
    return str(v)


def _columns(table: pl.DataFrame) -> list[dict[str, str]]:
    return [{"name": n, "dtype": str(d)} for n, d in table.schema.items()]


def report_to_dict(report: Report, *, rows: bool = True) -> dict[str, Any]:
    """The report as JSON-compatible data.

    Schema (version ``"1"``, documented in ``docs/report.md``)::

        {"schema_version": "1", "generated_by": str, "inputs": {...}, "notes": [str],
         "sections": {name: {"title": str, "description": str, "notes": [str],
                             "columns": [{"name": str, "dtype": str}],
                             "rows": [{column: value}]}}}

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "b"], "y": [1, 0], "p": [1, 1]})
    >>> d = report_to_dict(pfm.audit(df, y_true="y", y_pred="p", by="g"))
    >>> d["schema_version"], list(d["sections"])[:2]
    ('1', ['groups', 'metrics'])
    """
    from polars_fairmetrics.report import SCHEMA_VERSION

    sections: dict[str, Any] = {}
    for name, s in report.sections.items():
        entry: dict[str, Any] = {
            "title": s.title,
            "description": s.description,
            "notes": list(s.notes),
            "columns": _columns(s.table),
        }
        if rows:
            entry["rows"] = [
                {k: _json_value(v) for k, v in r.items()} for r in s.table.iter_rows(named=True)
            ]
        sections[name] = entry
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_by": _generated_by(),
        "inputs": _json_value(report.inputs),
        "notes": report.notes,
        "sections": sections,
    }


def _write(path: str | Path | None, text: str) -> None:
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")


def render_json(report: Report, path: str | Path | None = None, *,
                indent: int | None = 2) -> str:
    """The report as JSON text (see :func:`report_to_dict`), written to ``path`` when given."""
    text = json.dumps(report_to_dict(report), indent=indent, ensure_ascii=False,
                      allow_nan=False)
    _write(path, text + "\n")
    return text


def write_parquet(report: Report, directory: str | Path) -> list[Path]:
    """One Parquet file per section (``<name>.parquet``) and ``manifest.json`` in ``directory``.

    The manifest is the JSON report without the rows, each section naming its ``file``.
    Returns the paths written.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    manifest = report_to_dict(report, rows=False)
    written: list[Path] = []
    for name, s in report.sections.items():
        path = out / f"{name}.parquet"
        s.table.write_parquet(path)
        manifest["sections"][name]["file"] = path.name
        written.append(path)
    mpath = out / "manifest.json"
    mpath.write_text(json.dumps(manifest, indent=2, ensure_ascii=False, allow_nan=False) + "\n",
                     encoding="utf-8")
    written.append(mpath)
    return written


# ---------------------------------------------------------------------------------------------
# Terminal and Markdown
# ---------------------------------------------------------------------------------------------


def _inputs_pairs(report: Report) -> list[tuple[str, str]]:
    i = report.inputs
    pred = i.get("y_pred") or f"{i.get('y_score')} >= {i.get('threshold')}"
    ref = i.get("reference")
    ref_text = (", ".join(f"{k} = {v}" for k, v in ref.items()) if isinstance(ref, dict)
                else str(ref))
    pairs = [
        ("source", str(i.get("source") or "(a frame)")),
        ("true label", str(i.get("y_true"))),
        ("prediction", str(pred)),
    ]
    if i.get("weight"):
        pairs.append(("weight", str(i["weight"])))
    pairs += [
        ("groups", ", ".join(i.get("by", [])) + (" (intersectional)"
                                                 if i.get("intersectional") else "")),
        ("reference", ref_text),
        ("rows", f"{i.get('n_rows')} ({i.get('n_counted')} counted, {i.get('n_null')} with a "
                 "null value left out)"),
    ]
    return pairs


def _inputs_lines(report: Report) -> list[str]:
    return [f"{k}: {v}" for k, v in _inputs_pairs(report)]


def render_terminal(report: Report, *, width: int | None = None) -> str:
    """The report as plain text: a heading and tables per section."""
    cols = width or max(80, min(shutil.get_terminal_size((120, 24)).columns, 200))
    out: list[str] = ["Fairness audit", "=" * 14, *_inputs_lines(report)]
    out += [f"note: {n}" for n in report.notes]
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=cols, fmt_str_lengths=60,
                   tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True):
        for s in report.sections.values():
            out += ["", s.title, "-" * len(s.title)]
            out += textwrap.wrap(s.description, width=min(cols, 100))
            for sub, frame in section_views(s):
                if sub is not None:
                    out.append(f"[{sub}]")
                if frame.height:
                    out.append(str(frame))
            out += [f"note: {n}" for n in s.notes]
    out += ["", LEGEND]
    return "\n".join(out)


def _md_cell(text: str) -> str:
    return html.escape(text, quote=False).replace("|", "\\|").replace("\n", " ")


def _md_table(frame: pl.DataFrame) -> list[str]:
    head = "| " + " | ".join(_md_cell(c) for c in frame.columns) + " |"
    sep = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(_md_cell(str(v)) for v in row) + " |" for row in frame.rows()]
    return [head, sep, *body]


def render_markdown(report: Report, path: str | Path | None = None) -> str:
    """The report as Markdown (values escaped), written to ``path`` when given."""
    out: list[str] = ["# Fairness audit", ""]
    out += [f"- {_md_cell(line)}" for line in _inputs_lines(report)]
    out += [f"- *{_md_cell(n)}*" for n in report.notes]
    for s in report.sections.values():
        out += ["", f"## {_md_cell(s.title)}", "", _md_cell(s.description)]
        for sub, frame in section_views(s):
            if not frame.height:
                continue
            out.append("")
            if sub is not None:
                out += [f"### {_md_cell(sub)}", ""]
            out += _md_table(frame)
        if s.notes:
            out.append("")
            out += [f"*{_md_cell(n)}*" for n in s.notes]
    out += ["", f"*{LEGEND}*", "", f"Generated by {_generated_by()}."]
    text = "\n".join(out) + "\n"
    _write(path, text)
    return text


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------

_CSS = """
.pfm-report{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:1200px;padding:0 1rem;color:#1b1b1b;line-height:1.45}
.pfm-report h1{font-size:1.6rem}
.pfm-report h2{font-size:1.25rem;margin-top:2.2rem;border-bottom:1px solid #ddd}
.pfm-report h3{font-size:1rem;margin-bottom:.3rem}
.pfm-report .scroll{overflow-x:auto}
.pfm-report table{border-collapse:collapse;font-size:.85rem;margin:.4rem 0 1rem}
.pfm-report th,.pfm-report td{border:1px solid #d0d0d0;padding:.2rem .5rem;text-align:right;
white-space:nowrap}
.pfm-report th{background:#f3f3f3}
.pfm-report td:first-child,.pfm-report th:first-child{text-align:left}
.pfm-report .note{color:#555;font-style:italic}
.pfm-report .inputs td{text-align:left}
.pfm-report .plot svg{max-width:100%;height:auto}
"""


def _h(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _html_table(frame: pl.DataFrame, cls: str = "") -> str:
    head = "".join(f"<th>{_h(c)}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_h(v)}</td>" for v in row) + "</tr>" for row in frame.rows()
    )
    attr = f' class="{cls}"' if cls else ""
    return (f'<div class="scroll"><table{attr}><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _plots_for(report: Report, section: Section) -> list[str]:
    from polars_fairmetrics import plot

    return plot.section_figures(report, section)


def render_html(report: Report, path: str | Path | None = None, *, plots: bool = True,
                fragment: bool = False) -> str:
    """The report as one self-contained HTML page, written to ``path`` when given.

    No scripts and no external resources: CSS is inline and plots are inline SVG
    (with the ``plot`` extra, matplotlib; without it the page has tables only and says so).
    Every value taken from the data is HTML-escaped.
    """
    plot_ok = False
    plot_note = "Plots were not requested." if not plots else ""
    if plots:
        try:
            from polars_fairmetrics import plot

            plot_ok = plot.available()
        except ImportError:  # pragma: no cover - plot.py itself has no hard dependency
            plot_ok = False
        if not plot_ok:
            plot_note = MISSING_PLOT_NOTE
    parts: list[str] = ["<h1>Fairness audit</h1>"]
    rows = "".join(f"<tr><th>{_h(k)}</th><td>{_h(v)}</td></tr>"
                   for k, v in _inputs_pairs(report))
    parts.append(f'<table class="inputs"><tbody>{rows}</tbody></table>')
    for n in [*report.notes, *([plot_note] if plot_note else [])]:
        parts.append(f'<p class="note">{_h(n)}</p>')
    for s in report.sections.values():
        parts.append(f'<section id="{_h(s.name)}"><h2>{_h(s.title)}</h2>')
        parts.append(f"<p>{_h(s.description)}</p>")
        if plot_ok:
            for svg in _plots_for(report, s):
                parts.append(f'<div class="plot">{svg}</div>')
        for sub, frame in section_views(s):
            if not frame.height:
                continue
            if sub is not None:
                parts.append(f"<h3>{_h(sub)}</h3>")
            parts.append(_html_table(frame))
        for n in s.notes:
            parts.append(f'<p class="note">{_h(n)}</p>')
        parts.append("</section>")
    parts.append(f'<p class="note">{_h(LEGEND)} Generated by {_h(_generated_by())}.</p>')
    body = "\n".join(parts)
    if fragment:
        return f'<div class="pfm-report"><style>{_CSS}</style>{body}</div>'
    page = (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>Fairness audit</title><style>{_CSS}</style></head>\n"
        f'<body><div class="pfm-report">\n{body}\n</div></body></html>\n'
    )
    _write(path, page)
    return page
