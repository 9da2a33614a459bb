"""Input validation shared by every entry point.

Schema checks happen when a query is *built* (``collect_schema()`` does not scan data); value
checks (a third label, a negative weight, a score outside [0, 1]) happen on the small count table
produced by the single scan, so they cost almost nothing and still name the column and the value:
the scan adds plain aggregations per checked column (:func:`weight_checks`: the weight's minimum and
null count beside its sum), and when a check
fails a second, error-only pass over the input finds the offending value
(:func:`raise_bad_weight`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NoReturn, TypeVar, cast

import polars as pl

from polars_fairmetrics._typing import ColumnNames, Label
from polars_fairmetrics.exceptions import (
    MSG_BAD_DTYPE,
    MSG_MISSING_COLUMN,
    MSG_NEGATIVE_WEIGHT,
    MSG_NONFINITE_WEIGHT,
    MSG_SCORE_INFINITE,
    MSG_SCORE_NAN,
    MSG_SCORE_RANGE,
    MSG_THIRD_LABEL,
    MSG_THRESHOLD,
    MSG_TWO_NEGATIVES,
    MSG_WEIGHT_OVERFLOW,
    ColumnNotFoundError,
    InvalidDtypeError,
    InvalidLabelError,
    InvalidOptionError,
    InvalidScoreError,
    InvalidThresholdError,
    InvalidWeightError,
)

RESERVED_PREFIX = "_pfm_"


def as_integer(value: object) -> int | None:
    """``value`` as an ``int`` when it is an integer — Python's or NumPy's (``np.int64``…),
    not a bool — else None: the one test of every integer option (resamples, seeds, bins)."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return None
    return int(value) if isinstance(value, numbers.Integral) else None


def as_real(value: object) -> float | None:
    """``value`` as a ``float`` when it is a real number — Python's, NumPy's (``np.float32``…)
    or a Fraction, not a bool — else None: the one test of every numeric option (levels,
    rates, bounds)."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return None
    return float(value) if isinstance(value, numbers.Real) else None


def first_flagged(
    table: pl.DataFrame, checks: Sequence[tuple[str, pl.Expr]]
) -> tuple[str, dict[str, Any]] | None:
    """The first ``(column, flag)`` check that flags a row of ``table``, and that row (named);
    None when no row is flagged. One select answers every check; only a flagged one is looked
    up again. Null flags count as unflagged.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"g": ["a", "b"], "x": [1, -2]})
    >>> first_flagged(t, [("x", pl.col("x") < 0)])
    ('x', {'g': 'b', 'x': -2})
    """
    if not checks or table.height == 0:
        return None
    flags = table.select([e.any().alias(f"_pfm_check{i}") for i, (_, e) in enumerate(checks)])
    for (column, expr), flagged in zip(checks, flags.row(0), strict=True):
        if flagged:
            return column, table.filter(expr).row(0, named=True)
    return None


_Frame = TypeVar("_Frame", pl.DataFrame, pl.LazyFrame)


def guarded(frame: _Frame, guard: Callable[[pl.DataFrame], pl.DataFrame]) -> _Frame:
    """``guard`` applied to ``frame``: at once to a DataFrame, when the query runs to a
    LazyFrame (a map over its batches, schema unchanged)."""
    if isinstance(frame, pl.DataFrame):
        return guard(frame)
    return frame.map_batches(guard, schema=frame.collect_schema())


def chosen_names(names: str | Sequence[str] | None, default: Sequence[str]) -> list[str]:
    """The names a ``metrics=``-style option chose: ``default`` for ``None``, one name for a
    string, else the list; an empty list is an error (it would silently mean "all" to some
    callers and "none" to others).

    Examples
    --------
    >>> chosen_names(None, ["a", "b"]), chosen_names("b", ["a", "b"])
    (['a', 'b'], ['b'])
    >>> chosen_names([], ["a"])
    Traceback (most recent call last):
    ...
    polars_fairmetrics.exceptions.InvalidOptionError: metrics= is an empty list
    """
    if names is None:
        return list(default)
    out = [names] if isinstance(names, str) else list(names)
    if not out:
        raise InvalidOptionError("metrics= is an empty list")
    return out


def as_list(columns: ColumnNames | None) -> list[str]:
    """Return ``columns`` as a list of names (``None`` gives ``[]``)."""
    if columns is None:
        return []
    if isinstance(columns, str):
        return [columns]
    out = list(columns)
    for c in out:
        if not isinstance(c, str):
            raise InvalidOptionError(f"column names must be strings, got {c!r}")
    if len(set(out)) != len(out):
        raise InvalidOptionError(f"a column is named twice in {out!r}")
    return out


def schema_of(data: pl.DataFrame | pl.LazyFrame) -> pl.Schema:
    """The schema of a frame, without scanning a LazyFrame's data."""
    if isinstance(data, pl.LazyFrame):
        return data.collect_schema()
    if isinstance(data, pl.DataFrame):
        return data.schema
    raise InvalidOptionError(f"expected a polars DataFrame or LazyFrame, got {type(data).__name__}")


