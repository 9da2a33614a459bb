"""Command-line interface: ``polars-fairmetrics`` (also ``python -m polars_fairmetrics``).

Subcommands:

- ``report PATH``: audit a parquet / CSV / IPC file, a glob or a hive-partitioned folder
  (streaming, one scan), render it (terminal, JSON, Markdown, HTML, Parquet) and check the
  ``--fail-if`` gates. Options as flags or in a TOML file (``--config``); flags win.
- ``demo``: audit the embedded COMPAS data (``--html report.html`` writes the HTML report);
  ``--dataset adult``: the shipped Adult 15-model ensemble, with the stability sections.
- ``properties``: the measure-properties analysis for a data-set size ``--n``.

Exit status: 0 success, 1 a ``--fail-if`` gate failed, 2 a usage or input error, 3 an internal
error (a bug: please report it; ``--debug`` shows the traceback). Every option is checked before
any data is read; errors print one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import glob
import math
import os
import re
import shutil
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path
from typing import Any, NoReturn, TextIO

import polars as pl

from polars_fairmetrics._config import load_config
from polars_fairmetrics._text import visible
from polars_fairmetrics.datasets import data_path, scan_compas
from polars_fairmetrics.disparity import disparities, fairness_criteria
from polars_fairmetrics.ensemble import ensemble_labels
from polars_fairmetrics.exceptions import FairMetricsError, InvalidOptionError
from polars_fairmetrics.metrics import group_metrics
from polars_fairmetrics.report import (
    MAX_CURVE_BINS,
    MAX_RESAMPLES,
    AuditOptions,
    Report,
    audit,
    parse_gate,
)
from polars_fairmetrics.report.options import CALIBRATION_DECIMALS
from polars_fairmetrics.report.render_text import _width, markdown_table

DEMO_METRICS = (
    "selection_rate",
    "base_rate",
    "accuracy",
    "true_positive_rate",
    "false_positive_rate",
    "positive_predictive_value",
)

FORMATS = ("terminal", "json", "markdown", "html", "parquet")
CI_METHODS = ("percentile", "basic", "bca")
EXIT_OK, EXIT_GATE, EXIT_ERROR, EXIT_INTERNAL = 0, 1, 2, 3
DEMO_SCORES = (1, 10)
"""The range of COMPAS decile scores: the demo's --threshold must lie in it."""


class CliError(FairMetricsError):
    """A command-line mistake (bad flag combination, unreadable input)."""


# ---------------------------------------------------------------------------------------------
# Progress on stderr (only on a terminal)
# ---------------------------------------------------------------------------------------------


def _cut(text: str, columns: int) -> str:
    """``text`` cut to ``columns`` terminal columns (wide characters count 2), ``…`` marking a
    cut."""
    if _width(text) <= columns:
        return text
    out = ""
    for c in text:
        if _width(out + c) > columns - 1:
            break
        out += c
    return out + "…"


def _ljust(text: str, columns: int) -> str:
    return text + " " * max(0, columns - _width(text))


@contextmanager
def progress(
    label: str, *, enabled: bool | None = None, stream: TextIO | None = None
) -> Iterator[Callable[[str], None]]:
    """Show ``label`` and the elapsed time on stderr while the block runs.

    Quiet unless the stream is a terminal (or ``enabled=True``): logs of batch jobs stay clean.
    The context value is a function showing the current step next to the label (e.g.
    ``audit(..., progress=step)``).
    """
    out = stream if stream is not None else sys.stderr
    on = out.isatty() if enabled is None else enabled
    current = [""]

    def step(text: str) -> None:
        current[0] = text

    if not on:
        yield step
        return
    done = threading.Event()
    start = time.perf_counter()
    frames = "|/-\\"

    drawn = [0]  # the width of the line drawn last

    def spin() -> None:
        i = 0
        while not done.wait(0.1):
            # one line, redrawn: never wider than the terminal (a wider line wraps, and each
            # redraw would then print a new line)
            cols = max(20, shutil.get_terminal_size((80, 24)).columns - 1)
            clock = f" {time.perf_counter() - start:5.1f}s"
            text = f"{frames[i % 4]} {label}"
            if current[0]:
                text += f" ({current[0]})"
            text = _cut(visible(text), cols - len(clock)) + clock
            out.write("\r" + _ljust(text, min(drawn[0], cols)))  # blank out a longer line
            drawn[0] = max(drawn[0], _width(text))
            out.flush()
            i += 1

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        yield step
    finally:
        done.set()
        thread.join()
        cols = max(20, shutil.get_terminal_size((80, 24)).columns - 1)
        done_text = _cut(visible(f"{label}: done in {time.perf_counter() - start:.1f}s"), cols)
        out.write("\r" + _ljust(done_text, min(drawn[0], cols)) + "\n")
        out.flush()


# ---------------------------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------------------------

_SUFFIXES = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "csv",
    ".ipc": "ipc",
    ".arrow": "ipc",
    ".feather": "ipc",
}


