"""Plots of a report, as inline SVG (optional: ``pip install 'polars_fairmetrics[plot]'``).

matplotlib is imported lazily, inside the functions, so the package works without it; the HTML
renderer then shows tables only and says so (:func:`available`). Figures are built on
``matplotlib.figure.Figure`` (no pyplot state, no GUI backend) and written as SVG with text kept
as text; data-derived labels are escaped by matplotlib's SVG writer, and ``$`` is escaped so a
group name is never read as math.

- ``metrics`` section: per-group bars, one figure per attribute, with interval whiskers when
  the section has ``ci_low`` / ``ci_high``;
- ``criteria`` section: a disparity forest plot per attribute (differences against the
  reference, with a line at 0; disparate impact on its own axis with the four-fifths band
  0.8–1.25), whiskers when intervals exist.

Later sections plug in through :data:`PLOTTERS` (section name → function returning SVG strings);
:func:`curve_svg` (PR / ROC curves per group) and :func:`histogram_svg` (stability
histograms) are the building blocks for them.
"""

from __future__ import annotations

import importlib.util
import io
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from polars_fairmetrics.report import Report, Section

__all__ = [
    "PLOTTERS",
    "available",
    "binned_histogram_svg",
    "curve_svg",
    "forest_svg",
    "histogram_svg",
    "metric_bars_svg",
    "section_figures",
]

FOUR_FIFTHS: tuple[float, float] = (0.8, 1.25)
"""The four-fifths band of disparate impact (and its inverse)."""


def available() -> bool:
    """Whether matplotlib (the ``plot`` extra) is installed."""
    return importlib.util.find_spec("matplotlib") is not None


