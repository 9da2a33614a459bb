"""An independent reference implementation of the core, in plain Python.

Written from the seeds' formulas (the class-imbalance paper's Eq. 1-12, Virny's performance
dimensions, the importance-weights seed), row by row, with explicit loops and dictionaries. It
shares **no code** with ``polars_fairmetrics``: it never imports it, and reads frames only through
``DataFrame.to_dicts()`` (polars only builds the random frames at the end of this file). Property
tests compare the package against it; a disagreement is a bug in one of the two, and the simpler
one is this file.

Conventions it encodes (the package's documented contract):

- a row is *counted* when its label, its prediction (or score) and, if weighted, its weight are
  all non-null; otherwise it is a *null row*, reported by the column that was null
  (``n_null_y_true``, ``n_null_y_pred``, ``n_null_weight``; a row may be in several);
- a null group value is a group of its own;
- predicted positive means ``score >= threshold``;
- every 0/0 is ``None`` (undefined), and so is anything computed from an undefined value;
- difference = group − reference, ratio = group / reference (``None`` for a zero reference);
- reference ``"overall"`` = all counted rows, ``"rest"`` = the counted rows of every other group,
  or a named group.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from hypothesis import strategies as st

Key = tuple[Any, ...]

# ---------------------------------------------------------------------------------------------
# Counts
# ---------------------------------------------------------------------------------------------


@dataclass
class Cell:
    """Confusion counts of one group (at one threshold)."""

    tp: float = 0
    fp: float = 0
    tn: float = 0
    fn: float = 0
    tp_w: float = 0.0
    fp_w: float = 0.0
    tn_w: float = 0.0
    fn_w: float = 0.0
    n_null: int = 0
    n_null_y_true: int = 0
    n_null_y_pred: int = 0
    n_null_weight: int = 0

    @property
    def n(self) -> float:
        return self.tp + self.fp + self.tn + self.fn

    @property
    def n_w(self) -> float:
        return self.tp_w + self.fp_w + self.tn_w + self.fn_w

    def quad(self, weighted: bool) -> tuple[float, float, float, float]:
        if weighted:
            return (self.tp_w, self.fp_w, self.tn_w, self.fn_w)
        return (self.tp, self.fp, self.tn, self.fn)


@dataclass
class Spec:
    """What to count: the columns and their roles."""

    y_true: str
    keys: list[str]
    y_pred: str | None = None
    y_score: str | None = None
    thresholds: list[float] | None = None
    weight: str | None = None
    pos_label: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


def _positive(value: Any, pos_label: Any) -> bool:
    """Whether a non-null label value is the positive class."""
    if pos_label is None:
        return bool(value is True or value == 1)
    if isinstance(pos_label, str) and not isinstance(value, str):
        return bool(value is True or value == 1)  # natural classes of Boolean/numeric columns
    return bool(value == pos_label)


def ref_counts(rows: Sequence[dict[str, Any]], spec: Spec) -> dict[tuple[Key, float | None], Cell]:
    """Counts per (group key, threshold) — ``threshold`` is ``None`` for label predictions."""
    thresholds: list[float | None] = (
        [None] if spec.thresholds is None else sorted(spec.thresholds)  # type: ignore[list-item]
    )
    out: dict[tuple[Key, float | None], Cell] = {}
    for row in rows:
        key = tuple(row[k] for k in spec.keys)
        y = row[spec.y_true]
        pred_col = spec.y_pred if spec.y_pred is not None else spec.y_score
        assert pred_col is not None
        p = row[pred_col]
        w = row[spec.weight] if spec.weight is not None else 1.0
        for t in thresholds:
            cell = out.setdefault((key, t), Cell())
            null = False
            if y is None:
                cell.n_null_y_true += 1
                null = True
            if p is None:
                cell.n_null_y_pred += 1
                null = True
            if w is None:
                cell.n_null_weight += 1
                null = True
            if null:
                cell.n_null += 1
                continue
            actual = _positive(y, spec.pos_label)
            predicted = p >= t if t is not None else _positive(p, spec.pos_label)
            if actual and predicted:
                cell.tp += 1
                cell.tp_w += w
            elif actual:
                cell.fn += 1
                cell.fn_w += w
            elif predicted:
                cell.fp += 1
                cell.fp_w += w
            else:
                cell.tn += 1
                cell.tn_w += w
    return out


def add_cells(cells: Sequence[Cell]) -> Cell:
    """The cell of the union of disjoint row sets."""
    total = Cell()
    for c in cells:
        for name in (
            "tp",
            "fp",
            "tn",
            "fn",
            "tp_w",
            "fp_w",
            "tn_w",
            "fn_w",
            "n_null",
            "n_null_y_true",
            "n_null_y_pred",
            "n_null_weight",
        ):
            setattr(total, name, getattr(total, name) + getattr(c, name))
    return total


# ---------------------------------------------------------------------------------------------
# Metrics (seed formulas; None = undefined)
# ---------------------------------------------------------------------------------------------


def _div(a: float, b: float) -> float | None:
    return None if b == 0 else a / b


def _tpr(tp: float, fp: float, tn: float, fn: float) -> float | None:
    return _div(tp, tp + fn)


def _tnr(tp: float, fp: float, tn: float, fn: float) -> float | None:
    return _div(tn, tn + fp)


def _fnr(tp: float, fp: float, tn: float, fn: float) -> float | None:
    return _div(fn, tp + fn)


def _fpr(tp: float, fp: float, tn: float, fn: float) -> float | None:
    return _div(fp, fp + tn)


def _mean2(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else (a + b) / 2


def _gmean(tp: float, fp: float, tn: float, fn: float) -> float | None:
    a, b = _tpr(tp, fp, tn, fn), _tnr(tp, fp, tn, fn)
    return None if a is None or b is None else math.sqrt(a * b)


def _mcc(tp: float, fp: float, tn: float, fn: float) -> float | None:
    margins = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    if margins == 0:
        return None
    return (tp * tn - fp * fn) / math.sqrt(margins)


Metric = Callable[[float, float, float, float], "float | None"]

REF_METRICS: dict[str, Metric] = {
    "accuracy": lambda tp, fp, tn, fn: _div(tp + tn, tp + fp + tn + fn),
    "error_rate": lambda tp, fp, tn, fn: _div(fp + fn, tp + fp + tn + fn),
    "balanced_accuracy": lambda tp, fp, tn, fn: _mean2(_tpr(tp, fp, tn, fn), _tnr(tp, fp, tn, fn)),
    "balanced_error_rate": lambda tp, fp, tn, fn: _mean2(
        _fnr(tp, fp, tn, fn), _fpr(tp, fp, tn, fn)
    ),
    "true_positive_rate": _tpr,
    "false_negative_rate": _fnr,
    "false_positive_rate": _fpr,
    "true_negative_rate": _tnr,
    "positive_predictive_value": lambda tp, fp, tn, fn: _div(tp, tp + fp),
    "negative_predictive_value": lambda tp, fp, tn, fn: _div(tn, tn + fn),
    "false_discovery_rate": lambda tp, fp, tn, fn: _div(fp, tp + fp),
    "false_omission_rate": lambda tp, fp, tn, fn: _div(fn, tn + fn),
    "f1_score": lambda tp, fp, tn, fn: _div(2 * tp, 2 * tp + fp + fn),
    "selection_rate": lambda tp, fp, tn, fn: _div(tp + fp, tp + fp + tn + fn),
    "base_rate": lambda tp, fp, tn, fn: _div(tp + fn, tp + fp + tn + fn),
    "g_mean": _gmean,
    "matthews_corrcoef": _mcc,
}
"""Every metric of the package, from its seed formula."""

HIGHER_IS_BETTER: dict[str, bool | None] = {
    "accuracy": True,
    "error_rate": False,
    "balanced_accuracy": True,
    "balanced_error_rate": False,
    "true_positive_rate": True,
    "false_negative_rate": False,
    "false_positive_rate": False,
    "true_negative_rate": True,
    "positive_predictive_value": True,
    "negative_predictive_value": True,
    "false_discovery_rate": False,
    "false_omission_rate": False,
    "f1_score": True,
    "selection_rate": None,
    "base_rate": None,
    "g_mean": True,
    "matthews_corrcoef": True,
}


def ref_metric(name: str, cell: Cell, weighted: bool) -> float | None:
    return REF_METRICS[name](*cell.quad(weighted))


# ---------------------------------------------------------------------------------------------
# Disparities, between-groups summaries, criteria
# ---------------------------------------------------------------------------------------------


@dataclass
class Disparity:
    value: float | None
    reference_value: float | None
    difference: float | None
    ratio: float | None


def _sub(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def reference_cell(cells: dict[Key, Cell], group: Key, reference: Hashable) -> Cell:
    """The counts the group is compared with (within one partition)."""
    if reference == "overall":
        return add_cells(list(cells.values()))
    if reference == "rest":
        return add_cells([c for k, c in cells.items() if k != group])
    named = reference if isinstance(reference, tuple) else (reference,)
    if named not in cells:
        raise LookupError(f"reference {reference!r} absent")
    return cells[named]


def ref_disparities(
    counts: dict[tuple[Key, float | None], Cell],
    metrics: Sequence[str],
    reference: Hashable,
    weighted: bool,
) -> dict[tuple[Key, float | None, str], Disparity]:
    """Per (group, threshold, metric): value, reference value, difference, ratio."""
    out: dict[tuple[Key, float | None, str], Disparity] = {}
    for t in {t for _, t in counts}:
        part = {k: c for (k, tt), c in counts.items() if tt == t}
        for k, c in part.items():
            ref = reference_cell(part, k, reference)
            for m in metrics:
                v, r = ref_metric(m, c, weighted), ref_metric(m, ref, weighted)
                out[(k, t, m)] = Disparity(v, r, _sub(v, r), _ratio(v, r))
    return out


@dataclass
class Summary:
    max: float | None
    min: float | None
    difference: float | None
    ratio: float | None
    worst: set[Key]
    best: set[Key]
    n_groups: int
    n_undefined: int


def ref_between_groups(
    counts: dict[tuple[Key, float | None], Cell],
    metrics: Sequence[str],
    weighted: bool,
    tol: float = 1e-9,
) -> dict[tuple[float | None, str], Summary]:
    """Max, min, max − min, min / max; the groups that may be named worst and best."""
    out: dict[tuple[float | None, str], Summary] = {}
    for t in {t for _, t in counts}:
        part = {k: c for (k, tt), c in counts.items() if tt == t}
        for m in metrics:
            values = {k: ref_metric(m, c, weighted) for k, c in part.items()}
            defined = {k: v for k, v in values.items() if v is not None}
            hi = max(defined.values()) if defined else None
            lo = min(defined.values()) if defined else None
            top = {k for k, v in defined.items() if hi is not None and abs(v - hi) <= tol}
            bottom = {k for k, v in defined.items() if lo is not None and abs(v - lo) <= tol}
            hib = HIGHER_IS_BETTER[m]
            worst, best = (
                (bottom, top) if hib else (top, bottom) if hib is False else (set(), set())
            )
            out[(t, m)] = Summary(
                hi,
                lo,
                _sub(hi, lo),
                _ratio(lo, hi),
                worst,
                best,
                len(values),
                len(values) - len(defined),
            )
    return out


REF_CRITERIA: dict[str, tuple[str, str]] = {
    "statistical_parity_difference": ("selection_rate", "difference"),
    "disparate_impact": ("selection_rate", "ratio"),
    "equal_opportunity_difference": ("true_positive_rate", "difference"),
    "predictive_equality_difference": ("false_positive_rate", "difference"),
    "false_negative_rate_difference": ("false_negative_rate", "difference"),
    "accuracy_equality_difference": ("accuracy", "difference"),
    "positive_predictive_parity_difference": ("positive_predictive_value", "difference"),
    "negative_predictive_parity_difference": ("negative_predictive_value", "difference"),
}
"""The seeds' criteria: P(Ŷ=1|g) − P(Ŷ=1|ref) (statistical parity), its ratio (disparate
impact), ΔTPR (equal opportunity), ΔFPR (predictive equality), ΔFNR, Δaccuracy (accuracy
equality), ΔPPV and ΔNPV (predictive parities); equalized odds = max(|ΔFPR|, |ΔFNR|)."""


def ref_criteria(
    counts: dict[tuple[Key, float | None], Cell], reference: Hashable, weighted: bool
) -> dict[tuple[Key, float | None, str], float | None]:
    metrics = sorted({m for m, _ in REF_CRITERIA.values()})
    disp = ref_disparities(counts, metrics, reference, weighted)
    out: dict[tuple[Key, float | None, str], float | None] = {}
    for k, t, _m in disp:
        for crit, (base, how) in REF_CRITERIA.items():
            d = disp[(k, t, base)]
            out[(k, t, crit)] = d.difference if how == "difference" else d.ratio
        a = disp[(k, t, "false_positive_rate")].difference
        b = disp[(k, t, "false_negative_rate")].difference
        out[(k, t, "equalized_odds_difference")] = (
            None if a is None or b is None else max(abs(a), abs(b))
        )
    return out


# ---------------------------------------------------------------------------------------------
# Comparison helper
# ---------------------------------------------------------------------------------------------


def close(ours: float | None, ref: float | None, rel: float = 1e-9, abs_: float = 1e-9) -> bool:
    """Equal within tolerance, ``None`` only equal to ``None``; NaN is never accepted."""
    if ours is None or ref is None:
        return ours is None and ref is None
    if math.isnan(ours) or math.isnan(ref):
        return False
    return abs(ours - ref) <= max(abs_, rel * max(abs(ours), abs(ref)))


# ---------------------------------------------------------------------------------------------
# Random frames (hypothesis draws the structure, numpy fills the rows: fast and still shrinkable)
# ---------------------------------------------------------------------------------------------

KEY_COLUMNS = ("g", "h")
PROBS = (0.0, 0.1, 0.5, 0.9, 1.0)
NULL_RATES = (0.0, 0.0, 0.0, 0.1, 0.4)


@dataclass
class Structure:
    """What a batch of random frames has in common: columns, dtypes and options."""

    n_keys: int
    n_groups: int
    label_kind: str
    use_score: bool
    weighted: bool
    thresholds: list[float] | None


@dataclass
class Case:
    """A random frame, how to count it (package options and reference spec)."""

    frame: pl.DataFrame
    spec: Spec
    options: dict[str, Any]
    by: list[str] | None
    present: list[Any]  # groups usable as a named reference (single key: non-null values)
    weighted: bool

    def rows(self) -> list[dict[str, Any]]:
        return self.frame.to_dicts()

    def ref_counts(self) -> dict[tuple[Key, float | None], Cell]:
        return ref_counts(self.rows(), self.spec)


def _with_nulls(values: list[Any], rng: np.random.Generator, rate: float) -> list[Any]:
    mask = rng.random(len(values)) < rate
    return [None if m else v for v, m in zip(values, mask, strict=True)]


@st.composite
def structures(draw: st.DrawFn, scores: bool = True, weights: bool = True) -> Structure:
    """0-2 key columns (1-4 groups), int/Boolean/text labels, labels or scores with 1-3
    thresholds, weighted or not."""
    use_score = scores and draw(st.booleans())
    thresholds = None
    if use_score:
        k = draw(st.integers(1, 3))
        thresholds = [
            t / 10 for t in draw(st.lists(st.integers(0, 10), min_size=k, max_size=k, unique=True))
        ]
    return Structure(
        n_keys=draw(st.sampled_from([0, 1, 1, 2])),
        n_groups=draw(st.integers(1, 4)),
        label_kind=draw(st.sampled_from(["int", "bool", "str"])),
        use_score=use_score,
        weighted=weights and draw(st.booleans()),
        thresholds=thresholds,
    )


@st.composite
def frames_of(draw: st.DrawFn, s: Structure, max_rows: int = 60) -> Case:
    """A small random frame of structure ``s``: 0-``max_rows`` rows, per-group class and
    prediction rates from {0, 0.1, 0.5, 0.9, 1} (groups without positives, nothing predicted
    positive, single class), nulls anywhere, weights with zeros."""
    n = draw(st.integers(0, max_rows))
    p_y = draw(st.lists(st.sampled_from(PROBS), min_size=s.n_groups, max_size=s.n_groups))
    p_pred = draw(st.lists(st.sampled_from(PROBS), min_size=s.n_groups, max_size=s.n_groups))
    null_y, null_p, null_w, null_g = (draw(st.sampled_from(NULL_RATES)) for _ in range(4))
    zero_w = draw(st.sampled_from([0.0, 0.0, 0.3, 1.0]))
    uniform_w = draw(st.booleans())
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)

    gi = rng.integers(0, s.n_groups, n)
    y = rng.random(n) < np.array(p_y)[gi]
    pr = rng.random(n) < np.array(p_pred)[gi]
    cols: dict[str, pl.Series] = {}
    keys: list[str] = list(KEY_COLUMNS[: s.n_keys])
    if s.n_keys >= 1:
        cols["g"] = pl.Series("g", _with_nulls([f"g{i}" for i in gi], rng, null_g), dtype=pl.String)
    if s.n_keys == 2:
        cols["h"] = pl.Series(
            "h", _with_nulls([int(v) for v in rng.integers(1, 3, n)], rng, null_g), dtype=pl.Int64
        )

    def labels(values: np.ndarray, rate: float, name: str) -> pl.Series:
        if s.label_kind == "bool":
            return pl.Series(
                name, _with_nulls([bool(v) for v in values], rng, rate), dtype=pl.Boolean
            )
        if s.label_kind == "str":
            return pl.Series(
                name,
                _with_nulls(["yes" if v else "no" for v in values], rng, rate),
                dtype=pl.String,
            )
        return pl.Series(name, _with_nulls([int(v) for v in values], rng, rate), dtype=pl.Int64)

    cols["y"] = labels(y, null_y, "y")
    options: dict[str, Any] = {"y_true": "y"}
    pos_label: Any = "yes" if s.label_kind == "str" else None
    if pos_label is not None:
        options["pos_label"] = pos_label
    if s.use_score:
        # scores on a 0.1 grid (ties, and scores equal to a threshold), shifted by the prediction
        grid = np.where(pr, rng.integers(5, 11, n), rng.integers(0, 6, n)) / 10
        cols["s"] = pl.Series(
            "s", _with_nulls([float(v) for v in grid], rng, null_p), dtype=pl.Float64
        )
        options.update(y_score="s", threshold=s.thresholds)
    else:
        cols["p"] = labels(pr, null_p, "p")
        options["y_pred"] = "p"
    if s.weighted:
        w = rng.uniform(0.01, 100.0, n) if uniform_w else rng.choice([0.5, 1.0, 2.5, 7.0], n)
        w = np.where(rng.random(n) < zero_w, 0.0, w)
        cols["w"] = pl.Series(
            "w", _with_nulls([float(v) for v in w], rng, null_w), dtype=pl.Float64
        )
        options["weight"] = "w"
    frame = pl.DataFrame(list(cols.values()))
    spec = Spec(
        y_true="y",
        keys=keys,
        y_pred=None if s.use_score else "p",
        y_score="s" if s.use_score else None,
        thresholds=s.thresholds,
        weight="w" if s.weighted else None,
        pos_label=pos_label,
    )
    present = (
        sorted({tuple(r[k] for k in keys) for r in frame.select(keys).to_dicts()}, key=repr)
        if keys
        else []
    )
    if s.n_keys == 1:
        present = [k[0] for k in present if k[0] is not None]
    return Case(frame, spec, options, keys or None, present, s.weighted)


@st.composite
def cases(draw: st.DrawFn, max_rows: int = 60, scores: bool = True, weights: bool = True) -> Case:
    """One random frame (see :func:`structures` and :func:`frames_of`)."""
    return draw(frames_of(draw(structures(scores=scores, weights=weights)), max_rows))


@st.composite
def batches(draw: st.DrawFn, size: int, max_rows: int = 60) -> list[Case]:
    """``size`` random frames of one structure (checked together, as partitions)."""
    s = draw(structures())
    return [draw(frames_of(s, max_rows)) for _ in range(size)]


def ref_roc_auc(rows: Sequence[dict[str, Any]], spec: Spec) -> dict[Key, float | None]:
    """ROC AUC per group as the Mann-Whitney probability (independent of any curve): the
    weighted share of (positive, negative) pairs ranked correctly, ties counting one half.
    ``None`` when a group has no positive or no negative weight."""
    by_group: dict[Key, list[tuple[bool, float, float]]] = {}
    for row in rows:
        y, s = row[spec.y_true], row[spec.y_score or ""]
        w = row[spec.weight] if spec.weight is not None else 1.0
        key = tuple(row[k] for k in spec.keys)
        by_group.setdefault(key, [])
        if y is None or s is None or w is None:
            continue
        by_group[key].append((_positive(y, spec.pos_label), s, w))
    out: dict[Key, float | None] = {}
    for key, items in by_group.items():
        pos = [(s, w) for p, s, w in items if p]
        neg = [(s, w) for p, s, w in items if not p]
        wp, wn = sum(w for _, w in pos), sum(w for _, w in neg)
        if wp == 0 or wn == 0:
            out[key] = None
            continue
        num = sum(
            wi * wj * (1.0 if si > sj else 0.5 if si == sj else 0.0)
            for si, wi in pos
            for sj, wj in neg
        )
        out[key] = num / (wp * wn)
    return out


# ---------------------------------------------------------------------------------------------
# Weights (the importance-weights note and the bias-adjusted metrics derivation)
# ---------------------------------------------------------------------------------------------


class RefEmptyGroup(Exception):
    """The reference's verdict that the package must raise (a required level has no weight)."""


