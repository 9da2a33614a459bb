r"""Bootstrap confidence intervals for every statistic computed from counts or rows.

Two engines, one result format (:func:`intervals`):

- **counts** (the fast, exact path). When a statistic depends only on cell counts (group ×
  label × prediction, × score bin for thresholds, × weight value when weights are constant
  within cells), resampling :math:`N` rows with replacement *is* a multinomial draw on the
  cell table: :math:`c^* \sim \mathrm{Multinomial}(N, c / N)` (one draw per stratum when
  stratified). The cost is :math:`O(B \times \text{cells})`, independent of the row count.
  :func:`resample_counts` builds the table of replicate counts (a ``replicate`` column is a
  partition for :func:`~polars_fairmetrics.metrics_from_counts` and
  :func:`~polars_fairmetrics.disparities`), :func:`bootstrap_counts` evaluates any statistic
  of a count table over all replicates in one vectorised pass.
- **rows** (the general path). Each replicate gives every row a multiplicity (multinomial by
  default: a sampled join of the drawn row indices; or Poisson(1), approximate and
  streaming-friendly), passed to a user statistic as a weight column
  (:func:`bootstrap_rows`).

:func:`bootstrap_metrics` gives intervals for every per-group metric, every disparity
(difference, ratio), the between-groups summaries and equalized odds in one call, choosing the
exact count engine when it applies and saying which engine it used (``engine`` column).

Replicate 0 is the observed data (the point estimate); replicates 1..B are resamples. A
statistic undefined in a replicate (a group absent from it, a 0/0) is null there: it is
counted in ``n_defined``, never dropped silently.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from statistics import NormalDist
from typing import Any, Literal, cast

import numpy as np
import polars as pl

from polars_fairmetrics._typing import ColumnNames, FrameT, Label
from polars_fairmetrics._validate import as_list, require_columns, schema_of
from polars_fairmetrics.counts import (
    COUNT_COLUMNS,
    NULL_COLUMNS,
    WEIGHTED_COUNT_COLUMNS,
    confusion_counts,
    count_columns,
)
from polars_fairmetrics.disparity import (
    CRITERIA,
    Reference,
    _make_reference_guard,
    _reference_mask,
    between_groups,
    disparities,
    fairness_criteria,
)
from polars_fairmetrics.exceptions import InvalidOptionError, InvalidWeightError
from polars_fairmetrics.metrics import METRICS, Counts, _metric_names, safe_div

__all__ = [
    "INTERVAL_COLUMNS",
    "bootstrap_counts",
    "bootstrap_metrics",
    "bootstrap_rows",
    "intervals",
    "resample_counts",
]

Method = Literal["percentile", "basic", "bca"]
"""Interval methods: ``"percentile"``, ``"basic"`` (reverse percentile, the seed's formula) and
``"bca"`` (bias-corrected and accelerated; :func:`bootstrap_metrics` with the count engine)."""

REPLICATE = "replicate"
INTERVAL_COLUMNS: tuple[str, ...] = (
    "estimate", "ci_low", "ci_high", "std_error", "n_defined", "n_resamples", "confidence",
    "method", "engine",
)
"""The columns :func:`intervals` appends to the statistic's key columns."""

_IDX = "_pfm_row"
_GIDX = "_pfm_gidx"
_W = "_pfm_boot_w"
_STAT_ORDER = ("value", "difference", "ratio", "criterion", "between_groups_difference",
               "between_groups_ratio")


# ---------------------------------------------------------------------------------------------
# Option checks
# ---------------------------------------------------------------------------------------------


def _check_common(n_resamples: int, confidence: float, method: str) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise InvalidOptionError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not isinstance(confidence, (int, float)) or not 0.0 < float(confidence) < 1.0:
        raise InvalidOptionError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    if method not in ("percentile", "basic", "bca"):
        raise InvalidOptionError(
            f"method must be 'percentile', 'basic' or 'bca', got {method!r}"
        )


def _no_bca(method: str, where: str) -> None:
    if method == "bca":
        raise InvalidOptionError(
            f"method='bca' needs the count engine (bootstrap_metrics, bootstrap_counts), not "
            f"{where}; "
            "use 'percentile' or 'basic'"
        )


# ---------------------------------------------------------------------------------------------
# Intervals (shared by both engines)
# ---------------------------------------------------------------------------------------------


def intervals(
    replicates: FrameT,
    *,
    confidence: float = 0.95,
    method: Method = "percentile",
    engine: str = "user",
) -> FrameT:
    r"""Bootstrap intervals from a long table of replicate values.

    ``replicates`` has a ``replicate`` column (0 = the observed data, giving the estimate
    :math:`\hat x`; 1..B = the bootstrap replicates :math:`x^*_b`), a Float ``value`` column, and
    key columns (every other column) naming the statistic. With :math:`\alpha = 1 -`
    ``confidence`` and :math:`q_p` the :math:`p`-quantile of the defined (non-null)
    :math:`x^*_b`:

    - percentile: :math:`[q_{\alpha/2},\ q_{1-\alpha/2}]`;
    - basic (reverse percentile, the bias-adjusted-metrics seed's formula
      :math:`\hat x - \delta_{1-\alpha/2},\ \hat x - \delta_{\alpha/2}` with
      :math:`\delta = x^* - \hat x`): :math:`[2\hat x - q_{1-\alpha/2},\ 2\hat x - q_{\alpha/2}]`.

    Quantiles use linear interpolation between order statistics (numpy's default, "type 7").
    ``std_error`` is the standard deviation of the defined :math:`x^*_b` (ddof = 1);
    ``n_defined`` the number of replicates where the statistic was defined (not null);
    ``n_resamples`` the number of replicates :math:`B`.

    Parameters
    ----------
    replicates
        Long table: key columns, ``replicate`` (integer, 0 = observed), ``value``.
    confidence
        Confidence level in (0, 1).
    method
        ``"percentile"`` or ``"basic"``.
    engine
        Label written in the ``engine`` column.

    Returns
    -------
    DataFrame or LazyFrame
        The key columns then :data:`INTERVAL_COLUMNS`, sorted by the keys.

    Examples
    --------
    >>> import polars as pl
    >>> reps = pl.DataFrame({"replicate": [0, 1, 2, 3, 4], "value": [0.5, 0.2, 0.4, 0.6, 0.8]})
    >>> out = intervals(reps, confidence=0.5)
    >>> out.select("estimate", "ci_low", "ci_high", "n_defined").row(0)
    (0.5, 0.35, 0.65, 4)
    >>> intervals(reps, confidence=0.5, method="basic").select("ci_low", "ci_high").row(0)
    (0.35, 0.65)
    """
    _check_common(1, confidence, method)
    _no_bca(method, "intervals()")
    schema = schema_of(replicates)
    require_columns(schema, "replicate", [REPLICATE])
    require_columns(schema, "value", ["value"])
    keys = [c for c in schema.names() if c not in (REPLICATE, "value")]
    alpha = 1.0 - float(confidence)
    rep = pl.col(REPLICATE)
    boot = pl.col("value").filter(rep > 0)
    n_boot = rep.filter(rep > 0).n_unique().cast(pl.Int64).alias("n_resamples")
    aggs = [
        pl.col("value").filter(rep == 0).first().alias("estimate"),
        boot.quantile(alpha / 2, interpolation="linear").alias("_pfm_qlo"),
        boot.quantile(1 - alpha / 2, interpolation="linear").alias("_pfm_qhi"),
        boot.std(ddof=1).alias("std_error"),
        boot.count().cast(pl.Int64).alias("n_defined"),
        pl.col("n_resamples").first(),
    ]
    lazy = replicates.lazy().with_columns(pl.col("value").cast(pl.Float64), n_boot)
    grouped = lazy.group_by(keys).agg(aggs) if keys else lazy.select(aggs)
    est, qlo, qhi = pl.col("estimate"), pl.col("_pfm_qlo"), pl.col("_pfm_qhi")
    if method == "percentile":
        low, high = qlo, qhi
    else:
        low, high = 2 * est - qhi, 2 * est - qlo
    out = grouped.select(
        *keys,
        est,
        low.alias("ci_low"),
        high.alias("ci_high"),
        pl.col("std_error"),
        pl.col("n_defined"),
        pl.col("n_resamples"),
        pl.lit(float(confidence)).alias("confidence"),
        pl.lit(method).alias("method"),
        pl.lit(engine).alias("engine"),
    )
    if keys:
        out = out.sort(keys, nulls_last=True)
    if isinstance(replicates, pl.DataFrame):
        return out.collect()
    return out


# ---------------------------------------------------------------------------------------------
# Count engine: multinomial draws on the cell table
# ---------------------------------------------------------------------------------------------


def _table_keys(columns: Sequence[str]) -> tuple[list[str], bool]:
    """Group keys of a count table (every non-count column but ``threshold``) and thresholds."""
    if "attribute" in columns:
        raise InvalidOptionError(
            "a count table made with separately=True counts every row once per attribute and "
            "cannot be resampled; count the intersection (by=[...]) and roll up per replicate"
        )
    if REPLICATE in columns:
        raise InvalidOptionError("the count table already has a 'replicate' column")
    missing = [c for c in COUNT_COLUMNS[:4] if c not in columns]
    if missing:
        raise InvalidOptionError(f"not a count table: missing {', '.join(missing)}")
    counted = set(count_columns(columns))
    keys = [c for c in columns if c not in counted and c != "threshold"]
    return keys, "threshold" in columns


def _replicate_schema(
    counts_schema: Mapping[str, pl.DataType], keys: list[str], thresholded: bool
) -> dict[str, pl.DataType]:
    schema: dict[str, pl.DataType] = {REPLICATE: pl.Int64()}
    schema.update({k: counts_schema[k] for k in keys})
    if thresholded:
        schema["threshold"] = pl.Float64()
    for c in (*COUNT_COLUMNS, "n_null"):
        schema[c] = pl.Int64()
    return schema


def _draw(
    table: pl.DataFrame,
    keys: list[str],
    thresholded: bool,
    strata: list[str],
    n_resamples: int,
    seed: int | None,
    include_observed: bool,
    jackknife: list[Any] | None = None,
) -> pl.DataFrame:
    """Replicate count table: multinomial draws of the cells of ``table`` (eager, small).

    With ``jackknife`` (a list, filled in place with the cell counts), the leave-one-out
    tables follow the bootstrap replicates as replicates B+1 … B+K: one per non-empty cell,
    that cell minus one row; every row of the cell gives the same table, so its weight in the
    jackknife is the cell count.
    """
    order = [*keys, *(["threshold"] if thresholded else [])]
    table = table.sort(order, nulls_last=True) if order else table
    n_null = (
        table["n_null"].to_numpy().astype(np.int64)
        if "n_null" in table.columns
        else np.zeros(table.height, dtype=np.int64)
    )
    if thresholded:
        groups = table.select(keys).unique(maintain_order=True) if keys else pl.DataFrame()
        n_groups = groups.height if keys else 1
        n_thr = table.height // max(n_groups, 1)
        if n_groups * n_thr != table.height:
            raise InvalidOptionError(
                "every group of a thresholded count table needs every threshold")
        thresholds = table["threshold"][:n_thr].to_numpy()

        def grid(col: str) -> Any:
            return table[col].to_numpy().astype(np.int64).reshape(n_groups, n_thr)

        tp, fp, tn, fn = grid("tp"), grid("fp"), grid("tn"), grid("fn")
        # score bins: bin 0 below the first threshold, bin k in [t_k, t_{k+1}), bin T above t_T
        pos = np.empty((n_groups, n_thr + 1), dtype=np.int64)
        neg = np.empty((n_groups, n_thr + 1), dtype=np.int64)
        pos[:, 0], neg[:, 0] = fn[:, 0], tn[:, 0]
        pos[:, 1:n_thr], neg[:, 1:n_thr] = tp[:, :-1] - tp[:, 1:], fp[:, :-1] - fp[:, 1:]
        pos[:, n_thr], neg[:, n_thr] = tp[:, -1], fp[:, -1]
        nulls = n_null.reshape(n_groups, n_thr)[:, :1]
        cells = np.concatenate([pos, neg, nulls], axis=1)
    else:
        groups = table.select(keys) if keys else pl.DataFrame()
        n_groups, n_thr = table.height, 1
        arrays = [table[c].to_numpy().astype(np.int64) for c in ("tp", "fp", "tn", "fn")]
        cells = np.column_stack([*arrays, n_null]) if n_groups else np.zeros((0, 5), np.int64)
    if (cells < 0).any():
        raise InvalidOptionError("the count table has negative cells (counts must be additive)")
    n_cells = cells.shape[1]
    if strata and n_groups:
        stratum = _stratum_ids(groups.select(strata))
    else:
        stratum = np.zeros(n_groups, dtype=np.int64)
    rng = np.random.default_rng(seed)
    draws = np.zeros((n_resamples, n_groups, n_cells), dtype=np.int64)
    for s in np.unique(stratum):
        rows = np.flatnonzero(stratum == s)
        flat = cells[rows].ravel()
        total = int(flat.sum())
        if total == 0:
            continue
        drawn = rng.multinomial(total, flat / total, size=n_resamples)
        draws[:, rows, :] = drawn.reshape(n_resamples, rows.size, n_cells)
    rep_ids = np.arange(1, n_resamples + 1, dtype=np.int64)
    if include_observed:
        draws = np.concatenate([cells[None], draws], axis=0)
        rep_ids = np.concatenate([[0], rep_ids])
    if jackknife is not None:
        nonzero = np.flatnonzero(cells.ravel() > 0)
        if nonzero.size * cells.size > 50_000_000:
            raise InvalidOptionError(
                f"BCa needs {nonzero.size:,} leave-one-out tables of {cells.size:,} cells: too "
                "many (fewer thresholds, or method='percentile'/'basic')"
            )
        loo = np.repeat(cells[None], nonzero.size, axis=0).reshape(nonzero.size, -1)
        loo[np.arange(nonzero.size), nonzero] -= 1
        draws = np.concatenate([draws, loo.reshape(nonzero.size, *cells.shape)], axis=0)
        rep_ids = np.concatenate([rep_ids, np.arange(n_resamples + 1,
                                                     n_resamples + 1 + nonzero.size)])
        jackknife.extend(cells.ravel()[nonzero].tolist())
    n_reps = draws.shape[0]
    if thresholded:
        k = n_thr + 1
        p, q = draws[..., :k], draws[..., k:2 * k]
        rtp = np.cumsum(p[..., ::-1], axis=-1)[..., ::-1][..., 1:]
        rfp = np.cumsum(q[..., ::-1], axis=-1)[..., ::-1][..., 1:]
        rfn = np.cumsum(p, axis=-1)[..., :n_thr]
        rtn = np.cumsum(q, axis=-1)[..., :n_thr]
        rnull = np.repeat(draws[..., 2 * k:], n_thr, axis=-1)
    else:
        rtp, rfp, rtn, rfn, rnull = (draws[..., i:i + 1] for i in range(5))
    size = n_reps * n_groups * n_thr
    data: dict[str, Any] = {REPLICATE: np.repeat(rep_ids, n_groups * n_thr)}
    out = pl.DataFrame(data)
    if keys:
        gidx = np.tile(np.repeat(np.arange(n_groups), n_thr), n_reps)
        out = pl.concat([out, groups[gidx]], how="horizontal")
    cols: dict[str, Any] = {}
    if thresholded:
        cols["threshold"] = np.tile(thresholds, n_reps * n_groups)
    cols.update({"tp": rtp.reshape(size), "fp": rfp.reshape(size), "tn": rtn.reshape(size),
                 "fn": rfn.reshape(size)})
    cols["n"] = cols["tp"] + cols["fp"] + cols["tn"] + cols["fn"]
    cols["n_null"] = rnull.reshape(size)
    out = pl.concat([out, pl.DataFrame(cols)], how="horizontal")
    schema = _replicate_schema(table.schema, keys, thresholded)
    return out.select([pl.col(c).cast(t) for c, t in schema.items()])


def _stratum_ids(values: pl.DataFrame) -> Any:
    """Stratum number of each row: rank of its value among the sorted distinct values."""
    cols = values.columns
    distinct = values.unique().sort(cols, nulls_last=True).with_row_index(_GIDX)
    joined = values.join(distinct, on=cols, how="left", nulls_equal=True, maintain_order="left")
    return joined[_GIDX].to_numpy().astype(np.int64)


def _collapse(
    rep: pl.DataFrame,
    keep: list[str],
    *,
    weight_key: str | None,
    reweight_by: str | None,
    shares: Mapping[Any, float] | None,
) -> pl.DataFrame:
    """Sum fine replicate cells to the ``keep`` keys, building weighted sums where asked.

    ``weight_key``: a key column holding each cell's (constant) row weight. ``reweight_by`` with
    ``shares``: the sample-dependent stratum weight :math:`w_s = p_s N^* / N^*_s`, recomputed
    in every replicate from that replicate's counts.
    """
    thr = ["threshold"] if "threshold" in rep.columns else []
    part = [REPLICATE, *thr]
    weighted = weight_key is not None or reweight_by is not None or "tp_w" in rep.columns
    w: pl.Expr | None = None
    if weight_key is not None:
        w = pl.col(weight_key).cast(pl.Float64)
    if reweight_by is not None:
        assert shares is not None
        _check_shares(rep[reweight_by], reweight_by, shares)
        share = pl.col(reweight_by).replace_strict(
            dict(shares), return_dtype=pl.Float64, default=None
        )
        w_s = share * pl.col("n").sum().over(part) / pl.col("n").sum().over([*part, reweight_by])
        w = w_s if w is None else w * w_s
    base = ["tp", "fp", "tn", "fn"]
    if weighted:
        if "tp_w" in rep.columns:
            wexprs = [pl.col(f"{c}_w") * (w if w is not None else pl.lit(1.0)) for c in base]
        else:
            wexprs = [pl.col(c) * cast(pl.Expr, w) for c in base]
        rep = rep.with_columns(
            [e.fill_null(0.0).alias(f"{c}_w") for e, c in zip(wexprs, base, strict=True)]
        )
    sums = [*base, "n", *(c for c in ("n_null",) if c in rep.columns)]
    wsums = [f"{c}_w" for c in base] if weighted else []
    out = rep.group_by([*part[:1], *keep, *thr]).agg(pl.col([*sums, *wsums]).sum())
    if weighted:
        out = out.with_columns(pl.sum_horizontal(wsums).alias("n_w"))
    cols = [REPLICATE, *keep, *thr, *sums, *wsums, *(["n_w"] if weighted else [])]
    return out.select(cols).sort([REPLICATE, *keep, *thr], nulls_last=True)


def _check_shares(values: pl.Series, column: str, shares: Mapping[Any, float]) -> None:
    for v in values.unique().to_list():
        if v not in shares:
            raise InvalidOptionError(
                f"column {column!r} (reweight_by) has a value {v!r} with no population share; "
                f"shares given for {sorted(map(repr, shares))}"
            )
    for k, p in shares.items():
        if not isinstance(p, (int, float)) or not math.isfinite(p) or p < 0:
            raise InvalidWeightError(
                f"population share {p!r} of {column!r} = {k!r} must be a finite number >= 0"
            )


def resample_counts(
    counts: FrameT,
    *,
    n_resamples: int = 1000,
    strata: ColumnNames | None = None,
    seed: int | None = None,
    include_observed: bool = False,
) -> FrameT:
    r"""Bootstrap replicates of a count table, by multinomial draws on its cells.

    Resampling the :math:`N` counted rows with replacement changes only how many rows fall in
    each cell (group × label × prediction, or × score bin for a thresholded table, plus one cell
    of rows with a null value), so one replicate is exactly

    .. math:: c^* \sim \mathrm{Multinomial}\big(N,\ c / N\big)

    over the cells :math:`c` of the table, or one independent draw per stratum (with the
    stratum's own :math:`N_s`) when ``strata`` is given. For a thresholded table the counts per
    threshold are cumulative sums of the score-bin cells, rebuilt after the draw. A group absent
    from a replicate keeps its rows with zero counts (its metrics are then null).

    Parameters
    ----------
    counts
        A count table from :func:`~polars_fairmetrics.confusion_counts` (not ``separately``).
        Weighted sums are not resampled (they need the row weights: put the weight column in
        ``by`` and use :func:`bootstrap_metrics`, or the row engine).
    n_resamples
        Number of replicates :math:`B`.
    strata
        Key column(s) to resample within (their totals stay fixed); default: plain bootstrap.
    seed
        Seed of ``numpy.random.default_rng``: the same seed gives the same replicates.
    include_observed
        Add the observed table as replicate 0.

    Returns
    -------
    DataFrame or LazyFrame
        ``replicate`` (Int64, 1..B), the keys, [``threshold``], ``tp fp tn fn n n_null`` (Int64),
        sorted by replicate and keys. Lazy in, lazy out (the draw runs when collected).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [1, 0, 0, 0]})
    >>> counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    >>> reps = resample_counts(counts, n_resamples=3, strata="g", seed=1)
    >>> reps.group_by("replicate", "g").agg(pl.col("n").sum())["n"].to_list()
    [2, 2, 2, 2, 2, 2]
    """
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise InvalidOptionError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    schema = schema_of(counts)
    keys, thresholded = _table_keys(schema.names())
    strata_cols = as_list(strata)
    require_columns(pl.Schema({k: schema[k] for k in keys}), "strata", strata_cols)
    out_schema = _replicate_schema(dict(schema), keys, thresholded)

    def run(table: pl.DataFrame) -> pl.DataFrame:
        return _draw(table, keys, thresholded, strata_cols, n_resamples, seed, include_observed)

    if isinstance(counts, pl.DataFrame):
        return run(counts)
    return counts.map_batches(run, schema=out_schema)


def bootstrap_counts(
    counts: FrameT,
    statistic: Callable[[pl.DataFrame], pl.DataFrame],
    *,
    n_resamples: int = 1000,
    strata: ColumnNames | None = None,
    seed: int | None = None,
    confidence: float = 0.95,
    method: Method = "percentile",
    weight_key: str | None = None,
    reweight_by: str | None = None,
    population_shares: Mapping[Any, float] | None = None,
) -> FrameT:
    r"""Intervals of any count-table statistic, by the count engine (:func:`resample_counts`).

    ``statistic`` receives the replicate count table (eager; replicate 0 is the observed table)
    and returns a long frame: ``replicate``, key columns, and a Float ``value`` column. Any
    function of :func:`~polars_fairmetrics.metrics_from_counts` /
    :func:`~polars_fairmetrics.disparities` kind works, since they treat ``replicate`` as a
    partition; so do curve summaries of a thresholded table (the score-bin cells are resampled
    and the per-threshold counts rebuilt). The intervals are those of :func:`intervals`, with
    ``engine = "counts"``; ``method="bca"`` also evaluates the statistic on the leave-one-out
    tables (one per non-empty cell, weighted by its count) for the acceleration, see
    :func:`bootstrap_metrics`.

    Weighted statistics: ``weight_key`` names a key column holding each cell's row weight
    (count with ``by=[..., weight]``); ``reweight_by`` + ``population_shares`` give the
    sample-dependent stratum weights :math:`w_s = p_s N^* / N^*_s` recomputed in every
    replicate (see :func:`bootstrap_metrics`). Either way the statistic receives the table
    summed over those columns, with weighted sums ``tp_w … n_w``.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "b"] * 50, "y": [1, 1, 0, 0] * 25, "p": [1, 0] * 50})
    >>> counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    >>> def tpr(t: pl.DataFrame) -> pl.DataFrame:
    ...     return pfm.metrics_from_counts(t, metrics="tpr", long=True).select(
    ...         "replicate", "g", "metric", "value")
    >>> out = bootstrap_counts(counts, tpr, n_resamples=200, seed=0)
    >>> out.select("g", "estimate", "n_defined").rows()
    [('a', 1.0, 200), ('b', 0.0, 200)]
    """
    _check_common(n_resamples, confidence, method)
    schema = schema_of(counts)
    keys, thresholded = _table_keys(schema.names())
    strata_cols = as_list(strata)
    require_columns(pl.Schema({k: schema[k] for k in keys}), "strata", strata_cols)
    if (reweight_by is None) != (population_shares is None):
        raise InvalidOptionError("pass reweight_by= and population_shares= together")
    extra = [c for c in (weight_key, reweight_by) if c is not None]
    require_columns(pl.Schema({k: schema[k] for k in keys}), "weight_key/reweight_by", extra)
    keep = [k for k in keys if k not in extra]

    def prepare(rep: pl.DataFrame) -> pl.DataFrame:
        if not extra:
            return rep
        return _collapse(rep, keep, weight_key=weight_key, reweight_by=reweight_by,
                         shares=population_shares)

    empty = pl.DataFrame(schema=_replicate_schema(dict(schema), keys, thresholded))
    stat_schema = _stat_schema(statistic(prepare(empty)))

    def run(table: pl.DataFrame) -> pl.DataFrame:
        rep = _draw(table, keys, thresholded, strata_cols, n_resamples, seed, True)
        return _stat_frame(statistic(prepare(rep)), stat_schema)

    if method == "bca":
        stat_keys = [c for c in stat_schema if c not in (REPLICATE, "value")]

        def run_bca(table: pl.DataFrame) -> pl.DataFrame:
            jack: list[Any] = []
            rep = _draw(table, keys, thresholded, strata_cols, n_resamples, seed, True, jack)
            long = _stat_frame(statistic(prepare(rep)), stat_schema)
            return _long_intervals(long, stat_keys, n_resamples, jack, confidence, "counts")

        out_schema = {**{k: stat_schema[k] for k in stat_keys}, **_INTERVAL_SCHEMA}
        if isinstance(counts, pl.DataFrame):
            return run_bca(counts)
        return counts.map_batches(run_bca, schema=out_schema)

    if isinstance(counts, pl.DataFrame):
        reps: FrameT = run(counts)
    else:
        reps = counts.map_batches(run, schema=stat_schema)
    return intervals(reps, confidence=confidence, method=method, engine="counts")


def _long_intervals(long: pl.DataFrame, keys: list[str], n_boot: int, jack: Sequence[float],
                    confidence: float, engine: str) -> pl.DataFrame:
    """BCa intervals of a long replicate frame (0 = observed, 1..B, then the jackknife)."""
    n_cols = 1 + n_boot + len(jack)
    if keys:
        distinct = long.select(keys).unique().sort(keys, nulls_last=True)
        indexed = long.join(distinct.with_row_index(_GIDX), on=keys, how="left",
                            nulls_equal=True)
        rows = indexed[_GIDX].to_numpy().astype(np.int64)
    else:
        distinct = pl.DataFrame()
        rows = np.zeros(long.height, dtype=np.int64)
    matrix = np.full((max(distinct.height, 1), n_cols), np.nan)
    matrix[rows, long[REPLICATE].to_numpy().astype(np.int64)] = (
        long["value"].cast(pl.Float64).fill_null(np.nan).to_numpy())
    res = _matrix_intervals(matrix, confidence, "bca", jack)
    out = pl.DataFrame(res, nan_to_null=True).with_columns(
        pl.lit(n_boot, dtype=pl.Int64).alias("n_resamples"),
        pl.lit(float(confidence)).alias("confidence"),
        pl.lit("bca").alias("method"),
        pl.lit(engine).alias("engine"),
    )
    if keys:
        out = pl.concat([distinct, out], how="horizontal")
    return out.select([*keys, *[pl.col(c).cast(t) for c, t in _INTERVAL_SCHEMA.items()]])


def _stat_schema(frame: pl.DataFrame | pl.LazyFrame) -> dict[str, pl.DataType]:
    schema = dict(schema_of(frame))
    for c in (REPLICATE, "value"):
        if c not in schema:
            raise InvalidOptionError(
                f"the statistic must return a long frame with a {c!r} column; got {list(schema)}"
            )
    schema[REPLICATE] = pl.Int64()
    schema["value"] = pl.Float64()
    return schema


def _stat_frame(frame: pl.DataFrame | pl.LazyFrame, schema: Mapping[str, pl.DataType]
                ) -> pl.DataFrame:
    eager = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
    return eager.select([pl.col(c).cast(t) for c, t in schema.items()])


# ---------------------------------------------------------------------------------------------
# Row engine: multiplicities joined to the rows
# ---------------------------------------------------------------------------------------------


def _progress(enabled: bool | None) -> Callable[[int, int], None]:
    show = sys.stderr.isatty() if enabled is None else enabled

    def report(done: int, total: int) -> None:
        if show and (done == total or done % max(1, total // 100) == 0):
            end = "\n" if done == total else ""
            print(f"\rbootstrap (rows): {done}/{total} replicates", end=end, file=sys.stderr,
                  flush=True)

    return report


def _row_replicates(
    data: pl.DataFrame | pl.LazyFrame,
    *,
    n_resamples: int,
    strata: list[str],
    seed: int | None,
    multiplicity: str,
    weight_name: str,
) -> Iterator[tuple[int, pl.LazyFrame]]:
    """Replicate 0 (every multiplicity 1) then B resamples, each the rows with a weight column.

    Multinomial resampling, for each replicate and each stratum in sorted order of the stratum
    values (nulls last): ``rng.integers(0, n_s, size=n_s)`` indexes the stratum's rows in row
    order; the multiplicity of a row is the number of times it was drawn. Poisson: one
    ``rng.poisson(1.0, size=n)`` per replicate.
    """
    if multiplicity not in ("multinomial", "poisson"):
        raise InvalidOptionError(
            f"multiplicity must be 'multinomial' or 'poisson', got {multiplicity!r}"
        )
    if multiplicity == "poisson" and strata:
        raise InvalidOptionError("Poisson multiplicities are not stratified; drop strata=")
    schema = schema_of(data)
    require_columns(schema, "strata", strata)
    if weight_name in schema:
        raise InvalidOptionError(f"the data already has a column {weight_name!r}")
    rng = np.random.default_rng(seed)
    if strata:
        ids = _stratum_ids(data.lazy().select(strata).collect())
        order = np.argsort(ids, kind="stable")
        bounds = np.flatnonzero(np.diff(ids[order])) + 1
        members = np.split(order, bounds)
        n = ids.size
    else:
        n = int(data.lazy().select(pl.len()).collect().item())
        members = [np.arange(n)]
    eager = isinstance(data, pl.DataFrame)
    indexed = None if eager else data.lazy().with_row_index(_IDX).with_columns(
        pl.col(_IDX).cast(pl.Int64))

    def attach(m: np.ndarray[Any, Any]) -> pl.LazyFrame:
        if eager:
            frame = cast(pl.DataFrame, data)
            with_w = frame.with_columns(pl.Series(weight_name, m, dtype=pl.Float64))
            return with_w.filter(pl.col(weight_name) > 0).lazy()
        keep = np.flatnonzero(m)
        mult = pl.LazyFrame({_IDX: keep.astype(np.int64),
                             weight_name: m[keep].astype(np.float64)})
        return cast(pl.LazyFrame, indexed).join(mult, on=_IDX, how="inner").drop(_IDX)

    yield 0, attach(np.ones(n, dtype=np.int64))
    for b in range(1, n_resamples + 1):
        if multiplicity == "poisson":
            m = rng.poisson(1.0, size=n)
        else:
            m = np.zeros(n, dtype=np.int64)
            for rows in members:
                drawn = rng.integers(0, rows.size, size=rows.size)
                m[rows] = np.bincount(drawn, minlength=rows.size)
        yield b, attach(m)


def bootstrap_rows(
    data: pl.DataFrame | pl.LazyFrame,
    statistic: Callable[[pl.LazyFrame], pl.DataFrame | pl.LazyFrame],
    *,
    n_resamples: int = 1000,
    strata: ColumnNames | None = None,
    seed: int | None = None,
    confidence: float = 0.95,
    method: Method = "percentile",
    multiplicity: Literal["multinomial", "poisson"] = "multinomial",
    weight_name: str = "bootstrap_weight",
    progress: bool | None = None,
) -> pl.DataFrame:
    """Intervals of any row-level statistic, by resampling rows (the general engine).

    Each replicate gives every row a multiplicity :math:`m_i` (how many times it was drawn) in
    the column ``weight_name`` (Float64; rows drawn 0 times are left out); ``statistic`` gets
    that LazyFrame and returns a long frame of key columns and a ``value`` column. Replicate 0
    (every :math:`m_i = 1`) gives the estimate. A count-based statistic uses the multiplicity as
    its weight (times the row weight, for weighted metrics); sample-dependent weights are
    recomputed by the statistic from the replicate's rows.

    ``multiplicity="multinomial"`` resamples exactly :math:`n` rows (:math:`n_s` per stratum):
    the drawn indices are a small table joined to the rows (``with_row_index`` + inner join), so
    a LazyFrame source is scanned once per replicate and never held in memory.
    ``"poisson"``: :math:`m_i \\sim \\mathrm{Poisson}(1)` independently, an approximation of the
    multinomial bootstrap (the sample size varies) that needs no row count.

    This function runs the :math:`B + 1` queries when called and returns a DataFrame. A progress
    line is written to stderr when it is a terminal (``progress=True/False`` forces it).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "b"] * 50, "y": [1, 1, 0, 0] * 25, "p": [1, 0] * 50})
    >>> def tpr(rows: pl.LazyFrame) -> pl.LazyFrame:
    ...     counts = pfm.confusion_counts(rows, y_true="y", y_pred="p", by="g",
    ...                                   weight="bootstrap_weight")
    ...     return pfm.metrics_from_counts(counts, metrics="tpr", long=True).select(
    ...         "g", "value")
    >>> out = bootstrap_rows(df, tpr, n_resamples=20, strata="g", seed=0)
    >>> out.select("g", "estimate", "n_defined", "engine").rows()
    [('a', 1.0, 20, 'rows'), ('b', 0.0, 20, 'rows')]
    """
    _check_common(n_resamples, confidence, method)
    _no_bca(method, "bootstrap_rows()")
    strata_cols = as_list(strata)
    report = _progress(progress)
    parts = []
    for b, frame in _row_replicates(data, n_resamples=n_resamples, strata=strata_cols, seed=seed,
                                    multiplicity=multiplicity, weight_name=weight_name):
        out = statistic(frame)
        eager = out.collect() if isinstance(out, pl.LazyFrame) else out
        if "value" not in eager.columns:
            raise InvalidOptionError(
                f"the statistic must return a 'value' column; got {eager.columns}"
            )
        if REPLICATE in eager.columns:
            raise InvalidOptionError("the statistic must not return a 'replicate' column")
        parts.append(eager.with_columns(pl.lit(b, dtype=pl.Int64).alias(REPLICATE),
                                        pl.col("value").cast(pl.Float64)))
        if b:
            report(b, n_resamples)
    engine = "rows" if multiplicity == "multinomial" else "rows-poisson"
    reps = pl.concat(parts, how="vertical")
    return intervals(reps, confidence=confidence, method=method, engine=engine)


# ---------------------------------------------------------------------------------------------
# High level: every metric, disparity and summary in one call
# ---------------------------------------------------------------------------------------------


def _metric_statistics(
    rep: pl.DataFrame,
    keys: list[str],
    metrics: list[str],
    reference: Reference,
    weighted: bool,
    criteria: Sequence[str],
) -> pl.DataFrame:
    """Long replicate values of every statistic (eager, on the small replicate count table)."""
    thr = ["threshold"] if "threshold" in rep.columns else []
    tag = [REPLICATE, *keys, *thr, "metric"]
    disp = disparities(rep, by=keys, metrics=metrics, reference=reference, weighted=weighted)
    parts = [
        disp.select(*tag, pl.lit(s).alias("statistic"), pl.col(s).alias("value"))
        for s in ("value", "difference", "ratio")
    ]
    if criteria:
        crit = fairness_criteria(rep, by=keys, reference=reference, weighted=weighted,
                                 criteria=list(criteria))
        parts.append(crit.select(REPLICATE, *keys, *thr, pl.col("criterion").alias("metric"),
                                 pl.lit("criterion").alias("statistic"), "value"))
    if keys:
        bg = between_groups(rep, by=keys, metrics=metrics, weighted=weighted)
        for s in ("difference", "ratio"):
            parts.append(bg.select(REPLICATE, *thr, "metric",
                                   pl.lit(f"between_groups_{s}").alias("statistic"),
                                   pl.col(s).alias("value")))
    return pl.concat(parts, how="diagonal_relaxed")


_INTERVAL_SCHEMA: dict[str, pl.DataType] = {
    "estimate": pl.Float64(), "ci_low": pl.Float64(), "ci_high": pl.Float64(),
    "std_error": pl.Float64(), "n_defined": pl.Int64(), "n_resamples": pl.Int64(),
    "confidence": pl.Float64(), "method": pl.String(), "engine": pl.String(),
}


def _bca_bounds(x: Any, est: float, jack: Any, weights: Any, alpha: float
                ) -> tuple[float, float]:
    r"""BCa quantile levels applied to the defined replicate values ``x`` (sorted or not).

    Bias correction :math:`z_0 = \Phi^{-1}((\#\{x^* < \hat x\} + \#\{x^* = \hat x\}/2)
    / B)`; acceleration from the weighted jackknife
    :math:`a = \sum c_k d_k^3 / (6 (\sum c_k d_k^2)^{3/2})`, :math:`d_k = \bar\theta -
    \theta_{(k)}`; levels :math:`\Phi(z_0 + (z_0 + z_p) / (1 - a (z_0 + z_p)))`.
    """
    nd = NormalDist()
    if x.size == 0 or math.isnan(est):
        return math.nan, math.nan
    prop = (float((x < est).sum()) + 0.5 * float((x == est).sum())) / x.size
    if not 0.0 < prop < 1.0:
        return math.nan, math.nan
    z0 = nd.inv_cdf(prop)
    ok = ~np.isnan(jack)
    acc = 0.0
    if ok.any():
        w, th = weights[ok], jack[ok]
        d = (w * th).sum() / w.sum() - th
        den = 6.0 * float((w * d * d).sum()) ** 1.5
        acc = float((w * d ** 3).sum()) / den if den > 0 else 0.0
    levels = []
    for p in (alpha / 2, 1 - alpha / 2):
        zp = z0 + nd.inv_cdf(p)
        denom = 1.0 - acc * zp
        levels.append(nd.cdf(z0 + zp / denom) if denom > 0 else (0.0 if p < 0.5 else 1.0))
    lo, hi = np.quantile(x, levels)
    return float(lo), float(hi)


def _matrix_intervals(values: Any, confidence: float, method: str,
                      jack_weights: Sequence[float] | None = None) -> dict[str, Any]:
    """:func:`intervals` on a (statistics × replicates) matrix, NaN = undefined; column 0 is
    the observed value, then the bootstrap replicates, then (BCa) the jackknife tables.
    Same quantile rule (linear, numpy's default) and ddof = 1."""
    n_jack = len(jack_weights) if jack_weights is not None else 0
    est = values[:, 0]
    boot = values[:, 1:values.shape[1] - n_jack]
    alpha = 1.0 - confidence
    n_stats, n_boot = boot.shape
    q_lo, q_hi = np.full(n_stats, np.nan), np.full(n_stats, np.nan)
    std = np.full(n_stats, np.nan)
    undefined = np.isnan(boot)
    n_def = n_boot - undefined.sum(axis=1)
    full = n_def == n_boot
    if full.any() and n_boot > 0:
        q_lo[full], q_hi[full] = np.quantile(boot[full], [alpha / 2, 1 - alpha / 2], axis=1)
        if n_boot > 1:
            std[full] = np.std(boot[full], axis=1, ddof=1)
    for i in np.flatnonzero(~full & (n_def > 0)):
        x = boot[i][~undefined[i]]
        q_lo[i], q_hi[i] = np.quantile(x, [alpha / 2, 1 - alpha / 2])
        if x.size > 1:
            std[i] = np.std(x, ddof=1)
    if method == "percentile":
        low, high = q_lo, q_hi
    elif method == "basic":
        low, high = 2 * est - q_hi, 2 * est - q_lo
    else:
        weights = np.asarray(jack_weights, dtype=np.float64)
        jack = values[:, values.shape[1] - n_jack:]
        low, high = np.full(n_stats, np.nan), np.full(n_stats, np.nan)
        for row in range(n_stats):
            x = boot[row][~undefined[row]]
            low[row], high[row] = _bca_bounds(x, float(est[row]), jack[row], weights, alpha)
    return {"estimate": est, "ci_low": low, "ci_high": high, "std_error": std,
            "n_defined": n_def.astype(np.int64)}


def _metric_intervals(
    rep: pl.DataFrame,
    keys: list[str],
    metrics: list[str],
    reference: Reference,
    weighted: bool,
    criteria: Sequence[str],
    confidence: float,
    method: Method,
    engine: str,
    jack_weights: Sequence[float] | None = None,
) -> pl.DataFrame:
    """Intervals of every metric, disparity, criterion and summary of a replicate table.

    The same :data:`~polars_fairmetrics.metrics.METRICS` definitions, reference rules and
    compositions as :func:`~polars_fairmetrics.disparities`,
    :func:`~polars_fairmetrics.fairness_criteria` and
    :func:`~polars_fairmetrics.between_groups` (a test pins them to those functions), but
    evaluated wide (one column per metric) and reshaped to a (statistic × replicate) matrix:
    the long format costs 20-40× more on 1000-replicate tables.
    """
    thr = ["threshold"] if "threshold" in rep.columns else []
    part = [REPLICATE, *thr]
    rep = rep.sort([REPLICATE, *keys, *thr], nulls_last=True)
    n_reps = rep[REPLICATE].n_unique()
    cells = rep.height // max(n_reps, 1)
    if n_reps * cells != rep.height:
        raise InvalidOptionError("every replicate needs every group (internal error)")
    needed = list(metrics)
    for c in criteria:
        if c == "equalized_odds_difference":
            needed += ["false_positive_rate", "false_negative_rate"]
        elif c in CRITERIA:
            needed.append(CRITERIA[c][0])
        else:
            known = ", ".join([*CRITERIA, "equalized_odds_difference"])
            raise InvalidOptionError(f"unknown criterion {c!r}; known: {known}")
    needed = list(dict.fromkeys(needed))
    base = [f"{c}_w" if weighted else c for c in ("tp", "fp", "tn", "fn")]
    if isinstance(reference, str) and reference in ("overall", "rest"):
        totals = [pl.col(c).sum().over(part) for c in base]
        ref_cols = [(t if reference == "overall" else t - pl.col(c)).alias(f"_pfm_ref_{c}")
                    for t, c in zip(totals, base, strict=True)]
    else:
        if reference is None:
            raise InvalidOptionError("reference= is None; pass a group value, 'rest' or "
                                     "'overall'")
        mask = _reference_mask(reference, keys, [REPLICATE, *thr])
        ref_cols = [pl.col(c).filter(mask).sum().over(part).alias(f"_pfm_ref_{c}")
                    for c in base]
        ref_cols.append(mask.any().over(part).alias("_pfm_has_ref"))
    frame = rep.with_columns(ref_cols)
    if "_pfm_has_ref" in frame.columns:
        if not frame["_pfm_has_ref"].all():
            _make_reference_guard(reference, keys, part)(frame)
        frame = frame.drop("_pfm_has_ref")
    own = Counts.from_columns(weighted=weighted)
    ref = Counts.from_columns(weighted=weighted, prefix="_pfm_ref_")
    # two steps: the metric expressions are evaluated once each (inlining them three times
    # costs ten times more)
    values = frame.select(
        *keys, *part,
        *[METRICS[m].func(own).alias(f"value:{m}") for m in needed],
        *[METRICS[m].func(ref).alias(f"_pfm_ref:{m}") for m in needed],
    )
    wide = values.select(
        *keys, *part,
        *[pl.col(f"value:{m}") for m in needed],
        *[(pl.col(f"value:{m}") - pl.col(f"_pfm_ref:{m}")).alias(f"difference:{m}")
          for m in needed],
        *[safe_div(pl.col(f"value:{m}"), pl.col(f"_pfm_ref:{m}")).alias(f"ratio:{m}")
          for m in needed],
    )
    crit_exprs = []
    for c in criteria:
        if c == "equalized_odds_difference":
            a = pl.col("difference:false_positive_rate").abs()
            b = pl.col("difference:false_negative_rate").abs()
            crit_exprs.append(pl.when(a.is_not_null() & b.is_not_null())
                              .then(pl.max_horizontal(a, b)).alias(f"criterion:{c}"))
        else:
            metric_name, how = CRITERIA[c]
            crit_exprs.append(pl.col(f"{how}:{metric_name}").alias(f"criterion:{c}"))
    if crit_exprs:
        wide = wide.with_columns(crit_exprs)
    columns = [f"{s}:{m}" for s in ("value", "difference", "ratio") for m in metrics]
    columns += [f"criterion:{c}" for c in criteria]
    group_keys = wide.select(*keys, *thr).head(cells)
    blocks = [wide[c].to_numpy().astype(np.float64).reshape(n_reps, cells).T for c in columns]
    labels = [c.split(":", 1) for c in columns]
    frames = []
    if columns:
        matrix = np.concatenate(blocks, axis=0)
        res = _matrix_intervals(matrix, confidence, method, jack_weights)
        lab = pl.DataFrame({"statistic": [s for s, _ in labels], "metric": [m for _, m in labels]})
        idx = np.arange(len(columns) * cells)
        frames.append(pl.concat([lab[idx // cells], group_keys[idx % cells],
                                 pl.DataFrame(res, nan_to_null=True)], how="horizontal"))
    if keys and metrics:
        # between groups, per replicate (and threshold): max, min over the groups ignoring
        # undefined values (fmax/fmin skip NaN), difference = max − min, ratio = min / max
        n_thr = wide.select(thr).head(cells).n_unique() if thr else 1
        n_groups = cells // n_thr
        rows = []
        for m in metrics:
            v = wide[f"value:{m}"].to_numpy().astype(np.float64)
            v = v.reshape(n_reps, n_groups, n_thr)
            hi, lo = np.fmax.reduce(v, axis=1), np.fmin.reduce(v, axis=1)
            ratio = np.full(hi.shape, np.nan)
            np.divide(lo, hi, out=ratio, where=hi != 0)
            rows += [("between_groups_difference", m, (hi - lo).T),
                     ("between_groups_ratio", m, ratio.T)]
        matrix = np.concatenate([r[2] for r in rows], axis=0)
        res = _matrix_intervals(matrix, confidence, method, jack_weights)
        idx = np.arange(len(rows) * n_thr)
        lab = pl.DataFrame({"statistic": [r[0] for r in rows], "metric": [r[1] for r in rows]})
        parts = [lab[idx // n_thr]]
        if thr:
            parts.append(wide.select(thr).head(n_thr)[idx % n_thr])
        frames.append(pl.concat([*parts, pl.DataFrame(res, nan_to_null=True)],
                                how="horizontal"))
    out = pl.concat(frames, how="diagonal_relaxed").with_columns(
        pl.lit(n_reps - 1 - len(jack_weights or ()), dtype=pl.Int64).alias("n_resamples"),
        pl.lit(float(confidence)).alias("confidence"),
        pl.lit(method).alias("method"),
        pl.lit(engine).alias("engine"),
    )
    order = {m: i for i, m in enumerate([*metrics, *criteria])}
    sorter = [
        pl.col("statistic").replace_strict({s: i for i, s in enumerate(_STAT_ORDER)},
                                           return_dtype=pl.Int64),
        *[pl.col(k) for k in keys],
        *[pl.col(t) for t in thr],
        pl.col("metric").replace_strict(order, return_dtype=pl.Int64),
    ]
    cols = ["statistic", *keys, *thr, "metric", *INTERVAL_COLUMNS]
    schema = {**{k: rep.schema[k] for k in keys}, **dict.fromkeys(thr, pl.Float64()),
              "statistic": pl.String(), "metric": pl.String(), **_INTERVAL_SCHEMA}
    return out.sort(sorter, nulls_last=True).select([pl.col(c).cast(schema[c]) for c in cols])


def _finish(long: FrameT, keys: list[str], thresholded: bool, metrics: list[str],
            criteria: Sequence[str], confidence: float, method: Method, engine: str) -> FrameT:
    thr: list[str] = ["threshold"] if thresholded else []
    out = intervals(long, confidence=confidence, method=method, engine=engine)
    order = {m: i for i, m in enumerate([*metrics, *criteria])}
    sorter = [
        pl.col("statistic").replace_strict({s: i for i, s in enumerate(_STAT_ORDER)},
                                           return_dtype=pl.Int64),
        *[pl.col(k) for k in keys],
        *[pl.col(t) for t in thr],
        pl.col("metric").replace_strict(order, return_dtype=pl.Int64),
    ]
    cols = ["statistic", *keys, *thr, "metric", *INTERVAL_COLUMNS]
    return out.sort(sorter, nulls_last=True).select(cols)


def bootstrap_metrics(
    data: FrameT,
    *,
    y_true: str,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    by: ColumnNames,
    metrics: str | Sequence[str] | None = None,
    reference: Reference = "overall",
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    n_resamples: int = 1000,
    seed: int | None = None,
    method: Method = "percentile",
    confidence: float = 0.95,
    stratify: bool | ColumnNames | None = None,
    reweight_by: str | None = None,
    population_shares: Mapping[Any, float] | None = None,
    criteria: Sequence[str] = ("equalized_odds_difference",),
    engine: Literal["auto", "counts", "rows"] = "auto",
    max_weight_levels: int = 1024,
    progress: bool | None = None,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
) -> FrameT:
    r"""Bootstrap intervals of every per-group metric, disparity and between-groups summary.

    One call, one scan of the rows (count engine). For each replicate :math:`b` (0 = observed)
    the statistics are those of :func:`~polars_fairmetrics.disparities` (``value`` = the group's
    metric, ``difference`` = group − reference, ``ratio`` = group / reference),
    :func:`~polars_fairmetrics.fairness_criteria` (``criterion``: by default equalized odds,
    max(|ΔFPR|, |ΔFNR|)) and :func:`~polars_fairmetrics.between_groups`
    (``between_groups_difference`` = max − min, ``between_groups_ratio`` = min / max; their group
    keys are null), computed on the replicate count table; intervals as in :func:`intervals`.

    Engines (``engine`` column): ``"counts"`` (exact multinomial draws on the cell table) is
    used whenever it applies: no weights, or weights taking at most ``max_weight_levels``
    distinct values (the weight value becomes part of the cell key; with ``engine="auto"`` and a
    weight, one extra pass counts the distinct weights). Otherwise ``"rows"``
    (:func:`bootstrap_rows` machinery: :math:`B` scans, with the multiplicity times the weight
    as the weight).

    Parameters
    ----------
    data
        Rows of predictions.
    y_true, y_pred, y_score, threshold, weight, pos_label, neg_label, score_bounds
        As for :func:`~polars_fairmetrics.confusion_counts`.
    by
        Group column(s).
    metrics
        Metric names or aliases (default: all).
    reference
        Reference of the disparities (a group value, ``"rest"``, ``"overall"``).
    n_resamples, seed, method, confidence
        Number of replicates, ``numpy`` seed, ``"percentile"``/``"basic"``/``"bca"``, level.
        BCa (count engine only): the percentile interval at the levels
        :math:`\Phi(z_0 + (z_0 + z_p) / (1 - a (z_0 + z_p)))`, :math:`z_0` from the share of
        replicates below the estimate (ties count half) and the acceleration :math:`a` from the
        jackknife, computed exactly as one leave-one-out table per non-empty cell weighted by
        the cell count.
    stratify
        ``None``/``False``: plain bootstrap over all rows; ``True``: within each ``by`` group
        (group sizes fixed); column name(s): within each value of those columns (e.g. the seed's
        B / B^c indicator).
    reweight_by, population_shares
        Sample-dependent stratum weights recomputed in every replicate (the
        bias-adjusted-metrics seed): a row of stratum :math:`s` weighs
        :math:`w_s = p_s \cdot N^* / N^*_s` with :math:`p_s` = ``population_shares[s]`` (e.g.
        :math:`|B| / |U|`) and :math:`N^*, N^*_s` the replicate's counted rows in total and in
        :math:`s`. Multiplies ``weight`` when both are given.
    criteria
        Named criteria of :func:`~polars_fairmetrics.fairness_criteria` to include.
    engine
        ``"auto"`` (default), ``"counts"`` or ``"rows"``.
    max_weight_levels
        Most distinct weight values for which ``"auto"`` picks the count engine.
    progress
        Progress line for the row engine (default: when stderr is a terminal).

    Returns
    -------
    DataFrame or LazyFrame
        ``statistic``, the ``by`` keys, [``threshold``], ``metric``, then
        :data:`INTERVAL_COLUMNS`. The count engine is lazy in, lazy out; the row engine runs
        its :math:`B` queries when called.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pfm.load_compas().with_columns(high=pl.col("decile_score") >= 5).collect()
    >>> out = bootstrap_metrics(df, y_true="two_year_recid", y_pred="high", by="race",
    ...                         metrics="fpr", reference="Caucasian", n_resamples=200, seed=0)
    >>> row = out.filter(pl.col("statistic") == "difference",
    ...                  pl.col("race") == "African-American")
    >>> row.select("estimate", "ci_low", "ci_high").rows()  # doctest: +SKIP
    [(0.19..., 0.16..., 0.22...)]
    >>> row["engine"].item(), row["n_defined"].item()
    ('counts', 200)
    """
    _check_common(n_resamples, confidence, method)
    if engine not in ("auto", "counts", "rows"):
        raise InvalidOptionError(f"engine must be 'auto', 'counts' or 'rows', got {engine!r}")
    keys: list[str] = as_list(by)
    if not keys:
        raise InvalidOptionError("by= names no group column")
    names = _metric_names(metrics)
    schema = schema_of(data)
    if stratify is None or stratify is False:
        strata: list[str] = []
    elif stratify is True:
        strata = list(keys)
    else:
        strata = as_list(stratify)
    require_columns(schema, "stratify", strata)
    if (reweight_by is None) != (population_shares is None):
        raise InvalidOptionError("pass reweight_by= and population_shares= together")
    if reweight_by is not None:
        require_columns(schema, "reweight_by", [reweight_by])
    fine: list[str] = list(dict.fromkeys([*keys, *strata, *([reweight_by] if reweight_by else [])]))
    weighted = weight is not None or reweight_by is not None
    count_opts: dict[str, Any] = {
        "y_true": y_true, "y_pred": y_pred, "y_score": y_score, "threshold": threshold,
        "pos_label": pos_label, "neg_label": neg_label, "score_bounds": score_bounds,
    }
    chosen = engine
    if weight is not None:
        require_columns(schema, "weight", [weight])
        if weight in fine:
            raise InvalidOptionError(f"weight column {weight!r} is also a group/stratum column")
        if chosen == "auto":
            levels = data.lazy().select(pl.col(weight).n_unique()).collect().item()
            chosen = "counts" if levels <= max_weight_levels else "rows"
    elif chosen == "auto":
        chosen = "counts"
    thresholded = y_score is not None
    crit = list(criteria)

    if method == "bca" and chosen == "rows":
        raise InvalidOptionError(
            "method='bca' needs the count engine (its jackknife is one table per cell); the "
            "row engine would need one pass per row: use 'percentile' or 'basic'"
        )

    def finish(rep: pl.DataFrame, engine_name: str,
               jack: Sequence[float] | None = None) -> pl.DataFrame:
        collapsed = _collapse(rep, keys, weight_key=weight if chosen == "counts" else None,
                              reweight_by=reweight_by, shares=population_shares)
        return _metric_intervals(collapsed, keys, names, reference, weighted, crit,
                                 confidence, method, engine_name, jack)

    if chosen == "rows":
        out = _rows_metric_replicates(
            data, fine=fine, strata=strata, weight=weight, count_opts=count_opts,
            n_resamples=n_resamples, seed=seed, progress=progress,
            finish=lambda rep: finish(rep, "rows"))
        return out if isinstance(data, pl.DataFrame) else out.lazy()

    counted = confusion_counts(data, by=[*fine, *([weight] if weight else [])], weight=weight,
                               **count_opts)
    cschema = schema_of(counted)
    ckeys, _ = _table_keys(cschema.names())

    def run(table: pl.DataFrame) -> pl.DataFrame:
        jack: list[Any] | None = [] if method == "bca" else None
        rep = _draw(table, ckeys, thresholded, strata, n_resamples, seed, True, jack)
        return finish(rep, "counts", jack)

    out_schema: dict[str, pl.DataType] = {"statistic": pl.String()}
    out_schema.update({k: cschema[k] for k in keys})
    if thresholded:
        out_schema["threshold"] = pl.Float64()
    out_schema["metric"] = pl.String()
    out_schema.update(_INTERVAL_SCHEMA)
    if isinstance(counted, pl.DataFrame):
        return run(counted)
    return counted.map_batches(run, schema=out_schema)


def _rows_metric_replicates(
    data: pl.DataFrame | pl.LazyFrame,
    *,
    fine: list[str],
    strata: list[str],
    weight: str | None,
    count_opts: Mapping[str, Any],
    n_resamples: int,
    seed: int | None,
    progress: bool | None,
    finish: Callable[[pl.DataFrame], pl.DataFrame],
) -> pl.DataFrame:
    """Row engine for :func:`bootstrap_metrics`: fine count tables per replicate, then stats."""
    report = _progress(progress)
    tables = []
    base = list(COUNT_COLUMNS[:4])
    for b, frame in _row_replicates(data, n_resamples=n_resamples, strata=strata, seed=seed,
                                    multiplicity="multinomial", weight_name=_W):
        m_counts = confusion_counts(frame, by=fine, weight=_W, **count_opts)
        t = m_counts.collect().with_columns(
            [pl.col(f"{c}_w").round(0).cast(pl.Int64).alias(c) for c in base]
        ).drop([*WEIGHTED_COUNT_COLUMNS, *NULL_COLUMNS], strict=False)
        t = t.with_columns(pl.sum_horizontal(base).alias("n"), pl.lit(0, pl.Int64).alias("n_null"))
        if weight is not None:
            ww = frame.with_columns((pl.col(_W) * pl.col(weight)).alias(_W))
            w_counts = confusion_counts(ww, by=fine, weight=_W, **count_opts).collect()
            on = [c for c in t.columns if c in fine or c == "threshold"]
            t = t.join(w_counts.select(*on, *[f"{c}_w" for c in base]), on=on, how="left",
                       nulls_equal=True)
        tables.append(t.with_columns(pl.lit(b, dtype=pl.Int64).alias(REPLICATE)))
        if b:
            report(b, n_resamples)
    rep = pl.concat(tables, how="vertical")
    # a group absent from a replicate is there with zero counts (its metrics are null)
    grid_keys = [c for c in rep.columns if c in fine or c == "threshold"]
    grid = rep.filter(pl.col(REPLICATE) == 0).select(grid_keys).join(
        pl.DataFrame({REPLICATE: np.arange(n_resamples + 1, dtype=np.int64)}), how="cross")
    full = grid.join(rep, on=[REPLICATE, *grid_keys], how="left", nulls_equal=True)
    counted = [c for c in rep.columns if c not in grid_keys and c != REPLICATE]
    return finish(full.with_columns(pl.col(counted).fill_null(0)))
