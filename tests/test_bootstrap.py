"""Bootstrap intervals: oracles written here in numpy, sharing no code with the package.

- interval formulas against numpy quantiles (with undefined replicates and withdrawn rows);
- the count engine's draws: totals, exact replicate 0, multinomial moments, thresholds, several
  attributes side by side, weighted sums from sums of squares, empty tables, seeds;
- ``with_intervals`` against replicate statistics computed by hand in numpy, typed keys with a
  null group, lazy in / lazy out, both engines;
- non-smooth statistics: the max-t interval against an independent numpy implementation, the
  COMPAS between-groups example, coverage at a true gap of 0, property tests (hypothesis) that
  every such interval contains its estimate;
- ``bootstrap_metrics`` equals its building blocks; the two engines agree within Monte Carlo
  error (continuous weights included); BCa against scipy; the bias-adjusted AUPR by brute force.

The guide docs/uncertainty.md is executed by tests/test_docs.py; the coverage of every interval
kind is measured by benchmarks/coverage_study.py (docs/coverage.md).
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_fairmetrics as pfm
from polars_fairmetrics import bootstrap as boot_mod
from polars_fairmetrics.bootstrap import (
    bootstrap_counts,
    bootstrap_metrics,
    bootstrap_rows,
    intervals,
    resample_counts,
    with_intervals,
)
from polars_fairmetrics.exceptions import FairMetricsError, InvalidOptionError

# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def make_rows(
    n: int, seed: int, *, groups: tuple[str, ...] = ("a", "b", "c", "d"), weights: str = ""
) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(groups), n)
    base = {"a": 0.3, "b": 0.4, "c": 0.5, "d": 0.35}
    y = rng.random(n) < np.array([base.get(x, 0.4) for x in g])
    acc = {"a": 0.85, "b": 0.75, "c": 0.8, "d": 0.7}
    p = np.where(rng.random(n) < np.array([acc.get(x, 0.8) for x in g]), y, ~y)
    cols: dict[str, Any] = {"g": g, "y": y.astype(np.int8), "p": p.astype(np.int8)}
    if weights == "levels":
        cols["w"] = rng.choice(np.array([0.5, 1.0, 2.5]), n)
    elif weights == "continuous":
        cols["w"] = np.exp(rng.normal(0.0, 0.8, n)) * np.where(y, 1.5, 1.0)
    return pl.DataFrame(cols)


def _quantile_mc_se(sd: float, alpha: float, b: int) -> float:
    """Monte Carlo standard error of a bootstrap α/2 quantile (normal approximation)."""
    p = alpha / 2
    z = NormalDist().inv_cdf(p)
    return sd * math.sqrt(p * (1 - p) / b) / NormalDist().pdf(z)


def compas_counts(by: str | list[str], separately: bool = False) -> pl.DataFrame:
    df = pfm.scan_compas().with_columns(high=pl.col("decile_score") >= 5)
    out = pfm.confusion_counts(
        df, y_true="two_year_recid", y_pred="high", by=by, separately=separately
    )
    assert isinstance(out, pl.LazyFrame)
    return out.collect()


# ---------------------------------------------------------------------------------------------
# interval formulas
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", [0.95, 0.8, 0.5])
def test_interval_formulas_match_numpy(level: float) -> None:
    rng = np.random.default_rng(3)
    b = 301
    frames = []
    truth = {}
    for key in ("k1", "k2", "k3"):
        vals = rng.normal(size=b + 1)
        mask = rng.random(b + 1) < (0.05 if key != "k3" else 0.5)
        mask[0] = False
        values = [None if m else float(v) for v, m in zip(vals, mask, strict=True)]
        frames.append(pl.DataFrame({"key": key, "replicate": np.arange(b + 1), "value": values}))
        defined = vals[1:][~mask[1:]]
        a = 1 - level
        lo, hi = np.quantile(defined, [a / 2, 1 - a / 2])
        truth[key] = (vals[0], lo, hi, defined.size)
    reps = pl.concat(frames).sample(fraction=1.0, shuffle=True, seed=1)
    pct = intervals(reps, level=level)
    basic = intervals(reps, level=level, method="basic")
    assert pct["key"].to_list() == ["k1", "k2", "k3"]
    for row_p, row_b in zip(pct.iter_rows(named=True), basic.iter_rows(named=True), strict=True):
        est, lo, hi, nd = truth[row_p["key"]]
        assert row_p["value"] == pytest.approx(est)
        assert row_p["n_defined"] == nd and row_p["n_resamples"] == b
        assert (row_p["ci_method"], row_b["ci_method"]) == ("percentile", "basic")
        if row_p["key"] == "k3":  # defined in about half of the resamples: withdrawn
            assert row_p["ci_low"] is None and row_b["ci_high"] is None
            assert "defined in only" in row_p["ci_note"]
            continue
        assert row_p["ci_note"] is None
        assert row_p["ci_low"] == pytest.approx(lo, abs=1e-12)
        assert row_p["ci_high"] == pytest.approx(hi, abs=1e-12)
        # basic = the document's  x̄ − δ_{1−α/2}, x̄ − δ_{α/2}  with δ = x* − x̄
        assert row_b["ci_low"] == pytest.approx(est - (hi - est), abs=1e-12)
        assert row_b["ci_high"] == pytest.approx(est - (lo - est), abs=1e-12)


def test_intervals_lazy_and_missing_rows_count_as_undefined() -> None:
    reps = pl.DataFrame(
        {
            "k": ["x", "x", "x", "y", "y"],
            "replicate": [0, 1, 2, 0, 2],
            "value": [1.0, 2.0, 3.0, 5.0, 6.0],
        }
    )
    lazy = intervals(reps.lazy())
    assert isinstance(lazy, pl.LazyFrame)
    out = lazy.collect()
    assert out.schema == lazy.collect_schema()
    assert out["n_resamples"].to_list() == [2, 2]
    assert out["n_defined"].to_list() == [2, 1]  # y has no row in replicate 1: counted
    assert out["ci_low"].to_list() == [pytest.approx(2.025), None]
    assert out.equals(intervals(reps))


# ---------------------------------------------------------------------------------------------
# resample_counts
# ---------------------------------------------------------------------------------------------


def test_resample_counts_totals_observed_and_moments() -> None:
    df = make_rows(3000, 1)
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    b = 4000
    plain = resample_counts(counts, n_resamples=b, seed=7, include_observed=True)
    assert plain.columns[:2] == ["g", "replicate"]
    obs = plain.filter(pl.col("replicate") == 0).drop("replicate")
    cols = ["g", "tp", "fp", "tn", "fn", "n", "n_null"]
    assert obs.select(cols).equals(counts.select(cols))
    boot = plain.filter(pl.col("replicate") > 0)
    assert boot["replicate"].n_unique() == b
    totals = boot.group_by("replicate").agg(pl.col("n").sum())["n"]
    assert (totals == 3000).all()
    # each cell count is Binomial(N, c/N): mean c, variance N p (1 - p)
    for row in counts.iter_rows(named=True):
        cell = boot.filter(pl.col("g") == row["g"])["tp"].to_numpy()
        p = row["tp"] / 3000
        assert abs(cell.mean() - row["tp"]) < 5 * math.sqrt(3000 * p * (1 - p) / b)
        assert cell.var(ddof=1) == pytest.approx(3000 * p * (1 - p), rel=0.1)
    strat = resample_counts(counts, n_resamples=50, strata="g", seed=7)
    sizes = (
        strat.group_by("replicate", "g")
        .agg(pl.col("n").sum())
        .join(counts.select("g", pl.col("n").alias("n0")), on="g")
    )
    assert (sizes["n"] == sizes["n0"]).all()


def test_resample_counts_reproducible_by_default_and_lazy() -> None:
    counts = pfm.confusion_counts(make_rows(500, 2), y_true="y", y_pred="p", by="g")
    a = resample_counts(counts, n_resamples=20)
    assert a.equals(resample_counts(counts, n_resamples=20, seed=0))  # the default seed is 0
    b = resample_counts(counts.lazy(), n_resamples=20)
    assert isinstance(b, pl.LazyFrame)
    assert b.collect_schema() == a.schema
    assert a.equals(b.collect()) and a.equals(b.collect(engine="streaming"))
    assert not a.equals(resample_counts(counts, n_resamples=20, seed=12))
    fresh = [resample_counts(counts, n_resamples=20, seed=None) for _ in range(2)]
    assert not fresh[0].equals(fresh[1])


def test_resample_thresholded_table_rebuilds_cumulative_counts() -> None:
    rng = np.random.default_rng(5)
    n = 800
    df = pl.DataFrame(
        {
            "g": rng.choice(["a", "b"], n),
            "y": rng.integers(0, 2, n),
            "s": np.round(rng.random(n), 2),
        }
    )
    thr = [0.1, 0.25, 0.5, 0.75, 0.9]
    counts = pfm.confusion_counts(df, y_true="y", y_score="s", threshold=thr, by="g")
    reps = resample_counts(counts, n_resamples=300, strata="g", seed=3, include_observed=True)
    obs = reps.filter(pl.col("replicate") == 0).drop("replicate")
    cols = ["g", "threshold", "tp", "fp", "tn", "fn"]
    assert obs.select(cols).equals(counts.select(cols))
    check = (
        reps.sort("replicate", "g", "threshold")
        .group_by("replicate", "g")
        .agg(
            (pl.col("tp").diff().drop_nulls() <= 0).all().alias("tp_down"),
            (pl.col("fp").diff().drop_nulls() <= 0).all().alias("fp_down"),
            (pl.col("tp") + pl.col("fn")).n_unique().alias("pos_const"),
            pl.col("n").n_unique().alias("n_const"),
        )
    )
    assert check["tp_down"].all() and check["fp_down"].all()
    assert (check["pos_const"] == 1).all() and (check["n_const"] == 1).all()
    boot = reps.filter(pl.col("replicate") > 0, pl.col("g") == "a", pl.col("threshold") == 0.5)
    rows_a = df.filter(pl.col("g") == "a")
    y, s = rows_a["y"].to_numpy(), rows_a["s"].to_numpy()
    r2 = np.random.default_rng(99)
    brute = []
    for _ in range(300):
        i = r2.integers(0, y.size, y.size)
        brute.append(int(((y[i] == 1) & (s[i] >= 0.5)).sum()))
    assert abs(np.mean(brute) - boot["tp"].mean()) < 5 * np.std(brute) / math.sqrt(150)
    assert np.std(brute) == pytest.approx(boot["tp"].std(), rel=0.25)


def test_resample_attributes_side_by_side() -> None:
    """A separately=True table: each attribute resampled alone, on its own stream, with every
    replicate keeping all the rows (n + n_null) of that attribute."""
    df = make_rows(600, 3).with_columns(
        h=pl.Series(np.random.default_rng(1).choice(["x", "y", None], 600)),
        k=pl.Series(np.random.default_rng(2).integers(0, 3, 600)),
    )
    both = pfm.confusion_counts(df, y_true="y", y_pred="p", by=["g", "h"], separately=True)
    other = pfm.confusion_counts(df, y_true="y", y_pred="p", by=["g", "k"], separately=True)
    a = resample_counts(both, n_resamples=40)
    b = resample_counts(other, n_resamples=40)
    assert a.columns[:4] == ["attribute", "g", "h", "replicate"]
    sizes = a.group_by("attribute", "replicate").agg((pl.col("n") + pl.col("n_null")).sum())
    assert set(sizes[sizes.columns[-1]].to_list()) == {600}
    # attribute g has the same draws whichever other attribute is audited
    ga = a.filter(pl.col("attribute") == "g").select("g", "replicate", "tp", "fp", "tn", "fn")
    gb = b.filter(pl.col("attribute") == "g").select("g", "replicate", "tp", "fp", "tn", "fn")
    assert ga.equals(gb)
    # the attributes are independent streams: h's draws are not g's
    assert a.filter(pl.col("attribute") == "h")["h"].null_count() > 0  # the null group of h
    assert a.filter(pl.col("attribute") == "g")["h"].null_count() == ga.height
    # the engine treats replicate as a partition: disparities of the replicates work
    disp = pfm.disparities(a, reference={"g": "a", "h": "x"}, metrics="tpr")
    assert disp["replicate"].n_unique() == 40


def test_resample_empty_and_all_null_tables() -> None:
    df = make_rows(50, 4)
    empty = pfm.confusion_counts(df.clear(), y_true="y", y_pred="p", by="g")
    out = resample_counts(empty, n_resamples=10)
    assert out.height == 0 and out.columns[:2] == ["g", "replicate"]
    nulls = pfm.confusion_counts(
        df.with_columns(y=pl.lit(None, pl.Int8)), y_true="y", y_pred="p", by="g"
    )
    out = resample_counts(nulls, n_resamples=10)
    assert (out["n"] == 0).all()
    assert out.group_by("replicate").agg(pl.col("n_null").sum())["n_null"].to_list() == [50] * 10


@pytest.mark.parametrize("seed", [1.5, -1, True, "0", np.float64(2.0)])
def test_seed_validated(seed: Any) -> None:
    counts = pfm.confusion_counts(make_rows(50, 4), y_true="y", y_pred="p", by="g")
    with pytest.raises(InvalidOptionError, match="seed must be an integer >= 0"):
        resample_counts(counts, seed=seed)
    with pytest.raises(InvalidOptionError, match="seed must be an integer >= 0"):
        bootstrap_metrics(make_rows(50, 4), y_true="y", y_pred="p", by="g", seed=seed)
    assert resample_counts(counts, n_resamples=2, seed=np.int64(3)).height > 0


def test_weighted_sums_from_squares() -> None:
    """Weights constant within a cell: the weighted sums are exactly count × weight. Continuous
    weights: the replicate weighted metric has the exact row bootstrap's spread."""
    df = make_rows(400, 6, weights="levels").with_columns(pl.col("w").alias("w_const"))
    fine = pfm.confusion_counts(
        df, y_true="y", y_pred="p", by=["g", "w"], weight="w_const", weight_squares=True
    )
    reps = resample_counts(fine, n_resamples=30)
    for c in ("tp", "fp", "tn", "fn"):
        assert np.allclose(reps[f"{c}_w"], reps[c] * reps["w"], rtol=1e-12)
    assert np.allclose(reps["n_w"], reps["n"] * reps["w"], rtol=1e-12)
    with pytest.raises(InvalidOptionError, match="weight_squares=True"):
        resample_counts(
            pfm.confusion_counts(df, y_true="y", y_pred="p", by="g", weight="w"), n_resamples=2
        )
    cont = make_rows(600, 7, weights="continuous", groups=("a",))
    counts = pfm.confusion_counts(
        cont, y_true="y", y_pred="p", by="g", weight="w", weight_squares=True
    )
    b = 3000
    tpr = pfm.metrics_from_counts(resample_counts(counts, n_resamples=b), metrics="tpr")
    ours = tpr["value"].to_numpy()
    y, p, w = (cont[c].to_numpy() for c in ("y", "p", "w"))
    rng = np.random.default_rng(1)
    brute = []
    for _ in range(b):
        i = rng.integers(0, y.size, y.size)
        pos = y[i] == 1
        brute.append((w[i] * pos * (p[i] == 1)).sum() / (w[i] * pos).sum())
    assert ours.std() == pytest.approx(np.std(brute), rel=0.08)
    assert abs(ours.mean() - np.mean(brute)) < 5 * np.std(brute) / math.sqrt(b)
    lo, hi = np.quantile(ours, [0.025, 0.975])
    blo, bhi = np.quantile(brute, [0.025, 0.975])
    tol = 4.5 * math.sqrt(2) * _quantile_mc_se(float(np.std(brute)), 0.05, b)
    assert abs(lo - blo) < tol and abs(hi - bhi) < tol


