"""Importance weights and bias-adjusted weights against independent numpy / scikit-learn oracles.

The oracles below compute every weight with plain numpy loops over the rows (sharing no code with
the package); weighted metrics are compared with scikit-learn given the same ``sample_weight``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import cast

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from sklearn.metrics import (
    balanced_accuracy_score,
    confusion_matrix,
    precision_score,
    recall_score,
)

import polars_fairmetrics as pfm
from polars_fairmetrics.exceptions import (
    ColumnNotFoundError,
    EmptyGroupError,
    InvalidLabelError,
    InvalidOptionError,
    InvalidWeightError,
)
from polars_fairmetrics.results import to_wide
from polars_fairmetrics.weights import (
    MissingGroups,
    bias_adjusted_metrics,
    bias_adjusted_weights,
    importance_weighted_metrics,
    importance_weights,
    with_bias_adjusted_weights,
    with_importance_weights,
)

TOL = 1e-9
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _both_engines(lf: pl.LazyFrame) -> pl.DataFrame:
    mem = lf.collect()
    stream = lf.collect(engine="streaming")
    # float sums may be added in another order by the two engines: equal to 1e-12
    assert_frame_equal(mem, stream, rel_tol=1e-12, abs_tol=1e-12)
    return mem


def _close(ours: float | None, ref: float, tol: float = TOL) -> bool:
    if ours is None:
        return math.isnan(ref)
    if math.isnan(ref):
        return False
    return abs(ours - ref) <= tol * max(1.0, abs(ref))


@st.composite
def frames(draw: st.DrawFn) -> pl.DataFrame:
    n = draw(st.integers(min_value=1, max_value=80))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    p_pos = draw(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]))
    p_pred = draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))
    p_b = draw(st.sampled_from([0.2, 0.5, 0.8]))
    return pl.DataFrame(
        {
            "g": rng.choice(["a", "b", "c"], size=n),
            "h": rng.choice([1, 2], size=n),
            "y": (rng.random(n) < p_pos).astype(np.int64),
            "p": (rng.random(n) < p_pred).astype(np.int64),
            "s": rng.integers(0, 11, size=n) / 10,  # ties
            "in_b": rng.random(n) < p_b,
            "w": rng.choice([0.0, 0.5, 1.0, 2.0, 3.5], size=n),
        }
    )


# ---------------------------------------------------------------------------------------------
# numpy oracles
# ---------------------------------------------------------------------------------------------


def oracle_importance(
    levels: list[object], target: dict[object, float] | None, w: np.ndarray | None = None
) -> np.ndarray:
    """i_a = Pr_tgt(a) / Pr_src(a) per row, times w; source estimated with w."""
    n = len(levels)
    w = np.ones(n) if w is None else w
    total = sum(w[i] for i in range(n))
    mass: dict[object, float] = {}
    for i in range(n):
        mass[levels[i]] = mass.get(levels[i], 0.0) + w[i]
    present = [a for a in mass if mass[a] > 0]
    out = np.zeros(n)
    for i in range(n):
        a = levels[i]
        tgt = (1.0 / len(present)) if target is None else target.get(a, 0.0)
        if w[i] == 0:
            out[i] = 0.0
        else:
            out[i] = w[i] * tgt / (mass[a] / total)
    return out


def oracle_bias_weights(in_b: np.ndarray, share: float) -> np.ndarray:
    """The derivation: w_B = (|B|+|Bc|)/|B| * share, w_Bc = (|B|+|Bc|)/|Bc| * (1 - share)."""
    nb = int(sum(1 for v in in_b if v))
    nbc = len(in_b) - nb
    n = nb + nbc
    return np.array([n / nb * share if v else n / nbc * (1 - share) for v in in_b])


def sk_counts(y: np.ndarray, p: np.ndarray, w: np.ndarray) -> tuple[float, float, float, float]:
    tn, fp, fn, tp = confusion_matrix(y, p, labels=[0, 1], sample_weight=w).ravel()
    return float(tp), float(fp), float(tn), float(fn)


def sk_metric(name: str, y: np.ndarray, p: np.ndarray, w: np.ndarray) -> float:
    """scikit-learn's value (NaN for 0/0) of a metric with sample weights."""
    tp, fp, tn, fn = sk_counts(y, p, w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "positive_predictive_value":
            return (
                precision_score(y, p, sample_weight=w, zero_division=np.nan)
                if tp + fp > 0
                else math.nan
            )
        if name == "true_positive_rate":
            return (
                recall_score(y, p, sample_weight=w, zero_division=np.nan)
                if tp + fn > 0
                else math.nan
            )
    if name == "f1_score":
        return 2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) > 0 else math.nan
    if name == "error_rate":
        total = tp + fp + tn + fn
        return (fp + fn) / total if total > 0 else math.nan
    raise AssertionError(name)


# ---------------------------------------------------------------------------------------------
# Importance weights
# ---------------------------------------------------------------------------------------------


def test_balanced_error_rate_identity_worked() -> None:
    # 8 negatives, 2 positives: errors 1 of 8 negatives, 1 of 2 positives -> BER = (1/8 + 1/2) / 2
    df = pl.DataFrame({"y": [0] * 8 + [1] * 2, "p": [1] + [0] * 7 + [1, 0]})
    weighted = df.lazy().with_columns(importance_weights("y"))
    counts = pfm.confusion_counts(weighted, y_true="y", y_pred="p", weight="importance_weight")
    out = _both_engines(pfm.metrics_from_counts(counts, metrics="error_rate", weighted=True))
    assert out["value"].item() == pytest.approx((1 / 8 + 1 / 2) / 2, abs=1e-15)
    # weights: i_0 = (1/2) / (8/10), i_1 = (1/2) / (2/10); they sum to the row count
    w = df.select(importance_weights("y"))["importance_weight"].to_list()
    assert w == pytest.approx([0.625] * 8 + [2.5] * 2)
    assert sum(w) == pytest.approx(10.0)


@SETTINGS
@given(frames())
def test_balanced_error_rate_identity(df: pl.DataFrame) -> None:
    lf = df.lazy().with_columns(importance_weights("y"))
    counts = pfm.confusion_counts(lf, y_true="y", y_pred="p", weight="importance_weight")
    out = _both_engines(pfm.metrics_from_counts(counts, metrics="error_rate", weighted=True))
    y, p = df["y"].to_numpy(), df["p"].to_numpy()
    iw_err = out["value"].item()
    if 0 < y.sum() < len(y):
        ber = 1.0 - balanced_accuracy_score(y, p)
        assert _close(iw_err, ber)
    else:  # one class only: uniform over the one level present, weight 1: the plain error rate
        assert _close(iw_err, float(np.mean(y != p)))


