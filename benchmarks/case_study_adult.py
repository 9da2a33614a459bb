"""The class-imbalance paper's case study (Section 6) on UCI Adult, with polars_fairmetrics.

Subsets of 1,100 rows with a controlled imbalance ratio (IR, share of ``>50K``) and group ratio
(GR, share of women), one ratio varied over {0.01, 0.02, 0.05, 0.1, ..., 0.9, 0.95, 0.98, 0.99}
while the other is 0.5 (the group ratio holds within each class). Each subset gets
``--holdouts`` 67/33 holdouts; six scikit-learn classifiers with default settings are trained
on each; the test predictions give balanced accuracy, G-mean, recall, F1
(:func:`polars_fairmetrics.metrics_from_counts`) and the six fairness measures as differences
between the sexes (:func:`polars_fairmetrics.disparities` with the other sex as reference).
Undefined values (0/0) are left out of the mean and counted.

Requires the optional extra scikit-learn. Usage (from the repository root)::

    PYTHONPATH=. python benchmarks/case_study_adult.py --holdouts 50

``--preprocessing`` (default ``authors``) chooses the data, the subset draw and the features:

- ``authors``: the authors' published code for the paper (github.com/Rasalrai/analysis-of-fairness-
  measures, ``case_study.py``), step by step, so the subsets and the feature matrices are theirs:
  the rows of ``adult.data`` (the ``train`` split, in file order) without its first record
  (their ``read_csv(header=0, names=...)`` reads it as a header row): 32,560 rows; ``fnlwgt``
  dropped; each of the four (sex, income) strata of a subset drawn as pandas
  ``DataFrame.sample(n=k, random_state=2137)`` does (``RandomState(2137).choice(len, k,
  replace=False)``), ``k = round(n·GR·(1−IR))`` etc. with Python's ``round``, concatenated in
  the order Female ≤50K, Female >50K, Male ≤50K, Male >50K; features = the five numeric columns,
  then the eight categorical ones ordinal-encoded (missing values stay NaN), ``education``
  overwritten by one constant code (their code assigns ``transform(...)[0]``, the first row's
  code, to the whole column); ``KNNImputer`` then ``StandardScaler`` on every column (fitted on
  the training part), so the missing codes are imputed and the codes are scaled; RandomForest,
  DecisionTree and MLP with ``random_state=2137``; holdouts from the non-stratified
  ``ShuffleSplit(n_splits=holdouts, test_size=0.33, random_state=2137)``. ``--seed`` is unused.
- ``pooled-ordinal``: the earlier approximation of it: train and test splits pooled (48,842
  rows), a missing categorical value kept as the category ``?``, subsets drawn with
  :func:`polars_fairmetrics.sampling.sample_ir_gr` (``seed + subset index``), categorical
  columns ordinal-encoded and not scaled, numeric columns ``KNNImputer`` then ``StandardScaler``,
  the same ``ShuffleSplit`` holdouts, estimators seeded with ``seed + holdout``.
- ``onehot-stratified``: the package's first setup: rows with a missing value dropped,
  ``fnlwgt`` kept, ``sample_ir_gr`` subsets, categorical columns one-hot encoded and numeric
  columns standardised (fitted on the training part), class-stratified 67/33 holdouts
  (``train_test_split``), estimators seeded with ``seed + holdout``.

``--sign`` (default ``male-minus-female``, as the authors) orders every fairness difference:
rate(Male) − rate(Female), or rate(Female) − rate(Male) with ``female-minus-male``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from polars_fairmetrics import confusion_counts, disparities, metrics_from_counts
from polars_fairmetrics.sampling import sample_ir_gr

PREPROCESSING = ("authors", "pooled-ordinal", "onehot-stratified")
SIGNS = ("male-minus-female", "female-minus-male")
# every random_state of the authors' code (subset draws, ShuffleSplit, estimators)
AUTHORS_RANDOM_STATE = 2137
# the authors' feature matrix: numeric columns, then categorical ones (order matters for trees)
AUTHORS_NUMERIC = ["age", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
AUTHORS_CATEGORICAL = [
    "workclass",
    "education",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native_country",
]
EDUCATION_ORDER = [
    "Preschool",
    "1st-4th",
    "5th-6th",
    "7th-8th",
    "9th",
    "10th",
    "11th",
    "12th",
    "HS-grad",
    "Some-college",
    "Assoc-acdm",
    "Assoc-voc",
    "Bachelors",
    "Masters",
    "Prof-school",
    "Doctorate",
]
RATIOS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99]
CLASSIFIERS = [
    "RandomForest",
    "DecisionTree",
    "GaussianNB",
    "LogisticRegression",
    "KNeighbors",
    "MLP",
]
PERF = ["balanced_accuracy", "g_mean", "recall", "f1"]
FAIR = ["AE", "SP", "EO", "PE", "PPP", "NPP"]

# The paper's supplementary tables (mean (std) over 50 holdouts), in the order printed at the end
# of the paper: balanced accuracy, G-mean, recall, F1 (identified from their values: the first
# is 0.5 for a majority-class predictor, the third tends to 1 as positives dominate, the fourth
# tends to 0 with few positives and is the harmonic mean of recall and precision); the MLP
# column is missing in the source. Keys: (IR, GR) -> [RF, DT, GNB, LR, KNN] means.
PAPER_ROWS = {
    "balanced_accuracy": """
