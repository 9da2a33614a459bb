"""Benchmark, the headline: a full weighted audit with B = 1000 intervals of 1e9 predictions.

Generates ``--rows`` predictions into parquet files (4 groups, compact dtypes: ``group`` UInt8,
``y`` and ``pred`` Boolean, ``w`` a continuous Float32 weight), then runs, each in a fresh
subprocess so its peak memory (max RSS) is its own, alternating ``--repeat`` times:

- floor: one plain Polars count pass over the files
  (``scan_parquet().group_by([group, y, pred]).agg(len(), sum(w))``, streaming engine);
- floor + Σw²: the same pass with the sum of squared weights (what weighted intervals need);
- audit: ``pfm.audit(scan, weight="w", intervals=1000)``: every group, every metric, disparities,
  the criteria and the between-groups statistics, each with B = 1000 bootstrap intervals from the
  count table (weighted cells resampled from their count, weight sum and sum of squares: memory
  does not grow with the rows), streaming engine.

Writes ``docs/benchmarks/billion.md``. Run (needs ≈ 8 GB of free disk at 1e9 rows; the data are
kept in ``--data`` between runs)::

    python benchmarks/bench_billion.py --rows 1e9 --data /tmp/pfm_billion --repeat 3
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import load_note  # noqa: E402

FILE_ROWS = 50_000_000
CHUNK = 10_000_000


def make_data(rows: int, folder: Path, seed: int = 0) -> list[Path]:
    """Parquet files of ``rows`` predictions (reused when already there)."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / f"rows_{rows}.done"
    files = sorted(folder.glob("part_*.parquet"))
    if marker.exists():
        return files
    for f in files:
        f.unlink()
    rng = np.random.default_rng(seed)
    written = 0
    index = 0
    while written < rows:
        m_file = min(FILE_ROWS, rows - written)
        parts = []
        for start in range(0, m_file, CHUNK):
            m = min(CHUNK, m_file - start)
            g = rng.choice(np.arange(4, dtype=np.uint8), m, p=[0.4, 0.3, 0.2, 0.1])
            y = rng.random(m) < 0.1 + 0.05 * g
            p = np.where(rng.random(m) < 0.8, y, ~y)
            w = (rng.gamma(2.0, 0.5, m) * np.where(y, 1.5, 1.0)).astype(np.float32)
            parts.append(pl.DataFrame({"group": g, "y": y, "pred": p, "w": w}))
        pl.concat(parts).write_parquet(folder / f"part_{index:03d}.parquet", row_group_size=1 << 20)
        written += m_file
        index += 1
    marker.touch()
    return sorted(folder.glob("part_*.parquet"))


CHILD = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
import polars as pl
import polars_fairmetrics as pfm
scan = pl.scan_parquet({pattern!r})
t0 = time.perf_counter()
variant = {variant!r}
if variant == "floor":
    out = scan.group_by("group", "y", "pred").agg(pl.len(), pl.col("w").sum()).collect(
        engine="streaming")
elif variant == "floor_w2":
    out = scan.group_by("group", "y", "pred").agg(
        pl.len(), pl.col("w").sum(), (pl.col("w").cast(pl.Float64) ** 2).sum().alias("w2")
    ).collect(engine="streaming")
else:
    report = pfm.audit(scan, y_true="y", y_pred="pred", by="group", weight="w",
                       intervals=1000, engine="streaming")
    sections = {{name: s.table.height for name, s in report.sections.items()}}
seconds = time.perf_counter() - t0
if variant == "audit":
    rows = int(report.sections["metrics"].table.select("group", "n").unique()["n"].sum())
else:
    rows = int(out["len"].sum())
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB (Linux: KiB)
print(json.dumps({{"seconds": seconds, "peak_mib": peak, "rows": rows}}))
"""


def run_child(variant: str, pattern: str) -> dict[str, float]:
    code = CHILD.format(root=str(ROOT), pattern=pattern, variant=variant)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{variant} failed:\n{done.stderr}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=float, default=1e9)
    parser.add_argument("--data", type=Path, default=Path("/tmp/pfm_billion"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks" / "billion.md")
    args = parser.parse_args()
    rows = int(args.rows)
    t0 = time.perf_counter()
    files = make_data(rows, args.data)
    made = time.perf_counter() - t0
    size_gb = sum(f.stat().st_size for f in files) / 1e9
    pattern = str(args.data / "part_*.parquet")
    load_before = load_note()
    variants = ["floor", "floor_w2", "audit"]
    runs: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
    for _ in range(args.repeat):
        for v in variants:
            runs[v].append(run_child(v, pattern))
            print(v, runs[v][-1], flush=True)
    for v in variants:
        counted = {int(r["rows"]) for r in runs[v]}
        if counted != {rows}:
            raise SystemExit(f"{v} counted {sorted(counted)} rows, not {rows}")
    med = {v: statistics.median(r["seconds"] for r in runs[v]) for v in variants}
    peak = {v: max(r["peak_mib"] for r in runs[v]) for v in variants}
    command = (
        f"python benchmarks/bench_billion.py --rows {args.rows:g} --data {args.data} "
        f"--repeat {args.repeat}"
    )
    lines = [
        "# Benchmark: a weighted audit with intervals of a billion predictions",
        "",
        f"Generated by `{command}`.",
        "",
        f"{rows:,} rows in {len(files)} parquet files ({size_gb:.1f} GB; `group` UInt8 with 4 "
        "groups, `y` and `pred` Boolean, `w` a continuous Float32 weight; "
        + (f"data made in {made:.0f} s" if made >= 1 else "data reused from an earlier run")
        + ", not timed below). Each variant runs in a fresh process (its peak memory "
        f"is its own max RSS, including the Python interpreter and Polars); medians of "
        f"{args.repeat} alternating runs. Machine: {platform.machine()}. Before the runs: "
        f"{load_before}",
        "",
        "| variant | median s | × floor | peak MiB |",
        "|---|---:|---:|---:|",
    ]
    names = {
        "floor": "floor: `group_by(group, y, pred).agg(len, sum(w))`, streaming",
        "floor_w2": "floor + Σw² (what weighted intervals need per cell)",
        "audit": "`audit(weight='w', intervals=1000)`: all tables, B = 1000 intervals",
    }
    for v in variants:
        lines.append(f"| {names[v]} | {med[v]:.1f} | {med[v] / med['floor']:.2f} | {peak[v]:.0f} |")
    lines += [
        "",
        "The audit is one scan (the weighted count table with Σw² per cell) followed by "
        "small-table work: 1000 count-level replicates of the 4 × 2 × 2 cells,"
        " weighted sums drawn from each "
        "cell's resampled count with the exact mean and variance of a with-replacement sum "
        "(see [Uncertainty](../uncertainty.md)). Its memory does not grow with the rows. "
        f"Every run of every variant counted all {rows:,} rows (checked by the script).",
        "",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
