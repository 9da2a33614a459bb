"""Calibration within groups against independent oracles.

- reliability curves against scikit-learn's ``calibration_curve`` (both strategies), per group,
  on random data with ties, nulls and a null group (hypothesis);
- the expected calibration error against a numpy reference written from the definition;
- calibration-in-the-large against numpy means; the calibration slope against a per-row
  Newton fit in numpy and scikit-learn's unpenalised ``LogisticRegression``;
- disparities against the statistics of the reference's rows computed directly (the rest of the
  population, the whole population, a named group);
- mergeability (cells of parts add up to the cells of the whole), both engines, intervals and
  bad input.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from sklearn.calibration import calibration_curve
from sklearn.linear_model import LogisticRegression

import polars_fairmetrics as pfm
from polars_fairmetrics.calibration import CLIP, _logistic_slopes
from polars_fairmetrics.exceptions import (
    InvalidOptionError,
    InvalidScoreError,
    ReferenceGroupError,
)

GROUPS = ["a", "b", "c", None]


# ---------------------------------------------------------------------------------------------
# Oracles
# ---------------------------------------------------------------------------------------------


def np_bins(s: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
    """Bin ids exactly as scikit-learn's calibration_curve makes them."""
    if strategy == "quantile":
        edges = np.percentile(s, np.linspace(0, 1, n_bins + 1) * 100)
    else:
        edges = np.linspace(0.0, 1.0, n_bins + 1)
    return np.searchsorted(edges[1:-1], s)


def np_ece(y: np.ndarray, s: np.ndarray, n_bins: int, strategy: str, w: Any = None) -> float:
    """ECE = sum_b (W_b / W) |mean_w(y)_b - mean_w(s)_b|, from the definition."""
    w = np.ones_like(s) if w is None else w
    ids = np_bins(s, n_bins, strategy)
    total = 0.0
    for b in np.unique(ids):
        m = ids == b
        wb = w[m].sum()
        if wb > 0:
            total += wb * abs(np.sum(w[m] * y[m]) / wb - np.sum(w[m] * s[m]) / wb)
    return total / w.sum()


def np_slope(y: np.ndarray, s: np.ndarray, w: Any = None) -> float | None:
    """Per-row logistic regression of y on logit(s) by Newton's method (numpy)."""
    w = np.ones_like(s) if w is None else w
    p = np.clip(s, CLIP, 1 - CLIP)
    x = np.column_stack([np.ones_like(p), np.log(p / (1 - p))])
    keep = w > 0
    x, y, w = x[keep], y[keep], w[keep]
    if y.size == 0 or y.min() == y.max():
        return None
    x1, x0 = x[y == 1, 1], x[y == 0, 1]
    if x0.max() <= x1.min() or x1.max() <= x0.min():  # (quasi-)complete separation
        return None

    def loss(b: np.ndarray) -> float:
        eta = x @ b
        return float(np.sum(w * (np.logaddexp(0, eta) - y * eta)))

    beta = np.array([0.0, 1.0])
    for _ in range(500):
        mu = np.exp(-np.logaddexp(0, -(x @ beta)))
        grad = x.T @ (w * (y - mu))
        hess = (x * (w * mu * (1 - mu))[:, None]).T @ x
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while loss(beta + t * step) > loss(beta) + 1e-12 * abs(loss(beta)) and t > 1e-12:
            t /= 2  # step halving: the loss never increases
        beta = beta + t * step
        if np.abs(t * step).max() < 1e-12 * (1 + np.abs(beta).max()):
            return float(beta[1])
    raise AssertionError("the reference fit did not converge")


