"""Oracle tests of the core: counts and metrics against scikit-learn, disparities against fairlearn.

Random frames come from hypothesis and include groups with no positives, nothing predicted
positive, a single class, zero-weight rows and intersectional groups.
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
from sklearn.metrics import (
    balanced_accuracy_score,
    confusion_matrix,
    matthews_corrcoef,
    precision_recall_fscore_support,
)

import polars_fairmetrics as pfm

TOL = 1e-12


@st.composite
def frames(draw: st.DrawFn, weighted: bool = True) -> pl.DataFrame:
    n = draw(st.integers(min_value=1, max_value=60))
    g1 = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
    g2 = draw(st.lists(st.sampled_from([1, 2]), min_size=n, max_size=n))
    # bias some frames toward degenerate groups: all-negative labels / no predicted positives
    p_pos = draw(st.sampled_from([0.0, 0.2, 0.5, 1.0]))
    p_pred = draw(st.sampled_from([0.0, 0.3, 0.6, 1.0]))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < p_pos).astype(np.int64)
    p = (rng.random(n) < p_pred).astype(np.int64)
    cols: dict[str, object] = {"g1": g1, "g2": g2, "y": y, "p": p}
    if weighted:
        w = rng.choice([0.0, 0.5, 1.0, 2.5, 7.0], size=n)
        cols["w"] = w
    return pl.DataFrame(cols)


def _sk_counts(y: np.ndarray, p: np.ndarray, w: np.ndarray | None) -> tuple[float, ...]:
    cm = confusion_matrix(y, p, labels=[0, 1], sample_weight=w)
    tn, fp, fn, tp = cm.ravel()
    return float(tp), float(fp), float(tn), float(fn)


def _close(ours: float | None, ref: float) -> bool:
    if ours is None:
        return math.isnan(ref)
    if math.isnan(ref):
        return False
    return abs(ours - ref) <= TOL * max(1.0, abs(ref))


def _sk_metrics(y: np.ndarray, p: np.ndarray, w: np.ndarray | None) -> dict[str, float]:
    """scikit-learn's values, NaN where scikit-learn would have to invent a number."""
    tp, fp, tn, fn = _sk_counts(y, p, w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prec, rec, f1, _ = precision_recall_fscore_support(
            y, p, labels=[1], average=None, sample_weight=w, zero_division=np.nan
        )
        spec, _, _, _ = precision_recall_fscore_support(
            y, p, labels=[0], average=None, sample_weight=w, zero_division=np.nan
        )
        npv = precision_recall_fscore_support(
            y, p, labels=[0], average=None, sample_weight=w, zero_division=np.nan
        )[0][0]
        tnr = precision_recall_fscore_support(
            y, p, labels=[0], average=None, sample_weight=w, zero_division=np.nan
        )[1][0]
        both = tp + fn > 0 and fp + tn > 0
        bal = balanced_accuracy_score(y, p, sample_weight=w) if both else math.nan
        margins = [tp + fp, tp + fn, tn + fp, tn + fn]
        mcc = matthews_corrcoef(y, p, sample_weight=w) if min(margins) > 0 else math.nan
    del spec
    total = tp + fp + tn + fn
    f1v = float(f1[0]) if tp + fp + fn > 0 else math.nan
    if tp + fp + fn > 0 and math.isnan(f1v):  # sklearn gives nan when prec or rec is nan
        f1v = 2 * tp / (2 * tp + fp + fn)
    return {
        "positive_predictive_value": float(prec[0]),
        "true_positive_rate": float(rec[0]),
        "f1_score": f1v,
        "negative_predictive_value": float(npv),
        "true_negative_rate": float(tnr),
        "balanced_accuracy": float(bal),
        "matthews_corrcoef": float(mcc),
        "accuracy": (tp + tn) / total if total > 0 else math.nan,
        "selection_rate": (tp + fp) / total if total > 0 else math.nan,
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames(), st.booleans(), st.booleans())
def test_counts_and_metrics_match_sklearn(
    df: pl.DataFrame, use_weight: bool, intersect: bool
) -> None:
    by = ["g1", "g2"] if intersect else ["g1"]
    weight = "w" if use_weight else None
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by=by, weight=weight)
    wide = pfm.metrics_from_counts(counts, wide=True)
    table = counts.join(wide.drop("n", "n_null", "n_w", strict=False), on=by, nulls_equal=True)
    assert table.height == counts.height
    assert table["n"].sum() + table["n_null"].sum() == df.height
    for row in table.iter_rows(named=True):
        mask = pl.all_horizontal([pl.col(k) == row[k] for k in by])
        sub = df.filter(mask)
        y, p = sub["y"].to_numpy(), sub["p"].to_numpy()
        w = sub["w"].to_numpy() if use_weight else None
        assert (row["tp"], row["fp"], row["tn"], row["fn"]) == _sk_counts(y, p, None)
        if w is not None and w.sum() == 0:
            # scikit-learn refuses all-zero weights; every weighted rate is 0/0 = null here
            assert row["n_w"] == 0.0
            assert all(row[m] is None for m in pfm.METRICS), row
            continue
        tp, fp, tn, fn = _sk_counts(y, p, w)
        suffix = "_w" if use_weight else ""
        assert row[f"tp{suffix}"] == pytest.approx(tp, abs=TOL)
        assert row[f"fp{suffix}"] == pytest.approx(fp, abs=TOL)
        assert row[f"tn{suffix}"] == pytest.approx(tn, abs=TOL)
        assert row[f"fn{suffix}"] == pytest.approx(fn, abs=TOL)
        for name, ref in _sk_metrics(y, p, w).items():
            assert _close(row[name], ref), (name, row[name], ref, row)


