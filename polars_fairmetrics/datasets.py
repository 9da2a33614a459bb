"""Real data shipped with the package (see ``polars_fairmetrics/data/README.md`` for sources).

``load_*`` return a DataFrame (what a notebook shows as a table); ``scan_*`` return the same
data as a LazyFrame (nothing is read until collected), the form to use inside lazy queries.
"""

from __future__ import annotations

from importlib import resources

import polars as pl

__all__ = [
    "ADULT_MODELS",
    "data_path",
    "load_adult",
    "load_compas",
    "scan_adult",
    "scan_compas",
]

ADULT_MODELS: tuple[str, ...] = tuple(f"p{i:02d}" for i in range(15))
"""The probability columns of the 15 models in :func:`load_adult`."""


def data_path(name: str) -> str:
    """Filesystem path of an embedded data file, e.g. ``"compas_two_years.parquet"``."""
    return str(resources.files("polars_fairmetrics") / "data" / name)


def scan_compas() -> pl.LazyFrame:
    """The COMPAS two-year recidivism data (ProPublica, 2016) as a LazyFrame, 7,214 rows.

    Columns include ``race``, ``sex``, ``age_cat``, ``decile_score`` (1–10, the tool's risk score),
    ``score_text`` and the outcome ``two_year_recid`` (1 = re-offended within two years).

    Examples
    --------
    >>> scan_compas().select(pl.len()).collect().item()
    7214
    """
    return pl.scan_parquet(data_path("compas_two_years.parquet"))


def load_compas() -> pl.DataFrame:
    """The COMPAS two-year recidivism data as a DataFrame (:func:`scan_compas` for a LazyFrame).

    Examples
    --------
    >>> load_compas().height
    7214
    """
    return scan_compas().collect()


def scan_adult() -> pl.LazyFrame:
    """Test-set predictions of a 15-model ensemble trained on UCI Adult, as a LazyFrame.

    16,281 rows (the Adult test split): ``row_id``, ``sex``, ``race``, the label
    ``high_income`` (1 = income above 50K) and the models' probabilities of the positive class
    ``p00`` … ``p14`` (:data:`ADULT_MODELS`; gradient-boosted trees on bootstrap samples, see
    ``scripts/train_adult_ensemble.py``). UCI Adult: Becker & Kohavi (1996), CC BY 4.0.

    Examples
    --------
    >>> scan_adult().select(pl.len()).collect().item()
    16281
    """
    return pl.scan_parquet(data_path("adult_ensemble.parquet"))


def load_adult() -> pl.DataFrame:
    """The Adult ensemble predictions as a DataFrame (:func:`scan_adult` for a LazyFrame).

    Examples
    --------
    >>> df = load_adult()
    >>> df.height, df.columns[:4]
    (16281, ['row_id', 'sex', 'race', 'high_income'])
    """
    return scan_adult().collect()
