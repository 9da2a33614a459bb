"""Grouped confusion counts in one lazy scan: the interface every metric is computed from.

A *count table* has one row per group (× threshold, × replicate, …) with the integer confusion
counts ``tp, fp, tn, fn, n`` (Int64), their weighted sums ``tp_w, fp_w, tn_w, fn_w, n_w`` (Float64,
when a weight column is given), and the rows left out because a value was null
(``n_null`` and its breakdown by column). For every group, ``n + n_null`` is the number of input
rows of that group: rows are never lost.

Count tables are additive: the table of a whole dataset is the sum of the tables of disjoint parts
(:func:`combine_counts`), which is what makes bootstrap resampling of counts, per-attribute
roll-ups and distributed execution cheap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import polars as pl

from polars_fairmetrics._typing import ColumnNames, FrameT, Label
from polars_fairmetrics._validate import (
    LabelSpec,
    as_list,
    check_reserved,
    check_score_summary,
    first_flagged,
    guarded,
    raise_bad_weight,
    require_columns,
    require_numeric,
    resolve_label_spec,
    schema_of,
    threshold_index,
    validate_thresholds,
    weight_checks,
    weights_invalid,
)
from polars_fairmetrics.exceptions import InvalidOptionError, InvalidWeightError
from polars_fairmetrics.inputs import accepts_tables
from polars_fairmetrics.results import RESERVED, order_rank

__all__ = [
    "COUNT_COLUMNS",
    "NULL_COLUMNS",
    "PARTITION_COLUMNS",
    "WEIGHTED_COUNT_COLUMNS",
    "WEIGHT_SQUARE_COLUMNS",
    "check_count_values",
    "combine_counts",
    "confusion_counts",
    "count_columns",
    "count_rows_or_table",
    "is_weighted",
    "require_count_table",
    "roll_up_attributes",
]

COUNT_COLUMNS: tuple[str, ...] = ("tp", "fp", "tn", "fn", "n")
"""Integer count columns of a count table."""
WEIGHTED_COUNT_COLUMNS: tuple[str, ...] = ("tp_w", "fp_w", "tn_w", "fn_w", "n_w")
"""Weighted-sum columns of a count table (present when a weight column was given)."""
WEIGHT_SQUARE_COLUMNS: tuple[str, ...] = ("tp_w2", "fp_w2", "tn_w2", "fn_w2")
"""Sums of squared weights per cell (``weight_squares=True``): what the bootstrap needs to
resample weighted sums from counts (:func:`~polars_fairmetrics.resample_counts`)."""
NULL_COLUMNS: tuple[str, ...] = ("n_null", "n_null_y_true", "n_null_y_pred", "n_null_weight")
"""Rows left out because a value was null: in total, and by the column that was null."""
PARTITION_COLUMNS: tuple[str, ...] = ("attribute", "threshold", "replicate")
"""Columns that are not group keys but split a count table into independent partitions."""

_YT = "_pfm_y_true"
_BIN = "_pfm_bin"
_N = "_pfm_n"
_W = "_pfm_w"
_WNULL = "_pfm_w_null"
_WMIN = "_pfm_w_min"
_W2 = "_pfm_w2"
_SMIN = "_pfm_s_min"
_SMAX = "_pfm_s_max"
_IDX = "_pfm_idx"
_ALL = "_pfm_all"


_KNOWN: tuple[str, ...] = (
    *COUNT_COLUMNS,
    *WEIGHTED_COUNT_COLUMNS,
    *WEIGHT_SQUARE_COLUMNS,
    *NULL_COLUMNS,
)


def count_columns(table_columns: Sequence[str]) -> list[str]:
    """The additive count columns present in a table with columns ``table_columns``."""
    return [c for c in table_columns if c in _KNOWN]


def require_count_table(schema: pl.Schema, by: Sequence[str] = (), *, rows_hint: bool) -> None:
    """Raise, when the query is built, unless ``schema`` is a count table's: the columns
    ``tp, fp, tn, fn`` present (:class:`InvalidOptionError` naming the missing ones), every count
    column numeric (:class:`InvalidDtypeError` naming it) and the ``by`` columns present
    (:class:`ColumnNotFoundError`). ``rows_hint``: the caller also accepts rows (``y_true=``).

    Examples
    --------
    >>> import polars as pl
    >>> require_count_table(pl.Schema({"g": pl.String, "tp": pl.Int64}), rows_hint=False)
    Traceback (most recent call last):
    ...
    polars_fairmetrics.exceptions.InvalidOptionError: a count table needs the columns tp, fp, tn, fn (confusion_counts makes one); missing: fp, tn, fn
    """  # noqa: E501
    missing = [c for c in COUNT_COLUMNS[:4] if c not in schema]
    if missing:
        what = (
            "pass y_true= (and y_pred= or y_score=) with rows, or a count table with columns "
            "tp, fp, tn, fn"
            if rows_hint
            else "a count table needs the columns tp, fp, tn, fn (confusion_counts makes one)"
        )
        raise InvalidOptionError(f"{what}; missing: {', '.join(missing)}")
    for c in count_columns(schema.names()):
        require_numeric(schema, c, "count")
    require_columns(schema, "group", by)


def _bad_count(table: pl.DataFrame) -> tuple[str, Any, dict[str, Any]] | None:
    """The first count column holding a negative, NaN or infinite value: its name, the value
    and the other columns of its row (the group); None when every count is valid."""
    numeric = [c for c in count_columns(table.columns) if table.schema[c].is_numeric()]

    def invalid(column: str) -> pl.Expr:
        f = pl.col(column).cast(pl.Float64)
        return (f < 0) | f.is_nan() | f.is_infinite()

    found = first_flagged(table, [(c, invalid(c)) for c in numeric])
    if found is None:
        return None
    column, row = found
    value = row.pop(column)
    return column, value, {k: v for k, v in row.items() if k not in _KNOWN}


def check_count_values(counts: FrameT) -> FrameT:
    """``counts`` unchanged, or an error (when the query runs) for a count or weighted sum that
    is negative, NaN or infinite: no rate of such a table means anything.

    A count table from :func:`confusion_counts` always passes; the check is for tables made
    elsewhere (a SQL aggregation, a hand-written table). A cell count raises
    :class:`InvalidOptionError`, a weighted sum (``tp_w`` …, ``tp_w2`` …, ``n_w``)
    :class:`InvalidWeightError`, naming the column, the value and the row's group. Null counts
    are left alone: the metrics that read them are null.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"g": ["a"], "tp": [-1], "fp": [2], "tn": [4], "fn": [1]})
    >>> check_count_values(t)
    Traceback (most recent call last):
    ...
    polars_fairmetrics.exceptions.InvalidOptionError: column 'tp' of the count table has a negative value -1 (group {'g': 'a'}): counts and weighted sums are non-negative finite numbers
    """  # noqa: E501

    def guard(table: pl.DataFrame) -> pl.DataFrame:
        bad = _bad_count(table)
        if bad is not None:
            column, value, group = bad
            kind = "negative" if value == value and value < 0 else "non-finite"
            error = InvalidWeightError if "_w" in column else InvalidOptionError
            where = f" (group {group})" if group else ""
            raise error(
                f"column {column!r} of the count table has a {kind} value {value!r}{where}: "
                "counts and weighted sums are non-negative finite numbers"
            )
        return table

    return guarded(counts, guard)


def is_weighted(table_columns: Sequence[str]) -> bool:
    """Whether a count table carries weighted sums."""
    return all(c in table_columns for c in WEIGHTED_COUNT_COLUMNS[:4])


@dataclass(frozen=True)
class _Plan:
    keys: list[str]
    y_true: LabelSpec
    y_pred: LabelSpec | None
    y_score: str | None
    thresholds: list[float] | None
    weight: str | None
    score_bounds: tuple[float, float] | None
    key_schema: dict[str, pl.DataType]
    weight_squares: bool = False
    score_dtype: pl.DataType | None = None


def _plan(
    data: pl.DataFrame | pl.LazyFrame,
    *,
    y_true: str,
    y_pred: str | None,
    y_score: str | None,
    threshold: float | Sequence[float] | None,
    by: ColumnNames | None,
    weight: str | None,
    pos_label: Label | None,
    neg_label: Label | None,
    score_bounds: tuple[float, float] | None,
    separately: bool,
    weight_squares: bool = False,
) -> _Plan:
    schema = schema_of(data)
    keys = as_list(by)
    if (y_pred is None) == (y_score is None):
        raise InvalidOptionError("pass exactly one of y_pred= (labels) or y_score= (scores)")
    if y_score is not None and threshold is None:
        raise InvalidOptionError("y_score= needs threshold= (one value or a list)")
    if y_pred is not None and threshold is not None:
        raise InvalidOptionError("threshold= applies to y_score=, not to y_pred=")
    require_columns(schema, "y_true", [y_true])
    require_columns(schema, "group", keys)
    # every column a count table may have (count_columns): a key named like one would be taken
    # for a count downstream (tp_w2: summed away by metrics_from_counts, disparities, ...)
    check_reserved(keys, [*count_columns(_KNOWN), *RESERVED])
    for role, col in (("y_pred", y_pred), ("y_score", y_score), ("weight", weight)):
        if col is not None:
            require_columns(schema, role, [col])
    if weight is not None:
        require_numeric(schema, weight, "weight")
    if weight_squares and weight is None:
        raise InvalidOptionError("weight_squares=True needs weight=")
    thresholds = None
    if y_score is not None:
        require_numeric(schema, y_score, "y_score")
        thresholds = validate_thresholds(cast("float | Sequence[float]", threshold), score_bounds)
    spec_true = resolve_label_spec(schema, y_true, "y_true", pos_label, neg_label)
    spec_pred = (
        resolve_label_spec(schema, y_pred, "y_pred", pos_label, neg_label)
        if y_pred is not None
        else None
    )
    return _Plan(
        keys=keys,
        y_true=spec_true,
        y_pred=spec_pred,
        y_score=y_score,
        thresholds=thresholds,
        weight=weight,
        score_bounds=score_bounds,
        key_schema={k: schema[k] for k in keys},
        weight_squares=bool(weight_squares),
        score_dtype=schema[y_score] if y_score is not None else None,
    )


def _cells(lf: pl.LazyFrame, plan: _Plan) -> pl.LazyFrame:
    """The one scan: counts per (group, raw label, prediction bin) plus value summaries."""
    keys: list[pl.Expr] = [pl.col(k) for k in plan.keys] if plan.keys else [pl.lit(0).alias(_ALL)]
    if plan.y_pred is not None:
        pred = pl.col(plan.y_pred.column).alias(_BIN)
    else:
        # bin = how many thresholds are <= s (the one binning rule of counts and curves)
        s = pl.col(cast(str, plan.y_score))
        thresholds = cast(list[float], plan.thresholds)
        pred = threshold_index(s, thresholds, plan.score_dtype).alias(_BIN)
    # Validation adds plain aggregations, no per-row arithmetic: the weight's minimum and null
    # count beside its sum (``weight_checks``: a negative minimum or a non-finite sum is an
    # invalid weight); scores add their min and NaN-propagating max (NaN, out of bounds).
    aggs: list[pl.Expr] = [pl.len().alias(_N)]
    if plan.weight is not None:
        w = pl.col(plan.weight).cast(pl.Float64)
        aggs += [w.sum().alias(_W), *weight_checks(w, minimum=_WMIN, nulls=_WNULL)]
    if plan.weight_squares:
        aggs.append(pl.col(cast(str, plan.weight)).cast(pl.Float64).pow(2).sum().alias(_W2))
    if plan.y_score is not None:
        s = pl.col(plan.y_score).cast(pl.Float64)
        aggs += [s.min().alias(_SMIN), s.nan_max().alias(_SMAX)]
    return lf.group_by([*keys, pl.col(plan.y_true.column).alias(_YT), pred]).agg(aggs)


def _guard_schema(plan: _Plan) -> dict[str, Any]:
    schema: dict[str, Any] = dict(plan.key_schema) if plan.keys else {_ALL: pl.Int32}
    schema.update({_YT: pl.Boolean, _BIN: pl.Int64, _N: pl.Int64})
    if plan.weight is not None:
        schema.update({_W: pl.Float64, _WNULL: pl.Int64})
    if plan.weight_squares:
        schema[_W2] = pl.Float64
    return schema


def _make_guard(plan: _Plan, source: pl.LazyFrame) -> Any:
    """A function validating the small cell table (labels, weights, scores) and mapping labels.

    ``source`` is the scanned input: read again only when a weight check failed, to name the
    offending value (:func:`~polars_fairmetrics._validate.raise_bad_weight`).
    """

    def guard(cells: pl.DataFrame) -> pl.DataFrame:
        # the checks read the small cell table; the mapping and casts are then one select
        columns: dict[str, pl.Expr] = {_YT: plan.y_true.bool_expr(cells[_YT])}
        if plan.y_pred is not None:
            columns[_BIN] = plan.y_pred.bool_expr(cells[_BIN]).cast(pl.Int64)
        else:
            high = cells[_SMAX]
            check_score_summary(
                cast(str, plan.y_score),
                cast("float | None", cells[_SMIN].min()),
                cast("float | None", high.max()),  # max skips NaN: NaN is counted apart
                int(high.is_nan().sum()),
                plan.score_bounds,
            )
            columns[_BIN] = pl.col(_BIN).cast(pl.Int64)
        if plan.weight is not None and weights_invalid(cells[_WMIN], cells[_W]):
            raise_bad_weight(source, plan.weight)
        schema = _guard_schema(plan)
        keys = plan.keys if plan.keys else [_ALL]
        return cells.select(
            [columns.get(c, pl.col(c) if c in keys else pl.col(c).cast(schema[c])) for c in schema]
        )

    return guard


def _assemble(cells: pl.LazyFrame, plan: _Plan) -> pl.LazyFrame:
    """Counts per (group, threshold) from the validated cell table (small: no data scan)."""
    keys = plan.keys if plan.keys else [_ALL]
    thresholds = plan.thresholds if plan.thresholds is not None else [0.5]
    thr = pl.LazyFrame(
        {_IDX: list(range(1, len(thresholds) + 1)), "threshold": thresholds},
        schema={_IDX: pl.Int64, "threshold": pl.Float64},
    )
    weighted = plan.weight is not None
    valid = pl.col(_YT).is_not_null() & pl.col(_BIN).is_not_null()
    counted = (pl.col(_N) - pl.col(_WNULL)) if weighted else pl.col(_N)
    pp = pl.col(_BIN) >= pl.col(_IDX)
    yt = pl.col(_YT)
    # one threshold (labels, or one score threshold): the sums and the null counts are one
    # group_by over the keys; several: the valid cells crossed with the thresholds, joined
    single = len(thresholds) == 1
    if single:
        pp = pl.col(_BIN) >= 1
        yt = valid & pl.col(_YT)
        no = valid & ~pl.col(_YT)
    else:
        no = ~yt
    cell_aggs = [
        counted.filter(yt & pp).sum().alias("tp"),
        counted.filter(no & pp).sum().alias("fp"),
        counted.filter(no & ~pp).sum().alias("tn"),
        counted.filter(yt & ~pp).sum().alias("fn"),
    ]
    if weighted:
        w = pl.col(_W)
        cell_aggs += [
            w.filter(yt & pp).sum().alias("tp_w"),
            w.filter(no & pp).sum().alias("fp_w"),
            w.filter(no & ~pp).sum().alias("tn_w"),
            w.filter(yt & ~pp).sum().alias("fn_w"),
        ]
    squares = list(WEIGHT_SQUARE_COLUMNS) if plan.weight_squares else []
    if squares:
        w2 = pl.col(_W2)
        cell_aggs += [
            w2.filter(yt & pp).sum().alias("tp_w2"),
            w2.filter(no & pp).sum().alias("fp_w2"),
            w2.filter(no & ~pp).sum().alias("tn_w2"),
            w2.filter(yt & ~pp).sum().alias("fn_w2"),
        ]
    n_null_weight = pl.col(_WNULL).sum() if weighted else pl.lit(0, dtype=pl.Int64)
    null_aggs = [
        (
            pl.col(_N).filter(~valid).sum()
            + (pl.col(_WNULL).filter(valid).sum() if weighted else pl.lit(0, dtype=pl.Int64))
        ).alias("n_null"),
        pl.col(_N).filter(pl.col(_YT).is_null()).sum().alias("n_null_y_true"),
        pl.col(_N).filter(pl.col(_BIN).is_null()).sum().alias("n_null_y_pred"),
        n_null_weight.alias("n_null_weight"),
    ]
    if single:
        table = cells.group_by(keys).agg(*null_aggs, *cell_aggs)
        if plan.thresholds is not None:
            table = table.with_columns(pl.lit(thresholds[0], dtype=pl.Float64).alias("threshold"))
    else:
        sums = cells.filter(valid).join(thr, how="cross").group_by([*keys, _IDX]).agg(cell_aggs)
        grid = cells.group_by(keys).agg(null_aggs).join(thr, how="cross")
        table = grid.join(sums, on=[*keys, _IDX], how="left", nulls_equal=True)
    int_cols = ["tp", "fp", "tn", "fn"]
    w_cols = ["tp_w", "fp_w", "tn_w", "fn_w"] if weighted else []
    table = table.with_columns(
        *[pl.col(c).fill_null(0).cast(pl.Int64) for c in int_cols],
        *[pl.col(c).fill_null(0.0).cast(pl.Float64) for c in [*w_cols, *squares]],
        *[
            pl.col(c).cast(pl.Int64)
            for c in ("n_null", "n_null_y_true", "n_null_y_pred", "n_null_weight")
        ],
    ).with_columns(pl.sum_horizontal(int_cols).alias("n"))
    if weighted:
        table = table.with_columns(pl.sum_horizontal(w_cols).alias("n_w"))
    null_cols = ["n_null", "n_null_y_true", "n_null_y_pred"]
    null_cols += ["n_null_weight"] if weighted else []
    out_keys = plan.keys + (["threshold"] if plan.thresholds is not None else [])
    cols = [*out_keys, *int_cols, "n", *w_cols, *(["n_w"] if weighted else []), *squares]
    cols += null_cols
    return table.select(cols)


def roll_up_attributes(
    table: FrameT,
    keys: Sequence[str],
    partitions: Sequence[str] = (),
    sums: Sequence[str] | None = None,
) -> FrameT:
    """Each attribute on its own: sum an intersectional table over the other attributes.

    The keys stay typed columns side by side: a row of attribute ``a`` carries its value of
    ``a`` and nulls for the other keys, and the ``attribute`` column names ``a``. Rows come in
    the order of ``keys`` (attributes), then by key and ``partitions`` (kept as they are, e.g.
    ``threshold`` or ``replicate``); ``sums`` (default: every other column) are added up. One
    chain (a cross join with the attribute names, then one group_by): on a LazyFrame of rows the
    rows are still scanned once.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"a": ["x", "x", "y"], "b": [1, 2, 1], "n": [3, 4, 5]})
    >>> roll_up_attributes(t, ["a", "b"]).rows()
    [('a', 'x', None, 7), ('a', 'y', None, 5), ('b', None, 1, 8), ('b', None, 2, 4)]
    """
    keys = list(keys)
    parts: list[str] = list(partitions)
    columns = schema_of(table).names()
    added: list[str] = (
        [c for c in columns if c not in (*keys, *parts)] if sums is None else list(sums)
    )
    names = pl.DataFrame({"attribute": keys}, schema={"attribute": pl.String})
    attributes = names.lazy() if isinstance(table, pl.LazyFrame) else names
    only_own = [pl.when(pl.col("attribute") == k).then(pl.col(k)).alias(k) for k in keys]
    return (
        table.join(attributes, how="cross")
        .with_columns(only_own)
        .group_by(["attribute", *keys, *parts])
        .agg(pl.col(added).sum())
        .sort(order_rank("attribute", keys), *keys, *parts, nulls_last=True)
        .select(["attribute", *keys, *parts, *added])
    )


@accepts_tables
def confusion_counts(
    data: FrameT,
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
    weight_squares: bool = False,
) -> FrameT:
    r"""Grouped (weighted) confusion counts, in one lazy scan of the rows.

    For each group :math:`g` (and threshold :math:`t` when scores are given), with
    :math:`\hat y_i = 1[s_i \ge t]` for scores:

    .. math::

        TP_g = \sum_{i \in g} 1[y_i = 1, \hat y_i = 1],\quad
        FP_g = \sum_{i \in g} 1[y_i = 0, \hat y_i = 1],\quad
        TN_g, FN_g \text{ likewise},\quad n_g = TP_g + FP_g + TN_g + FN_g

    and with weights :math:`w_i` the weighted sums ``tp_w = \sum w_i 1[...]`` etc.

    Parameters
    ----------
    data
        Rows of predictions (DataFrame or LazyFrame; the result is of the same kind).
    y_true
        True-label column: Boolean, numeric 0/1 (or ``pos_label``/``neg_label``), or text with
        ``pos_label``.
    y_pred, y_score
        Exactly one: predicted labels (same label rules as ``y_true``), or scores with
        ``threshold``.
    threshold
        One threshold or several (distinct, inside ``score_bounds``); a row is predicted positive
        when ``score >= threshold``, compared in the score's precision (a Float32 score of 0.7
        is positive at 0.7, as ``pl.col(s) >= 0.7`` says). The output gets a ``threshold``
        column.
    by
        Group column(s). Several columns give intersectional groups; ``None`` one overall row.
    weight
        Sample-weight column: finite and non-negative.
    pos_label, neg_label
        The positive and negative class values of ``y_true`` and ``y_pred``.
    separately
        With several ``by`` columns: each attribute on its own instead of their intersection. The
        output then has ``attribute`` and ``group`` (as text) columns. Still one scan.
    score_bounds
        Allowed score range (``None``: any finite score).
    weight_squares
        Also sum the squared weights per cell (``tp_w2, fp_w2, tn_w2, fn_w2``): what
        :func:`~polars_fairmetrics.resample_counts` needs to resample weighted sums.

    Returns
    -------
    DataFrame or LazyFrame
        Group keys, ``threshold`` (scores only), ``tp, fp, tn, fn, n`` (Int64), ``tp_w … n_w``
        (Float64, with ``weight``), ``n_null`` (rows left out for a null label, prediction/score
        or weight) and its breakdown ``n_null_y_true, n_null_y_pred[, n_null_weight]``. A null
        group value is a group of its own. Sorted by the keys.

    Raises
    ------
    ColumnNotFoundError
        When the query is built, for a column not in the schema.
    InvalidLabelError, InvalidWeightError, InvalidScoreError
        When the query runs, naming the column and the offending value.
    InvalidThresholdError, InvalidOptionError
        When the query is built.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({
    ...     "group": ["a", "a", "a", "b", "b", None],
    ...     "y": [1, 0, 1, 0, 1, 1],
    ...     "pred": [1, 1, None, 0, 1, 0],
    ... })
    >>> pfm.confusion_counts(df, y_true="y", y_pred="pred", by="group")
    shape: (3, 9)
    ┌───────┬─────┬─────┬─────┬───┬─────┬────────┬───────────────┬───────────────┐
    │ group ┆ tp  ┆ fp  ┆ tn  ┆ … ┆ n   ┆ n_null ┆ n_null_y_true ┆ n_null_y_pred │
    │ ---   ┆ --- ┆ --- ┆ --- ┆   ┆ --- ┆ ---    ┆ ---           ┆ ---           │
    │ str   ┆ i64 ┆ i64 ┆ i64 ┆   ┆ i64 ┆ i64    ┆ i64           ┆ i64           │
    ╞═══════╪═════╪═════╪═════╪═══╪═════╪════════╪═══════════════╪═══════════════╡
    │ a     ┆ 1   ┆ 1   ┆ 0   ┆ … ┆ 2   ┆ 1      ┆ 0             ┆ 1             │
    │ b     ┆ 1   ┆ 0   ┆ 1   ┆ … ┆ 2   ┆ 0      ┆ 0             ┆ 0             │
    │ null  ┆ 0   ┆ 0   ┆ 0   ┆ … ┆ 1   ┆ 0      ┆ 0             ┆ 0             │
    └───────┴─────┴─────┴─────┴───┴─────┴────────┴───────────────┴───────────────┘
    """
    plan = _plan(
        data,
        y_true=y_true,
        y_pred=y_pred,
        y_score=y_score,
        threshold=threshold,
        by=by,
        weight=weight,
        pos_label=pos_label,
        neg_label=neg_label,
        score_bounds=score_bounds,
        separately=separately,
        weight_squares=weight_squares,
    )
    if separately and len(plan.keys) < 1:
        raise InvalidOptionError("separately=True needs at least one by= column")
    lazy = data.lazy()
    cells = _cells(lazy, plan).map_batches(_make_guard(plan, lazy), schema=_guard_schema(plan))
    table = _assemble(cells, plan)
    if separately:
        table = roll_up_attributes(
            table, plan.keys, ["threshold"] if plan.thresholds is not None else []
        )
    else:
        sort_keys = plan.keys + (["threshold"] if plan.thresholds is not None else [])
        if sort_keys:
            table = table.sort(sort_keys, nulls_last=True)
    if isinstance(data, pl.DataFrame):
        return table.collect()
    return table


def count_rows_or_table(
    data: FrameT,
    *,
    y_true: str | None,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    separately: bool = False,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
) -> FrameT:
    """The count table of ``data``: its rows counted when ``y_true=`` is given
    (:func:`confusion_counts`), else ``data`` itself, taken as a count table.

    The one dispatch of every function that accepts rows or a count table. Without ``y_true=``,
    an option that only applies to rows (``y_pred``, ``y_score``, ``threshold``, ``weight``,
    ``separately``) raises :class:`InvalidOptionError` instead of being ignored.

    Examples
    --------
    >>> import polars as pl
    >>> rows = pl.DataFrame({"y": [1, 0], "p": [1, 1]})
    >>> t = count_rows_or_table(rows, y_true="y", y_pred="p")
    >>> count_rows_or_table(t, y_true=None).select("tp", "fp").row(0)
    (1, 1)
    """
    if y_true is None:
        given = {"y_pred": y_pred, "y_score": y_score, "threshold": threshold, "weight": weight}
        for name, value in given.items():
            if value is not None:
                raise InvalidOptionError(f"{name}= needs y_true= (rows); got a count table")
        if separately:
            raise InvalidOptionError("separately=True needs y_true= (rows); got a count table")
        return check_count_values(data)
    return confusion_counts(
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
    )


def combine_counts(tables: Sequence[FrameT], *, keys: ColumnNames | None = None) -> FrameT:
    """Add up count tables of disjoint parts of a dataset (mergeable counts).

    .. math:: TP_g^{whole} = \\sum_{part} TP_g^{part} \\quad (\\text{likewise every count column})

    Parameters
    ----------
    tables
        Count tables with the same key columns (all DataFrames or all LazyFrames).
    keys
        Key columns; by default every column that is not a count column.

    Returns
    -------
    DataFrame or LazyFrame
        One row per key combination with the summed counts, sorted by the keys.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "b", "a", "b"], "y": [1, 0, 1, 1], "p": [1, 0, 0, 1]})
    >>> parts = [pfm.confusion_counts(df[:2], y_true="y", y_pred="p", by="g"),
    ...          pfm.confusion_counts(df[2:], y_true="y", y_pred="p", by="g")]
    >>> pfm.combine_counts(parts).equals(pfm.confusion_counts(df, y_true="y", y_pred="p", by="g"))
    True
    """
    if not tables:
        raise InvalidOptionError("combine_counts needs at least one table")
    schema = schema_of(tables[0])
    columns = list(schema.names())
    for i, t in enumerate(tables[1:], start=1):
        other = schema_of(t)
        if list(other.names()) != columns:
            diff = sorted(set(columns) ^ set(other.names())) or ["(column order)"]
            raise InvalidOptionError(
                f"combine_counts: table {i} has columns {list(other.names())!r}, table 0 has "
                f"{columns!r} (differing: {', '.join(diff)}); count every part with the same "
                "options"
            )
        for c in columns:
            if other[c] != schema[c]:
                raise InvalidOptionError(
                    f"combine_counts: column {c!r} is {other[c]} in table {i} but {schema[c]} "
                    "in table 0"
                )
    key_cols = (
        as_list(keys)
        if keys is not None
        else [c for c in columns if c not in count_columns(columns)]
    )
    sums = [c for c in columns if c not in key_cols]
    lazy = pl.concat([t.lazy() for t in tables], how="vertical")
    if key_cols:
        out = (
            lazy.group_by(key_cols)
            .agg(pl.col(sums).sum())
            .select(columns)
            .sort(key_cols, nulls_last=True)
        )
    else:
        out = lazy.select(pl.col(sums).sum())
    if isinstance(tables[0], pl.DataFrame):
        return out.collect()
    return out
