"""The ``.fair`` expression form: native (no Python UDF), streaming, shared counts, checked input.

- every expression method of ``pl.Expr.fair`` builds a plan without a Python UDF, in ``select``
  and in ``group_by().agg()``; the confusion metrics run on the streaming engine's own group-by
  (no in-memory fallback node);
- several metrics of the same rows in one ``agg`` share their aggregations on the streaming
  engine (checked on the physical plan: as many aggregations as one metric using all four
  cells);
- bad input raises on a DataFrame, a LazyFrame ``collect()`` and ``collect(engine="streaming")``
  (Polars' ``InvalidOperationError``, quoting the package's message naming column and value);
- null labels, predictions and weights are left out, exactly as a brute-force NumPy count over the
  complete rows (hypothesis), on both engines.
"""

from __future__ import annotations

import inspect
import math
import re
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_fairmetrics as pfm
from polars_fairmetrics._namespaces import FairExprNamespace

ENGINES = ("in-memory", "streaming")

#: every expression method of the namespace (``counts`` returns a Counts, not an expression)
EXPR_METHODS = sorted(
    name
    for name, fn in inspect.getmembers(FairExprNamespace, inspect.isfunction)
    if not name.startswith("_") and name not in ("counts", "metric")
)
#: the methods that are rank statistics (a sort per group), not confusion metrics
RANK_METHODS = {"roc_auc", "average_precision"}
CONFUSION_METHODS = [m for m in EXPR_METHODS if m not in RANK_METHODS]
FIVE = ["true_positive_rate", "false_positive_rate", "precision", "selection_rate", "accuracy"]


def frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "g": ["a", "a", "b", "b", "c", "c"],
            "y": [1, 0, 1, 0, 1, None],
            "p": [1, 0, 0, 1, 1, 0],
            "s": [0.9, 0.2, 0.4, 0.7, 0.6, 0.5],
            "w": [1.0, 2.0, 1.0, 0.5, 3.0, None],
        }
    )


def method_expr(method: str, weighted: bool) -> pl.Expr:
    col = pl.col("s") if method in RANK_METHODS else pl.col("p")
    kw: dict[str, Any] = {"y_true": "y"}
    if weighted:
        kw["weight"] = "w"
    out: pl.Expr = getattr(col.fair, method)(**kw)
    return out


def query(exprs: list[pl.Expr], context: str) -> pl.LazyFrame:
    lf = frame().lazy()
    return lf.group_by("g").agg(exprs) if context == "agg" else lf.select(exprs)


def node_kinds(lf: pl.LazyFrame) -> list[str]:
    """The kinds of the streaming engine's physical nodes (``group-by``, ``in-memory-map`` …)."""
    graph = lf.show_graph(engine="streaming", plan_stage="physical", raw_output=True)
    assert isinstance(graph, str)
    return re.findall(r'\[label="([a-z\-\[\]]+)', graph)


def group_by_aggregations(lf: pl.LazyFrame) -> list[str]:
    """The aggregations computed by the streaming group-by node, one line each."""
    graph = lf.show_graph(engine="streaming", plan_stage="physical", raw_output=True)
    assert isinstance(graph, str)
    nodes = re.findall(r'label="group-by\\n(.*?)",', graph, re.S)
    assert len(nodes) == 1, nodes
    out = []
    for section in nodes[0].split("aggs:\\n")[1:]:
        for line in section.split("\\n"):
            if not line.strip():
                break
            out.append(line.split("=", 1)[1].strip())
    return out


# ---------------------------------------------------------------------------------------------
# native and streaming
# ---------------------------------------------------------------------------------------------


def test_every_expression_method_is_listed() -> None:
    assert len(CONFUSION_METHODS) == len(pfm.METRICS)
    assert set(RANK_METHODS) <= set(EXPR_METHODS)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("context", ["select", "agg"])
@pytest.mark.parametrize("method", [*EXPR_METHODS, "metric"])
def test_no_python_udf(method: str, context: str, weighted: bool) -> None:
    expr = (
        pl.col("p").fair.metric("f1", y_true="y", weight="w" if weighted else None)
        if method == "metric"
        else method_expr(method, weighted)
    )
    lf = query([expr], context)
    for optimized in (True, False):
        plan = lf.explain(optimized=optimized)
        assert "python_udf" not in plan and "map_batches" not in plan, plan
    kinds = node_kinds(lf)
    if method not in RANK_METHODS:
        # the confusion metrics stay on the streaming engine: no in-memory fallback node
        assert not [k for k in kinds if k.startswith("in-memory") and k != "in-memory-source"]
        if context == "agg":
            assert "group-by" in kinds
    # the plan runs, with the same result on both engines
    a, b = (lf.collect(engine=e) for e in ENGINES)
    if context == "agg":
        a, b = a.sort("g"), b.sort("g")
    assert_frame_equal(a, b, check_exact=False, rel_tol=1e-12)  # sums in another order


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_metrics_in_one_agg_share_their_counts(weighted: bool) -> None:
    """Five metrics aggregate exactly what one metric using all four cells does."""
    w = "w" if weighted else None
    five = group_by_aggregations(
        query([pl.col("p").fair.metric(m, y_true="y", weight=w) for m in FIVE], "agg")
    )
    one = group_by_aggregations(query([pl.col("p").fair.accuracy(y_true="y", weight=w)], "agg"))
    every = group_by_aggregations(
        query([pl.col("p").fair.metric(m, y_true="y", weight=w) for m in pfm.METRICS], "agg")
    )
    assert len(five) == len(one) == len(every)
    # 4 cell sums, 1 per label column; weighted: min and nan_max of the weight
    assert sum(a.endswith(".sum()") for a in every) == 4
    assert len(every) == (8 if weighted else 6), every


