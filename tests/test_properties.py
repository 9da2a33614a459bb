"""Tests of the exact measure-properties engine against a brute-force enumeration.

The oracle below enumerates every 8-tuple ``(tp, fp, tn, fn)`` × 2 groups summing to ``n`` with
plain numpy and evaluates the six measures as reduced fractions. It shares no code with
``polars_fairmetrics.properties``.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


@functools.lru_cache(maxsize=24)
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
    sub = pmf.filter(pl.col("metric") == measure)
    return {
        (k, m, 0 if num is None else num, 0 if den is None else den): c
        for k, m, num, den, c in sub.select(
            "positives", "protected", "num", "den", "count"
        ).iter_rows()
    }


def all_cells(n: int) -> list[tuple[int, int]]:
    return [(k, m) for k in range(n + 1) for m in range(n + 1)]


def brute_cells(n: int, measure: str) -> dict[tuple[int, int], dict[tuple[int, int], int]]:
    """{(k, m): {(num, den): count}} with (0, 0) for the undefined atom, every cell."""
    out: dict[tuple[int, int], dict[tuple[int, int], int]] = {}
    for (k, m, num, den), c in brute_pmf(n, measure).items():
        out.setdefault((k, m), {})[(num, den)] = c
    return out


def oracle_compare(
    a: dict[tuple[int, int], int], b: dict[tuple[int, int], int], negate: bool
) -> tuple[bool, Fraction]:
    """Identical PMFs and TV distance with exact fractions (b's values negated if asked)."""
    if negate:
        b = {((-num, den) if den else (0, 0)): c for (num, den), c in b.items()}
    ta, tb = sum(a.values()), sum(b.values())
    keys = set(a) | set(b)
    pa = {v: Fraction(a.get(v, 0), ta) for v in keys}
    pb = {v: Fraction(b.get(v, 0), tb) for v in keys}
    tv = sum((abs(pa[v] - pb[v]) for v in keys), Fraction(0)) / 2
    return all(pa[v] == pb[v] for v in keys), tv


def is_sorted_frame(frame: pl.DataFrame, keys: list[str]) -> bool:
    order = pl.col("metric").replace_strict({m: i for i, m in enumerate(P.MEASURES)})
    return frame.equals(frame.sort(order, *keys, nulls_last=True, maintain_order=True))


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
    assert is_sorted_frame(pmf, ["positives", "protected", "value"])
    assert pmf.columns[0] == "metric" and "measure" not in pmf.columns


@pytest.mark.parametrize("n", list(range(1, 21)))
def test_summary_equals_brute_force(n: int) -> None:
    bf = brute_force(n)
    summary = P.cell_summary(n)
    assert summary.height == 6 * (n + 1) ** 2
    assert is_sorted_frame(summary, ["positives", "protected"])
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
            summary.filter(pl.col("metric") == measure, pl.col("matrices") > 0)
            .select("positives", "protected", "matrices", "undefined", "perfect")
            .sort("positives", "protected")
        )
        assert got.equals(expected), (n, measure)


@pytest.mark.parametrize("n", [1, 2, 5, 9, 13])
def test_group_rate_table_equals_enumeration(n: int) -> None:
    """Every per-group 4-tuple enumerated in plain Python, rates as Fractions."""
    rates = {
        "accuracy_equality": lambda tp, fp, tn, fn: (tp + tn, tp + fp + tn + fn),
        "statistical_parity": lambda tp, fp, tn, fn: (tp + fp, tp + fp + tn + fn),
        "equal_opportunity": lambda tp, fp, tn, fn: (tp, tp + fn),
        "predictive_equality": lambda tp, fp, tn, fn: (fp, fp + tn),
        "positive_predictive_parity": lambda tp, fp, tn, fn: (tp, tp + fp),
        "negative_predictive_parity": lambda tp, fp, tn, fn: (tn, tn + fn),
    }
    table = P.group_rate_table(n)
    assert is_sorted_frame(table.with_columns(v=pl.col("num") / pl.col("den")), [])
    for measure, f in rates.items():
        expected: dict[tuple[int, int, int | None, int | None], int] = {}
        for s in range(n + 1):
            for p in range(s + 1):
                for tp in range(p + 1):
                    for fp in range(s - p + 1):
                        a, b = f(tp, fp, s - p - fp, p - tp)
                        v = Fraction(a, b) if b else None
                        key = (
                            s,
                            p,
                            None if v is None else v.numerator,
                            None if v is None else v.denominator,
                        )
                        expected[key] = expected.get(key, 0) + 1
        sub = table.filter(pl.col("metric") == measure)
        got = {(s, p, a, b): c for _, s, p, a, b, c in sub.iter_rows()}
        assert got == expected, (n, measure)
        # within (size, positives): undefined first, then values ascending
        for (_s, _p), part in sub.group_by("size", "positives", maintain_order=True):
            vals = [
                None if a is None else Fraction(a, b)
                for a, b in part.select("num", "den").iter_rows()
            ]
            defined = [v for v in vals if v is not None]
            assert vals[: len(vals) - len(defined)] == [None] * (len(vals) - len(defined))
            assert defined == sorted(defined)