def require_columns(schema: pl.Schema, role: str, columns: Iterable[str]) -> None:
    """Raise :class:`ColumnNotFoundError` for the first of ``columns`` not in ``schema``."""
    for c in columns:
        if c not in schema:
            available = ", ".join(repr(n) for n in schema.names())
            raise ColumnNotFoundError(
                MSG_MISSING_COLUMN.format(column=c, role=role, available=available or "none")
            )


def check_reserved(names: Iterable[str], reserved: Iterable[str]) -> None:
    """Refuse group columns whose names collide with output columns."""
    reserved_set = set(reserved)
    for n in names:
        if n in reserved_set or n.startswith(RESERVED_PREFIX):
            raise InvalidOptionError(
                f"group column {n!r} collides with an output column name; rename it first"
            )


def require_numeric(schema: pl.Schema, column: str, role: str) -> None:
    """Raise :class:`InvalidDtypeError` unless ``column`` is numeric."""
    dtype = schema[column]
    if not dtype.is_numeric():
        raise InvalidDtypeError(
            MSG_BAD_DTYPE.format(column=column, role=role, dtype=dtype, expected="a numeric dtype")
        )


def _distinct_sorted(values: pl.Series) -> list[Label]:
    """The distinct non-null values, ascending with NaN last (as Polars sorts them); small
    series (a count table's cells) in Python, where three Polars steps would cost more."""
    if values.len() > 4096:
        out: list[Label] = values.drop_nulls().unique().sort().to_list()
        return out
    seen = {v for v in values.to_list() if v is not None}
    return sorted(seen, key=lambda v: (isinstance(v, float) and math.isnan(v), v))