@SETTINGS
@given(frames(), st.sampled_from(["uniform", "mapping"]), st.booleans())
def test_importance_weights_match_oracle_and_sklearn(
    df: pl.DataFrame, kind: str, weighted: bool
) -> None:
    levels = df["g"].unique().to_list()
    target = (
        None
        if kind == "uniform"
        else {lv: p for lv, p in zip(sorted(levels), [0.6, 0.3, 0.1][: len(levels)], strict=False)}
    )
    if target is not None:
        total = sum(target.values())
        target = {k: v / total for k, v in target.items()}
    w = df["w"].to_numpy() if weighted else None
    if w is not None and target is not None:
        # every target level must carry some weight (else the query raises, tested below)
        if any(w[df["g"].to_numpy() == lv].sum() == 0 for lv in target):
            return
    if w is not None and w.sum() == 0:
        return
    expr = importance_weights(
        "g", target=target if target is not None else "uniform", weight="w" if weighted else None
    )
    ours = _both_engines(df.lazy().select(expr))["importance_weight"].to_numpy()
    ref = oracle_importance(df["g"].to_list(), target, w)
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)
    # metrics with the weights = scikit-learn with sample_weight set to the oracle weights
    counts = pfm.confusion_counts(
        df.with_columns(expr), y_true="y", y_pred="p", weight="importance_weight"
    )
    y, p = df["y"].to_numpy(), df["p"].to_numpy()
    for m in ("positive_predictive_value", "true_positive_rate", "f1_score", "error_rate"):
        value = pfm.metrics_from_counts(counts, metrics=m, weighted=True)["value"].item()
        assert _close(value, sk_metric(m, y, p, ref)), m


@SETTINGS
@given(frames())
def test_importance_weights_several_columns_and_within(df: pl.DataFrame) -> None:
    # several columns: the levels are the combinations
    ours = df.select(importance_weights(["g", "h"]))["importance_weight"].to_numpy()
    ref = oracle_importance(list(zip(df["g"].to_list(), df["h"].to_list(), strict=True)), None)
    np.testing.assert_allclose(ours, ref, rtol=1e-12)
    assert ours.sum() == pytest.approx(df.height)
    # within: each h group gets its own source mix and uniform target
    ours = df.select(importance_weights("g", within="h"))["importance_weight"].to_numpy()
    ref = np.zeros(df.height)
    for h in df["h"].unique().to_list():
        idx = np.flatnonzero(df["h"].to_numpy() == h)
        ref[idx] = oracle_importance([df["g"][int(i)] for i in idx], None)
    np.testing.assert_allclose(ours, ref, rtol=1e-12)


def test_importance_weights_given_source_tuple_keys_and_sum() -> None:
    df = pl.DataFrame({"g": ["a", "a", "b", "b", "b", "c"], "h": [1, 2, 1, 1, 2, 2]})
    src = {"a": 0.5, "b": 0.25, "c": 0.25}
    tgt = {"a": 0.2, "b": 0.3, "c": 0.5}
    w = df.select(importance_weights("g", target=tgt, source=src))["importance_weight"]
    assert w.to_list() == pytest.approx([0.4, 0.4, 1.2, 1.2, 1.2, 2.0])
    # tuple keys for several columns; an unlisted data level gets target 0 when asked for
    tgt2 = {("a", 1): 0.5, ("b", 1): 0.5}
    with pytest.raises(InvalidOptionError, match=r"\('a', 2\), \('b', 2\), \('c', 2\)"):
        df.select(importance_weights(["g", "h"], target=tgt2))
    w2 = df.select(importance_weights(["g", "h"], target=tgt2, missing_groups="zero"))
    w2 = w2["importance_weight"].to_list()
    assert w2 == pytest.approx([0.5 / (1 / 6), 0, 0.5 / (2 / 6), 0.5 / (2 / 6), 0, 0])
    assert sum(w2) == pytest.approx(df.height)  # every target level present: sums to n


def test_importance_weights_nulls_are_reported_not_dropped() -> None:
    df = pl.DataFrame({"g": ["a", None, "b", "b"], "y": [1, 0, 1, 0], "p": [1, 1, 0, 0]})
    w = df.select(importance_weights("g"))["importance_weight"].to_list()
    # source mix over the 3 rows with a level: a 1/3, b 2/3; uniform target 1/2
    assert [w[0], w[2], w[3]] == pytest.approx([1.5, 0.75, 0.75])
    assert w[1] is None
    counts = pfm.confusion_counts(
        df.with_columns(importance_weights("g")), y_true="y", y_pred="p", weight="importance_weight"
    )
    assert counts["n_null_weight"].item() == 1
    assert counts["n"].item() + counts["n_null"].item() == df.height


def test_importance_weights_lazy_and_schema() -> None:
    lf = pl.LazyFrame({"g": ["a", "b"], "y": [1, 0]})
    out = with_importance_weights(lf, "g", name="iw")
    assert isinstance(out, pl.LazyFrame)
    assert out.collect_schema()["iw"] == pl.Float64
    with pytest.raises(ColumnNotFoundError, match="'nope'"):
        with_importance_weights(lf, "nope")
    # namespace delegate
    assert lf.fair.with_importance_weights("g").collect()["importance_weight"].to_list() == [1, 1]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"target": {"a": 0.5, "b": 0.4}}, "sum to 0.9"),
        ({"target": {"a": 1.5, "b": -0.5}}, "non-negative"),
        ({"target": {"a": math.nan, "b": 1.0}}, "not a number"),
        ({"target": "balanced"}, "uniform"),
        ({"target": {("a", 1): 1.0}}, "tuples"),
        ({"target": {None: 1.0}}, "None"),
        ({"target": {}}, "empty"),
        ({"source": {"a": 0.0, "b": 1.0}}, "positive"),
        ({"source": {"a": 0.7, "b": 0.7}}, "sum to 1.4"),
    ],
)
def test_importance_weights_bad_mix_at_build_time(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidOptionError, match=match):
        importance_weights("g", **kwargs)  # type: ignore[arg-type]


