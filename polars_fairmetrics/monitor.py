r"""Fairness monitoring across batches and time: count stores on Delta Lake, audits per period,
change tests between windows, gates for jobs.

A batch job scores the same model every day or week. Counts are mergeable, so the job stores
the batch's small count tables — never its rows — and any window (the last 7 days, this quarter)
is audited from the stores alone, exactly as if its rows had been counted at once.

**The store** is one Delta Lake table (the ``deltalake`` package: ``pip install
'polars_fairmetrics[monitor]'``), partitioned by ``period`` and ``model``. One batch
(:func:`append_batch`) writes, in **one atomic commit**:

- ``kind = "counts"`` rows: the confusion counts of every attribute, side by side
  (:func:`~polars_fairmetrics.confusion_counts` with ``separately=True``; per threshold for
  scores);
- ``kind = "cells"`` rows (optional): the score cells of every attribute
  (:func:`~polars_fairmetrics.calibration.score_cells`), for calibration and curves;
- ``kind = "ensemble"`` rows (optional, ``ensemble=[model columns]``): the ensemble sums of every
  attribute (:func:`~polars_fairmetrics.ensemble.ensemble_group_sums`: per group and ensemble
  metric, the sum of the per-row values and the rows counted), from which
  :func:`~polars_fairmetrics.ensemble.ensemble_metrics_from_sums` gives the group means of any
  window exactly (a store with them has schema version 2; without, version 1 as before);
- one ``kind = "batch"`` row: the batch's rows counted;

each row carrying the batch's metadata: ``batch_id``, ``written_at`` (UTC), ``package_version``,
``schema_version`` (:data:`SCHEMA_VERSION`) and ``options`` (the counting options as JSON). The
table's description records the store's layout (group columns and their types, thresholds,
weights, cells): every batch must be counted the same way, or it is refused.

A batch is written with Delta's *replace-where* (``predicate: batch_id = '…'``): re-running a
batch replaces its rows in the same commit, never appends them a second time; a writer killed
mid-write leaves no trace but unreferenced files (Delta readers see only committed versions),
and the batch can simply be re-run. Readers (:func:`read_counts`, :func:`read_cells`) scan only
the periods of the window (partition pruning) and sum the batches with
:func:`~polars_fairmetrics.combine_counts`; ``version=`` reads the store as it was (Delta time
travel).

**Audits over time.** A count table read per period has a ``period`` column, a partition of
every function of the package: :func:`~polars_fairmetrics.fairness_criteria` and
:func:`~polars_fairmetrics.disparities` give per-period values directly;
:func:`period_criteria` and :func:`period_disparities` add bootstrap intervals (each period's
counts resampled on their own). :func:`window_change` asks whether a gap changed between two
windows: the *gap* of a criterion is its distance from parity,
:math:`|c - c_{parity}|` (0 for differences, 1 for ratios), and the change is

.. math:: \Delta = |c_{current} - c_{parity}| - |c_{baseline} - c_{parity}|

(positive: the gap grew), with a percentile interval from resampling each window's count table
independently (:func:`~polars_fairmetrics.bootstrap.resample_counts`) and differencing the gaps
replicate by replicate. :func:`change_gate` fails when a gap grew by more than a tolerance with
an interval excluding 0; :func:`gap_gate` when a gap exceeds a tolerance.

**The command line** (:func:`monitor_main`, ``polars-fairmetrics monitor``): ``append`` a batch
from a Parquet/CSV file, ``audit`` a window (exit 1 when a gate fails, 2 on bad input),
``batches`` lists a store's batches.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Literal, TypeAlias, cast

import polars as pl

from polars_fairmetrics._replicates import (
    attach_intervals,
    check_interval_options,
    resample_partitions,
)
from polars_fairmetrics._text import visible
from polars_fairmetrics._typing import ColumnNames, FrameT, Label
from polars_fairmetrics._validate import as_list, schema_of
from polars_fairmetrics.calibration import CELL_COLUMNS, score_cells
from polars_fairmetrics.counts import (
    COUNT_COLUMNS,
    NULL_COLUMNS,
    WEIGHTED_COUNT_COLUMNS,
    combine_counts,
    confusion_counts,
    count_columns,
)
from polars_fairmetrics.disparity import (
    CRITERIA,
    Layout,
    Reference,
    ZeroReference,
    disparities,
    fairness_criteria,
)
from polars_fairmetrics.ensemble import Convention
from polars_fairmetrics.exceptions import (
    FairMetricsError,
    InvalidDtypeError,
    InvalidOptionError,
    StoreError,
)
from polars_fairmetrics.inputs import accepts_tables
from polars_fairmetrics.metrics import _metric_names
from polars_fairmetrics.results import PARTITION_COLUMNS, display_label, finish, order_rank

__all__ = [
    "SCHEMA_VERSION",
    "BatchInfo",
    "GateOutcome",
    "append_batch",
    "change_gate",
    "gap_gate",
    "monitor_main",
    "period_criteria",
    "period_disparities",
    "read_cells",
    "read_counts",
    "read_ensemble_sums",
    "store_batches",
    "window_change",
]

SCHEMA_VERSION: int = 2
"""Newest version of the store's row layout this package reads and writes; a store written by
a newer version is refused. Version 2 adds the ``ensemble`` rows (and their ``metric`` and
``value_sum`` columns); a store without them is written as version 1, readable by older
packages."""

STORE_FORMAT = "polars_fairmetrics.count_store"
"""The ``format`` recorded in a store's description."""

PeriodValue: TypeAlias = date | datetime | int | str
"""A period: a date, a timestamp, an integer (week 202405) or a text label (``"2024-W05"``)."""

StorePath: TypeAlias = str | Path
"""A local path or an object-store URI (``s3://…``, ``az://…``) of a Delta table."""

IfExists: TypeAlias = Literal["replace", "skip", "error"]
"""What :func:`append_batch` does with a batch id already in the store."""

META_COLUMNS: tuple[str, ...] = (
    "batch_id",
    "kind",
    "written_at",
    "package_version",
    "schema_version",
    "options",
)
"""Metadata columns of every store row."""

_PARTITIONS = ["period", "model"]
_RESERVED_STORE = {
    *META_COLUMNS,
    *_PARTITIONS,
    *CELL_COLUMNS,
    "threshold",
    "attribute",
    "metric",
    "value_sum",
}
_BATCH_ID = re.compile(r"^[^\x00-\x1f\x7f]{1,256}$")


def _deltalake() -> Any:
    try:
        import deltalake
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "count stores need the deltalake package: pip install 'polars_fairmetrics[monitor]'"
        ) from exc
    return deltalake


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("polars_fairmetrics")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


# ---------------------------------------------------------------------------------------------
# The store's layout
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _StoreLayout:
    """What every batch of a store shares: it decides the table's columns."""

    by: list[str]
    key_dtypes: dict[str, str]
    period_dtype: str
    counts: bool
    thresholds: list[float] | None
    weighted: bool
    cells: bool
    decimals: int | None
    ensemble: dict[str, Any] | None = None

    @property
    def version(self) -> int:
        """The schema version of a store of this layout (2 with ensemble sums, else 1)."""
        return 2 if self.ensemble is not None else 1

    def describe(self) -> str:
        extra: dict[str, Any] = {} if self.ensemble is None else {"ensemble": self.ensemble}
        return json.dumps(
            {
                "format": STORE_FORMAT,
                "schema_version": self.version,
                "layout": {
                    **extra,
                    "by": self.by,
                    "key_dtypes": self.key_dtypes,
                    "period_dtype": self.period_dtype,
                    "counts": self.counts,
                    "thresholds": self.thresholds,
                    "weighted": self.weighted,
                    "cells": self.cells,
                    "decimals": self.decimals,
                },
            },
            sort_keys=True,
        )

    @classmethod
    def parse(cls, description: str | None, store: StorePath) -> _StoreLayout:
        try:
            info = json.loads(description or "")
            ok = isinstance(info, dict) and info.get("format") == STORE_FORMAT
        except json.JSONDecodeError:
            ok = False
        if not ok:
            raise StoreError(
                f"the Delta table at {str(store)!r} is not a polars_fairmetrics count store "
                "(its description does not say so)"
            )
        version = info.get("schema_version")
        if not isinstance(version, int) or version > SCHEMA_VERSION:
            raise StoreError(
                f"the count store at {str(store)!r} has schema version {version!r}; this "
                f"polars_fairmetrics reads versions up to {SCHEMA_VERSION}: upgrade the package"
            )
        lay = info["layout"]
        return cls(
            by=list(lay["by"]),
            key_dtypes=dict(lay["key_dtypes"]),
            period_dtype=str(lay["period_dtype"]),
            counts=bool(lay["counts"]),
            thresholds=None if lay["thresholds"] is None else [float(t) for t in lay["thresholds"]],
            weighted=bool(lay["weighted"]),
            cells=bool(lay["cells"]),
            decimals=lay["decimals"],
            ensemble=lay.get("ensemble"),
        )

    def differences(self, other: _StoreLayout) -> list[str]:
        out = []
        for name in (
            "by",
            "key_dtypes",
            "period_dtype",
            "counts",
            "thresholds",
            "weighted",
            "cells",
            "decimals",
            "ensemble",
        ):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:
                out.append(f"{name}: store {mine!r}, batch {theirs!r}")
        return out


_DTYPES: dict[str, pl.DataType] = {
    "String": pl.String(),
    "Boolean": pl.Boolean(),
    "Int8": pl.Int8(),
    "Int16": pl.Int16(),
    "Int32": pl.Int32(),
    "Int64": pl.Int64(),
    "Float32": pl.Float32(),
    "Float64": pl.Float64(),
    "Date": pl.Date(),
    "Datetime": pl.Datetime("us"),
    "DatetimeUTC": pl.Datetime("us", "UTC"),
}


