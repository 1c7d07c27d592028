"""MIOpen handles (create/stream/profiling/tuning policy/version/error strings) and the HIP runtime.

HIP: device memory through the allocation table (hipMalloc/hipFree/hipMemcpy* with every kind,
hipMemset*), streams and events as fake handles (hipEventElapsedTime gives a small fixed time),
one device (configurable count and gcnArchName), hipPointerGetAttributes reporting device memory
for this device's allocations. HIP functions get their arguments by position (header order).
"""

from __future__ import annotations

import ctypes
from ctypes import c_float, c_int, c_size_t, c_uint, c_void_p

from miopen_ctypes.hip_types import hipDeviceProp_t, hipPointerAttribute_t

from ._base import DeviceBase, HandleState
from ._core import UNKNOWN_ERROR, Args, Status, addr, api, require, write_out
from ._memory import MemoryFault

__all__ = ["HIP_ERRORS", "MIOPEN_STATUS_TEXT", "HipApi", "RuntimeApi"]

MIOPEN_STATUS_TEXT = {
    0: "miopenStatusSuccess", 1: "miopenStatusNotInitialized", 2: "miopenStatusInvalidValue",
    3: "miopenStatusBadParm", 4: "miopenStatusAllocFailed", 5: "miopenStatusInternalError",
    6: "miopenStatusNotImplemented", 7: "miopenStatusUnknownError", 8: "miopenStatusUnsupportedOp",
    9: "miopenStatusGpuOperationsSkipped", 10: "miopenStatusVersionMismatch",
}
HIP_SUCCESS, HIP_INVALID_VALUE, HIP_OUT_OF_MEMORY = 0, 1, 2
HIP_INVALID_DEVICE_POINTER, HIP_NO_DEVICE, HIP_INVALID_DEVICE, HIP_INVALID_HANDLE = 17, 100, 101, 400
HIP_ERRORS = {
    HIP_SUCCESS: "hipSuccess", HIP_INVALID_VALUE: "hipErrorInvalidValue",
    HIP_OUT_OF_MEMORY: "hipErrorOutOfMemory", HIP_INVALID_DEVICE_POINTER: "hipErrorInvalidDevicePointer",
    HIP_NO_DEVICE: "hipErrorNoDevice", HIP_INVALID_DEVICE: "hipErrorInvalidDevice",
    HIP_INVALID_HANDLE: "hipErrorInvalidHandle",
}


class RuntimeApi(DeviceBase):
    """Mixin: miopenHandle_t lifetime, streams, profiling, tuning policy, version, error text."""

    device_count: int

    def stream_ok(self, stream: int) -> None:
        """A stream argument must be NULL (default stream) or a live stream of this device."""
        if stream:
            self.handles.get("stream", stream, "stream", object)

    @api("miopenGetVersion")
    def _version(self, a: Args) -> None:
        for name, value in zip(("major", "minor", "patch"), self.version, strict=True):
            write_out(getattr(a, name), c_size_t, value, name)

    @api("miopenGetErrorString")
    def _error_string(self, a: Args) -> bytes:
        return MIOPEN_STATUS_TEXT.get(a.error, "Unknown error").encode()

    def _new_handle(self, out: object, stream: int) -> None:
        require(addr(out), "handle: Dereferencing nullptr")
        if self.device_count < 1:  # what the real library does on a machine without a GPU
            raise Status(UNKNOWN_ERROR, "No device: no ROCm-capable device is detected")
        self.stream_ok(stream)
        write_out(out, c_size_t, self.handles.new("handle", HandleState(stream=stream)), "handle")

    @api("miopenCreate")
    def _create(self, a: Args) -> None:
        self._new_handle(a.handle, 0)

    @api("miopenCreateWithStream")
    def _create_with_stream(self, a: Args) -> None:
        self._new_handle(a.handle, addr(a.stream))

    @api("miopenDestroy")
    def _destroy(self, a: Args) -> None:
        self.handles.destroy("handle", a.handle, "handle")

    @api("miopenSetStream")
    def _set_stream(self, a: Args) -> None:
        state = self.handle_state(a.handle)
        self.stream_ok(addr(a.streamID))
        state.stream = addr(a.streamID)

    @api("miopenGetStream")
    def _get_stream(self, a: Args) -> None:
        write_out(a.streamID, c_void_p, self.handle_state(a.handle).stream or None, "streamID")

    @api("miopenSetAllocator")
    def _set_allocator(self, a: Args) -> None:
        self.handle_state(a.handle).allocator = (addr(a.allocator), addr(a.deallocator), addr(a.allocatorContext))

    @api("miopenEnableProfiling")
    def _profiling(self, a: Args) -> None:
        self.handle_state(a.handle).profiling = bool(a.enable)

    @api("miopenGetKernelTime")
    def _kernel_time(self, a: Args) -> None:
        state = self.handle_state(a.handle)
        write_out(a.time, c_float, self.kernel_time_ms if state.profiling else 0.0, "time")

    @api("miopenSetTuningPolicy")
    def _set_policy(self, a: Args) -> None:
        state = self.handle_state(a.handle)
        require(a.newValue in (1, 2, 3, 4, 5), f"{a.newValue} is not a miopenTuningPolicy_t")
        state.tuning_policy = a.newValue

    @api("miopenGetTuningPolicy")
    def _get_policy(self, a: Args) -> None:
        write_out(a.value, c_uint, self.handle_state(a.handle).tuning_policy, "value")


