"""Every public function that returns a table answers in the one schema of docs/results.md.

Registry-driven, like scikit-learn's ``test_common.py``: :data:`REGISTRY` names every public
table-returning function with a call on small data and the *kind* of table it returns; one test
checks each against the kind's rules (column names, dtypes, order, sorting, typed keys), one test
checks ``wide=True`` means the same everywhere, and one test fails when a public function is
missing from the registry — so a new function, or a drift in an old one, cannot go unnoticed.
"""

from __future__ import annotations

import functools
import inspect
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_fairmetrics as pfm
from polars_fairmetrics import properties
from polars_fairmetrics.calibration import CELL_COLUMNS, CURVE_COLUMNS
from polars_fairmetrics.counts import COUNT_COLUMNS, NULL_COLUMNS, WEIGHTED_COUNT_COLUMNS
from polars_fairmetrics.inputs import as_polars
from polars_fairmetrics.results import (
    BETWEEN_COLUMNS,
    COMPARISON_COLUMNS,
    INTERVAL_COLUMNS,
    MODEL_COMPARISON_COLUMNS,
    PARTITION_COLUMNS,
    TEST_COLUMNS,
    to_wide,
)

CHANGE_COLUMNS = ("baseline", "current", "baseline_n")

N = 240
_rng = np.random.default_rng(7)
ROWS = pl.DataFrame(
    {
        "g": _rng.choice(["a", "b", "c"], N).tolist(),
        "h": _rng.integers(1, 3, N).tolist(),
        "y": _rng.integers(0, 2, N).tolist(),
        "p": _rng.integers(0, 2, N).tolist(),
        "s": np.round(_rng.random(N), 2).tolist(),
        "w": (_rng.random(N) + 0.5).tolist(),
        "m1": _rng.random(N).tolist(),
        "m2": _rng.random(N).tolist(),
        "m3": _rng.random(N).tolist(),
        "b": (_rng.random(N) < 0.3).tolist(),  # a biased-set flag (bias-adjusted weights)
    }
)
LABELS = {"y_true": "y", "y_pred": "p"}
SCORES = {"y_true": "y", "y_score": "s"}
KEYS = ["g", "h"]


@dataclass(frozen=True)
class Entry:
    """One public function: how to call it and the kind of table it returns."""

    name: str
    call: Callable[..., Any]
    kind: str
    keys: tuple[str, ...] = ("g",)
    wide: bool = False  # the function takes wide=


def _counts() -> pl.DataFrame:
    return pfm.confusion_counts(ROWS, by="g", **LABELS)


def _counts_by(*keys: str) -> pl.DataFrame:
    return pfm.confusion_counts(ROWS, by=list(keys), **LABELS)


