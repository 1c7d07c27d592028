"""Fixtures of the emulated-device tests: the device per MIOpen version, and MIOPEN_ENGINE on it.

``emulated_device`` runs every test twice, on the MIOpen 3.4 symbol set ("miopen3.4") and on
3.5 ("miopen3.5"). ``emulated_miopen_engine`` builds hipdnn's MIOpen engine over that device and
registers it in place of the default MIOPEN_ENGINE for the test (the registry is restored after).
After each test the device must not have raised a Python exception inside an emulated function
(that would be a bug of the device, not of the code under test). Set HIPDNN_EMULATED_ERROR_LOG=<file>
to log every failing status the device returned (to spot statuses a fallback path swallowed).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_TESTS = str(Path(__file__).resolve().parent.parent)
if _TESTS not in sys.path:  # the device is the namespace package "emulated" under tests/
    sys.path.insert(0, _TESTS)

from emulated.device import EmulatedDevice  # noqa: E402
from emulated.registration import registered  # noqa: E402

VERSION_IDS = {"3.4": "miopen3.4", "3.5": "miopen3.5"}


@pytest.fixture(params=list(VERSION_IDS), ids=list(VERSION_IDS.values()))
def emulated_device(request: pytest.FixtureRequest) -> Iterator[EmulatedDevice]:
    """A fresh EmulatedDevice for MIOpen 3.4 and for 3.5."""
    device = EmulatedDevice(request.param)
    yield device
    log = os.environ.get("HIPDNN_EMULATED_ERROR_LOG")
    if log:  # diagnostics: every failing status the device returned, per test
        with open(log, "a", encoding="utf-8") as out:
            for name, status, message in device.errors:
                out.write(f"{request.node.nodeid}\t{name}\t{status}\t{message}\n")
    assert not device.internal_errors, f"the emulated device itself failed: {device.internal_errors}"


@pytest.fixture
def emulated_miopen_engine(emulated_device: EmulatedDevice) -> Iterator[Any]:
    """hipdnn's MiopenEngine over ``emulated_device``, registered as MIOPEN_ENGINE for the test."""
    from hipdnn.engines.miopen import MiopenEngine

    with registered(MiopenEngine(miopen_loader=lambda: emulated_device.miopen,
                                 hip_loader=lambda: emulated_device.hip)) as engine:
        yield engine