def _dtype_name(dtype: pl.DataType) -> str:
    for name, known in _DTYPES.items():
        if dtype == known:
            return name
    raise InvalidDtypeError(f"dtype {dtype} cannot be stored")


def _storable(column: str, dtype: pl.DataType, role: str) -> pl.DataType:
    """The Delta-compatible dtype a key or period column is stored as."""
    if isinstance(dtype, (pl.Categorical, pl.Enum)):
        return pl.String()
    if dtype in (pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64):
        return pl.Int64()
    if dtype == pl.Null:
        return pl.String()
    if isinstance(dtype, pl.Datetime):
        return pl.Datetime("us", "UTC") if dtype.time_zone is not None else pl.Datetime("us")
    for known in _DTYPES.values():
        if dtype == known:
            return known
    raise InvalidDtypeError(
        f"column {column!r} ({role}) has dtype {dtype}, which a count store cannot hold; "
        "expected text, Boolean, integer, float, Date or Datetime values"
    )


def _period_series(period: PeriodValue, dtype: pl.DataType | None) -> pl.Series:
    """The period as a one-value Series of the store's period dtype (inferred for a new store)."""
    if period is None or isinstance(period, bool) or not isinstance(period, (date, int, str)):
        raise InvalidOptionError(
            f"period must be a date, a datetime, an integer or a text label, got {period!r}"
        )
    if isinstance(period, str) and not period.strip():
        raise InvalidOptionError("period is an empty text")
    series: pl.Series = pl.Series("period", [period])
    if isinstance(series.dtype, pl.Datetime):
        zone: str | None = series.dtype.time_zone
        series = series.cast(pl.Datetime("us", zone))
        if zone not in (None, "UTC"):
            series = series.dt.convert_time_zone("UTC")
    elif isinstance(period, int):
        series = series.cast(pl.Int64)
    if dtype is None:
        inferred: pl.Series = series.cast(_storable("period", series.dtype, "period"))
        return inferred
    try:
        if series.dtype == pl.String and dtype == pl.Date:
            out: pl.Series = series.str.to_date("%Y-%m-%d")
        elif series.dtype == pl.String and isinstance(dtype, pl.Datetime):
            out = series.str.to_datetime(time_unit="us", time_zone=dtype.time_zone)
        else:
            out = series.cast(dtype, strict=True)
        return out
    except (pl.exceptions.PolarsError, ValueError) as exc:
        raise InvalidOptionError(
            f"period {period!r} is not a value of the store's period type {dtype}"
        ) from exc


def _parse_period_text(text: str, dtype: pl.DataType | None) -> PeriodValue:
    """A period given as text (command line): typed by the store, else inferred."""
    if dtype is not None:
        return cast(PeriodValue, _period_series(text, dtype).item())
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            return text
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    return text


def _open(store: StorePath, storage_options: Mapping[str, str] | None) -> Any | None:
    """The store's DeltaTable, or None when there is no table there yet."""
    deltalake = _deltalake()
    uri = str(store)
    options = dict(storage_options) if storage_options else None
    try:
        found = deltalake.DeltaTable.is_deltatable(uri, storage_options=options)
    except OSError as exc:  # a file where the store's folder should be, an unreadable path
        raise StoreError(f"no count store at {uri!r} (not a Delta table folder)") from exc
    if not found:
        return None
    return deltalake.DeltaTable(uri, storage_options=options)


def _open_existing(
    store: StorePath, storage_options: Mapping[str, str] | None, version: int | None = None
) -> tuple[Any, _StoreLayout]:
    table = _open(store, storage_options)
    if table is None:
        raise StoreError(f"no count store at {str(store)!r} (no Delta table there)")
    if version is not None:
        if isinstance(version, bool) or not isinstance(version, int) or version < 0:
            raise InvalidOptionError(f"version must be an integer >= 0, got {version!r}")
        try:
            table.load_as_version(version)
        except Exception as exc:
            raise StoreError(
                f"the count store at {str(store)!r} has no version {version}: {exc}"
            ) from exc
    return table, _StoreLayout.parse(table.metadata().description, store)


def _store_schema(layout: _StoreLayout) -> dict[str, pl.DataType]:
    """Every column of a store, in order (rows of each kind fill theirs, the rest null)."""
    schema: dict[str, pl.DataType] = {
        "period": _DTYPES[layout.period_dtype],
        "model": pl.String(),
        "batch_id": pl.String(),
        "kind": pl.String(),
        "attribute": pl.String(),
    }
    schema.update({k: _DTYPES[layout.key_dtypes[k]] for k in layout.by})
    if layout.thresholds is not None:
        schema["threshold"] = pl.Float64()
    if layout.cells:
        schema["score"] = pl.Float64()
    for c in COUNT_COLUMNS:
        schema[c] = pl.Int64()
    if layout.weighted:
        for c in WEIGHTED_COUNT_COLUMNS:
            schema[c] = pl.Float64()
    for c in NULL_COLUMNS[: 4 if layout.weighted else 3]:
        schema[c] = pl.Int64()
    if layout.cells:
        schema["positives"] = pl.Int64()
        schema["score_sum"] = pl.Float64()
        if layout.weighted:
            schema["positives_w"] = pl.Float64()
            schema["score_sum_w"] = pl.Float64()
    if layout.ensemble is not None:
        schema["metric"] = pl.String()
        schema["value_sum"] = pl.Float64()
    schema.update(
        {
            "written_at": pl.Datetime("us", "UTC"),
            "package_version": pl.String(),
            "schema_version": pl.Int64(),
            "options": pl.String(),
        }
    )
    return schema


def _escape(text: str) -> str:
    return text.replace("'", "''")


# ---------------------------------------------------------------------------------------------
# Writing a batch
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchInfo:
    """What :func:`append_batch` did."""

    batch_id: str
    period: PeriodValue
    model: str
    rows: int
    """Input rows of the batch (counted + left out for a null)."""
    written: bool
    """False when the batch was already in the store and ``if_exists="skip"``."""
    version: int | None
    """The store's Delta version after the commit (None when skipped)."""


def _check_text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not _BATCH_ID.match(value):
        raise InvalidOptionError(
            f"{what} must be a text of 1 to 256 characters without control characters, "
            f"got {value!r}"
        )
    return value


def _batch_present(table: Any, batch_id: str) -> bool:
    found = (
        pl.scan_delta(table)
        .filter((pl.col("batch_id") == batch_id) & (pl.col("kind") == "batch"))
        .select(pl.len())
        .collect()
        .item()
    )
    return bool(found)


def _ensemble_spec(
    models: Sequence[str] | None,
    metrics: str | Sequence[str] | None,
    convention: str,
) -> dict[str, Any] | None:
    """The ensemble part of a store's layout (None: no ensemble sums)."""
    if models is None:
        if metrics is not None:
            raise InvalidOptionError("ensemble_metrics= needs ensemble= (the model columns)")
        return None
    names = [models] if isinstance(models, str) else list(models)
    if not names or not all(isinstance(c, str) for c in names):
        raise InvalidOptionError(
            f"ensemble= must name the probability columns of the models, got {models!r}"
        )
    if convention not in ("half_up", "virny"):
        raise InvalidOptionError(
            f"ensemble_convention must be 'half_up' or 'virny', got {convention!r}"
        )
    from polars_fairmetrics.ensemble import ENSEMBLE_METRICS, _names

    chosen = list(ENSEMBLE_METRICS) if metrics is None else _names(metrics)
    return {
        "models": names,
        "metrics": chosen,
        "convention": convention,
        "ddof": 1,
        "log_base": 2.0,
    }


