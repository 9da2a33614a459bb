r"""The audit's tables, each computed once, from the one collected count table.

The rows are scanned once (:func:`scan_counts`: :func:`~polars_fairmetrics.confusion_counts` of
the intersection of every ``by`` column, collected). Everything else is small-table arithmetic
on that count table (a few rows per group), computed once each by :func:`plan_tables`: the
per-attribute roll-up, the comparison table of every compared metric (the disparity engine's
:func:`~polars_fairmetrics.disparities` with ``wide=True``, built once), and from it the metrics,
the disparities, the criteria (:func:`~polars_fairmetrics.disparity.criteria_from_comparisons`),
the between-groups summaries (:func:`~polars_fairmetrics.disparity.summarize_between`), the group
sizes, the undefined values with their reasons and the deployment metrics.

:func:`plan_tables` takes a DataFrame or a LazyFrame and gives the same tables. The audit gives
it the collected count table: on a few hundred rows the eager path costs less than half the CPU
of one lazy plan evaluated by ``collect_all`` (whose planning and optimisation outweigh the work),
and no query is collected beyond the one scan. The same function evaluates a replicate count
table (a ``replicate`` partition column) for the bootstrap intervals, so the intervals are of
exactly the numbers shown.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from polars_fairmetrics._typing import FrameT
from polars_fairmetrics._validate import schema_of
from polars_fairmetrics.counts import (
    confusion_counts,
    count_columns,
    roll_up_attributes,
)
from polars_fairmetrics.deployment import deployment_factors, deployment_metrics
from polars_fairmetrics.disparity import (
    CRITERIA,
    Layout,
    Reference,
    criteria_from_comparisons,
    disparities,
    reference_present,
    summarize_between,
)
from polars_fairmetrics.exceptions import InvalidOptionError, ReferenceGroupError
from polars_fairmetrics.metrics import METRICS, metrics_from_counts, safe_div
from polars_fairmetrics.report.options import DEPLOYMENT_AUDIT_METRICS, AuditOptions
from polars_fairmetrics.report.text import group_label
from polars_fairmetrics.results import finish, from_wide, order_rank

__all__ = [
    "REPORT_COLUMNS",
    "TableSpec",
    "attribute_order",
    "check_references",
    "plan_tables",
    "roll_up",
    "scan_counts",
]

REPORT_COLUMNS: tuple[str, ...] = (
    "share",
    "positives",
    "predicted_positives",
    "section",
    "reason",
    "test_value",
    "deploy_factor",
    "bin_left",
    "bin_right",
    "count",
    "fpr",
    "tpr",
    "precision",
    "recall",
    "engine",
)
"""Columns the report's sections add: a ``by`` column may not have these names either."""

_SIZE_COLUMNS = ("n", "n_w", "n_null", "n_null_y_true", "n_null_y_pred", "n_null_weight")


@dataclass(frozen=True)
class TableSpec:
    """What the plan computes: the table layout and the quantities.

    ``keys`` are the group key columns (the ``by`` columns); with ``separate`` the tables carry
    an ``attribute`` column and each attribute's rows the other keys null.
    """

    keys: tuple[str, ...]
    separate: bool
    metrics: tuple[str, ...]
    compared: tuple[str, ...]
    criteria: tuple[str, ...]
    reference: Reference
    deploy_positive_rate: float | None = None

    @classmethod
    def of(cls, options: AuditOptions) -> TableSpec:
        """The spec of an audit."""
        return cls(
            keys=options.by_columns,
            separate=options.separate,
            metrics=options.metric_names,
            compared=options.compared_metrics,
            criteria=options.criterion_names,
            reference=options.reference,
            deploy_positive_rate=(
                float(options.deploy_positive_rate)
                if options.deploy_positive_rate is not None
                else None
            ),
        )

    @property
    def attributes(self) -> tuple[str, ...]:
        """The audited attributes, in order (one name for intersectional groups)."""
        return self.keys if self.separate else (" × ".join(self.keys),)

    def keys_of(self, attribute: str) -> tuple[str, ...]:
        """The key columns of one attribute."""
        return (attribute,) if self.separate else self.keys

    def for_attribute(self, attribute: str) -> TableSpec:
        """The spec of one attribute on its own (its key only, its own reference)."""
        if not self.separate:
            return self
        ref = self.reference
        if isinstance(ref, Mapping):
            ref = ref[attribute]
        return replace(self, keys=(attribute,), separate=False, reference=ref)


