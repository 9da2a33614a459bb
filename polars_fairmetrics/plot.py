"""Plot building blocks as inline SVG (optional: ``pip install 'polars_fairmetrics[plot]'``).

matplotlib is imported lazily, inside the functions, so the package works without it
(:func:`available` says whether it is installed). Figures are built on
``matplotlib.figure.Figure`` (no pyplot state, no GUI backend) and written as SVG with text kept
as text; labels taken from data are made visible (control characters escaped, never raw in the
SVG) and ``$`` is escaped so a label is never read as math; matplotlib's SVG writer escapes the
XML.

- :func:`figure_svg` renders any figure as one inline ``<svg>`` element: the report's section
  plots (:mod:`polars_fairmetrics.report.plots`) are the public figures of
  :mod:`polars_fairmetrics.figures` rendered with it;
- :func:`reliability_figure`: reliability diagrams, one panel per group (a small tidy table with
  a text ``label`` column, made by the caller);
- :func:`plot_trend` / :func:`plot_reliability`: pyplot figures of monitoring and calibration
  tables.

This module does not know the report.
"""

from __future__ import annotations

import importlib.util
import io
import re
import warnings
from collections.abc import Sequence
from typing import Any

import polars as pl

from polars_fairmetrics._text import visible
from polars_fairmetrics.results import NON_KEY_COLUMNS

__all__ = [
    "available",
    "figure_svg",
    "reliability_figure",
]


def available() -> bool:
    """Whether matplotlib (the ``plot`` extra) is installed."""
    return importlib.util.find_spec("matplotlib") is not None


def _label(text: Any) -> str:
    """A data value as a plot label (made visible; ``$`` escaped: never mathtext)."""
    return visible("null" if text is None else str(text)).replace("$", r"\$")


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _svg(fig: Any) -> str:
    """The figure as an ``<svg>`` element (no XML prologue, no DOCTYPE, no timestamp)."""
    import matplotlib

    buf = io.StringIO()
    with (
        matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "polars_fairmetrics"}),
        warnings.catch_warnings(),
    ):
        # text is kept as text in the SVG: the viewer's fonts draw it, whatever glyphs
        # matplotlib's own fonts lack
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    start = text.find("<svg")
    text = text[start:]
    # drop comments (the writer's own) so nothing but the drawing remains
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


def figure_svg(fig: Any) -> str:
    """A matplotlib figure as one inline ``<svg>`` element (text kept as text, no timestamp).

    The report renders the figures of :mod:`polars_fairmetrics.figures` with it.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> figure_svg(Figure(figsize=(2, 1))).startswith("<svg")
    True
    """
    return _svg(fig)


def _yerr(
    values: Sequence[float | None],
    lows: Sequence[float | None] | None,
    highs: Sequence[float | None] | None,
) -> Any:
    if lows is None or highs is None:
        return None
    lo = [
        (v - lw) if v is not None and lw is not None else 0.0
        for v, lw in zip(values, lows, strict=True)
    ]
    hi = [
        (h - v) if v is not None and h is not None else 0.0
        for v, h in zip(values, highs, strict=True)
    ]
    return [lo, hi]


