"""Tests of controlled IR/GR subsampling."""

from __future__ import annotations

import polars as pl
import pytest

from polars_fairmetrics.exceptions import ColumnNotFoundError, InvalidOptionError
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