def test_importance_weights_errors_needing_data() -> None:
    lf = pl.LazyFrame({"g": ["a", "a", "b"], "h": [1, 2, 1], "w": [1.0, 1.0, 0.0]})
    with pytest.raises(EmptyGroupError, match=r"names 'z' of column\(s\) \['g'\]"):
        lf.select(importance_weights("g", target={"a": 0.5, "z": 0.5})).collect()
    with pytest.raises(EmptyGroupError, match="names 'z'"):
        lf.select(importance_weights("g", target={"a": 0.5, "z": 0.5})).collect(engine="streaming")
    with pytest.raises(InvalidOptionError, match="source mix does not list: 'b'"):
        lf.select(importance_weights("g", source={"a": 1.0})).collect()
    with pytest.raises(EmptyGroupError, match="positive weight"):
        lf.select(importance_weights("g", target={"a": 0.5, "b": 0.5}, weight="w")).collect()
    with pytest.raises(EmptyGroupError, match=r"group 2"):
        lf.select(importance_weights("g", target={"a": 0.5, "b": 0.5}, within="h")).collect()
    for values, shown in (
        ([1.0, -2.0], "-2.0"),
        ([1.0, math.inf], "inf"),
        ([1.0, math.nan], "nan"),
    ):
        bad = pl.LazyFrame({"g": ["a", "b"], "w": values})
        with pytest.raises(InvalidWeightError, match=f"'w'.*{shown}"):
            bad.select(importance_weights("g", weight="w")).collect()
        with pytest.raises(InvalidWeightError, match=f"'w'.*{shown}"):
            bad.select(importance_weights("g", target={"a": 0.5, "b": 0.5}, weight="w")).collect()
        with pytest.raises(InvalidWeightError, match=f"'w'.*{shown}"):
            bad.with_columns(flag=pl.Series([True, False])).select(
                bias_adjusted_weights("flag", biased_share=0.5, weight="w")
            ).collect()


# ---------------------------------------------------------------------------------------------
# Bias-adjusted weights
# ---------------------------------------------------------------------------------------------

# Hand-computed example: 10 scored rows, 4 from B, 6 from the sample of B^c; |B|/|U| = 0.05.
# w_B  = (4 + 6) / 4 * 0.05 = 0.125
# w_Bc = (4 + 6) / 6 * 0.95 = 1.583333...
HAND = pl.DataFrame(
    {
        "in_b": [1, 1, 1, 1, 0, 0, 0, 0, 0, 0],
        "y": [1, 1, 0, 0, 1, 0, 0, 0, 0, 0],
        "pred": [1, 0, 1, 0, 1, 1, 0, 0, 0, 0],
    }
)
W_B, W_BC = 0.125, 10 / 6 * 0.95


def test_bias_adjusted_weights_hand_example() -> None:
    w = HAND.select(bias_adjusted_weights("in_b", biased_share=0.05))["bias_adjusted_weight"]
    assert w.to_list() == pytest.approx([W_B] * 4 + [W_BC] * 6, rel=1e-15)
    assert w.sum() == pytest.approx(10.0, rel=1e-15)  # sums to the rows scored
    same = HAND.select(bias_adjusted_weights("in_b", biased_size=50, population_size=1000))
    assert same.to_series().to_list() == pytest.approx(w.to_list(), rel=1e-15)


def test_bias_adjusted_metrics_hand_example() -> None:
    # predicted positive: B rows 0 (y=1), 2 (y=0); B^c rows 4 (y=1), 5 (y=0)
    precision = (W_B + W_BC) / (2 * W_B + 2 * W_BC)
    # positives: B rows 0 (pred 1), 1 (pred 0); B^c row 4 (pred 1)
    recall = (W_B + W_BC) / (2 * W_B + W_BC)
    f1 = 2 * precision * recall / (precision + recall)
    # errors: B rows 1, 2; B^c row 5
    error = (2 * W_B + W_BC) / 10
    out = bias_adjusted_metrics(
        HAND.lazy(), y_true="y", y_pred="pred", in_biased_set="in_b", biased_share=0.05
    )
    got = dict(_both_engines(out).select("metric", "value").iter_rows())
    assert got["positive_predictive_value"] == pytest.approx(precision, rel=1e-14)
    assert got["true_positive_rate"] == pytest.approx(recall, rel=1e-14)
    assert got["f1_score"] == pytest.approx(f1, rel=1e-14)
    assert got["error_rate"] == pytest.approx(error, rel=1e-14)
    assert precision == pytest.approx(0.5)
    assert recall == pytest.approx((0.125 + 1.5833333333) / (0.25 + 1.5833333333))


@SETTINGS
@given(frames(), st.sampled_from([0.01, 0.3, 0.9]))
def test_bias_adjusted_metrics_match_sklearn(df: pl.DataFrame, share: float) -> None:
    in_b = df["in_b"].to_numpy()
    if in_b.all() or not in_b.any():
        with pytest.raises(EmptyGroupError, match="'in_b'"):
            df.select(bias_adjusted_weights("in_b", biased_share=share))
        return
    ref_w = oracle_bias_weights(in_b, share)
    ours_w = _both_engines(df.lazy().select(bias_adjusted_weights("in_b", biased_share=share)))[
        "bias_adjusted_weight"
    ].to_numpy()
    np.testing.assert_allclose(ours_w, ref_w, rtol=1e-12)
    assert ours_w.sum() == pytest.approx(df.height, rel=1e-12)
    out = bias_adjusted_metrics(
        df, y_true="y", y_pred="p", in_biased_set="in_b", biased_share=share, by="g"
    )
    for (g, m), value in zip(out.select("g", "metric").iter_rows(), out["value"], strict=True):
        mask = df["g"].to_numpy() == g
        ref = sk_metric(m, df["y"].to_numpy()[mask], df["p"].to_numpy()[mask], ref_w[mask])
        assert _close(value, ref), (g, m, value, ref)


@SETTINGS
@given(frames())
def test_bias_adjusted_weights_per_group(df: pl.DataFrame) -> None:
    ok = all(0 < part["in_b"].sum() < part.height for part in df.partition_by("g"))
    expr = bias_adjusted_weights("in_b", biased_share=0.2, by="g")
    if not ok:
        with pytest.raises(EmptyGroupError, match=r"\['g'\] group"):
            df.select(expr)
        return
    ours = df.select(expr).to_series().to_numpy()
    for g in df["g"].unique().to_list():
        mask = df["g"].to_numpy() == g
        np.testing.assert_allclose(
            ours[mask], oracle_bias_weights(df["in_b"].to_numpy()[mask], 0.2), rtol=1e-12
        )
        assert ours[mask].sum() == pytest.approx(mask.sum())


