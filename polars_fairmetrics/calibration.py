r"""Calibration within groups, from one mergeable table of score cells.

Is a score of 0.7 equally reliable for every group? That is *calibration within groups* — the
fairness criterion at the heart of the COMPAS debate (Kleinberg, Mullainathan & Raghavan 2017;
Chouldechova 2017), which no confusion-count audit answers. TensorFlow Model Analysis reports
calibration per slice; this module does it from one scan of the rows.

**Score cells.** :func:`score_cells` scans the rows once into a small additive table: per group
(× attribute, × partition) and per distinct score :math:`s` (rounded to ``decimals`` places when
given), the rows ``n``, the positives ``positives`` :math:`=\sum y`, the score sum
``score_sum`` :math:`=\sum s` (and the weighted sums ``n_w``, ``positives_w``, ``score_sum_w``),
plus the rows left out for a null label, score or weight (``n_null``, on the cell whose ``score``
is null). Cells add up like count tables (:func:`~polars_fairmetrics.combine_counts` merges them),
so daily cell tables merge into any window (:mod:`polars_fairmetrics.monitor`). Every statistic
below is a function of the cells, and exact for the (rounded) scores: bins are unions of cells.

**Bins** (``n_bins`` = :math:`B`), as scikit-learn's ``calibration_curve``:

- ``strategy="uniform"``: edges :math:`0, 1/B, \dots, 1`;
- ``strategy="quantile"``: edges at the :math:`k/B` quantiles of the group's scores (numpy's
  linear interpolation, from the cells' order statistics; unweighted);

a score on an inner edge belongs to the lower bin (``numpy.searchsorted(edges[1:-1], s)``), and
empty bins are left out.

**Statistics** per group, with :math:`W = \sum w` (rows, or weights), :math:`P_b`, :math:`S_b`,
:math:`W_b` the (weighted) positives, score sum and size of bin :math:`b`:

- reliability curve (:func:`reliability_curve`): per bin, ``mean_predicted`` :math:`S_b / W_b`
  and ``fraction_positive`` :math:`P_b / W_b`;
- ``expected_calibration_error``
  :math:`\mathrm{ECE} = \sum_b \frac{W_b}{W}\bigl|\frac{P_b}{W_b} - \frac{S_b}{W_b}\bigr|
  = \sum_b |P_b - S_b| / W`
  (Naeini, Cooper & Hauskrecht 2015; Guo et al. 2017);
- ``calibration_in_the_large`` :math:`(\sum s - \sum y) / W`: the mean score minus the base rate
  (positive: the scores over-predict);
- ``calibration_slope``: :math:`\hat b` of the logistic regression
  :math:`\operatorname{logit} P(y = 1) = a + b \operatorname{logit}(s)` (Cox 1958), the maximum
  likelihood fit over the rows. Rows with the same score have the same regressor, so the fit on
  the cells (weights :math:`W_c`, successes :math:`P_c`) *is* the per-row fit: Newton–Raphson
  with step halving from :math:`(a, b) = (0, 1)`, to a relative step below :math:`10^{-10}`.
  Scores are clipped to :math:`[10^{-12}, 1 - 10^{-12}]` before the logit. With ``decimals``,
  the regressor is the rounded score. Null where the estimate does not exist: one class only,
  or the classes separated by the score (complete or quasi-complete separation: every positive
  scores at least as high as every negative, or the reverse — which includes a single distinct
  score), or no convergence.

1 is a perfectly calibrated slope; below 1 the scores are too extreme (over-fitting), above 1
too moderate.

Disparities (:func:`calibration_disparities`) go through the disparity engine
(:func:`~polars_fairmetrics.disparity.reference_statistics` on the cells, per score: the
reference's cells are the named group's, the rest's — total minus the group — or the whole
population's; then :func:`~polars_fairmetrics.disparity.compare`), so ``"rest"`` compares a
group with the calibration of every other row, not with an average of group statistics.

Intervals (``n_resamples=B``): the cell table is a count table of rows (positives and negatives
per score), so :func:`~polars_fairmetrics.bootstrap.resample_counts` draws it exactly (one
multinomial per attribute and partition); every statistic is recomputed on each replicate
(quantile edges included) and the percentile interval attached (``docs/results.md``). A
replicate cell's score sum is its observed mean score times its drawn rows (exact for
unrounded scores). Weighted cells are not resampled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeAlias, cast

import numpy as np
import polars as pl

from polars_fairmetrics._replicates import (
    attach_intervals,
    check_interval_options,
    resample_partitions,
)
from polars_fairmetrics._typing import ColumnNames, FrameT, Label
from polars_fairmetrics._validate import (
    as_list,
    check_reserved,
    check_weight_summary,
    chosen_names,
    require_columns,
    require_numeric,
    resolve_label_spec,
    schema_of,
)
from polars_fairmetrics.counts import (
    COUNT_COLUMNS,
    NULL_COLUMNS,
    WEIGHTED_COUNT_COLUMNS,
    roll_up_attributes,
)
from polars_fairmetrics.disparity import (
    Layout,
    Reference,
    ZeroReference,
    check_reference,
    compare,
    reference_label,
    reference_mask,
    reference_statistics,
)
from polars_fairmetrics.exceptions import MSG_SCORE_NAN, InvalidOptionError, InvalidScoreError
from polars_fairmetrics.inputs import accepts_tables
from polars_fairmetrics.metrics import safe_div
from polars_fairmetrics.results import RESERVED, finish, from_wide, to_wide

__all__ = [
    "CALIBRATION_METRICS",
    "CELL_COLUMNS",
    "calibration_disparities",
    "calibration_metrics",
    "reliability_curve",
    "score_cells",
]

Strategy: TypeAlias = Literal["uniform", "quantile"]
"""How bins are made: equal width on [0, 1], or at the quantiles of the group's scores."""

CELL_COLUMNS: tuple[str, ...] = (
    "score",
    "n",
    "positives",
    "score_sum",
    "n_w",
    "positives_w",
    "score_sum_w",
    "n_null",
)
"""Columns of a score-cell table besides the keys and partitions (``*_w``: weighted only)."""

CALIBRATION_METRICS: dict[str, str] = {
    "expected_calibration_error": "sum over bins of |positives - score sum|, over the rows",
    "calibration_in_the_large": "mean score - base rate",
    "calibration_slope": "b of logit P(y=1) = a + b logit(score), maximum likelihood",
}
"""The calibration statistics, in registry order, with what they compute."""

_ALIASES: dict[str, str] = {
    "ece": "expected_calibration_error",
    "citl": "calibration_in_the_large",
    "slope": "calibration_slope",
}
CURVE_COLUMNS: tuple[str, ...] = (
    "bin",
    "bin_low",
    "bin_high",
    "n",
    "positives",
    "n_w",
    "mean_predicted",
    "fraction_positive",
)
"""Columns of a reliability curve after the keys and partitions (``n_w``: weighted only)."""

CLIP = 1e-12
"""Scores are clipped to [CLIP, 1 - CLIP] before the logit of the calibration slope."""

