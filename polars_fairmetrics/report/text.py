r"""Text that is safe to show: visible control characters, number formats, group labels.

Everything a renderer shows passes through :func:`visible` first
(:func:`polars_fairmetrics._text.visible`): a character Python does not consider printable
(control characters such as the ANSI escape ``\x1b``, bidirectional overrides, zero-width and
format characters, line separators) is written as its escape (``\x1b``, ``\u202e``), so no text
from the data can move the cursor, recolour a terminal, reorder a line or hide part of a label.
The format-specific escaping (HTML entities, Markdown) is applied by each renderer on top.

:func:`group_label` is the display label of a group (``race="Caucasian"``, ``k=null``): the
results module's :func:`~polars_fairmetrics.results.display_label` (quoted text, ``null`` for a
missing value) made visible.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime, time, timedelta
from typing import Any

from polars_fairmetrics._text import visible
from polars_fairmetrics.results import display_label

__all__ = ["UNDEFINED", "fmt", "group_label", "visible"]

UNDEFINED = "—"
"""How an undefined (null) value is shown in the readable views."""


def group_label(keys: Mapping[str, Any]) -> str:
    """The display label of a group, safe to show (see :func:`visible`).

    Examples
    --------
    >>> print(group_label({"g": "a\\x1bb", "h": None}))
    g="a\\x1bb", h=null
    """
    return visible(display_label(keys))


def fmt(value: Any) -> str:
    """A value as readable text: 4 decimals for floats, the undefined mark for null.

    One rule for every float, never an exponent: 4 decimals (``0.2145``), and a value too small
    to show at 4 decimals (``0 < |x| < 0.0001``) with 3 significant digits (``0.0000429``, not
    ``4.29e-05``), so no value is shown as zero that is not.

    Examples
    --------
    >>> [fmt(v) for v in (0.5, None, 3, True, float("inf"), 1e-7, -4.29e-05)]
    ['0.5000', '—', '3', 'true', 'inf', '0.000000100', '-0.0000429']
    """
    if value is None:
        return UNDEFINED
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value == 0.0:
            return "0.0000"  # also -0.0: a sign on zero means nothing to a reader
        if abs(value) < 1e-4:
            decimals = 2 - math.floor(math.log10(abs(value)))
            return f"{value:.{decimals}f}"
        return f"{value:.4f}"
    if isinstance(value, Mapping):  # a struct of key columns (worst_group, best_group)
        return group_label(value)
    if isinstance(value, (str, int, date, datetime, time, timedelta)):
        return visible(str(value))
    if isinstance(value, Sequence):
        return visible("[" + ", ".join(fmt(v) for v in value) + "]")
    return visible(str(value))


_RESERVED_FILE_NAMES = {
    "con",
    "prn",
    "aux",
    "nul",
    *(f"com{i}" for i in range(1, 10)),
    *(f"lpt{i}" for i in range(1, 10)),
    "manifest",
}


def parquet_file_names(names: list[str]) -> dict[str, str]:
    """A safe, distinct file name (``<stem>.parquet``) for each section name.

    Examples
    --------
    >>> parquet_file_names(["metrics", "../x", "a/b", "", "CON", "metrics!"])
    {'metrics': 'metrics.parquet', '../x': 'x.parquet', 'a/b': 'a_b.parquet', '': 'section.parquet', 'CON': 'section_CON.parquet', 'metrics!': 'metrics_2.parquet'}
    """  # noqa: E501
    out: dict[str, str] = {}
    used: set[str] = set()
    for name in names:
        stem = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_-")[:100]
        if not stem:
            stem = "section"
        elif stem.lower() in _RESERVED_FILE_NAMES:
            stem = f"section_{stem}"
        candidate, i = stem, 1
        while candidate.lower() in used:
            i += 1
            candidate = f"{stem}_{i}"
        used.add(candidate.lower())
        out[name] = f"{candidate}.parquet"
    return out
