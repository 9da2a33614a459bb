r"""The one disparity engine: references, differences and ratios, criteria, between-groups.

Orientation follows the source documents (:math:`\Delta f = f_{dis} - f_{priv}`,
:math:`\mathcal{Q} f = f_{dis} / f_{priv}`): **difference = group − reference** and
**ratio = group / reference**. The reference is

- a named group: a value (one key), a tuple (intersectional keys, in the order of ``by``) or a
  mapping ``{column: value}``; with several attributes side by side (``separately=True``) a
  mapping ``{attribute: value}`` names one reference per attribute;
- ``"rest"``: every row not in the group (Virny's dis-vs-priv convention), computed from the
  additive statistics as total − group, so the metric of the rest is exact, not an average of
  group metrics;
- ``"overall"``: the whole population;
- ``"largest"``: the group with the most rows in its partition (aequitas' majority group).

A group whose value is the text ``"overall"``, ``"rest"`` or ``"largest"`` is named with a mapping
(``{"g": "rest"}``).

Everything here works on tables of *additive* statistics (confusion counts, per-threshold curve
counts, per-group sums of per-sample statistics), so the same code serves thresholds, bootstrap
replicates and models: each is a *partition* (``attribute``, ``model``, ``threshold``,
``replicate`` columns are kept apart). Group keys are compared as typed values (a null key is the
null group, never the text ``"null"``).

The pieces, each written once and used by every capability:

- :func:`reference_statistics` — the reference's statistics beside each group's;
- :func:`compare` — difference and ratio of a value and its reference value;
- :data:`CRITERIA` — the named fairness criteria, declared as data (:class:`Criterion`) and
  composed by :func:`criterion_expr`;
- :func:`summarize_between` — the between-groups summaries of a long table of group values.

A ratio with a zero reference value is null, like every other undefined value (or ±inf with
``zero_reference="infinity"``, NumPy's and Virny's convention).
"""

from __future__ import annotations

import decimal
import functools
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import polars as pl

from polars_fairmetrics._typing import ColumnNames, FrameT, Label
from polars_fairmetrics._validate import as_list, require_columns, schema_of
from polars_fairmetrics.counts import (
    COUNT_COLUMNS,
    count_columns,
    count_rows_or_table,
    require_count_table,
)
from polars_fairmetrics.exceptions import (
    MSG_REFERENCE,
    ColumnNotFoundError,
    InvalidOptionError,
    ReferenceGroupError,
)
from polars_fairmetrics.inputs import accepts_tables
from polars_fairmetrics.metrics import (
    METRICS,
    Counts,
    _metric_names,
    _use_weighted,
    metric_columns,
    metric_expr,
    safe_div,
)
from polars_fairmetrics.results import (
    Layout,
    display_label,
    finish,
    from_wide,
    partitions_of,
    to_wide,
)

__all__ = [
    "CRITERIA",
    "Criterion",
    "Layout",
    "Reference",
    "between_groups",
    "compare",
    "criteria_from_comparisons",
    "criterion_expr",
    "disparities",
    "fairness_criteria",
    "reference_present",
    "reference_statistics",
    "summarize_between",
]

Reference: TypeAlias = Label | tuple[Label, ...] | Mapping[str, Any]
"""A named group, ``"rest"``, ``"overall"``, or a mapping (see the module docstring)."""

ZeroReference: TypeAlias = Literal["null", "infinity"]
"""What a ratio with a zero reference value is: null (default) or ±inf (NumPy, Virny)."""

_REF = "_pfm_ref_"
_HAS_REF = "_pfm_has_ref"


# ---------------------------------------------------------------------------------------------
# Layout and references
# ---------------------------------------------------------------------------------------------