# ---------------------------------------------------------------------------------------------
# The one scan and the roll-up
# ---------------------------------------------------------------------------------------------


def scan_counts(lf: pl.LazyFrame, options: AuditOptions) -> pl.DataFrame:
    """The one scan of the rows: the count table of the intersection of the ``by`` columns.

    Every attribute's table is a sum of it (:func:`roll_up`), so one small table serves every
    attribute and the bootstrap resamples its cells.
    """
    keys = list(options.by_columns)
    clash = [k for k in keys if k in REPORT_COLUMNS]
    if clash:
        raise InvalidOptionError(
            f"group column {clash[0]!r} collides with a column of the report's sections; "
            "rename it first"
        )
    counts = confusion_counts(
        lf,
        y_true=options.y_true,
        y_pred=options.y_pred,
        y_score=options.y_score,
        threshold=options.threshold,
        by=keys,
        weight=options.weight,
        pos_label=options.pos_label,
        neg_label=options.neg_label,
        score_bounds=options.score_bounds,
        # the bootstrap resamples weighted sums from the per-cell sums of squared weights
        weight_squares=options.weight is not None and options.intervals is not None,
    )
    if "threshold" in counts.collect_schema().names():  # one threshold: in the inputs
        counts = counts.drop("threshold")
    return counts.collect(engine=options.engine)


def roll_up(table: FrameT, spec: TableSpec) -> FrameT:
    """Each attribute's count table from the intersection's: a sum over the other keys.

    With several attributes side by side, a row of attribute ``a`` keeps its value of ``a`` and
    nulls for the other keys (``confusion_counts(separately=True)``'s layout); partitions
    (``threshold``, ``replicate``) are kept. Otherwise the table is returned as it is.
    """
    if not spec.separate:
        return table
    columns = schema_of(table).names()
    partitions: list[str] = [c for c in ("replicate", "threshold") if c in columns]
    return roll_up_attributes(table, spec.keys, partitions, count_columns(columns))


def check_references(counts: pl.DataFrame, spec: TableSpec) -> None:
    """Raise :class:`ReferenceGroupError` when a named reference group has no row, naming the
    groups present (before any other computation).

    ``counts`` is the count table of the intersection of the keys (:func:`scan_counts`): an
    attribute's group is present when some row of it has that value.
    """
    ref = spec.reference
    if isinstance(ref, str) and ref in ("overall", "rest", "largest"):
        return
    if spec.separate:
        if not isinstance(ref, Mapping):
            raise InvalidOptionError(
                f"reference {ref!r}: several attributes {list(spec.keys)!r} are audited side by "
                "side; pass a mapping {attribute: value} (CLI: --reference attr=value, "
                "repeated), or 'overall' / 'rest'"
            )
        unknown = [a for a in ref if a not in spec.keys]
        if unknown:
            raise InvalidOptionError(
                f"reference names attribute(s) {unknown!r}, not among the audited attributes "
                f"{list(spec.keys)!r}"
            )
        missing = [a for a in spec.keys if a not in ref]
        if missing:
            raise InvalidOptionError(
                f"reference gives no group for attribute(s) {missing!r}; name one for each of "
                f"{list(spec.keys)!r}, or use 'overall' / 'rest'"
            )
        wanted: list[tuple[str | None, dict[str, Any]]] = [(a, {a: ref[a]}) for a in spec.keys]
    elif isinstance(ref, Mapping):
        extra = [k for k in ref if k not in spec.keys]
        missing = [k for k in spec.keys if k not in ref]
        if extra or missing:
            raise InvalidOptionError(
                f"reference {dict(ref)!r} must name exactly the group columns {list(spec.keys)!r} "
                f"(missing: {missing!r}, not group columns: {extra!r})"
            )
        wanted = [(None, {k: ref[k] for k in spec.keys})]
    elif isinstance(ref, tuple):
        if len(ref) != len(spec.keys):
            raise InvalidOptionError(
                f"reference {ref!r} has {len(ref)} values for the {len(spec.keys)} group "
                f"columns {list(spec.keys)!r}"
            )
        wanted = [(None, dict(zip(spec.keys, ref, strict=True)))]
    else:
        if len(spec.keys) != 1:
            raise InvalidOptionError(
                f"groups have several columns {list(spec.keys)!r}: pass the reference as a tuple "
                "or a mapping {column: value}, or 'overall' / 'rest'"
            )
        wanted = [(None, {spec.keys[0]: ref})]
    schema = counts.schema
    for _, values in wanted:
        if not reference_present(counts, values, schema):
            present = (
                counts.select(list(values))
                .unique(maintain_order=True)
                .sort(list(values), nulls_last=True)
                .rows(named=True)
            )
            shown = ", ".join(group_label(g) for g in present[:20])
            more = f" and {len(present) - 20} more" if len(present) > 20 else ""
            raise ReferenceGroupError(
                f"reference group {group_label(values)} not found among the groups of "
                f"{', '.join(values)}; groups present: {shown or '(none)'}{more}"
            )


