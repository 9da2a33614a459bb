"""Helpers shared by the benchmark scripts (run them as ``python benchmarks/bench_<topic>.py``).

Timings are only worth reading from a quiet machine: :func:`interleaved` runs the variants in
turn (so a burst of load hits all of them alike) and reports medians, and :func:`load_note`
records the load average beside the figures, as every page must.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Mapping


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """The median of ``repeat`` timed calls of ``fn``, in seconds.

    (The name is historical: a median, not a minimum, is what the pages quote.)
    """
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def interleaved(variants: Mapping[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median seconds of each variant, the variants timed in turn ``repeat`` times.

    Each round runs every variant once, in the given order; interleaving keeps a change in the
    machine's load from favouring one variant.
    """
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name, fn in variants.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


def load_average() -> tuple[float, float, float]:
    """The 1, 5 and 15 minute load averages (0s where the platform does not say)."""
    try:
        return os.getloadavg()
    except OSError:  # pragma: no cover - not on Linux
        return (0.0, 0.0, 0.0)


def load_note() -> str:
    """A line for a benchmark page: the load average and core count when it was measured."""
    one, five, fifteen = load_average()
    cores = os.cpu_count() or 0
    return (
        f"Load average when measured: {one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min) "
        f"on {cores} cores, the benchmark's own processes included (no other job ran: a load "
        "near 1-2 is this run itself). Medians of interleaved runs."
    )