def test_high_cardinality_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(boot_mod, "MAX_DRAW_BYTES", 1 << 16)
    df = pl.DataFrame(
        {"id": np.arange(2000), "y": np.arange(2000) % 2, "p": np.arange(2000) % 3 == 0}
    )
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="id")
    with pytest.raises(InvalidOptionError, match=r"2,000 groups .* GiB .* fewer distinct"):
        resample_counts(counts, n_resamples=100)
    with pytest.raises(InvalidOptionError, match="fewer distinct"):
        bootstrap_metrics(df.lazy(), y_true="y", y_pred="p", by="id", n_resamples=100).collect()


# ---------------------------------------------------------------------------------------------
# with_intervals
# ---------------------------------------------------------------------------------------------


def test_with_intervals_against_numpy_replicates() -> None:
    """Typed integer keys with a null group; the differences against a named reference are
    computed in numpy from the replicate counts; the reference's own rows are exact."""
    rng = np.random.default_rng(8)
    n = 900
    g = rng.choice(np.array([1, 2, 3, -1]), n)
    df = pl.DataFrame(
        {
            "g": pl.Series([None if v < 0 else int(v) for v in g], dtype=pl.Int32),
            "y": rng.integers(0, 2, n),
            "p": rng.integers(0, 2, n),
        }
    )
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    reps = resample_counts(counts, n_resamples=400, seed=5)
    point = pfm.disparities(counts, metrics="tpr", reference=2)
    out = with_intervals(
        point, reps.sample(fraction=1.0, seed=1).pipe(pfm.disparities, metrics="tpr", reference=2)
    )
    assert out["g"].dtype == pl.Int32 and out["g"].to_list() == [1, 2, 3, None]
    r = reps.sort("replicate", "g", nulls_last=True)
    tpr = (r["tp"] / (r["tp"] + r["fn"])).to_numpy().reshape(400, 4)
    diff = tpr - tpr[:, [1]]
    for i, row in enumerate(out.iter_rows(named=True)):
        if row["g"] == 2:
            assert (row["difference_ci_low"], row["difference_ci_high"]) == (0.0, 0.0)
            assert (row["ratio_ci_low"], row["ratio_ci_high"]) == (1.0, 1.0)
        else:
            lo, hi = np.quantile(diff[:, i], [0.025, 0.975])
            assert row["difference_ci_low"] == pytest.approx(lo, abs=1e-12)
            assert row["difference_ci_high"] == pytest.approx(hi, abs=1e-12)
        lo, hi = np.quantile(tpr[:, i], [0.025, 0.975])
        assert (row["ci_low"], row["ci_high"]) == (pytest.approx(lo), pytest.approx(hi))
        assert row["n_resamples"] == 400 and row["n_defined"] == 400
        assert row["ci_level"] == 0.95 and row["ci_method"] == "percentile"
    assert out.columns == [
        "g", "metric", "value", "ci_low", "ci_high", "support", "n", "n_null", "reference",
        "is_reference", "reference_value", "difference", "difference_ci_low",
        "difference_ci_high", "ratio", "ratio_ci_low", "ratio_ci_high", "ci_method", "ci_level",
        "n_resamples", "n_defined", "ci_note",
    ]  # fmt: skip


