"""The report with hostile and awkward inputs, in every output format.

Classes of defects, each with its own tests:

- group identity: names that look like columns of a view (``metric``, ``value``, ``attribute``),
  separators, quotes, ``"null"`` beside a real null, the empty string, unicode — every group
  keeps its own row / column and its own numbers (oracle: the rows of that group alone);
- hostile text: Markdown / HTML markup, links and images, ANSI escape sequences and other
  control characters in group names, column names and the source never reach the terminal,
  Markdown or HTML outputs raw (Markdown is rendered by Python-Markdown and the HTML parsed);
- files: a section named like a path never writes outside the Parquet folder;
- rows accounted for: every section keeps a group whose rows are all null, with null values and
  its ``n_null``;
- one scan: an audit collects the rows once and no other query (its small tables are computed
  once from the collected count table).
"""

from __future__ import annotations

import html
import json
import re
import string
import unicodedata
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import markdown
import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_fairmetrics as pfm
from polars_fairmetrics._text import visible
from polars_fairmetrics.report import Report, Section, audit
from polars_fairmetrics.report.render_data import parquet_file_names
from polars_fairmetrics.report.render_text import md_escape, md_line
from polars_fairmetrics.report.views import section_views
from polars_fairmetrics.results import display_label

HOSTILE = [
    "metric",
    "value",
    "attribute",
    "group",
    "n",
    "reference",
    "",
    "null",
    "None",
    'a", b="c',
    "x=1, y=2",
    "a & b",
    "é中文",
    "<script>alert(1)</script>",
    "![img](http://evil.example/x.png)",
    "[x](javascript:alert(1))",
    "\x1b[31mred\x1b[0m",
    "\u202eevil",
    "line\nbreak",
    "|pipe|",
    "www.evil.example",
    "**bold** _it_ `code`",
    "&amp;",
    "\\x1b",
    "- item",
    "\x9b2J",
]
"""Group names that have broken reports: each must stay its own group, shown as text."""


def _frame(names: list[str | None], seed: int = 0, per: int = 6) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n = len(names) * per
    return pl.DataFrame(
        {
            "g": [name for name in names for _ in range(per)],
            "y": rng.integers(0, 2, n),
            "p": rng.integers(0, 2, n),
            "score": rng.integers(0, 11, n) / 10,
        },
        schema={"g": pl.String, "y": pl.Int64, "p": pl.Int64, "score": pl.Float64},
    )


