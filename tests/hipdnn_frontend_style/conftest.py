"""Fixtures of the hipdnn_frontend-style tests: the engine a test's graphs run on.

``engine`` runs a test twice: on CPU_REFERENCE_ENGINE (MIOPEN_ENGINE set aside) and on
MIOPEN_ENGINE over the emulated MIOpen 3.5 device of tests/emulated (host memory is its device
memory; DeviceBuffer contents are staged through its hipMalloc).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_TESTS = str(Path(__file__).resolve().parent.parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from emulated.device import EmulatedDevice  # noqa: E402  (tests/emulated, a namespace package)


@pytest.fixture(params=["CPU_REFERENCE_ENGINE", "MIOPEN_ENGINE"])
def engine(request: pytest.FixtureRequest) -> Iterator[str]:
    """The engine name graphs of this test must run on (the other is set aside)."""
    from hipdnn.backend.engine import fnv1a_64
    from hipdnn.engines import register, registry, unregister
    from hipdnn.engines.miopen import MiopenEngine

    miopen_id = fnv1a_64("MIOPEN_ENGINE")
    previous = registry().get(miopen_id)
    if request.param == "MIOPEN_ENGINE":
        device = EmulatedDevice("3.5")
        register(MiopenEngine(miopen_loader=lambda: device.miopen, hip_loader=lambda: device.hip))
    else:
        device = None
        unregister(miopen_id)
    try:
        yield request.param
    finally:
        if previous is not None:
            register(previous)
        else:
            unregister(miopen_id)
    if device is not None:
        assert not device.internal_errors, device.internal_errors