@st.composite
def fairlearn_frames(draw: st.DrawFn) -> pl.DataFrame:
    df = draw(frames(weighted=False))
    # fairlearn invents 0 for undefined rates; compare where every group has both classes
    # and at least one predicted positive and negative
    return df


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(fairlearn_frames())
def test_disparities_match_fairlearn(df: pl.DataFrame) -> None:
    from fairlearn.metrics import MetricFrame, false_positive_rate, selection_rate
    from fairlearn.metrics import true_positive_rate as fl_tpr

    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g1")
    ok = (
        counts.filter((pl.col("tp") + pl.col("fn") > 0) & (pl.col("fp") + pl.col("tn") > 0)).height
        == counts.height
    )
    if not ok or counts.height < 2:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mf = MetricFrame(
            metrics={
                "selection_rate": selection_rate,
                "true_positive_rate": fl_tpr,
                "false_positive_rate": false_positive_rate,
            },
            y_true=df["y"].to_numpy(),
            y_pred=df["p"].to_numpy(),
            sensitive_features=df["g1"].to_numpy(),
        )
        diff_bg = mf.difference(method="between_groups")
        ratio_bg = mf.ratio(method="between_groups")
        diff_ov = mf.difference(method="to_overall")
    metrics = ["selection_rate", "true_positive_rate", "false_positive_rate"]
    bg = pfm.between_groups(counts, by="g1", metrics=metrics)
    disp = pfm.disparities(counts, by="g1", metrics=metrics, reference="overall")
    for m in metrics:
        row = bg.filter(pl.col("metric") == m).row(0, named=True)
        assert row["difference"] == pytest.approx(diff_bg[m], abs=TOL)
        if row["ratio"] is None:
            assert math.isnan(ratio_bg[m]) or row["max"] == 0
        else:
            assert row["ratio"] == pytest.approx(ratio_bg[m], abs=TOL)
        max_abs = disp.filter(pl.col("metric") == m)["difference"].abs().max()
        assert max_abs == pytest.approx(diff_ov[m], abs=TOL)
        # difference to a named reference: group - reference, as fairlearn's by_group values
        ref = str(df["g1"][0])
        named = pfm.disparities(counts, by="g1", metrics=m, reference=ref)
        by_group = mf.by_group[m]
        for r in named.iter_rows(named=True):
            assert r["difference"] == pytest.approx(by_group[r["g1"]] - by_group[ref], abs=TOL)


