"""The findings summary and table of contents at the top of every report."""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_fairmetrics as pfm
from polars_fairmetrics.datasets import scan_compas
from polars_fairmetrics.report.findings import MIN_SUPPORT, findings, sig


@pytest.fixture(scope="module")
def compas() -> pfm.Report:
    lf = scan_compas().with_columns((pl.col("decile_score") >= 5).alias("high_risk"))
    return pfm.audit(
        lf,
        y_true="two_year_recid",
        y_pred="high_risk",
        by="race",
        reference="Caucasian",
        intervals=50,
        seed=0,
    )


def _fpr_finding(text: str) -> bool:
    return bool(
        re.search(
            r'False positive rate: race="African-American" 0\.448 against 0\.235 .*'
            r"difference of \+0\.2\d\d \(95% interval 0\.\d+ to 0\.\d+\).*excludes parity",
            text,
        )
    )


def test_compas_summary_names_fpr_gap(compas: pfm.Report) -> None:
    texts = [f.text for f in findings(compas) if f.kind == "disparity"]
    assert any(_fpr_finding(t) for t in texts), texts


@pytest.mark.parametrize("render", ["html", "markdown", "terminal"])
def test_summary_opens_every_rendering(compas: pfm.Report, render: str) -> None:
    text = {
        "html": compas.to_html(plots=False),
        "markdown": compas.to_markdown(),
        "terminal": compas.to_terminal(width=200),
    }[render]
    summary = text.index("Summary of findings")
    first_section = text.index("Per-group metrics", summary)
    body = " ".join(text[summary:first_section].split())
    assert _fpr_finding(body.replace("&quot;", '"').replace("\\", "")), body[:600]
    # the summary comes before every table
    assert summary < text.index("Groups", summary)


def test_html_links_and_contents(compas: pfm.Report) -> None:
    page = compas.to_html(plots=False)
    assert '<nav class="toc">' in page
    for name in compas.section_names:
        assert f'id="{name}"' in page
        assert f'href="#{name}"' in page
    assert 'href="#disparities">See Disparities' in page
    assert page.index('class="findings"') < page.index('<nav class="toc">')


def test_markdown_links_and_contents(compas: pfm.Report) -> None:
    md = compas.to_markdown()
    assert "## Contents" in md
    for name in compas.section_names:
        assert f'<a id="{name}"></a>' in md
        assert f"](#{name})" in md


def test_small_groups_and_undefined() -> None:
    df = pl.DataFrame(
        {
            "g": ["a"] * 200 + ["b"] * 5,
            "y": [1, 0] * 100 + [0] * 5,
            "p": [1, 0, 0, 1] * 50 + [1] * 5,
        }
    )
    r = pfm.audit(df, y_true="y", y_pred="p", by="g", reference="a")
    found = findings(r)
    small = [f for f in found if f.kind == "small"]
    assert len(small) == 1 and 'g="b"' in small[0].text and small[0].section == "groups"
    assert str(MIN_SUPPORT) in small[0].text
    undefined = [f for f in found if f.kind == "undefined"]
    assert undefined and 'g="b"' in undefined[0].text
    # the small group's gaps come after the others
    disp = [f.text for f in found if f.kind == "disparity"]
    assert all("too small" not in t for t in disp) or disp[-1].endswith("too small to judge.")


def test_failed_gates_are_listed(compas: pfm.Report) -> None:
    results = compas.check("disparate_impact < 0.8", "accuracy < 0.01")
    assert [g.failed for g in results] == [True, False]
    gates = [f for f in findings(compas) if f.kind == "gate"]
    assert len(gates) == 1 and "disparate_impact < 0.8" in gates[0].text
    assert gates[0].section == "criteria"
    compas.gate_results.clear()


def test_hostile_labels_escaped() -> None:
    df = pl.DataFrame(
        {
            "g": ["<script>x</script>"] * 3 + ["[l](javascript:1)"] * 3,
            "y": [1, 0, 1] * 2,
            "p": [1, 1, 0, 0, 0, 1],
        }
    )
    r = pfm.audit(df, y_true="y", y_pred="p", by="g", reference="<script>x</script>")
    assert "<script>x" not in r.to_html(plots=False)
    assert "[l](javascript" not in r.to_markdown()


def test_no_findings() -> None:
    df = pl.DataFrame({"g": ["a"] * 60 + ["b"] * 60, "y": [1, 0] * 60, "p": [1, 0] * 60})
    r = pfm.audit(df, y_true="y", y_pred="p", by="g", reference="a", metrics=["accuracy"])
    assert [f.kind for f in findings(r)].count("small") == 0


@pytest.mark.parametrize("v", [1e-9, 4.29e-05, 0.5, 1.912, 123456.0, -0.0196])
def test_sig_never_exponent(v: float) -> None:
    text = sig(v)
    assert "e" not in text
    assert float(text) == pytest.approx(v, rel=5e-3)


# ---------------------------------------------------------------------------------------------
# tables: one number per cell, reference marked, nothing cut off
# ---------------------------------------------------------------------------------------------

_NUMBER = r"-?(?:\d+\.\d+|\d+|inf|NaN)"
_BOUND = rf"(?:{_NUMBER}|—)"
_CELL = re.compile(rf"^(?:{_NUMBER}(?: \[{_BOUND}, {_BOUND}\])?|—|reference|true|false)$")


@pytest.mark.parametrize("width", [80, 100])
def test_terminal_fits_width_no_cell_split(compas: pfm.Report, width: int) -> None:
    text = compas.to_terminal(width=width)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    rows = [line for line in lines if " | " in line and not line.startswith(("group", "comp"))]
    assert rows
    for line in rows:
        cells = [c.strip() for c in line.split(" | ")]
        # the first column is a label; every other cell is a whole number (with its interval)
        for cell in cells[1:]:
            if cell and cell[0] in "-0123456789[":
                assert _CELL.match(cell), (cell, line)


def test_disparity_cells_one_number_reference_marked(compas: pfm.Report) -> None:
    from polars_fairmetrics.report.views import REFERENCE_MARK, section_views

    (view,) = section_views(compas.section("disparities"))
    ref = view.columns.index('race="Caucasian"')
    comparisons = [r[0] for r in view.rows]
    assert "false_positive_rate difference" in comparisons
    assert "false_positive_rate ratio" in comparisons
    for row in view.rows:
        if row[0] in ("n", "n_null"):
            continue
        assert row[ref] == REFERENCE_MARK
        for cell in row[1:]:
            assert "×" not in cell and cell.count("[") <= 1
            assert _CELL.match(cell), cell
    page = compas.to_html(plots=False)
    assert "0.0000 [0.0000, 0.0000]" not in page
    assert '<span class="ci">[' in page
    assert "overflow-x:auto" in page and "@media print" in page


def test_no_exponent_among_decimals() -> None:
    from polars_fairmetrics.report.text import fmt

    for v in (4.29e-05, -1e-9, 1e-4, 0.00009999, 123.5):
        text = fmt(v)
        assert "e" not in text
        assert float(text) == pytest.approx(v, rel=5e-3)
