"""The ``.fair`` namespaces are thin, explicit, exact delegates of the typed functions."""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

import polars as pl
import pytest

import polars_fairmetrics as pfm
from polars_fairmetrics import _frame_namespace, _namespaces, metrics

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
generate_namespaces = importlib.import_module("generate_namespaces")

FRAME_METHODS = generate_namespaces.FRAME_METHODS


def test_generated_frame_namespace_is_current() -> None:
    on_disk = (ROOT / "polars_fairmetrics" / "_frame_namespace.py").read_text(encoding="utf-8")
    assert on_disk == generate_namespaces.formatted(), (
        "polars_fairmetrics/_frame_namespace.py is stale: run "
        "`python scripts/generate_namespaces.py`"
    )


@pytest.mark.parametrize(("module", "name"), FRAME_METHODS, ids=[n for _, n in FRAME_METHODS])
def test_frame_method_has_the_function_signature(module: str, name: str) -> None:
    func = getattr(importlib.import_module(f"polars_fairmetrics.{module}"), name)
    method = getattr(_frame_namespace.FrameNamespace, name)
    f_params = list(inspect.signature(func).parameters.values())[1:]
    m_params = list(inspect.signature(method).parameters.values())[1:]
    assert [(p.name, p.kind, p.default, str(p.annotation)) for p in f_params] == [
        (p.name, p.kind, p.default, str(p.annotation)) for p in m_params
    ]
    summary = (inspect.getdoc(func) or "").splitlines()[0]
    assert (inspect.getdoc(method) or "").splitlines()[0] == summary
    hidden = [p.name for p in m_params if p.kind is inspect.Parameter.VAR_KEYWORD]
    assert not hidden, f"{name} hides arguments behind **{hidden[0]}"


def test_every_public_frame_function_has_a_method() -> None:
    """A public function taking a frame first is reachable as ``lf.fair.<name>``."""
    names = {n for _, n in FRAME_METHODS}
    skip = {
        "combine_counts",
        "intervals",
        "load_compas",
        "pooled_curve",
        "plot_curves",
        "plot_group_metrics",
        "plot_disparities",
        "plot_ensemble",
        "deployment_factors",
        "audit",
    }
    for n in pfm.__all__:
        obj = getattr(pfm, n)
        if not inspect.isfunction(obj) or n in skip or n.startswith("spark_"):
            continue
        params = list(inspect.signature(obj).parameters)
        if params and params[0] in ("data", "counts", "table", "frame", "rows"):
            assert n in names or n in skip, n


@pytest.mark.parametrize("name", list(metrics.METRICS))
def test_every_metric_is_an_expression_method(name: str) -> None:
    method = getattr(_namespaces.FairExprNamespace, name)
    assert inspect.getdoc(method), name
    df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 1, 0, 0]})
    via_method = df.select(getattr(pl.col("p").fair, name)(y_true="y")).item()
    via_function = df.select(
        metrics.METRICS[name].func(metrics.Counts.from_rows("p", y_true="y"))
    ).item()
    assert via_method == via_function


def test_frame_methods_return_the_frame_kind() -> None:
    df = pl.DataFrame({"g": ["a", "b"], "y": [1, 0], "p": [1, 1]})
    assert isinstance(df.lazy().fair.disparities(y_true="y", y_pred="p", by="g"), pl.LazyFrame)
    assert isinstance(df.fair.disparities(y_true="y", y_pred="p", by="g"), pl.DataFrame)