def test_rest_reference_recomputes_from_counts() -> None:
    df = pl.DataFrame(
        {
            "g": ["a", "a", "b", "b", "c", "c", "c"],
            "y": [1, 0, 1, 1, 0, 1, 0],
            "p": [1, 1, 0, 1, 0, 1, 1],
        }
    )
    out = pfm.disparities(df, y_true="y", y_pred="p", by="g", metrics="tpr", reference="rest")
    for row in out.iter_rows(named=True):
        rest = df.filter(pl.col("g") != row["g"])
        pos = rest.filter(pl.col("y") == 1)
        expected = pos["p"].mean()
        assert row["reference_value"] == pytest.approx(expected)
        assert row["difference"] == pytest.approx(row["value"] - expected)


def test_expression_context_equals_count_table() -> None:
    rng = np.random.default_rng(3)
    n = 500
    df = pl.DataFrame(
        {
            "g": rng.choice(["x", "y", "z"], n),
            "y": rng.integers(0, 2, n),
            "p": rng.integers(0, 2, n),
            "w": rng.random(n),
        }
    )
    names = list(pfm.METRICS)
    via_expr = (
        df.group_by("g")
        .agg([pl.col("p").fair.metric(m, y_true="y", weight="w") for m in names])
        .sort("g")
    )
    via_counts = pfm.group_metrics(df, y_true="y", y_pred="p", by="g", weight="w", wide=True)
    for m in names:
        np.testing.assert_allclose(via_expr[m].to_numpy(), via_counts[m].to_numpy(), rtol=1e-12)


def test_thresholds_equal_explicit_predictions() -> None:
    rng = np.random.default_rng(0)
    n = 400
    s = rng.choice([0.0, 0.1, 0.25, 0.5, 0.7, 1.0], n)  # ties on the thresholds
    df = pl.DataFrame({"g": rng.choice(["a", "b"], n), "y": rng.integers(0, 2, n), "s": s})
    thresholds = [0.7, 0.25, 0.5, 0.0, 1.0]
    swept = pfm.confusion_counts(df, y_true="y", y_score="s", threshold=thresholds, by="g")
    assert swept["threshold"].to_list() == sorted(thresholds) * 2
    for t in thresholds:
        explicit = pfm.confusion_counts(
            df.with_columns((pl.col("s") >= t).alias("p")), y_true="y", y_pred="p", by="g"
        )
        got = swept.filter(pl.col("threshold") == t).drop("threshold")
        assert got.equals(explicit)


def test_separately_equals_one_attribute_at_a_time() -> None:
    rng = np.random.default_rng(1)
    n = 300
    df = pl.DataFrame(
        {
            "race": rng.choice(["r1", "r2", None], n),
            "sex": rng.choice(["F", "M"], n),
            "y": rng.integers(0, 2, n),
            "p": rng.integers(0, 2, n),
        }
    )
    sep = pfm.confusion_counts(df, y_true="y", y_pred="p", by=["race", "sex"], separately=True)
    assert sep["attribute"].unique(maintain_order=True).to_list() == ["race", "sex"]
    for attr in ("race", "sex"):
        single = pfm.confusion_counts(df, y_true="y", y_pred="p", by=attr)
        other = "sex" if attr == "race" else "race"
        part = sep.filter(pl.col("attribute") == attr)
        # typed keys side by side: the other attribute's key is null on this attribute's rows
        assert part[other].null_count() == part.height
        assert part.schema[attr] == df.schema[attr]
        assert part.drop("attribute", other).equals(single)


