"""audit(), the Report, gates and the renderers.

Oracle: a brute-force NumPy computation of the confusion counts and metrics per group, written
here (it shares no code with the package); round trips compare JSON / Parquet outputs with the
library's own functions.
"""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_fairmetrics as pfm
from polars_fairmetrics import plot
from polars_fairmetrics.exceptions import FairMetricsError, InvalidOptionError
from polars_fairmetrics.report import (
    DEFAULT_AUDIT_CRITERIA,
    AuditOptions,
    Report,
    Section,
    audit,
    parse_gate,
)
from polars_fairmetrics.report.extensions import withhold_curve_intervals
from polars_fairmetrics.report.intervals import withhold_deployment_intervals
from polars_fairmetrics.report.render_html import MISSING_PLOT_NOTE
from polars_fairmetrics.report.views import section_views

# ---------------------------------------------------------------------------------------------
# data and the NumPy oracle
# ---------------------------------------------------------------------------------------------


def _frame(seed: int, n: int = 400, weighted: bool = False) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c"], size=n, p=[0.5, 0.35, 0.15])
    s = rng.choice(["F", "M"], size=n)
    y = rng.integers(0, 2, size=n)
    p = rng.integers(0, 2, size=n)
    # edge cases: group "c" has no actual positives; group "d" predicts nothing positive
    y[g == "c"] = 0
    extra = pl.DataFrame({"g": ["d"] * 5, "s": ["F"] * 5, "y": [1, 0, 1, 0, 1], "p": [0] * 5})
    df = pl.DataFrame({"g": g, "s": s, "y": y, "p": p}).vstack(
        extra.cast({"y": pl.Int64, "p": pl.Int64})
    )
    if weighted:
        w = np.random.default_rng(seed + 1).uniform(0, 3, size=df.height)
        w[:3] = 0.0
        df = df.with_columns(w=pl.Series(w))
    return df


def _oracle_counts(
    df: pl.DataFrame, attr: str, weight: str | None = None
) -> dict[str, dict[str, float]]:
    g = df[attr].to_numpy()
    y = df["y"].to_numpy() == 1
    p = df["p"].to_numpy() == 1
    w = df[weight].to_numpy() if weight else np.ones(len(y))
    out = {}
    for grp in sorted(set(g)):
        m = g == grp
        out[grp] = {
            "tp": float(w[m & y & p].sum()),
            "fp": float(w[m & ~y & p].sum()),
            "tn": float(w[m & ~y & ~p].sum()),
            "fn": float(w[m & y & ~p].sum()),
        }
    return out


def _div(a: float, b: float) -> float | None:
    return a / b if b != 0 else None


def _oracle_metric(name: str, c: dict[str, float]) -> float | None:
    tp, fp, tn, fn = c["tp"], c["fp"], c["tn"], c["fn"]
    n = tp + fp + tn + fn
    return {
        "selection_rate": _div(tp + fp, n),
        "base_rate": _div(tp + fn, n),
        "accuracy": _div(tp + tn, n),
        "true_positive_rate": _div(tp, tp + fn),
        "false_positive_rate": _div(fp, fp + tn),
        "false_negative_rate": _div(fn, tp + fn),
        "positive_predictive_value": _div(tp, tp + fp),
        "negative_predictive_value": _div(tn, tn + fn),
    }[name]


ORACLE_METRICS = [
    "selection_rate",
    "base_rate",
    "accuracy",
    "true_positive_rate",
    "false_positive_rate",
    "false_negative_rate",
    "positive_predictive_value",
    "negative_predictive_value",
]


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


# ---------------------------------------------------------------------------------------------
# audit vs the oracle
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_audit_metrics_and_criteria_match_numpy_oracle(seed: int, weighted: bool) -> None:
    df = _frame(seed, weighted=weighted)
    w = "w" if weighted else None
    r = audit(
        df.lazy(),
        y_true="y",
        y_pred="p",
        by=["g", "s"],
        weight=w,
        reference={"g": "a", "s": "M"},
        metrics=ORACLE_METRICS,
    )
    for attr, ref in (("g", "a"), ("s", "M")):
        counts = _oracle_counts(df, attr, w)
        got = r["metrics"].filter(pl.col("attribute") == attr)
        assert sorted(set(got[attr].to_list())) == sorted(counts)
        assert got.select([k for k in ("g", "s") if k != attr]).null_count().item() == got.height
        for row in got.iter_rows(named=True):
            assert _close(row["value"], _oracle_metric(row["metric"], counts[row[attr]])), row
        crit = r["criteria"].filter(pl.col("attribute") == attr)
        for row in crit.iter_rows(named=True):
            c, cr = counts[row[attr]], counts[ref]
            base = {
                "statistical_parity_difference": "selection_rate",
                "disparate_impact": "selection_rate",
                "equal_opportunity_difference": "true_positive_rate",
                "predictive_equality_difference": "false_positive_rate",
                "false_negative_rate_difference": "false_negative_rate",
                "accuracy_equality_difference": "accuracy",
                "positive_predictive_parity_difference": "positive_predictive_value",
                "negative_predictive_parity_difference": "negative_predictive_value",
            }
            name = row["metric"]
            if name == "equalized_odds_difference":
                parts = []
                for m in ("false_positive_rate", "false_negative_rate"):
                    a, b = _oracle_metric(m, c), _oracle_metric(m, cr)
                    parts.append(None if a is None or b is None else abs(a - b))
                want = None if None in parts else max(p for p in parts if p is not None)
            else:
                a, b = _oracle_metric(base[name], c), _oracle_metric(base[name], cr)
                if a is None or b is None:
                    want = None
                elif name == "disparate_impact":
                    want = _div(a, b)
                else:
                    want = a - b
            assert _close(row["value"], want), row


def test_groups_section_reconciles_rows_and_reports_nulls() -> None:
    df = _frame(3).with_columns(
        y=pl.when(pl.int_range(pl.len()) < 7).then(None).otherwise(pl.col("y"))
    )
    r = audit(df, y_true="y", y_pred="p", by="g")
    groups = r["groups"]
    assert groups["n"].sum() + groups["n_null"].sum() == df.height
    assert groups["n_null_y_true"].sum() == 7
    assert r.inputs["n_rows"] == df.height and r.inputs["n_null"] == 7
    assert math.isclose(groups["share"].sum(), 1.0)
    assert any("left out" in n for n in r.section("groups").notes)


def test_undefined_values_have_reasons() -> None:
    r = audit(_frame(4), y_true="y", y_pred="p", by="g", reference="a")
    und = r["undefined"]
    tpr_c = und.filter(pl.col("g") == "c", pl.col("metric") == "true_positive_rate")
    assert tpr_c["reason"].to_list() == [pfm.METRICS["true_positive_rate"].undefined_when]
    ppv_d = und.filter(pl.col("g") == "d", pl.col("metric") == "positive_predictive_value")
    assert ppv_d["reason"].to_list() == ["nothing is predicted positive"]
    crit = und.filter(
        pl.col("section") == "criteria",
        pl.col("g") == "c",
        pl.col("metric") == "equal_opportunity_difference",
    )
    assert "true_positive_rate of the group is undefined" in crit["reason"].item()
    # every null in metrics and criteria is listed
    n_null = r["metrics"]["value"].null_count() + r["criteria"]["value"].null_count()
    assert und.height == n_null
    assert "undefined" in r.section("metrics").notes[0]


