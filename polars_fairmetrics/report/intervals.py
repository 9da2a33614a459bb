r"""Bootstrap intervals of the audit's tables, from the one count table (no second scan).

The bootstrap module's contract, used as it is:

1. :func:`~polars_fairmetrics.bootstrap.resample_counts` draws the replicate count table from
   the audit's count table: resampling the :math:`N` counted rows with replacement changes only
   how many rows fall in each cell, so a replicate is a multinomial draw
   :math:`c^* \sim \mathrm{Multinomial}(N, c / N)` on the cells (each attribute's cells on their
   own, with a random stream of their own; weighted sums from the per-cell sums of squared
   weights);
2. **the same functions** as the point estimates compute the tables of the replicates
   (:func:`~polars_fairmetrics.report.tables.replicate_tables`: the comparison table and the
   criteria composed from it, as :func:`~polars_fairmetrics.report.tables.plan_tables` does,
   in the wide form; ``replicate`` is a partition of every function of the engine);
3. :func:`~polars_fairmetrics.bootstrap.with_intervals` adds the interval columns of
   ``docs/results.md`` (``ci_low`` / ``ci_high``, ``difference_ci_*``, ``ratio_ci_*``,
   ``ci_method``, ``ci_level``, ``n_resamples``, ``n_defined``, ``ci_note``): percentile, basic
   or BCa for smooth statistics, the simultaneous max-t interval for the non-smooth ones
   (between-groups max − min and min / max, equalized odds).

So the intervals are of exactly the numbers the report shows, and the seed (default 0) makes a
report reproducible.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

import polars as pl

from polars_fairmetrics.disparity import CRITERIA
from polars_fairmetrics.exceptions import InvalidOptionError
from polars_fairmetrics.report.options import AuditOptions
from polars_fairmetrics.report.tables import (
    TableSpec,
    attribute_order,
    plan_tables,
    replicate_tables,
)
from polars_fairmetrics.results import RESERVED

__all__ = [
    "DEPLOYMENT_PERCENTILE_MIN_SUPPORT",
    "MAX_REPLICATE_ROWS",
    "add_intervals",
    "interval_note",
    "withhold",
    "withhold_deployment_intervals",
]

DEPLOYMENT_PERCENTILE_MIN_SUPPORT = 50
"""Fewest rows in a deployment-corrected metric's denominator (``support``) for its percentile
interval: below, the factor k amplifies a few negatives and the percentile interval
under-covers (92 % at nominal 95 % for groups of ≈ 30 rows in ``docs/coverage.md``; BCa
covers there)."""

MAX_REPLICATE_ROWS = 50_000_000
"""Largest replicate count table (resamples × rows of the count table) an audit builds; above
it the audit stops with a message before drawing (fewer resamples)."""

_SECTIONS = ("metrics", "disparities", "criteria", "between_groups")
"""The sections that get intervals."""


def _with_parts(criteria: tuple[str, ...]) -> tuple[str, ...]:
    """The criteria plus the signed parts a max-of-differences criterion's interval needs."""
    out = list(criteria)
    for name in criteria:
        if CRITERIA[name].composition == "max_abs_difference":
            parts = [
                c.name
                for c in CRITERIA.values()
                if c.composition == "difference" and c.metrics[0] in CRITERIA[name].metrics
            ]
            out += [p for p in parts if p not in out]
    return tuple(out)


