"""The plots of a report's sections, as inline SVG, from :mod:`polars_fairmetrics.plot`'s blocks.

- ``metrics`` and ``stability``: per-group bars, one figure per attribute, with interval whiskers
  when the section has ``ci_low`` / ``ci_high``;
- ``criteria``: a disparity forest plot per attribute (differences against the reference, with
  a line at 0; disparate impact on its own axis with the four-fifths band 0.8–1.25), the
  reference group itself left out (it is at parity by construction);
- ``stability_distribution``: each group's label-stability histogram (outlines of its share);
- ``curves``: one ROC and one precision-recall plot per attribute;
- ``reliability``: a reliability diagram per group (one panel each, one figure per attribute).

Groups are named by their display labels (:func:`~polars_fairmetrics.report.text.group_label`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl

from polars_fairmetrics import plot
from polars_fairmetrics.report.model import Section
from polars_fairmetrics.report.tables import attribute_parts
from polars_fairmetrics.report.text import group_label

__all__ = ["PLOTTERS", "section_figures"]

_LABEL = "_pfm_label"


def _labelled(part: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    labels = [group_label({k: r[k] for k in keys}) for r in part.iter_rows(named=True)]
    return part.with_columns(pl.Series(_LABEL, labels, dtype=pl.String))


def _parts(section: Section) -> list[tuple[str, pl.DataFrame]]:
    """(attribute name, rows with a label column) per attribute."""
    keys = [k for k in section.keys if k in section.table.columns]
    out = []
    for attribute, own, part in attribute_parts(section.table, keys):
        name = attribute if attribute is not None else " × ".join(own)
        out.append((name, _labelled(part, [k for k in own if k in part.columns])))
    return out


def _bars(section: Section) -> list[str]:
    return [
        plot.metric_bars_svg(part, title=f"{section.title} by {a}", label=_LABEL)
        for a, part in _parts(section)
    ]


def _forest(section: Section) -> list[str]:
    out = []
    for a, part in _parts(section):
        if "is_reference" in part.columns:
            part = part.filter(~pl.col("is_reference").fill_null(False))
        if part.height:
            out.append(plot.forest_svg(part, title=f"Fairness criteria by {a}", label=_LABEL))
    return out


def _histograms(section: Section) -> list[str]:
    return [
        plot.binned_histogram_svg(
            part,
            left="bin_left",
            right="bin_right",
            count="share",
            group=_LABEL,
            ylabel="share of the group's rows",
            title=f"Label stability by {a}",
            xlabel="label stability (1 = all models agree)",
        )
        for a, part in _parts(section)
    ]


def _curves(section: Section) -> list[str]:
    out = []
    for a, part in _parts(section):
        part = part.filter(pl.col("threshold").is_finite() | (pl.col("recall") == 0))
        roc = part.filter(pl.col("fpr").is_not_null() & pl.col("tpr").is_not_null())
        pr = part.filter(pl.col("precision").is_not_null() & pl.col("recall").is_not_null())
        if roc.height:
            out.append(
                plot.curve_svg(
                    roc, x="fpr", y="tpr", title=f"ROC by {a}", group=_LABEL, diagonal=True
                )
            )
        if pr.height:
            out.append(
                plot.curve_svg(
                    pr, x="recall", y="precision", title=f"Precision-recall by {a}", group=_LABEL
                )
            )
    return out


def _reliability(section: Section) -> list[str]:
    return [
        plot.reliability_svg(part, title=f"Reliability by {a}", group=_LABEL)
        for a, part in _parts(section)
        if part.filter(pl.col("fraction_positive").is_not_null()).height
    ]


PLOTTERS: dict[str, Callable[[Section], list[str]]] = {
    "curves": _curves,
    "metrics": _bars,
    "criteria": _forest,
    "stability": _bars,
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
