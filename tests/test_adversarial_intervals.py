"""Adversarial inputs to the interval machinery, and its invariants as properties.

Each defect found by feeding the bootstrap and interval API awkward inputs is pinned by a test
here (the class of input, not just the one example), and the invariants every interval table
must satisfy are checked on random small tables against independent oracles:

- an interval is either given (``ci_low <= ci_high``, both finite) or null with its reason in
  ``ci_note``; never NaN, never half null, never given for a null estimate;
- max-t intervals and the named reference's exact comparisons contain their estimate;
- the same seed gives the same table, eager, lazy and streaming alike;
- percentile and basic intervals are numpy's quantiles of the replicate values, computed here
  from the replicate count table by plain numpy.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_fairmetrics as pfm
from polars_fairmetrics.bootstrap import (
    MIN_DEFINED_SHARE,
    intervals,
    replicate_group_means,
    resample_counts,
    with_intervals,
)
from polars_fairmetrics.exceptions import (
    ColumnNotFoundError,
    InvalidDtypeError,
    InvalidOptionError,
    InvalidWeightError,
)

_PAIRS = (
    ("value", "ci_low", "ci_high"),
    ("difference", "difference_ci_low", "difference_ci_high"),
    ("ratio", "ratio_ci_low", "ratio_ci_high"),
    ("model_difference", "model_difference_ci_low", "model_difference_ci_high"),
)


def assert_valid_intervals(table: pl.DataFrame) -> None:
    """The invariants of every table with interval columns (docs/results.md)."""
    for name, dtype in table.schema.items():
        if dtype in (pl.Float32, pl.Float64):
            assert not table[name].is_nan().any(), f"NaN in {name}"
    for est, lo, hi in _PAIRS:
        if lo not in table.columns:
            continue
        for row in table.iter_rows(named=True):
            low, high = row[lo], row[hi]
            assert (low is None) == (high is None), (lo, row)
            if low is None:
                assert row["ci_note"], (lo, row)  # withheld: the reason is stated
                continue
            assert math.isfinite(low) and math.isfinite(high) and low <= high, (lo, row)
            if est in row:
                assert row[est] is not None, (est, row)  # no interval of an undefined value
                if row.get("ci_method") == "max-t":
                    assert low - 1e-12 <= row[est] <= high + 1e-12, (est, row)
            if row.get("is_reference") and est in ("difference", "ratio"):
                assert low == high == row[est], (est, row)


def _rows(cells: list[tuple[int, int, int, int]]) -> pl.DataFrame:
    """Rows with the given (tp, fp, tn, fn) per group a, b, c, …"""
    g: list[str] = []
    y: list[int] = []
    p: list[int] = []
    for k, (tp, fp, tn, fn) in enumerate(cells):
        for yy, pp, m in ((1, 1, tp), (0, 1, fp), (0, 0, tn), (1, 0, fn)):
            g += ["abcd"[k]] * m
            y += [yy] * m
            p += [pp] * m
    return pl.DataFrame(
        {"g": g, "y": y, "p": p}, schema={"g": pl.String, "y": pl.Int64, "p": pl.Int64}
    )


_CELL = st.integers(min_value=0, max_value=6)
_TABLES = st.lists(st.tuples(_CELL, _CELL, _CELL, _CELL), min_size=1, max_size=3).filter(
    lambda cells: sum(map(sum, cells)) > 0
)


@given(
    cells=_TABLES,
    b=st.sampled_from([1, 2, 3, 30]),
    level=st.sampled_from([0.5, 0.9, 0.999]),
    method=st.sampled_from(["percentile", "basic", "bca"]),
    what=st.sampled_from(["disparities", "criteria", "between_groups"]),
    reference=st.sampled_from(["overall", "rest", "a"]),
    stratify=st.booleans(),
)
def test_interval_invariants_on_tiny_tables(
    cells: list[tuple[int, int, int, int]],
    b: int,
    level: float,
    method: str,
    what: str,
    reference: str,
    stratify: bool,
) -> None:
    df = _rows(cells)

    def run(data: pl.DataFrame | pl.LazyFrame) -> Any:
        return pfm.bootstrap_metrics(
            data,
            y_true="y",
            y_pred="p",
            by="g",
            what=what,  # type: ignore[arg-type]
            metrics=["tpr", "fpr", "ppv", "accuracy"],
            reference=reference,
            n_resamples=b,
            level=level,
            method=method,  # type: ignore[arg-type]
            stratify=stratify or None,
            seed=3,
        )

    eager = run(df)
    assert_valid_intervals(eager)
    assert_frame_equal(run(df), eager)  # the same seed, the same intervals
    lazy = run(df.lazy())
    assert_frame_equal(lazy.collect(), eager)
    assert_frame_equal(lazy.collect(engine="streaming"), eager)


@given(
    cells=st.lists(
        st.tuples(*(st.integers(min_value=0, max_value=25),) * 4), min_size=1, max_size=3
    ).filter(lambda cells: sum(map(sum, cells)) > 0),
    b=st.integers(min_value=1, max_value=60),
    level=st.floats(min_value=0.05, max_value=0.995),
    method=st.sampled_from(["percentile", "basic"]),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_percentile_and_basic_are_numpy_quantiles_of_the_replicates(
    cells: list[tuple[int, int, int, int]], b: int, level: float, method: str, seed: int
) -> None:
    """Oracle: the true positive rate of every replicate by plain numpy from the replicate
    count table, its defined values' linear quantiles (numpy's default), the documented
    withholding rules; the interval engine must give exactly that."""
    counts = pfm.confusion_counts(_rows(cells), y_true="y", y_pred="p", by="g")
    reps = resample_counts(counts, n_resamples=b, seed=seed)
    out = with_intervals(
        pfm.metrics_from_counts(counts, metrics="tpr"),
        pfm.metrics_from_counts(reps, metrics="tpr"),
        method=method,  # type: ignore[arg-type]
        level=level,
    )
    assert_valid_intervals(out)
    alpha = 1 - level
    for row in out.iter_rows(named=True):
        obs = counts.filter(pl.col("g") == row["g"]).row(0, named=True)
        est = obs["tp"] / (obs["tp"] + obs["fn"]) if obs["tp"] + obs["fn"] else None
        mine = reps.filter(pl.col("g") == row["g"]).sort("replicate")
        tp, fn = mine["tp"].to_numpy(), mine["fn"].to_numpy()
        values = tp[tp + fn > 0] / (tp + fn)[tp + fn > 0]
        assert row["n_defined"] == values.size and row["n_resamples"] == b
        if est is None:
            assert row["ci_low"] is None and row["ci_note"] == "undefined on the observed data"
            continue
        assert row["value"] == pytest.approx(est)
        if values.size == 0 or values.size < MIN_DEFINED_SHARE * b or values.min() == values.max():
            assert row["ci_low"] is None and row["ci_note"]
            continue
        q_low, q_high = np.quantile(values, [alpha / 2, 1 - alpha / 2])
        if method == "basic":
            if obs["tp"] + obs["fn"] < 50:  # withheld on few rows (the coverage study)
                assert row["ci_low"] is None and "basic intervals" in row["ci_note"]
                continue
            q_low, q_high = 2 * est - q_high, 2 * est - q_low
        assert row["ci_low"] == pytest.approx(q_low, abs=1e-12)
        assert row["ci_high"] == pytest.approx(q_high, abs=1e-12)
        assert row["ci_note"] is None


_KEY_DTYPES = {
    "string": pl.String,
    "categorical": pl.Categorical,
    "enum": pl.Enum(["d", "c", "b", "a"]),
    "boolean": pl.Boolean,
    "integer": pl.Int16,
}


@settings(max_examples=max(20, settings().max_examples // 4))
@given(
    cells=_TABLES,
    kind=st.sampled_from(sorted(_KEY_DTYPES)),
    nulls=st.booleans(),
    second=st.booleans(),
    separately=st.booleans(),
    what=st.sampled_from(["disparities", "criteria", "between_groups"]),
)
def test_typed_and_null_group_keys_keep_their_type_and_intervals(
    cells: list[tuple[int, int, int, int]],
    kind: str,
    nulls: bool,
    second: bool,
    separately: bool,
    what: str,
) -> None:
    """Keys of every dtype, with a null group, one or two attributes (intersectional or side
    by side): the intervals satisfy the invariants, the keys keep their dtype, and the result
    is the same eager, lazy and streaming."""
    df = _rows(cells)
    key = pl.col("g")
    if kind == "boolean":
        key = pl.col("g") == "a"
    elif kind == "integer":
        key = pl.col("g").replace_strict({"a": 3, "b": 1, "c": 2})
    df = df.with_columns(key.cast(_KEY_DTYPES[kind]).alias("g"))
    if nulls:
        df = df.with_columns(pl.when(pl.col("y") == 0).then(None).otherwise(pl.col("g")).alias("g"))
    by = ["g", "h"] if second else ["g"]
    df = df.with_columns(h=(pl.int_range(pl.len()) % 2 == 0))

    def run(data: pl.DataFrame | pl.LazyFrame) -> Any:
        return pfm.bootstrap_metrics(
            data,
            y_true="y",
            y_pred="p",
            by=by,
            separately=separately and second,
            what=what,  # type: ignore[arg-type]
            metrics=["tpr", "selection_rate"],
            n_resamples=20,
            seed=1,
        )

    eager = run(df)
    assert_valid_intervals(eager)
    if what != "between_groups":
        assert eager.schema["g"] == df.schema["g"]
    lazy = run(df.lazy())
    assert_frame_equal(lazy.collect(), eager)
    assert_frame_equal(lazy.collect(engine="streaming"), eager)


@settings(max_examples=max(20, settings().max_examples // 4))
@given(
    cells=_TABLES,
    weights=st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0, 40.0]), min_size=1, max_size=4),
    method=st.sampled_from(["percentile", "bca"]),
    equal=st.booleans(),
)
def test_weighted_intervals_state_why_they_are_withheld(
    cells: list[tuple[int, int, int, int]], weights: list[float], method: str, equal: bool
) -> None:
    """On tiny weighted tables the Kish effective size (Σw)² / Σw² of a true positive rate's
    actual positives (computed here by numpy) is far below 200: with varying weights every
    percentile or BCa interval is withheld, and the note says so (never a silent null); with
    equal weights the rule does not apply."""
    df = _rows(cells)
    w = np.resize(np.array(weights if not equal else [2.0]), df.height)
    df = df.with_columns(w=pl.Series(w))
    out = pfm.bootstrap_metrics(
        df,
        y_true="y",
        y_pred="p",
        by="g",
        weight="w",
        what="metrics",
        metrics="tpr",
        n_resamples=20,
        method=method,  # type: ignore[arg-type]
    )
    assert_valid_intervals(out)
    for row in out.iter_rows(named=True):
        mine = df.filter((pl.col("g") == row["g"]) & (pl.col("y") == 1))["w"].to_numpy()
        if row["value"] is None or mine.sum() == 0:
            continue
        kish = mine.sum() ** 2 / (mine**2).sum()
        varying = mine[mine > 0].min() < mine.max() or (mine == 0).any()
        note = row["ci_note"] or ""
        if varying:
            # withheld; by the effective size unless an earlier rule (too few defined
            # resamples, a constant bootstrap distribution) already withheld it
            assert row["ci_low"] is None and note
            earlier = note.startswith(("every resample", "defined in only", "undefined", "BCa"))
            assert earlier or f"effective sample size {kish:.0f} < 200" in note
        else:
            assert "effective sample size" not in note


# ---------------------------------------------------------------------------------------------
# User statistics (intervals, bootstrap_counts, bootstrap_rows): the long replicate table
# ---------------------------------------------------------------------------------------------


def test_undefined_estimate_of_a_user_statistic_is_null_not_nan() -> None:
    """A NaN value (0/0 in a user's statistic) is the package's null: never NaN in a result."""
    reps = pl.DataFrame({"replicate": [0, 1, 2, 3], "value": [math.nan, 0.1, 0.2, math.nan]})
    out = intervals(reps)
    assert out["value"].to_list() == [None]
    assert out["ci_note"].to_list() == ["undefined on the observed data"]
    assert out["n_defined"].to_list() == [2]
    counts = pfm.confusion_counts(_rows([(3, 2, 4, 1)]), y_true="y", y_pred="p", by="g")
    nan = pfm.bootstrap_counts(
        counts,
        lambda t: t.select("replicate", "g", (pl.col("tp") * 0.0 / 0.0).alias("value")),
        n_resamples=5,
    )
    assert_valid_intervals(nan)
    assert nan["value"].to_list() == [None]


def test_infinite_estimate_gets_no_interval() -> None:
    reps = pl.DataFrame({"replicate": [0, 1, 2, 3], "value": [math.inf, 0.1, 0.2, 0.3]})
    out = intervals(reps)
    assert out["ci_low"].to_list() == [None]
    assert out["ci_note"].to_list() == ["infinite on the observed data"]


def test_every_statistic_needs_exactly_one_estimate() -> None:
    twice = pl.DataFrame({"replicate": [0, 0, 1, 2], "value": [0.2, 0.1, 0.2, 0.3]})
    with pytest.raises(InvalidOptionError, match=r"column 'replicate' is 0 .* in 2 rows"):
        intervals(twice)
    orphan = pl.DataFrame(
        {"k": ["a", "a", "b", "b"], "replicate": [0, 1, 1, 2], "value": [0.2, 0.1, 0.3, 0.4]}
    )
    with pytest.raises(InvalidOptionError, match=r"no 0 \(the estimate\) for k='b'"):
        intervals(orphan)
    with pytest.raises(InvalidOptionError, match=r"no 0 \(the estimate\) for k='b'"):
        intervals(orphan.lazy()).collect()


@pytest.mark.parametrize(
    ("table", "error", "match"),
    [
        ({"replicate": [0, 1], "value": ["a", "b"]}, InvalidDtypeError, "column 'value'"),
        ({"replicate": [0.0, 1.5], "value": [0.1, 0.2]}, InvalidDtypeError, "column 'replicate'"),
        ({"replicate": ["0", "1"], "value": [0.1, 0.2]}, InvalidDtypeError, "column 'replicate'"),
        ({"replicate": [0, None, 2], "value": [0.1, 0.2, 0.3]}, InvalidOptionError, "null"),
    ],
)
def test_malformed_replicate_tables_are_clear_errors(
    table: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        intervals(pl.DataFrame(table)).lazy().collect()


def test_user_statistics_returning_the_wrong_thing() -> None:
    counts = pfm.confusion_counts(_rows([(3, 2, 4, 1)]), y_true="y", y_pred="p", by="g")
    with pytest.raises(InvalidOptionError, match="must return a Polars DataFrame"):
        pfm.bootstrap_counts(counts, lambda t: None, n_resamples=3)  # type: ignore[arg-type,return-value]
    with pytest.raises(InvalidDtypeError, match="column 'value'"):
        pfm.bootstrap_counts(
            counts, lambda t: t.select("replicate", pl.lit("x").alias("value")), n_resamples=3
        )
    rows = _rows([(3, 2, 4, 1)])
    with pytest.raises(InvalidDtypeError, match="column 'value'"):
        pfm.bootstrap_rows(rows, lambda r: r.select(pl.lit("x").alias("value")), n_resamples=2)
    nan = pfm.bootstrap_rows(
        rows, lambda r: r.select(pl.lit(math.nan).alias("value")), n_resamples=2
    )
    assert nan["value"].to_list() == [None]


# ---------------------------------------------------------------------------------------------
# with_intervals: replicates that are not of the point table
# ---------------------------------------------------------------------------------------------


def _pair() -> tuple[pl.DataFrame, pl.DataFrame]:
    df = pl.DataFrame({"g": ["a"] * 30 + ["b"] * 30, "y": [1, 0] * 30, "p": [1, 1, 0] * 20})
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    return counts, resample_counts(counts, n_resamples=40, seed=1)


@pytest.mark.parametrize(
    "replicates",
    [
        lambda reps: pfm.disparities(reps, metrics="fpr"),  # another metric
        lambda reps: pfm.disparities(reps, metrics="tpr", reference="a"),  # another reference
        lambda reps: pfm.disparities(reps.with_columns(g=pl.lit("z")), metrics="tpr"),
    ],
    ids=["other_metric", "other_reference", "other_groups"],
)
def test_replicates_of_another_table_are_an_error(replicates: Any) -> None:
    """Before: every interval silently null, "undefined in every resample" (or, with another
    reference, the interval of the difference against the other reference)."""
    counts, reps = _pair()
    point = pfm.disparities(counts, metrics="tpr")
    with pytest.raises(InvalidOptionError, match=r"no row of the replicates matches"):
        with_intervals(point, replicates(reps))
    with pytest.raises(InvalidOptionError, match=r"no row of the replicates matches"):
        with_intervals(point.lazy(), replicates(reps)).collect(engine="streaming")


def test_replicates_without_resamples_are_an_error() -> None:
    counts, reps = _pair()
    point = pfm.disparities(counts, metrics="tpr")
    for empty in (pfm.disparities(reps, metrics="tpr").clear(), point.with_columns(replicate=0)):
        with pytest.raises(InvalidOptionError, match="hold no resample"):
            with_intervals(point, empty)


def test_with_intervals_takes_pandas_like_every_table_function() -> None:
    counts, reps = _pair()
    point = pfm.disparities(counts, metrics="tpr")
    expected = with_intervals(point, pfm.disparities(reps, metrics="tpr"))
    got = with_intervals(point.to_pandas(), pfm.disparities(reps, metrics="tpr").to_pandas())
    assert isinstance(got, pl.DataFrame)
    assert_frame_equal(got, expected, check_dtypes=False)


# ---------------------------------------------------------------------------------------------
# resample_counts: count tables that cannot be resampled
# ---------------------------------------------------------------------------------------------


def _counts() -> pl.DataFrame:
    return pfm.confusion_counts(_rows([(5, 3, 4, 2), (2, 6, 1, 3)]), y_true="y", y_pred="p", by="g")


def test_fractional_or_text_counts_are_refused_not_truncated() -> None:
    counts = _counts()
    with pytest.raises(
        InvalidDtypeError, match=r"column 'tp' of the count table has dtype Float64"
    ):
        resample_counts(counts.with_columns(pl.col("tp") + 0.5), n_resamples=3)
    with pytest.raises(InvalidDtypeError, match=r"column 'fn' .* dtype String"):
        resample_counts(counts.lazy().with_columns(fn=pl.lit("x")), n_resamples=3)
    with pytest.raises(InvalidOptionError, match=r"column 'tp' of the count table has 1 null"):
        resample_counts(
            counts.with_columns(tp=pl.when(pl.col("g") == "a").then(None).otherwise("tp")),
            n_resamples=3,
        )


def test_a_group_counted_twice_is_refused() -> None:
    counts = _counts()
    with pytest.raises(InvalidOptionError, match=r"several rows for g='a'"):
        resample_counts(pl.concat([counts, counts.filter(pl.col("g") == "a")]), n_resamples=3)


def test_groups_with_different_thresholds_are_refused_not_relabelled() -> None:
    """Before: group b's counts were relabelled with group a's thresholds."""
    df = _rows([(5, 3, 4, 2), (2, 6, 1, 3)]).with_columns(s=pl.int_range(pl.len()) / 40)
    counts = pfm.confusion_counts(df, y_true="y", y_score="s", threshold=[0.2, 0.5], by="g")
    shifted = counts.with_columns(
        threshold=pl.when(pl.col("g") == "b")
        .then(pl.col("threshold") + 0.01)
        .otherwise("threshold")
    )
    with pytest.raises(InvalidOptionError, match=r"column 'threshold' .* differs between groups"):
        resample_counts(shifted, n_resamples=2)
    same = resample_counts(counts, n_resamples=2)
    assert sorted(set(same["threshold"])) == [0.2, 0.5]


@pytest.mark.parametrize("scale", [1e200, 1e-300])
def test_weights_whose_squares_do_not_fit_float64_are_an_error(scale: float) -> None:
    """Before: a weight of 1e200 made its cell's sum of squares infinite (NumPy overflow
    warnings, every resample of its group equal, the effective-size rule skipped); weights of
    1e-300 made it 0 (the weights taken as equal: intervals given where they are withheld at
    any other scale)."""
    rng = np.random.default_rng(0)
    df = _rows([(40, 30, 50, 20), (30, 40, 20, 50)]).with_columns(
        w=pl.Series(rng.lognormal(0, 1, 280))
    )
    if scale > 1:
        df = df.with_columns(w=pl.when(pl.int_range(pl.len()) == 0).then(scale).otherwise("w"))
    else:
        df = df.with_columns(w=pl.col("w") * scale)
    with pytest.raises(InvalidWeightError, match=r"column '(tp|fp|tn|fn)_w2' of the count table"):
        pfm.bootstrap_metrics(df, y_true="y", y_pred="p", by="g", weight="w", n_resamples=5)


def test_weighted_intervals_do_not_depend_on_the_scale_of_the_weights() -> None:
    """Oracle: every rate and every resampled ratio is invariant to a common factor of the
    weights, so the intervals and the effective-size notes must be too."""
    rng = np.random.default_rng(1)
    df = _rows([(60, 50, 70, 40), (50, 60, 40, 70)]).with_columns(
        w=pl.Series(rng.lognormal(0, 0.3, 440))
    )

    def run(factor: float) -> pl.DataFrame:
        data = df.with_columns(pl.col("w") * factor)
        return pfm.bootstrap_metrics(
            data, y_true="y", y_pred="p", by="g", weight="w", metrics="tpr", n_resamples=50
        ).drop("n_w")

    base = run(1.0)
    assert_valid_intervals(base)
    for factor in (1e-120, 1e120):
        assert_frame_equal(run(factor), base, check_exact=False, rel_tol=1e-9)


# ---------------------------------------------------------------------------------------------
# replicate_group_means: the rows resampled in memory
# ---------------------------------------------------------------------------------------------


def test_replicate_group_means_validates_its_rows() -> None:
    rows = pl.DataFrame({"g": ["a", "a", "b"], "x": [0.1, 0.4, 0.5], "w": [1.0, 2.0, 1.0]})
    eager = replicate_group_means(rows, by=["g"], values=["x"], weight="w", n_resamples=5)
    assert_frame_equal(
        replicate_group_means(rows.lazy(), by=["g"], values=["x"], weight="w", n_resamples=5),
        eager,
    )
    assert eager.filter(pl.col("replicate") == 0)["value"].to_list() == pytest.approx([0.3, 0.5])
    with pytest.raises(ColumnNotFoundError, match="column 'zz' \\(values\\)"):
        replicate_group_means(rows, by=["g"], values=["zz"], n_resamples=5)
    with pytest.raises(InvalidDtypeError, match="column 'x' \\(values\\) has dtype String"):
        replicate_group_means(rows.with_columns(x=pl.lit("q")), by=["g"], values=["x"])
    for bad in (-1.0, math.inf, math.nan):
        with pytest.raises(InvalidWeightError, match="column 'w' \\(weight\\)"):
            replicate_group_means(
                rows.with_columns(w=pl.Series([1.0, bad, 1.0])), by=["g"], values=["x"], weight="w"
            )
    # a row with a null weight counts nowhere (as in the point estimates), not as NaN
    nulls = rows.with_columns(w=pl.Series([1.0, None, 1.0]))
    means = replicate_group_means(nulls, by=["g"], values=["x"], weight="w", n_resamples=5)
    assert means.filter(pl.col("replicate") == 0)["value"].to_list() == pytest.approx([0.1, 0.5])


# ---------------------------------------------------------------------------------------------
# Interval options given as NumPy scalars (np.int64 from a config array, np.float32 levels)
# ---------------------------------------------------------------------------------------------


def test_numpy_scalars_are_numbers_for_every_interval_option() -> None:
    """Before: ``level=np.float32(0.9)`` was refused as "not strictly between 0 and 1", and the
    audit refused ``intervals=np.int64(20)`` (which bootstrap_metrics accepted)."""
    df = _rows([(20, 10, 15, 5), (10, 20, 5, 15)])
    plain = pfm.bootstrap_metrics(
        df, y_true="y", y_pred="p", by="g", metrics="tpr", n_resamples=20, level=0.5, seed=2
    )
    numpy = pfm.bootstrap_metrics(
        df,
        y_true="y",
        y_pred="p",
        by="g",
        metrics="tpr",
        n_resamples=np.int64(20),
        level=np.float64(0.5),
        seed=np.uint32(2),
    )
    assert_frame_equal(numpy, plain)
    f32 = pfm.bootstrap_metrics(
        df, y_true="y", y_pred="p", by="g", metrics="tpr", n_resamples=20, level=np.float32(0.5)
    )
    assert f32["ci_level"].to_list() == [0.5, 0.5]
    report = pfm.audit(
        df, y_true="y", y_pred="p", by="g", intervals=np.int64(20), ci_level=np.float32(0.5)
    )
    expected = pfm.audit(df, y_true="y", y_pred="p", by="g", intervals=20, ci_level=0.5)
    assert_frame_equal(report["metrics"], expected["metrics"])
    assert type(report.inputs["intervals"]) is int and type(report.inputs["ci_level"]) is float
    models = pfm.compare_models(
        df, y_true="y", predictions=["p"], by="g", intervals=np.int64(5), ci_level=np.float32(0.9)
    )
    assert models["n_resamples"].to_list() == [5] * models.height
    for bad in (np.float64(1.0), np.True_, "0.9"):
        with pytest.raises(InvalidOptionError, match="level must be strictly between 0 and 1"):
            pfm.bootstrap_metrics(df, y_true="y", y_pred="p", by="g", n_resamples=5, level=bad)


# ---------------------------------------------------------------------------------------------
# Sample-dependent stratum weights: a stratum absent from a replicate
# ---------------------------------------------------------------------------------------------


def test_a_stratum_absent_from_a_replicate_weighs_nothing() -> None:
    """Before: a replicate that drew no row of a stratum gave its empty cells the weight
    p_s · N* / 0 = ∞ (NaN with p_s = 0), 0 · ∞ = NaN, and the whole replicate's statistic
    was undefined: about 1 replicate in 8 for a stratum of 2 rows in 200, and the interval
    withheld ("defined in only 35 of 40 resamples"). Oracle for the row engine: its documented
    draw (``rng.integers(0, n, size=n)`` per replicate), the reweighted true positive rate by
    numpy, numpy's quantiles."""
    rng = np.random.default_rng(3)
    n = 200
    y = rng.integers(0, 2, n)
    p = rng.integers(0, 2, n)
    in_b = np.arange(n) < 2
    df = pl.DataFrame({"g": ["a"] * n, "y": y, "p": p, "in_b": in_b})
    shares = {True: 0.0, False: 1.0}  # the stratum of 2 rows weighs nothing at all
    for engine in ("counts", "rows"):
        out = pfm.bootstrap_metrics(
            df,
            y_true="y",
            y_pred="p",
            by="g",
            what="metrics",
            metrics="tpr",
            reweight_by="in_b",
            population_shares=shares,
            n_resamples=40,
            seed=5,
            engine=engine,  # type: ignore[arg-type]
        )
        assert_valid_intervals(out)
        assert out["n_defined"].to_list() == [40], engine
        assert out["ci_note"].to_list() == [None], engine
        if engine == "rows":
            draws = np.random.default_rng(5)
            values = []
            for _ in range(40):
                m = np.bincount(draws.integers(0, n, size=n), minlength=n) * ~in_b
                values.append((m * y * p).sum() / (m * y).sum())
            low, high = np.quantile(values, [0.025, 0.975])
            assert out["ci_low"][0] == pytest.approx(low, abs=1e-12)
            assert out["ci_high"][0] == pytest.approx(high, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# Deployment-corrected metrics: a resample without negatives
# ---------------------------------------------------------------------------------------------


def test_a_resample_without_negatives_leaves_the_deployment_correction_undefined() -> None:
    """Before: one negative among 30 rows, and the audit with ``deploy_positive_rate=`` and
    intervals crashed with "no negatives in the test data (partition {'replicate': 1})" — the
    data has a negative; a resample that did not draw it has no test class ratio. Now that
    resample's corrected metrics are null (undefined), counted by ``n_defined``. Oracle: the
    replicates of the same seed that hold a negative, counted by numpy."""
    df = pl.DataFrame(
        {"g": ["a", "b"] * 15, "y": [1] * 29 + [0], "p": [1, 0, 0] * 10},
    )
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")

    def corrected(table: pl.DataFrame) -> pl.DataFrame:
        out = pfm.deployment_metrics(table, by="g", deploy_positive_rate=0.1, metrics="ppv")
        return out.select("replicate", "g", "metric", "value")

    out = pfm.bootstrap_counts(counts, corrected, n_resamples=50, seed=0)
    assert_valid_intervals(out)
    reps = resample_counts(counts, n_resamples=50, seed=0).with_columns(
        neg=(pl.col("fp") + pl.col("tn")).sum().over("replicate")
    )
    # defined: the resample has a negative (the pooled test ratio) and the group a predicted
    # positive (the precision's denominator)
    defined = reps.group_by("g").agg(
        ((pl.col("neg") > 0) & (pl.col("tp") + pl.col("fp") > 0)).sum().alias("n")
    )
    expected = defined.sort("g")["n"].to_list()
    assert all(0 < n < 50 for n in expected)
    assert out["n_defined"].to_list() == expected
    assert out["value"].null_count() == 0
    for method in ("percentile", "bca"):
        report = pfm.audit(
            df,
            y_true="y",
            y_pred="p",
            by="g",
            intervals=50,
            deploy_positive_rate=0.1,
            ci_method=method,
        )
        assert_valid_intervals(report["deployment"])
    with pytest.raises(pfm.EmptyGroupError, match="no negatives in the test data"):
        pfm.bootstrap_counts(  # the observed data must still have both classes
            counts.with_columns(fp=0, tn=0), corrected, n_resamples=5
        )


# ---------------------------------------------------------------------------------------------
# The monitoring and calibration intervals follow the same withholding rules
# ---------------------------------------------------------------------------------------------


def test_reliability_and_period_intervals_follow_the_withholding_rules() -> None:
    """Before: the second interval routine (reliability curves, period trends, window changes)
    gave an interval from the few resamples where a bin had rows (30 of 50: a conditional
    distribution) and zero-width intervals [1, 1] where every resample gave the same value —
    both withheld, with their reason, by with_intervals (docs/uncertainty.md) — and an
    interval of a difference whose estimate was null."""
    rng = np.random.default_rng(0)
    n = 40
    df = pl.DataFrame(
        {"g": rng.choice(["a", "b"], n), "y": rng.integers(0, 2, n), "s": rng.random(n).round(2)}
    )
    curve = pfm.reliability_curve(df, y_true="y", y_score="s", by="g", n_resamples=50)
    assert_valid_intervals(curve)
    few = curve.filter(pl.col("n_defined") < MIN_DEFINED_SHARE * 50)
    assert few.height and few["ci_low"].null_count() == few.height
    assert all(note.startswith("defined in only") for note in few["ci_note"])
    given = curve.filter(pl.col("ci_low").is_not_null())
    assert given.height and (given["ci_high"] > given["ci_low"]).all()
    assert_frame_equal(
        pfm.reliability_curve(df.lazy(), y_true="y", y_score="s", by="g", n_resamples=50).collect(
            engine="streaming"
        ),
        curve,
    )

    counts = pfm.confusion_counts(
        _rows([(8, 2, 9, 1), (0, 5, 7, 0), (6, 3, 5, 4)]), y_true="y", y_pred="p", by="g"
    ).with_columns(period=pl.lit(1))
    trend = pfm.period_disparities(counts, metrics="tpr", reference="a", n_resamples=60)
    assert_valid_intervals(trend)
    reference = trend.filter(pl.col("g") == "a").row(0, named=True)
    assert reference["difference_ci_low"] == reference["difference_ci_high"] == 0.0
    # group b has no actual positive: its TPR, difference and ratio are undefined
    b = trend.filter(pl.col("g") == "b").row(0, named=True)
    assert b["value"] is None and b["difference_ci_low"] is None and b["ci_note"]


def test_between_groups_intervals_need_the_observed_table_of_point() -> None:
    """Before: ``counts=`` of another table gave max-t intervals around that table's group
    values, which need not contain point's own max − min."""
    counts, reps = _pair()
    other = pfm.confusion_counts(
        _rows([(9, 1, 8, 2), (2, 7, 3, 8)]), y_true="y", y_pred="p", by="g"
    )
    point = pfm.between_groups(counts, metrics=["tpr", "accuracy"])
    good = with_intervals(point, reps, counts=counts)
    assert_valid_intervals(good)
    with pytest.raises(InvalidOptionError, match="the observed group values give max − min"):
        with_intervals(point, reps, counts=other)


def test_tied_groups_have_a_between_groups_difference_of_plus_zero() -> None:
    """Before: groups with equal values gave max − min = −0.0 (printed "-0.0"), the negated
    min − max; a max − min is never negative. Its max-t interval starts at 0 and holds it."""
    df = _rows([(10, 5, 12, 6), (10, 5, 12, 6)])
    out = pfm.bootstrap_metrics(
        df, y_true="y", y_pred="p", by="g", what="between_groups", metrics="tpr", n_resamples=30
    )
    row = out.row(0, named=True)
    assert row["difference"] == 0.0 and math.copysign(1.0, row["difference"]) == 1.0
    assert row["ratio"] == 1.0
    assert row["ci_method"] == "max-t" and row["difference_ci_low"] == 0.0
    assert row["difference_ci_high"] > 0.0 and row["ratio_ci_high"] == 1.0
    assert_valid_intervals(out)


def test_infinite_ratios_get_no_interval_and_no_numpy_warning() -> None:
    """``zero_reference="infinity"``: a ratio against a reference whose value is 0 is ±inf, on
    the observed data and in the resamples. Before: NumPy's "invalid value encountered in
    subtract" (∞ − ∞ interpolating the quantiles; an error under -W error) and an interval
    given for an infinite estimate."""
    df = pl.DataFrame({"g": ["a"] * 30 + ["b"] * 30, "y": [1, 0] * 30, "p": [0] * 30 + [1, 0] * 15})
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    reps = resample_counts(counts, n_resamples=40)

    def stat(table: pl.DataFrame) -> pl.DataFrame:
        return pfm.disparities(
            table, metrics="selection_rate", reference="a", zero_reference="infinity"
        )

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = with_intervals(stat(counts), stat(reps))
    assert_valid_intervals(out)
    b = out.filter(pl.col("g") == "b").row(0, named=True)
    assert b["ratio"] == math.inf and b["ratio_ci_low"] is None
    assert "ratio: infinite on the observed data" in b["ci_note"]
    assert b["difference_ci_low"] is not None  # the difference is finite and varies


def test_weighted_curve_summaries_follow_the_effective_size_rule() -> None:
    """Before: with heavy weights the true positive rates' intervals were withheld (effective
    size 33 and 18) while ROC AUC, average precision and AUPR of the same rows got intervals
    without a note: the rule did not know the summaries' rows, nor read a thresholded count
    table, and the audit's curve table had no ``n_w``. Oracle: numpy's Kish size of each
    group's positives (and negatives, for ROC AUC)."""
    rng = np.random.default_rng(0)
    n = 1500
    df = pl.DataFrame(
        {
            "g": rng.choice(["a", "b"], n),
            "y": rng.integers(0, 2, n),
            "s": rng.random(n).round(3),
            "w": rng.lognormal(0, 2.0, n),
        }
    )

    def kish(w: Any) -> float:
        return float(w.sum() ** 2 / (w**2).sum())

    expected = {}
    for g in ("a", "b"):
        part = df.filter(pl.col("g") == g)
        pos = kish(part.filter(pl.col("y") == 1)["w"].to_numpy())
        neg = kish(part.filter(pl.col("y") == 0)["w"].to_numpy())
        expected |= {(g, "roc_auc"): min(pos, neg), (g, "average_precision"): pos}
        expected[(g, "aupr")] = pos
    counts = pfm.confusion_counts(
        df,
        y_true="y",
        y_score="s",
        threshold=[0.2, 0.5, 0.8],
        by="g",
        weight="w",
        weight_squares=True,
    )
    reps = resample_counts(counts, n_resamples=40)
    direct = with_intervals(pfm.curve_summaries(counts), pfm.curve_summaries(reps), counts=counts)
    audit = pfm.audit(
        df, y_true="y", y_score="s", threshold=0.5, by="g", intervals=40, curves=True, weight="w"
    )["curve_summaries"]
    for out in (direct, audit):
        assert_valid_intervals(out)
        for row in out.iter_rows(named=True):
            ess = expected[(row["g"], row["metric"])]
            assert ess < 200 and row["ci_low"] is None
            assert f"effective sample size {ess:.0f} < 200" in row["ci_note"]
    unweighted = pfm.audit(df, y_true="y", y_score="s", threshold=0.5, by="g", intervals=40)
    assert unweighted["curve_summaries"]["ci_low"].null_count() == 0


def test_weighted_ensemble_means_follow_the_effective_size_rule() -> None:
    """Before: the audit's ensemble means (stability section) got intervals on heavily
    weighted rows (Kish size 57 of 1500 rows) with no note, while every other weighted interval
    is withheld below 200. Oracle: numpy's Kish size of each group's rows; equal weights are
    the unweighted bootstrap (same intervals)."""
    rng = np.random.default_rng(0)
    n = 3000
    s = rng.random(n)
    df = pl.DataFrame(
        {
            "g": rng.choice(["a", "b"], n),
            "y": rng.integers(0, 2, n),
            "m1": s,
            "m2": np.clip(s + rng.normal(0, 0.3, n), 0, 1),
            "m3": np.clip(s + rng.normal(0, 0.4, n), 0, 1),
            "w": rng.lognormal(0, 2.5, n),
        }
    ).with_columns(p=(pl.col("m1") > 0.5).cast(pl.Int64))
    opts: dict[str, Any] = {
        "y_true": "y",
        "y_pred": "p",
        "by": "g",
        "models": ["m1", "m2", "m3"],
        "intervals": 30,
    }
    heavy = pfm.audit(df, weight="w", **opts)["stability"]
    assert_valid_intervals(heavy)
    for row in heavy.iter_rows(named=True):
        w = df.filter(pl.col("g") == row["g"])["w"].to_numpy()
        ess = w.sum() ** 2 / (w**2).sum()
        assert row["ci_low"] is None
        assert f"effective sample size {ess:.0f} < 200" in row["ci_note"]
    equal = pfm.audit(df.with_columns(w=pl.lit(2.0)), weight="w", **opts)["stability"]
    plain = pfm.audit(df, **opts)["stability"]
    cols = ["g", "metric", "ci_low", "ci_high", "ci_note"]
    assert_frame_equal(equal.select(cols), plain.select(cols), check_exact=False, rel_tol=1e-9)
    assert plain["ci_low"].null_count() == 0
