"""Meet users where their data is: pandas, Arrow, dicts and arrays in, Polars inside.

:func:`as_polars` turns what Polars can convert (without copying where Arrow allows) into a
DataFrame or keeps a LazyFrame lazy; :func:`frame_from_arrays` builds a frame from the
``y_true, y_pred, sensitive_features`` arrays that fairlearn users start from. Anything else is
refused with an error that names the type and the fix.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

import polars as pl

from polars_fairmetrics.exceptions import InvalidOptionError

__all__ = ["SENSITIVE_PREFIX", "accepts_tables", "as_polars", "frame_from_arrays"]

F = TypeVar("F", bound=Callable[..., Any])

SENSITIVE_PREFIX = "sensitive_feature_"
"""Column names given to unnamed sensitive features (``sensitive_feature_0`` …)."""


def _module(obj: object) -> str:
    return type(obj).__module__.split(".")[0]


def as_polars(data: Any) -> pl.DataFrame | pl.LazyFrame:
    """A Polars DataFrame or LazyFrame from a table in any common form.

    Accepted: Polars DataFrame / LazyFrame (returned as they are), pandas DataFrame, pyarrow
    Table, RecordBatch or RecordBatchReader, and a mapping of column name to array-like.

    Raises
    ------
    InvalidOptionError
        For anything else, naming the type and the way to convert it.

    Examples
    --------
    >>> as_polars({"y": [1, 0], "p": [1, 1]}).shape
    (2, 2)
    """
    if isinstance(data, (pl.DataFrame, pl.LazyFrame)):
        return data
    module = _module(data)
    if module == "pandas" and type(data).__name__ == "DataFrame":
        return pl.from_pandas(data)
    if module == "pyarrow":
        name = type(data).__name__
        if name in ("Table", "RecordBatch"):
            out = pl.from_arrow(data)
            if isinstance(out, pl.DataFrame):
                return out
        if name == "RecordBatchReader":
            out = pl.from_arrow(data.read_all())
            if isinstance(out, pl.DataFrame):
                return out
    if isinstance(data, Mapping):
        return pl.DataFrame(dict(data))
    raise InvalidOptionError(
        f"expected a table (polars DataFrame/LazyFrame, pandas DataFrame, pyarrow Table or "
        f"RecordBatchReader, or a dict of arrays), got {type(data).__module__}."
        f"{type(data).__qualname__}; for arrays of labels use frame_from_arrays(y_true, y_pred, "
        "sensitive_features=...)"
    )


def accepts_tables(func: F) -> F:
    """Let a function whose first argument is a frame take any table :func:`as_polars` takes.

    A pandas DataFrame, an Arrow table or a dict becomes a Polars DataFrame (so the result is a
    DataFrame); Polars frames pass through untouched (a LazyFrame stays lazy). The signature
    and docstring are the function's own.
    """

    @functools.wraps(func)
    def wrapper(data: Any, /, *args: Any, **kwargs: Any) -> Any:
        return func(as_polars(data), *args, **kwargs)

    return cast(F, wrapper)


def _series(values: Any, name: str) -> pl.Series:
    if isinstance(values, pl.Series):
        return values.alias(name)
    if _module(values) == "pandas":
        return pl.Series(name, values.to_numpy())
    if isinstance(values, (str, bytes)):
        raise InvalidOptionError(f"{name}: expected an array of values, got the text {values!r}")
    try:
        return pl.Series(name, values)
    except (TypeError, ValueError) as exc:
        raise InvalidOptionError(
            f"{name}: cannot make a column from {type(values).__qualname__} ({exc})"
        ) from exc


def _sensitive(values: Any) -> list[pl.Series]:
    """One Series per sensitive feature, named after it where the input has a name."""
    if isinstance(values, pl.DataFrame):
        return list(values.get_columns())
    if _module(values) == "pandas":
        if type(values).__name__ == "DataFrame":
            return list(pl.from_pandas(values).get_columns())
        name = values.name if isinstance(getattr(values, "name", None), str) else None
        return [pl.Series(name or f"{SENSITIVE_PREFIX}0", values.to_numpy())]
    if isinstance(values, Mapping):
        return [_series(v, str(k)) for k, v in values.items()]
    if isinstance(values, pl.Series) and values.name:
        return [values]
    shape = getattr(values, "shape", None)
    if shape is not None and len(shape) == 2:
        return [_series(values[:, j], f"{SENSITIVE_PREFIX}{j}") for j in range(shape[1])]
    return [_series(values, f"{SENSITIVE_PREFIX}0")]


def frame_from_arrays(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    sample_weight: Any | None = None,
) -> tuple[pl.DataFrame, list[str]]:
    """A frame with columns ``y_true``, ``y_pred``, the sensitive features (and ``sample_weight``).

    Arrays may be lists, NumPy arrays, pandas or Polars Series; ``sensitive_features`` may also
    be a 2-D array, a pandas/Polars DataFrame or a dict of arrays (several features). Returns the
    frame and the names of the sensitive-feature columns.

    Examples
    --------
    >>> frame, by = frame_from_arrays([1, 0, 1], [1, 1, 0], sensitive_features=["a", "b", "a"])
    >>> frame.columns, by
    (['y_true', 'y_pred', 'sensitive_feature_0'], ['sensitive_feature_0'])
    """
    columns = [_series(y_true, "y_true"), _series(y_pred, "y_pred")]
    features = _sensitive(sensitive_features)
    names = [s.name for s in features]
    clash = [n for n in names if n in ("y_true", "y_pred", "sample_weight")]
    if clash:
        raise InvalidOptionError(f"a sensitive feature is named {clash[0]!r}: rename it")
    columns += features
    if sample_weight is not None:
        columns.append(_series(sample_weight, "sample_weight"))
    lengths = {s.name: s.len() for s in columns}
    if len(set(lengths.values())) > 1:
        raise InvalidOptionError(f"arrays of different lengths: {lengths}")
    return pl.DataFrame(columns), names


def column_names(value: str | Sequence[str]) -> list[str]:
    """``value`` as a list of column names."""
    return [value] if isinstance(value, str) else list(value)
