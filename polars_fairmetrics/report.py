r"""The fairness audit: one call from a table of predictions to a complete, honest report.

:func:`audit` scans the rows **once** (:func:`~polars_fairmetrics.confusion_counts`, collected)
and derives every count-based section from that small count table: group sizes and null rows,
per-group metrics, disparities against the reference, the named fairness criteria, between-groups
summaries, and the undefined values with their reasons.

A :class:`Report` is an ordered list of :class:`Section`\ s. Each section is a tidy table computed
from the inputs by a *section builder* (``Callable[[AuditContext], Section | None]``); a builder
returning ``None`` leaves its section out. Sections for capabilities a version of the package does
not have are simply absent, never filled with placeholders. Builders run in order and may
*replace* an earlier section of the same name (e.g. to add interval columns ``ci_low`` /
``ci_high`` to the metrics), which is how later capabilities plug in: see ``extra_sections``.

Beyond the core, ``audit(intervals=B)`` adds bootstrap intervals to those sections (the bootstrap
module's count engine on the same count table: no second scan) and ``audit(models=[...])`` the
ensemble ``stability`` and ``stability_distribution`` sections (one more scan). With ``y_score``
the ``curve_summaries`` and ``curves`` sections come from a grid curve table (one more scan;
``curves=False`` leaves them out), and ``audit(deploy_positive_rate=p)`` adds the ``deployment``
section from the same count table (no extra scan); see :data:`EXTENSION_BUILDERS`.

Gates (:meth:`Report.check`, the CLI's ``--fail-if``) are parsed by a small tokenizer, never
``eval``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias, cast

import polars as pl

from polars_fairmetrics._typing import ColumnNames, Label
from polars_fairmetrics._validate import as_list, schema_of
from polars_fairmetrics.counts import (
    COUNT_COLUMNS,
    WEIGHTED_COUNT_COLUMNS,
    confusion_counts,
    count_columns,
)
from polars_fairmetrics.disparity import CRITERIA, between_groups, disparities, fairness_criteria
from polars_fairmetrics.exceptions import InvalidOptionError, SectionNotFoundError
from polars_fairmetrics.metrics import METRICS, metrics_from_counts, resolve_metric, safe_div

__all__ = [
    "CURVE_BINS",
    "DEFAULT_AUDIT_CRITERIA",
    "DEFAULT_AUDIT_METRICS",
    "DEPLOYMENT_AUDIT_METRICS",
    "EXTENSION_BUILDERS",
    "SECTION_BUILDERS",
    "AuditContext",
    "AuditOptions",
    "Gate",
    "GateResult",
    "IntervalOptions",
    "Report",
    "Section",
    "SectionBuilder",
    "audit",
    "parse_gate",
]

SCHEMA_VERSION = "1"
"""Version of the report's JSON schema (``docs/report.md``); bumped on incompatible change."""

DEFAULT_AUDIT_METRICS: tuple[str, ...] = (
    "selection_rate",
    "base_rate",
    "accuracy",
    "balanced_accuracy",
    "true_positive_rate",
    "false_positive_rate",
    "false_negative_rate",
    "positive_predictive_value",
    "negative_predictive_value",
    "f1_score",
)
"""Metrics of a report when none are named (``metrics="all"``: every registered metric)."""

DEFAULT_AUDIT_CRITERIA: tuple[str, ...] = (*CRITERIA, "equalized_odds_difference")
"""Every named fairness criterion."""

Reference: TypeAlias = Label | tuple[Label, ...] | Mapping[str, Any]
"""A reference group value, ``"overall"``, ``"rest"``, a tuple (intersectional) or a mapping."""

INTERVAL_COLUMNS: tuple[str, str] = ("ci_low", "ci_high")
"""Columns a section carries when it has confidence intervals for its ``value``."""


# ---------------------------------------------------------------------------------------------
# Sections and the report
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    """One part of a report: a tidy table and what it means.

    Attributes
    ----------
    name
        Identifier (JSON key, Parquet file stem), e.g. ``"metrics"``.
    title
        Heading shown by the renderers.
    description
        One or two sentences: what the table holds and how to read it.
    table
        The tidy result (exact numbers; nulls are undefined values).
    notes
        Extra remarks shown under the table (e.g. how many values are undefined).
    """

    name: str
    title: str
    description: str
    table: pl.DataFrame
    notes: tuple[str, ...] = ()

    @property
    def has_intervals(self) -> bool:
        """Whether the table carries ``ci_low`` / ``ci_high`` columns."""
        return all(c in self.table.columns for c in INTERVAL_COLUMNS)


@dataclass(frozen=True)
class AuditOptions:
    """The normalized options of an audit (recorded in the report's ``inputs``)."""

    y_true: str
    y_pred: str | None
    y_score: str | None
    threshold: float | None
    by: tuple[str, ...]
    intersectional: bool
    weight: str | None
    reference: str | dict[str, str]
    pos_label: Label | None
    neg_label: Label | None
    metrics: tuple[str, ...]
    criteria: tuple[str, ...]
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The options as JSON-compatible values."""
        return {
            "y_true": self.y_true,
            "y_pred": self.y_pred,
            "y_score": self.y_score,
            "threshold": self.threshold,
            "by": list(self.by),
            "intersectional": self.intersectional,
            "weight": self.weight,
            "reference": self.reference,
            "pos_label": self.pos_label,
            "neg_label": self.neg_label,
            "metrics": list(self.metrics),
            "criteria": list(self.criteria),
            "source": self.source,
        }


@dataclass
class AuditContext:
    """What a section builder receives.

    Attributes
    ----------
    data
        The rows, lazily (for sections that need them: curves, ensemble, row-level bootstrap).
        Count-based sections must use ``counts`` instead, so the rows are scanned once.
    counts
        The collected count table: ``attribute``, ``group`` (text), ``tp fp tn fn n``
        (``tp_w … n_w`` when weighted) and the null counts.
    options
        The audit's options.
    sections
        The sections built so far, by name, in order.
    extra
        Options of capabilities beyond the core, by capability name (see ``audit(extra=...)``).
    """

    data: pl.LazyFrame
    counts: pl.DataFrame
    options: AuditOptions
    sections: dict[str, Section] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)


SectionBuilder: TypeAlias = Callable[[AuditContext], "Section | None"]
"""A function computing one section from the audit context (``None``: section absent)."""


class Report:
    """The result of :func:`audit`: inputs and an ordered list of sections.

    ``report["metrics"]`` is a section's table; ``str(report)`` the terminal rendering;
    ``to_json``, ``to_markdown``, ``to_html`` and ``write_parquet`` the other renderers
    (:mod:`polars_fairmetrics.render`). In a notebook the report displays as HTML.
    """

    def __init__(self, inputs: Mapping[str, Any], sections: Sequence[Section]) -> None:
        self.inputs: dict[str, Any] = dict(inputs)
        self.sections: dict[str, Section] = {s.name: s for s in sections}

    # access
    def __getitem__(self, name: str) -> pl.DataFrame:
        return self.section(name).table

    def __contains__(self, name: object) -> bool:
        return name in self.sections

    def section(self, name: str) -> Section:
        """The section called ``name`` (:class:`SectionNotFoundError`, also a ``KeyError``,
        naming the sections present)."""
        if name not in self.sections:
            raise SectionNotFoundError(f"no section {name!r} in this report; sections: "
                           f"{', '.join(self.sections)}")
        return self.sections[name]

    @property
    def section_names(self) -> list[str]:
        """Names of the sections present, in order."""
        return list(self.sections)

    @property
    def notes(self) -> list[str]:
        """Report-wide remarks (e.g. that no intervals were computed)."""
        out = []
        if not any(s.has_intervals for s in self.sections.values()):
            out.append("Point estimates only: this report has no confidence intervals.")
        return out

    # renderers (delegates to polars_fairmetrics.render)
    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-compatible data (schema in ``docs/report.md``)."""
        from polars_fairmetrics import render

        return render.report_to_dict(self)

    def to_json(self, path: str | Path | None = None, *, indent: int | None = 2) -> str:
        """The report as JSON text (also written to ``path`` when given)."""
        from polars_fairmetrics import render

        return render.render_json(self, path, indent=indent)

    def to_markdown(self, path: str | Path | None = None) -> str:
        """The report as Markdown (also written to ``path`` when given)."""
        from polars_fairmetrics import render

        return render.render_markdown(self, path)

    def to_html(self, path: str | Path | None = None, *, plots: bool = True) -> str:
        """The report as one self-contained HTML page (also written to ``path`` when given)."""
        from polars_fairmetrics import render

        return render.render_html(self, path, plots=plots)

    def write_parquet(self, directory: str | Path) -> list[Path]:
        """Write each section as ``<name>.parquet`` plus ``manifest.json`` into ``directory``."""
        from polars_fairmetrics import render

        return render.write_parquet(self, directory)

    def to_terminal(self) -> str:
        """The report as plain text tables."""
        from polars_fairmetrics import render

        return render.render_terminal(self)

    def __str__(self) -> str:
        return self.to_terminal()

    def __repr__(self) -> str:
        return f"Report(sections={self.section_names!r})"

    def _repr_html_(self) -> str:
        from polars_fairmetrics import render

        return render.render_html(self, None, plots=True, fragment=True)

    # gates
    def check(self, *gates: str | Gate) -> list[GateResult]:
        """Evaluate gate conditions (see :func:`parse_gate`); a gate *fails* when any group
        satisfies its condition.

        Examples
        --------
        >>> import polars as pl
        >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [1, 1, 1, 0]})
        >>> r = audit(df, y_true="y", y_pred="p", by="g", reference="a")
        >>> [g.failed for g in r.check("disparate_impact < 0.8", "accuracy < 0.4")]
        [True, False]
        """
        return [evaluate_gate(self, g if isinstance(g, Gate) else parse_gate(g)) for g in gates]


