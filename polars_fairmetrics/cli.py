"""Command-line interface: ``polars-fairmetrics`` (also ``python -m polars_fairmetrics``).

Errors from user input print one line on stderr and exit with status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import polars as pl

from polars_fairmetrics.datasets import load_compas
from polars_fairmetrics.disparity import disparities, fairness_criteria
from polars_fairmetrics.exceptions import FairMetricsError
from polars_fairmetrics.metrics import group_metrics

DEMO_METRICS = (
    "selection_rate",
    "base_rate",
    "accuracy",
    "true_positive_rate",
    "false_positive_rate",
    "positive_predictive_value",
)


def _demo(args: argparse.Namespace) -> int:
    """Audit the COMPAS decile score (high risk = decile ≥ threshold) by race and by sex."""
    lf = load_compas().with_columns(
        (pl.col("decile_score") >= args.threshold).alias("high_risk")
    )
    with pl.Config(tbl_rows=60, tbl_cols=12, tbl_width_chars=120, float_precision=3,
                   tbl_hide_dataframe_shape=True):
        print(f"COMPAS two-year recidivism (ProPublica, 2016): prediction = decile_score >= "
              f"{args.threshold}\n")
        for attr, ref in (("race", "Caucasian"), ("sex", "Male")):
            metrics = group_metrics(lf, by=attr, metrics=list(DEMO_METRICS), wide=True,
                                    y_true="two_year_recid", y_pred="high_risk")
            print(f"Per-group metrics by {attr}:")
            print(metrics.select(attr, "n", *DEMO_METRICS).collect())
            crit = fairness_criteria(
                lf, by=attr, reference=ref,
                criteria=["statistical_parity_difference", "disparate_impact",
                          "equal_opportunity_difference", "predictive_equality_difference",
                          "equalized_odds_difference", "positive_predictive_parity_difference"],
                y_true="two_year_recid", y_pred="high_risk",
            ).collect()
            print(f"\nFairness criteria by {attr} (reference: {ref}):")
            print(crit.pivot("criterion", index=attr, values="value"))
            print()
        fpr_q = disparities(lf, by="race", metrics="false_positive_rate", reference="Caucasian",
                          y_true="two_year_recid", y_pred="high_risk")
        fpr = fpr_q.filter(pl.col("race") == "African-American").collect()
        print(
            "False positive rate, African-American vs Caucasian defendants: "
            f"{fpr['value'][0]:.3f} vs {fpr['reference_value'][0]:.3f} "
            f"(ratio {fpr['ratio'][0]:.2f})"
        )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``polars-fairmetrics``."""
    parser = argparse.ArgumentParser(
        prog="polars-fairmetrics",
        description="Fairness and real-world performance metrics of binary classifiers.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="audit the embedded COMPAS data by race and sex")
    demo.add_argument("--threshold", type=int, default=5,
                      help="decile score at or above which a defendant is 'high risk' (default 5)")
    demo.set_defaults(func=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except FairMetricsError as exc:
        print(f"polars-fairmetrics: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
