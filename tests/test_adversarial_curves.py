"""Adversarial inputs for curves, weights and deployment, checked against independent oracles.

Each test targets a class of inputs on which the public API gave a silently wrong number, an
unclear error or a raw Polars traceback: mapping keys of another type than their group column
(importance-weight mixes, per-group deployment rates), NumPy scalars as options, the notebook's
fixed grid on scores below 0, infinite scores without bounds, bias-adjusted sizes that cannot
hold the scored rows, and count tables swept over thresholds (an exact curve table's groups have
thresholds of their own) whose mixes and pooled test ratio were taken per threshold. The oracles
are plain Python loops and scikit-learn; no number is taken from the package itself.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_fairmetrics as pfm
from polars_fairmetrics.exceptions import EmptyGroupError, InvalidOptionError

FEW = settings(max_examples=max(10, settings().max_examples // 4))
"""Each example runs a few small queries: a quarter of the profile's examples keeps it fast."""


# ---------------------------------------------------------------------------------------------
# Mapping keys are typed like their group column
# ---------------------------------------------------------------------------------------------


def _oracle_deployed_ppv(
    rows: list[tuple[int, int, int]], rate: dict[int, float]
) -> dict[int, float | None]:
    """Per-group PPV with false positives scaled by (neg/pos in deployment) / (neg/pos in test),
    each group against its own deployment rate (the deployment-precision note)."""
    out: dict[int, float | None] = {}
    for g in sorted({r[0] for r in rows}):
        mine = [(y, p) for gg, y, p in rows if gg == g]
        tp = sum(1 for y, p in mine if y and p)
        fp = sum(1 for y, p in mine if not y and p)
        pos = sum(1 for y, _ in mine if y)
        neg = len(mine) - pos
        factor = ((1 - rate[g]) / rate[g]) / (neg / pos)
        out[g] = None if tp + fp == 0 else tp / (tp + factor * fp)
    return out


@FEW
@given(
    rows=st.lists(
        st.tuples(st.sampled_from([1, 2]), st.integers(0, 1), st.integers(0, 1)),
        min_size=1,
        max_size=20,
    ),
    rates=st.tuples(st.floats(0.05, 0.95), st.floats(0.05, 0.95)),
)
def test_deployment_mapping_keys_are_typed(
    rows: list[tuple[int, int, int]], rates: tuple[float, float]
) -> None:
    """Integer keys, float keys equal to them (and an extra key no Int64 holds) give the
    oracle's per-group PPV; text keys for the integer column are an error, never group 1."""
    rows = [*rows, (1, 1, 1), (1, 0, 0), (2, 1, 0), (2, 0, 1)]  # both classes in each group
    df = pl.DataFrame(rows, schema=["g", "y", "p"], orient="row")
    rate = {1: rates[0], 2: rates[1]}
    expected = _oracle_deployed_ppv(rows, rate)

    def ppv(mapping: dict[Any, float]) -> dict[int, float | None]:
        out = pfm.deployment_metrics(
            df, deploy_positive_rate=mapping, by="g", y_true="y", y_pred="p", metrics="ppv"
        )
        return dict(out.select("g", "value").iter_rows())

    for mapping in (rate, {1.0: rates[0], 2.0: rates[1]}, {**rate, 1.5: 0.5}):
        got = ppv(mapping)
        assert got.keys() == expected.keys()
        for g, v in expected.items():
            assert got[g] == pytest.approx(v, rel=1e-12, abs=1e-15)
    with pytest.raises(InvalidOptionError, match=r"key '1' \(str\) cannot name a group"):
        ppv({"1": rates[0], "2": rates[1]})


_INT_FRAME = pl.DataFrame({"g": [1, 1, 1, 2], "y": [1, 0, 1, 0], "p": [1, 0, 0, 0]})