def scan_input(path: str, input_format: str | None = None) -> pl.LazyFrame:
    """A LazyFrame over a file, a glob or a (hive-partitioned) folder; nothing is read yet."""
    is_glob = any(ch in path for ch in "*?[")
    p = Path(path)
    fmt = input_format
    if fmt is not None and fmt not in ("parquet", "csv", "ipc"):
        raise CliError(f"--input-format {fmt!r} is not one of parquet, csv, ipc")
    if not is_glob and not p.exists():
        raise CliError(f"input {path!r} does not exist")
    source: str = path
    if p.is_dir():
        fmt = fmt or _folder_format(p)
        ext = {"parquet": "parquet", "csv": "csv", "ipc": "ipc"}[fmt]
        source = str(p / "**" / f"*.{ext}")
        if not glob.glob(source, recursive=True) and fmt == "ipc":
            source = str(p / "**" / "*.arrow")
    elif fmt is None:
        fmt = _SUFFIXES.get(Path(path.rstrip("*")).suffix.lower()) or _SUFFIXES.get(
            os.path.splitext(path)[1].lower()
        )
        if fmt is None:
            raise CliError(
                f"cannot tell the format of {path!r} from its name; pass --input-format "
                "parquet, csv or ipc"
            )
    if is_glob or p.is_dir():
        if not glob.glob(source, recursive=True):
            raise CliError(f"no {fmt} file matches {path!r}")
    hive = is_glob or p.is_dir()
    if fmt == "parquet":
        return pl.scan_parquet(source, hive_partitioning=hive)
    if fmt == "ipc":
        return pl.scan_ipc(source, hive_partitioning=hive)
    sep = "\t" if source.lower().endswith(".tsv") else ","
    return pl.scan_csv(source, separator=sep)  # CSV: no hive partitions in Polars' reader


def _folder_format(folder: Path) -> str:
    for fmt, exts in (
        ("parquet", ("parquet", "pq")),
        ("csv", ("csv",)),
        ("ipc", ("ipc", "arrow", "feather")),
    ):
        for ext in exts:
            if next(folder.rglob(f"*.{ext}"), None) is not None:
                return fmt
    raise CliError(f"folder {str(folder)!r} holds no parquet, csv or ipc file")


def _coerce_label(value: Any, dtype: pl.DataType | None, what: str = "label") -> Any:
    """A value given as text on the command line (a label, a reference group), as the
    column's type."""
    if not isinstance(value, str) or dtype is None:
        return value
    if dtype == pl.Boolean:
        low = value.lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        raise CliError(f"{what} {value!r} is not a Boolean (true/false), as its column is")
    if dtype.is_integer():
        try:
            return int(value)
        except ValueError:
            raise CliError(f"{what} {value!r} is not an integer, as its column is") from None
    if dtype.is_float():
        try:
            return float(value)
        except ValueError:
            raise CliError(f"{what} {value!r} is not a number, as its column is") from None
    return value


def _parse_bounds(value: Any) -> tuple[float, float] | None:
    """``--score-bounds LOW,HIGH`` or ``none`` (config: a two-number list or "none")."""
    if value is None:
        return (0.0, 1.0)
    if isinstance(value, str):
        if value.strip().lower() == "none":
            return None
        parts = value.split(",")
    else:
        parts = list(value)
    try:
        low, high = (float(x) for x in parts)
    except (TypeError, ValueError):
        raise CliError(f"--score-bounds {value!r}: expected LOW,HIGH or none") from None
    if not (math.isfinite(low) and math.isfinite(high)) or not low < high:
        raise CliError(f"--score-bounds {value!r}: expected finite LOW below HIGH")
    return (low, high)


def _parse_reference(values: Sequence[str] | str | dict[str, Any] | None, by: Sequence[str]) -> Any:
    """``--reference VALUE`` (one attribute), ``--reference attr=VALUE`` (repeated), or a word."""
    if values is None:
        return "overall"
    if isinstance(values, dict):
        return values
    if isinstance(values, (int, float, bool)):
        return values
    items = [values] if isinstance(values, str) else list(values)
    if len(items) == 1 and items[0] in ("overall", "rest"):
        return items[0]
    mapping: dict[str, str] = {}
    plain: list[str] = []
    for item in items:
        attr, sep, val = item.partition("=")
        if sep and attr in by:
            mapping[attr] = val
        else:
            plain.append(item)
    if plain and mapping:
        raise CliError("--reference: give either one group value or attribute=value pairs")
    if len(plain) > 1:
        raise CliError(
            f"--reference given {len(plain)} plain values {plain!r}; with several "
            "attributes use attribute=value for each"
        )
    return mapping if mapping else plain[0]


def _typed_reference(reference: Any, by: Sequence[str], schema: pl.Schema) -> Any:
    """The reference's group values as their columns' types (the keys stay typed)."""
    if isinstance(reference, str) and reference in ("overall", "rest"):
        return reference
    if isinstance(reference, Mapping):
        return {
            k: _coerce_label(v, schema.get(k), f"--reference {k}=") for k, v in reference.items()
        }
    if len(by) == 1:
        return _coerce_label(reference, schema.get(by[0]), "--reference")
    return reference


