"""Count stores on Delta Lake, audits over time, change tests, gates and the monitor CLI.

The central property: a window merged from daily stores equals the audit of the concatenated
rows — to the last bit for counts — on both engines (hypothesis, with null keys, null labels,
weights, thresholds and score cells). A writer killed mid-write leaves a readable store and the
batch re-runnable (a real subprocess, killed while its data file is on disk and its commit is
not).
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_fairmetrics as pfm
from polars_fairmetrics import monitor
from polars_fairmetrics.exceptions import InvalidOptionError, StoreError

deltalake = pytest.importorskip("deltalake")

ROOT = Path(__file__).resolve().parents[1]
D0 = dt.date(2024, 1, 1)
ENGINES = ["in-memory", "streaming"]


def _collect(frame: pl.LazyFrame, engine: str) -> pl.DataFrame:
    return frame.collect(engine="streaming") if engine == "streaming" else frame.collect()


def _sorted(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    return frame.sort(
        ["attribute", *keys, *[c for c in ("threshold", "score") if c in frame.columns]],
        nulls_last=True,
    )


@st.composite
def batches(draw: Any) -> tuple[list[pl.DataFrame], bool]:
    """Rows of a few days: two attributes with nulls, null labels, scores, maybe weights."""
    n_days = draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    weighted = draw(st.booleans())
    days = []
    for _ in range(n_days):
        n = int(rng.integers(0, 40))
        race = rng.choice(np.array(["x", "y", "z", None], dtype=object), n).tolist()
        sex = rng.choice(np.array([1, 2, None], dtype=object), n).tolist()
        y = rng.choice(np.array([0, 1, None], dtype=object), n, p=[0.45, 0.45, 0.1]).tolist()
        s = np.round(rng.random(n), 1)
        days.append(
            pl.DataFrame(
                {
                    "race": race,
                    "sex": sex,
                    "y": y,
                    "p": (s >= 0.5).astype(np.int64),
                    "s": s,
                    "w": np.round(rng.random(n) * 2, 3),
                },
                schema={
                    "race": pl.String,
                    "sex": pl.Int64,
                    "y": pl.Int64,
                    "p": pl.Int64,
                    "s": pl.Float64,
                    "w": pl.Float64,
                },
            )
        )
    return days, weighted


def _store() -> str:
    return tempfile.mkdtemp(prefix="pfm_monitor_") + "/store"


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=batches(), thresholds=st.sampled_from([None, [0.3, 0.6]]))
def test_window_of_daily_stores_equals_the_concatenated_rows(
    data: tuple[list[pl.DataFrame], bool], thresholds: list[float] | None
) -> None:
    days, weighted = data
    store = _store()
    options: dict[str, Any] = {
        "y_true": "y",
        "by": ["race", "sex"],
        "weight": "w" if weighted else None,
    }
    counting: dict[str, Any] = (
        {"y_pred": "p"} if thresholds is None else {"y_score": "s", "threshold": thresholds}
    )
    append: dict[str, Any] = {**options, "y_score": "s", "cells": True}
    append.update({"y_pred": "p"} if thresholds is None else {"threshold": thresholds})
    for i, day in enumerate(days):
        monitor.append_batch(
            day, store, batch_id=f"day-{i}", period=D0 + dt.timedelta(days=i), **append
        )
    rows = pl.concat(days)
    expected = pfm.confusion_counts(rows, separately=True, **options, **counting)
    expected_cells = pfm.score_cells(
        rows,
        y_true="y",
        y_score="s",
        by=["race", "sex"],
        weight=options["weight"],
        separately=True,
    )
    keys = ["race", "sex"]
    for engine in ENGINES:
        merged = _collect(monitor.read_counts(store, merge=True), engine)
        assert set(merged["model"].to_list()) <= {"default"}
        got = _sorted(merged.drop("model"), keys)
        want = _sorted(expected, keys).select(got.columns)
        ints = [c for c in got.columns if got.schema[c] == pl.Int64]
        assert_frame_equal(got.select(ints), want.select(ints))  # counts: to the last bit
        assert_frame_equal(got, want, check_exact=False, rel_tol=1e-12)
        cells = _sorted(_collect(monitor.read_cells(store, merge=True), engine).drop("model"), keys)
        want_cells = _sorted(expected_cells, keys).select(cells.columns)
        ints = [c for c in cells.columns if cells.schema[c] == pl.Int64]
        assert_frame_equal(cells.select(ints), want_cells.select(ints))
        assert_frame_equal(cells, want_cells, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)
        # the audit of the window is the audit of the rows
        if rows.height:
            a = pfm.fairness_criteria(merged.drop("model"), by=keys)
            b = pfm.fairness_criteria(expected, by=keys)
            assert_frame_equal(_sorted(a, keys), _sorted(b, keys), rel_tol=1e-12)
        # each period is its day
        per_day = _collect(monitor.read_counts(store), engine)
        for i, day in enumerate(days):
            period = per_day.filter(pl.col("period") == D0 + dt.timedelta(days=i))
            own = pfm.confusion_counts(day, separately=True, **options, **counting)
            ints = [c for c in own.columns if own.schema[c] == pl.Int64]
            assert_frame_equal(
                _sorted(period.select(own.columns), keys).select(ints),
                _sorted(own, keys).select(ints),
            )


def test_a_window_reads_only_its_periods_and_models() -> None:
    store = _store()
    rng = np.random.default_rng(0)
    frames = {}
    for model in ("m1", "m2"):
        for i in range(4):
            df = pl.DataFrame(
                {
                    "g": rng.choice(["a", "b"], 30),
                    "y": rng.integers(0, 2, 30),
                    "p": rng.integers(0, 2, 30),
                }
            )
            frames[(model, i)] = df
            monitor.append_batch(
                df,
                store,
                batch_id=f"{model}-{i}",
                period=D0 + dt.timedelta(i),
                model=model,
                y_true="y",
                y_pred="p",
                by="g",
            )
    got = monitor.read_counts(
        store, start=D0 + dt.timedelta(1), end="2024-01-03", models="m2", merge=True
    ).collect()
    rows = pl.concat([frames[("m2", 1)], frames[("m2", 2)]])
    want = pfm.confusion_counts(rows, y_true="y", y_pred="p", by="g", separately=True)
    assert_frame_equal(got.drop("model"), want)
    plan = monitor.read_counts(store, start=D0 + dt.timedelta(3)).explain()
    assert "period=2024-01-04" in plan and "period=2024-01-01" not in plan  # partition pruning


def test_rerun_replaces_never_appends_and_skip_error_modes() -> None:
    store = _store()
    df = pl.DataFrame({"g": ["a", "b", "a"], "y": [1, 0, 1], "p": [1, 1, 0]})
    options: dict[str, Any] = {"y_true": "y", "y_pred": "p", "by": "g", "period": D0}
    first = monitor.append_batch(df, store, batch_id="b1", **options)
    again = monitor.append_batch(df, store, batch_id="b1", **options)
    assert first.written and again.written and again.version == first.version + 1
    assert monitor.read_counts(store).collect()["n"].sum() == 3
    assert monitor.store_batches(store).height == 1
    skipped = monitor.append_batch(df, store, batch_id="b1", if_exists="skip", **options)
    assert not skipped.written and skipped.version is None
    with pytest.raises(StoreError, match="already in the store"):
        monitor.append_batch(df, store, batch_id="b1", if_exists="error", **options)
    # a re-run with corrected rows replaces the batch's rows in one commit
    monitor.append_batch(df.head(1), store, batch_id="b1", **options)
    assert monitor.read_counts(store).collect()["n"].sum() == 1
    # a quote in a batch id is data, not SQL
    monitor.append_batch(df, store, batch_id="it's", **options)
    monitor.append_batch(df, store, batch_id="it's", **options)
    assert monitor.store_batches(store)["batch_id"].sort().to_list() == ["b1", "it's"]
    assert monitor.read_counts(store).collect()["n"].sum() == 4


def test_time_travel_and_metadata() -> None:
    store = _store()
    df = pl.DataFrame({"g": ["a", "b"], "y": [1, 0], "p": [1, 1]})
    monitor.append_batch(df, store, batch_id="b1", period=1, y_true="y", y_pred="p", by="g")
    monitor.append_batch(df, store, batch_id="b2", period=2, y_true="y", y_pred="p", by="g")
    assert monitor.read_counts(store, version=0).collect()["period"].unique().to_list() == [1]
    batches = monitor.store_batches(store)
    assert batches["batch_id"].to_list() == ["b1", "b2"]
    assert batches["rows"].to_list() == [2, 2]
    assert (batches["schema_version"] == 1).all()  # no ensemble sums: version 1, as before
    assert batches["package_version"][0] == pfm.__version__
    assert '"by": ["g"]' in batches["options"][0]
    history = deltalake.DeltaTable(store).history()
    assert history[0]["polars_fairmetrics.batch_id"] == "b2"
    with pytest.raises(StoreError, match="no version 7"):
        monitor.read_counts(store, version=7)


def test_store_refuses_batches_counted_differently() -> None:
    store = _store()
    df = pl.DataFrame(
        {
            "g": ["a", "b"],
            "h": ["x", "y"],
            "y": [1, 0],
            "p": [1, 1],
            "w": [1.0, 2.0],
            "s": [0.2, 0.7],
        }
    )
    monitor.append_batch(df, store, batch_id="b1", period=D0, y_true="y", y_pred="p", by="g")
    for options in (
        {"by": ["g", "h"], "y_pred": "p"},
        {"by": "g", "y_pred": "p", "weight": "w"},
        {"by": "g", "y_score": "s", "threshold": 0.5, "cells": False},
        {"by": "g", "y_pred": "p", "y_score": "s"},
    ):
        with pytest.raises(StoreError, match="counted differently"):
            monitor.append_batch(df, store, batch_id="b2", period=D0, y_true="y", **options)
    with pytest.raises(InvalidOptionError, match="period"):
        monitor.append_batch(
            df, store, batch_id="b2", period="monday", y_true="y", y_pred="p", by="g"
        )
    with pytest.raises(StoreError, match="not a polars_fairmetrics count store"):
        other = _store()
        pl.DataFrame({"a": [1]}).write_delta(other)
        monitor.read_counts(other)
    with pytest.raises(StoreError, match="no count store"):
        monitor.read_counts(_store())


@pytest.mark.parametrize(
    ("period", "dtype"),
    [
        (D0, pl.Date),
        (202401, pl.Int64),
        ("2024-W01", pl.String),
        (dt.datetime(2024, 1, 1, 6, tzinfo=dt.timezone.utc), pl.Datetime("us", "UTC")),
    ],
)
def test_period_types(period: Any, dtype: pl.DataType) -> None:
    store = _store()
    df = pl.DataFrame(
        {
            "g": pl.Series(["a", "b"], dtype=pl.Categorical),
            "u": pl.Series([1, 200], dtype=pl.UInt8),
            "y": [1, 0],
            "p": [1, 1],
        }
    )
    monitor.append_batch(
        df, store, batch_id="b", period=period, y_true="y", y_pred="p", by=["g", "u"]
    )
    got = monitor.read_counts(store).collect()
    assert got.schema["period"] == dtype
    assert got.schema["g"] == pl.String and got.schema["u"] == pl.Int64  # stored as Delta types
    assert sorted(got["u"].drop_nulls().to_list()) == [1, 200]


def test_bad_append_options() -> None:
    df = pl.DataFrame({"g": ["a"], "period": ["x"], "y": [1], "p": [1], "s": [0.5]})
    store = _store()
    cases = [
        ({"batch_id": "", "by": "g", "y_pred": "p"}, "batch_id"),
        ({"batch_id": "a\nb", "by": "g", "y_pred": "p"}, "batch_id"),
        ({"batch_id": "b", "by": [], "y_pred": "p"}, "at least one"),
        ({"batch_id": "b", "by": "g"}, "nothing to store"),
        ({"batch_id": "b", "by": "g", "y_pred": "p", "cells": True}, "cells=True needs y_score"),
        ({"batch_id": "b", "by": "g", "y_pred": "p", "if_exists": "append"}, "if_exists"),
        ({"batch_id": "b", "by": "g", "y_pred": "p", "threshold": 0.5}, "threshold= applies"),
    ]
    for options, match in cases:
        with pytest.raises(InvalidOptionError, match=match):
            monitor.append_batch(df, store, period=1, y_true="y", **options)
    with pytest.raises(InvalidOptionError, match="collides"):
        monitor.append_batch(
            df.rename({"g": "batch_id"}),
            store,
            batch_id="b",
            period=1,
            y_true="y",
            y_pred="p",
            by="batch_id",
        )


# ---------------------------------------------------------------------------------------------
# A killed writer
# ---------------------------------------------------------------------------------------------

WRITER = r"""
import sys
import numpy as np
import polars as pl
from polars_fairmetrics import monitor