def add_intervals(
    tables: Mapping[str, pl.DataFrame],
    counts: pl.DataFrame,
    spec: TableSpec,
    options: AuditOptions,
    progress: Callable[[str], None] | None = None,
) -> dict[str, pl.DataFrame]:
    """The metrics, disparities, criteria, between-groups (and deployment) tables with interval
    columns."""
    n_boot = options.intervals
    assert n_boot is not None
    rows = (n_boot + 1) * max(counts.height, 1)
    if rows > MAX_REPLICATE_ROWS:
        raise InvalidOptionError(
            f"intervals={n_boot} with a count table of {counts.height} rows would build "
            f"{rows:,} replicate rows (at most {MAX_REPLICATE_ROWS:,}); use fewer resamples"
        )
    if progress is not None:
        attributes = ", ".join(spec.attributes)
        progress(f"bootstrap {attributes}: {n_boot} resamples")
    # the bootstrap module (NumPy) is imported when intervals are asked for, not with the package
    from polars_fairmetrics.bootstrap import resample_counts, with_intervals

    bca = options.ci_method == "bca"
    reps = resample_counts(counts, n_resamples=n_boot, seed=options.seed, jackknife=bca)
    criteria = _with_parts(spec.criteria)
    sub = replace(spec, criteria=criteria)
    replicate = replicate_tables(reps, sub)
    done = {f"rep_{n}": replicate[n] for n in ("metrics", "disparities", "criteria")}
    point_criteria = tables["criteria"]
    if criteria != spec.criteria:  # the point criteria with the parts, for their intervals
        point_criteria = plan_tables(counts, sub)["criteria"]
    method, level = options.ci_method, float(options.ci_level)

    def attach(point: pl.DataFrame, replicates: pl.DataFrame) -> pl.DataFrame:
        return with_intervals(
            point, replicates, method=method, level=level, n_resamples=n_boot, counts=counts
        )

    crit = attach(point_criteria, done["rep_criteria"])
    if criteria != spec.criteria:
        crit = crit.filter(pl.col("metric").is_in(list(spec.criteria)))
    out = {
        "metrics": attach(tables["metrics"], done["rep_metrics"]),
        "disparities": attach(tables["disparities"], done["rep_disparities"]),
        "criteria": crit,
        # between groups: the replicates' group values, read from their wide comparison
        # table (the max-t interval needs every group's value in every replicate)
        "between_groups": attach(tables["between_groups"], replicate["metrics"]),
    }
    if "deployment" in tables and "deployment" in replicate:
        # the test values and the factor sit beside the deployment value: not keys to match on
        beside = [c for c in ("test_value", "deploy_factor") if c in tables["deployment"].columns]
        point = tables["deployment"]
        with_ci = attach(point.drop(beside), replicate["deployment"].drop(beside, strict=False))
        with_ci = withhold_deployment_intervals(with_ci, method)
        match = [
            c for c in point.columns if c not in beside and (c == "metric" or c not in RESERVED)
        ]
        out["deployment"] = with_ci.join(
            point.select(*match, *beside),
            on=match,
            how="left",
            nulls_equal=True,
            maintain_order="left",
        )
    return {name: attribute_order(out[name], spec) for name in out}


def withhold_deployment_intervals(with_ci: pl.DataFrame, method: str) -> pl.DataFrame:
    """The deployment-corrected metrics' intervals, null (with the reason in ``ci_note``) where
    the coverage study (``docs/coverage.md``) found them below 93 % at nominal 95 %: percentile
    intervals of a metric whose support (rows in its denominator) is below
    :data:`DEPLOYMENT_PERCENTILE_MIN_SUPPORT`."""
    if method != "percentile" or "support" not in with_ci.columns:
        return with_ci
    few = (
        pl.col("ci_low").is_not_null() & (pl.col("support") < DEPLOYMENT_PERCENTILE_MIN_SUPPORT)
    ).fill_null(False)
    note = pl.format(
        "percentile intervals of deployment-corrected metrics under-cover on few rows (support "
        "{} < {}; 92 % at nominal 95 % in the coverage study): use ci_method='bca'",
        pl.col("support"),
        pl.lit(DEPLOYMENT_PERCENTILE_MIN_SUPPORT),
    )
    return withhold(with_ci, few, note)


def withhold(with_ci: pl.DataFrame, where: pl.Expr, note: pl.Expr) -> pl.DataFrame:
    """``with_ci`` with its interval null and ``note`` as its ``ci_note`` where ``where`` holds
    (the one way the audit's withholding rules apply)."""
    return with_ci.with_columns(
        *[pl.when(where).then(None).otherwise(pl.col(c)).alias(c) for c in ("ci_low", "ci_high")],
        pl.when(where).then(note).otherwise(pl.col("ci_note")).alias("ci_note"),
    )


def interval_note(options: AuditOptions, tables: Mapping[str, pl.DataFrame]) -> list[str]:
    """What the intervals are, and how many are null or come from fewer resamples."""
    n_boot = int(options.intervals or 0)
    method = options.ci_method
    notes = [
        f"[ci_low, ci_high]: {float(options.ci_level):.0%} bootstrap intervals ({method}; "
        "max-t for between-groups and equalized odds, which are not smooth) from "
        f"{n_boot} resamples of each attribute's count cells (exact multinomial resampling of "
        f"the rows; random seed {options.seed}); ci_note says why an interval is null."
    ]
    if options.weight is not None:
        notes.append(
            "Weighted sums are resampled from each cell's sum and sum of squares of the weights "
            "(exact for weights constant within a cell, the first two moments otherwise)."
        )
    for table in tables.values():
        if "ci_note" not in table.columns:
            continue
        null = table.filter(pl.col("ci_note").is_not_null()).height
        partial = table.filter(pl.col("n_defined").is_between(1, n_boot - 1)).height
        if null:
            notes.append(f"{null} row(s) have a null interval: see ci_note.")
        if partial:
            notes.append(
                f"{partial} interval(s) come from fewer than {n_boot} resamples: the value was "
                "undefined (0/0) in the others (n_defined)."
            )
    return notes