# ---------------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------------


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """Flags over the config file's options (flags win; gates add up)."""
    cfg: dict[str, Any] = load_config(args.config) if args.config else {}
    flag_keys = (
        "input",
        "input_format",
        "y_true",
        "y_pred",
        "y_score",
        "threshold",
        "score_bounds",
        "by",
        "weight",
        "reference",
        "pos_label",
        "neg_label",
        "metrics",
        "criteria",
        "format",
        "output",
        "min_support",
        "intervals",
        "ci_level",
        "ci_method",
        "seed",
        "models",
        "models_prefix",
        "compare",
        "curve_bins",
        "deploy_positive_rate",
        "calibration_bins",
        "calibration_binning",
        "calibration_decimals",
    )
    opts = dict(cfg)
    for key in flag_keys:
        value = getattr(args, key, None)
        if value is not None:
            opts[key] = value
    if args.intersectional:
        opts["intersectional"] = True
    if args.no_plots:
        opts["plots"] = False
    if getattr(args, "no_curves", False):
        opts["curves"] = False
    if getattr(args, "no_calibration", False):
        opts["calibration"] = False
    gates = cfg.get("fail_if", [])
    opts["fail_if"] = ([gates] if isinstance(gates, str) else list(gates)) + list(args.fail_if)
    for key in ("by", "metrics", "criteria"):
        v = opts.get(key)
        if isinstance(v, str):
            opts[key] = [x.strip() for x in v.split(",") if x.strip()] if key != "by" else [v]
        elif isinstance(v, list) and key != "by":
            opts[key] = [x.strip() for item in v for x in item.split(",") if x.strip()]
    if opts.get("metrics") == ["all"]:
        opts["metrics"] = "all"
    return opts


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _parse_intervals(opts: dict[str, Any]) -> int | None:
    """``--intervals N`` (with ``--ci-level``, ``--ci-method``, ``--seed``), checked before any
    scan."""
    n = opts.get("intervals")
    if n is None:
        for key in ("ci_level", "ci_method", "seed"):
            if opts.get(key) is not None:
                raise CliError(f"--{key.replace('_', '-')} needs --intervals N")
        return None
    if not _is_int(n) or not 1 <= n <= MAX_RESAMPLES:
        raise CliError(
            f"--intervals {n!r}: expected a positive number of resamples (at most {MAX_RESAMPLES})"
        )
    level = opts.get("ci_level", 0.95)
    if not _is_number(level) or not 0 < level < 1:
        raise CliError(f"--ci-level {level!r}: expected a number in (0, 1), e.g. 0.95")
    method = opts.get("ci_method", "percentile")
    if method not in CI_METHODS:
        raise CliError(f"--ci-method {method!r} is not one of {', '.join(CI_METHODS)}")
    seed = opts.get("seed")
    if seed is not None and (not _is_int(seed) or seed < 0):
        raise CliError(f"--seed {seed!r}: expected a non-negative integer")
    return int(n)


def _resolve_compare(opts: dict[str, Any], schema: pl.Schema) -> list[str] | None:
    """``--compare strict,lenient`` (or ``--compare strict lenient``): prediction columns of
    models compared side by side (the ``models`` section)."""
    given = opts.get("compare")
    if given is None:
        return None
    items = [given] if isinstance(given, str) else list(given)
    names = [x.strip() for item in items for x in str(item).split(",") if x.strip()]
    if not names:
        raise CliError("--compare names no prediction column")
    missing = [c for c in names if c not in schema]
    if missing:
        raise CliError(f"--compare: column(s) {missing!r} not in the input")
    return names


def _resolve_models(opts: dict[str, Any], schema: pl.Schema) -> list[str] | None:
    """``--models p00 p01 ...`` or ``--models-prefix p`` (columns PREFIX + digits)."""
    models, prefix = opts.get("models"), opts.get("models_prefix")
    if models is not None and prefix is not None:
        raise CliError("pass --models or --models-prefix, not both")
    if prefix is not None:
        pattern = re.compile(re.escape(str(prefix)) + r"\d+")
        found = [c for c in schema.names() if pattern.fullmatch(c)]
        if not found:
            raise CliError(
                f"--models-prefix {prefix!r}: no column is named {prefix!r} followed by digits"
            )
        return found
    if models is None:
        return None
    names = [x.strip() for item in models for x in str(item).split(",") if x.strip()]
    missing = [m for m in names if m not in schema]
    if missing:
        raise CliError(f"--models: column(s) {missing!r} not in the input")
    return names


def _calibration_decimals(opts: dict[str, Any]) -> int | None:
    """``--calibration-decimals D`` (``exact`` or ``none`` in a config file: no rounding)."""
    value = opts.get("calibration_decimals", CALIBRATION_DECIMALS)
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    text = str(value).strip().lower()
    if text in ("exact", "none"):
        return None
    if not text.isdigit():
        raise CliError(
            f"--calibration-decimals {value!r}: expected a number of decimal places or 'exact'"
        )
    return int(text)


def _parse_curves_deployment(opts: dict[str, Any]) -> tuple[bool | None, int | None, float | None]:
    """``--no-curves``, ``--curve-bins N`` and ``--deploy-positive-rate P``, checked before any
    scan."""
    curves = opts.get("curves")
    if curves is not None and not isinstance(curves, bool):
        raise CliError(f"curves = {curves!r} in the config: expected true or false")
    bins = opts.get("curve_bins")
    if bins is not None:
        if not _is_int(bins) or not 1 <= bins <= MAX_CURVE_BINS:
            raise CliError(
                f"--curve-bins {bins!r}: expected a positive number of grid steps, at most "
                f"{MAX_CURVE_BINS} (the report keeps its curves small)"
            )
        if opts.get("y_score") is None:
            raise CliError("--curve-bins needs --y-score (the curves are over the scores)")
        if curves is False:
            raise CliError("--curve-bins with --no-curves: pass one or the other")
    rate = opts.get("deploy_positive_rate")
    if rate is not None:
        if not _is_number(rate) or not 0.0 < float(rate) < 1.0:
            raise CliError(
                f"--deploy-positive-rate {rate!r}: expected a share of positives "
                "strictly between 0 and 1 (e.g. 0.01)"
            )
        rate = float(rate)
    return curves, bins, rate


