r"""Weighted PR and ROC curves per group, their summaries, and threshold sweeps.

A *curve table* is a count table with a ``threshold`` column: one row per group and threshold,
thresholds descending, with the confusion counts of the rule ``score >= threshold``:
``tp, fp, tn, fn, n`` (Int64), ``tp_w … n_w`` (Float64, with a weight) and the null-row counts.
It has exactly the schema of :func:`~polars_fairmetrics.confusion_counts` with thresholds, so
:func:`~polars_fairmetrics.metrics_from_counts` evaluates any confusion metric along it (a
threshold sweep) and :func:`~polars_fairmetrics.disparities` compares groups per threshold.

It is built from **one scan** of the rows: a single ``group_by`` over (group, label, score)
aggregates counts and weights (exact mode), then a sort and cumulative sums per group on that
smaller table give the counts at every threshold — no pass per threshold.

Modes of :func:`curve_counts`:

- ``"exact"``: every distinct score of the group is a threshold (what scikit-learn's
  ``roc_curve`` / ``precision_recall_curve`` use).
- ``"grid"``: fixed thresholds (``bins`` equal steps over ``score_bounds``, or an explicit
  list). Counts at the grid thresholds are exact; curve summaries computed from the grid are
  approximations (see :func:`curve_summaries`). The thresholds are the same for every group.
- ``"quantile"``: thresholds at ``bins + 1`` quantiles of the pooled scores (unweighted,
  ``interpolation="lower"`` so thresholds are observed scores). Costs a second scan for the
  quantiles.

Summaries (one row per group, Float64; null where undefined, never NaN): ROC AUC (trapezoid over
the ROC points; tied scores get half credit, as scikit-learn), average precision (the step rule
:math:`\sum_i (R_i - R_{i-1}) P_i`, as scikit-learn), and AUPR by the trapezoid rule of the
bias-adjusted-metrics seed in three documented anchorings (``"trapezoid"``, ``"seed"``,
``"notebook"``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict, cast

import numpy as np
import polars as pl

from polars_fairmetrics._typing import ColumnNames, FrameT, IntoExpr, Label
from polars_fairmetrics._validate import (
    as_list,
    check_reserved,
    check_score_summary,
    check_weight_summary,
    require_columns,
    require_numeric,
    resolve_label_spec,
    schema_of,
    validate_thresholds,
)
from polars_fairmetrics.counts import (
    COUNT_COLUMNS,
    NULL_COLUMNS,
    WEIGHTED_COUNT_COLUMNS,
    is_weighted,
)
from polars_fairmetrics.deployment import _deploy_ratio
from polars_fairmetrics.disparity import Reference, _make_reference_guard, _reference_mask
from polars_fairmetrics.exceptions import MSG_SCORE_NAN, InvalidOptionError, InvalidScoreError
from polars_fairmetrics.metrics import (
    Counts,
    _as_expr,
    _guard,
    _label_guard,
    _row_labels,
    _weight_guard,
    false_positive_rate,
    key_columns,
    positive_predictive_value,
    safe_div,
    true_positive_rate,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "AUPR_MODES",
    "CURVE_MODES",
    "SUMMARIES",
    "CurveOptions",
    "average_precision",
    "curve_counts",
    "curve_summaries",
    "plot_curves",
    "pooled_curve",
    "pr_curve",
    "roc_auc",
    "roc_curve",
    "summary_disparities",
]

CurveMode = Literal["exact", "grid", "quantile"]
AuprMode = Literal["trapezoid", "seed", "notebook"]
CURVE_MODES: tuple[str, ...] = ("exact", "grid", "quantile")
"""Modes of :func:`curve_counts`."""
AUPR_MODES: tuple[str, ...] = ("trapezoid", "seed", "notebook")
"""Anchorings of the trapezoid AUPR (see :func:`curve_summaries`)."""
SUMMARIES: tuple[str, ...] = ("roc_auc", "average_precision", "aupr")
"""Curve summaries computed by :func:`curve_summaries`."""

NOTEBOOK_POINTS = 50
"""Grid size of the bias-adjusted-metrics notebook's AUPR."""
_RECALL_ONE = 1e-12

_YT = "_pfm_y_true"
_S = "_pfm_s"
_N = "_pfm_n"
_W = "_pfm_w"
_WNULL = "_pfm_w_null"
_WMIN = "_pfm_w_min"
_WMAX = "_pfm_w_max"
_SNAN = "_pfm_s_nan"
_SMIN = "_pfm_s_min"
_SMAX = "_pfm_s_max"
_ALL = "_pfm_all"
_P = "_pfm_pos"
_Q = "_pfm_neg"
_PW = "_pfm_pos_w"
_QW = "_pfm_neg_w"
_IDX = "_pfm_idx"
_GID = "_pfm_gid"
_TP = "_pfm_tp"
_FP = "_pfm_fp"
_TOTP = "_pfm_totp"
_TOTN = "_pfm_totn"
_BELOW = -math.inf


class CurveOptions(TypedDict, total=False):
    """Options passed on to :func:`curve_counts` when a curve function is given rows."""

    y_true: str
    y_score: str
    by: ColumnNames
    weight: str
    pos_label: Label
    neg_label: Label
    mode: CurveMode
    bins: int | Sequence[float]
    score_bounds: tuple[float, float] | None
    exact_method: Literal["aggregate", "sort"]


# --------------------------------------------------------------------------------------------
# curve tables
# --------------------------------------------------------------------------------------------


def _grid(bins: int | Sequence[float], score_bounds: tuple[float, float] | None) -> list[float]:
    if isinstance(bins, int) and not isinstance(bins, bool):
        if bins < 1:
            raise InvalidOptionError(f"bins={bins!r} must be a positive integer")
        if score_bounds is None:
            raise InvalidOptionError(
                "mode='grid' with an integer bins= needs score_bounds=(low, high); or pass the "
                "thresholds as a list"
            )
        low, high = score_bounds
        return [float(t) for t in np.linspace(low, high, bins + 1)]
    return validate_thresholds(bins, score_bounds)


