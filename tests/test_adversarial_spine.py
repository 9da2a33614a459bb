"""Adversarial inputs for the spine, checked against a brute-force oracle in plain Python.

Each test targets a class of inputs on which the public API could give a silently wrong number,
an unclear error, lost rows, or different answers on the two engines: typed group keys of every
dtype (nulls, NaN, empty strings, unused Enum categories), references named by a value of another
type, ties between groups, weights at their edges. The oracle is a loop over the rows; no number
is taken from the package itself.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_fairmetrics as pfm
from polars_fairmetrics.exceptions import InvalidOptionError, ReferenceGroupError

ENGINES = ("in-memory", "streaming")
FEW = settings(max_examples=max(10, settings().max_examples // 2))
"""Each example runs three queries (eager, and lazy on both engines): half of the
profile's examples keeps the file fast."""
FEWER = settings(max_examples=max(10, settings().max_examples // 5))
"""For the slowest chains (attributes side by side: a roll-up, then the comparisons)."""


def _key(value: Any) -> Any:
    """A hashable oracle key: NaN is one group (as Polars groups it), -0.0 is 0.0."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, tuple):
        return tuple(_key(v) for v in value)
    return value


def oracle_counts(
    rows: Sequence[dict[str, Any]], keys: Sequence[str], weight: str | None = None
) -> dict[Any, dict[str, float]]:
    """Per-group confusion counts by a loop over the rows (labels and predictions 0/1)."""
    out: dict[Any, dict[str, float]] = {}
    for row in rows:
        key = _key(tuple(row[k] for k in keys))
        d = out.setdefault(
            key, {c: 0 for c in ("tp", "fp", "tn", "fn", "n_null", "tp_w", "fp_w", "tn_w", "fn_w")}
        )
        y, p = row["y"], row["p"]
        w = row[weight] if weight else 1.0
        if y is None or p is None or w is None:
            d["n_null"] += 1
            continue
        cell = ("t" if bool(y) == bool(p) else "f") + ("p" if p else "n")
        d[cell] += 1
        d[f"{cell}_w"] += w
    return out


def _all_results(make: Callable[[pl.DataFrame | pl.LazyFrame], Any], df: pl.DataFrame) -> list[Any]:
    """``make`` on the DataFrame, and on the LazyFrame collected by each engine."""
    out = [make(df)]
    lazy = make(df.lazy())
    assert isinstance(lazy, pl.LazyFrame)
    out += [lazy.collect(engine=e) for e in ENGINES]
    return out


# ---------------------------------------------------------------------------------------------
# Group keys of every dtype: counts against the oracle, on both engines
# ---------------------------------------------------------------------------------------------

_KEY_VALUES: dict[str, tuple[pl.DataType, list[Any]]] = {
    "enum_unused_categories": (pl.Enum(["z", "b", "a", "unused"]), ["a", "b", "z", None]),
    "categorical": (pl.Categorical(), ["a", "b", "", None]),
    "boolean": (pl.Boolean(), [True, False, None]),
    "int8_extremes": (pl.Int8(), [-128, 127, 0, None]),
    "uint64_extremes": (pl.UInt64(), [2**64 - 1, 0, 2**63, None]),
    "float_nan_signed_zero": (pl.Float64(), [0.5, float("nan"), -0.0, 0.0, None]),
    "float32": (pl.Float32(), [0.5, float("nan"), 1.0, None]),
    "date": (pl.Date(), [dt.date(2020, 1, 1), dt.date(1900, 1, 1), None]),
    "datetime": (pl.Datetime("us"), [dt.datetime(2020, 1, 1), dt.datetime(1970, 1, 1), None]),
    "string_empty_and_null_text": (pl.String(), ["", "null", "None", None]),
}


@FEW
@given(case=st.sampled_from(list(_KEY_VALUES)), data=st.data())
def test_counts_by_typed_keys_match_the_oracle(case: str, data: st.DataObject) -> None:
    dtype, values = _KEY_VALUES[case]
    n = data.draw(st.integers(0, 12))
    g = data.draw(st.lists(st.sampled_from(values), min_size=n, max_size=n))
    labels = st.lists(st.sampled_from([0, 1, None]), min_size=n, max_size=n)
    weights = st.lists(
        st.sampled_from([0.0, 0.5, 1.0, 3.25, 1e-300, 1e12, None]), min_size=n, max_size=n
    )
    df = pl.DataFrame(
        {
            "g": pl.Series(g, dtype=dtype),
            "y": pl.Series(data.draw(labels), dtype=pl.Int64),
            "p": pl.Series(data.draw(labels), dtype=pl.Int64),
            "w": pl.Series(data.draw(weights), dtype=pl.Float64),
        }
    )
    expected = oracle_counts(df.rows(named=True), ["g"], "w")
    for table in _all_results(
        lambda d: pfm.confusion_counts(d, y_true="y", y_pred="p", by="g", weight="w"), df
    ):
        assert table.schema["g"] == df.schema["g"]  # keys keep their type
        got = {_key((r["g"],)): r for r in table.iter_rows(named=True)}
        assert set(got) == set(expected)
        assert int(table["n"].sum()) + int(table["n_null"].sum()) == n  # no row lost
        for key, want in expected.items():
            row = got[key]
            for c in ("tp", "fp", "tn", "fn", "n_null"):
                assert row[c] == want[c], (key, c)
            for c in ("tp_w", "fp_w", "tn_w", "fn_w"):
                assert row[c] == pytest.approx(want[c], rel=1e-12, abs=0.0), (key, c)


# ---------------------------------------------------------------------------------------------
# A named reference is a typed value of its column
# ---------------------------------------------------------------------------------------------


@FEW
@given(
    groups=st.lists(st.integers(-3, 3), min_size=1, max_size=10),
    reference=st.one_of(
        st.integers(-4, 4),
        st.floats(-4, 4, allow_nan=False).filter(lambda x: x * 2 == int(x * 2)),
        st.just(2**70),
        st.just(float("nan")),
    ),
    dtype=st.sampled_from([pl.Int8, pl.Int64, pl.UInt16]),
)
def test_numeric_reference_matches_only_an_equal_group(
    groups: list[int], reference: float, dtype: type[pl.DataType]
) -> None:
    """A reference 1.5 of an integer column is absent, never group 1 (cast would truncate)."""
    df = pl.DataFrame({"g": groups, "y": [1] * len(groups), "p": [1] * len(groups)})
    df = df.filter(pl.col("g") >= 0) if dtype == pl.UInt16 else df
    if df.height == 0:
        return
    df = df.with_columns(pl.col("g").cast(dtype))
    present = {g for g in df["g"].to_list() if g == reference}  # Python equality: the oracle

    def make(d: Any) -> Any:
        return pfm.disparities(
            d, y_true="y", y_pred="p", by="g", metrics="tpr", reference=reference
        )

    if not present:
        with pytest.raises(ReferenceGroupError, match="not found"):
            make(df)
        for engine in ENGINES:
            with pytest.raises(ReferenceGroupError, match="not found"):
                make(df.lazy()).collect(engine=engine)
        return
    for table in _all_results(make, df):
        assert set(table.filter("is_reference")["g"].to_list()) == present


@pytest.mark.parametrize(
    ("values", "reference"),
    [
        (["a", "b"], 1),
        ([1, 2], "1"),
        ([1, 2], True),
        ([True, False], 1),
        ([0.5, 1.0], "0.5"),
        ([dt.date(2020, 1, 1), dt.date(2020, 1, 2)], "2020-01-01"),
    ],
)
def test_reference_of_another_type_is_an_error_naming_the_column(
    values: list[Any], reference: Any
) -> None:
    df = pl.DataFrame({"g": values, "y": [1, 0], "p": [1, 1]})
    for data in (df, df.lazy()):  # raised when the query is built
        with pytest.raises(ReferenceGroupError, match=r"cannot name a group of column 'g'"):
            pfm.disparities(data, y_true="y", y_pred="p", by="g", reference=reference)
        with pytest.raises(ReferenceGroupError, match=r"column 'g' \(group\), which has dtype"):
            pfm.fairness_criteria(data, y_true="y", y_pred="p", by="g", reference=reference)


def test_audit_checks_the_reference_as_the_engine_matches_it() -> None:
    """The report's up-front check and the comparisons agree: 1.5 is not group 1."""
    df = pl.DataFrame({"g": [1, 1, 2, 2], "y": [1, 0, 1, 0], "p": [1, 0, 0, 1]})
    with pytest.raises(ReferenceGroupError, match=r"1\.5"):
        pfm.audit(df, y_true="y", y_pred="p", by="g", reference=1.5)
    with pytest.raises(ReferenceGroupError, match=r'reference group g="1" not found'):
        pfm.audit(df, y_true="y", y_pred="p", by="g", reference="1")
    report = pfm.audit(df, y_true="y", y_pred="p", by="g", reference=1.0)
    assert report is not None


# ---------------------------------------------------------------------------------------------
# Between groups: ties are broken by the keys, whatever the row order and the engine
# ---------------------------------------------------------------------------------------------


@FEW
@given(
    cells=st.lists(
        st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2), st.integers(0, 2)),
        min_size=1,
        max_size=12,
    ),
    seed=st.integers(0, 2**16),
)
def test_worst_and_best_group_ties_go_to_the_first_key(
    cells: list[tuple[int, int, int, int]], seed: int
) -> None:
    n = len(cells)
    table = pl.DataFrame(
        {
            "g": list(range(n)),
            "tp": [c[0] for c in cells],
            "fp": [c[1] for c in cells],
            "tn": [c[2] for c in cells],
            "fn": [c[3] for c in cells],
        }
    )
    table = table.with_columns(n=pl.sum_horizontal("tp", "fp", "tn", "fn"))
    tpr = {g: (c[0] / (c[0] + c[3]) if c[0] + c[3] else None) for g, c in enumerate(cells)}
    defined = {g: v for g, v in tpr.items() if v is not None}
    shuffled = table.sample(fraction=1.0, shuffle=True, seed=seed)
    for t in _all_results(lambda d: pfm.between_groups(d, metrics="tpr"), shuffled):
        row = t.row(0, named=True)
        assert row["n_groups"] == n and row["n_undefined"] == n - len(defined)
        if not defined:
            assert row["worst_group"] is None and row["best_group"] is None
            continue
        low, high = min(defined.values()), max(defined.values())
        worst = min(g for g, v in defined.items() if v == low)
        best = min(g for g, v in defined.items() if v == high)
        assert row["worst_group"] == {"g": worst} and row["best_group"] == {"g": best}
        assert row["min"] == low and row["max"] == high
        assert row["ratio"] == (low / high if high else None)


