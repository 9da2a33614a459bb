"""Benchmark: bootstrap intervals of every count-based statistic vs the point estimate.

Generates parquet files (4 groups as an Enum, Int8 labels and predictions, a continuous Float32
weight) in a temporary folder and times, side by side in one run:

- floor: one plain Polars ``group_by`` count pass over the files (streaming engine);
- point: the point estimates of every count-based table — one streaming scan to the count
  table, all confusion metrics per group, disparities (difference, ratio) against a named
  reference, every named criterion, between-groups summaries;
- boot B: the same tables with B-resample intervals, the way an audit computes them: the same
  one scan (with ``weight_squares=True`` when weighted), ``resample_counts``, the replicates'
  comparison table once in wide form and the criteria composed from it
  (``report.tables.replicate_tables``), and ``with_intervals`` on each table (max-t intervals
  for between-groups and equalized odds);
- the same, weighted by the continuous weight (count engine: per-cell sums of squares, memory
  independent of the rows);
- fairlearn: ``MetricFrame(..., n_boot=k, ci_quantiles=[0.025, 0.975])`` with 10 metrics on a
  pandas frame in memory, at a size and ``k`` it finishes; its time per replicate is
  extrapolated to B = 1000 for the comparison (said so in the table).

Writes ``docs/benchmarks/bootstrap.md``. Run (the machine is shared: only on a quiet one at
full size)::

    python benchmarks/bench_bootstrap.py --sizes 1e6,1e7,1e8 --resamples 1000,10000
    python benchmarks/bench_bootstrap.py --sizes 1e4 --resamples 100 --repeat 1 --fairlearn-rows 0
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import best_of  # noqa: E402

import polars_fairmetrics as pfm  # noqa: E402
from polars_fairmetrics.bootstrap import _interpolate, _order_statistics, _positions  # noqa: E402
from polars_fairmetrics.disparity import criteria_from_comparisons  # noqa: E402

GROUPS = pl.Enum(["a", "b", "c", "d"])
REFERENCE = "a"


def make_data(n: int, folder: Path, seed: int = 0) -> Path:
    """``n`` rows in parquet files of at most 10 million rows (memory stays flat)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    chunk = 10_000_000
    for i, start in enumerate(range(0, n, chunk)):
        m = min(chunk, n - start)
        g = rng.choice(4, m, p=[0.4, 0.3, 0.2, 0.1]).astype(np.uint8)
        y = rng.random(m) < 0.3
        p = np.where(rng.random(m) < 0.8, y, ~y)
        w = np.exp(rng.normal(0.0, 0.5, m)).astype(np.float32)
        pl.DataFrame(
            {
                "group": pl.Series(np.array(["a", "b", "c", "d"])[g]).cast(GROUPS),
                "y": y.astype(np.int8),
                "pred": p.astype(np.int8),
                "w": w,
            }
        ).write_parquet(folder / f"part-{i:05d}.parquet", row_group_size=1_000_000)
    return folder


def _scan(folder: Path) -> pl.LazyFrame:
    return pl.scan_parquet(folder / "*.parquet")


def floor(folder: Path) -> pl.DataFrame:
    return _scan(folder).group_by(["group", "y", "pred"]).agg(pl.len()).collect(engine="streaming")


def counts_of(folder: Path, weight: str | None, squares: bool) -> pl.DataFrame:
    return pfm.confusion_counts(
        _scan(folder),
        y_true="y",
        y_pred="pred",
        by="group",
        weight=weight,
        weight_squares=squares and weight is not None,
    ).collect(engine="streaming")


def tables(counts: pl.DataFrame, *, wide: bool = False) -> dict[str, pl.DataFrame]:
    """Every count-based table of an audit (the engine's functions; for the replicates, in
    wide form and without between-groups, whose intervals come from the group values: the
    replicates' metrics table)."""
    out = {
        "metrics": pfm.metrics_from_counts(counts, wide=wide),
        "disparities": pfm.disparities(counts, reference=REFERENCE, wide=wide),
        "criteria": pfm.fairness_criteria(counts, reference=REFERENCE, wide=wide),
    }
    if not wide:
        out["between_groups"] = pfm.between_groups(counts)
    return out