# ---------------------------------------------------------------------------------------------
# Every table, once
# ---------------------------------------------------------------------------------------------


def attribute_order(frame: FrameT, spec: TableSpec) -> FrameT:
    """Rows in the order of the audit's attributes (the results sort partitions by name)."""
    if not spec.separate:
        return frame
    return frame.sort(order_rank("attribute", spec.keys), maintain_order=True)


def comparison_table(counts: FrameT, spec: TableSpec) -> FrameT:
    """The wide comparison table of every compared metric (``disparities(wide=True)``): the
    one computation behind the metrics, disparities and criteria tables."""
    return disparities(
        counts, by=list(spec.keys), metrics=list(spec.compared), reference=spec.reference, wide=True
    )


def replicate_tables(reps: pl.DataFrame, spec: TableSpec) -> dict[str, pl.DataFrame]:
    """The tables of a replicate count table that the intervals read, in the wide form
    :func:`~polars_fairmetrics.bootstrap.with_intervals` takes (``docs/results.md``).

    The same functions as :func:`plan_tables` (the comparison table, the criteria composed
    from it, the deployment metrics), without what the intervals do not read (the long
    reshapes, between-groups summaries, the undefined values): the metrics and disparities
    intervals both read the comparison table, whose columns ``m``, ``m_support``,
    ``m_difference`` … hold every replicate value.
    """
    keys: list[str] = list(spec.keys)
    wide = comparison_table(reps, spec)
    assert isinstance(wide, pl.DataFrame)
    out: dict[str, pl.DataFrame] = {
        "metrics": wide,
        "disparities": wide,
        "criteria": criteria_from_comparisons(
            wide, keys=keys, criteria=list(spec.criteria), wide=True
        ),
    }
    if spec.deploy_positive_rate is not None:
        out["deployment"] = _deployment(reps, spec, _row_match(spec, wide.columns))
    return out


def _lead(spec: TableSpec) -> list[str]:
    """The columns a table's rows start with: ``attribute`` (several side by side), the keys."""
    return [*(["attribute"] if spec.separate else []), *spec.keys]


def _partitions(columns: Sequence[str]) -> list[str]:
    """The partition columns of a comparison table: ``attribute`` and ``replicate``, if there."""
    return [p for p in ("attribute", "replicate") if p in columns]


def _row_match(spec: TableSpec, columns: Sequence[str]) -> list[str]:
    """The columns that identify a row of a group (the lead, then any other partition)."""
    lead = _lead(spec)
    return [*lead, *(p for p in _partitions(columns) if p not in lead)]


