r"""Ensemble stability and uncertainty metrics (Virny's performance dimensions), lazily.

Given the predicted probabilities :math:`p_1, \dots, p_m` of the positive class from the
:math:`m` models of an ensemble for each test row, this module computes, per row:

- ``n_models``: :math:`m`, the models that predicted the row (non-null probabilities);
- ``ensemble_label``: :math:`1[\bar p \ge 0.5]` (``convention="half_up"``), :math:`1[\bar p > 0.5]`
  (``convention="virny"``);
- ``mean_probability``: :math:`\bar p = \frac1m \sum_j p_j`;
- ``std_probability``: :math:`\sqrt{\frac{1}{m - ddof}\sum_j (p_j - \bar p)^2}` (``ddof=1``
  as Virny);
- ``iqr_probability``: :math:`Q_{0.75} - Q_{0.25}` (linear interpolation, as NumPy and SciPy);
- ``label_stability``: :math:`|k - (m - k)| / m` with :math:`k = \#\{j: \hat y_j = 1\}`;
- ``jitter``: :math:`2k(m-k) / (m(m-1))`, the share of model pairs that disagree;
- ``aleatoric_uncertainty``: :math:`\frac1m \sum_j H(p_j)` (expected entropy);
- ``overall_uncertainty``: :math:`H(\bar p)` (entropy of the mean);
- ``epistemic_variance``: :math:`\mathrm{Var}_j[p_j]` (the epistemic uncertainty of Virny's
  documentation);
- ``epistemic_mutual_information``: :math:`H(\bar p) - \frac1m\sum_j H(p_j)` (Virny's code).

with :math:`H(p) = -p \log_b p - (1-p) \log_b (1-p)`, :math:`0 \log 0 = 0`, base :math:`b = 2`
(bits, as Virny) unless ``log_base`` says otherwise, and a model's label
:math:`\hat y_j = 1[p_j \ge 0.5]` (``convention="half_up"``) or :math:`1[p_j > 0.5]`
(``convention="virny"``).

**Order of the models never matters.** Each row's probabilities are first sorted (ascending);
every statistic is then computed from the sorted values, and every sum over models is taken in
that order. The result is a function of the *set* of probabilities: permuting the models, or
giving the same predictions in the wide, list or long layout, gives bit-identical values and
labels. In particular the tie rule is exact: :math:`\bar p` is the ascending-order sum divided
by :math:`m`, and a mean of exactly 0.5 gives label 1 under ``convention="half_up"`` and 0 under
``convention="virny"``, whatever the order in which the models were given.

Per group (and overall, and for intersections of several ``by`` columns) a metric is the mean
of its per-row values (weighted by ``weight`` when given), and disparities compare group means
with a reference (a named group, ``"rest"`` — Virny's dis vs priv — or ``"overall"``) as
differences and ratios. The ensemble label feeds every confusion metric of the core
(:func:`~polars_fairmetrics.group_metrics`, :func:`~polars_fairmetrics.disparities`).

Inputs, three layouts giving identical results:

- **wide**: ``models=["p1", "p2", ...]``, one probability column per model;
- **list**: ``list_col="probs"``, one List column holding the :math:`m` probabilities;
- **long**: ``row_id="row", model_col="model", prob_col="p"``, one record per (test row,
  model): files too large for memory. Per-row columns (labels, groups, weights, partitions,
  kept columns) must be the same in every record of a row, and a (row, model) pair must appear
  once: otherwise :class:`~polars_fairmetrics.InconsistentInputError` names the column, the row
  id and the values.

No model-pair loop: jitter comes from the vote count. A null probability means the model did not
predict that row: each row's metrics use the models that did (``n_models``); a row no model
predicted has null metrics and is counted in ``n_null``. Undefined values (``std`` with
:math:`m \le ddof`, ``jitter`` with :math:`m = 1`) are null. Validation is native: a NaN or
out-of-[0, 1] probability, or an inconsistent long record, is found by Polars expressions folded
into the one pass, and only its summary reaches Python to raise the error.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast

import polars as pl

from polars_fairmetrics._typing import ColumnNames, FrameT, Label
from polars_fairmetrics._validate import (
    as_list,
    check_reserved,
    check_weight_summary,
    chosen_names,
    first_flagged,
    guarded,
    require_columns,
    require_numeric,
    schema_of,
)
from polars_fairmetrics.counts import confusion_counts
from polars_fairmetrics.disparity import (
    Layout,
    Reference,
    ZeroReference,
    check_reference,
    compare,
    disparities,
    reference_statistics,
)
from polars_fairmetrics.exceptions import (
    FairMetricsError,
    InconsistentInputError,
    InvalidDtypeError,
    InvalidOptionError,
    InvalidScoreError,
)
from polars_fairmetrics.inputs import accepts_tables
from polars_fairmetrics.metrics import METRICS, _metric_names, metrics_from_counts, safe_div
from polars_fairmetrics.results import RESERVED, finish, order_rank

__all__ = [
    "ENSEMBLE_METRICS",
    "ENSEMBLE_SUM_COLUMNS",
    "MSG_LONG_DUPLICATE",
    "MSG_LONG_INCONSISTENT",
    "MSG_PROBABILITY_NAN",
    "MSG_PROBABILITY_RANGE",
    "Convention",
    "ensemble_disparities",
    "ensemble_group_metrics",
    "ensemble_group_sums",
    "ensemble_labels",
    "ensemble_metrics_from_sums",
    "ensemble_sample_metrics",
]

Convention: TypeAlias = Literal["half_up", "virny"]
"""``"half_up"``: a probability of exactly 1/2 counts as label 1 (1 iff p >= 0.5), default
reference ``"overall"``; ``"virny"`` (Virny's code): 1 iff p > 0.5, default reference ``"rest"``
(the rows not in the group: Virny's dis vs priv)."""

ENSEMBLE_METRICS: dict[str, str] = {
    "mean_probability": "mean over models of p_j",
    "std_probability": "sqrt(sum_j (p_j - mean)^2 / (m - ddof))",
    "iqr_probability": "Q_0.75 - Q_0.25 of p_1..p_m (linear interpolation)",
    "label_stability": "|k - (m - k)| / m, k = number of models with label 1",
    "jitter": "2 k (m - k) / (m (m - 1)): share of model pairs that disagree",
    "aleatoric_uncertainty": "mean over models of H(p_j) (expected binary entropy)",
    "overall_uncertainty": "H(mean p) (entropy of the mean probability)",
    "epistemic_variance": "Var_j[p_j] with ddof (Virny's documented epistemic uncertainty)",
    "epistemic_mutual_information": "H(mean p) - mean_j H(p_j) (Virny's epistemic uncertainty)",
}
"""The per-row ensemble metrics (name → formula), in output order."""

MSG_PROBABILITY_RANGE = (
    "column {column!r} (ensemble probability) has a value {value!r} outside [0, 1]"
)
MSG_PROBABILITY_NAN = "column {column!r} (ensemble probability) has a NaN value"
MSG_LONG_INCONSISTENT = (
    "column {column!r} ({role}) is not the same in every record of row id {row!r} of the long "
    "layout: it holds {first!r} and {second!r}"
)
MSG_LONG_DUPLICATE = (
    "column {column!r} (model_col) has {records} records but {models} distinct models for row "
    "id {row!r} of the long layout: a (row, model) pair is given more than once"
)

_L = "_pfm_sorted"
_M = "_pfm_m"
_S1 = "_pfm_s1"
_MEAN = "_pfm_mean"
_K = "_pfm_k"
_SH = "_pfm_sh"
_VAR = "_pfm_var"
_IQR = "_pfm_iqr"
_BAD = "_pfm_bad"
_INFO = "_pfm_info"
_ROWS = "_pfm_rows"
_NREC = "_pfm_nrec"
_NMOD = "_pfm_nmod"

_NETWORK_MAX = 64
"""Up to this many models (wide layout), rows are sorted by a sorting network of column-wise
min/max; beyond it, by a per-row array sort (slower, same result)."""


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Source:
    kind: Literal["wide", "list", "long"]
    models: tuple[str, ...] = ()
    list_col: str | None = None
    row_id: str | None = None
    model_col: str | None = None
    prob_col: str | None = None

    @property
    def inputs(self) -> list[str]:
        if self.kind == "wide":
            return list(self.models)
        if self.kind == "list":
            return [cast(str, self.list_col)]
        return [cast(str, self.row_id), cast(str, self.model_col), cast(str, self.prob_col)]


def _source(
    schema: pl.Schema,
    models: Sequence[str] | None,
    list_col: str | None,
    row_id: str | None,
    prob_col: str | None,
    model_col: str | None = None,
) -> _Source:
    long_given = row_id is not None or prob_col is not None or model_col is not None
    given = [models is not None, list_col is not None, long_given]
    if sum(given) != 1:
        raise InvalidOptionError(
            "give the ensemble's probabilities in exactly one layout: models=[columns] (wide), "
            "list_col= (a List column) or row_id=, model_col= and prob_col= (long)"
        )
    if models is not None:
        cols = as_list(models)
        if not cols:
            raise InvalidOptionError("models= is an empty list")
        require_columns(schema, "models", cols)
        for c in cols:
            require_numeric(schema, c, "ensemble probability")
        return _Source("wide", models=tuple(cols))
    if list_col is not None:
        require_columns(schema, "list_col", [list_col])
        dtype = schema[list_col]
        if not isinstance(dtype, (pl.List, pl.Array)) or not dtype.inner.is_numeric():
            raise InvalidDtypeError(
                f"column {list_col!r} (list_col) has dtype {dtype}, expected a List of numbers"
            )
        return _Source("list", list_col=list_col)
    if row_id is None or prob_col is None or model_col is None:
        raise InvalidOptionError(
            "the long layout needs row_id=, model_col= and prob_col= (the model column is what "
            "tells a duplicated record from another model's prediction)"
        )
    if len({row_id, model_col, prob_col}) != 3:
        raise InvalidOptionError(
            f"row_id={row_id!r}, model_col={model_col!r} and prob_col={prob_col!r} must be "
            "three different columns"
        )
    require_columns(schema, "row_id", [row_id])
    require_columns(schema, "model_col", [model_col])
    require_columns(schema, "prob_col", [prob_col])
    require_numeric(schema, prob_col, "ensemble probability")
    return _Source("long", row_id=row_id, model_col=model_col, prob_col=prob_col)


# ---------------------------------------------------------------------------------------------
# Sorting each row's probabilities: the canonical order every statistic is computed in
# ---------------------------------------------------------------------------------------------


def _oddeven_merge(lo: int, hi: int, r: int) -> Iterator[tuple[int, int]]:
    step = r * 2
    if step < hi - lo:
        yield from _oddeven_merge(lo, hi, step)
        yield from _oddeven_merge(lo + r, hi, step)
        yield from ((i, i + r) for i in range(lo + r, hi - r, step))
    else:
        yield (lo, lo + r)


def _oddeven_merge_sort(lo: int, hi: int) -> Iterator[tuple[int, int]]:
    if hi - lo >= 1:
        mid = lo + (hi - lo) // 2
        yield from _oddeven_merge_sort(lo, mid)
        yield from _oddeven_merge_sort(mid + 1, hi)
        yield from _oddeven_merge(lo, hi, 1)


@functools.lru_cache(maxsize=64)
def _sorting_network(m: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Layers of comparators (i < j) of Batcher's odd–even merge sort of ``m`` values.

    Built for the next power of two; a comparator touching a position >= m is dropped (those
    positions hold +inf, which a comparator leaves in place). Comparators of one layer touch
    disjoint positions, so a layer is one ``with_columns``.
    """
    size = 1
    while size < m:
        size *= 2
    layers: list[list[tuple[int, int]]] = []
    depth = [0] * m
    for i, j in _oddeven_merge_sort(0, size - 1):
        if j >= m:
            continue
        d = max(depth[i], depth[j])
        if d == len(layers):
            layers.append([])
        layers[d].append((i, j))
        depth[i] = depth[j] = d + 1
    return tuple(tuple(layer) for layer in layers)


def _clean(p: pl.Expr) -> pl.Expr:
    """Float64 with −0.0 written +0.0 (sorting treats them as equal, their order would leak)."""
    p = p.cast(pl.Float64)
    return pl.when(p == 0.0).then(pl.lit(0.0)).otherwise(p)


def _sorted_wide(
    lf: pl.LazyFrame, models: Sequence[str], carry: list[str], schema: pl.Schema
) -> pl.LazyFrame:
    """``carry`` + ``_M`` + ``_L``: each row's non-null probabilities, sorted ascending.

    Missing probabilities become +inf, as do values above 1 and NaN (so they sort last; the
    non-null count ``_M`` keeps the invalid ones inside the list, where the range check finds
    them); a sorting network of column-wise min/max sorts the row; the first ``_M`` values
    are the row's sorted probabilities. Float32 models are sorted as Float32 (half the memory
    traffic; the cast to Float64 afterwards is exact and keeps the order).
    """
    tmp = [f"_pfm_x{j}" for j in range(len(models))]
    dtype = pl.Float32 if all(schema[c] == pl.Float32 for c in models) else pl.Float64
    inf = pl.lit(math.inf, dtype=dtype)
    prepared = []
    for c, t in zip(models, tmp, strict=True):
        p = pl.col(c).cast(dtype)
        prepared.append(
            pl.when(p == 0.0)
            .then(pl.lit(0.0, dtype=dtype))
            .when(p <= 1.0)
            .then(p)
            .otherwise(inf)
            .alias(t)
        )
    m = pl.sum_horizontal([pl.col(c).is_not_null() for c in models]).cast(pl.Int64)
    out = lf.select(*[pl.col(c) for c in carry], m.alias(_M), *prepared)
    if len(models) <= _NETWORK_MAX:
        for layer in _sorting_network(len(models)):
            out = out.with_columns(
                e
                for i, j in layer
                for e in (
                    pl.min_horizontal(tmp[i], tmp[j]).alias(tmp[i]),
                    pl.max_horizontal(tmp[i], tmp[j]).alias(tmp[j]),
                )
            )
        arr = pl.concat_arr(tmp)
    else:
        arr = pl.concat_arr(tmp).arr.sort()
    lst = arr.arr.to_list().cast(pl.List(pl.Float64)).list.slice(0, pl.col(_M))
    return out.select(*[pl.col(c) for c in carry], pl.col(_M), lst.alias(_L))


def _sorted_list(lf: pl.LazyFrame, name: str, carry: list[str]) -> pl.LazyFrame:
    el = pl.element()
    lst = (
        pl.col(name)
        .cast(pl.List(pl.Float64))
        .list.drop_nulls()
        .list.sort()
        .list.eval(pl.when(el == 0.0).then(pl.lit(0.0)).otherwise(el))
    )
    return lf.select(*[pl.col(c) for c in carry], lst.alias(_L)).with_columns(
        pl.col(_L).list.len().fill_null(0).cast(pl.Int64).alias(_M)
    )


def _numeric_like(dtype: pl.DataType) -> bool:
    return dtype.is_numeric() or dtype.is_temporal() or dtype == pl.Boolean


def _long_check_cols(column: str) -> tuple[str, str, str, str]:
    return (f"_pfm_lo_{column}", f"_pfm_hi_{column}", f"_pfm_nn_{column}", f"_pfm_nan_{column}")


def _sorted_long(
    lf: pl.LazyFrame, src: _Source, carry: list[str], schema: pl.Schema
) -> tuple[pl.LazyFrame, pl.Expr, list[str]]:
    """One ``group_by(row_id)``: sorted probabilities, per-row columns and consistency checks.

    Returns the frame, the "inconsistent records" flag and the names of the check columns.
    Streaming reductions only, chosen for cost:

    - a numeric (or temporal, Boolean) per-row column is consistent within a row id when its
      min and max agree and it is null in none or all of the records (and NaN in none or all,
      for floats); the row's value is then the min;
    - any other column (text, categorical, nested) is compared through its 64-bit hash: the
      values at the smallest and at the largest hash (``min_by``/``max_by``) must be equal
      (a null is a value like any other here);
    - a (row, model) pair given twice shows as fewer distinct model hashes than records.

    A hash collision between two different values (probability about 2⁻⁶⁴ per pair) is the only
    way an inconsistency could pass.
    """
    rid, model = cast(str, src.row_id), cast(str, src.model_col)
    p = _clean(pl.col(cast(str, src.prob_col)))
    aggs: list[pl.Expr] = [
        p.drop_nulls().sort().alias(_L),
        pl.len().cast(pl.Int64).alias(_NREC),
        pl.col(model).hash().n_unique().cast(pl.Int64).alias(_NMOD),
    ]
    nrec = pl.col(_NREC)
    problem = pl.col(_NMOD) < nrec
    checks = [_NREC, _NMOD]
    for c in carry:
        if c == rid:
            continue
        lo, hi, nn, nan = _long_check_cols(c)
        col = pl.col(c)
        dtype = schema[c]
        if dtype == pl.Object:
            aggs.append(col.first().alias(lo))
            continue
        checks += [lo, hi]
        if _numeric_like(dtype):
            aggs += [col.min().alias(lo), col.max().alias(hi), col.null_count().alias(nn)]
            checks.append(nn)
            nulls = pl.col(nn).cast(pl.Int64)
            bad = pl.col(lo).ne_missing(pl.col(hi)) | ((nulls > 0) & (nulls < nrec))
            if dtype.is_float():
                aggs.append(col.is_nan().sum().alias(nan))
                checks.append(nan)
                nans = pl.col(nan).cast(pl.Int64)
                bad = bad | ((nans > 0) & (nans < nrec - nulls))
        else:
            h = col.hash()
            aggs += [col.min_by(h).alias(lo), col.max_by(h).alias(hi)]
            bad = pl.col(lo).ne_missing(pl.col(hi))
        problem = problem | bad
    out = (
        lf.group_by(rid)
        .agg(aggs)
        .with_columns(
            pl.col(_L).list.len().cast(pl.Int64).alias(_M),
            *[pl.col(_long_check_cols(c)[0]).alias(c) for c in carry if c != rid],
        )
    )
    return out, problem, checks


# ---------------------------------------------------------------------------------------------
# Per-row statistics from the sorted values
# ---------------------------------------------------------------------------------------------


def _xlogx_sum(p: pl.Expr) -> pl.Expr:
    r""":math:`p \ln p + (1-p) \ln(1-p)` with :math:`0 \ln 0 = 0`, for a non-null ``p``.

    (Natural logarithms, once per value; the change of base is one division per row.)
    """
    q = 1.0 - p
    zero = pl.lit(0.0)
    return pl.when(p > 0.0).then(p * p.log()).otherwise(zero) + pl.when(q > 0.0).then(
        q * q.log()
    ).otherwise(zero)


def _per_nat(base: float) -> pl.Expr:
    r""":math:`1 / \ln b` as a literal factor.

    Never divide a column by a literal: Polars turns ``column / scalar`` into a multiplication
    by the reciprocal on multi-row chunks but divides on one-row chunks, so the last bit would
    depend on how the engine chunks the rows. A multiplication is the same on every chunk.
    """
    return pl.lit(1.0 / math.log(base), dtype=pl.Float64)


def _entropy(p: pl.Expr, base: float) -> pl.Expr:
    r"""Binary entropy in base ``base`` with 0·log 0 = 0; null stays null.

    :math:`|p \ln p + (1-p)\ln(1-p)| / \ln b`: the sum is never positive, and the absolute
    value (unlike ``0 - x``, which the optimizer may turn into ``-x``) never makes a −0.0.
    """
    return pl.when(p.is_not_null()).then(_xlogx_sum(p).abs() * _per_nat(base))


def _vote(p: pl.Expr, convention: Convention) -> pl.Expr:
    return p >= 0.5 if convention == "half_up" else p > 0.5


def _quantile_sorted(lst: pl.Expr, m: pl.Expr, quarters: int) -> pl.Expr:
    r"""The ``quarters``/4 quantile of a sorted list of ``m`` values, as ``numpy.quantile``.

    NumPy's default (``method="linear"``): virtual index :math:`h = (m-1)q`, :math:`a, b` the
    values at :math:`\lfloor h\rfloor` and the next position, :math:`t = h - \lfloor h\rfloor`,
    and its ``_lerp``: :math:`a + (b-a)t` for :math:`t < 1/2`, :math:`b - (b-a)(1-t)` otherwise.
    With :math:`q = k/4`, :math:`\lfloor h\rfloor` and :math:`t` are exact integer arithmetic
    (:math:`(m-1)k` divided by 4), hence the same bits as NumPy's floating-point ones.
    """
    r = m - 1
    num = r * quarters
    i = num // 4
    frac = num % 4
    t = frac.cast(pl.Float64) * 0.25
    a = lst.list.get(i, null_on_oob=True)
    b = lst.list.get(pl.min_horizontal(i + 1, r), null_on_oob=True)
    d = b - a
    return pl.when(frac >= 2).then(b - d * (1.0 - t)).otherwise(a + d * t)


@dataclass(frozen=True)
class _Needs:
    k: bool
    sh: bool
    var: bool
    iqr: bool


def _needs(names: Sequence[str]) -> _Needs:
    s = set(names)
    return _Needs(
        k=bool(s & {"label_stability", "jitter"}),
        sh=bool(s & {"aleatoric_uncertainty", "epistemic_mutual_information"}),
        var=bool(s & {"std_probability", "epistemic_variance"}),
        iqr="iqr_probability" in s,
    )


def _stats(
    lf: pl.LazyFrame,
    src: _Source,
    carry: list[str],
    schema: pl.Schema,
    *,
    convention: Convention,
    ddof: int,
    base: float,
    needs: _Needs,
) -> tuple[pl.LazyFrame, list[str]]:
    """Per-row statistics (+ ``carry``), each evaluated once, and the check columns.

    Columns: ``_M`` (m), ``_S1`` (Σp), ``_MEAN``, ``_K`` (votes), ``_SH`` (ΣH(p)), ``_VAR``,
    ``_IQR`` as needed, ``_BAD`` (the row has an invalid probability or inconsistent
    records), and the columns explaining a bad row (returned as the second value).
    """
    if src.kind == "wide":
        info = [c for c in src.models if c not in carry]
        sorted_lf = _sorted_wide(lf, src.models, [*carry, *info], schema)
        checks = list(src.models)
        problem: pl.Expr = pl.lit(False)
    elif src.kind == "list":
        name = cast(str, src.list_col)
        info = [name] if name not in carry else []
        sorted_lf = _sorted_list(lf, name, [*carry, *info])
        checks = [name]
        problem = pl.lit(False)
    else:
        rid = cast(str, src.row_id)
        sorted_lf, problem, checks = _sorted_long(lf, src, carry, schema)
        checks = [rid, _L, *checks]
    lst, m = pl.col(_L), pl.col(_M)
    el = pl.element()
    bad_p = ((lst.list.first() < 0.0) | (lst.list.last() > 1.0)).fill_null(False)
    first: list[pl.Expr] = [
        pl.when(m > 0).then(lst.list.sum()).alias(_S1),
        (bad_p | problem).alias(_BAD),
    ]
    if needs.k:
        first.append(lst.list.eval(_vote(el, convention)).list.sum().cast(pl.Int64).alias(_K))
    if needs.sh:
        nats = lst.list.eval(_xlogx_sum(el)).list.sum()
        first.append(pl.when(m > 0).then(nats.abs() * _per_nat(base)).alias(_SH))
    if needs.iqr:
        iqr = _quantile_sorted(lst, m, 3) - _quantile_sorted(lst, m, 1)
        first.append(pl.when(m > 0).then(iqr).alias(_IQR))
    out = sorted_lf.with_columns(first).with_columns(safe_div(pl.col(_S1), m).alias(_MEAN))
    if needs.var:
        dev = lst - pl.col(_MEAN)
        ss = (dev * dev).list.sum()
        out = out.with_columns(pl.when(m > ddof).then(ss / (m - ddof).cast(pl.Float64)).alias(_VAR))
    return out, checks


def _metric_exprs(names: Sequence[str], *, base: float) -> dict[str, pl.Expr]:
    """Per-row metrics from the statistics columns."""
    m, k = pl.col(_M), pl.col(_K)
    mean = pl.col(_MEAN)
    mf = m.cast(pl.Float64)
    kf = k.cast(pl.Float64)
    exprs: dict[str, Callable[[], pl.Expr]] = {
        "mean_probability": lambda: mean,
        "std_probability": lambda: pl.col(_VAR).sqrt(),
        "iqr_probability": lambda: pl.col(_IQR),
        "label_stability": lambda: safe_div((2 * kf - mf).abs(), mf),
        "jitter": lambda: safe_div(2.0 * kf * (mf - kf), mf * (mf - 1.0)),
        "aleatoric_uncertainty": lambda: safe_div(pl.col(_SH), m),
        "overall_uncertainty": lambda: _entropy(mean, base),
        "epistemic_variance": lambda: pl.col(_VAR),
        "epistemic_mutual_information": lambda: _entropy(mean, base) - safe_div(pl.col(_SH), m),
    }
    return {n: exprs[n]().alias(n) for n in names}


# ---------------------------------------------------------------------------------------------
# Explaining a bad row (Python sees one summary row, only when something is wrong)
# ---------------------------------------------------------------------------------------------


def _probability_error(column: str, values: Sequence[Any], where: str = "") -> FairMetricsError:
    for v in values:
        if v is None:
            continue
        f = float(v)
        if math.isnan(f):
            return InvalidScoreError(MSG_PROBABILITY_NAN.format(column=column) + where)
        if not 0.0 <= f <= 1.0:
            return InvalidScoreError(MSG_PROBABILITY_RANGE.format(column=column, value=v) + where)
    return InvalidScoreError(f"column {column!r} (ensemble probability) has an invalid value")


def _same(a: Any, b: Any) -> bool:
    """Equal values, NaN equal to NaN (a float column whose records are all NaN is constant)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


def _explainer(
    src: _Source, roles: Mapping[str, str], schema: pl.Schema
) -> Callable[[Mapping[str, Any]], FairMetricsError]:
    """A function turning the check columns of a bad row into the error to raise."""
    if src.kind == "wide":

        def wide(row: Mapping[str, Any]) -> FairMetricsError:
            for c in src.models:
                v = row[c]
                if v is not None and (math.isnan(float(v)) or not 0.0 <= float(v) <= 1.0):
                    return _probability_error(c, [v])
            return _probability_error(src.models[0], [])

        return wide
    if src.kind == "list":
        name = cast(str, src.list_col)
        return lambda row: _probability_error(name, list(row[name] or []))
    rid, model = cast(str, src.row_id), cast(str, src.model_col)

    def long(row: Mapping[str, Any]) -> FairMetricsError:
        r, n = row[rid], row[_NREC]
        if row[_NMOD] < n:
            return InconsistentInputError(
                MSG_LONG_DUPLICATE.format(column=model, row=r, records=n, models=row[_NMOD])
            )
        for c, role in roles.items():
            lo, hi, nn, nan = _long_check_cols(c)
            if c == rid or lo not in row or hi not in row:
                continue
            first, second = row[lo], row[hi]
            nulls, nans = row.get(nn) or 0, row.get(nan) or 0
            if not _same(first, second):
                pass
            elif 0 < nulls < n:
                second = None
            elif 0 < nans < n - nulls:
                first, second = float("nan"), first
            else:
                continue
            return InconsistentInputError(
                MSG_LONG_INCONSISTENT.format(column=c, role=role, row=r, first=first, second=second)
            )
        return _probability_error(
            cast(str, src.prob_col), list(row[_L] or [])[::-1], f" (row id {r!r})"
        )

    return long


def _row_guard(
    explain: Callable[[Mapping[str, Any]], FairMetricsError],
) -> Callable[[pl.Series], pl.Series]:
    """Elementwise batch check for per-row outputs: returns the ``_S1`` field, or raises."""

    def guard(s: pl.Series) -> pl.Series:
        bad = s.struct.field(_BAD)
        if bad.any():
            raise explain(s.struct.unnest().filter(bad).row(0, named=True))
        return s.struct.field(_S1)

    return guard


def _label_expr(convention: Convention) -> pl.Expr:
    return _vote(pl.col(_MEAN), convention).alias("ensemble_label")


def _names(metrics: str | Sequence[str] | None) -> list[str]:
    names = chosen_names(metrics, list(ENSEMBLE_METRICS))
    for n in names:
        if n not in ENSEMBLE_METRICS:
            raise InvalidOptionError(
                f"unknown ensemble metric {n!r}; known: {', '.join(ENSEMBLE_METRICS)}"
            )
    return list(dict.fromkeys(names))


def _is_empty(names: str | Sequence[str] | None) -> bool:
    return names is not None and not isinstance(names, str) and len(names) == 0


def _check_options(convention: str, ddof: int, log_base: float) -> None:
    if convention not in ("half_up", "virny"):
        raise InvalidOptionError(f"convention={convention!r}; use 'half_up' or 'virny'")
    if isinstance(ddof, bool) or not isinstance(ddof, int) or ddof < 0:
        raise InvalidOptionError(f"ddof={ddof!r} must be a non-negative integer")
    if not (
        isinstance(log_base, (int, float))
        and math.isfinite(log_base)
        and log_base > 0
        and log_base != 1
    ):
        raise InvalidOptionError(f"log_base={log_base!r} must be positive, finite and not 1")


def _return(out: pl.LazyFrame, data: pl.DataFrame | pl.LazyFrame) -> Any:
    return out.collect() if isinstance(data, pl.DataFrame) else out


# ---------------------------------------------------------------------------------------------
# Per row
# ---------------------------------------------------------------------------------------------


@accepts_tables
def ensemble_sample_metrics(
    data: FrameT,
    *,
    models: Sequence[str] | None = None,
    list_col: str | None = None,
    row_id: str | None = None,
    prob_col: str | None = None,
    keep: ColumnNames | None = None,
    metrics: str | Sequence[str] | None = None,
    convention: Convention = "half_up",
    ddof: int = 1,
    log_base: float = 2.0,
    model_col: str | None = None,
) -> FrameT:
    r"""Per-row ensemble stability and uncertainty metrics (see the module table for formulas).

    .. math::

        \text{label stability} = \frac{|k - (m-k)|}{m},\quad
        \text{jitter} = \frac{2k(m-k)}{m(m-1)},\quad
        U_{aleatoric} = \frac1m\sum_j H(p_j),\quad U_{overall} = H(\bar p)

    Parameters
    ----------
    data
        Predictions (DataFrame or LazyFrame; the result is of the same kind).
    models, list_col, row_id, model_col, prob_col
        The layout: ``models`` (wide), ``list_col`` (a List column), or ``row_id`` +
        ``model_col`` + ``prob_col`` (long: one record per test row and model).
    keep
        Columns to carry along. Default: every other column (wide and list layouts); nothing but
        ``row_id`` (long layout — a column kept there must be the same in every record of a
        row).
    metrics
        Names from :data:`ENSEMBLE_METRICS` (default: all).
    convention
        ``"half_up"`` (a label is 1 iff p >= 0.5: an exact 1/2 counts as 1) or ``"virny"``
        (Virny's code: 1 iff p > 0.5); applies to each model's vote and to the ensemble label
        (from the mean, computed in ascending order of the probabilities: a mean of exactly 0.5
        gives 1, resp. 0, whatever the models' order).
    ddof
        Delta degrees of freedom of the variance and standard deviation (1, as Virny).
    log_base
        Logarithm base of the entropies (2: bits, as Virny; ``math.e``: nats).

    Returns
    -------
    DataFrame or LazyFrame
        The kept columns (and ``row_id``), ``n_models``, ``ensemble_label`` (Boolean), then
        the metric columns. Wide and list layouts keep the row order; long is sorted by
        ``row_id``.

    Raises
    ------
    InvalidScoreError
        When the query runs, for a NaN probability or one outside [0, 1], naming the column.
    InconsistentInputError
        When the query runs (long layout), for a row whose kept columns differ between its
        records or a (row, model) pair given twice, naming the column, row id and values.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"p1": [0.9, 0.2], "p2": [0.8, 0.6], "p3": [0.7, 0.4]})
    >>> out = ensemble_sample_metrics(df, models=["p1", "p2", "p3"])
    >>> out["label_stability"].round(4).to_list(), out["jitter"].round(4).to_list()
    ([1.0, 0.3333], [0.0, 0.6667])
    """
    _check_options(convention, ddof, log_base)
    schema = schema_of(data)
    src: _Source = _source(schema, models, list_col, row_id, prob_col, model_col)
    names = _names(metrics)
    keep_cols: list[str]
    if keep is None:
        keep_cols = [] if src.kind == "long" else [c for c in schema.names() if c not in src.inputs]
    else:
        keep_cols = as_list(keep)
        require_columns(schema, "keep", keep_cols)
    if src.kind == "long":
        rid: str = cast(str, src.row_id)
        keep_cols = [rid, *[c for c in keep_cols if c != rid]]
        for c in keep_cols[1:]:
            if c in src.inputs:
                raise InvalidOptionError(
                    f"keep= names {c!r}, a per-record column of the long layout (it differs "
                    "between a row's records by design)"
                )
    check_reserved(
        [c for c in keep_cols if c != src.row_id], ["n_models", "ensemble_label", *ENSEMBLE_METRICS]
    )
    stats, checks = _stats(
        data.lazy(),
        src,
        keep_cols,
        schema,
        convention=convention,
        ddof=ddof,
        base=float(log_base),
        needs=_needs(names),
    )
    explain = _explainer(src, dict.fromkeys(keep_cols, "keep"), schema)
    checked = pl.struct(_BAD, _S1, *checks).map_batches(
        _row_guard(explain), return_dtype=pl.Float64, is_elementwise=True
    )
    exprs = _metric_exprs(names, base=float(log_base))
    out = stats.with_columns(checked.alias(_S1)).with_columns(
        safe_div(pl.col(_S1), pl.col(_M)).alias(_MEAN)
    )
    out = out.select(
        *[pl.col(c) for c in keep_cols],
        pl.col(_M).alias("n_models"),
        _label_expr(convention),
        *exprs.values(),
    )
    if src.kind == "long":
        out = out.sort(cast(str, src.row_id), nulls_last=True)
    return cast(FrameT, _return(out, data))


@accepts_tables
def ensemble_labels(
    data: FrameT,
    *,
    models: Sequence[str] | None = None,
    list_col: str | None = None,
    row_id: str | None = None,
    prob_col: str | None = None,
    keep: ColumnNames | None = None,
    convention: Convention = "half_up",
    model_col: str | None = None,
) -> FrameT:
    r"""The ensemble's label from its mean probability, for the core's confusion metrics.

    .. math:: \hat y = 1[\bar p \ge 0.5] \text{ (half\_up)},\quad 1[\bar p > 0.5] \text{ (virny)}

    with :math:`\bar p` summed in ascending order of the probabilities, so that the label of a
    mean of exactly 0.5 does not depend on the order of the models.

    Returns the kept columns, ``mean_probability`` and ``ensemble_label`` (Boolean; null when no
    model predicted the row), ready for :func:`~polars_fairmetrics.confusion_counts`,
    :func:`~polars_fairmetrics.group_metrics` or :func:`~polars_fairmetrics.disparities` with
    ``y_pred="ensemble_label"`` (or ``y_score="mean_probability"``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"y": [1, 0, 1], "p1": [0.9, 0.5, 0.2], "p2": [0.7, 0.5, 0.4]})
    >>> lab = ensemble_labels(df, models=["p1", "p2"])
    >>> lab["ensemble_label"].to_list()
    [True, True, False]
    >>> pfm.group_metrics(lab, y_true="y", y_pred="ensemble_label", metrics="tpr")["value"].item()
    0.5
    """
    out = ensemble_sample_metrics(
        data,
        models=models,
        list_col=list_col,
        row_id=row_id,
        prob_col=prob_col,
        model_col=model_col,
        keep=keep,
        metrics="mean_probability",
        convention=convention,
    )
    return out.drop("n_models")


# ---------------------------------------------------------------------------------------------
# Per group
# ---------------------------------------------------------------------------------------------


def _group_sums(
    data: pl.DataFrame | pl.LazyFrame,
    *,
    src: _Source,
    plan: _Plan,
    weight: str | None,
    convention: Convention,
    ddof: int,
    base: float,
    y_true: str | None,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """(per-row frame, validated per-group additive sums) as LazyFrames.

    The per-row statistics are evaluated once, in one frame that both the group sums and (with
    ``y_true``) the confusion counts read. The group aggregation carries the checks: the
    first bad row's explanation (a struct, null when every row is fine) and the weight
    summary; a small guard on the aggregated table raises from them.
    """
    keys = plan.keys
    roles: dict[str, str] = {}
    for c in plan.parts:
        roles[c] = "partition_by"
    for c in plan.by:
        roles[c] = "group"
    if y_true:
        roles.setdefault(y_true, "y_true")
    if weight:
        roles.setdefault(weight, "weight")
    carry = list(roles)
    if src.kind == "long":
        rid = cast(str, src.row_id)
        carry = [rid, *[c for c in carry if c != rid]]
    schema = schema_of(data)
    stats, checks = _stats(
        data.lazy(),
        src,
        carry,
        schema,
        convention=convention,
        ddof=ddof,
        base=base,
        needs=_needs(plan.names),
    )
    exprs = _metric_exprs(plan.names, base=base)
    rows = stats.select(
        *[pl.col(c) for c in dict.fromkeys([*carry, *checks])],
        pl.col(_BAD),
        _label_expr(convention),
        *exprs.values(),
    )
    if y_true:
        rows = rows.cache()  # read by the group sums and by the count scan: evaluated once
    w = pl.col(weight).cast(pl.Float64) if weight else None
    aggs: list[pl.Expr] = [
        pl.len().cast(pl.Int64).alias(_ROWS),
        pl.struct(checks).filter(pl.col(_BAD)).first().alias(_INFO),
    ]
    for n in plan.names:
        v = pl.col(n)
        if w is None:
            aggs += [v.sum().alias(f"{n}__s"), v.count().cast(pl.Int64).alias(f"{n}__n")]
        else:
            vw = v * w
            aggs += [
                vw.sum().alias(f"{n}__s"),
                pl.when(v.is_not_null()).then(w).sum().alias(f"{n}__w"),
                vw.count().cast(pl.Int64).alias(f"{n}__n"),
            ]
    if w is not None:
        aggs += [w.min().alias("_pfm_wmin"), w.max().alias("_pfm_wmax"), w.sum().alias("_pfm_wsum")]
    grouped = rows.group_by(keys).agg(aggs) if keys else rows.select(aggs)
    if w is None:
        grouped = grouped.with_columns(
            pl.col(f"{n}__n").cast(pl.Float64).alias(f"{n}__w") for n in plan.names
        )
    explain = _explainer(src, roles, schema)
    col = weight
    drop = [_INFO, *(["_pfm_wmin", "_pfm_wmax", "_pfm_wsum"] if weight else [])]

    def guard(t: pl.DataFrame) -> pl.DataFrame:
        bad = t.filter(pl.col(_INFO).is_not_null())
        if bad.height:
            raise explain(bad[_INFO][0])
        if col is not None:
            check_weight_summary(
                col,
                cast("float | None", t["_pfm_wmin"].min()),
                cast("float | None", t["_pfm_wmax"].max()),
                cast("float | None", t["_pfm_wsum"].sum()) if t.height else None,
            )
        return t.drop(drop)

    sch = {k: v for k, v in grouped.collect_schema().items() if k not in drop}
    return rows, grouped.map_batches(guard, schema=sch)


def _after_checks(frame: pl.LazyFrame, sums: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """``frame`` (a result built from the per-row frame) once the checks of ``sums`` passed.

    The confusion metrics come from the per-row frame through the core's count scan, which
    does not see the ensemble checks: joining the (small, validated) group table makes the
    query run them even when no ensemble metric is requested.
    """
    if keys:
        return frame.join(sums.select(keys), on=keys, how="semi", nulls_equal=True)
    return frame.join(sums.select(pl.len().alias("_pfm_ok")), how="cross").drop("_pfm_ok")


def _order_expr(names: Sequence[str]) -> pl.Expr:
    return order_rank("metric", [*ENSEMBLE_METRICS, *METRICS], strict=False)


@dataclass(frozen=True)
class _Plan:
    src: _Source
    by: list[str]
    parts: list[str]
    keys: list[str]
    names: list[str]
    confusion: list[str]


def _plan(
    data: pl.DataFrame | pl.LazyFrame,
    *,
    models: Sequence[str] | None,
    list_col: str | None,
    row_id: str | None,
    prob_col: str | None,
    model_col: str | None,
    y_true: str | None,
    by: ColumnNames | None,
    partition_by: ColumnNames | None,
    weight: str | None,
    metrics: str | Sequence[str] | None,
    confusion_metrics: str | Sequence[str] | None,
    convention: str,
    ddof: int,
    log_base: float,
) -> _Plan:
    _check_options(convention, ddof, log_base)
    schema = schema_of(data)
    src = _source(schema, models, list_col, row_id, prob_col, model_col)
    by_cols = as_list(by)
    parts = as_list(partition_by)
    require_columns(schema, "group", by_cols)
    require_columns(schema, "partition_by", parts)
    keys = [*parts, *by_cols]
    if len(set(keys)) != len(keys):
        raise InvalidOptionError(f"a column is both in by= and partition_by=: {keys!r}")
    check_reserved(
        keys,
        [
            *(c for c in RESERVED if c not in parts),
            *ENSEMBLE_SUM_COLUMNS,
            "ensemble_label",
            *src.inputs,
        ],
    )
    if weight is not None:
        require_columns(schema, "weight", [weight])
        require_numeric(schema, weight, "weight")
    if y_true is not None:
        require_columns(schema, "y_true", [y_true])
    names = [] if _is_empty(metrics) else _names(metrics)
    confusion: list[str] = []
    if y_true is not None:
        confusion = [] if _is_empty(confusion_metrics) else _metric_names(confusion_metrics)
    elif confusion_metrics is not None and not _is_empty(confusion_metrics):
        raise InvalidOptionError("confusion_metrics= needs y_true=")
    return _Plan(src, by_cols, parts, keys, names, confusion)


def _confusion_table(
    rows: pl.LazyFrame,
    plan: _Plan,
    y_true: str,
    weight: str | None,
    pos_label: Label | None,
    neg_label: Label | None,
) -> pl.LazyFrame:
    return confusion_counts(
        rows,
        y_true=y_true,
        y_pred="ensemble_label",
        by=plan.keys or None,
        weight=weight,
        pos_label=pos_label,
        neg_label=neg_label,
    )


@accepts_tables
def ensemble_group_metrics(
    data: FrameT,
    *,
    models: Sequence[str] | None = None,
    list_col: str | None = None,
    row_id: str | None = None,
    prob_col: str | None = None,
    y_true: str | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    metrics: str | Sequence[str] | None = None,
    confusion_metrics: str | Sequence[str] | None = None,
    partition_by: ColumnNames | None = None,
    convention: Convention = "half_up",
    ddof: int = 1,
    log_base: float = 2.0,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    model_col: str | None = None,
) -> FrameT:
    r"""Per-group means of the per-row ensemble metrics, plus the ensemble label's confusion
    metrics (with ``y_true``), as one tidy frame.

    .. math::

        \bar v_g = \frac{\sum_{i \in g} w_i v_i}{\sum_{i \in g} w_i}
        \quad (w_i = 1 \text{ without } \texttt{weight})

    over the rows of group :math:`g` whose per-row value :math:`v_i` is defined. The mean jitter
    of a group equals the mean over model pairs of their churn (share of the group's rows on
    which the two models disagree) when every model predicted every row.

    Parameters
    ----------
    data, models, list_col, row_id, model_col, prob_col
        Predictions and their layout (see :func:`ensemble_sample_metrics`).
    y_true
        True-label column: adds the core's confusion metrics of the ensemble label
        (:func:`~polars_fairmetrics.confusion_counts` on ``ensemble_label``).
    by
        Group column(s); several give intersectional groups; ``None`` one overall row.
    weight
        Row weight or bootstrap multiplicity: scales each row's contribution to the means (and
        to the confusion counts). Non-negative and finite.
    metrics
        Ensemble metrics (default: all of :data:`ENSEMBLE_METRICS`); ``[]`` for none.
    confusion_metrics
        Core metric names (default: all of :data:`~polars_fairmetrics.METRICS` when ``y_true``
        is given); ``[]`` for none.
    partition_by
        Columns that split the data into independent partitions (e.g. ``replicate`` of a
        bootstrap): grouped like ``by``, kept apart by :func:`ensemble_disparities`.
    convention, ddof, log_base
        See :func:`ensemble_sample_metrics`.
    pos_label, neg_label
        Classes of ``y_true`` (as for :func:`~polars_fairmetrics.confusion_counts`).

    Returns
    -------
    DataFrame or LazyFrame
        Partition and group keys, ``metric``, ``value``, ``n`` (rows whose value is defined),
        ``n_null`` (rows of the group left out: undefined value, no prediction, null weight,
        null label), and ``n_w`` (the sum of weights) with ``weight``. Sorted by the keys, then
        metrics in registry order.

    Notes
    -----
    A pure function of its input frame: usable as the statistic of a row-level bootstrap (pass
    the resampling multiplicity as ``weight``, or stack replicates with a ``replicate`` column
    in ``partition_by``).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b"], "p1": [0.9, 0.2, 0.6], "p2": [0.8, 0.6, 0.4]})
    >>> out = ensemble_group_metrics(df, models=["p1", "p2"], by="g", metrics="jitter")
    >>> out.select("g", "value", "n").rows()
    [('a', 0.5, 2), ('b', 1.0, 1)]
    """
    plan: _Plan = _plan(
        data,
        models=models,
        list_col=list_col,
        row_id=row_id,
        prob_col=prob_col,
        model_col=model_col,
        y_true=y_true,
        by=by,
        partition_by=partition_by,
        weight=weight,
        metrics=metrics,
        confusion_metrics=confusion_metrics,
        convention=convention,
        ddof=ddof,
        log_base=log_base,
    )
    rows, sums = _group_sums(
        data,
        src=plan.src,
        plan=plan,
        weight=weight,
        convention=convention,
        ddof=ddof,
        base=float(log_base),
        y_true=y_true,
    )
    parts: list[pl.LazyFrame] = []
    if plan.names:
        structs = [
            pl.struct(
                pl.lit(n).alias("metric"),
                safe_div(pl.col(f"{n}__s"), pl.col(f"{n}__w")).alias("value"),
                pl.col(f"{n}__n").cast(pl.Int64).alias("support"),
                pl.col(f"{n}__n").alias("n"),
                (pl.col(_ROWS) - pl.col(f"{n}__n")).alias("n_null"),
                *([pl.col(f"{n}__w").alias("n_w")] if weight else []),
            )
            for n in plan.names
        ]
        parts.append(
            sums.select(*plan.keys, pl.concat_list(structs).alias("_pfm_m"))
            .explode("_pfm_m")
            .unnest("_pfm_m")
        )
    if plan.confusion:
        table = _confusion_table(rows, plan, cast(str, y_true), weight, pos_label, neg_label)
        long = metrics_from_counts(table, metrics=plan.confusion)
        long = (
            long.join(
                table.select(*plan.keys, "n_null"), on=plan.keys, how="left", nulls_equal=True
            )
            if plan.keys
            else long.join(table.select("n_null"), how="cross")
        )
        long = long.select(
            *plan.keys,
            "metric",
            "value",
            "support",
            "n",
            "n_null",
            *(["n_w"] if weight else []),
        )
        parts.append(long if plan.names else _after_checks(long, sums, plan.keys))
    if not parts:
        raise InvalidOptionError("no metric requested: metrics=[] and no y_true=")
    out = pl.concat(parts, how="vertical_relaxed") if len(parts) > 1 else parts[0]
    out = out.with_columns(pl.col("n").cast(pl.Int64), pl.col("n_null").cast(pl.Int64))
    out = out.sort([*plan.keys, _order_expr(plan.names)], nulls_last=True)
    return cast(FrameT, _return(out, data))


# ---------------------------------------------------------------------------------------------
# Mergeable sums
# ---------------------------------------------------------------------------------------------

ENSEMBLE_SUM_COLUMNS: tuple[str, ...] = ("value_sum", "n", "n_null", "n_w")
"""Additive columns of an ensemble-sums table (``n_w``: weighted only)."""


@accepts_tables
def ensemble_group_sums(
    data: FrameT,
    *,
    models: Sequence[str] | None = None,
    list_col: str | None = None,
    row_id: str | None = None,
    prob_col: str | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    metrics: str | Sequence[str] | None = None,
    partition_by: ColumnNames | None = None,
    separately: bool = False,
    convention: Convention = "half_up",
    ddof: int = 1,
    log_base: float = 2.0,
    model_col: str | None = None,
) -> FrameT:
    r"""Per group and ensemble metric, the additive sums its group mean is made of (mergeable).

    .. math::

        \text{value\_sum}_g = \sum_{i \in g,\ v_i \text{ defined}} w_i v_i,\quad
        n_g = \#\{i \in g: v_i \text{ defined}\},\quad
        n^{null}_g = \#\{i \in g\} - n_g,\quad
        n^w_g = \sum_{i \in g,\ v_i \text{ defined}} w_i

    (:math:`w_i = 1` and no ``n_w`` without ``weight``). Every group value of
    :func:`ensemble_group_metrics` is :math:`\text{value\_sum}_g / n^w_g` (or
    :math:`/ n_g`): a mean of per-row values, so the sums of the parts of a dataset (days,
    files, partitions) add up to the sums of the whole, and
    :func:`ensemble_metrics_from_sums` of the merged sums equals :func:`ensemble_group_metrics`
    of the concatenated rows — exactly for ``n`` and ``n_null``, up to float rounding of the
    sums for the means. Every metric of :data:`ENSEMBLE_METRICS` is mergeable this way (each
    per-row value, the per-row IQR included, depends on that row's models only). What is **not**
    mergeable from these sums: quantiles or medians of the per-row values over a group's rows,
    and row-level bootstrap intervals (they need the rows; the label-stability histogram of
    the report is a count per bin, mergeable as such).

    Parameters
    ----------
    data, models, list_col, row_id, model_col, prob_col
        Predictions and their layout (see :func:`ensemble_sample_metrics`).
    by
        Group column(s): intersectional groups, or each on its own with ``separately=True``.
    weight
        Row weight (non-negative, finite): ``value_sum`` and ``n_w`` are weighted sums.
    metrics
        Ensemble metrics (default: all of :data:`ENSEMBLE_METRICS`).
    partition_by
        Columns kept apart like ``by`` (e.g. a ``period`` of your own).
    separately
        With several ``by`` columns: each attribute on its own, side by side, with an
        ``attribute`` column (the other keys null), from one scan: the sums of the
        intersection, rolled up.
    convention, ddof, log_base
        See :func:`ensemble_sample_metrics`.

    Returns
    -------
    DataFrame or LazyFrame
        [``attribute``], keys, partitions, ``metric``, ``value_sum``, ``n``, ``n_null``,
        [``n_w``]; sorted by them, then the metrics in registry order.

    Examples
    --------
    >>> import polars as pl
    >>> day1 = pl.DataFrame({"g": ["a", "a", "b"], "p1": [0.9, 0.2, 0.6], "p2": [0.8, 0.6, 0.4]})
    >>> day2 = pl.DataFrame({"g": ["a", "b"], "p1": [0.1, 0.7], "p2": [0.3, 0.9]})
    >>> opts = dict(models=["p1", "p2"], by="g", metrics="label_stability")
    >>> sums = pl.concat([ensemble_group_sums(d, **opts) for d in (day1, day2)])
    >>> merged = sums.group_by("g", "metric").agg(pl.col("value_sum", "n", "n_null").sum())
    >>> ensemble_metrics_from_sums(merged, by="g").select("g", "value", "n").rows()
    [('a', 0.6666666666666666, 3), ('b', 0.5, 2)]
    >>> ensemble_group_metrics(pl.concat([day1, day2]), **opts).select("g", "value", "n").rows()
    [('a', 0.6666666666666666, 3), ('b', 0.5, 2)]
    """
    keys_in = as_list(by)
    if separately and not keys_in:
        raise InvalidOptionError("separately=True needs at least one by= column")
    plan: _Plan = _plan(
        data,
        models=models,
        list_col=list_col,
        row_id=row_id,
        prob_col=prob_col,
        model_col=model_col,
        y_true=None,
        by=keys_in or None,
        partition_by=partition_by,
        weight=weight,
        metrics=metrics,
        confusion_metrics=None,
        convention=convention,
        ddof=ddof,
        log_base=log_base,
    )
    if not plan.names:
        raise InvalidOptionError("no metric requested: metrics=[]")
    _, sums = _group_sums(
        data,
        src=plan.src,
        plan=plan,
        weight=weight,
        convention=convention,
        ddof=ddof,
        base=float(log_base),
        y_true=None,
    )
    structs = [
        pl.struct(
            pl.lit(n).alias("metric"),
            pl.col(f"{n}__s").cast(pl.Float64).alias("value_sum"),
            pl.col(f"{n}__n").cast(pl.Int64).alias("n"),
            (pl.col(_ROWS) - pl.col(f"{n}__n")).cast(pl.Int64).alias("n_null"),
            *([pl.col(f"{n}__w").cast(pl.Float64).alias("n_w")] if weight else []),
        )
        for n in plan.names
    ]
    long = (
        sums.select(*plan.keys, pl.concat_list(structs).alias("_pfm_m"))
        .explode("_pfm_m")
        .unnest("_pfm_m")
    )
    stats = ["value_sum", "n", "n_null", *(["n_w"] if weight else [])]
    lead: list[str] = []
    if separately:
        schema = long.collect_schema()
        parts = []
        for key in plan.by:
            others = [pl.lit(None, dtype=schema[k]).alias(k) for k in plan.by if k != key]
            parts.append(
                long.group_by(*plan.parts, key, "metric")
                .agg(pl.col(stats).sum())
                .with_columns(pl.lit(key).alias("attribute"), *others)
                .select("attribute", *plan.parts, *plan.by, "metric", *stats)
            )
        long = pl.concat(parts, how="vertical")
        lead = ["attribute"]
        sort_lead: list[pl.Expr] = [order_rank("attribute", plan.by)]
    else:
        sort_lead = []
    out = long.select(*lead, *plan.parts, *plan.by, "metric", *stats).sort(
        [*sort_lead, *[pl.col(k) for k in plan.keys], _order_expr(plan.names)], nulls_last=True
    )
    return cast(FrameT, _return(out, data))


@accepts_tables
def _check_sums(sums: FrameT, sum_columns: list[str]) -> FrameT:
    """``sums`` unchanged, or an error naming the column, the value and its row: a sum that is
    not a finite number, a count (``n``, ``n_null``, ``n_w``) that is negative or, for ``n``
    and ``n_null``, not whole, or a metric that is not an ensemble metric. The dtypes are
    checked when the query is built, the values when it runs (tables made elsewhere)."""
    schema = schema_of(sums)
    for c in sum_columns:
        require_numeric(schema, c, "ensemble sum")
    whole = [c for c in ("n", "n_null") if c in sum_columns]

    def invalid(column: str) -> pl.Expr:
        f = pl.col(column).cast(pl.Float64)
        bad = f.is_nan() | f.is_infinite()
        if column != "value_sum":
            bad = bad | (f < 0)
        if column in whole:
            bad = bad | (f != f.floor())
        return bad.fill_null(False)

    known = pl.col("metric").cast(pl.String).is_in(list(ENSEMBLE_METRICS))
    checks = [*((c, invalid(c)) for c in sum_columns), ("metric", ~known.fill_null(False))]

    def guard(table: pl.DataFrame) -> pl.DataFrame:
        found = first_flagged(table, checks)
        if found is None:
            return table
        column, row = found
        value = row[column]
        if column == "metric":
            raise InvalidOptionError(
                f"column 'metric' of the ensemble sums has {value!r}, not an ensemble "
                f"metric; known: {', '.join(ENSEMBLE_METRICS)}"
            )
        raise InvalidOptionError(
            f"column {column!r} of the ensemble sums has a value {value!r} (row {row}): "
            "sums are finite numbers, counts non-negative (n and n_null whole)"
        )

    return guarded(sums, guard)


def ensemble_metrics_from_sums(
    sums: FrameT,
    *,
    by: ColumnNames | None = None,
) -> FrameT:
    r"""Per-group ensemble metrics from an ensemble-sums table (merged or not).

    .. math:: \bar v_g = \text{value\_sum}_g / n^w_g \quad (\text{or } / n_g \text{ unweighted})

    null where no row of the group has a defined value (0/0). The result is the group-values
    table of :func:`ensemble_group_metrics` (``metric``, ``value``, ``support``, ``n``,
    ``n_null``, [``n_w``]) for the sums' partitions (``attribute``, ``model``, ``period`` …)
    and keys.

    Parameters
    ----------
    sums
        A table of :func:`ensemble_group_sums` (or the sum of several: any window of a store,
        :func:`~polars_fairmetrics.monitor.read_ensemble_sums`).
    by
        The group key columns (default: every column that is not a known partition or a sum).

    Returns
    -------
    DataFrame or LazyFrame
        [``attribute``], keys, partitions, ``metric``, ``value``, ``support``, ``n``,
        ``n_null``, [``n_w``]; sorted.

    Examples
    --------
    >>> import polars as pl
    >>> sums = pl.DataFrame({"g": ["a", "b"], "metric": ["jitter", "jitter"],
    ...                      "value_sum": [1.0, 0.0], "n": [2, 0], "n_null": [0, 1]})
    >>> ensemble_metrics_from_sums(sums).select("g", "value", "n", "n_null").rows()
    [('a', 0.5, 2, 0), ('b', None, 0, 1)]
    """
    columns = list(schema_of(sums).names())
    missing = [c for c in ("metric", "value_sum", "n", "n_null") if c not in columns]
    if missing:
        raise InvalidOptionError(
            "ensemble_metrics_from_sums needs an ensemble-sums table (ensemble_group_sums); "
            f"missing {', '.join(missing)}"
        )
    layout = Layout.of(columns, by, [*ENSEMBLE_SUM_COLUMNS, "metric"])
    weighted = "n_w" in columns
    sums = _check_sums(sums, [c for c in ENSEMBLE_SUM_COLUMNS if c in columns])
    denominator = pl.col("n_w") if weighted else pl.col("n").cast(pl.Float64)
    lazy = sums.lazy().select(
        *layout.partitions,
        *layout.keys,
        "metric",
        safe_div(pl.col("value_sum"), denominator).alias("value"),
        pl.col("n").cast(pl.Int64).alias("support"),
        pl.col("n").cast(pl.Int64),
        pl.col("n_null").cast(pl.Int64),
        *([pl.col("n_w").cast(pl.Float64)] if weighted else []),
    )
    names = list(ENSEMBLE_METRICS)
    out = finish(lazy, keys=layout.keys, partitions=layout.partitions, order=names)
    return cast(FrameT, _return(out, sums))


# ---------------------------------------------------------------------------------------------
# Disparities
# ---------------------------------------------------------------------------------------------


def _disparity_columns(plan: _Plan) -> list[str]:
    """Column order of both parts of :func:`ensemble_disparities` (they are concatenated), in
    the order of docs/results.md."""
    return [
        *plan.by,
        *plan.parts,
        "metric",
        "value",
        "support",
        "n",
        "n_null",
        "reference",
        "is_reference",
        "reference_value",
        "difference",
        "ratio",
    ]


@accepts_tables
def ensemble_disparities(
    data: FrameT,
    *,
    models: Sequence[str] | None = None,
    list_col: str | None = None,
    row_id: str | None = None,
    prob_col: str | None = None,
    by: ColumnNames,
    reference: Reference | None = None,
    y_true: str | None = None,
    weight: str | None = None,
    metrics: str | Sequence[str] | None = None,
    confusion_metrics: str | Sequence[str] | None = None,
    partition_by: ColumnNames | None = None,
    convention: Convention = "half_up",
    ddof: int = 1,
    log_base: float = 2.0,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    model_col: str | None = None,
) -> FrameT:
    r"""Group means of the ensemble metrics against a reference: difference and ratio.

    .. math::

        \Delta_g = \bar v_g - \bar v_{ref},\qquad \mathcal{Q}_g = \bar v_g / \bar v_{ref},\qquad
        \bar v_{rest(g)} = \frac{S_{tot} - S_g}{W_{tot} - W_g}

    where :math:`S` and :math:`W` are the additive sums :math:`\sum w_i v_i` and
    :math:`\sum w_i` (no second scan). Virny's documentation composes the stability and
    uncertainty disparities as differences (:math:`\Delta U = E_{dis}[U] - E_{priv}[U]`); the
    ratio is given too (null when the reference is 0). With ``y_true``, the confusion metrics
    of the ensemble label are added through :func:`~polars_fairmetrics.disparities` (its
    disparate impact is the ``ratio`` of ``selection_rate``). The parameters not listed below
    are those of :func:`ensemble_group_metrics`.

    Parameters
    ----------
    reference
        A group value (tuple or mapping for several ``by`` columns), ``"rest"`` (the rows not in
        the group: Virny's dis vs priv), ``"overall"`` or ``"largest"`` (the group with the most
        rows of its partition). Default: ``"overall"`` with
        ``convention="half_up"``, ``"rest"`` with ``convention="virny"``.

    Returns
    -------
    DataFrame or LazyFrame
        Group keys, partitions, ``metric``, ``value``, ``reference_value``, ``difference``,
        ``ratio``, ``n`` (rows of the group whose value is defined), ``reference``.

    Raises
    ------
    ReferenceGroupError
        A named reference absent from the data (or a partition), when the query runs.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b"], "p1": [0.9, 0.2, 0.6], "p2": [0.8, 0.6, 0.4]})
    >>> out = ensemble_disparities(df, models=["p1", "p2"], by="g", metrics="jitter",
    ...                            reference="rest")
    >>> out.select("g", "value", "reference_value", "difference").rows()
    [('a', 0.5, 1.0, -0.5), ('b', 1.0, 0.5, 0.5)]
    """
    if reference is None:
        reference = "rest" if convention == "virny" else "overall"
    plan: _Plan = _plan(
        data,
        models=models,
        list_col=list_col,
        row_id=row_id,
        prob_col=prob_col,
        model_col=model_col,
        y_true=y_true,
        by=by,
        partition_by=partition_by,
        weight=weight,
        metrics=metrics,
        confusion_metrics=confusion_metrics,
        convention=convention,
        ddof=ddof,
        log_base=log_base,
    )
    if not plan.by:
        raise InvalidOptionError("ensemble_disparities needs by= (the group columns)")
    rows, sums = _group_sums(
        data,
        src=plan.src,
        plan=plan,
        weight=weight,
        convention=convention,
        ddof=ddof,
        base=float(log_base),
        y_true=y_true,
    )
    # Virny divides with NumPy: x / 0 is ±inf there; null (undefined) in our own convention
    zero: ZeroReference = "infinity" if convention == "virny" else "null"
    parts_out: list[pl.LazyFrame] = []
    if plan.names:
        sum_cols = [f"{n}__{x}" for n in plan.names for x in ("s", "w")]
        layout = Layout(keys=list(plan.by), partitions=list(plan.parts))
        with_ref = check_reference(
            sums.with_columns(
                reference_statistics(reference, layout, sum_cols, sums.collect_schema(), size=_ROWS)
            ),
            reference,
            layout,
        )
        structs = []
        for n in plan.names:
            value = safe_div(pl.col(f"{n}__s"), pl.col(f"{n}__w"))
            ref_value = safe_div(pl.col(f"_pfm_ref_{n}__s"), pl.col(f"_pfm_ref_{n}__w"))
            diff, ratio = compare(value, ref_value, zero_reference=zero)
            structs.append(
                pl.struct(
                    pl.lit(n).alias("metric"),
                    value.alias("value"),
                    ref_value.alias("reference_value"),
                    diff.alias("difference"),
                    ratio.alias("ratio"),
                    pl.col(f"{n}__n").cast(pl.Int64).alias("support"),
                    pl.col(f"{n}__n").cast(pl.Int64).alias("n"),
                    (pl.col(_ROWS) - pl.col(f"{n}__n")).cast(pl.Int64).alias("n_null"),
                )
            )
        parts_out.append(
            with_ref.select(
                *plan.by,
                *plan.parts,
                "reference",
                "is_reference",
                pl.concat_list(structs).alias("_pfm_m"),
            )
            .explode("_pfm_m")
            .unnest("_pfm_m")
            .select(*_disparity_columns(plan))
        )
    if plan.confusion:
        table = _confusion_table(rows, plan, cast(str, y_true), weight, pos_label, neg_label)
        disp = disparities(
            table, by=plan.by, metrics=plan.confusion, reference=reference, zero_reference=zero
        )
        if not plan.names:
            disp = _after_checks(disp, sums, plan.keys)
        parts_out.append(
            disp.with_columns(pl.col("n").cast(pl.Int64)).select(*_disparity_columns(plan))
        )
    if not parts_out:
        raise InvalidOptionError("no metric requested: metrics=[] and no y_true=")
    out = pl.concat(parts_out, how="vertical_relaxed") if len(parts_out) > 1 else parts_out[0]
    out = out.sort([*plan.parts, *plan.by, _order_expr(plan.names)], nulls_last=True)
    return cast(FrameT, _return(out, data))