def test_float_and_int_products_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Int64 path (used when counts reach 2**53) gives the Float64 path's numbers."""
    n = 11
    float_pmf = P.cell_pmf(n, cells=all_cells(n))
    float_summary = P.cell_summary(n)
    monkeypatch.setattr(P, "_dtype", lambda n: np.int64)
    assert P.cell_pmf(n, cells=all_cells(n)).equals(float_pmf)
    assert P.cell_summary(n).equals(float_summary)


@settings(max_examples=min(settings().max_examples, 60))
@given(
    n=st.integers(1, 14),
    data=st.data(),
)
def test_random_cells_and_measures_equal_brute_force(n: int, data: st.DataObject) -> None:
    cells = data.draw(
        st.lists(st.tuples(st.integers(0, n), st.integers(0, n)), min_size=1, max_size=6)
    )
    measures = data.draw(st.lists(st.sampled_from(P.MEASURES), min_size=1, max_size=6, unique=True))
    pmf = P.cell_pmf(n, cells=cells, measures=measures)
    assert list(dict.fromkeys(pmf["metric"].to_list())) == [m for m in P.MEASURES if m in measures]
    bf = brute_force(n)
    for measure in measures:
        expected = {
            key: c for key, c in brute_pmf_from(bf, n, measure).items() if key[:2] in set(cells)
        }
        assert engine_pmf(pmf, measure) == expected
    sums = pmf.group_by("metric", "positives", "protected").agg(pl.col("probability").sum())
    assert np.allclose(sums["probability"].to_numpy(), 1.0)


# ------------------------------------------------------------------------------------------
# the property decisions against exact fractions
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "grid"), [(6, (1, 3, 5)), (8, (0, 2, 4, 6, 8)), (12, None), (9, (2, 4, 7))]
)
def test_comparisons_equal_exact_fraction_oracle(n: int, grid: tuple[int, ...] | None) -> None:
    counts = tuple(P.paper_ratio_counts(n)) if grid is None else grid
    mid = min(counts, key=lambda c: (abs(2 * c - n), c))
    cells = [(k, m) for k in counts for m in counts]
    mis = list(range(6))
    pmfs = P._pmf_cells(n, mis, cells)
    kinds = {
        0: [(mid, m, k, m, False) for m in counts for k in counts if k != mid],
        1: [(k, mid, k, m, False) for k in counts for m in counts if m != mid],
        2: [(k, m, k, m, True) for k, m in cells],
        3: [(k, m, n - k, m, False) for k, m in cells if n - k in counts],
        4: [(k, m, k, n - m, False) for k, m in cells if n - m in counts],
    }
    pairs = [(kind, mi, *p) for mi in mis for kind, ps in kinds.items() for p in ps]
    got = P._compare(n, pmfs, pairs)
    for mi in mis:
        oracle = brute_cells(n, P.MEASURES[mi])
        for kind, ps in kinds.items():
            results = [
                oracle_compare(oracle[(ka, ma)], oracle[(kb, mb)], neg)
                for ka, ma, kb, mb, neg in ps
            ]
            if not results:
                assert (kind, mi) not in got
                continue
            total, differ, tv = got[(kind, mi)]
            assert total == len(results)
            assert differ == sum(not same for same, _ in results), (kind, mi)
            assert tv == pytest.approx(float(max(t for _, t in results)), abs=1e-12)


def test_properties_sorted_and_named() -> None:
    props = P.measure_properties(12, measures=["equal_opportunity", "accuracy_equality"])
    assert props.columns == ["metric", "property", "holds", "evidence", "rule"]
    assert props["metric"].to_list() == ["accuracy_equality"] * 8 + ["equal_opportunity"] * 8
    assert props["property"].to_list() == list(P.PROPERTIES) * 2


