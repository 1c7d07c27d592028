"""Upstream's provisional HIP helpers (hipdnn/frontend/_hip.py): events and synchronisation over
the HIP runtime (here the emulated device's), no stall gate, and a clear RuntimeError without
a HIP runtime."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import hipdnn.frontend as fe
from hipdnn.frontend import _hip

NAMES = ("HipEvent", "HipStallGate", "hip_stream_synchronize", "hip_get_device_count",
         "hip_device_synchronize", "hip_can_use_stream_wait_value")


@pytest.fixture
def emulated_hip(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from emulated.device import EmulatedDevice

    device = EmulatedDevice("3.5")
    monkeypatch.setattr(_hip, "runtime_loader", lambda: device.hip)
    yield device
    assert not device.internal_errors, device.internal_errors


def test_names_are_exported_and_there_is_no_stall_gate() -> None:
    assert [n for n in NAMES if not hasattr(fe, n)] == []
    assert fe.hip_can_use_stream_wait_value() is False
    with pytest.raises(RuntimeError, match=r"HipStallGate is not available.*HipEvent"):
        fe.HipStallGate()


def test_events_time_and_synchronise(emulated_hip: Any) -> None:
    start, stop = fe.HipEvent(), fe.HipEvent()
    start.record(0)
    stop.record()
    stop.synchronize()
    fe.hip_stream_synchronize(0)
    fe.hip_device_synchronize()
    elapsed = start.elapsed_time(stop)
    assert isinstance(elapsed, float) and elapsed >= 0.0
    with pytest.raises(TypeError, match="HipEvent"):
        start.elapsed_time(0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="stream must be an int"):
        start.record("0")  # type: ignore[arg-type]
    stop.destroy()
    stop.destroy()  # idempotent
    assert "destroyed" in repr(stop)
    for use in (stop.synchronize, lambda: stop.record(0), lambda: start.elapsed_time(stop)):
        with pytest.raises(RuntimeError, match="HipEvent has been destroyed"):
            use()


def test_without_a_hip_runtime_every_call_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> Any:
        raise OSError("libamdhip64.so: cannot open shared object file")

    monkeypatch.setattr(_hip, "runtime_loader", missing)
    for call in (fe.HipEvent, fe.hip_device_synchronize, lambda: fe.hip_stream_synchronize(0)):
        with pytest.raises(RuntimeError, match="no HIP runtime: libamdhip64"):
            call()
