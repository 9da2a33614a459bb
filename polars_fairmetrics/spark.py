r"""Run the audit on Apache Spark: per-partition count tables with Polars, merged by Spark.

Every count-based statistic of the package is a function of a small, additive count table
(:func:`~polars_fairmetrics.confusion_counts`), so a Spark job needs no second implementation:

1. each Spark partition turns its Arrow batches into Polars frames and counts them with
   :func:`~polars_fairmetrics.confusion_counts` (``mapInArrow``), then adds its batches' tables
   with :func:`~polars_fairmetrics.combine_counts`;
2. Spark adds the partial tables up (``groupBy(keys [, threshold]).sum(counts)``):

   .. math:: TP_g = \sum_{p \in \text{partitions}} TP_g^{(p)}
             \quad (\text{likewise every count column})

3. the driver collects the small merged table and hands it to the local metric, disparity and
   criteria code (:func:`~polars_fairmetrics.metrics_from_counts`,
   :func:`~polars_fairmetrics.disparities`, :func:`~polars_fairmetrics.fairness_criteria`).

Counts are exactly those of the local run on the same rows; weighted sums agree to rounding
(Spark adds the partial sums in its own order). Needs the ``spark`` extra
(``pip install 'polars_fairmetrics[spark]'``) and the package installed on the executors.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import polars as pl

from polars_fairmetrics._typing import ColumnNames, Label
from polars_fairmetrics._validate import as_list
from polars_fairmetrics.counts import (
    _plan,
    combine_counts,
    confusion_counts,
    count_columns,
    roll_up_attributes,
)
from polars_fairmetrics.disparity import Reference, disparities, fairness_criteria
from polars_fairmetrics.exceptions import InvalidOptionError
from polars_fairmetrics.metrics import key_columns, metrics_from_counts

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame as SparkDataFrame
    from pyspark.sql import SparkSession

__all__ = [
    "spark_confusion_counts",
    "spark_disparities",
    "spark_fairness_criteria",
    "spark_group_metrics",
]

_MERGE_EVERY = 8
"""Partial tables a partition keeps before adding them up (bounds worker memory)."""

_MSG_NO_PYSPARK = (
    "the Spark entry points need pyspark: pip install 'polars_fairmetrics[spark]' "
    "(and a Java runtime)"
)


def _import_pyspark() -> Any:
    try:
        import pyspark.sql
    except ImportError as exc:  # pragma: no cover - exercised only without pyspark
        raise ImportError(_MSG_NO_PYSPARK) from exc
    return pyspark.sql


@contextmanager
def _quiet_pyspark() -> Iterator[None]:
    """Silence pyspark's pandas-version FutureWarning: this path never touches pandas."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
        )
        yield


def _as_spark_frame(
    data: SparkDataFrame | str | os.PathLike[str],
    spark: SparkSession | None,
    source_format: str,
) -> SparkDataFrame:
    _import_pyspark()
    from pyspark.sql import DataFrame, SparkSession

    if isinstance(data, DataFrame):
        return data
    if isinstance(data, (str, os.PathLike)):
        session = spark or SparkSession.getActiveSession()
        if session is None:
            session = SparkSession.builder.getOrCreate()
        frame: SparkDataFrame = session.read.load(os.fspath(data), format=source_format)
        return frame
    raise InvalidOptionError(
        f"expected a Spark DataFrame or a path Spark can read, got {type(data).__name__}"
    )


def _count_batches(
    batches: Iterator[pa.RecordBatch],
    options: dict[str, Any],
    target: pa.Schema,
    chunk_rows: int,
) -> Iterator[pa.RecordBatch]:
    """The per-partition step: Arrow batches → Polars chunks → one partial count table.

    Spark's Arrow batches are small (10,000 rows by default), so they are gathered into chunks
    of about ``chunk_rows`` rows before counting: a count costs a fixed few milliseconds.
    """
    parts: list[pl.DataFrame] = []
    buffer: list[pa.RecordBatch] = []
    buffered = 0

    import pyarrow as pa  # the Arrow transfer: an import of the spark extra, on the executors

    def count(chunk: list[pa.RecordBatch]) -> pl.DataFrame:
        frame = pl.from_arrow(pa.Table.from_batches(chunk))
        assert isinstance(frame, pl.DataFrame)
        return confusion_counts(frame, **options)

    for batch in batches:
        buffer.append(batch)
        buffered += batch.num_rows
        if buffered >= chunk_rows:
            parts.append(count(buffer))
            buffer, buffered = [], 0
            if len(parts) >= _MERGE_EVERY:
                parts = [combine_counts(parts, keys=key_columns(parts[0].columns))]
    if buffer:
        parts.append(count(buffer))
    if not parts:
        return
    keys = key_columns(parts[0].columns)
    table = combine_counts(parts, keys=keys) if len(parts) > 1 else parts[0]
    yield from table.to_arrow().cast(target).to_batches()


