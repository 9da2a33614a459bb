"""The effective-sample-size rule of weighted intervals (``WEIGHTED_MIN_ESS``).

Percentile and BCa intervals on weighted data are withheld (null, with the reason in
``ci_note``) when the Kish effective sample size :math:`(\\sum w)^2 / \\sum w^2` of the
statistic's denominator rows — the smallest over the group and the reference it compares — is
below the threshold (docs/coverage.md). Oracle: the Kish formula over the raw rows in numpy.
Adversarial cases: one huge weight in a cell, unweighted data, equal weights, a lazy and
streaming input, the audit report.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_fairmetrics as pfm
from polars_fairmetrics import bootstrap as boot_mod
from polars_fairmetrics.bootstrap import WEIGHTED_MIN_ESS, bootstrap_metrics

NOTE = "effective sample size"


def kish(w: np.ndarray[Any, Any]) -> float:
    return float(w.sum() ** 2 / (w**2).sum())


def frame(n: int, seed: int, *, sigma: float = 0.3) -> pl.DataFrame:
    """Three groups, mildly varying weights (large effective sizes)."""
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(["a", "b", "c"]), n, p=[0.5, 0.3, 0.2])
    y = rng.random(n) < 0.4
    p = np.where(rng.random(n) < 0.8, y, ~y)
    w = np.exp(rng.normal(0.0, sigma, n))
    return pl.DataFrame({"g": g, "y": y, "p": p, "w": w})


def dominated(n_big: int = 3000, n_small: int = 1200, seed: int = 3) -> pl.DataFrame:
    """Group ``b``'s positives dominated by one row weighing 10^5: its TPR rests on one row."""
    df = frame(n_big + n_small, seed).with_columns(
        g=pl.when(pl.int_range(pl.len()) < n_big).then(pl.lit("a")).otherwise(pl.lit("b"))
    )
    first_b_positive = df.with_row_index("i").filter((pl.col("g") == "b") & pl.col("y"))["i"][0]
    return df.with_columns(
        w=pl.when(pl.int_range(pl.len()) == first_b_positive)
        .then(pl.lit(1e5))
        .otherwise(pl.col("w"))
    )


def test_effective_sizes_match_the_kish_formula_over_the_rows() -> None:
    """Group, rest, overall and a named reference, against numpy over the raw rows."""
    df = frame(900, 1, sigma=1.2)
    counts = pfm.confusion_counts(
        df, y_true="y", y_pred="p", by="g", weight="w", weight_squares=True
    )
    g, y, p, w = (df[c].to_numpy() for c in ("g", "y", "p", "w"))
    sets = {
        "true_positive_rate": y,
        "false_positive_rate": ~y,
        "positive_predictive_value": p,
        "accuracy": np.ones_like(y),
    }
    for reference in ("rest", "overall", "a"):
        point = pfm.disparities(counts, metrics=list(sets), reference=reference)
        ess = boot_mod._effective_sizes(point, counts, False)
        assert ess is not None
        for i, r in enumerate(point.iter_rows(named=True)):
            den = sets[r["metric"]]
            own = kish(w[(g == r["g"]) & den])
            if reference == "rest":
                ref = kish(w[(g != r["g"]) & den])
            elif reference == "overall":
                ref = kish(w[den])
            else:
                ref = kish(w[(g == "a") & den])
            assert ess["value"][i] == pytest.approx(own, rel=1e-9)
            assert ess["difference"][i] == pytest.approx(min(own, ref), rel=1e-9)
    # a criterion compares: its value's size is the smaller one; equalized odds takes both
    # its metrics' denominators (positives and negatives)
    crit = pfm.fairness_criteria(
        counts,
        criteria=["equal_opportunity_difference", "equalized_odds_difference"],
        reference="rest",
    )
    ess = boot_mod._effective_sizes(crit, counts, False)
    assert ess is not None
    for i, r in enumerate(crit.iter_rows(named=True)):
        mine, rest = g == r["g"], g != r["g"]
        dens = [y] if r["metric"] == "equal_opportunity_difference" else [y, ~y]
        want = min(min(kish(w[mine & d]), kish(w[rest & d])) for d in dens)
        assert ess["value"][i] == pytest.approx(want, rel=1e-9)
    # between groups: the smallest over every group
    between = pfm.between_groups(counts, metrics="true_positive_rate")
    ess = boot_mod._effective_sizes(between, counts, True)
    assert ess is not None
    want = min(kish(w[(g == k) & y]) for k in ("a", "b", "c"))
    assert ess["difference"][0] == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("what", ["metrics", "disparities", "criteria"])
