"""Hypothesis profiles for the property tests.

- ``default`` (local runs): fast, a few hundred random frames in total;
- ``ci``: 200 examples per property test (twice the default), and 10,000 random frames through
  the reference comparison (``test_reference_properties.py``: 250
  examples of 40 stacked frames); a few minutes of CPU on 2 cores.

Select with the environment variable ``HYPOTHESIS_PROFILE`` (``HYPOTHESIS_PROFILE=ci pytest``).
Tests that set ``max_examples`` themselves keep it; the property tests of this project scale theirs
from the profile (``settings().max_examples``).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "print_blob": True,
}
settings.register_profile("default", max_examples=100, **_COMMON)  # type: ignore[arg-type]
settings.register_profile("ci", max_examples=200, derandomize=False, **_COMMON)  # type: ignore[arg-type]
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "default")
settings.load_profile(PROFILE)
