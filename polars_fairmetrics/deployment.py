r"""Deployment class-prior correction: precision and friends under the deployment class ratio.

When the test data has a different class ratio than the world the classifier will serve (e.g.
1:10 in test, 1:10,000 in deployment), recall and the false positive rate carry over, but
precision does not (seed *deployment-precision-class-imbalance*). Keeping :math:`TP` fixed and
scaling the negatives by the fold change of the negative/positive ratio,

.. math::

    k = \frac{neg_{deploy} / pos_{deploy}}{neg_{test} / pos_{test}},\qquad
    FP_{deploy} = k\,FP_{test},\quad TN_{deploy} = k\,TN_{test},

and every metric is the ordinary one on the corrected counts:
:math:`Precision_{deploy} = TP / (TP + k\,FP)`, likewise NPV, F1, accuracy; recall and FPR are
unchanged (:math:`FP` and :math:`TN` scale together). This is exactly weighting every negative
row by :math:`k` (``confusion_counts(weight=...)``); and, as precision is a ratio, also the
importance weighting of the label column with target mix :math:`\{1: \pi_{deploy},
0: 1 - \pi_{deploy}\}`.

The corrected counts are written to the weighted-count columns ``tp_w, fp_w, tn_w, fn_w, n_w``
(Float64), so that every metric, disparity and threshold sweep of the package reads deployment
values with ``weighted=True`` (the default when those columns exist), while ``tp, fp, tn, fn``
keep the observed integer counts (the support).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polars_fairmetrics._typing import ColumnNames, FrameT, Label
from polars_fairmetrics._validate import as_list, schema_of
from polars_fairmetrics.counts import (
    COUNT_COLUMNS,
    PARTITION_COLUMNS,
    WEIGHTED_COUNT_COLUMNS,
    confusion_counts,
    is_weighted,
)
from polars_fairmetrics.exceptions import EmptyGroupError, InvalidOptionError
from polars_fairmetrics.metrics import METRICS, Counts, _metric_names, key_columns
from polars_fairmetrics.weights import _lookup, _show, long_metrics

__all__ = [
    "DEPLOYMENT_METRICS",
    "deployment_counts",
    "deployment_factors",
    "deployment_metrics",
    "threshold_for_precision",
]

DEPLOYMENT_METRICS: tuple[str, ...] = (
    "positive_predictive_value",
    "negative_predictive_value",
    "f1_score",
    "accuracy",
    "true_positive_rate",
    "false_positive_rate",
)
"""The metrics :func:`deployment_metrics` reports by default."""

Rate = float | Mapping[Any, float]
"""One deployment value for the whole population, or ``{group: value}``."""

_POS = "_pfm_pos_test"
_NEG = "_pfm_neg_test"
_RATIO = "_pfm_ratio_deploy"
_FACTOR = "deploy_factor"


def _deploy_ratio_value(value: Any, what: str) -> float:
    """neg/pos in deployment from a positive rate or a ratio, validated."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidOptionError(f"{what}={value!r} is not a finite number")
    if what == "deploy_positive_rate":
        if not 0.0 < value < 1.0:
            raise InvalidOptionError(
                f"deploy_positive_rate={value!r} must be strictly between 0 and 1: with no "
                "positives (or no negatives) in deployment the class ratio is undefined"
            )
        return (1.0 - value) / value
    if value <= 0:
        raise InvalidOptionError(f"deploy_neg_pos_ratio={value!r} must be positive")
    return float(value)


def _deploy_ratio(
    deploy_positive_rate: Rate | None, deploy_neg_pos_ratio: Rate | None
) -> float | dict[tuple[Any, ...], float]:
    if (deploy_positive_rate is None) == (deploy_neg_pos_ratio is None):
        raise InvalidOptionError(
            "pass exactly one of deploy_positive_rate= (share of positives in deployment) or "
            "deploy_neg_pos_ratio= (negatives per positive in deployment)"
        )
    what = "deploy_positive_rate" if deploy_positive_rate is not None else "deploy_neg_pos_ratio"
    value = deploy_positive_rate if deploy_positive_rate is not None else deploy_neg_pos_ratio
    if isinstance(value, Mapping):
        if not value:
            raise InvalidOptionError(f"{what} is an empty mapping")
        return {
            (tuple(k) if isinstance(k, tuple) else (k,)): _deploy_ratio_value(v, f"{what}")
            for k, v in value.items()
        }
    return _deploy_ratio_value(value, what)