@st.composite
def frames(draw: Any) -> pl.DataFrame:
    n = draw(st.integers(1, 150))
    decimals = draw(st.sampled_from([1, 2, 3]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    s = np.round(rng.random(n), decimals)
    y = (rng.random(n) < s).astype(np.int64)
    g = rng.choice(np.array(GROUPS, dtype=object), n)
    df = pl.DataFrame({"g": g.tolist(), "y": y, "s": s}, schema_overrides={"g": pl.String})
    nulls = rng.random(n) < draw(st.sampled_from([0.0, 0.1]))
    return df.with_columns(
        pl.when(pl.Series(nulls)).then(None).otherwise(pl.col("y")).alias("y"),
    )


def _group_rows(df: pl.DataFrame, g: str | None) -> pl.DataFrame:
    cond = pl.col("g").is_null() if g is None else (pl.col("g") == g)
    return df.filter(cond & pl.col("y").is_not_null() & pl.col("s").is_not_null())


# ---------------------------------------------------------------------------------------------
# Reliability curves = scikit-learn's calibration_curve
# ---------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    df=frames(),
    n_bins=st.integers(1, 12),
    strategy=st.sampled_from(["uniform", "quantile"]),
)
def test_reliability_curve_is_sklearn_calibration_curve_per_group(
    df: pl.DataFrame, n_bins: int, strategy: str
) -> None:
    curve = pfm.reliability_curve(
        df, y_true="y", y_score="s", by="g", n_bins=n_bins, strategy=strategy
    )
    for g in GROUPS:
        rows = _group_rows(df, g)
        mine = curve.filter(pl.col("g").is_null() if g is None else pl.col("g") == g)
        if rows.height == 0:
            assert mine.height == 0
            continue
        y, s = rows["y"].to_numpy(), rows["s"].to_numpy()
        prob_true, prob_pred = calibration_curve(y, s, n_bins=n_bins, strategy=strategy)
        np.testing.assert_allclose(mine["fraction_positive"].to_numpy(), prob_true, rtol=1e-12)
        np.testing.assert_allclose(mine["mean_predicted"].to_numpy(), prob_pred, rtol=1e-12)
        ids = np_bins(s, n_bins, strategy)
        assert mine["bin"].to_list() == sorted(set(ids.tolist()))
        assert mine["n"].to_list() == np.bincount(ids)[np.bincount(ids) > 0].tolist()
        assert int(mine["positives"].sum()) == int(y.sum())


def test_quantile_edges_are_numpys_percentiles() -> None:
    rng = np.random.default_rng(3)
    s = np.round(rng.random(1001), 2)
    df = pl.DataFrame({"y": (rng.random(1001) < s).astype(int), "s": s})
    for n_bins in (3, 7, 10):
        curve = pfm.reliability_curve(
            df, y_true="y", y_score="s", n_bins=n_bins, strategy="quantile"
        )
        edges = np.percentile(s, np.linspace(0, 1, n_bins + 1) * 100)
        for row in curve.iter_rows(named=True):
            assert row["bin_low"] == edges[row["bin"]]
            assert row["bin_high"] == edges[row["bin"] + 1]


# ---------------------------------------------------------------------------------------------
# ECE, calibration-in-the-large, slope
# ---------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=frames(), n_bins=st.integers(1, 15), strategy=st.sampled_from(["uniform", "quantile"]))
def test_ece_and_citl_against_numpy(df: pl.DataFrame, n_bins: int, strategy: str) -> None:
    out = pfm.calibration_metrics(
        df,
        y_true="y",
        y_score="s",
        by="g",
        n_bins=n_bins,
        strategy=strategy,
        metrics=["ece", "citl"],
    )
    for g in GROUPS:
        rows = _group_rows(df, g)
        mine = out.filter(pl.col("g").is_null() if g is None else pl.col("g") == g)
        if not (df["g"].is_null() if g is None else df["g"] == g).any():
            assert mine.height == 0
            continue
        values = dict(zip(mine["metric"], mine["value"], strict=True))
        assert mine["support"].to_list() == [rows.height] * 2
        if rows.height == 0:
            assert values == {"expected_calibration_error": None, "calibration_in_the_large": None}
            continue
        y, s = rows["y"].to_numpy().astype(float), rows["s"].to_numpy()
        assert values["expected_calibration_error"] == pytest.approx(
            np_ece(y, s, n_bins, strategy), rel=1e-10, abs=1e-12
        )
        assert values["calibration_in_the_large"] == pytest.approx(
            s.mean() - y.mean(), rel=1e-10, abs=1e-12
        )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=frames())
