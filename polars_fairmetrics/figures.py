"""Figures of result tables (optional: ``pip install 'polars_fairmetrics[plot]'``).

Each function takes one of the package's long result tables (DataFrame or LazyFrame) and returns
a ``matplotlib.figure.Figure``; it never calls ``plt.show()`` and holds no pyplot state, so a
notebook shows the returned figure and a script saves it (``fig.savefig(...)``). The report
draws its plots with these very functions (rendered to SVG), so a notebook and the report look
the same.

- :func:`plot_group_metrics`: per-group values, one panel per metric, interval whiskers;
- :func:`plot_disparities`: forest plot of differences, ratios or named criteria against parity,
  with a reference band;
- :func:`plot_curves`: ROC and precision-recall curves side by side, AUC / AP per group in the
  legend;
- :func:`plot_ensemble`: each ensemble metric on its own axis, and the label-stability histogram
  with one bin per value label stability can take.

Readability rules shared by every figure: a fixed width (:data:`FIGURE_WIDTH` inches at
:data:`FIGURE_DPI` dpi, so figures in a row have the same width), text of at least 9 pt (12.5
px at 100 dpi), legends outside the data area (below the panels, where the constrained layout
keeps them clear of tick labels and axis labels).

Tables: a LazyFrame is validated on its schema first, then only the columns the figure draws
are collected. A table without a column the figure needs raises
:class:`~polars_fairmetrics.ColumnNotFoundError` naming the column. Group labels are the
display labels of the key columns (``race="Caucasian"``,
:func:`~polars_fairmetrics.results.display_label`); key columns are the columns that are not
result columns (``docs/results.md``).

matplotlib is imported inside the functions: importing this module never imports it.
"""

from __future__ import annotations

import itertools
import math
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from polars_fairmetrics._text import visible
from polars_fairmetrics.exceptions import ColumnNotFoundError, InvalidOptionError
from polars_fairmetrics.metrics import (
    Counts,
    false_positive_rate,
    positive_predictive_value,
    true_positive_rate,
)
from polars_fairmetrics.results import NON_KEY_COLUMNS, display_label

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "DIFFERENCE_BAND",
    "FIGURE_DPI",
    "FIGURE_WIDTH",
    "FONT_SIZE",
    "MAX_LABEL",
    "RATIO_BAND",
    "label_stability_values",
    "plot_curves",
    "plot_disparities",
    "plot_ensemble",
    "plot_group_metrics",
    "rc_context",
]

FIGURE_WIDTH: float = 8.0
"""Width of every figure, in inches (800 px at :data:`FIGURE_DPI`)."""

FIGURE_DPI: int = 100
"""Resolution of every figure (dots per inch)."""

MAX_LABEL: int = 48
"""Longest group label drawn in a figure (characters); longer ones are cut with an ellipsis
(tables keep the full label)."""

FONT_SIZE: float = 10.0
"""Base font size in points; tick labels and legends are one point smaller (never below 9 pt:
12.5 px at 100 dpi)."""

_RC: dict[str, Any] = {
    "font.size": FONT_SIZE,
    "axes.titlesize": FONT_SIZE,
    "axes.labelsize": FONT_SIZE,
    "xtick.labelsize": FONT_SIZE - 1,
    "ytick.labelsize": FONT_SIZE - 1,
    "legend.fontsize": FONT_SIZE - 1,
    "legend.title_fontsize": FONT_SIZE - 1,
    "figure.titlesize": FONT_SIZE + 1,
    "figure.dpi": FIGURE_DPI,
    "savefig.dpi": FIGURE_DPI,
    "axes.grid": False,
}

DIFFERENCE_BAND: tuple[float, float] = (-0.1, 0.1)
"""Default reference band of a difference (parity 0)."""

RATIO_BAND: tuple[float, float] = (0.8, 1.25)
"""Default reference band of a ratio (parity 1): the four-fifths rule and its inverse."""


# ---------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------


def _matplotlib(what: str) -> Any:
    try:
        import matplotlib
        from matplotlib.figure import Figure  # noqa: F401  (the extra is complete)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"{what} needs matplotlib: pip install 'polars_fairmetrics[plot]'"
        ) from exc
    return matplotlib


def _text(value: Any) -> str:
    """A data value as plot text: visible (control characters escaped), never mathtext."""
    return visible("null" if value is None else str(value)).replace("$", r"\$")


def _pretty(name: str) -> str:
    return _text(name).replace("_", " ")


def _schema(table: pl.DataFrame | pl.LazyFrame) -> list[str]:
    return list(table.collect_schema().names())


def _require(what: str, columns: Sequence[str], needed: Sequence[str], hint: str) -> None:
    for c in needed:
        if c not in columns:
            raise ColumnNotFoundError(
                f"{what} needs a column {c!r}, which the table lacks ({hint}); "
                f"it has {list(columns)!r}"
            )


def _collect(
    table: pl.DataFrame | pl.LazyFrame, columns: Sequence[str], where: pl.Expr | None = None
) -> pl.DataFrame:
    """Only ``columns`` (and rows matching ``where``) of a table, collected."""
    lf = table.lazy()
    if where is not None:
        lf = lf.filter(where)
    return lf.select(list(dict.fromkeys(columns))).collect()


def _keys(columns: Sequence[str], by: str | Sequence[str] | None) -> list[str]:
    if by is not None:
        return [by] if isinstance(by, str) else list(by)
    return [c for c in columns if c not in NON_KEY_COLUMNS and not c.startswith("_pfm")]