def curve_counts(
    data: FrameT,
    *,
    y_true: str,
    y_score: str,
    by: ColumnNames | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    mode: CurveMode = "exact",
    bins: int | Sequence[float] = 100,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
    exact_method: Literal["aggregate", "sort"] = "aggregate",
) -> FrameT:
    r"""Confusion counts at every threshold, per group: the curve table (one scan, one sort).

    For each group :math:`g` and threshold :math:`t` (a row is predicted positive when
    :math:`s_i \ge t`):

    .. math::

        TP_g(t) = \sum_{i \in g} w_i 1[y_i = 1, s_i \ge t],\quad
        FP_g(t) = \sum_{i \in g} w_i 1[y_i = 0, s_i \ge t],\quad
        FN_g(t) = P_g - TP_g(t),\quad TN_g(t) = N_g - FP_g(t)

    computed as cumulative sums over the thresholds in descending order of the per-(group,
    score) totals (:math:`w_i = 1` for the integer columns).

    Parameters
    ----------
    data
        Rows (DataFrame or LazyFrame; the result is of the same kind).
    y_true
        True-label column (same rules as :func:`~polars_fairmetrics.confusion_counts`).
    y_score
        Score column (numeric; inside ``score_bounds`` when given).
    by
        Group column(s); ``None`` for one overall curve.
    weight
        Sample-weight column (finite, non-negative).
    pos_label, neg_label
        The classes of ``y_true``.
    mode
        ``"exact"`` (every distinct score), ``"grid"`` (``bins`` equal steps over
        ``score_bounds`` — ``bins + 1`` thresholds including both bounds — or an explicit list of
        thresholds) or ``"quantile"`` (``bins + 1`` quantiles of the pooled scores).
    bins
        Grid size or explicit thresholds (binned modes only).
    score_bounds
        Allowed score range (``None``: any finite score).
    exact_method
        How exact mode makes its one scan. ``"aggregate"`` (default): a ``group_by`` over
        (group, score) aggregates ties first, then each group's distinct scores are sorted —
        best when scores repeat (rounded, calibrated or coarse scores). ``"sort"``: each group's
        rows are sorted by score directly and cumulated (scikit-learn's algorithm) — best when
        nearly every score is distinct (raw float64 model outputs). Same result.

    Returns
    -------
    DataFrame or LazyFrame
        Group keys, ``threshold`` (Float64, descending within a group), ``tp, fp, tn, fn, n``
        (Int64), ``tp_w … n_w`` (Float64, with ``weight``), ``n_null, n_null_y_true,
        n_null_y_pred[, n_null_weight]`` (rows left out of the group; ``n_null_y_pred`` counts
        null scores). Sorted by keys, then threshold descending. In exact mode a group whose
        rows all have a null label or score has no row.

    Raises
    ------
    ColumnNotFoundError, InvalidDtypeError, InvalidOptionError
        When the query is built.
    InvalidLabelError, InvalidScoreError, InvalidWeightError
        When the query runs, naming the column and the value.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "s": [0.9, 0.8, 0.8, 0.1]})
    >>> t = pfm.curve_counts(df, y_true="y", y_score="s")
    >>> t.select("threshold", "tp", "fp", "tn", "fn").rows()
    [(0.9, 1, 0, 2, 1), (0.8, 2, 1, 1, 0), (0.1, 2, 2, 0, 0)]
    """
    if mode not in CURVE_MODES:
        raise InvalidOptionError(f"mode={mode!r}; expected one of {CURVE_MODES}")
    if exact_method not in ("aggregate", "sort"):
        raise InvalidOptionError(
            f"exact_method={exact_method!r}; expected 'aggregate' or 'sort'")
    schema = schema_of(data)
    keys = as_list(by)
    require_columns(schema, "y_true", [y_true])
    require_columns(schema, "y_score", [y_score])
    require_columns(schema, "group", keys)
    require_numeric(schema, y_score, "y_score")
    if weight is not None:
        require_columns(schema, "weight", [weight])
        require_numeric(schema, weight, "weight")
    check_reserved(keys, [*COUNT_COLUMNS, *WEIGHTED_COUNT_COLUMNS, *NULL_COLUMNS, "threshold",
                          "metric", "value"])
    spec = resolve_label_spec(schema, y_true, "y_true", pos_label, neg_label)
    lf = data.lazy()
    gkeys = keys if keys else [_ALL]
    key_exprs: list[pl.Expr] = (
        [pl.col(k) for k in keys] if keys else [pl.lit(0, dtype=pl.Int32).alias(_ALL)])
    s = pl.col(y_score).cast(pl.Float64)
    thr_frame: pl.LazyFrame | None = None
    if mode == "exact":
        bin_expr = s.alias(_S)
    elif mode == "grid":
        grid = _grid(bins, score_bounds)
        thr = pl.Series(grid, dtype=pl.Float64)
        bin_expr = (
            pl.when(s.is_not_null())
            .then(pl.lit(thr).search_sorted(s, side="right").cast(pl.Float64))
            .alias(_S)
        )
        thr_frame = pl.LazyFrame({_IDX: [float(i + 1) for i in range(len(grid))],
                                  "threshold": grid})
    else:
        if not isinstance(bins, int) or isinstance(bins, bool) or bins < 1:
            raise InvalidOptionError(f"mode='quantile' needs an integer bins >= 1, got {bins!r}")
        levels = [j / bins for j in range(bins + 1)]
        qnames = [f"_pfm_q{j}" for j in range(bins + 1)]
        finite = s.filter(s.is_not_nan())
        quant = lf.select([finite.quantile(q, interpolation="lower").alias(nm)
                           for q, nm in zip(levels, qnames, strict=True)])
        lf = lf.join(quant, how="cross")
        bin_expr = (
            pl.when(s.is_not_null())
            .then(pl.sum_horizontal([(s >= pl.col(nm)).cast(pl.Int64) for nm in qnames])
                  .cast(pl.Float64))
            .alias(_S)
        )
        thr_frame = (
            quant.unpivot(on=qnames, variable_name="_pfm_qn", value_name="threshold")
            .with_columns(
                (pl.col("_pfm_qn").str.strip_prefix("_pfm_q").cast(pl.Int64) + 1)
                .cast(pl.Float64).alias(_IDX)
            )
            .drop("_pfm_qn")
        )
    weighted = weight is not None
    if mode == "exact" and exact_method == "sort":
        table = _exact_by_sort(lf, keys, key_exprs, schema, spec, y_true, y_score, weight,
                               score_bounds)
        if not keys:
            table = table.drop(_ALL)
        return table.collect() if isinstance(data, pl.DataFrame) else table
    cells = lf.group_by([*key_exprs, bin_expr]).agg(
        _cell_aggs(pl.col(y_true), schema[y_true], spec.pos, spec.neg, weight, s,
                   mode != "exact")
    )
    out_schema = _cell_schema({k: schema[k] for k in keys} if keys else {_ALL: pl.Int32},
                              weighted)
    label_dtype = schema[y_true]

    def guard(c: pl.DataFrame) -> pl.DataFrame:
        # labels: the non-positive values seen (their min and max) must be the negative class
        if _OMIN in c.columns:
            seen = pl.concat([c[_OMIN].drop_nulls(), c[_OMAX].drop_nulls()])
            spec.to_bool(seen.cast(label_dtype) if seen.dtype != label_dtype else seen)
        if _YNAN in c.columns and int(cast(int, c[_YNAN].sum())):
            spec.to_bool(pl.Series([math.nan]))
        if mode == "exact":
            sc = c[_S].cast(pl.Float64)
            check_score_summary(y_score, cast("float | None", sc.min()),
                                cast("float | None", sc.max()), int(sc.is_nan().sum()),
                                score_bounds)
        else:
            check_score_summary(y_score, cast("float | None", c[_SMIN].min()),
                                cast("float | None", c[_SMAX].max()),
                                int(cast(int, c[_SNAN].sum())), score_bounds)
        if weight is not None:
            check_weight_summary(weight, cast("float | None", c[_WMIN].min()),
                                 cast("float | None", c[_WMAX].max()),
                                 float(c.select(pl.col(_PW).sum() + pl.col(_QW).sum()).item())
                                 if c.height else None)
        return c.select([pl.col(k).cast(v) for k, v in out_schema.items()])

    checked = cells.map_batches(guard, schema=out_schema)
    table = _cumulate(checked, gkeys, weighted, thr_frame)
    if not keys:
        table = table.drop(_ALL)
    if isinstance(data, pl.DataFrame):
        return table.collect()
    return table


_NP = "_pfm_np"
_NQ = "_pfm_nq"
_NY = "_pfm_ny"
_NWV = "_pfm_nwv"
_OMIN = "_pfm_omin"
_OMAX = "_pfm_omax"
_YNAN = "_pfm_ynan"


def _cell_aggs(y: pl.Expr, y_dtype: pl.DataType, pos: Label, neg: Label | None,
               weight: str | None, s: pl.Expr, binned: bool) -> list[pl.Expr]:
    """Per (group, score) aggregations: class counts and weights, nulls, value summaries.

    Written as sums of products (no per-aggregation filters): this is the one scan, so every
    aggregation counts. Rows with a null label give null products, which sums skip.
    """
    ip = (y == pl.lit(pos)).cast(pl.Int64)  # null where the label is null
    io = 1 - ip
    aggs: list[pl.Expr] = [y.null_count().alias(_NY)]
    if weight is not None:
        w = pl.col(weight).cast(pl.Float64)
        has_w = w.is_not_null().cast(pl.Int64)
        aggs += [
            (ip * has_w).sum().alias(_NP), (io * has_w).sum().alias(_NQ),
            (w * ip).sum().alias(_PW), (w * io).sum().alias(_QW),
            (y.is_not_null() & w.is_null()).sum().alias(_NWV), w.null_count().alias(_WNULL),
            w.min().alias(_WMIN), w.max().alias(_WMAX),
        ]
    else:
        aggs += [ip.sum().alias(_NP), io.sum().alias(_NQ)]
    exact_pair = (y_dtype.is_integer() and isinstance(pos, int) and isinstance(neg, int)
                  and abs(pos - neg) == 1)
    if exact_pair:
        # no integer lies between two consecutive labels: min and max find any third value
        aggs += [y.min().alias(_OMIN), y.max().alias(_OMAX)]
    elif y_dtype != pl.Boolean:
        yv = y.cast(pl.String) if y_dtype == pl.Categorical or isinstance(y_dtype, pl.Enum) else y
        other = (y != pl.lit(pos)).fill_null(False)
        aggs += [yv.filter(other).min().alias(_OMIN), yv.filter(other).max().alias(_OMAX)]
    if y_dtype.is_float():
        aggs.append(y.is_nan().sum().alias(_YNAN))
    if binned:
        aggs += [s.is_nan().sum().alias(_SNAN), s.min().alias(_SMIN), s.max().alias(_SMAX)]
    return aggs