def _raw_controls(text: str) -> list[str]:
    """Characters that must never reach an output raw (the layout's newline aside)."""
    return sorted({c for c in text if c != "\n" and not c.isprintable()})


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def _tags(page: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    parser = _Tags()
    parser.feed(page)
    return parser.tags


@pytest.fixture(scope="module")
def hostile() -> tuple[pl.DataFrame, Report]:
    df = _frame([*HOSTILE, None])
    r = audit(
        df,
        y_true="y",
        y_score="score",
        threshold=0.5,
        by="g",
        reference="null",  # the text "null", not the null group
        deploy_positive_rate=0.2,
        curve_bins=10,
        source="\x1b]0;title\x07 <b>src</b> [l](javascript:x)",
    )
    return df, r


# ---------------------------------------------------------------------------------------------
# group identity
# ---------------------------------------------------------------------------------------------


def test_every_group_keeps_its_own_numbers(hostile: tuple[pl.DataFrame, Report]) -> None:
    df, r = hostile
    metrics = r["metrics"]
    assert metrics["g"].n_unique() == len(HOSTILE) + 1  # every name and the null group
    for name in [*HOSTILE, None]:
        rows = df.filter(pl.col("g").eq_missing(name))
        pred = rows["score"] >= 0.5
        y = rows["y"] == 1
        got = metrics.filter(pl.col("g").eq_missing(name), metric="selection_rate")
        assert got["value"].item() == pytest.approx(pred.mean()), name
        tpr = metrics.filter(pl.col("g").eq_missing(name), metric="true_positive_rate")
        want = (pred & y).sum() / y.sum() if y.sum() else None
        assert tpr["value"].item() == (pytest.approx(want) if want is not None else None)
    # the reference is the text "null": only that group is the reference, the null group is not
    crit = r["criteria"].filter(metric="disparate_impact")
    assert crit.filter("is_reference")["g"].to_list() == ["null"]
    assert crit.filter(pl.col("g").is_null())["is_reference"].to_list() == [False]


def test_views_give_every_group_its_own_label(hostile: tuple[pl.DataFrame, Report]) -> None:
    _, r = hostile
    labels = {display_label({"g": v}) for v in [*HOSTILE, None]}
    assert len(labels) == len(HOSTILE) + 1
    shown = {visible(label) for label in labels}
    for name in ("metrics", "disparities", "criteria", "groups", "curve_summaries", "deployment"):
        (view,) = section_views(r.section(name))
        heads = set(view.columns)
        if heads & shown:  # groups as columns
            assert heads >= shown, name
        else:  # groups in rows, in the label column
            assert {row[0] for row in view.rows} == shown, name
        assert len(view.columns) == len(set(view.columns)), name


def test_pivot_with_groups_named_like_its_columns() -> None:
    names: list[str | None] = ["metric", "value", "group", "n", "n_null", "", None]
    df = _frame(names)
    r = audit(df, y_true="y", y_pred="p", by="g", metrics=["selection_rate"])
    (view,) = section_views(r.section("metrics"))
    order = r["metrics"]["g"].to_list()  # the keys sorted, nulls last
    assert view.columns == ("metric", *[display_label({"g": v}) for v in order])
    assert [row[0] for row in view.rows] == ["selection_rate", "n", "n_null"]
    for value, name in zip(view.rows[0][1:], order, strict=True):
        want = df.filter(pl.col("g").eq_missing(name))["p"].mean()
        assert float(value) == pytest.approx(want, abs=5e-5)


def test_intersections_that_join_to_the_same_text_stay_apart() -> None:
    # ("a & b", "c") and ("a", "b & c") would both read "a & b & c" if joined
    df = pl.DataFrame(
        {
            "g": ["a & b"] * 4 + ["a"] * 4,
            "s": ["c"] * 4 + ["b & c"] * 4,
            "y": [1, 1, 0, 0, 1, 1, 0, 0],
            "p": [1, 1, 1, 1, 1, 0, 0, 0],
        }
    )
    r = audit(
        df, y_true="y", y_pred="p", by=["g", "s"], intersectional=True, reference=("a & b", "c")
    )
    sr = r["disparities"].filter(metric="selection_rate")
    assert sr.select("g", "s", "value", "reference_value", "difference").rows() == [
        ("a", "b & c", 0.25, 1.0, -0.75),
        ("a & b", "c", 1.0, 1.0, 0.0),
    ]
    (view,) = section_views(r.section("metrics"))
    assert set(view.columns[1:]) == {'g="a", s="b & c"', 'g="a & b", s="c"'}


def test_text_null_and_missing_value_differ_in_every_output(tmp_path: Path) -> None:
    df = _frame(["null", None, "x"])
    r = audit(df, y_true="y", y_pred="p", by="g", reference="null")
    assert r["groups"]["g"].to_list() == ["null", "x", None]
    text = r.to_terminal()
    assert 'g="null"' in text and "g=null" in text
    doc = json.loads(r.to_json())
    assert [row["g"] for row in doc["sections"]["groups"]["rows"]] == ["null", "x", None]
    r.write_parquet(tmp_path)
    assert pl.read_parquet(tmp_path / "groups.parquet")["g"].to_list() == ["null", "x", None]


# ---------------------------------------------------------------------------------------------
# hostile text
# ---------------------------------------------------------------------------------------------


def test_terminal_has_no_raw_control_character(hostile: tuple[pl.DataFrame, Report]) -> None:
    _, r = hostile
    text = r.to_terminal()
    assert _raw_controls(text) == []
    assert "\\x1b[31mred" in text and "\\u202eevil" in text and "\\x9b2J" in text
    for result in r.check("accuracy < 2", "disparate_impact > -1"):
        assert _raw_controls(result.message) == []


def _only_own_anchors(tags: list[tuple[str, list[tuple[str, str | None]]]]) -> None:
    """Every ``<a>`` is one of the report's own: an ``id`` or an ``href="#id"`` of a safe stem."""
    for name, attrs in tags:
        if name == "a":
            for key, value in attrs:
                assert key in ("id", "href"), attrs
                assert re.fullmatch(r"#?[A-Za-z0-9_-]+", value or ""), attrs


def test_markdown_renders_group_names_as_text(hostile: tuple[pl.DataFrame, Report]) -> None:
    _, r = hostile
    md = r.to_markdown()
    assert _raw_controls(md) == []
    # the only links are the report's own: section anchors ([A-Za-z0-9_-]), never the data's
    assert "](" not in re.sub(r"\]\(#[A-Za-z0-9_-]+\)", "", md)
    assert "![" not in md and "<script" not in md
    page = markdown.markdown(md, extensions=["tables"])
    tags = _tags(page)
    _only_own_anchors(tags)
    names = {t for t, _ in tags}
    assert not names & {"img", "script", "b", "strong", "code", "iframe"}, names
    assert "javascript:" not in " ".join(str(a) for _, attrs in tags for a in attrs)
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    for name in HOSTILE:
        assert visible(display_label({"g": name})) in text, name


def test_html_escapes_every_text(hostile: tuple[pl.DataFrame, Report]) -> None:
    _, r = hostile
    page = r.to_html()
    assert _raw_controls(page) == []
    tags = _tags(page)
    _only_own_anchors(tags)
    names = {t for t, _ in tags}
    assert not names & {"img", "script", "b", "iframe", "link", "base"}, names
    assert "javascript:" not in " ".join(str(a) for _, attrs in tags for a in attrs)
    assert html.escape(visible(display_label({"g": HOSTILE[13]}))) in page


def test_json_and_parquet_carry_the_exact_names(
    hostile: tuple[pl.DataFrame, Report], tmp_path: Path
) -> None:
    _, r = hostile
    text = r.to_json()
    assert _raw_controls(text) == []
    doc = json.loads(text)
    for name in r.section_names:
        rows = doc["sections"][name]["rows"]
        for row in rows:
            for k, v in row.items():
                if v in ("Infinity", "-Infinity"):
                    row[k] = float(v)
        back = pl.DataFrame(rows, schema=r[name].schema, orient="row")
        assert_frame_equal(back, r[name])
    assert doc["inputs"]["source"] == "\x1b]0;title\x07 <b>src</b> [l](javascript:x)"
    r.write_parquet(tmp_path)
    for name in r.section_names:
        assert_frame_equal(pl.read_parquet(tmp_path / f"{name}.parquet"), r[name])


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30))
def test_markdown_escape_renders_as_the_text_itself(text: str) -> None:
    """Oracle: Python-Markdown renders the escaped text as exactly the (visible) text."""
    page = markdown.markdown(md_line(text), extensions=["tables"])
    names = {t for t, _ in _tags(page)}
    assert names <= {"p"}, (text, page)
    shown = html.unescape(re.sub(r"</?p>", "", page))
    assert shown.strip() == visible(text).strip()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=8) | st.none(), min_size=1, max_size=6, unique=True))
