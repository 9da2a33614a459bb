"""Gates: conditions a report must not meet (the CLI's ``--fail-if``), parsed without ``eval``.

Grammar: ``NAME OP NUMBER``, ``abs(NAME) OP NUMBER`` or ``NAME ci_excludes NUMBER``, with ``OP``
one of ``< <= > >= == !=``. ``NAME`` is a fairness criterion (its per-group value in the
``criteria`` section), a metric or alias (its per-group value in ``metrics``),
``<metric>_difference`` / ``<metric>_ratio`` (its comparison in ``disparities``) or a curve
summary (``roc_auc``, ``average_precision``, ``aupr`` in ``curve_summaries``). A gate **fails**
when any group satisfies the condition; the named reference group itself is not checked (it is
at parity by construction) and undefined values are not checked (they are counted).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from polars_fairmetrics.disparity import CRITERIA
from polars_fairmetrics.exceptions import InvalidOptionError
from polars_fairmetrics.metrics import resolve_metric
from polars_fairmetrics.report.model import Contents
from polars_fairmetrics.report.tables import attribute_parts
from polars_fairmetrics.report.text import fmt, group_label, visible

__all__ = ["GATE_SYNTAX", "Gate", "GateResult", "evaluate_gate", "parse_gate"]

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
    "(e.g. false_positive_rate), METRIC_difference / METRIC_ratio, or a curve summary "
    "(roc_auc, average_precision, aupr)"
)
_CURVE_SUMMARIES = ("roc_auc", "average_precision", "aupr")


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
    """The outcome of a gate: ``failed`` and the groups that satisfied the condition.

    ``violations`` has [``attribute``], the key columns and ``value``.
    """

    gate: Gate
    failed: bool
    violations: pl.DataFrame
    keys: tuple[str, ...]
    n_checked: int
    n_undefined: int
    n_too_small: int = 0
    min_support: int = 0

    @property
    def labels(self) -> list[str]:
        """The display label of each violating group, in order."""
        out = []
        for _, own, part in attribute_parts(self.violations, self.keys):
            out += [group_label({k: r[k] for k in own}) for r in part.iter_rows(named=True)]
        return out

    @property
    def message(self) -> str:
        """One line: the gate, the outcome and the offending groups (text made visible)."""
        gate = visible(self.gate.text)
        if not self.failed:
            text = f"PASS {gate} ({self.n_checked} value(s) checked"
        else:
            values = self.violations["value"].to_list()
            shown = "; ".join(
                f"{label}: {fmt(v)}" for label, v in list(zip(self.labels, values, strict=True))[:5]
            )
            more = f" (+{self.violations.height - 5} more)" if self.violations.height > 5 else ""
            text = f"FAIL {gate}: {shown}{more} ({self.n_checked} value(s) checked"
        if self.n_undefined:
            text += f", {self.n_undefined} undefined not checked"
        if self.n_too_small:
            text += f", {self.n_too_small} with support below {self.min_support} too small to judge"
        return text + ")"


def parse_gate(text: str) -> Gate:
    """Parse a gate condition such as ``"disparate_impact < 0.8"`` (never ``eval``).

    Examples
    --------
    >>> parse_gate("abs(statistical_parity_difference) > 0.1")
    Gate(text='abs(statistical_parity_difference) > 0.1', name='statistical_parity_difference', op='>', number=0.1, absolute=True)
    """  # noqa: E501
    if not isinstance(text, str):
        raise InvalidOptionError(f"a gate is text, got {text!r}")
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


def _gate_source(name: str, text: str) -> tuple[str, str, str]:
    """(section, metric name, value column) a gate name refers to."""
    if name in CRITERIA:
        return "criteria", name, "value"
    if name in _CURVE_SUMMARIES:
        return "curve_summaries", name, "value"
    for suffix in ("difference", "ratio"):
        if name.endswith("_" + suffix):
            try:
                spec = resolve_metric(name[: -len(suffix) - 1])
            except InvalidOptionError:
                continue
            return "disparities", spec.name, suffix
    try:
        spec = resolve_metric(name)
    except InvalidOptionError:
        raise InvalidOptionError(
            f"gate {text!r}: unknown name {name!r}; expected {GATE_SYNTAX}"
        ) from None
    return "metrics", spec.name, "value"


_OPS: dict[str, Callable[[pl.Expr, float], pl.Expr]] = {
    "<": lambda e, x: e < x,
    "<=": lambda e, x: e <= x,
    ">": lambda e, x: e > x,
    ">=": lambda e, x: e >= x,
    "==": lambda e, x: e == x,
    "!=": lambda e, x: e != x,
}


def evaluate_gate(report: Contents, gate: Gate, *, min_support: int = 0) -> GateResult:
    """Evaluate one parsed gate on a report (see :meth:`Report.check`).

    Values whose ``support`` (the count in the metric's denominator; for a criterion the smallest
    of its metrics') is below ``min_support`` are not judged: they are counted as too small, so
    an 18-row group cannot fail a pipeline on its own noise.
    """
    if isinstance(min_support, bool) or not isinstance(min_support, int) or min_support < 0:
        raise InvalidOptionError(f"min_support must be a non-negative integer, got {min_support!r}")
    section_name, metric, column = _gate_source(gate.name, gate.text)
    if section_name not in report:
        raise InvalidOptionError(
            f"gate {gate.text!r} needs the {section_name!r} section, absent from this report"
        )
    section = report.section(section_name)
    rows = section.table.filter(pl.col("metric") == metric)
    if rows.height == 0:
        raise InvalidOptionError(
            f"gate {gate.text!r}: {gate.name!r} is not in this report's {section_name} "
            "(add it to the metrics / criteria)"
        )
    if "is_reference" in rows.columns:
        rows = rows.filter(~pl.col("is_reference").fill_null(False))
    if gate.op == "ci_excludes":
        prefix = "" if column == "value" else f"{column}_"
        lo, hi = f"{prefix}ci_low", f"{prefix}ci_high"
        if lo not in rows.columns or hi not in rows.columns:
            raise InvalidOptionError(
                f"gate {gate.text!r} needs confidence intervals, and this report has none "
                f"for {section_name} (audit(..., intervals=B); CLI --intervals N)"
            )
        cond = (pl.col(lo) > gate.number) | (pl.col(hi) < gate.number)
        defined = pl.col(lo).is_not_null() & pl.col(hi).is_not_null()
        value = pl.col(column)
    else:
        value = pl.col(column).abs() if gate.absolute else pl.col(column)
        cond = _OPS[gate.op](value, gate.number)
        defined = pl.col(column).is_not_null()
    n_small = 0
    if min_support and "support" in rows.columns:
        small = pl.col("support").fill_null(0) < min_support
        n_small = rows.filter(small).height
        rows = rows.filter(~small)
    checked = rows.filter(defined)
    lead = [c for c in ("attribute", *section.keys) if c in rows.columns]
    hits = checked.filter(cond).select(*lead, value.alias("value"))
    return GateResult(
        gate,
        hits.height > 0,
        hits,
        tuple(k for k in section.keys if k in rows.columns),
        checked.height,
        rows.height - checked.height,
        n_small,
        min_support,
    )