def test_with_intervals_lazy_streaming_and_kinds() -> None:
    counts = compas_counts(["race", "sex"], separately=True)
    reps = resample_counts(counts.lazy(), n_resamples=200, include_observed=True)
    ref = {"race": "Caucasian", "sex": "Male"}
    tables = {
        "metrics": (pfm.metrics_from_counts, {}),
        "disparities": (pfm.disparities, {"reference": ref}),
        "criteria": (pfm.fairness_criteria, {"reference": ref}),
    }
    for name, (fn, kw) in tables.items():
        point = fn(counts.lazy(), **kw)
        lazy = with_intervals(point, fn(reps, **kw))
        assert isinstance(lazy, pl.LazyFrame), name
        eager = lazy.collect()
        assert eager.schema == lazy.collect_schema(), name
        assert eager.equals(lazy.collect(engine="streaming")), name
        assert eager.height == point.collect().height
        given = eager.filter(pl.col("ci_low").is_not_null())
        assert given.height > 0.8 * eager.height, name
        assert (given["ci_low"] <= given["ci_high"]).all()
        assert eager.filter(pl.col("ci_low").is_null())["ci_note"].null_count() == 0
    between = with_intervals(pfm.between_groups(counts.lazy()), reps)
    assert isinstance(between, pl.LazyFrame)
    b = between.collect()
    assert b.schema == between.collect_schema() and set(b["ci_method"]) == {"max-t"}
    assert "ci_low" not in b.columns and "difference_ci_low" in b.columns


def test_with_intervals_errors() -> None:
    counts = compas_counts("sex")
    reps = resample_counts(counts, n_resamples=20)
    point = pfm.disparities(counts, metrics="tpr")
    cases: list[tuple[Any, Any, dict[str, Any], str]] = [
        (pfm.disparities(reps, metrics="tpr"), reps, {}, "point has a 'replicate' column"),
        (point, point, {}, "no 'replicate' column"),
        (pfm.disparities(counts, metrics="tpr", wide=True), reps, {}, "long result table"),
        (point, pfm.metrics_from_counts(reps, metrics="tpr"), {}, "lack column"),
        (point, pfm.disparities(reps, metrics="tpr"), {"n_resamples": 5}, "hold 20 resamples"),
        (point, pfm.disparities(reps, metrics="tpr"), {"method": "bca"}, "needs counts="),
        (point, pfm.disparities(reps, metrics="tpr"), {"method": "x"}, "method must be"),
        (point, pfm.disparities(reps, metrics="tpr"), {"level": 1.0}, "level must be"),
        (
            point,
            pl.concat([pfm.disparities(reps, metrics="tpr")] * 2),
            {},
            "several rows for one statistic",
        ),
        (
            point,
            pfm.disparities(reps, metrics="tpr"),
            {"method": "bca", "counts": counts},
            "leave-one-out",
        ),
    ]
    for p, r, kw, match in cases:
        with pytest.raises(InvalidOptionError, match=match):
            with_intervals(p, r, **kw)


# ---------------------------------------------------------------------------------------------
# non-smooth statistics: max-t
# ---------------------------------------------------------------------------------------------


