"""Benchmark: ensemble stability/uncertainty metrics vs a vectorised NumPy lower bound.

Generates an ensemble of ``M`` models' Float32 probabilities for ``N`` test rows (a binary
sensitive attribute ``group`` with levels ``dis`` (30 %) / ``priv``, a label ``y``) and times,
side by side in one run, the same quantities computed two ways from the same data in memory:

- **NumPy lower bound** (the target's denominator): the 9 ensemble metrics per row (one
  ``np.sort`` per row for the IQR and the ascending-order sums, two-pass variance, binary
  entropies with ``np.log``, votes by comparison, jitter from the vote count) and their means per
  group (``np.bincount``), the ensemble label's confusion counts per group and the 17 confusion
  metrics from them. Vectorised over rows, no validation, no Python per row: what any
  NumPy implementation must at least do;
- **ours**: ``ensemble_group_metrics(df.lazy(), models=..., by="group", y_true="y")`` (all 9
  ensemble + 17 confusion metrics per group, with the package's validation), on the in-memory
  engine and on the streaming engine.

The headline ratio is ours / NumPy in wall-clock seconds (target at 1e6 × 20: <= 1.1); CPU
seconds of all threads are shown beside (Polars uses every core, NumPy one). Then, unless
``--target-only``: the floor (one plain streaming pass over the wide parquet file), ours
streaming from that file, ``ensemble_disparities``, the list and long layouts, and Virny's way
(Virny's algorithm re-written in pandas, see :func:`virny_way`; not installed here) with its
vectorised variant.

Writes ``docs/benchmarks/ensemble.md`` (``--out``). Run (quiet machine):
``python benchmarks/bench_ensemble.py --sizes 1e5,1e6 --models 20``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import load_note  # noqa: E402

import polars_fairmetrics as pfm  # noqa: E402
from polars_fairmetrics.ensemble import (  # noqa: E402
    ensemble_disparities,
    ensemble_group_metrics,
    ensemble_sample_metrics,
)


def make_data(n: int, m: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    group = np.where(rng.random(n) < 0.3, "dis", "priv")
    logit = rng.normal(-1.0, 2.0, n) + np.where(group == "dis", -0.3, 0.0)
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.int8)
    noise = rng.normal(0.0, 0.6, (n, m)) * np.where(group == "dis", 1.3, 1.0)[:, None]
    probs = (1 / (1 + np.exp(-(logit[:, None] + noise)))).astype(np.float32)
    cols = {f"p{j:02d}": probs[:, j] for j in range(m)}
    return pl.DataFrame({"row": np.arange(n, dtype=np.int32), "group": group, "y": y, **cols})


CPU: dict[float, float] = {}
"""Median CPU seconds (all threads of this process) of a timing, keyed by its median wall time."""


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """Median wall seconds of ``repeat`` calls (median CPU seconds recorded in :data:`CPU`).

    (The name is kept from the other scripts: a median, not a minimum, is what pages quote.)
    """
    return interleaved_cpu({"only": fn}, repeat)["only"]


def interleaved_cpu(variants: Mapping[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median wall seconds of each variant, timed in turn ``repeat`` times (as
    ``_common.interleaved``), with the median CPU seconds of each recorded in :data:`CPU`."""
    walls: dict[str, list[float]] = {k: [] for k in variants}
    cpus: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(repeat):
        for name, fn in variants.items():
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            walls[name].append(time.perf_counter() - t0)
            cpus[name].append(time.process_time() - c0)
    out = {}
    for name in variants:
        wall = statistics.median(walls[name])
        CPU[wall] = statistics.median(cpus[name])
        out[name] = wall
    return out


# ------------------------------------------------------------------------------- the target


