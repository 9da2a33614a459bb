r"""Disparities between groups: differences and ratios against a reference, between-groups
summaries, and the named fairness criteria of the seeds.

Orientation follows the seeds (:math:`\Delta f = f_{dis} - f_{priv}`,
:math:`\mathcal{Q} f = f_{dis} / f_{priv}`): **difference = group − reference** and
**ratio = group / reference**. The reference is

- a named group (a value; a tuple or mapping for intersectional keys; a mapping
  ``{attribute: value}`` for tables counted with ``separately=True``);
- ``"rest"``: every row not in the group (Virny's dis-vs-priv convention), computed from the counts
  as total − group, so the metric of the rest is exact, not an average of group metrics;
- ``"overall"``: the whole population.

Everything works on count tables, so the same code serves thresholds and bootstrap replicates
(each a partition: ``attribute``, ``threshold``, ``replicate`` columns are kept apart).
A ratio with a zero reference value is null, like every other undefined value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict

import polars as pl

from polars_fairmetrics._typing import ColumnNames, FrameT, Label
from polars_fairmetrics._validate import as_list, schema_of
from polars_fairmetrics.counts import (
    COUNT_COLUMNS,
    PARTITION_COLUMNS,
    WEIGHTED_COUNT_COLUMNS,
    confusion_counts,
)
from polars_fairmetrics.exceptions import MSG_REFERENCE, InvalidOptionError, ReferenceGroupError
from polars_fairmetrics.metrics import (
    METRICS,
    Counts,
    _metric_names,
    _use_weighted,
    key_columns,
    safe_div,
    to_long,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "CRITERIA",
    "CountOptions",
    "accuracy_equality_difference",
    "between_groups",
    "disparate_impact",
    "disparities",
    "equal_opportunity_difference",
    "equalized_odds_difference",
    "fairness_criteria",
    "negative_predictive_parity_difference",
    "positive_predictive_parity_difference",
    "predictive_equality_difference",
    "statistical_parity_difference",
]

Reference: TypeAlias = Label | tuple[Label, ...] | Mapping[str, Any] | None
"""A named group, ``"rest"``, ``"overall"``, or a mapping (see the module docstring)."""


class CountOptions(TypedDict, total=False):
    """Options passed on to :func:`~polars_fairmetrics.confusion_counts` when given rows."""

    y_true: str
    y_pred: str
    y_score: str
    threshold: float | Sequence[float]
    weight: str
    pos_label: Label
    neg_label: Label
    separately: bool
    score_bounds: tuple[float, float] | None


def _counts_and_keys(
    data: FrameT, by: ColumnNames | None, options: Mapping[str, Any]
) -> tuple[FrameT, list[str], list[str]]:
    """Count ``data`` when given rows (``y_true`` in the options); else take it as a count table.

    Returns the count table, its group keys and its partition columns.
    """
    if "y_true" in options:
        counts = confusion_counts(data, by=by, **options)
        columns = list(schema_of(counts).names())
    else:
        columns = list(schema_of(data).names())
        missing = [c for c in COUNT_COLUMNS[:4] if c not in columns]
        if missing:
            raise InvalidOptionError(
                "pass y_true= (and y_pred= or y_score=) with rows, or a count table with columns "
                f"tp, fp, tn, fn; missing: {', '.join(missing)}"
            )
        counts = data
    nonc = key_columns(columns)
    if options.get("separately") or ("attribute" in columns and "group" in columns and by is None):
        keys = ["group"]
    elif by is not None:
        keys = as_list(by)
    else:
        keys = [c for c in nonc if c not in PARTITION_COLUMNS]
    partitions = [c for c in nonc if c not in keys]
    return counts, keys, partitions


def _reference_mask(
    reference: Reference, keys: list[str], partitions: list[str]
) -> pl.Expr:
    """A Boolean expression selecting the reference group's rows."""
    if isinstance(reference, Mapping):
        if "attribute" in partitions and keys == ["group"]:
            conds = [
                (pl.col("attribute") == attr) & (pl.col("group") == pl.lit(str(val)))
                for attr, val in reference.items()
            ]
            mask = conds[0]
            for cnd in conds[1:]:
                mask = mask | cnd
            return mask
        values = [reference[k] if k in reference else None for k in keys]
        missing = [k for k in keys if k not in reference]
        if missing:
            raise InvalidOptionError(f"reference mapping misses the key(s) {missing!r}")
    elif isinstance(reference, tuple):
        if len(reference) != len(keys):
            raise InvalidOptionError(
                f"reference {reference!r} has {len(reference)} values for {len(keys)} keys {keys!r}"
            )
        values = list(reference)
    else:
        if len(keys) != 1:
            raise InvalidOptionError(
                f"groups have several keys {keys!r}: pass the reference as a tuple or a mapping"
            )
        values = [reference]
    mask = pl.lit(True)
    for k, v in zip(keys, values, strict=True):
        mask = mask & (pl.col(k).is_null() if v is None else (pl.col(k) == pl.lit(v)))
    return mask