def test_undefined_reason_for_zero_reference_ratio() -> None:
    df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [0, 0, 1, 0]})
    r = audit(df, y_true="y", y_pred="p", by="g", reference="a", criteria=["disparate_impact"])
    reason = r["undefined"].filter(pl.col("metric") == "disparate_impact")["reason"].to_list()
    assert reason == ["selection_rate of the reference is 0 (ratio x / 0)"] * 2


def test_streaming_and_in_memory_agree_and_namespace_delegates() -> None:
    lf = _frame(5, weighted=True).lazy()
    kw: dict[str, Any] = {
        "y_true": "y",
        "y_pred": "p",
        "by": ["g", "s"],
        "weight": "w",
        "reference": "rest",
    }
    a = audit(lf, engine="streaming", **kw)
    b = audit(lf, engine="in-memory", **kw)
    c = lf.fair.audit(**kw)
    for name in a.section_names:
        assert_frame_equal(a[name], b[name])
        assert_frame_equal(a[name], c[name])


def test_sections_equal_the_librarys_own_results() -> None:
    df = _frame(6)
    r = audit(df, y_true="y", y_pred="p", by="g", reference="b", metrics="all")
    direct = pfm.disparities(
        df, y_true="y", y_pred="p", by="g", reference="b", metrics=list(pfm.METRICS)
    )
    assert_frame_equal(r["disparities"], direct)
    gm = pfm.group_metrics(df, y_true="y", y_pred="p", by="g")
    assert_frame_equal(r["metrics"], gm)
    crit = pfm.fairness_criteria(df, y_true="y", y_pred="p", by="g", reference="b")
    assert_frame_equal(r["criteria"], crit)
    between = pfm.between_groups(df, y_true="y", y_pred="p", by="g", metrics=list(pfm.METRICS))
    assert_frame_equal(r["between_groups"], between)


def test_intersectional_and_score_threshold() -> None:
    df = _frame(7).with_columns(score=pl.col("p") * 0.6 + 0.2)
    r = audit(
        df,
        y_true="y",
        y_score="score",
        threshold=0.5,
        by=["g", "s"],
        intersectional=True,
        reference=("a", "M"),
    )
    assert "attribute" not in r["groups"].columns  # one attribute: the combinations of g, s
    assert r["groups"].filter(g="a", s="M").height == 1
    assert r.inputs["threshold"] == 0.5 and r.inputs["intersectional"] is True
    plain = audit(
        df, y_true="y", y_pred="p", by=["g", "s"], intersectional=True, reference=("a", "M")
    )
    assert_frame_equal(r["criteria"], plain["criteria"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"by": []}, "at least one by"),
        ({"by": ["g", "s"], "reference": "a"}, "several attributes"),
        ({"by": ["g", "s"], "reference": {"g": "a"}}, "no group for attribute"),
        ({"by": "g", "reference": {"zz": "a"}}, "must name exactly the group columns"),
        ({"by": ["g", "s"], "reference": {"g": "a", "zz": "M"}}, "not among the audited"),
        ({"by": ["g", "s"], "intersectional": True, "reference": "a"}, "several columns"),
        ({"by": ["g", "g"]}, "names a column twice"),
        ({"by": "g", "intervals": 10**9}, "at most"),
        ({"by": "g", "seed": -1}, "non-negative"),
        ({"by": "g", "seed": 1.5}, "non-negative"),
        ({"by": "g", "criteria": ["nope"]}, "unknown criterion"),
        ({"by": "g", "metrics": ["nope"]}, "unknown metric"),
    ],
)
def test_audit_option_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidOptionError, match=message):
        audit(_frame(0), y_true="y", y_pred="p", **kwargs)


def test_missing_column_raises_at_build_time() -> None:
    with pytest.raises(pfm.ColumnNotFoundError, match="'nope'"):
        audit(_frame(0).lazy(), y_true="y", y_pred="p", by="nope")


# ---------------------------------------------------------------------------------------------
# extension point
# ---------------------------------------------------------------------------------------------


def test_extra_sections_plug_in_and_may_replace() -> None:
    def sizes(ctx: Any) -> Section:
        return Section("sizes", "Sizes", "n per group", ctx.counts.select("g", "n"), keys=("g",))

    def absent(ctx: Any) -> None:
        return None

    def with_ci(ctx: Any) -> Section:
        m = ctx.sections["metrics"]
        t = m.table.with_columns(ci_low=pl.col("value") - 0.1, ci_high=pl.col("value") + 0.1)
        return m.replace(t)

    def no_keys(ctx: Any) -> Section:  # a keyed table without its keys: shown row by row
        return Section("plain", "Plain", "rows", ctx.tables["metrics"])

    r = audit(
        _frame(1), y_true="y", y_pred="p", by="g", extra_sections=[no_keys, sizes, absent, with_ci]
    )
    assert r.section_names[-1] == "sizes" and "absent" not in r
    assert r.section("metrics").has_intervals
    assert r.notes == []  # intervals present: no "point estimates only" note
    view = section_views(r.section("metrics"))[0]
    assert re.search(r"\d\.\d{4} \[-?\d\.\d{4}, \d\.\d{4}\]", view.rows[0][1])
    plain = section_views(r.section("plain"))[0]
    assert plain.columns[0] == "g" and plain.height == r["metrics"].height
    assert section_views(r.section("sizes"))[0].columns == ("group", "n")
    assert "[" in r.to_markdown()


# ---------------------------------------------------------------------------------------------
# gates
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true') < 1",
        "disparate_impact < 0.8 or 1",
        "disparate_impact",
        "abs(disparate_impact) ci_excludes 0",
        "nope < 1",
        "disparate_impact < abc",
        "disparate_impact <> 1",
        "lambda: 0 < 1",
    ],
)
def test_gate_parser_rejects(text: str) -> None:
    with pytest.raises(InvalidOptionError):
        parse_gate(text)


def test_gates_semantics() -> None:
    df = pl.DataFrame(
        {
            "g": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
            "y": [1, 0, 1, 0] * 3,
            "p": [1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 0],
        }
    )
    # selection rates a 0.75, b 0.25, c 0.5; reference a
    r = audit(df, y_true="y", y_pred="p", by="g", reference="a")
    di, spd, sr, ratio, ok = r.check(
        "disparate_impact < 0.5",
        "abs(statistical_parity_difference) >= 0.5",
        "selection_rate <= 0.25",
        "selection_rate_ratio < 0.8",
        "disparate_impact > 1.0",
    )
    assert di.failed and di.violations["g"].to_list() == ["b"]
    assert spd.failed and spd.violations["value"].to_list() == [0.5]
    assert sr.failed and sr.violations["g"].to_list() == ["b"]
    assert ratio.violations["g"].to_list() == ["b", "c"]
    assert not ok.failed and ok.n_checked == 2  # the reference group itself is not checked
    assert di.message.startswith('FAIL disparate_impact < 0.5: g="b"')
    with pytest.raises(InvalidOptionError, match="needs confidence intervals"):
        r.check("equal_opportunity_difference ci_excludes 0")


def test_gate_ci_excludes_with_intervals_and_undefined_counted() -> None:
    def with_ci(ctx: Any) -> Section:
        c = ctx.sections["criteria"]
        t = c.table.with_columns(ci_low=pl.col("value") - 0.05, ci_high=pl.col("value") + 0.05)
        return c.replace(t)

    r = audit(_frame(2), y_true="y", y_pred="p", by="g", reference="a", extra_sections=[with_ci])
    (res,) = r.check("equal_opportunity_difference ci_excludes 0")
    eo = r["criteria"].filter(
        pl.col("metric") == "equal_opportunity_difference", pl.col("g") != "a"
    )
    want = eo.filter((pl.col("ci_low") > 0) | (pl.col("ci_high") < 0))["g"].to_list()
    assert res.violations["g"].to_list() == want
    assert res.n_undefined == 1  # group c has no positives