def test_worst_group_of_many_tied_groups_is_stable_across_engines() -> None:
    """Thousands of tied groups: the streaming engine's row order must not pick the group."""
    g = 20_000
    df = pl.DataFrame(
        {
            "g": np.repeat(np.arange(g), 4),
            "y": np.tile([1, 0, 1, 0], g),
            "p": np.tile([1, 1, 0, 0], g),
        }
    )
    counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by="g")
    for source in (counts, counts.reverse(), counts.sample(fraction=1.0, shuffle=True, seed=3)):
        for t in _all_results(lambda d: pfm.between_groups(d, metrics="accuracy"), source):
            assert t["worst_group"].to_list() == [{"g": 0}]
            assert t["best_group"].to_list() == [{"g": 0}]


# ---------------------------------------------------------------------------------------------
# Weighted sums at the edges of Float64: no NaN, no infinity, no spurious null
# ---------------------------------------------------------------------------------------------


def _exact_metrics(tp: float, fp: float, tn: float, fn: float) -> dict[str, float | None]:
    """MCC and F1 in 60-digit decimal arithmetic (no overflow, no underflow)."""
    import decimal

    ctx = decimal.Context(prec=60, Emax=10**6, Emin=-(10**6))
    a, b, c, d = (ctx.create_decimal(x) for x in (tp, fp, tn, fn))
    margins = ctx.multiply(ctx.multiply(a + b, a + d), ctx.multiply(c + b, c + d))
    mcc = None if margins == 0 else float(ctx.divide(a * c - b * d, ctx.sqrt(margins)))
    f1_den = 2 * a + b + d
    f1 = None if f1_den == 0 else float(ctx.divide(2 * a, f1_den))
    return {"matthews_corrcoef": mcc, "f1_score": f1}