def test_bias_adjusted_weights_train_and_test_each_get_their_own() -> None:
    train = pl.DataFrame({"in_b": [1, 0, 0, 0]})
    test = pl.DataFrame({"in_b": [1, 1, 1, 0]})
    both = pl.concat(
        [train.with_columns(split=pl.lit("train")), test.with_columns(split=pl.lit("test"))]
    )
    by_split = both.select(bias_adjusted_weights("in_b", biased_share=0.5, by="split"))
    separate = [
        f.select(bias_adjusted_weights("in_b", biased_share=0.5)).to_series().to_list()
        for f in (train, test)
    ]
    assert by_split.to_series().to_list() == pytest.approx(separate[0] + separate[1])
    assert separate[0] == pytest.approx([2.0, 2 / 3, 2 / 3, 2 / 3])
    assert separate[1] == pytest.approx([2 / 3, 2 / 3, 2 / 3, 2.0])


def test_bias_adjusted_weights_with_sample_weight() -> None:
    df = pl.DataFrame({"in_b": [True, True, False, False], "w": [1.0, 3.0, 2.0, 2.0]})
    # weighted counts: |B| = 4, |Bc| = 4, n = 8; w_B = 8/4 * 0.25, w_Bc = 8/4 * 0.75 (times w)
    w = df.select(bias_adjusted_weights("in_b", biased_share=0.25, weight="w")).to_series()
    assert w.to_list() == pytest.approx([0.5, 1.5, 3.0, 3.0])
    assert w.sum() == pytest.approx(8.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"biased_share": 0.0}, r"outside \(0, 1\)"),
        ({"biased_share": 1.0}, r"outside \(0, 1\)"),
        ({"biased_share": 1.5}, r"outside \(0, 1\)"),
        ({"biased_share": -0.1}, r"outside \(0, 1\)"),
        ({"biased_share": math.nan}, "not a number"),
        ({"biased_size": 10, "population_size": 5}, r"outside \(0, 1\)"),
        ({"biased_size": 10, "population_size": 0}, "positive"),
        ({"biased_size": 10}, "both"),
        ({}, "biased_share"),
        ({"biased_share": 0.1, "biased_size": 1, "population_size": 10}, "not both"),
    ],
)
def test_bias_adjusted_bad_share(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(InvalidOptionError, match=match):
        bias_adjusted_weights("in_b", **kwargs)  # type: ignore[arg-type]


def test_bias_adjusted_empty_sets_and_bad_flags() -> None:
    only_b = pl.LazyFrame({"in_b": [True, True]})
    with pytest.raises(EmptyGroupError, match=r"'in_b'.*no rows in B\^c.*scored set"):
        only_b.select(bias_adjusted_weights("in_b", biased_share=0.1)).collect()
    only_bc = pl.LazyFrame({"in_b": [0, 0]})
    with pytest.raises(EmptyGroupError, match=r"'in_b'.*no rows in B \("):
        only_bc.select(bias_adjusted_weights("in_b", biased_share=0.1)).collect(engine="streaming")
    for bad, shown in (([0, 1, 2], "'2'"), (["yes", "no"], "'yes'"), ([0.5, 1.0], "'0.5'")):
        with pytest.raises(InvalidLabelError, match=f"'flag'.*{shown}"):
            pl.DataFrame({"flag": bad}).select(bias_adjusted_weights("flag", biased_share=0.1))
    with pytest.raises(ColumnNotFoundError, match="biased-set flag"):
        with_bias_adjusted_weights(pl.LazyFrame({"x": [1]}), "in_b", biased_share=0.1)
    # a null flag: a null weight, counted as such
    nulls = pl.DataFrame({"in_b": [1, None, 0]})
    assert nulls.select(bias_adjusted_weights("in_b", biased_share=0.5)).to_series()[1] is None


# ---------------------------------------------------------------------------------------------
# The notebook's conventions
# ---------------------------------------------------------------------------------------------


def oracle_notebook(y: np.ndarray, p: np.ndarray, w: np.ndarray) -> tuple[float, float, float]:
    """Precision / recall / F1 with the notebook's conventions, written out row by row."""
    pp = [i for i in range(len(y)) if p[i] == 1]
    pos = [i for i in range(len(y)) if y[i] == 1]
    if pp:
        precision = sum(w[i] for i in pp if y[i] == 1) / sum(w[i] for i in pp)
    else:
        precision = 0.0 if pos else 1.0
    if pos:
        recall = sum(w[i] for i in pos if p[i] == 1) / sum(w[i] for i in pos)
    else:
        recall = 1.0
    f1 = 2.0 * precision * recall / (precision + recall + 1e-15)
    return precision, recall, f1


@SETTINGS
@given(frames())
def test_notebook_convention(df: pl.DataFrame) -> None:
    in_b = df["in_b"].to_numpy()
    out = bias_adjusted_metrics(
        df,
        y_true="y",
        y_pred="p",
        in_biased_set="in_b",
        biased_share=0.3,
        convention="filled",
        metrics=["precision", "recall", "f1"],
    )
    got = dict(out.select("metric", "value").iter_rows())
    if (
        in_b.all() or not in_b.any()
    ):  # allowed in notebook mode; the rows keep their weight as if both were present
        w = np.full(len(in_b), 0.3 if in_b.all() else 0.7)
    else:
        w = oracle_bias_weights(in_b, 0.3)
    ref = oracle_notebook(df["y"].to_numpy(), df["p"].to_numpy(), w)
    assert got["positive_predictive_value"] == pytest.approx(ref[0], rel=1e-12)
    assert got["true_positive_rate"] == pytest.approx(ref[1], rel=1e-12)
    assert got["f1_score"] == pytest.approx(ref[2], rel=1e-12)


def test_notebook_convention_edge_cases_vs_exact() -> None:
    nothing_predicted = pl.DataFrame({"in_b": [1, 0], "y": [1, 0], "p": [0, 0]})
    no_positives = pl.DataFrame({"in_b": [1, 0], "y": [0, 0], "p": [0, 0]})
    kw = {
        "y_true": "y",
        "y_pred": "p",
        "in_biased_set": "in_b",
        "biased_share": 0.5,
        "metrics": ["precision", "recall", "f1"],
    }
    exact = dict(
        bias_adjusted_metrics(nothing_predicted, **kw).select("metric", "value").iter_rows()
    )
    assert exact["positive_predictive_value"] is None  # default: 0/0 is null
    nb = dict(
        bias_adjusted_metrics(nothing_predicted, convention="filled", **kw)
        .select("metric", "value")
        .iter_rows()
    )
    assert nb["positive_predictive_value"] == 0.0  # a positive exists
    assert nb["true_positive_rate"] == 0.0
    assert nb["f1_score"] == 0.0
    nb2 = dict(
        bias_adjusted_metrics(no_positives, convention="filled", **kw)
        .select("metric", "value")
        .iter_rows()
    )
    assert nb2["positive_predictive_value"] == 1.0  # nothing to find, nothing claimed
    assert nb2["true_positive_rate"] == 1.0
    assert nb2["f1_score"] == pytest.approx(1.0)
    exact2 = dict(bias_adjusted_metrics(no_positives, **kw).select("metric", "value").iter_rows())
    assert exact2["true_positive_rate"] is None and exact2["f1_score"] is None
    with pytest.raises(InvalidOptionError, match="convention"):
        bias_adjusted_metrics(no_positives, convention="sklearn", **kw)  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="convention='filled'"):  # the old name, renamed
        bias_adjusted_metrics(no_positives, convention="notebook", **kw)  # type: ignore[arg-type]