@pytest.mark.parametrize("n", [1, 2, 3])
def test_tiny_n_is_defined(n: int) -> None:
    a = P.analyze_measure_properties(n)
    assert a.summary["matrices"].sum() == 6 * math.comb(n + 7, 7)
    props = a.properties
    assert props.height == 48
    undecided = props.filter(pl.col("holds").is_null())
    assert (undecided["evidence"].str.contains("not decided")).all()
    table = P.properties_table(props)
    assert table.height == 8
    if n == 1:  # every matrix has an empty group: nothing is measurable
        assert (a.summary["undefined"] == a.summary["matrices"]).all()
        assert a.summary["p_perfect"].null_count() == a.summary.height
        assert set(undecided["property"]) == {"Resolution Stability", "Perfect Fairness Stability"}
        assert "–" in table.row(2)


def test_undecidable_grids_give_null_not_false() -> None:
    single = P.measure_properties(10, counts=[5], measures="accuracy_equality")
    by = dict(single.select("property", "holds").iter_rows())
    assert by["Immunity to IR changes"] is None and by["Immunity to GR changes"] is None
    assert by["Fairness Symmetry"] is True
    lopsided = P.measure_properties(10, counts=[2, 5], measures="accuracy_equality")
    by = dict(lopsided.select("property", "holds").iter_rows())
    assert by["IR Symmetry"] is None and by["GR Symmetry"] is None
    extremes = P.measure_properties(10, counts=[0, 10], measures="equal_opportunity")
    by = dict(extremes.select("property", "holds").iter_rows())
    assert by["Perfect Fairness Stability"] is None


# ------------------------------------------------------------------------------------------
# the paper's identities, exactly
# ------------------------------------------------------------------------------------------