def _key_literal(column: str, value: Any, dtype: pl.DataType) -> pl.Expr | None:
    """A reference value of key ``column`` as a literal of the column's dtype.

    Keys are typed: a number names a group of a numeric column, a bool of a Boolean column, a
    string of a text (String, Categorical, Enum) column, a date of a Date column. A value of
    another kind (``"1"`` or ``True`` for an integer column, ``1`` for a text column, the text
    ``"2020-01-01"`` for a Date column) names no group: :class:`ReferenceGroupError`, raised
    when the query is built, names the column, its dtype and the value, rather than the value
    being cast (``"1"`` to 1) or compared by Polars (a raw error). ``None`` when no value of
    the dtype equals the reference (1.5 or 2**70 of an Int64 column, 1.005 of a Decimal(10, 2)
    column): that group is absent, never a truncated or rounded neighbour (1.5 is not group 1).
    """
    if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        value = value.item()  # a NumPy scalar (np.bool_, np.int64, ...): its Python value
    text = dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum)
    if dtype == pl.Boolean:
        same_kind = isinstance(value, bool)
    elif dtype.is_numeric():
        same_kind = isinstance(value, numbers.Number | decimal.Decimal) and not isinstance(
            value, bool
        )
    elif text:
        same_kind = isinstance(value, str)
    else:
        same_kind = not isinstance(value, str | numbers.Number)
    if same_kind and not (text or dtype.is_numeric() or dtype == pl.Boolean):
        try:  # temporal and other keys: a value Polars can compare with the column
            pl.DataFrame(schema={column: dtype}).select(pl.col(column).eq_missing(pl.lit(value)))
        except (TypeError, ValueError, pl.exceptions.PolarsError):
            same_kind = False
    if not same_kind:
        raise ReferenceGroupError(
            f"reference value {value!r} ({type(value).__name__}) cannot name a group of column "
            f"{column!r} (group), which has dtype {dtype}: group keys are typed"
        )
    if dtype.is_integer() or isinstance(dtype, pl.Decimal):
        # integers and decimals hold exact values: the reference must be one of them, not a
        # value that the cast would truncate or round onto a group (1.5 to 1, 1.005 to 1.00)
        try:
            typed = pl.Series([value]).cast(dtype, strict=True)[0]
        except (ValueError, OverflowError, pl.exceptions.PolarsError):
            return None  # NaN, infinite, or outside the dtype's range
        same = float(typed) == value if isinstance(value, float) else typed == value
        return pl.lit(typed, dtype=dtype) if same else None
    if dtype.is_numeric() or dtype == pl.Boolean:
        return pl.lit(value, dtype=dtype)
    return pl.lit(value)


def _key_match(column: str, value: Any, dtype: pl.DataType) -> pl.Expr:
    """True on the rows whose key ``column`` is the reference ``value`` (typed, see
    :func:`_key_literal`; ``None`` is the null group)."""
    if value is None:
        return pl.col(column).is_null()
    literal = _key_literal(column, value, dtype)
    return pl.lit(False) if literal is None else pl.col(column).eq_missing(literal)


def reference_present(
    table: pl.DataFrame, values: Mapping[str, Any], schema: Mapping[str, pl.DataType]
) -> bool:
    """Whether some row of ``table`` is the group ``{key: value}`` (typed, as the reference of
    every comparison is matched).

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"g": [1, 2]})
    >>> [reference_present(t, {"g": v}, t.schema) for v in (1.0, 1.5, "1")]
    [True, False, False]
    """
    try:
        match = pl.all_horizontal([_key_match(k, v, schema[k]) for k, v in values.items()])
    except ReferenceGroupError:
        return False  # a value of another type than its column names no group
    return bool(table.select(match.any()).item())


def _reference_groups(
    reference: Reference, layout: Layout, schema: Mapping[str, pl.DataType]
) -> dict[str | None, dict[str, Any]]:
    """The named reference as ``{attribute or None: {key: value}}``."""
    keys = layout.keys
    if "attribute" in layout.partitions:
        if not isinstance(reference, Mapping):
            raise InvalidOptionError(
                f"reference {reference!r}: several attributes are compared side by side; pass a "
                "mapping {attribute: value} (one reference group per attribute), 'rest' or "
                "'overall'"
            )
        unknown = [a for a in reference if a not in keys]
        if unknown:
            raise InvalidOptionError(
                f"reference names attribute(s) {unknown!r} that are not group columns {keys!r}"
            )
        missing = [a for a in keys if a not in reference]
        if missing:
            raise ReferenceGroupError(
                f"reference gives no group for attribute(s) {missing!r}; name one for each of "
                f"{keys!r}, or use 'overall' / 'rest' / 'largest'"
            )
        return {str(a): {str(a): v} for a, v in reference.items()}
    if isinstance(reference, Mapping):
        missing = [k for k in keys if k not in reference]
        extra = [k for k in reference if k not in keys]
        if missing or extra:
            raise InvalidOptionError(
                f"reference mapping {dict(reference)!r} must name exactly the group columns "
                f"{keys!r} (missing: {missing!r}, unknown: {extra!r})"
            )
        return {None: {k: reference[k] for k in keys}}
    if isinstance(reference, tuple):
        if len(reference) != len(keys):
            raise InvalidOptionError(
                f"reference {reference!r} has {len(reference)} values for {len(keys)} group "
                f"columns {keys!r}"
            )
        return {None: dict(zip(keys, reference, strict=True))}
    if len(keys) != 1:
        raise InvalidOptionError(
            f"groups have several columns {keys!r}: pass the reference as a tuple or a mapping"
        )
    return {None: {keys[0]: reference}}


def _is_special(reference: Reference) -> bool:
    return isinstance(reference, str) and reference in ("overall", "rest")