def test_bias_adjusted_weights_feed_disparities_and_thresholds() -> None:
    df = pfm.scan_compas().with_columns(
        (pl.col("decile_score") / 10).alias("score"),
        # a synthetic biased-selection flag: the high scores were all reviewed, a sample of the rest
        (pl.col("decile_score") >= 7).alias("in_b"),
    )
    weighted = with_bias_adjusted_weights(df, "in_b", biased_share=0.1)
    counts = pfm.confusion_counts(
        weighted,
        y_true="two_year_recid",
        y_score="score",
        threshold=[0.3, 0.5, 0.7],
        by="race",
        weight="bias_adjusted_weight",
    )
    disp = pfm.disparities(counts, metrics="precision", reference="overall")
    out = _both_engines(disp.sort("race", "threshold"))
    assert out.height == 6 * 3
    assert out["n"].sum() == 7214 * 3
    totals = _both_engines(weighted.select(pl.col("bias_adjusted_weight").sum()))
    assert totals.item() == pytest.approx(7214)


@pytest.mark.parametrize("convention", ["exact", "filled"])
def test_bias_adjusted_metrics_schema_nulls_and_wide(convention: str) -> None:
    df = pl.DataFrame(
        {
            "g": ["a", "a", "a", "b", "b", "b", "b"],
            "in_b": [True, False, None, True, False, False, True],
            "y": [1, 0, 1, 0, 0, None, 1],
            "p": [1, 1, 0, 0, 0, 1, 0],
        }
    )
    kw = {
        "y_true": "y",
        "y_pred": "p",
        "in_biased_set": "in_b",
        "biased_share": 0.4,
        "by": "g",
        "convention": convention,
        "metrics": ["precision", "recall", "f1", "accuracy"],
    }
    long = _both_engines(bias_adjusted_metrics(df.lazy(), **kw))  # type: ignore[arg-type]
    assert long.columns == ["g", "metric", "value", "support", "n", "n_null", "n_w"]
    # a null flag (a null weight) and a null label are counted in n_null, never dropped
    sizes = long.group_by("g", maintain_order=True).agg(pl.col("n", "n_null").first())
    assert sizes.rows() == [("a", 2, 1), ("b", 3, 1)]
    names = ["positive_predictive_value", "true_positive_rate", "f1_score", "accuracy"]
    assert long["metric"].to_list() == names * 2
    wide = bias_adjusted_metrics(df, wide=True, **kw)  # type: ignore[arg-type]
    assert_frame_equal(to_wide(long, quantities=names), wide, check_column_order=False)
    b_recall = long.filter((pl.col("g") == "b") & (pl.col("metric") == "true_positive_rate"))
    # b: the one positive (in B) is predicted 0: recall 0 in both conventions
    assert b_recall["value"].item() == 0.0


# ---------------------------------------------------------------------------------------------
# The count-table route agrees with the row route
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(frames(), st.booleans())
def test_importance_weighted_counts_equal_row_route(df: pl.DataFrame, weighted: bool) -> None:
    from polars_fairmetrics.weights import importance_weighted_counts

    w = "w" if weighted else None
    if weighted and df["w"].sum() == 0:
        return
    target = {"a": 0.5, "b": 0.5} if set(df["g"]) >= {"a", "b"} else "uniform"
    zero: MissingGroups = "zero"  # 'c' may be present and is then left out on purpose
    if (
        weighted
        and target != "uniform"
        and any(df.filter(pl.col("g") == lv)["w"].sum() == 0 for lv in ("a", "b"))
    ):
        return
    rows = df.lazy().with_columns(
        importance_weights("g", target=target, weight=w, missing_groups=zero)
    )
    row_route = pfm.confusion_counts(
        rows, y_true="y", y_score="s", threshold=[0.3, 0.7], by="h", weight="importance_weight"
    ).collect()
    table = pfm.confusion_counts(
        df.lazy(), y_true="y", y_score="s", threshold=[0.3, 0.7], by=["h", "g"], weight=w
    )
    count_route = _both_engines(
        importance_weighted_counts(table, "g", target=target, keys="h", missing_groups=zero)
    )
    assert count_route["h"].to_list() == row_route["h"].to_list()
    assert count_route["threshold"].to_list() == row_route["threshold"].to_list()
    for col in ("tp", "fp", "tn", "fn", "n"):
        assert count_route[col].to_list() == row_route[col].to_list()
    for col in ("tp_w", "fp_w", "tn_w", "fn_w", "n_w"):
        np.testing.assert_allclose(
            count_route[col].to_numpy(), row_route[col].to_numpy(), rtol=1e-12, atol=1e-12
        )