_YT = "_pfm_y_true"
_N = "_pfm_n"
_S = "_pfm_s"
_W = "_pfm_w"
_WS = "_pfm_ws"
_WNULL = "_pfm_w_null"
_WMIN = "_pfm_w_min"
_WMAX = "_pfm_w_max"
_SNAN = "_pfm_s_nan"
_SMIN = "_pfm_s_min"
_SMAX = "_pfm_s_max"
_ALL = "_pfm_all"
_U = "_pfm_unit"
_C = "_pfm_c"  # rows of a cell (the count)
_WT = "_pfm_wt"  # its weight (rows, or the weight sum)
_P = "_pfm_p"  # positives (or their weight)
_SS = "_pfm_ss"  # score sum (or weighted)
_STATS: tuple[str, ...] = (_C, _WT, _P, _SS)
_MEAN = "_pfm_mean"
_SC = "score"


# ---------------------------------------------------------------------------------------------
# The one scan: score cells
# ---------------------------------------------------------------------------------------------


def _check_decimals(decimals: int | None) -> None:
    if decimals is None:
        return
    if isinstance(decimals, bool) or not isinstance(decimals, int) or not 0 <= decimals <= 15:
        raise InvalidOptionError(
            f"decimals must be an integer from 0 to 15 (or None: exact scores), got {decimals!r}"
        )


@accepts_tables
def score_cells(
    data: FrameT,
    *,
    y_true: str,
    y_score: str,
    by: ColumnNames | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    separately: bool = False,
    decimals: int | None = None,
) -> FrameT:
    r"""Per group and distinct score: rows, positives and score sum, in one scan (mergeable).

    .. math::

        n_{g,s} = \sum_{i \in g} 1[s_i = s],\quad
        \text{positives}_{g,s} = \sum_{i \in g} y_i 1[s_i = s],\quad
        \text{score\_sum}_{g,s} = \sum_{i \in g} s_i 1[s_i = s]

    (with ``decimals=d``, :math:`s` is the score rounded to :math:`d` places and ``score_sum``
    still sums the unrounded scores); with a weight :math:`w_i` also ``n_w``, ``positives_w``,
    ``score_sum_w`` (the same sums weighted). Rows with a null label, score or weight are counted
    in ``n_null`` on the group's cell whose ``score`` is null. Cells are additive: the cells of
    a dataset are the sum of the cells of its parts.

    Parameters
    ----------
    data
        Rows (DataFrame or LazyFrame; the result is of the same kind).
    y_true
        True-label column (Boolean, numeric 0/1, or text with ``pos_label``).
    y_score
        Predicted probability of the positive class, in [0, 1].
    by
        Group column(s); several give intersectional groups (or, with ``separately=True``, each
        attribute on its own, side by side, with an ``attribute`` column).
    weight
        Sample-weight column: finite and non-negative.
    pos_label, neg_label
        The classes of ``y_true``.
    separately
        With several ``by`` columns: each attribute on its own instead of their intersection.
    decimals
        Round scores to this many decimal places first (bounds the table to
        :math:`10^d + 1` cells per group); ``None`` (default): one cell per distinct score.

    Returns
    -------
    DataFrame or LazyFrame
        The score-cells kind of ``docs/results.md``: [``attribute``], keys, ``score``, ``n``,
        ``positives``, ``score_sum``, [``n_w``, ``positives_w``, ``score_sum_w``], ``n_null``;
        sorted by the keys and the score (nulls last).

    Raises
    ------
    InvalidScoreError
        A score outside [0, 1] or NaN (when the query runs).
    InvalidLabelError, InvalidWeightError
        As for :func:`~polars_fairmetrics.confusion_counts`.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "a", "b"], "y": [1, 0, 1, None],
    ...                    "s": [0.8, 0.8, 0.3, 0.5]})
    >>> score_cells(df, y_true="y", y_score="s", by="g")
    shape: (3, 6)
    ┌─────┬───────┬─────┬───────────┬───────────┬────────┐
    │ g   ┆ score ┆ n   ┆ positives ┆ score_sum ┆ n_null │
    │ --- ┆ ---   ┆ --- ┆ ---       ┆ ---       ┆ ---    │
    │ str ┆ f64   ┆ i64 ┆ i64       ┆ f64       ┆ i64    │
    ╞═════╪═══════╪═════╪═══════════╪═══════════╪════════╡
    │ a   ┆ 0.3   ┆ 1   ┆ 1         ┆ 0.3       ┆ 0      │
    │ a   ┆ 0.8   ┆ 2   ┆ 1         ┆ 1.6       ┆ 0      │
    │ b   ┆ null  ┆ 0   ┆ 0         ┆ 0.0       ┆ 1      │
    └─────┴───────┴─────┴───────────┴───────────┴────────┘
    """
    schema = schema_of(data)
    keys: list[str] = as_list(by)
    require_columns(schema, "y_true", [y_true])
    require_columns(schema, "y_score", [y_score])
    require_columns(schema, "group", keys)
    check_reserved(
        keys,
        [
            *CELL_COLUMNS,
            *CURVE_COLUMNS,
            *COUNT_COLUMNS,
            *WEIGHTED_COUNT_COLUMNS,
            *NULL_COLUMNS,
            *RESERVED,
        ],
    )
    require_numeric(schema, y_score, "y_score")
    if weight is not None:
        require_columns(schema, "weight", [weight])
        require_numeric(schema, weight, "weight")
    _check_decimals(decimals)
    if separately and not keys:
        raise InvalidOptionError("separately=True needs at least one by= column")
    spec = resolve_label_spec(schema, y_true, "y_true", pos_label, neg_label)
    s = pl.col(y_score).cast(pl.Float64)
    valid = pl.col(y_true).is_not_null() & s.is_not_null()
    if weight is not None:
        valid = valid & pl.col(weight).is_not_null()
    cell = s.round(decimals) if decimals is not None else s
    group: list[pl.Expr] = [pl.col(k) for k in keys] if keys else [pl.lit(0).alias(_ALL)]
    aggs: list[pl.Expr] = [
        pl.len().cast(pl.Int64).alias(_N),
        s.sum().alias(_S),
        s.is_nan().sum().cast(pl.Int64).alias(_SNAN),
        s.min().alias(_SMIN),
        s.max().alias(_SMAX),
    ]
    if weight is not None:
        w = pl.col(weight).cast(pl.Float64)
        aggs += [
            w.sum().alias(_W),
            (w * s).sum().alias(_WS),
            w.null_count().cast(pl.Int64).alias(_WNULL),
            w.min().alias(_WMIN),
            w.max().alias(_WMAX),
        ]
    key_schema: dict[str, Any] = {k: schema[k] for k in keys} if keys else {_ALL: pl.Int32}
    guard_schema: dict[str, Any] = {
        **key_schema,
        _YT: pl.Boolean,
        _SC: pl.Float64,
        _N: pl.Int64,
        _S: pl.Float64,
    }
    if weight is not None:
        guard_schema.update({_W: pl.Float64, _WS: pl.Float64})

    def guard(cells: pl.DataFrame) -> pl.DataFrame:
        out = cells.with_columns(spec.bool_expr(cells[_YT]))
        if int(cast(int, out[_SNAN].sum())):
            raise InvalidScoreError(MSG_SCORE_NAN.format(column=y_score))
        for v in (out[_SMIN].min(), out[_SMAX].max()):
            if v is not None and not 0.0 <= cast(float, v) <= 1.0:
                raise InvalidScoreError(
                    f"column {y_score!r} (y_score) has a score {v!r} outside [0, 1]: "
                    "calibration needs predicted probabilities"
                )
        if weight is not None:
            check_weight_summary(
                weight,
                cast("float | None", out[_WMIN].min()),
                cast("float | None", out[_WMAX].max()),
                cast("float | None", out[_W].sum()) if out.height else None,
            )
        return out.with_columns(pl.col(_N).cast(pl.Int64), pl.col(_S).cast(pl.Float64)).select(
            [pl.col(c).cast(t) for c, t in guard_schema.items()]
        )

    scanned = (
        data.lazy()
        .group_by([*group, pl.col(y_true).alias(_YT), pl.when(valid).then(cell).alias(_SC)])
        .agg(aggs)
        .map_batches(guard, schema=guard_schema)
    )
    in_cell = pl.col(_SC).is_not_null()
    pos = in_cell & pl.col(_YT)
    sums: list[pl.Expr] = [
        pl.when(in_cell).then(pl.col(_N)).otherwise(0).alias("n"),
        pl.when(pos).then(pl.col(_N)).otherwise(0).alias("positives"),
        pl.when(in_cell).then(pl.col(_S)).otherwise(0.0).alias("score_sum"),
    ]
    stats: list[str] = ["n", "positives", "score_sum"]
    if weight is not None:
        sums += [
            pl.when(in_cell).then(pl.col(_W)).otherwise(0.0).alias("n_w"),
            pl.when(pos).then(pl.col(_W)).otherwise(0.0).alias("positives_w"),
            pl.when(in_cell).then(pl.col(_WS)).otherwise(0.0).alias("score_sum_w"),
        ]
        stats += ["n_w", "positives_w", "score_sum_w"]
    sums.append(pl.when(in_cell).then(0).otherwise(pl.col(_N)).alias("n_null"))
    stats.append("n_null")
    key_cols: list[str] = keys if keys else [_ALL]
    table = (
        scanned.with_columns(sums)
        .group_by([*key_cols, _SC])
        .agg(pl.col(stats).sum())
        .with_columns(
            *[pl.col(c).cast(pl.Int64) for c in ("n", "positives", "n_null")],
            *[pl.col(c).cast(pl.Float64) for c in stats if c not in ("n", "positives", "n_null")],
        )
    )
    if separately:
        table = roll_up_attributes(table, keys, [_SC], stats)
    else:
        table = table.sort([*keys, _SC], nulls_last=True).select([*keys, _SC, *stats])
    if isinstance(data, pl.DataFrame):
        return table.collect()
    return table


