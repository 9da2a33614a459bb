"""Benchmark: the ``.fair`` expression form vs the count-table fast path vs the plain Polars floor.

Generates parquet files in a temporary folder (chunks of ``--chunk`` rows: 4 groups ``a``–``d``,
labels, predictions, weights; deleted afterwards). Side by side in one run:

- timing at ``--rows`` (default 1e7; the first files of the data), medians of ``--repeat``
  interleaved rounds (each round times every variant once):

  - floor: ``scan_parquet → group_by([group, y, pred]) → len, sum(w)``, streaming;
  - counts: ``confusion_counts(..., weight=w)`` (the count scan, with its validation), streaming;
  - fast path: ``group_metrics(..., weight=w, metrics=FIVE)``, streaming;
  - expression: ``group_by(group).agg(pl.col(pred).fair.<m>(y_true=y, weight=w) for m in FIVE)``
    on the streaming engine (the five metrics in one ``agg``), and the same with one metric, and
    with the in-memory engine;

- peak memory at ``--memory-rows`` (default 1e8, every file), streaming: one fresh subprocess per
  variant (floor, counts, fast path, expression), which reports its own peak RSS (``VmHWM`` of
  ``/proc/self/status``: the high-water mark of its own address space; ``ru_maxrss`` is inherited
  across ``fork``) and its wall time;

- ``import polars_fairmetrics`` beyond ``import polars``: wall and CPU time (best of 9 fresh
  interpreters) and peak RSS.

FIVE = true positive rate, false positive rate, precision, selection rate, accuracy.
Writes ``docs/benchmarks/expressions.md`` (and the raw numbers next to it, ``expressions.json``).
Run: ``python benchmarks/bench_expressions.py [--rows 1e7] [--memory-rows 1e8] [--chunk 1e7]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import interleaved, load_average  # noqa: E402

FIVE = ["true_positive_rate", "false_positive_rate", "precision", "selection_rate", "accuracy"]
MEMORY_MODES = ["floor", "counts", "fast", "expression"]


def make_data(n: int, chunk: int, folder: Path, seed: int = 0) -> list[Path]:
    """Write ``n`` rows as parquet files of ``chunk`` rows each; return their paths."""
    rng = np.random.default_rng(seed)
    paths = []
    for i, start in enumerate(range(0, n, chunk)):
        m = min(chunk, n - start)
        g = rng.choice(np.array(["a", "b", "c", "d"]), m, p=[0.4, 0.3, 0.2, 0.1])
        y = rng.random(m) < 0.3
        p = np.where(rng.random(m) < 0.8, y, ~y)
        path = folder / f"part-{i:05d}.parquet"
        pl.DataFrame(
            {"group": g, "y": y.astype(np.int8), "pred": p.astype(np.int8), "w": rng.random(m) * 2}
        ).write_parquet(path, row_group_size=1_000_000)
        paths.append(path)
    return paths


def queries(files: list[str]) -> dict[str, tuple[pl.LazyFrame, str]]:
    """Every timed variant: its lazy query and the engine it is collected with."""
    import polars_fairmetrics as pfm

    lf = pl.scan_parquet(files)
    opts: dict[str, Any] = {"y_true": "y", "y_pred": "pred", "by": "group", "weight": "w"}
    five = [pl.col("pred").fair.metric(m, y_true="y", weight="w") for m in FIVE]
    one = [pl.col("pred").fair.true_positive_rate(y_true="y", weight="w")]
    return {
        "floor": (
            lf.group_by(["group", "y", "pred"]).agg(pl.len(), pl.col("w").sum()),
            "streaming",
        ),
        "counts": (pfm.confusion_counts(lf, **opts), "streaming"),
        "fast": (pfm.group_metrics(lf, metrics=FIVE, **opts), "streaming"),
        "expression": (lf.group_by("group").agg(five), "streaming"),
        "expression-1": (lf.group_by("group").agg(one), "streaming"),
        "expression-in-memory": (lf.group_by("group").agg(five), "in-memory"),
    }


def peak_rss() -> int:
    """Peak resident set size of this process (bytes), from ``VmHWM``."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # pragma: no cover


def child(mode: str, files: list[str]) -> None:
    """Run one variant on the streaming engine; print a JSON line (seconds, peak RSS)."""
    query, engine = queries(files)[mode]
    base = peak_rss()
    t0 = time.perf_counter()
    out = query.collect(engine=engine)  # type: ignore[call-overload]
    seconds = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "mode": mode,
                "seconds": seconds,
                "peak_rss": peak_rss(),
                "base_rss": base,
                "height": out.height,
            }
        )
    )


