"""The fast interval kernels equal the plain ones bit for bit.

- ``_smooth_intervals`` selects order statistics by partitions instead of sorting: its bounds,
  defined counts and notes equal a per-row numpy oracle (sort the defined values, interpolate
  linearly) exactly, and ``numpy.quantile`` up to its own interpolation formula's round-off, on
  random matrices with undefined (NaN) replicates, constant rows, B = 1 ... 1000 and several
  levels; BCa (per-row levels, still sorted) is checked against the oracle at the levels its
  formula gives.
- ``_order_statistics`` against ``numpy.sort``; ``_level_quantile`` (the max-t critical value)
  against ``numpy.quantile``.
- ``_nonsmooth_many`` (the max-t band of many statistics in one array) equals the one-by-one
  ``_nonsmooth_parts`` (notes and defined counts exactly; bounds up to the summation order of
  the standard deviation) and a numpy oracle, with undefined, constant and infinite parts.
- between-groups intervals from the replicates' wide group values equal those from the
  replicate count table.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_fairmetrics as pfm
from polars_fairmetrics.bootstrap import (
    MIN_DEFINED_SHARE,
    _level_quantile,
    _nonsmooth_many,
    _nonsmooth_parts,
    _order_statistics,
    _smooth_intervals,
)

SIZES = (1, 2, 3, 19, 1000)
LEVELS = (0.5, 0.8, 0.95, 0.99)


def _quantile(sorted_defined: Any, p: float) -> float:
    """Linear interpolation between order statistics, ``a + f (b - a)`` (``a`` when ``f = 0``)."""
    n = sorted_defined.size
    h = float(n - 1) * p
    lo = min(max(math.floor(h), 0), n - 1)
    hi = min(lo + 1, n - 1)
    f = h - lo
    a, b = float(sorted_defined[lo]), float(sorted_defined[hi])
    return a if f == 0 else a + f * (b - a)


def _matrix(rng: np.random.Generator, n_boot: int) -> tuple[Any, Any]:
    """Rows of every kind: continuous, few distinct values (ties), constant, a few NaN, mostly
    NaN, all NaN; and estimates (one undefined)."""
    rows = [
        rng.normal(size=n_boot),
        rng.integers(0, 4, n_boot).astype(np.float64) / 3,
        np.full(n_boot, 0.25),
        rng.random(n_boot),
        rng.random(n_boot),
        np.full(n_boot, np.nan),
        rng.exponential(size=n_boot),
    ]
    rows[3][rng.random(n_boot) < 0.05] = np.nan
    rows[4][rng.random(n_boot) < 0.5] = np.nan
    boot = np.vstack(rows)
    est = np.array([0.0, 0.5, 0.25, 0.5, 0.5, 0.1, np.nan])
    return est, boot


def _oracle(est: Any, boot: Any, levels: Any) -> tuple[Any, Any, Any, list[str | None]]:
    """Quantiles of each row's defined values at per-row levels, and the note of withdrawn rows
    (the rules of ``with_intervals``, written out per row)."""
    n_stats, n_boot = boot.shape
    low, high = np.full(n_stats, np.nan), np.full(n_stats, np.nan)
    n_def = np.zeros(n_stats, dtype=np.int64)
    notes: list[str | None] = [None] * n_stats
    for i in range(n_stats):
        values = np.sort(boot[i][~np.isnan(boot[i])])
        n_def[i] = values.size
        if math.isnan(est[i]):
            notes[i] = "undefined on the observed data"
        elif values.size == 0:
            notes[i] = "undefined in every resample"
        elif values.size < MIN_DEFINED_SHARE * n_boot:
            notes[i] = "defined in only"
        elif values[0] == values[-1]:
            notes[i] = "every resample gives the same value"
        else:
            low[i] = _quantile(values, levels[i, 0])
            high[i] = _quantile(values, levels[i, 1])
    return low, high, n_def, notes


def _check(got: Any, want: tuple[Any, Any, Any, list[str | None]], basic_est: Any = None) -> None:
    low, high, n_def, notes = got
    w_low, w_high, w_def, w_notes = want
    np.testing.assert_array_equal(n_def, w_def)
    for i, note in enumerate(w_notes):
        if note is None:
            assert notes[i] is None, (i, notes[i])
        else:
            assert notes[i] is not None and notes[i].startswith(note), (i, notes[i], note)
            assert math.isnan(low[i]) and math.isnan(high[i])
    if basic_est is not None:
        w_low, w_high = 2 * basic_est - w_high, 2 * basic_est - w_low
    ok = np.array([n is None for n in w_notes])
    # bit for bit: the same order statistics and the same interpolation
    assert low[ok].tobytes() == w_low[ok].tobytes()
    assert high[ok].tobytes() == w_high[ok].tobytes()


@pytest.mark.parametrize("n_boot", SIZES)
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("method", ["percentile", "basic"])
def test_selection_equals_sorted_quantiles(n_boot: int, level: float, method: str) -> None:
    rng = np.random.default_rng(n_boot * 100 + int(level * 100))
    est, boot = _matrix(rng, n_boot)
    exact = np.zeros(est.size, dtype=bool)
    got = _smooth_intervals(est, boot.copy(), level, method, exact)
    alpha = 1 - level
    levels = np.tile([alpha / 2, 1 - alpha / 2], (est.size, 1))
    _check(got, _oracle(est, boot, levels), est if method == "basic" else None)
    # and numpy's own quantile, up to its interpolation formula's round-off
    low, high, _, notes = got
    for i, note in enumerate(notes):
        if note is None and method == "percentile":
            values = boot[i][~np.isnan(boot[i])]
            want = np.quantile(values, [alpha / 2, 1 - alpha / 2])
            np.testing.assert_allclose([low[i], high[i]], want, rtol=1e-12, atol=1e-15)


def test_selection_does_not_modify_the_replicates() -> None:
    est, boot = _matrix(np.random.default_rng(3), 1000)
    before = boot.copy()
    _smooth_intervals(est, boot, 0.95, "percentile", np.zeros(est.size, dtype=bool))
    assert before.tobytes() == boot.tobytes()


def test_exact_rows_are_their_estimate() -> None:
    est, boot = _matrix(np.random.default_rng(4), 19)
    exact = np.ones(est.size, dtype=bool)
    low, high, _, notes = _smooth_intervals(est, boot, 0.9, "percentile", exact)
    ok = ~np.isnan(est)
    np.testing.assert_array_equal(low[ok], est[ok])
    np.testing.assert_array_equal(high[ok], est[ok])
    assert all(n is None for n, o in zip(notes, ok, strict=True) if o)


@pytest.mark.parametrize("n_boot", SIZES)
@pytest.mark.parametrize("level", LEVELS)
def test_bca_equals_sorted_quantiles_at_its_levels(n_boot: int, level: float) -> None:
    rng = np.random.default_rng(n_boot + 7)
    est, boot = _matrix(rng, n_boot)
    exact = np.zeros(est.size, dtype=bool)
    got = _smooth_intervals(est, boot, level, "bca", exact)
    # z0 from the share below the estimate (ties half), no acceleration (no jackknife)
    nd = NormalDist()
    alpha = 1 - level
    levels = np.full((est.size, 2), 0.5)
    bad = np.zeros(est.size, dtype=bool)
    for i in range(est.size):
        values = boot[i][~np.isnan(boot[i])]
        if values.size == 0 or math.isnan(est[i]):
            bad[i] = True
            continue
        prop = ((values < est[i]).sum() + 0.5 * (values == est[i]).sum()) / values.size
        if not 0 < prop < 1:
            bad[i] = True
            continue
        z0 = nd.inv_cdf(prop)
        for j, p in enumerate((alpha / 2, 1 - alpha / 2)):
            levels[i, j] = nd.cdf(z0 + z0 + nd.inv_cdf(p))
    want = _oracle(est, boot, levels)
    low, high, n_def, notes = got
    np.testing.assert_array_equal(n_def, want[2])
    for i in range(est.size):
        if want[3][i] is None and not bad[i]:
            assert notes[i] is None
            np.testing.assert_allclose([low[i], high[i]], [want[0][i], want[1][i]], rtol=1e-12)
        else:
            assert notes[i] is not None


@pytest.mark.parametrize("n", [1, 2, 3, 5, 19, 200])
def test_order_statistics(n: int) -> None:
    rng = np.random.default_rng(n)
    x = rng.integers(0, 5, (6, n)).astype(np.float64)
    x[1, : n // 2] = np.nan
    x[2] = np.nan
    ordered = np.sort(x, axis=1)
    for ks in ([0], [n - 1], [0, 1] if n > 1 else [0], list(range(n)), [n // 3, n // 2]):
        stats, low, high = _order_statistics(x, ks)
        for k in ks:
            np.testing.assert_array_equal(stats[k], ordered[:, k])
        full = ~np.isnan(x).any(axis=1)
        np.testing.assert_array_equal(low[full], ordered[full, 0])
        # NaN sort last: a row holding one has a NaN maximum (it is then sorted instead)
        np.testing.assert_array_equal(high, np.max(x, axis=1))


def _max_t_oracle(est: Any, boot: Any, level: float) -> tuple[float, float]:
    """The projected simultaneous band of ``max_j |x_j|`` written out in numpy: one statistic,
    every replicate defined."""
    se = np.array([np.std(row, ddof=1) for row in boot])
    t = np.max(np.abs(boot - est[:, None]) / se[:, None], axis=0)
    crit = np.quantile(t, level)
    return (
        float(np.max(np.maximum(np.abs(est) - crit * se, 0.0))),
        float(np.max(np.abs(est) + crit * se)),
    )


@pytest.mark.parametrize("n_boot", [1, 2, 3, 19, 1000])
def test_batched_max_t_equals_one_by_one(n_boot: int) -> None:
    rng = np.random.default_rng(n_boot)
    n_stats, n_parts = 8, 3
    est = rng.normal(size=(n_stats, n_parts)) * 0.1
    boot = est[:, :, None] + rng.normal(size=(n_stats, n_parts, n_boot)) * 0.05
    est[1, 2] = np.nan  # undefined on the observed data
    boot[2, 0, : max(n_boot // 20, 1)] = np.nan  # a few undefined replicates
    boot[3, 1, : n_boot // 2 + 1] = np.nan  # too many undefined replicates
    boot[4, 2] = 0.25  # a part that does not vary
    boot[5] = np.nan  # undefined everywhere
    boot[6, 0, 0] = np.inf  # an infinite replicate
    for level in (0.5, 0.95):
        with np.errstate(invalid="ignore"):  # the infinite replicate
            low, high, n_def, notes = _nonsmooth_many(est, boot, level, "its parts")
        for i in range(n_stats):
            with np.errstate(invalid="ignore"):
                want = _nonsmooth_parts(est[i], boot[i], level, "its parts")
            assert notes[i] == want[3], (i, notes[i], want[3])
            assert n_def[i] == want[2]
            np.testing.assert_allclose([low[i], high[i]], want[:2], rtol=1e-13, atol=1e-300)
            assert math.isnan(low[i]) == math.isnan(want[0])
            if i in (0, 7) and n_boot >= 2:
                assert notes[i] is None
                np.testing.assert_allclose(
                    [low[i], high[i]], _max_t_oracle(est[i], boot[i], level), rtol=1e-13
                )


@pytest.mark.parametrize("by", ["sex", "race"])
def test_between_groups_from_wide_group_values_equals_from_counts(by: str) -> None:
    df = pfm.load_compas().with_columns(high=pl.col("decile_score") >= 5)
    counts = pfm.confusion_counts(df, y_true="two_year_recid", y_pred="high", by=by)
    reps = pfm.resample_counts(counts, n_resamples=300)
    point = pfm.between_groups(counts)
    from_counts = pfm.with_intervals(point, reps, counts=counts)
    wide = pfm.metrics_from_counts(reps, wide=True)
    assert_frame_equal(pfm.with_intervals(point, wide, counts=counts), from_counts)
    # the wide comparison table holds the group values too (column m)
    compared = pfm.disparities(reps, reference="Female" if by == "sex" else "Caucasian", wide=True)
    assert_frame_equal(pfm.with_intervals(point, compared, counts=counts), from_counts)
    # a wide table without one of the metrics is not the group values: the interval is
    # withheld with the reason, as for any table without them
    partial = pfm.with_intervals(point, wide.drop("accuracy"), counts=counts)
    assert partial["difference_ci_low"].null_count() == partial.height
    assert "replicate count table" in str(partial["ci_note"][0])


@pytest.mark.parametrize("n", [1, 2, 3, 19, 1000])
@pytest.mark.parametrize("level", LEVELS)
def test_level_quantile_against_numpy(n: int, level: float) -> None:
    rng = np.random.default_rng(n)
    x = np.vstack([rng.exponential(size=n), rng.integers(0, 3, n).astype(np.float64)])
    np.testing.assert_allclose(
        _level_quantile(x, level), np.quantile(x, level, axis=1), rtol=1e-13, atol=0
    )