# ---------------------------------------------------------------------------------------------
# Options and the cell table of any input
# ---------------------------------------------------------------------------------------------


def _metric_names(metrics: str | Sequence[str] | None) -> list[str]:
    names = chosen_names(metrics, list(CALIBRATION_METRICS))
    out: list[str] = []
    for m in names:
        full = _ALIASES.get(m, m)
        if full not in CALIBRATION_METRICS:
            known = ", ".join([*CALIBRATION_METRICS, *_ALIASES])
            raise InvalidOptionError(f"unknown calibration metric {m!r}; known: {known}")
        out.append(full)
    return list(dict.fromkeys(out))


def _check_bins(n_bins: int, strategy: str) -> None:
    if isinstance(n_bins, bool) or not isinstance(n_bins, int) or not 1 <= n_bins <= 10_000:
        raise InvalidOptionError(f"n_bins must be an integer from 1 to 10000, got {n_bins!r}")
    if strategy not in ("uniform", "quantile"):
        raise InvalidOptionError(f"strategy must be 'uniform' or 'quantile', got {strategy!r}")


def _cells_of(
    data: FrameT,
    *,
    y_true: str | None,
    y_score: str | None,
    by: ColumnNames | None,
    weight: str | None,
    pos_label: Label | None,
    neg_label: Label | None,
    separately: bool,
    decimals: int | None,
) -> tuple[FrameT, Layout]:
    """Cells of ``data`` when given rows (``y_true=``); else ``data`` taken as a cell table."""
    if y_true is not None:
        if y_score is None:
            raise InvalidOptionError("y_true= needs y_score= (the predicted probability)")
        cells = score_cells(
            data,
            y_true=y_true,
            y_score=y_score,
            by=by,
            weight=weight,
            pos_label=pos_label,
            neg_label=neg_label,
            separately=separately,
            decimals=decimals,
        )
    else:
        given = {
            "y_score": y_score,
            "weight": weight,
            "pos_label": pos_label,
            "neg_label": neg_label,
            "decimals": decimals,
        }
        stray = [k for k, v in given.items() if v is not None]
        if stray or separately:
            raise InvalidOptionError(
                f"{', '.join(stray or ['separately'])}= given without y_true=: pass y_true= and "
                "y_score= with rows, or a score-cell table alone"
            )
        columns = list(schema_of(data).names())
        missing = [c for c in ("score", "n", "positives", "score_sum") if c not in columns]
        if missing:
            raise InvalidOptionError(
                "pass y_true= and y_score= with rows, or a score-cell table (score_cells) with "
                f"columns score, n, positives, score_sum; missing: {', '.join(missing)}"
            )
        cells = data
    columns = list(schema_of(cells).names())
    return cells, Layout.of(columns, by, CELL_COLUMNS)


def _use_weighted(columns: Sequence[str], weighted: bool | None) -> bool:
    has = all(c in columns for c in ("n_w", "positives_w", "score_sum_w"))
    if weighted and not has:
        raise InvalidOptionError(
            "weighted=True but the cell table has no weighted sums (n_w, positives_w, "
            "score_sum_w): count the rows with weight="
        )
    return has if weighted is None else bool(weighted)


def _normalized(cells: pl.LazyFrame, layout: Layout, use_w: bool) -> pl.LazyFrame:
    """Valid cells with the generic statistic columns ``_C, _WT, _P, _SS`` and the unit column."""
    stats = (
        [
            pl.col("n").cast(pl.Int64).alias(_C),
            pl.col("n_w").cast(pl.Float64).alias(_WT),
            pl.col("positives_w").cast(pl.Float64).alias(_P),
            pl.col("score_sum_w").cast(pl.Float64).alias(_SS),
        ]
        if use_w
        else [
            pl.col("n").cast(pl.Int64).alias(_C),
            pl.col("n").cast(pl.Float64).alias(_WT),
            pl.col("positives").cast(pl.Float64).alias(_P),
            pl.col("score_sum").cast(pl.Float64).alias(_SS),
        ]
    )
    return cells.filter(pl.col(_SC).is_not_null()).select(
        pl.lit(0, dtype=pl.Int32).alias(_U),
        *layout.partitions,
        *layout.keys,
        pl.col(_SC).cast(pl.Float64),
        *stats,
    )


def _sizes(cells: pl.LazyFrame, layout: Layout, use_w: bool) -> pl.LazyFrame:
    """Per unit: ``n``, ``n_null`` (and ``n_w``) — every group, even one with null rows only."""
    columns = cells.collect_schema().names()
    aggs = [pl.col("n").sum().cast(pl.Int64).alias("n")]
    aggs.append(
        pl.col("n_null").sum().cast(pl.Int64).alias("n_null")
        if "n_null" in columns
        else pl.lit(0, dtype=pl.Int64).alias("n_null")
    )
    if use_w:
        aggs.append(pl.col("n_w").sum().cast(pl.Float64).alias("n_w"))
    return (
        cells.with_columns(pl.lit(0, dtype=pl.Int32).alias(_U))
        .group_by([_U, *layout.partitions, *layout.keys])
        .agg(aggs)
    )


