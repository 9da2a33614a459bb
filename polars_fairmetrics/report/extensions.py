r"""Section builders of the capabilities beyond the core (each ``None`` when its option is off).

- intervals (``intervals=B``): the ``metrics``, ``disparities``, ``criteria`` and
  ``between_groups`` sections replaced by the same tables with the interval columns
  (:mod:`polars_fairmetrics.report.intervals`, from the one count table: no second scan);
- ensemble stability (``models=[...]``): ``stability`` and ``stability_distribution``, from
  :mod:`polars_fairmetrics.ensemble` (one more scan, every attribute in one ``collect_all``);
- curves (``y_score=``, unless ``curves=False``): ``curve_summaries`` and ``curves``, from a
  grid curve table (:func:`~polars_fairmetrics.curve_counts`, one more scan for every
  attribute);
- deployment (``deploy_positive_rate=``): ``deployment``, computed with the other tables from
  the count table.
"""

from __future__ import annotations

from typing import cast

import polars as pl

from polars_fairmetrics._validate import threshold_grid
from polars_fairmetrics.counts import confusion_counts, count_columns
from polars_fairmetrics.figures import label_stability_values
from polars_fairmetrics.metrics import safe_div
from polars_fairmetrics.report.intervals import (
    MAX_REPLICATE_ROWS,
    add_intervals,
    interval_note,
    withhold,
)
from polars_fairmetrics.report.model import Section
from polars_fairmetrics.report.options import (
    DEPLOYMENT_AUDIT_METRICS,
    STABILITY_METRICS,
)
from polars_fairmetrics.report.sections import AuditContext, SectionBuilder, left_out_note
from polars_fairmetrics.report.tables import attribute_order, roll_up
from polars_fairmetrics.results import finish, from_wide

__all__ = [
    "CURVE_MIN_CLASS",
    "CURVE_PR_MIN_POSITIVES",
    "EXTENSION_BUILDERS",
    "STABILITY_MAX_MEAN_SKEW",
    "stability_skewness",
    "withhold_curve_intervals",
    "withhold_stability_intervals",
]

STABILITY_MAX_MEAN_SKEW = 0.1
r"""Largest skewness of a group mean, :math:`\max(|\gamma|, 1) / \sqrt{n}` (:math:`\gamma`: the
per-row values' skewness, :math:`n`: rows with a value), for which the ensemble means get
intervals (the one-term Edgeworth correction of the mean's distribution is
:math:`\gamma / (6\sqrt{n})`); above, the row bootstrap under-covers (86-93 % at nominal 95 %
in ``docs/coverage.md``: groups of ≈ 30 rows, rare disagreements between the models)."""

CURVE_PR_MIN_POSITIVES = 100
"""Fewest positives (counted rows) a group needs for intervals of its precision-recall summaries
(average precision, AUPR): below, at a low base rate, they under-cover (91 % at nominal 95 %
with 30-40 positives at a 1 % base rate in ``docs/coverage.md``; 94 % with ≈ 100 at 5 %)."""

CURVE_MIN_CLASS = 30
"""Fewest positives and fewest negatives (counted rows) a group needs for intervals of its curve
summaries: below, the percentile and BCa intervals of ROC AUC, average precision and AUPR
under-cover (90-93 % at nominal 95 % in ``docs/coverage.md``: groups of ≈ 30 rows, or ≈ 25
positives)."""


def _lead(ctx: AuditContext) -> list[str]:
    return [*(["attribute"] if ctx.spec.separate else []), *ctx.spec.keys]


# ---------------------------------------------------------------------------------------------
# Intervals
# ---------------------------------------------------------------------------------------------


def _interval_tables(ctx: AuditContext) -> dict[str, pl.DataFrame] | None:
    if ctx.options.intervals is None:
        return None
    if "intervals" not in ctx.cache:
        ctx.cache["intervals"] = add_intervals(
            ctx.tables, ctx.counts, ctx.spec, ctx.options, ctx.progress
        )
    return cast("dict[str, pl.DataFrame]", ctx.cache["intervals"])


