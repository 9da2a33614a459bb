r"""Importance weights and bias-adjusted weights: measuring on a sample whose mix differs from
the population the classifier will serve.

Both are *lazy expressions* producing a row weight, to be added with ``with_columns`` and then
passed as ``weight=`` to :func:`~polars_fairmetrics.confusion_counts`, the metrics, disparities,
curves and bootstrap, like any other sample weight.

**Importance weights** (D. Hsu, *Balanced error rate*, 2025): for a group column :math:`A` (any
number of levels, or several columns: their combinations),

.. math:: i_a = \Pr_{tgt}(A = a) / \Pr_{src}(A = a),

the source mix :math:`\Pr_{src}` estimated from the frame (an aggregate over the same scan) or
given, the target mix given (a mapping, or ``"uniform"``). The importance-weighted error rate with
:math:`A = Y` and a uniform target is the balanced error rate. The note's estimator of a mean
under the target mix is :math:`\frac1m \sum_i i_{a_i} x_i` over the :math:`m` rows;
:func:`importance_weighted_metrics` computes it (``denominator="rows"``) or the weighted mean
:math:`\sum_i i_{a_i} x_i / \sum_i i_{a_i}` (``denominator="weights"``, what every weighted metric
of the package computes). The two are equal when the source mix is estimated from the rows
scored; they differ for a *given* source mix.

**Bias-adjusted weights** (the derivation of the bias-adjusted metrics of the NYC DOHMH
foodborne-illness review classifier, used by its results notebook): rows come from a biased set
:math:`B` (selected by a process :math:`T`) or from a sample of its complement :math:`B^c`; with
:math:`|\underline B|, |\underline B^c|` counted in the frame being scored and the population
share :math:`|B| / |U|` given,

.. math::

    w_{\underline B} = \frac{|\underline B| + |\underline B^c|}{|\underline B|}\,\frac{|B|}{|U|},
    \qquad
    w_{\underline B^c} = \frac{|\underline B| + |\underline B^c|}{|\underline B^c|}
    \left(1 - \frac{|B|}{|U|}\right).

These are the importance weights of the flag column with target mix
:math:`\{B: |B|/|U|,\ B^c: 1 - |B|/|U|\}`, and they sum to the number of rows scored.

Errors that need the data (a target level with no rows, a level of the data that the target mix
does not list, an empty :math:`\underline B`) are raised when the query runs, from a guard on one
small aggregate computed in the same scan.

Both weights are constant within a level, so a count table grouped by the level column can be
reweighted after the scan instead (:func:`importance_weighted_counts`,
:func:`bias_adjusted_counts`): the same numbers, with no work over the rows beyond the one
``confusion_counts`` scan — the route for files larger than memory.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeAlias, cast

import polars as pl

from polars_fairmetrics._typing import ColumnNames, FrameT, Label
from polars_fairmetrics._validate import (
    as_integer,
    as_list,
    as_real,
    require_columns,
    require_numeric,
    schema_of,
)
from polars_fairmetrics.counts import (
    COUNT_COLUMNS,
    NULL_COLUMNS,
    WEIGHTED_COUNT_COLUMNS,
    confusion_counts,
    count_rows_or_table,
    is_weighted,
)
from polars_fairmetrics.disparity import _key_literal
from polars_fairmetrics.exceptions import (
    MSG_NEGATIVE_WEIGHT,
    MSG_NONFINITE_WEIGHT,
    EmptyGroupError,
    FairMetricsError,
    InvalidLabelError,
    InvalidOptionError,
    InvalidWeightError,
    ReferenceGroupError,
)
from polars_fairmetrics.inputs import accepts_tables
from polars_fairmetrics.metrics import (
    METRICS,
    Counts,
    _metric_names,
    key_columns,
    metrics_from_counts,
    safe_div,
)
from polars_fairmetrics.results import finish, from_wide, partitions_of

__all__ = [
    "BIAS_ADJUSTED_METRICS",
    "DENOMINATORS",
    "MISSING_GROUPS",
    "NOTEBOOK_EPSILON",
    "Denominator",
    "MissingGroups",
    "Mix",
    "Target",
    "bias_adjusted_counts",
    "bias_adjusted_metrics",
    "bias_adjusted_weights",
    "importance_weighted_counts",
    "importance_weighted_metrics",
    "importance_weights",
    "with_bias_adjusted_weights",
    "with_importance_weights",
]

Mix: TypeAlias = Mapping[Any, float]
"""A distribution over the levels of a group column: ``{level: probability}`` (for several
columns, tuple keys ``{(a, b): p}``)."""

Target: TypeAlias = Literal["uniform"] | Mix
"""A target mix: ``"uniform"`` or a :data:`Mix`."""

MissingGroups: TypeAlias = Literal["error", "zero"]
"""What to do with levels of the data that a target mapping does not list."""

MISSING_GROUPS: tuple[str, ...] = ("error", "zero")
"""``"error"`` (default): a level present in the data but not listed by the target mapping is an
:class:`~polars_fairmetrics.InvalidOptionError` naming the levels (list them with probability 0
to leave them out on purpose); ``"zero"``: their rows get weight 0."""

Denominator: TypeAlias = Literal["rows", "weights"]
"""How :func:`importance_weighted_metrics` divides a mean over the population's rows."""

DENOMINATORS: tuple[str, ...] = ("rows", "weights")
"""``"rows"`` (default): by the number of rows :math:`m`, the importance-weights note's estimator
:math:`\\frac1m\\sum_i i_{a_i} x_i`; ``"weights"``: by the sum of the weights, the weighted mean
:math:`\\sum_i i_{a_i} x_i / \\sum_i i_{a_i}` (the self-normalized estimator)."""

MIX_TOLERANCE = 1e-9
"""How far from 1 the probabilities of a given mix may sum."""

MAX_LISTED = 10
"""How many offending levels an error message lists."""

NOTEBOOK_EPSILON = 1e-15
"""The epsilon the bias-adjusted results notebook adds to the F1 denominator
(``convention="filled"``)."""

BIAS_ADJUSTED_METRICS: tuple[str, ...] = (
    "positive_predictive_value",
    "true_positive_rate",
    "f1_score",
    "error_rate",
)
"""The metrics of the bias-adjusted derivation: IW precision, recall, F1 and error rate."""

_K = "_pfm_k"
_MASS = "_pfm_mass"
_Level = tuple[Any, ...]


# ---------------------------------------------------------------------------------------------
# Mix validation and lookup
# ---------------------------------------------------------------------------------------------


def _as_level(key: Any, n_keys: int, what: str) -> _Level:
    level = tuple(key) if isinstance(key, tuple) else (key,)
    if len(level) != n_keys:
        raise InvalidOptionError(
            f"{what} key {key!r} has {len(level)} value(s); the group has {n_keys} column(s): "
            "use tuples of one value per column"
        )
    if any(v is None for v in level):
        raise InvalidOptionError(
            f"{what} key {key!r} holds None; rows with a null group value get a null weight"
        )
    return level


def _check_mix(mix: Mix, n_keys: int, what: str, *, positive: bool) -> dict[_Level, float]:
    """Validate a mix mapping: finite probabilities (positive for a source), summing to 1."""
    if not isinstance(mix, Mapping):
        raise InvalidOptionError(f"{what} must be a mapping {{level: probability}}, got {mix!r}")
    if not mix:
        raise InvalidOptionError(f"{what} is an empty mapping")
    out: dict[_Level, float] = {}
    for key, p in mix.items():
        level = _as_level(key, n_keys, what)
        if level in out:
            raise InvalidOptionError(f"{what} names {key!r} twice")
        real = as_real(p)
        if real is None or not math.isfinite(real):
            raise InvalidOptionError(f"{what} gives {key!r} the probability {p!r}: not a number")
        p = real
        if p < 0 or (positive and p == 0):
            bound = "positive" if positive else "non-negative"
            raise InvalidOptionError(
                f"{what} gives {key!r} the probability {p!r}; probabilities must be {bound}"
            )
        out[level] = float(p)
    total = math.fsum(out.values())
    if abs(total - 1.0) > MIX_TOLERANCE:
        raise InvalidOptionError(
            f"{what} probabilities sum to {total!r}, not 1 (tolerance {MIX_TOLERANCE})"
        )
    return out