CONFUSION = {
    "accuracy": lambda tp, fp, tn, fn: (tp + tn) / (tp + fp + tn + fn),
    "error_rate": lambda tp, fp, tn, fn: (fp + fn) / (tp + fp + tn + fn),
    "balanced_accuracy": lambda tp, fp, tn, fn: (tp / (tp + fn) + tn / (tn + fp)) / 2,
    "balanced_error_rate": lambda tp, fp, tn, fn: (fn / (tp + fn) + fp / (tn + fp)) / 2,
    "true_positive_rate": lambda tp, fp, tn, fn: tp / (tp + fn),
    "false_negative_rate": lambda tp, fp, tn, fn: fn / (tp + fn),
    "false_positive_rate": lambda tp, fp, tn, fn: fp / (fp + tn),
    "true_negative_rate": lambda tp, fp, tn, fn: tn / (fp + tn),
    "positive_predictive_value": lambda tp, fp, tn, fn: tp / (tp + fp),
    "negative_predictive_value": lambda tp, fp, tn, fn: tn / (tn + fn),
    "false_discovery_rate": lambda tp, fp, tn, fn: fp / (tp + fp),
    "false_omission_rate": lambda tp, fp, tn, fn: fn / (tn + fn),
    "f1_score": lambda tp, fp, tn, fn: 2 * tp / (2 * tp + fp + fn),
    "selection_rate": lambda tp, fp, tn, fn: (tp + fp) / (tp + fp + tn + fn),
    "base_rate": lambda tp, fp, tn, fn: (tp + fn) / (tp + fp + tn + fn),
    "g_mean": lambda tp, fp, tn, fn: np.sqrt(tp / (tp + fn) * tn / (tn + fp)),
    "matthews_corrcoef": lambda tp, fp, tn, fn: (
        (tp * tn - fp * fn) / np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    ),
}


def numpy_lower_bound(
    probs: np.ndarray, group: np.ndarray, y: np.ndarray, n_groups: int
) -> dict[str, np.ndarray]:
    """The 9 ensemble metrics' group means and 17 confusion metrics per group, in NumPy.

    ``probs``: (N, M) probabilities; ``group``: integer codes 0..n_groups-1; ``y``: 0/1.
    Convention ``"seed"`` (label 1 iff p >= 0.5), ``ddof=1``, entropies in bits.
    """
    x = np.sort(probs.astype(np.float64), axis=1)  # ascending: the IQR and the sums' order
    m = x.shape[1]
    s1 = x.sum(axis=1)
    mean = s1 / m
    dev = x - mean[:, None]
    var = np.einsum("ij,ij->i", dev, dev) / (m - 1)
    del dev

    def quantile(q: float) -> np.ndarray:  # numpy.quantile's linear method on sorted rows
        h = (m - 1) * q
        lo = int(np.floor(h))
        t = h - lo
        a, b = x[:, lo], x[:, min(lo + 1, m - 1)]
        return a + (b - a) * t if t < 0.5 else b - (b - a) * (1 - t)

    iqr = quantile(0.75) - quantile(0.25)
    k = (x >= 0.5).sum(axis=1).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = x * np.log(x)
        np.nan_to_num(ent, copy=False, nan=0.0)
        q = 1.0 - x
        ent_q = q * np.log(q)
        np.nan_to_num(ent_q, copy=False, nan=0.0)
        ent += ent_q
        del q, ent_q
        aleatoric = -ent.sum(axis=1) / (m * np.log(2.0))
        del ent
        pm = np.clip(mean, 1e-300, None)
        qm = np.clip(1.0 - mean, 1e-300, None)
        overall = -(mean * np.log(pm) + (1.0 - mean) * np.log(qm)) / np.log(2.0)
    per_row = {
        "mean_probability": mean,
        "std_probability": np.sqrt(var),
        "iqr_probability": iqr,
        "label_stability": np.abs(2 * k - m) / m,
        "jitter": 2 * k * (m - k) / (m * (m - 1)),
        "aleatoric_uncertainty": aleatoric,
        "overall_uncertainty": overall,
        "epistemic_variance": var,
        "epistemic_mutual_information": overall - aleatoric,
    }
    size = np.bincount(group, minlength=n_groups)
    out = {
        name: np.bincount(group, weights=v, minlength=n_groups) / size
        for name, v in per_row.items()
    }
    label = mean >= 0.5
    cells = np.bincount(group * 4 + y * 2 + label, minlength=4 * n_groups).reshape(n_groups, 4)
    tn, fp, fn, tp = (cells[:, j].astype(np.float64) for j in range(4))
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, f in CONFUSION.items():
            out[name] = f(tp, fp, tn, fn)
    return out