def test_slope_is_the_per_row_logistic_fit(df: pl.DataFrame) -> None:
    out = pfm.calibration_metrics(df, y_true="y", y_score="s", by="g", metrics="slope")
    for g in GROUPS:
        rows = _group_rows(df, g)
        mine = out.filter(pl.col("g").is_null() if g is None else pl.col("g") == g)
        if mine.height == 0:
            continue
        expected = (
            np_slope(rows["y"].to_numpy().astype(float), rows["s"].to_numpy())
            if rows.height
            else None
        )
        got = mine["value"].item()
        if expected is None:
            assert got is None
        else:
            assert got == pytest.approx(expected, rel=1e-7, abs=1e-9)


def test_slope_against_sklearn_weighted() -> None:
    rng = np.random.default_rng(11)
    n = 3000
    s = np.clip(rng.beta(2, 3, n), 1e-6, 1 - 1e-6)
    y = (rng.random(n) < s**0.8).astype(int)
    w = rng.random(n) + 0.5
    df = pl.DataFrame({"y": y, "s": s, "w": w})
    x = np.log(s / (1 - s))[:, None]
    for weight in (None, "w"):
        model = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000)
        model.fit(x, y, sample_weight=None if weight is None else w)
        got = pfm.calibration_metrics(df, y_true="y", y_score="s", weight=weight, metrics="slope")
        assert got["value"].item() == pytest.approx(model.coef_[0, 0], rel=1e-5)
        exact = np_slope(y.astype(float), s, None if weight is None else w)
        assert got["value"].item() == pytest.approx(exact, rel=1e-9)


def test_weighted_ece_and_curve_against_numpy() -> None:
    rng = np.random.default_rng(5)
    n = 500
    s = np.round(rng.random(n), 2)
    y = (rng.random(n) < s).astype(float)
    w = rng.random(n) * 3
    df = pl.DataFrame({"y": y.astype(int), "s": s, "w": w})
    for strategy in ("uniform", "quantile"):
        ece = pfm.calibration_metrics(
            df, y_true="y", y_score="s", weight="w", metrics="ece", strategy=strategy
        )["value"].item()
        assert ece == pytest.approx(np_ece(y, s, 10, strategy, w), rel=1e-10)
        curve = pfm.reliability_curve(df, y_true="y", y_score="s", weight="w", strategy=strategy)
        ids = np_bins(s, 10, strategy)
        for row in curve.iter_rows(named=True):
            m = ids == row["bin"]
            assert row["n"] == m.sum()
            assert row["positives"] == y[m].sum()
            assert row["n_w"] == pytest.approx(w[m].sum())
            assert row["fraction_positive"] == pytest.approx(np.sum(w[m] * y[m]) / w[m].sum())
            assert row["mean_predicted"] == pytest.approx(np.sum(w[m] * s[m]) / w[m].sum())


def test_slope_undefined_cases_are_null() -> None:
    one_class = pl.DataFrame({"y": [1, 1, 1], "s": [0.2, 0.5, 0.9]})
    one_score = pl.DataFrame({"y": [0, 1, 1], "s": [0.5, 0.5, 0.5]})
    separated = pl.DataFrame({"y": [0, 0, 1, 1], "s": [0.1, 0.2, 0.7, 0.8]})
    for df in (one_class, one_score, separated):
        out = pfm.calibration_metrics(df, y_true="y", y_score="s", metrics="slope")
        assert out["value"].item() is None


def test_newton_handles_many_units_at_once() -> None:
    """The vectorised fit over units equals one fit per unit."""
    rng = np.random.default_rng(2)
    uid = rng.integers(0, 5, 400)
    x = rng.normal(size=400)
    w = rng.integers(1, 4, 400).astype(float)
    k = np.minimum(w, rng.binomial(w.astype(int), 1 / (1 + np.exp(-0.7 * x))).astype(float))
    together = _logistic_slopes(uid, x, w, k, 5)
    for u in range(5):
        m = uid == u
        alone = _logistic_slopes(np.zeros(m.sum(), dtype=np.int64), x[m], w[m], k[m], 1)
        assert together[u] == pytest.approx(alone[0], rel=1e-12)


