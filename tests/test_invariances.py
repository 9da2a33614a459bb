"""Invariances, registry-driven (as scikit-learn's ``test_common.py``).

:data:`CAPABILITIES` lists every public entry point as a function ``(data, weight) -> frame``;
every invariance test runs over all of them:

- row order does not matter;
- duplicating every row equals doubling the weights;
- scaling all weights leaves rates unchanged (and scales the weighted counts);
- relabelling the groups permutes the results;
- the thread count does not change the results (subprocess with ``POLARS_MAX_THREADS=1``);
- streaming equals in-memory, and eager equals lazy;
- count tables are mergeable: counts of disjoint parts, combined, equal the counts of the whole,
  and the metrics from them are the same; rows are never lost.

Weights are multiples of 0.5 below 8, so weighted sums are exact in floating point whatever
the summation order, and the results can be compared exactly (scaling by 4 is exact too).
A capability merged later (weights, curves, bootstrap, ensemble, report) adds one line to
:data:`CAPABILITIES`.

Bootstrap (``bootstrap_metrics``, both engines and between-groups, and ``bootstrap_rows``) has
its own invariance: a fixed seed (the default, 0, when none is given) gives identical
intervals — on a second call, from a LazyFrame on either engine, and with one thread or the
default pool — and two seeds give different ones.
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_fairmetrics as pfm

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = max(8, min(40, settings().max_examples // 10))
"""Examples per invariance test (ci profile: 40; the 10,000 frames go to the reference tests)."""
KEYS = ["g", "h"]
Data = pl.DataFrame | pl.LazyFrame


@dataclass(frozen=True)
class Capability:
    """A public entry point, how to call it, and what its output means."""

    name: str
    run: Callable[[Data, str | None], Any]
    group_columns: tuple[str, ...]  # output columns holding group values
    weighted_values: tuple[str, ...]  # columns that weighted-only invariances compare
    count_scaled: tuple[str, ...] = ()  # columns that scale with the weights
    unstable: tuple[str, ...] = ()  # ties may be broken either way: not compared
    requires: str | None = None  # module of a capability merged later: skipped until it is


def _mod(name: str) -> Any:
    return importlib.import_module(f"polars_fairmetrics.{name}")


def _w(weight: str | None) -> dict[str, Any]:
    return {"weight": weight} if weight is not None else {}


ROWS = {"y_true": "y", "y_pred": "p"}
DISP = ("value", "reference_value", "difference", "ratio")

CAPABILITIES: list[Capability] = [
    Capability(
        "confusion_counts",
        lambda d, w: pfm.confusion_counts(d, by=KEYS, **ROWS, **_w(w)),
        ("g", "h"),
        (),
        ("tp_w", "fp_w", "tn_w", "fn_w", "n_w"),
    ),
    Capability(
        "confusion_counts_thresholds",
        lambda d, w: pfm.confusion_counts(
            d, y_true="y", y_score="s", threshold=[0.0, 0.3, 0.5, 1.0], by=KEYS, **_w(w)
        ),
        ("g", "h"),
        (),
        ("tp_w", "fp_w", "tn_w", "fn_w", "n_w"),
    ),
    Capability(
        "confusion_counts_separately",
        lambda d, w: pfm.confusion_counts(d, by=KEYS, separately=True, **ROWS, **_w(w)),
        ("attribute", "g", "h"),
        (),
        ("tp_w", "fp_w", "tn_w", "fn_w", "n_w"),
    ),
    Capability(
        "group_metrics",
        lambda d, w: pfm.group_metrics(d, by=KEYS, **ROWS, **_w(w)),
        ("g", "h"),
        ("value",),
        ("n_w",),
    ),
    Capability(
        "disparities_overall",
        lambda d, w: pfm.disparities(d, by=KEYS, reference="overall", **ROWS, **_w(w)),
        ("g", "h"),
        DISP,
        ("n_w",),
    ),
    Capability(
        "disparities_rest",
        lambda d, w: pfm.disparities(d, by=KEYS, reference="rest", **ROWS, **_w(w)),
        ("g", "h"),
        DISP,
        ("n_w",),
    ),
    Capability(
        "disparities_named",
        lambda d, w: pfm.disparities(d, by="g", reference="a", **ROWS, **_w(w)),
        ("g",),
        DISP,
        ("n_w",),
    ),
    Capability(
        "between_groups",
        lambda d, w: pfm.between_groups(d, by=KEYS, **ROWS, **_w(w)),
        (),
        ("max", "min", "difference", "ratio"),
        (),
        ("worst_group", "best_group"),
    ),
    Capability(
        "fairness_criteria",
        lambda d, w: pfm.fairness_criteria(d, by=KEYS, reference="rest", **ROWS, **_w(w)),
        ("g", "h"),
        ("value",),
        ("n_w",),
    ),
    # capabilities merged on main after this branch (skipped until present)
    Capability(
        "curve_summaries",
        lambda d, w: _mod("curves").curve_summaries(
            d, y_true="y", y_score="s", by=KEYS, wide=True, **_w(w)
        ),
        ("g", "h"),
        ("roc_auc", "average_precision", "aupr"),
        ("n_w",),
        requires="curves",
    ),
]
"""Every entry point under test. Add one line per capability merged later."""


def _present(cap: Capability) -> bool:
    return (
        cap.requires is None
        or importlib.util.find_spec(f"polars_fairmetrics.{cap.requires}") is not None
    )


IDS = [c.name for c in CAPABILITIES]
PARAMS = [
    pytest.param(
        c,
        id=c.name,
        marks=pytest.mark.skipif(
            not _present(c), reason=f"capability {c.requires!r} not merged on this branch"
        ),
    )
    for c in CAPABILITIES
]


@st.composite
def frames(draw: st.DrawFn, min_rows: int = 0) -> pl.DataFrame:
    """Random rows: groups g (a-d, with nulls) × h (1-2), labels and predictions with nulls,
    scores on a 0.1 grid, weights that are multiples of 0.5 (zeros included). Group "a" is
    always present (it is the named reference)."""
    n = draw(st.integers(min_rows, 50))
    seed = draw(st.integers(0, 2**32 - 1))
    p_null = draw(st.sampled_from([0.0, 0.0, 0.1]))
    rng = np.random.default_rng(seed)

    def nulls(values: list[Any]) -> list[Any]:
        return [None if rng.random() < p_null else v for v in values]

    g = ["a", *nulls([str(v) for v in rng.choice(["a", "b", "c", "d"], n)])]
    n += 1
    return pl.DataFrame(
        {
            "g": g,
            "h": [int(v) for v in rng.integers(1, 3, n)],
            "y": nulls([int(v) for v in rng.random(n) < draw(st.sampled_from([0.0, 0.3, 0.7, 1]))]),
            "p": nulls([int(v) for v in rng.random(n) < draw(st.sampled_from([0.0, 0.4, 1.0]))]),
            "s": nulls([float(v) for v in rng.integers(0, 11, n) / 10]),
            "w": nulls([float(v) for v in rng.choice([0.0, 0.5, 1.0, 2.5, 7.0], n)]),
        },
        schema={
            "g": pl.String,
            "h": pl.Int64,
            "y": pl.Int64,
            "p": pl.Int64,
            "s": pl.Float64,
            "w": pl.Float64,
        },
    )


def _sorted(df: pl.DataFrame, cap: Capability) -> pl.DataFrame:
    df = df.drop([c for c in cap.unstable if c in df.columns])
    keys = [
        c
        for c in df.columns
        if df.schema[c] in (pl.String, pl.Int64, pl.Float64)
        and c not in (*DISP, "max", "min", *cap.weighted_values, *cap.count_scaled)
    ]
    return df.sort(keys, nulls_last=True)


def _same(a: pl.DataFrame, b: pl.DataFrame, cap: Capability) -> None:
    assert_frame_equal(_sorted(a, cap), _sorted(b, cap), check_exact=True)


def _collect(out: Any, engine: str = "in-memory") -> pl.DataFrame:
    return out.collect(engine=engine) if isinstance(out, pl.LazyFrame) else out


def assert_reconciles(table: pl.DataFrame, n_rows: int) -> None:
    """Rows are never lost: counted + null rows = input rows (per threshold / attribute)."""
    part_cols = [c for c in ("threshold", "attribute") if c in table.columns]
    parts = table.partition_by(part_cols) if part_cols else [table]
    for part in parts:
        assert int(part["n"].sum()) + int(part["n_null"].sum()) == n_rows


# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cap", PARAMS)
@given(df=frames(), seed=st.integers(0, 2**32 - 1), weight=st.sampled_from([None, "w"]))
@settings(max_examples=EXAMPLES)
def test_row_order(cap: Capability, df: pl.DataFrame, seed: int, weight: str | None) -> None:
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=seed % 2**31)
    _same(_collect(cap.run(df, weight)), _collect(cap.run(shuffled, weight)), cap)


@pytest.mark.parametrize("cap", PARAMS)
@given(df=frames())
@settings(max_examples=EXAMPLES)
def test_duplicating_rows_equals_doubling_weights(cap: Capability, df: pl.DataFrame) -> None:
    twice = _collect(cap.run(pl.concat([df, df]), "w"))
    doubled = _collect(cap.run(df.with_columns(pl.col("w") * 2), "w"))
    cols = [
        *cap.group_columns,
        *[
            c
            for c in twice.columns
            if c in ("metric", "threshold", "attribute") and c not in cap.group_columns
        ],
        *cap.weighted_values,
        *cap.count_scaled,
    ]
    sub = Capability(
        cap.name, cap.run, cap.group_columns, cap.weighted_values, cap.count_scaled, cap.unstable
    )
    _same(twice.select(cols), doubled.select(cols), sub)


@pytest.mark.parametrize("cap", PARAMS)
@given(df=frames(), factor=st.sampled_from([0.25, 4.0, 1024.0]))
@settings(max_examples=EXAMPLES)
def test_scaling_weights_leaves_rates_unchanged(
    cap: Capability, df: pl.DataFrame, factor: float
) -> None:
    base = _collect(cap.run(df, "w"))
    scaled = _collect(cap.run(df.with_columns(pl.col("w") * factor), "w"))
    expected = base.with_columns([pl.col(c) * factor for c in cap.count_scaled])
    _same(expected, scaled, cap)


@pytest.mark.parametrize("cap", PARAMS)
@given(df=frames(), factor=st.floats(0.01, 100.0))
@settings(max_examples=EXAMPLES)
def test_scaling_weights_by_any_factor(cap: Capability, df: pl.DataFrame, factor: float) -> None:
    """Any positive factor: rates equal up to rounding (1e-9)."""
    base = _collect(cap.run(df, "w"))
    scaled = _collect(cap.run(df.with_columns(pl.col("w") * factor), "w"))
    expected = base.with_columns([pl.col(c) * factor for c in cap.count_scaled])
    a, b = _sorted(expected, cap), _sorted(scaled, cap)
    if "ratio" in a.columns:  # a ratio to a reference within 1e-9 of 0 is ill-conditioned
        ref = "reference_value" if "reference_value" in a.columns else "max"
        tiny = (pl.col(ref).abs() < 1e-9).fill_null(False)
        a = a.with_columns(pl.when(tiny).then(None).otherwise(pl.col("ratio")).alias("ratio"))
        b = b.with_columns(pl.when(tiny).then(None).otherwise(pl.col("ratio")).alias("ratio"))
    assert_frame_equal(a, b, check_exact=False, rel_tol=1e-9, abs_tol=1e-9)


RELABEL = {"a": "zz", "b": "c", "c": "aa", "d": "b"}


@pytest.mark.parametrize("cap", PARAMS)
@given(df=frames(), weight=st.sampled_from([None, "w"]))
@settings(max_examples=EXAMPLES)
def test_relabelling_groups_permutes_results(
    cap: Capability, df: pl.DataFrame, weight: str | None
) -> None:
    relabelled = df.with_columns(pl.col("g").replace_strict(RELABEL, default=None))

    def run(d: pl.DataFrame) -> pl.DataFrame:
        out = _collect(
            cap.run(d, weight)
            if cap.name != "disparities_named"
            else pfm.disparities(
                d, by="g", reference=RELABEL["a"] if d is relabelled else "a", **ROWS, **_w(weight)
            )
        )
        return out.drop("reference", strict=False)

    base, moved = run(df), run(relabelled)
    if "g" in base.columns:
        base = base.with_columns(pl.col("g").replace_strict(RELABEL, default=None))
    elif "group" in base.columns:
        base = base.with_columns(
            pl.when(pl.col("attribute") == "g")
            .then(pl.col("group").replace_strict(RELABEL, default=None))
            .otherwise(pl.col("group"))
            .alias("group")
        )
    _same(base, moved, cap)


@pytest.mark.parametrize("cap", PARAMS)
@given(df=frames(), weight=st.sampled_from([None, "w"]))
@settings(max_examples=EXAMPLES)
def test_streaming_equals_in_memory_equals_eager(
    cap: Capability, df: pl.DataFrame, weight: str | None
) -> None:
    eager = cap.run(df, weight)
    assert isinstance(eager, pl.DataFrame)
    lazy = cap.run(df.lazy(), weight)
    assert isinstance(lazy, pl.LazyFrame)
    for engine in ("in-memory", "streaming"):
        _same(eager, lazy.collect(engine=engine), cap)


# --- mergeable counts -------------------------------------------------------------------------


@given(
    df=frames(),
    cuts=st.lists(st.integers(0, 51), max_size=4),
    weight=st.sampled_from([None, "w"]),
    scores=st.booleans(),
)
@settings(max_examples=EXAMPLES * 3)
def test_counts_of_parts_add_up_to_the_whole(
    df: pl.DataFrame, cuts: list[int], weight: str | None, scores: bool
) -> None:
    opts: dict[str, Any] = {"y_true": "y", "by": KEYS, **_w(weight)}
    opts.update({"y_score": "s", "threshold": [0.2, 0.5]} if scores else {"y_pred": "p"})
    bounds = sorted({0, *[min(c, df.height) for c in cuts], df.height})
    parts = [df[a:b] for a, b in itertools.pairwise(bounds)]
    tables = [pfm.confusion_counts(p, **opts) for p in parts]
    whole = pfm.confusion_counts(df, **opts)
    combined = pfm.combine_counts(tables)
    assert_frame_equal(combined, whole, check_exact=True)
    assert_reconciles(combined, df.height)
    # lazily too, and the metrics of the combined table are the metrics of the whole
    lazy = pfm.combine_counts([pfm.confusion_counts(p.lazy(), **opts) for p in parts])
    assert_frame_equal(lazy.collect(engine="streaming"), whole, check_exact=True)
    assert_frame_equal(
        pfm.metrics_from_counts(combined),
        pfm.metrics_from_counts(whole),
        check_exact=True,
    )
    assert_frame_equal(
        pfm.disparities(combined, by=KEYS, reference="rest"),
        pfm.disparities(whole, by=KEYS, reference="rest"),
        check_exact=True,
    )


def test_parts_with_disjoint_groups_combine() -> None:
    """A group present in one part only keeps its counts; null groups merge with null groups."""
    a = pl.DataFrame({"g": ["x", None], "y": [1, 0], "p": [1, 1]})
    b = pl.DataFrame({"g": ["y", None], "y": [0, None], "p": [0, 1]})
    opts: dict[str, Any] = {"y_true": "y", "y_pred": "p", "by": "g"}
    combined = pfm.combine_counts(
        [pfm.confusion_counts(a, **opts), pfm.confusion_counts(b, **opts)]
    )
    assert_frame_equal(combined, pfm.confusion_counts(pl.concat([a, b]), **opts))
    assert combined["g"].to_list() == ["x", "y", None]
    assert_reconciles(combined, 4)


# --- thread count ------------------------------------------------------------------------------

_THREAD_SCRIPT = """
import sys
import numpy as np, polars as pl
sys.path.insert(0, {root!r})
import polars_fairmetrics as pfm
rng = np.random.default_rng(7)
n = 300_000
df = pl.DataFrame({{
    "g": rng.choice(["a", "b", "c", "d"], n), "h": rng.integers(1, 3, n),
    "y": (rng.random(n) < 0.3).astype(np.int64), "p": (rng.random(n) < 0.4).astype(np.int64),
    "s": rng.integers(0, 11, n) / 10, "w": rng.random(n) * 3,
}})
sys.path.insert(0, {tests!r})
from test_invariances import CAPABILITIES, _present
out = {out!r}
for cap in [c for c in CAPABILITIES if _present(c)]:
    res = cap.run(df.lazy(), "w").collect(engine="streaming")
    res.write_parquet(f"{{out}}/{{cap.name}}.parquet")