def _structure(columns: list[str], by: ColumnNames | None) -> tuple[list[str], list[str]]:
    """Group keys and partition columns of a count table."""
    missing = [c for c in COUNT_COLUMNS[:4] if c not in columns]
    if missing:
        raise InvalidOptionError(
            "expected a count table (from confusion_counts) with columns tp, fp, tn, fn; "
            f"missing: {', '.join(missing)}"
        )
    nonc = key_columns(columns)
    if by is not None:
        keys = as_list(by)
        for k in keys:
            if k not in nonc:
                raise InvalidOptionError(f"by={k!r} is not a key column of the count table")
    else:
        keys = [c for c in nonc if c not in PARTITION_COLUMNS]
    partitions = [c for c in nonc if c not in keys]
    return keys, partitions


def _with_factor(
    counts: FrameT,
    deploy_positive_rate: Rate | None,
    deploy_neg_pos_ratio: Rate | None,
    by: ColumnNames | None,
    weighted: bool | None,
) -> tuple[pl.LazyFrame, list[str], list[str], bool]:
    """The count table (lazy) with the validated factor column ``deploy_factor``."""
    columns = list(schema_of(counts).names())
    keys, partitions = _structure(columns, by)
    has_w = is_weighted(columns)
    if weighted and not has_w:
        raise InvalidOptionError("weighted=True but the count table has no weighted columns")
    use_w = has_w if weighted is None else weighted
    ratio = _deploy_ratio(deploy_positive_rate, deploy_neg_pos_ratio)
    c = Counts.from_columns(weighted=use_w)
    pos, neg = c.positives.cast(pl.Float64), c.negatives.cast(pl.Float64)
    if isinstance(ratio, float):
        # one deployment ratio for the population: the test ratio of the whole table (within
        # each partition), one factor for every group (negatives subsampled alike in all groups)
        pos_t = pos.sum().over(partitions) if partitions else pos.sum()
        neg_t = neg.sum().over(partitions) if partitions else neg.sum()
        ratio_d: pl.Expr = pl.lit(ratio, dtype=pl.Float64)
    else:
        if not keys:
            raise InvalidOptionError("a deployment mapping {group: value} needs group keys")
        for level in ratio:
            if len(level) != len(keys):
                raise InvalidOptionError(
                    f"deployment mapping key {_show(level)!r} does not match the keys {keys}"
                )
        pos_t, neg_t = pos, neg
        ratio_d = _lookup([pl.col(k) for k in keys], ratio)
    lazy = counts.lazy().with_columns(
        pos_t.alias(_POS), neg_t.alias(_NEG), ratio_d.alias(_RATIO)
    )
    lazy = lazy.with_columns(
        (pl.col(_RATIO) * pl.col(_POS) / pl.col(_NEG)).alias(_FACTOR)
    )
    per_group = not isinstance(ratio, float)

    def guard(frame: pl.DataFrame) -> pl.DataFrame:
        bad = frame.filter(pl.col(_RATIO).is_null())
        if bad.height:
            level = bad.select(keys).row(0)
            raise EmptyGroupError(
                f"the deployment mapping does not list the group {_show(level)!r} of {keys}"
            )
        for col, name in ((_POS, "positives"), (_NEG, "negatives")):
            empty = frame.filter(pl.col(col) <= 0)
            if empty.height:
                where = (f"the {keys} group {_show(empty.select(keys).row(0))!r}" if per_group
                         else "the test data")
                if partitions:
                    where += f" (partition {dict(zip(partitions, empty.select(partitions).row(0), strict=True))})"  # noqa: E501
                raise EmptyGroupError(
                    f"no {name} in {where}: the test class ratio neg/pos is undefined, so the "
                    "deployment correction cannot be computed"
                )
        return frame.drop(_POS, _NEG, _RATIO)

    schema = {k: v for k, v in lazy.collect_schema().items() if k not in (_POS, _NEG, _RATIO)}
    return lazy.map_batches(guard, schema=schema), keys, partitions, use_w