@pytest.mark.parametrize(
    "call",
    [
        lambda d, t: pfm.with_importance_weights(d, "g", target=t),
        lambda d, t: pfm.importance_weighted_metrics(
            d, "g", target=t, y_true="y", y_pred="p", metrics="error_rate"
        ),
        lambda d, t: pfm.importance_weighted_counts(
            pfm.confusion_counts(d, y_true="y", y_pred="p", by="g"), "g", target=t
        ),
    ],
    ids=["with_importance_weights", "importance_weighted_metrics", "importance_weighted_counts"],
)
def test_importance_mix_keys_are_typed(call: Any) -> None:
    """Text keys for an integer column: the package's error, not Polars' "cannot compare
    string with numeric type"; a key no Int64 equals with a positive probability: the target
    level without rows; float keys equal to the integers: the integer groups."""
    with pytest.raises(InvalidOptionError, match=r"target key '1' \(str\) cannot name a group"):
        call(_INT_FRAME, {"1": 0.5, "2": 0.5})
    with pytest.raises(EmptyGroupError, match=r"target mix names 1\.5 of column\(s\) \['g'\]"):
        call(_INT_FRAME, {1: 0.5, 2: 0.25, 1.5: 0.25})
    same = call(_INT_FRAME, {1.0: 0.5, 2.0: 0.5})
    typed = call(_INT_FRAME, {1: 0.5, 2: 0.5})
    assert same.equals(typed)


def test_importance_weights_float_keys_oracle() -> None:
    """The weight is target / source share: 0.5 / (3/4) for group 1, 0.5 / (1/4) for group 2,
    and an Enum category-less key with probability 0 is dropped, not a Polars cast error."""
    got = pfm.with_importance_weights(_INT_FRAME, "g", target={1.0: 0.5, 2.0: 0.5, 3.5: 0.0})
    assert got["importance_weight"].to_list() == pytest.approx([2 / 3, 2 / 3, 2 / 3, 2.0])
    enum = _INT_FRAME.with_columns(pl.col("g").cast(pl.String).cast(pl.Enum(["1", "2", "9"])))
    got = pfm.importance_weighted_metrics(
        enum, "g", target={"1": 0.5, "2": 0.5, "zz": 0.0}, y_true="y", y_pred="p", metrics="tpr"
    )
    # recall under the target mix: group 1 has TP 1 of 2 positives, weight 2/3 each
    assert got["value"].item() == pytest.approx(0.5)


# ---------------------------------------------------------------------------------------------
# Curve options: bins as a NumPy integer or a single float; the fixed grid below 0; infinities
# ---------------------------------------------------------------------------------------------


@FEW
@given(
    n_bins=st.integers(1, 12),
    scores=st.lists(st.integers(0, 20).map(lambda k: k / 20), min_size=2, max_size=12),
    np_type=st.sampled_from(["int64", "int32", "uint8"]),
)
def test_numpy_integer_bins_are_a_number_of_bins(
    n_bins: int, scores: list[float], np_type: str
) -> None:
    """``bins=np.int64(n)`` is ``n`` equal steps, the oracle's grid low + i (high − low) / n
    (it was read as the single threshold n and refused as outside [0, 1])."""
    import numpy as np

    df = pl.DataFrame({"y": [i % 2 for i in range(len(scores))], "s": scores})
    got = pfm.curve_counts(
        df, y_true="y", y_score="s", mode="grid", bins=np.dtype(np_type).type(n_bins)
    )
    assert sorted(got["threshold"].to_list()) == pytest.approx(
        [i / n_bins for i in range(n_bins + 1)]
    )
    for t, tp, fp in got.select("threshold", "tp", "fp").iter_rows():
        assert tp == sum(1 for i, s in enumerate(scores) if s >= t and i % 2 == 1)
        assert fp == sum(1 for i, s in enumerate(scores) if s >= t and i % 2 == 0)
    quantile = pfm.curve_summaries(
        df, y_true="y", y_score="s", mode="quantile", bins=np.dtype(np_type).type(n_bins)
    )
    assert quantile.equals(
        pfm.curve_summaries(df, y_true="y", y_score="s", mode="quantile", bins=n_bins)
    )


