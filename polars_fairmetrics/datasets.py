"""Real data shipped with the package (see ``polars_fairmetrics/data/README.md`` for sources)."""

from __future__ import annotations

from importlib import resources

import polars as pl

__all__ = ["data_path", "load_compas"]


def data_path(name: str) -> str:
    """Filesystem path of an embedded data file, e.g. ``"compas_two_years.parquet"``."""
    return str(resources.files("polars_fairmetrics") / "data" / name)


def load_compas() -> pl.LazyFrame:
    """The COMPAS two-year recidivism data (ProPublica, 2016) as a LazyFrame, 7,214 rows.

    Columns include ``race``, ``sex``, ``age_cat``, ``decile_score`` (1–10, the tool's risk score),
    ``score_text`` and the outcome ``two_year_recid`` (1 = re-offended within two years).

    Examples
    --------
    >>> load_compas().select(pl.len()).collect().item()
    7214
    """
    return pl.scan_parquet(data_path("compas_two_years.parquet"))