def test_one_huge_weight_withholds_the_interval_with_a_reason(what: str, method: str) -> None:
    df = dominated()
    out = bootstrap_metrics(
        df,
        y_true="y",
        y_pred="p",
        by="g",
        weight="w",
        what=what,  # type: ignore[arg-type]
        metrics=["true_positive_rate", "selection_rate"],
        criteria=["equal_opportunity_difference"],
        reference="rest",
        method=method,  # type: ignore[arg-type]
        n_resamples=200,
    )
    name = "equal_opportunity_difference" if what == "criteria" else "true_positive_rate"
    rows = {r["g"]: r for r in out.filter(pl.col("metric") == name).iter_rows(named=True)}
    b = rows["b"]
    assert b["ci_low"] is None and b["ci_high"] is None
    assert NOTE in b["ci_note"] and f"< {WEIGHTED_MIN_ESS}" in b["ci_note"]
    if what == "disparities":
        # the comparison against the rest rests on b's few effective rows too; a's own value
        # (thousands of effective rows) keeps its interval, its comparison with b does not
        assert b["difference_ci_low"] is None and b["ratio_ci_low"] is None
        assert rows["a"]["ci_low"] is not None
        assert rows["a"]["difference_ci_low"] is None
    if what == "metrics":
        assert rows["a"]["ci_low"] is not None and rows["a"]["ci_note"] is None
        # selection rate: b's whole group holds 1200 rows, but the one weight dominates it too
        sel = out.filter((pl.col("metric") == "selection_rate") & (pl.col("g") == "b"))
        assert sel["ci_low"][0] is None


def test_max_t_intervals_are_kept() -> None:
    """Between-groups (max-t) intervals cover at every effective size of the study: kept."""
    out = bootstrap_metrics(
        dominated(),
        y_true="y",
        y_pred="p",
        by="g",
        weight="w",
        what="between_groups",
        metrics="true_positive_rate",
        n_resamples=200,
    )
    assert out["ci_method"][0] == "max-t" and out["difference_ci_low"][0] is not None


def test_with_intervals_applies_the_rule_given_the_count_table() -> None:
    df = dominated()
    counts = pfm.confusion_counts(
        df, y_true="y", y_pred="p", by="g", weight="w", weight_squares=True
    )
    reps = pfm.resample_counts(counts, n_resamples=100)
    point = pfm.metrics_from_counts(counts, metrics="tpr")
    out = pfm.with_intervals(point, pfm.metrics_from_counts(reps, metrics="tpr"), counts=counts)
    b = out.filter(pl.col("g") == "b").row(0, named=True)
    assert b["ci_low"] is None and NOTE in b["ci_note"]
    a = out.filter(pl.col("g") == "a").row(0, named=True)
    assert a["ci_low"] is not None and a["ci_note"] is None


def test_unweighted_data_are_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    df = frame(600, 4)
    opts: dict[str, Any] = dict(
        y_true="y", y_pred="p", by="g", what="disparities", reference="rest", n_resamples=100
    )
    before = bootstrap_metrics(df, **opts)
    monkeypatch.setattr(boot_mod, "WEIGHTED_MIN_ESS", 10**9)
    after = bootstrap_metrics(df, **opts)
    assert_frame_equal(before, after)
    assert before["ci_low"].null_count() == 0
    assert not before["ci_note"].fill_null("").str.contains(NOTE).any()


def test_equal_weights_are_the_unweighted_bootstrap() -> None:
    """Equal weights: n_eff is the row count and the weighted bootstrap is the unweighted one,
    so nothing is withheld, even on groups far below the threshold."""
    df = frame(300, 5).with_columns(w=pl.lit(2.5))
    counts = pfm.confusion_counts(
        df, y_true="y", y_pred="p", by="g", weight="w", weight_squares=True
    )
    w2 = counts.select((pl.col("tp_w") ** 2 / pl.col("tp_w2")).alias("ess"), "tp")
    assert np.allclose(w2["ess"].to_numpy(), w2["tp"].to_numpy(), rtol=1e-12)  # n_eff = n
    assert (counts["tp"] < WEIGHTED_MIN_ESS).all()
    opts: dict[str, Any] = dict(
        y_true="y", y_pred="p", by="g", what="metrics", metrics="tpr", n_resamples=100
    )
    weighted = bootstrap_metrics(df, weight="w", **opts)
    assert weighted["ci_low"].null_count() == 0
    assert weighted["ci_note"].null_count() == weighted.height
    # above the threshold with varying weights: given too
    big = frame(6000, 6, sigma=0.3)
    out = bootstrap_metrics(big, weight="w", **opts)
    assert out["ci_low"].null_count() == 0


