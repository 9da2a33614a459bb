r"""Is a disparity more than noise? Two-proportion tests with a multiple-comparison correction.

For a metric that is a share of its support (TPR = TP / (TP + FN), selection rate, precision, …;
:attr:`MetricSpec.proportion`), the group's rate :math:`\hat p_1 = x_1 / n_1` and the reference's
:math:`\hat p_2 = x_2 / n_2` are compared by the two-proportion score test:

.. math::

    z = \frac{\hat p_1 - \hat p_2}{\sqrt{\bar p (1 - \bar p) (1 / n_1 + 1 / n_2)}},\qquad
    \bar p = \frac{x_1 + x_2}{n_1 + n_2},\qquad p = \operatorname{erfc}(|z| / \sqrt 2).

The group and the reference must be disjoint samples: against ``"overall"`` the test compares the
group with the rest (:math:`p_g = p_{all} \iff p_g = p_{rest}`), against a named group the two
groups. Tests are run on the unweighted counts. The normal approximation wants a few rows in each
cell (the usual rule: :math:`n\bar p \ge 5` and :math:`n (1 - \bar p) \ge 5` on both sides);
``min_support`` leaves smaller groups untested (null), and the intervals of
:mod:`polars_fairmetrics.bootstrap` remain the tool for small groups and non-proportion metrics.

Every p-value of the table is one family: ``correction="holm"`` (Holm–Bonferroni, controls the
family-wise error rate; default), ``"bh"`` (Benjamini–Hochberg, the false discovery rate) or
``"none"``. aequitas reports unadjusted tests per group; with 17 metrics × 6 groups a family
correction is what makes "significant" mean something.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import polars as pl

from polars_fairmetrics._typing import ColumnNames, FrameT, Label
from polars_fairmetrics._validate import as_integer, as_real
from polars_fairmetrics.counts import COUNT_COLUMNS
from polars_fairmetrics.disparity import (
    Reference,
    _count_table,
    check_reference,
    compare,
    reference_statistics,
)
from polars_fairmetrics.exceptions import InvalidOptionError
from polars_fairmetrics.inputs import accepts_tables
from polars_fairmetrics.metrics import METRICS, Counts, _metric_names, metric_columns
from polars_fairmetrics.results import finish, from_wide

__all__ = ["Correction", "disparity_tests", "erfc"]

Correction = Literal["holm", "bh", "none"]

_REF = "_pfm_ref_"


def erfc(x: pl.Expr) -> pl.Expr:
    r"""The complementary error function of a non-negative expression, natively in Polars.

    Chebyshev fit of Numerical Recipes (``erfcc``): relative error below :math:`1.2 \cdot
    10^{-7}` everywhere, enough for p-values.

    Examples
    --------
    >>> import polars as pl
    >>> round(pl.select(erfc(pl.lit(1.959963984540054) / 2**0.5)).item(), 6)
    0.05
    """
    t = 1.0 / (1.0 + 0.5 * x)
    coefficients = (
        -1.26551223,
        1.00002368,
        0.37409196,
        0.09678418,
        -0.18628806,
        0.27886807,
        -1.13520398,
        1.48851587,
        -0.82215223,
        0.17087277,
    )
    poly = pl.lit(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        poly = poly * t + c
    return t * (-x * x + poly).exp()


def _adjust(p: pl.Expr, correction: Correction) -> pl.Expr:
    """Family-wise adjusted p-values (over all non-null p of the frame)."""
    if correction == "none":
        return p
    m = p.count()
    rank = p.rank(method="ordinal")
    order = p.arg_sort(nulls_last=True)
    if correction == "holm":
        raw = ((m - rank + 1) * p).clip(upper_bound=1.0)
        # running max in ascending p order, mapped back to the rows
        running = raw.gather(order).cum_max().gather(order.arg_sort())
        return pl.when(p.is_not_null()).then(running)
    raw = (m * p / rank).clip(upper_bound=1.0)
    running = raw.gather(order).reverse().cum_min().reverse().gather(order.arg_sort())
    return pl.when(p.is_not_null()).then(running)


@accepts_tables
def disparity_tests(
    data: FrameT,
    *,
    y_true: str | None = None,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    by: ColumnNames | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    separately: bool = False,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
    metrics: str | Sequence[str] | None = None,
    reference: Reference = "overall",
    correction: Correction = "holm",
    alpha: float = 0.05,
    min_support: int = 0,
) -> FrameT:
    r"""Disparities with a two-proportion test each and a family-wise correction.

    The comparisons of :func:`~polars_fairmetrics.disparities` (unweighted counts) plus
    ``reference_support``, ``statistic`` (the score statistic :math:`z`), ``p_value``,
    ``p_value_adjusted`` (``correction`` over every test of the table) and ``significant``
    (adjusted p below ``alpha``). Null (untested) for the reference group itself, for metrics that
    are not proportions, where either side has fewer than ``min_support`` rows in the
    denominator, and where a rate is undefined.

    Parameters
    ----------
    data, y_true, y_pred, y_score, threshold, by, pos_label, neg_label, separately, score_bounds
        As for :func:`~polars_fairmetrics.disparities` (no weights: tests count rows).
    metrics, reference
        As for :func:`~polars_fairmetrics.disparities` (default: every proportion metric).
    correction
        ``"holm"`` (default), ``"bh"`` or ``"none"``.
    alpha
        Level of ``significant``.
    min_support
        Smallest denominator count (group's and reference's) for a test to be run.

    Returns
    -------
    DataFrame or LazyFrame
        The comparisons kind of ``docs/results.md`` with the test columns.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a"] * 50 + ["b"] * 50,
    ...                    "y": [1] * 100, "p": [1] * 45 + [0] * 5 + [1] * 20 + [0] * 30})
    >>> out = disparity_tests(df, y_true="y", y_pred="p", by="g", metrics="tpr", reference="b")
    >>> g, difference, p, significant = out.select(
    ...     "g", "difference", "p_value", "significant").row(0)
    >>> g, difference, f"{p:.3g}", significant
    ('a', 0.5, '1.59e-07', True)
    """
    if correction not in ("holm", "bh", "none"):
        raise InvalidOptionError(f"correction must be 'holm', 'bh' or 'none', got {correction!r}")
    level = as_real(alpha)
    if level is None or not 0.0 < level < 1.0:
        raise InvalidOptionError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    support = as_integer(min_support)
    if support is None or support < 0:
        raise InvalidOptionError(f"min_support must be a non-negative integer, got {min_support!r}")
    alpha, min_support = level, support
    counts, layout = _count_table(
        data,
        y_true=y_true,
        y_pred=y_pred,
        y_score=y_score,
        threshold=threshold,
        by=by,
        weight=None,
        pos_label=pos_label,
        neg_label=neg_label,
        separately=separately,
        score_bounds=score_bounds,
    )
    if metrics is None:
        names = [m for m, s in METRICS.items() if s.proportion]
    else:
        names = _metric_names(metrics)
    schema = counts.collect_schema()
    base = list(COUNT_COLUMNS[:4])
    shown = check_reference(
        counts.with_columns(reference_statistics(reference, layout, base, schema)),
        reference,
        layout,
    )
    # the tested reference: the rest for "overall" (disjoint from the group), else the same
    tested = "rest" if reference == "overall" else reference
    test_ref = [
        e.alias(e.meta.output_name().replace(_REF, "_pfm_test_"))
        for e in reference_statistics(tested, layout, base, schema)
        if e.meta.output_name().startswith(_REF)
    ]
    own = Counts.from_columns()
    ref = Counts.from_columns(prefix=_REF)
    test = Counts.from_columns(prefix="_pfm_test_")
    columns = []
    for m in names:
        spec = METRICS[m]
        value, ref_value = pl.col(m), spec.func(ref)
        difference, ratio = compare(value, ref_value)
        n1, n2 = spec.support(own).cast(pl.Float64), spec.support(test).cast(pl.Float64)
        p1, p2 = spec.func(own), spec.func(test)
        pooled = (p1 * n1 + p2 * n2) / (n1 + n2)
        se = (pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n2)).sqrt()
        z: pl.Expr = pl.when(se > 0).then((p1 - p2) / se).when(p1 == p2).then(0.0)
        ok = (
            pl.lit(spec.proportion)
            & ~pl.col("is_reference")
            & (n1 >= max(min_support, 1))
            & (n2 >= max(min_support, 1))
        )
        z = pl.when(ok).then(z)
        columns += [
            ref_value.alias(f"{m}_reference_value"),
            difference.alias(f"{m}_difference"),
            ratio.alias(f"{m}_ratio"),
            spec.support(ref).cast(pl.Int64).alias(f"{m}_reference_support"),
            z.alias(f"{m}_statistic"),
            erfc(z.abs() / math.sqrt(2.0)).clip(upper_bound=1.0).alias(f"{m}_p_value"),
        ]
    sizes = [c for c in ("n", "n_null") if c in schema.names()]
    fields: tuple[str, ...] = (
        "support",
        "reference_value",
        "difference",
        "ratio",
        "reference_support",
        "statistic",
        "p_value",
    )
    wide = (
        shown.with_columns(test_ref)
        .with_columns(metric_columns(names, own, weighted=False))
        .with_columns(columns)
        .select(
            *layout.partitions,
            *layout.keys,
            *sizes,
            "reference",
            "is_reference",
            *[f"{m}{f}" for m in names for f in ("", *(f"_{x}" for x in fields))],
        )
    )
    long = from_wide(wide, quantities=names, fields=fields)
    adjusted = _adjust(pl.col("p_value"), correction)
    out = long.with_columns(adjusted.alias("p_value_adjusted")).with_columns(
        (pl.col("p_value_adjusted") < alpha).alias("significant")
    )
    return finish(out, keys=layout.keys, order=names)