# ---------------------------------------------------------------------------------------------
# Core section builders (everything derived from the one collected count table)
# ---------------------------------------------------------------------------------------------


def _groups_section(ctx: AuditContext) -> Section:
    counts = ctx.counts
    share = (pl.col("n") / pl.col("n").sum().over("attribute")).alias("share")
    cols = [c for c in counts.columns if c not in ("tp", "fp", "tn", "fn")]
    table = counts.select(
        *cols,
        share,
        (pl.col("tp") + pl.col("fn")).alias("positives"),
        (pl.col("tp") + pl.col("fp")).alias("predicted_positives"),
    )
    first = counts.filter(pl.col("attribute") == counts["attribute"].first())
    n_null = int(first["n_null"].sum())
    notes = []
    if n_null:
        notes.append(f"{n_null} row(s) were left out of the counts because a label, prediction "
                     "or weight was null (n_null, broken down by column).")
    empty = counts.filter(pl.col("n") == 0).height
    if empty:
        notes.append(f"{empty} group(s) have no counted rows: all their metrics are undefined.")
    return Section(
        "groups",
        "Groups",
        "Group sizes: counted rows n (and weighted n_w), rows left out for a null value "
        "(n_null and its breakdown), share of the attribute's counted rows, actual and "
        "predicted positives.",
        table,
        tuple(notes),
    )


def _metrics_section(ctx: AuditContext) -> Section:
    long = metrics_from_counts(ctx.counts, metrics=list(ctx.options.metrics), long=True)
    keys = ["attribute", "group"]
    table = long.select(*keys, "metric", "value", "support",
                        *[c for c in ("n", "n_w") if c in long.columns])
    n_undef = table["value"].null_count()
    notes = (f"{n_undef} value(s) undefined (0/0): see Undefined values.",) if n_undef else ()
    weighted = "weighted " if ctx.options.weight else ""
    return Section(
        "metrics",
        "Per-group metrics",
        f"Each {weighted}metric per group; support is the count in the metric's denominator "
        "(0 where the value is undefined).",
        table,
        notes,
    )


def _disparity_metrics(opts: AuditOptions) -> list[str]:
    needed = list(opts.metrics)
    for crit in opts.criteria:
        bases = (["false_positive_rate", "false_negative_rate"]
                 if crit == "equalized_odds_difference" else [CRITERIA[crit][0]])
        needed += [b for b in bases if b not in needed]
    return needed


def _disparities_section(ctx: AuditContext) -> Section:
    table = disparities(ctx.counts, by="group", metrics=_disparity_metrics(ctx.options),
                        reference=_core_reference(ctx.options.reference))
    table = _in_attribute_order(_label_reference(table, ctx.options.reference), ctx)
    return Section(
        "disparities",
        "Disparities against the reference",
        f"difference = group − reference, ratio = group / reference; reference: "
        f"{_reference_text(ctx.options.reference)}.",
        table,
    )


def _criteria_section(ctx: AuditContext) -> Section:
    table = fairness_criteria(ctx.counts, by="group", criteria=list(ctx.options.criteria),
                              reference=_core_reference(ctx.options.reference))
    table = _in_attribute_order(_label_reference(table, ctx.options.reference), ctx)
    return Section(
        "criteria",
        "Fairness criteria",
        "The named criteria of the seeds per group, against the reference "
        f"({_reference_text(ctx.options.reference)}): differences are 0 and disparate impact "
        "is 1 at parity; the four-fifths rule flags disparate impact below 0.8.",
        table,
    )


def _between_section(ctx: AuditContext) -> Section:
    table = between_groups(ctx.counts, by="group", metrics=list(ctx.options.metrics))
    table = _in_attribute_order(table, ctx)
    return Section(
        "between_groups",
        "Between groups",
        "For each attribute and metric: max − min and min / max over the groups with a "
        "defined value, and the worst and best group by the metric's direction.",
        table,
    )


def _undefined_section(ctx: AuditContext) -> Section:
    frames: list[pl.DataFrame] = []
    if "metrics" in ctx.sections:
        m = ctx.sections["metrics"].table.filter(pl.col("value").is_null())
        frames.append(m.select(
            "attribute", "group", pl.lit("metrics").alias("section"),
            pl.col("metric").alias("name"),
            pl.col("metric").replace_strict(
                {k: s.undefined_when for k, s in METRICS.items()}, return_dtype=pl.String
            ).alias("reason"),
        ))
    if "criteria" in ctx.sections and "disparities" in ctx.sections:
        frames.append(_criteria_reasons(ctx.sections["criteria"].table,
                                        ctx.sections["disparities"].table))
    schema = {"attribute": pl.String, "group": pl.String, "section": pl.String,
              "name": pl.String, "reason": pl.String}
    table = (pl.concat(frames, how="vertical") if frames else pl.DataFrame(schema=schema))
    table = table.cast(schema)  # type: ignore[arg-type]
    notes = () if table.height else ("Every value is defined for every group.",)
    return Section(
        "undefined",
        "Undefined values",
        "Every null in the metrics and criteria, with the reason: a 0/0 is undefined and "
        "reported, never replaced by 0, 1 or NaN.",
        table,
        notes,
    )