def _labels(frame: pl.DataFrame, keys: Sequence[str]) -> pl.Series:
    """The display label of each row's group (only the row's own attribute's key when the
    table holds several attributes side by side)."""
    attr = "attribute" in frame.columns
    if not keys:
        return pl.Series("_pfm_label", ["all rows"] * frame.height, dtype=pl.String)
    out = []
    for row in frame.select([*(["attribute"] if attr else []), *keys]).iter_rows(named=True):
        own = [row["attribute"]] if attr and row["attribute"] in keys else list(keys)
        out.append(_text(display_label({k: row[k] for k in own})) if own else "all rows")
    return pl.Series("_pfm_label", _shorten(out), dtype=pl.String)


def _shorten(labels: Sequence[str], limit: int = MAX_LABEL) -> list[str]:
    """Labels longer than ``limit`` characters cut to ``limit`` with an ellipsis, so a long
    group name cannot crowd out the axes; distinct labels stay distinct (a cut label that
    would repeat another's gets ``#k``, its group's position among the cut ones).

    Examples
    --------
    >>> _shorten(["a", "x" * 50, "x" * 49 + "y"], limit=10)
    ['a', 'xxxxxxxxx… #1', 'xxxxxxxxx… #2']
    """
    distinct = list(dict.fromkeys(labels))
    cut = {label: label[: limit - 1] + "…" for label in distinct if len(label) > limit}
    counts: dict[str, int] = {}
    for short in cut.values():
        counts[short] = counts.get(short, 0) + 1
    seen: dict[str, int] = {}
    final: dict[str, str] = {}
    for label, short in cut.items():
        if counts[short] > 1:
            seen[short] = seen.get(short, 0) + 1
            short = f"{short} #{seen[short]}"
        final[label] = short
    return [final.get(label, label) for label in labels]


def _series(frame: pl.DataFrame, columns: Sequence[str]) -> list[str] | None:
    """Partition columns with several values (model, period, threshold): one colour each."""
    split = [c for c in ("model", "period", "threshold") if c in columns and c in frame.columns]
    split = [c for c in split if frame[c].n_unique() > 1]
    if not split:
        return None
    return [
        ", ".join(f"{c}={_text(r[c])}" for c in split)
        for r in frame.select(split).iter_rows(named=True)
    ]


def _figure(height: float) -> Figure:
    from matplotlib.figure import Figure

    fig = Figure(
        figsize=(FIGURE_WIDTH, max(2.0, height)),
        dpi=FIGURE_DPI,
        layout="constrained",
    )
    return fig