0.01 0.50 0.514 0.645 0.584 0.519 0.500
0.02 0.50 0.511 0.610 0.614 0.516 0.508
0.05 0.50 0.588 0.648 0.608 0.540 0.534
0.10 0.50 0.640 0.668 0.620 0.587 0.591
0.20 0.50 0.725 0.701 0.622 0.658 0.668
0.30 0.50 0.795 0.732 0.620 0.706 0.733
0.40 0.50 0.817 0.757 0.620 0.735 0.760
0.50 0.50 0.830 0.770 0.636 0.755 0.781
0.60 0.50 0.822 0.759 0.649 0.742 0.773
0.70 0.50 0.804 0.746 0.662 0.715 0.749
0.80 0.50 0.767 0.728 0.668 0.662 0.713
0.90 0.50 0.683 0.675 0.702 0.600 0.635
0.95 0.50 0.624 0.662 0.639 0.541 0.569
0.98 0.50 0.553 0.611 0.624 0.513 0.501
0.99 0.50 0.568 0.646 0.681 0.509 0.500
0.50 0.01 0.792 0.731 0.698 0.781 0.746
0.50 0.02 0.789 0.733 0.692 0.771 0.736
0.50 0.05 0.795 0.733 0.696 0.776 0.745
0.50 0.10 0.795 0.734 0.670 0.767 0.744
0.50 0.20 0.802 0.734 0.627 0.755 0.743
0.50 0.30 0.807 0.737 0.619 0.743 0.752
0.50 0.40 0.819 0.755 0.628 0.738 0.766
0.50 0.60 0.829 0.769 0.635 0.751 0.777
0.50 0.70 0.835 0.771 0.638 0.759 0.788
0.50 0.80 0.830 0.762 0.646 0.761 0.787
0.50 0.90 0.845 0.779 0.648 0.769 0.799
0.50 0.95 0.851 0.795 0.649 0.778 0.805
0.50 0.98 0.855 0.796 0.655 0.790 0.811
0.50 0.99 0.850 0.796 0.653 0.782 0.806
""",
    "g_mean": """
0.01 0.50 0.053 0.443 0.503 0.060 -
0.02 0.50 0.055 0.452 0.532 0.085 0.040
0.05 0.50 0.410 0.562 0.486 0.263 0.196
0.10 0.50 0.538 0.615 0.515 0.428 0.446
0.20 0.50 0.691 0.679 0.528 0.587 0.612
0.30 0.50 0.787 0.723 0.530 0.678 0.719
0.40 0.50 0.815 0.755 0.529 0.726 0.758
0.50 0.50 0.830 0.769 0.561 0.754 0.781
0.60 0.50 0.820 0.757 0.587 0.736 0.769
0.70 0.50 0.796 0.739 0.608 0.686 0.730
0.80 0.50 0.743 0.711 0.620 0.587 0.668
0.90 0.50 0.609 0.625 0.680 0.453 0.525
0.95 0.50 0.490 0.588 0.555 0.257 0.353
0.98 0.50 0.251 0.450 0.547 0.079 0.008
0.99 0.50 0.240 0.462 0.618 0.033 -
0.50 0.01 0.791 0.730 0.662 0.780 0.745
0.50 0.02 0.788 0.732 0.652 0.770 0.734
0.50 0.05 0.795 0.733 0.655 0.775 0.744
0.50 0.10 0.795 0.734 0.614 0.766 0.742
0.50 0.20 0.801 0.733 0.547 0.754 0.741
0.50 0.30 0.806 0.736 0.537 0.742 0.751
0.50 0.40 0.819 0.755 0.548 0.738 0.765
0.50 0.60 0.829 0.768 0.558 0.750 0.776
0.50 0.70 0.835 0.771 0.564 0.758 0.788
0.50 0.80 0.830 0.761 0.571 0.760 0.787
0.50 0.90 0.844 0.778 0.574 0.769 0.799
0.50 0.95 0.850 0.795 0.576 0.777 0.805
0.50 0.98 0.855 0.796 0.590 0.789 0.811
0.50 0.99 0.850 0.795 0.585 0.782 0.806
""",
    "recall": """
