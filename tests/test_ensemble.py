"""Ensemble stability and uncertainty metrics against a brute-force NumPy reference.

The reference below shares no code with the package: an explicit model-pair loop for jitter,
per-element entropy loops with ``math.log``, ``np.percentile`` for the IQR, ``np.std`` for the
spread. The examples of docs/stability.md run in tests/test_docs.py.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import re
import struct
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_fairmetrics as pfm
from polars_fairmetrics.ensemble import (
    ENSEMBLE_METRICS,
    _sorting_network,
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
    votes = [(x >= 0.5) if convention == "half_up" else (x > 0.5) for x in p]
    k = sum(votes)
    pairs = list(itertools.combinations(range(m), 2))
    jitter = (sum(votes[i] != votes[j] for i, j in pairs) / len(pairs)) if pairs else None
    mean = float(np.mean(p))
    ale = sum(ref_entropy(float(x), base) for x in p) / m
    ovr = ref_entropy(mean, base)
    var = float(np.var(p, ddof=ddof)) if m > ddof else None
    return {
        "n_models": m,
        "ensemble_label": (mean >= 0.5) if convention == "half_up" else (mean > 0.5),
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


def random_ensemble(
    rng: np.random.Generator, n: int, m: int, *, missing: float = 0.0, grid: bool = False
) -> np.ndarray:
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
    return pl.DataFrame(
        {
            "row": np.arange(n),
            "g": rng.choice(np.array(["a", "b", "c"]), n),
            "y": rng.integers(0, 2, n),
            "w": rng.choice(np.array([0.0, 0.5, 1.0, 2.0]), n),
            **cols,
        }
    )


def to_list(wide: pl.DataFrame, m: int) -> pl.DataFrame:
    return wide.select(
        "row", "g", "y", "w", pl.concat_list([f"p{j}" for j in range(m)]).alias("probs")
    )


def to_long(wide: pl.DataFrame, m: int) -> pl.DataFrame:
    return wide.unpivot(
        index=["row", "g", "y", "w"],
        on=[f"p{j}" for j in range(m)],
        variable_name="model",
        value_name="p",
    )


def layouts(wide: pl.DataFrame, m: int) -> dict[str, tuple[pl.DataFrame, dict]]:
    return {
        "wide": (wide, {"models": [f"p{j}" for j in range(m)]}),
        "list": (to_list(wide, m), {"list_col": "probs"}),
        "long": (to_long(wide, m), {"row_id": "row", "model_col": "model", "prob_col": "p"}),
    }


def close(a: object, b: object, tol: float = 1e-9) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    return math.isclose(float(a), float(b), rel_tol=tol, abs_tol=tol)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------- per row

CASES = [(1, 1), (1, 2), (5, 2), (40, 3), (60, 7), (30, 20), (8, 1)]


@pytest.mark.parametrize("convention", ["half_up", "virny"])
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
    half_up = ensemble_sample_metrics(df, models=["p1", "p2", "p3"])
    virny = ensemble_sample_metrics(df, models=["p1", "p2", "p3"], convention="virny")
    assert half_up["label_stability"].item() == 1.0 and half_up["jitter"].item() == 0.0
    assert virny["label_stability"].item() == pytest.approx(1 / 3)
    assert virny["jitter"].item() == pytest.approx(2 / 3)
    half = pl.DataFrame({"p1": [0.5], "p2": [0.5]})
    assert ensemble_labels(half, models=["p1", "p2"])["ensemble_label"].item() is True
    assert (
        ensemble_labels(half, models=["p1", "p2"], convention="virny")["ensemble_label"].item()
        is False
    )


def test_ddof_zero_and_row_without_predictions() -> None:
    df = pl.DataFrame(
        {"p1": [0.2, None], "p2": [0.6, None]}, schema={"p1": pl.Float64, "p2": pl.Float64}
    )
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
    got = ensemble_group_metrics(
        lf, row_id="row", model_col="model", prob_col="p", by="g", y_true="y"
    )
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
    rows = [ref_row(probs[i], "half_up") for i in range(n)]
    g = wide["g"].to_numpy()
    w = wide["w"].to_numpy() if weighted else np.ones(n)
    out = ensemble_disparities(
        wide, models=models, by="g", reference=reference, weight="w" if weighted else None
    )
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
    churns = [
        Fraction(int(np.sum(labels[:, i] != labels[:, j])), n)
        for i, j in itertools.combinations(range(m), 2)
    ]
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
    assert_frame_equal(
        both.select("g", "h", pl.col("value").alias("label_stability")), want, abs_tol=1e-12
    )
    overall = ensemble_group_metrics(wide, models=models, metrics="label_stability")
    assert overall["value"].item() == pytest.approx(per_row["label_stability"].mean())


def test_confusion_metrics_from_ensemble_label() -> None:
    rng = np.random.default_rng(9)
    n, m = 150, 5
    probs = random_ensemble(rng, n, m)
    wide = to_wide(probs, rng)
    models = [f"p{j}" for j in range(m)]
    out = ensemble_group_metrics(
        wide,
        models=models,
        y_true="y",
        by="g",
        metrics=[],
        confusion_metrics=["tpr", "selection_rate"],
    )
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
    disp = ensemble_disparities(
        wide,
        models=models,
        y_true="y",
        by="g",
        reference="a",
        metrics=[],
        confusion_metrics="selection_rate",
    )
    core = pfm.disparities(
        ensemble_labels(wide, models=models),
        y_true="y",
        y_pred="ensemble_label",
        by="g",
        reference="a",
        metrics="selection_rate",
    )
    assert disp["ratio"].to_list() == pytest.approx(core["ratio"].to_list(), rel=1e-12)


def test_bootstrap_multiplicity_weight_equals_repeated_rows() -> None:
    rng = np.random.default_rng(4)
    probs = random_ensemble(rng, 50, 3)
    wide = to_wide(probs, rng).with_columns(mult=pl.Series(rng.integers(0, 4, 50)))
    models = ["p0", "p1", "p2"]
    weighted = ensemble_group_metrics(wide, models=models, by="g", weight="mult")
    repeated = wide.select(pl.all().repeat_by("mult").explode()).drop_nulls("mult")
    plain = ensemble_group_metrics(repeated, models=models, by="g")
    assert_frame_equal(
        weighted.drop("support", "n", "n_null", "n_w"),
        plain.drop("support", "n", "n_null"),
        abs_tol=1e-12,
    )


def test_partition_by_replicate() -> None:
    rng = np.random.default_rng(6)
    probs = random_ensemble(rng, 60, 3)
    wide = to_wide(probs, rng)
    stacked = pl.concat([wide.with_columns(replicate=pl.lit(r)) for r in range(3)])
    out = ensemble_disparities(
        stacked,
        models=["p0", "p1", "p2"],
        by="g",
        reference="rest",
        partition_by="replicate",
        metrics="jitter",
    )
    single = ensemble_disparities(
        wide, models=["p0", "p1", "p2"], by="g", reference="rest", metrics="jitter"
    )
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
    with pytest.raises(pfm.InvalidOptionError, match="use 'half_up' or 'virny'"):
        ensemble_sample_metrics(df, models=["p1"], convention="half-up")  # type: ignore[arg-type]
    ok = df.with_columns(p1=pl.lit(0.4))
    with pytest.raises(pfm.ReferenceGroupError, match="'z'"):
        ensemble_disparities(ok, models=["p1", "p2"], by="g", reference="z")
    with pytest.raises(pfm.InvalidWeightError, match="'w'"):
        ensemble_group_metrics(ok.with_columns(w=pl.lit(-1.0)), models=["p1", "p2"], weight="w")
    with pytest.raises(pfm.InvalidOptionError, match="unknown ensemble metric"):
        ensemble_group_metrics(ok, models=["p1", "p2"], metrics="jiter")


def test_lazy_schema_without_scan() -> None:
    lf = pl.LazyFrame({"g": ["a"], "y": [1], "p1": [0.3], "p2": [0.8]})
    out = ensemble_disparities(lf, models=["p1", "p2"], by="g", y_true="y", convention="virny")
    assert isinstance(out, pl.LazyFrame)
    assert out.collect_schema().names() == [
        "g",
        "metric",
        "value",
        "support",
        "n",
        "n_null",
        "reference",
        "is_reference",
        "reference_value",
        "difference",
        "ratio",
    ]
    assert out.collect()["reference"].unique().to_list() == ["rest"]


def test_list_with_empty_and_null_lists() -> None:
    df = pl.DataFrame(
        {"x": [[0.1, None, 0.3], [], None, [0.5], [0.2, 0.4, 0.6, 0.8]]},
        schema={"x": pl.List(pl.Float64)},
    )
    out = ensemble_sample_metrics(df, list_col="x")
    assert out["n_models"].to_list() == [2, 0, 0, 1, 4]
    want = [
        0.1,
        None,
        None,
        0.0,
        float(np.percentile([0.2, 0.4, 0.6, 0.8], 75) - np.percentile([0.2, 0.4, 0.6, 0.8], 25)),
    ]
    assert all(close(a, b) for a, b in zip(out["iqr_probability"].to_list(), want, strict=True))
    assert out["jitter"].to_list()[1:4] == [None, None, None]


def test_namespaces_delegate() -> None:
    df = pl.DataFrame({"g": ["a", "b"], "y": [1, 0], "p1": [0.9, 0.2], "p2": [0.4, 0.3]})
    got = df.lazy().fair.ensemble_group_metrics(models=["p1", "p2"], by="g", y_true="y")
    assert_frame_equal(
        got.collect(), ensemble_group_metrics(df, models=["p1", "p2"], by="g", y_true="y")
    )
    assert df.fair.ensemble_disparities(models=["p1", "p2"], by="g", y_true="y").height == 52
    assert df.fair.ensemble_sample_metrics(models=["p1", "p2"])["jitter"].to_list() == [1.0, 0.0]
    assert df.fair.ensemble_labels(models=["p1", "p2"])["ensemble_label"].to_list() == [True, False]


# ------------------------------------------------------------------------------- order of models
#
# Issue: the ensemble label at a mean of exactly 0.5 depended on the order in which the models'
# probabilities were summed. Every statistic is now computed from the sorted probabilities, so
# permuting the models or changing the layout changes no bit of any output.


def bits(frame: pl.DataFrame) -> list[tuple[object, ...]]:
    """The rows of ``frame`` with every float written as its IEEE-754 bit pattern."""
    out = []
    for row in frame.iter_rows():
        out.append(tuple(struct.pack("<d", v).hex() if isinstance(v, float) else v for v in row))
    return out


def long_of(probs: np.ndarray, order: np.ndarray, rng: np.random.Generator) -> pl.DataFrame:
    """Long layout of an ensemble (NaN = no record or a null record), records shuffled."""
    n = probs.shape[0]
    rows, models, ps = [], [], []
    for i in range(n):
        for k, j in enumerate(order):
            v = probs[i, j]
            if np.isnan(v) and k > 0 and rng.random() < 0.5:
                continue  # a model that did not predict the row: no record, or a null record
            rows.append(i)
            models.append(f"m{j}")
            ps.append(None if np.isnan(v) else float(v))
    frame = pl.DataFrame(
        {"row": rows, "model": models, "p": ps},
        schema={"row": pl.Int64, "model": pl.String, "p": pl.Float64},
    )
    return frame.sample(fraction=1.0, shuffle=True, seed=int(rng.integers(2**31)))


def all_layouts(
    probs: np.ndarray, rng: np.random.Generator
) -> list[tuple[str, pl.DataFrame, dict]]:
    """The same ensemble in every layout, each with its own random order of the models."""
    n, m = probs.shape
    out = []
    for k in range(2):
        order = rng.permutation(m)
        cols = {f"q{j}": pl.Series(probs[:, j]).fill_nan(None) for j in order}
        wide = pl.DataFrame({"row": np.arange(n), **cols})
        out.append((f"wide{k}", wide, {"models": list(cols)}))
        lists = [
            [None if np.isnan(probs[i, j]) else float(probs[i, j]) for j in order] for i in range(n)
        ]
        lst = pl.DataFrame(
            {"row": np.arange(n), "probs": lists},
            schema={"row": pl.Int64, "probs": pl.List(pl.Float64)},
        )
        out.append((f"list{k}", lst, {"list_col": "probs"}))
        out.append(
            (
                f"long{k}",
                long_of(probs, order, rng),
                {"row_id": "row", "model_col": "model", "prob_col": "p"},
            )
        )
    return out


TIE = [0.001, 0.951, 0.723, 0.325]


def test_issue_tie_example_every_order_and_layout() -> None:
    """[0.001, 0.951, 0.723, 0.325]: 0 as given, 1 reversed before the fix."""
    seen: dict[str, set[object]] = {"half_up": set(), "virny": set(), "mean": set()}
    for perm in itertools.permutations(range(4)):
        probs = np.array([[TIE[j] for j in perm]])
        rng = np.random.default_rng(sum(perm))
        for _, frame, spec in all_layouts(probs, rng):
            for conv in ("half_up", "virny"):
                lab = ensemble_labels(frame.lazy(), convention=conv, **spec).collect()
                seen[conv].add(lab["ensemble_label"].item())
                seen["mean"].add(struct.pack("<d", lab["mean_probability"].item()))
    assert seen["half_up"] == {True} and seen["virny"] == {False}
    assert len(seen["mean"]) == 1


@st.composite
def ensembles(draw: st.DrawFn) -> np.ndarray:
    """Small ensembles rich in ties: dyadic values, values whose decimal mean is exactly 0.5,
    zeros of both signs, ones, repeated values and missing predictions (NaN)."""
    n = draw(st.integers(1, 12))
    m = draw(st.integers(1, 9))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["uniform", "grid", "halves", "specials"]))
    if kind == "grid":
        probs = rng.choice(np.array([0.0, 0.125, 0.25, 0.5, 0.75, 1.0]), size=(n, m))
    elif kind == "halves":
        # pairs symmetric around 0.5 (decimal mean exactly 0.5), in decimal steps
        probs = np.round(rng.random((n, m)), 3)
        half = m // 2
        probs[:, half : 2 * half] = np.round(1.0 - probs[:, :half], 3)
        if m % 2:
            probs[:, -1] = 0.5
    elif kind == "specials":
        probs = rng.choice(np.array([0.0, -0.0, 1.0, 0.5, 0.1, 0.7, 0.2]), size=(n, m))
    else:
        probs = rng.random((n, m))
    if draw(st.booleans()):
        probs[rng.random((n, m)) < 0.2] = np.nan
    return probs


@settings(max_examples=max(20, settings().max_examples // 2))
@given(probs=ensembles(), data=st.data())
def test_every_permutation_and_layout_gives_identical_bits(
    probs: np.ndarray, data: st.DataObject
) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    engine = data.draw(st.sampled_from(["in-memory", "streaming"]))
    results: dict[str, list[tuple[object, ...]]] = {}
    for name, frame, spec in all_layouts(probs, rng):
        for conv in ("half_up", "virny"):
            out = (
                ensemble_sample_metrics(frame.lazy(), keep=["row"], convention=conv, **spec)
                .collect(engine=engine)
                .sort("row")
            )
            results[f"{name}-{conv}"] = bits(out)
    for conv in ("half_up", "virny"):
        want = results[f"wide0-{conv}"]
        for key, got in results.items():
            if key.endswith(conv):
                assert got == want, key


def test_negative_zero_is_zero() -> None:
    """−0.0 and +0.0 are equal for sorting: their order must not leak into any output bit."""
    outs = set()
    for probs in ([[-0.0, 0.0, 0.0]], [[0.0, -0.0, 0.0]], [[0.0, 0.0, -0.0]]):
        for _, frame, spec in all_layouts(np.array(probs), np.random.default_rng(0)):
            out = ensemble_sample_metrics(frame, keep=["row"], **spec)
            outs.add(tuple(bits(out)))
    assert len(outs) == 1


def test_group_results_identical_across_orders_and_layouts() -> None:
    rng = np.random.default_rng(21)
    n, m = 400, 6
    probs = random_ensemble(rng, n, m, missing=0.05, grid=False)
    probs[:40] = np.array([*TIE, 0.5, 0.5])  # exact decimal ties
    wide = to_wide(probs, rng)
    base = wide.select("row", "g", "y", "w")
    outs = {}
    for name, frame, spec in all_layouts(probs, rng):
        frame = frame.join(base, on="row") if "row" in frame.columns else frame
        for conv in ("half_up", "virny"):
            got = ensemble_group_metrics(
                frame.lazy(), by="g", y_true="y", weight="w", convention=conv, **spec
            ).collect()
            outs[(name, conv)] = got
    for (name, conv), got in outs.items():
        want = outs[("wide0", conv)]
        confusion = pl.col("metric").is_in(list(pfm.METRICS))
        # labels, hence every count and confusion metric: bit for bit
        assert bits(got.filter(confusion)) == bits(want.filter(confusion)), name
        # ensemble means: the same per-row values summed over rows (row order may differ)
        assert_frame_equal(
            got.filter(~confusion), want.filter(~confusion), rel_tol=1e-13, abs_tol=1e-15
        )


# ------------------------------------------------------------------------------- sorting, IQR


def test_sorting_network_zero_one_principle() -> None:
    """A comparator network sorts every input iff it sorts every 0/1 input (Knuth 5.3.4)."""
    for m in range(1, 17):
        inputs = (np.arange(2**m)[:, None] >> np.arange(m)) & 1
        x = inputs.copy()
        for layer in _sorting_network(m):
            for i, j in layer:
                lo, hi = np.minimum(x[:, i], x[:, j]), np.maximum(x[:, i], x[:, j])
                x[:, i], x[:, j] = lo, hi
        assert (np.diff(x, axis=1) >= 0).all(), m
        assert (x.sum(axis=1) == inputs.sum(axis=1)).all()
        for layer in _sorting_network(m):
            touched = [k for pair in layer for k in pair]
            assert len(touched) == len(set(touched))  # one with_columns per layer


@pytest.mark.parametrize("m", [2, 3, 7, 20, 33, 64, 65, 80])
def test_wide_sorting_paths_match_list_layout(m: int) -> None:
    """The network (m <= 64) and the array sort (m > 64) agree with the list layout."""
    rng = np.random.default_rng(m)
    probs = random_ensemble(rng, 50, m, missing=0.1)
    wide = to_wide(probs, rng)
    models = [f"p{j}" for j in range(m)]
    a = ensemble_sample_metrics(wide, models=models, keep=["row"])
    b = ensemble_sample_metrics(to_list(wide, m), list_col="probs", keep=["row"])
    assert bits(a) == bits(b)
    f32 = ensemble_sample_metrics(
        wide.with_columns(pl.col(models).cast(pl.Float32)), models=models, keep=["row"]
    )
    b32 = ensemble_sample_metrics(
        to_list(wide, m).with_columns(pl.col("probs").cast(pl.List(pl.Float32))),
        list_col="probs",
        keep=["row"],
    )
    assert bits(f32) == bits(b32)


@given(
    values=st.lists(
        st.one_of(
            st.floats(0.0, 1.0, allow_nan=False, allow_subnormal=True),
            st.sampled_from([0.0, 0.25, 0.5, 1.0]),
        ),
        min_size=1,
        max_size=41,
    )
)
def test_iqr_is_numpy_quantile_bit_for_bit(values: list[float]) -> None:
    x = np.array(values)
    want = np.quantile(x, 0.75) - np.quantile(x, 0.25)  # NumPy's default: method="linear"
    out = ensemble_sample_metrics(
        pl.DataFrame({"probs": [values]}), list_col="probs", metrics="iqr_probability"
    )
    got = out["iqr_probability"].item()
    assert struct.pack("<d", got) == struct.pack("<d", float(want)), (got, want)


# ------------------------------------------------------------------------------- validation


BAD_VALUES = [-0.1, 1.0000001, float("inf"), float("-inf"), float("nan")]


def _calls(spec: dict) -> list:
    return [
        lambda d: ensemble_sample_metrics(d, **spec),
        lambda d: ensemble_labels(d, **spec),
        lambda d: ensemble_group_metrics(d, by="g", **spec),
        lambda d: ensemble_group_metrics(d, by="g", y_true="y", metrics=[], **spec),
        lambda d: ensemble_disparities(d, by="g", y_true="y", metrics=[], **spec),
        lambda d: ensemble_disparities(d, by="g", metrics="jitter", **spec),
    ]


@pytest.mark.parametrize("bad", BAD_VALUES, ids=str)
@pytest.mark.parametrize("layout", ["wide", "wide32", "list", "long"])
def test_bad_probability_names_column_and_value(bad: float, layout: str) -> None:
    probs = np.array([[0.2, 0.4, 0.6], [0.3, 0.5, 0.7], [0.1, 0.9, 0.8]])
    rng = np.random.default_rng(0)
    wide = to_wide(probs, rng).with_columns(pl.Series("p2", [0.6, bad, 0.8]))
    if layout == "wide32":
        wide = wide.with_columns(pl.col("p0", "p1", "p2").cast(pl.Float32))
    frame, spec = layouts(wide, 3)["wide" if layout == "wide32" else layout]
    column = {"wide": "p2", "wide32": "p2", "list": "probs", "long": "p"}[layout]
    if math.isnan(bad):
        pattern = rf"column '{column}' \(ensemble probability\) has a NaN value"
    else:
        shown = re.escape(repr(float(np.float32(bad)) if layout == "wide32" else bad))
        pattern = rf"column '{column}' \(ensemble probability\) has a value {shown} outside"
    if layout == "long":
        pattern += r".*row id 1"
    for call in _calls(spec):
        with pytest.raises(pfm.InvalidScoreError, match=pattern):
            call(frame)
        lazy = call(frame.lazy())
        for engine in ("in-memory", "streaming"):
            with pytest.raises(pfm.InvalidScoreError, match=pattern):
                lazy.collect(engine=engine)


def test_first_bad_model_column_is_named() -> None:
    df = pl.DataFrame({"g": ["a"], "y": [1], "p1": [0.5], "p2": [-0.5], "p3": [2.0]})
    with pytest.raises(pfm.InvalidScoreError, match=r"'p2'.*-0\.5"):
        ensemble_group_metrics(df, models=["p1", "p2", "p3"], by="g")
    with pytest.raises(pfm.InvalidScoreError, match=r"'p3'.*2\.0"):
        ensemble_group_metrics(df, models=["p1", "p3", "p2"], by="g")


def long_frame() -> pl.DataFrame:
    """Three rows × two models, with per-row columns of several dtypes."""
    return pl.DataFrame(
        {
            "row": [0, 0, 1, 1, 2, 2],
            "model": ["a", "b", "a", "b", "a", "b"],
            "p": [0.1, 0.3, 0.6, 0.8, 0.4, 0.5],
            "g": ["x", "x", "y", "y", "x", "x"],
            "y": [1, 1, 0, 0, 1, 1],
            "w": [1.0, 1.0, 2.0, 2.0, 0.5, 0.5],
            "part": [0, 0, 0, 0, 0, 0],
            "cat": pl.Series(["u", "u", "v", "v", "u", "u"], dtype=pl.Categorical),
            "flag": [True, True, False, False, True, True],
            "day": [dt.date(2024, 1, d) for d in (1, 1, 2, 2, 3, 3)],
            "tags": [[1], [1], [2], [2], [3], [3]],
        }
    )


LONG = {"row_id": "row", "model_col": "model", "prob_col": "p"}

CHANGES = [
    # (column, new value for record 3 (row 1, model b), role, shown values)
    ("g", "z", "group", ("'y'", "'z'")),
    ("g", None, "group", ("'y'", "None")),
    ("y", 1, "y_true", ("0", "1")),
    ("y", None, "y_true", ("0", "None")),
    ("w", 2.5, "weight", ("2.0", "2.5")),
    ("w", float("nan"), "weight", ("nan", "2.0")),
    ("w", None, "weight", ("2.0", "None")),
    ("part", 1, "partition_by", ("0", "1")),
]


def _with_change(column: str, value: object) -> pl.DataFrame:
    frame = long_frame()
    values = frame[column].to_list()
    values[3] = value
    return frame.with_columns(pl.Series(column, values, dtype=frame[column].dtype))


@pytest.mark.parametrize(("column", "value", "role", "shown"), CHANGES)
def test_long_row_inconsistent_across_records(
    column: str, value: object, role: str, shown: tuple[str, str]
) -> None:
    frame = _with_change(column, value)
    pattern = (
        rf"column '{column}' \({role}\) is not the same in every record of row id 1 of the long "
        r"layout: it holds "
    )
    calls = [
        lambda d: ensemble_group_metrics(
            d, by="g", y_true="y", weight="w", partition_by="part", **LONG
        ),
        lambda d: ensemble_group_metrics(
            d, by="g", y_true="y", weight="w", partition_by="part", metrics=[], **LONG
        ),
    ]
    if column != "part":  # (partition_by with confusion disparities: see the disparity engine)
        calls.append(
            lambda d: ensemble_disparities(d, by="g", y_true="y", weight="w", metrics=[], **LONG)
        )
    for call in calls:
        with pytest.raises(pfm.InconsistentInputError, match=pattern) as info:
            call(frame)
        assert all(s in str(info.value) for s in shown), str(info.value)
        for engine in ("in-memory", "streaming"):
            with pytest.raises(pfm.InconsistentInputError, match=pattern):
                call(frame.lazy()).collect(engine=engine)


@pytest.mark.parametrize(
    ("column", "value"),
    [("cat", "w"), ("flag", True), ("day", dt.date(2024, 5, 5)), ("tags", [9]), ("tags", None)],
)
def test_long_kept_column_inconsistent(column: str, value: object) -> None:
    frame = _with_change(column, value)
    pattern = rf"column '{column}' \(keep\) is not the same in every record of row id 1"
    with pytest.raises(pfm.InconsistentInputError, match=pattern):
        ensemble_sample_metrics(frame, keep=[column], **LONG)
    for engine in ("in-memory", "streaming"):
        with pytest.raises(pfm.InconsistentInputError, match=pattern):
            ensemble_labels(frame.lazy(), keep=[column], **LONG).collect(engine=engine)


def test_long_consistent_columns_pass_and_keep_their_value() -> None:
    frame = long_frame().with_columns(pl.lit(float("nan")).alias("w"))
    keep = ["g", "y", "part", "cat", "flag", "day", "tags", "w"]
    out = ensemble_sample_metrics(frame, keep=keep, **LONG)
    assert (
        out.select(keep[:-1]).rows()
        == long_frame().select(keep[:-1]).unique(maintain_order=True).rows()
    )
    assert out["w"].is_nan().all()


@pytest.mark.parametrize("model", ["b", None])
def test_long_duplicated_record(model: str | None) -> None:
    frame = long_frame()
    if model is None:  # two records of row 1 with a null model name
        frame = frame.with_columns(
            pl.when(pl.int_range(pl.len()).is_in([2, 3]))
            .then(None)
            .otherwise(pl.col("model"))
            .alias("model")
        )
    else:
        frame = pl.concat([frame, frame[3]])
    pattern = (
        r"column 'model' \(model_col\) has 3 records but 2 distinct models for row id 1"
        if model is not None
        else r"column 'model' \(model_col\) has 2 records but 1 distinct models for row id 1"
    )
    for call in (
        lambda d: ensemble_sample_metrics(d, **LONG),
        lambda d: ensemble_group_metrics(d, by="g", y_true="y", metrics=[], **LONG),
        lambda d: ensemble_disparities(d, by="g", metrics="jitter", **LONG),
    ):
        with pytest.raises(pfm.InconsistentInputError, match=pattern):
            call(frame)
        for engine in ("in-memory", "streaming"):
            with pytest.raises(pfm.InconsistentInputError, match=pattern):
                call(frame.lazy()).collect(engine=engine)


@given(data=st.data())
def test_long_any_single_changed_record_is_caught(data: st.DataObject) -> None:
    """Change one record's per-row value (or duplicate one record) anywhere: always an error."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    n, m = data.draw(st.integers(1, 8)), data.draw(st.integers(2, 5))
    probs = rng.random((n, m))
    wide = to_wide(probs, rng)
    long = to_long(wide, m).sample(fraction=1.0, shuffle=True, seed=int(rng.integers(1000)))
    spec = {"row_id": "row", "model_col": "model", "prob_col": "p"}
    ensemble_group_metrics(long, by="g", y_true="y", weight="w", **spec)  # consistent: passes
    i = data.draw(st.integers(0, long.height - 1))
    kind = data.draw(st.sampled_from(["g", "y", "w", "duplicate"]))
    if kind == "duplicate":
        bad = pl.concat([long, long[i]])
    else:
        old = long[kind][i]
        new = "zz" if kind == "g" else (1 - old if kind == "y" else old + 1.0)
        values = long[kind].to_list()
        values[i] = new
        bad = long.with_columns(pl.Series(kind, values, dtype=long[kind].dtype))
    with pytest.raises(pfm.InconsistentInputError, match=rf"row id {long['row'][i]}\b"):
        ensemble_group_metrics(bad.lazy(), by="g", y_true="y", weight="w", **spec).collect(
            engine=data.draw(st.sampled_from(["in-memory", "streaming"]))
        )