@FEW
@given(
    cells=st.lists(st.tuples(*[st.integers(0, 9)] * 4), min_size=1, max_size=6),
    scale=st.sampled_from([5e-324, 1e-300, 1e-150, 1e-80, 1.0, 1e80, 1e150, 1e300, 2e307]),
)
def test_mcc_and_f1_of_extreme_weighted_sums_match_exact_arithmetic(
    cells: list[tuple[int, int, int, int]], scale: float
) -> None:
    """MCC's textbook form multiplies four margins: weighted sums of 1e100 overflow it (inf,
    then NaN), sums of 1e-100 underflow it (0, a spurious null); F1's 2·TP overflows above
    9e307. The metric is scale-invariant: the answer is the one of the small integers."""
    cols = ("tp", "fp", "tn", "fn")
    table = pl.DataFrame(
        {
            "g": list(range(len(cells))),
            **{c: [cell[i] for cell in cells] for i, c in enumerate(cols)},
            **{f"{c}_w": [cell[i] * scale for cell in cells] for i, c in enumerate(cols)},
        }
    )
    table = table.filter(
        pl.sum_horizontal([f"{c}_w" for c in cols]).is_finite()  # a finite total, as counted
    )
    for t in _all_results(
        lambda d: pfm.metrics_from_counts(d, metrics=["mcc", "f1"], wide=True), table
    ):
        for row in t.iter_rows(named=True):
            cell = cells[row["g"]]
            want = _exact_metrics(*(x * scale for x in cell))
            for name, expected in want.items():
                got = row[name]
                if expected is None:
                    assert got is None, (name, cell, scale, got)
                else:
                    assert got is not None and math.isfinite(got), (name, cell, scale, got)
                    assert got == pytest.approx(expected, rel=1e-12, abs=1e-15), (name, cell)


def test_huge_row_weights_give_no_nan_metric() -> None:
    """Finite weights whose total is finite (1e300 per row): every metric a number or null."""
    df = pl.DataFrame(
        {
            "g": ["a", "a", "a", "b", "b"],
            "y": [1, 0, 0, 1, 0],
            "p": [1, 1, 0, 1, 1],
            "w": [1e300, 1e300, 5e299, 1e300, 1e300],
        }
    )
    for t in _all_results(
        lambda d: pfm.group_metrics(d, y_true="y", y_pred="p", by="g", weight="w"), df
    ):
        values = [v for v in t["value"].to_list() if v is not None]
        assert all(math.isfinite(v) for v in values)
        mcc = t.filter(pl.col("g") == "a", pl.col("metric") == "matthews_corrcoef")
        assert mcc["value"].item() == pytest.approx(
            _exact_metrics(1e300, 1e300, 5e299, 0.0)["matthews_corrcoef"] or 0.0
        )


