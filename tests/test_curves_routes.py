"""Property tests of the exact curve routes against a brute-force numpy / scikit-learn oracle.

Both exact routes of :func:`polars_fairmetrics.curve_counts` (``exact_method="aggregate"``: a
``group_by`` over (group, score), then each group's cells sorted in a list; ``"sort"``: each
group's rows sorted in a list, tie runs closed on the sorted stream) and the summaries read from
their tables (elementwise terms of consecutive points, segment marks from consecutive keys) are
checked on random frames with ties, weights, single-class groups, all-equal scores, null scores,
labels and weights, and groups with no counted row, against:

- counts: for every distinct score ``t`` of a group, the weighted sums of ``s >= t`` by class,
  computed by a loop in numpy;
- summaries: ``roc_auc_score``, ``average_precision_score`` and ``auc(recall, precision)`` on
  ``precision_recall_curve`` of scikit-learn (null where the group lacks a class);

and the in-memory and streaming engines must give the same floats, as must a table given back in
memory (the in-order check that spares the sort) and the same table shuffled (sorted again); the
two routes agree to 1e-12.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from sklearn.metrics import auc, average_precision_score, precision_recall_curve, roc_auc_score

import polars_fairmetrics as pfm

TOL = 1e-12


@st.composite
def frames(draw: st.DrawFn) -> pl.DataFrame:
    """Rows of up to 4 groups (one may have only left-out rows), scores on a coarse grid (ties,
    all-equal scores) or continuous, weights > 0 (scikit-learn drops zero weights), nulls."""
    n = draw(st.integers(1, 60))
    n_groups = draw(st.integers(1, 4))
    levels = draw(st.sampled_from([1, 2, 3, 10, 1000]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    g = rng.integers(0, n_groups, n)
    s = np.round(rng.random(n) * (levels - 1)) / max(levels - 1, 1)
    if levels == 1:  # every score equal
        s = np.full(n, 0.5)
    y = (rng.random(n) < draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))).astype(np.int64)
    w = rng.uniform(0.1, 3.0, n)
    null_rate = draw(st.sampled_from([0.0, 0.2]))
    df = pl.DataFrame(
        {
            "g": np.array(["a", "b", "c", "d"])[g],
            "y": pl.Series(y).scatter(np.flatnonzero(rng.random(n) < null_rate), None),
            "s": pl.Series(s).scatter(np.flatnonzero(rng.random(n) < null_rate), None),
            "w": pl.Series(w).scatter(np.flatnonzero(rng.random(n) < null_rate / 2), None),
        }
    )
    if draw(st.booleans()):  # a group whose rows are all left out
        df = pl.concat([df, pl.DataFrame({"g": ["z"], "y": [None], "s": [0.4], "w": [1.0]})])
    return df.with_columns(pl.col("y").cast(pl.Int64), pl.col("s").cast(pl.Float64))


def _counted(part: pl.DataFrame, weighted: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keep = part["y"].is_not_null() & part["s"].is_not_null()
    if weighted:
        keep = keep & part["w"].is_not_null()
    p = part.filter(keep)
    w = p["w"].to_numpy() if weighted else np.ones(p.height)
    return p["y"].to_numpy(), p["s"].to_numpy(), w


def _oracle_counts(y: np.ndarray, s: np.ndarray, w: np.ndarray) -> list[tuple[float, ...]]:
    """(threshold, tp, fp, tn, fn, tp_w, fp_w) at every distinct score, descending: a loop."""
    out = []
    for t in sorted(set(s.tolist()), reverse=True):
        at = s >= t
        pos, neg = y == 1, y == 0
        out.append(
            (
                t,
                int((at & pos).sum()),
                int((at & neg).sum()),
                int((~at & neg).sum()),
                int((~at & pos).sum()),
                float(w[at & pos].sum()),
                float(w[at & neg].sum()),
            )
        )
    return out


def _close(a: object, b: object) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=0, abs_tol=TOL)  # type: ignore[arg-type]


@settings(max_examples=max(20, settings().max_examples // 2))
@given(df=frames(), weighted=st.booleans(), method=st.sampled_from(["aggregate", "sort"]))
def test_exact_routes_equal_brute_force(df: pl.DataFrame, weighted: bool, method: str) -> None:
    wcol = "w" if weighted else None
    lazy = pfm.curve_counts(
        df.lazy(),
        y_true="y",
        y_score="s",
        by="g",
        weight=wcol,
        exact_method=method,  # type: ignore[arg-type]
    )
    table = lazy.collect()
    # integer counts exactly; weighted sums up to the order in which each engine adds them
    assert_frame_equal(table, lazy.collect(engine="streaming"), rel_tol=1e-12, abs_tol=1e-12)
    other = "sort" if method == "aggregate" else "aggregate"
    assert_frame_equal(
        table,
        pfm.curve_counts(df, y_true="y", y_score="s", by="g", weight=wcol, exact_method=other),  # type: ignore[arg-type]
        rel_tol=1e-12,
        abs_tol=1e-12,
    )
    assert table["g"].to_list() == sorted(table["g"].to_list())
    summ = pfm.curve_summaries(table, wide=True)
    shuffled = pfm.curve_summaries(table.sample(fraction=1.0, shuffle=True, seed=1), wide=True)
    assert_frame_equal(summ, shuffled, check_exact=True)
    assert_frame_equal(
        summ,
        pfm.curve_summaries(
            df.lazy(), y_true="y", y_score="s", by="g", weight=wcol, wide=True
        ).collect(engine="streaming"),
        rel_tol=1e-12,
        abs_tol=1e-12,
    )
    for g in df["g"].unique().to_list():
        part = df.filter(pl.col("g") == g)
        y, s, w = _counted(part, weighted)
        rows = table.filter(pl.col("g") == g)
        n_null = part.height - len(y)
        assert rows["n_null"].unique().to_list() == [n_null]
        assert rows["n_null_y_pred"].unique().to_list() == [part["s"].null_count()]
        if len(y) == 0:  # no counted row: one null-threshold row with zero counts
            assert rows.height == 1 and rows["threshold"][0] is None
            assert rows.select("tp", "fp", "tn", "fn").row(0) == (0, 0, 0, 0)
        else:
            ref = _oracle_counts(y, s, w)
            got = rows.select("threshold", "tp", "fp", "tn", "fn").rows()
            assert got == [r[:5] for r in ref]
            if weighted:
                np.testing.assert_allclose(rows["tp_w"], [r[5] for r in ref], rtol=1e-12, atol=TOL)
                np.testing.assert_allclose(rows["fp_w"], [r[6] for r in ref], rtol=1e-12, atol=TOL)
        row = summ.filter(pl.col("g") == g).row(0, named=True)
        has_pos, has_neg = bool((y == 1).any()), bool((y == 0).any())
        sw = w if weighted else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if has_pos and has_neg:
                assert _close(row["roc_auc"], roc_auc_score(y, s, sample_weight=sw))
            else:
                assert row["roc_auc"] is None
            if has_pos:
                ap = average_precision_score(y, s, sample_weight=sw)
                assert _close(row["average_precision"], ap)
                prec, rec, _ = precision_recall_curve(y, s, sample_weight=sw)
                assert _close(row["aupr"], auc(rec, prec))
            else:
                assert row["average_precision"] is None and row["aupr"] is None


@pytest.mark.parametrize("method", ["aggregate", "sort"])
def test_all_equal_scores_and_multi_keys(method: str) -> None:
    """One threshold per group when every score is equal; two keys with nulls stay apart."""
    df = pl.DataFrame(
        {
            "k1": ["a", "a", "a", None, None, "b"],
            "k2": [1, 1, 2, 1, 1, None],
            "y": [1, 0, 1, 0, 1, 1],
            "s": [0.5] * 6,
        }
    )
    t = pfm.curve_counts(df, y_true="y", y_score="s", by=["k1", "k2"], exact_method=method)  # type: ignore[arg-type]
    assert t.select("k1", "k2", "threshold", "tp", "fp").rows() == [
        ("a", 1, 0.5, 1, 1),
        ("a", 2, 0.5, 1, 0),
        ("b", None, 0.5, 1, 0),
        (None, 1, 0.5, 1, 1),
    ]
    summ = pfm.curve_summaries(t, wide=True)
    assert summ.select("k1", "k2", "roc_auc", "average_precision").rows() == [
        ("a", 1, 0.5, 0.5),
        ("a", 2, None, 1.0),
        ("b", None, None, 1.0),
        (None, 1, 0.5, 0.5),
    ]