def typed_levels(
    mix: Mapping[_Level, float],
    names: Sequence[str],
    schema: Mapping[str, Any],
    what: str,
    *,
    absent_error: bool = False,
) -> dict[_Level, float]:
    """The levels of a mapping as values of the group columns' dtypes (keys are typed).

    A key of another kind than its column (``"1"`` for an integer column, ``1`` for a text
    column) is an :class:`InvalidOptionError` naming the column, its dtype and the key: never
    cast onto a group (``"1"`` matched to 1) nor left to a raw Polars comparison error. A key
    that no value of the dtype equals (``1.5`` of an integer column, a text key that is not a
    category of an Enum column) names no group: it is dropped (it has no rows); with
    ``absent_error`` such a key with a positive value is the :class:`EmptyGroupError` of a
    target level without rows. A numeric key is stored as the column's value (``1.0`` of an
    integer column is the group 1). Used wherever the schema is known (frame functions, count
    tables, the deployment mapping); the rule of the references of
    :mod:`polars_fairmetrics.disparity`.
    """
    out: dict[_Level, float] = {}
    for level, value in mix.items():
        typed: list[Any] = []
        for column, key in zip(names, level, strict=True):
            try:
                literal = _key_literal(column, key, schema[column])
            except ReferenceGroupError:
                raise InvalidOptionError(
                    f"{what} key {_show(level)!r} ({type(key).__name__}) cannot name a group of "
                    f"column {column!r}, which has dtype {schema[column]}: group keys are typed"
                ) from None
            dtype = schema[column]
            if isinstance(dtype, pl.Enum) and key not in dtype.categories.to_list():
                literal = None  # not a category: no row can hold it
            if literal is None:
                if absent_error and value > 0:
                    raise EmptyGroupError(
                        f"{what} mix names {_show(level)!r} of column(s) {list(names)}, which "
                        "has no rows"
                    )
                break
            typed.append(pl.select(literal).item())
        else:
            if tuple(typed) in out:
                raise InvalidOptionError(f"{what} names the group {_show(level)!r} twice")
            out[tuple(typed)] = value
    return out


def _check_choice(value: object, name: str, choices: tuple[str, ...]) -> None:
    if not isinstance(value, str) or value not in choices:
        raise InvalidOptionError(f"{name}={value!r}: pass one of {', '.join(map(repr, choices))}")


def _lookup(keys: Sequence[pl.Expr], table: Mapping[_Level, float]) -> pl.Expr:
    """The value of each row's level in ``table`` (Float64), null for levels not listed."""
    levels = list(table)
    values = [table[lv] for lv in levels]
    if len(keys) == 1:
        return keys[0].replace_strict(
            [lv[0] for lv in levels], values, default=None, return_dtype=pl.Float64
        )
    return _when_levels(keys, levels, [pl.lit(v, dtype=pl.Float64) for v in values])


def _match(keys: Sequence[pl.Expr], level: _Level) -> pl.Expr:
    cond = pl.lit(True)
    for k, v in zip(keys, level, strict=True):
        cond = cond & (k == pl.lit(v))
    return cond


def _when_levels(keys: Sequence[pl.Expr], levels: list[_Level], values: list[pl.Expr]) -> pl.Expr:
    chain: Any = pl
    for level, value in zip(levels, values, strict=True):
        chain = chain.when(_match(keys, level)).then(value)
    return cast(pl.Expr, chain.otherwise(pl.lit(None, dtype=pl.Float64)))


def _show(level: Any) -> Any:
    """A level for messages: the value itself for one column, the tuple for several."""
    if isinstance(level, dict):
        values = tuple(level.values())
        return values[0] if len(values) == 1 else values
    if isinstance(level, tuple) and len(level) == 1:
        return level[0]
    return level


# ---------------------------------------------------------------------------------------------
# Data-dependent checks: one small aggregate, checked when the query runs
# ---------------------------------------------------------------------------------------------

Check: TypeAlias = tuple[pl.Expr, Callable[[Any], str], type[FairMetricsError]]
"""(aggregate expression giving the offending value, or null when all is well; the message
built from that value; the error class)."""

MissingMessage = Callable[[_Level, Any], str]


def _levels_where(keys: Sequence[pl.Expr], mask: pl.Expr, rows: pl.Expr) -> pl.Expr:
    """The levels of the rows where ``mask`` holds, as one aggregate (null when there is none):
    a struct of the first :data:`MAX_LISTED` distinct levels (sorted), their number and the
    ``rows`` summed over them. Each key is filtered before the struct is built."""
    levels = pl.struct([k.filter(mask) for k in keys])
    found = pl.struct(
        levels.unique().sort(nulls_last=True).head(MAX_LISTED).implode().alias("levels"),
        levels.n_unique().cast(pl.Int64).alias("n_levels"),
        rows.filter(mask).sum().cast(pl.Int64).alias("rows"),
    )
    return pl.when(mask.any()).then(found)


def _unlisted_message(names: list[str], mix: str, fix: str) -> Callable[[Any], str]:
    """The message for levels of the data that a mix does not list."""

    def message(found: dict[str, Any]) -> str:
        shown = ", ".join(repr(_show(lv)) for lv in found["levels"])
        more = found["n_levels"] - len(found["levels"])
        if more > 0:
            shown += f" and {more} more"
        rows = found["rows"]
        return (
            f"column(s) {names} hold {found['n_levels']} level(s) that the {mix} mix does not "
            f"list: {shown} ({rows} row{'' if rows == 1 else 's'}); {fix}"
        )

    return message


_TARGET_FIX = (
    "give each a probability in the target (0 leaves it out on purpose) or pass "
    "missing_groups='zero' to give their rows weight 0"
)
_SOURCE_FIX = "give each its share in the source mix"


def _guard(checks: Sequence[Check]) -> pl.Expr:
    """A scalar 1.0, or the first error of ``checks`` raised when the query runs."""
    if not checks:
        return pl.lit(1.0, dtype=pl.Float64)
    probe = pl.struct([e.alias(f"_pfm_check{i}") for i, (e, _, _) in enumerate(checks)])

    def guard(s: pl.Series) -> pl.Series:
        row = s.struct.unnest().row(0) if len(s) else (None,) * len(checks)
        for value, (_, message, error) in zip(row, checks, strict=True):
            if value is not None:
                raise error(message(value))
        return pl.Series([1.0], dtype=pl.Float64)

    return probe.map_batches(guard, return_dtype=pl.Float64, returns_scalar=True)


Unlisted: TypeAlias = tuple[pl.Expr, frozenset[_Level], str, str]
"""A deferred check of levels a mix does not list: (aggregate count of the rows whose level is
not listed, the listed levels, the mix's name, the fix to suggest)."""


def _unlisted_guard(
    after: pl.Expr, keys: Sequence[pl.Expr], names: list[str], unlisted: Unlisted
) -> pl.Expr:
    """A scalar 1.0 (evaluated after ``after``), or :class:`InvalidOptionError` naming the levels
    of the rows that a mix does not list.

    The rows are only counted in the query (an aggregate that costs nothing beyond the
    weights'); the offending levels are looked up in Python, from the key columns, only when the
    count is positive, so a clean query pays no per-row pass for the message.
    """
    count, listed, mix, fix = unlisted
    message = _unlisted_message(names, mix, fix)

    def guard(series: Sequence[pl.Series]) -> pl.Series:
        n = series[1][0] if len(series[1]) else 0
        if n:
            frame = pl.DataFrame({c: s for c, s in zip(names, series[2:], strict=True)})
            levels = frame.drop_nulls().group_by(names).len().sort(names, nulls_last=True)
            found = [(r[:-1], r[-1]) for r in levels.rows() if tuple(r[:-1]) not in listed]
            raise InvalidOptionError(
                message(
                    {
                        "levels": [lv for lv, _ in found[:MAX_LISTED]],
                        "n_levels": len(found),
                        "rows": sum(c for _, c in found) if found else n,
                    }
                )
            )
        return pl.Series([1.0], dtype=pl.Float64)

    return pl.map_batches(
        [after, count, *keys], guard, return_dtype=pl.Float64, returns_scalar=True
    )


