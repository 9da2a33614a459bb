r"""Exact distributions of six fairness measures by class ratio and group ratio.

This module answers the question of the class-imbalance paper (Brzezinski et al., "Properties of
fairness measures in the context of varying class imbalance and protected group ratios"): if
every confusion-matrix pair of a data set of size :math:`n` is equally likely, how are the six
difference-based fairness measures distributed for a given imbalance ratio (IR) and group ratio
(GR)? The paper enumerates all :math:`\binom{n+7}{7}` 8-tuples
(553,270,671 at :math:`n = 56`); this module gets the same numbers exactly without enumerating
them.

Conventions (those of the paper's published code)
-------------------------------------------------
- A matrix is ``(tp, fp, tn, fn)`` of the protected group and of the unprotected group: every
  8-tuple of non-negative integers summing to :math:`n`, each counted once.
- :math:`IR = k / n` with :math:`k` the number of actual positives (``tp + fn`` over both groups);
  :math:`GR = m / n` with :math:`m` the size of the protected group. A *cell* is one ``(k, m)``.
- Each measure is ``rate(protected) - rate(unprotected)``:

  ============================  ==========================================
  metric                        rate of a group
  ============================  ==========================================
  accuracy_equality             :math:`(tp + tn) / (tp + fp + tn + fn)`
  statistical_parity            :math:`(tp + fp) / (tp + fp + tn + fn)`
  equal_opportunity             :math:`tp / (tp + fn)`  (TPR)
  predictive_equality           :math:`fp / (fp + tn)`  (FPR)
  positive_predictive_parity    :math:`tp / (tp + fp)`  (PPV)
  negative_predictive_parity    :math:`tn / (tn + fn)`  (NPV)
  ============================  ==========================================

- A value is *undefined* (null here, never NaN) when the rate of either group is 0/0; it is
  *perfect fairness* when it is exactly 0. Probabilities are over all matrices of the cell,
  undefined ones included; the probability of perfect fairness is itself null where no matrix
  of the cell (or of the marginal) has a defined value.
- Every table names the measure in its ``metric`` column (docs/results.md) and is sorted by
  metric (in the order of :data:`MEASURES`), then positives, protected and value.

How it is computed
------------------
A matrix is a pair of per-group 4-tuples. A group of size :math:`s` with :math:`p` actual
positives has :math:`T(s, p) = (p + 1)(s - p + 1)` 4-tuples. For each size :math:`s` the engine
builds the dense block :math:`c_s[p, v]` = number of 4-tuples of ``(s, p)`` whose rate is the
value :math:`v`, with closed forms (no enumeration): for instance, the positive predictive value
is :math:`a/b` (reduced) for :math:`tp = a t`, :math:`fp = (b - a) t`, :math:`t \ge 1`, so
:math:`c_s[p, a/b] = \min(\lfloor p / a \rfloor, \lfloor (s - p) / (b - a) \rfloor)`. The values are
the Farey fractions of order :math:`n` (every reduced :math:`a/b`, :math:`b \le n`), each with a
fixed integer position. A cell ``(k, m)`` pairs the protected ``(m, j)`` with the unprotected
``(n - m, k - j)`` for every ``j``, so

.. math::

    \text{perfect}(k, m) = \sum_j \sum_v c_m[j, v]\, c_{n-m}[k - j, v]
                         = \sum_{j + i = k} (c_m c_{n-m}^\top)[j, i]

(one matrix product per ``m``, summed along anti-diagonals), the matrices and the matrices with
both rates defined are convolutions of :math:`T` and of the defined counts over ``j``, and the
full PMF of a cell is :math:`M = c_m[J]^\top c_{n-m}[k - J]` grouped by the exact difference
:math:`(a d - c b) / (b d)` of each value pair. A difference is keyed by the integer
:math:`\lfloor (a d - c b) L / (b d) \rfloor` with :math:`L = D^2`, :math:`D = \lfloor n/2
\rfloor \lceil n/2 \rceil` the largest denominator: two distinct differences are at least
:math:`1/D^2` apart, so the key is exact, shared by every cell and sorts like the value. Counts
are exact integers (products in Float64 only while every sum is below :math:`2^{53}`, Int64
beyond); Float64 appears only in reported probabilities. :func:`estimate_properties_cost`
predicts time and memory from the same sizes, and every computing function checks it first.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_fairmetrics.exceptions import InvalidOptionError

__all__ = [
    "MEASURES",
    "MEASURE_ABBREVIATIONS",
    "PROPERTIES",
    "PropertiesAnalysis",
    "PropertiesCost",
    "analyze_measure_properties",
    "cell_pmf",
    "cell_summary",
    "cells_from_ratios",
    "estimate_properties_cost",
    "group_rate_table",
    "marginal_summary",
    "measure_properties",
    "paper_ratio_counts",
    "properties_table",
    "resolution",
]

MEASURES: tuple[str, ...] = (
    "accuracy_equality",
    "statistical_parity",
    "equal_opportunity",
    "predictive_equality",
    "positive_predictive_parity",
    "negative_predictive_parity",
)
"""The six measures of the paper, in its order (Eq. 7–12)."""

MEASURE_ABBREVIATIONS: dict[str, str] = {
    "accuracy_equality": "AE",
    "statistical_parity": "SP",
    "equal_opportunity": "EO",
    "predictive_equality": "PE",
    "positive_predictive_parity": "PPP",
    "negative_predictive_parity": "NPP",
}
"""Short names used in plots and tables."""

PROPERTIES: tuple[str, ...] = (
    "Immunity to IR changes",
    "Immunity to GR changes",
    "Resolution Stability",
    "Fairness Symmetry",
    "IR Symmetry",
    "GR Symmetry",
    "Perfect Fairness Stability",
    "Undefined Values",
)
"""The eight properties of the paper's Section 5, in the order of its Table 1."""

_INT = pl.Int64
_MAX_INT64 = 2**63 - 1
_MAX_EXACT_FLOAT = 2**53
_ORDER = {m: i for i, m in enumerate(MEASURES)}

DEFAULT_MAX_SECONDS = 120.0
"""Default time budget (seconds, estimated) of every computing function of this module."""

DEFAULT_MEMORY_SHARE = 0.8
"""Default memory budget: this share of the memory available when the function is called."""

IntArray = npt.NDArray[np.int64]
NumArray = npt.NDArray[np.int64] | npt.NDArray[np.float64]


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def _as_int(x: object) -> int | None:
    """``x`` as an int when it is a Python or numpy integer (not a bool), else None."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        return None
    return int(x)


def _is_int(x: object) -> bool:
    return _as_int(x) is not None


def _check_n(value: object) -> int:
    n = _as_int(value)
    if n is None:
        raise InvalidOptionError(f"n must be an integer, got {value!r}")
    if n < 1:
        raise InvalidOptionError(f"n must be at least 1, got {n}")
    if math.comb(n + 7, 7) > _MAX_INT64:
        raise InvalidOptionError(
            f"n = {n} gives C(n + 7, 7) = {math.comb(n + 7, 7)} matrices, which overflows Int64"
        )
    # every other exact integer of the engine is smaller: value keys are at most D**3 with
    # D = n**2 / 4 (below 2**63 up to n = 2896, beyond the Int64 limit on C(n + 7, 7) above)
    return n


def _check_measures(measures: str | Sequence[str] | None) -> list[str]:
    if measures is None:
        return list(MEASURES)
    out = [measures] if isinstance(measures, str) else list(measures)
    if not out:
        raise InvalidOptionError(f"measures is empty; choose one or more of {list(MEASURES)}")
    for m in out:
        if not isinstance(m, str) or m not in MEASURES:
            raise InvalidOptionError(f"unknown measure {m!r}; choose from {list(MEASURES)}")
    if len(set(out)) != len(out):
        raise InvalidOptionError(f"measures listed twice: {out}")
    return out


def _check_counts(n: int, counts: Sequence[int] | None) -> tuple[int, ...]:
    if counts is None:
        return tuple(paper_ratio_counts(n))
    if isinstance(counts, (str, bytes)) or not isinstance(counts, Iterable):
        raise InvalidOptionError(f"counts must be a list of integers in [0, {n}], got {counts!r}")
    raw = list(counts)
    if not raw:
        raise InvalidOptionError(
            f"counts is empty: the grid needs at least one count in [0, {n}] "
            f"(default: paper_ratio_counts({n}) = {paper_ratio_counts(n)})"
        )
    for c in raw:
        if not _is_int(c):
            raise InvalidOptionError(f"grid count {c!r} is not an integer (counts are k in k/n)")
        if not 0 <= int(c) <= n:
            raise InvalidOptionError(f"grid count {c} is outside [0, {n}]")
    return tuple(sorted({int(c) for c in raw}))


def _check_cells(n: int, cells: Sequence[tuple[int, int]] | None) -> list[tuple[int, int]]:
    if cells is None:
        grid = paper_ratio_counts(n)
        return [(k, m) for k in grid for m in grid]
    if isinstance(cells, (str, bytes)) or not isinstance(cells, Iterable):
        raise InvalidOptionError(f"cells must be a list of (positives, protected), got {cells!r}")
    out: list[tuple[int, int]] = []
    for cell in cells:
        if (
            not isinstance(cell, (tuple, list))
            or len(cell) != 2
            or not all(_is_int(x) for x in cell)
        ):
            raise InvalidOptionError(
                f"cell {cell!r} is not a pair of integers (positives, protected)"
            )
        k, m = int(cell[0]), int(cell[1])
        if not (0 <= k <= n and 0 <= m <= n):
            raise InvalidOptionError(f"cell (positives={k}, protected={m}) is outside [0, {n}]²")
        out.append((k, m))
    if not out:
        raise InvalidOptionError("cells is empty: give at least one (positives, protected) pair")
    return sorted(set(out))


def _check_threshold(name: str, value: object, low: float, high: float | None) -> float:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    x = float(value) if ok else math.nan  # type: ignore[arg-type]
    if not (ok and math.isfinite(x) and x >= low and (high is None or x <= high)):
        bound = f"[{low}, {high}]" if high is not None else f"≥ {low}"
        raise InvalidOptionError(f"{name} must be a finite number {bound}, got {value!r}")
    return x


def _reduce(num: IntArray, den: IntArray) -> tuple[IntArray, IntArray]:
    """Reduce ``num / den`` (den > 0) to lowest terms, elementwise and exactly."""
    g = np.gcd(num, den)
    g[g == 0] = 1
    return num // g, den // g


# --------------------------------------------------------------------------------------------
# the per-size blocks: 4-tuples of a group by exact rate value
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Farey:
    """The Farey fractions of order n (reduced a/b, 0 <= a <= b <= n) sorted by value."""

    num: IntArray
    den: IntArray
    pos: IntArray  # (n + 1, n + 1): pos[b, a] = position of a/b (reduced), -1 elsewhere


def _farey(n: int) -> _Farey:
    reps = np.arange(2, n + 2, dtype=np.int64)  # a = 0..b for b = 1..n
    b = np.repeat(np.arange(1, n + 1, dtype=np.int64), reps)
    a = np.arange(b.size, dtype=np.int64) - np.repeat(np.cumsum(reps) - reps, reps)
    keep = np.gcd(a, b) == 1
    a, b = a[keep], b[keep]
    # distinct fractions with denominators <= n are >= 1/n**2 apart: floor(a n**2 / b) is exact
    order = np.argsort(a * (n * n) // b, kind="stable")
    a, b = a[order], b[order]
    pos = np.full((n + 1, n + 1), -1, dtype=np.int64)
    pos[b, a] = np.arange(a.size, dtype=np.int64)
    return _Farey(a, b, pos)


def _farey_sizes(n: int) -> IntArray:
    """``|F_s|`` for s = 0..n: 1 + the sum of Euler's totient up to s (0 for s = 0)."""
    phi = np.arange(n + 1, dtype=np.int64)
    for i in range(2, n + 1):
        if phi[i] == i:  # a prime: every multiple loses the share 1/i
            phi[i::i] -= phi[i::i] // i
    phi[0] = 0
    out = 1 + np.cumsum(phi)
    out[0] = 0
    return out