@pytest.mark.parametrize("bins", [2.5, 2.0, "3", True, 0])
def test_bins_that_are_not_a_count_or_a_list(bins: Any) -> None:
    df = pl.DataFrame({"y": [1, 0], "s": [0.2, 0.8]})
    with pytest.raises(InvalidOptionError, match=rf"bins={bins!r} must be a positive integer"):
        pfm.curve_counts(df, y_true="y", y_score="s", mode="grid", bins=bins)


@FEW
@given(
    scores=st.lists(st.floats(-5, 5, allow_nan=False), min_size=2, max_size=10),
)
def test_fixed_grid_refuses_negative_scores(scores: list[float]) -> None:
    """The notebook's grid runs from the group's max score down to 0 (scores in [0, 1]): below
    0 it gave a negative area (max < 0) or silently never counted the rows below 0. Such a
    score is now an error naming it; scores >= 0 keep an AUPR in [0, 1]."""
    df = pl.DataFrame({"y": [i % 2 for i in range(len(scores))], "s": scores})
    kw: dict[str, Any] = dict(
        y_true="y", y_score="s", score_bounds=None, summaries="aupr", aupr_mode="fixed_grid"
    )
    if min(scores) < 0:
        with pytest.raises(pfm.InvalidScoreError, match=r"needs scores >= 0"):
            pfm.curve_summaries(df, **kw)
        lazy = pfm.curve_summaries(df.lazy(), **kw)
        with pytest.raises(pfm.InvalidScoreError, match=r"needs scores >= 0"):
            lazy.collect(engine="streaming")
    else:
        value = pfm.curve_summaries(df, **kw)["value"].item()
        assert 0.0 <= value <= 1.0


@pytest.mark.parametrize("bad", [float("inf"), float("-inf")])
def test_infinite_score_message_does_not_contradict_itself(bad: float) -> None:
    """An infinite score with score_bounds=None said it was "outside [-inf, inf]; pass
    score_bounds=None" — the option already given. It now says scores must be finite."""
    df = pl.DataFrame({"y": [1, 0, 1], "s": [0.2, bad, 0.5]})
    for bounds in (None, (0.0, 1.0)):
        with pytest.raises(pfm.InvalidScoreError) as info:
            pfm.curve_summaries(df, y_true="y", y_score="s", score_bounds=bounds)
        assert f"has a score {bad!r}: scores must be finite" in str(info.value)
        assert "score_bounds=None" not in str(info.value)


# ---------------------------------------------------------------------------------------------
# NumPy scalars are numbers for every option of these modules
# ---------------------------------------------------------------------------------------------

_ROWS = pl.DataFrame(
    {
        "b": [True, True, False, False, True, False],
        "g": ["x", "x", "y", "y", "x", "y"],
        "y": [1, 0, 1, 0, 1, 1],
        "p": [1, 0, 0, 1, 1, 1],
        "s": [0.9, 0.2, 0.4, 0.7, 0.6, 0.8],
    }
)
_XY = {"y_true": "y", "y_pred": "p"}

_OPTION_CALLS: dict[str, tuple[Any, dict[str, Any]]] = {
    "deploy_positive_rate": (
        lambda **o: pfm.deployment_metrics(_ROWS, **_XY, **o),
        {"deploy_positive_rate": 0.25},
    ),
    "deploy_neg_pos_ratio": (
        lambda **o: pfm.deployment_metrics(_ROWS, **_XY, **o),
        {"deploy_neg_pos_ratio": 3},
    ),
    "deploy_mapping": (
        lambda **o: pfm.deployment_metrics(_ROWS, by="g", **_XY, **o),
        {"deploy_positive_rate": {"x": 0.25, "y": 0.5}},
    ),
    "pr_curve_deploy": (
        lambda **o: pfm.pr_curve(_ROWS, y_true="y", y_score="s", **o),
        {"deploy_positive_rate": 0.25},
    ),
    "min_precision": (
        lambda **o: pfm.threshold_for_precision(
            _ROWS, y_true="y", y_score="s", deploy_positive_rate=0.3, **o
        ),
        {"min_precision": 0.5},
    ),
    "target_mix": (
        lambda **o: pfm.with_importance_weights(_ROWS, "g", **o),
        {"target": {"x": 0.25, "y": 0.75}},
    ),
    "biased_share": (
        lambda **o: pfm.with_bias_adjusted_weights(_ROWS, "b", **o),
        {"biased_share": 0.25},
    ),
    "biased_sizes": (
        lambda **o: pfm.with_bias_adjusted_weights(_ROWS, "b", **o),
        {"biased_size": 20, "population_size": 100},
    ),
    "fixed_grid_points": (
        lambda **o: pfm.curve_summaries(
            _ROWS, y_true="y", y_score="s", summaries="aupr", aupr_mode="fixed_grid", **o
        ),
        {"fixed_grid_points": 10},
    ),
    "alpha_min_support": (
        lambda **o: pfm.disparity_tests(_ROWS, by="g", **_XY, **o),
        {"alpha": 0.25, "min_support": 2},
    ),
}