def _missing_at(message: MissingMessage, level: _Level) -> Callable[[Any], str]:
    """The message for a target level with no rows: ``True`` means the whole frame."""

    def at(group: Any) -> str:
        return message(level, None if group is True else group)

    return at


def _weight_checks(weight: str | None) -> list[Check]:
    """Negative, infinite and NaN sample weights, found by whole-column aggregates."""
    if weight is None:
        return []
    f = pl.col(weight).cast(pl.Float64)
    return [
        (
            pl.when(f.min() < 0).then(f.min()),
            lambda v: MSG_NEGATIVE_WEIGHT.format(column=weight, value=v),
            InvalidWeightError,
        ),
        (
            f.filter(f.is_infinite()).first(),
            lambda v: MSG_NONFINITE_WEIGHT.format(column=weight, value=v),
            InvalidWeightError,
        ),
        (
            pl.when(f.is_nan().any()).then(pl.lit(math.nan)),
            lambda v: MSG_NONFINITE_WEIGHT.format(column=weight, value=v),
            InvalidWeightError,
        ),
    ]


# ---------------------------------------------------------------------------------------------
# The one reweighting expression (importance weights; bias-adjusted weights are a case of it)
# ---------------------------------------------------------------------------------------------


def _reweight(
    keys: list[pl.Expr],
    *,
    target: dict[_Level, float] | None,
    source: dict[_Level, float] | None,
    weight: pl.Expr | None,
    within: list[str],
    missing_message: MissingMessage | None,
    names: list[str],
    missing_groups: MissingGroups = "error",
    extra_checks: Sequence[Check] = (),
) -> pl.Expr:
    r"""Row weight :math:`w_i \cdot \Pr_{tgt}(a_i) / \Pr_{src}(a_i)`, the mixes within ``within``.

    ``target=None`` is the uniform target over the levels present (per ``within`` group).
    ``missing_message`` (when not None) makes a target level with no rows an error;
    ``missing_groups="error"`` makes a level of the data that the target does not list an error.
    ``extra_checks`` are checked with the others on one aggregate row when the query runs.
    """
    keys = [k.alias(f"{_K}{i}") for i, k in enumerate(keys)]
    valid = pl.all_horizontal([k.is_not_null() for k in keys])
    w = weight
    # a row that carries mass: a valid level and (when weighted) a positive weight
    carries = valid if w is None else (valid & (w > 0)).fill_null(False)

    def over(expr: pl.Expr, extra: Sequence[pl.Expr] = ()) -> pl.Expr:
        parts: list[Any] = [*within, *extra]
        return expr.over(parts) if parts else expr

    checks: list[Check] = list(extra_checks)
    deferred: list[Unlisted] = []
    unlisted_rows = pl.lit(0)  # rows whose level the target mapping does not list
    if target is not None and not within:
        # Fast path: the target names the levels, so the source mix is a few scalar sums (one
        # comparison per level) and the weight a sum of 0/1 matches times scalars: no window.
        levels = list(target)
        matches = [_match(keys, lv).fill_null(False) for lv in levels]
        if w is None:
            masses = [m.sum().cast(pl.Float64) for m in matches]
            total = valid.sum().cast(pl.Float64)
        else:
            masses = [w.filter(m).sum() for m in matches]
            total = w.filter(valid).sum()
        terms = []
        for lv, m, mass in zip(levels, matches, masses, strict=True):
            if source is None:
                src_l = mass / total
            else:
                src_l = pl.lit(source.get(lv), dtype=pl.Float64)
            ratio_l = pl.when(src_l > 0).then(pl.lit(target[lv]) / src_l).otherwise(pl.lit(0.0))
            # arithmetic on the 0/1 match is much faster than a when/then chain over rows
            terms.append(m.cast(pl.Float64) * ratio_l)
        ratio = pl.sum_horizontal(terms)
        if missing_message is not None:
            for lv, mass in zip(levels, masses, strict=True):
                if target[lv] == 0:
                    continue  # a level left out on purpose needs no rows
                checks.append(
                    (
                        pl.when(mass > 0).then(pl.lit(None)).otherwise(pl.lit(True)),
                        _missing_at(missing_message, lv),
                        EmptyGroupError,
                    )
                )
        # free: the rows with a level minus those matching a listed level (sums already taken)
        unlisted_rows = valid.sum() - pl.sum_horizontal([m.sum() for m in matches])
    else:
        if source is None:
            if w is None:
                level_mass = over(pl.len(), keys).cast(pl.Float64)
                total = over(valid.sum()).cast(pl.Float64)
            else:
                level_mass = over(w.filter(valid).sum(), keys)
                total = over(w.filter(valid).sum())
            src = level_mass / total
        else:
            src = _lookup(keys, source)
        if target is None:
            n_levels = over(pl.struct(keys).filter(carries).n_unique()).cast(pl.Float64)
            tgt = pl.lit(1.0) / n_levels
        else:
            listed = _lookup(keys, target)
            tgt = listed.fill_null(0.0)
            unlisted_rows = (valid & listed.is_null()).sum()
        ratio = (
            pl.when(src > 0)
            .then(tgt / src)
            .otherwise(pl.lit(0.0))  # only rows with a zero weight, in a level without mass
        )
        if target is not None and missing_message is not None:
            for level in [lv for lv, p in target.items() if p > 0]:
                present = _match(keys, level) & carries
                first_bad = pl.struct(within).filter(~present.any().over(within)).first()
                checks.append((first_bad, _missing_at(missing_message, level), EmptyGroupError))
    if target is not None and missing_groups == "error":
        deferred.append((unlisted_rows, frozenset(target), "target", _TARGET_FIX))
    if source is not None:
        listed_src = pl.any_horizontal([_match(keys, lv).fill_null(False) for lv in source])
        deferred.append(((valid & ~listed_src).sum(), frozenset(source), "source", _SOURCE_FIX))
    out = ratio if w is None else pl.when(w == 0).then(pl.lit(0.0)).otherwise(w * ratio)
    out = pl.when(valid).then(out).otherwise(pl.lit(None, dtype=pl.Float64))
    ok = _guard(checks)  # the data checks first, then the levels no mix lists
    for item in deferred:
        ok = _unlisted_guard(ok, keys, names, item)
    return out * ok


def _key_exprs(by: ColumnNames) -> tuple[list[str], list[pl.Expr]]:
    names = as_list(by)
    if not names:
        raise InvalidOptionError("by= names no column")
    return names, [pl.col(c) for c in names]


def _mixes(
    names: list[str],
    target: Target,
    source: Mix | None,
    missing_groups: MissingGroups,
    schema: Mapping[str, Any] | None = None,
) -> tuple[dict[_Level, float] | None, dict[_Level, float] | None]:
    """The validated target (None: uniform) and source (None: estimated) mixes, their keys
    typed as the group columns when the ``schema`` is known (:func:`typed_levels`)."""
    _check_choice(missing_groups, "missing_groups", MISSING_GROUPS)
    tgt = (
        None
        if _is_uniform(target)
        else _check_mix(cast(Mix, target), len(names), "target", positive=False)
    )
    src = None if source is None else _check_mix(source, len(names), "source", positive=True)
    if schema is not None and tgt is not None:
        tgt = typed_levels(tgt, names, schema, "target", absent_error=True)
    if schema is not None and src is not None:
        src = typed_levels(src, names, schema, "source")
    return tgt, src