def _exact_by_sort(lf: pl.LazyFrame, keys: list[str], key_exprs: list[pl.Expr],
                   schema: pl.Schema, spec: Any, y_true: str, y_score: str,
                   weight: str | None, score_bounds: tuple[float, float] | None
                   ) -> pl.LazyFrame:
    """Exact curves by sorting each group's rows (one low-cardinality group_by, one sort)."""
    y = pl.col(y_true)
    s = pl.col(y_score).cast(pl.Float64)
    ip = (y == pl.lit(spec.pos)).cast(pl.Int64)
    valid = s.is_not_null() & y.is_not_null()
    fields = [s.alias("t"), ip.alias("p")]
    if weight is not None:
        w = pl.col(weight).cast(pl.Float64)
        valid = valid & w.is_not_null()
        fields.append(w.alias("w"))
    aggs = [a for a in _cell_aggs(y, schema[y_true], spec.pos, spec.neg, weight, s, True)
            if a.meta.output_name() in (_OMIN, _OMAX, _YNAN, _SNAN, _SMIN, _SMAX, _WMIN, _WMAX,
                                        _WNULL)]
    aggs += [
        pl.struct(fields).filter(valid).sort_by(s.filter(valid), descending=True)
        .alias("_pfm_x"),
        (~valid).sum().alias("n_null"),
        y.null_count().alias("n_null_y_true"),
        s.null_count().alias("n_null_y_pred"),
    ]
    if weight is not None:
        aggs.append(pl.col(weight).cast(pl.Float64).sum().alias(_W))
    grouped = lf.group_by(key_exprs).agg(aggs)
    gkeys = keys if keys else [_ALL]
    out_schema = dict(grouped.collect_schema())
    label_dtype = schema[y_true]

    def guard(c: pl.DataFrame) -> pl.DataFrame:
        if _OMIN in c.columns:
            seen = pl.concat([c[_OMIN].drop_nulls(), c[_OMAX].drop_nulls()])
            spec.to_bool(seen.cast(label_dtype) if seen.dtype != label_dtype else seen)
        if _YNAN in c.columns and int(cast(int, c[_YNAN].sum())):
            spec.to_bool(pl.Series([math.nan]))
        check_score_summary(y_score, cast("float | None", c[_SMIN].min()),
                            cast("float | None", c[_SMAX].max()),
                            int(cast(int, c[_SNAN].sum())), score_bounds)
        if weight is not None:
            check_weight_summary(weight, cast("float | None", c[_WMIN].min()),
                                 cast("float | None", c[_WMAX].max()),
                                 float(c[_W].sum()) if c.height else None)
        return c

    checked = grouped.map_batches(guard, schema=out_schema)
    t = pl.element().struct.field("t")
    end = t.ne_missing(t.shift(-1))  # the last row of each block of tied scores

    def cum(e: pl.Expr) -> pl.Expr:
        return e.cum_sum().filter(end)

    p = pl.element().struct.field("p")
    lists: dict[str, pl.Expr] = {"threshold": t.filter(end), "tp": cum(p), "fp": cum(1 - p)}
    if weight is not None:
        wf = pl.element().struct.field("w")
        lists.update({"tp_w": cum(wf * p), "fp_w": cum(wf * (1 - p))})
    x = pl.col("_pfm_x")
    table = (
        checked.filter(x.list.len() > 0)
        .sort(gkeys, nulls_last=True)  # one row per group
        .with_columns([x.list.eval(e).alias(n) for n, e in lists.items()])
        .with_columns(
            pl.col("tp").list.last().alias(_TOTP), pl.col("fp").list.last().alias(_TOTN),
            *([pl.col("tp_w").list.last().alias("_pfm_totpw"),
               pl.col("fp_w").list.last().alias("_pfm_totnw"),
               pl.col(_WNULL).alias("n_null_weight")] if weight is not None else []),
        )
        .drop("_pfm_x")
        .explode(list(lists))
    )
    return _finish(table, gkeys, weight is not None, dedupe=False)


def _cell_schema(key_schema: dict[str, Any], weighted: bool) -> dict[str, Any]:
    out = dict(key_schema)
    out.update({_S: pl.Float64, _NY: pl.Int64, _NP: pl.Int64, _NQ: pl.Int64})
    if weighted:
        out.update({_PW: pl.Float64, _QW: pl.Float64, _NWV: pl.Int64, _WNULL: pl.Int64})
    return out


def _cumulate(cells: pl.LazyFrame, keys: list[str], weighted: bool,
              thr_frame: pl.LazyFrame | None) -> pl.LazyFrame:
    """From validated cells (one row per group and score or bin) to the cumulative curve table.

    One ``group_by(keys)`` sorts each group's scores descending and takes cumulative sums; the
    groups (a small frame) are sorted by key before exploding, so no large sort follows.
    """
    inc = [_NP, _NQ, *([_PW, _QW] if weighted else [])]
    cells = cells.with_columns(  # every row of the cell: counted, null label, null weight
        (pl.col(_NP) + pl.col(_NQ) + pl.col(_NY) + (pl.col(_NWV) if weighted else 0)).alias(_N))
    if thr_frame is None:
        rows = cells.with_columns(pl.col(_S).alias("threshold"), pl.col(_S).alias(_IDX))
    else:
        # binned: every group gets every grid threshold; bin 0 (below all) only feeds totals
        thr = pl.concat([
            thr_frame.select(pl.col(_IDX).cast(pl.Float64), pl.col("threshold").cast(pl.Float64)),
            pl.LazyFrame({_IDX: [0.0], "threshold": [_BELOW]}),
        ])
        counted = cells.filter(pl.col(_S).is_not_null()).group_by([*keys, _S]).agg(
            pl.col(inc).sum())
        rows = (
            cells.select(keys).unique().join(thr, how="cross")
            .join(counted.rename({_S: _IDX}), on=[*keys, _IDX], how="left", nulls_equal=True)
            .with_columns(pl.col(c).fill_null(0) for c in inc)
        )
    keep = pl.col(_IDX).is_not_null() & ((pl.col(_NP) + pl.col(_NQ)) > 0
                                         if thr_frame is None else pl.lit(True))
    s_null = pl.col(_S).is_null()
    # one sort per group: the (threshold, increments) structs in descending score order
    points = (rows.filter(keep).group_by(keys)
              .agg(pl.struct("threshold", *inc).sort_by(_IDX, descending=True).alias("_pfm_x")))
    aggs: list[pl.Expr] = [
        pl.col(_NP).filter(~s_null).sum().alias(_TOTP),
        pl.col(_NQ).filter(~s_null).sum().alias(_TOTN),
        (pl.col(_N).filter(s_null).sum() + pl.col(_NY).filter(~s_null).sum()
         + (pl.col(_NWV).filter(~s_null).sum() if weighted else pl.lit(0, dtype=pl.Int64)))
        .alias("n_null"),
        pl.col(_NY).sum().alias("n_null_y_true"),
        pl.col(_N).filter(s_null).sum().alias("n_null_y_pred"),
    ]
    if weighted:
        aggs += [pl.col(_PW).filter(~s_null).sum().alias("_pfm_totpw"),
                 pl.col(_QW).filter(~s_null).sum().alias("_pfm_totnw"),
                 pl.col(_WNULL).sum().alias("n_null_weight")]
    # a group whose rows all have a null label or score has no threshold (exact mode): no row
    grouped = points.join(cells.group_by(keys).agg(aggs), on=keys, how="inner",
                          nulls_equal=True)
    names = {_NP: "tp", _NQ: "fp", _PW: "tp_w", _QW: "fp_w"}
    x = pl.col("_pfm_x")
    lists = ["threshold", *[names[c] for c in inc]]
    table = (
        grouped.sort(keys, nulls_last=True)  # a small frame: one row per group
        .with_columns(
            x.list.eval(pl.element().struct.field("threshold")).alias("threshold"),
            *[x.list.eval(pl.element().struct.field(c).cum_sum()).alias(names[c]) for c in inc],
        )
        .drop("_pfm_x")
        .explode(lists)
    )
    return _finish(table, keys, weighted, dedupe=thr_frame is not None)


