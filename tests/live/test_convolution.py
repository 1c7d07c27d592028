"""Convolution descriptors on the real library: output dims vs hipdnn.core.shapes, groups, modes."""

from __future__ import annotations

import ctypes
from typing import Any

import pytest
from live_util import conv_configs, int_array, objects

from hipdnn.core.shapes import conv_output_dims, packed_strides
from miopen_ctypes.enums import miopenConvolutionMode_t, miopenDataType_t

FLOAT = int(miopenDataType_t.miopenFloat)
CONV = int(miopenConvolutionMode_t.miopenConvolution)


CONFIGS = conv_configs(240)


def _miopen_output(lib: Any, cfg: dict[str, Any], layout: str | None = None) -> tuple[int, ...]:
    spatial = len(cfg["x"]) - 2
    with objects(lib) as o:
        conv = o.new("conv")
        lib.miopenInitConvolutionNdDescriptor(conv, spatial, int_array(cfg["pad"]), int_array(cfg["stride"]),
                                              int_array(cfg["dil"]), CONV)
        lib.miopenSetConvolutionGroupCount(conv, cfg["groups"])
        count = ctypes.c_int()
        lib.miopenGetConvolutionGroupCount(conv, ctypes.byref(count))
        assert count.value == cfg["groups"]
        x = o.tensor(FLOAT, cfg["x"], packed_strides(cfg["x"], layout) if layout else None)
        w = o.tensor(FLOAT, cfg["w"], packed_strides(cfg["w"], layout) if layout else None)
        ndim, out = ctypes.c_int(), (ctypes.c_int * 8)()
        lib.miopenGetConvolutionNdForwardOutputDim(conv, x, w, ctypes.byref(ndim), out)
        return tuple(out[: ndim.value])


def test_config_sweep_is_broad() -> None:
    assert len(CONFIGS) >= 200
    assert {len(c["x"]) for c in CONFIGS} == {4, 5}
    assert {c["groups"] for c in CONFIGS} >= {1, 2, 3, 4}
    assert any(max(c["stride"]) > 1 for c in CONFIGS) and any(max(c["dil"]) > 1 for c in CONFIGS)
    assert any(max(c["pad"]) > 0 for c in CONFIGS)


@pytest.mark.parametrize("index", range(0, len(CONFIGS), 40))
def test_output_dims_match_hipdnn_shapes(lib: Any, index: int) -> None:
    """Each case checks 40 configs (240 in total, 2-D and 3-D) against hipdnn.core.shapes."""
    for cfg in CONFIGS[index:index + 40]:
        assert _miopen_output(lib, cfg) == cfg["out"], cfg


@pytest.mark.parametrize("layout", ["NHWC", "NDHWC"])
def test_output_dims_channel_last_inputs(lib: Any, layout: str) -> None:
    spatial = len(layout) - 2
    for cfg in [c for c in CONFIGS if len(c["x"]) - 2 == spatial][:20]:
        assert _miopen_output(lib, cfg, layout) == cfg["out"], cfg


def test_output_below_one_is_clamped_by_miopen(lib: Any) -> None:
    """MIOpen reports 1 where the arithmetic gives < 1 (kernel larger than the padded input):
    hipdnn must reject such graphs itself instead of trusting MIOpen's dims."""
    cfg: dict[str, Any] = {"x": [2, 3, 4, 5], "w": [4, 3, 7, 7], "pad": [0, 0], "stride": [1, 1], "dil": [1, 1], "groups": 1}
    assert min(conv_output_dims(cfg["x"], cfg["w"], cfg["pad"], cfg["pad"], cfg["stride"], cfg["dil"])[2:]) < 1
    assert _miopen_output(lib, cfg) == (2, 4, 1, 1)


def test_nd_descriptor_round_trip(lib: Any) -> None:
    with objects(lib) as o:
        conv = o.new("conv")
        lib.miopenInitConvolutionNdDescriptor(conv, 3, int_array([1, 2, 3]), int_array([2, 1, 3]),
                                              int_array([1, 3, 2]), CONV)
        n = ctypes.c_int()
        pad, stride, dil = ((ctypes.c_int * 3)() for _ in range(3))
        mode = ctypes.c_uint()
        lib.miopenGetConvolutionNdDescriptor(conv, 3, ctypes.byref(n), pad, stride, dil, ctypes.byref(mode))
        assert (n.value, list(pad), list(stride), list(dil), mode.value) == (3, [1, 2, 3], [2, 1, 3], [1, 3, 2], CONV)
