"""Exceptions raised by polars_fairmetrics.

Every error is a subclass of :class:`FairMetricsError` (itself a ``ValueError``), and every
message names the column and the offending value, so a batch job's log says what to fix.
The message templates are module constants so that tests assert on them.
"""

from __future__ import annotations

__all__ = [
    "ColumnNotFoundError",
    "EmptyGroupError",
    "FairMetricsError",
    "InconsistentInputError",
    "InvalidDtypeError",
    "InvalidLabelError",
    "InvalidOptionError",
    "InvalidScoreError",
    "InvalidThresholdError",
    "InvalidWeightError",
    "ReferenceGroupError",
    "SectionNotFoundError",
    "StoreError",
]

MSG_MISSING_COLUMN = "column {column!r} ({role}) not found; available columns: {available}"
MSG_BAD_DTYPE = "column {column!r} ({role}) has dtype {dtype}, expected {expected}"
MSG_THIRD_LABEL = (
    "column {column!r} ({role}) has a value {value!r} that is neither the positive label "
    "{pos!r} nor the negative label {neg!r}"
)
MSG_TWO_NEGATIVES = (
    "column {column!r} ({role}) has more than two classes: besides the positive label {pos!r} "
    "it holds {first!r} and {second!r}; pass neg_label= or map the column to two classes"
)
MSG_NEGATIVE_WEIGHT = "column {column!r} (weight) has a negative weight {value!r}"
MSG_NONFINITE_WEIGHT = "column {column!r} (weight) has a non-finite weight {value!r}"
MSG_WEIGHT_OVERFLOW = (
    "column {column!r} (weight): the weights sum to infinity in Float64 (overflow; the largest "
    "is {value!r}): rescale the weights"
)
MSG_SCORE_RANGE = (
    "column {column!r} (y_score) has a score {value!r} outside [{low}, {high}]; pass "
    "score_bounds=None if the scores are not probabilities"
)
MSG_SCORE_NAN = "column {column!r} (y_score) has a NaN score"
MSG_SCORE_INFINITE = "column {column!r} (y_score) has a score {value!r}: scores must be finite"
MSG_THRESHOLD = "threshold {value!r} is {problem}"
MSG_REFERENCE = "reference group {value!r} not found in {column}; groups present: {available}"


class FairMetricsError(ValueError):
    """Base class of every error raised by polars_fairmetrics."""


class ColumnNotFoundError(FairMetricsError, KeyError):
    """A column named in the options is not in the frame's schema."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class InconsistentInputError(FairMetricsError):
    """Records that describe one row disagree or repeat.

    In the long ensemble layout (one record per test row and model): a row whose group, label,
    weight or other per-row value differs between its records, or a (row, model) pair given
    twice. Such input would otherwise be read silently from one of the records.
    """


class InvalidDtypeError(FairMetricsError, TypeError):
    """A column has a dtype the operation cannot use."""


class InvalidLabelError(FairMetricsError):
    """A label column holds a value outside its two classes."""


class InvalidWeightError(FairMetricsError):
    """A weight is negative, NaN or infinite."""


class InvalidScoreError(FairMetricsError):
    """A score is NaN or outside the allowed bounds."""


class InvalidThresholdError(FairMetricsError):
    """A decision threshold is not finite, outside the score bounds, or duplicated."""


class InvalidOptionError(FairMetricsError):
    """Options that conflict or have an unsupported value."""


class ReferenceGroupError(FairMetricsError):
    """The reference group of a disparity is absent from the data."""


class EmptyGroupError(FairMetricsError):
    """A group or stratum required by the computation has no rows."""


class StoreError(FairMetricsError):
    """A count store is missing, is not a count store, or was written with other options."""


class SectionNotFoundError(FairMetricsError, KeyError):
    """A report has no section of that name (a ``KeyError`` too, for mapping-style access)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""
