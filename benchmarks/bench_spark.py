"""Benchmark: the Spark path vs the local streaming path, on the same parquet files.

Generates a folder of parquet files (several files, so Spark reads several partitions; group,
second attribute, labels, predictions, scores, weights) in ``benchmarks/_data/`` (git-ignored)
and times, side by side in one run, with one ``local[2]`` Spark session started beforehand
(start-up time reported apart):

- floor: one plain Polars ``group_by`` count pass over the files (streaming engine);
- local: ``confusion_counts(scan_parquet(...))`` streaming, then disparities on the driver;
- Spark floor: a Spark-native ``groupBy(...).agg(count, sum(w))`` over the same files, collected
  (what a Spark user would write without this package; no Python workers);
- Spark: ``spark_confusion_counts(path, ...)`` (mapInArrow → Polars counts per partition →
  Spark sum), then disparities on the driver;
- the same two paths with a 20-threshold grid on the scores (binned sweep).

Writes ``docs/benchmarks/spark.md``.
Run: ``python benchmarks/bench_spark.py [--sizes 1e6,5e6] [--repeat 3] [--files 8]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import interleaved, load_average  # noqa: E402

import polars_fairmetrics as pfm  # noqa: E402
from polars_fairmetrics.spark import spark_confusion_counts  # noqa: E402

GRID = [round(0.05 * i, 2) for i in range(20)]
OPTS = {"y_true": "y", "y_pred": "pred", "by": ["group", "region"], "weight": "w"}


def make_data(n: int, folder: Path, files: int, seed: int = 0) -> None:
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    per = -(-n // files)
    for i in range(files):
        m = min(per, n - i * per)
        g = rng.choice(np.array(["a", "b", "c", "d"]), m, p=[0.4, 0.3, 0.2, 0.1])
        y = rng.random(m) < 0.3
        s = np.clip(np.where(y, rng.beta(4, 2, m), rng.beta(2, 4, m)), 0, 1)
        pl.DataFrame(
            {
                "group": g,
                "region": rng.integers(0, 5, m).astype(np.int32),
                "y": y.astype(np.int8),
                "pred": (s >= 0.5).astype(np.int8),
                "score": s,
                "w": rng.random(m) * 2,
            }
        ).write_parquet(folder / f"part-{i:03d}.parquet", row_group_size=500_000)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1e6,5e6")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--files", type=int, default=8)
    args = ap.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p
    )
    warnings.filterwarnings("ignore", category=FutureWarning, module="pyspark")
    import pyspark
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    t0 = time.perf_counter()
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    startup = time.perf_counter() - t0

    rows = []
    for n in sizes:
        folder = ROOT / "benchmarks" / "_data" / f"spark_{n}"
        make_data(n, folder, args.files)
        glob = str(folder / "*.parquet")
        path = str(folder)

        def floor(glob: str = glob) -> object:
            return (
                pl.scan_parquet(glob)
                .group_by(["group", "region", "y", "pred"])
                .agg(pl.len(), pl.col("w").sum())
                .collect(engine="streaming")
            )

        def local(glob: str = glob) -> object:
            c = pfm.confusion_counts(pl.scan_parquet(glob), **OPTS).collect(engine="streaming")
            return pfm.disparities(c, reference="rest")

        def spark_floor(path: str = path) -> object:
            return (
                spark.read.parquet(path)
                .groupBy("group", "region", "y", "pred")
                .agg(F.count("*"), F.sum("w"))
                .collect()
            )

        def spark_transfer(path: str = path) -> object:
            # mapInArrow that computes nothing: the cost of moving the rows to Python workers
            frame = spark.read.parquet(path).select("group", "region", "y", "pred", "w")
            return frame.mapInArrow(lambda it: (b.slice(0, 0) for b in it), frame.schema).count()

        def on_spark(path: str = path) -> object:
            c = spark_confusion_counts(path, spark=spark, **OPTS)
            return pfm.disparities(c, reference="rest")

        def local_grid(glob: str = glob) -> object:
            return pfm.confusion_counts(
                pl.scan_parquet(glob), y_true="y", y_score="score", threshold=GRID, by="group"
            ).collect(engine="streaming")

        def spark_grid(path: str = path) -> object:
            return spark_confusion_counts(
                path, spark=spark, y_true="y", y_score="score", threshold=GRID, by="group"
            )

        # same answer first (counts exact, weighted sums to rounding)
        want = pfm.confusion_counts(pl.scan_parquet(glob), **OPTS).collect(engine="streaming")
        got = spark_confusion_counts(path, spark=spark, **OPTS)
        from polars.testing import assert_frame_equal

        assert_frame_equal(got, want, rel_tol=1e-12)
        spark_grid()  # warm the Python workers
        r: dict[str, float] = {"n": n, "load": load_average()[0]}
        # each round times every variant once, in turn (medians): a change in the machine's
        # load hits all of them alike
        timed = interleaved(
            {
                "floor": floor,
                "local": local,
                "spark_floor": spark_floor,
                "spark_transfer": spark_transfer,
                "spark": on_spark,
                "local_grid": local_grid,
                "spark_grid": spark_grid,
            },
            args.repeat,
        )
        for name, seconds in timed.items():
            r[name] = seconds
            print(n, name, f"{seconds:.3f}s", flush=True)
        rows.append(r)

    spark.stop()
    lines = [
        "# Spark path vs local streaming path",
        "",
        f"Command: `python benchmarks/bench_spark.py --sizes {args.sizes} --repeat {args.repeat}"
        f" --files {args.files}`  ",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, polars "
        f"{pl.__version__}, pyspark {pyspark.__version__}, Spark `local[2]` on 2 cores, "
        "no other job running (1-minute load average before each size's timings: "
        + ", ".join(f"{r['load']:.1f}" for r in rows)
        + f"; {load_average()[0]:.1f} at the end, this run's JVM and workers included). "
        f"Medians of {args.repeat} interleaved rounds (each round times every variant once). "
        f"Spark session start-up (JVM) {startup:.1f} s, not included below.",
        "",
        f"Data: {args.files} parquet files per size; 4 groups × 5 regions (intersectional), "
        "0/1 labels and predictions, scores, weights.",
        "",
        "- *floor*: one plain Polars `scan_parquet().group_by([group, region, y, pred])"
        ".agg(len, sum(w))`, streaming.",
        "- *local*: `confusion_counts(scan_parquet(...), by=[group, region], weight=w)` streaming"
        ' + `disparities(reference="rest")` (all metrics).',
        "- *Spark floor*: Spark-native `read.parquet().groupBy(group, region, y, pred)"
        ".agg(count, sum(w)).collect()` (no Python workers).",
        "- *Arrow transfer*: the same columns through a `mapInArrow` that computes nothing "
        "(the floor of any Python step inside Spark).",
        "- *Spark*: `spark_confusion_counts(path, ...)` (mapInArrow → Polars counts per "
        "partition → Spark `groupBy().sum()`) + the same `disparities` on the driver.",
        "- *grid*: the same count table for 20 thresholds on the scores (binned sweep), "
        "`by=group`.",
        "",
        "| rows | floor (s) | local (s) | Spark floor (s) | Arrow transfer (s) | Spark (s) "
        "| Spark / local | Spark / Spark floor | Spark / transfer | local grid (s) "
        "| Spark grid (s) | Spark grid / local grid |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']:,} | {r['floor']:.3f} | {r['local']:.3f} | {r['spark_floor']:.3f} "
            f"| {r['spark_transfer']:.3f} | {r['spark']:.3f} | {r['spark'] / r['local']:.1f}× "
            f"| {r['spark'] / r['spark_floor']:.2f}× | {r['spark'] / r['spark_transfer']:.2f}× "
            f"| {r['local_grid']:.3f} "
            f"| {r['spark_grid']:.3f} | {r['spark_grid'] / r['local_grid']:.1f}× |"
        )
    lines += [
        "",
        "Reading: on one 2-core machine Spark cannot beat a local Polars streaming scan (the "
        "JVM, Arrow transfer to Python workers and a shuffle cost a fixed overhead per job), so "
        "*Spark / local* is the price of staying inside a Spark job, not a speed-up. *Spark / "
        "Spark floor* is what the package adds to a plain Spark aggregation of the same files; "
        "*Spark / transfer* shows that most of it is moving the rows to the Python workers "
        "(Arrow), which any Python step in Spark pays, not the Polars counting (a ratio below 1 "
        "is noise: both runs are dominated by the same transfer). The grid reads three columns, "
        "hence its lower times. "
        "On a cluster the per-partition work spreads over executors and the merged table stays "
        "one row per group (× threshold).",
        "",
    ]
    out = ROOT / "docs" / "benchmarks" / "spark.md"
    out.write_text("\n".join(lines), encoding="utf-8")
    print(out.read_text())


if __name__ == "__main__":
    main()
