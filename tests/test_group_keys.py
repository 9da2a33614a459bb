"""Group identity stays typed end to end: no joined labels, no text-'null' collisions.

Adversarial group names (separators, quotes, the text "null", names of result columns, unicode,
empty strings) against an independent reference computed with plain Python on the rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_fairmetrics as pfm
from polars_fairmetrics.exceptions import InvalidOptionError, ReferenceGroupError
from polars_fairmetrics.results import display_label

ENGINES = ["in-memory", "streaming"]

HOSTILE = ["a & b", "a", "b & c", "null", "", "metric", "value", 'x"y', "é ✓", "a, b=c", "\x1b[31m"]


def _tpr(rows: list[dict[str, Any]]) -> float | None:
    pos = [r for r in rows if r["y"] == 1]
    return None if not pos else sum(r["p"] for r in pos) / len(pos)


def _run(frame: pl.LazyFrame, engine: str) -> pl.DataFrame:
    return frame.collect(engine=engine)  # type: ignore[call-overload]


@pytest.mark.parametrize("engine", ENGINES)
def test_intersections_that_would_join_to_the_same_label_stay_apart(engine: str) -> None:
    """("a & b", "c") and ("a", "b & c") joined with " & " are the same text: not here."""
    df = pl.DataFrame(
        {
            "g1": ["a & b", "a & b", "a", "a"],
            "g2": ["c", "c", "b & c", "b & c"],
            "y": [1, 1, 1, 1],
            "p": [1, 1, 0, 1],
        }
    )
    out = _run(
        pfm.disparities(
            df.lazy(),
            y_true="y",
            y_pred="p",
            by=["g1", "g2"],
            metrics="tpr",
            reference=("a & b", "c"),
        ),
        engine,
    )
    assert out.height == 2
    row = out.filter(pl.col("g1") == "a").row(0, named=True)
    assert row["reference_value"] == 1.0
    assert row["value"] == 0.5
    assert row["difference"] == -0.5
    assert out.filter(pl.col("g1") == "a & b")["is_reference"].to_list() == [True]
    assert row["reference"] == 'g1="a & b", g2="c"'


@pytest.mark.parametrize("engine", ENGINES)
def test_text_null_and_a_real_null_are_different_groups(engine: str) -> None:
    df = pl.DataFrame(
        {"g": ["null", "null", None, None], "y": [1, 1, 1, 1], "p": [1, 1, 0, 1]},
        schema={"g": pl.String, "y": pl.Int64, "p": pl.Int64},
    )
    text = _run(
        pfm.disparities(df.lazy(), y_true="y", y_pred="p", by="g", metrics="tpr", reference="null"),
        engine,
    )
    real = _run(
        pfm.disparities(
            df.lazy(), y_true="y", y_pred="p", by="g", metrics="tpr", reference={"g": None}
        ),
        engine,
    )
    assert text.filter(pl.col("g") == "null")["is_reference"].item() is True
    assert text["reference_value"].to_list() == [1.0, 1.0]
    assert real.filter(pl.col("g").is_null())["is_reference"].item() is True
    assert real["reference_value"].to_list() == [0.5, 0.5]
    assert text["reference"][0] == 'g="null"'
    assert real["reference"][0] == "g=null"


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(HOSTILE), min_size=4, max_size=30),
    st.lists(st.sampled_from(HOSTILE), min_size=4, max_size=30),
    st.integers(0, 2**31 - 1),
)
def test_hostile_names_match_a_plain_python_reference(
    g1: list[str], g2: list[str], seed: int
) -> None:
    n = min(len(g1), len(g2))
    rng = np.random.default_rng(seed)
    df = pl.DataFrame(
        {
            "g1": g1[:n],
            "g2": g2[:n],
            "y": rng.integers(0, 2, n).tolist(),
            "p": rng.integers(0, 2, n).tolist(),
        }
    )
    ref_key = (g1[0], g2[0])
    out = pfm.disparities(
        df, y_true="y", y_pred="p", by=["g1", "g2"], metrics="tpr", reference=ref_key
    )
    rows = df.to_dicts()
    groups = {(r["g1"], r["g2"]) for r in rows}
    assert out.height == len(groups)
    ref_value = _tpr([r for r in rows if (r["g1"], r["g2"]) == ref_key])
    for row in out.iter_rows(named=True):
        key = (row["g1"], row["g2"])
        value = _tpr([r for r in rows if (r["g1"], r["g2"]) == key])
        assert row["value"] == pytest.approx(value) if value is not None else row["value"] is None
        if ref_value is None:
            assert row["reference_value"] is None
        else:
            assert row["reference_value"] == pytest.approx(ref_value)
        assert row["is_reference"] == (key == ref_key)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.text(max_size=6)), min_size=2, max_size=2),
    st.lists(st.one_of(st.none(), st.text(max_size=6)), min_size=2, max_size=2),
)
def test_display_labels_are_unambiguous(a: list[str | None], b: list[str | None]) -> None:
    la = display_label({"x": a[0], "y": a[1]})
    lb = display_label({"x": b[0], "y": b[1]})
    assert (la == lb) == (a == b)
    assert "\x1b" not in la  # control characters are escaped visibly


def test_separately_keeps_typed_keys_and_references_per_attribute() -> None:
    df = pl.DataFrame(
        {
            "race": ["x", "x", "y", None, "y", "x"],
            "age": [1, 2, 2, 1, 1, 2],
            "y": [1, 0, 1, 1, 0, 1],
            "p": [1, 0, 0, 1, 1, 1],
        }
    )
    out = pfm.disparities(
        df,
        y_true="y",
        y_pred="p",
        by=["race", "age"],
        separately=True,
        metrics="selection_rate",
        reference={"race": "x", "age": 2},
    )
    assert out.schema["race"] == pl.String and out.schema["age"] == pl.Int64
    race = out.filter(pl.col("attribute") == "race")
    assert race["age"].null_count() == race.height
    assert race["race"].to_list() == ["x", "y", None]  # the null group of race is its own group
    age = out.filter(pl.col("attribute") == "age")
    assert age["race"].null_count() == age.height
    assert set(race["reference"]) == {'race="x"'} and set(age["reference"]) == {"age=2"}
    x = df.filter(pl.col("race") == "x")
    assert race["reference_value"][0] == pytest.approx(x["p"].mean())
    two = df.filter(pl.col("age") == 2)
    assert age["reference_value"][0] == pytest.approx(two["p"].mean())
    # one reference value for several attributes side by side is ambiguous
    with pytest.raises(InvalidOptionError, match="mapping"):
        pfm.disparities(
            df, y_true="y", y_pred="p", by=["race", "age"], separately=True, reference="x"
        )


def test_reference_absent_from_one_attribute_names_it() -> None:
    df = pl.DataFrame({"a": ["x", "y"], "b": ["u", "v"], "y": [1, 0], "p": [1, 1]})
    with pytest.raises(ReferenceGroupError, match="attribute"):
        pfm.disparities(
            df, y_true="y", y_pred="p", by=["a", "b"], separately=True, reference={"a": "zz"}
        )


@pytest.mark.parametrize("name", ["metric", "value", "support", "reference", "difference"])
def test_group_columns_named_like_result_columns_are_refused(name: str) -> None:
    df = pl.DataFrame({name: ["a", "b"], "y": [1, 0], "p": [1, 1]})
    with pytest.raises(InvalidOptionError, match=name):
        pfm.group_metrics(df, y_true="y", y_pred="p", by=name)


def test_between_groups_names_typed_groups() -> None:
    df = pl.DataFrame(
        {"g": [3, 3, 7, 7], "h": [None, None, "u", "u"], "y": [1, 1, 1, 1], "p": [1, 1, 0, 1]}
    )
    out = pfm.between_groups(df, y_true="y", y_pred="p", by=["g", "h"], metrics="tpr")
    row = out.row(0, named=True)
    assert row["worst_group"] == {"g": 7, "h": "u"}
    assert row["best_group"] == {"g": 3, "h": None}
    assert out.schema["worst_group"] == pl.Struct({"g": pl.Int64, "h": pl.String})


@pytest.mark.parametrize("engine", ENGINES)
def test_largest_reference_is_the_majority_group_per_partition(engine: str) -> None:
    df = pl.DataFrame(
        {
            "g": ["a", "b", "b", "c", "c", "c"],
            "h": [1, 1, 2, 2, 2, 2],
            "y": [1, 1, 1, 1, 1, 0],
            "p": [1, 0, 1, 1, 0, 1],
        }
    )
    out = _run(
        pfm.disparities(
            df.lazy(),
            y_true="y",
            y_pred="p",
            by=["g", "h"],
            separately=True,
            metrics="selection_rate",
            reference="largest",
        ),
        engine,
    )
    chosen = out.filter(pl.col("is_reference")).select("attribute", "g", "h").rows()
    assert chosen == [("g", "c", None), ("h", None, 2)]
    assert set(out["reference"]) == {"largest"}
    c = df.filter(pl.col("g") == "c")["p"].mean()
    assert out.filter(pl.col("attribute") == "g")["reference_value"].to_list() == [c] * 3
    # ties: the first group by its keys
    tie = pfm.disparities(
        df.head(3), y_true="y", y_pred="p", by="h", metrics="selection_rate", reference="largest"
    )
    assert tie.filter(pl.col("is_reference"))["h"].to_list() == [1]


def test_a_users_own_partition_column_is_kept_apart() -> None:
    """A column that is neither a key nor a count (a period, a model of the user's) partitions."""
    df = pl.DataFrame(
        {
            "period": [1, 1, 1, 2, 2, 2],
            "g": ["a", "b", "b", "a", "b", "b"],
            "y": [1, 1, 1, 1, 1, 1],
            "p": [1, 0, 1, 0, 1, 1],
        }
    )
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by=["period", "g"])
    out = pfm.disparities(counts, by="g", metrics="tpr", reference="a")
    assert out.columns[:2] == ["g", "period"]
    for period in (1, 2):
        part = out.filter(pl.col("period") == period)
        alone = pfm.disparities(
            df.filter(pl.col("period") == period),
            y_true="y",
            y_pred="p",
            by="g",
            metrics="tpr",
            reference="a",
        )
        assert part["difference"].to_list() == alone["difference"].to_list()
    between = pfm.between_groups(counts, by="g", metrics="tpr")
    assert between["period"].to_list() == [1, 2]
