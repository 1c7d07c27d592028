"""Small helpers for the live tests: create real MIOpen objects and always destroy them."""

from __future__ import annotations

import ctypes
import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

from hipdnn.core.shapes import conv_output_dims
from miopen_ctypes import types as mt

__all__ = ["ELEMENT_BYTES", "Objects", "conv_configs", "get_tensor", "int_array", "objects"]

#: Bytes per element of every miopenDataType_t value both versions accept.
ELEMENT_BYTES = {0: 2, 1: 4, 2: 4, 3: 1, 5: 2, 6: 8, 7: 1, 8: 1, 9: 8}


def int_array(values: Sequence[int]) -> Any:
    """``int[]`` holding ``values``."""
    return (ctypes.c_int * len(values))(*values)


class Objects:
    """Creates MIOpen objects through the binding and destroys them (reverse order) on exit."""

    _KINDS: ClassVar[dict[str, tuple[Any, str, str]]] = {
        "tensor": (mt.miopenTensorDescriptor_t, "miopenCreateTensorDescriptor", "miopenDestroyTensorDescriptor"),
        "conv": (mt.miopenConvolutionDescriptor_t, "miopenCreateConvolutionDescriptor",
                 "miopenDestroyConvolutionDescriptor"),
        "activation": (mt.miopenActivationDescriptor_t, "miopenCreateActivationDescriptor",
                       "miopenDestroyActivationDescriptor"),
        "args": (mt.miopenOperatorArgs_t, "miopenCreateOperatorArgs", "miopenDestroyOperatorArgs"),
        "options": (mt.miopenFindOptions_t, "miopenCreateFindOptions", "miopenDestroyFindOptions"),
    }

    def __init__(self, lib: Any) -> None:
        self.lib = lib
        self._owned: list[tuple[str, Any]] = []

    def new(self, kind: str) -> Any:
        """A fresh object of ``kind`` (see _KINDS)."""
        ctype, create, destroy = self._KINDS[kind]
        handle = ctype()
        getattr(self.lib, create)(ctypes.byref(handle))
        assert handle, f"{create} returned success but a NULL handle"
        self._owned.append((destroy, handle))
        return handle

    def own(self, destroy: str, handle: Any) -> Any:
        """Register an object created elsewhere (plans, problems) for destruction."""
        self._owned.append((destroy, handle))
        return handle

    def tensor(self, dtype: int, dims: Sequence[int], strides: Sequence[int] | None = None) -> Any:
        """A tensor descriptor set with ``miopenSetTensorDescriptor`` (packed when no strides)."""
        desc = self.new("tensor")
        self.lib.miopenSetTensorDescriptor(desc, int(dtype), len(dims), int_array(dims),
                                           None if strides is None else int_array(strides))
        return desc

    def close(self) -> None:
        """Destroy everything, newest first."""
        while self._owned:
            destroy, handle = self._owned.pop()
            getattr(self.lib, destroy)(handle)


@contextmanager
def objects(lib: Any) -> Iterator[Objects]:
    """``with objects(lib) as o: d = o.tensor(...)`` -- destroyed at exit, failures or not."""
    owner = Objects(lib)
    try:
        yield owner
    finally:
        owner.close()


def get_tensor(lib: Any, desc: Any) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """(dtype, dims, strides) read back with miopenGetTensorDescriptorSize + miopenGetTensorDescriptor."""
    size = ctypes.c_int()
    lib.miopenGetTensorDescriptorSize(desc, ctypes.byref(size))
    dtype = ctypes.c_uint()
    dims = (ctypes.c_int * size.value)()
    strides = (ctypes.c_int * size.value)()
    lib.miopenGetTensorDescriptor(desc, ctypes.byref(dtype), dims, strides)
    return dtype.value, tuple(dims), tuple(strides)


def _conv_config(rng: random.Random, spatial: int) -> dict[str, Any]:
    """A random valid forward conv: every output spatial size >= 1 (per hipdnn.core.shapes)."""
    while True:
        groups = rng.choice([1, 1, 2, 3, 4])
        c, k = groups * rng.randint(1, 3), groups * rng.randint(1, 3)
        size = [rng.randint(1, 12 if spatial == 3 else 20) for _ in range(spatial)]
        kernel = [rng.randint(1, 5) for _ in range(spatial)]
        pad = [rng.randint(0, 3) for _ in range(spatial)]
        stride = [rng.randint(1, 4) for _ in range(spatial)]
        dil = [rng.randint(1, 3) for _ in range(spatial)]
        x = [rng.randint(1, 3), c, *size]
        w = [k, c // groups, *kernel]
        out = conv_output_dims(x, w, pad, pad, stride, dil)
        if min(out[2:]) >= 1:
            return {"x": x, "w": w, "pad": pad, "stride": stride, "dil": dil, "groups": groups, "out": out}


def conv_configs(count: int) -> list[dict[str, Any]]:
    """``count`` reproducible random configs, alternating 2-D and 3-D."""
    return [_conv_config(random.Random(seed), 2 + seed % 2) for seed in range(count)]
