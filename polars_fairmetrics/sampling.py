r"""Controlled subsets with a chosen imbalance ratio and group ratio (the paper's Section 6).

:func:`sample_ir_gr` draws, from any frame with a label column and a group column, a subset of
``n`` rows whose share of positives is IR and whose share of the protected group is GR, with
the group ratio holding *within each class* as well (the paper's "special care": for
``n = 1100``, IR = 0.5 and GR = 0.1 the subset has 55 protected positives, 55 protected
negatives, 495 unprotected positives and 495 unprotected negatives).

Stratum sizes
-------------
With :math:`k = \mathrm{round}(n \cdot IR)` positives and :math:`m = \mathrm{round}(n \cdot GR)`
protected rows, the protected positives are :math:`a = \mathrm{round}(k m / n)` (Python's
round-half-to-even), and the other strata are :math:`m - a` protected negatives,
:math:`k - a` unprotected positives and :math:`n - k - m + a` unprotected negatives: the totals
``n``, ``k`` and ``m`` are exact, the within-class group ratio is as close as integers allow.

Rows whose label or group is null belong to no stratum and are never drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_fairmetrics._typing import FrameT, Label
from polars_fairmetrics._validate import as_integer, as_real
from polars_fairmetrics.exceptions import (
    ColumnNotFoundError,
    FairMetricsError,
    InvalidDtypeError,
    InvalidOptionError,
)

__all__ = ["StratumSizes", "StratumTooSmallError", "sample_ir_gr", "stratum_sizes"]

_INDEX = "_pfm_row"


class StratumTooSmallError(FairMetricsError):
    """The data hold fewer rows in a stratum than the requested subset needs."""


@dataclass(frozen=True)
class StratumSizes:
    """Rows to draw per (group, class) stratum."""

    protected_positive: int
    protected_negative: int
    unprotected_positive: int
    unprotected_negative: int

    def as_dict(self) -> dict[tuple[bool, bool], int]:
        """``{(is_protected, is_positive): rows}``."""
        return {
            (True, True): self.protected_positive,
            (True, False): self.protected_negative,
            (False, True): self.unprotected_positive,
            (False, False): self.unprotected_negative,
        }


def _check_count(value: object) -> int:
    n = as_integer(value)
    if n is None or n < 1:
        raise InvalidOptionError(f"n must be a positive integer, got {value!r}")
    return n


def _check_ratio(name: str, r: object) -> float:
    real = as_real(r)
    x = math.nan if real is None else real
    if not (math.isfinite(x) and 0.0 <= x <= 1.0):
        raise InvalidOptionError(f"{name} must be a number in [0, 1], got {r!r}")
    return x


def _check_seed(value: object) -> int:
    seed = as_integer(value)
    if seed is None or seed < 0:
        raise InvalidOptionError(
            f"seed must be a non-negative integer (the seed of numpy's default_rng), got {value!r}"
        )
    return seed


def _check_label(frame: pl.LazyFrame, column: str, role: str, option: str, value: object) -> None:
    """A null label matches no row; one of another type cannot be compared: both are errors."""
    if value is None:
        raise InvalidOptionError(
            f"{option}=None: give a value of column {column!r} ({role}); rows whose {role} is "
            "null belong to no stratum"
        )
    dtype = frame.collect_schema()[column]
    try:
        pl.DataFrame(schema={column: dtype}).select(pl.col(column) == pl.lit(value))
    except pl.exceptions.PolarsError as exc:
        raise InvalidDtypeError(
            f"column {column!r} ({role}) has dtype {dtype}; {option}={value!r} cannot be "
            f"compared with it"
        ) from exc


def stratum_sizes(n: int, ir: float, gr: float) -> StratumSizes:
    r"""Rows per stratum of a subset of ``n`` rows with ratios ``ir`` and ``gr``.

    :math:`k = \mathrm{round}(n\,IR)`, :math:`m = \mathrm{round}(n\,GR)`,
    protected positives :math:`a = \mathrm{round}(k m / n)`; see the module docstring.

    Examples
    --------
    >>> stratum_sizes(1100, ir=0.5, gr=0.1)
    StratumSizes(protected_positive=55, protected_negative=55,
                 unprotected_positive=495, unprotected_negative=495)
    >>> stratum_sizes(1100, ir=0.5, gr=0.01)
    StratumSizes(protected_positive=6, protected_negative=5,
                 unprotected_positive=544, unprotected_negative=545)
    """
    n = _check_count(n)
    ir = _check_ratio("ir", ir)
    gr = _check_ratio("gr", gr)
    k = round(n * ir)
    m = round(n * gr)
    a = round(k * m / n)
    return StratumSizes(a, m - a, k - a, n - k - m + a)


def sample_ir_gr(
    frame: FrameT,
    *,
    y_true: str,
    group: str,
    protected: Label,
    n: int,
    ir: float,
    gr: float,
    seed: int,
    pos_label: Label = 1,
) -> FrameT:
    r"""Draw ``n`` rows with ratios ``ir`` and ``gr``, the group ratio holding within each class.

    The four strata (protected/unprotected × positive/negative) get the sizes of
    :func:`stratum_sizes`; rows are drawn without replacement, uniformly within each stratum,
    by a numpy ``Generator(seed)`` over the stratum's row positions, so the same frame and seed
    always give the same subset. The subset keeps the frame's row order and columns.

    Parameters
    ----------
    frame
        DataFrame or LazyFrame. A LazyFrame is returned lazy, but building it **collects the
        label and group columns once** (to count the strata and choose row positions); the
        other columns are not read until the result is collected.
    y_true
        Label column; ``pos_label`` is the positive class, every other non-null value negative.
    group
        Group column; rows equal to ``protected`` form the protected group, every other
        non-null value the unprotected group.
    protected
        Value of ``group`` that marks the protected group.
    n, ir, gr
        Subset size, share of positives, share of the protected group.
    seed
        Seed of the random draw: a non-negative integer.
    pos_label
        Positive label (default 1).

    Returns
    -------
    DataFrame or LazyFrame (the kind given)

    Raises
    ------
    StratumTooSmallError
        When a stratum holds fewer rows than requested (the message names it and both counts;
        an empty frame is the case where every stratum has 0 rows).
    InvalidOptionError
        For ``n`` not a positive integer, ``ir`` / ``gr`` not a number in [0, 1], ``seed`` not
        a non-negative integer, ``protected`` or ``pos_label`` None.
    InvalidDtypeError
        When ``protected`` / ``pos_label`` cannot be compared with its column (``"F"`` for an
        integer column).

    Examples
    --------
    >>> df = pl.DataFrame({"y": [1, 0] * 50, "sex": ["F"] * 30 + ["M"] * 70, "x": range(100)})
    >>> sub = sample_ir_gr(df, y_true="y", group="sex", protected="F", n=20, ir=0.5, gr=0.25,
    ...                    seed=0)
    >>> sub.group_by("sex", "y").len().sort("sex", "y")
    shape: (4, 3)
    ┌─────┬─────┬─────┐
    │ sex ┆ y   ┆ len │
    │ --- ┆ --- ┆ --- │
    │ str ┆ i64 ┆ u32 │
    ╞═════╪═════╪═════╡
    │ F   ┆ 0   ┆ 3   │
    │ F   ┆ 1   ┆ 2   │
    │ M   ┆ 0   ┆ 7   │
    │ M   ┆ 1   ┆ 8   │
    └─────┴─────┴─────┘
    """
    sizes = stratum_sizes(n, ir, gr)
    seed = _check_seed(seed)
    if not isinstance(frame, (pl.DataFrame, pl.LazyFrame)):
        raise InvalidOptionError(f"frame must be a polars DataFrame or LazyFrame, got {frame!r}")
    lazy = frame.lazy()
    schema = lazy.collect_schema()
    for col, role in ((y_true, "y_true"), (group, "group")):
        if col not in schema:
            raise ColumnNotFoundError(
                f"column {col!r} ({role}) not found; available columns: {list(schema.names())}"
            )
    if _INDEX in schema:
        raise InvalidOptionError(f"column name {_INDEX!r} is reserved")
    _check_label(lazy, group, "group", "protected", protected)
    _check_label(lazy, y_true, "y_true", "pos_label", pos_label)
    keys = (
        lazy.select(
            (pl.col(group) == pl.lit(protected)).alias("prot"),
            (pl.col(y_true) == pl.lit(pos_label)).alias("pos"),
        )
        .with_row_index(_INDEX)
        .filter(pl.col("prot").is_not_null(), pl.col("pos").is_not_null())
        .collect()
    )
    rng = np.random.default_rng(seed)
    chosen: list[np.ndarray] = []
    for (prot, pos), want in sizes.as_dict().items():
        rows = keys.filter(pl.col("prot") == prot, pl.col("pos") == pos)[_INDEX].to_numpy()
        rows = np.sort(rows)
        if rows.size < want:
            stratum = (
                f"{'protected' if prot else 'unprotected'} ({group} {'==' if prot else '!='} "
                f"{protected!r}) × {'positive' if pos else 'negative'} ({y_true} "
                f"{'==' if pos else '!='} {pos_label!r})"
            )
            raise StratumTooSmallError(
                f"stratum {stratum} needs {want} rows for n={n}, ir={ir}, gr={gr} but the data "
                f"hold {rows.size}"
            )
        chosen.append(rng.choice(rows, size=want, replace=False))
    picked = pl.Series(_INDEX, np.sort(np.concatenate(chosen)), dtype=keys[_INDEX].dtype)
    out = lazy.with_row_index(_INDEX).filter(pl.col(_INDEX).is_in(picked.implode())).drop(_INDEX)
    if isinstance(frame, pl.DataFrame):
        return out.collect()
    return out