def _criteria_reasons(criteria: pl.DataFrame, disp: pl.DataFrame) -> pl.DataFrame:
    """Why each undefined criterion is undefined, from its base metrics' disparity rows."""
    rows: list[dict[str, Any]] = []
    index = {(r["attribute"], r["group"], r["metric"]): r for r in disp.iter_rows(named=True)}
    for r in criteria.filter(pl.col("value").is_null()).iter_rows(named=True):
        crit = r["criterion"]
        parts = ([("false_positive_rate", "difference"), ("false_negative_rate", "difference")]
                 if crit == "equalized_odds_difference" else [CRITERIA[crit]])
        reasons = []
        for base, how in parts:
            d = index.get((r["attribute"], r["group"], base))
            if d is None:
                continue
            spec = METRICS[base]
            if d["value"] is None:
                reasons.append(f"{base} of the group is undefined: {spec.undefined_when}")
            elif d["reference_value"] is None:
                reasons.append(f"{base} of the reference is undefined: {spec.undefined_when}")
            elif how == "ratio" and d["reference_value"] == 0:
                reasons.append(f"{base} of the reference is 0 (ratio x / 0)")
        rows.append({"attribute": r["attribute"], "group": r["group"], "section": "criteria",
                     "name": crit, "reason": "; ".join(reasons) or "undefined"})
    return pl.DataFrame(rows, schema={"attribute": pl.String, "group": pl.String,
                                      "section": pl.String, "name": pl.String,
                                      "reason": pl.String})


SECTION_BUILDERS: tuple[SectionBuilder, ...] = (
    _groups_section,
    _metrics_section,
    _disparities_section,
    _criteria_section,
    _between_section,
    _undefined_section,
)
"""The core sections, in order. Capabilities beyond the core add builders after these (see
``audit(extra_sections=...)`` and ``docs/report.md``)."""


# ---------------------------------------------------------------------------------------------
# Capabilities beyond the core: bootstrap intervals and ensemble stability
# ---------------------------------------------------------------------------------------------

CI_METHODS: tuple[str, ...] = ("percentile", "basic", "bca")
"""Interval methods of ``audit(intervals=...)`` (those of :mod:`polars_fairmetrics.bootstrap`)."""

STABILITY_METRICS: tuple[str, ...] = (
    "label_stability",
    "jitter",
    "std_probability",
    "aleatoric_uncertainty",
    "overall_uncertainty",
    "epistemic_mutual_information",
)
"""Ensemble metrics of the ``stability`` section (per-group means of per-row values)."""

STABILITY_BINS = 10
"""Bins of the label-stability histogram (``stability_distribution`` section) over [0, 1]."""


@dataclass(frozen=True)
class IntervalOptions:
    """Options of the bootstrap intervals of an audit (``AuditContext.extra["intervals"]``)."""

    n_resamples: int
    ci_level: float = 0.95
    ci_method: str = "percentile"
    seed: int | None = None