def _finish(table: pl.LazyFrame, keys: list[str], weighted: bool, dedupe: bool
            ) -> pl.LazyFrame:
    """Exploded cumulative counts + class totals → the curve table's columns and dtypes."""
    int_cols = ["tp", "fp", "tn", "fn"]
    w_cols = ["tp_w", "fp_w", "tn_w", "fn_w"] if weighted else []
    table = table.with_columns(
        pl.col("tp").cast(pl.Int64), pl.col("fp").cast(pl.Int64),
        (pl.col(_TOTN) - pl.col("fp")).cast(pl.Int64).alias("tn"),
        (pl.col(_TOTP) - pl.col("tp")).cast(pl.Int64).alias("fn"),
    )
    if weighted:
        table = table.with_columns(
            # exact zeros where no row of the class is left (no rounding residue)
            pl.when(pl.col("tn") == 0).then(0.0)
            .otherwise(pl.col("_pfm_totnw") - pl.col("fp_w")).alias("tn_w"),
            pl.when(pl.col("fn") == 0).then(0.0)
            .otherwise(pl.col("_pfm_totpw") - pl.col("tp_w")).alias("fn_w"),
        )
    table = table.filter(pl.col("threshold") != _BELOW)
    if dedupe:  # tied quantiles: equal thresholds have equal counts
        table = table.unique([*keys, "threshold"], keep="any", maintain_order=True)
    table = table.with_columns(pl.sum_horizontal(int_cols).alias("n"))
    if weighted:
        table = table.with_columns(pl.sum_horizontal(w_cols).alias("n_w"))
    null_cols = ["n_null", "n_null_y_true", "n_null_y_pred"] + (
        ["n_null_weight"] if weighted else [])
    out = [*keys, "threshold", *int_cols, "n", *w_cols, *(["n_w"] if weighted else []),
           *null_cols]
    return table.select([*keys, "threshold", *[pl.col(c).cast(pl.Int64) for c in
                                                (*int_cols, "n")],
                         *w_cols, *(["n_w"] if weighted else []),
                         *[pl.col(c).cast(pl.Int64) for c in null_cols]]).select(out)


def _desc(expr: pl.Expr, keys: list[str], order: str) -> pl.Expr:
    """``expr`` within each group, rows taken in descending ``order``."""
    return expr.over(keys if keys else pl.lit(0), order_by=pl.col(order), descending=True)


def _table_and_keys(data: FrameT, options: Mapping[str, Any]) -> tuple[FrameT, list[str]]:
    """A curve table (computed from rows when ``y_true`` is given) and its group keys."""
    if "y_true" in options:
        table = curve_counts(data, **options)
    else:
        if options:
            raise InvalidOptionError(
                f"options {sorted(options)} apply to rows: pass y_true= and y_score= as well"
            )
        table = data
    columns = list(schema_of(table).names())
    missing = [c for c in ("threshold", "tp", "fp", "tn", "fn") if c not in columns]
    if missing:
        raise InvalidOptionError(
            "pass rows with y_true= and y_score=, or a curve table (curve_counts); missing "
            f"column(s): {', '.join(missing)}"
        )
    keys = [c for c in key_columns(columns) if c != "threshold"]
    return table, keys


def _use_weighted(columns: Sequence[str], weighted: bool | None) -> bool:
    has = is_weighted(columns)
    if weighted and not has:
        raise InvalidOptionError("weighted=True but the curve table has no tp_w … columns; "
                                 "pass weight= when counting")
    return has if weighted is None else weighted


def _base(weighted: bool) -> tuple[pl.Expr, pl.Expr, pl.Expr, pl.Expr]:
    """TP, FP, P (positives), N (negatives) as Float64 expressions over a curve table."""
    sfx = "_w" if weighted else ""
    tp = pl.col(f"tp{sfx}").cast(pl.Float64)
    fp = pl.col(f"fp{sfx}").cast(pl.Float64)
    pos = tp + pl.col(f"fn{sfx}").cast(pl.Float64)
    neg = fp + pl.col(f"tn{sfx}").cast(pl.Float64)
    return tp, fp, pos, neg


def _deployment_factor(pos: pl.Expr, neg: pl.Expr, deploy_positive_rate: float | None,
                       deploy_neg_pos_ratio: float | None) -> pl.Expr | None:
    r"""f = (neg_deploy / pos_deploy) / (neg_test / pos_test), from the table's own classes.

    The deployment ratio is validated and computed by :mod:`polars_fairmetrics.deployment`;
    here the test ratio is each group's own (a curve per group), where
    :func:`~polars_fairmetrics.deployment.deployment_counts` with one rate uses the overall one.
    """
    if deploy_positive_rate is None and deploy_neg_pos_ratio is None:
        return None
    ratio = _deploy_ratio(deploy_positive_rate, deploy_neg_pos_ratio)
    return safe_div(pos * cast(float, ratio), neg)


def _points(table: FrameT, keys: list[str], weighted: bool, deploy_positive_rate: float | None,
            deploy_neg_pos_ratio: float | None) -> FrameT:
    """keys, threshold, TP, FP (deployment-corrected), P, N as Float64."""
    tp, fp, pos, neg = _base(weighted)
    f = _deployment_factor(pos, neg, deploy_positive_rate, deploy_neg_pos_ratio)
    if f is not None:
        fp, neg = fp * f, neg * f
    return table.select(*keys, "threshold", tp.alias(_TP), fp.alias(_FP), pos.alias(_TOTP),
                        neg.alias(_TOTN))


def _drop_weightless(points: FrameT, keys: list[str]) -> FrameT:
    """Drop thresholds whose rows all weigh 0 (scikit-learn drops zero-weight samples)."""
    mass = pl.col(_TP) + pl.col(_FP)
    prev = _desc(mass.shift(1, fill_value=0.0), keys, "threshold")
    return points.filter(mass != prev)


