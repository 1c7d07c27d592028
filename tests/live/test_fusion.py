"""Fusion plans and operators for every fused pattern of the seed table, on the real library.

Creation and operator arguments need no GPU; compiling does (it needs a handle), so it is not
exercised here.
"""

from __future__ import annotations

import ctypes
import itertools
import os
from collections.abc import Callable
from typing import Any

import pytest
from live_util import int_array, objects

from hipdnn.core.shapes import LAYOUTS, packed_strides
from miopen_ctypes import types as mt
from miopen_ctypes.enums import (
    miopenActivationMode_t,
    miopenBatchNormMode_t,
    miopenDataType_t,
    miopenFusionDirection_t,
)
from miopen_ctypes.errors import MIOpenBadParmError

VERTICAL = int(miopenFusionDirection_t.miopenVerticalFusion)
SPATIAL = int(miopenBatchNormMode_t.miopenBNSpatial)
RELU = int(miopenActivationMode_t.miopenActivationRELU)
DTYPES = {"fp32": miopenDataType_t.miopenFloat, "fp16": miopenDataType_t.miopenHalf,
          "bf16": miopenDataType_t.miopenBFloat16}
ONE, ZERO = ctypes.c_float(1.0), ctypes.c_float(0.0)
DEV = 0x10000  # fake device addresses: operator args only record them

Op = tuple[str, Callable[..., None], Callable[..., None]]


def _op(lib: Any, o: Any, kind: str, ctx: dict[str, Any]) -> Op:
    """(creator name, create(plan, &op), set_args(args, op)) for one fused operator."""
    if kind == "conv":
        return ("miopenCreateOpConvForward",
                lambda p, r: lib.miopenCreateOpConvForward(p, r, ctx["conv"], ctx["w"]),
                lambda a, op: lib.miopenSetOpArgsConvForward(a, op, ctypes.byref(ONE), ctypes.byref(ZERO), DEV))
    if kind == "bias":
        return ("miopenCreateOpBiasForward",
                lambda p, r: lib.miopenCreateOpBiasForward(p, r, ctx["bias"]),
                lambda a, op: lib.miopenSetOpArgsBiasForward(a, op, ctypes.byref(ONE), ctypes.byref(ZERO), DEV))
    if kind.startswith("act_fwd"):
        mode = int(miopenActivationMode_t[kind.split(":")[1]])
        return ("miopenCreateOpActivationForward",
                lambda p, r: lib.miopenCreateOpActivationForward(p, r, mode),
                lambda a, op: lib.miopenSetOpArgsActivForward(a, op, ctypes.byref(ONE), ctypes.byref(ZERO),
                                                              6.0, 0.0, 0.0))
    if kind == "act_bwd":
        return ("miopenCreateOpActivationBackward",
                lambda p, r: lib.miopenCreateOpActivationBackward(p, r, RELU),
                lambda a, op: lib.miopenSetOpArgsActivBackward(a, op, ctypes.byref(ONE), ctypes.byref(ZERO),
                                                               DEV, None, 0.0, 0.0, 0.0))
    if kind == "bn_fwd":
        return ("miopenCreateOpBatchNormForward",
                lambda p, r: lib.miopenCreateOpBatchNormForward(p, r, SPATIAL, False),
                lambda a, op: lib.miopenSetOpArgsBatchNormForward(
                    a, op, ctypes.byref(ONE), ctypes.byref(ZERO), DEV, DEV + 64, DEV + 128, DEV + 192,
                    None, None, 0.0, 1e-5))
    if kind == "bn_inf":
        return ("miopenCreateOpBatchNormInference",
                lambda p, r: lib.miopenCreateOpBatchNormInference(p, r, SPATIAL, ctx["bn"]),
                lambda a, op: lib.miopenSetOpArgsBatchNormInference(
                    a, op, ctypes.byref(ONE), ctypes.byref(ZERO), DEV, DEV + 64, DEV + 128, DEV + 192, 1e-5))
    assert kind == "bn_bwd", kind
    return ("miopenCreateOpBatchNormBackward",
            lambda p, r: lib.miopenCreateOpBatchNormBackward(p, r, SPATIAL),
            lambda a, op: lib.miopenSetOpArgsBatchNormBackward(
                a, op, ctypes.byref(ONE), ctypes.byref(ZERO), DEV, DEV + 64, DEV + 128, DEV + 192, DEV + 256,
                DEV + 320, DEV + 384))


