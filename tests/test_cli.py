"""End-to-end tests of the CLI: subprocesses on the shipped data and on a generated multi-file,
hive-partitioned parquet folder (exit codes, JSON schema, gates), and one-line errors."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_fairmetrics as pfm
from polars_fairmetrics import cli, properties
from polars_fairmetrics.datasets import data_path
from tests.test_report import _check_schema, _external_refs

ROOT = Path(__file__).resolve().parents[1]
COMPAS = data_path("compas_two_years.parquet")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "polars_fairmetrics", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def hive(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pl.DataFrame]:
    """A hive-partitioned folder (region=...) of several parquet files, and its rows."""
    rng = np.random.default_rng(11)
    n = 3000
    df = pl.DataFrame(
        {
            "region": rng.choice(["north", "south", "west"], size=n),
            "sex": rng.choice(["F", "M"], size=n),
            "label": rng.integers(0, 2, size=n),
            "score": rng.uniform(0, 1, size=n),
        }
    ).with_columns(pred=(pl.col("score") >= 0.4).cast(pl.Int64))
    root = tmp_path_factory.mktemp("hive")
    for (region,), part in df.group_by("region"):
        folder = root / f"region={region}"
        folder.mkdir()
        half = part.height // 2
        part.drop("region")[:half].write_parquet(folder / "part-0.parquet")
        part.drop("region")[half:].write_parquet(folder / "part-1.parquet")
    return root, df


def _one_line_error(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    assert lines[0].startswith("polars-fairmetrics")
    return lines[0]


# ---------------------------------------------------------------------------------------------
# subprocess, end to end
# ---------------------------------------------------------------------------------------------


def test_demo_writes_self_contained_html(tmp_path: Path) -> None:
    out = run("demo", "--html", "report.html", "--json", "report.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "False positive rate, African-American vs Caucasian" in out.stdout
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert _external_refs(page) == []
    assert page.count("<svg") == 4  # bars and forest plot, for race and for sex
    doc = json.loads((tmp_path / "report.json").read_text())
    _check_schema(doc)
    assert doc["inputs"]["reference"] == {"race": "Caucasian", "sex": "Male"}


def test_report_on_shipped_data_json_matches_library(tmp_path: Path) -> None:
    out = run(
        "report",
        COMPAS,
        "--y-true",
        "two_year_recid",
        "--y-score",
        "decile_score",
        "--threshold",
        "5",
        "--score-bounds",
        "1,10",
        "--by",
        "race",
        "--by",
        "sex",
        "--reference",
        "race=Caucasian",
        "--reference",
        "sex=Male",
        "--format",
        "json",
        "--output",
        "r.json",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "\r" not in out.stderr  # no progress display when stderr is not a terminal
    doc = json.loads((tmp_path / "r.json").read_text())
    _check_schema(doc)
    lf = pfm.scan_compas().with_columns(high=pl.col("decile_score") >= 5)
    for attr, ref in (("race", "Caucasian"), ("sex", "Male")):
        want = pfm.fairness_criteria(
            lf, y_true="two_year_recid", y_pred="high", by=attr, reference=ref
        ).collect()
        got = (
            pl.DataFrame(doc["sections"]["criteria"]["rows"])
            .filter(pl.col("attribute") == attr)
            .select(attr, "metric", "value")
        )
        assert_frame_equal(got, want.select(attr, "metric", "value"))


def test_report_on_hive_folder_and_glob(tmp_path: Path, hive: tuple[Path, pl.DataFrame]) -> None:
    root, df = hive
    for source in (str(root), str(root / "**" / "*.parquet")):
        out = run(
            "report",
            source,
            "--y-true",
            "label",
            "--y-pred",
            "pred",
            "--by",
            "region",
            "--by",
            "sex",
            "--format",
            "json",
            cwd=tmp_path,
        )
        assert out.returncode == 0, out.stderr
        doc = json.loads(out.stdout)
        _check_schema(doc)
        assert doc["inputs"]["n_rows"] == df.height
        got = pl.DataFrame(doc["sections"]["metrics"]["rows"])
        want = pfm.audit(df, y_true="label", y_pred="pred", by=["region", "sex"])["metrics"]
        assert_frame_equal(got, want, check_row_order=False, check_dtypes=False)


def test_gates_set_the_exit_code(tmp_path: Path, hive: tuple[Path, pl.DataFrame]) -> None:
    root, _ = hive
    base = (
        "report",
        str(root),
        "--y-true",
        "label",
        "--y-score",
        "score",
        "--threshold",
        "0.4",
        "--by",
        "region",
        "--reference",
        "north",
        "--format",
        "markdown",
        "--output",
        "r.md",
    )
    ok = run(
        *base,
        "--fail-if",
        "disparate_impact < 0.5",
        "--fail-if",
        "abs(statistical_parity_difference) > 0.5",
        cwd=tmp_path,
    )
    assert ok.returncode == 0, ok.stderr
    assert ok.stderr.count("gate PASS") == 2
    bad = run(*base, "--fail-if", "disparate_impact < 2", cwd=tmp_path)
    assert bad.returncode == 1
    assert 'gate FAIL disparate_impact < 2: region="south"' in bad.stderr
    assert (tmp_path / "r.md").read_text().startswith("# Fairness audit")


def test_config_file_and_one_line_errors_in_a_subprocess(
    tmp_path: Path, hive: tuple[Path, pl.DataFrame]
) -> None:
    root, _ = hive
    cfg = tmp_path / "audit.toml"
    cfg.write_text(
        f'input = "{root.as_posix()}"\n'
        'y_true = "label"\ny_pred = "pred"\nby = ["region"]\nreference = "rest"\n'
        'format = "parquet"\noutput = "tables"\nfail_if = ["selection_rate_ratio < 0.01"]\n'
    )
    out = run("report", "--config", str(cfg), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "tables" / "manifest.json").exists()
    assert pl.read_parquet(tmp_path / "tables" / "criteria.parquet").height > 0
    missing = run("report", "--config", str(cfg), "--y-pred", "nope", cwd=tmp_path)
    assert missing.returncode == 2
    assert "'nope' (y_pred) not found" in _one_line_error(missing.stderr)


# ---------------------------------------------------------------------------------------------
# in process: error paths (fast)
# ---------------------------------------------------------------------------------------------


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = cli.main(list(args))
    except SystemExit as exc:  # argparse
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(
    ("extra", "config", "message"),
    [
        (
            ["--y-true", "two_year_recid", "--y-pred", "nope", "--by", "race"],
            None,
            "column 'nope' (y_pred) not found",
        ),
        (
            ["--y-true", "two_year_recid", "--y-pred", "is_recid", "--by", "nope"],
            None,
            "column 'nope' (group) not found",
        ),
        (["--y-true", "two_year_recid", "--by", "race"], None, "exactly one of --y-pred"),
        (
            ["--y-true", "two_year_recid", "--y-score", "decile_score", "--by", "race"],
            None,
            "--y-score needs --threshold",
        ),
        (
            [
                "--y-true",
                "two_year_recid",
                "--y-score",
                "decile_score",
                "--threshold",
                "5",
                "--by",
                "race",
            ],
            None,
            "outside [0.0, 1.0]",
        ),
        (
            [
                "--y-true",
                "two_year_recid",
                "--y-pred",
                "is_recid",
                "--by",
                "race",
                "--fail-if",
                "disparate_impact <",
            ],
            None,
            "cannot parse gate",
        ),
        (
            [
                "--y-true",
                "two_year_recid",
                "--y-pred",
                "is_recid",
                "--by",
                "race",
                "--fail-if",
                "equal_opportunity_difference ci_excludes 0",
            ],
            None,
            "needs confidence intervals",
        ),
        (
            [
                "--y-true",
                "two_year_recid",
                "--y-pred",
                "is_recid",
                "--by",
                "race",
                "--reference",
                "Martian",
            ],
            None,
            "reference group",
        ),
        (
            [
                "--y-true",
                "two_year_recid",
                "--y-pred",
                "is_recid",
                "--by",
                "race",
                "--format",
                "parquet",
            ],
            None,
            "needs --output",
        ),
        (["--bogus"], None, "unrecognized arguments: --bogus"),
        (["--format", "pdf"], None, "invalid choice"),
        ([], 'y_true = "two_year_recid"\ncolour = "red"\n', "unknown key 'colour'"),
        ([], 'y_true = "two_year_recid"\nby = 3\n', "key 'by' must be"),
        ([], "y_true = [\n", "invalid TOML"),
        ([], 'y_true = "two_year_recid"\ny_pred = "is_recid"\n', "missing --by"),
    ],
)
def test_bad_input_gives_one_line_error(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    extra: list[str],
    config: str | None,
    message: str,
) -> None:
    args = ["report", COMPAS, *extra]
    if config is not None:
        (tmp_path / "c.toml").write_text(config)
        args += ["--config", str(tmp_path / "c.toml")]
    code, out, err = _main(capsys, *args)
    assert code == 2
    assert message in _one_line_error(err)
    assert out == ""


def test_missing_input_and_unknown_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = _main(
        capsys,
        "report",
        str(tmp_path / "nope.parquet"),
        "--y-true",
        "y",
        "--y-pred",
        "p",
        "--by",
        "g",
    )
    assert code == 2 and "does not exist" in _one_line_error(err)
    (tmp_path / "data.xyz").write_text("a,b\n")
    code, _, err = _main(
        capsys, "report", str(tmp_path / "data.xyz"), "--y-true", "y", "--y-pred", "p", "--by", "g"
    )
    assert code == 2 and "--input-format" in _one_line_error(err)
    code, _, err = _main(
        capsys, "report", str(tmp_path / "*.parquet"), "--y-true", "y", "--y-pred", "p", "--by", "g"
    )
    assert code == 2 and "no parquet file matches" in _one_line_error(err)
    code, _, err = _main(capsys, "report", COMPAS, "--config", str(tmp_path / "none.toml"))
    assert code == 2 and "cannot read it" in _one_line_error(err)


def test_csv_and_ipc_inputs_give_the_same_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    df = pl.read_parquet(COMPAS).select("race", "sex", "two_year_recid", "is_recid")
    df.write_csv(tmp_path / "c.csv")
    df.write_ipc(tmp_path / "c.arrow")
    docs = []
    for path in (COMPAS, str(tmp_path / "c.csv"), str(tmp_path / "c.arrow")):
        code, out, err = _main(
            capsys,
            "report",
            path,
            "--y-true",
            "two_year_recid",
            "--y-pred",
            "is_recid",
            "--by",
            "sex",
            "--pos-label",
            "1",
            "--format",
            "json",
            "--no-progress",
        )
        assert code == 0, err
        docs.append(json.loads(out)["sections"])
    assert docs[0] == docs[1] == docs[2]


def test_html_and_terminal_outputs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _main(
        capsys,
        "report",
        COMPAS,
        "--y-true",
        "two_year_recid",
        "--y-pred",
        "is_recid",
        "--by",
        "race",
        "--format",
        "html",
        "--no-plots",
        "-o",
        str(tmp_path / "r.html"),
    )
    assert code == 0, err
    page = (tmp_path / "r.html").read_text()
    assert "<svg" not in page and _external_refs(page) == []
    code, out, _ = _main(
        capsys,
        "report",
        COMPAS,
        "--y-true",
        "two_year_recid",
        "--y-pred",
        "is_recid",
        "--by",
        "race",
        "--metrics",
        "tpr,fpr",
        "--criteria",
        "disparate_impact",
    )
    assert code == 0 and out.startswith("Fairness audit")
    assert "true_positive_rate" in out and "accuracy" not in out


def test_progress_only_when_enabled() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    quiet = io.StringIO()
    with cli.progress("scanning", stream=quiet):
        pass
    assert quiet.getvalue() == ""
    loud = Tty()
    with cli.progress("scanning", stream=loud):
        pass
    assert "scanning: done in" in loud.getvalue()


# ---------------------------------------------------------------------------------------------
# intervals, ensemble stability, properties (issue 8)
# ---------------------------------------------------------------------------------------------

ADULT = data_path("adult_ensemble.parquet")


def test_report_intervals_and_ci_gate_in_a_subprocess(tmp_path: Path) -> None:
    base = (
        "report",
        COMPAS,
        "--y-true",
        "two_year_recid",
        "--y-score",
        "decile_score",
        "--threshold",
        "5",
        "--score-bounds",
        "1,10",
        "--by",
        "race",
        "--reference",
        "Caucasian",
        "--fail-if",
        "equal_opportunity_difference ci_excludes 0",
    )
    refused = run(*base, cwd=tmp_path)
    assert refused.returncode == 2
    assert "--intervals" in _one_line_error(refused.stderr)
    (tmp_path / "c.toml").write_text(
        'intervals = 200\nseed = 4\nci_method = "basic"\nci_level = 0.9\n'
    )
    out = run(*base, "--config", "c.toml", "--format", "json", "-o", "r.json", cwd=tmp_path)
    assert out.returncode == 1, out.stderr  # African-American defendants: TPR gap excludes 0
    assert (
        'gate FAIL equal_opportunity_difference ci_excludes 0: race="African-American"'
        in out.stderr
    )
    doc = json.loads((tmp_path / "r.json").read_text())
    _check_schema(doc)
    assert doc["inputs"]["intervals"] == 200 and doc["inputs"]["ci_method"] == "basic"
    lf = pfm.scan_compas().with_columns(high=pl.col("decile_score") >= 5)
    want = pfm.audit(
        lf,
        y_true="two_year_recid",
        y_pred="high",
        by="race",
        reference="Caucasian",
        intervals=200,
        seed=4,
        ci_method="basic",
        ci_level=0.9,
    )["criteria"]
    got = pl.DataFrame(doc["sections"]["criteria"]["rows"], schema=want.schema, orient="row")
    assert_frame_equal(got, want)


def test_report_models_prefix_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    base = [
        "report",
        ADULT,
        "--y-true",
        "high_income",
        "--y-score",
        "p00",
        "--threshold",
        "0.5",
        "--by",
        "sex",
        "--no-progress",
    ]
    code, out, err = _main(capsys, *base, "--models-prefix", "p", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["inputs"]["models"] == [f"p{i:02d}" for i in range(15)]
    rows = pl.DataFrame(doc["sections"]["stability"]["rows"])
    assert set(rows["metric"]) >= {"label_stability", "jitter"}
    for extra, message in [
        (["--models", "p00", "zz"], "'zz'"),
        (["--models-prefix", "q"], "no column"),
        (["--seed", "3"], "needs --intervals"),
        (["--intervals", "0"], "positive"),
        (["--intervals", "10", "--ci-level", "2"], "(0, 1)"),
    ]:
        code, _, err = _main(capsys, *base, *extra)
        assert code == 2 and message in _one_line_error(err), (extra, err)


def test_demo_adult_has_stability_section(tmp_path: Path) -> None:
    out = run("demo", "--dataset", "adult", "--html", "a.html", "--json", "a.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Ensemble stability and uncertainty" in out.stdout
    page = (tmp_path / "a.html").read_text(encoding="utf-8")
    assert 'id="stability_distribution"' in page and _external_refs(page) == []
    doc = json.loads((tmp_path / "a.json").read_text())
    _check_schema(doc)
    assert doc["inputs"]["y_pred"] == "ensemble_label"


def test_properties_subcommand(tmp_path: Path) -> None:
    out = run(
        "properties",
        "--n",
        "12",
        "--measures",
        "statistical_parity",
        "equal_opportunity",
        "--format",
        "json",
        "-o",
        "p.json",
        "--summary",
        "cells.parquet",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads((tmp_path / "p.json").read_text())
    assert doc["n"] == 12 and doc["measures"] == ["statistical_parity", "equal_opportunity"]
    want = properties.measure_properties(12, measures=["statistical_parity", "equal_opportunity"])
    assert (
        pl.DataFrame(doc["properties"]).select("metric", "property", "holds").rows()
        == want.select("metric", "property", "holds").rows()
    )
    cells = pl.read_parquet(tmp_path / "cells.parquet")
    assert_frame_equal(
        cells, properties.cell_summary(12, measures=["statistical_parity", "equal_opportunity"])
    )
    term = run("properties", "--n", "12", "--ir", "0.25", "0.5", "0.75", cwd=tmp_path)
    assert term.returncode == 0 and "Resolution Stability" in term.stdout
    assert "3/12, 6/12, 9/12" in term.stdout
    for args, message in [
        (["--n", "0"], "at least 1"),
        (["--n", "300"], "--n 300: the analysis would take about 5 min"),
        (["--n", "100000"], "overflows Int64"),
        (["--n", "12", "--ir", "1.5"], "(0, 1)"),
        (["--n", "12", "--gr", "0.3"], "not a whole number"),
        (["--n", "12", "--measures", "foo"], "unknown measure"),
    ]:
        bad = run("properties", *args, cwd=tmp_path)
        assert bad.returncode == 2 and message in _one_line_error(bad.stderr), (args, bad.stderr)


def test_progress_shows_the_audit_steps() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    loud = Tty()
    df = pl.DataFrame({"g": ["a", "b"] * 20, "y": [1, 0, 0, 1] * 10, "p": [1, 1, 0, 0] * 10})
    with cli.progress("auditing", stream=loud) as step:
        steps: list[str] = []

        def record(text: str) -> None:
            steps.append(text)
            step(text)

        pfm.audit(df, y_true="y", y_pred="p", by="g", intervals=20, seed=0, progress=record)
    assert steps == ["counting", "bootstrap g: 20 resamples"]
    assert "auditing: done in" in loud.getvalue()


def test_report_curve_and_deployment_flags(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rng = np.random.default_rng(21)
    n = 400
    df = pl.DataFrame(
        {
            "g": rng.choice(["a", "b"], size=n),
            "y": rng.integers(0, 2, size=n),
            "score": rng.uniform(0, 1, size=n),
        }
    )
    path = tmp_path / "scored.parquet"
    df.write_parquet(path)
    base = (
        "report",
        str(path),
        "--y-true",
        "y",
        "--y-score",
        "score",
        "--threshold",
        "0.5",
        "--by",
        "g",
        "--format",
        "json",
        "--no-progress",
    )
    code, out, err = _main(capsys, *base, "--curve-bins", "20", "--deploy-positive-rate", "0.05")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["inputs"]["curve_bins"] == 20 and doc["inputs"]["deploy_positive_rate"] == 0.05
    want = pfm.audit(
        df,
        y_true="y",
        y_score="score",
        threshold=0.5,
        by="g",
        curve_bins=20,
        deploy_positive_rate=0.05,
    )
    for name in ("curve_summaries", "deployment"):
        back = pl.DataFrame(doc["sections"][name]["rows"], schema=want[name].schema, orient="row")
        assert_frame_equal(back, want[name])
    assert len(doc["sections"]["curves"]["rows"]) == 2 * 22
    code, out, err = _main(capsys, *base, "--no-curves")
    assert code == 0, err
    sections = json.loads(out)["sections"]
    assert "curves" not in sections and "curve_summaries" not in sections
    assert "deployment" not in sections
    for bad, msg in (
        (["--deploy-positive-rate", "1.5"], "--deploy-positive-rate"),
        (["--curve-bins", "0"], "--curve-bins"),
        (["--no-curves", "--curve-bins", "5"], "--no-curves"),
    ):
        code, _, err = _main(capsys, *base, *bad)
        assert code != 0 and msg in err, err
    cfg = tmp_path / "audit.toml"
    cfg.write_text("curves = false\ndeploy_positive_rate = 0.2\n")
    code, out, err = _main(capsys, *base, "--config", str(cfg))
    assert code == 0, err
    sections = json.loads(out)["sections"]
    assert "curves" not in sections and "deployment" in sections


# ---------------------------------------------------------------------------------------------
# every numeric option is checked before anything runs; hostile text; internal errors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["demo", "--threshold", "99"], "--threshold 99"),
        (["demo", "--threshold", "0"], "in 1..10"),
        (["demo", "--threshold", "-3"], "in 1..10"),
        (["demo", "--intervals", "0", "--json", "x.json"], "--intervals 0"),
        (["demo", "--intervals", "1000000000", "--json", "x.json"], "at most"),
        (["demo", "--intervals", "10", "--seed", "-1", "--json", "x.json"], "--seed -1"),
        (["demo", "--seed", "3"], "needs --intervals"),
        (["demo", "--threshold", "abc"], "invalid int value"),
        (["properties", "--n", "12", "--ir", "nan"], "(0, 1)"),
    ],
)
def test_demo_and_properties_numeric_options(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], message: str
) -> None:
    code, out, err = _main(capsys, *args)
    assert code == 2, (args, err)
    assert message in _one_line_error(err)
    assert "Traceback" not in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--y-score", "decile_score", "--threshold", "nan"], "--threshold nan"),
        (["--y-score", "decile_score", "--threshold", "inf"], "--threshold inf"),
        (["--y-pred", "is_recid", "--intervals", "0"], "--intervals 0"),
        (["--y-pred", "is_recid", "--intervals", "-5"], "--intervals -5"),
        (["--y-pred", "is_recid", "--intervals", "1000000000"], "at most"),
        (["--y-pred", "is_recid", "--intervals", "5", "--ci-level", "nan"], "--ci-level nan"),
        (["--y-pred", "is_recid", "--intervals", "5", "--ci-level", "1"], "--ci-level 1.0"),
        (["--y-pred", "is_recid", "--intervals", "5", "--seed", "-1"], "--seed -1"),
        (
            ["--y-score", "decile_score", "--threshold", "5", "--curve-bins", "10000000"],
            "--curve-bins 10000000",
        ),
        (["--y-score", "decile_score", "--threshold", "5", "--curve-bins", "0"], "--curve-bins 0"),
        (["--y-pred", "is_recid", "--deploy-positive-rate", "nan"], "--deploy-positive-rate nan"),
        (["--y-pred", "is_recid", "--deploy-positive-rate", "inf"], "--deploy-positive-rate inf"),
        (["--y-pred", "is_recid", "--deploy-positive-rate", "0"], "--deploy-positive-rate 0"),
        (["--y-score", "decile_score", "--threshold", "5", "--score-bounds", "nan,10"], "finite"),
        (["--y-score", "decile_score", "--threshold", "5", "--score-bounds", "0,inf"], "finite"),
        (["--y-score", "decile_score", "--threshold", "5", "--score-bounds", "5,1"], "below"),
        (["--y-pred", "is_recid", "--intervals", "x"], "invalid int value"),
    ],
)
def test_report_numeric_options_checked_before_reading(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
    message: str,
) -> None:
    def no_scan(*args: object, **kwargs: object) -> None:
        raise AssertionError("the input was opened before the options were checked")

    monkeypatch.setattr(cli, "scan_input", no_scan)
    code, out, err = _main(
        capsys, "report", COMPAS, "--y-true", "two_year_recid", "--by", "race", *extra
    )
    assert code == 2, (extra, err)
    assert message in _one_line_error(err)
    assert out == ""


def test_internal_error_is_one_line_and_exit_3(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(cli, "audit", broken)
    base = ["report", COMPAS, "--y-true", "two_year_recid", "--y-pred", "is_recid", "--by", "race"]
    code, _, err = _main(capsys, *base)
    assert code == 3
    line = _one_line_error(err)
    assert "internal error: RuntimeError: boom" in line and "--debug" in line
    with pytest.raises(RuntimeError, match="boom"):
        cli.main(["--debug", *base])


HOSTILE_GROUPS = [
    "\x1b[31mred\x1b[0m",
    "\u202eevil",
    "![img](http://evil.example/x.png)",
    "[x](javascript:alert(1))",
    "<script>alert(1)</script>",
    "metric",
    "",
]


def test_hostile_group_names_through_the_cli(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rng = np.random.default_rng(5)
    n = 40 * len(HOSTILE_GROUPS)
    df = pl.DataFrame(
        {
            "g": [g for g in HOSTILE_GROUPS for _ in range(40)],
            "y": rng.integers(0, 2, n),
            "p": rng.integers(0, 2, n),
        }
    )
    path = tmp_path / "hostile.parquet"
    df.write_parquet(path)
    base = ["report", str(path), "--y-true", "y", "--y-pred", "p", "--by", "g", "--no-progress"]
    for fmt in ("terminal", "markdown", "html", "json"):
        code, out, err = _main(capsys, *base, "--format", fmt, "--fail-if", "accuracy < 2")
        assert code == 1, err  # every group's accuracy is below 2
        for text in (out, err):
            assert not [c for c in text if c != "\n" and not c.isprintable()], fmt
        assert "\\x1b[31mred" in err  # the gate names the group, escaped visibly
        if fmt in ("markdown", "html"):  # markup only there: the terminal shows plain text
            assert "<script" not in out, fmt
        if fmt == "markdown":
            assert "](javascript" not in out and "![img]" not in out
    code, _, err = _main(capsys, *base, "--reference", "metric", "--format", "json")
    assert code == 0, err


def test_weighted_intervals_through_the_cli(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rng = np.random.default_rng(8)
    n = 400
    df = pl.DataFrame(
        {
            "g": rng.choice(["a", "b"], n),
            "y": rng.integers(0, 2, n),
            "p": rng.integers(0, 2, n),
            "w": rng.uniform(0.5, 2, n),
        }
    )
    path = tmp_path / "w.parquet"
    df.write_parquet(path)
    code, out, err = _main(
        capsys,
        "report",
        str(path),
        "--y-true",
        "y",
        "--y-pred",
        "p",
        "--by",
        "g",
        "--weight",
        "w",
        "--intervals",
        "30",
        "--format",
        "json",
        "--no-progress",
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["inputs"]["seed"] == 0 and doc["inputs"]["weight"] == "w"
    want = pfm.audit(df, y_true="y", y_pred="p", by="g", weight="w", intervals=30)["criteria"]
    got = pl.DataFrame(doc["sections"]["criteria"]["rows"], schema=want.schema, orient="row")
    assert_frame_equal(got, want)


# ---------------------------------------------------------------------------------------------
# terminal: findings first, intervals shown, progress one line that fits (issue 18)
# ---------------------------------------------------------------------------------------------


def test_demo_intervals_show_in_the_terminal(tmp_path: Path) -> None:
    out = run("demo", "--intervals", "20", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    summary = text.index("Summary of findings")
    assert 'False positive rate: race="African-American"' in text[summary:]
    assert "95% interval" in text[summary:]
    assert "false_positive_rate difference" in text


def test_progress_line_fits_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("COLUMNS", "40")
    stream = io.StringIO()
    with cli.progress(
        "scanning a rather long input file name.parquet", enabled=True, stream=stream
    ) as step:
        step("bootstrap intervals, resample 12 of 1000")
        time.sleep(0.35)
    text = stream.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n")  # one line, redrawn with \r
    for frame in text.rstrip("\n").split("\r"):
        assert len(frame) <= 39, frame


def test_min_support_keeps_small_groups_from_failing_a_gate(tmp_path: Path) -> None:
    rows = {"g": ["a"] * 40 + ["b"] * 3, "y": [1, 0] * 20 + [1, 0, 1], "p": [1, 0] * 20 + [0] * 3}
    path = tmp_path / "small.parquet"
    pl.DataFrame(rows).write_parquet(path)
    common = [
        "report",
        str(path),
        "--y-true",
        "y",
        "--y-pred",
        "p",
        "--by",
        "g",
        "--reference",
        "a",
        "--fail-if",
        "selection_rate_difference < -0.2",
    ]
    assert cli.main(common) == 1  # the 3-row group fails the gate on its own
    assert cli.main([*common, "--min-support", "5"]) == 0
    assert cli.main([*common, "--min-support", "-1"]) == 2