def _largest_mask(layout: Layout, size: str) -> pl.Expr:
    """True on the group with the most rows of its partition (ties: the first by its keys)."""
    if not layout.keys:
        raise InvalidOptionError("reference='largest' needs group columns (by=)")
    group = pl.struct(layout.keys)
    order = [pl.col(size), *[pl.col(k) for k in layout.keys]]
    descending = [True] + [False] * len(layout.keys)
    first = group.sort_by(order, descending=descending, nulls_last=True).first()
    return group.eq_missing(_window(first, layout.partitions))


def reference_mask(
    reference: Reference,
    layout: Layout,
    schema: Mapping[str, pl.DataType],
    *,
    size: str = "n",
) -> pl.Expr:
    """A Boolean expression that is true on the rows of the reference group.

    ``reference="largest"`` selects the group with the most rows (column ``size``) in each
    partition — aequitas' majority-group reference.
    """
    if isinstance(reference, str) and reference == "largest":
        return _largest_mask(layout, size)
    groups = _reference_groups(reference, layout, schema)
    mask: pl.Expr | None = None
    for attribute, values in groups.items():
        cond = pl.lit(True)
        for k, v in values.items():
            cond = cond & _key_match(k, v, schema[k])
        if attribute is not None:
            cond = (pl.col("attribute") == attribute) & cond
        mask = cond if mask is None else (mask | cond)
    return pl.lit(False) if mask is None else mask


def reference_label(reference: Reference, layout: Layout) -> pl.Expr:
    """The ``reference`` column: ``"overall"``, ``"rest"`` or the group's display label."""
    if _is_special(reference) or reference == "largest":
        return pl.lit(str(reference), dtype=pl.String)
    groups = _reference_groups(reference, layout, {})
    if None in groups:
        return pl.lit(display_label(groups[None]), dtype=pl.String)
    mapping = {str(a): display_label(v) for a, v in groups.items()}
    return pl.col("attribute").replace_strict(mapping, default=None, return_dtype=pl.String)


def _window(expr: pl.Expr, partitions: Sequence[str]) -> pl.Expr:
    return expr.over(list(partitions)) if partitions else expr


def reference_statistics(
    reference: Reference,
    layout: Layout,
    statistics: Sequence[str],
    schema: Mapping[str, pl.DataType],
    *,
    size: str = "n",
) -> list[pl.Expr]:
    """The reference's value of each additive statistic, beside every group's row.

    ``size``: the column of the groups' row counts that ``reference="largest"`` compares.

    Column ``_pfm_ref_<s>`` for each statistic ``s``: the partition's total (``"overall"``),
    the total minus the group's own (``"rest"``), or the named group's (its rows' sum; then also
    ``_pfm_has_ref``, whether the partition contains the reference group), plus ``reference``
    and ``is_reference``.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"g": ["a", "b", "c"], "x": [1, 2, 4]})
    >>> lay = Layout(keys=["g"], partitions=[])
    >>> t.with_columns(reference_statistics("rest", lay, ["x"], t.schema))["_pfm_ref_x"].to_list()
    [6, 5, 3]
    """
    parts = layout.partitions
    label = reference_label(reference, layout).alias("reference")
    if _is_special(reference):
        totals = [_window(pl.col(s).sum(), parts) for s in statistics]
        refs = [
            (t if reference == "overall" else t - pl.col(s)).alias(f"{_REF}{s}")
            for t, s in zip(totals, statistics, strict=True)
        ]
        return [*refs, label, pl.lit(False).alias("is_reference")]
    mask = reference_mask(reference, layout, schema, size=size)
    refs = [_window(pl.col(s).filter(mask).sum(), parts).alias(f"{_REF}{s}") for s in statistics]
    return [
        *refs,
        _window(mask.any(), parts).alias(_HAS_REF),
        label,
        mask.fill_null(False).alias("is_reference"),
    ]


def check_reference(
    frame: FrameT, reference: Reference, layout: Layout, *, shown: Sequence[str] | None = None
) -> FrameT:
    """Raise :class:`ReferenceGroupError` (when the query runs) if a partition lacks the named
    reference group; drop the helper column. A no-op for ``"overall"`` / ``"rest"``.

    ``shown``: the partitions the message names (default all of the layout's): a caller that
    adds internal partitions of its own names only the user's."""
    if _HAS_REF not in schema_of(frame).names():
        return frame
    keys, parts = layout.keys, layout.partitions
    named = parts if shown is None else [p for p in parts if p in shown]

    def guard(table: pl.DataFrame) -> pl.DataFrame:
        if not table[_HAS_REF].all():
            bad = table.filter(pl.col(_HAS_REF).not_())
            first = bad.select(parts).row(0, named=True) if parts else {}
            # the groups of the partition that lacks the reference, not of the whole table
            here = (
                bad.filter(*[pl.col(k).eq_missing(pl.lit(v)) for k, v in first.items()])
                if first
                else bad
            )
            # attributes side by side: the partition's own key (the others are null there)
            own = [first["attribute"]] if first.get("attribute") in keys else keys
            groups = here.select(own).unique().sort(own, nulls_last=True).rows(named=True)
            listed = ", ".join(display_label(g) for g in groups[:20])
            where = ", ".join(f"{k}={first[k]!r}" for k in named) or "the data"
            raise ReferenceGroupError(
                MSG_REFERENCE.format(
                    value=reference, column=f"{own} ({where})", available=listed or "(none)"
                )
            )
        return table.drop(_HAS_REF)

    schema = {k: v for k, v in schema_of(frame).items() if k != _HAS_REF}
    if isinstance(frame, pl.DataFrame):
        return guard(frame)
    return frame.map_batches(guard, schema=schema)


