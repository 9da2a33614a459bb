"""Ensemble sums: the mergeable form of the ensemble metrics, and their count-store rows.

The central property: a window merged from daily stores gives the ensemble metrics of the
concatenated rows — counts to the last bit, means within 1e-12 — on both engines, with null
keys, missing model predictions and weights.
"""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from polars_fairmetrics import monitor
from polars_fairmetrics.ensemble import (
    ENSEMBLE_METRICS,
    ensemble_group_metrics,
    ensemble_group_sums,
    ensemble_metrics_from_sums,
)
from polars_fairmetrics.exceptions import InvalidOptionError, StoreError

pytest.importorskip("deltalake")

MODELS = ["p1", "p2", "p3"]
D0 = dt.date(2024, 1, 1)


def _day(rng: np.random.Generator, n: int) -> pl.DataFrame:
    probs = {m: np.round(rng.random(n), 2).tolist() for m in MODELS}
    for m in MODELS:  # a model that did not predict a row
        for i in np.flatnonzero(rng.random(n) < 0.15):
            probs[m][i] = None
    return pl.DataFrame(
        {
            "race": rng.choice(np.array(["x", "y", None], dtype=object), n).tolist(),
            "sex": rng.choice(np.array([1, 2], dtype=object), n).tolist(),
            "y": rng.integers(0, 2, n).tolist(),
            "w": np.round(rng.random(n) * 2, 3).tolist(),
            **probs,
        },
        schema={
            "race": pl.String,
            "sex": pl.Int64,
            "y": pl.Int64,
            "w": pl.Float64,
            **dict.fromkeys(MODELS, pl.Float64),
        },
    )


def _description(store: str) -> dict[str, Any]:
    import deltalake

    out: dict[str, Any] = json.loads(deltalake.DeltaTable(store).metadata().description)
    return out


def _store() -> str:
    return tempfile.mkdtemp(prefix="pfm_ensemble_") + "/store"


def _expected(rows: pl.DataFrame, weight: str | None) -> pl.DataFrame:
    """The ensemble metrics of the rows, attribute by attribute, in the sums' layout."""
    parts = []
    for attribute, other in (("race", "sex"), ("sex", "race")):
        table = ensemble_group_metrics(
            rows, models=MODELS, by=attribute, weight=weight, confusion_metrics=[]
        )
        parts.append(
            table.with_columns(
                pl.lit(attribute).alias("attribute"),
                pl.lit(None, dtype=rows.schema[other]).alias(other),
            )
        )
    return pl.concat(parts, how="diagonal")


def _check(got: pl.DataFrame, want: pl.DataFrame) -> None:
    on = ["attribute", "race", "sex", "metric"]
    got = got.sort(on, nulls_last=True)
    want = want.sort(on, nulls_last=True).select(got.columns)
    ints = [c for c in got.columns if got.schema[c] == pl.Int64]
    assert_frame_equal(got.select(on, *ints), want.select(on, *ints))  # to the last bit
    assert_frame_equal(got, want, check_exact=False, rel_tol=0, abs_tol=1e-12)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    n_days=st.integers(1, 4),
    weighted=st.booleans(),
)
def test_window_of_daily_stores_equals_the_concatenated_rows(
    seed: int, n_days: int, weighted: bool
) -> None:
    rng = np.random.default_rng(seed)
    days = [_day(rng, int(rng.integers(1, 40))) for _ in range(n_days)]
    weight = "w" if weighted else None
    store = _store()
    for i, day in enumerate(days):
        monitor.append_batch(
            day,
            store,
            batch_id=f"day-{i}",
            period=D0 + dt.timedelta(days=i),
            y_true="y",
            by=["race", "sex"],
            weight=weight,
            ensemble=MODELS,
        )
    want = _expected(pl.concat(days), weight)
    for engine in ("in-memory", "streaming"):
        window = monitor.read_ensemble_sums(store, merge=True)
        got = ensemble_metrics_from_sums(window).drop("model")
        _check(got.collect(engine=engine), want)
    per_period = ensemble_metrics_from_sums(monitor.read_ensemble_sums(store)).collect()
    for i, day in enumerate(days):
        one = per_period.filter(pl.col("period") == D0 + dt.timedelta(days=i))
        _check(one.drop("model", "period"), _expected(day, weight))


