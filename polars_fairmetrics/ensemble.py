r"""Ensemble stability and uncertainty metrics (Virny's performance dimensions), lazily.

Given the predicted probabilities :math:`p_1, \dots, p_m` of the positive class from the
:math:`m` models of an ensemble for each test row, this module computes, per row:

- ``n_models``: :math:`m`, the models that predicted the row (non-null probabilities);
- ``ensemble_label``: :math:`1[\bar p \ge 0.5]` (seed), :math:`1[\bar p > 0.5]` (Virny);
- ``mean_probability``: :math:`\bar p = \frac1m \sum_j p_j`;
- ``std_probability``: :math:`\sqrt{\frac{1}{m - ddof}\sum_j (p_j - \bar p)^2}` (``ddof=1``
  as Virny);
- ``iqr_probability``: :math:`Q_{0.75} - Q_{0.25}` (linear interpolation, as NumPy and SciPy);
- ``label_stability``: :math:`|k - (m - k)| / m` with :math:`k = \#\{j: \hat y_j = 1\}`;
- ``jitter``: :math:`2k(m-k) / (m(m-1))`, the share of model pairs that disagree;
- ``aleatoric_uncertainty``: :math:`\frac1m \sum_j H(p_j)` (expected entropy);
- ``overall_uncertainty``: :math:`H(\bar p)` (entropy of the mean);
- ``epistemic_variance``: :math:`\mathrm{Var}_j[p_j]` (the seed's epistemic uncertainty);
- ``epistemic_mutual_information``: :math:`H(\bar p) - \frac1m\sum_j H(p_j)` (Virny's).

with :math:`H(p) = -p \log_b p - (1-p) \log_b (1-p)`, :math:`0 \log 0 = 0`, base :math:`b = 2`
(bits, as Virny) unless ``log_base`` says otherwise, and a model's label
:math:`\hat y_j = 1[p_j \ge 0.5]` (the seed's rule) or :math:`1[p_j > 0.5]`
(``convention="virny"``).

Per group (and overall, and for intersections of several ``by`` columns) a metric is the mean
of its per-row values (weighted by ``weight`` when given), and disparities compare group means
with a reference (a named group, ``"rest"`` — Virny's dis vs priv — or ``"overall"``) as
differences (how the seed composes stability and uncertainty disparities) and ratios. The
ensemble label feeds every confusion metric of the core (:func:`~polars_fairmetrics.group_metrics`,
:func:`~polars_fairmetrics.disparities`).

Inputs, three layouts giving identical results:

- **wide**: ``models=["p1", "p2", ...]``, one probability column per model;
- **list**: ``list_col="probs"``, one List column holding the :math:`m` probabilities;
- **long**: ``row_id="row", prob_col="p"``, one row per (test row, model): files too large for
  memory. Per-row columns (labels, groups, weights) are read from the first record of each
  ``row_id`` (they must be constant within a row id).

No model-pair loop: jitter comes from the vote count. A null probability means the model did not
predict that row: each row's metrics use the models that did (``n_models``); a row no model
predicted has null metrics and is counted in ``n_null``. Undefined values (``std`` with
:math:`m \le ddof`, ``jitter`` with :math:`m = 1`) are null.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast

import numpy as np
import polars as pl

from polars_fairmetrics._typing import ColumnNames, FrameT, Label
from polars_fairmetrics._validate import (
    as_list,
    check_reserved,
    check_weight_summary,
    require_columns,
    require_numeric,
    schema_of,
)
from polars_fairmetrics.counts import confusion_counts
from polars_fairmetrics.disparity import (
    Reference,
    _make_reference_guard,
    _reference_mask,
    disparities,
)
from polars_fairmetrics.exceptions import (
    InvalidDtypeError,
    InvalidOptionError,
    InvalidScoreError,
)
from polars_fairmetrics.metrics import METRICS, _metric_names, metrics_from_counts, safe_div

__all__ = [
    "ENSEMBLE_METRICS",
    "MSG_PROBABILITY_NAN",
    "MSG_PROBABILITY_RANGE",
    "Convention",
    "ensemble_disparities",
    "ensemble_group_metrics",
    "ensemble_labels",
    "ensemble_sample_metrics",
    "value_disparity",
]

Convention: TypeAlias = Literal["seed", "virny"]
"""``"seed"``: a label is 1 iff p >= 0.5, default reference ``"overall"``; ``"virny"``: 1 iff
p > 0.5, default reference ``"rest"`` (the rows not in the group: Virny's dis vs priv)."""

ENSEMBLE_METRICS: dict[str, str] = {
    "mean_probability": "mean over models of p_j",
    "std_probability": "sqrt(sum_j (p_j - mean)^2 / (m - ddof))",
    "iqr_probability": "Q_0.75 - Q_0.25 of p_1..p_m (linear interpolation)",
    "label_stability": "|k - (m - k)| / m, k = number of models with label 1",
    "jitter": "2 k (m - k) / (m (m - 1)): share of model pairs that disagree",
    "aleatoric_uncertainty": "mean over models of H(p_j) (expected binary entropy)",
    "overall_uncertainty": "H(mean p) (entropy of the mean probability)",
    "epistemic_variance": "Var_j[p_j] with ddof (the seed's epistemic uncertainty)",
    "epistemic_mutual_information": "H(mean p) - mean_j H(p_j) (Virny's epistemic uncertainty)",
}
"""The per-row ensemble metrics (name → formula), in output order."""

MSG_PROBABILITY_RANGE = (
    "column {column!r} (ensemble probability) has a value {value!r} outside [0, 1]"
)
MSG_PROBABILITY_NAN = "column {column!r} (ensemble probability) has a NaN value"

_M = "_pfm_m"
_S1 = "_pfm_s1"
_K = "_pfm_k"
_SH = "_pfm_sh"
_VAR = "_pfm_var"
_IQR = "_pfm_iqr"
_W = "_pfm_w"
_ROWS = "_pfm_rows"
_STATS = (_M, _S1, _K, _SH, _VAR, _IQR)


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Source:
    kind: Literal["wide", "list", "long"]
    models: tuple[str, ...] = ()
    list_col: str | None = None
    row_id: str | None = None
    prob_col: str | None = None

    @property
    def inputs(self) -> list[str]:
        if self.kind == "wide":
            return list(self.models)
        if self.kind == "list":
            return [cast(str, self.list_col)]
        return [cast(str, self.row_id), cast(str, self.prob_col)]


def _source(
    schema: pl.Schema,
    models: Sequence[str] | None,
    list_col: str | None,
    row_id: str | None,
    prob_col: str | None,
) -> _Source:
    given = [models is not None, list_col is not None, row_id is not None or prob_col is not None]
    if sum(given) != 1:
        raise InvalidOptionError(
            "give the ensemble's probabilities in exactly one layout: models=[columns] (wide), "
            "list_col= (a List column) or row_id= and prob_col= (long)"
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
    if row_id is None or prob_col is None:
        raise InvalidOptionError("the long layout needs both row_id= and prob_col=")
    require_columns(schema, "row_id", [row_id])
    require_columns(schema, "prob_col", [prob_col])
    require_numeric(schema, prob_col, "ensemble probability")
    return _Source("long", row_id=row_id, prob_col=prob_col)


def _check_probabilities(column: str) -> Any:
    """A batch function raising on NaN or out-of-[0, 1] probabilities; returns all-True."""

    def check(s: pl.Series) -> pl.Series:
        if s.dtype == pl.Struct:
            for field in s.struct.fields:
                _raise_if_bad(s.struct.field(field), field)
        else:
            _raise_if_bad(s.explode() if s.dtype in (pl.List, pl.Array) else s, column)
        return pl.Series(s.name, np.ones(len(s), dtype=np.bool_))

    return check


def _raise_if_bad(s: pl.Series, column: str) -> None:
    f = s.cast(pl.Float64)
    if f.is_nan().any():
        raise InvalidScoreError(MSG_PROBABILITY_NAN.format(column=column))
    lo, hi = f.min(), f.max()
    for v in (lo, hi):
        if v is not None and not 0.0 <= cast(float, v) <= 1.0:
            raise InvalidScoreError(MSG_PROBABILITY_RANGE.format(column=column, value=v))


def _entropy(p: pl.Expr, base: float) -> pl.Expr:
    """Binary entropy in base ``base`` with 0·log 0 = 0; null stays null."""
    q = 1.0 - p

    def term(x: pl.Expr) -> pl.Expr:
        return pl.when(x > 0).then(x * x.log(base)).when(x.is_not_null()).then(pl.lit(0.0))

    return pl.lit(0.0) - (term(p) + term(q))


def _vote(p: pl.Expr, convention: Convention) -> pl.Expr:
    return p >= 0.5 if convention == "seed" else p > 0.5


def _iqr_rows(values: np.ndarray) -> np.ndarray:
    """Per-row IQR of a 2-D array (NaN = no prediction), NumPy's linear interpolation."""
    n, width = values.shape
    out = np.full(n, np.nan)
    if width == 0 or n == 0:
        return out
    srt = np.sort(values, axis=1)  # NaN sort last
    m = width - np.isnan(srt).sum(axis=1)
    has = m > 0
    rows = np.arange(n)

    def quantile(q: float) -> np.ndarray:
        h = (np.maximum(m, 1) - 1) * q
        lo = np.floor(h).astype(np.int64)
        hi = np.minimum(lo + 1, np.maximum(m, 1) - 1)
        a, b = srt[rows, lo], srt[rows, hi]
        t = h - lo
        lerp: np.ndarray = np.where(t >= 0.5, b - (b - a) * (1 - t), a + (b - a) * t)
        return lerp

    out[has] = (quantile(0.75) - quantile(0.25))[has]
    return out


def _iqr_struct(s: pl.Series) -> pl.Series:
    fields = [s.struct.field(f).cast(pl.Float64).fill_null(np.nan).to_numpy()
              for f in s.struct.fields]
    values = np.column_stack(fields) if fields else np.empty((len(s), 0))
    return pl.Series(s.name, _iqr_rows(values)).fill_nan(None)


def _iqr_list(s: pl.Series) -> pl.Series:
    lengths = s.list.len().fill_null(0).to_numpy().astype(np.int64)
    flat = (s.explode(empty_as_null=False, keep_nulls=False).cast(pl.Float64)
            .fill_null(np.nan).to_numpy())
    width = int(lengths.max()) if len(lengths) else 0
    values = np.full((len(s), width), np.nan)
    row = np.repeat(np.arange(len(s)), lengths)
    starts = np.cumsum(lengths) - lengths
    pos = np.arange(len(flat)) - np.repeat(starts, lengths)
    values[row, pos] = flat
    return pl.Series(s.name, _iqr_rows(values)).fill_nan(None)


def _stats(
    lf: pl.LazyFrame,
    src: _Source,
    keep: list[str],
    *,
    convention: Convention,
    ddof: int,
    base: float,
    iqr: bool,
) -> pl.LazyFrame:
    """Per-row sufficient statistics: m, Σp, votes k, ΣH(p), variance, IQR (+ ``keep``)."""
    if src.kind == "long":
        rid = cast(str, src.row_id)
        p = pl.col(cast(str, src.prob_col)).cast(pl.Float64)
        ok = p.map_batches(_check_probabilities(cast(str, src.prob_col)),
                           return_dtype=pl.Boolean, is_elementwise=True)
        p = pl.when(ok).then(p)
        aggs = [
            p.count().cast(pl.Int64).alias(_M),
            p.sum().alias(_S1),
            _vote(p, convention).sum().cast(pl.Int64).alias(_K),
            _entropy(p, base).sum().alias(_SH),
            p.var(ddof=ddof).alias(_VAR),
            *[pl.col(c).first() for c in keep if c != rid],
        ]
        if iqr:
            aggs.append((p.quantile(0.75, "linear") - p.quantile(0.25, "linear")).alias(_IQR))
        out = lf.group_by(rid).agg(aggs)
        # a row id whose probabilities are all null: Σ over nothing is 0, make it null
        return out.with_columns(
            pl.when(pl.col(_M) > 0).then(pl.col(c)).alias(c) for c in (_S1, _SH)
        ).sort(rid, nulls_last=True)
    if src.kind == "wide":
        cols = [pl.col(c).cast(pl.Float64) for c in src.models]
        ok = pl.struct(list(src.models)).map_batches(
            _check_probabilities(src.models[0]), return_dtype=pl.Boolean, is_elementwise=True
        )
        m = pl.when(ok).then(pl.sum_horizontal([c.is_not_null() for c in cols]).cast(pl.Int64))
        s1 = pl.sum_horizontal(cols)
        k = pl.sum_horizontal([_vote(c, convention) for c in cols]).cast(pl.Int64)
        sh = pl.sum_horizontal([_entropy(c, base) for c in cols])
        mean = safe_div(s1, m)
        ss = pl.sum_horizontal([(c - mean) ** 2 for c in cols])
        var = pl.when(m > ddof).then(ss / (m - ddof).cast(pl.Float64))
        exprs = [m.alias(_M), pl.when(m > 0).then(s1).alias(_S1),
                 pl.when(m >= 0).then(k).alias(_K), pl.when(m > 0).then(sh).alias(_SH),
                 var.alias(_VAR)]
        if iqr:
            iqr_expr = pl.struct(list(src.models)).map_batches(
                _iqr_struct, return_dtype=pl.Float64, is_elementwise=True)
            exprs.append(pl.when(m > 0).then(iqr_expr).alias(_IQR))
        return lf.select(*[pl.col(c) for c in keep], *exprs)
    name = cast(str, src.list_col)
    ok = pl.col(name).map_batches(_check_probabilities(name), return_dtype=pl.Boolean,
                                  is_elementwise=True)
    lst = pl.col(name).cast(pl.List(pl.Float64)).list.drop_nulls()
    m = pl.when(ok).then(lst.list.len().fill_null(0).cast(pl.Int64))
    el = pl.element()
    exprs = [
        m.alias(_M),
        pl.when(m > 0).then(lst.list.sum()).alias(_S1),
        pl.when(m >= 0).then(lst.list.eval(_vote(el, convention)).list.sum().cast(pl.Int64))
        .alias(_K),
        pl.when(m > 0).then(lst.list.eval(_entropy(el, base)).list.sum()).alias(_SH),
        pl.when(m > ddof).then(lst.list.var(ddof=ddof)).alias(_VAR),
    ]
    if iqr:
        iqr_expr = pl.col(name).map_batches(_iqr_list, return_dtype=pl.Float64,
                                            is_elementwise=True)
        exprs.append(pl.when(m > 0).then(iqr_expr).alias(_IQR))
    return lf.select(*[pl.col(c) for c in keep], *exprs)


def _metric_exprs(names: Sequence[str], *, base: float) -> dict[str, pl.Expr]:
    """Per-row metrics from the statistics columns."""
    m, k = pl.col(_M), pl.col(_K)
    mean = safe_div(pl.col(_S1), m)
    aleatoric = safe_div(pl.col(_SH), m)
    overall = _entropy(mean, base)
    mf = m.cast(pl.Float64)
    kf = k.cast(pl.Float64)
    all_exprs: dict[str, pl.Expr] = {
        "mean_probability": mean,
        "std_probability": pl.col(_VAR).sqrt(),
        "iqr_probability": pl.col(_IQR),
        "label_stability": safe_div((2 * kf - mf).abs(), mf),
        "jitter": safe_div(2.0 * kf * (mf - kf), mf * (mf - 1.0)),
        "aleatoric_uncertainty": aleatoric,
        "overall_uncertainty": overall,
        "epistemic_variance": pl.col(_VAR),
        "epistemic_mutual_information": overall - aleatoric,
    }
    return {n: all_exprs[n].alias(n) for n in names}


def _label_expr(convention: Convention) -> pl.Expr:
    mean = safe_div(pl.col(_S1), pl.col(_M))
    return _vote(mean, convention).alias("ensemble_label")


def _names(metrics: str | Sequence[str] | None) -> list[str]:
    if metrics is None:
        return list(ENSEMBLE_METRICS)
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    for n in names:
        if n not in ENSEMBLE_METRICS:
            raise InvalidOptionError(
                f"unknown ensemble metric {n!r}; known: {', '.join(ENSEMBLE_METRICS)}"
            )
    if not names:
        raise InvalidOptionError("metrics= is an empty list")
    return list(dict.fromkeys(names))


def _is_empty(names: str | Sequence[str] | None) -> bool:
    return names is not None and not isinstance(names, str) and len(names) == 0


def _check_options(convention: str, ddof: int, log_base: float) -> None:
    if convention not in ("seed", "virny"):
        raise InvalidOptionError(f"convention={convention!r}; use 'seed' or 'virny'")
    if isinstance(ddof, bool) or not isinstance(ddof, int) or ddof < 0:
        raise InvalidOptionError(f"ddof={ddof!r} must be a non-negative integer")
    if not (isinstance(log_base, (int, float)) and math.isfinite(log_base) and log_base > 0
            and log_base != 1):
        raise InvalidOptionError(f"log_base={log_base!r} must be positive, finite and not 1")


def _return(out: pl.LazyFrame, data: pl.DataFrame | pl.LazyFrame) -> Any:
    return out.collect() if isinstance(data, pl.DataFrame) else out


# ---------------------------------------------------------------------------------------------
# Per row
# ---------------------------------------------------------------------------------------------


def ensemble_sample_metrics(
    data: FrameT,
    *,
    models: Sequence[str] | None = None,
    list_col: str | None = None,
    row_id: str | None = None,
    prob_col: str | None = None,
    keep: ColumnNames | None = None,
    metrics: str | Sequence[str] | None = None,
    convention: Convention = "seed",
    ddof: int = 1,
    log_base: float = 2.0,
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
    models, list_col, row_id, prob_col
        The layout: ``models`` (wide), ``list_col`` (a List column), or ``row_id`` + ``prob_col``
        (long: one row per test row and model).
    keep
        Columns to carry along. Default: every other column (wide and list layouts); nothing but
        ``row_id`` (long layout — columns kept there take each row id's first value).
    metrics
        Names from :data:`ENSEMBLE_METRICS` (default: all).
    convention
        ``"seed"`` (a label is 1 iff p >= 0.5) or ``"virny"`` (1 iff p > 0.5).
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
    src: _Source = _source(schema, models, list_col, row_id, prob_col)
    names = _names(metrics)
    keep_cols: list[str]
    if keep is None:
        keep_cols = ([] if src.kind == "long" else
                     [c for c in schema.names() if c not in src.inputs])
    else:
        keep_cols = as_list(keep)
        require_columns(schema, "keep", keep_cols)
    if src.kind == "long":
        keep_cols = [cast(str, src.row_id), *[c for c in keep_cols if c != src.row_id]]
    check_reserved([c for c in keep_cols if c != src.row_id],
                   ["n_models", "ensemble_label", *ENSEMBLE_METRICS])
    stats = _stats(data.lazy(), src, keep_cols, convention=convention, ddof=ddof,
                   base=float(log_base), iqr="iqr_probability" in names)
    exprs = _metric_exprs(names, base=float(log_base))
    out = stats.select(
        *[pl.col(c) for c in keep_cols],
        pl.col(_M).alias("n_models"),
        _label_expr(convention),
        *exprs.values(),
    )
    return cast(FrameT, _return(out, data))


def ensemble_labels(
    data: FrameT,
    *,
    models: Sequence[str] | None = None,
    list_col: str | None = None,
    row_id: str | None = None,
    prob_col: str | None = None,
    keep: ColumnNames | None = None,
    convention: Convention = "seed",
) -> FrameT:
    r"""The ensemble's label from its mean probability, for the core's confusion metrics.

    .. math:: \hat y = 1[\bar p \ge 0.5] \text{ (seed)},\quad 1[\bar p > 0.5] \text{ (Virny)}

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
        data, models=models, list_col=list_col, row_id=row_id, prob_col=prob_col, keep=keep,
        metrics="mean_probability", convention=convention,
    )
    return out.drop("n_models")


# ---------------------------------------------------------------------------------------------
# Per group
# ---------------------------------------------------------------------------------------------


def _group_sums(
    data: pl.DataFrame | pl.LazyFrame,
    *,
    src: _Source,
    keys: list[str],
    weight: str | None,
    names: list[str],
    convention: Convention,
    ddof: int,
    base: float,
    extra_keep: list[str],
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """(per-row metric frame, per-group additive sums) as LazyFrames."""
    keep = list(dict.fromkeys([*keys, *([weight] if weight else []), *extra_keep]))
    if src.kind == "long":
        keep = [cast(str, src.row_id), *[c for c in keep if c != src.row_id]]
    stats = _stats(data.lazy(), src, keep, convention=convention, ddof=ddof, base=base,
                   iqr="iqr_probability" in names)
    exprs = _metric_exprs(names, base=base)
    rows = stats.select(
        *[pl.col(c) for c in keep], pl.col(_M), pl.col(_S1), _label_expr(convention),
        *exprs.values(),
    )
    w = pl.col(weight).cast(pl.Float64) if weight else pl.lit(1.0)
    aggs: list[pl.Expr] = [pl.len().cast(pl.Int64).alias(_ROWS)]
    for n in names:
        valid = pl.col(n).is_not_null() & w.is_not_null()
        aggs += [
            (pl.col(n) * w).filter(valid).sum().alias(f"{n}__s"),
            w.filter(valid).sum().alias(f"{n}__w"),
            valid.sum().cast(pl.Int64).alias(f"{n}__n"),
        ]
    if weight:
        wf = pl.col(weight).cast(pl.Float64)
        aggs += [wf.min().alias("_pfm_wmin"), wf.max().alias("_pfm_wmax"),
                 wf.sum().alias("_pfm_wsum")]
    grouped = (rows.group_by(keys).agg(aggs) if keys
               else rows.select(aggs))
    if weight:
        col = weight

        def guard(t: pl.DataFrame) -> pl.DataFrame:
            check_weight_summary(
                col,
                cast("float | None", t["_pfm_wmin"].min()),
                cast("float | None", t["_pfm_wmax"].max()),
                cast("float | None", t["_pfm_wsum"].sum()) if t.height else None,
            )
            return t.drop("_pfm_wmin", "_pfm_wmax", "_pfm_wsum")

        sch = {k: v for k, v in grouped.collect_schema().items()
               if k not in ("_pfm_wmin", "_pfm_wmax", "_pfm_wsum")}
        grouped = grouped.map_batches(guard, schema=sch)
    return rows, grouped


def _order_expr(names: Sequence[str]) -> pl.Expr:
    order = {n: i for i, n in enumerate([*ENSEMBLE_METRICS, *METRICS])}
    return pl.col("metric").replace_strict(order, return_dtype=pl.Int64,
                                           default=len(order))


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
    src = _source(schema, models, list_col, row_id, prob_col)
    by_cols = as_list(by)
    parts = as_list(partition_by)
    require_columns(schema, "group", by_cols)
    require_columns(schema, "partition_by", parts)
    keys = [*parts, *by_cols]
    if len(set(keys)) != len(keys):
        raise InvalidOptionError(f"a column is both in by= and partition_by=: {keys!r}")
    check_reserved(keys, ["metric", "value", "n", "n_null", "n_w", "reference",
                          "reference_value", "difference", "ratio", "ensemble_label",
                          *src.inputs])
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
    rows: pl.LazyFrame, plan: _Plan, y_true: str, weight: str | None,
    pos_label: Label | None, neg_label: Label | None,
) -> pl.LazyFrame:
    return confusion_counts(
        rows, y_true=y_true, y_pred="ensemble_label", by=plan.keys or None, weight=weight,
        pos_label=pos_label, neg_label=neg_label,
    )


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
    convention: Convention = "seed",
    ddof: int = 1,
    log_base: float = 2.0,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
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
    data, models, list_col, row_id, prob_col
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
    plan: _Plan = _plan(data, models=models, list_col=list_col, row_id=row_id, prob_col=prob_col,
                 y_true=y_true, by=by, partition_by=partition_by, weight=weight,
                 metrics=metrics, confusion_metrics=confusion_metrics, convention=convention,
                 ddof=ddof, log_base=log_base)
    rows, sums = _group_sums(
        data, src=plan.src, keys=plan.keys, weight=weight, names=plan.names,
        convention=convention, ddof=ddof, base=float(log_base),
        extra_keep=[y_true] if y_true else [],
    )
    parts: list[pl.LazyFrame] = []
    if plan.names:
        structs = [
            pl.struct(
                pl.lit(n).alias("metric"),
                safe_div(pl.col(f"{n}__s"), pl.col(f"{n}__w")).alias("value"),
                pl.col(f"{n}__n").alias("n"),
                (pl.col(_ROWS) - pl.col(f"{n}__n")).alias("n_null"),
                *([pl.col(f"{n}__w").alias("n_w")] if weight else []),
            )
            for n in plan.names
        ]
        parts.append(
            sums.select(*plan.keys, pl.concat_list(structs).alias("_pfm_m"))
            .explode("_pfm_m").unnest("_pfm_m")
        )
    if plan.confusion:
        table = _confusion_table(rows, plan, cast(str, y_true), weight, pos_label, neg_label)
        long = metrics_from_counts(table, metrics=plan.confusion, long=True)
        long = long.join(table.select(*plan.keys, "n_null"), on=plan.keys, how="left",
                         nulls_equal=True) if plan.keys else long.join(
            table.select("n_null"), how="cross")
        long = long.select(*plan.keys, "metric", "value", "n", "n_null",
                           *(["n_w"] if weight else []))
        parts.append(long)
    if not parts:
        raise InvalidOptionError("no metric requested: metrics=[] and no y_true=")
    out = pl.concat(parts, how="vertical_relaxed") if len(parts) > 1 else parts[0]
    out = out.with_columns(pl.col("n").cast(pl.Int64), pl.col("n_null").cast(pl.Int64))
    out = out.sort([*plan.keys, _order_expr(plan.names)], nulls_last=True)
    return cast(FrameT, _return(out, data))


# ---------------------------------------------------------------------------------------------
# Disparities
# ---------------------------------------------------------------------------------------------


def value_disparity(value: pl.Expr, reference_value: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """(difference, ratio) of a value against a reference: ``value − ref``, ``value / ref``.

    The ratio is null where the reference is 0 (:func:`~polars_fairmetrics.safe_div`).

    Examples
    --------
    >>> import polars as pl
    >>> d, r = value_disparity(pl.lit(0.3), pl.lit(0.0))
    >>> pl.select(d.alias("d"), r.alias("r")).row(0)
    (0.3, None)
    """
    return value - reference_value, safe_div(value, reference_value)


def ensemble_disparities(
    data: FrameT,
    *,
    models: Sequence[str] | None = None,
    list_col: str | None = None,
    row_id: str | None = None,
    prob_col: str | None = None,
    by: ColumnNames,
    reference: Reference = None,
    y_true: str | None = None,
    weight: str | None = None,
    metrics: str | Sequence[str] | None = None,
    confusion_metrics: str | Sequence[str] | None = None,
    partition_by: ColumnNames | None = None,
    convention: Convention = "seed",
    ddof: int = 1,
    log_base: float = 2.0,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
) -> FrameT:
    r"""Group means of the ensemble metrics against a reference: difference and ratio.

    .. math::

        \Delta_g = \bar v_g - \bar v_{ref},\qquad \mathcal{Q}_g = \bar v_g / \bar v_{ref},\qquad
        \bar v_{rest(g)} = \frac{S_{tot} - S_g}{W_{tot} - W_g}

    where :math:`S` and :math:`W` are the additive sums :math:`\sum w_i v_i` and
    :math:`\sum w_i` (no second scan). The seed composes the stability and uncertainty
    disparities as differences (:math:`\Delta U = E_{dis}[U] - E_{priv}[U]`); the ratio is given
    too (null when the reference is 0). With ``y_true``, the confusion metrics of the ensemble
    label are added through :func:`~polars_fairmetrics.disparities` (its disparate impact is
    the ``ratio`` of ``selection_rate``). The parameters not listed below are those of
    :func:`ensemble_group_metrics`.

    Parameters
    ----------
    reference
        A group value (tuple or mapping for several ``by`` columns), ``"rest"`` (the rows not in
        the group: Virny's dis vs priv) or ``"overall"``. Default: ``"overall"`` with
        ``convention="seed"``, ``"rest"`` with ``convention="virny"``.

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
    plan: _Plan = _plan(data, models=models, list_col=list_col, row_id=row_id, prob_col=prob_col,
                 y_true=y_true, by=by, partition_by=partition_by, weight=weight,
                 metrics=metrics, confusion_metrics=confusion_metrics, convention=convention,
                 ddof=ddof, log_base=log_base)
    if not plan.by:
        raise InvalidOptionError("ensemble_disparities needs by= (the group columns)")
    rows, sums = _group_sums(
        data, src=plan.src, keys=plan.keys, weight=weight, names=plan.names,
        convention=convention, ddof=ddof, base=float(log_base),
        extra_keep=[y_true] if y_true else [],
    )
    ref_label = reference if isinstance(reference, str) else str(reference)
    parts_out: list[pl.LazyFrame] = []
    if plan.names:

        def win(e: pl.Expr) -> pl.Expr:
            return e.over(plan.parts) if plan.parts else e

        sum_cols = [f"{n}__{x}" for n in plan.names for x in ("s", "w")]
        guard = None
        if isinstance(reference, str) and reference in ("overall", "rest"):
            if reference == "overall":
                ref_cols = [win(pl.col(c).sum()).alias(f"_pfm_ref_{c}") for c in sum_cols]
            else:
                ref_cols = [(win(pl.col(c).sum()) - pl.col(c)).alias(f"_pfm_ref_{c}")
                            for c in sum_cols]
        elif isinstance(reference, (str, int, float, bool, tuple, Mapping)):
            mask = _reference_mask(reference, plan.by, plan.parts)
            ref_cols = [win(pl.col(c).filter(mask).sum()).alias(f"_pfm_ref_{c}")
                        for c in sum_cols]
            ref_cols.append(win(mask.any()).alias("_pfm_has_ref"))
            guard = _make_reference_guard(reference, plan.by, plan.parts)
        else:
            raise InvalidOptionError(f"reference={reference!r} is not a group value")
        with_ref = sums.with_columns(ref_cols)
        if guard is not None:
            sch = {k: v for k, v in with_ref.collect_schema().items() if k != "_pfm_has_ref"}
            with_ref = with_ref.map_batches(guard, schema=sch)
        structs = []
        for n in plan.names:
            value = safe_div(pl.col(f"{n}__s"), pl.col(f"{n}__w"))
            ref_value = safe_div(pl.col(f"_pfm_ref_{n}__s"), pl.col(f"_pfm_ref_{n}__w"))
            diff, ratio = value_disparity(value, ref_value)
            structs.append(pl.struct(
                pl.lit(n).alias("metric"), value.alias("value"),
                ref_value.alias("reference_value"), diff.alias("difference"),
                ratio.alias("ratio"), pl.col(f"{n}__n").cast(pl.Int64).alias("n"),
            ))
        parts_out.append(
            with_ref.select(*plan.by, *plan.parts, pl.concat_list(structs).alias("_pfm_m"))
            .explode("_pfm_m").unnest("_pfm_m")
            .with_columns(pl.lit(ref_label).alias("reference"))
        )
    if plan.confusion:
        table = _confusion_table(rows, plan, cast(str, y_true), weight, pos_label, neg_label)
        disp = disparities(table, by=plan.by, metrics=plan.confusion, reference=reference)
        parts_out.append(disp.select(*plan.by, *plan.parts, "metric", "value", "reference_value",
                                     "difference", "ratio", pl.col("n").cast(pl.Int64),
                                     "reference"))
    if not parts_out:
        raise InvalidOptionError("no metric requested: metrics=[] and no y_true=")
    out = (pl.concat(parts_out, how="vertical_relaxed") if len(parts_out) > 1
           else parts_out[0])
    out = out.sort([*plan.parts, *plan.by, _order_expr(plan.names)], nulls_last=True)
    return cast(FrameT, _return(out, data))
