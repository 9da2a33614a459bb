r"""``audit()``: options in, one scan, every table once, sections, a :class:`Report` out.

1. the options are gathered into one frozen :class:`~.options.AuditOptions` (checked at once);
2. the rows are scanned once for the count table of the intersection of the ``by`` columns
   (:func:`~.tables.scan_counts`) and the named reference groups are checked against it;
3. every count-based table is computed once from that small table (:func:`~.tables.plan_tables`;
   the comparison table of every compared metric is built once and shared);
4. the section builders turn the tables into sections (core, then the capabilities beyond the
   core, then the caller's own).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from polars_fairmetrics._typing import ColumnNames, Label
from polars_fairmetrics._validate import schema_of
from polars_fairmetrics.counts import confusion_counts
from polars_fairmetrics.disparity import Reference
from polars_fairmetrics.exceptions import InvalidOptionError
from polars_fairmetrics.report.calibration_sections import CALIBRATION_BUILDERS
from polars_fairmetrics.report.document import Report
from polars_fairmetrics.report.extensions import EXTENSION_BUILDERS
from polars_fairmetrics.report.models_section import MODEL_BUILDERS
from polars_fairmetrics.report.options import (
    CALIBRATION_DECIMALS,
    FIELD_DEFAULTS,
    AuditOptions,
    CalibrationBinning,
    Engine,
    IntervalMethod,
)
from polars_fairmetrics.report.sections import CORE_BUILDERS, AuditContext, SectionBuilder
from polars_fairmetrics.report.tables import (
    TableSpec,
    check_references,
    plan_tables,
    roll_up,
    scan_counts,
)

__all__ = ["audit", "run_audit"]


def run_audit(
    data: pl.LazyFrame | pl.DataFrame,
    options: AuditOptions,
    *,
    progress: Callable[[str], None] | None = None,
    extra_sections: Sequence[SectionBuilder] = (),
    extra: Mapping[str, Any] | None = None,
) -> Report:
    """Run an audit of ``data`` with ``options`` (what :func:`audit` does once the options are
    gathered). **Collects**: one scan for the count table; its small tables are computed from
    the collected table."""
    if not isinstance(data, (pl.LazyFrame, pl.DataFrame)):
        raise InvalidOptionError(
            f"expected a polars DataFrame or LazyFrame, got {type(data).__name__}"
        )
    lf = data.lazy()
    schema = schema_of(lf)
    missing_models = [m for m in options.models or () if m not in schema]
    if missing_models:
        raise InvalidOptionError(f"models= names column(s) {missing_models!r} absent from the data")
    missing_preds = [c for c in options.prediction_columns.values() if c not in schema]
    if missing_preds:
        raise InvalidOptionError(
            f"predictions= names column(s) {missing_preds!r} absent from the data"
        )
    if any(c not in schema for c in options.by_columns):  # the counts module's own error
        confusion_counts(
            lf,
            y_true=options.y_true,
            y_pred=options.y_pred,
            y_score=options.y_score,
            threshold=options.threshold,
            by=list(options.by_columns),
        )
    spec = TableSpec.of(options)
    if progress is not None:
        progress("counting")
    inter = scan_counts(lf, options)
    check_references(inter, spec)
    tables = plan_tables(roll_up(inter, spec), spec)  # small: eager, each table once
    counts = tables.pop("counts")
    ctx = AuditContext(
        data=lf,
        options=options,
        spec=spec,
        counts=counts,
        tables=tables,
        extra=dict(extra or {}),
        progress=progress,
    )
    builders = (*CORE_BUILDERS, *EXTENSION_BUILDERS, *CALIBRATION_BUILDERS, *MODEL_BUILDERS)
    for builder in (*builders, *extra_sections):
        section = builder(ctx)
        if section is not None:
            ctx.sections[section.name] = section
    first = counts.filter(pl.col("attribute") == spec.keys[0]) if spec.separate else counts
    n_counted, n_null = int(first["n"].sum()), int(first["n_null"].sum())
    inputs = {
        **options.to_dict(),
        "n_rows": n_counted + n_null,
        "n_counted": n_counted,
        "n_null": n_null,
    }
    return Report(inputs, list(ctx.sections.values()))


def audit(
    data: pl.LazyFrame | pl.DataFrame,
    options: AuditOptions | None = None,
    *,
    y_true: str | None = None,
    by: ColumnNames | None = None,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float | None = None,
    weight: str | None = None,
    reference: Reference = "overall",
    pos_label: Label | None = None,
    neg_label: Label | None = None,
    metrics: str | Sequence[str] | None = None,
    criteria: str | Sequence[str] | None = None,
    intersectional: bool = False,
    score_bounds: tuple[float, float] | None = (0.0, 1.0),
    engine: Engine = "auto",
    source: str | None = None,
    intervals: int | None = None,
    ci_level: float = 0.95,
    ci_method: IntervalMethod = "percentile",
    seed: int = 0,
    models: str | Sequence[str] | None = None,
    curves: bool | None = None,
    curve_bins: int | None = None,
    deploy_positive_rate: float | None = None,
    calibration: bool | None = None,
    calibration_bins: int | None = None,
    calibration_binning: CalibrationBinning = "uniform",
    calibration_decimals: int | None = CALIBRATION_DECIMALS,
    predictions: Sequence[str] | Mapping[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
    extra_sections: Sequence[SectionBuilder] = (),
    extra: Mapping[str, Any] | None = None,
) -> Report:
    r"""Audit a classifier's predictions: per-group metrics, disparities, fairness criteria.

    **This function collects** (it is a report): it scans ``data`` once for the count table
    (:func:`~polars_fairmetrics.confusion_counts` of the ``by`` columns) and computes every
    count-based section from that small table, each table once. Sections (in order):

    - ``groups``: counted rows :math:`n_g`, rows left out for a null (``n_null``),
      :math:`n_g / \sum_h n_h`, positives;
    - ``metrics``: each metric :math:`m(\text{counts}_g)` per group (with its support);
    - ``disparities``: :math:`m_g - m_{ref}` and :math:`m_g / m_{ref}`;
    - ``criteria``: the named fairness criteria (statistical parity difference, disparate
      impact, equal opportunity, …) per group against the reference;
    - ``between_groups``: :math:`\max_g m_g - \min_g m_g`, :math:`\min_g m_g / \max_g m_g`;
    - ``undefined``: every null value with its reason (a 0/0 is never 0, 1 or NaN).

    Every table follows ``docs/results.md``: the group keys are the ``by`` columns, typed as in
    the input (with several attributes side by side an ``attribute`` column says which applies;
    the other keys are null), ``metric`` names the quantity, ``n`` / ``n_null`` the rows counted
    and left out.

    Parameters
    ----------
    data
        Rows of predictions (LazyFrame or DataFrame).
    options
        All the options as one :class:`~polars_fairmetrics.report.AuditOptions` (then pass no
        other option); or pass them as the keywords below.
    y_true, y_pred, y_score, threshold, weight, pos_label, neg_label, score_bounds
        As in :func:`~polars_fairmetrics.confusion_counts` (one ``threshold`` with ``y_score``).
    by
        Protected attribute column(s). Each attribute is audited on its own (all from the one
        scan); with ``intersectional=True`` their combinations form the groups.
    reference
        ``"overall"`` (default), ``"rest"``, a group value (one attribute), a mapping
        ``{attribute: value}`` (several attributes), or a tuple / mapping ``{column: value}``
        (intersectional). Values are typed as the column (``2``, ``True``, ``"a"``).
    metrics
        Metric names or aliases, or ``"all"`` (default:
        :data:`~polars_fairmetrics.report.DEFAULT_AUDIT_METRICS`).
    criteria
        Names of fairness criteria (default: all of them).
    engine
        Polars engine of the scans (``"streaming"`` for larger-than-memory files).
    source
        A description of the input (e.g. the file path), recorded in the report.
    intervals
        Number :math:`B` of bootstrap resamples for confidence intervals (default ``None``:
        point estimates only). Adds the interval columns of ``docs/results.md`` to
        ``metrics``, ``disparities``, ``criteria`` and ``between_groups``, from resamples of the
        count table (no second scan).
    ci_level, ci_method, seed
        Confidence level, ``"percentile"`` / ``"basic"`` / ``"bca"``, and the random seed of
        the resamples (default 0: a report is reproducible; recorded in its inputs).
    models
        Probability columns of an ensemble's models: adds the ``stability`` and
        ``stability_distribution`` sections (one more scan).
    curves, curve_bins
        With ``y_score``: the ``curve_summaries`` and ``curves`` sections on a grid of
        ``curve_bins`` steps over ``score_bounds`` (default 100; one more scan). Default:
        on with scores.
    deploy_positive_rate
        Share of positives expected in deployment, strictly between 0 and 1: adds the
        ``deployment`` section (precision, NPV, F1, accuracy at that class ratio; no extra
        scan).
    calibration, calibration_bins, calibration_binning, calibration_decimals
        With probability scores (``y_score`` and ``score_bounds=(0, 1)``): the
        ``calibration`` section (per-group expected calibration error, calibration-in-the-large
        and calibration slope, their differences and ratios against the reference, with
        intervals when ``intervals`` is given) and the ``reliability`` section (per-group
        reliability curves and their plot), from one more scan into score cells
        (:func:`~polars_fairmetrics.score_cells`, scores rounded to ``calibration_decimals``
        places, default 4; ``None``: exact). ``calibration_bins`` bins (default 10),
        ``"uniform"`` (equal width) or ``"quantile"`` (equal counts per group). Default: on
        with probability scores; ``calibration=False`` turns it off.
    predictions
        Prediction columns of several models (or ``{model name: column}``) to compare side by
        side: adds the ``models`` section (:func:`~polars_fairmetrics.compare_models`: each
        model's disparities, and each model's minus the baseline's — ``y_pred`` when it is one
        of them, else the first — with paired intervals when ``intervals=`` is given; one more
        scan per attribute).
    progress
        Called with a short text before each long step (the CLI shows it on stderr).
    extra_sections, extra
        Further section builders (``Callable[[AuditContext], Section | None]``), run after the
        others, and their options (``ctx.extra``).

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
    >>> report["criteria"].filter(metric="disparate_impact")["value"].to_list()
    [3.0, 1.0]
    """
    keywords: dict[str, Any] = {
        "y_pred": y_pred,
        "y_score": y_score,
        "threshold": threshold,
        "weight": weight,
        "reference": reference,
        "pos_label": pos_label,
        "neg_label": neg_label,
        "metrics": metrics,
        "criteria": criteria,
        "intersectional": intersectional,
        "score_bounds": score_bounds,
        "engine": engine,
        "source": source,
        "intervals": intervals,
        "ci_level": ci_level,
        "ci_method": ci_method,
        "seed": seed,
        "models": models,
        "curves": curves,
        "curve_bins": curve_bins,
        "deploy_positive_rate": deploy_positive_rate,
        "calibration": calibration,
        "calibration_bins": calibration_bins,
        "calibration_binning": calibration_binning,
        "calibration_decimals": calibration_decimals,
        "predictions": predictions,
    }
    if options is not None:
        given = [k for k, v in keywords.items() if v != FIELD_DEFAULTS[k]]
        given += [k for k, v in (("y_true", y_true), ("by", by)) if v is not None]
        if not isinstance(options, AuditOptions):
            raise InvalidOptionError(
                f"options must be an AuditOptions, got {type(options).__name__}"
            )
        if given:
            raise InvalidOptionError(
                f"pass the options as AuditOptions or as keywords, not both (given: "
                f"{', '.join(given)}); use dataclasses.replace(options, ...) to change some"
            )
        opts = options
    else:
        if y_true is None or by is None:
            raise InvalidOptionError(
                "audit needs y_true= (the true-label column) and by= (the protected "
                "attribute columns), or options=AuditOptions(...)"
            )
        opts = AuditOptions(y_true=y_true, by=by, **keywords)
    return run_audit(data, opts, progress=progress, extra_sections=extra_sections, extra=extra)
