"""Property tests: the core against the independent reference (``tests/reference.py``).

Every random frame (0-60 rows, 0-2 key columns with 1-4 groups, nulls in keys / labels /
predictions / scores / weights, int / Boolean / text labels, label predictions or scores with 1-3
thresholds, weights with zeros) goes through counts, every metric, disparities against the
overall population, the rest and a named group, the between-groups summary and the named
criteria (and, once ``curves`` is merged, the ROC AUC of ``curve_summaries`` against the
Mann-Whitney pair probability; and the row weights of ``importance_weights`` and
``bias_adjusted_weights`` against the formulas of their source documents), and each number is
compared with the reference. Rows are reconciled in every count (``n + n_null`` = input rows).

Registry-driven: :data:`CHECKS` maps a capability to a function ``(case, draw) -> None``; the main
test runs every check on every frame. A capability merged later (weights, curves, bootstrap,
ensemble) adds one function and one line there.

The number of frames comes from the hypothesis profile (``tests/conftest.py``):
``HYPOTHESIS_PROFILE=ci`` runs 10,000 frames through every check.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
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
    RefEmptyGroup,
    RefUnlistedLevel,
    batches,
    cases,
    close,
    ref_between_groups,
    ref_bias_adjusted_weights,
    ref_counts,
    ref_criteria,
    ref_disparities,
    ref_importance_weights,
    ref_metric,
    ref_roc_auc,
)

import polars_fairmetrics as pfm
from polars_fairmetrics import metrics as pfm_metrics

FRAMES = 10_000 if os.environ.get("HYPOTHESIS_PROFILE") == "ci" else settings().max_examples
"""Random frames per test: 10,000 under the ``ci`` hypothesis profile, else the profile's
``max_examples``."""
BATCH = 40
"""Frames checked together (as ``replicate`` partitions) per example of the batched test."""
Draw = Callable[[st.SearchStrategy[Any]], Any]


@dataclass
class Batch:
    """One frame, or several of one structure stacked with a ``frame`` column.

    Stacked frames are counted with ``frame`` as a leading key; for disparities and summaries the
    count table's ``frame`` column is renamed ``replicate``, which the package keeps apart as a
    partition, so each frame is compared with its own reference.
    """

    cases: list[Case]

    @property
    def batched(self) -> bool:
        return len(self.cases) > 1

    @property
    def first(self) -> Case:
        return self.cases[0]

    @property
    def keys(self) -> list[str]:
        return self.first.by or []

    @property
    def weighted(self) -> bool:
        return self.first.weighted

    @property
    def options(self) -> dict[str, Any]:
        return self.first.options

    @property
    def frame(self) -> pl.DataFrame:
        if not self.batched:
            return self.first.frame
        return pl.concat(
            [
                c.frame.with_columns(pl.lit(i, dtype=pl.Int64).alias("frame"))
                for i, c in enumerate(self.cases)
            ],
            how="vertical",
        )

    @property
    def count_by(self) -> list[str] | None:
        by = (["frame"] if self.batched else []) + self.keys
        return by or None

    @property
    def named(self) -> Any:
        """A group present in every frame (usable as a named reference), or None."""
        common = set(self.first.present)
        for c in self.cases[1:]:
            common &= set(c.present)
        return sorted(common, key=repr)[0] if common else None

    def key(self, row: dict[str, Any], frame_col: str = "frame") -> Key:
        head = (row[frame_col],) if self.batched else ()
        return head + tuple(row[k] for k in self.keys)

    def merge(self, per_case: Callable[[Case], dict[Any, Any]]) -> dict[Any, Any]:
        """Reference results of every frame, keys prefixed with the frame index when stacked."""
        out: dict[Any, Any] = {}
        for i, c in enumerate(self.cases):
            for k, v in per_case(c).items():
                if self.batched:
                    k = ((i, *k[0]), *k[1:]) if isinstance(k[0], tuple) else (k[0], i, *k[1:])
                out[k] = v
        return out

    def ref_counts(self) -> dict[tuple[Key, float | None], Cell]:
        return self.merge(lambda c: c.ref_counts())


def _collect(data: pl.DataFrame | pl.LazyFrame, mode: str) -> pl.DataFrame:
    if isinstance(data, pl.LazyFrame):
        return data.collect(engine="streaming" if mode == "streaming" else "in-memory")
    return data


def _lazy(frame: pl.DataFrame, mode: str) -> pl.DataFrame | pl.LazyFrame:
    return frame if mode == "eager" else frame.lazy()


def assert_reconciles(table: pl.DataFrame, n_rows: int) -> None:
    """Rows are never lost: counted + null rows = input rows, in every threshold partition."""
    parts = table.partition_by("threshold") if "threshold" in table.columns else [table]
    for part in parts:
        total = int(part["n"].sum()) + int(part["n_null"].sum())
        assert total == n_rows, f"{total} rows counted or reported, {n_rows} in the input"


def _input(b: Batch, draw: Draw, mode: str) -> tuple[pl.DataFrame | pl.LazyFrame, dict[str, Any]]:
    """Rows (with the count options) or the count table (without), as the function accepts.

    Stacked frames always go as a count table with the ``replicate`` partition."""
    if not b.batched and draw(st.booleans()):
        return _lazy(b.frame, mode), dict(b.options)
    table = pfm.confusion_counts(b.frame, by=b.count_by, **b.options)
    if b.batched:
        table = table.rename({"frame": "replicate"})
    return _lazy(table, mode), {}


def _frame_col(b: Batch) -> str:
    return "replicate" if b.batched else "frame"


# ---------------------------------------------------------------------------------------------
# Checks, one per capability
# ---------------------------------------------------------------------------------------------


def check_counts(b: Batch, draw: Draw) -> None:
    mode = draw(st.sampled_from(["eager", "in-memory", "streaming"]))
    table = _collect(pfm.confusion_counts(_lazy(b.frame, mode), by=b.count_by, **b.options), mode)
    ref = b.ref_counts()
    for i, c in enumerate(b.cases):
        part = table.filter(pl.col("frame") == i) if b.batched else table
        assert_reconciles(part, c.frame.height)
    assert table.height == len(ref)
    int_cols = ("tp", "fp", "tn", "fn", "n", "n_null", "n_null_y_true", "n_null_y_pred")
    for row in table.iter_rows(named=True):
        cell = ref[(b.key(row), row.get("threshold"))]
        for col in int_cols:
            assert row[col] == getattr(cell, col), (col, row, cell)
        if b.weighted:
            assert row["n_null_weight"] == cell.n_null_weight
            for col in ("tp_w", "fp_w", "tn_w", "fn_w", "n_w"):
                assert close(row[col], getattr(cell, col)), (col, row, cell)
        else:
            assert "tp_w" not in row
    keys = [*(b.count_by or []), *(["threshold"] if "threshold" in table.columns else [])]
    if keys:  # sorted by the keys, nulls last
        assert table.select(keys).equals(table.select(keys).sort(keys, nulls_last=True))


def check_metrics(b: Batch, draw: Draw) -> None:
    names = draw(st.sampled_from([None, ["tpr", "precision", "mcc"]]))
    mode = draw(st.sampled_from(["eager", "streaming"]))
    out = _collect(
        pfm.group_metrics(_lazy(b.frame, mode), by=b.count_by, metrics=names, **b.options), mode
    )
    ref = b.ref_counts()
    expected = (
        list(REF_METRICS)
        if names is None
        else ["true_positive_rate", "positive_predictive_value", "matthews_corrcoef"]
    )
    assert out.height == len(ref) * len(expected)
    for row in out.iter_rows(named=True):
        cell = ref[(b.key(row), row.get("threshold"))]
        want = ref_metric(row["metric"], cell, b.weighted)
        assert close(row["value"], want), (row, cell, want)
        assert row["n"] == cell.n


def _ratio_ok(
    ours: float | None,
    ours_ref: float | None,
    want: float | None,
    want_ref: float | None,
    weighted: bool,
) -> bool:
    """Ratios, except that a weighted reference value within 1e-9 of 0 is ill-conditioned
    (a float sum may land on 1e-17 instead of 0): then both must agree it is about 0."""
    if weighted and want_ref is not None and abs(want_ref) < 1e-9:
        return ours_ref is not None and abs(ours_ref) < 1e-9
    return close(ours, want, rel=1e-7)


def _reference_for(b: Batch, draw: Draw) -> Any:
    options: list[Any] = ["overall", "rest"]
    if b.named is not None:
        options.append(b.named)
    return draw(st.sampled_from(options))


def check_disparities(b: Batch, draw: Draw) -> None:
    if not b.keys:
        return
    reference = _reference_for(b, draw)
    mode = draw(st.sampled_from(["eager", "streaming"]))
    data, opts = _input(b, draw, mode)
    out = _collect(pfm.disparities(data, by=b.keys, reference=reference, **opts), mode)
    want = b.merge(
        lambda c: ref_disparities(c.ref_counts(), list(REF_METRICS), reference, b.weighted)
    )
    assert out.height == len(want)
    for row in out.iter_rows(named=True):
        d = want[(b.key(row, _frame_col(b)), row.get("threshold"), row["metric"])]
        ctx = (reference, row, d)
        assert close(row["value"], d.value), ctx
        assert close(row["reference_value"], d.reference_value), ctx
        assert close(row["difference"], d.difference), ctx
        assert _ratio_ok(
            row["ratio"], row["reference_value"], d.ratio, d.reference_value, b.weighted
        ), ctx


def check_between_groups(b: Batch, draw: Draw) -> None:
    if not b.keys:
        return
    mode = draw(st.sampled_from(["eager", "streaming"]))
    data, opts = _input(b, draw, mode)
    out = _collect(pfm.between_groups(data, by=b.keys, **opts), mode)
    want: dict[Any, Any] = {}
    for i, c in enumerate(b.cases):
        for (t, m), v in ref_between_groups(c.ref_counts(), list(REF_METRICS), b.weighted).items():
            want[(i if b.batched else None, t, m)] = v
    assert out.height == len(want)
    for row in out.iter_rows(named=True):
        s = want[(row["replicate"] if b.batched else None, row.get("threshold"), row["metric"])]
        ctx = (row, s)
        for col in ("max", "min", "difference"):
            assert close(row[col], getattr(s, col)), ctx
        assert _ratio_ok(row["ratio"], row["max"], s.ratio, s.max, b.weighted), ctx
        assert row["n_groups"] == s.n_groups and row["n_undefined"] == s.n_undefined, ctx
        for col, allowed in (("worst_group", s.worst), ("best_group", s.best)):
            if not allowed:
                assert row[col] is None, ctx
            else:
                # a struct of the typed key columns, never a joined text label
                assert tuple(row[col][k] for k in b.keys) in allowed, ctx


def check_criteria(b: Batch, draw: Draw) -> None:
    if not b.keys:
        return
    reference = _reference_for(b, draw)
    mode = draw(st.sampled_from(["eager", "streaming"]))
    data, opts = _input(b, draw, mode)
    out = _collect(pfm.fairness_criteria(data, by=b.keys, reference=reference, **opts), mode)
    want = b.merge(lambda c: ref_criteria(c.ref_counts(), reference, b.weighted))
    disp = b.merge(
        lambda c: ref_disparities(c.ref_counts(), ["selection_rate"], reference, b.weighted)
    )
    assert out.height == len(want)
    for row in out.iter_rows(named=True):
        k, t = b.key(row, _frame_col(b)), row.get("threshold")
        w = want[(k, t, row["metric"])]
        if row["metric"] == "disparate_impact":
            d = disp[(k, t, "selection_rate")]
            if b.weighted and d.reference_value is not None and abs(d.reference_value) < 1e-9:
                continue  # ill-conditioned ratio: the reference value is checked by disparities
            assert close(row["value"], w, rel=1e-7), (reference, row, w)
        else:
            assert close(row["value"], w), (reference, row, w)


def check_expression_context(b: Batch, draw: Draw) -> None:
    """``pl.col(pred).fair.<metric>(y_true=...)`` in ``group_by().agg()`` (label predictions)."""
    if b.first.spec.y_pred is None:
        return
    names = draw(
        st.lists(st.sampled_from(sorted(REF_METRICS)), min_size=1, max_size=4, unique=True)
    )
    kw: dict[str, Any] = {"y_true": "y"}
    if b.weighted:
        kw["weight"] = "w"
    if b.first.spec.pos_label is not None:
        kw.update(pos_label="yes", neg_label="no")
    exprs = [getattr(pl.col("p").fair, m)(**kw).alias(m) for m in names]
    frame = b.frame
    if b.count_by:
        out = frame.group_by(b.count_by).agg(exprs)
    else:
        if frame.height == 0:
            return
        out = frame.select(exprs)
    ref = b.ref_counts()
    assert out.height == len(ref)
    for row in out.iter_rows(named=True):
        cell = ref[(b.key(row), None)]
        for m in names:
            assert close(row[m], ref_metric(m, cell, b.weighted)), (m, row, cell)


def check_separately(b: Batch, draw: Draw) -> None:
    """Each attribute on its own (``separately=True``) = the reference counted by that key."""
    if b.batched or len(b.keys) < 2:
        return
    case = b.first
    table = pfm.confusion_counts(case.frame, by=b.keys, separately=True, **case.options)
    assert_reconciles(table.filter(pl.col("attribute") == b.keys[0]), case.frame.height)
    rows = case.rows()
    for attr in b.keys:
        spec = replace(case.spec, keys=[attr])
        ref = ref_counts(rows, spec)
        part = table.filter(pl.col("attribute") == attr)
        assert part.height == len(ref)
        for row in part.iter_rows(named=True):
            matches = [
                c for (k, t), c in ref.items() if k[0] == row[attr] and t == row.get("threshold")
            ]
            assert len(matches) == 1
            assert (row["tp"], row["fp"], row["tn"], row["fn"]) == matches[0].quad(False)


def _merged(module: str) -> Any:
    """A capability module merged after this branch, or None while it is absent."""
    name = f"polars_fairmetrics.{module}"
    return importlib.import_module(name) if importlib.util.find_spec(name) else None


def check_curve_summaries(b: Batch, draw: Draw) -> None:
    """ROC AUC per group (exact curve) = the Mann-Whitney pair probability of the reference."""
    curves = _merged("curves")
    if curves is None or b.first.spec.y_score is None:
        return
    opts = {k: v for k, v in b.options.items() if k != "threshold"}
    out = curves.curve_summaries(b.frame, by=b.count_by, summaries="roc_auc", wide=True, **opts)
    want: dict[Key, float | None] = {}
    for i, c in enumerate(b.cases):
        for k, v in ref_roc_auc(c.rows(), c.spec).items():
            want[(i, *k) if b.batched else k] = v
    seen = set()
    for row in out.iter_rows(named=True):
        k = b.key(row)
        seen.add(k)
        assert close(row["roc_auc"], want.get(k)), (row, want.get(k))  # no rows: null
    # a group whose rows are all null may be left out; its AUC is undefined anyway
    assert all(want[k] is None for k in set(want) - seen)


def _weights_agree(
    frame: pl.DataFrame,
    expr: pl.Expr,
    name: str,
    want: list[float | None] | str,
    draw: Draw,
) -> None:
    """``frame.with_columns(expr)`` eager, or lazy on a drawn engine, against the reference
    (``want`` a text: the reference says the package must raise an error matching it)."""
    mode = draw(st.sampled_from(["eager", "in-memory", "streaming"]))
    run = lambda: _collect(_lazy(frame, mode).with_columns(expr), mode)  # noqa: E731
    if isinstance(want, str):
        with pytest.raises(pfm.FairMetricsError, match=want):
            run()
        return
    got = run()[name].to_list()
    assert len(got) == len(want)
    for i, (ours, ref) in enumerate(zip(got, want, strict=True)):
        assert close(ours, ref), (name, i, ours, ref)


def check_weights(b: Batch, draw: Draw) -> None:
    """``importance_weights`` and ``bias_adjusted_weights`` against their documents' formulas
    (first frame of a batch): the levels are the frame's keys (or the label when it has none),
    the target uniform or a random mix, the flag of B a random Boolean with nulls."""
    weights = _merged("weights")
    if weights is None:
        return
    case = b.first
    weight = "w" if case.weighted else None
    keys = case.by or ["y"]
    rows = case.rows()
    levels = sorted(
        {tuple(r[k] for k in keys) for r in rows if all(r[k] is not None for k in keys)}, key=repr
    )
    target: dict[Any, float] | None = None
    if levels and draw(st.booleans()):
        chosen = draw(st.lists(st.sampled_from(levels), min_size=1, unique=True))
        raw = [draw(st.integers(1, 5)) for _ in chosen]
        target = {
            (lv[0] if len(keys) == 1 else lv): r / sum(raw)
            for lv, r in zip(chosen, raw, strict=True)
        }
        target[next(iter(target))] += 1.0 - sum(target.values())  # sums to 1 exactly enough
    missing_groups = draw(st.sampled_from(["error", "zero"]))
    want: list[float | None] | str
    try:
        want = ref_importance_weights(rows, keys, target, weight, missing_groups)
    except RefEmptyGroup:
        want = "no rows"
    except RefUnlistedLevel:
        want = "target mix does not list"
    by: Any = keys[0] if len(keys) == 1 else keys
    _weights_agree(
        case.frame,
        weights.importance_weights(
            by,
            target="uniform" if target is None else target,
            weight=weight,
            missing_groups=missing_groups,
        ),
        "importance_weight",
        want,
        draw,
    )

    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    p_b, p_null = draw(st.sampled_from([0.1, 0.5, 0.9])), draw(st.sampled_from([0.0, 0.2]))
    flags = [
        None if rng.random() < p_null else bool(rng.random() < p_b)
        for _ in range(case.frame.height)
    ]
    frame = case.frame.with_columns(pl.Series("in_b", flags, dtype=pl.Boolean))
    share = draw(st.sampled_from([0.05, 0.3, 0.5, 0.99]))
    group_keys = case.by or []
    try:
        want = ref_bias_adjusted_weights(frame.to_dicts(), "in_b", share, group_keys, weight)
    except RefEmptyGroup:
        want = "no rows"
    _weights_agree(
        frame,
        weights.bias_adjusted_weights(
            "in_b", biased_share=share, by=group_keys or None, weight=weight
        ),
        "bias_adjusted_weight",
        want,
        draw,
    )


CHECKS: dict[str, Callable[[Batch, Draw], None]] = {
    "counts": check_counts,
    "metrics": check_metrics,
    "disparities": check_disparities,
    "between_groups": check_between_groups,
    "fairness_criteria": check_criteria,
    "expression_context": check_expression_context,
    "separately": check_separately,
    "curve_summaries": check_curve_summaries,  # runs once curves is merged
    "weights": check_weights,
}
"""Capability → check. Add one line per capability merged later (weights, curves, …)."""


def _run_checks(b: Batch, draw: Draw) -> None:
    for name, check in CHECKS.items():
        try:
            check(b, draw)
        except AssertionError as exc:
            frames = "\n".join(str(c.frame) for c in b.cases[:3])
            raise AssertionError(
                f"[{name}] {exc}\nframes:\n{frames}\noptions: {b.options} by={b.keys}"
            ) from exc


@given(case=cases(), data=st.data())
@settings(max_examples=max(50, FRAMES // 40))
def test_one_frame_matches_reference(case: Case, data: st.DataObject) -> None:
    """One frame at a time, through rows or count tables, both engines (shrinks best)."""
    _run_checks(Batch([case]), data.draw)


@given(frames=batches(BATCH), data=st.data())
@settings(max_examples=max(4, FRAMES // BATCH))
def test_stacked_frames_match_reference(frames: list[Case], data: st.DataObject) -> None:
    """``BATCH`` frames of one structure per example, counted together and compared frame by
    frame: with the ``ci`` profile, 10,000 frames."""
    _run_checks(Batch(frames), data.draw)


# ---------------------------------------------------------------------------------------------
# The reference and the package cover the same things
# ---------------------------------------------------------------------------------------------


def test_reference_covers_every_metric() -> None:
    assert set(REF_METRICS) == set(pfm_metrics.METRICS)
    for name, spec in pfm_metrics.METRICS.items():
        assert HIGHER_IS_BETTER[name] == spec.higher_is_better, name


def test_reference_covers_every_criterion() -> None:
    ours = {
        c.name: (c.metrics[0], c.composition)
        for c in pfm.CRITERIA.values()
        if c.composition != "max_abs_difference"
    }
    assert REF_CRITERIA == ours
    eo = pfm.CRITERIA["equalized_odds_difference"]
    assert (eo.metrics, eo.composition) == (
        ("false_positive_rate", "false_negative_rate"),
        "max_abs_difference",
    )


@pytest.mark.parametrize("name", sorted(REF_METRICS))
def test_metric_undefined_exactly_where_the_reference_is(name: str) -> None:
    """All 0/1 confusion matrices with up to 2 per cell: same value, same nulls, never NaN."""
    quads = [
        (tp, fp, tn, fn) for tp in range(3) for fp in range(3) for tn in range(3) for fn in range(3)
    ]
    table = pl.DataFrame(quads, schema=["tp", "fp", "tn", "fn"], orient="row")
    out = pfm.metrics_from_counts(table, metrics=name, wide=True)[name].to_list()
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