def _legend_below(fig: Any, handles: list[Any], labels: list[str], title: str | None) -> None:
    """A figure legend below every panel (outside the data area; the constrained layout
    makes room for it under the axis labels)."""
    if not handles:
        return
    longest = max(len(lb) for lb in labels)
    ncols = max(1, min(len(labels), int(95 // max(longest + 6, 1))))
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncols=ncols,
        title=title,
        frameon=False,
    )


def _whiskers(
    ax: Axes, ys: Sequence[float], lows: Sequence[Any], highs: Sequence[Any], color: Any
) -> None:
    """Horizontal interval whiskers from ``lows`` to ``highs`` (null ends: no whisker)."""
    pts = [
        (y, lo, hi)
        for y, lo, hi in zip(ys, lows, highs, strict=True)
        if lo is not None and hi is not None and not (math.isnan(lo) or math.isnan(hi))
    ]
    if not pts:
        return
    coll = ax.hlines(
        [p[0] for p in pts], [p[1] for p in pts], [p[2] for p in pts], colors=color, linewidth=1.3
    )
    coll.set_gid("pfm-interval")
    cap_y = [p[0] for p in pts] * 2
    cap_x = [p[1] for p in pts] + [p[2] for p in pts]
    ax.plot(cap_x, cap_y, linestyle="none", marker="|", markersize=6, color=color)


def _group_order(labels: pl.Series) -> list[str]:
    return list(dict.fromkeys(labels.to_list()))


def _panel_grid(fig: Any, n: int, ncols: int) -> list[Axes]:
    nrows = math.ceil(n / ncols)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    flat = [a for row in axes for a in row]
    for ax in flat[n:]:
        ax.set_visible(False)
        fig.delaxes(ax)
    return flat[:n]


# ---------------------------------------------------------------------------------------------
# Per-group values
# ---------------------------------------------------------------------------------------------


def _panels_height(frame: pl.DataFrame, n_metrics: int, ncols: int) -> float:
    """Height (inches) of the per-metric panels: rows of panels × groups per panel."""
    groups = frame["_pfm_label"].n_unique()
    series = frame["_pfm_series"].n_unique() if "_pfm_series" in frame.columns else 1
    nrows = math.ceil(n_metrics / max(1, min(ncols, n_metrics)))
    per_row = max(1.7, 0.3 * groups * series**0.5 + 1.2)
    return float(nrows * per_row + 0.5 + 0.25 * (series > 1) * series)


def _value_panels(
    container: Any,
    frame: pl.DataFrame,
    *,
    metrics: list[str],
    low: str | None,
    high: str | None,
    column: str,
    kind: Literal["bar", "point"],
    ncols: int,
    parity: dict[str, float] | None,
    parity_label: str = "parity",
    bands: dict[str, tuple[float, float] | None] | None,
    xlabels: dict[str, str] | None,
    note: str | None,
) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    groups = _group_order(frame["_pfm_label"])
    hue = frame["_pfm_series"] if "_pfm_series" in frame.columns else None
    series = _group_order(hue) if hue is not None else [None]
    ncols = max(1, min(ncols, len(metrics)))
    axes = _panel_grid(container, len(metrics), ncols)
    colors = [f"C{i % 10}" for i in range(len(series))]
    step = 0.8 / len(series)
    band_drawn = False
    for ax, m in zip(axes, metrics, strict=True):
        part = frame.filter(pl.col("metric") == m)
        for s, (name, color) in enumerate(zip(series, colors, strict=True)):
            rows = part if name is None else part.filter(pl.col("_pfm_series") == name)
            by_group = {r["_pfm_label"]: r for r in rows.iter_rows(named=True)}
            ys, xs, lows, highs, missing = [], [], [], [], []
            for i, g in enumerate(groups):
                y = i - 0.4 + step * (s + 0.5) if len(series) > 1 else float(i)
                r = by_group.get(g)
                if r is None:
                    continue
                if r[column] is None:
                    missing.append(y)
                    continue
                ys.append(y)
                xs.append(float(r[column]))
                lows.append(r[low] if low else None)
                highs.append(r[high] if high else None)
            base = parity.get(m, 0.0) if parity else 0.0
            if kind == "bar":
                bars = ax.barh(
                    ys,
                    [x - base for x in xs],
                    left=base,
                    height=step * 0.9,
                    color=color,
                    alpha=0.75,
                )
                for bar in bars:
                    bar.set_gid("pfm-values")
            else:
                (pts,) = ax.plot(xs, ys, linestyle="none", marker="o", markersize=5, color=color)
                pts.set_gid("pfm-values")
                ax.margins(x=0.12)
            if low and high:
                _whiskers(ax, ys, lows, highs, "black" if kind == "bar" else color)
            for y in missing:
                ax.text(base, y, " undefined", va="center", ha="left", color="grey")
        if bands and bands.get(m) is not None:
            lo_b, hi_b = bands[m]  # type: ignore[misc]
            ax.axvspan(lo_b, hi_b, color="tab:green", alpha=0.12, linewidth=0, gid="pfm-band")
            band_drawn = True
        if parity is not None:
            ax.axvline(parity.get(m, 0.0), color="black", linewidth=0.9, gid="pfm-parity")
        ax.set_yticks(range(len(groups)))
        first = axes.index(ax) % ncols == 0
        ax.set_yticklabels(groups if first else [])
        ax.set_ylim(len(groups) - 0.5, -0.5)
        ax.set_title(textwrap.fill(_pretty(m), width=max(14, 66 // ncols)))
        ax.set_xlabel(xlabels.get(m, column) if xlabels else _pretty(column))
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(axis="x", labelrotation=0)
        # narrow panels get fewer ticks: labels of small values ("0.0075") need the room
        ax.locator_params(axis="x", nbins=3 if ncols >= 3 else 4)
    handles: list[Any] = []
    labels: list[str] = []
    if hue is not None:
        handles += [Patch(color=c, alpha=0.75) for c in colors]
        labels += [str(s) for s in series]
    if parity is not None:
        handles.append(Line2D([], [], color="black", linewidth=0.9))
        labels.append(parity_label)
    if band_drawn:
        handles.append(Patch(color="tab:green", alpha=0.12))
        labels.append(note or "reference band")
    _legend_below(container, handles, labels, None)


def _metric_list(
    frame_metrics: list[str], metrics: str | Sequence[str] | None, what: str
) -> list[str]:
    if metrics is None:
        return frame_metrics
    chosen = [metrics] if isinstance(metrics, str) else list(metrics)
    for m in chosen:
        if m not in frame_metrics:
            raise InvalidOptionError(
                f"{what}: metric {m!r} is not in the table's 'metric' column; it has "
                f"{frame_metrics!r}"
            )
    return chosen


def _prepare(
    table: pl.DataFrame | pl.LazyFrame,
    *,
    what: str,
    needed: Sequence[str],
    optional: Sequence[str],
    by: str | Sequence[str] | None,
    hint: str,
    where: pl.Expr | None = None,
) -> tuple[pl.DataFrame, list[str], bool]:
    """Validate, collect the needed columns, add labels: (frame, metrics in order, has_hue)."""
    columns = _schema(table)
    _require(what, columns, needed, hint)
    keys = _keys(columns, by)
    _require(what, columns, keys, "the by= columns")
    parts = [c for c in ("attribute", "model", "period", "threshold") if c in columns]
    present = [c for c in optional if c in columns]
    frame = _collect(table, [*parts, *keys, *needed, *present], where)
    if frame.height == 0:
        raise InvalidOptionError(f"{what}: the table has no rows to plot")
    frame = frame.with_columns(_labels(frame, keys))
    hue = _series(frame, columns)
    if hue is not None:
        frame = frame.with_columns(pl.Series("_pfm_series", hue, dtype=pl.String))
    metrics = list(dict.fromkeys(frame["metric"].to_list())) if "metric" in frame.columns else []
    return frame, metrics, hue is not None


def plot_group_metrics(
    table: pl.DataFrame | pl.LazyFrame,
    *,
    metrics: str | Sequence[str] | None = None,
    by: str | Sequence[str] | None = None,
    kind: Literal["bar", "point"] = "bar",
    intervals: bool = True,
    ncols: int = 3,
    title: str | None = None,
) -> Figure:
    r"""Per-group values: one panel per metric, one bar (or point) per group, interval whiskers.

    Draws a long table of group values (:func:`~polars_fairmetrics.group_metrics`,
    :func:`~polars_fairmetrics.metrics_from_counts`, :func:`~polars_fairmetrics.curve_summaries`,
    :func:`~polars_fairmetrics.bootstrap_metrics`, …): each metric gets its own panel and its own
    value axis, groups are rows (labelled ``column=value``), and when the table has the interval
    columns ``ci_low`` / ``ci_high`` each value gets a whisker from ``ci_low`` to ``ci_high``.
    An undefined value (null) has no bar and reads "undefined". Several models, periods or
    thresholds in the table are drawn side by side in colours named in the legend.

    Parameters
    ----------
    table
        A long result table with ``metric`` and ``value`` (DataFrame or LazyFrame; a LazyFrame
        is collected for the columns drawn only).
    metrics
        The metrics to draw, in this order (default: every metric of the table).
    by
        The key columns naming a group (default: every column that is not a result column).
    kind
        ``"bar"`` (bars from 0) or ``"point"`` (a dot per value: for values far from 0).
    intervals
        Draw the ``ci_low`` / ``ci_high`` whiskers when the table has them.
    ncols
        Panels per row of the figure.
    title
        A title above the panels.

    Returns
    -------
    matplotlib.figure.Figure
        :data:`FIGURE_WIDTH` inches wide, one axes per metric.

    Raises
    ------
    ColumnNotFoundError
        When the table lacks ``metric``, ``value`` or a ``by`` column (the message names it).
    InvalidOptionError
        When ``metrics`` names a metric the table does not have, or the table is empty.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> t = pl.DataFrame({"g": ["a", "a", "b", "b"], "metric": ["tpr", "fpr"] * 2,
    ...                   "value": [0.8, 0.1, 0.6, 0.3], "ci_low": [0.7, 0.05, 0.5, 0.2],
    ...                   "ci_high": [0.9, 0.15, 0.7, 0.4]})
    >>> fig = pfm.plot_group_metrics(t)
    >>> len(fig.axes), [ax.get_title() for ax in fig.axes]
    (2, ['tpr', 'fpr'])
    """
    _matplotlib("plot_group_metrics")
    if kind not in ("bar", "point"):
        raise InvalidOptionError(f"kind must be 'bar' or 'point', got {kind!r}")
    with rc_context():
        frame, found, _ = _prepare(
            table,
            what="plot_group_metrics",
            needed=["metric", "value"],
            optional=["ci_low", "ci_high"] if intervals else [],
            by=by,
            hint="a long table of group values, e.g. group_metrics(...)",
        )
        chosen = _metric_list(found, metrics, "plot_group_metrics")
        has_ci = "ci_low" in frame.columns and "ci_high" in frame.columns
        fig = _figure(_panels_height(frame, len(chosen), ncols))
        _value_panels(
            fig,
            frame,
            metrics=chosen,
            low="ci_low" if has_ci else None,
            high="ci_high" if has_ci else None,
            column="value",
            kind=kind,
            ncols=ncols,
            parity=None,
            bands=None,
            xlabels=dict.fromkeys(chosen, "value"),
            note=None,
        )
        if title:
            fig.suptitle(_text(title))
        return fig


def rc_context() -> Any:
    """The readability settings of every figure (font sizes, dpi) as a matplotlib
    ``rc_context``: figures drawn inside it follow the package's rules."""
    import matplotlib

    rc: Any = _RC
    return matplotlib.rc_context(rc)


# ---------------------------------------------------------------------------------------------
# Disparities
# ---------------------------------------------------------------------------------------------


def plot_disparities(
    table: pl.DataFrame | pl.LazyFrame,
    *,
    column: Literal["difference", "ratio", "value"] | None = None,
    metrics: str | Sequence[str] | None = None,
    by: str | Sequence[str] | None = None,
    band: tuple[float, float] | Literal["default"] | None = "default",
    include_reference: bool = False,
    intervals: bool = True,
    ncols: int = 3,
    title: str | None = None,
) -> Figure:
    r"""Forest plot of disparities: one panel per metric, a point per group, the parity line.

    Draws a comparison table (:func:`~polars_fairmetrics.disparities`,
    :func:`~polars_fairmetrics.summary_disparities`, ``bootstrap_metrics(what="disparities")``)
    as its ``difference`` (group − reference, parity 0) or ``ratio`` (group / reference,
    parity 1), or a criteria table (:func:`~polars_fairmetrics.fairness_criteria`, whose
    ``value`` is the criterion, parity from :data:`~polars_fairmetrics.CRITERIA`). Whiskers from
    the matching interval columns (``difference_ci_low`` / ``difference_ci_high``,
    ``ratio_ci_*``, ``ci_low`` / ``ci_high``); a shaded reference band (default ±0.1 around a
    difference's parity, :data:`RATIO_BAND` [0.8, 1.25] around a ratio's) marks the values
    commonly read as fair enough. The reference group itself (``is_reference``) is at parity by
    construction and left out unless ``include_reference``.

    Parameters
    ----------
    table
        A comparison or criteria table (DataFrame or LazyFrame; only the drawn columns are
        collected).
    column
        ``"difference"``, ``"ratio"`` or ``"value"`` (default: ``"difference"`` when the table
        has it, else ``"value"`` — a criteria table).
    metrics
        Metrics (or criteria) to draw, in this order (default: all).
    by
        Key columns naming a group (default: every column that is not a result column).
    band
        ``"default"``, a ``(low, high)`` band, or ``None`` for no band.
    include_reference
        Draw the reference group's row too.
    intervals
        Draw whiskers when the table has the interval columns.
    ncols
        Panels per row.
    title
        A title above the panels.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ColumnNotFoundError
        When the table lacks ``metric`` or the drawn column (the message names it).
    InvalidOptionError
        For an unknown metric or an empty table.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [1, 1, 1, 0]})
    >>> d = pfm.disparities(df, y_true="y", y_pred="p", by="g", metrics=["selection_rate"])
    >>> fig = pfm.plot_disparities(d, column="ratio")
    >>> len(fig.axes), fig.axes[0].get_xlabel()
    (1, 'group / reference')
    """
    from polars_fairmetrics.disparity import CRITERIA

    _matplotlib("plot_disparities")
    columns = _schema(table)
    if column is None:
        column = "difference" if "difference" in columns else "value"
    if column not in ("difference", "ratio", "value"):
        raise InvalidOptionError(f"column must be 'difference', 'ratio' or 'value', got {column!r}")
    low, high = (
        ("ci_low", "ci_high") if column == "value" else (f"{column}_ci_low", f"{column}_ci_high")
    )
    where = None
    if not include_reference and "is_reference" in columns:
        where = ~pl.col("is_reference").fill_null(False)
    with rc_context():
        frame, found, _ = _prepare(
            table,
            what="plot_disparities",
            needed=["metric", column],
            optional=[*([low, high] if intervals else []), "reference"],
            by=by,
            hint="a comparison table (disparities) or a criteria table (fairness_criteria)",
            where=where,
        )
        chosen = _metric_list(found, metrics, "plot_disparities")
        parity: dict[str, float] = {}
        bands: dict[str, tuple[float, float] | None] = {}
        xlabels: dict[str, str] = {}
        reference = (
            ", ".join(_text(r) for r in frame["reference"].unique(maintain_order=True).to_list())
            if "reference" in frame.columns
            else None
        )
        ref = f" ({reference})" if reference else ""
        kinds = set()
        for m in chosen:
            if column == "value":
                crit = CRITERIA.get(m)
                is_ratio = crit is not None and crit.composition == "ratio"
                parity[m] = crit.parity if crit is not None else 0.0
                xlabels[m] = "ratio" if is_ratio else "difference"
            else:
                is_ratio = column == "ratio"
                parity[m] = 1.0 if is_ratio else 0.0
                xlabels[m] = "group / reference" if is_ratio else "group − reference"
            kinds.add("ratio" if is_ratio else "difference")
            if band is None:
                bands[m] = None
            elif band == "default":
                bands[m] = (
                    RATIO_BAND
                    if is_ratio
                    else (parity[m] + DIFFERENCE_BAND[0], parity[m] + DIFFERENCE_BAND[1])
                )
            else:
                bands[m] = (float(band[0]), float(band[1]))
        if band == "default":
            note = "; ".join(
                text
                for k, text in (
                    ("difference", "reference band ±0.1 (difference)"),
                    ("ratio", "four-fifths band [0.8, 1.25] (ratio)"),
                )
                if k in kinds
            )
        elif band is not None:
            note = f"reference band [{band[0]}, {band[1]}]"
        else:
            note = None
        has_ci = low in frame.columns and high in frame.columns
        fig = _figure(_panels_height(frame, len(chosen), ncols))
        _value_panels(
            fig,
            frame,
            metrics=chosen,
            low=low if has_ci else None,
            high=high if has_ci else None,
            column=column,
            kind="point",
            ncols=ncols,
            parity=parity,
            parity_label=f"parity{ref.replace('(', '(reference: ')}",
            bands=bands,
            xlabels=xlabels,
            note=note,
        )
        if title:
            fig.suptitle(_text(title))
        return fig


# ---------------------------------------------------------------------------------------------
# Curves
# ---------------------------------------------------------------------------------------------


def _from_counts(frame: pl.DataFrame) -> pl.DataFrame:
    """ROC and PR coordinates of a count table per threshold, by the core's metric
    definitions (:mod:`polars_fairmetrics.metrics`: null where undefined)."""
    w = "_w" if "tp_w" in frame.columns else ""
    tp, fp, tn, fn = (pl.col(f"{c}{w}").cast(pl.Float64) for c in ("tp", "fp", "tn", "fn"))
    c = Counts(tp=tp, fp=fp, tn=tn, fn=fn)
    return frame.with_columns(
        false_positive_rate(c).alias("fpr"),
        true_positive_rate(c).alias("tpr"),
        positive_predictive_value(c).alias("precision"),
        true_positive_rate(c).alias("recall"),
    )


def _trapezoid(xs: Sequence[float], ys: Sequence[float]) -> float:
    return sum((xs[i] - xs[i - 1]) * (ys[i] + ys[i - 1]) / 2 for i in range(1, len(xs)))


def _step_ap(recall: Sequence[float], precision: Sequence[float]) -> float:
    out, prev = 0.0, 0.0
    for r, p in zip(recall, precision, strict=True):
        out += (r - prev) * p
        prev = r
    return out


def plot_curves(
    curve: pl.DataFrame | pl.LazyFrame,
    *,
    kind: Literal["roc", "pr", "both"] | None = None,
    by: str | Sequence[str] | None = None,
    title: str | None = None,
) -> Figure:
    r"""ROC and precision-recall curves side by side, one line per group, AUC / AP in the legend.

    Takes a :func:`~polars_fairmetrics.roc_curve` table (``fpr``, ``tpr``), a
    :func:`~polars_fairmetrics.pr_curve` table (``precision``, ``recall``), a table with both,
    or a count table per threshold (:func:`~polars_fairmetrics.curve_counts`: ``tp fp tn fn``,
    weighted ``*_w`` when present), whose ROC and PR curves are both drawn. Points are taken in
    the order of ``threshold`` (descending) within each group. The legend gives each group's
    area under the drawn curve: the trapezoid rule for ROC (from (0, 0)),
    :math:`\mathrm{AUC} = \sum_i (F_i - F_{i-1})(T_i + T_{i-1})/2`, and the step rule of average
    precision for PR, :math:`\mathrm{AP} = \sum_i (R_i - R_{i-1}) P_i`. On an exact curve they
    equal :func:`~polars_fairmetrics.roc_auc` and :func:`~polars_fairmetrics.average_precision`;
    on a grid curve they are the grid's approximations.

    Parameters
    ----------
    curve
        A curve or count table (DataFrame or LazyFrame; only the drawn columns are collected).
    kind
        ``"roc"``, ``"pr"`` or ``"both"`` (default: every curve the table holds).
    by
        Key columns naming a group (default: every column that is not a result column).
    title
        A title above the panels.

    Returns
    -------
    matplotlib.figure.Figure
        One axes per curve kind (ROC left, PR right).

    Raises
    ------
    ColumnNotFoundError
        When the table has neither curve's columns, or lacks those of the ``kind`` asked for.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "s": [0.9, 0.8, 0.8, 0.1]})
    >>> fig = pfm.plot_curves(pfm.curve_counts(df, y_true="y", y_score="s"))
    >>> [ax.get_title() for ax in fig.axes]
    ['ROC', 'precision-recall']
    >>> fig.legends[0].get_texts()[0].get_text()
    'all rows (AUC 0.875, AP 0.833)'
    """
    _matplotlib("plot_curves")
    from matplotlib.lines import Line2D

    columns = _schema(curve)
    counts = all(c in columns for c in ("tp", "fp", "tn", "fn"))
    has_roc = counts or ("fpr" in columns and "tpr" in columns)
    has_pr = counts or ("precision" in columns and "recall" in columns)
    if kind is None:
        kind = "both" if has_roc and has_pr else ("pr" if has_pr else "roc")
    if kind not in ("roc", "pr", "both"):
        raise InvalidOptionError(f"kind must be 'roc', 'pr' or 'both', got {kind!r}")
    need_roc = kind in ("roc", "both")
    need_pr = kind in ("pr", "both")
    hint = "a roc_curve, pr_curve or curve_counts table"
    if need_roc and not has_roc:
        _require("plot_curves", columns, ["fpr", "tpr"], hint)
    if need_pr and not has_pr:
        _require("plot_curves", columns, ["precision", "recall"], hint)
    keys = _keys(columns, by)
    _require("plot_curves", columns, keys, "the by= columns")
    if counts:
        w = "_w" if "tp_w" in columns else ""
        drawn = [f"{c}{w}" for c in ("tp", "fp", "tn", "fn")]
    else:
        drawn = [
            *(["fpr", "tpr"] if need_roc else []),
            *(["precision", "recall"] if need_pr else []),
        ]
    parts = [c for c in ("attribute", "model", "period") if c in columns]
    order = ["threshold"] if "threshold" in columns else []
    with rc_context():
        frame = _collect(curve, [*parts, *keys, *order, *drawn])
        if counts:
            frame = _from_counts(frame)
        if frame.height == 0:
            raise InvalidOptionError("plot_curves: the table has no rows to plot")
        frame = frame.with_columns(_labels(frame, keys))
        hue = _series(frame.drop("threshold", strict=False), columns)
        if hue is not None:
            frame = frame.with_columns(
                (pl.col("_pfm_label") + pl.lit(" — ") + pl.Series(hue)).alias("_pfm_label")
            )
        if order:
            frame = frame.sort(
                ["_pfm_label", "threshold"], descending=[False, True], maintain_order=True
            )
        groups = _group_order(frame["_pfm_label"])
        panels = [k for k, need in (("roc", need_roc), ("pr", need_pr)) if need]
        fig = _figure((3.7 if len(panels) == 2 else 4.6) + 0.25 * (len(groups) + 1))
        axes = fig.subplots(1, len(panels), squeeze=False)[0]
        handles: list[Any] = []
        labels: list[str] = []
        for i, g in enumerate(groups):
            part = frame.filter(pl.col("_pfm_label") == g)
            color = f"C{i % 10}"
            notes = []
            for ax, p in zip(axes, panels, strict=True):
                if p == "roc":
                    pts = part.filter(pl.col("fpr").is_not_null() & pl.col("tpr").is_not_null())
                    xs, ys = pts["fpr"].to_list(), pts["tpr"].to_list()
                    if xs and (xs[0], ys[0]) != (0.0, 0.0):
                        xs, ys = [0.0, *xs], [0.0, *ys]
                    ax.plot(xs, ys, color=color, linewidth=1.4, gid="pfm-curve")
                    notes.append(f"AUC {_trapezoid(xs, ys):.3f}" if xs else "AUC undefined")
                else:
                    pts = part.filter(
                        pl.col("precision").is_not_null() & pl.col("recall").is_not_null()
                    )
                    rs, ps = pts["recall"].to_list(), pts["precision"].to_list()
                    ax.step(rs, ps, where="pre", color=color, linewidth=1.4, gid="pfm-curve")
                    notes.append(f"AP {_step_ap(rs, ps):.3f}" if rs else "AP undefined")
            handles.append(Line2D([], [], color=color, linewidth=1.4))
            labels.append(f"{g} ({', '.join(notes)})")
        for ax, p in zip(axes, panels, strict=True):
            if p == "roc":
                ax.plot([0, 1], [0, 1], linestyle=":", color="grey", linewidth=0.9)
                ax.set_xlabel("false positive rate")
                ax.set_ylabel("true positive rate")
                ax.set_title("ROC")
            else:
                ax.set_xlabel("recall")
                ax.set_ylabel("precision")
                ax.set_title("precision-recall")
            ax.set_xlim(-0.02, 1.02)
            ax.set_ylim(-0.02, 1.02)
            ax.set_aspect("equal", adjustable="box")
            ax.grid(alpha=0.3)
        _legend_below(fig, handles, labels, None)
        if title:
            fig.suptitle(_text(title))
        return fig


# ---------------------------------------------------------------------------------------------
# Ensembles
# ---------------------------------------------------------------------------------------------


def label_stability_values(n_models: int | Sequence[int]) -> list[float]:
    r"""The values label stability can take with ``n_models`` models (sorted, distinct).

    With :math:`m` models of which :math:`k` vote 1, label stability is
    :math:`|k - (m - k)| / m = |2k - m| / m` for :math:`k = 0, \dots, m`: the values
    :math:`(m - 2j)/m` for :math:`0 \le j \le \lfloor m/2 \rfloor`. Given several model counts
    (rows predicted by different numbers of models), the union.

    Examples
    --------
    >>> label_stability_values(5)
    [0.2, 0.6, 1.0]
    >>> label_stability_values([2, 4])
    [0.0, 0.5, 1.0]
    """
    ms = [n_models] if isinstance(n_models, int) else list(n_models)
    out: set[float] = set()
    for m in ms:
        if m < 1:
            raise InvalidOptionError(f"n_models must be at least 1, got {m!r}")
        out.update(abs(2 * k - m) / m for k in range(m + 1))
    return sorted(out)


def _stability_histogram(
    ax: Axes,
    samples: pl.DataFrame | pl.LazyFrame,
    by: str | Sequence[str] | None,
    n_models: int | Sequence[int] | None,
    weight: str | None,
) -> tuple[list[Any], list[str]]:
    from matplotlib.patches import Patch

    what = "plot_ensemble"
    columns = _schema(samples)
    _require(what, columns, ["label_stability"], "a per-row table of ensemble_sample_metrics")
    keys = [] if by is None else ([by] if isinstance(by, str) else list(by))
    _require(what, columns, keys, "the by= columns")
    if weight is not None:
        _require(what, columns, [weight], "the weight= column")
    # a table counted already (weight=) that lists every value may omit n_models: its
    # values are the bins
    listed = n_models is None and "n_models" not in columns and weight is not None
    if n_models is None and not listed:
        _require(
            what,
            columns,
            ["n_models"],
            "the per-row model count of ensemble_sample_metrics, or pass n_models=",
        )
    by_m = n_models is None and not listed
    group_cols = [*keys, *(["n_models"] if by_m else []), "label_stability"]
    total = pl.len().cast(pl.Float64) if weight is None else pl.col(weight).cast(pl.Float64).sum()
    counted = (
        samples.lazy()
        .filter(pl.col("label_stability").is_not_null())
        .group_by(group_cols)
        .agg(total.alias("count"))
        .collect()
    )
    if counted.height == 0:
        raise InvalidOptionError(f"{what}: no row has a defined label stability")
    if listed:
        ms: int | Sequence[int] = []
        values = sorted(float(v) for v in counted["label_stability"].unique().to_list())
    else:
        ms = (
            [int(m) for m in counted["n_models"].drop_nulls().unique().sort().to_list()]
            if n_models is None
            else n_models
        )
        values = label_stability_values(ms)
    index = {round(v, 9): i for i, v in enumerate(values)}
    counted = counted.with_columns(
        pl.col("label_stability")
        .round(9)
        .replace_strict(index, default=None, return_dtype=pl.Int64)
        .alias("_pfm_bin")
    )
    stray = counted.filter(pl.col("_pfm_bin").is_null())
    if stray.height:
        raise InvalidOptionError(
            f"{what}: label stability {stray['label_stability'][0]!r} is not a value "
            f"|2k - m| / m for m in {ms!r} models; pass the right n_models="
        )
    frame = counted.with_columns(
        _labels(counted, keys) if keys else pl.lit("all rows").alias("_pfm_label")
    )
    groups = _group_order(frame.sort(keys, nulls_last=True)["_pfm_label"]) if keys else ["all rows"]
    gap = min((b - a for a, b in itertools.pairwise(values)), default=1.0)
    width = 0.8 * gap / len(groups)
    handles: list[Any] = []
    labels: list[str] = []
    for j, g in enumerate(groups):
        part = (
            frame.filter(pl.col("_pfm_label") == g).group_by("_pfm_bin").agg(pl.col("count").sum())
        )
        group_total = float(part["count"].sum())
        share = dict.fromkeys(range(len(values)), 0.0)
        for b, c in part.iter_rows():
            share[b] = c / group_total if group_total > 0 else 0.0
        offset = (j - (len(groups) - 1) / 2) * width
        color = f"C{j % 10}"
        bars = ax.bar(
            [v + offset for v in values],
            [share[i] for i in range(len(values))],
            width=width,
            color=color,
            alpha=0.8,
        )
        for bar in bars:
            bar.set_gid("pfm-stability-bins")
        handles.append(Patch(color=color, alpha=0.8))
        labels.append(g)
    ax.set_xticks(values)
    ax.set_xticklabels([f"{v:.2f}".rstrip("0").rstrip(".") if v else "0" for v in values])
    if len(values) > 8:
        ax.tick_params(axis="x", labelrotation=90)
    ax.set_xlabel("label stability (1 = all models agree)")
    ax.set_ylabel("share of the group's rows")
    ax.set_title("label stability distribution")
    ax.grid(axis="y", alpha=0.3)
    return (handles, labels) if keys else ([], [])


def plot_ensemble(
    table: pl.DataFrame | pl.LazyFrame | None,
    *,
    samples: pl.DataFrame | pl.LazyFrame | None = None,
    metrics: str | Sequence[str] | None = None,
    by: str | Sequence[str] | None = None,
    n_models: int | Sequence[int] | None = None,
    weight: str | None = None,
    intervals: bool = True,
    ncols: int = 3,
    title: str | None = None,
) -> Figure:
    r"""Ensemble stability and uncertainty: each metric on its own axis, and the label-stability
    histogram.

    ``table`` is a long table of per-group ensemble metrics
    (:func:`~polars_fairmetrics.ensemble_group_metrics`, optionally with ``ci_low`` /
    ``ci_high``): each ensemble metric of :data:`~polars_fairmetrics.ENSEMBLE_METRICS` gets a
    panel with its own scale — label stability (near 1) and epistemic mutual information (near
    0) never share an axis. ``samples`` is the per-row table of
    :func:`~polars_fairmetrics.ensemble_sample_metrics` (``label_stability`` and ``n_models``,
    the key columns kept): a last panel shows each group's share of rows at each value label
    stability can take, one bin centred on each value of :func:`label_stability_values`
    (with :math:`m` models, :math:`|2k - m|/m`, :math:`k = 0..m`), so no bin is empty by
    construction. The histogram is counted by Polars (one ``group_by``) and only the counts are
    collected.

    Parameters
    ----------
    table
        Per-group ensemble metrics, or ``None`` to draw the histogram alone.
    samples
        Per-row ensemble metrics for the histogram (DataFrame or LazyFrame), or ``None``.
    metrics
        Ensemble metrics to draw, in this order (default: those of the table that are
        ensemble metrics; a confusion metric of the ensemble label is drawn only when named).
    by
        Key columns: of ``table`` (default: every column that is not a result column) and of
        ``samples`` (default: the table's key columns that ``samples`` has; with no table, none —
        one histogram of all rows).
    n_models
        Model count(s) whose label-stability values make the bins (default: the distinct
        ``n_models`` of ``samples``).
    weight
        A column of ``samples`` whose sum counts the rows (row weights, or the ``count`` of a
        table counted already: the report's ``stability_distribution`` section); default:
        each row counts 1.
    intervals
        Draw the ``ci_low`` / ``ci_high`` whiskers when the table has them.
    ncols
        Panels per row.
    title
        A title above the panels.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ColumnNotFoundError
        When ``table`` lacks ``metric`` / ``value``, or ``samples`` lacks ``label_stability``
        (or ``n_models`` when ``n_models=`` is not given).
    InvalidOptionError
        When both tables are ``None``, or a label stability is not a value possible with the
        model counts.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "a", "b"], "p1": [0.9, 0.2, 0.6],
    ...                    "p2": [0.8, 0.6, 0.4], "p3": [0.7, 0.4, 0.7]})
    >>> rows = pfm.ensemble_sample_metrics(df, models=["p1", "p2", "p3"])
    >>> fig = pfm.plot_ensemble(None, samples=rows, by="g")
    >>> [round(float(v), 4) for v in fig.axes[0].get_xticks()]  # 3 models: 1/3 and 1
    [0.3333, 1.0]
    """
    from polars_fairmetrics.ensemble import ENSEMBLE_METRICS

    _matplotlib("plot_ensemble")
    if table is None and samples is None:
        raise InvalidOptionError("plot_ensemble needs a table of group metrics or samples=")
    with rc_context():
        chosen: list[str] = []
        frame = None
        if table is not None:
            frame, found, _ = _prepare(
                table,
                what="plot_ensemble",
                needed=["metric", "value"],
                optional=["ci_low", "ci_high"] if intervals else [],
                by=by,
                hint="a long table of ensemble_group_metrics",
            )
            if metrics is None:
                chosen = [m for m in found if m in ENSEMBLE_METRICS]
                if not chosen:
                    raise InvalidOptionError(
                        f"plot_ensemble: the table has no ensemble metric (it has {found!r}); "
                        "pass metrics= to draw others"
                    )
            else:
                chosen = _metric_list(found, metrics, "plot_ensemble")
        if frame is not None:
            has_ci = "ci_low" in frame.columns and "ci_high" in frame.columns
            top_height = _panels_height(frame, len(chosen), ncols)
            bottom_height = 3.4 if samples is not None else 0.0
            fig = _figure(top_height + bottom_height)
            top: Any = fig
            bottom: Any = fig
            if samples is not None:
                subs: Any = fig.subfigures(2, 1, height_ratios=[top_height, bottom_height])
                top, bottom = subs[0], subs[1]
            _value_panels(
                top,
                frame,
                metrics=chosen,
                low="ci_low" if has_ci else None,
                high="ci_high" if has_ci else None,
                column="value",
                kind="point",
                ncols=ncols,
                parity=None,
                bands=None,
                xlabels=dict.fromkeys(chosen, "group mean"),
                note=None,
            )
        else:
            fig = _figure(3.8)
            bottom = fig
        if samples is not None:
            ax = bottom.add_subplot()
            hist_by = by
            if by is None and table is not None:
                in_samples = set(_schema(samples))
                hist_by = [k for k in _keys(_schema(table), None) if k in in_samples]
            handles, labels = _stability_histogram(ax, samples, hist_by, n_models, weight)
            if table is None and title:
                ax.set_title("")  # the figure's title says it
            _legend_below(bottom, handles, labels, None)
        if title:
            fig.suptitle(_text(title))
        return fig