def test_nulls_are_counted_not_lost() -> None:
    df = pl.DataFrame(
        {
            "g": ["a", "a", None, "b", "b", "b"],
            "y": [1, None, 1, 0, 1, 0],
            "p": [1, 1, 0, None, 1, 0],
            "w": [1.0, 2.0, 3.0, 1.0, None, 2.0],
        }
    )
    c = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g", weight="w")
    assert c["n"].sum() + c["n_null"].sum() == df.height
    row_b = c.filter(pl.col("g") == "b").row(0, named=True)
    assert row_b["n_null"] == 2 and row_b["n_null_y_pred"] == 1 and row_b["n_null_weight"] == 1
    row_null = c.filter(pl.col("g").is_null()).row(0, named=True)
    assert row_null["n"] == 1


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_engines_agree(engine: str) -> None:
    rng = np.random.default_rng(5)
    n = 20_000
    df = pl.DataFrame(
        {
            "g": rng.choice(["a", "b", "c", "d"], n),
            "h": rng.integers(0, 3, n),
            "y": rng.integers(0, 2, n),
            "s": rng.random(n),
            "w": rng.random(n),
        }
    )
    lf = df.lazy()
    q = pfm.disparities(
        lf,
        y_true="y",
        y_score="s",
        threshold=[0.3, 0.6],
        by=["g", "h"],
        weight="w",
        reference="rest",
    )
    assert isinstance(q, pl.LazyFrame)
    eager = pfm.disparities(
        df,
        y_true="y",
        y_score="s",
        threshold=[0.3, 0.6],
        by=["g", "h"],
        weight="w",
        reference="rest",
    )
    assert_frame_equal(q.collect(engine=engine), eager, check_row_order=False, rel_tol=1e-12)


def test_lazy_plans_do_not_scan() -> None:
    calls = {"n": 0}

    def spy(frame: pl.DataFrame) -> pl.DataFrame:
        calls["n"] += 1
        return frame

    df = pl.DataFrame({"g": ["a", "b"], "y": [1, 0], "p": [1, 1]})
    lf = df.lazy().map_batches(spy, schema=df.schema)
    for q in (
        pfm.confusion_counts(lf, y_true="y", y_pred="p", by="g"),
        pfm.group_metrics(lf, y_true="y", y_pred="p", by="g"),
        pfm.disparities(lf, y_true="y", y_pred="p", by="g", reference="a"),
        pfm.fairness_criteria(lf, y_true="y", y_pred="p", by="g"),
        pfm.between_groups(lf, y_true="y", y_pred="p", by="g"),
        lf.fair.disparities(y_true="y", y_pred="p", by="g"),
    ):
        assert isinstance(q, pl.LazyFrame)
        q.collect_schema()
    assert calls["n"] == 0
    pfm.group_metrics(lf, y_true="y", y_pred="p", by="g").collect()
    assert calls["n"] == 1  # one scan for counts + metrics


def test_single_scan_for_criteria() -> None:
    calls = {"n": 0}

    def spy(frame: pl.DataFrame) -> pl.DataFrame:
        calls["n"] += 1
        return frame

    df = pl.DataFrame({"g": ["a", "b", "a"], "y": [1, 0, 1], "p": [1, 1, 0]})
    lf = df.lazy().map_batches(spy, schema=df.schema)
    pfm.fairness_criteria(lf, y_true="y", y_pred="p", by="g", reference="b").collect()
    assert calls["n"] == 1


def test_empty_input_gives_empty_result() -> None:
    df = pl.DataFrame(
        {"g": [], "y": [], "p": []}, schema={"g": pl.String, "y": pl.Int64, "p": pl.Int64}
    )
    assert pfm.confusion_counts(df, y_true="y", y_pred="p", by="g").height == 0
    assert pfm.group_metrics(df, y_true="y", y_pred="p", by="g").height == 0
    assert pfm.confusion_counts(df, y_true="y", y_pred="p").height == 0


def test_text_and_boolean_labels() -> None:
    df = pl.DataFrame({"y": ["yes", "no", "yes", "no"], "p": [True, True, False, False]})
    c = pfm.confusion_counts(df, y_true="y", y_pred="p", pos_label="yes")
    assert c.select("tp", "fp", "tn", "fn").row(0) == (1, 1, 1, 1)
    flipped = pfm.confusion_counts(
        df.with_columns(pl.col("p").cast(pl.Int8)), y_true="y", y_pred="p", pos_label="yes"
    )
    assert flipped.select("tp", "fp", "tn", "fn").row(0) == (1, 1, 1, 1)


