"""Two-proportion tests of disparities and their family-wise corrections, against plain references.

The z statistic and p-value against a NumPy/SciPy computation from the raw rows, Holm and
Benjamini–Hochberg against direct implementations of their definitions; both engines.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import norm

import polars_fairmetrics as pfm
from polars_fairmetrics.exceptions import InvalidOptionError
from polars_fairmetrics.significance import disparity_tests, erfc


def _holm(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * p[i]))
        out[i] = running
    return out


def _bh(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 1.0
    for k in range(m - 1, -1, -1):
        i = order[k]
        running = min(running, min(1.0, m * p[i] / (k + 1)))
        out[i] = running
    return out


def _z_test(x1: int, n1: int, x2: int, n2: int) -> tuple[float, float]:
    p1, p2 = x1 / n1, x2 / n2
    pooled = (x1 + x2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return 0.0, 1.0
    z = (p1 - p2) / se
    return z, float(2 * norm.sf(abs(z)))


@st.composite
def frames(draw: st.DrawFn) -> pl.DataFrame:
    seed = draw(st.integers(0, 2**31 - 1))
    n = draw(st.integers(40, 400))
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "g": rng.choice(["a", "b", "c", "d"], n).tolist(),
            "y": rng.integers(0, 2, n).tolist(),
            "p": (rng.random(n) < draw(st.sampled_from([0.2, 0.5, 0.8]))).astype(int).tolist(),
        }
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames(), st.sampled_from(["overall", "rest", "a"]), st.sampled_from(["holm", "bh"]))
def test_tests_match_a_reference(df: pl.DataFrame, reference: str, correction: str) -> None:
    names = ["true_positive_rate", "selection_rate"]
    engine = "streaming" if reference == "rest" else "in-memory"
    out = disparity_tests(
        df.lazy(),
        y_true="y",
        y_pred="p",
        by="g",
        metrics=names,
        reference=reference,
        correction=correction,  # type: ignore[arg-type]
    ).collect(engine=engine)  # type: ignore[call-overload]
    rows = df.to_dicts()

    def rate(sub: list[dict[str, int]], metric: str) -> tuple[int, int]:
        if metric == "true_positive_rate":
            pos = [r for r in sub if r["y"] == 1]
            return sum(r["p"] for r in pos), len(pos)
        return sum(r["p"] for r in sub), len(sub)

    raw: list[float] = []
    index: list[int] = []
    for i, row in enumerate(out.iter_rows(named=True)):
        group = [r for r in rows if r["g"] == row["g"]]
        if reference == "a":
            other = [r for r in rows if r["g"] == "a"]
        else:
            other = [r for r in rows if r["g"] != row["g"]]
        x1, n1 = rate(group, row["metric"])
        x2, n2 = rate(other, row["metric"])
        if row["is_reference"] or n1 == 0 or n2 == 0:
            assert row["p_value"] is None
            continue
        z, p = _z_test(x1, n1, x2, n2)
        assert row["statistic"] == pytest.approx(z, rel=1e-9, abs=1e-12)
        assert row["p_value"] == pytest.approx(p, rel=1e-5, abs=1e-12)
        raw.append(row["p_value"])
        index.append(i)
    adjusted = (_holm if correction == "holm" else _bh)(raw)
    got = out["p_value_adjusted"].to_list()
    for i, a in zip(index, adjusted, strict=True):
        assert got[i] == pytest.approx(a, rel=1e-12)
        assert out["significant"][i] == (a < 0.05)


def test_non_proportions_small_groups_and_the_reference_are_untested() -> None:
    df = pl.DataFrame(
        {"g": ["a"] * 30 + ["b"] * 30 + ["c"] * 3, "y": [1, 0] * 31 + [1], "p": [1] * 63}
    )
    out = disparity_tests(
        df, y_true="y", y_pred="p", by="g", metrics=["f1", "tpr"], reference="a", min_support=5
    )
    assert out.filter(pl.col("metric") == "f1_score")["p_value"].null_count() == 3
    tpr = out.filter(pl.col("metric") == "true_positive_rate")
    assert tpr.filter(pl.col("g") == "a")["p_value"].item() is None  # the reference itself
    assert tpr.filter(pl.col("g") == "c")["p_value"].item() is None  # 2 positives < 5
    assert tpr.filter(pl.col("g") == "b")["p_value"].item() == pytest.approx(1.0)


def test_erfc_is_accurate() -> None:
    x = np.linspace(0, 8, 401)
    got = pl.select(erfc(pl.lit(pl.Series(x)))).to_series().to_numpy()
    want = np.array([math.erfc(v) for v in x])
    np.testing.assert_allclose(got, want, rtol=2e-7, atol=1e-300)


def test_options_are_checked() -> None:
    df = pl.DataFrame({"g": ["a", "b"], "y": [1, 0], "p": [1, 1]})
    with pytest.raises(InvalidOptionError, match="correction"):
        disparity_tests(df, y_true="y", y_pred="p", by="g", correction="bonferroni")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="alpha"):
        disparity_tests(df, y_true="y", y_pred="p", by="g", alpha=1.5)
    with pytest.raises(InvalidOptionError, match="min_support"):
        disparity_tests(df, y_true="y", y_pred="p", by="g", min_support=-1)


def test_compas_fpr_gap_is_significant() -> None:
    lf = pfm.scan_compas().with_columns(high=pl.col("decile_score") >= 5)
    out = disparity_tests(
        lf,
        y_true="two_year_recid",
        y_pred="high",
        by="race",
        metrics="fpr",
        reference="Caucasian",
    ).collect()
    aa = out.filter(pl.col("race") == "African-American").row(0, named=True)
    assert aa["difference"] > 0.15 and aa["significant"] is True
