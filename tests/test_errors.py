"""The bad-input catalog: one test per entry, and ``docs/errors.md`` generated from it.

Each :class:`Entry` is one kind of bad or awkward input with what the package does about it:
either an error (its class, a message naming the column and the offending value, and *when* it
is raised: when the query is built, or when it runs), or a documented result (typically a null
with its reason), checked by a function. Errors are checked on a DataFrame and on a LazyFrame
(build-time errors raise from the call; run-time errors from ``collect`` on both engines);
documented results on both engines too, and every count table they produce reconciles
(counted + null rows = input rows).

To add a capability's entries after it is merged (M = 1 ensemble, bootstrap B = 0, …), append
``Entry(...)`` lines to :data:`CATALOG` and regenerate the page:
``PYTHONPATH=. python tests/test_errors.py`` (``test_errors_page_is_current`` checks it).
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_fairmetrics as pfm
from polars_fairmetrics.exceptions import (
    ColumnNotFoundError,
    EmptyGroupError,
    FairMetricsError,
    InconsistentInputError,
    InvalidDtypeError,
    InvalidLabelError,
    InvalidOptionError,
    InvalidScoreError,
    InvalidThresholdError,
    InvalidWeightError,
    ReferenceGroupError,
    StoreError,
)

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "errors.md"

Frame = pl.DataFrame | pl.LazyFrame


def base(**columns: Any) -> pl.DataFrame:
    """Five rows, three groups; ``columns`` replace or add columns (lists of five values)."""
    df = pl.DataFrame(
        {
            "g": ["a", "a", "b", "b", "c"],
            "y": [1, 0, 1, 0, 1],
            "p": [1, 0, 0, 1, 1],
            "w": [1.0, 2.0, 1.0, 0.5, 3.0],
            "s": [0.9, 0.2, 0.4, 0.7, 0.6],
        }
    )
    return df.with_columns(
        [pl.Series(k, v) if isinstance(v, list) else v.alias(k) for k, v in columns.items()]
    )


def counts(data: Frame, **options: Any) -> Frame:
    return pfm.confusion_counts(data, **{"y_true": "y", "y_pred": "p", "by": "g", **options})


def scores(data: Frame, **options: Any) -> Frame:
    return pfm.confusion_counts(
        data, **{"y_true": "y", "y_score": "s", "threshold": 0.5, "by": "g", **options}
    )


def metrics(data: Frame, **options: Any) -> Frame:
    return pfm.group_metrics(data, **{"y_true": "y", "y_pred": "p", "by": "g", **options})


def reconciles(table: pl.DataFrame, n_rows: int) -> None:
    """Rows are never lost: counted + null rows = input rows (per threshold)."""
    parts = table.partition_by("threshold") if "threshold" in table.columns else [table]
    for part in parts:
        assert int(part["n"].sum()) + int(part["n_null"].sum()) == n_rows


@dataclass(frozen=True)
class Entry:
    """One kind of bad or awkward input."""

    id: str
    input: str
    does: str
    frame: pl.DataFrame
    call: Callable[[Frame], Any]
    raises: type[Exception] | None = None  # FairMetricsError, or Polars' for `.fair` expressions
    match: str | None = None
    when: str = "run"  # "build" (the call raises) or "run" (collect raises)
    check: Callable[[pl.DataFrame], None] | None = None
    requires: str | None = None  # module of a capability merged later: skipped until it is


def _check_models_null(table: pl.DataFrame) -> None:
    b = table.filter(pl.col("g") == "b")
    assert b["n_null"].to_list() == [1, 1]  # both models leave out the row
    assert b["n"].to_list() == [1, 1]


def _mod(name: str) -> Any:
    return importlib.import_module(f"polars_fairmetrics.{name}")


def _value(table: pl.DataFrame, metric: str, **keys: Any) -> Any:
    rows = table.filter(pl.col("metric") == metric)
    for k, v in keys.items():
        rows = rows.filter(pl.col(k).is_null() if v is None else pl.col(k) == v)
    assert rows.height == 1
    return rows["value"].item()


# --- documented (non-error) outcomes -----------------------------------------------------------


def _labels_all_null(t: pl.DataFrame) -> None:
    reconciles(t, 5)
    assert t["n"].to_list() == [0, 0, 0] and t["n_null_y_true"].sum() == 5


def _null_group(t: pl.DataFrame) -> None:
    reconciles(t, 5)
    assert t["g"].to_list() == ["a", "b", None] and t["n"].to_list() == [2, 2, 1]


def _null_label(t: pl.DataFrame) -> None:
    reconciles(t, 5)
    assert t["n_null_y_true"].to_list() == [1, 0, 0] and t["n"].to_list() == [1, 2, 1]


def _null_pred(t: pl.DataFrame) -> None:
    reconciles(t, 5)
    assert t["n_null_y_pred"].to_list() == [0, 1, 0] and t["n_null"].to_list() == [0, 1, 0]


def _null_weight(t: pl.DataFrame) -> None:
    reconciles(t, 5)
    assert t["n_null_weight"].to_list() == [1, 0, 0]
    assert t["n_w"].to_list() == [1.0, 1.5, 3.0]


def _zero_sum(t: pl.DataFrame) -> None:
    assert t.filter(pl.col("g") == "a")["value"].to_list() == [None]
    assert t.filter(pl.col("g") == "b")["value"].to_list() == [0.0]


def _all_zero(t: pl.DataFrame) -> None:
    assert t["value"].to_list() == [None, None, None]
    assert t["n"].to_list() == [2, 2, 1]


def _empty(t: pl.DataFrame) -> None:
    assert t.height == 0 and "tp" in t.columns


def _empty_group(t: pl.DataFrame) -> None:
    assert t["g"].to_list() == ["a", "b", "c"]  # category "d" has no rows: no row


def _group_all_null_rows(t: pl.DataFrame) -> None:
    assert _value(t, "accuracy", g="a") is None
    assert _value(t, "accuracy", g="b") == 0.0


def _single_class(t: pl.DataFrame) -> None:
    assert _value(t, "true_positive_rate", g="c") == 1.0
    assert _value(t, "false_positive_rate", g="c") is None
    assert _value(t, "matthews_corrcoef", g="c") is None
    for v in t["value"].to_list():
        assert v is None or not math.isnan(v)


def _no_predicted_positive(t: pl.DataFrame) -> None:
    assert _value(t, "positive_predictive_value", g="a") is None
    assert _value(t, "selection_rate", g="a") == 0.0


def _group_column_null(t: pl.DataFrame) -> None:
    reconciles(t, 5)
    assert t["g"].to_list() == [None] and t["n"].to_list() == [5]


def _unsorted_thresholds(t: pl.DataFrame) -> None:
    assert t["threshold"].to_list() == [0.2, 0.7]
    reconciles(t, 5)


def _score_at_threshold(t: pl.DataFrame) -> None:
    assert t.filter(pl.col("g") == "a")["tp"].item() == 1  # score 0.9 >= 0.9


def _calibration_group_without_rows(t: pl.DataFrame) -> None:
    assert t.filter(pl.col("g") == "a")["value"].to_list() == [None, None, None]
    assert t.filter(pl.col("g") == "a")["support"].to_list() == [0, 0, 0]
    assert t.filter(pl.col("g") == "a")["n_null"].to_list() == [2, 2, 2]


def _calibration_separated(t: pl.DataFrame) -> None:
    assert t["value"].to_list() == [None]  # no maximum likelihood estimate exists


def _store_counted_differently(d: Frame) -> Any:
    import tempfile

    monitor = _mod("monitor")
    store = tempfile.mkdtemp(prefix="pfm_errors_") + "/store"
    monitor.append_batch(d, store, batch_id="b1", period=1, y_true="y", y_pred="p", by="g")
    return monitor.append_batch(
        d, store, batch_id="b2", period=2, y_true="y", y_pred="p", by="g", weight="w"
    )


def _properties_n_one(t: pl.DataFrame) -> None:
    undecided = set(t.filter(pl.col("holds").is_null())["property"])
    assert undecided == {"Resolution Stability", "Perfect Fairness Stability"}
    assert t.filter(pl.col("holds").is_not_null())["holds"].all()
    assert t.filter(pl.col("holds").is_null())["evidence"].str.contains("not decided").all()


def _properties_all_undefined(t: pl.DataFrame) -> None:
    every = t.filter(pl.col("undefined") == pl.col("matrices"))
    assert every.height > 0 and every["p_perfect"].null_count() == every.height
    assert (every["p_undefined"] == 1.0).all()
    some = t.filter(pl.col("undefined") < pl.col("matrices"))
    assert some["p_perfect"].null_count() == 0


def _properties_single_count(t: pl.DataFrame) -> None:
    holds = dict(t.select("property", "holds").iter_rows())
    assert holds["Immunity to IR changes"] is None and holds["Immunity to GR changes"] is None
    assert holds["Fairness Symmetry"] is True


def _float32_at_threshold(t: pl.DataFrame) -> None:
    # rows (y, p): a (1, 0.7) tp, (0, 0.7) fp; b (1, 0.4) fn, (0, 0.7) fp; c (1, 0.6) fn
    assert t["tp"].to_list() == [1, 0, 0] and t["fp"].to_list() == [1, 1, 0]


def _numpy_threshold(t: pl.DataFrame) -> None:
    assert t["threshold"].to_list() == [0.5, 0.5, 0.5]
    assert t["tp"].to_list() == [1, 0, 1] and t["fp"].to_list() == [0, 1, 0]


def _zero_reference(t: pl.DataFrame) -> None:
    a = t.filter(pl.col("g") == "a")
    assert a["reference_value"].item() == 0.0 and a["ratio"].item() is None
    assert a["difference"].item() == 0.5


def _between_all_undefined(t: pl.DataFrame) -> None:
    assert t["n_undefined"].item() == 3 and t["worst_group"].item() is None
    assert t["difference"].item() is None


def _ref_undefined(t: pl.DataFrame) -> None:
    b = t.filter(pl.col("g") == "b")
    assert b["reference_value"].item() is None and b["difference"].item() is None


def _single_model(t: pl.DataFrame) -> None:
    assert t["n_models"].to_list() == [1] * 5
    assert t["jitter"].null_count() == 5 and t["std_probability"].null_count() == 5
    assert t["label_stability"].to_list() == [1.0] * 5


def _ragged_models(t: pl.DataFrame) -> None:
    assert t["n_models"].to_list() == [2, 1, 2, 2, 1]  # a null probability: one model fewer
    one = t.filter(pl.col("n_models") == 1)
    assert one["std_probability"].null_count() == 2 and one["jitter"].null_count() == 2
    assert t.filter(pl.col("n_models") == 2)["std_probability"].null_count() == 0
    assert t["mean_probability"].round(10).to_list() == [0.6, 0.2, 0.6, 0.4, 0.6]


def _long(**changes: Any) -> pl.DataFrame:
    """An ensemble in the long layout: rows 0-2 × models a, b; ``changes`` edits record 3."""
    df = pl.DataFrame(
        {
            "row": [0, 0, 1, 1, 2, 2],
            "model": ["a", "b", "a", "b", "a", "b"],
            "p": [0.1, 0.3, 0.6, 0.8, 0.4, 0.5],
            "g": ["x", "x", "y", "y", "x", "x"],
            "y": [1, 1, 0, 0, 1, 1],
        }
    )
    for column, value in changes.items():
        values = df[column].to_list()
        values[3] = value
        df = df.with_columns(pl.Series(column, values, dtype=df[column].dtype))
    return df


_LONG = {"row_id": "row", "model_col": "model", "prob_col": "p"}


def _tie_at_half(t: pl.DataFrame) -> None:
    # decimal means of exactly 0.5, in two orders of the models: the same label and mean bits
    assert t["ensemble_label"].to_list() == [True] * 5
    assert t["mean_probability"].to_list() == t["mean_reversed"].to_list() == [0.5] * 5


def _empty_stratum(t: pl.DataFrame) -> None:
    a = t.filter(pl.col("g") == "a")
    assert a["value"].to_list() == [None] and a["ci_low"].to_list() == [None]
    assert a["ci_high"].to_list() == [None] and a["n_defined"].to_list() == [0]
    assert a["ci_note"].to_list() == ["undefined on the observed data"]
    c = t.filter(pl.col("g") == "c")  # the other strata keep their values
    assert c["value"].to_list() == [1.0] and c["n_defined"].to_list() == [5]


def _curve_single_class(t: pl.DataFrame) -> None:
    assert t["g"].to_list() == ["a", "b", "c"]
    c = t.filter(pl.col("g") == "c")  # positives only: no negative to rank against
    assert c["roc_auc"].to_list() == [None]
    assert c["average_precision"].to_list() == [1.0]  # precision is 1 at every threshold
    assert t.filter(pl.col("g") == "a")["roc_auc"].to_list() == [1.0]


def _curve_negatives_only(t: pl.DataFrame) -> None:
    c = t.filter(pl.col("g") == "c")  # negatives only: recall is 0/0
    assert c["roc_auc"].to_list() == [None] and c["average_precision"].to_list() == [None]


def _unsorted_grid(t: pl.DataFrame) -> None:
    assert t["threshold"].to_list() == [0.5, 0.2] * 3  # descending within each group
    assert t["tp"].to_list() == [1, 1, 0, 1, 1, 1] and t["fp"].to_list() == [0, 1, 1, 1, 0, 0]


def _zero_stratum_uniform(t: pl.DataFrame) -> None:
    # level 'a' has total weight 0: the uniform target is over the levels with weight (b, c)
    assert t["importance_weight"].to_list() == [0.0, 0.0, 0.75, 0.75, 1.5]
    assert t.select((pl.col("w") * 0 + pl.col("importance_weight")).sum()).item() == 3.0


def _unlisted_zero(t: pl.DataFrame) -> None:
    # a and b are 2 of 5 rows each: 0.5 / 0.4; c is left out
    assert t["importance_weight"].to_list() == [1.25, 1.25, 1.25, 1.25, 0.0]


def _given_source_rows(t: pl.DataFrame) -> None:
    # i_a = 0.6 / 0.2 = 3, i_b = 0.2 / 0.2 = 1, i_c = 0.2 / 0.6; the errors are b's two rows
    assert t["value"].item() == pytest.approx((1 + 1) / 5)
    assert t["n_w"].item() == pytest.approx(3 + 3 + 1 + 1 + 1 / 3)


def _no_threshold(t: pl.DataFrame) -> None:
    b = t.filter(pl.col("g") == "b")  # precision 0.5 at 0.3, 0 at 0.5
    assert b["threshold"].to_list() == [None, None] and b["value"].to_list() == [None, None]
    assert b["support"].to_list() == [0, 0] and b["n"].to_list() == [2, 2]
    assert t.filter(pl.col("g") == "a")["threshold"].to_list() == [0.3, 0.3]


def _section_error(report: Any) -> None:
    from polars_fairmetrics.exceptions import FairMetricsError

    with pytest.raises(
        FairMetricsError,
        match=r"no section 'fairness' in this report; "
        r"sections: groups, metrics, disparities",
    ):
        report.section("fairness")
    with pytest.raises(KeyError, match=r"no section 'fairness'"):
        report["fairness"]


def _tpr_stat(c: pl.DataFrame) -> pl.DataFrame:
    return pfm.metrics_from_counts(c, metrics="tpr")


def _acc_stat(c: pl.DataFrame) -> pl.DataFrame:
    return pfm.metrics_from_counts(c, metrics="accuracy")


def _boot(d: Frame, **options: Any) -> Any:
    return _mod("bootstrap").bootstrap_metrics(
        d, **{"y_true": "y", "y_pred": "p", "by": "g", "n_resamples": 20, **options}
    )


def _boot_empty(t: pl.DataFrame) -> None:
    assert t.height == 0 and {"ci_low", "ci_high", "ci_note"} <= set(t.columns)


def _boot_all_null(t: pl.DataFrame) -> None:
    assert t.height > 0 and t["ci_low"].null_count() == t.height
    assert set(t["ci_note"]) == {"undefined on the observed data"}


def _boot_between_plain(t: pl.DataFrame) -> None:
    assert t["difference_ci_low"].null_count() == t.height
    assert all("not smooth" in n for n in t["ci_note"])


def _nan_estimate(t: pl.DataFrame) -> None:
    assert t["value"].to_list() == [None] and t["ci_low"].to_list() == [None]
    assert t["ci_note"].to_list() == ["undefined on the observed data"]


def _other_reference(d: Frame) -> Any:
    c = counts(d)
    reps = _mod("bootstrap").resample_counts(c, n_resamples=5)
    return _mod("bootstrap").with_intervals(
        pfm.disparities(c, metrics="accuracy"),
        pfm.disparities(reps, metrics="accuracy", reference="a"),
    )


def _deployed_ppv(t: pl.DataFrame) -> pl.DataFrame:
    out = pfm.deployment_metrics(t, by="g", deploy_positive_rate=0.1, metrics="ppv")
    return out.select("replicate", "g", "value")


def _deployed_without_negatives(t: pl.DataFrame) -> None:
    a = t.filter(pl.col("g") == "a").row(0, named=True)
    assert a["value"] is not None and 0 < a["n_defined"] < a["n_resamples"]


def _between_plain(d: Frame) -> Any:
    c = counts(d)
    reps = _mod("bootstrap").resample_counts(c, n_resamples=20)
    return _mod("bootstrap").with_intervals(
        pfm.between_groups(c, metrics="accuracy"), pfm.between_groups(reps, metrics="accuracy")
    )


def _report_all_null_group(report: Any) -> None:
    for name in ("groups", "metrics", "disparities", "criteria"):
        c = report[name].filter(pl.col("g") == "c")
        assert c.height > 0 and set(c["n"].to_list()) == {0} and set(c["n_null"]) == {1}, name
        if "value" in c.columns:
            assert c["value"].null_count() == c.height, name
    assert report.inputs["n_null"] == 1


def _report_hostile_names(report: Any) -> None:
    import tempfile

    text, md, page = report.to_terminal(), report.to_markdown(), report.to_html()
    for out in (text, md, page):
        assert not [c for c in out if c != "\n" and not c.isprintable()]
    assert "\\x1b[31m" in text and "![img](" not in md and "<script" not in page
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "out"
        written = report.write_parquet(folder)
        assert all(p.resolve().parent == folder.resolve() for p in written)


def _hostile_report(d: Any) -> Any:
    from polars_fairmetrics.report import Section

    def path_like(ctx: Any) -> Any:
        return Section("../escape", "t", "d", ctx.tables["groups"], keys=("g",))

    return _mod("report").audit(d, y_true="y", y_pred="p", by="g", extra_sections=[path_like])


def _one_group_rest(t: pl.DataFrame) -> None:
    assert t["reference_value"].to_list() == [None] and t["difference"].to_list() == [None]


CATALOG: list[Entry] = [
    # --- schema: raised when the query is built -----------------------------------------------
    Entry(
        "missing_column",
        'a named column is not in the frame (`y_true="label"`)',
        "error naming the column, its role and the columns available",
        base(),
        lambda d: counts(d, y_true="label"),
        ColumnNotFoundError,
        r"column 'label' \(y_true\) not found; available columns: 'g', 'y'",
        "build",
    ),
    Entry(
        "missing_group_column",
        "a `by=` column is not in the frame",
        "error naming the group column",
        base(),
        lambda d: counts(d, by="sex"),
        ColumnNotFoundError,
        r"column 'sex' \(group\) not found",
        "build",
    ),
    Entry(
        "wrong_dtype_weight",
        "a text weight column",
        "error naming the column and its dtype",
        base(w=["1", "2", "1", "1", "1"]),
        lambda d: counts(d, weight="w"),
        InvalidDtypeError,
        r"column 'w' \(weight\) has dtype String, expected a numeric dtype",
        "build",
    ),
    Entry(
        "wrong_dtype_boolean_weight",
        "a Boolean weight column",
        "error naming the column and its dtype (Booleans are not weights)",
        base(w=[True] * 5),
        lambda d: counts(d, weight="w"),
        InvalidDtypeError,
        r"column 'w' \(weight\) has dtype Boolean",
        "build",
    ),
    Entry(
        "wrong_dtype_label",
        "a Date label column",
        "error naming the column and its dtype",
        base(y=pl.date(2020, 1, 1)),
        counts,
        InvalidDtypeError,
        r"column 'y' \(y_true\) has dtype Date, expected Boolean, numeric",
        "build",
    ),
    Entry(
        "wrong_dtype_score",
        "a text score column",
        "error naming the column and its dtype",
        base(s=["0.1"] * 5),
        scores,
        InvalidDtypeError,
        r"column 's' \(y_score\) has dtype String",
        "build",
    ),
    Entry(
        "labels_null_dtype",
        "a label column of dtype Null (every value null, no type)",
        "error naming the column and its dtype (cast it to the label type to have the rows "
        "counted as null rows)",
        base(y=pl.lit(None)),
        counts,
        InvalidDtypeError,
        r"column 'y' \(y_true\) has dtype Null",
        "build",
    ),
    Entry(
        "text_labels_without_pos_label",
        "text labels without `pos_label=`",
        "error naming the column: which class is positive cannot be guessed",
        base(y=["yes", "no", "yes", "no", "yes"]),
        counts,
        InvalidOptionError,
        r"column 'y' \(y_true\) holds text labels; pass pos_label=",
        "build",
    ),
    Entry(
        "group_column_reserved_name",
        "a group column named like an output column (`n`)",
        "error naming the column",
        base().rename({"g": "n"}),
        lambda d: counts(d, by="n"),
        InvalidOptionError,
        r"group column 'n' collides with an output column name",
        "build",
    ),
    Entry(
        "group_column_named_like_a_count_column",
        "a group column named like any column a count table may have (`tp_w2`, the squared "
        "weights of `weight_squares=True`)",
        "error naming the column (downstream it would be taken for a count and summed away)",
        base().rename({"g": "tp_w2"}),
        lambda d: counts(d, by="tp_w2"),
        InvalidOptionError,
        r"group column 'tp_w2' collides with an output column name",
        "build",
    ),
    Entry(
        "group_column_twice",
        "the same group column twice in `by=`",
        "error naming it",
        base(),
        lambda d: counts(d, by=["g", "g"]),
        InvalidOptionError,
        r"a column is named twice in \['g', 'g'\]",
        "build",
    ),
    Entry(
        "not_a_table",
        "a NumPy array where a table is expected (pandas, Arrow and dicts are converted)",
        "error naming the type received and the way to pass arrays",
        base(),
        lambda d: counts(np.zeros((3, 2))),
        InvalidOptionError,
        r"expected a table .* got numpy\.ndarray; for arrays of labels use frame_from_arrays",
        "build",
    ),
    # --- values: raised when the query runs, from the one scan's summary ------------------------
    Entry(
        "third_label_value",
        "three label values (0, 1, 2)",
        "error naming the column and the value",
        base(y=[1, 0, 2, 0, 1]),
        counts,
        InvalidLabelError,
        r"column 'y' \(y_true\) has a value 2 that is neither the positive "
        r"label 1 nor the negative label 0",
    ),
    Entry(
        "third_prediction_value",
        "a prediction outside {0, 1} (-1)",
        "error naming the column and the value",
        base(p=[1, 0, -1, 0, 1]),
        counts,
        InvalidLabelError,
        r"column 'p' \(y_pred\) has a value -1",
    ),
    Entry(
        "fractional_label",
        "a float label 0.5",
        "error naming the column and the value",
        base(y=[1.0, 0.5, 0.0, 1.0, 0.0]),
        counts,
        InvalidLabelError,
        r"column 'y' \(y_true\) has a value 0.5",
    ),
    Entry(
        "nan_label",
        "a NaN float label",
        "error naming the column and the value",
        base(y=[1.0, math.nan, 0.0, 1.0, 0.0]),
        counts,
        InvalidLabelError,
        r"column 'y' \(y_true\) has a value nan",
    ),
    Entry(
        "three_text_classes",
        "text labels with three classes and only `pos_label=`",
        "error naming the column and two non-positive values",
        base(y=["x", "y", "z", "x", "x"], p=["x", "y", "y", "x", "x"]),
        lambda d: counts(d, pos_label="x"),
        InvalidLabelError,
        r"column 'y' \(y_true\) has more than two classes: besides the positive label 'x' it "
        r"holds 'y' and 'z'",
    ),
    Entry(
        "negative_weight",
        "a negative weight",
        "error naming the column and the value",
        base(w=[1.0, -0.5, 1.0, 1.0, 1.0]),
        lambda d: counts(d, weight="w"),
        InvalidWeightError,
        r"column 'w' \(weight\) has a negative weight -0.5",
    ),
    Entry(
        "nan_weight",
        "a NaN weight",
        "error naming the column and the value",
        base(w=[1.0, math.nan, 1.0, 1.0, 1.0]),
        lambda d: counts(d, weight="w"),
        InvalidWeightError,
        r"column 'w' \(weight\) has a non-finite weight nan",
    ),
    Entry(
        "infinite_weight",
        "an infinite weight",
        "error naming the column and the value",
        base(w=[1.0, math.inf, 1.0, 1.0, 1.0]),
        lambda d: counts(d, weight="w"),
        InvalidWeightError,
        r"column 'w' \(weight\) has a non-finite weight inf",
    ),
    Entry(
        "weight_sum_overflow",
        "finite weights whose sum overflows Float64 (1e308 twice)",
        "error naming the column and the largest weight (every weighted sum would be infinite)",
        base(w=[1e308, 1.0, 1e308, 1.0, 1.0]),
        lambda d: counts(d, weight="w"),
        InvalidWeightError,
        r"column 'w' \(weight\): the weights sum to infinity in Float64 \(overflow; the "
        r"largest is 1e\+308\)",
    ),
    Entry(
        "count_table_negative_count",
        "a count table (made elsewhere) with a negative cell count",
        "error naming the column, the value and the group (no rate of such a table means anything)",
        pl.DataFrame({"g": ["a", "b"], "tp": [-1, 3], "fp": [2, 1], "tn": [4, 4], "fn": [1, 0]}),
        lambda d: pfm.disparities(d, reference="b"),
        InvalidOptionError,
        r"column 'tp' of the count table has a negative value -1 \(group \{'g': 'a'\}\)",
    ),
    Entry(
        "count_table_nan_weighted_sum",
        "a count table with a NaN weighted sum",
        "error naming the column, the value and the group",
        pl.DataFrame(
            {
                "g": ["a", "b"],
                **{c: [1, 2] for c in ("tp", "fp", "tn", "fn")},
                **{f"{c}_w": [1.0, 2.0] for c in ("tp", "fp", "tn")},
                "fn_w": [1.0, math.nan],
            }
        ),
        lambda d: pfm.metrics_from_counts(d, metrics="false_negative_rate"),
        InvalidWeightError,
        r"column 'fn_w' of the count table has a non-finite value nan \(group \{'g': 'b'\}\)",
    ),
    Entry(
        "count_table_infinite_count",
        "a count table with an infinite (Float64) cell count",
        "error naming the column, the value and the group",
        pl.DataFrame(
            {
                "g": ["a", "b"],
                "tp": [1.0, 3.0],
                "fp": [2.0, 1.0],
                "tn": [4.0, math.inf],
                "fn": [1.0, 0.0],
            }
        ),
        lambda d: pfm.fairness_criteria(d, reference="a"),
        InvalidOptionError,
        r"column 'tn' of the count table has a non-finite value inf \(group \{'g': 'b'\}\)",
    ),
    Entry(
        "score_above_one",
        "a score of 1.5 (probabilities expected)",
        "error naming the column, the value and the bounds (`score_bounds=None` lifts them)",
        base(s=[0.1, 1.5, 0.3, 0.2, 0.9]),
        scores,
        InvalidScoreError,
        r"column 's' \(y_score\) has a score 1.5 outside \[0.0, 1.0\]",
    ),
    Entry(
        "score_below_zero",
        "a score of -0.2",
        "error naming the column and the value",
        base(s=[0.1, -0.2, 0.3, 0.2, 0.9]),
        scores,
        InvalidScoreError,
        r"column 's' \(y_score\) has a score -0.2 outside",
    ),
    Entry(
        "nan_score",
        "a NaN score",
        "error naming the column",
        base(s=[0.1, math.nan, 0.3, 0.2, 0.9]),
        scores,
        InvalidScoreError,
        r"column 's' \(y_score\) has a NaN score",
    ),
    Entry(
        "infinite_score_unbounded",
        "an infinite score with `score_bounds=None`",
        "error naming the column and the value (scores must be finite)",
        base(s=[0.1, math.inf, 0.3, 0.2, 0.9]),
        lambda d: scores(d, score_bounds=None),
        InvalidScoreError,
        r"column 's' \(y_score\) has a score inf: scores must be finite",
    ),
    Entry(
        "reference_group_absent",
        "a named reference group absent from the data",
        "error naming the value, the group column and the groups present",
        base(),
        lambda d: pfm.disparities(d, y_true="y", y_pred="p", by="g", reference="z"),
        ReferenceGroupError,
        r"reference group 'z' not found in \['g'\].*groups present: "
        r'g="a", g="b", g="c"',
    ),
    Entry(
        "reference_of_another_type",
        "a reference value of another type than its group column (`reference=1` for a text "
        'column, `"1"` or `True` for an integer column, the text `"2020-01-01"` for a Date '
        "column)",
        "error naming the value, the column and its dtype: keys are typed, a value is never cast "
        'to the column (`"1"` is not group 1)',
        base(g=[1, 1, 2, 2, 3]),
        lambda d: pfm.disparities(d, y_true="y", y_pred="p", by="g", reference="1"),
        ReferenceGroupError,
        r"reference value '1' \(str\) cannot name a group of column 'g' \(group\), which has "
        r"dtype Int64",
        "build",
    ),
    Entry(
        "reference_not_a_value_of_the_dtype",
        "a numeric reference that no value of the integer group column equals (`reference=1.5`)",
        "the group is absent (never truncated to group 1): error naming the value and the groups "
        "present",
        base(g=[1, 1, 2, 2, 3]),
        lambda d: pfm.disparities(d, y_true="y", y_pred="p", by="g", reference=1.5),
        ReferenceGroupError,
        r"reference group 1\.5 not found in \['g'\].*groups present: g=1, g=2, g=3",
    ),
    Entry(
        "expression_third_label",
        "a third label in `pl.col(p).fair.<metric>(y_true=...)`",
        "Polars' `InvalidOperationError` (a native expression cannot raise the package's "
        "errors) quoting the package's message: column and value",
        base(y=[1, 0, 2, 0, 1]),
        lambda d: d.select(pl.col("p").fair.accuracy(y_true="y")),
        pl.exceptions.InvalidOperationError,
        r"failed in column 'y'.*column 'y' \(y_true\) has a value 2 that is neither the "
        r"positive label 1 nor the negative label 0",
    ),
    Entry(
        "expression_third_text_label",
        "a third text label in an expression metric (`pos_label=`, `neg_label=` given)",
        "Polars' `InvalidOperationError` quoting the column and the value",
        base(y=["yes", "no", "maybe", "no", "yes"], p=["yes", "no", "no", "yes", "yes"]),
        lambda d: d.group_by("g").agg(
            pl.col("p").fair.accuracy(y_true="y", pos_label="yes", neg_label="no")
        ),
        pl.exceptions.InvalidOperationError,
        r"column 'y' \(y_true\) has a value 'maybe'",
    ),
    Entry(
        "expression_text_labels_numeric_prediction",
        "text classes (`pos_label=`, `neg_label=`) in an expression whose prediction column is "
        "0/1 or Boolean",
        "Polars' `InvalidOperationError` quoting the column and a value (not Polars' own "
        "'cannot compare string with numeric type'): in an expression both columns hold the "
        "classes; `confusion_counts` reads a 0/1 or Boolean prediction naturally",
        base(y=["yes", "no", "yes", "no", "yes"]),
        lambda d: d.group_by("g").agg(
            pl.col("p").fair.accuracy(y_true="y", pos_label="yes", neg_label="no")
        ),
        pl.exceptions.InvalidOperationError,
        r"column 'p' \(y_pred\) has a value '0' that is neither the positive label 'yes'",
    ),
    Entry(
        "expression_negative_weight",
        "a negative weight in an expression metric",
        "Polars' `InvalidOperationError` quoting the column and the value",
        base(w=[1.0, -2.0, 1.0, 1.0, 1.0]),
        lambda d: d.select(pl.col("p").fair.accuracy(y_true="y", weight="w")),
        pl.exceptions.InvalidOperationError,
        r"failed in column 'w'.*column 'w' \(weight\) has a negative weight -2.0",
    ),
    Entry(
        "expression_nan_weight",
        "a NaN weight in an expression metric",
        "Polars' `InvalidOperationError` quoting the column and the value",
        base(w=[1.0, math.nan, 1.0, 1.0, 1.0]),
        lambda d: d.group_by("g").agg(pl.col("p").fair.accuracy(y_true="y", weight="w")),
        pl.exceptions.InvalidOperationError,
        r"column 'w' \(weight\) has a non-finite weight nan",
    ),
    Entry(
        "expression_infinite_weight",
        "an infinite weight in an expression metric",
        "Polars' `InvalidOperationError` quoting the column and the value",
        base(w=[1.0, math.inf, 1.0, 1.0, 1.0]),
        lambda d: d.group_by("g").agg(pl.col("p").fair.accuracy(y_true="y", weight="w")),
        pl.exceptions.InvalidOperationError,
        r"column 'w' \(weight\) has a non-finite weight inf",
    ),
    Entry(
        "expression_weight_sum_overflow",
        "finite weights whose sum overflows Float64 (1e308 twice) in an expression metric",
        "Polars' `InvalidOperationError` quoting the column and the largest weight (not a NaN "
        "metric)",
        base(w=[1e308, 1.0, 1e308, 1.0, 1.0]),
        lambda d: d.select(pl.col("p").fair.accuracy(y_true="y", weight="w")),
        pl.exceptions.InvalidOperationError,
        r"column 'w' \(weight\): the weights sum to infinity in Float64 \(overflow; the "
        r"largest is 1e\+308\)",
    ),
    Entry(
        "expression_nan_score",
        "a NaN score in `pl.col(s).fair.roc_auc(y_true=...)`",
        "Polars' `InvalidOperationError` quoting the column",
        base(s=[0.1, math.nan, 0.3, 0.2, 0.9]),
        lambda d: d.group_by("g").agg(pl.col("s").fair.roc_auc(y_true="y")),
        pl.exceptions.InvalidOperationError,
        r"column 's' \(y_score\) has a NaN score",
    ),
    # --- options: raised when the query is built ----------------------------------------------
    Entry(
        "duplicate_thresholds",
        "the same threshold twice",
        "error naming the threshold",
        base(),
        lambda d: scores(d, threshold=[0.3, 0.5, 0.3]),
        InvalidThresholdError,
        r"threshold 0.3 is given twice",
        "build",
    ),
    Entry(
        "threshold_outside_bounds",
        "a threshold of 1.2 for probabilities",
        "error naming the threshold and the bounds",
        base(),
        lambda d: scores(d, threshold=[0.5, 1.2]),
        InvalidThresholdError,
        r"threshold 1.2 is outside \[0.0, 1.0\]",
        "build",
    ),
    Entry(
        "text_threshold",
        'a threshold given as text (`threshold="0.5"`)',
        "error naming the whole text (not its first character, as when it was read as a list)",
        base(),
        lambda d: scores(d, threshold="0.5"),
        InvalidThresholdError,
        r"threshold '0\.5' is not a number",
        "build",
    ),
    Entry(
        "numpy_scalar_threshold",
        "a NumPy scalar threshold (`np.float32(0.5)`, `np.int64(1)`, a 0-d array)",
        "accepted as the number it holds (it raised Python's TypeError: not iterable)",
        base(),
        lambda d: scores(d, threshold=np.float32(0.5)),
        check=lambda t: _numpy_threshold(t),
    ),
    Entry(
        "nan_threshold",
        "a NaN threshold",
        "error naming the threshold",
        base(),
        lambda d: scores(d, threshold=[math.nan]),
        InvalidThresholdError,
        r"threshold nan is not finite",
        "build",
    ),
    Entry(
        "empty_threshold_list",
        "`threshold=[]`",
        "error",
        base(),
        lambda d: scores(d, threshold=[]),
        InvalidThresholdError,
        r"threshold is an empty list",
        "build",
    ),
    Entry(
        "unknown_metric_name",
        'an unknown metric name (`"recal"`)',
        "error naming it, with the closest known names",
        base(),
        lambda d: metrics(d, metrics=["recal"]),
        InvalidOptionError,
        r"unknown metric 'recal'; did you mean 'recall'",
        "build",
    ),
    Entry(
        "unknown_criterion",
        "an unknown fairness criterion",
        "error listing the known ones",
        base(),
        lambda d: pfm.fairness_criteria(d, y_true="y", y_pred="p", by="g", criteria=["parity"]),
        InvalidOptionError,
        r"unknown criterion 'parity'; known: statistical_parity",
        "build",
    ),
    Entry(
        "conflicting_pred_and_score",
        "both `y_pred=` and `y_score=`",
        "error: exactly one is needed",
        base(),
        lambda d: counts(d, y_score="s", threshold=0.5),
        InvalidOptionError,
        r"pass exactly one of y_pred= \(labels\) or y_score= \(scores\)",
        "build",
    ),
    Entry(
        "threshold_with_labels",
        "`threshold=` with `y_pred=`",
        "error",
        base(),
        lambda d: counts(d, threshold=0.5),
        InvalidOptionError,
        r"threshold= applies to y_score=, not to y_pred=",
        "build",
    ),
    Entry(
        "score_without_threshold",
        "`y_score=` without `threshold=`",
        "error",
        base(),
        lambda d: pfm.confusion_counts(d, y_true="y", y_score="s"),
        InvalidOptionError,
        r"y_score= needs threshold=",
        "build",
    ),
    Entry(
        "weighted_without_weights",
        "`weighted=True` on an unweighted count table",
        "error naming the missing columns",
        base(),
        lambda d: pfm.metrics_from_counts(counts(d), weighted=True),
        InvalidOptionError,
        r"weighted=True but the count table has no weighted columns",
        "build",
    ),
    Entry(
        "reference_none",
        "`reference=None`",
        "error listing the accepted values",
        base(),
        lambda d: pfm.disparities(d, y_true="y", y_pred="p", by="g", reference=None),
        InvalidOptionError,
        r"reference= is None; pass a group value, 'rest' or 'overall'",
        "build",
    ),
    Entry(
        "reference_wrong_arity",
        "a 2-tuple reference for one group column",
        "error naming the reference and the keys",
        base(),
        lambda d: pfm.disparities(d, y_true="y", y_pred="p", by="g", reference=("a", 1)),
        InvalidOptionError,
        r"reference \('a', 1\) has 2 values for 1 group columns \['g'\]",
        "build",
    ),
    Entry(
        "empty_metric_list",
        "`metrics=[]`",
        "error",
        base(),
        lambda d: metrics(d, metrics=[]),
        InvalidOptionError,
        r"metrics= is an empty list",
        "build",
    ),
    Entry(
        "not_a_count_table",
        "rows given to `disparities` without `y_true=`",
        "error naming the missing count columns",
        base(),
        lambda d: pfm.disparities(d, by="g"),
        InvalidOptionError,
        r"pass y_true= .* missing: tp, fp, tn, fn",
        "build",
    ),
    Entry(
        "metrics_of_a_table_without_counts",
        "`metrics_from_counts` of rows, or of a table lacking some of `tp, fp, tn, fn`",
        "error naming the missing count columns (not Polars' column error)",
        base(),
        lambda d: pfm.metrics_from_counts(d),
        InvalidOptionError,
        r"a count table needs the columns tp, fp, tn, fn .*missing: tp, fp, tn, fn",
        "build",
    ),
    Entry(
        "count_table_text_counts",
        "a count table whose count column is text (`tp` of dtype String)",
        "error naming the column and its dtype",
        pl.DataFrame({"g": ["a"], "tp": ["1"], "fp": [0], "tn": [1], "fn": [2]}),
        lambda d: pfm.metrics_from_counts(d),
        InvalidDtypeError,
        r"column 'tp' \(count\) has dtype String, expected a numeric dtype",
        "build",
    ),
    Entry(
        "count_table_unknown_group_column",
        "`by=` naming a column a count table does not have",
        "error naming the column and the columns available",
        base(),
        lambda d: pfm.metrics_from_counts(counts(d), by="h"),
        ColumnNotFoundError,
        r"column 'h' \(group\) not found; available columns: 'g', 'tp'",
        "build",
    ),
    Entry(
        "separately_reference_missing_attribute",
        "attributes side by side (`separately=True`) with a reference mapping that leaves one out",
        "error naming the attribute without a reference group (not a reference 'not found' in "
        "the attribute it never named)",
        base(h=[1, 2, 1, 2, 1]),
        lambda d: pfm.disparities(
            d, y_true="y", y_pred="p", by=["g", "h"], separately=True, reference={"g": "a"}
        ),
        ReferenceGroupError,
        r"reference gives no group for attribute\(s\) \['h'\]",
        "build",
    ),
    Entry(
        "criteria_from_comparisons_missing_metric",
        "`criteria_from_comparisons` of comparisons without a criterion's metric (equalized "
        "odds from the selection rate's), or of the long table",
        "error naming the missing columns and the `disparities(..., wide=True)` call that has them",
        base(),
        lambda d: _mod("disparity").criteria_from_comparisons(
            pfm.disparities(d, y_true="y", y_pred="p", by="g", metrics="selection_rate", wide=True),
            keys=["g"],
            criteria="equalized_odds_difference",
        ),
        ColumnNotFoundError,
        r"criteria_from_comparisons needs the wide comparisons .*missing: "
        r"false_positive_rate_difference",
        "build",
    ),
    Entry(
        "combine_mismatched_tables",
        "`combine_counts` of a weighted and an unweighted table",
        "error naming the differing columns",
        base(),
        lambda d: pfm.combine_counts([counts(d), counts(d, weight="w")]),
        InvalidOptionError,
        r"combine_counts: table 1 has columns .* \(differing: fn_w, fp_w, n_null_weight, n_w, "
        r"tn_w, tp_w\)",
        "build",
    ),
    Entry(
        "expression_text_labels_without_neg",
        "text labels in an expression with only `pos_label=`",
        "error: an expression cannot look at the data to infer the other class",
        base(y=["yes", "no", "yes", "no", "yes"]),
        lambda d: d.select(pl.col("p").fair.accuracy(y_true="y", pos_label="yes")),
        InvalidOptionError,
        r"text labels in an expression need both pos_label= and "
        r"neg_label=",
        "build",
    ),
    # --- documented results: nulls with their reason, nothing lost ----------------------------
    Entry(
        "labels_all_null",
        "every label null (typed column)",
        "every row is a null row (`n = 0`, `n_null_y_true` = rows); every metric null",
        base(y=pl.lit(None, dtype=pl.Int64)),
        counts,
        check=_labels_all_null,
    ),
    Entry(
        "null_in_group",
        "a null group value",
        "the nulls form a group of their own (sorted last)",
        base(g=["a", "a", "b", "b", None]),
        counts,
        check=_null_group,
    ),
    Entry(
        "null_in_label",
        "a null label",
        "row left out and reported in `n_null_y_true`",
        base(y=[1, None, 1, 0, 1]),
        counts,
        check=_null_label,
    ),
    Entry(
        "null_in_prediction",
        "a null prediction",
        "row left out and reported in `n_null_y_pred`",
        base(p=[1, 0, None, 1, 1]),
        counts,
        check=_null_pred,
    ),
    Entry(
        "null_in_weight",
        "a null weight",
        "row left out and reported in `n_null_weight`",
        base(w=[1.0, None, 1.0, 0.5, 3.0]),
        lambda d: counts(d, weight="w"),
        check=_null_weight,
    ),
    Entry(
        "zero_sum_weights_in_group",
        "all weights of one group are 0",
        "that group's weighted rates are null (0/0); the others are unaffected",
        base(w=[0.0, 0.0, 1.0, 1.0, 1.0]),
        lambda d: metrics(d, weight="w", metrics="accuracy"),
        check=_zero_sum,
    ),
    Entry(
        "all_weights_zero",
        "every weight is 0",
        "every weighted rate null (0/0); `n` still counts the rows",
        base(w=[0.0] * 5),
        lambda d: metrics(d, weight="w", metrics="accuracy"),
        check=_all_zero,
    ),
    Entry(
        "empty_frame",
        "a frame with no rows",
        "an empty count table with the full schema",
        base().clear(),
        counts,
        check=_empty,
    ),
    Entry(
        "empty_group",
        "an Enum category with no rows",
        "no row for it: groups are the values present in the data",
        base(g=pl.col("g").cast(pl.Enum(["a", "b", "c", "d"]))),
        counts,
        check=_empty_group,
    ),
    Entry(
        "group_with_only_null_rows",
        "a group whose every row has a null label",
        "the group is listed with `n = 0`; its metrics are null",
        base(y=[None, None, 1, 0, 1]),
        lambda d: metrics(d, metrics="accuracy"),
        check=_group_all_null_rows,
    ),
    Entry(
        "single_class_group",
        "a group with positives only",
        "rates over the absent class (FPR, TNR, balanced accuracy, MCC, …) are null; never NaN",
        base(),
        metrics,
        check=_single_class,
    ),
    Entry(
        "nothing_predicted_positive",
        "a group with no predicted positive",
        "PPV and FDR null; selection rate 0",
        base(p=[0, 0, 0, 1, 1]),
        metrics,
        check=_no_predicted_positive,
    ),
    Entry(
        "group_column_all_null",
        "the group column entirely null",
        "one group, `null`, holding every row",
        base(g=pl.lit(None, dtype=pl.String)),
        counts,
        check=_group_column_null,
    ),
    Entry(
        "unsorted_thresholds",
        "thresholds given in descending order",
        "accepted and sorted ascending",
        base(),
        lambda d: pfm.confusion_counts(d, y_true="y", y_score="s", threshold=[0.7, 0.2]),
        check=_unsorted_thresholds,
    ),
    Entry(
        "score_equal_to_threshold",
        "a score exactly equal to the threshold",
        "predicted positive (`score >= threshold`)",
        base(),
        lambda d: scores(d, threshold=0.9),
        check=_score_at_threshold,
    ),
    Entry(
        "float32_score_equal_to_threshold",
        "a Float32 score written as the threshold (0.7 in single precision, just below the "
        "double 0.7)",
        "predicted positive: the rule `score >= threshold` is applied in the score's precision, "
        "as `pl.col(s) >= 0.7` and NumPy apply it (the curves' grid too)",
        base(s=pl.Series([0.7, 0.7, 0.4, 0.7, 0.6], dtype=pl.Float32)),
        lambda d: scores(d, threshold=0.7),
        check=lambda t: _float32_at_threshold(t),
    ),
    Entry(
        "zero_reference_value",
        "a reference group whose selection rate is 0",
        "ratio null (x / 0); the difference is defined",
        base(p=[1, 0, 0, 0, 1]),
        lambda d: pfm.disparities(
            d, y_true="y", y_pred="p", by="g", reference="b", metrics="selection_rate"
        ),
        check=_zero_reference,
    ),
    Entry(
        "reference_metric_undefined",
        "a reference group with no actual positives",
        "reference value, difference and ratio of its TPR null",
        base(y=[1, 0, 0, 0, 1]),
        lambda d: pfm.disparities(d, y_true="y", y_pred="p", by="g", reference="b", metrics="tpr"),
        check=_ref_undefined,
    ),
    Entry(
        "rest_of_a_single_group",
        '`reference="rest"` with one group',
        "the rest is empty: reference value and difference null",
        base(g=["a"] * 5),
        lambda d: pfm.disparities(
            d, y_true="y", y_pred="p", by="g", reference="rest", metrics="accuracy"
        ),
        check=_one_group_rest,
    ),
    Entry(
        "between_groups_all_undefined",
        "between-groups summary where every group's metric is undefined",
        "max/min/difference null, `n_undefined` = groups, no worst/best group",
        base(y=[0, 0, 0, 0, 0]),
        lambda d: pfm.between_groups(d, y_true="y", y_pred="p", by="g", metrics="tpr"),
        check=_between_all_undefined,
    ),
    # --- capabilities merged on main after this branch (skipped until present) ---------------
    Entry(
        "ensemble_single_model",
        "an ensemble of M = 1 model",
        "jitter and the probability std (ddof = 1) null — undefined for one model; label "
        "stability 1",
        base(),
        lambda d: _mod("ensemble").ensemble_sample_metrics(d, models=["s"]),
        check=_single_model,
        requires="ensemble",
    ),
    Entry(
        "bootstrap_zero_replicates",
        "a bootstrap with B = 0 (`n_resamples=0`)",
        "error naming the value",
        base(),
        lambda d: _mod("bootstrap").bootstrap_counts(counts(d), _tpr_stat, n_resamples=0),
        InvalidOptionError,
        r"n_resamples must be a positive integer, got 0",
        "build",
        requires="bootstrap",
    ),
    Entry(
        "bootstrap_bad_level",
        "a confidence level outside (0, 1)",
        "error naming the value",
        base(),
        lambda d: _mod("bootstrap").bootstrap_counts(
            counts(d), _tpr_stat, n_resamples=10, level=1.5
        ),
        InvalidOptionError,
        r"level must be strictly between 0 and 1, got 1.5",
        "build",
        requires="bootstrap",
    ),
    Entry(
        "bootstrap_fractional_seed",
        "a fractional bootstrap seed (`seed=1.5`)",
        "error naming the value",
        base(),
        lambda d: _boot(d, seed=1.5),
        InvalidOptionError,
        r"seed must be an integer >= 0 \(or None for fresh, irreproducible entropy\), got 1.5",
        "build",
        requires="bootstrap",
    ),
    Entry(
        "bootstrap_negative_seed",
        "a negative bootstrap seed (`seed=-1`)",
        "error naming the value",
        base(),
        lambda d: _boot(d, seed=-1),
        InvalidOptionError,
        r"seed must be an integer >= 0 \(or None for fresh, irreproducible entropy\), got -1",
        "build",
        requires="bootstrap",
    ),
    Entry(
        "bootstrap_empty_frame",
        "bootstrap intervals of an empty frame",
        "an empty table with the interval columns (no error)",
        base().clear(),
        lambda d: _boot(d),
        check=_boot_empty,
        requires="bootstrap",
    ),
    Entry(
        "bootstrap_all_rows_null",
        "bootstrap intervals when every label is null (a fully filtered frame)",
        "every value and interval null, `ci_note` = undefined on the observed data",
        base(y=pl.lit(None, dtype=pl.Int64)),
        lambda d: _boot(d, what="metrics", metrics="accuracy"),
        check=_boot_all_null,
        requires="bootstrap",
    ),
    Entry(
        "bootstrap_between_from_between",
        "between-groups intervals from the between-groups table of the replicates",
        "null, `ci_note` says max − min is not smooth and asks for the replicate count table "
        "(the max-t interval needs every group's value)",
        base(),
        _between_plain,
        check=_boot_between_plain,
        requires="bootstrap",
    ),
    Entry(
        "bootstrap_weighted_without_squares",
        "resampling a weighted count table counted without `weight_squares=True`",
        "error naming the missing columns and the option",
        base(),
        lambda d: _mod("bootstrap").resample_counts(counts(d, weight="w"), n_resamples=5),
        InvalidOptionError,
        r"lacks \(columns tp_w2, fp_w2, tn_w2, fn_w2\)",
        "build",
        requires="bootstrap",
    ),
    Entry(
        "bootstrap_fractional_counts",
        "resampling a count table whose counts are fractional (Float64 `tp`)",
        "error naming the column and its dtype (a multinomial draw would truncate the counts)",
        base(),
        lambda d: _mod("bootstrap").resample_counts(
            counts(d).with_columns(pl.col("tp").cast(pl.Float64) + 0.5), n_resamples=5
        ),
        InvalidDtypeError,
        r"column 'tp' of the count table has dtype Float64: counts of rows are integers",
        "build",
        requires="bootstrap",
    ),
    Entry(
        "bootstrap_thresholds_differ",
        "resampling a thresholded count table whose groups have different thresholds",
        "error naming the column and both groups' thresholds (never relabelled with the first "
        "group's)",
        base(),
        lambda d: _mod("bootstrap").resample_counts(
            scores(d, threshold=[0.3, 0.6]).with_columns(
                threshold=pl.when(pl.col("g") == "b")
                .then(pl.col("threshold") + 0.05)
                .otherwise(pl.col("threshold"))
            ),
            n_resamples=5,
        ),
        InvalidOptionError,
        r"column 'threshold' of the thresholded count table differs between groups",
        requires="bootstrap",
    ),
    Entry(
        "bootstrap_weight_square_overflow",
        "bootstrap intervals with a weight of 1e200 (its square overflows Float64)",
        "error naming the sum-of-squares column: the weighted sums cannot be resampled "
        "(divide the weights by a common factor; weights below 1e-150, whose squares round "
        "to 0, likewise)",
        base(w=[1e200, 2.0, 1.0, 0.5, 3.0]),
        lambda d: _boot(d, weight="w"),
        InvalidWeightError,
        r"column 'tp_w2' of the count table is infinite: a weight above about 1e154",
        requires="bootstrap",
    ),
    Entry(
        "intervals_value_not_a_number",
        "`intervals()` of a replicate table whose `value` is text",
        "error naming the column and its dtype",
        pl.DataFrame({"replicate": [0, 1, 2], "value": ["a", "b", "c"]}),
        lambda d: _mod("bootstrap").intervals(d),
        InvalidDtypeError,
        r"column 'value' of the replicates has dtype String",
        "build",
        requires="bootstrap",
    ),
    Entry(
        "intervals_estimate_twice",
        "`intervals()` of a replicate table with two rows at replicate 0 for one statistic",
        "error naming the column and the statistic (no interval is shared by two estimates)",
        pl.DataFrame({"k": ["a", "a", "a"], "replicate": [0, 0, 1], "value": [0.1, 0.2, 0.3]}),
        lambda d: _mod("bootstrap").intervals(d),
        InvalidOptionError,
        r"column 'replicate' is 0 \(the estimate\) in 2 rows for k='a'",
        requires="bootstrap",
    ),
    Entry(
        "intervals_missing_estimate",
        "`intervals()` of a statistic with resamples but no replicate 0",
        "error naming the column and the statistic (never dropped silently)",
        pl.DataFrame(
            {"k": ["a", "a", "b", "b"], "replicate": [0, 1, 1, 2], "value": [0.2, 0.1, 0.3, 0.4]}
        ),
        lambda d: _mod("bootstrap").intervals(d),
        InvalidOptionError,
        r"column 'replicate' has resamples but no 0 \(the estimate\) for k='b'",
        requires="bootstrap",
    ),
    Entry(
        "intervals_nan_estimate",
        "a user statistic whose value is NaN (a 0/0 of its own)",
        "the value is null, never NaN; its interval null with `ci_note` = undefined on the "
        "observed data",
        pl.DataFrame({"replicate": [0, 1, 2], "value": [float("nan"), 0.1, 0.2]}),
        lambda d: _mod("bootstrap").intervals(d),
        check=_nan_estimate,
        requires="bootstrap",
    ),
    Entry(
        "with_intervals_other_reference",
        "`with_intervals` given replicates computed against another reference (or with other "
        "metrics or groups)",
        "error naming the columns rows are matched on (not intervals 'undefined in every "
        "resample', nor the other reference's)",
        base(),
        _other_reference,
        InvalidOptionError,
        r"no row of the replicates matches a row of point on column\(s\) "
        r"\['g', 'reference', 'metric'\]",
        requires="bootstrap",
    ),
    Entry(
        "bootstrap_deployment_resample_without_negatives",
        "deployment-corrected metrics with intervals when a resample draws no negative (one "
        "negative in the data)",
        "that resample's corrected values are null (no test class ratio there), counted by "
        "`n_defined`; the estimate is corrected as usual (the observed data must have both "
        "classes)",
        base(y=[1, 1, 1, 0, 1]),
        lambda d: _mod("bootstrap").bootstrap_counts(
            counts(d), _deployed_ppv, n_resamples=40, seed=0
        ),
        check=_deployed_without_negatives,
        requires="bootstrap",
    ),
    # --- ensemble, bootstrap, curves, weights, properties, report ------------------------------
    Entry(
        "ensemble_ragged",
        "models with different numbers of predictions (a null probability in some rows)",
        "each row's metrics use the models that predicted it: `n_models` "
        "counts them; jitter and the probability std null where only one did",
        base(q=[0.3, None, 0.8, 0.1, None]),
        lambda d: _mod("ensemble").ensemble_sample_metrics(d, models=["s", "q"], keep=[]),
        check=_ragged_models,
        requires="ensemble",
    ),
    Entry(
        "ensemble_probability_out_of_range",
        "an ensemble probability outside [0, 1] (1.5)",
        "error naming the model column and the value",
        base(q=[0.3, 1.5, 0.8, 0.1, 0.2]),
        lambda d: _mod("ensemble").ensemble_group_metrics(d, models=["s", "q"], by="g"),
        InvalidScoreError,
        r"column 'q' \(ensemble probability\) has a value 1.5 outside \[0, 1\]",
        requires="ensemble",
    ),
    Entry(
        "ensemble_probability_nan",
        "a NaN ensemble probability",
        "error naming the model column",
        base(q=[0.3, float("nan"), 0.8, 0.1, 0.2]),
        lambda d: _mod("ensemble").ensemble_labels(d, models=["s", "q"]),
        InvalidScoreError,
        r"column 'q' \(ensemble probability\) has a NaN value",
        requires="ensemble",
    ),
    Entry(
        "ensemble_group_column_named_support",
        "an ensemble's group column named like a column of the result (`support`, `ci_low`, "
        "`value_sum`)",
        "error naming the column (it was a raw Polars duplicate-column error)",
        base(q=[0.3, 0.6, 0.8, 0.1, 0.2]).rename({"g": "support"}),
        lambda d: _mod("ensemble").ensemble_group_metrics(d, models=["s", "q"], by="support"),
        InvalidOptionError,
        r"group column 'support' collides with an output column name",
        "build",
        requires="ensemble",
    ),
    Entry(
        "ensemble_sums_invalid",
        "an ensemble-sums table made elsewhere with a negative or fractional `n`, a NaN or "
        "infinite `value_sum` or `n_w`, or a `metric` that is not an ensemble metric",
        "error naming the column, the value and its row (the mean was -0.5, NaN, or a metric "
        "nobody computed)",
        pl.DataFrame(
            {"g": ["a", "b"], "metric": ["jitter"] * 2, "value_sum": [1.0, 2.0], "n": [-2, 4]}
        ).with_columns(n_null=pl.lit(0)),
        lambda d: _mod("ensemble").ensemble_metrics_from_sums(d, by="g"),
        InvalidOptionError,
        r"column 'n' of the ensemble sums has a value -2",
        requires="ensemble",
    ),
    Entry(
        "compare_models_long_model_twice",
        "`compare_models_long` with the same model twice in `models=`",
        "error naming the model (it was a raw Polars duplicate-column error)",
        base(m=["x"] * 5, r=[0, 1, 2, 3, 4]),
        lambda d: _mod("models").compare_models_long(
            d, y_true="y", y_pred="p", model="m", row_id="r", by="g", models=["x", "x"]
        ),
        InvalidOptionError,
        r"model name 'x' is given twice in models=",
        "build",
        requires="models",
    ),
    Entry(
        "compare_models_long_model_without_records",
        "`compare_models_long` with a model in `models=` that has no record (a typo)",
        "error naming the model and the model column (every row was left out of every model: "
        "all-null results)",
        base(m=["x"] * 5, r=[0, 1, 2, 3, 4]),
        lambda d: _mod("models").compare_models_long(
            d, y_true="y", y_pred="p", model="m", row_id="r", by="g", models=["x", "xx"]
        ),
        InvalidOptionError,
        r"model 'xx' of models= has no record in column 'm'",
        requires="models",
    ),
    Entry(
        "calibration_reference_not_found",
        "`calibration_disparities` with a reference group that is not in the data",
        "error naming the value, the group column and the groups present (it named the "
        "internal columns `_pfm_unit` and `score` as if they were partitions)",
        base(),
        lambda d: _mod("calibration").calibration_disparities(
            d, y_true="y", y_score="s", by="g", reference="z"
        ),
        ReferenceGroupError,
        r"reference group 'z' not found in \['g'\] \(the data\); groups present: g=\"a\", "
        r"g=\"b\", g=\"c\"$",
        requires="calibration",
    ),
    Entry(
        "window_change_key_dtypes_differ",
        "`window_change` of two windows whose group column has different dtypes (String and "
        "Categorical)",
        "error naming the column and both dtypes (it was a raw Polars SchemaError from a join)",
        base(),
        lambda d: _mod("monitor").window_change(
            pfm.confusion_counts(d, y_true="y", y_pred="p", by="g"),
            pfm.confusion_counts(
                d.with_columns(pl.col("g").cast(pl.Categorical)), y_true="y", y_pred="p", by="g"
            ),
            n_resamples=0,
        ),
        InvalidOptionError,
        r"column 'g' has dtype String in the baseline window and Categorical in the current one",
        "build",
        requires="monitor",
    ),
    Entry(
        "gap_gate_not_criteria",
        "`gap_gate` on a table whose metrics are not fairness criteria (a `period_disparities` "
        "table of `selection_rate`)",
        "error naming the metrics (their rows were left unchecked and the gate passed)",
        base(),
        lambda d: _mod("monitor").gap_gate(
            _mod("monitor").period_disparities(
                pfm.confusion_counts(d, y_true="y", y_pred="p", by="g"), metrics="selection_rate"
            ),
            max_gap=0.1,
        ),
        InvalidOptionError,
        r"gap_gate needs a criteria table \(period_criteria\); metric\(s\) \['selection_rate'\]",
        "build",
        requires="monitor",
    ),
    Entry(
        "calibration_group_column_named_bin",
        "a calibration group column named like a column of the reliability curve (`bin`, "
        "`bin_low`, `mean_predicted`)",
        "error naming the column (it was a raw Polars duplicate-column error)",
        base().rename({"g": "bin"}),
        lambda d: _mod("calibration").calibration_metrics(d, y_true="y", y_score="s", by="bin"),
        InvalidOptionError,
        r"group column 'bin' collides with an output column name",
        "build",
        requires="calibration",
    ),
    Entry(
        "ensemble_tie_at_half",
        "models whose mean probability is exactly 0.5 in decimal (0.001, 0.951, 0.723, 0.325), "
        "in different orders",
        "the mean is summed in ascending order of the probabilities, so the label does not "
        'depend on the order of the models: 1 under `convention="half_up"` (the default), 0 '
        'under `"virny"`',
        base(a=[0.001] * 5, b=[0.951] * 5, c=[0.723] * 5, e=[0.325] * 5),
        lambda d: pl.concat(
            [
                _mod("ensemble").ensemble_labels(d, models=["a", "b", "c", "e"], keep=[]),
                _mod("ensemble")
                .ensemble_labels(d, models=["e", "c", "b", "a"], keep=[])
                .select(pl.col("mean_probability").alias("mean_reversed")),
            ],
            how="horizontal",
        ),
        check=_tie_at_half,
        requires="ensemble",
    ),
    Entry(
        "ensemble_long_without_model_col",
        "the long layout without `model_col=`",
        "error: without the model column a duplicated record cannot be told from another "
        "model's prediction",
        _long(),
        lambda d: _mod("ensemble").ensemble_sample_metrics(d, row_id="row", prob_col="p"),
        InvalidOptionError,
        r"the long layout needs row_id=, model_col= and prob_col=",
        "build",
        requires="ensemble",
    ),
    Entry(
        "ensemble_long_group_differs",
        "long layout: a row whose group differs between its model records",
        "error naming the column, the row id and both values (no record is picked silently)",
        _long(g="z"),
        lambda d: _mod("ensemble").ensemble_group_metrics(d, by="g", **_LONG),
        InconsistentInputError,
        r"column 'g' \(group\) is not the same in every record of row id 1 of the long "
        r"layout: it holds '(y|z)' and '(y|z)'",
        requires="ensemble",
    ),
    Entry(
        "ensemble_long_label_differs",
        "long layout: a row whose label differs between its model records (only confusion "
        "metrics asked for)",
        "error naming the column, the row id and both values",
        _long(y=1),
        lambda d: _mod("ensemble").ensemble_group_metrics(
            d, by="g", y_true="y", metrics=[], **_LONG
        ),
        InconsistentInputError,
        r"column 'y' \(y_true\) is not the same in every record of row id 1 of the long "
        r"layout: it holds 0 and 1",
        requires="ensemble",
    ),
    Entry(
        "ensemble_long_duplicate_record",
        "long layout: a (row, model) pair given twice",
        "error naming the model column, the row id and the counts (it would count as an "
        "extra model)",
        _long(model="a"),
        lambda d: _mod("ensemble").ensemble_sample_metrics(d, **_LONG),
        InconsistentInputError,
        r"column 'model' \(model_col\) has 2 records but 1 distinct models for row id 1",
        requires="ensemble",
    ),
    Entry(
        "bootstrap_empty_stratum",
        "a stratified bootstrap with an empty stratum (a group whose every label is null)",
        "that stratum's estimate and interval null, `n_defined = 0`; the other strata unaffected",
        base(y=[None, None, 1, 0, 1]),
        lambda d: _mod("bootstrap").bootstrap_counts(
            counts(d), _acc_stat, n_resamples=5, strata="g", seed=1
        ),
        check=_empty_stratum,
        requires="bootstrap",
    ),
    Entry(
        "curve_single_class",
        "a ROC/PR curve summary for a group with positives only",
        "its ROC AUC null (no negative to rank against); average precision 1",
        base(),
        lambda d: _mod("curves").curve_summaries(d, y_true="y", y_score="s", by="g", wide=True),
        check=_curve_single_class,
        requires="curves",
    ),
    Entry(
        "curve_negatives_only",
        "a ROC/PR curve summary for a group with negatives only",
        "its ROC AUC and average precision null (recall 0/0)",
        base(y=[1, 0, 1, 0, 0]),
        lambda d: _mod("curves").curve_summaries(d, y_true="y", y_score="s", by="g", wide=True),
        check=_curve_negatives_only,
        requires="curves",
    ),
    Entry(
        "curve_duplicate_thresholds",
        "a threshold twice in an explicit curve grid",
        "error naming the threshold",
        base(),
        lambda d: _mod("curves").curve_counts(
            d, y_true="y", y_score="s", by="g", mode="grid", bins=[0.5, 0.2, 0.5]
        ),
        InvalidThresholdError,
        r"threshold 0.5 is given twice",
        "build",
        requires="curves",
    ),
    Entry(
        "curve_unsorted_thresholds",
        "an explicit curve grid in ascending order",
        "accepted; the curve table is sorted by threshold descending within each group",
        base(),
        lambda d: _mod("curves").curve_counts(
            d, y_true="y", y_score="s", by="g", mode="grid", bins=[0.2, 0.5]
        ),
        check=_unsorted_grid,
        requires="curves",
    ),
    Entry(
        "curve_group_named_like_curve_column",
        "a group column named like a curve column (`roc_curve(..., by='fpr')`)",
        "error naming the column (it was Polars' DuplicateError)",
        base().rename({"g": "fpr"}),
        lambda d: _mod("curves").roc_curve(d, y_true="y", y_score="s", by="fpr"),
        InvalidOptionError,
        r"group column 'fpr' collides with an output column name",
        "build",
        requires="curves",
    ),
    Entry(
        "pr_curve_per_group_without_negatives",
        "a deployment-corrected PR curve with `test_ratio='per_group'` where a group has no "
        "negatives",
        "error naming the group, as `deployment_counts` (the curve gave null precisions and an "
        "average precision of 0.0)",
        base(y=[1, 0, 1, 1, 1]),
        lambda d: _mod("curves").pr_curve(
            d,
            y_true="y",
            y_score="s",
            by="g",
            deploy_positive_rate=0.2,
            test_ratio="per_group",
        ),
        EmptyGroupError,
        r"no negatives in the group 'b' of column\(s\) \['g'\]",
        requires="curves",
    ),
    Entry(
        "curve_bins_not_an_integer",
        "a single number that is not a positive integer as `bins=` (2.5)",
        "error naming the value (it was read as a grid of the one threshold 2.5); NumPy "
        "integers are numbers of bins",
        base(),
        lambda d: _mod("curves").curve_counts(
            d, y_true="y", y_score="s", by="g", mode="grid", bins=2.5
        ),
        InvalidOptionError,
        r"bins=2.5 must be a positive integer \(the number of bins\) or a list of thresholds",
        "build",
        requires="curves",
    ),
    Entry(
        "fixed_grid_negative_scores",
        "`aupr_mode='fixed_grid'` on scores below 0 (with `score_bounds=None`)",
        "error naming the score and the group (the notebook's grid runs from the max score down "
        "to 0: it gave a negative AUPR)",
        base(s=[-0.5, -0.2, 0.4, 0.7, 0.6]),
        lambda d: _mod("curves").curve_summaries(
            d,
            y_true="y",
            y_score="s",
            by="g",
            score_bounds=None,
            summaries="aupr",
            aupr_mode="fixed_grid",
        ),
        InvalidScoreError,
        r"aupr_mode='fixed_grid' needs scores >= 0 .*a score is -0.5 in the group 'a' of "
        r"column\(s\) \['g'\]",
        requires="curves",
    ),
    Entry(
        "weights_zero_sum_stratum",
        "importance weights (uniform target) where one level's sample weights are all 0",
        "that level's rows get weight 0; the uniform target is "
        "over the levels with positive weight",
        base(w=[0.0, 0.0, 1.0, 1.0, 1.0]),
        lambda d: d.with_columns(_mod("weights").importance_weights("g", weight="w")),
        check=_zero_stratum_uniform,
        requires="weights",
    ),
    Entry(
        "weights_zero_sum_target_level",
        "an importance-weight target naming a level whose sample weights are all 0",
        "error naming the level and the column",
        base(w=[0.0, 0.0, 1.0, 1.0, 1.0]),
        lambda d: d.with_columns(
            _mod("weights").importance_weights(
                "g", weight="w", target={"a": 0.2, "b": 0.4, "c": 0.4}
            )
        ),
        EmptyGroupError,
        r"target mix names 'a' of column\(s\) \['g'\], which has no "
        r"rows with a positive weight",
        requires="weights",
    ),
    Entry(
        "weights_zero_sum_biased_set",
        "bias-adjusted weights where the rows of B all have weight 0",
        "error naming the flag column and the empty set",
        base(w=[0.0, 0.0, 1.0, 1.0, 1.0]),
        lambda d: d.with_columns(b=pl.col("g") == "a").with_columns(
            _mod("weights").bias_adjusted_weights("b", biased_share=0.3, weight="w")
        ),
        EmptyGroupError,
        r"column 'b' \(biased-set flag\) has no rows in B \(flag "
        r"True/1\)",
        requires="weights",
    ),
    Entry(
        "weights_conflicting_options",
        "`biased_share=` together with `biased_size=` / `population_size=`",
        "error: one or the other",
        base(),
        lambda d: d.with_columns(b=pl.col("g") == "a").with_columns(
            _mod("weights").bias_adjusted_weights(
                "b", biased_share=0.3, biased_size=3, population_size=10
            )
        ),
        InvalidOptionError,
        r"pass biased_share= or biased_size= with population_size=, not "
        r"both",
        "build",
        requires="weights",
    ),
    Entry(
        "weights_sizes_smaller_than_scored",
        "`biased_size=` smaller than the rows of B scored (2 flagged rows, `biased_size=1`)",
        "error naming the flag column, the rows and the sizes (the scored rows are items of the "
        "population: |B̲| ≤ |B| and |B̲^c| ≤ |U| − |B|); it used to give weights below 1/row",
        base(),
        lambda d: d.with_columns(b=pl.col("g") == "a").with_columns(
            _mod("weights").bias_adjusted_weights("b", biased_size=1, population_size=100)
        ),
        InvalidOptionError,
        r"column 'b' \(biased-set flag\) has 2 rows in B \(flag True/1\), more than the 1 items",
        requires="weights",
    ),
    Entry(
        "weights_name_replaces_input",
        "`with_importance_weights(..., name=...)` naming the group column the weights are "
        "computed from",
        "error naming the name (the group labels were silently replaced by their weights)",
        base(),
        lambda d: _mod("weights").with_importance_weights(d, "g", name="g"),
        InvalidOptionError,
        r"name='g' is a column the weights are computed from",
        "build",
        requires="weights",
    ),
    Entry(
        "weights_fractional_size",
        "a fractional `biased_size=` (20.5)",
        "error naming the value: sizes count items",
        base(),
        lambda d: d.with_columns(b=pl.col("g") == "a").with_columns(
            _mod("weights").bias_adjusted_weights("b", biased_size=20.5, population_size=100)
        ),
        InvalidOptionError,
        r"biased_size=20.5 is not an integer",
        "build",
        requires="weights",
    ),
    Entry(
        "weights_unknown_target",
        "an importance-weight target that is neither 'uniform' nor a mapping",
        "error naming the value",
        base(),
        lambda d: d.with_columns(_mod("weights").importance_weights("g", target="balanced")),
        InvalidOptionError,
        r"target='balanced': pass 'uniform' or a mapping",
        "build",
        requires="weights",
    ),
    Entry(
        "weights_target_unlisted_level",
        "an importance-weight target mapping that leaves out a group present in the data",
        "error naming the column and every level left out (with their rows); list them "
        "(probability 0 leaves one out on purpose) or pass `missing_groups='zero'`",
        base(),
        lambda d: d.with_columns(
            _mod("weights").importance_weights("g", target={"a": 0.5, "b": 0.5})
        ),
        InvalidOptionError,
        r"column\(s\) \['g'\] hold 1 level\(s\) that the target mix does not list: 'c' "
        r"\(1 row\)",
        requires="weights",
    ),
    Entry(
        "weights_target_unlisted_zero",
        "the same with `missing_groups='zero'`",
        "the left-out group's rows get weight 0; the others are reweighted to the target",
        base(),
        lambda d: d.with_columns(
            _mod("weights").importance_weights(
                "g", target={"a": 0.5, "b": 0.5}, missing_groups="zero"
            )
        ),
        check=_unlisted_zero,
        requires="weights",
    ),
    Entry(
        "weights_source_unlisted_level",
        "a given importance-weight source mix that does not list a group present in the data",
        "error naming the column and the levels",
        base(),
        lambda d: d.with_columns(
            _mod("weights").importance_weights("g", source={"a": 0.5, "b": 0.5})
        ),
        InvalidOptionError,
        r"column\(s\) \['g'\] hold 1 level\(s\) that the source mix does not list: 'c'",
        requires="weights",
    ),
    Entry(
        "weights_target_key_of_another_type",
        "an importance-weight target mapping whose keys are text for an integer group column "
        "(`{'1': 0.5, '2': 0.5}`), through a function that sees the frame",
        "error naming the key, the column and its dtype (keys are typed: never cast onto a group, "
        "never a raw Polars comparison error)",
        base(g=[1, 1, 2, 2, 2]),
        lambda d: _mod("weights").with_importance_weights(d, "g", target={"1": 0.5, "2": 0.5}),
        InvalidOptionError,
        r"target key '1' \(str\) cannot name a group of column 'g', which has dtype Int64",
        "build",
        requires="weights",
    ),
    Entry(
        "threshold_for_precision_text_grid",
        "`threshold_for_precision(threshold='0.5')` (text where the grid is expected)",
        "error naming the value (it was iterated character by character); one number is a "
        "grid of one threshold",
        base(),
        lambda d: pfm.threshold_for_precision(
            d, y_true="y", y_score="s", min_precision=0.5, threshold="0.5"
        ),
        InvalidOptionError,
        r"threshold='0.5' must be a list of numbers",
        "build",
    ),
    Entry(
        "deployment_mapping_key_of_another_type",
        "a per-group deployment rate mapping whose keys are text for an integer group column",
        "error naming the key, the column and its dtype (it used to match group 1 silently)",
        base(g=[1, 1, 2, 2, 2]),
        lambda d: pfm.deployment_metrics(
            d, deploy_positive_rate={"1": 0.1, "2": 0.2}, by="g", y_true="y", y_pred="p"
        ),
        InvalidOptionError,
        r"deployment mapping key '1' \(str\) cannot name a group of column 'g', which has "
        r"dtype Int64",
        "build",
    ),
    Entry(
        "weights_given_source_denominator",
        "importance-weighted metrics with a given source mix that the sample does not follow",
        "a mean over the population (error rate, accuracy, selection rate, base rate) is divided "
        "by the number of rows, the importance-weights note's estimator (it may exceed 1); "
        "`denominator='weights'` divides by the sum of the weights",
        base(),
        lambda d: _mod("weights").importance_weighted_metrics(
            d,
            "g",
            source={"a": 0.2, "b": 0.2, "c": 0.6},
            target={"a": 0.6, "b": 0.2, "c": 0.2},
            y_true="y",
            y_pred="p",
            metrics="error_rate",
        ),
        check=_given_source_rows,
        requires="weights",
    ),
    Entry(
        "weights_bad_denominator",
        "an unknown `denominator=` (or `missing_groups=`) of importance-weighted metrics",
        "error naming the option, the value and the choices",
        base(),
        lambda d: _mod("weights").importance_weighted_metrics(
            d, "g", y_true="y", y_pred="p", denominator="m"
        ),
        InvalidOptionError,
        r"denominator='m': pass one of 'rows', 'weights'",
        "build",
        requires="weights",
    ),
    Entry(
        "deployment_rate_out_of_range",
        "a deployment positive rate of 0 or 1 (or outside)",
        "error naming the value: the deployment class ratio would be undefined",
        base(),
        lambda d: _mod("deployment").deployment_counts(counts(d), deploy_positive_rate=1.0),
        InvalidOptionError,
        r"deploy_positive_rate=1.0 must be strictly between 0 and 1",
        "build",
        requires="deployment",
    ),
    Entry(
        "deployment_no_negatives",
        "a deployment correction of test data without negatives",
        "error: the test class ratio is undefined",
        base(y=[1, 1, 1, 1, 1]),
        lambda d: _mod("deployment").deployment_counts(counts(d), deploy_positive_rate=0.1),
        EmptyGroupError,
        r"no negatives in the test data \(column\(s\) \['fp', 'tn'\] sum to 0\)",
        requires="deployment",
    ),
    Entry(
        "deployment_mapping_unlisted_group",
        "a per-group deployment mapping that leaves out a group",
        "error naming the groups and the column",
        base(),
        lambda d: _mod("deployment").deployment_counts(
            counts(d), deploy_positive_rate={"a": 0.1, "b": 0.1}
        ),
        InvalidOptionError,
        r"the deployment mapping does not list the group\(s\) 'c' of column\(s\) \['g'\]",
        requires="deployment",
    ),
    Entry(
        "deployment_extra_key_columns",
        "a count table with key columns besides `by=`, given to a deployment function",
        "error naming the extra columns",
        base(h=[1, 2, 1, 2, 1]),
        lambda d: _mod("deployment").deployment_counts(
            pfm.confusion_counts(d, y_true="y", y_pred="p", by=["g", "h"]),
            deploy_positive_rate=0.1,
            by="g",
        ),
        InvalidOptionError,
        r"the count table has key column\(s\) \['h'\] besides by=\['g'\]",
        "build",
        requires="deployment",
    ),
    Entry(
        "deployment_no_threshold_reaches",
        "`threshold_for_precision` where no threshold of the grid reaches the precision in a group",
        "the group keeps its rows: `threshold` null, values null, supports 0, `n` and `n_null` "
        "as counted",
        base(),
        lambda d: _mod("deployment").threshold_for_precision(
            d, y_true="y", y_score="s", threshold=[0.3, 0.5], by="g", min_precision=0.9
        ),
        check=_no_threshold,
        requires="deployment",
    ),
    Entry(
        "properties_bad_ratio",
        "an IR outside [0, 1] (1.5)",
        "error naming the ratio, IR · n and the allowed range",
        base(),
        lambda d: _mod("properties").cells_from_ratios(56, [1.5], [0.5]),
        InvalidOptionError,
        r"IR = 1.5 gives IR \* n = 84.0 examples, not a whole number in \[0, 56\]",
        "build",
        requires="properties",
    ),
    Entry(
        "properties_inexact_ratio",
        "a GR that is not a multiple of 1/n (0.3 for n = 56)",
        "error naming the ratio and the nearest exact ratios",
        base(),
        lambda d: _mod("properties").cells_from_ratios(56, [0.5], [0.3]),
        InvalidOptionError,
        r"GR = 0.3 gives GR \* n = 16.8 examples.*nearest: 16/56 or 17/56",
        "build",
        requires="properties",
    ),
    Entry(
        "properties_n_too_large",
        "a measure-properties analysis with n = 10⁶",
        "error: the number of matrices overflows Int64",
        base(),
        lambda d: _mod("properties").measure_properties(10**6),
        InvalidOptionError,
        r"n = 1000000 gives C\(n \+ 7, 7\) = \d+ matrices, which overflows Int64",
        "build",
        requires="properties",
    ),
    Entry(
        "properties_over_time_budget",
        "a measure-properties analysis whose estimated time is over the budget (n = 300; "
        "`properties --n 300`)",
        "error before anything runs, naming n, the time/memory estimate and the limit "
        "(`max_seconds=`, default 120 s; `max_memory_gib=`, default 80 % of the available "
        "memory)",
        base(),
        lambda d: _mod("properties").measure_properties(300),
        InvalidOptionError,
        r"n = 300: the analysis would take about 5 min and 39.1 GiB "
        r"\(estimate_properties_cost\(300, what='analysis'\)\), over the time limit "
        r"max_seconds=120",
        "build",
        requires="properties",
    ),
    Entry(
        "properties_over_memory_budget",
        "a measure-properties computation whose estimated memory is over `max_memory_gib`",
        "error before anything runs, naming n, the estimate and the memory limit",
        base(),
        lambda d: _mod("properties").cell_summary(56, max_memory_gib=0.001),
        InvalidOptionError,
        r"n = 56: the summary would need under 1 s and [\d.]+ MiB .*over the memory limit "
        r"1.0 MiB \(max_memory_gib=0.001\)",
        "build",
        requires="properties",
    ),
    Entry(
        "properties_empty_grid",
        "a measure-properties analysis with an empty grid (`counts=[]`)",
        "error naming the option and the default grid",
        base(),
        lambda d: _mod("properties").analyze_measure_properties(12, counts=[]),
        InvalidOptionError,
        r"counts is empty: the grid needs at least one count in \[0, 12\] \(default: "
        r"paper_ratio_counts\(12\) = \[2, 3, 6, 9, 10\]\)",
        "build",
        requires="properties",
    ),
    Entry(
        "properties_fractional_count",
        "a grid count that is not an integer (2.5)",
        "error naming the count (never silently truncated to 2)",
        base(),
        lambda d: _mod("properties").analyze_measure_properties(12, counts=[2.5, 6]),
        InvalidOptionError,
        r"grid count 2.5 is not an integer \(counts are k in k/n\)",
        "build",
        requires="properties",
    ),
    Entry(
        "properties_n_one",
        "a measure-properties analysis for n = 1",
        "defined: every matrix has an empty group, so every value is undefined; the rules that "
        "need a defined value (resolution, perfect-fairness stability) give `holds` null "
        "(not decided), the exact-identity rules hold",
        base(),
        lambda d: _mod("properties").measure_properties(1),
        check=_properties_n_one,
        requires="properties",
    ),
    Entry(
        "properties_all_undefined_cell",
        "a cell where every matrix is undefined (equal opportunity with at most one actual "
        "positive, or an empty group)",
        "`p_undefined` 1 and `p_perfect` null (0/0 among the defined values), never 0",
        base(),
        lambda d: _mod("properties").cell_summary(6, measures="equal_opportunity"),
        check=_properties_all_undefined,
        requires="properties",
    ),
    Entry(
        "properties_undecidable_grid",
        "a grid with a single count (no pair of cells to compare along an axis)",
        "`holds` null with the reason in `evidence` (not decided), not false",
        base(),
        lambda d: _mod("properties").measure_properties(
            10, counts=[5], measures="accuracy_equality"
        ),
        check=_properties_single_count,
        requires="properties",
    ),
    Entry(
        "sampling_fractional_seed",
        "a subsample seed that is not an integer (1.5)",
        "error naming the option and the value (not a raw NumPy error)",
        base(),
        lambda d: _mod("sampling").sample_ir_gr(
            d, y_true="y", group="g", protected="a", n=2, ir=0.5, gr=0.5, seed=1.5
        ),
        InvalidOptionError,
        r"seed must be a non-negative integer \(the seed of numpy's default_rng\), got 1.5",
        "build",
        requires="sampling",
    ),
    Entry(
        "sampling_negative_seed",
        "a negative subsample seed (-1)",
        "error naming the option and the value",
        base(),
        lambda d: _mod("sampling").sample_ir_gr(
            d, y_true="y", group="g", protected="a", n=2, ir=0.5, gr=0.5, seed=-1
        ),
        InvalidOptionError,
        r"seed must be a non-negative integer \(the seed of numpy's default_rng\), got -1",
        "build",
        requires="sampling",
    ),
    Entry(
        "sampling_bad_ratio",
        "a subsample ratio outside [0, 1] or not a number (ir = 1.5, NaN)",
        "error naming the ratio and the value",
        base(),
        lambda d: _mod("sampling").sample_ir_gr(
            d, y_true="y", group="g", protected="a", n=2, ir=1.5, gr=0.5, seed=0
        ),
        InvalidOptionError,
        r"ir must be a number in \[0, 1\], got 1.5",
        "build",
        requires="sampling",
    ),
    Entry(
        "sampling_label_type",
        "a protected value of another type than its column (`protected=1` for a text column)",
        "error naming the column, its dtype and the value",
        base(),
        lambda d: _mod("sampling").sample_ir_gr(
            d, y_true="y", group="g", protected=1, n=2, ir=0.5, gr=0.5, seed=0
        ),
        InvalidDtypeError,
        r"column 'g' \(group\) has dtype String; protected=1 cannot be compared with it",
        "build",
        requires="sampling",
    ),
    Entry(
        "sampling_null_label",
        "`protected=None` (or `pos_label=None`)",
        "error: a null matches no row (rows with a null group belong to no stratum)",
        base(),
        lambda d: _mod("sampling").sample_ir_gr(
            d, y_true="y", group="g", protected=None, n=2, ir=0.5, gr=0.5, seed=0
        ),
        InvalidOptionError,
        r"protected=None: give a value of column 'g' \(group\)",
        "build",
        requires="sampling",
    ),
    Entry(
        "calibration_score_outside_0_1",
        "a score outside [0, 1] for calibration (`y_score` of 1.5)",
        "error naming the column and the score: calibration needs probabilities",
        base(s=[0.9, 0.2, 1.5, 0.7, 0.6]),
        lambda d: _mod("calibration").calibration_metrics(d, y_true="y", y_score="s", by="g"),
        InvalidScoreError,
        r"column 's' \(y_score\) has a score 1.5 outside \[0, 1\]",
        requires="calibration",
    ),
    Entry(
        "calibration_group_without_rows",
        "a group whose every row has a null label or score",
        "its calibration statistics are null with support 0; its rows are counted in `n_null`",
        base(y=[None, None, 1, 0, 1]),
        lambda d: _mod("calibration").calibration_metrics(d, y_true="y", y_score="s", by="g"),
        check=_calibration_group_without_rows,
        requires="calibration",
    ),
    Entry(
        "calibration_slope_separated",
        "scores that separate the classes (every positive scores above every negative)",
        "`calibration_slope` is null: the logistic fit has no maximum likelihood estimate",
        base(y=[1, 0, 0, 1, 1], s=[0.9, 0.2, 0.1, 0.7, 0.6]),
        lambda d: _mod("calibration").calibration_metrics(
            d, y_true="y", y_score="s", metrics="slope"
        ),
        check=_calibration_separated,
        requires="calibration",
    ),
    Entry(
        "monitor_store_counted_differently",
        "a batch counted with other options than its count store's (a weight added)",
        "`StoreError` naming the differences; counts of different options do not add up",
        base(),
        _store_counted_differently,
        StoreError,
        r"batch 'b2' is counted differently from the store .*weighted: store False, batch True",
        "build",
        requires="monitor",
    ),
    Entry(
        "monitor_change_gate_without_intervals",
        "a change gate requiring intervals on a change table computed without resamples",
        "error: compute `window_change` with `n_resamples > 0` or pass `require_interval=False`",
        base(),
        lambda d: _mod("monitor").change_gate(
            _mod("monitor").window_change(
                counts(d), counts(d), n_resamples=0, criteria="disparate_impact"
            ),
            max_increase=0.1,
        ),
        InvalidOptionError,
        r"change_gate\(require_interval=True\) needs intervals",
        "build",
        requires="monitor",
    ),
    Entry(
        "report_unknown_section",
        'an unknown report section (`report["fairness"]`)',
        "`SectionNotFoundError` (a `FairMetricsError` and a `KeyError`) naming the sections",
        base(),
        lambda d: _mod("report").audit(d, y_true="y", y_pred="p", by="g"),
        check=_section_error,
        requires="report",
    ),
    Entry(
        "report_unknown_gate",
        "a gate naming an unknown criterion or metric",
        "error naming the gate and the grammar",
        base(),
        lambda d: _mod("report").parse_gate("bogus_metric < 0.1"),
        InvalidOptionError,
        r"gate 'bogus_metric < 0.1': unknown name 'bogus_metric'; expected NAME OP NUMBER",
        "build",
        requires="report",
    ),
    Entry(
        "report_reference_absent",
        "an audit whose named reference group is not in the data",
        "error naming the group (its display label) and the groups present, before any section "
        "is computed",
        base(),
        lambda d: _mod("report").audit(d, y_true="y", y_pred="p", by="g", reference="zz"),
        ReferenceGroupError,
        r'reference group g="zz" not found among the groups of g; groups present: g="a", '
        r'g="b", g="c"',
        "build",
        requires="report",
    ),
    Entry(
        "report_group_column_collides",
        "an audit by a column named like a column of the report's sections (`share`)",
        "error naming the column",
        base().rename({"g": "share"}),
        lambda d: _mod("report").audit(d, y_true="y", y_pred="p", by="share"),
        InvalidOptionError,
        r"group column 'share' collides with a column of the report's sections",
        "build",
        requires="report",
    ),
    Entry(
        "report_options_and_keywords",
        "an audit given both an AuditOptions and keyword options",
        "error naming the keywords given (use dataclasses.replace)",
        base(),
        lambda d: _mod("report").audit(
            d, _mod("report").AuditOptions(y_true="y", y_pred="p", by="g"), weight="w"
        ),
        InvalidOptionError,
        r"pass the options as AuditOptions or as keywords, not both \(given: weight\)",
        "build",
        requires="report",
    ),
    Entry(
        "report_curve_grid_too_large",
        "an audit whose curve grid is larger than the report keeps (`curve_bins=10**7`)",
        "error naming the limit, before anything is read",
        base(),
        lambda d: _mod("report").audit(
            d, y_true="y", y_score="s", threshold=0.5, by="g", curve_bins=10**7
        ),
        InvalidOptionError,
        r"curve_bins must be a positive integer of at most 10000",
        "build",
        requires="report",
    ),
    Entry(
        "report_bad_seed",
        "an audit with a negative or fractional random seed (`seed=-1`, `seed=1.5`)",
        "error naming the value",
        base(),
        lambda d: _mod("report").audit(d, y_true="y", y_pred="p", by="g", intervals=10, seed=-1),
        InvalidOptionError,
        r"seed must be a non-negative integer \(the resamples' random seed\), got -1",
        "build",
        requires="report",
    ),
    Entry(
        "report_group_all_null",
        "an audit where a group's every label is null",
        "the group is in every section with n = 0, its n_null and null values (never dropped)",
        base(y=[1, 0, 1, 0, None]),
        lambda d: _mod("report").audit(d, y_true="y", y_pred="p", by="g"),
        check=_report_all_null_group,
        requires="report",
    ),
    Entry(
        "report_hostile_text",
        "group names with ANSI escapes, Markdown links/images, HTML, and a section named `../x`",
        "shown as text: control characters escaped visibly, Markdown and HTML neutralised, the "
        "Parquet file written inside its folder",
        base(
            g=[
                "\x1b[31mred",
                "\x1b[31mred",
                "![img](http://evil.example/x.png)",
                "<script>alert(1)</script>",
                "[x](javascript:alert(1))",
            ]
        ),
        _hostile_report,
        check=_report_hostile_names,
        requires="report",
    ),
    # --- several models side by side (compare_models) ----------------------------------------
    Entry(
        "models_missing_prediction",
        "a prediction column of compare_models that is not in the frame",
        "error naming the column and its role, before anything is read",
        base(),
        lambda d: _mod("models").compare_models(d, y_true="y", predictions=["p", "nope"], by="g"),
        ColumnNotFoundError,
        r"column 'nope' \(y_pred\) not found",
        "build",
        requires="models",
    ),
    Entry(
        "models_third_prediction_value",
        "one model's predictions outside {0, 1} (2)",
        "error naming that model's column and the value",
        base(q=[1, 0, 2, 0, 1]),
        lambda d: _mod("models").compare_models(d, y_true="y", predictions=["p", "q"], by="g"),
        InvalidLabelError,
        r"column 'q' \(y_pred\) has a value 2",
        requires="models",
    ),
    Entry(
        "models_duplicate_name",
        "the same prediction column given twice as a model (`predictions=['p', 'p']`)",
        "error naming the model",
        base(),
        lambda d: _mod("models").compare_models(d, y_true="y", predictions=["p", "p"], by="g"),
        InvalidOptionError,
        r"model name 'p' is given twice in predictions=",
        "build",
        requires="models",
    ),
    Entry(
        "models_too_many",
        "more than 10 models compared at once (the joint table has 2^M cells)",
        "error naming the limit",
        base(**{f"p{i}": [1, 0, 0, 1, 1] for i in range(11)}),
        lambda d: _mod("models").compare_models(
            d, y_true="y", predictions=[f"p{i}" for i in range(11)], by="g"
        ),
        InvalidOptionError,
        r"11 models: at most 10 are compared at once",
        "build",
        requires="models",
    ),
    Entry(
        "models_unknown_baseline",
        "a baseline_model that is not one of the models",
        "error naming the value and the models",
        base(),
        lambda d: _mod("models").compare_models(
            d, y_true="y", predictions=["p"], by="g", baseline_model="q"
        ),
        InvalidOptionError,
        r"baseline_model='q' is not one of the models \['p'\]",
        "build",
        requires="models",
    ),
    Entry(
        "models_null_prediction_one_model",
        "a null prediction of one model only",
        "the row is left out of every model (counted in n_null), so the models are compared on "
        "the same rows",
        base(q=[1, 0, None, 0, 1]),
        lambda d: _mod("models").compare_models(
            d, y_true="y", predictions=["p", "q"], by="g", metrics="tpr"
        ),
        check=lambda t: _check_models_null(t),
        requires="models",
    ),
    Entry(
        "models_long_duplicate_record",
        "the long layout with two records of one model for one row",
        "error naming the row and the model",
        pl.DataFrame(
            {"id": [1, 1, 2], "m": ["a", "a", "a"], "g": ["x", "x", "y"], "y": [1, 1, 0]}
        ).with_columns(p=pl.lit(1)),
        lambda d: _mod("models").compare_models_long(
            d, y_true="y", y_pred="p", model="m", row_id="id", by="g", models=["a"]
        ),
        InconsistentInputError,
        r"row 1 \(column 'id'\) has 2 records of model 'a' \(column 'm'\)",
        requires="models",
    ),
    Entry(
        "plot_missing_column",
        "a figure of a table without a column it draws (`plot_group_metrics` of a table without "
        '`value`, `plot_disparities(column="ratio")` without `ratio`)',
        "error naming the column and the columns the table has, before anything is collected",
        base(),
        lambda d: _mod("figures").plot_group_metrics(
            pfm.group_metrics(d, y_true="y", y_pred="p", by="g").drop("value")
        ),
        ColumnNotFoundError,
        r"plot_group_metrics needs a column 'value', which the table lacks",
        "build",
        requires="figures",
    ),
    Entry(
        "plot_curves_missing_curve",
        '`plot_curves(kind="pr")` of a `roc_curve` table',
        "error naming the missing column `precision`",
        base(p=[0.9, 0.2, 0.4, 0.6, 0.8]),
        lambda d: _mod("figures").plot_curves(
            pfm.roc_curve(d, y_true="y", y_score="p", by="g"), kind="pr"
        ),
        ColumnNotFoundError,
        r"plot_curves needs a column 'precision'",
        "build",
        requires="figures",
    ),
    Entry(
        "plot_ensemble_wrong_model_count",
        "a label-stability histogram with `n_models=` that cannot give the table's values",
        "error naming the value and the model counts: the bins are the values |2k − m| / m",
        base(q1=[0.9] * 5, q2=[0.8] * 5, q3=[0.1] * 5),
        lambda d: _mod("figures").plot_ensemble(
            None,
            samples=pfm.ensemble_sample_metrics(d, models=["q1", "q2", "q3"], keep=["g"]),
            n_models=4,
        ),
        InvalidOptionError,
        r"label stability 0\.333\d* is not a value \|2k - m\| / m for m in 4 models",
        "build",
        requires="figures",
    ),
]
"""Every catalogued input. Entries for capabilities merged later are appended here."""

PENDING: list[tuple[str, str, str]] = []
"""Catalog entries that belong to capabilities not merged yet: (id, input, capability)."""


def _collect(out: Any, engine: str) -> Any:
    return out.collect(engine=engine) if isinstance(out, pl.LazyFrame) else out


@pytest.mark.parametrize("entry", CATALOG, ids=[e.id for e in CATALOG])
def test_catalog(entry: Entry) -> None:
    """The input of the entry gets exactly the documented response, eager and lazy."""
    if entry.requires and importlib.util.find_spec(f"polars_fairmetrics.{entry.requires}") is None:
        pytest.skip(f"capability {entry.requires!r} not merged on this branch")
    if entry.raises is not None:
        assert entry.match is not None
        with pytest.raises(entry.raises, match=entry.match) as info:
            entry.call(entry.frame)
        # the package raises its own errors; a native `.fair` expression can only raise Polars'
        assert isinstance(info.value, (FairMetricsError, pl.exceptions.PolarsError))
        if entry.when == "build":
            with pytest.raises(entry.raises, match=entry.match):
                entry.call(entry.frame.lazy())
        else:
            lazy = entry.call(entry.frame.lazy())  # building the query does not raise
            for engine in ("in-memory", "streaming"):
                with pytest.raises(entry.raises, match=entry.match):
                    _collect(lazy, engine)
        return
    assert entry.check is not None
    entry.check(_collect(entry.call(entry.frame), "in-memory"))
    lazy = entry.call(entry.frame.lazy())
    for engine in ("in-memory", "streaming"):
        entry.check(_collect(lazy, engine))


def test_catalog_is_large_and_unique() -> None:
    ids = [e.id for e in CATALOG]
    assert len(ids) == len(set(ids)) >= 20
    assert not set(ids) & {p[0] for p in PENDING}


# ---------------------------------------------------------------------------------------------
# docs/errors.md is generated from the catalog
# ---------------------------------------------------------------------------------------------

_HEADER = """# Bad and awkward input: what the package does