def roc_curve(
    data: FrameT,
    *,
    weighted: bool | None = None,
    anchor: bool = True,
    **curve_options: Unpack[CurveOptions],
) -> FrameT:
    r"""ROC curve per group: false and true positive rates at every threshold.

    .. math:: FPR(t) = FP(t) / N,\qquad TPR(t) = TP(t) / P

    Parameters
    ----------
    data
        Rows (pass ``y_true=``, ``y_score=`` and other :func:`curve_counts` options) or a curve
        table.
    weighted
        Use the weighted sums (default: when present). Weighted curves drop thresholds whose
        rows all weigh 0, as scikit-learn does.
    anchor
        Start each curve at (0, 0) with ``threshold = +inf`` (scikit-learn's convention).
    **curve_options
        :class:`CurveOptions`, when ``data`` are rows.

    Returns
    -------
    DataFrame or LazyFrame
        Keys, ``threshold`` (descending), ``fpr``, ``tpr`` (Float64; null for a group without
        negatives, resp. positives). Equal to ``sklearn.metrics.roc_curve(...,
        drop_intermediate=False)``.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "s": [0.9, 0.8, 0.8, 0.1]})
    >>> pfm.roc_curve(df, y_true="y", y_score="s").select("fpr", "tpr").rows()
    [(0.0, 0.0), (0.0, 0.5), (0.5, 1.0), (1.0, 1.0)]
    """
    table: FrameT
    keys: list[str]
    table, keys = _table_and_keys(data, curve_options)
    use_w = _use_weighted(list(schema_of(table).names()), weighted)
    pts = _points(table, keys, use_w, None, None)
    if use_w:
        pts = _drop_weightless(pts, keys)
    if anchor:
        first = pts.group_by(keys).agg(
            pl.lit(math.inf).alias("threshold"), pl.lit(0.0).alias(_TP), pl.lit(0.0).alias(_FP),
            pl.col(_TOTP).first(), pl.col(_TOTN).first(),
        ) if keys else pts.select(
            pl.lit(math.inf).alias("threshold"), pl.lit(0.0).alias(_TP), pl.lit(0.0).alias(_FP),
            pl.col(_TOTP).first(), pl.col(_TOTN).first(),
        ).head(1)
        pts = pl.concat([first.select(schema_of(pts).names()), pts], how="vertical")
    c = _point_counts(pl.col(_TP), pl.col(_FP), pl.col(_TOTP), pl.col(_TOTN))
    out = pts.select(
        *keys, "threshold",
        false_positive_rate(c).alias("fpr"),
        true_positive_rate(c).alias("tpr"),
    )
    return out.sort([*keys, "threshold"], descending=[False] * len(keys) + [True],
                    nulls_last=True)


def pr_curve(
    data: FrameT,
    *,
    weighted: bool | None = None,
    anchor: bool = True,
    deploy_positive_rate: float | None = None,
    deploy_neg_pos_ratio: float | None = None,
    **curve_options: Unpack[CurveOptions],
) -> FrameT:
    r"""Precision–recall curve per group, optionally corrected to a deployment class ratio.

    .. math::

        \text{precision}(t) = \frac{TP(t)}{TP(t) + f \cdot FP(t)},\qquad
        \text{recall}(t) = \frac{TP(t)}{P},\qquad
        f = \frac{neg_{deploy} / pos_{deploy}}{neg_{test} / pos_{test}}

    with :math:`f = 1` unless a deployment class balance is given (seed
    deployment-precision-class-imbalance: negatives are scaled, recall is unchanged;
    :math:`neg_{test}/pos_{test}` is each group's own (weighted) class ratio).

    Parameters
    ----------
    data
        Rows (pass ``y_true=``, ``y_score=`` …) or a curve table.
    weighted
        Use the weighted sums (default: when present); thresholds whose rows all weigh 0 are
        dropped, as scikit-learn does.
    anchor
        Add scikit-learn's end point (recall 0, precision 1) with ``threshold = +inf``.
    deploy_positive_rate, deploy_neg_pos_ratio
        The deployment class balance: positive share :math:`\pi` (ratio :math:`(1-\pi)/\pi`) or
        the negative/positive ratio. At most one.
    **curve_options
        :class:`CurveOptions`, when ``data`` are rows.

    Returns
    -------
    DataFrame or LazyFrame
        Keys, ``threshold`` (descending, so recall ascending), ``precision`` (null where nothing
        is predicted positive — possible only on a binned grid), ``recall`` (null for a group
        without positives). Equal to ``sklearn.metrics.precision_recall_curve`` reversed.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "s": [0.9, 0.8, 0.8, 0.1]})
    >>> pfm.pr_curve(df, y_true="y", y_score="s").select("precision", "recall").rows()
    [(1.0, 0.0), (1.0, 0.5), (0.6666666666666666, 1.0), (0.5, 1.0)]
    >>> c = pfm.pr_curve(df, y_true="y", y_score="s", deploy_neg_pos_ratio=9.0, anchor=False)
    >>> round(c["precision"][1], 4)  # 2 / (2 + 9 · 1)
    0.1818
    """
    table: FrameT
    keys: list[str]
    table, keys = _table_and_keys(data, curve_options)
    use_w = _use_weighted(list(schema_of(table).names()), weighted)
    pts = _points(table, keys, use_w, deploy_positive_rate, deploy_neg_pos_ratio)
    if use_w:
        pts = _drop_weightless(pts, keys)
    c = _point_counts(pl.col(_TP), pl.col(_FP), pl.col(_TOTP), pl.col(_TOTN))
    out = pts.select(
        *keys, "threshold",
        positive_predictive_value(c).alias("precision"),
        true_positive_rate(c).alias("recall"),
    )
    if anchor:
        head = (out.group_by(keys).agg(pl.lit(math.inf).alias("threshold"),
                                       pl.lit(1.0).alias("precision"), pl.lit(0.0).alias("recall"))
                if keys else
                out.select(pl.lit(math.inf).alias("threshold"), pl.lit(1.0).alias("precision"),
                           pl.lit(0.0).alias("recall")).head(1))
        out = pl.concat([head, out], how="vertical_relaxed")
    return out.sort([*keys, "threshold"], descending=[False] * len(keys) + [True],
                    nulls_last=True)


# --------------------------------------------------------------------------------------------
# summaries
# --------------------------------------------------------------------------------------------


def _point_counts(tp: pl.Expr, fp: pl.Expr, positives: pl.Expr, negatives: pl.Expr) -> Counts:
    """The confusion counts of a curve point (counts at or above its threshold), so that the
    core's metric definitions give its rates: tn = negatives − fp, fn = positives − tp."""
    return Counts(tp=tp, fp=fp, tn=negatives - fp, fn=positives - tp)


def _summary_exprs(aupr_mode: AuprMode, names: list[str]) -> list[tuple[str, pl.Expr]]:
    """Summaries as expressions over one group's points, already in threshold-descending order
    (evaluated with ``list.eval`` over the group's sorted list of point structs)."""

    def field(name: str) -> pl.Expr:
        return pl.element().struct.field(name)

    tp = field(_TP)
    fp = field(_FP)
    pos = field(_TOTP).first()
    neg = field(_TOTN).first()
    c = _point_counts(tp, fp, pos, neg)
    x = true_positive_rate(c)
    has_pos = pos > 0
    exprs: list[tuple[str, pl.Expr]] = []
    if "roc_auc" in names:
        fpr = false_positive_rate(c)
        fpr_prev = fpr.shift(1, fill_value=0.0)
        tpr_prev = x.shift(1, fill_value=0.0)
        area = (((fpr - fpr_prev) * (x + tpr_prev)).sum()
                + (1.0 - fpr.last()) * (1.0 + x.last())) / 2.0
        exprs.append(("roc_auc", pl.when(has_pos & (neg > 0)).then(area)
                      .otherwise(pl.lit(None, dtype=pl.Float64))))
    prec = positive_predictive_value(c)
    prevalence = pos / (pos + neg)
    if "average_precision" in names:
        step = x - x.shift(1, fill_value=0.0)
        terms = pl.when(step == 0).then(0.0).otherwise(step * prec)
        ap = terms.sum() + (1.0 - x.last()) * prevalence
        exprs.append(("average_precision",
                      pl.when(has_pos).then(ap).otherwise(pl.lit(None, dtype=pl.Float64))))
    if "aupr" in names:
        if aupr_mode == "notebook":
            # points already on the notebook grid, truncated at the first recall-1 point
            r, p = x, prec.fill_null(0.0)
            area = (0.5 * (r - r.shift(1)) * (p + p.shift(1))).sum()
        else:
            keep = prec.is_not_null()
            r, p = x.filter(keep), prec.filter(keep)
            if aupr_mode == "trapezoid":
                r_prev = r.shift(1, fill_value=0.0)
                p_prev = p.shift(1, fill_value=1.0)
            else:
                r_prev, p_prev = r.shift(1), p.shift(1)
            area = ((0.5 * (r - r_prev) * (p + p_prev)).sum()
                    + 0.5 * (1.0 - r.last()) * (p.last() + prevalence))
        exprs.append(("aupr",
                      pl.when(has_pos).then(area).otherwise(pl.lit(None, dtype=pl.Float64))))
    return exprs