0.01 0.50 0.029 0.301 0.858 0.041 -
0.02 0.50 0.022 0.237 0.908 0.037 0.017
0.05 0.50 0.181 0.339 0.333 0.088 0.072
0.10 0.50 0.300 0.414 0.279 0.190 0.209
0.20 0.50 0.511 0.533 0.296 0.366 0.404
0.30 0.50 0.686 0.625 0.299 0.514 0.591
0.40 0.50 0.766 0.713 0.298 0.624 0.703
0.50 0.50 0.831 0.770 0.337 0.743 0.793
0.60 0.50 0.876 0.811 0.374 0.832 0.847
0.70 0.50 0.920 0.842 0.401 0.914 0.911
0.80 0.50 0.952 0.880 0.421 0.967 0.956
0.90 0.50 0.984 0.921 0.544 0.989 0.987
0.95 0.50 0.995 0.957 0.324 0.996 0.998
0.98 0.50 0.999 0.979 0.328 0.997 1.000
0.99 0.50 0.999 0.992 0.401 0.999 1.000
0.50 0.01 0.803 0.719 0.490 0.798 0.780
0.50 0.02 0.799 0.729 0.471 0.781 0.771
0.50 0.05 0.800 0.725 0.467 0.785 0.770
0.50 0.10 0.808 0.735 0.410 0.765 0.777
0.50 0.20 0.821 0.731 0.321 0.746 0.786
0.50 0.30 0.825 0.737 0.313 0.727 0.784
0.50 0.40 0.827 0.761 0.322 0.725 0.779
0.50 0.60 0.836 0.772 0.333 0.739 0.785
0.50 0.70 0.846 0.776 0.339 0.743 0.794
0.50 0.80 0.835 0.762 0.346 0.754 0.803
0.50 0.90 0.840 0.775 0.349 0.773 0.813
0.50 0.95 0.847 0.790 0.351 0.784 0.819
0.50 0.98 0.854 0.794 0.371 0.803 0.828
0.50 0.99 0.842 0.789 0.364 0.788 0.814
""",
    "f1": """
0.01 0.50 0.042 0.237 0.025 0.032 -
0.02 0.50 0.038 0.220 0.051 0.048 0.025
0.05 0.50 0.279 0.308 0.256 0.137 0.115
0.10 0.50 0.400 0.386 0.340 0.279 0.282
0.20 0.50 0.580 0.517 0.391 0.465 0.479
0.30 0.50 0.717 0.625 0.416 0.585 0.628
0.40 0.50 0.781 0.710 0.429 0.673 0.712
0.50 0.50 0.830 0.770 0.480 0.752 0.783
0.60 0.50 0.863 0.808 0.524 0.806 0.827
0.70 0.50 0.896 0.845 0.558 0.861 0.872
0.80 0.50 0.925 0.885 0.583 0.908 0.914
0.90 0.50 0.958 0.928 0.691 0.951 0.954
0.95 0.50 0.977 0.961 0.488 0.973 0.976
0.98 0.50 0.990 0.981 0.493 0.988 0.989
0.99 0.50 0.995 0.992 0.571 0.994 0.994
0.50 0.01 0.795 0.728 0.613 0.785 0.755
0.50 0.02 0.791 0.732 0.599 0.773 0.745
0.50 0.05 0.797 0.732 0.603 0.779 0.752
0.50 0.10 0.798 0.734 0.550 0.766 0.752
0.50 0.20 0.805 0.733 0.462 0.752 0.753
0.50 0.30 0.809 0.735 0.450 0.737 0.758
0.50 0.40 0.820 0.756 0.463 0.734 0.768
0.50 0.60 0.831 0.770 0.477 0.749 0.780
0.50 0.70 0.837 0.772 0.484 0.754 0.789
0.50 0.80 0.831 0.762 0.493 0.759 0.791
0.50 0.90 0.843 0.777 0.497 0.769 0.801
0.50 0.95 0.850 0.795 0.500 0.780 0.808
0.50 0.98 0.855 0.796 0.518 0.793 0.815
0.50 0.99 0.849 0.794 0.511 0.783 0.808
""",
}
PAPER_CLASSIFIERS = [
    "RandomForest",
    "DecisionTree",
    "GaussianNB",
    "LogisticRegression",
    "KNeighbors",
]


def paper_frame() -> pl.DataFrame:
    """The paper's supplementary means as a long frame (metric, ir, gr, classifier, paper)."""
    rows = []
    for metric, text in PAPER_ROWS.items():
        for line in text.strip().splitlines():
            ir, gr, *vals = line.split()
            for clf, v in zip(PAPER_CLASSIFIERS, vals, strict=True):
                rows.append((metric, float(ir), float(gr), clf, None if v == "-" else float(v)))
    return pl.DataFrame(
        rows,
        schema=[
            ("metric", pl.String),
            ("ir", pl.Float64),
            ("gr", pl.Float64),
            ("classifier", pl.String),
            ("paper", pl.Float64),
        ],
        orient="row",
    )