def test_compas_between_groups_interval_contains_its_estimate() -> None:
    """The example of issue 14: accuracy max − min over sex is 4.3e-05; the plain percentile
    interval [0.00041, 0.0319] excluded it. The max-t interval contains it, and starts at 0."""
    counts = compas_counts("sex")
    for method in ("percentile", "basic", "bca"):
        reps = resample_counts(counts, n_resamples=1000, include_observed=True, jackknife=True)
        out = with_intervals(
            pfm.between_groups(counts, metrics="accuracy"), reps, method=method, counts=counts
        ).row(0, named=True)
        assert out["difference"] == pytest.approx(4.3e-05, abs=1e-6)
        assert out["ci_method"] == "max-t"
        assert 0.0 == out["difference_ci_low"] <= out["difference"] <= out["difference_ci_high"]
        assert out["difference_ci_high"] < 0.05
        assert out["ratio_ci_low"] <= out["ratio"] <= out["ratio_ci_high"] == 1.0
    # in one call, and from the between-groups table of the replicates (not enough: null + why)
    one = bootstrap_metrics(
        pfm.scan_compas().with_columns(high=pl.col("decile_score") >= 5),
        y_true="two_year_recid",
        y_pred="high",
        by="sex",
        what="between_groups",
        metrics="accuracy",
    ).collect()
    assert one["difference_ci_low"].item() <= one["difference"].item()
    assert one["difference"].item() <= one["difference_ci_high"].item()
    plain = with_intervals(
        pfm.between_groups(counts, metrics="accuracy"), pfm.between_groups(reps)
    ).row(0, named=True)
    assert plain["difference_ci_low"] is None and "not smooth" in plain["ci_note"]


def _max_t_oracle(
    est: np.ndarray[Any, Any], reps: np.ndarray[Any, Any], level: float
) -> tuple[float, float]:
    """max − min over groups from its pairwise gaps: simultaneous studentized band, projected."""
    pairs = [(i, j) for i in range(est.size) for j in range(i + 1, est.size)]
    d_hat = np.array([est[i] - est[j] for i, j in pairs])
    d_rep = np.array([reps[:, i] - reps[:, j] for i, j in pairs])
    se = d_rep.std(axis=1, ddof=1)
    t = np.max(np.abs(d_rep - d_hat[:, None]) / se[:, None], axis=0)
    c = np.quantile(t, level)
    low = max(0.0, max(abs(d) - c * s for d, s in zip(d_hat, se, strict=True)))
    high = max(abs(d) + c * s for d, s in zip(d_hat, se, strict=True))
    return low, high


def test_max_t_between_groups_against_numpy() -> None:
    df = make_rows(1500, 9, groups=("a", "b", "c"))
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    reps = resample_counts(counts, n_resamples=500, seed=4)
    out = with_intervals(
        pfm.between_groups(counts, metrics=["tpr", "ppv"]), reps, level=0.9, counts=counts
    )
    r = reps.sort("replicate", "g")
    arrays = {
        "true_positive_rate": (r["tp"] / (r["tp"] + r["fn"])).to_numpy().reshape(500, 3),
        "positive_predictive_value": (r["tp"] / (r["tp"] + r["fp"])).to_numpy().reshape(500, 3),
    }
    c = counts.sort("g")
    observed = {
        "true_positive_rate": (c["tp"] / (c["tp"] + c["fn"])).to_numpy(),
        "positive_predictive_value": (c["tp"] / (c["tp"] + c["fp"])).to_numpy(),
    }
    for row in out.iter_rows(named=True):
        m = row["metric"]
        lo, hi = _max_t_oracle(observed[m], arrays[m], 0.9)
        assert row["difference_ci_low"] == pytest.approx(lo, abs=1e-12)
        assert row["difference_ci_high"] == pytest.approx(hi, abs=1e-12)
        llo, lhi = _max_t_oracle(np.log(observed[m]), np.log(arrays[m]), 0.9)
        assert row["ratio_ci_low"] == pytest.approx(math.exp(-lhi), rel=1e-12)
        assert row["ratio_ci_high"] == pytest.approx(math.exp(-llo), rel=1e-12)


def test_equalized_odds_max_t_from_its_parts() -> None:
    df = make_rows(1200, 10)
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    reps = resample_counts(counts, n_resamples=300, seed=2)
    out = with_intervals(
        pfm.fairness_criteria(counts, reference="a"), pfm.fairness_criteria(reps, reference="a")
    )
    eod = out.filter(pl.col("metric") == "equalized_odds_difference")
    assert set(eod["ci_method"]) == {"max-t"}
    assert (eod["ci_low"] <= eod["value"]).all() and (eod["value"] <= eod["ci_high"]).all()
    ref = eod.filter(pl.col("g") == "a").row(0, named=True)
    assert (ref["ci_low"], ref["ci_high"]) == (0.0, 0.0)  # exact for the reference itself
    # an independent computation of one group's interval
    r = reps.sort("replicate", "g")
    fpr = (r["fp"] / (r["fp"] + r["tn"])).to_numpy().reshape(300, 4)
    fnr = (r["fn"] / (r["fn"] + r["tp"])).to_numpy().reshape(300, 4)
    c = counts.sort("g")
    f0 = (c["fp"] / (c["fp"] + c["tn"])).to_numpy()
    n0 = (c["fn"] / (c["fn"] + c["tp"])).to_numpy()
    parts_hat = np.array([f0[2] - f0[0], n0[2] - n0[0]])
    parts = np.stack([fpr[:, 2] - fpr[:, 0], fnr[:, 2] - fnr[:, 0]])
    se = parts.std(axis=1, ddof=1)
    crit = np.quantile(np.max(np.abs(parts - parts_hat[:, None]) / se[:, None], axis=0), 0.95)
    lo = np.max(np.maximum(np.abs(parts_hat) - crit * se, 0))
    hi = np.max(np.abs(parts_hat) + crit * se)
    row = eod.filter(pl.col("g") == "c").row(0, named=True)
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(lo), pytest.approx(hi))
    # without its parts in the table: withdrawn, with the reason
    only = pfm.fairness_criteria(counts, reference="a", criteria="equalized_odds_difference")
    alone = with_intervals(
        only, pfm.fairness_criteria(reps, reference="a", criteria="equalized_odds_difference")
    )
    assert alone["ci_low"].null_count() == 4
    assert "signed" in alone["ci_note"][0]


def test_between_groups_coverage_at_a_true_gap_of_zero() -> None:
    """Two identical groups: the true max − min is 0. The plain percentile interval of the
    replicates of max − min never covers 0 (every replicate is > 0); max-t covers it ≈ 95 %.
    400 data sets in one call: each an attribute partition, resampled independently."""
    rng = np.random.default_rng(11)
    sims, n = 400, 600
    cells = rng.multinomial(n, np.array([0.1, 0.1, 0.25, 0.05] * 2), size=sims)
    t = pl.DataFrame(
        {
            "attribute": np.repeat([f"s{i:03d}" for i in range(sims)], 2),
            "g": np.tile(["a", "b"], sims),
            **{c: cells[:, j::4].reshape(-1) for j, c in enumerate(("tp", "fp", "tn", "fn"))},
        }
    ).with_columns(pl.sum_horizontal("tp", "fp", "tn", "fn").alias("n"))
    reps = resample_counts(t, n_resamples=300, seed=1)
    out = with_intervals(pfm.between_groups(t, metrics="accuracy"), reps, counts=t)
    covered = (out["difference_ci_low"] <= 1e-15).mean()
    assert covered is not None and 0.92 <= covered <= 0.99, covered
    naive = intervals(
        pl.concat(
            [
                pfm.between_groups(t, metrics="accuracy").select(
                    "attribute",
                    pl.lit(0, pl.Int64).alias("replicate"),
                    pl.col("difference").alias("value"),
                ),
                pfm.between_groups(reps, metrics="accuracy").select(
                    "attribute", "replicate", pl.col("difference").alias("value")
                ),
            ]
        )
    )
    assert (naive["ci_low"] > 0).mean() > 0.9  # the plain percentile interval excludes 0


