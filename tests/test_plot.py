"""The public figures (polars_fairmetrics.figures): what they draw, and the readability rules.

Oracles: the interval whiskers are the table's interval columns, the curve legends equal
scikit-learn's ``roc_auc_score`` / ``average_precision_score``, the label-stability bins are
the values |2k - m| / m enumerated by brute force and their heights NumPy counts. Rules: every
figure is FIGURE_WIDTH wide, text is at least 9 pt, legends lie outside every axes and clear of
tick and axis labels.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import polars as pl
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from sklearn.metrics import average_precision_score, roc_auc_score  # noqa: E402

import polars_fairmetrics as pfm  # noqa: E402
from polars_fairmetrics import figures  # noqa: E402
from polars_fairmetrics.exceptions import ColumnNotFoundError, InvalidOptionError  # noqa: E402

# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _values_table(intervals: bool = True) -> pl.DataFrame:
    t = pl.DataFrame(
        {
            "race": ["x", "x", "y", "y", "z", "z"],
            "metric": ["selection_rate", "true_positive_rate"] * 3,
            "value": [0.5, 0.8, 0.25, None, 0.75, 0.6],
            "ci_low": [0.4, 0.7, 0.1, None, 0.7, 0.5],
            "ci_high": [0.6, 0.9, 0.4, None, 0.8, None],
            "support": [4, 2, 4, 0, 4, 3],
            "n": [4, 4, 4, 4, 4, 4],
        }
    )
    return t if intervals else t.drop("ci_low", "ci_high")


def _whiskers(ax: Any) -> list[tuple[float, float, float]]:
    """(y, low, high) of every interval whisker of an axes, sorted by y."""
    out = []
    for c in ax.collections:
        if isinstance(c, LineCollection) and c.get_gid() == "pfm-interval":
            for seg in c.get_segments():
                (x0, y0), (x1, _) = seg
                out.append((float(y0), float(min(x0, x1)), float(max(x0, x1))))
    return sorted(out)


def _bands(ax: Any) -> list[tuple[float, float]]:
    """(low, high) of the shaded reference bands of an axes."""
    spans = [p for p in ax.patches if p.get_gid() == "pfm-band"]
    return [(p.get_x(), p.get_x() + p.get_width()) for p in spans]


def _overlap(a: Any, b: Any) -> bool:
    return bool(a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1)


def _check_readable(fig: Figure) -> None:
    """The figure rules: fixed width, text >= 9 pt, legends outside and clear of labels."""
    assert isinstance(fig, Figure)
    assert fig.get_size_inches()[0] == pytest.approx(figures.FIGURE_WIDTH)
    FigureCanvasAgg(fig)  # the Agg canvas (a Figure made without pyplot has a bare one)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    for t in fig.findobj(Text):
        if t.get_visible() and t.get_text().strip():
            assert t.get_fontsize() >= 9, (t.get_text(), t.get_fontsize())
    legends = list(fig.legends)
    for sub in fig.subfigs:
        legends += list(sub.legends)
    for ax in fig.axes:
        legends += [ax.get_legend()] if ax.get_legend() is not None else []
    for legend in legends:
        box = legend.get_window_extent(renderer)
        page = fig.bbox  # inside its own figure: never over a neighbouring one
        assert page.x0 - 1 <= box.x0 and box.x1 <= page.x1 + 1, "legend outside the figure"
        assert page.y0 - 1 <= box.y0 and box.y1 <= page.y1 + 1, "legend outside the figure"
        for ax in fig.axes:
            assert not _overlap(box, ax.get_window_extent(renderer)), "legend over the data"
            # the drawn tick labels (those inside the view) and the axis labels
            for axis in (ax.xaxis, ax.yaxis):
                lo, hi = sorted(axis.get_view_interval())
                ticks = [t for t in axis.get_major_ticks() if lo <= t.get_loc() <= hi]
                texts = [t.label1 for t in ticks if t.label1.get_visible()] + [axis.label]
                for text in texts:
                    if text.get_text():
                        extent = text.get_window_extent(renderer)
                        assert not _overlap(box, extent), text.get_text()


# ---------------------------------------------------------------------------------------------
# plot_group_metrics
# ---------------------------------------------------------------------------------------------


def test_group_metrics_one_panel_per_metric_with_the_interval_whiskers() -> None:
    t = _values_table()
    fig = pfm.plot_group_metrics(t)
    _check_readable(fig)
    assert [ax.get_title() for ax in fig.axes] == ["selection rate", "true positive rate"]
    groups = ['race="x"', 'race="y"', 'race="z"']
    for ax, m in zip(fig.axes, ["selection_rate", "true_positive_rate"], strict=True):
        rows = t.filter(metric=m)
        # one bar per defined value; the undefined one reads "undefined"
        bars = [p for p in ax.patches if p.get_gid() == "pfm-values"]
        assert sorted(p.get_width() for p in bars) == sorted(rows["value"].drop_nulls())
        expected = [
            (float(i), r["ci_low"], r["ci_high"])
            for i, r in enumerate(rows.iter_rows(named=True))
            if r["value"] is not None and r["ci_low"] is not None and r["ci_high"] is not None
        ]
        np.testing.assert_allclose(_whiskers(ax), expected)
        assert [t.get_text() for t in ax.get_yticklabels()] in (groups, [""] * 3)
    assert any(t.get_text().strip() == "undefined" for t in fig.axes[1].texts)


def test_group_metrics_without_intervals_lazy_and_a_chosen_metric_list() -> None:
    t = _values_table(intervals=False)
    fig = pfm.plot_group_metrics(t.lazy(), metrics=["true_positive_rate"], kind="point")
    assert len(fig.axes) == 1 and _whiskers(fig.axes[0]) == []
    (line,) = [ln for ln in fig.axes[0].get_lines() if ln.get_gid() == "pfm-values"]
    assert sorted(line.get_xdata()) == [0.6, 0.8]
    # interval columns present but not wanted
    assert _whiskers(pfm.plot_group_metrics(_values_table(), intervals=False).axes[0]) == []


def test_group_metrics_of_real_results_and_several_models() -> None:
    df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [1, 0, 1, 1]})
    gm = pfm.group_metrics(df, y_true="y", y_pred="p", by="g", metrics=["tpr", "fpr", "ppv"])
    fig = pfm.plot_group_metrics(gm, ncols=2)
    _check_readable(fig)
    assert len(fig.axes) == 3
    two = pl.concat([gm.with_columns(model=pl.lit(m)) for m in ("m1", "m2")])
    fig = pfm.plot_group_metrics(two)
    _check_readable(fig)
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["model=m1", "model=m2"]


def test_group_metrics_names_the_missing_column() -> None:
    with pytest.raises(ColumnNotFoundError, match="'value'"):
        pfm.plot_group_metrics(_values_table().drop("value"))
    with pytest.raises(ColumnNotFoundError, match="'metric'"):
        pfm.plot_group_metrics(_values_table().drop("metric").lazy())
    with pytest.raises(ColumnNotFoundError, match="'sex'"):
        pfm.plot_group_metrics(_values_table(), by="sex")
    with pytest.raises(InvalidOptionError, match="'accuracy' is not in the table"):
        pfm.plot_group_metrics(_values_table(), metrics=["accuracy"])
    with pytest.raises(InvalidOptionError, match="no rows"):
        pfm.plot_group_metrics(_values_table().clear())


# ---------------------------------------------------------------------------------------------
# plot_disparities
# ---------------------------------------------------------------------------------------------


def _comparisons() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "g": ["a", "b", "c"],
            "metric": ["selection_rate"] * 3,
            "value": [0.5, 0.4, 0.2],
            "reference": ['g="a"'] * 3,
            "is_reference": [True, False, False],
            "reference_value": [0.5] * 3,
            "difference": [0.0, -0.1, -0.3],
            "difference_ci_low": [0.0, -0.2, -0.45],
            "difference_ci_high": [0.0, 0.05, -0.1],
            "ratio": [1.0, 0.8, 0.4],
            "ratio_ci_low": [1.0, 0.6, 0.2],
            "ratio_ci_high": [1.0, 1.1, 0.7],
        }
    )


@pytest.mark.parametrize(
    ("column", "parity", "band"), [("difference", 0.0, (-0.1, 0.1)), ("ratio", 1.0, (0.8, 1.25))]
)
def test_disparities_forest_parity_band_and_whiskers(
    column: str, parity: float, band: tuple[float, float]
) -> None:
    t = _comparisons()
    fig = pfm.plot_disparities(t, column=column)  # type: ignore[arg-type]
    _check_readable(fig)
    (ax,) = fig.axes
    (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == "pfm-parity"]
    assert list(line.get_xdata()) == [parity, parity]
    assert _bands(ax) == [pytest.approx(band)]
    # the reference row (at parity by construction) is left out
    assert [t.get_text() for t in ax.get_yticklabels()] == ['g="b"', 'g="c"']
    rows = t.filter(~pl.col("is_reference"))
    expected = [
        (float(i), r[f"{column}_ci_low"], r[f"{column}_ci_high"])
        for i, r in enumerate(rows.iter_rows(named=True))
    ]
    np.testing.assert_allclose(_whiskers(ax), expected)
    assert 'reference: g="a"' in " ".join(t.get_text() for t in fig.legends[0].get_texts())


def test_disparities_of_criteria_use_each_criterion_parity() -> None:
    df = pl.DataFrame(
        {"g": ["a", "a", "b", "b", "c", "c"], "y": [1, 0] * 3, "p": [1, 1, 1, 0, 0, 0]}
    )
    crit = pfm.fairness_criteria(df, y_true="y", y_pred="p", by="g")
    fig = pfm.plot_disparities(crit.lazy(), band=None, include_reference=True)
    _check_readable(fig)
    names = crit["metric"].unique(maintain_order=True).to_list()
    assert len(fig.axes) == len(names)
    for ax, m in zip(fig.axes, names, strict=True):
        (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == "pfm-parity"]
        assert line.get_xdata()[0] == pfm.CRITERIA[m].parity
        assert _bands(ax) == []
    custom = pfm.plot_disparities(_comparisons(), band=(-0.05, 0.05))
    assert _bands(custom.axes[0]) == [pytest.approx((-0.05, 0.05))]


def test_disparities_names_the_missing_column() -> None:
    with pytest.raises(ColumnNotFoundError, match="'ratio'"):
        pfm.plot_disparities(_comparisons().drop("ratio"), column="ratio")
    with pytest.raises(ColumnNotFoundError, match="'metric'"):
        pfm.plot_disparities(_comparisons().drop("metric"))
    with pytest.raises(InvalidOptionError, match="column must be"):
        pfm.plot_disparities(_comparisons(), column="nope")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# plot_curves
# ---------------------------------------------------------------------------------------------


def _scores(seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n = 120
    y = rng.integers(0, 2, size=n)
    s = np.round(np.clip(0.3 * y + rng.uniform(size=n) * 0.7, 0, 1), 2)  # ties included
    return pl.DataFrame({"g": rng.choice(["a", "b"], size=n), "y": y, "s": s})


@pytest.mark.parametrize("seed", [0, 1])
def test_curves_side_by_side_with_sklearn_auc_and_ap_in_the_legend(seed: int) -> None:
    df = _scores(seed)
    counts = pfm.curve_counts(df.lazy(), y_true="y", y_score="s", by="g")
    fig = pfm.plot_curves(counts)
    _check_readable(fig)
    assert [ax.get_title() for ax in fig.axes] == ["ROC", "precision-recall"]
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    for g, text in zip(["a", "b"], texts, strict=True):
        part = df.filter(g=g)
        auc = roc_auc_score(part["y"], part["s"])
        ap = average_precision_score(part["y"], part["s"])
        assert text == f'g="{g}" (AUC {auc:.3f}, AP {ap:.3f})'
    # the same from roc_curve / pr_curve tables, each alone
    roc = pfm.plot_curves(pfm.roc_curve(df, y_true="y", y_score="s", by="g"))
    assert [ax.get_title() for ax in roc.axes] == ["ROC"]
    assert roc.legends[0].get_texts()[0].get_text() == texts[0].split(", AP")[0] + ")"
    pr = pfm.plot_curves(pfm.pr_curve(df, y_true="y", y_score="s", by="g"))
    assert [ax.get_title() for ax in pr.axes] == ["precision-recall"]
    assert pr.legends[0].get_texts()[1].get_text().endswith(texts[1].split(", ")[-1])


def test_curves_names_the_missing_column() -> None:
    roc = pfm.roc_curve(_scores(2), y_true="y", y_score="s", by="g")
    with pytest.raises(ColumnNotFoundError, match="'precision'"):
        pfm.plot_curves(roc, kind="pr")
    with pytest.raises(ColumnNotFoundError, match="'fpr'"):
        pfm.plot_curves(roc.drop("fpr"))


# ---------------------------------------------------------------------------------------------
# plot_ensemble
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 8, 15])
def test_label_stability_values_by_brute_force(m: int) -> None:
    votes = {abs(sum(v) - (m - sum(v))) / m for v in itertools.product([0, 1], repeat=m)}
    assert figures.label_stability_values(m) == sorted(votes)
    assert figures.label_stability_values([m, 2]) == sorted(votes | {0.0, 1.0})


def _ensemble(seed: int, n: int = 200, m: int = 5) -> tuple[pl.DataFrame, list[str]]:
    rng = np.random.default_rng(seed)
    base = rng.uniform(size=n)
    cols = {f"p{j}": np.clip(base + rng.normal(0, 0.2, size=n), 0, 1) for j in range(m)}
    return pl.DataFrame({"g": rng.choice(["a", "b"], size=n), **cols}), list(cols)


def test_ensemble_metrics_each_on_its_own_axis_and_histogram_bins_at_the_values() -> None:
    df, models = _ensemble(4)
    table = pfm.ensemble_group_metrics(df, models=models, by="g", confusion_metrics=[])
    rows = pfm.ensemble_sample_metrics(df.lazy(), models=models, keep=["g"])
    fig = pfm.plot_ensemble(table, samples=rows)
    _check_readable(fig)
    names = list(pfm.ENSEMBLE_METRICS)
    assert len(fig.axes) == len(names) + 1
    by_title = {ax.get_title().replace("\n", " "): ax for ax in fig.axes}
    stab = by_title["label stability"]
    mi = by_title["epistemic mutual information"]
    assert stab is not mi
    for ax, m in ((stab, "label_stability"), (mi, "epistemic_mutual_information")):
        lo, hi = ax.get_xlim()
        values = table.filter(metric=m)["value"]
        assert lo <= values.min() and values.max() <= hi  # type: ignore[operator]
        assert hi - lo < 0.5  # its own scale, not [0, 1] shared with the other
    hist = fig.axes[-1]
    possible = [0.2, 0.6, 1.0]  # |2k - 5| / 5
    assert list(hist.get_xticks()) == pytest.approx(possible)
    bars = [p for p in hist.patches if p.get_gid() == "pfm-stability-bins"]
    assert len(bars) == 2 * len(possible)  # one bar per group and value, none always empty
    probs = df.select(models).to_numpy()
    stability = np.abs(2 * (probs >= 0.5).sum(axis=1) - 5) / 5
    grp = df["g"].to_numpy()
    for j, g in enumerate(["a", "b"]):
        mine = bars[j * 3 : (j + 1) * 3]
        centres = sorted(p.get_x() + p.get_width() / 2 for p in mine)
        offset = centres[0] - possible[0]
        assert [c - offset for c in centres] == pytest.approx(possible)
        shares = [float(np.mean(np.isclose(stability[grp == g], v))) for v in possible]
        assert [p.get_height() for p in mine] == pytest.approx(shares)


def test_ensemble_histogram_with_rows_predicted_by_fewer_models() -> None:
    df = pl.DataFrame({"p0": [0.9, 0.1, 0.8], "p1": [0.8, 0.2, None], "p2": [0.2, None, None]})
    rows = pfm.ensemble_sample_metrics(df, models=["p0", "p1", "p2"])
    fig = pfm.plot_ensemble(None, samples=rows)
    _check_readable(fig)
    (ax,) = fig.axes
    # m = 3 (1/3, 1), m = 2 (0, 1), m = 1 (1): the union
    assert list(ax.get_xticks()) == pytest.approx([0.0, 1 / 3, 1.0])
    bars = sorted(ax.patches, key=lambda p: p.get_x())
    assert [p.get_height() for p in bars] == pytest.approx([0.0, 1 / 3, 2 / 3])


def test_ensemble_names_the_missing_column() -> None:
    df, models = _ensemble(5, n=20)
    rows = pfm.ensemble_sample_metrics(df, models=models, keep=["g"])
    with pytest.raises(ColumnNotFoundError, match="'label_stability'"):
        pfm.plot_ensemble(None, samples=rows.drop("label_stability"))
    with pytest.raises(ColumnNotFoundError, match="'n_models'"):
        pfm.plot_ensemble(None, samples=rows.drop("n_models"))
    assert len(pfm.plot_ensemble(None, samples=rows.drop("n_models"), n_models=5).axes) == 1
    with pytest.raises(InvalidOptionError, match="not a value"):
        pfm.plot_ensemble(None, samples=rows.drop("n_models"), n_models=4)
    with pytest.raises(InvalidOptionError, match="group metrics or samples"):
        pfm.plot_ensemble(None)


# ---------------------------------------------------------------------------------------------
# the report draws with the same functions; property plots
# ---------------------------------------------------------------------------------------------


def test_report_plots_are_the_public_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    for name in ("plot_group_metrics", "plot_disparities"):
        original = getattr(figures, name)

        def spy(*args: Any, _f: Any = original, _n: str = name, **kwargs: Any) -> Any:
            calls.append(_n)
            return _f(*args, **kwargs)

        monkeypatch.setattr(figures, name, spy)
    df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "p": [1, 0, 1, 1]})
    page = pfm.audit(df, y_true="y", y_pred="p", by="g").to_html()
    assert calls == ["plot_group_metrics", "plot_disparities"]
    assert page.count("<svg") == 2


def test_property_plots_return_figures_without_pyplot() -> None:
    import matplotlib.pyplot as plt

    from polars_fairmetrics.plot_properties import (
        plot_histogram_grid,
        plot_perfect_fairness,
        plot_undefined,
    )
    from polars_fairmetrics.properties import cell_pmf, cell_summary, marginal_summary

    before = plt.get_fignums()
    s = cell_summary(8)
    lines = plot_undefined(marginal_summary(s, by="ir"), marginal_summary(s, by="gr"))
    _check_readable(lines)
    _check_readable(
        plot_perfect_fairness(marginal_summary(s, by="ir"), marginal_summary(s, by="gr"))
    )
    grid = plot_histogram_grid(cell_pmf(8), "equal_opportunity")
    assert isinstance(grid, Figure) and grid.get_size_inches()[0] == figures.FIGURE_WIDTH
    assert plt.get_fignums() == before  # nothing left in pyplot's state


def test_the_readability_check_can_fail() -> None:
    fig = pfm.plot_group_metrics(_values_table(), metrics=["selection_rate"])
    fig.axes[0].legend(["inside"], loc="center")  # a legend over the data
    with pytest.raises(AssertionError, match="legend over the data"):
        _check_readable(fig)
    fig = pfm.plot_group_metrics(_values_table(), metrics=["selection_rate"])
    fig.axes[0].set_title("tiny", fontsize=6)
    with pytest.raises(AssertionError, match="tiny"):
        _check_readable(fig)


def test_labels_from_data_are_shown_as_text_never_as_math() -> None:
    t = pl.DataFrame(
        {"g": ["$x^2$", "a\x1bb"], "metric": ["selection_rate"] * 2, "value": [0.5, 0.25]}
    )
    fig = pfm.plot_group_metrics(t)
    labels = [x.get_text() for x in fig.axes[0].get_yticklabels()]
    assert labels == ['g="\\$x^2\\$"', 'g="a\\x1bb"']
    from polars_fairmetrics.plot import figure_svg

    svg = figure_svg(fig)
    assert svg.startswith("<svg") and "\x1b" not in svg


def test_long_labels_are_cut_distinct_and_leave_room_for_the_data() -> None:
    """Group names of 150 characters sharing a long prefix: each figure stays readable, its
    tick labels are at most MAX_LABEL characters (+ a ``#k`` suffix) and still distinct."""
    prefix = "a very long group name " * 6
    names = [prefix + "one", prefix + "two", "short", prefix[:20]]
    t = pl.DataFrame(
        {"g": names, "metric": ["selection_rate"] * 4, "value": [0.5, 0.25, 0.75, 0.1]}
    )
    fig = pfm.plot_group_metrics(t)
    _check_readable(fig)
    labels = [x.get_text() for x in fig.axes[0].get_yticklabels()]
    assert len(set(labels)) == 4
    assert all(len(lb.split(" #")[0]) <= figures.MAX_LABEL for lb in labels)
    assert 'g="short"' in labels
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    left = min(x.get_window_extent(renderer).x0 for x in fig.axes[0].get_yticklabels())
    assert left >= 0  # uncut, the labels would start 900 px left of the figure
    assert fig.axes[0].get_position().width > 0.3  # the data area keeps room
