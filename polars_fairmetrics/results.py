"""The one result schema: column names, their order, sorting, the wide layout and display labels.

Every public function that returns a table follows ``docs/results.md``; this module holds the
vocabulary (so no other module spells a result column by hand) and the few helpers that put a
result into its canonical form:

- :func:`finish` selects the columns in their documented order and sorts the rows by the keys
  (nulls last), the partitions and the quantity in its registry order;
- :func:`to_wide` is the one meaning of ``wide=True``: one row per group, one column per quantity;
- :func:`display_label` / :func:`display_label_expr` make the unambiguous text label of a group
  that renderers show (``race="Caucasian", sex=null``); results themselves keep typed keys.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from polars_fairmetrics._typing import FrameT

__all__ = [
    "BETWEEN_COLUMNS",
    "COMPARISON_COLUMNS",
    "INTERVAL_COLUMNS",
    "MODEL_COMPARISON_COLUMNS",
    "NON_KEY_COLUMNS",
    "PARTITION_COLUMNS",
    "QUANTITY_COLUMNS",
    "RESERVED",
    "SIZE_COLUMNS",
    "TEST_COLUMNS",
    "Layout",
    "display_label",
    "display_label_expr",
    "finish",
    "from_wide",
    "order_rank",
    "to_wide",
]

PARTITION_COLUMNS: tuple[str, ...] = ("attribute", "model", "period", "threshold", "replicate")
"""Columns that are not group keys but split a table into independent partitions, in order."""

QUANTITY_COLUMNS: tuple[str, ...] = ("metric", "value", "support")
"""The quantity's name, its value and the count in its denominator."""

SIZE_COLUMNS: tuple[str, ...] = ("n", "n_null", "n_w")
"""Rows counted in the group, rows left out for a null, and the weighted size."""

COMPARISON_COLUMNS: tuple[str, ...] = (
    "reference",
    "is_reference",
    "reference_value",
    "difference",
    "ratio",
)
"""Columns of a comparison with a reference."""

BETWEEN_COLUMNS: tuple[str, ...] = (
    "min",
    "max",
    "difference",
    "ratio",
    "worst_group",
    "best_group",
    "n_groups",
    "n_undefined",
)
"""Columns of a between-groups summary (after ``metric``)."""

TEST_COLUMNS: tuple[str, ...] = (
    "reference_support",
    "statistic",
    "p_value",
    "p_value_adjusted",
    "significant",
)
"""Columns of a significance test of a comparison."""

MODEL_COMPARISON_COLUMNS: tuple[str, ...] = (
    "baseline_model",
    "model_difference",
    "model_difference_ci_low",
    "model_difference_ci_high",
)
"""Columns of a comparison of models (:func:`~polars_fairmetrics.compare_models` with
``baseline_model=``): the baseline model, the model's ``difference`` minus the baseline's, and
its paired interval."""

INTERVAL_COLUMNS: tuple[str, ...] = (
    "ci_low",
    "ci_high",
    "difference_ci_low",
    "difference_ci_high",
    "ratio_ci_low",
    "ratio_ci_high",
    "ci_method",
    "ci_level",
    "n_resamples",
    "n_defined",
    "ci_note",
)
"""Interval columns, in order (a table carries those that apply to it)."""

_ORDER: tuple[str, ...] = (
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "support",
    "n",
    "n_null",
    "n_w",
    "reference",
    "is_reference",
    "reference_value",
    "reference_support",
    "min",
    "max",
    "difference",
    "difference_ci_low",
    "difference_ci_high",
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "baseline_model",
    "model_difference",
    "model_difference_ci_low",
    "model_difference_ci_high",
    "worst_group",
    "best_group",
    "n_groups",
    "n_undefined",
    "statistic",
    "p_value",
    "p_value_adjusted",
    "significant",
    "ci_method",
    "ci_level",
    "n_resamples",
    "n_defined",
    "ci_note",
)
"""Documented order of the non-key columns."""

_CURVE_COLUMNS: tuple[str, ...] = (
    "fpr",
    "tpr",
    "precision",
    "recall",
    "tp",
    "fp",
    "tn",
    "fn",
    "tp_w",
    "fp_w",
    "tn_w",
    "fn_w",
    "n_null_y_true",
    "n_null_y_pred",
    "n_null_weight",
    "n_null_y_score",
)

