r"""Every confusion metric, defined once as a Polars expression over count expressions.

A metric is a function ``Counts -> pl.Expr``. The same definition serves three contexts:

- over rows, as an aggregation: ``Counts.from_rows("pred", y_true="y")`` (this is what
  ``pl.col("pred").fair.true_positive_rate(y_true="y")`` builds) inside ``select`` or
  ``group_by().agg()``;
- over a count table with columns ``tp, fp, tn, fn`` (``Counts.from_columns()``);
- over a table of bootstrap replicates or thresholds (the same columns, more rows).

Undefined is null: a 0/0 (an empty denominator) gives ``null``, never NaN, 0 or 1.
:data:`METRICS` is the registry (formula, when undefined, range, direction) from which the
metrics reference in the docs is generated.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import polars as pl

from polars_fairmetrics._typing import FrameT, IntoExpr, Label
from polars_fairmetrics._validate import as_list, chosen_names, schema_of
from polars_fairmetrics.counts import (
    WEIGHTED_COUNT_COLUMNS,
    check_count_values,
    confusion_counts,
    count_columns,
    is_weighted,
    require_count_table,
)
from polars_fairmetrics.exceptions import (
    MSG_NEGATIVE_WEIGHT,
    MSG_NONFINITE_WEIGHT,
    MSG_THIRD_LABEL,
    MSG_WEIGHT_OVERFLOW,
    InvalidOptionError,
)
from polars_fairmetrics.inputs import accepts_tables

__all__ = [
    "DEFAULT_METRICS",
    "METRICS",
    "Counts",
    "MetricSpec",
    "accuracy",
    "balanced_accuracy",
    "balanced_error_rate",
    "base_rate",
    "error_rate",
    "f1_score",
    "false_discovery_rate",
    "false_negative_rate",
    "false_omission_rate",
    "false_positive_rate",
    "g_mean",
    "group_metrics",
    "matthews_corrcoef",
    "metric",
    "metrics_from_counts",
    "negative_predictive_value",
    "positive_predictive_value",
    "resolve_metric",
    "safe_div",
    "selection_rate",
    "true_negative_rate",
    "true_positive_rate",
]


_HALF_MAX = 8e307
"""Sums above this may overflow Float64 when doubled (the largest double is about 1.8e308)."""


def safe_div(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    """``numerator / denominator`` as Float64, null where the denominator is 0 (or null).

    The one division helper of the package: every 0/0 becomes null. Every quotient is the
    correctly rounded IEEE quotient, also when the denominator is one value broadcast over a
    column (Polars divides a column by a scalar through the reciprocal, ``x * (1 / d)``, which
    is off by an ulp for some inputs: 0.75 / 0.7142857142857143 would give 1.0499999999999998
    instead of 1.05, so the same two numbers could give different ratios in different tables).

    Examples
    --------
    >>> import polars as pl
    >>> pl.select(safe_div(pl.lit(1), pl.lit(0))).item() is None
    True
    >>> df = pl.DataFrame({"v": [0.75]})
    >>> df.select(safe_div(pl.col("v"), pl.lit(0.7142857142857143))).item()
    1.05
    """
    num = numerator.cast(pl.Float64)
    den = denominator.cast(pl.Float64)
    # A zero shaped like the numerator turns a broadcast denominator into a column, so Polars
    # divides element by element (where the numerator is null the quotient is null anyway).
    den_column = den + pl.lit(0.0) * num.is_null().cast(pl.Float64)
    return pl.when(den != 0).then(num / den_column).otherwise(pl.lit(None, dtype=pl.Float64))


def _row_labels(role: str, pos_label: Label | None, neg_label: Label | None) -> tuple[Label, Label]:
    """The positive and negative label of a row expression (its dtype is unknown when built).

    Numbers and Booleans: ``pos_label`` defaults to 1 (``True == 1``), ``neg_label`` to the other
    of 0/1. Text labels need both ``pos_label`` and ``neg_label``.
    """
    if isinstance(pos_label, str) or isinstance(neg_label, str):
        if not (isinstance(pos_label, str) and isinstance(neg_label, str)):
            raise InvalidOptionError(
                f"{role}: text labels in an expression need both pos_label= and neg_label= "
                "(confusion_counts infers the negative class from the data)"
            )
        return pos_label, neg_label
    pos: Label = 1 if pos_label is None else pos_label
    if neg_label is not None:
        return pos, neg_label
    if pos in (0, 1):
        return pos, 1 - int(pos)
    raise InvalidOptionError(f"{role}: pos_label={pos!r} needs neg_label= in an expression")


def _raise_if(message: pl.Expr, column: str) -> pl.Expr:
    """``True`` where ``message`` is null, else a Polars error quoting ``message``.

    A native check (no Python UDF, so it streams): the message, null when the input is valid, is
    strictly cast to ``Int8``, which no message parses as, so Polars raises
    ``polars.exceptions.InvalidOperationError`` quoting it "in column ``column``" (the struct
    round trip names the Series: a plain alias is applied after the cast). Only the per-group
    summary is formatted, never the rows.
    """
    named = pl.struct(message.alias(column)).struct.field(column)
    return named.cast(pl.Int8, strict=True).is_null()


def _value_text(value: pl.Expr, quoted: bool) -> pl.Expr:
    """An aggregated value as Python would print it in a message (``repr``)."""
    text = value.cast(pl.String)
    if quoted:
        return pl.concat_str(pl.lit("'"), text, pl.lit("'"))
    return text.str.to_lowercase()  # NaN -> nan, inf -> inf, like Python


def _message(template: str, placeholder: str, value: pl.Expr, **fields: Any) -> pl.Expr:
    """``template`` formatted with ``fields`` and the text ``value`` (null when it is null)."""
    head, tail = template.split(placeholder)
    return pl.concat_str(pl.lit(head.format(**fields)), value, pl.lit(tail.format(**fields)))


def _label_guard(raw: pl.Expr, role: str, pos: Label, neg: Label) -> pl.Expr:
    """``True`` per group, or a Polars error naming the column and a value that is neither class.

    One aggregation: the smallest value outside ``{pos, neg}`` (NaN included: the minimum of a
    NaN and nulls is NaN; null labels are null in the comparison, so they are left out, not
    flagged). A reduction of an elementwise ``when``, not ``filter().first()``: the streaming
    engine folds it into its group-by state, where ``filter().first()`` inside a metric's
    expression made it keep the rows (memory growing with the input).
    """
    name = raw.meta.output_name(raise_if_undetermined=False) or role
    example = pl.when((raw != pos) & (raw != neg)).then(raw).min()
    value = _value_text(example, quoted=isinstance(pos, str))
    msg = _message(MSG_THIRD_LABEL, "{value!r}", value, column=name, role=role, pos=pos, neg=neg)
    return _raise_if(msg, name)


def _weight_guard(w: pl.Expr, total: pl.Expr) -> pl.Expr:
    """``True`` per group, or a Polars error naming the column and a negative/NaN/inf weight,
    or finite weights whose sum overflows Float64 (the metrics would be NaN), as
    :func:`~polars_fairmetrics.confusion_counts` checks them.

    Two plain aggregations, no per-row arithmetic: ``min`` (NaN skipped) finds a negative weight
    (or ``-inf``), the NaN-propagating ``nan_max`` a NaN or ``+inf``; ``total``, the sum of the
    four weighted cells (aggregations the metric computes anyway), an overflow.
    """
    name = w.meta.output_name(raise_if_undetermined=False) or "weight"
    f = w.cast(pl.Float64)
    low, high = f.min(), f.nan_max()
    msg = (
        pl.when(low < 0)
        .then(_message(MSG_NEGATIVE_WEIGHT, "{value!r}", _value_text(low, False), column=name))
        .when(high.is_nan() | high.is_infinite())
        .then(_message(MSG_NONFINITE_WEIGHT, "{value!r}", _value_text(high, False), column=name))
        .when(total.is_infinite())
        .then(_message(MSG_WEIGHT_OVERFLOW, "{value!r}", _value_text(high, False), column=name))
    )
    return _raise_if(msg, name)


def _as_expr(x: IntoExpr) -> pl.Expr:
    return pl.col(x) if isinstance(x, str) else x


@dataclass(frozen=True)
class Counts:
    """The four confusion counts as expressions: the input of every metric.

    Build it with :meth:`from_columns` (a count table) or :meth:`from_rows` (raw rows, as an
    aggregation).
    """

    tp: pl.Expr
    fp: pl.Expr
    tn: pl.Expr
    fn: pl.Expr
    guard: pl.Expr | None = None
    """Optional input check (row context), a native Boolean aggregation: ``True`` per group, or
    a Polars error quoting the package's message. Every metric of these counts applies it once,
    at the top of its expression."""
    columns: tuple[bool, str] | None = field(default=None, compare=False)
    """``(weighted, prefix)`` when the counts are a count table's columns (:meth:`from_columns`):
    then metric expressions are built once per process (:func:`column_metric`)."""

    @classmethod
    def from_columns(cls, *, weighted: bool = False, prefix: str = "") -> Counts:
        """Counts read from the columns of a count table (``tp`` … or ``tp_w`` … when weighted).

        Examples
        --------
        >>> import polars as pl
        >>> t = pl.DataFrame({"tp": [3], "fp": [1], "tn": [4], "fn": [2]})
        >>> t.select(true_positive_rate(Counts.from_columns())).item()
        0.6
        """
        suffix = "_w" if weighted else ""
        tp, fp, tn, fn = (pl.col(f"{prefix}{c}{suffix}") for c in ("tp", "fp", "tn", "fn"))
        return cls(tp=tp, fp=fp, tn=tn, fn=fn, columns=(weighted, prefix))

    @classmethod
    def from_rows(
        cls,
        y_pred: IntoExpr,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> Counts:
        r"""Counts as aggregations over rows (for ``select`` / ``group_by().agg()``).

        .. math::

            TP = \sum_i w_i\,1[y_i = pos,\ \hat y_i = pos],\quad
            FP = \sum_i w_i\,1[y_i = neg,\ \hat y_i = pos],\ \ldots

        (:math:`w_i = 1` without ``weight``: integer counts). Labels are Boolean, numeric 0/1
        (or ``pos_label``/``neg_label``), or text with both ``pos_label`` and ``neg_label``.
        Rows with a null label, prediction or weight are left out (use
        :func:`~polars_fairmetrics.confusion_counts` to have them counted and reported).

        Every check is a native Polars expression (no Python UDF), so the expression streams:
        one aggregation per label column (a value outside the two classes) and one for the
        weight (negative, NaN or infinite), applied by every metric function (the ``guard``
        field), not by the raw ``tp``/``fp``/``tn``/``fn`` expressions. Several metrics of the
        same rows in one ``agg`` share their aggregations on the streaming engine. Bad input
        raises **Polars'** ``polars.exceptions.InvalidOperationError`` (not an
        :class:`InvalidLabelError`/:class:`InvalidWeightError`: only Polars can raise inside a
        native expression) when the query runs; its message quotes the package's message, which
        names the column and the value, e.g. ``conversion from `str` to `i8` failed in column
        'y' for 1 out of 3 values: ["column 'y' (y_true) has a value 2 that is neither the
        positive label 1 nor the negative label 0"]``. On large data,
        :func:`group_metrics` (one pass to a count table) is the fastest path.

        Examples
        --------
        >>> import polars as pl
        >>> df = pl.DataFrame({"y": [1, 1, 0, 0], "pred": [1, 0, 1, 0], "w": [1.0, 3.0, 1.0, 1.0]})
        >>> df.select(true_positive_rate(Counts.from_rows("pred", y_true="y", weight="w"))).item()
        0.25
        >>> bad = df.with_columns(w=pl.Series([1.0, -3.0, 1.0, 1.0]))
        >>> bad.select(true_positive_rate(Counts.from_rows("pred", y_true="y", weight="w")))
        Traceback (most recent call last):
        ...
        polars.exceptions.InvalidOperationError: conversion from `str` to `i8` failed in column 'w' for 1 out of 1 values: ["column 'w' (weight) has a negative weight -3.0"]
        ...
        """  # noqa: E501
        yt_raw, yp_raw = _as_expr(y_true), _as_expr(y_pred)
        pos_t, neg_t = _row_labels("y_true", pos_label, neg_label)
        pos_p, neg_p = _row_labels("y_pred", pos_label, neg_label)
        if isinstance(pos_t, str):
            # text classes: a column of another dtype (a 0/1 or Boolean prediction) is compared
            # as text, so its values are named in the package's error, not Polars' "cannot
            # compare string with numeric type" (confusion_counts reads such columns naturally)
            yt_raw, yp_raw = yt_raw.cast(pl.String), yp_raw.cast(pl.String)
        # A null on either side makes a cell mask null or False, never True: nulls are left out
        # without a separate validity mask.
        yt, yp = yt_raw == pos_t, yp_raw == pos_p
        ok = _label_guard(yt_raw, "y_true", pos_t, neg_t) & _label_guard(
            yp_raw, "y_pred", pos_p, neg_p
        )
        if weight is None:

            def cell(mask: pl.Expr) -> pl.Expr:
                return mask.sum().cast(pl.Int64)
        else:
            w = _as_expr(weight).cast(pl.Float64)

            def cell(mask: pl.Expr) -> pl.Expr:
                # a null weight stays null and is left out of the sum; a False or null mask adds
                # an exact 0.0 (a result without nulls sums about twice as fast as a masked one)
                return pl.when(mask).then(w).otherwise(0.0).sum()

        tp, fp, tn, fn = cell(yt & yp), cell(~yt & yp), cell(~yt & ~yp), cell(yt & ~yp)
        if weight is not None:
            ok = ok & _weight_guard(w, tp + fp + tn + fn)
        return cls(tp=tp, fp=fp, tn=tn, fn=fn, guard=ok)

    @property
    def n(self) -> pl.Expr:
        """All counted rows: ``tp + fp + tn + fn``."""
        return self.tp + self.fp + self.tn + self.fn

    @property
    def positives(self) -> pl.Expr:
        """Actual positives: ``tp + fn``."""
        return self.tp + self.fn

    @property
    def negatives(self) -> pl.Expr:
        """Actual negatives: ``fp + tn``."""
        return self.fp + self.tn

    @property
    def predicted_positives(self) -> pl.Expr:
        """Predicted positives: ``tp + fp``."""
        return self.tp + self.fp

    @property
    def predicted_negatives(self) -> pl.Expr:
        """Predicted negatives: ``tn + fn``."""
        return self.tn + self.fn


def _named(func: Callable[[Counts], pl.Expr]) -> Callable[[Counts], pl.Expr]:
    """Name a metric's output column after the metric."""

    @functools.wraps(func)
    def wrapper(c: Counts) -> pl.Expr:
        if c.guard is None:
            return func(c).alias(func.__name__)
        # composite metrics (balanced accuracy, g-mean, …) call other metrics: the guard is
        # applied once, at the top
        out = func(replace(c, guard=None))
        return pl.when(c.guard).then(out).alias(func.__name__)

    return wrapper


# ---------------------------------------------------------------------------------------------
# The metrics: one definition each.
# Every example uses y = [1, 1, 1, 0, 0], pred = [1, 1, 0, 1, 0]: tp=2, fn=1, fp=1, tn=1.
# ---------------------------------------------------------------------------------------------


@_named
def accuracy(c: Counts) -> pl.Expr:
    """Accuracy: share of correct predictions.

    Formula: (TP + TN) / (TP + FP + TN + FN). Undefined when the group is empty.
    Range [0, 1], higher is better.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 0, 0], "pred": [1, 1, 0, 1, 0]})
    >>> df.select(accuracy(Counts.from_rows("pred", y_true="y"))).item()
    0.6
    """
    return safe_div(c.tp + c.tn, c.n)


@_named
def error_rate(c: Counts) -> pl.Expr:
    """Error rate: share of wrong predictions.

    Formula: (FP + FN) / (TP + FP + TN + FN). Undefined when the group is empty.
    Range [0, 1], lower is better.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 0, 0], "pred": [1, 1, 0, 1, 0]})
    >>> df.select(error_rate(Counts.from_rows("pred", y_true="y"))).item()
    0.4
    """
    return safe_div(c.fp + c.fn, c.n)


@_named
def true_positive_rate(c: Counts) -> pl.Expr:
    """True positive rate (recall, sensitivity): share of actual positives predicted positive.

    Formula: TP / (TP + FN). Undefined when there are no actual positives.
    Range [0, 1], higher is better.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 0, 0], "pred": [1, 1, 0, 1, 0]})
    >>> round(df.select(true_positive_rate(Counts.from_rows("pred", y_true="y"))).item(), 4)
    0.6667
    """
    return safe_div(c.tp, c.positives)


@_named
def false_negative_rate(c: Counts) -> pl.Expr:
    """False negative rate (miss rate): share of actual positives predicted negative.

    Formula: FN / (TP + FN). Undefined when there are no actual positives.
    Range [0, 1], lower is better.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 0, 0], "pred": [1, 1, 0, 1, 0]})
    >>> round(df.select(false_negative_rate(Counts.from_rows("pred", y_true="y"))).item(), 4)
    0.3333
    """
    return safe_div(c.fn, c.positives)


@_named
def false_positive_rate(c: Counts) -> pl.Expr:
    """False positive rate (fall-out): share of actual negatives predicted positive.

    Formula: FP / (FP + TN). Undefined when there are no actual negatives.
    Range [0, 1], lower is better.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 0, 0], "pred": [1, 1, 0, 1, 0]})
    >>> df.select(false_positive_rate(Counts.from_rows("pred", y_true="y"))).item()
    0.5
    """
    return safe_div(c.fp, c.negatives)


@_named
def true_negative_rate(c: Counts) -> pl.Expr:
    """True negative rate (specificity): share of actual negatives predicted negative.

    Formula: TN / (FP + TN). Undefined when there are no actual negatives.
    Range [0, 1], higher is better.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 0, 0], "pred": [1, 1, 0, 1, 0]})
    >>> df.select(true_negative_rate(Counts.from_rows("pred", y_true="y"))).item()
    0.5
    """
    return safe_div(c.tn, c.negatives)


@_named
def positive_predictive_value(c: Counts) -> pl.Expr:
    """Positive predictive value (precision): share of predicted positives that are positive.

    Formula: TP / (TP + FP). Undefined when nothing is predicted positive.
    Range [0, 1], higher is better.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 0, 0], "pred": [1, 1, 0, 1, 0]})
    >>> round(df.select(positive_predictive_value(Counts.from_rows("pred", y_true="y"))).item(), 4)
    0.6667
    """
    return safe_div(c.tp, c.predicted_positives)


@_named
def negative_predictive_value(c: Counts) -> pl.Expr:
    """Negative predictive value: share of predicted negatives that are negative.

    Formula: TN / (TN + FN). Undefined when nothing is predicted negative.
    Range [0, 1], higher is better.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 0, 0], "pred": [1, 1, 0, 1, 0]})
    >>> df.select(negative_predictive_value(Counts.from_rows("pred", y_true="y"))).item()
    0.5
    """
    return safe_div(c.tn, c.predicted_negatives)


@_named
def false_discovery_rate(c: Counts) -> pl.Expr:
    """False discovery rate: share of predicted positives that are negative.

    Formula: FP / (TP + FP). Undefined when nothing is predicted positive.
    Range [0, 1], lower is better.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 0, 0], "pred": [1, 1, 0, 1, 0]})
    >>> round(df.select(false_discovery_rate(Counts.from_rows("pred", y_true="y"))).item(), 4)
    0.3333
    """
    return safe_div(c.fp, c.predicted_positives)


@_named
def false_omission_rate(c: Counts) -> pl.Expr:
    """False omission rate: share of predicted negatives that are positive.

    Formula: FN / (TN + FN). Undefined when nothing is predicted negative.
    Range [0, 1], lower is better.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 0, 0], "pred": [1, 1, 0, 1, 0]})
    >>> df.select(false_omission_rate(Counts.from_rows("pred", y_true="y"))).item()
    0.5
    """
    return safe_div(c.fn, c.predicted_negatives)


@_named
def f1_score(c: Counts) -> pl.Expr:
    """F1 score: harmonic mean of precision and recall.

    Formula: 2·TP / (2·TP + FP + FN). Undefined when TP + FP + FN = 0 (only true negatives).
    Range [0, 1], higher is better. (It is 0, not undefined, when TP = 0 but FP + FN > 0.)

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 0, 0], "pred": [1, 1, 0, 1, 0]})
    >>> round(df.select(f1_score(Counts.from_rows("pred", y_true="y"))).item(), 4)
    0.6667
    """
    # near the top of Float64 (weighted sums), 2·TP + FP + FN overflows: the same quotient
    # halved, TP / (TP + FP/2 + FN/2) (halving is exact there; below, it could underflow)
    huge = (c.tp + c.fp + c.fn) > _HALF_MAX
    return (
        pl.when(huge)
        .then(safe_div(c.tp, c.tp + c.fp / 2 + c.fn / 2))
        .otherwise(safe_div(2 * c.tp, 2 * c.tp + c.fp + c.fn))
    )


@_named
def selection_rate(c: Counts) -> pl.Expr:
    """Selection rate: share predicted positive.

    Formula: (TP + FP) / (TP + FP + TN + FN). Undefined when the group is empty.
    Range [0, 1]; neither direction is better.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 0, 0], "pred": [1, 1, 0, 1, 0]})
    >>> df.select(selection_rate(Counts.from_rows("pred", y_true="y"))).item()
    0.6
    """
    return safe_div(c.predicted_positives, c.n)


@_named
def base_rate(c: Counts) -> pl.Expr:
    """Base rate (prevalence): share of actual positives.

    Formula: (TP + FN) / (TP + FP + TN + FN). Undefined when the group is empty.
    Range [0, 1]; neither direction is better.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 0, 0], "pred": [1, 1, 0, 1, 0]})
    >>> df.select(base_rate(Counts.from_rows("pred", y_true="y"))).item()
    0.6
    """
    return safe_div(c.positives, c.n)


@_named
def balanced_accuracy(c: Counts) -> pl.Expr:
    """Balanced accuracy: mean of the true positive and true negative rates.

    Formula: (TP / (TP + FN) + TN / (TN + FP)) / 2. Undefined when either class is absent
    (scikit-learn then averages the one class present; we return null).
    Range [0, 1], higher is better.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 0, 0], "pred": [1, 1, 0, 1, 0]})
    >>> round(df.select(balanced_accuracy(Counts.from_rows("pred", y_true="y"))).item(), 4)
    0.5833
    """
    return (true_positive_rate(c) + true_negative_rate(c)) / 2


@_named
def balanced_error_rate(c: Counts) -> pl.Expr:
    """Balanced error rate: mean of the false negative and false positive rates.

    Formula: (FN / (TP + FN) + FP / (FP + TN)) / 2. Undefined when either class is absent.
    Range [0, 1], lower is better. Equals the importance-weighted error rate with weights that
    give both classes equal total weight (D. Hsu, *Balanced error rate*: importance weights).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 0, 0], "pred": [1, 1, 0, 1, 0]})
    >>> round(df.select(balanced_error_rate(Counts.from_rows("pred", y_true="y"))).item(), 4)
    0.4167
    """
    return (false_negative_rate(c) + false_positive_rate(c)) / 2


@_named
def g_mean(c: Counts) -> pl.Expr:
    """G-mean: geometric mean of the true positive and true negative rates.

    Formula: sqrt(TP / (TP + FN) · TN / (TN + FP)). Undefined when either class is absent.
    Range [0, 1], higher is better.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 0, 0], "pred": [1, 1, 0, 1, 0]})
    >>> round(df.select(g_mean(Counts.from_rows("pred", y_true="y"))).item(), 4)
    0.5774
    """
    return (true_positive_rate(c) * true_negative_rate(c)).sqrt()


@_named
def matthews_corrcoef(c: Counts) -> pl.Expr:
    """Matthews correlation coefficient.

    Formula: (TP·TN − FP·FN) / sqrt((TP + FP)(TP + FN)(TN + FP)(TN + FN)). Undefined when any
    of the four margins is 0 (scikit-learn returns 0 there; we return null).
    Range [−1, 1], higher is better. Computed as the equal
    sqrt(TPR·TNR·PPV·NPV) − sqrt(FNR·FPR·FOR·FDR), whose factors are rates: no product of
    (weighted) counts overflows or underflows.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 0, 0], "pred": [1, 1, 0, 1, 0]})
    >>> round(df.select(matthews_corrcoef(Counts.from_rows("pred", y_true="y"))).item(), 4)
    0.1667
    """
    # The same value written with the eight rates (each a quotient in [0, 1]):
    #   MCC = sqrt(TPR·TNR·PPV·NPV) − sqrt(FNR·FPR·FOR·FDR),
    # null exactly when a margin is 0. The products of counts of the textbook form overflow for
    # large weighted sums (inf · 0 is NaN, inf / inf is NaN) and underflow to 0 for tiny ones.
    agree = true_positive_rate(c) * true_negative_rate(c)
    agree = agree * positive_predictive_value(c) * negative_predictive_value(c)
    disagree = false_negative_rate(c) * false_positive_rate(c)
    disagree = disagree * false_omission_rate(c) * false_discovery_rate(c)
    return agree.sqrt() - disagree.sqrt()


# ---------------------------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricSpec:
    """A metric's definition and its documented properties."""

    name: str
    func: Callable[[Counts], pl.Expr]
    formula: str
    undefined_when: str
    value_range: tuple[float, float]
    higher_is_better: bool | None
    support: Callable[[Counts], pl.Expr]
    aliases: tuple[str, ...] = field(default=())
    proportion: bool = False
    """The value is a share of its support (numerator / support, both counts of rows): the
    metrics a two-proportion test applies to."""


def _spec(
    func: Callable[[Counts], pl.Expr],
    formula: str,
    undefined_when: str,
    higher_is_better: bool | None,
    support: Callable[[Counts], pl.Expr],
    aliases: tuple[str, ...] = (),
    value_range: tuple[float, float] = (0.0, 1.0),
) -> MetricSpec:
    return MetricSpec(
        func.__name__,
        func,
        formula,
        undefined_when,
        value_range,
        higher_is_better,
        support,
        aliases,
        proportion=support in (_n, _pos, _neg, _ppos, _pneg),
    )


def _n(c: Counts) -> pl.Expr:
    return c.n


def _pos(c: Counts) -> pl.Expr:
    return c.positives


def _neg(c: Counts) -> pl.Expr:
    return c.negatives


def _ppos(c: Counts) -> pl.Expr:
    return c.predicted_positives


def _pneg(c: Counts) -> pl.Expr:
    return c.predicted_negatives


def _both(c: Counts) -> pl.Expr:
    return pl.min_horizontal(c.positives, c.negatives)


def _f1_support(c: Counts) -> pl.Expr:
    return c.tp + c.fp + c.fn


def _mcc_support(c: Counts) -> pl.Expr:
    return pl.min_horizontal(c.positives, c.negatives, c.predicted_positives, c.predicted_negatives)


METRICS: dict[str, MetricSpec] = {
    s.name: s
    for s in (
        _spec(accuracy, "(TP + TN) / (TP + FP + TN + FN)", "the group is empty", True, _n),
        _spec(error_rate, "(FP + FN) / (TP + FP + TN + FN)", "the group is empty", False, _n),
        _spec(
            balanced_accuracy,
            "(TP / (TP + FN) + TN / (TN + FP)) / 2",
            "either class is absent",
            True,
            _both,
        ),
        _spec(
            balanced_error_rate,
            "(FN / (TP + FN) + FP / (FP + TN)) / 2",
            "either class is absent",
            False,
            _both,
            ("ber",),
        ),
        _spec(
            true_positive_rate,
            "TP / (TP + FN)",
            "there are no actual positives",
            True,
            _pos,
            ("tpr", "recall", "sensitivity"),
        ),
        _spec(
            false_negative_rate,
            "FN / (TP + FN)",
            "there are no actual positives",
            False,
            _pos,
            ("fnr", "miss_rate"),
        ),
        _spec(
            false_positive_rate,
            "FP / (FP + TN)",
            "there are no actual negatives",
            False,
            _neg,
            ("fpr", "fall_out"),
        ),
        _spec(
            true_negative_rate,
            "TN / (FP + TN)",
            "there are no actual negatives",
            True,
            _neg,
            ("tnr", "specificity"),
        ),
        _spec(
            positive_predictive_value,
            "TP / (TP + FP)",
            "nothing is predicted positive",
            True,
            _ppos,
            ("ppv", "precision"),
        ),
        _spec(
            negative_predictive_value,
            "TN / (TN + FN)",
            "nothing is predicted negative",
            True,
            _pneg,
            ("npv",),
        ),
        _spec(
            false_discovery_rate,
            "FP / (TP + FP)",
            "nothing is predicted positive",
            False,
            _ppos,
            ("fdr",),
        ),
        _spec(
            false_omission_rate,
            "FN / (TN + FN)",
            "nothing is predicted negative",
            False,
            _pneg,
            ("for",),
        ),
        _spec(
            f1_score,
            "2·TP / (2·TP + FP + FN)",
            "TP + FP + FN = 0 (only true negatives)",
            True,
            _f1_support,
            ("f1",),
        ),
        _spec(
            selection_rate,
            "(TP + FP) / (TP + FP + TN + FN)",
            "the group is empty",
            None,
            _n,
            ("positive_rate",),
        ),
        _spec(
            base_rate,
            "(TP + FN) / (TP + FP + TN + FN)",
            "the group is empty",
            None,
            _n,
            ("prevalence",),
        ),
        _spec(
            g_mean,
            "sqrt(TP / (TP + FN) · TN / (TN + FP))",
            "either class is absent",
            True,
            _both,
            ("gmean",),
        ),
        _spec(
            matthews_corrcoef,
            "(TP·TN − FP·FN) / sqrt((TP + FP)(TP + FN)(TN + FP)(TN + FN))",
            "any of TP + FP, TP + FN, TN + FP, TN + FN is 0",
            True,
            _mcc_support,
            ("mcc",),
            (-1.0, 1.0),
        ),
    )
}
"""Every confusion metric by its full name."""

DEFAULT_METRICS: tuple[str, ...] = tuple(METRICS)
"""The metrics computed when none are named: all of them."""

_ALIASES: dict[str, str] = {a: s.name for s in METRICS.values() for a in s.aliases}


def resolve_metric(name: str) -> MetricSpec:
    """The :class:`MetricSpec` for a full metric name or an alias.

    Raises :class:`InvalidOptionError` for an unknown name, suggesting the closest ones.

    Examples
    --------
    >>> resolve_metric("recall").name
    'true_positive_rate'
    """
    if name in METRICS:
        return METRICS[name]
    if name in _ALIASES:
        return METRICS[_ALIASES[name]]
    close = difflib.get_close_matches(name, [*METRICS, *_ALIASES], n=3)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else "."
    raise InvalidOptionError(f"unknown metric {name!r}{hint} Known: {', '.join(METRICS)}")


def metric(name: str, counts: Counts) -> pl.Expr:
    """Any registered metric by name (or alias), as an expression over ``counts``.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"tp": [3], "fp": [1], "tn": [4], "fn": [2]})
    >>> t.select(metric("precision", Counts.from_columns())).item()
    0.75
    """
    return resolve_metric(name).func(counts).alias(resolve_metric(name).name)


def _metric_names(metrics: str | Sequence[str] | None) -> list[str]:
    out = [resolve_metric(m).name for m in chosen_names(metrics, DEFAULT_METRICS)]
    return list(dict.fromkeys(out))


def _use_weighted(columns: Sequence[str], weighted: bool | None) -> bool:
    has = is_weighted(columns)
    if weighted and not has:
        raise InvalidOptionError(
            "weighted=True but the count table has no weighted columns "
            f"({', '.join(WEIGHTED_COUNT_COLUMNS[:4])}); pass weight= when counting"
        )
    return has if weighted is None else weighted


def key_columns(columns: Sequence[str]) -> list[str]:
    """The non-count columns of a count table (group keys and partitions)."""
    counted = set(count_columns(columns))
    return [c for c in columns if c not in counted]


@functools.lru_cache(maxsize=1024)
def column_metric(name: str, weighted: bool = False, prefix: str = "") -> pl.Expr:
    """Metric ``name`` over the count columns ``{prefix}tp`` … (``…_w`` when weighted).

    The same expression as ``METRICS[name].func(Counts.from_columns(...))``, built once per
    process: small-table code (the report's tables, the bootstrap's replicates) evaluates the
    same metrics on many small tables, where building the expression costs more than running it.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"tp": [3], "fp": [1], "tn": [4], "fn": [2]})
    >>> t.select(column_metric("true_positive_rate")).item()
    0.6
    """
    return METRICS[name].func(Counts.from_columns(weighted=weighted, prefix=prefix))


@functools.lru_cache(maxsize=1024)
def _column_support(name: str) -> pl.Expr:
    return METRICS[name].support(Counts.from_columns()).cast(pl.Int64)


def metric_expr(name: str, counts: Counts) -> pl.Expr:
    """Metric ``name`` of ``counts`` (:func:`column_metric`'s cached expression for a count
    table's columns)."""
    if counts.columns is not None:
        return column_metric(name, *counts.columns)
    return METRICS[name].func(counts)


def metric_columns(names: Sequence[str], counts: Counts, *, weighted: bool) -> list[pl.Expr]:
    """The value column ``m`` and the support column ``m_support`` of each metric ``m``.

    Values come from ``counts`` (weighted or not); the support is always the integer count in
    the metric's denominator (columns ``tp, fp, tn, fn`` of the table).
    """
    if weighted or counts.columns == (False, ""):
        support = [_column_support(m).alias(f"{m}_support") for m in names]
    else:
        support = [METRICS[m].support(counts).cast(pl.Int64).alias(f"{m}_support") for m in names]
    return [*[metric_expr(m, counts).alias(m) for m in names], *support]


@accepts_tables
def metrics_from_counts(
    counts: FrameT,
    *,
    metrics: str | Sequence[str] | None = None,
    weighted: bool | None = None,
    by: str | Sequence[str] | None = None,
    wide: bool = False,
) -> FrameT:
    """Evaluate metrics on a count table (or a table of replicates or thresholds).

    Parameters
    ----------
    counts
        A count table: columns ``tp, fp, tn, fn`` (and ``tp_w …`` when weighted) plus keys.
    metrics
        Metric names or aliases (default: all of :data:`METRICS`).
    weighted
        Use the weighted sums (default: when the table has them).
    by
        The group key columns (default: every column that is neither a count nor a partition).
    wide
        One row per group and one column per metric (``docs/results.md``): the value in column
        ``m`` and its support in ``m_support``.

    Returns
    -------
    DataFrame or LazyFrame
        The group-values kind of ``docs/results.md``: keys, partitions, ``metric``, ``value``,
        ``support`` (the metric's denominator count; 0 where the value is undefined for lack of
        rows), ``n``, ``n_null`` (and ``n_w`` when weighted) where the table has them.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"g": ["a", "b"], "tp": [3, 0], "fp": [1, 0], "tn": [4, 5], "fn": [2, 0]})
    >>> metrics_from_counts(t, metrics=["tpr", "fpr"])
    shape: (4, 4)
    ┌─────┬─────────────────────┬───────┬─────────┐
    │ g   ┆ metric              ┆ value ┆ support │
    │ --- ┆ ---                 ┆ ---   ┆ ---     │
    │ str ┆ str                 ┆ f64   ┆ i64     │
    ╞═════╪═════════════════════╪═══════╪═════════╡
    │ a   ┆ true_positive_rate  ┆ 0.6   ┆ 5       │
    │ a   ┆ false_positive_rate ┆ 0.2   ┆ 5       │
    │ b   ┆ true_positive_rate  ┆ null  ┆ 0       │
    │ b   ┆ false_positive_rate ┆ 0.0   ┆ 5       │
    └─────┴─────────────────────┴───────┴─────────┘
    """
    from polars_fairmetrics.results import Layout, finish, from_wide

    schema = schema_of(counts)
    require_count_table(schema, as_list(by), rows_hint=False)
    counts = check_count_values(counts)
    columns: list[str] = list(schema.names())
    names: list[str] = _metric_names(metrics)
    use_w: bool = _use_weighted(columns, weighted)
    c = Counts.from_columns(weighted=use_w)
    layout = Layout.of(columns, by, count_columns(columns))
    keys, parts = layout.keys, layout.partitions
    sizes = [s for s in ("n", "n_null", *(["n_w"] if use_w else [])) if s in columns]
    frame = counts.select(*parts, *keys, *sizes, *metric_columns(names, c, weighted=use_w))
    if wide:
        return finish(frame, keys=keys, partitions=parts)
    return finish(
        from_wide(frame, quantities=names, fields=("support",)),
        keys=keys,
        partitions=parts,
        order=names,
    )


def to_long(
    frame: FrameT, *, index: Sequence[str], fields: dict[str, dict[str, pl.Expr]]
) -> FrameT:
    """Tidy long frame from per-metric expressions: one row per (input row, metric).

    ``fields`` maps a metric name to its output fields (e.g. ``value``, ``support``). The
    expressions are evaluated once, side by side (wide), then unpivoted in one step; rows keep
    the input order, metrics the order of ``fields``.
    """
    from polars_fairmetrics.results import order_rank

    names = list(fields)
    wide = frame.with_row_index("_pfm_row").select(
        "_pfm_row",
        *index,
        *[pl.struct([e.alias(k) for k, e in fields[m].items()]).alias(m) for m in names],
    )
    return (
        wide.unpivot(
            on=names, index=["_pfm_row", *index], variable_name="metric", value_name="_pfm_fields"
        )
        .unnest("_pfm_fields")
        .sort("_pfm_row", order_rank("metric", names))
        .drop("_pfm_row")
    )


@accepts_tables
def group_metrics(
    data: FrameT,
    *,
    y_true: str,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    by: str | Sequence[str] | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    metrics: str | Sequence[str] | None = None,
    separately: bool = False,
    wide: bool = False,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
) -> FrameT:
    """Per-group confusion metrics from rows, in one scan.

    :func:`~polars_fairmetrics.confusion_counts` followed by :func:`metrics_from_counts`;
    the options are theirs. Weighted metrics are used when ``weight`` is given.

    Returns
    -------
    DataFrame or LazyFrame
        The group-values kind of ``docs/results.md``: group keys, ``metric``, ``value``,
        ``support``, ``n``, ``n_null`` (and ``n_w`` when weighted); ``wide=True``: one row per
        group, one column per metric.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [1, 1, 0, 0]})
    >>> group_metrics(df, y_true="y", y_pred="p", by="g", metrics=["selection_rate"])
    shape: (2, 6)
    ┌─────┬────────────────┬───────┬─────────┬─────┬────────┐
    │ g   ┆ metric         ┆ value ┆ support ┆ n   ┆ n_null │
    │ --- ┆ ---            ┆ ---   ┆ ---     ┆ --- ┆ ---    │
    │ str ┆ str            ┆ f64   ┆ i64     ┆ i64 ┆ i64    │
    ╞═════╪════════════════╪═══════╪═════════╪═════╪════════╡
    │ a   ┆ selection_rate ┆ 1.0   ┆ 2       ┆ 2   ┆ 0      │
    │ b   ┆ selection_rate ┆ 0.0   ┆ 2       ┆ 2   ┆ 0      │
    └─────┴────────────────┴───────┴─────────┴─────┴────────┘
    """
    counts = confusion_counts(
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
    return metrics_from_counts(counts, metrics=metrics, by=by, wide=wide)
