"""Bootstrap intervals: oracles written here in numpy, sharing no code with the package.

- interval formulas against numpy quantiles on random replicate values (with nulls);
- the count engine's draws: totals, exact replicate 0, moments of the multinomial, thresholds;
- the two engines agree within Monte Carlo error (weighted metrics, disparities, summaries);
- the seed's stratified, bias-adjusted AUPR by the row engine equals a brute-force numpy
  implementation of the same resampling exactly, and the count engine agrees within MC error;
- coverage of 95 % percentile intervals of a disparity in repeated samples;
- absent groups give counted nulls; laziness, streaming, reproducibility, errors.

The guide docs/uncertainty.md is executed by tests/test_docs.py.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_fairmetrics as pfm
from polars_fairmetrics.bootstrap import (
    bootstrap_counts,
    bootstrap_metrics,
    bootstrap_rows,
    intervals,
    resample_counts,
)
from polars_fairmetrics.exceptions import FairMetricsError, InvalidOptionError

# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def make_rows(n: int, seed: int, *, groups: tuple[str, ...] = ("a", "b", "c", "d"),
              weights: bool = False) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(groups), n)
    base = {"a": 0.3, "b": 0.4, "c": 0.5, "d": 0.35}
    y = rng.random(n) < np.array([base.get(x, 0.4) for x in g])
    acc = {"a": 0.85, "b": 0.75, "c": 0.8, "d": 0.7}
    p = np.where(rng.random(n) < np.array([acc.get(x, 0.8) for x in g]), y, ~y)
    cols: dict[str, Any] = {"g": g, "y": y.astype(np.int8), "p": p.astype(np.int8)}
    if weights:
        cols["w"] = rng.choice(np.array([0.5, 1.0, 2.5]), n)
    return pl.DataFrame(cols)


# ---------------------------------------------------------------------------------------------
# intervals: formulas against numpy
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("confidence", [0.95, 0.8, 0.5])
def test_interval_formulas_match_numpy(confidence: float) -> None:
    rng = np.random.default_rng(3)
    b = 301
    frames = []
    truth = {}
    for key in ("k1", "k2", "k3"):
        vals = rng.normal(size=b + 1)
        mask = rng.random(b + 1) < 0.1
        mask[0] = False
        if key == "k3":
            mask[1:] = True
            mask[1:5] = False  # only 4 defined replicates
        values = [None if m else float(v) for v, m in zip(vals, mask, strict=True)]
        frames.append(pl.DataFrame({"key": key, "replicate": np.arange(b + 1), "value": values}))
        defined = vals[1:][~mask[1:]]
        a = 1 - confidence
        lo, hi = np.quantile(defined, [a / 2, 1 - a / 2])
        truth[key] = (vals[0], lo, hi, np.std(defined, ddof=1), defined.size)
    reps = pl.concat(frames).sample(fraction=1.0, shuffle=True, seed=1)
    pct = intervals(reps, confidence=confidence)
    basic = intervals(reps, confidence=confidence, method="basic")
    assert pct["key"].to_list() == ["k1", "k2", "k3"]
    for row_p, row_b in zip(pct.iter_rows(named=True), basic.iter_rows(named=True), strict=True):
        est, lo, hi, sd, nd = truth[row_p["key"]]
        assert row_p["estimate"] == pytest.approx(est)
        assert row_p["ci_low"] == pytest.approx(lo, abs=1e-12)
        assert row_p["ci_high"] == pytest.approx(hi, abs=1e-12)
        assert row_p["std_error"] == pytest.approx(sd, rel=1e-12)
        assert row_p["n_defined"] == nd
        assert row_p["n_resamples"] == b
        # basic = the seed's  x̄ − δ_{1−α/2}, x̄ − δ_{α/2}  with δ = x* − x̄
        deltas = np.quantile(np.array([lo, hi]) - est, [0, 1])
        assert row_b["ci_low"] == pytest.approx(est - deltas[1], abs=1e-12)
        assert row_b["ci_high"] == pytest.approx(est - deltas[0], abs=1e-12)
        assert (row_p["method"], row_b["method"]) == ("percentile", "basic")


def test_intervals_lazy_and_missing_rows_count_as_undefined() -> None:
    reps = pl.DataFrame({"k": ["x", "x", "x", "y", "y"], "replicate": [0, 1, 2, 0, 2],
                         "value": [1.0, 2.0, 3.0, 5.0, 6.0]})
    lazy = intervals(reps.lazy())
    assert isinstance(lazy, pl.LazyFrame)
    out = lazy.collect()
    assert out["n_resamples"].to_list() == [2, 2]
    assert out["n_defined"].to_list() == [2, 1]  # y has no row in replicate 1: counted
    assert out.equals(intervals(reps))


# ---------------------------------------------------------------------------------------------
# count engine: the draws
# ---------------------------------------------------------------------------------------------


def test_resample_counts_totals_observed_and_moments() -> None:
    df = make_rows(3000, 1)
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    b = 4000
    plain = resample_counts(counts, n_resamples=b, seed=7, include_observed=True)
    obs = plain.filter(pl.col("replicate") == 0).drop("replicate")
    assert obs.select(counts.columns[:7]).equals(counts.select(counts.columns[:7]))
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
    sizes = strat.group_by("replicate", "g").agg(pl.col("n").sum()).join(
        counts.select("g", pl.col("n").alias("n0")), on="g")
    assert (sizes["n"] == sizes["n0"]).all()


def test_resample_counts_reproducible_and_lazy() -> None:
    counts = pfm.confusion_counts(make_rows(500, 2), y_true="y", y_pred="p", by="g")
    a = resample_counts(counts, n_resamples=20, seed=11)
    b = resample_counts(counts.lazy(), n_resamples=20, seed=11)
    assert isinstance(b, pl.LazyFrame)
    assert a.equals(b.collect()) and a.equals(b.collect(engine="streaming"))
    c = resample_counts(counts, n_resamples=20, seed=12)
    assert not a.equals(c)


def test_resample_thresholded_table_rebuilds_cumulative_counts() -> None:
    rng = np.random.default_rng(5)
    n = 800
    df = pl.DataFrame({"g": rng.choice(["a", "b"], n), "y": rng.integers(0, 2, n),
                       "s": np.round(rng.random(n), 2)})
    thr = [0.1, 0.25, 0.5, 0.75, 0.9]
    counts = pfm.confusion_counts(df, y_true="y", y_score="s", threshold=thr, by="g")
    reps = resample_counts(counts, n_resamples=300, strata="g", seed=3, include_observed=True)
    obs = reps.filter(pl.col("replicate") == 0).drop("replicate")
    assert obs.select("g", "threshold", "tp", "fp", "tn", "fn").equals(
        counts.select("g", "threshold", "tp", "fp", "tn", "fn"))
    check = reps.sort("replicate", "g", "threshold").group_by("replicate", "g").agg(
        (pl.col("tp").diff().drop_nulls() <= 0).all().alias("tp_down"),
        (pl.col("fp").diff().drop_nulls() <= 0).all().alias("fp_down"),
        (pl.col("tp") + pl.col("fn")).n_unique().alias("pos_const"),
        pl.col("n").n_unique().alias("n_const"))
    assert check["tp_down"].all() and check["fp_down"].all()
    assert (check["pos_const"] == 1).all() and (check["n_const"] == 1).all()
    # brute force: the same statistic by resampling the rows in numpy has the same moments
    boot = reps.filter(pl.col("replicate") > 0, pl.col("g") == "a", pl.col("threshold") == 0.5)
    rows_a = df.filter(pl.col("g") == "a")
    y, s = rows_a["y"].to_numpy(), rows_a["s"].to_numpy()
    brute = []
    r2 = np.random.default_rng(99)
    for _ in range(300):
        i = r2.integers(0, y.size, y.size)
        brute.append(int(((y[i] == 1) & (s[i] >= 0.5)).sum()))
    assert abs(np.mean(brute) - boot["tp"].mean()) < 5 * np.std(brute) / math.sqrt(150)
    assert np.std(brute) == pytest.approx(boot["tp"].std(), rel=0.25)


# ---------------------------------------------------------------------------------------------
# the two engines agree
# ---------------------------------------------------------------------------------------------


def _quantile_mc_se(sd: float, alpha: float, b: int) -> float:
    """Monte Carlo standard error of a bootstrap α/2 quantile (normal approximation)."""
    p = alpha / 2
    z = NormalDist().inv_cdf(p)
    return sd * math.sqrt(p * (1 - p) / b) / NormalDist().pdf(z)


def test_engines_agree_within_monte_carlo_error() -> None:
    df = make_rows(2000, 4, weights=True)
    opts: dict[str, Any] = dict(y_true="y", y_pred="p", by="g", weight="w", reference="a",
                                metrics=["tpr", "fpr", "ppv", "accuracy", "selection_rate"],
                                stratify=True)
    b_counts, b_rows = 4000, 500
    fast = bootstrap_metrics(df, n_resamples=b_counts, seed=1, **opts)
    slow = bootstrap_metrics(df, n_resamples=b_rows, seed=2, engine="rows", **opts)
    assert set(fast["engine"]) == {"counts"} and set(slow["engine"]) == {"rows"}
    key = ["statistic", "g", "metric"]
    both = fast.join(slow, on=key, how="inner", nulls_equal=True, suffix="_r")
    assert both.height == fast.height == slow.height
    assert (both["estimate"] - both["estimate_r"]).abs().max() < 1e-12  # type: ignore[operator]
    checked = 0
    for r in both.iter_rows(named=True):
        sd = max(r["std_error"], r["std_error_r"])
        if sd == 0:
            assert r["ci_low"] == r["ci_low_r"] and r["ci_high"] == r["ci_high_r"]
            continue
        tol = 4.5 * math.hypot(_quantile_mc_se(sd, 0.05, b_counts),
                               _quantile_mc_se(sd, 0.05, b_rows)) + 0.004
        assert abs(r["ci_low"] - r["ci_low_r"]) < tol, r
        assert abs(r["ci_high"] - r["ci_high_r"]) < tol, r
        rel = 4.5 * math.sqrt(1 / (2 * b_counts) + 1 / (2 * b_rows))
        assert abs(r["std_error"] / r["std_error_r"] - 1) < rel, r
        checked += 1
    assert checked > 50


# ---------------------------------------------------------------------------------------------
# the seed's stratified bias-adjusted AUPR
# ---------------------------------------------------------------------------------------------

SHARES = {True: 0.2, False: 0.8}  # |B| / |U| and 1 − |B| / |U|


def seed_aupr_numpy(y: np.ndarray[Any, Any], s: np.ndarray[Any, Any],
                    in_b: np.ndarray[Any, Any]) -> float:
    """The notebook's IW-AUPR, brute force: test-set weights, 50 thresholds, stop at recall 1."""
    n, nb = y.size, int(in_b.sum())
    w = np.where(in_b, n / nb * SHARES[True], n / (n - nb) * SHARES[False])
    grid = np.linspace(s.max(), 0.0, 50)
    pts = []
    for t in grid:
        pp = s >= t
        prec = (w * pp * (y == 1)).sum() / (w * pp).sum()
        rec = (w * pp * (y == 1)).sum() / (w * (y == 1)).sum()
        pts.append((prec, rec))
        if rec >= 1.0 - 1e-12:
            break
    return float(sum(0.5 * (pts[i + 1][1] - pts[i][1]) * (pts[i][0] + pts[i + 1][0])
                     for i in range(len(pts) - 1)))