@st.composite
def count_tables(draw: st.DrawFn) -> pl.DataFrame:
    n_groups = draw(st.integers(1, 4))
    cells = draw(
        st.lists(
            st.lists(st.integers(0, 12), min_size=4, max_size=4),
            min_size=n_groups,
            max_size=n_groups,
        )
    )
    arr = np.array(cells, dtype=np.int64)
    return pl.DataFrame(
        {
            "g": [f"g{i}" for i in range(n_groups)],
            **{c: arr[:, j] for j, c in enumerate(("tp", "fp", "tn", "fn"))},
        }
    ).with_columns(pl.sum_horizontal("tp", "fp", "tn", "fn").alias("n"))


@given(table=count_tables(), b=st.integers(2, 40), seed=st.integers(0, 2**31))
@settings(max_examples=60, deadline=None)
def test_interval_properties(table: pl.DataFrame, b: int, seed: int) -> None:
    """Any count table (empty cells, empty groups, one group): intervals are ordered, max-t
    intervals contain their estimate (≥ 0 for max − min, within [0, 1] for min / max), the named
    reference's own difference is exact, a withdrawn interval always says why."""
    reps = resample_counts(table, n_resamples=b, seed=seed, include_observed=True)
    metrics = ["tpr", "fpr", "selection_rate", "accuracy"]
    tabs = [
        with_intervals(pfm.between_groups(table, metrics=metrics), reps),
        with_intervals(
            pfm.disparities(table, metrics=metrics, reference="g0"),
            pfm.disparities(reps, metrics=metrics, reference="g0"),
        ),
        with_intervals(
            pfm.fairness_criteria(table, reference="rest"),
            pfm.fairness_criteria(reps, reference="rest"),
        ),
    ]
    for out in tabs:
        assert ((out["n_defined"] >= 0) & (out["n_defined"] <= b)).all()
        assert (out["n_resamples"] == b).all()
        for q, (lo, hi) in {
            "value": ("ci_low", "ci_high"),
            "difference": ("difference_ci_low", "difference_ci_high"),
            "ratio": ("ratio_ci_low", "ratio_ci_high"),
        }.items():
            if lo not in out.columns:
                continue
            given = out.filter(pl.col(lo).is_not_null())
            assert (given[lo] <= given[hi]).all()
            assert out.filter(pl.col(lo).is_null())["ci_note"].null_count() == 0
            nonsmooth = given.filter(pl.col("ci_method") == "max-t")
            assert (nonsmooth[lo] <= nonsmooth[q] + 1e-12).all()
            assert (nonsmooth[q] <= nonsmooth[hi] + 1e-12).all()
            if q == "difference" and "min" in out.columns:
                assert (nonsmooth[lo] >= 0).all()
            if q == "ratio" and "min" in out.columns:
                assert ((nonsmooth[lo] >= 0) & (nonsmooth[hi] <= 1 + 1e-12)).all()
        if "is_reference" in out.columns and "difference" in out.columns:
            ref = out.filter(pl.col("is_reference") & pl.col("difference").is_not_null())
            assert (ref["difference_ci_low"] == 0).all() and (ref["difference_ci_high"] == 0).all()


# ---------------------------------------------------------------------------------------------
# bootstrap_metrics
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("what", ["disparities", "metrics", "criteria", "between_groups"])
def test_bootstrap_metrics_equals_its_building_blocks(what: str) -> None:
    df = make_rows(800, 12)
    out = bootstrap_metrics(
        df, y_true="y", y_pred="p", by="g", what=what, reference="b", n_resamples=150
    )  # type: ignore[arg-type]
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    reps = resample_counts(counts, n_resamples=150)
    fn = {
        "disparities": lambda t: pfm.disparities(t, reference="b"),
        "metrics": pfm.metrics_from_counts,
        "criteria": lambda t: pfm.fairness_criteria(t, reference="b"),
        "between_groups": pfm.between_groups,
    }[what]
    blocks = with_intervals(
        fn(counts), reps if what == "between_groups" else fn(reps), counts=counts
    )
    assert out.equals(blocks)


