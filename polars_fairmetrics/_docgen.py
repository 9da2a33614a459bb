"""Generate the metrics reference page from the registry, so the docs cannot drift.

Run ``python -m polars_fairmetrics._docgen > docs/metrics.md``; a test checks the page is current.
"""

from __future__ import annotations

from polars_fairmetrics.disparity import CRITERIA
from polars_fairmetrics.metrics import METRICS


def metrics_reference_markdown() -> str:
    """The metrics reference table (formula, undefined when, range, direction, aliases)."""
    lines = [
        "| metric | formula | undefined (null) when | range | better | aliases |",
        "|---|---|---|---|---|---|",
    ]
    for spec in METRICS.values():
        better = {True: "higher", False: "lower", None: "—"}[spec.higher_is_better]
        lo, hi = spec.value_range
        aliases = ", ".join(f"`{a}`" for a in spec.aliases) or "—"
        lines.append(
            f"| `{spec.name}` | {spec.formula} | {spec.undefined_when} | [{lo:g}, {hi:g}] "
            f"| {better} | {aliases} |"
        )
    lines += [
        "",
        "| fairness criterion | base metric(s) | composed as |",
        "|---|---|---|",
    ]
    compositions = {
        "difference": "group − reference",
        "ratio": "group / reference",
        "max_abs_difference": "largest absolute difference",
    }
    for c in CRITERIA.values():
        bases = ", ".join(f"`{m}`" for m in c.metrics)
        lines.append(f"| `{c.name}` | {bases} | {compositions[c.composition]}: {c.description} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    """Print the whole metrics reference page."""
    print(_HEADER + metrics_reference_markdown() + _FOOTER, end="")


_HEADER = """# Metrics reference

Generated from `polars_fairmetrics.metrics.METRICS` by `python -m polars_fairmetrics._docgen`;
a test fails when this page and the code disagree.

Every metric is one function of the four confusion counts (`tp, fp, tn, fn`, or their weighted
sums). An empty denominator gives **null** — never NaN, never a silent 0 or 1. Where scikit-learn
returns a number for such a case (`balanced_accuracy_score` with one class present,
`matthews_corrcoef` with an empty margin, `zero_division=0`), we return null.

"""

_FOOTER = """
Disparities: **difference = group − reference**, **ratio = group / reference** (null when the
reference value is 0). The reference is a named group, `"rest"` (all rows not in the group,
recomputed from counts) or `"overall"`.
"""


if __name__ == "__main__":
    main()