def _with_intervals(name: str) -> SectionBuilder:
    def build(ctx: AuditContext) -> Section | None:
        tables = _interval_tables(ctx)
        if tables is None or name not in ctx.sections:
            return None
        notes = interval_note(ctx.options, {name: tables[name]})
        return ctx.sections[name].replace(tables[name], notes)

    build.__name__ = f"_{name}_intervals"
    return build


# ---------------------------------------------------------------------------------------------
# Ensemble stability
# ---------------------------------------------------------------------------------------------


def _keyed(frame: pl.LazyFrame, ctx: AuditContext, attribute: str) -> pl.LazyFrame:
    """An attribute's table in the report's layout: ``attribute`` and every key column."""
    if not ctx.spec.separate:
        return frame
    others = [
        pl.lit(None, dtype=ctx.counts.schema[k]).alias(k) for k in ctx.spec.keys if k != attribute
    ]
    return frame.with_columns(pl.lit(attribute).alias("attribute"), *others)


def _stability_frames(ctx: AuditContext) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """Per-group ensemble means and the label-stability histogram (one ``collect_all``)."""
    models = ctx.options.models
    if not models:
        return None
    if "stability" in ctx.cache:
        return cast("tuple[pl.DataFrame, pl.DataFrame]", ctx.cache["stability"])
    ctx.step(f"ensemble stability over {len(models)} models")
    # the ensemble module (NumPy) is imported when asked for, not with the package
    from polars_fairmetrics.ensemble import ensemble_group_metrics, ensemble_sample_metrics

    lead = _lead(ctx)
    means: list[pl.LazyFrame] = []
    hists: list[pl.LazyFrame] = []
    rows = ensemble_sample_metrics(
        ctx.data, models=list(models), keep=list(ctx.spec.keys), metrics="label_stability"
    )
    for attribute in ctx.spec.attributes:
        keys = list(ctx.spec.keys_of(attribute))
        table = ensemble_group_metrics(
            ctx.data,
            models=list(models),
            by=keys,
            metrics=list(STABILITY_METRICS),
            confusion_metrics=[],
            weight=ctx.options.weight,
        )
        means.append(_keyed(table, ctx, attribute).select(*lead, "metric", "value", "n", "n_null"))
        hist = (
            rows.filter(pl.col("label_stability").is_not_null())
            .group_by(*keys, "n_models", "label_stability")
            .agg(pl.len().cast(pl.Int64).alias("count"))
        )
        hists.append(
            _keyed(hist, ctx, attribute).select(*lead, "n_models", "label_stability", "count")
        )
    done = pl.collect_all([*means, *hists])
    mean_table = attribute_order(
        finish(pl.concat(done[: len(means)]), keys=list(ctx.spec.keys), order=STABILITY_METRICS),
        ctx.spec,
    )
    counted = pl.concat(done[len(means) :])
    # one bin per value label stability can take with the models that predicted a row
    # (|2k - m| / m): every value of every group, zeros included, and no bin empty by
    # construction (the figure's bins: polars_fairmetrics.figures.label_stability_values)
    values = label_stability_values(
        sorted(int(m) for m in counted["n_models"].unique().drop_nulls().to_list()) or [len(models)]
    )
    index = {round(v, 9): v for v in values}
    counted = (
        counted.with_columns(
            pl.col("label_stability")
            .round(9)
            .replace_strict(index, default=None, return_dtype=pl.Float64)
            .alias("value")
        )
        .group_by(*lead, "value")
        .agg(pl.col("count").sum())
    )
    groups = mean_table.select(lead).unique(maintain_order=True)
    grid = groups.join(pl.DataFrame({"value": values}, schema={"value": pl.Float64}), how="cross")
    hist_table = (
        grid.join(counted, on=[*lead, "value"], how="left", nulls_equal=True, maintain_order="left")
        .select(
            *lead,
            pl.lit("label_stability").alias("metric"),
            "value",
            pl.col("count").fill_null(0),
        )
        .with_columns(
            safe_div(pl.col("count"), pl.col("count").sum().over(lead)).alias("share"),
        )
    )
    ctx.cache["stability"] = (mean_table, hist_table)
    return mean_table, hist_table