# ---------------------------------------------------------------------------------------------
# Cells: nulls, mergeability, engines
# ---------------------------------------------------------------------------------------------


def test_nulls_are_counted_never_lost() -> None:
    df = pl.DataFrame(
        {
            "g": ["a", "a", "a", "b", None],
            "y": [1, None, 0, 1, 1],
            "s": [0.5, 0.2, None, 0.4, 0.3],
            "w": [1.0, 1.0, 1.0, None, 2.0],
        }
    )
    cells = pfm.score_cells(df, y_true="y", y_score="s", by="g", weight="w")
    per_group = cells.group_by("g").agg(pl.col("n", "n_null").sum()).sort("g", nulls_last=True)
    assert per_group.rows() == [("a", 1, 2), ("b", 0, 1), (None, 1, 0)]
    out = pfm.calibration_metrics(df, y_true="y", y_score="s", by="g", weight="w", metrics="citl")
    assert out.filter(pl.col("g") == "b")["value"].item() is None
    assert out.filter(pl.col("g") == "b")["support"].item() == 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=frames(), cut=st.floats(0.0, 1.0))
def test_cells_of_parts_add_up_to_the_whole(df: pl.DataFrame, cut: float) -> None:
    k = int(cut * df.height)
    parts = [df[:k], df[k:]]
    options: dict[str, Any] = {"y_true": "y", "y_score": "s", "by": "g"}
    whole = pfm.score_cells(df, **options)
    merged = pfm.combine_counts([pfm.score_cells(p, **options) for p in parts], keys=["g", "score"])
    assert_frame_equal(
        merged.drop("score_sum"), whole.drop("score_sum"), check_row_order=True
    )  # integers: exact
    np.testing.assert_allclose(merged["score_sum"], whole["score_sum"], rtol=1e-12)
    a = pfm.calibration_metrics(merged, n_bins=4, strategy="quantile")
    b = pfm.calibration_metrics(whole, n_bins=4, strategy="quantile")
    assert_frame_equal(a, b, rel_tol=1e-9)


def test_decimals_round_the_cells_and_keep_score_sums() -> None:
    df = pl.DataFrame({"y": [1, 0, 1], "s": [0.123, 0.1234, 0.5]})
    cells = pfm.score_cells(df, y_true="y", y_score="s", decimals=2)
    assert cells["score"].to_list() == [0.12, 0.5]
    assert cells["n"].to_list() == [2, 1]
    assert cells["score_sum"][0] == pytest.approx(0.123 + 0.1234)


@pytest.mark.parametrize(
    "func",
    [pfm.reliability_curve, pfm.calibration_metrics, pfm.calibration_disparities],
    ids=lambda f: f.__name__,
)
def test_both_engines_and_lazy_in_lazy_out(func: Any) -> None:
    rng = np.random.default_rng(9)
    n = 400
    df = pl.DataFrame(
        {
            "race": rng.choice(["x", "y", "z"], n),
            "sex": rng.choice(["f", "m"], n),
            "y": rng.integers(0, 2, n),
            "s": np.round(rng.random(n), 2),
        }
    )
    options: dict[str, Any] = {
        "y_true": "y",
        "y_score": "s",
        "by": ["race", "sex"],
        "separately": True,
        "n_resamples": 30,
        "strategy": "quantile",
    }
    lazy = func(df.lazy(), **options)
    assert isinstance(lazy, pl.LazyFrame)
    eager = func(df, **options)
    assert_frame_equal(lazy.collect(), eager)
    assert_frame_equal(lazy.collect(engine="streaming"), eager)