def test_lazy_and_streaming_give_the_same_withheld_intervals() -> None:
    df = dominated()
    opts: dict[str, Any] = dict(
        y_true="y",
        y_pred="p",
        by="g",
        weight="w",
        what="disparities",
        metrics="tpr",
        reference="rest",
        n_resamples=100,
    )
    eager = bootstrap_metrics(df, **opts)
    lazy = bootstrap_metrics(df.lazy(), **opts)
    assert isinstance(lazy, pl.LazyFrame)
    for engine in ("in-memory", "streaming"):
        assert_frame_equal(lazy.collect(engine=engine), eager, rel_tol=1e-9)
    b = eager.filter(pl.col("g") == "b")
    assert b.height == 1 and b["ci_note"].fill_null("").str.contains(NOTE).all()


def test_the_audit_report_shows_the_withheld_interval() -> None:
    r = pfm.audit(
        dominated(),
        y_true="y",
        y_pred="p",
        by="g",
        weight="w",
        metrics=["true_positive_rate"],
        reference="rest",
        intervals=100,
    )
    m = r["metrics"].filter(pl.col("metric") == "true_positive_rate")
    b = m.filter(pl.col("g") == "b").row(0, named=True)
    assert b["ci_low"] is None and NOTE in b["ci_note"]


def test_stratum_weights_recomputed_per_replicate_are_not_concerned() -> None:
    """``reweight_by=`` without ``weight=``: weights constant within a stratum, recomputed in
    every stratified replicate (the bootstrap follows them exactly): no effective-size rule.
    With a continuous ``weight=`` as well, the rule applies to the product."""
    rng = np.random.default_rng(1)
    n = 600
    in_b = rng.random(n) < 0.3
    y = rng.random(n) < np.where(in_b, 0.5, 0.2)
    pred = np.where(rng.random(n) < 0.85, y, ~y)
    df = pl.DataFrame({"in_b": in_b, "y": y, "p": pred, "all": "all"})
    opts: dict[str, Any] = dict(
        y_true="y",
        y_pred="p",
        by="all",
        what="metrics",
        metrics="tpr",
        stratify="in_b",
        reweight_by="in_b",
        population_shares={True: 0.02, False: 0.98},
        n_resamples=100,
    )
    out = bootstrap_metrics(df, **opts)
    assert out["ci_low"].null_count() == 0 and out["ci_note"].null_count() == 1
    heavy = df.with_columns(w=pl.Series(np.exp(rng.normal(0.0, 2.0, n))))
    out = bootstrap_metrics(heavy, weight="w", **opts)
    assert out["ci_low"][0] is None and NOTE in out["ci_note"][0]


def test_compare_models_applies_the_rule_to_models_and_their_gap() -> None:
    """The model comparison's intervals (per model, and the gap to the baseline model) follow
    the same rule: b's TPR rests on one row, so b's intervals are withheld; a's are given."""
    df = dominated().with_columns(
        m1=pl.col("p"), m2=pl.col("p") ^ (pl.int_range(pl.len()) % 7 == 0)
    )
    out = pfm.compare_models(
        df,
        y_true="y",
        predictions=["m1", "m2"],
        by="g",
        weight="w",
        metrics="tpr",
        reference="rest",
        baseline_model="m1",
        intervals=100,
    )
    b = out.filter((pl.col("g") == "b") & (pl.col("model") == "m2")).row(0, named=True)
    assert b["ci_low"] is None and b["model_difference_ci_low"] is None
    assert NOTE in b["ci_note"]
    # group a against the rest (b) shares b's few effective rows; a's own value does not
    a = out.filter((pl.col("g") == "a") & (pl.col("model") == "m2")).row(0, named=True)
    assert a["ci_low"] is not None and a["model_difference_ci_low"] is None
