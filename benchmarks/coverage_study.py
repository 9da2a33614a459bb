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
from typing import Any, Literal

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars_fairmetrics as pfm  # noqa: E402
import polars_fairmetrics.bootstrap as _bootstrap  # noqa: E402
from polars_fairmetrics.bootstrap import MIN_DEFINED_SHARE, WEIGHTED_MIN_ESS  # noqa: E402
from polars_fairmetrics.curves import curve_summaries  # noqa: E402
from polars_fairmetrics.ensemble import ensemble_sample_metrics  # noqa: E402
from polars_fairmetrics.report.extensions import (  # noqa: E402
    CURVE_MIN_CLASS,
    CURVE_PR_MIN_POSITIVES,
    STABILITY_MAX_MEAN_SKEW,
    stability_skewness,
    withhold_curve_intervals,
    withhold_stability_intervals,
)
from polars_fairmetrics.report.intervals import (  # noqa: E402
    DEPLOYMENT_PERCENTILE_MIN_SUPPORT,
    withhold_deployment_intervals,
)
from polars_fairmetrics.report.options import (  # noqa: E402
    DEPLOYMENT_AUDIT_METRICS,
    STABILITY_METRICS,
)

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
Method = Literal["percentile", "basic", "bca"]
METHODS: tuple[Method, ...] = ("percentile", "basic", "bca")
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
    deploy_rate: float | None = None  # deployment positive rate of the *deployment* kind
    stability_n: int | None = None  # rows per data set of the *stability* kind (default n)
    extra: tuple[str, ...] = ()  # kinds beyond the count table: "curve", "stability"
    notes: list[str] = field(default_factory=list)