def test_long_layout_options() -> None:
    frame = long_frame()
    with pytest.raises(pfm.InvalidOptionError, match="model_col="):
        ensemble_sample_metrics(frame, row_id="row", prob_col="p")
    with pytest.raises(pfm.InvalidOptionError, match="three different columns"):
        ensemble_sample_metrics(frame, row_id="row", model_col="row", prob_col="p")
    with pytest.raises(pfm.ColumnNotFoundError, match=r"'mdl' \(model_col\)"):
        ensemble_sample_metrics(frame, row_id="row", model_col="mdl", prob_col="p")
    with pytest.raises(pfm.InvalidOptionError, match="per-record column"):
        ensemble_sample_metrics(frame, keep=["model"], **LONG)
    with pytest.raises(pfm.InvalidOptionError, match=r"named twice in \['p1', 'p1'\]"):
        ensemble_sample_metrics(pl.DataFrame({"p1": [0.1]}), models=["p1", "p1"])


# ------------------------------------------------------------------------------- one pass, native


def test_group_path_has_no_python_udf_and_sorts_once() -> None:
    """Validation is native: the only Python in the plan is the guard on the small aggregated
    table; with y_true the per-row statistics (one sort) are evaluated once."""
    lf = pl.LazyFrame({"g": ["a"], "y": [1], **{f"p{j}": [0.1 * j] for j in range(8)}})
    models = [f"p{j}" for j in range(8)]
    for call in (
        lambda: ensemble_group_metrics(lf, models=models, by="g", y_true="y", weight=None),
        lambda: ensemble_disparities(lf, models=models, by="g", y_true="y"),
    ):
        plan = call().explain()
        assert "python_udf" not in plan
        assert plan.count("arr.concat") == 1, plan.count("arr.concat")
    lst = lf.select("g", "y", pl.concat_list(models).alias("probs"))
    plan = ensemble_group_metrics(lst, list_col="probs", by="g", y_true="y").explain()
    assert "python_udf" not in plan and plan.count("list.sort") == 1