def _notebook_points(points: FrameT, keys: list[str], n_points: int) -> FrameT:
    """Counts at the notebook grid: n_points thresholds from the group's max score down to 0,
    kept up to the first point with recall 1."""
    gid = pl.struct(keys).hash() if keys else pl.lit(0, dtype=pl.UInt64)
    pts = points.with_columns(gid.alias(_GID))
    lazy = pts.lazy()
    grid_idx = pl.LazyFrame({_IDX: list(range(n_points))}, schema={_IDX: pl.Int64})
    tops = lazy.group_by([_GID, *keys]).agg(
        pl.col("threshold").max().alias("_pfm_top"),
        pl.col(_TOTP).first(), pl.col(_TOTN).first(),
    )
    step = 1.0 / (n_points - 1) if n_points > 1 else 0.0
    grid = tops.join(grid_idx, how="cross").with_columns(
        (pl.col("_pfm_top") * (1.0 - pl.col(_IDX) * step)).alias("_pfm_t")
    ).with_columns(
        pl.when(pl.col(_IDX) == n_points - 1).then(0.0).otherwise(pl.col("_pfm_t"))
        .alias("_pfm_t")
    )
    right = lazy.select(_GID, "threshold", _TP, _FP).sort("threshold")
    joined = grid.sort("_pfm_t").join_asof(
        right, left_on="_pfm_t", right_on="threshold", by=_GID, strategy="forward",
        check_sortedness=False,
    ).with_columns(pl.col(_TP).fill_null(0.0), pl.col(_FP).fill_null(0.0))
    at_one = pl.col(_TP) >= pl.col(_TOTP) * (1.0 - _RECALL_ONE)
    before = at_one.cast(pl.Int64).cum_sum().shift(1, fill_value=0).over(
        _GID, order_by=pl.col(_IDX))
    out = joined.filter(before == 0).select(
        *keys, (-pl.col(_IDX).cast(pl.Float64)).alias("threshold"), _TP, _FP, _TOTP, _TOTN
    )
    if isinstance(points, pl.DataFrame):
        return out.collect()
    return out


def curve_summaries(
    data: FrameT,
    *,
    summaries: str | Sequence[str] | None = None,
    aupr_mode: AuprMode = "trapezoid",
    weighted: bool | None = None,
    overall: bool = False,
    long: bool = False,
    deploy_positive_rate: float | None = None,
    deploy_neg_pos_ratio: float | None = None,
    notebook_points: int = NOTEBOOK_POINTS,
    **curve_options: Unpack[CurveOptions],
) -> FrameT:
    r"""ROC AUC, average precision and AUPR per group, from a curve table (or rows).

    With points :math:`(FPR_i, TPR_i)`, recall :math:`R_i` and precision :math:`P_i` at the
    thresholds in descending order:

    .. math::

        \text{ROC AUC} = \sum_i \tfrac12 (FPR_i - FPR_{i-1})(TPR_i + TPR_{i-1}),\qquad
        \text{AP} = \sum_i (R_i - R_{i-1}) P_i,\qquad
        \text{AUPR} = \sum_i \tfrac12 (R_{i+1} - R_i)(P_i + P_{i+1})

    ROC AUC starts at (0, 0) and ends at (1, 1) — on the exact curve this is scikit-learn's
    ``roc_auc_score`` (tied scores are one point: half credit). AP starts at recall 0 and is
    scikit-learn's ``average_precision_score``. AUPR anchorings (``aupr_mode``):

    - ``"trapezoid"``: the points plus scikit-learn's (recall 0, precision 1) start, i.e.
      ``sklearn.metrics.auc(recall, precision)`` on ``precision_recall_curve``;
    - ``"seed"``: the seed's set :math:`E` exactly — only the curve's own points (no recall-0
      anchor), from the highest threshold's recall;
    - ``"notebook"``: the bias-adjusted-metrics notebook — ``notebook_points`` thresholds from the
      group's max score down to 0, stopping at the first point with recall 1, no recall-0
      anchor, precision 0 where nothing is predicted positive (the notebook's convention).

    Points with undefined precision (nothing predicted positive, possible only on a binned grid)
    are skipped by AP and the first two AUPR modes. On a binned grid whose lowest threshold does
    not reach every row, both PR summaries close the curve at (recall 1, prevalence), the point of
    predicting everything positive.

    Parameters
    ----------
    data
        A curve table (:func:`curve_counts`) or rows with ``y_true=``, ``y_score=`` …
    summaries
        Some of :data:`SUMMARIES` (default: all).
    aupr_mode
        ``"trapezoid"``, ``"seed"`` or ``"notebook"``.
    weighted
        Use the weighted sums (default: when present).
    overall
        Add the pooled curve's summaries (group keys null, ``overall`` column True).
    long
        Tidy output: keys, ``summary``, ``value``.
    deploy_positive_rate, deploy_neg_pos_ratio
        Correct precision to a deployment class balance (see :func:`pr_curve`); ROC AUC is
        unchanged by it.
    notebook_points
        Grid size of ``aupr_mode="notebook"``.
    **curve_options
        :class:`CurveOptions`, when ``data`` are rows.

    Returns
    -------
    DataFrame or LazyFrame
        One row per group: keys, ``roc_auc``, ``average_precision``, ``aupr`` (Float64). Null when
        undefined: ROC AUC without positives or without negatives; AP and AUPR without positives.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "a", "a", "b", "b"], "y": [1, 0, 1, 0, 0],
    ...                    "s": [0.9, 0.8, 0.8, 0.3, 0.1]})
    >>> pfm.curve_summaries(df, y_true="y", y_score="s", by="g").rows()
    [('a', 0.75, 0.8333333333333333, 0.9166666666666666), ('b', None, None, None)]
    """
    if aupr_mode not in AUPR_MODES:
        raise InvalidOptionError(f"aupr_mode={aupr_mode!r}; expected one of {AUPR_MODES}")
    names = list(SUMMARIES) if summaries is None else (
        [summaries] if isinstance(summaries, str) else list(summaries))
    for nm in names:
        if nm not in SUMMARIES:
            raise InvalidOptionError(f"unknown summary {nm!r}; expected some of {SUMMARIES}")
    if notebook_points < 2:
        raise InvalidOptionError(f"notebook_points={notebook_points!r} must be >= 2")
    table: FrameT
    keys: list[str]
    table, keys = _table_and_keys(data, curve_options)
    use_w = _use_weighted(list(schema_of(table).names()), weighted)
    if overall:
        table = pl.concat(
            [table.with_columns(pl.lit(False).alias("overall")),
             pooled_curve(table, weighted=use_w).with_columns(
                 *[pl.lit(None, dtype=schema_of(table)[k]).alias(k) for k in keys],
                 pl.lit(True).alias("overall")).select([*schema_of(table).names(), "overall"])
             if keys else pooled_curve(table, weighted=use_w).with_columns(
                 pl.lit(True).alias("overall"))],
            how="diagonal",
        )
        keys = ["overall", *keys]
    out = _summaries_of(table, keys, names, aupr_mode, use_w, deploy_positive_rate,
                        deploy_neg_pos_ratio, notebook_points)
    if long:
        out = out.unpivot(on=names, index=keys, variable_name="summary", value_name="value")
        out = out.sort([*keys, "summary"], nulls_last=True)
    return out


def _evaluate(points: FrameT, group_keys: list[Any], exprs: list[tuple[str, pl.Expr]]
              ) -> FrameT:
    """One sort per group (a list of point structs), then each summary over that list."""
    lists = points.group_by(group_keys).agg(
        pl.struct("threshold", _TP, _FP, _TOTP, _TOTN)
        .sort_by("threshold", descending=True).alias("_pfm_pts"))
    names = [k if isinstance(k, str) else _ALL for k in group_keys]
    return lists.select(
        *names,
        *[pl.col("_pfm_pts").list.eval(e).list.first().cast(pl.Float64).alias(n)
          for n, e in exprs],
    )