def test_engines_agree_within_monte_carlo_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Count engine (continuous weights: per-cell sums of squares) vs row engine (B passes)."""
    # the intervals' arithmetic, not the effective-sample-size rule (tested on its own)
    monkeypatch.setattr(boot_mod, "WEIGHTED_MIN_ESS", 0)
    for weights in ("", "continuous"):
        df = make_rows(1500, 4, weights=weights)
        opts: dict[str, Any] = dict(
            y_true="y",
            y_pred="p",
            by="g",
            weight="w" if weights else None,
            reference="a",
            metrics=["tpr", "fpr", "ppv", "accuracy", "selection_rate"],
            stratify=True,
        )
        b_counts, b_rows = 3000, 300
        fast = bootstrap_metrics(df, n_resamples=b_counts, seed=1, **opts)
        slow = bootstrap_metrics(
            df, n_resamples=b_rows, seed=2, engine="rows", progress=False, **opts
        )
        both = fast.join(slow, on=["g", "metric"], how="inner", suffix="_r")
        assert both.height == fast.height == slow.height
        assert (both["difference"] - both["difference_r"]).abs().max() < 1e-9  # type: ignore[operator]
        checked = 0
        for r in both.filter(pl.col("g") != "a").iter_rows(named=True):
            for lo, hi in (("ci_low", "ci_high"), ("difference_ci_low", "difference_ci_high")):
                sd = (r[hi] - r[lo]) / 3.92
                tol = (
                    4.5
                    * math.hypot(
                        _quantile_mc_se(sd, 0.05, b_counts), _quantile_mc_se(sd, 0.05, b_rows)
                    )
                    + 0.004
                )
                assert abs(r[lo] - r[lo + "_r"]) < tol, (weights, r["g"], r["metric"], lo)
                assert abs(r[hi] - r[hi + "_r"]) < tol, (weights, r["g"], r["metric"], hi)
                checked += 1
        assert checked >= 30


def test_absent_group_gives_counted_nulls() -> None:
    df = pl.concat(
        [
            make_rows(60, 5, groups=("a", "b")),
            pl.DataFrame(
                {"g": ["z"], "y": [1], "p": [1]},
                schema={"g": pl.String, "y": pl.Int8, "p": pl.Int8},
            ),
        ]
    )
    b = 300
    out = bootstrap_metrics(
        df,
        y_true="y",
        y_pred="p",
        by="g",
        metrics="selection_rate",
        reference="z",
        n_resamples=b,
        seed=3,
    )
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    reps = resample_counts(counts, n_resamples=b, seed=3)
    present = int((reps.filter(pl.col("g") == "z")["n"] > 0).sum())
    assert 0 < present < b  # z is absent from some replicates (P ≈ e^-1)
    z = out.filter(pl.col("g") == "z").row(0, named=True)
    assert z["n_defined"] == present and z["n_resamples"] == b
    assert z["ci_low"] is None and "defined in only" in z["ci_note"]
    a = out.filter(pl.col("g") == "a").row(0, named=True)
    assert a["ci_low"] is not None and "difference: defined in only" in a["ci_note"]
    rows = bootstrap_metrics(
        df,
        y_true="y",
        y_pred="p",
        by="g",
        metrics="selection_rate",
        reference="z",
        n_resamples=40,
        engine="rows",
        progress=False,
    )
    zr = rows.filter(pl.col("g") == "z").row(0, named=True)
    assert zr["n_resamples"] == 40 and 0 < zr["n_defined"] < 40


def test_lazy_in_lazy_out_streaming_default_seed_and_one_scan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the intervals' arithmetic, not the effective-sample-size rule (tested on its own)
    monkeypatch.setattr(boot_mod, "WEIGHTED_MIN_ESS", 0)
    df = make_rows(1000, 6, weights="continuous")
    calls: list[int] = []

    def counted(frame: pl.DataFrame) -> pl.DataFrame:
        calls.append(frame.height)
        return frame

    opts: dict[str, Any] = dict(
        y_true="y", y_pred="p", by="g", weight="w", metrics=["tpr"], n_resamples=100
    )
    eager = bootstrap_metrics(df, **opts)
    lazy = bootstrap_metrics(df.lazy().map_batches(counted, schema=df.schema), **opts)
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect_schema() == eager.schema and calls == []
    for engine in ("in-memory", "streaming"):
        calls.clear()
        # continuous weights: the per-cell sums may differ in their last bit with the order
        assert_frame_equal(lazy.collect(engine=engine), eager, rel_tol=1e-9)  # type: ignore[call-overload]
        assert len(calls) == 1, engine
    # reproducible without a seed (to the last bits of the weights' float sums, whose order
    # the multi-threaded group_by does not fix)
    assert_frame_equal(bootstrap_metrics(df, **opts), eager, rel_tol=1e-9)
    assert not bootstrap_metrics(df, **{**opts, "seed": 6}).equals(eager)
    disp = pfm.disparities(df, y_true="y", y_pred="p", by="g", weight="w", metrics="tpr")
    assert np.allclose(eager["difference"].to_numpy(), disp["difference"].to_numpy())


@pytest.mark.parametrize("engine", ["counts", "rows"])
@pytest.mark.parametrize("what", ["disparities", "metrics", "criteria", "between_groups"])
def test_empty_and_filtered_frames(engine: str, what: str) -> None:
    df = make_rows(20, 1)
    for frame in (df.clear(), df.filter(pl.col("y") > 5), df.with_columns(y=pl.lit(None, pl.Int8))):
        out = bootstrap_metrics(
            frame,
            y_true="y",
            y_pred="p",
            by="g",
            what=what,
            n_resamples=5,
            engine=engine,
            progress=False,
        )  # type: ignore[arg-type]
        if out.height:
            assert out["ci_note"].null_count() == 0  # every interval withdrawn, with a reason
        lazy = bootstrap_metrics(
            frame.lazy(),
            y_true="y",
            y_pred="p",
            by="g",
            what=what,
            n_resamples=5,
            engine=engine,
            progress=False,
        )  # type: ignore[arg-type]
        assert _collect(lazy).equals(out)


def _collect(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


def test_separately_both_engines() -> None:
    df = make_rows(800, 2).with_columns(
        h=pl.Series(np.random.default_rng(0).choice(["x", "y"], 800))
    )
    ref = {"g": "a", "h": "x"}
    fast = bootstrap_metrics(
        df,
        y_true="y",
        y_pred="p",
        by=["g", "h"],
        separately=True,
        reference=ref,
        metrics="tpr",
        n_resamples=200,
    )
    slow = bootstrap_metrics(
        df,
        y_true="y",
        y_pred="p",
        by=["g", "h"],
        separately=True,
        reference=ref,
        metrics="tpr",
        n_resamples=60,
        engine="rows",
        progress=False,
    )
    assert fast.select("attribute", "g", "h", "value").equals(
        slow.select("attribute", "g", "h", "value")
    )
    assert fast["ci_low"].null_count() == 0 and slow["ci_low"].null_count() == 0


def test_bca_matches_scipy_within_monte_carlo_error() -> None:
    """A skewed statistic (selection rate ≈ 0.04 of 400 rows): our BCa, whose jackknife is one
    leave-one-out table per cell weighted by the cell count, against scipy's row jackknife."""
    from scipy.stats import bootstrap as scipy_bootstrap

    rng = np.random.default_rng(30)
    n = 400
    p = (rng.random(n) < 0.04).astype(np.int8)
    df = pl.DataFrame({"g": ["a"] * n, "y": rng.integers(0, 2, n).astype(np.int8), "p": p})
    b = 6000
    opts: dict[str, Any] = dict(
        y_true="y",
        y_pred="p",
        by="g",
        what="metrics",
        metrics="selection_rate",
        n_resamples=b,
        seed=3,
        level=0.9,
    )
    row = bootstrap_metrics(df, method="bca", **opts).row(0, named=True)
    pct = bootstrap_metrics(df, **opts).row(0, named=True)
    ref = scipy_bootstrap(
        (p.astype(float),),
        np.mean,
        n_resamples=b,
        method="BCa",
        confidence_level=0.9,
        random_state=np.random.default_rng(4),
    )
    sd = (pct["ci_high"] - pct["ci_low"]) / (2 * 1.645)
    tol = 4.5 * math.hypot(_quantile_mc_se(sd, 0.1, b), _quantile_mc_se(sd, 0.1, b))
    assert abs(row["ci_low"] - ref.confidence_interval.low) <= tol + 1 / n
    assert abs(row["ci_high"] - ref.confidence_interval.high) <= tol + 1 / n
    assert row["ci_method"] == "bca" and row["n_resamples"] == b and row["n_defined"] == b
    assert row["ci_high"] >= pct["ci_high"]  # BCa moves this right-skewed interval upwards


def test_bca_weighted_cell_jackknife_equals_row_jackknife() -> None:
    from polars_fairmetrics.bootstrap import _acceleration

    rng = np.random.default_rng(2)
    rows = (rng.random(50) < 0.2).astype(float)
    row_jack = np.array([[np.delete(rows, i).mean() for i in range(rows.size)]])
    cells = np.array([rows.sum(), rows.size - rows.sum()])
    cell_jack = np.array([[(rows.sum() - 1) / 49, rows.sum() / 49]])
    a = _acceleration(row_jack, np.ones(rows.size))
    b = _acceleration(cell_jack, cells)
    assert a == pytest.approx(b, abs=1e-12) and abs(float(a[0])) > 0
    with pytest.raises(InvalidOptionError, match="BCa"):
        intervals(pl.DataFrame({"replicate": [0, 1], "value": [1.0, 2.0]}), method="bca")  # type: ignore[arg-type]


def test_bca_of_bootstrap_counts_equals_bootstrap_metrics() -> None:
    df = make_rows(600, 14)
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")

    def ppv(table: pl.DataFrame) -> pl.DataFrame:
        return pfm.metrics_from_counts(table, metrics="ppv").select("replicate", "g", "value")

    fast = bootstrap_metrics(
        df,
        y_true="y",
        y_pred="p",
        by="g",
        what="metrics",
        metrics="ppv",
        n_resamples=400,
        seed=5,
        method="bca",
    )
    for source in (counts, counts.lazy()):
        generic = _collect(bootstrap_counts(source, ppv, n_resamples=400, seed=5, method="bca"))
        assert generic["g"].to_list() == fast["g"].to_list()
        for c in ("value", "ci_low", "ci_high", "n_defined", "n_resamples"):
            assert np.allclose(generic[c].to_numpy(), fast[c].to_numpy(), rtol=1e-12), c
        assert set(generic["ci_method"]) == {"bca"}


# ---------------------------------------------------------------------------------------------
# the bias-adjusted AUPR of the notebook (stratified, weights recomputed per replicate)
# ---------------------------------------------------------------------------------------------

SHARES = {True: 0.2, False: 0.8}  # |B| / |U| and 1 − |B| / |U|


