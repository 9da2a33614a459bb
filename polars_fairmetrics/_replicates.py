"""Replicate tables and percentile intervals for the monitoring and calibration modules.

Two small pieces shared by :mod:`polars_fairmetrics.monitor` and
:mod:`polars_fairmetrics.calibration`:

- :func:`resample_partitions` — :func:`~polars_fairmetrics.bootstrap.resample_counts` on a
  count table with ``model`` / ``period`` partitions: each partition is drawn on its own, with a
  random stream of its own, so the replicate table has the layout of the input plus
  ``replicate``;
- :func:`attach_intervals` — percentile intervals of the ``value`` (and ``difference``,
  ``ratio``) of a long result table, from the same function evaluated on a replicate table,
  as the interval columns of ``docs/results.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_fairmetrics._typing import FrameT
from polars_fairmetrics._validate import as_integer, as_real, schema_of
from polars_fairmetrics.exceptions import InvalidOptionError

__all__ = ["attach_intervals", "check_interval_options", "resample_partitions", "stream_seed"]

REPLICATE = "replicate"


def check_interval_options(n_resamples: int, level: float) -> None:
    """Refuse a negative or non-integer number of resamples and a level outside (0, 1)."""
    n = as_integer(n_resamples)
    if n is None or n < 0:
        raise InvalidOptionError(
            f"n_resamples must be an integer >= 0 (0: no intervals), got {n_resamples!r}"
        )
    value = as_real(level)
    if value is None or not 0.0 < value < 1.0:
        raise InvalidOptionError(f"level must be strictly between 0 and 1, got {level!r}")


def stream_seed(seed: int | None, *stream: int) -> int | None:
    """An independent seed for one random stream (``numpy.random.SeedSequence`` of the seed and
    the stream's numbers); ``None`` stays ``None`` (fresh entropy)."""
    if seed is None:
        return None
    value = as_integer(seed)
    if value is None or value < 0:
        raise InvalidOptionError(f"seed must be a non-negative integer or None, got {seed!r}")
    return int(np.random.SeedSequence([value, *stream]).generate_state(1)[0])


def resample_partitions(
    table: pl.DataFrame,
    *,
    partitions: Sequence[str],
    n_resamples: int,
    seed: int | None,
    stream: int = 0,
) -> pl.DataFrame:
    """Replicates 1..B of an additive count table (``tp fp tn fn n n_null``), per partition.

    Each combination of the ``partitions`` columns present (``model``, ``period``) is resampled
    on its own (:func:`~polars_fairmetrics.bootstrap.resample_counts`, which draws each
    attribute of a ``separately=True`` table as its own multinomial), with a random stream of its
    own (``[seed, stream, partition index]``): each period keeps its own total. Extra non-count
    columns (a cell's score) are carried as keys.
    """
    from polars_fairmetrics.bootstrap import resample_counts

    parts = [p for p in partitions if p in table.columns]
    pieces = table.partition_by(parts, maintain_order=True, include_key=True) if parts else [table]
    out: list[pl.DataFrame] = []
    for i, piece in enumerate(pieces):
        if piece.height == 0:
            continue
        values = piece.select(parts).row(0, named=True) if parts else {}
        reps = resample_counts(
            piece.drop(parts),
            n_resamples=n_resamples,
            seed=stream_seed(seed, stream, i),
        )
        out.append(
            reps.with_columns(
                [pl.lit(v, dtype=table.schema[k]).alias(k) for k, v in values.items()]
            )
        )
    columns = [REPLICATE, *[c for c in table.columns if c != REPLICATE]]
    if not out:
        return pl.DataFrame(
            schema={REPLICATE: pl.Int64, **{c: table.schema[c] for c in columns[1:]}}
        )
    keep = [c for c in columns if c in out[0].columns]
    return pl.concat([o.select(keep) for o in out], how="vertical")


def attach_intervals(
    point: FrameT,
    replicates: pl.DataFrame | pl.LazyFrame,
    *,
    level: float,
    n_resamples: int,
    fields: Sequence[str] = ("value", "difference", "ratio"),
    by: Sequence[str] | None = None,
) -> FrameT:
    r"""``point`` with percentile intervals from ``replicates`` (the same function on replicates).

    Rows are matched on ``by`` (default: the columns of ``point`` that identify a row — keys,
    partitions, ``metric``, ``bin`` — i.e. all but the value, size and comparison columns; nulls
    equal).
    With :math:`x^*_b` the replicate values where the statistic is defined and
    :math:`\alpha = 1 -` ``level``: ``[q_{\alpha/2}, q_{1-\alpha/2}]`` (linear interpolation,
    numpy's default). An interval is withheld (null) by the rules of
    :func:`~polars_fairmetrics.with_intervals`, and ``ci_note`` says why: the estimate is
    undefined, the statistic is undefined in every resample or in more than 10 % of them
    (:data:`~polars_fairmetrics.bootstrap.MIN_DEFINED_SHARE`: the defined ones would describe
    a conditional distribution), or every resample gives the same value.
    """
    from polars_fairmetrics.bootstrap import CONSTANT_NOTE, FEW_DEFINED_NOTE, MIN_DEFINED_SHARE

    point_schema = schema_of(point)
    present = [f for f in fields if f in point_schema.names()]
    match = list(by) if by is not None else _identity(point_schema)
    alpha = 1.0 - float(level)
    rep = replicates.lazy().filter(pl.col(REPLICATE) > 0)
    aggs: list[pl.Expr] = []
    names: dict[str, tuple[str, str]] = {
        "value": ("ci_low", "ci_high"),
        "difference": ("difference_ci_low", "difference_ci_high"),
        "ratio": ("ratio_ci_low", "ratio_ci_high"),
        "fraction_positive": ("ci_low", "ci_high"),
    }
    spread: dict[str, str] = {f: f"_pfm_spread_{f}" for f in present}
    count: dict[str, str] = {f: f"_pfm_defined_{f}" for f in present}
    for f in present:
        low, high = names[f]
        v = pl.col(f).cast(pl.Float64).filter(pl.col(f).is_not_null() & pl.col(f).is_not_nan())
        aggs += [
            v.quantile(alpha / 2, interpolation="linear").alias(low),
            v.quantile(1 - alpha / 2, interpolation="linear").alias(high),
            (v.max() > v.min()).alias(spread[f]),
            v.count().cast(pl.Int64).alias(count[f]),
        ]
    lead = present[0]
    bands = rep.group_by(match).agg(aggs)
    out = point.lazy().join(bands, on=match, how="left", nulls_equal=True)
    # the named reference's own difference and ratio are exact (0 and 1), as in with_intervals
    exact = pl.col("is_reference").fill_null(False) if "is_reference" in point_schema else None
    notes: dict[str, pl.Expr] = {}
    for f in present:
        defined_f = pl.col(count[f]).fill_null(0)
        constant = ~pl.col(spread[f]).fill_null(False)
        if exact is not None and f in ("difference", "ratio"):
            constant = constant & ~exact
        notes[f] = (
            pl.when(pl.col(f).is_null() | pl.col(f).cast(pl.Float64).is_nan())
            .then(pl.lit("undefined estimate"))
            .when(defined_f == 0)
            .then(pl.lit("undefined in every resample"))
            .when(defined_f < MIN_DEFINED_SHARE * n_resamples)
            .then(pl.format(FEW_DEFINED_NOTE, defined_f, pl.lit(n_resamples)))
            .when(constant)
            .then(pl.lit(CONSTANT_NOTE))
            .otherwise(pl.lit(None, dtype=pl.String))
        )
    cleared = [
        pl.when(notes[f].is_not_null()).then(None).otherwise(pl.col(c)).alias(c)
        for f in present
        for c in names[f]
    ]
    if len(present) == 1:
        note = notes[lead]
    else:
        # one note when every interval is withheld for the same reason, else each one's
        same = pl.all_horizontal([notes[f] == notes[lead] for f in present]).fill_null(False)
        each = pl.concat_str(
            [pl.lit(f"{f}: ") + notes[f] for f in present], separator="; ", ignore_nulls=True
        )
        note = pl.when(same).then(notes[lead]).otherwise(pl.when(each != "").then(each))
    defined = pl.col(count[lead]).fill_null(0)
    out = out.with_columns(
        *cleared,
        pl.lit("percentile", dtype=pl.String).alias("ci_method"),
        pl.lit(float(level), dtype=pl.Float64).alias("ci_level"),
        pl.lit(n_resamples, dtype=pl.Int64).alias("n_resamples"),
        defined.alias("n_defined"),
        note.alias("ci_note"),
    ).drop([*spread.values(), *count.values()])
    if isinstance(point, pl.DataFrame):
        return out.collect()
    return out


_SIZE_AND_COMPARISON = {
    "value",
    "support",
    "n",
    "n_null",
    "n_w",
    "reference",
    "is_reference",
    "reference_value",
    "difference",
    "ratio",
    "baseline",
    "current",
    "baseline_n",
    "mean_predicted",
    "fraction_positive",
    "positives",
    "bin_low",
    "bin_high",
}


def _identity(schema: Any) -> list[str]:
    """Columns that identify a row of a long result: keys, partitions, ``metric``, ``bin``."""
    return [c for c in schema.names() if c not in _SIZE_AND_COMPARISON]