@dataclass(frozen=True)
class LabelSpec:
    """How the values of a label column map to the positive and negative class.

    ``neg`` is ``None`` when the negative class is "the one other value" and must be inferred
    from the data (string labels given only ``pos_label``).
    """

    column: str
    role: str
    pos: Label
    neg: Label | None

    def bool_expr(self, values: pl.Series) -> pl.Expr:
        """The column ``values.name`` mapped to Booleans by :meth:`to_bool` (which raises for a
        value outside the two classes), null where every value is null: the one mapping of the
        count scans' cell tables.

        The old values are typed as the column, so a Decimal(10, 2) column is matched (Python
        Decimals would make Decimal(38, 2) literals, which Polars refuses to compare).

        Examples
        --------
        >>> import polars as pl
        >>> spec = LabelSpec("y", "y_true", 1, 0)
        >>> cells = pl.DataFrame({"y": pl.Series([1, 0, None], dtype=pl.Decimal(10, 2))})
        >>> cells.select(spec.bool_expr(cells["y"]))["y"].to_list()
        [True, False, None]
        """
        mapping = self.to_bool(values)
        if not mapping:
            return pl.lit(None, dtype=pl.Boolean).alias(values.name)
        old = pl.Series(list(mapping), dtype=values.dtype)
        new = list(mapping.values())
        return pl.col(values.name).replace_strict(old, new, return_dtype=pl.Boolean)

    def to_bool(self, values: pl.Series) -> dict[Label, bool]:
        """Map the distinct non-null ``values`` of the column to booleans, or raise.

        Raises :class:`InvalidLabelError` naming the column and the offending value when a value is
        neither class (or, with an inferred negative class, when two distinct non-positive values
        exist).
        """
        distinct = _distinct_sorted(values)
        mapping: dict[Label, bool] = {}
        others = [v for v in distinct if v != self.pos]
        if self.neg is None:
            if len(others) > 1:
                raise InvalidLabelError(
                    MSG_TWO_NEGATIVES.format(
                        column=self.column,
                        role=self.role,
                        pos=self.pos,
                        first=others[0],
                        second=others[1],
                    )
                )
        else:
            for v in others:
                if v != self.neg:
                    raise InvalidLabelError(
                        MSG_THIRD_LABEL.format(
                            column=self.column, role=self.role, value=v, pos=self.pos, neg=self.neg
                        )
                    )
        for v in distinct:
            if isinstance(v, float) and math.isnan(v):
                raise InvalidLabelError(
                    MSG_THIRD_LABEL.format(
                        column=self.column, role=self.role, value=v, pos=self.pos, neg=self.neg
                    )
                )
            mapping[v] = v == self.pos
        return mapping


def resolve_label_spec(
    schema: pl.Schema,
    column: str,
    role: str,
    pos_label: Label | None,
    neg_label: Label | None,
) -> LabelSpec:
    """Decide the positive and negative label of ``column`` from its dtype and the options.

    Text ``pos_label``/``neg_label`` apply to text columns only; a Boolean or numeric column
    given with text labels keeps its natural classes (``True`` / 1 positive).

    - Boolean: ``True`` is positive (or ``pos_label``), the other value negative.
    - Numeric: ``pos_label`` defaults to 1; ``neg_label`` to 0 (to 1 when ``pos_label`` is 0).
    - String, Categorical, Enum: ``pos_label`` is required; the negative class is ``neg_label``
      or, when not given, the single other value found in the data.
    """
    dtype = schema[column]
    if isinstance(pos_label, str) and (dtype == pl.Boolean or dtype.is_numeric()):
        # text labels name the classes of text columns; Boolean and numeric columns keep
        # their natural classes (so y_true="yes"/"no" can be compared with a 0/1 prediction)
        pos_label, neg_label = None, None
    if dtype == pl.Boolean:
        pos: Label = True if pos_label is None else bool(pos_label)
        return LabelSpec(column, role, pos, not pos)
    if dtype.is_numeric():
        pos = 1 if pos_label is None else pos_label
        neg = neg_label
        if neg is None and pos in (0, 1):
            neg = 1 - int(pos)
        return LabelSpec(column, role, pos, neg)
    if dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum):
        if pos_label is None or not isinstance(pos_label, str):
            raise InvalidOptionError(
                f"column {column!r} ({role}) holds text labels; pass pos_label= with the "
                "positive class as a string"
            )
        if neg_label is not None and not isinstance(neg_label, str):
            raise InvalidOptionError(f"neg_label={neg_label!r} must be a string for {column!r}")
        return LabelSpec(column, role, pos_label, neg_label)
    raise InvalidDtypeError(
        MSG_BAD_DTYPE.format(
            column=column,
            role=role,
            dtype=dtype,
            expected="Boolean, numeric, String, Categorical or Enum labels",
        )
    )


