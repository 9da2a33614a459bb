r"""Data renderers: JSON (versioned schema, ``docs/report.md``) and one Parquet file per section.

They carry the tidy tables unchanged: typed key columns, exact numbers, ``null`` for undefined
values. In JSON text, non-finite numbers are the strings ``"Infinity"`` / ``"-Infinity"`` /
``"NaN"`` (a NaN group key is a group apart from the null group), and
every character that is not printable (control characters, bidirectional overrides) is written
as a ``\uXXXX`` escape, so the JSON printed on a terminal cannot drive it; parsing gives back the
exact text.

:func:`write_parquet` names each file after its section, made safe: only letters, digits, ``_``
and ``-`` are kept, a name that would be empty, hidden or reserved gets a prefix, and two names
made equal get a suffix, so whatever a section is called (``../x``, ``/etc/passwd``, ``CON``)
its file lands in the folder. The manifest maps every section to its file.
"""

from __future__ import annotations

import json
import math
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from polars_fairmetrics.report.model import SCHEMA_VERSION, Contents
from polars_fairmetrics.report.render_text import generated_by, write_text
from polars_fairmetrics.report.text import parquet_file_names

__all__ = ["parquet_file_names", "render_json", "report_to_dict", "write_parquet"]


def _json_value(v: Any) -> Any:
    if getattr(v, "ndim", None) == 0 and hasattr(v, "item"):
        v = v.item()  # a NumPy scalar (a reference from an array): its Python value, not text
    if isinstance(v, float) and not math.isfinite(v):
        # a NaN group key is a group of its own, not the null group: written "NaN", as
        # float("NaN") reads it back (null would merge it with the null group)
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _json_value(x) for k, x in v.items()}
    if isinstance(v, (date, datetime, time)):
        return v.isoformat()
    if isinstance(v, timedelta):
        return v.total_seconds()
    return str(v)


def _columns(table: pl.DataFrame) -> list[dict[str, str]]:
    return [{"name": n, "dtype": str(d)} for n, d in table.schema.items()]


def report_to_dict(report: Contents, *, rows: bool = True) -> dict[str, Any]:
    """The report as JSON-compatible data.

    Schema (version ``"2"``, documented in ``docs/report.md``)::

        {"schema_version": "2", "generated_by": str, "inputs": {...}, "notes": [str],
         "sections": {name: {"title": str, "description": str, "notes": [str],
                             "keys": [str], "columns": [{"name": str, "dtype": str}],
                             "rows": [{column: value}]}}}

    Examples
    --------
    >>> import polars as pl
    >>> import polars_fairmetrics as pfm
    >>> df = pl.DataFrame({"g": ["a", "b"], "y": [1, 0], "p": [1, 1]})
    >>> d = report_to_dict(pfm.audit(df, y_true="y", y_pred="p", by="g"))
    >>> d["schema_version"], list(d["sections"])[:2], d["sections"]["metrics"]["keys"]
    ('2', ['groups', 'metrics'], ['g'])
    """
    sections: dict[str, Any] = {}
    for name, s in report.sections.items():
        entry: dict[str, Any] = {
            "title": s.title,
            "description": s.description,
            "notes": list(s.notes),
            "keys": list(s.keys),
            "columns": _columns(s.table),
        }
        if rows:
            entry["rows"] = [
                {k: _json_value(v) for k, v in r.items()} for r in s.table.iter_rows(named=True)
            ]
        sections[name] = entry
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_by": generated_by(),
        "inputs": _json_value(report.inputs),
        "notes": report.notes,
        "sections": sections,
    }


def _utf16(c: str) -> str:
    code = ord(c)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _dumps(doc: Any, indent: int | None) -> str:
    """JSON text with every non-printable character escaped (``\\uXXXX``).

    ``json.dumps`` escapes the C0 controls inside strings; a raw newline is then the layout's
    own, and every other non-printable character can only be inside a string.
    """
    text = json.dumps(doc, indent=indent, ensure_ascii=False, allow_nan=False)
    return "".join(c if c.isprintable() or c == "\n" else _utf16(c) for c in text)


def render_json(report: Contents, path: str | Path | None = None, *, indent: int | None = 2) -> str:
    """The report as JSON text (see :func:`report_to_dict`), written to ``path`` when given."""
    text = _dumps(report_to_dict(report), indent)
    write_text(path, text + "\n")
    return text


def write_parquet(report: Contents, directory: str | Path) -> list[Path]:
    """One Parquet file per section and ``manifest.json`` in ``directory``.

    The manifest is the JSON report without the rows, each section naming its ``file``
    (:func:`parquet_file_names`: safe names, always inside ``directory``). Returns the paths
    written.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    root = out.resolve()
    manifest = report_to_dict(report, rows=False)
    files = parquet_file_names(list(report.sections))
    written: list[Path] = []
    for name, s in report.sections.items():
        path = out / files[name]
        if path.resolve().parent != root:  # pragma: no cover - the names above cannot escape
            raise ValueError(f"section {name!r} would be written outside {str(out)!r}")
        s.table.write_parquet(path)
        manifest["sections"][name]["file"] = path.name
        written.append(path)
    mpath = out / "manifest.json"
    mpath.write_text(_dumps(manifest, 2) + "\n", encoding="utf-8")
    written.append(mpath)
    return written
