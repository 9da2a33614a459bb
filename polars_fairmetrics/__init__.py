"""polars_fairmetrics: fairness and real-world performance metrics of binary classifiers, in Polars.

Importing the package registers the ``.fair`` namespaces on ``pl.Expr``, ``pl.LazyFrame`` and
``pl.DataFrame``. The typed functions below are the primary API; the namespaces delegate to them.
"""

from polars_fairmetrics import _namespaces as _namespaces  # registers .fair
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
)
from polars_fairmetrics.metrics import (
    METRICS,
    Counts,
    group_metrics,
    metric,
    metrics_from_counts,
    safe_div,
)

__all__ = [
    "CRITERIA",
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
    "accuracy_equality_difference",
    "average_precision",
    "between_groups",
    "combine_counts",
    "confusion_counts",
    "curve_counts",
    "curve_summaries",
    "disparate_impact",
    "disparities",
    "equal_opportunity_difference",
    "equalized_odds_difference",
    "fairness_criteria",
    "group_metrics",
    "load_compas",
    "metric",
    "metrics_from_counts",
    "negative_predictive_parity_difference",
    "plot_curves",
    "pooled_curve",
    "positive_predictive_parity_difference",
    "pr_curve",
    "predictive_equality_difference",
    "roc_auc",
    "roc_curve",
    "safe_div",
    "statistical_parity_difference",
    "summary_disparities",
]
__version__ = "0.1.0"