NON_KEY_COLUMNS: frozenset[str] = frozenset(
    {
        *PARTITION_COLUMNS,
        *QUANTITY_COLUMNS,
        *SIZE_COLUMNS,
        *COMPARISON_COLUMNS,
        *BETWEEN_COLUMNS,
        *TEST_COLUMNS,
        *INTERVAL_COLUMNS,
        *_CURVE_COLUMNS,
        "period",
        "baseline",
        "current",
        "baseline_n",
        "bin",
        "bin_low",
        "bin_high",
        "bin_left",
        "bin_right",
        "count",
        "share",
        "n_models",
        "ensemble_label",
        "mean_predicted",
        "fraction_positive",
        "positives",
    }
)
"""Columns of the package's results that are never group keys: figures and plots take every
other column of a result table as a group key (unless ``by=`` names the keys)."""

RESERVED: tuple[str, ...] = tuple(
    dict.fromkeys([*(p for p in PARTITION_COLUMNS if p != "period"), *_ORDER])
)
"""Names a group column may not have: they are columns of the results. ``period`` is not among
them: no function adds it, and a user's own period column, counted as a key, is then a
partition of every function (``by=`` names the keys)."""

PER_QUANTITY: frozenset[str] = frozenset(
    {
        "value",
        "support",
        "ci_low",
        "ci_high",
        "reference_value",
        "reference_support",
        "statistic",
        "p_value",
        "p_value_adjusted",
        "significant",
        "min",
        "max",
        "difference",
        "difference_ci_low",
        "difference_ci_high",
        "ratio",
        "ratio_ci_low",
        "ratio_ci_high",
        "model_difference",
        "model_difference_ci_low",
        "model_difference_ci_high",
        "worst_group",
        "best_group",
        "n_undefined",
        "n_defined",
        "ci_note",
    }
)
"""Columns whose value depends on the quantity (they get one column per quantity when wide)."""


def partitions_of(columns: Sequence[str]) -> list[str]:
    """The partition columns present in ``columns``, in their documented order."""
    return [p for p in PARTITION_COLUMNS if p in columns]


@dataclass(frozen=True)
class Layout:
    """Which columns of a table are group keys and which are partitions.

    Partitions are the known partition columns (:data:`PARTITION_COLUMNS`) present, then — when
    the keys are named with ``by`` — any other column that is neither a key nor a statistic
    (a user's own partition, e.g. a model or a period column of their own).
    """

    keys: list[str]
    partitions: list[str]

    @classmethod
    def of(
        cls, columns: Sequence[str], by: str | Sequence[str] | None, statistics: Sequence[str]
    ) -> Layout:
        """The layout of a table with ``columns`` whose additive statistics are ``statistics``."""
        known = partitions_of(columns)
        stats = set(statistics)
        if by is None:
            keys = [c for c in columns if c not in stats and c not in known]
            return cls(keys=keys, partitions=known)
        keys = [by] if isinstance(by, str) else list(by)
        extra = [c for c in columns if c not in stats and c not in known and c not in keys]
        return cls(keys=keys, partitions=[*[p for p in known if p not in keys], *extra])


@functools.lru_cache(maxsize=512)
def _rank(column: str, order: tuple[Any, ...], default: int | None) -> pl.Expr:
    rank = {v: i for i, v in enumerate(order)}
    if default is None:
        return pl.col(column).replace_strict(rank, return_dtype=pl.Int64)
    return pl.col(column).replace_strict(rank, default=default, return_dtype=pl.Int64)


def order_rank(column: str, order: Sequence[Any], *, strict: bool = True) -> pl.Expr:
    """The position of each value of ``column`` in ``order`` (Int64): the sort key that puts
    rows in a given order (metrics in their listed order, attributes in the audit's order).

    A value absent from ``order`` raises when the query runs (``strict``) or ranks last.
    Built once per (column, order) and reused: small tables are sorted this way many times.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"metric": ["b", "c", "a"]})
    >>> t.sort(order_rank("metric", ["c", "a"], strict=False))["metric"].to_list()
    ['c', 'a', 'b']
    """
    return _rank(column, tuple(order), None if strict else len(order))