# ---------------------------------------------------------------------------------------------
# Bins
# ---------------------------------------------------------------------------------------------


def _uniform_edges(n_bins: int) -> list[float]:
    return [float(e) for e in np.linspace(0.0, 1.0, n_bins + 1)]


def _quantile_levels(n_bins: int) -> list[float]:
    """The quantile levels numpy's ``percentile`` sees in scikit-learn's ``calibration_curve``."""
    return [float(q) for q in np.true_divide(np.linspace(0, 1, n_bins + 1) * 100, 100)]


def _quantile_edges(valid: pl.LazyFrame, unit: list[str], n_bins: int) -> pl.LazyFrame:
    r"""Per unit, the edges ``_pfm_e0 … _pfm_e{B}``: numpy's linear quantiles of the rows' scores.

    With :math:`N` rows sorted, :math:`v = (N - 1) q`, :math:`j = \lfloor v \rfloor`,
    :math:`\gamma = v - j`: :math:`x_j + (x_{j+1} - x_j)\gamma` (or
    :math:`x_{j+1} - (x_{j+1} - x_j)(1 - \gamma)` for :math:`\gamma \ge 0.5`), the maximum when
    :math:`v \ge N - 1` — numpy's ``_lerp``, computed from the cells' cumulative counts.
    """
    sc = pl.col(_SC).sort_by(_SC)
    cum = pl.col(_C).sort_by(_SC).cum_sum()
    total = pl.col(_C).sum()
    exprs: list[pl.Expr] = []
    for k, q in enumerate(_quantile_levels(n_bins)):
        v = (total - 1).cast(pl.Float64) * q
        j = v.floor()
        gamma = v - j
        a = sc.filter(cum > j).first()
        b = sc.filter(cum > j + 1).first()
        diff = b - a
        edge = (
            pl.when(v >= (total - 1).cast(pl.Float64))
            .then(sc.last())
            .when(gamma >= 0.5)
            .then(b - diff * (1 - gamma))
            .otherwise(a + diff * gamma)
        )
        exprs.append(edge.alias(f"_pfm_e{k}"))
    return valid.filter(pl.col(_C) > 0).group_by(unit).agg(exprs)


def _bins(
    valid: pl.LazyFrame,
    unit: list[str],
    n_bins: int,
    strategy: Strategy,
    edges: pl.LazyFrame | None = None,
    edge_unit: list[str] | None = None,
) -> pl.LazyFrame:
    """Per unit and non-empty bin: ``bin``, ``bin_low``, ``bin_high`` and the summed statistics.

    ``edges`` (quantile bins): a table of edges per ``edge_unit`` to use instead of the unit's
    own (the observed edges, for intervals of a curve).
    """
    if strategy == "uniform":
        e = _uniform_edges(n_bins)
        inner = pl.Series(e[1:-1], dtype=pl.Float64)
        binned = valid.with_columns(
            pl.lit(inner).search_sorted(pl.col(_SC), side="left").cast(pl.Int64).alias("bin")
        ).with_columns(
            pl.col("bin")
            .replace_strict(dict(enumerate(e[:-1])), return_dtype=pl.Float64)
            .alias("bin_low"),
            pl.col("bin")
            .replace_strict(dict(enumerate(e[1:])), return_dtype=pl.Float64)
            .alias("bin_high"),
        )
    else:
        on = edge_unit if edges is not None and edge_unit is not None else unit
        table = edges if edges is not None else _quantile_edges(valid, unit, n_bins)
        cols = [f"_pfm_e{k}" for k in range(n_bins + 1)]
        binned = (
            valid.join(table, on=on, how="inner", nulls_equal=True)
            .with_columns(
                pl.sum_horizontal(
                    [(pl.col(c) < pl.col(_SC)).cast(pl.Int64) for c in cols[1:-1]]
                    or [pl.lit(0, dtype=pl.Int64)]
                )
                .cast(pl.Int64)
                .alias("bin"),
                pl.concat_list(cols).alias("_pfm_edges"),
            )
            .with_columns(
                pl.col("_pfm_edges").list.get(pl.col("bin")).alias("bin_low"),
                pl.col("_pfm_edges").list.get(pl.col("bin") + 1).alias("bin_high"),
            )
        )
    return (
        binned.group_by([*unit, "bin"])
        .agg(
            pl.col("bin_low").first(),
            pl.col("bin_high").first(),
            *[pl.col(c).sum() for c in _STATS],
        )
        .filter(pl.col(_C) > 0)
    )


# ---------------------------------------------------------------------------------------------
# The calibration slope: Newton–Raphson on the cells
# ---------------------------------------------------------------------------------------------


def _logistic_slopes(
    uid: Any, x: Any, w: Any, k: Any, n_units: int, *, max_iter: int = 100, tol: float = 1e-10
) -> Any:
    """Per unit, the slope ``b`` of the weighted logistic fit of successes ``k`` out of ``w`` on
    ``x`` (NaN where the fit does not exist or does not converge)."""

    def sums(v: Any) -> Any:
        return np.bincount(uid, weights=v, minlength=n_units)

    def nll(a: Any, b: Any) -> Any:
        eta = a[uid] + b[uid] * x
        return sums(w * np.logaddexp(0.0, eta) - k * eta)

    with np.errstate(all="ignore"):
        total, hits = sums(w), sums(k)
        # the maximum likelihood estimate exists iff the classes overlap: no threshold on x
        # separates the positives from the negatives, even with ties (Albert & Anderson 1984)
        pos, neg = k > 0, (w - k) > 0
        lo1, hi1 = np.full(n_units, np.inf), np.full(n_units, -np.inf)
        lo0, hi0 = np.full(n_units, np.inf), np.full(n_units, -np.inf)
        np.minimum.at(lo1, uid[pos], x[pos])
        np.maximum.at(hi1, uid[pos], x[pos])
        np.minimum.at(lo0, uid[neg], x[neg])
        np.maximum.at(hi0, uid[neg], x[neg])
        fit = (hits > 0) & (hits < total) & (hi0 > lo1) & (hi1 > lo0)
        a, b = np.zeros(n_units), np.ones(n_units)
        current = nll(a, b)
        done = ~fit
        converged = np.zeros(n_units, dtype=bool)
        for _ in range(max_iter):
            eta = a[uid] + b[uid] * x
            p = np.exp(-np.logaddexp(0.0, -eta))
            r, v = k - w * p, w * p * (1.0 - p)
            ga, gb = sums(r), sums(r * x)
            haa, hab, hbb = sums(v), sums(v * x), sums(v * x * x)
            det = haa * hbb - hab * hab
            active = ~done & (det > 0) & np.isfinite(det)
            done |= ~active
            da = np.where(active, (hbb * ga - hab * gb) / det, 0.0)
            db = np.where(active, (haa * gb - hab * ga) / det, 0.0)
            t = np.ones(n_units)
            new_a, new_b, new = a, b, current
            for _ in range(60):
                new_a, new_b = a + t * da, b + t * db
                new = nll(new_a, new_b)
                worse = active & ~(new <= current + 1e-12 * np.abs(current))
                if not worse.any():
                    break
                t = np.where(worse, t / 2, t)
            step_a, step_b = np.abs(t * da), np.abs(t * db)
            a = np.where(active, new_a, a)
            b = np.where(active, new_b, b)
            current = np.where(active, new, current)
            small = (step_a <= tol * (1 + np.abs(a))) & (step_b <= tol * (1 + np.abs(b)))
            converged |= active & small
            done |= active & small
            if done.all():
                break
        out = np.where(fit & converged & np.isfinite(b), b, np.nan)
    return out


