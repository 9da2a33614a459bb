"""Modules imported on first use, so that ``import polars_fairmetrics`` stays light.

The bootstrap, calibration, curve, ensemble, models and monitor modules import NumPy (the
monitor also deltalake, when it writes or reads a store), the Spark module pyarrow (when it
counts a partition): the package and its ``.fair`` namespaces reach them through
:class:`LazyModule`.
"""

from __future__ import annotations

import importlib
from typing import Any

LAZY_MODULES: tuple[str, ...] = (
    "bootstrap",
    "calibration",
    "curves",
    "ensemble",
    "models",
    "monitor",
    "spark",
)
"""The submodules ``import polars_fairmetrics`` does not import (they import NumPy or pyarrow)."""


class LazyModule:
    """A module imported on its first attribute access.

    Examples
    --------
    >>> import sys
    >>> lazy = LazyModule("json")
    >>> lazy.dumps([1])
    '[1]'
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazily imported module {self._name!r}>"
