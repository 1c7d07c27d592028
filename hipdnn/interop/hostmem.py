"""Host memory as numpy: strided, writable views over a raw pointer, without copying."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["HostSpan", "element_span", "host_array"]


def element_span(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, int]:
    """Element range ``[lo, hi)`` covered by ``shape``/``strides``; ``(0, 0)`` when empty."""
    if any(int(d) == 0 for d in shape):
        return 0, 0
    lo = sum((int(d) - 1) * int(s) for d, s in zip(shape, strides, strict=True) if int(s) < 0)
    hi = sum((int(d) - 1) * int(s) for d, s in zip(shape, strides, strict=True) if int(s) > 0)
    return lo, hi + 1


class HostSpan:
    """Exposes raw host memory through ``__array_interface__``; numpy keeps it as the base."""

    def __init__(
        self, ptr: int, shape: tuple[int, ...], byte_strides: tuple[int, ...],
        typestr: str, readonly: bool, owner: object,
    ) -> None:
        self.owner = owner  # keeps the memory's owner alive as long as any view exists
        self.__array_interface__ = {
            "version": 3,
            "data": (ptr, readonly),
            "shape": shape,
            "strides": byte_strides,
            "typestr": typestr,
        }


def host_array(
    ptr: int, shape: Sequence[int], strides: Sequence[int], np_dtype: np.dtype[Any],
    owner: object, readonly: bool = False,
) -> np.ndarray[Any, Any]:
    """Strided numpy view of host memory at ``ptr`` (strides in elements), no copy."""
    shape_t = tuple(int(d) for d in shape)
    if any(d == 0 for d in shape_t):
        return np.empty(shape_t, np_dtype)
    # Extension dtypes (bfloat16, fp8) have typestr "<V2": map as same-size uints, then view.
    raw = np_dtype if np_dtype.kind != "V" else np.dtype(f"u{np_dtype.itemsize}")
    byte_strides = tuple(int(s) * np_dtype.itemsize for s in strides)
    arr = np.asarray(HostSpan(ptr, shape_t, byte_strides, raw.str, readonly, owner))
    return arr if raw == np_dtype else arr.view(np_dtype)
