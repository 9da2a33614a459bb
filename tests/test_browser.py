"""The HTML report in a real browser (headless Chromium), issue 18.

Three reports — the COMPAS ``demo`` report with intervals, a wide one (Adult, sex × race
intersectional: 10 groups, with intervals, curves, calibration, the ensemble stability sections,
three models side by side and the deployment section), and one of long unbreakable texts (group
names, source; tables only) — are opened at 1440 px and at 1024 px (the last one at 500 px too).
The test fails on:

- horizontal overflow of the page (``scrollWidth > clientWidth``; a table may scroll inside its
  own box, the page may not), or any element outside such a box reaching past the right edge;
- overlapping ``<text>`` elements inside an inline SVG (each text's box from ``getBBox()``
  transformed to the screen by ``getScreenCTM()``, rotated tick labels included; pairs
  overlapping deeper than 1.5 px);
- an ``<svg>`` or ``<img>`` that renders with zero size, an ``<svg>`` that draws no shape, an
  image that fails to load;
- any console error, uncaught error or failed load.

No Python dependency: ``chromium --headless=new --dump-dom`` on a copy of the page with a small
script (``tests/browser_check.js``) injected at the start of ``<head>``; the script writes its
results as JSON into the DOM, read back from the dump. The Chromium runs go in parallel.

With ``PFM_SAVE_SCREENSHOTS=1`` the test also writes ``docs/img/report_demo.png`` and
``docs/img/report_wide.png`` (2400 px of each page at 1440 px — the demo's top, the wide
report's per-group metrics — scaled to 1080 px and reduced to 256 colours when Pillow is
installed). Skipped only when no Chromium binary is found (set
``PFM_CHROMIUM`` to its path, or install it: ``apt-get install chromium``).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_fairmetrics as pfm
from polars_fairmetrics.cli import _compas_report
from polars_fairmetrics.datasets import data_path

ROOT = Path(__file__).resolve().parents[1]
CHECK_JS = (Path(__file__).parent / "browser_check.js").read_text(encoding="utf-8")
WIDTHS = (1440, 1024)
PHONE = 500
"""The page of long texts is also opened this narrow (headless Chromium's narrowest window)."""
_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def _chromium() -> str | None:
    given = os.environ.get("PFM_CHROMIUM")
    if given:
        return given
    for name in _NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium binary found (chromium, chromium-browser, google-chrome; or set "
    "PFM_CHROMIUM): install it with `apt-get install chromium` to run the browser checks",
)


def _args(profile: Path, width: int, height: int) -> list[str]:
    assert CHROMIUM is not None
    return [
        CHROMIUM,
        "--headless=new",
        "--disable-gpu",
        "--no-sandbox",
        "--no-first-run",
        "--hide-scrollbars",
        "--mute-audio",
        "--disable-extensions",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
        "--virtual-time-budget=3000",
        "--enable-logging=stderr",
        "--v=0",
    ]


def _checked_copy(page: Path) -> Path:
    """A copy of ``page`` with the check script at the start of its ``<head>``."""
    text = page.read_text(encoding="utf-8")
    assert text.count("<head>") == 1 and "<script" not in text  # the report has no script
    out = page.with_name(page.stem + "_checked.html")
    out.write_text(text.replace("<head>", f"<head><script>{CHECK_JS}</script>", 1), "utf-8")
    return out


_RESULT = re.compile(r'<pre id="pfm-check">(.*?)</pre>', re.S)
_CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\] (.*)")