#: Seed-table fused rows -> the MIOpen operator sequence the engine builds (DESIGN.md).
PATTERNS = {
    "conv+bias+relu": ["conv", "bias", "act_fwd:miopenActivationRELU"],
    "conv+relu": ["conv", "act_fwd:miopenActivationRELU"],
    "conv+bias+clipped_relu": ["conv", "bias", "act_fwd:miopenActivationCLIPPEDRELU"],
    "bn_train+relu": ["bn_fwd", "act_fwd:miopenActivationRELU"],
    "bn_inference+drelu+bn_backward": ["bn_bwd", "act_bwd"],
    "bn_inference+relu": ["bn_inf", "act_fwd:miopenActivationRELU"],
}
if os.environ.get("HIPDNN_LIVE_VERSION") == "7.2.4":  # CLAMP exists from MIOpen 3.5 only
    PATTERNS["conv+bias+clamp"] = ["conv", "bias", "act_fwd:miopenActivationCLAMP"]


def _context(lib: Any, o: Any, dtype: int, layout: str) -> dict[str, Any]:
    rank = len(LAYOUTS[layout])
    x_dims = (2, 3, 8, 8) if rank == 4 else (2, 3, 4, 8, 8)
    w_dims = (4, 3) + (3,) * (rank - 2)
    conv = o.new("conv")
    lib.miopenInitConvolutionNdDescriptor(conv, rank - 2, int_array([1] * (rank - 2)), int_array([1] * (rank - 2)),
                                          int_array([1] * (rank - 2)), 0)
    bn_dims = (1, 3) + (1,) * (rank - 2)
    return {
        "x": o.tensor(dtype, x_dims, packed_strides(x_dims, layout)),
        "w": o.tensor(dtype, w_dims, packed_strides(w_dims, layout)),
        "bias": o.tensor(dtype, (1, 4) + (1,) * (rank - 2)),
        "bn": o.tensor(int(miopenDataType_t.miopenFloat), bn_dims),
        "conv": conv,
    }


CASES = list(itertools.product(sorted(PATTERNS), sorted(DTYPES), sorted(LAYOUTS)))


@pytest.mark.parametrize(("pattern", "dtype", "layout"), CASES)
def test_fusion_plan_and_ops(lib: Any, pattern: str, dtype: str, layout: str) -> None:
    with objects(lib) as o:
        ctx = _context(lib, o, int(DTYPES[dtype]), layout)
        plan = mt.miopenFusionPlanDescriptor_t()
        lib.miopenCreateFusionPlan(ctypes.byref(plan), VERTICAL, ctx["x"])
        o.own("miopenDestroyFusionPlan", plan)  # the plan owns (and frees) its operators
        args = o.new("args")
        created = []
        for kind in PATTERNS[pattern]:
            _, create, set_args = _op(lib, o, kind, ctx)
            op = mt.miopenFusionOpDescriptor_t()
            create(plan, ctypes.byref(op))
            assert op, kind
            set_args(args, op)
            created.append(ctypes.cast(op, ctypes.c_void_p).value)
        for index, address in enumerate(created):
            got = mt.miopenFusionOpDescriptor_t()
            lib.miopenFusionPlanGetOp(plan, index, ctypes.byref(got))
            assert ctypes.cast(got, ctypes.c_void_p).value == address
        with pytest.raises(MIOpenBadParmError, match="miopenFusionPlanGetOp"):
            lib.miopenFusionPlanGetOp(plan, len(created), ctypes.byref(mt.miopenFusionOpDescriptor_t()))