def seed_aupr_polars(rows: pl.LazyFrame) -> pl.DataFrame:
    """The same statistic with the package: weights recomputed from the replicate's rows."""
    m = pl.col("bootstrap_weight")
    frame = rows.with_columns(
        (m * pl.col("in_b").replace_strict(SHARES, return_dtype=pl.Float64)
         * m.sum() / m.sum().over("in_b")).alias("iw")).collect()
    grid = np.linspace(float(frame["s"].max()), 0.0, 50)  # type: ignore[arg-type]
    counts = pfm.confusion_counts(frame, y_true="y", y_score="s", threshold=list(grid),
                                  weight="iw")
    pr = pfm.metrics_from_counts(counts, metrics=["precision", "recall"], weighted=True)
    pr = pr.sort("threshold", descending=True)
    rec = pr["true_positive_rate"].to_numpy()
    stop = int(np.argmax(rec >= 1.0 - 1e-12)) if (rec >= 1.0 - 1e-12).any() else rec.size - 1
    p = pr["positive_predictive_value"].to_numpy()[: stop + 1]
    r = rec[: stop + 1]
    area = float((0.5 * np.diff(r) * (p[:-1] + p[1:])).sum())
    return pl.DataFrame({"metric": ["iw_aupr"], "value": [area]})


