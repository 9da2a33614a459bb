"""Coverage study: how often do the package's 95 % bootstrap intervals contain the truth?

For each scenario, ``--sims`` data sets are drawn from a known population; each gets B bootstrap
replicates by the count engine (:func:`polars_fairmetrics.resample_counts`), and every interval
kind the package prints is computed by the public functions (``metrics_from_counts``,
``disparities``, ``fairness_criteria``, ``between_groups`` + ``with_intervals``) with every
method (percentile, basic, BCa; max-t for the non-smooth statistics, whatever the method). The
truth of each statistic is the same function evaluated on the population's expected cell counts.

Data sets are simulated at the cell level (a multinomial draw of the group × label × prediction
cells, exactly what drawing rows gives); weighted scenarios draw rows and per-row weights, then
sum the weights and their squares per cell. Many data sets are processed in one call: each is
an ``attribute`` partition of one count table (resampled independently, each its own stream).

Coverage counts only the intervals given; intervals withdrawn (null, with a ``ci_note``) are
counted apart, with the share of data sets where it happened. An interval kind below 93 % in
any scenario must be fixed or withdrawn.

Writes ``docs/coverage.md``. Run (the machine is shared: nice, small first)::

    nice -n 19 python benchmarks/coverage_study.py --sims 100 --resamples 300 --out /tmp/c.md
    nice -n 19 python benchmarks/coverage_study.py            # 1000 data sets, B = 1000
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars_fairmetrics as pfm  # noqa: E402
import polars_fairmetrics.bootstrap as _bootstrap  # noqa: E402
from polars_fairmetrics.bootstrap import MIN_DEFINED_SHARE, WEIGHTED_MIN_ESS  # noqa: E402

LEVEL = 0.95
METRICS = [
    "true_positive_rate",
    "false_positive_rate",
    "selection_rate",
    "positive_predictive_value",
    "accuracy",
]
CRITERIA = [
    "statistical_parity_difference",
    "disparate_impact",
    "equal_opportunity_difference",
    "predictive_equality_difference",
    "false_negative_rate_difference",
    "equalized_odds_difference",
]
METHODS = ("percentile", "basic", "bca")
SCALE = 10**12  # population "counts": expected cell shares × SCALE


@dataclass(frozen=True)
class Group:
    share: float  # share of the population
    base_rate: float  # P(y = 1)
    tpr: float  # P(ŷ = 1 | y = 1)
    fpr: float  # P(ŷ = 1 | y = 0)

    def cells(self) -> np.ndarray[Any, Any]:
        """P(tp, fp, tn, fn | group)."""
        b = self.base_rate
        return np.array(
            [b * self.tpr, (1 - b) * self.fpr, (1 - b) * (1 - self.fpr), b * (1 - self.tpr)]
        )


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    n: int  # rows per data set
    groups: dict[str, Group]
    weight_sigma: float | None = None  # log-normal weights: log w ~ N(mu_cell, sigma)
    weight_mu: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # per tp, fp, tn, fn
    row_engine: bool = True  # weighted: also the exact row bootstrap (cost grows with the rows)
    notes: list[str] = field(default_factory=list)


SCENARIOS = [
    Scenario(
        "equal",
        "2 groups of ≈ 500, identical rates (every true gap 0, every ratio 1)",
        1000,
        {"a": Group(0.5, 0.3, 0.7, 0.2), "b": Group(0.5, 0.3, 0.7, 0.2)},
    ),
    Scenario(
        "gap",
        "4 groups (40/30/20/10 %) of 2000 rows, two of them tied, real gaps elsewhere",
        2000,
        {
            "a": Group(0.4, 0.3, 0.75, 0.2),
            "b": Group(0.3, 0.3, 0.75, 0.2),
            "c": Group(0.2, 0.4, 0.6, 0.3),
            "d": Group(0.1, 0.5, 0.8, 0.1),
        },
    ),
    Scenario(
        "small",
        "3 groups of ≈ 30 rows (90 in all)",
        90,
        {
            "a": Group(1 / 3, 0.4, 0.7, 0.2),
            "b": Group(1 / 3, 0.4, 0.6, 0.3),
            "c": Group(1 / 3, 0.5, 0.7, 0.2),
        },
    ),
    Scenario(
        "rare",
        "2 groups of ≈ 2500, base rate 1 % (≈ 25 positives per group)",
        5000,
        {"a": Group(0.5, 0.01, 0.7, 0.05), "b": Group(0.5, 0.01, 0.6, 0.05)},
    ),
    Scenario(
        "weighted",
        "2 groups of ≈ 500, heavy log-normal weights (σ = 1.5), heavier on positives",
        1000,
        {"a": Group(0.5, 0.3, 0.7, 0.2), "b": Group(0.5, 0.3, 0.6, 0.25)},
        weight_sigma=1.5,
        weight_mu=(0.5, 0.0, 0.0, 0.5),
    ),
    Scenario(
        "weighted-large",
        "the *weighted* population with 2 groups of ≈ 2000 (count engine only): more "
        "effective rows for the same weights",
        4000,
        {"a": Group(0.5, 0.3, 0.7, 0.2), "b": Group(0.5, 0.3, 0.6, 0.25)},
        weight_sigma=1.5,
        weight_mu=(0.5, 0.0, 0.0, 0.5),
        row_engine=False,
    ),
]


# ---------------------------------------------------------------------------------------------
# data sets and the truth
# ---------------------------------------------------------------------------------------------


def population(sc: Scenario) -> pl.DataFrame:
    """Expected cell counts (× SCALE): the population the truth is computed on."""
    rows = []
    for g, grp in sc.groups.items():
        p = grp.share * grp.cells()
        row: dict[str, Any] = {"attribute": "truth", "g": g}
        row.update(
            {c: int(np.rint(v * SCALE)) for c, v in zip(("tp", "fp", "tn", "fn"), p, strict=True)}
        )
        if sc.weight_sigma is not None:
            mean_w = np.exp(np.array(sc.weight_mu) + sc.weight_sigma**2 / 2)
            row.update(
                {
                    f"{c}_w": float(v * m * SCALE)
                    for c, v, m in zip(("tp", "fp", "tn", "fn"), p, mean_w, strict=True)
                }
            )
        rows.append(row)
    return finish_counts(pl.DataFrame(rows), weighted=sc.weight_sigma is not None)


def finish_counts(t: pl.DataFrame, *, weighted: bool) -> pl.DataFrame:
    t = t.with_columns(
        pl.sum_horizontal("tp", "fp", "tn", "fn").alias("n"), pl.lit(0, pl.Int64).alias("n_null")
    )
    cols = ["attribute", "g", "tp", "fp", "tn", "fn", "n"]
    if weighted:
        t = t.with_columns(pl.sum_horizontal("tp_w", "fp_w", "tn_w", "fn_w").alias("n_w"))
        cols += ["tp_w", "fp_w", "tn_w", "fn_w", "n_w"]
        if "tp_w2" in t.columns:
            cols += ["tp_w2", "fp_w2", "tn_w2", "fn_w2"]
    cols.append("n_null")
    return t.select(cols).with_columns(pl.col("tp", "fp", "tn", "fn", "n", "n_null").cast(pl.Int64))


@dataclass
class Rows:
    """The rows of weighted data sets: data set, cell (group × 4 + tp/fp/tn/fn) and weight."""

    sim: np.ndarray[Any, Any]
    cell: np.ndarray[Any, Any]
    weight: np.ndarray[Any, Any]


def datasets(
    sc: Scenario, first: int, count: int, rng: np.random.Generator
) -> tuple[pl.DataFrame, Rows | None]:
    """``count`` simulated data sets as attribute partitions ``s<first>`` … of a count table
    (and, weighted, their rows)."""
    names = list(sc.groups)
    probs = np.concatenate([sc.groups[g].share * sc.groups[g].cells() for g in names])
    probs = probs / probs.sum()
    cells = rng.multinomial(sc.n, probs, size=count).reshape(count, len(names), 4)
    data: dict[str, Any] = {
        "attribute": np.repeat(sim_names(first, count), len(names)),
        "g": np.tile(names, count),
    }
    for j, c in enumerate(("tp", "fp", "tn", "fn")):
        data[c] = cells[:, :, j].reshape(-1)
    rows = None
    if sc.weight_sigma is not None:
        flat = cells.reshape(-1)  # (sim, group, cell)
        owner = np.repeat(np.arange(flat.size), flat)
        mu = np.tile(np.array(sc.weight_mu), count * len(names))[owner]
        w = np.exp(rng.normal(mu, sc.weight_sigma))
        sums = np.bincount(owner, weights=w, minlength=flat.size).reshape(-1, 4)
        squares = np.bincount(owner, weights=w * w, minlength=flat.size).reshape(-1, 4)
        for j, c in enumerate(("tp", "fp", "tn", "fn")):
            data[f"{c}_w"] = sums[:, j]
            data[f"{c}_w2"] = squares[:, j]
        per_sim = len(names) * 4
        rows = Rows(owner // per_sim, owner % per_sim, w)
    return finish_counts(pl.DataFrame(data), weighted=sc.weight_sigma is not None), rows


def sim_names(first: int, count: int) -> list[str]:
    return [f"s{first + i:05d}" for i in range(count)]


def row_replicates(
    sc: Scenario, rows: Rows, first: int, count: int, resamples: int, rng: np.random.Generator
) -> pl.DataFrame:
    """The exact row bootstrap of weighted data sets (the row engine's resampling, in numpy):
    each replicate draws every data set's rows with replacement and sums counts and weights."""
    names = list(sc.groups)
    per_sim = len(names) * 4
    frames = []
    for i, name in enumerate(sim_names(first, count)):
        mine = np.flatnonzero(rows.sim == i)
        cell, w = rows.cell[mine], rows.weight[mine]
        idx = rng.integers(0, mine.size, size=(resamples, mine.size))
        key = (np.arange(resamples)[:, None] * per_sim + cell[idx]).reshape(-1)
        n = np.bincount(key, minlength=resamples * per_sim).reshape(resamples, len(names), 4)
        sw = np.bincount(key, weights=w[idx].reshape(-1), minlength=resamples * per_sim)
        sw = sw.reshape(resamples, len(names), 4)
        data: dict[str, Any] = {
            "attribute": name,
            "g": np.tile(names, resamples),
            "replicate": np.repeat(np.arange(1, resamples + 1), len(names)),
        }
        for j, c in enumerate(("tp", "fp", "tn", "fn")):
            data[c] = n[:, :, j].reshape(-1)
            data[f"{c}_w"] = sw[:, :, j].reshape(-1)
        frames.append(pl.DataFrame(data))
    t = pl.concat(frames).with_columns(
        pl.sum_horizontal("tp", "fp", "tn", "fn").alias("n"),
        pl.sum_horizontal("tp_w", "fp_w", "tn_w", "fn_w").alias("n_w"),
        pl.lit(0, pl.Int64).alias("n_null"),
    )
    return t.with_columns(pl.col("tp", "fp", "tn", "fn", "n").cast(pl.Int64))


# ---------------------------------------------------------------------------------------------
# interval kinds
# ---------------------------------------------------------------------------------------------

Table = Callable[[pl.DataFrame], pl.DataFrame]


def kinds() -> list[tuple[str, Table, list[str], bool]]:
    """(kind, function of a count table, quantities, needs the count table as replicates)."""
    return [
        ("metric", lambda t: pfm.metrics_from_counts(t, metrics=METRICS), ["value"], False),
        (
            "disparity",
            lambda t: pfm.disparities(t, metrics=METRICS, reference="rest"),
            ["difference", "ratio"],
            False,
        ),
        (
            "criterion",
            lambda t: pfm.fairness_criteria(t, criteria=CRITERIA, reference="rest"),
            ["value"],
            False,
        ),
        (
            "between",
            lambda t: pfm.between_groups(t, metrics=METRICS),
            ["difference", "ratio"],
            True,
        ),
    ]


_CI = {
    "value": ("ci_low", "ci_high"),
    "difference": ("difference_ci_low", "difference_ci_high"),
    "ratio": ("ratio_ci_low", "ratio_ci_high"),
}


def effective_sizes(point: pl.DataFrame, counts: pl.DataFrame, on: list[str]) -> pl.DataFrame:
    """The package's effective sample size behind each interval of ``point`` (one column per
    quantity), keyed by data set and statistic."""
    between = "value" not in point.columns
    ess = _bootstrap._effective_sizes(point, counts, between)
    keyed = point.select("attribute", *on)
    if ess is None:
        return keyed
    return keyed.with_columns(
        *[pl.Series(f"_ess_{q}", v, dtype=pl.Float64, nan_to_null=True) for q, v in ess.items()]
    )


def without_ess_rule(
    point: pl.DataFrame, replicates: pl.DataFrame, method: str, counts: pl.DataFrame
) -> pl.DataFrame:
    """The intervals the bootstrap would give with no effective-sample-size rule (the
    diagnostic that sets :data:`WEIGHTED_MIN_ESS`)."""
    saved = _bootstrap.WEIGHTED_MIN_ESS
    _bootstrap.WEIGHTED_MIN_ESS = 0
    try:
        return pfm.with_intervals(point, replicates, method=method, level=LEVEL, counts=counts)  # type: ignore[arg-type]
    finally:
        _bootstrap.WEIGHTED_MIN_ESS = saved


def score(
    out: pl.DataFrame,
    truth: pl.DataFrame,
    quantity: str,
    on: list[str],
    ess: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One row per interval: its statistic, whether it was given and whether it covers (and,
    weighted, its effective sample size)."""
    lo, hi = _CI[quantity]
    t = truth.select(*on, pl.col(quantity).alias("_truth"))
    joined = out.join(t, on=on, how="left", nulls_equal=True)
    col = f"_ess_{quantity}"
    if ess is not None and col in ess.columns:
        joined = joined.join(
            ess.select("attribute", *on, pl.col(col).alias("ess")),
            on=["attribute", *on],
            how="left",
            nulls_equal=True,
        )
    else:
        joined = joined.with_columns(pl.lit(None, dtype=pl.Float64).alias("ess"))
    name = (
        pl.col("metric")
        if quantity == "value"
        else pl.concat_str(pl.col("metric"), pl.lit(f" ({quantity})"))
    )
    return joined.select(
        name.alias("statistic"),
        pl.col("ci_method").alias("method"),
        pl.col("_truth"),
        pl.col(lo).is_not_null().alias("given"),
        ((pl.col(lo) <= pl.col("_truth") + 1e-12) & (pl.col("_truth") - 1e-12 <= pl.col(hi))).alias(
            "covered"
        ),
        (pl.col(hi) - pl.col(lo)).alias("width"),
        pl.col(quantity).is_null().alias("undefined"),
        pl.col("ci_note"),
        pl.col("ess"),
    ).filter(pl.col("_truth").is_not_null() & pl.col("_truth").is_finite())


def run_scenario(
    sc: Scenario, sims: int, resamples: int, chunk: int, seed: int
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The scored intervals as printed, and (weighted scenarios) the intervals the bootstrap
    would give without the effective-sample-size rule, with their effective sizes."""
    rng = np.random.default_rng(seed)
    truth_counts = population(sc)
    results = []
    diagnostic = []
    for first in range(0, sims, chunk):
        count = min(chunk, sims - first)
        counts, rows = datasets(sc, first, count, rng)
        reps = pfm.resample_counts(counts, n_resamples=resamples, seed=seed + first, jackknife=True)
        engines = [("counts", reps)]
        if rows is not None and sc.row_engine:
            engines.append(("rows", row_replicates(sc, rows, first, count, resamples, rng)))
        for engine, replicate_counts in engines:
            label = sc.name if engine == "counts" else f"{sc.name} (rows)"
            for kind, fn, quantities, needs_counts in kinds():
                point = fn(counts)
                replicates = replicate_counts if needs_counts else fn(replicate_counts)
                truth = fn(truth_counts).drop("attribute")
                on = ["metric"] if kind == "between" else ["g", "metric"]
                methods = ["percentile"] if needs_counts else list(METHODS)
                if engine == "rows" and "bca" in methods:
                    methods.remove("bca")  # the numpy row bootstrap has no jackknife tables
                ess = effective_sizes(point, counts, on) if sc.weight_sigma is not None else None
                for method in methods:
                    out = pfm.with_intervals(
                        point, replicates, method=method, level=LEVEL, counts=counts
                    )
                    raw = (
                        without_ess_rule(point, replicates, method, counts)
                        if ess is not None
                        else None
                    )
                    # a max-t interval does not depend on the method asked: count it once
                    keep = (pl.col("method") != "max-t") | (pl.col("asked") == "percentile")
                    for q in quantities:
                        tags = [
                            pl.lit(kind).alias("kind"),
                            pl.lit(label).alias("scenario"),
                            pl.lit(method).alias("asked"),
                        ]
                        part = score(out, truth, q, on, ess).with_columns(tags)
                        results.append(part.filter(keep).drop("asked"))
                        if raw is not None:
                            part = score(raw, truth, q, on, ess).with_columns(tags)
                            diagnostic.append(part.filter(keep).drop("asked"))
    scored = pl.concat(results, how="vertical_relaxed")
    raw_scored = pl.concat(diagnostic, how="vertical_relaxed") if diagnostic else scored.clear()
    return scored, raw_scored


# ---------------------------------------------------------------------------------------------
# the page
# ---------------------------------------------------------------------------------------------


def summarize(scored: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    return (
        scored.group_by(by, maintain_order=True)
        .agg(
            pl.len().alias("intervals"),
            pl.col("given").sum().alias("given"),
            (pl.col("covered").filter(pl.col("given")).mean() * 100).alias("coverage"),
            (pl.col("given").not_().mean() * 100).alias("withdrawn"),
            pl.col("width").filter(pl.col("given")).median().alias("median_width"),
        )
        .sort(by)
    )


def _fmt(v: Any, spec: str) -> str:
    return "—" if v is None else format(v, spec)


ESS_BINS = [10, 20, 30, 50, 75, 100, 150, 200, 300]
"""Edges of the effective-sample-size classes of the diagnostic table."""


CANDIDATES = [0, 50, 100, 150, 200, 300]
"""Thresholds of effective sample size compared in the threshold table."""


def threshold_table(raw: pl.DataFrame) -> pl.DataFrame:
    """For each candidate threshold and weighted scenario: the percentile and BCa intervals it
    would keep, the lowest coverage of a kind × method among them, and the share withheld."""
    smooth = raw.filter(pl.col("method") != "max-t")
    given = smooth.filter(pl.col("given") & pl.col("ess").is_not_null())
    rows = []
    for t in CANDIDATES:
        kept = given.filter(pl.col("ess") >= t)
        worst = (
            kept.group_by("scenario", "kind", "method")
            .agg(pl.len().alias("n"), (pl.col("covered").mean() * 100).alias("coverage"))
            .filter(pl.col("n") >= 100)  # a kind with a handful of intervals has no rate
            .group_by("scenario")
            .agg(pl.col("coverage").min().alias("lowest"))
        )
        share = given.group_by("scenario").agg(
            ((pl.col("ess") < t).mean() * 100).alias("withheld"),
            (pl.col("ess") >= t).sum().alias("kept"),
        )
        rows.append(
            share.join(worst, on="scenario", how="left").with_columns(
                pl.lit(t, dtype=pl.Int64).alias("threshold")
            )
        )
    return pl.concat(rows).sort("threshold", "scenario")


def ess_table(raw: pl.DataFrame) -> pl.DataFrame:
    """Coverage of the weighted intervals without the effective-sample-size rule, by class of
    effective sample size and method (every weighted scenario, engine and kind pooled)."""
    labels = [f"< {ESS_BINS[0]}"]
    labels += [f"{a}–{b}" for a, b in itertools.pairwise(ESS_BINS)]
    labels.append(f"≥ {ESS_BINS[-1]}")
    given = raw.filter(pl.col("given") & pl.col("ess").is_not_null())
    position = np.searchsorted(np.array(ESS_BINS, dtype=np.float64), given["ess"], side="right")
    return (
        given.with_columns(
            pl.Series("_class", position, dtype=pl.Int64),
            pl.Series("ess_class", [labels[i] for i in position], dtype=pl.String),
        )
        .group_by("_class", "ess_class", "method")
        .agg(
            pl.len().alias("intervals"),
            (pl.col("covered").mean() * 100).alias("coverage"),
            pl.col("width").median().alias("median_width"),
        )
        .sort("_class", "method")
    )


def render(
    scored: pl.DataFrame, raw: pl.DataFrame, sims: int, resamples: int, seconds: float
) -> str:
    kinds_table = summarize(scored, ["scenario", "kind", "method"])
    lines = [
        "# Coverage of the bootstrap intervals",
        "",
        "Generated by `benchmarks/coverage_study.py` (do not edit by hand): "
        f"{sims} simulated data sets per scenario, B = {resamples} resamples each (count engine), "
        f"nominal level {LEVEL:.0%}; {seconds / 60:.0f} min on this machine. Command:",
        "",
        "    nice -n 19 python benchmarks/coverage_study.py"
        + (f" --sims {sims} --resamples {resamples}" if (sims, resamples) != (1000, 1000) else ""),
        "",
        "Coverage is the share of the intervals *given* that contain the true value (the same "
        "function on the population's expected counts); *withdrawn* is the share of intervals "
        "the package did not give (null, with the reason in `ci_note`: undefined on the data, "
        f"defined in fewer than {MIN_DEFINED_SHARE:.0%} of the resamples, no variation across "
        "resamples, a basic interval on weighted data or on few rows, or weighted data with "
        f"a Kish effective sample size below {WEIGHTED_MIN_ESS}: see below). With 1000 data "
        "sets a coverage's Monte Carlo standard error is about 0.7 points per statistic; rows "
        "pool several statistics (metrics × groups).",
        "",
        "Scenarios:",
        "",
    ]
    for sc in SCENARIOS:
        lines.append(f"- **{sc.name}**: {sc.description}.")
    lines += [
        "",
        "Kinds: *metric* — each group's metric (true/false positive rate, selection rate, "
        "precision, accuracy); *disparity* — its difference and ratio against the rest of the "
        "population; *criterion* — the named criteria against the rest (statistical parity, "
        "disparate impact, equal opportunity, predictive equality, FNR difference, equalized "
        "odds: max-t); *between* — max − min and min / max over the groups (max-t). The "
        "weighted scenarios resample weighted sums from their per-cell sums of squares "
        "(count engine); *weighted (rows)* is the exact row bootstrap of the same data sets.",
        "",
        "## By scenario, kind and method",
        "",
        "| scenario | kind | method | intervals | coverage % | withdrawn % | median width |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for r in kinds_table.iter_rows(named=True):
        flag = " ⚠" if r["coverage"] is not None and r["coverage"] < 93 else ""
        lines.append(
            f"| {r['scenario']} | {r['kind']} | {r['method']} | {r['intervals']} | "
            f"{_fmt(r['coverage'], '.1f')}{flag} | {_fmt(r['withdrawn'], '.1f')} | "
            f"{_fmt(r['median_width'], '.4f')} |"
        )
    detail = summarize(scored, ["scenario", "kind", "method", "statistic"])
    low = detail.filter(pl.col("coverage") < 93)
    lines += ["", "## Statistics below 93 %", ""]
    if low.height == 0:
        lines.append("None: every interval given covers at ≥ 93 % in every scenario.")
    else:
        lines += [
            "| scenario | kind | method | statistic | intervals | coverage % | withdrawn % |",
            "|---|---|---|---|---:|---:|---:|",
        ]
        for r in low.iter_rows(named=True):
            lines.append(
                f"| {r['scenario']} | {r['kind']} | {r['method']} | {r['statistic']} | "
                f"{r['intervals']} | {_fmt(r['coverage'], '.1f')} | {_fmt(r['withdrawn'], '.1f')} |"
            )
    thresholds = threshold_table(raw) if raw.height else None
    chosen: Any = "no weighted scenario ran"
    max_ess: Any = "—"
    if thresholds is not None:
        ok = thresholds.group_by("threshold").agg(
            (pl.col("lowest").is_null() | (pl.col("lowest") >= 93)).all().alias("ok")
        )
        passing = ok.filter(pl.col("ok"))["threshold"]
        chosen = int(passing.min()) if passing.len() else "none of the candidates"  # type: ignore[arg-type]
        heavy = raw.filter(pl.col("scenario") == "weighted")["ess"].drop_nulls().to_numpy()
        max_ess = f"{float(heavy.max()):.0f}" if heavy.size else "—"
    lines += [
        "",
        "## Weighted data: coverage by effective sample size",
        "",
        "On weighted data the bootstrap sees the rows, but the estimate's precision is that of "
        "fewer rows: Kish's effective sample size n_eff = (Σ w)² / Σ w² of the rows in the "
        "statistic's denominator (the smallest over the groups it compares: the group and its "
        "reference, or every group for between-groups). With few effective rows a handful of "
        "heavy rows decides the estimate, and the resamples, which redraw those same rows, "
        "understate how far it can be from the truth. The first table scores every interval "
        "the weighted scenarios would give *without* a rule (both engines, every kind; basic "
        "intervals are withheld on weighted data whatever the size), by class of n_eff; the "
        "second, for candidate thresholds, what each would keep. Read them knowing that the "
        "sample's n_eff is a weak guide under heavy tails: its sum of squares misses the heavy "
        "weights the sample did not draw, so n_eff is overestimated exactly when the bootstrap "
        "is too narrow. Coverage is lowest at small n_eff but does not climb steadily above "
        "it, and within the heavy-tailed *weighted* scenario the intervals under-cover at "
        f"every n_eff it reaches (at most {max_ess}). So the threshold is high: the package "
        f"withholds percentile and BCa intervals on weighted data with n_eff < "
        f"{WEIGHTED_MIN_ESS} (`WEIGHTED_MIN_ESS`; null with the reason in `ci_note`), the "
        "smallest candidate with every kind it keeps at ≥ 93 % in every weighted scenario "
        f"(from the second table: {chosen}). In effect it withholds the heavy-tailed scenario "
        "as a whole and keeps the larger one's intervals with the most effective rows. Max-t "
        "intervals (between groups, equalized odds) are kept: they cover ≥ 93 % in every "
        "class. Equal weights (n_eff = n: the unweighted bootstrap) and stratum weights "
        "recomputed per replicate (`reweight_by=`) are not concerned.",
        "",
        "| n_eff | method | intervals | coverage % | median width |",
        "|---|---|---:|---:|---:|",
    ]
    if raw.height:
        for r in ess_table(raw).iter_rows(named=True):
            flag = " ⚠" if r["coverage"] is not None and r["coverage"] < 93 else ""
            lines.append(
                f"| {r['ess_class']} | {r['method']} | {r['intervals']} | "
                f"{_fmt(r['coverage'], '.1f')}{flag} | {_fmt(r['median_width'], '.4f')} |"
            )
        lines += [
            "",
            "The threshold, from the candidates: for each, the percentile and BCa intervals "
            "it keeps in each weighted scenario, the lowest coverage of a kind × method among "
            "them (kinds with at least 100 intervals kept) and the share withheld.",
            "",
            "| threshold | scenario | kept | lowest kind coverage % | withheld % |",
            "|---:|---|---:|---:|---:|",
        ]
        assert thresholds is not None
        for r in thresholds.iter_rows(named=True):
            flag = " ⚠" if r["lowest"] is not None and r["lowest"] < 93 else ""
            lines.append(
                f"| {r['threshold']} | {r['scenario']} | {r['kept']} | "
                f"{_fmt(r['lowest'], '.1f')}{flag} | {_fmt(r['withheld'], '.1f')} |"
            )
    notes = (
        scored.filter(pl.col("ci_note").is_not_null())
        # one row per reason: the counts it quotes (support, effective size, resamples
        # defined) become "…"
        .with_columns(
            pl.col("ci_note")
            .str.replace_all(r"(support|size) [0-9]+ <", "$1 … <")
            .str.replace_all(r"only [0-9]+ of", "only … of")
        )
        .group_by("scenario", "ci_note")
        .agg(pl.len().alias("n"))
        .sort("scenario", "n", descending=[False, True])
    )
    lines += [
        "",
        "## Why intervals were withdrawn",
        "",
        "| scenario | note | intervals |",
        "|---|---|---:|",
    ]
    for r in notes.iter_rows(named=True):
        lines.append(f"| {r['scenario']} | {r['ci_note']} | {r['n']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sims", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--chunk", type=int, default=50)
    parser.add_argument("--scenarios", default=",".join(s.name for s in SCENARIOS))
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "coverage.md")
    parser.add_argument(
        "--raw",
        type=Path,
        default=None,
        help="also write the weighted intervals without the effective-size rule (parquet)",
    )
    args = parser.parse_args()
    chosen = [s for s in SCENARIOS if s.name in args.scenarios.split(",")]
    start = time.perf_counter()
    frames, raws = [], []
    for i, sc in enumerate(chosen):
        t0 = time.perf_counter()
        scored_sc, raw_sc = run_scenario(
            sc, args.sims, args.resamples, args.chunk, args.seed + 1000 * i
        )
        frames.append(scored_sc)
        raws.append(raw_sc)
        print(f"{sc.name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    scored = pl.concat(frames, how="vertical_relaxed")
    raw = pl.concat(raws, how="vertical_relaxed")
    if args.raw is not None:
        raw.write_parquet(args.raw)
    args.out.write_text(
        render(scored, raw, args.sims, args.resamples, time.perf_counter() - start),
        encoding="utf-8",
    )
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
