"""The fairness audit: one call from a table of predictions to a complete, honest report.

:func:`audit` scans the rows once for a count table and computes every count-based section
from it, each table once: group sizes and the rows left out, per-group metrics, disparities against
the reference, the named fairness criteria, between-groups summaries and the undefined values
with their reasons; with options, bootstrap intervals (no second scan), ensemble stability,
curves and the deployment class ratio. The result is a :class:`Report`: rendered for the
terminal, as Markdown, HTML, JSON or Parquet, and checked by gates (:meth:`Report.check`).

One job per module, dependencies one way:

- :mod:`~.options` — :class:`AuditOptions` (the frozen, checked options);
- :mod:`~.model` — :class:`Section` and the report's contents;
- :mod:`~.text` — visible text, number formats, group labels;
- :mod:`~.tables` — the one scan and every table computed once from it;
- :mod:`~.intervals` — bootstrap intervals of those tables;
- :mod:`~.sections`, :mod:`~.extensions` — the section builders;
- :mod:`~.views` — readable views; :mod:`~.render_text` (terminal, Markdown),
  :mod:`~.render_html`, :mod:`~.render_data` (JSON, Parquet); :mod:`~.plots` (SVG);
- :mod:`~.gates` — the ``--fail-if`` grammar, parsed without ``eval``;
- :mod:`~.document` — :class:`Report` (contents + renderers + gates);
- :mod:`~.orchestration` — :func:`audit`.
"""

from polars_fairmetrics.report.document import Report
from polars_fairmetrics.report.extensions import EXTENSION_BUILDERS
from polars_fairmetrics.report.gates import GATE_SYNTAX, Gate, GateResult, evaluate_gate, parse_gate
from polars_fairmetrics.report.model import SCHEMA_VERSION, Contents, Section
from polars_fairmetrics.report.options import (
    CURVE_BINS,
    DEFAULT_AUDIT_CRITERIA,
    DEFAULT_AUDIT_METRICS,
    DEPLOYMENT_AUDIT_METRICS,
    MAX_CURVE_BINS,
    MAX_RESAMPLES,
    AuditOptions,
)
from polars_fairmetrics.report.orchestration import audit, run_audit
from polars_fairmetrics.report.sections import CORE_BUILDERS, AuditContext, SectionBuilder

__all__ = [
    "CORE_BUILDERS",
    "CURVE_BINS",
    "DEFAULT_AUDIT_CRITERIA",
    "DEFAULT_AUDIT_METRICS",
    "DEPLOYMENT_AUDIT_METRICS",
    "EXTENSION_BUILDERS",
    "GATE_SYNTAX",
    "MAX_CURVE_BINS",
    "MAX_RESAMPLES",
    "SCHEMA_VERSION",
    "AuditContext",
    "AuditOptions",
    "Contents",
    "Gate",
    "GateResult",
    "Report",
    "Section",
    "SectionBuilder",
    "audit",
    "evaluate_gate",
    "parse_gate",
    "run_audit",
]