@SETTINGS
@given(frames())
def test_bias_adjusted_counts_equal_row_route(df: pl.DataFrame) -> None:
    from polars_fairmetrics.weights import bias_adjusted_counts

    in_b = df["in_b"].to_numpy()
    table = pfm.confusion_counts(df, y_true="y", y_pred="p", by=["g", "in_b"])
    if in_b.all() or not in_b.any():
        with pytest.raises(EmptyGroupError, match="'in_b'"):
            bias_adjusted_counts(table, "in_b", biased_share=0.3)
        return
    count_route = bias_adjusted_counts(table, "in_b", biased_share=0.3, keys="g")
    ref_w = oracle_bias_weights(in_b, 0.3)
    for g, tp_w, fp_w, n_w in count_route.select("g", "tp_w", "fp_w", "n_w").iter_rows():
        m = df["g"].to_numpy() == g
        y, p = df["y"].to_numpy(), df["p"].to_numpy()
        assert tp_w == pytest.approx(ref_w[m & (y == 1) & (p == 1)].sum(), abs=1e-12)
        assert fp_w == pytest.approx(ref_w[m & (y == 0) & (p == 1)].sum(), abs=1e-12)
        assert n_w == pytest.approx(ref_w[m].sum(), abs=1e-12)
    assert count_route["n_w"].sum() == pytest.approx(df.height)


def test_count_route_errors() -> None:
    from polars_fairmetrics.weights import bias_adjusted_counts, importance_weighted_counts

    df = pl.DataFrame({"g": ["a", "b"], "flag": [0, 2], "y": [1, 0], "p": [1, 1]})
    t = pfm.confusion_counts(df, y_true="y", y_pred="p", by=["g", "flag"])
    with pytest.raises(EmptyGroupError, match="names 'z'"):
        importance_weighted_counts(t, "g", target={"a": 0.5, "b": 0.3, "z": 0.2})
    with pytest.raises(InvalidOptionError, match="target mix does not list: 'b' \\(1 row\\)"):
        importance_weighted_counts(t, "g", target={"a": 1.0})
    with pytest.raises(InvalidOptionError, match="not a key column"):
        importance_weighted_counts(t, "y")
    with pytest.raises(InvalidLabelError, match=r"'flag'.*'2'"):
        bias_adjusted_counts(t, "flag", biased_share=0.5)


# ---------------------------------------------------------------------------------------------
# Levels of the data that the target mix does not list: an error naming them, or weight 0
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(frames(), st.data(), st.sampled_from(["eager", "in-memory", "streaming"]))
def test_unlisted_levels_are_refused_or_zeroed(
    df: pl.DataFrame, data: st.DataObject, mode: str
) -> None:
    present = sorted(df["g"].unique().to_list())
    listed = data.draw(st.lists(st.sampled_from(present), min_size=1, unique=True))
    raw = [data.draw(st.integers(1, 5)) for _ in listed]
    target = {lv: r / sum(raw) for lv, r in zip(listed, raw, strict=True)}
    unlisted = [lv for lv in present if lv not in target]
    within = data.draw(st.sampled_from([None, "h"]))
    if within is not None and any(
        lv not in part["g"].to_list() for part in df.partition_by("h") for lv in target
    ):
        return  # a target level without rows in an h group: a different error, tested above
    expr = importance_weights("g", target=target, within=within)
    zeroed = importance_weights("g", target=target, within=within, missing_groups="zero")

    def run(e: pl.Expr) -> pl.DataFrame:
        if mode == "eager":
            return df.with_columns(e)
        return df.lazy().with_columns(e).collect(engine=mode)  # type: ignore[call-overload]

    if unlisted:
        with pytest.raises(InvalidOptionError) as info:
            run(expr)
        message = str(info.value)
        assert f"hold {len(unlisted)} level(s) that the target mix does not list" in message
        assert all(repr(lv) in message for lv in unlisted)
        n_rows = int(df["g"].is_in(unlisted).sum())
        assert f"({n_rows} row" in message and "missing_groups='zero'" in message
    else:
        assert_frame_equal(run(expr), run(zeroed))
    got = run(zeroed)["importance_weight"].to_numpy()
    if within is None:
        ref = oracle_importance(df["g"].to_list(), target)
    else:
        ref = np.zeros(df.height)
        for h in df["h"].unique().to_list():
            idx = np.flatnonzero(df["h"].to_numpy() == h)
            ref[idx] = oracle_importance([df["g"][int(i)] for i in idx], target)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    assert np.all(got[df["g"].is_in(unlisted).to_numpy()] == 0.0)


def test_unlisted_levels_message_lists_at_most_ten_and_is_the_same_on_both_routes() -> None:
    levels = [f"l{i:02d}" for i in range(15)]
    df = pl.DataFrame({"g": [*levels, "l00"], "y": [1, 0] * 8, "p": [1] * 16})
    target = {"l00": 1.0}
    with pytest.raises(InvalidOptionError) as rows:
        df.with_columns(importance_weights("g", target=target))
    table = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    with pytest.raises(InvalidOptionError) as counts:
        pfm.importance_weighted_counts(table, "g", target=target)
    for info in (rows, counts):
        message = str(info.value)
        assert "hold 14 level(s) that the target mix does not list" in message
        assert "'l01', 'l02'" in message and "'l10' and 4 more (14 rows)" in message
        assert "'l11'" not in message
    # a level listed with probability 0 is left out on purpose: no error, weight 0
    explicit = {"l00": 1.0, **{lv: 0.0 for lv in levels[1:]}}
    w = df.with_columns(importance_weights("g", target=explicit))["importance_weight"]
    assert w.to_list() == [8.0] + [0.0] * 14 + [8.0]  # l00: 1 / (2/16)
    with pytest.raises(InvalidOptionError, match="missing_groups='none'"):
        importance_weights("g", target=target, missing_groups="none")  # type: ignore[arg-type]


def test_unlisted_levels_with_several_columns_and_a_given_source() -> None:
    df = pl.DataFrame({"g": ["a", "a", "b"], "h": [1, 2, 1]})
    with pytest.raises(InvalidOptionError, match=r"\['g', 'h'\].*\('a', 2\), \('b', 1\)"):
        df.select(importance_weights(["g", "h"], target={("a", 1): 1.0}, source=None))
    src = {"a": 0.5, "b": 0.5}
    with pytest.raises(InvalidOptionError, match=r"target mix does not list: 'b' \(1 row\)"):
        df.select(importance_weights("g", target={"a": 1.0}, source=src))
    out = df.select(importance_weights("g", target={"a": 1.0}, source=src, missing_groups="zero"))
    assert out.to_series().to_list() == [2.0, 2.0, 0.0]


# ---------------------------------------------------------------------------------------------
# importance_weighted_metrics: the note's estimator (divide by m) and the weighted mean
# ---------------------------------------------------------------------------------------------