def _as_numpy(value: Any) -> Any:
    """Ints as np.int64, reals as np.float32 (every value above is exact in float32)."""
    import numpy as np

    if isinstance(value, dict):
        return {k: _as_numpy(v) for k, v in value.items()}
    return np.int64(value) if isinstance(value, int) else np.float32(value)


@pytest.mark.parametrize("name", list(_OPTION_CALLS))
def test_numpy_scalars_are_numbers(name: str) -> None:
    """np.float32(0.25), np.int64(3) ... were refused as "not a number" by every option of
    deployment, weights, the fixed grid and the significance tests (each had its own
    isinstance test); they now give the result of the same Python numbers."""
    call, options = _OPTION_CALLS[name]
    numpy_options = {k: _as_numpy(v) for k, v in options.items()}
    assert call(**numpy_options).equals(call(**options))


# ---------------------------------------------------------------------------------------------
# Bias-adjusted weights: the sizes |B| and |U| must hold the scored rows
# ---------------------------------------------------------------------------------------------


@FEW
@given(
    flags=st.lists(st.booleans(), min_size=2, max_size=12).filter(lambda f: 0 < sum(f) < len(f)),
    biased_size=st.integers(1, 14),
    extra=st.integers(1, 14),
)
def test_bias_adjusted_sizes_hold_the_scored_rows(
    flags: list[bool], biased_size: int, extra: int
) -> None:
    """|B̲| ≤ |B| and |B̲^c| ≤ |U| − |B|, or an error naming the flag column (rows and count
    table alike); when they hold, the weights are the derivation's, checked by a loop."""
    population = biased_size + extra
    df = pl.DataFrame({"b": flags, "y": [i % 2 for i in range(len(flags))]})
    df = df.with_columns(p=pl.col("y"))
    n_b, n_c = sum(flags), len(flags) - sum(flags)
    sizes = {"biased_size": biased_size, "population_size": population}
    table = pfm.confusion_counts(df, y_true="y", y_pred="p", by="b")
    calls = [
        lambda: df.with_columns(pfm.bias_adjusted_weights("b", **sizes)),
        lambda: pfm.bias_adjusted_counts(table, "b", **sizes),
    ]
    if n_b > biased_size or n_c > extra:
        for call in calls:
            with pytest.raises(InvalidOptionError, match=r"column 'b' \(biased-set flag\) has"):
                call()
        return
    share = biased_size / population
    expected = [(n_b + n_c) / n_b * share if f else (n_b + n_c) / n_c * (1 - share) for f in flags]
    got = calls[0]()["bias_adjusted_weight"].to_list()
    assert got == pytest.approx(expected, rel=1e-12)
    assert calls[1]()["n_w"].sum() == pytest.approx(len(flags), rel=1e-12)


# ---------------------------------------------------------------------------------------------
# Deployment correction of a curve table: one pooled test ratio, whatever the thresholds
# ---------------------------------------------------------------------------------------------