# ---------------------------------------------------------------------------------------------
# Disparities and criteria against the oracle: every reference, null groups, intersections
# ---------------------------------------------------------------------------------------------


def _rate(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


_ORACLE_RATES: dict[str, Callable[[dict[str, float]], float | None]] = {
    "selection_rate": lambda c: _rate(c["tp"] + c["fp"], c["tp"] + c["fp"] + c["tn"] + c["fn"]),
    "true_positive_rate": lambda c: _rate(c["tp"], c["tp"] + c["fn"]),
    "false_positive_rate": lambda c: _rate(c["fp"], c["fp"] + c["tn"]),
    "false_negative_rate": lambda c: _rate(c["fn"], c["tp"] + c["fn"]),
    "positive_predictive_value": lambda c: _rate(c["tp"], c["tp"] + c["fp"]),
}


def _cells(counts: dict[str, float], weighted: bool) -> dict[str, float]:
    return {c: counts[f"{c}_w" if weighted else c] for c in ("tp", "fp", "tn", "fn")}


def _sum_cells(groups: Sequence[dict[str, float]]) -> dict[str, float]:
    return {c: sum(g[c] for g in groups) for c in ("tp", "fp", "tn", "fn")}


_REFERENCES = ("overall", "rest", "largest", "named", "named_null")


def _ratio(value: float | None, ref: float | None, infinity: bool) -> float | None:
    """group / reference: null where undefined or (by default) where the reference is 0; with
    ``zero_reference="infinity"`` x / 0 is +inf for x > 0 (0 / 0 stays null)."""
    if value is None or ref is None:
        return None
    if ref == 0:
        return math.inf if infinity and value > 0 else None
    return value / ref


@FEW
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "", None]),
            st.sampled_from([1, 2, None]),
            st.sampled_from([0, 1]),
            st.sampled_from([0, 1, None]),
            st.sampled_from([0.0, 0.5, 1.0, 2.0]),
        ),
        min_size=1,
        max_size=14,
    ),
    two_keys=st.booleans(),
    weighted=st.booleans(),
    reference=st.sampled_from(_REFERENCES),
    infinity=st.booleans(),
)
def test_disparities_match_the_oracle(
    rows: list[tuple[Any, ...]], two_keys: bool, weighted: bool, reference: str, infinity: bool
) -> None:
    df = pl.DataFrame(
        rows,
        schema={"s": pl.String, "k": pl.Int8, "y": pl.Int64, "p": pl.Int64, "w": pl.Float64},
        orient="row",
    )
    keys = ["s", "k"] if two_keys else ["s"]
    groups = oracle_counts(df.rows(named=True), keys, "w" if weighted else None)
    cells = {g: _cells(c, weighted) for g, c in groups.items()}
    sizes = {g: c["tp"] + c["fp"] + c["tn"] + c["fn"] for g, c in groups.items()}  # rows
    ordered = sorted(groups, key=lambda g: tuple((v is None, v) for v in g))
    first = ordered[0]
    ref: Any
    if reference == "named":  # a tuple, a value, or a mapping for the null group
        ref = first if two_keys else first[0] if first[0] is not None else {"s": None}
    elif reference == "named_null":
        ref = {"s": None, "k": None} if two_keys else {"s": None}
    else:
        ref = reference

    def reference_cells(g: Any) -> dict[str, float] | None:
        if reference == "overall":
            return _sum_cells(list(cells.values()))
        if reference == "rest":
            return _sum_cells([c for h, c in cells.items() if h != g])
        if reference == "largest":
            most = max(sizes.values())
            return cells[next(h for h in ordered if sizes[h] == most)]
        target = first if reference == "named" else (None,) * len(keys)
        return cells.get(target)

    if reference == "named_null" and (None,) * len(keys) not in cells:
        with pytest.raises(ReferenceGroupError):
            pfm.disparities(df, y_true="y", y_pred="p", by=keys, reference=ref)
        return
    names = list(_ORACLE_RATES)

    def make(d: Any) -> Any:
        return pfm.disparities(
            d,
            y_true="y",
            y_pred="p",
            by=keys,
            weight="w" if weighted else None,
            metrics=names,
            reference=ref,
            zero_reference="infinity" if infinity else "null",
            wide=True,
        )

    for t in _all_results(make, df):
        assert t.height == len(groups)
        for row in t.iter_rows(named=True):
            g = tuple(row[k] for k in keys)
            own, other = cells[g], reference_cells(g)
            assert other is not None
            for m in names:
                value, ref_value = _ORACLE_RATES[m](own), _ORACLE_RATES[m](other)
                for got, want in (
                    (row[m], value),
                    (row[f"{m}_reference_value"], ref_value),
                    (
                        row[f"{m}_difference"],
                        None if value is None or ref_value is None else value - ref_value,
                    ),
                    (row[f"{m}_ratio"], _ratio(value, ref_value, infinity)),
                ):
                    if want is None:
                        assert got is None, (m, g, reference)
                    elif math.isinf(want):
                        assert got == want, (m, g, reference)
                    else:
                        assert got == pytest.approx(want, rel=1e-12, abs=1e-12), (m, g, reference)