def _summaries_of(table: FrameT, keys: list[str], names: list[str], aupr_mode: AuprMode,
                  use_w: bool, deploy_positive_rate: float | None,
                  deploy_neg_pos_ratio: float | None, notebook_points: int) -> FrameT:
    pts = _points(table, keys, use_w, deploy_positive_rate, deploy_neg_pos_ratio)
    main = [n for n in names if n != "aupr" or aupr_mode != "notebook"]
    gk = keys if keys else [pl.lit(0).alias(_ALL)]
    out = _evaluate(pts, gk, _summary_exprs(aupr_mode, main))
    if "aupr" in names and aupr_mode == "notebook":
        nb = _notebook_points(pts, keys, notebook_points)
        nb_out = _evaluate(nb, gk, _summary_exprs("notebook", ["aupr"]))
        out = out.join(nb_out, on=keys if keys else [_ALL], how="left", nulls_equal=True)
    if not keys:
        out = out.drop(_ALL)
    return out.select(*keys, *names).sort(keys, nulls_last=True) if keys else out.select(names)


def pooled_curve(data: FrameT, *, weighted: bool | None = None) -> FrameT:
    r"""The overall curve table pooled from a per-group curve table (no scan of the rows).

    The per-threshold increments :math:`\Delta TP_g(t), \Delta FP_g(t)` of every group are
    recovered from the cumulative counts, added across groups at each threshold, and summed
    again: :math:`TP(t) = \sum_{t' \ge t} \sum_g \Delta TP_g(t')`. On exact tables this is the
    exact overall curve (the union of the groups' thresholds).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "b", "b"], "y": [1, 0, 1], "s": [0.9, 0.5, 0.2]})
    >>> t = pfm.curve_counts(df, y_true="y", y_score="s", by="g")
    >>> pfm.pooled_curve(t).select("threshold", "tp", "fp").rows()
    [(0.9, 1, 0), (0.5, 1, 1), (0.2, 2, 1)]
    """
    table: FrameT
    keys: list[str]
    table, keys = _table_and_keys(data, {})
    columns = list(schema_of(table).names())
    use_w: bool = _use_weighted(columns, weighted)
    base = ["tp", "fp"] + (["tp_w", "fp_w"] if use_w else [])
    totals_cols = [("tp", "fn"), ("fp", "tn")] + ([("tp_w", "fn_w"), ("fp_w", "tn_w")]
                                                   if use_w else [])
    incs = [(pl.col(c) - _desc(pl.col(c).shift(1, fill_value=0), keys, "threshold")).alias(c)
            for c in base]
    tot = [_desc((pl.col(a) + pl.col(b)).first(), keys, "threshold").alias(f"_pfm_tot_{a}")
           for a, b in totals_cols]
    per = table.with_columns(tot).with_columns(incs)
    gtot = per.group_by(keys or pl.lit(0)).agg(
        [pl.col(f"_pfm_tot_{a}").first() for a, _ in totals_cols]).select(
        [pl.col(f"_pfm_tot_{a}").sum() for a, _ in totals_cols])
    null_cols: list[str] = [c for c in NULL_COLUMNS if c in columns]
    nulls = per.group_by(keys or pl.lit(0)).agg(
        [pl.col(c).first() for c in null_cols]).select([pl.col(c).sum() for c in null_cols])
    pooled = per.group_by("threshold").agg([pl.col(c).sum() for c in base])
    cum = [pl.col(c).cum_sum().over(pl.lit(0), order_by=pl.col("threshold"), descending=True)
           .alias(c) for c in base]
    pooled = pooled.with_columns(cum).join(gtot, how="cross").with_columns(
        (pl.col("_pfm_tot_tp") - pl.col("tp")).alias("fn"),
        (pl.col("_pfm_tot_fp") - pl.col("fp")).alias("tn"),
        *([(pl.col("_pfm_tot_tp_w") - pl.col("tp_w")).alias("fn_w"),
           (pl.col("_pfm_tot_fp_w") - pl.col("fp_w")).alias("tn_w")] if use_w else []),
    )
    int_cols: list[str] = ["tp", "fp", "tn", "fn"]
    w_cols: list[str] = ["tp_w", "fp_w", "tn_w", "fn_w"] if use_w else []
    pooled = pooled.with_columns(pl.col(int_cols).cast(pl.Int64)).with_columns(
        pl.sum_horizontal(int_cols).alias("n"),
        *([pl.sum_horizontal(w_cols).alias("n_w")] if use_w else []),
    ).join(nulls, how="cross")
    out_cols = ["threshold", *int_cols, "n", *w_cols, *(["n_w"] if use_w else []), *null_cols]
    return pooled.select(out_cols).sort("threshold", descending=True)


def summary_disparities(
    data: FrameT,
    *,
    reference: Reference = "overall",
    summaries: str | Sequence[str] | None = None,
    aupr_mode: AuprMode = "trapezoid",
    weighted: bool | None = None,
    **curve_options: Unpack[CurveOptions],
) -> FrameT:
    r"""Differences and ratios of curve summaries (AUC, AP, AUPR) between groups.

    .. math::

        \text{difference}_g = S_g - S_{ref},\qquad \text{ratio}_g = S_g / S_{ref}

    where :math:`S_{ref}` is the summary of the named reference group or of the pooled overall
    curve (:func:`pooled_curve`: the whole population's curve, not an average of groups).
    Null where either value is null, and the ratio also where the reference value is 0.

    Parameters
    ----------
    data
        A curve table or rows (``y_true=``, ``y_score=``, ``by=`` …).
    reference
        ``"overall"`` (default) or a group value (a tuple or mapping for several keys).
        ``"rest"`` is not offered: the rest's curve needs its own pooling.
    summaries, aupr_mode, weighted
        As in :func:`curve_summaries`.
    **curve_options
        :class:`CurveOptions`, when ``data`` are rows.

    Returns
    -------
    DataFrame or LazyFrame
        Keys, ``summary``, ``value``, ``reference_value``, ``difference``, ``ratio``,
        ``reference``.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a"] * 4 + ["b"] * 4, "y": [1, 0, 1, 0] * 2,
    ...                    "s": [0.9, 0.1, 0.8, 0.2, 0.3, 0.6, 0.9, 0.2]})
    >>> d = pfm.summary_disparities(df, y_true="y", y_score="s", by="g", reference="a",
    ...                             summaries="roc_auc")
    >>> d.select("g", "value", "difference").rows()
    [('a', 1.0, 0.0), ('b', 0.75, -0.25)]
    """
    if reference is None or reference == "rest":
        raise InvalidOptionError(f"reference={reference!r}; pass 'overall' or a group value")
    table: FrameT
    keys: list[str]
    table, keys = _table_and_keys(data, curve_options)
    if not keys:
        raise InvalidOptionError("summary_disparities needs groups: pass by= (or a grouped table)")
    use_w = _use_weighted(list(schema_of(table).names()), weighted)
    names = list(SUMMARIES) if summaries is None else (
        [summaries] if isinstance(summaries, str) else list(summaries))
    groups = curve_summaries(table, summaries=names, aupr_mode=aupr_mode, weighted=use_w,
                             long=True)
    if reference == "overall":
        ref = curve_summaries(pooled_curve(table, weighted=use_w), summaries=names,
                              aupr_mode=aupr_mode, weighted=use_w, long=True)
        ref = ref.rename({"value": "reference_value"})
        with_ref = groups.join(ref, on="summary", how="left")
    else:
        mask = _reference_mask(reference, keys, [])
        ref = groups.filter(mask).select("summary", pl.col("value").alias("reference_value"))
        with_ref = groups.join(ref, on="summary", how="left").with_columns(
            mask.any().alias("_pfm_has_ref"))
        guard = _make_reference_guard(reference, keys, [])
        schema = {k: v for k, v in schema_of(with_ref).items() if k != "_pfm_has_ref"}
        guarded = with_ref.lazy().map_batches(guard, schema=schema)
        with_ref = guarded.collect() if isinstance(table, pl.DataFrame) else guarded
    value, refv = pl.col("value"), pl.col("reference_value")
    ref_label = reference if isinstance(reference, str) else str(reference)
    out = with_ref.select(
        *keys, "summary", value, refv, (value - refv).alias("difference"),
        safe_div(value, refv).alias("ratio"), pl.lit(ref_label).alias("reference"),
    )
    return out.sort([*keys, "summary"], nulls_last=True)