def _window(expr: pl.Expr, partitions: list[str]) -> pl.Expr:
    return expr.over(partitions) if partitions else expr


def _make_reference_guard(reference: Reference, keys: list[str], partitions: list[str]) -> Any:
    def guard(frame: pl.DataFrame) -> pl.DataFrame:
        bad = frame.filter(pl.col("_pfm_has_ref").not_())
        if bad.height:
            groups = frame.select(keys).unique().sort(keys, nulls_last=True).rows()
            shown = ", ".join(repr(g[0] if len(g) == 1 else g) for g in groups[:20])
            first_bad = bad.select(partitions).row(0, named=True) if partitions else {}
            where = ", ".join(f"{k}={v!r}" for k, v in first_bad.items()) or "the data"
            raise ReferenceGroupError(
                MSG_REFERENCE.format(value=reference, column=f"{keys} ({where})",
                                     available=shown)
            )
        return frame.drop("_pfm_has_ref")

    return guard


def disparities(
    data: FrameT,
    *,
    by: ColumnNames | None = None,
    metrics: str | Sequence[str] | None = None,
    reference: Reference = "overall",
    weighted: bool | None = None,
    **count_options: Unpack[CountOptions],
) -> FrameT:
    r"""Per-group metric, reference metric, difference and ratio, for every metric.

    .. math::

        \text{difference}_g = m(\text{counts}_g) - m(\text{counts}_{ref}),\qquad
        \text{ratio}_g = m(\text{counts}_g) / m(\text{counts}_{ref})

    where :math:`\text{counts}_{ref}` are the counts of the named reference group, of the rest
    (total − group) or of the whole population. Null where either metric is undefined, and the
    ratio also where the reference value is 0.

    Parameters
    ----------
    data
        Rows (then pass ``y_true=`` and ``y_pred=`` / ``y_score=`` + ``threshold=``, as for
        :func:`~polars_fairmetrics.confusion_counts`) or a count table.
    by
        Group column(s); for a count table, default: its non-count, non-partition columns.
    metrics
        Metric names or aliases (default: all).
    reference
        A group value (tuple/mapping for several keys; ``{attribute: value}`` for a table counted
        ``separately``), ``"rest"`` or ``"overall"`` (default).
    weighted
        Use weighted counts (default: when present).

    Returns
    -------
    DataFrame or LazyFrame
        Keys, partitions (``attribute``/``threshold``/``replicate`` when present), ``metric``,
        ``value``, ``reference_value``, ``difference``, ``ratio``, ``n`` and ``reference``.

    Raises
    ------
    ReferenceGroupError
        A named reference absent from the data (or from one partition) — when the query runs.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b", "b"], "y": [1, 0, 1, 0, 1],
    ...                    "p": [1, 1, 0, 0, 1]})
    >>> disparities(df, y_true="y", y_pred="p", by="g", metrics="selection_rate",
    ...             reference="b").select("g", "value", "reference_value", "difference", "ratio")
    shape: (2, 5)
    ┌─────┬──────────┬─────────────────┬────────────┬───────┐
    │ g   ┆ value    ┆ reference_value ┆ difference ┆ ratio │
    │ --- ┆ ---      ┆ ---             ┆ ---        ┆ ---   │
    │ str ┆ f64      ┆ f64             ┆ f64        ┆ f64   │
    ╞═════╪══════════╪═════════════════╪════════════╪═══════╡
    │ a   ┆ 1.0      ┆ 0.333333        ┆ 0.666667   ┆ 3.0   │
    │ b   ┆ 0.333333 ┆ 0.333333        ┆ 0.0        ┆ 1.0   │
    └─────┴──────────┴─────────────────┴────────────┴───────┘
    """
    counts: FrameT
    keys: list[str]
    partitions: list[str]
    counts, keys, partitions = _counts_and_keys(data, by, count_options)
    columns = list(schema_of(counts).names())
    names = _metric_names(metrics)
    use_w = _use_weighted(columns, weighted)
    base = [c for c in (*COUNT_COLUMNS[:4], *WEIGHTED_COUNT_COLUMNS[:4]) if c in columns]
    if not use_w:
        base = list(COUNT_COLUMNS[:4])
    if reference is None:
        raise InvalidOptionError("reference= is None; pass a group value, 'rest' or 'overall'")
    ref_label = reference if isinstance(reference, str) else str(reference)
    ref_cols: list[pl.Expr]
    guard = None
    if isinstance(reference, str) and reference in ("overall", "rest"):
        totals = [_window(pl.col(c).sum(), partitions) for c in base]
        if reference == "overall":
            ref_cols = [t.alias(f"_pfm_ref_{c}") for t, c in zip(totals, base, strict=True)]
        else:
            ref_cols = [(t - pl.col(c)).alias(f"_pfm_ref_{c}")
                        for t, c in zip(totals, base, strict=True)]
    else:
        mask = _reference_mask(reference, keys, partitions)
        ref_cols = [_window(pl.col(c).filter(mask).sum(), partitions).alias(f"_pfm_ref_{c}")
                    for c in base]
        ref_cols.append(_window(mask.any(), partitions).alias("_pfm_has_ref"))
        guard = _make_reference_guard(reference, keys, partitions)
    with_ref: FrameT = counts.with_columns(ref_cols)
    if guard is not None:
        out_schema = dict(schema_of(with_ref))
        guarded = with_ref.lazy().map_batches(
            guard,
            schema={k: v for k, v in out_schema.items() if k != "_pfm_has_ref"},
        )
        with_ref = guarded.collect() if isinstance(counts, pl.DataFrame) else guarded
    own = Counts.from_columns(weighted=use_w)
    ref = Counts.from_columns(weighted=use_w, prefix="_pfm_ref_")
    sizes: list[str] = ["n"] if "n" in columns else []
    fields: dict[str, dict[str, pl.Expr]] = {}
    for m in names:
        spec = METRICS[m]
        fields[m] = {"value": spec.func(own), "reference_value": spec.func(ref)}
    value, ref_value = pl.col("value"), pl.col("reference_value")
    out = (
        to_long(with_ref, index=[*keys, *partitions, *sizes], fields=fields)
        .with_columns(
            (value - ref_value).alias("difference"),
            safe_div(value, ref_value).alias("ratio"),
            pl.lit(ref_label).alias("reference"),
        )
        .select([*_ordered(keys, partitions), "metric", "value", "reference_value",
                 "difference", "ratio", *sizes, "reference"])
    )
    return out


