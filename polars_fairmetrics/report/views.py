"""Readable views of the sections: small tables of text for the terminal, Markdown and HTML.

A section's table is tidy and typed (that is what JSON and Parquet carry); a *view* is made for
reading: one display label per group (:func:`~polars_fairmetrics.report.text.group_label`:
``race="Caucasian"``, quoted text, ``null`` for a missing value), numbers formatted, intervals
written ``value [low, high]``, metrics pivoted against groups. Every cell and heading is already
:func:`~polars_fairmetrics.report.text.visible` (no control character survives); each renderer
adds its own escaping.

A group's label is never a column name of the view: labels contain ``=`` and the view's own
headings (``metric``, ``group``, ``n`` …) do not, so a group named ``metric``, ``value`` or
``attribute`` is still its own column (or row), and two groups always have two labels.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from polars_fairmetrics.report.model import Section
from polars_fairmetrics.report.tables import attribute_parts
from polars_fairmetrics.report.text import fmt, group_label, visible

__all__ = ["MAX_PIVOT_GROUPS", "REFERENCE_MARK", "VIEWS", "View", "section_views"]

MAX_PIVOT_GROUPS = 12
"""Above this many groups, pivoted views put the groups in rows instead of columns."""

_META = ("ci_method", "ci_level", "n_resamples", "n_defined", "ci_note")
"""Interval bookkeeping columns: in the data outputs, summarised in the notes of the views."""


@dataclass(frozen=True)
class View:
    """A readable table: an optional heading, column headings and rows of text (all visible).

    ``numeric`` says which columns hold numbers (renderers align them right).
    """

    heading: str | None
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...]

    @property
    def height(self) -> int:
        """Number of rows."""
        return len(self.rows)


def _unique(headers: Sequence[str]) -> list[str]:
    """Headings made unique (a safety net: labels never collide with the view's own names)."""
    seen: dict[str, int] = {}
    out = []
    for h in headers:
        name = h
        while name in seen:
            seen[h] += 1
            name = f"{h} ({seen[h]})"
        seen[name] = 1
        out.append(name)
    return out


def _view(
    heading: str | None, columns: Sequence[str], rows: Sequence[Sequence[str]], first_text: int
) -> View:
    cols = _unique([visible(c) for c in columns])
    return View(
        heading,
        tuple(cols),
        tuple(tuple(r) for r in rows),
        tuple(i >= first_text for i in range(len(cols))),
    )


def _cell(row: Mapping[str, Any], column: str) -> str:
    """A value with its interval when the row has one (``value [low, high]``)."""
    text = fmt(row[column])
    prefix = "" if column == "value" else f"{column}_"
    lo, hi = row.get(f"{prefix}ci_low", _NA), row.get(f"{prefix}ci_high", _NA)
    if lo is not _NA and hi is not _NA and row[column] is not None:
        text += f" [{fmt(lo)}, {fmt(hi)}]"
    return text


_NA = object()


def _label(row: Mapping[str, Any], keys: Sequence[str]) -> str:
    return group_label({k: row[k] for k in keys})


def _pivot(
    part: pl.DataFrame,
    keys: Sequence[str],
    heading: str | None,
    row_key: str,
    cell: Callable[[Mapping[str, Any]], str],
    sizes: bool = True,
) -> View:
    """``row_key`` (metric, bin …) × groups, cells formatted by ``cell``; the group sizes
    (``n``, ``n_null``) as the last rows."""
    keys = [k for k in keys if k in part.columns]
    labels: dict[str, None] = {}
    names: dict[str, None] = {}
    cells: dict[tuple[str, str], str] = {}
    size: dict[tuple[str, str], str] = {}
    size_cols = [c for c in ("n", "n_null") if sizes and c in part.columns]
    for r in part.iter_rows(named=True):
        g = _label(r, keys)
        name = fmt(r[row_key])
        labels[g] = None
        names[name] = None
        cells[(name, g)] = cell(r)
        for c in size_cols:
            size.setdefault((c, g), fmt(r[c]))
    groups = list(labels)
    rows_of = [*names, *size_cols]
    lookup = {**cells, **size}
    if len(groups) <= MAX_PIVOT_GROUPS:
        rows = [[m, *[lookup.get((m, g), "") for g in groups]] for m in rows_of]
        return _view(heading, [row_key, *groups], rows, 1)
    rows = [[g, *[lookup.get((m, g), "") for m in rows_of]] for g in groups]
    return _view(heading, ["group", *rows_of], rows, 1)


def _table_view(
    part: pl.DataFrame,
    keys: Sequence[str],
    heading: str | None,
    columns: Sequence[str] | None = None,
    cell: Callable[[Mapping[str, Any], str], str] | None = None,
    hidden: Sequence[str] = (),
) -> View:
    """The rows as they are: a ``group`` label column (when the table has keys) then the other
    columns formatted (``hidden``: key columns of other attributes, not shown)."""
    keys = [k for k in keys if k in part.columns]
    shown = [
        c
        for c in (columns if columns is not None else part.columns)
        if c in part.columns
        and c != "attribute"
        and c not in keys
        and c not in hidden
        and c not in _META
    ]
    fmt_cell = cell or (lambda r, c: fmt(r[c]))
    label_head = "group"
    while label_head in shown:
        label_head += "_label"
    rows = []
    for r in part.iter_rows(named=True):
        values = [fmt_cell(r, c) for c in shown]
        rows.append([_label(r, keys), *values] if keys else values)
    heads = [label_head, *shown] if keys else shown
    numeric = [part.schema[c].is_numeric() for c in shown]
    cols = _unique([visible(c) for c in heads])
    flags = [False, *numeric] if keys else numeric
    return View(heading, tuple(cols), tuple(tuple(r) for r in rows), tuple(flags))


def _own_struct(value: Any, keys: Sequence[str]) -> Any:
    if isinstance(value, Mapping):
        return {k: value.get(k) for k in keys}
    return value


def _between_view(
    part: pl.DataFrame, keys: Sequence[str], heading: str | None, hidden: Sequence[str] = ()
) -> View:
    def cell(r: Mapping[str, Any], c: str) -> str:
        if c in ("worst_group", "best_group"):
            return fmt(_own_struct(r[c], keys)) if r[c] is not None else fmt(None)
        if c in ("difference", "ratio"):
            return _cell(r, c)
        return fmt(r[c])

    cols = [
        "metric",
        "min",
        "max",
        "difference",
        "ratio",
        "worst_group",
        "best_group",
        "n_groups",
        "n_undefined",
    ]
    view = _table_view(part, [], heading, cols, cell)
    flags = tuple(c not in ("metric", "worst_group", "best_group") for c in view.columns)
    return View(view.heading, view.columns, view.rows, flags)


REFERENCE_MARK = "reference"
"""What the reference group's cells of a comparison show (instead of a difference of 0)."""


def _disparity_view(
    part: pl.DataFrame, keys: Sequence[str], heading: str | None, hidden: Sequence[str] = ()
) -> View:
    """One number per cell: a row per metric and comparison (``<metric> difference`` and
    ``<metric> ratio``), its interval beside it; the reference group's cells say
    ``reference``."""
    both = pl.concat(
        [
            part.with_columns(
                pl.format("{} {}", pl.col("metric"), pl.lit(kind)).alias("comparison"),
                pl.lit(kind).alias("_kind"),
            )
            for kind in ("difference", "ratio")
        ],
        how="vertical_relaxed",
    )

    def cell(r: Mapping[str, Any]) -> str:
        if r.get("is_reference"):
            return REFERENCE_MARK
        return _cell(r, r["_kind"])

    return _pivot(both, keys, heading, "comparison", cell)


def _curves_view(
    part: pl.DataFrame, keys: Sequence[str], heading: str | None, hidden: Sequence[str] = ()
) -> View:
    """The curves in brief (every point is in the JSON / Parquet output and the plots)."""
    finite = pl.col("threshold").filter(pl.col("threshold").is_finite())
    lead = [c for c in ("attribute", *keys) if c in part.columns]
    brief = part.group_by(lead, maintain_order=True).agg(
        pl.len().alias("points"),
        finite.min().alias("lowest_threshold"),
        finite.max().alias("highest_threshold"),
    )
    return _table_view(brief, keys, heading)


def _histogram_view(
    part: pl.DataFrame, keys: Sequence[str], heading: str | None, hidden: Sequence[str] = ()
) -> View:
    binned = part.rename({"value": "label stability"})
    return _pivot(binned, keys, heading, "label stability", lambda r: fmt(r["count"]), sizes=False)


def _calibration_view(
    part: pl.DataFrame, keys: Sequence[str], heading: str | None, hidden: Sequence[str] = ()
) -> View:
    """A row per calibration statistic (its value) and per difference against the reference
    (``<metric> difference``), intervals beside them; an undefined value shows its reason."""
    both = pl.concat(
        [
            part.with_columns(pl.col("metric").alias("comparison"), pl.lit("value").alias("_kind")),
            part.with_columns(
                pl.format("{} difference", pl.col("metric")).alias("comparison"),
                pl.lit("difference").alias("_kind"),
            ),
        ],
        how="vertical_relaxed",
    )

    def cell(r: Mapping[str, Any]) -> str:
        if r["_kind"] == "difference" and r.get("is_reference"):
            return REFERENCE_MARK
        if r[r["_kind"]] is None and r.get("reason"):
            return f"{fmt(None)} ({r['reason']})"
        return _cell(r, r["_kind"])

    return _pivot(both, keys, heading, "comparison", cell)


def _reliability_view(
    part: pl.DataFrame, keys: Sequence[str], heading: str | None, hidden: Sequence[str] = ()
) -> View:
    """Bins × groups: ``fraction of positives [interval] / mean score (rows)``."""

    def cell(r: Mapping[str, Any]) -> str:
        lo, hi = r.get("ci_low", _NA), r.get("ci_high", _NA)
        observed = fmt(r["fraction_positive"])
        if lo is not _NA and hi is not _NA and r["fraction_positive"] is not None:
            observed += f" [{fmt(lo)}, {fmt(hi)}]"
        return f"{observed} / {fmt(r['mean_predicted'])} ({fmt(r['n'])})"

    view = _pivot(part, keys, heading, "bin", cell, sizes=False)
    flags = tuple(i == 0 for i in range(len(view.columns)))
    return View(view.heading, view.columns, view.rows, flags)


def _value_pivot(
    part: pl.DataFrame, keys: Sequence[str], heading: str | None, hidden: Sequence[str] = ()
) -> View:
    return _pivot(part, keys, heading, "metric", lambda r: _cell(r, "value"))


ViewMaker = Callable[[pl.DataFrame, Sequence[str], "str | None", Sequence[str]], View]
"""A view of one attribute's rows: (rows, its key columns, heading, other key columns)."""

VIEWS: dict[str, ViewMaker] = {
    "metrics": _value_pivot,
    "disparities": _disparity_view,
    "criteria": _value_pivot,
    "between_groups": _between_view,
    "stability": _value_pivot,
    "stability_distribution": _histogram_view,
    "curve_summaries": _value_pivot,
    "curves": _curves_view,
    "calibration": _calibration_view,
    "reliability": _reliability_view,
}
"""Readable views by section name; other sections show their rows, formatted."""


def section_views(section: Section) -> list[View]:
    """Readable views of a section, one per attribute.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "b"], "y": [1, 0], "p": [1, 1]})
    >>> r = pfm.audit(df, y_true="y", y_pred="p", by="g", metrics=["selection_rate"])
    >>> v = section_views(r.section("metrics"))[0]
    >>> v.columns, v.rows[0]
    (('metric', 'g="a"', 'g="b"'), ('selection_rate', '1.0000', '1.0000'))
    """
    table = section.table
    keys = list(section.keys)
    # a pivot needs the keys to tell the groups apart: without them, the rows as they are
    view = VIEWS.get(section.name) if keys or section.name == "between_groups" else None
    out = []
    for attribute, own, part in attribute_parts(table, keys):
        heading = visible(attribute) if attribute is not None else None
        others = [k for k in keys if k not in own]
        if view is not None and part.height:
            out.append(view(part, own, heading, others))
        else:
            out.append(_table_view(part, own, heading, hidden=others))
    return out