def spark_confusion_counts(
    data: SparkDataFrame | str | os.PathLike[str],
    *,
    y_true: str,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    separately: bool = False,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
    spark: SparkSession | None = None,
    source_format: str = "parquet",
    chunk_rows: int = 100_000,
) -> pl.DataFrame:
    r"""Grouped (weighted) confusion counts of a Spark DataFrame, collected as a Polars frame.

    The same table as :func:`~polars_fairmetrics.confusion_counts` on the same rows: each Spark
    partition counts its rows with Polars (``mapInArrow``), Spark sums the partial tables by the
    group keys (and ``threshold``), and the small result is collected on the driver:

    .. math:: TP_g = \sum_{p} TP_g^{(p)},\ \dots,\ n\_null_g = \sum_{p} n\_null_g^{(p)}

    Parameters
    ----------
    data
        A Spark DataFrame of predictions, or a path Spark can read (``source_format``).
    y_true, y_pred, y_score, threshold, by, weight, pos_label, neg_label, separately, score_bounds
        As for :func:`~polars_fairmetrics.confusion_counts`. Several thresholds give an additive
        threshold sweep (one scan).
    spark
        The session used to read a path (default: the active one, or a new one).
    source_format
        Spark data source format of a path (``"parquet"``, ``"orc"``, ``"csv"``, …).
    chunk_rows
        Rows a worker gathers from Spark's Arrow batches before counting them with Polars
        (memory per worker ≈ this many rows of the used columns).

    Returns
    -------
    DataFrame
        The count table, sorted by its keys (collected: it is small).

    Raises
    ------
    ColumnNotFoundError, InvalidOptionError, InvalidThresholdError, InvalidDtypeError
        On the driver, before any Spark job, from the Spark schema.
    Exception
        Value errors (a third label, a negative weight, a score outside the bounds) are raised by
        the partition that meets them; Spark wraps them (the message names the column and value).

    Notes
    -----
    Counts equal the local ones exactly; weighted sums to rounding (about 1e-12 relative).
    With text labels and only ``pos_label``, the negative class is inferred per partition:
    pass ``neg_label`` so that two different negative values in two partitions are caught.

    Examples
    --------
    >>> from pyspark.sql import SparkSession  # doctest: +SKIP
    >>> spark = SparkSession.builder.master("local[2]").getOrCreate()  # doctest: +SKIP
    >>> sdf = spark.createDataFrame([("a", 1, 1), ("a", 0, 1), ("b", 1, 0)], "g string, y int, p int")  # doctest: +SKIP
    >>> spark_confusion_counts(sdf, y_true="y", y_pred="p", by="g")["tp"].to_list()  # doctest: +SKIP
    [1, 0]
    """  # noqa: E501
    _import_pyspark()
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise InvalidOptionError(f"chunk_rows={chunk_rows!r} must be a positive integer")
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
    from pyspark.sql.pandas.types import to_arrow_schema

    sdf = _as_spark_frame(data, spark, source_format)
    keys = as_list(by)
    used = [y_true, y_pred, y_score, *keys, weight]
    wanted = list(dict.fromkeys(c for c in used if c is not None))
    in_schema = T.StructType([f for f in sdf.schema.fields if f.name in wanted])
    # an empty Polars frame with the partitions' schema: validates every option on the driver
    # (missing columns, dtypes, thresholds, labels) and gives the output columns and dtypes
    empty = pl.from_arrow(to_arrow_schema(in_schema).empty_table())
    assert isinstance(empty, pl.DataFrame)
    missing = [c for c in wanted if c not in empty.columns]
    if missing:  # let the core name the column and its role, listing every Spark column
        for name in sdf.columns:
            if name not in empty.columns:
                empty = empty.with_columns(pl.lit(None, dtype=pl.Null).alias(name))
        _plan(
            empty,
            separately=separately,
            y_true=y_true,
            y_pred=y_pred,
            y_score=y_score,
            threshold=threshold,
            by=keys or None,
            weight=weight,
            pos_label=pos_label,
            neg_label=neg_label,
            score_bounds=score_bounds,
        )
    options: dict[str, Any] = {
        "y_true": y_true,
        "y_pred": y_pred,
        "y_score": y_score,
        "threshold": threshold,
        "by": keys or None,
        "weight": weight,
        "pos_label": pos_label,
        "neg_label": neg_label,
        "score_bounds": score_bounds,
    }
    plan = _plan(empty, separately=separately, **options)
    local_schema = confusion_counts(empty, **options).schema
    table_keys = [c for c in local_schema.names() if c not in count_columns(local_schema.names())]
    sums = [c for c in local_schema.names() if c not in table_keys]
    key_fields = {f.name: f for f in in_schema.fields}
    out_fields = []
    for name in local_schema.names():
        if name in key_fields:
            out_fields.append(T.StructField(name, key_fields[name].dataType, True))
        elif local_schema[name] == pl.Float64:
            out_fields.append(T.StructField(name, T.DoubleType(), name == "threshold"))
        else:
            out_fields.append(T.StructField(name, T.LongType(), False))
    out_schema = T.StructType(out_fields)
    target = to_arrow_schema(out_schema)

    def count_partition(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return _count_batches(batches, options, target, chunk_rows)

    with _quiet_pyspark():
        partial = sdf.select(*wanted).mapInArrow(count_partition, out_schema)
        grouped = partial.groupBy(*table_keys) if table_keys else partial.groupBy()
        merged = grouped.agg(*[F.sum(c).alias(c) for c in sums]).select(*local_schema.names())
        collected = merged.toArrow()
    result = pl.from_arrow(collected)
    assert isinstance(result, pl.DataFrame)
    if not table_keys:  # a global aggregate of no rows is one row of nulls in Spark
        result = result.filter(pl.col("n").is_not_null())
    result = result.cast(dict(local_schema)).select(local_schema.names())  # type: ignore[arg-type]
    if separately:
        partition = ["threshold"] if plan.thresholds is not None else []
        return roll_up_attributes(result, plan.keys, partition)
    if table_keys:
        result = result.sort(table_keys, nulls_last=True)
    return result


def spark_group_metrics(
    data: SparkDataFrame | str | os.PathLike[str],
    *,
    y_true: str,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    metrics: str | Sequence[str] | None = None,
    separately: bool = False,
    wide: bool = False,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
    spark: SparkSession | None = None,
    source_format: str = "parquet",
) -> pl.DataFrame:
    """Per-group metrics of a Spark DataFrame: :func:`spark_confusion_counts` then
    :func:`~polars_fairmetrics.metrics_from_counts` on the driver.

    Same output as :func:`~polars_fairmetrics.group_metrics` on the same rows (weighted metrics
    when ``weight`` is given), e.g. ``TPR_g = TP_g / (TP_g + FN_g)`` from the merged counts.

    Examples
    --------
    >>> spark_group_metrics(sdf, y_true="y", y_pred="p", by="g",  # doctest: +SKIP
    ...                     metrics="selection_rate")["value"].to_list()
    [1.0, 0.0]
    """
    counts = spark_confusion_counts(
        data,
        y_true=y_true,
        y_pred=y_pred,
        y_score=y_score,
        threshold=threshold,
        by=by,
        weight=weight,
        pos_label=pos_label,
        neg_label=neg_label,
        separately=separately,
        score_bounds=score_bounds,
        spark=spark,
        source_format=source_format,
    )
    return metrics_from_counts(counts, metrics=metrics, wide=wide)


def spark_disparities(
    data: SparkDataFrame | str | os.PathLike[str],
    *,
    y_true: str,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    metrics: str | Sequence[str] | None = None,
    reference: Reference = "overall",
    weighted: bool | None = None,
    separately: bool = False,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
    spark: SparkSession | None = None,
    source_format: str = "parquet",
) -> pl.DataFrame:
    r"""Disparities of a Spark DataFrame: :func:`spark_confusion_counts` then
    :func:`~polars_fairmetrics.disparities` on the driver.

    :math:`\text{difference}_g = m_g - m_{ref}`, :math:`\text{ratio}_g = m_g / m_{ref}`, as in
    the local function (same options and output).

    Examples
    --------
    >>> spark_disparities(sdf, y_true="y", y_pred="p", by="g",  # doctest: +SKIP
    ...                   metrics="selection_rate", reference="b")["difference"].to_list()
    [1.0, 0.0]
    """
    counts = spark_confusion_counts(
        data,
        y_true=y_true,
        y_pred=y_pred,
        y_score=y_score,
        threshold=threshold,
        by=by,
        weight=weight,
        pos_label=pos_label,
        neg_label=neg_label,
        separately=separately,
        score_bounds=score_bounds,
        spark=spark,
        source_format=source_format,
    )
    return disparities(
        counts,
        by=None if separately else by,
        metrics=metrics,
        reference=reference,
        weighted=weighted,
    )


def spark_fairness_criteria(
    data: SparkDataFrame | str | os.PathLike[str],
    *,
    y_true: str,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    reference: Reference = "overall",
    weighted: bool | None = None,
    criteria: Sequence[str] | None = None,
    separately: bool = False,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
    spark: SparkSession | None = None,
    source_format: str = "parquet",
) -> pl.DataFrame:
    r"""The named fairness criteria of a Spark DataFrame: :func:`spark_confusion_counts` then
    :func:`~polars_fairmetrics.fairness_criteria` on the driver.

    E.g. statistical parity difference :math:`SR_g - SR_{ref}`, disparate impact
    :math:`SR_g / SR_{ref}` (same options and output as the local function).

    Examples
    --------
    >>> spark_fairness_criteria(  # doctest: +SKIP
    ...     sdf, y_true="y", y_pred="p", by="g", reference="b",
    ...     criteria=["statistical_parity_difference"])["value"].to_list()
    [1.0, 0.0]
    """
    counts = spark_confusion_counts(
        data,
        y_true=y_true,
        y_pred=y_pred,
        y_score=y_score,
        threshold=threshold,
        by=by,
        weight=weight,
        pos_label=pos_label,
        neg_label=neg_label,
        separately=separately,
        score_bounds=score_bounds,
        spark=spark,
        source_format=source_format,
    )
    return fairness_criteria(
        counts,
        by=None if separately else by,
        reference=reference,
        weighted=weighted,
        criteria=criteria,
    )
