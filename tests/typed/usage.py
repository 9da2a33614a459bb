"""User code that mypy --strict must accept (checked by tests/test_typing.py)."""

from __future__ import annotations

import polars as pl

import polars_fairmetrics as pfm


def audit_frame(lf: pl.LazyFrame) -> pl.DataFrame:
    counts: pl.LazyFrame = pfm.fair(lf).confusion_counts(y_true="y", y_pred="p", by="g")
    disp: pl.LazyFrame = pfm.fair(counts).disparities(reference="a", metrics=["fpr", "fnr"])
    rates = lf.group_by("g").agg(pfm.fair(pl.col("p")).false_positive_rate(y_true="y"))
    eod: float | None = pfm.equalized_odds_difference(
        [1, 0, 1], [1, 1, 0], sensitive_features=["a", "b", "a"]
    )
    del eod
    return pl.concat([disp.collect(), rates.collect()], how="diagonal_relaxed")