def deployment_factors(
    counts: FrameT,
    *,
    deploy_positive_rate: Rate | None = None,
    deploy_neg_pos_ratio: Rate | None = None,
    by: ColumnNames | None = None,
    weighted: bool | None = None,
) -> FrameT:
    r"""The factor :math:`k = (neg_{deploy}/pos_{deploy}) / (neg_{test}/pos_{test})` per row.

    See :func:`deployment_counts` for the options. Returns the key and partition columns and
    ``deploy_factor`` (Float64): the weight a negative row gets in deployment.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"tp": [90], "fp": [10], "tn": [890], "fn": [10]})  # 1:9 in test
    >>> deployment_factors(t, deploy_neg_pos_ratio=9000)["deploy_factor"].item()
    1000.0
    """
    keys: list[str]
    partitions: list[str]
    lazy, keys, partitions, _ = _with_factor(counts, deploy_positive_rate,
                                             deploy_neg_pos_ratio, by, weighted)
    out = lazy.select([*keys, *partitions, _FACTOR])
    if isinstance(counts, pl.DataFrame):
        return out.collect()
    return out


def deployment_counts(
    counts: FrameT,
    *,
    deploy_positive_rate: Rate | None = None,
    deploy_neg_pos_ratio: Rate | None = None,
    by: ColumnNames | None = None,
    weighted: bool | None = None,
) -> FrameT:
    r"""A count table corrected to the deployment class ratio (in the weighted columns).

    .. math::

        k = \frac{neg_{deploy} / pos_{deploy}}{neg_{test} / pos_{test}},\quad
        tp_w = TP,\ fn_w = FN,\ fp_w = k\,FP,\ tn_w = k\,TN,\ n_w = tp_w + fp_w + tn_w + fn_w

    with :math:`pos_{test} = TP + FN` and :math:`neg_{test} = FP + TN` measured from the table
    (weighted sums when it is weighted: then the weighted columns are scaled).

    Parameters
    ----------
    counts
        A count table from :func:`~polars_fairmetrics.confusion_counts` (any groups, thresholds,
        replicates).
    deploy_positive_rate, deploy_neg_pos_ratio
        Exactly one: the share of positives in deployment (strictly between 0 and 1), or the
        number of negatives per positive (positive). A single number applies to the whole
        population: the test ratio is measured over all groups (within each partition) and the
        same factor corrects every group, which keeps the groups' base-rate differences
        (negatives assumed subsampled alike in every group). A mapping ``{group: value}`` gives
        each group its own deployment value and factor (measured from the group's own counts).
    by
        The group key columns (default: the non-count, non-partition columns).
    weighted
        Correct the weighted sums (default: when the table has them).

    Returns
    -------
    DataFrame or LazyFrame
        The same table with ``tp_w, fp_w, tn_w, fn_w, n_w`` (Float64) holding the deployment
        counts; read the metrics with ``weighted=True`` (the default).

    Raises
    ------
    InvalidOptionError
        When built: a positive rate of 0 or 1 (or outside), a ratio ≤ 0, both or neither given.
    EmptyGroupError
        When the query runs: no positives or no negatives where the test ratio is measured, or
        a group missing from a deployment mapping.

    Examples
    --------
    The seed's microchip example: 1 positive per 10 negatives in test, 1 per 10,000 in
    deployment (a 1000-fold shift). A test precision of 0.998 becomes 0.33 in deployment.

    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> t = pl.DataFrame({"tp": [33_000], "fp": [67], "tn": [329_933], "fn": [0]})
    >>> d = deployment_counts(t, deploy_neg_pos_ratio=10_000)
    >>> d.select("fp_w", "tn_w").row(0)
    (67000.0, 329933000.0)
    >>> p = pfm.metrics_from_counts(d, metrics="precision", weighted=True)
    >>> round(p["positive_predictive_value"].item(), 4)
    0.33
    >>> test = pfm.metrics_from_counts(t, metrics="precision")
    >>> round(test["positive_predictive_value"].item(), 4)
    0.998
    """
    lazy, _, _, use_w = _with_factor(counts, deploy_positive_rate, deploy_neg_pos_ratio, by,
                                     weighted)
    d = _deployment_counts(Counts.from_columns(weighted=use_w))
    names = WEIGHTED_COUNT_COLUMNS
    corrected = [e.alias(n) for e, n in zip((d.tp, d.fp, d.tn, d.fn), names[:4], strict=True)]
    out = lazy.with_columns(corrected).with_columns(
        pl.sum_horizontal(list(names[:4])).alias(names[4])
    ).drop(_FACTOR)
    if isinstance(counts, pl.DataFrame):
        return out.collect()
    return out