def _stability(ctx: AuditContext) -> Section | None:
    frames = _stability_frames(ctx)
    if frames is None:
        return None
    table = frames[0]
    models = ctx.options.models or ()
    notes = []
    if ctx.options.intervals is not None:
        table, interval_notes = _stability_intervals(ctx, table)
        notes += interval_notes
    n_undef = table["value"].null_count()
    if n_undef:
        notes.append(f"{n_undef} value(s) undefined (e.g. jitter with one model predicting).")
    return Section(
        "stability",
        "Ensemble stability and uncertainty",
        f"Per-group means over the rows of per-row ensemble metrics from {len(models)} models "
        f"({', '.join(models[:3])}{', …' if len(models) > 3 else ''}): label stability "
        "|k − (m − k)| / m (1 = every model agrees), jitter (share of model pairs that "
        "disagree), standard deviation of the probabilities, aleatoric (mean entropy), overall "
        "(entropy of the mean) and epistemic (their difference) uncertainty in bits; n = rows "
        "with a defined value, n_null = rows without any model's probability.",
        table,
        tuple(notes),
        ctx.spec.keys,
    )


def _stability_intervals(ctx: AuditContext, table: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """Intervals of the per-group ensemble means: the per-row metrics are rows, so each group's
    rows are resampled (in memory, group sizes fixed) and the means recomputed."""
    from polars_fairmetrics.bootstrap import replicate_group_means, with_intervals
    from polars_fairmetrics.ensemble import ensemble_sample_metrics

    opts = ctx.options
    n_boot = int(opts.intervals or 0)
    weight = opts.weight
    keep = [*ctx.spec.keys, *([weight] if weight is not None else [])]
    rows = ensemble_sample_metrics(
        ctx.data, models=list(opts.models or ()), keep=keep, metrics=list(STABILITY_METRICS)
    ).collect(engine=opts.engine)
    if weight is not None:  # rows without a weight count nowhere, as in the point estimates
        rows = rows.filter(pl.col(weight).is_not_null())
    parts = []
    shapes = []
    for attribute in ctx.spec.attributes:
        keys = list(ctx.spec.keys_of(attribute))
        shapes.append(_keyed(stability_skewness(rows, keys, weight), ctx, attribute))
        reps = replicate_group_means(
            rows,
            by=keys,
            values=list(STABILITY_METRICS),
            weight=weight,
            n_resamples=n_boot,
            seed=opts.seed,
            attribute=attribute if ctx.spec.separate else None,
        )
        parts.append(_keyed(reps.lazy(), ctx, attribute))
    lead = _lead(ctx)
    done = pl.collect_all([*parts, *shapes])
    replicates = pl.concat(
        [p.select(*lead, "replicate", "metric", "value") for p in done[: len(parts)]]
    )
    shape_cols = ["skewness", *(["ess"] if weight is not None else [])]
    skewness = pl.concat([p.select(*lead, "metric", *shape_cols) for p in done[len(parts) :]])
    method = "percentile" if opts.ci_method == "bca" else opts.ci_method
    out = attribute_order(
        with_intervals(
            table, replicates, method=method, level=float(opts.ci_level), n_resamples=n_boot
        ),
        ctx.spec,
    )
    out = withhold_stability_intervals(out, skewness, lead)
    notes = [
        f"[ci_low, ci_high]: {float(opts.ci_level):.0%} bootstrap intervals ({method}) from "
        f"{n_boot} resamples of each group's rows (the per-row ensemble metrics are resampled "
        f"as rows, group sizes fixed; random seed {opts.seed})"
        + (
            "; BCa has no cheap jackknife here: percentile instead."
            if method != opts.ci_method
            else "."
        )
    ]
    return out, notes


def stability_skewness(
    rows: pl.DataFrame, keys: list[str], weight: str | None = None
) -> pl.LazyFrame:
    """Each group's sample skewness γ of each per-row ensemble metric (``keys``, ``metric``,
    ``skewness``; rows unweighted) and, with ``weight``, ``ess``: the Kish effective size
    (Σw)² / Σw² of its rows with a value (infinite where their weights are all equal: then the
    weighted bootstrap is the unweighted one)."""
    names = list(STABILITY_METRICS)
    out = (
        rows.lazy()
        .group_by(keys)
        .agg([pl.col(v).cast(pl.Float64).skew().alias(v) for v in names])
        .unpivot(index=keys, on=names, variable_name="metric", value_name="skewness")
    )
    if weight is None:
        return out

    def kish(v: str) -> pl.Expr:
        w = pl.col(weight).cast(pl.Float64).filter(pl.col(v).is_not_null())
        ess = w.sum() ** 2 / (w * w).sum()
        equal = w.min() == w.max()
        return pl.when(equal).then(float("inf")).otherwise(ess).alias(v)

    sizes = (
        rows.lazy()
        .group_by(keys)
        .agg([kish(v) for v in names])
        .unpivot(index=keys, on=names, variable_name="metric", value_name="ess")
    )
    return out.join(sizes, on=[*keys, "metric"], how="left", nulls_equal=True)


def withhold_stability_intervals(
    with_ci: pl.DataFrame, skewness: pl.DataFrame, on: list[str]
) -> pl.DataFrame:
    r"""The ensemble means' intervals, null (with the reason in ``ci_note``) where the group
    mean is too skewed for the row bootstrap: the mean's skewness
    :math:`\max(|\gamma|, 1) / \sqrt{n}` above :data:`STABILITY_MAX_MEAN_SKEW`, with
    :math:`\gamma` the per-row values' sample skewness in the group (``skewness``, keyed by
    ``on`` and ``metric``) and :math:`n` the rows with a value. Floored at 1, it withholds
    every group of fewer than 100 rows; a large :math:`|\gamma|` (rare disagreements between
    the models, entropies near 0) asks for more. The coverage study (``docs/coverage.md``)
    found these intervals below 93 % at nominal 95 % with groups of ≈ 30 rows (88-93 %) and
    with rare disagreements (γ ≈ 4-16 on 1000 rows: 86-92 %)."""
    joined = with_ci.join(
        skewness.select(*on, "metric", "skewness", *(["ess"] if "ess" in skewness.columns else [])),
        on=[*on, "metric"],
        how="left",
        nulls_equal=True,
        maintain_order="left",
    )
    gamma = pl.max_horizontal(pl.col("skewness").abs().fill_nan(None).fill_null(1.0), pl.lit(1.0))
    mean_skew = gamma / pl.col("n").cast(pl.Float64).sqrt()
    too_skewed = (pl.col("ci_low").is_not_null() & (mean_skew > STABILITY_MAX_MEAN_SKEW)).fill_null(
        False
    )
    note = pl.format(
        "the group mean is too skewed for the row bootstrap (max(|skewness|, 1) / sqrt(n) = "
        "{} > {}; n = {}): its intervals under-cover there (86-93 % at nominal 95 % in the "
        "coverage study)",
        mean_skew.round(3),
        pl.lit(STABILITY_MAX_MEAN_SKEW),
        pl.col("n"),
    )
    out = withhold(joined, too_skewed, note).drop("skewness")
    if "ess" not in out.columns:
        return out
    # weighted rows: the effective-size rule of every weighted interval (bootstrap.py)
    from polars_fairmetrics.bootstrap import LOW_ESS_NOTE, WEIGHTED_MIN_ESS

    low_ess = (pl.col("ci_low").is_not_null() & (pl.col("ess") < WEIGHTED_MIN_ESS)).fill_null(False)
    ess_note = pl.format(LOW_ESS_NOTE, pl.col("ess").round(0).cast(pl.Int64))
    return withhold(out, low_ess, ess_note).drop("ess")


def _stability_distribution(ctx: AuditContext) -> Section | None:
    frames = _stability_frames(ctx)
    if frames is None:
        return None
    return Section(
        "stability_distribution",
        "Label stability distribution",
        "Rows per group at each value per-row label stability can take, |2k − m| / m for m "
        "models of which k vote 1 (value), and their share of the group's rows with a "
        "defined value.",
        frames[1],
        (),
        ctx.spec.keys,
    )


# ---------------------------------------------------------------------------------------------
# Curves
# ---------------------------------------------------------------------------------------------


def _curve_table(ctx: AuditContext) -> pl.DataFrame | None:
    """The grid curve table per attribute and group: one scan for every attribute (the table
    of all ``by`` columns, rolled up per attribute as the count table is)."""
    opts = ctx.options
    if not opts.with_curves or opts.y_score is None:
        return None
    if "curves" in ctx.cache:
        return cast(pl.DataFrame, ctx.cache["curves"])
    ctx.step(f"curves on a grid of {opts.curve_grid + 1} thresholds")
    # the curves module (NumPy) is imported when asked for, not with the package
    from polars_fairmetrics.curves import curve_counts

    if opts.weight is not None and opts.intervals is not None:
        # the same grid table by the count scan, with the per-cell sums of squared weights the
        # bootstrap resamples weighted sums from (thresholds: the one grid of counts and curves)
        inter = confusion_counts(
            ctx.data,
            y_true=opts.y_true,
            y_score=opts.y_score,
            threshold=threshold_grid(opts.curve_grid, opts.score_bounds),
            by=list(ctx.spec.keys),
            weight=opts.weight,
            pos_label=opts.pos_label,
            neg_label=opts.neg_label,
            score_bounds=opts.score_bounds,
            weight_squares=True,
        )
    else:
        inter = curve_counts(
            ctx.data,
            y_true=opts.y_true,
            y_score=opts.y_score,
            by=list(ctx.spec.keys),
            weight=opts.weight,
            pos_label=opts.pos_label,
            neg_label=opts.neg_label,
            mode="grid",
            bins=opts.curve_grid,
            score_bounds=opts.score_bounds,
        )
    lead = _lead(ctx)
    sums = count_columns(inter.collect_schema().names())
    table = (
        roll_up(inter, ctx.spec)
        .sort([*lead, "threshold"], descending=[False] * len(lead) + [True], nulls_last=True)
        .select(*lead, "threshold", *sums)
        .collect(engine=opts.engine)
    )
    table = attribute_order(table, ctx.spec)
    ctx.cache["curves"] = table
    return table


def _curve_note(ctx: AuditContext) -> str:
    bins = ctx.options.curve_grid
    return (
        f"From counts on a grid of {bins + 1} thresholds ({bins} equal steps over the score "
        "bounds; curve_bins), the same for every group: the counts at the grid thresholds "
        "are exact, the summaries approximate those of the exact curves (one extra scan "
        "of the rows)."
    )


_SUMMARIES = ("roc_auc", "average_precision", "aupr")


def _long_summaries(table: pl.DataFrame, lead: list[str]) -> pl.DataFrame:
    """Curve summaries in the group-values layout (``metric``, ``value``) whatever the curves
    module returns."""
    if "metric" in table.columns:
        return table.select(*lead, "metric", "value")
    names = [s for s in _SUMMARIES if s in table.columns]
    return from_wide(table.select(*lead, *names), quantities=names, fields=())


def _curve_summaries(ctx: AuditContext) -> Section | None:
    table = _curve_table(ctx)
    if table is None:
        return None
    from polars_fairmetrics.curves import curve_summaries  # imported with the curve table

    lead = _lead(ctx)
    summaries = _long_summaries(curve_summaries(table, aupr_mode="trapezoid"), lead)
    names = list(dict.fromkeys(summaries["metric"].to_list())) or list(_SUMMARIES)
    # every group of the count table, with its counted and left-out rows (a group whose labels
    # are all null has no curve: its summaries are null, it does not disappear)
    sizes = ["n", "n_null", *(["n_w"] if "n_w" in ctx.counts.columns else [])]
    groups = ctx.counts.select(*lead, *sizes).join(pl.DataFrame({"metric": names}), how="cross")
    out = groups.join(summaries, on=[*lead, "metric"], how="left", nulls_equal=True)
    out = attribute_order(
        finish(
            out.select(*lead, "metric", "value", *sizes),
            keys=list(ctx.spec.keys),
            order=names,
        ),
        ctx.spec,
    )
    notes = [_curve_note(ctx)]
    if ctx.options.intervals is not None:
        out, interval_notes = _curve_intervals(ctx, table, out, lead)
        notes += interval_notes
    n_undef = out.filter(pl.col("metric") == "roc_auc")["value"].null_count()
    if n_undef:
        notes.append(
            f"{n_undef} group(s) have one class only (or no counted rows): ROC AUC is "
            "undefined there, and AP / AUPR too without positives."
        )
    notes += left_out_note(ctx.counts)
    return Section(
        "curve_summaries",
        "Curve summaries",
        "Per group: ROC AUC (trapezoid over the ROC points, from (0, 0) to (1, 1)), average "
        "precision (Σ (R_i − R_{i−1}) P_i) and AUPR (trapezoid rule from (recall 0, precision "
        "1)); null for a group with one class only.",
        out,
        tuple(notes),
        ctx.spec.keys,
    )


def _curve_intervals(
    ctx: AuditContext, table: pl.DataFrame, out: pl.DataFrame, lead: list[str]
) -> tuple[pl.DataFrame, list[str]]:
    """Bootstrap intervals of the curve summaries from the grid curve table: its cells (group ×
    score bin × label) are resampled exactly like the count table's, and the summaries of every
    replicate are those of the same function (no second scan)."""
    opts = ctx.options
    from polars_fairmetrics.bootstrap import resample_counts, with_intervals
    from polars_fairmetrics.curves import curve_summaries

    n_boot = int(opts.intervals or 0)
    rows = (n_boot + 1) * max(table.height, 1)
    if rows > MAX_REPLICATE_ROWS:
        return out, [
            f"No intervals on the curve summaries: {n_boot} resamples of the {table.height}-row "
            f"curve table would build {rows:,} rows (at most {MAX_REPLICATE_ROWS:,}); use fewer "
            "curve_bins or resamples."
        ]
    bca = opts.ci_method == "bca"
    reps = resample_counts(table, n_resamples=n_boot, seed=opts.seed, jackknife=bca)
    replicate = _long_summaries(curve_summaries(reps, aupr_mode="trapezoid"), [*lead, "replicate"])
    with_ci = with_intervals(
        out,
        replicate,
        method=opts.ci_method,
        level=float(opts.ci_level),
        n_resamples=n_boot,
        counts=table,
    )
    with_ci = withhold_curve_intervals(with_ci, table, lead, opts.ci_method)
    return with_ci, interval_note(opts, {"curve_summaries": with_ci})


def withhold_curve_intervals(
    with_ci: pl.DataFrame, table: pl.DataFrame, lead: list[str], method: str
) -> pl.DataFrame:
    """The curve summaries' intervals, null (with the reason in ``ci_note``) where the coverage
    study (``docs/coverage.md``) found them below 93 % at nominal 95 %:

    - *basic* intervals, whatever the group: the summaries (average precision above all) are
      biased in samples and skewed near 1, and the basic interval reflects the resamples
      around the estimate the wrong way (76-92 % up to ≈ 150 positives per group);
    - a group with fewer than :data:`CURVE_MIN_CLASS` positives or negatives (counted rows of
      the grid curve table: ``tp + fn`` and ``fp + tn``), whatever the method;
    - average precision and AUPR of a group with fewer than :data:`CURVE_PR_MIN_POSITIVES`
      positives, whatever the method.

    ``table``: the grid curve table (``lead``, ``threshold`` and the counts); ``with_ci``: the
    summaries with the interval columns of :func:`~polars_fairmetrics.bootstrap.with_intervals`.
    """
    classes = table.group_by(lead, maintain_order=True).agg(
        (pl.col("tp") + pl.col("fn")).first().cast(pl.Int64).alias("_pos"),
        (pl.col("fp") + pl.col("tn")).first().cast(pl.Int64).alias("_neg"),
    )
    joined = with_ci.join(classes, on=lead, how="left", nulls_equal=True, maintain_order="left")
    given = pl.col("ci_low").is_not_null()
    few = pl.min_horizontal("_pos", "_neg") < CURVE_MIN_CLASS
    if method == "basic":
        note: pl.Expr = pl.lit(
            "basic intervals of curve summaries under-cover (76-92 % at nominal 95 % up to "
            "≈ 150 positives per group in the coverage study): use ci_method='percentile' or "
            "'bca'"
        )
        withheld = given
    else:
        note = pl.format(
            "fewer than {} positives or negatives in the group (positives {}, negatives {}): "
            "curve-summary intervals under-cover there (90-93 % at nominal 95 % in the "
            "coverage study)",
            pl.lit(CURVE_MIN_CLASS),
            pl.col("_pos"),
            pl.col("_neg"),
        )
        pr = pl.col("metric").is_in(["average_precision", "aupr"]) & (
            pl.col("_pos") < CURVE_PR_MIN_POSITIVES
        )
        pr_note = pl.format(
            "fewer than {} positives in the group (positives {}): precision-recall summary "
            "intervals under-cover there (91 % at nominal 95 % with 30-40 positives at a 1 % "
            "base rate in the coverage study)",
            pl.lit(CURVE_PR_MIN_POSITIVES),
            pl.col("_pos"),
        )
        note = pl.when(few).then(note).otherwise(pr_note)
        withheld = given & (few | pr).fill_null(False)
    return withhold(joined, withheld, note).drop("_pos", "_neg")


def _curves(ctx: AuditContext) -> Section | None:
    table = _curve_table(ctx)
    if table is None:
        return None
    from polars_fairmetrics.curves import pr_curve, roc_curve  # imported with the curve table

    on = [*_lead(ctx), "threshold"]
    roc = roc_curve(table)
    pr = pr_curve(table)
    points = roc.join(pr, on=on, how="left", nulls_equal=True, maintain_order="left")
    return Section(
        "curves",
        "ROC and precision-recall curves",
        "Per group and grid threshold t (predict positive when score ≥ t): fpr, tpr (ROC) and "
        "precision, recall (PR); threshold +inf is the start of both curves (nothing "
        "predicted positive). Kept small on a grid (curve_bins); use curves.roc_curve / "
        "pr_curve on the rows for the exact curves.",
        attribute_order(points, ctx.spec),
        (_curve_note(ctx),),
        ctx.spec.keys,
    )


# ---------------------------------------------------------------------------------------------
# Deployment
# ---------------------------------------------------------------------------------------------


def _deployment(ctx: AuditContext) -> Section | None:
    rate = ctx.options.deploy_positive_rate
    if rate is None or "deployment" not in ctx.tables:
        return None
    table = ctx.tables["deployment"]
    factor = table["deploy_factor"].drop_nulls()
    k = f" (k = {float(factor[0]):.4g})" if factor.len() else ""
    names = ", ".join(m.replace("_", " ") for m in DEPLOYMENT_AUDIT_METRICS)
    return Section(
        "deployment",
        "Deployment class ratio",
        f"{names} at a deployment positive rate of {float(rate):g} (value) beside the test "
        "value (test_value): the negatives are scaled by one factor k = (neg/pos in "
        "deployment) / (neg/pos in test), measured over all the audited rows; recall and FPR "
        "are unchanged.",
        table,
        (
            "Assumption: each class behaves in deployment as in the test data (the "
            "class-conditional score distributions, hence TPR and FPR, are unchanged); only the "
            f"class ratio changes, by one factor from the overall test ratio{k}, the same for "
            "every group (the groups' base-rate differences are kept).",
            *left_out_note(ctx.counts),
        ),
        ctx.spec.keys,
    )


EXTENSION_BUILDERS: tuple[SectionBuilder, ...] = (
    _with_intervals("metrics"),
    _with_intervals("disparities"),
    _with_intervals("criteria"),
    _with_intervals("between_groups"),
    _stability,
    _stability_distribution,
    _curve_summaries,
    _curves,
    _deployment,
    _with_intervals("deployment"),
)
"""Builders of the capabilities beyond the core, run after the core builders (each returns
``None`` when its option is off)."""
