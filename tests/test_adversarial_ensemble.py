"""Adversarial inputs for ensembles, calibration, model comparison, monitoring and the report.

Each test targets a class of inputs on which the public API gave a raw Polars error instead of
the package's, a silently wrong number, or a rendering that did not round-trip. Numbers are
checked against a brute-force oracle in plain Python / NumPy; no expected number is taken from
the package itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_fairmetrics as pfm
from polars_fairmetrics.exceptions import InvalidOptionError


def _frame(group: str) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    n = 40
    return pl.DataFrame(
        {
            "y": rng.integers(0, 2, n),
            group: rng.choice(["a", "b"], n),
            "p": rng.integers(0, 2, n),
            "q": rng.integers(0, 2, n),
            "s": rng.random(n),
            "s2": rng.random(n),
        }
    )


_CALLS: dict[str, Callable[[pl.DataFrame, str], Any]] = {
    "compare_models": lambda d, g: pfm.compare_models(d, y_true="y", predictions=["p", "q"], by=g),
    "ensemble_group_metrics": lambda d, g: pfm.ensemble_group_metrics(
        d, models=["s", "s2"], by=g, metrics="jitter"
    ),
    "ensemble_disparities": lambda d, g: pfm.ensemble_disparities(
        d, models=["s", "s2"], by=g, metrics="jitter"
    ),
    "ensemble_group_sums": lambda d, g: pfm.ensemble_group_sums(
        d, models=["s", "s2"], by=g, metrics="jitter"
    ),
    "calibration_metrics": lambda d, g: pfm.calibration_metrics(d, y_true="y", y_score="s", by=g),
    "calibration_disparities": lambda d, g: pfm.calibration_disparities(
        d, y_true="y", y_score="s", by=g
    ),
    "reliability_curve": lambda d, g: pfm.reliability_curve(d, y_true="y", y_score="s", by=g),
}

_OUTPUT_NAMES = [
    "metric",
    "value",
    "support",
    "ci_low",
    "n",
    "n_null",
    "n_w",
    "reference",
    "ratio",
    "value_sum",
    "bin",
    "bin_low",
    "bin_high",
    "mean_predicted",
    "fraction_positive",
]


@pytest.mark.parametrize("name", _OUTPUT_NAMES)
@pytest.mark.parametrize("function", sorted(_CALLS))
def test_group_column_named_like_an_output_column(function: str, name: str) -> None:
    """A group column named like any column of the result is the package's error, naming it,
    or a result whose group column holds the group values (never a raw duplicate-name error)."""
    data = _frame(name)
    try:
        out = _CALLS[function](data, name)
    except InvalidOptionError as err:
        assert f"group column {name!r}" in str(err)
        return
    assert set(out[name].unique().to_list()) <= {"a", "b", None}


def test_gate_line_names_a_null_group_and_escapes_text() -> None:
    """A failing null group is named ``g=null`` in the gate's log line (it was shown with no key,
    as if the overall row had failed); another attribute's key, null by construction in a table
    of attributes side by side, is left out; text is escaped so the line stays one line."""
    changes = pl.DataFrame(
        {
            "attribute": ["g", "g", "h"],
            "g": [None, "x\ny\x1b", None],
            "h": [None, None, 'a"b'],
            "model": ["m", "m", "m"],
            "metric": ["disparate_impact"] * 3,
            "value": [0.3, 0.2, 0.4],
            "ci_low": [0.1, 0.1, 0.1],
            "ci_high": [0.5, 0.3, 0.6],
        }
    )
    line = pfm.change_gate(changes, max_increase=0.05).line()
    assert "\n" not in line and "\x1b" not in line
    assert '[attribute="g", g=null, model="m"] = 0.3' in line
    assert '[attribute="g", g="x\\x0ay\\x1b", model="m"] = 0.2' in line
    assert '[attribute="h", h="a\\"b", model="m"] = 0.4' in line
    no_attribute = changes.drop("attribute", "h").head(1)
    line = pfm.change_gate(no_attribute, max_increase=0.05).line()
    assert '[g=null, model="m"] = 0.3' in line


_SUMS = pl.DataFrame(
    {
        "g": ["a", "b"],
        "metric": ["jitter", "label_stability"],
        "value_sum": [1.0, 3.0],
        "n": [2, 4],
        "n_null": [0, 1],
        "n_w": [2.0, 5.0],
    }
)


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("n", -2),
        ("n", 2.5),
        ("n_null", -1),
        ("value_sum", float("nan")),
        ("value_sum", float("inf")),
        ("n_w", -1.0),
        ("n_w", float("nan")),
        ("metric", "jiter"),
        ("metric", None),
    ],
)
@pytest.mark.parametrize("engine", ["eager", "in-memory", "streaming"])
def test_ensemble_sums_made_elsewhere_are_checked(column: str, value: Any, engine: str) -> None:
    """A sums table with an impossible count or sum, or an unknown metric, is an error naming
    the column (it gave a mean of -0.5, NaN, or a metric nobody computed)."""
    dtype = _SUMS.schema[column] if not isinstance(value, float) else pl.Float64
    bad = _SUMS.with_columns(pl.Series(column, [value, _SUMS[column][1]], dtype=dtype))
    with pytest.raises(InvalidOptionError, match=f"column '{column}' of the ensemble sums has"):
        if engine == "eager":
            pfm.ensemble_metrics_from_sums(bad, by="g")
        else:
            pfm.ensemble_metrics_from_sums(bad.lazy(), by="g").collect(engine=engine)


def test_ensemble_sums_valid_tables_give_the_oracle_means() -> None:
    """Whole-valued float counts, a null sum and a Categorical metric column are valid: the
    value is Σ w·v / Σ w (null for the null sum)."""
    ok = _SUMS.with_columns(
        pl.col("n").cast(pl.Float64),
        pl.Series("value_sum", [None, 3.0]),
        pl.col("metric").cast(pl.Categorical),
    )
    out = pfm.ensemble_metrics_from_sums(ok, by="g").sort("g")
    assert out["value"].to_list() == [None, 3.0 / 5.0]
    assert out["n"].to_list() == [2, 4]


def test_compare_models_long_rejects_a_repeated_or_absent_model() -> None:
    """The same model twice, or a model without a single record, is an error naming it; the
    latter gave all-null results for every model (each row lacked one model's prediction)."""
    rng = np.random.default_rng(3)
    rows = pl.DataFrame(
        {"r": range(20), "g": rng.choice(["a", "b"], 20), "y": rng.integers(0, 2, 20)}
    )
    long = pl.concat(
        [rows.with_columns(m=pl.lit(m), p=pl.Series(rng.integers(0, 2, 20))) for m in "xz"]
    )
    options: dict[str, Any] = {
        "y_true": "y",
        "y_pred": "p",
        "model": "m",
        "row_id": "r",
        "by": "g",
        "metrics": "selection_rate",
    }
    with pytest.raises(InvalidOptionError, match="model name 'x' is given twice"):
        pfm.compare_models_long(long, models=["x", "x"], **options)
    with pytest.raises(InvalidOptionError, match="model 'q' of models= has no record"):
        pfm.compare_models_long(long.lazy(), models=["x", "q"], **options).collect(
            engine="streaming"
        )
    out = pfm.compare_models_long(long, models=["z", "x"], **options)
    for (m, g), part in long.group_by("m", "g"):
        got = out.filter((pl.col("model") == m) & (pl.col("g") == g))["value"].item()
        assert got == pytest.approx(part["p"].mean())


def test_missing_reference_message_names_only_the_users_columns() -> None:
    """A reference missing from calibration_disparities named internal columns (`_pfm_unit`,
    `score`); with attributes side by side the groups listed carried the other attribute's
    null key. The message names the user's key, partition and the groups present."""
    df = pl.DataFrame(
        {
            "g": ["a", "a", "b", "b", "b"],
            "h": ["x", "y", "x", "y", "x"],
            "y": [1, 0, 1, 0, 1],
            "s": [0.9, 0.2, 0.4, 0.7, 0.6],
        }
    )
    with pytest.raises(pfm.ReferenceGroupError) as one:
        pfm.calibration_disparities(df, y_true="y", y_score="s", by="g", reference="z")
    assert str(one.value) == (
        "reference group 'z' not found in ['g'] (the data); groups present: g=\"a\", g=\"b\""
    )
    side_by_side = {"g": "a", "h": "z"}
    expected = (
        "reference group {'g': 'a', 'h': 'z'} not found in ['h'] (attribute='h'); "
        'groups present: h="x", h="y"'
    )
    with pytest.raises(pfm.ReferenceGroupError) as two:
        pfm.calibration_disparities(
            df, y_true="y", y_score="s", by=["g", "h"], separately=True, reference=side_by_side
        )
    assert str(two.value) == expected
    counts = pfm.confusion_counts(df, y_true="y", y_pred="y", by=["g", "h"], separately=True)
    with pytest.raises(pfm.ReferenceGroupError) as three:
        pfm.disparities(counts, reference=side_by_side)
    assert str(three.value) == expected


@pytest.fixture(scope="module")
def _store(tmp_path_factory: pytest.TempPathFactory) -> str:
    pytest.importorskip("deltalake")
    import datetime as dt

    store = str(tmp_path_factory.mktemp("monitor") / "store")
    rng = np.random.default_rng(4)
    for week in range(2):
        n = 80
        rows = pl.DataFrame(
            {
                "g": rng.choice(["a", "b"], n),
                "y": rng.integers(0, 2, n),
                "p": rng.integers(0, 2, n),
                "s": rng.random(n),
                "e0": rng.random(n),
                "e1": rng.random(n),
            }
        )
        pfm.append_batch(
            rows,
            store,
            batch_id=f"w{week}",
            period=dt.date(2024, 1, 1) + dt.timedelta(weeks=week),
            y_true="y",
            y_pred="p",
            y_score="s",
            by="g",
            ensemble=["e0", "e1"],
        )
    return store


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--what", "disparities", "--max-gap", "0"], "--max-gap applies to --what criteria"),
        (["--what", "calibration", "--criteria", "disparate_impact"], "--criteria applies"),
        (["--what", "stability", "--baseline-end", "2024-01-01"], "--baseline-end applies"),
        (["--what", "stability", "--metrics", "jiter"], "unknown ensemble metric 'jiter'"),
        (["--what", "calibration", "--metrics", "brier"], "unknown calibration metric 'brier'"),
        (["--metrics", "selection_rate"], "--metrics applies to --what disparities"),
        (["--max-increase", "0.1"], "--max-increase needs a baseline window"),
        (["--output", "table.txt"], "expected a .parquet, .csv or .ndjson file"),
    ],
)
def test_monitor_audit_refuses_options_it_would_ignore(
    _store: str, options: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An audit option the chosen table does not use was silently ignored: `--max-gap` with
    `--what disparities` never ran its gate and the job passed (exit 0); `--metrics` of a
    stability or calibration audit was dropped. Now exit 2 with the message, nothing printed."""
    from polars_fairmetrics.monitor import monitor_main

    code = monitor_main(["audit", _store, *options])
    captured = capsys.readouterr()
    assert code == 2
    assert message in captured.err
    assert captured.out == ""


def test_monitor_audit_metrics_choose_the_rows(
    _store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--metrics` of a stability audit keeps those metrics, and the values are the store's."""
    from polars_fairmetrics.monitor import monitor_main

    out = str(Path(_store).parent / "stability.parquet")
    code = monitor_main(
        ["audit", _store, "--what", "stability", "--metrics", "jitter", "--output", out]
    )
    capsys.readouterr()
    assert code == 0
    table = pl.read_parquet(out)
    assert table["metric"].unique().to_list() == ["jitter"]
    whole = pfm.ensemble_metrics_from_sums(pfm.read_ensemble_sums(_store, merge=True)).collect()
    expected = whole.filter(pl.col("metric") == "jitter").sort("g")["value"].to_list()
    assert table.sort("g")["value"].to_list() == pytest.approx(expected)


def test_a_file_where_the_store_should_be_is_the_packages_error(tmp_path: Path) -> None:
    """A store path that is a file gave deltalake's multi-line OSError ('Generic LocalFileSystem
    error'); it is a StoreError naming the path."""
    pytest.importorskip("deltalake")
    path = tmp_path / "rows.parquet"
    pl.DataFrame({"a": [1]}).write_parquet(path)
    with pytest.raises(pfm.StoreError, match=r"no count store at .*rows\.parquet"):
        pfm.store_batches(str(path))


@pytest.mark.parametrize("rows", [5, 17, 40])
def test_ensemble_largest_reference_is_the_group_with_most_rows(rows: int) -> None:
    """reference="largest" raised a raw Polars ColumnNotFoundError ('n'); it is the group with
    the most rows (ties: the first by key), and equals naming that group."""
    rng = np.random.default_rng(rows)
    df = pl.DataFrame(
        {
            "g": rng.choice(["a", "b", "c"], rows, p=[0.2, 0.5, 0.3]),
            "p1": rng.random(rows),
            "p2": rng.random(rows),
            "y": rng.integers(0, 2, rows),
        }
    )
    sizes = df["g"].value_counts()
    most = sizes["count"].max()
    largest = sorted(sizes.filter(pl.col("count") == most)["g"].to_list())[0]
    options: dict[str, Any] = {
        "models": ["p1", "p2"],
        "by": "g",
        "metrics": ["jitter", "mean_probability"],
    }
    got = pfm.ensemble_disparities(df, reference="largest", **options).sort("g", "metric")
    named = pfm.ensemble_disparities(df, reference=largest, **options).sort("g", "metric")
    assert got["reference_value"].to_list() == named["reference_value"].to_list()
    assert got["is_reference"].to_list() == named["is_reference"].to_list()
    assert set(got["reference"].to_list()) == {"largest"}
    for row in got.filter(pl.col("metric") == "mean_probability").iter_rows(named=True):
        ref = df.filter(pl.col("g") == largest)
        assert row["reference_value"] == pytest.approx(((ref["p1"] + ref["p2"]) / 2).mean())


def test_plot_trend_of_an_empty_table_says_so() -> None:
    """An empty trend table was reported as 'the table has several metrics []'."""
    pytest.importorskip("matplotlib")
    import datetime as dt

    empty = pl.DataFrame(
        {
            "period": [dt.date(2024, 1, 1)],
            "g": ["a"],
            "metric": ["disparate_impact"],
            "value": [1.0],
        }
    ).head(0)
    with pytest.raises(InvalidOptionError, match="the table has no rows"):
        pfm.plot_trend(empty)


# --- per-row ensemble metrics against a brute-force oracle, in every layout and engine --------

_PROB = st.one_of(
    st.none(),
    st.sampled_from([0.0, 1.0, 0.5, 0.25, 0.75, 0.001, 0.999]),
    st.floats(0, 1, allow_nan=False, width=32),
)


def _entropy(p: float) -> float:
    return 0.0 if p in (0.0, 1.0) else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def _oracle_row(ps: list[float | None]) -> dict[str, Any] | None:
    vals = sorted(float(p) for p in ps if p is not None)
    m = len(vals)
    if m == 0:
        return None
    mean = math.fsum(vals) / m
    k = sum(v >= 0.5 for v in vals)
    return {
        "n_models": m,
        "mean_probability": mean,
        "ensemble_label": mean >= 0.5,
        "std_probability": float(np.std(vals, ddof=1)) if m > 1 else None,
        "iqr_probability": float(np.subtract(*np.percentile(vals, [75, 25]))),
        "label_stability": abs(2 * k - m) / m,
        "jitter": 2 * k * (m - k) / (m * (m - 1)) if m > 1 else None,
        "aleatoric_uncertainty": float(np.mean([_entropy(v) for v in vals])),
        "overall_uncertainty": _entropy(mean),
    }


def _close(got: Any, want: Any) -> bool:
    if want is None or got is None:
        return got is None and want is None
    if isinstance(want, bool):
        return bool(got) == want
    return math.isclose(float(got), float(want), rel_tol=1e-9, abs_tol=1e-12)


@settings(max_examples=max(10, settings().max_examples // 4), deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda m: st.lists(st.lists(_PROB, min_size=m, max_size=m), min_size=1, max_size=6)
    ),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_per_row_metrics_match_the_oracle_in_every_layout(
    table: list[list[float | None]], float32: bool, rnd: Any
) -> None:
    """Each per-row metric equals the oracle (fsum of the sorted probabilities, numpy's std and
    percentiles, a count of the votes), in the wide, list and long layouts, on both engines,
    with Float32 probabilities, and with the models and the long records shuffled."""
    m = len(table[0])
    dtype = pl.Float32 if float32 else pl.Float64
    names = [f"m{j}" for j in range(m)]
    wide = pl.DataFrame(
        {"rid": list(range(len(table))), **{n: [r[j] for r in table] for j, n in enumerate(names)}},
        schema_overrides=dict.fromkeys(names, dtype),
    )
    as_f = [
        [
            None if v is None else float(np.array(v, dtype=np.float32 if float32 else np.float64))
            for v in r
        ]
        for r in table
    ]
    expected = [_oracle_row(r) for r in as_f]
    shuffled = names[:]
    rnd.shuffle(shuffled)
    long = wide.unpivot(index="rid", on=names, variable_name="model", value_name="p")
    long = long.sample(fraction=1.0, shuffle=True, seed=rnd.randint(0, 1000))
    results = {
        "wide": pfm.ensemble_sample_metrics(wide, models=names, keep=["rid"]),
        "wide-shuffled": pfm.ensemble_sample_metrics(
            wide.lazy(), models=shuffled, keep=["rid"]
        ).collect(engine="streaming"),
        "list": pfm.ensemble_sample_metrics(
            wide.select("rid", pl.concat_list(names).alias("L")), list_col="L", keep=["rid"]
        ),
        "long": pfm.ensemble_sample_metrics(
            long.lazy(), row_id="rid", model_col="model", prob_col="p"
        ).collect(engine="streaming"),
    }
    for layout, out in results.items():
        out = out.sort("rid")
        assert out.height == len(table), layout
        for want, row in zip(expected, out.iter_rows(named=True), strict=True):
            if want is None:
                assert row["n_models"] == 0 and row["mean_probability"] is None, layout
                continue
            for k, v in want.items():
                assert _close(row[k], v), (layout, k, row[k], v)
    base = results["wide"].sort("rid")
    for layout in ("wide-shuffled", "list", "long"):
        other = results[layout].sort("rid").select(base.columns)
        assert other.equals(base), layout  # bit-identical: a function of the set of values


def test_gap_gate_refuses_rows_it_cannot_check() -> None:
    """Metrics without a parity value were dropped from the check: a table of disparities (or a
    typo in a metric name) passed the gate with 0 values checked."""
    table = pl.DataFrame(
        {"g": ["a", "b"], "metric": ["selection_rate", "disparate_impact"], "value": [0.9, 0.5]}
    )
    with pytest.raises(InvalidOptionError, match=r"metric\(s\) \['selection_rate'\]"):
        pfm.gap_gate(table, max_gap=0.1)
    only = pfm.gap_gate(table.filter(pl.col("metric") == "disparate_impact"), max_gap=0.1)
    assert only.failed and only.n_checked == 1  # |0.5 - 1| > 0.1


def test_window_change_of_windows_with_different_key_dtypes() -> None:
    """A String key in one window and a Categorical one in the other gave a raw SchemaError."""
    rows = pl.DataFrame({"g": ["a", "b"] * 10, "y": [0, 1, 1, 0] * 5, "p": [1, 1, 0, 0] * 5})
    text = pfm.confusion_counts(rows, y_true="y", y_pred="p", by="g")
    categorical = pfm.confusion_counts(
        rows.with_columns(pl.col("g").cast(pl.Categorical)), y_true="y", y_pred="p", by="g"
    )
    with pytest.raises(InvalidOptionError, match="column 'g' has dtype String in the baseline"):
        pfm.window_change(text, categorical, n_resamples=0)
    same = pfm.window_change(text, text, criteria="disparate_impact", n_resamples=0)
    assert same["value"].to_list() == [0.0, 0.0]  # the same window: no change


def test_compare_models_intervals_do_not_depend_on_the_order_of_the_models() -> None:
    """With the same seed, permuting the models (list or mapping) changed every interval: the
    joint count table, and so the bootstrap draws, was laid out in the given order."""
    rng = np.random.default_rng(0)
    n = 300
    df = pl.DataFrame(
        {
            "g": rng.choice(["a", "b"], n),
            "y": rng.integers(0, 2, n),
            **{m: rng.integers(0, 2, n) for m in "pqr"},
        }
    )
    options: dict[str, Any] = {
        "y_true": "y",
        "by": "g",
        "metrics": ["selection_rate", "tpr"],
        "intervals": 60,
        "baseline_model": "q",
    }
    first = pfm.compare_models(df, predictions=["p", "q", "r"], **options)
    for order in (["r", "q", "p"], ["q", "p", "r"], {"r": "r", "p": "p", "q": "q"}):
        assert pfm.compare_models(df, predictions=order, **options).equals(first), order
    assert first["ci_low"].null_count() == 0  # the intervals were computed


@pytest.mark.parametrize("width", [0, -5, 1, 59, True, "80", 2.5])
def test_terminal_width_below_the_layout_is_an_error(width: Any) -> None:
    """to_terminal(width=1) raised textwrap's ValueError ('invalid width -1'), width='80' a
    TypeError, and a width of 10 gave lines of 45 columns: the layout needs 60."""
    df = pl.DataFrame({"g": ["a", "b"] * 10, "y": [0, 1, 1, 0] * 5, "p": [1, 1, 0, 0] * 5})
    report = pfm.audit(df, y_true="y", y_pred="p", by="g")
    with pytest.raises(InvalidOptionError, match="width must be an integer of at least 60"):
        report.to_terminal(width=width)
    text = report.to_terminal(width=60)
    assert max(len(line) for line in text.splitlines()) <= 60


_EMPTY_METRICS: dict[str, Callable[[pl.DataFrame], object]] = {
    "metrics_from_counts": lambda d: pfm.metrics_from_counts(
        pfm.confusion_counts(d, y_true="y", y_score="s", threshold=0.5, by="g"), metrics=[]
    ),
    "disparities": lambda d: pfm.disparities(
        d, y_true="y", y_score="s", threshold=0.5, by="g", metrics=[]
    ),
    "calibration_metrics": lambda d: pfm.calibration_metrics(
        d, y_true="y", y_score="s", by="g", metrics=[]
    ),
    "calibration_disparities": lambda d: pfm.calibration_disparities(
        d, y_true="y", y_score="s", by="g", metrics=[]
    ),
    "ensemble_group_metrics": lambda d: pfm.ensemble_group_metrics(
        d, models=["s", "s2"], by="g", metrics=[]
    ),
}


@pytest.mark.parametrize("call", sorted(_EMPTY_METRICS))
def test_an_empty_metric_list_is_an_error_everywhere(call: str) -> None:
    """``metrics=[]`` is an error for every function with the option: calibration read it as
    "every metric" (``metrics or DEFAULT``), the others refused it."""
    df = pl.DataFrame(
        {
            "g": ["a", "a", "b", "b"],
            "y": [1, 0, 1, 0],
            "s": [0.9, 0.2, 0.6, 0.4],
            "s2": [0.8, 0.3, 0.5, 0.1],
        }
    )
    with pytest.raises(InvalidOptionError, match=r"metrics= is an empty list|metrics=\[\]"):
        out = _EMPTY_METRICS[call](df)
        if isinstance(out, pl.LazyFrame):
            out.collect()
