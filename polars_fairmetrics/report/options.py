"""The options of an audit: one frozen :class:`AuditOptions`, validated when it is made.

Every check that needs no data runs here, before anything is scanned: the names of the metrics
and criteria, the interval options, the size limits (resamples, curve grid) and the deployment
rate. Fields keep what the caller gave (``None`` = the default); the resolved values are
properties (:attr:`AuditOptions.metric_names`, :attr:`AuditOptions.curve_grid` …).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal, TypeAlias

from polars_fairmetrics._typing import ColumnNames, Label
from polars_fairmetrics._validate import as_integer, as_real
from polars_fairmetrics.disparity import CRITERIA, Reference
from polars_fairmetrics.exceptions import InvalidOptionError
from polars_fairmetrics.metrics import METRICS, resolve_metric

__all__ = [
    "CALIBRATION_BINNINGS",
    "CALIBRATION_BINS",
    "CALIBRATION_DECIMALS",
    "CI_METHODS",
    "CURVE_BINS",
    "DEFAULT_AUDIT_CRITERIA",
    "DEFAULT_AUDIT_METRICS",
    "DEPLOYMENT_AUDIT_METRICS",
    "MAX_CURVE_BINS",
    "MAX_RESAMPLES",
    "STABILITY_METRICS",
    "AuditOptions",
    "Engine",
]

Engine: TypeAlias = Literal["auto", "in-memory", "streaming"]
"""The Polars engine of the audit's scans."""

IntervalMethod: TypeAlias = Literal["percentile", "basic", "bca"]
"""Bootstrap interval methods."""

CalibrationBinning: TypeAlias = Literal["uniform", "quantile"]
"""Bins of the calibration section: equal width on [0, 1], or at each group's score quantiles."""

DEFAULT_AUDIT_METRICS: tuple[str, ...] = (
    "selection_rate",
    "base_rate",
    "accuracy",
    "balanced_accuracy",
    "true_positive_rate",
    "false_positive_rate",
    "false_negative_rate",
    "positive_predictive_value",
    "negative_predictive_value",
    "f1_score",
)
"""Metrics of a report when none are named (``metrics="all"``: every registered metric)."""

DEFAULT_AUDIT_CRITERIA: tuple[str, ...] = tuple(CRITERIA)
"""Every named fairness criterion."""

CI_METHODS: tuple[str, ...] = ("percentile", "basic", "bca")
"""Interval methods of ``intervals=`` (those of :mod:`polars_fairmetrics.bootstrap`)."""

MAX_RESAMPLES = 100_000
"""Most bootstrap resamples an audit draws (the replicate tables grow with B × groups)."""

CURVE_BINS = 100
"""Default grid of the audit's curves: ``curve_bins`` equal steps over ``score_bounds``."""

MAX_CURVE_BINS = 10_000
"""Largest grid of the audit's curves: the report keeps its curves small (use
``curves.roc_curve`` / ``pr_curve`` on the rows for exact curves)."""

STABILITY_METRICS: tuple[str, ...] = (
    "label_stability",
    "jitter",
    "std_probability",
    "aleatoric_uncertainty",
    "overall_uncertainty",
    "epistemic_mutual_information",
)
"""Ensemble metrics of the ``stability`` section (per-group means of per-row values)."""

CALIBRATION_BINS = 10
"""Default bins of the calibration section (expected calibration error, reliability curves)."""

CALIBRATION_BINNINGS: tuple[str, ...] = ("uniform", "quantile")
"""Binnings of ``calibration_binning=`` (those of :func:`~polars_fairmetrics.reliability_curve`)."""

CALIBRATION_DECIMALS = 4
"""Default rounding of the scores in the calibration section's score cells (at most
:math:`10^4 + 1` cells per group: the table stays small whatever the row count)."""

DEPLOYMENT_AUDIT_METRICS: tuple[str, ...] = (
    "positive_predictive_value",
    "negative_predictive_value",
    "f1_score",
    "accuracy",
)
"""Metrics of the ``deployment`` section (those the class ratio changes)."""


def _is_int(value: Any) -> bool:
    return as_integer(value) is not None


def _is_number(value: Any) -> bool:
    return as_real(value) is not None


