r"""The calibration sections of a report (with probability scores; ``calibration=False`` turns
them off).

- ``calibration`` — *calibration within groups* (Kleinberg, Mullainathan & Raghavan 2017;
  Chouldechova 2017): per group the expected calibration error, calibration-in-the-large and
  calibration slope of :mod:`polars_fairmetrics.calibration`, their difference and ratio against
  the audit's reference (:func:`~polars_fairmetrics.calibration_disparities`: the reference's own
  score cells, not an average of group statistics), a ``reason`` for every undefined value;
- ``reliability`` — the per-group reliability curves
  (:func:`~polars_fairmetrics.reliability_curve`) and their plot.

Both come from one more scan of the rows into score cells
(:func:`~polars_fairmetrics.score_cells`, scores rounded to ``calibration_decimals`` places: a
small table whatever the row count). With ``intervals=B`` the cells are resampled exactly like
the count table (one multinomial per attribute, the audit's ``seed``), every statistic is
recomputed by the same function on each replicate, and
:func:`~polars_fairmetrics.bootstrap.with_intervals` attaches the interval columns with the
audit's ``ci_method`` (BCa falls back to percentile: no cheap jackknife of the slope fit).
"""

from __future__ import annotations

from typing import cast

import polars as pl

from polars_fairmetrics.report.intervals import MAX_REPLICATE_ROWS
from polars_fairmetrics.report.model import Section
from polars_fairmetrics.report.sections import (
    AuditContext,
    SectionBuilder,
    left_out_note,
    reference_text,
)
from polars_fairmetrics.report.tables import attribute_order

__all__ = ["CALIBRATION_BUILDERS", "SLOPE_REASONS"]

SLOPE_REASONS: dict[str, str] = {
    "empty": "no rows with a label and a score",
    "no_positives": "no positives: the calibration slope needs both classes",
    "no_negatives": "no negatives: the calibration slope needs both classes",
    "one_score": "one distinct score: the calibration slope is not identified",
    "separated": (
        "the score separates the classes (complete or quasi-complete separation): the "
        "calibration slope's maximum likelihood estimate does not exist"
    ),
    "reference": "the reference's value is undefined",
}
"""The reasons given for an undefined value of the ``calibration`` section."""

_CACHE = "calibration"


def _lead(ctx: AuditContext) -> list[str]:
    return [*(["attribute"] if ctx.spec.separate else []), *ctx.spec.keys]


def _cells(ctx: AuditContext) -> pl.DataFrame | None:
    """The score cells of every attribute (one scan), cached for both sections."""
    opts = ctx.options
    if not opts.with_calibration or opts.y_score is None:
        return None
    if _CACHE in ctx.cache:
        return cast(pl.DataFrame, ctx.cache[_CACHE])
    ctx.step("calibration: score cells")
    # the calibration module (NumPy) is imported when asked for, not with the package
    from polars_fairmetrics.calibration import score_cells

    cells = score_cells(
        ctx.data,
        y_true=opts.y_true,
        y_score=opts.y_score,
        by=list(ctx.spec.keys),
        weight=opts.weight,
        pos_label=opts.pos_label,
        neg_label=opts.neg_label,
        separately=ctx.spec.separate,
        decimals=opts.calibration_decimals,
    ).collect(engine=opts.engine)
    ctx.cache[_CACHE] = cells
    return cells


def _bins_text(ctx: AuditContext) -> str:
    opts = ctx.options
    binning = (
        "equal-width bins on [0, 1]"
        if opts.calibration_binning == "uniform"
        else "bins at each group's score quantiles (equal counts)"
    )
    rounding = (
        f"scores rounded to {opts.calibration_decimals} decimal places for the bins and the "
        "slope (mean scores use the unrounded scores)"
        if opts.calibration_decimals is not None
        else "exact scores"
    )
    return f"{opts.calibration_grid} {binning}; {rounding}"


def _reasons(table: pl.DataFrame, cells: pl.DataFrame, lead: list[str]) -> pl.DataFrame:
    """``table`` with a ``reason`` for every undefined value or difference (null otherwise)."""
    info = (
        cells.filter(pl.col("score").is_not_null() & (pl.col("n") > 0))
        .group_by(lead)
        .agg(
            pl.col("n").sum().cast(pl.Int64).alias("_pfm_rows"),
            pl.col("positives").sum().cast(pl.Int64).alias("_pfm_pos"),
            pl.col("score").n_unique().cast(pl.Int64).alias("_pfm_scores"),
        )
    )
    rows = pl.col("_pfm_rows").fill_null(0)
    pos = pl.col("_pfm_pos").fill_null(0)
    r = SLOPE_REASONS
    reason = (
        pl.when(pl.col("value").is_not_null() & pl.col("difference").is_not_null())
        .then(pl.lit(None, dtype=pl.String))
        .when(pl.col("value").is_not_null())
        .then(pl.lit(r["reference"]))
        .when(rows == 0)
        .then(pl.lit(r["empty"]))
        .when(pos == 0)
        .then(pl.lit(r["no_positives"]))
        .when(pos == rows)
        .then(pl.lit(r["no_negatives"]))
        .when(pl.col("_pfm_scores") == 1)
        .then(pl.lit(r["one_score"]))
        .otherwise(pl.lit(r["separated"]))
    )
    return (
        table.join(info, on=lead, how="left", nulls_equal=True, maintain_order="left")
        .with_columns(reason.alias("reason"))
        .drop("_pfm_rows", "_pfm_pos", "_pfm_scores")
    )


