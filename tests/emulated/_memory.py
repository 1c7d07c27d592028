"""Device memory of the emulated device: host numpy buffers behind real addresses, bounds-checked.

A device pointer is the address of a numpy byte buffer the device keeps alive in its allocation
table, so copies are plain ``memmove``s, yet every span the emulated kernels touch is checked
against the table first: an access outside an allocation becomes a status, never a segfault.
"""

from __future__ import annotations

import bisect
import ctypes
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ALIGNMENT", "DeviceMemory", "MemoryFault"]

ALIGNMENT = 256  # what hipMalloc guarantees
_GARBAGE = 0xFF  # fresh allocations read as NaN in every float format, like uninitialised memory


class MemoryFault(Exception):
    """An access (pointer + span) that is not inside one live allocation."""


@dataclass
class _Allocation:
    base: int
    nbytes: int
    storage: np.ndarray  # keeps the buffer alive; base is an aligned address inside it
    view: np.ndarray  # uint8[nbytes] starting at base


class DeviceMemory:
    """Allocation table: ``alloc``/``free`` and bounds-checked views of device memory.

    Thread-safe, as a HIP runtime is: the table is changed and searched under one lock (a
    lookup bisecting ``_bases`` while another thread's free shifts it found the wrong block)."""

    def __init__(self) -> None:
        self._allocs: dict[int, _Allocation] = {}
        self._bases: list[int] = []
        self.bytes_in_use = 0
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ allocation
    def alloc(self, nbytes: int) -> int:
        """A fresh ``ALIGNMENT``-aligned allocation of ``nbytes`` (>0), filled with garbage."""
        if nbytes <= 0:
            raise ValueError(f"allocation size must be > 0, got {nbytes}")
        storage = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
        raw = storage.ctypes.data
        offset = (-raw) % ALIGNMENT
        view = storage[offset : offset + nbytes]
        view.fill(_GARBAGE)
        base = raw + offset
        with self._lock:
            self._allocs[base] = _Allocation(base, nbytes, storage, view)
            bisect.insort(self._bases, base)
            self.bytes_in_use += nbytes
        return base

    def free(self, base: int) -> None:
        """Release the allocation starting at ``base``; anything else is a fault."""
        with self._lock:
            alloc = self._allocs.pop(base, None)
            if alloc is None:
                raise MemoryFault(f"free of {base:#x}, which is not the start of a live allocation")
            self._bases.remove(base)
            self.bytes_in_use -= alloc.nbytes

    def live(self) -> dict[int, int]:
        """Live allocations: base -> size in bytes."""
        with self._lock:
            return {a.base: a.nbytes for a in self._allocs.values()}

    # ------------------------------------------------------------------ lookups
    def _owner(self, ptr: int) -> _Allocation | None:
        with self._lock:
            i = bisect.bisect_right(self._bases, ptr) - 1
            if i < 0:
                return None
            alloc = self._allocs[self._bases[i]]
        return alloc if ptr < alloc.base + alloc.nbytes else None

    def is_device(self, ptr: int) -> bool:
        """True when ``ptr`` points into a live allocation."""
        return ptr != 0 and self._owner(ptr) is not None

    def check(self, ptr: int, nbytes: int, what: str) -> None:
        """Fault unless ``[ptr, ptr + nbytes)`` lies inside one live allocation."""
        if ptr == 0:
            raise MemoryFault(f"{what}: NULL device pointer")
        alloc = self._owner(ptr)
        if alloc is None:
            raise MemoryFault(f"{what}: {ptr:#x} is not device memory of this device")
        end = alloc.base + alloc.nbytes
        if ptr + nbytes > end:
            raise MemoryFault(
                f"{what}: {nbytes} bytes at {ptr:#x} overrun the allocation "
                f"[{alloc.base:#x}, {end:#x}) by {ptr + nbytes - end} bytes"
            )

    def bytes(self, ptr: int, nbytes: int, what: str) -> np.ndarray:
        """A writable ``uint8[nbytes]`` view of device memory at ``ptr`` (bounds-checked)."""
        self.check(ptr, nbytes, what)
        alloc = self._owner(ptr)
        assert alloc is not None
        start = ptr - alloc.base
        return alloc.view[start : start + nbytes]

    def tensor(
        self,
        ptr: int,
        dtype: np.dtype,
        dims: Sequence[int],
        strides: Sequence[int],
        what: str,
    ) -> np.ndarray:
        """A writable strided view (strides in elements, all > 0) of device memory at ``ptr``."""
        itemsize = dtype.itemsize
        span = (1 + sum((int(d) - 1) * int(s) for d, s in zip(dims, strides, strict=True))) * itemsize
        raw = self.bytes(ptr, span, what)
        return np.lib.stride_tricks.as_strided(
            raw.view(dtype),
            shape=tuple(int(d) for d in dims),
            strides=tuple(int(s) * itemsize for s in strides),
        )

    # ------------------------------------------------------------------ copies
    def copy(self, dst: int, src: int, nbytes: int, dst_device: bool, src_device: bool) -> None:
        """``memcpy`` with the device side(s) bounds-checked (host pointers are trusted)."""
        if nbytes == 0:
            return
        if dst_device:
            self.check(dst, nbytes, "memcpy destination")
        elif self.is_device(dst):
            raise MemoryFault(f"memcpy destination {dst:#x} is device memory, but the kind says host")
        if src_device:
            self.check(src, nbytes, "memcpy source")
        elif self.is_device(src):
            raise MemoryFault(f"memcpy source {src:#x} is device memory, but the kind says host")
        if not dst or not src:
            raise MemoryFault("memcpy with a NULL host pointer")
        ctypes.memmove(dst, src, nbytes)