@accepts_tables
def append_batch(
    data: FrameT,
    store: StorePath,
    *,
    batch_id: str,
    period: PeriodValue,
    model: str = "default",
    y_true: str,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    by: ColumnNames,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    cells: bool | None = None,
    decimals: int | None = None,
    ensemble: Sequence[str] | None = None,
    ensemble_metrics: str | Sequence[str] | None = None,
    ensemble_convention: Convention = "half_up",
    if_exists: IfExists = "replace",
    storage_options: Mapping[str, str] | None = None,
) -> BatchInfo:
    r"""Count a batch of rows and write its count tables to a store, in one atomic commit.

    The batch's confusion counts (every attribute of ``by`` on its own:
    :func:`~polars_fairmetrics.confusion_counts` with ``separately=True``) and, with ``cells``,
    its score cells (:func:`~polars_fairmetrics.calibration.score_cells`) are written under
    ``period`` and ``model`` with the batch's metadata. Delta's replace-where on ``batch_id``
    makes the write idempotent: a batch id already in the store is replaced in the same commit
    (``if_exists="replace"``, default), kept (``"skip"``) or refused (``"error"``).

    Parameters
    ----------
    data
        The batch's rows (DataFrame or LazyFrame; scanned once).
    store
        Path or URI of the Delta table (created by the first batch).
    batch_id
        The batch's identity (e.g. the job's run id or the input file's name).
    period
        The period the batch belongs to: a date, datetime, integer or text (the first batch
        fixes the type; later text values are parsed to it).
    model
        The model's name (a partition, like ``period``).
    y_true, y_pred, y_score, threshold, weight, pos_label, neg_label
        As for :func:`~polars_fairmetrics.confusion_counts`. Confusion counts are written from
        ``y_pred``, or from ``y_score`` at ``threshold``; with ``y_score`` alone, only cells.
    by
        The protected attribute column(s), each counted on its own.
    cells
        Also write the score cells of ``y_score`` (default: when ``y_score`` is given).
    decimals
        Round scores to this many places in the cells (see
        :func:`~polars_fairmetrics.calibration.score_cells`).
    ensemble
        Probability columns of an ensemble's models: also write the ensemble sums of every
        attribute (:func:`~polars_fairmetrics.ensemble.ensemble_group_sums`), read back with
        :func:`read_ensemble_sums` (the store's schema version is then 2).
    ensemble_metrics, ensemble_convention
        The ensemble metrics summed (default: all of
        :data:`~polars_fairmetrics.ensemble.ENSEMBLE_METRICS`) and the label convention (see
        :func:`~polars_fairmetrics.ensemble.ensemble_sample_metrics`).
    if_exists
        ``"replace"`` (default), ``"skip"`` or ``"error"`` for a batch id already stored.
    storage_options
        Options of the object store (credentials, region), passed to Delta.

    Returns
    -------
    BatchInfo
        The batch id, period, model, rows counted, whether it was written, the new version.

    Raises
    ------
    StoreError
        The store is not a count store, or was written with other options (another ``by``,
        thresholds, weights, cells or ensemble), or by a newer version of the package.

    Examples
    --------
    >>> import tempfile, datetime
    >>> import polars as pl
    >>> rows = pl.DataFrame({"sex": ["f", "m", "m"], "y": [1, 0, 1], "p": [1, 1, 0]})
    >>> store = tempfile.mkdtemp() + "/store"
    >>> info = append_batch(rows, store, batch_id="run-1", period=datetime.date(2024, 1, 1),
    ...                     y_true="y", y_pred="p", by="sex")
    >>> info.rows, info.written
    (3, True)
    >>> again = append_batch(rows, store, batch_id="run-1", period=datetime.date(2024, 1, 1),
    ...                      y_true="y", y_pred="p", by="sex")  # a re-run replaces, never adds
    >>> read_counts(store, merge=True).collect()["n"].to_list()
    [1, 2]
    """
    batch_id = _check_text(batch_id, "batch_id")
    model = _check_text(model, "model")
    if if_exists not in ("replace", "skip", "error"):
        raise InvalidOptionError(
            f"if_exists must be 'replace', 'skip' or 'error', got {if_exists!r}"
        )
    keys = as_list(by)
    if not keys:
        raise InvalidOptionError("by= needs at least one attribute column")
    clash = [k for k in keys if k in _RESERVED_STORE]
    if clash:
        raise InvalidOptionError(
            f"group column {clash[0]!r} collides with a column of the count store; rename it"
        )
    if y_pred is not None and threshold is not None:
        raise InvalidOptionError(
            "threshold= applies to y_score=, not to y_pred= (counts come from y_pred)"
        )
    with_cells = (y_score is not None) if cells is None else bool(cells)
    if with_cells and y_score is None:
        raise InvalidOptionError("cells=True needs y_score= (the predicted probability)")
    with_counts = y_pred is not None or threshold is not None
    ensemble_spec = _ensemble_spec(ensemble, ensemble_metrics, ensemble_convention)
    if not with_counts and not with_cells and ensemble_spec is None:
        raise InvalidOptionError(
            "nothing to store: pass y_pred=, or y_score= with threshold= (confusion counts), "
            "or y_score= (score cells), or ensemble= (ensemble sums)"
        )
    schema = schema_of(data)
    table = _open(store, storage_options)
    existing = (
        _StoreLayout.parse(table.metadata().description, store) if table is not None else None
    )
    period_value = _period_series(
        period, _DTYPES[existing.period_dtype] if existing is not None else None
    )
    from polars_fairmetrics._validate import require_columns, validate_thresholds

    require_columns(schema, "group", keys)
    thresholds = (
        validate_thresholds(threshold, (0.0, 1.0))
        if threshold is not None and y_pred is None
        else None
    )
    layout = _StoreLayout(
        by=keys,
        key_dtypes={k: _dtype_name(_storable(k, schema[k], "group")) for k in keys},
        period_dtype=_dtype_name(period_value.dtype),
        counts=with_counts,
        thresholds=thresholds,
        weighted=weight is not None,
        cells=with_cells,
        decimals=decimals if with_cells else None,
        ensemble=ensemble_spec,
    )
    if existing is not None:
        differ = existing.differences(layout)
        if differ:
            raise StoreError(
                f"batch {batch_id!r} is counted differently from the store at {str(store)!r} "
                f"({'; '.join(differ)}): count every batch with the same options, or use a new "
                "store"
            )
        if if_exists != "replace" and _batch_present(table, batch_id):
            if if_exists == "error":
                raise StoreError(f"batch {batch_id!r} is already in the store at {str(store)!r}")
            return BatchInfo(batch_id, period_value.item(), model, 0, False, None)
    lazy = data.lazy()
    queries: list[pl.LazyFrame] = [lazy.select(pl.len().cast(pl.Int64).alias("n"))]
    if with_counts:
        queries.append(
            confusion_counts(
                lazy,
                y_true=y_true,
                y_pred=y_pred,
                y_score=y_score if y_pred is None else None,
                threshold=threshold if y_pred is None else None,
                by=keys,
                weight=weight,
                pos_label=pos_label,
                neg_label=neg_label,
                separately=True,
            )
        )
    if with_cells:
        queries.append(
            score_cells(
                lazy,
                y_true=y_true,
                y_score=cast(str, y_score),
                by=keys,
                weight=weight,
                pos_label=pos_label,
                neg_label=neg_label,
                separately=True,
                decimals=decimals,
            )
        )
    if ensemble_spec is not None:
        from polars_fairmetrics.ensemble import ensemble_group_sums

        queries.append(
            ensemble_group_sums(
                lazy,
                models=ensemble_spec["models"],
                by=keys,
                weight=weight,
                metrics=ensemble_spec["metrics"],
                separately=True,
                convention=ensemble_spec["convention"],
                ddof=ensemble_spec["ddof"],
                log_base=ensemble_spec["log_base"],
            )
        )
    collected = pl.collect_all(queries)
    rows = int(collected[0].item())
    options = json.dumps(
        {
            "y_true": y_true,
            "y_pred": y_pred,
            "y_score": y_score,
            "threshold": thresholds,
            "by": keys,
            "weight": weight,
            "pos_label": pos_label,
            "neg_label": neg_label,
            "cells": with_cells,
            "decimals": decimals,
            "ensemble": ensemble_spec,
        },
        sort_keys=True,
        default=str,
    )
    frames: list[pl.DataFrame] = [collected[0].with_columns(pl.lit("batch").alias("kind"))]
    i = 1
    if with_counts:
        frames.append(collected[i].with_columns(pl.lit("counts").alias("kind")))
        i += 1
    if with_cells:
        frames.append(collected[i].with_columns(pl.lit("cells").alias("kind")))
        i += 1
    if ensemble_spec is not None:
        frames.append(collected[i].with_columns(pl.lit("ensemble").alias("kind")))
    store_schema = _store_schema(layout)
    meta = {
        "period": period_value.item(),
        "model": model,
        "batch_id": batch_id,
        "written_at": datetime.now(timezone.utc),
        "package_version": _package_version(),
        "schema_version": layout.version,
        "options": options,
    }
    parts = []
    for f in frames:
        f = f.with_columns([pl.lit(v, dtype=store_schema[c]).alias(c) for c, v in meta.items()])
        parts.append(
            f.select(
                [
                    (
                        pl.col(c).cast(t, strict=True)
                        if c in f.columns
                        else pl.lit(None, dtype=t).alias(c)
                    )
                    for c, t in store_schema.items()
                ]
            )
        )
    batch = pl.concat(parts, how="vertical")
    deltalake = _deltalake()
    write_options: dict[str, Any] = {
        "partition_by": _PARTITIONS,
        "predicate": f"batch_id = '{_escape(batch_id)}'",
        "commit_properties": deltalake.CommitProperties(
            custom_metadata={
                "polars_fairmetrics.batch_id": batch_id,
                "polars_fairmetrics.schema_version": str(layout.version),
            }
        ),
    }
    if table is None:
        write_options["description"] = layout.describe()
        write_options["name"] = "polars_fairmetrics count store"
    batch.write_delta(
        str(store) if table is None else table,
        mode="overwrite",
        storage_options=dict(storage_options) if storage_options else None,
        delta_write_options=write_options,
    )
    after = _open(store, storage_options)
    return BatchInfo(
        batch_id,
        period_value.item(),
        model,
        rows,
        True,
        None if after is None else int(after.version()),
    )


# ---------------------------------------------------------------------------------------------
# Reading a window
# ---------------------------------------------------------------------------------------------


def _window_filter(
    layout: _StoreLayout,
    start: PeriodValue | None,
    end: PeriodValue | None,
    models: str | Sequence[str] | None,
) -> pl.Expr:
    dtype = _DTYPES[layout.period_dtype]
    cond = pl.lit(True)
    if start is not None:
        cond = cond & (pl.col("period") >= pl.lit(_period_series(start, dtype).item(), dtype))
    if end is not None:
        cond = cond & (pl.col("period") <= pl.lit(_period_series(end, dtype).item(), dtype))
    if models is not None:
        names = [models] if isinstance(models, str) else list(models)
        cond = cond & pl.col("model").is_in(names)
    return cond