def _check_threshold(opts: dict[str, Any]) -> float | None:
    threshold = opts.get("threshold")
    if threshold is None:
        return None
    if not _is_number(threshold) or not math.isfinite(threshold):
        raise CliError(f"--threshold {threshold!r}: expected a finite number")
    return float(threshold)


def _report(args: argparse.Namespace) -> int:
    opts = _options(args)
    for key in ("input", "y_true", "by"):
        if not opts.get(key):
            flag = {"input": "PATH", "y_true": "--y-true", "by": "--by"}[key]
            raise CliError(f"missing {flag} (on the command line or in the config file)")
    if (opts.get("y_pred") is None) == (opts.get("y_score") is None):
        raise CliError("pass exactly one of --y-pred or --y-score (with --threshold)")
    threshold = _check_threshold(opts)
    if opts.get("y_score") is not None and threshold is None:
        raise CliError("--y-score needs --threshold")
    fmt = opts.get("format", "terminal")
    if fmt not in FORMATS:
        raise CliError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")
    if fmt == "parquet" and not opts.get("output"):
        raise CliError("--format parquet needs --output FOLDER")
    gates = [parse_gate(g) for g in opts["fail_if"]]  # syntax errors before any scan
    min_support = opts.get("min_support")
    if min_support is not None and (
        isinstance(min_support, bool) or not isinstance(min_support, int) or min_support < 0
    ):
        raise CliError(f"--min-support {min_support!r}: expected a non-negative integer")
    n_boot = _parse_intervals(opts)
    if n_boot is None:
        needs = [g.text for g in gates if g.op == "ci_excludes"]
        if needs:
            raise CliError(
                f"gate {needs[0]!r} needs confidence intervals: add --intervals N "
                "(e.g. --intervals 1000)"
            )
    curves, curve_bins, deploy_rate = _parse_curves_deployment(opts)
    bounds = _parse_bounds(opts.get("score_bounds"))
    lf = scan_input(str(opts["input"]), opts.get("input_format"))
    schema = lf.collect_schema()
    models = _resolve_models(opts, schema)
    compared = _resolve_compare(opts, schema)
    by = list(opts["by"])
    y_true = str(opts["y_true"])
    label_dtype = schema.get(y_true)
    options = AuditOptions(
        y_true=y_true,
        by=by,
        y_pred=opts.get("y_pred"),
        y_score=opts.get("y_score"),
        threshold=threshold,
        weight=opts.get("weight"),
        reference=_typed_reference(_parse_reference(opts.get("reference"), by), by, schema),
        pos_label=_coerce_label(opts.get("pos_label"), label_dtype),
        neg_label=_coerce_label(opts.get("neg_label"), label_dtype),
        metrics=opts.get("metrics"),
        criteria=opts.get("criteria"),
        intersectional=bool(opts.get("intersectional", False)),
        score_bounds=bounds,
        engine="streaming",
        source=str(opts["input"]),
        intervals=n_boot,
        ci_level=float(opts.get("ci_level", 0.95)),
        ci_method=opts.get("ci_method", "percentile"),
        seed=int(opts.get("seed", 0)),
        models=models,
        curves=curves,
        curve_bins=curve_bins,
        deploy_positive_rate=deploy_rate,
        calibration=opts.get("calibration"),
        calibration_bins=opts.get("calibration_bins"),
        calibration_binning=opts.get("calibration_binning", "uniform"),
        calibration_decimals=_calibration_decimals(opts),
        predictions=compared,
    )
    label = f"scanning {visible(str(opts['input']))}"
    if n_boot is not None:
        label += f", bootstrap {n_boot} resamples"
    if models:
        label += f", ensemble stability over {len(models)} models"
    if compared:
        label += f", {len(compared)} models side by side"
    with progress(label, enabled=False if args.no_progress else None) as step:
        report = audit(lf, options, progress=step)
    # recorded: the report's summary lists the failed gates
    results = report.check(*gates, min_support=int(opts.get("min_support") or 0))
    _emit(report, fmt, opts.get("output"), plots=bool(opts.get("plots", True)))
    for r in results:
        print(f"polars-fairmetrics: gate {r.message}", file=sys.stderr)
    return EXIT_GATE if any(r.failed for r in results) else EXIT_OK


def _emit(report: Report, fmt: str, output: str | None, *, plots: bool) -> None:
    if fmt == "parquet":
        assert output is not None  # checked before the scan
        report.write_parquet(output)
        return
    text = {
        "terminal": lambda: report.to_terminal(),
        "json": lambda: report.to_json(),
        "markdown": lambda: report.to_markdown(),
        "html": lambda: report.to_html(plots=plots),
    }[fmt]()
    if output:
        Path(output).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        print(f"polars-fairmetrics: wrote {fmt} report to {visible(output)}", file=sys.stderr)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


# ---------------------------------------------------------------------------------------------
# demo
# ---------------------------------------------------------------------------------------------