def importance_weights(
    by: ColumnNames,
    *,
    target: Target = "uniform",
    source: Mix | None = None,
    weight: str | None = None,
    within: ColumnNames | None = None,
    missing_groups: MissingGroups = "error",
) -> pl.Expr:
    r"""Importance weights :math:`i_a = \Pr_{tgt}(A = a) / \Pr_{src}(A = a)` as one expression.

    For a row with :math:`A = a` (and sample weight :math:`w`, default 1):

    .. math::

        \text{weight} = w \cdot \frac{\Pr_{tgt}(A = a)}{\Pr_{src}(A = a)},\qquad
        \Pr_{src}(A = a) = \frac{\sum_{i: a_i = a} w_i}{\sum_i w_i}
        \text{ (estimated from the frame unless given)}.

    The importance-weighted mean of a quantity estimates its mean under the target mix (a change
    of measure). With :math:`A = Y` and a uniform target, the importance-weighted error rate is
    the balanced error rate. With the source mix estimated from the frame, the weights sum to the
    (weighted) row count; with a *given* source mix they need not. A metric computed with this
    weight (``group_metrics(weight=...)``) is a weighted mean, divided by :math:`\sum_i w_i`;
    :func:`importance_weighted_metrics` also offers the note's estimator, divided by the number
    of rows :math:`m` (its default).

    Parameters
    ----------
    by
        The group column :math:`A`, or several columns (their combinations are the levels).
    target
        ``"uniform"`` (every level present in the data equally likely) or a mapping
        ``{level: probability}`` summing to 1 (tuple keys for several columns).
    source
        The source mix as a mapping (then no aggregate over the data is needed); default: estimated
        from the frame, over the same scan. Must list every level present in the data.
    weight
        An existing sample-weight column: the result is its product with the importance weight,
        and the source mix is estimated with these weights.
    within
        Column(s) within which the mixes are taken (the source estimated per group, the uniform
        target over each group's levels): e.g. a ``split`` column so that train and test each
        get their own weights.
    missing_groups
        A level present in the data that the target mapping does not list: ``"error"``
        (default) raises :class:`~polars_fairmetrics.InvalidOptionError` naming the levels
        (list a level with probability 0 to leave it out on purpose); ``"zero"`` gives its rows
        weight 0.

    Returns
    -------
    pl.Expr
        A Float64 expression named ``importance_weight``: null where a ``by`` value (or the
        sample weight) is null. Use it in ``with_columns`` (an aggregate over the whole frame, not
        inside ``group_by().agg``). Lazy; same result on the streaming engine.

    Raises
    ------
    InvalidOptionError
        When built: a mix that does not sum to 1 (within ``1e-9``), a negative or non-finite
        probability (a zero one in ``source``), keys of the wrong shape. When the query runs: a
        level of the data that the target (with ``missing_groups="error"``) or the given source
        does not list.
    EmptyGroupError
        When the query runs: a ``target`` level of positive probability with no rows in the
        data (in a ``within`` group).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"a": ["x", "x", "x", "y"]})
    >>> df.with_columns(importance_weights("a"))["importance_weight"].to_list()
    [0.6666666666666666, 0.6666666666666666, 0.6666666666666666, 2.0]
    >>> df.select(importance_weights("a", target={"x": 0.9, "y": 0.1}).sum()).item()
    4.0
    """
    names, keys = _key_exprs(by)
    tgt, src = _mixes(names, target, source, missing_groups)
    w = pl.col(weight).cast(pl.Float64) if weight is not None else None

    def missing(level: _Level, group: Any) -> str:
        where = "" if group is None else f" in the {as_list(within)} group {_show(group)!r}"
        return (
            f"target mix names {_show(level)!r} of column(s) {names}, which has no rows"
            f"{' with a positive weight' if weight else ''}{where}"
        )

    return _reweight(
        keys,
        target=tgt,
        source=src,
        weight=w,
        within=as_list(within),
        missing_message=missing,
        names=names,
        missing_groups=missing_groups,
        extra_checks=_weight_checks(weight),
    ).alias("importance_weight")


def _is_uniform(target: object) -> bool:
    if isinstance(target, str):
        if target != "uniform":
            raise InvalidOptionError(f"target={target!r}: pass 'uniform' or a mapping")
        return True
    return False


def _biased_share(
    biased_share: float | None, biased_size: int | None, population_size: int | None
) -> float:
    if biased_share is not None:
        if biased_size is not None or population_size is not None:
            raise InvalidOptionError(
                "pass biased_share= or biased_size= with population_size=, not both"
            )
        share = biased_share
        name = "biased_share (|B|/|U|)"
    else:
        if biased_size is None or population_size is None:
            raise InvalidOptionError(
                "pass biased_share= (|B|/|U|) or both biased_size= (|B|) and population_size= (|U|)"
            )
        sizes = []
        for n, v in (("biased_size", biased_size), ("population_size", population_size)):
            size = as_integer(v)
            if size is None:  # |B| and |U| count items
                raise InvalidOptionError(f"{n}={v!r} is not an integer (a number of items)")
            sizes.append(size)
        if sizes[1] <= 0:
            raise InvalidOptionError(f"population_size={population_size!r} must be positive")
        share = sizes[0] / sizes[1]
        name = f"biased_size/population_size = {biased_size}/{population_size}"
    real = as_real(share)
    if real is None or not math.isfinite(real):
        raise InvalidOptionError(f"{name} = {share!r} is not a number")
    if not 0.0 < real < 1.0:
        raise InvalidOptionError(f"{name} = {share!r} is outside (0, 1)")
    return real


def _size_checks(
    in_biased_set: str,
    in_b: pl.Expr,
    rows: pl.Expr,
    biased_size: int | None,
    population_size: int | None,
) -> list[Check]:
    r"""With :math:`|B|` and :math:`|U|` given, the scored rows must fit in them:
    :math:`|\underline B| \le |B|` and :math:`|\underline B^c| \le |U| - |B|` (the scored
    rows are items of the population). ``rows`` counts the rows (1 per row, or a count table's
    ``n``); one aggregate each, the offending count or null."""
    if biased_size is None or population_size is None:
        return []
    checks: list[Check] = []
    for inside, size, which, option in (
        (in_b, int(biased_size), "B (flag True/1)", "biased_size"),
        (~in_b, int(population_size) - int(biased_size), "B^c (flag False/0)", "population_size"),
    ):
        scored = rows.filter(inside.fill_null(False)).sum()

        def message(value: Any, size: int = size, which: str = which, option: str = option) -> str:
            return (
                f"column {in_biased_set!r} (biased-set flag) has {value} rows in {which}, more "
                f"than the {size} items the sizes give it (biased_size={biased_size}, "
                f"population_size={population_size}); check {option}= (the scored rows are "
                "items of the population)"
            )

        checks.append((pl.when(scored > size).then(scored), message, InvalidOptionError))
    return checks


def _flag_check(in_biased_set: str) -> tuple[pl.Expr, Check]:
    """The flag as a Boolean level (null where the flag is null) and the check of its values."""
    flag = pl.col(in_biased_set)
    as_num = flag.cast(pl.Float64, strict=False)
    ok = as_num.is_in([0.0, 1.0]).fill_null(False)
    bad_value = flag.filter(flag.is_not_null() & ~ok).first().cast(pl.String, strict=False)

    def bad_flag(value: Any) -> str:
        return (
            f"column {in_biased_set!r} (biased-set flag) has a value {value!r} that is "
            "neither True/1 (in B) nor False/0 (in B^c)"
        )

    return as_num == 1.0, (bad_value, bad_flag, InvalidLabelError)


def _empty_set_message(in_biased_set: str, groups: list[str]) -> MissingMessage:
    def missing(level: _Level, group: Any) -> str:
        which = "B (flag True/1)" if level[0] else "B^c (flag False/0)"
        where = "the scored set" if group is None else f"the {groups} group {_show(group)!r}"
        return (
            f"column {in_biased_set!r} (biased-set flag) has no rows in {which} in {where}; "
            "the bias-adjusted weights need rows of both B and B^c"
        )

    return missing


