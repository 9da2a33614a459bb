"""Benchmark: auditing a window of a count store vs recounting the window's rows.

Builds a count store (Delta Lake) of ``--days`` daily batches (default 365), each of
``--rows`` rows in 8 groups (attribute ``group``; a second attribute ``region`` with 3 values),
with the model's decisions and scores — one ``append_batch`` (one commit) per day, as a daily
job would, untimed. Then times, best of ``--repeat``:

- *read window*: ``read_counts(store, merge=True)`` of the whole window, collected;
- *audit window*: the same, then every fairness criterion and every metric's disparities
  against a named reference (what ``polars-fairmetrics monitor audit`` computes);
- *audit per period*: ``period_criteria`` of the window read per period (365 tables at once);
- *calibration window*: ``read_cells(merge=True)`` and ``calibration_disparities`` (cells of
  scores rounded to 2 decimals);
- *append one batch*: one more day counted and committed;
- *recount rows*: the same window audit recomputed from the window's rows (one Parquet file of
  all the days), i.e. what a store saves;
- with ``--compact``: the window audit again after ``optimize.compact()`` and a checkpoint.

Checks that the window from the store equals the recount, to the last bit for counts.
Writes ``docs/benchmarks/monitor.md``. Run: ``python benchmarks/bench_monitor.py
[--days 365 --rows 20000 --repeat 5 --compact]``; a quick check: ``--days 10 --rows 2000
--repeat 1 --out /tmp/monitor.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import best_of  # noqa: E402

import polars_fairmetrics as pfm  # noqa: E402
from polars_fairmetrics import monitor  # noqa: E402

D0 = dt.date(2024, 1, 1)
GROUPS = np.array([f"g{i}" for i in range(8)])
REGIONS = np.array(["north", "south", "west"])


def day_rows(day: int, n: int) -> pl.DataFrame:
    rng = np.random.default_rng(day)
    group = rng.choice(GROUPS, n)
    s = np.round(rng.beta(2, 3, n), 2)
    y = (rng.random(n) < s).astype(np.int8)
    return pl.DataFrame(
        {
            "group": group,
            "region": rng.choice(REGIONS, n),
            "y": y,
            "pred": (s >= 0.5).astype(np.int8),
            "score": s,
        }
    )


OPTIONS: dict[str, object] = {
    "y_true": "y",
    "y_pred": "pred",
    "y_score": "score",
    "by": ["group", "region"],
    "decimals": 2,
}
REFERENCE = {"group": "g0", "region": "north"}


def build(store: str, days: int, n: int, rows_path: Path) -> float:
    t0 = time.perf_counter()
    frames = []
    for d in range(days):
        rows = day_rows(d, n)
        frames.append(rows)
        monitor.append_batch(
            rows, store, batch_id=f"day-{d:03d}", period=D0 + dt.timedelta(days=d), **OPTIONS
        )
    pl.concat(frames).write_parquet(rows_path)
    return time.perf_counter() - t0


def audit(counts: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    criteria = pfm.fairness_criteria(counts, reference=REFERENCE)
    disparities = pfm.disparities(counts, reference=REFERENCE)
    return criteria, disparities


def audit_window(store: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    return audit(monitor.read_counts(store, merge=True).collect())


def audit_periods(store: str) -> pl.DataFrame:
    return monitor.period_criteria(monitor.read_counts(store), reference=REFERENCE).collect()


def calibration_window(store: str) -> pl.DataFrame:
    cells = monitor.read_cells(store, merge=True).collect()
    return pfm.calibration_disparities(cells, reference="rest", strategy="quantile")


def recount(rows_path: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    counts = pfm.confusion_counts(
        pl.scan_parquet(rows_path),
        y_true="y",
        y_pred="pred",
        by=["group", "region"],
        separately=True,
    ).collect(engine="streaming")
    return audit(counts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--rows", type=int, default=20_000, help="rows per daily batch")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--compact", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks" / "monitor.md"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "store")
        rows_path = Path(tmp) / "rows.parquet"
        build_s = build(store, args.days, args.rows, rows_path)
        # the window from the store is the recount of its rows, to the last bit for counts
        merged = monitor.read_counts(store, merge=True).collect().drop("model")
        direct = pfm.confusion_counts(
            pl.read_parquet(rows_path),
            y_true="y",
            y_pred="pred",
            by=["group", "region"],
            separately=True,
        )
        order = ["attribute", "group", "region"]
        assert merged.sort(order, nulls_last=True).equals(direct.sort(order, nulls_last=True))
        r: dict[str, float] = {}
        audit_window(store)  # warm the page cache and the imports
        r["read"] = best_of(lambda: monitor.read_counts(store, merge=True).collect(), args.repeat)
        r["audit"] = best_of(lambda: audit_window(store), args.repeat)
        r["periods"] = best_of(lambda: audit_periods(store), args.repeat)
        r["calibration"] = best_of(lambda: calibration_window(store), args.repeat)
        r["recount"] = best_of(lambda: recount(rows_path), args.repeat)
        extra = day_rows(args.days, args.rows)
        day = D0 + dt.timedelta(days=args.days)
        r["append"] = best_of(
            lambda: monitor.append_batch(extra, store, batch_id="extra", period=day, **OPTIONS),
            args.repeat,
        )
        files = len(list(Path(store).rglob("*.parquet")))
        if args.compact:
            import deltalake

            table = deltalake.DeltaTable(store)
            table.optimize.compact()
            table.create_checkpoint()
            r["compacted"] = best_of(lambda: audit_window(store), args.repeat)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    cmd = " ".join(["python", "benchmarks/bench_monitor.py", *sys.argv[1:]])
    lines = [
        "# Monitoring: auditing a window of a count store",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, polars "
        f"{pl.__version__}, {os.cpu_count()} cores (1-minute load average at the end: "
        f"{load:.1f}); times are best of {args.repeat}.",
        "",
        f"The store: {args.days} daily batches (one Delta commit each) of {args.rows:,} rows, "
        "two attributes side by side (`group`: 8 groups, `region`: 3), confusion counts and "
        f"score cells (2 decimals); {files} data files. Building it took {build_s:.1f} s "
        "(untimed below). The window read from the store equals the recount of its rows to the "
        "last bit (checked by the script).",
        "",
        "| step | time (s) |",
        "|---|---:|",
        f"| read window (`read_counts(merge=True)`) | {r['read']:.3f} |",
        f"| **audit window** (read + all criteria + all metrics' disparities) | "
        f"**{r['audit']:.3f}** |",
        f"| audit per period (`period_criteria`, {args.days} periods) | {r['periods']:.3f} |",
        f"| calibration window (`read_cells` + `calibration_disparities`) | "
        f"{r['calibration']:.3f} |",
        f"| append one batch ({args.rows:,} rows, one commit) | {r['append']:.3f} |",
        f"| recount the window's rows ({args.days * args.rows:,} rows, streaming) + audit | "
        f"{r['recount']:.3f} |",
    ]
    if "compacted" in r:
        lines.append(
            f"| audit window after `optimize.compact()` + checkpoint | {r['compacted']:.3f} |"
        )
    lines += [
        "",
        "Target: auditing a 365-day window of daily stores of 8 groups in at most 1 s.",
        "",
    ]
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
