"""The report's calibration sections: the same numbers as the calibration module (and an
independent numpy / scikit-learn oracle), in every output format, seeded intervals, and the
adversarial groups (one score bin only, no positives)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_fairmetrics as pfm
from polars_fairmetrics import cli
from polars_fairmetrics.calibration import calibration_disparities, reliability_curve
from polars_fairmetrics.exceptions import InvalidOptionError
from polars_fairmetrics.report.calibration_sections import SLOPE_REASONS
from polars_fairmetrics.report.findings import findings

_SECTION_COLUMNS = (
    "metric",
    "value",
    "support",
    "n",
    "n_null",
    "reference",
    "is_reference",
    "reference_value",
    "difference",
    "ratio",
)


def _rows(n: int = 600, seed: int = 3) -> pl.DataFrame:
    """Groups a (calibrated), b (scores too low), c (no positives), d (every score 0.55)."""
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c", "d"], size=n, p=[0.4, 0.3, 0.15, 0.15])
    s = rng.uniform(0, 1, size=n).round(3)
    truth = np.where(g == "b", np.clip(s + 0.3, 0, 1), s)
    y = (rng.uniform(size=n) < truth).astype(np.int64)
    y[g == "c"] = 0
    s[g == "d"] = 0.55
    return pl.DataFrame({"g": g, "h": rng.integers(1, 3, size=n), "y": y, "s": s})


def _audit(df: pl.DataFrame, **kw: object) -> pfm.Report:
    args: dict[str, object] = {"y_true": "y", "y_score": "s", "threshold": 0.5, "by": "g"}
    args.update(kw)
    args.setdefault("curves", False)
    return pfm.audit(df, **args)  # type: ignore[arg-type]


def test_sections_equal_calibration_functions_and_oracle() -> None:
    from sklearn.calibration import calibration_curve

    df = _rows()
    r = _audit(df, reference="a", calibration_decimals=None)
    assert r.section_names[-2:] == ["calibration", "reliability"]
    want = calibration_disparities(df, y_true="y", y_score="s", by="g", reference="a")
    assert_frame_equal(r["calibration"].select(want.columns), want)
    curve = reliability_curve(df, y_true="y", y_score="s", by="g")
    assert_frame_equal(r["reliability"], curve)
    # independent oracle: scikit-learn's calibration_curve and ECE by numpy, group by group
    for (name,), part in df.group_by("g"):
        y, s = part["y"].to_numpy(), part["s"].to_numpy()
        got = r["reliability"].filter(g=name).sort("bin")
        if y.min() != y.max():
            prob_true, prob_pred = calibration_curve(y, s, n_bins=10)
            np.testing.assert_allclose(got["fraction_positive"], prob_true, atol=1e-12)
            np.testing.assert_allclose(got["mean_predicted"], prob_pred, atol=1e-12)
        bins = np.searchsorted(np.linspace(0, 1, 11)[1:-1], s)
        ece = sum(abs(y[bins == b].sum() - s[bins == b].sum()) for b in range(10)) / len(y)
        cal = r["calibration"].filter(g=name)
        value = cal.filter(metric="expected_calibration_error")["value"][0]
        assert math.isclose(value, ece, abs_tol=1e-12)
        citl = cal.filter(metric="calibration_in_the_large")["value"][0]
        assert math.isclose(citl, s.mean() - y.mean(), abs_tol=1e-12)


@pytest.mark.parametrize("binning", ["uniform", "quantile"])
def test_separate_attributes_rounding_and_binning(binning: str) -> None:
    df = _rows(400, seed=5)
    ref = {"g": "a", "h": 1}
    r = _audit(
        df,
        by=["g", "h"],
        reference=ref,
        calibration_bins=5,
        calibration_binning=binning,
        calibration_decimals=2,
    )
    kw: dict[str, object] = {"n_bins": 5, "strategy": binning, "decimals": 2}
    want = calibration_disparities(
        df, y_true="y", y_score="s", by=["g", "h"], separately=True, reference=ref, **kw
    )  # type: ignore[arg-type]
    assert_frame_equal(r["calibration"].select(want.columns), want, check_row_order=False)
    assert r["calibration"]["attribute"].unique(maintain_order=True).to_list() == ["g", "h"]
    curve = reliability_curve(df, y_true="y", y_score="s", by=["g", "h"], separately=True, **kw)  # type: ignore[arg-type]
    assert_frame_equal(r["reliability"], curve, check_row_order=False)
    assert r.inputs["calibration_bins"] == 5 and r.inputs["calibration_binning"] == binning


def test_adversarial_groups_null_with_reason_never_nan() -> None:
    df = _rows()
    r = _audit(df, reference="a")
    table = r["calibration"]
    assert table["value"].is_nan().sum() == 0 and table["difference"].is_nan().sum() == 0
    slope = table.filter(metric="calibration_slope")
    reason = dict(zip(slope["g"], slope["reason"], strict=True))
    assert reason["c"] == SLOPE_REASONS["no_positives"]
    assert reason["d"] == SLOPE_REASONS["one_score"]
    assert reason["a"] is None and reason["b"] is None
    assert slope.filter(g="c")["value"][0] is None and slope.filter(g="d")["value"][0] is None
    # the one-bin group still has its ECE and calibration-in-the-large: |P - S| / W
    part = df.filter(g="d")
    one_bin = abs(part["y"].sum() - part["s"].sum()) / part.height
    d = table.filter(g="d")
    assert math.isclose(d.filter(metric="expected_calibration_error")["value"][0], one_bin)
    assert r["reliability"].filter(g="d").height == 1
    # the reference's undefined slope: every group's slope difference says so
    r2 = _audit(df, reference="c")
    other = r2["calibration"].filter(metric="calibration_slope", g="a")
    assert other["difference"][0] is None and other["reason"][0] == SLOPE_REASONS["reference"]


def test_intervals_seeded_and_present() -> None:
    df = _rows(300)
    a = _audit(df, intervals=40, seed=7, reference="a")
    b = _audit(df, intervals=40, seed=7, reference="a")
    c = _audit(df, intervals=40, seed=8, reference="a")
    for name in ("calibration", "reliability"):
        assert a.section(name).has_intervals
        assert_frame_equal(a[name], b[name])
    assert not a["calibration"].equals(c["calibration"])
    cal = a["calibration"].filter(~pl.col("is_reference"), pl.col("value").is_not_null())
    assert {"difference_ci_low", "ratio_ci_high", "ci_method"} <= set(cal.columns)
    defined = cal.filter(pl.col("ci_low").is_not_null())
    assert defined.height > 0
    assert (defined["ci_low"] <= defined["ci_high"]).all()
    # no interval for an undefined value, with its note
    undefined = a["calibration"].filter(pl.col("value").is_null())
    assert undefined["ci_low"].null_count() == undefined.height
    # basic intervals: the same replicates, reflected about the estimate
    basic = _audit(df, intervals=40, seed=7, reference="a", ci_method="basic")["calibration"]
    row = (pl.col("g") == "b") & (pl.col("metric") == "calibration_in_the_large")
    p, q = a["calibration"].filter(row), basic.filter(row)
    assert math.isclose(q["ci_low"][0], 2 * p["value"][0] - p["ci_high"][0], abs_tol=1e-12)
    # weighted: point estimates, and a note instead of intervals
    w = _audit(df.with_columns(w=pl.lit(2.0)), weight="w", intervals=20)
    assert not w.section("calibration").has_intervals
    assert any("weighted" in n for n in w.section("calibration").notes)


def test_every_output_format(tmp_path: Path) -> None:
    df = _rows(300)
    r = _audit(df, intervals=20, reference="a")
    html = r.to_html()
    assert "Calibration within groups" in html and "Reliability curves" in html
    section = html[html.find('id="reliability"') :]
    assert section.count("<svg") >= 1
    for text in (r.to_markdown(), r.to_terminal()):
        assert "Calibration within groups" in text and "Reliability curves" in text
        assert SLOPE_REASONS["no_positives"] in text
        assert "slope difference" in text
    doc = json.loads(r.to_json())
    rows = doc["sections"]["calibration"]["rows"]
    back = pl.DataFrame(rows, schema=r["calibration"].schema, orient="row")
    assert_frame_equal(back, r["calibration"])
    r.write_parquet(tmp_path)
    assert_frame_equal(pl.read_parquet(tmp_path / "calibration.parquet"), r["calibration"])
    assert_frame_equal(pl.read_parquet(tmp_path / "reliability.parquet"), r["reliability"])


def test_reliability_plot_one_panel_per_group() -> None:
    pytest.importorskip("matplotlib")
    from polars_fairmetrics.plot import reliability_figure

    df = _rows(300)
    curve = reliability_curve(df, y_true="y", y_score="s", by="g").rename({"g": "label"})
    fig = reliability_figure(curve, title="t")
    assert len(fig.axes) == 4
    # each panel: the diagonal and the group's points (bins of the group)
    for ax, name in zip(fig.axes, ["a", "b", "c", "d"], strict=True):
        assert ax.get_title() == name
        n_bins = curve.filter(label=name).height
        assert any(len(line.get_xdata()) == n_bins for line in ax.get_lines())


def test_findings_name_calibration_gaps() -> None:
    df = _rows(1500)
    r = _audit(df, intervals=60, reference="a")
    gaps = [f for f in findings(r) if f.kind == "calibration"]
    assert gaps and all(f.section == "calibration" for f in gaps)
    assert any('g="b"' in f.text and "calibration in the large" in f.text for f in gaps)
    table = r["calibration"]
    excluded = table.filter(
        ~pl.col("is_reference")
        & ((pl.col("difference_ci_low") > 0) | (pl.col("difference_ci_high") < 0))
    )
    assert len(gaps) == min(excluded.height, 5)
    # without intervals: no calibration finding (nothing to judge the gap by)
    assert not [f for f in findings(_audit(df, reference="a")) if f.kind == "calibration"]


def test_options_on_off_and_errors() -> None:
    df = _rows(200)
    assert "calibration" not in _audit(df, calibration=False)
    labels = pfm.audit(df.with_columns(p=pl.col("s") > 0.5), y_true="y", y_pred="p", by="g")
    assert "calibration" not in labels and "reliability" not in labels
    odd = _audit(df, score_bounds=None)  # scores not declared probabilities: off by default
    assert "calibration" not in odd
    for bad, msg in (
        ({"calibration_bins": 0}, "calibration_bins"),
        ({"calibration_binning": "kmeans"}, "calibration_binning"),
        ({"calibration_decimals": -1}, "calibration_decimals"),
        ({"calibration": "yes"}, "calibration must be"),
        ({"calibration": True, "score_bounds": None}, "score_bounds"),
        ({"calibration": False, "calibration_bins": 5}, "without the calibration section"),
    ):
        with pytest.raises(InvalidOptionError, match=msg):
            _audit(df, **bad)
    with pytest.raises(InvalidOptionError, match="needs y_score"):
        pfm.audit(df, y_true="y", y_pred="h", by="g", calibration=True)


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_flags(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    df = _rows(300)
    path = tmp_path / "scored.parquet"
    df.write_parquet(path)
    base = ("report", str(path), "--y-true", "y", "--y-score", "s", "--threshold", "0.5")
    base += ("--by", "g", "--format", "json", "--no-progress", "--no-curves")
    flags = ("--calibration-bins", "4", "--calibration-binning", "quantile")
    code, out, err = _main(capsys, *base, *flags, "--calibration-decimals", "exact")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["inputs"]["calibration_binning"] == "quantile"
    want = _audit(df, calibration_bins=4, calibration_binning="quantile", calibration_decimals=None)
    for name in ("calibration", "reliability"):
        back = pl.DataFrame(doc["sections"][name]["rows"], schema=want[name].schema, orient="row")
        assert_frame_equal(back, want[name])
    code, out, err = _main(capsys, *base, "--no-calibration")
    assert code == 0, err
    assert "calibration" not in json.loads(out)["sections"]
    for bad, msg in (
        (["--calibration-bins", "0"], "calibration_bins"),
        (["--calibration-decimals", "x"], "--calibration-decimals"),
    ):
        code, _, err = _main(capsys, *base, *bad)
        assert code != 0 and msg in err, err
    cfg = tmp_path / "audit.toml"
    cfg.write_text('calibration_bins = 3\ncalibration_decimals = "exact"\n')
    code, out, err = _main(capsys, *base, "--config", str(cfg))
    assert code == 0, err
    assert json.loads(out)["inputs"]["calibration_bins"] == 3


def test_engines_agree_and_rows_reconcile() -> None:
    rng = np.random.default_rng(2)
    n = 400
    df = pl.DataFrame(
        {
            "g": rng.choice(np.array(["a", "b", None], dtype=object), n).tolist(),
            "h": rng.integers(1, 3, n),
            "y": rng.choice(np.array([0, 1, None], dtype=object), n).tolist(),
            "s": rng.random(n),
        },
        schema={"g": pl.String, "h": pl.Int64, "y": pl.Int64, "s": pl.Float64},
    )
    kw: dict[str, object] = {"by": ["g", "h"], "intersectional": True, "reference": ("a", 1)}
    fast = _audit(df.lazy(), engine="streaming", intervals=10, **kw)
    slow = _audit(df.lazy(), engine="in-memory", intervals=10, **kw)
    for name in ("calibration", "reliability"):
        assert_frame_equal(fast[name], slow[name], check_exact=False, abs_tol=1e-12)
    # every row of a group is counted or left out, as in the groups section
    cal = fast["calibration"].filter(metric="calibration_in_the_large")
    groups = fast["groups"].select("g", "h", (pl.col("n") + pl.col("n_null")).alias("rows"))
    joined = cal.join(groups, on=["g", "h"], how="full", nulls_equal=True)
    assert joined.height == groups.height == cal.height
    assert (joined["n"] + joined["n_null"] == joined["rows"]).all()
    assert fast["calibration"].filter(g="a", h=1)["is_reference"].all()