def _check_interval_options(intervals: int, ci_level: float, ci_method: str,
                            seed: int | None) -> IntervalOptions:
    if isinstance(intervals, bool) or not isinstance(intervals, int) or intervals < 1:
        raise InvalidOptionError(
            f"intervals must be a positive number of bootstrap resamples, got {intervals!r}")
    if (isinstance(ci_level, bool) or not isinstance(ci_level, (int, float))
            or not 0.0 < float(ci_level) < 1.0):
        raise InvalidOptionError(f"ci_level must be in (0, 1), got {ci_level!r}")
    if ci_method not in CI_METHODS:
        raise InvalidOptionError(
            f"ci_method {ci_method!r} is not one of {', '.join(CI_METHODS)}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise InvalidOptionError(f"seed must be a non-negative integer, got {seed!r}")
    return IntervalOptions(intervals, float(ci_level), ci_method, seed)


def _attribute_reference(reference: str | dict[str, str], attribute: str) -> str:
    return reference if isinstance(reference, str) else reference[attribute]


_ORDER = "_pfm_order"


def _bootstrap_statistic(metrics: list[str], needed: list[str], criteria: list[str],
                         reference: str) -> Callable[[pl.DataFrame], pl.DataFrame]:
    """The statistic of one attribute's replicate count table (long: replicate, kind, group,
    metric, value): the same core functions as the point-estimate sections."""

    def statistic(rep: pl.DataFrame) -> pl.DataFrame:
        rep = rep.drop(_ORDER)
        disp = disparities(rep, by="group", metrics=needed, reference=reference)
        parts = [
            disp.select("replicate", pl.lit(kind).alias("kind"), "group", "metric",
                        pl.col(kind).cast(pl.Float64).alias("value"))
            for kind in ("value", "difference", "ratio")
        ]
        if criteria:
            crit = fairness_criteria(rep, by="group", criteria=criteria, reference=reference)
            parts.append(crit.select("replicate", pl.lit("criterion").alias("kind"), "group",
                                     pl.col("criterion").alias("metric"),
                                     pl.col("value").cast(pl.Float64)))
        between = between_groups(rep, by="group", metrics=metrics)
        for s in ("difference", "ratio"):
            parts.append(between.select(
                "replicate", pl.lit(f"between_{s}").alias("kind"),
                pl.lit(None, dtype=pl.String).alias("group"), "metric",
                pl.col(s).cast(pl.Float64).alias("value")))
        return pl.concat(parts, how="vertical_relaxed")

    return statistic


def _bootstrap_intervals(ctx: AuditContext) -> pl.DataFrame | None:
    """Intervals of every metric, disparity, criterion and between-groups summary, per
    attribute, by the bootstrap module's count engine on the collected count table (exact
    multinomial resampling of each attribute's cells; no second scan). Cached in ``extra``."""
    opts: IntervalOptions | None = ctx.extra.get("intervals")
    if opts is None:
        return None
    cache: dict[str, pl.DataFrame] = ctx.extra["_cache"]
    if "intervals" in cache:
        return cache["intervals"]
    from polars_fairmetrics.bootstrap import bootstrap_counts

    needed = _disparity_metrics(ctx.options)
    frames = []
    progress: Callable[[str], None] | None = ctx.extra.get("progress")
    attributes = list(dict.fromkeys(ctx.counts["attribute"].to_list()))
    for attr in attributes:
        if progress is not None:
            progress(f"bootstrap {attr}: {opts.n_resamples} resamples")
        # the cells in the count table's order (the attribute's own values sorted, nulls last;
        # not the order of their text labels), as bootstrap_metrics(by=attr) draws them
        table = (ctx.counts.filter(pl.col("attribute") == attr).drop("attribute")
                 .with_row_index(_ORDER))
        stat = _bootstrap_statistic(list(ctx.options.metrics), needed,
                                    list(ctx.options.criteria),
                                    _attribute_reference(ctx.options.reference, attr))
        out = bootstrap_counts(table, stat, n_resamples=opts.n_resamples, seed=opts.seed,
                               confidence=opts.ci_level,
                               method=opts.ci_method,  # type: ignore[arg-type]
                               )
        frames.append(out.select(pl.lit(attr).alias("attribute"), "kind", "group", "metric",
                                 "ci_low", "ci_high", "n_defined"))
    result = pl.concat(frames, how="vertical")
    cache["intervals"] = result
    return result


def _interval_note(ctx: AuditContext) -> str:
    opts: IntervalOptions = ctx.extra["intervals"]
    seed = f", seed {opts.seed}" if opts.seed is not None else ", unseeded"
    return (f"[ci_low, ci_high]: {opts.ci_level:.0%} {opts.ci_method} bootstrap intervals, "
            f"{opts.n_resamples} resamples of each attribute's count cells (exact multinomial "
            f"resampling of the rows{seed}), from the resamples where the value is defined; "
            "null when it is defined in none (or BCa cannot give one).")


def _with_intervals(ctx: AuditContext, name: str, kinds: Mapping[str, str],
                    keys: Sequence[str], metric_col: str) -> Section | None:
    """Section ``name`` with the interval columns of ``kinds`` ({kind: column prefix}) joined."""
    boot = _bootstrap_intervals(ctx)
    if boot is None or name not in ctx.sections:
        return None
    section = ctx.sections[name]
    table = section.table.with_row_index("_pfm_order")
    n_boot = ctx.extra["intervals"].n_resamples
    partial = 0
    for kind, prefix in kinds.items():
        chosen = boot.filter(pl.col("kind") == kind)
        partial += chosen.filter(pl.col("n_defined").is_between(1, n_boot - 1)).height
        part = chosen.select(
            "attribute", "group", pl.col("metric").alias(metric_col),
            pl.col("ci_low").alias(f"{prefix}ci_low"), pl.col("ci_high").alias(f"{prefix}ci_high"))
        part = part.drop("group") if "group" not in keys else part
        table = table.join(part, on=list(keys), how="left", nulls_equal=True)
    table = table.sort("_pfm_order").drop("_pfm_order")
    notes = [_interval_note(ctx)]
    if partial:
        notes.append(f"{partial} interval(s) come from fewer than {n_boot} resamples: the value "
                     "was undefined (0/0) in the others.")
    return Section(section.name, section.title, section.description, table,
                   (*section.notes, *notes))


def _metrics_intervals_section(ctx: AuditContext) -> Section | None:
    return _with_intervals(ctx, "metrics", {"value": ""}, ["attribute", "group", "metric"],
                           "metric")


def _disparities_intervals_section(ctx: AuditContext) -> Section | None:
    return _with_intervals(ctx, "disparities",
                           {"value": "", "difference": "difference_", "ratio": "ratio_"},
                           ["attribute", "group", "metric"], "metric")


def _criteria_intervals_section(ctx: AuditContext) -> Section | None:
    return _with_intervals(ctx, "criteria", {"criterion": ""},
                           ["attribute", "group", "criterion"], "criterion")


def _between_intervals_section(ctx: AuditContext) -> Section | None:
    return _with_intervals(ctx, "between_groups",
                           {"between_difference": "difference_", "between_ratio": "ratio_"},
                           ["attribute", "metric"], "metric")


def _group_label(by: Sequence[str], intersectional: bool) -> list[tuple[str, pl.Expr, list[str]]]:
    """(attribute, group label expression, group_by columns) of each audited attribute."""
    if intersectional:
        label = pl.concat_str([pl.col(k).cast(pl.String).fill_null("null") for k in by],
                              separator=" & ")
        return [(" & ".join(by), label, list(by))]
    return [(a, pl.col(a).cast(pl.String), [a]) for a in by]


def _stability_frames(ctx: AuditContext) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """Per-group ensemble means and the label-stability histogram (one collect_all)."""
    models: tuple[str, ...] | None = ctx.extra.get("models")
    if not models:
        return None
    cache: dict[str, Any] = ctx.extra["_cache"]
    if "stability" in cache:
        return cast("tuple[pl.DataFrame, pl.DataFrame]", cache["stability"])
    from polars_fairmetrics.ensemble import ensemble_group_metrics, ensemble_sample_metrics

    progress: Callable[[str], None] | None = ctx.extra.get("progress")
    if progress is not None:
        progress(f"ensemble stability over {len(models)} models")
    opts = ctx.options
    attrs = _group_label(opts.by, opts.intersectional)
    queries: list[pl.LazyFrame] = []
    for attr, label, cols in attrs:
        means = ensemble_group_metrics(ctx.data, models=list(models), by=cols,
                                       metrics=list(STABILITY_METRICS), confusion_metrics=[],
                                       weight=opts.weight)
        queries.append(means.select(pl.lit(attr).alias("attribute"), label.alias("group"),
                                    "metric", "value", "n", "n_null"))
    rows = ensemble_sample_metrics(ctx.data, models=list(models), keep=list(opts.by),
                                   metrics="label_stability")
    b = STABILITY_BINS
    bin_expr = (pl.col("label_stability") * b).floor().clip(0, b - 1).cast(pl.Int64)
    for attr, label, _cols in attrs:
        queries.append(
            rows.filter(pl.col("label_stability").is_not_null())
            .group_by(label.alias("group"), bin_expr.alias("bin"))
            .agg(pl.len().cast(pl.Int64).alias("count"))
            .select(pl.lit(attr).alias("attribute"), "group", "bin", "count"))
    done = pl.collect_all(queries)
    means_table = pl.concat(done[: len(attrs)], how="vertical")
    hist = pl.concat(done[len(attrs):], how="vertical")
    # every bin of every group, zeros included (a histogram shows its empty bins)
    groups = means_table.select("attribute", "group").unique(maintain_order=True)
    grid = groups.join(pl.DataFrame({"bin": list(range(b))}, schema={"bin": pl.Int64}),
                       how="cross")
    hist = (grid.join(hist, on=["attribute", "group", "bin"], how="left", nulls_equal=True)
            .select("attribute", "group", pl.lit("label_stability").alias("metric"),
                    (pl.col("bin") / b).alias("bin_left"), ((pl.col("bin") + 1) / b)
                    .alias("bin_right"), pl.col("count").fill_null(0))
            .with_columns(safe_div(pl.col("count"),
                                   pl.col("count").sum().over("attribute", "group"))
                          .alias("share")))
    cache["stability"] = (means_table, hist)
    return means_table, hist


def _stability_section(ctx: AuditContext) -> Section | None:
    frames = _stability_frames(ctx)
    if frames is None:
        return None
    table = _in_attribute_order(frames[0], ctx)
    models: tuple[str, ...] = ctx.extra["models"]
    notes = []
    n_undef = table["value"].null_count()
    if n_undef:
        notes.append(f"{n_undef} value(s) undefined (e.g. jitter with one model predicting).")
    return Section(
        "stability",
        "Ensemble stability and uncertainty",
        f"Per-group means over the rows of per-row ensemble metrics from {len(models)} models "
        f"({', '.join(models[:3])}{', …' if len(models) > 3 else ''}): label stability "
        "|k − (m − k)| / m (1 = every model agrees), jitter (share of model pairs that "
        "disagree), standard deviation of the probabilities, aleatoric (mean entropy), overall "
        "(entropy of the mean) and epistemic (their difference) uncertainty in bits; n = rows "
        "with a defined value.",
        table,
        tuple(notes),
    )


def _stability_distribution_section(ctx: AuditContext) -> Section | None:
    frames = _stability_frames(ctx)
    if frames is None:
        return None
    return Section(
        "stability_distribution",
        "Label stability distribution",
        f"Rows per group in {STABILITY_BINS} equal bins of per-row label stability over "
        "[0, 1] (bin_left ≤ value < bin_right; 1.0 falls in the last bin) and their share of "
        "the group's rows with a defined value.",
        _in_attribute_order(frames[1], ctx),
    )


CURVE_BINS = 100
"""Default grid of the audit's curves: ``curve_bins`` equal steps over ``score_bounds``."""

DEPLOYMENT_AUDIT_METRICS: tuple[str, ...] = (
    "positive_predictive_value",
    "negative_predictive_value",
    "f1_score",
    "accuracy",
)
"""Metrics of the ``deployment`` section (those the class ratio changes)."""


def _curve_table(ctx: AuditContext) -> pl.DataFrame | None:
    """The grid curve table per attribute and group (``attribute``, ``group``, ``threshold``,
    counts): one scan of the rows for every attribute (the table of all ``by`` columns, then
    sums over the other columns in memory, as for the count table). Cached in ``extra``."""
    bins: int | None = ctx.extra.get("curve_bins")
    opts = ctx.options
    if bins is None or opts.y_score is None:
        return None
    cache: dict[str, Any] = ctx.extra["_cache"]
    if "curves" in cache:
        return cast(pl.DataFrame, cache["curves"])
    from polars_fairmetrics.curves import curve_counts

    progress: Callable[[str], None] | None = ctx.extra.get("progress")
    if progress is not None:
        progress(f"curves on a grid of {bins + 1} thresholds")
    by = list(opts.by)
    inter = curve_counts(ctx.data, y_true=opts.y_true, y_score=opts.y_score, by=by,
                         weight=opts.weight, pos_label=opts.pos_label, neg_label=opts.neg_label,
                         mode="grid", bins=bins, score_bounds=ctx.extra.get("score_bounds")
                         ).collect(engine=ctx.extra.get("engine", "auto"))
    sums = [c for c in count_columns(inter.columns) if c != "threshold"]
    parts = []
    for attr, label, cols in _group_label(by, opts.intersectional):
        parts.append(
            inter.group_by([*cols, "threshold"]).agg(pl.col(sums).sum())
            .sort([*cols, "threshold"], descending=[False] * len(cols) + [True],
                  nulls_last=True)
            .select(pl.lit(attr).alias("attribute"), label.alias("group"), "threshold",
                    *sums))
    table = pl.concat(parts, how="vertical")
    cache["curves"] = table
    return table


def _curve_note(ctx: AuditContext) -> str:
    bins: int = ctx.extra["curve_bins"]
    return (f"From counts on a grid of {bins + 1} thresholds ({bins} equal steps over the score "
            "bounds; curve_bins), the same for every group: the counts at the grid thresholds "
            "are exact, the summaries approximate those of the exact curves (one extra scan "
            "of the rows).")


def _curve_summaries_section(ctx: AuditContext) -> Section | None:
    table = _curve_table(ctx)
    if table is None:
        return None
    from polars_fairmetrics.curves import curve_summaries

    summ = _in_attribute_order(curve_summaries(table, aupr_mode="trapezoid"), ctx)
    notes = [_curve_note(ctx)]
    n_undef = summ.filter(pl.col("roc_auc").is_null()).height
    if n_undef:
        notes.append(f"{n_undef} group(s) have one class only (or no rows): ROC AUC is "
                     "undefined there, and AP / AUPR too without positives.")
    return Section(
        "curve_summaries",
        "Curve summaries",
        "Per group: ROC AUC (trapezoid over the ROC points, from (0, 0) to (1, 1)), average "
        "precision (Σ (R_i − R_{i−1}) P_i) and AUPR (trapezoid rule from (recall 0, precision "
        "1)); null for a group with one class only.",
        summ,
        tuple(notes),
    )


def _curves_section(ctx: AuditContext) -> Section | None:
    table = _curve_table(ctx)
    if table is None:
        return None
    from polars_fairmetrics.curves import pr_curve, roc_curve

    keys = ["attribute", "group", "threshold"]
    roc = roc_curve(table)
    pr = pr_curve(table)
    points = roc.join(pr, on=keys, how="left", nulls_equal=True, maintain_order="left")
    return Section(
        "curves",
        "ROC and precision-recall curves",
        "Per group and grid threshold t (predict positive when score ≥ t): fpr, tpr (ROC) and "
        "precision, recall (PR); threshold +inf is the start of both curves (nothing "
        "predicted positive). Kept small on a grid (curve_bins); use curves.roc_curve / "
        "pr_curve on the rows for the exact curves.",
        _in_attribute_order(points, ctx),
        (_curve_note(ctx),),
    )


def _deployment_section(ctx: AuditContext) -> Section | None:
    rate: float | None = ctx.extra.get("deploy_positive_rate")
    if rate is None:
        return None
    from polars_fairmetrics.deployment import deployment_metrics

    counts = ctx.counts.select(
        "attribute", "group", *[c for c in ctx.counts.columns
                                if c in (*COUNT_COLUMNS, *WEIGHTED_COUNT_COLUMNS)])
    table = deployment_metrics(counts, deploy_positive_rate=rate, by="group",
                               metrics=list(DEPLOYMENT_AUDIT_METRICS))
    table = _in_attribute_order(
        table.select("attribute", "group", "metric", "test_value", "value",
                     *[c for c in table.columns
                       if c not in ("attribute", "group", "metric", "test_value", "value")]),
        ctx)
    factor = table["deploy_factor"].drop_nulls()
    k = f" (k = {float(factor[0]):.4g})" if factor.len() else ""
    return Section(
        "deployment",
        "Deployment class ratio",
        f"Each metric at a deployment positive rate of {rate:g} (value) beside its test value "
        "(test_value): the negatives are scaled by one factor k = (neg/pos in deployment) / "
        "(neg/pos in test), measured over all the audited rows; recall and FPR are unchanged.",
        table,
        (f"Assumption: each class behaves in deployment as in the test data (the "
         f"class-conditional score distributions, hence TPR and FPR, are unchanged); only the "
         f"class ratio changes, by one factor from the overall test ratio{k}, the same for "
         "every group (the groups' base-rate differences are kept).",),
    )


EXTENSION_BUILDERS: tuple[SectionBuilder, ...] = (
    _metrics_intervals_section,
    _disparities_intervals_section,
    _criteria_intervals_section,
    _between_intervals_section,
    _stability_section,
    _stability_distribution_section,
    _curve_summaries_section,
    _curves_section,
    _deployment_section,
)
"""Builders of the capabilities beyond the core (each returns ``None`` when its option is off):
bootstrap intervals (replacing the metric, disparity, criteria and between-groups sections with
``ci_low`` / ``ci_high`` columns added), the ensemble stability sections, the curve sections
(with ``y_score``) and the deployment section (``deploy_positive_rate``)."""



# ---------------------------------------------------------------------------------------------
# audit()
# ---------------------------------------------------------------------------------------------


def _reference_text(reference: str | dict[str, str]) -> str:
    if isinstance(reference, str):
        return {"overall": "the whole population", "rest": "all other rows"}.get(
            reference, reference)
    return ", ".join(f"{k} = {v}" for k, v in reference.items())


def _core_reference(reference: str | dict[str, str]) -> Any:
    """The reference as the core functions take it (a mapping {attribute: group} or a word)."""
    return reference


def _in_attribute_order(table: pl.DataFrame, ctx: AuditContext) -> pl.DataFrame:
    """Rows in the order of the audit's attributes (the core sorts partitions by name)."""
    order = {a: i for i, a in enumerate(dict.fromkeys(ctx.counts["attribute"].to_list()))}
    key = pl.col("attribute").replace_strict(order, return_dtype=pl.Int64)
    return table.sort(key, maintain_order=True)


def _label_reference(table: pl.DataFrame, reference: str | dict[str, str]) -> pl.DataFrame:
    """The ``reference`` column as each attribute's own reference group (not the whole mapping)."""
    if isinstance(reference, str):
        return table
    return table.with_columns(
        pl.col("attribute").replace_strict(reference, return_dtype=pl.String).alias("reference"))


def _as_text(value: Any, dtype: pl.DataType | None) -> str:
    """A reference value as the text its group label has (Polars' cast to String)."""
    if isinstance(value, str):
        return value
    series = pl.Series([value], dtype=dtype) if dtype is not None else pl.Series([value])
    out = series.cast(pl.String)[0]
    return str(out)


def _normalize_reference(
    reference: Reference, attributes: list[str], schema: pl.Schema, intersectional: bool
) -> str | dict[str, str]:
    if isinstance(reference, str) and reference in ("overall", "rest"):
        return reference
    if isinstance(reference, Mapping):
        unknown = [k for k in reference if k not in attributes]
        if unknown:
            raise InvalidOptionError(
                f"reference names attribute(s) {unknown!r}, not among the groups' attributes "
                f"{attributes!r}")
        missing = [a for a in attributes if a not in reference]
        if missing:
            raise InvalidOptionError(
                f"reference gives no group for attribute(s) {missing!r}; name one for each of "
                f"{attributes!r}, or use 'overall' / 'rest'")
        return {a: _as_text(reference[a], schema.get(a)) for a in attributes}
    if intersectional:
        if not isinstance(reference, tuple):
            if len(attributes) == 1:
                reference = (reference,)
            else:
                raise InvalidOptionError(
                    "intersectional groups: pass the reference as a tuple with one value per "
                    "by= column, or 'overall' / 'rest'")
        (attr,) = attributes
        cols = attr.split(" & ")
        if len(reference) != len(cols):
            raise InvalidOptionError(
                f"reference {reference!r} has {len(reference)} values for {len(cols)} columns")
        return {attr: " & ".join(_as_text(v, schema.get(c))
                                 for v, c in zip(reference, cols, strict=True))}
    if len(attributes) != 1:
        raise InvalidOptionError(
            f"several attributes {attributes!r}: pass the reference as a mapping "
            "{attribute: group} (CLI: --reference attr=value, repeated), or 'overall' / 'rest'")
    if isinstance(reference, tuple):
        raise InvalidOptionError(f"reference {reference!r} is a tuple but there is one attribute")
    return {attributes[0]: _as_text(reference, schema.get(attributes[0]))}


def _count_table(lf: pl.LazyFrame, opts: AuditOptions, *, score_bounds: tuple[float, float] | None,
                 engine: Literal["auto", "in-memory", "streaming"]) -> pl.DataFrame:
    """The one scan: counts per attribute and group, collected."""
    kw: dict[str, Any] = {
        "y_true": opts.y_true, "y_pred": opts.y_pred, "y_score": opts.y_score,
        "threshold": opts.threshold, "weight": opts.weight, "pos_label": opts.pos_label,
        "neg_label": opts.neg_label, "score_bounds": score_bounds,
    }
    by = list(opts.by)
    # one scan: the intersectional table of all by columns (small), collected; each attribute's
    # own table is then a sum over the others, in memory (confusion_counts(separately=True)
    # would plan one scan per attribute)
    inter = confusion_counts(lf, by=by, **kw).collect(engine=engine)
    sums = count_columns(inter.columns)
    if opts.intersectional and len(by) > 1:
        label = pl.concat_str([pl.col(k).cast(pl.String).fill_null("null") for k in by],
                              separator=" & ")
        table = inter.select(pl.lit(" & ".join(by)).alias("attribute"), label.alias("group"),
                             pl.all().exclude(by))
    else:
        extra_keys = [c for c in inter.columns if c not in by and c not in sums]  # threshold
        parts = [
            inter.group_by([attr, *extra_keys])
            .agg(pl.col(sums).sum())
            .sort([attr, *extra_keys], nulls_last=True)
            .select(pl.lit(attr).alias("attribute"), pl.col(attr).cast(pl.String).alias("group"),
                    *extra_keys, *sums)
            for attr in by
        ]
        table = pl.concat(parts, how="vertical")
    if "threshold" in table.columns:  # one threshold: recorded in the inputs
        table = table.drop("threshold")
    return table


def audit(
    data: pl.LazyFrame | pl.DataFrame,
    *,
    y_true: str,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | None = None,
    by: ColumnNames,
    weight: str | None = None,
    reference: Reference = "overall",
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    metrics: str | Sequence[str] | None = None,
    criteria: Sequence[str] | None = None,
    intersectional: bool = False,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
    engine: Literal["auto", "in-memory", "streaming"] = "auto",
    source: str | None = None,
    extra_sections: Sequence[SectionBuilder] = (),
    extra: Mapping[str, Any] | None = None,
    intervals: int | None = None,
    ci_level: float = 0.95,
    ci_method: Literal["percentile", "basic", "bca"] = "percentile",
    seed: int | None = None,
    models: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
    curves: bool | None = None,
    curve_bins: int | None = None,
    deploy_positive_rate: float | None = None,
) -> Report:
    r"""Audit a classifier's predictions: per-group metrics, disparities, fairness criteria.

    **This function collects** (it is a report): it scans ``data`` once, for the count table
    (:func:`~polars_fairmetrics.confusion_counts` per attribute), and computes every
    count-based section from that small table. Sections (in order):

    - ``groups``: counted rows :math:`n_g`, null rows, :math:`n_g / \sum_h n_h`, positives;
    - ``metrics``: each metric :math:`m(\text{counts}_g)` per group (with its support);
    - ``disparities``: :math:`m_g - m_{ref}` and :math:`m_g / m_{ref}`;
    - ``criteria``: the named fairness criteria (statistical parity difference, disparate
      impact, equal opportunity, …) per group against the reference;
    - ``between_groups``: :math:`\max_g m_g - \min_g m_g`, :math:`\min_g m_g / \max_g m_g`;
    - ``undefined``: every null value with its reason (a 0/0 is never 0, 1 or NaN).

    Parameters
    ----------
    data
        Rows of predictions (LazyFrame or DataFrame).
    y_true, y_pred, y_score, threshold, weight, pos_label, neg_label, score_bounds
        As in :func:`~polars_fairmetrics.confusion_counts` (one ``threshold`` with ``y_score``).
    by
        Protected attribute column(s). Each attribute is audited on its own (all in the one
        scan); with ``intersectional=True`` their combinations form the groups.
    reference
        ``"overall"`` (default), ``"rest"``, a group value (one attribute), a mapping
        ``{attribute: value}`` (several attributes) or a tuple (``intersectional``).
    metrics
        Metric names or aliases, or ``"all"`` (default: :data:`DEFAULT_AUDIT_METRICS`).
    criteria
        Names of fairness criteria (default: all of them).
    engine
        Polars engine for the one collect (``"streaming"`` for larger-than-memory files).
    source
        A description of the input (e.g. the file path), recorded in the report.
    extra_sections
        Further section builders, run after the core ones (see ``docs/report.md``).
    extra
        Options of those builders, by capability name (``AuditContext.extra``).
    intervals
        Number :math:`B` of bootstrap resamples for confidence intervals (default ``None``: point
        estimates only). Adds ``ci_low`` / ``ci_high`` to ``metrics``, ``disparities``
        (also ``difference_ci_low`` … ``ratio_ci_high``), ``criteria`` and ``between_groups``
        (``difference_ci_*``, ``ratio_ci_*``), from
        :func:`~polars_fairmetrics.bootstrap.bootstrap_counts` on each attribute's part of the
        collected count table: resampling the rows with replacement is exactly a multinomial
        draw :math:`c^* \sim \mathrm{Multinomial}(N, c / N)` on its cells, so no second scan
        (the same draws, and intervals, as :func:`~polars_fairmetrics.bootstrap_metrics` with
        ``by=`` that attribute and the same ``seed``). Not with ``weight`` (weighted sums are not
        resampled from counts: use :func:`~polars_fairmetrics.bootstrap_metrics`).
    ci_level, ci_method, seed
        Confidence level, interval method (``"percentile"``, ``"basic"``, ``"bca"``) and the
        NumPy seed of the resamples (each attribute is resampled with this seed).
    models
        Probability columns of an ensemble's models: adds the ``stability`` section
        (:func:`~polars_fairmetrics.ensemble_group_metrics` per attribute: label stability,
        jitter, uncertainties) and ``stability_distribution`` (a label-stability histogram per
        group). One more scan of ``data`` (all attributes in one ``collect_all``).
    curves
        With ``y_score``: add the ``curve_summaries`` (ROC AUC, average precision, AUPR per
        group, :func:`~polars_fairmetrics.curve_summaries`) and ``curves`` (ROC and PR points per
        group) sections, from a grid curve table (:func:`~polars_fairmetrics.curve_counts` with
        ``mode="grid"``). One more scan of ``data`` (all attributes at once). Default: ``True``
        when ``y_score`` is given.
    curve_bins
        Grid of the curves: ``curve_bins`` equal steps over ``score_bounds`` (default
        :data:`CURVE_BINS` = 100, i.e. 101 thresholds per group) — keeps the report small; the
        summaries are those of the grid curve (exact at the grid's thresholds).
    deploy_positive_rate
        Share of positives expected in deployment, strictly between 0 and 1: adds the
        ``deployment`` section (:func:`~polars_fairmetrics.deployment_metrics` on the collected
        count table, no extra scan): precision, NPV, F1 and accuracy per group at that class
        ratio beside their test values. Assumes each class behaves as in the test data; one
        factor :math:`k = ((1 - \pi) / \pi) / (neg_{test} / pos_{test})` from the overall test
        ratio, the same for every group.
    progress
        Called with a short text before each long step (the CLI shows it on stderr).

    Returns
    -------
    Report

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "a", "b", "b", "b"], "y": [1, 0, 1, 0, 1],
    ...                    "p": [1, 1, 0, 0, 1]})
    >>> report = pfm.audit(df.lazy(), y_true="y", y_pred="p", by="g", reference="b")
    >>> report.section_names
    ['groups', 'metrics', 'disparities', 'criteria', 'between_groups', 'undefined']
    >>> report["criteria"].filter(criterion="disparate_impact")["value"].to_list()
    [3.0, 1.0]
    """
    lf = data.lazy() if isinstance(data, pl.DataFrame) else data
    if not isinstance(lf, pl.LazyFrame):
        raise InvalidOptionError(
            f"expected a polars DataFrame or LazyFrame, got {type(data).__name__}")
    by_cols = as_list(by)
    if not by_cols:
        raise InvalidOptionError("an audit needs at least one by= column (protected attribute)")
    if y_score is not None and threshold is not None and not isinstance(threshold, (int, float)):
        raise InvalidOptionError(
            "audit takes one threshold; curves over many thresholds are a separate section")
    if metrics == "all":
        metric_names = tuple(METRICS)
    elif metrics is None:
        metric_names = DEFAULT_AUDIT_METRICS
    else:
        chosen = [metrics] if isinstance(metrics, str) else list(metrics)
        if not chosen:
            raise InvalidOptionError("metrics= is an empty list")
        metric_names = tuple(dict.fromkeys(resolve_metric(m).name for m in chosen))
    crit_names = tuple(criteria) if criteria is not None else DEFAULT_AUDIT_CRITERIA
    interval_opts = (None if intervals is None
                     else _check_interval_options(intervals, ci_level, ci_method, seed))
    if interval_opts is not None and weight is not None:
        raise InvalidOptionError(
            f"intervals of a weighted audit (weight={weight!r}) cannot come from the count "
            "table (weighted sums are not resampled from counts); use "
            "bootstrap_metrics(..., weight=...) or drop the weight")
    model_cols: tuple[str, ...] | None = None
    if models is not None:
        model_cols = tuple([models] if isinstance(models, str) else models)
        if not model_cols:
            raise InvalidOptionError("models= is an empty list")
    if curves is None:
        curves = y_score is not None
    if curves and y_score is None:
        raise InvalidOptionError("curves=True needs y_score= (the curves are over the scores)")
    if curve_bins is not None and (isinstance(curve_bins, bool) or not isinstance(curve_bins, int)
                                   or curve_bins < 1):
        raise InvalidOptionError(f"curve_bins must be a positive integer, got {curve_bins!r}")
    if curves and curve_bins is None and score_bounds is None:
        raise InvalidOptionError(
            "the audit's curves are on a grid over score_bounds: pass score_bounds=(low, high) "
            "or curves=False")
    if deploy_positive_rate is not None and (
            isinstance(deploy_positive_rate, bool)
            or not isinstance(deploy_positive_rate, (int, float))
            or not 0.0 < float(deploy_positive_rate) < 1.0):
        raise InvalidOptionError(
            f"deploy_positive_rate must be strictly between 0 and 1, got {deploy_positive_rate!r}")
    for c in crit_names:
        if c not in DEFAULT_AUDIT_CRITERIA:
            raise InvalidOptionError(
                f"unknown criterion {c!r}; known: {', '.join(DEFAULT_AUDIT_CRITERIA)}")
    schema = schema_of(lf)
    attributes = [" & ".join(by_cols)] if intersectional and len(by_cols) > 1 else by_cols
    for col in by_cols:  # fail at build time, before normalizing the reference
        if col not in schema:
            confusion_counts(lf, y_true=y_true, y_pred=y_pred, y_score=y_score,
                             threshold=threshold, by=by_cols)
    ref = _normalize_reference(reference, attributes, schema,
                               intersectional and len(by_cols) > 1)
    opts = AuditOptions(
        y_true=y_true, y_pred=y_pred, y_score=y_score,
        threshold=float(threshold) if threshold is not None else None,
        by=tuple(by_cols), intersectional=intersectional and len(by_cols) > 1, weight=weight,
        reference=ref, pos_label=pos_label, neg_label=neg_label, metrics=metric_names,
        criteria=crit_names, source=source,
    )
    if model_cols is not None:
        missing = [m for m in model_cols if m not in schema]
        if missing:
            raise InvalidOptionError(
                f"models= names column(s) {missing!r} absent from the data")
    if progress is not None:
        progress("counting")
    counts = _count_table(lf, opts, score_bounds=score_bounds, engine=engine)
    ctx_extra: dict[str, Any] = {**dict(extra or {}), "_cache": {}}
    if interval_opts is not None:
        ctx_extra["intervals"] = interval_opts
    if model_cols is not None:
        ctx_extra["models"] = model_cols
    if progress is not None:
        ctx_extra["progress"] = progress
    if curves:
        ctx_extra.update({"curve_bins": curve_bins if curve_bins is not None else CURVE_BINS,
                          "score_bounds": score_bounds, "engine": engine})
    if deploy_positive_rate is not None:
        ctx_extra["deploy_positive_rate"] = float(deploy_positive_rate)
    ctx = AuditContext(data=lf, counts=counts, options=opts, extra=ctx_extra)
    for builder in (*SECTION_BUILDERS, *EXTENSION_BUILDERS, *extra_sections):
        section = builder(ctx)
        if section is not None:
            ctx.sections[section.name] = section
    n_counted = int(counts.filter(pl.col("attribute") == attributes[0])["n"].sum())
    n_null = int(counts.filter(pl.col("attribute") == attributes[0])["n_null"].sum())
    inputs: dict[str, Any] = {**opts.to_dict(), "n_rows": n_counted + n_null,
                               "n_counted": n_counted, "n_null": n_null}
    if interval_opts is not None:
        inputs.update({"intervals": interval_opts.n_resamples,
                       "ci_level": interval_opts.ci_level,
                       "ci_method": interval_opts.ci_method, "seed": interval_opts.seed})
    if model_cols is not None:
        inputs["models"] = list(model_cols)
    if curves:
        inputs["curve_bins"] = ctx_extra["curve_bins"]
    if deploy_positive_rate is not None:
        inputs["deploy_positive_rate"] = float(deploy_positive_rate)
    return Report(inputs, list(ctx.sections.values()))


# ---------------------------------------------------------------------------------------------
# Gates: a tiny grammar, parsed without eval
# ---------------------------------------------------------------------------------------------

_GATE = re.compile(
    r"""^\s*
    (?:(?P<abs>abs)\s*\(\s*(?P<aname>[A-Za-z_][A-Za-z0-9_]*)\s*\)|(?P<name>[A-Za-z_][A-Za-z0-9_]*))
    \s*(?P<op><=|>=|==|!=|<|>|ci_excludes)\s*
    (?P<num>[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
    \s*$""",
    re.X,
)
GATE_SYNTAX = (
    "NAME OP NUMBER, abs(NAME) OP NUMBER or NAME ci_excludes NUMBER, with OP one of "
    "< <= > >= == != and NAME a fairness criterion (e.g. disparate_impact), a metric "
    "(e.g. false_positive_rate), or METRIC_difference / METRIC_ratio"
)


@dataclass(frozen=True)
class Gate:
    """A parsed gate condition: the pipeline fails when any group satisfies it."""

    text: str
    name: str
    op: str
    number: float
    absolute: bool = False


@dataclass(frozen=True)
class GateResult:
    """The outcome of a gate: ``failed`` and the groups that satisfied the condition."""

    gate: Gate
    failed: bool
    violations: pl.DataFrame
    n_checked: int
    n_undefined: int

    @property
    def message(self) -> str:
        """One line: the gate, the outcome and the offending groups."""
        if not self.failed:
            text = f"PASS {self.gate.text} ({self.n_checked} value(s) checked"
        else:
            shown = "; ".join(
                f"{r['attribute']}={r['group']}: {_fmt(r['value'])}"
                for r in self.violations.head(5).iter_rows(named=True)
            )
            more = f" (+{self.violations.height - 5} more)" if self.violations.height > 5 else ""
            text = f"FAIL {self.gate.text}: {shown}{more} ({self.n_checked} value(s) checked"
        if self.n_undefined:
            text += f", {self.n_undefined} undefined not checked"
        return text + ")"


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def parse_gate(text: str) -> Gate:
    """Parse a gate condition such as ``"disparate_impact < 0.8"`` (never ``eval``).

    Grammar: ``NAME OP NUMBER``, ``abs(NAME) OP NUMBER`` or ``NAME ci_excludes NUMBER``, with
    ``OP`` one of ``< <= > >= == !=``. ``NAME`` is a fairness criterion, a metric (its
    per-group value), or ``<metric>_difference`` / ``<metric>_ratio`` (its disparity).

    Examples
    --------
    >>> parse_gate("abs(statistical_parity_difference) > 0.1")
    Gate(text='abs(statistical_parity_difference) > 0.1', name='statistical_parity_difference', op='>', number=0.1, absolute=True)
    """  # noqa: E501
    m = _GATE.match(text)
    if m is None:
        raise InvalidOptionError(f"cannot parse gate {text!r}; expected {GATE_SYNTAX}")
    name = m.group("aname") or m.group("name")
    absolute = m.group("abs") is not None
    op = m.group("op")
    if absolute and op == "ci_excludes":
        raise InvalidOptionError(f"gate {text!r}: abs() cannot be combined with ci_excludes")
    number = float(m.group("num"))
    if not math.isfinite(number):
        raise InvalidOptionError(f"gate {text!r}: the number is not finite")
    _gate_source(name, text)  # validates the name
    return Gate(text.strip(), name, op, number, absolute)


def _gate_source(name: str, text: str) -> tuple[str, pl.Expr, str]:
    """(section, row filter, value column) a gate name refers to."""
    if name in DEFAULT_AUDIT_CRITERIA:
        return "criteria", pl.col("criterion") == name, "value"
    for suffix in ("difference", "ratio"):
        if name.endswith("_" + suffix):
            base = name[: -len(suffix) - 1]
            try:
                spec = resolve_metric(base)
            except InvalidOptionError:
                continue
            return "disparities", pl.col("metric") == spec.name, suffix
    try:
        spec = resolve_metric(name)
    except InvalidOptionError:
        raise InvalidOptionError(
            f"gate {text!r}: unknown name {name!r}; expected {GATE_SYNTAX}") from None
    return "metrics", pl.col("metric") == spec.name, "value"


_OPS: dict[str, Callable[[pl.Expr, float], pl.Expr]] = {
    "<": lambda e, x: e < x,
    "<=": lambda e, x: e <= x,
    ">": lambda e, x: e > x,
    ">=": lambda e, x: e >= x,
    "==": lambda e, x: e == x,
    "!=": lambda e, x: e != x,
}


def evaluate_gate(report: Report, gate: Gate) -> GateResult:
    """Evaluate one parsed gate on a report (see :meth:`Report.check`)."""
    section_name, row_filter, column = _gate_source(gate.name, gate.text)
    if section_name not in report:
        raise InvalidOptionError(
            f"gate {gate.text!r} needs the {section_name!r} section, absent from this report")
    section = report.section(section_name)
    rows = section.table.filter(row_filter)
    if rows.height == 0:
        raise InvalidOptionError(
            f"gate {gate.text!r}: {gate.name!r} is not in this report's {section_name} "
            "(add it to the metrics / criteria)")
    if section_name == "disparities" or section_name == "criteria":
        rows = rows.filter(~_is_reference(report))
    if gate.op == "ci_excludes":
        lo, hi = (f"{column}_{c}" if column != "value" else c for c in INTERVAL_COLUMNS)
        if lo not in rows.columns or hi not in rows.columns:
            raise InvalidOptionError(
                f"gate {gate.text!r} needs confidence intervals, and this report has none "
                f"for {section_name} (intervals come from the bootstrap capability)")
        cond = (pl.col(lo) > gate.number) | (pl.col(hi) < gate.number)
        defined = pl.col(lo).is_not_null() & pl.col(hi).is_not_null()
        value = pl.col(column)
    else:
        value = pl.col(column).abs() if gate.absolute else pl.col(column)
        cond = _OPS[gate.op](value, gate.number)
        defined = pl.col(column).is_not_null()
    checked = rows.filter(defined)
    hits = checked.filter(cond).select("attribute", "group", value.alias("value"))
    return GateResult(gate, hits.height > 0, hits, checked.height, rows.height - checked.height)


def _is_reference(report: Report) -> pl.Expr:
    """Rows of the named reference group itself (trivially at parity, not checked)."""
    ref = report.inputs.get("reference")
    if not isinstance(ref, dict):
        return pl.lit(False)
    mask = pl.lit(False)
    for attr, val in ref.items():
        mask = mask | ((pl.col("attribute") == attr) & (pl.col("group") == val))
    return mask
