r"""Exact distributions of six fairness measures by class ratio and group ratio.

This module answers the question of the class-imbalance paper (Brzezinski et al., "Properties of
fairness measures in the context of varying class imbalance and protected group ratios"): if
every confusion-matrix pair of a data set of size :math:`n` is equally likely, how are the six
difference-based fairness measures distributed for a given imbalance ratio (IR) and group ratio
(GR)? The paper enumerates all :math:`\binom{n+7}{7}` 8-tuples
(553,270,671 at :math:`n = 56`); this module gets the same numbers exactly without enumerating
them.

Conventions (those of the paper's published code)
-------------------------------------------------
- A matrix is ``(tp, fp, tn, fn)`` of the protected group and of the unprotected group: every
  8-tuple of non-negative integers summing to :math:`n`, each counted once.
- :math:`IR = k / n` with :math:`k` the number of actual positives (``tp + fn`` over both groups);
  :math:`GR = m / n` with :math:`m` the size of the protected group. A *cell* is one ``(k, m)``.
- Each measure is ``rate(protected) - rate(unprotected)``:

  ============================  ==========================================
  measure                       rate of a group
  ============================  ==========================================
  accuracy_equality             :math:`(tp + tn) / (tp + fp + tn + fn)`
  statistical_parity            :math:`(tp + fp) / (tp + fp + tn + fn)`
  equal_opportunity             :math:`tp / (tp + fn)`  (TPR)
  predictive_equality           :math:`fp / (fp + tn)`  (FPR)
  positive_predictive_parity    :math:`tp / (tp + fp)`  (PPV)
  negative_predictive_parity    :math:`tn / (tn + fn)`  (NPV)
  ============================  ==========================================

- A value is *undefined* (null here, never NaN) when the rate of either group is 0/0; it is
  *perfect fairness* when it is exactly 0. Probabilities are over all matrices of the cell,
  undefined ones included.

How it is computed
------------------
A matrix is a pair of per-group 4-tuples. A group of size :math:`s` with :math:`p` actual
positives has :math:`(p + 1)(s - p + 1)` 4-tuples (``tp`` in ``0..p``, ``fp`` in ``0..s-p``).
:func:`group_rate_table` tabulates, for every ``(s, p)`` with :math:`s \le n`, the count of
4-tuples per exact rate value, a reduced fraction ``num / den``. A cell ``(k, m)`` pairs the
protected ``(m, j)`` with the unprotected ``(n - m, k - j)`` for every ``j``, so

.. math::

    N_{\text{zero}}(k, m) = \sum_j \sum_v c(m, j, v)\, c(n - m, k - j, v)

is a join on ``(size, rate)`` keys (never a cross join), the number of undefined values is the
total minus :math:`\sum_j D(m, j) D(n - m, k - j)` (``D`` = defined 4-tuples), and the full PMF
of a requested cell is the per-``j`` product of the two value tables, grouped by the exact
difference :math:`(a d - c b) / (b d)` reduced by its gcd. All counts are Int64 (exact while
:math:`\binom{n+7}{7} < 2^{63}`); Float64 appears only in reported probabilities.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_fairmetrics.exceptions import InvalidOptionError

__all__ = [
    "MEASURES",
    "MEASURE_ABBREVIATIONS",
    "PROPERTIES",
    "PropertiesAnalysis",
    "analyze_measure_properties",
    "cell_pmf",
    "cell_summary",
    "cells_from_ratios",
    "group_rate_table",
    "marginal_summary",
    "measure_properties",
    "paper_ratio_counts",
    "properties_table",
    "resolution",
]

MEASURES: tuple[str, ...] = (
    "accuracy_equality",
    "statistical_parity",
    "equal_opportunity",
    "predictive_equality",
    "positive_predictive_parity",
    "negative_predictive_parity",
)
"""The six measures of the paper, in its order (Eq. 7–12)."""

MEASURE_ABBREVIATIONS: dict[str, str] = {
    "accuracy_equality": "AE",
    "statistical_parity": "SP",
    "equal_opportunity": "EO",
    "predictive_equality": "PE",
    "positive_predictive_parity": "PPP",
    "negative_predictive_parity": "NPP",
}
"""Short names used in plots and tables."""

PROPERTIES: tuple[str, ...] = (
    "Immunity to IR changes",
    "Immunity to GR changes",
    "Resolution Stability",
    "Fairness Symmetry",
    "IR Symmetry",
    "GR Symmetry",
    "Perfect Fairness Stability",
    "Undefined Values",
)
"""The eight properties of the paper's Section 5, in the order of its Table 1."""

_INT = pl.Int64
_MAX_INT64 = 2**63 - 1