def _ordered(keys: list[str], partitions: list[str]) -> list[str]:
    """Output column order: ``attribute`` first (it qualifies ``group``), keys, partitions."""
    first = ["attribute"] if "attribute" in partitions else []
    return [*first, *keys, *[p for p in partitions if p not in first]]


def between_groups(
    data: FrameT,
    *,
    by: ColumnNames | None = None,
    metrics: str | Sequence[str] | None = None,
    weighted: bool | None = None,
    **count_options: Unpack[CountOptions],
) -> FrameT:
    """Between-groups summaries of each metric, for attributes with many levels.

    For each metric (and partition): ``max``, ``min``, ``difference = max − min``,
    ``ratio = min / max`` (null when ``max`` is 0), the ``worst_group`` and ``best_group`` by the
    metric's direction (null for metrics with no better direction, and when every group is
    undefined), ``n_groups`` and
    ``n_undefined`` (groups whose value is null; they are left out of the summary).
    fairlearn calls these ``difference(method="between_groups")`` and ``ratio(...)``.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b", "c"], "y": [1, 0, 1, 0, 0],
    ...                    "p": [1, 1, 0, 0, 1]})
    >>> between_groups(df, y_true="y", y_pred="p", by="g", metrics="tpr").select(
    ...     "metric", "difference", "worst_group", "n_undefined")
    shape: (1, 4)
    ┌────────────────────┬────────────┬─────────────┬─────────────┐
    │ metric             ┆ difference ┆ worst_group ┆ n_undefined │
    │ ---                ┆ ---        ┆ ---         ┆ ---         │
    │ str                ┆ f64        ┆ str         ┆ u32         │
    ╞════════════════════╪════════════╪═════════════╪═════════════╡
    │ true_positive_rate ┆ 1.0        ┆ b           ┆ 1           │
    └────────────────────┴────────────┴─────────────┴─────────────┘
    """
    counts: FrameT
    keys: list[str]
    partitions: list[str]
    counts, keys, partitions = _counts_and_keys(data, by, count_options)
    from polars_fairmetrics.metrics import metrics_from_counts

    long = metrics_from_counts(counts, metrics=metrics, weighted=weighted, long=True)
    label = (
        pl.col(keys[0]).cast(pl.String)
        if len(keys) == 1
        else pl.concat_str([pl.col(k).cast(pl.String).fill_null("null") for k in keys],
                           separator=" & ")
    )
    direction = pl.col("metric").replace_strict(
        {m: s.higher_is_better for m, s in METRICS.items()}, return_dtype=pl.Boolean
    )
    v = pl.col("value")
    any_defined = v.is_not_null().any()
    out = (
        long.with_columns(label.alias("_pfm_label"), direction.alias("_pfm_hib"))
        .group_by([*partitions, "metric"])
        .agg(
            v.max().alias("max"),
            v.min().alias("min"),
            (v.max() - v.min()).alias("difference"),
            safe_div(v.min(), v.max()).alias("ratio"),
            pl.when(any_defined.not_())  # every group undefined: no worst, no best
            .then(pl.lit(None, dtype=pl.String))
            .when(pl.col("_pfm_hib").first())
            .then(pl.col("_pfm_label").sort_by(v, nulls_last=True).first())
            .when(pl.col("_pfm_hib").first().not_())
            .then(pl.col("_pfm_label").sort_by(v, descending=True, nulls_last=True).first())
            .alias("worst_group"),
            pl.when(any_defined.not_())
            .then(pl.lit(None, dtype=pl.String))
            .when(pl.col("_pfm_hib").first())
            .then(pl.col("_pfm_label").sort_by(v, descending=True, nulls_last=True).first())
            .when(pl.col("_pfm_hib").first().not_())
            .then(pl.col("_pfm_label").sort_by(v, nulls_last=True).first())
            .alias("best_group"),
            pl.len().alias("n_groups"),
            v.null_count().alias("n_undefined"),
        )
    )
    order = {m: i for i, m in enumerate(METRICS)}
    return out.sort([*partitions, pl.col("metric").replace_strict(order, return_dtype=pl.Int64)])