def point(folder: Path, weight: str | None = None) -> dict[str, pl.DataFrame]:
    return tables(counts_of(folder, weight, squares=False))


def boot(folder: Path, b: int, weight: str | None = None) -> dict[str, pl.DataFrame]:
    counts = counts_of(folder, weight, squares=True)
    reps = pfm.resample_counts(counts, n_resamples=b)
    observed = tables(counts)
    # the replicates' tables as an audit computes them (report.tables.replicate_tables): the
    # comparison table once, in wide form (metric values, supports, differences, ratios: the
    # metrics', disparities' and between-groups' replicate values), and the criteria composed
    # from it
    wide = pfm.disparities(reps, reference=REFERENCE, wide=True)
    replicated = {
        "metrics": wide,
        "disparities": wide,
        "criteria": criteria_from_comparisons(wide, keys=["group"], wide=True),
        "between_groups": wide,
    }
    return {
        name: pfm.with_intervals(table, replicated[name], counts=counts)
        for name, table in observed.items()
    }


def fairlearn_boot(pdf: object, n_boot: int | None) -> object:
    from fairlearn.metrics import (
        MetricFrame,
        false_negative_rate,
        false_positive_rate,
        selection_rate,
        true_negative_rate,
        true_positive_rate,
    )
    from sklearn.metrics import (
        accuracy_score,
        balanced_accuracy_score,
        f1_score,
        matthews_corrcoef,
        precision_score,
    )

    metrics = {
        "accuracy": accuracy_score,
        "balanced_accuracy": balanced_accuracy_score,
        "tpr": true_positive_rate,
        "fpr": false_positive_rate,
        "tnr": true_negative_rate,
        "fnr": false_negative_rate,
        "precision": precision_score,
        "f1": f1_score,
        "selection_rate": selection_rate,
        "mcc": matthews_corrcoef,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if n_boot is None:
            mf = MetricFrame(
                metrics=metrics,
                y_true=pdf["y"],
                y_pred=pdf["pred"],  # type: ignore[index]
                sensitive_features=pdf["group"],
            )  # type: ignore[index]
            return mf.by_group, mf.difference(), mf.ratio()
        mf = MetricFrame(
            metrics=metrics,
            y_true=pdf["y"],
            y_pred=pdf["pred"],  # type: ignore[index]
            sensitive_features=pdf["group"],  # type: ignore[index]
            n_boot=n_boot,
            ci_quantiles=[0.025, 0.975],
            random_state=0,
        )
        return mf.by_group_ci, mf.difference_ci(), mf.ratio_ci()


def n_statistics(out: dict[str, pl.DataFrame]) -> int:
    """How many intervals the tables carry (rows × interval columns)."""
    return sum(t.height * sum(c.endswith("ci_low") for c in t.columns) for t in out.values())


def _two_percentiles(values: np.ndarray, levels: tuple[float, float]) -> np.ndarray:
    """The linear-interpolation quantiles of each row at two levels, by the package's own exact
    selection (``bootstrap._order_statistics``: successive single-kth partitions, cheaper than
    ``np.sort`` and far cheaper than ``np.quantile`` or a several-kth ``np.partition``) and its
    interpolation (``_positions``, ``_interpolate``): one definition of the formula."""
    lo, hi, frac = _positions(np.array([values.shape[1]]), np.array([list(levels)]))
    stats, _, _ = _order_statistics(values, [int(k) for k in (*lo[0], *hi[0])])
    return np.stack(
        [
            _interpolate(stats[int(lo[0, j])], stats[int(hi[0, j])], frac[0, j])
            for j in range(len(levels))
        ],
        axis=1,
    )


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den``, NaN where ``den`` is 0 (the floor's undefined value)."""
    out = np.full(np.broadcast_shapes(num.shape, den.shape), np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def evaluate_statistics(cells: np.ndarray) -> np.ndarray:
    """Every statistic the tables print, on drawn count arrays, in plain NumPy: the fewest
    operations an engine must do per replicate, whatever its bookkeeping.

    ``cells`` is (4, groups, B): tp, fp, tn, fn per group (group 0 the reference) and
    replicate, each group's replicates contiguous. Returns a (statistics × B) matrix: the 17
    confusion metrics per group, their difference and ratio against the reference, the
    max-of-two criteria (equalized odds, difference and ratio) and the between-groups
    max − min and min / max of every metric (the other criteria are rows of the differences
    and ratios).
    """
    tp, fp, tn, fn = cells
    n, pos, neg = tp + fp + tn + fn, tp + fn, fp + tn
    ppos, pneg = tp + fp, tn + fn
    tpr, fnr, fpr, tnr = _ratio(tp, pos), _ratio(fn, pos), _ratio(fp, neg), _ratio(tn, neg)
    values = np.stack(
        [
            _ratio(tp + tn, n),
            _ratio(fp + fn, n),
            tpr,
            fnr,
            fpr,
            tnr,
            _ratio(tp, ppos),
            _ratio(tn, pneg),
            _ratio(fp, ppos),
            _ratio(fn, pneg),
            _ratio(2 * tp, 2 * tp + fp + fn),
            _ratio(ppos, n),
            _ratio(pos, n),
            (tpr + tnr) / 2,
            (fnr + fpr) / 2,
            np.sqrt(tpr * tnr),
            _ratio(tp * tn - fp * fn, np.sqrt(ppos * pos * neg * pneg)),
        ]
    )  # (metrics, groups, B)
    reference = values[:, :1]
    difference = values - reference
    ratio = _ratio(values, reference)
    odds = [np.maximum(np.abs(difference[2]), np.abs(difference[4]))]
    odds.append(np.minimum(ratio[2], ratio[4]))
    # the max and min over the groups, group by group (a reduction over a short middle axis
    # is several times slower than these elementwise passes)
    high, low = values[:, 0].copy(), values[:, 0].copy()
    for g in range(1, values.shape[1]):
        np.maximum(high, values[:, g], out=high)
        np.minimum(low, values[:, g], out=low)
    b = values.shape[2]
    return np.concatenate(
        [
            values.reshape(-1, b),
            difference.reshape(-1, b),
            ratio.reshape(-1, b),
            *odds,
            high - low,
            _ratio(low, high),
        ],
        axis=0,
    )


def lower_bound(n_stats: int, b: int, n_cells: int = 16) -> float:
    """A floor for B-resample intervals of ``n_stats`` statistics, whatever the engine, in
    NumPy: exact multinomial draws of a ``n_cells``-cell count table (the faster of
    ``Generator.multinomial`` and conditional binomials, one vectorised call per cell) and the
    two percentiles of each statistic over its B replicate values by the cheapest exact
    selection (:func:`_two_percentiles`); each part the median of 3. Evaluating the statistics
    on the replicates, and everything else an engine does, comes on top."""
    rng = np.random.default_rng(0)
    values = rng.random((n_stats, b))
    probs = np.full(n_cells, 1 / n_cells)
    total = 10_000_000

    def multinomial() -> None:
        rng.multinomial(total, probs, size=b)

    def binomials() -> None:
        left = np.full(b, total, dtype=np.int64)
        rest = 1.0
        for p in probs[:-1]:
            drawn = rng.binomial(left, min(p / rest, 1.0))
            left -= drawn
            rest -= p
        # the last cell is what is left

    draws = min(best_of(multinomial, 3), best_of(binomials, 3))
    return draws + best_of(lambda: _two_percentiles(values, (0.025, 0.975)), 3)


def evaluation_bound(b: int, n_groups: int = 4) -> float:
    """:func:`lower_bound`'s parts plus evaluating the statistics: exact draws of the
    ``4 × n_groups``-cell table, :func:`evaluate_statistics` on them (laid out group by
    group) and the two percentiles of every statistic it gives (each part the median of 3;
    the percentiles of the evaluated statistics, NaN where undefined, as the engine sees
    them)."""
    rng = np.random.default_rng(0)
    probs = np.full(4 * n_groups, 1 / (4 * n_groups))
    drawn = rng.multinomial(10_000_000, probs, size=b)

    def evaluate() -> np.ndarray:
        # the draws' (B, cells) laid out as (cell, group, B), then every statistic
        cells = np.ascontiguousarray(drawn.T.reshape(n_groups, 4, b).transpose(1, 0, 2))
        return evaluate_statistics(cells.astype(float))

    stats = evaluate()
    draws = best_of(lambda: rng.multinomial(10_000_000, probs, size=b), 3)
    evaluation = best_of(evaluate, 3)
    return draws + evaluation + best_of(lambda: _two_percentiles(stats, (0.025, 0.975)), 3)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1e5,1e6,1e7")
    ap.add_argument("--resamples", default="1000,10000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--fairlearn-rows", type=float, default=1e4)
    ap.add_argument("--fairlearn-boot", type=int, default=20)
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks" / "bootstrap.md"))
    args = ap.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    bs = [int(float(b)) for b in args.resamples.split(",")]
    rows = []
    fl_row = None
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            folder = make_data(n, Path(tmp) / f"data_{n}")
            floor(folder)  # warm the page cache
            n_stats = n_statistics(boot(folder, bs[0]))  # warm-up (imports, first calls)
            bounds = [lower_bound(n_stats, b) for b in bs]
            full_bounds = [evaluation_bound(b) for b in bs]
            for weight in (None, "w"):
                t_floor = best_of(lambda folder=folder: floor(folder), args.repeat)
                t_point = best_of(lambda f=folder, w=weight: point(f, w), args.repeat)
                times = [
                    best_of(lambda f=folder, w=weight, b=b: boot(f, b, w), args.repeat) for b in bs
                ]
                rows.append((n, weight, t_floor, t_point, times, bounds, n_stats, full_bounds))
                ratios = " ".join(
                    f"B={b}: {t:.3f}s ({t / t_point:.2f}x)" for b, t in zip(bs, times, strict=True)
                )
                print(
                    f"n={n:>13,} {'weighted' if weight else 'unweighted':>10}: floor "
                    f"{t_floor:.3f}s point {t_point:.3f}s {ratios}",
                    flush=True,
                )
        nf = int(args.fairlearn_rows)
        if nf:
            folder = make_data(nf, Path(tmp) / "fairlearn", seed=1)
            pdf = _scan(folder).collect().with_columns(pl.col("group").cast(pl.String)).to_pandas()
            t_fl0 = best_of(lambda: fairlearn_boot(pdf, None), 1)
            t_fl = best_of(lambda: fairlearn_boot(pdf, args.fairlearn_boot), 1)
            t_ours = best_of(lambda: boot(folder, 1000), args.repeat)
            fl_row = (nf, args.fairlearn_boot, t_fl0, t_fl, t_ours)
            print(
                f"fairlearn n={nf:,} n_boot={args.fairlearn_boot}: {t_fl:.2f}s; "
                f"ours B=1000: {t_ours:.3f}s",
                flush=True,
            )
    cmd = "python benchmarks/bench_bootstrap.py " + " ".join(sys.argv[1:])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# Bootstrap intervals at the cost of the point estimate",
        "",
        f"Command: `{cmd.strip()}`  ",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, polars "
        f"{pl.__version__}, 2 cores (1-minute load average at the end: {load:.1f}); times "
        f"are best of {args.repeat}, all measured in one run.",
        "",
        "*floor* = one plain `scan_parquet().group_by([group, y, pred]).agg(len)`. *point* = "
        "one streaming scan to the count table of 4 groups, then every count-based table: all "
        "confusion metrics per group, disparities (difference, ratio) against a named "
        "reference, every named criterion, between-groups summaries. *B = k* = the same tables "
        "with k-resample intervals, as an audit computes them (one scan, `resample_counts`, "
        "the replicates' comparison table computed once in wide form, the criteria composed from "
        "it, `with_intervals` per table). *weighted*: by a "
        "continuous Float32 weight (count engine with per-cell sums of squares).",
        "",
        "",
        "*bound* = a floor for the intervals whatever the engine (`lower_bound` in the "
        "script), in NumPy: exact multinomial draws of the 16-cell count table (the faster of "
        "NumPy's multinomial and conditional binomials) and the two percentiles of each of the "
        "tables' interval statistics over its B replicate values by the cheapest exact "
        "selection (successive single-kth partitions, cheaper than a sort or `np.quantile`) — "
        "evaluating the statistics on the replicates, and everything else, comes on top. "
        "*best / point* = (point + bound) / point: an engine below it would need cheaper "
        "draws or a cheaper exact selection than these. *bound with evaluation* "
        "(`evaluation_bound`) adds what no engine can skip: evaluating every statistic on the "
        "drawn counts, in plain NumPy with the fewest operations (the 17 metrics of each of the "
        "4 groups, their differences and ratios against the reference, the max-of-two "
        "criteria, the between-groups max − min and min / max: 246 distinct statistics; the "
        "other criteria are among the differences and ratios), then the two percentiles of "
        "each. It leaves out the max-t bands (between groups, equalized odds), the notes and "
        "the tables.",
        "",
        "| rows | weights | floor (s) | point (s) | "
        + " | ".join(
            f"B = {b} (s) | B = {b} / point | bound (s) | best / point | bound with "
            "evaluation (s) | best / point"
            for b in bs
        )
        + " |",
        "|---:|---|---:|---:|" + "---:|---:|---:|---:|---:|---:|" * len(bs),
    ]
    for n, weight, tf, tp, times, bounds, _, full in rows:
        cells = " | ".join(
            f"{t:.3f} | {t / tp:.2f} | {lb:.3f} | {(tp + lb) / tp:.2f} | {fb:.3f} | "
            f"{(tp + fb) / tp:.2f}"
            for t, lb, fb in zip(times, bounds, full, strict=True)
        )
        lines.append(
            f"| {n:,} | {'continuous' if weight else 'none'} | {tf:.3f} | {tp:.3f} | {cells} |"
        )
    if rows:
        lines += [
            "",
            f"The tables carry {rows[0][6]:,} intervals (rows × interval columns: every metric "
            "per group, each difference and ratio, every criterion, the between-groups "
            "summaries).",
        ]
    if fl_row is not None:
        nf, k, tfl0, tfl, tours = fl_row
        per = max(tfl - tfl0, 0.0) / k
        lines += [
            "",
            "## Against fairlearn's MetricFrame bootstrap",
            "",
            f"`MetricFrame(metrics=<10 metrics>, n_boot={k}, ci_quantiles=[0.025, 0.975])` "
            "with `by_group_ci`, `difference_ci()`, `ratio_ci()`, on a pandas frame in memory, "
            f"{nf:,} rows, 4 groups (fairlearn recomputes every metric on a resampled frame "
            "per replicate, so its cost is linear in B; at larger sizes it does not finish in "
            "reasonable time on this machine).",
            "",
            "| rows | fairlearn, no bootstrap (s) | fairlearn, n_boot = k (s) | k "
            "| fairlearn per replicate (s) "
            "| fairlearn extrapolated to B = 1000 (s) | ours, B = 1000, every table (s) "
            "| speed-up |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|",
            f"| {nf:,} | {tfl0:.2f} | {tfl:.2f} | {k} | {per:.3f} | {tfl0 + per * 1000:.0f} "
            f"| {tours:.3f} | {(tfl0 + per * 1000) / tours:.0f}× |",
            "",
            "Per replicate = (time with n_boot = k − time without) / k; the extrapolation is "
            "the time without bootstrap + B × per replicate.",
        ]
    lines += [
        "",
        "Why: the count engine resamples the cell table (4 groups × 4 cells + nulls), not "
        "the rows: one multinomial draw per replicate, O(B × cells), independent of the row "
        "count; weighted sums are drawn given the drawn counts from their per-cell sums and "
        "sums of squares. The rows are scanned once, for the point estimate's count table; "
        "what remains is a replicate table of B × 4 rows evaluated by the same functions "
        "as the point estimate.",
        "",
    ]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