class _HipStatus(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class HipApi(DeviceBase):
    """The HIP runtime functions (``hip_*`` methods, keyed by the C name after ``hip_``)."""

    device_count: int
    gcn_arch_name: str
    total_memory: int

    def hip_functions(self) -> dict[str, object]:
        """C name -> Python callable returning a hipError_t (or the C result)."""
        out: dict[str, object] = {}
        for attr in dir(self):
            if attr.startswith("hip_hip"):
                out[attr[4:]] = getattr(self, attr)
        return out

    def _hip_stream(self, stream: object) -> None:
        key = addr(stream)
        if key and key not in self.handles.live("stream"):
            raise _HipStatus(HIP_INVALID_HANDLE, f"unknown stream {key:#x}")

    def _hip_check_device(self) -> None:
        if self.device_count < 1:
            raise _HipStatus(HIP_NO_DEVICE, "no ROCm-capable device is detected")

    # ------------------------------------------------------------------ versions, errors, devices
    def hip_hipGetErrorName(self, error: int) -> bytes:
        return HIP_ERRORS.get(error, "hipErrorUnknown").encode()

    def hip_hipGetErrorString(self, error: int) -> bytes:
        return HIP_ERRORS.get(error, "unknown error").encode()

    def hip_hipGetLastError(self) -> int:
        return HIP_SUCCESS

    def hip_hipRuntimeGetVersion(self, out: object) -> None:
        write_out(out, c_int, 70_226_015, "runtimeVersion")

    def hip_hipDriverGetVersion(self, out: object) -> None:
        write_out(out, c_int, 70_226_015, "driverVersion")

    def hip_hipGetDeviceCount(self, out: object) -> None:
        write_out(out, c_int, self.device_count, "count")
        self._hip_check_device()

    def hip_hipGetDevice(self, out: object) -> None:
        self._hip_check_device()
        write_out(out, c_int, 0, "deviceId")

    def hip_hipSetDevice(self, device: int) -> None:
        if not 0 <= device < self.device_count:
            raise _HipStatus(HIP_INVALID_DEVICE, f"device {device} of {self.device_count}")

    def hip_hipDeviceSynchronize(self) -> None:
        self._hip_check_device()

    def hip_hipDeviceGetName(self, name: object, length: int, device: int) -> None:
        self.hip_hipSetDevice(device)
        text = b"Emulated AMD Instinct (hipdnn-ctypes tests)"[: max(length - 1, 0)] + b"\0"
        ctypes.memmove(addr(name), text, len(text))

    def hip_hipDeviceGetAttribute(self, out: object, attr: int, device: int) -> None:
        self.hip_hipSetDevice(device)
        values = {5: 2_100_000, 19: 4 << 20, 23: 9, 61: 4, 63: 304, 74: 65536, 84: self.total_memory, 87: 64}
        write_out(out, c_int, min(values.get(attr, 0), 2**31 - 1), "pi")

    def hip_hipGetDevicePropertiesR0600(self, prop: object, device: int) -> None:
        self.hip_hipSetDevice(device)
        p = hipDeviceProp_t.from_address(addr(prop))
        ctypes.memset(addr(prop), 0, ctypes.sizeof(hipDeviceProp_t))
        p.name = b"Emulated AMD Instinct (hipdnn-ctypes tests)"
        p.gcnArchName = self.gcn_arch_name.encode()
        p.totalGlobalMem, p.warpSize, p.multiProcessorCount = self.total_memory, 64, 304
        p.major, p.minor = 9, 4

    def hip_hipMemGetInfo(self, free: object, total: object) -> None:
        write_out(total, c_size_t, self.total_memory, "total")
        write_out(free, c_size_t, max(self.total_memory - self.memory.bytes_in_use, 0), "free")

    # ------------------------------------------------------------------ memory
    def hip_hipMalloc(self, out: object, size: int) -> None:
        require_hip(addr(out), "ptr is NULL")
        if size == 0:
            write_out(out, c_void_p, None, "ptr")
            return
        if self.memory.bytes_in_use + size > self.total_memory:
            raise _HipStatus(HIP_OUT_OF_MEMORY, f"hipMalloc({size}) exceeds the emulated device memory")
        write_out(out, c_void_p, self.memory.alloc(size), "ptr")

    def hip_hipFree(self, ptr: int | None) -> None:
        if not ptr:
            return
        try:
            self.memory.free(ptr)
        except MemoryFault as exc:
            self.faults.append(str(exc))
            raise _HipStatus(HIP_INVALID_VALUE, str(exc)) from None

    def hip_hipHostMalloc(self, out: object, size: int, flags: int) -> None:
        raise _HipStatus(HIP_INVALID_VALUE, "pinned host memory is not emulated")

    def hip_hipHostFree(self, ptr: int | None) -> None:
        raise _HipStatus(HIP_INVALID_VALUE, "pinned host memory is not emulated")

    def hip_hipMemcpy(self, dst: int | None, src: int | None, size: int, kind: int) -> None:
        sides = {0: (False, False), 1: (True, False), 2: (False, True), 3: (True, True), 1024: (True, True)}
        if kind == 4:  # hipMemcpyDefault: unified addressing decides
            dst_dev, src_dev = self.memory.is_device(dst or 0), self.memory.is_device(src or 0)
        elif kind in sides:
            dst_dev, src_dev = sides[kind]
        else:
            raise _HipStatus(HIP_INVALID_VALUE, f"unknown hipMemcpyKind {kind}")
        try:
            self.memory.copy(dst or 0, src or 0, size, dst_dev, src_dev)
        except MemoryFault as exc:
            self.faults.append(str(exc))
            raise _HipStatus(HIP_INVALID_VALUE, str(exc)) from None

    def hip_hipMemcpyAsync(self, dst: int | None, src: int | None, size: int, kind: int, stream: object) -> None:
        self._hip_stream(stream)
        self.hip_hipMemcpy(dst, src, size, kind)

    def hip_hipMemset(self, dst: int | None, value: int, size: int) -> None:
        if size == 0:
            return
        try:
            self.memory.bytes(dst or 0, size, "hipMemset").fill(value & 0xFF)
        except MemoryFault as exc:
            self.faults.append(str(exc))
            raise _HipStatus(HIP_INVALID_VALUE, str(exc)) from None

    def hip_hipMemsetAsync(self, dst: int | None, value: int, size: int, stream: object) -> None:
        self._hip_stream(stream)
        self.hip_hipMemset(dst, value, size)

    def hip_hipPointerGetAttributes(self, attributes: object, ptr: int | None) -> None:
        require_hip(addr(attributes), "attributes is NULL")
        out = hipPointerAttribute_t.from_address(addr(attributes))
        ctypes.memset(addr(attributes), 0, ctypes.sizeof(hipPointerAttribute_t))
        if ptr and self.memory.is_device(ptr):
            out.type, out.device, out.devicePointer = 2, 0, ptr  # hipMemoryTypeDevice
        else:
            out.type, out.hostPointer = 0, ptr  # unregistered host memory (HIP >= 6: no error)

    # ------------------------------------------------------------------ streams and events
    def hip_hipStreamCreate(self, out: object) -> None:
        self._hip_check_device()
        write_out(out, c_void_p, self.handles.new("stream", object()), "stream")

    def hip_hipStreamCreateWithFlags(self, out: object, flags: int) -> None:
        self.hip_hipStreamCreate(out)

    def hip_hipStreamDestroy(self, stream: object) -> None:
        require_hip(addr(stream), "cannot destroy the NULL stream", HIP_INVALID_HANDLE)
        self._hip_stream(stream)
        self.handles.destroy("stream", addr(stream), "stream")

    def hip_hipStreamSynchronize(self, stream: object) -> None:
        self._hip_stream(stream)

    def hip_hipStreamWaitEvent(self, stream: object, event: object, flags: int) -> None:
        self._hip_stream(stream)
        self._hip_event(event)

    def _hip_event(self, event: object) -> list[bool]:
        key = addr(event)
        live = self.handles.live("event")
        if key not in live:
            raise _HipStatus(HIP_INVALID_HANDLE, f"unknown event {key:#x}")
        recorded: list[bool] = live[key]
        return recorded

    def hip_hipEventCreate(self, out: object) -> None:
        write_out(out, c_void_p, self.handles.new("event", [False]), "event")

    def hip_hipEventCreateWithFlags(self, out: object, flags: int) -> None:
        self.hip_hipEventCreate(out)

    def hip_hipEventDestroy(self, event: object) -> None:
        self._hip_event(event)
        self.handles.destroy("event", addr(event), "event")

    def hip_hipEventRecord(self, event: object, stream: object) -> None:
        self._hip_stream(stream)
        self._hip_event(event)[0] = True

    def hip_hipEventSynchronize(self, event: object) -> None:
        self._hip_event(event)

    def hip_hipEventElapsedTime(self, ms: object, start: object, stop: object) -> None:
        if not (self._hip_event(start)[0] and self._hip_event(stop)[0]):
            raise _HipStatus(600, "hipErrorNotReady: an event was never recorded")
        write_out(ms, c_float, self.kernel_time_ms, "ms")


def require_hip(condition: object, message: str, code: int = HIP_INVALID_VALUE) -> None:
    """Raise a HIP status unless ``condition`` holds."""
    if not condition:
        raise _HipStatus(code, message)