# ---------------------------------------------------------------------------------------------
# The report's JSON: every group stays apart (NaN is not null) and reads back exactly
# ---------------------------------------------------------------------------------------------


def test_report_json_keeps_a_nan_group_apart_from_the_null_group() -> None:
    import json

    from polars.testing import assert_frame_equal

    df = pl.DataFrame(
        {
            "g": [0.5, float("nan"), 0.5, float("nan"), None, None, float("inf"), -0.0],
            "y": [1, 0, 1, 0, 1, 1, 0, 1],
            "p": [1, 1, 0, 0, 1, None, 0, 1],
        }
    )
    report = pfm.audit(df, y_true="y", y_pred="p", by="g")
    doc = json.loads(report.to_json())
    non_finite = {"NaN", "Infinity", "-Infinity"}
    for name in report.section_names:
        rows = doc["sections"][name]["rows"]
        table = report[name]
        if "g" in table.columns:  # the groups, as written: four distinct keys
            written = {json.dumps(r["g"]) for r in rows}
            assert len(written) == table["g"].n_unique()
        for row in rows:  # the strings of the non-finite floats read back as floats
            for k, v in row.items():
                if isinstance(v, str) and v in non_finite and table.schema[k] == pl.Float64:
                    row[k] = float(v)
        back = pl.DataFrame(rows, schema=table.schema, orient="row")
        assert_frame_equal(back, table)


# ---------------------------------------------------------------------------------------------
# The `.fair` expressions: the same numbers as the oracle, nulls left out, overflow an error
# ---------------------------------------------------------------------------------------------


@FEWER
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", None]),
            st.sampled_from([True, False, None]),
            st.sampled_from([0, 1, None]),
            st.sampled_from([0.0, 0.25, 1.0, 1e-30, 1e30, None]),  # within Float32
        ),
        min_size=1,
        max_size=12,
    )
)
def test_expression_metrics_match_the_oracle(rows: list[tuple[Any, ...]]) -> None:
    df = pl.DataFrame(
        rows,
        schema={"g": pl.String, "y": pl.Boolean, "p": pl.Int8, "w": pl.Float32},
        orient="row",
    )
    names = list(_ORACLE_RATES)
    oracle = {g: _cells(c, True) for g, c in oracle_counts(df.rows(named=True), ["g"], "w").items()}

    def make(d: Any) -> Any:
        return (
            d.group_by("g")
            .agg(pl.col("p").fair.metric(m, y_true="y", weight="w").alias(m) for m in names)
            .sort("g", nulls_last=True)
        )

    for t in _all_results(make, df):
        assert t.height == len(oracle)
        for row in t.iter_rows(named=True):
            cells = oracle[(row["g"],)]
            for m in names:
                want = _ORACLE_RATES[m](cells)
                if want is None:
                    assert row[m] is None, (m, row)
                else:
                    assert row[m] == pytest.approx(want, rel=1e-6), (m, row)  # Float32 weights


def test_expression_weights_summing_past_float64_are_an_error_not_nan() -> None:
    df = pl.DataFrame({"y": [1, 0, 1], "p": [1, 0, 1], "w": [1e308, 1e308, 1.0]})
    query = df.lazy().select(pl.col("p").fair.accuracy(y_true="y", weight="w"))
    for engine in ENGINES:
        with pytest.raises(pl.exceptions.InvalidOperationError, match=r"sum to infinity"):
            query.collect(engine=engine)
    # the same weights split over groups whose sums are finite: defined, finite values
    by_group = df.with_columns(g=pl.Series(["a", "b", "b"])).group_by("g")
    out = by_group.agg(pl.col("p").fair.accuracy(y_true="y", weight="w")).sort("g")
    assert out["accuracy"].to_list() == [1.0, 1.0]


# ---------------------------------------------------------------------------------------------
# Scores against thresholds: the rule score >= t in the score's own precision
# ---------------------------------------------------------------------------------------------


