"""The case-study script (benchmarks/case_study_adult.py): options wired, scores against numpy.

Runs on a small synthetic frame with Adult's columns (so it needs no data file); one subset,
one or two holdouts, one classifier.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import polars as pl
import pytest

pytest.importorskip("sklearn")

SCRIPT = Path(__file__).parent.parent / "benchmarks" / "case_study_adult.py"


@pytest.fixture(scope="module")
def cs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("case_study_adult", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["case_study_adult"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def adult_like(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """600 rows with Adult's schema; nulls in a categorical column, as in adult.parquet."""
    rng = np.random.default_rng(7)
    n = 600
    sex = np.repeat(["Female", "Male"], n // 2)
    income = np.tile(np.repeat(["<=50K", ">50K"], n // 4), 2)
    rich = income == ">50K"
    workclass = rng.choice(["Private", "State-gov", "Self-emp"], n).astype(object)
    workclass[rng.random(n) < 0.1] = None
    frame = pl.DataFrame(
        {
            "age": (30 + 10 * rich + rng.integers(0, 20, n)).astype(np.int64),
            "workclass": workclass,
            "fnlwgt": rng.integers(10_000, 500_000, n),
            "education": rng.choice(["HS-grad", "Bachelors", "Masters"], n),
            "education_num": rng.integers(5, 16, n),
            "marital_status": rng.choice(["Married", "Never-married"], n),
            "occupation": rng.choice(["Sales", "Tech-support", "Craft-repair"], n),
            "relationship": rng.choice(["Husband", "Wife", "Own-child"], n),
            "race": rng.choice(["White", "Black"], n),
            "sex": sex,
            "capital_gain": rng.integers(0, 2, n) * rng.integers(0, 10_000, n),
            "capital_loss": np.zeros(n, dtype=np.int64),
            "hours_per_week": (35 + 10 * rich + rng.integers(0, 10, n)).astype(np.int64),
            "native_country": rng.choice(["United-States", "Mexico"], n),
            "income": income,
            "split": rng.choice(["train", "test"], n),
        },
        schema_overrides={"workclass": pl.String},
    )
    path = tmp_path_factory.mktemp("adult") / "adult_like.parquet"
    frame.write_parquet(path)
    return path


def _oracle(pred: pl.DataFrame, first: str, second: str) -> dict[str, float]:
    """Plain numpy: rate(first sex) − rate(second sex) and whole-test performance."""
    y, p, s = (pred[c].to_numpy() for c in ("y", "pred", "sex"))

    def rates(mask: np.ndarray) -> dict[str, float]:
        yy, pp = y[mask], p[mask]
        tp, fp = np.sum(yy & pp), np.sum(~yy & pp)
        tn, fn = np.sum(~yy & ~pp), np.sum(yy & ~pp)

        def div(a: float, b: float) -> float:
            return float(a / b) if b else float("nan")

        return {
            "AE": div(tp + tn, mask.sum()),
            "SP": div(tp + fp, mask.sum()),
            "EO": div(tp, tp + fn),
            "PE": div(fp, fp + tn),
            "PPP": div(tp, tp + fp),
            "NPP": div(tn, tn + fn),
            "recall": div(tp, tp + fn),
            "tnr": div(tn, tn + fp),
            "f1": div(2 * tp, 2 * tp + fp + fn),
        }

    a, b, all_ = rates(s == first), rates(s == second), rates(np.ones_like(y))
    out = {k: a[k] - b[k] for k in ("AE", "SP", "EO", "PE", "PPP", "NPP")}
    out["recall"] = all_["recall"]
    out["f1"] = all_["f1"]
    out["balanced_accuracy"] = (all_["recall"] + all_["tnr"]) / 2
    out["g_mean"] = float(np.sqrt(all_["recall"] * all_["tnr"]))
    return out


@pytest.mark.parametrize("preprocessing", ["authors", "pooled-ordinal", "onehot-stratified"])
def test_run_and_evaluate_match_numpy(cs: ModuleType, adult_like: Path, preprocessing: str) -> None:
    pred = cs.run(2, 0, adult_like, preprocessing, [(0.5, 0.5)], ["GaussianNB"], n=200)
    assert pred.group_by("holdout").len()["len"].to_list() == [66, 66]  # 33 % of 200
    for sign, (first, second) in {
        "male-minus-female": ("Male", "Female"),
        "female-minus-male": ("Female", "Male"),
    }.items():
        scores = cs.evaluate(pred, sign)
        assert scores.height == 2
        for h in (0, 1):
            got = scores.filter(pl.col("holdout") == h).row(0, named=True)
            want = _oracle(pred.filter(pl.col("holdout") == h), first, second)
            for k, v in want.items():
                if np.isnan(v):
                    assert got[k] is None, k
                else:
                    assert got[k] == pytest.approx(v, abs=1e-12), k


def test_sign_negates_every_gap(cs: ModuleType, adult_like: Path) -> None:
    pred = cs.run(1, 0, adult_like, "authors", [(0.5, 0.5)], ["DecisionTree"], n=200)
    mf, fm = cs.evaluate(pred, "male-minus-female"), cs.evaluate(pred, "female-minus-male")
    for k in cs.FAIR:
        if mf[k][0] is not None:
            assert mf[k][0] == pytest.approx(-fm[k][0]), k
    for k in cs.PERF:
        assert mf[k][0] == fm[k][0], k


def test_preprocessing_options_differ_as_documented(cs: ModuleType, adult_like: Path) -> None:
    raw = pl.read_parquet(adult_like)
    authors = cs.load_adult(adult_like, "authors")
    pooled = cs.load_adult(adult_like, "pooled-ordinal")
    onehot = cs.load_adult(adult_like, "onehot-stratified")
    assert "fnlwgt" not in authors.columns and "fnlwgt" not in pooled.columns
    assert "fnlwgt" in onehot.columns
    # authors: the train split (adult.data) in file order, less its first record; nulls kept
    train = raw.filter(pl.col("split") == "train").drop("split", "fnlwgt")
    assert authors.equals(train.slice(1))
    assert authors["workclass"].null_count() == train.slice(1)["workclass"].null_count() > 0
    # pooled-ordinal: both splits, a missing category kept as "?"; onehot-stratified drops it
    assert pooled.height == 600 and pooled["workclass"].null_count() == 0
    assert (pooled["workclass"] == "?").sum() == 600 - onehot.height > 0
    # authors and pooled-ordinal: the paper code's non-stratified ShuffleSplit, independent of
    # n_splits and of --seed
    y = np.tile([True, False, False, False], 50)
    first = [te for _, te in cs._splits("authors", y, 3, 0)]
    again = [te for _, te in cs._splits("pooled-ordinal", y, 1, 99)]
    np.testing.assert_array_equal(first[0], again[0])
    strat = [te for _, te in cs._splits("onehot-stratified", y, 3, 0)]
    assert all(y[te].sum() in (16, 17) for te in strat)  # stratified: 25 % positives
    assert any(y[te].sum() not in (16, 17) for te in first)
    with pytest.raises(ValueError, match="preprocessing"):
        cs.run(1, 0, adult_like, "label-encoded", [(0.5, 0.5)], ["GaussianNB"], n=200)
    with pytest.raises(ValueError, match="sign"):
        cs.evaluate(pl.DataFrame(), "protected-minus-reference")


def test_stratum_sizes_round_half_to_even(cs: ModuleType) -> None:
    # the paper's example: IR = 0.5, GR = 0.1 -> 55 poor women, 55 rich women, 495 + 495 men
    sizes = cs.stratum_sizes(1100, 0.5, 0.1)
    assert [k for *_, k in sizes] == [55, 55, 495, 495]
    assert [(s, i) for s, i, _ in sizes] == [
        ("Female", "<=50K"),
        ("Female", ">50K"),
        ("Male", "<=50K"),
        ("Male", ">50K"),
    ]
    # 550 * 0.01 = 5.5 -> 6 and 544.5 -> 544 (Python's round: half to even)
    assert [k for *_, k in cs.stratum_sizes(1100, 0.01, 0.5)] == [544, 6, 544, 6]
    for ir, gr in cs.configurations():
        assert sum(k for *_, k in cs.stratum_sizes(1100, ir, gr)) == 1100


def test_authors_subset_is_pandas_sample(cs: ModuleType, adult_like: Path) -> None:
    pd = pytest.importorskip("pandas")
    adult = cs.load_adult(adult_like, "authors")
    got = cs.authors_subset(adult, 200, 0.3, 0.4)
    # oracle: the authors' calls, DataFrame.sample(n=k, random_state=2137) per stratum
    frame = adult.to_pandas()
    want = pd.concat(
        [
            frame[(frame["sex"] == s) & (frame["income"] == i)].sample(n=k, random_state=2137)
            for s, i, k in cs.stratum_sizes(200, 0.3, 0.4)
        ]
    ).reset_index(drop=True)
    assert got.height == 200 == len(want)
    assert got.equals(pl.from_pandas(want, schema_overrides=adult.schema))
    assert not got.is_duplicated().any()  # without replacement (all rows differ here)


def test_authors_features(cs: ModuleType, adult_like: Path) -> None:
    adult = cs.load_adult(adult_like, "authors")
    sub = cs.authors_subset(adult, 200, 0.5, 0.5)
    x = cs._authors_features(sub)
    numeric, categorical = cs.AUTHORS_NUMERIC, cs.AUTHORS_CATEGORICAL
    assert x.shape == (200, len(numeric) + len(categorical))
    np.testing.assert_array_equal(x[:, : len(numeric)], sub.select(numeric).to_numpy())
    codes = x[:, len(numeric) :]
    for j, c in enumerate(categorical):
        values = sub[c].to_list()
        missing = np.array([v is None for v in values])
        np.testing.assert_array_equal(np.isnan(codes[:, j]), missing, err_msg=c)
        if c == "education":
            # the authors' code writes the first row's code into the whole column
            assert np.all(codes[:, j] == cs.EDUCATION_ORDER.index(values[0]))
            continue
        # otherwise codes are ranks of the sorted categories present in the subset
        cats = sorted({v for v in values if v is not None})
        want = [np.nan if v is None else float(cats.index(v)) for v in values]
        np.testing.assert_array_equal(codes[:, j], want, err_msg=c)
    # the pipeline imputes the missing codes and scales every column
    pipe = cs._pipeline("authors", [], [], cs.make_models(0)["GaussianNB"])
    pipe.fit(x, (sub["income"] == ">50K").to_numpy())
    scaled = pipe[:-1].transform(x)
    assert not np.isnan(scaled).any()
    varies = np.nanstd(x, axis=0) > 0  # a constant column (education) becomes 0
    np.testing.assert_allclose(scaled.std(axis=0), np.where(varies, 1.0, 0.0), atol=1e-9)


def test_main_writes_options_and_agreement(
    cs: ModuleType, adult_like: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "results.md"
    argv = [
        "case_study_adult.py",
        "--holdouts=1",
        "--configs=0.5:0.5",
        "--classifiers=LogisticRegression",
        "--n=200",
        "--sign=female-minus-male",
        f"--data={adult_like}",
        f"--out={out}",
    ]
    monkeypatch.setattr(sys, "argv", argv)
    cs.main()
    text = out.read_text()
    assert "preprocessing `authors`" in text and "sign `female-minus-male`" in text
    assert "rate(Female) − rate(Male)" in text
    # one subset, one classifier with published means, four performance metrics
    assert "of 4 published means" in text
    agreement = text.split("## Agreement with the paper")[1].split("### Published means")[0]
    assert agreement.count("| LogisticRegression |") == 4 + 1  # a row per metric, a total


def test_test_part_without_one_sex_has_null_gaps(cs: ModuleType) -> None:
    # at GR = 0.01 a non-stratified test part can hold no woman: no gap, performance defined
    pred = pl.DataFrame(
        {
            "y": [True, False, True, False, True, False],
            "pred": [True, False, False, False, True, True],
            "sex": ["Male", "Male", "Female", "Female", "Male", "Male"],
            "ir": [0.5] * 6,
            "gr": [0.01] * 6,
            "holdout": [0, 0, 0, 0, 1, 1],
            "classifier": ["GaussianNB"] * 6,
        }
    )
    scores = cs.evaluate(pred, "male-minus-female").sort("holdout")
    assert scores["SP"].to_list() == [pytest.approx(0.5 - 0.0), None]
    assert scores["recall"].to_list() == [pytest.approx(0.5), pytest.approx(1.0)]
    assert scores["balanced_accuracy"][1] == pytest.approx(0.5)


def test_comparison_counts_the_published_rounding(cs: ModuleType) -> None:
    # published recall of RandomForest at IR = 0.99, GR = 0.5 is 0.999 (3 decimals)
    def summary(mean: float, std: float) -> pl.DataFrame:
        return pl.DataFrame(
            {
                "metric": ["recall"],
                "ir": [0.99],
                "gr": [0.5],
                "classifier": ["RandomForest"],
                "mean": [mean],
                "std": [std],
                "undefined": [0],
                "holdouts": [50],
            },
            schema_overrides={"undefined": pl.UInt32, "holdouts": pl.UInt32},
        )

    # 2 s.e. = 2 * 0.001 / sqrt(50) = 0.00028 < 0.0004 <= 0.00028 + 0.0005
    row = cs.comparison(summary(0.9994, 0.001)).row(0, named=True)
    assert row["paper"] == 0.999 and row["diff"] == pytest.approx(0.0004)
    assert row["se"] == pytest.approx(0.001 / np.sqrt(50))
    assert (row["within_2se"], row["within_2se_rounding"], row["same_3dp"]) == (False, True, True)
    row = cs.comparison(summary(0.9984, 0.0)).row(0, named=True)
    assert (row["within_2se"], row["within_2se_rounding"], row["same_3dp"]) == (False, False, False)
    row = cs.comparison(summary(0.9990, 0.0)).row(0, named=True)
    assert (row["within_2se"], row["within_2se_rounding"], row["same_3dp"]) == (True, True, True)
