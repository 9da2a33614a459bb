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
  list), built by :func:`~polars_fairmetrics._validate.threshold_grid` — the grid
  :func:`~polars_fairmetrics.confusion_counts` uses too, so a grid curve table *is*
  ``confusion_counts`` at the same thresholds. Each grid threshold is the double nearest its
  decimal value (0.3, never 0.30000000000000004), so a score equal to a threshold is predicted
  positive there. Counts at the grid thresholds are exact; curve summaries computed from the grid
  are approximations (see :func:`curve_summaries`). The thresholds are the same for every group.
- ``"quantile"``: thresholds at ``bins + 1`` quantiles of the pooled scores (unweighted,
  ``interpolation="lower"`` so thresholds are observed scores). Costs a second scan for the
  quantiles.

Summaries (group values of ``docs/results.md``; null where undefined, never NaN): ROC AUC
(trapezoid over the ROC points; tied scores get half credit, as scikit-learn), average precision
(the step rule :math:`\sum_i (R_i - R_{i-1}) P_i`, as scikit-learn), and AUPR by the trapezoid
rule of the bias-adjusted-metrics document in three documented anchorings (``"trapezoid"``,
``"unanchored"``, ``"fixed_grid"``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal, cast

import numpy as np
import polars as pl

from polars_fairmetrics._typing import ColumnNames, FrameT, IntoExpr, Label
from polars_fairmetrics._validate import (
    as_integer,
    as_list,
    bin_count,
    check_reserved,
    check_score_summary,
    check_weight_summary,
    require_columns,
    require_numeric,
    resolve_label_spec,
    schema_of,
    threshold_grid,
    threshold_index,
)
from polars_fairmetrics.counts import (
    COUNT_COLUMNS,
    NULL_COLUMNS,
    WEIGHTED_COUNT_COLUMNS,
    is_weighted,
)
from polars_fairmetrics.deployment import (
    _FACTOR,
    Rate,
    TestRatio,
    _check_test_ratio,
    _same_kind,
    _with_factor,
)
from polars_fairmetrics.disparity import (
    _HAS_REF,
    Layout,
    Reference,
    ZeroReference,
    check_reference,
    compare,
    reference_label,
    reference_mask,
)
from polars_fairmetrics.exceptions import MSG_SCORE_NAN, InvalidOptionError, InvalidScoreError
from polars_fairmetrics.figures import plot_curves  # the figure of these tables
from polars_fairmetrics.inputs import accepts_tables
from polars_fairmetrics.metrics import (
    Counts,
    _as_expr,
    _label_guard,
    _raise_if,
    _row_labels,
    _weight_guard,
    false_positive_rate,
    key_columns,
    positive_predictive_value,
    safe_div,
    true_positive_rate,
)
from polars_fairmetrics.results import finish, to_wide
from polars_fairmetrics.weights import _show

__all__ = [
    "AUPR_MODES",
    "CURVE_MODES",
    "SUMMARIES",
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
AuprMode = Literal["trapezoid", "unanchored", "fixed_grid"]
CURVE_MODES: tuple[str, ...] = ("exact", "grid", "quantile")
"""Modes of :func:`curve_counts`."""
AUPR_MODES: tuple[str, ...] = ("trapezoid", "unanchored", "fixed_grid")
"""Anchorings of the trapezoid AUPR (see :func:`curve_summaries`)."""
SUMMARIES: tuple[str, ...] = ("roc_auc", "average_precision", "aupr")
"""Curve summaries computed by :func:`curve_summaries`."""

FIXED_GRID_POINTS = 50
"""Grid size of ``aupr_mode="fixed_grid"`` (the bias-adjusted-metrics notebook's AUPR)."""
_RENAMED_AUPR_MODES = {"seed": "unanchored", "notebook": "fixed_grid"}
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


# --------------------------------------------------------------------------------------------
# curve tables
# --------------------------------------------------------------------------------------------


@accepts_tables
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
        ``score_bounds`` — ``bins + 1`` thresholds including both bounds, each the double
        nearest its decimal value :math:`low + i (high - low) / bins` — or an explicit list of
        thresholds: the grid :func:`~polars_fairmetrics.confusion_counts` uses, so a grid curve
        table equals ``confusion_counts`` at the same thresholds) or ``"quantile"`` (``bins + 1``
        quantiles of the pooled scores).
    bins
        Grid size or explicit thresholds (binned modes only).
    score_bounds
        Allowed score range (``None``: any finite score); the range of an integer grid.
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
        rows were all left out (null label, score or weight) keeps one row with a null threshold
        and zero counts, so that its left-out rows are reported.

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
        raise InvalidOptionError(f"exact_method={exact_method!r}; expected 'aggregate' or 'sort'")
    schema = schema_of(data)
    keys = as_list(by)
    require_columns(schema, "y_true", [y_true])
    require_columns(schema, "y_score", [y_score])
    require_columns(schema, "group", keys)
    require_numeric(schema, y_score, "y_score")
    if weight is not None:
        require_columns(schema, "weight", [weight])
        require_numeric(schema, weight, "weight")
    check_reserved(
        keys,
        [*COUNT_COLUMNS, *WEIGHTED_COUNT_COLUMNS, *NULL_COLUMNS, "threshold", "metric", "value"],
    )
    spec = resolve_label_spec(schema, y_true, "y_true", pos_label, neg_label)
    lf = data.lazy()
    gkeys = keys if keys else [_ALL]
    key_exprs: list[pl.Expr] = (
        [pl.col(k) for k in keys] if keys else [pl.lit(0, dtype=pl.Int32).alias(_ALL)]
    )
    s = pl.col(y_score).cast(pl.Float64)
    thr_frame: pl.LazyFrame | None = None
    if mode == "exact":
        bin_expr = s.alias(_S)
    elif mode == "grid":
        grid = threshold_grid(bins, score_bounds)  # the grid of confusion_counts too
        bin_expr = threshold_index(s, grid, schema[y_score]).cast(pl.Float64).alias(_S)
        thr_frame = pl.LazyFrame(
            {_IDX: [float(i + 1) for i in range(len(grid))], "threshold": grid}
        )
    else:
        n_bins = bin_count(bins)
        if n_bins is None:
            raise InvalidOptionError(f"mode='quantile' needs an integer bins >= 1, got {bins!r}")
        bins = n_bins
        levels = [j / bins for j in range(bins + 1)]
        qnames = [f"_pfm_q{j}" for j in range(bins + 1)]
        finite = s.filter(s.is_not_nan())
        quant = lf.select(
            [
                finite.quantile(q, interpolation="lower").alias(nm)
                for q, nm in zip(levels, qnames, strict=True)
            ]
        )
        lf = lf.join(quant, how="cross")
        bin_expr = (
            pl.when(s.is_not_null())
            .then(
                pl.sum_horizontal([(s >= pl.col(nm)).cast(pl.Int64) for nm in qnames]).cast(
                    pl.Float64
                )
            )
            .alias(_S)
        )
        thr_frame = (
            quant.unpivot(on=qnames, variable_name="_pfm_qn", value_name="threshold")
            .with_columns(
                (pl.col("_pfm_qn").str.strip_prefix("_pfm_q").cast(pl.Int64) + 1)
                .cast(pl.Float64)
                .alias(_IDX)
            )
            .drop("_pfm_qn")
        )
    weighted = weight is not None
    if mode == "exact" and exact_method == "sort":
        table = _exact_by_sort(
            lf, keys, key_exprs, schema, spec, y_true, y_score, weight, score_bounds
        )
        if not keys:
            table = table.drop(_ALL)
        return table.collect() if isinstance(data, pl.DataFrame) else table
    cells = lf.group_by([*key_exprs, bin_expr]).agg(
        _cell_aggs(pl.col(y_true), schema[y_true], spec.pos, spec.neg, weight, s, mode != "exact")
    )
    out_schema = _cell_schema({k: schema[k] for k in keys} if keys else {_ALL: pl.Int32}, weighted)
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
            check_score_summary(
                y_score,
                cast("float | None", sc.min()),
                cast("float | None", sc.max()),
                int(sc.is_nan().sum()),
                score_bounds,
            )
        else:
            check_score_summary(
                y_score,
                cast("float | None", c[_SMIN].min()),
                cast("float | None", c[_SMAX].max()),
                int(cast(int, c[_SNAN].sum())),
                score_bounds,
            )
        if weight is not None:
            check_weight_summary(
                weight,
                cast("float | None", c[_WMIN].min()),
                cast("float | None", c[_WMAX].max()),
                float(c.select(pl.col(_PW).sum() + pl.col(_QW).sum()).item()) if c.height else None,
            )
        return c.select([pl.col(k).cast(v) for k, v in out_schema.items()])

    checked = cells.map_batches(guard, schema=out_schema)
    if mode == "exact":
        table = _cumulate_exact(checked, gkeys, weighted)
    else:
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


def _cell_aggs(
    y: pl.Expr,
    y_dtype: pl.DataType,
    pos: Label,
    neg: Label | None,
    weight: str | None,
    s: pl.Expr,
    binned: bool,
) -> list[pl.Expr]:
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
            (ip * has_w).sum().alias(_NP),
            (io * has_w).sum().alias(_NQ),
            (w * ip).sum().alias(_PW),
            (w * io).sum().alias(_QW),
            (y.is_not_null() & w.is_null()).sum().alias(_NWV),
            w.null_count().alias(_WNULL),
            w.min().alias(_WMIN),
            w.max().alias(_WMAX),
        ]
    else:
        aggs += [ip.sum().alias(_NP), io.sum().alias(_NQ)]
    exact_pair = (
        y_dtype.is_integer()
        and isinstance(pos, int)
        and isinstance(neg, int)
        and abs(pos - neg) == 1
    )
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