def _period_counts() -> pl.DataFrame:
    """A count table with a ``period`` partition (two periods of the rows)."""
    rows = as_polars(ROWS)
    halves = [rows[: N // 2], rows[N // 2 :]]
    return pl.concat(
        [
            pfm.confusion_counts(h, by="g", **LABELS).with_columns(period=pl.lit(i, pl.Int64))
            for i, h in enumerate(halves)
        ]
    )


@functools.cache
def _store() -> str:
    """A count store of the rows in two daily batches (counts and score cells)."""
    import datetime

    path = tempfile.mkdtemp(prefix="pfm_schema_") + "/store"
    rows = as_polars(ROWS)
    for i, h in enumerate([rows[: N // 2], rows[N // 2 :]]):
        pfm.append_batch(
            h,
            path,
            batch_id=f"b{i}",
            period=datetime.date(2024, 1, 1 + i),
            y_true="y",
            y_pred="p",
            y_score="s",
            by=KEYS,
            ensemble=MODELS,
        )
    return path


SCORES_ONLY = {"y_true": "y", "y_score": "s"}


MODELS = ["m1", "m2", "m3"]

REGISTRY: list[Entry] = [
    Entry(
        "ensemble_group_metrics",
        lambda **k: pfm.ensemble_group_metrics(ROWS, models=MODELS, by="g", y_true="y"),
        "values",
    ),
    Entry(
        "ensemble_disparities",
        lambda **k: pfm.ensemble_disparities(
            ROWS, models=MODELS, by=KEYS, y_true="y", reference="rest"
        ),
        "comparisons",
        ("g", "h"),
    ),
    Entry(
        "ensemble_sample_metrics",
        lambda **k: pfm.ensemble_sample_metrics(ROWS, models=MODELS),
        "samples",
        (),
    ),
    Entry(
        "ensemble_labels",
        lambda **k: pfm.ensemble_labels(ROWS, models=MODELS),
        "samples",
        (),
    ),
    Entry(
        "confusion_counts",
        lambda **k: pfm.confusion_counts(ROWS, by=KEYS, **LABELS),
        "counts",
        ("g", "h"),
    ),
    Entry(
        "combine_counts",
        lambda **k: pfm.combine_counts([_counts(), _counts()]),
        "counts",
    ),
    Entry(
        "group_metrics",
        lambda **k: pfm.group_metrics(ROWS, by=KEYS, **LABELS, **k),
        "values",
        ("g", "h"),
        True,
    ),
    Entry(
        "metrics_from_counts",
        lambda **k: pfm.metrics_from_counts(_counts(), **k),
        "values",
        ("g",),
        True,
    ),
    Entry(
        "disparities",
        lambda **k: pfm.disparities(ROWS, by="g", reference="a", **LABELS, **k),
        "comparisons",
        ("g",),
        True,
    ),
    Entry(
        "fairness_criteria",
        lambda **k: pfm.fairness_criteria(ROWS, by=KEYS, reference="rest", **LABELS, **k),
        "comparisons",
        ("g", "h"),
        True,
    ),
    Entry(
        "disparity_tests",
        lambda **k: pfm.disparity_tests(ROWS, by=KEYS, reference="overall", **LABELS),
        "comparisons",
        ("g", "h"),
    ),
    Entry(
        "between_groups",
        lambda **k: pfm.between_groups(ROWS, by=KEYS, **LABELS, **k),
        "between",
        (),
        True,
    ),
    # weights and deployment
    Entry(
        "importance_weighted_counts",
        lambda **k: pfm.importance_weighted_counts(_counts_by("g", "h"), "h", keys="g"),
        "counts",
    ),
    Entry(
        "importance_weighted_metrics",
        lambda **k: pfm.importance_weighted_metrics(ROWS, "h", keys="g", **LABELS, **k),
        "values",
        ("g",),
        True,
    ),
    Entry(
        "bias_adjusted_counts",
        lambda **k: pfm.bias_adjusted_counts(_counts_by("g", "b"), "b", biased_share=0.3, keys="g"),
        "counts",
    ),
    Entry(
        "bias_adjusted_metrics",
        lambda **k: pfm.bias_adjusted_metrics(
            ROWS, in_biased_set="b", biased_share=0.3, by=KEYS, **LABELS, **k
        ),
        "values",
        ("g", "h"),
        True,
    ),
    Entry(
        "deployment_counts",
        lambda **k: pfm.deployment_counts(_counts(), deploy_positive_rate=0.1),
        "counts",
    ),
    Entry(
        "deployment_factors",
        lambda **k: pfm.deployment_factors(_counts(), deploy_positive_rate=0.1),
        "factors",
    ),
    Entry(
        "deployment_metrics",
        lambda **k: pfm.deployment_metrics(
            ROWS, deploy_positive_rate=0.1, by=KEYS, **SCORES, threshold=[0.3, 0.6], **k
        ),
        "values",
        ("g", "h"),
        True,
    ),
    Entry(
        "threshold_for_precision",
        lambda **k: pfm.threshold_for_precision(
            ROWS, min_precision=0.3, deploy_positive_rate=0.4, by="g", **SCORES, **k
        ),
        "values",
        ("g",),
        True,
    ),
    # calibration and monitoring
    Entry(
        "score_cells",
        lambda **k: pfm.score_cells(ROWS, by=KEYS, **SCORES_ONLY),
        "cells",
        ("g", "h"),
    ),
    Entry(
        "reliability_curve",
        lambda **k: pfm.reliability_curve(ROWS, by="g", n_bins=5, n_resamples=20, **SCORES_ONLY),
        "reliability",
    ),
    Entry(
        "calibration_metrics",
        lambda **k: pfm.calibration_metrics(ROWS, by=KEYS, separately=True, **SCORES_ONLY, **k),
        "values",
        ("g", "h"),
        True,
    ),
    Entry(
        "calibration_disparities",
        lambda **k: pfm.calibration_disparities(
            ROWS, by="g", reference="a", n_resamples=20, **SCORES_ONLY, **k
        ),
        "comparisons",
        ("g",),
        True,
    ),
    Entry(
        "read_counts",
        lambda **k: pfm.read_counts(_store()).collect(),
        "counts",
        ("g", "h"),
    ),
    Entry(
        "read_cells",
        lambda **k: pfm.read_cells(_store(), merge=True).collect(),
        "cells",
        ("g", "h"),
    ),
    Entry(
        "read_ensemble_sums",
        lambda **k: pfm.read_ensemble_sums(_store()).collect(),
        "ensemble_sums",
        ("g", "h"),
    ),
    Entry(
        "ensemble_group_sums",
        lambda **k: pfm.ensemble_group_sums(ROWS, models=MODELS, by=KEYS, separately=True),
        "ensemble_sums",
        ("g", "h"),
    ),
    Entry(
        "ensemble_metrics_from_sums",
        lambda **k: pfm.ensemble_metrics_from_sums(
            pfm.ensemble_group_sums(ROWS, models=MODELS, by="g", weight="w")
        ),
        "values",
    ),
    Entry(
        "period_criteria",
        lambda **k: pfm.period_criteria(_period_counts(), n_resamples=20, **k),
        "comparisons",
        ("g",),
        True,
    ),
    Entry(
        "period_disparities",
        lambda **k: pfm.period_disparities(_period_counts(), reference="a", **k),
        "comparisons",
        ("g",),
        True,
    ),
    # several models side by side
    Entry(
        "compare_models",
        lambda **k: pfm.compare_models(
            ROWS,
            y_true="y",
            predictions=["p", "b"],
            by=KEYS,
            baseline_model="p",
            intervals=30,
        ),
        "comparisons",
        ("g", "h"),
    ),
    Entry(
        "compare_models_long",
        lambda **k: pfm.compare_models_long(
            pl.concat(
                [
                    as_polars(ROWS)
                    .with_row_index("id")
                    .select("id", "g", "y", pl.col("p").alias("pred"), pl.lit(m).alias("m"))
                    for m in ("a", "b")
                ]
            ),
            y_true="y",
            y_pred="pred",
            model="m",
            row_id="id",
            by="g",
            models=["a", "b"],
        ),
        "comparisons",
    ),
    # bootstrap intervals
    Entry(
        "resample_counts",
        lambda **k: pfm.resample_counts(_counts(), n_resamples=3, include_observed=True),
        "counts",
    ),
    Entry(
        "bootstrap_metrics",
        lambda **k: pfm.bootstrap_metrics(ROWS, by=KEYS, **LABELS, n_resamples=30),
        "comparisons",
        ("g", "h"),
    ),
    Entry(
        "bootstrap_counts",
        lambda **k: pfm.bootstrap_counts(
            _counts(), lambda t: pfm.metrics_from_counts(t, metrics="tpr"), n_resamples=30
        ),
        "values",
    ),
    Entry(
        "bootstrap_rows",
        lambda **k: pfm.bootstrap_rows(
            ROWS,
            lambda lf: pfm.group_metrics(lf, by="g", **LABELS, weight="bootstrap_weight"),
            n_resamples=5,
            progress=False,
        ),
        "values",
    ),
    Entry(
        "intervals",
        lambda **k: pfm.intervals(
            pfm.metrics_from_counts(
                pfm.resample_counts(_counts(), n_resamples=30, include_observed=True)
            )
        ),
        "values",
    ),
    Entry(
        "with_intervals",
        lambda **k: pfm.with_intervals(
            pfm.disparities(_counts(), reference="a"),
            pfm.disparities(pfm.resample_counts(_counts(), n_resamples=30), reference="a"),
        ),
        "comparisons",
    ),
    Entry(
        "window_change",
        lambda **k: pfm.window_change(
            _counts(),
            pfm.confusion_counts(as_polars(ROWS)[: N // 2], by="g", **LABELS),
            n_resamples=20,
        ),
        "changes",
    ),
    # curves
    Entry(
        "curve_counts",
        lambda **k: pfm.curve_counts(ROWS, by=KEYS, weight="w", **SCORES),
        "curve",
        ("g", "h"),
    ),
    Entry(
        "roc_curve",
        lambda **k: pfm.roc_curve(ROWS, by="g", **SCORES),
        "curve",
    ),
    Entry(
        "pr_curve",
        lambda **k: pfm.pr_curve(ROWS, by=KEYS, mode="grid", bins=20, **SCORES),
        "curve",
        ("g", "h"),
    ),
    Entry(
        "pooled_curve",
        lambda **k: pfm.pooled_curve(pfm.curve_counts(ROWS, by="g", weight="w", **SCORES)),
        "curve",
        (),
    ),
    Entry(
        "curve_summaries",
        lambda **k: pfm.curve_summaries(ROWS, by=KEYS, weight="w", **SCORES, **k),
        "values",
        ("g", "h"),
        True,
    ),
    Entry(
        "summary_disparities",
        lambda **k: pfm.summary_disparities(ROWS, by="g", reference="a", **SCORES, **k),
        "comparisons",
        ("g",),
        True,
    ),
]
"""Every public table-returning function (see test_every_public_function_is_registered)."""

NOT_TABLES = {
    "average_precision",
    "roc_auc",
    "safe_div",
    "metric",
    "importance_weights",
    "bias_adjusted_weights",
    "with_importance_weights",
    "with_bias_adjusted_weights",
    "load_compas",
    "load_adult",
    "scan_compas",
    "scan_adult",
    "plot_curves",
    "audit",
    "fair",
    # a count store: writing a batch, its list of batches, gates and figures
    "append_batch",
    "store_batches",
    "change_gate",
    "gap_gate",
    "plot_trend",
    "plot_reliability",
    "plot_group_metrics",
    "plot_disparities",
    "plot_ensemble",
    # one number each, as fairlearn defines them (tests/test_fairlearn_compat.py)
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "equalized_odds_difference",
    "equalized_odds_ratio",
    "equal_opportunity_difference",
    "equal_opportunity_ratio",
    "statistical_parity_difference",
    "disparate_impact",
    "predictive_equality_difference",
    "accuracy_equality_difference",
    "positive_predictive_parity_difference",
    "negative_predictive_parity_difference",
}
"""Public functions that return an expression, a figure, a report, a number or the raw data."""

NEEDS_SPARK = {
    "spark_confusion_counts",
    "spark_disparities",
    "spark_fairness_criteria",
    "spark_group_metrics",
}
"""Tested against a local Spark session in tests/test_spark.py (same schema as local)."""

PENDING: set[str] = set()
"""Functions still being moved to the schema (must be empty when a change lands)."""


def test_every_public_function_is_registered() -> None:
    public = {n for n in pfm.__all__ if inspect.isfunction(getattr(pfm, n)) and n not in NOT_TABLES}
    registered = {e.name for e in REGISTRY} | NEEDS_SPARK | PENDING
    assert public - registered == set(), "add these functions to REGISTRY"


def _check_keys_first(frame: pl.DataFrame, keys: tuple[str, ...]) -> None:
    parts = [p for p in PARTITION_COLUMNS if p in frame.columns]
    lead = (["attribute"] if "attribute" in parts else []) + list(keys)
    lead += [p for p in parts if p != "attribute"]
    assert frame.columns[: len(lead)] == lead, (frame.columns, lead)
    for k in keys:
        assert frame.schema[k] == ROWS.schema[k], (k, frame.schema[k])  # typed as the input


def _check_sorted(frame: pl.DataFrame, keys: tuple[str, ...]) -> None:
    parts = [p for p in PARTITION_COLUMNS if p != "attribute"]
    lead = [c for c in ("attribute", *keys, *parts) if c in frame.columns]
    lead += [c for c in ("score", "bin") if c in frame.columns]
    if lead:
        assert frame.select(lead).equals(
            frame.select(lead).sort(lead, nulls_last=True, maintain_order=True)
        )


CURVE_RATES = ("fpr", "tpr", "precision", "recall")


def _check_curve(frame: pl.DataFrame, keys: tuple[str, ...]) -> None:
    """Curve points: keys, then ``threshold`` (Float64, descending within each group, no
    NaN), then counts (a curve table) or rates (Float64, no NaN); sorted by the keys."""
    assert frame.columns[len(keys)] == "threshold"
    assert frame.schema["threshold"] == pl.Float64
    rest = set(frame.columns) - {*keys, "threshold"}
    counts = {*COUNT_COLUMNS, *WEIGHTED_COUNT_COLUMNS, *NULL_COLUMNS}
    assert rest <= counts or rest <= set(CURVE_RATES), rest
    for c in [*rest & set(CURVE_RATES), *rest & set(WEIGHTED_COUNT_COLUMNS)]:
        assert frame.schema[c] == pl.Float64, (c, frame.schema[c])
        assert frame[c].is_nan().sum() == 0, c
    for c in rest & {*COUNT_COLUMNS, *NULL_COLUMNS}:
        assert frame.schema[c] == pl.Int64, (c, frame.schema[c])
    assert frame["threshold"].is_nan().sum() == 0
    order = [*keys, "threshold"]
    descending = [False] * len(keys) + [True]
    assert frame.select(order).equals(
        frame.select(order).sort(order, descending=descending, nulls_last=True, maintain_order=True)
    )


_VALUE_COLUMNS = ("metric", "value", "support", "n", "n_null", "n_w")
_DTYPES: dict[str, pl.DataType] = {
    "metric": pl.String(),
    "value": pl.Float64(),
    "support": pl.Int64(),
    "n": pl.Int64(),
    "n_null": pl.Int64(),
    "n_w": pl.Float64(),
    "reference": pl.String(),
    "is_reference": pl.Boolean(),
    "reference_value": pl.Float64(),
    "difference": pl.Float64(),
    "ratio": pl.Float64(),
    "min": pl.Float64(),
    "max": pl.Float64(),
    "n_groups": pl.Int64(),
    "n_undefined": pl.Int64(),
    "ci_low": pl.Float64(),
    "ci_high": pl.Float64(),
    "ci_method": pl.String(),
    "ci_level": pl.Float64(),
    "n_resamples": pl.Int64(),
    "n_defined": pl.Int64(),
    "ci_note": pl.String(),
    "threshold": pl.Float64(),
    "replicate": pl.Int64(),
    "attribute": pl.String(),
}


def _check(frame: pl.DataFrame, entry: Entry) -> None:
    keys = entry.keys
    if entry.kind == "samples":  # one row per input row: the input's columns + statistics
        assert frame.height == ROWS.height
        extra = [c for c in frame.columns if c not in ROWS.columns]
        assert extra and all(
            frame.schema[c].is_numeric() or frame.schema[c] == pl.Boolean for c in extra
        )
        assert all(frame[c].is_nan().sum() == 0 for c in extra if frame.schema[c].is_float())
        return
    _check_keys_first(frame, keys)
    if entry.kind == "curve":
        _check_curve(frame, keys)
        return
    _check_sorted(frame, keys)
    allowed = set(keys) | set(PARTITION_COLUMNS) | set(INTERVAL_COLUMNS)
    if entry.kind == "counts":
        allowed |= {*COUNT_COLUMNS, *WEIGHTED_COUNT_COLUMNS, *NULL_COLUMNS}
        assert {"tp", "fp", "tn", "fn", "n"} <= set(frame.columns)
    elif entry.kind in ("values", "comparisons"):
        allowed |= set(_VALUE_COLUMNS)
        if entry.kind == "comparisons":
            allowed |= set(COMPARISON_COLUMNS) | set(TEST_COLUMNS) | set(MODEL_COMPARISON_COLUMNS)
            assert {"reference", "is_reference"} <= set(frame.columns)
        assert {"metric", "value", "support", "n"} <= set(frame.columns)
    elif entry.kind == "factors":
        allowed |= {"deploy_factor"}
        assert frame.schema["deploy_factor"] == pl.Float64
    elif entry.kind == "cells":
        allowed |= set(CELL_COLUMNS)
        assert {"score", "n", "positives", "score_sum", "n_null"} <= set(frame.columns)
        assert frame.schema["score"] == pl.Float64
        assert frame.schema["positives"] == pl.Int64
    elif entry.kind == "reliability":
        allowed |= set(CURVE_COLUMNS)
        assert list(frame.columns[len(keys) : len(keys) + 3]) == ["bin", "bin_low", "bin_high"]
        assert frame.schema["bin"] == pl.Int64
        assert {"mean_predicted", "fraction_positive", "n", "positives"} <= set(frame.columns)
    elif entry.kind == "ensemble_sums":
        allowed |= {"metric", "value_sum", "n", "n_null", "n_w"}
        assert {"metric", "value_sum", "n", "n_null"} <= set(frame.columns)
        assert frame.schema["value_sum"] == pl.Float64
    elif entry.kind == "changes":
        allowed |= {"metric", "value", "n", "n_null", "reference", *CHANGE_COLUMNS}
        assert {"metric", "value", "baseline", "current", "baseline_n"} <= set(frame.columns)
        assert frame.schema["baseline_n"] == pl.Int64
    elif entry.kind == "between":
        allowed |= {"metric", *BETWEEN_COLUMNS}
        assert {"metric", *BETWEEN_COLUMNS} <= set(frame.columns)
        group = frame.schema["worst_group"]
        assert isinstance(group, pl.Struct)
    else:  # pragma: no cover - a registry typo
        raise AssertionError(entry.kind)
    assert set(frame.columns) <= allowed, set(frame.columns) - allowed
    for c, dtype in _DTYPES.items():
        if c in frame.columns:
            assert frame.schema[c] == dtype, (c, frame.schema[c])
    if "value" in frame.columns:
        assert frame["value"].is_nan().sum() == 0  # undefined is null, never NaN


@pytest.mark.parametrize("entry", REGISTRY, ids=[e.name for e in REGISTRY])
def test_schema(entry: Entry) -> None:
    eager = entry.call()
    assert isinstance(eager, pl.DataFrame)
    _check(eager, entry)


@pytest.mark.parametrize("entry", [e for e in REGISTRY if e.wide], ids=lambda e: e.name)
def test_wide_has_one_meaning(entry: Entry) -> None:
    """``wide=True`` is :func:`results.to_wide` of the long result, for every function."""
    long, wide = entry.call(), entry.call(wide=True)
    assert "metric" not in wide.columns
    quantities = list(dict.fromkeys(long["metric"].to_list()))
    assert_frame_equal(to_wide(long, quantities=quantities), wide, check_column_order=False)


@pytest.mark.parametrize("entry", [e for e in REGISTRY if e.kind != "counts"], ids=lambda e: e.name)
def test_results_concatenate(entry: Entry) -> None:
    """Results of any two functions stack (diagonally) without a type clash."""
    base = pfm.group_metrics(ROWS, by="g", **LABELS)
    out = pl.concat([base, entry.call()], how="diagonal_relaxed")
    assert out.height == base.height + entry.call().height


def test_properties_tables_use_the_vocabulary() -> None:
    """The measure-properties tables name their quantity ``metric`` too."""
    summary = properties.cell_summary(8)
    assert "metric" in summary.columns


CONVERTERS: dict[str, Callable[[pl.DataFrame], Any]] = {
    "pandas": lambda df: df.to_pandas(),
    "arrow": lambda df: df.to_arrow(),
    "dict": lambda df: df.to_dict(as_series=False),
}


@pytest.mark.parametrize("form", list(CONVERTERS))
@pytest.mark.parametrize("entry", [e for e in REGISTRY if e.kind != "counts"], ids=lambda e: e.name)
def test_pandas_arrow_and_dict_inputs_give_the_same_result(
    entry: Entry, form: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    want = entry.call()
    monkeypatch.setattr(sys.modules[__name__], "ROWS", CONVERTERS[form](ROWS))
    got = entry.call()
    assert isinstance(got, pl.DataFrame)
    assert_frame_equal(got, want)


def test_other_inputs_are_refused_naming_the_type() -> None:
    with pytest.raises(pfm.FairMetricsError, match=r"got numpy\.ndarray"):
        pfm.group_metrics(np.zeros((3, 2)), y_true="y", y_pred="p")
