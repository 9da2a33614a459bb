"""The terminal at 80 columns (issue 18): the report's text rendering, the ``demo`` output and
the progress display fit the width, and no table cell is ever split across lines."""

from __future__ import annotations

import io
import os
import re
import shutil
import sys
import time

import numpy as np
import polars as pl
import pytest

import polars_fairmetrics as pfm
from polars_fairmetrics import cli
from polars_fairmetrics.report.render_text import _width, text_table
from polars_fairmetrics.report.views import section_views

_INTERVAL_CELL = re.compile(r"-?\d+\.\d+ \[-?\d+\.\d+, -?\d+\.\d+\]")


class Tty(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture(scope="module")
def wide() -> pfm.Report:
    """Twelve intersectional groups (3 × 4) with intervals, curves, calibration, an ensemble of
    three models, three models side by side and the deployment section: the widest tables the
    report makes."""
    rng = np.random.default_rng(7)
    n = 3000
    models = [rng.uniform(size=n) for _ in range(3)]
    df = pl.DataFrame(
        {
            "region": rng.choice(["north-east", "south-west", "centre"], size=n),
            "age_band": rng.choice(["under 25", "25 to 44", "45 to 64", "65 and over"], size=n),
            "y": rng.integers(0, 2, size=n),
            **{f"m{i}": m for i, m in enumerate(models)},
            "score": np.mean(models, axis=0),
            **{f"label{i}": m >= 0.5 for i, m in enumerate(models)},
        }
    )
    return pfm.audit(
        df,
        y_true="y",
        y_score="score",
        threshold=0.5,
        by=["region", "age_band"],
        intersectional=True,
        models=["m0", "m1", "m2"],
        intervals=30,
        seed=1,
        curve_bins=10,
        deploy_positive_rate=0.2,
        predictions=["label0", "label1", "label2"],
    )


@pytest.mark.parametrize("width", [60, 80, 100])
def test_terminal_report_fits_and_never_splits_a_cell(wide: pfm.Report, width: int) -> None:
    text = wide.to_terminal(width=width)
    lines = text.splitlines()
    assert max(_width(line) for line in lines) <= width
    assert _INTERVAL_CELL.search(text)  # the intervals are shown
    checked = 0
    for section in wide.sections.values():
        for view in section_views(section):
            if not view.height:
                continue
            table = text_table(view, width)
            assert all(_width(line) <= width for line in table)
            for row in view.rows:
                for cell, numeric in zip(row, view.numeric, strict=True):
                    # a number (with its interval) is whole on one line of the table and of
                    # the report; a label may wrap at a space, or inside a word too long
                    if numeric or _width(cell) <= 16:
                        assert any(cell in line for line in table), (section.name, cell)
                        assert cell in text
                        checked += numeric
    assert checked > 500


def test_text_table_cuts_whole_columns_repeating_the_label() -> None:
    from polars_fairmetrics.report.views import View

    cell = "0.1234 [0.1000, 0.1500]"
    view = View(
        heading=None,
        columns=["metric", *(f'group="g{i}"' for i in range(8))],
        rows=[["selection_rate", *([cell] * 8)], ["n", *(["120"] * 8)]],
        numeric=[False, *([True] * 8)],
    )
    lines = text_table(view, 80)
    assert max(len(line) for line in lines) <= 80
    headers = [line for line in lines if line.startswith("metric")]
    assert len(headers) >= 3  # cut into blocks, each with the label column
    body = [line for line in lines if line.startswith("selection_rate")]
    assert sum(line.count(cell) for line in body) == 8  # all eight cells, none cut


# ---------------------------------------------------------------------------------------------
# the demo and the progress display
# ---------------------------------------------------------------------------------------------


def _narrow(monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    size = os.terminal_size((columns, 24))
    monkeypatch.setattr(shutil, "get_terminal_size", lambda fallback=(80, 24): size)


def test_demo_at_80_columns_shows_intervals(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _narrow(monkeypatch, 80)
    assert cli.main(["demo", "--intervals", "40", "--no-progress"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(_width(line) for line in lines) <= 80, max(lines, key=_width)
    assert "intervals: 40 bootstrap resamples" in out
    assert len(_INTERVAL_CELL.findall(out)) > 50
    # every metric the demo prints is in a table (no column elided by Polars)
    for name in ("selection_rate", "positive_predictive_value", "disparate_impact"):
        assert name in out
    assert "…" not in out


def test_progress_is_one_line_on_a_narrow_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _narrow(monkeypatch, 40)
    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    assert cli.main(["demo", "--intervals", "40"]) == 0
    err = tty.getvalue()
    assert err.count("\n") == 1 and err.endswith("\n")  # one line, redrawn in place
    assert "auditing COMPAS: done in" in err
    for drawn in re.split(r"[\r\n]", err):
        assert len(drawn) <= 39, drawn  # never wider than the terminal: no wrapped redraws
    capsys.readouterr()


@pytest.mark.parametrize("label", ["auditing a long label", "監査データ" * 6])
def test_progress_redraws_in_place_and_cuts_long_steps(
    monkeypatch: pytest.MonkeyPatch, label: str
) -> None:
    _narrow(monkeypatch, 30)
    tty = Tty()
    with cli.progress(label, stream=tty) as step:
        step("bootstrap race × sex × age: 1000 resamples")
        time.sleep(0.35)
    err = tty.getvalue()
    assert err.count("\n") == 1
    redraws = [d for d in err.split("\r") if d]
    assert len(redraws) >= 2  # at least one spinner frame, then the final line
    # wide characters take two columns: still never wider than the terminal
    assert all(_width(d.rstrip("\n")) <= 29 for d in redraws), redraws
    assert any(d.rstrip().endswith("s") and "…" in d for d in redraws[:-1])  # cut, clock kept


def test_no_progress_when_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    quiet = io.StringIO()
    with cli.progress("auditing", stream=quiet) as step:
        step("counting")
        time.sleep(0.15)
    assert quiet.getvalue() == ""
    assert cli.main(["demo", "--intervals", "20"]) == 0
    assert capsys.readouterr().err == ""  # pytest's captured stderr is not a terminal