# ---------------------------------------------------------------------------------------------
# Named fairness criteria (seeds: Virny's performance dimensions, the class-imbalance paper)
# ---------------------------------------------------------------------------------------------

CRITERIA: dict[str, tuple[str, str]] = {
    "statistical_parity_difference": ("selection_rate", "difference"),
    "disparate_impact": ("selection_rate", "ratio"),
    "equal_opportunity_difference": ("true_positive_rate", "difference"),
    "predictive_equality_difference": ("false_positive_rate", "difference"),
    "false_negative_rate_difference": ("false_negative_rate", "difference"),
    "accuracy_equality_difference": ("accuracy", "difference"),
    "positive_predictive_parity_difference": ("positive_predictive_value", "difference"),
    "negative_predictive_parity_difference": ("negative_predictive_value", "difference"),
}
"""Each named criterion: (base metric, composition). Equalized odds is composed from two."""


def fairness_criteria(
    data: FrameT,
    *,
    by: ColumnNames | None = None,
    reference: Reference = "overall",
    weighted: bool | None = None,
    criteria: Sequence[str] | None = None,
    **count_options: Unpack[CountOptions],
) -> FrameT:
    """The named fairness criteria of the seeds, per group, in one tidy frame.

    ``criterion`` is one of :data:`CRITERIA` or ``equalized_odds_difference``
    (= max(|ΔFPR|, |ΔFNR|), the larger violation of the two equalized-odds constraints).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [1, 1, 1, 0]})
    >>> fairness_criteria(df, y_true="y", y_pred="p", by="g", reference="b",
    ...                   criteria=["disparate_impact"]).filter(pl.col("g") == "a")
    shape: (1, 5)
    ┌─────┬──────────────────┬───────┬─────┬───────────┐
    │ g   ┆ criterion        ┆ value ┆ n   ┆ reference │
    │ --- ┆ ---              ┆ ---   ┆ --- ┆ ---       │
    │ str ┆ str              ┆ f64   ┆ i64 ┆ str       │
    ╞═════╪══════════════════╪═══════╪═════╪═══════════╡
    │ a   ┆ disparate_impact ┆ 2.0   ┆ 2   ┆ b         │
    └─────┴──────────────────┴───────┴─────┴───────────┘
    """
    names = list(criteria) if criteria is not None else [*CRITERIA, "equalized_odds_difference"]
    for c in names:
        if c not in CRITERIA and c != "equalized_odds_difference":
            known = ", ".join([*CRITERIA, "equalized_odds_difference"])
            raise InvalidOptionError(f"unknown criterion {c!r}; known: {known}")
    counts: FrameT
    keys: list[str]
    partitions: list[str]
    counts, keys, partitions = _counts_and_keys(data, by, count_options)
    needed = {CRITERIA[c][0] for c in names if c in CRITERIA}
    if "equalized_odds_difference" in names:
        needed |= {"false_positive_rate", "false_negative_rate"}
    disp = disparities(counts, by=keys, metrics=sorted(needed), reference=reference,
                       weighted=weighted)
    sizes: list[str] = ["n"] if "n" in schema_of(disp).names() else []
    # one chain (no fan-out, so the rows are scanned once): join each metric row to the
    # criteria composed from it, then one group_by (equalized odds takes the larger of two)
    rows: list[tuple[str, str, str]] = []
    crit: str
    for crit in names:
        if crit == "equalized_odds_difference":
            rows += [(crit, "false_positive_rate", "abs"), (crit, "false_negative_rate", "abs")]
        else:
            rows.append((crit, *CRITERIA[crit]))
    mapping = pl.DataFrame(rows, schema=["criterion", "metric", "how"], orient="row")
    if isinstance(disp, pl.LazyFrame):
        joined = disp.join(mapping.lazy(), on="metric", how="inner")
    else:
        joined = disp.join(mapping, on="metric", how="inner")
    how = pl.col("how")
    value = (
        pl.when(how == "difference").then(pl.col("difference"))
        .when(how == "ratio").then(pl.col("ratio"))
        .otherwise(pl.col("difference").abs())
    )
    order = {c: i for i, c in enumerate(names)}
    group_cols = [*_ordered(keys, partitions), "criterion"]
    out = (
        joined.with_columns(value.alias("value"))
        .group_by(group_cols)
        .agg(
            # null when any part is undefined (max would skip nulls)
            pl.when(pl.col("value").null_count() == 0).then(pl.col("value").max()).alias("value"),
            *[pl.col(s).first() for s in sizes],
            pl.col("reference").first(),
        )
    )
    return out.sort([*partitions, *keys,
                     pl.col("criterion").replace_strict(order, return_dtype=pl.Int64)],
                    nulls_last=True)