@FEW
@given(
    scores=st.lists(
        st.sampled_from([0.0, -0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0, None]), min_size=1, max_size=12
    ),
    thresholds=st.lists(
        st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0]), min_size=1, max_size=4, unique=True
    ),
    many=st.booleans(),
    float32=st.booleans(),
)
def test_score_thresholds_match_numpy_in_the_score_precision(
    scores: list[float | None], thresholds: list[float], many: bool, float32: bool
) -> None:
    """A Float32 score of 0.7 is predicted positive at threshold 0.7, as ``pl.col(s) >= 0.7``
    and NumPy's ``scores >= np.float32(0.7)`` say (cast to Float64 first, it fell just below);
    the binary search for many thresholds (> 32) bins as the comparisons do."""
    dtype = pl.Float32 if float32 else pl.Float64
    grid = sorted(thresholds + ([0.95 + i / 1000 for i in range(40)] if many else []))
    y = [i % 2 for i in range(len(scores))]
    df = pl.DataFrame({"y": y, "s": pl.Series(scores, dtype=dtype)})
    np_dtype = np.float32 if float32 else np.float64
    for t in _all_results(
        lambda d: pfm.confusion_counts(d, y_true="y", y_score="s", threshold=grid), df
    ):
        for row in t.filter(pl.col("threshold").is_in(thresholds)).iter_rows(named=True):
            cut = np_dtype(row["threshold"])
            pred = [None if s is None else bool(np_dtype(s) >= cut) for s in scores]
            tp = sum(1 for p, yy in zip(pred, y, strict=True) if p and yy)
            fp = sum(1 for p, yy in zip(pred, y, strict=True) if p and not yy)
            assert (row["tp"], row["fp"]) == (tp, fp), (row, scores)
            assert row["n_null"] == scores.count(None)
    # the same rule as a user's own comparison, and as the curves' grid
    own = pfm.confusion_counts(
        df.with_columns(p=pl.col("s") >= thresholds[0]), y_true="y", y_pred="p"
    )
    at = pfm.confusion_counts(df, y_true="y", y_score="s", threshold=thresholds[0])
    assert own.select("tp", "fp", "tn", "fn").equals(at.select("tp", "fp", "tn", "fn"))


def test_float32_scores_on_the_curve_grid_match_the_counts() -> None:
    df = pl.DataFrame(
        {"y": [1, 0, 1, 0, 1], "s": pl.Series([0.7, 0.7, 0.3, 0.1, 0.9], dtype=pl.Float32)}
    )
    grid = pfm.curve_counts(df, y_true="y", y_score="s", mode="grid", bins=10)
    counts = pfm.confusion_counts(
        df, y_true="y", y_score="s", threshold=grid["threshold"].to_list()
    )
    cols = ["threshold", "tp", "fp", "tn", "fn"]
    assert grid.select(cols).sort("threshold").equals(counts.select(cols).sort("threshold"))
    at = grid.filter(pl.col("threshold") == 0.7)
    assert (at["tp"].item(), at["fp"].item()) == (2, 1)  # both 0.7 scores, and 0.9


@pytest.mark.parametrize("name", ["tp_w2", "fn_w2", "n_null_weight", "n_w", "tp"])
def test_a_group_column_named_like_a_count_column_is_refused(name: str) -> None:
    """A key named like a column of a count table would be summed away downstream (the
    comparisons of its count table silently became the overall values)."""
    df = pl.DataFrame({name: ["a", "a", "b"], "y": [1, 0, 1], "p": [1, 1, 0], "w": [1.0] * 3})
    for data in (df, df.lazy()):
        with pytest.raises(InvalidOptionError, match=rf"group column '{name}' collides"):
            pfm.confusion_counts(data, y_true="y", y_pred="p", by=name, weight="w")


# ---------------------------------------------------------------------------------------------
# Label dtypes: every numeric dtype counts like the oracle
# ---------------------------------------------------------------------------------------------

_LABEL_DTYPES = [pl.Decimal(10, 2), pl.Decimal(38, 0), pl.UInt8, pl.Int128, pl.Float32, pl.Int8]


@FEW
@given(
    labels=st.lists(
        st.tuples(
            st.sampled_from(["a", "b"]), st.sampled_from([0, 1, None]), st.sampled_from([0, 1])
        ),
        min_size=1,
        max_size=10,
    ),
    dtype=st.sampled_from(_LABEL_DTYPES),
)
def test_numeric_label_dtypes_count_like_the_oracle(
    labels: list[tuple[str, int | None, int]], dtype: pl.DataType
) -> None:
    """Decimal labels failed inside the count scan with a raw Polars error (the label mapping's
    Decimal(38, s) literals against a Decimal(10, 2) column)."""
    df = pl.DataFrame(labels, schema={"g": pl.String, "y": pl.Int64, "p": pl.Int64}, orient="row")
    expected = oracle_counts(df.rows(named=True), ["g"])
    df = df.with_columns(pl.col("y", "p").cast(dtype))
    for t in _all_results(lambda d: pfm.confusion_counts(d, y_true="y", y_pred="p", by="g"), df):
        for row in t.iter_rows(named=True):
            want = expected[(row["g"],)]
            assert [row[c] for c in ("tp", "fp", "tn", "fn", "n_null")] == [
                want[c] for c in ("tp", "fp", "tn", "fn", "n_null")
            ]