SCENARIOS = [
    Scenario(
        "equal",
        "2 groups of ≈ 500, identical rates (every true gap 0, every ratio 1)",
        1000,
        {"a": Group(0.5, 0.3, 0.7, 0.2), "b": Group(0.5, 0.3, 0.7, 0.2)},
        deploy_rate=0.05,
        extra=("curve", "stability"),
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
        deploy_rate=0.05,
        extra=("curve",),
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
        deploy_rate=0.05,
        extra=("curve", "stability"),
    ),
    Scenario(
        "rare",
        "2 groups of ≈ 2500, base rate 1 % (≈ 25 positives per group)",
        5000,
        {"a": Group(0.5, 0.01, 0.7, 0.05), "b": Group(0.5, 0.01, 0.6, 0.05)},
        deploy_rate=0.002,
        stability_n=2000,
        extra=("curve", "stability"),
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


def kinds(sc: Scenario) -> list[tuple[str, Table, list[str], bool]]:
    """(kind, function of a count table, quantities, needs the count table as replicates)."""
    deployment: list[tuple[str, Table, list[str], bool]] = []
    if sc.deploy_rate is not None:
        rate = sc.deploy_rate
        # the audit's deployment section: the deployment module's metrics of the count table,
        # one factor k from the pooled test ratio of each data set (tables._deployment)
        deployment.append(
            (
                "deployment",
                lambda t: pfm.deployment_metrics(
                    t, deploy_positive_rate=rate, by="g", metrics=list(DEPLOYMENT_AUDIT_METRICS)
                ),
                ["value"],
                False,
            )
        )
    return [
        *deployment,
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
            for kind, fn, quantities, needs_counts in kinds(sc):
                point = fn(counts)
                replicates = replicate_counts if needs_counts else fn(replicate_counts)
                truth = fn(truth_counts).drop("attribute")
                on = ["metric"] if kind == "between" else ["g", "metric"]
                methods: list[Method] = ["percentile"] if needs_counts else list(METHODS)
                if engine == "rows" and "bca" in methods:
                    methods.remove("bca")  # the numpy row bootstrap has no jackknife tables
                ess = effective_sizes(point, counts, on) if sc.weight_sigma is not None else None
                for method in methods:
                    out = pfm.with_intervals(
                        point, replicates, method=method, level=LEVEL, counts=counts
                    )
                    if kind == "deployment":  # the audit's rule for its deployment section
                        out = withhold_deployment_intervals(out, method)
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
# kinds beyond the count table: curve summaries and ensemble means
# ---------------------------------------------------------------------------------------------

SCORE_SD = 0.2
"""Standard deviation of the scores within a class (normal, clipped to [0, 1])."""

SCORE_NEGATIVE_MEAN = 0.4
"""Mean score of the negatives; the positives' is higher by half the group's tpr − fpr."""


def score_bins(bins: int, mean: float) -> np.ndarray[Any, Any]:
    """P(score in bin k) for bins [k / bins, (k + 1) / bins) of a clipped normal score."""
    from scipy.stats import norm  # type: ignore[import-untyped]

    edges = np.linspace(0.0, 1.0, bins + 1)
    cdf = norm.cdf((edges - mean) / SCORE_SD)
    p = np.diff(cdf)
    p[0] += cdf[0]
    p[-1] += 1.0 - cdf[-1]
    return np.asarray(p / p.sum())


def curve_cells(sc: Scenario, bins: int) -> np.ndarray[Any, Any]:
    """P(group, label, score bin), shape (groups, 2, bins): label 0 = positive, 1 = negative."""
    out = []
    for grp in sc.groups.values():
        positive = score_bins(bins, SCORE_NEGATIVE_MEAN + 0.5 * (grp.tpr - grp.fpr))
        negative = score_bins(bins, SCORE_NEGATIVE_MEAN)
        out.append(grp.share * np.stack([grp.base_rate * positive, (1 - grp.base_rate) * negative]))
    return np.array(out)


def curve_table(cells: np.ndarray[Any, Any], names: list[str], sims: list[str]) -> pl.DataFrame:
    """The audit's grid curve table (``curve_counts(mode="grid")``: attribute, group, threshold
    from 1 down to 0, counts predicted positive at score ≥ threshold) of cell counts of shape
    (data sets, groups, 2, bins)."""
    count, n_groups, _, bins = cells.shape
    # at threshold j / bins (j = bins … 0) the predicted positives are the bins k ≥ j
    above = np.concatenate(
        [np.zeros((*cells.shape[:3], 1), dtype=cells.dtype), np.cumsum(cells[..., ::-1], axis=3)],
        axis=3,
    )  # (sims, groups, label, bins + 1): threshold 1, 1 − 1/bins, …, 0
    pos, neg = cells[:, :, 0].sum(axis=2), cells[:, :, 1].sum(axis=2)
    tp, fp = above[:, :, 0], above[:, :, 1]
    thresholds = np.linspace(1.0, 0.0, bins + 1)
    return pl.DataFrame(
        {
            "attribute": np.repeat(sims, n_groups * (bins + 1)),
            "g": np.tile(np.repeat(names, bins + 1), count),
            "threshold": np.tile(thresholds, count * n_groups),
            "tp": tp.reshape(-1),
            "fp": fp.reshape(-1),
            "tn": (neg[:, :, None] - fp).reshape(-1),
            "fn": (pos[:, :, None] - tp).reshape(-1),
        }
    ).with_columns(
        pl.col("tp", "fp", "tn", "fn").cast(pl.Int64),
        pl.sum_horizontal("tp", "fp", "tn", "fn").cast(pl.Int64).alias("n"),
        pl.lit(0, pl.Int64).alias("n_null"),
    )


def summaries(table: pl.DataFrame, lead: list[str]) -> pl.DataFrame:
    """The audit's curve summaries (``extensions._curve_summaries``): ``curve_summaries`` with
    trapezoid AUPR, in the long layout."""
    out = curve_summaries(table, aupr_mode="trapezoid")
    return out.select(*lead, "metric", "value", *(["n", "n_null"] if "n" in out.columns else []))


def run_curves(
    sc: Scenario, sims: int, resamples: int, chunk: int, seed: int, bins: int
) -> pl.DataFrame:
    """Curve summaries (ROC AUC, average precision, AUPR) per group: the grid curve table of
    each data set resampled at count level, the summaries of every replicate by the same
    function, as the audit does (``extensions._curve_intervals``)."""
    rng = np.random.default_rng(seed)
    names = list(sc.groups)
    probs = curve_cells(sc, bins)
    truth_cells = np.rint(probs * SCALE).astype(np.int64)[None]
    truth = summaries(curve_table(truth_cells, names, ["truth"]), ["attribute", "g"])
    truth = truth.drop("attribute")
    flat = probs.reshape(-1) / probs.sum()
    results = []
    for first in range(0, sims, chunk):
        count = min(chunk, sims - first)
        cells = rng.multinomial(sc.n, flat, size=count).reshape(count, *probs.shape)
        table = curve_table(cells, names, sim_names(first, count))
        reps = pfm.resample_counts(table, n_resamples=resamples, seed=seed + first, jackknife=True)
        point = summaries(table, ["attribute", "g"])
        replicate = summaries(reps, ["attribute", "g", "replicate"])
        for method in METHODS:
            out = pfm.with_intervals(point, replicate, method=method, level=LEVEL, counts=table)
            out = withhold_curve_intervals(out, table, ["attribute", "g"], method)
            results.append(
                score(out, truth, "value", ["g", "metric"]).with_columns(
                    pl.lit("curve").alias("kind"), pl.lit(sc.name).alias("scenario")
                )
            )
    return pl.concat(results, how="vertical_relaxed")


MODELS = 5
"""Models of the ensemble kind."""

MODEL_NOISE = 0.6
"""Standard deviation of a model's logit around the row's latent logit."""

LATENT_CONCENTRATION = 4.0
"""The row's latent probability ~ Beta(κ b, κ (1 − b)) with b the group's base rate."""

TRUTH_ROWS = 2_000_000
"""Rows per group of the sample the ensemble truth is the mean of."""


def ensemble_rows(
    sc: Scenario, sizes: np.ndarray[Any, Any], rng: np.random.Generator
) -> pl.DataFrame:
    """Per-row ensemble metrics of rows of each group (``sizes``: data sets × groups)."""
    names = list(sc.groups)
    count = sizes.shape[0]
    group = np.repeat(np.tile(np.arange(len(names)), count), sizes.reshape(-1))
    sim = np.repeat(np.arange(count), sizes.sum(axis=1))
    base = np.array([sc.groups[g].base_rate for g in names])[group]
    latent = rng.beta(LATENT_CONCENTRATION * base, LATENT_CONCENTRATION * (1 - base))
    latent = np.clip(latent, 1e-9, 1 - 1e-9)
    logit = np.log(latent / (1 - latent))
    probs = 1 / (1 + np.exp(-(logit[:, None] + rng.normal(0, MODEL_NOISE, (logit.size, MODELS)))))
    models = [f"m{j}" for j in range(MODELS)]
    frame = pl.DataFrame(
        {"sim": sim, "g": np.array(names)[group], **dict(zip(models, probs.T, strict=True))}
    )
    return ensemble_sample_metrics(
        frame, models=models, keep=["sim", "g"], metrics=list(STABILITY_METRICS)
    )


def stability_truth(sc: Scenario, rng: np.random.Generator) -> tuple[pl.DataFrame, float]:
    """The population mean of each per-row metric per group, from :data:`TRUTH_ROWS` rows per
    group, and the largest standard error among them."""
    sums = []
    block = 500_000
    for _ in range(TRUTH_ROWS // block):
        sizes = np.full((1, len(sc.groups)), block)
        rows = ensemble_rows(sc, sizes, rng)
        sums.append(
            rows.unpivot(index="g", on=list(STABILITY_METRICS), variable_name="metric")
            .group_by("g", "metric")
            .agg(
                pl.col("value").sum().alias("s"),
                (pl.col("value") ** 2).sum().alias("s2"),
                pl.col("value").count().alias("k"),
            )
        )
    total = pl.concat(sums).group_by("g", "metric").agg(pl.col("s", "s2", "k").sum())
    total = total.with_columns((pl.col("s") / pl.col("k")).alias("value")).with_columns(
        ((pl.col("s2") / pl.col("k") - pl.col("value") ** 2) / pl.col("k")).sqrt().alias("se")
    )
    return total.select("g", "metric", "value"), float(total["se"].max())  # type: ignore[arg-type]


def run_stability(
    sc: Scenario, sims: int, resamples: int, chunk: int, seed: int
) -> tuple[pl.DataFrame, float]:
    """Ensemble means per group: each group's per-row metrics resampled as rows (group sizes
    fixed) by ``replicate_group_means``, as the audit does (``extensions._stability_intervals``:
    percentile or basic; BCa falls back to percentile there)."""
    rng = np.random.default_rng(seed)
    truth, truth_se = stability_truth(sc, rng)
    names = list(sc.groups)
    shares = np.array([sc.groups[g].share for g in names])
    n = sc.stability_n or sc.n
    results = []
    for first in range(0, sims, chunk):
        count = min(chunk, sims - first)
        sizes = rng.multinomial(n, shares / shares.sum(), size=count)
        rows = ensemble_rows(sc, sizes, rng).with_columns(
            pl.concat_str(pl.lit("s"), (pl.col("sim") + first).cast(pl.String).str.zfill(5)).alias(
                "attribute"
            )
        )
        point = (
            rows.unpivot(
                index=["attribute", "g"], on=list(STABILITY_METRICS), variable_name="metric"
            )
            .group_by("attribute", "g", "metric")
            .agg(pl.col("value").mean(), pl.col("value").count().alias("n"))
            .sort("attribute", "g", "metric")
        )
        shapes = stability_skewness(rows, ["attribute", "g"]).collect()
        reps = _bootstrap.replicate_group_means(
            rows,
            by=["attribute", "g"],
            values=list(STABILITY_METRICS),
            n_resamples=resamples,
            seed=seed + first,
        )
        for method in ("percentile", "basic"):
            out = withhold_stability_intervals(
                pfm.with_intervals(point, reps, method=method, level=LEVEL),
                shapes,
                ["attribute", "g"],
            )
            results.append(
                score(out, truth, "value", ["g", "metric"]).with_columns(
                    pl.lit("stability").alias("kind"), pl.lit(sc.name).alias("scenario")
                )
            )
    return pl.concat(results, how="vertical_relaxed"), truth_se


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


@dataclass
class Extras:
    """What the page says of the kinds beyond the count table."""

    curve_bins: int
    ensemble_resamples: int
    truth_se: dict[str, float] = field(default_factory=dict)  # stability: the truth's error


def render(
    scored: pl.DataFrame,
    raw: pl.DataFrame,
    sims: int,
    resamples: int,
    seconds: float,
    extras: Extras,
) -> str:
    kinds_table = summarize(scored, ["scenario", "kind", "method"])
    lines = [
        "# Coverage of the bootstrap intervals",
        "",
        "Generated by `benchmarks/coverage_study.py` (do not edit by hand): "
        f"{sims} simulated data sets per scenario, B = {resamples} resamples each (count engine; "
        f"B = {extras.ensemble_resamples} for the row bootstrap of the *stability* kind), "
        f"nominal level {LEVEL:.0%}; {seconds / 60:.0f} min on this machine (run under "
        "`nice -n 19` on a shared machine: not a timing). Command:",
        "",
        "    nice -n 19 python benchmarks/coverage_study.py"
        + (f" --sims {sims} --resamples {resamples}" if (sims, resamples) != (1000, 1000) else "")
        + (f" --curve-bins {extras.curve_bins}" if extras.curve_bins != 20 else "")
        + (
            f" --ensemble-resamples {extras.ensemble_resamples}"
            if extras.ensemble_resamples != 500
            else ""
        ),
        "",
        "Coverage is the share of the intervals *given* that contain the true value (the same "
        "function on the population's expected counts); *withdrawn* is the share of intervals "
        "the package did not give (null, with the reason in `ci_note`: undefined on the data, "
        f"defined in fewer than {MIN_DEFINED_SHARE:.0%} of the resamples, no variation across "
        "resamples, a basic interval on weighted data or on few rows, or weighted data with "
        f"a Kish effective sample size below {WEIGHTED_MIN_ESS}: see below; curve summaries "
        f"of a group with fewer than {CURVE_MIN_CLASS} positives or negatives, average "
        f"precision and AUPR of one with fewer than {CURVE_PR_MIN_POSITIVES} positives, and "
        "the basic intervals of curve summaries; ensemble means too skewed for the row "
        "bootstrap, max(|γ|, 1) / √n > "
        f"{STABILITY_MAX_MEAN_SKEW}; percentile intervals of deployment-corrected metrics with "
        f"support below {DEPLOYMENT_PERCENTILE_MIN_SUPPORT}). With 1000 data "
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
        "The kinds of the audit's other sections, as `audit(..., intervals=B)` computes them:",
        "",
        "- *deployment* — the `deployment` section (`deploy_positive_rate=`): precision, NPV, F1 "
        "and accuracy with the negatives scaled by k = (neg/pos in deployment) / (neg/pos in "
        "test), k from each data set's pooled test ratio (`deployment_metrics`, replicates by "
        "the same function of the replicate count table). Deployment rate 5 % (0.2 % in "
        "*rare*); the truth is the same function on the population's expected counts (k "
        "from the population's class ratio).",
        "- *curve* — the `curve_summaries` section (`y_score=`, `curves=True`): ROC AUC, "
        "average precision and AUPR (trapezoid) per group from the grid curve table, its "
        "cells (group × score bin × label) resampled at count level and the summaries of "
        f"every replicate by the same function. Scores are normal (sd {SCORE_SD}, clipped to "
        f"[0, 1]) with mean {SCORE_NEGATIVE_MEAN} for the negatives and higher by half the "
        "group's tpr − fpr for the positives, on a grid of "
        f"{extras.curve_bins} equal bins (`curve_bins={extras.curve_bins}`; the audit's default "
        "is 100: the resampling is the same, the summaries a little coarser). The truth is "
        "the summaries of the population's expected grid table (the binned curve the "
        "estimates estimate).",
        "- *stability* — the `stability` section (`models=`): per-group means of the per-row "
        "ensemble metrics (label stability, jitter, std of the probabilities, aleatoric, "
        f"overall and epistemic uncertainty) of {MODELS} models, each row's group sizes fixed "
        "and its rows resampled by `replicate_group_means` (percentile and basic; the audit "
        "gives percentile for BCa). A row's latent probability is Beta("
        f"{LATENT_CONCENTRATION:g} b, {LATENT_CONCENTRATION:g} (1 − b)) with b the group's base "
        f"rate, each model's logit that one's plus N(0, {MODEL_NOISE}); *rare* has 2000 rows "
        "per data set (latent probabilities near 0: the models rarely disagree). The truth is "
        f"the mean of {TRUTH_ROWS:,} fresh rows per group; its largest standard error ("
        + ", ".join(f"{k}: {v:.1e}" for k, v in extras.truth_se.items())
        + ") is small next to the interval widths below.",
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
            .str.replace_all(r"\b(positives|negatives|n|support)( =)? [0-9]+", "$1$2 …")
            .str.replace_all(r"sqrt\(n\) = [0-9.]+", "sqrt(n) = …")
        )
        .group_by("scenario", "ci_note")
        .agg(pl.len().alias("n"))
        .sort("scenario", "n", "ci_note", descending=[False, True, False])
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
    parser.add_argument(
        "--curve-bins", type=int, default=20, help="grid of the curve kind (curve_bins)"
    )
    parser.add_argument(
        "--ensemble-resamples", type=int, default=500, help="B of the stability kind"
    )
    parser.add_argument(
        "--kinds",
        default="counts,curve,stability",
        help="counts (the count-table kinds), curve, stability",
    )
    args = parser.parse_args()
    chosen = [s for s in SCENARIOS if s.name in args.scenarios.split(",")]
    wanted = args.kinds.split(",")
    start = time.perf_counter()
    frames, raws = [], []
    extras = Extras(args.curve_bins, args.ensemble_resamples)
    for i, sc in enumerate(chosen):
        t0 = time.perf_counter()
        seed = args.seed + 1000 * i
        if "counts" in wanted:
            scored_sc, raw_sc = run_scenario(sc, args.sims, args.resamples, args.chunk, seed)
            frames.append(scored_sc)
            raws.append(raw_sc)
        if "curve" in wanted and "curve" in sc.extra:
            frames.append(
                run_curves(sc, args.sims, args.resamples, args.chunk, seed + 1, extras.curve_bins)
            )
        if "stability" in wanted and "stability" in sc.extra:
            stab, truth_se = run_stability(
                sc, args.sims, extras.ensemble_resamples, args.chunk, seed + 2
            )
            frames.append(stab)
            extras.truth_se[sc.name] = truth_se
        print(f"{sc.name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    scored = pl.concat(frames, how="vertical_relaxed")
    raw = pl.concat(raws, how="vertical_relaxed") if raws else scored.clear()
    if args.raw is not None:
        raw.write_parquet(args.raw)
    args.out.write_text(
        render(scored, raw, args.sims, args.resamples, time.perf_counter() - start, extras),
        encoding="utf-8",
    )
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
