"""Benchmark: the full audit report vs the floor (one plain Polars count pass) and fairlearn.

Generates parquet files (4 groups × 2 sexes; labels, predictions, weights) in a temporary folder
and times, side by side in one run (the floor, the scan and the audit alternate, medians of
``--repeat`` rounds, so a load spike hits them alike):

- floor: one plain Polars ``group_by`` count pass over the same file
  (``scan_parquet().group_by([group, sex, y, pred]).agg(len, sum(w))``, streaming engine);
- scan: the audit's one scan alone (``confusion_counts`` of both attributes, collected);
- audit: ``audit()`` of both attributes (weighted; groups, 10 metrics, disparities against named
  references, the 9 criteria, between-groups, undefined values), streaming engine: the scan,
  then every table computed once from the collected count table; *tables* = audit − scan;
- audit + render: the same, then JSON, Markdown and the HTML page with its inline SVG plots;
- fairlearn: one ``MetricFrame`` per attribute with the same metrics (its own and scikit-learn's)
  and ``sample_weight``, plus ``difference()``/``ratio()``, on a pandas frame already in memory
  (reading time excluded), at the smallest size only (it takes a minute at 1e6 rows: see
  ``docs/benchmarks/core.md``).

Writes ``docs/benchmarks/report.md``. Run:
``python benchmarks/bench_report.py [--sizes 1e5,1e6,1e7] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import best_of, interleaved, load_note  # noqa: E402

import polars_fairmetrics as pfm  # noqa: E402


def make_data(n: int, path: Path, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    chunk = 2_000_000
    frames = []
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        g = rng.choice(np.array(["a", "b", "c", "d"]), m, p=[0.4, 0.3, 0.2, 0.1])
        s = rng.choice(np.array(["F", "M"]), m)
        y = rng.random(m) < 0.3
        p = np.where(rng.random(m) < 0.8, y, ~y)
        frames.append(
            pl.DataFrame(
                {
                    "group": g,
                    "sex": s,
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
        .group_by(["group", "sex", "y", "pred"])
        .agg(pl.len(), pl.col("w").sum())
        .collect(engine="streaming")
    )


def scan(path: Path) -> pl.DataFrame:
    return pfm.confusion_counts(
        pl.scan_parquet(path), y_true="y", y_pred="pred", by=["group", "sex"], weight="w"
    ).collect(engine="streaming")


def run_audit(path: Path) -> pfm.Report:
    return pfm.audit(
        pl.scan_parquet(path),
        y_true="y",
        y_pred="pred",
        by=["group", "sex"],
        weight="w",
        reference={"group": "a", "sex": "M"},
        engine="streaming",
    )


def audit_and_render(path: Path, out: Path) -> None:
    r = run_audit(path)
    r.to_json(out / "r.json")
    r.to_markdown(out / "r.md")
    r.to_html(out / "r.html")


def fairlearn_report(pdf: object) -> None:
    from fairlearn.metrics import (
        MetricFrame,
        false_negative_rate,
        false_positive_rate,
        selection_rate,
        true_positive_rate,
    )
    from sklearn.metrics import (
        accuracy_score,
        balanced_accuracy_score,
        f1_score,
        precision_score,
    )

    metrics = {
        "selection_rate": selection_rate,
        "accuracy": accuracy_score,
        "balanced_accuracy": balanced_accuracy_score,
        "tpr": true_positive_rate,
        "fpr": false_positive_rate,
        "fnr": false_negative_rate,
        "ppv": precision_score,
        "f1": f1_score,
    }
    for attr in ("group", "sex"):
        mf = MetricFrame(
            metrics=metrics,
            y_true=pdf["y"],
            y_pred=pdf["pred"],  # type: ignore[index]
            sensitive_features=pdf[attr],  # type: ignore[index]
            sample_params={
                k: {"sample_weight": pdf["w"]}  # type: ignore[index]
                for k in metrics
            },
        )
        _ = mf.by_group
        mf.difference()
        mf.ratio()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1e5,1e6,1e7")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-fairlearn", action="store_true", help="skip the fairlearn column")
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks" / "report.md"))
    args = ap.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for i, n in enumerate(sizes):
            path = d / f"data_{n}.parquet"
            make_data(n, path)
            run_audit(path)  # warm-up
            t = interleaved(
                {
                    "floor": lambda p=path: floor(p),
                    "scan": lambda p=path: scan(p),
                    "audit": lambda p=path: run_audit(p),
                },
                args.repeat,
            )
            t_render = best_of(lambda p=path: audit_and_render(p, d), min(args.repeat, 3))
            t_fl = None
            if i == 0 and not args.no_fairlearn:
                pdf = pl.read_parquet(path).to_pandas()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t_fl = best_of(lambda frame=pdf: fairlearn_report(frame), 1)
            rows.append((n, t["floor"], t["scan"], t["audit"], t_render, t_fl))
            print(n, t, t_render, t_fl, flush=True)
    lines = [
        "# Audit report",
        "",
        f"Command: `python benchmarks/bench_report.py --sizes {args.sizes} "
        f"--repeat {args.repeat}{' --no-fairlearn' if args.no_fairlearn else ''}`  ",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, polars "
        f"{pl.__version__}; floor, scan and audit alternate within each of the {args.repeat} "
        "rounds (medians), so a load spike hits them alike.  ",
        load_note(),
        "",
        "*floor* = one plain `scan_parquet().group_by([group, sex, y, pred]).agg(len, sum(w))`. "
        "*scan* = the audit's one scan alone (`confusion_counts`, weighted, collected). "
        "*audit* = `audit()` of two attributes (4 groups and 2 sexes), weighted: groups, 10 "
        "metrics, disparities against named references, the 9 fairness criteria, "
        "between-groups and undefined values — the scan, then every table computed once from "
        "the collected count table; *tables* = audit − scan. *+ render* = the audit, then "
        "JSON, Markdown and the HTML page with its inline SVG plots (matplotlib). *fairlearn* = "
        "one `MetricFrame` "
        "per attribute with 8 metrics and `sample_weight`, `difference()` and `ratio()`, on a "
        "pandas frame already in memory (smallest size only).",
        "",
        "| rows | floor (s) | scan (s) | audit (s) | audit / floor | tables (s) "
        "| audit + render (s) | fairlearn (s) | fairlearn / audit |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, tf, ts, ta, tr, tfl in rows:
        fl = f"{tfl:.3f}" if tfl is not None else "—"
        flr = f"{tfl / ta:.0f}×" if tfl is not None else "—"
        lines.append(
            f"| {n:,} | {tf:.3f} | {ts:.3f} | {ta:.3f} | {ta / tf:.2f} | {max(ta - ts, 0):.3f} "
            f"| {tr:.3f} | {fl} | {flr} |"
        )
    extra = [tr - ta for _, _, _, ta, tr, _ in rows]
    lines += [
        "",
        "The audit costs one scan plus a constant (every table comes from the small count table "
        "computed once): its ratio to the floor falls toward 1 as the file grows. Rendering "
        f"(JSON, Markdown, HTML with four inline SVG plots drawn by matplotlib) adds "
        f"{min(extra):.1f}–{max(extra):.1f} s at every size: it depends on the number of groups "
        "and plots, not on the rows.",
        "",
    ]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