def _slopes(valid: pl.LazyFrame, unit: list[str]) -> pl.LazyFrame:
    """Per unit, ``calibration_slope`` (one map over the small cell table)."""
    schema = valid.collect_schema()
    out_schema: dict[str, Any] = {u: schema[u] for u in unit}
    out_schema["calibration_slope"] = pl.Float64

    def run(frame: pl.DataFrame) -> pl.DataFrame:
        units = frame.select(unit).unique(maintain_order=True).with_row_index("_pfm_uid")
        rows = frame.filter(pl.col(_WT) > 0).join(
            units, on=unit, how="inner", nulls_equal=True, maintain_order="left"
        )
        uid = rows["_pfm_uid"].to_numpy().astype(np.int64)
        s = np.clip(rows[_SC].to_numpy().astype(np.float64), CLIP, 1.0 - CLIP)
        x = np.log(s) - np.log1p(-s)
        slope = _logistic_slopes(
            uid,
            x,
            rows[_WT].to_numpy().astype(np.float64),
            rows[_P].to_numpy().astype(np.float64),
            units.height,
        )
        values = pl.Series("calibration_slope", slope, dtype=pl.Float64).fill_nan(None)
        return units.drop("_pfm_uid").with_columns(values).select(list(out_schema))

    return valid.select(*unit, _SC, _WT, _P).map_batches(run, schema=out_schema)


# ---------------------------------------------------------------------------------------------
# Statistics per unit (the one computation, used for groups, references and replicates)
# ---------------------------------------------------------------------------------------------


def _unit_statistics(
    valid: pl.LazyFrame, unit: list[str], names: Sequence[str], n_bins: int, strategy: Strategy
) -> pl.LazyFrame:
    """Per unit: ``_pfm_N`` (rows) and one column per calibration statistic in ``names``."""
    totals = valid.group_by(unit).agg(
        pl.col(_C).sum().cast(pl.Int64).alias("_pfm_N"),
        pl.col(_WT).sum().alias("_pfm_W"),
        pl.col(_P).sum().alias("_pfm_P"),
        pl.col(_SS).sum().alias("_pfm_S"),
    )
    out = totals.with_columns(
        safe_div(pl.col("_pfm_S") - pl.col("_pfm_P"), pl.col("_pfm_W")).alias(
            "calibration_in_the_large"
        )
    )
    if "expected_calibration_error" in names:
        ece = (
            _bins(valid, unit, n_bins, strategy)
            .group_by(unit)
            .agg((pl.col(_P) - pl.col(_SS)).abs().sum().alias("_pfm_gap"))
        )
        out = out.join(ece, on=unit, how="left", nulls_equal=True).with_columns(
            safe_div(pl.col("_pfm_gap"), pl.col("_pfm_W")).alias("expected_calibration_error")
        )
    if "calibration_slope" in names:
        out = out.join(_slopes(valid, unit), on=unit, how="left", nulls_equal=True)
    return out.select(*unit, "_pfm_N", *names)


def _group_values(
    cells: pl.LazyFrame,
    layout: Layout,
    names: Sequence[str],
    n_bins: int,
    strategy: Strategy,
    use_w: bool,
) -> pl.LazyFrame:
    """The wide group-values table: per unit ``m`` and ``m_support`` for each statistic."""
    unit = [_U, *layout.partitions, *layout.keys]
    valid = _normalized(cells, layout, use_w)
    sizes = _sizes(cells, layout, use_w)
    stats = _unit_statistics(valid, unit, names, n_bins, strategy)
    joined = sizes.join(stats, on=unit, how="left", nulls_equal=True)
    support = pl.col("_pfm_N").fill_null(0).cast(pl.Int64)
    size_cols = ["n", "n_null", *(["n_w"] if use_w else [])]
    return joined.select(
        *layout.partitions,
        *layout.keys,
        *size_cols,
        *[c for m in names for c in (pl.col(m), support.alias(f"{m}_support"))],
    )


def _reference_grid(
    cells: pl.LazyFrame, layout: Layout, reference: Reference, use_w: bool
) -> pl.LazyFrame:
    """Every group × every score of its partition, with the reference's cells beside its own.

    The disparity engine's :func:`reference_statistics` runs with the score as one more
    partition: per score, the reference's statistics are the named group's, total − own
    (``"rest"``) or the total (``"overall"``); ``"largest"`` picks the group with the most rows.
    """
    parts = [_U, *layout.partitions]
    unit = [*parts, *layout.keys]
    valid = _normalized(cells, layout, use_w)
    groups = _sizes(cells, layout, use_w).select(*unit, "n")
    scores = valid.select(*parts, _SC).unique()
    grid = (
        groups.join(scores, on=parts, how="inner", nulls_equal=True)
        .join(valid, on=[*unit, _SC], how="left", nulls_equal=True)
        .with_columns(pl.col(_C).fill_null(0), *[pl.col(c).fill_null(0.0) for c in (_WT, _P, _SS)])
    )
    engine_layout = Layout(keys=layout.keys, partitions=[*parts, _SC])
    schema = grid.collect_schema()
    with_ref = grid.with_columns(
        reference_statistics(reference, engine_layout, list(_STATS), schema)
    )
    return check_reference(with_ref, reference, engine_layout, shown=layout.partitions)