class RefUnlistedLevel(Exception):
    """The reference's verdict that the package must raise (a level of the data is not listed
    by the target mix, and ``missing_groups="error"``)."""


def ref_importance_weights(
    rows: Sequence[dict[str, Any]],
    keys: Sequence[str],
    target: dict[Any, float] | None,
    weight: str | None,
    missing_groups: str = "error",
) -> list[float | None]:
    """Importance weights :math:`w_i \\cdot \\Pr_{tgt}(a_i) / \\Pr_{src}(a_i)`, row by row.

    The level of a row is its key value (a tuple for several keys); ``None`` for a row whose
    level or weight is null. The source mix is the weighted share of each level among the rows
    with a level; the uniform target (``target=None``) puts ``1/L`` on each of the ``L`` levels
    with positive weight. A target level with no positive weight raises :class:`RefEmptyGroup`;
    then a level of the rows (a row with every key set) that the target does not list raises
    :class:`RefUnlistedLevel` with ``missing_groups="error"``, or has target probability 0 with
    ``"zero"``. A zero-weight row gets 0.
    """

    def level(row: dict[str, Any]) -> Any:
        values = tuple(row[k] for k in keys)
        if any(v is None for v in values):
            return None
        return values[0] if len(values) == 1 else values

    def w_of(row: dict[str, Any]) -> float | None:
        return 1.0 if weight is None else row[weight]

    mass: dict[Any, float] = {}
    for row in rows:
        a, w = level(row), w_of(row)
        if a is not None and w is not None:
            mass[a] = mass.get(a, 0.0) + w
    total = sum(mass.values())
    if target is None:
        positive = [a for a, m in mass.items() if m > 0]
        tgt = {a: 1.0 / len(positive) for a in positive}
    else:
        for a, prob in target.items():
            if prob > 0 and mass.get(a, 0.0) <= 0:
                raise RefEmptyGroup(a)
        present = {level(row) for row in rows} - {None}
        if missing_groups == "error" and present - set(target):
            raise RefUnlistedLevel(sorted(present - set(target), key=repr))
        tgt = dict(target)
    out: list[float | None] = []
    for row in rows:
        a, w = level(row), w_of(row)
        if a is None or w is None:
            out.append(None)
        elif w == 0 or mass[a] == 0:
            out.append(0.0)
        else:
            out.append(w * tgt.get(a, 0.0) / (mass[a] / total))
    return out


