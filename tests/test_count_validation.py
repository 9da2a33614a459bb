"""The count scan validates with (almost) the floor's aggregations, and still catches everything.

The floor is ``group_by(group, y, pred).agg(len, sum(w))``. The count scan may add, per cell, the
weight's plain ``min`` and ``null_count`` (``weight_checks``: no per-row arithmetic; a negative
minimum or a non-finite sum is an invalid weight) and, for scores, their min and NaN-propagating
max. Checked on the
streaming engine's physical plan, and against a brute-force oracle (hypothesis): every negative,
NaN or infinite weight raises naming the column and a value present in the data; null weights are
counted in ``n_null_weight``; ``n + n_null`` is the number of input rows.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_fairmetrics as pfm
from polars_fairmetrics.exceptions import InvalidScoreError, InvalidWeightError

ENGINES = ("in-memory", "streaming")


def scan_aggregations(lf: pl.LazyFrame) -> list[str]:
    """The aggregations of the (single) streaming group-by node scanning the rows."""
    graph = lf.show_graph(engine="streaming", plan_stage="physical", raw_output=True)
    assert isinstance(graph, str)
    nodes = re.findall(r'label="group-by\\n(.*?)",', graph, re.S)
    scans = [n for n in nodes if "len()" in n]  # the later group-bys over the cells sum
    assert len(scans) == 1, nodes
    out = []
    for section in scans[0].split("aggs:\\n")[1:]:
        for line in section.split("\\n"):
            if not line.strip():
                break
            out.append(line.split("=", 1)[1].strip())
    return out


def frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "g": ["a", "a", "b", "b", "c"],
            "y": [1, 0, 1, 0, 1],
            "p": [1, 0, 0, 1, 1],
            "s": [0.9, 0.2, 0.4, 0.7, 0.6],
            "w": [1.0, 2.0, None, 0.5, 3.0],
        }
    )


def floor_aggregations() -> list[str]:
    lf = frame().lazy()
    graph = (
        lf.group_by("g", "y", "p")
        .agg(pl.len(), pl.col("w").sum())
        .show_graph(engine="streaming", plan_stage="physical", raw_output=True)
    )
    assert isinstance(graph, str)
    node = re.findall(r'label="group-by\\n(.*?)",', graph, re.S)[0]
    return [ln for ln in node.split("aggs:\\n")[1].split("\\n") if ln.strip()]


def test_labels_weighted_scan_adds_plain_aggregations() -> None:
    """Beside the floor's len and sum: the weight's min and null count, read as they are (no
    arithmetic on the rows)."""
    lf = pfm.confusion_counts(frame().lazy(), y_true="y", y_pred="p", by="g", weight="w")
    aggs = scan_aggregations(lf)
    assert len(floor_aggregations()) == 2
    assert len(aggs) == 2 + 2, aggs
    assert sorted(a.replace("\\", "") for a in aggs[2:]) == [
        'col("w").min()',
        'col("w").null_count()',
    ], aggs


def test_weight_sum_overflow_is_an_error() -> None:
    """Finite weights whose sum overflows Float64: every weighted sum would be infinite."""
    df = frame().with_columns(w=pl.Series([1e308, 1e308, None, 1.0, 1.0]))
    match = r"column 'w' \(weight\): the weights sum to infinity"
    with pytest.raises(InvalidWeightError, match=match):
        pfm.confusion_counts(df, y_true="y", y_pred="p", by="g", weight="w")
    lazy = pfm.confusion_counts(df.lazy(), y_true="y", y_pred="p", by="g", weight="w")
    for engine in ENGINES:
        with pytest.raises(InvalidWeightError, match=match):
            lazy.collect(engine=engine)


def test_labels_unweighted_scan_is_the_floor() -> None:
    lf = pfm.confusion_counts(frame().lazy(), y_true="y", y_pred="p", by="g")
    assert len(scan_aggregations(lf)) == 1  # len only


def test_scores_add_min_and_max() -> None:
    lf = pfm.confusion_counts(
        frame().lazy(), y_true="y", y_score="s", threshold=[0.3, 0.5], by="g", weight="w"
    )
    aggs = scan_aggregations(lf)
    assert len(aggs) == 4 + 2, aggs
    assert sum('"s' in a and (".min()" in a or ".nan_max()" in a) for a in aggs) == 2


def test_bad_weight_named_on_a_parquet_scan(tmp_path: Path) -> None:
    """The error-only second pass finds the value on a file scanned by the streaming engine."""
    path = tmp_path / "rows.parquet"
    frame().with_columns(w=pl.Series([1.0, 2.0, None, -0.25, 3.0])).write_parquet(path)
    lazy = pfm.confusion_counts(pl.scan_parquet(path), y_true="y", y_pred="p", by="g", weight="w")
    for engine in ENGINES:
        with pytest.raises(
            InvalidWeightError, match=r"column 'w' \(weight\) has a negative weight -0.25"
        ):
            lazy.collect(engine=engine)


def test_score_nan_and_bounds() -> None:
    df = frame().with_columns(s=pl.Series([0.9, math.nan, 1.5, 0.7, -0.5]))
    with pytest.raises(InvalidScoreError, match=r"column 's' \(y_score\) has a NaN score"):
        pfm.confusion_counts(df, y_true="y", y_score="s", threshold=0.5)
    df = df.with_columns(s=pl.Series([0.9, 0.1, 1.5, 0.7, 0.5]))
    with pytest.raises(InvalidScoreError, match=r"has a score 1.5 outside \[0.0, 1.0\]"):
        pfm.confusion_counts(df.lazy(), y_true="y", y_score="s", threshold=0.5).collect(
            engine="streaming"
        )
    df = df.with_columns(s=pl.Series([0.9, 0.1, -math.inf, 0.7, 0.5]))
    with pytest.raises(InvalidScoreError, match=r"has a score -inf"):
        pfm.confusion_counts(df, y_true="y", y_score="s", threshold=0.5, score_bounds=None)


WEIGHTS = st.one_of(
    st.none(),
    st.floats(0, 10, allow_nan=False),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, -0.5, math.nan, math.inf, -math.inf]),
)


@settings(max_examples=min(settings().max_examples, 80))
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["a", "b"]),
            st.sampled_from([0, 1, None]),
            st.sampled_from([0, 1, None]),
            WEIGHTS,
        ),
        min_size=0,
        max_size=30,
    ),
    lazy=st.booleans(),
)
def test_weight_checks_like_the_oracle(
    rows: list[tuple[str, int | None, int | None, float | None]], lazy: bool
) -> None:
    df = pl.DataFrame(
        rows, schema={"g": pl.String, "y": pl.Int8, "p": pl.Int8, "w": pl.Float64}, orient="row"
    )
    weights = [r[3] for r in rows]
    bad = [w for w in weights if w is not None and (math.isnan(w) or math.isinf(w) or w < 0)]

    def run(engine: str) -> pl.DataFrame:
        if not lazy:
            return pfm.confusion_counts(df, y_true="y", y_pred="p", by="g", weight="w")
        out = pfm.confusion_counts(df.lazy(), y_true="y", y_pred="p", by="g", weight="w")
        return out.collect(engine=engine)

    for engine in ENGINES if lazy else ("eager",):
        if bad:
            with pytest.raises(InvalidWeightError, match=r"column 'w' \(weight\) has a ") as info:
                run(engine)
            value = float(str(info.value).rsplit(" ", 1)[1])  # the value ends the message
            assert any((math.isnan(value) and math.isnan(b)) or value == b for b in bad), (
                str(info.value),
                bad,
            )
            continue
        table = run(engine)
        assert int(table["n"].sum()) + int(table["n_null"].sum()) == len(rows)
        for g in ("a", "b"):
            mine = [r for r in rows if r[0] == g]
            got = table.filter(pl.col("g") == g)
            if not mine:
                assert got.height == 0
                continue
            assert got["n_null_weight"].item() == sum(r[3] is None for r in mine)
            complete = [r for r in mine if None not in r]
            assert got["n"].item() == len(complete)
            assert got["n_w"].item() == pytest.approx(sum(float(r[3] or 0.0) for r in complete))


# --- one threshold (one group_by) and several (cross join + join) agree -------------------------


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_single_threshold_route_equals_multi_threshold_route(weighted: bool, seed: int) -> None:
    """The single-threshold plan (sums and null counts in one group_by) gives the same rows as
    the several-threshold plan restricted to that threshold: nulls in every column, groups
    whose rows are all null, empty cells, weights with nulls."""
    rng = np.random.default_rng(seed)
    n = 300
    g = rng.choice(["a", "b", "c", None], n).tolist()
    y = rng.choice([0.0, 1.0, None], n, p=[0.45, 0.45, 0.1]).tolist()
    s = np.round(rng.random(n), 2).tolist()
    s = [None if rng.random() < 0.1 else v for v in s]
    w = [None if rng.random() < 0.05 else float(v) for v in rng.random(n) * 3]
    df = pl.DataFrame({"g": g, "y": y, "s": s, "w": w})
    df = df.with_columns(pl.when(pl.col("g") == "c").then(None).otherwise(pl.col("y")).alias("y"))
    kw = {"y_true": "y", "y_score": "s", "by": "g", "weight": "w" if weighted else None}
    one = pfm.confusion_counts(df, threshold=0.5, **kw)
    several = pfm.confusion_counts(df, threshold=[0.25, 0.5, 0.75], **kw).filter(
        pl.col("threshold") == 0.5
    )
    assert_frame_equal(one, several)
    lazy = pfm.confusion_counts(df.lazy(), threshold=0.5, **kw)
    assert_frame_equal(lazy.collect(engine="streaming"), one)


def test_column_metric_is_the_metric_definition() -> None:
    """The cached count-column expressions are the metric functions' own expressions."""
    from polars_fairmetrics.metrics import METRICS, Counts, column_metric

    for name, spec in METRICS.items():
        for weighted in (False, True):
            for prefix in ("", "_pfm_ref_"):
                own = spec.func(Counts.from_columns(weighted=weighted, prefix=prefix))
                assert column_metric(name, weighted, prefix).meta.eq(own), name