def bias_adjusted_weights(
    in_biased_set: str,
    *,
    biased_share: float | None = None,
    biased_size: int | None = None,
    population_size: int | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    allow_empty: bool = False,
) -> pl.Expr:
    r"""The bias-adjusted row weights, recomputed on the frame they are applied to.

    .. math::

        w_{\underline B} = \frac{|\underline B| + |\underline B^c|}{|\underline B|}
        \frac{|B|}{|U|},\qquad
        w_{\underline B^c} = \frac{|\underline B| + |\underline B^c|}{|\underline B^c|}
        \left(1 - \frac{|B|}{|U|}\right)

    with :math:`|\underline B|` and :math:`|\underline B^c|` the rows of the frame flagged in
    and out of the biased set (per ``by`` group when given). Apply it to the train split and to
    the test split separately (or pass the split column as ``by``): each gets its own counts.
    The weights sum to the number of rows (of each ``by`` group). Importance-weighted
    precision, recall, F1, error rate and AUPR are then the ordinary metrics with this weight.

    Parameters
    ----------
    in_biased_set
        Flag column: ``True``/1 for a row of :math:`B` (selected by the process :math:`T`),
        ``False``/0 for a row of the sample of :math:`B^c`. Boolean or numeric.
    biased_share
        :math:`|B| / |U|`, strictly between 0 and 1. Or give both:
    biased_size, population_size
        :math:`|B|` and :math:`|U|`.
    by
        Group column(s): count :math:`|\underline B|, |\underline B^c|` within each group
        (the share :math:`|B|/|U|` stays the given one). Default: over the whole frame, which is
        right for group metrics when the samples of :math:`B` and :math:`B^c` were drawn without
        regard to the group.
    weight
        An existing sample-weight column (product; counts become weighted sums).
    allow_empty
        Do not raise for an empty :math:`\underline B` or :math:`\underline B^c`: the other
        set's rows keep their weight as if both were present (the results notebook's behaviour,
        which adds an epsilon to the empty count). Default: raise.

    Returns
    -------
    pl.Expr
        Float64 expression named ``bias_adjusted_weight``, null where the flag is null.

    Raises
    ------
    InvalidOptionError
        When built: a share outside (0, 1), conflicting or missing size options, a size that
        is not an integer. When the query runs: sizes that cannot hold the scored rows
        (:math:`|\underline B| > |B|` or :math:`|\underline B^c| > |U| - |B|`).
    EmptyGroupError
        When the query runs: no row of :math:`B`, or none of :math:`B^c`, in the frame (or in a
        ``by`` group), naming the column.
    InvalidLabelError
        When the query runs: a flag value that is neither True/1 nor False/0.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"in_b": [True, True, True, False]})
    >>> w = df.select(bias_adjusted_weights("in_b", biased_share=0.1))["bias_adjusted_weight"]
    >>> [round(x, 4) for x in w.to_list()], round(w.sum(), 10)
    ([0.1333, 0.1333, 0.1333, 3.6], 4.0)
    """
    share = _biased_share(biased_share, biased_size, population_size)
    key, flag_check = _flag_check(in_biased_set)
    groups = as_list(by)
    w = pl.col(weight).cast(pl.Float64) if weight is not None else None
    return _reweight(
        [key],
        target={(True,): share, (False,): 1.0 - share},
        source=None,
        weight=w,
        within=groups,
        missing_message=None if allow_empty else _empty_set_message(in_biased_set, groups),
        names=[in_biased_set],
        extra_checks=[
            flag_check,
            *_weight_checks(weight),
            *_size_checks(in_biased_set, key, pl.lit(1), biased_size, population_size),
        ],
    ).alias("bias_adjusted_weight")


# ---------------------------------------------------------------------------------------------
# Frame helpers (schema checked when the query is built)
# ---------------------------------------------------------------------------------------------


def _check_weight_name(name: str, inputs: Sequence[str]) -> None:
    """The new weight column must not replace a column it is computed from (the group labels
    would be silently overwritten by their weights)."""
    if name in inputs:
        raise InvalidOptionError(
            f"name={name!r} is a column the weights are computed from; pass another name="
        )


@accepts_tables
def with_importance_weights(
    data: FrameT,
    by: ColumnNames,
    *,
    target: Target = "uniform",
    source: Mix | None = None,
    weight: str | None = None,
    within: ColumnNames | None = None,
    missing_groups: MissingGroups = "error",
    name: str = "importance_weight",
) -> FrameT:
    """``data.with_columns(importance_weights(...).alias(name))``, columns checked first.

    See :func:`importance_weights` for the formula and options. Lazy in, lazy out.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 0, 0, 0]})
    >>> with_importance_weights(df, "y", name="iw")["iw"].to_list()
    [2.0, 0.6666666666666666, 0.6666666666666666, 0.6666666666666666]
    """
    schema = schema_of(data)
    require_columns(schema, "group", as_list(by))
    require_columns(schema, "within", as_list(within))
    if weight is not None:
        require_columns(schema, "weight", [weight])
        require_numeric(schema, weight, "weight")
    _check_weight_name(name, [*as_list(by), *as_list(within), *([weight] if weight else [])])
    tgt, src = _mixes(as_list(by), target, source, missing_groups, schema)  # typed keys
    expr = importance_weights(
        by,
        target="uniform" if tgt is None else tgt,
        source=src,
        weight=weight,
        within=within,
        missing_groups=missing_groups,
    )
    return data.with_columns(expr.alias(name))


@accepts_tables
def with_bias_adjusted_weights(
    data: FrameT,
    in_biased_set: str,
    *,
    biased_share: float | None = None,
    biased_size: int | None = None,
    population_size: int | None = None,
    by: ColumnNames | None = None,
    weight: str | None = None,
    allow_empty: bool = False,
    name: str = "bias_adjusted_weight",
) -> FrameT:
    """``data.with_columns(bias_adjusted_weights(...).alias(name))``, columns checked first.

    See :func:`bias_adjusted_weights` for the formula and options. Lazy in, lazy out.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"in_b": [1, 0, 0, 0]})
    >>> with_bias_adjusted_weights(df, "in_b", biased_share=0.5, name="w")["w"].to_list()
    [2.0, 0.6666666666666666, 0.6666666666666666, 0.6666666666666666]
    """
    schema = schema_of(data)
    require_columns(schema, "biased-set flag", [in_biased_set])
    require_columns(schema, "group", as_list(by))
    _check_weight_name(name, [in_biased_set, *as_list(by), *([weight] if weight else [])])
    if weight is not None:
        require_columns(schema, "weight", [weight])
        require_numeric(schema, weight, "weight")
    expr = bias_adjusted_weights(
        in_biased_set,
        biased_share=biased_share,
        biased_size=biased_size,
        population_size=population_size,
        by=by,
        weight=weight,
        allow_empty=allow_empty,
    )
    return data.with_columns(expr.alias(name))


# ---------------------------------------------------------------------------------------------
# Count tables in their canonical form
# ---------------------------------------------------------------------------------------------


def finish_counts(frame: FrameT, *, keys: Sequence[str]) -> FrameT:
    """A count table in the documented order (``docs/results.md``), rows sorted by the keys.

    Columns: ``attribute`` (when present), the keys, the other partitions, ``tp fp tn fn n``,
    ``tp_w … n_w``, ``n_null`` and its breakdown, then any other column. Rows sorted by the
    leading columns, nulls last.
    """
    columns: list[str] = list(schema_of(frame).names())
    parts: list[str] = [p for p in partitions_of(columns) if p not in keys]
    first: list[str] = ["attribute"] if "attribute" in parts else []
    lead: list[str] = [*first, *keys, *[p for p in parts if p not in first]]
    known: list[str] = [
        c for c in (*COUNT_COLUMNS, *WEIGHTED_COUNT_COLUMNS, *NULL_COLUMNS) if c in columns
    ]
    rest: list[str] = [c for c in columns if c not in lead and c not in known]
    out = frame.select(*lead, *known, *rest)
    if lead:
        out = out.sort(lead, nulls_last=True, maintain_order=True)
    return out


# ---------------------------------------------------------------------------------------------
# The count-table route: reweight a count table grouped by the level column(s); no row pass
# ---------------------------------------------------------------------------------------------


def _table_keys(columns: list[str]) -> list[str]:
    """The group keys of a count table: the non-count, non-partition columns."""
    parts = set(partitions_of(columns))
    return [c for c in key_columns(columns) if c not in parts]


def _reweight_table(
    counts: FrameT,
    level_cols: list[str],
    level_keys: list[pl.Expr],
    **options: Any,
) -> FrameT:
    """:func:`_reweight_lazy` keeping the frame kind."""
    lazy = _reweight_lazy(
        counts.lazy(), list(schema_of(counts).names()), level_cols, level_keys, **options
    )
    if isinstance(counts, pl.DataFrame):
        return lazy.collect()
    return lazy