def note_estimate(
    rows: list[dict[str, object]],
    target: dict[object, float],
    source: dict[object, float] | None,
    x: object,
    event: object = None,
    weight: str | None = None,
) -> float | None:
    """The note's estimator written out: i_a = t_a / s_a, s_a given or the share of the rows at a;
    the mean (1/m) sum_i i_{a_i} x_i over the m rows (m = sum of the sample weights), and for a
    metric conditioned on an event E the ratio of the means of x 1_E and of 1_E."""
    w0 = [1.0 if weight is None else float(r[weight]) for r in rows]  # type: ignore[arg-type]
    m = sum(w0)
    if source is None:
        mass: dict[object, float] = {}
        for r, w in zip(rows, w0, strict=True):
            mass[r["g"]] = mass.get(r["g"], 0.0) + w
        src = {a: v / m for a, v in mass.items()}
    else:
        src = source
    i = [w * target.get(r["g"], 0.0) / src[r["g"]] for r, w in zip(rows, w0, strict=True)]
    f = cast(Callable[[dict[str, object]], float], x)
    if event is None:
        return sum(ii * f(r) for ii, r in zip(i, rows, strict=True)) / m if m else None
    e = cast(Callable[[dict[str, object]], bool], event)
    num = sum(ii * f(r) for ii, r in zip(i, rows, strict=True) if e(r)) / m
    den = sum(ii for ii, r in zip(i, rows, strict=True) if e(r)) / m
    return num / den if den else None


ROW_MEANS: dict[str, tuple[object, object]] = {
    "error_rate": (lambda r: float(r["y"] != r["p"]), None),
    "accuracy": (lambda r: float(r["y"] == r["p"]), None),
    "selection_rate": (lambda r: float(r["p"] == 1), None),
    "base_rate": (lambda r: float(r["y"] == 1), None),
    "true_positive_rate": (lambda r: float(r["p"] == 1), lambda r: r["y"] == 1),
    "positive_predictive_value": (lambda r: float(r["y"] == 1), lambda r: r["p"] == 1),
    "false_positive_rate": (lambda r: float(r["p"] == 1), lambda r: r["y"] == 0),
}


@st.composite
def mixes(draw: st.DrawFn, levels: list[str], given: bool) -> dict[str, float] | None:
    if not given:
        return None
    raw = {lv: draw(st.integers(1, 9)) for lv in levels}
    total = sum(raw.values())
    return {lv: v / total for lv, v in raw.items()}


@SETTINGS
@given(frames(), st.data(), st.booleans(), st.booleans())
def test_importance_weighted_metrics_match_the_notes_formula(
    df: pl.DataFrame, data: st.DataObject, given_source: bool, weighted: bool
) -> None:
    present = sorted(df["g"].unique().to_list())
    if weighted and any(df.filter(pl.col("g") == lv)["w"].sum() == 0 for lv in present):
        return  # a target level without weight: EmptyGroupError, tested elsewhere
    target = data.draw(mixes(present, True))
    source = data.draw(mixes([*present, "zz"], given_source))
    assert target is not None
    kw = {
        "y_true": "y",
        "y_pred": "p",
        "target": target,
        "source": source,
        "weight": "w" if weighted else None,
        "metrics": list(ROW_MEANS),
    }
    rows = df.to_dicts()
    lazy = importance_weighted_metrics(df.lazy(), "g", **kw)  # type: ignore[arg-type]
    assert isinstance(lazy, pl.LazyFrame)
    got = dict(_both_engines(lazy).select("metric", "value").iter_rows())
    weights = dict(
        importance_weighted_metrics(df, "g", denominator="weights", **kw)  # type: ignore[arg-type]
        .select("metric", "value")
        .iter_rows()
    )
    w_col = "w" if weighted else None
    for m, (x, event) in ROW_MEANS.items():
        ref = note_estimate(rows, target, source, x, event, w_col)
        assert _close(got[m], math.nan if ref is None else ref), (m, got[m], ref)
        # the weighted mean: sum(w x) / sum(w) (conditional metrics: the same ratio)
        i_rows = [{**r, "_one": 1.0} for r in rows]
        num = note_estimate(i_rows, target, source, x, event, w_col)
        den = note_estimate(i_rows, target, source, lambda r: 1.0, event, w_col)
        if event is None:
            ref_w = None if not den else cast(float, num) / den
        else:
            ref_w = num
        assert _close(weights[m], math.nan if ref_w is None else ref_w), (m, weights[m], ref_w)
        if source is None:  # estimated source: the weights sum to m, the two are equal
            assert _close(got[m], math.nan if weights[m] is None else weights[m])


@SETTINGS
@given(frames(), st.data())
def test_importance_weighted_metrics_groups_and_within(
    df: pl.DataFrame, data: st.DataObject
) -> None:
    present = sorted(df["g"].unique().to_list())
    if any(lv not in part["g"].to_list() for part in df.partition_by("h") for lv in present):
        return
    target = data.draw(mixes(present, True))
    source = data.draw(mixes(present, data.draw(st.booleans())))
    assert target is not None
    kw = {"y_true": "y", "y_pred": "p", "target": target, "source": source}
    # each h group is its own population (within): its mean divided by its own rows
    per_h = importance_weighted_metrics(df, "g", within="h", metrics="error_rate", **kw)  # type: ignore[arg-type]
    assert per_h["h"].to_list() == sorted(df["h"].unique().to_list())
    for h, value in per_h.select("h", "value").iter_rows():
        rows = df.filter(pl.col("h") == h).to_dicts()
        ref = note_estimate(rows, target, source, ROW_MEANS["error_rate"][0])
        assert _close(value, cast(float, ref))
    # a report group narrower than the population: a conditional mean, the same for both
    by_h = importance_weighted_metrics(df, "g", keys="h", metrics="error_rate", **kw)  # type: ignore[arg-type]
    same = importance_weighted_metrics(
        df,
        "g",
        keys="h",
        metrics="error_rate",
        denominator="weights",
        **kw,  # type: ignore[arg-type]
    )
    assert_frame_equal(by_h, same)
    for h, value in by_h.select("h", "value").iter_rows():
        ref = note_estimate(
            df.to_dicts(), target, source, ROW_MEANS["error_rate"][0], lambda r, h=h: r["h"] == h
        )
        assert _close(value, math.nan if ref is None else ref)


