"""Tests of controlled IR/GR subsampling."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polars_fairmetrics.exceptions import ColumnNotFoundError, InvalidDtypeError, InvalidOptionError
from polars_fairmetrics.sampling import StratumTooSmallError, sample_ir_gr, stratum_sizes


@pytest.fixture
def frame() -> pl.DataFrame:
    n = 4000
    return pl.DataFrame(
        {
            "y": [i % 3 == 0 for i in range(n)],
            "sex": ["F" if i % 5 < 2 else "M" for i in range(n)],
            "x": list(range(n)),
        }
    ).with_columns(pl.when(pl.col("x") == 7).then(None).otherwise(pl.col("sex")).alias("sex"))


def test_paper_example_sizes() -> None:
    s = stratum_sizes(1100, ir=0.5, gr=0.1)
    assert (s.protected_positive, s.protected_negative) == (55, 55)
    assert (s.unprotected_positive, s.unprotected_negative) == (495, 495)


@pytest.mark.parametrize("ir", [0.01, 0.1, 0.5, 0.9, 0.99])
@pytest.mark.parametrize("gr", [0.01, 0.3, 0.5, 0.99])
def test_totals_exact(ir: float, gr: float) -> None:
    s = stratum_sizes(1100, ir=ir, gr=gr)
    vals = list(s.as_dict().values())
    assert min(vals) >= 0
    assert sum(vals) == 1100
    assert s.protected_positive + s.unprotected_positive == round(1100 * ir)
    assert s.protected_positive + s.protected_negative == round(1100 * gr)


def test_sample_counts_and_reproducible(frame: pl.DataFrame) -> None:
    kw = dict(y_true="y", group="sex", protected="F", n=200, ir=0.2, gr=0.3, pos_label=True)
    a = sample_ir_gr(frame, seed=1, **kw)  # type: ignore[arg-type]
    b = sample_ir_gr(frame, seed=1, **kw)  # type: ignore[arg-type]
    c = sample_ir_gr(frame, seed=2, **kw)  # type: ignore[arg-type]
    assert a.equals(b)
    assert not a.equals(c)
    assert a.height == 200
    assert a.columns == frame.columns
    assert int(a["y"].sum()) == 40
    assert int((a["sex"] == "F").sum()) == 60
    assert a.filter(pl.col("y"), pl.col("sex") == "F").height == 12
    assert a["sex"].null_count() == 0
    assert a["x"].is_sorted()  # original row order kept
    assert a["x"].n_unique() == 200  # no replacement


def test_lazy_in_lazy_out(frame: pl.DataFrame) -> None:
    kw = dict(y_true="y", group="sex", protected="F", n=100, ir=0.5, gr=0.5, seed=3)
    lazy = sample_ir_gr(frame.lazy(), pos_label=True, **kw)  # type: ignore[arg-type]
    assert isinstance(lazy, pl.LazyFrame)
    eager = sample_ir_gr(frame, pos_label=True, **kw)  # type: ignore[arg-type]
    assert lazy.collect(engine="streaming").sort("x").equals(eager)


def test_too_small_stratum_names_it(frame: pl.DataFrame) -> None:
    with pytest.raises(StratumTooSmallError, match=r"protected \(sex == 'F'\) × positive.*hold"):
        sample_ir_gr(
            frame,
            y_true="y",
            group="sex",
            protected="F",
            n=3000,
            ir=0.9,
            gr=0.9,
            seed=0,
            pos_label=True,
        )


def test_bad_inputs(frame: pl.DataFrame) -> None:
    with pytest.raises(ColumnNotFoundError, match="'label'"):
        sample_ir_gr(
            frame, y_true="label", group="sex", protected="F", n=10, ir=0.5, gr=0.5, seed=0
        )
    with pytest.raises(InvalidOptionError, match="ir must be"):
        stratum_sizes(10, ir=1.5, gr=0.5)
    with pytest.raises(InvalidOptionError, match="n must be"):
        stratum_sizes(0, ir=0.5, gr=0.5)


# ------------------------------------------------------------------------------------------
# edge cases: every bad option is a clear InvalidOptionError, never a raw numpy/polars error
# ------------------------------------------------------------------------------------------

_KW = dict(y_true="y", group="sex", protected="F", n=20, ir=0.5, gr=0.25, seed=0, pos_label=True)


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        ({"seed": 1.5}, InvalidOptionError, r"seed must be a non-negative integer .* got 1.5"),
        ({"seed": -1}, InvalidOptionError, r"seed must be a non-negative integer .* got -1"),
        ({"seed": True}, InvalidOptionError, r"seed must be .* got True"),
        ({"seed": None}, InvalidOptionError, r"seed must be .* got None"),
        ({"seed": "7"}, InvalidOptionError, r"seed must be .* got '7'"),
        ({"ir": -0.1}, InvalidOptionError, r"ir must be a number in \[0, 1\], got -0.1"),
        ({"ir": 1.01}, InvalidOptionError, r"ir must be a number in \[0, 1\], got 1.01"),
        ({"gr": float("nan")}, InvalidOptionError, r"gr must be a number in \[0, 1\], got nan"),
        ({"gr": float("inf")}, InvalidOptionError, r"gr must be a number in \[0, 1\], got inf"),
        ({"ir": "0.5"}, InvalidOptionError, r"ir must be a number in \[0, 1\], got '0.5'"),
        ({"ir": True}, InvalidOptionError, r"ir must be a number in \[0, 1\], got True"),
        ({"n": 0}, InvalidOptionError, r"n must be a positive integer, got 0"),
        ({"n": 2.5}, InvalidOptionError, r"n must be a positive integer, got 2.5"),
        ({"n": -3}, InvalidOptionError, r"n must be a positive integer, got -3"),
        ({"protected": None}, InvalidOptionError, r"protected=None: give a value of column 'sex'"),
        ({"pos_label": None}, InvalidOptionError, r"pos_label=None: give a value of column 'y'"),
        ({"protected": 1}, InvalidDtypeError, r"column 'sex' \(group\) has dtype String; prot"),
        ({"group": "x", "protected": "F"}, InvalidDtypeError, r"column 'x' \(group\) has dtype"),
        ({"n": 5000}, StratumTooSmallError, r"needs \d+ rows for n=5000"),
    ],
)
def test_bad_options_are_clear(
    frame: pl.DataFrame, change: dict[str, object], error: type[Exception], match: str
) -> None:
    kw = {**_KW, **change}
    for data in (frame, frame.lazy()):
        with pytest.raises(error, match=match):
            sample_ir_gr(data, **kw)  # type: ignore[arg-type]


def test_empty_frame_and_numpy_options(frame: pl.DataFrame) -> None:
    with pytest.raises(StratumTooSmallError, match="but the data hold 0"):
        sample_ir_gr(frame.head(0), **_KW)  # type: ignore[arg-type]
    a = sample_ir_gr(frame, **{**_KW, "n": np.int64(20), "seed": np.uint8(0)})  # type: ignore[arg-type]
    b = sample_ir_gr(frame, **_KW)  # type: ignore[arg-type]
    assert a.equals(b)
    assert stratum_sizes(np.int32(1100), ir=np.float32(0.5), gr=Fraction(1, 10)) == stratum_sizes(
        1100, ir=0.5, gr=0.1
    )


@settings(max_examples=min(settings().max_examples, 60))
@given(
    n=st.integers(1, 300),
    ir=st.floats(0, 1),
    gr=st.floats(0, 1),
    seed=st.integers(0, 2**63),
)
def test_strata_exact_and_sample_matches_them(n: int, ir: float, gr: float, seed: int) -> None:
    s = stratum_sizes(n, ir=ir, gr=gr)
    sizes = s.as_dict()
    assert min(sizes.values()) >= 0 and sum(sizes.values()) == n
    assert s.protected_positive + s.unprotected_positive == round(n * ir)
    assert s.protected_positive + s.protected_negative == round(n * gr)
    rows = 4 * 300
    data = pl.DataFrame(
        {
            "y": [i % 2 == 0 for i in range(rows)],
            "g": ["p" if (i // 2) % 2 == 0 else "u" for i in range(rows)],
            "i": range(rows),
        }
    )
    kw = dict(y_true="y", group="g", protected="p", n=n, ir=ir, gr=gr, seed=seed, pos_label=True)
    eager = sample_ir_gr(data, **kw)  # type: ignore[arg-type]
    got = {
        (prot, pos): c
        for prot, pos, c in eager.select(pl.col("g") == "p", "y")
        .group_by(pl.all())
        .len()
        .iter_rows()
    }
    assert {k: v for k, v in got.items() if v} == {k: v for k, v in sizes.items() if v}
    lazy = sample_ir_gr(data.lazy(), **kw)  # type: ignore[arg-type]
    for engine in ("in-memory", "streaming"):
        assert lazy.collect(engine=engine).sort("i").equals(eager)