@pytest.mark.parametrize("weighted", [False, True])
def test_sums_give_the_group_metrics_and_a_numpy_oracle(weighted: bool) -> None:
    rows = _day(np.random.default_rng(5), 300)
    weight = "w" if weighted else None
    both = ["race", "sex"]
    sums = ensemble_group_sums(rows, models=MODELS, by=both, weight=weight)
    assert sums["metric"].unique(maintain_order=True).to_list() == list(ENSEMBLE_METRICS)
    got = ensemble_metrics_from_sums(sums, by=both)
    want = ensemble_group_metrics(rows, models=MODELS, by=both, weight=weight, confusion_metrics=[])
    assert_frame_equal(got, want.select(got.columns))
    # an oracle of two metrics in plain numpy
    p = rows.select(MODELS).to_numpy().astype(float)
    m = (~np.isnan(p)).sum(axis=1)
    k = (p >= 0.5).sum(axis=1)
    with np.errstate(all="ignore"):
        stability = np.abs(2 * k - m) / m
        jitter = 2 * k * (m - k) / (m * (m - 1))
    w = rows["w"].to_numpy() if weighted else np.ones(rows.height)
    for (race, sex), part in rows.with_row_index("i").group_by(both):
        idx = part["i"].to_numpy()
        for name, values in (("label_stability", stability), ("jitter", jitter)):
            v, ww = values[idx], w[idx]
            ok = np.isfinite(v)
            value = got.filter(
                pl.col("race").eq_missing(race), pl.col("sex") == sex, pl.col("metric") == name
            )
            assert value["n"][0] == ok.sum() and value["n_null"][0] == len(idx) - ok.sum()
            expected = (v[ok] * ww[ok]).sum() / ww[ok].sum() if ok.any() else None
            if expected is None:
                assert value["value"][0] is None
            else:
                assert abs(value["value"][0] - expected) < 1e-12


def test_separately_rolls_up_the_intersection() -> None:
    rows = _day(np.random.default_rng(9), 200)
    sums = ensemble_group_sums(
        rows.lazy(), models=MODELS, by=["race", "sex"], separately=True, metrics=["jitter"]
    )
    assert isinstance(sums, pl.LazyFrame)
    table = sums.collect()
    assert table.columns == ["attribute", "race", "sex", "metric", "value_sum", "n", "n_null"]
    assert table["attribute"].unique(maintain_order=True).to_list() == ["race", "sex"]
    one = ensemble_group_sums(rows, models=MODELS, by="sex", metrics=["jitter"])
    mine = table.filter(attribute="sex").select(one.columns)
    assert_frame_equal(mine, one, check_exact=False, abs_tol=1e-12)
    with pytest.raises(InvalidOptionError, match="separately"):
        ensemble_group_sums(rows, models=MODELS, separately=True)
    with pytest.raises(InvalidOptionError, match="missing value_sum"):
        ensemble_metrics_from_sums(pl.DataFrame({"metric": ["jitter"], "n": [1], "n_null": [0]}))


def test_store_layout_version_and_refusals() -> None:
    rows = _day(np.random.default_rng(1), 30)
    plain = _store()
    options: dict[str, Any] = {"y_true": "y", "by": "race", "y_score": "p1", "threshold": 0.5}
    monitor.append_batch(rows.drop_nulls("p1"), plain, batch_id="b", period=1, **options)
    description = _description(plain)
    assert description["schema_version"] == 1  # no ensemble sums: still readable by v1
    with pytest.raises(StoreError, match="no ensemble sums"):
        monitor.read_ensemble_sums(plain)
    with pytest.raises(StoreError, match="counted differently"):
        monitor.append_batch(rows, plain, batch_id="c", period=2, ensemble=MODELS, **options)
    store = _store()
    monitor.append_batch(
        rows, store, batch_id="b", period=1, y_true="y", by="race", ensemble=MODELS
    )
    description = _description(store)
    assert description["schema_version"] == 2 == monitor.SCHEMA_VERSION
    assert monitor.store_batches(store)["schema_version"].to_list() == [2]
    with pytest.raises(StoreError, match="ensemble"):
        monitor.append_batch(
            rows, store, batch_id="c", period=2, y_true="y", by="race", ensemble=MODELS[:2]
        )
    with pytest.raises(StoreError, match="holds no confusion counts"):
        monitor.read_counts(store)
    with pytest.raises(InvalidOptionError, match="ensemble_metrics= needs ensemble="):
        monitor.append_batch(
            rows, store, batch_id="d", period=2, ensemble_metrics="jitter", **options
        )
    with pytest.raises(InvalidOptionError, match="ensemble_convention"):
        monitor.append_batch(
            rows,
            _store(),
            batch_id="d",
            period=2,
            ensemble=MODELS,
            ensemble_convention="x",
            **options,
        )


def test_cli_append_and_audit_stability(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(4)
    store = str(tmp_path / "store")
    days = [_day(rng, 30), _day(rng, 25)]
    for i, day in enumerate(days):
        path = tmp_path / f"day{i}.parquet"
        day.write_parquet(path)
        where = ["append", store, "--input", str(path), "--batch-id", f"d{i}", "--period", str(i)]
        code = monitor.monitor_main(
            [*where, "--y-true", "y", "--by", "race", "sex", "--ensemble", *MODELS]
        )
        assert code == 0
    capsys.readouterr()
    out = tmp_path / "stability.parquet"
    code = monitor.monitor_main(["audit", store, "--what", "stability", "--output", str(out)])
    assert code == 0, capsys.readouterr().err
    got = pl.read_parquet(out).drop("model")
    _check(got, _expected(pl.concat(days), None))
    code = monitor.monitor_main(["audit", store, "--what", "stability", "--resamples", "10"])
    assert code == 2 and "no intervals" in capsys.readouterr().err