def test_importance_weighted_metrics_worked_example_and_schema() -> None:
    # 4 rows; the sample is 50/50 but the source mix is known to be 80/20; target 50/50:
    # i_x = 0.5 / 0.8 = 0.625, i_y = 0.5 / 0.2 = 2.5; errors: row 1 (x) and row 3 (y)
    df = pl.DataFrame({"a": ["x", "x", "y", "y"], "y": [1, 0, 1, 0], "p": [1, 1, 0, 0]})
    kw = {"y_true": "y", "y_pred": "p", "target": {"x": 0.5, "y": 0.5}}
    src = {"x": 0.8, "y": 0.2}
    rows = importance_weighted_metrics(df, "a", source=src, metrics="error_rate", **kw)  # type: ignore[arg-type]
    assert rows["value"].item() == pytest.approx((0.625 + 2.5) / 4, rel=1e-15)
    weights = importance_weighted_metrics(
        df,
        "a",
        source=src,
        metrics="error_rate",
        denominator="weights",
        **kw,  # type: ignore[arg-type]
    )
    assert weights["value"].item() == pytest.approx((0.625 + 2.5) / (2 * 0.625 + 2 * 2.5))
    # the weighted-mean form is what group_metrics with the weight column computes
    plain = pfm.group_metrics(
        df.with_columns(importance_weights("a", target=kw["target"], source=src)),  # type: ignore[arg-type]
        y_true="y",
        y_pred="p",
        weight="importance_weight",
        metrics="error_rate",
    )
    assert plain["value"].item() == pytest.approx(weights["value"].item(), rel=1e-15)
    assert rows.columns == ["metric", "value", "support", "n", "n_null", "n_w"]
    assert rows.row(0)[2:] == (4, 4, 0, pytest.approx(2 * 0.625 + 2 * 2.5))
    wide = importance_weighted_metrics(
        df, "a", source=src, metrics=["error_rate", "tpr"], wide=True, **kw
    )  # type: ignore[arg-type]
    assert wide.columns == [
        "n",
        "n_null",
        "n_w",
        "error_rate",
        "true_positive_rate",
        "error_rate_support",
        "true_positive_rate_support",
    ]
    with pytest.raises(InvalidOptionError, match="denominator='m'"):
        importance_weighted_metrics(df, "a", denominator="m", **kw)  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="y_pred= needs y_true="):
        importance_weighted_metrics(
            pfm.confusion_counts(df, y_true="y", y_pred="p", by="a"), "a", y_pred="p"
        )


def test_importance_weighted_metrics_from_a_count_table_with_nulls_and_thresholds() -> None:
    df = pl.DataFrame(
        {
            "a": ["x", "x", "y", "y", "y", None],
            "y": [1, 0, 1, None, 0, 1],
            "s": [0.9, 0.2, 0.6, 0.5, 0.7, 0.1],
        }
    )
    table = pfm.confusion_counts(df, y_true="y", y_score="s", threshold=[0.3, 0.65], by="a")
    out = importance_weighted_metrics(
        table, "a", target={"x": 0.5, "y": 0.5}, metrics="accuracy", missing_groups="zero"
    )
    # the null level is a group of the table with weight 0; the null label is counted in n_null
    assert out["threshold"].to_list() == [0.3, 0.65]
    assert out["n"].to_list() == [5, 5] and out["n_null"].to_list() == [1, 1]
    # the rows counted with a level (m = 4): x 2, y 2; the null level carries no weight
    rows = [r for r in df.to_dicts() if r["y"] is not None and r["a"] is not None]
    for t, value in out.select("threshold", "value").iter_rows():
        i = {"x": 0.5 / (2 / 4), "y": 0.5 / (2 / 4)}
        ref = sum(i[r["a"]] * ((r["s"] >= t) == (r["y"] == 1)) for r in rows) / len(rows)
        assert value == pytest.approx(ref, rel=1e-14)


# ---------------------------------------------------------------------------------------------
# The guide's code blocks run
# ---------------------------------------------------------------------------------------------


def test_guide_code_blocks() -> None:
    import pathlib
    import re

    guide = pathlib.Path(__file__).parent.parent / "docs" / "distribution_shift.md"
    blocks = re.findall(
        r"^```python( skip-test)?(?: exec=[^\n]*)?\n(.*?)^```",
        guide.read_text(),
        flags=re.DOTALL | re.MULTILINE,
    )
    assert len(blocks) >= 10
    adult = pathlib.Path("../shared/data/adult.parquet")
    namespace: dict[str, object] = {}
    ran = 0
    for marker, block in blocks:
        if marker and not ("adult.parquet" in block and adult.exists()):
            continue
        exec(compile(block, str(guide), "exec"), namespace)
        ran += 1
    assert ran >= len(blocks) - 1


@pytest.mark.parametrize("kind", ["pandas", "arrow", "dict"])
def test_tables_in_any_common_form(kind: str) -> None:
    """pandas, Arrow and dicts of arrays give the same tables as Polars (issue: inputs)."""
    df = pl.DataFrame(
        {
            "g": ["a", "a", "b", "b", "c", "c"],
            "y": [1, 0, 1, 0, 1, 0],
            "p": [1, 1, 0, 0, 1, 0],
            "s": [0.9, 0.6, 0.4, 0.3, 0.8, 0.2],
            "in_b": [True, False, True, False, False, True],
        }
    )
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")

    def convert(frame: pl.DataFrame) -> object:
        if kind == "pandas":
            return frame.to_pandas()
        if kind == "arrow":
            return frame.to_arrow()
        return frame.to_dict(as_series=False)

    calls = [
        lambda d: pfm.with_importance_weights(d, "g"),
        lambda d: pfm.with_bias_adjusted_weights(d, "in_b", biased_share=0.3),
        lambda d: pfm.importance_weighted_metrics(d, "g", y_true="y", y_pred="p"),
        lambda d: pfm.bias_adjusted_metrics(
            d, y_true="y", y_pred="p", in_biased_set="in_b", biased_share=0.3
        ),
        lambda d: pfm.deployment_metrics(d, y_true="y", y_pred="p", deploy_positive_rate=0.1),
        lambda d: pfm.threshold_for_precision(
            d, y_true="y", y_score="s", min_precision=0.5, by="g"
        ),
    ]
    for call in calls:
        assert_frame_equal(call(convert(df)), call(df))
    table_calls = [
        lambda t: pfm.importance_weighted_counts(t, "g"),
        lambda t: pfm.deployment_counts(t, deploy_positive_rate=0.1),
        lambda t: pfm.deployment_factors(t, deploy_positive_rate=0.1),
    ]
    for call in table_calls:
        assert_frame_equal(call(convert(counts)), call(counts))