def _criterion(name: str, data: FrameT, by: ColumnNames | None, reference: Reference,
               weighted: bool | None, options: Mapping[str, Any]) -> FrameT:
    out = fairness_criteria(data, by=by, reference=reference, weighted=weighted,
                            criteria=[name], **options)
    return out.rename({"value": name}).drop("criterion")


def statistical_parity_difference(
    data: FrameT, *, by: ColumnNames | None = None, reference: Reference = "overall",
    weighted: bool | None = None, **count_options: Unpack[CountOptions],
) -> FrameT:
    """Statistical parity difference: selection rate of the group − of the reference.

    Formula: P(Ŷ=1 | A=g) − P(Ŷ=1 | A=ref). 0 is parity; undefined for an empty group.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [1, 1, 1, 0]})
    >>> out = statistical_parity_difference(df, y_true="y", y_pred="p", by="g", reference="b")
    >>> out["statistical_parity_difference"].to_list()
    [0.5, 0.0]
    """
    return _criterion("statistical_parity_difference", data, by, reference, weighted,
                      count_options)


def disparate_impact(
    data: FrameT, *, by: ColumnNames | None = None, reference: Reference = "overall",
    weighted: bool | None = None, **count_options: Unpack[CountOptions],
) -> FrameT:
    """Disparate impact: selection rate of the group / of the reference (four-fifths rule: < 0.8).

    Formula: P(Ŷ=1 | A=g) / P(Ŷ=1 | A=ref). Null when the reference selects nobody.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [1, 0, 1, 1]})
    >>> out = disparate_impact(df, y_true="y", y_pred="p", by="g", reference="b")
    >>> out["disparate_impact"].to_list()
    [0.5, 1.0]
    """
    return _criterion("disparate_impact", data, by, reference, weighted, count_options)


