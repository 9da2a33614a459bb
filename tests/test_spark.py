"""Spark path (``polars_fairmetrics.spark``) against the local run and a brute-force oracle.

One local Spark session (``local[2]``) for the module; every test skips, with the reason, only when
pyspark is missing or the JVM cannot start. Data are seeded numpy frames split over several Spark
partitions (some empty), with nulls in keys, labels, predictions and weights, zero weights and
intersectional groups.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_fairmetrics as pfm
from polars_fairmetrics.exceptions import ColumnNotFoundError, InvalidThresholdError
from polars_fairmetrics.spark import (
    spark_confusion_counts,
    spark_disparities,
    spark_fairness_criteria,
    spark_group_metrics,
)

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "spark.md"
SPARK_BLOCK = re.compile(r"^```python spark[ \t]*\n(.*?)^```", re.S | re.M)


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        pytest.skip("pyspark is not installed (pip install 'polars_fairmetrics[spark]')")
    saved = {k: os.environ.get(k) for k in ("PYSPARK_PYTHON", "PYTHONPATH")}
    # the Python workers must run this interpreter and import this (uninstalled) checkout
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), saved["PYTHONPATH"]) if p)
    try:
        session = (
            SparkSession.builder.master("local[2]")
            .appName("polars_fairmetrics-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.driver.memory", "1g")
            .config("spark.sql.execution.arrow.maxRecordsPerBatch", "50")  # many batches
            .getOrCreate()
        )
    except Exception as exc:  # no Java, or the JVM failed to start
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        pytest.skip(f"Spark cannot start a local session: {exc!r}"[:500])
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def make_rows(seed: int, n: int = 2400) -> pl.DataFrame:
    """Predictions with nulls everywhere, zero weights, and a group with one class only."""
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c", "z"], n)
    y = rng.integers(0, 2, n)
    y[g == "c"] = 0  # a group with no positives
    score = rng.random(n).round(2)  # ties
    pred = (score >= 0.5).astype(np.int64)
    pred[g == "b"] = 1  # nothing predicted negative in b
    w = rng.exponential(1.0, n)
    w[rng.random(n) < 0.1] = 0.0
    df = pl.DataFrame(
        {
            "g": g,
            "h": rng.integers(0, 3, n),
            "y": y,
            "p": pred,
            "s": score,
            "w": w,
        }
    )
    return df.with_columns(
        pl.when(pl.col("g") == "z").then(None).otherwise(pl.col("g")).alias("g"),
        pl.when(pl.Series(rng.random(n) < 0.03)).then(None).otherwise(pl.col("y")).alias("y"),
        pl.when(pl.Series(rng.random(n) < 0.03)).then(None).otherwise(pl.col("p")).alias("p"),
        pl.when(pl.Series(rng.random(n) < 0.03)).then(None).otherwise(pl.col("w")).alias("w"),
        pl.when(pl.Series(rng.random(n) < 0.02)).then(None).otherwise(pl.col("h")).alias("h"),
    )


def to_spark(spark: Any, df: pl.DataFrame, partitions: int = 5) -> Any:
    return spark.createDataFrame(df.to_arrow()).repartition(partitions)


@pytest.fixture(scope="module")
def rows() -> pl.DataFrame:
    return make_rows(0)


@pytest.fixture(scope="module")
def sdf(spark: Any, rows: pl.DataFrame) -> Any:
    return to_spark(spark, rows).cache()


def brute_counts(df: pl.DataFrame, keys: list[str]) -> dict[tuple[Any, ...], list[float]]:
    """Oracle: a Python loop over the rows (shares no code with the package)."""
    out: dict[tuple[Any, ...], list[float]] = {}
    for r in df.iter_rows(named=True):
        acc = out.setdefault(tuple(r[k] for k in keys), [0, 0, 0, 0, 0, 0.0, 0.0])
        if r["y"] is None or r["p"] is None or r["w"] is None:
            acc[4] += 1
            continue
        cell = {(1, 1): 0, (0, 1): 1, (0, 0): 2, (1, 0): 3}[(r["y"], r["p"])]
        acc[cell] += 1
        acc[5 + (cell in (0, 3))] += r["w"]  # [5]: weight of negatives, [6]: of positives
    return out


def test_counts_match_brute_force_oracle(spark: Any, sdf: Any, rows: pl.DataFrame) -> None:
    got = spark_confusion_counts(sdf, y_true="y", y_pred="p", by=["g", "h"], weight="w")
    want = brute_counts(rows, ["g", "h"])
    assert got.height == len(want)
    for r in got.iter_rows(named=True):
        tp, fp, tn, fn, n_null, w_neg, w_pos = want[(r["g"], r["h"])]
        assert (r["tp"], r["fp"], r["tn"], r["fn"], r["n_null"]) == (tp, fp, tn, fn, n_null)
        assert r["tp_w"] + r["fn_w"] == pytest.approx(w_pos, rel=1e-12, abs=1e-12)
        assert r["fp_w"] + r["tn_w"] == pytest.approx(w_neg, rel=1e-12, abs=1e-12)
    assert got["n"].sum() + got["n_null"].sum() == rows.height


@pytest.mark.parametrize(
    "options",
    [
        {"y_pred": "p", "by": "g"},
        {"y_pred": "p", "by": ["g", "h"], "weight": "w"},
        {"y_pred": "p", "weight": "w"},
        {"y_score": "s", "threshold": [0.0, 0.25, 0.5, 0.75, 1.0], "by": ["g", "h"]},
        {"y_pred": "p", "by": ["g", "h"], "separately": True, "weight": "w"},
    ],
    ids=["one-key", "intersectional-weighted", "overall-weighted", "threshold-grid", "separately"],
)
def test_counts_equal_local(sdf: Any, rows: pl.DataFrame, options: dict[str, Any]) -> None:
    got = spark_confusion_counts(sdf, y_true="y", **options)
    want = pfm.confusion_counts(rows, y_true="y", **options)
    assert_frame_equal(got, want, rel_tol=1e-12, abs_tol=1e-12)
    ints = [c for c in want.columns if want[c].dtype == pl.Int64]
    assert_frame_equal(got.select(ints), want.select(ints))  # counts: exactly


def test_chunks_within_a_partition_are_merged(sdf: Any, rows: pl.DataFrame) -> None:
    # 50-row Arrow batches, one chunk each: ~10 partial tables per partition (merged at 8)
    opts: dict[str, Any] = {
        "y_true": "y",
        "y_score": "s",
        "threshold": [0.3, 0.6],
        "by": ["g", "h"],
        "weight": "w",
    }
    got = spark_confusion_counts(sdf, chunk_rows=50, **opts)
    assert_frame_equal(got, pfm.confusion_counts(rows, **opts), rel_tol=1e-12, abs_tol=1e-12)
    with pytest.raises(pfm.InvalidOptionError, match="chunk_rows=0"):
        spark_confusion_counts(sdf, chunk_rows=0, **opts)


def test_text_labels_partitions_with_one_class_and_empty_partitions(spark: Any) -> None:
    df = pl.DataFrame(
        {
            "g": ["x", "x", "y", "y", None, "y"],
            "y": ["yes", "no", "no", "no", "yes", None],
            "p": ["yes", "yes", "no", "yes", "no", "no"],
        }
    )
    sdf = to_spark(spark, df, partitions=9)  # more partitions than rows: some are empty
    opts: dict[str, Any] = {
        "y_true": "y",
        "y_pred": "p",
        "by": "g",
        "pos_label": "yes",
        "neg_label": "no",
    }
    assert_frame_equal(spark_confusion_counts(sdf, **opts), pfm.confusion_counts(df, **opts))


def test_empty_input_gives_empty_table(spark: Any, rows: pl.DataFrame) -> None:
    sdf = to_spark(spark, rows.head(0), partitions=2)
    for by in (None, "g"):
        got = spark_confusion_counts(sdf, y_true="y", y_pred="p", by=by)
        assert_frame_equal(got, pfm.confusion_counts(rows.head(0), y_true="y", y_pred="p", by=by))


def test_metrics_disparities_criteria_equal_local(sdf: Any, rows: pl.DataFrame) -> None:
    opts: dict[str, Any] = {"y_true": "y", "y_pred": "p", "by": ["g", "h"], "weight": "w"}
    got = spark_group_metrics(sdf, **opts)
    assert_frame_equal(got, pfm.group_metrics(rows, **opts), rel_tol=1e-12, abs_tol=1e-12)
    got = spark_disparities(sdf, reference=("a", 1), **opts)
    want = pfm.disparities(rows, reference=("a", 1), **opts)
    assert_frame_equal(got, want, rel_tol=1e-12, abs_tol=1e-12)
    merged = spark_confusion_counts(sdf, **opts)  # the driver-side code on the merged table
    for ref in ("overall", "rest"):
        assert_frame_equal(
            pfm.disparities(merged, reference=ref),
            pfm.disparities(rows, reference=ref, **opts),
            rel_tol=1e-12,
            abs_tol=1e-12,
        )
    sep: dict[str, Any] = {"y_true": "y", "y_pred": "p", "by": ["g", "h"], "separately": True}
    got = spark_fairness_criteria(sdf, reference={"g": "a", "h": 0}, **sep)
    want = pfm.fairness_criteria(rows, reference={"g": "a", "h": 0}, **sep)
    assert_frame_equal(got, want, rel_tol=1e-12, abs_tol=1e-12)


def test_threshold_sweep_disparities_per_threshold(sdf: Any, rows: pl.DataFrame) -> None:
    opts: dict[str, Any] = {
        "y_true": "y",
        "y_score": "s",
        "threshold": [0.1, 0.5, 0.9],
        "by": "g",
        "metrics": ["tpr", "fpr"],
        "reference": "rest",
    }
    got = spark_disparities(sdf, **opts)
    assert_frame_equal(got, pfm.disparities(rows, **opts), rel_tol=1e-12, abs_tol=1e-12)
    assert got["threshold"].unique().sort().to_list() == [0.1, 0.5, 0.9]


def test_binned_curves_and_bootstrap_on_the_merged_table(sdf: Any, rows: pl.DataFrame) -> None:
    """Binned curves and the count-level bootstrap run on the merged table, on the driver."""
    grid = [i / 20 for i in range(21)]
    opts: dict[str, Any] = {"y_true": "y", "y_score": "s", "threshold": grid, "by": "g"}
    merged = spark_confusion_counts(sdf, **opts)
    local = pfm.confusion_counts(rows, **opts)
    assert_frame_equal(
        pfm.curve_summaries(merged), pfm.curve_summaries(local), rel_tol=1e-12, abs_tol=1e-12
    )
    # resampling happens on the merged count table: the same draws as the local run
    assert_frame_equal(
        pfm.resample_counts(merged, n_resamples=50, seed=3),
        pfm.resample_counts(local, n_resamples=50, seed=3),
    )


def test_path_input(spark: Any, rows: pl.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "preds.parquet"
    rows.write_parquet(path, row_group_size=500)
    got = spark_confusion_counts(path, y_true="y", y_pred="p", by="g", spark=spark)
    assert_frame_equal(
        got, pfm.confusion_counts(pl.scan_parquet(path), y_true="y", y_pred="p", by="g").collect()
    )


def test_driver_side_errors_before_any_job(sdf: Any) -> None:
    with pytest.raises(ColumnNotFoundError, match=r"'nope' \(group\) not found.*'s'"):
        spark_confusion_counts(sdf, y_true="y", y_pred="p", by="nope")
    with pytest.raises(InvalidThresholdError, match="outside"):
        spark_confusion_counts(sdf, y_true="y", y_score="s", threshold=1.5)
    with pytest.raises(pfm.InvalidOptionError, match="expected a Spark DataFrame"):
        spark_confusion_counts(pl.DataFrame({"y": [1]}), y_true="y", y_pred="y")  # type: ignore[arg-type]


def test_value_errors_surface_from_the_partition(spark: Any) -> None:
    df = pl.DataFrame({"y": [0, 1, 2, 1], "p": [0, 1, 1, 0]})
    with pytest.raises(Exception, match=r"column 'y' \(y_true\) has a value 2"):
        spark_confusion_counts(to_spark(spark, df, 2), y_true="y", y_pred="p")
    df = pl.DataFrame({"y": [0, 1], "p": [0, 1], "w": [1.0, -3.0]})
    with pytest.raises(Exception, match=r"column 'w' \(weight\) has a negative weight -3.0"):
        spark_confusion_counts(to_spark(spark, df, 2), y_true="y", y_pred="p", weight="w")


def test_doc_page_spark_examples_run(
    spark: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocks = SPARK_BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert blocks, "docs/spark.md has no ```python spark blocks"
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "doc_spark"}
    for i, code in enumerate(blocks):
        exec(compile(code, f"spark.md[block {i}]", "exec"), namespace)