# --------------------------------------------------------------------------------------------
# expressions (usable in group_by().agg())
# --------------------------------------------------------------------------------------------


def _valid_rows(y_score: IntoExpr, y_true: IntoExpr, weight: IntoExpr | None,
                pos_label: Label | None, neg_label: Label | None
                ) -> tuple[pl.Expr, pl.Expr, pl.Expr, pl.Expr]:
    """Scores, Boolean labels and weights of the counted rows, and the per-group input guard.

    The guard (labels outside the two classes, negative/NaN/infinite weights, NaN scores) runs
    on per-group summaries, like the core's row metrics.
    """
    s = _as_expr(y_score).cast(pl.Float64)
    yt_raw = _as_expr(y_true)
    pos, neg = _row_labels("y_true", pos_label, neg_label)
    yt = yt_raw == pos
    ok = _label_guard(yt_raw, "y_true", pos, neg) & _score_guard(s)
    valid = s.is_not_null() & yt_raw.is_not_null()
    if weight is None:
        return s.filter(valid), yt.filter(valid), pl.lit(1.0), ok
    w = _as_expr(weight).cast(pl.Float64)
    ok = ok & _weight_guard(w)
    valid = valid & w.is_not_null()
    return s.filter(valid), yt.filter(valid), w.filter(valid), ok


def _score_guard(s: pl.Expr) -> pl.Expr:
    name = s.meta.output_name(raise_if_undetermined=False) or "y_score"

    def check(row: dict[str, Any]) -> None:
        if row["n_nan"]:
            raise InvalidScoreError(MSG_SCORE_NAN.format(column=name))

    return _guard(pl.struct(s.is_nan().sum().alias("n_nan")), check)


def roc_auc(y_score: IntoExpr, *, y_true: IntoExpr, weight: IntoExpr | None = None,
            pos_label: Label | None = None, neg_label: Label | None = None) -> pl.Expr:
    r"""Weighted ROC AUC as an aggregation (Mann–Whitney with tied scores counted half).

    .. math::

        \text{AUC} = \frac{\sum_{i: y_i = 1} w_i \left(W^-_{< s_i} + \tfrac12 W^-_{= s_i}\right)}
                          {W^+ \, W^-}

    where :math:`W^-_{< s}` is the weight of negatives scored below :math:`s`. Equal to
    scikit-learn's ``roc_auc_score`` (with ``sample_weight``); null when a class is absent.
    Rows with a null score, label or weight are left out.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "a", "a", "b"], "y": [1, 0, 0, 1],
    ...                    "s": [0.8, 0.8, 0.1, 0.5]})
    >>> df.group_by("g").agg(pfm.roc_auc("s", y_true="y")).sort("g").rows()
    [('a', 0.75), ('b', None)]
    """
    s, yt, w, ok = _valid_rows(y_score, y_true, weight, pos_label, neg_label)
    wn = pl.when(~yt).then(w).otherwise(0.0)
    wp = pl.when(yt).then(w).otherwise(0.0)
    ss = s.sort()
    wn_s = wn.sort_by(s)
    wp_s = wp.sort_by(s)
    cum = wn_s.cum_sum()
    # W-(< s) at the first row of a tie block, W-(<= s) at its last row, spread over the block
    before = pl.when(ss.ne_missing(ss.shift(1))).then(cum - wn_s).otherwise(None).forward_fill()
    upto = pl.when(ss.ne_missing(ss.shift(-1))).then(cum).otherwise(None).backward_fill()
    num = (wp_s * (before + upto)).sum() / 2.0
    tot_p, tot_n = wp.sum(), wn.sum()
    return (pl.when(ok & (tot_p > 0) & (tot_n > 0))
            .then(num / (tot_p * tot_n))
            .otherwise(pl.lit(None, dtype=pl.Float64))
            .alias("roc_auc"))


def average_precision(y_score: IntoExpr, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                      pos_label: Label | None = None, neg_label: Label | None = None) -> pl.Expr:
    r"""Weighted average precision as an aggregation (scikit-learn's step rule).

    .. math:: \text{AP} = \sum_t (R_t - R_{t^+}) P_t = \frac{1}{W^+}\sum_{i: y_i=1} w_i\,
              P(s_i),\qquad P(s) = \frac{TP(s)}{TP(s) + FP(s)}

    with the counts at threshold :math:`s` (every row scored :math:`\ge s`). Equal to
    ``average_precision_score``; null without positives.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "s": [0.9, 0.8, 0.8, 0.1]})
    >>> round(df.select(pfm.average_precision("s", y_true="y")).item(), 4)
    0.8333
    """
    s, yt, w, ok = _valid_rows(y_score, y_true, weight, pos_label, neg_label)
    wp = pl.when(yt).then(w).otherwise(0.0)
    wall = pl.when(yt.is_not_null()).then(w).otherwise(0.0)
    ss = s.sort(descending=True)
    wp_s = wp.sort_by(s, descending=True)
    ctp = wp_s.cum_sum()
    call = wall.sort_by(s, descending=True).cum_sum()
    prec_end = (pl.when(ss.ne_missing(ss.shift(-1))).then(safe_div(ctp, call))
                .otherwise(None).backward_fill())
    num = pl.when(wp_s > 0).then(wp_s * prec_end).otherwise(0.0).sum()
    tot_p = wp.sum()
    return (pl.when(ok & (tot_p > 0)).then(num / tot_p)
            .otherwise(pl.lit(None, dtype=pl.Float64))
            .alias("average_precision"))


# --------------------------------------------------------------------------------------------
# plotting (optional extra)
# --------------------------------------------------------------------------------------------


def plot_curves(curve: pl.DataFrame | pl.LazyFrame, *, kind: Literal["roc", "pr"] = "roc",
                ax: Any = None, title: str | None = None) -> Any:
    """Plot a :func:`roc_curve` or :func:`pr_curve` table, one line per group.

    ROC curves are drawn as lines (the trapezoid of ROC AUC), PR curves as steps (the step rule
    of average precision).

    Needs matplotlib (``pip install polars_fairmetrics[plot]``). Collects a LazyFrame.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "s": [0.9, 0.8, 0.8, 0.1]})
    >>> ax = pfm.plot_curves(pfm.roc_curve(df, y_true="y", y_score="s"))
    >>> len(ax.get_lines())
    2
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "plot_curves needs matplotlib: pip install 'polars_fairmetrics[plot]'"
        ) from exc
    frame = curve.collect() if isinstance(curve, pl.LazyFrame) else curve
    x, y = ("fpr", "tpr") if kind == "roc" else ("recall", "precision")
    if x not in frame.columns or y not in frame.columns:
        raise InvalidOptionError(f"kind={kind!r} needs columns {x!r} and {y!r}")
    keys = [c for c in frame.columns if c not in ("threshold", x, y)]
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 4))
    parts = frame.partition_by(keys, maintain_order=True, as_dict=True) if keys else {
        ("all",): frame}
    for key, part in parts.items():
        label = ", ".join(str(k) for k in key)
        part = part.filter(pl.col(x).is_not_null() & pl.col(y).is_not_null())
        if kind == "pr":  # the step rule of average precision: P_i over (R_{i-1}, R_i]
            ax.step(part[x].to_numpy(), part[y].to_numpy(), where="pre", label=label)
        else:
            ax.plot(part[x].to_numpy(), part[y].to_numpy(), label=label)
    if kind == "roc":
        ax.plot([0, 1], [0, 1], linestyle=":", color="grey")
    ax.set_xlabel("false positive rate" if kind == "roc" else "recall")
    ax.set_ylabel("true positive rate" if kind == "roc" else "precision")
    if title:
        ax.set_title(title)
    if keys:
        ax.legend(title=", ".join(keys))
    return ax