def ref_bias_adjusted_weights(
    rows: Sequence[dict[str, Any]], flag: str, share: float, keys: Sequence[str], weight: str | None
) -> list[float | None]:
    """The bias-adjusted weights of the derivation, per group of ``keys`` (a null key is a group):

    .. math:: w_B = \\frac{|B| + |B^c|}{|B|}\\,s,\\qquad w_{B^c} = \\frac{|B| + |B^c|}{|B^c|}
              \\,(1 - s)

    with :math:`|B|, |B^c|` the (weighted) rows flagged True / False in the group, times the
    row's own weight. ``None`` for a null flag or weight; :class:`RefEmptyGroup` when a group
    present in the rows (even with every flag null; without ``keys``: the whole set, even empty)
    has no weight in B or in B^c."""

    def w_of(row: dict[str, Any]) -> float | None:
        return 1.0 if weight is None else row[weight]

    # every group present (even one whose flags are all null); without keys the whole set
    sizes: dict[Key, list[float]] = {tuple(row[k] for k in keys): [0.0, 0.0] for row in rows}
    if not keys:
        sizes.setdefault((), [0.0, 0.0])
    for row in rows:
        f, w = row[flag], w_of(row)
        key = tuple(row[k] for k in keys)
        if f is None or w is None:
            continue
        sizes[key][0 if f else 1] += w
    for key, (b, bc) in sizes.items():
        if b <= 0 or bc <= 0:
            raise RefEmptyGroup(key)
    out: list[float | None] = []
    for row in rows:
        f, w = row[flag], w_of(row)
        if f is None or w is None:
            out.append(None)
            continue
        b, bc = sizes[tuple(row[k] for k in keys)]
        factor = (b + bc) / b * share if f else (b + bc) / bc * (1.0 - share)
        out.append(0.0 if w == 0 else w * factor)
    return out