def ours_in_memory(frame: pl.DataFrame, models: list[str], engine: str) -> pl.DataFrame:
    return ensemble_group_metrics(frame.lazy(), models=models, y_true="y", by="group").collect(
        engine=engine  # type: ignore[call-overload]
    )


def agreement(ours: pl.DataFrame, ref: dict[str, np.ndarray], levels: list[str]) -> float:
    """Largest |ours − NumPy| over every metric and group."""
    worst = 0.0
    for row in ours.iter_rows(named=True):
        want = float(ref[row["metric"]][levels.index(row["group"])])
        got = row["value"]
        if got is None or np.isnan(want):
            assert got is None and np.isnan(want), row
            continue
        worst = max(worst, abs(got - want))
    return worst


# ------------------------------------------------------------------------------- ours


def floor(path: Path, models: list[str]) -> pl.DataFrame:
    return (
        pl.scan_parquet(path)
        .group_by("group")
        .agg(pl.len(), *[pl.col(c).sum() for c in models])
        .collect(engine="streaming")
    )


def ours_wide(path: Path, models: list[str]) -> pl.DataFrame:
    return ensemble_group_metrics(
        pl.scan_parquet(path), models=models, y_true="y", by="group"
    ).collect(engine="streaming")


def ours_wide_disparities(path: Path, models: list[str]) -> pl.DataFrame:
    return ensemble_disparities(
        pl.scan_parquet(path),
        models=models,
        y_true="y",
        by="group",
        reference="rest",
        convention="virny",
    ).collect(engine="streaming")


def ours_long(path: Path) -> pl.DataFrame:
    return ensemble_group_metrics(
        pl.scan_parquet(path), row_id="row", model_col="model", prob_col="p", y_true="y", by="group"
    ).collect(engine="streaming")


def ours_list(frame: pl.DataFrame) -> pl.DataFrame:
    return ensemble_group_metrics(frame.lazy(), list_col="probs", y_true="y", by="group").collect()


# ------------------------------------------------------------------------------- Virny's way


def virny_way(pdf: object, models: list[str]) -> dict[str, dict[str, float]]:
    """Virny's computations, re-written in pandas the way Virny's metric functions do them."""
    import pandas as pd
    import scipy as sp
    from sklearn.metrics import accuracy_score, confusion_matrix, f1_score

    def entropy(x: float) -> float:
        return float(sp.stats.entropy([x, 1 - x], base=2))

    def entropy_col(col: pd.Series) -> float:
        return float(np.mean(sp.stats.entropy([col.to_numpy(), 1 - col.to_numpy()], base=2)))

    def metrics(sub: pd.DataFrame) -> dict[str, float]:
        probas = pd.DataFrame(sub[models].to_numpy(dtype=np.float64).T)  # models × samples
        labels = (probas > 0.5).astype(int)
        out: dict[str, float] = {}
        out["std"] = float(np.mean(probas.std().values))
        out["iqr"] = float(np.mean(sp.stats.iqr(probas, axis=0)))
        lab = labels.values
        n_models = lab.shape[0]
        churns = 0.0
        for i, j in itertools.combinations(range(n_models), 2):
            churns += float(np.mean(lab[i] != lab[j]))
        out["jitter"] = churns / (n_models * (n_models - 1) * 0.5)
        stab = []
        for sample in range(lab.shape[1]):
            preds = list(labels[sample].values)
            pos = sum(preds)
            stab.append(abs(pos - (len(preds) - pos)) / len(preds))
        out["label_stability"] = float(np.mean(stab))
        out["aleatoric"] = float(np.mean(probas.apply(entropy_col).values))
        main = probas.mean().values
        out["overall"] = float(np.mean([entropy(x) for x in main]))
        out["epistemic_mi"] = out["overall"] - out["aleatoric"]
        y_pred = (main > 0.5).astype(int)
        y = sub["y"].to_numpy()
        tn, fp, fn, tp = confusion_matrix(y, y_pred, labels=[0, 1]).ravel()
        out["tpr"] = tp / (tp + fn)
        out["fpr"] = fp / (fp + tn)
        out["accuracy"] = accuracy_score(y, y_pred)
        out["f1"] = f1_score(y, y_pred)
        out["selection_rate"] = float(np.mean(y_pred))
        return out

    frame = pdf  # type: ignore[assignment]
    result = {"overall": metrics(frame)}  # type: ignore[arg-type]
    for g in ("dis", "priv"):
        result[g] = metrics(frame[frame["group"] == g])  # type: ignore[index]
    return result


