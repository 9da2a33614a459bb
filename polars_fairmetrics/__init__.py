"""polars_fairmetrics: fairness and real-world performance metrics of binary classifiers, in Polars.

Importing the package registers the ``.fair`` namespaces on ``pl.Expr``, ``pl.LazyFrame`` and
``pl.DataFrame``. The typed functions below are the primary API; the namespaces delegate to them.
"""

from polars_fairmetrics import _namespaces as _namespaces  # registers .fair
from polars_fairmetrics.bootstrap import (
    bootstrap_counts,
    bootstrap_metrics,
    bootstrap_rows,
    intervals,
    resample_counts,
)
from polars_fairmetrics.counts import combine_counts, confusion_counts
from polars_fairmetrics.curves import (
    average_precision,
    curve_counts,
    curve_summaries,
    plot_curves,
    pooled_curve,
    pr_curve,
    roc_auc,
    roc_curve,
    summary_disparities,
)
from polars_fairmetrics.datasets import load_compas
from polars_fairmetrics.deployment import (
    deployment_counts,
    deployment_factors,
    deployment_metrics,
    threshold_for_precision,
)
from polars_fairmetrics.disparity import (
    CRITERIA,
    accuracy_equality_difference,
    between_groups,
    disparate_impact,
    disparities,
    equal_opportunity_difference,
    equalized_odds_difference,
    fairness_criteria,
    negative_predictive_parity_difference,
    positive_predictive_parity_difference,
    predictive_equality_difference,
    statistical_parity_difference,
)
from polars_fairmetrics.ensemble import (
    ENSEMBLE_METRICS,
    ensemble_disparities,
    ensemble_group_metrics,
    ensemble_labels,
    ensemble_sample_metrics,
)
from polars_fairmetrics.exceptions import (
    ColumnNotFoundError,
    FairMetricsError,
    InvalidDtypeError,
    InvalidLabelError,
    InvalidOptionError,
    InvalidScoreError,
    InvalidThresholdError,
    InvalidWeightError,
    ReferenceGroupError,
    SectionNotFoundError,
)
from polars_fairmetrics.metrics import (
    METRICS,
    Counts,
    group_metrics,
    metric,
    metrics_from_counts,
    safe_div,
)
from polars_fairmetrics.report import Report, audit
from polars_fairmetrics.spark import (
    spark_confusion_counts,
    spark_disparities,
    spark_fairness_criteria,
    spark_group_metrics,
)
from polars_fairmetrics.weights import (
    bias_adjusted_counts,
    bias_adjusted_metrics,
    bias_adjusted_weights,
    importance_weighted_counts,
    importance_weights,
    with_bias_adjusted_weights,
    with_importance_weights,
)

__all__ = [
    "CRITERIA",
    "ENSEMBLE_METRICS",
    "METRICS",
    "ColumnNotFoundError",
    "Counts",
    "FairMetricsError",
    "InvalidDtypeError",
    "InvalidLabelError",
    "InvalidOptionError",
    "InvalidScoreError",
    "InvalidThresholdError",
    "InvalidWeightError",
    "ReferenceGroupError",
    "Report",
    "SectionNotFoundError",
    "accuracy_equality_difference",
    "audit",
    "average_precision",
    "between_groups",
    "bias_adjusted_counts",
    "bias_adjusted_metrics",
    "bias_adjusted_weights",
    "bootstrap_counts",
    "bootstrap_metrics",
    "bootstrap_rows",
    "combine_counts",
    "confusion_counts",
    "curve_counts",
    "curve_summaries",
    "deployment_counts",
    "deployment_factors",
    "deployment_metrics",
    "disparate_impact",
    "disparities",
    "ensemble_disparities",
    "ensemble_group_metrics",
    "ensemble_labels",
    "ensemble_sample_metrics",
    "equal_opportunity_difference",
    "equalized_odds_difference",
    "fairness_criteria",
    "group_metrics",
    "importance_weighted_counts",
    "importance_weights",
    "intervals",
    "load_compas",
    "metric",
    "metrics_from_counts",
    "negative_predictive_parity_difference",
    "plot_curves",
    "pooled_curve",
    "positive_predictive_parity_difference",
    "pr_curve",
    "predictive_equality_difference",
    "resample_counts",
    "roc_auc",
    "roc_curve",
    "safe_div",
    "spark_confusion_counts",
    "spark_disparities",
    "spark_fairness_criteria",
    "spark_group_metrics",
    "statistical_parity_difference",
    "summary_disparities",
    "threshold_for_precision",
    "with_bias_adjusted_weights",
    "with_importance_weights",
]
__version__ = "0.1.0"