def _keyed(pmf: pl.DataFrame, measure: str, n: int, mirror_ir: bool) -> pl.DataFrame:
    sub = pmf.filter(pl.col("metric") == measure).select(
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
        sa = s.filter(pl.col("metric") == a).select(
            "positives", "protected", "undefined", "perfect"
        )
        sb = s.filter(pl.col("metric") == b).select(
            "positives", "protected", "undefined", "perfect"
        )
        if mirror:
            sb = sb.with_columns((n - pl.col("positives")).alias("positives"))
        assert sa.sort("positives", "protected").equals(sb.sort("positives", "protected"))


def test_summary_consistent_with_pmf_n56_grid() -> None:
    n = 56
    analysis = P.analyze_measure_properties(n)
    pmf = analysis.pmf
    from_pmf = pmf.group_by("metric", "positives", "protected").agg(
        pl.col("count").sum().alias("matrices"),
        pl.col("count").filter(pl.col("num").is_null()).sum().alias("undefined"),
        pl.col("count").filter(pl.col("num") == 0).sum().alias("perfect"),
    )
    joined = from_pmf.join(analysis.summary, on=["metric", "positives", "protected"], suffix="_s")
    assert joined.height == 6 * 25
    for col in ("matrices", "undefined", "perfect"):
        assert (joined[col] == joined[f"{col}_s"]).all()
    assert (
        analysis.summary.filter(pl.col("metric") == "accuracy_equality")["matrices"].sum()
        == math.comb(63, 7)
        == 553_270_671
    )
    # the paper's Table 1 as documented in docs/properties.md
    table = P.properties_table(analysis.properties)
    marks = {row[0]: row[1:7] for row in table.iter_rows()}
    assert marks["Resolution Stability"] == ("✓", "✓", "✗", "✗", "✗", "✗")
    assert marks["Fairness Symmetry"] == ("✓", "✓", "✓", "✓", "✗", "✗")
    assert marks["IR Symmetry"] == ("✓", "✓", "✗", "✗", "✗", "✗")
    assert marks["GR Symmetry"] == ("✓", "✓", "✓", "✓", "✗", "✗")
    assert marks["Perfect Fairness Stability"] == ("✓", "✓", "✗", "✗", "✗", "✗")
    assert marks["Undefined Values"][2] == "✗ low/high GR, low IR"
    for frame, keys in (
        (analysis.by_ir, ["positives"]),
        (analysis.by_gr, ["protected"]),
        (analysis.resolution, ["positives", "protected"]),
    ):
        assert is_sorted_frame(frame, keys)


# ------------------------------------------------------------------------------------------
# marginals, probabilities, nulls (0/0 is null, never 0)
# ------------------------------------------------------------------------------------------


def test_marginals_sum_over_other_ratio() -> None:
    s = P.cell_summary(10)
    for by, key, other in (("ir", "positives", "protected"), ("gr", "protected", "positives")):
        marg = P.marginal_summary(s, by=by)
        assert marg.height == 6 * 11
        expected = s.group_by("metric", key).agg(pl.col("perfect").sum(), pl.col("matrices").sum())
        joined = marg.join(expected, on=["metric", key], suffix="_e")
        assert (joined["perfect"] == joined["perfect_e"]).all()
        assert (joined["matrices"] == joined["matrices_e"]).all()
        assert other not in marg.columns
        assert marg["p_perfect"].is_nan().sum() == 0


@pytest.mark.parametrize("n", [1, 4, 9])
def test_every_probability_column_is_null_exactly_where_undefined(n: int) -> None:
    """p_perfect is perfect / matrices where a matrix is defined, and null where none is."""
    s = P.cell_summary(n)
    frames = [s, P.marginal_summary(s, by="ir"), P.marginal_summary(s, by="gr")]
    for frame in frames:
        for row in frame.iter_rows(named=True):
            defined = row["matrices"] - row["undefined"]
            if defined == 0:
                assert row["p_perfect"] is None, row
            else:
                assert row["p_perfect"] == row["perfect"] / row["matrices"]
            assert row["p_undefined"] == row["undefined"] / row["matrices"]
        assert frame["p_perfect"].is_nan().sum() == 0
    pmf = P.cell_pmf(n, cells=all_cells(n))
    assert pmf["probability"].null_count() == 0 and pmf["probability"].is_nan().sum() == 0
    # EO at one actual positive: one group has none, so every matrix is undefined
    eo = s.filter(pl.col("metric") == "equal_opportunity", pl.col("positives") <= 1)
    assert eo["p_perfect"].null_count() == eo.height


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
    sums = pmf.group_by("metric", "positives", "protected").agg(pl.col("probability").sum())
    assert np.allclose(sums["probability"].to_numpy(), 1.0)


def test_resolution_counts_distinct_values() -> None:
    pmf = P.cell_pmf(8, cells=[(4, 4)], measures="accuracy_equality")
    r = P.resolution(pmf)
    # a/4 - b/4 for a, b in 0..4: the 9 values -1, -3/4, ..., 1
    assert r["distinct_values"].to_list() == [9]
    assert r.schema["distinct_values"] == pl.Int64


# ------------------------------------------------------------------------------------------
# sizes: the estimate and the budget
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 7, 20, 33])
def test_estimate_counts_the_work_exactly(n: int) -> None:
    est = P.estimate_properties_cost(n, what="rate_table")
    assert est.work["table_rows"] == P.group_rate_table(n).height
    grid = P.paper_ratio_counts(n)
    pmf = P.cell_pmf(n)
    est = P.estimate_properties_cost(n, what="pmf")
    assert est.work["pmf_rows"] >= pmf.height  # an upper bound (15 % of the value pairs)
    assert (
        P.estimate_properties_cost(n, what="pmf", cells=[(k, m) for k in grid for m in grid]) == est
    )
    fs = P._farey_sizes(n)
    assert fs[n] == len({Fraction(a, b) for b in range(1, n + 1) for a in range(b + 1)})


def test_estimate_grows_and_describes() -> None:
    small, paper, large = (P.estimate_properties_cost(n) for n in (20, 56, 300))
    assert small.seconds < paper.seconds < 1.5 < 20 < large.seconds
    assert small.memory_bytes < paper.memory_bytes < large.memory_bytes
    assert P.estimate_properties_cost(120).seconds < 20
    assert paper.describe().startswith("under 1 s and ")
    assert large.describe() == "about 5 min and 39.1 GiB"


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda: P.analyze_measure_properties(300),
            r"n = 300: the analysis would take about 5 min and 39.1 GiB "
            r"\(estimate_properties_cost\(300, what='analysis'\)\), over the time limit "
            r"max_seconds=120",
        ),
        (
            lambda: P.measure_properties(56, max_seconds=0.01),
            r"n = 56: the analysis would take under 1 s .* over the time limit max_seconds=0.01",
        ),
        (
            lambda: P.cell_summary(56, max_memory_gib=0.001),
            r"n = 56: the summary would need .* over the memory limit 1.0 MiB "
            r"\(max_memory_gib=0.001\)",
        ),
        (lambda: P.cell_pmf(300), r"n = 300: the pmf would take about 3 min"),
        (lambda: P.group_rate_table(400), r"n = 400: the rate_table would take"),
        (
            lambda: P.cell_summary(10, max_seconds=-1),
            r"max_seconds must be a finite number ≥ 0.0, got -1",
        ),
        (
            lambda: P.cell_summary(10, max_memory_gib=float("nan")),
            r"max_memory_gib must be a finite number",
        ),
    ],
)
def test_budget_refuses_up_front(call, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidOptionError, match=match):
        call()


