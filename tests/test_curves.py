"""Curves, curve summaries and threshold sweeps against scikit-learn and numpy brute force.

The docs page docs/curves.md is executed by tests/test_docs.py (its python blocks).
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from sklearn.metrics import (
    auc,
    average_precision_score,
    precision_recall_curve,
    roc_auc_score,
)
from sklearn.metrics import roc_curve as sk_roc_curve

import polars_fairmetrics as pfm
from polars_fairmetrics._validate import threshold_grid
from polars_fairmetrics.exceptions import (
    ColumnNotFoundError,
    InvalidLabelError,
    InvalidOptionError,
    InvalidScoreError,
    InvalidWeightError,
)

TOL = 1e-12
# engines may add floats in a different order: frames are compared to 1e-12, not bit for bit

SEEDS = [0, 1, 2]


def frame(seed: int, n: int = 400) -> pl.DataFrame:
    """Random groups, tied scores (2 decimals), weights with zeros, single-class groups."""
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c"], size=n, p=[0.5, 0.35, 0.15])
    y = rng.integers(0, 2, size=n)
    s = np.round(np.clip(rng.normal(0.4 + 0.2 * y, 0.2), 0, 1), 2)
    w = rng.exponential(1.0, size=n) * (rng.random(n) > 0.1)
    df = pl.DataFrame({"g": g, "y": y, "s": s, "w": w})
    # group "neg" has no positives, group "pos" no negatives
    extra = pl.DataFrame(
        {
            "g": ["neg"] * 5 + ["pos"] * 4,
            "y": [0] * 5 + [1] * 4,
            "s": [0.1, 0.2, 0.2, 0.5, 0.9, 0.3, 0.3, 0.7, 0.8],
            "w": [1.0, 2.0, 0.5, 1.0, 1.0, 1.0, 1.0, 3.0, 0.5],
        }
    )
    return pl.concat([df, extra])


def _group(df: pl.DataFrame, g: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    part = df.filter(pl.col("g") == g)
    return part["y"].to_numpy(), part["s"].to_numpy(), part["w"].to_numpy()


def _close(a: object, b: object) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(float(a) - float(b)) <= TOL  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("method", ["aggregate", "sort"])
def test_curves_and_summaries_equal_sklearn(seed: int, weighted: bool, method: str) -> None:
    df = frame(seed)
    wcol = "w" if weighted else None
    table = pfm.curve_counts(df, y_true="y", y_score="s", by="g", weight=wcol, exact_method=method)  # type: ignore[arg-type]
    roc = pfm.roc_curve(table)
    pr = pfm.pr_curve(table)
    summ = pfm.curve_summaries(table, wide=True)
    expr = df.group_by("g").agg(
        pfm.roc_auc("s", y_true="y", weight=wcol),
        pfm.average_precision("s", y_true="y", weight=wcol),
    )
    for g in ["a", "b", "c", "neg", "pos"]:
        y, s, w = _group(df, g)
        sw = w if weighted else None
        row = summ.filter(pl.col("g") == g).row(0, named=True)
        erow = expr.filter(pl.col("g") == g).row(0, named=True)
        single = y.min() == y.max()
        if single:
            assert row["roc_auc"] is None and erow["roc_auc"] is None
        else:
            ref = roc_auc_score(y, s, sample_weight=sw)
            assert _close(row["roc_auc"], ref) and _close(erow["roc_auc"], ref)
            fpr, tpr, thr = sk_roc_curve(y, s, sample_weight=sw, drop_intermediate=False)
            ours = roc.filter(pl.col("g") == g)
            np.testing.assert_allclose(ours["fpr"].to_numpy(), fpr, rtol=0, atol=TOL)
            np.testing.assert_allclose(ours["tpr"].to_numpy(), tpr, rtol=0, atol=TOL)
            np.testing.assert_array_equal(ours["threshold"].to_numpy(), thr)
        if y.sum() == 0:
            assert row["average_precision"] is None and erow["average_precision"] is None
            assert row["aupr"] is None
            continue
        ap = average_precision_score(y, s, sample_weight=sw)
        assert _close(row["average_precision"], ap)
        assert _close(erow["average_precision"], ap)
        prec, rec, thr = precision_recall_curve(y, s, sample_weight=sw)
        assert _close(row["aupr"], auc(rec, prec))
        ours = pr.filter(pl.col("g") == g)
        np.testing.assert_allclose(ours["precision"].to_numpy(), prec[::-1], rtol=0, atol=TOL)
        np.testing.assert_allclose(ours["recall"].to_numpy(), rec[::-1], rtol=0, atol=TOL)
        np.testing.assert_array_equal(ours["threshold"].to_numpy()[1:], thr[::-1])


def test_single_class_groups_are_null_not_half() -> None:
    df = pl.DataFrame({"g": ["x", "x", "y", "y"], "y": [1, 1, 0, 0], "s": [0.2, 0.9, 0.4, 0.4]})
    summ = pfm.curve_summaries(df, y_true="y", y_score="s", by="g", wide=True)
    assert summ["roc_auc"].to_list() == [None, None]
    assert summ["average_precision"].to_list() == [1.0, None]
    agg = df.group_by("g").agg(pfm.roc_auc("s", y_true="y")).sort("g")
    assert agg["roc_auc"].to_list() == [None, None]
    long = pfm.curve_summaries(df, y_true="y", y_score="s", by="g")
    assert long["value"].is_nan().sum() == 0
    # support: positive-negative pairs for ROC AUC, positives for AP and AUPR; 0 if undefined
    assert long.filter(pl.col("metric") == "roc_auc")["support"].to_list() == [0, 0]
    assert long.filter(pl.col("metric") == "aupr")["support"].to_list() == [2, 0]


def brute_counts(y: np.ndarray, s: np.ndarray, w: np.ndarray, t: float) -> tuple[float, ...]:
    pp = s >= t
    return (
        w[pp & (y == 1)].sum(),
        w[pp & (y == 0)].sum(),
        w[~pp & (y == 0)].sum(),
        w[~pp & (y == 1)].sum(),
    )


@pytest.mark.parametrize("mode", ["exact", "grid", "quantile"])
def test_counts_brute_force_and_engines(mode: str) -> None:
    df = frame(5, n=300)
    kwargs = {"bins": 10} if mode != "exact" else {}
    lazy = pfm.curve_counts(
        df.lazy(), y_true="y", y_score="s", by="g", weight="w", mode=mode, **kwargs
    )
    assert isinstance(lazy, pl.LazyFrame)
    mem = lazy.collect()
    stream = lazy.collect(engine="streaming")
    assert_frame_equal(mem, stream, rel_tol=1e-12, abs_tol=1e-9)
    assert mem.schema["tp"] == pl.Int64 and mem.schema["tp_w"] == pl.Float64
    for r in mem.iter_rows(named=True):
        y, s, w = _group(df, r["g"])
        ones = np.ones_like(w)
        assert (r["tp"], r["fp"], r["tn"], r["fn"]) == tuple(
            int(v) for v in brute_counts(y, s, ones, r["threshold"])
        )
        bw = brute_counts(y, s, w, r["threshold"])
        got = (r["tp_w"], r["fp_w"], r["tn_w"], r["fn_w"])
        np.testing.assert_allclose(got, bw, rtol=1e-12, atol=1e-9)
    if mode == "exact":
        for g in mem["g"].unique():
            _, s, _ = _group(df, g)
            ths = mem.filter(pl.col("g") == g)["threshold"].to_list()
            assert ths == sorted(set(s.tolist()), reverse=True)


def test_grid_equals_core_confusion_counts() -> None:
    df = frame(6)
    grid = [0.0, 0.25, 0.5, 0.75, 1.0]
    ours = pfm.curve_counts(df, y_true="y", y_score="s", by="g", weight="w", mode="grid", bins=4)
    core = pfm.confusion_counts(df, y_true="y", y_score="s", threshold=grid, by="g", weight="w")
    assert_frame_equal(
        ours.sort("g", "threshold"),
        core.sort("g", "threshold"),
        check_column_order=False,
        rel_tol=1e-12,
    )


def test_threshold_sweep_metrics_and_disparities() -> None:
    df = frame(7)
    table = pfm.curve_counts(df, y_true="y", y_score="s", by="g", mode="grid", bins=10)
    sweep = pfm.metrics_from_counts(table, metrics=["tpr", "precision"])
    assert set(sweep.columns) >= {"g", "threshold", "metric", "value"}
    disp = pfm.disparities(table, metrics="tpr", reference="a")
    assert disp["threshold"].n_unique() == 11
    one = disp.filter((pl.col("g") == "b") & (pl.col("threshold") == 0.5)).row(0, named=True)
    y, s, _ = _group(df, "b")
    ya, sa, _ = _group(df, "a")
    tpr_b = ((s >= 0.5) & (y == 1)).sum() / (y == 1).sum()
    tpr_a = ((sa >= 0.5) & (ya == 1)).sum() / (ya == 1).sum()
    assert math.isclose(one["difference"], tpr_b - tpr_a, abs_tol=1e-12)


def _brute_auc(y: np.ndarray, s: np.ndarray, w: np.ndarray) -> float:
    pos, neg = y == 1, y == 0
    gt = (s[pos][:, None] > s[neg][None, :]) + 0.5 * (s[pos][:, None] == s[neg][None, :])
    return float((w[pos][:, None] * w[neg][None, :] * gt).sum() / (w[pos].sum() * w[neg].sum()))


@pytest.mark.parametrize(
    ("mode", "bins"), [("grid", 4), ("grid", 10), ("grid", 50), ("quantile", 7), ("quantile", 40)]
)
def test_binned_auc_error_within_tied_bin_mass(mode: str, bins: int) -> None:
    rng = np.random.default_rng(bins)
    n = 2000
    y = rng.integers(0, 2, n)
    s = np.clip(rng.normal(0.4 + 0.2 * y, 0.2), 0, 1)
    w = rng.exponential(1.0, n)
    df = pl.DataFrame({"y": y, "s": s, "w": w})
    exact = _brute_auc(y, s, w)
    table = pfm.curve_counts(df, y_true="y", y_score="s", weight="w", mode=mode, bins=bins)
    got = pfm.curve_summaries(table, summaries="roc_auc")["value"].item()
    edges = np.sort(table["threshold"].to_numpy())
    b = np.searchsorted(edges, s, side="right")  # the bin of each row (0: below all)
    mass = sum(w[(b == k) & (y == 1)].sum() * w[(b == k) & (y == 0)].sum() for k in set(b))
    bound = 0.5 * mass / (w[y == 1].sum() * w[y == 0].sum())
    assert abs(got - exact) <= bound + 1e-12
    # the binned AUC is exactly the AUC of the binned scores (within-bin pairs tied)
    assert math.isclose(got, _brute_auc(y, b.astype(float), w), abs_tol=1e-12)


def _np_curve(
    y: np.ndarray, s: np.ndarray, w: np.ndarray, ts: list[float]
) -> tuple[np.ndarray, np.ndarray]:
    rec, prec = [], []
    for t in ts:
        tp, fp, _, fn = brute_counts(y, s, w, t)
        rec.append(tp / (tp + fn))
        prec.append(tp / (tp + fp) if tp + fp > 0 else np.nan)
    return np.array(rec), np.array(prec)


def test_aupr_unanchored_and_fixed_grid_modes_brute_force() -> None:
    df = frame(8)
    for weighted in (False, True):
        wcol = "w" if weighted else None
        table = pfm.curve_counts(df, y_true="y", y_score="s", by="g", weight=wcol)
        unanchored = pfm.curve_summaries(table, summaries="aupr", aupr_mode="unanchored")
        nb = pfm.curve_summaries(table, summaries="aupr", aupr_mode="fixed_grid")
        for g in ["a", "b", "c", "pos"]:
            y, s, w = _group(df, g)
            w = w if weighted else np.ones_like(w)
            # unanchored: the curve's own points by recall, trapezoid, closed at all-positive
            ts = sorted(set(s[w > 0].tolist()) if weighted else set(s.tolist()), reverse=True)
            r, p = _np_curve(y, s, w, ts)
            keep = ~np.isnan(p)
            r, p = r[keep], p[keep]
            ref = float(np.sum(0.5 * np.diff(r) * (p[1:] + p[:-1])))
            got = unanchored.filter(pl.col("g") == g).item(0, "value")
            assert math.isclose(got, ref, abs_tol=1e-12), (g, weighted)
            # fixed grid: 50 thresholds from the max score down to 0, stop at recall 1
            grid = np.linspace(max(ts), 0, 50)
            r, p = _np_curve(y, s, w, list(grid))
            p = np.nan_to_num(p, nan=0.0)
            stop = int(np.argmax(r >= 1 - 1e-12))
            r, p = r[: stop + 1], p[: stop + 1]
            ref = float(np.sum(0.5 * np.diff(r) * (p[1:] + p[:-1])))
            got = nb.filter(pl.col("g") == g).item(0, "value")
            assert math.isclose(got, ref, abs_tol=1e-12), (g, weighted, got, ref)


def test_deployment_corrected_pr_curve() -> None:
    df = frame(9)
    y, s, _ = _group(df, "a")
    pos, neg = (y == 1).sum(), (y == 0).sum()
    pi = 0.01
    f = ((1 - pi) / pi) / (neg / pos)
    pr = pfm.pr_curve(
        df.filter(pl.col("g") == "a"),
        y_true="y",
        y_score="s",
        deploy_positive_rate=pi,
        anchor=False,
    )
    for t, p, r in pr.iter_rows():
        tp, fp, _, fn = brute_counts(y, s, np.ones(len(y)), t)
        assert math.isclose(p, tp / (tp + f * fp), rel_tol=1e-12)
        assert math.isclose(r, tp / (tp + fn), rel_tol=1e-12)
    same = pfm.pr_curve(df, y_true="y", y_score="s", by="g", deploy_neg_pos_ratio=99.0)
    other = pfm.pr_curve(df, y_true="y", y_score="s", by="g", deploy_positive_rate=0.01)
    assert_frame_equal(same, other, rel_tol=1e-12)
    with pytest.raises(InvalidOptionError):
        pfm.pr_curve(df, y_true="y", y_score="s", deploy_positive_rate=1.5)


def test_pooled_curve_and_overall() -> None:
    df = frame(10)
    table = pfm.curve_counts(df, y_true="y", y_score="s", by="g", weight="w")
    pooled = pfm.pooled_curve(table)
    direct = pfm.curve_counts(df, y_true="y", y_score="s", weight="w")
    assert_frame_equal(pooled, direct, rel_tol=1e-12, abs_tol=1e-9)
    summ = pfm.curve_summaries(pooled, summaries="roc_auc")
    y, s, w = df["y"].to_numpy(), df["s"].to_numpy(), df["w"].to_numpy()
    assert summ.columns == ["metric", "value", "support", "n", "n_null", "n_w"]
    assert math.isclose(summ["value"].item(), roc_auc_score(y, s, sample_weight=w), abs_tol=TOL)


def test_summary_disparities() -> None:
    df = frame(11)
    table = pfm.curve_counts(df, y_true="y", y_score="s", by="g")
    d = pfm.summary_disparities(table, reference="a", summaries=["roc_auc"])
    auc_a = roc_auc_score(*_group(df, "a")[:2])
    auc_b = roc_auc_score(*_group(df, "b")[:2])
    row = d.filter(pl.col("g") == "b").row(0, named=True)
    assert math.isclose(row["difference"], auc_b - auc_a, abs_tol=TOL)
    assert math.isclose(row["ratio"], auc_b / auc_a, rel_tol=1e-12)
    assert d.filter(pl.col("g") == "neg")["difference"].to_list() == [None]
    ov = pfm.summary_disparities(table.lazy(), summaries="roc_auc").collect()
    y, s = df["y"].to_numpy(), df["s"].to_numpy()
    assert math.isclose(ov["reference_value"][0], roc_auc_score(y, s), abs_tol=TOL)
    with pytest.raises(pfm.ReferenceGroupError):
        pfm.summary_disparities(table, reference="zzz")


def test_lazy_streaming_summaries_and_namespaces() -> None:
    df = frame(12)
    lf = df.lazy()
    out = pfm.curve_summaries(
        lf, y_true="y", y_score="s", by="g", weight="w", aupr_mode="fixed_grid"
    )
    assert isinstance(out, pl.LazyFrame)
    assert out.collect_schema().names() == ["g", "metric", "value", "support", "n", "n_null", "n_w"]
    assert_frame_equal(out.collect(), out.collect(engine="streaming"), rel_tol=1e-12, abs_tol=1e-9)
    via_ns = lf.fair.curve_summaries(
        y_true="y", y_score="s", by="g", weight="w", aupr_mode="fixed_grid"
    ).collect()
    assert_frame_equal(out.collect(), via_ns, rel_tol=1e-12, abs_tol=1e-9)
    e = df.group_by("g").agg(pl.col("s").fair.roc_auc(y_true="y")).sort("g")
    assert_frame_equal(e, df.group_by("g").agg(pfm.roc_auc("s", y_true="y")).sort("g"))
    for fn in ("roc_curve", "pr_curve", "curve_counts"):
        a = getattr(df.fair, fn)(y_true="y", y_score="s", by="g")
        b = getattr(lf.fair, fn)(y_true="y", y_score="s", by="g").collect(engine="streaming")
        assert_frame_equal(a, b, rel_tol=1e-12, abs_tol=1e-9)


def test_nulls_are_counted_not_dropped() -> None:
    df = pl.DataFrame(
        {"y": [1, 0, None, 1, 0], "s": [0.9, None, 0.5, 0.4, 0.3], "w": [1.0, 1.0, 1.0, None, 2.0]}
    )
    t = pfm.curve_counts(df, y_true="y", y_score="s", weight="w")
    r = t.row(0, named=True)
    assert (r["n_null"], r["n_null_y_true"], r["n_null_y_pred"], r["n_null_weight"]) == (3, 1, 1, 1)
    assert t["n"][0] + r["n_null"] == df.height


def test_errors_name_column_and_value() -> None:
    df = pl.DataFrame({"y": [1, 0, 2], "s": [0.2, 0.5, 0.7], "w": [1.0, -1.0, 1.0]})
    with pytest.raises(InvalidLabelError, match="'y'"):
        pfm.curve_counts(df, y_true="y", y_score="s")
    ok = df.with_columns(pl.col("y").clip(0, 1))
    with pytest.raises(InvalidWeightError, match=r"-1\.0"):
        pfm.curve_counts(ok, y_true="y", y_score="s", weight="w")
    with pytest.raises(InvalidScoreError, match="outside"):
        pfm.curve_counts(ok.with_columns(pl.col("s") + 1), y_true="y", y_score="s")
    with pytest.raises(ColumnNotFoundError, match="nope"):
        pfm.curve_counts(ok.lazy(), y_true="y", y_score="nope")
    with pytest.raises(InvalidOptionError):
        pfm.curve_counts(ok, y_true="y", y_score="s", mode="bogus")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError):
        pfm.curve_summaries(ok, y_true="y", y_score="s", aupr_mode="x")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="curve table"):
        pfm.roc_curve(ok)


def test_label_validation_paths() -> None:
    base = {"s": [0.2, 0.5, 0.7, 0.9]}
    with pytest.raises(InvalidLabelError, match=r"0\.5"):
        pfm.curve_counts(pl.DataFrame({"y": [1.0, 0.0, 0.5, 1.0], **base}), y_true="y", y_score="s")
    with pytest.raises(InvalidLabelError, match="maybe"):
        pfm.curve_counts(
            pl.DataFrame({"y": ["yes", "no", "maybe", "no"], **base}),
            y_true="y",
            y_score="s",
            pos_label="yes",
        )
    text = pfm.curve_counts(
        pl.DataFrame({"y": ["yes", "no", "yes", "no"], **base}),
        y_true="y",
        y_score="s",
        pos_label="yes",
    )
    boolean = pfm.curve_counts(
        pl.DataFrame({"y": [True, False, True, False], **base}), y_true="y", y_score="s"
    )
    assert_frame_equal(text, boolean)
    with pytest.raises(InvalidWeightError):
        pfm.curve_counts(
            pl.DataFrame({"y": [1, 0, 1, 0], "w": [1.0, math.nan, 1.0, 1.0], **base}),
            y_true="y",
            y_score="s",
            weight="w",
        )


def test_one_scan_per_query(tmp_path: Path) -> None:
    path = tmp_path / "rows.parquet"
    frame(13).write_parquet(path)
    for mode in ("exact", "grid"):
        plan = pfm.curve_counts(
            pl.scan_parquet(path), y_true="y", y_score="s", by="g", weight="w", mode=mode
        ).explain()
        assert plan.count("Parquet SCAN") == 1, plan


def test_plot_needs_the_plot_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    curve = pfm.roc_curve(pl.DataFrame({"y": [1, 0], "s": [0.9, 0.1]}), y_true="y", y_score="s")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"polars_fairmetrics\[plot\]"):
        pfm.plot_curves(curve)


def test_row_order_of_the_curve_table_does_not_matter() -> None:
    df = frame(14)
    table = pfm.curve_counts(df, y_true="y", y_score="s", by="g", weight="w")
    shuffled = table.sample(fraction=1.0, shuffle=True, seed=1)
    for fn in (pfm.roc_curve, pfm.pr_curve, pfm.curve_summaries, pfm.pooled_curve):
        assert_frame_equal(fn(table), fn(shuffled), rel_tol=1e-12)
    nb = pfm.curve_summaries(shuffled, aupr_mode="fixed_grid")
    assert_frame_equal(
        nb, pfm.curve_summaries(table, aupr_mode="fixed_grid"), rel_tol=1e-12, abs_tol=1e-9
    )


@pytest.mark.parametrize("weighted", [False, True])
def test_exact_methods_agree(weighted: bool) -> None:
    df = frame(15).with_columns(
        pl.when(pl.int_range(pl.len()) % 17 == 0).then(None).otherwise(pl.col("s")).alias("s"),
        pl.when(pl.int_range(pl.len()) % 23 == 0).then(None).otherwise(pl.col("y")).alias("y"),
        pl.when(pl.int_range(pl.len()) % 29 == 0).then(None).otherwise(pl.col("w")).alias("w"),
    )
    wcol = "w" if weighted else None
    agg = pfm.curve_counts(df.lazy(), y_true="y", y_score="s", by="g", weight=wcol)
    srt = pfm.curve_counts(
        df.lazy(), y_true="y", y_score="s", by="g", weight=wcol, exact_method="sort"
    )
    assert_frame_equal(agg.collect(), srt.collect(), rel_tol=1e-12, abs_tol=1e-9)
    assert_frame_equal(srt.collect(), srt.collect(engine="streaming"), rel_tol=1e-12, abs_tol=1e-9)
    whole = pfm.curve_counts(df, y_true="y", y_score="s", weight=wcol, exact_method="sort")
    assert whole["n"][0] + whole["n_null"][0] == df.height
    with pytest.raises(InvalidLabelError):
        pfm.curve_counts(
            df.with_columns(pl.col("y") * 2), y_true="y", y_score="s", exact_method="sort"
        )


def test_deployment_corrected_summaries_brute_force() -> None:
    df = frame(16).filter(pl.col("g") == "a")
    y, s = df["y"].to_numpy(), df["s"].to_numpy()
    ratio = 19.0
    f = ratio / ((y == 0).sum() / (y == 1).sum())
    ap, prev_r = 0.0, 0.0
    for t in sorted(set(s.tolist()), reverse=True):
        tp, fp, _, fn = brute_counts(y, s, np.ones(len(y)), t)
        r = tp / (tp + fn)
        ap += (r - prev_r) * tp / (tp + f * fp)
        prev_r = r
    got = pfm.curve_summaries(
        df,
        y_true="y",
        y_score="s",
        deploy_neg_pos_ratio=ratio,
        summaries=["average_precision", "roc_auc"],
        wide=True,
    )
    assert math.isclose(got["average_precision"].item(), ap, abs_tol=1e-12)
    assert math.isclose(got["roc_auc"].item(), roc_auc_score(y, s), abs_tol=1e-12)


# --- exact thresholds -------------------------------------------------------------------------


def test_grid_thresholds_are_the_decimals() -> None:
    grid = threshold_grid(100, (0.0, 1.0))
    assert grid[30] == 0.3 and grid[7] == 0.07 and grid[-1] == 1.0
    assert np.linspace(0, 1, 101)[35] != 0.35  # what the grid used to be
    assert np.linspace(0, 1, 11)[3] != 0.3 and threshold_grid(10, (0, 1))[3] == 0.3
    for bins, bounds in [(100, (0.0, 1.0)), (7, (0.1, 0.8)), (20, (-1.0, 1.0)), (3, (0, 1))]:
        low, high = (Fraction(repr(float(b))) for b in bounds)
        want = [float(low + i * (high - low) / bins) for i in range(bins + 1)]
        assert threshold_grid(bins, bounds) == want  # the double nearest each exact value
    table = pfm.curve_counts(
        pl.DataFrame({"y": [1, 0], "s": [0.3, 0.1]}), y_true="y", y_score="s", mode="grid", bins=10
    )
    assert table.filter(pl.col("threshold") == 0.3)["tp"].item() == 1  # 0.3 >= 0.3


def test_scores_on_a_grid_threshold_are_positive_there() -> None:
    # scores exactly on 0.01-grid points: with np.linspace thresholds 0.35 fell below its bin
    df = pl.DataFrame({"y": [1, 0], "s": [0.35, 0.34]})
    summ = pfm.curve_summaries(df, y_true="y", y_score="s", mode="grid", bins=100, wide=True)
    assert summ["roc_auc"].item() == 1.0 and summ["average_precision"].item() == 1.0
    core = pfm.confusion_counts(df, y_true="y", y_score="s", threshold=0.35)
    assert core["tp"].item() == 1 and core["fp"].item() == 0


def test_fixed_grid_aupr_is_the_notebook_computation() -> None:
    df = pl.DataFrame({"y": [1, 0, 1, 0], "s": [0.14, 0.10, 0.06, 0.058]})
    got = pfm.curve_summaries(df, y_true="y", y_score="s", summaries="aupr", aupr_mode="fixed_grid")
    assert math.isclose(got["value"].item(), 7 / 24, abs_tol=1e-12)  # 0.25 with a Polars grid
    for lazy in (df.lazy(), df.lazy().select("s", "y")):
        out = pfm.curve_summaries(
            lazy, y_true="y", y_score="s", summaries="aupr", aupr_mode="fixed_grid"
        )
        assert math.isclose(out.collect(engine="streaming")["value"].item(), 7 / 24, abs_tol=1e-12)
    # no positives: the fixed grid gives 0 (as the notebook does), the exact modes null
    neg = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [0, 0, 1, 0], "s": [0.2, 0.4, 0.9, 0.1]})
    for mode, want in [("fixed_grid", 0.0), ("trapezoid", None), ("unanchored", None)]:
        out = pfm.curve_summaries(
            neg, y_true="y", y_score="s", by="g", summaries="aupr", aupr_mode=mode
        )
        assert out.filter(pl.col("g") == "a")["value"].item() == want, mode  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="renamed 'fixed_grid'"):
        pfm.curve_summaries(neg, y_true="y", y_score="s", aupr_mode="notebook")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="renamed 'unanchored'"):
        pfm.curve_summaries(neg, y_true="y", y_score="s", aupr_mode="seed")  # type: ignore[arg-type]


GRIDS = [(1, (0.0, 1.0)), (4, (0.0, 1.0)), (10, (0.0, 1.0)), (20, (0.2, 0.8)), (100, (0.0, 1.0))]


@st.composite
def snapped_rows(draw: st.DrawFn) -> tuple[pl.DataFrame, int, tuple[float, float]]:
    """Rows whose scores mostly sit exactly on grid thresholds (as a user rounds them)."""
    bins, (low, high) = draw(st.sampled_from(GRIDS))
    n = draw(st.integers(0, 40))
    on_grid = st.integers(0, bins).map(lambda k: round(low + k * (high - low) / bins, 10))
    anywhere = st.floats(low, high, allow_nan=False)
    score = st.one_of(on_grid, on_grid, anywhere, st.none())
    rows = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["a", "b", None]),
                st.sampled_from([0, 1, 1, None]),
                score,
                st.sampled_from([0.0, 0.5, 1.0, 2.25, None]),
            ),
            min_size=n,
            max_size=n,
        )
    )
    schema = {"g": pl.String, "y": pl.Int64, "s": pl.Float64, "w": pl.Float64}
    return pl.DataFrame(rows, schema=schema, orient="row"), bins, (low, high)


@given(case=snapped_rows(), weighted=st.booleans())
@settings(max_examples=60, deadline=None)
def test_grid_curve_is_confusion_counts_at_the_same_thresholds(
    case: tuple[pl.DataFrame, int, tuple[float, float]], weighted: bool
) -> None:
    df, bins, (low, high) = case
    decimals = [round(low + i * (high - low) / bins, 10) for i in range(bins + 1)]
    opts: dict[str, object] = {"y_true": "y", "y_score": "s", "by": "g"}
    if weighted:
        opts["weight"] = "w"
    core = pfm.confusion_counts(df, threshold=decimals, **opts).sort("g", "threshold")  # type: ignore[arg-type]
    for data in (df, df.lazy()):
        curve = pfm.curve_counts(data, mode="grid", bins=bins, score_bounds=(low, high), **opts)  # type: ignore[arg-type]
        frames = (
            [curve]
            if isinstance(curve, pl.DataFrame)
            else [curve.collect(), curve.collect(engine="streaming")]
        )
        for got in frames:
            assert sorted(set(got["threshold"].to_list())) == (decimals if got.height else [])
            assert_frame_equal(
                got.sort("g", "threshold"),
                core,
                check_column_order=False,
                rel_tol=1e-12,
                abs_tol=1e-12,
            )
    # and both are the brute-force counts of the rule score >= threshold
    for r in core.iter_rows(named=True):
        part = df.filter(pl.col("g").eq_missing(r["g"]) & pl.col("y").is_not_null())
        part = part.filter(pl.col("s").is_not_null())
        if weighted:
            part = part.filter(pl.col("w").is_not_null())
        y, s = part["y"].to_numpy(), part["s"].to_numpy()
        assert r["tp"] == int(((s >= r["threshold"]) & (y == 1)).sum())
        assert r["fp"] == int(((s >= r["threshold"]) & (y == 0)).sum())


# --- groups without counted rows --------------------------------------------------------------


@pytest.mark.parametrize("method", ["aggregate", "sort"])
def test_group_without_counted_rows_is_kept(method: str) -> None:
    df = pl.DataFrame(
        {
            "g": ["a", "a", "a", "b", "b", None],
            "y": [1, 0, 1, None, None, 0],
            "s": [0.9, 0.4, 0.2, 0.5, 0.1, None],
        }
    )
    opts = {"y_true": "y", "y_score": "s", "by": "g", "exact_method": method}
    table = pfm.curve_counts(df, **opts)  # type: ignore[arg-type]
    b = table.filter(pl.col("g") == "b")
    assert b["threshold"].to_list() == [None] and b["n"].item() == 0 and b["n_null"].item() == 2
    assert table["n"].unique(maintain_order=True).len() >= 1
    per_group = table.group_by("g").agg(pl.col("n").first() + pl.col("n_null").first())
    assert per_group["n"].sum() == df.height  # every row reconciles
    summ = pfm.curve_summaries(df, **opts)  # type: ignore[arg-type]
    assert summ["g"].unique().sort(nulls_last=True).to_list() == ["a", "b", None]
    empty = summ.filter(pl.col("g") == "b")
    assert empty["value"].null_count() == 3 and empty["n_null"].to_list() == [2, 2, 2]
    assert empty["support"].to_list() == [0, 0, 0]
    roc = pfm.roc_curve(table)
    assert set(roc["g"].to_list()) == {"a"}  # no point for a group without counted rows
    pooled = pfm.pooled_curve(table)
    assert pooled["threshold"].null_count() == 0 and pooled["n_null"][0] == 3
    assert_frame_equal(pooled, pfm.curve_counts(df, y_true="y", y_score="s", exact_method=method))  # type: ignore[arg-type]
    lazy = pfm.curve_summaries(df.lazy(), **opts).collect(engine="streaming")  # type: ignore[arg-type]
    assert_frame_equal(lazy, summ)


def test_summary_disparities_comparisons_schema() -> None:
    df = frame(17)
    table = pfm.curve_counts(df, y_true="y", y_score="s", by="g", weight="w")
    d = pfm.summary_disparities(table, reference="a")
    assert d.columns[:2] == ["g", "metric"]
    assert {"value", "support", "n", "n_null", "n_w", "reference", "is_reference"} <= set(d.columns)
    assert d.filter(pl.col("g") == "a")["is_reference"].all()
    assert d.filter(pl.col("g") == "a")["difference"].to_list() == [0.0, 0.0, 0.0]
    assert d["reference"].unique().to_list() == ['g="a"']
    summ = pfm.curve_summaries(table)
    assert_frame_equal(d.select(summ.columns), summ)
    wide = pfm.summary_disparities(table, reference="a", wide=True)
    assert "roc_auc_difference" in wide.columns and wide.height == 5
    largest = pfm.summary_disparities(table, reference="largest", summaries="roc_auc")
    assert largest.filter(pl.col("is_reference"))["g"].to_list() == ["a"]
    with pytest.raises(InvalidOptionError, match="rest"):
        pfm.summary_disparities(table, reference="rest")


@pytest.mark.parametrize("test_ratio", ["pooled", "per_group"])
@pytest.mark.parametrize("lazy", [False, True])
def test_deployment_corrected_pr_curve_agrees_with_deployment_counts(
    test_ratio: str, lazy: bool
) -> None:
    """pr_curve's deployment correction is deployment_counts' (same option, same default):
    on a grid every group has every threshold, so precision at each threshold must equal the
    precision of the corrected count table."""
    rng = np.random.default_rng(11)
    n = 3000
    g = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    y = rng.random(n) < np.select([g == "a", g == "b"], [0.2, 0.5], 0.35)
    s = np.clip(np.round(rng.normal(0.35 + 0.3 * y, 0.2), 2), 0, 1)
    df = pl.DataFrame({"g": g, "y": y, "s": s})
    table = pfm.curve_counts(df, y_true="y", y_score="s", by="g", mode="grid", bins=20)
    src = table.lazy() if lazy else table
    curve = pfm.pr_curve(
        src,
        deploy_positive_rate=0.05,
        test_ratio=test_ratio,
        anchor=False,  # type: ignore[arg-type]
    )
    curve = curve.collect() if isinstance(curve, pl.LazyFrame) else curve
    corrected = pfm.deployment_counts(
        table,
        deploy_positive_rate=0.05,
        by="g",
        test_ratio=test_ratio,  # type: ignore[arg-type]
    )
    want = pfm.metrics_from_counts(corrected, metrics="precision", by="g").select(
        "g", "threshold", pl.col("value").alias("precision")
    )
    both = curve.join(want, on=["g", "threshold"], suffix="_want")
    assert both.height == curve.height
    diff = (both["precision"] - both["precision_want"]).abs().max()
    assert diff is not None and float(diff) < 1e-12  # type: ignore[arg-type]
    if test_ratio == "pooled":  # one factor for every group: the groups' base rates are kept
        per_group = pfm.pr_curve(
            table, deploy_positive_rate=0.05, test_ratio="per_group", anchor=False
        )
        assert not per_group["precision"].equals(curve["precision"])
    with pytest.raises(pfm.FairMetricsError, match="test_ratio"):
        pfm.pr_curve(table, deploy_positive_rate=0.05, test_ratio="overall")  # type: ignore[arg-type]