def configurations() -> list[tuple[float, float]]:
    """(IR, GR) pairs: IR varied at GR = 0.5, then GR varied at IR = 0.5 (0.5/0.5 once)."""
    out = [(ir, 0.5) for ir in RATIOS]
    out += [(0.5, gr) for gr in RATIOS if gr != 0.5]
    return out


def make_models(seed: int) -> dict[str, object]:
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.tree import DecisionTreeClassifier

    # default settings; a random_state only where the estimator is random, for reproducibility
    return {
        "RandomForest": RandomForestClassifier(random_state=seed),
        "DecisionTree": DecisionTreeClassifier(random_state=seed),
        "GaussianNB": GaussianNB(),
        "LogisticRegression": LogisticRegression(),
        "KNeighbors": KNeighborsClassifier(),
        "MLP": MLPClassifier(random_state=seed),
    }


# package metric behind each reported name
PERF_METRICS = {
    "balanced_accuracy": "balanced_accuracy",
    "g_mean": "g_mean",
    "recall": "true_positive_rate",
    "f1": "f1_score",
}
FAIR_METRICS = {
    "AE": "accuracy",
    "SP": "selection_rate",
    "EO": "true_positive_rate",
    "PE": "false_positive_rate",
    "PPP": "positive_predictive_value",
    "NPP": "negative_predictive_value",
}


