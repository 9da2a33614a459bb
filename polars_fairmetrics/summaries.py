r"""One-number disparity summaries with fairlearn's names and meanings, and a MetricFrame.

For users who think in fairlearn: :func:`demographic_parity_difference`,
:func:`equalized_odds_difference`, … take ``y_true, y_pred, sensitive_features`` (arrays, Series,
or column names with ``data=``) and return **one number**, computed as fairlearn 0.15 computes
it:

- ``method="between_groups"``: :math:`\max_g m_g - \min_g m_g` (difference) and
  :math:`\min_g m_g / \max_g m_g` (ratio);
- ``method="to_overall"``: :math:`\max_g |m_g - m_{all}|` and
  :math:`\min_g \min(m_g / m_{all},\ m_{all} / m_g)`;
- equalized odds combines the true and false positive rates by their worst case (the larger
  difference, the smaller ratio) or their mean (``agg="mean"``).

Unlike fairlearn (which follows scikit-learn's ``zero_division`` and counts an undefined rate as
0), a group whose rate is undefined (no positives, say) is left out of the summary, and a
summary with no defined group is ``None``. Per-group values with their references are
:func:`~polars_fairmetrics.fairness_criteria` and :func:`~polars_fairmetrics.disparities`;
between-groups tables are :func:`~polars_fairmetrics.between_groups`.

These functions return a number, so they **collect** a lazy ``data``.

:class:`MetricFrame` mirrors fairlearn's ``MetricFrame`` (``by_group``, ``overall``,
``difference()``, ``ratio()``, ``group_min()``, ``group_max()``) on the package's own engine,
returning Polars frames.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import polars as pl

from polars_fairmetrics._typing import Label
from polars_fairmetrics.counts import COUNT_COLUMNS, WEIGHTED_COUNT_COLUMNS, confusion_counts
from polars_fairmetrics.exceptions import InvalidOptionError
from polars_fairmetrics.inputs import as_polars, column_names, frame_from_arrays
from polars_fairmetrics.metrics import _metric_names, metrics_from_counts

__all__ = [
    "MetricFrame",
    "accuracy_equality_difference",
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "disparate_impact",
    "equal_opportunity_difference",
    "equal_opportunity_ratio",
    "equalized_odds_difference",
    "equalized_odds_ratio",
    "negative_predictive_parity_difference",
    "positive_predictive_parity_difference",
    "predictive_equality_difference",
    "statistical_parity_difference",
]

Method = Literal["between_groups", "to_overall"]
Aggregation = Literal["worst_case", "mean"]

_SKLEARN_NAMES: dict[str, str] = {
    "accuracy_score": "accuracy",
    "balanced_accuracy_score": "balanced_accuracy",
    "recall_score": "true_positive_rate",
    "precision_score": "positive_predictive_value",
    "f1_score": "f1_score",
    "matthews_corrcoef": "matthews_corrcoef",
    "selection_rate": "selection_rate",
    "true_positive_rate": "true_positive_rate",
    "false_positive_rate": "false_positive_rate",
    "true_negative_rate": "true_negative_rate",
    "false_negative_rate": "false_negative_rate",
}
"""scikit-learn / fairlearn metric functions by ``__name__``, and the metric they compute."""


def _check_method(method: str) -> None:
    if method not in ("between_groups", "to_overall"):
        raise InvalidOptionError(f"method must be 'between_groups' or 'to_overall', got {method!r}")


def _frame(
    y_true: Any,
    y_pred: Any,
    sensitive_features: Any,
    sample_weight: Any | None,
    data: Any | None,
) -> tuple[pl.DataFrame | pl.LazyFrame, str, str, list[str], str | None]:
    """The rows and the column roles, from arrays or from ``data`` with column names."""
    if data is None:
        frame, by = frame_from_arrays(
            y_true, y_pred, sensitive_features=sensitive_features, sample_weight=sample_weight
        )
        weight = "sample_weight" if sample_weight is not None else None
        return frame, "y_true", "y_pred", by, weight
    if not isinstance(y_true, str) or not isinstance(y_pred, str):
        raise InvalidOptionError("with data=, pass y_true= and y_pred= as column names")
    if sample_weight is not None and not isinstance(sample_weight, str):
        raise InvalidOptionError("with data=, pass sample_weight= as a column name")
    if not isinstance(sensitive_features, (str, Sequence)):
        raise InvalidOptionError("with data=, pass sensitive_features= as column name(s)")
    return as_polars(data), y_true, y_pred, column_names(sensitive_features), sample_weight


def _counts(
    y_true: Any,
    y_pred: Any,
    sensitive_features: Any,
    sample_weight: Any | None,
    data: Any | None,
    pos_label: Label | None,
) -> tuple[pl.DataFrame, list[str]]:
    rows, yt, yp, by, weight = _frame(y_true, y_pred, sensitive_features, sample_weight, data)
    lazy = confusion_counts(
        rows.lazy(), y_true=yt, y_pred=yp, by=by, weight=weight, pos_label=pos_label
    )
    table = lazy.collect()
    return table, by


def _values(
    counts: pl.DataFrame, by: list[str], names: Sequence[str]
) -> tuple[pl.DataFrame, dict[str, float | None]]:
    """Per-group metric values (wide) and the overall values, from one count table."""
    groups = metrics_from_counts(counts, metrics=list(names), by=by, wide=True)
    sums = [c for c in (*COUNT_COLUMNS, *WEIGHTED_COUNT_COLUMNS) if c in counts.columns]
    total = counts.select(pl.col(sums).sum())
    overall = metrics_from_counts(total, metrics=list(names), by=[], wide=True).row(0, named=True)
    return groups, {m: overall[m] for m in names}


def _summary(values: list[float], overall: float | None, kind: str, method: str) -> float | None:
    if not values:
        return None
    if method == "between_groups":
        lo, hi = min(values), max(values)
        if kind == "difference":
            return hi - lo
        return None if hi == 0 else lo / hi
    if overall is None:
        return None
    if kind == "difference":
        return max(abs(v - overall) for v in values)
    # min(v / overall, overall / v), where x / 0 is +inf and 0 / 0 is undefined (left out)
    ratios = [
        min(v / overall, overall / v) if v != 0 and overall != 0 else 0.0
        for v in values
        if v != 0 or overall != 0
    ]
    return min(ratios) if ratios else None


def _disparity(
    metrics: Sequence[str],
    kind: Literal["difference", "ratio"],
    agg: str,
    y_true: Any,
    y_pred: Any,
    sensitive_features: Any,
    method: str,
    sample_weight: Any | None,
    data: Any | None,
    pos_label: Label | None,
) -> float | None:
    _check_method(method)
    if agg not in ("worst_case", "mean"):
        raise InvalidOptionError(f"agg must be 'worst_case' or 'mean', got {agg!r}")
    counts, by = _counts(y_true, y_pred, sensitive_features, sample_weight, data, pos_label)
    groups, overall = _values(counts, by, metrics)
    parts: list[float] = []
    for m in metrics:
        values = [v for v in groups[m].to_list() if v is not None]
        s = _summary(values, overall[m], kind, method)
        if s is None:
            return None
        parts.append(s)
    if agg == "mean":
        return sum(parts) / len(parts)
    return max(parts) if kind == "difference" else min(parts)


def demographic_parity_difference(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    method: Method = "between_groups",
    sample_weight: Any | None = None,
    data: Any | None = None,
    pos_label: Label | None = None,
) -> float | None:
    r"""Demographic parity difference (fairlearn): the spread of selection rates over groups.

    .. math:: \max_g SR_g - \min_g SR_g \quad\text{or (to\_overall)}\quad \max_g |SR_g - SR|

    with :math:`SR_g = P(\hat Y = 1 \mid A = g)`. 0 is parity.

    Parameters
    ----------
    y_true, y_pred
        Arrays of labels, or column names with ``data=``.
    sensitive_features
        Array(s) of group values (a 2-D array, DataFrame or dict for several: their
        intersections are the groups), or column name(s) with ``data=``.
    method
        ``"between_groups"`` (default) or ``"to_overall"``.
    sample_weight
        Array of weights, or a column name with ``data=``.
    data
        A table (Polars, pandas, Arrow): then the other arguments name its columns. Collected.
    pos_label
        The positive class (default 1 / ``True``).

    Returns
    -------
    float or None
        ``None`` when no group's rate is defined.

    Examples
    --------
    >>> demographic_parity_difference([1, 0, 1, 0], [1, 1, 0, 0], sensitive_features=list("aabb"))
    1.0
    """
    return _disparity(
        ["selection_rate"],
        "difference",
        "worst_case",
        y_true,
        y_pred,
        sensitive_features,
        method,
        sample_weight,
        data,
        pos_label,
    )


def demographic_parity_ratio(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    method: Method = "between_groups",
    sample_weight: Any | None = None,
    data: Any | None = None,
    pos_label: Label | None = None,
) -> float | None:
    r"""Demographic parity ratio (fairlearn): smallest over largest selection rate.

    .. math:: \min_g SR_g / \max_g SR_g \quad\text{or (to\_overall)}\quad
              \min_g \min(SR_g / SR,\ SR / SR_g)

    1 is parity; the four-fifths rule flags values below 0.8. Arguments as for
    :func:`demographic_parity_difference`.

    Examples
    --------
    >>> demographic_parity_ratio([1, 0, 1, 0], [1, 1, 1, 0], sensitive_features=list("aabb"))
    0.5
    """
    return _disparity(
        ["selection_rate"],
        "ratio",
        "worst_case",
        y_true,
        y_pred,
        sensitive_features,
        method,
        sample_weight,
        data,
        pos_label,
    )


def equalized_odds_difference(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    method: Method = "between_groups",
    sample_weight: Any | None = None,
    agg: Aggregation = "worst_case",
    data: Any | None = None,
    pos_label: Label | None = None,
) -> float | None:
    r"""Equalized odds difference (fairlearn): the larger spread of TPR and FPR over groups.

    .. math:: \max\big(\max_g TPR_g - \min_g TPR_g,\ \max_g FPR_g - \min_g FPR_g\big)

    (their mean with ``agg="mean"``; distances to the overall rates with
    ``method="to_overall"``). Arguments as for :func:`demographic_parity_difference`.

    Examples
    --------
    >>> equalized_odds_difference([1, 0, 1, 0], [1, 0, 0, 1], sensitive_features=list("aabb"))
    1.0
    """
    return _disparity(
        ["true_positive_rate", "false_positive_rate"],
        "difference",
        agg,
        y_true,
        y_pred,
        sensitive_features,
        method,
        sample_weight,
        data,
        pos_label,
    )


def equalized_odds_ratio(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    method: Method = "between_groups",
    sample_weight: Any | None = None,
    agg: Aggregation = "worst_case",
    data: Any | None = None,
    pos_label: Label | None = None,
) -> float | None:
    r"""Equalized odds ratio (fairlearn): the smaller of the TPR and FPR ratios over groups.

    .. math:: \min\big(\min_g TPR_g / \max_g TPR_g,\ \min_g FPR_g / \max_g FPR_g\big)

    (their mean with ``agg="mean"``). Arguments as for :func:`demographic_parity_difference`.

    Examples
    --------
    >>> equalized_odds_ratio([1, 0, 1, 0, 1, 0], [1, 1, 1, 0, 0, 0],
    ...                      sensitive_features=list("aabbcc"))
    0.0
    """
    return _disparity(
        ["true_positive_rate", "false_positive_rate"],
        "ratio",
        agg,
        y_true,
        y_pred,
        sensitive_features,
        method,
        sample_weight,
        data,
        pos_label,
    )


def equal_opportunity_difference(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    method: Method = "between_groups",
    sample_weight: Any | None = None,
    data: Any | None = None,
    pos_label: Label | None = None,
) -> float | None:
    r"""Equal opportunity difference (fairlearn): the spread of true positive rates over groups.

    .. math:: \max_g TPR_g - \min_g TPR_g

    Arguments as for :func:`demographic_parity_difference`.

    Examples
    --------
    >>> equal_opportunity_difference([1, 1, 1, 1], [1, 0, 1, 1], sensitive_features=list("aabb"))
    0.5
    """
    return _disparity(
        ["true_positive_rate"],
        "difference",
        "worst_case",
        y_true,
        y_pred,
        sensitive_features,
        method,
        sample_weight,
        data,
        pos_label,
    )


def equal_opportunity_ratio(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    method: Method = "between_groups",
    sample_weight: Any | None = None,
    data: Any | None = None,
    pos_label: Label | None = None,
) -> float | None:
    r"""Equal opportunity ratio (fairlearn): smallest over largest true positive rate.

    .. math:: \min_g TPR_g / \max_g TPR_g

    Arguments as for :func:`demographic_parity_difference`.

    Examples
    --------
    >>> equal_opportunity_ratio([1, 1, 1, 1], [1, 0, 1, 1], sensitive_features=list("aabb"))
    0.5
    """
    return _disparity(
        ["true_positive_rate"],
        "ratio",
        "worst_case",
        y_true,
        y_pred,
        sensitive_features,
        method,
        sample_weight,
        data,
        pos_label,
    )


def statistical_parity_difference(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    method: Method = "between_groups",
    sample_weight: Any | None = None,
    data: Any | None = None,
    pos_label: Label | None = None,
) -> float | None:
    r"""Statistical parity difference: the spread of selection rates over groups.

    .. math:: \max_g P(\hat Y=1 \mid g) - \min_g P(\hat Y=1 \mid g)

    (distance to the overall value with ``method="to_overall"``). Equal to
    :func:`demographic_parity_difference` (the name used by Virny and AIF360). Arguments as for
    :func:`demographic_parity_difference`; per-group values against a reference are
    :func:`~polars_fairmetrics.fairness_criteria`.

    Examples
    --------
    >>> statistical_parity_difference([1, 0, 1, 0], [1, 1, 0, 0], sensitive_features=list("aabb"))
    1.0
    """
    return _disparity(
        ["selection_rate"],
        "difference",
        "worst_case",
        y_true,
        y_pred,
        sensitive_features,
        method,
        sample_weight,
        data,
        pos_label,
    )


def disparate_impact(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    method: Method = "between_groups",
    sample_weight: Any | None = None,
    data: Any | None = None,
    pos_label: Label | None = None,
) -> float | None:
    r"""Disparate impact: smallest over largest selection rate (four-fifths rule: < 0.8).

    .. math:: \min_g P(\hat Y=1 \mid g) / \max_g P(\hat Y=1 \mid g)

    (distance to the overall value with ``method="to_overall"``). Equal to
    :func:`demographic_parity_ratio` (the name used by Virny and AIF360). Arguments as for
    :func:`demographic_parity_difference`; per-group values against a reference are
    :func:`~polars_fairmetrics.fairness_criteria`.

    Examples
    --------
    >>> disparate_impact([1, 0, 1, 0], [1, 1, 1, 0], sensitive_features=list("aabb"))
    0.5
    """
    return _disparity(
        ["selection_rate"],
        "ratio",
        "worst_case",
        y_true,
        y_pred,
        sensitive_features,
        method,
        sample_weight,
        data,
        pos_label,
    )


def predictive_equality_difference(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    method: Method = "between_groups",
    sample_weight: Any | None = None,
    data: Any | None = None,
    pos_label: Label | None = None,
) -> float | None:
    r"""Predictive equality difference: the spread of false positive rates over groups.

    .. math:: \max_g FPR_g - \min_g FPR_g

    (distance to the overall value with ``method="to_overall"``). Groups without actual negatives
    are left out. Arguments as for
    :func:`demographic_parity_difference`; per-group values against a reference are
    :func:`~polars_fairmetrics.fairness_criteria`.

    Examples
    --------
    >>> predictive_equality_difference([0, 0, 0, 0], [1, 0, 0, 0], sensitive_features=list("aabb"))
    0.5
    """
    return _disparity(
        ["false_positive_rate"],
        "difference",
        "worst_case",
        y_true,
        y_pred,
        sensitive_features,
        method,
        sample_weight,
        data,
        pos_label,
    )


def accuracy_equality_difference(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    method: Method = "between_groups",
    sample_weight: Any | None = None,
    data: Any | None = None,
    pos_label: Label | None = None,
) -> float | None:
    r"""Accuracy equality difference: the spread of accuracies over groups.

    .. math:: \max_g ACC_g - \min_g ACC_g

    (distance to the overall value with ``method="to_overall"``).  Arguments as for
    :func:`demographic_parity_difference`; per-group values against a reference are
    :func:`~polars_fairmetrics.fairness_criteria`.

    Examples
    --------
    >>> accuracy_equality_difference([1, 0, 1, 0], [0, 0, 1, 0], sensitive_features=list("aabb"))
    0.5
    """
    return _disparity(
        ["accuracy"],
        "difference",
        "worst_case",
        y_true,
        y_pred,
        sensitive_features,
        method,
        sample_weight,
        data,
        pos_label,
    )


def positive_predictive_parity_difference(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    method: Method = "between_groups",
    sample_weight: Any | None = None,
    data: Any | None = None,
    pos_label: Label | None = None,
) -> float | None:
    r"""Positive predictive parity difference: the spread of precision (PPV) over groups.

    .. math:: \max_g PPV_g - \min_g PPV_g

    (distance to the overall value with ``method="to_overall"``). Groups with nothing predicted
    positive are left out. Arguments as for
    :func:`demographic_parity_difference`; per-group values against a reference are
    :func:`~polars_fairmetrics.fairness_criteria`.

    Examples
    --------
    >>> positive_predictive_parity_difference([1, 0, 1, 0], [1, 1, 1, 0],
    ...     sensitive_features=list("aabb"))
    0.5
    """
    return _disparity(
        ["positive_predictive_value"],
        "difference",
        "worst_case",
        y_true,
        y_pred,
        sensitive_features,
        method,
        sample_weight,
        data,
        pos_label,
    )


def negative_predictive_parity_difference(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    method: Method = "between_groups",
    sample_weight: Any | None = None,
    data: Any | None = None,
    pos_label: Label | None = None,
) -> float | None:
    r"""Negative predictive parity difference: the spread of NPV over groups.

    .. math:: \max_g NPV_g - \min_g NPV_g

    (distance to the overall value with ``method="to_overall"``). Groups with nothing predicted
    negative are left out. Arguments as for
    :func:`demographic_parity_difference`; per-group values against a reference are
    :func:`~polars_fairmetrics.fairness_criteria`.

    Examples
    --------
    >>> negative_predictive_parity_difference([1, 0, 1, 0], [0, 0, 1, 0],
    ...     sensitive_features=list("aabb"))
    0.5
    """
    return _disparity(
        ["negative_predictive_value"],
        "difference",
        "worst_case",
        y_true,
        y_pred,
        sensitive_features,
        method,
        sample_weight,
        data,
        pos_label,
    )


def _metric_name(metric: str | Callable[..., Any]) -> str:
    if isinstance(metric, str):
        return metric
    name = getattr(metric, "__name__", "")
    if name in _SKLEARN_NAMES:
        return _SKLEARN_NAMES[name]
    raise InvalidOptionError(
        f"metric {metric!r}: MetricFrame computes the package's metrics by name (e.g. 'tpr', "
        f"'precision'); the known scikit-learn/fairlearn functions are {sorted(_SKLEARN_NAMES)}"
    )


class MetricFrame:
    """Per-group metrics and their disparities, in fairlearn's ``MetricFrame`` vocabulary.

    Built on one count table (one scan of the rows); every number comes from the package's metric
    definitions (0/0 is null). Metrics are named (``"tpr"``, ``"precision"``, …, see
    :data:`~polars_fairmetrics.METRICS`), or given as the scikit-learn/fairlearn functions of the
    same meaning (``recall_score``, ``selection_rate``, …), as a list or a mapping of output
    names.

    Parameters
    ----------
    metrics
        A metric, a list of metrics, or a mapping ``{output name: metric}``.
    y_true, y_pred, sensitive_features, sample_weight, data, pos_label
        As for :func:`demographic_parity_difference`.

    Examples
    --------
    >>> mf = MetricFrame(metrics=["tpr", "selection_rate"], y_true=[1, 0, 1, 1],
    ...                  y_pred=[1, 1, 0, 1], sensitive_features=["a", "a", "b", "b"])
    >>> mf.by_group
    shape: (2, 3)
    ┌─────────────────────┬─────┬────────────────┐
    │ sensitive_feature_0 ┆ tpr ┆ selection_rate │
    │ ---                 ┆ --- ┆ ---            │
    │ str                 ┆ f64 ┆ f64            │
    ╞═════════════════════╪═════╪════════════════╡
    │ a                   ┆ 1.0 ┆ 1.0            │
    │ b                   ┆ 0.5 ┆ 0.5            │
    └─────────────────────┴─────┴────────────────┘
    >>> mf.difference().rows()
    [('tpr', 0.5), ('selection_rate', 0.5)]
    """

    def __init__(
        self,
        *,
        metrics: str
        | Callable[..., Any]
        | Sequence[str | Callable[..., Any]]
        | Mapping[str, str | Callable[..., Any]],
        y_true: Any,
        y_pred: Any,
        sensitive_features: Any,
        sample_weight: Any | None = None,
        data: Any | None = None,
        pos_label: Label | None = None,
    ) -> None:
        if isinstance(metrics, Mapping):
            chosen = {str(k): _metric_name(v) for k, v in metrics.items()}
        elif isinstance(metrics, str) or callable(metrics):
            name = _metric_name(metrics)
            chosen = {name: name}
        else:
            chosen = {_metric_name(m): _metric_name(m) for m in metrics}
        self._names = {out: _metric_names(m)[0] for out, m in chosen.items()}
        counts, by = _counts(y_true, y_pred, sensitive_features, sample_weight, data, pos_label)
        self._counts = counts
        self.sensitive_features: list[str] = by
        groups, overall = _values(counts, by, list(dict.fromkeys(self._names.values())))
        self._by_group = groups.select(
            *by, *[pl.col(m).alias(out) for out, m in self._names.items()]
        )
        self._overall = {out: overall[m] for out, m in self._names.items()}

    @property
    def by_group(self) -> pl.DataFrame:
        """One row per group (the sensitive features' columns), one column per metric."""
        return self._by_group

    @property
    def overall(self) -> dict[str, float | None]:
        """Each metric on all rows."""
        return dict(self._overall)

    @property
    def counts(self) -> pl.DataFrame:
        """The count table every number is computed from."""
        return self._counts

    def _values(self, out: str) -> list[float]:
        return [v for v in self._by_group[out].to_list() if v is not None]

    def _table(self, column: str, fn: Callable[[str], float | None]) -> pl.DataFrame:
        names = list(self._names)
        return pl.DataFrame(
            {"metric": names, column: [fn(out) for out in names]},
            schema={"metric": pl.String, column: pl.Float64},
        )

    def group_min(self) -> pl.DataFrame:
        """The smallest defined group value of each metric (``metric``, ``min``)."""
        return self._table("min", lambda out: min(self._values(out), default=None))

    def group_max(self) -> pl.DataFrame:
        """The largest defined group value of each metric (``metric``, ``max``)."""
        return self._table("max", lambda out: max(self._values(out), default=None))

    def difference(self, method: Method = "between_groups") -> pl.DataFrame:
        """Each metric's spread over groups (``metric``, ``difference``), as fairlearn defines
        it."""
        _check_method(method)
        return self._table(
            "difference",
            lambda out: _summary(self._values(out), self._overall[out], "difference", method),
        )

    def ratio(self, method: Method = "between_groups") -> pl.DataFrame:
        """Each metric's smallest ratio over groups (``metric``, ``ratio``), as fairlearn does."""
        _check_method(method)
        return self._table(
            "ratio", lambda out: _summary(self._values(out), self._overall[out], "ratio", method)
        )

    def __repr__(self) -> str:
        return f"MetricFrame(metrics={list(self._names)}, by={self.sensitive_features})"