The package is trusted with decisions about people: a wrong number is worse than an error. Every
input below gets either **a clear error** — a subclass of `FairMetricsError` (itself a
`ValueError`) whose message names the column and the offending value — or **a documented
result**, typically a null with its reason (undefined is null, never NaN, 0 or 1). Nothing is
dropped silently: rows with a null label, prediction or weight are counted in `n_null` (and its
breakdown), so `n + n_null` always equals the input rows.

**The `.fair` expressions** (`pl.col("p").fair.<metric>(y_true=...)`, `Counts.from_rows`,
`roc_auc`, `average_precision`) check their input with native Polars expressions, so that they
stream inside a user's own query. Only Polars can raise inside a native expression: bad values
raise **`polars.exceptions.InvalidOperationError`** (a `polars.exceptions.PolarsError`, not a
`FairMetricsError`), whose message quotes the package's message — the same text, naming the column
and the value — after Polars' own ``conversion from `str` to `i8` failed in column '<column>'``.
Their rows with a null label, prediction or weight are left out (not counted): use
`confusion_counts` / `group_metrics` to have them reported.

*When*: **build** errors come from the schema and the options and are raised when the query is
built (a LazyFrame is not scanned); **run** errors need the values and are raised when the query
runs (`collect`, either engine) — they come from a cheap summary computed by the one scan
(plain aggregations per cell of the count table, no per-row arithmetic: a weight's minimum and
null count beside its sum, a score's minimum and maximum), so validating costs almost nothing;
when a weight check fails, a second pass over the input, made only then, finds the value to name.

Each entry is one test, `tests/test_errors.py::test_catalog[<id>]`, run on a DataFrame and on a
LazyFrame with both engines. This page is generated from that catalog
(`PYTHONPATH=. python tests/test_errors.py`).

```python exec="on" source="block" result="text" session="errors"
import polars as pl
import polars_fairmetrics as pfm

df = pl.DataFrame({"g": ["a", "b"], "y": [1, 2], "p": [1, 0]})
try:
    pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
except pfm.InvalidLabelError as err:
    print(err)  # column 'y' (y_true) has a value 2 that is neither the positive label 1 ...

try:  # the expression form raises Polars' error, quoting the same message
    df.group_by("g").agg(pl.col("p").fair.true_positive_rate(y_true="y"))
except pl.exceptions.InvalidOperationError as err:
    print(err)  # ... failed in column 'y' ...: ["column 'y' (y_true) has a value 2 that is ..."]
```

"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render() -> str:
    lines = [
        _HEADER,
        "| # | input | what the package does | error / result | when | test |",
        "|---:|---|---|---|---|---|",
    ]
    for i, e in enumerate(CATALOG, start=1):
        outcome = "documented result"
        if e.raises is not None:
            pkg = e.raises.__module__.startswith("polars_fairmetrics")
            outcome = (
                f"`{e.raises.__name__}`" if pkg else f"`polars.exceptions.{e.raises.__name__}`"
            )
        when = e.when if e.raises is not None else "—"
        cap = f" ({e.requires})" if e.requires else ""
        lines.append(
            f"| {i} | {_cell(e.input)}{cap} | {_cell(e.does)} | {outcome} | {when} | "
            f"`test_catalog[{e.id}]` |"
        )
    if not PENDING:
        lines.append("")
        return "\n".join(lines)
    lines += [
        "",
        "## Entries for capabilities not merged yet",
        "",
        "These belong to capabilities developed on other branches; each becomes one `Entry(...)` "
        "line in `CATALOG` when its capability is merged.",
        "",
        "| id | input | capability |",
        "|---|---|---|",
    ]
    lines += [f"| `{i}` | {_cell(what)} | {cap} |" for i, what, cap in PENDING]
    lines.append("")
    return "\n".join(lines)


def test_errors_page_is_current() -> None:
    assert PAGE.read_text(encoding="utf-8") == render(), (
        "docs/errors.md is stale: run PYTHONPATH=. python tests/test_errors.py"
    )


def test_messages_name_column_and_value() -> None:
    """Every run-time value error names the column (or group columns) in its message."""
    for e in CATALOG:
        if e.raises is not None and e.when == "run":
            assert re.search(
                r"column '[^']+'|column\\\(s\\\) \\\[|not found in \\\[", e.match or ""
            ), e.id


if __name__ == "__main__":
    PAGE.write_text(render(), encoding="utf-8")
    sys.stdout.write(f"wrote {PAGE}\n")