# ---------------------------------------------------------------------------------------------
# Disparities: the reference's statistics are the statistics of its rows
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_disparities_reference_rows(strategy: str) -> None:
    rng = np.random.default_rng(4)
    n = 600
    df = pl.DataFrame(
        {
            "g": rng.choice(["a", "b", "c"], n),
            "y": rng.integers(0, 2, n),
            "s": np.round(rng.random(n), 2),
        }
    )
    options: dict[str, Any] = {"y_true": "y", "y_score": "s", "n_bins": 5, "strategy": strategy}

    def values(rows: pl.DataFrame) -> dict[str, float]:
        out = pfm.calibration_metrics(rows, **options)
        return dict(zip(out["metric"], out["value"], strict=True))

    overall = values(df)
    for reference in ("rest", "overall", "b", "largest"):
        out = pfm.calibration_disparities(df, by="g", reference=reference, **options)
        largest = df.group_by("g").len().sort("len", "g", descending=[True, False])["g"][0]
        for g in ("a", "b", "c"):
            rows = out.filter(pl.col("g") == g)
            own = values(df.filter(pl.col("g") == g))
            if reference == "rest":
                ref = values(df.filter(pl.col("g") != g))
            elif reference == "overall":
                ref = overall
            else:
                name = "b" if reference == "b" else largest
                ref = values(df.filter(pl.col("g") == name))
            for row in rows.iter_rows(named=True):
                m = row["metric"]
                assert row["value"] == pytest.approx(own[m], rel=1e-9)
                assert row["reference_value"] == pytest.approx(ref[m], rel=1e-9)
                assert row["difference"] == pytest.approx(own[m] - ref[m], rel=1e-9, abs=1e-12)
                assert row["ratio"] == pytest.approx(own[m] / ref[m], rel=1e-9)
                is_ref = reference in ("b", "largest") and g == (
                    "b" if reference == "b" else largest
                )
                assert row["is_reference"] == is_ref


def test_disparities_several_attributes_and_missing_reference() -> None:
    df = pl.DataFrame(
        {
            "r": ["x", "y", "x", "y"],
            "s2": ["f", "f", "m", "m"],
            "y": [1, 0, 1, 1],
            "s": [0.9, 0.2, 0.6, 0.7],
        }
    )
    out = pfm.calibration_disparities(
        df,
        y_true="y",
        y_score="s",
        by=["r", "s2"],
        separately=True,
        reference={"r": "x", "s2": "m"},
        metrics="citl",
    )
    assert out["reference"].to_list() == ['r="x"', 'r="x"', 's2="m"', 's2="m"']
    with pytest.raises(ReferenceGroupError):
        pfm.calibration_disparities(
            df.lazy(), y_true="y", y_score="s", by="r", reference="nope"
        ).collect()


# ---------------------------------------------------------------------------------------------
# Intervals
# ---------------------------------------------------------------------------------------------


def test_intervals_cover_the_estimate_and_are_reproducible() -> None:
    rng = np.random.default_rng(8)
    n = 2000
    s = rng.random(n).round(2)
    df = pl.DataFrame(
        {"g": rng.choice(["a", "b"], n), "y": (rng.random(n) < s).astype(int), "s": s}
    )
    out = pfm.calibration_disparities(
        df, y_true="y", y_score="s", by="g", reference="rest", n_resamples=200, seed=1
    )
    assert (out["n_defined"] == 200).all()
    assert (out["ci_low"] <= out["value"]).all() and (out["value"] <= out["ci_high"]).all()
    assert (out["difference_ci_low"] <= out["difference_ci_high"]).all()
    again = pfm.calibration_disparities(
        df, y_true="y", y_score="s", by="g", reference="rest", n_resamples=200, seed=1
    )
    assert_frame_equal(out, again)
    # the bootstrap standard error of CITL is close to its sampling theory value
    citl = pfm.calibration_metrics(df, y_true="y", y_score="s", metrics="citl", n_resamples=400)
    width = citl["ci_high"].item() - citl["ci_low"].item()
    se = np.sqrt(np.var(s - df["y"].to_numpy()) / n)
    assert width / (2 * 1.96 * se) == pytest.approx(1.0, rel=0.2)


def test_curve_intervals_keep_the_observed_bins() -> None:
    rng = np.random.default_rng(1)
    s = rng.random(300).round(2)
    df = pl.DataFrame({"y": (rng.random(300) < s).astype(int), "s": s})
    out = pfm.reliability_curve(df, y_true="y", y_score="s", strategy="quantile", n_resamples=50)
    assert (out["ci_low"] <= out["fraction_positive"]).all()
    assert (out["fraction_positive"] <= out["ci_high"]).all()


