r"""The report model: a :class:`Section` is a tidy table and what it means; :class:`Contents` is the
inputs of an audit and its ordered sections.

:class:`~polars_fairmetrics.report.Report` (the renderers and gates added to the contents) is
defined one layer up, in :mod:`polars_fairmetrics.report.document`, so the renderers and gates
depend on this module and never the other way round.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from polars_fairmetrics.exceptions import SectionNotFoundError

__all__ = ["SCHEMA_VERSION", "Contents", "Section"]

SCHEMA_VERSION = "2"
"""Version of the report's JSON schema (``docs/report.md``); bumped on incompatible change.

Version 2: typed key columns (one per ``by`` column, and ``attribute`` with several attributes
side by side) instead of the text ``group`` column; ``metric`` names the quantity in every
section (criteria included); the interval columns of ``docs/results.md``."""


@dataclass(frozen=True)
class Section:
    """One part of a report: a tidy table and what it means.

    Attributes
    ----------
    name
        Identifier (JSON key; the Parquet file is named after it, made safe), e.g. ``"metrics"``.
    title
        Heading shown by the renderers.
    description
        One or two sentences: what the table holds and how to read it.
    table
        The tidy result (exact numbers; nulls are undefined values), in the schema of
        ``docs/results.md``: typed key columns, ``metric``, ``value`` …
    notes
        Extra remarks shown under the table (e.g. how many values are undefined).
    keys
        The table's group key columns (the audit's ``by`` columns). The readable views show
        them as one display label per group; an empty tuple: the table is shown as it is.
    """

    name: str
    title: str
    description: str
    table: pl.DataFrame
    notes: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()

    @property
    def has_intervals(self) -> bool:
        """Whether the table carries interval columns (``ci_low`` / ``ci_high`` or those of a
        difference or ratio)."""
        columns = set(self.table.columns)
        return any({f"{p}ci_low", f"{p}ci_high"} <= columns for p in ("", "difference_", "ratio_"))

    def replace(self, table: pl.DataFrame, notes: Sequence[str] = ()) -> Section:
        """The same section with another table and notes added."""
        return Section(
            self.name,
            self.title,
            self.description,
            table,
            (*self.notes, *notes),
            self.keys,
        )


class Contents:
    """The inputs of an audit and its sections, by name, in order."""

    def __init__(self, inputs: Mapping[str, Any], sections: Sequence[Section]) -> None:
        self.inputs: dict[str, Any] = dict(inputs)
        self.sections: dict[str, Section] = {s.name: s for s in sections}
        self.gate_results: list[Any] = []
        """Gate results recorded by ``Report.check`` (the findings summary lists the failed)."""

    def __getitem__(self, name: str) -> pl.DataFrame:
        return self.section(name).table

    def __contains__(self, name: object) -> bool:
        return name in self.sections

    def section(self, name: str) -> Section:
        """The section called ``name`` (:class:`SectionNotFoundError`, also a ``KeyError``,
        naming the sections present)."""
        if name not in self.sections:
            raise SectionNotFoundError(
                f"no section {name!r} in this report; sections: {', '.join(self.sections)}"
            )
        return self.sections[name]

    @property
    def section_names(self) -> list[str]:
        """Names of the sections present, in order."""
        return list(self.sections)

    @property
    def notes(self) -> list[str]:
        """Report-wide remarks (e.g. that no intervals were computed)."""
        if not any(s.has_intervals for s in self.sections.values()):
            return ["Point estimates only: this report has no confidence intervals."]
        return []

    def __repr__(self) -> str:
        return f"{type(self).__name__}(sections={self.section_names!r})"