def _pipeline(preprocessing: str, categorical: list[str], numeric: list[str], model: Any) -> Any:
    """Feature preprocessing + ``model``, fitted on the training part of each holdout."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import KNNImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    if preprocessing == "authors":
        # every column of the matrix from _authors_features: codes imputed and scaled too
        return make_pipeline(KNNImputer(), StandardScaler(), model)
    if preprocessing == "pooled-ordinal":
        # categorical columns arrive ordinal-encoded (see _features) and pass through unscaled
        pre = ColumnTransformer(
            [
                ("cat", "passthrough", categorical),
                ("num", make_pipeline(KNNImputer(), StandardScaler()), numeric),
            ]
        )
    else:
        pre = ColumnTransformer(
            [
                (
                    "cat",
                    OneHotEncoder(handle_unknown="ignore", sparse_output=False),
                    categorical,
                ),
                ("num", StandardScaler(), numeric),
            ]
        )
    return make_pipeline(pre, model)


def _features(sub: pl.DataFrame, preprocessing: str, categorical: list[str]) -> Any:
    """The feature matrix (pandas) of one subset; ordinal codes for ``pooled-ordinal``."""
    x = sub.drop("income").to_pandas()
    if preprocessing == "pooled-ordinal":
        from sklearn.preprocessing import OrdinalEncoder

        # label-free: one code per category (sorted), the same in training and test parts
        x[categorical] = OrdinalEncoder().fit_transform(x[categorical])
    return x


def _authors_features(sub: pl.DataFrame) -> np.ndarray:
    """The authors' feature matrix of one subset (numpy, float; missing codes are NaN).

    Numeric columns, then the categorical ones ordinal-encoded on the whole subset (sorted
    categories; a missing value stays NaN for the pipeline's ``KNNImputer``); ``education`` is
    one constant, the code of the subset's first row, as the authors' code assigns
    ``OrdinalEncoder(categories=[EDUCATION_ORDER]).transform(...)[0]`` to the whole column.
    """
    from sklearn.preprocessing import OrdinalEncoder

    numeric = sub.select(AUTHORS_NUMERIC).to_numpy().astype(np.float64)
    cat = np.empty((sub.height, len(AUTHORS_CATEGORICAL)), dtype=object)
    for j, c in enumerate(AUTHORS_CATEGORICAL):
        cat[:, j] = [np.nan if v is None else v for v in sub[c].to_list()]
    codes = np.asarray(OrdinalEncoder().fit_transform(cat), dtype=np.float64)
    edu = OrdinalEncoder(categories=[EDUCATION_ORDER]).fit_transform(
        cat[:, [AUTHORS_CATEGORICAL.index("education")]]
    )
    codes[:, AUTHORS_CATEGORICAL.index("education")] = edu[0]
    return np.concatenate([numeric, codes], axis=1)


def stratum_sizes(n: int, ir: float, gr: float) -> list[tuple[str, str, int]]:
    """(sex, income, rows) of the authors' four strata, in their order (Python ``round``)."""
    return [
        ("Female", "<=50K", round(n * gr * (1 - ir))),
        ("Female", ">50K", round(n * gr * ir)),
        ("Male", "<=50K", round(n * (1 - gr) * (1 - ir))),
        ("Male", ">50K", round(n * (1 - gr) * ir)),
    ]


def authors_subset(adult: pl.DataFrame, n: int, ir: float, gr: float) -> pl.DataFrame:
    """The authors' subset: each stratum drawn as ``DataFrame.sample(n=k, random_state=2137)``.

    pandas draws the positions ``RandomState(2137).choice(len(stratum), k, replace=False)`` and
    takes the rows in that order; the strata keep ``adult``'s row order, so with the rows of
    ``load_adult(..., "authors")`` the subset is row for row the authors' one.
    """
    parts = []
    for sex, income, k in stratum_sizes(n, ir, gr):
        stratum = adult.filter(pl.col("sex") == sex, pl.col("income") == income)
        rng = np.random.RandomState(AUTHORS_RANDOM_STATE)
        parts.append(stratum[rng.choice(stratum.height, size=k, replace=False)])
    return pl.concat(parts)


def _splits(
    preprocessing: str, y: np.ndarray, holdouts: int, seed: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Train/test indices of the holdouts."""
    from sklearn.model_selection import ShuffleSplit, train_test_split

    idx = np.arange(len(y))
    if preprocessing in ("authors", "pooled-ordinal"):
        # the first k splits do not depend on n_splits, so --holdouts 5 = the paper's first 5
        splitter = ShuffleSplit(
            n_splits=holdouts, test_size=0.33, random_state=AUTHORS_RANDOM_STATE
        )
        yield from splitter.split(idx)
    else:
        for h in range(holdouts):
            tr, te = train_test_split(idx, test_size=0.33, stratify=y, random_state=seed * 1000 + h)
            yield tr, te


def load_adult(data: Path, preprocessing: str) -> pl.DataFrame:
    """Adult rows with the features of ``preprocessing`` and ``income``."""
    adult = pl.read_parquet(data)
    if preprocessing == "authors":
        # adult.data in file order, less its first record (read as a header by the authors)
        return adult.filter(pl.col("split") == "train").drop("split", "fnlwgt").slice(1)
    adult = adult.drop("split")
    if preprocessing == "pooled-ordinal":
        strings = [c for c, t in adult.schema.items() if t == pl.String and c != "income"]
        return adult.drop("fnlwgt").with_columns(pl.col(strings).fill_null("?"))
    return adult.drop_nulls()


def run(
    holdouts: int,
    seed: int,
    data: Path,
    preprocessing: str = "authors",
    configs: Sequence[tuple[float, float]] | None = None,
    classifiers: Sequence[str] | None = None,
    n: int = 1100,
) -> pl.DataFrame:
    """Test-part predictions: one row per (IR, GR, holdout, classifier, test row)."""
    if preprocessing not in PREPROCESSING:
        raise ValueError(f"preprocessing must be one of {PREPROCESSING}, got {preprocessing!r}")
    adult = load_adult(data, preprocessing)
    features = [c for c in adult.columns if c != "income"]
    categorical = [c for c in features if adult.schema[c] == pl.String]
    numeric = [c for c in features if c not in categorical]
    names = list(CLASSIFIERS if classifiers is None else classifiers)
    all_configs = configurations()
    chosen = all_configs if configs is None else list(configs)
    parts = []
    t0 = time.perf_counter()
    for k, (ir, gr) in enumerate(chosen):
        x: Any
        if preprocessing == "authors":
            sub = authors_subset(adult, n, ir, gr)
            x = _authors_features(sub)
        else:
            ci = all_configs.index((ir, gr))  # the subset's draw does not depend on the selection
            sub = sample_ir_gr(
                adult,
                y_true="income",
                group="sex",
                protected="Female",
                n=n,
                ir=ir,
                gr=gr,
                seed=seed + ci,
                pos_label=">50K",
            )
            x = _features(sub, preprocessing, categorical)
        y = (sub["income"] == ">50K").to_numpy()
        sex = sub["sex"].to_numpy()
        for h, (tr, te) in enumerate(_splits(preprocessing, y, holdouts, seed)):
            models = make_models(AUTHORS_RANDOM_STATE if preprocessing == "authors" else seed + h)
            for name in names:
                pipe = _pipeline(preprocessing, categorical, numeric, models[name])
                x_tr, x_te = (
                    (x[tr], x[te]) if preprocessing == "authors" else (x.iloc[tr], x.iloc[te])
                )
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pipe.fit(x_tr, y[tr])
                    pred = np.asarray(pipe.predict(x_te)).astype(bool)
                parts.append(
                    pl.DataFrame(
                        {"y": y[te], "pred": pred, "sex": sex[te]},
                        schema={"y": pl.Boolean, "pred": pl.Boolean, "sex": pl.String},
                    ).with_columns(
                        ir=pl.lit(ir),
                        gr=pl.lit(gr),
                        holdout=pl.lit(h, dtype=pl.Int64),
                        classifier=pl.lit(name),
                    )
                )
        print(
            f"[{k + 1}/{len(chosen)}] IR={ir} GR={gr} done at {time.perf_counter() - t0:.0f}s",
            flush=True,
        )
    return pl.concat(parts)


def evaluate(predictions: pl.DataFrame, sign: str = "male-minus-female") -> pl.DataFrame:
    """Per-holdout scores with the package's functions: one row per (IR, GR, holdout, classifier).

    Performance on the whole test part (:func:`~polars_fairmetrics.metrics_from_counts`);
    fairness = rate(first sex) − rate(second sex) of ``sign`` through the disparity engine
    (:func:`~polars_fairmetrics.disparities` with the second sex as reference). 0/0 is null.
    """
    if sign not in SIGNS:
        raise ValueError(f"sign must be one of {SIGNS}, got {sign!r}")
    group, reference = ("Male", "Female") if sign == "male-minus-female" else ("Female", "Male")
    keys = ["ir", "gr", "holdout", "classifier"]
    # one integer per holdout run; the package treats a "replicate" column as a partition
    runs = predictions.select(keys).unique(maintain_order=True).with_row_index("run")
    rows = predictions.join(runs, on=keys, how="left")
    overall = confusion_counts(rows, y_true="y", y_pred="pred", by="run")
    perf = (
        metrics_from_counts(
            overall.rename({"run": "replicate"}), metrics=list(PERF_METRICS.values())
        )
        .pivot(on="metric", index="replicate", values="value")
        .rename({v: k for k, v in PERF_METRICS.items()})
    )
    by_sex = confusion_counts(rows, y_true="y", y_pred="pred", by=["run", "sex"])
    # a test part without one of the sexes (possible at GR = 0.01: ~4 women in 363 rows) has
    # no gap: leave it out here, so its fairness values are null (counted as undefined)
    complete = by_sex.group_by("run").agg(pl.len()).filter(pl.col("len") == 2).select("run")
    by_sex = by_sex.join(complete, on="run", how="semi")
    gaps = (
        disparities(
            by_sex.rename({"run": "replicate"}),
            by="sex",
            metrics=list(FAIR_METRICS.values()),
            reference=reference,
        )
        .filter(pl.col("sex") == group)
        .pivot(on="metric", index="replicate", values="difference")
        .rename({v: k for k, v in FAIR_METRICS.items()})
    )
    out = (
        runs.rename({"run": "replicate"})
        .join(perf, on="replicate", how="left")
        .join(gaps, on="replicate", how="left")
    )
    return out.select(*keys, *PERF, *FAIR).with_columns(
        pl.col(*PERF, *FAIR).cast(pl.Float64).fill_nan(None)
    )


def summarise(results: pl.DataFrame) -> pl.DataFrame:
    metrics = PERF + FAIR
    long = results.unpivot(
        index=["ir", "gr", "holdout", "classifier"],
        on=metrics,
        variable_name="metric",
        value_name="value",
    )
    return long.group_by("metric", "ir", "gr", "classifier").agg(
        pl.col("value").mean().alias("mean"),
        pl.col("value").std().alias("std"),
        pl.col("value").null_count().alias("undefined"),
        pl.len().alias("holdouts"),
    )


def _cell(mean: float | None, std: float | None) -> str:
    if mean is None:
        return "–"
    return f"{mean:.3f} ({0.0 if std is None else std:.3f})"


# the published means have 3 decimals: a true mean is known only to within half a unit
PAPER_ROUNDING = 0.0005


def comparison(summary: pl.DataFrame) -> pl.DataFrame:
    """Our subset means beside the published ones: one row per (metric, IR, GR, classifier).

    ``se`` = std / sqrt(defined holdouts); ``within_2se`` = |ours − paper| <= 2 se;
    ``within_2se_rounding`` = |ours − paper| <= 2 se + 0.0005 (the rounding of the published
    3 decimals); ``same_3dp`` = ours rounded to 3 decimals equals the published value (each null
    where either mean is missing).
    """
    both = summary.join(paper_frame(), on=["metric", "ir", "gr", "classifier"], how="inner")
    defined = pl.col("holdouts") - pl.col("undefined")
    return both.with_columns(
        (pl.col("mean") - pl.col("paper")).alias("diff"),
        (pl.col("std").fill_null(0.0) / defined.cast(pl.Float64).sqrt()).alias("se"),
    ).with_columns(
        pl.when(pl.col("diff").is_not_null())
        .then(pl.col("diff").abs() <= 2 * pl.col("se"))
        .alias("within_2se"),
        pl.when(pl.col("diff").is_not_null())
        .then(pl.col("diff").abs() <= 2 * pl.col("se") + PAPER_ROUNDING)
        .alias("within_2se_rounding"),
        pl.when(pl.col("diff").is_not_null())
        .then((pl.col("mean").round(3) - pl.col("paper")).abs() < 1e-9)
        .alias("same_3dp"),
    )


def write_markdown(
    summary: pl.DataFrame,
    out: Path,
    holdouts: int,
    seed: int,
    elapsed: float,
    command: str,
    preprocessing: str,
    sign: str,
) -> None:
    from sklearn import __version__ as sklearn_version

    both = summary.join(paper_frame(), on=["metric", "ir", "gr", "classifier"], how="left")
    first, second = ("Male", "Female") if sign == "male-minus-female" else ("Female", "Male")
    cmp = comparison(summary).filter(pl.col("within_2se").is_not_null())
    overall = int(cmp["within_2se"].sum()) / cmp.height if cmp.height else None
    lines = [
        "# Case study: fairness of six classifiers on Adult under controlled IR and GR",
        "",
        f"Generated by `{command}` ({holdouts} holdouts per subset, preprocessing "
        f"`{preprocessing}`, sign `{sign}`, seed {seed}, scikit-learn {sklearn_version}; wall "
        f"time {elapsed / 60:.1f} min on a shared machine). Cells are mean (std, ddof = 1) over "
        "the holdouts; *paper* is the mean "
        "published in the paper's supplementary tables (MLP is not in them). Fairness measures "
        f"are rate({first}) − rate({second}); undefined values (0/0) are left out of the mean "
        "and counted in the last tables.",
        "",
    ]
    if overall is not None:
        rounding = int(cmp["within_2se_rounding"].sum())
        same = int(cmp["same_3dp"].sum())
        lines += [
            f"**Agreement with the paper:** {int(cmp['within_2se'].sum())} of {cmp.height} "
            f"published means ({overall:.0%}) are within 2 standard errors "
            "(std / sqrt(holdouts)) of ours; "
            f"{rounding} ({rounding / cmp.height:.0%}) are within 2 s.e. + 0.0005 (the "
            "published means are rounded to 3 decimals); "
            f"{same} ({same / cmp.height:.0%}) equal ours rounded to 3 decimals.",
            "",
        ]
    for metric in PERF:
        lines += [
            f"## {metric}",
            "",
            "| IR | GR | "
            + " | ".join(f"{c} | paper" if c in PAPER_CLASSIFIERS else c for c in CLASSIFIERS)
            + " |",
            "|" + "---|" * (2 + len(CLASSIFIERS) + len(PAPER_CLASSIFIERS)),
        ]
        sub = both.filter(pl.col("metric") == metric)
        present = set(summary.select("ir", "gr").iter_rows())
        for ir, gr in [c for c in configurations() if c in present]:
            cells = []
            for c in CLASSIFIERS:
                r = sub.filter(pl.col("ir") == ir, pl.col("gr") == gr, pl.col("classifier") == c)
                if r.height == 0:
                    cells.append("")
                    if c in PAPER_CLASSIFIERS:
                        cells.append("")
                    continue
                row = r.row(0, named=True)
                cells.append(_cell(row["mean"], row["std"]))
                if c in PAPER_CLASSIFIERS:
                    cells.append("–" if row["paper"] is None else f"{row['paper']:.3f}")
            lines.append(f"| {ir} | {gr} | " + " | ".join(cells) + " |")
        lines.append("")
    agg = (
        comparison(summary)
        .filter(pl.col("within_2se").is_not_null())
        .group_by("metric", "classifier")
        .agg(
            pl.col("diff").mean().alias("mean_diff"),
            pl.col("diff").abs().max().alias("max_abs_diff"),
            pl.col("within_2se").sum().alias("within"),
            pl.col("within_2se_rounding").sum().alias("rounding"),
            pl.col("same_3dp").sum().alias("same"),
            pl.len().alias("cells"),
        )
        .sort("metric", "classifier")
    )
    lines += [
        "## Agreement with the paper (ours − paper, per metric and classifier)",
        "",
        "*within 2 s.e.*: |ours − paper| ≤ 2 std / sqrt(holdouts); *+ rounding*: ≤ 2 s.e. + "
        "0.0005; *same to 3 dp*: ours rounded to 3 decimals = paper.",
        "",
        "| metric | classifier | mean diff | max abs diff | within 2 s.e. | share "
        "| + rounding | same to 3 dp |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for rec in agg.iter_rows(named=True):
        lines.append(
            f"| {rec['metric']} | {rec['classifier']} | {rec['mean_diff']:+.3f} | "
            f"{rec['max_abs_diff']:.3f} | {rec['within']}/{rec['cells']} | "
            f"{rec['within'] / rec['cells']:.0%} | {rec['rounding']}/{rec['cells']} | "
            f"{rec['same']}/{rec['cells']} |"
        )
    for col in ("metric", "classifier"):
        tot = cmp.group_by(col).agg(
            pl.col("within_2se").sum(),
            pl.col("within_2se_rounding").sum(),
            pl.col("same_3dp").sum(),
            pl.len(),
        )
        lines += [
            "",
            f"| {col} | within 2 s.e. | share | + rounding | same to 3 dp |",
            "|---|---|---|---|---|",
        ]
        for rec in tot.sort(col).iter_rows(named=True):
            lines.append(
                f"| {rec[col]} | {rec['within_2se']}/{rec['len']} | "
                f"{rec['within_2se'] / rec['len']:.0%} | "
                f"{rec['within_2se_rounding']}/{rec['len']} | {rec['same_3dp']}/{rec['len']} |"
            )
    outside = cmp.filter(~pl.col("within_2se")).sort("metric", "classifier", "gr", "ir")
    lines += [
        "",
        "### Published means not within 2 s.e. of ours",
        "",
        "| metric | classifier | IR | GR | ours (std) | paper | diff | 2 s.e. | + rounding |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for rec in outside.iter_rows(named=True):
        lines.append(
            f"| {rec['metric']} | {rec['classifier']} | {rec['ir']} | {rec['gr']} | "
            f"{_cell(rec['mean'], rec['std'])} | {rec['paper']:.3f} | {rec['diff']:+.4f} | "
            f"{2 * rec['se']:.4f} | {'yes' if rec['within_2se_rounding'] else 'no'} |"
        )
    lines += ["", "## Fairness measures (mean (std) over holdouts)", ""]
    for varied, fixed_col in (("ir", "gr"), ("gr", "ir")):
        lines += [
            f"### varying {varied.upper()} ({fixed_col.upper()} = 0.5)",
            "",
            "| classifier | " + varied.upper() + " | " + " | ".join(FAIR) + " |",
            "|" + "---|" * (2 + len(FAIR)),
        ]
        sub = summary.filter(pl.col(fixed_col) == 0.5)
        for c in [c for c in CLASSIFIERS if c in set(summary["classifier"])]:
            for r in sorted(set(sub[varied].to_list())):
                cells = []
                for f in FAIR:
                    x = sub.filter(
                        pl.col("classifier") == c, pl.col(varied) == r, pl.col("metric") == f
                    )
                    if x.height == 0:
                        cells.append("")
                        continue
                    row = x.row(0, named=True)
                    u = f" [{row['undefined']} undef.]" if row["undefined"] else ""
                    cells.append(_cell(row["mean"], row["std"]) + u)
                lines.append(f"| {c} | {r} | " + " | ".join(cells) + " |")
        lines.append("")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--holdouts", type=int, default=50)
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="subset draws and estimators (not used by --preprocessing authors)",
    )
    parser.add_argument("--preprocessing", choices=PREPROCESSING, default="authors")
    parser.add_argument("--sign", choices=SIGNS, default="male-minus-female")
    parser.add_argument(
        "--configs",
        nargs="+",
        default=None,
        metavar="IR:GR",
        help="only these subsets, e.g. 0.5:0.5 0.1:0.5 (default: all 29)",
    )
    parser.add_argument("--classifiers", nargs="+", choices=CLASSIFIERS, default=None)
    parser.add_argument("--n", type=int, default=1100, help="rows per subset")
    parser.add_argument("--data", type=Path, default=Path("../shared/data/adult.parquet"))
    parser.add_argument("--out", type=Path, default=Path("docs/case_study_results.md"))
    parser.add_argument("--raw", type=Path, default=None, help="parquet of per-holdout scores")
    parser.add_argument(
        "--predictions", type=Path, default=None, help="parquet of the test-part predictions"
    )
    args = parser.parse_args()
    configs = None
    if args.configs is not None:
        configs = [(float(c.split(":")[0]), float(c.split(":")[1])) for c in args.configs]
        unknown = [c for c in configs if c not in configurations()]
        if unknown:
            parser.error(f"--configs: not a subset of the study: {unknown}")
    t0 = time.perf_counter()
    predictions = run(
        args.holdouts, args.seed, args.data, args.preprocessing, configs, args.classifiers, args.n
    )
    if args.predictions is not None:
        predictions.write_parquet(args.predictions)
    results = evaluate(predictions, args.sign)
    if args.raw is not None:
        results.write_parquet(args.raw)
    elapsed = time.perf_counter() - t0
    command = (
        "PYTHONPATH=. python benchmarks/case_study_adult.py "
        f"--holdouts {args.holdouts} --preprocessing {args.preprocessing} --sign {args.sign} "
        f"--seed {args.seed}"
        + ("" if args.configs is None else " --configs " + " ".join(args.configs))
        + ("" if args.classifiers is None else " --classifiers " + " ".join(args.classifiers))
        + ("" if args.n == 1100 else f" --n {args.n}")
        + f" --out {args.out}"
    )
    write_markdown(
        summarise(results),
        args.out,
        args.holdouts,
        args.seed,
        elapsed,
        command,
        args.preprocessing,
        args.sign,
    )
    print(f"wrote {args.out} in {elapsed:.0f}s")


if __name__ == "__main__":
    main()
