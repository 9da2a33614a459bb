r"""Deployment class-prior correction: precision and friends under the deployment class ratio.

When the test data has a different class ratio than the world the classifier will serve (e.g.
1:10 in test, 1:10,000 in deployment), recall and the false positive rate carry over, but
precision does not (the note on deployment precision under class imbalance, with its
microchip-defect example). Keeping :math:`TP` fixed and scaling the negatives by the fold change
of the negative/positive ratio,

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

:func:`deployment_factors` is the one implementation of the factor :math:`k`;
:func:`~polars_fairmetrics.pr_curve` and :func:`~polars_fairmetrics.curve_summaries` use it too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import polars as pl

from polars_fairmetrics._typing import ColumnNames, FrameT, Label
from polars_fairmetrics._validate import as_list, as_real, schema_of
from polars_fairmetrics.counts import (
    COUNT_COLUMNS,
    WEIGHTED_COUNT_COLUMNS,
    confusion_counts,
    count_rows_or_table,
)
from polars_fairmetrics.exceptions import EmptyGroupError, InvalidOptionError
from polars_fairmetrics.inputs import accepts_tables
from polars_fairmetrics.metrics import (
    METRICS,
    Counts,
    _metric_names,
    _use_weighted,
    key_columns,
    metrics_from_counts,
)
from polars_fairmetrics.results import partitions_of
from polars_fairmetrics.weights import (
    _lookup,
    _once_per_sweep,
    _show,
    finish_counts,
    typed_levels,
)

__all__ = [
    "DEPLOYMENT_METRICS",
    "TEST_RATIOS",
    "Rate",
    "TestRatio",
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

TestRatio = Literal["pooled", "per_group"]
TEST_RATIOS: tuple[str, ...] = ("pooled", "per_group")
"""Which test class ratio :math:`neg_{test}/pos_{test}` a single deployment value is compared
with: ``"pooled"`` (default) — the whole table's (within each partition), one factor for every
group, which assumes the test negatives were subsampled alike in every group (the groups'
base-rate differences carry over to deployment); ``"per_group"`` — each group's own, which
assumes every group has the population's deployment class ratio (it erases the groups' base-rate
differences). A mapping ``{group: value}`` always uses each group's own test ratio."""

_POS = "_pfm_pos_test"
_NEG = "_pfm_neg_test"
_RATIO = "_pfm_ratio_deploy"
_FACTOR = "deploy_factor"
_BEST = "_pfm_best"
_PRECISION = "_pfm_precision"


def _deploy_ratio_value(value: Any, what: str) -> float:
    """neg/pos in deployment from a positive rate or a ratio, validated."""
    real = as_real(value)
    if real is None or not math.isfinite(real):
        raise InvalidOptionError(f"{what}={value!r} is not a finite number")
    if what == "deploy_positive_rate":
        if not 0.0 < real < 1.0:
            raise InvalidOptionError(
                f"deploy_positive_rate={value!r} must be strictly between 0 and 1: with no "
                "positives (or no negatives) in deployment the class ratio is undefined"
            )
        return (1.0 - real) / real
    if real <= 0:
        raise InvalidOptionError(f"deploy_neg_pos_ratio={value!r} must be positive")
    return real


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


def _check_test_ratio(test_ratio: object) -> None:
    if test_ratio not in TEST_RATIOS:
        raise InvalidOptionError(f"test_ratio={test_ratio!r}; expected one of {TEST_RATIOS}")


def _structure(columns: list[str], by: ColumnNames | None) -> tuple[list[str], list[str]]:
    """Group keys and partition columns of a count table."""
    missing = [c for c in COUNT_COLUMNS[:4] if c not in columns]
    if missing:
        raise InvalidOptionError(
            "expected a count table (from confusion_counts) with columns tp, fp, tn, fn; "
            f"missing: {', '.join(missing)}"
        )
    nonc = key_columns(columns)
    partitions = partitions_of(nonc)
    if by is None:
        return [c for c in nonc if c not in partitions], partitions
    keys = as_list(by)
    for k in keys:
        if k not in nonc:
            raise InvalidOptionError(f"by={k!r} is not a key column of the count table")
    other = [c for c in nonc if c not in keys and c not in partitions]
    if other:
        raise InvalidOptionError(
            f"the count table has key column(s) {other} besides by={keys}: count by these "
            "groups only, or pass by= with every key column"
        )
    return keys, [p for p in partitions if p not in keys]