def reliability_figure(
    table: pl.DataFrame, *, title: str, group: str = "label", columns: int = 4
) -> Any:
    """Reliability diagrams, one panel per ``group``: the fraction of positives against the mean
    score of each bin (a :func:`~polars_fairmetrics.reliability_curve` table), interval whiskers
    when the table has ``ci_low`` / ``ci_high``, the diagonal of perfect calibration.

    Returns a ``matplotlib.figure.Figure`` (no pyplot state), ``columns`` panels a row.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"label": ["a", "a", "b"], "mean_predicted": [0.2, 0.8, 0.5],
    ...                   "fraction_positive": [0.1, 0.9, 0.4]})
    >>> len(reliability_figure(t, title="Reliability").axes)
    2
    """
    groups = list(dict.fromkeys(table[group].to_list()))
    ncols = max(1, min(columns, len(groups)))
    nrows = max(1, -(-len(groups) // ncols))
    fig = _figure(2.5 * ncols + 0.6, 2.5 * nrows + 0.7)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    has_ci = "ci_low" in table.columns and "ci_high" in table.columns
    flat = list(axes.flat)
    for ax, g in zip(flat, groups, strict=False):
        part = table.filter(
            pl.col(group).eq_missing(g) & pl.col("fraction_positive").is_not_null()
        ).sort("mean_predicted")
        x, y = part["mean_predicted"].to_list(), part["fraction_positive"].to_list()
        ax.plot([0, 1], [0, 1], color="grey", linewidth=0.7, linestyle="--")
        err = _yerr(y, part["ci_low"].to_list(), part["ci_high"].to_list()) if has_ci else None
        ax.errorbar(x, y, yerr=err, marker="o", markersize=3, capsize=2, linewidth=1.2)
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(_label(g), fontsize=8)
        ax.grid(alpha=0.3)
    for ax in flat[len(groups) :]:
        fig.delaxes(ax)
    fig.suptitle(_label(title), fontsize=10)
    fig.supxlabel("mean predicted probability", fontsize=8)
    fig.supylabel("fraction of positives", fontsize=8)
    return fig


def _pyplot(what: str) -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"{what} needs matplotlib: pip install 'polars_fairmetrics[plot]'"
        ) from exc
    return plt


def _series_labels(frame: pl.DataFrame, split: Sequence[str]) -> list[tuple[str, pl.DataFrame]]:
    """One (label, rows) pair per group (× ``split`` column): the group's display label."""
    from polars_fairmetrics.results import display_label

    keys = [c for c in frame.columns if c not in NON_KEY_COLUMNS]
    by = [*(["attribute"] if "attribute" in frame.columns else []), *keys, *split]
    if not by:
        return [("all rows", frame)]
    out = []
    for part in frame.partition_by(by, maintain_order=True):
        row = part.row(0, named=True)
        own = [row["attribute"]] if "attribute" in frame.columns else keys
        label = display_label({k: row[k] for k in own if k in row}) if own else "all rows"
        extra = ", ".join(f"{c}={row[c]}" for c in split)
        out.append((_label(label + (f" ({extra})" if extra else "")), part))
    return out


def plot_trend(
    trend: pl.DataFrame | pl.LazyFrame,
    *,
    metric: str | None = None,
    column: str = "value",
    gate: float | Sequence[float] | None = None,
    parity: float | None = None,
    ax: Any = None,
    title: str | None = None,
) -> Any:
    """Plot a quantity per period: one line per group, its interval as a band, gates drawn.

    ``trend`` is a long table with a ``period`` column (:func:`~polars_fairmetrics.period_criteria`,
    :func:`~polars_fairmetrics.period_disparities`, or any result of a count table read per
    period). ``column`` is drawn (``value``; or ``difference`` / ``ratio``), with its interval
    (``ci_low``/``ci_high``, or ``difference_ci_*``/``ratio_ci_*``) as a shaded band when
    present. ``gate`` draws the threshold(s) a job gates on (dashed), ``parity`` the value of
    perfect fairness (dotted; default: the criterion's parity when ``metric`` is a named
    criterion). Needs matplotlib; collects a LazyFrame.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import polars as pl
    >>> t = pl.DataFrame({"g": ["a", "a", "b", "b"], "period": [1, 2, 1, 2],
    ...                   "metric": ["disparate_impact"] * 4, "value": [1.0, 0.9, 0.8, 0.7],
    ...                   "ci_low": [0.9, 0.8, 0.7, 0.6], "ci_high": [1.1, 1.0, 0.9, 0.8]})
    >>> ax = plot_trend(t, gate=0.8)
    >>> len(ax.get_lines())  # two groups, the gate, the parity line
    4
    """
    from polars_fairmetrics.exceptions import InvalidOptionError

    plt = _pyplot("plot_trend")
    frame = trend.collect() if isinstance(trend, pl.LazyFrame) else trend
    if "period" not in frame.columns:
        raise InvalidOptionError("plot_trend needs a 'period' column (a table read per period)")
    if column not in frame.columns:
        raise InvalidOptionError(f"plot_trend: no column {column!r} in the table")
    if frame.height == 0:
        raise InvalidOptionError("plot_trend: the table has no rows (nothing to draw)")
    if "metric" in frame.columns:
        metrics = frame["metric"].unique(maintain_order=True).to_list()
        if metric is None:
            if len(metrics) != 1:
                raise InvalidOptionError(
                    f"the table has several metrics {metrics!r}: pass metric= to choose one"
                )
            metric = metrics[0]
        elif metric not in metrics:
            raise InvalidOptionError(f"metric {metric!r} is not in the table: {metrics!r}")
        frame = frame.filter(pl.col("metric") == metric)
    low, high = (
        ("ci_low", "ci_high") if column == "value" else (f"{column}_ci_low", f"{column}_ci_high")
    )
    band = low in frame.columns and high in frame.columns
    if parity is None and metric is not None:
        from polars_fairmetrics.disparity import CRITERIA

        if metric in CRITERIA:
            parity = CRITERIA[metric].parity
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    split = ["model"] if "model" in frame.columns and frame["model"].n_unique() > 1 else []
    periods = frame["period"].unique().sort()
    textual = periods.dtype == pl.String
    position = {p: i for i, p in enumerate(periods.to_list())}
    for label, part in _series_labels(frame, split):
        part = part.sort("period")
        x = [position[p] for p in part["period"].to_list()] if textual else part["period"].to_list()
        (line,) = ax.plot(x, part[column].to_list(), marker="o", markersize=3, label=label)
        if band:
            lo = part[low].fill_null(float("nan")).to_numpy()
            hi = part[high].fill_null(float("nan")).to_numpy()
            ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.18, linewidth=0)
    gates = [] if gate is None else ([gate] if isinstance(gate, (int, float)) else list(gate))
    for i, g in enumerate(gates):
        ax.axhline(
            g, color="crimson", linestyle="--", linewidth=1, label="gate" if i == 0 else None
        )
    if parity is not None:
        ax.axhline(parity, color="grey", linestyle=":", linewidth=1)
    if textual:
        ax.set_xticks(range(len(position)))
        ax.set_xticklabels([_label(p) for p in position], rotation=45, ha="right")
    ax.set_xlabel("period")
    ax.set_ylabel(_label(metric if column == "value" else f"{metric} ({column})"))
    if title:
        ax.set_title(_label(title))
    ax.legend(fontsize=9)
    return ax