@dataclass(frozen=True)
class _Block:
    """4-tuples of a group of size s, per positives p (rows) and defined rate value (columns)."""

    cols: IntArray  # Farey positions of the values, ascending (= ascending value)
    counts: NumArray  # (s + 1, len(cols))
    undefined: IntArray  # (s + 1,): 4-tuples whose rate is 0/0


def _tuples(s: int) -> IntArray:
    """T(s, p) = (p + 1)(s - p + 1): the 4-tuples of a group of size s with p positives."""
    p = np.arange(s + 1, dtype=np.int64)
    return (p + 1) * (s - p + 1)


def _steps(b: IntArray, s: int) -> tuple[IntArray, IntArray]:
    """For each value (denominator ``b``), the multiples t = 1..s // b: (value index, t)."""
    tmax = s // b
    idx = np.repeat(np.arange(b.size, dtype=np.int64), tmax)
    t = np.arange(idx.size, dtype=np.int64) - np.repeat(np.cumsum(tmax) - tmax, tmax) + 1
    return idx, t


def _block(mi: int, s: int, farey: _Farey, dtype: type) -> _Block:
    """The block of measure ``MEASURES[mi]`` for group size ``s`` (closed forms, exact)."""
    p = np.arange(s + 1, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    if mi in (0, 1):
        # accuracy (tp + tn) / s and selection rate (tp + fp) / s: x is the sum of a number in
        # 0..p and one in 0..s - p, which happens min(p, x) - max(0, x - (s - p)) + 1 ways
        if s == 0:
            return _Block(empty, np.zeros((1, 0), dtype=dtype), np.ones(1, dtype=np.int64))
        x = np.arange(s + 1, dtype=np.int64)
        g = np.gcd(x, s)
        cols = farey.pos[s // g, x // g]
        pc = p[:, None]
        counts = np.minimum(pc, x) - np.maximum(0, x - (s - pc)) + 1
        return _Block(cols, counts.clip(0).astype(dtype), np.zeros(s + 1, dtype=np.int64))
    cols = np.flatnonzero(farey.den <= s).astype(np.int64)
    a = farey.num[cols]
    b = farey.den[cols]
    counts = np.zeros((s + 2, cols.size), dtype=dtype)
    idx, t = _steps(b, s)
    if mi == 2:  # TPR tp / p = a/b for p = b t (p >= 1), any fp: q + 1 = s - p + 1 tuples
        rows = b[idx] * t
        counts[rows, idx] = s - rows + 1
        undefined = np.where(p == 0, s + 1, 0)
    elif mi == 3:  # FPR fp / q = a/b for q = b t (q >= 1), any tp: p + 1 tuples
        rows = s - b[idx] * t
        counts[rows, idx] = rows + 1
        undefined = np.where(p == s, s + 1, 0)
    else:
        # PPV tp / (tp + fp) = a/b for tp = a t <= p, fp = (b - a) t <= s - p (t >= 1): row p
        # gets one tuple per t with a t <= p <= s - (b - a) t (a running sum of +1/-1 marks);
        # NPV tn / (tn + fn) is the same with tn = a t <= s - p, fn = (b - a) t <= p
        lo, hi = (a[idx] * t, s - (b[idx] - a[idx]) * t)
        if mi == 5:
            lo, hi = (b[idx] - a[idx]) * t, s - a[idx] * t
        width = cols.size
        size = (s + 2) * width
        marks = np.bincount(lo * width + idx, minlength=size) - np.bincount(
            (hi + 1) * width + idx, minlength=size
        )
        counts = np.cumsum(marks.reshape(s + 2, width), axis=0).astype(dtype)
        undefined = np.ones(s + 1, dtype=np.int64)
    return _Block(cols, counts[: s + 1], undefined.astype(np.int64))


# --------------------------------------------------------------------------------------------
# the engine: cell counts for every cell, PMFs of chosen cells
# --------------------------------------------------------------------------------------------


def _dtype(n: int) -> type:
    """Float64 products (BLAS) are exact while every count is below 2**53; Int64 beyond."""
    return np.float64 if math.comb(n + 7, 7) < _MAX_EXACT_FLOAT else np.int64


def _sum_at(index: IntArray, weights: NumArray, size: int) -> IntArray:
    """Exact sums of ``weights`` grouped by ``index`` (0..size - 1), as Int64."""
    if weights.dtype == np.float64:
        return np.rint(np.bincount(index, weights=weights, minlength=size)).astype(np.int64)
    out = np.zeros(size, dtype=np.int64)
    np.add.at(out, index, weights)
    return out


def _blas_one_thread() -> contextlib.AbstractContextManager[object]:
    """Run the matrix products on one BLAS thread (threadpoolctl, when installed).

    The products are small (inner or outer dimension at most n + 1): a second thread saves
    little, and on a busy machine OpenBLAS threads waiting for a core cost several times the
    work itself.
    """
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - optional
        return contextlib.nullcontext()
    limits: contextlib.AbstractContextManager[object] = threadpool_limits(limits=1, user_api="blas")
    return limits


def _mis(chosen: Sequence[str]) -> list[int]:
    """Measure indices in the order of :data:`MEASURES` (every table follows that order)."""
    return sorted(_ORDER[m] for m in chosen)


def _summary_arrays(n: int, mis: Sequence[int]) -> dict[int, tuple[IntArray, IntArray, IntArray]]:
    """Per measure index: matrices, undefined and perfect of every cell (see _summary_counts)."""
    with _blas_one_thread():
        return _summary_counts(n, mis)


def _summary_counts(n: int, mis: Sequence[int]) -> dict[int, tuple[IntArray, IntArray, IntArray]]:
    """Per measure index: matrices, undefined and perfect as (n + 1, n + 1) arrays ``[k, m]``.

    Each pair of sizes (m, n - m) is visited once: the three counts of cell (k, m) equal those
    of (k, n - m) (swapping the groups swaps the two factors of every product).
    """
    farey = _farey(n)
    dtype = _dtype(n)
    matrices = np.zeros((n + 1, n + 1), dtype=np.int64)
    for m in range(n // 2 + 1):
        matrices[:, m] = matrices[:, n - m] = np.convolve(_tuples(m), _tuples(n - m))
    out: dict[int, tuple[IntArray, IntArray, IntArray]] = {}
    for mi in mis:
        undefined = np.zeros_like(matrices)
        perfect = np.zeros_like(matrices)
        for m in range(n // 2 + 1):
            u = n - m
            bm = _block(mi, m, farey, dtype)
            bu = bm if u == m else _block(mi, u, farey, dtype)
            both = np.convolve(_tuples(m) - bm.undefined, _tuples(u) - bu.undefined)
            undefined[:, m] = undefined[:, u] = matrices[:, m] - both
            _, im, iu = np.intersect1d(bm.cols, bu.cols, assume_unique=True, return_indices=True)
            if im.size:
                prod = bm.counts[:, im] @ bu.counts[:, iu].T  # [j, i]: equal rates, summed
                diag = (np.arange(m + 1)[:, None] + np.arange(u + 1)[None, :]).ravel()
                perfect[:, m] = perfect[:, u] = _sum_at(diag, prod.ravel(), n + 1)
        out[mi] = (matrices, undefined, perfect)
    return out


@dataclass(frozen=True)
class _CellPmf:
    """The exact PMF of one measure in one cell (defined values ascending, plus undefined)."""

    mi: int
    k: int
    m: int
    num: IntArray
    den: IntArray
    count: IntArray
    undefined: int
    total: int


def _difference_keys(
    farey: _Farey, xcols: IntArray, ycols: IntArray, scale: int
) -> tuple[IntArray, IntArray, IntArray]:
    """Group the differences x - y of every value pair: (group of each pair, reduced num, den)."""
    a = farey.num[xcols][:, None]
    b = farey.den[xcols][:, None]
    c = farey.num[ycols][None, :]
    d = farey.den[ycols][None, :]
    num = (a * d - c * b).ravel()
    den = (b * d).ravel()
    # distinct differences are >= 1/scale apart: the floor key is exact and sorts like the value
    key = num * scale // den
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    rnum, rden = _reduce(num[first], den[first])
    return inverse.ravel().astype(np.int64), rnum, rden


def _pmf_cells(n: int, mis: Sequence[int], cells: Sequence[tuple[int, int]]) -> list[_CellPmf]:
    """Exact PMFs of the given cells for each measure index, sorted by (measure, k, m)."""
    with _blas_one_thread():
        return _pmf_compute(n, mis, cells)


def _pmf_compute(n: int, mis: Sequence[int], cells: Sequence[tuple[int, int]]) -> list[_CellPmf]:
    farey = _farey(n)
    dtype = _dtype(n)
    dmax = max((n // 2) * ((n + 1) // 2), 1)
    scale = dmax * dmax
    by_m: dict[int, list[int]] = {}
    for k, m in cells:
        by_m.setdefault(m, []).append(k)
    results: dict[tuple[int, int, int], _CellPmf] = {}
    empty = np.zeros(0, dtype=np.int64)
    for m, ks in sorted(by_m.items()):
        u = n - m
        tm, tu = _tuples(m), _tuples(u)
        keys: dict[bool, tuple[IntArray, IntArray, IntArray]] = {}
        for mi in mis:
            bm = _block(mi, m, farey, dtype)
            bu = _block(mi, u, farey, dtype)
            kind = mi in (0, 1)  # accuracy-like measures have their own value sets
            if kind not in keys:
                keys[kind] = _difference_keys(farey, bm.cols, bu.cols, scale)
            inverse, rnum, rden = keys[kind]
            dm, du = tm - bm.undefined, tu - bu.undefined
            for k in ks:
                j = np.arange(max(0, k - u), min(m, k) + 1)
                total = int(tm[j] @ tu[k - j])
                defined = int(dm[j] @ du[k - j])
                num, den, count = empty, empty, empty
                if defined:
                    prod = bm.counts[j].T @ bu.counts[k - j]  # [x, y]: pairs of values
                    sums = _sum_at(inverse, prod.ravel(), rnum.size)
                    nz = np.flatnonzero(sums)
                    num, den, count = rnum[nz], rden[nz], sums[nz]
                    assert int(count.sum()) == defined  # every defined matrix has one value
                results[(mi, k, m)] = _CellPmf(mi, k, m, num, den, count, total - defined, total)
    return [results[key] for key in sorted(results)]


# --------------------------------------------------------------------------------------------
# time and memory estimate
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PropertiesCost:
    """Estimated cost of a measure-properties computation (see :func:`estimate_properties_cost`).

    Attributes
    ----------
    n
        Data-set size.
    what
        The computation: ``"analysis"``, ``"summary"``, ``"pmf"`` or ``"rate_table"``.
    seconds
        Estimated wall time on a quiet 2-core machine (the one the benchmarks ran on).
    memory_bytes
        Estimated peak memory of the largest intermediate, in bytes.
    work
        The sizes the estimate is made of: ``block_entries`` (entries of the per-size blocks),
        ``product_flops`` (multiply-adds of the matrix products), ``value_pairs`` (value pairs
        grouped by difference) and ``largest_pairs`` (the most for one group-size pair),
        ``pmf_rows`` (PMF rows: every value pair of a small cell, 15 % of a large one's) and
        ``table_rows`` (rows of :func:`group_rate_table`, exact).
    """

    n: int
    what: str
    seconds: float
    memory_bytes: int
    work: dict[str, int]

    def describe(self) -> str:
        """``"about 12 s and 1.3 GiB"``."""
        time = "under 1 s" if self.seconds < 1 else f"about {_fmt_seconds(self.seconds)}"
        return f"{time} and {_fmt_bytes(self.memory_bytes)}"


def _fmt_seconds(s: float) -> str:
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def _fmt_bytes(b: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20)):
        if b >= size:
            return f"{b / size:.1f} {unit}"
    return f"{b / 2**10:.0f} KiB"


_PMF_ROW_SHARE = 0.15
"""Distinct differences per value pair of a cell: 0.13 at n = 32 to 0.09 at n = 120 over the
paper's grid; the estimate uses 0.15 for cells of more than 2000 rows (every pair below)."""

# per-unit costs measured on the benchmark machine (2 cores, one BLAS thread), n = 16..120
_SECONDS_BASE = 0.03
_SECONDS_PER = {
    "block_entries": 6e-9,
    "product_flops": 1.2e-9,
    "value_pairs": 100e-9,
    "table_rows": 250e-9,
}
_SECONDS_PER_PMF_ROW = {"pmf": 120e-9, "analysis": 270e-9}
_BYTES_BASE = 40 * 2**20
_BYTES_PER_ROW = 120  # a PMF row (numpy + Polars copies), a value pair, a rate-table row (130)


def _work(
    n: int,
    mis: Sequence[int],
    what: str,
    cells: Sequence[tuple[int, int]],
) -> dict[str, int]:
    """The sizes behind the estimate (see :func:`estimate_properties_cost`)."""
    fs = _farey_sizes(n)

    def values(mi: int, s: int) -> int:  # distinct defined rates of a group of size s
        if mi in (0, 1):
            return s + 1 if s else 0
        return int(fs[s])

    def table_rows(mi: int, s: int) -> int:  # nonzero (p, value) entries, undefined included
        if mi in (0, 1):
            return (s + 1) ** 2 if s else 1
        if mi in (2, 3):
            return s * (s + 3) // 2 + 1
        b = np.arange(1, s + 1)  # reduced a/b with b = a + c: fs[b] - fs[b - 1] of them
        return int((np.diff(fs[: s + 1]) * (s - b + 1)).sum()) + s + 1

    work = dict.fromkeys(
        (
            "block_entries",
            "product_flops",
            "value_pairs",
            "pmf_rows",
            "table_rows",
            "largest_pairs",
        ),
        0,
    )
    if what in ("analysis", "summary", "rate_table"):
        for mi in mis:
            work["block_entries"] += sum((s + 1) * values(mi, s) for s in range(n + 1))
    if what == "rate_table":
        work["table_rows"] = sum(table_rows(mi, s) for mi in mis for s in range(n + 1))
    if what in ("analysis", "summary"):
        for mi in mis:
            work["product_flops"] += sum(
                (m + 1) * (n - m + 1) * values(mi, m) for m in range(n // 2 + 1)
            )
    if what in ("analysis", "pmf"):
        for m in sorted({m for _, m in cells}):
            for mi in sorted({0 if mi in (0, 1) else 2 for mi in mis}):
                pairs = values(mi, m) * values(mi, n - m)
                work["value_pairs"] += pairs
                work["largest_pairs"] = max(work["largest_pairs"], pairs)
                work["block_entries"] += (m + 1) * values(mi, m) + (n - m + 1) * values(mi, n - m)
        for mi in mis:
            for k, m in cells:
                pairs = values(mi, m) * values(mi, n - m)
                width = min(m, k) - max(0, k - (n - m)) + 1
                work["product_flops"] += width * pairs
                # small cells can have a distinct difference per pair; large ones about 10 %
                work["pmf_rows"] += min(pairs, max(math.ceil(_PMF_ROW_SHARE * pairs), 2000)) + 1
    return work


def estimate_properties_cost(
    n: int,
    *,
    what: Literal["analysis", "summary", "pmf", "rate_table"] = "analysis",
    counts: Sequence[int] | None = None,
    cells: Sequence[tuple[int, int]] | None = None,
    measures: str | Sequence[str] | None = None,
) -> PropertiesCost:
    r"""Estimate the time and peak memory of a measure-properties computation, without running it.

    Every computing function of this module calls it first and refuses (with
    :class:`~polars_fairmetrics.exceptions.InvalidOptionError` naming ``n`` and the estimate)
    when the estimate is over its ``max_seconds`` / ``max_memory_gib`` budget. The estimate
    counts the work exactly from the sizes involved, with :math:`|F_s|` the number of distinct
    rates of a group of size :math:`s` (Farey fractions of order :math:`s`, :math:`\approx 0.3
    s^2`; :math:`s + 1` for accuracy and selection rate):

    - ``block_entries`` = :math:`\sum_s (s + 1)|F_s|` per measure (the per-size blocks),
    - ``product_flops``: :math:`\sum_{m \le n/2} (m + 1)(n - m + 1)|F_m|` per measure for the
      cell counts, plus :math:`\sum_{\text{cells}} |J|\,|F_m|\,|F_{n-m}|` for the PMFs,
    - ``value_pairs`` = :math:`\sum_m |F_m|\,|F_{n-m}|` over the PMF cells' group sizes (the
      value pairs sorted by exact difference),
    - ``pmf_rows``: the PMF rows, every value pair of a small cell and 15 % of a large one's
      (measured: at most 13 % over the paper's grid for n = 32..120),
    - ``table_rows``: the rows of :func:`group_rate_table`, exactly,

    and converts them with per-unit costs measured on a 2-core machine (one BLAS thread):

    .. math::

        t = 0.03 + 6\,\text{ns} \cdot \text{block\_entries}
            + 1.2\,\text{ns} \cdot \text{product\_flops}
            + 100\,\text{ns} \cdot \text{value\_pairs} + 250\,\text{ns} \cdot
            \text{table\_rows} + c \cdot \text{pmf\_rows}

    (:math:`c` = 120 ns for the PMFs alone, 270 ns with the comparisons of the analysis) and
    memory = 40 MiB + 120 bytes per PMF row and per value pair of the largest group-size pair
    (130 per rate-table row). Time grows about as :math:`n^5` for the analysis (0.2 s at
    n = 56, 5 s at n = 120), memory as :math:`n^4`. The estimate is meant to stop a run that
    would not finish or not fit, not to benchmark: for the analysis at n = 56..150 it was 1.3
    to 1.7 times the measured CPU time and 1.0 to 1.4 times the measured peak memory.

    Parameters
    ----------
    n
        Data-set size.
    what
        ``"analysis"`` (:func:`analyze_measure_properties`, :func:`measure_properties`),
        ``"summary"`` (:func:`cell_summary`), ``"pmf"`` (:func:`cell_pmf`) or ``"rate_table"``
        (:func:`group_rate_table`).
    counts
        Grid counts of the analysis (default :func:`paper_ratio_counts`).
    cells
        Cells of :func:`cell_pmf` (default the paper's grid).
    measures
        Measures (default all six).

    Returns
    -------
    PropertiesCost

    Examples
    --------
    >>> est = estimate_properties_cost(56)
    >>> est.seconds < 2, est.memory_bytes < 2**30
    (True, True)
    >>> estimate_properties_cost(300).describe()
    'about 5 min and 39.1 GiB'
    """
    n = _check_n(n)
    chosen = _check_measures(measures)
    if what not in ("analysis", "summary", "pmf", "rate_table"):
        raise InvalidOptionError(
            f"what must be 'analysis', 'summary', 'pmf' or 'rate_table', got {what!r}"
        )
    if what == "pmf":
        cell_list = _check_cells(n, cells)
    elif what == "analysis":
        grid = _check_counts(n, counts)
        cell_list = [(k, m) for k in grid for m in grid]
    else:
        cell_list = []
    work = _work(n, _mis(chosen), what, cell_list)
    seconds = _SECONDS_BASE + sum(rate * work[k] for k, rate in _SECONDS_PER.items())
    seconds += _SECONDS_PER_PMF_ROW.get(what, 0.0) * work["pmf_rows"]
    memory = _BYTES_BASE + max(
        _BYTES_PER_ROW * (work["pmf_rows"] + work["largest_pairs"]),
        (_BYTES_PER_ROW + 10) * work["table_rows"],
        24 * (n + 1) ** 2 * len(chosen) + 24 * (n + 1) * int(_farey_sizes(n)[n]),
    )
    return PropertiesCost(n, what, float(seconds), int(memory), work)


def _available_memory() -> int | None:
    """Bytes of memory available now (Linux ``MemAvailable``; else physical memory)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):  # pragma: no cover - platform dependent
        return None


def _check_budget(
    cost: PropertiesCost,
    max_seconds: float | None,
    max_memory_gib: float | None,
    *,
    subject: str | None = None,
    advice: str | None = None,
) -> None:
    """Refuse a computation whose estimate is over the time or memory budget.

    The message names the option and its value (``subject``, default ``"n = <n>"``), the
    estimate and the limit, and what to change (``advice``).
    """
    if max_seconds is not None:
        max_seconds = _check_threshold("max_seconds", max_seconds, 0.0, None)
    if max_memory_gib is not None:
        max_memory_gib = _check_threshold("max_memory_gib", max_memory_gib, 0.0, None)
    subject = subject or f"n = {cost.n}"
    call = f"estimate_properties_cost({cost.n}, what={cost.what!r})"
    if max_seconds is not None and cost.seconds > max_seconds:
        raise InvalidOptionError(
            f"{subject}: the {cost.what} would take {cost.describe()} ({call}), over the "
            f"time limit max_seconds={max_seconds:g}; "
            + (advice or "choose a smaller n or pass a larger max_seconds= (None: no limit)")
        )
    if max_memory_gib is not None:
        limit = max_memory_gib * 2**30
        source = f"max_memory_gib={max_memory_gib:g}"
    else:
        available = _available_memory()
        if available is None:  # pragma: no cover - platform dependent
            return
        limit = DEFAULT_MEMORY_SHARE * available
        source = f"{DEFAULT_MEMORY_SHARE:.0%} of the {_fmt_bytes(available)} available now"
    if cost.memory_bytes > limit:
        raise InvalidOptionError(
            f"{subject}: the {cost.what} would need {cost.describe()} ({call}), over the "
            f"memory limit {_fmt_bytes(limit)} ({source}); "
            + (advice or "choose a smaller n or pass a larger max_memory_gib=")
        )


# --------------------------------------------------------------------------------------------
# public tables
# --------------------------------------------------------------------------------------------


def _metric_column(mi: IntArray) -> pl.Series:
    """The ``metric`` names of measure indices (built from integers, never sorted as text)."""
    return pl.Series("metric", MEASURES, dtype=pl.String).gather(mi)


def group_rate_table(
    n: int,
    *,
    measures: str | Sequence[str] | None = None,
    max_seconds: float | None = DEFAULT_MAX_SECONDS,
    max_memory_gib: float | None = None,
) -> pl.DataFrame:
    r"""Count the per-group 4-tuples of every size up to ``n`` by exact rate value.

    For each group size :math:`s \le n`, number of actual positives :math:`p \le s` and measure,
    the 4-tuples ``(tp, fp, tn, fn)`` with ``tp + fn = p`` and ``fp + tn = s - p`` (there are
    :math:`(p + 1)(s - p + 1)` of them) are grouped by the group's rate as a reduced fraction
    ``num / den``; ``num`` and ``den`` are null for the 4-tuples whose rate is 0/0. The counts
    come from closed forms (module docstring), not from enumerating the 4-tuples.

    Parameters
    ----------
    n
        Largest group size.
    measures
        Measures to tabulate (default: all of :data:`MEASURES`).
    max_seconds, max_memory_gib
        Budget checked against :func:`estimate_properties_cost` before anything is computed
        (``None``: no time limit / 80 % of the available memory).

    Returns
    -------
    pl.DataFrame
        Columns ``metric``, ``size``, ``positives``, ``num``, ``den`` (Int64, null when
        undefined), ``count`` (Int64), sorted by metric (in the order of :data:`MEASURES`), size,
        positives and value (undefined first).

    Examples
    --------
    >>> t = group_rate_table(2, measures="equal_opportunity")
    >>> t.filter(pl.col("size") == 2, pl.col("positives") == 2)
    shape: (3, 6)
    ┌───────────────────┬──────┬───────────┬─────┬─────┬───────┐
    │ metric            ┆ size ┆ positives ┆ num ┆ den ┆ count │
    │ ---               ┆ ---  ┆ ---       ┆ --- ┆ --- ┆ ---   │
    │ str               ┆ i64  ┆ i64       ┆ i64 ┆ i64 ┆ i64   │
    ╞═══════════════════╪══════╪═══════════╪═════╪═════╪═══════╡
    │ equal_opportunity ┆ 2    ┆ 2         ┆ 0   ┆ 1   ┆ 1     │
    │ equal_opportunity ┆ 2    ┆ 2         ┆ 1   ┆ 2   ┆ 1     │
    │ equal_opportunity ┆ 2    ┆ 2         ┆ 1   ┆ 1   ┆ 1     │
    └───────────────────┴──────┴───────────┴─────┴─────┴───────┘
    """
    n = _check_n(n)
    chosen = _check_measures(measures)
    _check_budget(
        estimate_properties_cost(n, what="rate_table", measures=chosen), max_seconds, max_memory_gib
    )
    farey = _farey(n)
    dtype = _dtype(n)
    parts: list[tuple[IntArray, ...]] = []
    for mi in _mis(chosen):
        for s in range(n + 1):
            blk = _block(mi, s, farey, dtype)
            # column 0 is the undefined atom, so each (s, p) starts with it (nulls first)
            full = np.concatenate([blk.undefined[:, None], blk.counts.astype(np.int64)], axis=1)
            p, c = np.nonzero(full)
            value = np.concatenate([np.array([-1], dtype=np.int64), blk.cols])[c]
            parts.append(
                (
                    np.full(p.size, mi, dtype=np.int64),
                    np.full(p.size, s, dtype=np.int64),
                    p.astype(np.int64),
                    value,
                    full[p, c],
                )
            )
    mi_a, size, pos, value, count = (np.concatenate(x) for x in zip(*parts, strict=True))
    undefined = value < 0
    safe = np.where(undefined, 0, value)
    return pl.DataFrame(
        [
            _metric_column(mi_a),
            pl.Series("size", size, dtype=_INT),
            pl.Series("positives", pos, dtype=_INT),
            pl.Series("num", farey.num[safe], dtype=_INT),
            pl.Series("den", farey.den[safe], dtype=_INT),
            pl.Series("count", count, dtype=_INT),
            pl.Series("_undefined", undefined),
        ]
    ).select(
        "metric",
        "size",
        "positives",
        pl.when(~pl.col("_undefined")).then(pl.col("num")).alias("num"),
        pl.when(~pl.col("_undefined")).then(pl.col("den")).alias("den"),
        "count",
    )


def cell_summary(
    n: int,
    *,
    measures: str | Sequence[str] | None = None,
    max_seconds: float | None = DEFAULT_MAX_SECONDS,
    max_memory_gib: float | None = None,
) -> pl.DataFrame:
    r"""Matrices, undefined values and exact zeros of each measure in every (IR, GR) cell.

    For every cell :math:`(k, m)`, :math:`0 \le k, m \le n` (``k`` actual positives, ``m``
    protected-group size):

    .. math::

        \text{matrices} = \sum_j T(m, j)\,T(n - m, k - j), \quad T(s, p) = (p + 1)(s - p + 1)

    ``undefined`` = matrices − :math:`\sum_j D(m, j) D(n - m, k - j)` (``D`` = 4-tuples with a
    defined rate) and ``perfect`` = :math:`\sum_j \sum_v c(m, j, v)\,c(n - m, k - j, v)` (matrices
    whose two rates are equal and defined, so the measure is exactly 0).

    ``p_undefined`` = undefined / matrices and ``p_perfect`` = perfect / matrices (Float64,
    over all matrices of the cell, as in the paper). ``p_perfect`` is **null** where every
    matrix of the cell is undefined (perfect fairness cannot be decided there: the share of
    zeros among the defined values is 0/0); both are null where the cell has no matrix.

    Parameters
    ----------
    n
        Data-set size (number of examples).
    measures
        Measures to compute (default: all six).
    max_seconds, max_memory_gib
        Budget checked against :func:`estimate_properties_cost` first.

    Returns
    -------
    pl.DataFrame
        Columns ``metric, n, positives, protected, ir, gr, matrices, undefined, perfect,
        p_undefined, p_perfect``; one row per measure and cell, sorted by metric (order of
        :data:`MEASURES`), positives and protected.

    Examples
    --------
    >>> s = cell_summary(4, measures="accuracy_equality")
    >>> s["matrices"].sum() == math.comb(4 + 7, 7)
    True
    >>> s.filter(pl.col("positives") == 2, pl.col("protected") == 2).select(
    ...     "matrices", "undefined", "perfect", "p_perfect")
    shape: (1, 4)
    ┌──────────┬───────────┬─────────┬───────────┐
    │ matrices ┆ undefined ┆ perfect ┆ p_perfect │
    │ ---      ┆ ---       ┆ ---     ┆ ---       │
    │ i64      ┆ i64       ┆ i64     ┆ f64       │
    ╞══════════╪═══════════╪═════════╪═══════════╡
    │ 34       ┆ 0         ┆ 12      ┆ 0.352941  │
    └──────────┴───────────┴─────────┴───────────┘
    >>> s.filter(pl.col("protected") == 0).select("p_undefined", "p_perfect").unique()
    shape: (1, 2)
    ┌─────────────┬───────────┐
    │ p_undefined ┆ p_perfect │
    │ ---         ┆ ---       │
    │ f64         ┆ f64       │
    ╞═════════════╪═══════════╡
    │ 1.0         ┆ null      │
    └─────────────┴───────────┘
    """
    n = _check_n(n)
    chosen = _check_measures(measures)
    _check_budget(
        estimate_properties_cost(n, what="summary", measures=chosen), max_seconds, max_memory_gib
    )
    return _summary_frame(n, _summary_arrays(n, _mis(chosen)))


def _summary_frame(n: int, arrays: dict[int, tuple[IntArray, IntArray, IntArray]]) -> pl.DataFrame:
    k, m = (x.ravel() for x in np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij"))
    mis = sorted(arrays)
    rep = len(mis)
    mi_a = np.repeat(np.asarray(mis, dtype=np.int64), k.size)
    return pl.DataFrame(
        [
            _metric_column(mi_a),
            pl.Series("n", np.full(mi_a.size, n), dtype=_INT),
            pl.Series("positives", np.tile(k, rep), dtype=_INT),
            pl.Series("protected", np.tile(m, rep), dtype=_INT),
            pl.Series("matrices", np.concatenate([arrays[i][0].ravel() for i in mis]), dtype=_INT),
            pl.Series("undefined", np.concatenate([arrays[i][1].ravel() for i in mis]), dtype=_INT),
            pl.Series("perfect", np.concatenate([arrays[i][2].ravel() for i in mis]), dtype=_INT),
        ]
    ).select(
        "metric",
        "n",
        "positives",
        "protected",
        (pl.col("positives") / n).alias("ir"),
        (pl.col("protected") / n).alias("gr"),
        "matrices",
        "undefined",
        "perfect",
        *_probabilities(),
    )


def _probabilities() -> list[pl.Expr]:
    """p_undefined (null without matrices) and p_perfect (null without a defined matrix)."""
    matrices, undefined = pl.col("matrices"), pl.col("undefined")
    return [
        pl.when(matrices > 0).then(undefined / matrices).alias("p_undefined"),
        pl.when(matrices - undefined > 0).then(pl.col("perfect") / matrices).alias("p_perfect"),
    ]


def _sort_metric(frame: pl.DataFrame | pl.LazyFrame, *keys: str) -> pl.DataFrame:
    """Sort by metric in the order of :data:`MEASURES` (unknown names after, by name), then keys."""
    order = pl.col("metric").replace_strict(_ORDER, default=len(MEASURES), return_dtype=pl.Int64)
    out = frame.lazy().sort(order, "metric", *keys, nulls_last=True, maintain_order=True)
    return out.collect()


def _require(frame: pl.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InvalidOptionError(
            f"{what} needs the columns {list(columns)}; missing {missing} (columns: "
            f"{frame.columns})"
        )


def marginal_summary(summary: pl.DataFrame, *, by: Literal["ir", "gr"]) -> pl.DataFrame:
    r"""Probabilities of perfect fairness and of undefined values per IR or per GR.

    The paper's Figures 6–7: for each ratio, the counts are summed over all values of the other
    ratio before dividing, :math:`P_{\text{perfect}}(IR = k/n) = \sum_m \text{perfect}(k, m) /
    \sum_m \text{matrices}(k, m)` (and likewise for GR and for undefined values).
    ``p_perfect`` is null where every summed matrix is undefined (as in :func:`cell_summary`).

    Parameters
    ----------
    summary
        Output of :func:`cell_summary`.
    by
        ``"ir"`` (sum over all GR) or ``"gr"`` (sum over all IR).

    Returns
    -------
    pl.DataFrame
        Columns ``metric, n, <by count column>, <by>, matrices, undefined, perfect,
        p_undefined, p_perfect``, sorted by metric and the count column.

    Examples
    --------
    >>> s = cell_summary(6, measures=["equal_opportunity", "predictive_equality"])
    >>> m = marginal_summary(s, by="ir")
    >>> m.filter(pl.col("positives") <= 1).select("metric", "ir", "p_undefined", "p_perfect")
    shape: (4, 4)
    ┌─────────────────────┬──────────┬─────────────┬───────────┐
    │ metric              ┆ ir       ┆ p_undefined ┆ p_perfect │
    │ ---                 ┆ ---      ┆ ---         ┆ ---       │
    │ str                 ┆ f64      ┆ f64         ┆ f64       │
    ╞═════════════════════╪══════════╪═════════════╪═══════════╡
    │ equal_opportunity   ┆ 0.0      ┆ 1.0         ┆ null      │
    │ equal_opportunity   ┆ 0.166667 ┆ 1.0         ┆ null      │
    │ predictive_equality ┆ 0.0      ┆ 0.166667    ┆ 0.166667  │
    │ predictive_equality ┆ 0.166667 ┆ 0.214286    ┆ 0.142857  │
    └─────────────────────┴──────────┴─────────────┴───────────┘
    """
    if by not in ("ir", "gr"):
        raise InvalidOptionError(f"by must be 'ir' or 'gr', got {by!r}")
    key = "positives" if by == "ir" else "protected"
    _require(
        summary,
        ["metric", "n", key, "matrices", "undefined", "perfect"],
        "marginal_summary(summary)",
    )
    out = (
        summary.lazy()
        .group_by("metric", "n", key)
        .agg(pl.col("matrices", "undefined", "perfect").sum())
        .select(
            "metric",
            "n",
            key,
            (pl.col(key) / pl.col("n")).alias(by),
            "matrices",
            "undefined",
            "perfect",
            *_probabilities(),
        )
    )
    return _sort_metric(out, key)


def paper_ratio_counts(n: int) -> list[int]:
    """The counts behind the paper's five ratios for a data set of size ``n``.

    The paper (n = 56) uses IR, GR ∈ {1/28, 1/4, 1/2, 3/4, 27/28}: a minority of two examples
    (one per group), low imbalance, balance. For another ``n`` this returns
    ``[2, round(n/4), round(n/2), round(3n/4), n - 2]`` clipped to [0, n], duplicates removed
    (``[0, 1]`` for n = 1).

    Examples
    --------
    >>> paper_ratio_counts(56)
    [2, 14, 28, 42, 54]
    >>> paper_ratio_counts(1)
    [0, 1]
    """
    n = _check_n(n)
    raw = [2, round(n / 4), round(n / 2), n - round(n / 4), n - 2]
    return sorted({min(max(c, 0), n) for c in raw})


def cells_from_ratios(
    n: int, ir: Iterable[float | Fraction], gr: Iterable[float | Fraction]
) -> list[tuple[int, int]]:
    """Cells ``(positives, protected)`` for ratios given as shares of ``n``.

    Every ratio times ``n`` must be a whole number (within 1e-9): a cell is an exact count,
    and a silently rounded ratio would report a cell the user did not ask for.

    Examples
    --------
    >>> cells_from_ratios(56, ir=[Fraction(1, 28), 0.5], gr=[0.25])
    [(2, 14), (28, 14)]
    """
    n = _check_n(n)

    def count(r: float | Fraction, what: str) -> int:
        if isinstance(r, bool) or not isinstance(
            r, (int, float, Fraction, np.integer, np.floating)
        ):
            raise InvalidOptionError(f"{what} = {r!r} is not a number")
        x = Fraction(r) * n if isinstance(r, Fraction) else float(r) * n
        if not math.isfinite(float(x)):
            raise InvalidOptionError(f"{what} = {r} is not a finite number")
        c = round(x)
        if not 0 <= c <= n or abs(float(x) - c) > 1e-9:
            raise InvalidOptionError(
                f"{what} = {r} gives {what} * n = {float(x)} examples, not a whole number in "
                f"[0, {n}]; choose a ratio k/{n} "
                f"(nearest: {math.floor(x)}/{n} or {math.ceil(x)}/{n})"
            )
        return int(c)

    irs = [count(r, "IR") for r in ir]
    grs = [count(r, "GR") for r in gr]
    return [(k, m) for k in irs for m in grs]


def cell_pmf(
    n: int,
    *,
    cells: Sequence[tuple[int, int]] | None = None,
    measures: str | Sequence[str] | None = None,
    max_seconds: float | None = DEFAULT_MAX_SECONDS,
    max_memory_gib: float | None = None,
) -> pl.DataFrame:
    r"""Exact probability mass function of each measure in the requested cells.

    For a cell :math:`(k, m)` the value of a matrix is :math:`r_p - r_u` with
    :math:`r_p = a/b` the protected rate and :math:`r_u = c/d` the unprotected one, stored as the
    reduced fraction of :math:`(a d - c b) / (b d)`. Its probability is the number of matrices
    with that value over all matrices of the cell (undefined ones included):

    .. math::

        P(v) = \frac{\sum_j \sum_{r_p - r_u = v} c(m, j, r_p)\, c(n - m, k - j, r_u)}
                    {\text{matrices}(k, m)}

    Parameters
    ----------
    n
        Data-set size.
    cells
        ``(positives, protected)`` pairs (see :func:`cells_from_ratios`); default: the paper's
        5 × 5 grid :func:`paper_ratio_counts`. Duplicates are dropped.
    measures
        Measures (default: all six).
    max_seconds, max_memory_gib
        Budget checked against :func:`estimate_properties_cost` first.

    Returns
    -------
    pl.DataFrame
        Columns ``metric, n, positives, protected, ir, gr, num, den, value, count,
        probability``; the undefined values of a cell are one row with null ``num``, ``den``
        and ``value``. Sorted by metric (order of :data:`MEASURES`), cell and value (undefined
        last).

    Examples
    --------
    >>> pmf = cell_pmf(4, cells=[(2, 2)], measures="equal_opportunity")
    >>> pmf.select("value", "count", "probability")
    shape: (4, 3)
    ┌───────┬───────┬─────────────┐
    │ value ┆ count ┆ probability │
    │ ---   ┆ ---   ┆ ---         │
    │ f64   ┆ i64   ┆ f64         │
    ╞═══════╪═══════╪═════════════╡
    │ -1.0  ┆ 4     ┆ 0.117647    │
    │ 0.0   ┆ 8     ┆ 0.235294    │
    │ 1.0   ┆ 4     ┆ 0.117647    │
    │ null  ┆ 18    ┆ 0.529412    │
    └───────┴───────┴─────────────┘
    """
    n = _check_n(n)
    chosen = _check_measures(measures)
    cell_list = _check_cells(n, cells)
    _check_budget(
        estimate_properties_cost(n, what="pmf", cells=cell_list, measures=chosen),
        max_seconds,
        max_memory_gib,
    )
    return _pmf_frame(n, _pmf_cells(n, _mis(chosen), cell_list))


def _pmf_arrays(
    pmfs: Sequence[_CellPmf],
) -> tuple[IntArray, IntArray, IntArray, IntArray, IntArray, IntArray, IntArray]:
    """Stack cell PMFs: mi, k, m, num, den (0/0 for the undefined atom, last), count, total."""
    sizes = np.array([c.num.size + (1 if c.undefined else 0) for c in pmfs], dtype=np.int64)
    ends = np.cumsum(sizes)
    rows = int(ends[-1]) if sizes.size else 0
    head = np.zeros((3, rows), dtype=np.int64)  # num, den, count; undefined rows stay 0/0
    for c, end in zip(pmfs, ends.tolist(), strict=True):
        start = end - c.num.size - (1 if c.undefined else 0)
        stop = start + c.num.size
        head[0, start:stop] = c.num
        head[1, start:stop] = c.den
        head[2, start:stop] = c.count
        if c.undefined:
            head[2, stop] = c.undefined

    def per_cell(values: list[int]) -> IntArray:
        return np.repeat(np.asarray(values, dtype=np.int64), sizes)

    return (
        per_cell([c.mi for c in pmfs]),
        per_cell([c.k for c in pmfs]),
        per_cell([c.m for c in pmfs]),
        head[0],
        head[1],
        head[2],
        per_cell([c.total for c in pmfs]),
    )


def _pmf_frame(n: int, pmfs: Sequence[_CellPmf]) -> pl.DataFrame:
    mi, k, m, num, den, count, total = _pmf_arrays(pmfs)
    defined = pl.col("den") != 0
    return pl.DataFrame(
        [
            _metric_column(mi),
            pl.Series("positives", k, dtype=_INT),
            pl.Series("protected", m, dtype=_INT),
            pl.Series("num", num, dtype=_INT),
            pl.Series("den", den, dtype=_INT),
            pl.Series("count", count, dtype=_INT),
            pl.Series("_total", total, dtype=_INT),
        ]
    ).select(
        "metric",
        pl.lit(n, dtype=_INT).alias("n"),
        "positives",
        "protected",
        (pl.col("positives") / n).alias("ir"),
        (pl.col("protected") / n).alias("gr"),
        pl.when(defined).then(pl.col("num")).alias("num"),
        pl.when(defined).then(pl.col("den")).alias("den"),
        pl.when(defined).then(pl.col("num") / pl.col("den")).alias("value"),
        "count",
        (pl.col("count") / pl.col("_total")).alias("probability"),
    )


def resolution(pmf: pl.DataFrame) -> pl.DataFrame:
    """Number of distinct defined values of each measure in each cell of a PMF frame.

    Parameters
    ----------
    pmf
        Output of :func:`cell_pmf`.

    Returns
    -------
    pl.DataFrame
        Columns ``metric, positives, protected, ir, gr, distinct_values`` (Int64), sorted by
        metric and cell.

    Examples
    --------
    >>> resolution(cell_pmf(4, cells=[(2, 2)], measures="equal_opportunity"))
    shape: (1, 6)
    ┌───────────────────┬───────────┬───────────┬─────┬─────┬─────────────────┐
    │ metric            ┆ positives ┆ protected ┆ ir  ┆ gr  ┆ distinct_values │
    │ ---               ┆ ---       ┆ ---       ┆ --- ┆ --- ┆ ---             │
    │ str               ┆ i64       ┆ i64       ┆ f64 ┆ f64 ┆ i64             │
    ╞═══════════════════╪═══════════╪═══════════╪═════╪═════╪═════════════════╡
    │ equal_opportunity ┆ 2         ┆ 2         ┆ 0.5 ┆ 0.5 ┆ 3               │
    └───────────────────┴───────────┴───────────┴─────┴─────┴─────────────────┘
    """
    _require(pmf, ["metric", "positives", "protected", "ir", "gr", "num"], "resolution(pmf)")
    out = (
        pmf.lazy()
        .group_by("metric", "positives", "protected", "ir", "gr")
        .agg(pl.col("num").is_not_null().sum().cast(_INT).alias("distinct_values"))
    )
    return _sort_metric(out, "positives", "protected")


# --------------------------------------------------------------------------------------------
# the eight properties of Section 5, decided from the distributions
# --------------------------------------------------------------------------------------------

RULES: dict[str, str] = {
    "Immunity to IR changes": (
        "for every GR of the grid, the PMFs (undefined values as one atom) at all IR of the grid "
        "are identical, compared exactly as fractions"
    ),
    "Immunity to GR changes": (
        "for every IR of the grid, the PMFs at all GR of the grid are identical (exact)"
    ),
    "Resolution Stability": (
        "min over grid cells of the number of distinct defined values ≥ {resolution_ratio} × "
        "its max over grid cells"
    ),
    "Fairness Symmetry": "in every grid cell, P(v) = P(−v) for every value v (exact)",
    "IR Symmetry": "in every grid cell, PMF(IR, GR) = PMF(1 − IR, GR) (exact)",
    "GR Symmetry": "in every grid cell, PMF(IR, GR) = PMF(IR, 1 − GR) (exact)",
    "Perfect Fairness Stability": (
        "max / min of P(value = 0) over the grid's interior ratios ≤ {perfect_ratio}, for the IR "
        "marginal (summed over all GR) and for the GR marginal (summed over all IR); fails where "
        "P(value = 0) is undefined at such a ratio (every matrix undefined)"
    ),
    "Undefined Values": (
        "holds when undefined values occur only where a group is empty (GR = 0 or 1); the "
        "evidence lists each side (low/high IR, low/high GR) whose marginal P(undefined) at the "
        "grid's extreme ratio is ≥ {undefined_level}"
    ),
}
"""The documented decision rule of each property (thresholds are parameters). A property that
the grid cannot decide (no pair of cells to compare, no interior ratio, a grid not closed under
``c -> n - c`` for the symmetries, no defined value) has ``holds`` null."""


@dataclass(frozen=True)
class PropertiesAnalysis:
    """Everything the properties analysis computes for one ``n`` (see
    :func:`analyze_measure_properties`).

    Attributes
    ----------
    n
        Data-set size.
    counts
        The grid's ratio counts (IR = k/n and GR = m/n for k, m in ``counts``).
    summary
        :func:`cell_summary` of every cell.
    by_ir, by_gr
        :func:`marginal_summary` by IR and by GR.
    pmf
        :func:`cell_pmf` of the grid cells.
    resolution
        :func:`resolution` of the grid cells.
    properties
        :func:`measure_properties` (long format: one row per measure and property).
    """

    n: int
    counts: tuple[int, ...]
    summary: pl.DataFrame
    by_ir: pl.DataFrame
    by_gr: pl.DataFrame
    pmf: pl.DataFrame
    resolution: pl.DataFrame
    properties: pl.DataFrame


def analyze_measure_properties(
    n: int = 56,
    *,
    counts: Sequence[int] | None = None,
    measures: str | Sequence[str] | None = None,
    resolution_ratio: float = 0.25,
    perfect_ratio: float = 5.0,
    undefined_level: float = 0.1,
    max_seconds: float | None = DEFAULT_MAX_SECONDS,
    max_memory_gib: float | None = None,
) -> PropertiesAnalysis:
    """Compute the complete analysis of the paper for a data-set size ``n``.

    Computes every cell's matrices, undefined values and exact zeros (:func:`cell_summary`), the
    IR and GR marginals, the full PMF and resolution of the grid cells ``(k, m)`` for ``k, m`` in
    ``counts``, and the eight properties of the paper's Section 5 decided by the rules in
    :data:`RULES` (see :func:`measure_properties`). Before computing anything it checks
    :func:`estimate_properties_cost` against the budget.

    Parameters
    ----------
    n
        Data-set size (the paper: 56). n = 1 works (every cell has an empty group or class, so
        most properties are not decided: ``holds`` null).
    counts
        Grid counts, integers in [0, n]; IR = k/n and GR = m/n for ``k, m`` in ``counts``.
        Default :func:`paper_ratio_counts` (the paper's 1/28, 1/4, 1/2, 3/4, 27/28 at n = 56).
        The symmetry rules need a grid closed under ``c -> n - c``.
    measures
        Measures (default all six).
    resolution_ratio, perfect_ratio, undefined_level
        Thresholds of the Resolution Stability (in [0, 1]), Perfect Fairness Stability (≥ 1)
        and Undefined Values (in [0, 1]) rules.
    max_seconds, max_memory_gib
        Budget: refuse (``InvalidOptionError`` naming ``n`` and the estimate) when the estimate
        is over ``max_seconds`` (default 300; ``None``: no limit) or over ``max_memory_gib``
        (default ``None``: 80 % of the memory available at the call).

    Returns
    -------
    PropertiesAnalysis

    Examples
    --------
    >>> a = analyze_measure_properties(12)
    >>> a.counts
    (2, 3, 6, 9, 10)
    >>> a.summary.height == 6 * 13 * 13
    True
    """
    n = _check_n(n)
    chosen = _check_measures(measures)
    grid = _check_counts(n, counts)
    resolution_ratio = _check_threshold("resolution_ratio", resolution_ratio, 0.0, 1.0)
    perfect_ratio = _check_threshold("perfect_ratio", perfect_ratio, 1.0, None)
    undefined_level = _check_threshold("undefined_level", undefined_level, 0.0, 1.0)
    _check_budget(
        estimate_properties_cost(n, what="analysis", counts=grid, measures=chosen),
        max_seconds,
        max_memory_gib,
    )
    mis = _mis(chosen)
    arrays = _summary_arrays(n, mis)
    summary = _summary_frame(n, arrays)
    pmfs = _pmf_cells(n, mis, [(k, m) for k in grid for m in grid])
    pmf = _pmf_frame(n, pmfs)
    props = _decide_properties(
        n,
        grid,
        mis,
        arrays=arrays,
        pmfs=pmfs,
        resolution_ratio=resolution_ratio,
        perfect_ratio=perfect_ratio,
        undefined_level=undefined_level,
    )
    return PropertiesAnalysis(
        n,
        grid,
        summary,
        marginal_summary(summary, by="ir"),
        marginal_summary(summary, by="gr"),
        pmf,
        resolution(pmf),
        props,
    )


def measure_properties(
    n: int = 56,
    *,
    counts: Sequence[int] | None = None,
    measures: str | Sequence[str] | None = None,
    resolution_ratio: float = 0.25,
    perfect_ratio: float = 5.0,
    undefined_level: float = 0.1,
    max_seconds: float | None = DEFAULT_MAX_SECONDS,
    max_memory_gib: float | None = None,
) -> pl.DataFrame:
    """The eight properties of the paper's Section 5, decided from exact distributions.

    Each property is decided by the documented rule in :data:`RULES` (with the thresholds
    given here), on the grid cells IR, GR ∈ ``{k / n : k in counts}``:

    - *Immunity to IR / GR changes*: the PMFs at the grid's IRs (for each GR), resp. GRs (for
      each IR), are identical; evidence: the largest total-variation distance to the balanced
      cell.
    - *Resolution Stability*: min / max of the number of distinct values over the grid cells
      ≥ ``resolution_ratio``.
    - *Fairness Symmetry*: :math:`P(v) = P(-v)` in every grid cell.
    - *IR Symmetry*: :math:`PMF(IR) = PMF(1 - IR)`; *GR Symmetry*: :math:`PMF(GR) = PMF(1 - GR)`.
    - *Perfect Fairness Stability*: max / min of P(0) over the grid ratios, for both
      marginals, ≤ ``perfect_ratio``.
    - *Undefined Values*: holds if undefined values occur only where a group is empty.

    A property the grid cannot decide has ``holds`` null and says why in ``evidence``.

    Parameters
    ----------
    n, counts, measures, resolution_ratio, perfect_ratio, undefined_level
        As in :func:`analyze_measure_properties`.
    max_seconds, max_memory_gib
        As in :func:`analyze_measure_properties`.

    Returns
    -------
    pl.DataFrame
        Columns ``metric, property, holds`` (Boolean, null when not decided), ``evidence``
        (numbers behind the decision), ``rule``; one row per measure and property, sorted by
        metric (order of :data:`MEASURES`) and property (order of :data:`PROPERTIES`).

    Examples
    --------
    >>> p = measure_properties(12, measures=["accuracy_equality", "equal_opportunity"])
    >>> p.filter(pl.col("property") == "IR Symmetry").select("metric", "holds")
    shape: (2, 2)
    ┌───────────────────┬───────┐
    │ metric            ┆ holds │
    │ ---               ┆ ---   │
    │ str               ┆ bool  │
    ╞═══════════════════╪═══════╡
    │ accuracy_equality ┆ true  │
    │ equal_opportunity ┆ false │
    └───────────────────┴───────┘
    """
    return analyze_measure_properties(
        n,
        counts=counts,
        measures=measures,
        resolution_ratio=resolution_ratio,
        perfect_ratio=perfect_ratio,
        undefined_level=undefined_level,
        max_seconds=max_seconds,
        max_memory_gib=max_memory_gib,
    ).properties


def _value_keys(num: IntArray, den: IntArray, scale: int) -> IntArray:
    """Exact integer keys of reduced differences (sorted like the values; see the module)."""
    return num * scale // den


def _compare(
    n: int,
    pmfs: Sequence[_CellPmf],
    pairs: Sequence[tuple[int, int, int, int, int, int, bool]],
) -> dict[tuple[int, int], tuple[int, int, float]]:
    """Exact equality and total-variation distance of the PMFs of pairs of cells.

    ``pairs`` rows are ``(kind, mi, k_a, m_a, k_b, m_b, negate)`` (``negate``: compare with the
    values of cell b negated, for fairness symmetry). Each cell's defined values are sorted by
    their exact integer key (computed once per cell), so a pair is compared by merging two
    sorted arrays: the PMFs are identical when the supports are equal and the counts
    proportional, tested without overflow as ``c_a / (t_a / g) == c_b / (t_b / g)`` (exact
    divisions) with ``g = gcd(t_a, t_b)`` of the cells' totals; the undefined atom is compared
    as one more value. Returns, per (kind, mi), the number of pairs, of pairs that differ, and
    the largest TV distance.
    """
    dmax = max((n // 2) * ((n + 1) // 2), 1)
    scale = dmax * dmax
    index = {(c.mi, c.k, c.m): c for c in pmfs}
    cache: dict[tuple[int, int, int, bool], tuple[IntArray, IntArray, npt.NDArray[np.float64]]] = {}

    def side(cell: _CellPmf, negate: bool) -> tuple[IntArray, IntArray, npt.NDArray[np.float64]]:
        at = (cell.mi, cell.k, cell.m, negate)
        if at not in cache:
            if negate:  # -v has key floor(-num * scale / den); negation reverses the order
                key, count = _value_keys(-cell.num, cell.den, scale)[::-1], cell.count[::-1]
            else:
                key, count = _value_keys(cell.num, cell.den, scale), cell.count
            cache[at] = (key, count, count / cell.total)
        return cache[at]

    out: dict[tuple[int, int], tuple[int, int, float]] = {}
    for kind, mi, ka, ma, kb, mb, negate in pairs:
        a, b = index[(mi, ka, ma)], index[(mi, kb, mb)]
        key_a, count_a, pa = side(a, False)
        key_b, count_b, pb = side(b, negate)
        g = math.gcd(a.total, b.total)
        ta, tb = a.total // g, b.total // g
        identical = (
            key_a.size == key_b.size
            and a.undefined * tb == b.undefined * ta
            and bool(np.array_equal(key_a, key_b))
            and not bool((count_a % ta).any())
            and not bool((count_b % tb).any())
            and bool(np.array_equal(count_a // ta, count_b // tb))
        )
        tv = 0.0  # equal rationals divide to equal floats: identical PMFs are 0 apart exactly
        if not identical:
            _, ia, ib = np.intersect1d(key_a, key_b, assume_unique=True, return_indices=True)
            matched_a, matched_b = pa[ia], pb[ib]
            tv = 0.5 * (
                float(np.abs(matched_a - matched_b).sum())
                + max(float(pa.sum() - matched_a.sum()), 0.0)
                + max(float(pb.sum() - matched_b.sum()), 0.0)
                + abs(a.undefined / a.total - b.undefined / b.total)
            )
        total, differ, worst = out.get((kind, mi), (0, 0, 0.0))
        out[(kind, mi)] = (total + 1, differ + (not identical), max(worst, tv))
    return out


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def _decide_properties(
    n: int,
    grid: tuple[int, ...],
    mis: Sequence[int],
    *,
    arrays: dict[int, tuple[IntArray, IntArray, IntArray]],
    pmfs: Sequence[_CellPmf],
    resolution_ratio: float,
    perfect_ratio: float,
    undefined_level: float,
) -> pl.DataFrame:
    mid = min(grid, key=lambda c: (abs(2 * c - n), c))
    mirrored = all((n - c) in grid for c in grid)
    cells = [(k, m) for k in grid for m in grid]
    pairs: list[tuple[int, int, int, int, int, int, bool]] = []
    for mi in mis:
        pairs += [(0, mi, mid, m, k, m, False) for m in grid for k in grid if k != mid]
        pairs += [(1, mi, k, mid, k, m, False) for k in grid for m in grid if m != mid]
        pairs += [(2, mi, k, m, k, m, True) for k, m in cells]
        if mirrored:
            pairs += [(3, mi, k, m, n - k, m, False) for k, m in cells]
            pairs += [(4, mi, k, m, k, n - m, False) for k, m in cells]
    verdicts = _compare(n, pmfs, pairs)
    distinct = {(c.mi, c.k, c.m): int(c.num.size) for c in pmfs}
    interior = [c for c in grid if 0 < c < n]
    rows: list[tuple[str, str, bool | None, str]] = []

    def verdict(kind: int, mi: int, what: str) -> tuple[bool | None, str]:
        if (kind, mi) not in verdicts:
            return None, "no pairs of cells to compare in the grid: not decided"
        total, differ, tv = verdicts[(kind, mi)]
        return differ == 0, f"{differ}/{total} {what} differ; max TV distance {_fmt(tv)}"

    for mi in mis:
        measure = MEASURES[mi]
        matrices, undefined, perfect = arrays[mi]

        def add(prop: str, holds: bool | None, evidence: str, measure: str = measure) -> None:
            rows.append((measure, prop, holds, evidence))

        add("Immunity to IR changes", *verdict(0, mi, f"cells vs IR = {mid}/{n}"))
        add("Immunity to GR changes", *verdict(1, mi, f"cells vs GR = {mid}/{n}"))

        res = [(distinct[(mi, k, m)], k, m) for k, m in cells]
        rmin = min(r for r, _, _ in res)
        rmax = max(r for r, _, _ in res)
        _, wk, wm = min(res)
        if rmax == 0:
            add("Resolution Stability", None, "no grid cell has a defined value: not decided")
        else:
            ratio = rmin / rmax
            add(
                "Resolution Stability",
                ratio >= resolution_ratio,
                f"distinct values {rmin}–{rmax} (ratio {_fmt(ratio)}); fewest at IR = "
                f"{wk}/{n}, GR = {wm}/{n}",
            )

        add("Fairness Symmetry", *verdict(2, mi, "cells"))
        if mirrored:
            add("IR Symmetry", *verdict(3, mi, "cells vs 1 − IR"))
            add("GR Symmetry", *verdict(4, mi, "cells vs 1 − GR"))
        else:
            add("IR Symmetry", None, "grid not closed under c -> n - c: not decided")
            add("GR Symmetry", None, "grid not closed under c -> n - c: not decided")

        defined = matrices - undefined
        margins = {
            "IR": (matrices.sum(axis=1), defined.sum(axis=1), perfect.sum(axis=1)),
            "GR": (matrices.sum(axis=0), defined.sum(axis=0), perfect.sum(axis=0)),
        }
        if not interior:
            add(
                "Perfect Fairness Stability",
                None,
                f"no interior ratio (0 < k < {n}) in the grid: not decided",
            )
        else:
            ratios: list[float] = []
            parts: list[str] = []
            for label, (mat, dfd, zero) in margins.items():
                p0 = {c: float(zero[c] / mat[c]) for c in interior if dfd[c] > 0}
                missing = [f"{c}/{n}" for c in interior if dfd[c] == 0]
                if not p0:
                    ratios.append(math.inf)
                    parts.append(f"by {label}: P(0) undefined at every interior ratio")
                    continue
                pmin, pmax = min(p0.values()), max(p0.values())
                q = 1.0 if pmax == 0 else (math.inf if pmin == 0 else pmax / pmin)
                text = f"by {label}: P(0) {_fmt(pmin)}–{_fmt(pmax)} (max/min {_fmt(q)})"
                if missing:
                    q = math.inf
                    text += f", undefined at {label} = {', '.join(missing)}"
                ratios.append(q)
                parts.append(text)
            add("Perfect Fairness Stability", max(ratios) <= perfect_ratio, "; ".join(parts))

        interior_undefined = int(undefined[:, 1:n].sum())
        sides: list[str] = []
        pu: dict[str, float] = {}
        lo, hi = (min(interior), max(interior)) if interior else (mid, mid)
        for label in ("GR", "IR"):
            mat, dfd, _ = margins[label]
            plo = float((mat[lo] - dfd[lo]) / mat[lo])
            phi = float((mat[hi] - dfd[hi]) / mat[hi])
            pu[f"low {label}"], pu[f"high {label}"] = plo, phi
            flags = [side for side, p in (("low", plo), ("high", phi)) if p >= undefined_level]
            if flags:
                sides.append("/".join(flags) + f" {label}")
        where = ", ".join(sides) if sides else "rare in every interior cell"
        if interior_undefined == 0:
            where = "only when GR = 0 or GR = 1"
        detail = ", ".join(f"{k} {_fmt(v)}" for k, v in pu.items())
        add(
            "Undefined Values",
            interior_undefined == 0,
            f"{where} (P(undefined) at the grid's extreme ratios: {detail})",
        )
    rules = {
        p: RULES[p].format(
            resolution_ratio=resolution_ratio,
            perfect_ratio=perfect_ratio,
            undefined_level=undefined_level,
        )
        for p in PROPERTIES
    }
    order = {p: i for i, p in enumerate(PROPERTIES)}
    rows.sort(key=lambda r: (_ORDER[r[0]], order[r[1]]))
    return pl.DataFrame(
        [(m, p, h, e, rules[p]) for m, p, h, e in rows],
        schema=[
            ("metric", pl.String),
            ("property", pl.String),
            ("holds", pl.Boolean),
            ("evidence", pl.String),
            ("rule", pl.String),
        ],
        orient="row",
    )


def properties_table(properties: pl.DataFrame, *, evidence: bool = False) -> pl.DataFrame:
    """Pivot :func:`measure_properties` into the shape of the paper's Table 1.

    One row per property (in the paper's order), one column per measure holding ``"✓"``,
    ``"✗"`` or ``"–"`` (not decided on this grid); the *Undefined Values* row holds where
    undefined values occur (as in the paper); a last column ``rule`` states the decision rule.
    With ``evidence=True`` each mark is followed by the numbers behind it.

    Parameters
    ----------
    properties
        Output of :func:`measure_properties` (or ``PropertiesAnalysis.properties``).
    evidence
        Append the evidence to every cell.

    Returns
    -------
    pl.DataFrame

    Examples
    --------
    >>> t = properties_table(measure_properties(12, measures="accuracy_equality"))
    >>> t.select("property", "accuracy_equality").head(4)
    shape: (4, 2)
    ┌────────────────────────┬───────────────────┐
    │ property               ┆ accuracy_equality │
    │ ---                    ┆ ---               │
    │ str                    ┆ str               │
    ╞════════════════════════╪═══════════════════╡
    │ Immunity to IR changes ┆ ✗                 │
    │ Immunity to GR changes ┆ ✗                 │
    │ Resolution Stability   ┆ ✓                 │
    │ Fairness Symmetry      ┆ ✓                 │
    └────────────────────────┴───────────────────┘
    """
    _require(properties, ["metric", "property", "holds", "evidence", "rule"], "properties_table")
    mark = (
        pl.when(pl.col("holds").is_null())
        .then(pl.lit("–"))
        .when(pl.col("holds"))
        .then(pl.lit("✓"))
        .otherwise(pl.lit("✗"))
    )
    undefined_text = pl.col("evidence").str.replace(r" \(P\(undefined\).*$", "")
    cell = (
        pl.when(pl.col("property") == "Undefined Values")
        .then(mark + pl.lit(" ") + undefined_text)
        .otherwise(mark)
    )
    if evidence:
        cell = (
            pl.when(pl.col("property") == "Undefined Values")
            .then(mark + pl.lit(" ") + pl.col("evidence"))
            .otherwise(mark + pl.lit(" (") + pl.col("evidence") + pl.lit(")"))
        )
    measures = list(dict.fromkeys(properties["metric"].to_list()))
    wide = properties.with_columns(cell.alias("cell")).pivot(
        on="metric", index="property", values="cell"
    )
    rules = properties.group_by("property").agg(pl.col("rule").first())
    order = {p: i for i, p in enumerate(PROPERTIES)}
    return (
        wide.join(rules, on="property")
        .with_columns(
            pl.col("property")
            .replace_strict(order, default=len(order), return_dtype=pl.Int32)
            .alias("_o")
        )
        .sort("_o", "property")
        .select("property", *measures, "rule")
    )