def _with_n(lazy: pl.LazyFrame, columns: Sequence[str]) -> pl.LazyFrame:
    """The table with its ``n`` column (added from the four counts when missing)."""
    if "n" in columns:
        return lazy
    return lazy.with_columns(Counts.from_columns().n.cast(pl.Int64).alias("n"))


def _with_factor(
    counts: FrameT,
    deploy_positive_rate: Rate | None,
    deploy_neg_pos_ratio: Rate | None,
    by: ColumnNames | None,
    weighted: bool | None,
    test_ratio: TestRatio = "pooled",
) -> tuple[pl.LazyFrame, list[str], list[str], bool]:
    """The count table (lazy) with the validated factor column ``deploy_factor``.

    The one implementation of the deployment factor (:func:`deployment_factors` is its public
    face; the curves module calls that on a table of each group's class totals).
    """
    _check_test_ratio(test_ratio)
    columns = list(schema_of(counts).names())
    keys, partitions = _structure(columns, by)
    if _FACTOR in keys:  # the factor's own column
        raise InvalidOptionError(
            f"group column {_FACTOR!r} collides with an output column name; rename it first"
        )
    use_w = _use_weighted(columns, weighted)
    ratio = _deploy_ratio(deploy_positive_rate, deploy_neg_pos_ratio)
    c = Counts.from_columns(weighted=use_w)
    pos, neg = c.positives.cast(pl.Float64), c.negatives.cast(pl.Float64)
    if isinstance(ratio, float) and test_ratio == "pooled":
        # one deployment ratio for the population: the test ratio of the whole table (within
        # each partition), one factor for every group (negatives subsampled alike in all groups).
        # A group's class totals repeat at every threshold of a sweep, and the groups of an
        # exact curve table do not share thresholds: sum each group's totals once, over the
        # partitions other than the threshold (not per threshold, which pools whichever groups
        # happen to have a row there)
        once: list[str] = [p for p in partitions if p != "threshold"]
        first = _once_per_sweep(columns)
        pos_t = pl.when(first).then(pos).otherwise(0.0).sum()
        neg_t = pl.when(first).then(neg).otherwise(0.0).sum()
        if once:
            pos_t, neg_t = pos_t.over(once), neg_t.over(once)
        ratio_d: pl.Expr = pl.lit(ratio, dtype=pl.Float64)
    elif isinstance(ratio, float):
        # one deployment ratio, each group against its own test ratio
        pos_t, neg_t = pos, neg
        ratio_d = pl.lit(ratio, dtype=pl.Float64)
    else:
        if not keys:
            raise InvalidOptionError("a deployment mapping {group: value} needs group keys")
        for level in ratio:
            if len(level) != len(keys):
                raise InvalidOptionError(
                    f"deployment mapping key {_show(level)!r} does not match the keys {keys}"
                )
        pos_t, neg_t = pos, neg
        ratio = typed_levels(ratio, keys, schema_of(counts), "deployment mapping")
        ratio_d = _lookup([pl.col(k) for k in keys], ratio)
    lazy = _with_n(counts.lazy(), columns).with_columns(
        pos_t.alias(_POS), neg_t.alias(_NEG), ratio_d.alias(_RATIO)
    )
    lazy = lazy.with_columns((pl.col(_RATIO) * pl.col(_POS) / pl.col(_NEG)).alias(_FACTOR))
    per_group = not isinstance(ratio, float) or test_ratio == "per_group"

    def guard(frame: pl.DataFrame) -> pl.DataFrame:
        bad = frame.filter(pl.col(_RATIO).is_null())
        if bad.height:
            unlisted = bad.select(keys).unique().sort(keys, nulls_last=True).rows()
            shown = ", ".join(repr(_show(level)) for level in unlisted[:10])
            raise InvalidOptionError(
                f"the deployment mapping does not list the group(s) {shown} of column(s) "
                f"{keys}; give each group its deployment value"
            )
        sfx = "_w" if use_w else ""
        observed = frame
        if "replicate" in frame.columns:
            # a bootstrap resample (replicate != 0) without positives or negatives has no
            # test ratio: its correction is undefined there (null, counted by the intervals'
            # n_defined), while the observed data (replicate 0) must have both
            resample = pl.col("replicate") != 0
            undefined = resample & ((pl.col(_POS) <= 0) | (pl.col(_NEG) <= 0))
            frame = frame.with_columns(
                pl.when(undefined).then(None).otherwise(pl.col(_FACTOR)).alias(_FACTOR)
            )
            observed = frame.filter(~resample)
        for col, name, cells in (
            (_POS, "positives", [f"tp{sfx}", f"fn{sfx}"]),
            (_NEG, "negatives", [f"fp{sfx}", f"tn{sfx}"]),
        ):
            empty = observed.filter(pl.col(col) <= 0)
            if empty.height:
                where = (
                    f"the group {_show(empty.select(keys).row(0))!r} of column(s) {keys}"
                    if per_group and keys
                    else "the test data"
                )
                if partitions:
                    first = dict(zip(partitions, empty.select(partitions).row(0), strict=True))
                    where += f" (partition {first})"
                raise EmptyGroupError(
                    f"no {name} in {where} (column(s) {cells} sum to 0): the test class ratio "
                    "neg/pos is undefined, so the deployment correction cannot be computed"
                )
        return frame.drop(_POS, _NEG, _RATIO)

    schema = {k: v for k, v in lazy.collect_schema().items() if k not in (_POS, _NEG, _RATIO)}
    return lazy.map_batches(guard, schema=schema), keys, partitions, use_w


