r"""The findings summary: what a report found, in plain words, shown first by every renderer.

Five kinds of finding, each pointing at the section that holds its numbers:

* **disparity** — the :data:`MAX_DISPARITIES` largest gaps of the ``disparities`` section (by
  ``|difference|``, groups with enough support first), each with its interval when the report
  has intervals and whether that interval *excludes parity* (difference 0, ratio 1): an interval
  that excludes parity means the gap is unlikely to be resampling noise.
* **calibration** — the calibration gaps (expected calibration error, calibration-in-the-large,
  calibration slope against the reference) of the ``calibration`` section whose interval
  excludes 0, largest first (at most :data:`MAX_DISPARITIES`; only with intervals);
* **gate** — every failed gate recorded by :meth:`~polars_fairmetrics.report.Report.check`.
* **small** — groups too small to judge: fewer than :data:`MIN_SUPPORT` rows in some metric's
  denominator (``support``), so their values swing widely from sample to sample.
* **undefined** — how many values are undefined (0/0) and for which groups.

Numbers in the findings use :func:`sig`: three significant digits (``0.214``, ``1.91``,
``4.29e-05`` → ``0.0000429``), the same rule for every number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from polars_fairmetrics.report.model import Contents
from polars_fairmetrics.report.tables import attribute_parts
from polars_fairmetrics.report.text import group_label, parquet_file_names

__all__ = [
    "FINDINGS_TITLE",
    "MAX_DISPARITIES",
    "MIN_SUPPORT",
    "Finding",
    "anchors",
    "findings",
    "sig",
]

FINDINGS_TITLE = "Summary of findings"
"""The heading of the findings summary."""

MIN_SUPPORT = 30
"""A group with fewer rows than this in a metric's denominator (``support``) is *too small to
judge*: its findings are listed apart and its gaps are ranked after the others."""

MAX_DISPARITIES = 5
"""How many of the largest disparities the summary names."""


@dataclass(frozen=True)
class Finding:
    """One line of the findings summary.

    Attributes
    ----------
    kind
        ``"disparity"``, ``"calibration"``, ``"gate"``, ``"small"`` or ``"undefined"``.
    text
        The finding in plain words (visible text: renderers escape it).
    section
        The name of the section holding its numbers (renderers link to it).
    """

    kind: str
    text: str
    section: str


def sig(value: float | None, digits: int = 3) -> str:
    """``value`` with ``digits`` significant digits, never in exponent notation.

    Examples
    --------
    >>> [sig(v) for v in (0.21392, 1.912, 4.29e-05, 0.0, -0.0196, 123.4, None)]
    ['0.214', '1.91', '0.0000429', '0', '-0.0196', '123', 'undefined']
    """
    if value is None:
        return "undefined"
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


def _words(metric: str) -> str:
    return metric.replace("_", " ")


def _label(row: dict[str, Any], keys: Sequence[str]) -> str:
    return group_label({k: row[k] for k in keys})


def _disparity_findings(report: Contents) -> list[Finding]:
    if "disparities" not in report:
        return []
    s = report.section("disparities")
    table = s.table
    need = {"metric", "difference", "ratio", "is_reference", "reference_value", "value"}
    if not need <= set(table.columns):
        return []
    with_ci = {"difference_ci_low", "difference_ci_high"} <= set(table.columns)
    rows: list[tuple[tuple[float, ...], str]] = []
    for _, own, part in attribute_parts(table, s.keys):
        defined = part.filter(~pl.col("is_reference") & pl.col("difference").is_not_null())
        for r in defined.iter_rows(named=True):
            small = r.get("support") is not None and r["support"] < MIN_SUPPORT
            text = (
                f"{_words(str(r['metric'])).capitalize()}: {_label(r, own)} "
                f"{sig(r['value'])} against {sig(r['reference_value'])} for the reference "
                f"({r.get('reference') or 'reference'}), a difference of "
                f"{'+' if r['difference'] > 0 else ''}{sig(r['difference'])}"
            )
            excludes = False
            if (
                with_ci
                and r["difference_ci_low"] is not None
                and r["difference_ci_high"] is not None
            ):
                lo, hi = r["difference_ci_low"], r["difference_ci_high"]
                excludes = lo > 0 or hi < 0
                level = r.get("ci_level")
                name = f"{100 * level:g}% interval" if level is not None else "interval"
                text += f" ({name} {sig(lo)} to {sig(hi)})"
            if r["ratio"] is not None:
                text += f", {sig(r['ratio'])} times the reference"
                lo_r, hi_r = r.get("ratio_ci_low"), r.get("ratio_ci_high")
                if lo_r is not None and hi_r is not None:
                    text += f" (interval {sig(lo_r)} to {sig(hi_r)})"
            if with_ci:
                text += (
                    ". The interval excludes parity: the gap is unlikely to be chance."
                    if excludes
                    else ". The interval includes parity: the gap may be chance."
                )
            else:
                text += ". No interval was computed (audit with intervals to judge it)."
            if small:
                text += f" Few rows ({r['support']}): too small to judge."
            rank = (float(small), float(not excludes) if with_ci else 0.0, -abs(r["difference"]))
            rows.append((rank, text))
    rows.sort(key=lambda t: t[0])
    return [Finding("disparity", t, "disparities") for _, t in rows[:MAX_DISPARITIES]]


def _calibration_findings(report: Contents) -> list[Finding]:
    if "calibration" not in report:
        return []
    s = report.section("calibration")
    table = s.table
    need = {"metric", "value", "reference_value", "difference", "is_reference"}
    need |= {"difference_ci_low", "difference_ci_high"}
    if not need <= set(table.columns):
        return []
    rows: list[tuple[float, str]] = []
    for _, own, part in attribute_parts(table, s.keys):
        gaps = part.filter(
            ~pl.col("is_reference").fill_null(False)
            & ((pl.col("difference_ci_low") > 0) | (pl.col("difference_ci_high") < 0))
        )
        for r in gaps.iter_rows(named=True):
            level = r.get("ci_level")
            name = f"{100 * level:g}% interval" if level is not None else "interval"
            text = (
                f"Calibration gap, {_words(str(r['metric']))}: {_label(r, own)} "
                f"{sig(r['value'])} against {sig(r['reference_value'])} for the reference "
                f"({r.get('reference') or 'reference'}), a difference of "
                f"{'+' if r['difference'] > 0 else ''}{sig(r['difference'])} ({name} "
                f"{sig(r['difference_ci_low'])} to {sig(r['difference_ci_high'])}). The interval "
                "excludes 0: the group's scores are not calibrated like the reference's."
            )
            rows.append((-abs(r["difference"]), text))
    rows.sort(key=lambda t: t[0])
    return [Finding("calibration", t, "calibration") for _, t in rows[:MAX_DISPARITIES]]


def _small_findings(report: Contents) -> list[Finding]:
    name = "metrics" if "metrics" in report else None
    if name is None:
        return []
    s = report.section(name)
    table = s.table
    if "support" not in table.columns:
        return []
    out = []
    for _, own, part in attribute_parts(table, s.keys):
        small = (
            part.filter(pl.col("support") < MIN_SUPPORT)
            .group_by(list(own), maintain_order=True)
            .agg(pl.col("support").min().alias("least"), pl.col("n").first())
        )
        for r in small.iter_rows(named=True):
            out.append(
                Finding(
                    "small",
                    f"{_label(r, own)} is too small to judge: {r['n']} rows, and as few as "
                    f"{r['least']} in a metric's denominator (fewer than {MIN_SUPPORT}); its "
                    "values can swing widely by chance.",
                    "groups" if "groups" in report else name,
                )
            )
    return out


def _undefined_findings(report: Contents) -> list[Finding]:
    if "undefined" not in report:
        return []
    s = report.section("undefined")
    if not s.table.height:
        return []
    labels: dict[str, None] = {}
    for _, own, part in attribute_parts(s.table, s.keys):
        for r in part.iter_rows(named=True):
            labels[_label(r, own)] = None
    shown = list(labels)[:5]
    more = f" and {len(labels) - 5} more" if len(labels) > 5 else ""
    return [
        Finding(
            "undefined",
            f"{s.table.height} value(s) are undefined (0/0, nothing to divide by) for "
            f"{', '.join(shown)}{more}.",
            "undefined",
        )
    ]


def _gate_findings(report: Contents) -> list[Finding]:
    out = []
    for g in getattr(report, "gate_results", ()):
        if g.failed:
            labels = g.labels
            shown = ", ".join(labels[:5]) + (
                f" and {len(labels) - 5} more" if len(labels) > 5 else ""
            )
            section = _gate_section(report, g.gate.name)
            out.append(Finding("gate", f"Gate failed: {g.gate.text.strip()} for {shown}.", section))
    return out


def _gate_section(report: Contents, name: str) -> str:
    for candidate in ("criteria", "metrics", "disparities", "curve_summaries"):
        if candidate in report and name in set(report[candidate]["metric"].cast(pl.String)):
            return candidate
    if name.endswith(("_difference", "_ratio")) and "disparities" in report:
        return "disparities"
    return next(iter(report.sections), "")


def findings(report: Contents) -> list[Finding]:
    """The findings of a report: failed gates, the largest disparities, calibration gaps whose
    interval excludes 0, groups too small to judge, undefined values (in that order).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> p = [1, 0, 1, 0, 1, 1, 1, 1]
    >>> df = pl.DataFrame({"g": ["a"] * 4 + ["b"] * 4, "y": [1, 0] * 4, "p": p})
    >>> r = pfm.audit(df, y_true="y", y_pred="p", by="g", reference="a", metrics=["selection_rate"])
    >>> sorted({f.kind for f in findings(r)})
    ['disparity', 'small', 'undefined']
    >>> print(findings(r)[0].text)  # doctest: +NORMALIZE_WHITESPACE
    False positive rate: g="b" 1.00 against 0 for the reference (g="a"), a difference of +1.00.
    No interval was computed (audit with intervals to judge it). Few rows (2): too small to judge.
    """
    return [
        *_gate_findings(report),
        *_disparity_findings(report),
        *_calibration_findings(report),
        *_small_findings(report),
        *_undefined_findings(report),
    ]


def anchors(report: Contents) -> dict[str, str]:
    """The link target of each section (HTML ``id``, Markdown anchor): its safe file stem.

    Examples
    --------
    >>> from polars_fairmetrics.report.model import Contents
    >>> anchors(Contents({}, []))
    {}
    """

    names = parquet_file_names(list(report.sections))
    return {k: v.removesuffix(".parquet") for k, v in names.items()}


def no_findings_text(report: Contents) -> str:
    """What the summary says when there is nothing to report."""
    return "No disparity, failed gate, small group or undefined value to report."
