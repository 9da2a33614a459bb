"""fairlearn's names mean what they mean in fairlearn: oracle tests against fairlearn 0.15.

Random data where every group has both classes and both predictions (there fairlearn and the
package agree: no zero_division convention is involved), with and without weights, both
methods, several sensitive features; inputs as lists, NumPy, pandas, pyarrow and Polars.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from fairlearn import metrics as flm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, precision_score, recall_score

import polars_fairmetrics as pfm
from polars_fairmetrics.exceptions import InvalidOptionError

FUNCTIONS = [
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "equalized_odds_difference",
    "equalized_odds_ratio",
    "equal_opportunity_difference",
    "equal_opportunity_ratio",
]


@st.composite
def data(draw: st.DrawFn) -> dict[str, Any]:
    seed = draw(st.integers(0, 2**31 - 1))
    n_groups = draw(st.integers(2, 4))
    per = draw(st.integers(8, 30))
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_groups), per)
    n = groups.size
    y = rng.integers(0, 2, n)
    p = rng.integers(0, 2, n)
    # every group and every (group, second feature) intersection has both classes and both
    # predictions: no 0/0 anywhere
    second = np.empty(n, dtype=object)
    for g in range(n_groups):
        i = np.flatnonzero(groups == g)
        for half, start in (("u", 0), ("v", per // 2)):
            j = i[start:]
            y[j[:2]], p[j[:2]] = [0, 1], [0, 1]
            y[j[2:4]], p[j[2:4]] = [0, 1], [1, 0]
            second[i[start : start + per // 2] if half == "u" else i[start:]] = half
    w = rng.choice([0.5, 1.0, 2.0, 3.5], n) if draw(st.booleans()) else None
    return {"y": y, "p": p, "g": np.array([f"g{v}" for v in groups]), "h": second, "w": w}


def _close(a: float | None, b: float) -> bool:
    assert a is not None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data(), st.sampled_from(["between_groups", "to_overall"]), st.booleans())
@pytest.mark.parametrize("name", FUNCTIONS)
def test_scalar_functions_equal_fairlearn(
    name: str, d: dict[str, Any], method: str, two_features: bool
) -> None:
    sf: Any = pd.DataFrame({"g": d["g"], "h": d["h"]}) if two_features else d["g"]
    kwargs: dict[str, Any] = {"sensitive_features": sf, "method": method}
    if d["w"] is not None:
        kwargs["sample_weight"] = d["w"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(flm, name)(d["y"], d["p"], **kwargs)
    got = getattr(pfm, name)(d["y"], d["p"], **kwargs)
    assert _close(got, want), (got, want)


@settings(max_examples=20, deadline=None)
@given(data())
def test_equalized_odds_mean_aggregation(d: dict[str, Any]) -> None:
    for name in ("equalized_odds_difference", "equalized_odds_ratio"):
        want = getattr(flm, name)(d["y"], d["p"], sensitive_features=d["g"], agg="mean")
        got = getattr(pfm, name)(d["y"], d["p"], sensitive_features=d["g"], agg="mean")
        assert _close(got, want)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data(), st.sampled_from(["between_groups", "to_overall"]))
def test_metric_frame_equals_fairlearn(d: dict[str, Any], method: str) -> None:
    sample_params = None
    if d["w"] is not None:
        sample_params = {
            "recall": {"sample_weight": d["w"]},
            "precision": {"sample_weight": d["w"]},
            "accuracy": {"sample_weight": d["w"]},
            "selection_rate": {"sample_weight": d["w"]},
        }
    theirs = flm.MetricFrame(
        metrics={
            "recall": recall_score,
            "precision": precision_score,
            "accuracy": accuracy_score,
            "selection_rate": flm.selection_rate,
        },
        y_true=d["y"],
        y_pred=d["p"],
        sensitive_features=pd.Series(d["g"], name="g"),
        sample_params=sample_params,
    )
    ours = pfm.MetricFrame(
        metrics={
            "recall": recall_score,
            "precision": "precision",
            "accuracy": accuracy_score,
            "selection_rate": "selection_rate",
        },
        y_true=d["y"],
        y_pred=d["p"],
        sensitive_features=pd.Series(d["g"], name="g"),
        sample_weight=d["w"],
    )
    by_group = ours.by_group.sort("g")
    for m in ("recall", "precision", "accuracy", "selection_rate"):
        np.testing.assert_allclose(
            by_group[m].to_numpy(), theirs.by_group[m].to_numpy(), rtol=1e-12
        )
        assert _close(ours.overall[m], float(theirs.overall[m]))
        diff = dict(ours.difference(method=method).rows())[m]
        ratio = dict(ours.ratio(method=method).rows())[m]
        assert _close(diff, float(theirs.difference(method=method)[m]))
        assert _close(ratio, float(theirs.ratio(method=method)[m]))
        assert _close(dict(ours.group_min().rows())[m], float(theirs.group_min()[m]))
        assert _close(dict(ours.group_max().rows())[m], float(theirs.group_max()[m]))


def test_every_input_form_gives_the_same_number() -> None:
    rng = np.random.default_rng(3)
    n = 200
    y, p = rng.integers(0, 2, n), rng.integers(0, 2, n)
    g = rng.choice(["a", "b", "c"], n)
    want = pfm.equalized_odds_difference(y, p, sensitive_features=g)
    forms: list[Any] = [
        (list(y), list(p), list(g)),
        (pd.Series(y), pd.Series(p), pd.Series(g, name="race")),
        (pl.Series(y), pl.Series(p), pl.Series("race", g)),
        (pa.array(y), pa.array(p), pa.array(g)),
    ]
    for yt, yp, sf in forms:
        assert pfm.equalized_odds_difference(yt, yp, sensitive_features=sf) == want
    frame = {"y": y, "p": p, "race": g}
    for table in (
        pl.DataFrame(frame),
        pl.DataFrame(frame).lazy(),
        pd.DataFrame(frame),
        pa.table(frame),
        frame,
    ):
        got = pfm.equalized_odds_difference("y", "p", sensitive_features="race", data=table)
        assert got == want


def test_undefined_groups_are_left_out_and_all_undefined_is_none() -> None:
    # group b has no actual positives: its TPR is undefined (fairlearn would count it as 0)
    y, p, g = [1, 1, 0, 0], [1, 0, 1, 0], ["a", "a", "b", "b"]
    assert pfm.equal_opportunity_difference(y, p, sensitive_features=g) == 0.0
    assert pfm.equal_opportunity_difference([0, 0], [1, 0], sensitive_features=["a", "b"]) is None


def test_bad_inputs_are_refused_clearly() -> None:
    with pytest.raises(InvalidOptionError, match="method"):
        pfm.demographic_parity_difference([1], [1], sensitive_features=["a"], method="worst")
    with pytest.raises(InvalidOptionError, match="agg"):
        pfm.equalized_odds_difference([1], [1], sensitive_features=["a"], agg="max")
    with pytest.raises(InvalidOptionError, match="different lengths"):
        pfm.demographic_parity_difference([1, 0], [1], sensitive_features=["a", "b"])
    with pytest.raises(InvalidOptionError, match="MetricFrame computes"):
        pfm.MetricFrame(metrics=lambda a, b: 0, y_true=[1], y_pred=[1], sensitive_features=["a"])
    with pytest.raises(InvalidOptionError, match="expected a table"):
        pfm.demographic_parity_difference("y", "p", sensitive_features="g", data=[1, 2, 3])
