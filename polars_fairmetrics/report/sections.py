r"""The section builders: each turns the audit's tables (computed once) into a :class:`Section`.

A builder is a ``Callable[[AuditContext], Section | None]``; ``None`` leaves its section out.
Builders run in order and may *replace* an earlier section of the same name (the intervals
do). The core builders (:data:`CORE_BUILDERS`) only read the tables computed once
(``ctx.tables``); the builders of the capabilities beyond the core are in
:mod:`polars_fairmetrics.report.extensions`.

Every section says which rows it left out: the group tables carry ``n`` (rows counted) and
``n_null`` (rows of the group left out because a label, prediction or weight was null), a group
whose rows are all null is kept (with null values), and the notes give the totals.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import polars as pl

from polars_fairmetrics.report.model import Section
from polars_fairmetrics.report.options import AuditOptions
from polars_fairmetrics.report.tables import TableSpec
from polars_fairmetrics.report.text import group_label

__all__ = [
    "CORE_BUILDERS",
    "AuditContext",
    "SectionBuilder",
    "left_out_note",
    "reference_text",
]


@dataclass
class AuditContext:
    """What a section builder receives.

    Attributes
    ----------
    data
        The rows, lazily (for sections that need them: curves, ensemble stability). Count-based
        sections use ``counts`` / ``tables`` instead, so the rows are scanned once.
    options
        The audit's options.
    spec
        The layout and quantities of the tables (:class:`~.tables.TableSpec`).
    counts
        The collected count table: [``attribute``], the typed key columns, ``tp fp tn fn n``
        (``tp_w … n_w`` when weighted) and the null counts.
    tables
        Every count-based table, computed once (``metrics``, ``disparities``, ``criteria`` …).
    sections
        The sections built so far, by name, in order.
    extra
        Options of user section builders (``audit(extra=...)``).
    progress
        Called with a short text before each long step.
    cache
        Results shared by several builders (e.g. the intervals of four sections).
    """

    data: pl.LazyFrame
    options: AuditOptions
    spec: TableSpec
    counts: pl.DataFrame
    tables: dict[str, pl.DataFrame]
    sections: dict[str, Section] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    progress: Callable[[str], None] | None = None
    cache: dict[str, Any] = field(default_factory=dict)

    def step(self, text: str) -> None:
        """Report a long step to ``progress``."""
        if self.progress is not None:
            self.progress(text)


SectionBuilder: TypeAlias = Callable[[AuditContext], "Section | None"]
"""A function computing one section from the audit context (``None``: section absent)."""


def reference_text(reference: Any) -> str:
    """The reference in words, for the sections' descriptions."""
    words = {
        "overall": "the whole population",
        "rest": "all other rows",
        "largest": "the group with the most rows",
    }
    if isinstance(reference, str) and reference in words:
        return words[reference]
    if isinstance(reference, Mapping):
        return "; ".join(group_label({str(k): v}) for k, v in reference.items())
    return repr(reference)


def left_out_note(counts: pl.DataFrame) -> tuple[str, ...]:
    """How many rows were left out for a null value (per attribute: every row is counted once
    per attribute)."""
    nulls = counts["n_null"]
    if "attribute" in counts.columns and counts.height:
        attribute = counts["attribute"]
        nulls = nulls.filter(attribute == attribute[0])
    n_null = int(nulls.sum())
    if not n_null:
        return ()
    return (
        f"{n_null} row(s) left out because a label, prediction or weight was null: n_null "
        "gives them per group (a group whose rows are all null is kept, with null values).",
    )


def _groups(ctx: AuditContext) -> Section:
    table = ctx.tables["groups"]
    notes = list(left_out_note(ctx.counts))
    empty = table.filter(pl.col("n") == 0).height
    if empty:
        notes.append(f"{empty} group(s) have no counted rows: all their metrics are undefined.")
    return Section(
        "groups",
        "Groups",
        "Group sizes: counted rows n (and weighted n_w), rows left out for a null value "
        "(n_null and its breakdown by column), share of the attribute's counted rows, actual "
        "and predicted positives.",
        table,
        tuple(notes),
        ctx.spec.keys,
    )


def _undefined_count(table: pl.DataFrame, column: str = "value") -> tuple[str, ...]:
    n_undef = table[column].null_count()
    if not n_undef:
        return ()
    return (f"{n_undef} value(s) undefined (0/0): see Undefined values.",)


def _metrics(ctx: AuditContext) -> Section:
    table = ctx.tables["metrics"]
    weighted = "weighted " if ctx.options.weight else ""
    return Section(
        "metrics",
        "Per-group metrics",
        f"Each {weighted}metric per group; support is the count in the metric's denominator "
        "(0 where the value is undefined), n the rows counted, n_null the rows left out.",
        table,
        (*_undefined_count(table), *left_out_note(ctx.counts)),
        ctx.spec.keys,
    )


def _disparities(ctx: AuditContext) -> Section:
    return Section(
        "disparities",
        "Disparities against the reference",
        "difference = group − reference, ratio = group / reference, for each metric and for "
        f"the metrics the criteria compare; reference: {reference_text(ctx.spec.reference)}.",
        ctx.tables["disparities"],
        left_out_note(ctx.counts),
        ctx.spec.keys,
    )


def _criteria(ctx: AuditContext) -> Section:
    table = ctx.tables["criteria"]
    return Section(
        "criteria",
        "Fairness criteria",
        "The named fairness criteria per group, against the reference "
        f"({reference_text(ctx.spec.reference)}): differences are 0 and disparate impact is 1 "
        "at parity; the four-fifths rule flags disparate impact below 0.8; equalized odds is "
        "the larger of the absolute FPR and FNR differences.",
        table,
        (*_undefined_count(table), *left_out_note(ctx.counts)),
        ctx.spec.keys,
    )


def _between(ctx: AuditContext) -> Section:
    return Section(
        "between_groups",
        "Between groups",
        "For each attribute and metric: max − min and min / max over the groups with a "
        "defined value (n_undefined groups left out), and the worst and best group by the "
        "metric's direction.",
        ctx.tables["between_groups"],
        left_out_note(ctx.counts),
        ctx.spec.keys,
    )


def _undefined(ctx: AuditContext) -> Section:
    table = ctx.tables["undefined"]
    notes = () if table.height else ("Every value is defined for every group.",)
    return Section(
        "undefined",
        "Undefined values",
        "Every null in the metrics and criteria, with the reason: a 0/0 is undefined and "
        "reported, never replaced by 0, 1 or NaN.",
        table,
        notes,
        ctx.spec.keys,
    )


CORE_BUILDERS: tuple[SectionBuilder, ...] = (
    _groups,
    _metrics,
    _disparities,
    _criteria,
    _between,
    _undefined,
)
"""The core sections, in order."""
