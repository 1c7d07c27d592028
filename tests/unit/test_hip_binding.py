"""miopen_ctypes.hip: HIP prototypes, struct layouts, HipLibrary over injected functions."""

from __future__ import annotations

import ctypes
from ctypes import POINTER, byref, c_int, c_void_p, cast
from typing import Any

import pytest

from miopen_ctypes import hip
from miopen_ctypes.errors import HipError, HipNotFoundError, MIOpenVersionError, NullArgumentError
from miopen_ctypes.hip import HIP_PROTOTYPES, HipLibrary, hipDeviceProp_t, hipEvent_t, hipMemcpyKind
from miopen_ctypes.hip_types import hipPointerAttribute_t

# 64-bit layout: Linux x86-64 (LP64) and Windows x64 (LLP64) agree, these structs have no C long
LP64 = pytest.mark.skipif(ctypes.sizeof(c_void_p) != 8, reason="offsets of a 64-bit target")


@LP64
def test_device_prop_layout_matches_hip_runtime_api() -> None:
    # offsets read from hipDeviceProp_tR0600 in the ROCm 6.4.3 and 7.2.4 headers (identical)
    expected = {
        "name": 0, "uuid": 256, "luid": 272, "totalGlobalMem": 288, "warpSize": 308,
        "major": 360, "minor": 364, "multiProcessorCount": 388, "l2CacheSize": 616,
        "reserved": 780, "hipReserved": 1032, "gcnArchName": 1160,
        "maxSharedMemoryPerMultiProcessor": 1416, "arch": 1428, "hdpMemFlushCntl": 1432,
        "asicRevision": 1468,
    }  # fmt: skip
    assert ctypes.sizeof(hipDeviceProp_t) == 1472
    assert {k: getattr(hipDeviceProp_t, k).offset for k in expected} == expected
    assert hipDeviceProp_t.gcnArchName.size == 256


@LP64
def test_pointer_attribute_layout() -> None:
    assert ctypes.sizeof(hipPointerAttribute_t) == 32
    names = ["type", "device", "devicePointer", "hostPointer", "isManaged", "allocationFlags"]
    assert [getattr(hipPointerAttribute_t, n).offset for n in names] == [0, 4, 8, 16, 24, 28]


def test_prototypes_cover_what_the_engines_need() -> None:
    needed = {
        "hipGetDeviceCount", "hipGetDevicePropertiesR0600", "hipMalloc", "hipFree", "hipMemcpy",
        "hipMemcpyAsync", "hipStreamCreate", "hipStreamDestroy", "hipStreamSynchronize",
        "hipEventCreate", "hipEventRecord", "hipEventSynchronize", "hipEventElapsedTime",
        "hipEventDestroy", "hipPointerGetAttributes", "hipGetErrorString",
    }  # fmt: skip
    assert needed <= set(HIP_PROTOTYPES)
    assert HIP_PROTOTYPES["hipEventElapsedTime"].argtypes[1] is hipEvent_t
    assert HIP_PROTOTYPES["hipMalloc"].argtypes[0] is POINTER(c_void_p)
    assert hipMemcpyKind.hipMemcpyDeviceToHost == 2 and hipMemcpyKind.hipMemcpyDefault == 4


def test_gcn_arch_name_from_device_properties() -> None:
    def props(out: Any, device: int) -> int:
        out.contents.gcnArchName = b"gfx942:sramecc+:xnack-"
        out.contents.multiProcessorCount = 304 + device
        return 0

    lib = HipLibrary.from_functions({"hipGetDevicePropertiesR0600": props})
    assert lib.gcn_arch_name(0) == "gfx942"
    assert lib.device_properties(1).multiProcessorCount == 305


def test_malloc_memcpy_free_round_trip() -> None:
    log: list[tuple[Any, ...]] = []

    def malloc(out: Any, size: int) -> int:
        out[0] = 0x9000
        log.append(("malloc", size))
        return 0

    lib = HipLibrary.from_functions(
        {
            "hipMalloc": malloc,
            "hipMemcpy": lambda dst, src, n, kind: log.append(("memcpy", dst, n, kind)),
            "hipFree": lambda p: log.append(("free", p)),
        }
    )
    ptr = c_void_p()
    lib.hipMalloc(byref(ptr), 64)
    host = (ctypes.c_float * 16)()
    lib.hipMemcpy(ptr, host, 64, hipMemcpyKind.hipMemcpyHostToDevice)
    lib.hipFree(ptr)
    assert log == [("malloc", 64), ("memcpy", 0x9000, 64, 1), ("free", 0x9000)]


def test_failing_call_raises_hip_error_with_runtime_text() -> None:
    lib = HipLibrary.from_functions(
        {
            "hipGetDeviceCount": lambda count: 100,
            "hipGetErrorName": lambda s: b"hipErrorNoDevice",
            "hipGetErrorString": lambda s: b"no ROCm-capable device is detected",
        }
    )
    with pytest.raises(HipError) as info:
        lib.hipGetDeviceCount(byref(c_int()))
    assert str(info.value) == (
        "hipGetDeviceCount failed: hipError_t 100: hipErrorNoDevice: no ROCm-capable device is detected"
    )
    assert info.value.status == 100


def test_events_must_not_be_null_but_streams_may() -> None:
    recorded: list[Any] = []
    lib = HipLibrary.from_functions({"hipEventRecord": lambda e, s: recorded.append(s)})
    event = cast(c_void_p(0x10), hipEvent_t)
    lib.hipEventRecord(event, None)  # NULL stream = the default stream
    assert recorded == [None]
    with pytest.raises(NullArgumentError, match="hipEventRecord: parameter 'event'"):
        lib.hipEventRecord(hipEvent_t(), None)
    with pytest.raises(ctypes.ArgumentError):
        lib.hipEventRecord(c_void_p(0x10), None)  # a stream-like void* is not an event


def test_version_from_hip_runtime_get_version() -> None:
    def runtime_version(out: Any) -> int:
        out[0] = 70253211
        return 0

    cfuncs = HipLibrary._wrap_functions({"hipRuntimeGetVersion": runtime_version}, HIP_PROTOTYPES)
    assert HipLibrary(cfuncs, None, None).version == (7, 2, 53211)


def test_missing_hip_function_raises_version_error() -> None:
    old = HipLibrary.from_functions({}, version=(5, 7, 0))
    with pytest.raises(MIOpenVersionError, match=r"hipMalloc requires HIP >= 6\.0\.0, loaded 5\.7\.0$"):
        old.hipMalloc(byref(c_void_p()), 4)
    new = HipLibrary.from_functions({}, version=(7, 2, 0))
    with pytest.raises(MIOpenVersionError, match=r"loaded 7\.2\.0 does not export it"):
        new.hipMalloc(byref(c_void_p()), 4)


def test_load_hip_not_found_lists_the_override(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("HIPDNN_HIP_LIBRARY", str(tmp_path / "libamdhip64.so.7"))
    with pytest.raises(HipNotFoundError, match="HIPDNN_HIP_LIBRARY") as info:
        hip.load_hip()
    assert info.value.attempts == [
        (f"$HIPDNN_HIP_LIBRARY: {tmp_path / 'libamdhip64.so.7'}", "no such file")
    ]