def _read(
    store: StorePath,
    kind: str,
    *,
    start: PeriodValue | None,
    end: PeriodValue | None,
    models: str | Sequence[str] | None,
    merge: bool,
    version: int | None,
    storage_options: Mapping[str, str] | None,
) -> pl.LazyFrame:
    table, layout = _open_existing(store, storage_options, version)
    if kind == "counts" and not layout.counts:
        raise StoreError(
            f"the count store at {str(store)!r} holds no confusion counts (its batches were "
            "written without y_pred= or threshold=)"
        )
    if kind == "cells" and not layout.cells:
        raise StoreError(
            f"the count store at {str(store)!r} holds no score cells: write batches with "
            "y_score= (cells=True)"
        )
    if kind == "ensemble" and layout.ensemble is None:
        raise StoreError(
            f"the count store at {str(store)!r} holds no ensemble sums: write batches with "
            "ensemble=[the models' probability columns]"
        )
    schema = _store_schema(layout)
    if kind == "ensemble":
        stats = ["value_sum", "n", "n_null", *(["n_w"] if layout.weighted else [])]
        keys = ["attribute", *layout.by, "model", *([] if merge else ["period"]), "metric"]
        return (
            pl.scan_delta(table)
            .filter((pl.col("kind") == kind) & _window_filter(layout, start, end, models))
            .group_by(keys)
            .agg(pl.col(stats).sum())
            .sort(
                [
                    *[pl.col(k) for k in keys if k != "metric"],
                    order_rank("metric", cast("dict[str, Any]", layout.ensemble)["metrics"]),
                ],
                nulls_last=True,
            )
            .select(*keys, *stats)
        )
    if kind == "counts":
        extra = ["threshold"] if layout.thresholds is not None else []
        stats = [
            *COUNT_COLUMNS,
            *(WEIGHTED_COUNT_COLUMNS if layout.weighted else ()),
            *NULL_COLUMNS[: 4 if layout.weighted else 3],
        ]
    else:
        extra = ["score"]
        stats = [c for c in CELL_COLUMNS if c in schema and c != "score"]
    keys = ["attribute", *layout.by, "model", *([] if merge else ["period"]), *extra]
    scan = pl.scan_delta(table).filter(
        (pl.col("kind") == kind) & _window_filter(layout, start, end, models)
    )
    selected = scan.select(*keys, *stats)
    return combine_counts([selected], keys=keys)


