"""Scratch buffers the reference kernels reuse between calls.

A fresh large array costs a page fault per page the first time it is written: the 58 MB im2col
columns of a 3x3 convolution over 8x64x56x56 took 6.9 ms to fault on the 2-core development
machine, against 2.9 ms to copy into already-faulted memory, and page faults scale poorly over
threads. So the convolution's columns and the batchnorm's block scratch are taken from here and
given back; at most :data:`KEEP` bytes stay between calls (the largest buffers). Thread-safe:
concurrent callers never get the same buffer.

>>> a, = take(1, 10)
>>> a.dtype.name, a.size >= 10
('float32', True)
>>> give([a])
"""

from __future__ import annotations

import threading

import numpy as np
from numpy.typing import DTypeLike

__all__ = ["KEEP", "give", "take"]

#: Bytes of free buffers kept between calls (the largest first).
KEEP = 1 << 26
_FREE: list[np.ndarray] = []  # free uint8 buffers, largest first
_LOCK = threading.Lock()


def take(count: int, size: int, dtype: DTypeLike = np.float32) -> list[np.ndarray]:
    """``count`` 1-D ``dtype`` arrays of exactly ``size`` elements, on free buffers where one is
    large enough (the smallest that fits), else new. Give them back with :func:`give`."""
    dt = np.dtype(dtype)
    nbytes = size * dt.itemsize
    with _LOCK:
        picks = sorted((i for i, b in enumerate(_FREE) if b.size >= nbytes),
                       key=lambda i: _FREE[i].size)[:count]
        fit = [_FREE[i] for i in picks]
        for i in sorted(picks, reverse=True):
            del _FREE[i]
    fit += [np.empty(nbytes, dtype=np.uint8) for _ in range(count - len(fit))]
    return [b[:nbytes].view(dt) for b in fit]


def give(arrays: list[np.ndarray]) -> None:
    """Return arrays from :func:`take` (nothing else may still use them); keeps at most
    :data:`KEEP` bytes of buffers."""
    with _LOCK:
        for a in arrays:
            base = a.base if isinstance(a.base, np.ndarray) else a
            if base.dtype == np.uint8 and base.ndim == 1 and not any(base is b for b in _FREE):
                _FREE.append(base)
        _FREE.sort(key=lambda b: -b.size)
        total = 0
        for i, b in enumerate(_FREE):
            total += b.nbytes
            if total > KEEP:
                del _FREE[i:]
                break