def _same_kind(out: pl.LazyFrame, like: FrameT) -> FrameT:
    if isinstance(like, pl.DataFrame):
        return out.collect()
    return out


@accepts_tables
def deployment_factors(
    counts: FrameT,
    *,
    deploy_positive_rate: Rate | None = None,
    deploy_neg_pos_ratio: Rate | None = None,
    by: ColumnNames | None = None,
    weighted: bool | None = None,
    test_ratio: TestRatio = "pooled",
) -> FrameT:
    r"""The deployment factor :math:`k = (neg_{deploy}/pos_{deploy}) / (neg_{test}/pos_{test})`.

    The one implementation of the factor: :func:`deployment_counts` scales the negatives by it,
    and :func:`~polars_fairmetrics.pr_curve` / :func:`~polars_fairmetrics.curve_summaries` call
    this function on their groups' class totals. See :func:`deployment_counts` for the options
    (the test ratio is measured on the table's weighted sums when it is weighted).

    Returns
    -------
    DataFrame or LazyFrame
        The deployment-factors kind of ``docs/results.md``: the key and partition columns and
        ``deploy_factor`` (Float64), the weight a negative row gets in deployment; one row per
        row of ``counts``, sorted by the keys.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"tp": [90], "fp": [10], "tn": [890], "fn": [10]})  # 1:9 in test
    >>> deployment_factors(t, deploy_neg_pos_ratio=9000)["deploy_factor"].item()
    1000.0
    """
    keys: list[str]
    partitions: list[str]
    lazy, keys, partitions, _ = _with_factor(
        counts, deploy_positive_rate, deploy_neg_pos_ratio, by, weighted, test_ratio
    )
    lead: list[str] = [*keys, *partitions]
    out = lazy.select(*lead, _FACTOR)
    if lead:
        out = out.sort(lead, nulls_last=True, maintain_order=True)
    return _same_kind(out, counts)