def test_decimal_labels_in_calibration_and_model_comparisons() -> None:
    df = pl.DataFrame(
        {
            "g": ["a", "a", "b", "b"],
            "y": pl.Series([1, 0, 1, 0], dtype=pl.Decimal(10, 2)),
            "p": pl.Series([1, 1, 0, 0], dtype=pl.Decimal(10, 2)),
            "s": [0.9, 0.2, 0.4, 0.3],
        }
    )
    cal = pfm.calibration_metrics(df, y_true="y", y_score="s", by="g")
    assert cal.height > 0
    models = pfm.compare_models(df, y_true="y", predictions=["p"], by="g", metrics="tpr")
    assert models["value"].to_list() == [1.0, 0.0]


@pytest.mark.parametrize(
    ("reference", "expected"),
    [(1, "1.00"), (1.1, "1.10"), (1.005, None), (1.001, None), (float("nan"), None)],
)
def test_decimal_reference_is_never_rounded_onto_a_group(
    reference: float, expected: str | None
) -> None:
    """A Decimal(10, 2) column's reference 1.005 is absent: the cast would round it to 1.00."""
    import decimal

    df = pl.DataFrame(
        {
            "g": pl.Series([1.0, 1.1, 2.0]).cast(pl.Decimal(10, 2)),
            "y": [1, 0, 1],
            "p": [1, 1, 0],
        }
    )

    def make(d: Any) -> Any:
        return pfm.disparities(
            d, y_true="y", y_pred="p", by="g", metrics="tpr", reference=reference
        )

    if expected is None:
        with pytest.raises(ReferenceGroupError, match="not found"):
            make(df)
        return
    for t in _all_results(make, df):
        assert t.filter("is_reference")["g"].to_list() == [decimal.Decimal(expected)]


def test_between_groups_of_equal_values_is_a_positive_zero() -> None:
    """max − min of equal values is 0.0, not -0.0 (which the report's JSON wrote as -0.0)."""
    df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [1, 0, 1, 0]})
    for t in _all_results(
        lambda d: pfm.between_groups(d, y_true="y", y_pred="p", by="g", metrics=["tpr", "fpr"]),
        df,
    ):
        assert [math.copysign(1.0, v) for v in t["difference"]] == [1.0, 1.0]
    assert '"difference": -0.0' not in pfm.audit(df, y_true="y", y_pred="p", by="g").to_json()


# ---------------------------------------------------------------------------------------------
# Attributes side by side (separately=True): each attribute counted as if alone
# ---------------------------------------------------------------------------------------------


@FEWER
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", None]),
            st.sampled_from([True, False, None]),
            st.sampled_from([0, 1, None]),
            st.sampled_from([0, 1]),
        ),
        min_size=1,
        max_size=12,
    ),
    reference=st.sampled_from(["overall", "rest", "largest"]),
)
def test_separately_counts_each_attribute_like_the_oracle(
    rows: list[tuple[Any, ...]], reference: str
) -> None:
    df = pl.DataFrame(
        rows, schema={"s": pl.String, "b": pl.Boolean, "y": pl.Int64, "p": pl.Int64}, orient="row"
    )

    def make(d: Any) -> Any:
        return pfm.disparities(
            d,
            y_true="y",
            y_pred="p",
            by=["s", "b"],
            separately=True,
            metrics="selection_rate",
            reference=reference,
        )

    for t in _all_results(make, df):
        assert t.schema["s"] == pl.String and t.schema["b"] == pl.Boolean
        for attribute in ("s", "b"):
            part = t.filter(pl.col("attribute") == attribute)
            other = "b" if attribute == "s" else "s"
            assert part[other].null_count() == part.height  # the other key is null
            groups = oracle_counts(df.rows(named=True), [attribute])
            assert part.height == len(groups)
            assert int(part["n"].sum()) + int(part["n_null"].sum()) == df.height  # no row lost
            total = _sum_cells([_cells(c, False) for c in groups.values()])
            sizes = {g: sum(_cells(c, False).values()) for g, c in groups.items()}
            order = sorted(groups, key=lambda g: (g[0] is None, g[0]))
            largest = next(g for g in order if sizes[g] == max(sizes.values()))
            for row in part.iter_rows(named=True):
                g = (row[attribute],)
                own = _cells(groups[g], False)
                ref = {
                    "overall": total,
                    "rest": {c: total[c] - own[c] for c in own},
                    "largest": _cells(groups[largest], False),
                }[reference]
                value = _ORACLE_RATES["selection_rate"](own)
                ref_value = _ORACLE_RATES["selection_rate"](ref)
                assert row["n_null"] == groups[g]["n_null"]
                assert row["value"] == (None if value is None else pytest.approx(value))
                assert row["reference_value"] == (
                    None if ref_value is None else pytest.approx(ref_value)
                )


@pytest.mark.parametrize(
    ("values", "reference"),
    [
        ([True, False], np.bool_(True)),
        ([1, 2], np.int64(1)),
        ([0.5, 1.0], np.float32(0.5)),
        (["a", "b"], np.str_("a")),
    ],
)
def test_numpy_scalar_reference_names_its_group(values: list[Any], reference: Any) -> None:
    """A reference taken from a NumPy array (``df["g"].to_numpy()[0]``) is its Python value."""
    df = pl.DataFrame({"g": values, "y": [1, 0], "p": [1, 1]})
    for t in _all_results(
        lambda d: pfm.disparities(d, y_true="y", y_pred="p", by="g", reference=reference), df
    ):
        assert t.filter("is_reference")["g"].unique().to_list() == [values[0]]