def plan_tables(counts: FrameT, spec: TableSpec) -> dict[str, FrameT]:
    """Every count-based table of the report, from one (rolled-up) count table.

    Keys of the result: ``counts``, ``groups``, ``metrics``, ``disparities``, ``criteria``,
    ``between_groups``, ``undefined`` and (with a deployment rate) ``deployment``. The
    comparison table is built once and shared (lazily: cached, so ``collect_all`` evaluates it
    once).
    """
    keys: list[str] = list(spec.keys)
    lead: list[str] = _lead(spec)
    if isinstance(counts, pl.LazyFrame):
        counts = counts.cache()
    wide = comparison_table(counts, spec)
    if isinstance(wide, pl.LazyFrame):
        wide = wide.cache()
    columns = schema_of(wide).names()
    parts: list[str] = _partitions(columns)
    sizes = [c for c in ("n", "n_null", "n_w") if c in columns]
    metrics = list(spec.metrics)
    metric_table = finish(
        from_wide(
            wide.select(*parts, *keys, *sizes, *[c for m in metrics for c in (m, f"{m}_support")]),
            quantities=metrics,
            fields=("support",),
        ),
        keys=keys,
        order=metrics,
    )
    disparity_table = finish(
        from_wide(
            wide,
            quantities=list(spec.compared),
            fields=("support", "reference_value", "difference", "ratio"),
        ),
        keys=keys,
        order=list(spec.compared),
    )
    criteria_table = criteria_from_comparisons(wide, keys=keys, criteria=list(spec.criteria))
    layout = Layout(keys=keys, partitions=parts)
    hib = {m: METRICS[m].higher_is_better for m in metrics}
    between = finish(summarize_between(metric_table, layout, hib), keys=[], order=metrics)
    out: dict[str, FrameT] = {
        "counts": counts,
        "groups": _groups(counts, lead, parts),
        "metrics": metric_table,
        "disparities": disparity_table,
        "criteria": criteria_table,
        "between_groups": between,
        "undefined": _undefined(metric_table, criteria_table, disparity_table, lead, spec),
    }
    if spec.deploy_positive_rate is not None:
        out["deployment"] = _deployment(counts, spec, _row_match(spec, columns))
    # ``finish`` sorts the attributes by name and the roll-up keeps the audit's order: when the
    # two agree, only the undefined-values table (two sorted parts, concatenated) needs sorting
    in_order = list(spec.keys) == sorted(spec.keys)
    return {
        name: frame if in_order and name != "undefined" else attribute_order(frame, spec)
        for name, frame in out.items()
    }


def _groups(counts: FrameT, lead: list[str], parts: list[str]) -> FrameT:
    columns = schema_of(counts).names()
    over = [p for p in parts if p in columns]
    total = pl.col("n").sum().over(over) if over else pl.col("n").sum()
    return counts.select(
        *lead,
        *[c for c in columns if c in parts and c != "attribute"],
        *[c for c in _SIZE_COLUMNS if c in columns],
        safe_div(pl.col("n"), total).alias("share"),
        (pl.col("tp") + pl.col("fn")).alias("positives"),
        (pl.col("tp") + pl.col("fp")).alias("predicted_positives"),
    )


@functools.lru_cache(maxsize=8)
def _why(column: str) -> pl.Expr:
    """Why a metric named in ``column`` is undefined (its documented condition)."""
    why = {k: s.undefined_when for k, s in METRICS.items()}
    return pl.col(column).replace_strict(why, default="undefined")


@functools.lru_cache(maxsize=64)
def _criterion_bases(criteria: tuple[str, ...]) -> pl.DataFrame:
    """The metrics each criterion is built from, in order (and whether it is a ratio)."""
    return pl.DataFrame(
        [
            {"metric": c, "base": m, "ratio": CRITERIA[c].composition == "ratio", "position": i}
            for c in criteria
            for i, m in enumerate(CRITERIA[c].metrics)
        ],
        schema={"metric": pl.String, "base": pl.String, "ratio": pl.Boolean, "position": pl.Int64},
    )


