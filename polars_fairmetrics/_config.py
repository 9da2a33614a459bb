"""The CLI's TOML configuration file, for repeatable batch jobs (``--config FILE.toml``).

Python 3.11+ reads TOML with the standard library (``tomllib``); on 3.10 the ``tomli`` package is
used when installed, otherwise a clear error says to install it. Keys are validated: an unknown
key or a value of the wrong type is an error naming the key.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from polars_fairmetrics.exceptions import FairMetricsError

__all__ = ["CONFIG_KEYS", "ConfigError", "load_config"]


class ConfigError(FairMetricsError):
    """A configuration file that cannot be read or holds an invalid key or value."""


_STR = (str,)
_LABEL = (str, int, float, bool)
CONFIG_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "input": (_STR, "path of a parquet / CSV / IPC file, a glob or a (hive) folder"),
    "input_format": (_STR, "parquet, csv or ipc (default: from the file name)"),
    "y_true": (_STR, "true-label column"),
    "y_pred": (_STR, "predicted-label column"),
    "y_score": (_STR, "score column (with threshold)"),
    "threshold": ((int, float), "decision threshold for y_score"),
    "score_bounds": ((str, list), "allowed score range [low, high], or 'none'"),
    "by": ((str, list), "protected attribute column(s)"),
    "weight": (_STR, "sample-weight column"),
    "reference": (
        (str, int, float, bool, dict),
        "'overall', 'rest', a group, or a table {attribute = group}",
    ),
    "pos_label": (_LABEL, "positive class label"),
    "neg_label": (_LABEL, "negative class label"),
    "metrics": ((str, list), "metric names, or 'all'"),
    "criteria": ((list,), "fairness criteria names"),
    "intersectional": ((bool,), "audit the combinations of the by columns"),
    "format": (_STR, "terminal, json, markdown, html or parquet"),
    "output": (_STR, "output file (parquet: a folder)"),
    "fail_if": ((str, list), "gate condition(s), e.g. 'disparate_impact < 0.8'"),
    "plots": ((bool,), "include plots in the HTML report"),
    "intervals": ((int,), "number of bootstrap resamples for confidence intervals"),
    "ci_level": ((float,), "confidence level of the intervals, in (0, 1)"),
    "ci_method": (_STR, "interval method: percentile, basic or bca"),
    "seed": ((int,), "seed of the bootstrap resamples"),
    "models": ((list,), "probability columns of an ensemble's models (stability section)"),
    "models_prefix": (_STR, "models = the columns named PREFIX followed by digits"),
    "compare": ((str, list), "prediction columns of models compared side by side (models section)"),
    "curves": ((bool,), "with y_score: include the ROC / PR curve sections (default true)"),
    "curve_bins": ((int,), "grid of the curves: equal steps over the score bounds (100)"),
    "deploy_positive_rate": ((float,), "deployment share of positives: deployment section"),
    "calibration": ((bool,), "with probability scores: the calibration sections (default true)"),
    "calibration_bins": ((int,), "bins of the calibration section (10)"),
    "calibration_binning": (_STR, "calibration bins: uniform (default) or quantile"),
    "calibration_decimals": (
        (int, str),
        "decimal places of the scores in the calibration cells (4), or 'exact'",
    ),
}
"""Allowed keys, their types and meaning (documented in ``docs/cli.md``)."""


def _toml_loads(text: str, path: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config {path}: invalid TOML: {exc}") from None
    try:  # pragma: no cover - Python 3.10 only
        import tomli  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # pragma: no cover
        raise ConfigError(
            "reading a TOML config on Python 3.10 needs the 'tomli' package "
            "(pip install tomli), or Python 3.11+"
        ) from None
    try:  # pragma: no cover
        out: dict[str, Any] = tomli.loads(text)
        return out
    except tomli.TOMLDecodeError as exc:  # pragma: no cover
        raise ConfigError(f"config {path}: invalid TOML: {exc}") from None


def _check(key: str, value: Any, path: str) -> None:
    types, meaning = CONFIG_KEYS[key]
    if isinstance(value, bool) and bool not in types:
        raise ConfigError(f"config {path}: key {key!r} must be {meaning}, got {value!r}")
    if not isinstance(value, types):
        raise ConfigError(f"config {path}: key {key!r} must be {meaning}, got {value!r}")
    if key == "score_bounds" and isinstance(value, list):
        if len(value) != 2 or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
        ):
            raise ConfigError(
                f"config {path}: key 'score_bounds' must be [low, high], got {value!r}"
            )
        return
    if isinstance(value, list) and not all(isinstance(v, str) for v in value):
        raise ConfigError(f"config {path}: key {key!r} must be a list of strings, got {value!r}")
    if isinstance(value, dict) and not all(isinstance(v, _LABEL) for v in value.values()):
        raise ConfigError(f"config {path}: key {key!r} must map attributes to group values")


def load_config(path: str | Path) -> dict[str, Any]:
    """Read and validate a TOML config file; returns its (flat) options.

    Options may be at the top level or in a ``[report]`` table.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = pathlib.Path(d) / "audit.toml"
    ...     _ = p.write_text('y_true = "y"\\nby = ["race", "sex"]\\n')
    ...     load_config(p)
    {'y_true': 'y', 'by': ['race', 'sex']}
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"config {path}: cannot read it ({exc.strerror or exc})") from None
    data = _toml_loads(text, str(path))
    if isinstance(data.get("report"), Mapping):
        data = {**{k: v for k, v in data.items() if k != "report"}, **data["report"]}
    for key, value in data.items():
        if key not in CONFIG_KEYS:
            raise ConfigError(
                f"config {path}: unknown key {key!r}; known keys: {', '.join(CONFIG_KEYS)}"
            )
        _check(key, value, str(path))
    return dict(data)
