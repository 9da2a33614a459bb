"""The ``models`` section: several models side by side (``audit(predictions=[...])``).

Each model's disparities against the audit's reference, and each model's disparity minus the
baseline model's (``y_pred`` when it is one of the compared columns, else the first), from
:func:`~polars_fairmetrics.compare_models`: one joint count table per attribute (one more scan
each), paired bootstrap intervals of the model differences with ``intervals=``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from polars_fairmetrics.report.model import Section
from polars_fairmetrics.report.sections import AuditContext, SectionBuilder, reference_text

__all__ = ["MODEL_BUILDERS", "baseline_of"]


def baseline_of(columns: Mapping[str, str], y_pred: str | None) -> str:
    """The baseline model: the one whose column is the audited ``y_pred``, else the first."""
    for name, column in columns.items():
        if column == y_pred:
            return name
    return next(iter(columns))


def _attribute_reference(reference: Any, attribute: str, separate: bool) -> Any:
    if not separate or not isinstance(reference, Mapping):
        return reference
    return reference.get(attribute, "overall")


def _models(ctx: AuditContext) -> Section | None:
    opts = ctx.options
    columns = opts.prediction_columns
    if not columns:
        return None
    from polars_fairmetrics.models import compare_models

    if ctx.progress is not None:
        ctx.progress("comparing models")
    baseline = baseline_of(columns, opts.y_pred)
    keys = list(ctx.spec.keys)
    groups = [[k] for k in keys] if ctx.spec.separate else [keys]
    frames = []
    for by in groups:
        reference = _attribute_reference(opts.reference, by[0], ctx.spec.separate)
        out = compare_models(
            ctx.data,
            y_true=opts.y_true,
            predictions=columns,
            by=by,
            weight=opts.weight,
            pos_label=opts.pos_label,
            neg_label=opts.neg_label,
            metrics=list(opts.metric_names),
            reference=reference,
            baseline_model=baseline,
            intervals=opts.intervals,
            ci_level=float(opts.ci_level),
            ci_method=opts.ci_method,
            seed=opts.seed,
        ).collect(engine=opts.engine)
        if ctx.spec.separate:
            out = out.with_columns(pl.lit(by[0], dtype=pl.String).alias("attribute"))
        frames.append(out)
    table = pl.concat(frames, how="diagonal_relaxed")
    if ctx.spec.separate:
        lead = ["attribute", *keys]
        table = table.select(*lead, *[c for c in table.columns if c not in lead])
    names = list(columns)
    notes = [
        f"Baseline model: {baseline!r}; model_difference = the model's difference minus the "
        "baseline's (same group and metric).",
        "Rows with a null label, weight or prediction of any model are left out of every model "
        "(n_null), so the models are compared on the same rows.",
    ]
    if opts.intervals is not None:
        notes.append(
            f"Paired intervals ({opts.ci_method}, {float(opts.ci_level):.0%}, "
            f"{opts.intervals} resamples): every resample draws the same rows for all models, "
            "so the interval of model_difference accounts for their correlation."
        )
    n_undef = table["value"].null_count()
    if n_undef:
        notes.append(f"{n_undef} value(s) undefined (a 0/0, e.g. a model with no positive).")
    return Section(
        "models",
        "Models side by side",
        f"Each of {len(names)} models ({', '.join(names[:4])}{', …' if len(names) > 4 else ''}) "
        f"per group and metric: value, difference and ratio against "
        f"{reference_text(opts.reference)}, and model_difference: the model's difference "
        f"minus the baseline model's ({baseline}).",
        table,
        tuple(notes),
        ctx.spec.keys,
    )


MODEL_BUILDERS: tuple[SectionBuilder, ...] = (_models,)
"""Builder of the ``models`` section (``None`` without ``predictions=``)."""
