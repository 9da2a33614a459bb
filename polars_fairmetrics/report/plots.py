"""The plots of a report's sections: the public figures of :mod:`polars_fairmetrics.figures`,
rendered to inline SVG, so a notebook and the report look the same.

One figure per attribute and section:

- ``metrics``: :func:`~polars_fairmetrics.plot_group_metrics` (bars, interval whiskers when the
  section has ``ci_low`` / ``ci_high``);
- ``criteria``: :func:`~polars_fairmetrics.plot_disparities` (a forest plot against parity with
  the reference bands: ±0.1 for a difference, 0.8–1.25 for disparate impact; the reference group
  itself, at parity by construction, left out);
- ``stability``: :func:`~polars_fairmetrics.plot_ensemble` (each ensemble metric on its own
  axis);
- ``stability_distribution``: the label-stability histogram of
  :func:`~polars_fairmetrics.plot_ensemble`, one bin per value label stability can take;
- ``curves``: :func:`~polars_fairmetrics.plot_curves` (ROC and precision-recall side by side,
  AUC / AP of the drawn grid curves in the legend);
- ``reliability``: a reliability diagram per group
  (:func:`~polars_fairmetrics.plot.reliability_figure`, one panel each).

Groups are named by their display labels (as :func:`~polars_fairmetrics.report.text.group_label`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from polars_fairmetrics import figures, plot
from polars_fairmetrics.report.model import Section
from polars_fairmetrics.report.tables import attribute_parts
from polars_fairmetrics.report.text import group_label

__all__ = ["PLOTTERS", "section_figures"]

_LABEL = "_pfm_label"


def _parts(section: Section) -> list[tuple[str, list[str], pl.DataFrame]]:
    """(attribute name, its key columns, its rows with only those keys) per attribute."""
    keys = [k for k in section.keys if k in section.table.columns]
    out = []
    for attribute, own, part in attribute_parts(section.table, keys):
        name = attribute if attribute is not None else " × ".join(own)
        mine = [k for k in own if k in part.columns]
        drop = [c for c in ("attribute", *keys) if c in part.columns and c not in mine]
        out.append((name, mine, part.drop(drop)))
    return out


def _svg(fig: Any) -> str:
    out = plot.figure_svg(fig)
    fig.clear()
    return out


def _bars(section: Section) -> list[str]:
    return [
        _svg(figures.plot_group_metrics(part, by=keys, title=f"{section.title} by {a}"))
        for a, keys, part in _parts(section)
    ]


def _forest(section: Section) -> list[str]:
    out = []
    for a, keys, part in _parts(section):
        if "is_reference" in part.columns:
            part = part.filter(~pl.col("is_reference").fill_null(False))
        if part.height:
            fig = figures.plot_disparities(part, by=keys, title=f"Fairness criteria by {a}")
            out.append(_svg(fig))
    return out


def _ensemble(section: Section) -> list[str]:
    return [
        _svg(figures.plot_ensemble(part, by=keys, title=f"{section.title} by {a}"))
        for a, keys, part in _parts(section)
    ]


def _histograms(section: Section) -> list[str]:
    out = []
    for a, keys, part in _parts(section):
        if part["count"].sum() == 0:
            continue
        # the section lists every value label stability can take (zeros included): its values
        # are the bins
        fig = figures.plot_ensemble(
            None,
            samples=part.select(*keys, pl.col("value").alias("label_stability"), "count"),
            by=keys,
            weight="count",
            title=f"Label stability by {a}",
        )
        out.append(_svg(fig))
    return out


def _curves(section: Section) -> list[str]:
    out = []
    for a, keys, part in _parts(section):
        part = part.filter(pl.col("threshold").is_finite() | (pl.col("recall") == 0))
        if part.height:
            fig = figures.plot_curves(part, by=keys, title=f"ROC and precision-recall by {a}")
            out.append(_svg(fig))
    return out


def _reliability(section: Section) -> list[str]:
    out = []
    for a, keys, part in _parts(section):
        if part.filter(pl.col("fraction_positive").is_not_null()).height:
            labels = [group_label({k: r[k] for k in keys}) for r in part.iter_rows(named=True)]
            part = part.with_columns(pl.Series(_LABEL, labels, dtype=pl.String))
            fig = plot.reliability_figure(part, title=f"Reliability by {a}", group=_LABEL)
            out.append(_svg(fig))
    return out


PLOTTERS: dict[str, Callable[[Section], list[str]]] = {
    "curves": _curves,
    "metrics": _bars,
    "criteria": _forest,
    "stability": _ensemble,
    "stability_distribution": _histograms,
    "reliability": _reliability,
}
"""Plots by section name: each returns inline ``<svg>`` strings shown above the section."""


def section_figures(section: Section) -> list[str]:
    """The inline SVG plots of one section (empty when it has none or matplotlib is absent).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "b"], "y": [1, 0], "p": [1, 1]})
    >>> r = pfm.audit(df, y_true="y", y_pred="p", by="g", metrics=["selection_rate"])
    >>> svgs = section_figures(r.section("metrics"))
    >>> len(svgs), svgs[0].startswith("<svg")
    (1, True)
    """
    plotter = PLOTTERS.get(section.name)
    if plotter is None or not plot.available() or section.table.height == 0:
        return []
    return plotter(section)
