"""The :class:`Report`: the contents of an audit with its renderers and gates.

The report model (:mod:`~polars_fairmetrics.report.model`) knows nothing of rendering; this
class adds the renderers (terminal, Markdown, HTML, JSON, Parquet) and :meth:`Report.check`, one
layer above them, so every dependency points one way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from polars_fairmetrics.exceptions import InvalidOptionError
from polars_fairmetrics.report.gates import Gate, GateResult, evaluate_gate, parse_gate
from polars_fairmetrics.report.model import Contents
from polars_fairmetrics.report.render_data import render_json, report_to_dict, write_parquet
from polars_fairmetrics.report.render_html import render_html
from polars_fairmetrics.report.render_text import (
    MIN_TERMINAL_WIDTH,
    render_markdown,
    render_terminal,
)

__all__ = ["Report"]


class Report(Contents):
    """The result of :func:`~polars_fairmetrics.audit`: inputs and an ordered list of sections.

    ``report["metrics"]`` is a section's table; ``str(report)`` the terminal rendering;
    :meth:`to_json`, :meth:`to_markdown`, :meth:`to_html` and :meth:`write_parquet` the other
    renderers. In a notebook the report displays as HTML.
    """

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-compatible data (schema in ``docs/report.md``)."""
        return report_to_dict(self)

    def to_json(self, path: str | Path | None = None, *, indent: int | None = 2) -> str:
        """The report as JSON text (also written to ``path`` when given)."""
        return render_json(self, path, indent=indent)

    def to_markdown(self, path: str | Path | None = None) -> str:
        """The report as Markdown (also written to ``path`` when given)."""
        return render_markdown(self, path)

    def to_html(self, path: str | Path | None = None, *, plots: bool = True) -> str:
        """The report as one self-contained HTML page (also written to ``path`` when given)."""
        return render_html(self, path, plots=plots)

    def write_parquet(self, directory: str | Path) -> list[Path]:
        """Write each section as a Parquet file plus ``manifest.json`` into ``directory``
        (file names made safe from the section names; the manifest maps them)."""
        return write_parquet(self, directory)

    def to_terminal(self, *, width: int | None = None) -> str:
        """The report as plain text tables, for a terminal ``width`` columns wide (default:
        the terminal's width); ``width`` is an integer of at least 60, the narrowest in which
        every line of every table fits."""
        if width is not None and (
            isinstance(width, bool) or not isinstance(width, int) or width < MIN_TERMINAL_WIDTH
        ):
            raise InvalidOptionError(
                f"width must be an integer of at least {MIN_TERMINAL_WIDTH} (or None: the "
                f"terminal's width), got {width!r}"
            )
        return render_terminal(self, width=width)

    def __str__(self) -> str:
        return self.to_terminal()

    def _repr_html_(self) -> str:
        return render_html(self, None, plots=True, fragment=True)

    def check(self, *gates: str | Gate, min_support: int = 0) -> list[GateResult]:
        """Evaluate gate conditions (:func:`~polars_fairmetrics.report.parse_gate`); a gate
        *fails* when any group satisfies its condition. Groups whose value rests on fewer than
        ``min_support`` rows (the metric's denominator) are not judged but counted as too small.
        The results are recorded: the findings summary of every rendering lists the failed gates.

        Examples
        --------
        >>> import polars as pl
        >>> import polars_fairmetrics as pfm
        >>> df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [1, 1, 1, 0]})
        >>> r = pfm.audit(df, y_true="y", y_pred="p", by="g", reference="a")
        >>> [g.failed for g in r.check("disparate_impact < 0.8", "accuracy < 0.4")]
        [True, False]
        """
        results = [
            evaluate_gate(
                self, g if isinstance(g, Gate) else parse_gate(g), min_support=min_support
            )
            for g in gates
        ]
        self.gate_results = [*self.gate_results, *results]  # the findings list the failed ones
        return results