LABEL_VALUES = {
    pl.Int8: st.sampled_from([0, 1, 2, -1, None]),
    pl.Float64: st.sampled_from([0.0, -0.0, 1.0, 2.5, math.nan, math.inf, -math.inf, None]),
    pl.String: st.sampled_from(["a", "b", "B", "", "null", None]),
    pl.Boolean: st.sampled_from([True, False, None]),
}


@given(data=st.data(), dtype=st.sampled_from(list(LABEL_VALUES)), big=st.booleans())
def test_distinct_labels_like_polars(data: st.DataObject, dtype: Any, big: bool) -> None:
    """The label check's distinct values (Python for small cell tables) are Polars' own:
    ascending, NaN last, 0.0 and -0.0 one value."""
    from polars_fairmetrics._validate import _distinct_sorted

    values = data.draw(st.lists(LABEL_VALUES[dtype], max_size=30))
    series = pl.Series(values * (200 if big else 1), dtype=dtype)

    def norm(items: list[Any]) -> list[Any]:
        out: list[Any] = []
        for v in items:
            v = "NaN" if isinstance(v, float) and math.isnan(v) else v
            if v not in out:
                out.append(v)
        return out

    assert norm(_distinct_sorted(series)) == norm(series.drop_nulls().unique().sort().to_list())
