"""Statistics kernels of the reference engine: genstats and reduction (float64 accumulation)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hipdnn.core.types import ReductionMode

__all__ = ["genstats", "reduce"]

_F64 = np.float64


def genstats(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel sum and sum of squares of logical (N, C, ...) ``x``, each (C,) float64.

    Channel 0 holds 0, 1, 4, 5 and channel 1 holds 2, 3, 6, 7:

    >>> s, q = genstats(np.arange(8, dtype=np.float32).reshape(2, 2, 2))
    >>> s.tolist(), q.tolist()
    ([10.0, 18.0], [42.0, 98.0])
    """
    xf = np.asarray(x, dtype=_F64)
    axes = tuple(a for a in range(xf.ndim) if a != 1)
    return xf.sum(axis=axes), np.square(xf).sum(axis=axes)


def reduce(x: np.ndarray, mode: ReductionMode, axes: Sequence[int]) -> np.ndarray:
    """Reduce ``x`` over ``axes`` (kept as size 1) with cudnn's reduction ``mode``; float64.

    >>> reduce(np.array([[1.0, -3.0], [2.0, 4.0]]), ReductionMode.AMAX, [1]).tolist()
    [[3.0], [4.0]]
    """
    xf = np.asarray(x, dtype=_F64)
    ax = tuple(axes)
    if mode == ReductionMode.ADD:
        return xf.sum(axis=ax, keepdims=True)
    if mode == ReductionMode.MUL:
        return xf.prod(axis=ax, keepdims=True)
    if mode == ReductionMode.MIN:
        return xf.min(axis=ax, keepdims=True) if xf.size else xf.sum(axis=ax, keepdims=True)
    if mode == ReductionMode.MAX:
        return xf.max(axis=ax, keepdims=True) if xf.size else xf.sum(axis=ax, keepdims=True)
    if mode == ReductionMode.AMAX:
        return np.abs(xf).max(axis=ax, keepdims=True) if xf.size else xf.sum(axis=ax,
                                                                             keepdims=True)
    if mode == ReductionMode.AVG:
        return xf.mean(axis=ax, keepdims=True)
    if mode == ReductionMode.NORM1:
        return np.abs(xf).sum(axis=ax, keepdims=True)
    if mode == ReductionMode.NORM2:
        return np.sqrt(np.square(xf).sum(axis=ax, keepdims=True))
    if mode == ReductionMode.MUL_NO_ZEROS:
        return np.where(xf == 0, 1.0, xf).prod(axis=ax, keepdims=True)
    raise ValueError(f"reduction mode {ReductionMode(mode).name} is not supported")