def _count_if_rows(
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
) -> tuple[FrameT, ColumnNames | None]:
    """Rows (``y_true`` given) are counted first; otherwise ``data`` is a count table."""
    if y_true is None:
        for name, v in (("y_pred", y_pred), ("y_score", y_score), ("weight", weight)):
            if v is not None:
                raise InvalidOptionError(f"{name}= needs y_true= (rows); got a count table")
        return data, by
    counts = confusion_counts(data, y_true=y_true, y_pred=y_pred, y_score=y_score,
                              threshold=threshold, by=by, weight=weight, pos_label=pos_label,
                              neg_label=neg_label)
    return counts, by


def deployment_metrics(
    data: FrameT,
    *,
    deploy_positive_rate: Rate | None = None,
    deploy_neg_pos_ratio: Rate | None = None,
    metrics: str | Sequence[str] | None = DEPLOYMENT_METRICS,
    by: ColumnNames | None = None,
    y_true: str | None = None,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
) -> FrameT:
    r"""Metrics at the deployment class ratio, beside their test values, per group.

    The metrics are the package's own, evaluated on :func:`deployment_counts`:
    :math:`Precision_{deploy} = TP / (TP + k\,FP)`, NPV :math:`= kTN / (kTN + FN)`,
    :math:`F_1 = 2TP / (2TP + kFP + FN)`, accuracy :math:`= (TP + kTN) / (TP + FN + k(FP + TN))`;
    recall and FPR equal their test values.

    Parameters
    ----------
    data
        A count table, or rows with ``y_true=`` and ``y_pred=`` (or ``y_score=`` +
        ``threshold=``): they are counted first, in one scan.
    deploy_positive_rate, deploy_neg_pos_ratio, by
        As for :func:`deployment_counts`.
    metrics
        Metric names or aliases (default: precision, NPV, F1, accuracy, recall, FPR).
    y_true, y_pred, y_score, threshold, weight, pos_label, neg_label
        As for :func:`~polars_fairmetrics.confusion_counts` (rows only).

    Returns
    -------
    DataFrame or LazyFrame
        Keys and partitions, ``metric``, ``value`` (deployment), ``test_value``, ``support``,
        ``n``.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"tp": [80], "fp": [20], "tn": [880], "fn": [20]})  # 1:9 in test
    >>> out = deployment_metrics(t, deploy_positive_rate=0.001, metrics="precision")
    >>> [round(v, 4) for v in out.select("value", "test_value").row(0)]  # k = 999 / 9 = 111
    [0.0348, 0.8]
    """
    counts, by = _count_if_rows(data, y_true=y_true, y_pred=y_pred, y_score=y_score,
                                threshold=threshold, by=by, weight=weight, pos_label=pos_label,
                                neg_label=neg_label)
    names = _metric_names(metrics)
    keys: list[str]
    partitions: list[str]
    lazy, keys, partitions, use_w = _with_factor(counts, deploy_positive_rate,
                                                 deploy_neg_pos_ratio, by, None)
    test = Counts.from_columns(weighted=use_w)
    deploy = _deployment_counts(test)
    values = {m: [("value", METRICS[m].func(deploy)), ("test_value", METRICS[m].func(test))]
              for m in names}
    out = long_metrics(lazy, values, keys=[*keys, *partitions], sizes=("n", _FACTOR))
    if isinstance(counts, pl.DataFrame):
        return out.collect()
    return out


def _deployment_counts(c: Counts) -> Counts:
    """Counts with the negatives scaled by the ``deploy_factor`` column."""
    k = pl.col(_FACTOR)
    return Counts(tp=c.tp.cast(pl.Float64), fp=c.fp.cast(pl.Float64) * k,
                  tn=c.tn.cast(pl.Float64) * k, fn=c.fn.cast(pl.Float64))