def _comparisons(
    cells: pl.LazyFrame,
    layout: Layout,
    names: Sequence[str],
    n_bins: int,
    strategy: Strategy,
    use_w: bool,
    reference: Reference,
    zero_reference: ZeroReference,
) -> pl.LazyFrame:
    """The wide comparisons table: per statistic ``m`` the columns ``m``, ``m_support``,
    ``m_reference_value``, ``m_difference``, ``m_ratio``."""
    if reference is None:
        raise InvalidOptionError("reference= is None; pass a group value, 'rest' or 'overall'")
    parts = [_U, *layout.partitions]
    unit = [*parts, *layout.keys]
    sizes = _sizes(cells, layout, use_w)
    if isinstance(reference, str) and reference == "overall":
        # one reference per partition: the pooled cells' statistics, computed once and
        # broadcast to its groups (not once per group on a group × score grid)
        valid = _normalized(cells, layout, use_w).filter(pl.col(_C) > 0)
        own_stats = _unit_statistics(valid, unit, names, n_bins, strategy)
        pooled = valid.group_by(*parts, _SC).agg(pl.col(c).sum() for c in _STATS)
        pooled_stats = _unit_statistics(pooled, parts, names, n_bins, strategy)
        ref_stats = sizes.select(unit).join(pooled_stats, on=parts, how="left", nulls_equal=True)
    else:
        grid = _reference_grid(cells, layout, reference, use_w)
        own = grid.select(*unit, _SC, *_STATS)
        ref = grid.select(*unit, _SC, *[pl.col(f"_pfm_ref_{c}").alias(c) for c in _STATS])
        own_stats = _unit_statistics(own.filter(pl.col(_C) > 0), unit, names, n_bins, strategy)
        ref_stats = _unit_statistics(ref.filter(pl.col(_C) > 0), unit, names, n_bins, strategy)
    size_layout = Layout(keys=layout.keys, partitions=[_U, *layout.partitions])
    special = isinstance(reference, str) and reference in ("overall", "rest")
    mask = (
        pl.lit(False)
        if special
        else reference_mask(reference, size_layout, sizes.collect_schema()).fill_null(False)
    )
    labelled = sizes.with_columns(
        reference_label(reference, layout).alias("reference"), mask.alias("is_reference")
    )
    joined = (
        labelled.join(own_stats, on=unit, how="left", nulls_equal=True)
        .join(
            ref_stats.rename({m: f"{m}_reference_value" for m in names}).drop("_pfm_N"),
            on=unit,
            how="left",
            nulls_equal=True,
        )
        # the named reference's own row: its reference cells are its own cells, so its
        # reference value is its value (not a second float sum in another order)
        .with_columns(
            [
                pl.when(pl.col("is_reference"))
                .then(pl.col(m))
                .otherwise(pl.col(f"{m}_reference_value"))
                .alias(f"{m}_reference_value")
                for m in names
            ]
        )
    )
    columns: list[pl.Expr] = []
    for m in names:
        difference, ratio = compare(
            pl.col(m), pl.col(f"{m}_reference_value"), zero_reference=zero_reference
        )
        columns += [
            pl.col(m),
            pl.col("_pfm_N").fill_null(0).cast(pl.Int64).alias(f"{m}_support"),
            pl.col(f"{m}_reference_value"),
            difference.alias(f"{m}_difference"),
            ratio.alias(f"{m}_ratio"),
        ]
    size_cols = ["n", "n_null", *(["n_w"] if use_w else [])]
    return joined.select(
        *layout.partitions,
        *layout.keys,
        *size_cols,
        "reference",
        "is_reference",
        *columns,
    )


# ---------------------------------------------------------------------------------------------
# Replicates
# ---------------------------------------------------------------------------------------------


def _replicate_cells(
    cells: pl.LazyFrame, layout: Layout, n_resamples: int, seed: int | None
) -> pl.LazyFrame:
    """Bootstrap replicates 1..B of a cell table (exact multinomial draws on its cells)."""
    schema = cells.collect_schema()
    keys = layout.keys
    parts = [p for p in layout.partitions if p != "attribute"]
    out_schema: dict[str, Any] = {"replicate": pl.Int64}
    out_schema.update({c: schema[c] for c in [*layout.partitions, *keys]})
    out_schema.update(
        {
            _SC: pl.Float64,
            "n": pl.Int64,
            "positives": pl.Int64,
            "score_sum": pl.Float64,
            "n_null": pl.Int64,
        }
    )
    has_null = "n_null" in schema.names()

    def run(table: pl.DataFrame) -> pl.DataFrame:
        pseudo = table.select(
            *layout.partitions,
            *keys,
            pl.col(_SC),
            safe_div(pl.col("score_sum"), pl.col("n")).fill_null(0.0).alias(_MEAN),
            pl.col("positives").cast(pl.Int64).alias("tp"),
            pl.lit(0, dtype=pl.Int64).alias("fp"),
            (pl.col("n") - pl.col("positives")).cast(pl.Int64).alias("tn"),
            pl.lit(0, dtype=pl.Int64).alias("fn"),
            pl.col("n").cast(pl.Int64),
            (pl.col("n_null") if has_null else pl.lit(0)).cast(pl.Int64).alias("n_null"),
        )
        reps = resample_partitions(
            pseudo,
            partitions=[p for p in parts if p in ("model", "period")],
            n_resamples=n_resamples,
            seed=seed,
        )
        return reps.select(
            pl.col("replicate"),
            *layout.partitions,
            *keys,
            pl.col(_SC),
            pl.col("n"),
            pl.col("tp").alias("positives"),
            (pl.col(_MEAN) * pl.col("n")).alias("score_sum"),
            pl.col("n_null"),
        ).select([pl.col(c).cast(t) for c, t in out_schema.items()])

    return cells.map_batches(run, schema=out_schema)


def _with_replicate_intervals(
    point: pl.LazyFrame,
    cells: pl.LazyFrame,
    layout: Layout,
    use_w: bool,
    n_resamples: int,
    level: float,
    seed: int | None,
    compute: Callable[[pl.LazyFrame, Layout], pl.LazyFrame],
    fields: Sequence[str],
) -> pl.LazyFrame:
    if use_w:
        raise InvalidOptionError(
            "intervals of weighted calibration statistics are not available (weighted cells are "
            "not resampled); pass weighted=False or n_resamples=0"
        )
    reps = _replicate_cells(cells, layout, n_resamples, seed)
    rep_layout = Layout.of(list(reps.collect_schema().names()), layout.keys, CELL_COLUMNS)
    replicated = compute(reps, rep_layout)
    match = [*layout.partitions, *layout.keys, *(["metric"] if "metric" in fields else [])]
    if "bin" in point.collect_schema().names():
        match.append("bin")
    values = [f for f in fields if f != "metric"]
    return attach_intervals(
        point, replicated, level=level, n_resamples=n_resamples, fields=values, by=match
    )


# ---------------------------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------------------------


def _finish_long(
    wide_frame: pl.LazyFrame, layout: Layout, names: Sequence[str], fields: Sequence[str]
) -> pl.LazyFrame:
    long = from_wide(wide_frame, quantities=list(names), fields=list(fields))
    return finish(long, keys=layout.keys, order=list(names))


