"""Device memory, host-array staging, and the per-``hipdnn.Handle`` MIOpen handle.

Staging is a convenience for scripts and notebooks: a host (CPU) buffer in the variant pack is
copied to a ``hipMalloc`` block before the MIOpen calls, and outputs are copied back after them.
Only outputs are written back, and only when every call succeeded; the copy back is itself
staged (device to private host blocks, then host to the caller's buffers), so a failing
``hipMemcpy`` leaves every caller buffer untouched (never a partial result).
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import numpy as np

from hipdnn.core.errors import GraphStateError, VariantPackError, WorkspaceError
from hipdnn.core.types import DataType
from hipdnn.engines.miopen.descriptors import Owned
from hipdnn.engines.miopen.rules import Tensor
from hipdnn.engines.miopen.runtime import CHandle
from hipdnn.interop.buffers import Buffer
from miopen_ctypes.hip import HipLibrary
from miopen_ctypes.hip_types import hipMemcpyKind
from miopen_ctypes.loader import MIOpenLibrary
from miopen_ctypes.types import miopenHandle_t

__all__ = [
    "DeviceBlock",
    "MiopenHandleState",
    "Staging",
    "check_workspace",
    "copy",
    "scalar_value",
    "tensor_nbytes",
]

_H2D = hipMemcpyKind.hipMemcpyHostToDevice
_D2H = hipMemcpyKind.hipMemcpyDeviceToHost
_D2D = hipMemcpyKind.hipMemcpyDeviceToDevice


def tensor_nbytes(tensor: Tensor) -> int:
    """Bytes a (positive-stride) graph tensor spans."""

    span = 1 + sum((int(d) - 1) * int(s) for d, s in zip(tensor.dim, tensor.stride, strict=False))
    return span * DataType(tensor.data_type).itemsize


def _malloc(hip: HipLibrary, nbytes: int) -> int:
    ptr = ctypes.c_void_p()
    hip.hipMalloc(ctypes.byref(ptr), max(int(nbytes), 1))
    return int(ptr.value or 0)


def _free(hip: HipLibrary, ptr: int) -> None:
    try:
        hip.hipFree(ctypes.c_void_p(ptr))
    except Exception:
        pass


class DeviceBlock:
    """A ``hipMalloc`` block owned by a plan (scratch or staging); freed by close/finalizer."""

    def __init__(self, hip: HipLibrary, nbytes: int) -> None:
        self.nbytes = int(nbytes)
        self.ptr = _malloc(hip, nbytes)
        self._finalizer = weakref.finalize(self, _free, hip, self.ptr)
        self._finalizer.atexit = False

    def close(self) -> None:
        """hipFree now (idempotent)."""
        self._finalizer()


def copy(hip: HipLibrary, dst: int, src: int, nbytes: int, kind: int = _D2D) -> None:
    """hipMemcpy ``nbytes`` (device to device by default)."""
    hip.hipMemcpy(ctypes.c_void_p(dst), ctypes.c_void_p(src), int(nbytes), kind)


class Staging:
    """Turns variant-pack buffers into device pointers for one execute.

    ``pointer()`` passes device pointers (ints, GPU Buffers) straight through and stages host
    Buffers; ``commit()`` copies staged outputs back; ``close()`` frees every staged block.
    """

    def __init__(self, hip: HipLibrary, stream: int | None) -> None:
        self.hip, self.stream = hip, stream
        self._blocks: list[int] = []
        self._write_back: list[tuple[int, int, int]] = []  # (host ptr, device ptr, nbytes)

    def pointer(self, value: Buffer | int, tensor: Tensor, *, is_output: bool) -> int:
        """The device pointer for ``tensor``'s variant-pack value."""
        if isinstance(value, int):
            return value
        ptr = getattr(value, "ptr", None)
        if ptr is None:
            raise VariantPackError(f"tensor {tensor.name!r} (uid {tensor.uid}): value {value!r} "
                                   "is not a pointer or Buffer", tensor=tensor.name)
        if getattr(value, "device", "gpu") != "cpu":
            return int(ptr)
        nbytes = tensor_nbytes(tensor)
        dev = _malloc(self.hip, nbytes)
        self._blocks.append(dev)
        if is_output:
            self._write_back.append((int(ptr), dev, nbytes))
        else:
            copy(self.hip, dev, int(ptr), nbytes, _H2D)
        return dev

    def workspace(self, value: Buffer | int | None, size: int) -> int:
        """The workspace pointer (0 when ``size`` is 0); host workspaces get a device block."""
        if size == 0:
            return 0 if value is None else _ptr_of(value)
        check_workspace(value, size)
        assert value is not None  # check_workspace refuses None when size > 0
        if getattr(value, "device", "gpu") == "cpu":
            dev = _malloc(self.hip, size)
            self._blocks.append(dev)
            return dev
        return _ptr_of(value)

    def commit(self) -> None:
        """Copy staged outputs back to the host (after every MIOpen call succeeded): all of
        them or none. Each device block is first copied to a private host block; only when
        every ``hipMemcpy`` succeeded are the caller's buffers written (``memmove``, which
        cannot fail)."""
        if not self._write_back:
            return
        if self.stream:
            self.hip.hipStreamSynchronize(ctypes.c_void_p(self.stream))
        landed = []
        for host, dev, nbytes in self._write_back:
            block = np.empty(nbytes, np.uint8)
            copy(self.hip, block.ctypes.data, dev, nbytes, _D2H)
            landed.append((host, block))
        for host, block in landed:
            ctypes.memmove(host, block.ctypes.data, block.nbytes)

    def close(self) -> None:
        """hipFree every staged block."""
        while self._blocks:
            _free(self.hip, self._blocks.pop())