def plot_reliability(
    curve: pl.DataFrame | pl.LazyFrame,
    *,
    ax: Any = None,
    title: str | None = None,
) -> Any:
    """Reliability diagram: per group, the fraction of positives against the mean score per bin.

    Draws a :func:`~polars_fairmetrics.reliability_curve` table, one line per group (and model
    or period when the table has several), with the interval of ``fraction_positive`` as error
    bars when present, and the diagonal of perfect calibration. Needs matplotlib; collects a
    LazyFrame.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [0, 1, 0, 1],
    ...                    "s": [0.2, 0.8, 0.3, 0.9]})
    >>> ax = plot_reliability(pfm.reliability_curve(df, y_true="y", y_score="s", by="g"))
    >>> len(ax.get_lines())  # two groups and the diagonal
    3
    """
    from polars_fairmetrics.exceptions import InvalidOptionError

    plt = _pyplot("plot_reliability")
    frame = curve.collect() if isinstance(curve, pl.LazyFrame) else curve
    needed = ["mean_predicted", "fraction_positive"]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise InvalidOptionError(
            f"plot_reliability needs a reliability_curve table; missing {', '.join(missing)}"
        )
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 5))
    split = [c for c in ("model", "period") if c in frame.columns and frame[c].n_unique() > 1]
    for label, part in _series_labels(frame, split):
        part = part.sort("mean_predicted")
        x = part["mean_predicted"].to_numpy()
        y = part["fraction_positive"].to_numpy()
        if "ci_low" in part.columns and "ci_high" in part.columns:
            lo = part["ci_low"].fill_null(float("nan")).to_numpy()
            hi = part["ci_high"].fill_null(float("nan")).to_numpy()
            err = [y - lo, hi - y]
            ax.errorbar(x, y, yerr=err, marker="o", markersize=3, capsize=2, label=label)
        else:
            ax.plot(x, y, marker="o", markersize=3, label=label)
    ax.plot([0, 1], [0, 1], linestyle=":", color="grey")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("mean predicted probability")
    ax.set_ylabel("fraction of positives")
    if title:
        ax.set_title(_label(title))
    ax.legend(fontsize=9)
    return ax


__all__ += ["plot_reliability", "plot_trend"]