def _field(name: str) -> pl.Expr:
    """A field of the struct elements of a list (inside ``list.eval``)."""
    return pl.element().struct.field(name)


def _totals_from_curve(weighted: bool) -> list[pl.Expr]:
    """The weighted class totals of a group: the last cumulative sums of its curve list (added
    in score order, so independent of row order, engine and the group's place in memory),
    0 for a group without counted rows."""
    if not weighted:
        return []
    last = pl.col("_pfm_x").list.last().struct
    return [
        last.field("tp_w").fill_null(0.0).alias("_pfm_totpw"),
        last.field("fp_w").fill_null(0.0).alias("_pfm_totnw"),
    ]


def _exact_by_sort(
    lf: pl.LazyFrame,
    keys: list[str],
    key_exprs: list[pl.Expr],
    schema: pl.Schema,
    spec: Any,
    y_true: str,
    y_score: str,
    weight: str | None,
    score_bounds: tuple[float, float] | None,
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
    aggs = [
        a
        for a in _cell_aggs(y, schema[y_true], spec.pos, spec.neg, weight, s, True)
        if a.meta.output_name() in (_OMIN, _OMAX, _YNAN, _SNAN, _SMIN, _SMAX, _WMIN, _WMAX, _WNULL)
    ]
    # class counts of the counted rows: aggregations here, so that no window over the
    # exploded rows is needed (weighted totals: the curve's last cumulative sums)
    totals: dict[str, pl.Expr] = {_TOTP: ip, _TOTN: 1 - ip}
    aggs += [
        pl.struct(fields).filter(valid).sort_by(s.filter(valid), descending=True).alias("_pfm_x"),
        *[e.filter(valid).sum().alias(name) for name, e in totals.items()],
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
        check_score_summary(
            y_score,
            cast("float | None", c[_SMIN].min()),
            cast("float | None", c[_SMAX].max()),
            int(cast(int, c[_SNAN].sum())),
            score_bounds,
        )
        if weight is not None:
            check_weight_summary(
                weight,
                cast("float | None", c[_WMIN].min()),
                cast("float | None", c[_WMAX].max()),
                float(c[_W].sum()) if c.height else None,
            )
        return c

    checked = grouped.map_batches(guard, schema=out_schema)
    weighted = weight is not None

    # each group's curve within its own list (groups in parallel, no window over the rows):
    # cumulative sums in score order, then the last row of each run of tied scores
    t, p = _field("t"), _field("p")
    cums = [p.cum_sum().alias("tp"), (1 - p).cum_sum().alias("fp")]
    if weighted:
        w = _field("w")
        cums += [(w * p).cum_sum().alias("tp_w"), (w * (1 - p)).cum_sum().alias("fp_w")]
    end = t.ne_missing(t.shift(-1))
    curve = pl.col("_pfm_x").list.eval(pl.struct(t.alias("threshold"), *cums).filter(end))
    carried = [
        *gkeys,
        curve,
        *totals,
        "n_null",
        "n_null_y_true",
        "n_null_y_pred",
        *([pl.col(_WNULL).alias("n_null_weight")] if weighted else []),
    ]
    table = (
        checked.select(carried)  # the guard's summaries are not carried into the rows
        .with_columns(_totals_from_curve(weighted))
        .sort(gkeys, nulls_last=True)  # one row per group: rows follow in key order
        .explode("_pfm_x", empty_as_null=True)  # no counted row: one null-threshold row
        .unnest("_pfm_x")
    )
    return _finish(table, gkeys, weighted, dedupe=False)


def _cell_schema(key_schema: dict[str, Any], weighted: bool) -> dict[str, Any]:
    out = dict(key_schema)
    out.update({_S: pl.Float64, _NY: pl.Int64, _NP: pl.Int64, _NQ: pl.Int64})
    if weighted:
        out.update({_PW: pl.Float64, _QW: pl.Float64, _NWV: pl.Int64, _WNULL: pl.Int64})
    return out


def _cumulate_exact(cells: pl.LazyFrame, keys: list[str], weighted: bool) -> pl.LazyFrame:
    """From validated cells (one row per group and distinct score) to the exact curve table.

    One ``group_by`` over the keys (low cardinality) gathers each group's counted cells sorted
    by score descending, its class totals and its null counts; the cells are exploded back in
    key order and cumulated. No join and no global sort of the (possibly as many as the rows)
    cells: each group's cells are sorted within its own list.
    """
    inc = [_NP, _NQ, *([_PW, _QW] if weighted else [])]
    s = pl.col(_S)
    s_null = s.is_null()
    counted = s.is_not_null() & ((pl.col(_NP) + pl.col(_NQ)) > 0)
    # every row of the cell: counted, null label, null weight
    n_all = pl.col(_NP) + pl.col(_NQ) + pl.col(_NY) + (pl.col(_NWV) if weighted else 0)
    totals = {_TOTP: _NP, _TOTN: _NQ}  # weighted totals: the curve's last cumulative sums
    aggs: list[pl.Expr] = [
        pl.struct(s.alias("threshold"), *inc)
        .filter(counted)
        .sort_by(s.filter(counted), descending=True)
        .alias("_pfm_x"),
        *[pl.col(c).filter(~s_null).sum().alias(tot) for tot, c in totals.items()],
        (
            n_all.filter(s_null).sum()
            + pl.col(_NY).filter(~s_null).sum()
            + (pl.col(_NWV).filter(~s_null).sum() if weighted else pl.lit(0, dtype=pl.Int64))
        ).alias("n_null"),
        pl.col(_NY).sum().alias("n_null_y_true"),
        n_all.filter(s_null).sum().alias("n_null_y_pred"),
    ]
    if weighted:
        aggs.append(pl.col(_WNULL).sum().alias("n_null_weight"))
    names = {_NP: "tp", _NQ: "fp", _PW: "tp_w", _QW: "fp_w"}
    # a group whose rows all have a null label or score has no threshold: it keeps one row,
    # with a null threshold and zero counts, that reports its left-out rows
    cums = [_field(c).cum_sum().alias(names[c]) for c in inc]
    curve = pl.col("_pfm_x").list.eval(pl.struct(_field("threshold"), *cums))
    table = (
        cells.group_by(keys)
        .agg(aggs)
        .with_columns(curve)  # each group's cumulative sums within its list
        .with_columns(_totals_from_curve(weighted))
        .sort(keys, nulls_last=True)
        .explode("_pfm_x", empty_as_null=True)
        .unnest("_pfm_x")
    )
    return _finish(table, keys, weighted, dedupe=False)


def _cumulate(
    cells: pl.LazyFrame, keys: list[str], weighted: bool, thr_frame: pl.LazyFrame | None
) -> pl.LazyFrame:
    """From validated cells (one row per group and score or bin) to the cumulative curve table.

    One global sort of the cells (by keys, then score or bin descending) and cumulative sums
    within each group (``cum_sum().over(keys)``): no per-group list, no second sort.
    """
    inc = [_NP, _NQ, *([_PW, _QW] if weighted else [])]
    cells = cells.with_columns(  # every row of the cell: counted, null label, null weight
        (pl.col(_NP) + pl.col(_NQ) + pl.col(_NY) + (pl.col(_NWV) if weighted else 0)).alias(_N)
    )
    if thr_frame is None:
        rows = cells.with_columns(pl.col(_S).alias("threshold"), pl.col(_S).alias(_IDX))
    else:
        # binned: every group gets every grid threshold; bin 0 (below all) only feeds totals
        thr = pl.concat(
            [
                thr_frame.select(
                    pl.col(_IDX).cast(pl.Float64), pl.col("threshold").cast(pl.Float64)
                ),
                pl.LazyFrame({_IDX: [0.0], "threshold": [_BELOW]}),
            ]
        )
        counted = (
            cells.filter(pl.col(_S).is_not_null()).group_by([*keys, _S]).agg(pl.col(inc).sum())
        )
        rows = (
            cells.select(keys)
            .unique()
            .join(thr, how="cross")
            .join(counted.rename({_S: _IDX}), on=[*keys, _IDX], how="left", nulls_equal=True)
            .with_columns(pl.col(c).fill_null(0) for c in inc)
        )
    keep = pl.col(_IDX).is_not_null() & (
        (pl.col(_NP) + pl.col(_NQ)) > 0 if thr_frame is None else pl.lit(True)
    )
    s_null = pl.col(_S).is_null()
    points = rows.filter(keep).select(*keys, "threshold", _IDX, *inc)
    aggs: list[pl.Expr] = [
        pl.col(_NP).filter(~s_null).sum().alias(_TOTP),
        pl.col(_NQ).filter(~s_null).sum().alias(_TOTN),
        (
            pl.col(_N).filter(s_null).sum()
            + pl.col(_NY).filter(~s_null).sum()
            + (pl.col(_NWV).filter(~s_null).sum() if weighted else pl.lit(0, dtype=pl.Int64))
        ).alias("n_null"),
        pl.col(_NY).sum().alias("n_null_y_true"),
        pl.col(_N).filter(s_null).sum().alias("n_null_y_pred"),
    ]
    if weighted:
        aggs += [
            pl.col(_PW).filter(~s_null).sum().alias("_pfm_totpw"),
            pl.col(_QW).filter(~s_null).sum().alias("_pfm_totnw"),
            pl.col(_WNULL).sum().alias("n_null_weight"),
        ]
    # a group whose rows all have a null label or score has no threshold (exact mode): it keeps
    # one row, with a null threshold and zero counts, that reports its left-out rows
    grouped = cells.group_by(keys).agg(aggs).join(points, on=keys, how="left", nulls_equal=True)
    names = {_NP: "tp", _NQ: "fp", _PW: "tp_w", _QW: "fp_w"}
    order = [*keys, _IDX]
    table = grouped.sort(  # the one sort: keys, then threshold descending
        order, descending=[False] * len(keys) + [True], nulls_last=True
    ).with_columns([pl.col(c).cum_sum().over(keys).alias(names[c]) for c in inc])
    return _finish(table, keys, weighted, dedupe=thr_frame is not None)


def _finish(table: pl.LazyFrame, keys: list[str], weighted: bool, dedupe: bool) -> pl.LazyFrame:
    """Cumulative counts + class totals → the curve table's columns and dtypes."""
    int_cols = ["tp", "fp", "tn", "fn"]
    w_cols = ["tp_w", "fp_w", "tn_w", "fn_w"] if weighted else []
    sums = [
        "tp",
        "fp",
        _TOTP,
        _TOTN,
        *(["tp_w", "fp_w", "_pfm_totpw", "_pfm_totnw"] if weighted else []),
    ]
    table = table.with_columns(pl.col(sums).fill_null(0))  # a group without counted rows
    table = table.with_columns(
        pl.col("tp").cast(pl.Int64),
        pl.col("fp").cast(pl.Int64),
        (pl.col(_TOTN) - pl.col("fp")).cast(pl.Int64).alias("tn"),
        (pl.col(_TOTP) - pl.col("tp")).cast(pl.Int64).alias("fn"),
    )
    if weighted:
        table = table.with_columns(
            # exact zeros where no row of the class is left (no rounding residue)
            pl.when(pl.col("tn") == 0)
            .then(0.0)
            .otherwise(pl.col("_pfm_totnw") - pl.col("fp_w"))
            .alias("tn_w"),
            pl.when(pl.col("fn") == 0)
            .then(0.0)
            .otherwise(pl.col("_pfm_totpw") - pl.col("tp_w"))
            .alias("fn_w"),
        )
    table = table.filter((pl.col("threshold") != _BELOW).fill_null(True))
    if dedupe:  # tied quantiles: equal thresholds have equal counts
        table = table.unique([*keys, "threshold"], keep="any", maintain_order=True)
    table = table.with_columns(pl.sum_horizontal(int_cols).alias("n"))
    if weighted:
        table = table.with_columns(pl.sum_horizontal(w_cols).alias("n_w"))
    null_cols = ["n_null", "n_null_y_true", "n_null_y_pred"] + (
        ["n_null_weight"] if weighted else []
    )
    out = [*keys, "threshold", *int_cols, "n", *w_cols, *(["n_w"] if weighted else []), *null_cols]
    return table.select(
        [
            *keys,
            "threshold",
            *[pl.col(c).cast(pl.Int64) for c in (*int_cols, "n")],
            *w_cols,
            *(["n_w"] if weighted else []),
            *[pl.col(c).cast(pl.Int64) for c in null_cols],
        ]
    ).select(out)


def _desc(expr: pl.Expr, keys: list[str], order: str) -> pl.Expr:
    """``expr`` within each group, rows taken in descending ``order``."""
    return expr.over(keys if keys else pl.lit(0), order_by=pl.col(order), descending=True)


def _table_and_keys(
    data: FrameT,
    *,
    y_true: str | None,
    y_score: str | None,
    by: ColumnNames | None,
    weight: str | None,
    pos_label: Label | None,
    neg_label: Label | None,
    mode: CurveMode,
    bins: int | Sequence[float],
    score_bounds: tuple[float, float] | None,
    exact_method: Literal["aggregate", "sort"],
) -> tuple[FrameT, list[str], bool]:
    """A curve table (counted from rows when ``y_true`` is given), its group keys, and whether it
    is known to be sorted by keys, then threshold descending (a table just counted is)."""
    if y_true is not None:
        if y_score is None:
            raise InvalidOptionError("y_true= needs y_score= (the score column) for a curve")
        table = curve_counts(
            data,
            y_true=y_true,
            y_score=y_score,
            by=by,
            weight=weight,
            pos_label=pos_label,
            neg_label=neg_label,
            mode=mode,
            bins=bins,
            score_bounds=score_bounds,
            exact_method=exact_method,
        )
        return table, as_list(by), True
    given = {"y_score": y_score, "weight": weight, "pos_label": pos_label, "neg_label": neg_label}
    stray = [k for k, v in given.items() if v is not None]
    if stray:
        raise InvalidOptionError(
            f"{', '.join(stray)}= given without y_true=: options apply to rows; pass y_true= and "
            "y_score= with rows, or a curve table alone"
        )
    schema = schema_of(data)
    columns = list(schema.names())
    missing = [c for c in ("threshold", "tp", "fp", "tn", "fn") if c not in columns]
    if missing:
        raise InvalidOptionError(
            "pass rows with y_true= and y_score=, or a curve table (curve_counts); missing "
            f"column(s): {', '.join(missing)}"
        )
    if by is None:
        keys = [c for c in key_columns(columns) if c != "threshold"]
    else:
        keys = as_list(by)
        require_columns(schema, "group", keys)
    return data, keys, False


def _use_weighted(columns: Sequence[str], weighted: bool | None) -> bool:
    has = is_weighted(columns)
    if weighted and not has:
        raise InvalidOptionError(
            "weighted=True but the curve table has no tp_w … columns; pass weight= when counting"
        )
    return has if weighted is None else weighted


def _base(weighted: bool) -> tuple[pl.Expr, pl.Expr, pl.Expr, pl.Expr]:
    """TP, FP, P (positives), N (negatives) as Float64 expressions over a curve table."""
    sfx = "_w" if weighted else ""
    tp = pl.col(f"tp{sfx}").cast(pl.Float64)
    fp = pl.col(f"fp{sfx}").cast(pl.Float64)
    pos = tp + pl.col(f"fn{sfx}").cast(pl.Float64)
    neg = fp + pl.col(f"tn{sfx}").cast(pl.Float64)
    return tp, fp, pos, neg


def _points(
    table: FrameT,
    keys: Sequence[str],
    weighted: bool,
    deploy_positive_rate: Rate | None,
    deploy_neg_pos_ratio: Rate | None,
    extra: Sequence[pl.Expr] = (),
    test_ratio: TestRatio = "pooled",
) -> FrameT:
    """keys, threshold, TP, FP (deployment-corrected), P, N as Float64 (and ``extra``).

    The deployment factor compares the deployment class ratio with the test ratio of all groups
    pooled (within each partition: attribute, replicate …) or, with ``test_ratio="per_group"``,
    with each group's own — as :func:`~polars_fairmetrics.deployment.deployment_counts`."""
    _check_test_ratio(test_ratio)
    tp, fp, pos, neg = _base(weighted)

    def columns(fp: pl.Expr, neg: pl.Expr) -> list[Any]:
        return [
            *keys,
            "threshold",
            tp.alias(_TP),
            fp.alias(_FP),
            pos.alias(_TOTP),
            neg.alias(_TOTN),
            *extra,
        ]

    if deploy_positive_rate is None and deploy_neg_pos_ratio is None:
        return table.select(columns(fp, neg))
    # the one deployment factor (its checks, per-group mappings, pooled test ratio counting
    # each group once over the thresholds) of polars_fairmetrics.deployment
    lazy, _, _, _ = _with_factor(
        table, deploy_positive_rate, deploy_neg_pos_ratio, None, weighted, test_ratio
    )
    f = pl.col(_FACTOR)
    return _same_kind(lazy.select(columns(fp * f, neg * f)), table)


def _drop_weightless(points: FrameT, keys: list[str]) -> FrameT:
    """Drop thresholds whose rows all weigh 0 (scikit-learn drops zero-weight samples)."""
    mass = pl.col(_TP) + pl.col(_FP)
    prev = _desc(mass.shift(1, fill_value=0.0), keys, "threshold")
    return points.filter(mass != prev)


def _sorted_points(points: FrameT, keys: list[str]) -> FrameT:
    """Points by keys, then threshold descending (a group without a curve: its null row last)."""
    order = [*keys, "threshold"]
    return points.sort(order, descending=[False] * len(keys) + [True], nulls_last=True)


@accepts_tables
def roc_curve(
    data: FrameT,
    *,
    y_true: str | None = None,
    y_score: str | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    mode: CurveMode = "exact",
    bins: int | Sequence[float] = 100,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
    exact_method: Literal["aggregate", "sort"] = "aggregate",
    weighted: bool | None = None,
    anchor: bool = True,
) -> FrameT:
    r"""ROC curve per group: false and true positive rates at every threshold.

    .. math:: FPR(t) = FP(t) / N,\qquad TPR(t) = TP(t) / P

    with the counts of the rule ``score >= t``.

    Parameters
    ----------
    data
        Rows (pass ``y_true=`` and ``y_score=``) or a curve table (:func:`curve_counts`).
    y_true, y_score, by, weight, pos_label, neg_label, mode, bins, score_bounds, exact_method
        As for :func:`curve_counts` (rows only; ``by=`` may also name a curve table's keys).
    weighted
        Use the weighted sums (default: when present). Weighted curves drop thresholds whose
        rows all weigh 0, as scikit-learn does.
    anchor
        Start each curve at (0, 0) with ``threshold = +inf`` (scikit-learn's convention).

    Returns
    -------
    DataFrame or LazyFrame
        The curve-points kind of ``docs/results.md``: keys, ``threshold`` (Float64, descending
        within a group), ``fpr``, ``tpr`` (Float64; null for a group without negatives, resp.
        positives). Equal to ``sklearn.metrics.roc_curve(..., drop_intermediate=False)``. A
        group without counted rows has no point.

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
    table, keys, _ = _table_and_keys(
        data,
        y_true=y_true,
        y_score=y_score,
        by=by,
        weight=weight,
        pos_label=pos_label,
        neg_label=neg_label,
        mode=mode,
        bins=bins,
        score_bounds=score_bounds,
        exact_method=exact_method,
    )
    check_reserved(keys, ["fpr", "tpr"])  # the curve's own columns
    use_w = _use_weighted(list(schema_of(table).names()), weighted)
    pts = _points(table, keys, use_w, None, None).filter(pl.col("threshold").is_not_null())
    if use_w:
        pts = _drop_weightless(pts, keys)
    if anchor:
        start = [
            pl.lit(math.inf).alias("threshold"),
            pl.lit(0.0).alias(_TP),
            pl.lit(0.0).alias(_FP),
            pl.col(_TOTP).first(),
            pl.col(_TOTN).first(),
        ]
        first = pts.group_by(keys).agg(start) if keys else pts.select(start).head(1)
        pts = pl.concat([first.select(schema_of(pts).names()), pts], how="vertical")
    c = _point_counts(pl.col(_TP), pl.col(_FP), pl.col(_TOTP), pl.col(_TOTN))
    out = pts.select(
        *keys,
        "threshold",
        false_positive_rate(c).alias("fpr"),
        true_positive_rate(c).alias("tpr"),
    )
    return _sorted_points(out, keys)


@accepts_tables
def pr_curve(
    data: FrameT,
    *,
    y_true: str | None = None,
    y_score: str | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    mode: CurveMode = "exact",
    bins: int | Sequence[float] = 100,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
    exact_method: Literal["aggregate", "sort"] = "aggregate",
    weighted: bool | None = None,
    anchor: bool = True,
    deploy_positive_rate: Rate | None = None,
    deploy_neg_pos_ratio: Rate | None = None,
    test_ratio: TestRatio = "pooled",
) -> FrameT:
    r"""Precision–recall curve per group, optionally corrected to a deployment class ratio.

    .. math::

        \text{precision}(t) = \frac{TP(t)}{TP(t) + f \cdot FP(t)},\qquad
        \text{recall}(t) = \frac{TP(t)}{P},\qquad
        f = \frac{neg_{deploy} / pos_{deploy}}{neg_{test} / pos_{test}}

    with :math:`f = 1` unless a deployment class balance is given (the deployment-precision
    document: negatives are scaled, recall is unchanged; :math:`neg_{test}/pos_{test}` is each
    group's own (weighted) class ratio).

    Parameters
    ----------
    data
        Rows (pass ``y_true=`` and ``y_score=``) or a curve table (:func:`curve_counts`).
    y_true, y_score, by, weight, pos_label, neg_label, mode, bins, score_bounds, exact_method
        As for :func:`curve_counts` (rows only; ``by=`` may also name a curve table's keys).
    weighted
        Use the weighted sums (default: when present); thresholds whose rows all weigh 0 are
        dropped, as scikit-learn does.
    anchor
        Add scikit-learn's end point (recall 0, precision 1) with ``threshold = +inf``.
    deploy_positive_rate, deploy_neg_pos_ratio
        The deployment class balance: positive share :math:`\pi` (ratio :math:`(1-\pi)/\pi`) or
        the negative/positive ratio. At most one. A mapping ``{group: value}`` gives each group
        its own (with ``test_ratio="per_group"``; keys typed like the group column), as in
        :func:`~polars_fairmetrics.deployment.deployment_counts`.
    test_ratio
        Which test class ratio the deployment ratio is compared with: ``"pooled"`` (default;
        all groups together, one factor for every group, the groups' base-rate differences
        kept) or ``"per_group"`` (each group's own). The same option and default as
        :func:`~polars_fairmetrics.deployment_counts`.

    Returns
    -------
    DataFrame or LazyFrame
        The curve-points kind of ``docs/results.md``: keys, ``threshold`` (descending, so recall
        ascending), ``precision`` (null where nothing is predicted positive — possible only on a
        binned grid), ``recall`` (null for a group without positives). Equal to
        ``sklearn.metrics.precision_recall_curve`` reversed. A group without counted rows has
        no point.

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
    table, keys, _ = _table_and_keys(
        data,
        y_true=y_true,
        y_score=y_score,
        by=by,
        weight=weight,
        pos_label=pos_label,
        neg_label=neg_label,
        mode=mode,
        bins=bins,
        score_bounds=score_bounds,
        exact_method=exact_method,
    )
    check_reserved(keys, ["precision", "recall"])  # the curve's own columns
    use_w = _use_weighted(list(schema_of(table).names()), weighted)
    pts = _points(
        table, keys, use_w, deploy_positive_rate, deploy_neg_pos_ratio, test_ratio=test_ratio
    )
    pts = pts.filter(pl.col("threshold").is_not_null())
    if use_w:
        pts = _drop_weightless(pts, keys)
    c = _point_counts(pl.col(_TP), pl.col(_FP), pl.col(_TOTP), pl.col(_TOTN))
    out = pts.select(
        *keys,
        "threshold",
        positive_predictive_value(c).alias("precision"),
        true_positive_rate(c).alias("recall"),
    )
    if anchor:
        start = [
            pl.lit(math.inf).alias("threshold"),
            pl.lit(1.0).alias("precision"),
            pl.lit(0.0).alias("recall"),
        ]
        head = out.group_by(keys).agg(start) if keys else out.select(start).head(1)
        out = pl.concat([head, out], how="vertical_relaxed")
    return _sorted_points(out, keys)


# --------------------------------------------------------------------------------------------
# summaries
# --------------------------------------------------------------------------------------------


def _point_counts(tp: pl.Expr, fp: pl.Expr, positives: pl.Expr, negatives: pl.Expr) -> Counts:
    """The confusion counts of a curve point (counts at or above its threshold), so that the
    core's metric definitions give its rates: tn = negatives − fp, fn = positives − tp."""
    return Counts(tp=tp, fp=fp, tn=negatives - fp, fn=positives - tp)


_PC = "_pfm_pc"  # positives of the group (unweighted: the support)
_NC = "_pfm_nc"  # negatives of the group (unweighted)
_LAST = "_pfm_last"
_KEEP = "_pfm_keep"
_START = "_pfm_start"
_SEG = "_pfm_seg"
_TPR = "_pfm_tpr"
_FPR = "_pfm_fpr"
_PREC = "_pfm_prec"


def _rate_columns() -> list[pl.Expr]:
    """TPR, FPR and precision of each point (the core's definitions), computed once as columns
    that the summary terms read (with their shifts)."""
    c = _point_counts(pl.col(_TP), pl.col(_FP), pl.col(_TOTP), pl.col(_TOTN))
    return [
        true_positive_rate(c).alias(_TPR),
        false_positive_rate(c).alias(_FPR),
        positive_predictive_value(c).alias(_PREC),
    ]


def _segment_marks(keys: list[str]) -> list[pl.Expr]:
    """Over rows whose groups are contiguous: each group's first row (``_pfm_start``), last row
    (``_pfm_last``) and an integer group number (``_pfm_seg``), from comparisons of consecutive
    keys — no hashing of the keys, no window."""
    first = pl.int_range(pl.len()) == 0
    start = pl.any_horizontal([pl.col(k).ne_missing(pl.col(k).shift(1)) for k in keys]) | first
    return [
        start.alias(_START),
        start.shift(-1, fill_value=True).alias(_LAST),
        start.cast(pl.Int64).cum_sum().alias(_SEG),
    ]


def _summary_columns(
    aupr_mode: AuprMode, names: list[str]
) -> tuple[list[pl.Expr], list[str], list[pl.Expr]]:
    """Summaries as sums of elementwise terms of consecutive points, over points whose groups
    are contiguous and sorted by threshold descending (with :func:`_segment_marks` and
    :func:`_rate_columns`).

    Returns the terms (one column per summary, elementwise: the previous point is the previous
    row unless the row starts its group), the names of the columns to sum within each group,
    and the values, read on each group's last point from those sums. The sums are running sums
    within each group (``cum_sum().over(_pfm_seg)``, an integer segment number): they add in
    threshold order, so every engine, row order and group position gives the same floats (a
    SIMD ``sum()`` would depend on where the group sits in memory). No per-group list, no
    second sort."""
    start = pl.col(_START)

    def prev(e: pl.Expr, fill: float) -> pl.Expr:  # the previous point of the group
        return pl.when(start).then(pl.lit(fill)).otherwise(e.shift(1))

    pos, neg = pl.col(_TOTP), pl.col(_TOTN)
    tpr, fpr, prec = pl.col(_TPR), pl.col(_FPR), pl.col(_PREC)
    last = pl.col(_LAST)
    has_pos = pos > 0
    null = pl.lit(None, dtype=pl.Float64)
    tpr_prev = prev(tpr, 0.0)
    prevalence = safe_div(pos, pos + neg)
    terms: list[pl.Expr] = []
    sums: list[str] = []
    aggs: list[pl.Expr] = []

    def term(name: str, inner: pl.Expr, closing: pl.Expr) -> pl.Expr:
        sums.append(name)
        return (inner.fill_null(0.0) + closing.fill_null(0.0)).alias(name)

    if "roc_auc" in names:
        fpr_prev = prev(fpr, 0.0)
        terms.append(
            term(
                "_pfm_roc",
                (fpr - fpr_prev) * (tpr + tpr_prev),
                pl.when(last).then((1.0 - fpr) * (1.0 + tpr)),
            )
        )
        area = pl.col("_pfm_roc") / 2.0
        aggs.append(pl.when(has_pos & (neg > 0)).then(area).otherwise(null).alias("roc_auc"))
    if "average_precision" in names:
        step = tpr - tpr_prev
        terms.append(
            term(
                "_pfm_ap",
                pl.when(step == 0).then(0.0).otherwise(step * prec),
                pl.when(last).then((1.0 - tpr) * prevalence),
            )
        )
        ap = pl.col("_pfm_ap")
        aggs.append(pl.when(has_pos).then(ap).otherwise(null).alias("average_precision"))
    if "aupr" in names and aupr_mode != "fixed_grid":
        keep = pl.col(_KEEP)
        # points without a defined precision are skipped. They have nothing predicted positive
        # (TP + f FP = 0); the counts only grow as the threshold falls, so they are a prefix
        # of the group: the previous kept point is the previous row when that row is kept, and
        # the last kept point is the group's last row when it is kept
        prev_kept = ~start & keep.shift(1).fill_null(False)
        r_prev: pl.Expr = pl.when(prev_kept).then(tpr.shift(1))
        p_prev: pl.Expr = pl.when(prev_kept).then(prec.shift(1))
        if aupr_mode == "trapezoid":  # scikit-learn's start (recall 0, precision 1)
            r_prev, p_prev = r_prev.fill_null(0.0), p_prev.fill_null(1.0)
        terms.append(
            term(
                "_pfm_aupr",
                pl.when(keep).then(0.5 * (tpr - r_prev) * (prec + p_prev)),
                pl.when(last & keep).then(0.5 * (1.0 - tpr) * (prec + prevalence)),
            )
        )
        area = pl.col("_pfm_aupr")
        aggs.append(pl.when(has_pos & keep).then(area).otherwise(null).alias("aupr"))
    return terms, sums, aggs


def _fixed_grid_points(points: pl.LazyFrame, keys: list[str], n_points: int) -> pl.LazyFrame:
    """Counts at the fixed grid of the bias-adjusted-metrics notebook: ``np.linspace(top, 0,
    n_points)`` (``top`` = the group's max score, computed as numpy does: ``i · step + top``
    with ``step = (0 − top) / (n_points − 1)``, the last point 0), kept up to the first point
    with recall 1. Columns: keys, ``_pfm_gid``, grid index, threshold, TP, FP, P, N."""
    gid = pl.struct(keys).hash().alias(_GID)  # joins by one non-null column (null keys too)
    pts = points.filter(pl.col("threshold").is_not_null()).with_columns(gid)
    grid_idx = pl.LazyFrame({_IDX: list(range(n_points))}, schema={_IDX: pl.Int64})
    tops = pts.group_by(_GID, *keys).agg(
        pl.col("threshold").max().alias("_pfm_top"),
        pl.col("threshold").min().alias("_pfm_low"),
        pl.col(_TOTP).first(),
        pl.col(_TOTN).first(),
    )

    def linspace(frame: pl.DataFrame) -> pl.DataFrame:
        below = frame.filter(pl.col("_pfm_low") < 0)
        if below.height:
            # the grid runs from the max score down to 0 (scores in [0, 1], t in (1, 0]): a
            # score below 0 is never counted, and a max below 0 turns the grid upwards
            # (a negative area); refuse rather than give a number the notebook never meant
            low, group = below["_pfm_low"][0], below.select(keys).row(0) if keys else None
            where = f" in the group {_show(group)!r} of column(s) {keys}" if keys else ""
            raise InvalidScoreError(
                f"aupr_mode='fixed_grid' needs scores >= 0 (its grid runs from the group's max "
                f"score down to 0); a score is {low!r}{where}: use aupr_mode='trapezoid' or "
                "'unanchored' for scores on another scale"
            )
        frame = frame.drop("_pfm_low")
        # numpy's own arithmetic (Polars would fuse i * step + top into one rounded FMA)
        top = frame["_pfm_top"].to_numpy().astype(np.float64)
        i = frame[_IDX].to_numpy().astype(np.float64)
        t = i * ((0.0 - top) / float(n_points - 1))
        t += top
        t[i == n_points - 1] = 0.0
        return frame.with_columns(pl.Series("_pfm_t", t, dtype=pl.Float64))

    cross = tops.join(grid_idx, how="cross")
    schema = {k: v for k, v in cross.collect_schema().items() if k != "_pfm_low"}
    grid = cross.map_batches(linspace, schema={**schema, "_pfm_t": pl.Float64})
    right = pts.select(_GID, "threshold", _TP, _FP).sort("threshold")
    joined = (
        grid.sort("_pfm_t")
        .join_asof(  # counts at t: those of the smallest observed score >= t
            right,
            left_on="_pfm_t",
            right_on="threshold",
            by=_GID,
            strategy="forward",
            check_sortedness=False,
        )
        .with_columns(pl.col(_TP).fill_null(0.0), pl.col(_FP).fill_null(0.0))
        .sort(_GID, _IDX)
    )
    at_one = pl.col(_TP) >= pl.col(_TOTP) * (1.0 - _RECALL_ONE)
    before = at_one.cast(pl.Int64).cum_sum().shift(1, fill_value=0).over(_GID)
    return joined.filter(before == 0).select(
        _GID, *keys, _IDX, pl.col("_pfm_t").alias("threshold"), _TP, _FP, _TOTP, _TOTN
    )


def _fixed_grid_aupr(points: pl.LazyFrame, keys: list[str], n_points: int) -> pl.LazyFrame:
    r"""AUPR on the fixed grid: :math:`\sum_i \tfrac12 (r_i - r_{i-1})(p_i + p_{i-1})` over the
    grid points, precision 0 where nothing is predicted positive, 0 without positives (what the
    notebook computes)."""
    pts = _fixed_grid_points(points, keys, n_points)
    c = _point_counts(pl.col(_TP), pl.col(_FP), pl.col(_TOTP), pl.col(_TOTN))
    r = true_positive_rate(c)
    p = positive_predictive_value(c).fill_null(0.0)
    term = (0.5 * (r - r.shift(1)) * (p + p.shift(1))).fill_null(0.0)
    last = pl.int_range(pl.len()) == pl.len() - 1
    area = pl.when(pl.col(_TOTP) > 0).then(term.cum_sum()).otherwise(0.0)
    return (
        pts.with_columns(area.over(_GID).alias("aupr"), last.over(_GID).alias(_LAST))
        .filter(pl.col(_LAST))
        .select(*keys, "aupr")
    )


def _check_summaries(
    summaries: str | Sequence[str] | None, aupr_mode: str, fixed_grid_points: int
) -> list[str]:
    if aupr_mode not in AUPR_MODES:
        hint = (
            f" (renamed {_RENAMED_AUPR_MODES[aupr_mode]!r})"
            if aupr_mode in _RENAMED_AUPR_MODES
            else ""
        )
        raise InvalidOptionError(f"aupr_mode={aupr_mode!r}{hint}; expected one of {AUPR_MODES}")
    names = (
        list(SUMMARIES)
        if summaries is None
        else ([summaries] if isinstance(summaries, str) else list(summaries))
    )
    for nm in names:
        if nm not in SUMMARIES:
            raise InvalidOptionError(f"unknown summary {nm!r}; expected some of {SUMMARIES}")
    if not names:
        raise InvalidOptionError(f"summaries= is empty; expected some of {SUMMARIES}")
    points = as_integer(fixed_grid_points)
    if points is None:
        raise InvalidOptionError(f"fixed_grid_points={fixed_grid_points!r} must be an integer")
    if points < 2:
        raise InvalidOptionError(f"fixed_grid_points={fixed_grid_points!r} must be >= 2")
    return [n for n in SUMMARIES if n in names]


def _in_curve_order(table: pl.DataFrame, keys: list[str]) -> bool:
    """Whether an in-memory curve table is already in an order the summaries can read: keys
    non-decreasing (nulls last; so each group's rows are contiguous), thresholds descending
    within a group, a null threshold only last.

    One pass of comparisons of consecutive rows, much cheaper than the sort it spares (a table
    from :func:`curve_counts` is in this order). A key type without an order Polars can compare
    answers ``False`` (the table is then sorted)."""
    if table.height < 2:
        return True
    ok: pl.Expr = pl.lit(True)
    for k in reversed(keys):  # lexicographic: the first key decides, then the next ...
        cur, prev = pl.col(k), pl.col(k).shift(1)
        greater = (cur > prev).fill_null(False) | (cur.is_null() & prev.is_not_null())
        ok = greater | (cur.eq_missing(prev) & ok)
    cur, prev = pl.col("threshold"), pl.col("threshold").shift(1)
    desc = prev.is_not_null() & (cur.is_null() | (cur <= prev)).fill_null(False)
    ok = _and_within(ok, desc, keys)
    try:
        return bool(table.select(ok.slice(1).all()).item())
    except pl.exceptions.PolarsError:  # keys Polars cannot order
        return False


def _and_within(keys_ok: pl.Expr, within: pl.Expr, keys: list[str]) -> pl.Expr:
    """Row order test: a new group (keys strictly greater) or the same group with ``within``."""
    if not keys:
        return within
    same = pl.all_horizontal([pl.col(k).eq_missing(pl.col(k).shift(1)) for k in keys])
    return pl.when(same).then(within).otherwise(keys_ok)


def _summaries_of(
    table: pl.DataFrame | pl.LazyFrame,
    keys: list[str],
    names: list[str],
    aupr_mode: AuprMode,
    use_w: bool,
    deploy_positive_rate: Rate | None,
    deploy_neg_pos_ratio: Rate | None,
    fixed_grid_points: int,
    presorted: bool,
    test_ratio: TestRatio = "pooled",
) -> pl.LazyFrame:
    """The long summaries of every group of a curve table: keys, ``metric``, ``value``,
    ``support``, ``n``, ``n_null`` (, ``n_w``), in the order of ``docs/results.md``."""
    lazy = table.lazy()
    columns = list(schema_of(lazy).names())
    gk = keys if keys else [_ALL]
    if not keys:
        lazy = lazy.with_columns(pl.lit(0, dtype=pl.Int32).alias(_ALL))
    ints = _base(False)
    sizes: dict[str, pl.Expr] = {
        "n": pl.col("n") if "n" in columns else pl.sum_horizontal("tp", "fp", "tn", "fn"),
        "n_null": pl.col("n_null") if "n_null" in columns else pl.lit(0, dtype=pl.Int64),
        **({"n_w": pl.col("n_w")} if use_w and "n_w" in columns else {}),
        _PC: ints[2],
        _NC: ints[3],
    }
    # the sizes are read on each group's last point: carry their inputs, compute them there
    carried = [c for c in ("tp", "fp", "tn", "fn", "n", "n_null", "n_w") if c in columns]
    pts = _points(
        lazy,
        gk,
        use_w,
        deploy_positive_rate,
        deploy_neg_pos_ratio,
        [pl.col(c) for c in carried],
        test_ratio,
    )
    if not presorted and not (isinstance(table, pl.DataFrame) and _in_curve_order(table, keys)):
        pts = _sorted_points(pts, gk)
    pts = pts.with_columns(*_segment_marks(gk), *_rate_columns()).with_columns(
        pl.col(_PREC).is_not_null().alias(_KEEP)
    )
    terms, sums, values = _summary_columns(aupr_mode, names)
    firsts = [e.cast(pl.Float64 if k == "n_w" else pl.Int64).alias(k) for k, e in sizes.items()]
    wide = (
        pts.with_columns(terms)
        .with_columns(pl.col(sums).cum_sum().over(_SEG))
        .filter(pl.col(_LAST))  # one row per group: its last point holds the sums
        .select(*gk, *firsts, *values)
    )
    if "aupr" in names and aupr_mode == "fixed_grid":
        fixed = _fixed_grid_aupr(pts, gk, fixed_grid_points)
        wide = wide.join(fixed, on=gk, how="left", nulls_equal=True)
    support = {
        "roc_auc": pl.col(_PC) * pl.col(_NC),  # positive-negative pairs: Mann-Whitney's count
        "average_precision": pl.col(_PC),
        "aupr": pl.col(_PC),
    }
    size_cols = [k for k in sizes if k not in (_PC, _NC)]
    parts = [
        wide.select(
            *keys,
            pl.lit(m, dtype=pl.String).alias("metric"),
            pl.col(m).cast(pl.Float64).alias("value"),
            support[m].cast(pl.Int64).alias("support"),
            *size_cols,
        )
        for m in names
    ]
    return finish(pl.concat(parts, how="vertical"), keys=keys, partitions=[], order=names)


@accepts_tables
def curve_summaries(
    data: FrameT,
    *,
    y_true: str | None = None,
    y_score: str | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    mode: CurveMode = "exact",
    bins: int | Sequence[float] = 100,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
    exact_method: Literal["aggregate", "sort"] = "aggregate",
    summaries: str | Sequence[str] | None = None,
    aupr_mode: AuprMode = "trapezoid",
    weighted: bool | None = None,
    deploy_positive_rate: Rate | None = None,
    deploy_neg_pos_ratio: Rate | None = None,
    test_ratio: TestRatio = "pooled",
    fixed_grid_points: int = FIXED_GRID_POINTS,
    wide: bool = False,
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
    - ``"unanchored"``: only the curve's own points (no recall-0 anchor), from the highest
      threshold's recall — the set :math:`E` of the bias-adjusted-metrics document literally;
    - ``"fixed_grid"``: ``fixed_grid_points`` thresholds ``np.linspace(top, 0,
      fixed_grid_points)`` from the group's max score down to 0, stopping at the first point
      with recall 1, no recall-0 anchor, precision 0 where nothing is predicted positive and an
      AUPR of 0 for a group without positives — the bias-adjusted-metrics notebook's
      computation, reproduced exactly.

    Points with undefined precision (nothing predicted positive, possible only on a binned grid)
    are skipped by AP and the first two AUPR modes. On a binned grid whose lowest threshold does
    not reach every row, both PR summaries close the curve at (recall 1, prevalence), the point of
    predicting everything positive.

    Parameters
    ----------
    data
        A curve table (:func:`curve_counts`) or rows with ``y_true=`` and ``y_score=``.
    y_true, y_score, by, weight, pos_label, neg_label, mode, bins, score_bounds, exact_method
        As for :func:`curve_counts` (rows only; ``by=`` may also name a curve table's keys).
    summaries
        Some of :data:`SUMMARIES` (default: all).
    aupr_mode
        ``"trapezoid"``, ``"unanchored"`` or ``"fixed_grid"``.
    weighted
        Use the weighted sums (default: when present).
    deploy_positive_rate, deploy_neg_pos_ratio, test_ratio
        Correct precision to a deployment class balance (see :func:`pr_curve`); ROC AUC is
        unchanged by it.
    fixed_grid_points
        Grid size of ``aupr_mode="fixed_grid"``.
    wide
        One row per group and one column per summary (``docs/results.md``).

    Returns
    -------
    DataFrame or LazyFrame
        The group-values kind of ``docs/results.md``: keys, ``metric`` (``roc_auc``,
        ``average_precision``, ``aupr``), ``value`` (Float64), ``support`` (the unweighted
        count in the denominator: positive–negative pairs :math:`P \cdot N` for ROC AUC,
        positives for AP and AUPR; 0 where undefined for lack of rows), ``n``, ``n_null`` (rows
        with a null label, score or weight left out) and ``n_w`` (weighted). Value null when
        undefined: ROC AUC without positives or without negatives; AP and AUPR without positives
        (except ``aupr_mode="fixed_grid"``: 0). A group whose rows were all left out is kept,
        with null values and its ``n_null``.

    See Also
    --------
    pooled_curve : the population's curve table; ``curve_summaries(pooled_curve(table))``
        gives the overall summaries.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "a", "a", "b", "b"], "y": [1, 0, 1, 0, 0],
    ...                    "s": [0.9, 0.8, 0.8, 0.3, 0.1]})
    >>> pfm.curve_summaries(df, y_true="y", y_score="s", by="g")
    shape: (6, 6)
    ┌─────┬───────────────────┬──────────┬─────────┬─────┬────────┐
    │ g   ┆ metric            ┆ value    ┆ support ┆ n   ┆ n_null │
    │ --- ┆ ---               ┆ ---      ┆ ---     ┆ --- ┆ ---    │
    │ str ┆ str               ┆ f64      ┆ i64     ┆ i64 ┆ i64    │
    ╞═════╪═══════════════════╪══════════╪═════════╪═════╪════════╡
    │ a   ┆ roc_auc           ┆ 0.75     ┆ 2       ┆ 3   ┆ 0      │
    │ a   ┆ average_precision ┆ 0.833333 ┆ 2       ┆ 3   ┆ 0      │
    │ a   ┆ aupr              ┆ 0.916667 ┆ 2       ┆ 3   ┆ 0      │
    │ b   ┆ roc_auc           ┆ null     ┆ 0       ┆ 2   ┆ 0      │
    │ b   ┆ average_precision ┆ null     ┆ 0       ┆ 2   ┆ 0      │
    │ b   ┆ aupr              ┆ null     ┆ 0       ┆ 2   ┆ 0      │
    └─────┴───────────────────┴──────────┴─────────┴─────┴────────┘
    """
    names = _check_summaries(summaries, aupr_mode, fixed_grid_points)
    table: FrameT
    keys: list[str]
    table, keys, presorted = _table_and_keys(
        data,
        y_true=y_true,
        y_score=y_score,
        by=by,
        weight=weight,
        pos_label=pos_label,
        neg_label=neg_label,
        mode=mode,
        bins=bins,
        score_bounds=score_bounds,
        exact_method=exact_method,
    )
    use_w = _use_weighted(list(schema_of(table).names()), weighted)
    out = _summaries_of(
        table,
        keys,
        names,
        aupr_mode,
        use_w,
        deploy_positive_rate,
        deploy_neg_pos_ratio,
        fixed_grid_points,
        presorted,
        test_ratio,
    )
    if wide:
        out = to_wide(out, quantities=names)
    if isinstance(table, pl.DataFrame):
        return out.collect()
    return out


@accepts_tables
def pooled_curve(data: FrameT, *, weighted: bool | None = None) -> FrameT:
    r"""The overall curve table pooled from a per-group curve table (no scan of the rows).

    The per-threshold increments :math:`\Delta TP_g(t), \Delta FP_g(t)` of every group are
    recovered from the cumulative counts, added across groups at each threshold, and summed
    again: :math:`TP(t) = \sum_{t' \ge t} \sum_g \Delta TP_g(t')`. On exact tables this is the
    exact overall curve (the union of the groups' thresholds). The null-row counts are the sums
    of the groups'.

    Parameters
    ----------
    data
        A curve table (:func:`curve_counts`), per group.
    weighted
        Pool the weighted sums too (default: when present).

    Returns
    -------
    DataFrame or LazyFrame
        A curve table without keys: ``threshold`` (descending) and the count columns.

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
    table, keys, _ = _table_and_keys(
        data,
        y_true=None,
        y_score=None,
        by=None,
        weight=None,
        pos_label=None,
        neg_label=None,
        mode="exact",
        bins=100,
        score_bounds=None,
        exact_method="aggregate",
    )
    columns = list(schema_of(table).names())
    use_w: bool = _use_weighted(columns, weighted)
    base = ["tp", "fp"] + (["tp_w", "fp_w"] if use_w else [])
    totals_cols = [("tp", "fn"), ("fp", "tn")] + (
        [("tp_w", "fn_w"), ("fp_w", "tn_w")] if use_w else []
    )
    incs = [
        (pl.col(c) - _desc(pl.col(c).shift(1, fill_value=0), keys, "threshold")).alias(c)
        for c in base
    ]
    tot = [
        _desc((pl.col(a) + pl.col(b)).first(), keys, "threshold").alias(f"_pfm_tot_{a}")
        for a, b in totals_cols
    ]
    per = table.with_columns(tot).with_columns(incs)
    gtot = (
        per.group_by(keys or pl.lit(0))
        .agg([pl.col(f"_pfm_tot_{a}").first() for a, _ in totals_cols])
        .select([pl.col(f"_pfm_tot_{a}").sum() for a, _ in totals_cols])
    )
    null_cols: list[str] = [c for c in NULL_COLUMNS if c in columns]
    nulls = (
        per.group_by(keys or pl.lit(0))
        .agg([pl.col(c).first() for c in null_cols])
        .select([pl.col(c).sum() for c in null_cols])
    )
    # a group without counted rows has one null-threshold row (zero counts): the pooled table
    # keeps a null-threshold row only when no group has a threshold
    pooled = per.group_by("threshold").agg([pl.col(c).sum() for c in base])
    pooled = pooled.filter(pl.col("threshold").is_not_null() | (pl.col("threshold").count() == 0))
    cum = [
        pl.col(c).cum_sum().over(pl.lit(0), order_by=pl.col("threshold"), descending=True).alias(c)
        for c in base
    ]
    pooled = (
        pooled.with_columns(cum)
        .join(gtot, how="cross")
        .with_columns(
            (pl.col("_pfm_tot_tp") - pl.col("tp")).alias("fn"),
            (pl.col("_pfm_tot_fp") - pl.col("fp")).alias("tn"),
            *(
                [
                    (pl.col("_pfm_tot_tp_w") - pl.col("tp_w")).alias("fn_w"),
                    (pl.col("_pfm_tot_fp_w") - pl.col("fp_w")).alias("tn_w"),
                ]
                if use_w
                else []
            ),
        )
    )
    int_cols: list[str] = ["tp", "fp", "tn", "fn"]
    w_cols: list[str] = ["tp_w", "fp_w", "tn_w", "fn_w"] if use_w else []
    pooled = (
        pooled.with_columns(pl.col(int_cols).cast(pl.Int64))
        .with_columns(
            pl.sum_horizontal(int_cols).alias("n"),
            *([pl.sum_horizontal(w_cols).alias("n_w")] if use_w else []),
        )
        .join(nulls, how="cross")
    )
    out_cols = ["threshold", *int_cols, "n", *w_cols, *(["n_w"] if use_w else []), *null_cols]
    return pooled.select(out_cols).sort("threshold", descending=True, nulls_last=True)


@accepts_tables
def summary_disparities(
    data: FrameT,
    *,
    y_true: str | None = None,
    y_score: str | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    mode: CurveMode = "exact",
    bins: int | Sequence[float] = 100,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
    exact_method: Literal["aggregate", "sort"] = "aggregate",
    reference: Reference = "overall",
    summaries: str | Sequence[str] | None = None,
    aupr_mode: AuprMode = "trapezoid",
    weighted: bool | None = None,
    zero_reference: ZeroReference = "null",
    fixed_grid_points: int = FIXED_GRID_POINTS,
    wide: bool = False,
) -> FrameT:
    r"""Differences and ratios of curve summaries (AUC, AP, AUPR) between groups.

    .. math::

        \text{difference}_g = S_g - S_{ref},\qquad \text{ratio}_g = S_g / S_{ref}

    where :math:`S_{ref}` is the summary of the named reference group, of the group with the
    most rows (``"largest"``) or of the pooled overall curve (:func:`pooled_curve`: the whole
    population's curve, not an average of groups). Null where either value is null, and the
    ratio also where the reference value is 0. The reference and the arithmetic are the
    disparity engine's (:func:`~polars_fairmetrics.disparity.reference_mask`,
    :func:`~polars_fairmetrics.disparity.compare`).

    Parameters
    ----------
    data
        A curve table (:func:`curve_counts`) or rows with ``y_true=`` and ``y_score=``.
    y_true, y_score, by, weight, pos_label, neg_label, mode, bins, score_bounds, exact_method
        As for :func:`curve_counts` (rows only; ``by=`` may also name a curve table's keys).
    reference
        ``"overall"`` (default), ``"largest"`` or a group value (a tuple or mapping for several
        keys). ``"rest"`` is not offered: the rest's curve needs its own pooling.
    summaries, aupr_mode, weighted, fixed_grid_points
        As in :func:`curve_summaries`.
    zero_reference
        A ratio whose reference value is 0: ``"null"`` (default) or ``"infinity"``.
    wide
        One row per group and one column per summary (``docs/results.md``).

    Returns
    -------
    DataFrame or LazyFrame
        The comparisons kind of ``docs/results.md``: keys, ``metric``, ``value``, ``support``,
        ``n``, ``n_null`` (, ``n_w``), ``reference``, ``is_reference``, ``reference_value``,
        ``difference``, ``ratio``.

    Raises
    ------
    ReferenceGroupError
        A named reference absent from the data — when the query runs.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a"] * 4 + ["b"] * 4, "y": [1, 0, 1, 0] * 2,
    ...                    "s": [0.9, 0.1, 0.8, 0.2, 0.3, 0.6, 0.9, 0.2]})
    >>> d = pfm.summary_disparities(df, y_true="y", y_score="s", by="g", reference="a",
    ...                             summaries="roc_auc")
    >>> d.select("g", "metric", "value", "reference_value", "difference").rows()
    [('a', 'roc_auc', 1.0, 1.0, 0.0), ('b', 'roc_auc', 0.75, 1.0, -0.25)]
    """
    if reference is None or (isinstance(reference, str) and reference == "rest"):
        raise InvalidOptionError(
            f"reference={reference!r}; pass 'overall', 'largest' or a group value"
        )
    names = _check_summaries(summaries, aupr_mode, fixed_grid_points)
    table: FrameT
    keys: list[str]
    table, keys, presorted = _table_and_keys(
        data,
        y_true=y_true,
        y_score=y_score,
        by=by,
        weight=weight,
        pos_label=pos_label,
        neg_label=neg_label,
        mode=mode,
        bins=bins,
        score_bounds=score_bounds,
        exact_method=exact_method,
    )
    if not keys:
        raise InvalidOptionError("summary_disparities needs groups: pass by= (or a grouped table)")
    use_w = _use_weighted(list(schema_of(table).names()), weighted)

    def summarize(t: pl.DataFrame | pl.LazyFrame, k: list[str], sorted_: bool) -> pl.LazyFrame:
        return _summaries_of(t, k, names, aupr_mode, use_w, None, None, fixed_grid_points, sorted_)

    groups = summarize(table, keys, presorted)
    layout = Layout(keys=keys, partitions=[])
    label = reference_label(reference, layout).alias("reference")
    if isinstance(reference, str) and reference == "overall":
        pooled = summarize(pooled_curve(table.lazy(), weighted=use_w), [], False)
        ref = pooled.select("metric", pl.col("value").alias("reference_value"))
        with_ref = groups.join(ref, on="metric", how="left").with_columns(
            label, pl.lit(False).alias("is_reference")
        )
    else:
        mask = reference_mask(reference, layout, schema_of(groups))
        ref = groups.filter(mask).select("metric", pl.col("value").alias("reference_value"))
        with_ref = check_reference(
            groups.join(ref, on="metric", how="left").with_columns(
                label,
                mask.fill_null(False).alias("is_reference"),
                mask.any().alias(_HAS_REF),
            ),
            reference,
            layout,
        )
    difference, ratio = compare(
        pl.col("value"), pl.col("reference_value"), zero_reference=zero_reference
    )
    out = finish(
        with_ref.with_columns(difference.alias("difference"), ratio.alias("ratio")),
        keys=keys,
        partitions=[],
        order=names,
    )
    if wide:
        out = to_wide(out, quantities=names)
    if isinstance(table, pl.DataFrame):
        return out.collect()
    return out


# --------------------------------------------------------------------------------------------
# expressions (usable in group_by().agg())
# --------------------------------------------------------------------------------------------


def _valid_rows(
    y_score: IntoExpr,
    y_true: IntoExpr,
    weight: IntoExpr | None,
    pos_label: Label | None,
    neg_label: Label | None,
) -> tuple[pl.Expr, pl.Expr, pl.Expr, pl.Expr]:
    """Scores, Boolean labels and weights of the counted rows, and the per-group input guard.

    The guard (labels outside the two classes, negative/NaN/infinite weights or weights whose
    sum overflows, NaN scores) is
    native aggregations, like the core's row metrics: it streams, and bad input raises Polars'
    ``InvalidOperationError`` quoting the package's message.
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
    valid = valid & w.is_not_null()
    ok = ok & _weight_guard(w, w.filter(valid).sum())
    return s.filter(valid), yt.filter(valid), w.filter(valid), ok


def _score_guard(s: pl.Expr) -> pl.Expr:
    """``True`` per group, or a Polars error naming the score column when a score is NaN.

    Native (no Python UDF): one aggregation, ``is_nan().any()``.
    """
    name = s.meta.output_name(raise_if_undetermined=False) or "y_score"
    msg = pl.when(s.is_nan().any()).then(pl.lit(MSG_SCORE_NAN.format(column=name)))
    return _raise_if(msg, name)


def roc_auc(
    y_score: IntoExpr,
    *,
    y_true: IntoExpr,
    weight: IntoExpr | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
) -> pl.Expr:
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
    return (
        pl.when(ok & (tot_p > 0) & (tot_n > 0))
        .then(num / (tot_p * tot_n))
        .otherwise(pl.lit(None, dtype=pl.Float64))
        .alias("roc_auc")
    )


def average_precision(
    y_score: IntoExpr,
    *,
    y_true: IntoExpr,
    weight: IntoExpr | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
) -> pl.Expr:
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
    prec_end = (
        pl.when(ss.ne_missing(ss.shift(-1)))
        .then(safe_div(ctp, call))
        .otherwise(None)
        .backward_fill()
    )
    num = pl.when(wp_s > 0).then(wp_s * prec_end).otherwise(0.0).sum()
    tot_p = wp.sum()
    return (
        pl.when(ok & (tot_p > 0))
        .then(num / tot_p)
        .otherwise(pl.lit(None, dtype=pl.Float64))
        .alias("average_precision")
    )
