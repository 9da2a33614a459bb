"""The ``.fair`` namespaces on ``pl.Expr``, ``pl.LazyFrame`` and ``pl.DataFrame``.

Thin, explicit delegates to the typed functions (no ``__getattr__`` forwarding), so that
autocompletion and the API reference show every method. Importing ``polars_fairmetrics``
registers them. Type checkers do not see custom namespaces: the functions are the primary API.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal

import polars as pl

from polars_fairmetrics import bootstrap as _bootstrap
from polars_fairmetrics import counts as _counts
from polars_fairmetrics import curves as _curves
from polars_fairmetrics import deployment as _deployment
from polars_fairmetrics import disparity as _disparity
from polars_fairmetrics import ensemble as _ensemble
from polars_fairmetrics import metrics as _metrics
from polars_fairmetrics import report as _report
from polars_fairmetrics import weights as _weights
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

    def audit(
        self, *, y_true: str, y_pred: str | None = None, y_score: str | None = None,
        threshold: float | None = None, by: ColumnNames, weight: str | None = None,
        reference: _report.Reference = "overall", pos_label: Label | None = None,
        neg_label: Label | None = None, metrics: str | Sequence[str] | None = None,
        criteria: Sequence[str] | None = None, intersectional: bool = False,
        score_bounds: tuple[float, float] | None = (0.0, 1.0),
        engine: Literal["auto", "in-memory", "streaming"] = "auto", source: str | None = None,
        extra_sections: Sequence[_report.SectionBuilder] = (),
        extra: Mapping[str, Any] | None = None,
        intervals: int | None = None, ci_level: float = 0.95,
        ci_method: Literal["percentile", "basic", "bca"] = "percentile",
        seed: int | None = None, models: Sequence[str] | None = None,
        progress: Callable[[str], None] | None = None, curves: bool | None = None,
        curve_bins: int | None = None, deploy_positive_rate: float | None = None,
    ) -> _report.Report:
        """:func:`polars_fairmetrics.audit` of this frame (collects: it is a report)."""
        return _report.audit(
            self._frame, y_true=y_true, y_pred=y_pred, y_score=y_score, threshold=threshold,
            by=by, weight=weight, reference=reference, pos_label=pos_label,
            neg_label=neg_label, metrics=metrics, criteria=criteria,
            intersectional=intersectional, score_bounds=score_bounds, engine=engine,
            source=source, extra_sections=extra_sections, extra=extra,
            intervals=intervals, ci_level=ci_level, ci_method=ci_method, seed=seed,
            models=models, progress=progress, curves=curves, curve_bins=curve_bins,
            deploy_positive_rate=deploy_positive_rate,
        )

    def bootstrap_metrics(
        self, *, y_true: str, y_pred: str | None = None, y_score: str | None = None,
        threshold: float | Sequence[float] | None = None, by: ColumnNames,
        metrics: str | Sequence[str] | None = None, reference: Reference = "overall",
        weight: str | None = None, pos_label: Label | None = None,
        neg_label: Label | None = None, n_resamples: int = 1000, seed: int | None = None,
        method: _bootstrap.Method = "percentile", confidence: float = 0.95,
        stratify: bool | ColumnNames | None = None, reweight_by: str | None = None,
        population_shares: Mapping[Any, float] | None = None,
        criteria: Sequence[str] = ("equalized_odds_difference",),
        engine: Literal["auto", "counts", "rows"] = "auto", max_weight_levels: int = 1024,
        progress: bool | None = None, score_bounds: tuple[float, float] | None = (0.0, 1.0),
    ) -> FrameT:
        """:func:`polars_fairmetrics.bootstrap_metrics` of this frame."""
        return _bootstrap.bootstrap_metrics(
            self._frame, y_true=y_true, y_pred=y_pred, y_score=y_score, threshold=threshold,
            by=by, metrics=metrics, reference=reference, weight=weight, pos_label=pos_label,
            neg_label=neg_label, n_resamples=n_resamples, seed=seed, method=method,
            confidence=confidence, stratify=stratify, reweight_by=reweight_by,
            population_shares=population_shares, criteria=criteria, engine=engine,
            max_weight_levels=max_weight_levels, progress=progress, score_bounds=score_bounds,
        )

    def resample_counts(self, *, n_resamples: int = 1000, strata: ColumnNames | None = None,
                        seed: int | None = None, include_observed: bool = False) -> FrameT:
        """:func:`polars_fairmetrics.resample_counts` of this count table."""
        return _bootstrap.resample_counts(self._frame, n_resamples=n_resamples, strata=strata,
                                          seed=seed, include_observed=include_observed)

    def bootstrap_counts(
        self, statistic: Callable[[pl.DataFrame], pl.DataFrame], *, n_resamples: int = 1000,
        strata: ColumnNames | None = None, seed: int | None = None, confidence: float = 0.95,
        method: _bootstrap.Method = "percentile", weight_key: str | None = None,
        reweight_by: str | None = None, population_shares: Mapping[Any, float] | None = None,
    ) -> FrameT:
        """:func:`polars_fairmetrics.bootstrap_counts` of this count table."""
        return _bootstrap.bootstrap_counts(
            self._frame, statistic, n_resamples=n_resamples, strata=strata, seed=seed,
            confidence=confidence, method=method, weight_key=weight_key,
            reweight_by=reweight_by, population_shares=population_shares,
        )

    def bootstrap_rows(
        self, statistic: Callable[[pl.LazyFrame], pl.DataFrame | pl.LazyFrame], *,
        n_resamples: int = 1000, strata: ColumnNames | None = None, seed: int | None = None,
        confidence: float = 0.95, method: _bootstrap.Method = "percentile",
        multiplicity: Literal["multinomial", "poisson"] = "multinomial",
        weight_name: str = "bootstrap_weight", progress: bool | None = None,
    ) -> pl.DataFrame:
        """:func:`polars_fairmetrics.bootstrap_rows` of this frame (runs when called)."""
        return _bootstrap.bootstrap_rows(
            self._frame, statistic, n_resamples=n_resamples, strata=strata, seed=seed,
            confidence=confidence, method=method, multiplicity=multiplicity,
            weight_name=weight_name, progress=progress,
        )

    def ensemble_sample_metrics(
        self, *, models: Sequence[str] | None = None, list_col: str | None = None,
        row_id: str | None = None, prob_col: str | None = None,
        keep: ColumnNames | None = None, metrics: str | Sequence[str] | None = None,
        convention: _ensemble.Convention = "seed", ddof: int = 1, log_base: float = 2.0,
    ) -> FrameT:
        """:func:`polars_fairmetrics.ensemble_sample_metrics` of this frame."""
        return _ensemble.ensemble_sample_metrics(
            self._frame, models=models, list_col=list_col, row_id=row_id, prob_col=prob_col,
            keep=keep, metrics=metrics, convention=convention, ddof=ddof, log_base=log_base)

    def ensemble_labels(
        self, *, models: Sequence[str] | None = None, list_col: str | None = None,
        row_id: str | None = None, prob_col: str | None = None,
        keep: ColumnNames | None = None, convention: _ensemble.Convention = "seed",
    ) -> FrameT:
        """:func:`polars_fairmetrics.ensemble_labels` of this frame."""
        return _ensemble.ensemble_labels(
            self._frame, models=models, list_col=list_col, row_id=row_id, prob_col=prob_col,
            keep=keep, convention=convention)

    def ensemble_group_metrics(
        self, *, models: Sequence[str] | None = None, list_col: str | None = None,
        row_id: str | None = None, prob_col: str | None = None, y_true: str | None = None,
        by: ColumnNames | None = None, weight: str | None = None,
        metrics: str | Sequence[str] | None = None,
        confusion_metrics: str | Sequence[str] | None = None,
        partition_by: ColumnNames | None = None, convention: _ensemble.Convention = "seed",
        ddof: int = 1, log_base: float = 2.0, pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> FrameT:
        """:func:`polars_fairmetrics.ensemble_group_metrics` of this frame."""
        return _ensemble.ensemble_group_metrics(
            self._frame, models=models, list_col=list_col, row_id=row_id, prob_col=prob_col,
            y_true=y_true, by=by, weight=weight, metrics=metrics,
            confusion_metrics=confusion_metrics, partition_by=partition_by,
            convention=convention, ddof=ddof, log_base=log_base, pos_label=pos_label,
            neg_label=neg_label)

    def ensemble_disparities(
        self, *, by: ColumnNames, models: Sequence[str] | None = None,
        list_col: str | None = None, row_id: str | None = None, prob_col: str | None = None,
        reference: Reference = None, y_true: str | None = None, weight: str | None = None,
        metrics: str | Sequence[str] | None = None,
        confusion_metrics: str | Sequence[str] | None = None,
        partition_by: ColumnNames | None = None, convention: _ensemble.Convention = "seed",
        ddof: int = 1, log_base: float = 2.0, pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> FrameT:
        """:func:`polars_fairmetrics.ensemble_disparities` of this frame."""
        return _ensemble.ensemble_disparities(
            self._frame, models=models, list_col=list_col, row_id=row_id, prob_col=prob_col,
            by=by, reference=reference, y_true=y_true, weight=weight, metrics=metrics,
            confusion_metrics=confusion_metrics, partition_by=partition_by,
            convention=convention, ddof=ddof, log_base=log_base, pos_label=pos_label,
            neg_label=neg_label)

    def with_importance_weights(
        self, by: ColumnNames, *, target: _weights.Target = "uniform",
        source: _weights.Mix | None = None, weight: str | None = None,
        within: ColumnNames | None = None, name: str = "importance_weight",
    ) -> FrameT:
        """:func:`polars_fairmetrics.with_importance_weights` of this frame."""
        return _weights.with_importance_weights(self._frame, by, target=target, source=source,
                                                weight=weight, within=within, name=name)

    def with_bias_adjusted_weights(
        self, in_biased_set: str, *, biased_share: float | None = None,
        biased_size: int | None = None, population_size: int | None = None,
        by: ColumnNames | None = None, weight: str | None = None, allow_empty: bool = False,
        name: str = "bias_adjusted_weight",
    ) -> FrameT:
        """:func:`polars_fairmetrics.with_bias_adjusted_weights` of this frame."""
        return _weights.with_bias_adjusted_weights(
            self._frame, in_biased_set, biased_share=biased_share, biased_size=biased_size,
            population_size=population_size, by=by, weight=weight, allow_empty=allow_empty,
            name=name)

    def bias_adjusted_metrics(
        self, *, y_true: str, in_biased_set: str, y_pred: str | None = None,
        y_score: str | None = None, threshold: float | Sequence[float] | None = None,
        biased_share: float | None = None, biased_size: int | None = None,
        population_size: int | None = None, by: ColumnNames | None = None,
        weights_by: ColumnNames | None = None, weight: str | None = None,
        metrics: str | Sequence[str] | None = _weights.BIAS_ADJUSTED_METRICS,
        convention: Literal["exact", "notebook"] = "exact", pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> FrameT:
        """:func:`polars_fairmetrics.bias_adjusted_metrics` of this frame."""
        return _weights.bias_adjusted_metrics(
            self._frame, y_true=y_true, in_biased_set=in_biased_set, y_pred=y_pred,
            y_score=y_score, threshold=threshold, biased_share=biased_share,
            biased_size=biased_size, population_size=population_size, by=by,
            weights_by=weights_by, weight=weight, metrics=metrics, convention=convention,
            pos_label=pos_label, neg_label=neg_label)

    def importance_weighted_counts(
        self, by: ColumnNames, *, target: _weights.Target = "uniform",
        source: _weights.Mix | None = None, within: ColumnNames | None = None,
        keys: ColumnNames | None = None,
    ) -> FrameT:
        """:func:`polars_fairmetrics.importance_weighted_counts` of this count table."""
        return _weights.importance_weighted_counts(self._frame, by, target=target, source=source,
                                                   within=within, keys=keys)

    def bias_adjusted_counts(
        self, in_biased_set: str, *, biased_share: float | None = None,
        biased_size: int | None = None, population_size: int | None = None,
        by: ColumnNames | None = None, keys: ColumnNames | None = None,
        allow_empty: bool = False,
    ) -> FrameT:
        """:func:`polars_fairmetrics.bias_adjusted_counts` of this count table."""
        return _weights.bias_adjusted_counts(
            self._frame, in_biased_set, biased_share=biased_share, biased_size=biased_size,
            population_size=population_size, by=by, keys=keys, allow_empty=allow_empty)

    def deployment_counts(
        self, *, deploy_positive_rate: _deployment.Rate | None = None,
        deploy_neg_pos_ratio: _deployment.Rate | None = None, by: ColumnNames | None = None,
        weighted: bool | None = None,
    ) -> FrameT:
        """:func:`polars_fairmetrics.deployment_counts` of this count table."""
        return _deployment.deployment_counts(
            self._frame, deploy_positive_rate=deploy_positive_rate,
            deploy_neg_pos_ratio=deploy_neg_pos_ratio, by=by, weighted=weighted)

    def deployment_metrics(
        self, *, deploy_positive_rate: _deployment.Rate | None = None,
        deploy_neg_pos_ratio: _deployment.Rate | None = None,
        metrics: str | Sequence[str] | None = _deployment.DEPLOYMENT_METRICS,
        by: ColumnNames | None = None, y_true: str | None = None, y_pred: str | None = None,
        y_score: str | None = None, threshold: float | Sequence[float] | None = None,
        weight: str | None = None, pos_label: Label | None = None,
        neg_label: Label | None = None,
    ) -> FrameT:
        """:func:`polars_fairmetrics.deployment_metrics` of this frame (rows or count table)."""
        return _deployment.deployment_metrics(
            self._frame, deploy_positive_rate=deploy_positive_rate,
            deploy_neg_pos_ratio=deploy_neg_pos_ratio, metrics=metrics, by=by, y_true=y_true,
            y_pred=y_pred, y_score=y_score, threshold=threshold, weight=weight,
            pos_label=pos_label, neg_label=neg_label)

    def threshold_for_precision(
        self, *, min_precision: float, deploy_positive_rate: _deployment.Rate | None = None,
        deploy_neg_pos_ratio: _deployment.Rate | None = None, by: ColumnNames | None = None,
        y_true: str | None = None, y_score: str | None = None,
        threshold: Sequence[float] | None = None, weight: str | None = None,
        pos_label: Label | None = None, neg_label: Label | None = None,
    ) -> FrameT:
        """:func:`polars_fairmetrics.threshold_for_precision` of this frame."""
        return _deployment.threshold_for_precision(
            self._frame, min_precision=min_precision, deploy_positive_rate=deploy_positive_rate,
            deploy_neg_pos_ratio=deploy_neg_pos_ratio, by=by, y_true=y_true, y_score=y_score,
            threshold=threshold, weight=weight, pos_label=pos_label, neg_label=neg_label)

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