@FEW
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 1), st.integers(0, 8)),
        min_size=1,
        max_size=20,
    ),
    rate=st.floats(0.05, 0.95),
    exact=st.booleans(),
)
def test_deployment_of_a_curve_table_pools_each_group_once(
    rows: list[tuple[str, int, int]], rate: float, exact: bool
) -> None:
    """On an exact curve table the groups have their own thresholds; the pooled test ratio
    was summed per threshold, over whichever groups had a row there (factors 4.5, 9, 18 on one
    table instead of 9). The oracle: one ratio N/P over every row, every threshold."""
    rows = [*rows, ("a", 1, 3), ("b", 0, 5)]  # positives and negatives in the data
    df = pl.DataFrame(rows, schema=["g", "y", "s"], orient="row").with_columns(pl.col("s") / 8)
    mode: dict[str, Any] = {"mode": "exact"} if exact else {"mode": "grid", "bins": 8}
    table = pfm.curve_counts(df, y_true="y", y_score="s", by="g", **mode)
    positives = sum(y for _, y, _ in rows)
    factor = ((1 - rate) / rate) / ((len(rows) - positives) / positives)
    for got in (
        pfm.deployment_factors(table, deploy_positive_rate=rate),
        pfm.deployment_factors(table.lazy(), deploy_positive_rate=rate).collect(engine="streaming"),
    ):
        assert got["deploy_factor"].to_list() == pytest.approx([factor] * got.height, rel=1e-12)
    ppv = pfm.deployment_metrics(table, deploy_positive_rate=rate, metrics="ppv")
    for g, t, value in ppv.select("g", "threshold", "value").iter_rows():
        tp = sum(1 for gg, y, s in rows if gg == g and y and s / 8 >= t)
        fp = sum(1 for gg, y, s in rows if gg == g and not y and s / 8 >= t)
        if tp + fp == 0:
            assert value is None  # 0/0: null, never NaN
        else:
            assert value == pytest.approx(tp / (tp + factor * fp), rel=1e-12, abs=1e-15)


@FEW
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 1), st.integers(0, 8)),
        min_size=1,
        max_size=20,
    ),
    exact=st.booleans(),
    share=st.floats(0.05, 0.95),
)
def test_reweighting_a_curve_table_takes_the_mix_once(
    rows: list[tuple[str, int, int]], exact: bool, share: float
) -> None:
    """The mixes of importance_weighted_counts and bias_adjusted_counts were estimated per
    threshold: on an exact curve table a group's weight changed from threshold to threshold
    (1.0, 1.33, 1.0), and bias_adjusted_counts raised "no rows in B in the group 0.8" (a
    threshold). The oracle: one weight per group from the row counts, at every threshold."""
    rows = [*rows, ("a", 1, 3), ("b", 0, 5)]
    df = pl.DataFrame(rows, schema=["g", "y", "s"], orient="row").with_columns(
        pl.col("s") / 8, (pl.col("g") == "a").alias("in_b")
    )
    mode: dict[str, Any] = {"mode": "exact"} if exact else {"mode": "grid", "bins": 8}
    levels = sorted({g for g, _, _ in rows})
    size = {g: sum(1 for gg, _, _ in rows if gg == g) for g in levels}
    iw = {g: (1 / len(levels)) / (size[g] / len(rows)) for g in levels}
    table = pfm.curve_counts(df, y_true="y", y_score="s", by="g", **mode)
    out = pfm.importance_weighted_counts(table, "g", keys=["g"])
    for g, tp, tp_w in out.select("g", "tp", "tp_w").iter_rows():
        assert tp_w == pytest.approx(tp * iw[g], rel=1e-12, abs=1e-15)
    n_b = size["a"]
    w_b = len(rows) / n_b * share
    w_c = len(rows) / (len(rows) - n_b) * (1 - share)
    flagged = pfm.curve_counts(df, y_true="y", y_score="s", by="in_b", **mode)
    for lazy in (False, True):
        src = flagged.lazy() if lazy else flagged
        got = pfm.bias_adjusted_counts(src, "in_b", biased_share=share)
        got = got.collect(engine="streaming") if isinstance(got, pl.LazyFrame) else got
        for in_b, fp, fp_w in got.select("in_b", "fp", "fp_w").iter_rows():
            assert fp_w == pytest.approx(fp * (w_b if in_b else w_c), rel=1e-12, abs=1e-15)
    # the sizes are checked against the rows once, not once per threshold
    exact_sizes = {"biased_size": n_b, "population_size": len(rows)}
    assert pfm.bias_adjusted_counts(flagged, "in_b", **exact_sizes).height == flagged.height