def test_rank_metrics_have_no_udf_but_sort_per_group() -> None:
    """ROC AUC / AP sort each group: native, run by the streaming engine as an in-memory map."""
    lf = query([pl.col("s").fair.roc_auc(y_true="y", weight="w")], "agg")
    assert "python_udf" not in lf.explain()


# ---------------------------------------------------------------------------------------------
# bad input raises, on every kind of frame and engine
# ---------------------------------------------------------------------------------------------

BAD: list[tuple[str, dict[str, Any], dict[str, Any], str]] = [
    # (id, column replacements, metric options, message regex)
    (
        "third_true_label",
        {"y": [1, 0, 2, 0, 1, None]},
        {},
        r"column 'y' \(y_true\) has a value 2 that is neither the positive label 1 nor the "
        r"negative label 0",
    ),
    (
        "third_prediction",
        {"p": [1, 0, -1, 1, 1, 0]},
        {},
        r"column 'p' \(y_pred\) has a value -1 that is neither",
    ),
    (
        "fractional_label",
        {"y": [1.0, 0.5, 1.0, 0.0, 1.0, None]},
        {},
        r"column 'y' \(y_true\) has a value 0.5",
    ),
    ("nan_label", {"y": [1.0, math.nan, 1.0, 0.0, 1.0, None]}, {}, r"column 'y'.*a value nan"),
    (
        "third_text_label",
        {"y": ["yes", "no", "maybe", "no", "yes", None], "p": ["yes", "no"] * 3},
        {"pos_label": "yes", "neg_label": "no"},
        r"column 'y' \(y_true\) has a value 'maybe' that is neither the positive label 'yes' "
        r"nor the negative label 'no'",
    ),
    (
        "third_categorical_label",
        {
            "y": pl.Series(["yes", "no", "maybe", "no", "yes", None], dtype=pl.Categorical),
            "p": ["yes", "no"] * 3,
        },
        {"pos_label": "yes", "neg_label": "no"},
        r"column 'y' \(y_true\) has a value 'maybe'",
    ),
    (
        "value_outside_custom_classes",
        {"y": [2, 5, 0, 5, 2, None], "p": [2, 5, 5, 2, 2, 5]},
        {"pos_label": 2, "neg_label": 5},
        r"column 'y' \(y_true\) has a value 0 that is neither the positive label 2 nor the "
        r"negative label 5",
    ),
    (
        "third_enum_label",
        {
            "y": pl.Series(["yes", "no", "maybe", "no", "yes", None]).cast(
                pl.Enum(["yes", "no", "maybe"])
            ),
            "p": ["yes", "no"] * 3,
        },
        {"pos_label": "yes", "neg_label": "no"},
        r"column 'y' \(y_true\) has a value 'maybe'",
    ),
    (
        "third_label_beside_null_prediction",
        {"y": [1, 0, 7, 0, 1, None], "p": [1, 0, None, 1, 1, 0]},
        {},
        r"column 'y' \(y_true\) has a value 7",
    ),
    (
        "negative_weight",
        {"w": [1.0, -0.5, 1.0, 0.5, 3.0, None]},
        {"weight": "w"},
        r"column 'w' \(weight\) has a negative weight -0.5",
    ),
    (
        "negative_integer_weight",
        {"w": [1, -2, 1, 1, 3, None]},
        {"weight": "w"},
        r"column 'w' \(weight\) has a negative weight -2.0",
    ),
    (
        "nan_weight",
        {"w": [1.0, math.nan, 1.0, 0.5, 3.0, None]},
        {"weight": "w"},
        r"column 'w' \(weight\) has a non-finite weight nan",
    ),
    (
        "infinite_weight",
        {"w": [1.0, math.inf, 1.0, 0.5, 3.0, None]},
        {"weight": "w"},
        r"column 'w' \(weight\) has a non-finite weight inf",
    ),
    (
        "minus_infinite_weight",
        {"w": [1.0, -math.inf, 1.0, 0.5, 3.0, None]},
        {"weight": "w"},
        r"column 'w' \(weight\) has a negative weight -inf",
    ),
    (
        "bad_weight_in_a_row_left_out",
        {"w": [1.0, 1.0, 1.0, 0.5, 3.0, -1.0]},  # the row whose label is null
        {"weight": "w"},
        r"column 'w' \(weight\) has a negative weight -1.0",
    ),
]