def _label(text: Any) -> str:
    """A data value as a plot label (``$`` escaped: never mathtext)."""
    return ("null" if text is None else str(text)).replace("$", r"\$")


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _svg(fig: Any) -> str:
    """The figure as an ``<svg>`` element (no XML prologue, no DOCTYPE, no timestamp)."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "polars_fairmetrics"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    start = text.find("<svg")
    text = text[start:]
    # drop comments (the writer's own) so nothing but the drawing remains
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


def _yerr(values: Sequence[float | None], lows: Sequence[float | None] | None,
          highs: Sequence[float | None] | None) -> Any:
    if lows is None or highs is None:
        return None
    lo = [(v - lw) if v is not None and lw is not None else 0.0
          for v, lw in zip(values, lows, strict=True)]
    hi = [(h - v) if v is not None and h is not None else 0.0
          for v, h in zip(values, highs, strict=True)]
    return [lo, hi]


def metric_bars_svg(table: pl.DataFrame, attribute: str) -> str:
    """Grouped bars: one cluster per metric, one bar per group (whiskers with intervals)."""
    part = table.filter(pl.col("attribute") == attribute)
    metrics = list(dict.fromkeys(part["metric"].to_list()))
    groups = list(dict.fromkeys(part["group"].to_list()))
    has_ci = "ci_low" in part.columns and "ci_high" in part.columns
    width = max(6.0, min(16.0, 0.25 * len(metrics) * max(len(groups), 2) + 2))
    fig = _figure(width, 3.6)
    ax = fig.add_subplot()
    step = 0.8 / max(len(groups), 1)
    for j, g in enumerate(groups):
        rows = part.filter(pl.col("group").eq_missing(g))
        by_metric = {r["metric"]: r for r in rows.iter_rows(named=True)}
        vals = [by_metric.get(m, {}).get("value") for m in metrics]
        xs = [i - 0.4 + step * (j + 0.5) for i in range(len(metrics))]
        heights = [v if v is not None else 0.0 for v in vals]
        yerr = None
        if has_ci:
            yerr = _yerr(vals, [by_metric.get(m, {}).get("ci_low") for m in metrics],
                         [by_metric.get(m, {}).get("ci_high") for m in metrics])
        ax.bar(xs, heights, width=step, label=_label(g), yerr=yerr, capsize=2 if yerr else 0)
    ax.set_xticks(range(len(metrics)))
    ax.set_xticklabels([_label(m).replace("_", " ") for m in metrics], rotation=30, ha="right",
                       fontsize=8)
    ax.set_ylabel("value")
    ax.set_title(_label(f"Per-group metrics by {attribute}"), fontsize=10)
    ax.legend(fontsize=7, ncols=min(len(groups), 4), loc="upper left", bbox_to_anchor=(1, 1))
    ax.grid(axis="y", alpha=0.3)
    return _svg(fig)


def forest_svg(table: pl.DataFrame, attribute: str, reference: Any) -> str:
    """Forest plot of the fairness criteria of one attribute against the reference.

    Left: the difference criteria (0 = parity). Right: disparate impact (1 = parity) with the
    four-fifths band shaded. Whiskers when the table has ``ci_low`` / ``ci_high``.
    """
    part = table.filter(pl.col("attribute") == attribute)
    if isinstance(reference, dict) and attribute in reference:
        part = part.filter(pl.col("group").ne_missing(reference[attribute]))
    groups = list(dict.fromkeys(part["group"].to_list()))
    diffs = [c for c in dict.fromkeys(part["criterion"].to_list()) if c != "disparate_impact"]
    has_di = "disparate_impact" in part["criterion"].to_list()
    has_ci = "ci_low" in part.columns and "ci_high" in part.columns
    height = max(2.5, 0.28 * len(groups) * max(len(diffs), 1) / 2 + 1.5)
    fig = _figure(11.0 if has_di else 7.0, height)
    axes = fig.subplots(1, 2, width_ratios=[3, 1.4]) if has_di else [fig.add_subplot()]
    ax = axes[0]
    step = 0.8 / max(len(diffs), 1)
    for k, crit in enumerate(diffs):
        rows = {r["group"]: r for r in
                part.filter(pl.col("criterion") == crit).iter_rows(named=True)}
        ys, xs, lo, hi = [], [], [], []
        for i, g in enumerate(groups):
            r = rows.get(g)
            if r is None or r["value"] is None:
                continue
            ys.append(i - 0.4 + step * (k + 0.5))
            xs.append(r["value"])
            lo.append(r.get("ci_low") if has_ci else None)
            hi.append(r.get("ci_high") if has_ci else None)
        xerr = _yerr(xs, lo, hi) if has_ci else None
        ax.errorbar(xs, ys, xerr=xerr, fmt="o", markersize=4, capsize=2,
                    label=_label(crit).replace("_", " "))
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(groups)))
    ax.set_yticklabels([_label(g) for g in groups], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("difference: group − reference")
    ax.set_title(_label(f"Fairness criteria by {attribute}"), fontsize=10)
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(0, -0.18), ncols=2)
    ax.grid(axis="x", alpha=0.3)
    if has_di:
        ax2 = axes[1]
        ax2.axvspan(*FOUR_FIFTHS, color="tab:green", alpha=0.12, label="four-fifths band")
        ax2.axvline(1.0, color="black", linewidth=0.8)
        rows = {r["group"]: r for r in
                part.filter(pl.col("criterion") == "disparate_impact").iter_rows(named=True)}
        ys, xs, lo, hi = [], [], [], []
        for i, g in enumerate(groups):
            r = rows.get(g)
            if r is None or r["value"] is None:
                continue
            ys.append(float(i))
            xs.append(r["value"])
            lo.append(r.get("ci_low") if has_ci else None)
            hi.append(r.get("ci_high") if has_ci else None)
        ax2.errorbar(xs, ys, xerr=_yerr(xs, lo, hi) if has_ci else None, fmt="s",
                     color="tab:purple", markersize=4, capsize=2)
        ax2.set_yticks(range(len(groups)))
        ax2.set_yticklabels([])
        ax2.set_ylim(ax.get_ylim())
        ax2.set_xlabel("disparate impact: ratio")
        ax2.legend(fontsize=6, loc="upper left", bbox_to_anchor=(0, -0.18))
        ax2.grid(axis="x", alpha=0.3)
    return _svg(fig)


def curve_svg(table: pl.DataFrame, *, x: str, y: str, title: str, group: str = "group",
              diagonal: bool = False) -> str:
    """Line plot of ``y`` against ``x``, one line per ``group`` (PR and ROC curves).

    Rows are drawn in the order of ``x`` within each group.
    """
    fig = _figure(4.6, 4.0)
    ax = fig.add_subplot()
    for (g,), part in table.group_by(group, maintain_order=True):
        part = part.sort(x)
        ax.plot(part[x].to_list(), part[y].to_list(), label=_label(g), linewidth=1.2)
    if diagonal:
        ax.plot([0, 1], [0, 1], color="grey", linewidth=0.7, linestyle="--")
    ax.set_xlabel(_label(x).replace("_", " "))
    ax.set_ylabel(_label(y).replace("_", " "))
    ax.set_title(_label(title), fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return _svg(fig)


def histogram_svg(table: pl.DataFrame, *, value: str, title: str, group: str | None = None,
                  bins: int = 20) -> str:
    """Histogram of ``value`` (overlaid per ``group`` when given): stability histograms."""
    fig = _figure(5.0, 3.4)
    ax = fig.add_subplot()
    if group is None:
        ax.hist(table[value].drop_nulls().to_list(), bins=bins)
    else:
        for (g,), part in table.group_by(group, maintain_order=True):
            ax.hist(part[value].drop_nulls().to_list(), bins=bins, alpha=0.5, label=_label(g))
        ax.legend(fontsize=7)
    ax.set_xlabel(_label(value).replace("_", " "))
    ax.set_ylabel("count")
    ax.set_title(_label(title), fontsize=10)
    return _svg(fig)


def binned_histogram_svg(table: pl.DataFrame, *, left: str, right: str, count: str,
                         title: str, xlabel: str, group: str | None = None,
                         ylabel: str = "count") -> str:
    """Histogram from pre-binned counts (bins ``[left, right)`` and their ``count``), one
    outline per ``group`` when given: stability histograms kept small in the report's tables."""
    fig = _figure(5.0, 3.4)
    ax = fig.add_subplot()
    parts = ([(None, table)] if group is None
             else [(g, part) for (g,), part in table.group_by(group, maintain_order=True)])
    for g, part in parts:
        part = part.sort(left)
        edges = [*part[left].to_list(), part[right].to_list()[-1]] if part.height else []
        if edges:
            ax.stairs(part[count].to_list(), edges, label=None if g is None else _label(g))
    if group is not None:
        ax.legend(fontsize=7)
    ax.set_xlabel(_label(xlabel))
    ax.set_ylabel(_label(ylabel))
    ax.set_title(_label(title), fontsize=10)
    return _svg(fig)


