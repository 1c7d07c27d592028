"""Bounds-checked flat memory for the emulator: device memory is host memory.

A :class:`Memory` knows the buffers a launch may touch (registered numpy arrays, or ranges a
``lookup`` callback reports, e.g. the stub HIP's allocation table). Every access outside them
raises :class:`MemoryFault` naming the address; nothing outside a known buffer is ever read or
written.
"""

from __future__ import annotations

import bisect
import ctypes
from collections.abc import Callable

import numpy as np

__all__ = ["Memory", "MemoryFault"]

Lookup = Callable[[int], "tuple[int, int] | None"]


class MemoryFault(RuntimeError):
    """An access outside every buffer the launch was given (or outside LDS)."""


class Memory:
    """Flat 64-bit address space made of known buffers.

    >>> mem = Memory()
    >>> buf = np.arange(4, dtype=np.uint32)
    >>> addr = mem.add(buf)
    >>> int(mem.read(addr + 4, 4).view(np.uint32)[0])
    1
    """

    def __init__(self, lookup: Lookup | None = None) -> None:
        self._bases: list[int] = []
        self._regions: list[tuple[int, int, np.ndarray]] = []
        self._lookup = lookup

    def add(self, array: np.ndarray) -> int:
        """Register a C-contiguous numpy array as a buffer; returns its address."""
        if not array.flags.c_contiguous:
            raise ValueError("buffers must be C-contiguous arrays")
        view = array.reshape(-1).view(np.uint8)
        self._insert(array.ctypes.data, view)
        return int(array.ctypes.data)

    def add_range(self, base: int, size: int) -> None:
        """Register ``size`` bytes of host memory at ``base`` (it must stay valid)."""
        view = np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(base))
        self._insert(base, view)

    def _insert(self, base: int, view: np.ndarray) -> None:
        i = bisect.bisect_left(self._bases, base)
        if i < len(self._bases) and self._bases[i] == base:
            self._regions[i] = (base, base + view.size, view)
            return
        self._bases.insert(i, base)
        self._regions.insert(i, (base, base + view.size, view))

    def _region(self, addr: int, nbytes: int) -> tuple[int, int, np.ndarray]:
        i = bisect.bisect_right(self._bases, addr) - 1
        if i >= 0:
            base, end, view = self._regions[i]
            if addr + nbytes <= end:
                return base, end, view
        if self._lookup is not None:
            found = self._lookup(addr)
            if found is not None and addr + nbytes <= found[0] + found[1]:
                self.add_range(*found)
                return self._region(addr, nbytes)
        raise MemoryFault(f"access of {nbytes} bytes at {addr:#x} is outside every buffer of the launch")

    def read(self, addr: int, nbytes: int) -> np.ndarray:
        """``nbytes`` bytes at ``addr`` (a copy)."""
        base, _end, view = self._region(addr, nbytes)
        return view[addr - base:addr - base + nbytes].copy()

    def _split(self, addrs: np.ndarray, nbytes: int) -> list[tuple[np.ndarray, int, np.ndarray]]:
        """Group lane addresses by buffer: [(lane indices, base, view)]."""
        lo, hi = int(addrs.min()), int(addrs.max())
        base, end, view = self._region(lo, nbytes)
        if hi + nbytes <= end:
            return [(np.arange(addrs.size), base, view)]
        out = []
        for lane in range(addrs.size):
            b, _e, v = self._region(int(addrs[lane]), nbytes)
            out.append((np.array([lane]), b, v))
        return out

    def gather(self, addrs: np.ndarray, nbytes: int) -> np.ndarray:
        """Per-address loads: uint8 array (len(addrs), nbytes)."""
        out = np.empty((addrs.size, nbytes), np.uint8)
        if addrs.size == 0:
            return out
        cols = np.arange(nbytes, dtype=np.int64)
        for lanes, base, view in self._split(addrs, nbytes):
            out[lanes] = view[(addrs[lanes].astype(np.int64) - base)[:, None] + cols]
        return out

    def scatter(self, addrs: np.ndarray, data: np.ndarray) -> None:
        """Per-address stores of the rows of ``data`` (uint8, (len(addrs), nbytes))."""
        if addrs.size == 0:
            return
        nbytes = data.shape[1]
        cols = np.arange(nbytes, dtype=np.int64)
        for lanes, base, view in self._split(addrs, nbytes):
            view[(addrs[lanes].astype(np.int64) - base)[:, None] + cols] = data[lanes]
