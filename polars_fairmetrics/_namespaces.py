"""The ``.fair`` namespaces on ``pl.Expr``, ``pl.LazyFrame`` and ``pl.DataFrame``.

Thin, explicit delegates to the typed functions (no ``__getattr__`` forwarding), so that
autocompletion and the API reference show every method. Importing ``polars_fairmetrics``
registers them. Type checkers do not see custom namespaces: use :func:`fair` (``pfm.fair(lf)``)
for a typed handle, or the functions, which are the primary API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

import polars as pl

from polars_fairmetrics import metrics as _metrics
from polars_fairmetrics._frame_namespace import FrameNamespace
from polars_fairmetrics._lazy import LazyModule
from polars_fairmetrics._typing import IntoExpr, Label

if TYPE_CHECKING:
    from polars_fairmetrics import curves as _curves
else:  # imports NumPy: loaded when roc_auc / average_precision is first called
    _curves = LazyModule("polars_fairmetrics.curves")


@pl.api.register_expr_namespace("fair")
class FairExprNamespace:
    """Row aggregations: ``pl.col("y_pred").fair.<metric>(y_true=..., weight=...)``.

    Each method is the metric of the same name in :mod:`polars_fairmetrics.metrics` applied to
    ``Counts.from_rows(<this expression>, y_true=..., weight=..., pos_label=..., neg_label=...)``.
    Use inside ``select`` or ``group_by().agg()``.
    """

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def counts(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> _metrics.Counts:
        """The :class:`~polars_fairmetrics.metrics.Counts` of this prediction expression."""
        return _metrics.Counts.from_rows(
            self._expr, y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label
        )

    def metric(
        self,
        name: str,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """Any metric by name or alias (see :data:`~polars_fairmetrics.metrics.METRICS`)."""
        return _metrics.metric(
            name,
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label),
        )

    def accuracy(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.accuracy` over rows."""
        return _metrics.accuracy(
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label)
        )

    def error_rate(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.error_rate` over rows."""
        return _metrics.error_rate(
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label)
        )

    def balanced_accuracy(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.balanced_accuracy` over rows."""
        return _metrics.balanced_accuracy(
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label)
        )

    def balanced_error_rate(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.balanced_error_rate` over rows."""
        return _metrics.balanced_error_rate(
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label)
        )

    def true_positive_rate(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.true_positive_rate` over rows."""
        return _metrics.true_positive_rate(
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label)
        )

    def false_negative_rate(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.false_negative_rate` over rows."""
        return _metrics.false_negative_rate(
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label)
        )

    def false_positive_rate(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.false_positive_rate` over rows."""
        return _metrics.false_positive_rate(
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label)
        )

    def true_negative_rate(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.true_negative_rate` over rows."""
        return _metrics.true_negative_rate(
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label)
        )

    def positive_predictive_value(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.positive_predictive_value` over rows."""
        return _metrics.positive_predictive_value(
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label)
        )

    def negative_predictive_value(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.negative_predictive_value` over rows."""
        return _metrics.negative_predictive_value(
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label)
        )

    def false_discovery_rate(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.false_discovery_rate` over rows."""
        return _metrics.false_discovery_rate(
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label)
        )

    def false_omission_rate(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.false_omission_rate` over rows."""
        return _metrics.false_omission_rate(
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label)
        )

    def f1_score(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.f1_score` over rows."""
        return _metrics.f1_score(
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label)
        )

    def selection_rate(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.selection_rate` over rows."""
        return _metrics.selection_rate(
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label)
        )

    def base_rate(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.base_rate` over rows."""
        return _metrics.base_rate(
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label)
        )

    def g_mean(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.g_mean` over rows."""
        return _metrics.g_mean(
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label)
        )

    def matthews_corrcoef(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.matthews_corrcoef` over rows."""
        return _metrics.matthews_corrcoef(
            self.counts(y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label)
        )

    def roc_auc(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.roc_auc` of this score expression."""
        return _curves.roc_auc(
            self._expr, y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label
        )

    def average_precision(
        self,
        *,
        y_true: IntoExpr,
        weight: IntoExpr | None = None,
        pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> pl.Expr:
        """:func:`polars_fairmetrics.average_precision` of this score expression."""
        return _curves.average_precision(
            self._expr, y_true=y_true, weight=weight, pos_label=pos_label, neg_label=neg_label
        )


@pl.api.register_lazyframe_namespace("fair")
class FairLazyFrameNamespace(FrameNamespace[pl.LazyFrame]):
    """``lf.fair.*``: every method returns a LazyFrame and scans nothing."""


@pl.api.register_dataframe_namespace("fair")
class FairDataFrameNamespace(FrameNamespace[pl.DataFrame]):
    """``df.fair.*``: every method returns a DataFrame."""


@overload
def fair(obj: pl.LazyFrame) -> FairLazyFrameNamespace: ...
@overload
def fair(obj: pl.DataFrame) -> FairDataFrameNamespace: ...
@overload
def fair(obj: pl.Expr) -> FairExprNamespace: ...
def fair(
    obj: pl.LazyFrame | pl.DataFrame | pl.Expr,
) -> FairLazyFrameNamespace | FairDataFrameNamespace | FairExprNamespace:
    """The ``.fair`` namespace of a frame or expression, typed for mypy and IDEs.

    ``pfm.fair(lf).disparities(...)`` is ``lf.fair.disparities(...)``; type checkers cannot see
    namespaces registered at run time (``"LazyFrame" has no attribute "fair"``), but they see
    this function's return type, so every method and argument is checked.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "b"], "y": [1, 0], "p": [1, 1]})
    >>> pfm.fair(df).group_metrics(y_true="y", y_pred="p", by="g", metrics="selection_rate")[
    ...     "value"].to_list()
    [1.0, 1.0]
    >>> df.select(pfm.fair(pl.col("p")).selection_rate(y_true="y")).item()
    1.0
    """
    if isinstance(obj, pl.LazyFrame):
        return FairLazyFrameNamespace(obj)
    if isinstance(obj, pl.DataFrame):
        return FairDataFrameNamespace(obj)
    if isinstance(obj, pl.Expr):
        return FairExprNamespace(obj)
    raise TypeError(
        f"fair() takes a polars LazyFrame, DataFrame or Expr, got {type(obj).__qualname__}"
    )
