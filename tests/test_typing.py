"""The namespaces are usable from type-checked user code (``pfm.fair(...)``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl

HERE = Path(__file__).resolve().parent


def _mypy(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", str(path)],
        capture_output=True,
        text=True,
        cwd=HERE.parent,
        check=False,
    )


def test_typed_usage_passes_mypy_strict() -> None:
    result = _mypy(HERE / "typed" / "usage.py")
    assert result.returncode == 0, result.stdout + result.stderr


def test_typed_usage_runs() -> None:
    sys.path.insert(0, str(HERE / "typed"))
    from usage import audit_frame  # type: ignore[import-not-found]

    lf = pl.LazyFrame({"g": ["a", "a", "b"], "y": [1, 0, 1], "p": [1, 1, 0]})
    out = audit_frame(lf)
    assert out.height > 0


def test_a_wrong_argument_is_caught_by_mypy(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import polars as pl\nimport polars_fairmetrics as pfm\n"
        "pfm.fair(pl.LazyFrame()).disparities(referenc='a')\n",
        encoding="utf-8",
    )
    result = _mypy(bad)
    assert result.returncode != 0 and "referenc" in result.stdout