def test_metric_registry_and_docstrings_agree() -> None:
    for name, spec in pfm.METRICS.items():
        doc = spec.func.__doc__ or ""
        assert spec.formula in doc, (name, spec.formula)
        assert "Examples" in doc


def test_metrics_reference_page_is_current() -> None:
    from pathlib import Path

    from polars_fairmetrics._docgen import metrics_reference_markdown

    page = Path(__file__).resolve().parents[1] / "docs" / "metrics.md"
    assert metrics_reference_markdown() in page.read_text(encoding="utf-8"), (
        "docs/metrics.md is stale: run `python -m polars_fairmetrics._docgen > docs/metrics.md`"
    )


def test_replicate_and_threshold_partitions_are_kept_apart() -> None:
    """A count table with a ``replicate`` column: disparities are computed within each replicate."""
    base = pl.DataFrame({"g": ["a", "b"], "tp": [3, 1], "fp": [1, 2], "tn": [4, 5], "fn": [2, 2]})
    other = pl.DataFrame({"g": ["a", "b"], "tp": [0, 5], "fp": [0, 1], "tn": [9, 1], "fn": [1, 3]})
    reps = pl.concat(
        [base.with_columns(replicate=pl.lit(0)), other.with_columns(replicate=pl.lit(1))]
    )
    out = pfm.disparities(reps, by="g", metrics="tpr", reference="b")
    for r, table in ((0, base), (1, other)):
        alone = pfm.disparities(table, by="g", metrics="tpr", reference="b")
        got = out.filter(pl.col("replicate") == r).drop("replicate")
        assert_frame_equal(got, alone, rel_tol=1e-12)
    # the reference must exist in every replicate
    with pytest.raises(pfm.ReferenceGroupError, match="replicate"):
        pfm.disparities(
            reps.filter(~((pl.col("replicate") == 1) & (pl.col("g") == "b"))),
            by="g",
            metrics="tpr",
            reference="b",
        )


def test_separately_scans_once() -> None:
    calls = {"n": 0}

    def spy(frame: pl.DataFrame) -> pl.DataFrame:
        calls["n"] += 1
        return frame

    df = pl.DataFrame({"a": ["x", "y", "x"], "b": [1, 2, 2], "y": [1, 0, 1], "p": [1, 1, 0]})
    lf = df.lazy().map_batches(spy, schema=df.schema)
    pfm.disparities(lf, y_true="y", y_pred="p", by=["a", "b"], separately=True).collect()
    assert calls["n"] == 1


def test_many_thresholds_use_the_same_rule() -> None:
    """More than 32 thresholds take the binary-search path: same counts as explicit predictions."""
    rng = np.random.default_rng(8)
    n = 300
    grid = [round(x, 3) for x in np.linspace(0.0, 1.0, 41)]
    s = rng.choice([*grid, 0.0125, 0.5125, 1.0], n)  # ties on and between thresholds
    df = pl.DataFrame({"y": rng.integers(0, 2, n), "s": s})
    swept = pfm.confusion_counts(df, y_true="y", y_score="s", threshold=grid)
    for t in (0.0, 0.025, 0.5, 0.975, 1.0):
        explicit = pfm.confusion_counts(
            df.with_columns((pl.col("s") >= t).alias("p")), y_true="y", y_pred="p"
        )
        assert swept.filter(pl.col("threshold") == t).drop("threshold").equals(explicit)


def test_missing_reference_names_the_groups_of_its_own_partition() -> None:
    """The error lists the groups present where the reference is missing, not elsewhere."""
    reps = pl.DataFrame(
        {
            "replicate": [0, 0, 1, 1],
            "g": ["a", "b", "a", "c"],
            "tp": [3, 1, 2, 2],
            "fp": [1, 2, 1, 1],
            "tn": [4, 5, 4, 4],
            "fn": [2, 2, 2, 2],
        }
    )
    with pytest.raises(pfm.ReferenceGroupError) as info:
        pfm.disparities(reps, by="g", metrics="tpr", reference="b")
    text = str(info.value)
    present = text.split("groups present:")[-1]
    assert "replicate=1" in text
    assert "'c'" in present or "c" in present
    assert "b" not in present
