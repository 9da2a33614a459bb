"""Figures and tables of docs/properties.md (n = 56, the paper's grid).

Usage, from the repository root::

    PYTHONPATH=. python benchmarks/properties_figures.py
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from polars_fairmetrics.plot_properties import (
    plot_histogram_grid,
    plot_perfect_fairness,
    plot_undefined,
)
from polars_fairmetrics.properties import analyze_measure_properties, properties_table

OUT = Path("docs/img")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    a = analyze_measure_properties(56)
    for measure in ("accuracy_equality", "equal_opportunity", "positive_predictive_parity"):
        fig = plot_histogram_grid(a.pmf, measure)
        fig.savefig(OUT / f"properties_hist_{measure}.png", dpi=80)
    plot_perfect_fairness(a.by_ir, a.by_gr).savefig(OUT / "properties_perfect.png", dpi=90)
    plot_undefined(a.by_ir, a.by_gr).savefig(OUT / "properties_undefined.png", dpi=90)
    table = properties_table(a.properties)
    with pl.Config(
        tbl_formatting="MARKDOWN",
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        fmt_str_lengths=300,
        tbl_width_chars=2000,
        tbl_rows=100,
        tbl_cols=20,
    ):
        print(table.drop("rule"))
        print(a.properties.select("property", "metric", "evidence"))
        print(
            a.resolution.pivot(
                on="metric", index=["positives", "protected"], values="distinct_values"
            )
        )


if __name__ == "__main__":
    main()
