"""Benchmark: exact per-group weighted curves vs the floor and vs a scikit-learn loop.

Generates parquet files (8 groups, 30 % positives, weights) in a temporary folder, with two score
columns: ``score`` (float64, nearly every value distinct — the worst case for exact curves) and
``score3`` (rounded to 3 decimals, ≤ 1001 distinct values — typical of calibrated or stored
scores). Times, side by side in one run (best of ``--repeat``):

- floor: one plain Polars count pass, ``scan_parquet().group_by([group, y, score >= 0.5])
  .agg(len, sum(w))`` (the core benchmark's floor);
- floor at curve resolution: ``group_by([group, y, score]).agg(len, sum(w))`` — the single scan
  every exact curve needs (one count per distinct score);
- plain exact curve: ``scan_parquet().sort([group, score]).with_columns(cum_sum of the positive
  and negative weights .over(group))``, collected — the exact curve written directly in Polars
  (no ties closed, no validation, no summaries): the yardstick of the target "ours <= 1.3x
  plain" on distinct scores;
- ours: ``curve_counts`` (exact, weighted, all groups; one scan + one sort per group) then
  ``curve_summaries`` (ROC AUC, average precision, AUPR) from the table, streaming engine;
- ours, grid: the same with ``mode="grid", bins=1000``;
- scikit-learn: a loop over groups of ``roc_curve``, ``precision_recall_curve``,
  ``roc_auc_score`` and ``average_precision_score`` with ``sample_weight`` on numpy arrays
  already in memory (reading and splitting excluded).

Writes ``docs/benchmarks/curves.md``. Run:
``PYTHONPATH=. python benchmarks/bench_curves.py [--sizes 1e6,1e7] [--repeat 2]``.
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

GROUPS = np.array(list("abcdefgh"))


def make_data(n: int, path: Path, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    chunk = 2_000_000
    frames = []
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        g = rng.choice(GROUPS, m)
        y = rng.random(m) < 0.3
        s = np.clip(rng.normal(0.4 + 0.2 * y, 0.2), 0.0, 1.0)
        frames.append(
            pl.DataFrame(
                {
                    "group": g,
                    "y": y.astype(np.int8),
                    "score": s,
                    "score3": np.round(s, 3),
                    "w": rng.random(m) * 2,
                }
            )
        )
    pl.concat(frames).write_parquet(path, row_group_size=1_000_000)


def floor(path: Path, col: str) -> pl.DataFrame:
    return (
        pl.scan_parquet(path)
        .group_by("group", "y", (pl.col(col) >= 0.5).alias("pred"))
        .agg(pl.len(), pl.col("w").sum())
        .collect(engine="streaming")
    )


def floor_curve(path: Path, col: str) -> pl.DataFrame:
    return (
        pl.scan_parquet(path)
        .group_by("group", "y", col)
        .agg(pl.len(), pl.col("w").sum())
        .collect(engine="streaming")
    )


def plain_curve(path: Path, col: str) -> pl.DataFrame:
    y, w = pl.col("y"), pl.col("w")
    return (
        pl.scan_parquet(path)
        .sort("group", col)
        .with_columns(
            (w * y).cum_sum().over("group").alias("tp_w"),
            (w * (1 - y)).cum_sum().over("group").alias("fp_w"),
        )
        .collect(engine="streaming")
    )


def ours(path: Path, col: str, mode: str = "exact", method: str = "aggregate") -> pl.DataFrame:
    table = pfm.curve_counts(
        pl.scan_parquet(path),
        y_true="y",
        y_score=col,
        by="group",
        weight="w",
        mode=mode,
        bins=1000,  # type: ignore[arg-type]
        exact_method=method,  # type: ignore[arg-type]
    ).collect(engine="streaming")
    return pfm.curve_summaries(table)


def sklearn_loop(parts: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]) -> list[float]:
    from sklearn.metrics import (
        average_precision_score,
        precision_recall_curve,
        roc_auc_score,
        roc_curve,
    )

    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for y, s, w in parts.values():
            roc_curve(y, s, sample_weight=w, drop_intermediate=False)
            precision_recall_curve(y, s, sample_weight=w)
            out.append(roc_auc_score(y, s, sample_weight=w))
            out.append(average_precision_score(y, s, sample_weight=w))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1e6,1e7")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks" / "curves.md"))
    args = ap.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = Path(tmp) / f"curves_{n}.parquet"
            make_data(n, path)
            df = pl.read_parquet(path)
            for col in ("score", "score3"):
                floor(path, col)  # warm the page cache
                t_floor = best_of(lambda p=path, c=col: floor(p, c), args.repeat)
                t_fc = best_of(lambda p=path, c=col: floor_curve(p, c), args.repeat)
                t_plain = best_of(lambda p=path, c=col: plain_curve(p, c), args.repeat)
                t_ours = best_of(lambda p=path, c=col: ours(p, c), args.repeat)
                t_sort = best_of(lambda p=path, c=col: ours(p, c, "exact", "sort"), args.repeat)
                t_grid = best_of(lambda p=path, c=col: ours(p, c, "grid"), args.repeat)
                parts = {
                    str(k[0]): (p["y"].to_numpy(), p[col].to_numpy(), p["w"].to_numpy())
                    for k, p in df.partition_by("group", as_dict=True).items()
                }
                t_sk = best_of(lambda parts=parts: sklearn_loop(parts), 1)
                n_thr = int(floor_curve(path, col).select("group", col).n_unique())
                rows.append((n, col, n_thr, t_floor, t_fc, t_plain, t_ours, t_sort, t_grid, t_sk))
                print(
                    f"n={n:>11,} {col:6}: floor {t_floor:.3f}s  floor@curve {t_fc:.3f}s  "
                    f"plain {t_plain:.3f}s  ours {t_ours:.3f}s  sort {t_sort:.3f}s  "
                    f"grid {t_grid:.3f}s  sklearn {t_sk:.3f}s",
                    flush=True,
                )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    cmd = "PYTHONPATH=. python benchmarks/bench_curves.py " + " ".join(sys.argv[1:])
    lines = [
        "# Curves: exact per-group weighted curves",
        "",
        f"Command: `{cmd.strip()}`  ",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, polars "
        f"{pl.__version__}, 2 cores, no other job running (1-minute load average at the end, "
        f"this run included: {load:.1f}); the ratios are from one run, best of {args.repeat} "
        "(scikit-learn: 1 run).",
        "",
        "8 groups, 30 % positives, weights. *floor* = one plain Polars count pass "
        "`group_by([group, y, score >= 0.5]).agg(len, sum(w))`; *floor@curve* = the count pass at "
        "curve resolution `group_by([group, y, score]).agg(len, sum(w))` (one count per distinct "
        "score: the scan an exact curve cannot avoid); *plain* = the plain Polars exact curve "
        "`scan_parquet().sort([group, score]).with_columns(cum_sum(w·y).over(group), "
        "cum_sum(w·(1−y)).over(group))`, collected (no tie closing, no validation, no summaries: "
        "the yardstick of the target *ours ≤ 1.3 × plain* on distinct scores); "
        "*ours* = `curve_counts` (exact, weighted, "
        "every group: one scan, one sort per group) + `curve_summaries` (ROC AUC, AP, AUPR), "
        'streaming (default `exact_method="aggregate"`); *sort* = the same with '
        '`exact_method="sort"` (each group\'s rows sorted directly); *grid* = the same with '
        '`mode="grid", bins=1000`; *sklearn* = a loop over '
        "the groups of `roc_curve`, `precision_recall_curve`, `roc_auc_score`, "
        "`average_precision_score` with `sample_weight` on numpy arrays already in memory "
        "(reading excluded).",
        "",
        "| rows | score | thresholds | floor (s) | floor@curve (s) | plain (s) | ours (s) "
        "| ours / plain | ours / floor@curve | sort (s) | sort / plain | grid (s) | grid / floor "
        "| sklearn (s) | sklearn / best exact |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, col, nt, tf, tfc, tp, to, ts, tg, tsk in rows:
        kind = "float64 (distinct)" if col == "score" else "3 decimals"
        lines.append(
            f"| {n:,} | {kind} | {nt:,} | {tf:.3f} | {tfc:.3f} | {tp:.3f} | {to:.3f} "
            f"| {to / tp:.2f} | {to / tfc:.2f} | {ts:.3f} | {ts / tp:.2f} | {tg:.3f} "
            f"| {tg / tf:.1f} | {tsk:.3f} | {tsk / min(to, ts):.1f}× |"
        )
    lines += [
        "",
        "Reading: with scores of bounded resolution (3 decimals) the exact curves cost a small "
        "multiple of one count pass. With float64 scores that are all distinct, the curve table "
        "itself has about as many rows as the data: the exact curve then costs the count pass at "
        "curve resolution (a high-cardinality `group_by`) plus a sort of each group's distinct "
        "scores — compare with *plain* (the same sort and cumulative sums written directly in "
        'Polars, without tie handling, checks or summaries); `exact_method="sort"` '
        "skips the high-cardinality aggregation and sorts each group's rows instead "
        "(scikit-learn's algorithm, in one Polars query). When that is too much, "
        '`mode="grid"` (or `"quantile"`) costs about one count pass and its summary error is '
        "bounded (see docs/curves.md).",
        "",
    ]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