def validate_thresholds(
    threshold: float | Sequence[float], bounds: tuple[float, float] | None
) -> list[float]:
    """Return the thresholds sorted ascending, or raise :class:`InvalidThresholdError`.

    Thresholds must be finite numbers, inside ``bounds`` when given, and distinct. A number is
    any real number, NumPy's scalars included (``np.float32(0.5)``, a 0-d array); a list is any
    iterable of them (a NumPy array, a Series). Text is not a number (``"0.5"`` is refused
    whole, not read as the characters ``"0"``, ``"."``, ``"5"``).

    Examples
    --------
    >>> import numpy as np
    >>> validate_thresholds(np.float32(0.5), None), validate_thresholds(np.array([0.7, 0.2]), None)
    ([0.5], [0.2, 0.7])
    """
    if isinstance(threshold, str | bytes | numbers.Number) or getattr(threshold, "ndim", 1) == 0:
        values: list[object] = [threshold]
    else:
        try:
            values = list(cast("Iterable[object]", threshold))
        except TypeError:
            raise InvalidThresholdError(
                MSG_THRESHOLD.format(value=threshold, problem="not a number or a list of numbers")
            ) from None
    if not values:
        raise InvalidThresholdError("threshold is an empty list")
    out: list[float] = []
    for t in values:
        if getattr(t, "ndim", None) == 0:  # a 0-d NumPy array
            t = t.item()  # type: ignore[attr-defined]
        if isinstance(t, bool) or not isinstance(t, numbers.Real):
            raise InvalidThresholdError(MSG_THRESHOLD.format(value=t, problem="not a number"))
        x = float(t)
        if not math.isfinite(x):
            raise InvalidThresholdError(MSG_THRESHOLD.format(value=t, problem="not finite"))
        if bounds is not None and not bounds[0] <= x <= bounds[1]:
            raise InvalidThresholdError(
                MSG_THRESHOLD.format(value=t, problem=f"outside [{bounds[0]}, {bounds[1]}]")
            )
        out.append(x)
    if len(set(out)) != len(out):
        dup = next(t for t in out if out.count(t) > 1)
        raise InvalidThresholdError(MSG_THRESHOLD.format(value=dup, problem="given twice"))
    return sorted(out)


def threshold_grid(bins: int | Sequence[float], bounds: tuple[float, float] | None) -> list[float]:
    r"""The one threshold grid of counts and curves, sorted ascending.

    An integer ``bins`` gives ``bins + 1`` equal steps over ``bounds = (low, high)``: threshold
    :math:`t_i` is the double nearest the exact value

    .. math:: t_i = low + i \cdot (high - low) / bins, \qquad i = 0 \dots bins

    where *low* and *high* are the decimals as written (the shortest text of the floats), computed
    in exact rational arithmetic and rounded once. So the grid's thresholds are the decimal
    values a user expects: ``threshold_grid(10, (0, 1))`` holds ``0.3`` itself, not
    ``0.30000000000000004`` (what ``np.linspace`` gives), and a score of exactly 0.3 is
    predicted positive at threshold 0.3. A list is checked by :func:`validate_thresholds`.

    Examples
    --------
    >>> threshold_grid(10, (0.0, 1.0))[3]
    0.3
    >>> threshold_grid([0.5, 0.2], None)
    [0.2, 0.5]
    """
    n_bins = bin_count(bins)
    if n_bins is None:
        return validate_thresholds(cast(Sequence[float], bins), bounds)
    if bounds is None:
        raise InvalidOptionError(
            "mode='grid' with an integer bins= needs score_bounds=(low, high); or pass the "
            "thresholds as a list"
        )
    if not all(math.isfinite(float(b)) for b in bounds):
        raise InvalidOptionError(f"score_bounds={bounds!r} must be finite")
    low, high = (Fraction(repr(float(b))) for b in bounds)
    if not low < high:
        raise InvalidOptionError(f"score_bounds={bounds!r} must be (low, high) with low < high")
    return [float(low + i * (high - low) / n_bins) for i in range(n_bins + 1)]


