"""Tests of the exact measure-properties engine against a brute-force enumeration.

The oracle below enumerates every 8-tuple ``(tp, fp, tn, fn)`` × 2 groups summing to ``n`` with
plain numpy and evaluates the six measures as reduced fractions. It shares no code with
``polars_fairmetrics.properties``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest

from polars_fairmetrics import properties as P
from polars_fairmetrics.exceptions import InvalidOptionError

# ------------------------------------------------------------------------------------------
# brute-force oracle (plain numpy)
# ------------------------------------------------------------------------------------------


def compositions(n: int, parts: int) -> np.ndarray:
    """All tuples of ``parts`` non-negative integers summing to ``n`` (C(n+parts-1, parts-1))."""
    rows = np.zeros((1, 0), dtype=np.int64)
    remaining = np.array([n], dtype=np.int64)
    for _ in range(parts - 1):
        reps = remaining + 1
        idx = np.repeat(np.arange(rows.shape[0]), reps)
        offsets = np.cumsum(reps) - reps
        part = np.arange(idx.size) - np.repeat(offsets, reps)
        rows = np.column_stack([rows[idx], part])
        remaining = remaining[idx] - part
    return np.column_stack([rows, remaining])


def brute_force(n: int) -> dict[str, np.ndarray]:
    """Per matrix: k, m and (num, den) of each measure as a reduced fraction (den 0 = undefined)."""
    t = compositions(n, 8)
    assert t.shape[0] == math.comb(n + 7, 7)
    tp1, fp1, tn1, fn1, tp2, fp2, tn2, fn2 = t.T
    out: dict[str, np.ndarray] = {
        "k": tp1 + fn1 + tp2 + fn2,
        "m": tp1 + fp1 + tn1 + fn1,
    }
    rates = {
        "accuracy_equality": lambda tp, fp, tn, fn: (tp + tn, tp + fp + tn + fn),
        "statistical_parity": lambda tp, fp, tn, fn: (tp + fp, tp + fp + tn + fn),
        "equal_opportunity": lambda tp, fp, tn, fn: (tp, tp + fn),
        "predictive_equality": lambda tp, fp, tn, fn: (fp, fp + tn),
        "positive_predictive_parity": lambda tp, fp, tn, fn: (tp, tp + fp),
        "negative_predictive_parity": lambda tp, fp, tn, fn: (tn, tn + fn),
    }
    for name, f in rates.items():
        a, b = f(tp1, fp1, tn1, fn1)
        c, d = f(tp2, fp2, tn2, fn2)
        undefined = (b == 0) | (d == 0)
        num = np.where(undefined, 0, a * d - c * b)
        den = np.where(undefined, 0, b * d)
        g = np.gcd(num, den)
        g[g == 0] = 1
        out[name] = np.column_stack([num // g, den // g])
    return out


def brute_pmf(n: int, measure: str) -> dict[tuple[int, int, int, int], int]:
    """{(k, m, num, den): count}, with (num, den) = (0, 0) for undefined."""
    bf = brute_force(n)
    return brute_pmf_from(bf, n, measure)


def brute_pmf_from(
    bf: dict[str, np.ndarray], n: int, measure: str
) -> dict[tuple[int, int, int, int], int]:
    """Group the brute-force values by one integer code per (k, m, num, den)."""
    sq = n * n
    num, den = bf[measure][:, 0], bf[measure][:, 1]
    code = ((bf["k"] * (n + 1) + bf["m"]) * (2 * sq + 1) + (num + sq)) * (sq + 1) + den
    uniq, counts = np.unique(code, return_counts=True)
    den_u = uniq % (sq + 1)
    rest = uniq // (sq + 1)
    num_u = rest % (2 * sq + 1) - sq
    km = rest // (2 * sq + 1)
    return {
        (int(a // (n + 1)), int(a % (n + 1)), int(b), int(c)): int(d)
        for a, b, c, d in zip(km, num_u, den_u, counts, strict=True)
    }


def engine_pmf(pmf: pl.DataFrame, measure: str) -> dict[tuple[int, int, int, int], int]:
    sub = pmf.filter(pl.col("measure") == measure)
    return {
        (k, m, 0 if num is None else num, 0 if den is None else den): c
        for k, m, num, den, c in sub.select(
            "positives", "protected", "num", "den", "count"
        ).iter_rows()
    }


ALL_CELLS = "all"


def all_cells(n: int) -> list[tuple[int, int]]:
    return [(k, m) for k in range(n + 1) for m in range(n + 1)]


# ------------------------------------------------------------------------------------------
# exactness against brute force
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", list(range(1, 21)))
def test_pmf_equals_brute_force_every_cell_every_value(n: int) -> None:
    pmf = P.cell_pmf(n, cells=all_cells(n))
    bf = brute_force(n)
    for measure in P.MEASURES:
        expected = brute_pmf_from(bf, n, measure)
        got = engine_pmf(pmf, measure)
        assert got == expected, (n, measure)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 12, 20])
def test_summary_equals_brute_force(n: int) -> None:
    bf = brute_force(n)
    summary = P.cell_summary(n)
    assert summary.height == 6 * (n + 1) ** 2
    for measure in P.MEASURES:
        vals = bf[measure]
        frame = pl.DataFrame(
            {
                "positives": bf["k"],
                "protected": bf["m"],
                "undef": vals[:, 1] == 0,
                "zero": (vals[:, 0] == 0) & (vals[:, 1] != 0),
            }
        )
        expected = (
            frame.group_by("positives", "protected")
            .agg(
                pl.len().cast(pl.Int64).alias("matrices"),
                pl.col("undef").sum().cast(pl.Int64).alias("undefined"),
                pl.col("zero").sum().cast(pl.Int64).alias("perfect"),
            )
            .sort("positives", "protected")
        )
        got = (
            summary.filter(pl.col("measure") == measure, pl.col("matrices") > 0)
            .select("positives", "protected", "matrices", "undefined", "perfect")
            .sort("positives", "protected")
        )
        assert got.equals(expected), (n, measure)


@pytest.mark.parametrize("n", [5, 13, 20])
def test_group_table_counts(n: int) -> None:
    t = P.group_rate_table(n)
    per = t.group_by("measure", "size", "positives").agg(pl.col("count").sum())
    bad = per.filter(
        pl.col("count") != (pl.col("positives") + 1) * (pl.col("size") - pl.col("positives") + 1)
    )
    assert bad.height == 0
    assert per.height == 6 * (n + 1) * (n + 2) // 2


# ------------------------------------------------------------------------------------------
# the paper's identities, exactly
# ------------------------------------------------------------------------------------------


def _keyed(pmf: pl.DataFrame, measure: str, n: int, mirror_ir: bool) -> pl.DataFrame:
    sub = pmf.filter(pl.col("measure") == measure).select(
        "positives", "protected", "num", "den", "count"
    )
    if mirror_ir:
        sub = sub.with_columns((n - pl.col("positives")).alias("positives"))
    return sub.sort("positives", "protected", "num", "den", nulls_last=True)


@pytest.mark.parametrize("n", [9, 16, 24])
def test_identities_exact(n: int) -> None:
    pmf = P.cell_pmf(n, cells=all_cells(n))
    for a, b, mirror in [
        ("accuracy_equality", "statistical_parity", False),
        ("equal_opportunity", "predictive_equality", True),
        ("positive_predictive_parity", "negative_predictive_parity", True),
    ]:
        assert _keyed(pmf, a, n, False).equals(_keyed(pmf, b, n, mirror)), (a, b)
    s = P.cell_summary(n)
    for a, b, mirror in [
        ("accuracy_equality", "statistical_parity", False),
        ("equal_opportunity", "predictive_equality", True),
        ("positive_predictive_parity", "negative_predictive_parity", True),
    ]:
        sa = s.filter(pl.col("measure") == a).select(
            "positives", "protected", "undefined", "perfect"
        )
        sb = s.filter(pl.col("measure") == b).select(
            "positives", "protected", "undefined", "perfect"
        )
        if mirror:
            sb = sb.with_columns((n - pl.col("positives")).alias("positives"))
        assert sa.sort("positives", "protected").equals(sb.sort("positives", "protected"))


def test_summary_consistent_with_pmf_n56_grid() -> None:
    n = 56
    analysis = P.analyze_measure_properties(n)
    pmf = analysis.pmf
    from_pmf = pmf.group_by("measure", "positives", "protected").agg(
        pl.col("count").sum().alias("matrices"),
        pl.col("count").filter(pl.col("num").is_null()).sum().alias("undefined"),
        pl.col("count").filter(pl.col("num") == 0).sum().alias("perfect"),
    )
    joined = from_pmf.join(analysis.summary, on=["measure", "positives", "protected"], suffix="_s")
    assert joined.height == 6 * 25
    for col in ("matrices", "undefined", "perfect"):
        assert (joined[col] == joined[f"{col}_s"]).all()
    assert (
        analysis.summary.filter(pl.col("measure") == "accuracy_equality")["matrices"].sum()
        == math.comb(63, 7)
        == 553_270_671
    )


# ------------------------------------------------------------------------------------------
# marginals, probabilities, nulls
# ------------------------------------------------------------------------------------------


def test_marginals_sum_over_other_ratio() -> None:
    s = P.cell_summary(10)
    for by, key, other in (("ir", "positives", "protected"), ("gr", "protected", "positives")):
        marg = P.marginal_summary(s, by=by)
        assert marg.height == 6 * 11
        expected = s.group_by("measure", key).agg(pl.col("perfect").sum(), pl.col("matrices").sum())
        joined = marg.join(expected, on=["measure", key], suffix="_e")
        assert (joined["perfect"] == joined["perfect_e"]).all()
        assert (joined["matrices"] == joined["matrices_e"]).all()
        assert other not in marg.columns
        assert marg["p_perfect"].is_nan().sum() == 0


def test_undefined_is_null_never_nan() -> None:
    pmf = P.cell_pmf(6, cells=all_cells(6))
    assert pmf["value"].is_nan().sum() == 0
    assert pmf["value"].null_count() > 0
    assert (pmf["num"].is_null() == pmf["value"].is_null()).all()
    s = P.cell_summary(6)
    assert s["p_perfect"].is_nan().sum() == 0


def test_ae_undefined_only_when_a_group_is_missing() -> None:
    s = P.cell_summary(12, measures="accuracy_equality")
    undefined = s.filter(pl.col("undefined") > 0)
    assert set(undefined["protected"].to_list()) == {0, 12}
    assert (undefined["undefined"] == undefined["matrices"]).all()


def test_probabilities_sum_to_one() -> None:
    pmf = P.cell_pmf(14, cells=[(1, 7), (7, 1), (7, 7)])
    sums = pmf.group_by("measure", "positives", "protected").agg(pl.col("probability").sum())
    assert np.allclose(sums["probability"].to_numpy(), 1.0)


def test_resolution_counts_distinct_values() -> None:
    pmf = P.cell_pmf(8, cells=[(4, 4)], measures="accuracy_equality")
    r = P.resolution(pmf)
    # a/4 - b/4 for a, b in 0..4: the 9 values -1, -3/4, ..., 1
    assert r["distinct_values"].to_list() == [9]


# ------------------------------------------------------------------------------------------
# ratios, validation
# ------------------------------------------------------------------------------------------


def test_paper_ratio_counts() -> None:
    assert P.paper_ratio_counts(56) == [2, 14, 28, 42, 54]
    cells = P.cells_from_ratios(56, ir=[Fraction(1, 28), Fraction(27, 28)], gr=[0.25])
    assert cells == [(2, 14), (54, 14)]


def test_bad_options() -> None:
    with pytest.raises(InvalidOptionError, match="whole number"):
        P.cells_from_ratios(10, ir=[0.25], gr=[0.5])
    with pytest.raises(InvalidOptionError, match="unknown measure"):
        P.cell_summary(5, measures="accuracy")
    with pytest.raises(InvalidOptionError, match="at least 1"):
        P.cell_summary(0)
    with pytest.raises(InvalidOptionError, match="outside"):
        P.cell_pmf(5, cells=[(6, 1)])
    with pytest.raises(InvalidOptionError, match="overflows"):
        P.cell_summary(10**6)
