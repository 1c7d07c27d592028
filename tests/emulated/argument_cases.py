"""Seed-row cases whose MIOpen arguments a mistake in MIOPEN_ENGINE would change: per-axis
padding, stride and dilation that differ on every axis (2-D and 3-D; reversed or swapped axes
give other values), batchnorm epsilon and momentum other than the defaults, and activation clips
mapping to each of MIOpen's RELU, CLIPPEDRELU (alpha) and CLAMP (alpha, beta).

Shared by the emulated lane (tests/emulated/test_miopen_engine_readback.py), the real library
on the stub GPU (tests/stubgpu/test_readback.py) and AMD's kernels (tests/amdkernels). Only rows
where the argument applies: BN_INFERENCE_INV's graph has no epsilon (the engine derives one),
batchnorm backward ignores epsilon (saved statistics).
"""

from __future__ import annotations

from typing import Any

from test_miopen_engine_graphs import Case, build

from hipdnn.core.types import DataType
from hipdnn.engines.miopen.patterns import Row

__all__ = [
    "AMDKERNELS_KNOWN",
    "ARG_CASES",
    "ARG_IDS",
    "CLAMP_34_DECLINED",
    "NONDEFAULT_EPSILON",
    "NONDEFAULT_MOMENTUM",
    "REAL_LIBRARY_FAILS",
    "arg_case",
]

#: Far enough from MIOpen's and hipDNN's default 1e-5 that the outputs differ beyond
#: DESIGN.md's tolerances (variances are 0.5 .. 1.5 in the builders).
NONDEFAULT_EPSILON = 1e-2
NONDEFAULT_MOMENTUM = 0.3

# every axis different in padding, stride and dilation; 2-3 output positions per axis
_GEO_2D = {"padding": [0, 1], "stride": [2, 1], "dilation": [1, 2], "kernel": [3, 2], "spatial": [7, 3]}
_GEO_3D = {"padding": [0, 1, 2], "stride": [2, 1, 3], "dilation": [1, 3, 2], "kernel": [3, 2, 2],
           "spatial": [5, 3, 2]}
# conv + bias + activation: 3-wide kernels
# 1-D (rank-3, padded to N,C,L,1 for MIOpen): MIOpen must hold padding [2, 0], stride [2, 1],
# dilation [2, 1]
_GEO_1D = {"padding": [2], "stride": [2], "dilation": [2], "kernel": [3], "spatial": [11]}
_CBA_2D = {"padding": [0, 1], "stride": [2, 1], "dilation": [1, 2], "spatial": [7, 5]}
_CBA_3D = {"padding": [0, 1, 2], "stride": [2, 1, 3], "dilation": [1, 1, 2], "spatial": [5, 2, 4]}

#: (id, row, layout, builder keywords), fp32
ARG_CASES: list[tuple[str, Row, str, dict[str, Any]]] = [
    *((f"{r.name.lower()}-2d", r, "NCHW", _GEO_2D) for r in (Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD)),
    *((f"{r.name.lower()}-3d", r, "NCDHW", _GEO_3D) for r in (Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD)),
    ("conv_fprop-1d-nlc", Row.CONV_FPROP, "NLC", _GEO_1D),
    ("conv_dgrad-1d-ncl", Row.CONV_DGRAD, "NCL", _GEO_1D),
    ("conv_wgrad-1d-nlc", Row.CONV_WGRAD, "NLC", _GEO_1D),
    ("conv_bias_act-2d-clamp", Row.CONV_BIAS_ACT, "NCHW", {**_CBA_2D, "lower": 0.1, "upper": 1.5}),
    ("conv_bias_act-3d-clippedrelu", Row.CONV_BIAS_ACT, "NCDHW", {**_CBA_3D, "upper": 0.7}),
    ("bn_inference-2d-eps", Row.BN_INFERENCE, "NCHW", {"eps": NONDEFAULT_EPSILON}),
    ("bn_inference-3d-eps", Row.BN_INFERENCE, "NCDHW", {"eps": NONDEFAULT_EPSILON}),
    ("bn_training-eps-momentum", Row.BN_TRAINING, "NCHW",
     {"eps": NONDEFAULT_EPSILON, "running": True, "momentum": NONDEFAULT_MOMENTUM}),
    ("bn_training_act-eps-clamp", Row.BN_TRAINING_ACT, "NCHW",
     {"eps": NONDEFAULT_EPSILON, "lower": -0.3, "upper": 0.8}),
    ("bn_inf_drelu_bn_bwd-lower", Row.BN_INF_DRELU_BN_BWD, "NCHW", {"lower": 0.25}),
]
ARG_IDS = [c[0] for c in ARG_CASES]

#: (case id, MIOpen Debian version) -> the call that fails on the real library, and why. Found by
#: these cases on the stub GPU: MIOpen 3.5.1's standalone CLAMP activation kernel does not
#: compile (MIOpenNeuron.cl calls ActivationFunction_ClampU, which it does not declare), so a
#: conv + bias + RELU with a lower clip, unfused (gfx90a's workaround, RDNA), fails at execute
#: with status 7. Asserted as it is, so the test says when a MIOpen build or the engine changes it.
REAL_LIBRARY_FAILS: dict[tuple[str, str], str] = {
    ("conv_bias_act-2d-clamp", "7.2.4"): "miopenActivationForward",
}

#: Cases whose lower clip is MIOpen's CLAMP: MIOpen 3.4's kernels have no CLAMP (its
#: MIOpenNeuron.cl defines no MIOPEN_NEURON_CLAMP; 3.4 accepts mode 10 and AMD's kernels computed
#: zeros), so MIOPEN_ENGINE declines them on 3.4 (hipdnn/engines/miopen/engine.py).
CLAMP_34_DECLINED = ("conv_bias_act-2d-clamp", "bn_training_act-eps-clamp", "bn_inf_drelu_bn_bwd-lower")

#: (case id, MIOpen Debian version) -> why AMD's kernels on tools/rdna3 do not give PyTorch's
#: answer today (tests/amdkernels marks these xfail, strict: a fix turns them into failures that
#: ask for this entry to go).
AMDKERNELS_KNOWN: dict[tuple[str, str], str] = {}


def arg_case(row: Row, layout: str, kw: dict[str, Any], dtype: DataType = DataType.FLOAT) -> Case:
    """The case, built (and validated) by the seed-row builders."""
    return build(row, dtype, layout, **kw)