# ---------------------------------------------------------------------------------------------
# renderers
# ---------------------------------------------------------------------------------------------


def _check_schema(doc: dict[str, Any]) -> None:
    assert set(doc) == {"schema_version", "generated_by", "inputs", "notes", "sections"}
    assert doc["schema_version"] == "2"
    assert doc["generated_by"].startswith("polars_fairmetrics ")
    for key in (
        "score_bounds",
        "y_true",
        "y_pred",
        "y_score",
        "threshold",
        "by",
        "intersectional",
        "weight",
        "reference",
        "pos_label",
        "neg_label",
        "metrics",
        "criteria",
        "source",
        "n_rows",
        "n_counted",
        "n_null",
    ):
        assert key in doc["inputs"], key
    assert isinstance(doc["notes"], list)
    for name, s in doc["sections"].items():
        assert set(s) >= {"title", "description", "notes", "keys", "columns", "rows"}, name
        names = [c["name"] for c in s["columns"]]
        assert all(set(c) == {"name", "dtype"} for c in s["columns"])
        assert all(list(row) == names for row in s["rows"]), name


def test_json_schema_and_round_trip(tmp_path: Path) -> None:
    df = _frame(8, weighted=True)
    r = audit(df, y_true="y", y_pred="p", by=["g", "s"], weight="w", reference={"g": "a", "s": "F"})
    text = r.to_json(tmp_path / "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc == json.loads(text) == r.to_dict()
    _check_schema(doc)
    assert list(doc["sections"]) == r.section_names
    for name in r.section_names:
        s = doc["sections"][name]
        back = pl.DataFrame(s["rows"], schema=r[name].schema, orient="row")
        assert_frame_equal(back, r[name])
    # numbers equal the library's own results
    crit = pfm.fairness_criteria(df, y_true="y", y_pred="p", by="g", weight="w", reference="a")
    back = pl.DataFrame(doc["sections"]["criteria"]["rows"]).filter(pl.col("attribute") == "g")
    assert_frame_equal(back.select("g", "metric", "value"), crit.select("g", "metric", "value"))


def test_parquet_round_trip(tmp_path: Path) -> None:
    df = _frame(9)
    r = audit(df, y_true="y", y_pred="p", by="g", reference="rest")
    written = r.write_parquet(tmp_path / "out")
    assert {p.name for p in written} == {f"{n}.parquet" for n in r.section_names} | {
        "manifest.json"
    }
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["schema_version"] == "2"
    for name in r.section_names:
        assert manifest["sections"][name]["file"] == f"{name}.parquet"
        assert_frame_equal(pl.read_parquet(tmp_path / "out" / f"{name}.parquet"), r[name])
    direct = pfm.disparities(
        df, y_true="y", y_pred="p", by="g", reference="rest", metrics=list(r.inputs["metrics"])
    )
    back = pl.read_parquet(tmp_path / "out" / "disparities.parquet")
    both = back.join(direct, on=["g", "metric"])
    assert both.height == direct.height
    assert (both["difference"] - both["difference_right"]).abs().max() == 0  # type: ignore[operator]


EVIL = "<script>alert(1)</script>"


def _evil_report() -> Report:
    df = pl.DataFrame(
        {
            "g": [EVIL, EVIL, "$x^2$ & <b>", "$x^2$ & <b>", "ok", "ok"],
            "y": [1, 0, 1, 0, 1, 0],
            "p": [1, 0, 1, 1, 0, 0],
        }
    )
    return audit(df, y_true="y", y_pred="p", by="g", reference="ok", source='"><img src=x>')


class _Refs(HTMLParser):
    """Every tag and attribute that could load something, from a real HTML parse."""

    def __init__(self) -> None:
        super().__init__()
        self.bad: list[str] = []
        self.tags: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag in ("script", "link", "iframe", "object", "embed", "img", "base") or (
            tag == "meta" and any(k == "http-equiv" for k, _ in attrs)
        ):
            self.bad.append(f"<{tag}>")
        for key, value in attrs:
            if (
                key in ("src", "href", "xlink:href", "srcset", "action", "data")
                and value
                and not (value.startswith("#") or value.startswith("data:"))
            ):
                self.bad.append(f"{tag} {key}={value}")
            if key.startswith("on"):
                self.bad.append(f"{tag} {key}")
            if key == "style" and value and re.search(r"url\(|@import", value):
                self.bad.append(f"{tag} style={value}")
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style and re.search(r"url\(\s*['\"]?(?!#|data:)|@import", data):
            self.bad.append("style: external url or @import")


def _external_refs(page: str) -> list[str]:
    parser = _Refs()
    parser.feed(page)
    return parser.bad


def test_html_is_self_contained_and_escapes_data(tmp_path: Path) -> None:
    r = _evil_report()
    page = r.to_html(tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == page
    assert page.startswith("<!DOCTYPE html>")
    assert _external_refs(page) == []
    assert EVIL not in page and "<img" not in page and "<b>" not in page
    parser = _Refs()
    parser.feed(page)
    assert not {"script", "img", "b"} & set(parser.tags)
    assert html_escape(EVIL) in page
    assert page.count("<svg") == 2  # bars of the metrics, forest plot of the criteria
    assert "four-fifths band" in page
    fragment = r._repr_html_()
    assert EVIL not in fragment and _external_refs(fragment) == []


def html_escape(text: str) -> str:
    import html

    return html.escape(text)


def test_html_without_matplotlib_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plot, "available", lambda: False)
    page = _evil_report().to_html()
    assert "<svg" not in page
    assert MISSING_PLOT_NOTE in page.replace("&#x27;", "'")
    no_plots = _evil_report().to_html(plots=False)
    assert "<svg" not in no_plots and "Plots were not requested" in no_plots


def test_markdown_and_terminal() -> None:
    r = _evil_report()
    md = r.to_markdown()
    assert EVIL not in md and "&lt;script&gt;" in md
    for s in r.sections.values():
        assert f"## {s.title}" in md
    text = str(r)
    assert text.startswith("Fairness audit")
    for s in r.sections.values():
        assert s.title in text
    assert "point estimates only" in text.lower()


def test_report_access() -> None:
    r = audit(_frame(0), y_true="y", y_pred="p", by="g")
    assert "metrics" in r and "curves" not in r
    with pytest.raises(KeyError, match="no section 'curves'"):
        r.section("curves")
    assert repr(r).startswith("Report(sections=")
    assert set(DEFAULT_AUDIT_CRITERIA) == set(r["criteria"]["metric"].unique().to_list())


def test_errors_are_fairmetrics_errors() -> None:
    with pytest.raises(FairMetricsError):
        audit(_frame(0), y_true="y", y_pred="p", by="g", reference="zz")


def test_by_columns_named_group_or_like_a_result_column() -> None:
    df = _frame(10).rename({"g": "group", "s": "sex"})
    r = audit(
        df.lazy(), y_true="y", y_pred="p", by=["group", "sex"], reference={"group": "a", "sex": "M"}
    )
    plain = audit(_frame(10), y_true="y", y_pred="p", by=["g", "s"], reference={"g": "a", "s": "M"})
    renamed = (
        r["criteria"]
        .rename({"group": "g", "sex": "s"})
        .with_columns(
            pl.col("attribute").replace({"group": "g", "sex": "s"}),
            pl.col("reference").str.replace("group=", "g=").str.replace("sex=", "s="),
        )
    )
    assert_frame_equal(renamed, plain["criteria"])
    for name in ("attribute", "metric", "value", "share", "reason"):
        with pytest.raises(InvalidOptionError, match=f"group column '{name}' collides"):
            audit(_frame(10).rename({"g": name}), y_true="y", y_pred="p", by=name)


def test_reliability_figure_escapes_hostile_labels() -> None:
    """The one building block left besides figure_svg: labels from data stay inert in SVG."""
    table = pl.DataFrame(
        {
            "label": ["a", "a", EVIL, EVIL],
            "mean_predicted": [0.2, 0.8, 0.3, 0.7],
            "fraction_positive": [0.1, 0.9, 0.2, 0.8],
            "ci_low": [0.0, 0.8, 0.1, 0.7],
            "ci_high": [0.2, 1.0, 0.3, 0.9],
        }
    )
    svg = plot.figure_svg(plot.reliability_figure(table, title="Reliability " + EVIL))
    assert svg.startswith("<svg") and EVIL not in svg and _external_refs(svg) == []


def test_sections_follow_the_attribute_order_and_typed_references() -> None:
    df = pl.DataFrame(
        {
            "k": [1, 1, 2, 2, None],
            "b": [True, False, True, False, True],
            "y": [1, 0, 1, 0, 1],
            "p": [1, 1, 0, 0, 1],
        }
    )
    r = audit(df, y_true="y", y_pred="p", by=["k", "b"], reference={"k": 2, "b": True})
    assert r.inputs["reference"] == {"k": 2, "b": True}
    for name in ("groups", "metrics", "disparities", "criteria", "between_groups"):
        assert r[name]["attribute"].unique(maintain_order=True).to_list() == ["k", "b"], name
    di = r["criteria"].filter(pl.col("metric") == "disparate_impact")
    assert di.schema["k"] == pl.Int64 and di.schema["b"] == pl.Boolean  # typed keys
    assert di["k"].to_list() == [1, 2, None, None, None]
    assert di["b"].to_list() == [None, None, None, False, True]
    assert di["value"].to_list()[:2] == [None, None]  # the reference k = 2 selects nobody
    with pytest.raises(pfm.ReferenceGroupError, match=r'reference group k="2" not found'):
        audit(df, y_true="y", y_pred="p", by=["k", "b"], reference={"k": "2", "b": True})


@pytest.mark.parametrize("by", [["a", "b"], ["b", "a"]])
def test_every_section_is_in_the_attribute_order(by: list[str]) -> None:
    """Sorted or not, the attributes come in the audit's order in every section with an
    ``attribute`` column (undefined values included), and within an attribute the rows are
    as a stable sort by attribute leaves them."""
    df = pl.DataFrame(
        {
            "a": ["x", "x", "y", "y", "z", "z", "x"],
            "b": [1, 2, 1, 2, 1, 2, 3],
            # a = z and b = 3: no negatives, a = y: no positives -> undefined values in both
            "y": [1, 0, 0, 0, 1, 1, 1],
            "p": [1, 0, 0, 1, 1, 0, 1],
            "w": [1.0, 2.0, 1.0, 1.0, 3.0, 1.0, 1.0],
        }
    )
    r = audit(df, y_true="y", y_pred="p", by=by, weight="w", deploy_positive_rate=0.3)
    undefined = r["undefined"]
    assert undefined["attribute"].n_unique() == 2 and undefined["section"].n_unique() == 2
    rank = pfm.results.order_rank("attribute", by)
    seen = 0
    for name in r.sections:
        table = r[name]
        if "attribute" not in table.columns or table.height == 0:
            continue
        seen += 1
        attrs = table["attribute"].unique(maintain_order=True).to_list()
        assert attrs == [a for a in by if a in attrs], name
        assert_frame_equal(table, table.sort(rank, maintain_order=True))
    assert seen >= 6


def test_audit_scans_the_input_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "rows.parquet"
    _frame(12, weighted=True).write_parquet(path)
    scans: list[int] = []
    original = pl.LazyFrame.collect

    def counting(self: pl.LazyFrame, *args: Any, **kwargs: Any) -> Any:
        plan = self.explain(optimized=True)
        if "rows.parquet" in plan:  # a query reading the input (not a small in-memory table)
            scans.append(plan.count("Parquet SCAN"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(pl.LazyFrame, "collect", counting)
    audit(
        pl.scan_parquet(path), y_true="y", y_pred="p", by=["g", "s"], weight="w", reference="rest"
    )
    assert scans == [1]  # one collect reading the file, with one scan in its plan


# ---------------------------------------------------------------------------------------------
# Integrated capabilities: bootstrap intervals and ensemble stability (issue 8)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "reference"), [("percentile", "a"), ("basic", "rest"), ("bca", "overall")]
)
def test_audit_intervals_equal_the_bootstrap_modules(method: str, reference: str) -> None:
    df = _frame(21, n=300)
    # an integer attribute with a null group: typed keys all the way
    k = pl.Series("k", np.random.default_rng(1).choice([1, 2, 10, -1], size=df.height))
    df = df.with_columns(k.replace(-1, None))
    metrics = ["selection_rate", "true_positive_rate", "false_positive_rate", "accuracy"]
    crit = ["equal_opportunity_difference", "equalized_odds_difference", "disparate_impact"]
    ref: Any = {"g": "a", "s": "F", "k": 2} if reference == "a" else reference
    r = audit(
        df.lazy(),
        y_true="y",
        y_pred="p",
        by=["g", "s", "k"],
        reference=ref,
        metrics=metrics,
        criteria=crit,
        intervals=150,
        ci_level=0.9,
        ci_method=method,  # type: ignore[arg-type]
        seed=5,
    )
    assert r.inputs["intervals"] == 150 and r.inputs["ci_method"] == method
    assert r.inputs["seed"] == 5
    assert r.notes == []  # no "point estimates only" note
    kw: dict[str, Any] = {
        "y_true": "y",
        "y_pred": "p",
        "by": ["g", "s", "k"],
        "separately": True,
        "reference": ref,
        "metrics": metrics,
        "criteria": crit,
        "n_resamples": 150,
        "seed": 5,
        "method": method,
        "level": 0.9,
    }
    cols = ["metric", "ci_low", "ci_high", "ci_method", "n_defined", "ci_note"]
    for name, what in (("metrics", "metrics"), ("criteria", "criteria")):
        own = pfm.bootstrap_metrics(df, what=what, **kw)
        assert_frame_equal(
            r[name].select("attribute", "g", "s", "k", *cols),
            own.select("attribute", "g", "s", "k", *cols),
            check_row_order=False,
        )
    own = pfm.bootstrap_metrics(df, what="disparities", **kw)
    mine = r["disparities"].filter(pl.col("metric").is_in(metrics))
    dcols = [*cols, "difference_ci_low", "difference_ci_high", "ratio_ci_low", "ratio_ci_high"]
    assert_frame_equal(
        mine.select("attribute", "g", "s", "k", *dcols),
        own.select("attribute", "g", "s", "k", *dcols),
        check_row_order=False,
    )
    own = pfm.bootstrap_metrics(df, what="between_groups", **kw)
    bcols = ["difference_ci_low", "difference_ci_high", "ratio_ci_low", "ratio_ci_high"]
    assert_frame_equal(
        r["between_groups"].select("attribute", "metric", *bcols, "ci_method"),
        own.select("attribute", "metric", *bcols, "ci_method"),
        check_row_order=False,
    )


def test_ci_excludes_gate_on_constructed_data() -> None:
    rng = np.random.default_rng(0)
    n = 600
    # group b: the classifier finds far fewer of its positives (TPR 0.3 vs 0.9)
    g = np.array(["a"] * n + ["b"] * n)
    y = rng.integers(0, 2, size=2 * n)
    hit = np.where(g == "a", rng.uniform(size=2 * n) < 0.9, rng.uniform(size=2 * n) < 0.3)
    p = np.where(y == 1, hit, rng.uniform(size=2 * n) < 0.2).astype(np.int64)
    unfair = pl.DataFrame({"g": g, "y": y, "p": p})
    fair = unfair.with_columns(p=pl.col("y"))  # a perfect classifier: every difference is 0
    gate = "equal_opportunity_difference ci_excludes 0"
    r = audit(unfair, y_true="y", y_pred="p", by="g", reference="a", intervals=200, seed=1)
    (res,) = r.check(gate)
    assert res.failed and res.violations["g"].to_list() == ["b"]
    r = audit(fair, y_true="y", y_pred="p", by="g", reference="a", intervals=200, seed=1)
    (res,) = r.check(gate)
    # every resample gives a difference of 0: no interval can be trusted (ci_note), so the
    # gate does not fail and counts the value as not checked
    assert not res.failed and res.n_checked == 0 and res.n_undefined == 1
    assert "undefined not checked" in res.message
    # without intervals the gate is refused, naming the missing capability
    with pytest.raises(InvalidOptionError, match="confidence intervals"):
        audit(fair, y_true="y", y_pred="p", by="g", reference="a").check(gate)


def test_interval_option_errors() -> None:
    df = _frame(0)
    for kwargs, message in [
        ({"intervals": 0}, "positive"),
        ({"intervals": 10, "ci_level": 1.0}, "ci_level"),
        ({"intervals": 10, "ci_method": "normal"}, "ci_method"),
        ({"intervals": True}, "positive"),
    ]:
        with pytest.raises(InvalidOptionError, match=message):
            audit(
                _frame(0, weighted=True) if "weight" in kwargs else df,
                y_true="y",
                y_pred="p",
                by="g",
                **kwargs,
            )


def test_intervals_round_trip_json_and_parquet(tmp_path: Path) -> None:
    df = _frame(22)
    r = audit(df, y_true="y", y_pred="p", by=["g", "s"], reference="rest", intervals=50, seed=2)
    doc = json.loads(r.to_json())
    _check_schema(doc)
    assert doc["inputs"]["seed"] == 2 and doc["inputs"]["ci_level"] == 0.95
    for name in r.section_names:
        s = doc["sections"][name]
        assert_frame_equal(pl.DataFrame(s["rows"], schema=r[name].schema, orient="row"), r[name])
    r.write_parquet(tmp_path / "out")
    for name in r.section_names:
        assert_frame_equal(pl.read_parquet(tmp_path / "out" / f"{name}.parquet"), r[name])
    assert "[" in r.to_terminal()  # value [low, high] cells
    html = r.to_html(plots=False)
    assert "bootstrap intervals" in html


def _ensemble_frame(seed: int, n: int = 300, m: int = 5) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.uniform(size=n)
    cols = {f"p{j}": np.clip(base + rng.normal(0, 0.15, size=n), 0, 1) for j in range(m)}
    y = (rng.uniform(size=n) < base).astype(np.int64)
    return pl.DataFrame(
        {"g": rng.choice(["a", "b"], size=n), "s": rng.choice(["F", "M"], size=n), "y": y, **cols}
    ).with_columns(p=(pl.mean_horizontal([f"p{j}" for j in range(m)]) >= 0.5).cast(pl.Int64))


def test_stability_sections_match_ensemble_module_and_numpy() -> None:
    df = _ensemble_frame(3)
    models = [f"p{j}" for j in range(5)]
    r = audit(df.lazy(), y_true="y", y_pred="p", by=["g", "s"], models=models)
    assert r.section_names[-2:] == ["stability", "stability_distribution"]
    assert r.inputs["models"] == models
    st = r["stability"]
    own = pfm.ensemble_group_metrics(df, models=models, by="g", confusion_metrics=[])
    for row in own.iter_rows(named=True):
        mine = st.filter(attribute="g", g=row["g"], metric=row["metric"])
        if mine.height:
            assert mine["value"].item() == pytest.approx(row["value"])
    # NumPy oracle of label stability and its histogram
    probs = df.select(models).to_numpy()
    k = (probs >= 0.5).sum(axis=1)
    stab = np.abs(2 * k - 5) / 5
    grp = df["s"].to_numpy()
    for s in ("F", "M"):
        got = st.filter(attribute="s", s=s, metric="label_stability")["value"].item()
        assert got == pytest.approx(stab[grp == s].mean())
        hist = r["stability_distribution"].filter(attribute="s", s=s).sort("value")
        # one bin per value |2k - 5| / 5 can take: 0.2, 0.6, 1.0 (no bin empty by construction)
        assert hist["value"].to_list() == pytest.approx([0.2, 0.6, 1.0])
        expected = [int((np.abs(stab[grp == s] - v) < 1e-9).sum()) for v in (0.2, 0.6, 1.0)]
        assert hist["count"].to_list() == expected
        assert hist["share"].sum() == pytest.approx(1.0)
    html = r.to_html()
    assert html.count("<svg") >= 2 * 2 + 2  # metric bars and histograms per attribute
    with pytest.raises(InvalidOptionError, match="absent"):
        audit(df, y_true="y", y_pred="p", by="g", models=["p0", "nope"])


# ---------------------------------------------------------------------------------------------
# curves and deployment sections
# ---------------------------------------------------------------------------------------------


def _scored(seed: int, n: int = 600, weighted: bool = False) -> pl.DataFrame:
    """Scores on the 1/16 grid (exact binary fractions): the audit's grid curve with
    curve_bins=16 is then the exact curve, comparable with scikit-learn."""
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c"], size=n, p=[0.5, 0.35, 0.15])
    s = rng.choice(["F", "M"], size=n)
    y = rng.integers(0, 2, size=n)
    y[g == "c"] = 0  # one class only: curve summaries undefined
    score = np.clip(rng.integers(0, 17, size=n) + 4 * y - 2, 0, 16) / 16.0
    df = pl.DataFrame({"g": g, "s": s, "y": y, "score": score})
    if weighted:
        w = rng.uniform(0, 3, size=n)
        w[:3] = 0.0
        df = df.with_columns(w=pl.Series(w))
    return df


@pytest.mark.parametrize("weighted", [False, True])
def test_curve_sections_match_curves_module_and_sklearn(weighted: bool) -> None:
    from sklearn.metrics import average_precision_score, roc_auc_score

    df = _scored(3, weighted=weighted)
    w = "w" if weighted else None
    r = audit(
        df.lazy(),
        y_true="y",
        y_score="score",
        threshold=0.5,
        by=["g", "s"],
        weight=w,
        curve_bins=16,
    )
    assert [n for n in r.section_names if n.startswith("curve")] == ["curve_summaries", "curves"]
    assert r.inputs["curve_bins"] == 16
    summ = r["curve_summaries"]
    for attr in ("g", "s"):
        lib = _long_summaries(
            pfm.curve_summaries(
                df, y_true="y", y_score="score", by=attr, weight=w, mode="grid", bins=16
            ),
            attr,
        )
        got = summ.filter(pl.col("attribute") == attr).select(attr, "metric", "value")
        assert_frame_equal(got, lib, check_exact=not weighted)
        for row in got.pivot("metric", index=attr, values="value").iter_rows(named=True):
            part = df.filter(pl.col(attr) == row[attr])
            y, sc = part["y"].to_numpy(), part["score"].to_numpy()
            sw = part["w"].to_numpy() if weighted else None
            if len(set(y)) < 2:
                assert row["roc_auc"] is None and (y.any() or row["average_precision"] is None)
                continue
            assert math.isclose(
                row["roc_auc"], roc_auc_score(y, sc, sample_weight=sw), rel_tol=1e-9
            )
            assert math.isclose(
                row["average_precision"],
                average_precision_score(y, sc, sample_weight=sw),
                rel_tol=1e-9,
            )
        roc = pfm.roc_curve(
            df, y_true="y", y_score="score", by=attr, weight=w, mode="grid", bins=16
        )
        pts = r["curves"].filter(pl.col("attribute") == attr)
        assert_frame_equal(
            pts.select(attr, "threshold", "fpr", "tpr"), roc, check_exact=not weighted
        )
        pr = pfm.pr_curve(df, y_true="y", y_score="score", by=attr, weight=w, mode="grid", bins=16)
        assert_frame_equal(
            pts.select(attr, "threshold", "precision", "recall"), pr, check_exact=not weighted
        )


def _long_summaries(table: pl.DataFrame, *keys: str) -> pl.DataFrame:
    """The curves module's summaries as (keys, metric, value), whichever layout it returns."""
    if "metric" not in table.columns:
        names = [c for c in ("roc_auc", "average_precision", "aupr") if c in table.columns]
        table = table.unpivot(on=names, index=list(keys), variable_name="metric")
        table = table.with_columns(pl.col("metric").cast(pl.String))
    order = {"roc_auc": 0, "average_precision": 1, "aupr": 2}
    return table.select(*keys, "metric", "value").sort(
        *keys, pl.col("metric").replace_strict(order), nulls_last=True
    )


def test_curves_default_off_without_scores_and_options() -> None:
    df = _scored(4, n=200)
    r = audit(
        df.with_columns(p=(pl.col("score") >= 0.5).cast(pl.Int64)), y_true="y", y_pred="p", by="g"
    )
    assert "curves" not in r and "curve_summaries" not in r and "curve_bins" not in r.inputs
    r = audit(df, y_true="y", y_score="score", threshold=0.5, by="g", curves=False)
    assert "curves" not in r and "curve_summaries" not in r
    r = audit(df, y_true="y", y_score="score", threshold=0.5, by="g")
    assert r.inputs["curve_bins"] == 100
    # 101 grid thresholds + the +inf start, per group
    assert r["curves"].group_by("g").len()["len"].to_list() == [102] * 3
    with pytest.raises(InvalidOptionError, match="y_score"):
        audit(df, y_true="y", y_pred="y", by="g", curves=True)
    with pytest.raises(InvalidOptionError, match="curve_bins"):
        audit(df, y_true="y", y_score="score", threshold=0.5, by="g", curve_bins=0)
    with pytest.raises(InvalidOptionError, match="deploy_positive_rate"):
        audit(df, y_true="y", y_score="score", threshold=0.5, by="g", deploy_positive_rate=1.0)


def test_curves_intersectional_and_one_extra_scan() -> None:
    df = _scored(5, n=300)
    r = audit(
        df,
        y_true="y",
        y_score="score",
        threshold=0.5,
        by=["g", "s"],
        intersectional=True,
        curve_bins=8,
    )
    lib = pfm.curve_summaries(df, y_true="y", y_score="score", by=["g", "s"], mode="grid", bins=8)
    got = r["curve_summaries"]
    assert "attribute" not in got.columns
    assert_frame_equal(got.select("g", "s", "metric", "value"), _long_summaries(lib, "g", "s"))


@pytest.mark.parametrize("weighted", [False, True])
def test_deployment_section_matches_module_and_oracle(weighted: bool) -> None:
    df = _frame(9, weighted=weighted)
    w = "w" if weighted else None
    r = audit(df, y_true="y", y_pred="p", by=["g", "s"], weight=w, deploy_positive_rate=0.02)
    assert r.section_names[-1] == "deployment" and r.inputs["deploy_positive_rate"] == 0.02
    dep = r["deployment"]
    assert set(dep["metric"]) == {
        "positive_predictive_value",
        "negative_predictive_value",
        "f1_score",
        "accuracy",
    }
    assert "class-conditional" in " ".join(r.section("deployment").notes)
    for attr in ("g", "s"):
        counts = pfm.confusion_counts(df, y_true="y", y_pred="p", by=attr, weight=w)
        lib = pfm.deployment_metrics(
            counts,
            deploy_positive_rate=0.02,
            by=attr,
            metrics=[
                "positive_predictive_value",
                "negative_predictive_value",
                "f1_score",
                "accuracy",
            ],
        )
        got = dep.filter(pl.col("attribute") == attr)
        assert_frame_equal(
            got.select(lib.columns), lib, check_exact=not weighted, check_row_order=False
        )
        assert got["n_null"].to_list() == [0] * got.height
        # brute-force oracle: one factor k from the overall test ratio
        oc = _oracle_counts(df, attr, w)
        pos = sum(c["tp"] + c["fn"] for c in oc.values())
        neg = sum(c["fp"] + c["tn"] for c in oc.values())
        k = (0.98 / 0.02) / (neg / pos)
        for row in got.iter_rows(named=True):
            c = oc[row[attr]]
            tp, fp, tn, fn = c["tp"], c["fp"] * k, c["tn"] * k, c["fn"]
            want = {
                "positive_predictive_value": _div(tp, tp + fp),
                "negative_predictive_value": _div(tn, tn + fn),
                "f1_score": _div(2 * tp, 2 * tp + fp + fn),
                "accuracy": _div(tp + tn, tp + fp + tn + fn),
            }[row["metric"]]
            assert (row["value"] is None and want is None) or math.isclose(
                row["value"], cast_float(want), rel_tol=1e-9
            ), row
            assert (
                _close(
                    row["test_value"],
                    _oracle_metric(row["metric"], c)
                    if row["metric"] != "f1_score"
                    else _div(2 * c["tp"], 2 * c["tp"] + c["fp"] + c["fn"]),
                )
                or weighted
            )


def cast_float(v: float | None) -> float:
    assert v is not None
    return v


def test_curves_and_deployment_render_json_html(tmp_path: Path) -> None:
    df = _scored(6, n=300)
    r = audit(
        df,
        y_true="y",
        y_score="score",
        threshold=0.5,
        by=["g", "s"],
        curve_bins=10,
        deploy_positive_rate=0.1,
    )
    doc = json.loads(r.to_json())
    _check_schema(doc)
    for name in ("curve_summaries", "curves", "deployment"):
        rows = doc["sections"][name]["rows"]
        for row in rows:  # non-finite floats are written as the strings "Infinity" …
            for k, v in row.items():
                if v == "Infinity":
                    row[k] = math.inf
        back = pl.DataFrame(rows, schema=r[name].schema, orient="row")
        assert_frame_equal(back, r[name])
    page = r.to_html(tmp_path / "r.html")
    assert _external_refs(page) == []
    if plot.available():
        # one figure per attribute: ROC and precision-recall side by side, AUC / AP per group
        assert "ROC and precision-recall by g" in page
        assert "ROC and precision-recall by s" in page
        assert "AUC" in page and "AP " in page
    text = str(r)
    assert "Curve summaries" in text and "Deployment class ratio" in text
    assert "lowest_threshold" in text  # the curves in brief, not every point
    assert "Curve summaries" in r.to_markdown()
    written = r.write_parquet(tmp_path / "pq")
    assert {p.name for p in written} >= {"curves.parquet", "deployment.parquet"}
    assert_frame_equal(pl.read_parquet(tmp_path / "pq" / "curves.parquet"), r["curves"])


def test_curve_and_deployment_sections_streaming_engine() -> None:
    df = _scored(7, n=300)
    kw: dict[str, Any] = {
        "y_true": "y",
        "y_score": "score",
        "threshold": 0.5,
        "by": ["g", "s"],
        "curve_bins": 12,
        "deploy_positive_rate": 0.3,
    }
    a = audit(df.lazy(), **kw)
    b = audit(df.lazy(), engine="streaming", **kw)
    for name in ("curve_summaries", "curves", "deployment"):
        assert_frame_equal(a[name], b[name])


def test_options_object_and_keywords_give_the_same_report() -> None:
    import dataclasses

    df = _frame(23, weighted=True)
    opts = AuditOptions(y_true="y", y_pred="p", by=["g", "s"], weight="w", reference="rest")
    a = audit(df, opts)
    b = audit(df, y_true="y", y_pred="p", by=["g", "s"], weight="w", reference="rest")
    assert a.section_names == b.section_names and a.inputs == b.inputs
    for name in a.section_names:
        assert_frame_equal(a[name], b[name])
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.weight = None  # type: ignore[misc]
    with pytest.raises(InvalidOptionError, match="not both"):
        audit(df, opts, metrics=["tpr"])
    with pytest.raises(InvalidOptionError, match="needs y_true"):
        audit(df)
    unweighted = audit(df, dataclasses.replace(opts, weight=None))
    assert "n_w" not in unweighted["metrics"].columns


def test_default_seed_is_fixed_and_recorded() -> None:
    df = _frame(24)
    a = audit(df, y_true="y", y_pred="p", by="g", intervals=30)
    b = audit(df, y_true="y", y_pred="p", by="g", intervals=30)
    assert a.inputs["seed"] == 0 and json.loads(a.to_json())["inputs"]["seed"] == 0
    assert_frame_equal(a["criteria"], b["criteria"])
    c = audit(df, y_true="y", y_pred="p", by="g", intervals=30, seed=1)
    assert not a["criteria"]["ci_low"].equals(c["criteria"]["ci_low"])
    assert "random seed 0" in a.to_terminal()
    for col in ("ci_method", "ci_level", "n_resamples", "n_defined", "ci_note"):
        assert col in a["metrics"].columns


def test_weighted_audit_intervals_equal_the_bootstrap_modules() -> None:
    df = _frame(25, n=300, weighted=True)
    kw: dict[str, Any] = {"y_true": "y", "y_pred": "p", "weight": "w", "reference": "rest"}
    r = audit(df, by=["g", "s"], metrics=["selection_rate"], intervals=60, seed=3, **kw)
    assert r.inputs["weight"] == "w" and r.inputs["intervals"] == 60
    own = pfm.bootstrap_metrics(
        df,
        by=["g", "s"],
        separately=True,
        what="metrics",
        metrics=["selection_rate"],
        n_resamples=60,
        seed=3,
        **kw,
    )
    cols = ["attribute", "g", "s", "metric", "value", "ci_low", "ci_high", "n_defined"]
    assert_frame_equal(r["metrics"].select(cols), own.select(cols), check_row_order=False)
    assert any("squares of the weights" in n for n in r.section("metrics").notes)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_curve_summaries_get_intervals_from_the_curve_cells(method: str) -> None:
    """With intervals, the curve summaries carry them: the grid curve table's cells resampled
    like the count table's, the summaries of each replicate by the same function; the same
    numbers as with_intervals on the curves module's tables, and reproducible."""
    from polars_fairmetrics.bootstrap import resample_counts, with_intervals

    df = _scored(8, n=600)
    opts: dict[str, Any] = {"y_true": "y", "y_score": "score", "threshold": 0.5, "by": "g"}
    r = audit(df.lazy(), curve_bins=20, intervals=150, seed=3, ci_method=method, **opts)
    summ = r["curve_summaries"]
    assert {"ci_low", "ci_high", "n_defined", "ci_note"} <= set(summ.columns)
    given = summ.filter(pl.col("ci_low").is_not_null())
    assert given.height > 0
    assert (given["ci_low"] <= given["value"] + 1e-12).all()
    assert (given["value"] <= given["ci_high"] + 1e-12).all()
    table = pfm.curve_counts(df, y_true="y", y_score="score", by="g", mode="grid", bins=20)
    reps = resample_counts(table, n_resamples=150, seed=3, jackknife=method == "bca")
    want = with_intervals(
        pfm.curve_summaries(table),
        pfm.curve_summaries(reps),
        method=method,  # type: ignore[arg-type]
        n_resamples=150,
        counts=table,
    )
    cols = ["g", "metric", "value", "ci_low", "ci_high"]
    assert_frame_equal(summ.select(cols), want.select(cols))
    again = audit(df.lazy(), curve_bins=20, intervals=150, seed=3, ci_method=method, **opts)
    assert_frame_equal(again["curve_summaries"], summ)


def test_weighted_curve_summaries_get_intervals_from_squared_weights() -> None:
    """A weighted audit's curve table comes from the count scan with per-cell sums of squared
    weights (the same grid): the same summaries as the curves module's, with intervals — and
    the same effective-size rule as every weighted interval (``counts=``: withheld below
    ``WEIGHTED_MIN_ESS``; enough rows here for groups a and b to keep theirs)."""
    from polars_fairmetrics._validate import threshold_grid
    from polars_fairmetrics.bootstrap import resample_counts, with_intervals

    df = _scored(9, n=2000, weighted=True)
    opts: dict[str, Any] = {"y_true": "y", "y_score": "score", "by": "g", "weight": "w"}
    r = audit(df.lazy(), threshold=0.5, curve_bins=10, intervals=80, **opts)
    summ = r["curve_summaries"]
    lib = pfm.curve_summaries(df, mode="grid", bins=10, **opts)
    cols = ["g", "metric", "value"]
    assert_frame_equal(summ.select(cols), lib.select(cols), check_exact=False, rel_tol=1e-12)
    table = pfm.confusion_counts(
        df, threshold=threshold_grid(10, (0.0, 1.0)), weight_squares=True, **opts
    )
    reps = resample_counts(table, n_resamples=80, seed=0)
    want = with_intervals(
        pfm.curve_summaries(table), pfm.curve_summaries(reps), n_resamples=80, counts=table
    )
    # the audit's rule for groups with few of a class (positives for the PR summaries)
    want = withhold_curve_intervals(want, table, ["g"], "percentile")
    ci = ["g", "metric", "ci_low", "ci_high"]
    assert_frame_equal(summ.select(ci), want.select(ci), check_exact=False, rel_tol=1e-12)
    assert summ["ci_low"].null_count() < summ.height


def test_deployment_section_gets_intervals_of_the_same_numbers() -> None:
    """The deployment-corrected metrics carry intervals: the deployment module's functions of
    each replicate count table (the factor re-estimated in each), matched on keys and metric."""
    from polars_fairmetrics.bootstrap import resample_counts, with_intervals

    df = pfm.scan_compas().with_columns(high=pl.col("decile_score") >= 5)
    opts: dict[str, Any] = {"y_true": "two_year_recid", "y_pred": "high", "by": "race"}
    r = audit(df, deploy_positive_rate=0.1, intervals=120, seed=2, **opts)
    dep = r["deployment"]
    assert {"ci_low", "ci_high", "test_value", "deploy_factor"} <= set(dep.columns)
    given = dep.filter(pl.col("ci_low").is_not_null())
    assert given.height >= dep.height // 2  # tiny groups withhold theirs (the few-rows rule)
    assert ((given["ci_low"] <= given["value"]) & (given["value"] <= given["ci_high"])).all()
    counts = pfm.confusion_counts(df, **opts).collect()
    reps = resample_counts(counts, n_resamples=120, seed=2)
    names = dep["metric"].unique(maintain_order=True).to_list()
    want = with_intervals(
        pfm.deployment_metrics(counts, deploy_positive_rate=0.1, by="race", metrics=names),
        pfm.deployment_metrics(reps, deploy_positive_rate=0.1, by="race", metrics=names),
        n_resamples=120,
    )
    want = withhold_deployment_intervals(want, "percentile")  # the audit's few-rows rule
    cols = ["race", "metric", "value", "ci_low", "ci_high"]
    got = dep.select(cols).sort("race", "metric")
    assert_frame_equal(got, want.select(cols).sort("race", "metric"))


@pytest.mark.parametrize("weighted", [False, True])
def test_stability_section_gets_intervals_from_resampled_rows(weighted: bool) -> None:
    """The per-group ensemble means get intervals from each group's rows resampled: replicate
    0 reproduces the section's values, the intervals contain them and are reproducible, and a
    plain-NumPy resampling of one group's rows gives the same replicate means."""
    from polars_fairmetrics.bootstrap import replicate_group_means
    from polars_fairmetrics.ensemble import ensemble_sample_metrics

    rng = np.random.default_rng(4)
    n = 4000  # groups large enough for the skewness rule to keep every interval
    df = pl.DataFrame(
        {
            "g": rng.choice(["a", "b"], n),
            "y": rng.integers(0, 2, n),
            **{f"m{j}": rng.random(n) for j in range(5)},
            "w": rng.gamma(2.0, 1.0, n),
        }
    )
    models = [f"m{j}" for j in range(5)]
    w = "w" if weighted else None
    opts: dict[str, Any] = {"y_true": "y", "y_score": "m0", "threshold": 0.5, "by": "g"}
    r = audit(df.lazy(), models=models, weight=w, intervals=100, seed=1, **opts)
    st = r["stability"]
    assert {"ci_low", "ci_high", "n_defined"} <= set(st.columns)
    given = st.filter(pl.col("ci_low").is_not_null())
    assert given.height == st.height
    assert (
        (given["ci_low"] <= given["value"] + 1e-12) & (given["value"] <= given["ci_high"] + 1e-12)
    ).all()
    again = audit(df.lazy(), models=models, weight=w, intervals=100, seed=1, **opts)
    assert_frame_equal(again["stability"], st)
    rows = ensemble_sample_metrics(df, models=models, keep=["g", "w"], metrics="jitter")
    reps = replicate_group_means(rows, by=["g"], values=["jitter"], weight=w, n_resamples=30)
    observed = reps.filter(pl.col("replicate") == 0).sort("g")["value"].to_list()
    point = st.filter(pl.col("metric") == "jitter").sort("g")["value"].to_list()
    assert observed == pytest.approx(point, rel=1e-12)
    # the draws: per group in key order, rng.multinomial(n_g, uniform) per replicate
    gen = np.random.default_rng(0)
    part = rows.filter(pl.col("g") == "a")
    x = part["jitter"].to_numpy()
    wt = part["w"].to_numpy() if weighted else np.ones(part.height)
    counts = gen.multinomial(part.height, np.full(part.height, 1 / part.height), size=30)
    want = (counts * wt * x).sum(axis=1) / (counts * wt).sum(axis=1)
    got = reps.filter(pl.col("g") == "a", pl.col("replicate") > 0).sort("replicate")["value"]
    assert got.to_numpy() == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(
    ("method", "weighted", "by", "reference", "rate"),
    [
        ("percentile", True, ["g", "s"], {"g": "a", "s": "F"}, None),
        ("basic", False, ["g"], "rest", 0.3),
        ("percentile", True, ["g"], "overall", 0.3),
        ("bca", False, ["g", "s"], "overall", None),
    ],
)
def test_interval_replicates_wide_equal_the_full_plan(
    method: str, weighted: bool, by: list[str], reference: Any, rate: float | None
) -> None:
    """The audit reads the replicates' comparison table in wide form (``replicate_tables``);
    its intervals are exactly those of the whole plan's long replicate tables."""
    from polars_fairmetrics.bootstrap import resample_counts, with_intervals
    from polars_fairmetrics.report.options import AuditOptions
    from polars_fairmetrics.report.tables import (
        TableSpec,
        plan_tables,
        replicate_tables,
        roll_up,
        scan_counts,
    )

    df = _frame(3, n=3000, weighted=weighted)
    options = AuditOptions(
        y_true="y",
        y_pred="p",
        by=by,
        weight="w" if weighted else None,
        reference=reference,
        intervals=60,
        ci_method=method,
        deploy_positive_rate=rate,
    )
    spec = TableSpec.of(options)
    counts = roll_up(scan_counts(df.lazy(), options), spec)
    tables = plan_tables(counts, spec)
    reps = resample_counts(counts, n_resamples=60, seed=5, jackknife=method == "bca")
    full, wide = plan_tables(reps, spec), replicate_tables(reps, spec)
    names = ["metrics", "disparities", "criteria", *(["deployment"] if rate else [])]
    for name in names:
        point = tables[name]
        if name == "deployment":
            point = point.drop("test_value", "deploy_factor")
        kwargs: dict[str, Any] = {"method": method, "n_resamples": 60, "counts": counts}
        a = with_intervals(
            point, full[name].drop(["test_value", "deploy_factor"], strict=False), **kwargs
        )
        b = with_intervals(
            point, wide[name].drop(["test_value", "deploy_factor"], strict=False), **kwargs
        )
        if name == "deployment":  # its pooled sums are parallel: equal up to summation order
            assert_frame_equal(a, b, check_exact=False, rel_tol=1e-12, abs_tol=1e-15)
        else:
            assert_frame_equal(a, b, check_exact=True)
        assert a["ci_low"].is_not_null().sum() > 0, name


def test_basic_deployment_intervals_follow_the_data_not_the_correction() -> None:
    """The deployment table carries weighted counts of its own (the class-prior factor), but
    only weighted data withholds basic intervals: an unweighted audit gets them, a weighted
    one says why not."""
    df = _frame(4, n=3000, weighted=True)
    kwargs: dict[str, Any] = {"intervals": 100, "ci_method": "basic", "deploy_positive_rate": 0.3}
    plain = audit(df, y_true="y", y_pred="p", by="g", **kwargs)["deployment"]
    big = plain.filter(pl.col("support") >= pfm.bootstrap.BASIC_MIN_SUPPORT)
    # every row with support is given, but for group c's constant rates (no positives)
    given = big.filter(pl.col("ci_low").is_not_null())
    assert given.height >= 8
    assert big.filter(pl.col("ci_low").is_null())["ci_note"].str.starts_with("every resample").all()
    assert not plain["ci_note"].fill_null("").str.contains("weighted data").any()
    weighted = audit(df, y_true="y", y_pred="p", by="g", weight="w", **kwargs)["deployment"]
    assert weighted["ci_low"].is_null().all()
    notes = weighted["ci_note"]
    said = notes.str.contains("basic intervals under-cover on weighted")
    assert said.sum() >= 8  # the others: undefined or constant (group c has no positives)
    assert (said | notes.str.contains("undefined|every resample")).all()
