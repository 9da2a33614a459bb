"""Property tests: the core against the independent reference (``tests/reference.py``).

Every random frame (0-60 rows, 0-2 key columns with 1-4 groups, nulls in keys / labels /
predictions / scores / weights, int / Boolean / text labels, label predictions or scores with 1-3
thresholds, weights with zeros) goes through counts, every metric, disparities against the
overall population, the rest and a named group, the between-groups summary and the named
criteria, and each number is compared with the reference. Rows are reconciled in every count
(``n + n_null`` = input rows).

Registry-driven: :data:`CHECKS` maps a capability to a function ``(case, draw) -> None``; the main
test runs every check on every frame. A capability merged later (weights, curves, bootstrap,
ensemble) adds one function and one line there.

The number of frames comes from the hypothesis profile (``tests/conftest.py``):
``HYPOTHESIS_PROFILE=ci`` runs 10,000 frames through every check.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import (
    HIGHER_IS_BETTER,
    REF_CRITERIA,
    REF_METRICS,
    Case,
    Cell,
    Key,
    cases,
    close,
    group_label,
    ref_between_groups,
    ref_counts,
    ref_criteria,
    ref_disparities,
    ref_metric,
)

import polars_fairmetrics as pfm
from polars_fairmetrics import metrics as pfm_metrics

FRAMES = settings().max_examples
"""Frames per test, from the active hypothesis profile."""
Draw = Callable[[st.SearchStrategy[Any]], Any]


def _collect(case: Case, build: Callable[[pl.DataFrame | pl.LazyFrame], Any],
             mode: str) -> pl.DataFrame:
    """Run ``build`` on the frame eagerly, or lazily with the in-memory or streaming engine."""
    if mode == "eager":
        out = build(case.frame)
        assert isinstance(out, pl.DataFrame)
        return out
    lazy = build(case.frame.lazy())
    assert isinstance(lazy, pl.LazyFrame)
    return lazy.collect(engine="streaming" if mode == "streaming" else "in-memory")


def _key(row: dict[str, Any], case: Case) -> Key:
    return tuple(row[k] for k in (case.by or []))


def _counts_table(case: Case, mode: str) -> pl.DataFrame:
    return _collect(case, lambda d: pfm.confusion_counts(d, by=case.by, **case.options), mode)


def assert_reconciles(table: pl.DataFrame, n_rows: int) -> None:
    """Rows are never lost: counted + null rows = input rows, in every threshold partition."""
    parts = table.partition_by("threshold") if "threshold" in table.columns else [table]
    for part in parts:
        total = int(part["n"].sum()) + int(part["n_null"].sum())
        assert total == n_rows, f"{total} rows counted or reported, {n_rows} in the input"


# ---------------------------------------------------------------------------------------------
# Checks, one per capability
# ---------------------------------------------------------------------------------------------


def check_counts(case: Case, draw: Draw) -> None:
    mode = draw(st.sampled_from(["eager", "in-memory", "streaming"]))
    table = _counts_table(case, mode)
    ref = case.ref_counts()
    assert_reconciles(table, case.frame.height)
    assert table.height == len(ref)
    int_cols = ("tp", "fp", "tn", "fn", "n", "n_null", "n_null_y_true", "n_null_y_pred")
    for row in table.iter_rows(named=True):
        cell = ref[(_key(row, case), row.get("threshold"))]
        for c in int_cols:
            assert row[c] == getattr(cell, c), (c, row, cell)
        if case.weighted:
            assert row["n_null_weight"] == cell.n_null_weight
            for c in ("tp_w", "fp_w", "tn_w", "fn_w", "n_w"):
                assert close(row[c], getattr(cell, c)), (c, row, cell)
        else:
            assert "tp_w" not in row
    keys = [*(case.by or []), *(["threshold"] if "threshold" in table.columns else [])]
    if keys:  # sorted by the keys, nulls last
        assert table.select(keys).equals(table.select(keys).sort(keys, nulls_last=True))


def check_metrics(case: Case, draw: Draw) -> None:
    names = draw(st.sampled_from([None, ["tpr", "precision", "mcc"]]))
    mode = draw(st.sampled_from(["eager", "streaming"]))
    out = _collect(case, lambda d: pfm.group_metrics(d, by=case.by, metrics=names,
                                                      **case.options), mode)
    ref = case.ref_counts()
    expected = list(REF_METRICS) if names is None else [
        "true_positive_rate", "positive_predictive_value", "matthews_corrcoef"]
    assert out.height == len(ref) * len(expected)
    for row in out.iter_rows(named=True):
        cell = ref[(_key(row, case), row.get("threshold"))]
        want = ref_metric(row["metric"], cell, case.weighted)
        assert close(row["value"], want), (row, cell, want)
        assert row["n"] == cell.n


def _ratio_ok(ours: float | None, ours_ref: float | None, want: float | None,
              want_ref: float | None, weighted: bool) -> bool:
    """Ratios, except that a weighted reference value within 1e-9 of 0 is ill-conditioned
    (a float sum may land on 1e-17 instead of 0): then both must agree it is about 0."""
    if weighted and want_ref is not None and abs(want_ref) < 1e-9:
        return ours_ref is not None and abs(ours_ref) < 1e-9
    return close(ours, want, rel=1e-7)


def _reference_for(case: Case, draw: Draw) -> Any:
    options: list[Any] = ["overall", "rest"]
    if case.named is not None:
        options.append(case.named)
    return draw(st.sampled_from(options))


def _input(case: Case, draw: Draw, mode: str) -> tuple[pl.DataFrame | pl.LazyFrame, dict[str,
                                                                                       Any]]:
    """Rows (with the count options) or the count table (without), as the function accepts."""
    if draw(st.booleans()):
        data: pl.DataFrame | pl.LazyFrame = case.frame
        opts = dict(case.options)
    else:
        data = pfm.confusion_counts(case.frame, by=case.by, **case.options)
        opts = {}
    return (data if mode == "eager" else data.lazy()), opts


def _run(data: pl.DataFrame | pl.LazyFrame, mode: str) -> pl.DataFrame:
    if isinstance(data, pl.LazyFrame):
        return data.collect(engine="streaming" if mode == "streaming" else "in-memory")
    return data


def check_disparities(case: Case, draw: Draw) -> None:
    if case.by is None:
        return
    reference = _reference_for(case, draw)
    mode = draw(st.sampled_from(["eager", "streaming"]))
    data, opts = _input(case, draw, mode)
    ref_cells = case.ref_counts()
    out = _run(pfm.disparities(data, by=case.by, reference=reference, **opts), mode)
    want = ref_disparities(ref_cells, list(REF_METRICS), reference, case.weighted)
    assert out.height == len(want)
    for row in out.iter_rows(named=True):
        d = want[(_key(row, case), row.get("threshold"), row["metric"])]
        ctx = (reference, row, d)
        assert close(row["value"], d.value), ctx
        assert close(row["reference_value"], d.reference_value), ctx
        assert close(row["difference"], d.difference), ctx
        assert _ratio_ok(row["ratio"], row["reference_value"], d.ratio, d.reference_value,
                         case.weighted), ctx


def check_between_groups(case: Case, draw: Draw) -> None:
    if case.by is None:
        return
    mode = draw(st.sampled_from(["eager", "streaming"]))
    data, opts = _input(case, draw, mode)
    out = _run(pfm.between_groups(data, by=case.by, **opts), mode)
    want = ref_between_groups(case.ref_counts(), list(REF_METRICS), case.weighted)
    assert out.height == len(want)
    for row in out.iter_rows(named=True):
        s = want[(row.get("threshold"), row["metric"])]
        ctx = (row, s)
        for c in ("max", "min", "difference"):
            assert close(row[c], getattr(s, c)), ctx
        assert _ratio_ok(row["ratio"], row["max"], s.ratio, s.max, case.weighted), ctx
        assert row["n_groups"] == s.n_groups and row["n_undefined"] == s.n_undefined, ctx
        for c, allowed in (("worst_group", s.worst), ("best_group", s.best)):
            if not allowed:
                assert row[c] is None, ctx
            else:
                assert row[c] in {group_label(k) for k in allowed}, ctx


def check_criteria(case: Case, draw: Draw) -> None:
    if case.by is None:
        return
    reference = _reference_for(case, draw)
    mode = draw(st.sampled_from(["eager", "streaming"]))
    data, opts = _input(case, draw, mode)
    out = _run(pfm.fairness_criteria(data, by=case.by, reference=reference, **opts), mode)
    want = ref_criteria(case.ref_counts(), reference, case.weighted)
    assert out.height == len(want)
    disp = ref_disparities(case.ref_counts(), ["selection_rate"], reference, case.weighted)
    for row in out.iter_rows(named=True):
        k, t = _key(row, case), row.get("threshold")
        w = want[(k, t, row["criterion"])]
        if row["criterion"] == "disparate_impact":
            d = disp[(k, t, "selection_rate")]
            ok = _ratio_ok(row["value"], None if d.reference_value is None else
                           d.reference_value, w, d.reference_value, case.weighted)
            # the reference value itself is compared in check_disparities; here only the ratio
            assert ok or close(row["value"], w, rel=1e-7), (row, w)
        else:
            assert close(row["value"], w), (reference, row, w)


def check_expression_context(case: Case, draw: Draw) -> None:
    """``pl.col(pred).fair.<metric>(y_true=...)`` inside ``group_by().agg()`` (label predictions)."""
    if case.spec.y_pred is None:
        return
    names = draw(st.lists(st.sampled_from(sorted(REF_METRICS)), min_size=1, max_size=4,
                          unique=True))
    kw: dict[str, Any] = {"y_true": "y"}
    if case.weighted:
        kw["weight"] = "w"
    if case.spec.pos_label is not None:
        kw.update(pos_label="yes", neg_label="no")
    exprs = [getattr(pl.col("p").fair, m)(**kw).alias(m) for m in names]
    if case.by:
        out = case.frame.group_by(case.by).agg(exprs)
    else:
        if case.frame.height == 0:
            return
        out = case.frame.select(exprs)
    ref = case.ref_counts()
    assert out.height == len(ref)
    for row in out.iter_rows(named=True):
        cell = ref[(_key(row, case), None)]
        for m in names:
            assert close(row[m], ref_metric(m, cell, case.weighted)), (m, row, cell)


def check_separately(case: Case, draw: Draw) -> None:
    """Each attribute on its own (``separately=True``) = the reference counted by that key."""
    if case.by is None or len(case.by) < 2:
        return
    table = pfm.confusion_counts(case.frame, by=case.by, separately=True, **case.options)
    assert_reconciles(table.filter(pl.col("attribute") == case.by[0]), case.frame.height)
    rows = case.rows()
    for attr in case.by:
        spec = type(case.spec)(**{**case.spec.__dict__, "keys": [attr]})
        ref = ref_counts(rows, spec)
        part = table.filter(pl.col("attribute") == attr)
        assert part.height == len(ref)
        for row in part.iter_rows(named=True):
            matches = [c for (k, t), c in ref.items()
                       if (None if k[0] is None else str(k[0])) == row["group"]
                       and t == row.get("threshold")]
            assert len(matches) == 1
            assert (row["tp"], row["fp"], row["tn"], row["fn"]) == matches[0].quad(False)


CHECKS: dict[str, Callable[[Case, Draw], None]] = {
    "counts": check_counts,
    "metrics": check_metrics,
    "disparities": check_disparities,
    "between_groups": check_between_groups,
    "fairness_criteria": check_criteria,
    "expression_context": check_expression_context,
    "separately": check_separately,
}
"""Capability → check. Add one line per capability merged later (weights, curves, …)."""


@given(case=cases(), data=st.data())
@settings(max_examples=FRAMES)
def test_core_matches_reference(case: Case, data: st.DataObject) -> None:
    for name, check in CHECKS.items():
        try:
            check(case, data.draw)
        except AssertionError as exc:
            raise AssertionError(f"[{name}] {exc}\nframe:\n{case.frame}\noptions: "
                                 f"{case.options} by={case.by}") from exc


# ---------------------------------------------------------------------------------------------
# The reference and the package cover the same things
# ---------------------------------------------------------------------------------------------


def test_reference_covers_every_metric() -> None:
    assert set(REF_METRICS) == set(pfm_metrics.METRICS)
    for name, spec in pfm_metrics.METRICS.items():
        assert HIGHER_IS_BETTER[name] == spec.higher_is_better, name


def test_reference_covers_every_criterion() -> None:
    assert REF_CRITERIA == dict(pfm.CRITERIA)


@pytest.mark.parametrize("name", sorted(REF_METRICS))
def test_metric_undefined_exactly_where_the_reference_is(name: str) -> None:
    """All 0/1 confusion matrices with up to 2 per cell: same value, same nulls, never NaN."""
    quads = [(tp, fp, tn, fn) for tp in range(3) for fp in range(3) for tn in range(3)
             for fn in range(3)]
    table = pl.DataFrame(quads, schema=["tp", "fp", "tn", "fn"], orient="row")
    out = pfm.metrics_from_counts(table, metrics=name)[name].to_list()
    for q, v in zip(quads, out, strict=True):
        want = REF_METRICS[name](*q)
        assert v is None or not math.isnan(v)
        assert close(v, want), (q, v, want)


def test_reference_self_check() -> None:
    """The reference on a hand-computed example (y = 1 1 1 0 0, pred = 1 1 0 1 0)."""
    rows = [{"y": y, "p": p} for y, p in zip([1, 1, 1, 0, 0], [1, 1, 0, 1, 0], strict=True)]
    from reference import Spec

    cell: Cell = ref_counts(rows, Spec(y_true="y", keys=[], y_pred="p"))[((), None)]
    assert cell.quad(False) == (2, 1, 1, 1)
    assert ref_metric("accuracy", cell, False) == 0.6
    assert close(ref_metric("matthews_corrcoef", cell, False), 1 / 6)
