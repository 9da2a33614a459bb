r"""Bootstrap confidence intervals for every table of ``docs/results.md``.

One interval engine, two ways to draw replicates:

- **counts** (the fast, exact path). A statistic that depends on the rows only through the cell
  counts of a count table (group × label × prediction, × score bin for thresholds) is resampled
  exactly by multinomial draws on the cells: resampling :math:`N` rows with replacement *is*
  :math:`c^* \sim \mathrm{Multinomial}(N, c / N)`. :func:`resample_counts` builds the replicate
  count table (a ``replicate`` column, which every function of the disparity engine treats as a
  partition), so ``disparities(reps)``, ``fairness_criteria(reps)``, ``between_groups(reps)``
  and ``metrics_from_counts(reps)`` are the replicate statistics, computed by the very code that
  computes the point estimates. Continuous weights need one more additive column per cell,
  :math:`\sum w^2` (``confusion_counts(weight_squares=True)``): see :func:`resample_counts`.
- **rows** (the general path). Each replicate gives every row a multiplicity, passed to a user
  statistic as a weight column (:func:`bootstrap_rows`).

:func:`with_intervals` adds the interval columns of ``docs/results.md`` to any result table,
given the same function applied to the replicates; :func:`bootstrap_metrics` is the one-call
wrapper (one scan of the rows). Smooth statistics (a group's metric, a difference or ratio
against a reference, a named criterion that is a difference or ratio) get percentile, basic or
BCa intervals. Statistics that are maxima or minima over groups or over metrics — between-groups
``max − min`` and ``min / max``, equalized odds ``max(|ΔFPR|, |ΔFNR|)`` — are not smooth where
the maximum is tied, and their plain bootstrap is invalid there; they get a simultaneous
(max-t) interval projected onto the statistic, which is valid at ties and always contains the
estimate (``ci_method = "max-t"``, see ``docs/uncertainty.md``). An interval that cannot be
trusted is null, with the reason in ``ci_note`` (on weighted data, also a percentile or BCa
interval whose Kish effective sample size is below :data:`WEIGHTED_MIN_ESS`).

Resampling is reproducible by default: the seed is 0 unless given.
"""

from __future__ import annotations

import functools
import math
import sys
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal, cast

import numpy as np
import polars as pl

from polars_fairmetrics._typing import ColumnNames, FrameT, Label
from polars_fairmetrics._validate import (
    as_integer,
    as_list,
    as_real,
    check_weight_summary,
    require_columns,
    schema_of,
)
from polars_fairmetrics.counts import (
    COUNT_COLUMNS,
    WEIGHT_SQUARE_COLUMNS,
    WEIGHTED_COUNT_COLUMNS,
    check_count_values,
    confusion_counts,
    count_columns,
)
from polars_fairmetrics.disparity import (
    CRITERIA,
    Reference,
    _criterion_names,
    between_groups,
    disparities,
    fairness_criteria,
)
from polars_fairmetrics.exceptions import InvalidDtypeError, InvalidOptionError, InvalidWeightError
from polars_fairmetrics.inputs import accepts_tables, as_polars
from polars_fairmetrics.metrics import METRICS, Counts, _metric_names, metrics_from_counts
from polars_fairmetrics.results import RESERVED, finish, partitions_of

__all__ = [
    "DEFAULT_SEED",
    "Method",
    "bootstrap_counts",
    "bootstrap_metrics",
    "bootstrap_rows",
    "intervals",
    "replicate_group_means",
    "resample_counts",
    "with_intervals",
]

Method = Literal["percentile", "basic", "bca"]
"""Interval methods of smooth statistics: ``"percentile"``, ``"basic"`` (reverse percentile, the
bias-adjusted-metrics document's formula) and ``"bca"`` (bias-corrected and accelerated)."""

What = Literal["disparities", "metrics", "criteria", "between_groups"]
"""Which table :func:`bootstrap_metrics` returns."""

DEFAULT_SEED = 0
"""The seed every resampling function uses unless given one: results are reproducible."""

MAX_T = "max-t"
"""``ci_method`` of the simultaneous interval of a non-smooth statistic (max or min over parts)."""

MIN_DEFINED_SHARE = 0.9
"""Smallest share of resamples in which a statistic must be defined for its interval to be given:
below it the interval would describe only the resamples where the statistic exists (a
conditional distribution), so it is withdrawn with a note."""

FEW_DEFINED_NOTE = (
    "defined in only {} of {} resamples (fewer than "
    + f"{MIN_DEFINED_SHARE:.0%}"
    + "): too few rows behind it"
)
"""``ci_note`` of an interval withheld by :data:`MIN_DEFINED_SHARE` (``{}``: the resamples where
the statistic is defined, and all of them; a template for ``str.format`` and ``pl.format``)."""

CONSTANT_NOTE = (
    "every resample gives the same value: the bootstrap cannot measure this uncertainty (a rate "
    "of 0 or 1 on few rows)"
)
"""``ci_note`` of an interval withheld because every resample gives the same value."""

BASIC_MIN_SUPPORT = 50
"""Smallest support (the metric's denominator count) for which a basic (reverse percentile)
interval is given. The basic interval reflects the bootstrap distribution around the estimate,
so a skewed distribution puts its long tail on the wrong side: in the coverage study
(docs/coverage.md) basic intervals cover 89.6 % at nominal 95 % for groups of about 30 rows, and
85-91 % on weighted data (withheld there whatever the support). Percentile and BCa intervals
are not affected by the support (on weighted data, see :data:`WEIGHTED_MIN_ESS`)."""

WEIGHTED_MIN_ESS = 200
r"""Smallest Kish effective sample size :math:`n_\mathrm{eff} = (\sum w)^2 / \sum w^2` of a
statistic's denominator rows (the smallest over the group and the reference it compares) for
which a percentile or BCa interval is given on weighted data; below it the interval is withheld
(null, with the reason in ``ci_note``). From the coverage study (docs/coverage.md): with heavy
log-normal weights (:math:`\sigma = 1.5`) the bootstrap under-covers (91-93 % at nominal 95 %)
on groups of 500 rows, and the sample :math:`n_\mathrm{eff}` overstates the effective size
there (the sum of squares misses the heavy weights not drawn), so data sets with a high sample
:math:`n_\mathrm{eff}` under-cover too; 200 is the smallest round threshold above which every
printed kind covers at least 93 % in every weighted scenario. Max-t intervals (between groups,
equalized odds) cover 96-97 % at every :math:`n_\mathrm{eff}` of the study and are not
withheld."""

LOW_ESS_NOTE = (
    "effective sample size {} < "
    + f"{WEIGHTED_MIN_ESS}"
    + " on weighted data (Kish: (Σw)² / Σw²): percentile and BCa intervals under-cover there "
    "(91-93 % at nominal 95 % in the coverage study)"
)
"""``ci_note`` of an interval withheld by :data:`WEIGHTED_MIN_ESS` (``{}``: the effective
size, rounded; a template for ``str.format`` and ``pl.format``)."""

MAX_DRAW_BYTES = 1 << 30
"""Most memory the drawn replicate arrays may take (B × cells); above it a clear error."""

REPLICATE = "replicate"
_IDX = "_pfm_row"
_GIDX = "_pfm_gidx"
_PI = "_pfm_i"
_W = "_pfm_boot_w"
_BASE = ("tp", "fp", "tn", "fn")
_QUANTITIES = ("value", "difference", "ratio")
_CI = {
    "value": ("ci_low", "ci_high"),
    "difference": ("difference_ci_low", "difference_ci_high"),
    "ratio": ("ratio_ci_low", "ratio_ci_high"),
}


# ---------------------------------------------------------------------------------------------
# Option checks
# ---------------------------------------------------------------------------------------------


def _check_resamples(n_resamples: Any, name: str = "n_resamples") -> None:
    n = as_integer(n_resamples)
    if n is None or n < 1:
        raise InvalidOptionError(f"{name} must be a positive integer, got {n_resamples!r}")


def _check_seed(seed: Any) -> None:
    if seed is None:
        return
    value = as_integer(seed)
    if value is None or value < 0:
        raise InvalidOptionError(
            "seed must be an integer >= 0 (or None for fresh, irreproducible entropy), got "
            f"{seed!r}"
        )


def _check_level(level: Any) -> None:
    value = as_real(level)
    if value is None or not 0.0 < value < 1.0:
        raise InvalidOptionError(f"level must be strictly between 0 and 1, got {level!r}")


def _check_method(method: Any) -> None:
    if method not in ("percentile", "basic", "bca"):
        raise InvalidOptionError(f"method must be 'percentile', 'basic' or 'bca', got {method!r}")


# ---------------------------------------------------------------------------------------------
# Count engine: multinomial draws on the cell table
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _TableLayout:
    keys: list[str]
    thresholded: bool
    attribute: bool
    weighted: bool


def _table_layout(columns: Sequence[str]) -> _TableLayout:
    """Keys and partitions of a count table to resample."""
    if REPLICATE in columns:
        raise InvalidOptionError("the count table already has a 'replicate' column")
    missing = [c for c in _BASE if c not in columns]
    if missing:
        raise InvalidOptionError(f"not a count table: missing column(s) {', '.join(missing)}")
    weighted = all(c in columns for c in WEIGHTED_COUNT_COLUMNS[:4])
    if weighted and not all(c in columns for c in WEIGHT_SQUARE_COLUMNS):
        raise InvalidOptionError(
            "a weighted count table is resampled from its sums of squared weights, which this "
            "table lacks (columns " + ", ".join(WEIGHT_SQUARE_COLUMNS) + "): count with "
            "confusion_counts(..., weight=..., weight_squares=True)"
        )
    counted = set(count_columns(columns))
    keys = [c for c in columns if c not in counted and c not in ("threshold", "attribute")]
    other = [p for p in partitions_of(keys) if p != "attribute"]
    if other:
        raise InvalidOptionError(
            f"the count table has partition column(s) {other!r}: resample each partition alone"
        )
    return _TableLayout(keys, "threshold" in columns, "attribute" in columns, weighted)


def _replicate_schema(
    counts_schema: Mapping[str, pl.DataType], layout: _TableLayout
) -> dict[str, pl.DataType]:
    schema: dict[str, pl.DataType] = {}
    if layout.attribute:
        schema["attribute"] = pl.String()
    schema.update({k: counts_schema[k] for k in layout.keys})
    if layout.thresholded:
        schema["threshold"] = pl.Float64()
    schema[REPLICATE] = pl.Int64()
    for c in COUNT_COLUMNS:
        schema[c] = pl.Int64()
    if layout.weighted:
        for c in WEIGHTED_COUNT_COLUMNS:
            schema[c] = pl.Float64()
    schema["n_null"] = pl.Int64()
    return schema


@dataclass
class _Cells:
    """One partition of a count table as cells: ``counts`` (groups × cells), the null rows last;
    ``wsum``/``wsq`` (groups × cells without the null cell): sums of weights and of squares."""

    groups: pl.DataFrame
    thresholds: Any
    counts: Any
    wsum: Any
    wsq: Any


def _check_count_dtypes(schema: Mapping[str, pl.DataType]) -> None:
    """The cells of a count table to resample are whole numbers of rows: integer columns
    (a fractional count would be truncated by the multinomial draw); weighted sums numeric."""
    for c in (*_BASE, "n", "n_null"):
        dtype = schema.get(c)
        if dtype is not None and not (dtype.is_integer() or dtype == pl.Null):
            raise InvalidDtypeError(
                f"column {c!r} of the count table has dtype {dtype}: counts of rows are "
                "integers (count with confusion_counts)"
            )
    for c in (*WEIGHTED_COUNT_COLUMNS, *WEIGHT_SQUARE_COLUMNS):
        dtype = schema.get(c)
        if dtype is not None and not (dtype.is_numeric() or dtype == pl.Null):
            raise InvalidDtypeError(
                f"column {c!r} of the count table has dtype {dtype}: weighted sums are numbers"
            )


def _check_cells(table: pl.DataFrame, layout: _TableLayout, order: list[str]) -> None:
    """Run-time checks of a count table partition before it is resampled: no null count, one
    row per group (× threshold), and the same thresholds for every group."""
    counted = [c for c in (*_BASE, "n_null") if c in table.columns]
    if layout.weighted:
        counted += [f"{c}{s}" for s in ("_w", "_w2") for c in _BASE]
    for c in counted:
        nulls = table[c].null_count()
        if nulls:
            raise InvalidOptionError(
                f"column {c!r} of the count table has {nulls} null value(s): a cell count is "
                "never null (count with confusion_counts, or fill the empty cells with 0)"
            )
    if layout.weighted:
        _check_weight_sums(table)
    check_count_values(table)  # no negative, NaN or infinite count or weighted sum
    if order:
        twice = table.select(order).filter(table.select(order).is_duplicated())
        if twice.height:
            raise InvalidOptionError(
                f"the count table has several rows{_at(twice.row(0, named=True))}: "
                "one row per group"
                + (" and threshold" if layout.thresholded else "")
                + " is needed (add the tables up with combine_counts)"
            )


def _check_weight_sums(table: pl.DataFrame) -> None:
    r"""The sums of weights and of squared weights of a weighted count table must be finite and
    not lost to underflow: a weight above about :math:`10^{154}` overflows its square (an
    infinite :math:`\sum w^2`), and weights whose mean in a cell is below :math:`10^{-150}`
    have squares that round to 0. Either way the resampled weighted sums and the effective
    sample size would be wrong, silently."""
    for c in _BASE:
        for col in (f"{c}_w", f"{c}_w2"):
            if table[col].cast(pl.Float64).is_infinite().any():
                raise InvalidWeightError(
                    f"column {col!r} of the count table is infinite: a weight above about "
                    "1e154 overflows its square in Float64, so the weighted sums cannot be "
                    "resampled; divide the weights by a common factor (no rate changes)"
                )
        mean = pl.col(f"{c}_w").cast(pl.Float64) / pl.col(c)
        tiny = table.select(
            ((pl.col(c) > 0) & (pl.col(f"{c}_w") > 0) & (mean < 1e-150)).any()
        ).item()
        if tiny:
            raise InvalidWeightError(
                f"column {c + '_w2'!r} of the count table underflows: weights below about "
                "1e-150 have squares that Float64 rounds to 0, so the weighted sums cannot be "
                "resampled; multiply the weights by a common factor (no rate changes)"
            )