print(pl.thread_pool_size())
"""


def test_thread_count_does_not_change_results(tmp_path: Path) -> None:
    """300,000 weighted rows (continuous weights), every capability, 1 thread vs the default."""
    sizes = {}
    for threads in ("1", "default"):
        out = tmp_path / threads
        out.mkdir()
        env = dict(os.environ)
        env.pop("POLARS_MAX_THREADS", None)
        if threads == "1":
            env["POLARS_MAX_THREADS"] = "1"
        script = _THREAD_SCRIPT.format(root=str(ROOT), tests=str(ROOT / "tests"), out=str(out))
        proc = subprocess.run(
            [sys.executable, "-c", script],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        sizes[threads] = int(proc.stdout.strip().splitlines()[-1])
    assert sizes["1"] == 1
    for cap in [c for c in CAPABILITIES if _present(c)]:
        one = pl.read_parquet(tmp_path / "1" / f"{cap.name}.parquet")
        many = pl.read_parquet(tmp_path / "default" / f"{cap.name}.parquet")
        # integer counts exactly; float sums of continuous weights may differ in the last bits
        # with the summation order
        assert_frame_equal(
            _sorted(one, cap), _sorted(many, cap), check_exact=False, rel_tol=1e-12, abs_tol=1e-12
        )


# --- a fixed seed gives identical intervals (bootstrap) -----------------------------------------

_BOOT_COLS = ("value", "ci_low", "ci_high", "n_defined", "ci_note")


def _boot_metrics(d: Data, seed: int | None, weight: str | None) -> Any:
    """The count engine (one scan; cells resampled; weighted sums from their squares),
    stratified by group. ``seed=None``: the default seed."""
    return _mod("bootstrap").bootstrap_metrics(
        d,
        by="g",
        metrics=["accuracy", "tpr"],
        n_resamples=25,
        engine="counts",
        stratify=True,
        progress=False,
        **({} if seed is None else {"seed": seed}),
        **ROWS,
        **_w(weight),
    )


def _boot_between(d: Data, seed: int | None, weight: str | None) -> Any:
    """Between-groups max-t intervals (count engine), plain bootstrap."""
    return _mod("bootstrap").bootstrap_metrics(
        d,
        by="g",
        what="between_groups",
        metrics=["accuracy", "tpr"],
        n_resamples=25,
        **({} if seed is None else {"seed": seed}),
        **ROWS,
        **_w(weight),
    )


def _boot_metrics_rows(d: Data, seed: int | None, weight: str | None) -> Any:
    """The row engine of bootstrap_metrics (one pass over the rows per replicate)."""
    return _mod("bootstrap").bootstrap_metrics(
        d,
        by="g",
        metrics=["accuracy"],
        n_resamples=8,
        engine="rows",
        stratify=True,
        progress=False,
        **({} if seed is None else {"seed": seed}),
        **ROWS,
        **_w(weight),
    )


def _boot_rows(d: Data, seed: int | None, weight: str | None) -> Any:
    """The row engine (multinomial multiplicities joined to the rows), stratified by group."""

    def statistic(lf: pl.LazyFrame) -> pl.LazyFrame:
        w = pl.col("bootstrap_weight") * (pl.col(weight) if weight else 1.0)
        return pfm.group_metrics(
            lf.with_columns(w.alias("_w")), by="g", metrics="accuracy", weight="_w", **ROWS
        ).select("g", "metric", "value")

    return _mod("bootstrap").bootstrap_rows(
        d,
        statistic,
        n_resamples=15,
        strata="g",
        progress=False,
        **({} if seed is None else {"seed": seed}),
    )


BootFn = Callable[[Data, int | None, str | None], Any]
BOOTSTRAPS = [
    pytest.param(
        f,
        id=f.__name__.lstrip("_"),
        marks=pytest.mark.skipif(
            importlib.util.find_spec("polars_fairmetrics.bootstrap") is None,
            reason="capability 'bootstrap' not merged on this branch",
        ),
    )
    for f in (_boot_metrics, _boot_between, _boot_metrics_rows, _boot_rows)
]


@pytest.mark.parametrize("boot", BOOTSTRAPS)
@given(
    df=frames(min_rows=5),
    seed=st.one_of(st.none(), st.integers(0, 2**32 - 1)),
    weight=st.sampled_from([None, "w"]),
)
@settings(max_examples=max(5, EXAMPLES // 4), deadline=None)
def test_fixed_seed_gives_identical_intervals(
    boot: BootFn, df: pl.DataFrame, seed: int | None, weight: str | None
) -> None:
    """Same seed (or none given: the default), same intervals: on a second call, and from a
    LazyFrame on either engine."""
    first = _collect(boot(df, seed, weight))
    cols = [c for c in _BOOT_COLS if c in first.columns]
    assert first.height > 0 and "n_defined" in cols
    assert_frame_equal(first, _collect(boot(df, seed, weight)), check_exact=True)
    lazy = boot(df.lazy(), seed, weight)
    for engine in ("in-memory", "streaming"):
        assert_frame_equal(first, _collect(lazy, engine), check_exact=True)


@pytest.mark.parametrize("boot", BOOTSTRAPS)
def test_the_seed_matters(boot: BootFn) -> None:
    """Guard against a seed that is ignored: two seeds give different intervals."""
    rng = np.random.default_rng(3)
    n = 400
    df = pl.DataFrame(
        {
            "g": rng.choice(["a", "b"], n).tolist(),
            "y": (rng.random(n) < 0.5).astype(np.int64),
            "p": (rng.random(n) < 0.5).astype(np.int64),
        }
    )
    one, two = _collect(boot(df, 1, None)), _collect(boot(df, 2, None))
    lo, hi = (
        ("ci_low", "ci_high")
        if "ci_low" in one.columns
        else ("difference_ci_low", "difference_ci_high")
    )
    est = "value" if "value" in one.columns else "difference"
    assert_frame_equal(one.select(est), two.select(est))  # the estimate is fixed
    assert not one.select(lo, hi).equals(two.select(lo, hi))


_SEED_SCRIPT = """
import sys
import numpy as np, polars as pl
sys.path.insert(0, {root!r})
sys.path.insert(0, {tests!r})
from test_invariances import _boot_metrics, _boot_rows, _collect
rng = np.random.default_rng(11)
n = 20_000
df = pl.DataFrame({{
    "g": rng.choice(["a", "b", "c"], n), "y": (rng.random(n) < 0.3).astype(np.int64),
    "p": (rng.random(n) < 0.4).astype(np.int64), "w": rng.integers(1, 5, n) / 2,
}})
_collect(_boot_metrics(df.lazy(), 5, "w"), "streaming").write_parquet({out!r} + "/metrics.parquet")
_boot_rows(df.lazy(), 5, "w").write_parquet({out!r} + "/rows.parquet")
print(pl.thread_pool_size())
"""


@pytest.mark.skipif(
    importlib.util.find_spec("polars_fairmetrics.bootstrap") is None,
    reason="capability 'bootstrap' not merged on this branch",
)
def test_fixed_seed_independent_of_thread_count(tmp_path: Path) -> None:
    """20,000 weighted rows (weights multiples of 0.5: exact sums), both engines' intervals
    with one thread and with the default pool: identical."""
    sizes = {}
    for threads in ("1", "default"):
        out = tmp_path / threads
        out.mkdir()
        env = dict(os.environ)
        env.pop("POLARS_MAX_THREADS", None)
        if threads == "1":
            env["POLARS_MAX_THREADS"] = "1"
        script = _SEED_SCRIPT.format(root=str(ROOT), tests=str(ROOT / "tests"), out=str(out))
        proc = subprocess.run(
            [sys.executable, "-c", script],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        sizes[threads] = int(proc.stdout.strip().splitlines()[-1])
    assert sizes["1"] == 1
    for name in ("metrics", "rows"):
        assert_frame_equal(
            pl.read_parquet(tmp_path / "1" / f"{name}.parquet"),
            pl.read_parquet(tmp_path / "default" / f"{name}.parquet"),
            check_exact=True,
        )
