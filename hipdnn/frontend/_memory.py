"""Host memory in place of hipdnn_frontend's ``DeviceBuffer``, and upstream's pointer rules.

Upstream's ``DeviceBuffer(nbytes)`` is a ``hipMalloc`` block. Here it is host memory with the
same methods; ``ptr()`` is its host address. Variant packs given to the frontend graph may hold
those addresses as ints: the graph recognises an address inside a live DeviceBuffer and hands
the engine host memory of the tensor's size (checked against the buffer's end), so the CPU
reference engine reads it directly and MIOPEN_ENGINE stages it through ``hipMalloc``.

>>> import numpy as np
>>> buf = DeviceBuffer(8)
>>> buf.copy_from_host(np.arange(2, dtype=np.float32).tobytes())
>>> np.frombuffer(buf.copy_to_host(), np.float32).tolist(), buf.size()
([0.0, 1.0], 8)
"""

from __future__ import annotations

import bisect
import threading
import weakref
from typing import Any

import numpy as np

from hipdnn.core.errors import VariantPackError
from hipdnn.core.types import DataType
from hipdnn.interop import dlpack
from hipdnn.interop.dtypes import dlpack_to_dtype, numpy_to_dtype

__all__ = ["DeviceBuffer", "find_buffer", "get_data_ptr", "get_dtype_size", "tensor_metadata"]

_live: weakref.WeakValueDictionary[int, DeviceBuffer] = weakref.WeakValueDictionary()
_lock = threading.Lock()


class DeviceBuffer:
    """``nbytes`` of zero-filled host memory with upstream DeviceBuffer's methods."""

    def __init__(self, nbytes: int) -> None:
        if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)) or nbytes < 0:
            raise TypeError(f"DeviceBuffer(nbytes) takes a size >= 0 in bytes, got {nbytes!r}")
        self._array = np.zeros(max(int(nbytes), 1), np.uint8)  # a real address even for 0
        self._size = int(nbytes)
        with _lock:
            _live[self.ptr()] = self

    def ptr(self) -> int:
        """The buffer's address (host memory here)."""
        return int(self._array.ctypes.data)

    def size(self) -> int:
        """Size in bytes."""
        return self._size

    @property
    def nbytes(self) -> int:
        """Size in bytes (as numpy and torch spell it)."""
        return self._size

    def zeros(self) -> None:
        """Fill the buffer with zero bytes."""
        self._array[:] = 0

    def copy_from_host(self, data: bytes | bytearray | memoryview) -> None:
        """Copy exactly ``size()`` bytes in; any other length raises RuntimeError."""
        view = memoryview(data).cast("B")
        if view.nbytes != self._size:
            raise RuntimeError(f"copy_from_host: got {view.nbytes} bytes for a DeviceBuffer of "
                               f"{self._size} bytes; the sizes must match")
        self._array[: self._size] = np.frombuffer(view, np.uint8)

    def copy_to_host(self) -> bytes:
        """The buffer's ``size()`` bytes."""
        return self._array[: self._size].tobytes()

    def host_array(self) -> np.ndarray[Any, Any]:
        """The buffer's bytes as a writable uint8 array (no copy)."""
        return self._array[: self._size]

    def __repr__(self) -> str:
        return f"<hipdnn.frontend.DeviceBuffer {self._size} bytes at {self.ptr():#x} (host memory)>"


def find_buffer(address: int) -> tuple[DeviceBuffer, int] | None:
    """The live DeviceBuffer holding ``address`` and the offset in it, or None."""
    with _lock:
        exact = _live.get(address)
        if exact is not None:
            return exact, 0
        bases = sorted(_live.keys())
        i = bisect.bisect_right(bases, address) - 1
        if i >= 0:
            buf = _live.get(bases[i])
            if buf is not None and address - bases[i] < buf.size():
                return buf, address - bases[i]
    return None


def get_dtype_size(dtype: Any) -> int:
    """Bytes per element of a numpy dtype hipDNN supports (RuntimeError otherwise)."""

    try:
        numpy_to_dtype(dtype)
    except (VariantPackError, TypeError) as exc:
        raise RuntimeError(f"get_dtype_size: {exc}") from None
    return int(np.dtype(dtype).itemsize)


def _export(obj: Any, copy: bool | None) -> Any:
    """``obj.__dlpack__`` asking for a versioned capsule (and ``copy``), else the legacy call.
    Exceptions the producer raises reach the caller unchanged, as upstream."""
    kwargs: dict[str, Any] = {"max_version": dlpack.MAX_VERSION}
    if copy is not None:
        kwargs["copy"] = copy
    try:
        return obj.__dlpack__(**kwargs)
    except TypeError:  # a producer predating DLPack 1.0 takes no keywords
        return obj.__dlpack__()


def _consume(obj: Any, copy: bool | None) -> dlpack.DLPackExport:
    capsule = _export(obj, copy)
    try:
        return dlpack.consume(capsule)
    except dlpack.DLPackError as exc:
        raise ValueError(f"__dlpack__ of {type(obj).__name__} did not return a valid DLPack "
                         f"capsule: {exc}") from None


def get_data_ptr(obj: Any) -> int:
    """The device pointer a variant-pack value stands for, in upstream's order: an int (or
    numpy integer), a DeviceBuffer, an object with ``data_ptr()``, an object with
    ``__dlpack__`` (exported with ``copy=False``: a copy would dangle)."""
    if isinstance(obj, (bool, np.bool_)):
        raise TypeError("a bool is not a pointer; pass an int address or a buffer object")
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, DeviceBuffer):
        return obj.ptr()
    data_ptr = getattr(obj, "data_ptr", None)
    if callable(data_ptr):
        return int(data_ptr())
    if hasattr(obj, "__dlpack__"):
        return _consume(obj, copy=False).ptr
    raise TypeError(f"cannot take a pointer from {type(obj).__name__}: expected an int, a "
                    f"DeviceBuffer, an object with data_ptr(), or an object with __dlpack__")


def tensor_metadata(obj: Any) -> tuple[list[int], list[int], DataType, bool]:
    """(dims, element strides, data type, is host memory) of a ``__dlpack__`` producer."""
    if not hasattr(obj, "__dlpack__"):
        raise TypeError(f"tensor_like() takes a Tensor or an object with __dlpack__, got "
                        f"{type(obj).__name__}")

    info = _consume(obj, copy=None)
    try:
        if info.lanes != 1:
            raise ValueError(f"unsupported DLPack dtype: lanes={info.lanes} (packed "
                             f"sub-byte types are not supported; DLPack types need lanes=1)")
        try:
            dtype = dlpack_to_dtype(info.code, info.bits, info.lanes)
        except VariantPackError as exc:
            raise ValueError(f"unsupported DLPack dtype: {exc}") from None
        dims = list(info.shape)
        if info.strides is not None:
            strides = list(info.strides)
        else:
            strides, step = [0] * len(dims), 1
            for axis in range(len(dims) - 1, -1, -1):
                strides[axis] = step
                step *= max(dims[axis], 1)
        return dims, strides, dtype, info.device_type in dlpack.HOST_DEVICES
    finally:
        info.owner.release()
