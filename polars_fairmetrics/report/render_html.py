"""The HTML renderer: one self-contained page (inline CSS and SVG plots, no script, nothing
loaded from the network).

Every text taken from the data (group labels, column names, the source, section names) is made
:func:`~polars_fairmetrics.report.text.visible` (no control character) and then HTML-escaped,
so a group named ``<script>alert(1)</script>`` renders as text. Section anchors are the safe
file stems of :func:`~polars_fairmetrics.report.render_data.parquet_file_names`.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from polars_fairmetrics import plot
from polars_fairmetrics.report.findings import FINDINGS_TITLE, anchors, findings, no_findings_text
from polars_fairmetrics.report.model import Contents
from polars_fairmetrics.report.plots import section_figures
from polars_fairmetrics.report.render_text import LEGEND, generated_by, inputs_pairs, write_text
from polars_fairmetrics.report.text import visible
from polars_fairmetrics.report.views import View, section_views

__all__ = ["MISSING_PLOT_NOTE", "render_html"]

MISSING_PLOT_NOTE = (
    "Tables only: plots need matplotlib, which is not installed "
    "(pip install 'polars_fairmetrics[plot]')."
)

_CSS = """
.pfm-report{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:1400px;padding:0 1rem;color:#1b1b1b;line-height:1.45;box-sizing:border-box}
.pfm-report *,.pfm-report *::before,.pfm-report *::after{box-sizing:inherit}
.pfm-report h1{font-size:1.6rem}
.pfm-report h2{font-size:1.25rem;margin-top:2.2rem;border-bottom:1px solid #ddd}
.pfm-report h3{font-size:1rem;margin-bottom:.3rem}
.pfm-report h1,.pfm-report h2,.pfm-report h3,.pfm-report p,.pfm-report li{overflow-wrap:anywhere}
.pfm-report p,.pfm-report .findings ul{max-width:75rem}
.pfm-report .scroll{overflow-x:auto;max-width:100%;margin:.4rem 0 1rem;
background:linear-gradient(to right,#fff 30%,rgba(255,255,255,0)) left/2rem 100% no-repeat local,
linear-gradient(to left,#fff 30%,rgba(255,255,255,0)) right/2rem 100% no-repeat local,
radial-gradient(farthest-side at 0 50%,rgba(0,0,0,.18),rgba(0,0,0,0)) left/.7rem 100%
no-repeat scroll,
radial-gradient(farthest-side at 100% 50%,rgba(0,0,0,.18),rgba(0,0,0,0)) right/.7rem 100%
no-repeat scroll}
.pfm-report .scroll:focus-visible{outline:2px solid #4060c0}
.pfm-report .ci{display:block;font-size:.75em;color:#555}
.pfm-report table{border-collapse:collapse;font-size:.85rem;margin:0}
.pfm-report th,.pfm-report td{border:1px solid #d0d0d0;padding:.2rem .5rem;text-align:right;
white-space:nowrap}
.pfm-report th{background:#f3f3f3}
.pfm-report .scroll td:first-child,.pfm-report .scroll th:first-child{position:sticky;left:0;
box-shadow:inset -1px 0 #d0d0d0}
.pfm-report .scroll td:first-child{background:#fff}
.pfm-report td.text,.pfm-report th:first-child{text-align:left}
.pfm-report .note{color:#555;font-style:italic}
.pfm-report table.inputs{margin:.4rem 0 1rem;max-width:100%}
.pfm-report .inputs td{text-align:left;white-space:normal;overflow-wrap:anywhere}
.pfm-report .plot{max-width:100%;overflow-x:auto;margin:.6rem 0}
.pfm-report .plot svg{display:block;max-width:100%;height:auto}
.pfm-report .findings{background:#f7f7fb;border:1px solid #d8d8e8;padding:.2rem 1rem .6rem}
.pfm-report .findings li{margin:.3rem 0}
.pfm-report .findings li.gate{color:#8a1010}
.pfm-report .toc{margin-bottom:1rem}
.pfm-report .toc ol{columns:2 18rem;margin:.2rem 0}
@media print{.pfm-report{max-width:none;margin:0;padding:0;font-size:10pt}
.pfm-report .scroll,.pfm-report .plot{overflow:visible;background:none}
.pfm-report table{font-size:7pt}.pfm-report th,.pfm-report td{white-space:normal}
.pfm-report .scroll td:first-child,.pfm-report .scroll th:first-child{position:static}
.pfm-report tr,.pfm-report .plot,.pfm-report h3{break-inside:avoid}
.pfm-report h2,.pfm-report h3{break-after:avoid}
.pfm-report a{color:inherit;text-decoration:none}.pfm-report .toc{display:none}}
"""


def _h(text: Any) -> str:
    return html.escape(visible(str(text)), quote=True)


_WITH_INTERVAL = re.compile(r"^(\S+) (\[\S+, \S+\])$")


def _number(text: str) -> str:
    """A numeric cell: the value, and its interval beneath it in a smaller style."""
    m = _WITH_INTERVAL.match(text)
    if m is None:
        return f"<td>{_h(text)}</td>"
    return f'<td>{_h(m.group(1))}<span class="ci">{_h(m.group(2))}</span></td>'


def _table(view: View, label: str) -> str:
    """A view as a table in a box that scrolls sideways on its own (focusable, so the keyboard
    scrolls it too): a wide table never widens the page; its first column stays in view."""
    head = "".join(f"<th>{_h(c)}</th>" for c in view.columns)
    body = "".join(
        "<tr>"
        + "".join(
            _number(v) if numeric else f'<td class="text">{_h(v)}</td>'
            for v, numeric in zip(row, view.numeric, strict=True)
        )
        + "</tr>"
        for row in view.rows
    )
    return (
        f'<div class="scroll" role="region" tabindex="0" aria-label="{_h(label)}">'
        f"<table><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table></div>"
    )


def _summary(report: Contents, ids: dict[str, str]) -> list[str]:
    """The findings summary: a list of plain sentences, each linking to its section."""
    items = [
        f'<li class="{_h(f.kind)}">{_h(f.text)} '
        f'<a href="#{_h(ids.get(f.section, ""))}">See {_h(report.section(f.section).title)}.</a>'
        "</li>"
        if f.section in report
        else f'<li class="{_h(f.kind)}">{_h(f.text)}</li>'
        for f in findings(report)
    ]
    body = f"<ul>{''.join(items)}</ul>" if items else f"<p>{_h(no_findings_text(report))}</p>"
    return [
        f'<section id="findings" class="findings"><h2>{_h(FINDINGS_TITLE)}</h2>{body}</section>'
    ]


def _contents(report: Contents, ids: dict[str, str]) -> str:
    """The table of contents: the summary then every section."""
    links = [f'<li><a href="#findings">{_h(FINDINGS_TITLE)}</a></li>'] + [
        f'<li><a href="#{_h(ids[name])}">{_h(s.title)}</a></li>'
        for name, s in report.sections.items()
    ]
    return f'<nav class="toc"><h2>Contents</h2><ol>{"".join(links)}</ol></nav>'


def render_html(
    report: Contents, path: str | Path | None = None, *, plots: bool = True, fragment: bool = False
) -> str:
    """The report as one self-contained HTML page, written to ``path`` when given.

    No scripts and no external resources: CSS is inline and plots are inline SVG (with the
    ``plot`` extra, matplotlib; without it the page has tables only and says so). Every value
    taken from the data is escaped. ``fragment=True``: a ``<div>`` for a notebook.
    """
    plot_ok = plots and plot.available()
    plot_note = "Plots were not requested." if not plots else ("" if plot_ok else MISSING_PLOT_NOTE)
    ids = anchors(report)
    parts: list[str] = ["<h1>Fairness audit</h1>", *_summary(report, ids), _contents(report, ids)]
    rows = "".join(f"<tr><th>{_h(k)}</th><td>{_h(v)}</td></tr>" for k, v in inputs_pairs(report))
    parts.append(f'<table class="inputs"><tbody>{rows}</tbody></table>')
    for n in [*report.notes, *([plot_note] if plot_note else [])]:
        parts.append(f'<p class="note">{_h(n)}</p>')
    for name, s in report.sections.items():
        anchor = ids[name]
        parts.append(f'<section id="{_h(anchor)}"><h2>{_h(s.title)}</h2>')
        parts.append(f"<p>{_h(s.description)}</p>")
        if plot_ok:
            for svg in section_figures(s):
                parts.append(f'<div class="plot">{svg}</div>')
        for view in section_views(s):
            if not view.height:
                continue
            if view.heading is not None:
                parts.append(f"<h3>{_h(view.heading)}</h3>")
            label = s.title if view.heading is None else f"{s.title}: {view.heading}"
            parts.append(_table(view, label))
        for n in s.notes:
            parts.append(f'<p class="note">{_h(n)}</p>')
        parts.append("</section>")
    parts.append(f'<p class="note">{_h(LEGEND)} Generated by {_h(generated_by())}.</p>')
    body = "\n".join(parts)
    if fragment:
        return f'<div class="pfm-report"><style>{_CSS}</style>{body}</div>'
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Fairness audit</title><style>{_CSS}</style></head>\n"
        f'<body><div class="pfm-report">\n{body}\n</div></body></html>\n'
    )
    write_text(path, page)
    return page
