"""Several models side by side: oracles written here in numpy, sharing no code with the package.

- per-model values equal the single-model functions (``disparities``) on the same rows;
- the joint count table against a numpy cross-tabulation; its marginals against per-model counts;
- with one model, the paired bootstrap is ``bootstrap_metrics`` (same seed, same draws);
- joint-cell resampling against brute-force row resampling in numpy: the mean and variance of the
  difference of two models' disparities agree within Monte Carlo error;
- the paired interval of a difference is narrower than the unpaired one for correlated models;
- edge cases: a model with no positive prediction (nulls, not NaN), one group, weights, nulls in
  one model's predictions, the long layout, LazyFrame with both engines, bad input.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_fairmetrics as pfm
from polars_fairmetrics.exceptions import (
    ColumnNotFoundError,
    InconsistentInputError,
    InvalidLabelError,
    InvalidOptionError,
)
from polars_fairmetrics.models import compare_models, compare_models_long, joint_counts


def _frame(n: int = 600, seed: int = 1, flip: float = 0.1) -> pl.DataFrame:
    """Two correlated models: ``b`` is ``a`` with a share ``flip`` of its predictions flipped."""
    rng = np.random.default_rng(seed)
    g = rng.choice(["x", "y", "z"], size=n, p=[0.5, 0.3, 0.2])
    y = rng.random(n) < np.where(g == "x", 0.4, 0.55)
    a = np.where(rng.random(n) < 0.8, y, ~y)
    b = np.where(rng.random(n) < flip, ~a, a)
    c = rng.random(n) < 0.5
    w = rng.gamma(2.0, 1.0, size=n)
    return pl.DataFrame({"g": g, "y": y.astype(np.int64), "a": a, "b": b, "c": c, "w": w})


OPTS: dict[str, Any] = {"y_true": "y", "by": "g"}


def _single(df: pl.DataFrame, col: str, **kw: Any) -> pl.DataFrame:
    return pfm.disparities(df, y_pred=col, **OPTS, **kw)


@pytest.mark.parametrize("reference", ["overall", "rest", "x"])
@pytest.mark.parametrize("weighted", [False, True])
def test_per_model_values_equal_single_model_functions(reference: str, weighted: bool) -> None:
    df = _frame()
    weight = "w" if weighted else None
    out = compare_models(
        df, predictions=["a", "b", "c"], weight=weight, reference=reference, **OPTS
    )
    assert out.columns[:3] == ["g", "model", "metric"]
    for col in ("a", "b", "c"):
        mine = out.filter(pl.col("model") == col).drop("model")
        want = _single(df, col, weight=weight, reference=reference)
        assert_frame_equal(mine, want, check_exact=False, abs_tol=1e-12)


def test_mapping_names_models() -> None:
    df = _frame()
    out = compare_models(df, predictions={"old": "a", "new": "b"}, metrics="tpr", **OPTS)
    assert sorted(set(out["model"])) == ["new", "old"]
    want = _single(df, "b", metrics="tpr")["value"].to_list()
    assert out.filter(pl.col("model") == "new")["value"].to_list() == want


def test_joint_counts_against_numpy_crosstab() -> None:
    df = _frame(200)
    t = joint_counts(df, y_true="y", predictions=["a", "b", "c"], by="g")
    g, y, a, b, c = (df[k].to_numpy() for k in ("g", "y", "a", "b", "c"))
    assert t.height <= 3 * 4
    for row in t.iter_rows(named=True):
        sel = (g == row["g"]) & (b == row["_pfm_joint1"]) & (c == row["_pfm_joint2"])
        assert row["tp"] == int((sel & (y == 1) & a).sum())
        assert row["fp"] == int((sel & (y == 0) & a).sum())
        assert row["tn"] == int((sel & (y == 0) & ~a).sum())
        assert row["fn"] == int((sel & (y == 1) & ~a).sum())
    assert int(t["n"].sum()) == df.height


def test_one_model_intervals_are_bootstrap_metrics() -> None:
    """With one model the joint table is the count table: the same seed gives the same draws."""
    df = _frame(300)
    for weight, stratify in ((None, False), ("w", True)):
        mine = compare_models(
            df,
            predictions=["a"],
            weight=weight,
            reference="x",
            intervals=200,
            seed=7,
            stratify=stratify,
            **OPTS,
        ).drop("model")
        want = pfm.bootstrap_metrics(
            df,
            y_pred="a",
            weight=weight,
            reference="x",
            n_resamples=200,
            seed=7,
            stratify=stratify,
            **OPTS,
        )
        assert_frame_equal(mine, want, check_exact=False, abs_tol=1e-12)


def test_joint_resampling_matches_row_resampling_in_distribution() -> None:
    """Brute force: resample rows in numpy and compute the gap of the two models' FPR
    disparities; the paired count-level bootstrap has the same mean and variance (MC error)."""
    df = _frame(400, seed=3, flip=0.15)
    y, g, a, b = (df[k].to_numpy() for k in ("y", "g", "a", "b"))
    rng = np.random.default_rng(11)
    n_b = 2000

    def fpr(pred: Any, y_s: Any, sel: Any) -> float:
        neg = sel & (y_s == 0)
        return float(pred[neg].sum() / neg.sum())

    gaps = []
    for _ in range(n_b):
        i = rng.integers(0, y.size, size=y.size)
        ys, gs, as_, bs = y[i], g[i], a[i], b[i]
        ins, rest = gs == "y", gs != "y"
        da = fpr(as_, ys, ins) - fpr(as_, ys, rest)
        db = fpr(bs, ys, ins) - fpr(bs, ys, rest)
        gaps.append(da - db)
    brute = np.asarray(gaps)
    from polars_fairmetrics.bootstrap import _resample, _table_layout
    from polars_fairmetrics.models import _marginals

    joint = joint_counts(df, y_true="y", predictions=["a", "b"], by="g")
    reps = _resample(joint, _table_layout(joint.columns), [], n_b, 5, False, False)
    per_model = _marginals(reps, ["g"], ["a", "b"])
    d = pfm.disparities(per_model, by="g", metrics="fpr", reference="rest").filter(
        pl.col("g") == "y"
    )
    wide = d.pivot(on="model", index="replicate", values="difference").sort("replicate")
    mine = (wide["a"] - wide["b"]).to_numpy()
    se = brute.std(ddof=1)
    # means within 4 standard errors of the difference of two means; variances within 15 %
    assert abs(mine.mean() - brute.mean()) < 4 * se * np.sqrt(2 / n_b)
    assert 0.85 < mine.var(ddof=1) / brute.var(ddof=1) < 1.15
    # each model's marginal replicates have the distribution of that model's own count-level
    # bootstrap (resample_counts of its confusion counts), here in mean and variance
    single = pfm.resample_counts(
        pfm.confusion_counts(df, y_true="y", y_pred="a", by="g"), n_resamples=n_b, seed=9
    )
    own = (
        pfm.disparities(single, by="g", metrics="fpr", reference="rest")
        .filter(pl.col("g") == "y")["difference"]
        .to_numpy()
    )
    marginal = wide["a"].to_numpy()
    assert abs(marginal.mean() - own.mean()) < 4 * own.std(ddof=1) * np.sqrt(2 / n_b)
    assert 0.85 < marginal.var(ddof=1) / own.var(ddof=1) < 1.15
    # the marginals of every replicate are that model's own counts: same totals per replicate
    tot = per_model.group_by("replicate", "model").agg(pl.col("n").sum())
    assert set(tot["n"].to_list()) == {df.height}


def test_paired_interval_narrower_than_unpaired() -> None:
    df = _frame(800, seed=5, flip=0.03)
    out = compare_models(
        df,
        predictions=["a", "b"],
        metrics="selection_rate",
        reference="rest",
        baseline_model="b",
        intervals=400,
        **OPTS,
    )
    row = out.filter((pl.col("model") == "a") & (pl.col("g") == "z")).row(0, named=True)
    paired = row["model_difference_ci_high"] - row["model_difference_ci_low"]
    assert row["model_difference_ci_low"] <= row["model_difference"]
    assert row["model_difference"] <= row["model_difference_ci_high"]
    # unpaired: independent bootstraps of each model (two seeds), widths of the difference
    reps = []
    for col, seed in (("a", 1), ("b", 2)):
        r = compare_models(
            df,
            predictions=[col],
            metrics="selection_rate",
            reference="rest",
            intervals=400,
            seed=seed,
            **OPTS,
        )
        r = r.filter(pl.col("g") == "z").row(0, named=True)
        reps.append((r["difference_ci_high"] - r["difference_ci_low"]) / 2)
    unpaired = 2 * float(np.hypot(*reps))
    assert paired < 0.5 * unpaired


def test_model_with_no_positive_prediction_gives_nulls() -> None:
    df = _frame(100).with_columns(never=pl.lit(False))
    out = compare_models(
        df, predictions=["a", "never"], metrics="ppv", baseline_model="a", intervals=50, **OPTS
    )
    never = out.filter(pl.col("model") == "never")
    assert never["value"].null_count() == never.height
    assert never["value"].is_nan().sum() == 0
    assert never["model_difference"].null_count() == never.height
    assert never["ci_note"].to_list() == ["undefined on the observed data"] * never.height


def test_one_group_only() -> None:
    df = _frame(100).with_columns(g=pl.lit("only"))
    out = compare_models(
        df, predictions=["a", "b"], metrics="tpr", baseline_model="a", intervals=50, **OPTS
    )
    assert out.height == 2
    assert out["difference"].to_list() == [0.0, 0.0]
    assert out["model_difference"].to_list() == [0.0, 0.0]


def test_nulls_in_one_model_leave_the_row_out_of_every_model() -> None:
    df = _frame(100).with_columns(b=pl.when(pl.int_range(pl.len()) < 10).then(None).otherwise("b"))
    out = compare_models(df, predictions=["a", "b"], metrics="tpr", **OPTS)
    complete = df.filter(pl.col("b").is_not_null())
    want = _single(complete, "a", metrics="tpr")
    mine = out.filter(pl.col("model") == "a")
    assert mine["value"].to_list() == want["value"].to_list()
    assert int(mine["n_null"].sum()) == 10
    assert int((mine["n"] + mine["n_null"]).sum()) == df.height


@pytest.mark.parametrize("intervals", [None, 30])
def test_lazy_in_lazy_out_both_engines(intervals: int | None) -> None:
    df = _frame(200)
    kw: dict[str, Any] = {
        "predictions": ["a", "b"],
        "weight": "w",
        "baseline_model": "a",
        "intervals": intervals,
        "ci_method": "bca" if intervals else "percentile",
        **OPTS,
    }
    eager = compare_models(df, **kw)
    lazy = compare_models(df.lazy(), **kw)
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect_schema() == eager.schema
    for engine in ("in-memory", "streaming"):
        assert_frame_equal(lazy.collect(engine=engine), eager)  # type: ignore[call-overload]


def test_long_layout_equals_wide() -> None:
    df = _frame(150).with_row_index("id")
    long = pl.concat(
        [df.select("id", "g", "y", pl.lit(m).alias("m"), pl.col(m).alias("p")) for m in ("a", "b")]
    ).sample(fraction=1.0, shuffle=True, seed=1)
    out = compare_models_long(
        long,
        y_true="y",
        y_pred="p",
        model="m",
        row_id="id",
        by="g",
        models=["a", "b"],
        metrics="fpr",
        baseline_model="a",
        intervals=50,
    )
    want = compare_models(
        df, predictions=["a", "b"], metrics="fpr", baseline_model="a", intervals=50, **OPTS
    )
    assert_frame_equal(out, want)
    lazy = compare_models_long(
        long.lazy(),
        y_true="y",
        y_pred="p",
        model="m",
        row_id="id",
        by="g",
        models=["a", "b"],
        metrics="fpr",
    )
    assert_frame_equal(
        lazy.collect(engine="streaming"),
        compare_models(df, predictions=["a", "b"], metrics="fpr", **OPTS),
    )


def test_long_layout_inconsistent_records() -> None:
    recs = pl.DataFrame(
        {
            "id": [1, 1, 2, 2],
            "m": ["a", "b", "a", "a"],
            "g": ["x", "x", "y", "y"],
            "y": [1, 1, 0, 0],
        }
    ).with_columns(p=pl.lit(1))
    opts: dict[str, Any] = {
        "y_true": "y",
        "y_pred": "p",
        "model": "m",
        "row_id": "id",
        "by": "g",
        "models": ["a", "b"],
    }
    with pytest.raises(InconsistentInputError, match="2 records of model 'a'"):
        compare_models_long(recs, **opts)
    bad = recs.with_columns(m=pl.Series(["a", "b", "a", "b"]), y=pl.Series([1, 0, 0, 0]))
    with pytest.raises(InconsistentInputError, match="different values of column 'y'"):
        compare_models_long(bad, **opts)
    with pytest.raises(InconsistentInputError):
        compare_models_long(bad.lazy(), **opts).collect()


def test_bad_input() -> None:
    df = _frame(50)
    with pytest.raises(ColumnNotFoundError, match="'nope' \\(y_pred\\)"):
        compare_models(df, predictions=["a", "nope"], **OPTS)
    with pytest.raises(InvalidOptionError, match="model name 'a' is given twice"):
        compare_models(df, predictions=["a", "a"], **OPTS)
    with pytest.raises(InvalidOptionError, match="column 'a' is given for two models"):
        compare_models(df, predictions={"m": "a", "n": "a"}, **OPTS)
    with pytest.raises(InvalidOptionError, match="at most 10"):
        wide = df.with_columns([pl.col("a").alias(f"a{i}") for i in range(11)])
        compare_models(wide, predictions=[f"a{i}" for i in range(11)], **OPTS)
    with pytest.raises(InvalidOptionError, match="baseline_model='z'"):
        compare_models(df, predictions=["a", "b"], baseline_model="z", **OPTS)
    with pytest.raises(InvalidOptionError, match="a list of prediction columns"):
        compare_models(df, predictions="a", **OPTS)
    third = df.with_columns(c=pl.Series([0, 1, 2] * 16 + [0, 1]))
    with pytest.raises(InvalidLabelError, match="'c' \\(y_pred\\) has a value 2"):
        compare_models(third, predictions=["a", "c"], **OPTS)
    with pytest.raises(InvalidLabelError, match="'c' \\(y_pred\\) has a value 2"):
        compare_models(third.lazy(), predictions=["a", "c"], **OPTS).collect()


# ---------------------------------------------------------------------------------------------
# Report section and CLI
# ---------------------------------------------------------------------------------------------


def test_audit_models_section_is_compare_models() -> None:
    df = _frame(300)
    kw: dict[str, Any] = {"metrics": ["tpr", "fpr"], "reference": "x", "intervals": 40}
    report = pfm.audit(df, y_true="y", y_pred="b", by="g", predictions=["a", "b"], **kw)
    assert report.section_names[-1] == "models"
    want = compare_models(df, predictions=["a", "b"], baseline_model="b", **OPTS, **kw)
    assert_frame_equal(report["models"], want)
    assert report.inputs["predictions"] == {"a": "a", "b": "b"}
    json.loads(report.to_json())
    assert "Models side by side" in report.to_markdown()


def test_audit_models_section_several_attributes() -> None:
    df = _frame(300).with_columns(h=pl.col("c").cast(pl.Int64))
    report = pfm.audit(
        df,
        y_true="y",
        y_pred="a",
        by=["g", "h"],
        reference={"g": "x", "h": 0},
        metrics="tpr",
        predictions={"first": "a", "second": "b"},
    )
    table = report["models"]
    assert table.columns[:4] == ["attribute", "g", "h", "model"]
    for attr, ref in (("g", "x"), ("h", 0)):
        other = "h" if attr == "g" else "g"
        part = table.filter(pl.col("attribute") == attr).drop("attribute", other)
        want = compare_models(
            df,
            y_true="y",
            predictions={"first": "a", "second": "b"},
            by=attr,
            metrics="tpr",
            reference=ref,
            baseline_model="first",
        )
        assert_frame_equal(part, want)


def test_audit_predictions_errors() -> None:
    df = _frame(50)
    with pytest.raises(InvalidOptionError, match="absent from the data"):
        pfm.audit(df, y_true="y", y_pred="a", by="g", predictions=["a", "zz"])
    with pytest.raises(InvalidOptionError, match="names a model twice"):
        pfm.audit(df, y_true="y", y_pred="a", by="g", predictions=["a", "a"])
    with pytest.raises(InvalidOptionError, match="a list of prediction columns"):
        pfm.audit(df, y_true="y", y_pred="a", by="g", predictions="a")


def test_cli_compare(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from polars_fairmetrics import cli

    path = tmp_path / "rows.parquet"
    _frame(200).write_parquet(path)
    base = ["report", str(path), "--y-true", "y", "--y-pred", "b", "--by", "g", "--no-progress"]
    code = cli.main([*base, "--compare", "a,b", "--metrics", "tpr", "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    rows = pl.DataFrame(doc["sections"]["models"]["rows"])
    assert set(rows["model"]) == {"a", "b"}
    assert set(rows.filter(pl.col("model") == "b")["model_difference"]) == {0.0}
    code = cli.main([*base, "--compare", "a", "zz"])
    assert code != 0
    assert "'zz'" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------


@st.composite
def _rows(draw: st.DrawFn) -> pl.DataFrame:
    n = draw(st.integers(1, 40))
    label = st.one_of(st.none(), st.integers(0, 1))
    return pl.DataFrame(
        {
            "g": draw(st.lists(st.sampled_from(["a", "b", None]), min_size=n, max_size=n)),
            "y": draw(st.lists(label, min_size=n, max_size=n)),
            "p": draw(st.lists(label, min_size=n, max_size=n)),
            "q": draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)),
            "w": draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=n, max_size=n)),
        },
        schema={"g": pl.String, "y": pl.Int64, "p": pl.Int64, "q": pl.Int64, "w": pl.Float64},
    )


@settings(max_examples=max(10, settings().max_examples // 4))
@given(df=_rows(), weighted=st.booleans())
def test_property_per_model_values_are_single_model_on_complete_rows(
    df: pl.DataFrame, weighted: bool
) -> None:
    """Each model's values are ``disparities`` of that model on the rows every model scored;
    every input row is counted or left out (``n + n_null``)."""
    weight = "w" if weighted else None
    out = compare_models(df, predictions=["p", "q"], weight=weight, reference="rest", **OPTS)
    # the oracle: single-model counts with the label blanked where any model is null
    blanked = df.with_columns(y=pl.when(pl.col("p").is_null()).then(None).otherwise(pl.col("y")))
    for col in ("p", "q"):
        mine = out.filter(pl.col("model") == col)
        want = pfm.disparities(blanked, y_pred=col, weight=weight, reference="rest", **OPTS)
        assert_frame_equal(mine.drop("model"), want, check_exact=False, abs_tol=1e-9)
        per_group = mine.group_by("g").agg(pl.col("n").first() + pl.col("n_null").first())
        assert int(per_group[:, 1].sum()) == df.height


def test_fairlearn_metricframe_per_model() -> None:
    """Independent oracle: one fairlearn MetricFrame per model gives each model's group values."""
    fairlearn_metrics = pytest.importorskip("fairlearn.metrics")
    from sklearn.metrics import recall_score

    df = _frame(400)
    out = compare_models(df, predictions=["a", "b", "c"], metrics=["selection_rate", "tpr"], **OPTS)
    for col in ("a", "b", "c"):
        frame = fairlearn_metrics.MetricFrame(
            metrics={
                "selection_rate": fairlearn_metrics.selection_rate,
                "true_positive_rate": recall_score,
            },
            y_true=df["y"].to_numpy(),
            y_pred=df[col].to_numpy().astype(int),
            sensitive_features=df["g"].to_numpy(),
        )
        for metric in ("selection_rate", "true_positive_rate"):
            mine = out.filter((pl.col("model") == col) & (pl.col("metric") == metric))
            want = frame.by_group[metric]
            for g, v in zip(mine["g"], mine["value"], strict=True):
                assert v == pytest.approx(float(want[g]), abs=1e-12)