def virny_vectorised(pdf: object, models: list[str]) -> dict[str, dict[str, float]]:
    """Virny's algorithm with every per-sample Python loop replaced by NumPy (a lower bound).

    Still the O(M²·N) model-pair loop for jitter (each pair vectorised), pandas ``std``,
    ``scipy.stats.iqr`` and a vectorised SciPy entropy; overall, ``dis`` and ``priv`` rows.
    """
    import pandas as pd
    import scipy as sp

    def metrics(sub: pd.DataFrame) -> dict[str, float]:
        probas = pd.DataFrame(sub[models].to_numpy(dtype=np.float64).T)  # models × samples
        lab = (probas.to_numpy() > 0.5).astype(np.int64)
        out: dict[str, float] = {}
        out["std"] = float(np.mean(probas.std().values))
        out["iqr"] = float(np.mean(sp.stats.iqr(probas, axis=0)))
        n_models = lab.shape[0]
        churns = 0.0
        for i, j in itertools.combinations(range(n_models), 2):
            churns += float(np.mean(lab[i] != lab[j]))
        out["jitter"] = churns / (n_models * (n_models - 1) * 0.5)
        pos = lab.sum(axis=0)
        out["label_stability"] = float(np.mean(np.abs(pos - (n_models - pos)) / n_models))
        p = probas.to_numpy()
        out["aleatoric"] = float(np.mean(sp.stats.entropy([p, 1 - p], base=2)))
        main = p.mean(axis=0)
        out["overall"] = float(np.mean(sp.stats.entropy([main, 1 - main], base=2)))
        out["epistemic_mi"] = out["overall"] - out["aleatoric"]
        y_pred = (main > 0.5).astype(int)
        out["selection_rate"] = float(np.mean(y_pred))
        return out

    frame = pdf  # type: ignore[assignment]
    result = {"overall": metrics(frame)}  # type: ignore[arg-type]
    for g in ("dis", "priv"):
        result[g] = metrics(frame[frame["group"] == g])  # type: ignore[index]
    return result


