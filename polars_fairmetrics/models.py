r"""Several models side by side, with paired bootstrap intervals of their differences.

fairlearn compares models with one ``MetricFrame`` per model, aequitas with a ``model_id``
column, Virny with a models configuration. Here several prediction columns of the same rows
are counted in **one scan** into a *joint* count table: one cell per group, true label and
combination of the :math:`M` models' predictions (at most :math:`2^M` per group and label).
Each model's confusion counts are sums of joint cells (a marginal), so every model is measured
on exactly the same rows, and the per-model metrics and disparities come from the one disparity
engine (:func:`~polars_fairmetrics.disparities`) with ``model`` as a partition.

**Paired intervals.** Resampling rows resamples the joint cells:
:math:`c^* \sim \mathrm{Multinomial}(N, c/N)` over the joint cells is exactly the row bootstrap
(:func:`~polars_fairmetrics.resample_counts`, whose draws, weights, strata and seed are reused
as they are). Every replicate is then marginalised to every model, so model A's and model B's
replicate disparities come from the same resampled rows and the interval of their difference
accounts for the correlation between the models — narrower than two independent intervals
when the models agree on most rows.

Rows where the label, the weight or *any* model's prediction is null are left out of every
model (a paired comparison needs the same rows) and counted in ``n_null``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import polars as pl

from polars_fairmetrics._typing import ColumnNames, FrameT, Label
from polars_fairmetrics._validate import (
    LabelSpec,
    as_list,
    check_reserved,
    raise_bad_weight,
    require_columns,
    require_numeric,
    resolve_label_spec,
    schema_of,
    weight_checks,
    weights_invalid,
)
from polars_fairmetrics.bootstrap import (
    DEFAULT_SEED,
    REPLICATE,
    Method,
    _attach,
    _check_level,
    _check_method,
    _check_resamples,
    _check_seed,
    _effective_sizes,
    _jackknife_weights,
    _resample,
    _table_layout,
)
from polars_fairmetrics.counts import COUNT_COLUMNS, WEIGHTED_COUNT_COLUMNS
from polars_fairmetrics.disparity import Reference, ZeroReference, disparities
from polars_fairmetrics.exceptions import InconsistentInputError, InvalidOptionError
from polars_fairmetrics.inputs import accepts_tables
from polars_fairmetrics.metrics import _metric_names
from polars_fairmetrics.results import RESERVED, finish

__all__ = ["MAX_MODELS", "compare_models", "compare_models_long", "joint_counts"]

MAX_MODELS = 10
"""Most models :func:`compare_models` compares at once: the joint count table has up to
:math:`2^M` cells per group and label, and every bootstrap replicate draws all of them."""

GAP_TOLERANCE = 1e-12
"""A difference between two models' disparities smaller than this (relative to their size) is
floating-point summation order, and is 0."""

MODEL = "model"
_YT = "_pfm_y_true"
_N = "_pfm_n"
_W = "_pfm_w"
_W2 = "_pfm_w2"
_ESS = "_pfm_ess"
_WMIN = "_pfm_w_min"
_WNULL = "_pfm_w_null"
_BASE = ("tp", "fp", "tn", "fn")
_GAP_COLUMNS = ("model_difference", "model_difference_ci_low", "model_difference_ci_high")


def _pred(i: int) -> str:
    return f"_pfm_pred{i}"


def _joint(i: int) -> str:
    """Joint-table key of model ``i`` (≥ 1): its prediction. Model 0's prediction is the
    ``tp fp tn fn`` split of the cell, so the table is a count table of model 0."""
    return f"_pfm_joint{i}"


def _model_names(predictions: Sequence[str] | Mapping[str, str]) -> tuple[list[str], list[str]]:
    """Model names and their prediction columns, validated."""
    if isinstance(predictions, str):
        raise InvalidOptionError(
            f"predictions={predictions!r}: pass a list of prediction columns or a mapping "
            "{model name: prediction column}"
        )
    if isinstance(predictions, Mapping):
        names = [str(k) for k in predictions]
        columns = [predictions[k] for k in predictions]
    else:
        columns = list(predictions)
        names = [str(c) for c in columns]
    for c in columns:
        if not isinstance(c, str):
            raise InvalidOptionError(f"prediction columns must be names (strings), got {c!r}")
    if not names:
        raise InvalidOptionError("predictions= names no model")
    dup = [n for n in dict.fromkeys(names) if names.count(n) > 1]
    if dup:
        raise InvalidOptionError(f"model name {dup[0]!r} is given twice in predictions=")
    dup_cols = [c for c in dict.fromkeys(columns) if columns.count(c) > 1]
    if dup_cols:
        raise InvalidOptionError(
            f"prediction column {dup_cols[0]!r} is given for two models in predictions="
        )
    if len(names) > MAX_MODELS:
        raise InvalidOptionError(
            f"{len(names)} models: at most {MAX_MODELS} are compared at once (the joint count "
            f"table has up to 2^M cells per group and label; 2^{len(names)} = "
            f"{2 ** len(names):,}): compare fewer models, or pairs of models"
        )
    return names, columns


def _guard(
    cells: pl.DataFrame,
    *,
    keys: list[str],
    spec_true: LabelSpec,
    specs: list[LabelSpec],
    weight: str | None,
    source: pl.LazyFrame,
) -> pl.DataFrame:
    """The joint count table from the scanned cells: labels mapped (or a clear error), weights
    checked, the rows with a null anywhere gathered in ``n_null``."""
    m = len(specs)
    weighted = weight is not None

    out = cells.with_columns(
        spec_true.bool_expr(cells[_YT]),
        *[s.bool_expr(cells[_pred(i)]) for i, s in enumerate(specs)],
    )
    if weighted:
        if weights_invalid(out[_WMIN], out[_W]):
            raise_bad_weight(source, cast(str, weight))
        w_null = pl.col(_WNULL).cast(pl.Int64)
    else:
        w_null = pl.lit(0, dtype=pl.Int64)
    valid = pl.col(_YT).is_not_null()
    for i in range(m):
        valid = valid & pl.col(_pred(i)).is_not_null()
    counted = pl.col(_N).cast(pl.Int64) - w_null
    yt, p0 = pl.col(_YT), pl.col(_pred(0))
    splits = {"tp": yt & p0, "fp": ~yt & p0, "tn": ~yt & ~p0, "fn": yt & ~p0}
    cols: list[pl.Expr] = [
        pl.when(valid & cond).then(counted).otherwise(0).alias(name)
        for name, cond in splits.items()
    ]
    if weighted:
        cols += [
            pl.when(valid & cond).then(pl.col(_W)).otherwise(0.0).alias(f"{name}_w")
            for name, cond in splits.items()
        ]
        cols += [
            pl.when(valid & cond).then(pl.col(_W2)).otherwise(0.0).alias(f"{name}_w2")
            for name, cond in splits.items()
        ]
    cols.append(pl.when(valid).then(w_null).otherwise(pl.col(_N).cast(pl.Int64)).alias("n_null"))
    joint = [pl.when(valid).then(pl.col(_pred(i))).alias(_joint(i)) for i in range(1, m)]
    sums = [*_BASE, *([f"{c}_w" for c in _BASE] if weighted else [])]
    squares = [f"{c}_w2" for c in _BASE] if weighted else []
    table = (
        out.select(*[pl.col(k) for k in keys], *joint, *cols)
        .group_by([*keys, *[_joint(i) for i in range(1, m)]])
        .agg(pl.col([*sums, *squares, "n_null"]).sum())
        .with_columns(
            *[pl.col(c).cast(pl.Int64) for c in _BASE],
            *[pl.col(c).cast(pl.Float64) for c in sums[4:] + squares],
            pl.col("n_null").cast(pl.Int64),
        )
        .with_columns(pl.sum_horizontal(list(_BASE)).alias("n"))
    )
    lead = [*keys, *[_joint(i) for i in range(1, m)]]
    extra: list[pl.Expr] = []
    if weighted:
        extra.append(pl.sum_horizontal(sums[4:]).alias("n_w"))
    table = table.with_columns(extra)
    order = [*lead, *_BASE, "n", *sums[4:], *(["n_w"] if weighted else []), *squares, "n_null"]
    return table.select(order).sort(lead, nulls_last=True) if lead else table.select(order)


def _joint_schema(
    key_schema: Mapping[str, pl.DataType], m: int, weighted: bool
) -> dict[str, pl.DataType]:
    schema: dict[str, pl.DataType] = dict(key_schema)
    schema.update({_joint(i): pl.Boolean() for i in range(1, m)})
    schema.update({c: pl.Int64() for c in COUNT_COLUMNS})
    if weighted:
        schema.update({c: pl.Float64() for c in WEIGHTED_COUNT_COLUMNS})
        schema.update({f"{c}_w2": pl.Float64() for c in _BASE})
    schema["n_null"] = pl.Int64()
    return schema


@accepts_tables
def joint_counts(
    data: FrameT,
    *,
    y_true: str,
    predictions: Sequence[str] | Mapping[str, str],
    by: ColumnNames,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
) -> FrameT:
    r"""The joint count table of several models' predictions, in one scan of the rows.

    One row per group and combination of the predictions of models :math:`2..M` (keys
    ``_pfm_joint1 … _pfm_joint{M-1}``, Boolean), holding the confusion counts of model 1
    (``tp fp tn fn n``), and with ``weight`` the sums :math:`\sum w` (``tp_w …``) and
    :math:`\sum w^2` (``tp_w2 …``) per cell. Rows with a null label, weight or prediction of any
    model are in ``n_null`` (of the row whose joint keys are null). It is a count table:
    :func:`~polars_fairmetrics.resample_counts` resamples it, and every model's confusion
    counts are its marginals (:func:`compare_models`).

    Parameters
    ----------
    data
        Rows of predictions (DataFrame or LazyFrame; the result is of the same kind).
    y_true, by, weight, pos_label, neg_label
        As for :func:`~polars_fairmetrics.confusion_counts`.
    predictions
        Prediction columns (model names = column names) or ``{model name: column}``.

    Returns
    -------
    DataFrame or LazyFrame
        The ``by`` keys, the joint keys, ``tp fp tn fn n``, [``tp_w … n_w``, ``tp_w2 …``],
        ``n_null``; sorted by the keys.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b"], "y": [1, 0, 1], "p": [1, 1, 0], "q": [1, 0, 0]})
    >>> joint_counts(df, y_true="y", predictions=["p", "q"], by="g").select(
    ...     "g", "_pfm_joint1", "tp", "fp", "fn")
    shape: (3, 5)
    ┌─────┬─────────────┬─────┬─────┬─────┐
    │ g   ┆ _pfm_joint1 ┆ tp  ┆ fp  ┆ fn  │
    │ --- ┆ ---         ┆ --- ┆ --- ┆ --- │
    │ str ┆ bool        ┆ i64 ┆ i64 ┆ i64 │
    ╞═════╪═════════════╪═════╪═════╪═════╡
    │ a   ┆ false       ┆ 0   ┆ 1   ┆ 0   │
    │ a   ┆ true        ┆ 1   ┆ 0   ┆ 0   │
    │ b   ┆ false       ┆ 0   ┆ 0   ┆ 1   │
    └─────┴─────────────┴─────┴─────┴─────┘
    """
    schema = schema_of(data)
    columns: list[str] = _model_names(predictions)[1]
    keys: list[str] = as_list(by)
    if not keys:
        raise InvalidOptionError("by= names no group column")
    require_columns(schema, "y_true", [y_true])
    require_columns(schema, "group", keys)
    require_columns(schema, "y_pred", columns)
    check_reserved(keys, [*COUNT_COLUMNS, *WEIGHTED_COUNT_COLUMNS, *RESERVED])
    if weight is not None:
        require_columns(schema, "weight", [weight])
        require_numeric(schema, weight, "weight")
    spec_true = resolve_label_spec(schema, y_true, "y_true", pos_label, neg_label)
    specs = [resolve_label_spec(schema, c, "y_pred", pos_label, neg_label) for c in columns]
    source = data.lazy()
    aggs: list[pl.Expr] = [pl.len().alias(_N)]
    if weight is not None:
        wcol: pl.Expr = pl.col(weight).cast(pl.Float64)
        aggs += [
            wcol.sum().alias(_W),
            *weight_checks(wcol, minimum=_WMIN, nulls=_WNULL),
            wcol.pow(2).sum().alias(_W2),
        ]
    cells = source.group_by(
        [
            *[pl.col(k) for k in keys],
            pl.col(y_true).alias(_YT),
            *[pl.col(c).alias(_pred(i)) for i, c in enumerate(columns)],
        ]
    ).agg(aggs)
    m = len(columns)
    out_schema = _joint_schema({k: schema[k] for k in keys}, m, weight is not None)

    def guard(table: pl.DataFrame) -> pl.DataFrame:
        if table.height == 0:
            return pl.DataFrame(schema=out_schema)
        return _guard(
            table, keys=keys, spec_true=spec_true, specs=specs, weight=weight, source=source
        )

    if isinstance(data, pl.DataFrame):
        return guard(cells.collect())
    return cells.map_batches(guard, schema=out_schema)


def _marginals(table: pl.DataFrame, keys: list[str], names: list[str]) -> pl.DataFrame:
    """Every model's count table from a joint (replicate) table: ``model`` partition, the
    keys, [``replicate``], ``tp fp tn fn n`` [``tp_w … n_w``], ``n_null``."""
    weighted = "tp_w" in table.columns
    part = [REPLICATE] if REPLICATE in table.columns else []
    suffixes = ["", "_w"] if weighted else [""]
    if weighted and "tp_w2" in table.columns:  # sums of squared weights add up like weights
        suffixes.append("_w2")
    frames = []
    for i, name in enumerate(names):
        if i == 0:
            aggs = [pl.col(f"{c}{s}").sum() for s in suffixes for c in _BASE]
        else:
            pred = pl.col(_joint(i)).fill_null(False)
            aggs = []
            for s in suffixes:
                pos = pl.col(f"tp{s}") + pl.col(f"fn{s}")
                neg = pl.col(f"fp{s}") + pl.col(f"tn{s}")
                aggs += [
                    pos.filter(pred).sum().alias(f"tp{s}"),
                    neg.filter(pred).sum().alias(f"fp{s}"),
                    neg.filter(~pred).sum().alias(f"tn{s}"),
                    pos.filter(~pred).sum().alias(f"fn{s}"),
                ]
        frames.append(
            table.group_by([*keys, *part])
            .agg(*aggs, pl.col("n_null").sum())
            .with_columns(pl.lit(name, dtype=pl.String).alias(MODEL))
        )
    out = pl.concat(frames, how="vertical").with_columns(
        *[pl.col(c).cast(pl.Int64) for c in _BASE],
        pl.sum_horizontal(list(_BASE)).cast(pl.Int64).alias("n"),
        pl.col("n_null").cast(pl.Int64),
    )
    wcols = [f"{c}_w" for c in _BASE] if weighted else []
    if weighted:
        out = out.with_columns(
            *[pl.col(c).cast(pl.Float64) for c in wcols],
            pl.sum_horizontal(wcols).cast(pl.Float64).alias("n_w"),
        )
    squares = [f"{c}_w2" for c in _BASE] if "_w2" in suffixes else []
    out = out.with_columns(pl.col(squares).cast(pl.Float64))
    cols = [MODEL, *keys, *part, *_BASE, "n", *wcols, *(["n_w"] if weighted else []), "n_null"]
    return out.select(*cols, *squares)


def _gap_frame(
    table: pl.DataFrame,
    keys: list[str],
    metrics: list[str],
    baseline: str,
    *,
    wide: bool,
) -> pl.DataFrame:
    """Model A's disparity against the baseline model's (same group, metric, replicate).

    Long (``wide=False``, from the point table): keys, ``model``, ``metric``, ``reference``
    (the baseline model), ``is_reference`` (the baseline's own rows and the reference group's:
    exactly 0), ``difference`` (A's difference − the baseline's). Wide (from the replicates'
    wide disparities): per metric ``m`` the column ``m_difference`` (the gap): the wide form the
    interval engine reads.
    """
    part = [REPLICATE] if REPLICATE in table.columns else []
    on = [*keys, *part]
    if wide:
        base = table.filter(pl.col(MODEL) == baseline).select(
            *on, *[pl.col(f"{m}_difference").alias(f"_pfm_base_{m}") for m in metrics]
        )
        joined = table.join(base, on=on, how="left", nulls_equal=True)
        return joined.select(
            MODEL,
            *on,
            *[
                _gap(pl.col(f"{m}_difference"), pl.col(f"_pfm_base_{m}")).alias(f"{m}_difference")
                for m in metrics
            ],
        )
    own = table.select(MODEL, *on, "metric", "difference", "is_reference")
    base = own.filter(pl.col(MODEL) == baseline).select(
        *on, "metric", pl.col("difference").alias("_pfm_base")
    )
    return own.join(base, on=[*on, "metric"], how="left", nulls_equal=True).select(
        MODEL,
        *on,
        "metric",
        pl.lit(baseline, dtype=pl.String).alias("reference"),
        ((pl.col(MODEL) == baseline) | pl.col("is_reference").fill_null(False)).alias(
            "is_reference"
        ),
        _gap(pl.col("difference"), pl.col("_pfm_base")).alias("difference"),
    )


def _gap_effective_sizes(
    point: pl.DataFrame,
    observed: pl.DataFrame,
    gap_point: pl.DataFrame,
    keys: list[str],
    baseline: str,
) -> dict[str, Any] | None:
    """The effective sample size of each gap (weighted data): the smaller of the two
    disparities it subtracts (the model's and the baseline model's, each already the smaller of
    the group's and its reference's)."""
    sizes = _effective_sizes(point, observed, False)
    if sizes is None:
        return None
    on = [*keys, "metric"]
    own = point.select(MODEL, *on).with_columns(
        pl.Series(_ESS, sizes["difference"], dtype=pl.Float64)
    )
    base = own.filter(pl.col(MODEL) == baseline).select(*on, pl.col(_ESS).alias("_pfm_ess_b"))
    joined = gap_point.select(MODEL, *on).join(
        own, on=[MODEL, *on], how="left", nulls_equal=True, maintain_order="left"
    )
    joined = joined.join(base, on=on, how="left", nulls_equal=True, maintain_order="left")
    a = joined[_ESS].fill_null(np.nan).to_numpy()
    b = joined["_pfm_ess_b"].fill_null(np.nan).to_numpy()
    return {"difference": np.fmin(a, b)}


def _gap(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    """``a − b``, exactly 0 when they differ only by floating-point summation order (relative
    :data:`GAP_TOLERANCE`): a quantity both models share (the base rate) has a gap of 0 in every
    replicate, whatever order the weights were summed in."""
    gap = a - b
    scale = pl.max_horizontal(a.abs(), b.abs(), pl.lit(1.0))
    return pl.when(gap.abs() <= GAP_TOLERANCE * scale).then(0.0).otherwise(gap)


def _check_intervals(intervals: Any) -> None:
    if intervals is not None:
        _check_resamples(intervals, "intervals")


@accepts_tables
def compare_models(
    data: FrameT,
    *,
    y_true: str,
    predictions: Sequence[str] | Mapping[str, str],
    by: ColumnNames,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    metrics: str | Sequence[str] | None = None,
    reference: Reference = "overall",
    baseline_model: str | None = None,
    zero_reference: ZeroReference = "null",
    intervals: int | None = None,
    ci_level: float = 0.95,
    ci_method: Method = "percentile",
    seed: int | None = DEFAULT_SEED,
    stratify: bool = False,
) -> FrameT:
    r"""Several models side by side: per-model group metrics, disparities and their differences.

    For each model :math:`k` (a prediction column of the same rows), group :math:`g` and metric
    :math:`m`:

    .. math::

        v_{kg} = m(\text{counts}_{kg}),\qquad
        d_{kg} = v_{kg} - m(\text{counts}_{k,ref}),\qquad
        \Delta_{kg} = d_{kg} - d_{Bg}\ \text{(with } B = \texttt{baseline\_model)}

    computed by :func:`~polars_fairmetrics.disparities` on each model's counts, which are the
    marginals of one joint count table (:func:`joint_counts`: one scan, whatever the number of
    models). Rows with a null label, weight or prediction of *any* model are left out of every
    model (``n_null``), so the models are compared on the same rows.

    With ``intervals=B``, the joint cells are resampled :math:`B` times
    (:func:`~polars_fairmetrics.resample_counts`: exactly the row bootstrap; weights through
    their per-cell :math:`\sum w^2`) and each replicate is marginalised to every model: the
    intervals are *paired* — the interval of :math:`\Delta_{kg}` reflects that both models were
    scored on the same resampled rows. Intervals as in :func:`~polars_fairmetrics.with_intervals`
    (percentile, basic or BCa; ``seed`` default 0: reproducible). With one model the draws are
    those of :func:`~polars_fairmetrics.bootstrap_metrics` with the same seed.

    Parameters
    ----------
    data
        Rows of predictions (DataFrame or LazyFrame; the result is of the same kind).
    y_true, by, weight, pos_label, neg_label
        As for :func:`~polars_fairmetrics.confusion_counts` (labels apply to every model).
    predictions
        Prediction columns (the model names are the column names) or a mapping
        ``{model name: prediction column}``; at most :data:`MAX_MODELS`.
    metrics, reference, zero_reference
        As for :func:`~polars_fairmetrics.disparities` (the reference group is the same for
        every model).
    baseline_model
        A model name: adds ``baseline_model``, ``model_difference`` (:math:`\Delta_{kg}`, 0 on
        the baseline's own rows) and, with intervals, ``model_difference_ci_low`` /
        ``model_difference_ci_high``.
    intervals
        Number of bootstrap resamples (default ``None``: no intervals).
    ci_level, ci_method, seed, stratify
        Interval level, method (``"percentile"``, ``"basic"``, ``"bca"``), seed of the draws
        (``None``: fresh entropy), and whether to resample within each group (group sizes fixed).

    Returns
    -------
    DataFrame or LazyFrame
        The disparities table of ``docs/results.md`` with a ``model`` partition: keys,
        ``model``, ``metric``, ``value``, ``support``, ``n``, ``n_null``, [``n_w``],
        ``reference``, ``is_reference``, ``reference_value``, ``difference``, ``ratio``, the
        interval columns with ``intervals=``, and the model-difference columns with
        ``baseline_model=``. Lazy in, lazy out.

    Raises
    ------
    InvalidOptionError
        No model, a model named twice, more than :data:`MAX_MODELS` models, an unknown
        ``baseline_model``.
    ColumnNotFoundError, InvalidLabelError, InvalidWeightError
        A missing column, a prediction that is not one of the two classes, a bad weight.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pfm.load_compas().with_columns(
    ...     strict=pl.col("decile_score") >= 7, lenient=pl.col("decile_score") >= 4)
    >>> out = compare_models(df, y_true="two_year_recid", predictions=["strict", "lenient"],
    ...                      by="race", metrics="fpr", reference="Caucasian",
    ...                      baseline_model="strict", intervals=200)
    >>> out.filter(pl.col("race") == "African-American").select(
    ...     "model", "difference", "model_difference", "model_difference_ci_low",
    ...     "model_difference_ci_high").with_columns(pl.col(pl.Float64).round(3))
    shape: (2, 5)
    ┌─────────┬────────────┬──────────────────┬─────────────────────────┬──────────────────────────┐
    │ model   ┆ difference ┆ model_difference ┆ model_difference_ci_low ┆ model_difference_ci_high │
    │ ---     ┆ ---        ┆ ---              ┆ ---                     ┆ ---                      │
    │ str     ┆ f64        ┆ f64              ┆ f64                     ┆ f64                      │
    ╞═════════╪════════════╪══════════════════╪═════════════════════════╪══════════════════════════╡
    │ lenient ┆ 0.214      ┆ 0.057            ┆ 0.026                   ┆ 0.088                    │
    │ strict  ┆ 0.158      ┆ 0.0              ┆ 0.0                     ┆ 0.0                      │
    └─────────┴────────────┴──────────────────┴─────────────────────────┴──────────────────────────┘
    """
    names, _columns = _model_names(predictions)
    keys = as_list(by)
    if MODEL in keys:
        raise InvalidOptionError(
            "group column 'model' collides with the model partition of the result; rename it"
        )
    if baseline_model is not None and baseline_model not in names:
        raise InvalidOptionError(
            f"baseline_model={baseline_model!r} is not one of the models {names!r}"
        )
    _check_intervals(intervals)
    _check_seed(seed)
    _check_level(ci_level)
    _check_method(ci_method)
    if not isinstance(stratify, bool):
        raise InvalidOptionError(f"stratify must be True or False, got {stratify!r}")
    chosen = _metric_names(metrics)
    # one canonical order of the models (by name, the order of the result): the joint cells,
    # and so the bootstrap draws, do not depend on the order in which the models were given
    canonical = dict(sorted(zip(names, _columns, strict=True)))
    names = list(canonical)
    joint = joint_counts(
        data,
        y_true=y_true,
        predictions=canonical,
        by=keys,
        weight=weight,
        pos_label=pos_label,
        neg_label=neg_label,
    )

    def run(table: pl.DataFrame) -> pl.DataFrame:
        return _compare(
            table,
            keys=keys,
            names=names,
            metrics=chosen,
            reference=reference,
            baseline=baseline_model,
            zero_reference=zero_reference,
            n_resamples=intervals,
            level=float(ci_level),
            method=ci_method,
            seed=seed,
            strata=keys if stratify else [],
        )

    if isinstance(joint, pl.DataFrame):
        return run(joint)
    empty = pl.DataFrame(schema=schema_of(joint))
    return joint.map_batches(run, schema=run(empty).schema)


def _compare(
    table: pl.DataFrame,
    *,
    keys: list[str],
    names: list[str],
    metrics: list[str],
    reference: Reference,
    baseline: str | None,
    zero_reference: ZeroReference,
    n_resamples: int | None,
    level: float,
    method: Method,
    seed: int | None,
    strata: list[str],
) -> pl.DataFrame:
    """Per-model disparities (and intervals, gaps) of an eager joint count table."""

    def stat(counts: pl.DataFrame, wide: bool) -> pl.DataFrame:
        return disparities(
            counts,
            by=keys,
            metrics=metrics,
            reference=reference,
            zero_reference=zero_reference,
            wide=wide,
        )

    observed = _marginals(table, keys, names)
    point = stat(observed, False)
    if n_resamples is None:
        out = point
        if baseline is not None:
            gaps = _gap_frame(point, keys, metrics, baseline, wide=False)
            out = out.join(
                gaps.select(MODEL, *keys, "metric", pl.col("difference").alias(_GAP_COLUMNS[0])),
                on=[MODEL, *keys, "metric"],
                how="left",
                nulls_equal=True,
            ).with_columns(pl.lit(baseline, dtype=pl.String).alias("baseline_model"))
        return finish(out, keys=keys, order=metrics)
    layout = _table_layout(table.columns)
    bca = method == "bca"
    n_b = int(n_resamples)
    reps = _resample(table, layout, strata, n_b, seed, False, bca)
    model_reps = _marginals(reps, keys, names)
    jack = _jackknife_weights(table) if bca else None
    rep_wide = stat(model_reps, True)
    out = _attach(point, rep_wide, observed, method, level, n_b, jack)
    if baseline is not None:
        gap_point = _gap_frame(point, keys, metrics, baseline, wide=False)
        gap_reps = _gap_frame(rep_wide, keys, metrics, baseline, wide=True)
        sizes = _gap_effective_sizes(point, observed, gap_point, keys, baseline)
        gaps = _attach(gap_point, gap_reps, None, method, level, n_b, jack, sizes)
        out = out.join(
            gaps.select(
                MODEL,
                *keys,
                "metric",
                pl.col("difference").alias(_GAP_COLUMNS[0]),
                pl.col("difference_ci_low").alias(_GAP_COLUMNS[1]),
                pl.col("difference_ci_high").alias(_GAP_COLUMNS[2]),
                pl.col("ci_note").alias("_pfm_gap_note"),
            ),
            on=[MODEL, *keys, "metric"],
            how="left",
            nulls_equal=True,
        ).with_columns(
            pl.lit(baseline, dtype=pl.String).alias("baseline_model"),
            pl.when(
                pl.col("_pfm_gap_note").is_not_null()
                & ~pl.col("is_reference")
                & pl.col("_pfm_gap_note").ne_missing(pl.col("ci_note"))
            )
            .then(
                pl.concat_str(
                    [
                        pl.col("ci_note").fill_null(""),
                        pl.when(pl.col("ci_note").is_not_null())
                        .then(pl.lit("; "))
                        .otherwise(pl.lit("")),
                        pl.lit("model_difference: "),
                        pl.col("_pfm_gap_note"),
                    ]
                )
            )
            .otherwise(pl.col("ci_note"))
            .alias("ci_note"),
        )
        out = out.drop("_pfm_gap_note")
    return finish(out, keys=keys, order=metrics)


@accepts_tables
def compare_models_long(
    data: FrameT,
    *,
    y_true: str,
    y_pred: str,
    model: str,
    row_id: str,
    by: ColumnNames,
    models: Sequence[str],
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    metrics: str | Sequence[str] | None = None,
    reference: Reference = "overall",
    baseline_model: str | None = None,
    zero_reference: ZeroReference = "null",
    intervals: int | None = None,
    ci_level: float = 0.95,
    ci_method: Method = "percentile",
    seed: int | None = DEFAULT_SEED,
    stratify: bool = False,
) -> FrameT:
    r""":func:`compare_models` for the long layout: one record per (row, model).

    aequitas' layout (a ``model_id`` column): the records are pivoted to one row per
    ``row_id`` with one prediction column per model of ``models`` (lazily: a ``group_by`` on
    ``row_id``), then compared as by :func:`compare_models`. A row without a record for a model
    has a null prediction for it (it is left out of every model, counted in ``n_null``).

    Parameters
    ----------
    data
        Records (DataFrame or LazyFrame).
    y_pred, model, row_id
        Prediction column, model-name column and the column identifying a test row.
    models
        The model names to compare (values of ``model``), in order.
    y_true, by, weight, pos_label, neg_label, metrics, reference, baseline_model
        As for :func:`compare_models`.
    zero_reference, intervals, ci_level, ci_method, seed, stratify
        As for :func:`compare_models`.

    Raises
    ------
    InconsistentInputError
        A row whose label, group or weight differs between its records, or a (row, model) pair
        given twice (when the query runs).

    Examples
    --------
    >>> import polars as pl
    >>> recs = pl.DataFrame({"id": [1, 1, 2, 2], "m": ["a", "b", "a", "b"],
    ...                      "g": ["x", "x", "y", "y"], "y": [1, 1, 0, 0], "p": [1, 0, 1, 1]})
    >>> compare_models_long(recs, y_true="y", y_pred="p", model="m", row_id="id", by="g",
    ...                     models=["a", "b"], metrics="selection_rate").select(
    ...     "g", "model", "value").rows()
    [('x', 'a', 1.0), ('x', 'b', 0.0), ('y', 'a', 1.0), ('y', 'b', 1.0)]
    """
    schema = schema_of(data)
    keys: list[str] = as_list(by)
    require_columns(schema, "row_id", [row_id])
    require_columns(schema, "model", [model])
    require_columns(schema, "y_pred", [y_pred])
    require_columns(schema, "y_true", [y_true])
    require_columns(schema, "group", keys)
    if weight is not None:
        require_columns(schema, "weight", [weight])
    if isinstance(models, str):
        raise InvalidOptionError(f"models={models!r}: pass a list of model names")
    names = [str(m) for m in models]
    for n in names:
        if names.count(n) > 1:
            raise InvalidOptionError(f"model name {n!r} is given twice in models=")
    columns = {n: f"{y_pred}[{model}={n}]" for n in names}
    _model_names(columns)
    per_row = list(dict.fromkeys([y_true, *keys, *([weight] if weight else [])]))
    is_model = {n: pl.col(model).cast(pl.String) == n for n in names}
    wide = (
        data.lazy()
        .group_by(row_id)
        .agg(
            *[pl.col(c).first() for c in per_row],
            *[pl.col(c).n_unique().alias(f"_pfm_nu_{i}") for i, c in enumerate(per_row)],
            *[pl.col(y_pred).filter(is_model[n]).first().alias(columns[n]) for n in names],
            *[is_model[n].sum().alias(f"_pfm_count_{i}") for i, n in enumerate(names)],
        )
    )
    checks: list[str] = [f"_pfm_nu_{i}" for i in range(len(per_row))]
    counts: list[str] = [f"_pfm_count_{i}" for i in range(len(names))]

    def check(frame: pl.DataFrame) -> pl.DataFrame:
        for i, c in enumerate(per_row):
            bad = frame.filter(pl.col(checks[i]) > 1)
            if bad.height:
                raise InconsistentInputError(
                    f"row {bad[row_id][0]!r} (column {row_id!r}) has different values of column "
                    f"{c!r} in its records"
                )
        for i, n in enumerate(names):
            if frame.height and frame[counts[i]].sum() == 0:
                raise InvalidOptionError(
                    f"model {n!r} of models= has no record in column {model!r} (every row "
                    "would be left out of every model)"
                )
            bad = frame.filter(pl.col(counts[i]) > 1)
            if bad.height:
                raise InconsistentInputError(
                    f"row {bad[row_id][0]!r} (column {row_id!r}) has {bad[counts[i]][0]} records "
                    f"of model {n!r} (column {model!r})"
                )
        return frame.drop(*checks, *counts)

    def compare(rows: FrameT) -> FrameT:
        return compare_models(
            rows,
            y_true=y_true,
            predictions=columns,
            by=keys,
            weight=weight,
            pos_label=pos_label,
            neg_label=neg_label,
            metrics=metrics,
            reference=reference,
            baseline_model=baseline_model,
            zero_reference=zero_reference,
            intervals=intervals,
            ci_level=ci_level,
            ci_method=ci_method,
            seed=seed,
            stratify=stratify,
        )

    if isinstance(data, pl.DataFrame):
        return compare(check(wide.collect()))
    out_schema = {k: v for k, v in wide.collect_schema().items() if k not in (*checks, *counts)}
    return compare(wide.map_batches(check, schema=out_schema))