def read_counts(
    store: StorePath,
    *,
    start: PeriodValue | None = None,
    end: PeriodValue | None = None,
    models: str | Sequence[str] | None = None,
    merge: bool = False,
    version: int | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> pl.LazyFrame:
    r"""The count table of a window of a store: per period, or merged over the window.

    .. math:: TP_{g}^{window} = \sum_{\text{batches } b \in window} TP_{g}^{b}

    (every count column likewise; :func:`~polars_fairmetrics.combine_counts`). Batches of the
    same period and model are summed; with ``merge=True`` the periods too.

    Parameters
    ----------
    store
        Path or URI of the count store.
    start, end
        First and last period of the window, inclusive (default: unbounded). Only the window's
        partitions are read.
    models
        Model name(s) to read (default: all).
    merge
        Sum over the periods of the window (no ``period`` column).
    version
        Read the store as it was at this Delta version (time travel).
    storage_options
        Options of the object store.

    Returns
    -------
    LazyFrame
        A count table (``docs/results.md``): ``attribute``, the group columns, ``model``,
        [``period``], [``threshold``], ``tp fp tn fn n`` [``tp_w … n_w``], ``n_null`` and its
        breakdown; sorted. Every function taking a count table accepts it (``period`` and
        ``model`` are partitions).

    Examples
    --------
    >>> import tempfile, datetime
    >>> import polars as pl
    >>> store = tempfile.mkdtemp() + "/store"
    >>> for day in (1, 2):
    ...     rows = pl.DataFrame({"g": ["a", "b"], "y": [1, 0], "p": [1, day % 2]})
    ...     _ = append_batch(rows, store, batch_id=f"day-{day}", y_true="y", y_pred="p",
    ...                      by="g", period=datetime.date(2024, 1, day))
    >>> read_counts(store).collect().select("g", "period", "tp", "fp", "n")
    shape: (4, 5)
    ┌─────┬────────────┬─────┬─────┬─────┐
    │ g   ┆ period     ┆ tp  ┆ fp  ┆ n   │
    │ --- ┆ ---        ┆ --- ┆ --- ┆ --- │
    │ str ┆ date       ┆ i64 ┆ i64 ┆ i64 │
    ╞═════╪════════════╪═════╪═════╪═════╡
    │ a   ┆ 2024-01-01 ┆ 1   ┆ 0   ┆ 1   │
    │ a   ┆ 2024-01-02 ┆ 1   ┆ 0   ┆ 1   │
    │ b   ┆ 2024-01-01 ┆ 0   ┆ 1   ┆ 1   │
    │ b   ┆ 2024-01-02 ┆ 0   ┆ 0   ┆ 1   │
    └─────┴────────────┴─────┴─────┴─────┘
    """
    return _read(
        store,
        "counts",
        start=start,
        end=end,
        models=models,
        merge=merge,
        version=version,
        storage_options=storage_options,
    )


def read_cells(
    store: StorePath,
    *,
    start: PeriodValue | None = None,
    end: PeriodValue | None = None,
    models: str | Sequence[str] | None = None,
    merge: bool = False,
    version: int | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> pl.LazyFrame:
    """The score cells of a window of a store: per period, or merged over the window.

    Like :func:`read_counts`, for the ``cells`` rows: the result is a score-cell table
    (``attribute``, the group columns, ``model``, [``period``], ``score``, ``n``, ``positives``,
    ``score_sum`` [weighted sums], ``n_null``) that
    :func:`~polars_fairmetrics.calibration.reliability_curve`,
    :func:`~polars_fairmetrics.calibration.calibration_metrics` and
    :func:`~polars_fairmetrics.calibration.calibration_disparities` accept.

    Examples
    --------
    >>> import tempfile, datetime
    >>> import polars as pl
    >>> store = tempfile.mkdtemp() + "/store"
    >>> rows = pl.DataFrame({"g": ["a", "a", "b"], "y": [1, 0, 1], "s": [0.9, 0.9, 0.4]})
    >>> _ = append_batch(rows, store, batch_id="b1", period=1, y_true="y", y_score="s", by="g")
    >>> read_cells(store, merge=True).collect().select("g", "score", "n", "positives")
    shape: (2, 4)
    ┌─────┬───────┬─────┬───────────┐
    │ g   ┆ score ┆ n   ┆ positives │
    │ --- ┆ ---   ┆ --- ┆ ---       │
    │ str ┆ f64   ┆ i64 ┆ i64       │
    ╞═════╪═══════╪═════╪═══════════╡
    │ a   ┆ 0.9   ┆ 2   ┆ 1         │
    │ b   ┆ 0.4   ┆ 1   ┆ 1         │
    └─────┴───────┴─────┴───────────┘
    """
    return _read(
        store,
        "cells",
        start=start,
        end=end,
        models=models,
        merge=merge,
        version=version,
        storage_options=storage_options,
    )


def read_ensemble_sums(
    store: StorePath,
    *,
    start: PeriodValue | None = None,
    end: PeriodValue | None = None,
    models: str | Sequence[str] | None = None,
    merge: bool = False,
    version: int | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> pl.LazyFrame:
    r"""The ensemble sums of a window of a store: per period, or merged over the window.

    .. math:: \text{value\_sum}_g^{window} = \sum_{b \in window} \text{value\_sum}_g^b,
        \quad n_g^{window} = \sum_{b \in window} n_g^b \ (\text{likewise } n^{null}, n^w)

    Like :func:`read_counts`, for the ``ensemble`` rows written with ``append_batch(...,
    ensemble=[...])``: an ensemble-sums table (``attribute``, the group columns, ``model``,
    [``period``], ``metric``, ``value_sum``, ``n``, ``n_null``, [``n_w``]) that
    :func:`~polars_fairmetrics.ensemble.ensemble_metrics_from_sums` turns into the per-group
    ensemble metrics of the window — the same as
    :func:`~polars_fairmetrics.ensemble.ensemble_group_metrics` of the window's rows (counts
    exactly; means up to float rounding of the sums).

    Examples
    --------
    >>> import tempfile
    >>> import polars as pl
    >>> from polars_fairmetrics.ensemble import ensemble_metrics_from_sums
    >>> store = tempfile.mkdtemp() + "/store"
    >>> for day in (1, 2):
    ...     rows = pl.DataFrame({"g": ["a", "b"], "y": [1, 0], "p1": [0.9, 0.4],
    ...                          "p2": [0.3 * day, 0.3]})
    ...     _ = append_batch(rows, store, batch_id=f"d{day}", period=day, y_true="y",
    ...                      by="g", ensemble=["p1", "p2"], ensemble_metrics="label_stability")
    >>> window = read_ensemble_sums(store, merge=True)
    >>> ensemble_metrics_from_sums(window).select("g", "value", "n").collect().rows()
    [('a', 0.5, 2), ('b', 1.0, 2)]
    """
    return _read(
        store,
        "ensemble",
        start=start,
        end=end,
        models=models,
        merge=merge,
        version=version,
        storage_options=storage_options,
    )


def store_batches(
    store: StorePath,
    *,
    version: int | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> pl.DataFrame:
    """The batches in a store, with their metadata (one row per batch).

    Columns: ``batch_id``, ``period``, ``model``, ``rows`` (input rows), ``written_at`` (UTC),
    ``package_version``, ``schema_version``, ``options`` (JSON); sorted by period, model and
    time of writing.

    Examples
    --------
    >>> import tempfile
    >>> import polars as pl
    >>> store = tempfile.mkdtemp() + "/store"
    >>> rows = pl.DataFrame({"g": ["a", "b"], "y": [1, 0], "p": [1, 1]})
    >>> _ = append_batch(rows, store, batch_id="b1", period="2024-W01", y_true="y",
    ...                  y_pred="p", by="g")
    >>> store_batches(store).select("batch_id", "period", "rows").row(0)
    ('b1', '2024-W01', 2)
    """
    table, _ = _open_existing(store, storage_options, version)
    return (
        pl.scan_delta(table)
        .filter(pl.col("kind") == "batch")
        .select(
            "batch_id",
            "period",
            "model",
            pl.col("n").alias("rows"),
            "written_at",
            "package_version",
            "schema_version",
            "options",
        )
        .sort("period", "model", "written_at", "batch_id")
        .collect()
    )


# ---------------------------------------------------------------------------------------------
# Audits over time: intervals per period, change between windows
# ---------------------------------------------------------------------------------------------


def _layout_of(counts: pl.LazyFrame | pl.DataFrame, by: ColumnNames | None) -> Layout:
    columns = list(schema_of(counts).names())
    missing = [c for c in COUNT_COLUMNS[:4] if c not in columns]
    if missing:
        raise InvalidOptionError(
            f"expected a count table (read_counts, confusion_counts); missing: {', '.join(missing)}"
        )
    return Layout.of(columns, by, count_columns(columns))


def _uses_weights(columns: Sequence[str], weighted: bool | None) -> bool:
    has = all(c in columns for c in WEIGHTED_COUNT_COLUMNS[:4])
    return has if weighted is None else bool(weighted) and has


def _replicate_counts(
    counts: pl.LazyFrame, layout: Layout, n_resamples: int, seed: int | None, stream: int
) -> pl.LazyFrame:
    """Replicates of a count table: each attribute, model and period drawn on its own."""
    schema = counts.collect_schema()
    parts = [p for p in layout.partitions if p != "attribute"]
    strata = [p for p in parts if p in ("model", "period")]
    out_schema: dict[str, Any] = {"replicate": pl.Int64}
    out_schema.update(
        {c: schema[c] for c in schema.names() if c in (*layout.partitions, *layout.keys)}
    )
    out_schema.update({c: pl.Int64 for c in (*COUNT_COLUMNS, "n_null")})
    order = [c for c in out_schema]

    def run(table: pl.DataFrame) -> pl.DataFrame:
        keep = [*layout.partitions, *layout.keys, *COUNT_COLUMNS]
        base = table.select(
            *keep,
            (pl.col("n_null") if "n_null" in table.columns else pl.lit(0, dtype=pl.Int64)).alias(
                "n_null"
            ),
        )
        reps = resample_partitions(
            base, partitions=strata, n_resamples=n_resamples, seed=seed, stream=stream
        )
        return reps.select([pl.col(c).cast(out_schema[c]) for c in order])

    return counts.map_batches(run, schema=out_schema)


def _interval_guard(columns: Sequence[str], weighted: bool | None, n_resamples: int) -> None:
    if n_resamples and _uses_weights(columns, weighted):
        raise InvalidOptionError(
            "intervals of weighted counts are not available here (weighted sums are not "
            "resampled); pass weighted=False or n_resamples=0"
        )


@accepts_tables
def period_criteria(
    counts: FrameT,
    *,
    criteria: str | Sequence[str] | None = None,
    by: ColumnNames | None = None,
    reference: Reference = "overall",
    weighted: bool | None = None,
    zero_reference: ZeroReference = "null",
    n_resamples: int = 0,
    level: float = 0.95,
    seed: int | None = 0,
    wide: bool = False,
) -> FrameT:
    r"""The named fairness criteria per group and period, with bootstrap intervals.

    :func:`~polars_fairmetrics.fairness_criteria` of a count table whose ``period`` (and
    ``model``, ``attribute``) columns are partitions: a reference, a difference and a ratio are
    computed within each period. With ``n_resamples=B``, each attribute, model and period's
    counts are resampled on their own (:func:`~polars_fairmetrics.bootstrap.resample_counts`,
    multinomial on the cells), the criteria recomputed on every replicate, and the percentile
    interval attached (``ci_low``, ``ci_high``, ``ci_method``, ``ci_level``, ``n_resamples``,
    ``n_defined``, ``ci_note``).

    Parameters
    ----------
    counts
        A count table, typically :func:`read_counts` of a store.
    criteria
        Criterion names (default: all of :data:`~polars_fairmetrics.CRITERIA`).
    by
        Group columns (default: every non-count, non-partition column).
    reference, weighted, zero_reference, wide
        As for :func:`~polars_fairmetrics.fairness_criteria`.
    n_resamples
        Bootstrap resamples (0: no intervals).
    level
        Confidence level of the intervals.
    seed
        Seed of the resamples.

    Returns
    -------
    DataFrame or LazyFrame
        The comparisons kind of ``docs/results.md``, with ``period`` among the partitions (and
        the interval columns with ``n_resamples``).

    Examples
    --------
    >>> import polars as pl
    >>> counts = pl.DataFrame({"g": ["a", "b", "a", "b"], "period": [1, 1, 2, 2],
    ...                        "tp": [5, 3, 4, 4], "fp": [1, 2, 2, 1], "tn": [4, 5, 4, 5],
    ...                        "fn": [0, 0, 0, 0], "n": [10, 10, 10, 10]})
    >>> period_criteria(counts, criteria="disparate_impact", reference="a").select(
    ...     "g", "period", "value")
    shape: (4, 3)
    ┌─────┬────────┬──────────┐
    │ g   ┆ period ┆ value    │
    │ --- ┆ ---    ┆ ---      │
    │ str ┆ i64    ┆ f64      │
    ╞═════╪════════╪══════════╡
    │ a   ┆ 1      ┆ 1.0      │
    │ a   ┆ 2      ┆ 1.0      │
    │ b   ┆ 1      ┆ 0.833333 │
    │ b   ┆ 2      ┆ 0.833333 │
    └─────┴────────┴──────────┘
    """
    check_interval_options(n_resamples, level)
    layout: Layout = _layout_of(counts, by)
    columns = list(schema_of(counts).names())
    _interval_guard(columns, weighted, n_resamples)
    chosen = [criteria] if isinstance(criteria, str) else criteria
    lazy = counts.lazy()
    out = fairness_criteria(
        lazy,
        by=layout.keys,
        criteria=chosen,
        reference=reference,
        weighted=weighted,
        zero_reference=zero_reference,
    )
    names = [c.name for c in _criteria(chosen)]
    if n_resamples:
        reps = _replicate_counts(lazy, layout, n_resamples, seed, 0)
        replicated = fairness_criteria(
            reps,
            by=layout.keys,
            criteria=chosen,
            reference=reference,
            weighted=False,
            zero_reference=zero_reference,
        )
        out = attach_intervals(
            out,
            replicated,
            level=level,
            n_resamples=n_resamples,
            fields=("value",),
            by=[*layout.partitions, *layout.keys, "metric"],
        )
        out = finish(out, keys=layout.keys, order=names)
    if wide:
        from polars_fairmetrics.results import to_wide

        out = to_wide(out, quantities=names)
    if isinstance(counts, pl.DataFrame):
        return out.collect()
    return out


@accepts_tables
def period_disparities(
    counts: FrameT,
    *,
    metrics: str | Sequence[str] | None = None,
    by: ColumnNames | None = None,
    reference: Reference = "overall",
    weighted: bool | None = None,
    zero_reference: ZeroReference = "null",
    n_resamples: int = 0,
    level: float = 0.95,
    seed: int | None = 0,
    wide: bool = False,
) -> FrameT:
    """Per-group metrics against a reference, per period, with bootstrap intervals.

    :func:`~polars_fairmetrics.disparities` of a count table whose ``period`` column is a
    partition; with ``n_resamples=B`` intervals of ``value``, ``difference`` and ``ratio`` from
    resampling each attribute, model and period's counts on their own (as
    :func:`period_criteria`).

    Parameters
    ----------
    counts
        A count table, typically :func:`read_counts` of a store.
    metrics
        Metric names or aliases (default: all).
    by, reference, weighted, zero_reference, n_resamples, level, seed, wide
        As for :func:`period_criteria`.

    Returns
    -------
    DataFrame or LazyFrame
        The comparisons kind of ``docs/results.md`` (and the interval columns).

    Examples
    --------
    >>> import polars as pl
    >>> counts = pl.DataFrame({"g": ["a", "b"], "period": [1, 1], "tp": [5, 3], "fp": [1, 2],
    ...                        "tn": [4, 5], "fn": [0, 0], "n": [10, 10]})
    >>> period_disparities(counts, metrics="selection_rate", reference="a").select(
    ...     "g", "period", "value", "difference")
    shape: (2, 4)
    ┌─────┬────────┬───────┬────────────┐
    │ g   ┆ period ┆ value ┆ difference │
    │ --- ┆ ---    ┆ ---   ┆ ---        │
    │ str ┆ i64    ┆ f64   ┆ f64        │
    ╞═════╪════════╪═══════╪════════════╡
    │ a   ┆ 1      ┆ 0.6   ┆ 0.0        │
    │ b   ┆ 1      ┆ 0.5   ┆ -0.1       │
    └─────┴────────┴───────┴────────────┘
    """
    check_interval_options(n_resamples, level)
    layout: Layout = _layout_of(counts, by)
    columns = list(schema_of(counts).names())
    _interval_guard(columns, weighted, n_resamples)
    names = _metric_names(metrics)
    lazy = counts.lazy()
    out = disparities(
        lazy,
        by=layout.keys,
        metrics=names,
        reference=reference,
        weighted=weighted,
        zero_reference=zero_reference,
    )
    if n_resamples:
        reps = _replicate_counts(lazy, layout, n_resamples, seed, 0)
        replicated = disparities(
            reps,
            by=layout.keys,
            metrics=names,
            reference=reference,
            weighted=False,
            zero_reference=zero_reference,
        )
        out = attach_intervals(
            out,
            replicated,
            level=level,
            n_resamples=n_resamples,
            fields=("value", "difference", "ratio"),
            by=[*layout.partitions, *layout.keys, "metric"],
        )
        out = finish(out, keys=layout.keys, order=names)
    if wide:
        from polars_fairmetrics.results import to_wide

        out = to_wide(out, quantities=names)
    if isinstance(counts, pl.DataFrame):
        return out.collect()
    return out


def _merged(counts: pl.LazyFrame, layout: Layout) -> tuple[pl.LazyFrame, Layout]:
    """A window's count table over its periods (``period`` summed away)."""
    if "period" not in layout.partitions:
        return counts, layout
    keys = [c for c in counts.collect_schema().names() if c != "period"]
    columns = counts.collect_schema().names()
    group = [c for c in keys if c not in count_columns(columns)]
    merged = combine_counts([counts.drop("period")], keys=group)
    return merged, Layout(layout.keys, [p for p in layout.partitions if p != "period"])


_CHANGE_ORDER = (
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "n_null",
    "reference",
    "baseline",
    "current",
    "baseline_n",
    "ci_method",
    "ci_level",
    "n_resamples",
    "n_defined",
    "ci_note",
)


def window_change(
    baseline: FrameT,
    current: FrameT,
    *,
    criteria: str | Sequence[str] | None = None,
    by: ColumnNames | None = None,
    reference: Reference = "overall",
    weighted: bool | None = None,
    n_resamples: int = 1000,
    level: float = 0.95,
    seed: int | None = 0,
) -> FrameT:
    r"""Did a fairness gap change between two windows? The change of each criterion's gap.

    For each group and criterion :math:`c` (with its parity value :math:`c_{parity}`: 0 for a
    difference, 1 for a ratio):

    .. math:: \Delta = |c_{current} - c_{parity}| - |c_{baseline} - c_{parity}|

    positive when the gap grew. The interval resamples each window's count table independently
    (:func:`~polars_fairmetrics.bootstrap.resample_counts`: each attribute and model on its
    own), computes both windows' criteria on every replicate and differences the gaps replicate
    by replicate; the percentile interval of those :math:`\Delta^*_b` is attached.

    Parameters
    ----------
    baseline, current
        Count tables of the two windows (:func:`read_counts`); a ``period`` column is summed
        away first (the window as a whole).
    criteria
        Criterion names (default: all of :data:`~polars_fairmetrics.CRITERIA`).
    by
        Group columns (default: every non-count, non-partition column).
    reference, weighted
        As for :func:`~polars_fairmetrics.fairness_criteria` (the reference is taken within each
        window).
    n_resamples
        Bootstrap resamples of each window (0: no interval).
    level, seed
        Confidence level and seed of the intervals.

    Returns
    -------
    DataFrame or LazyFrame
        The changes kind of ``docs/results.md``: keys, partitions, ``metric``, ``value`` (the
        change of the gap), ``ci_low``, ``ci_high``, ``n``, ``n_null`` (current window),
        ``reference``, ``baseline`` and ``current`` (the criterion in each window),
        ``baseline_n``, and the interval columns. A group absent from one window has a null
        change.

    Examples
    --------
    >>> import polars as pl
    >>> last_month = pl.DataFrame({"g": ["a", "b"], "tp": [50, 50], "fp": [10, 10],
    ...                            "tn": [40, 40], "fn": [0, 0], "n": [100, 100]})
    >>> this_week = pl.DataFrame({"g": ["a", "b"], "tp": [50, 30], "fp": [10, 5],
    ...                           "tn": [40, 65], "fn": [0, 0], "n": [100, 100]})
    >>> window_change(last_month, this_week, criteria="statistical_parity_difference",
    ...               reference="a", n_resamples=0).select("g", "baseline", "current", "value")
    shape: (2, 4)
    ┌─────┬──────────┬─────────┬───────┐
    │ g   ┆ baseline ┆ current ┆ value │
    │ --- ┆ ---      ┆ ---     ┆ ---   │
    │ str ┆ f64      ┆ f64     ┆ f64   │
    ╞═════╪══════════╪═════════╪═══════╡
    │ a   ┆ 0.0      ┆ 0.0     ┆ 0.0   │
    │ b   ┆ 0.0      ┆ -0.25   ┆ 0.25  │
    └─────┴──────────┴─────────┴───────┘
    """
    check_interval_options(n_resamples, level)
    chosen = [criteria] if isinstance(criteria, str) else criteria
    names = [c.name for c in _criteria(chosen)]
    lay_b: Layout = _layout_of(baseline, by)
    lay_c: Layout = _layout_of(current, by)
    if lay_b.keys != lay_c.keys:
        raise InvalidOptionError(
            f"the windows have different group columns: baseline {lay_b.keys!r}, current "
            f"{lay_c.keys!r}"
        )
    schema_b, schema_c = schema_of(baseline), schema_of(current)
    for k in [*lay_b.keys, *(p for p in lay_b.partitions if p in lay_c.partitions)]:
        if schema_b[k] != schema_c[k]:
            raise InvalidOptionError(
                f"column {k!r} has dtype {schema_b[k]} in the baseline window and "
                f"{schema_c[k]} in the current one: group keys are typed; cast one to the other"
            )
    _interval_guard(list(schema_b.names()), weighted, n_resamples)
    _interval_guard(list(schema_c.names()), weighted, n_resamples)
    base, lay_b = _merged(baseline.lazy(), lay_b)
    curr, lay_c = _merged(current.lazy(), lay_c)
    if lay_b.partitions != lay_c.partitions:
        raise InvalidOptionError(
            f"the windows have different partitions: baseline {lay_b.partitions!r}, current "
            f"{lay_c.partitions!r}"
        )
    layout: Layout = lay_c
    ident: list[str] = [*layout.partitions, *layout.keys, "metric"]
    parity = {c: CRITERIA[c].parity for c in names}

    def crit(frame: pl.LazyFrame, w: bool | None) -> pl.LazyFrame:
        return fairness_criteria(
            frame, by=layout.keys, criteria=names, reference=reference, weighted=w
        )

    def gap(col: str) -> pl.Expr:
        p = pl.col("metric").replace_strict(parity, return_dtype=pl.Float64)
        return (pl.col(col) - p).abs()

    b = crit(base, weighted).select(
        *ident, pl.col("value").alias("baseline"), pl.col("n").alias("baseline_n")
    )
    c = crit(curr, weighted).select(*ident, "value", "n", pl.col("^n_null$"), "reference")
    joined = (
        c.rename({"value": "current"})
        .join(b, on=ident, how="full", nulls_equal=True, coalesce=True)
        .with_columns((gap("current") - gap("baseline")).alias("value"))
    )
    if n_resamples:
        rb = _replicate_counts(base, layout, n_resamples, seed, 0)
        rc = _replicate_counts(curr, layout, n_resamples, seed, 1)
        rep_ident = [*ident, "replicate"]
        rep_b = crit(rb, False).select(*rep_ident, pl.col("value").alias("baseline"))
        rep_c = crit(rc, False).select(*rep_ident, pl.col("value").alias("current"))
        changes = rep_c.join(rep_b, on=rep_ident, how="inner", nulls_equal=True).select(
            *rep_ident, (gap("current") - gap("baseline")).alias("value")
        )
        joined = attach_intervals(
            joined, changes, level=level, n_resamples=n_resamples, fields=("value",), by=ident
        )
    out = finish(joined, keys=layout.keys, order=names)
    columns = out.collect_schema().names()
    lead = [c for c in columns if c in (*layout.partitions, *layout.keys)]
    first: list[str] = ["attribute"] if "attribute" in lead else []
    lead = [*first, *layout.keys, *[p for p in layout.partitions if p != "attribute"]]
    out = out.select(*lead, *[c for c in _CHANGE_ORDER if c in columns])
    if isinstance(current, pl.DataFrame):
        return out.collect()
    return out


def _criteria(chosen: Sequence[str] | None) -> list[Any]:
    from polars_fairmetrics.disparity import _criterion_names

    return _criterion_names(chosen)


# ---------------------------------------------------------------------------------------------
# Gates
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GateOutcome:
    """The outcome of a gate: ``failed``, and the rows that made it fail."""

    text: str
    failed: bool
    failures: pl.DataFrame = field(repr=False)
    n_checked: int

    def line(self) -> str:
        """One line for a job's log: ``PASS …`` / ``FAIL …`` with the offending rows."""
        if not self.failed:
            return f"PASS {self.text} ({self.n_checked} value(s) checked)"
        shown = []
        keys = [
            c
            for c in self.failures.columns
            if c not in ("metric", "value", "ci_low", "ci_high", "gap", "gap_low")
        ]
        for row in self.failures.head(5).iter_rows(named=True):
            # A null group is a group: its key is shown as null. Only the keys of the other
            # attributes side by side (null by construction) and null partitions are left out.
            own = row.get("attribute")
            where = visible(
                display_label(
                    {
                        k: row[k]
                        for k in keys
                        if row[k] is not None
                        or (k not in PARTITION_COLUMNS and (own is None or k == own))
                    }
                )
            )
            shown.append(f"{row['metric']} [{where}] = {row['value']:.4g}")
        more = f" and {self.failures.height - 5} more" if self.failures.height > 5 else ""
        return f"FAIL {self.text}: {'; '.join(shown)}{more} ({self.n_checked} value(s) checked)"


def _collected(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


def _gate_keys(frame: pl.DataFrame) -> list[str]:
    drop = set(_CHANGE_ORDER) | {
        "support",
        "is_reference",
        "reference_value",
        "difference",
        "ratio",
        "difference_ci_low",
        "difference_ci_high",
        "ratio_ci_low",
        "ratio_ci_high",
        "n_w",
    }
    return [c for c in frame.columns if c not in drop]


def change_gate(
    changes: pl.DataFrame | pl.LazyFrame,
    *,
    max_increase: float,
    require_interval: bool = True,
) -> GateOutcome:
    r"""Fail when a gap grew by more than ``max_increase`` with an interval excluding 0.

    A row of :func:`window_change` fails when :math:`\Delta > ` ``max_increase`` and (with
    ``require_interval``, default) its interval lies above 0 (``ci_low > 0``): the growth is both
    large and not explained by sampling noise. Rows with a null change are not checked.

    Examples
    --------
    >>> import polars as pl
    >>> changes = pl.DataFrame({"g": ["a", "b"], "metric": ["disparate_impact"] * 2,
    ...                         "value": [0.01, 0.2], "ci_low": [-0.05, 0.1],
    ...                         "ci_high": [0.07, 0.3]})
    >>> outcome = change_gate(changes, max_increase=0.05)
    >>> outcome.failed, outcome.failures["g"].to_list()
    (True, ['b'])
    """
    if isinstance(max_increase, bool) or not isinstance(max_increase, (int, float)):
        raise InvalidOptionError(f"max_increase must be a number, got {max_increase!r}")
    if not math.isfinite(max_increase):
        raise InvalidOptionError(f"max_increase must be finite, got {max_increase!r}")
    frame = _collected(changes)
    if "value" not in frame.columns or "metric" not in frame.columns:
        raise InvalidOptionError("change_gate needs a window_change table (metric, value)")
    has_ci = "ci_low" in frame.columns
    if require_interval and not has_ci:
        raise InvalidOptionError(
            "change_gate(require_interval=True) needs intervals: compute window_change with "
            "n_resamples > 0, or pass require_interval=False"
        )
    checked = frame.filter(pl.col("value").is_not_null())
    cond = pl.col("value") > max_increase
    if require_interval:
        cond = cond & (pl.col("ci_low") > 0).fill_null(False)
    failures = checked.filter(cond)
    keys = _gate_keys(frame)
    cols = [*keys, "metric", "value", *(["ci_low", "ci_high"] if has_ci else [])]
    text = f"gap grew by more than {max_increase:g}" + (
        " with an interval excluding 0" if require_interval else ""
    )
    return GateOutcome(text, failures.height > 0, failures.select(cols), checked.height)


def gap_gate(
    criteria: pl.DataFrame | pl.LazyFrame,
    *,
    max_gap: float,
    require_interval: bool = False,
) -> GateOutcome:
    r"""Fail when a criterion's gap :math:`|c - c_{parity}|` exceeds ``max_gap``.

    For a table of :func:`~polars_fairmetrics.fairness_criteria` / :func:`period_criteria`
    (rows whose ``metric`` is a named criterion). With ``require_interval``, the whole interval
    must lie farther than ``max_gap`` from parity (the gap is large beyond sampling noise).

    Examples
    --------
    >>> import polars as pl
    >>> table = pl.DataFrame({"g": ["a", "b"], "metric": ["disparate_impact"] * 2,
    ...                       "value": [1.0, 0.7]})
    >>> gap_gate(table, max_gap=0.2).failures["g"].to_list()
    ['b']
    """
    if isinstance(max_gap, bool) or not isinstance(max_gap, (int, float)) or not max_gap >= 0:
        raise InvalidOptionError(f"max_gap must be a number >= 0, got {max_gap!r}")
    frame = _collected(criteria)
    if "value" not in frame.columns or "metric" not in frame.columns:
        raise InvalidOptionError("gap_gate needs a criteria table (metric, value)")
    parity = {c.name: c.parity for c in CRITERIA.values()}
    others = [m for m in frame["metric"].unique(maintain_order=True).to_list() if m not in parity]
    if others:
        # their rows would be left unchecked and the gate would pass
        raise InvalidOptionError(
            f"gap_gate needs a criteria table (period_criteria); metric(s) {others!r} are not "
            f"fairness criteria with a parity value; known: {', '.join(parity)}"
        )
    p = pl.col("metric").replace_strict(parity, default=None, return_dtype=pl.Float64)
    checked = frame.filter(pl.col("value").is_not_null())
    gap = (pl.col("value") - p).abs()
    if require_interval:
        if "ci_low" not in frame.columns:
            raise InvalidOptionError(
                "gap_gate(require_interval=True) needs intervals (n_resamples > 0)"
            )
        inside = (pl.col("ci_low") <= p) & (p <= pl.col("ci_high"))
        low = (
            pl.when(inside)
            .then(0.0)
            .otherwise(
                pl.min_horizontal((pl.col("ci_low") - p).abs(), (pl.col("ci_high") - p).abs())
            )
        )
        cond = (low > max_gap).fill_null(False)
    else:
        cond = gap > max_gap
    failures = checked.filter(cond)
    keys = _gate_keys(frame)
    has_ci = "ci_low" in frame.columns
    cols = [*keys, "metric", "value", *(["ci_low", "ci_high"] if has_ci else [])]
    text = f"gap from parity above {max_gap:g}" + (
        " with an interval beyond it" if require_interval else ""
    )
    return GateOutcome(text, failures.height > 0, failures.select(cols), checked.height)


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------

EXIT_OK, EXIT_GATE, EXIT_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2."""

    def error(self, message: str) -> Any:
        raise _CliError(message)


class _CliError(FairMetricsError):
    """A bad command line."""


def _scan(path: str) -> pl.LazyFrame:
    p = Path(path)
    if not p.exists():
        raise _CliError(f"input {path!r} does not exist")
    suffix = p.suffix.lower()
    if p.is_dir():
        return pl.scan_parquet(str(p / "**" / "*.parquet"))
    if suffix in (".parquet", ".pq"):
        return pl.scan_parquet(path)
    if suffix == ".csv":
        return pl.scan_csv(path)
    if suffix in (".ndjson", ".jsonl"):
        return pl.scan_ndjson(path)
    raise _CliError(f"input {path!r}: expected a .parquet, .csv or .ndjson file")


def _coerce(text: str | None, dtype: pl.DataType | None) -> Any:
    """A label or key value given as text, typed like its column."""
    if text is None:
        return None
    if dtype is None or dtype == pl.String:
        return text
    if dtype == pl.Boolean:
        low = text.lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        raise _CliError(f"{text!r} is not a Boolean value")
    if dtype.is_integer():
        try:
            return int(text)
        except ValueError as exc:
            raise _CliError(f"{text!r} is not an integer") from exc
    if dtype.is_float():
        try:
            return float(text)
        except ValueError as exc:
            raise _CliError(f"{text!r} is not a number") from exc
    return pl.Series([text]).cast(dtype).item()


def _reference_arg(values: Sequence[str] | None, layout: _StoreLayout) -> Reference:
    if not values:
        return "overall"
    if len(values) == 1 and values[0] in ("overall", "rest", "largest"):
        return values[0]
    mapping: dict[str, Any] = {}
    for v in values:
        if "=" not in v:
            raise _CliError(
                f"--reference {v!r}: expected overall, rest, largest or ATTRIBUTE=VALUE"
            )
        k, _, raw = v.partition("=")
        if k not in layout.by:
            raise _CliError(
                f"--reference {v!r}: {k!r} is not an attribute of the store {layout.by}"
            )
        mapping[k] = _coerce(raw, _DTYPES[layout.key_dtypes[k]])
    return mapping


def _append_cmd(args: argparse.Namespace) -> int:
    data = _scan(args.input)
    schema = data.collect_schema()
    if args.y_true not in schema:
        raise _CliError(f"--y-true column {args.y_true!r} not in {args.input!r}")
    dtype = schema[args.y_true]
    table = _open(args.store, None)
    period_dtype = None
    if table is not None:
        period_dtype = _DTYPES[
            _StoreLayout.parse(table.metadata().description, args.store).period_dtype
        ]
    info = append_batch(
        data,
        args.store,
        batch_id=args.batch_id,
        period=_parse_period_text(args.period, period_dtype),
        model=args.model,
        y_true=args.y_true,
        y_pred=args.y_pred,
        y_score=args.y_score,
        threshold=(
            args.threshold
            if args.threshold is None or len(args.threshold) > 1
            else args.threshold[0]
        ),
        by=args.by,
        weight=args.weight,
        pos_label=_coerce(args.pos_label, dtype),
        neg_label=_coerce(args.neg_label, dtype),
        cells=True if args.cells else None,
        decimals=args.decimals,
        ensemble=args.ensemble,
        if_exists=args.if_exists,
    )
    state = "written" if info.written else "already in the store (skipped)"
    print(
        f"batch {info.batch_id!r} ({info.rows} rows, period {info.period}, model {info.model}) "
        f"{state}" + (f"; store version {info.version}" if info.version is not None else "")
    )
    return EXIT_OK


_OUTPUT_SUFFIXES = (".parquet", ".pq", ".csv", ".json", ".ndjson", ".jsonl")


def _write_table(frame: pl.DataFrame, path: str) -> None:
    suffix = Path(path).suffix.lower()
    if suffix in (".parquet", ".pq"):
        frame.write_parquet(path)
    elif suffix == ".csv":
        frame.with_columns(pl.selectors.struct().struct.json_encode()).write_csv(path)
    elif suffix in (".json", ".ndjson", ".jsonl"):
        frame.write_ndjson(path)
    else:
        raise _CliError(f"--output {path!r}: expected a .parquet, .csv or .ndjson file")


_CRITERIA_ONLY: tuple[tuple[str, str], ...] = (
    ("criteria", "--criteria"),
    ("max_gap", "--max-gap"),
    ("baseline_start", "--baseline-start"),
    ("baseline_end", "--baseline-end"),
    ("max_increase", "--max-increase"),
)


def _check_audit_options(args: argparse.Namespace) -> None:
    """Refuse, before anything is read or printed, an option the chosen --what does not use: a
    gate that silently never runs would let a job pass."""
    if args.what != "criteria":
        for attr, flag in _CRITERIA_ONLY:
            if getattr(args, attr) is not None:
                raise _CliError(f"{flag} applies to --what criteria, not --what {args.what}")
    elif args.metrics:
        raise _CliError(
            "--metrics applies to --what disparities, calibration or stability; with --what "
            "criteria name the criteria with --criteria"
        )
    if args.max_increase is not None and args.baseline_start is None and args.baseline_end is None:
        raise _CliError("--max-increase needs a baseline window (--baseline-start/--baseline-end)")
    if args.output and Path(args.output).suffix.lower() not in _OUTPUT_SUFFIXES:
        raise _CliError(f"--output {args.output!r}: expected a .parquet, .csv or .ndjson file")


def _audit_cmd(args: argparse.Namespace) -> int:
    _check_audit_options(args)
    _, layout = _open_existing(args.store, None)
    dtype = _DTYPES[layout.period_dtype]
    start = None if args.start is None else _parse_period_text(args.start, dtype)
    end = None if args.end is None else _parse_period_text(args.end, dtype)
    reference = _reference_arg(args.reference, layout)
    models = args.model or None
    outcomes: list[GateOutcome] = []
    if args.what == "stability":
        from polars_fairmetrics.ensemble import _names as _ensemble_names
        from polars_fairmetrics.ensemble import ensemble_metrics_from_sums

        if args.resamples:
            raise _CliError(
                "--what stability has no intervals: the ensemble sums of a store are means of "
                "per-row values, and a row-level bootstrap needs the rows (drop --resamples)"
            )
        sums = read_ensemble_sums(
            args.store, start=start, end=end, models=models, merge=not args.by_period
        )
        wanted = _ensemble_names(args.metrics)
        table = (
            ensemble_metrics_from_sums(sums, by=layout.by)
            .filter(pl.col("metric").is_in(wanted))
            .collect()
        )
    elif args.what == "calibration":
        from polars_fairmetrics.calibration import calibration_disparities

        cells = read_cells(
            args.store, start=start, end=end, models=models, merge=not args.by_period
        )
        table = calibration_disparities(
            cells,
            by=layout.by,
            reference=reference,
            metrics=args.metrics,
            n_bins=args.bins,
            n_resamples=args.resamples,
            level=args.level,
            seed=args.seed,
        ).collect()
    else:
        counts = read_counts(
            args.store, start=start, end=end, models=models, merge=not args.by_period
        )
        if args.what == "disparities":
            table = period_disparities(
                counts,
                by=layout.by,
                metrics=args.metrics,
                reference=reference,
                n_resamples=args.resamples,
                level=args.level,
                seed=args.seed,
            ).collect()
        else:
            table = period_criteria(
                counts,
                by=layout.by,
                criteria=args.criteria,
                reference=reference,
                n_resamples=args.resamples,
                level=args.level,
                seed=args.seed,
            ).collect()
            if args.max_gap is not None:
                outcomes.append(
                    gap_gate(table, max_gap=args.max_gap, require_interval=args.resamples > 0)
                )
    if table.height == 0:
        raise _CliError("the window holds no counts (check --start, --end and --model)")
    with pl.Config(tbl_rows=60, tbl_cols=12, tbl_width_chars=160, fmt_str_lengths=40):
        print(table)
    if args.baseline_start is not None or args.baseline_end is not None:
        if args.what != "criteria":
            raise _CliError("--baseline-start/--baseline-end compare criteria (--what criteria)")
        b_start = (
            None if args.baseline_start is None else _parse_period_text(args.baseline_start, dtype)
        )
        b_end = None if args.baseline_end is None else _parse_period_text(args.baseline_end, dtype)
        baseline = read_counts(args.store, start=b_start, end=b_end, models=models, merge=True)
        current = read_counts(args.store, start=start, end=end, models=models, merge=True)
        changes = window_change(
            baseline,
            current,
            by=layout.by,
            criteria=args.criteria,
            reference=reference,
            n_resamples=args.change_resamples,
            level=args.level,
            seed=args.seed,
        ).collect()
        with pl.Config(tbl_rows=60, tbl_cols=12, tbl_width_chars=160):
            print(changes)
        if args.max_increase is not None:
            outcomes.append(
                change_gate(
                    changes,
                    max_increase=args.max_increase,
                    require_interval=args.change_resamples > 0,
                )
            )
    elif args.max_increase is not None:
        raise _CliError("--max-increase needs a baseline window (--baseline-start/--baseline-end)")
    if args.output:
        _write_table(table, args.output)
    for o in outcomes:
        print(o.line())
    return EXIT_GATE if any(o.failed for o in outcomes) else EXIT_OK


def _batches_cmd(args: argparse.Namespace) -> int:
    table = store_batches(args.store)
    with pl.Config(tbl_rows=100, fmt_str_lengths=60, tbl_width_chars=160):
        print(table.drop("options"))
    return EXIT_OK


def build_monitor_parser(prog: str = "polars-fairmetrics monitor") -> argparse.ArgumentParser:
    """The ``monitor`` command line: ``append``, ``audit``, ``batches``."""
    parser = _Parser(
        prog=prog,
        description="Fairness monitoring from count stores (Delta Lake): append a batch's counts, "
        "audit a window, gate on changes.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    app = sub.add_parser("append", help="count a batch of rows and write it to a store")
    app.add_argument("store", help="path or URI of the count store (Delta table)")
    app.add_argument("--input", required=True, help="the batch's rows (.parquet, .csv, .ndjson)")
    app.add_argument("--batch-id", required=True, help="the batch's id (re-runs replace it)")
    app.add_argument("--period", required=True, help="the batch's period (2024-01-05, 202401, …)")
    app.add_argument("--model", default="default", help="the model's name (default: default)")
    app.add_argument("--y-true", required=True, help="true-label column")
    app.add_argument("--y-pred", help="predicted-label column")
    app.add_argument("--y-score", help="score column (probability of the positive class)")
    app.add_argument("--threshold", type=float, nargs="+", help="threshold(s) for --y-score")
    app.add_argument("--by", nargs="+", required=True, help="protected attribute column(s)")
    app.add_argument("--weight", help="sample-weight column")
    app.add_argument("--pos-label", help="positive class of the labels")
    app.add_argument("--neg-label", help="negative class of the labels")
    app.add_argument("--cells", action="store_true", help="also store score cells of --y-score")
    app.add_argument("--decimals", type=int, help="round scores in the cells to D places")
    app.add_argument(
        "--ensemble",
        nargs="+",
        metavar="COL",
        help="probability columns of an ensemble's models: also store the ensemble sums",
    )
    app.add_argument(
        "--if-exists",
        choices=("replace", "skip", "error"),
        default="replace",
        help="a batch id already stored: replace it (default), skip, or fail",
    )
    app.set_defaults(func=_append_cmd)
    aud = sub.add_parser("audit", help="audit a window of a store; exit 1 if a gate fails")
    aud.add_argument("store", help="path or URI of the count store")
    aud.add_argument("--start", help="first period of the window (inclusive)")
    aud.add_argument("--end", help="last period of the window (inclusive)")
    aud.add_argument("--model", nargs="+", help="model(s) to audit (default: all)")
    aud.add_argument(
        "--what",
        choices=("criteria", "disparities", "calibration", "stability"),
        default="criteria",
        help="fairness criteria (default), metric disparities, calibration (score cells) or "
        "ensemble stability (ensemble sums)",
    )
    aud.add_argument("--by-period", action="store_true", help="one result per period")
    aud.add_argument("--criteria", nargs="+", help="criteria to compute (default: all)")
    aud.add_argument("--metrics", nargs="+", help="metrics for --what disparities")
    aud.add_argument(
        "--reference", nargs="+", help="overall (default), rest, largest, or ATTRIBUTE=VALUE …"
    )
    aud.add_argument("--bins", type=int, default=10, help="bins for --what calibration")
    aud.add_argument("--resamples", type=int, default=0, help="bootstrap resamples (intervals)")
    aud.add_argument("--level", type=float, default=0.95, help="confidence level (0.95)")
    aud.add_argument("--seed", type=int, default=0, help="seed of the resamples")
    aud.add_argument("--baseline-start", help="first period of the baseline window")
    aud.add_argument("--baseline-end", help="last period of the baseline window")
    aud.add_argument(
        "--change-resamples",
        type=int,
        default=1000,
        help="resamples of each window for the change interval (1000)",
    )
    aud.add_argument(
        "--max-increase",
        type=float,
        help="gate: fail if a gap grew by more than X (interval excluding 0)",
    )
    aud.add_argument("--max-gap", type=float, help="gate: fail if a gap from parity exceeds X")
    aud.add_argument("--output", help="write the audit table (.parquet, .csv, .ndjson)")
    aud.set_defaults(func=_audit_cmd)
    bat = sub.add_parser("batches", help="list the batches of a store")
    bat.add_argument("store", help="path or URI of the count store")
    bat.set_defaults(func=_batches_cmd)
    return parser


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def monitor_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``polars-fairmetrics monitor``; returns the exit status.

    0: done (gates passed); 1: a gate failed; 2: bad input (a one-line error on stderr).

    Examples
    --------
    >>> monitor_main(["audit"])
    2
    """
    prog = "polars-fairmetrics monitor"
    try:
        args = build_monitor_parser(prog).parse_args(argv)
        return int(args.func(args))
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    except FairMetricsError as exc:
        print(f"{prog}: error: {_one_line(exc)}", file=sys.stderr)
    except pl.exceptions.PolarsError as exc:
        print(f"{prog}: error: {type(exc).__name__}: {_one_line(exc)}", file=sys.stderr)
    except OSError as exc:
        print(f"{prog}: error: {exc.strerror or _one_line(exc)}", file=sys.stderr)
    except ImportError as exc:
        print(f"{prog}: error: {_one_line(exc)}", file=sys.stderr)
    except Exception as exc:
        deltalake = sys.modules.get("deltalake")
        if deltalake is not None and isinstance(exc, deltalake.exceptions.DeltaError):
            print(f"{prog}: error: Delta: {_one_line(exc)}", file=sys.stderr)
        else:
            raise
    return EXIT_ERROR
