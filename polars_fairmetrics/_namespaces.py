"""The ``.fair`` namespaces on ``pl.Expr``, ``pl.LazyFrame`` and ``pl.DataFrame``.

Thin, explicit delegates to the typed functions (no ``__getattr__`` forwarding), so that
autocompletion and the API reference show every method. Importing ``polars_fairmetrics``
registers them. Type checkers do not see custom namespaces: the functions are the primary API.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Generic

import polars as pl

from polars_fairmetrics import counts as _counts
from polars_fairmetrics import curves as _curves
from polars_fairmetrics import disparity as _disparity
from polars_fairmetrics import metrics as _metrics
from polars_fairmetrics._typing import ColumnNames, FrameT, IntoExpr, Label
from polars_fairmetrics.curves import AuprMode, CurveOptions
from polars_fairmetrics.disparity import CountOptions, Reference

if TYPE_CHECKING:
    from typing_extensions import Unpack


@pl.api.register_expr_namespace("fair")
class FairExprNamespace:
    """Row aggregations: ``pl.col("y_pred").fair.<metric>(y_true=..., weight=...)``.

    Each method is the metric of the same name in :mod:`polars_fairmetrics.metrics` applied to
    ``Counts.from_rows(<this expression>, y_true=..., weight=..., pos_label=..., neg_label=...)``.
    Use inside ``select`` or ``group_by().agg()``.
    """

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def counts(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
               pos_label: Label | None = None, neg_label: Label | None = None) -> _metrics.Counts:
        """The :class:`~polars_fairmetrics.metrics.Counts` of this prediction expression."""
        return _metrics.Counts.from_rows(self._expr, y_true=y_true, weight=weight,
                                         pos_label=pos_label, neg_label=neg_label)

    def metric(self, name: str, *, y_true: IntoExpr, weight: IntoExpr | None = None,
               pos_label: Label | None = None, neg_label: Label | None = None) -> pl.Expr:
        """Any metric by name or alias (see :data:`~polars_fairmetrics.metrics.METRICS`)."""
        return _metrics.metric(name, self.counts(y_true=y_true, weight=weight,
                                                 pos_label=pos_label, neg_label=neg_label))

    def accuracy(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                 pos_label: Label | None = None, neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.accuracy` over rows."""
        return _metrics.accuracy(self.counts(y_true=y_true, weight=weight, pos_label=pos_label,
                                             neg_label=neg_label))

    def error_rate(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                   pos_label: Label | None = None, neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.error_rate` over rows."""
        return _metrics.error_rate(self.counts(y_true=y_true, weight=weight, pos_label=pos_label,
                                               neg_label=neg_label))

    def balanced_accuracy(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                          pos_label: Label | None = None,
                          neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.balanced_accuracy` over rows."""
        return _metrics.balanced_accuracy(self.counts(y_true=y_true, weight=weight,
                                                      pos_label=pos_label, neg_label=neg_label))

    def balanced_error_rate(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                            pos_label: Label | None = None,
                            neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.balanced_error_rate` over rows."""
        return _metrics.balanced_error_rate(self.counts(y_true=y_true, weight=weight,
                                                        pos_label=pos_label, neg_label=neg_label))

    def true_positive_rate(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                           pos_label: Label | None = None,
                           neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.true_positive_rate` over rows."""
        return _metrics.true_positive_rate(self.counts(y_true=y_true, weight=weight,
                                                       pos_label=pos_label, neg_label=neg_label))

    def false_negative_rate(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                            pos_label: Label | None = None,
                            neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.false_negative_rate` over rows."""
        return _metrics.false_negative_rate(self.counts(y_true=y_true, weight=weight,
                                                        pos_label=pos_label, neg_label=neg_label))

    def false_positive_rate(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                            pos_label: Label | None = None,
                            neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.false_positive_rate` over rows."""
        return _metrics.false_positive_rate(self.counts(y_true=y_true, weight=weight,
                                                        pos_label=pos_label, neg_label=neg_label))

    def true_negative_rate(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                           pos_label: Label | None = None,
                           neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.true_negative_rate` over rows."""
        return _metrics.true_negative_rate(self.counts(y_true=y_true, weight=weight,
                                                       pos_label=pos_label, neg_label=neg_label))

    def positive_predictive_value(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                                  pos_label: Label | None = None,
                                  neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.positive_predictive_value` over rows."""
        return _metrics.positive_predictive_value(self.counts(y_true=y_true, weight=weight,
                                                              pos_label=pos_label,
                                                              neg_label=neg_label))

    def negative_predictive_value(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                                  pos_label: Label | None = None,
                                  neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.negative_predictive_value` over rows."""
        return _metrics.negative_predictive_value(self.counts(y_true=y_true, weight=weight,
                                                              pos_label=pos_label,
                                                              neg_label=neg_label))

    def false_discovery_rate(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                             pos_label: Label | None = None,
                             neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.false_discovery_rate` over rows."""
        return _metrics.false_discovery_rate(self.counts(y_true=y_true, weight=weight,
                                                         pos_label=pos_label,
                                                         neg_label=neg_label))

    def false_omission_rate(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                            pos_label: Label | None = None,
                            neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.false_omission_rate` over rows."""
        return _metrics.false_omission_rate(self.counts(y_true=y_true, weight=weight,
                                                        pos_label=pos_label, neg_label=neg_label))

    def f1_score(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                 pos_label: Label | None = None, neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.f1_score` over rows."""
        return _metrics.f1_score(self.counts(y_true=y_true, weight=weight, pos_label=pos_label,
                                             neg_label=neg_label))

    def selection_rate(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                       pos_label: Label | None = None, neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.selection_rate` over rows."""
        return _metrics.selection_rate(self.counts(y_true=y_true, weight=weight,
                                                   pos_label=pos_label, neg_label=neg_label))

    def base_rate(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                  pos_label: Label | None = None, neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.base_rate` over rows."""
        return _metrics.base_rate(self.counts(y_true=y_true, weight=weight, pos_label=pos_label,
                                              neg_label=neg_label))

    def g_mean(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
               pos_label: Label | None = None, neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.g_mean` over rows."""
        return _metrics.g_mean(self.counts(y_true=y_true, weight=weight, pos_label=pos_label,
                                           neg_label=neg_label))

    def matthews_corrcoef(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                          pos_label: Label | None = None,
                          neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.metrics.matthews_corrcoef` over rows."""
        return _metrics.matthews_corrcoef(self.counts(y_true=y_true, weight=weight,
                                                      pos_label=pos_label, neg_label=neg_label))

    def roc_auc(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                pos_label: Label | None = None, neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.roc_auc` of this score expression."""
        return _curves.roc_auc(self._expr, y_true=y_true, weight=weight, pos_label=pos_label,
                               neg_label=neg_label)

    def average_precision(self, *, y_true: IntoExpr, weight: IntoExpr | None = None,
                          pos_label: Label | None = None,
                          neg_label: Label | None = None) -> pl.Expr:
        """:func:`polars_fairmetrics.average_precision` of this score expression."""
        return _curves.average_precision(self._expr, y_true=y_true, weight=weight,
                                         pos_label=pos_label, neg_label=neg_label)


class _FrameNamespace(Generic[FrameT]):
    """Shared delegates of ``DataFrame.fair`` and ``LazyFrame.fair`` (same kind in and out)."""

    def __init__(self, frame: FrameT) -> None:
        self._frame: FrameT = frame

    def confusion_counts(
        self, *, y_true: str, y_pred: str | None = None, y_score: str | None = None,
        threshold: float | Sequence[float] | None = None, by: ColumnNames | None = None,
        weight: str | None = None, pos_label: Label | None = None,
        neg_label: Label | None = None, separately: bool = False,
        score_bounds: tuple[float, float] | None = (0.0, 1.0),
    ) -> FrameT:
        """:func:`polars_fairmetrics.confusion_counts` of this frame."""
        return _counts.confusion_counts(
            self._frame, y_true=y_true, y_pred=y_pred, y_score=y_score, threshold=threshold,
            by=by, weight=weight, pos_label=pos_label, neg_label=neg_label,
            separately=separately, score_bounds=score_bounds,
        )

    def group_metrics(
        self, *, y_true: str, y_pred: str | None = None, y_score: str | None = None,
        threshold: float | Sequence[float] | None = None, by: ColumnNames | None = None,
        weight: str | None = None, pos_label: Label | None = None,
        neg_label: Label | None = None, metrics: str | Sequence[str] | None = None,
        separately: bool = False, wide: bool = False,
        score_bounds: tuple[float, float] | None = (0.0, 1.0),
    ) -> FrameT:
        """:func:`polars_fairmetrics.group_metrics` of this frame."""
        return _metrics.group_metrics(
            self._frame, y_true=y_true, y_pred=y_pred, y_score=y_score, threshold=threshold,
            by=by, weight=weight, pos_label=pos_label, neg_label=neg_label, metrics=metrics,
            separately=separately, wide=wide, score_bounds=score_bounds,
        )

    def metrics_from_counts(self, *, metrics: str | Sequence[str] | None = None,
                            weighted: bool | None = None, long: bool = False) -> FrameT:
        """:func:`polars_fairmetrics.metrics_from_counts` of this count table."""
        return _metrics.metrics_from_counts(self._frame, metrics=metrics, weighted=weighted,
                                            long=long)

    def disparities(self, *, by: ColumnNames | None = None,
                    metrics: str | Sequence[str] | None = None, reference: Reference = "overall",
                    weighted: bool | None = None,
                    **count_options: Unpack[CountOptions]) -> FrameT:
        """:func:`polars_fairmetrics.disparities` of this frame (rows or count table)."""
        return _disparity.disparities(self._frame, by=by, metrics=metrics, reference=reference,
                                      weighted=weighted, **count_options)

    def between_groups(self, *, by: ColumnNames | None = None,
                       metrics: str | Sequence[str] | None = None, weighted: bool | None = None,
                       **count_options: Unpack[CountOptions]) -> FrameT:
        """:func:`polars_fairmetrics.between_groups` of this frame (rows or count table)."""
        return _disparity.between_groups(self._frame, by=by, metrics=metrics, weighted=weighted,
                                         **count_options)

    def fairness_criteria(self, *, by: ColumnNames | None = None,
                          reference: Reference = "overall", weighted: bool | None = None,
                          criteria: Sequence[str] | None = None,
                          **count_options: Unpack[CountOptions]) -> FrameT:
        """:func:`polars_fairmetrics.fairness_criteria` of this frame (rows or count table)."""
        return _disparity.fairness_criteria(self._frame, by=by, reference=reference,
                                            weighted=weighted, criteria=criteria,
                                            **count_options)

    def statistical_parity_difference(self, *, by: ColumnNames | None = None,
                                      reference: Reference = "overall",
                                      weighted: bool | None = None,
                                      **count_options: Unpack[CountOptions]) -> FrameT:
        """:func:`polars_fairmetrics.statistical_parity_difference` of this frame."""
        return _disparity.statistical_parity_difference(
            self._frame, by=by, reference=reference, weighted=weighted, **count_options)

    def disparate_impact(self, *, by: ColumnNames | None = None, reference: Reference = "overall",
                         weighted: bool | None = None,
                         **count_options: Unpack[CountOptions]) -> FrameT:
        """:func:`polars_fairmetrics.disparate_impact` of this frame."""
        return _disparity.disparate_impact(self._frame, by=by, reference=reference,
                                           weighted=weighted, **count_options)

    def equal_opportunity_difference(self, *, by: ColumnNames | None = None,
                                     reference: Reference = "overall",
                                     weighted: bool | None = None,
                                     **count_options: Unpack[CountOptions]) -> FrameT:
        """:func:`polars_fairmetrics.equal_opportunity_difference` of this frame."""
        return _disparity.equal_opportunity_difference(
            self._frame, by=by, reference=reference, weighted=weighted, **count_options)

    def predictive_equality_difference(self, *, by: ColumnNames | None = None,
                                       reference: Reference = "overall",
                                       weighted: bool | None = None,
                                       **count_options: Unpack[CountOptions]) -> FrameT:
        """:func:`polars_fairmetrics.predictive_equality_difference` of this frame."""
        return _disparity.predictive_equality_difference(
            self._frame, by=by, reference=reference, weighted=weighted, **count_options)

    def equalized_odds_difference(self, *, by: ColumnNames | None = None,
                                  reference: Reference = "overall", weighted: bool | None = None,
                                  **count_options: Unpack[CountOptions]) -> FrameT:
        """:func:`polars_fairmetrics.equalized_odds_difference` of this frame."""
        return _disparity.equalized_odds_difference(
            self._frame, by=by, reference=reference, weighted=weighted, **count_options)

    def accuracy_equality_difference(self, *, by: ColumnNames | None = None,
                                     reference: Reference = "overall",
                                     weighted: bool | None = None,
                                     **count_options: Unpack[CountOptions]) -> FrameT:
        """:func:`polars_fairmetrics.accuracy_equality_difference` of this frame."""
        return _disparity.accuracy_equality_difference(
            self._frame, by=by, reference=reference, weighted=weighted, **count_options)

    def positive_predictive_parity_difference(self, *, by: ColumnNames | None = None,
                                              reference: Reference = "overall",
                                              weighted: bool | None = None,
                                              **count_options: Unpack[CountOptions]) -> FrameT:
        """:func:`polars_fairmetrics.positive_predictive_parity_difference` of this frame."""
        return _disparity.positive_predictive_parity_difference(
            self._frame, by=by, reference=reference, weighted=weighted, **count_options)

    def negative_predictive_parity_difference(self, *, by: ColumnNames | None = None,
                                              reference: Reference = "overall",
                                              weighted: bool | None = None,
                                              **count_options: Unpack[CountOptions]) -> FrameT:
        """:func:`polars_fairmetrics.negative_predictive_parity_difference` of this frame."""
        return _disparity.negative_predictive_parity_difference(
            self._frame, by=by, reference=reference, weighted=weighted, **count_options)

    def curve_counts(self, **curve_options: Unpack[CurveOptions]) -> FrameT:
        """:func:`polars_fairmetrics.curve_counts` of this frame."""
        return _curves.curve_counts(self._frame, **curve_options)

    def roc_curve(self, *, weighted: bool | None = None, anchor: bool = True,
                  **curve_options: Unpack[CurveOptions]) -> FrameT:
        """:func:`polars_fairmetrics.roc_curve` of this frame (rows or curve table)."""
        return _curves.roc_curve(self._frame, weighted=weighted, anchor=anchor, **curve_options)

    def pr_curve(self, *, weighted: bool | None = None, anchor: bool = True,
                 deploy_positive_rate: float | None = None,
                 deploy_neg_pos_ratio: float | None = None,
                 **curve_options: Unpack[CurveOptions]) -> FrameT:
        """:func:`polars_fairmetrics.pr_curve` of this frame (rows or curve table)."""
        return _curves.pr_curve(self._frame, weighted=weighted, anchor=anchor,
                                deploy_positive_rate=deploy_positive_rate,
                                deploy_neg_pos_ratio=deploy_neg_pos_ratio, **curve_options)

    def curve_summaries(self, *, summaries: str | Sequence[str] | None = None,
                        aupr_mode: AuprMode = "trapezoid", weighted: bool | None = None,
                        overall: bool = False, long: bool = False,
                        deploy_positive_rate: float | None = None,
                        deploy_neg_pos_ratio: float | None = None,
                        notebook_points: int = _curves.NOTEBOOK_POINTS,
                        **curve_options: Unpack[CurveOptions]) -> FrameT:
        """:func:`polars_fairmetrics.curve_summaries` of this frame (rows or curve table)."""
        return _curves.curve_summaries(
            self._frame, summaries=summaries, aupr_mode=aupr_mode, weighted=weighted,
            overall=overall, long=long, deploy_positive_rate=deploy_positive_rate,
            deploy_neg_pos_ratio=deploy_neg_pos_ratio, notebook_points=notebook_points,
            **curve_options)

    def summary_disparities(self, *, reference: Reference = "overall",
                            summaries: str | Sequence[str] | None = None,
                            aupr_mode: AuprMode = "trapezoid", weighted: bool | None = None,
                            **curve_options: Unpack[CurveOptions]) -> FrameT:
        """:func:`polars_fairmetrics.summary_disparities` of this frame."""
        return _curves.summary_disparities(self._frame, reference=reference,
                                           summaries=summaries, aupr_mode=aupr_mode,
                                           weighted=weighted, **curve_options)


@pl.api.register_lazyframe_namespace("fair")
class FairLazyFrameNamespace(_FrameNamespace[pl.LazyFrame]):
    """``lf.fair.*``: every method returns a LazyFrame and scans nothing."""


@pl.api.register_dataframe_namespace("fair")
class FairDataFrameNamespace(_FrameNamespace[pl.DataFrame]):
    """``df.fair.*``: every method returns a DataFrame."""