def bin_count(bins: object) -> int | None:
    """``bins=`` as a number of bins (a positive integer, NumPy's included), or ``None`` for a
    list of thresholds. A single number that is not a positive integer (``2.5``, ``0``,
    ``True``) is an :class:`InvalidOptionError`: it is neither a count nor a list, and read
    as one threshold it would give a grid of one point.

    Examples
    --------
    >>> bin_count(10), bin_count([0.2, 0.5])
    (10, None)
    """
    n_bins = as_integer(bins)
    if n_bins is not None:
        if n_bins < 1:
            raise InvalidOptionError(f"bins={bins!r} must be a positive integer")
        return n_bins
    if isinstance(bins, numbers.Number | str) or type(bins).__name__ == "bool_":
        raise InvalidOptionError(
            f"bins={bins!r} must be a positive integer (the number of bins) or a list of thresholds"
        )
    return None


def threshold_index(
    score: pl.Expr, thresholds: Sequence[float], dtype: pl.DataType | None = None
) -> pl.Expr:
    """How many of the (ascending) ``thresholds`` are ``<= score``: a row is predicted positive
    at the *i*-th threshold (from 1) iff its index is ``>= i`` (the rule ``score >= t``).

    ``dtype`` is the score column's dtype: the rule is applied in that precision, as Polars'
    own ``pl.col(s) >= t`` and NumPy's ``scores >= t`` apply it. A Float32 score of 0.7 (the
    single-precision number nearest 0.7, just below the double 0.7) is predicted positive at
    threshold 0.7: each threshold is rounded to Float32 first (comparing the rounded threshold
    and the score in Float64 is then exact).

    Null where the score is null. A few thresholds: one comparison each (fastest); many: a
    binary search. Counts and curves both bin scores with it.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"s": pl.Series([0.7], dtype=pl.Float32)})
    >>> df.select(threshold_index(pl.col("s"), [0.7], pl.Float32())).item()
    1
    """
    if dtype == pl.Float32:
        single = pl.Series(list(thresholds), dtype=pl.Float64).cast(pl.Float32).cast(pl.Float64)
        thresholds = single.to_list()
    s = score.cast(pl.Float64)
    if len(thresholds) <= 32:
        n_below = pl.sum_horizontal([(s >= t).cast(pl.Int64) for t in thresholds])
    else:
        n_below = (
            pl.lit(pl.Series(list(thresholds), dtype=pl.Float64))
            .search_sorted(s, side="right")
            .cast(pl.Int64)
        )
    return pl.when(s.is_not_null()).then(n_below)


def weight_checks(weight: pl.Expr, *, minimum: str, nulls: str) -> list[pl.Expr]:
    r"""Two plain aggregations that, with the weight sum, validate a weight column per cell.

    ``minimum`` is :math:`\min_i w_i` (NaN and nulls skipped) and ``nulls`` the number of null
    weights (read from the validity mask: no per-row arithmetic). With the cell's weight sum
    :math:`\sum_i w_i` a cell is valid exactly when (:func:`weights_invalid`)

    .. math:: \min_i w_i \ge 0 \quad\text{and}\quad \sum_i w_i \text{ finite}:

    a negative weight or :math:`-\infty` makes the minimum negative, a NaN or :math:`+\infty`
    makes the sum NaN or infinite (so does a sum that overflows Float64, which is rejected too).
    ``weight`` must be Float64.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"w": [1.0, None, 0.0, -0.0]})
    >>> df.select(*weight_checks(pl.col("w"), minimum="low", nulls="nulls")).row(0)
    (-0.0, 1)
    """
    return [weight.min().alias(minimum), weight.null_count().cast(pl.Int64).alias(nulls)]