store = sys.argv[1]
n = 200_000
print("ready", flush=True)
for i in range(100):
    k = np.arange(n)
    rows = pl.DataFrame({"k": k + i, "y": k % 2, "p": (k // 2) % 2})
    monitor.append_batch(rows, store, batch_id=f"b{i}", period=i, y_true="y", y_pred="p", by="k")
    print("done", i, flush=True)
"""


def _expected(i: int) -> pl.DataFrame:
    n = 200_000
    rows = pl.DataFrame(
        {"k": np.arange(n) + i, "y": np.arange(n) % 2, "p": (np.arange(n) // 2) % 2}
    )
    return pfm.confusion_counts(rows, y_true="y", y_pred="p", by="k", separately=True)


def _data_files(store: str) -> set[str]:
    return {str(p) for p in Path(store).rglob("*.parquet")}


def _kill_mid_write(store: str, at_period: int) -> None:
    """Run the writer; SIGKILL it as soon as a data file of ``at_period`` is on disk."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, store], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 240
        marker = f"period={at_period}"
        while time.monotonic() < deadline:
            if any(marker in f for f in _data_files(store)):
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.0005)
        else:  # pragma: no cover - a stuck writer
            raise AssertionError("the writer never reached the period")
    finally:
        proc.kill()
        proc.wait(timeout=60)
        if proc.stdout is not None:
            proc.stdout.close()


def _kill_and_check(store: str) -> bool:
    """Kill a writer mid-batch, check the store, re-run; True when killed before the commit."""
    _kill_mid_write(store, at_period=2)
    # the store reads, and holds only whole batches
    table = deltalake.DeltaTable(store)
    committed = {str(Path(store) / f) for f in table.file_uris()} | {
        str(Path(p)) for p in table.file_uris()
    }
    orphans = {f for f in _data_files(store) if f not in committed}
    per_period = monitor.read_counts(store).collect()
    periods = sorted(per_period["period"].unique().to_list())
    assert periods in ([0, 1], [0, 1, 2])
    for i in periods:
        got = per_period.filter(pl.col("period") == i).drop("model", "period")
        assert_frame_equal(got, _expected(i))
    if periods == [0, 1]:
        # killed between writing the data file and committing: the file is left unreferenced
        assert orphans, "the batch is absent, so its data file must be an orphan"
    # the killed batch re-runs; a re-run of a committed batch does not add it twice
    n = 200_000
    for i in (1, 2):
        k = np.arange(n)
        rows = pl.DataFrame({"k": k + i, "y": k % 2, "p": (k // 2) % 2})
        monitor.append_batch(
            rows, store, batch_id=f"b{i}", period=i, y_true="y", y_pred="p", by="k"
        )
    after = monitor.read_counts(store).collect()
    assert sorted(after["period"].unique().to_list()) == [0, 1, 2]
    for i in (0, 1, 2):
        got = after.filter(pl.col("period") == i).drop("model", "period")
        assert_frame_equal(got, _expected(i))
    assert monitor.store_batches(store)["batch_id"].to_list() == ["b0", "b1", "b2"]
    return periods == [0, 1]


def test_a_killed_writer_leaves_a_readable_store_and_the_batch_rerunnable() -> None:
    """Every kill leaves a readable store of whole batches; at least one kill (of up to four)
    lands between the data file and the commit."""
    mid_write = False
    for _ in range(4):
        mid_write = _kill_and_check(_store())
        if mid_write:
            break
    assert mid_write, "no kill landed between writing the data file and the commit"


# ---------------------------------------------------------------------------------------------
# Audits over time
# ---------------------------------------------------------------------------------------------


def _compas_store(days: int = 6) -> str:
    store = _store()
    rows = (
        pfm.scan_compas()
        .with_columns(
            high=(pl.col("decile_score") >= 5).cast(pl.Int64), day=pl.int_range(pl.len()) % days
        )
        .collect()
    )
    for i in range(days):
        monitor.append_batch(
            rows.filter(pl.col("day") == i),
            store,
            batch_id=f"d{i}",
            period=D0 + dt.timedelta(i),
            y_true="two_year_recid",
            y_pred="high",
            by=["race", "sex"],
        )
    return store


@pytest.fixture(scope="module")
def compas_store() -> str:
    return _compas_store()


def test_period_criteria_are_the_criteria_of_each_period(compas_store: str) -> None:
    counts = monitor.read_counts(compas_store)
    out = monitor.period_criteria(counts, criteria="disparate_impact", reference="rest").collect()
    for period in out["period"].unique().to_list():
        alone = counts.filter(pl.col("period") == period).drop("period").collect()
        want = pfm.fairness_criteria(alone, criteria="disparate_impact", reference="rest")
        got = out.filter(pl.col("period") == period).drop("period")
        assert_frame_equal(got, want)


@pytest.mark.parametrize("engine", ENGINES)
def test_period_intervals_resample_each_period_on_its_own(compas_store: str, engine: str) -> None:
    counts = monitor.read_counts(compas_store)
    layout = monitor._layout_of(counts, None)
    reps = _collect(monitor._replicate_counts(counts, layout, 25, 3, 0), engine)
    totals = reps.group_by("replicate", "attribute", "period").agg(pl.col("n", "n_null").sum())
    observed = counts.collect().group_by("attribute", "period").agg(pl.col("n", "n_null").sum())
    joined = totals.join(observed, on=["attribute", "period"], suffix="_obs")
    assert ((joined["n"] + joined["n_null"]) == (joined["n_obs"] + joined["n_null_obs"])).all()
    out = _collect(
        monitor.period_disparities(
            counts,
            metrics="selection_rate",
            reference={"race": "Caucasian", "sex": "Male"},
            n_resamples=80,
            seed=5,
        ),
        engine,
    )
    again = monitor.period_disparities(
        counts.collect(),
        metrics="selection_rate",
        reference={"race": "Caucasian", "sex": "Male"},
        n_resamples=80,
        seed=5,
    )
    assert_frame_equal(out, again)
    big = out.filter(pl.col("n") > 100)
    assert (big["ci_low"] <= big["value"]).all() and (big["value"] <= big["ci_high"]).all()
    ref = out.filter(pl.col("is_reference"))
    assert (ref["difference_ci_low"] == 0).all() and (ref["ratio_ci_high"] == 1).all()


def test_window_change_is_the_difference_of_the_gaps(compas_store: str) -> None:
    base = monitor.read_counts(compas_store, end=D0 + dt.timedelta(2))
    curr = monitor.read_counts(compas_store, start=D0 + dt.timedelta(3))
    out = monitor.window_change(base, curr, reference="rest", n_resamples=60).collect()
    b = pfm.fairness_criteria(
        monitor.read_counts(compas_store, end=D0 + dt.timedelta(2), merge=True).collect(),
        reference="rest",
    )
    c = pfm.fairness_criteria(
        monitor.read_counts(compas_store, start=D0 + dt.timedelta(3), merge=True).collect(),
        reference="rest",
    )
    keys = ["attribute", "race", "sex", "model", "metric"]
    joined = c.join(b, on=keys, nulls_equal=True, suffix="_b").join(
        out, on=keys, nulls_equal=True, suffix="_change"
    )
    parity = pl.col("metric").replace_strict({k: v.parity for k, v in pfm.CRITERIA.items()})
    want = (pl.col("value") - parity).abs() - (pl.col("value_b") - parity).abs()
    check = joined.select(
        want.alias("want"),
        pl.col("value_change").alias("got"),
        pl.col("value").alias("current"),
        pl.col("current").alias("current_out"),
    )
    assert_frame_equal(check.select("got"), check.select(pl.col("want").alias("got")))
    assert_frame_equal(
        check.select("current_out"), check.select(pl.col("current").alias("current_out"))
    )
    assert out["n_resamples"].unique().to_list() == [60]


def test_window_change_detects_a_grown_gap_and_the_gate_fails() -> None:
    rng = np.random.default_rng(0)

    def rows(n: int, rate_b: float) -> pl.DataFrame:
        g = rng.choice(["a", "b"], n)
        p = np.where(g == "a", rng.random(n) < 0.5, rng.random(n) < rate_b).astype(int)
        return pl.DataFrame({"g": g, "y": rng.integers(0, 2, n), "p": p})

    same_a, same_b = rows(4000, 0.5), rows(4000, 0.5)
    grown = rows(4000, 0.2)
    count = lambda df: pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")  # noqa: E731
    steady = monitor.window_change(
        count(same_a),
        count(same_b),
        criteria="statistical_parity_difference",
        reference="a",
        n_resamples=300,
    )
    worse = monitor.window_change(
        count(same_a),
        count(grown),
        criteria="statistical_parity_difference",
        reference="a",
        n_resamples=300,
    )
    b_steady = steady.filter(pl.col("g") == "b").row(0, named=True)
    b_worse = worse.filter(pl.col("g") == "b").row(0, named=True)
    assert b_steady["ci_low"] < 0.05  # no growth beyond noise
    assert b_worse["value"] == pytest.approx(0.3, abs=0.05) and b_worse["ci_low"] > 0.2
    assert not monitor.change_gate(steady, max_increase=0.05).failed
    gate = monitor.change_gate(worse, max_increase=0.05)
    assert gate.failed and gate.failures["g"].to_list() == ["b"]
    assert gate.line().startswith("FAIL gap grew by more than 0.05")
    assert monitor.gap_gate(pfm.fairness_criteria(count(grown), reference="a"), max_gap=0.2).failed


def test_gates_refuse_bad_input() -> None:
    t = pl.DataFrame({"metric": ["disparate_impact"], "value": [0.5]})
    with pytest.raises(InvalidOptionError, match="needs intervals"):
        monitor.change_gate(t, max_increase=0.1)
    with pytest.raises(InvalidOptionError, match="max_increase"):
        monitor.change_gate(t, max_increase=float("nan"), require_interval=False)
    with pytest.raises(InvalidOptionError, match="max_gap"):
        monitor.gap_gate(t, max_gap=-1)
    assert monitor.gap_gate(t, max_gap=0.4).failed
    with pytest.raises(InvalidOptionError, match="weighted"):
        counts = pl.DataFrame(
            {
                "g": ["a"],
                "tp": [1],
                "fp": [0],
                "tn": [0],
                "fn": [0],
                "n": [1],
                "tp_w": [1.0],
                "fp_w": [0.0],
                "tn_w": [0.0],
                "fn_w": [0.0],
                "n_w": [1.0],
            }
        )
        monitor.period_criteria(counts, n_resamples=5)


def test_calibration_from_a_store_equals_calibration_of_the_rows() -> None:
    store = _store()
    rows = (
        pfm.scan_compas()
        .with_columns(s=pl.col("decile_score") / 10, day=pl.int_range(pl.len()) % 3)
        .collect()
    )
    for i in range(3):
        monitor.append_batch(
            rows.filter(pl.col("day") == i),
            store,
            batch_id=f"d{i}",
            period=i,
            y_true="two_year_recid",
            y_score="s",
            by="race",
        )
    cells = monitor.read_cells(store, merge=True)
    a = pfm.calibration_disparities(cells, n_bins=5, strategy="quantile", reference="rest")
    b = pfm.calibration_disparities(
        rows,
        y_true="two_year_recid",
        y_score="s",
        by="race",
        separately=True,
        n_bins=5,
        strategy="quantile",
        reference="rest",
    )
    assert_frame_equal(a.collect().drop("model"), b, rel_tol=1e-9)
    per_period = pfm.calibration_metrics(monitor.read_cells(store), metrics="ece").collect()
    assert set(per_period["period"].to_list()) == {0, 1, 2}


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------


def _write_days(tmp: Path, days: int = 4) -> list[Path]:
    rows = (
        pfm.scan_compas()
        .with_columns(
            high=(pl.col("decile_score") >= 5).cast(pl.Int64),
            s=pl.col("decile_score") / 10,
            day=pl.int_range(pl.len()) % days,
        )
        .collect()
    )
    paths = []
    for i in range(days):
        path = tmp / f"day{i}.parquet"
        rows.filter(pl.col("day") == i).drop("day").write_parquet(path)
        paths.append(path)
    return paths


def test_cli_append_audit_and_gates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(tmp_path / "store")
    paths = _write_days(tmp_path)
    for i, path in enumerate(paths):
        code = monitor.monitor_main(
            [
                "append",
                store,
                "--input",
                str(path),
                "--batch-id",
                path.stem,
                "--period",
                f"2024-01-0{i + 1}",
                "--y-true",
                "two_year_recid",
                "--y-pred",
                "high",
                "--y-score",
                "s",
                "--cells",
                "--by",
                "race",
                "sex",
            ]
        )
        assert code == 0
    assert "written" in capsys.readouterr().out
    # a re-run with --if-exists skip
    code = monitor.monitor_main(
        [
            "append",
            store,
            "--input",
            str(paths[0]),
            "--batch-id",
            "day0",
            "--period",
            "2024-01-01",
            "--y-true",
            "two_year_recid",
            "--y-pred",
            "high",
            "--y-score",
            "s",
            "--cells",
            "--by",
            "race",
            "sex",
            "--if-exists",
            "skip",
        ]
    )
    assert code == 0 and "skipped" in capsys.readouterr().out
    out_file = tmp_path / "audit.parquet"
    code = monitor.monitor_main(
        [
            "audit",
            store,
            "--start",
            "2024-01-02",
            "--reference",
            "race=Caucasian",
            "sex=Male",
            "--resamples",
            "30",
            "--output",
            str(out_file),
            "--max-gap",
            "5",
        ]
    )
    assert code == 0
    table = pl.read_parquet(out_file)
    assert {"ci_low", "ci_high", "metric"} <= set(table.columns)
    assert "PASS" in capsys.readouterr().out
    # a gap gate that fails: exit 1
    code = monitor.monitor_main(
        ["audit", store, "--max-gap", "0.01", "--criteria", "disparate_impact"]
    )
    captured = capsys.readouterr()
    assert code == 1 and "FAIL gap from parity above 0.01" in captured.out
    # a change gate between windows
    code = monitor.monitor_main(
        [
            "audit",
            store,
            "--start",
            "2024-01-03",
            "--baseline-end",
            "2024-01-02",
            "--change-resamples",
            "50",
            "--max-increase",
            "10",
        ]
    )
    assert code == 0 and "PASS gap grew" in capsys.readouterr().out
    code = monitor.monitor_main(
        ["audit", store, "--what", "calibration", "--by-period", "--bins", "5"]
    )
    assert code == 0
    assert monitor.monitor_main(["batches", store]) == 0
    assert "day3" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["audit"], "the following arguments are required"),
        (["audit", "{store}", "--start", "monday"], "period 'monday'"),
        (["audit", "{missing}"], "no count store"),
        (["audit", "{store}", "--max-increase", "0.1"], "needs a baseline window"),
        (["audit", "{store}", "--reference", "nope"], "expected overall, rest, largest"),
        (["audit", "{store}", "--criteria", "fairness"], "unknown criterion"),
        (
            [
                "append",
                "{store}",
                "--input",
                "{missing}",
                "--batch-id",
                "b",
                "--period",
                "1",
                "--y-true",
                "y",
                "--by",
                "g",
            ],
            "does not exist",
        ),
        (
            [
                "append",
                "{store}",
                "--input",
                "{day}",
                "--batch-id",
                "b",
                "--period",
                "2024-01-09",
                "--y-true",
                "two_year_recid",
                "--y-pred",
                "high",
                "--by",
                "race",
                "age",
            ],
            "counted differently",
        ),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "store")
    day = _write_days(tmp_path, 2)[0]
    assert (
        monitor.monitor_main(
            [
                "append",
                store,
                "--input",
                str(day),
                "--batch-id",
                "d0",
                "--period",
                "2024-01-01",
                "--y-true",
                "two_year_recid",
                "--y-pred",
                "high",
                "--by",
                "race",
                "sex",
            ]
        )
        == 0
    )
    capsys.readouterr()
    filled = [a.format(store=store, missing=str(tmp_path / "nothing"), day=str(day)) for a in argv]
    assert monitor.monitor_main(filled) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_main_cli_dispatches_the_monitor_subcommand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``polars-fairmetrics monitor ...`` is the monitor command line, options unparsed."""
    from polars_fairmetrics import cli

    store = str(tmp_path / "store")
    path = _write_days(tmp_path)[0]
    argv = ["append", store, "--input", str(path), "--batch-id", "d0", "--period", "2024-01-01"]
    argv += ["--y-true", "two_year_recid", "--y-pred", "high", "--by", "race"]
    assert cli.main(["monitor", *argv]) == 0
    assert "written" in capsys.readouterr().out
    assert cli.main(["monitor", "batches", store]) == 0
    assert "d0" in capsys.readouterr().out
    assert cli.main(["monitor", "audit"]) == 2  # a usage error, one line
    assert capsys.readouterr().err.count("\n") == 1
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "monitor" in capsys.readouterr().out
