"""Type aliases used across the package (Polars' own private aliases are not imported)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias, TypeVar

import polars as pl

FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)
"""A DataFrame or a LazyFrame: functions return the kind they are given."""

Label: TypeAlias = bool | int | float | str
"""A class label value."""

ColumnNames: TypeAlias = str | Sequence[str]
"""One column name or several."""

IntoExpr: TypeAlias = str | pl.Expr
"""A column name or an expression."""