def seed_frame(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    in_b = rng.random(n) < 0.35
    y = (rng.random(n) < np.where(in_b, 0.5, 0.1)).astype(np.int8)
    s = np.clip(0.35 * y + 0.65 * rng.random(n), 0, 1)
    return pl.DataFrame({"in_b": in_b, "y": y, "s": s})


def test_seed_stratified_aupr_matches_brute_force_resampling() -> None:
    df = seed_frame(120, 8)
    b, seed = 200, 21
    ours = bootstrap_rows(df, seed_aupr_polars, n_resamples=b, strata="in_b", seed=seed,
                          method="basic", progress=False)
    # brute force: the documented resampling, replicate by replicate, stratum by stratum
    # (sorted stratum values), indices drawn uniformly with replacement among its rows
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
    assert row["estimate"] == pytest.approx(est, abs=1e-12)
    assert row["ci_low"] == pytest.approx(2 * est - hi, abs=1e-12)
    assert row["ci_high"] == pytest.approx(2 * est - lo, abs=1e-12)
    assert row["std_error"] == pytest.approx(np.std(values, ddof=1), abs=1e-12)
    assert row["n_defined"] == b and row["engine"] == "rows"


def aupr_from_counts(table: pl.DataFrame) -> pl.DataFrame:
    """Weighted AUPR over a fixed threshold grid, per replicate, from a count table."""
    pr = pfm.metrics_from_counts(table, metrics=["precision", "recall"], weighted=True)
    out = []
    for (rep,), part in pr.sort("threshold", descending=True).group_by(
            "replicate", maintain_order=True):
        p = part["positive_predictive_value"].to_numpy()
        r = part["true_positive_rate"].to_numpy()
        ok = ~np.isnan(p.astype(float))
        p, r = p[ok], r[ok]
        out.append((rep, float((0.5 * np.diff(r) * (p[:-1] + p[1:])).sum())))
    return pl.DataFrame(out, schema={"replicate": pl.Int64, "value": pl.Float64},
                        orient="row")


def test_seed_aupr_count_engine_agrees_with_brute_force() -> None:
    df = seed_frame(400, 9).with_columns(pl.col("s").round(2))
    grid = [round(t, 2) for t in np.linspace(0.02, 0.98, 49)]
    counts = pfm.confusion_counts(df, y_true="y", y_score="s", threshold=grid, by="in_b")
    b = 1500
    ours = bootstrap_counts(counts, aupr_from_counts, n_resamples=b, strata="in_b", seed=4,
                            reweight_by="in_b", population_shares=SHARES)
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
        return float(sum(0.5 * (pts[i + 1][1] - pts[i][1]) * (pts[i][0] + pts[i + 1][0])
                         for i in range(len(pts) - 1)))

    rng = np.random.default_rng(0)
    members = [np.flatnonzero(~in_b), np.flatnonzero(in_b)]
    vals = [brute(np.concatenate([r[rng.integers(0, r.size, r.size)] for r in members]))
            for _ in range(600)]
    row = ours.row(0, named=True)
    assert row["estimate"] == pytest.approx(brute(np.arange(y.size)), abs=1e-12)
    sd = np.std(vals, ddof=1)
    assert row["std_error"] == pytest.approx(sd, rel=0.15)
    lo, hi = np.quantile(vals, [0.025, 0.975])
    tol = 4.5 * math.hypot(_quantile_mc_se(sd, 0.05, b), _quantile_mc_se(sd, 0.05, 600))
    assert abs(row["ci_low"] - lo) < tol and abs(row["ci_high"] - hi) < tol


# ---------------------------------------------------------------------------------------------
# coverage of a disparity's 95 % percentile interval
# ---------------------------------------------------------------------------------------------


def test_percentile_coverage_of_a_disparity() -> None:
    """TPR(a) − TPR(b) = 0.75 − 0.6 = 0.15 in the population; 95 % intervals cover it ~95 %."""
    rng = np.random.default_rng(2024)
    sims, n, b = 1000, 1500, 500
    truth = 0.75 - 0.6
    covered = 0
    for i in range(sims):
        g = np.where(rng.random(n) < 0.6, "a", "b")
        y = rng.random(n) < 0.4
        tpr = np.where(g == "a", 0.75, 0.6)
        p = np.where(y, rng.random(n) < tpr, rng.random(n) < 0.2)
        out = bootstrap_metrics(pl.DataFrame({"g": g, "y": y, "p": p}), y_true="y",
                                y_pred="p", by="g", metrics="tpr", reference="b", criteria=(),
                                n_resamples=b, seed=i)
        row = out.filter(pl.col("statistic") == "difference", pl.col("g") == "a").row(
            0, named=True)
        covered += row["ci_low"] <= truth <= row["ci_high"]
    rate = covered / sims
    assert 0.93 <= rate <= 0.97, rate


# ---------------------------------------------------------------------------------------------
# absent groups, laziness, reproducibility, options
# ---------------------------------------------------------------------------------------------


def test_absent_group_gives_counted_nulls() -> None:
    df = pl.concat([make_rows(60, 5, groups=("a", "b")),
                    pl.DataFrame({"g": ["z"], "y": [1], "p": [1]},
                                 schema={"g": pl.String, "y": pl.Int8, "p": pl.Int8})])
    b = 300
    out = bootstrap_metrics(df, y_true="y", y_pred="p", by="g", metrics="selection_rate",
                            reference="z", n_resamples=b, seed=3)
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    reps = resample_counts(counts, n_resamples=b, seed=3)
    present = int((reps.filter(pl.col("g") == "z")["n"] > 0).sum())
    assert 0 < present < b  # z is absent from some replicates (P ≈ e^-1)
    z = out.filter(pl.col("g") == "z", pl.col("statistic") == "value").row(0, named=True)
    assert z["n_defined"] == present and z["n_resamples"] == b
    # a difference against the absent reference is null too, never an error
    diff = out.filter(pl.col("g") == "a", pl.col("statistic") == "difference").row(0, named=True)
    assert diff["n_defined"] == present
    # the row engine counts the same way
    rows = bootstrap_metrics(df, y_true="y", y_pred="p", by="g", metrics="selection_rate",
                             reference="z", n_resamples=40, seed=3, engine="rows",
                             progress=False)
    zr = rows.filter(pl.col("g") == "z", pl.col("statistic") == "value").row(0, named=True)
    assert zr["n_resamples"] == 40 and 0 < zr["n_defined"] < 40


def test_lazy_in_lazy_out_streaming_and_seed() -> None:
    df = make_rows(1000, 6, weights=True)
    opts: dict[str, Any] = dict(y_true="y", y_pred="p", by="g", weight="w", metrics=["tpr"],
                                n_resamples=100, seed=5, engine="counts")
    eager = bootstrap_metrics(df, **opts)
    lazy = bootstrap_metrics(df.lazy(), **opts)
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect_schema().names() == eager.columns
    assert lazy.collect().equals(eager)
    assert lazy.collect(engine="streaming").equals(eager)
    assert bootstrap_metrics(df, **opts).equals(eager)
    assert not bootstrap_metrics(df, **{**opts, "seed": 6}).equals(eager)
    stats = set(eager["statistic"])
    assert stats == {"value", "difference", "ratio", "criterion", "between_groups_difference",
                     "between_groups_ratio"}
    # the weighted estimates are the package's point estimates
    disp = pfm.disparities(df, y_true="y", y_pred="p", by="g", weight="w", metrics="tpr")
    est = eager.filter(pl.col("statistic") == "difference").sort("g")["estimate"]
    assert np.allclose(est.to_numpy(), disp.sort("g")["difference"].to_numpy())


def test_auto_engine_choice() -> None:
    df = make_rows(400, 7, weights=True)
    few = bootstrap_metrics(df, y_true="y", y_pred="p", by="g", weight="w", metrics="tpr",
                            n_resamples=20, seed=0)
    assert set(few["engine"]) == {"counts"}
    cont = df.with_columns(w=pl.col("w") + pl.Series(np.linspace(0, 0.01, df.height)))
    many = bootstrap_metrics(cont, y_true="y", y_pred="p", by="g", weight="w", metrics="tpr",
                             n_resamples=20, seed=0, max_weight_levels=10, progress=False)
    assert set(many["engine"]) == {"rows"}


def test_reweighting_recomputed_per_replicate_matches_rows() -> None:
    df = seed_frame(600, 3).with_columns(p=pl.col("s") >= 0.5)
    opts: dict[str, Any] = dict(y_true="y", y_pred="p", by="in_b", metrics=["ppv", "tpr"],
                                reweight_by="in_b", population_shares=SHARES, criteria=())
    fast = bootstrap_metrics(df, n_resamples=2000, seed=1, **opts)
    slow = bootstrap_metrics(df, n_resamples=300, seed=2, engine="rows", progress=False,
                             **opts)
    both = fast.join(slow, on=["statistic", "in_b", "metric"], nulls_equal=True, suffix="_r")
    assert (both["estimate"] - both["estimate_r"]).abs().max() < 1e-12  # type: ignore[operator]
    ok = both.filter(pl.col("std_error") > 0)
    ratio = (ok["std_error"] / ok["std_error_r"]).to_numpy()
    assert np.all(np.abs(ratio - 1) < 0.3)


def test_poisson_rows_and_progress(capsys: pytest.CaptureFixture[str]) -> None:
    df = make_rows(300, 8)

    def sel(rows: pl.LazyFrame) -> pl.LazyFrame:
        c = pfm.confusion_counts(rows, y_true="y", y_pred="p", weight="bootstrap_weight")
        return pfm.metrics_from_counts(c, metrics="selection_rate", long=True).select("value")

    out = bootstrap_rows(df.lazy(), sel, n_resamples=30, seed=1, multiplicity="poisson",
                         progress=True)
    assert out["engine"].item() == "rows-poisson" and out["n_defined"].item() == 30
    assert "30/30" in capsys.readouterr().err
    a = bootstrap_rows(df, sel, n_resamples=15, strata="g", seed=4, progress=False)
    b = bootstrap_rows(df.lazy(), sel, n_resamples=15, strata="g", seed=4, progress=False)
    assert a.equals(b)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_resamples": 0}, "n_resamples"),
        ({"confidence": 1.0}, "confidence"),
        ({"method": "bogus"}, "method"),
        ({"method": "bca", "engine": "rows"}, "count engine"),
        ({"engine": "gpu"}, "engine"),
        ({"stratify": "nope"}, "nope"),
        ({"reweight_by": "g"}, "together"),
        ({"reweight_by": "g", "population_shares": {"a": 1.0}}, "'b'"),
    ],
)
def test_errors(kwargs: dict[str, Any], match: str) -> None:
    df = make_rows(50, 9, groups=("a", "b"))
    with pytest.raises(FairMetricsError, match=match):
        bootstrap_metrics(df, y_true="y", y_pred="p", by="g", **{"n_resamples": 5, **kwargs})