def _names(value: str | Sequence[str] | None, what: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = [value] if isinstance(value, str) else list(value)
    bad = [v for v in items if not isinstance(v, str)]
    if bad:
        raise InvalidOptionError(f"{what}= must name columns as text, got {bad[0]!r}")
    return tuple(items)


@dataclass(frozen=True)
class AuditOptions:
    """What to audit and how: every option of :func:`~polars_fairmetrics.audit`.

    Made once, checked at once (:class:`InvalidOptionError` naming the option and its value),
    immutable. ``audit(data, options)`` runs it; ``dataclasses.replace(options, weight="w")``
    derives another.

    Examples
    --------
    >>> opts = AuditOptions(y_true="y", y_pred="p", by="g", metrics=["tpr"])
    >>> opts.by, opts.metric_names
    (('g',), ('true_positive_rate',))
    >>> AuditOptions(y_true="y", y_pred="p", by="g", intervals=0)
    Traceback (most recent call last):
    ...
    polars_fairmetrics.exceptions.InvalidOptionError: intervals must be a positive number of bootstrap resamples (at most 100000), got 0
    """  # noqa: E501

    y_true: str
    by: ColumnNames
    y_pred: str | None = None
    y_score: str | None = None
    threshold: float | None = None
    weight: str | None = None
    reference: Reference = "overall"
    pos_label: Label | None = None
    neg_label: Label | None = None
    metrics: str | Sequence[str] | None = None
    criteria: str | Sequence[str] | None = None
    intersectional: bool = False
    score_bounds: tuple[float, float] | None = (0.0, 1.0)
    engine: Engine = "auto"
    source: str | None = None
    intervals: int | None = None
    ci_level: float = 0.95
    ci_method: IntervalMethod = "percentile"
    seed: int = 0
    models: str | Sequence[str] | None = None
    curves: bool | None = None
    curve_bins: int | None = None
    deploy_positive_rate: float | None = None
    calibration: bool | None = None
    calibration_bins: int | None = None
    calibration_binning: CalibrationBinning = "uniform"
    calibration_decimals: int | None = CALIBRATION_DECIMALS
    predictions: Sequence[str] | Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if type(value).__module__ == "numpy" and getattr(value, "shape", None) == ():
                # NumPy scalars (np.int64(1000) resamples) are taken as Python's numbers:
                # the options are validated, printed and written to JSON as such
                object.__setattr__(self, f.name, value.item())
        by = _names(self.by, "by")
        object.__setattr__(self, "by", by)
        object.__setattr__(self, "models", _names(self.models, "models"))
        if isinstance(self.reference, list):
            object.__setattr__(self, "reference", tuple(self.reference))
        if not isinstance(self.y_true, str) or not self.y_true:
            raise InvalidOptionError(
                f"y_true= must name the true-label column, got {self.y_true!r}"
            )
        if not by:
            raise InvalidOptionError("an audit needs at least one by= column (protected attribute)")
        if len(set(by)) != len(by):
            raise InvalidOptionError(f"by= names a column twice: {list(by)!r}")
        if (self.y_pred is None) == (self.y_score is None):
            raise InvalidOptionError("pass exactly one of y_pred= (labels) or y_score= (scores)")
        if self.y_score is not None and self.threshold is None:
            raise InvalidOptionError("y_score= needs threshold= (one decision threshold)")
        if self.threshold is not None:
            if not _is_number(self.threshold) or not math.isfinite(self.threshold):
                raise InvalidOptionError(
                    f"threshold must be one finite number, got {self.threshold!r} (an audit "
                    "takes one threshold; the curve sections cover the others)"
                )
            if self.y_pred is not None:
                raise InvalidOptionError("threshold= applies to y_score=, not to y_pred=")
        self._check_bounds()
        if self.engine not in ("auto", "in-memory", "streaming"):
            raise InvalidOptionError(
                f"engine must be 'auto', 'in-memory' or 'streaming', got {self.engine!r}"
            )
        if not isinstance(self.intersectional, bool):
            raise InvalidOptionError(
                f"intersectional must be True or False, got {self.intersectional!r}"
            )
        _ = self.metric_names, self.criterion_names  # validates the names
        self._check_intervals()
        if self.models is not None and not self.models:
            raise InvalidOptionError("models= is an empty list")
        self._check_curves()
        self._check_calibration()
        self._check_predictions()
        rate = self.deploy_positive_rate
        if rate is not None and (not _is_number(rate) or not 0.0 < float(rate) < 1.0):
            raise InvalidOptionError(
                f"deploy_positive_rate must be strictly between 0 and 1, got {rate!r}"
            )

    def _check_bounds(self) -> None:
        bounds = self.score_bounds
        if bounds is None:
            return
        ok = (
            isinstance(bounds, (tuple, list))
            and len(bounds) == 2
            and all(_is_number(b) and math.isfinite(b) for b in bounds)
            and bounds[0] < bounds[1]
        )
        if not ok:
            raise InvalidOptionError(
                f"score_bounds must be (low, high) with finite low < high, or None; got {bounds!r}"
            )

    def _check_intervals(self) -> None:
        n = self.intervals
        if n is not None and (not _is_int(n) or not 1 <= n <= MAX_RESAMPLES):
            raise InvalidOptionError(
                "intervals must be a positive number of bootstrap resamples (at most "
                f"{MAX_RESAMPLES}), got {n!r}"
            )
        if not _is_number(self.ci_level) or not 0.0 < float(self.ci_level) < 1.0:
            raise InvalidOptionError(f"ci_level must be in (0, 1), got {self.ci_level!r}")
        if self.ci_method not in CI_METHODS:
            raise InvalidOptionError(
                f"ci_method {self.ci_method!r} is not one of {', '.join(CI_METHODS)}"
            )
        if not _is_int(self.seed) or self.seed < 0:
            raise InvalidOptionError(
                f"seed must be a non-negative integer (the resamples' random seed), got "
                f"{self.seed!r}"
            )

    def _check_predictions(self) -> None:
        """``predictions=``: prediction columns (or ``{model: column}``) of models compared side
        by side (the ``models`` section, :func:`~polars_fairmetrics.compare_models`)."""
        given = self.predictions
        if given is None:
            return
        if isinstance(given, str):
            raise InvalidOptionError(
                f"predictions={given!r}: pass a list of prediction columns or a mapping "
                "{model name: prediction column}"
            )
        if isinstance(given, Mapping):
            pairs = [(str(k), v) for k, v in given.items()]
            object.__setattr__(self, "predictions", dict(pairs))
        else:
            pairs = [(c, c) for c in given]
            object.__setattr__(self, "predictions", tuple(given))
        bad = [c for _, c in pairs if not isinstance(c, str)]
        if bad:
            raise InvalidOptionError(f"predictions= must name columns as text, got {bad[0]!r}")
        if not pairs:
            raise InvalidOptionError("predictions= is empty")
        names = [n for n, _ in pairs]
        if len(set(names)) != len(names):
            raise InvalidOptionError(f"predictions= names a model twice: {names!r}")

    @property
    def prediction_columns(self) -> dict[str, str]:
        """``{model name: column}`` of ``predictions=`` (empty without it)."""
        given = self.predictions
        if given is None:
            return {}
        if isinstance(given, Mapping):
            return dict(given)
        return {c: c for c in given}

    def _check_curves(self) -> None:
        if self.curves is not None and not isinstance(self.curves, bool):
            raise InvalidOptionError(f"curves must be True, False or None, got {self.curves!r}")
        if self.curves and self.y_score is None:
            raise InvalidOptionError("curves=True needs y_score= (the curves are over the scores)")
        bins = self.curve_bins
        if bins is not None:
            if not _is_int(bins) or not 1 <= bins <= MAX_CURVE_BINS:
                raise InvalidOptionError(
                    f"curve_bins must be a positive integer of at most {MAX_CURVE_BINS} (the "
                    "report keeps its curves small; use roc_curve / pr_curve on the rows for "
                    f"exact curves), got {bins!r}"
                )
            if not self.with_curves:
                raise InvalidOptionError(
                    "curve_bins= without the curve sections: pass y_score= (and not curves=False)"
                )
        if self.with_curves and self.score_bounds is None:
            raise InvalidOptionError(
                "the audit's curves are on a grid over score_bounds: pass score_bounds=(low, "
                "high) or curves=False"
            )

    def _check_calibration(self) -> None:
        if self.calibration is not None and not isinstance(self.calibration, bool):
            raise InvalidOptionError(
                f"calibration must be True, False or None, got {self.calibration!r}"
            )
        if self.calibration and self.y_score is None:
            raise InvalidOptionError(
                "calibration=True needs y_score= (calibration compares scores with outcomes)"
            )
        if self.calibration and tuple(self.score_bounds or ()) != (0.0, 1.0):
            raise InvalidOptionError(
                "calibration=True needs probability scores: score_bounds=(0, 1), got "
                f"{self.score_bounds!r}"
            )
        bins = self.calibration_bins
        if bins is not None:
            if not _is_int(bins) or not 1 <= bins <= MAX_CURVE_BINS:
                raise InvalidOptionError(
                    f"calibration_bins must be a positive integer of at most {MAX_CURVE_BINS}, "
                    f"got {bins!r}"
                )
        if self.calibration_binning not in CALIBRATION_BINNINGS:
            raise InvalidOptionError(
                f"calibration_binning must be one of {', '.join(CALIBRATION_BINNINGS)}, got "
                f"{self.calibration_binning!r}"
            )
        decimals = self.calibration_decimals
        if decimals is not None and (not _is_int(decimals) or not 0 <= decimals <= 15):
            raise InvalidOptionError(
                f"calibration_decimals must be an integer from 0 to 15 or None, got {decimals!r}"
            )
        changed = bins is not None or self.calibration_binning != "uniform"
        if changed and not self.with_calibration:
            raise InvalidOptionError(
                "calibration_bins= / calibration_binning= without the calibration section: pass "
                "y_score= with probability scores (and not calibration=False)"
            )

    # resolved values ------------------------------------------------------------------------

    @property
    def metric_names(self) -> tuple[str, ...]:
        """The metrics of the report (registry names, in the order given)."""
        metrics = self.metrics
        if metrics is None:
            return DEFAULT_AUDIT_METRICS
        if metrics == "all":
            return tuple(METRICS)
        chosen = [metrics] if isinstance(metrics, str) else list(metrics)
        if not chosen:
            raise InvalidOptionError("metrics= is an empty list")
        return tuple(dict.fromkeys(resolve_metric(m).name for m in chosen))

    @property
    def criterion_names(self) -> tuple[str, ...]:
        """The fairness criteria of the report, in the order given."""
        if self.criteria is None:
            return DEFAULT_AUDIT_CRITERIA
        chosen = [self.criteria] if isinstance(self.criteria, str) else list(self.criteria)
        for c in chosen:
            if c not in CRITERIA:
                raise InvalidOptionError(
                    f"unknown criterion {c!r}; known: {', '.join(DEFAULT_AUDIT_CRITERIA)}"
                )
        return tuple(dict.fromkeys(chosen))

    @property
    def compared_metrics(self) -> tuple[str, ...]:
        """The metrics compared with the reference: the report's and the criteria's."""
        needed = list(self.metric_names)
        for crit in self.criterion_names:
            needed += [m for m in CRITERIA[crit].metrics if m not in needed]
        return tuple(needed)

    @property
    def by_columns(self) -> tuple[str, ...]:
        """``by`` as a tuple of column names."""
        return tuple(self.by) if not isinstance(self.by, str) else (self.by,)

    @property
    def separate(self) -> bool:
        """Several attributes side by side (an ``attribute`` column in the sections)."""
        return len(self.by_columns) > 1 and not self.intersectional

    @property
    def with_curves(self) -> bool:
        """Whether the curve sections are built (default: with scores)."""
        return self.y_score is not None if self.curves is None else self.curves

    @property
    def curve_grid(self) -> int:
        """Grid steps of the curves."""
        return self.curve_bins if self.curve_bins is not None else CURVE_BINS

    @property
    def with_calibration(self) -> bool:
        """Whether the calibration sections are built (default: with probability scores, i.e.
        ``y_score`` and ``score_bounds=(0, 1)``)."""
        if self.calibration is not None:
            return self.calibration
        return self.y_score is not None and tuple(self.score_bounds or ()) == (0.0, 1.0)

    @property
    def calibration_grid(self) -> int:
        """Bins of the calibration section."""
        return self.calibration_bins if self.calibration_bins is not None else CALIBRATION_BINS

    def to_dict(self) -> dict[str, Any]:
        """The resolved options as JSON-compatible values (a report's ``inputs``)."""
        reference: Any = self.reference
        if isinstance(reference, Mapping):
            reference = dict(reference)
        elif isinstance(reference, tuple):
            reference = list(reference)
        out: dict[str, Any] = {
            "y_true": self.y_true,
            "y_pred": self.y_pred,
            "y_score": self.y_score,
            "threshold": float(self.threshold) if self.threshold is not None else None,
            "score_bounds": list(self.score_bounds) if self.score_bounds is not None else None,
            "by": list(self.by_columns),
            "intersectional": self.intersectional and len(self.by_columns) > 1,
            "weight": self.weight,
            "reference": reference,
            "pos_label": self.pos_label,
            "neg_label": self.neg_label,
            "metrics": list(self.metric_names),
            "criteria": list(self.criterion_names),
            "source": self.source,
        }
        if self.intervals is not None:
            out.update(
                {
                    "intervals": self.intervals,
                    "ci_level": float(self.ci_level),
                    "ci_method": self.ci_method,
                    "seed": self.seed,
                }
            )
        if self.models is not None:
            out["models"] = list(self.models)
        if self.with_curves:
            out["curve_bins"] = self.curve_grid
        if self.deploy_positive_rate is not None:
            out["deploy_positive_rate"] = float(self.deploy_positive_rate)
        if self.with_calibration:
            out["calibration_bins"] = self.calibration_grid
            out["calibration_binning"] = self.calibration_binning
            out["calibration_decimals"] = self.calibration_decimals
        if self.predictions is not None:
            out["predictions"] = self.prediction_columns
        return out


FIELD_DEFAULTS: dict[str, Any] = {
    f.name: f.default for f in fields(AuditOptions) if f.name not in ("y_true", "by")
}
"""Defaults of the optional fields (the keyword call of ``audit`` compares with them)."""