def _calibration_table(ctx: AuditContext, cells: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    from polars_fairmetrics.calibration import calibration_disparities

    opts = ctx.options
    keys = list(ctx.spec.keys)

    def compute(table: pl.DataFrame) -> pl.DataFrame:
        return calibration_disparities(
            table,
            by=keys,
            n_bins=opts.calibration_grid,
            strategy=opts.calibration_binning,
            reference=ctx.spec.reference,
        )

    point = compute(cells)
    notes: list[str] = []
    n_boot = opts.intervals
    if n_boot is not None:
        rows = (n_boot + 1) * max(cells.height, 1)
        if opts.weight is not None:
            notes.append(
                "No intervals on the calibration statistics of weighted rows (weighted score "
                "cells are not resampled)."
            )
        elif rows > MAX_REPLICATE_ROWS:
            notes.append(
                f"No intervals on the calibration statistics: {n_boot} resamples of the "
                f"{cells.height}-row score-cell table would build {rows:,} rows (at most "
                f"{MAX_REPLICATE_ROWS:,}); use fewer calibration_decimals or resamples."
            )
        else:
            ctx.step(f"calibration: {n_boot} resamples")
            from polars_fairmetrics.bootstrap import with_intervals
            from polars_fairmetrics.calibration import CELL_COLUMNS, _replicate_cells
            from polars_fairmetrics.disparity import Layout

            layout = Layout.of(cells.columns, keys, CELL_COLUMNS)
            reps = _replicate_cells(cells.lazy(), layout, n_boot, opts.seed).collect()
            method = "percentile" if opts.ci_method == "bca" else opts.ci_method
            point = with_intervals(
                point,
                compute(reps),
                method=method,
                level=float(opts.ci_level),
                n_resamples=n_boot,
            )
            notes.append(
                f"[ci_low, ci_high]: {float(opts.ci_level):.0%} bootstrap intervals ({method}) "
                f"from {n_boot} resamples of the score cells (multinomial draws of the rows of "
                f"each attribute, random seed {opts.seed}); every statistic, bins and slope fit "
                "included, is recomputed on each resample"
                + (
                    "; BCa has no cheap jackknife here: percentile instead."
                    if method != opts.ci_method
                    else "."
                )
            )
    return attribute_order(_reasons(point, cells, _lead(ctx)), ctx.spec), notes


def _calibration(ctx: AuditContext) -> Section | None:
    cells = _cells(ctx)
    if cells is None:
        return None
    table, notes = _calibration_table(ctx, cells)
    n_undef = table["value"].null_count()
    if n_undef:
        notes.append(
            f"{n_undef} value(s) undefined (e.g. a calibration slope of a group with one class "
            "only): the reason column says why."
        )
    weighted = "weighted " if ctx.options.weight else ""
    return Section(
        "calibration",
        "Calibration within groups",
        f"Per group, from its {weighted}rows: expected calibration error Σ_b |P_b − S_b| / W "
        "(0 = calibrated), calibration-in-the-large (mean score − base rate; > 0: the scores "
        "over-predict), calibration slope (b of logit P(y=1) = a + b logit(score); 1 = "
        "calibrated, < 1: too extreme scores); difference = group − reference, ratio = group / "
        f"reference, the reference ({reference_text(ctx.spec.reference)}) computed from its "
        f"own rows. {_bins_text(ctx).capitalize()}.",
        table,
        (*notes, *left_out_note(ctx.counts)),
        ctx.spec.keys,
    )


def _reliability(ctx: AuditContext) -> Section | None:
    cells = _cells(ctx)
    if cells is None:
        return None
    from polars_fairmetrics.calibration import reliability_curve

    opts = ctx.options
    n_boot = opts.intervals
    resample = (
        n_boot is not None
        and opts.weight is None
        and (n_boot + 1) * max(cells.height, 1) <= MAX_REPLICATE_ROWS
    )
    curve = reliability_curve(
        cells,
        by=list(ctx.spec.keys),
        n_bins=opts.calibration_grid,
        strategy=opts.calibration_binning,
        n_resamples=int(n_boot or 0) if resample else 0,
        level=float(opts.ci_level),
        seed=opts.seed,
    )
    notes = []
    if resample:
        notes.append(
            f"[ci_low, ci_high]: {float(opts.ci_level):.0%} percentile intervals of the fraction "
            f"of positives from {n_boot} resamples of the score cells (bins kept at their "
            f"observed edges; random seed {opts.seed})."
        )
    return Section(
        "reliability",
        "Reliability curves",
        "Per group and non-empty bin: the mean score (mean_predicted) and the fraction of "
        "positives (fraction_positive), as scikit-learn's calibration_curve; a calibrated "
        f"group's points lie on the diagonal. {_bins_text(ctx).capitalize()}.",
        attribute_order(curve, ctx.spec),
        tuple(notes),
        ctx.spec.keys,
    )


CALIBRATION_BUILDERS: tuple[SectionBuilder, ...] = (_calibration, _reliability)
"""Builders of the calibration sections, run after the other capabilities' builders."""