def test_errors_count_tables() -> None:
    df = make_rows(50, 9)
    sep = pfm.confusion_counts(df.with_columns(h=pl.col("g")), y_true="y", y_pred="p",
                               by=["g", "h"], separately=True)
    with pytest.raises(InvalidOptionError, match="separately"):
        resample_counts(sep, n_resamples=5)
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    with pytest.raises(FairMetricsError, match="strata"):
        resample_counts(counts, n_resamples=5, strata="nope")
    with pytest.raises(InvalidOptionError, match="Poisson"):
        bootstrap_rows(df, lambda f: f.select(pl.lit(1.0).alias("value")), n_resamples=2,
                       strata="g", multiplicity="poisson")


@pytest.mark.parametrize("reference", ["overall", "rest", "b"])
@pytest.mark.parametrize("weighted", [False, True])
def test_fast_statistics_equal_the_core_functions(reference: str, weighted: bool) -> None:
    """bootstrap_metrics evaluates wide; the result equals disparities / fairness_criteria /
    between_groups on the replicate table followed by intervals()."""
    from polars_fairmetrics.bootstrap import (
        _collapse,
        _draw,
        _finish,
        _metric_intervals,
        _metric_statistics,
    )

    df = pl.concat([make_rows(300, 10, weights=True),
                    pl.DataFrame({"g": ["tiny"], "y": [0], "p": [0], "w": [1.0]},
                                 schema={"g": pl.String, "y": pl.Int8, "p": pl.Int8,
                                         "w": pl.Float64})])
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by=["g", "w"], weight="w")
    rep = _draw(counts, ["g", "w"], False, [], 200, 1, True)
    col = _collapse(rep, ["g"], weight_key="w" if weighted else None, reweight_by=None,
                    shares=None)
    names = ["tpr", "ppv", "mcc", "selection_rate"]
    names = [pfm.metrics.resolve_metric(m).name for m in names]
    crit = ["equalized_odds_difference", "disparate_impact"]
    for method in ("percentile", "basic"):
        fast = _metric_intervals(col, ["g"], names, reference, weighted, crit, 0.9, method,
                                 "counts")
        slow = _finish(_metric_statistics(col, ["g"], names, reference, weighted, crit),
                       ["g"], False, names, crit, 0.9, method, "counts")
        assert fast.columns == slow.columns
        assert fast.select("statistic", "g", "metric", "n_defined", "n_resamples").equals(
            slow.select("statistic", "g", "metric", "n_defined", "n_resamples"))
        for c in ("estimate", "ci_low", "ci_high", "std_error"):
            a, b = fast[c].to_numpy(), slow[c].to_numpy()
            assert np.array_equal(np.isnan(a.astype(float)), np.isnan(b.astype(float))), c
            ok = ~np.isnan(a.astype(float))
            assert np.allclose(a[ok], b[ok], rtol=1e-12, atol=1e-12), c


