"""Adversarial checks of the ``.fair`` expression form's input validation.

The checks (:meth:`Counts.from_rows`) are filtered branches sharing one row predicate (any bad
label or weight), built before the dtype of the columns is known. What could go wrong: a value
that escapes the predicate (a label between the two classes, NaN, a negative label, a bad value
beside a null, a bad value in one group only, a negative zero or tiny negative weight), a valid
value flagged (nulls, zero weights, ``-0.0``), the message naming the wrong column or a value
that is not in it, or numbers that change. Every case runs on both engines, in ``select`` and
in ``group_by().agg()``, against a plain-Python oracle.
"""

from __future__ import annotations

import math
import re
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_fairmetrics  # noqa: F401  (registers .fair)

ENGINES = ("in-memory", "streaming")
FIVE = ["true_positive_rate", "false_positive_rate", "precision", "selection_rate", "accuracy"]


def _is_bad_label(v: Any, pos: Any, neg: Any) -> bool:
    if v is None:
        return False
    if isinstance(v, float) and math.isnan(v):
        return True
    return bool(v != pos and v != neg)


def _is_bad_weight(v: float | None) -> bool:
    return v is not None and (math.isnan(v) or v < 0 or math.isinf(v))


def _rate(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


def oracle(
    rows: list[tuple[Any, Any, Any, float | None]], pos: Any, weighted: bool
) -> dict[Any, dict[str, float | None]]:
    """The five metrics per group from the complete rows, in plain Python."""
    cells: dict[Any, list[float]] = {}
    for g, y, p, w in rows:
        cells.setdefault(g, [0.0, 0.0, 0.0, 0.0])
        if y is None or p is None or (weighted and w is None):
            continue
        weight = float(w) if weighted and w is not None else 1.0
        k = {(True, True): 0, (False, True): 1, (False, False): 2, (True, False): 3}
        cells[g][k[(y == pos, p == pos)]] += weight
    out = {}
    for g, (tp, fp, tn, fn) in cells.items():
        out[g] = {
            "true_positive_rate": _rate(tp, tp + fn),
            "false_positive_rate": _rate(fp, fp + tn),
            "positive_predictive_value": _rate(tp, tp + fp),
            "selection_rate": _rate(tp + fp, tp + fp + tn + fn),
            "accuracy": _rate(tp + tn, tp + fp + tn + fn),
        }
    return out


def text(value: Any, dtype: pl.DataType) -> str:
    """A value as the error message prints it."""
    if isinstance(value, str):
        return repr(value)
    return str(pl.Series([value], dtype=dtype).cast(pl.String).str.to_lowercase().item())


def run(
    rows: list[tuple[Any, Any, Any, float | None]],
    schema: dict[str, Any],
    *,
    pos: Any,
    neg: Any,
    weighted: bool,
) -> None:
    """Every engine and context: the oracle's numbers, or an error naming a bad column/value."""
    df = pl.DataFrame(rows, schema=schema, orient="row")
    opts: dict[str, Any] = {"y_true": "y", "weight": "w" if weighted else None}
    if not (pos == 1 and neg == 0):
        opts.update(pos_label=pos, neg_label=neg)
    exprs = [pl.col("p").fair.metric(m, **opts) for m in FIVE]
    bad_values: dict[str, list[str]] = {}
    for col, i in (("y", 1), ("p", 2)):
        found = [r[i] for r in rows if _is_bad_label(r[i], pos, neg)]
        if found:
            bad_values[col] = [text(v, df.schema[col]) for v in found]
    if weighted:
        found_w = [r[3] for r in rows if _is_bad_weight(r[3])]
        if found_w:
            bad_values["w"] = [text(v, pl.Float64) for v in found_w]
    queries = {
        "agg": df.lazy().group_by("g").agg(exprs),
        "select": df.lazy().select(exprs),
    }
    for context, lf in queries.items():
        for engine in ENGINES:
            where = (context, engine)
            if bad_values:
                with pytest.raises(pl.exceptions.InvalidOperationError) as info:
                    lf.collect(engine=engine)  # type: ignore[call-overload]
                message = str(info.value)
                named = re.search(r"column '(\w+)' \((?:y_true|y_pred|weight)\) has a", message)
                assert named, (where, message)
                column = named.group(1)
                assert column in bad_values, (where, message, bad_values)
                assert re.search(rf"failed in column '{column}'", message), (where, message)
                kind = r"(?:negative weight|non-finite weight|value)"
                quoted = [
                    re.search(rf"has a {kind} {re.escape(v)}(?: that is neither|\"\])", message)
                    for v in bad_values[column]
                ]
                assert any(quoted), (where, message, bad_values)
                continue
            got = lf.collect(engine=engine)  # type: ignore[call-overload]
            if context == "select":
                want = oracle([("all", *r[1:]) for r in rows], pos, weighted)
                groups = {"all": got.row(0, named=True)} if rows else {}
            else:
                want = oracle(rows, pos, weighted)
                groups = {r.pop("g"): r for r in got.iter_rows(named=True)}
            assert set(groups) == set(want), where
            for g, values in want.items():
                for name, value in values.items():
                    if value is None:
                        assert groups[g][name] is None, (where, g, name)
                    else:
                        assert groups[g][name] == pytest.approx(value, rel=1e-12), (where, g, name)


SCHEMA = {"g": pl.String, "y": pl.Int8, "p": pl.Int8, "w": pl.Float64}
VALID = [("a", 1, 1, 1.0), ("a", 0, 1, 2.0), ("b", 1, 0, 0.5), ("b", 0, 0, 3.0)]


# ---------------------------------------------------------------------------------------------
# every dtype of label
# ---------------------------------------------------------------------------------------------

LABEL_DTYPES: list[tuple[str, Any, Any, Any, list[Any]]] = [
    # (id, dtype, pos, neg, bad values: none of them may escape)
    ("Int8", pl.Int8, 1, 0, [2, -1, 127, -128]),
    ("Int64", pl.Int64, 1, 0, [2, -1, 2**62, -(2**62)]),
    ("UInt8", pl.UInt8, 1, 0, [2, 255]),
    ("Float32", pl.Float32, 1, 0, [0.5, math.nan, math.inf, -math.inf, -0.5, 2.0]),
    ("Float64", pl.Float64, 1, 0, [0.5, 1e-300, math.nan, math.inf, -math.inf, 1.0000000000000002]),
    ("String", pl.String, "yes", "no", ["maybe", "", "Yes", "yes "]),
    ("Categorical", pl.Categorical, "yes", "no", ["maybe", "nyes"]),
    ("Enum", pl.Enum(["no", "maybe", "yes"]), "yes", "no", ["maybe"]),
    ("Int64_2_5", pl.Int64, 2, 5, [3, 4, 1, 6, 0, -2]),
    ("Float64_2_5", pl.Float64, 2.0, 5.0, [3.0, 4.5, 2.0000000000000004, math.nan]),
    ("negative_labels", pl.Int64, -1, -3, [-2, 0, 1, -4]),
]


def _labels(pos: Any, neg: Any) -> list[tuple[Any, Any, Any, float | None]]:
    return [
        ("a", pos, pos, 1.0),
        ("a", neg, pos, 2.0),
        ("b", pos, neg, 0.5),
        ("b", neg, neg, 3.0),
        ("b", None, pos, 1.0),
        ("a", pos, None, 1.0),
    ]


@pytest.mark.parametrize(
    ("dtype", "pos", "neg", "bad"), [c[1:] for c in LABEL_DTYPES], ids=[c[0] for c in LABEL_DTYPES]
)
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_every_label_dtype(dtype: Any, pos: Any, neg: Any, bad: list[Any], weighted: bool) -> None:
    schema = {**SCHEMA, "y": dtype, "p": dtype}
    rows = _labels(pos, neg)
    run(rows, schema, pos=pos, neg=neg, weighted=weighted)  # valid: the oracle's numbers
    for value in bad:
        # the bad value in y only, in p only, in one group only, beside a null other label
        run([*rows, ("b", value, pos, 1.0)], schema, pos=pos, neg=neg, weighted=weighted)
        run([*rows, ("a", neg, value, 1.0)], schema, pos=pos, neg=neg, weighted=weighted)
        run([*rows, ("c", value, None, None)], schema, pos=pos, neg=neg, weighted=weighted)
        run([*rows, ("c", None, value, 1.0)], schema, pos=pos, neg=neg, weighted=weighted)


def test_boolean_labels() -> None:
    schema = {**SCHEMA, "y": pl.Boolean, "p": pl.Boolean}
    rows = [("a", True, True, 1.0), ("a", False, True, 2.0), ("b", None, False, 1.0)]
    rows += [("b", True, None, 1.0), ("b", False, False, 0.0)]
    for weighted in (False, True):
        run(rows, schema, pos=1, neg=0, weighted=weighted)


def test_nulls_everywhere() -> None:
    rows: list[tuple[Any, Any, Any, float | None]] = [
        ("a", None, None, None),
        ("a", None, 1, 1.0),
        ("b", 1, None, 2.0),
        ("b", 0, 1, None),
    ]
    for weighted in (False, True):
        run(rows, SCHEMA, pos=1, neg=0, weighted=weighted)
        run([], SCHEMA, pos=1, neg=0, weighted=weighted)


# ---------------------------------------------------------------------------------------------
# weights
# ---------------------------------------------------------------------------------------------

WEIGHTS: list[tuple[str, float | None]] = [
    ("zero", 0.0),
    ("negative_zero", -0.0),
    ("null", None),
    ("tiny", 5e-324),
    ("huge", 1.7976931348623157e308),
    ("minus_tiny", -5e-324),
    ("minus_one", -1.0),
    ("nan", math.nan),
    ("inf", math.inf),
    ("minus_inf", -math.inf),
]


@pytest.mark.parametrize("weight", [w[1] for w in WEIGHTS], ids=[w[0] for w in WEIGHTS])
def test_weights(weight: float | None) -> None:
    for row in (("a", 1, 0, weight), ("c", None, 1, weight), ("c", 1, None, weight)):
        run([*VALID, row], SCHEMA, pos=1, neg=0, weighted=True)


def test_several_bad_weights_report_one() -> None:
    """NaN, +inf and a negative weight together: one of them is reported, as its kind."""
    for extra in (
        [math.nan, math.inf],
        [math.inf, math.nan, -2.0],
        [math.nan, -math.inf],
        [math.nan, math.nan],
    ):
        rows = VALID + [("a", 1, 1, v) for v in extra]
        run(rows, SCHEMA, pos=1, neg=0, weighted=True)


def test_integer_weights() -> None:
    schema = {**SCHEMA, "w": pl.Int64}
    rows: list[tuple[Any, Any, Any, Any]] = [("a", 1, 1, 2), ("a", 0, 1, 0), ("b", 1, 0, None)]
    run(rows, schema, pos=1, neg=0, weighted=True)
    df = pl.DataFrame([*rows, ("b", 0, 0, -3)], schema=schema, orient="row")
    expr = pl.col("p").fair.accuracy(y_true="y", weight="w")
    for engine in ENGINES:
        with pytest.raises(pl.exceptions.InvalidOperationError, match=r"negative weight -3\.0\b"):
            df.lazy().group_by("g").agg(expr).collect(engine=engine)  # type: ignore[call-overload]


# ---------------------------------------------------------------------------------------------
# random frames against the oracle
# ---------------------------------------------------------------------------------------------


@settings(max_examples=min(settings().max_examples, 60), deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]),
            st.one_of(st.none(), st.sampled_from([2, 5]), st.integers(-1, 7)),
            st.one_of(st.none(), st.sampled_from([2, 5]), st.integers(-1, 7)),
            st.one_of(
                st.none(),
                st.floats(0, 4, allow_nan=False),
                st.sampled_from([-0.0, -1.0, math.nan, math.inf, -math.inf]),
            ),
        ),
        max_size=12,
    ),
    weighted=st.booleans(),
)
def test_random_frames_like_the_oracle(
    rows: list[tuple[str, int | None, int | None, float | None]], weighted: bool
) -> None:
    schema = {**SCHEMA, "y": pl.Int64, "p": pl.Int64}
    run(rows, schema, pos=2, neg=5, weighted=weighted)