IntArray = npt.NDArray[np.int64]


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def _check_n(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise InvalidOptionError(f"n must be an integer, got {n!r}")
    n = int(n)
    if n < 1:
        raise InvalidOptionError(f"n must be at least 1, got {n}")
    if math.comb(n + 7, 7) > _MAX_INT64:
        raise InvalidOptionError(
            f"n = {n} gives C(n + 7, 7) = {math.comb(n + 7, 7)} matrices, which overflows Int64"
        )
    return n


def _check_measures(measures: str | Sequence[str] | None) -> list[str]:
    if measures is None:
        return list(MEASURES)
    out = [measures] if isinstance(measures, str) else list(measures)
    for m in out:
        if m not in MEASURES:
            raise InvalidOptionError(f"unknown measure {m!r}; choose from {list(MEASURES)}")
    if len(set(out)) != len(out):
        raise InvalidOptionError(f"measures listed twice: {out}")
    return out


def _reduce(num: IntArray, den: IntArray) -> tuple[IntArray, IntArray]:
    """Reduce ``num / den`` (den > 0) to lowest terms, elementwise and exactly."""
    g = np.gcd(num, den)
    g[g == 0] = 1
    return num // g, den // g


# --------------------------------------------------------------------------------------------
# per-group tables
# --------------------------------------------------------------------------------------------


def _enumerate_groups(n: int) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """All per-group ``(p, q, tp, fp)`` with ``p + q <= n``, ``tp <= p``, ``fp <= q``.

    ``p`` = actual positives, ``q`` = actual negatives; ``fn = p - tp``, ``tn = q - fp``.
    There are C(n + 4, 4) of them (one per 4-tuple of size at most n).
    """
    ps: list[IntArray] = []
    qs: list[IntArray] = []
    tps: list[IntArray] = []
    fps: list[IntArray] = []
    for p in range(n + 1):
        qmax = n - p
        q = np.repeat(np.arange(qmax + 1, dtype=np.int64), np.arange(1, qmax + 2))
        # fp runs 0..q for each q
        starts = np.repeat(
            np.cumsum(np.arange(1, qmax + 2)) - np.arange(1, qmax + 2), np.arange(1, qmax + 2)
        )
        fp = np.arange(q.size, dtype=np.int64) - starts
        tp = np.arange(p + 1, dtype=np.int64)
        ps.append(np.full(q.size * (p + 1), p, dtype=np.int64))
        qs.append(np.tile(q, p + 1))
        fps.append(np.tile(fp, p + 1))
        tps.append(np.repeat(tp, q.size))
    return np.concatenate(ps), np.concatenate(qs), np.concatenate(tps), np.concatenate(fps)


def _rate_parts(
    measure: str, p: IntArray, q: IntArray, tp: IntArray, fp: IntArray
) -> tuple[IntArray, IntArray]:
    fn = p - tp
    tn = q - fp
    if measure == "accuracy_equality":
        return tp + tn, p + q
    if measure == "statistical_parity":
        return tp + fp, p + q
    if measure == "equal_opportunity":
        return tp, tp + fn
    if measure == "predictive_equality":
        return fp, fp + tn
    if measure == "positive_predictive_parity":
        return tp, tp + fp
    if measure == "negative_predictive_parity":
        return tn, tn + fn
    raise InvalidOptionError(f"unknown measure {measure!r}")  # pragma: no cover


def group_rate_table(n: int, *, measures: str | Sequence[str] | None = None) -> pl.DataFrame:
    r"""Count the per-group 4-tuples of every size up to ``n`` by exact rate value.

    For each group size :math:`s \le n`, number of actual positives :math:`p \le s` and measure,
    the 4-tuples ``(tp, fp, tn, fn)`` with ``tp + fn = p`` and ``fp + tn = s - p`` (there are
    :math:`(p + 1)(s - p + 1)` of them) are grouped by the group's rate as a reduced fraction
    ``num / den``; ``num`` and ``den`` are null for the 4-tuples whose rate is 0/0.

    Parameters
    ----------
    n
        Largest group size.
    measures
        Measures to tabulate (default: all of :data:`MEASURES`).

    Returns
    -------
    pl.DataFrame
        Columns ``measure``, ``size``, ``positives``, ``num``, ``den`` (Int64, null when
        undefined), ``count`` (Int64), sorted by these keys (nulls first).

    Examples
    --------
    >>> t = group_rate_table(2, measures="equal_opportunity")
    >>> t.filter(pl.col("size") == 2, pl.col("positives") == 2)
    shape: (3, 6)
    ┌───────────────────┬──────┬───────────┬─────┬─────┬───────┐
    │ measure           ┆ size ┆ positives ┆ num ┆ den ┆ count │
    │ ---               ┆ ---  ┆ ---       ┆ --- ┆ --- ┆ ---   │
    │ str               ┆ i64  ┆ i64       ┆ i64 ┆ i64 ┆ i64   │
    ╞═══════════════════╪══════╪═══════════╪═════╪═════╪═══════╡
    │ equal_opportunity ┆ 2    ┆ 2         ┆ 0   ┆ 1   ┆ 1     │
    │ equal_opportunity ┆ 2    ┆ 2         ┆ 1   ┆ 2   ┆ 1     │
    │ equal_opportunity ┆ 2    ┆ 2         ┆ 1   ┆ 1   ┆ 1     │
    └───────────────────┴──────┴───────────┴─────┴─────┴───────┘
    """
    n = _check_n(n)
    chosen = _check_measures(measures)
    p, q, tp, fp = _enumerate_groups(n)
    size = p + q
    frames = []
    for measure in chosen:
        num, den = _rate_parts(measure, p, q, tp, fp)
        defined = den > 0
        rn, rd = _reduce(np.where(defined, num, 0), np.where(defined, den, 1))
        frames.append(
            pl.DataFrame(
                {
                    "size": size,
                    "positives": p,
                    "num": pl.Series(rn).set(pl.Series(~defined), None),
                    "den": pl.Series(rd).set(pl.Series(~defined), None),
                }
            )
            .group_by("size", "positives", "num", "den")
            .agg(pl.len().cast(_INT).alias("count"))
            .select(pl.lit(measure).alias("measure"), pl.all())
        )
    return (
        pl.concat(frames)
        .with_columns(pl.col("size", "positives", "num", "den").cast(_INT))
        .sort("measure", "size", "positives", pl.col("num") / pl.col("den"), nulls_last=False)
        .pipe(_order_measures, "measure")
    )


def _order_measures(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    """Stable re-sort so measures follow the paper's order (other keys keep their order)."""
    order = {m: i for i, m in enumerate(MEASURES)}
    return (
        frame.with_columns(pl.col(column).replace_strict(order, return_dtype=pl.Int32).alias("_o"))
        .sort("_o", maintain_order=True)
        .drop("_o")
    )


# --------------------------------------------------------------------------------------------
# per-cell summaries: matrices, undefined, exact zeros
# --------------------------------------------------------------------------------------------


def _pair_totals(n: int) -> pl.DataFrame:
    """Per ``(positives k, protected m)``: number of 8-tuples (all and per j) as a frame."""
    sizes = [(s, p) for s in range(n + 1) for p in range(s + 1)]
    g = pl.DataFrame(
        {"size": [s for s, _ in sizes], "positives": [p for _, p in sizes]},
        schema=[("size", _INT), ("positives", _INT)],
    ).with_columns(
        ((pl.col("positives") + 1) * (pl.col("size") - pl.col("positives") + 1)).alias("t")
    )
    return g


def cell_summary(n: int, *, measures: str | Sequence[str] | None = None) -> pl.DataFrame:
    r"""Matrices, undefined values and exact zeros of each measure in every (IR, GR) cell.

    For every cell :math:`(k, m)`, :math:`0 \le k, m \le n` (``k`` actual positives, ``m``
    protected-group size):

    .. math::

        \text{matrices} = \sum_j T(m, j)\,T(n - m, k - j), \quad T(s, p) = (p + 1)(s - p + 1)

    ``undefined`` = matrices − :math:`\sum_j D(m, j) D(n - m, k - j)` (``D`` = 4-tuples with a
    defined rate) and ``perfect`` = :math:`\sum_j \sum_v c(m, j, v)\,c(n - m, k - j, v)` (matrices
    whose two rates are equal, so the measure is exactly 0). ``p_undefined`` and ``p_perfect`` are
    these counts over ``matrices`` (Float64; null when the cell is empty, e.g. ``k > n``).

    Parameters
    ----------
    n
        Data-set size (number of examples).
    measures
        Measures to compute (default: all six).

    Returns
    -------
    pl.DataFrame
        Columns ``measure, n, positives, protected, ir, gr, matrices, undefined, perfect,
        p_undefined, p_perfect``; one row per measure and cell, sorted.

    Examples
    --------
    >>> s = cell_summary(4, measures="accuracy_equality")
    >>> s["matrices"].sum() == math.comb(4 + 7, 7)
    True
    >>> s.filter(pl.col("positives") == 2, pl.col("protected") == 2).select(
    ...     "matrices", "undefined", "perfect", "p_perfect")
    shape: (1, 4)
    ┌──────────┬───────────┬─────────┬───────────┐
    │ matrices ┆ undefined ┆ perfect ┆ p_perfect │
    │ ---      ┆ ---       ┆ ---     ┆ ---       │
    │ i64      ┆ i64       ┆ i64     ┆ f64       │
    ╞══════════╪═══════════╪═════════╪═══════════╡
    │ 34       ┆ 0         ┆ 12      ┆ 0.352941  │
    └──────────┴───────────┴─────────┴───────────┘
    """
    n = _check_n(n)
    chosen = _check_measures(measures)
    table = group_rate_table(n, measures=chosen)
    return _summary_from_table(n, table, chosen)


def _summary_from_table(n: int, table: pl.DataFrame, chosen: Sequence[str]) -> pl.DataFrame:
    # totals per cell (same for every measure)
    g = _pair_totals(n)
    defined = (
        table.filter(pl.col("num").is_not_null())
        .group_by("measure", "size", "positives")
        .agg(pl.col("count").sum().alias("d"))
    )
    left = g.with_columns((n - pl.col("size")).alias("partner"))
    pairs = left.join(g, left_on="partner", right_on="size", suffix="_u")
    totals = pairs.group_by(
        pl.col("size").alias("protected"),
        (pl.col("positives") + pl.col("positives_u")).alias("positives"),
    ).agg((pl.col("t") * pl.col("t_u")).sum().alias("matrices"))

    dl = defined.with_columns((n - pl.col("size")).alias("partner"))
    dpairs = dl.join(
        defined, left_on=["measure", "partner"], right_on=["measure", "size"], suffix="_u"
    )
    both_defined = dpairs.group_by(
        "measure",
        pl.col("size").alias("protected"),
        (pl.col("positives") + pl.col("positives_u")).alias("positives"),
    ).agg((pl.col("d") * pl.col("d_u")).sum().alias("both_defined"))

    vals = table.filter(pl.col("num").is_not_null())
    vl = vals.with_columns((n - pl.col("size")).alias("partner"))
    zeros = (
        vl.lazy()
        .join(
            vals.lazy(),
            left_on=["measure", "partner", "num", "den"],
            right_on=["measure", "size", "num", "den"],
            suffix="_u",
        )
        .group_by(
            "measure",
            pl.col("size").alias("protected"),
            (pl.col("positives") + pl.col("positives_u")).alias("positives"),
        )
        .agg((pl.col("count") * pl.col("count_u")).sum().alias("perfect"))
        .collect()
    )

    cells = pl.DataFrame(
        {
            "measure": [m for m in chosen for _ in range((n + 1) ** 2)],
            "positives": [k for _ in chosen for k in range(n + 1) for _m in range(n + 1)],
            "protected": [m for _ in chosen for _k in range(n + 1) for m in range(n + 1)],
        },
        schema=[("measure", pl.String), ("positives", _INT), ("protected", _INT)],
    )
    out = (
        cells.join(totals, on=["positives", "protected"], how="left")
        .join(both_defined, on=["measure", "positives", "protected"], how="left")
        .join(zeros, on=["measure", "positives", "protected"], how="left")
        .with_columns(pl.col("matrices", "both_defined", "perfect").fill_null(0).cast(_INT))
        .with_columns((pl.col("matrices") - pl.col("both_defined")).alias("undefined"))
        .select(
            "measure",
            pl.lit(n, dtype=_INT).alias("n"),
            "positives",
            "protected",
            (pl.col("positives") / n).alias("ir"),
            (pl.col("protected") / n).alias("gr"),
            "matrices",
            "undefined",
            "perfect",
            _prob("undefined", "matrices").alias("p_undefined"),
            _prob("perfect", "matrices").alias("p_perfect"),
        )
        .sort("measure", "positives", "protected")
    )
    return _order_measures(out, "measure")


def _prob(count: str, total: str) -> pl.Expr:
    return pl.when(pl.col(total) > 0).then(pl.col(count) / pl.col(total))


def marginal_summary(summary: pl.DataFrame, *, by: Literal["ir", "gr"]) -> pl.DataFrame:
    r"""Probabilities of perfect fairness and of undefined values per IR or per GR.

    The paper's Figures 6–7: for each ratio, the counts are summed over all values of the other
    ratio before dividing, :math:`P_{\text{perfect}}(IR = k/n) = \sum_m \text{perfect}(k, m) /
    \sum_m \text{matrices}(k, m)` (and likewise for GR and for undefined values).

    Parameters
    ----------
    summary
        Output of :func:`cell_summary`.
    by
        ``"ir"`` (sum over all GR) or ``"gr"`` (sum over all IR).

    Returns
    -------
    pl.DataFrame
        Columns ``measure, n, <by count column>, <by>, matrices, undefined, perfect,
        p_undefined, p_perfect``.

    Examples
    --------
    >>> s = cell_summary(6, measures=["equal_opportunity", "predictive_equality"])
    >>> m = marginal_summary(s, by="ir")
    >>> m.filter(pl.col("positives") == 1).select("measure", "ir", "p_undefined")
    shape: (2, 3)
    ┌─────────────────────┬──────────┬─────────────┐
    │ measure             ┆ ir       ┆ p_undefined │
    │ ---                 ┆ ---      ┆ ---         │
    │ str                 ┆ f64      ┆ f64         │
    ╞═════════════════════╪══════════╪═════════════╡
    │ equal_opportunity   ┆ 0.166667 ┆ 1.0         │
    │ predictive_equality ┆ 0.166667 ┆ 0.214286    │
    └─────────────────────┴──────────┴─────────────┘
    """
    if by not in ("ir", "gr"):
        raise InvalidOptionError(f"by must be 'ir' or 'gr', got {by!r}")
    key = "positives" if by == "ir" else "protected"
    out = (
        summary.group_by("measure", "n", key)
        .agg(pl.col("matrices", "undefined", "perfect").sum())
        .with_columns((pl.col(key) / pl.col("n")).alias(by))
        .select(
            "measure",
            "n",
            key,
            by,
            "matrices",
            "undefined",
            "perfect",
            _prob("undefined", "matrices").alias("p_undefined"),
            _prob("perfect", "matrices").alias("p_perfect"),
        )
        .sort("measure", key)
    )
    return _order_measures(out, "measure")


# --------------------------------------------------------------------------------------------
# full PMFs of chosen cells
# --------------------------------------------------------------------------------------------


def paper_ratio_counts(n: int) -> list[int]:
    """The counts behind the paper's five ratios for a data set of size ``n``.

    The paper (n = 56) uses IR, GR ∈ {1/28, 1/4, 1/2, 3/4, 27/28}: a minority of two examples
    (one per group), low imbalance, balance. For another ``n`` this returns
    ``[2, round(n/4), round(n/2), round(3n/4), n - 2]`` (duplicates removed).

    Examples
    --------
    >>> paper_ratio_counts(56)
    [2, 14, 28, 42, 54]
    """
    n = _check_n(n)
    raw = [2, round(n / 4), round(n / 2), n - round(n / 4), n - 2]
    out: list[int] = []
    for c in raw:
        c = min(max(c, 0), n)
        if c not in out:
            out.append(c)
    return sorted(out)


def cells_from_ratios(
    n: int, ir: Iterable[float | Fraction], gr: Iterable[float | Fraction]
) -> list[tuple[int, int]]:
    """Cells ``(positives, protected)`` for ratios given as shares of ``n``.

    Every ratio times ``n`` must be a whole number (within 1e-9): a cell is an exact count,
    and a silently rounded ratio would report a cell the user did not ask for.

    Examples
    --------
    >>> cells_from_ratios(56, ir=[Fraction(1, 28), 0.5], gr=[0.25])
    [(2, 14), (28, 14)]
    """
    n = _check_n(n)

    def count(r: float | Fraction, what: str) -> int:
        x = Fraction(r) * n if isinstance(r, Fraction) else float(r) * n
        c = round(x)
        if not 0 <= c <= n or abs(float(x) - c) > 1e-9:
            raise InvalidOptionError(
                f"{what} = {r} gives {what} * n = {float(x)} examples, not a whole number in "
                f"[0, {n}]; choose a ratio k/{n} "
                f"(nearest: {math.floor(x)}/{n} or {math.ceil(x)}/{n})"
            )
        return int(c)

    irs = [count(r, "IR") for r in ir]
    grs = [count(r, "GR") for r in gr]
    return [(k, m) for k in irs for m in grs]


def cell_pmf(
    n: int,
    *,
    cells: Sequence[tuple[int, int]] | None = None,
    measures: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    r"""Exact probability mass function of each measure in the requested cells.

    For a cell :math:`(k, m)` the value of a matrix is :math:`r_p - r_u` with
    :math:`r_p = a/b` the protected rate and :math:`r_u = c/d` the unprotected one, stored as the
    reduced fraction :math:`(a d - c b) / (b d)`. Its probability is the number of matrices with
    that value over all matrices of the cell (undefined ones included):

    .. math::

        P(v) = \frac{\sum_j \sum_{r_p - r_u = v} c(m, j, r_p)\, c(n - m, k - j, r_u)}
                    {\text{matrices}(k, m)}

    Parameters
    ----------
    n
        Data-set size.
    cells
        ``(positives, protected)`` pairs (see :func:`cells_from_ratios`); default: the paper's
        5 × 5 grid :func:`paper_ratio_counts`.
    measures
        Measures (default: all six).

    Returns
    -------
    pl.DataFrame
        Columns ``measure, n, positives, protected, ir, gr, num, den, value, count,
        probability``; the undefined values of a cell are one row with null ``num``, ``den``
        and ``value``. Sorted by measure, cell and value (undefined last).

    Examples
    --------
    >>> pmf = cell_pmf(4, cells=[(2, 2)], measures="equal_opportunity")
    >>> pmf.select("value", "count", "probability")
    shape: (4, 3)
    ┌───────┬───────┬─────────────┐
    │ value ┆ count ┆ probability │
    │ ---   ┆ ---   ┆ ---         │
    │ f64   ┆ i64   ┆ f64         │
    ╞═══════╪═══════╪═════════════╡
    │ -1.0  ┆ 4     ┆ 0.117647    │
    │ 0.0   ┆ 8     ┆ 0.235294    │
    │ 1.0   ┆ 4     ┆ 0.117647    │
    │ null  ┆ 18    ┆ 0.529412    │
    └───────┴───────┴─────────────┘
    """
    n = _check_n(n)
    chosen = _check_measures(measures)
    if cells is None:
        grid = paper_ratio_counts(n)
        cells = [(k, m) for k in grid for m in grid]
    cell_list = [(int(k), int(m)) for k, m in cells]
    for k, m in cell_list:
        if not (0 <= k <= n and 0 <= m <= n):
            raise InvalidOptionError(f"cell (positives={k}, protected={m}) is outside [0, {n}]²")
    cell_list = list(dict.fromkeys(cell_list))
    table = group_rate_table(n, measures=chosen)
    return _pmf_from_table(n, table, cell_list)


def _pmf_from_table(n: int, table: pl.DataFrame, cell_list: list[tuple[int, int]]) -> pl.DataFrame:
    cells = pl.DataFrame(
        {"cell_k": [k for k, _ in cell_list], "cell_m": [m for _, m in cell_list]},
        schema=[("cell_k", _INT), ("cell_m", _INT)],
    )
    left = (
        table.join(cells, left_on="size", right_on="cell_m")
        .rename({"size": "protected"})
        .filter(pl.col("positives") <= pl.col("cell_k"))
        .with_columns(
            (n - pl.col("protected")).alias("size_u"),
            (pl.col("cell_k") - pl.col("positives")).alias("pos_u"),
        )
    )
    right = table.rename({"size": "size_u", "positives": "pos_u"})
    joined = (
        left.lazy()
        .join(right.lazy(), on=["measure", "size_u", "pos_u"], suffix="_u")
        .select(
            "measure",
            pl.col("cell_k").alias("positives"),
            "protected",
            (pl.col("num") * pl.col("den_u") - pl.col("num_u") * pl.col("den")).alias("dnum"),
            (pl.col("den") * pl.col("den_u")).alias("dden"),
            (pl.col("count") * pl.col("count_u")).alias("count"),
        )
    )
    # aggregate first on the unreduced fraction (cheap), then reduce and aggregate again
    agg = (
        joined.group_by("measure", "positives", "protected", "dnum", "dden")
        .agg(pl.col("count").sum())
        .collect()
    )
    dnum = agg["dnum"]
    dden = agg["dden"]
    defined = dden.is_not_null().to_numpy()
    rn, rd = _reduce(
        np.where(defined, dnum.fill_null(0).to_numpy(), 0).astype(np.int64),
        np.where(defined, dden.fill_null(1).to_numpy(), 1).astype(np.int64),
    )
    mask = pl.Series(~defined)
    agg = agg.with_columns(
        pl.Series("num", rn, dtype=_INT).set(mask, None),
        pl.Series("den", rd, dtype=_INT).set(mask, None),
    )
    pmf = agg.group_by("measure", "positives", "protected", "num", "den").agg(pl.col("count").sum())
    out = (
        pmf.with_columns(
            pl.col("count").sum().over("measure", "positives", "protected").alias("_total")
        )
        .select(
            "measure",
            pl.lit(n, dtype=_INT).alias("n"),
            "positives",
            "protected",
            (pl.col("positives") / n).alias("ir"),
            (pl.col("protected") / n).alias("gr"),
            "num",
            "den",
            (pl.col("num") / pl.col("den")).alias("value"),
            pl.col("count").cast(_INT),
            (pl.col("count") / pl.col("_total")).alias("probability"),
        )
        .sort("measure", "positives", "protected", "value", nulls_last=True)
    )
    return _order_measures(out, "measure")


def resolution(pmf: pl.DataFrame) -> pl.DataFrame:
    """Number of distinct defined values of each measure in each cell of a PMF frame.

    Parameters
    ----------
    pmf
        Output of :func:`cell_pmf`.

    Returns
    -------
    pl.DataFrame
        Columns ``measure, positives, protected, ir, gr, distinct_values``.

    Examples
    --------
    >>> resolution(cell_pmf(4, cells=[(2, 2)], measures="equal_opportunity"))
    shape: (1, 6)
    ┌───────────────────┬───────────┬───────────┬─────┬─────┬─────────────────┐
    │ measure           ┆ positives ┆ protected ┆ ir  ┆ gr  ┆ distinct_values │
    │ ---               ┆ ---       ┆ ---       ┆ --- ┆ --- ┆ ---             │
    │ str               ┆ i64       ┆ i64       ┆ f64 ┆ f64 ┆ u32             │
    ╞═══════════════════╪═══════════╪═══════════╪═════╪═════╪═════════════════╡
    │ equal_opportunity ┆ 2         ┆ 2         ┆ 0.5 ┆ 0.5 ┆ 3               │
    └───────────────────┴───────────┴───────────┴─────┴─────┴─────────────────┘
    """
    out = (
        pmf.group_by("measure", "positives", "protected", "ir", "gr")
        .agg(pl.col("num").is_not_null().sum().alias("distinct_values"))
        .sort("measure", "positives", "protected")
    )
    return _order_measures(out, "measure")


# --------------------------------------------------------------------------------------------
# the eight properties of Section 5, decided from the distributions
# --------------------------------------------------------------------------------------------

RULES: dict[str, str] = {
    "Immunity to IR changes": (
        "for every GR of the grid, the PMFs (undefined values as one atom) at all IR of the grid "
        "are identical, compared exactly as fractions"
    ),
    "Immunity to GR changes": (
        "for every IR of the grid, the PMFs at all GR of the grid are identical (exact)"
    ),
    "Resolution Stability": (
        "min over grid cells of the number of distinct defined values ≥ {resolution_ratio} × "
        "its max over grid cells"
    ),
    "Fairness Symmetry": "in every grid cell, P(v) = P(−v) for every value v (exact)",
    "IR Symmetry": "in every grid cell, PMF(IR, GR) = PMF(1 − IR, GR) (exact)",
    "GR Symmetry": "in every grid cell, PMF(IR, GR) = PMF(IR, 1 − GR) (exact)",
    "Perfect Fairness Stability": (
        "max / min of P(value = 0) over the grid ratios ≤ {perfect_ratio}, for the IR marginal "
        "(summed over all GR) and for the GR marginal (summed over all IR)"
    ),
    "Undefined Values": (
        "holds when undefined values occur only where a group is empty (GR = 0 or 1); the "
        "evidence lists each side (low/high IR, low/high GR) whose marginal P(undefined) at the "
        "grid's extreme ratio is ≥ {undefined_level}"
    ),
}
"""The documented decision rule of each property (thresholds are parameters)."""


@dataclass(frozen=True)
class PropertiesAnalysis:
    """Everything the properties analysis computes for one ``n`` (see
    :func:`analyze_measure_properties`).

    Attributes
    ----------
    n
        Data-set size.
    counts
        The grid's ratio counts (IR = k/n and GR = m/n for k, m in ``counts``).
    summary
        :func:`cell_summary` of every cell.
    by_ir, by_gr
        :func:`marginal_summary` by IR and by GR.
    pmf
        :func:`cell_pmf` of the grid cells.
    resolution
        :func:`resolution` of the grid cells.
    properties
        :func:`measure_properties` (long format: one row per property and measure).
    """

    n: int
    counts: tuple[int, ...]
    summary: pl.DataFrame
    by_ir: pl.DataFrame
    by_gr: pl.DataFrame
    pmf: pl.DataFrame
    resolution: pl.DataFrame
    properties: pl.DataFrame


def analyze_measure_properties(
    n: int = 56,
    *,
    counts: Sequence[int] | None = None,
    measures: str | Sequence[str] | None = None,
    resolution_ratio: float = 0.25,
    perfect_ratio: float = 5.0,
    undefined_level: float = 0.1,
) -> PropertiesAnalysis:
    """Compute the complete analysis of the paper for a data-set size ``n``.

    Builds the per-group tables once and derives: every cell's matrices, undefined values and
    exact zeros (:func:`cell_summary`), the IR and GR marginals, the full PMF and resolution
    of the grid cells ``(k, m)`` for ``k, m`` in ``counts``, and the eight properties of the
    paper's Section 5 decided by the rules in :data:`RULES` (see :func:`measure_properties`).

    Parameters
    ----------
    n
        Data-set size (the paper: 56).
    counts
        Grid counts; IR = k/n and GR = m/n for ``k, m`` in ``counts``. Default
        :func:`paper_ratio_counts` (the paper's 1/28, 1/4, 1/2, 3/4, 27/28 at n = 56). The
        symmetry rules need a grid closed under ``c -> n - c``.
    measures
        Measures (default all six).
    resolution_ratio, perfect_ratio, undefined_level
        Thresholds of the Resolution Stability, Perfect Fairness Stability and Undefined Values
        rules.

    Returns
    -------
    PropertiesAnalysis

    Examples
    --------
    >>> a = analyze_measure_properties(12)
    >>> a.counts
    (2, 3, 6, 9, 10)
    >>> a.summary.height == 6 * 13 * 13
    True
    """
    n = _check_n(n)
    chosen = _check_measures(measures)
    grid = tuple(sorted(set(paper_ratio_counts(n) if counts is None else [int(c) for c in counts])))
    for c in grid:
        if not 0 <= c <= n:
            raise InvalidOptionError(f"grid count {c} is outside [0, {n}]")
    table = group_rate_table(n, measures=chosen)
    summary = _summary_from_table(n, table, chosen)
    pmf = _pmf_from_table(n, table, [(k, m) for k in grid for m in grid])
    by_ir = marginal_summary(summary, by="ir")
    by_gr = marginal_summary(summary, by="gr")
    res = resolution(pmf)
    props = _decide_properties(
        n,
        grid,
        chosen,
        pmf=pmf,
        res=res,
        by_ir=by_ir,
        by_gr=by_gr,
        summary=summary,
        resolution_ratio=resolution_ratio,
        perfect_ratio=perfect_ratio,
        undefined_level=undefined_level,
    )
    return PropertiesAnalysis(n, grid, summary, by_ir, by_gr, pmf, res, props)


def measure_properties(
    n: int = 56,
    *,
    counts: Sequence[int] | None = None,
    measures: str | Sequence[str] | None = None,
    resolution_ratio: float = 0.25,
    perfect_ratio: float = 5.0,
    undefined_level: float = 0.1,
) -> pl.DataFrame:
    """The eight properties of the paper's Section 5, decided from exact distributions.

    Each property is decided by the documented rule in :data:`RULES` (with the thresholds
    given here), on the grid cells IR, GR ∈ ``{k / n : k in counts}``:

    - *Immunity to IR / GR changes*: the PMFs at the grid's IRs (for each GR), resp. GRs (for
      each IR), are identical; evidence: the largest total-variation distance to the balanced
      cell.
    - *Resolution Stability*: min / max of the number of distinct values over the grid cells
      ≥ ``resolution_ratio``.
    - *Fairness Symmetry*: :math:`P(v) = P(-v)` in every grid cell.
    - *IR Symmetry*: :math:`PMF(IR) = PMF(1 - IR)`; *GR Symmetry*: :math:`PMF(GR) = PMF(1 - GR)`.
    - *Perfect Fairness Stability*: max / min of P(0) over the grid ratios, for both
      marginals, ≤ ``perfect_ratio``.
    - *Undefined Values*: holds if undefined values occur only where a group is empty.

    Parameters
    ----------
    n, counts, measures, resolution_ratio, perfect_ratio, undefined_level
        As in :func:`analyze_measure_properties`.

    Returns
    -------
    pl.DataFrame
        Columns ``property, measure, holds`` (Boolean), ``evidence`` (numbers behind the
        decision), ``rule``; one row per property and measure.

    Examples
    --------
    >>> p = measure_properties(12, measures=["accuracy_equality", "equal_opportunity"])
    >>> p.filter(pl.col("property") == "IR Symmetry").select("measure", "holds")
    shape: (2, 2)
    ┌───────────────────┬───────┐
    │ measure           ┆ holds │
    │ ---               ┆ ---   │
    │ str               ┆ bool  │
    ╞═══════════════════╪═══════╡
    │ accuracy_equality ┆ true  │
    │ equal_opportunity ┆ false │
    └───────────────────┴───────┘
    """
    return analyze_measure_properties(
        n,
        counts=counts,
        measures=measures,
        resolution_ratio=resolution_ratio,
        perfect_ratio=perfect_ratio,
        undefined_level=undefined_level,
    ).properties


def _compare_cells(
    pmf: pl.DataFrame, pairs: pl.DataFrame, *, negate_b: bool = False
) -> pl.DataFrame:
    """Exact equality and total-variation distance between PMFs of pairs of cells.

    ``pairs`` has ``measure, k_a, m_a, k_b, m_b``; returns it with ``identical`` and ``tv``.
    With ``negate_b`` the values of the b cell are negated (for the fairness-symmetry test).
    """
    pairs = pairs.with_row_index("pair")
    base = pmf.select("measure", "positives", "protected", "num", "den", "count").with_columns(
        pl.col("count").sum().over("measure", "positives", "protected").alias("total")
    )
    a = pairs.join(
        base, left_on=["measure", "k_a", "m_a"], right_on=["measure", "positives", "protected"]
    ).select("pair", "num", "den", pl.col("count").alias("c_a"), pl.col("total").alias("t_a"))
    b = pairs.join(
        base, left_on=["measure", "k_b", "m_b"], right_on=["measure", "positives", "protected"]
    ).select(
        "pair",
        (-pl.col("num") if negate_b else pl.col("num")).alias("num"),
        "den",
        pl.col("count").alias("c_b"),
        pl.col("total").alias("t_b"),
    )
    totals = (
        a.group_by("pair")
        .agg(pl.col("t_a").first())
        .join(b.group_by("pair").agg(pl.col("t_b").first()), on="pair", how="full", coalesce=True)
    )
    both = (
        a.drop("t_a")
        .join(b.drop("t_b"), on=["pair", "num", "den"], how="full", coalesce=True, nulls_equal=True)
        .join(totals, on="pair", how="left")
        .with_columns(pl.col("c_a", "c_b", "t_a", "t_b").fill_null(0).cast(pl.Int128))
    )
    verdict = both.group_by("pair").agg(
        (pl.col("c_a") * pl.col("t_b") == pl.col("c_b") * pl.col("t_a")).all().alias("identical"),
        (
            0.5
            * (
                pl.col("c_a").cast(pl.Float64) / pl.col("t_a").cast(pl.Float64)
                - pl.col("c_b").cast(pl.Float64) / pl.col("t_b").cast(pl.Float64)
            )
            .abs()
            .sum()
        ).alias("tv"),
    )
    return pairs.join(verdict, on="pair", how="left").drop("pair")


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def _decide_properties(
    n: int,
    grid: tuple[int, ...],
    chosen: Sequence[str],
    *,
    pmf: pl.DataFrame,
    res: pl.DataFrame,
    by_ir: pl.DataFrame,
    by_gr: pl.DataFrame,
    summary: pl.DataFrame,
    resolution_ratio: float,
    perfect_ratio: float,
    undefined_level: float,
) -> pl.DataFrame:
    mid = min(grid, key=lambda c: (abs(2 * c - n), c))
    mirrored = all((n - c) in grid for c in grid)
    rows: list[dict[str, object]] = []

    def add(prop: str, measure: str, holds: bool, evidence: str) -> None:
        rule = RULES[prop].format(
            resolution_ratio=resolution_ratio,
            perfect_ratio=perfect_ratio,
            undefined_level=undefined_level,
        )
        rows.append(
            {
                "property": prop,
                "measure": measure,
                "holds": holds,
                "evidence": evidence,
                "rule": rule,
            }
        )

    def pair_frame(pairs: list[tuple[int, int, int, int]]) -> pl.DataFrame:
        return pl.DataFrame(
            [(m, *p) for m in chosen for p in pairs],
            schema=[
                ("measure", pl.String),
                ("k_a", _INT),
                ("m_a", _INT),
                ("k_b", _INT),
                ("m_b", _INT),
            ],
            orient="row",
        )

    # immunity: compare every cell with the balanced one along the axis
    imm_ir = _compare_cells(
        pmf, pair_frame([(mid, m, k, m) for m in grid for k in grid if k != mid])
    )
    imm_gr = _compare_cells(
        pmf, pair_frame([(k, mid, k, m) for k in grid for m in grid if m != mid])
    )
    cells = [(k, m) for k in grid for m in grid]
    fair_sym = _compare_cells(pmf, pair_frame([(k, m, k, m) for k, m in cells]), negate_b=True)
    ir_sym = _compare_cells(pmf, pair_frame([(k, m, n - k, m) for k, m in cells if n - k in grid]))
    gr_sym = _compare_cells(pmf, pair_frame([(k, m, k, n - m) for k, m in cells if n - m in grid]))

    def verdict(frame: pl.DataFrame, measure: str, what: str) -> tuple[bool, str]:
        sub = frame.filter(pl.col("measure") == measure)
        if sub.height == 0:
            return False, "no pairs of cells to compare in the grid"
        bad = sub.filter(~pl.col("identical"))
        tv = sub["tv"].max()
        assert isinstance(tv, float)
        return (
            bad.height == 0,
            f"{bad.height}/{sub.height} {what} differ; max TV distance {_fmt(tv)}",
        )

    interior = [c for c in grid if 0 < c < n]
    for measure in chosen:
        h, e = verdict(imm_ir, measure, f"cells vs IR = {mid}/{n}")
        add("Immunity to IR changes", measure, h, e)
        h, e = verdict(imm_gr, measure, f"cells vs GR = {mid}/{n}")
        add("Immunity to GR changes", measure, h, e)

        r = res.filter(pl.col("measure") == measure)
        rmin = int(r["distinct_values"].min())  # type: ignore[arg-type]
        rmax = int(r["distinct_values"].max())  # type: ignore[arg-type]
        worst = r.filter(pl.col("distinct_values") == rmin).row(0, named=True)
        ratio = rmin / rmax if rmax else 0.0
        add(
            "Resolution Stability",
            measure,
            ratio >= resolution_ratio,
            f"distinct values {rmin}–{rmax} (ratio {_fmt(ratio)}); fewest at IR = "
            f"{worst['positives']}/{n}, GR = {worst['protected']}/{n}",
        )

        h, e = verdict(fair_sym, measure, "cells")
        add("Fairness Symmetry", measure, h, e)
        if mirrored:
            h, e = verdict(ir_sym, measure, "cells vs 1 − IR")
            add("IR Symmetry", measure, h, e)
            h, e = verdict(gr_sym, measure, "cells vs 1 − GR")
            add("GR Symmetry", measure, h, e)
        else:
            add("IR Symmetry", measure, False, "grid not closed under c -> n - c: not decided")
            add("GR Symmetry", measure, False, "grid not closed under c -> n - c: not decided")

        ratios = []
        parts = []
        for frame, key, label in ((by_ir, "positives", "IR"), (by_gr, "protected", "GR")):
            sub = frame.filter(pl.col("measure") == measure, pl.col(key).is_in(interior))
            pmin = float(sub["p_perfect"].min())  # type: ignore[arg-type]
            pmax = float(sub["p_perfect"].max())  # type: ignore[arg-type]
            q = math.inf if pmin == 0 else pmax / pmin
            ratios.append(q)
            parts.append(f"by {label}: P(0) {_fmt(pmin)}–{_fmt(pmax)} (max/min {_fmt(q)})")
        add("Perfect Fairness Stability", measure, max(ratios) <= perfect_ratio, "; ".join(parts))

        s = summary.filter(pl.col("measure") == measure, pl.col("protected").is_between(1, n - 1))
        interior_undefined = int(s["undefined"].sum())
        sides: list[str] = []
        pu: dict[str, float] = {}
        for frame, key, label in ((by_gr, "protected", "GR"), (by_ir, "positives", "IR")):
            sub = frame.filter(pl.col("measure") == measure)
            lo, hi = (min(interior), max(interior)) if interior else (mid, mid)
            plo = float(sub.filter(pl.col(key) == lo)["p_undefined"].item())
            phi = float(sub.filter(pl.col(key) == hi)["p_undefined"].item())
            pu[f"low {label}"], pu[f"high {label}"] = plo, phi
            flags = [side for side, p in (("low", plo), ("high", phi)) if p >= undefined_level]
            if flags:
                sides.append("/".join(flags) + f" {label}")
        where = ", ".join(sides) if sides else "rare in every interior cell"
        if interior_undefined == 0:
            where = "only when GR = 0 or GR = 1"
        detail = ", ".join(f"{k} {_fmt(v)}" for k, v in pu.items())
        add(
            "Undefined Values",
            measure,
            interior_undefined == 0,
            f"{where} (P(undefined) at the grid's extreme ratios: {detail})",
        )
    out = pl.DataFrame(
        rows,
        schema=[
            ("property", pl.String),
            ("measure", pl.String),
            ("holds", pl.Boolean),
            ("evidence", pl.String),
            ("rule", pl.String),
        ],
    )
    return out


def properties_table(properties: pl.DataFrame, *, evidence: bool = False) -> pl.DataFrame:
    """Pivot :func:`measure_properties` into the shape of the paper's Table 1.

    One row per property (in the paper's order), one column per measure holding ``"✓"`` or
    ``"✗"``; the *Undefined Values* row holds where undefined values occur (as in the paper);
    a last column ``rule`` states the decision rule. With ``evidence=True`` each mark is
    followed by the numbers behind it.

    Parameters
    ----------
    properties
        Output of :func:`measure_properties` (or ``PropertiesAnalysis.properties``).
    evidence
        Append the evidence to every cell.

    Returns
    -------
    pl.DataFrame

    Examples
    --------
    >>> t = properties_table(measure_properties(12, measures="accuracy_equality"))
    >>> t.select("property", "accuracy_equality").head(4)
    shape: (4, 2)
    ┌────────────────────────┬───────────────────┐
    │ property               ┆ accuracy_equality │
    │ ---                    ┆ ---               │
    │ str                    ┆ str               │
    ╞════════════════════════╪═══════════════════╡
    │ Immunity to IR changes ┆ ✗                 │
    │ Immunity to GR changes ┆ ✗                 │
    │ Resolution Stability   ┆ ✓                 │
    │ Fairness Symmetry      ┆ ✓                 │
    └────────────────────────┴───────────────────┘
    """
    mark = pl.when(pl.col("holds")).then(pl.lit("✓")).otherwise(pl.lit("✗"))
    undefined_text = pl.col("evidence").str.replace(r" \(P\(undefined\).*$", "")
    cell = (
        pl.when(pl.col("property") == "Undefined Values")
        .then(mark + pl.lit(" ") + undefined_text)
        .otherwise(mark)
    )
    if evidence:
        cell = (
            pl.when(pl.col("property") == "Undefined Values")
            .then(mark + pl.lit(" ") + pl.col("evidence"))
            .otherwise(mark + pl.lit(" (") + pl.col("evidence") + pl.lit(")"))
        )
    measures = list(dict.fromkeys(properties["measure"].to_list()))
    wide = properties.with_columns(cell.alias("cell")).pivot(
        on="measure", index="property", values="cell"
    )
    rules = properties.group_by("property").agg(pl.col("rule").first())
    order = {p: i for i, p in enumerate(PROPERTIES)}
    return (
        wide.join(rules, on="property")
        .with_columns(pl.col("property").replace_strict(order, return_dtype=pl.Int32).alias("_o"))
        .sort("_o")
        .select("property", *measures, "rule")
    )