@accepts_tables
def reliability_curve(
    data: FrameT,
    *,
    y_true: str | None = None,
    y_score: str | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    separately: bool = False,
    decimals: int | None = None,
    n_bins: int = 10,
    strategy: Strategy = "uniform",
    weighted: bool | None = None,
    n_resamples: int = 0,
    level: float = 0.95,
    seed: int | None = 0,
) -> FrameT:
    r"""Per-group reliability curves: mean score and fraction of positives per score bin.

    For each group and non-empty bin :math:`b`:
    ``mean_predicted`` :math:`= S_b / W_b` and ``fraction_positive`` :math:`= P_b / W_b`, with
    :math:`S_b, P_b, W_b` the (weighted) score sum, positives and rows of the bin — scikit-learn's
    ``calibration_curve`` (``prob_pred``, ``prob_true``) of each group, with the same bins
    (see the module docstring).

    Parameters
    ----------
    data
        Rows (then pass ``y_true=`` and ``y_score=``) or a score-cell table
        (:func:`score_cells`, :func:`~polars_fairmetrics.monitor.read_cells`).
    y_true, y_score, by, weight, pos_label, neg_label, separately, decimals
        As for :func:`score_cells` (rows only; ``by`` also names a cell table's keys).
    n_bins
        Number of bins :math:`B`.
    strategy
        ``"uniform"`` (equal width on [0, 1]) or ``"quantile"`` (equal counts per group).
    weighted
        Use the weighted sums (default: when present).
    n_resamples
        Bootstrap resamples for an interval of ``fraction_positive`` (0: none). The bins keep
        their observed edges in every resample.
    level
        Confidence level of the intervals.
    seed
        Seed of the resamples.

    Returns
    -------
    DataFrame or LazyFrame
        The reliability-curve kind of ``docs/results.md``: keys, partitions, ``bin`` (0-based),
        ``bin_low``, ``bin_high``, ``n``, ``positives``, [``n_w``], ``mean_predicted``,
        ``fraction_positive`` [and the interval columns], sorted by the keys and ``bin``.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a"] * 4 + ["b"] * 4, "y": [0, 0, 1, 1, 0, 1, 1, 1],
    ...                    "s": [0.1, 0.2, 0.7, 0.9, 0.2, 0.3, 0.6, 0.8]})
    >>> reliability_curve(df, y_true="y", y_score="s", by="g", n_bins=2).select(
    ...     "g", "bin", "n", "mean_predicted", "fraction_positive")
    shape: (4, 5)
    ┌─────┬─────┬─────┬────────────────┬───────────────────┐
    │ g   ┆ bin ┆ n   ┆ mean_predicted ┆ fraction_positive │
    │ --- ┆ --- ┆ --- ┆ ---            ┆ ---               │
    │ str ┆ i64 ┆ i64 ┆ f64            ┆ f64               │
    ╞═════╪═════╪═════╪════════════════╪═══════════════════╡
    │ a   ┆ 0   ┆ 2   ┆ 0.15           ┆ 0.0               │
    │ a   ┆ 1   ┆ 2   ┆ 0.8            ┆ 1.0               │
    │ b   ┆ 0   ┆ 2   ┆ 0.25           ┆ 0.5               │
    │ b   ┆ 1   ┆ 2   ┆ 0.7            ┆ 1.0               │
    └─────┴─────┴─────┴────────────────┴───────────────────┘
    """
    _check_bins(n_bins, strategy)
    check_interval_options(n_resamples, level)
    cells: FrameT
    layout: Layout
    cells, layout = _cells_of(
        data,
        y_true=y_true,
        y_score=y_score,
        by=by,
        weight=weight,
        pos_label=pos_label,
        neg_label=neg_label,
        separately=separately,
        decimals=decimals,
    )
    lazy: pl.LazyFrame = cells.lazy()
    use_w: bool = _use_weighted(list(schema_of(lazy).names()), weighted)

    def curve(table: pl.LazyFrame, lay: Layout, edges: pl.LazyFrame | None = None) -> pl.LazyFrame:
        unit = [_U, *lay.partitions, *lay.keys]
        valid = _normalized(table, lay, use_w)
        edge_unit = [_U, *layout.partitions, *layout.keys]
        bins = _bins(valid, unit, n_bins, strategy, edges=edges, edge_unit=edge_unit)
        return bins.select(
            *lay.partitions,
            *lay.keys,
            "bin",
            "bin_low",
            "bin_high",
            pl.col(_C).cast(pl.Int64).alias("n"),
            (
                pl.col(_P).alias("_pfm_pos_w")
                if use_w
                else pl.col(_P).round(0).cast(pl.Int64).alias("positives")
            ),
            *([pl.col(_WT).alias("n_w")] if use_w else []),
            safe_div(pl.col(_SS), pl.col(_WT)).alias("mean_predicted"),
            safe_div(pl.col(_P), pl.col(_WT)).alias("fraction_positive"),
        )

    point = curve(lazy, layout)
    if use_w:
        # positives stay a count: join the unweighted positives per bin
        counted = _bin_positives(lazy, layout, n_bins, strategy)
        point = point.join(
            counted, on=[*layout.partitions, *layout.keys, "bin"], how="left", nulls_equal=True
        ).drop("_pfm_pos_w")
    if n_resamples:
        edges = (
            _quantile_edges(
                _normalized(lazy, layout, use_w), [_U, *layout.partitions, *layout.keys], n_bins
            )
            if strategy == "quantile"
            else None
        )
        point = _with_replicate_intervals(
            point,
            lazy,
            layout,
            use_w,
            n_resamples,
            level,
            seed,
            lambda t, lay: curve(t, lay, edges),
            ("fraction_positive",),
        )
    lead: list[str] = [*(["attribute"] if "attribute" in layout.partitions else []), *layout.keys]
    lead += [p for p in layout.partitions if p != "attribute"]
    ordered = [
        *lead,
        "bin",
        "bin_low",
        "bin_high",
        "n",
        "positives",
        *(["n_w"] if use_w else []),
        "mean_predicted",
        "fraction_positive",
    ]
    extra = [c for c in point.collect_schema().names() if c not in ordered]
    out = point.select(*ordered, *extra).sort([*lead, "bin"], nulls_last=True)
    if isinstance(data, pl.DataFrame):
        return out.collect()
    return out


def _bin_positives(
    cells: pl.LazyFrame, layout: Layout, n_bins: int, strategy: Strategy
) -> pl.LazyFrame:
    """Unweighted positives per bin (the ``positives`` column of a weighted curve)."""
    unit = [_U, *layout.partitions, *layout.keys]
    valid = _normalized(cells, layout, False)
    edges = _quantile_edges(valid, unit, n_bins) if strategy == "quantile" else None
    bins = _bins(valid, unit, n_bins, strategy, edges=edges, edge_unit=unit)
    return bins.select(
        *layout.partitions,
        *layout.keys,
        "bin",
        pl.col(_P).round(0).cast(pl.Int64).alias("positives"),
    )