def equal_opportunity_difference(
    data: FrameT, *, by: ColumnNames | None = None, reference: Reference = "overall",
    weighted: bool | None = None, **count_options: Unpack[CountOptions],
) -> FrameT:
    """Equal opportunity difference: TPR of the group − TPR of the reference.

    Formula: P(Ŷ=1 | A=g, Y=1) − P(Ŷ=1 | A=ref, Y=1). Undefined without actual positives.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 1, 1, 1], "p": [1, 0, 1, 1]})
    >>> out = equal_opportunity_difference(df, y_true="y", y_pred="p", by="g", reference="b")
    >>> out["equal_opportunity_difference"].to_list()
    [-0.5, 0.0]
    """
    return _criterion("equal_opportunity_difference", data, by, reference, weighted,
                      count_options)


def predictive_equality_difference(
    data: FrameT, *, by: ColumnNames | None = None, reference: Reference = "overall",
    weighted: bool | None = None, **count_options: Unpack[CountOptions],
) -> FrameT:
    """Predictive equality difference: FPR of the group − FPR of the reference.

    Formula: P(Ŷ=1 | A=g, Y=0) − P(Ŷ=1 | A=ref, Y=0). Undefined without actual negatives.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [0, 0, 0, 0], "p": [1, 0, 0, 0]})
    >>> out = predictive_equality_difference(df, y_true="y", y_pred="p", by="g", reference="b")
    >>> out["predictive_equality_difference"].to_list()
    [0.5, 0.0]
    """
    return _criterion("predictive_equality_difference", data, by, reference, weighted,
                      count_options)


def equalized_odds_difference(
    data: FrameT, *, by: ColumnNames | None = None, reference: Reference = "overall",
    weighted: bool | None = None, **count_options: Unpack[CountOptions],
) -> FrameT:
    """Equalized odds difference: the larger of |ΔFPR| and |ΔFNR| against the reference.

    Formula: max(|FPR_g − FPR_ref|, |FNR_g − FNR_ref|). Null when either is undefined. The two
    parts are ``predictive_equality_difference`` and ``false_negative_rate_difference`` in
    :func:`fairness_criteria`.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [0, 1, 1, 0]})
    >>> out = equalized_odds_difference(df, y_true="y", y_pred="p", by="g", reference="b")
    >>> out["equalized_odds_difference"].to_list()
    [1.0, 0.0]
    """
    return _criterion("equalized_odds_difference", data, by, reference, weighted, count_options)


def accuracy_equality_difference(
    data: FrameT, *, by: ColumnNames | None = None, reference: Reference = "overall",
    weighted: bool | None = None, **count_options: Unpack[CountOptions],
) -> FrameT:
    """Accuracy equality difference: accuracy of the group − accuracy of the reference.

    Formula: P(Ŷ=Y | A=g) − P(Ŷ=Y | A=ref).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [0, 0, 1, 0]})
    >>> out = accuracy_equality_difference(df, y_true="y", y_pred="p", by="g", reference="b")
    >>> out["accuracy_equality_difference"].to_list()
    [-0.5, 0.0]
    """
    return _criterion("accuracy_equality_difference", data, by, reference, weighted,
                      count_options)


def positive_predictive_parity_difference(
    data: FrameT, *, by: ColumnNames | None = None, reference: Reference = "overall",
    weighted: bool | None = None, **count_options: Unpack[CountOptions],
) -> FrameT:
    """Positive predictive parity difference: PPV of the group − PPV of the reference.

    Formula: P(Y=1 | A=g, Ŷ=1) − P(Y=1 | A=ref, Ŷ=1). Undefined when nothing is predicted
    positive in either.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [1, 1, 1, 0]})
    >>> out = positive_predictive_parity_difference(df, y_true="y", y_pred="p", by="g",
    ...                                             reference="b")
    >>> out["positive_predictive_parity_difference"].to_list()
    [-0.5, 0.0]
    """
    return _criterion("positive_predictive_parity_difference", data, by, reference, weighted,
                      count_options)


def negative_predictive_parity_difference(
    data: FrameT, *, by: ColumnNames | None = None, reference: Reference = "overall",
    weighted: bool | None = None, **count_options: Unpack[CountOptions],
) -> FrameT:
    """Negative predictive parity difference: NPV of the group − NPV of the reference.

    Formula: P(Y=0 | A=g, Ŷ=0) − P(Y=0 | A=ref, Ŷ=0). Undefined when nothing is predicted
    negative in either.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [0, 0, 1, 0]})
    >>> out = negative_predictive_parity_difference(df, y_true="y", y_pred="p", by="g",
    ...                                             reference="b")
    >>> out["negative_predictive_parity_difference"].to_list()
    [-0.5, 0.0]
    """
    return _criterion("negative_predictive_parity_difference", data, by, reference, weighted,
                      count_options)