def test_fast_statistics_equal_the_core_functions_with_thresholds() -> None:
    from polars_fairmetrics.bootstrap import (
        _collapse,
        _draw,
        _finish,
        _metric_intervals,
        _metric_statistics,
    )

    rng = np.random.default_rng(12)
    n = 500
    df = pl.DataFrame({"g": rng.choice(["a", "b", "c"], n), "y": rng.integers(0, 2, n),
                       "s": np.round(rng.random(n), 2)})
    counts = pfm.confusion_counts(df, y_true="y", y_score="s", threshold=[0.2, 0.5, 0.97],
                                  by="g")
    rep = _collapse(_draw(counts, ["g"], True, ["g"], 150, 2, True), ["g"], weight_key=None,
                    reweight_by=None, shares=None)
    names = ["true_positive_rate", "positive_predictive_value"]
    crit = ["equalized_odds_difference"]
    fast = _metric_intervals(rep, ["g"], names, "a", False, crit, 0.95, "percentile", "counts")
    slow = _finish(_metric_statistics(rep, ["g"], names, "a", False, crit), ["g"], True, names,
                   crit, 0.95, "percentile", "counts")
    assert fast.select("statistic", "g", "threshold", "metric", "n_defined").equals(
        slow.select("statistic", "g", "threshold", "metric", "n_defined"))
    for c in ("estimate", "ci_low", "ci_high", "std_error"):
        a, b = fast[c].fill_null(-9.0).to_numpy(), slow[c].fill_null(-9.0).to_numpy()
        assert np.allclose(a, b, rtol=1e-12, atol=1e-12), c
    out = bootstrap_metrics(df, y_true="y", y_score="s", threshold=[0.2, 0.5, 0.97], by="g",
                            metrics=names, reference="a", n_resamples=50, seed=1)
    assert out["threshold"].n_unique() == 3