def run_child(mode: str, files: list[Path]) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--child", mode, "--files", *map(str, files)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    out: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def import_cost(repeat: int = 9) -> dict[str, float]:
    """Wall and CPU seconds, peak RSS of ``import polars_fairmetrics`` beyond ``import polars``."""
    # as installed: bytecode cached (a private cache folder; one warm-up import writes it)
    cache = tempfile.mkdtemp(prefix="pfm_pycache_")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONPYCACHEPREFIX": cache}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    probe = (  # VmHWM, not ru_maxrss: that one inherits this (larger) process's peak
        "import time; t = time.perf_counter(); import {mod}; w = time.perf_counter() - t; "
        "from pathlib import Path; s = Path('/proc/self/status').read_text(); "
        "print(w, next(ln.split()[1] for ln in s.splitlines() if ln.startswith('VmHWM:')))"
    )

    def measure(mod: str) -> tuple[float, float, float]:
        subprocess.run([sys.executable, "-c", f"import {mod}"], check=True, env=env)  # warm-up
        walls, cpus, rss = [], [], []
        for _ in range(repeat):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            out = subprocess.run(
                [sys.executable, "-c", probe.format(mod=mod)],
                capture_output=True,
                text=True,
                check=True,
                env=env,
            ).stdout.split()
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            walls.append(float(out[0]))
            cpus.append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
            rss.append(float(out[1]) * 1024)
        return min(walls), min(cpus), statistics.median(rss)

    try:
        pw, pc, pr = measure("polars")
        fw, fc, fr = measure("polars_fairmetrics")
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return {"wall": fw - pw, "cpu": fc - pc, "rss": fr - pr, "polars_wall": pw}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--memory-rows", type=float, default=1e8)
    ap.add_argument("--chunk", type=float, default=1e7)
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--memory-repeat", type=int, default=3)
    ap.add_argument("--child", choices=[*MEMORY_MODES, "expression-1", "expression-in-memory"])
    ap.add_argument("--files", nargs="*")
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks" / "expressions.md"))
    args = ap.parse_args()
    if args.child:
        child(args.child, args.files)
        return
    rows, memory_rows, chunk = int(args.rows), int(args.memory_rows), int(args.chunk)
    folder = Path(tempfile.mkdtemp(prefix="pfm_bench_expressions_"))
    try:
        t0 = time.perf_counter()
        files = make_data(max(rows, memory_rows), chunk, folder)
        gen_s = time.perf_counter() - t0
        size_gb = sum(f.stat().st_size for f in files) / 1e9
        print(
            f"generated {max(rows, memory_rows):,} rows ({size_gb:.2f} GB) in {gen_s:.0f} s",
            flush=True,
        )
        timing_files = [str(f) for f in files[: max(1, -(-rows // chunk))]]
        load_start = load_average()[0]
        variants = {
            name: (lambda q=query, e=engine: q.collect(engine=e))
            for name, (query, engine) in queries(timing_files).items()
        }
        for run in variants.values():
            run()  # warm the file cache and the first calls
        # every round times each variant once, in turn: a change in the machine's load hits
        # all of them alike (the ratios near a target are within a few per cent)
        timing = interleaved(variants, args.repeat)
        for name, seconds in timing.items():
            print(f"{name:22s} {seconds:.3f} s", flush=True)
        memory_files = files[: max(1, -(-memory_rows // chunk))]
        memory: dict[str, dict[str, float]] = {}
        for mode in MEMORY_MODES:
            runs = [run_child(mode, memory_files) for _ in range(args.memory_repeat)]
            memory[mode] = {
                "seconds": statistics.median(r["seconds"] for r in runs),
                "peak_rss": statistics.median(r["peak_rss"] for r in runs),
                "peak_min": min(r["peak_rss"] for r in runs),
                "peak_max": max(r["peak_rss"] for r in runs),
                "base_rss": statistics.median(r["base_rss"] for r in runs),
            }
            print(mode, memory[mode], flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    imports = import_cost()
    print("import", imports, flush=True)
    raw = {
        "argv": sys.argv[1:],
        "rows": rows,
        "memory_rows": memory_rows,
        "chunk": chunk,
        "size_gb": size_gb,
        "gen_s": gen_s,
        "repeat": args.repeat,
        "memory_repeat": args.memory_repeat,
        "load": os.getloadavg()[0],
        "load_start": load_start,
        "timing": timing,
        "memory": memory,
        "imports": imports,
    }
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(raw, indent=1), encoding="utf-8")
    out.write_text(render(raw), encoding="utf-8")
    print(f"wrote {out}")


def _verdict(ratio: float, target: float) -> str:
    return (
        f"**{ratio:.2f}×** ({'within' if ratio <= target else 'NOT within'} the {target}× target)"
    )


def render(raw: dict[str, Any]) -> str:
    t, m, imp = raw["timing"], raw["memory"], raw["imports"]
    mib = 1024 * 1024
    command = f"python benchmarks/bench_expressions.py {' '.join(raw['argv'])}".rstrip()
    lines = [
        "# The `.fair` expression form vs the count-table fast path vs the floor",
        "",
        f"Command: `{command}`  ",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, "
        f"polars {pl.__version__}, {os.cpu_count()} cores "
        f"(1-minute load average {raw.get('load_start', float('nan')):.1f} before the timings, "
        f"{raw['load']:.1f} at the end of the run, this run included; no other job ran).",
        "",
        f"Data: {max(raw['rows'], raw['memory_rows']):,} rows generated into parquet files of "
        f"{raw['chunk']:,} rows ({raw['size_gb']:.2f} GB, {raw['gen_s']:.0f} s to generate, "
        "deleted afterwards): `group` (String, 4 groups a–d, 40/30/20/10 %), `y`, `pred` (Int8 "
        "0/1), `w` (Float64 in [0, 2)). The timings use the first "
        f"{raw['rows']:,} rows; the memory runs all {raw['memory_rows']:,}.",
        "",
        "The five weighted metrics: " + ", ".join(f"`{m}`" for m in FIVE) + ".",
        "",
        "- *floor*: `scan_parquet → group_by([group, y, pred]) → len, sum(w)`, streaming;",
        '- *counts*: `confusion_counts(..., weight="w")` — the count scan: per cell, beside the '
        "floor's `len` and `sum(w)`, one validation aggregation (the weight's `min`: a negative "
        "weight or −∞; NaN and +∞ show in the sum) and the null count of the weight (the rows "
        "left out, which the count table reports);",
        '- *fast path*: `group_metrics(..., weight="w", metrics=FIVE)`;',
        '- *expression*: `lf.group_by("group").agg(pl.col("pred").fair.<metric>(y_true="y", '
        'weight="w") for the five)`, streaming (*expression, 1 metric*: the true positive rate '
        "alone; *in-memory*: the five, `collect()` on the in-memory engine).",
        "",
        f"## Time at {raw['rows']:,} rows (medians of {raw['repeat']} interleaved rounds)",
        "",
        "Each round times every variant once, in turn, so a change in the machine's load hits "
        "them alike.",
        "",
        "| variant | seconds | / floor | / fast path |",
        "|---|---:|---:|---:|",
    ]
    names = {
        "floor": "floor",
        "counts": "counts",
        "fast": "fast path",
        "expression": "expression, 5 metrics",
        "expression-1": "expression, 1 metric",
        "expression-in-memory": "expression, 5 metrics, in-memory engine",
    }
    for key, label in names.items():
        lines.append(
            f"| {label} | {t[key]:.3f} | {t[key] / t['floor']:.2f} | {t[key] / t['fast']:.2f} |"
        )
    lines += [
        "",
        f"## Peak memory at {raw['memory_rows']:,} rows, streaming ({raw['memory_repeat']} runs, "
        "medians)",
        "",
        "Each variant runs in a fresh subprocess and reports its own peak RSS (`VmHWM`, including "
        "the interpreter, polars and the package; *baseline* is that figure right after the "
        "imports).",
        "",
        "| variant | seconds | peak RSS (MiB) | peak range (MiB) | baseline (MiB) | peak / fast "
        "path's |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key in MEMORY_MODES:
        r = m[key]
        lines.append(
            f"| {names[key]} | {r['seconds']:.2f} | {r['peak_rss'] / mib:.0f} | "
            f"{r['peak_min'] / mib:.0f}–{r['peak_max'] / mib:.0f} | {r['base_rss'] / mib:.0f} | "
            f"{r['peak_rss'] / m['fast']['peak_rss']:.2f} |"
        )
    lines += [
        "",
        "## `import polars_fairmetrics` beyond `import polars`",
        "",
        f"{imp['wall']:.3f} s wall, {imp['cpu']:.3f} s CPU, {imp['rss'] / mib:.1f} MiB peak RSS "
        f"(best of 9 fresh interpreters, bytecode cached as in an installed package; "
        f"`import polars` itself: {imp['polars_wall']:.3f} s).",
        "",
        "## Targets",
        "",
        "- expression form, 5 weighted metrics in one `agg`, time / fast path: "
        + _verdict(t["expression"] / t["fast"], 1.3),
        "- expression form, peak memory / fast path's, streaming: "
        + _verdict(m["expression"]["peak_rss"] / m["fast"]["peak_rss"], 1.2),
        "- `confusion_counts` time / floor: " + _verdict(t["counts"] / t["floor"], 1.1),
        "- `confusion_counts` at the memory run's size, time / floor: "
        + _verdict(m["counts"]["seconds"] / m["floor"]["seconds"], 1.1),
        f"- import beyond polars: **{imp['wall']:.3f} s** "
        f"({'within' if imp['wall'] <= 0.1 else 'NOT within'} the 0.1 s target)",
        "",
        "Raw numbers: `docs/benchmarks/expressions.json`.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
