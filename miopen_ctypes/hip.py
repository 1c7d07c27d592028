"""The HIP runtime calls the engines need, bound in the same style as MIOpen.

``HIP_PROTOTYPES`` was taken from ``hip_runtime_api.h`` of ROCm 6.4.3 and 7.2.4 (identical for
these functions; tests/conformance/test_hip_conformance.py checks every one against both headers
and libamdhip64 builds). For HIP entries ``Prototype.since`` is the HIP runtime version. A ``hipError_t``
other than ``hipSuccess`` raises ``HipError`` (text from hipGetErrorName/hipGetErrorString).
Streams are untyped ``void*`` (they come from PyTorch / hip-python as integers; NULL is the
default stream); events are a distinct pointer type.

    >>> hip = HipLibrary.from_functions({"hipGetDeviceCount": lambda count: 100})
    >>> hip.hipGetDeviceCount(ctypes.byref(ctypes.c_int()))
    Traceback (most recent call last):
    ...
    miopen_ctypes.errors.HipError: hipGetDeviceCount failed: hipError_t 100
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable, Mapping
from ctypes import POINTER, c_char, c_char_p, c_float, c_int, c_size_t, c_uint, c_void_p
from functools import partial
from typing import Any

from ._binding import BoundLibrary
from ._discovery import LibrarySpec, forget_failures, load_remembered
from ._functions import HipFunctions
from ._proto import Prototype, declare
from .errors import HipError, HipNotFoundError
from .hip_types import (
    hipDeviceAttribute_t,
    hipDeviceProp_t,
    hipEvent_t,
    hipMemcpyKind,
    hipMemoryType,
    hipPointerAttribute_t,
    hipUUID,
)
from .types import hipStream_t

__all__ = [
    "HIP_PROTOTYPES",
    "HIP_SPEC",
    "HipLibrary",
    "hipDeviceAttribute_t",
    "hipDeviceProp_t",
    "hipEvent_t",
    "hipMemcpyKind",
    "hipMemoryType",
    "hipPointerAttribute_t",
    "hipStream_t",
    "hipUUID",
    "load_hip",
]

_HIP6 = (6, 0, 0)
_err = c_uint  # hipError_t: an enum without negative members -> unsigned int


_fn = partial(declare, since=_HIP6, restype=_err)


_TABLE = (
    _fn("hipGetErrorName", ("hip_error", _err), restype=c_char_p, status=False),
    _fn("hipGetErrorString", ("hipError", _err), restype=c_char_p, status=False),
    _fn("hipGetLastError", status=False),
    _fn("hipRuntimeGetVersion", ("runtimeVersion", POINTER(c_int))),
    _fn("hipDriverGetVersion", ("driverVersion", POINTER(c_int))),
    _fn("hipGetDeviceCount", ("count", POINTER(c_int))),
    _fn("hipGetDevice", ("deviceId", POINTER(c_int))),
    _fn("hipSetDevice", ("deviceId", c_int)),
    _fn("hipDeviceSynchronize"),
    _fn("hipDeviceGetName", ("name", POINTER(c_char)), ("len", c_int), ("device", c_int)),
    _fn("hipDeviceGetAttribute", ("pi", POINTER(c_int)), ("attr", c_uint), ("deviceId", c_int)),
    # hipGetDeviceProperties is a macro for this symbol in HIP >= 6
    _fn("hipGetDevicePropertiesR0600", ("prop", POINTER(hipDeviceProp_t)), ("deviceId", c_int)),
    _fn("hipMemGetInfo", ("free", POINTER(c_size_t)), ("total", POINTER(c_size_t))),
    _fn("hipMalloc", ("ptr", POINTER(c_void_p)), ("size", c_size_t)),
    _fn("hipFree", ("ptr", c_void_p)),
    _fn("hipHostMalloc", ("ptr", POINTER(c_void_p)), ("size", c_size_t), ("flags", c_uint)),
    _fn("hipHostFree", ("ptr", c_void_p)),
    _fn("hipMemcpy", ("dst", c_void_p), ("src", c_void_p), ("sizeBytes", c_size_t), ("kind", c_uint)),
    _fn(
        "hipMemcpyAsync",
        ("dst", c_void_p), ("src", c_void_p), ("sizeBytes", c_size_t), ("kind", c_uint),
        ("stream", hipStream_t),
    ),
    _fn("hipMemset", ("dst", c_void_p), ("value", c_int), ("sizeBytes", c_size_t)),
    _fn(
        "hipMemsetAsync",
        ("dst", c_void_p), ("value", c_int), ("sizeBytes", c_size_t), ("stream", hipStream_t),
    ),
    _fn("hipPointerGetAttributes", ("attributes", POINTER(hipPointerAttribute_t)), ("ptr", c_void_p)),
    _fn("hipStreamCreate", ("stream", POINTER(hipStream_t))),
    _fn("hipStreamCreateWithFlags", ("stream", POINTER(hipStream_t)), ("flags", c_uint)),
    _fn("hipStreamDestroy", ("stream", hipStream_t)),
    _fn("hipStreamSynchronize", ("stream", hipStream_t)),
    _fn("hipStreamWaitEvent", ("stream", hipStream_t), ("event", hipEvent_t), ("flags", c_uint)),
    _fn("hipEventCreate", ("event", POINTER(hipEvent_t))),
    _fn("hipEventCreateWithFlags", ("event", POINTER(hipEvent_t)), ("flags", c_uint)),
    _fn("hipEventDestroy", ("event", hipEvent_t)),
    _fn("hipEventRecord", ("event", hipEvent_t), ("stream", hipStream_t)),
    _fn("hipEventSynchronize", ("event", hipEvent_t)),
    _fn("hipEventElapsedTime", ("ms", POINTER(c_float)), ("start", hipEvent_t), ("stop", hipEvent_t)),
)

HIP_PROTOTYPES: dict[str, Prototype] = {p.name: p for p in _TABLE}

HIP_SPEC = LibrarySpec(
    env_var="HIPDNN_HIP_LIBRARY",
    linux_names=("libamdhip64.so.7", "libamdhip64.so.6"),
    windows_names=("amdhip64_7.dll", "amdhip64_6.dll"),
    maps_marker="libamdhip64.so",
    rocm_sdk_name="amdhip64",
    probe_symbol="hipGetDeviceCount",
)


def _required_events(proto: Prototype) -> tuple[tuple[int, str, str], ...]:
    """Event handles must be live; streams may be NULL (the default stream)."""
    return tuple(
        (i, name, "hipEvent_t")
        for i, (name, argtype) in enumerate(zip(proto.argnames, proto.argtypes, strict=True))
        if argtype is hipEvent_t
    )


class HipLibrary(BoundLibrary, HipFunctions):
    """The HIP runtime bound from ``HIP_PROTOTYPES``: ``hip.hipMalloc(byref(ptr), n)``."""

    _kind = "HIP"

    def __init__(
        self, cfuncs: Mapping[str, Any], version: tuple[int, int, int] | None, path: str | None
    ) -> None:
        super().__init__(
            HIP_PROTOTYPES, cfuncs, version or (0, 0, 0), path, self._raise, _required_events
        )
        if version is None:
            self.version = self._query_version()

    @classmethod
    def from_cdll(cls, cdll: ctypes.CDLL, path: str | None = None) -> HipLibrary:
        """Bind an opened libamdhip64; the version comes from hipRuntimeGetVersion."""
        return cls(cls._resolve_cdll(cdll, HIP_PROTOTYPES), None, path)

    @classmethod
    def from_functions(
        cls, functions: Mapping[str, Callable[..., Any]], version: tuple[int, int, int] = (7, 2, 0)
    ) -> HipLibrary:
        """Bind Python callables exactly like ``MIOpenLibrary.from_functions``."""
        return cls(cls._wrap_functions(functions, HIP_PROTOTYPES), tuple(version), None)  # type: ignore[arg-type]

    def _query_version(self) -> tuple[int, int, int]:
        if self.cfunc("hipRuntimeGetVersion") is None:
            return (0, 0, 0)
        raw = c_int()
        self.hipRuntimeGetVersion(ctypes.byref(raw))  # e.g. 70226xxx = major*1e7 + minor*1e5 + patch
        value = raw.value
        return (value // 10_000_000, (value // 100_000) % 100, value % 100_000)

    def error_text(self, status: int) -> str | None:
        """``"hipErrorX: description"`` from the runtime, or ``None`` if unavailable."""
        parts = []
        for name in ("hipGetErrorName", "hipGetErrorString"):
            cfunc = self.cfunc(name)
            if cfunc is None:
                continue
            try:
                text = cfunc(status)
            except Exception:
                continue
            if text:
                part = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
                if part not in parts:  # a runtime whose description is the name: say it once
                    parts.append(part)
        return ": ".join(parts) or None

    def _raise(self, function: str, status: int) -> None:
        raise HipError(function, status, self.error_text(status))

    def device_properties(self, device: int = 0) -> hipDeviceProp_t:
        """``hipGetDeviceProperties(device)``; ``.gcnArchName`` names the ISA (e.g. gfx942)."""
        props = hipDeviceProp_t()
        self.hipGetDevicePropertiesR0600(ctypes.byref(props), device)
        return props

    def gcn_arch_name(self, device: int = 0) -> str:
        """The device's ``gcnArchName`` without target features: ``"gfx942"``."""
        name: bytes = self.device_properties(device).gcnArchName
        return name.decode("ascii", "replace").split(":", 1)[0]


_cache: dict[str | None, HipLibrary] = {}
_lock = threading.Lock()


def load_hip(path: str | os.PathLike[str] | None = None, *, refresh: bool = False) -> HipLibrary:
    """Find, load and bind the HIP runtime once (same search as ``load``, ``$HIPDNN_HIP_LIBRARY``).

    On Windows the driver's ``amdhip64_7.dll`` / ``amdhip64_6.dll`` in System32 is the last place.
    Raises ``HipNotFoundError`` listing every place tried; a failure is remembered like ``load``'s.
    """
    key = None if path is None else os.fspath(path)
    with _lock:
        if refresh:
            forget_failures()
        cached = _cache.get(key)
        if cached is None:
            cdll, where = load_remembered(HIP_SPEC, key, HipNotFoundError)
            cached = _cache[key] = HipLibrary.from_cdll(cdll, where)
        return cached