def _undefined(
    metrics: FrameT,
    criteria: FrameT,
    disparity: FrameT,
    lead: list[str],
    spec: TableSpec,
) -> FrameT:
    """Every null of the metrics and criteria, with the reason."""
    from_metrics = metrics.filter(pl.col("value").is_null()).select(
        *lead,
        pl.lit("metrics").alias("section"),
        "metric",
        _why("metric").alias("reason"),
    )
    null_criteria = criteria.filter(pl.col("value").is_null()).select(*lead, "metric")
    if isinstance(null_criteria, pl.DataFrame) and null_criteria.height == 0:
        # the usual case: every criterion is defined, no reasons to look up
        none = null_criteria.select(
            *lead,
            pl.lit("criteria").alias("section"),
            "metric",
            pl.lit(None, dtype=pl.String).alias("reason"),
        )
        return pl.concat([from_metrics, none], how="vertical")
    bases = _criterion_bases(spec.criteria)
    base_rows = disparity.select(*lead, pl.col("metric").alias("base"), "value", "reference_value")
    base_why = _why("base")
    reason = (
        pl.when(pl.col("value").is_null())
        .then(pl.format("{} of the group is undefined: {}", "base", base_why))
        .when(pl.col("reference_value").is_null())
        .then(pl.format("{} of the reference is undefined: {}", "base", base_why))
        .when(pl.col("ratio") & (pl.col("reference_value") == 0))
        .then(pl.format("{} of the reference is 0 (ratio x / 0)", "base"))
    )
    from_criteria = (
        null_criteria.with_row_index("_pfm_row")
        .join(
            bases.lazy() if isinstance(null_criteria, pl.LazyFrame) else bases,
            on="metric",
            how="left",
        )
        .join(base_rows, on=[*lead, "base"], how="left", nulls_equal=True)
        .with_columns(reason.alias("reason"))
        .sort("_pfm_row", "position")
        .group_by("_pfm_row", maintain_order=True)
        .agg(
            *[pl.col(c).first() for c in [*lead, "metric"]],
            pl.col("reason").drop_nulls().str.join("; ").alias("reason"),
        )
        .sort("_pfm_row")
        .select(
            *lead,
            pl.lit("criteria").alias("section"),
            "metric",
            pl.when(pl.col("reason") == "")
            .then(pl.lit("undefined"))
            .otherwise(pl.col("reason"))
            .alias("reason"),
        )
    )
    return pl.concat([from_metrics, from_criteria], how="vertical")


def _deployment(counts: FrameT, spec: TableSpec, lead: list[str]) -> FrameT:
    """The deployment metrics beside their test values and the factor: the deployment
    module's ``deployment_metrics``, ``metrics_from_counts`` and ``deployment_factors``.
    ``lead``: the columns rows are matched on (attribute, keys and any replicate partition)."""
    rate = spec.deploy_positive_rate
    keys = list(spec.keys)
    names = list(DEPLOYMENT_AUDIT_METRICS)
    table = deployment_metrics(counts, deploy_positive_rate=rate, by=keys, metrics=names)
    test = metrics_from_counts(counts, metrics=names, by=keys).select(
        *lead, "metric", pl.col("value").alias("test_value")
    )
    factors = deployment_factors(counts, deploy_positive_rate=rate, by=keys).select(
        *lead, "deploy_factor"
    )
    out = table.join(test, on=[*lead, "metric"], how="left", nulls_equal=True).join(
        factors, on=lead, how="left", nulls_equal=True
    )
    first: list[str] = ["metric", "value", "test_value", "support", "n", "n_null"]
    rest = [c for c in schema_of(out).names() if c not in (*lead, *first)]
    return finish(out.select(*lead, *first, *rest), keys=keys, order=names)


def collect_tables(plans: Mapping[str, pl.LazyFrame]) -> dict[str, pl.DataFrame]:
    """Evaluate the plan's tables in one ``collect_all``."""
    names = list(plans)
    done = pl.collect_all([plans[n] for n in names])
    return dict(zip(names, done, strict=True))


def attribute_parts(
    table: pl.DataFrame, keys: Sequence[str]
) -> list[tuple[str | None, tuple[str, ...], pl.DataFrame]]:
    """(attribute, its key columns, its rows) of a section table, in order."""
    if "attribute" in table.columns:
        out: list[tuple[str | None, tuple[str, ...], pl.DataFrame]] = []
        for (attr,), part in table.group_by("attribute", maintain_order=True):
            name = str(attr)
            own = (name,) if name in keys else tuple(keys)
            out.append((name, own, part))
        return out
    return [(None, tuple(keys), table)]
