"""Adversarial inputs for curves, weights and deployment, checked against independent oracles.

Each test targets a class of inputs on which the public API gave a silently wrong number, an
unclear error or a raw Polars traceback: mapping keys of another type than their group column
(importance-weight mixes, per-group deployment rates), NumPy integers as ``bins=``, the
notebook's fixed grid on scores below 0, infinite scores without bounds. The oracles are plain
Python loops and scikit-learn; no number is taken from the package itself.
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
