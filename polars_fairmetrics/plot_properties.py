"""Plots of the measure-properties analysis (the paper's Figures 3–7); matplotlib is optional.

Install the extra with ``pip install polars_fairmetrics[plot]``. matplotlib is imported inside
each function, so importing this module never requires it. Each function returns a
``matplotlib.figure.Figure`` built without pyplot (no global state, the backend untouched), with
the readability rules of :mod:`polars_fairmetrics.figures`: the shared width, text of at least
9 pt, legends outside the panels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from polars_fairmetrics.exceptions import InvalidOptionError
from polars_fairmetrics.figures import FIGURE_DPI, FIGURE_WIDTH, rc_context
from polars_fairmetrics.properties import MEASURE_ABBREVIATIONS, MEASURES

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_histogram_grid", "plot_perfect_fairness", "plot_undefined"]


def _figure(height: float) -> Figure:
    """A figure of the shared width and dpi (:mod:`polars_fairmetrics.figures`), no pyplot."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "plotting needs matplotlib: install the optional extra with "
            "`pip install polars_fairmetrics[plot]`"
        ) from exc
    return Figure(figsize=(FIGURE_WIDTH, height), dpi=FIGURE_DPI, layout="constrained")


def plot_histogram_grid(pmf: pl.DataFrame, measure: str, *, bins: int = 109) -> Figure:
    """Histogram grid of one measure's PMFs: rows IR, columns GR (the paper's Figures 3–5).

    Each panel bins the cell's defined values into ``bins`` equal bins over the cell's value
    range (the paper uses 109) and plots the probability of each bin; the probability of an
    undefined value is a red bar on the right.

    Parameters
    ----------
    pmf
        Output of :func:`~polars_fairmetrics.properties.cell_pmf` (one or more cells).
    measure
        One of :data:`~polars_fairmetrics.properties.MEASURES`.
    bins
        Number of bins per panel.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from polars_fairmetrics.properties import cell_pmf
    >>> fig = plot_histogram_grid(cell_pmf(12), "equal_opportunity")
    >>> len(fig.axes)
    25
    """
    if measure not in MEASURES:
        raise InvalidOptionError(f"unknown measure {measure!r}; choose from {list(MEASURES)}")
    sub = pmf.filter(pl.col("metric") == measure)
    if sub.height == 0:
        raise InvalidOptionError(f"the PMF frame has no rows for {measure!r}")
    n = int(sub["n"][0])
    ks = sorted(set(sub["positives"].to_list()))
    ms = sorted(set(sub["protected"].to_list()))
    with rc_context():
        fig = _figure(1.5 * len(ks) + 0.8)
        axes = fig.subplots(len(ks), len(ms), squeeze=False, sharey="row")
        _grid(axes, sub, ks, ms, n, bins)
        fig.suptitle(
            f"{measure.replace('_', ' ').title()} — PMF per cell, n = {n} "
            "(red: probability of an undefined value)"
        )
    return fig


def _grid(axes: Any, sub: pl.DataFrame, ks: list[Any], ms: list[Any], n: int, bins: int) -> None:
    for i, k in enumerate(ks):
        for j, m in enumerate(ms):
            ax = axes[i][j]
            cell = sub.filter(pl.col("positives") == k, pl.col("protected") == m)
            defined = cell.filter(pl.col("value").is_not_null())
            p_undef = float(cell.filter(pl.col("value").is_null())["probability"].sum())
            if defined.height:
                v = defined["value"].to_numpy()
                p = defined["probability"].to_numpy()
                lo, hi = float(v.min()), float(v.max())
                if hi == lo:
                    lo, hi = lo - 0.5, hi + 0.5
                hist, edges = np.histogram(v, bins=bins, range=(lo, hi), weights=p)
                width = edges[1] - edges[0]
                ax.bar(edges[:-1], hist, width=width, align="edge", color="#3b6ea5")
                ax.bar(hi + 3 * width, p_undef, width=3 * width, color="#c0392b")
            else:
                ax.bar(0.0, p_undef, width=0.1, color="#c0392b")
            ax.locator_params(axis="x", nbins=2)
            ax.locator_params(axis="y", nbins=3)
            if i == 0:
                ax.set_title(f"GR = {m}/{n}")
            if j == 0:
                ax.set_ylabel(f"IR = {k}/{n}")


def _lines(marginals: tuple[pl.DataFrame, pl.DataFrame], column: str, title: str) -> Figure:
    with rc_context():
        fig = _figure(4.2)
        _draw_lines(fig, marginals, column, title)
    return fig


def _draw_lines(
    fig: Figure, marginals: tuple[pl.DataFrame, pl.DataFrame], column: str, title: str
) -> None:
    by_ir, by_gr = marginals
    axes = fig.subplots(1, 2, sharey=True)
    for ax, frame, key in ((axes[0], by_ir, "ir"), (axes[1], by_gr, "gr")):
        for measure in MEASURES:
            sub = frame.filter(pl.col("metric") == measure).sort(key)
            if sub.height == 0:
                continue
            style = (
                "--"
                if measure
                in ("statistical_parity", "predictive_equality", "negative_predictive_parity")
                else "-"
            )
            ax.plot(
                sub[key].to_numpy(),
                sub[column].fill_null(np.nan).to_numpy(),
                style,
                label=MEASURE_ABBREVIATIONS[measure],
                linewidth=1.2,
            )
        ax.set_xlabel(key.upper())
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(title)
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper", frameon=False)


def plot_perfect_fairness(by_ir: pl.DataFrame, by_gr: pl.DataFrame) -> Figure:
    """Probability of perfect fairness (value exactly 0) per IR and per GR (the paper's Fig. 6).

    Parameters
    ----------
    by_ir, by_gr
        Outputs of :func:`~polars_fairmetrics.properties.marginal_summary` with ``by="ir"`` and
        ``by="gr"``.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from polars_fairmetrics.properties import cell_summary, marginal_summary
    >>> s = cell_summary(10)
    >>> fig = plot_perfect_fairness(marginal_summary(s, by="ir"), marginal_summary(s, by="gr"))
    >>> len(fig.axes)
    2
    """
    return _lines((by_ir, by_gr), "p_perfect", "P(perfect fairness)")


def plot_undefined(by_ir: pl.DataFrame, by_gr: pl.DataFrame) -> Figure:
    """Probability of an undefined value per IR and per GR (the paper's Figure 7).

    Parameters
    ----------
    by_ir, by_gr
        Outputs of :func:`~polars_fairmetrics.properties.marginal_summary`.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from polars_fairmetrics.properties import cell_summary, marginal_summary
    >>> s = cell_summary(10)
    >>> fig = plot_undefined(marginal_summary(s, by="ir"), marginal_summary(s, by="gr"))
    >>> len(fig.axes)
    2
    """
    return _lines((by_ir, by_gr), "p_undefined", "P(undefined value)")