def weights_invalid(minimum: pl.Series, total: pl.Series) -> bool:
    """Whether a cell table's weight checks (:func:`weight_checks`) flag an invalid weight:
    a negative minimum, a cell sum that is NaN or infinite, or a total over the cells that
    overflows Float64 (every sum of cells is at most the total).

    Examples
    --------
    >>> import polars as pl
    >>> weights_invalid(pl.Series([0.0, None]), pl.Series([2.0, 0.0]))
    False
    >>> weights_invalid(pl.Series([0.5, 1.0]), pl.Series([float("nan"), 3.0]))
    True
    """
    if bool((minimum < 0).any()) or not bool(total.is_finite().all()):
        return True
    return not math.isfinite(float(total.sum()))  # a sum over cells that overflows


def raise_bad_weight(source: pl.LazyFrame, column: str) -> NoReturn:
    """Raise :class:`InvalidWeightError` naming ``column`` and an invalid value of it.

    The error path of :func:`weight_checks`: one more pass over ``source`` (only when the check
    failed) for the minimum, maximum and sum of the weights, judged by
    :func:`check_weight_summary`. Raises a message without the value if that pass finds none (a
    source that changed between the passes).
    """
    w = pl.col(column).cast(pl.Float64)
    summary = source.select(w.min(), w.max().alias("max"), w.sum().alias("sum"))
    w_min, w_max, w_sum = summary.collect(engine="streaming").row(0)
    check_weight_summary(column, w_min, w_max, w_sum)
    raise InvalidWeightError(
        f"column {column!r} (weight) has a negative, NaN or infinite weight (the value was not "
        "found again in the input)"
    )


def check_weight_summary(
    column: str, w_min: float | None, w_max: float | None, w_sum: float | None
) -> None:
    """Raise :class:`InvalidWeightError` from a weight column's min, max and sum.

    NaN propagates into the sum while min and max skip it, so the three together tell negative,
    infinite and NaN weights apart without another pass over the data; finite weights whose sum
    overflows Float64 are rejected too (every weighted sum would be infinite).
    """
    if w_min is not None and w_min < 0:
        raise InvalidWeightError(MSG_NEGATIVE_WEIGHT.format(column=column, value=w_min))
    if w_max is not None and math.isinf(w_max):
        raise InvalidWeightError(MSG_NONFINITE_WEIGHT.format(column=column, value=w_max))
    if w_sum is not None and math.isnan(w_sum):
        raise InvalidWeightError(MSG_NONFINITE_WEIGHT.format(column=column, value=float("nan")))
    if w_sum is not None and math.isinf(w_sum):
        raise InvalidWeightError(MSG_WEIGHT_OVERFLOW.format(column=column, value=w_max))


def check_score_summary(
    column: str,
    s_min: float | None,
    s_max: float | None,
    n_nan: int,
    bounds: tuple[float, float] | None,
) -> None:
    """Raise :class:`InvalidScoreError` for NaN scores or scores outside ``bounds``."""
    if n_nan:
        raise InvalidScoreError(MSG_SCORE_NAN.format(column=column))
    for v in (s_min, s_max):
        if v is None:
            continue
        if not math.isfinite(v):  # not "outside [-inf, inf]": no bound would admit it
            raise InvalidScoreError(MSG_SCORE_INFINITE.format(column=column, value=v))
        if bounds is not None and not bounds[0] <= v <= bounds[1]:
            raise InvalidScoreError(
                MSG_SCORE_RANGE.format(column=column, value=v, low=bounds[0], high=bounds[1])
            )


def check_mapping_keys(
    mapping: Mapping[object, object], allowed: Iterable[object], what: str
) -> None:
    """Raise :class:`InvalidOptionError` when ``mapping`` names a key not in ``allowed``."""
    allowed_set = set(allowed)
    for k in mapping:
        if k not in allowed_set:
            known = sorted(map(str, allowed_set))
            raise InvalidOptionError(f"{what} names {k!r}, which is not among {known}")