def seed_aupr_numpy(
    y: np.ndarray[Any, Any], s: np.ndarray[Any, Any], in_b: np.ndarray[Any, Any]
) -> float:
    """The notebook's IW-AUPR, brute force: test-set weights, 50 thresholds, stop at recall 1."""
    n, nb = y.size, int(in_b.sum())
    w = np.where(in_b, n / nb * SHARES[True], n / (n - nb) * SHARES[False])
    pts = []
    for t in np.linspace(s.max(), 0.0, 50):
        pp = s >= t
        prec = (w * pp * (y == 1)).sum() / (w * pp).sum()
        rec = (w * pp * (y == 1)).sum() / (w * (y == 1)).sum()
        pts.append((prec, rec))
        if rec >= 1.0 - 1e-12:
            break
    return float(
        sum(
            0.5 * (pts[i + 1][1] - pts[i][1]) * (pts[i][0] + pts[i + 1][0])
            for i in range(len(pts) - 1)
        )
    )


def seed_aupr_polars(rows: pl.LazyFrame) -> pl.DataFrame:
    """The same statistic with the package: weights recomputed from the replicate's rows."""
    m = pl.col("bootstrap_weight")
    frame = rows.with_columns(
        (
            m
            * pl.col("in_b").replace_strict(SHARES, return_dtype=pl.Float64)
            * m.sum()
            / m.sum().over("in_b")
        ).alias("iw")
    ).collect()
    grid = np.linspace(float(frame["s"].max()), 0.0, 50)  # type: ignore[arg-type]
    counts = pfm.confusion_counts(frame, y_true="y", y_score="s", threshold=list(grid), weight="iw")
    pr = pfm.metrics_from_counts(counts, metrics=["precision", "recall"], weighted=True, wide=True)
    pr = pr.sort("threshold", descending=True)
    rec = pr["true_positive_rate"].to_numpy()
    stop = int(np.argmax(rec >= 1.0 - 1e-12)) if (rec >= 1.0 - 1e-12).any() else rec.size - 1
    p = pr["positive_predictive_value"].to_numpy()[: stop + 1]
    r = rec[: stop + 1]
    return pl.DataFrame(
        {"metric": ["iw_aupr"], "value": [float((0.5 * np.diff(r) * (p[:-1] + p[1:])).sum())]}
    )


def seed_frame(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    in_b = rng.random(n) < 0.35
    y = (rng.random(n) < np.where(in_b, 0.5, 0.1)).astype(np.int8)
    s = np.clip(0.35 * y + 0.65 * rng.random(n), 0, 1)
    return pl.DataFrame({"in_b": in_b, "y": y, "s": s})


def test_seed_stratified_aupr_matches_brute_force_resampling() -> None:
    df = seed_frame(120, 8)
    b, seed = 200, 21
    ours = bootstrap_rows(
        df,
        seed_aupr_polars,
        n_resamples=b,
        strata="in_b",
        seed=seed,
        method="basic",
        progress=False,
    )
    y, s, in_b = df["y"].to_numpy(), df["s"].to_numpy(), df["in_b"].to_numpy()
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(~in_b), np.flatnonzero(in_b)]  # False < True
    est = seed_aupr_numpy(y, s, in_b)
    values = []
    for _ in range(b):
        idx = np.concatenate([rows[rng.integers(0, rows.size, rows.size)] for rows in members])
        values.append(seed_aupr_numpy(y[idx], s[idx], in_b[idx]))
    lo, hi = np.quantile(values, [0.025, 0.975])
    row = ours.row(0, named=True)
    assert row["value"] == pytest.approx(est, abs=1e-12)
    assert row["ci_low"] == pytest.approx(2 * est - hi, abs=1e-12)
    assert row["ci_high"] == pytest.approx(2 * est - lo, abs=1e-12)
    assert row["n_defined"] == b and row["ci_method"] == "basic"


def aupr_from_counts(table: pl.DataFrame) -> pl.DataFrame:
    """Bias-adjusted AUPR per replicate from a count table by in_b × threshold: the test-set
    weights w_s = p_s N* / N*_s recomputed from each replicate's counts."""
    part = ["replicate", "threshold"]
    w = (
        pl.col("in_b").replace_strict(SHARES, return_dtype=pl.Float64)
        * pl.col("n").sum().over(part)
        / pl.col("n").sum().over([*part, "in_b"])
    )
    weighted = table.with_columns(
        [(pl.col(c) * w).alias(f"{c}_w") for c in ("tp", "fp", "tn", "fn")]
    )
    summed = (
        weighted.group_by(part)
        .agg(pl.col("tp_w", "fp_w", "fn_w").sum())
        .sort("replicate", "threshold", descending=[False, True])
    )
    out = []
    for (rep,), g in summed.group_by("replicate", maintain_order=True):
        tp, fp, fn = (g[c].to_numpy() for c in ("tp_w", "fp_w", "fn_w"))
        ok = tp + fp > 0
        p, r = tp[ok] / (tp[ok] + fp[ok]), tp[ok] / (tp[ok] + fn[ok])
        out.append((rep, float((0.5 * np.diff(r) * (p[:-1] + p[1:])).sum())))
    return pl.DataFrame(out, schema={"replicate": pl.Int64, "value": pl.Float64}, orient="row")


def test_seed_aupr_count_engine_agrees_with_brute_force() -> None:
    df = seed_frame(400, 9).with_columns(pl.col("s").round(2))
    grid = [round(t, 2) for t in np.linspace(0.02, 0.98, 49)]
    counts = pfm.confusion_counts(df, y_true="y", y_score="s", threshold=grid, by="in_b")
    b = 1500
    ours = bootstrap_counts(counts, aupr_from_counts, n_resamples=b, strata="in_b", seed=4)
    y, s, in_b = df["y"].to_numpy(), df["s"].to_numpy(), df["in_b"].to_numpy()
    g = np.array(sorted(grid, reverse=True))

    def brute(idx: np.ndarray[Any, Any]) -> float:
        yy, ss, bb = y[idx], s[idx], in_b[idx]
        n, nb = yy.size, int(bb.sum())
        w = np.where(bb, n / nb * SHARES[True], n / (n - nb) * SHARES[False])
        pts = []
        for t in g:
            pp = ss >= t
            if (w * pp).sum() == 0:
                continue
            pts.append(((w * pp * yy).sum() / (w * pp).sum(), (w * pp * yy).sum() / (w * yy).sum()))
        return float(
            sum(
                0.5 * (pts[i + 1][1] - pts[i][1]) * (pts[i][0] + pts[i + 1][0])
                for i in range(len(pts) - 1)
            )
        )

    rng = np.random.default_rng(0)
    members = [np.flatnonzero(~in_b), np.flatnonzero(in_b)]
    vals = [
        brute(np.concatenate([r[rng.integers(0, r.size, r.size)] for r in members]))
        for _ in range(600)
    ]
    row = ours.row(0, named=True)
    assert row["value"] == pytest.approx(brute(np.arange(y.size)), abs=1e-12)
    sd = float(np.std(vals, ddof=1))
    lo, hi = np.quantile(vals, [0.025, 0.975])
    tol = 4.5 * math.hypot(_quantile_mc_se(sd, 0.05, b), _quantile_mc_se(sd, 0.05, 600))
    assert abs(row["ci_low"] - lo) < tol and abs(row["ci_high"] - hi) < tol