def test_report_json_writes_a_numpy_reference_as_its_value() -> None:
    import json

    df = pl.DataFrame({"g": [1, 2, 1, 2], "y": [1, 0, 1, 0], "p": [1, 1, 0, 0]})
    report = pfm.audit(df, y_true="y", y_pred="p", by="g", reference=np.int64(1))
    assert json.loads(report.to_json())["inputs"]["reference"] == 1  # not the text "1"


# ---------------------------------------------------------------------------------------------
# count tables made elsewhere: a negative, NaN or infinite count is an error at every entry
# ---------------------------------------------------------------------------------------------

_TABLE_ENTRIES: dict[str, Callable[[Any], Any]] = {
    "metrics_from_counts": lambda t: pfm.metrics_from_counts(t, metrics="accuracy"),
    "disparities": lambda t: pfm.disparities(t, metrics="accuracy", reference="rest"),
    "fairness_criteria": lambda t: pfm.fairness_criteria(t, reference="overall"),
    "between_groups": lambda t: pfm.between_groups(t, metrics="accuracy"),
    "deployment_metrics": lambda t: pfm.deployment_metrics(t, deploy_positive_rate=0.3),
}


@FEW
@given(
    # every cell positive: deployment needs both classes (empty classes are tested elsewhere)
    cells=st.lists(st.tuples(*[st.integers(1, 50)] * 4), min_size=2, max_size=4),
    weighted=st.booleans(),
    bad=st.sampled_from([None, -1.0, -0.5, math.nan, math.inf, -math.inf]),
    column=st.sampled_from(["tp", "fp", "tn", "fn"]),
    row=st.integers(0, 3),
    entry=st.sampled_from(sorted(_TABLE_ENTRIES)),
)
def test_count_table_values_are_checked_at_every_entry(
    cells: list[tuple[int, int, int, int]],
    weighted: bool,
    bad: float | None,
    column: str,
    row: int,
    entry: str,
) -> None:
    """A valid table (every count a non-negative finite number) never raises; one bad value in
    a cell count or a weighted sum raises naming that column, eagerly and on both engines."""
    row %= len(cells)
    names = ["tp", "fp", "tn", "fn"]
    data: dict[str, Any] = {"g": [f"g{i}" for i in range(len(cells))]}
    for j, c in enumerate(names):
        data[c] = [float(r[j]) if weighted else r[j] for r in cells]
        if weighted:
            data[f"{c}_w"] = [0.5 * r[j] for r in cells]
    target = f"{column}_w" if weighted and row % 2 else column
    if bad is not None:
        values = [float(v) for v in data[target]]
        values[row] = bad
        data[target] = values
    table = pl.DataFrame(data)
    call = _TABLE_ENTRIES[entry]
    if bad is None:
        out = call(table)
        assert isinstance(out, pl.DataFrame)
        for engine in ("in-memory", "streaming"):
            call(table.lazy()).collect(engine=engine)
        return
    error = pfm.InvalidWeightError if target.endswith("_w") else InvalidOptionError
    pattern = rf"column '{target}' of the count table has a (negative|non-finite) value"
    with pytest.raises(error, match=pattern):
        call(table)
    lazy = call(table.lazy())  # building the query does not raise
    for engine in ("in-memory", "streaming"):
        with pytest.raises(error, match=pattern):
            lazy.collect(engine=engine)


@pytest.mark.parametrize(
    ("by", "reference", "line"),
    [
        ("d", dt.date(2020, 1, 1), "reference: 2020-01-01"),
        ("g", 'a "b"', 'reference: "a \\"b\\""'),
        (["g", "d"], {"g": 'a "b"', "d": dt.date(2020, 1, 1)}, None),
        ("g", "largest", "reference: largest"),
        ("g", "rest", "reference: rest"),
    ],
)
def test_report_reference_line_shows_values_as_the_tables_do(
    by: str | list[str], reference: Any, line: str | None
) -> None:
    """The report's "reference:" line shows group values as the tables label them (text quoted
    and escaped, a date as 2020-01-01), never a Python repr such as datetime.date(2020, 1, 1)."""
    df = pl.DataFrame(
        {
            "g": ['a "b"', "c"] * 3,
            "d": [dt.date(2020, 1, 1), dt.date(2021, 1, 1)] * 3,
            "y": [1, 0, 1, 0, 1, 1],
            "p": [1, 1, 0, 0, 1, 0],
        }
    )
    report = pfm.audit(df, y_true="y", y_pred="p", by=by, reference=reference)
    shown = [x for x in report.to_terminal().splitlines() if x.startswith("reference:")]
    assert len(shown) == 1 and "datetime" not in shown[0] and "'" not in shown[0], shown
    if line is not None:
        assert shown[0] == line