def test_labels_tell_any_groups_apart(names: list[str | None]) -> None:
    labels = [visible(display_label({"g": v})) for v in names]
    assert len(set(labels)) == len(names)
    assert all(_raw_controls(label) == [] for label in labels)


def test_md_escape_is_minimal_for_plain_text() -> None:
    assert md_escape("true_positive_rate 0.1234 -0.5") == "true\\_positive\\_rate 0.1234 -0.5"
    assert set(string.ascii_letters + string.digits + " .,-") >= set(md_escape("abc 1.5, -2"))


def test_visible_escapes_every_non_printable_character() -> None:
    for code in [*range(0x20), *range(0x7F, 0xA0), 0x200B, 0x202E, 0x2066, 0x2028, 0xFEFF]:
        c = chr(code)
        assert not c.isprintable() or unicodedata.category(c) == "Zs"
        assert visible(f"a{c}b") != f"a{c}b"
        assert visible(f"a{c}b").isprintable()


# ---------------------------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------------------------

PATHS = [
    "../x",
    "..",
    ".",
    "/etc/passwd",
    "a/../../b",
    "a\\..\\b",
    "CON",
    "nul",
    "manifest",
    "",
    "x" * 300,
    "métriques",
    "metrics!",
    "\x1b[31m",
]


def test_parquet_files_stay_in_their_folder(tmp_path: Path) -> None:
    df = _frame(["a", "b"])

    def builder(name: str) -> Any:
        def build(ctx: Any) -> Section:
            return Section(name, f"<b>{name}</b>", name, ctx.tables["groups"], (name,), ("g",))

        return build

    r = audit(df, y_true="y", y_pred="p", by="g", extra_sections=[builder(n) for n in PATHS])
    out = tmp_path / "deep" / "out"
    written = r.write_parquet(out)
    assert all(p.resolve().parent == out.resolve() for p in written)
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in written)
    assert list(tmp_path.iterdir()) == [tmp_path / "deep"]
    manifest = json.loads((out / "manifest.json").read_text())
    files = [manifest["sections"][n]["file"] for n in r.section_names]
    assert len(set(files)) == len(files) == len(r.section_names)
    for name in PATHS:
        assert_frame_equal(pl.read_parquet(out / manifest["sections"][name]["file"]), r[name])
    assert parquet_file_names(PATHS)["../x"] == "x.parquet"
    page = r.to_html()
    assert _raw_controls(page) == [] and "<b>" not in page