# ------------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1e5,1e6")
    ap.add_argument("--models", type=int, default=20)
    ap.add_argument("--virny-max", type=float, default=1e5)
    ap.add_argument("--long-max", type=float, default=1e6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--target-only", action="store_true", help="only ours vs the NumPy lower bound")
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks" / "ensemble.md"))
    args = ap.parse_args()
    if not args.target_only:
        import pandas  # noqa: F401  (imported before timing: import time is not compute time)
        import scipy.stats  # noqa: F401
        import sklearn.metrics  # noqa: F401

    sizes = [int(float(s)) for s in args.sizes.split(",")]
    m = args.models
    models = [f"p{j:02d}" for j in range(m)]
    levels = ["dis", "priv"]
    targets = []
    results = []
    check_lines = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            df = make_data(n, m)
            # ---- the target: the same quantities from the same data in memory, side by side
            probs = df.select(models).to_numpy()
            codes = (df["group"] == "priv").cast(pl.Int64).to_numpy()
            y = df["y"].cast(pl.Int64).to_numpy()
            t: dict[str, float] = {"n": n}
            t.update(
                interleaved_cpu(
                    {
                        "numpy": lambda probs=probs, codes=codes, y=y: numpy_lower_bound(
                            probs, codes, y, 2
                        ),
                        "ours": lambda df=df: ours_in_memory(df, models, "in-memory"),
                        "ours_streaming": lambda df=df: ours_in_memory(df, models, "streaming"),
                    },
                    args.repeat,
                )
            )
            t["diff"] = agreement(
                ours_in_memory(df, models, "in-memory"),
                numpy_lower_bound(probs, codes, y, 2),
                levels,
            )
            targets.append(t)
            print(
                {k: (round(v, 3) if isinstance(v, float) else v) for k, v in t.items()}, flush=True
            )
            del probs
            if args.target_only:
                continue
            wide = Path(tmp) / f"wide_{n}.parquet"
            df.write_parquet(wide, row_group_size=250_000)
            r: dict[str, float | None] = {"n": n}
            floor(wide, models)  # warm the page cache
            r["floor"] = best_of(lambda wide=wide: floor(wide, models), args.repeat)
            r["wide"] = best_of(lambda wide=wide: ours_wide(wide, models), args.repeat)
            r["wide_disp"] = best_of(
                lambda wide=wide: ours_wide_disparities(wide, models), args.repeat
            )
            lst = df.select("row", "group", "y", pl.concat_list(models).alias("probs"))
            r["list"] = best_of(lambda lst=lst: ours_list(lst), args.repeat)
            r["rows_wide"] = best_of(
                lambda df=df: ensemble_sample_metrics(df.lazy(), models=models, keep=[]).collect(),
                args.repeat,
            )
            r["rows_list"] = best_of(
                lambda lst=lst: ensemble_sample_metrics(
                    lst.lazy(), list_col="probs", keep=[]
                ).collect(),
                args.repeat,
            )
            r["long"] = None
            if n <= args.long_max:
                long_path = Path(tmp) / f"long_{n}.parquet"
                df.unpivot(
                    index=["row", "group", "y"], on=models, variable_name="model", value_name="p"
                ).write_parquet(long_path, row_group_size=1_000_000)
                r["long"] = best_of(lambda long_path=long_path: ours_long(long_path), 1)
                long_path.unlink()
            r["virny"] = None
            pdf = df.to_pandas()
            r["virny_vec"] = best_of(lambda pdf=pdf: virny_vectorised(pdf, models), 1)
            if n <= args.virny_max:
                t0, c0 = time.perf_counter(), time.process_time()
                vres = virny_way(pdf, models)
                r["virny"] = time.perf_counter() - t0
                CPU[r["virny"]] = time.process_time() - c0
            del pdf
            if n <= args.virny_max:
                ours_v = ensemble_disparities(
                    df, models=models, y_true="y", by="group", reference="rest", convention="virny"
                ).filter(pl.col("group") == "dis")
                got = dict(zip(ours_v["metric"], ours_v["value"], strict=True))
                diffs = {
                    "jitter": abs(got["jitter"] - vres["dis"]["jitter"]),
                    "label_stability": abs(got["label_stability"] - vres["dis"]["label_stability"]),
                    "aleatoric": abs(got["aleatoric_uncertainty"] - vres["dis"]["aleatoric"]),
                    "overall": abs(got["overall_uncertainty"] - vres["dis"]["overall"]),
                    "std": abs(got["std_probability"] - vres["dis"]["std"]),
                    "iqr": abs(got["iqr_probability"] - vres["dis"]["iqr"]),
                    "tpr": abs(got["true_positive_rate"] - vres["dis"]["tpr"]),
                }
                check_lines.append(
                    f"n={n:,}: largest |ours − Virny's way| over the `dis` group's metrics: "
                    f"{max(diffs.values()):.1e}"
                )
            results.append(r)
            print(
                {k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()}, flush=True
            )
            wide.unlink()

    def cell(x: float | None) -> str:
        return f"{x:.3f} ({CPU[x]:.2f})" if x is not None else "—"

    def ratio(a: float | None, b: float | None) -> str:
        if a is None or b is None:
            return "—"
        return f"{a / b:.0f}× ({CPU[a] / max(CPU[b], 1e-9):.0f}×)"

    def ratio2(a: float, b: float) -> str:
        return f"**{a / b:.2f}** ({CPU[a] / max(CPU[b], 1e-9):.2f})"

    cmd = "python benchmarks/bench_ensemble.py " + " ".join(sys.argv[1:])
    lines = [
        "# Ensemble stability and uncertainty metrics",
        "",
        f"Command: `{cmd.strip()}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, polars {pl.__version__}, numpy {np.__version__}; medians "
        f"of {args.repeat} runs (the target's three variants interleaved; ratios from one run).  ",
        load_note(),
        "",
        f"Data: N rows × M = {m} models, Float32 probabilities in memory, a binary sensitive "
        "attribute (`dis` 30 % / `priv`), a label.",
        "",
        "## Target: ours vs a vectorised NumPy lower bound",
        "",
        "The same quantities from the same in-memory data: the 9 ensemble metrics (mean, std and "
        "IQR of p, label stability, jitter, aleatoric, overall, epistemic variance and mutual "
        "information) per row and their mean per group, plus the ensemble label's 17 confusion "
        "metrics per group. *NumPy lower bound*: `numpy_lower_bound` in the script (one row sort, "
        "vectorised, no validation); *ours*: `ensemble_group_metrics(df.lazy(), models=..., "
        'by="group", y_true="y")` with its validation, in-memory and streaming engines. Wall '
        "seconds (CPU seconds of all threads in brackets); the ratio is ours / NumPy, target "
        "<= 1.1 at 1e6 × 20.",
        "",
        "| rows | NumPy lower bound | ours (in-memory) | ours / NumPy | ours (streaming) "
        r"| ours streaming / NumPy | largest \|ours − NumPy\| |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t in targets:
        lines.append(
            f"| {int(t['n']):,} | {cell(t['numpy'])} | {cell(t['ours'])} | "
            f"{ratio2(t['ours'], t['numpy'])} | {cell(t['ours_streaming'])} | "
            f"{ratio2(t['ours_streaming'], t['numpy'])} | {t['diff']:.1e} |"
        )
    if results:
        lines += [
            "",
            "## Other layouts, files and Virny's way",
            "",
            "- *floor*: one plain streaming `scan_parquet().group_by(group).agg(len, sum(p_j) "
            "for each model)` over the wide file;",
            "- *ours wide*: the target's call streaming from that parquet file; *+disp*: "
            '`ensemble_disparities(..., reference="rest", convention="virny")`;',
            "- *ours list*: the same from a List column in memory; *ours long*: from the long "
            "parquet file (N·M records: one per test row and model), streaming;",
            "- *rows wide / rows list*: the per-row table only (`ensemble_sample_metrics`, in "
            "memory);",
            "- *Virny's way*: the same metrics as Virny computes them, in pandas (see the "
            "script's docstring: O(M²·N) model-pair loop for jitter, a Python loop per sample "
            "for label stability, SciPy entropy per sample through `DataFrame.apply`), for the "
            "whole set, the `dis` rows and the `priv` rows; *Virny vectorised*: the same "
            "algorithm with each per-sample Python loop replaced by NumPy.",
            "",
            "| rows | floor | ours wide | ours wide / floor | ours wide+disp | ours list "
            "| ours long | rows wide | rows list | Virny vectorised | Virny's way "
            "| Virny vectorised / ours wide (CPU) | Virny's way / ours wide (CPU) |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in results:
            lines.append(
                f"| {r['n']:,} | {cell(r['floor'])} | {cell(r['wide'])} | "
                f"{r['wide'] / r['floor']:.1f} | {cell(r['wide_disp'])} | "  # type: ignore[operator]
                f"{cell(r['list'])} | {cell(r['long'])} | {cell(r['rows_wide'])} | "
                f"{cell(r['rows_list'])} | {cell(r['virny_vec'])} | {cell(r['virny'])} | "
                f"{ratio(r['virny_vec'], r['wide'])} | {ratio(r['virny'], r['wide'])} |"
            )
        lines += ["", "Agreement (same data, Virny's label rule p > 0.5):", ""]
        lines += [f"- {c}" for c in check_lines]
    lines.append("")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {args.out}")
    _ = pfm  # the package import registers namespaces; kept for parity with other benches


if __name__ == "__main__":
    main()