def test_weighted_intervals_are_refused() -> None:
    df = pl.DataFrame({"y": [1, 0], "s": [0.4, 0.6], "w": [1.0, 2.0]})
    with pytest.raises(InvalidOptionError, match="weighted"):
        pfm.calibration_metrics(df, y_true="y", y_score="s", weight="w", n_resamples=10)


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [1.5, -0.1, float("nan")])
def test_scores_must_be_probabilities(bad: float) -> None:
    df = pl.DataFrame({"y": [1, 0], "score_col": [0.5, bad]})
    with pytest.raises(InvalidScoreError, match="score_col"):
        pfm.score_cells(df, y_true="y", y_score="score_col")
    with pytest.raises(InvalidScoreError, match="score_col"):
        pfm.calibration_metrics(df.lazy(), y_true="y", y_score="score_col").collect(
            engine="streaming"
        )


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"n_bins": 0}, "n_bins"),
        ({"strategy": "kmeans"}, "strategy"),
        ({"metrics": "brier"}, "unknown calibration metric"),
        ({"decimals": -1}, "decimals"),
        ({"n_resamples": -1}, "n_resamples"),
        ({"level": 1.0}, "level"),
    ],
)
def test_bad_options(options: dict[str, Any], match: str) -> None:
    df = pl.DataFrame({"y": [1, 0], "s": [0.5, 0.2]})
    with pytest.raises(InvalidOptionError, match=match):
        pfm.calibration_metrics(df, y_true="y", y_score="s", **options)


def test_a_cell_table_needs_its_columns() -> None:
    with pytest.raises(InvalidOptionError, match="score-cell table"):
        pfm.calibration_metrics(pl.DataFrame({"g": ["a"], "n": [1]}))
    with pytest.raises(InvalidOptionError, match="without y_true"):
        pfm.calibration_metrics(pl.DataFrame({"score": [0.1]}), y_score="s")


def test_group_column_named_like_a_cell_column_is_refused() -> None:
    df = pl.DataFrame({"score": ["a"], "y": [1], "s": [0.5]})
    with pytest.raises(InvalidOptionError, match="score"):
        pfm.score_cells(df, y_true="y", y_score="s", by="score")


def test_text_labels() -> None:
    df = pl.DataFrame({"y": ["yes", "no", "yes"], "s": [0.9, 0.1, 0.6]})
    out = pfm.calibration_metrics(df, y_true="y", y_score="s", pos_label="yes", metrics="citl")
    assert out["value"].item() == pytest.approx((0.9 + 0.1 + 0.6) / 3 - 2 / 3)
    assert math.isfinite(out["value"].item())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 300),
    weighted=st.booleans(),
    strategy=st.sampled_from(["uniform", "quantile"]),
)
def test_overall_reference_is_the_ungrouped_statistic(
    seed: int, n: int, weighted: bool, strategy: Any
) -> None:
    """The "overall" reference (pooled once per partition) equals the statistics of the
    whole data computed without groups — for every group, and with a null group key."""
    rng = np.random.default_rng(seed)
    df = pl.DataFrame(
        {
            "g": rng.choice(["a", "b", None], n).tolist(),
            "y": rng.integers(0, 2, n),
            "s": np.round(rng.random(n), 2),
            "w": rng.gamma(2.0, 1.0, n),
        }
    )
    kw: dict[str, Any] = {"weight": "w"} if weighted else {}
    names = ["expected_calibration_error", "calibration_in_the_large", "calibration_slope"]
    disp = pfm.calibration_disparities(
        df, y_true="y", y_score="s", by="g", n_bins=4, strategy=strategy, reference="overall", **kw
    )
    whole = pfm.calibration_metrics(df, y_true="y", y_score="s", n_bins=4, strategy=strategy, **kw)
    expected = dict(zip(whole["metric"].to_list(), whole["value"].to_list(), strict=True))
    for m in names:
        got = disp.filter(pl.col("metric") == m)["reference_value"].to_list()
        assert len(got) == disp["g"].n_unique()
        for value in got:
            if expected[m] is None:
                assert value is None
            else:
                assert value == pytest.approx(expected[m], rel=1e-9, abs=1e-9)