def _once_per_sweep(columns: Sequence[str]) -> pl.Expr:
    """True on one row of each group of a count table: a threshold sweep repeats a group's
    rows at every threshold (an exact curve table's groups at thresholds of their own), so
    anything about the rows themselves (mixes, sizes) counts only these. All rows when the
    table has no ``threshold`` column."""
    if "threshold" not in columns:
        return pl.lit(True)
    same_rows = [k for k in key_columns(list(columns)) if k != "threshold"]
    first = pl.int_range(pl.len()) == 0
    return first.over(same_rows) if same_rows else first


def _reweight_lazy(
    counts: pl.LazyFrame,
    columns: list[str],
    level_cols: list[str],
    level_keys: list[pl.Expr],
    *,
    target: dict[_Level, float] | None,
    source: dict[_Level, float] | None,
    within: list[str],
    keys: ColumnNames | None,
    missing_message: MissingMessage | None,
    names: list[str],
    missing_groups: MissingGroups = "error",
    extra_checks: Sequence[Check] = (),
    mass_column: str | None = None,
) -> pl.LazyFrame:
    """Weighted counts = counts × Pr_tgt(level) / Pr_src(level), from a count table.

    ``mass_column``: also keep the table's mass before reweighting (``n``, or ``n_w`` when the
    table is weighted; 0 for a null level, which gets no weight) in this column, summed like the
    counts.
    """
    missing_counts = [c for c in ("tp", "fp", "tn", "fn") if c not in columns]
    if missing_counts:
        raise InvalidOptionError(
            "expected a count table (from confusion_counts) with columns tp, fp, tn, fn; "
            f"missing: {', '.join(missing_counts)}"
        )
    nonc = key_columns(columns)
    for col in [*level_cols, *within]:
        if col not in nonc:
            raise InvalidOptionError(
                f"{col!r} is not a key column of the count table (count with by= including it)"
            )
    partitions: list[str] = partitions_of(nonc)
    use_w = is_weighted(columns)
    c = Counts.from_columns(weighted=use_w)
    rows = Counts.from_columns().n
    valid = pl.all_horizontal([k.is_not_null() for k in level_keys])
    mass = pl.when(valid).then(c.n.cast(pl.Float64)).otherwise(pl.lit(0.0))
    # the mixes are the population's, not a threshold's: a sweep repeats each group's rows at
    # every threshold (and the groups of an exact curve table do not share thresholds), so the
    # source mix counts each row of the table once, over the partitions other than the threshold
    parts: list[str] = [*[p for p in partitions if p != "threshold"], *within]
    share_mass = pl.when(_once_per_sweep(columns)).then(mass).otherwise(0.0)

    def over(expr: pl.Expr, extra: Sequence[pl.Expr] = ()) -> pl.Expr:
        p: list[Any] = [*parts, *extra]
        return expr.over(p) if p else expr

    if source is None:
        src = over(share_mass.sum(), level_keys) / over(share_mass.sum())
    else:
        src = _lookup(level_keys, source)
    carries = valid & (mass > 0)
    checks: list[Check] = list(extra_checks)
    if target is None:
        tgt = pl.lit(1.0) / over(pl.struct(level_keys).filter(carries).n_unique()).cast(pl.Float64)
    else:
        listed = _lookup(level_keys, target)
        tgt = listed.fill_null(0.0)
    factor = pl.when(valid & (src > 0)).then(tgt / src).otherwise(pl.lit(0.0))
    lazy = counts.with_columns(factor.alias("_pfm_iw"))
    if mass_column is not None:
        lazy = lazy.with_columns(mass.alias(mass_column))
    if target is not None and missing_message is not None:
        msg = missing_message
        level: _Level
        for level in [lv for lv, p in target.items() if p > 0]:
            present = _match(level_keys, level) & carries
            group_cols = parts
            if group_cols:
                first_bad = pl.struct(group_cols).filter(~present.any().over(group_cols)).first()
            else:
                first_bad = pl.when(present.any()).then(pl.lit(None)).otherwise(pl.lit(True))

            def message(group: Any, level: _Level = level) -> str:
                return msg(level, None if group is True else group)

            checks.append((first_bad, message, EmptyGroupError))
    if target is not None and missing_groups == "error":
        checks.append(
            (
                _levels_where(level_keys, valid & _lookup(level_keys, target).is_null(), rows),
                _unlisted_message(names, "target", _TARGET_FIX),
                InvalidOptionError,
            )
        )
    if source is not None:
        checks.append(
            (
                _levels_where(level_keys, valid & src.is_null(), rows),
                _unlisted_message(names, "source", _SOURCE_FIX),
                InvalidOptionError,
            )
        )
    if checks:
        probe = pl.struct([e.alias(f"_pfm_check{i}") for i, (e, _, _) in enumerate(checks)])
        lazy = lazy.with_columns(probe.alias("_pfm_checks"))

        def guard(frame: pl.DataFrame) -> pl.DataFrame:
            if frame.height:
                row = frame["_pfm_checks"].struct.unnest().row(0)
                for value, (_, message, error) in zip(row, checks, strict=True):
                    if value is not None:
                        raise error(message(value))
            return frame.drop("_pfm_checks")

        schema = {k: v for k, v in lazy.collect_schema().items() if k != "_pfm_checks"}
        lazy = lazy.map_batches(guard, schema=schema)
    iw = pl.col("_pfm_iw")
    weighted: tuple[str, ...] = WEIGHTED_COUNT_COLUMNS[:4]
    lazy = (
        lazy.with_columns(
            [
                (e.cast(pl.Float64) * iw).alias(n)
                for e, n in zip((c.tp, c.fp, c.tn, c.fn), weighted, strict=True)
            ]
        )
        .with_columns(pl.sum_horizontal(list(weighted)).alias("n_w"))
        .drop("_pfm_iw")
    )
    if "n" not in columns:
        lazy = lazy.with_columns(rows.cast(pl.Int64).alias("n"))
    out_cols: list[str] = list(dict.fromkeys([*columns, "n", *WEIGHTED_COUNT_COLUMNS]))
    if mass_column is not None:
        out_cols.append(mass_column)
    lazy = lazy.select(out_cols)
    table_keys: list[str] = [k for k in nonc if k not in partitions]
    if keys is not None:
        table_keys = as_list(keys)
        for k in table_keys:
            if k not in nonc:
                raise InvalidOptionError(f"keys={k!r} is not a key column of the count table")
        group: list[str] = [*table_keys, *[p for p in partitions if p not in table_keys]]
        summed: list[str] = [col for col in out_cols if col not in nonc]
        if group:
            lazy = lazy.group_by(group).agg(pl.col(summed).sum())
        else:
            lazy = lazy.select(pl.col(summed).sum())
    return finish_counts(lazy, keys=table_keys)


@accepts_tables
def importance_weighted_counts(
    counts: FrameT,
    by: ColumnNames,
    *,
    target: Target = "uniform",
    source: Mix | None = None,
    within: ColumnNames | None = None,
    keys: ColumnNames | None = None,
    missing_groups: MissingGroups = "error",
) -> FrameT:
    r"""Importance-weighted counts from a count table grouped by :math:`A`: no pass over rows.

    Importance weights are constant within a level of :math:`A`, so on a count table whose groups
    include :math:`A` the weighted counts are the integer counts times the level's weight:

    .. math::

        tp_w = TP \cdot \frac{\Pr_{tgt}(A = a)}{\Pr_{src}(A = a)},\quad
        \Pr_{src}(A = a) = \frac{\sum_{g: a_g = a} n_g}{\sum_g n_g}\quad(\text{likewise }
        fp_w, tn_w, fn_w)

    — the same numbers as ``confusion_counts(weight=importance_weights(A))`` on the rows (when
    no label is null: here the source mix counts the rows that were counted, ``n``), computed from
    the small table, so the whole audit stays one streaming scan. A weighted table (sample
    weights) is reweighted on its weighted sums (product of weights). Metrics read from this
    table are weighted means (divided by :math:`\sum w`); for the importance-weights note's
    estimator (divided by the number of rows) use :func:`importance_weighted_metrics`.

    Parameters
    ----------
    counts
        A count table whose key columns include ``by`` (and ``within``); thresholds and
        replicates are partitions (each gets its own source mix).
    by, target, source, within, missing_groups
        As for :func:`importance_weights`.
    keys
        Sum the reweighted table over the other key columns, keeping these (e.g. count by
        ``["sex", "race"]``, weight by ``"race"``, report by ``"sex"``). Default: keep all.

    Returns
    -------
    DataFrame or LazyFrame
        A count table (``docs/results.md``): keys, partitions, ``tp fp tn fn n`` (the observed
        integer counts), ``tp_w, fp_w, tn_w, fn_w, n_w`` (Float64) holding the reweighted counts,
        the null counts. Rows with a null level get weight 0.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"y": [0] * 8 + [1] * 2, "p": [1] + [0] * 7 + [1, 0]})
    >>> t = pfm.confusion_counts(df, y_true="y", y_pred="p", by="y")
    >>> w = importance_weighted_counts(t, "y", keys=[])
    >>> pfm.metrics_from_counts(w, metrics="error_rate")["value"].item()  # the BER
    0.3125
    """
    names, level_keys = _key_exprs(by)
    tgt, src = _mixes(names, target, source, missing_groups, schema_of(counts))

    def missing(level: _Level, group: Any) -> str:
        where = "" if group is None else f" in {_show(group)!r}"
        return f"target mix names {_show(level)!r} of column(s) {names}, which has no rows{where}"

    return _reweight_table(
        counts,
        names,
        level_keys,
        target=tgt,
        source=src,
        within=as_list(within),
        keys=keys,
        missing_message=missing,
        names=names,
        missing_groups=missing_groups,
    )