def _as_cells(table: pl.DataFrame, layout: _TableLayout) -> _Cells:
    keys = layout.keys
    order = [*keys, *(["threshold"] if layout.thresholded else [])]
    _check_cells(table, layout, order)
    table = table.sort(order, nulls_last=True) if order else table
    n_null = (
        table["n_null"].to_numpy().astype(np.int64)
        if "n_null" in table.columns
        else np.zeros(table.height, dtype=np.int64)
    )
    w = layout.weighted
    if layout.thresholded:
        groups = table.select(keys).unique(maintain_order=True) if keys else pl.DataFrame()
        n_groups = groups.height if keys else (1 if table.height else 0)
        n_thr = table.height // max(n_groups, 1)
        if n_groups * n_thr != table.height:
            raise InvalidOptionError(
                "every group of a thresholded count table needs every threshold"
            )
        grid = table["threshold"].to_numpy().reshape(n_groups, n_thr)
        thresholds = grid[0]
        for i, row in enumerate(grid):
            if not np.array_equal(row, thresholds, equal_nan=True):
                raise InvalidOptionError(
                    "column 'threshold' of the thresholded count table differs between groups "
                    f"({_at(groups.row(0, named=True)).removeprefix(' for ')}: "
                    f"{thresholds.tolist()}; {_at(groups.row(i, named=True)).removeprefix(' for ')}"
                    f": {row.tolist()}): every group needs the same thresholds (count the groups "
                    "in one confusion_counts call)"
                )

        def bins(pre: str, dtype: Any) -> tuple[Any, Any]:
            def grid(col: str) -> Any:
                return table[col].to_numpy().astype(dtype).reshape(n_groups, n_thr)

            tp, fp, tn, fn = (grid(f"{c}{pre}") for c in _BASE)
            # score bins: bin 0 below the first threshold, bin k in [t_k, t_{k+1}), bin T above
            pos = np.empty((n_groups, n_thr + 1), dtype=dtype)
            neg = np.empty((n_groups, n_thr + 1), dtype=dtype)
            pos[:, 0], neg[:, 0] = fn[:, 0], tn[:, 0]
            pos[:, 1:n_thr], neg[:, 1:n_thr] = tp[:, :-1] - tp[:, 1:], fp[:, :-1] - fp[:, 1:]
            pos[:, n_thr], neg[:, n_thr] = tp[:, -1], fp[:, -1]
            return pos, neg

        pos, neg = bins("", np.int64)
        nulls = n_null.reshape(n_groups, n_thr)[:, :1]
        counts = np.concatenate([pos, neg, nulls], axis=1)
        wsum = np.concatenate(bins("_w", np.float64), axis=1) if w else None
        wsq = np.concatenate(bins("_w2", np.float64), axis=1) if w else None
    else:
        groups = table.select(keys) if keys else pl.DataFrame()
        thresholds = None
        arrays = [table[c].to_numpy().astype(np.int64) for c in _BASE]
        counts = np.column_stack([*arrays, n_null]) if table.height else np.zeros((0, 5), np.int64)

        def stack(suffix: str) -> Any:
            return np.column_stack([table[f"{c}{suffix}"].to_numpy() for c in _BASE]).astype(
                np.float64
            )

        wsum = stack("_w") if w else None
        wsq = stack("_w2") if w else None
    if wsum is not None:
        # thresholded tables give the bins' weighted sums by differences: round-off may dip below 0
        wsum = np.maximum(wsum, 0.0)
        wsq = np.maximum(cast(Any, wsq), 0.0)
    return _Cells(groups, thresholds, counts, wsum, wsq)


def _stratum_ids(values: pl.DataFrame) -> Any:
    """Stratum number of each row: rank of its value among the sorted distinct values."""
    cols = values.columns
    distinct = values.unique().sort(cols, nulls_last=True).with_row_index(_GIDX)
    joined = values.join(distinct, on=cols, how="left", nulls_equal=True, maintain_order="left")
    return joined[_GIDX].to_numpy().astype(np.int64)


def _weighted_draw(cells: _Cells, drawn: Any, rng: np.random.Generator) -> Any:
    r"""Weighted sums of the resampled cells, given their resampled counts.

    A cell of :math:`c` rows with weight sum :math:`S_1` and sum of squares :math:`S_2` has
    weight mean :math:`\mu = S_1 / c` and variance :math:`\sigma^2 = S_2 / c - \mu^2`; the
    weight sum of :math:`c^*` rows drawn from it with replacement has mean :math:`c^* \mu` and
    variance :math:`c^* \sigma^2` exactly. It is drawn from the Gamma distribution with those two
    moments (non-negative and right-skewed like a sum of non-negative weights; exact when the
    weights of a cell are equal, since then :math:`\sigma^2 = 0`).
    """
    k = cells.wsum.shape[1]
    c = cells.counts[:, :k].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = np.where(c > 0, cells.wsum / c, 0.0)
        var = np.where(c > 0, np.maximum(cells.wsq / c - mu * mu, 0.0), 0.0)
    n = drawn[..., :k].astype(np.float64)
    mean = n * mu
    out = mean.copy()
    spread = (var > 1e-12 * np.maximum(mu * mu, 1e-300)) & (mu > 0)
    sel = np.broadcast_to(spread, n.shape) & (n > 0)
    if sel.any():
        mu_b = np.broadcast_to(mu, n.shape)[sel]
        var_b = np.broadcast_to(var, n.shape)[sel]
        shape = n[sel] * mu_b * mu_b / var_b
        out[sel] = rng.gamma(shape, var_b / mu_b)
    return out


