"""Tensor descriptors on the real library: every dtype x the four seed layouts, sizes, byte counts."""

from __future__ import annotations

import ctypes
import itertools
from typing import Any

import pytest
from live_util import ELEMENT_BYTES, get_tensor, int_array, objects

from hipdnn.core.shapes import LAYOUTS, packed_strides
from miopen_ctypes.enums import miopenDataType_t, miopenTensorLayout_t

DIMS = {4: (2, 3, 5, 7), 5: (2, 3, 4, 5, 6)}
DTYPES = sorted({int(v) for v in miopenDataType_t})  # aliases (3.4 fp8 names) collapse
LAYOUT_ENUM = {name: getattr(miopenTensorLayout_t, f"miopenTensor{name}") for name in LAYOUTS}


def _span(dims: tuple[int, ...], strides: tuple[int, ...]) -> int:
    return 1 + sum((d - 1) * s for d, s in zip(dims, strides, strict=True))


@pytest.mark.parametrize(("dtype", "layout"), list(itertools.product(DTYPES, sorted(LAYOUTS))))
def test_set_get_round_trip(lib: Any, dtype: int, layout: str) -> None:
    dims = DIMS[len(LAYOUTS[layout])]
    strides = packed_strides(dims, layout)
    with objects(lib) as o:
        desc = o.tensor(dtype, dims, strides)
        assert get_tensor(lib, desc) == (dtype, dims, strides)
        nbytes = ctypes.c_size_t()
        lib.miopenGetTensorNumBytes(desc, ctypes.byref(nbytes))
        assert nbytes.value == _span(dims, strides) * ELEMENT_BYTES[dtype]


@pytest.mark.parametrize(("dtype", "layout"), list(itertools.product(DTYPES, sorted(LAYOUTS))))
def test_set_with_layout_enum(lib: Any, dtype: int, layout: str) -> None:
    """miopenSetNdTensorDescriptorWithLayout takes the *logical* N,C,(D),H,W lens (not in layout
    order) and stores that layout's packed strides (observed on 3.4 and 3.5)."""
    logical = DIMS[len(LAYOUTS[layout])]
    lens = list(logical)
    with objects(lib) as o:
        desc = o.new("tensor")
        lib.miopenSetNdTensorDescriptorWithLayout(desc, dtype, int(LAYOUT_ENUM[layout]), int_array(lens), len(lens))
        assert get_tensor(lib, desc) == (dtype, logical, packed_strides(logical, layout))


@pytest.mark.parametrize("dtype", DTYPES)
def test_4d_ex_and_get4d(lib: Any, dtype: int) -> None:
    dims, strides = (2, 3, 5, 7), packed_strides((2, 3, 5, 7), "NHWC")
    with objects(lib) as o:
        desc = o.new("tensor")
        lib.miopenSet4dTensorDescriptorEx(desc, dtype, *dims, *strides)
        out = [ctypes.c_int() for _ in range(8)]
        dt = ctypes.c_uint()
        lib.miopenGet4dTensorDescriptor(desc, ctypes.byref(dt), *(ctypes.byref(v) for v in out))
        assert (dt.value, tuple(v.value for v in out)) == (dtype, dims + strides)


def test_strided_non_packed(lib: Any) -> None:
    dims, strides = (2, 3, 4, 5), (200, 60, 15, 3)  # padded rows, every third element
    with objects(lib) as o:
        desc = o.tensor(int(miopenDataType_t.miopenFloat), dims, strides)
        assert get_tensor(lib, desc)[1:] == (dims, strides)
        nbytes = ctypes.c_size_t()
        lib.miopenGetTensorNumBytes(desc, ctypes.byref(nbytes))
        assert nbytes.value == _span(dims, strides) * 4


def test_default_strides_are_packed_nchw(lib: Any) -> None:
    with objects(lib) as o:
        for dims in DIMS.values():
            desc = o.tensor(int(miopenDataType_t.miopenHalf), dims)
            assert get_tensor(lib, desc) == (int(miopenDataType_t.miopenHalf), dims, packed_strides(dims))