# ---------------------------------------------------------------------------------------------
# Comparison arithmetic: the one place
# ---------------------------------------------------------------------------------------------


def compare(
    value: pl.Expr, reference_value: pl.Expr, *, zero_reference: ZeroReference = "null"
) -> tuple[pl.Expr, pl.Expr]:
    r"""Difference and ratio of a value and its reference value.

    .. math:: \text{difference} = v - v_{ref}, \qquad \text{ratio} = v / v_{ref}

    Null where either is null; the ratio is null where :math:`v_{ref} = 0`, or with
    ``zero_reference="infinity"`` :math:`\pm\infty` for :math:`v \ne 0` (NumPy's and Virny's
    convention; 0/0 stays null).

    Examples
    --------
    >>> import polars as pl
    >>> d, r = compare(pl.lit(0.3), pl.lit(0.0))
    >>> pl.select(d.alias("d"), r.alias("r")).row(0)
    (0.3, None)
    >>> pl.select(compare(pl.lit(0.3), pl.lit(0.0), zero_reference="infinity")[1]).item()
    inf
    """
    if zero_reference not in ("null", "infinity"):
        raise InvalidOptionError(
            f"zero_reference must be 'null' or 'infinity', got {zero_reference!r}"
        )
    difference = value - reference_value
    ratio = safe_div(value, reference_value)
    if zero_reference == "infinity":
        v = value.cast(pl.Float64)
        ratio = (
            pl.when((reference_value == 0) & (v != 0))
            .then(pl.when(v > 0).then(float("inf")).otherwise(float("-inf")))
            .otherwise(ratio)
        )
    return difference, ratio


# ---------------------------------------------------------------------------------------------
# The named criteria, declared as data
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Criterion:
    """A named fairness criterion: which metrics it compares and how.

    ``composition`` is ``"difference"`` (group − reference of the one metric), ``"ratio"``
    (group / reference) or ``"max_abs_difference"`` (the largest absolute difference over the
    metrics; null when any is undefined). ``parity`` is the value of perfect fairness.
    """

    name: str
    metrics: tuple[str, ...]
    composition: Literal["difference", "ratio", "max_abs_difference"]
    parity: float
    description: str


CRITERIA: dict[str, Criterion] = {
    c.name: c
    for c in (
        Criterion(
            "statistical_parity_difference",
            ("selection_rate",),
            "difference",
            0.0,
            "P(Ŷ=1 | A=g) − P(Ŷ=1 | A=ref)",
        ),
        Criterion(
            "disparate_impact",
            ("selection_rate",),
            "ratio",
            1.0,
            "P(Ŷ=1 | A=g) / P(Ŷ=1 | A=ref); the four-fifths rule flags < 0.8",
        ),
        Criterion(
            "equal_opportunity_difference",
            ("true_positive_rate",),
            "difference",
            0.0,
            "TPR_g − TPR_ref",
        ),
        Criterion(
            "predictive_equality_difference",
            ("false_positive_rate",),
            "difference",
            0.0,
            "FPR_g − FPR_ref",
        ),
        Criterion(
            "false_negative_rate_difference",
            ("false_negative_rate",),
            "difference",
            0.0,
            "FNR_g − FNR_ref",
        ),
        Criterion(
            "equalized_odds_difference",
            ("false_positive_rate", "false_negative_rate"),
            "max_abs_difference",
            0.0,
            "max(|FPR_g − FPR_ref|, |FNR_g − FNR_ref|)",
        ),
        Criterion(
            "accuracy_equality_difference",
            ("accuracy",),
            "difference",
            0.0,
            "ACC_g − ACC_ref",
        ),
        Criterion(
            "positive_predictive_parity_difference",
            ("positive_predictive_value",),
            "difference",
            0.0,
            "PPV_g − PPV_ref",
        ),
        Criterion(
            "negative_predictive_parity_difference",
            ("negative_predictive_value",),
            "difference",
            0.0,
            "NPV_g − NPV_ref",
        ),
    )
}
"""Every named criterion by name (Virny's performance dimensions, the class-imbalance paper)."""


