"""Deployment class-prior correction: the note's microchip numbers, the equivalence with weighting
negatives by the factor (and with importance weights of the label), scikit-learn oracles, a
brute-force threshold search, and the errors.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from sklearn.metrics import confusion_matrix, precision_score

import polars_fairmetrics as pfm
from polars_fairmetrics.deployment import (
    deployment_counts,
    deployment_factors,
    deployment_metrics,
    threshold_for_precision,
)
from polars_fairmetrics.exceptions import EmptyGroupError, InvalidOptionError
from polars_fairmetrics.results import to_wide
from polars_fairmetrics.weights import importance_weights

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GRID = [0.0, 0.2, 0.4, 0.5, 0.6, 0.8, 1.0]
METRIC_NAMES = [
    "positive_predictive_value",
    "negative_predictive_value",
    "f1_score",
    "accuracy",
    "true_positive_rate",
    "false_positive_rate",
]


def _both_engines(lf: pl.LazyFrame) -> pl.DataFrame:
    mem = lf.collect()
    stream = lf.collect(engine="streaming")
    # float sums may be added in another order by the two engines: equal to 1e-12
    assert_frame_equal(mem, stream, rel_tol=1e-12, abs_tol=1e-12)
    return mem


def _with_test_values(out: pl.DataFrame, counts: pl.DataFrame) -> dict[str, tuple[float, float]]:
    """{metric: (deployment value, test value)}: the test values from the uncorrected table."""
    test = pfm.metrics_from_counts(counts, metrics=out["metric"].to_list())
    return {
        m: (v, t)
        for (m, v), t in zip(out.select("metric", "value").iter_rows(), test["value"], strict=True)
    }


def _close(a: float | None, b: float | None, rel: float = 1e-9) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= rel * max(1.0, abs(b))


@st.composite
def frames(draw: st.DrawFn) -> pl.DataFrame:
    n = draw(st.integers(min_value=2, max_value=80))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    p_pos = draw(st.sampled_from([0.1, 0.3, 0.5, 0.8]))
    y = (rng.random(n) < p_pos).astype(np.int64)
    y[0], y[1] = 1, 0  # both classes present overall
    return pl.DataFrame(
        {
            "g": rng.choice(["a", "b", "c"], size=n),
            "y": y,
            "s": rng.integers(0, 11, size=n) / 10,  # ties
            "w": rng.choice([0.0, 0.5, 1.0, 3.0], size=n),
        }
    )


# ---------------------------------------------------------------------------------------------
# The note's microchip example
# ---------------------------------------------------------------------------------------------


def test_microchip_example() -> None:
    # Test data: 1 positive per 10 negatives; deployment: 1 per 10,000 (a 1000-fold shift).
    # A deployment precision of 0.33 = TP / (TP + 1000 FP) needs FP = 0.67 TP / 330.
    tp, fp = 33_000, 67  # FP / TP = 0.67 / 330
    table = pl.DataFrame({"tp": [tp], "fp": [fp], "tn": [10 * tp - fp], "fn": [0]})
    assert deployment_factors(table, deploy_neg_pos_ratio=10_000)[
        "deploy_factor"
    ].item() == pytest.approx(1000.0, rel=1e-12)
    assert deployment_factors(table, deploy_positive_rate=1 / 10_001)[
        "deploy_factor"
    ].item() == pytest.approx(1000.0, rel=1e-12)
    out = deployment_metrics(table, deploy_neg_pos_ratio=10_000, metrics=["precision", "recall"])
    got = _with_test_values(out, table)
    deploy_p, test_p = got["positive_predictive_value"]
    assert deploy_p == pytest.approx(0.33, abs=1e-12)
    assert test_p == pytest.approx(1 / (1 + 0.67 / 330), rel=1e-12)
    assert round(test_p, 3) == 0.998
    assert got["true_positive_rate"][0] == got["true_positive_rate"][1] == 1.0

    # The note writes FP = 1.33 TP / 330, i.e. a test precision of 1 / (1 + 1.33/330) ≈ 0.996;
    # the same formula puts that classifier at ≈ 0.199 in deployment (0.33 is reached at a
    # 500-fold shift). Both readings are checked against TP / (TP + k FP).
    tp2, fp2 = 330_000, 1_330
    table2 = pl.DataFrame({"tp": [tp2], "fp": [fp2], "tn": [10 * tp2 - fp2], "fn": [0]})
    out2 = deployment_metrics(table2, deploy_neg_pos_ratio=10_000, metrics="precision")
    deploy2, test2 = _with_test_values(out2, table2)["positive_predictive_value"]
    assert round(test2, 3) == 0.996
    assert deploy2 == pytest.approx(1 / (1 + 1000 * 1.33 / 330), rel=1e-12)
    assert round(deploy2, 3) == 0.199
    out3 = deployment_metrics(table2, deploy_neg_pos_ratio=5_000, metrics="precision")
    assert round(out3["value"].item(), 2) == 0.33


def test_microchip_from_rows_and_lazy() -> None:
    # 300 defects (positives), 3000 good chips in test; 2 good chips flagged.
    n_pos, n_neg = 300, 3000
    y = [1] * n_pos + [0] * n_neg
    pred = [1] * n_pos + [1, 1] + [0] * (n_neg - 2)
    lf = pl.LazyFrame({"y": y, "pred": pred})
    out = deployment_metrics(
        lf, y_true="y", y_pred="pred", deploy_neg_pos_ratio=10_000, metrics="precision"
    )
    assert isinstance(out, pl.LazyFrame)
    res = _both_engines(out)
    assert res["value"].item() == pytest.approx(300 / (300 + 2 * 1000))
    assert res.select("support", "n", "n_null").row(0) == (302, 3300, 0)
    assert res["n_w"].item() == pytest.approx(300 + 3000 * 1000)  # the size in deployment
    counts = pfm.confusion_counts(lf, y_true="y", y_pred="pred")
    assert _both_engines(deployment_factors(counts, deploy_neg_pos_ratio=10_000)).row(0) == (
        pytest.approx(1000.0),
    )


# ---------------------------------------------------------------------------------------------
# The routes agree: corrected counts = negatives weighted by k = importance weights of y
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(frames(), st.sampled_from([0.001, 0.05, 0.5, 0.9]))
def test_correction_equals_weighting_negatives(df: pl.DataFrame, rate: float) -> None:
    y = df["y"].to_numpy()
    k = ((1 - rate) / rate) / ((y == 0).sum() / (y == 1).sum())  # numpy, over the whole frame
    lf = df.lazy()
    ours = deployment_metrics(
        lf,
        y_true="y",
        y_score="s",
        threshold=GRID,
        by="g",
        deploy_positive_rate=rate,
        metrics=METRIC_NAMES,
    )
    ours_df = _both_engines(ours).sort("g", "threshold", "metric")
    # route 2: weight every negative row by k
    weighted = lf.with_columns(pl.when(pl.col("y") == 0).then(k).otherwise(1.0).alias("kw"))
    route2 = (
        pfm.metrics_from_counts(
            pfm.confusion_counts(
                weighted, y_true="y", y_score="s", threshold=GRID, by="g", weight="kw"
            ),
            metrics=METRIC_NAMES,
            weighted=True,
        )
        .sort("g", "threshold", "metric")
        .collect()
    )
    # route 3: importance weights of the label with target {1: rate, 0: 1 - rate}
    iw = lf.with_columns(importance_weights("y", target={1: rate, 0: 1 - rate}))
    route3 = (
        pfm.metrics_from_counts(
            pfm.confusion_counts(
                iw, y_true="y", y_score="s", threshold=GRID, by="g", weight="importance_weight"
            ),
            metrics=METRIC_NAMES,
            weighted=True,
        )
        .sort("g", "threshold", "metric")
        .collect()
    )
    assert ours_df.height == route2.height == route3.height
    for a, b, c in zip(ours_df["value"], route2["value"], route3["value"], strict=True):
        assert _close(a, b) and _close(a, c), (a, b, c)
    # recall and FPR are unchanged
    test = (
        pfm.metrics_from_counts(
            pfm.confusion_counts(lf, y_true="y", y_score="s", threshold=GRID, by="g"),
            metrics=["true_positive_rate", "false_positive_rate"],
        )
        .sort("g", "threshold", "metric")
        .collect()
    )
    same = ours_df.filter(pl.col("metric").is_in(["true_positive_rate", "false_positive_rate"]))
    for v, t in zip(same.sort("g", "threshold", "metric")["value"], test["value"], strict=True):
        assert _close(v, t)


@SETTINGS
@given(frames(), st.sampled_from([0.01, 0.2]))
def test_deployment_precision_matches_sklearn(df: pl.DataFrame, rate: float) -> None:
    y, s, g = df["y"].to_numpy(), df["s"].to_numpy(), df["g"].to_numpy()
    k = ((1 - rate) / rate) / ((y == 0).sum() / (y == 1).sum())
    counts = pfm.confusion_counts(df, y_true="y", y_score="s", threshold=GRID, by="g")
    corrected = deployment_counts(counts, deploy_positive_rate=rate)
    prec = pfm.metrics_from_counts(corrected, metrics="precision")
    for grp, t, value in prec.select("g", "threshold", "value").iter_rows():
        mask = g == grp
        pred = (s[mask] >= t).astype(int)
        sw = np.where(y[mask] == 0, k, 1.0)
        if pred.sum() == 0:
            assert value is None
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = precision_score(y[mask], pred, sample_weight=sw, zero_division=np.nan)
        assert _close(value, float(ref)), (grp, t, value, ref)


@SETTINGS
@given(frames())
def test_weighted_table_and_per_group_mapping(df: pl.DataFrame) -> None:
    y, s, g, w = (df[c].to_numpy() for c in ("y", "s", "g", "w"))
    # a weighted table: the test ratio is measured on the weighted sums
    pos_w, neg_w = w[y == 1].sum(), w[y == 0].sum()
    counts = pfm.confusion_counts(df, y_true="y", y_score="s", threshold=0.5, by="g", weight="w")
    if pos_w == 0 or neg_w == 0:
        with pytest.raises(EmptyGroupError, match="test data"):
            deployment_counts(counts, deploy_neg_pos_ratio=50.0)
        return
    k = 50.0 / (neg_w / pos_w)
    out = deployment_counts(counts, deploy_neg_pos_ratio=50.0)
    for grp, fp_w, tn_w, tp_w in out.select("g", "fp_w", "tn_w", "tp_w").iter_rows():
        m = (g == grp) & (y == 0)
        assert fp_w == pytest.approx(k * w[m & (s >= 0.5)].sum(), rel=1e-12, abs=1e-12)
        assert tn_w == pytest.approx(k * w[m & (s < 0.5)].sum(), rel=1e-12, abs=1e-12)
        assert tp_w == pytest.approx(w[(g == grp) & (y == 1) & (s >= 0.5)].sum(), abs=1e-12)
    # per-group deployment rates: each group's factor from its own counts
    rates = {"a": 0.1, "b": 0.02, "c": 0.5}
    plain = pfm.confusion_counts(df, y_true="y", y_score="s", threshold=0.5, by="g")
    groups_ok = all(0 < y[g == grp].sum() < (g == grp).sum() for grp in np.unique(g))
    if not groups_ok:
        with pytest.raises(EmptyGroupError, match=r"of column\(s\) \['g'\]"):
            deployment_counts(plain, deploy_positive_rate=rates)
        return
    factors = deployment_factors(plain, deploy_positive_rate=rates)
    for grp, factor in factors.select("g", "deploy_factor").iter_rows():
        yy = y[g == grp]
        ref = ((1 - rates[grp]) / rates[grp]) / ((yy == 0).sum() / (yy == 1).sum())
        assert factor == pytest.approx(ref, rel=1e-12)


def test_disparities_of_deployment_precision() -> None:
    lf = pfm.scan_compas().with_columns((pl.col("decile_score") / 10).alias("score"))
    counts = pfm.confusion_counts(
        lf, y_true="two_year_recid", y_score="score", threshold=[0.5, 0.8], by="race"
    )
    corrected = deployment_counts(counts, deploy_positive_rate=0.05)
    disp = pfm.disparities(corrected, metrics="precision", reference="Caucasian")
    out = _both_engines(disp.sort("race", "threshold"))
    # the same disparities through the weight route
    y_all = lf.select(pl.col("two_year_recid").sum(), pl.len()).collect().row(0)
    k = (0.95 / 0.05) / ((y_all[1] - y_all[0]) / y_all[0])
    weighted = lf.with_columns(
        pl.when(pl.col("two_year_recid") == 0).then(k).otherwise(1.0).alias("kw")
    )
    ref = (
        pfm.disparities(
            weighted,
            y_true="two_year_recid",
            y_score="score",
            threshold=[0.5, 0.8],
            by="race",
            weight="kw",
            metrics="precision",
            reference="Caucasian",
        )
        .sort("race", "threshold")
        .collect()
    )
    for a, b in zip(out["difference"], ref["difference"], strict=True):
        assert _close(a, b)
    # deployment precision is far below test precision at a 5% base rate
    test = pfm.disparities(counts, metrics="precision", reference="Caucasian").collect()
    assert out["value"].max() < test["value"].min()  # type: ignore[operator]


# ---------------------------------------------------------------------------------------------
# Which threshold gives deployment precision >= p?
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(frames(), st.sampled_from([0.3, 0.6, 0.9]), st.sampled_from([None, 0.05, 0.5]))
def test_threshold_for_precision_brute_force(
    df: pl.DataFrame, p: float, rate: float | None
) -> None:
    y, s, g = df["y"].to_numpy(), df["s"].to_numpy(), df["g"].to_numpy()
    k = 1.0 if rate is None else ((1 - rate) / rate) / ((y == 0).sum() / (y == 1).sum())
    out = _both_engines(
        threshold_for_precision(
            df.lazy(),
            y_true="y",
            y_score="s",
            threshold=GRID,
            by="g",
            min_precision=p,
            deploy_positive_rate=rate,
            wide=True,
        )
    )
    assert out["g"].to_list() == sorted(np.unique(g).tolist())  # every group, even without one
    for row in out.iter_rows(named=True):
        mask = g == row["g"]
        assert row["n"] == mask.sum() and row["n_null"] == 0
        best = None
        for t in sorted(GRID):
            tp = int(((s[mask] >= t) & (y[mask] == 1)).sum())
            fp = int(((s[mask] >= t) & (y[mask] == 0)).sum())
            if tp + fp > 0 and tp / (tp + k * fp) >= p:
                pos = int(y[mask].sum())
                best = (t, tp / (tp + k * fp), tp / pos if pos else None, tp + fp, pos)
                break
        got = (
            row["threshold"],
            row["positive_predictive_value"],
            row["true_positive_rate"],
            row["positive_predictive_value_support"],
            row["true_positive_rate_support"],
        )
        if best is None:
            assert got == (None, None, None, 0, 0)
        else:
            assert got[0] == best[0] and got[3:] == best[3:]
            assert _close(got[1], best[1]) and _close(got[2], best[2])


def test_threshold_for_precision_on_a_count_table() -> None:
    df = pl.DataFrame(
        {"y": [1, 1, 0, 1, 0, 0, 0, 0], "s": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2]}
    )
    counts = pfm.confusion_counts(df, y_true="y", y_score="s", threshold=[0.2, 0.4, 0.6, 0.8])
    # test ratio 5:3; deployment 50:1 -> k = 30: precision at 0.8 is 2 / 2 = 1, at 0.6: 3/(3+30)
    out = threshold_for_precision(counts, min_precision=0.5, deploy_neg_pos_ratio=50)
    assert out.columns == ["threshold", "metric", "value", "support", "n", "n_null", "n_w"]
    assert out.select("threshold", "metric", "value", "support").rows() == [
        (0.8, "positive_predictive_value", 1.0, 2),
        (0.8, "true_positive_rate", pytest.approx(2 / 3), 3),
    ]
    assert out["n_w"].to_list() == pytest.approx([3 + 5 * 30] * 2)  # the deployment-scale size
    perfect = threshold_for_precision(counts, min_precision=1.0, deploy_neg_pos_ratio=50)
    assert perfect["threshold"].to_list() == [0.8, 0.8]
    unreachable = threshold_for_precision(
        counts.filter(pl.col("threshold") < 0.7), min_precision=0.9, deploy_neg_pos_ratio=50
    )
    assert unreachable.select("threshold", "value", "support", "n").rows() == [
        (None, None, 0, 8),
        (None, None, 0, 8),
    ]
    test = threshold_for_precision(counts, min_precision=0.7, metrics=["precision", "f1"])
    assert test.select("threshold", "metric").rows() == [
        (0.6, "positive_predictive_value"),
        (0.6, "f1_score"),
    ]
    with pytest.raises(InvalidOptionError, match="threshold sweep"):
        threshold_for_precision(
            pfm.confusion_counts(df, y_true="y", y_score="s", threshold=0.5).drop("threshold"),
            min_precision=0.5,
        )
    with pytest.raises(InvalidOptionError, match="min_precision"):
        threshold_for_precision(counts, min_precision=1.5)


# ---------------------------------------------------------------------------------------------
# The one factor: pooled by default, per group as a named option
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(frames(), st.sampled_from([0.01, 0.3]), st.sampled_from(["pooled", "per_group"]))
def test_factor_pooled_and_per_group(df: pl.DataFrame, rate: float, test_ratio: str) -> None:
    y, g = df["y"].to_numpy(), df["g"].to_numpy()
    counts = pfm.confusion_counts(df, y_true="y", y_score="s", threshold=[0.3, 0.7], by="g")
    groups = np.unique(g)
    if test_ratio == "per_group" and not all(0 < y[g == x].sum() < (g == x).sum() for x in groups):
        with pytest.raises(EmptyGroupError, match=r"of column\(s\) \['g'\]"):
            deployment_factors(counts, deploy_positive_rate=rate, test_ratio=test_ratio)  # type: ignore[arg-type]
        return
    lazy = deployment_factors(counts.lazy(), deploy_positive_rate=rate, test_ratio=test_ratio)  # type: ignore[arg-type]
    out = _both_engines(lazy)
    assert out.columns == ["g", "threshold", "deploy_factor"]
    assert out["g"].to_list() == sorted(out["g"].to_list())
    for grp, _, factor in out.iter_rows():
        yy = y if test_ratio == "pooled" else y[g == grp]
        ref = ((1 - rate) / rate) / ((yy == 0).sum() / (yy == 1).sum())
        assert factor == pytest.approx(ref, rel=1e-12)
    # deployment_counts scales the negatives by exactly these factors
    corrected = deployment_counts(counts, deploy_positive_rate=rate, test_ratio=test_ratio)  # type: ignore[arg-type]
    joined = corrected.join(out, on=["g", "threshold"])
    np.testing.assert_allclose(
        joined["fp_w"].to_numpy(), joined["fp"].to_numpy() * joined["deploy_factor"].to_numpy()
    )
    np.testing.assert_allclose(joined["tp_w"].to_numpy(), joined["tp"].to_numpy())


def test_count_table_kind_and_key_checks() -> None:
    df = pl.DataFrame({"g": ["b", "a", "b", "a"], "h": [1, 1, 2, 2], "y": [1, 0, 1, 0]})
    df = df.with_columns(p=pl.Series([1, 1, None, 0]))
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by=["g", "h"])
    out = deployment_counts(counts.reverse(), deploy_positive_rate=0.5)
    assert out.columns == [
        "g",
        "h",
        *["tp", "fp", "tn", "fn", "n"],
        *["tp_w", "fp_w", "tn_w", "fn_w", "n_w"],
        *["n_null", "n_null_y_true", "n_null_y_pred"],
    ]
    assert out.select("g", "h").rows() == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    assert int(out["n"].sum() + out["n_null"].sum()) == df.height  # rows reconcile
    with pytest.raises(InvalidOptionError, match=r"key column\(s\) \['h'\] besides by=\['g'\]"):
        deployment_counts(counts, deploy_positive_rate=0.5, by="g")
    with pytest.raises(InvalidOptionError, match="test_ratio='mine'"):
        deployment_counts(counts, deploy_positive_rate=0.5, test_ratio="mine")  # type: ignore[arg-type]
    wide = deployment_metrics(counts, deploy_positive_rate=0.5, metrics=["ppv", "npv"], wide=True)
    long = deployment_metrics(counts, deploy_positive_rate=0.5, metrics=["ppv", "npv"])
    assert_frame_equal(
        to_wide(long, quantities=["positive_predictive_value", "negative_predictive_value"]),
        wide,
        check_column_order=False,
    )


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------

TABLE = pl.DataFrame({"g": ["a", "b"], "tp": [3, 0], "fp": [1, 2], "tn": [4, 5], "fn": [2, 0]})


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"deploy_positive_rate": 0.0}, "strictly between 0 and 1"),
        ({"deploy_positive_rate": 1.0}, "strictly between 0 and 1"),
        ({"deploy_positive_rate": 1.2}, "strictly between 0 and 1"),
        ({"deploy_positive_rate": math.nan}, "not a finite number"),
        ({"deploy_neg_pos_ratio": 0.0}, "must be positive"),
        ({"deploy_neg_pos_ratio": -3.0}, "must be positive"),
        ({}, "exactly one"),
        ({"deploy_positive_rate": 0.1, "deploy_neg_pos_ratio": 9.0}, "exactly one"),
        ({"deploy_positive_rate": {"a": 0.0, "b": 0.1}}, "strictly between 0 and 1"),
    ],
)
def test_bad_deployment_values(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidOptionError, match=match):
        deployment_counts(TABLE, **kwargs)  # type: ignore[arg-type]


def test_errors_needing_data() -> None:
    # group b has no positives: fine with one population rate, an error with per-group rates
    assert deployment_counts(TABLE, deploy_positive_rate=0.1).height == 2
    with pytest.raises(
        EmptyGroupError, match=r"no positives in the group 'b' of column\(s\) \['g'\]"
    ):
        deployment_counts(TABLE, deploy_positive_rate={"a": 0.1, "b": 0.1})
    with pytest.raises(InvalidOptionError, match=r"does not list the group\(s\) 'b' of"):
        deployment_counts(TABLE.lazy(), deploy_positive_rate={"a": 0.1}).collect()
    no_neg = pl.LazyFrame({"tp": [3], "fp": [0], "tn": [0], "fn": [1]})
    with pytest.raises(
        EmptyGroupError, match=r"no negatives in the test data \(column\(s\) \['fp', 'tn'\]"
    ):
        deployment_counts(no_neg, deploy_positive_rate=0.1).collect(engine="streaming")
    with pytest.raises(InvalidOptionError, match="count table"):
        deployment_counts(pl.DataFrame({"y": [1]}), deploy_positive_rate=0.1)
    with pytest.raises(InvalidOptionError, match="y_true"):
        deployment_metrics(TABLE, deploy_positive_rate=0.1, y_pred="p")


def test_lazy_schema_and_namespace() -> None:
    lf = TABLE.lazy()
    out = lf.fair.deployment_counts(deploy_positive_rate=0.1)
    assert isinstance(out, pl.LazyFrame)
    schema = out.collect_schema()
    assert [schema[c] for c in ("tp", "tp_w", "fp_w", "tn_w", "fn_w", "n_w")] == [
        pl.Int64,
        pl.Float64,
        pl.Float64,
        pl.Float64,
        pl.Float64,
        pl.Float64,
    ]
    res = _both_engines(out)
    k = 9.0 / (12 / 5)
    assert res["fp_w"].to_list() == pytest.approx([k, 2 * k])
    assert res["tp_w"].to_list() == [3.0, 0.0]
    # a table without n gets it: the count-table kind
    assert res.columns[:6] == ["g", "tp", "fp", "tn", "fn", "n"]
    assert res["n"].to_list() == [10, 7]
    m = _both_engines(lf.fair.deployment_metrics(deploy_positive_rate=0.1, metrics="fpr"))
    test = pfm.metrics_from_counts(TABLE, metrics="fpr")
    assert m["value"].to_list() == pytest.approx(test["value"].to_list())
    cm = confusion_matrix([1, 0], [1, 0])  # keep the sklearn import honest
    assert cm.sum() == 2