@pytest.mark.parametrize("context", ["select", "agg"])
@pytest.mark.parametrize(
    ("columns", "options", "match"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_bad_input_raises(
    columns: dict[str, Any], options: dict[str, Any], match: str, context: str
) -> None:
    df = frame().with_columns(
        [
            v.alias(k) if isinstance(v, pl.Series) else pl.Series(k, v, strict=False)
            for k, v in columns.items()
        ]
    )
    exprs = [pl.col("p").fair.metric(m, y_true="y", **options) for m in FIVE]
    build = (
        (lambda d: d.group_by("g").agg(exprs)) if context == "agg" else (lambda d: d.select(exprs))
    )
    name = match.split("'")[1]  # Polars names the column too
    full = rf"failed in column '{name}'.*{match}"
    with pytest.raises(pl.exceptions.InvalidOperationError, match=full):
        build(df)
    lazy = build(df.lazy())  # building the query does not raise
    for engine in ENGINES:
        with pytest.raises(pl.exceptions.InvalidOperationError, match=full):
            lazy.collect(engine=engine)


def test_nan_score_raises_in_rank_metrics() -> None:
    df = frame().with_columns(s=pl.Series([0.9, math.nan, 0.4, 0.7, 0.6, 0.5]))
    for method in sorted(RANK_METHODS):
        lazy = df.lazy().group_by("g").agg(getattr(pl.col("s").fair, method)(y_true="y"))
        for engine in ENGINES:
            with pytest.raises(
                pl.exceptions.InvalidOperationError, match=r"column 's' \(y_score\) has a NaN"
            ):
                lazy.collect(engine=engine)


def test_valid_edge_values_do_not_raise() -> None:
    """Zero and negative-zero weights, Boolean labels, an empty frame: no error."""
    df = frame().with_columns(
        w=pl.Series([0.0, -0.0, 1.0, 0.5, 3.0, None]), p=pl.col("p").cast(pl.Boolean)
    )
    exprs = [pl.col("p").fair.metric(m, y_true="y", weight="w") for m in FIVE]
    for engine in ENGINES:
        out = df.lazy().group_by("g").agg(exprs).sort("g").collect(engine=engine)
        assert out.filter(pl.col("g") == "a")["true_positive_rate"].item() is None  # 0 / 0
        empty = df.clear().lazy().select(exprs).collect(engine=engine)
        assert empty.row(0) == (None,) * len(FIVE)


# ---------------------------------------------------------------------------------------------
# nulls are left out: a brute-force oracle (hypothesis)
# ---------------------------------------------------------------------------------------------


def _oracle(df: pl.DataFrame, weighted: bool) -> dict[Any, tuple[float, float, float, float]]:
    """Cells per group over the complete rows, by NumPy."""
    out = {}
    cols = ["y", "p", "w"] if weighted else ["y", "p"]
    for g in df["g"].unique().to_list():
        part = df.filter(pl.col("g") == g).drop_nulls(cols)
        y, p = part["y"].to_numpy() == 1, part["p"].to_numpy() == 1
        w = part["w"].to_numpy() if weighted else np.ones(part.height)
        out[g] = tuple(
            float(np.sum(w[mask])) for mask in (y & p, ~y & p, ~y & ~p, y & ~p)
        )  # tp, fp, tn, fn
    return out


def _rate(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


@settings(max_examples=min(settings().max_examples, 60))
@given(
    data=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]),
            st.sampled_from([0, 1, None]),
            st.sampled_from([0, 1, None]),
            st.one_of(st.none(), st.floats(0, 5, allow_nan=False)),
        ),
        min_size=0,
        max_size=40,
    ),
    weighted=st.booleans(),
)
def test_nulls_left_out_like_the_oracle(
    data: list[tuple[str, int | None, int | None, float | None]], weighted: bool
) -> None:
    df = pl.DataFrame(
        data,
        schema={"g": pl.String, "y": pl.Int8, "p": pl.Int8, "w": pl.Float64},
        orient="row",
    )
    w = "w" if weighted else None
    exprs = [
        pl.col("p").fair.true_positive_rate(y_true="y", weight=w),
        pl.col("p").fair.false_positive_rate(y_true="y", weight=w),
        pl.col("p").fair.selection_rate(y_true="y", weight=w),
    ]
    want = _oracle(df, weighted)
    for engine in ENGINES:
        got = df.lazy().group_by("g").agg(exprs).collect(engine=engine)
        assert got.height == len(want)
        for row in got.iter_rows(named=True):
            tp, fp, tn, fn = want[row["g"]]
            for name, value in (
                ("true_positive_rate", _rate(tp, tp + fn)),
                ("false_positive_rate", _rate(fp, fp + tn)),
                ("selection_rate", _rate(tp + fp, tp + fp + tn + fn)),
            ):
                if value is None:
                    assert row[name] is None, (name, row)
                else:
                    assert row[name] == pytest.approx(value, rel=1e-12, abs=1e-12), (name, row)