def _criterion_names(criteria: str | Sequence[str] | None) -> list[Criterion]:
    names = [criteria] if isinstance(criteria, str) else list(criteria or CRITERIA)
    if not names:
        raise InvalidOptionError("criteria= is an empty list")
    for c in names:
        if c not in CRITERIA:
            raise InvalidOptionError(f"unknown criterion {c!r}; known: {', '.join(CRITERIA)}")
    return [CRITERIA[c] for c in dict.fromkeys(names)]


def criterion_expr(criterion: Criterion, column: Callable[[str, str], pl.Expr]) -> pl.Expr:
    """A criterion's value from the comparison columns, ``column(metric, "difference"|"ratio")``.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"false_positive_rate_difference": [0.1, None],
    ...                   "false_negative_rate_difference": [-0.3, 0.2]})
    >>> e = criterion_expr(CRITERIA["equalized_odds_difference"],
    ...                    lambda m, c: pl.col(f"{m}_{c}"))
    >>> t.select(e.alias("eod"))["eod"].to_list()
    [0.3, None]
    """
    if criterion.composition == "difference":
        return column(criterion.metrics[0], "difference")
    if criterion.composition == "ratio":
        return column(criterion.metrics[0], "ratio")
    parts = [column(m, "difference").abs() for m in criterion.metrics]
    defined = pl.all_horizontal([p.is_not_null() for p in parts])
    return pl.when(defined).then(pl.max_horizontal(parts))


# ---------------------------------------------------------------------------------------------
# Between groups
# ---------------------------------------------------------------------------------------------


def summarize_between(
    long: FrameT,
    layout: Layout,
    higher_is_better: Mapping[str, bool | None],
    *,
    value: str = "value",
) -> FrameT:
    """Between-groups summaries of a long table of group values (``metric``, ``value``).

    Per partition and metric: ``min``, ``max``, ``difference = max − min``, ``ratio = min / max``
    (null where ``max`` is 0), ``worst_group`` / ``best_group`` (structs of the key columns, by
    the metric's direction, ties to the first group by its keys; null for metrics with no better
    direction and when every group is undefined), ``n_groups`` and ``n_undefined`` (groups
    whose value is null, left out).
    """
    keys = layout.keys
    if not keys:
        raise InvalidOptionError("between-groups summaries need group columns (by=)")
    v = pl.col(value)
    hib = pl.col("metric").replace_strict(
        dict(higher_is_better), default=None, return_dtype=pl.Boolean
    )
    group = pl.struct(keys)
    any_defined = v.is_not_null().any()
    # ties go to the first group by its keys (nulls last), as for reference="largest": the
    # choice must not depend on the order of the rows, which the streaming engine does not keep
    key_order: list[pl.Expr] = [pl.col(k) for k in layout.keys]
    by_value: list[pl.Expr] = [v, *key_order]
    ascending: list[bool] = [False] * len(key_order)
    high_first = group.sort_by(by_value, descending=[True, *ascending], nulls_last=True).first()
    low_first = group.sort_by(by_value, descending=[False, *ascending], nulls_last=True).first()
    hib_first = pl.col("_pfm_hib").first()
    lo, hi = v.min(), v.max()
    # max − min as hi − lo (equal values give 0.0; negating lo − hi gave -0.0), min / max
    difference, ratio = compare(hi, lo)[0], compare(lo, hi)[1]
    return (
        long.with_columns(hib.alias("_pfm_hib"))
        .group_by([*layout.partitions, "metric"])
        .agg(
            lo.alias("min"),
            hi.alias("max"),
            difference.alias("difference"),
            ratio.alias("ratio"),
            pl.when(any_defined & hib_first)
            .then(low_first)
            .when(any_defined & hib_first.not_())
            .then(high_first)
            .alias("worst_group"),
            pl.when(any_defined & hib_first)
            .then(high_first)
            .when(any_defined & hib_first.not_())
            .then(low_first)
            .alias("best_group"),
            pl.len().cast(pl.Int64).alias("n_groups"),
            v.null_count().cast(pl.Int64).alias("n_undefined"),
        )
    )


# ---------------------------------------------------------------------------------------------
# Confusion-count comparisons (the public functions)
# ---------------------------------------------------------------------------------------------