def _ptr_of(value: Buffer | int) -> int:
    return value if isinstance(value, int) else int(value.ptr)


def check_workspace(value: Buffer | int | None, size: int) -> None:
    """Raise :class:`WorkspaceError` before any call when the workspace is missing or too small."""
    if size == 0:
        return
    if value is None:
        raise WorkspaceError(f"this plan needs a workspace of {size} bytes; got None")
    nbytes = None if isinstance(value, int) else getattr(value, "nbytes", None)
    if nbytes is not None and nbytes < size:
        raise WorkspaceError(f"workspace of {nbytes} bytes is smaller than the plan's workspace "
                             f"size {size} bytes")


class MiopenHandleState:
    """The MIOpen handle of one hipdnn.Handle: created on ``device`` with ``stream``.

    Runs on it are counted while they make MIOpen calls (:meth:`enter` / :meth:`leave`, or
    :meth:`using`): :meth:`drain` (called by ``Handle.close()`` before anything is freed) marks
    it closed, so runs starting later are refused, and waits until the runs in flight have
    returned; only then does :meth:`close` destroy the MIOpen handle. ``_inflight`` holds one
    entry per run: ``list.append``/``pop`` are atomic, and a run appends before it reads
    ``closed`` while drain sets ``closed`` before it reads ``_inflight``, so either the run
    sees ``closed`` or drain sees the run.
    """

    def __init__(self, lib: MIOpenLibrary, hip: HipLibrary, device: int, stream: int | None) -> None:
        self.lib, self.hip, self.device = lib, hip, int(device)
        if hip is not None and "hipSetDevice" in hip.symbols:
            hip.hipSetDevice(self.device)
        handle = miopenHandle_t()
        if stream:
            lib.miopenCreateWithStream(ctypes.byref(handle), ctypes.c_void_p(stream))
        else:
            lib.miopenCreate(ctypes.byref(handle))
        self._owned = Owned(lib, handle, "miopenDestroy")
        self._owned.kind = "handle"
        self.stream = stream or None
        #: True once :meth:`drain` or :meth:`close` ran (runs check it after :meth:`enter`).
        self.closed = False
        self._inflight: list[None] = []
        self._drained = threading.Condition()

    @property
    def handle(self) -> CHandle:
        """The ``miopenHandle_t``."""
        return self._owned.handle

    @property
    def arch(self) -> str:
        """The device's ``gcnArchName`` without target features (``"gfx942"``; "" when the HIP
        runtime has no property call), read once per handle. A failing property call raises
        its HipError and is not remembered (the next read asks again): a guessed arch could
        choose another path than the device's own."""
        arch = getattr(self, "_arch", None)
        if arch is None:
            arch = ""
            if self.hip is not None and "hipGetDevicePropertiesR0600" in self.hip.symbols:
                arch = self.hip.gcn_arch_name(self.device)
            self._arch = arch
        return arch

    def set_stream(self, stream: int | None) -> None:
        """``miopenSetStream`` when the stream changed (idempotent)."""
        stream = stream or None
        if stream != self.stream:
            self.lib.miopenSetStream(self._owned.handle, ctypes.c_void_p(stream))
            self.stream = stream

    def synchronize(self) -> None:
        """Wait for the handle's stream (hipStreamSynchronize)."""
        if self.hip is not None and "hipStreamSynchronize" in self.hip.symbols:
            self.hip.hipStreamSynchronize(ctypes.c_void_p(self.stream))

    def enter(self) -> bool:
        """Count a run that is about to make MIOpen calls; False (nothing counted) when the
        handle is closed or closing. Every True is paired with one :meth:`leave`."""
        self._inflight.append(None)
        if self.closed:
            self.leave()
            return False
        return True

    def leave(self) -> None:
        """The run counted by :meth:`enter` returned."""
        self._inflight.pop()
        if self.closed:
            with self._drained:
                self._drained.notify_all()

    @contextmanager
    def using(self, what: str) -> Iterator[None]:
        """Count the block as a run; GraphStateError naming ``what`` when closed."""
        if not self.enter():
            raise GraphStateError(f"{what}: the MIOpen handle is closed (its hipdnn.Handle was "
                                  f"closed)")
        try:
            yield
        finally:
            self.leave()

    def drain(self) -> None:
        """Refuse new runs and wait until the runs in flight have returned (idempotent)."""
        self.closed = True
        with self._drained:
            while self._inflight:
                self._drained.wait(0.05)

    def close(self) -> None:
        """Wait for the runs in flight (:meth:`drain`), then miopenDestroy (idempotent)."""
        self.drain()
        self._owned.close()


def scalar_value(tensor: Tensor, buffers: Mapping[int, Buffer | int | float], what: str) -> float:
    """A pass-by-value scalar: the tensor's baked value, else the variant pack's."""
    baked = getattr(tensor, "value", None)
    if baked is not None:
        return float(baked)
    buf = buffers.get(tensor.uid)
    val = getattr(buf, "scalar", None) if buf is not None else None
    if val is None and isinstance(buf, (int, float)) and not isinstance(buf, bool):
        val = buf
    if val is None:
        raise VariantPackError(f"{what} (tensor {tensor.name!r}, uid {tensor.uid}) has no value: "
                               "give it when building the graph or in the variant pack",
                               tensor=tensor.name)
    return float(val)
