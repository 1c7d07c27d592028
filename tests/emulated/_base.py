"""State and helpers every part of the emulated device shares (handles, memory, argument checks)."""

from __future__ import annotations

from ctypes import c_float
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._core import BAD_PARM, Call, HandleTable, Status, addr, read_scalar, require
from ._memory import DeviceMemory, MemoryFault
from ._objects import ActivationDesc, ConvDesc, TensorDesc

__all__ = ["DeviceBase", "HandleState"]

_SCRIBBLE = 0xFF  # what the emulated kernels leave in the workspace part they use (NaN bytes)


@dataclass
class HandleState:
    """One miopenHandle_t: its stream and per-handle settings."""

    stream: int = 0
    profiling: bool = False
    kernel_time: float = 0.0
    tuning_policy: int = 1  # miopenTuningPolicyNone
    find1: dict[tuple[object, ...], dict[int, Any]] = field(default_factory=dict)
    allocator: tuple[int, int, int] | None = None


class DeviceBase:
    """Shared state: version, fake handles, device memory, call records and lookups."""

    version: tuple[int, int, int]

    def __init__(self) -> None:
        self.handles = HandleTable()
        self.memory = DeviceMemory()
        self.calls: list[Call] = []
        #: Memory faults the emulated kernels detected (each also returned a failing status).
        self.faults: list[str] = []
        #: Milliseconds every emulated kernel "takes" (miopenGetKernelTime, Find results scale).
        self.kernel_time_ms = 0.0123

    # ------------------------------------------------------------------ object lookups
    def handle_state(self, handle: object) -> HandleState:
        """The miopenHandle_t behind ``handle`` (BadParm when NULL/unknown/destroyed)."""
        return self.handles.get("handle", handle, "handle", HandleState)

    def tensor_desc(self, handle: object, name: str) -> TensorDesc:
        """The tensor descriptor behind ``handle``."""
        return self.handles.get("tensor", handle, name, TensorDesc)

    def set_tensor_desc(self, handle: object, name: str) -> TensorDesc:
        """Like ``tensor_desc`` but the descriptor must have been set (rank > 0)."""
        desc = self.tensor_desc(handle, name)
        require(desc.dims, f"{name}: tensor descriptor was never set")
        return desc

    def conv_desc(self, handle: object, name: str) -> ConvDesc:
        """The convolution descriptor behind ``handle``."""
        return self.handles.get("conv", handle, name, ConvDesc)

    def activation_desc(self, handle: object, name: str) -> ActivationDesc:
        """The activation descriptor behind ``handle``; it must have been set."""
        desc = self.handles.get("activation", handle, name, ActivationDesc)
        require(desc.mode is not None, f"{name}: activation descriptor was never set "
                                       "(the real library crashes reading it)")
        return desc

    # ------------------------------------------------------------------ device memory
    def view(self, desc: TensorDesc, ptr: object, what: str) -> np.ndarray:
        """A writable strided view of the tensor ``desc`` at device pointer ``ptr``."""
        where = addr(ptr)
        require(where, f"{what}: NULL device pointer")
        try:
            return self.memory.tensor(where, desc.np_dtype, desc.dims, desc.strides, what)
        except MemoryFault as exc:
            raise self.fault(str(exc)) from None

    def read(self, desc: TensorDesc, ptr: object, what: str) -> np.ndarray:
        """A float32 copy of the tensor at ``ptr``."""
        return self.view(desc, ptr, what).astype(np.float32)

    def store(self, desc: TensorDesc, ptr: object, values: np.ndarray, what: str) -> None:
        """Write ``values`` (any float dtype, desc's shape) into the tensor at ``ptr``."""
        out = self.view(desc, ptr, what)
        require(tuple(values.shape) == out.shape, f"{what}: result shape {values.shape} != {out.shape}")
        out[...] = np.asarray(values).astype(out.dtype)

    def fault(self, message: str) -> Status:
        """Record a memory fault; the returned status is what the call reports."""
        self.faults.append(message)
        return Status(7, f"memory fault: {message}")  # a GPU would crash; report UnknownError

    def use_workspace(self, ptr: object, size: int, required: int, what: str) -> None:
        """Check a workspace argument against ``required`` bytes, then scribble what is used."""
        require(size >= required, f"{what}: workspace size {size} < required {required}")
        where = addr(ptr)
        require(where or size == 0, f"{what}: workspace is NULL but its size is {size}")
        if required == 0:
            return
        try:
            self.memory.bytes(where, required, what).fill(_SCRIBBLE)
        except MemoryFault as exc:
            raise self.fault(str(exc)) from None

    def check_disjoint(self, spans: list[tuple[str, object, int]]) -> None:
        """Fault when two of the (name, pointer, bytes) buffers of one kernel overlap (no in-place)."""
        live = [(name, addr(ptr), n) for name, ptr, n in spans if addr(ptr) and n > 0]
        for i, (name_a, a, na) in enumerate(live):
            for name_b, b, nb in live[i + 1:]:
                if a < b + nb and b < a + na:
                    raise self.fault(f"{name_a} [{a:#x}, +{na}) overlaps {name_b} [{b:#x}, +{nb}): "
                                     "this kernel does not work in place")

    def check_buffer(self, ptr: object, nbytes: int, what: str) -> None:
        """Bounds-check a device buffer argument without touching it."""
        try:
            self.memory.check(addr(ptr), nbytes, what)
        except MemoryFault as exc:
            raise self.fault(str(exc)) from None

    # ------------------------------------------------------------------ scalars
    def check_alpha_beta(self, alpha: object, beta: object, what: str) -> None:
        """``*(const float*)alpha == 1`` and ``*(const float*)beta == 0``, as MIOpen demands."""
        a = read_scalar(alpha, c_float, f"{what} alpha")
        b = read_scalar(beta, c_float, f"{what} beta")
        if a != 1.0 or b != 0.0:
            raise Status(BAD_PARM, f"{what}: Only alpha=1 and beta=0 is supported (got {a}, {b})")