def threshold_for_precision(
    data: FrameT,
    *,
    min_precision: float,
    deploy_positive_rate: Rate | None = None,
    deploy_neg_pos_ratio: Rate | None = None,
    by: ColumnNames | None = None,
    y_true: str | None = None,
    y_score: str | None = None,
    threshold: Sequence[float] | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
) -> FrameT:
    r"""Per group, the lowest threshold whose (deployment) precision reaches ``min_precision``.

    On a threshold sweep (a count table with a ``threshold`` column, or rows with ``y_score=`` and
    a ``threshold=`` grid), the answer to "which threshold gives deployment precision
    :math:`\ge p`?": among the thresholds :math:`t` with
    :math:`TP_t / (TP_t + k\,FP_t) \ge p`, the lowest (the one with the highest recall).
    Without a deployment value (both ``deploy_*`` None) the test precision is used.

    Parameters
    ----------
    data
        A count table with a ``threshold`` column, or rows (``y_true=``, ``y_score=``).
    min_precision
        The precision to reach, in [0, 1].
    deploy_positive_rate, deploy_neg_pos_ratio, by
        As for :func:`deployment_counts` (both None: no correction).
    y_true, y_score, threshold, weight, pos_label, neg_label
        Rows only: counted with :func:`~polars_fairmetrics.confusion_counts`;
        ``threshold`` is the grid (default: 0, 0.01, …, 1).

    Returns
    -------
    DataFrame or LazyFrame
        One row per group (and partition other than ``threshold``): ``threshold`` (null when no
        threshold of the grid reaches the precision), ``precision`` (deployment),
        ``test_precision``, ``recall``, sorted by the keys.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 0, 1, 0, 0, 0, 0], "s": [.9, .8, .7, .6, .5, .4, .3, .2]})
    >>> out = threshold_for_precision(df, y_true="y", y_score="s", min_precision=0.7,
    ...                               threshold=[0.2, 0.4, 0.6, 0.8])
    >>> out.row(0)
    (0.6, 0.75, 0.75, 1.0)
    """
    if (isinstance(min_precision, bool) or not isinstance(min_precision, (int, float))
            or not 0.0 <= min_precision <= 1.0):
        raise InvalidOptionError(f"min_precision={min_precision!r} must be a number in [0, 1]")
    if y_true is not None:
        if y_score is None:
            raise InvalidOptionError("threshold_for_precision needs y_score= with rows")
        grid = list(threshold) if threshold is not None else [i / 100 for i in range(101)]
        counts = confusion_counts(data, y_true=y_true, y_score=y_score, threshold=grid, by=by,
                                  weight=weight, pos_label=pos_label, neg_label=neg_label)
    else:
        if y_score is not None or threshold is not None or weight is not None:
            raise InvalidOptionError("y_score=, threshold= and weight= need y_true= (rows)")
        counts = data
    columns = list(schema_of(counts).names())
    if "threshold" not in columns:
        raise InvalidOptionError(
            "threshold_for_precision needs a threshold sweep: a count table with a 'threshold' "
            "column (confusion_counts(y_score=..., threshold=[...]))"
        )
    keys: list[str]
    partitions: list[str]
    if deploy_positive_rate is None and deploy_neg_pos_ratio is None:
        keys, partitions = _structure(columns, by)
        use_w = is_weighted(columns)
        lazy = counts.lazy().with_columns(pl.lit(1.0).alias(_FACTOR))
    else:
        lazy, keys, partitions, use_w = _with_factor(counts, deploy_positive_rate,
                                                     deploy_neg_pos_ratio, by, None)
    groups: list[str] = [*keys, *[p for p in partitions if p != "threshold"]]
    test = Counts.from_columns(weighted=use_w)
    deploy = _deployment_counts(test)
    sweep = lazy.select(
        *groups,
        "threshold",
        METRICS["positive_predictive_value"].func(deploy).alias("precision"),
        METRICS["positive_predictive_value"].func(test).alias("test_precision"),
        METRICS["true_positive_rate"].func(test).alias("recall"),
    )
    # one pass over the (small) sweep: the lowest feasible threshold and the values there
    ok = (pl.col("precision") >= min_precision).fill_null(False)
    feasible = pl.col("threshold").filter(ok)

    def at_best(column: str) -> pl.Expr:
        return pl.col(column).filter(ok).sort_by(feasible).first()

    aggs = [feasible.min().alias("threshold"),
            *[at_best(c) for c in ("precision", "test_precision", "recall")]]
    if groups:
        out = sweep.group_by(groups).agg(aggs).sort(groups, nulls_last=True)
    else:
        out = sweep.select(aggs)
    out = out.select(*groups, "threshold", "precision", "test_precision", "recall")
    if isinstance(counts, pl.DataFrame):
        return out.collect()
    return out