@accepts_tables
def deployment_counts(
    counts: FrameT,
    *,
    deploy_positive_rate: Rate | None = None,
    deploy_neg_pos_ratio: Rate | None = None,
    by: ColumnNames | None = None,
    weighted: bool | None = None,
    test_ratio: TestRatio = "pooled",
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
        population (see ``test_ratio``). A mapping ``{group: value}`` gives each group its own
        deployment value and factor (against the group's own test ratio).
    by
        The group key columns (default: the non-count, non-partition columns; given, they must
        be all of them).
    weighted
        Correct the weighted sums (default: when the table has them).
    test_ratio
        With a single deployment number, which test ratio it is compared with
        (:data:`TEST_RATIOS`). ``"pooled"`` (default): the test ratio is measured over all
        groups (within each partition) and the same factor corrects every group — this keeps the
        groups' base-rate differences, assuming the test negatives were subsampled alike in
        every group. ``"per_group"``: each group's own test ratio — this assumes every group has
        the population's deployment class ratio (it erases the groups' base-rate differences).
        :func:`~polars_fairmetrics.pr_curve` and :func:`~polars_fairmetrics.curve_summaries`
        take the same option with the same default.

    Returns
    -------
    DataFrame or LazyFrame
        A count table (``docs/results.md``): keys, partitions, ``tp fp tn fn n`` (the observed
        counts), ``tp_w, fp_w, tn_w, fn_w, n_w`` (Float64) holding the deployment counts, the
        null counts; read the metrics with ``weighted=True`` (the default).

    Raises
    ------
    InvalidOptionError
        When built: a positive rate of 0 or 1 (or outside), a ratio ≤ 0, both or neither given.
        When the query runs: a group missing from a deployment mapping.
    EmptyGroupError
        When the query runs: no positives or no negatives where the test ratio is measured.

    Examples
    --------
    The microchip example: 1 positive per 10 negatives in test, 1 per 10,000 in deployment (a
    1000-fold shift). A test precision of 0.998 becomes 0.33 in deployment.

    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> t = pl.DataFrame({"tp": [33_000], "fp": [67], "tn": [329_933], "fn": [0]})
    >>> d = deployment_counts(t, deploy_neg_pos_ratio=10_000)
    >>> d.select("fp_w", "tn_w").row(0)
    (67000.0, 329933000.0)
    >>> round(pfm.metrics_from_counts(d, metrics="precision")["value"].item(), 4)
    0.33
    >>> round(pfm.metrics_from_counts(t, metrics="precision")["value"].item(), 4)
    0.998
    """
    lazy, keys, _, use_w = _with_factor(
        counts, deploy_positive_rate, deploy_neg_pos_ratio, by, weighted, test_ratio
    )
    d = _deployment_counts(Counts.from_columns(weighted=use_w))
    names = WEIGHTED_COUNT_COLUMNS
    corrected = [e.alias(n) for e, n in zip((d.tp, d.fp, d.tn, d.fn), names[:4], strict=True)]
    out = (
        lazy.with_columns(corrected)
        .with_columns(pl.sum_horizontal(list(names[:4])).alias(names[4]))
        .drop(_FACTOR)
    )
    return _same_kind(finish_counts(out, keys=keys), counts)


@accepts_tables
def deployment_metrics(
    data: FrameT,
    *,
    deploy_positive_rate: Rate | None = None,
    deploy_neg_pos_ratio: Rate | None = None,
    metrics: str | Sequence[str] | None = DEPLOYMENT_METRICS,
    by: ColumnNames | None = None,
    test_ratio: TestRatio = "pooled",
    y_true: str | None = None,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    wide: bool = False,
) -> FrameT:
    r"""Metrics at the deployment class ratio, per group.

    :func:`~polars_fairmetrics.metrics_from_counts` on :func:`deployment_counts`:
    :math:`Precision_{deploy} = TP / (TP + k\,FP)`, NPV :math:`= kTN / (kTN + FN)`,
    :math:`F_1 = 2TP / (2TP + kFP + FN)`, accuracy :math:`= (TP + kTN) / (TP + FN + k(FP + TN))`;
    recall and FPR equal their test values. The test values are ``metrics_from_counts`` of the
    uncorrected table; the factor :math:`k` is :func:`deployment_factors`.

    Parameters
    ----------
    data
        A count table, or rows with ``y_true=`` and ``y_pred=`` (or ``y_score=`` +
        ``threshold=``): they are counted first, in one scan.
    deploy_positive_rate, deploy_neg_pos_ratio, by, test_ratio
        As for :func:`deployment_counts`.
    metrics
        Metric names or aliases (default: precision, NPV, F1, accuracy, recall, FPR).
    y_true, y_pred, y_score, threshold, weight, pos_label, neg_label
        As for :func:`~polars_fairmetrics.confusion_counts` (rows only).
    wide
        One row per group, one column per metric (``docs/results.md``).

    Returns
    -------
    DataFrame or LazyFrame
        The group-values kind of ``docs/results.md``: keys and partitions, ``metric``,
        ``value`` (at the deployment ratio), ``support`` (observed counts), ``n``, ``n_null``
        (when the table has it), ``n_w`` (the group's size at the deployment ratio,
        :math:`TP + FN + k(FP + TN)`).

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"tp": [80], "fp": [20], "tn": [880], "fn": [20]})  # 1:9 in test
    >>> out = deployment_metrics(t, deploy_positive_rate=0.001, metrics="precision")
    >>> round(out["value"].item(), 4)  # k = 999 / 9 = 111; the test precision is 0.8
    0.0348
    """
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
    )
    names = _metric_names(metrics)
    corrected = deployment_counts(
        counts,
        deploy_positive_rate=deploy_positive_rate,
        deploy_neg_pos_ratio=deploy_neg_pos_ratio,
        by=by,
        test_ratio=test_ratio,
    )
    keys, _ = _structure(list(schema_of(corrected).names()), by)
    return metrics_from_counts(corrected, metrics=names, weighted=True, by=keys, wide=wide)


def _deployment_counts(c: Counts) -> Counts:
    """Counts with the negatives scaled by the ``deploy_factor`` column."""
    k = pl.col(_FACTOR)
    return Counts(
        tp=c.tp.cast(pl.Float64),
        fp=c.fp.cast(pl.Float64) * k,
        tn=c.tn.cast(pl.Float64) * k,
        fn=c.fn.cast(pl.Float64),
    )


@accepts_tables
def threshold_for_precision(
    data: FrameT,
    *,
    min_precision: float,
    deploy_positive_rate: Rate | None = None,
    deploy_neg_pos_ratio: Rate | None = None,
    by: ColumnNames | None = None,
    test_ratio: TestRatio = "pooled",
    metrics: str | Sequence[str] | None = ("positive_predictive_value", "true_positive_rate"),
    y_true: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    wide: bool = False,
) -> FrameT:
    r"""Per group, the lowest threshold whose (deployment) precision reaches ``min_precision``.

    On a threshold sweep (a count table with a ``threshold`` column, or rows with ``y_score=`` and
    a ``threshold=`` grid), the answer to "which threshold gives deployment precision
    :math:`\ge p`?": among the thresholds :math:`t` with
    :math:`TP_t / (TP_t + k\,FP_t) \ge p`, the lowest (the one with the highest recall), and the
    metrics there. Without a deployment value (both ``deploy_*`` None) the test precision is used
    (the weighted one for a weighted table).

    Parameters
    ----------
    data
        A count table with a ``threshold`` column, or rows (``y_true=``, ``y_score=``).
    min_precision
        The precision to reach, in [0, 1].
    deploy_positive_rate, deploy_neg_pos_ratio, by, test_ratio
        As for :func:`deployment_counts` (both None: no correction).
    metrics
        The metrics reported at the chosen threshold, at the deployment ratio (default:
        precision and recall).
    y_true, y_score, threshold, weight, pos_label, neg_label
        Rows only: counted with :func:`~polars_fairmetrics.confusion_counts`;
        ``threshold`` is the grid (default: 0, 0.01, …, 1; one number is a grid of one).
    wide
        One row per group, one column per metric (``docs/results.md``).

    Returns
    -------
    DataFrame or LazyFrame
        The group-values kind of ``docs/results.md``, one threshold per group: keys, the other
        partitions, ``threshold`` (the chosen one; null when no threshold of the grid reaches the
        precision — then the values are null and the supports 0), ``metric``, ``value``,
        ``support``, ``n``, ``n_null``, ``n_w`` (weighted or corrected tables).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 0, 1, 0, 0, 0, 0], "s": [.9, .8, .7, .6, .5, .4, .3, .2]})
    >>> out = threshold_for_precision(df, y_true="y", y_score="s", min_precision=0.7,
    ...                               threshold=[0.2, 0.4, 0.6, 0.8])
    >>> out.select("threshold", "metric", "value").rows()
    [(0.6, 'positive_predictive_value', 0.75), (0.6, 'true_positive_rate', 1.0)]
    """
    wanted = as_real(min_precision)
    if wanted is None or not 0.0 <= wanted <= 1.0:
        raise InvalidOptionError(f"min_precision={min_precision!r} must be a number in [0, 1]")
    min_precision = wanted
    names = _metric_names(metrics)
    if y_true is not None:
        if y_score is None:
            raise InvalidOptionError("threshold_for_precision needs y_score= with rows")
        grid: Any = [i / 100 for i in range(101)] if threshold is None else threshold
        if as_real(grid) is not None:
            grid = [grid]  # one threshold: a sweep of one (not iterated as a sequence)
        elif isinstance(grid, str | bytes):
            raise InvalidOptionError(
                f"threshold={threshold!r} must be a list of numbers (the thresholds to try)"
            )
        counts = confusion_counts(
            data,
            y_true=y_true,
            y_score=y_score,
            threshold=grid,
            by=by,
            weight=weight,
            pos_label=pos_label,
            neg_label=neg_label,
        )
    else:
        counts = count_rows_or_table(
            data, y_true=None, y_score=y_score, threshold=threshold, weight=weight
        )
    columns = list(schema_of(counts).names())
    if "threshold" not in columns:
        raise InvalidOptionError(
            "threshold_for_precision needs a threshold sweep: a count table with a 'threshold' "
            "column (confusion_counts(y_score=..., threshold=[...]))"
        )
    keys: list[str]
    partitions: list[str]
    keys, partitions = _structure(columns, by)
    if deploy_positive_rate is None and deploy_neg_pos_ratio is None:
        _check_test_ratio(test_ratio)
        sweep: pl.LazyFrame = _with_n(counts.lazy(), columns)
        weighted = None
    else:
        sweep = deployment_counts(
            counts.lazy(),
            deploy_positive_rate=deploy_positive_rate,
            deploy_neg_pos_ratio=deploy_neg_pos_ratio,
            by=by,
            test_ratio=test_ratio,
        )
        weighted = True
    use_w = _use_weighted(list(sweep.collect_schema().names()), weighted)
    groups: list[str] = [*keys, *[p for p in partitions if p != "threshold"]]
    precision = METRICS["positive_predictive_value"].func(Counts.from_columns(weighted=use_w))
    ok = (pl.col(_PRECISION) >= min_precision).fill_null(False)

    def per_group(expr: pl.Expr) -> pl.Expr:
        return expr.over(groups) if groups else expr

    # the lowest feasible threshold of each group; a group with none keeps one row, zeroed
    best = per_group(pl.col("threshold").filter(ok).min())
    last = per_group(pl.col("threshold").max())
    chosen = (
        sweep.with_columns(precision.alias(_PRECISION))
        .with_columns(best.alias(_BEST))
        .filter(
            (pl.col("threshold") == pl.col(_BEST))
            | (pl.col(_BEST).is_null() & (pl.col("threshold") == last))
        )
    )
    count_cols = [
        c for c in (*COUNT_COLUMNS[:4], *WEIGHTED_COUNT_COLUMNS[:4]) if c in schema_of(sweep)
    ]
    none = pl.col(_BEST).is_null()
    chosen = chosen.with_columns(
        *[pl.when(none).then(pl.col(c) * 0).otherwise(pl.col(c)).alias(c) for c in count_cols],
        pl.col(_BEST).alias("threshold"),
    ).drop(_BEST, _PRECISION)
    out = metrics_from_counts(chosen, metrics=names, weighted=use_w, by=keys, wide=wide)
    return _same_kind(out, counts)
