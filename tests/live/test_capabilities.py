"""Version and capability detection through the project's loader (HIPDNN_MIOPEN_LIBRARY)."""

from __future__ import annotations

import ctypes
import os
from typing import Any

import pytest
from live_util import int_array, objects

import miopen_ctypes
from miopen_ctypes import types as mt
from miopen_ctypes.errors import MIOpenBadParmError, MIOpenVersionError


def test_loader_took_the_env_override(lib: Any, live_library_path: str) -> None:
    assert lib.path is not None
    assert os.path.realpath(lib.path) == os.path.realpath(live_library_path)


def test_version(lib: Any, expected_api: tuple[int, int, int]) -> None:
    assert lib.capabilities.version == expected_api
    assert lib.capabilities.version_string == ".".join(map(str, expected_api))


def test_every_declared_symbol_present_and_later_ones_absent(lib: Any, expected_api: tuple[int, int, int]) -> None:
    declared = {n for n, p in miopen_ctypes.PROTOTYPES.items() if tuple(p.since) <= expected_api}
    later = set(miopen_ctypes.PROTOTYPES) - declared
    caps = lib.capabilities
    assert sorted(declared - caps.symbols) == []
    assert sorted(later & caps.symbols) == []
    assert all(caps.has(n) for n in declared)
    assert caps.missing == frozenset(later)


def test_3_5_features(lib: Any, expected_api: tuple[int, int, int]) -> None:
    caps = lib.capabilities
    is_35 = expected_api >= (3, 5, 0)
    assert caps.bn_activation is is_35
    assert caps.execute_fusion_plan_v2 is is_35
    assert caps.tuning_policy is is_35
    later = sorted(n for n, p in miopen_ctypes.PROTOTYPES.items() if tuple(p.since) > expected_api)
    assert bool(later) is not is_35, later


def test_missing_function_raises_version_error(lib: Any, expected_api: tuple[int, int, int]) -> None:
    if expected_api >= (3, 5, 0):
        handle = mt.miopenHandle_t()
        # present: a NULL handle is refused in Python before reaching C
        with pytest.raises(miopen_ctypes.NullArgumentError, match="handle"):
            lib.miopenSetTuningPolicy(handle, 0)
        return
    with pytest.raises(MIOpenVersionError, match=r"requires MIOpen >= 3\.5\.0, loaded 3\.4\.0") as info:
        lib.miopenSetTuningPolicy(mt.miopenHandle_t(), 0)
    assert info.value.function == "miopenSetTuningPolicy"
    with pytest.raises(MIOpenVersionError):
        lib.capabilities.require("miopenBatchNormForwardTrainingActivation")


def test_error_string_and_status_mapping(lib: Any) -> None:
    assert lib.miopenGetErrorString(3) == b"miopenStatusBadParm"
    assert lib.error_string(0) == "miopenStatusSuccess"
    with objects(lib) as o:
        conv = o.new("conv")
        lib.miopenInitConvolutionNdDescriptor(conv, 2, int_array([0, 0]), int_array([1, 1]), int_array([1, 1]), 0)
        x = o.tensor(1, [2, 3, 8, 8])
        w = o.tensor(1, [4, 2, 3, 3])  # 2 input channels per filter, x has 3, groups 1
        ndim, out = ctypes.c_int(), (ctypes.c_int * 8)()
        pattern = r"miopenGetConvolutionNdForwardOutputDim failed: miopenStatusBadParm \(3\)"
        with pytest.raises(MIOpenBadParmError, match=pattern) as info:
            lib.miopenGetConvolutionNdForwardOutputDim(conv, x, w, ctypes.byref(ndim), out)
        assert info.value.status == 3 and info.value.function == "miopenGetConvolutionNdForwardOutputDim"


def test_wrong_handle_kind_rejected_before_c(lib: Any) -> None:
    tensor = mt.miopenTensorDescriptor_t()
    lib.miopenCreateTensorDescriptor(ctypes.byref(tensor))
    try:
        with pytest.raises(ctypes.ArgumentError):
            lib.miopenDestroyConvolutionDescriptor(tensor)
    finally:
        lib.miopenDestroyTensorDescriptor(tensor)
