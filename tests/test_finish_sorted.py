"""``finish`` skips the sort of a frame already in order: its result equals a plain stable sort.

Oracle: ``frame.sort(keys, nulls_last=True, maintain_order=True)`` (with the metric's rank), on
frames of every key type the check accepts (integers, strings, enums in a non-alphabetical
order, booleans, dates, datetimes) and ones it refuses (floats with NaN), with nulls and ties,
shuffled, sorted, and sorted but for one pair of rows.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from polars_fairmetrics import results
from polars_fairmetrics.results import _is_sorted, finish, order_rank

ENUM = pl.Enum(["z", "b", "a"])
METRICS = ["recall", "accuracy", "precision"]


def _column(kind: str, rng: np.random.Generator, n: int) -> pl.Series:
    pick = rng.integers(0, 3, n)
    null = rng.random(n) < 0.2
    values: list[object]
    if kind == "int":
        values = [int(p) - 1 for p in pick]
        dtype: pl.DataType = pl.Int8()
    elif kind == "str":
        values = [["b", "a", "ab"][p] for p in pick]
        dtype = pl.String()
    elif kind == "enum":
        values = [["z", "b", "a"][p] for p in pick]
        dtype = ENUM
    elif kind == "bool":
        values = [bool(p % 2) for p in pick]
        dtype = pl.Boolean()
    elif kind == "date":
        values = [dt.date(2020, 1, 1 + int(p)) for p in pick]
        dtype = pl.Date()
    elif kind == "datetime":
        values = [dt.datetime(2020, 1, 1, int(p)) for p in pick]
        dtype = pl.Datetime("us")
    else:  # float, with NaN: not recognised, always sorted
        values = [[0.5, float("nan"), -1.0][p] for p in pick]
        dtype = pl.Float64()
    return pl.Series(kind, [None if z else v for v, z in zip(values, null, strict=True)], dtype)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize(
    "kinds",
    [("int",), ("str", "int"), ("enum", "bool"), ("date", "datetime", "str"), ("enum", "float")],
)
def test_finish_equals_a_stable_sort(
    seed: int, kinds: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the check runs from a size up; every size here, so small frames exercise it too
    monkeypatch.setattr(results, "_CHECK_SORTED_ROWS", 0)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 40))
    frame = pl.DataFrame([_column(k, rng, n) for k in kinds]).with_columns(
        metric=pl.Series([METRICS[i] for i in rng.integers(0, 3, n)], dtype=pl.String),
        value=pl.Series(rng.random(n)),
    )
    keys = list(kinds)
    by = [*[pl.col(k) for k in keys], order_rank("metric", METRICS, strict=False)]
    ordered = frame.sort(by, nulls_last=True, maintain_order=True)
    variants = [frame, ordered]
    if n >= 2:
        i = int(rng.integers(0, n - 1))
        swapped = pl.concat(
            [ordered[:i], ordered[i + 1 : i + 2], ordered[i : i + 1], ordered[i + 2 :]]
        )
        variants.append(swapped)
    for variant in variants:
        want = variant.sort(by, nulls_last=True, maintain_order=True)
        got = finish(variant, keys=keys, order=METRICS)
        assert_frame_equal(got.select(want.columns), want)
        # the check itself: in order exactly when the sort changes nothing
        if "float" not in kinds:
            assert _is_sorted(variant, keys, by) == variant.equals(want)


def test_lazy_frames_are_sorted_as_before() -> None:
    frame = pl.LazyFrame({"g": ["b", "a"], "metric": ["accuracy", "accuracy"], "value": [1.0, 2.0]})
    assert finish(frame, keys=["g"]).collect()["g"].to_list() == ["a", "b"]