def test_bca_matches_scipy_within_monte_carlo_error() -> None:
    """A skewed statistic (selection rate ≈ 0.04 of 400 rows): our BCa, whose jackknife is one
    leave-one-out table per cell weighted by the cell count, against scipy's row jackknife."""
    from scipy.stats import bootstrap as scipy_bootstrap

    rng = np.random.default_rng(30)
    n = 400
    p = (rng.random(n) < 0.04).astype(np.int8)
    df = pl.DataFrame({"g": ["a"] * n, "y": rng.integers(0, 2, n).astype(np.int8), "p": p})
    b = 6000
    ours = bootstrap_metrics(df, y_true="y", y_pred="p", by="g", metrics="selection_rate",
                             n_resamples=b, seed=3, method="bca", confidence=0.9, criteria=())
    row = ours.filter(pl.col("statistic") == "value").row(0, named=True)
    ref = scipy_bootstrap((p.astype(float),), np.mean, n_resamples=b, method="BCa",
                          confidence_level=0.9, random_state=np.random.default_rng(4))
    pct = bootstrap_metrics(df, y_true="y", y_pred="p", by="g", metrics="selection_rate",
                            n_resamples=b, seed=3, confidence=0.9, criteria=()).filter(
        pl.col("statistic") == "value").row(0, named=True)
    sd = row["std_error"]
    tol = 4.5 * math.hypot(_quantile_mc_se(sd, 0.1, b), _quantile_mc_se(sd, 0.1, b))
    # discrete statistic: allow one step of 1/n on top of the Monte Carlo error
    assert abs(row["ci_low"] - ref.confidence_interval.low) <= tol + 1 / n
    assert abs(row["ci_high"] - ref.confidence_interval.high) <= tol + 1 / n
    assert row["method"] == "bca" and row["n_resamples"] == b and row["n_defined"] == b
    # BCa moves the interval of this right-skewed statistic upwards from the percentile one
    assert row["ci_high"] >= pct["ci_high"]