def _draw_part(
    cells: _Cells,
    strata: list[str],
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[Any, Any]:
    """``n_resamples`` multinomial draws of the cells (one per stratum), and weighted sums."""
    counts = cells.counts
    n_groups, n_cells = counts.shape
    need = n_resamples * counts.size * (16 if cells.wsum is not None else 8) * 2
    if need > MAX_DRAW_BYTES:
        raise InvalidOptionError(
            f"{n_resamples:,} resamples of {n_groups:,} groups × {n_cells:,} cells would take "
            f"{need / 2**30:.1f} GiB (limit {MAX_DRAW_BYTES / 2**30:.0f} GiB): group by columns "
            "with fewer distinct values, use fewer thresholds, or fewer resamples"
        )
    stratum = (
        _stratum_ids(cells.groups.select(strata))
        if strata and n_groups
        else np.zeros(n_groups, dtype=np.int64)
    )
    strata_ids = np.unique(stratum)
    if strata_ids.size == 1 and counts.sum() > 0:
        # one stratum of every group in order: the draws are the array itself (no copy)
        flat = counts.ravel()
        total = int(flat.sum())
        draws = rng.multinomial(total, flat / total, size=n_resamples)
        draws = draws.reshape(n_resamples, n_groups, n_cells)
    else:
        draws = np.zeros((n_resamples, n_groups, n_cells), dtype=np.int64)
        for s in strata_ids:
            rows = np.flatnonzero(stratum == s)
            flat = counts[rows].ravel()
            total = int(flat.sum())
            if total == 0:
                continue
            drawn = rng.multinomial(total, flat / total, size=n_resamples)
            draws[:, rows, :] = drawn.reshape(n_resamples, rows.size, n_cells)
    wdraws = _weighted_draw(cells, draws, rng) if cells.wsum is not None else None
    return draws, wdraws


def _jackknife_part(cells: _Cells) -> tuple[Any, Any, Any]:
    """Leave-one-out tables: one per non-empty cell (that cell minus one row), their weights
    (the cell's count: every row of a cell gives the same table) and weighted sums."""
    flat = cells.counts.reshape(-1)
    nonzero = np.flatnonzero(flat > 0)
    if nonzero.size * flat.size * 8 > MAX_DRAW_BYTES:
        raise InvalidOptionError(
            f"BCa needs {nonzero.size:,} leave-one-out tables of {flat.size:,} cells: too many "
            "(fewer groups or thresholds, or method='percentile'/'basic')"
        )
    loo = np.repeat(cells.counts[None], nonzero.size, axis=0).reshape(nonzero.size, -1)
    loo[np.arange(nonzero.size), nonzero] -= 1
    loo = loo.reshape(nonzero.size, *cells.counts.shape)
    wloo = None
    if cells.wsum is not None:
        k = cells.wsum.shape[1]
        c = cells.counts[:, :k].astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            mu = np.where(c > 0, cells.wsum / c, 0.0)
        wloo = np.repeat(cells.wsum[None], nonzero.size, axis=0)
        g, j = np.divmod(nonzero, cells.counts.shape[1])
        real = j < k
        idx = np.flatnonzero(real)
        wloo[idx, g[real], j[real]] -= mu[g[real], j[real]]
    return loo, wloo, flat[nonzero].astype(np.float64)


def _replicate_frame(
    cells: _Cells, draws: Any, wdraws: Any, rep_ids: Any, layout: _TableLayout
) -> pl.DataFrame:
    """A replicate count table from drawn cells (replicates × groups × cells), in the order of
    docs/results.md: keys first, then the replicate partition."""
    n_reps, n_groups = draws.shape[0], draws.shape[1]
    draws = np.moveaxis(draws, 0, 1)  # groups × replicates × cells: key-major rows
    wdraws = None if wdraws is None else np.moveaxis(wdraws, 0, 1)
    thresholded = layout.thresholded
    n_thr = len(cells.thresholds) if thresholded else 1

    def rebuild(arr: Any, with_null: bool) -> tuple[Any, ...]:
        if thresholded:
            k = n_thr + 1
            p, q = arr[..., :k], arr[..., k : 2 * k]
            rtp = np.cumsum(p[..., ::-1], axis=-1)[..., ::-1][..., 1:]
            rfp = np.cumsum(q[..., ::-1], axis=-1)[..., ::-1][..., 1:]
            rfn = np.cumsum(p, axis=-1)[..., :n_thr]
            rtn = np.cumsum(q, axis=-1)[..., :n_thr]
            out = [rtp, rfp, rtn, rfn]
            if with_null:
                out.append(np.repeat(arr[..., 2 * k :], n_thr, axis=-1))
            return tuple(out)
        return tuple(arr[..., i : i + 1] for i in range(5 if with_null else 4))

    size = n_reps * n_groups * n_thr
    cols: dict[str, Any] = {}
    if thresholded:
        cols["threshold"] = np.tile(cells.thresholds, n_reps * n_groups).astype(np.float64)
    cols[REPLICATE] = np.tile(np.repeat(np.asarray(rep_ids, dtype=np.int64), n_thr), n_groups)
    rtp, rfp, rtn, rfn, rnull = rebuild(draws, True)
    for name, arr in zip(_BASE, (rtp, rfp, rtn, rfn), strict=True):
        cols[name] = arr.reshape(size)
    cols["n"] = cols["tp"] + cols["fp"] + cols["tn"] + cols["fn"]
    if wdraws is not None:
        for name, arr in zip(_BASE, rebuild(wdraws, False), strict=True):
            cols[f"{name}_w"] = arr.reshape(size)
        cols["n_w"] = cols["tp_w"] + cols["fp_w"] + cols["tn_w"] + cols["fn_w"]
    cols["n_null"] = rnull.reshape(size)
    out = pl.DataFrame(cols)
    if layout.keys:
        gidx = np.repeat(np.arange(n_groups), n_reps * n_thr)
        out = pl.concat([cells.groups[gidx], out], how="horizontal")
    return out


def _generator(seed: int | None, attribute: str | None) -> np.random.Generator:
    """The generator of one partition: ``seed`` for a table without attributes; with
    attributes, a stream of its own for each (entropy ``[seed, crc32(name)]``), so attributes
    are resampled independently and each attribute's draws do not depend on the others."""
    if attribute is None or seed is None:
        return np.random.default_rng(seed)
    return np.random.default_rng([int(seed), zlib.crc32(attribute.encode("utf-8"))])


def _resample(
    table: pl.DataFrame,
    layout: _TableLayout,
    strata: list[str],
    n_resamples: int,
    seed: int | None,
    include_observed: bool,
    jackknife: bool,
) -> pl.DataFrame:
    """Replicate count table of an eager count table (each attribute partition on its own)."""
    schema = _replicate_schema(table.schema, layout)
    if layout.attribute:
        names = table["attribute"].unique(maintain_order=True).to_list()
        parts = [(a, table.filter(pl.col("attribute") == a).drop("attribute")) for a in names]
    else:
        parts = [(None, table)]
    frames = []
    jack_offset = 0
    for attribute, part in parts:
        if part.height == 0:
            continue
        cells = _as_cells(part, layout)
        rng = _generator(seed, attribute)
        draws, wdraws = _draw_part(cells, strata, n_resamples, rng)
        rep_ids = np.arange(1, n_resamples + 1, dtype=np.int64)
        if include_observed:
            draws = np.concatenate([cells.counts[None], draws], axis=0)
            if wdraws is not None:
                wdraws = np.concatenate([cells.wsum[None], wdraws], axis=0)
            rep_ids = np.concatenate([[0], rep_ids])
        if jackknife:
            loo, wloo, weights = _jackknife_part(cells)
            draws = np.concatenate([draws, loo], axis=0)
            if wdraws is not None:
                wdraws = np.concatenate([wdraws, wloo], axis=0)
            rep_ids = np.concatenate(
                [rep_ids, -np.arange(jack_offset + 1, jack_offset + 1 + weights.size)]
            )
            jack_offset += weights.size
        frame = _replicate_frame(cells, draws, wdraws, rep_ids, layout)
        if attribute is not None:
            frame = frame.with_columns(pl.lit(attribute, dtype=pl.String).alias("attribute"))
        frames.append(frame)
    if not frames:
        return pl.DataFrame(schema=schema)
    out = pl.concat(frames, how="diagonal")
    return out.select([pl.col(c).cast(t) for c, t in schema.items()])


def _jackknife_weights(counts: pl.DataFrame) -> Any:
    """The weights of the leave-one-out replicates ``-1, -2, …`` of
    ``resample_counts(counts, jackknife=True)``: the count of the cell each one leaves a row of."""
    layout = _table_layout(counts.columns)
    if layout.attribute:
        names = counts["attribute"].unique(maintain_order=True).to_list()
        parts = [counts.filter(pl.col("attribute") == a).drop("attribute") for a in names]
    else:
        parts = [counts]
    weights = [
        np.asarray(c[c > 0], dtype=np.float64)
        for p in parts
        if p.height
        for c in [_as_cells(p, layout).counts.reshape(-1)]
    ]
    return np.concatenate(weights) if weights else np.zeros(0)


@accepts_tables
def resample_counts(
    counts: FrameT,
    *,
    n_resamples: int = 1000,
    strata: ColumnNames | None = None,
    seed: int | None = DEFAULT_SEED,
    include_observed: bool = False,
    jackknife: bool = False,
) -> FrameT:
    r"""Bootstrap replicates of a count table, by multinomial draws on its cells.

    Resampling the :math:`N` rows of a table with replacement changes only how many rows fall in
    each cell (group × label × prediction, or × score bin for a thresholded table, plus one cell
    of the rows left out for a null), so one replicate is exactly

    .. math:: c^* \sim \mathrm{Multinomial}\big(N,\ c / N\big)

    over the cells :math:`c`, or one independent draw per stratum (with the stratum's own
    :math:`N_s`) when ``strata`` is given. For a thresholded table the counts per threshold are
    cumulative sums of the score-bin cells, rebuilt after the draw. A group absent from a
    replicate keeps its rows with zero counts (its metrics are then null).

    **Several attributes side by side** (``confusion_counts(..., separately=True)``: an
    ``attribute`` column): the rolled-up table no longer says which rows are shared between
    attributes, so each attribute's partition is resampled as its own multinomial over its cells,
    with a random stream of its own (entropy ``[seed, crc32(attribute)]``: independent of the
    other attributes, and the same whichever other attributes are audited). Intervals are
    therefore per attribute — what every statistic of the package needs, since none combines
    attributes.

    **Weighted tables** (``confusion_counts(..., weight=w, weight_squares=True)``, with
    :math:`S_1 = \sum w` and :math:`S_2 = \sum w^2` per cell): after drawing a cell's count
    :math:`c^*`, its weight sum is drawn from the Gamma distribution with the exact mean
    :math:`c^*\mu` and variance :math:`c^*\sigma^2` of the sum of :math:`c^*` weights drawn with
    replacement from the cell (:math:`\mu = S_1/c`, :math:`\sigma^2 = S_2/c - \mu^2`). The
    memory does not grow with the rows; it is exact for weights constant within a cell and
    matches the first two moments otherwise (``docs/uncertainty.md`` says where it holds).

    Parameters
    ----------
    counts
        A count table from :func:`~polars_fairmetrics.confusion_counts`.
    n_resamples
        Number of replicates :math:`B`.
    strata
        Key column(s) to resample within (their totals stay fixed); default: plain bootstrap.
    seed
        Seed of ``numpy.random.default_rng`` (default 0: reproducible); ``None`` draws fresh
        entropy from the operating system (not reproducible).
    include_observed
        Add the observed table as replicate 0.
    jackknife
        Add the leave-one-out tables BCa needs as replicates ``-1, -2, …`` (one per non-empty
        cell; :func:`with_intervals` weighs them by the cell counts).

    Returns
    -------
    DataFrame or LazyFrame
        [``attribute``], the keys, [``threshold``], ``replicate`` (Int64, 1..B),
        ``tp fp tn fn n`` (Int64), [``tp_w … n_w``], ``n_null``, sorted by replicate and keys.
        Lazy in, lazy out (the draw runs when collected). An empty table gives an empty table.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [1, 0, 0, 0]})
    >>> counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    >>> reps = resample_counts(counts, n_resamples=3, strata="g")
    >>> reps.group_by("replicate", "g").agg(pl.col("n").sum())["n"].to_list()
    [2, 2, 2, 2, 2, 2]
    """
    _check_resamples(n_resamples)
    _check_seed(seed)
    schema = schema_of(counts)
    layout = _table_layout(schema.names())
    _check_count_dtypes(schema)
    strata_cols = as_list(strata)
    require_columns(pl.Schema({k: schema[k] for k in layout.keys}), "strata", strata_cols)
    out_schema = _replicate_schema(dict(schema), layout)
    n_b = int(n_resamples)

    def run(table: pl.DataFrame) -> pl.DataFrame:
        return _resample(table, layout, strata_cols, n_b, seed, include_observed, jackknife)

    if isinstance(counts, pl.DataFrame):
        return run(counts)
    return counts.map_batches(run, schema=out_schema)


# ---------------------------------------------------------------------------------------------
# The interval engine
# ---------------------------------------------------------------------------------------------


def _positions(n_def: Any, levels: Any) -> tuple[Any, Any, Any]:
    """Linear-interpolation positions of per-row levels (rows × k) among ``n_def`` sorted
    values: the lower and upper order statistics' indices and the fraction between them."""
    h = (n_def[:, None] - 1).astype(np.float64) * levels
    lo = np.floor(h).astype(np.int64)
    lo = np.clip(lo, 0, np.maximum(n_def - 1, 0)[:, None])
    hi = np.minimum(lo + 1, np.maximum(n_def - 1, 0)[:, None])
    return lo, hi, h - lo


def _interpolate(a: Any, b: Any, frac: Any) -> Any:
    """``a + frac (b - a)``, exactly ``a`` where ``frac`` is 0 or ``a == b`` (also for two
    infinite order statistics, whose difference is NaN)."""
    with np.errstate(invalid="ignore"):
        val = a + frac * (b - a)
    return np.where((frac == 0) | (a == b), a, val)


def _row_quantiles(sorted_x: Any, n_def: Any, levels: Any) -> Any:
    """Linear-interpolation quantiles (numpy's default) of each row's first ``n_def`` sorted
    values, at per-row levels ``levels`` (rows × k); NaN where ``n_def`` is 0."""
    n_rows = sorted_x.shape[0]
    out = np.full(levels.shape, np.nan)
    ok = n_def > 0
    if not ok.any():
        return out
    lo, hi, frac = _positions(n_def, levels)
    rows = np.arange(n_rows)[:, None]
    val = _interpolate(sorted_x[rows, lo], sorted_x[rows, hi], frac)
    out[ok] = val[ok]
    return out


def _order_statistics(x: Any, ks: Sequence[int]) -> tuple[dict[int, Any], Any, Any]:
    """The ``k``-th smallest value of every row of ``x`` (rows × n) for each ``k`` of ``ks``,
    and each row's minimum and maximum, by successive single-``kth`` partitions (several times
    cheaper than a sort or a multi-``kth`` partition): a pair ``k, k + 1`` costs one partition
    at ``k + 1`` (the ``k``-th is then the maximum of the part left of it), and each partition
    works on the part right of the previous one. NaN sort last, as in :func:`numpy.sort`: a row
    holding one has a NaN maximum, and its other results are not its defined values'."""
    order = sorted(set(ks))
    work = np.partition(x, order[0] + (1 if order[0] + 1 in order else 0), axis=1)
    out: dict[int, Any] = {}
    view, offset = work, 0
    minimum = maximum = None
    i = 0
    while i < len(order):
        k = order[i]
        pair = i + 1 < len(order) and order[i + 1] == k + 1
        at = k + 1 if pair else k
        if view is not work:
            view.partition(at - offset, axis=1)
        if minimum is None:
            minimum = view[:, : at + 1].min(axis=1)
        out[at] = view[:, at - offset].copy()
        if pair:
            out[k] = view[:, : at - offset].max(axis=1)
        i += 2 if pair else 1
        if i == len(order):
            maximum = view[:, at - offset :].max(axis=1)
        else:
            view, offset = view[:, at + 1 - offset :], at + 1
    return out, minimum, maximum


def _level_quantile(x: Any, level: float) -> Any:
    """The linear-interpolation ``level``-quantile of each row of ``x`` (rows × n, no NaN, n ≥ 1)
    by selection: the same formula as the smooth intervals' quantiles."""
    lo, hi, frac = _positions(np.array([x.shape[1]]), np.array([[level]]))
    k_lo, k_hi = int(lo[0, 0]), int(hi[0, 0])
    stats, _, _ = _order_statistics(x, [k_lo, k_hi])
    return _interpolate(stats[k_lo], stats[k_hi], frac[0, 0])


def _acceleration(jack: Any, weights: Any) -> Any:
    r"""BCa acceleration from the weighted jackknife, per row:
    :math:`a = \sum c_k d_k^3 / (6 (\sum c_k d_k^2)^{3/2})`, :math:`d_k = \bar\theta -
    \theta_{(k)}` over the defined leave-one-out values."""
    ok = ~np.isnan(jack)
    w = np.where(ok, weights[None, :], 0.0)
    th = np.where(ok, jack, 0.0)
    wsum = w.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = (w * th).sum(axis=1) / wsum
        d = np.where(ok, mean[:, None] - th, 0.0)
        num = (w * d**3).sum(axis=1)
        den = 6.0 * (w * d * d).sum(axis=1) ** 1.5
        acc = np.where(den > 0, num / den, 0.0)
    return np.nan_to_num(acc)


def _smooth_intervals(
    est: Any,
    boot: Any,
    level: float,
    method: str,
    exact: Any,
    jack: Any = None,
    jack_weights: Any = None,
) -> tuple[Any, Any, Any, list[str | None]]:
    r"""Intervals of smooth statistics: rows of ``boot`` (statistics × B, NaN = undefined).

    Percentile :math:`[q_{\alpha/2}, q_{1-\alpha/2}]`; basic
    :math:`[2\hat x - q_{1-\alpha/2}, 2\hat x - q_{\alpha/2}]`; BCa the percentile interval at
    levels :math:`\Phi(z_0 + (z_0 + z_p)/(1 - a(z_0 + z_p)))`. ``exact`` rows (the named
    reference's own difference and ratio) are their estimate, without uncertainty. The
    quantiles are exact order statistics, selected without a full sort where every replicate
    is defined (:func:`_order_statistics`); rows with undefined replicates and BCa (levels per
    row) are sorted. Returns low, high, n_defined and the note of each withdrawn interval.
    """
    n_stats, n_boot = boot.shape
    alpha = 1.0 - level
    pair = np.array([alpha / 2, 1 - alpha / 2])
    n_def = np.full(n_stats, n_boot, dtype=np.int64)
    first = np.full(n_stats, np.nan)  # the smallest and largest defined replicate value
    last = np.full(n_stats, np.nan)
    q = np.full((n_stats, 2), np.nan)
    sorted_x = np.empty((0, n_boot))
    if method == "bca" or n_boot == 0 or n_stats == 0:
        sort_rows = np.arange(n_stats)
    else:
        # the same levels on every row: exact selection of the order statistics, and a sort
        # only for the rows with undefined replicates (NaN, last in the selection too)
        lo, hi, frac = _positions(np.array([n_boot]), pair[None, :])
        ks = [int(k) for k in (*lo[0], *hi[0])]
        stats, first, last = _order_statistics(boot, ks)
        for j in range(2):
            q[:, j] = _interpolate(stats[int(lo[0, j])], stats[int(hi[0, j])], frac[0, j])
        sort_rows = np.flatnonzero(np.isnan(last))
    if sort_rows.size:
        sorted_x = np.sort(boot[sort_rows], axis=1)  # NaN last
        nd_rows = (~np.isnan(sorted_x)).sum(axis=1)
        n_def[sort_rows] = nd_rows
        first[sort_rows] = sorted_x[:, 0] if n_boot else np.nan
        last[sort_rows] = (
            sorted_x[np.arange(sort_rows.size), np.maximum(nd_rows - 1, 0)] if n_boot else np.nan
        )
    if method == "bca":
        nd = NormalDist()
        with np.errstate(invalid="ignore"):
            below = (boot < est[:, None]).sum(axis=1) + 0.5 * (boot == est[:, None]).sum(axis=1)
            prop = np.where(n_def > 0, below / np.maximum(n_def, 1), np.nan)
        okp = (prop > 0) & (prop < 1)
        z0 = np.array([nd.inv_cdf(p) if o else np.nan for p, o in zip(prop, okp, strict=True)])
        acc = (
            _acceleration(jack, jack_weights)
            if jack is not None and jack.shape[1]
            else np.zeros(n_stats)
        )
        levels = np.full((n_stats, 2), np.nan)
        for j, p in enumerate(pair):
            zp = z0 + nd.inv_cdf(p)
            denom = 1.0 - acc * zp
            with np.errstate(invalid="ignore", divide="ignore"):
                arg = z0 + zp / denom
            cdf = np.array([nd.cdf(a) if math.isfinite(a) else np.nan for a in arg])
            levels[:, j] = np.where(denom > 0, cdf, 0.0 if p < 0.5 else 1.0)
        q = _row_quantiles(sorted_x, n_def, np.nan_to_num(levels, nan=0.5))
        q[~okp] = np.nan
        low, high = q[:, 0], q[:, 1]
    else:
        if sort_rows.size:
            levels = np.broadcast_to(pair, (sort_rows.size, 2))
            q[sort_rows] = _row_quantiles(sorted_x, n_def[sort_rows], levels)
        if method == "percentile":
            low, high = q[:, 0].copy(), q[:, 1].copy()
        else:
            low, high = 2 * est - q[:, 1], 2 * est - q[:, 0]
    notes: list[str | None] = [None] * n_stats
    minimum = MIN_DEFINED_SHARE * n_boot
    for i in range(n_stats):
        if exact[i] and not math.isnan(est[i]):
            low[i] = high[i] = est[i]
            continue
        note = None
        if math.isnan(est[i]):
            note = "undefined on the observed data"
        elif math.isinf(est[i]):
            note = "infinite on the observed data"
        elif n_def[i] == 0:
            note = "undefined in every resample"
        elif n_def[i] < minimum:
            note = FEW_DEFINED_NOTE.format(n_def[i], n_boot)
        elif first[i] == last[i]:
            note = CONSTANT_NOTE
        elif method == "bca" and not (0 < prop[i] < 1):
            note = "BCa undefined: every resample lies on one side of the estimate"
        elif not (math.isfinite(low[i]) and math.isfinite(high[i])):
            note = "infinite or undefined bounds"
        if note is not None:
            low[i] = high[i] = np.nan
            notes[i] = note
    return low, high, n_def, notes


def _max_t_band(est: Any, boot: Any, level: float, parts: str) -> tuple[Any, str | None]:
    r"""Half-widths of the simultaneous studentized band of the parts (rows) of a non-smooth
    statistic, from the replicates where every part is defined (columns of ``boot``).

    :math:`c` is the :math:`(1-\alpha)`-quantile over replicates of
    :math:`\max_j |x^*_j - \hat x_j| / s_j` (:math:`s_j` the bootstrap standard deviation of part
    :math:`j`); the band :math:`\hat x_j \pm c\, s_j` holds every part at once with probability
    :math:`1-\alpha` (asymptotically, whatever the ties between parts).
    """
    se = boot.std(axis=1, ddof=1)
    if (se <= 0).any():
        return se, (
            f"one of {parts} does not vary across resamples: the bootstrap cannot measure its "
            "uncertainty (a rate of 0 or 1 on few rows)"
        )
    t = np.abs(boot - est[:, None]) / se[:, None]
    crit = float(_level_quantile(t.max(axis=0)[None, :], level)[0])
    return crit * se, None


def _projected(est: Any, half: Any) -> tuple[float, float]:
    """Range of ``max_j |x_j|`` over the box ``est ± half``."""
    lo = np.maximum(np.abs(est) - half, 0.0)
    hi = np.abs(est) + half
    return float(lo.max()), float(hi.max())


def _nonsmooth_parts(
    est: Any, boot: Any, level: float, parts: str, exact: bool = False
) -> tuple[float, float, int, str | None]:
    """Interval of ``max_j |x_j|`` from its signed parts (rows): the max-t band projected."""
    n_boot = boot.shape[1]
    if np.isnan(est).any():
        return math.nan, math.nan, 0, "undefined on the observed data"
    defined = ~np.isnan(boot).any(axis=0)
    n_def = int(defined.sum())
    if n_def < max(MIN_DEFINED_SHARE * n_boot, 2):
        return (
            math.nan,
            math.nan,
            n_def,
            f"{parts} are defined together in only {n_def} of {n_boot} resamples (fewer than "
            f"{MIN_DEFINED_SHARE:.0%}): too few rows behind it",
        )
    if exact:
        value = float(np.abs(est).max())
        return value, value, n_def, None
    half, note = _max_t_band(est, boot[:, defined], level, parts)
    if note is not None:
        return math.nan, math.nan, n_def, note
    lo, hi = _projected(est, half)
    return lo, hi, n_def, None


def _nonsmooth_many(
    est: Any, boot: Any, level: float, parts: str
) -> tuple[Any, Any, Any, list[str | None]]:
    """:func:`_nonsmooth_parts` of many statistics at once: ``est`` (statistics × parts),
    ``boot`` (statistics × parts × B); low, high, n_defined and notes per statistic, equal to
    the one-by-one results. The statistics whose parts are all defined in every replicate and
    vary get one vectorised band (one standard deviation, one maximum and one quantile call for
    all); the others (undefined parts or replicates, constant parts) go one by one."""
    n_stats, _, n_boot = boot.shape
    low, high = np.full(n_stats, np.nan), np.full(n_stats, np.nan)
    n_def = np.zeros(n_stats, dtype=np.int64)
    notes: list[str | None] = [None] * n_stats
    fast = ~np.isnan(est).any(axis=1)
    if n_boot >= 2 and fast.any():
        se = np.full(est.shape, np.nan)
        with np.errstate(invalid="ignore"):
            # (no copy of the replicates when every statistic qualifies, the usual case)
            se[fast] = (boot if fast.all() else boot[fast]).std(axis=2, ddof=1)
        # NaN (or infinite) replicates give a NaN deviation: those go one by one
        fast &= np.isfinite(se).all(axis=1) & (se > 0).all(axis=1)
    else:
        fast[:] = False
    rows = np.flatnonzero(fast)
    if rows.size:
        e, s = est[rows], se[rows]
        t = (boot if rows.size == n_stats else boot[rows]) - e[:, :, None]
        np.abs(t, out=t)
        np.divide(t, s[:, :, None], out=t)
        crit = _level_quantile(t.max(axis=1), level)
        half = crit[:, None] * s
        low[rows] = np.maximum(np.abs(e) - half, 0.0).max(axis=1)
        high[rows] = (np.abs(e) + half).max(axis=1)
        n_def[rows] = n_boot
    for i in np.flatnonzero(~fast):
        low[i], high[i], n_def[i], notes[i] = _nonsmooth_parts(est[i], boot[i], level, parts)
    return low, high, n_def, notes


def _gaps(values: Any, members: Any, g: Any, h: Any) -> Any:
    """``values[members[:, g]] - values[members[:, h]]`` (statistics × pairs × B), pair by pair
    into one array: whole-row copies instead of a fancy-indexed gather of every element."""
    out = np.empty((members.shape[0], g.size, values.shape[1]))
    for k in range(g.size):
        np.subtract(values[members[:, g[k]]], values[members[:, h[k]]], out=out[:, k])
    return out


def _pairwise(values: Any) -> Any:
    """Signed differences of every pair of rows (g < h), rows × columns kept."""
    g, h = np.triu_indices(values.shape[0], k=1)
    return values[g] - values[h]


def _between_interval(
    est: Any, boot: Any, level: float, log: bool
) -> tuple[float, float, int, str | None]:
    r"""Interval of ``max − min`` over groups (``log``: of ``log(max / min)``) from the group
    values: the simultaneous band of all pairwise gaps, projected (see :func:`_max_t_band`)."""
    n_groups = est.shape[0]
    if log:
        if (est <= 0).any():
            return (
                math.nan,
                math.nan,
                0,
                "a group's value is 0 or negative: min / max has no interval on the log scale",
            )
        with np.errstate(divide="ignore", invalid="ignore"):
            boot = np.where(boot > 0, np.log(boot), np.nan)
        est = np.log(est)
    if n_groups == 1:
        defined = int((~np.isnan(boot)).all(axis=0).sum())
        return 0.0, 0.0, defined, None
    return _nonsmooth_parts(_pairwise(est), _pairwise(boot), level, "the groups' values")


# ---------------------------------------------------------------------------------------------
# with_intervals
# ---------------------------------------------------------------------------------------------


def _interval_columns(columns: Sequence[str]) -> list[str]:
    between = _is_between(columns)
    out: list[str] = []
    for q in _QUANTITIES:
        if q in columns and not (between and q == "value"):
            out += list(_CI[q])
    return [*out, "ci_method", "ci_level", "n_resamples", "n_defined", "ci_note"]


def _is_between(columns: Sequence[str]) -> bool:
    return "value" not in columns and {"min", "max", "n_groups"} <= set(columns)


def _output_schema(schema: Mapping[str, pl.DataType]) -> dict[str, pl.DataType]:
    out = {c: t for c, t in schema.items() if c not in _interval_columns(list(schema))}
    for c in _interval_columns(list(schema)):
        out[c] = {
            "ci_method": pl.String(),
            "ci_note": pl.String(),
            "n_resamples": pl.Int64(),
            "n_defined": pl.Int64(),
        }.get(c, pl.Float64())
    keys = [c for c in schema if c not in RESERVED]
    return dict(finish(pl.DataFrame(schema=out), keys=keys).schema)


def _collect(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


def _replicate_ids(ids: Any, n_resamples: int | None) -> tuple[int, Any]:
    """B, and the column of each replicate id (``-1`` for ids that are not resamples): the
    distinct positive ids in increasing order. Linear time for the usual ids 1..B."""
    positive = ids[ids > 0]
    top = int(positive.max()) if positive.size else 0
    if top <= 4 * positive.size + 1024:
        present = np.bincount(positive, minlength=top + 1) > 0
        n_found = int(present.sum())
        column = np.where(present, np.cumsum(present) - 1, -1)

        def lookup(x: Any) -> Any:
            return column[x]
    else:
        distinct = np.unique(positive)
        n_found = int(distinct.size)

        def lookup(x: Any) -> Any:
            return np.searchsorted(distinct, x)

    if n_resamples is not None and n_found > n_resamples:
        raise InvalidOptionError(
            f"n_resamples={n_resamples} but the replicates hold {n_found} resamples"
        )
    n_boot = n_found if n_resamples is None else n_resamples
    out = np.full(ids.shape, -1, dtype=np.int64)
    mask = ids > 0
    out[mask] = lookup(ids[mask])
    return n_boot, out


def _float_block(frame: pl.DataFrame, columns: Sequence[str]) -> Any:
    """Columns as one float matrix (rows × columns), null as NaN: one conversion."""
    if not columns:
        return np.zeros((frame.height, 0))
    block = frame.select(columns).cast(pl.Float64).to_numpy()
    return np.asarray(block, dtype=np.float64).reshape(frame.height, len(columns))


def _matrices(
    index: pl.DataFrame,
    reps: pl.DataFrame,
    match: list[str],
    quantities: Sequence[str],
    n_resamples: int | None,
) -> tuple[int, dict[str, Any], dict[str, Any], int]:
    """Replicate values of each row of ``index`` (match columns + ``_pfm_i``), per quantity:
    (rows × B) bootstrap matrices and (rows × K) jackknife matrices (replicates < 0), and the
    number of resample rows of ``reps`` that matched a row of ``index``.

    ``reps`` is long (a ``metric`` column) or wide (``docs/results.md``: the value of metric
    ``m`` in column ``m``, its quantity ``q`` in ``m_q``; no ``metric`` column) — the wide form
    of the engine's tables is several times faster to compute for thousands of replicates."""
    n_rows = index.height
    if "metric" in reps.columns or "metric" not in match:
        joined = reps.select(*match, REPLICATE, *quantities).join(
            index, on=match, how="inner", nulls_equal=True
        )
        owner = joined[_PI].to_numpy().astype(np.int64)
        columns = list(quantities)
        n_groups = n_rows
        which: dict[str, tuple[Any, Any, int]] = {
            q: (np.arange(n_rows), 0, j) for j, q in enumerate(quantities)
        }
    else:
        on = [c for c in match if c != "metric"]
        groups = index.select(on).unique(maintain_order=True).with_row_index(_GIDX)
        groups = groups.with_columns(pl.col(_GIDX).cast(pl.Int64))
        row_group = (
            index.join(groups, on=on, how="left", nulls_equal=True, maintain_order="left")[_GIDX]
            .to_numpy()
            .astype(np.int64)
        )
        metrics = index["metric"].to_list()
        names = list(dict.fromkeys(metrics))
        columns = [m if q == "value" else f"{m}_{q}" for m in names for q in quantities]
        absent = [c for c in columns if c not in reps.columns]
        if absent:
            raise InvalidOptionError(
                f"the replicates lack column(s) {absent[:5]!r} of point (wide replicates: one "
                "column per metric): pass the same function applied to the replicate table"
            )
        # the keys alone are joined: the value columns are read from ``reps`` at the matched
        # rows' positions (a join would copy every one of them)
        joined = (
            reps.select(*on, REPLICATE)
            .with_row_index(_IDX)
            .join(groups, on=on, how="inner", nulls_equal=True)
        )
        owner = joined[_GIDX].to_numpy().astype(np.int64)
        n_groups = groups.height
        position = {m: i for i, m in enumerate(names)}
        which = {
            q: (row_group, np.array([position[m] for m in metrics], dtype=np.int64), j)
            for j, q in enumerate(quantities)
        }
    ids = joined[REPLICATE].to_numpy().astype(np.int64)
    n_boot, col = _replicate_ids(ids, n_resamples)
    is_boot, is_jack = col >= 0, ids < 0
    n_jack = int(-ids[is_jack].min()) if is_jack.any() else 0
    boot_rows = np.flatnonzero(is_boot)
    ob, cb = owner[boot_rows], col[boot_rows]
    linear = ob * max(n_boot, 1) + cb
    seen = np.bincount(linear) if linear.size else np.zeros(0, dtype=np.int64)
    if seen.size and seen.max() > 1:
        raise InvalidOptionError(
            "the replicates hold several rows for one statistic and replicate: pass the same "
            "function applied to the replicate table (with the same keys and partitions)"
        )
    n_q = len(quantities)
    oj, cj = owner[is_jack], -ids[is_jack] - 1
    long = "metric" in reps.columns or "metric" not in match
    boot: dict[str, Any] = {}
    jack: dict[str, Any] = {}
    if long:
        block = _float_block(joined, columns)
        vb, vj = block[boot_rows], block[is_jack]
        for q, (_, _, j) in which.items():
            m = np.full((n_rows, n_boot), np.nan)
            m[ob, cb] = vb[:, j]
            jm = np.full((n_rows, n_jack), np.nan)
            jm[oj, cj] = vj[:, j]
            boot[q], jack[q] = m, jm
        return n_boot, boot, jack, int(boot_rows.size)
    # wide: row r is column (its metric, quantity q) of its group. Each column is read once
    # (null as NaN, no copy of the whole block) and its rows gathered straight into the
    # matrix in (group, resample) order: when every group is in every resample (the
    # engine's tables), by the inverse of the rows' positions (no sort); else scattered
    # with NaN for the missing ones
    n_cells = n_groups * n_boot
    complete = linear.size == n_cells
    at = joined[_IDX].to_numpy().astype(np.int64)  # each matched row's position in reps
    order = np.empty(n_cells, dtype=np.int64)
    order[linear] = at[boot_rows]
    order2d = order.reshape(n_groups, n_boot)
    # the engine's tables come sorted by group and replicate: then each group's resamples are
    # one contiguous run of every column, read as whole rows instead of gathered
    sequential = complete and n_cells <= len(reps) and np.array_equal(order, np.arange(n_cells))
    boot_at, jack_at = at[boot_rows], at[is_jack]
    for q, (grp, metric_pos, j) in which.items():
        cols = np.asarray(metric_pos) * n_q + j
        m = np.empty((n_rows, n_boot))
        jm = np.empty((n_rows, n_jack))
        for c in np.unique(cols).tolist():
            rows_c = np.flatnonzero(cols == c)
            values = reps.get_column(columns[c]).cast(pl.Float64).to_numpy()
            if sequential:
                m[rows_c] = values[:n_cells].reshape(n_groups, n_boot)[grp[rows_c]]
            elif complete:
                m[rows_c] = values[order2d[grp[rows_c]]]
            else:
                full = np.full(n_cells, np.nan)
                full[linear] = values[boot_at]
                m[rows_c] = full.reshape(n_groups, n_boot)[grp[rows_c]]
            if n_jack:
                full_j = np.full((n_groups, n_jack), np.nan)
                full_j[oj, cj] = values[jack_at]
                jm[rows_c] = full_j[grp[rows_c]]
        boot[q], jack[q] = m, jm
    return n_boot, boot, jack, int(boot_rows.size)


def _require_match(n_rows: int, reps: pl.DataFrame, n_matched: int, match: Sequence[str]) -> None:
    """Refuse replicates that are not of the point table: with no resample at all, or no
    resample row matching any row of it, every interval would be withheld as "undefined in
    every resample" while the statistic is defined (the replicates are of another table, or
    computed with other metrics or another reference)."""
    if n_rows == 0:
        return
    if n_matched == 0 and not (reps[REPLICATE] > 0).any():
        raise InvalidOptionError(
            "the replicates hold no resample (replicate ids 1..B): pass the same function "
            "applied to resample_counts(...)"
        )
    if n_matched == 0:
        raise InvalidOptionError(
            f"no row of the replicates matches a row of point on column(s) {list(match)!r}: "
            "pass the same function, with the same options (metrics, reference, groups), "
            "applied to the replicate table of the same count table"
        )


def _component_criteria() -> dict[str, list[str]]:
    """For each criterion composed as a max of absolute differences, the criteria that are its
    signed parts (the difference criterion of each of its metrics)."""
    by_metric = {
        c.metrics[0]: c.name
        for c in CRITERIA.values()
        if c.composition == "difference" and len(c.metrics) == 1
    }
    return {
        c.name: [by_metric[m] for m in c.metrics if m in by_metric]
        for c in CRITERIA.values()
        if c.composition == "max_abs_difference"
    }


def _group_values(
    frame: pl.DataFrame, metrics: list[str], *, wide: bool = False
) -> pl.DataFrame | None:
    """Group values (keys, partitions, metric, value) of a table: itself when it has ``value``,
    :func:`~polars_fairmetrics.metrics_from_counts` of a count table (``wide``: its wide form,
    faster on thousands of replicates); with ``wide``, also a table of group values in wide
    form (a column per metric, as ``metrics_from_counts(..., wide=True)`` gives) holding every
    metric, itself; None otherwise."""
    if "value" in frame.columns and "metric" in frame.columns:
        return frame
    if all(c in frame.columns for c in _BASE):
        known = [m for m in metrics if m in METRICS]
        if not known:
            return None
        return metrics_from_counts(frame, metrics=known, wide=wide)
    if wide and metrics and "metric" not in frame.columns:
        if all(m in frame.columns for m in metrics):
            return frame
    return None


def _match_columns(columns: Sequence[str]) -> list[str]:
    """The columns that identify a statistic of a long result table (partitions, keys,
    ``metric``): what :func:`with_intervals` matches a point row with its replicates on."""
    keys = [c for c in columns if c not in RESERVED]
    parts = [p for p in partitions_of(columns) if p != REPLICATE]
    return [*parts, *keys, "metric"]


def _attach(
    point: pl.DataFrame,
    reps: pl.DataFrame,
    counts: pl.DataFrame | None,
    method: str,
    level: float,
    n_resamples: int | None,
    jack_weights: Any = None,
    effective_sizes: Mapping[str, Any] | None = None,
) -> pl.DataFrame:
    """The interval columns of ``point`` (see :func:`with_intervals`). ``counts``: the observed
    count table or group values (between-groups); ``jack_weights``: BCa's jackknife weights
    (default: from ``counts``); ``effective_sizes``: each row's effective sample size per
    quantity, for a table whose rows are not those of a count table (default: from
    ``counts``, :func:`_effective_sizes`)."""
    columns = point.columns
    if REPLICATE in columns:
        raise InvalidOptionError(
            "point has a 'replicate' column: pass the result on the observed data as point and "
            "the same function of the replicate table as replicates"
        )
    if "metric" not in columns:
        raise InvalidOptionError(
            "point must be a long result table (a 'metric' column): compute it with wide=False "
            "and widen the result with intervals"
        )
    if REPLICATE not in reps.columns:
        raise InvalidOptionError(
            "replicates have no 'replicate' column: pass the function applied to "
            "resample_counts(...)"
        )
    keys = [c for c in columns if c not in RESERVED]
    parts = [p for p in partitions_of(columns) if p != REPLICATE]
    match = _match_columns(columns)
    if "reference" in columns and "reference" in reps.columns:
        # the comparison must be against the same reference in the replicates
        match.insert(len(match) - 1, "reference")
    between = _is_between(columns)
    quantities = ["difference", "ratio"] if between else [q for q in _QUANTITIES if q in columns]
    n_rows = point.height
    index = point.select(match).with_row_index(_PI).with_columns(pl.col(_PI).cast(pl.Int64))
    low = {q: np.full(n_rows, np.nan) for q in quantities}
    high = {q: np.full(n_rows, np.nan) for q in quantities}
    n_def = np.zeros(n_rows, dtype=np.int64)
    notes: dict[str, list[str | None]] = {q: [None] * n_rows for q in quantities}
    ci_method: list[str] = [method] * n_rows
    exact_of: dict[str, Any] = {q: np.zeros(n_rows, dtype=bool) for q in quantities}
    missing_cols = [c for c in match if c not in reps.columns]

    if between:
        n_boot = _between(
            point, reps, counts, parts, level, n_resamples, low, high, n_def, notes, ci_method
        )
    else:
        wide = "metric" not in reps.columns
        absent = [] if wide else [q for q in quantities if q not in reps.columns]
        missing_cols = [c for c in missing_cols if not (wide and c == "metric")]
        if missing_cols or absent:
            raise InvalidOptionError(
                f"the replicates lack column(s) {[*missing_cols, *absent]!r} of point: pass the "
                "same function applied to the replicate table"
            )
        n_boot, boot, jack, n_matched = _matrices(index, reps, match, quantities, n_resamples)
        _require_match(n_rows, reps, n_matched, match)
        weights = jack_weights
        if method == "bca" and weights is None:
            if counts is None:
                raise InvalidOptionError(
                    "method='bca' needs counts= (the observed count table, to weigh the "
                    "leave-one-out tables) and replicates from resample_counts(jackknife=True)"
                )
            weights = _jackknife_weights(counts)
        # (an empty point table joins no replicate row: nothing to check)
        if weights is not None and n_rows and jack[quantities[0]].shape[1] != weights.size:
            raise InvalidOptionError(
                f"method='bca': the replicates hold {jack[quantities[0]].shape[1]} "
                f"leave-one-out tables, the count table has {weights.size} non-empty cells: "
                "draw the replicates with resample_counts(counts, jackknife=True)"
            )
        is_ref = (
            point["is_reference"].fill_null(False).to_numpy()
            if "is_reference" in columns
            else np.zeros(n_rows, dtype=bool)
        )
        is_criterion = point["metric"].is_in(list(CRITERIA)).to_numpy()
        for q in quantities:
            est = point[q].cast(pl.Float64).fill_null(np.nan).fill_nan(np.nan).to_numpy()
            # the named reference's own comparison is exact: difference 0, ratio 1 (criteria
            # are comparisons too: their value is one)
            exact = is_ref if q in ("difference", "ratio") else is_ref & is_criterion
            lo, hi, nd, nt = _smooth_intervals(
                est,
                boot[q],
                level,
                method,
                exact,
                jack[q] if weights is not None else None,
                weights,
            )
            if method == "basic":
                _withhold_basic(point, counts, exact, lo, hi, nt)
            exact_of[q] = exact
            low[q], high[q], notes[q] = lo, hi, nt
            if q == quantities[0]:
                n_def = nd
        _nonsmooth_criteria(point, match, boot, level, is_ref, low, high, n_def, notes, ci_method)
    ess = (
        effective_sizes if effective_sizes is not None else _effective_sizes(point, counts, between)
    )
    if ess is not None:
        for q in quantities:
            _withhold_low_ess(ess[q], exact_of[q], low[q], high[q], notes[q], ci_method)
    merged = []
    for i in range(n_rows):
        row_notes = {notes[q][i] for q in quantities}
        if len(row_notes) == 1 and None not in row_notes:
            merged.append(row_notes.pop())
            continue
        parts_note = [
            (f"{q}: {notes[q][i]}" if len(quantities) > 1 else notes[q][i])
            for q in quantities
            if notes[q][i] is not None
        ]
        merged.append("; ".join(cast(list[str], parts_note)) if parts_note else None)
    new: dict[str, Any] = {}
    for q in quantities:
        a, b = _CI[q]
        new[a] = pl.Series(a, low[q], dtype=pl.Float64, nan_to_null=True)
        new[b] = pl.Series(b, high[q], dtype=pl.Float64, nan_to_null=True)
    out = point.drop([c for c in _interval_columns(columns) if c in columns]).with_columns(
        **new,
        ci_method=pl.Series(ci_method, dtype=pl.String),
        ci_level=pl.lit(float(level), dtype=pl.Float64),
        n_resamples=pl.lit(n_boot, dtype=pl.Int64),
        n_defined=pl.Series(n_def, dtype=pl.Int64),
        ci_note=pl.Series(merged, dtype=pl.String),
    )
    return finish(out, keys=keys)


def _withhold_basic(
    point: pl.DataFrame,
    counts: pl.DataFrame | None,
    exact: Any,
    low: Any,
    high: Any,
    notes: list[str | None],
) -> None:
    """Withhold basic intervals where the coverage study found them unreliable (in place):
    weighted data and supports below :data:`BASIC_MIN_SUPPORT`.

    Weighted data: the observed count table ``counts`` has weighted counts (``n_w``); without
    it, the point table has them. A deployment-corrected table has ``n_w`` of its own (the
    class-prior factor as a weight) but is not weighted data: the coverage study measured its
    basic intervals at 93-94 % on unweighted counts."""
    weighted = "n_w" in (counts.columns if counts is not None else point.columns)
    support = (
        point["support"].cast(pl.Float64).fill_null(0.0).to_numpy()
        if "support" in point.columns
        else None
    )
    for i in range(point.height):
        if exact[i] or math.isnan(low[i]):
            continue
        if weighted:
            note = (
                "basic intervals under-cover on weighted data (85-91 % at nominal 95 % in the "
                "coverage study): use method='percentile' or 'bca'"
            )
        elif support is not None and support[i] < BASIC_MIN_SUPPORT:
            note = (
                f"basic intervals under-cover on few rows (support {support[i]:.0f} < "
                f"{BASIC_MIN_SUPPORT}; 90 % at nominal 95 % in the coverage study): use "
                "method='percentile' or 'bca'"
            )
        else:
            continue
        low[i] = high[i] = np.nan
        notes[i] = note


_MARGINS = ((0, 3), (1, 2), (0, 1), (2, 3))
"""Cell sets (indices into ``tp, fp, tn, fn``) of the four margins: positives, negatives,
predicted positives, predicted negatives."""


_CURVE_DENOMINATORS: dict[str, tuple[tuple[int, ...], ...]] = {
    "roc_auc": (_MARGINS[0], _MARGINS[1]),
    "average_precision": (_MARGINS[0],),
    "aupr": (_MARGINS[0],),
}
"""The rows behind each curve summary (its ``support``: positive–negative pairs for ROC AUC,
positives for the precision-recall summaries): the positives and the negatives margins."""


@functools.cache
def _denominator_cells(metric: str) -> tuple[tuple[int, ...], ...]:
    """The cell sets whose rows form a metric's denominator(s) (its ``support``), read from the
    metric registry by probing the support expression: a sum of cells gives that one set; a
    support that is not a sum of cells (a minimum of margins: balanced accuracy, MCC) gives the
    four margins (the smallest effective size among them: conservative). Curve summaries:
    :data:`_CURVE_DENOMINATORS`."""
    if metric in _CURVE_DENOMINATORS:
        return _CURVE_DENOMINATORS[metric]
    names = [m for m in CRITERIA[metric].metrics] if metric in CRITERIA else [metric]
    out: list[tuple[int, ...]] = []
    for name in names:
        if name not in METRICS:
            continue
        probes = [[1.0 if j == i else 0.0 for j in range(4)] for i in range(4)]
        probes.append([1.0, 2.0, 4.0, 8.0])
        frame = pl.DataFrame(
            {c: [p[j] for p in probes] for j, c in enumerate(_BASE)},
            schema=dict.fromkeys(_BASE, pl.Float64),
        )
        got = frame.select(METRICS[name].support(Counts.from_columns()).cast(pl.Float64))
        v = got.to_series().to_list()
        member = tuple(i for i in range(4) if v[i] == 1.0)
        linear = all(v[i] in (0.0, 1.0) for i in range(4)) and v[4] == sum(2.0**i for i in member)
        sets = [member] if linear and member else list(_MARGINS)
        out += [s for s in sets if s not in out]
    return tuple(out)


def _kish(s: Any, sets: Sequence[tuple[int, ...]]) -> Any:
    r"""Smallest Kish effective size :math:`(\sum w)^2 / \sum w^2` over cell sets, per row of
    ``s`` (rows × 12: the per-cell sums of weights, of squared weights, and the row counts, in
    the order ``tp, fp, tn, fn``). NaN where a set holds no weight; infinite where its weights
    are all equal (then :math:`n_\mathrm{eff}` is its row count and the weighted bootstrap is
    the unweighted one, which the rule does not concern)."""
    best = np.full(s.shape[0], np.inf)
    for cells in sets:
        idx = list(cells)
        a = s[:, idx].sum(axis=1)
        b = s[:, [i + 4 for i in idx]].sum(axis=1)
        n = s[:, [i + 8 for i in idx]].sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ess = np.where(b > 0, a * a / np.where(b > 0, b, 1.0), np.nan)
        ess = np.where(ess >= n * (1.0 - 1e-9), np.inf, ess)  # equal weights
        best = np.where(np.isnan(best) | np.isnan(ess), np.nan, np.fmin(best, ess))
    return best


def _effective_sizes(
    point: pl.DataFrame, counts: pl.DataFrame | None, between: bool
) -> dict[str, Any] | None:
    r"""Kish effective sample size behind each interval of ``point`` on weighted data, per
    quantity: :math:`n_\mathrm{eff} = (\sum w)^2 / \sum w^2` over the rows of the statistic's
    denominator cells (:func:`_denominator_cells`), the smallest over what the statistic
    compares — the group, and its reference (the named group, the rest of the partition, or
    the whole partition) for a difference, a ratio or a criterion; every group of the partition
    for a between-groups row. None when the data are not weighted or ``counts`` (the observed
    count table) lacks the per-cell sums of squared weights; NaN where it does not apply (a
    metric outside the registry, a row not in the count table, an empty denominator);
    infinite where the weights are all equal (:func:`_kish`)."""
    cols = [*(f"{c}_w" for c in _BASE), *WEIGHT_SQUARE_COLUMNS, *_BASE]
    if counts is None or not set(cols) <= set(counts.columns):
        return None
    if not between and "n_w" not in point.columns:
        return None
    parts = [p for p in partitions_of(point.columns) if p != REPLICATE and p in counts.columns]
    if "threshold" in counts.columns and "threshold" not in point.columns:
        # statistics of a whole curve (its summaries): their rows are margins of a group,
        # the same at every threshold of a thresholded count table; one threshold is read
        counts = counts.filter(pl.col("threshold") == pl.col("threshold").min()).drop("threshold")
    keys = [c for c in counts.columns if c not in count_columns(counts.columns) and c not in parts]
    cells = counts.select(*parts, *keys, *[pl.col(c).cast(pl.Float64) for c in cols])
    n_rows = point.height
    metrics = point["metric"].to_list()
    if between:
        if not set(parts) <= set(point.columns):
            return None
        s = cells.select(cols).to_numpy().astype(np.float64)
        part_of = cells.select(parts).rows() if parts else [()] * cells.height
        rows = point.select(parts).rows() if parts else [()] * n_rows
        ess = np.full(n_rows, np.nan)
        for i, (where, m) in enumerate(zip(rows, metrics, strict=True)):
            mine = np.array([p == where for p in part_of], dtype=bool)
            sets = _denominator_cells(m)
            if mine.any() and sets:
                ess[i] = np.nanmin(np.append(_kish(s[mine], sets), np.inf))
        return {"difference": ess, "ratio": ess}
    on = [*parts, *keys]
    if not set(on) <= set(point.columns):
        return None
    g = point.select(on).with_row_index(_PI).join(cells, on=on, how="left", nulls_equal=True)
    s = g.sort(_PI).select(cols).to_numpy().astype(np.float64)
    # the reference's sums, row by row: the named group's, the partition's total, or the
    # total minus the group's own ("rest")
    t = np.full_like(s, np.nan)
    if "reference" in point.columns:
        if parts:
            totals = cells.group_by(parts).agg(pl.col(cols).sum())
            joined = point.select(parts).with_row_index(_PI)
            joined = joined.join(totals, on=parts, how="left", nulls_equal=True).sort(_PI)
            tot = joined.select(cols).to_numpy().astype(np.float64)
        else:
            tot = np.tile(cells.select(cols).to_numpy().sum(axis=0), (n_rows, 1))
        ref = point["reference"].cast(pl.String).to_list()
        named = np.full_like(s, np.nan)
        if "is_reference" in point.columns:
            chosen = point.filter(pl.col("is_reference").fill_null(False)).select(on).unique()
            chosen = chosen.join(cells, on=on, how="inner", nulls_equal=True)
            by_part = {r[: len(parts)]: r[len(on) :] for r in chosen.rows()}
            part_rows = point.select(parts).rows() if parts else [()] * n_rows
            for i, pr in enumerate(part_rows):
                if pr in by_part:
                    named[i] = by_part[pr]
        for i in range(n_rows):
            if not np.isnan(named[i, 0]):
                t[i] = named[i]
            elif ref[i] == "overall":
                t[i] = tot[i]
            elif ref[i] == "rest":
                t[i] = tot[i] - s[i]
    own = np.full(n_rows, np.nan)
    other = np.full(n_rows, np.nan)
    for m in dict.fromkeys(metrics):
        sets = _denominator_cells(m)
        if not sets:
            continue
        rows_m = np.array([x == m for x in metrics], dtype=bool)
        own[rows_m] = _kish(s[rows_m], sets)
        other[rows_m] = _kish(t[rows_m], sets)
    compared = np.where(np.isnan(other), own, np.fmin(own, other))
    is_criterion = np.array([m in CRITERIA for m in metrics], dtype=bool)
    return {
        "value": np.where(is_criterion, compared, own),
        "difference": compared,
        "ratio": compared,
    }


def _withhold_low_ess(
    ess: Any, exact: Any, low: Any, high: Any, notes: list[str | None], ci_method: list[str]
) -> None:
    """Withhold (in place) the percentile and BCa intervals on weighted data whose effective
    sample size (:func:`_effective_sizes`) is below :data:`WEIGHTED_MIN_ESS`: the one rule for
    every weighted interval of :func:`with_intervals` (group metrics, comparisons, criteria;
    max-t intervals, which the coverage study finds valid there, are kept)."""
    for i in range(len(notes)):
        if exact[i] or ci_method[i] == MAX_T or math.isnan(low[i]) or not ess[i] < WEIGHTED_MIN_ESS:
            continue
        low[i] = high[i] = np.nan
        notes[i] = LOW_ESS_NOTE.format(f"{ess[i]:.0f}")


def _nonsmooth_criteria(
    point: pl.DataFrame,
    match: list[str],
    boot: Mapping[str, Any],
    level: float,
    is_ref: Any,
    low: dict[str, Any],
    high: dict[str, Any],
    n_def: Any,
    notes: dict[str, list[str | None]],
    ci_method: list[str],
) -> None:
    """Max-t intervals of the criteria composed as a max of absolute differences (equalized
    odds), from their signed parts in the same table."""
    if "value" not in point.columns:
        return
    composed = _component_criteria()
    metrics = point["metric"].to_list()
    if not any(m in composed for m in metrics):
        return
    rows = point.select(match).rows()
    where = {r: i for i, r in enumerate(rows)}
    est_all = point["value"].cast(pl.Float64).fill_null(np.nan).fill_nan(np.nan).to_numpy()
    # the rows of each criterion whose parts are present, in one batch (one band for all)
    batches: dict[str, list[tuple[int, Any]]] = {}
    for i, m in enumerate(metrics):
        if m not in composed:
            continue
        ci_method[i] = MAX_T
        comp_rows = [where.get((*rows[i][:-1], c)) for c in composed[m]]
        if not composed[m] or any(r is None for r in comp_rows):
            low["value"][i] = high["value"][i] = np.nan
            notes["value"][i] = (
                f"a max of absolute differences is not smooth: its interval needs its signed "
                f"parts ({', '.join(composed[m])}) in the same table and replicates"
            )
            continue
        idx = np.asarray(comp_rows, dtype=np.int64)
        label = f"its parts ({', '.join(composed[m])})"
        if is_ref[i]:
            lo, hi, nd, note = _nonsmooth_parts(
                est_all[idx], boot["value"][idx], level, label, exact=True
            )
            low["value"][i], high["value"][i], n_def[i], notes["value"][i] = lo, hi, nd, note
            continue
        batches.setdefault(label, []).append((i, idx))
    for label, batch in batches.items():
        rows_b = np.array([i for i, _ in batch], dtype=np.int64)
        idx_b = np.array([idx for _, idx in batch], dtype=np.int64)
        lo_b, hi_b, nd_b, nt_b = _nonsmooth_many(est_all[idx_b], boot["value"][idx_b], level, label)
        low["value"][rows_b], high["value"][rows_b], n_def[rows_b] = lo_b, hi_b, nd_b
        for k, i in enumerate(rows_b):
            notes["value"][i] = nt_b[k]


def _between(
    point: pl.DataFrame,
    reps: pl.DataFrame,
    counts: pl.DataFrame | None,
    parts: list[str],
    level: float,
    n_resamples: int | None,
    low: dict[str, Any],
    high: dict[str, Any],
    n_def: Any,
    notes: dict[str, list[str | None]],
    ci_method: list[str],
) -> int:
    """Max-t intervals of between-groups rows, from the group values of the replicates."""
    n_rows = point.height
    ci_method[:] = [MAX_T] * n_rows
    metrics = list(dict.fromkeys(point["metric"].to_list()))
    group_reps = _group_values(reps, metrics, wide=True)
    ids = reps[REPLICATE].to_numpy().astype(np.int64)
    n_boot, _ = _replicate_ids(ids, n_resamples)
    reason = None
    observed = None
    if group_reps is None:
        reason = (
            "a max − min over groups is not smooth, and its plain bootstrap is invalid near "
            "ties: pass the replicate count table (or the replicates' group values) as "
            "replicates for its simultaneous interval"
        )
    else:
        if counts is not None:
            observed = _group_values(counts, metrics)
        elif (reps[REPLICATE] == 0).any():
            observed = _group_values(reps.filter(pl.col(REPLICATE) == 0).drop(REPLICATE), metrics)
        if observed is None:
            reason = (
                "the between-groups interval needs the group values on the observed data: pass "
                "counts= (the observed count table) or replicates with replicate 0 "
                "(resample_counts(include_observed=True))"
            )
    if reason is not None or group_reps is None or observed is None:
        for q in ("difference", "ratio"):
            notes[q] = [reason] * n_rows
        return n_boot
    gkeys = [
        c
        for c in observed.columns
        if c not in RESERVED and c not in count_columns(observed.columns)
    ]
    on = [*parts, "metric"]
    wide = "metric" not in group_reps.columns
    absent = [
        c for c in [*on, *gkeys] if c not in group_reps.columns and not (wide and c == "metric")
    ]
    if absent:
        raise InvalidOptionError(f"the replicates lack column(s) {absent!r}")
    index = point.select(on).with_row_index(_PI).with_columns(pl.col(_PI).cast(pl.Int64))
    obs = (
        observed.select(*on, *gkeys, "value")
        .join(index, on=on, how="inner", nulls_equal=True)
        .with_row_index(_GIDX)
        .with_columns(pl.col(_GIDX).cast(pl.Int64))
    )
    g_index = obs.select(*on, *gkeys, _GIDX).rename({_GIDX: _PI})
    n_boot, boot, _, n_matched = _matrices(
        g_index, group_reps, [*on, *gkeys], ["value"], n_resamples
    )
    _require_match(g_index.height, group_reps, n_matched, [*on, *gkeys])
    values = boot["value"]
    est = obs["value"].cast(pl.Float64).fill_null(np.nan).fill_nan(np.nan).to_numpy()
    owner = obs[_PI].to_numpy()
    logs = np.full_like(values, np.nan)
    np.log(values, out=logs, where=values > 0)
    stated = point["difference"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    # rows by their number of defined groups: the pairwise gaps of a batch are one array
    batches: dict[int, list[tuple[int, Any]]] = {}
    for i in range(n_rows):
        members = np.flatnonzero((owner == i) & ~np.isnan(est))
        if members.size and not math.isclose(
            float(np.ptp(est[members])), stated[i], rel_tol=1e-9, abs_tol=1e-12
        ):
            raise InvalidOptionError(
                f"the observed group values give max − min = {np.ptp(est[members])!r} for "
                f"metric {point['metric'][i]!r}, point says {stated[i]!r}: pass as counts= "
                "(or replicate 0) the observed count table point was computed from"
            )
        if members.size == 0:
            for q in ("difference", "ratio"):
                notes[q][i] = "no group is defined on the observed data"
            continue
        if members.size == 1:
            for q, log in (("difference", False), ("ratio", True)):
                lo, hi, nd, note = _between_interval(est[members], values[members], level, log)
                _set_between(q, i, lo, hi, nd, note, low, high, n_def, notes)
            continue
        batches.setdefault(int(members.size), []).append((i, members))
    for size, batch in batches.items():
        g, h = np.triu_indices(size, k=1)
        rows = np.array([i for i, _ in batch], dtype=np.int64)
        members = np.array([m for _, m in batch], dtype=np.int64)
        e = est[members]
        gaps = _gaps(values, members, g, h)
        lo, hi, nd, nt = _nonsmooth_many(e[:, g] - e[:, h], gaps, level, "the groups' values")
        for k, r in enumerate(rows.tolist()):
            _set_between("difference", r, lo[k], hi[k], nd[k], nt[k], low, high, n_def, notes)
        positive = (e > 0).all(axis=1)
        for k in np.flatnonzero(~positive).tolist():
            lo_k, hi_k, nd_k, nt_k = _between_interval(e[k], values[members[k]], level, log=True)
            _set_between("ratio", int(rows[k]), lo_k, hi_k, nd_k, nt_k, low, high, n_def, notes)
        if positive.any():
            el = np.log(e[positive])
            mp = members[positive]
            lo, hi, nd, nt = _nonsmooth_many(
                el[:, g] - el[:, h],
                _gaps(logs, mp, g, h),
                level,
                "the groups' values",
            )
            for k, r in enumerate(rows[positive].tolist()):
                _set_between("ratio", r, lo[k], hi[k], nd[k], nt[k], low, high, n_def, notes)
    return n_boot


def _set_between(
    q: str,
    i: int,
    lo: float,
    hi: float,
    nd: int,
    note: str | None,
    low: dict[str, Any],
    high: dict[str, Any],
    n_def: Any,
    notes: dict[str, list[str | None]],
) -> None:
    """Store row ``i``'s between-groups interval of ``q`` (the ratio's from its log scale)."""
    if q == "ratio":
        lo, hi = (math.exp(-hi), math.exp(-lo)) if note is None else (math.nan, math.nan)
    low[q][i], high[q][i], notes[q][i] = lo, hi, note
    if q == "difference":
        n_def[i] = nd


@accepts_tables
def with_intervals(
    point: FrameT,
    replicates: pl.DataFrame | pl.LazyFrame,
    *,
    method: Method = "percentile",
    level: float = 0.95,
    n_resamples: int | None = None,
    counts: pl.DataFrame | pl.LazyFrame | None = None,
) -> FrameT:
    r"""``point`` with the bootstrap interval columns of ``docs/results.md``.

    ``point`` is a long result table computed on the observed data (group values, comparisons,
    criteria, between-groups); ``replicates`` the very same function applied to the replicate
    count table (:func:`resample_counts`; its ``replicate`` column is a partition of every
    function of the engine). Rows are matched on the typed key columns (nulls equal), the
    partitions, ``reference`` (when both tables have it) and ``metric``; replicates none of
    whose rows match (another table, other metrics, another reference) or that hold no
    resample are an error. With :math:`\hat x` the estimate, :math:`x^*_b` the replicate
    values where the statistic is defined, :math:`\alpha = 1 -` ``level`` and :math:`q_p` their
    :math:`p`-quantile (linear interpolation, numpy's default):

    - ``"percentile"``: :math:`[q_{\alpha/2},\ q_{1-\alpha/2}]`;
    - ``"basic"`` (reverse percentile, the bias-adjusted-metrics document's
      :math:`\hat x - \delta_{1-\alpha/2},\ \hat x - \delta_{\alpha/2}` with
      :math:`\delta = x^* - \hat x`): :math:`[2\hat x - q_{1-\alpha/2},\ 2\hat x - q_{\alpha/2}]`;
    - ``"bca"``: the percentile interval at levels
      :math:`\Phi(z_0 + (z_0 + z_p) / (1 - a (z_0 + z_p)))`, :math:`z_0` from the share of
      replicates below the estimate (ties count half), :math:`a` from the jackknife — one
      leave-one-out table per non-empty cell weighted by its count (exactly the row jackknife):
      draw with ``resample_counts(jackknife=True)`` and pass ``counts=``.

    Non-smooth statistics get ``ci_method = "max-t"`` whatever ``method``: between-groups
    ``difference`` (max − min) and ``ratio`` (min / max, on the log scale) from the simultaneous
    studentized band of every pairwise gap between the groups, equalized odds
    (:math:`\max(|\Delta FPR|, |\Delta FNR|)`) from the band of its two signed parts, each
    projected onto the statistic. These always contain the estimate and stay valid when groups
    tie. Between-groups rows need the group values: pass the replicate *count table* (or the
    replicates' group values, long or wide: ``metrics_from_counts(replicates, wide=True)``,
    which an audit computes anyway, spares computing them again) as ``replicates``, and the
    observed count table as ``counts=`` (or draw with ``include_observed=True``); equalized
    odds needs ``predictive_equality_difference`` and ``false_negative_rate_difference`` in the
    same table (``fairness_criteria``' default).

    An interval is null, with the reason in ``ci_note``, when the estimate is undefined, when the
    statistic is defined in fewer than :data:`MIN_DEFINED_SHARE` of the resamples, or when every
    resample gives the same value (a rate of 0 or 1 on few rows), except the named reference's own
    difference (0) and ratio (1), which are exact. On weighted data, given ``counts`` with the
    per-cell sums of squared weights (``confusion_counts(..., weight_squares=True)``), a
    percentile or BCa interval is also withheld when the Kish effective sample size
    :math:`(\sum w)^2 / \sum w^2` of the statistic's denominator rows (the smaller of the
    group's and its reference's) is below :data:`WEIGHTED_MIN_ESS` (the coverage study found
    them under-covering there; max-t intervals and equal weights are not concerned).

    Parameters
    ----------
    point
        A long result table of the observed data.
    replicates
        The same function of the replicate table (replicate 0 and leave-one-out replicates
        below 0, if present, are not resamples).
    method
        ``"percentile"`` (default), ``"basic"`` or ``"bca"``.
    level
        Confidence level in (0, 1).
    n_resamples
        Number of resamples :math:`B` (default: the distinct positive replicate ids); a row
        missing from a replicate is undefined there.
    counts
        The observed count table (between-groups group values; BCa weights; on weighted data,
        with ``weight_squares=True``, the effective sample size of each interval).

    Returns
    -------
    DataFrame or LazyFrame
        ``point`` with ``ci_low``, ``ci_high`` (for ``value``), ``difference_ci_low/high`` and
        ``ratio_ci_low/high`` (when ``difference``/``ratio`` exist), ``ci_method``, ``ci_level``,
        ``n_resamples``, ``n_defined`` (resamples where ``value``, or a between-groups
        ``difference``, is defined) and ``ci_note``. Lazy if ``point`` is lazy.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pfm.load_compas().with_columns(high=pl.col("decile_score") >= 5)
    >>> counts = pfm.confusion_counts(df, y_true="two_year_recid", y_pred="high", by="sex")
    >>> reps = resample_counts(counts, n_resamples=200)
    >>> out = with_intervals(pfm.between_groups(counts, metrics="accuracy"), reps, counts=counts)
    >>> row = out.row(0, named=True)
    >>> row["ci_method"], row["difference_ci_low"] <= row["difference"] <= row["difference_ci_high"]
    ('max-t', True)
    """
    _check_method(method)
    _check_level(level)
    if n_resamples is not None:
        _check_resamples(n_resamples)
    nb = None if n_resamples is None else int(n_resamples)
    lvl = float(level)

    def run(p: pl.DataFrame) -> pl.DataFrame:
        reps = _collect(as_polars(replicates))
        obs = _collect(as_polars(counts)) if counts is not None else None
        return _attach(p, reps, obs, method, lvl, nb)

    if isinstance(point, pl.DataFrame):
        return run(point)
    return point.map_batches(run, schema=_output_schema(schema_of(point)))


@accepts_tables
def intervals(
    replicates: FrameT,
    *,
    level: float = 0.95,
    method: Literal["percentile", "basic"] = "percentile",
) -> FrameT:
    r"""Bootstrap intervals of any long table of replicate values (a user statistic).

    ``replicates``: a ``replicate`` column (integers: 0 = the observed data, the estimate;
    1..B the resamples), a numeric ``value`` column (null or NaN where the statistic is
    undefined: null in the result) and key columns (every other column) naming the statistic,
    which has exactly one row at replicate 0. The intervals are those of
    :func:`with_intervals` (percentile or basic); an infinite estimate gets none.

    Returns
    -------
    DataFrame or LazyFrame
        The key columns, ``value`` (the estimate), ``ci_low``, ``ci_high``, ``ci_method``,
        ``ci_level``, ``n_resamples``, ``n_defined``, ``ci_note``.

    Examples
    --------
    >>> import polars as pl
    >>> reps = pl.DataFrame({"replicate": [0, 1, 2, 3, 4], "value": [0.5, 0.2, 0.4, 0.6, 0.8]})
    >>> intervals(reps, level=0.5).select("value", "ci_low", "ci_high", "n_defined").row(0)
    (0.5, 0.35, 0.65, 4)
    """
    _check_level(level)
    _check_method(method)
    if method == "bca":
        raise InvalidOptionError("intervals() has no jackknife for BCa: use with_intervals")
    schema = schema_of(replicates)
    require_columns(schema, "replicate", [REPLICATE])
    require_columns(schema, "value", ["value"])
    _check_statistic_schema(schema, "the replicates")
    keys = [c for c in schema.names() if c not in (REPLICATE, "value")]
    lvl = float(level)

    def run(table: pl.DataFrame) -> pl.DataFrame:
        return _user_intervals(table, lvl, method)

    if isinstance(replicates, pl.DataFrame):
        return run(replicates)
    out_schema = {**{k: schema[k] for k in keys}, "value": pl.Float64()}
    out_schema.update(
        {
            "ci_low": pl.Float64(),
            "ci_high": pl.Float64(),
            "ci_method": pl.String(),
            "ci_level": pl.Float64(),
            "n_resamples": pl.Int64(),
            "n_defined": pl.Int64(),
            "ci_note": pl.String(),
        }
    )
    return replicates.map_batches(run, schema=out_schema)


def _check_statistic_schema(schema: Mapping[str, pl.DataType], source: str) -> None:
    """A long table of a statistic's replicate values has integer ``replicate`` ids and a
    numeric ``value`` (Boolean and all-null columns are numbers too)."""
    rep, value = schema.get(REPLICATE), schema.get("value")
    if rep is not None and not (rep.is_integer() or rep == pl.Null):
        raise InvalidDtypeError(
            f"column 'replicate' of {source} has dtype {rep}: replicate ids are integers "
            "(0 = the observed data, 1..B the resamples)"
        )
    if value is not None and not (value.is_numeric() or value in (pl.Boolean, pl.Null)):
        raise InvalidDtypeError(
            f"column 'value' of {source} has dtype {value}: a statistic's value is a number"
        )


def _user_intervals(
    long: pl.DataFrame,
    level: float,
    method: str,
    jack_weights: Any = None,
) -> pl.DataFrame:
    """Intervals of a long replicate table of a user statistic (replicate 0 = estimate).

    Every statistic (row identity: its key columns) needs exactly one estimate row; a NaN
    value (the statistic undefined) is null, as everywhere in the package."""
    _check_statistic_schema(long.schema, "the replicates")
    keys = [c for c in long.columns if c not in (REPLICATE, "value")]
    nulls = long[REPLICATE].null_count()
    if nulls:
        raise InvalidOptionError(
            f"column 'replicate' has {nulls} null value(s): every value of the statistic needs "
            "its replicate id (0 = the observed data)"
        )
    long = long.with_columns(pl.col(REPLICATE).cast(pl.Int64), _as_value(pl.col("value")))
    named = "metric" in long.columns
    if not named:
        long = long.with_columns(pl.lit("value").alias("metric"))
    observed = long.filter(pl.col(REPLICATE) == 0).drop(REPLICATE)
    if observed.is_empty() and not long.is_empty():
        raise InvalidOptionError(
            "the replicates have no replicate 0 (the statistic on the observed data, the "
            "estimate): draw with resample_counts(..., include_observed=True)"
        )
    boot = long.filter(pl.col(REPLICATE) != 0)
    match = _match_columns(observed.columns)
    twice = observed.group_by(match).len().filter(pl.col("len") > 1).sort(match, nulls_last=True)
    if twice.height:
        first = twice.drop("len", *([] if named else ["metric"])).row(0, named=True)
        raise InvalidOptionError(
            f"column 'replicate' is 0 (the estimate) in {twice['len'][0]} rows{_at(first)}: "
            "one row per statistic is needed (its key columns tell them apart)"
        )
    orphans = (
        boot.filter(pl.col(REPLICATE) > 0)
        .select(match)
        .unique()
        .join(observed.select(match), on=match, how="anti", nulls_equal=True)
        .sort(match, nulls_last=True)
    )
    if orphans.height:
        first = orphans.drop(*([] if named else ["metric"])).row(0, named=True)
        raise InvalidOptionError(
            f"column 'replicate' has resamples but no 0 (the estimate){_at(first)} "
            f"({orphans.height} statistic(s) in all): every statistic needs its value on the "
            "observed data"
        )
    out = _attach(observed, boot, None, method, level, None, jack_weights)
    out = out if named else out.drop("metric")
    return out.sort(keys, nulls_last=True) if keys else out


def _at(keys: Mapping[str, Any]) -> str:
    """`` for k=v, …`` naming a statistic by its key values ('' without keys)."""
    return " for " + ", ".join(f"{k}={v!r}" for k, v in keys.items()) if keys else ""


def _as_value(value: pl.Expr) -> pl.Expr:
    """A statistic's values as Float64, NaN (undefined) as null."""
    return value.cast(pl.Float64).fill_nan(None)


def _stat_frame(frame: Any) -> pl.DataFrame:
    """The long frame a user statistic returned, checked: ``replicate`` and ``value``."""
    if not isinstance(frame, (pl.DataFrame, pl.LazyFrame)):
        raise InvalidOptionError(
            "the statistic must return a Polars DataFrame or LazyFrame, got "
            f"{type(frame).__qualname__}"
        )
    eager = _collect(frame)
    for c in (REPLICATE, "value"):
        if c not in eager.columns:
            raise InvalidOptionError(
                f"the statistic must return a long frame with a {c!r} column; got {eager.columns}"
            )
    _check_statistic_schema(eager.schema, "the statistic's result")
    return eager


@accepts_tables
def bootstrap_counts(
    counts: FrameT,
    statistic: Callable[[pl.DataFrame], pl.DataFrame | pl.LazyFrame],
    *,
    n_resamples: int = 1000,
    strata: ColumnNames | None = None,
    seed: int | None = DEFAULT_SEED,
    level: float = 0.95,
    method: Method = "percentile",
) -> FrameT:
    r"""Intervals of any statistic of a count table, by the count engine.

    ``statistic`` receives the replicate count table of :func:`resample_counts` (eager;
    replicate 0 is the observed table; with ``method="bca"`` the leave-one-out tables follow as
    replicates -1, -2, …) and returns a long frame: ``replicate``, key columns and a ``value``.
    The intervals are those of :func:`with_intervals` for smooth statistics (no between-groups
    rule: use :func:`with_intervals` on result tables for those).

    Returns
    -------
    DataFrame or LazyFrame
        The statistic's key columns, ``value`` (the estimate), ``ci_low``, ``ci_high``,
        ``ci_method``, ``ci_level``, ``n_resamples``, ``n_defined``, ``ci_note``.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "b"] * 50, "y": [1, 1, 0, 0] * 25, "p": [1, 0, 1, 1] * 25})
    >>> counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    >>> def ppv(t: pl.DataFrame) -> pl.DataFrame:
    ...     return pfm.metrics_from_counts(t, metrics="ppv").select("replicate", "g", "value")
    >>> out = bootstrap_counts(counts, ppv, n_resamples=200)
    >>> out.select("g", "value", "n_defined").rows()
    [('a', 0.5, 200), ('b', 0.0, 200)]
    """
    _check_resamples(n_resamples)
    _check_seed(seed)
    _check_level(level)
    _check_method(method)
    schema = schema_of(counts)
    layout = _table_layout(schema.names())
    _check_count_dtypes(schema)
    strata_cols = as_list(strata)
    require_columns(pl.Schema({k: schema[k] for k in layout.keys}), "strata", strata_cols)
    bca = method == "bca"
    n_b, lvl = int(n_resamples), float(level)

    def run(table: pl.DataFrame) -> pl.DataFrame:
        reps = _resample(table, layout, strata_cols, n_b, seed, True, bca)
        long = _stat_frame(statistic(reps))
        weights = _jackknife_weights(table) if bca else None
        return _user_intervals(long, lvl, method, weights)

    if isinstance(counts, pl.DataFrame):
        return run(counts)
    empty = pl.DataFrame(schema=schema)
    return counts.map_batches(run, schema=run(empty).schema)


# ---------------------------------------------------------------------------------------------
# Row engine: multiplicities joined to the rows
# ---------------------------------------------------------------------------------------------


def _progress(enabled: bool | None) -> Callable[[int, int], None]:
    show = sys.stderr.isatty() if enabled is None else enabled

    def report(done: int, total: int) -> None:
        if show and (done == total or done % max(1, total // 100) == 0):
            end = "\n" if done == total else ""
            print(
                f"\rbootstrap (rows): {done}/{total} replicates",
                end=end,
                file=sys.stderr,
                flush=True,
            )

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
        members = np.split(order, bounds) if ids.size else []
        n = ids.size
    else:
        n = int(data.lazy().select(pl.len()).collect().item())
        members = [np.arange(n)]
    eager = isinstance(data, pl.DataFrame)
    indexed = (
        None
        if eager
        else data.lazy().with_row_index(_IDX).with_columns(pl.col(_IDX).cast(pl.Int64))
    )

    def attach(m: np.ndarray[Any, Any]) -> pl.LazyFrame:
        if eager:
            frame = cast(pl.DataFrame, data)
            with_w = frame.with_columns(pl.Series(weight_name, m, dtype=pl.Float64))
            return with_w.filter(pl.col(weight_name) > 0).lazy()
        keep = np.flatnonzero(m)
        mult = pl.LazyFrame({_IDX: keep.astype(np.int64), weight_name: m[keep].astype(np.float64)})
        return cast(pl.LazyFrame, indexed).join(mult, on=_IDX, how="inner").drop(_IDX)

    yield 0, attach(np.ones(n, dtype=np.int64))
    for b in range(1, n_resamples + 1):
        if multiplicity == "poisson":
            m = rng.poisson(1.0, size=n)
        else:
            m = np.zeros(n, dtype=np.int64)
            for rows in members:
                if rows.size:
                    drawn = rng.integers(0, rows.size, size=rows.size)
                    m[rows] = np.bincount(drawn, minlength=rows.size)
        yield b, attach(m)


@accepts_tables
def bootstrap_rows(
    data: pl.DataFrame | pl.LazyFrame,
    statistic: Callable[[pl.LazyFrame], pl.DataFrame | pl.LazyFrame],
    *,
    n_resamples: int = 1000,
    strata: ColumnNames | None = None,
    seed: int | None = DEFAULT_SEED,
    level: float = 0.95,
    method: Literal["percentile", "basic"] = "percentile",
    multiplicity: Literal["multinomial", "poisson"] = "multinomial",
    weight_name: str = "bootstrap_weight",
    progress: bool | None = None,
) -> pl.DataFrame:
    r"""Intervals of any row-level statistic, by resampling rows (the general engine).

    Each replicate gives every row a multiplicity :math:`m_i` (how many times it was drawn) in
    the column ``weight_name`` (Float64; rows drawn 0 times are left out); ``statistic`` gets
    that LazyFrame and returns a long frame of key columns and a ``value`` column. Replicate 0
    (every :math:`m_i = 1`) gives the estimate. A count-based statistic uses the multiplicity as
    its weight (times the row weight, for weighted metrics).

    ``multiplicity="multinomial"`` resamples exactly :math:`n` rows (:math:`n_s` per stratum):
    the drawn indices are a small table joined to the rows (``with_row_index`` + inner join), so
    a LazyFrame source is scanned once per replicate and never held in memory.
    ``"poisson"``: :math:`m_i \sim \mathrm{Poisson}(1)` independently, an approximation of the
    multinomial bootstrap (the sample size varies) that needs no row count.

    This function runs the :math:`B + 1` queries when called and returns a DataFrame (the
    columns of :func:`intervals`). A progress line is written to stderr when it is a terminal.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "b"] * 50, "y": [1, 1, 0, 0] * 25, "p": [1, 0, 1, 1] * 25})
    >>> def ppv(rows: pl.LazyFrame) -> pl.LazyFrame:
    ...     counts = pfm.confusion_counts(rows, y_true="y", y_pred="p", by="g",
    ...                                   weight="bootstrap_weight")
    ...     return pfm.metrics_from_counts(counts, metrics="ppv").select("g", "value")
    >>> out = bootstrap_rows(df, ppv, n_resamples=20, strata="g")
    >>> out.select("g", "value", "n_defined").rows()
    [('a', 0.5, 20), ('b', 0.0, 20)]
    """
    _check_resamples(n_resamples)
    _check_seed(seed)
    _check_level(level)
    _check_method(method)
    if cast(str, method) == "bca":
        raise InvalidOptionError(
            "method='bca' needs the count engine (its jackknife is one table per cell); the "
            "row engine would need one pass per row: use 'percentile' or 'basic'"
        )
    strata_cols = as_list(strata)
    report = _progress(progress)
    parts = []
    for b, frame in _row_replicates(
        data,
        n_resamples=int(n_resamples),
        strata=strata_cols,
        seed=seed,
        multiplicity=multiplicity,
        weight_name=weight_name,
    ):
        result = statistic(frame)
        if isinstance(result, (pl.DataFrame, pl.LazyFrame)) and REPLICATE in schema_of(result):
            raise InvalidOptionError("the statistic must not return a 'replicate' column")
        if isinstance(result, (pl.DataFrame, pl.LazyFrame)):
            result = _collect(result).with_columns(pl.lit(b, dtype=pl.Int64).alias(REPLICATE))
        eager = _stat_frame(result)
        parts.append(eager.with_columns(_as_value(pl.col("value"))))
        if b:
            report(b, int(n_resamples))
    reps = pl.concat(parts, how="vertical")
    return _user_intervals(reps, float(level), method)


# ---------------------------------------------------------------------------------------------
# High level: one table of results with intervals, one scan
# ---------------------------------------------------------------------------------------------


def _check_shares(values: pl.Series, column: str, shares: Mapping[Any, float]) -> None:
    for v in values.unique().to_list():
        if v not in shares:
            raise InvalidOptionError(
                f"column {column!r} (reweight_by) has a value {v!r} with no population share; "
                f"shares given for {sorted(map(repr, shares))}"
            )
    for k, p in shares.items():
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) or p < 0:
            raise InvalidWeightError(
                f"population share {p!r} of {column!r} = {k!r} must be a finite number >= 0"
            )


def _collapse(
    rep: pl.DataFrame,
    keep: list[str],
    *,
    reweight_by: str | None,
    shares: Mapping[Any, float] | None,
) -> pl.DataFrame:
    r"""Sum fine replicate cells to the ``keep`` keys; with ``reweight_by`` the sample-dependent
    stratum weight :math:`w_s = p_s N^* / N^*_s` (times the row weight when weighted),
    recomputed in every replicate from that replicate's counts."""
    thr = ["threshold"] if "threshold" in rep.columns else []
    part = [REPLICATE, *thr]
    weighted = "tp_w" in rep.columns
    if reweight_by is not None:
        assert shares is not None
        _check_shares(rep[reweight_by], reweight_by, shares)
        share = pl.col(reweight_by).replace_strict(
            dict(shares), return_dtype=pl.Float64, default=None
        )
        n_s = pl.col("n").sum().over([*part, reweight_by])
        # a stratum absent from a replicate (N*_s = 0) has only empty cells: weight 0, not the
        # 0 · ∞ = NaN that would make the whole replicate's statistic undefined
        w_s = pl.when(n_s > 0).then(share * pl.col("n").sum().over(part) / n_s).otherwise(0.0)
        source = [f"{c}_w" for c in _BASE] if weighted else list(_BASE)
        # squared weights (the effective sample size of the rows' own weights): w_s^2 times
        # their squares. Stratum weights alone are not continuous weights: constant within a
        # stratum and recomputed in every replicate, the bootstrap follows them exactly
        squares = [f"{c}_w2" for c in _BASE]
        if weighted and all(c in rep.columns for c in squares):
            rep = rep.with_columns(
                [
                    (pl.col(s) * w_s * w_s).fill_null(0.0).alias(f"{c}_w2")
                    for s, c in zip(squares, _BASE, strict=True)
                ]
            )
        rep = rep.with_columns(
            [
                (pl.col(s) * w_s).fill_null(0.0).alias(f"{c}_w")
                for s, c in zip(source, _BASE, strict=True)
            ]
        )
        weighted = True
    sums = [*_BASE, "n", "n_null"]
    wsums = [f"{c}_w" for c in _BASE] if weighted else []
    if weighted and all(c in rep.columns for c in WEIGHT_SQUARE_COLUMNS):
        wsums += list(WEIGHT_SQUARE_COLUMNS)
    out = rep.group_by([REPLICATE, *keep, *thr]).agg(pl.col([*sums, *wsums]).sum())
    if weighted:
        out = out.with_columns(pl.sum_horizontal(wsums[:4]).alias("n_w"))
    cols = [*keep, *thr, REPLICATE, *sums, *wsums, *(["n_w"] if weighted else [])]
    return out.select(cols).sort([REPLICATE, *keep, *thr], nulls_last=True)


def _rows_replicate_table(
    data: pl.DataFrame | pl.LazyFrame,
    *,
    fine: list[str],
    strata: list[str],
    weight: str | None,
    separately: bool,
    count_opts: Mapping[str, Any],
    n_resamples: int,
    seed: int | None,
    progress: bool | None,
) -> pl.DataFrame:
    """Row engine of :func:`bootstrap_metrics`: a replicate count table (0 = observed) from one
    pass over the rows per replicate, the multiplicities as weights."""
    report = _progress(progress)
    tables = []
    for b, frame in _row_replicates(
        data,
        n_resamples=n_resamples,
        strata=strata,
        seed=seed,
        multiplicity="multinomial",
        weight_name=_W,
    ):
        if weight is not None:
            frame = frame.with_columns((pl.col(_W) * pl.col(weight)).alias("_pfm_ww"))
        m_counts = confusion_counts(frame, by=fine, weight=_W, separately=separately, **count_opts)
        t = m_counts.collect().with_columns(
            [pl.col(f"{c}_w").round(0).cast(pl.Int64).alias(c) for c in _BASE]
        )
        t = t.with_columns(pl.sum_horizontal(list(_BASE)).alias("n"))
        on = [c for c in t.columns if c not in count_columns(t.columns)]
        t = t.select(*on, *_BASE, "n", pl.lit(0, pl.Int64).alias("n_null"))
        if weight is not None:
            # the observed table (b = 0) also sums the squared weights: the effective sample
            # size of its intervals
            w_counts = confusion_counts(
                frame,
                by=fine,
                weight="_pfm_ww",
                separately=separately,
                weight_squares=b == 0,
                **count_opts,
            ).collect()
            squares = list(WEIGHT_SQUARE_COLUMNS) if b == 0 else []
            t = t.join(
                w_counts.select(*on, *[f"{c}_w" for c in _BASE], "n_w", *squares),
                on=on,
                how="left",
                nulls_equal=True,
            )
        tables.append(t.with_columns(pl.lit(b, dtype=pl.Int64).alias(REPLICATE)))
        if b:
            report(b, n_resamples)
    rep = pl.concat(tables, how="diagonal_relaxed")
    # a group absent from a replicate is there with zero counts (its metrics are null)
    grid_keys = [c for c in rep.columns if c not in count_columns(rep.columns) and c != REPLICATE]
    grid = (
        rep.filter(pl.col(REPLICATE) == 0)
        .select(grid_keys)
        .join(pl.DataFrame({REPLICATE: np.arange(n_resamples + 1, dtype=np.int64)}), how="cross")
    )
    full = grid.join(rep, on=[REPLICATE, *grid_keys], how="left", nulls_equal=True)
    counted = [c for c in rep.columns if c not in grid_keys and c != REPLICATE]
    return full.with_columns(pl.col(counted).fill_null(0))


def _statistic(
    what: str,
    keys: list[str],
    metrics: list[str],
    criteria: list[str],
    reference: Reference,
) -> Callable[[pl.DataFrame, bool], pl.DataFrame]:
    """The function of the disparity engine that ``what`` names, on a (replicate) count table
    (``wide``: its wide form, for the replicates)."""

    def stat(table: pl.DataFrame, wide: bool) -> pl.DataFrame:
        if what == "metrics":
            return metrics_from_counts(table, metrics=metrics, by=keys, wide=wide)
        if what == "criteria":
            return fairness_criteria(
                table, by=keys, criteria=criteria, reference=reference, wide=wide
            )
        if what == "between_groups":
            return between_groups(table, by=keys, metrics=metrics, wide=wide)
        return disparities(table, by=keys, metrics=metrics, reference=reference, wide=wide)

    return stat


def _criteria_with_parts(criteria: str | Sequence[str] | None) -> tuple[list[str], list[str]]:
    """The chosen criteria, and the same with the signed parts of every max-composed one."""
    chosen = [c.name for c in _criterion_names(criteria)]
    parts = _component_criteria()
    full = list(dict.fromkeys([p for c in chosen for p in [*parts.get(c, []), c]]))
    order = [c for c in CRITERIA if c in full]
    return chosen, order


@accepts_tables
def bootstrap_metrics(
    data: FrameT,
    *,
    y_true: str,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    by: ColumnNames,
    what: What = "disparities",
    metrics: str | Sequence[str] | None = None,
    criteria: str | Sequence[str] | None = None,
    reference: Reference = "overall",
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    separately: bool = False,
    n_resamples: int = 1000,
    seed: int | None = DEFAULT_SEED,
    method: Method = "percentile",
    level: float = 0.95,
    stratify: bool | ColumnNames | None = None,
    reweight_by: str | None = None,
    population_shares: Mapping[Any, float] | None = None,
    engine: Literal["counts", "rows"] = "counts",
    progress: bool | None = None,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
) -> FrameT:
    r"""One result table of ``docs/results.md`` with bootstrap intervals, in one scan.

    The table ``what`` names — ``"disparities"`` (default: each group's metric, its difference
    and ratio against ``reference``), ``"metrics"`` (group values), ``"criteria"`` (the named
    criteria) or ``"between_groups"`` — computed by the disparity engine on the observed count
    table and on every replicate count table, with the interval columns of
    :func:`with_intervals`. Several tables from one scan: count once, then
    :func:`resample_counts` and :func:`with_intervals` (``docs/uncertainty.md``).

    Engines: ``"counts"`` (default; exact multinomial draws on the cells, continuous weights
    through their per-cell sums of squares, memory independent of the rows) or ``"rows"``
    (:math:`B` passes over the rows, the multiplicity times the weight as the weight: the
    reference the count engine is tested against). The engine is never chosen by scanning.

    Parameters
    ----------
    data
        Rows of predictions.
    y_true, y_pred, y_score, threshold, weight, pos_label, neg_label, separately, score_bounds
        As for :func:`~polars_fairmetrics.confusion_counts`.
    by
        Group column(s).
    what
        Which table (see above).
    metrics, criteria, reference
        As for :func:`~polars_fairmetrics.disparities` /
        :func:`~polars_fairmetrics.fairness_criteria` (equalized odds also computes its two
        signed parts, which its interval needs, and drops them unless asked for).
    n_resamples, seed, method, level
        Number of replicates, seed (default 0: reproducible), interval method of smooth
        statistics (``"percentile"``, ``"basic"``, ``"bca"``: count engine), level.
    stratify
        ``None``/``False``: plain bootstrap; ``True``: within each ``by`` group (group sizes
        fixed); column name(s): within each value of those columns.
    reweight_by, population_shares
        Sample-dependent stratum weights recomputed in every replicate (the
        bias-adjusted-metrics document): a row of stratum :math:`s` weighs
        :math:`w_s = p_s \cdot N^* / N^*_s` with :math:`p_s` = ``population_shares[s]`` and
        :math:`N^*, N^*_s` the replicate's counted rows in total and in :math:`s`.
    engine
        ``"counts"`` or ``"rows"``.
    progress
        Progress line of the row engine (default: when stderr is a terminal).

    Returns
    -------
    DataFrame or LazyFrame
        The ``what`` table with the interval columns. Lazy in, lazy out (count engine); the row
        engine runs its :math:`B` queries when called.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pfm.scan_compas().with_columns(high=pl.col("decile_score") >= 5).collect()
    >>> out = bootstrap_metrics(df, y_true="two_year_recid", y_pred="high", by="race",
    ...                         metrics="fpr", reference="Caucasian", n_resamples=200)
    >>> row = out.filter(pl.col("race") == "African-American").row(0, named=True)
    >>> row["difference_ci_low"] < row["difference"] < row["difference_ci_high"]
    True
    >>> row["ci_method"], row["n_defined"]
    ('percentile', 200)
    """
    _check_resamples(n_resamples)
    _check_seed(seed)
    _check_level(level)
    _check_method(method)
    if what not in ("disparities", "metrics", "criteria", "between_groups"):
        raise InvalidOptionError(
            f"what must be 'disparities', 'metrics', 'criteria' or 'between_groups', got {what!r}"
        )
    if engine not in ("counts", "rows"):
        raise InvalidOptionError(f"engine must be 'counts' or 'rows', got {engine!r}")
    if method == "bca" and engine == "rows":
        raise InvalidOptionError(
            "method='bca' needs the count engine (its jackknife is one table per cell); the "
            "row engine would need one pass per row: use 'percentile' or 'basic'"
        )
    keys: list[str] = as_list(by)
    if not keys:
        raise InvalidOptionError("by= names no group column")
    names = _metric_names(metrics)
    chosen, with_parts = _criteria_with_parts(criteria) if what == "criteria" else ([], [])
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
    fine = list(dict.fromkeys([*keys, *strata, *([reweight_by] if reweight_by else [])]))
    if separately and fine != keys:
        raise InvalidOptionError(
            "separately=True resamples each attribute's own cells: stratify only by the by= "
            "columns (stratify=True) and do not combine it with reweight_by="
        )
    if weight is not None:
        require_columns(schema, "weight", [weight])
        if weight in fine:
            raise InvalidOptionError(f"weight column {weight!r} is also a group/stratum column")
    count_opts: dict[str, Any] = {
        "y_true": y_true,
        "y_pred": y_pred,
        "y_score": y_score,
        "threshold": threshold,
        "pos_label": pos_label,
        "neg_label": neg_label,
        "score_bounds": score_bounds,
    }
    stat = _statistic(what, keys, names, with_parts, reference)
    n_b, lvl = int(n_resamples), float(level)

    def evaluate(
        rep: pl.DataFrame, jack_weights: Any, squares: pl.DataFrame | None
    ) -> pl.DataFrame:
        """``squares``: the observed count table with its per-cell sums of squared weights
        (the effective sample size of weighted intervals), or None (they are in ``rep``)."""
        if squares is not None:
            # replicate 0 with the squares (the draws carry only the sums)
            observed_sq = squares.with_columns(pl.lit(0, pl.Int64).alias(REPLICATE))
            rep = pl.concat(
                [
                    observed_sq.select(rep.columns + list(WEIGHT_SQUARE_COLUMNS)),
                    rep.filter(pl.col(REPLICATE) != 0),
                ],
                how="diagonal_relaxed",
            )
        if fine != keys or reweight_by is not None:
            rep = _collapse(rep, keys, reweight_by=reweight_by, shares=population_shares)
        observed = rep.filter(pl.col(REPLICATE) == 0).drop(REPLICATE)
        boot = rep.filter(pl.col(REPLICATE) != 0).drop(WEIGHT_SQUARE_COLUMNS, strict=False)
        point = stat(observed.drop(WEIGHT_SQUARE_COLUMNS, strict=False), False)
        if what == "between_groups":
            out = _attach(point, boot, observed, method, lvl, n_b, jack_weights)
        else:
            out = _attach(point, stat(boot, True), observed, method, lvl, n_b, jack_weights)
        if what == "criteria" and chosen != with_parts:
            out = out.filter(pl.col("metric").is_in(chosen))
        return out

    if engine == "rows":
        rep = _rows_replicate_table(
            data,
            fine=fine,
            strata=strata,
            weight=weight,
            separately=separately,
            count_opts=count_opts,
            n_resamples=n_b,
            seed=seed,
            progress=progress,
        )
        out = evaluate(rep, None, None)
        return out if isinstance(data, pl.DataFrame) else out.lazy()

    counted = confusion_counts(
        data,
        by=fine,
        weight=weight,
        weight_squares=weight is not None,
        separately=separately,
        **count_opts,
    )
    layout = _table_layout(schema_of(counted).names())
    bca = method == "bca"

    def run(table: pl.DataFrame) -> pl.DataFrame:
        rep = _resample(table, layout, strata, n_b, seed, True, bca)
        squares = table if all(c in table.columns for c in WEIGHT_SQUARE_COLUMNS) else None
        return evaluate(rep, _jackknife_weights(table) if bca else None, squares)

    if isinstance(counted, pl.DataFrame):
        return run(counted)
    empty = pl.DataFrame(schema=schema_of(counted))
    return counted.map_batches(run, schema=run(empty).schema)


# ---------------------------------------------------------------------------------------------
# Group means of per-row values (ensemble metrics): the rows resampled in memory
# ---------------------------------------------------------------------------------------------

MAX_MEAN_DRAWS = 2_000_000_000
"""Most row draws (resamples × rows) :func:`replicate_group_means` makes; above it a clear error
(the draws cost time in proportion)."""


def replicate_group_means(
    rows: pl.DataFrame | pl.LazyFrame,
    *,
    by: Sequence[str],
    values: Sequence[str],
    weight: str | None = None,
    n_resamples: int = 1000,
    seed: int | None = DEFAULT_SEED,
    attribute: str | None = None,
) -> pl.DataFrame:
    r"""Bootstrap replicates of per-group (weighted) means of per-row values.

    Per-row statistics (the ensemble metrics of each row) cannot be compressed into a few count
    cells, so their group means are resampled at the row level, in memory: replicate :math:`b`
    draws the multiplicities :math:`c \sim \mathrm{Multinomial}(n_g, 1/n_g)` of the group's
    :math:`n_g` rows (the group sizes fixed: stratified by group) and gives

    .. math:: \bar x^*_{gj} = \frac{\sum_i c_i w_i x_{ij} [x_{ij}\ \text{defined}]}
                                   {\sum_i c_i w_i [x_{ij}\ \text{defined}]}

    (null where no drawn row has the value), evaluated for all values at once as two matrix
    products per block of resamples. Replicate 0 is the observed data.

    Parameters
    ----------
    rows
        One row per sample with the group columns, the value columns and the weight (a
        LazyFrame is collected: the rows are resampled in memory).
    by, values, weight
        Group columns, value columns (numbers; null or NaN where a row has no value), optional
        weight column (finite, non-negative; a row with a null weight counts nowhere).
    n_resamples, seed
        Number of resamples and the random seed (default 0: reproducible); with ``attribute``
        the stream is the one :func:`resample_counts` gives that attribute.

    Returns
    -------
    DataFrame
        ``by`` columns, ``replicate``, ``metric`` (the value's name), ``value``: the long
        replicate table :func:`with_intervals` takes.

    Examples
    --------
    >>> import polars as pl
    >>> rows = pl.DataFrame({"g": ["a"] * 4 + ["b"] * 2, "x": [0.0, 1.0, 1.0, 1.0, 0.5, None]})
    >>> reps = replicate_group_means(rows, by=["g"], values=["x"], n_resamples=50)
    >>> reps.filter(pl.col("replicate") == 0).select("g", "value").rows()
    [('a', 0.75), ('b', 0.5)]
    """
    _check_resamples(n_resamples)
    _check_seed(seed)
    rows = _mean_rows(rows, list(by), list(values), weight)
    n_b = int(n_resamples)
    draws = n_b * rows.height
    if draws > MAX_MEAN_DRAWS:
        raise InvalidOptionError(
            f"{n_b} resamples of {rows.height:,} rows would draw {draws:,} rows (at most "
            f"{MAX_MEAN_DRAWS:,}); use fewer resamples"
        )
    keys = list(by)
    rng = _generator(seed, attribute)
    frames: list[pl.DataFrame] = []
    grouped = rows.partition_by(keys, as_dict=True, maintain_order=True) if keys else {(): rows}
    for key, part in sorted(grouped.items(), key=lambda kv: _sort_key(kv[0])):
        x = part.select([pl.col(v).cast(pl.Float64) for v in values]).to_numpy()
        defined = ~np.isnan(x)
        w = part[weight].cast(pl.Float64).to_numpy() if weight is not None else np.ones(part.height)
        wx = np.where(defined, x, 0.0) * w[:, None]
        wd = defined * w[:, None]
        n_g = part.height
        means = np.empty((n_b + 1, len(values)))
        with np.errstate(invalid="ignore", divide="ignore"):
            means[0] = wx.sum(axis=0) / wd.sum(axis=0)
            block = max(1, min(n_b, 20_000_000 // max(n_g, 1)))
            uniform = np.full(n_g, 1.0 / n_g)
            for start in range(0, n_b, block):
                size = min(block, n_b - start)
                c = rng.multinomial(n_g, uniform, size=size).astype(np.float64)
                means[1 + start : 1 + start + size] = (c @ wx) / (c @ wd)
        ids = np.arange(n_b + 1, dtype=np.int64)
        long = pl.DataFrame(
            {
                REPLICATE: np.tile(ids, len(values)),
                "metric": np.repeat(np.array(list(values), dtype=object), n_b + 1),
                "value": means.T.reshape(-1),
            },
            schema={REPLICATE: pl.Int64, "metric": pl.String, "value": pl.Float64},
        ).with_columns(pl.col("value").fill_nan(None))
        key_values = dict(zip(keys, key, strict=True))
        frames.append(
            long.with_columns(
                [pl.lit(key_values[k], dtype=rows.schema[k]).alias(k) for k in keys]
            ).select(*keys, REPLICATE, "metric", "value")
        )
    if not frames:
        schema = {**{k: rows.schema[k] for k in keys}, REPLICATE: pl.Int64()}
        return pl.DataFrame(schema={**schema, "metric": pl.String(), "value": pl.Float64()})
    return pl.concat(frames)


def _mean_rows(
    rows: pl.DataFrame | pl.LazyFrame, by: list[str], values: list[str], weight: str | None
) -> pl.DataFrame:
    """The rows of :func:`replicate_group_means`, checked: the columns exist, values are
    numbers, weights finite and non-negative (rows with a null weight left out)."""
    schema = schema_of(rows)
    require_columns(schema, "by", by)
    require_columns(schema, "values", values)
    for v in values:
        if not (schema[v].is_numeric() or schema[v] in (pl.Boolean, pl.Null)):
            raise InvalidDtypeError(
                f"column {v!r} (values) has dtype {schema[v]}: its group means need numbers"
            )
    eager = _collect(rows)
    if weight is None:
        return eager
    require_columns(schema, "weight", [weight])
    if not schema[weight].is_numeric():
        raise InvalidDtypeError(
            f"column {weight!r} (weight) has dtype {schema[weight]}: weights are numbers"
        )
    w = pl.col(weight).cast(pl.Float64)
    low, high, total = eager.select(
        w.min().alias("min"), w.max().alias("max"), w.sum().alias("sum")
    ).row(0)
    check_weight_summary(weight, low, high, total)
    return eager.filter(pl.col(weight).is_not_null())


def _sort_key(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """Group order of the draws: nulls last, then by value (a stable, documented order)."""
    return tuple((v is None, v if v is not None else 0) for v in key)
