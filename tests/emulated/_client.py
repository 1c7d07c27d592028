"""A thin test client over a bound MIOpen library (real or emulated): the same calls on both.

Used by the device's own tests and by tests/live/test_emulated_crosscheck.py, which runs each
operation on the real libMIOpen and on the emulated device and compares the answers. Results are
plain tuples; a failing status comes back as ``Failed(status)`` so both sides compare equal.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from miopen_ctypes.errors import MIOpenStatusError
from miopen_ctypes.types import (
    miopenActivationDescriptor_t,
    miopenConvolutionDescriptor_t,
    miopenHandle_t,
    miopenTensorDescriptor_t,
)

__all__ = ["Client", "Failed"]


@dataclass(frozen=True)
class Failed:
    """A call that returned a non-success status."""

    status: int


def _ints(values: Sequence[int], ctype: Any = ctypes.c_int) -> Any:
    return (ctype * max(len(values), 1))(*values)


class Client:
    """Descriptor-level helpers; every created object is destroyed by ``close()``."""

    def __init__(self, lib: Any) -> None:
        self.lib = lib
        self._cleanup: list[Callable[[], None]] = []

    def close(self) -> None:
        """Destroy everything this client created (in reverse order)."""
        while self._cleanup:
            self._cleanup.pop()()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def attempt(fn: Callable[[], Any]) -> Any:
        """``fn()``, or ``Failed(status)`` when it raised the binding's status error."""
        try:
            return fn()
        except MIOpenStatusError as exc:
            return Failed(exc.status)

    # ------------------------------------------------------------------ objects
    def handle(self) -> Any:
        """miopenCreate."""
        h = miopenHandle_t()
        self.lib.miopenCreate(ctypes.byref(h))
        self._cleanup.append(lambda: self.lib.miopenDestroy(h))
        return h

    def new_tensor(self) -> Any:
        """miopenCreateTensorDescriptor (unset)."""
        d = miopenTensorDescriptor_t()
        self.lib.miopenCreateTensorDescriptor(ctypes.byref(d))
        self._cleanup.append(lambda: self.lib.miopenDestroyTensorDescriptor(d))
        return d

    def tensor(self, dtype: int, dims: Sequence[int], strides: Sequence[int] | None = None) -> Any:
        """A descriptor set with miopenSetTensorDescriptor (NULL strides = packed)."""
        d = self.new_tensor()
        self.lib.miopenSetTensorDescriptor(d, dtype, len(dims), _ints(dims), _ints(strides) if strides else None)
        return d

    def tensor_layout(self, dtype: int, layout: int, lens: Sequence[int]) -> Any:
        """A descriptor set with miopenSetNdTensorDescriptorWithLayout."""
        d = self.new_tensor()
        self.lib.miopenSetNdTensorDescriptorWithLayout(d, dtype, layout, _ints(lens), len(lens))
        return d

    def tensor_v2(self, dtype: int, dims: Sequence[int], strides: Sequence[int] | None = None) -> Any:
        """A descriptor set with miopenSetTensorDescriptorV2 (size_t arrays)."""
        d = self.new_tensor()
        self.lib.miopenSetTensorDescriptorV2(d, dtype, len(dims), _ints(dims, ctypes.c_size_t),
                                             _ints(strides, ctypes.c_size_t) if strides else None)
        return d

    def tensor_4d(self, dtype: int, n: int, c: int, h: int, w: int) -> Any:
        """A descriptor set with miopenSet4dTensorDescriptor."""
        d = self.new_tensor()
        self.lib.miopenSet4dTensorDescriptor(d, dtype, n, c, h, w)
        return d

    def describe(self, d: Any) -> tuple[int, int, tuple[int, ...], tuple[int, ...], int]:
        """(GetTensorDescriptorSize, dtype, dims, strides, GetTensorNumBytes)."""
        n = ctypes.c_int(-1)
        self.lib.miopenGetTensorDescriptorSize(d, ctypes.byref(n))
        dtype = ctypes.c_uint(99)
        dims, strides = (ctypes.c_int * 8)(), (ctypes.c_int * 8)()
        self.lib.miopenGetTensorDescriptor(d, ctypes.byref(dtype), dims, strides)
        nbytes = ctypes.c_size_t()
        self.lib.miopenGetTensorNumBytes(d, ctypes.byref(nbytes))
        k = max(n.value, 0)
        return n.value, dtype.value, tuple(dims[:k]), tuple(strides[:k]), nbytes.value

    def get_4d(self, d: Any) -> tuple[int, ...]:
        """miopenGet4dTensorDescriptor: (dtype, n, c, h, w, nS, cS, hS, wS)."""
        out = [ctypes.c_uint()] + [ctypes.c_int() for _ in range(8)]
        self.lib.miopenGet4dTensorDescriptor(d, *(ctypes.byref(v) for v in out))
        return tuple(v.value for v in out)

    def conv(self, pads: Sequence[int], strides: Sequence[int], dilations: Sequence[int],
             mode: int = 0, groups: int | None = None) -> Any:
        """miopenInitConvolutionNdDescriptor (+ miopenSetConvolutionGroupCount)."""
        c = miopenConvolutionDescriptor_t()
        self.lib.miopenCreateConvolutionDescriptor(ctypes.byref(c))
        self._cleanup.append(lambda: self.lib.miopenDestroyConvolutionDescriptor(c))
        self.lib.miopenInitConvolutionNdDescriptor(c, len(pads), _ints(pads), _ints(strides), _ints(dilations), mode)
        if groups is not None:
            self.lib.miopenSetConvolutionGroupCount(c, groups)
        return c

    def conv_out(self, c: Any, x: Any, w: Any) -> tuple[int, ...]:
        """miopenGetConvolutionNdForwardOutputDim."""
        n = ctypes.c_int(-1)
        dims = (ctypes.c_int * 8)()
        self.lib.miopenGetConvolutionNdForwardOutputDim(c, x, w, ctypes.byref(n), dims)
        return tuple(dims[: n.value])

    def conv_settings(self, c: Any) -> tuple[Any, ...]:
        """(spatial dim, pads, strides, dilations, mode, groups, find mode, attributes 0..2)."""
        sd = ctypes.c_int()
        self.lib.miopenGetConvolutionSpatialDim(c, ctypes.byref(sd))
        p, s, d = (ctypes.c_int * 8)(), (ctypes.c_int * 8)(), (ctypes.c_int * 8)()
        mode, got = ctypes.c_uint(), ctypes.c_int()
        self.lib.miopenGetConvolutionNdDescriptor(c, sd.value, ctypes.byref(got), p, s, d, ctypes.byref(mode))
        g, fm = ctypes.c_int(), ctypes.c_uint()
        self.lib.miopenGetConvolutionGroupCount(c, ctypes.byref(g))
        self.lib.miopenGetConvolutionFindMode(c, ctypes.byref(fm))
        attrs: list[Any] = []
        for attr in range(3):
            attrs.append(self.attempt(functools.partial(self._conv_attribute, c, attr)))
        k = sd.value
        return (k, tuple(p[:k]), tuple(s[:k]), tuple(d[:k]), mode.value, g.value, fm.value, tuple(attrs))

    def _conv_attribute(self, c: Any, attr: int) -> int:
        value = ctypes.c_int()
        self.lib.miopenGetConvolutionAttribute(c, attr, ctypes.byref(value))
        return value.value

    def derive_bn(self, x: Any, mode: int) -> Any:
        """miopenDeriveBNTensorDescriptor into a new descriptor."""
        d = self.new_tensor()
        self.lib.miopenDeriveBNTensorDescriptor(d, x, mode)
        return d

    def activation(self, mode: int, alpha: float, beta: float, gamma: float) -> Any:
        """A set activation descriptor."""
        a = miopenActivationDescriptor_t()
        self.lib.miopenCreateActivationDescriptor(ctypes.byref(a))
        self._cleanup.append(lambda: self.lib.miopenDestroyActivationDescriptor(a))
        self.lib.miopenSetActivationDescriptor(a, mode, alpha, beta, gamma)
        return a

    def get_activation(self, a: Any) -> tuple[int, float, float, float]:
        """miopenGetActivationDescriptor."""
        mode = ctypes.c_uint()
        vals = [ctypes.c_double() for _ in range(3)]
        self.lib.miopenGetActivationDescriptor(a, ctypes.byref(mode), *(ctypes.byref(v) for v in vals))
        return (mode.value, vals[0].value, vals[1].value, vals[2].value)