def test_bca_weighted_cell_jackknife_equals_row_jackknife() -> None:
    from polars_fairmetrics.bootstrap import _bca_bounds

    rng = np.random.default_rng(2)
    rows = (rng.random(50) < 0.2).astype(float)
    est = rows.mean()
    boot = rng.binomial(50, est, size=999) / 50
    row_jack = np.array([np.delete(rows, i).mean() for i in range(rows.size)])
    ones = np.ones(rows.size)
    cells = np.array([rows.sum(), rows.size - rows.sum()])
    cell_jack = np.array([(rows.sum() - 1) / 49, rows.sum() / 49])
    a = _bca_bounds(boot, est, row_jack, ones, 0.1)
    b = _bca_bounds(boot, est, cell_jack, cells, 0.1)
    assert a == pytest.approx(b, abs=1e-12)
    with pytest.raises(InvalidOptionError, match="bca"):
        intervals(pl.DataFrame({"replicate": [0, 1], "value": [1.0, 2.0]}), method="bca")


def test_count_engine_scans_the_rows_once_and_schema_needs_no_scan() -> None:
    df = make_rows(500, 13)
    calls: list[int] = []

    def counted(frame: pl.DataFrame) -> pl.DataFrame:
        calls.append(frame.height)
        return frame

    lazy = df.lazy().map_batches(counted, schema=df.schema)
    out = bootstrap_metrics(lazy, y_true="y", y_pred="p", by="g", metrics=["tpr", "fpr"],
                            reference="rest", n_resamples=100, seed=0, stratify=True)
    names = out.collect_schema().names()
    assert calls == []
    assert names[:3] == ["statistic", "g", "metric"]
    for engine in ("in-memory", "streaming"):
        calls.clear()
        out.collect(engine=engine)
        assert len(calls) == 1, engine


def test_bca_of_bootstrap_counts_equals_bootstrap_metrics() -> None:
    df = make_rows(600, 14)
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")

    def ppv(table: pl.DataFrame) -> pl.DataFrame:
        return pfm.metrics_from_counts(table, metrics="ppv", long=True).select(
            "replicate", "g", "value")

    for lazy in (False, True):
        source = counts.lazy() if lazy else counts
        generic = bootstrap_counts(source, ppv, n_resamples=400, seed=5, method="bca")
        if isinstance(generic, pl.LazyFrame):
            generic = generic.collect()
        fast = bootstrap_metrics(df, y_true="y", y_pred="p", by="g", metrics="ppv",
                                 n_resamples=400, seed=5, method="bca", criteria=()).filter(
            pl.col("statistic") == "value")
        assert generic["g"].to_list() == fast["g"].to_list()
        for c in ("estimate", "ci_low", "ci_high", "std_error", "n_defined", "n_resamples"):
            assert np.allclose(generic[c].to_numpy(), fast[c].to_numpy(), rtol=1e-12), c
        assert set(generic["method"]) == {"bca"}