def _count_table(
    data: FrameT,
    *,
    y_true: str | None,
    y_pred: str | None,
    y_score: str | None,
    threshold: float | Sequence[float] | None,
    by: ColumnNames | None,
    weight: str | None,
    pos_label: Label | None,
    neg_label: Label | None,
    separately: bool,
    score_bounds: tuple[float, float] | None,
) -> tuple[FrameT, Layout]:
    """Count ``data`` when given rows (``y_true=``); else take it as a count table."""
    if y_true is None:
        stray = [
            k for k, v in {"pos_label": pos_label, "neg_label": neg_label}.items() if v is not None
        ]
        if stray:
            raise InvalidOptionError(
                f"{stray[0]}= given without y_true=: pass y_true= with rows, or a count table alone"
            )
    counts = count_rows_or_table(
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
    if y_true is None:
        require_count_table(schema_of(counts), as_list(by), rows_hint=True)
    columns = list(schema_of(counts).names())
    return counts, Layout.of(columns, by, count_columns(columns))


def _comparison_frame(
    counts: FrameT,
    layout: Layout,
    names: Sequence[str],
    reference: Reference,
    weighted: bool | None,
    zero_reference: ZeroReference = "null",
) -> FrameT:
    """The wide comparison table: per metric ``m`` the columns ``m``, ``m_support``,
    ``m_reference_value``, ``m_difference``, ``m_ratio`` (the ``wide=True`` layout)."""
    schema = schema_of(counts)
    columns = list(schema.names())
    use_w = _use_weighted(columns, weighted)
    base = [f"{c}_w" if use_w else c for c in COUNT_COLUMNS[:4]]
    if reference is None:
        raise InvalidOptionError("reference= is None; pass a group value, 'rest' or 'overall'")
    with_ref = check_reference(
        counts.with_columns(reference_statistics(reference, layout, base, schema)),
        reference,
        layout,
    )
    own = Counts.from_columns(weighted=use_w)
    ref = Counts.from_columns(weighted=use_w, prefix=_REF)
    values = with_ref.with_columns(
        *metric_columns(names, own, weighted=use_w),
        *[metric_expr(m, ref).alias(f"{m}_reference_value") for m in names],
    )
    per_metric: list[str | pl.Expr] = []
    for name in names:
        compared: tuple[pl.Expr, pl.Expr] = _column_comparison(name, zero_reference)
        per_metric += [name, f"{name}_support", f"{name}_reference_value", *compared]
    sizes = _sizes(columns, use_w)
    return values.select(
        *layout.partitions, *layout.keys, *sizes, "reference", "is_reference", *per_metric
    )


@functools.lru_cache(maxsize=256)
def _column_comparison(metric: str, zero_reference: ZeroReference) -> tuple[pl.Expr, pl.Expr]:
    """:func:`compare` of the columns ``metric`` and ``metric_reference_value``, named
    ``metric_difference`` and ``metric_ratio`` (built once per process)."""
    difference, ratio = compare(
        pl.col(metric), pl.col(f"{metric}_reference_value"), zero_reference=zero_reference
    )
    return difference.alias(f"{metric}_difference"), ratio.alias(f"{metric}_ratio")


def _sizes(columns: Sequence[str], weighted: bool) -> list[str]:
    return [c for c in ("n", "n_null", *(["n_w"] if weighted else [])) if c in columns]


@accepts_tables
def disparities(
    data: FrameT,
    *,
    y_true: str | None = None,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    separately: bool = False,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
    metrics: str | Sequence[str] | None = None,
    reference: Reference = "overall",
    weighted: bool | None = None,
    zero_reference: ZeroReference = "null",
    wide: bool = False,
) -> FrameT:
    r"""Per-group metric, the reference's metric, their difference and ratio.

    .. math::

        \text{difference}_g = m(\text{counts}_g) - m(\text{counts}_{ref}),\qquad
        \text{ratio}_g = m(\text{counts}_g) / m(\text{counts}_{ref})

    where :math:`\text{counts}_{ref}` are the counts of the named reference group, of the rest
    (total − group) or of the whole population. Null where either metric is undefined, and the
    ratio also where the reference value is 0.

    Parameters
    ----------
    data
        Rows (then pass ``y_true=`` and ``y_pred=`` / ``y_score=`` + ``threshold=``) or a count
        table from :func:`~polars_fairmetrics.confusion_counts`.
    y_true, y_pred, y_score, threshold, weight, pos_label, neg_label, separately, score_bounds
        As for :func:`~polars_fairmetrics.confusion_counts` (rows only).
    by
        Group column(s); for a count table, default: its non-count, non-partition columns.
    metrics
        Metric names or aliases (default: all).
    reference
        A group value (a tuple or mapping for several keys; a mapping ``{attribute: value}``
        with several attributes side by side), ``"rest"``, ``"largest"`` (the group with the
        most rows) or ``"overall"`` (default).
    weighted
        Use weighted counts (default: when present).
    zero_reference
        A ratio whose reference value is 0: ``"null"`` (default) or ``"infinity"``.
    wide
        One row per group and one column per metric (``docs/results.md``).

    Returns
    -------
    DataFrame or LazyFrame
        The comparisons kind of ``docs/results.md``: keys, partitions, ``metric``, ``value``,
        ``support``, ``n``, ``n_null``, ``reference``, ``is_reference``, ``reference_value``,
        ``difference``, ``ratio``.

    Raises
    ------
    ReferenceGroupError
        A named reference absent from the data (or from one partition) — when the query runs.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b", "b"], "y": [1, 0, 1, 0, 1],
    ...                    "p": [1, 1, 0, 0, 1]})
    >>> disparities(df, y_true="y", y_pred="p", by="g", metrics="selection_rate",
    ...             reference="b").select("g", "value", "reference_value", "difference", "ratio")
    shape: (2, 5)
    ┌─────┬──────────┬─────────────────┬────────────┬───────┐
    │ g   ┆ value    ┆ reference_value ┆ difference ┆ ratio │
    │ --- ┆ ---      ┆ ---             ┆ ---        ┆ ---   │
    │ str ┆ f64      ┆ f64             ┆ f64        ┆ f64   │
    ╞═════╪══════════╪═════════════════╪════════════╪═══════╡
    │ a   ┆ 1.0      ┆ 0.333333        ┆ 0.666667   ┆ 3.0   │
    │ b   ┆ 0.333333 ┆ 0.333333        ┆ 0.0        ┆ 1.0   │
    └─────┴──────────┴─────────────────┴────────────┴───────┘
    """
    counts, layout = _count_table(
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
    names = _metric_names(metrics)
    frame = _comparison_frame(counts, layout, names, reference, weighted, zero_reference)
    if wide:
        return finish(frame, keys=layout.keys, partitions=layout.partitions)
    fields = ("support", "reference_value", "difference", "ratio")
    return finish(
        from_wide(frame, quantities=names, fields=fields),
        keys=layout.keys,
        partitions=layout.partitions,
        order=names,
    )


@accepts_tables
def fairness_criteria(
    data: FrameT,
    *,
    y_true: str | None = None,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    separately: bool = False,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
    criteria: str | Sequence[str] | None = None,
    reference: Reference = "overall",
    weighted: bool | None = None,
    zero_reference: ZeroReference = "null",
    wide: bool = False,
) -> FrameT:
    """The named fairness criteria, per group against the reference, in one tidy table.

    Each criterion of :data:`CRITERIA` is a difference or ratio of one metric against the
    reference, or (equalized odds) the larger absolute difference of two:
    max(|ΔFPR|, |ΔFNR|), null when either is undefined. ``metric`` holds the criterion's name,
    ``value`` its value, ``support`` the smallest support of the metrics it compares.

    Parameters
    ----------
    data, y_true, y_pred, y_score, threshold, by, weight, pos_label, neg_label, separately
        As for :func:`disparities`.
    score_bounds, reference, weighted, zero_reference, wide
        As for :func:`disparities`.
    criteria
        Criterion names (default: all of :data:`CRITERIA`).

    Returns
    -------
    DataFrame or LazyFrame
        Keys, partitions, ``metric`` (the criterion), ``value``, ``support``, ``n``, ``n_null``,
        ``reference``, ``is_reference``.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [1, 1, 1, 0]})
    >>> fairness_criteria(df, y_true="y", y_pred="p", by="g", reference="b",
    ...                   criteria="disparate_impact").select("g", "metric", "value", "reference")
    shape: (2, 4)
    ┌─────┬──────────────────┬───────┬───────────┐
    │ g   ┆ metric           ┆ value ┆ reference │
    │ --- ┆ ---              ┆ ---   ┆ ---       │
    │ str ┆ str              ┆ f64   ┆ str       │
    ╞═════╪══════════════════╪═══════╪═══════════╡
    │ a   ┆ disparate_impact ┆ 2.0   ┆ g="b"     │
    │ b   ┆ disparate_impact ┆ 1.0   ┆ g="b"     │
    └─────┴──────────────────┴───────┴───────────┘
    """
    chosen = _criterion_names(criteria)
    counts, layout = _count_table(
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
    needed = list(dict.fromkeys(m for c in chosen for m in c.metrics))
    frame = _comparison_frame(counts, layout, needed, reference, weighted, zero_reference)
    return criteria_from_comparisons(
        frame,
        keys=layout.keys,
        partitions=layout.partitions,
        criteria=[c.name for c in chosen],
        wide=wide,
    )


def criteria_from_comparisons(
    comparisons: FrameT,
    *,
    keys: Sequence[str],
    partitions: Sequence[str] | None = None,
    criteria: str | Sequence[str] | None = None,
    wide: bool = False,
) -> FrameT:
    """The named criteria composed from a wide comparison table (``disparities(wide=True)``).

    For callers that already hold the comparisons of the criteria's metrics (the report): the
    criteria are composed from them by :func:`criterion_expr`, not recomputed from counts.
    ``support`` is the smallest support of the metrics a criterion compares. ``partitions``:
    the table's partition columns (default: the known ones present). The result is
    :func:`fairness_criteria`'s.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [1, 1, 1, 0]})
    >>> wide = disparities(df, y_true="y", y_pred="p", by="g", reference="b",
    ...                    metrics="selection_rate", wide=True)
    >>> criteria_from_comparisons(wide, keys=["g"], criteria="disparate_impact")["value"].to_list()
    [2.0, 1.0]
    """
    chosen = _criterion_names(criteria)
    schema = schema_of(comparisons)
    require_columns(schema, "group", keys)
    needed: list[str] = [
        f"{m}_{what}"
        for c in chosen
        for m in c.metrics
        for what in ("ratio" if c.composition == "ratio" else "difference", "support")
    ]
    missing = [n for n in dict.fromkeys([*needed, "reference", "is_reference"]) if n not in schema]
    if missing:
        metrics: list[str] = list(dict.fromkeys(m for c in chosen for m in c.metrics))
        raise ColumnNotFoundError(
            "criteria_from_comparisons needs the wide comparisons of the criteria's metrics "
            f"(disparities(..., metrics={metrics!r}, wide=True)); missing: {', '.join(missing)}"
        )
    columns = list(schema.names())
    parts = (
        list(partitions)
        if partitions is not None
        else [p for p in partitions_of(columns) if p not in keys]
    )
    sizes = _sizes(columns, True)
    out = comparisons.select(
        *parts,
        *keys,
        *sizes,
        "reference",
        "is_reference",
        *[criterion_expr(c, lambda m, what: pl.col(f"{m}_{what}")).alias(c.name) for c in chosen],
        *[
            pl.min_horizontal([pl.col(f"{m}_support") for m in c.metrics]).alias(
                f"{c.name}_support"
            )
            for c in chosen
        ],
    )
    names = [c.name for c in chosen]
    if wide:
        return finish(out, keys=keys, partitions=parts)
    # long: from_wide keeps the rows' order and the final finish sorts them (once)
    return finish(
        from_wide(out, quantities=names, fields=("support",)),
        keys=keys,
        partitions=parts,
        order=names,
    )


@accepts_tables
def between_groups(
    data: FrameT,
    *,
    y_true: str | None = None,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    separately: bool = False,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
    metrics: str | Sequence[str] | None = None,
    weighted: bool | None = None,
    wide: bool = False,
) -> FrameT:
    """Between-groups summaries of each metric, for attributes with many levels.

    For each metric (and partition): ``min``, ``max``, ``difference = max − min``,
    ``ratio = min / max`` (null when ``max`` is 0), the ``worst_group`` and ``best_group`` (structs
    of the typed key columns) by the metric's direction (null for metrics with no better
    direction, and when every group is undefined), ``n_groups`` and ``n_undefined`` (groups whose
    value is null; they are left out of the summary). fairlearn calls these
    ``difference(method="between_groups")`` and ``ratio(method="between_groups")``.

    Parameters
    ----------
    data, y_true, y_pred, y_score, threshold, by, weight, pos_label, neg_label, separately
        As for :func:`disparities`.
    score_bounds, metrics, weighted
        As for :func:`disparities`.
    wide
        One row per partition and one column per metric and statistic (``docs/results.md``).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b", "c"], "y": [1, 0, 1, 0, 0],
    ...                    "p": [1, 1, 0, 0, 1]})
    >>> between_groups(df, y_true="y", y_pred="p", by="g", metrics="tpr").select(
    ...     "metric", "difference", "worst_group", "n_undefined")
    shape: (1, 4)
    ┌────────────────────┬────────────┬─────────────┬─────────────┐
    │ metric             ┆ difference ┆ worst_group ┆ n_undefined │
    │ ---                ┆ ---        ┆ ---         ┆ ---         │
    │ str                ┆ f64        ┆ struct[1]   ┆ i64         │
    ╞════════════════════╪════════════╪═════════════╪═════════════╡
    │ true_positive_rate ┆ 1.0        ┆ {"b"}       ┆ 1           │
    └────────────────────┴────────────┴─────────────┴─────────────┘
    """
    counts, layout = _count_table(
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
    names = _metric_names(metrics)
    from polars_fairmetrics.metrics import metrics_from_counts

    long = metrics_from_counts(counts, metrics=names, weighted=weighted, by=layout.keys)
    hib = {m: METRICS[m].higher_is_better for m in names}
    out = finish(
        summarize_between(long, layout, hib), keys=[], partitions=layout.partitions, order=names
    )
    if wide:
        return to_wide(out, quantities=names)
    return out