@functools.lru_cache(maxsize=1)
def row_mean_metrics() -> frozenset[str]:
    """The metrics that are means over all the rows of a group (their support is ``n``):
    accuracy, error rate, selection rate, base rate. Read from the registry."""
    c = Counts(pl.lit(1), pl.lit(2), pl.lit(4), pl.lit(8))
    return frozenset(m for m, s in METRICS.items() if pl.select(s.support(c)).item() == 15)


@accepts_tables
def importance_weighted_metrics(
    data: FrameT,
    by: ColumnNames,
    *,
    target: Target = "uniform",
    source: Mix | None = None,
    within: ColumnNames | None = None,
    keys: ColumnNames | None = None,
    metrics: str | Sequence[str] | None = None,
    denominator: Denominator = "rows",
    missing_groups: MissingGroups = "error",
    y_true: str | None = None,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    weight: str | None = None,
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    wide: bool = False,
) -> FrameT:
    r"""Metrics under the target mix of :math:`A`, by importance weighting, in one scan.

    The importance-weights note estimates a mean under the target mix from the :math:`m` rows of
    the test set as

    .. math::

        \hat E_{tgt}[x] = \frac1m \sum_{i=1}^m i_{a_i}\, x_i,\qquad
        i_a = \frac{\Pr_{tgt}(A = a)}{\Pr_{src}(A = a)},

    e.g. the importance-weighted error rate with :math:`x_i = 1\{f(x_i) \ne y_i\}`. A metric
    conditioned on an event (a class, a prediction, a report group) is the ratio of two such
    means, and :math:`m` cancels: :math:`\sum_i i_{a_i} x_i 1_E / \sum_i i_{a_i} 1_E`.

    ``denominator`` chooses how a mean over the *population* (accuracy, error rate, selection
    rate, base rate, reported for the whole frame or each ``within`` group) is divided:

    - ``"rows"`` (default): by the number of rows :math:`m` (by :math:`\sum_i w_i` with a sample
      weight :math:`w`), the note's estimator (unbiased; with a given source mix it may exceed 1);
    - ``"weights"``: by :math:`\sum_i i_{a_i}` (the weighted mean, self-normalized), which is what
      ``group_metrics(weight="importance_weight")`` and :func:`importance_weighted_counts`
      compute.

    The two are equal when the source mix is estimated from the rows scored (the weights then
    sum to :math:`m`); they differ for a *given* source mix. Conditional metrics (rates given a
    class or a prediction, F1, MCC, balanced accuracy) and every metric of a report group
    narrower than the population are the same under both.

    Parameters
    ----------
    data
        Rows with ``y_true=`` and ``y_pred=`` (or ``y_score=`` + ``threshold=``): counted first,
        by ``keys``, ``by`` and ``within``, in one scan. Or a count table whose keys include
        ``by`` (and ``within``, ``keys``).
    by, target, source, within, missing_groups
        As for :func:`importance_weights`: the level column(s) :math:`A` and the mixes.
    keys
        The report groups (default: the ``within`` columns, so one row per population; ``[]``
        for one row).
    metrics
        Metric names or aliases (default: all).
    denominator
        ``"rows"`` or ``"weights"`` (see above, :data:`DENOMINATORS`).
    y_true, y_pred, y_score, threshold, weight, pos_label, neg_label
        As for :func:`~polars_fairmetrics.confusion_counts` (rows only).
    wide
        One row per group, one column per metric (``docs/results.md``).

    Returns
    -------
    DataFrame or LazyFrame
        The group-values kind of ``docs/results.md``: keys, partitions, ``metric``, ``value``,
        ``support``, ``n``, ``n_null``, ``n_w`` (the sum of the importance weights).

    Examples
    --------
    A known source mix that the sample does not follow: the note's estimator and the weighted
    mean differ.

    >>> import polars as pl
    >>> df = pl.DataFrame({"a": ["x", "x", "y", "y"], "y": [1, 0, 1, 0], "p": [1, 1, 0, 0]})
    >>> kw = dict(y_true="y", y_pred="p", target={"x": 0.5, "y": 0.5}, metrics="error_rate")
    >>> importance_weighted_metrics(df, "a", source={"x": 0.8, "y": 0.2}, **kw)["value"].item()
    0.78125
    >>> importance_weighted_metrics(
    ...     df, "a", source={"x": 0.8, "y": 0.2}, denominator="weights", **kw)["value"].item()
    0.5
    """
    _check_choice(denominator, "denominator", DENOMINATORS)
    names: list[str] = _metric_names(metrics)
    levels: list[str]
    level_keys: list[pl.Expr]
    levels, level_keys = _key_exprs(by)
    groups: list[str] = as_list(within)
    report: list[str] = groups if keys is None else as_list(keys)
    counts = count_rows_or_table(
        data,
        y_true=y_true,
        y_pred=y_pred,
        y_score=y_score,
        threshold=threshold,
        by=list(dict.fromkeys([*report, *levels, *groups])),
        weight=weight,
        pos_label=pos_label,
        neg_label=neg_label,
    )
    tgt, src = _mixes(levels, target, source, missing_groups, schema_of(counts))

    def missing(level: _Level, group: Any) -> str:
        where = "" if group is None else f" in {_show(group)!r}"
        return f"target mix names {_show(level)!r} of column(s) {levels}, which has no rows{where}"

    table = _reweight_table(
        counts,
        levels,
        level_keys,
        target=tgt,
        source=src,
        within=groups,
        keys=report,
        missing_message=missing,
        names=levels,
        missing_groups=missing_groups,
        mass_column=_MASS,
    )
    # the mass is constant within a report group: carried through as a key, then dropped
    out = metrics_from_counts(table, metrics=names, weighted=True, by=[*report, _MASS], wide=True)
    if denominator == "rows" and set(report) <= set(groups):
        # a mean over the population: sum(w x) / m = (sum(w x) / sum(w)) * sum(w) / m
        n_w = pl.col("n_w")
        out = out.with_columns(
            safe_div(
                pl.when(n_w == 0).then(pl.lit(0.0)).otherwise(pl.col(m) * n_w), pl.col(_MASS)
            ).alias(m)
            for m in names
            if m in row_mean_metrics()
        )
    out = finish(out.drop(_MASS), keys=report)
    if wide:
        return out
    return finish(from_wide(out, quantities=names, fields=("support",)), keys=report, order=names)


