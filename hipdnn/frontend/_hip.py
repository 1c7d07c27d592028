"""Upstream's provisional HIP runtime helpers: ``HipEvent``, ``hip_stream_synchronize``,
``hip_device_synchronize``, ``hip_can_use_stream_wait_value`` and ``HipStallGate``.

Events and synchronisation call the HIP runtime that ``miopen_ctypes.hip.load_hip`` finds (the
one MIOPEN_ENGINE uses); with no HIP runtime they raise RuntimeError saying so, as upstream does
without a device. There is no stream-wait-value stall gate here: ``hip_can_use_stream_wait_value``
is False (upstream's own tests skip the gate then) and ``HipStallGate()`` raises RuntimeError.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from collections.abc import Callable
from typing import Any

from hipdnn.core.errors import call_failed
from miopen_ctypes.hip import hipEvent_t, load_hip

__all__ = [
    "HipEvent",
    "HipStallGate",
    "hip_can_use_stream_wait_value",
    "hip_device_synchronize",
    "hip_stream_synchronize",
]

#: Where the HIP runtime comes from (tests point it at an emulated device).
runtime_loader: Callable[[], Any] = load_hip


def _runtime() -> Any:
    try:
        return runtime_loader()
    except Exception as exc:
        raise RuntimeError(f"no HIP runtime: {exc}") from None


def _call(hip: Any, name: str, *args: Any) -> None:
    try:
        getattr(hip, name)(*args)
    except Exception as exc:
        raise RuntimeError(call_failed(name, exc)) from None


def _stream(stream: int | None) -> ctypes.c_void_p:
    if stream is not None and (isinstance(stream, bool) or not isinstance(stream, int)):
        raise TypeError(f"stream must be an int (0: the default stream), got "
                        f"{type(stream).__name__}")
    return ctypes.c_void_p(stream or None)


#: Makes HipEvent.destroy's take-and-clear of the event one step.
_DESTROYING = threading.Lock()


class HipEvent:
    """A HIP event: ``record(stream=0)``, ``synchronize()``, ``elapsed_time(end)`` (ms),
    ``destroy()``; RuntimeError once destroyed."""

    def __init__(self) -> None:
        self._hip = _runtime()
        event = hipEvent_t()
        _call(self._hip, "hipEventCreate", ctypes.byref(event))
        self._event: hipEvent_t | None = event

    def _live(self) -> hipEvent_t:
        if self._event is None:
            raise RuntimeError("HipEvent has been destroyed")
        return self._event

    def record(self, stream: int | None = 0) -> None:
        """Record the event on ``stream``."""
        _call(self._hip, "hipEventRecord", self._live(), _stream(stream))

    def synchronize(self) -> None:
        """Wait until the event has completed."""
        _call(self._hip, "hipEventSynchronize", self._live())

    def elapsed_time(self, end: HipEvent) -> float:
        """Milliseconds from this event to ``end`` (both recorded and completed)."""
        if not isinstance(end, HipEvent):
            raise TypeError(f"end must be a HipEvent, got {type(end).__name__}")
        ms = ctypes.c_float(0.0)
        _call(self._hip, "hipEventElapsedTime", ctypes.byref(ms), self._live(), end._live())
        return float(ms.value)

    def destroy(self) -> None:
        """Release the event (idempotent, also from several threads at once: one
        ``hipEventDestroy``)."""
        with _DESTROYING:
            event, self._event = self._event, None
        if event is not None:
            _call(self._hip, "hipEventDestroy", event)

    def __del__(self) -> None:
        if sys.is_finalizing():  # interpreter shutdown: the runtime may be gone
            return
        try:
            self.destroy()
        except Exception:  # a finalizer must never raise
            pass

    def __repr__(self) -> str:
        return f"<hipdnn.frontend.HipEvent{' destroyed' if self._event is None else ''}>"


class HipStallGate:
    """Upstream's stream stall gate (hipStreamWaitValue32); not available here."""

    def __init__(self) -> None:
        raise RuntimeError("HipStallGate is not available in hipdnn: "
                           "hip_can_use_stream_wait_value() is False (no stream-wait-value "
                           "stall); time with HipEvent or Graph.execute_timed_ext instead")


def hip_can_use_stream_wait_value() -> bool:
    """False: this package has no hipStreamWaitValue32 stall gate."""
    return False


def hip_stream_synchronize(stream: int | None = 0) -> None:
    """Wait for ``stream`` (0: the default stream)."""
    _call(_runtime(), "hipStreamSynchronize", _stream(stream))


def hip_device_synchronize() -> None:
    """Wait for the current device."""
    _call(_runtime(), "hipDeviceSynchronize")