@accepts_tables
def calibration_metrics(
    data: FrameT,
    *,
    y_true: str | None = None,
    y_score: str | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    separately: bool = False,
    decimals: int | None = None,
    n_bins: int = 10,
    strategy: Strategy = "uniform",
    metrics: str | Sequence[str] | None = None,
    weighted: bool | None = None,
    n_resamples: int = 0,
    level: float = 0.95,
    seed: int | None = 0,
    wide: bool = False,
) -> FrameT:
    r"""Per-group calibration: expected calibration error, calibration-in-the-large and slope.

    .. math::

        \mathrm{ECE}_g = \sum_b |P_{g,b} - S_{g,b}| / W_g,\qquad
        \mathrm{CITL}_g = (S_g - P_g) / W_g,\qquad
        \operatorname{logit} P(y = 1 \mid s, g) = a_g + b_g \operatorname{logit}(s)

    (``calibration_slope`` is :math:`\hat b_g`; see the module docstring for the bins and the
    fit). ``support`` is the group's rows with a label and a score; values are null where the
    group has none (and the slope where the fit does not exist).

    Parameters
    ----------
    data
        Rows (with ``y_true=``, ``y_score=``) or a score-cell table.
    y_true, y_score, by, weight, pos_label, neg_label, separately, decimals
        As for :func:`score_cells`.
    n_bins, strategy
        The bins of the expected calibration error (as for :func:`reliability_curve`).
    metrics
        Names or aliases (``"ece"``, ``"citl"``, ``"slope"``) of :data:`CALIBRATION_METRICS`
        (default: all).
    weighted
        Use the weighted sums (default: when present).
    n_resamples, level, seed
        Bootstrap intervals (0: none): the statistics recomputed on resampled cells.
    wide
        One row per group and one column per statistic (``docs/results.md``).

    Returns
    -------
    DataFrame or LazyFrame
        The group-values kind: keys, partitions, ``metric``, ``value``, ``support``, ``n``,
        ``n_null`` (and ``n_w``), [interval columns].

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a"] * 4 + ["b"] * 4, "y": [0, 0, 1, 1, 0, 1, 1, 1],
    ...                    "s": [0.1, 0.2, 0.7, 0.9, 0.2, 0.3, 0.6, 0.8]})
    >>> calibration_metrics(df, y_true="y", y_score="s", by="g", n_bins=2,
    ...                     metrics=["ece", "citl"]).select("g", "metric", "value", "support")
    shape: (4, 4)
    ┌─────┬────────────────────────────┬────────┬─────────┐
    │ g   ┆ metric                     ┆ value  ┆ support │
    │ --- ┆ ---                        ┆ ---    ┆ ---     │
    │ str ┆ str                        ┆ f64    ┆ i64     │
    ╞═════╪════════════════════════════╪════════╪═════════╡
    │ a   ┆ expected_calibration_error ┆ 0.175  ┆ 4       │
    │ a   ┆ calibration_in_the_large   ┆ -0.025 ┆ 4       │
    │ b   ┆ expected_calibration_error ┆ 0.275  ┆ 4       │
    │ b   ┆ calibration_in_the_large   ┆ -0.275 ┆ 4       │
    └─────┴────────────────────────────┴────────┴─────────┘
    """
    _check_bins(n_bins, strategy)
    check_interval_options(n_resamples, level)
    names = _metric_names(metrics)
    cells: FrameT
    layout: Layout
    cells, layout = _cells_of(
        data,
        y_true=y_true,
        y_score=y_score,
        by=by,
        weight=weight,
        pos_label=pos_label,
        neg_label=neg_label,
        separately=separately,
        decimals=decimals,
    )
    lazy = cells.lazy()
    use_w = _use_weighted(list(schema_of(lazy).names()), weighted)

    def compute(table: pl.LazyFrame, lay: Layout) -> pl.LazyFrame:
        wide_frame = _group_values(table, lay, names, n_bins, strategy, use_w)
        return _finish_long(wide_frame, lay, names, ("support",))

    out = compute(lazy, layout)
    if n_resamples:
        out = _with_replicate_intervals(
            out, lazy, layout, use_w, n_resamples, level, seed, compute, ("metric", "value")
        )
        out = finish(out, keys=layout.keys, order=names)
    if wide:
        out = to_wide(out, quantities=names)
    if isinstance(data, pl.DataFrame):
        return out.collect()
    return out


@accepts_tables
def calibration_disparities(
    data: FrameT,
    *,
    y_true: str | None = None,
    y_score: str | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    separately: bool = False,
    decimals: int | None = None,
    n_bins: int = 10,
    strategy: Strategy = "uniform",
    metrics: str | Sequence[str] | None = None,
    reference: Reference = "overall",
    weighted: bool | None = None,
    zero_reference: ZeroReference = "null",
    n_resamples: int = 0,
    level: float = 0.95,
    seed: int | None = 0,
    wide: bool = False,
) -> FrameT:
    r"""Calibration statistics per group against a reference: difference and ratio.

    .. math::

        \text{difference}_g = m(\text{cells}_g) - m(\text{cells}_{ref}),\qquad
        \text{ratio}_g = m(\text{cells}_g) / m(\text{cells}_{ref})

    where :math:`\text{cells}_{ref}` are the score cells of the named group, of the rest of the
    population (total − group, score by score) or of the whole population, and :math:`m` a
    statistic of :func:`calibration_metrics` computed on them (its own bins and fit). The
    reference, difference and ratio come from the disparity engine
    (:func:`~polars_fairmetrics.disparity.reference_statistics`,
    :func:`~polars_fairmetrics.disparity.compare`).

    Parameters
    ----------
    data, y_true, y_score, by, weight, pos_label, neg_label, separately, decimals
        As for :func:`calibration_metrics`.
    n_bins, strategy, metrics, weighted, n_resamples, level, seed, wide
        As for :func:`calibration_metrics`.
    reference
        A group value (tuple or mapping for several keys; ``{attribute: value}`` with several
        attributes side by side), ``"rest"``, ``"largest"`` or ``"overall"`` (default).
    zero_reference
        A ratio whose reference value is 0: ``"null"`` (default) or ``"infinity"``.

    Returns
    -------
    DataFrame or LazyFrame
        The comparisons kind: keys, partitions, ``metric``, ``value``, ``support``, ``n``,
        ``n_null``, ``reference``, ``is_reference``, ``reference_value``, ``difference``,
        ``ratio`` [and the interval columns].

    Raises
    ------
    ReferenceGroupError
        A named reference absent from the data (when the query runs).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a"] * 4 + ["b"] * 4, "y": [0, 0, 1, 1, 0, 1, 1, 1],
    ...                    "s": [0.1, 0.2, 0.7, 0.9, 0.2, 0.3, 0.6, 0.8]})
    >>> calibration_disparities(df, y_true="y", y_score="s", by="g", metrics="citl",
    ...                         reference="a").select("g", "value", "reference_value",
    ...                                               "difference")
    shape: (2, 4)
    ┌─────┬────────┬─────────────────┬────────────┐
    │ g   ┆ value  ┆ reference_value ┆ difference │
    │ --- ┆ ---    ┆ ---             ┆ ---        │
    │ str ┆ f64    ┆ f64             ┆ f64        │
    ╞═════╪════════╪═════════════════╪════════════╡
    │ a   ┆ -0.025 ┆ -0.025          ┆ 0.0        │
    │ b   ┆ -0.275 ┆ -0.025          ┆ -0.25      │
    └─────┴────────┴─────────────────┴────────────┘
    """
    _check_bins(n_bins, strategy)
    check_interval_options(n_resamples, level)
    names = _metric_names(metrics)
    cells: FrameT
    layout: Layout
    cells, layout = _cells_of(
        data,
        y_true=y_true,
        y_score=y_score,
        by=by,
        weight=weight,
        pos_label=pos_label,
        neg_label=neg_label,
        separately=separately,
        decimals=decimals,
    )
    lazy = cells.lazy()
    use_w = _use_weighted(list(schema_of(lazy).names()), weighted)
    fields = ("support", "reference_value", "difference", "ratio")

    def compute(table: pl.LazyFrame, lay: Layout) -> pl.LazyFrame:
        wide_frame = _comparisons(
            table, lay, names, n_bins, strategy, use_w, reference, zero_reference
        )
        return _finish_long(wide_frame, lay, names, fields)

    out = compute(lazy, layout)
    if n_resamples:
        out = _with_replicate_intervals(
            out,
            lazy,
            layout,
            use_w,
            n_resamples,
            level,
            seed,
            compute,
            ("metric", "value", "difference", "ratio"),
        )
        out = finish(out, keys=layout.keys, order=names)
    if wide:
        out = to_wide(out, quantities=names)
    if isinstance(data, pl.DataFrame):
        return out.collect()
    return out