@accepts_tables
def bias_adjusted_counts(
    counts: FrameT,
    in_biased_set: str,
    *,
    biased_share: float | None = None,
    biased_size: int | None = None,
    population_size: int | None = None,
    by: ColumnNames | None = None,
    keys: ColumnNames | None = None,
    allow_empty: bool = False,
) -> FrameT:
    r"""Bias-adjusted counts from a count table grouped by the biased-set flag: no row pass.

    The weighted counts are the integer counts times :math:`w_{\underline B}` or
    :math:`w_{\underline B^c}` (see :func:`bias_adjusted_weights`), with
    :math:`|\underline B|, |\underline B^c|` read from the table (per ``by`` group when given).

    Parameters
    ----------
    counts
        A count table whose key columns include ``in_biased_set`` (Boolean or 0/1).
    in_biased_set, biased_share, biased_size, population_size, by, allow_empty
        As for :func:`bias_adjusted_weights`.
    keys
        Sum over the other key columns, keeping these (e.g. ``[]`` for one overall row, or the
        report groups). Default: keep all.

    Returns
    -------
    DataFrame or LazyFrame
        A count table (``docs/results.md``) with ``tp_w, fp_w, tn_w, fn_w, n_w`` holding the
        bias-adjusted counts.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"in_b": [1, 1, 0, 0, 0], "y": [1, 0, 0, 1, 0],
    ...                    "pred": [1, 1, 0, 0, 1]})
    >>> t = pfm.confusion_counts(df, y_true="y", y_pred="pred", by="in_b")
    >>> t = bias_adjusted_counts(t, "in_b", biased_share=0.2, keys=[])
    >>> round(pfm.metrics_from_counts(t, metrics="precision")["value"].item(), 4)
    0.2143
    """
    share = _biased_share(biased_share, biased_size, population_size)
    groups = as_list(by)
    in_b: pl.Expr
    in_b, flag_check = _flag_check(in_biased_set)
    once = _once_per_sweep(schema_of(counts).names())
    rows: pl.Expr = pl.when(once).then(Counts.from_columns().n).otherwise(0)
    checks = [flag_check, *_size_checks(in_biased_set, in_b, rows, biased_size, population_size)]
    return _reweight_table(
        counts,
        [in_biased_set],
        [in_b],
        target={(True,): share, (False,): 1.0 - share},
        source=None,
        within=groups,
        keys=keys,
        missing_message=None if allow_empty else _empty_set_message(in_biased_set, groups),
        names=[in_biased_set],
        extra_checks=checks,
    )


# ---------------------------------------------------------------------------------------------
# Bias-adjusted metrics, with the results notebook's conventions as an explicit option
# ---------------------------------------------------------------------------------------------


def _notebook_values(names: Sequence[str]) -> list[pl.Expr]:
    """The notebook's precision, recall and F1, over a wide metrics table that holds the exact
    precision and recall and their supports; every other metric is unchanged."""
    ppv, tpr = "positive_predictive_value", "true_positive_rate"
    has_positive = pl.col(f"{tpr}_support") > 0
    precision = pl.coalesce(
        pl.col(ppv), pl.when(has_positive).then(pl.lit(0.0)).otherwise(pl.lit(1.0))
    )
    recall = pl.coalesce(pl.col(tpr), pl.lit(1.0))
    # the notebook's f1(): 2PR / (P + R + 1e-15) on its precision and recall
    f1 = 2.0 * precision * recall / (precision + recall + NOTEBOOK_EPSILON)
    exprs = {ppv: precision, tpr: recall, "f1_score": f1}
    return [exprs[m].alias(m) for m in names if m in exprs]


@accepts_tables
def bias_adjusted_metrics(
    data: FrameT,
    *,
    y_true: str,
    in_biased_set: str,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | Sequence[float] | None = None,
    biased_share: float | None = None,
    biased_size: int | None = None,
    population_size: int | None = None,
    by: ColumnNames | None = None,
    weights_by: ColumnNames | None = None,
    weight: str | None = None,
    metrics: str | Sequence[str] | None = BIAS_ADJUSTED_METRICS,
    convention: Literal["exact", "filled"] = "exact",
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    wide: bool = False,
) -> FrameT:
    r"""Bias-adjusted (importance-weighted) metrics, per group, in one scan.

    The rows are weighted with :func:`bias_adjusted_weights` (recomputed on ``data``: pass the
    test split) and the metrics are the ordinary ones on the weighted counts, e.g.

    .. math::

        \text{Precision} = \frac{\sum_{f(x_i)=1} w_i\, 1[y_i = 1]}{\sum_{f(x_i)=1} w_i},\qquad
        \text{Recall} = \frac{\sum_{y_i=1} w_i\, 1[f(x_i) = 1]}{\sum_{y_i=1} w_i},\qquad
        F_1 = \frac{2PR}{P + R}.

    Parameters
    ----------
    data
        Rows of the scored set (DataFrame or LazyFrame; the result is of the same kind).
    y_true, y_pred, y_score, threshold, pos_label, neg_label
        As for :func:`~polars_fairmetrics.confusion_counts`.
    in_biased_set, biased_share, biased_size, population_size
        As for :func:`bias_adjusted_weights`.
    by
        Groups to report metrics for (the weights are computed over the whole frame).
    weights_by
        Recompute :math:`|\underline B|, |\underline B^c|` within these groups instead.
    weight
        An existing sample-weight column, multiplied in.
    metrics
        Metric names or aliases; default IW precision, recall, F1 and error rate.
    convention
        ``"exact"`` (default): undefined (0/0) is null. ``"filled"``: undefined values filled
        as the results notebook published with the bias-adjusted metrics does — precision
        when nothing is predicted positive is 0 if the group has a positive, else 1; recall
        with no positives is 1;
        F1 = 2PR / (P + R + 1e-15) on those values; an empty :math:`\underline B` or
        :math:`\underline B^c` is allowed (the notebook adds 1e-15 to the empty count). Other
        metrics are exact in both.
    wide
        One row per group, one column per metric (``docs/results.md``).

    Returns
    -------
    DataFrame or LazyFrame
        The group-values kind of ``docs/results.md``: keys (and ``threshold``), ``metric``,
        ``value``, ``support``, ``n``, ``n_null`` (rows with a null label, prediction or flag),
        ``n_w`` (the sum of the group's weights; over all groups, the number of rows scored).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"in_b": [1, 1, 0, 0, 0], "y": [1, 0, 0, 1, 0],
    ...                    "pred": [1, 1, 0, 0, 1]})
    >>> out = bias_adjusted_metrics(df, y_true="y", y_pred="pred", in_biased_set="in_b",
    ...                             biased_share=0.2, metrics="precision")
    >>> round(out["value"].item(), 4)  # w_B = 5/2 · 0.2 = 0.5, w_Bc = 5/3 · 0.8
    0.2143
    """
    if convention == "notebook":
        raise InvalidOptionError(
            "convention='notebook' is now convention='filled' (undefined values filled as the "
            "bias-adjusted metrics' published notebook does)"
        )
    _check_choice(convention, "convention", ("exact", "filled"))
    schema = schema_of(data)
    require_columns(schema, "biased-set flag", [in_biased_set])
    require_columns(schema, "weights_by", as_list(weights_by))
    if weight is not None:
        require_columns(schema, "weight", [weight])
        require_numeric(schema, weight, "weight")
    names: list[str] = _metric_names(metrics)
    keys: list[str] = as_list(by)
    w_col = "_pfm_bias_adjusted_weight"
    weighted = data.with_columns(
        bias_adjusted_weights(
            in_biased_set,
            biased_share=biased_share,
            biased_size=biased_size,
            population_size=population_size,
            by=weights_by,
            weight=weight,
            allow_empty=convention == "filled",
        ).alias(w_col)
    )
    counts = confusion_counts(
        weighted,
        y_true=y_true,
        y_pred=y_pred,
        y_score=y_score,
        threshold=threshold,
        by=keys,
        weight=w_col,
        pos_label=pos_label,
        neg_label=neg_label,
    )
    if convention == "exact":
        return metrics_from_counts(counts, metrics=names, weighted=True, by=keys, wide=wide)
    needed = list(dict.fromkeys([*names, "positive_predictive_value", "true_positive_rate"]))
    out = metrics_from_counts(counts, metrics=needed, weighted=True, by=keys, wide=True)
    extra = [m for m in needed if m not in names]
    out = out.with_columns(_notebook_values(names)).drop(*extra, *[f"{m}_support" for m in extra])
    if wide:
        return out
    return finish(from_wide(out, quantities=names, fields=("support",)), keys=keys, order=names)