# ---------------------------------------------------------------------------------------------
# rows accounted for
# ---------------------------------------------------------------------------------------------


def test_a_group_whose_rows_are_all_null_appears_everywhere() -> None:
    df = _frame(["a", "b", "z"]).with_columns(
        y=pl.when(pl.col("g") == "z").then(None).otherwise(pl.col("y"))
    )
    r = audit(
        df.lazy(),
        y_true="y",
        y_score="score",
        threshold=0.5,
        by="g",
        deploy_positive_rate=0.3,
        curve_bins=10,
    )
    for name in (
        "groups",
        "metrics",
        "disparities",
        "criteria",
        "curve_summaries",
        "deployment",
    ):
        z = r[name].filter(g="z")
        assert z.height > 0, name
        assert set(z["n_null"].to_list()) == {6} and set(z["n"].to_list()) == {0}, name
        if "value" in z.columns:
            assert z["value"].null_count() == z.height, name
        assert any("left out" in n for n in r.section(name).notes), name
    assert r["undefined"].filter(g="z").height > 0
    assert r["between_groups"]["n_undefined"].min() >= 1
    assert r.inputs["n_null"] == 6 and r.inputs["n_rows"] == df.height


# ---------------------------------------------------------------------------------------------
# one scan, every table once
# ---------------------------------------------------------------------------------------------


def test_an_audit_collects_the_rows_once_and_nothing_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = {"collect": 0, "collect_all": 0}
    collect, collect_all = pl.LazyFrame.collect, pl.collect_all

    def counting(self: pl.LazyFrame, *args: Any, **kwargs: Any) -> Any:
        calls["collect"] += 1
        return collect(self, *args, **kwargs)

    def counting_all(*args: Any, **kwargs: Any) -> Any:
        calls["collect_all"] += 1
        return collect_all(*args, **kwargs)

    monkeypatch.setattr(pl.LazyFrame, "collect", counting)
    monkeypatch.setattr(pl, "collect_all", counting_all)
    df = _frame(["a", "b", "c"])
    r = audit(df.lazy(), y_true="y", y_pred="p", by=["g"], reference="a", intervals=20)
    assert calls == {"collect": 1, "collect_all": 0}
    assert r.section("criteria").has_intervals


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_hostile_report_is_the_same_on_both_engines(engine: str) -> None:
    df = _frame([*HOSTILE[:12], None])
    a = audit(df.lazy(), y_true="y", y_pred="p", by="g", engine="auto")
    b = audit(df.lazy(), y_true="y", y_pred="p", by="g", engine=engine)  # type: ignore[arg-type]
    for name in a.section_names:
        assert_frame_equal(a[name], b[name])
    assert a.to_markdown() == b.to_markdown()
    own = pfm.group_metrics(df, y_true="y", y_pred="p", by="g", metrics=a.inputs["metrics"])
    assert_frame_equal(own, a["metrics"])
