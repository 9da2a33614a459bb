"""Ensemble stability and uncertainty metrics against a brute-force NumPy reference.

The reference below shares no code with the package: an explicit model-pair loop for jitter,
per-element entropy loops with ``math.log``, ``np.percentile`` for the IQR, ``np.std`` for the
spread. The examples of docs/stability.md run in tests/test_docs.py.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_fairmetrics as pfm
from polars_fairmetrics.ensemble import (
    ENSEMBLE_METRICS,
    ensemble_disparities,
    ensemble_group_metrics,
    ensemble_labels,
    ensemble_sample_metrics,
)

GRID = np.array([0.0, 0.25, 0.5, 0.75, 1.0])


# ------------------------------------------------------------------------------- reference


def ref_entropy(p: float, base: float) -> float:
    out = 0.0
    for x in (p, 1.0 - p):
        if x > 0:
            out -= x * math.log(x) / math.log(base)
    return out


def ref_row(p: np.ndarray, convention: str, ddof: int = 1, base: float = 2.0) -> dict:
    p = p[~np.isnan(p)]
    m = len(p)
    names = list(ENSEMBLE_METRICS)
    if m == 0:
        return {"n_models": 0, "ensemble_label": None, **dict.fromkeys(names)}
    votes = [(x >= 0.5) if convention == "seed" else (x > 0.5) for x in p]
    k = sum(votes)
    pairs = list(itertools.combinations(range(m), 2))
    jitter = (sum(votes[i] != votes[j] for i, j in pairs) / len(pairs)) if pairs else None
    mean = float(np.mean(p))
    ale = sum(ref_entropy(float(x), base) for x in p) / m
    ovr = ref_entropy(mean, base)
    var = float(np.var(p, ddof=ddof)) if m > ddof else None
    return {
        "n_models": m,
        "ensemble_label": (mean >= 0.5) if convention == "seed" else (mean > 0.5),
        "mean_probability": mean,
        "std_probability": math.sqrt(var) if var is not None else None,
        "iqr_probability": float(np.percentile(p, 75) - np.percentile(p, 25)),
        "label_stability": abs(k - (m - k)) / m,
        "jitter": jitter,
        "aleatoric_uncertainty": ale,
        "overall_uncertainty": ovr,
        "epistemic_variance": var,
        "epistemic_mutual_information": ovr - ale,
    }


def random_ensemble(rng: np.random.Generator, n: int, m: int, *, missing: float = 0.0,
                    grid: bool = False) -> np.ndarray:
    if grid:
        probs = rng.choice(GRID, size=(n, m))
    else:
        probs = rng.random((n, m))
        # sprinkle exact 0, 0.5 and 1
        special = rng.random((n, m)) < 0.25
        probs[special] = rng.choice(np.array([0.0, 0.5, 1.0]), size=int(special.sum()))
    if missing:
        probs[rng.random((n, m)) < missing] = np.nan
    return probs


def to_wide(probs: np.ndarray, rng: np.random.Generator) -> pl.DataFrame:
    n, m = probs.shape
    cols = {f"p{j}": pl.Series(f"p{j}", probs[:, j]).fill_nan(None) for j in range(m)}
    return pl.DataFrame({
        "row": np.arange(n),
        "g": rng.choice(np.array(["a", "b", "c"]), n),
        "y": rng.integers(0, 2, n),
        "w": rng.choice(np.array([0.0, 0.5, 1.0, 2.0]), n),
        **cols,
    })


def to_list(wide: pl.DataFrame, m: int) -> pl.DataFrame:
    return wide.select("row", "g", "y", "w",
                       pl.concat_list([f"p{j}" for j in range(m)]).alias("probs"))


def to_long(wide: pl.DataFrame, m: int) -> pl.DataFrame:
    return wide.unpivot(index=["row", "g", "y", "w"], on=[f"p{j}" for j in range(m)],
                        variable_name="model", value_name="p")


def layouts(wide: pl.DataFrame, m: int) -> dict[str, tuple[pl.DataFrame, dict]]:
    return {
        "wide": (wide, {"models": [f"p{j}" for j in range(m)]}),
        "list": (to_list(wide, m), {"list_col": "probs"}),
        "long": (to_long(wide, m), {"row_id": "row", "prob_col": "p"}),
    }


def close(a: object, b: object, tol: float = 1e-9) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    return math.isclose(float(a), float(b), rel_tol=tol, abs_tol=tol)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------- per row

CASES = [(1, 1), (1, 2), (5, 2), (40, 3), (60, 7), (30, 20), (8, 1)]


@pytest.mark.parametrize("convention", ["seed", "virny"])
@pytest.mark.parametrize(("n", "m"), CASES)
@pytest.mark.parametrize("grid", [False, True])
def test_per_row_against_reference(n: int, m: int, convention: str, grid: bool) -> None:
    rng = np.random.default_rng(1000 * n + m + grid)
    probs = random_ensemble(rng, n, m, missing=0.1 if m > 2 else 0.0, grid=grid)
    wide = to_wide(probs, rng)
    expected = [ref_row(probs[i], convention) for i in range(n)]
    for layout, (frame, spec) in layouts(wide, m).items():
        out = ensemble_sample_metrics(frame, convention=convention, keep=["row"], **spec)
        assert out["row"].to_list() == list(range(n)), layout
        for i, row in enumerate(out.iter_rows(named=True)):
            for key, want in expected[i].items():
                assert close(row[key], want), (layout, i, key, row[key], want)


def test_entropy_edges_and_log_base() -> None:
    df = pl.DataFrame({"p1": [0.0, 1.0, 0.5, 0.0], "p2": [0.0, 1.0, 0.5, 1.0]})
    out = ensemble_sample_metrics(df, models=["p1", "p2"])
    assert out["aleatoric_uncertainty"].to_list() == [0.0, 0.0, 1.0, 0.0]
    assert out["overall_uncertainty"].to_list() == [0.0, 0.0, 1.0, 1.0]
    assert out["epistemic_mutual_information"].to_list() == [0.0, 0.0, 0.0, 1.0]
    assert not out.select(pl.all().exclude("ensemble_label").is_nan().any()).row(0)[0]
    nats = ensemble_sample_metrics(df, models=["p1", "p2"], log_base=math.e)
    assert nats["aleatoric_uncertainty"][2] == pytest.approx(math.log(2))


def test_label_rule_at_exactly_half() -> None:
    df = pl.DataFrame({"p1": [0.5], "p2": [0.5], "p3": [0.9]})
    seed = ensemble_sample_metrics(df, models=["p1", "p2", "p3"])
    virny = ensemble_sample_metrics(df, models=["p1", "p2", "p3"], convention="virny")
    assert seed["label_stability"].item() == 1.0 and seed["jitter"].item() == 0.0
    assert virny["label_stability"].item() == pytest.approx(1 / 3)
    assert virny["jitter"].item() == pytest.approx(2 / 3)
    half = pl.DataFrame({"p1": [0.5], "p2": [0.5]})
    assert ensemble_labels(half, models=["p1", "p2"])["ensemble_label"].item() is True
    assert ensemble_labels(half, models=["p1", "p2"],
                           convention="virny")["ensemble_label"].item() is False


def test_ddof_zero_and_row_without_predictions() -> None:
    df = pl.DataFrame({"p1": [0.2, None], "p2": [0.6, None]}, schema={"p1": pl.Float64,
                                                                      "p2": pl.Float64})
    out = ensemble_sample_metrics(df, models=["p1", "p2"], ddof=0)
    assert out["epistemic_variance"][0] == pytest.approx(0.04)
    assert out.row(1, named=True)["n_models"] == 0
    assert all(v is None for k, v in out.row(1, named=True).items() if k != "n_models")


# ------------------------------------------------------------------------------- layouts


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_layouts_identical_and_engines(engine: str) -> None:
    rng = np.random.default_rng(7)
    m = 5
    probs = random_ensemble(rng, 300, m, missing=0.05)
    wide = to_wide(probs, rng)
    results = {}
    for layout, (frame, spec) in layouts(wide, m).items():
        lazy = frame.lazy()
        per_row = ensemble_sample_metrics(lazy, keep=["row", "g"], **spec)
        assert isinstance(per_row, pl.LazyFrame)
        groups = ensemble_group_metrics(lazy, y_true="y", by="g", weight="w", **spec)
        disp = ensemble_disparities(lazy, y_true="y", by="g", reference="rest", **spec)
        results[layout] = [x.collect(engine=engine) for x in (per_row, groups, disp)]
    for layout in ("list", "long"):
        for got, want in zip(results[layout], results["wide"], strict=True):
            assert_frame_equal(got, want, abs_tol=1e-12, check_dtypes=False)


def test_streaming_long_from_parquet(tmp_path: pytest.TempPathFactory) -> None:
    rng = np.random.default_rng(3)
    m = 4
    probs = random_ensemble(rng, 500, m)
    wide = to_wide(probs, rng)
    path = f"{tmp_path}/long.parquet"
    to_long(wide, m).write_parquet(path, row_group_size=256)
    lf = pl.scan_parquet(path)
    got = ensemble_group_metrics(lf, row_id="row", prob_col="p", by="g", y_true="y")
    assert got.collect_schema().names()[:3] == ["g", "metric", "value"]
    want = ensemble_group_metrics(wide, models=[f"p{j}" for j in range(m)], by="g", y_true="y")
    assert_frame_equal(got.collect(engine="streaming"), want, abs_tol=1e-12)


# ------------------------------------------------------------------------------- groups


def ref_group_mean(values: list, weights: np.ndarray, mask: np.ndarray) -> float | None:
    num = den = 0.0
    for v, w, keep in zip(values, weights, mask, strict=True):
        if keep and v is not None:
            num += w * v
            den += w
    return num / den if den != 0 else None


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reference", ["overall", "rest", "b"])
def test_group_means_and_disparities(weighted: bool, reference: str) -> None:
    rng = np.random.default_rng(11 + weighted)
    n, m = 120, 6
    probs = random_ensemble(rng, n, m, missing=0.05)
    wide = to_wide(probs, rng)
    models = [f"p{j}" for j in range(m)]
    rows = [ref_row(probs[i], "seed") for i in range(n)]
    g = wide["g"].to_numpy()
    w = wide["w"].to_numpy() if weighted else np.ones(n)
    out = ensemble_disparities(wide, models=models, by="g", reference=reference,
                               weight="w" if weighted else None)
    for r in out.iter_rows(named=True):
        vals = [row[r["metric"]] for row in rows]
        in_g = g == r["g"]
        ref_mask = {"overall": np.ones(n, bool), "rest": ~in_g, "b": g == "b"}[reference]
        want = ref_group_mean(vals, w, in_g)
        want_ref = ref_group_mean(vals, w, ref_mask)
        assert close(r["value"], want), r
        assert close(r["reference_value"], want_ref), r
        if want is not None and want_ref is not None:
            assert close(r["difference"], want - want_ref)
            assert close(r["ratio"], want / want_ref if want_ref != 0 else None)
        assert r["n"] == sum(1 for v, i in zip(vals, in_g, strict=True) if i and v is not None)


def test_overall_jitter_equals_mean_pairwise_churn_exactly() -> None:
    rng = np.random.default_rng(5)
    n, m = 200, 9
    probs = random_ensemble(rng, n, m)
    wide = to_wide(probs, rng)
    labels = probs >= 0.5
    churns = [Fraction(int(np.sum(labels[:, i] != labels[:, j])), n)
              for i, j in itertools.combinations(range(m), 2)]
    exact = sum(churns, Fraction(0)) / len(churns)
    got = ensemble_group_metrics(wide, models=[f"p{j}" for j in range(m)], metrics="jitter")
    assert got["value"].item() == pytest.approx(float(exact), rel=1e-14, abs=1e-15)
    # and in integers: the vote-count identity sum_rows 2k(m-k) = 2 * sum_pairs disagreements
    k = labels.sum(axis=1)
    assert int(np.sum(k * (m - k))) == sum(
        int(np.sum(labels[:, i] != labels[:, j])) for i, j in itertools.combinations(range(m), 2)
    )


def test_intersections_and_overall() -> None:
    rng = np.random.default_rng(2)
    probs = random_ensemble(rng, 80, 4)
    wide = to_wide(probs, rng).with_columns(h=pl.Series(rng.integers(0, 2, 80)))
    models = [f"p{j}" for j in range(4)]
    both = ensemble_group_metrics(wide, models=models, by=["g", "h"], metrics="label_stability")
    per_row = ensemble_sample_metrics(wide, models=models, keep=["g", "h"])
    want = per_row.group_by("g", "h").agg(pl.col("label_stability").mean()).sort("g", "h")
    assert_frame_equal(both.select("g", "h", pl.col("value").alias("label_stability")), want,
                       abs_tol=1e-12)
    overall = ensemble_group_metrics(wide, models=models, metrics="label_stability")
    assert overall["value"].item() == pytest.approx(per_row["label_stability"].mean())


def test_confusion_metrics_from_ensemble_label() -> None:
    rng = np.random.default_rng(9)
    n, m = 150, 5
    probs = random_ensemble(rng, n, m)
    wide = to_wide(probs, rng)
    models = [f"p{j}" for j in range(m)]
    out = ensemble_group_metrics(wide, models=models, y_true="y", by="g", metrics=[],
                                 confusion_metrics=["tpr", "selection_rate"])
    label = probs.mean(axis=1) >= 0.5
    y = wide["y"].to_numpy() == 1
    g = wide["g"].to_numpy()
    for r in out.iter_rows(named=True):
        sel = g == r["g"]
        if r["metric"] == "true_positive_rate":
            den = np.sum(sel & y)
            want = np.sum(sel & y & label) / den if den else None
        else:
            want = np.mean(label[sel])
        assert close(r["value"], want)
    disp = ensemble_disparities(wide, models=models, y_true="y", by="g", reference="a",
                                metrics=[], confusion_metrics="selection_rate")
    core = pfm.disparities(ensemble_labels(wide, models=models), y_true="y",
                           y_pred="ensemble_label", by="g", reference="a",
                           metrics="selection_rate")
    assert disp["ratio"].to_list() == pytest.approx(core["ratio"].to_list(), rel=1e-12)


def test_bootstrap_multiplicity_weight_equals_repeated_rows() -> None:
    rng = np.random.default_rng(4)
    probs = random_ensemble(rng, 50, 3)
    wide = to_wide(probs, rng).with_columns(mult=pl.Series(rng.integers(0, 4, 50)))
    models = ["p0", "p1", "p2"]
    weighted = ensemble_group_metrics(wide, models=models, by="g", weight="mult")
    repeated = wide.select(pl.all().repeat_by("mult").explode()).drop_nulls("mult")
    plain = ensemble_group_metrics(repeated, models=models, by="g")
    assert_frame_equal(weighted.drop("n", "n_null", "n_w"), plain.drop("n", "n_null"),
                       abs_tol=1e-12)


def test_partition_by_replicate() -> None:
    rng = np.random.default_rng(6)
    probs = random_ensemble(rng, 60, 3)
    wide = to_wide(probs, rng)
    stacked = pl.concat([wide.with_columns(replicate=pl.lit(r)) for r in range(3)])
    out = ensemble_disparities(stacked, models=["p0", "p1", "p2"], by="g", reference="rest",
                               partition_by="replicate", metrics="jitter")
    single = ensemble_disparities(wide, models=["p0", "p1", "p2"], by="g", reference="rest",
                                  metrics="jitter")
    for r in range(3):
        part = out.filter(pl.col("replicate") == r).drop("replicate")
        assert_frame_equal(part, single)


# ------------------------------------------------------------------------------- errors


def test_errors() -> None:
    df = pl.DataFrame({"g": ["a", "b"], "p1": [0.2, 1.2], "p2": [0.1, 0.3]})
    with pytest.raises(pfm.InvalidScoreError, match=r"'p1'.*1\.2"):
        ensemble_sample_metrics(df, models=["p1", "p2"], metrics="std_probability")
    with pytest.raises(pfm.InvalidScoreError, match="NaN"):
        ensemble_group_metrics(df.with_columns(p1=pl.lit(float("nan"))), models=["p1", "p2"])
    lst = df.select(pl.concat_list("p1", "p2").alias("probs"))
    with pytest.raises(pfm.InvalidScoreError, match="'probs'"):
        ensemble_sample_metrics(lst, list_col="probs")
    with pytest.raises(pfm.ColumnNotFoundError, match="'p9'"):
        ensemble_sample_metrics(df.lazy(), models=["p1", "p9"])
    with pytest.raises(pfm.InvalidOptionError):
        ensemble_sample_metrics(df, models=["p1"], list_col="p2")
    with pytest.raises(pfm.InvalidOptionError, match="convention"):
        ensemble_sample_metrics(df, models=["p1"], convention="other")  # type: ignore[arg-type]
    ok = df.with_columns(p1=pl.lit(0.4))
    with pytest.raises(pfm.ReferenceGroupError, match="'z'"):
        ensemble_disparities(ok, models=["p1", "p2"], by="g", reference="z")
    with pytest.raises(pfm.InvalidWeightError, match="'w'"):
        ensemble_group_metrics(ok.with_columns(w=pl.lit(-1.0)), models=["p1", "p2"], weight="w")
    with pytest.raises(pfm.InvalidOptionError, match="unknown ensemble metric"):
        ensemble_group_metrics(ok, models=["p1", "p2"], metrics="jiter")


def test_lazy_schema_without_scan() -> None:
    lf = pl.LazyFrame({"g": ["a"], "y": [1], "p1": [0.3], "p2": [0.8]})
    out = ensemble_disparities(lf, models=["p1", "p2"], by="g", y_true="y",
                               convention="virny")
    assert isinstance(out, pl.LazyFrame)
    assert out.collect_schema().names() == ["g", "metric", "value", "reference_value",
                                            "difference", "ratio", "n", "reference"]
    assert out.collect()["reference"].unique().to_list() == ["rest"]


def test_list_with_empty_and_null_lists() -> None:
    df = pl.DataFrame({"x": [[0.1, None, 0.3], [], None, [0.5], [0.2, 0.4, 0.6, 0.8]]},
                      schema={"x": pl.List(pl.Float64)})
    out = ensemble_sample_metrics(df, list_col="x")
    assert out["n_models"].to_list() == [2, 0, 0, 1, 4]
    want = [0.1, None, None, 0.0, float(np.percentile([0.2, 0.4, 0.6, 0.8], 75)
                                        - np.percentile([0.2, 0.4, 0.6, 0.8], 25))]
    assert all(close(a, b) for a, b in zip(out["iqr_probability"].to_list(), want, strict=True))
    assert out["jitter"].to_list()[1:4] == [None, None, None]


def test_namespaces_delegate() -> None:
    df = pl.DataFrame({"g": ["a", "b"], "y": [1, 0], "p1": [0.9, 0.2], "p2": [0.4, 0.3]})
    got = df.lazy().fair.ensemble_group_metrics(models=["p1", "p2"], by="g", y_true="y")
    assert_frame_equal(got.collect(), ensemble_group_metrics(df, models=["p1", "p2"], by="g",
                                                             y_true="y"))
    assert df.fair.ensemble_disparities(models=["p1", "p2"], by="g", y_true="y").height == 52
    assert df.fair.ensemble_sample_metrics(models=["p1", "p2"])["jitter"].to_list() == [1.0, 0.0]
    assert df.fair.ensemble_labels(models=["p1", "p2"])["ensemble_label"].to_list() == [True,
                                                                                         False]
