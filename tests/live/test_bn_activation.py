"""Derived batchnorm descriptors and activation descriptors on the real library."""

from __future__ import annotations

import ctypes
import itertools
from typing import Any

import pytest
from live_util import get_tensor, objects

from hipdnn.core.shapes import LAYOUTS, packed_strides
from miopen_ctypes.enums import miopenActivationMode_t, miopenBatchNormMode_t, miopenDataType_t

SEED_DTYPES = [int(miopenDataType_t.miopenHalf), int(miopenDataType_t.miopenBFloat16), int(miopenDataType_t.miopenFloat)]
FLOAT = int(miopenDataType_t.miopenFloat)
DIMS = {4: (2, 3, 5, 7), 5: (2, 3, 4, 5, 6)}


@pytest.mark.parametrize(("dtype", "layout"), list(itertools.product(SEED_DTYPES, sorted(LAYOUTS))))
def test_derived_bn_spatial(lib: Any, dtype: int, layout: str) -> None:
    """Spatial mode: an fp32, packed [1, C, 1, 1(, 1)] descriptor whatever x's dtype and layout
    (the seed table's rule: FP16/BF16 tensors use FP32 scale, bias, mean and variance)."""
    dims = DIMS[len(LAYOUTS[layout])]
    param = (1, dims[1]) + (1,) * (len(dims) - 2)
    with objects(lib) as o:
        x = o.tensor(dtype, dims, packed_strides(dims, layout))
        derived = o.new("tensor")
        lib.miopenDeriveBNTensorDescriptor(derived, x, int(miopenBatchNormMode_t.miopenBNSpatial))
        assert get_tensor(lib, derived) == (FLOAT, param, packed_strides(param))


@pytest.mark.parametrize("rank", [4, 5])
def test_derived_bn_per_activation(lib: Any, rank: int) -> None:
    dims = DIMS[rank]
    param = (1, *dims[1:])
    with objects(lib) as o:
        x = o.tensor(int(miopenDataType_t.miopenHalf), dims)
        derived = o.new("tensor")
        lib.miopenDeriveBNTensorDescriptor(derived, x, int(miopenBatchNormMode_t.miopenBNPerActivation))
        assert get_tensor(lib, derived) == (FLOAT, param, packed_strides(param))


def _declared_modes(version: str) -> list[miopenActivationMode_t]:
    # CLAMP (10) is 3.5 only; 3.4 accepts the value without declaring it, so it is not tested there.
    return [m for m in miopenActivationMode_t if version == "7.2.4" or m.name != "miopenActivationCLAMP"]


def test_activation_round_trip(lib: Any, live_version: str) -> None:
    modes = _declared_modes(live_version)
    assert len(modes) == (11 if live_version == "7.2.4" else 10)
    with objects(lib) as o:
        desc = o.new("activation")
        for i, mode in enumerate(modes):
            params = (0.25 * i, 6.0 + i, -1.5)
            lib.miopenSetActivationDescriptor(desc, int(mode), *params)
            got_mode, a, b, g = ctypes.c_uint(), ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
            lib.miopenGetActivationDescriptor(desc, ctypes.byref(got_mode), ctypes.byref(a), ctypes.byref(b),
                                              ctypes.byref(g))
            assert (miopenActivationMode_t(got_mode.value), a.value, b.value, g.value) == (mode, *params)


def test_seed_relu_variants(lib: Any, live_version: str) -> None:
    """The seed table's activations: RELU, clipped RELU (upper clip in alpha), CLAMP on 3.5."""
    wanted = [("miopenActivationRELU", 0.0), ("miopenActivationCLIPPEDRELU", 6.0)]
    if live_version == "7.2.4":
        wanted.append(("miopenActivationCLAMP", 1.0))
    with objects(lib) as o:
        for name, alpha in wanted:
            desc = o.new("activation")
            lib.miopenSetActivationDescriptor(desc, int(miopenActivationMode_t[name]), alpha, 0.0, 0.0)
            got_mode, a, b, g = ctypes.c_uint(99), ctypes.c_double(-1), ctypes.c_double(-1), ctypes.c_double(-1)
            lib.miopenGetActivationDescriptor(desc, ctypes.byref(got_mode), ctypes.byref(a), ctypes.byref(b),
                                              ctypes.byref(g))
            assert (miopenActivationMode_t(got_mode.value).name, a.value, b.value, g.value) == (name, alpha, 0.0, 0.0)