def _run_checks(pages: dict[str, Path], tmp: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """Open every page at every width, all at once; the parsed results by (name, width)."""
    procs = {}
    for name, page in pages.items():
        url = _checked_copy(page).as_uri()
        for width in (*WIDTHS, PHONE) if name == "long" else WIDTHS:
            profile = tmp / f"profile-{name}-{width}"
            cmd = [*_args(profile, width, 900), "--dump-dom", url]
            procs[name, width] = subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
    results = {}
    for key, proc in procs.items():
        out, err = proc.communicate(timeout=120)
        m = _RESULT.search(out)
        assert m, f"{key}: no check results in the dump (exit {proc.returncode}): {err[-2000:]}"
        result = json.loads(html.unescape(m.group(1)))
        # every console message (the report has no script and the check script logs nothing
        # but console.error calls it wraps) counts as an error
        result["errors"] += [f"console: {c}" for c in _CONSOLE.findall(err)]
        results[key] = result
    return results


def _problems(result: dict[str, Any]) -> list[str]:
    out = []
    if result["scrollWidth"] > result["clientWidth"]:
        out.append(
            f"the page scrolls sideways: scrollWidth {result['scrollWidth']} > clientWidth "
            f"{result['clientWidth']}"
        )
    out += [f"past the right edge: {w}" for w in result["wide"]]
    out += [
        f"svg #{o['svg']} (section {o['section']!r}): text {o['a']!r} overlaps {o['b']!r} by "
        f"{o['depth']} px"
        for o in result["overlaps"]
    ]
    out += [f"figure not rendered: {e}" for e in result["empty"]]
    out += result["errors"]
    return out


def _wide_report() -> pfm.Report:
    lf = pl.scan_parquet(data_path("adult_ensemble.parquet"))
    models = [c for c in lf.collect_schema().names() if re.fullmatch(r"p\d+", c)]
    lf = lf.with_columns(
        pl.mean_horizontal(models).alias("score"),
        *(pl.col(m).ge(0.5).alias(f"label_{m}") for m in models[:3]),
    )
    return pfm.audit(
        lf,
        y_true="high_income",
        y_score="score",
        threshold=0.5,
        by=["sex", "race"],
        intersectional=True,
        models=models,
        intervals=30,  # few: the calibration's intervals resample the rows
        seed=0,
        curve_bins=50,
        deploy_positive_rate=0.1,
        predictions={f"model {m}": f"label_{m}" for m in models[:3]},
        source="embedded Adult test set, 15 bootstrap-trained models; score = mean probability",
    )


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("browser")
    demo = _compas_report(5, intervals=100, seed=0)
    wide = _wide_report()
    groups = wide.section("groups").table.height
    assert groups >= 8, groups
    assert {"curves", "stability", "deployment", "models"} <= set(wide.section_names)
    out = {"demo": tmp / "demo.html", "wide": tmp / "wide.html", "long": tmp / "long.html"}
    demo.to_html(out["demo"])
    wide.to_html(out["wide"])
    _long_texts_report().to_html(out["long"], plots=False)
    return out


def _long_texts_report() -> pfm.Report:
    """Texts with no place to break: group names of 150 characters, a long source path."""
    names = ["a_group_name_without_any_space_" * 5, "short", "x" * 150]
    df = pl.DataFrame({"g": names * 20, "y": [1, 0, 1] * 20, "p": [1, 1, 0] * 20})
    source = "/data/" + "deeply/nested/" * 20 + "predictions.parquet"
    return pfm.audit(df, y_true="y", y_pred="p", by="g", source=source, intervals=20)


def test_reports_render_in_chromium(pages: dict[str, Path], tmp_path: Path) -> None:
    results = _run_checks(pages, tmp_path)
    problems = {f"{n} at {w} px": _problems(r) for (n, w), r in results.items()}
    if os.environ.get("PFM_SAVE_SCREENSHOTS") == "1":
        # the demo from its top; the wide report from its per-group metrics (a wide table)
        for name, start in (("demo", None), ("wide", "metrics")):
            target = ROOT / "docs" / "img" / f"report_{name}.png"
            _screenshot(pages[name], start, target, tmp_path)
    if any(problems.values()):
        pytest.fail(json.dumps(problems, indent=1, ensure_ascii=False), pytrace=False)
    for (name, _), r in results.items():
        if name != "long":  # the plots are there (matplotlib is a test dependency)
            assert r["svgs"] >= 3, (name, r["svgs"])


def _screenshot(page: Path, start: str | None, target: Path, tmp: Path, width: int = 1440) -> None:
    """2400 px of ``page`` at ``width`` px from its top or from the section ``start`` (what
    comes before it hidden by a style), scaled down and reduced to 256 colours (Pillow)."""
    height = 2400
    if start is not None:
        hide = f".pfm-report>:not(#{start}):not(#{start}~*){{display:none}}"
        shown = tmp / f"{target.stem}-from-{start}.html"
        text = page.read_text(encoding="utf-8")
        shown.write_text(text.replace("</head>", f"<style>{hide}</style></head>", 1), "utf-8")
        page = shown
    raw = tmp / f"{target.stem}-raw.png"
    cmd = [*_args(tmp / f"shot-{target.stem}", width, height), f"--screenshot={raw}"]
    subprocess.run([*cmd, page.as_uri()], check=True, capture_output=True, timeout=120)
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - Pillow comes with matplotlib
        shutil.copyfile(raw, target)
        return
    with Image.open(raw) as im:
        small = im.convert("RGB").resize((1080, round(im.height * 1080 / im.width)))
        small.quantize(colors=256).save(target, optimize=True)


# ---------------------------------------------------------------------------------------------
# the checks themselves can fail
# ---------------------------------------------------------------------------------------------

_BROKEN = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>broken</title></head><body>
<div class="pfm-report"><div style="width:3000px">too wide</div>
<svg width="200" height="100"><rect width="20" height="20"/><text x="10" y="50">overlapping</text>
<text x="14" y="52">overlapping too</text>
<text x="150" y="50" transform="rotate(-30 150 50)">rotated</text></svg>
<svg width="0" height="0"></svg>
<svg width="100" height="40"><text x="5" y="20">a title only</text></svg>
<img src="missing.png" alt="">
</div><script>console.error("boom")</script></body></html>
"""


def test_checks_catch_a_broken_page(tmp_path: Path) -> None:
    copy = tmp_path / "broken_checked.html"  # has a script: not through _checked_copy
    copy.write_text(_BROKEN.replace("<head>", f"<head><script>{CHECK_JS}</script>", 1), "utf-8")
    cmd = [*_args(tmp_path / "profile", 1024, 900), "--dump-dom", copy.as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    m = _RESULT.search(done.stdout)
    assert m, done.stderr[-2000:]
    result = json.loads(html.unescape(m.group(1)))
    problems = "\n".join(_problems(result))
    assert "scrolls sideways" in problems
    assert "text 'overlapping' overlaps 'overlapping too'" in problems
    assert "rotated" not in problems  # a rotated label away from the others is not an overlap
    assert "not rendered: svg #1: zero size" in problems
    assert "not rendered: img #0" in problems
    assert "svg #2: draws nothing" in problems and "rendered: svg #0" not in problems
    assert "failed to load <img>" in problems and "console.error: boom" in problems