# ---------------------------------------------------------------------------------------------
# Summaries against scikit-learn: typed keys, ties, zero and Float32 weights, both routes and
# engines, shuffled rows (no defect found here; the property guards the classes probed)
# ---------------------------------------------------------------------------------------------


@FEW
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", None]),
            st.booleans(),
            st.integers(0, 5),
            st.integers(0, 3),
        ),
        min_size=1,
        max_size=25,
    ),
    method=st.sampled_from(["aggregate", "sort"]),
    float32=st.booleans(),
)
def test_summaries_match_scikit_learn(
    rows: list[tuple[str | None, bool, int, int]], method: str, float32: bool
) -> None:
    import warnings

    from sklearn.metrics import auc, average_precision_score, precision_recall_curve, roc_auc_score

    dtype = pl.Float32 if float32 else pl.Float64
    df = pl.DataFrame(
        {
            "g": pl.Series([r[0] for r in rows], dtype=pl.Enum(["b", "a", "unused"])),
            "y": [r[1] for r in rows],
            "s": pl.Series([r[2] / 5 for r in rows], dtype=dtype),
            "w": pl.Series([r[3] / 2 for r in rows], dtype=dtype),
        }
    )
    opts: dict[str, Any] = dict(y_true="y", y_score="s", by="g", weight="w", exact_method=method)
    results = [
        pfm.curve_summaries(df.sample(fraction=1.0, shuffle=True, seed=1), **opts),
        pfm.curve_summaries(df.lazy(), **opts).collect(engine="streaming"),
    ]
    for g in {r[0] for r in rows}:
        part = df.filter(pl.col("g").eq_missing(g))
        y = part["y"].to_numpy()
        s = part["s"].cast(pl.Float64).to_numpy()
        w = part["w"].cast(pl.Float64).to_numpy()
        pos, neg = w[y].sum(), w[~y].sum()
        expected: dict[str, float | None] = {
            "roc_auc": None,
            "average_precision": None,
            "aupr": None,
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if pos > 0 and neg > 0:
                expected["roc_auc"] = roc_auc_score(y, s, sample_weight=w)
            if pos > 0:
                expected["average_precision"] = average_precision_score(y, s, sample_weight=w)
                precision, recall, _ = precision_recall_curve(y, s, sample_weight=w)
                expected["aupr"] = auc(recall, precision)
        for out in results:
            got = dict(out.filter(pl.col("g").eq_missing(g)).select("metric", "value").iter_rows())
            for metric, value in expected.items():
                if value is None:
                    assert got[metric] is None, (g, metric)
                else:
                    assert got[metric] == pytest.approx(value, rel=1e-9, abs=1e-12), (g, metric)


@pytest.mark.parametrize("threshold", [0.6, [0.6], (0.5, 0.6)])
def test_threshold_for_precision_one_threshold(threshold: Any) -> None:
    """threshold=0.6 raised Python's "'float' object is not iterable" (the grid was list()-ed),
    and threshold='0.5' was iterated character by character ("threshold '0' is not a
    number"). One number is a grid of one; text is refused whole. Oracle: precision at 0.6 is
    3 / 4 >= 0.7, at 0.5 it is 3 / 5."""
    df = pl.DataFrame(
        {"y": [1, 1, 0, 1, 0, 0, 0, 0], "s": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2]}
    )
    out = pfm.threshold_for_precision(
        df, y_true="y", y_score="s", min_precision=0.7, threshold=threshold
    )
    assert out["threshold"].to_list() == [0.6, 0.6]
    assert out["value"].to_list() == pytest.approx([0.75, 1.0])
    with pytest.raises(InvalidOptionError, match=r"threshold='0.5' must be a list of numbers"):
        pfm.threshold_for_precision(df, y_true="y", y_score="s", min_precision=0.7, threshold="0.5")


