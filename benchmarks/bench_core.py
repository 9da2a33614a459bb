"""Benchmark: group metrics + disparities report vs the floor and vs fairlearn's MetricFrame.

Generates parquet files (1e5, 1e6, 1e7 rows; 4 groups; labels, predictions, weights) in a
temporary folder and times, side by side in one run:

- floor: one plain Polars ``group_by`` count pass over the same file
  (``scan_parquet().group_by([group, y, pred]).agg(len, sum(w))``, streaming engine);
- ours: ``confusion_counts`` (one streaming scan) + every confusion metric + disparities against
  a named reference + the named fairness criteria, weighted, all groups;
- fairlearn: ``MetricFrame`` with the same metrics (those fairlearn/scikit-learn provide) and
  ``sample_weight``, plus ``difference()``/``ratio()``, on the same data read into pandas
  (reading time excluded), at the sizes it finishes in reasonable time.

Writes ``docs/benchmarks/core.md``. Run: ``python benchmarks/bench_core.py [--sizes 1e5,1e6,1e7]``.
"""

from __future__ import annotations

import argparse
import platform
import statistics
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


def make_data(n: int, path: Path, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    chunk = 2_000_000
    frames = []
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        g = rng.choice(np.array(["a", "b", "c", "d"]), m, p=[0.4, 0.3, 0.2, 0.1])
        y = rng.random(m) < 0.3
        p = np.where(rng.random(m) < 0.8, y, ~y)
        frames.append(
            pl.DataFrame(
                {
                    "group": g,
                    "y": y.astype(np.int8),
                    "pred": p.astype(np.int8),
                    "w": rng.random(m) * 2,
                }
            )
        )
    pl.concat(frames).write_parquet(path, row_group_size=1_000_000)


def floor(path: Path) -> pl.DataFrame:
    return (
        pl.scan_parquet(path)
        .group_by(["group", "y", "pred"])
        .agg(pl.len(), pl.col("w").sum())
        .collect(engine="streaming")
    )


def ours(path: Path) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    counts = pfm.confusion_counts(
        pl.scan_parquet(path), y_true="y", y_pred="pred", by="group", weight="w"
    ).collect(engine="streaming")
    metrics = pfm.metrics_from_counts(counts)
    disp = pfm.disparities(counts, by="group", reference="a")
    crit = pfm.fairness_criteria(counts, by="group", reference="a")
    return metrics, disp, crit


def fairlearn_report(pdf: object) -> object:
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
    w = pdf["w"].to_numpy()  # type: ignore[index]
    sample_params = {k: {"sample_weight": w} for k in metrics}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mf = MetricFrame(
            metrics=metrics,
            y_true=pdf["y"],
            y_pred=pdf["pred"],  # type: ignore[index]
            sensitive_features=pdf["group"],
            sample_params=sample_params,
        )  # type: ignore[index]
        return mf.by_group, mf.difference(), mf.ratio()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1e5,1e6,1e7")
    ap.add_argument(
        "--fairlearn-max",
        type=float,
        default=1e6,
        help="largest size at which to run fairlearn's MetricFrame",
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks" / "core.md"))
    args = ap.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = Path(tmp) / f"data_{n}.parquet"
            make_data(n, path)
            floor(path)  # warm the page cache
            t_floor = best_of(lambda path=path: floor(path), args.repeat)
            t_ours = best_of(lambda path=path: ours(path), args.repeat)
            t_fl = None
            if n <= args.fairlearn_max:
                pdf = pl.read_parquet(path).to_pandas()
                t_fl = best_of(lambda pdf=pdf: fairlearn_report(pdf), 1)
            rows.append((n, t_floor, t_ours, t_fl))
            fl = f"{t_fl:.3f}s" if t_fl is not None else "not run"
            print(
                f"n={n:>10,}: floor {t_floor:.3f}s  ours {t_ours:.3f}s "
                f"({t_ours / t_floor:.2f}x floor)  fairlearn {fl}",
                flush=True,
            )
    cmd = "python benchmarks/bench_core.py " + " ".join(sys.argv[1:])
    lines = [
        "# Core report: group metrics + disparities",
        "",
        f"Command: `{cmd.strip()}`  ",
        f"Machine: {platform.machine()}, {platform.python_version()}, polars {pl.__version__}, "
        "2 cores, no other job running (ratios are from one run, best of "
        f"{args.repeat}).",
        "",
        "*ours* = one streaming scan to the weighted count table of 4 groups + all 17 confusion "
        "metrics + disparities against a named reference + the named fairness criteria. "
        "*floor* = one plain `scan_parquet().group_by([group, y, pred]).agg(len, sum(w))`. "
        "*fairlearn* = `MetricFrame` with 10 metrics (its own and scikit-learn's) with "
        "`sample_weight`, `difference()` and `ratio()`, on a pandas frame already in memory.",
        "",
        "| rows | floor (s) | ours (s) | ours / floor | fairlearn (s) | fairlearn / ours |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for n, tf, to, tfl in rows:
        fl = f"{tfl:.3f}" if tfl is not None else "—"
        sp = f"{tfl / to:.0f}×" if tfl is not None else "—"
        lines.append(f"| {n:,} | {tf:.3f} | {to:.3f} | {to / tf:.2f} | {fl} | {sp} |")
    ratios = [to / tf for _, tf, to, _ in rows]
    lines += ["", f"Median ours/floor: {statistics.median(ratios):.2f}.", ""]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