def test_reweighting_recomputed_per_replicate_matches_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # the intervals' arithmetic, not the effective-sample-size rule (tested on its own)
    monkeypatch.setattr(boot_mod, "WEIGHTED_MIN_ESS", 0)
    df = seed_frame(600, 3).with_columns(p=pl.col("s") >= 0.5)
    opts: dict[str, Any] = dict(
        y_true="y",
        y_pred="p",
        by="in_b",
        what="metrics",
        metrics=["ppv", "tpr"],
        reweight_by="in_b",
        population_shares=SHARES,
    )
    fast = bootstrap_metrics(df, n_resamples=2000, seed=1, **opts)
    slow = bootstrap_metrics(df, n_resamples=300, seed=2, engine="rows", progress=False, **opts)
    both = fast.join(slow, on=["in_b", "metric"], suffix="_r")
    assert (both["value"] - both["value_r"]).abs().max() < 1e-12  # type: ignore[operator]
    width = (both["ci_high"] - both["ci_low"]) / (both["ci_high_r"] - both["ci_low_r"])
    assert np.all(np.abs(width.to_numpy() - 1) < 0.3)


def test_poisson_rows_and_progress(capsys: pytest.CaptureFixture[str]) -> None:
    df = make_rows(300, 8)

    def sel(rows: pl.LazyFrame) -> pl.LazyFrame:
        c = pfm.confusion_counts(rows, y_true="y", y_pred="p", weight="bootstrap_weight")
        return pfm.metrics_from_counts(c, metrics="selection_rate").select("value")

    out = bootstrap_rows(
        df.lazy(), sel, n_resamples=30, seed=1, multiplicity="poisson", progress=True
    )
    assert out["n_defined"].item() == 30
    assert "30/30" in capsys.readouterr().err
    a = bootstrap_rows(df, sel, n_resamples=15, strata="g", seed=4, progress=False)
    b = bootstrap_rows(df.lazy(), sel, n_resamples=15, strata="g", seed=4, progress=False)
    assert a.equals(b)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_resamples": 0}, "n_resamples"),
        ({"level": 1.0}, "level"),
        ({"method": "bogus"}, "method"),
        ({"method": "bca", "engine": "rows"}, "count engine"),
        ({"engine": "auto"}, "engine"),
        ({"what": "curves"}, "what"),
        ({"stratify": "nope"}, "nope"),
        ({"reweight_by": "g"}, "together"),
        ({"reweight_by": "g", "population_shares": {"a": 1.0}}, "'b'"),
        ({"by": []}, "no group column"),
    ],
)
def test_errors(kwargs: dict[str, Any], match: str) -> None:
    df = make_rows(50, 9, groups=("a", "b"))
    with pytest.raises(FairMetricsError, match=match):
        bootstrap_metrics(
            df, **{"y_true": "y", "y_pred": "p", "by": "g", "n_resamples": 5, **kwargs}
        )


def test_errors_count_tables() -> None:
    df = make_rows(50, 9)
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    with pytest.raises(FairMetricsError, match="strata"):
        resample_counts(counts, n_resamples=5, strata="nope")
    with pytest.raises(InvalidOptionError, match="already has a 'replicate'"):
        resample_counts(resample_counts(counts, n_resamples=2), n_resamples=2)
    with pytest.raises(InvalidOptionError, match="not a count table"):
        resample_counts(df, n_resamples=2)
    with pytest.raises(InvalidOptionError, match="Poisson"):
        bootstrap_rows(
            df,
            lambda f: f.select(pl.lit(1.0).alias("value")),
            n_resamples=2,
            strata="g",
            multiplicity="poisson",
        )


def test_intervals_without_the_observed_replicate_is_an_error_not_an_empty_table() -> None:
    """Replicates drawn without replicate 0 have no estimate: a clear error, never 0 rows."""
    counts = pfm.confusion_counts(
        pl.DataFrame({"g": ["a", "b"] * 20, "y": [1, 0, 0, 1] * 10, "p": [1, 1, 0, 0] * 10}),
        y_true="y",
        y_pred="p",
        by="g",
    )
    reps = resample_counts(counts, n_resamples=20)
    with pytest.raises(pfm.FairMetricsError, match="include_observed=True"):
        intervals(pfm.metrics_from_counts(reps, metrics="tpr"))
    with_zero = resample_counts(counts, n_resamples=20, include_observed=True)
    assert intervals(pfm.metrics_from_counts(with_zero, metrics="tpr")).height == 2


def test_replicate_tables_are_sorted_keys_first() -> None:
    counts = compas_counts(["sex", "race"])
    reps = resample_counts(counts, n_resamples=7, include_observed=True)
    lead = ["sex", "race", "replicate"]
    assert reps.columns[:3] == lead
    assert reps.select(lead).equals(reps.select(lead).sort(lead))
    # each replicate is a full table: the observed one equals the count table
    observed = reps.filter(pl.col("replicate") == 0).drop("replicate")
    assert_frame_equal(observed, counts.select(observed.columns), check_dtypes=False)


def test_basic_intervals_are_withheld_where_the_coverage_study_found_them_unreliable() -> None:
    """Basic intervals under-cover on weighted data and on small supports (docs/coverage.md):
    null with the reason; percentile intervals of the same statistics are given."""
    rng = np.random.default_rng(5)
    n = 4000
    g = rng.choice(["big", "small"], n, p=[0.99, 0.01])
    y = rng.random(n) < 0.4
    p = np.where(rng.random(n) < 0.8, y, ~y)
    df = pl.DataFrame({"g": g, "y": y, "p": p, "w": rng.gamma(2.0, 1.0, n)})
    opts: dict[str, Any] = {"y_true": "y", "y_pred": "p", "by": "g", "n_resamples": 200}
    basic = bootstrap_metrics(df, what="metrics", metrics="accuracy", method="basic", **opts)
    pct = bootstrap_metrics(df, what="metrics", metrics="accuracy", **opts)
    rows = {r["g"]: r for r in basic.iter_rows(named=True)}
    assert rows["big"]["ci_low"] is not None and rows["big"]["ci_note"] is None
    assert rows["small"]["support"] < 50
    assert rows["small"]["ci_low"] is None and "under-cover on few rows" in rows["small"]["ci_note"]
    assert pct["ci_low"].null_count() == 0
    weighted = bootstrap_metrics(
        df, what="metrics", metrics="accuracy", method="basic", weight="w", **opts
    )
    assert weighted["ci_low"].null_count() == weighted.height
    assert weighted["ci_note"].str.contains("weighted data").all()
    weighted_pct = bootstrap_metrics(df, what="metrics", metrics="accuracy", weight="w", **opts)
    # percentile on weighted data: given for the big group, withheld for the small one (its
    # effective sample size is below WEIGHTED_MIN_ESS)
    rows = {r["g"]: r for r in weighted_pct.iter_rows(named=True)}
    assert rows["big"]["ci_low"] is not None and rows["big"]["ci_note"] is None
    assert rows["small"]["ci_low"] is None and "effective" in rows["small"]["ci_note"]


@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
def test_empty_point_table_gets_empty_interval_columns(method: str) -> None:
    """A point table with no rows (e.g. filtered to an absent group) gives an empty table
    with the interval columns, for every method (BCa used to count 0 leave-one-out tables)."""
    df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [1, 0, 0, 0]})
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    reps = pfm.resample_counts(counts, n_resamples=50, jackknife=method == "bca")
    full = pfm.with_intervals(
        pfm.metrics_from_counts(counts), pfm.metrics_from_counts(reps), method=method, counts=counts
    )
    empty = pfm.with_intervals(
        pfm.metrics_from_counts(counts).head(0),
        pfm.metrics_from_counts(reps),
        method=method,
        counts=counts,
    )
    assert empty.height == 0
    assert empty.schema == full.schema