def finish(
    frame: FrameT,
    *,
    keys: Sequence[str],
    partitions: Sequence[str] | None = None,
    order: Sequence[str] | None = None,
) -> FrameT:
    """Put a long result in its canonical form: documented column order, sorted rows.

    Columns: ``attribute`` (when present), the keys, the other partitions, then the documented
    columns present (``metric``, ``value``, ``ci_low`` …), then any other column. Rows: sorted by
    ``attribute``, the keys (nulls last), the partitions and ``metric`` in the order ``order``
    (default: as given).

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"value": [0.5, 0.25], "metric": ["b", "a"], "g": ["y", "x"]})
    >>> finish(t, keys=["g"], order=["a", "b"]).columns
    ['g', 'metric', 'value']
    """
    columns: list[str] = list(frame.collect_schema().names())
    parts: list[str] = partitions_of(columns) if partitions is None else list(partitions)
    first: list[str] = ["attribute"] if "attribute" in parts else []
    lead: list[str] = [*first, *keys, *[p for p in parts if p not in first]]
    known: list[str] = [c for c in _ORDER if c in columns]
    rest: list[str] = [c for c in columns if c not in lead and c not in known]
    sort_by: list[pl.Expr] = [pl.col(c) for c in lead]
    if "metric" in columns and order is not None:
        sort_by.append(order_rank("metric", order, strict=False))
    ordered = [*lead, *known, *rest]
    out = frame if ordered == columns else frame.select(ordered)
    # a large eager frame already in order (the wide replicate tables) skips its sort; on a
    # small one the check would cost as much as the sort
    if sort_by and not (
        isinstance(out, pl.DataFrame)
        and out.height >= _CHECK_SORTED_ROWS
        and _is_sorted(out, lead, sort_by)
    ):
        out = out.sort(sort_by, nulls_last=True, maintain_order=True)
    return out


_CHECK_SORTED_ROWS = 1024
"""Rows from which :func:`finish` checks whether an eager frame is already sorted."""

_COMPARABLE = (pl.Boolean, pl.String, pl.Enum, pl.Date, pl.Datetime, pl.Duration, pl.Time)
"""Types whose comparison operators order values as ``sort`` does (with the integers): a frame
sorted by them can be recognised by comparing neighbouring rows."""


def _is_sorted(frame: pl.DataFrame, lead: Sequence[str], sort_by: Sequence[pl.Expr]) -> bool:
    """Whether ``frame`` is already in the order of ``sort_by`` (ascending, nulls last), so
    its stable sort would return it unchanged: one pass comparing each row with the next,
    instead of a sort that gathers every column (the wide replicate tables, thousands of rows
    by tens of columns, come out of the engine in order). False (sort) when a key column is of
    a type not known to compare as it sorts (floats, categoricals, nested)."""
    if frame.height < 2:
        return True
    schema = frame.schema
    for c in lead:
        dtype = schema[c]
        if not (dtype.is_integer() or isinstance(dtype, _COMPARABLE)):
            return False
    in_order: pl.Expr = pl.lit(True)
    for key in reversed(list(sort_by)):
        after = key.shift(-1)
        before = (key < after).fill_null(False) | (key.is_not_null() & after.is_null())
        tied = (key == after).fill_null(False) | (key.is_null() & after.is_null())
        in_order = before | (tied & in_order)
    return bool(frame.select(in_order.slice(0, frame.height - 1).all()).item())


def to_wide(frame: FrameT, *, quantities: Sequence[str]) -> FrameT:
    """The one meaning of ``wide=True``: one row per group, one column per quantity.

    The ``value`` of quantity ``q`` becomes column ``q``; every other per-quantity column ``c``
    (``difference``, ``ci_low``, ``support`` …) becomes ``q_c``. Key, partition and size columns
    stay. ``quantities`` are the ``metric`` values, in the order of the new columns.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"g": ["a", "a"], "metric": ["x", "y"], "value": [1.0, 2.0],
    ...                   "support": [3, 4], "n": [5, 5]})
    >>> to_wide(t, quantities=["x", "y"])
    shape: (1, 6)
    ┌─────┬─────┬─────┬───────────┬─────┬───────────┐
    │ g   ┆ n   ┆ x   ┆ x_support ┆ y   ┆ y_support │
    │ --- ┆ --- ┆ --- ┆ ---       ┆ --- ┆ ---       │
    │ str ┆ i64 ┆ f64 ┆ i64       ┆ f64 ┆ i64       │
    ╞═════╪═════╪═════╪═══════════╪═════╪═══════════╡
    │ a   ┆ 5   ┆ 1.0 ┆ 3         ┆ 2.0 ┆ 4         │
    └─────┴─────┴─────┴───────────┴─────┴───────────┘
    """
    columns: list[str] = list(frame.collect_schema().names())
    per: list[str] = [c for c in _ORDER if c in PER_QUANTITY and c in columns]
    index: list[str] = [c for c in columns if c != "metric" and c not in PER_QUANTITY]
    structs = [
        pl.struct(
            [
                pl.col(c)
                .filter(pl.col("metric") == q)
                .first()
                .alias(q if c == "value" else f"{q}_{c}")
                for c in per
            ]
        ).alias(f"_pfm_q{i}")
        for i, q in enumerate(quantities)
    ]
    if index:
        out = frame.group_by(index, maintain_order=True).agg(structs)
        out = out.sort(index, nulls_last=True, maintain_order=True)
    else:
        out = frame.select(structs)
    return out.unnest([f"_pfm_q{i}" for i in range(len(quantities))])