def _check_demo(args: argparse.Namespace) -> None:
    """Every numeric option of ``demo``, before anything runs."""
    low, high = DEMO_SCORES
    if args.dataset == "compas" and not low <= args.threshold <= high:
        raise CliError(
            f"--threshold {args.threshold}: the COMPAS decile score runs from {low} to {high}; "
            f"pick a threshold in {low}..{high} (high risk = decile score >= threshold)"
        )
    if args.intervals is not None and not 1 <= args.intervals <= MAX_RESAMPLES:
        raise CliError(
            f"--intervals {args.intervals}: expected a positive number of resamples (at most "
            f"{MAX_RESAMPLES})"
        )
    if args.seed is not None and args.seed < 0:
        raise CliError(f"--seed {args.seed}: expected a non-negative integer")
    if args.seed is not None and args.intervals is None:
        raise CliError("--seed needs --intervals N")


def _number(value: Any, digits: int) -> str:
    return "undefined" if value is None else f"{value:.{digits}f}"


def _compas_report(
    threshold: int = 5,
    *,
    intervals: int | None = None,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> Report:
    """The report of ``demo``: the embedded COMPAS data audited by race (reference Caucasian)
    and sex (reference Male), high risk = decile score ≥ ``threshold``."""
    lf = scan_compas().with_columns((pl.col("decile_score") >= threshold).alias("high_risk"))
    return audit(
        lf,
        y_true="two_year_recid",
        y_pred="high_risk",
        by=["race", "sex"],
        reference={"race": "Caucasian", "sex": "Male"},
        source=f"embedded COMPAS data (ProPublica, 2016); high_risk = decile_score >= {threshold}",
        intervals=intervals,
        seed=seed,
        progress=progress,
    )


def _terminal_width() -> int:
    """Columns of the terminal (of ``COLUMNS``; 80 when unknown), at least 40."""
    return max(40, shutil.get_terminal_size((80, 24)).columns)


_FLOAT_DIGITS = 3


def _cell_width(value: Any) -> int:
    if value is None:
        return 4  # null
    if isinstance(value, float):
        return len(f"{value:.{_FLOAT_DIGITS}f}")
    return len(str(value))


def _print_frame(frame: pl.DataFrame, width: int) -> None:
    """Print ``frame`` as Polars tables no wider than ``width``: cut into blocks of whole
    columns, each repeating the first (key) column, so the terminal never wraps a row and
    Polars never elides a column."""
    sizes = [
        max([len(c), *(_cell_width(v) for v in frame[c].to_list())]) + 3 for c in frame.columns
    ]
    blocks: list[list[int]] = [[0]]
    for i in range(1, len(sizes)):
        used = 1 + sum(sizes[j] for j in blocks[-1])
        if len(blocks[-1]) > 1 and used + sizes[i] > width:
            blocks.append([0])
        blocks[-1].append(i)
    with pl.Config(
        tbl_rows=60,
        tbl_cols=-1,
        tbl_width_chars=width,
        float_precision=_FLOAT_DIGITS,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        tbl_hide_dtype_separator=True,
        fmt_str_lengths=max(40, width),
    ):
        for b, cols in enumerate(blocks):
            print(("\n" if b else "") + str(frame.select(frame.columns[i] for i in cols)))


def _demo(args: argparse.Namespace) -> int:
    """Audit the COMPAS decile score (high risk = decile ≥ threshold) by race and by sex."""
    _check_demo(args)
    if args.dataset == "adult":
        return _demo_adult(args)
    lf = scan_compas().with_columns((pl.col("decile_score") >= args.threshold).alias("high_risk"))
    width = _terminal_width()
    print(
        f"COMPAS two-year recidivism (ProPublica, 2016): prediction = decile_score >= "
        f"{args.threshold}\n"
    )
    for attr, ref in (("race", "Caucasian"), ("sex", "Male")):
        metrics = group_metrics(
            lf,
            by=attr,
            metrics=list(DEMO_METRICS),
            wide=True,
            y_true="two_year_recid",
            y_pred="high_risk",
        )
        print(f"Per-group metrics by {attr}:")
        _print_frame(metrics.select(attr, "n", *DEMO_METRICS).collect(), width)
        crit = fairness_criteria(
            lf,
            by=attr,
            reference=ref,
            criteria=[
                "statistical_parity_difference",
                "disparate_impact",
                "equal_opportunity_difference",
                "predictive_equality_difference",
                "equalized_odds_difference",
                "positive_predictive_parity_difference",
            ],
            y_true="two_year_recid",
            y_pred="high_risk",
            wide=True,
        ).collect()
        print(f"\nFairness criteria by {attr} (reference: {ref}):")
        _print_frame(
            crit.drop("n", "n_null", "reference", "is_reference", strict=False).select(
                ~pl.selectors.ends_with("_support")
            ),
            width,
        )
        print()
    fpr = (
        disparities(
            lf,
            by="race",
            metrics="false_positive_rate",
            reference="Caucasian",
            y_true="two_year_recid",
            y_pred="high_risk",
        )
        .filter(pl.col("race") == "African-American")
        .collect()
    )
    print(
        "\n".join(
            textwrap.wrap(
                "False positive rate, African-American vs Caucasian defendants: "
                f"{_number(fpr['value'][0], 3)} vs {_number(fpr['reference_value'][0], 3)} "
                f"(ratio {_number(fpr['ratio'][0], 2)})",
                width,
            )
        )
    )
    if args.html or args.json or args.intervals is not None:
        with progress("auditing COMPAS", enabled=False if args.no_progress else None) as step:
            report = _compas_report(
                args.threshold,
                intervals=args.intervals,
                seed=args.seed if args.seed is not None else 0,
                progress=step,
            )
        if args.intervals is not None:  # the report with its intervals, fitted to the terminal
            print()
            print(report.to_terminal())
        _demo_outputs(report, args)
    return EXIT_OK


def _demo_adult(args: argparse.Namespace) -> int:
    """Audit the shipped Adult bootstrap ensemble (15 models): the ensemble label as the
    prediction, per-group metrics and criteria by sex and race, and the stability sections."""
    lf = pl.scan_parquet(data_path("adult_ensemble.parquet"))
    models = [c for c in lf.collect_schema().names() if re.fullmatch(r"p\d+", c)]
    labelled = ensemble_labels(
        lf, models=models, keep=["row_id", "sex", "race", "high_income", *models]
    )
    with progress(
        "auditing the Adult ensemble", enabled=False if args.no_progress else None
    ) as step:
        report = audit(
            labelled,
            y_true="high_income",
            y_pred="ensemble_label",
            by=["sex", "race"],
            reference={"sex": "Male", "race": "White"},
            metrics=list(DEMO_METRICS),
            models=models,
            intervals=args.intervals,
            seed=args.seed if args.seed is not None else 0,
            progress=step,
            source=f"embedded Adult test set (16,281 rows), {len(models)} bootstrap-trained "
            "models; prediction = ensemble label (mean probability >= 0.5)",
        )
    print(report.to_terminal())
    _demo_outputs(report, args)
    return EXIT_OK


def _demo_outputs(report: Report, args: argparse.Namespace) -> None:
    if args.html:
        report.to_html(args.html, plots=not args.no_plots)
        print(f"\nWrote the HTML report to {visible(args.html)}")
    if args.json:
        report.to_json(args.json)
        print(f"Wrote the JSON report to {visible(args.json)}")


# ---------------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------------


def _ratio_counts(n: int, ratios: Sequence[float] | None, what: str) -> list[int]:
    from polars_fairmetrics.properties import cells_from_ratios  # heavy: only for this command

    if not ratios:
        return []
    for r in ratios:
        if not math.isfinite(r) or not 0.0 < r < 1.0:
            raise CliError(f"--{what.lower()} {r}: a ratio must be in (0, 1)")
    one = [Fraction(1, n)]  # a valid ratio for the other axis: only this axis is converted
    if what == "IR":
        return sorted({k for k, _ in cells_from_ratios(n, ir=ratios, gr=one)})
    return sorted({m for _, m in cells_from_ratios(n, ir=one, gr=ratios)})


def _properties(args: argparse.Namespace) -> int:
    """The measure-properties analysis (properties.analyze_measure_properties) for one n."""
    from polars_fairmetrics.properties import (  # heavy: only for this command
        DEFAULT_MAX_SECONDS,
        MEASURES,
        _check_budget,
        analyze_measure_properties,
        estimate_properties_cost,
        properties_table,
    )

    n = args.n
    if n < 1:
        raise CliError(f"--n {n}: the data set needs at least 1 example")
    measures = None
    if args.measures:
        measures = [x.strip() for item in args.measures for x in item.split(",") if x.strip()]
        unknown = [m for m in measures if m not in MEASURES]
        if unknown:
            raise CliError(
                f"--measures: unknown measure {unknown[0]!r}; choose from {', '.join(MEASURES)}"
            )
    counts = sorted(set(_ratio_counts(n, args.ir, "IR")) | set(_ratio_counts(n, args.gr, "GR")))
    if args.summary and Path(args.summary).suffix.lower() not in (".parquet", ".csv"):
        raise CliError(f"--summary {args.summary!r}: the file name must end in .parquet or .csv")
    try:  # the size limit, from the time / memory estimate, before anything runs
        cost = estimate_properties_cost(n, counts=counts or None, measures=measures)
        _check_budget(
            cost,
            DEFAULT_MAX_SECONDS,
            None,
            subject=f"--n {n}",
            advice="choose a smaller --n (or call properties.analyze_measure_properties with "
            "max_seconds= / max_memory_gib=)",
        )
    except InvalidOptionError as exc:
        raise CliError(str(exc)) from exc
    with progress(f"analysing n = {n}", enabled=False if args.no_progress else None):
        analysis = analyze_measure_properties(
            n, counts=counts or None, measures=measures, max_seconds=None
        )
    table = properties_table(analysis.properties, evidence=args.evidence)
    grid = ", ".join(f"{c}/{n}" for c in analysis.counts)
    if args.format == "json":
        import json

        doc = {
            "n": n,
            "grid_counts": list(analysis.counts),
            "measures": list(dict.fromkeys(analysis.properties["metric"].to_list())),
            "rules": dict(table.select("property", "rule").iter_rows()),
            "properties": analysis.properties.to_dicts(),
        }
        text = json.dumps(doc, indent=2, default=str)
    elif args.format == "markdown":
        shown = table.drop("rule")
        lines = [f"# Measure properties, n = {n}", "", f"Grid: IR, GR in {{{grid}}}.", ""]
        lines += markdown_table(shown.columns, [[str(v) for v in r] for r in shown.rows()])
        lines += ["", "Rules:", ""]
        lines += [f"- **{k}**: {v}" for k, v in table.select("property", "rule").iter_rows()]
        text = "\n".join(lines)
    else:
        with pl.Config(
            tbl_rows=-1,
            tbl_cols=-1,
            tbl_width_chars=200,
            fmt_str_lengths=200,
            tbl_hide_dataframe_shape=True,
            tbl_hide_column_data_types=True,
        ):
            text = (
                f"Measure properties for n = {n}; grid IR, GR in {{{grid}}}\n"
                f"{table.drop('rule')}\n(decision rules: --format markdown or json)"
            )
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
        print(f"polars-fairmetrics: wrote the properties table to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text + "\n")
    if args.summary:
        if args.summary.lower().endswith(".csv"):
            analysis.summary.write_csv(args.summary)
        else:
            analysis.summary.write_parquet(args.summary)
        print(f"polars-fairmetrics: wrote the cell summary to {args.summary}", file=sys.stderr)
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# parser and entry point
# ---------------------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage dump) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``polars-fairmetrics``."""
    parser = _Parser(
        prog="polars-fairmetrics",
        description="Fairness and real-world performance metrics of binary classifiers.",
        epilog="Exit status: 0 ok, 1 a --fail-if gate failed, 2 a usage or input error, "
        "3 an internal error.",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an internal error"
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    # listed for --help; main() hands its arguments to monitor.monitor_main unparsed
    sub.add_parser(
        "monitor",
        help="count stores of batches over time: append, audit a window, list batches "
        "(polars-fairmetrics monitor --help)",
        add_help=False,
    )
    demo = sub.add_parser("demo", help="audit the embedded COMPAS data by race and sex")
    demo.add_argument(
        "--threshold",
        type=int,
        default=5,
        help="decile score (1-10) at or above which a defendant is 'high risk' (default 5)",
    )
    demo.add_argument("--html", metavar="PATH", help="also write the HTML report to PATH")
    demo.add_argument("--json", metavar="PATH", help="also write the JSON report to PATH")
    demo.add_argument("--no-plots", action="store_true", help="HTML report without plots")
    demo.add_argument(
        "--dataset",
        choices=["compas", "adult"],
        default="compas",
        help="compas (default): the COMPAS decile score; adult: the shipped Adult "
        "15-model ensemble, with the stability sections",
    )
    demo.add_argument(
        "--intervals",
        type=int,
        metavar="N",
        help="bootstrap intervals from N resamples in the report",
    )
    demo.add_argument(
        "--seed", type=int, metavar="S", help="random seed of the resamples (default 0)"
    )
    demo.add_argument("--no-progress", action="store_true", help="no progress display")
    demo.set_defaults(func=_demo)

    props = sub.add_parser(
        "properties",
        help="which properties the fairness measures have, for a data-set size",
        description="Exact analysis of the fairness measures' properties over every confusion "
        "matrix pair of n examples (properties.analyze_measure_properties).",
    )
    props.add_argument("--n", type=int, default=56, help="data-set size (default 56)")
    props.add_argument(
        "--ir",
        type=float,
        nargs="+",
        metavar="R",
        help="imbalance ratios of the grid, k/n in (0, 1) (default: the paper's)",
    )
    props.add_argument(
        "--gr",
        type=float,
        nargs="+",
        metavar="R",
        help="group ratios of the grid, m/n in (0, 1); the grid is shared by "
        "IR and GR, so --ir and --gr add up",
    )
    props.add_argument("--measures", nargs="+", metavar="M", help="measures (default all six)")
    props.add_argument("--evidence", action="store_true", help="show the numbers behind each mark")
    props.add_argument("--format", choices=["terminal", "json", "markdown"], default="terminal")
    props.add_argument("--output", "-o", metavar="PATH", help="write the table to PATH")
    props.add_argument(
        "--summary",
        metavar="PATH.parquet|PATH.csv",
        help="also write the cell summary (every (IR, GR) cell)",
    )
    props.add_argument("--no-progress", action="store_true", help="no progress display")
    props.set_defaults(func=_properties)

    rep = sub.add_parser(
        "report",
        help="audit a file / glob / folder of predictions",
        description="Audit predictions in a parquet / CSV / IPC file, a glob or a "
        "hive-partitioned folder (one streaming scan) and render the report.",
    )
    rep.add_argument(
        "input",
        nargs="?",
        metavar="PATH",
        help="file, glob (quote it) or folder; or 'input' in the config",
    )
    rep.add_argument("--config", metavar="FILE.toml", help="options from a TOML file")
    rep.add_argument(
        "--input-format",
        choices=["parquet", "csv", "ipc"],
        help="input format (default: from the file name)",
    )
    rep.add_argument("--y-true", dest="y_true", metavar="COL", help="true-label column")
    rep.add_argument("--y-pred", dest="y_pred", metavar="COL", help="predicted-label column")
    rep.add_argument(
        "--y-score", dest="y_score", metavar="COL", help="score column (with --threshold)"
    )
    rep.add_argument("--threshold", type=float, help="predict positive when score >= T")
    rep.add_argument(
        "--by",
        action="append",
        metavar="COL",
        help="protected attribute column (repeat for several)",
    )
    rep.add_argument(
        "--score-bounds",
        dest="score_bounds",
        metavar="LOW,HIGH",
        help="allowed score range (default 0,1; 'none': any finite score)",
    )
    rep.add_argument(
        "--intersectional", action="store_true", help="audit the combinations of the --by columns"
    )
    rep.add_argument("--weight", metavar="COL", help="sample-weight column")
    rep.add_argument(
        "--reference",
        action="append",
        metavar="VALUE",
        help="reference group: 'overall' (default), 'rest', a value, or "
        "attribute=value (repeat per attribute)",
    )
    rep.add_argument("--pos-label", dest="pos_label", metavar="V", help="positive class label")
    rep.add_argument("--neg-label", dest="neg_label", metavar="V", help="negative class label")
    rep.add_argument("--metrics", metavar="M1,M2", help="metric names, or 'all'")
    rep.add_argument("--criteria", metavar="C1,C2", help="fairness criteria names")
    rep.add_argument("--format", choices=FORMATS, help="output format (default terminal)")
    rep.add_argument(
        "--output", "-o", metavar="PATH", help="output file (parquet: folder); default stdout"
    )
    rep.add_argument(
        "--fail-if",
        dest="fail_if",
        action="append",
        default=[],
        metavar="EXPR",
        help="gate, e.g. 'disparate_impact < 0.8' (repeatable); exit 1 if any group satisfies it",
    )
    rep.add_argument(
        "--min-support",
        dest="min_support",
        type=int,
        metavar="N",
        help="gates do not judge values resting on fewer than N rows (the metric's denominator)",
    )
    rep.add_argument(
        "--intervals",
        type=int,
        metavar="N",
        help="bootstrap confidence intervals from N resamples of the count table (no second scan)",
    )
    rep.add_argument(
        "--ci-level",
        dest="ci_level",
        type=float,
        metavar="L",
        help="confidence level of the intervals (default 0.95)",
    )
    rep.add_argument(
        "--ci-method",
        dest="ci_method",
        choices=CI_METHODS,
        help="interval method (default percentile)",
    )
    rep.add_argument(
        "--seed", type=int, metavar="S", help="random seed of the bootstrap resamples (default 0)"
    )
    rep.add_argument(
        "--models",
        nargs="+",
        metavar="COL",
        help="probability columns of an ensemble's models: adds the stability sections",
    )
    rep.add_argument(
        "--compare",
        nargs="+",
        metavar="COL",
        help="prediction columns of several models (col1,col2 or col1 col2): adds the models "
        "section, each model's disparities and its difference from the --y-pred model (or the "
        "first), with paired intervals under --intervals",
    )
    rep.add_argument(
        "--models-prefix",
        dest="models_prefix",
        metavar="PREFIX",
        help="models = the columns named PREFIX followed by digits (e.g. p: p00, p01, ...)",
    )
    rep.add_argument(
        "--no-curves",
        dest="no_curves",
        action="store_true",
        help="with --y-score: leave out the ROC / PR curve sections (they cost one more scan)",
    )
    rep.add_argument(
        "--curve-bins",
        dest="curve_bins",
        type=int,
        metavar="N",
        help="grid of the curves: N equal steps over the score bounds (default 100)",
    )
    rep.add_argument(
        "--deploy-positive-rate",
        dest="deploy_positive_rate",
        type=float,
        metavar="P",
        help="add the deployment section: precision, NPV, F1, accuracy at a "
        "deployment share P of positives (0 < P < 1)",
    )
    rep.add_argument(
        "--no-calibration",
        dest="no_calibration",
        action="store_true",
        help="with --y-score: leave out the calibration sections (they cost one more scan)",
    )
    rep.add_argument(
        "--calibration-bins",
        dest="calibration_bins",
        type=int,
        metavar="N",
        help="bins of the calibration section (expected calibration error, reliability "
        "curves; default 10)",
    )
    rep.add_argument(
        "--calibration-binning",
        dest="calibration_binning",
        choices=("uniform", "quantile"),
        help="calibration bins of equal width on [0, 1] (uniform, default) or at each "
        "group's score quantiles",
    )
    rep.add_argument(
        "--calibration-decimals",
        dest="calibration_decimals",
        metavar="D",
        help="round the scores to D decimal places in the calibration cells (default 4; "
        "'exact': no rounding)",
    )
    rep.add_argument("--no-plots", action="store_true", help="HTML report without plots")
    rep.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress display (it only shows on a terminal anyway)",
    )
    rep.set_defaults(func=_report)
    return parser


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return visible(text.splitlines()[0])


def _error(text: str) -> None:
    print(f"polars-fairmetrics: error: {text}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (0 ok, 1 a gate failed, 2 a usage or input error,
    3 an internal error)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["monitor"]:
        from polars_fairmetrics.monitor import monitor_main

        return monitor_main(arguments[1:])
    parser = build_parser()
    args = parser.parse_args(arguments)
    try:
        return int(args.func(args))
    except (FairMetricsError, InvalidOptionError) as exc:
        _error(_one_line(exc))
    except pl.exceptions.PolarsError as exc:
        _error(f"{type(exc).__name__}: {_one_line(exc)}")
    except OSError as exc:
        where = f": {visible(str(exc.filename))}" if exc.filename else ""
        _error(f"{visible(exc.strerror or _one_line(exc))}{where}")
    except MemoryError:
        _error("out of memory: the input or the options need more memory than is available")
    except KeyboardInterrupt:
        print("polars-fairmetrics: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if getattr(args, "debug", False):
            raise
        print(
            f"polars-fairmetrics: internal error: {type(exc).__name__}: {_one_line(exc)} "
            "(a bug: please report it; --debug shows the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
