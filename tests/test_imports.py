"""``import polars_fairmetrics`` stays light: no NumPy, pyarrow, matplotlib or pyspark.

The bootstrap, curve, ensemble and Spark names are imported on first use (the package's module
``__getattr__``; the ``.fair`` namespaces load those modules when a method needs them); pyarrow is
imported by the Spark path only, matplotlib by plotting only. Each check runs in a fresh
interpreter, since this test session has imported everything already.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars_fairmetrics as pfm
from polars_fairmetrics import curves

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pyarrow", "matplotlib", "pyspark", "numpy")


def loaded_after(code: str) -> list[str]:
    """The heavy modules in ``sys.modules`` after running ``code`` in a fresh interpreter."""
    probe = (
        f"import json, sys\n{code}\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded: list[str] = json.loads(out.stdout.strip().splitlines()[-1])
    return loaded


def test_import_loads_no_heavy_module() -> None:
    # NumPy too: it alone costs about as much as the 0.1 s budget beyond `import polars`
    assert loaded_after("import polars_fairmetrics") == []


def test_expression_and_count_paths_stay_light() -> None:
    code = """
import polars as pl
import polars_fairmetrics as pfm
df = pl.DataFrame({"g": ["a", "b"], "y": [1, 0], "p": [1, 1], "w": [1.0, 2.0]})
df.group_by("g").agg(pl.col("p").fair.true_positive_rate(y_true="y", weight="w"))
pfm.group_metrics(df.lazy(), y_true="y", y_pred="p", by="g").collect(engine="streaming")
df.fair.disparities(y_true="y", y_pred="p", by="g")
"""
    assert loaded_after(code) == []


def test_lazy_names_resolve() -> None:
    assert "numpy" in loaded_after("from polars_fairmetrics import roc_auc")
    assert "pyarrow" not in loaded_after("from polars_fairmetrics import spark_group_metrics")
    assert "matplotlib" not in loaded_after("import polars_fairmetrics as p; p.plot_curves")
    names = "p.plot_group_metrics, p.plot_disparities, p.plot_ensemble, p.plot_curves"
    assert "matplotlib" not in loaded_after(f"import polars_fairmetrics as p; {names}")
    for name in pfm.__all__:
        assert getattr(pfm, name) is not None, name
        assert name in dir(pfm)
    assert pfm.curves is curves  # submodules are attributes, as before
