"""polars_fairmetrics: fairness and real-world performance metrics of binary classifiers, in Polars.

Importing the package registers the ``.fair`` namespaces on ``pl.Expr``, ``pl.LazyFrame`` and
``pl.DataFrame``. The typed functions below are the primary API; the namespaces delegate to them.

``import polars_fairmetrics`` imports no NumPy, pyarrow, matplotlib or pyspark: the names of the
bootstrap, calibration, curve, ensemble, models, monitor and Spark modules are imported on first
use (a module ``__getattr__``; the ``.fair`` namespaces reach those modules lazily too), and
plotting imports matplotlib only when it draws.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from polars_fairmetrics._namespaces import fair  # registers .fair
from polars_fairmetrics.counts import combine_counts, confusion_counts
from polars_fairmetrics.datasets import (
    ADULT_MODELS,
    load_adult,
    load_compas,
    scan_adult,
    scan_compas,
)
from polars_fairmetrics.deployment import (
    deployment_counts,
    deployment_factors,
    deployment_metrics,
    threshold_for_precision,
)
from polars_fairmetrics.disparity import (
    CRITERIA,
    between_groups,
    disparities,
    fairness_criteria,
)
from polars_fairmetrics.exceptions import (
    ColumnNotFoundError,
    EmptyGroupError,
    FairMetricsError,
    InconsistentInputError,
    InvalidDtypeError,
    InvalidLabelError,
    InvalidOptionError,
    InvalidScoreError,
    InvalidThresholdError,
    InvalidWeightError,
    ReferenceGroupError,
    SectionNotFoundError,
    StoreError,
)
from polars_fairmetrics.figures import (
    plot_curves,
    plot_disparities,
    plot_ensemble,
    plot_group_metrics,
)
from polars_fairmetrics.metrics import (
    METRICS,
    Counts,
    group_metrics,
    metric,
    metrics_from_counts,
    safe_div,
)
from polars_fairmetrics.plot import plot_reliability, plot_trend
from polars_fairmetrics.report import AuditOptions, Report, audit
from polars_fairmetrics.significance import disparity_tests
from polars_fairmetrics.summaries import (
    MetricFrame,
    accuracy_equality_difference,
    demographic_parity_difference,
    demographic_parity_ratio,
    disparate_impact,
    equal_opportunity_difference,
    equal_opportunity_ratio,
    equalized_odds_difference,
    equalized_odds_ratio,
    negative_predictive_parity_difference,
    positive_predictive_parity_difference,
    predictive_equality_difference,
    statistical_parity_difference,
)
from polars_fairmetrics.weights import (
    bias_adjusted_counts,
    bias_adjusted_metrics,
    bias_adjusted_weights,
    importance_weighted_counts,
    importance_weighted_metrics,
    importance_weights,
    with_bias_adjusted_weights,
    with_importance_weights,
)

if TYPE_CHECKING:
    from polars_fairmetrics.bootstrap import (
        bootstrap_counts,
        bootstrap_metrics,
        bootstrap_rows,
        intervals,
        resample_counts,
        with_intervals,
    )
    from polars_fairmetrics.calibration import (
        calibration_disparities,
        calibration_metrics,
        reliability_curve,
        score_cells,
    )
    from polars_fairmetrics.curves import (
        average_precision,
        curve_counts,
        curve_summaries,
        pooled_curve,
        pr_curve,
        roc_auc,
        roc_curve,
        summary_disparities,
    )
    from polars_fairmetrics.ensemble import (
        ENSEMBLE_METRICS,
        ensemble_disparities,
        ensemble_group_metrics,
        ensemble_group_sums,
        ensemble_labels,
        ensemble_metrics_from_sums,
        ensemble_sample_metrics,
    )
    from polars_fairmetrics.models import compare_models, compare_models_long
    from polars_fairmetrics.monitor import (
        append_batch,
        change_gate,
        gap_gate,
        period_criteria,
        period_disparities,
        read_cells,
        read_counts,
        read_ensemble_sums,
        store_batches,
        window_change,
    )
    from polars_fairmetrics.spark import (
        spark_confusion_counts,
        spark_disparities,
        spark_fairness_criteria,
        spark_group_metrics,
    )

_LAZY: dict[str, str] = {
    "bootstrap_counts": "bootstrap",
    "bootstrap_metrics": "bootstrap",
    "bootstrap_rows": "bootstrap",
    "with_intervals": "bootstrap",
    "intervals": "bootstrap",
    "resample_counts": "bootstrap",
    "calibration_disparities": "calibration",
    "calibration_metrics": "calibration",
    "reliability_curve": "calibration",
    "score_cells": "calibration",
    "compare_models": "models",
    "compare_models_long": "models",
    "append_batch": "monitor",
    "change_gate": "monitor",
    "gap_gate": "monitor",
    "period_criteria": "monitor",
    "period_disparities": "monitor",
    "read_cells": "monitor",
    "read_counts": "monitor",
    "read_ensemble_sums": "monitor",
    "store_batches": "monitor",
    "window_change": "monitor",
    "average_precision": "curves",
    "curve_counts": "curves",
    "curve_summaries": "curves",
    "pooled_curve": "curves",
    "pr_curve": "curves",
    "roc_auc": "curves",
    "roc_curve": "curves",
    "summary_disparities": "curves",
    "ENSEMBLE_METRICS": "ensemble",
    "ensemble_disparities": "ensemble",
    "ensemble_group_metrics": "ensemble",
    "ensemble_group_sums": "ensemble",
    "ensemble_labels": "ensemble",
    "ensemble_metrics_from_sums": "ensemble",
    "ensemble_sample_metrics": "ensemble",
    "spark_confusion_counts": "spark",
    "spark_disparities": "spark",
    "spark_fairness_criteria": "spark",
    "spark_group_metrics": "spark",
}
"""Top-level names imported on first use, and their module (these modules import NumPy or
pyarrow; ``polars_fairmetrics._lazy.LAZY_MODULES``)."""


def __getattr__(name: str) -> Any:
    """Import a lazily exported name (or a submodule not imported yet) on first use."""
    module = _LAZY.get(name)
    if module is None:
        missing = AttributeError(f"module {__name__!r} has no attribute {name!r}")
        if name.startswith("__"):
            raise missing
        try:  # a submodule not imported yet (``pfm.curves``), as before imports were lazy
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise  # the submodule exists but needs a package that is not installed
            raise missing from None
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "ADULT_MODELS",
    "CRITERIA",
    "ENSEMBLE_METRICS",
    "METRICS",
    "AuditOptions",
    "ColumnNotFoundError",
    "Counts",
    "EmptyGroupError",
    "FairMetricsError",
    "InconsistentInputError",
    "InvalidDtypeError",
    "InvalidLabelError",
    "InvalidOptionError",
    "InvalidScoreError",
    "InvalidThresholdError",
    "InvalidWeightError",
    "MetricFrame",
    "ReferenceGroupError",
    "Report",
    "SectionNotFoundError",
    "StoreError",
    "accuracy_equality_difference",
    "append_batch",
    "audit",
    "average_precision",
    "between_groups",
    "bias_adjusted_counts",
    "bias_adjusted_metrics",
    "bias_adjusted_weights",
    "bootstrap_counts",
    "bootstrap_metrics",
    "bootstrap_rows",
    "calibration_disparities",
    "calibration_metrics",
    "change_gate",
    "combine_counts",
    "compare_models",
    "compare_models_long",
    "confusion_counts",
    "curve_counts",
    "curve_summaries",
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "deployment_counts",
    "deployment_factors",
    "deployment_metrics",
    "disparate_impact",
    "disparities",
    "disparity_tests",
    "ensemble_disparities",
    "ensemble_group_metrics",
    "ensemble_group_sums",
    "ensemble_labels",
    "ensemble_metrics_from_sums",
    "ensemble_sample_metrics",
    "equal_opportunity_difference",
    "equal_opportunity_ratio",
    "equalized_odds_difference",
    "equalized_odds_ratio",
    "fair",
    "fairness_criteria",
    "gap_gate",
    "group_metrics",
    "importance_weighted_counts",
    "importance_weighted_metrics",
    "importance_weights",
    "intervals",
    "load_adult",
    "load_compas",
    "metric",
    "metrics_from_counts",
    "negative_predictive_parity_difference",
    "period_criteria",
    "period_disparities",
    "plot_curves",
    "plot_disparities",
    "plot_ensemble",
    "plot_group_metrics",
    "plot_reliability",
    "plot_trend",
    "pooled_curve",
    "positive_predictive_parity_difference",
    "pr_curve",
    "predictive_equality_difference",
    "read_cells",
    "read_counts",
    "read_ensemble_sums",
    "reliability_curve",
    "resample_counts",
    "roc_auc",
    "roc_curve",
    "safe_div",
    "scan_adult",
    "scan_compas",
    "score_cells",
    "spark_confusion_counts",
    "spark_disparities",
    "spark_fairness_criteria",
    "spark_group_metrics",
    "statistical_parity_difference",
    "store_batches",
    "summary_disparities",
    "threshold_for_precision",
    "window_change",
    "with_bias_adjusted_weights",
    "with_importance_weights",
    "with_intervals",
]
__version__ = "0.1.0"
