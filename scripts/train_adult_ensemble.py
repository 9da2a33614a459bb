"""Train a bootstrap ensemble on UCI Adult and write its test-set predictions (dev-only).

Re-creates ``polars_fairmetrics/data/adult_ensemble.parquet``, the package data behind the
stability example in ``docs/stability.md``:

- data: ``adult.parquet`` (UCI Adult, Becker & Kohavi 1996, doi:10.24432/C5XW20, CC BY 4.0),
  its ``split`` column (train 32,561 rows / test 16,281 rows);
- features: every attribute except ``fnlwgt``, ``income`` and ``split`` (``sex`` and ``race``
  included, as a plain model would); categorical attributes one-hot encoded, missing as its own
  category;
- models: ``M`` (default 15) scikit-learn ``HistGradientBoostingClassifier`` fitted on bootstrap
  resamples of the train split (seed ``seed + j`` for model ``j``), Virny-style;
- output: one row per test row: ``row_id``, ``sex``, ``race``, ``high_income`` (1 = ``>50K``),
  ``p00 … p{M-1}`` (Float32 probability of ``>50K`` from each model).

Run: ``PYTHONPATH=. python scripts/train_adult_ensemble.py [--data PATH] [--models 15]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl
from sklearn.ensemble import HistGradientBoostingClassifier

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = Path("/work/shared/data/adult.parquet")
OUT = ROOT / "polars_fairmetrics" / "data" / "adult_ensemble.parquet"


def features(df: pl.DataFrame, categories: dict[str, list[str]]) -> np.ndarray:
    numeric = ["age", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
    blocks = [df.select(numeric).to_numpy().astype(np.float64)]
    for col, levels in categories.items():
        values = df[col].fill_null("?").to_numpy()
        blocks.append(np.stack([values == lv for lv in levels], axis=1).astype(np.float64))
    return np.hstack(blocks)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--models", type=int, default=15)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()

    adult = pl.read_parquet(args.data).with_row_index("row_id")
    train = adult.filter(pl.col("split") == "train")
    test = adult.filter(pl.col("split") == "test")
    cat_cols = [
        "workclass",
        "education",
        "marital_status",
        "occupation",
        "relationship",
        "race",
        "sex",
        "native_country",
    ]
    categories = {c: sorted(train[c].fill_null("?").unique().to_list()) for c in cat_cols}
    x_train, x_test = features(train, categories), features(test, categories)
    y_train = (train["income"] == ">50K").to_numpy()
    y_test = (test["income"] == ">50K").cast(pl.Int8).to_numpy()

    probs = {}
    for j in range(args.models):
        rng = np.random.default_rng(args.seed + j)
        idx = rng.integers(0, len(y_train), len(y_train))
        model = HistGradientBoostingClassifier(
            max_iter=60, learning_rate=0.1, random_state=args.seed + j
        )
        model.fit(x_train[idx], y_train[idx])
        probs[f"p{j:02d}"] = model.predict_proba(x_test)[:, 1].astype(np.float32)
        print(f"model {j}: test accuracy {np.mean((probs[f'p{j:02d}'] >= 0.5) == y_test):.4f}")

    out = pl.DataFrame(
        {
            "row_id": test["row_id"].cast(pl.Int32),
            "sex": test["sex"],
            "race": test["race"],
            "high_income": pl.Series(y_test, dtype=pl.Int8),
            **probs,
        }
    )
    out.write_parquet(args.out, compression="zstd", compression_level=19)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB, {out.height} rows)")


if __name__ == "__main__":
    main()