def _metrics_plots(report: Report, section: Section) -> list[str]:
    t = section.table
    return [metric_bars_svg(t, a) for a in dict.fromkeys(t["attribute"].to_list())]


def _criteria_plots(report: Report, section: Section) -> list[str]:
    t = section.table
    ref = report.inputs.get("reference")
    return [forest_svg(t, a, ref) for a in dict.fromkeys(t["attribute"].to_list())]


def _stability_histograms(report: Report, section: Section) -> list[str]:
    t = section.table
    return [
        binned_histogram_svg(t.filter(pl.col("attribute") == a), left="bin_left",
                             right="bin_right", count="share", group="group",
                             ylabel="share of the group's rows",
                             title=f"Label stability by {a}",
                             xlabel="label stability (1 = all models agree)")
        for a in dict.fromkeys(t["attribute"].to_list())
    ]


def _curve_plots(report: Report, section: Section) -> list[str]:
    t = section.table.filter(pl.col("threshold").is_finite() | (pl.col("recall") == 0))
    out = []
    for a in dict.fromkeys(t["attribute"].to_list()):
        part = t.filter(pl.col("attribute") == a).with_columns(
            pl.col("group").fill_null("null"))
        roc = part.filter(pl.col("fpr").is_not_null() & pl.col("tpr").is_not_null())
        pr = part.filter(pl.col("precision").is_not_null() & pl.col("recall").is_not_null())
        if roc.height:
            out.append(curve_svg(roc, x="fpr", y="tpr", title=f"ROC by {a}", diagonal=True))
        if pr.height:
            out.append(curve_svg(pr, x="recall", y="precision", title=f"Precision-recall by {a}"))
    return out


PLOTTERS: dict[str, Callable[[Report, Section], list[str]]] = {
    "curves": _curve_plots,
    "metrics": _metrics_plots,
    "criteria": _criteria_plots,
    "stability": _metrics_plots,
    "stability_distribution": _stability_histograms,
}
"""Plots by section name: each returns inline ``<svg>`` strings shown above the section."""


def section_figures(report: Report, section: Section) -> list[str]:
    """The inline SVG plots of one section (empty when it has none or matplotlib is absent).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "b"], "y": [1, 0], "p": [1, 1]})
    >>> r = pfm.audit(df, y_true="y", y_pred="p", by="g", metrics=["selection_rate"])
    >>> svgs = section_figures(r, r.section("metrics"))
    >>> len(svgs), svgs[0].startswith("<svg")
    (1, True)
    """
    plotter = PLOTTERS.get(section.name)
    if plotter is None or not available() or section.table.height == 0:
        return []
    return plotter(report, section)