@pytest.mark.parametrize(
    ("curve", "column"),
    [("roc_curve", "fpr"), ("roc_curve", "tpr"), ("pr_curve", "precision"), ("pr_curve", "recall")],
)
def test_curve_group_column_named_like_the_curve(curve: str, column: str) -> None:
    """A group column named like one of the curve's columns raised Polars' DuplicateError
    ("projections contained duplicate output name"), from rows and from a curve table."""
    df = pl.DataFrame({column: ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "s": [0.9, 0.2, 0.4, 0.7]})
    table = pfm.curve_counts(df, y_true="y", y_score="s", by=column)
    for call in (
        lambda: getattr(pfm, curve)(df, y_true="y", y_score="s", by=column),
        lambda: getattr(pfm, curve)(table),
    ):
        with pytest.raises(InvalidOptionError, match=rf"group column '{column}' collides"):
            call()


def test_weight_column_never_replaces_its_inputs() -> None:
    """with_importance_weights(df, 'importance_weight') replaced the group labels by their
    weights (the default name= was the group column): a silent loss of the labels. And a count
    table keyed by 'deploy_factor' raised Polars' DuplicateError."""
    df = pl.DataFrame({"importance_weight": ["a", "a", "b"], "y": [1, 0, 1], "p": [1, 0, 0]})
    with pytest.raises(InvalidOptionError, match=r"name='importance_weight' is a column"):
        pfm.with_importance_weights(df, "importance_weight")
    got = pfm.with_importance_weights(df, "importance_weight", name="w")
    assert got["importance_weight"].to_list() == ["a", "a", "b"]  # labels kept
    assert got["w"].to_list() == pytest.approx([0.75, 0.75, 1.5])  # (1/2) / (2/3), (1/2) / (1/3)
    flags = pl.DataFrame({"b": [True, False, False]})
    with pytest.raises(InvalidOptionError, match=r"name='b' is a column"):
        pfm.with_bias_adjusted_weights(flags, "b", biased_share=0.3, name="b")
    table = pfm.confusion_counts(
        df.rename({"importance_weight": "deploy_factor"}),
        y_true="y",
        y_pred="p",
        by="deploy_factor",
    )
    with pytest.raises(InvalidOptionError, match=r"group column 'deploy_factor' collides"):
        pfm.deployment_factors(table, deploy_positive_rate=0.2)


def test_deployment_corrected_curves_use_the_one_factor() -> None:
    """The curves had their own copy of the deployment factor: a group without test negatives
    under test_ratio='per_group' got null precisions and an average precision of 0.0 (a sum
    of nulls), where deployment_metrics refuses the undefined test ratio; and a per-group
    mapping of rates raised Python's "cannot create expression literal for value of type
    dict". Both now go through polars_fairmetrics.deployment."""
    one_class = pl.DataFrame(
        {"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 1], "s": [0.9, 0.2, 0.4, 0.7]}
    )
    opts: dict[str, Any] = dict(
        y_true="y", y_score="s", by="g", deploy_positive_rate=0.2, test_ratio="per_group"
    )
    for call in (pfm.pr_curve, pfm.curve_summaries):
        with pytest.raises(EmptyGroupError, match=r"no negatives in the group 'b'"):
            call(one_class, **opts)
    df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "s": [0.9, 0.2, 0.4, 0.7]})
    rates = {"a": 0.1, "b": 0.2}
    mapped = {**opts, "deploy_positive_rate": rates}
    for out in (
        pfm.pr_curve(df, **mapped),
        pfm.pr_curve(df.lazy(), **mapped).collect(engine="streaming"),
    ):
        # each group has N/P = 1: factor (1 - r) / r; precision TP / (TP + factor FP)
        for g, t, precision in out.select("g", "threshold", "precision").iter_rows():
            if t == float("inf"):
                continue
            mine = [(y, s) for gg, y, s in df.iter_rows() if gg == g and s >= t]
            tp = sum(y for y, _ in mine)
            fp = len(mine) - tp
            factor = (1 - rates[g]) / rates[g]
            assert precision == pytest.approx(tp / (tp + factor * fp), rel=1e-12)