_CONTROL = re.compile("[\\x00-\\x1f\\x7f-\\x9f]")


def from_wide(frame: FrameT, *, quantities: Sequence[str], fields: Sequence[str]) -> FrameT:
    """The long form of a wide table: the inverse of :func:`to_wide`.

    Column ``q`` becomes the ``value`` of quantity ``q`` and ``q_f`` its field ``f`` (for each
    of ``fields``); every other column is kept on each row. Rows keep the input order, quantities
    the order of ``quantities``.
    """
    columns: list[str] = list(frame.collect_schema().names())
    per = {f"{q}_{f}" for q in quantities for f in fields} | set(quantities)
    index: list[str] = [c for c in columns if c not in per]
    if not quantities:
        return frame.select(
            *index,
            pl.lit(None, dtype=pl.String).alias("metric"),
            pl.lit(None, dtype=pl.Float64).alias("value"),
            *[pl.lit(None).alias(f) for f in fields],
        ).head(0)
    # every row becomes one row per quantity, in the order of ``quantities``: each field as a
    # list over the quantities, exploded together (no reshaping, no sort)
    listed = [
        pl.lit(pl.Series([list(quantities)], dtype=pl.List(pl.String))).first().alias("metric"),
        pl.concat_list([pl.col(q) for q in quantities]).alias("value"),
        *[pl.concat_list([pl.col(f"{q}_{f}") for q in quantities]).alias(f) for f in fields],
    ]
    return frame.select(*index, *listed).explode(["metric", "value", *fields])


def _quote(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        text = value.replace("\\", "\\\\").replace('"', '\\"')
        text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
        return f'"{text}"'
    return str(value)


def display_value(value: Any) -> str:
    """One key value as :func:`display_label` shows it: text quoted and escaped, ``null`` for a
    missing value, other values as ``str`` (a date as ``2020-01-01``, not its ``repr``).

    Examples
    --------
    >>> import datetime
    >>> display_value("Caucasian"), display_value(None), display_value(datetime.date(2020, 1, 2))
    ('"Caucasian"', 'null', '2020-01-02')
    """
    return _quote(value)


def display_label(keys: Mapping[str, Any]) -> str:
    """The unambiguous text label of a group: ``column=value`` pairs joined by ``, ``.

    Text values are quoted, with backslashes, quotes and control characters escaped
    (``\\x1b`` for an escape character), so separators inside a value cannot be mistaken for
    the label's own; a missing value is ``null`` unquoted: the text ``"null"`` and a real null
    differ.

    Examples
    --------
    >>> print(display_label({"race": "Caucasian", "sex": None}))
    race="Caucasian", sex=null
    >>> print(display_label({"g": 'a", b="c', "h": "null"}))
    g="a\\", b=\\"c", h="null"
    """
    return ", ".join(f"{k}={_quote(v)}" for k, v in keys.items())


def display_label_expr(keys: Sequence[str]) -> pl.Expr:
    """:func:`display_label` as an expression over the key columns (for renderers).

    Renderers use it on small, collected tables. With several attributes side by side, pass only
    the row's attribute's key (the others are null by construction).
    """
    if not keys:
        return pl.lit("overall")

    def label(s: pl.Series) -> pl.Series:
        rows = s.struct.unnest().rows(named=True) if s.len() else []
        return pl.Series(s.name, [display_label(r) for r in rows], dtype=pl.String)

    return pl.struct(list(keys)).map_batches(label, return_dtype=pl.String)