def test_no_limit_runs() -> None:
    assert P.cell_summary(5, max_seconds=None, max_memory_gib=None).height == 6 * 36


# ------------------------------------------------------------------------------------------
# ratios, validation
# ------------------------------------------------------------------------------------------


def test_paper_ratio_counts() -> None:
    assert P.paper_ratio_counts(56) == [2, 14, 28, 42, 54]
    assert P.paper_ratio_counts(1) == [0, 1]
    assert P.paper_ratio_counts(3) == [1, 2]
    cells = P.cells_from_ratios(56, ir=[Fraction(1, 28), Fraction(27, 28)], gr=[0.25])
    assert cells == [(2, 14), (54, 14)]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: P.cells_from_ratios(10, ir=[0.25], gr=[0.5]), "whole number"),
        (lambda: P.cells_from_ratios(10, ir=[float("nan")], gr=[0.5]), "not a finite number"),
        (lambda: P.cells_from_ratios(10, ir=["0.5"], gr=[0.5]), "is not a number"),
        (lambda: P.cell_summary(5, measures="accuracy"), "unknown measure"),
        (lambda: P.cell_summary(5, measures=[]), "measures is empty"),
        (lambda: P.cell_summary(5, measures=["accuracy_equality"] * 2), "listed twice"),
        (lambda: P.cell_summary(0), "at least 1"),
        (lambda: P.cell_summary(2.0), "n must be an integer, got 2.0"),
        (lambda: P.cell_summary(True), "n must be an integer, got True"),
        (lambda: P.cell_pmf(5, cells=[(6, 1)]), "outside"),
        (lambda: P.cell_pmf(5, cells=[]), "cells is empty"),
        (lambda: P.cell_pmf(5, cells=[(1.5, 2)]), "not a pair of integers"),
        (lambda: P.cell_pmf(5, cells=[(1, 2, 3)]), "not a pair of integers"),
        (lambda: P.cell_summary(10**6), "overflows"),
        (lambda: P.analyze_measure_properties(10, counts=[]), "counts is empty"),
        (
            lambda: P.analyze_measure_properties(10, counts=[2.5]),
            "grid count 2.5 is not an integer",
        ),
        (
            lambda: P.analyze_measure_properties(10, counts=[11]),
            r"grid count 11 is outside \[0, 10\]",
        ),
        (lambda: P.analyze_measure_properties(10, counts=[-1]), "outside"),
        (lambda: P.analyze_measure_properties(10, counts=5), "counts must be a list"),
        (lambda: P.analyze_measure_properties(10, resolution_ratio=2), "resolution_ratio must be"),
        (lambda: P.analyze_measure_properties(10, perfect_ratio=0.5), "perfect_ratio must be"),
        (lambda: P.analyze_measure_properties(10, undefined_level=float("nan")), "undefined_level"),
        (lambda: P.estimate_properties_cost(10, what="all"), "what must be"),
        (lambda: P.marginal_summary(pl.DataFrame({"x": [1]}), by="ir"), "missing"),
        (lambda: P.marginal_summary(P.cell_summary(3), by="k"), "by must be"),
    ],
)
def test_bad_options(call, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidOptionError, match=match):
        call()


def test_numpy_integers_accepted() -> None:
    a = P.cell_pmf(np.int64(6), cells=[(np.int64(3), np.int32(2))], measures="equal_opportunity")
    b = P.cell_pmf(6, cells=[(3, 2)], measures="equal_opportunity")
    assert a.equals(b)
    assert P.measure_properties(8, counts=np.array([2, 4, 6])).equals(
        P.measure_properties(8, counts=[6, 4, 2, 4])
    )
