"""AMD's own kernels compute every seed row: real MIOpen 3.5.1 picks and compiles its gfx1100
kernels, tools/rdna3 runs them, PyTorch on the CPU is the reference (DESIGN.md tolerances).

Each row x dtype x NCHW/NHWC runs two shapes (the builders' odd-sized default, and a second one:
stride 2 + groups 2 for convolutions, another seed for batchnorm); the 3-D layouts (NCDHW, NDHWC)
run in FP32 with the default shape. Outputs start as NaN so an
element no kernel wrote fails. Where MIOpen has no kernel (bf16 conv + bias + activation: it
runs only fused, MIOpen's standalone activation is fp32/fp16 only, and on RDNA the engine takes
no fused conv path, workaround ROCm/rocm-libraries#6979) the decline is asserted as the engine
reports it; conv + bias + activation runs unfused here for the same workaround. Results go to ``$HIPDNN_AMDKERNELS_REPORT`` (JSON lines) when
set, for tools/amdkernels_report.py.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import numpy as np
import pytest
from argument_cases import (
    AMDKERNELS_KNOWN,
    ARG_CASES,
    ARG_IDS,
    CLAMP_34_DECLINED,
    REAL_LIBRARY_FAILS,
    arg_case,
)
from test_miopen_engine_graphs import DTYPES, Case, build

from hipdnn.core.handle import Handle
from hipdnn.core.types import DataType
from hipdnn.engines import registry
from hipdnn.engines.miopen import MiopenExecutionError, Row
from hipdnn.interop import buffers as interop

pytest.importorskip("torch")

LAYOUTS = ("NCHW", "NHWC")
SHAPES = ("default", "second")
CONV_ROWS = (Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD)
#: AMD's provider's later rows: their own cases below (few: this lane is slow).
NEW_ROWS = (Row.BN_INFERENCE_ACT, Row.BN_INFERENCE_INV_ACT, Row.POINTWISE_ACT, Row.POINTWISE_BINARY,
            Row.LAYERNORM, Row.LAYERNORM_BACKWARD, Row.RMSNORM, Row.RMSNORM_BACKWARD)
SEED_ROWS = [row for row in Row if row not in NEW_ROWS]
CASES = [(row, dtype, layout, shape) for row in SEED_ROWS for dtype in DTYPES for layout in LAYOUTS
         for shape in SHAPES]
CASES += [(row, "fp32", layout, "default") for row in SEED_ROWS for layout in ("NCDHW", "NDHWC")]


def _engine() -> Any:
    return next(e for e in registry().values() if getattr(e, "name", "") == "MIOPEN_ENGINE")


#: Graphs as cudnn-frontend-style code writes them, beyond the seed table's builders: fp16 conv +
#: bias + ReLU with the ADD's compute type left to the graph's FP32, and gradients whose output
#: strides are left to inference (they follow the input: NCHW).
USAGE_CASES = [(Row.CONV_BIAS_ACT, "fp16", "NCHW", "fp32_bias_compute"),
               (Row.CONV_BIAS_ACT, "fp16", "NHWC", "fp32_bias_compute"),
               (Row.CONV_DGRAD, "fp32", "NCHW", "inferred_output_strides"),
               (Row.CONV_WGRAD, "fp32", "NCHW", "inferred_output_strides")]


def _case(row: Row, dtype: DataType, layout: str, shape: str) -> Case:
    if shape == "default":
        return build(row, dtype, layout)
    if shape == "fp32_bias_compute":
        return build(row, dtype, layout, bias_compute=DataType.NOT_SET)
    if shape == "inferred_output_strides":
        return build(row, dtype, layout, infer_output_strides=True)
    if shape == "strided_dilated":  # every knob of the convolution away from its default
        return build(row, dtype, layout, stride=2, dilation=2, padding=2, groups=2)
    if row in CONV_ROWS:
        return build(row, dtype, layout, stride=2, groups=2)
    return build(row, dtype, layout, seed=7)


def _max_rel_err(case: Case, outs: dict[str, np.ndarray]) -> float:
    worst = 0.0
    for role, want in case.expected.items():
        got = outs[role].astype(np.float64)
        den = np.maximum(np.abs(want), 1.0)
        worst = max(worst, float(np.max(np.abs(got - want) / den)))
    return worst


def _declined_by_34(row: Row, dtype: str, layout: str) -> str | None:
    """What MIOPEN_ENGINE must say when it declines this case on MIOpen 3.4 (lane version
    6.4.3), or None: bf16 batchnorm + activation (3.5 calls only), channels-last batchnorm
    inference (3.4 has no solver), NDHWC batchnorm training/backward (3.4's kernels, run here,
    read past the per-channel tensors)."""
    if os.environ.get("HIPDNN_AMDKERNELS_VERSION") != "6.4.3":
        return None
    if row == Row.LAYERNORM_BACKWARD:
        return "needs miopenLayerNormBackward"
    if dtype == "bf16" and row in (Row.BN_TRAINING_ACT, Row.BN_INF_DRELU_BN_BWD):
        return "MIOpen >= 3.5"
    if layout.endswith("C") and row in (Row.BN_INFERENCE, Row.BN_INFERENCE_INV, Row.BN_INF_DRELU_BN_BWD,
                                        Row.BN_INFERENCE_ACT, Row.BN_INFERENCE_INV_ACT):
        return "NCHW only"
    if layout == "NDHWC" and row in (Row.BN_TRAINING, Row.BN_BACKWARD, Row.BN_TRAINING_ACT):
        return "in NDHWC needs MIOpen >= 3.5"
    return None


def _report(record: dict[str, Any]) -> None:
    path = os.environ.get("HIPDNN_AMDKERNELS_REPORT")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


@pytest.mark.parametrize("row,dtype,layout,shape", CASES,
                         ids=[f"{r.name.lower()}-{d}-{lay}-{s}" for r, d, lay, s in CASES])
def test_amd_kernels_match_torch(launches: Any, row: Row, dtype: str, layout: str, shape: str) -> None:
    _check(launches, row, dtype, layout, shape, report=True)


def _check(launches: Any, row: Row, dtype: str, layout: str, shape: str, *, report: bool,
           case: Case | None = None) -> None:
    case = _case(row, DTYPES[dtype], layout, shape) if case is None else case
    engine, h = _engine(), Handle()
    record: dict[str, Any] = {"row": row.value, "dtype": dtype, "layout": layout, "shape": shape,
                              "kernels": [], "max_rel_err": None, "ok": False, "seconds": []}
    launches.records.clear()
    t0 = time.perf_counter()
    try:
        declined = _declined_by_34(row, dtype, layout)
        if declined is not None:  # MIOpen 3.4 has no (correct) kernel for it: the engine says so
            reason = engine.check_support(case.graph, h)
            assert reason is not None and declined in reason, reason
            record.update(ok=True, declined=reason)
            return
        if DataType(case.dtype) == DataType.BFLOAT16 and row == Row.CONV_BIAS_ACT:
            # bf16 runs only fused, and gfx11 takes no fused conv path (workaround #6979)
            reason = engine.check_support(case.graph, h)
            assert reason is not None and "fp32/fp16 only" in reason and "#6979" in reason, reason
            record.update(ok=True, declined=reason)
            return
        assert engine.check_support(case.graph, h) is None
        knobs = {k.id: k.default for k in engine.get_knobs(case.graph, h)}
        plan = engine.build_plan(case.graph, knobs, h)
        outs = {role: np.full_like(a, np.nan) for role, a in case.empty_outputs().items()}
        buffers = {t.uid: interop.resolve(a) for t, a in case.inputs.items()}
        buffers.update({case.outputs[r].uid: interop.resolve(a) for r, a in outs.items()})
        ws = np.zeros(max(plan.workspace_size, 1), np.uint8)
        fails = REAL_LIBRARY_FAILS.get((shape, os.environ.get("HIPDNN_AMDKERNELS_VERSION", "")))
        if fails is not None:  # MIOpen's own kernel does not build (argument_cases.py says why)
            with plan, pytest.raises(MiopenExecutionError, match=fails):
                plan.execute(buffers, interop.resolve(ws) if plan.workspace_size else None, h)
            record.update(ok=True, declined=f"{fails} fails (MIOpen's kernel does not build)")
            return
        with plan:
            plan.execute(buffers, interop.resolve(ws) if plan.workspace_size else None, h)
        errors = [f"{r.kernel}: {r.error}" for r in launches.records if r.error]
        assert not errors, errors
        assert launches.records, "no kernel ran: nothing here was computed by AMD's code"
        record["kernels"] = [r.kernel for r in launches.records]
        record["seconds"] = [round(r.seconds, 4) for r in launches.records]
        record["path"] = str(getattr(plan, "path", ""))
        out = {role: a.astype(np.float32) for role, a in outs.items()}
        record["max_rel_err"] = _max_rel_err(case, {k: np.nan_to_num(v, nan=np.inf) for k, v in out.items()})
        atol, rtol = case.tol()
        for role, want in case.expected.items():
            assert not np.isnan(out[role]).any(), f"{role}: elements no kernel wrote (still NaN)"
            np.testing.assert_allclose(out[role], want, atol=atol, rtol=rtol,
                                       err_msg=f"{row.value} {dtype} {layout} {shape}: {role}")
        record["ok"] = True
    finally:
        record["wall_seconds"] = round(time.perf_counter() - t0, 3)
        if report:  # tools/amdkernels_report.py's table: the seed rows' two shapes
            _report(record)
        h.close()


@pytest.mark.parametrize("row,dtype,layout,shape", USAGE_CASES,
                         ids=[f"{r.name.lower()}-{d}-{lay}-{s}" for r, d, lay, s in USAGE_CASES])
def test_amd_kernels_cudnn_frontend_style_graphs(launches: Any, row: Row, dtype: str, layout: str,
                                                 shape: str) -> None:
    """The same checks on graphs MIOPEN_ENGINE used to decline (tests/emulated/
    test_miopen_engine_mixed_precision.py, test_miopen_engine_inferred_layout.py)."""
    _check(launches, row, dtype, layout, shape, report=False)


@pytest.mark.parametrize("name,row,layout,kw", ARG_CASES, ids=ARG_IDS)
def test_amd_kernels_compute_the_graphs_arguments(launches: Any, request: pytest.FixtureRequest,
                                                  name: str, row: Row, layout: str,
                                                  kw: dict[str, Any]) -> None:
    """AMD's kernels on the arguments a mistake in MIOPEN_ENGINE would change (fp32): every axis
    a different padding, stride and dilation (2-D and 3-D), epsilon 1e-2 and momentum 0.3, and
    clips mapping to CLAMP (alpha, beta) and CLIPPEDRELU (alpha) (tests/emulated/argument_cases.py).
    What does not match today is AMDKERNELS_KNOWN there (strict xfail, with the reason)."""
    version = os.environ.get("HIPDNN_AMDKERNELS_VERSION", "")
    if name in CLAMP_34_DECLINED and version == "6.4.3":
        # AMD's 3.4 kernels computed zeros for CLAMP: MIOPEN_ENGINE declines, the CPU engine runs
        from hipdnn.engines.miopen import MiopenEngine

        reason = MiopenEngine().check_support(arg_case(row, layout, kw).graph, None)
        assert reason is not None and "CLAMP" in reason, reason
        return
    known = AMDKERNELS_KNOWN.get((name, version))
    if known is not None:
        request.applymarker(pytest.mark.xfail(reason=known, strict=True))
    _check(launches, row, "fp32", layout, name, report=False, case=arg_case(row, layout, kw))


#: AMD's provider's later rows (few cases: this lane is slow): each row x FP32/FP16 x its
#: layouts, and each standalone activation in FP32 NCHW. Outputs start NaN, PyTorch decides.
PROVIDER_CASES = [
    (Row.BN_INFERENCE_INV_ACT, "fp32", "NCHW", "default"), (Row.BN_INFERENCE_INV_ACT, "fp16", "NHWC", "default"),
    (Row.BN_INFERENCE_ACT, "fp32", "NHWC", "default"), (Row.BN_INFERENCE_ACT, "fp16", "NCHW", "default"),
    (Row.POINTWISE_ACT, "fp32", "NHWC", "default"), (Row.POINTWISE_ACT, "fp16", "NCHW", "default"),
    (Row.POINTWISE_BINARY, "fp32", "NCHW", "default"), (Row.POINTWISE_BINARY, "fp16", "NCDHW", "default"),
    (Row.BN_INFERENCE_INV, "fp16", "NCHW", "default"),
]
ACT_CASES = ["relu", "clipped_relu", "sigmoid", "tanh"]


@pytest.mark.parametrize("row,dtype,layout,shape", PROVIDER_CASES,
                         ids=[f"{r.name.lower()}-{d}-{lay}" for r, d, lay, _ in PROVIDER_CASES])
def test_amd_kernels_provider_rows(launches: Any, row: Row, dtype: str, layout: str,
                                   shape: str) -> None:
    case = None
    if row == Row.POINTWISE_ACT:  # ReLU (the other activations: test_amd_kernels_standalone_activations)
        from test_miopen_engine_graphs import pointwise_act_case

        case = pointwise_act_case(DTYPES[dtype], layout, act="relu")
        case.graph.validate()
    _check(launches, row, dtype, layout, shape, report=True, case=case)


@pytest.mark.parametrize("act", ["relu", "leaky_relu", "sigmoid", "clipped_relu", "tanh"])
def test_amd_kernels_standalone_activations(launches: Any, act: str) -> None:
    """Each activation through MIOpen's MIOpenActiveFwdLite (clipped ReLU uses v_maxmin_f32; tanh
    v_bfi_b32, v_frexp_exp_i32_f64, v_subrev_co_ci_u32 and v_cmp_nlt_f16 in its builds)."""
    from test_miopen_engine_graphs import pointwise_act_case

    case = pointwise_act_case(DataType.FLOAT, "NCHW", act=act)
    case.graph.validate()
    _check(launches, Row.POINTWISE_ACT, "fp32", "NCHW", act, report=False, case=case)


#: 1-D graphs (rank-3 tensors): MIOPEN_ENGINE pads the convolution and batchnorm rows to 4-D
#: N,C,L,1 as AMD's provider does (NCL as NCHW, NLC as NHWC, W = 1); AMD's kernels compute them.
#: Conv fprop and batchnorm training in FP32 and FP16 in both layouts, one case of each other
#: padded row, and convolutions with stride 2, dilation 2, padding 2 and 2 groups (few: this lane
#: is slow).
ONE_D_CASES = [(row, dtype, layout, "default") for row in (Row.CONV_FPROP, Row.BN_TRAINING)
               for dtype in ("fp32", "fp16") for layout in ("NCL", "NLC")]
ONE_D_CASES += [(Row.CONV_DGRAD, "fp32", "NLC", "default"), (Row.CONV_WGRAD, "fp32", "NCL", "default"),
                (Row.CONV_BIAS_ACT, "fp16", "NLC", "default"), (Row.BN_INFERENCE, "fp32", "NCL", "default"),
                (Row.BN_BACKWARD, "fp32", "NLC", "default"), (Row.BN_TRAINING_ACT, "fp16", "NCL", "default"),
                (Row.BN_INFERENCE_INV, "fp16", "NLC", "default"),  # NLC inference: declined on 3.4
                (Row.CONV_FPROP, "fp32", "NCL", "strided_dilated"),
                (Row.CONV_FPROP, "fp16", "NLC", "strided_dilated"),
                (Row.CONV_DGRAD, "fp32", "NCL", "strided_dilated"),
                (Row.CONV_WGRAD, "fp32", "NLC", "strided_dilated")]


@pytest.mark.parametrize("row,dtype,layout,shape", ONE_D_CASES,
                         ids=[f"{r.name.lower()}-{d}-{lay}-{s}" for r, d, lay, s in ONE_D_CASES])
def test_amd_kernels_1d_layouts(launches: Any, row: Row, dtype: str, layout: str,
                                shape: str) -> None:
    """NCL / NLC graphs on AMD's kernels: outputs start NaN, PyTorch's conv1d / batch_norm on
    3-D tensors decides (tests/emulated/test_miopen_engine_graphs.py builds them)."""
    _check(launches, row, dtype, layout, shape, report=True)


#: The graph API's layer norm and RMS norm on MIOpen's own calls (miopenLayerNorm*, the T5 layer
#: norm for RMS norm): each row x FP32/FP16/BF16, over C, H, W of an NCHW X (torch's
#: normalized_shape (C, H, W)) and over C alone of an NHWC X (MIOpen given (N, H, W, C)); an
#: INFERENCE forward (statistics in the workspace); a transformer's (B, S, E) over E.
NORM_CASES = [(row, dtype, layout, "default")
              for row in (Row.LAYERNORM, Row.LAYERNORM_BACKWARD, Row.RMSNORM, Row.RMSNORM_BACKWARD)
              for dtype in ("fp32", "fp16", "bf16") for layout in LAYOUTS]
NORM_CASES += [(Row.LAYERNORM, "fp16", "NCHW", "inference"), (Row.RMSNORM, "fp32", "NHWC", "inference"),
               (Row.LAYERNORM, "fp32", "NCL", "transformer"), (Row.RMSNORM_BACKWARD, "fp32", "NCL", "transformer")]


@pytest.mark.parametrize("row,dtype,layout,shape", NORM_CASES,
                         ids=[f"{r.name.lower()}-{d}-{lay}-{s}" for r, d, lay, s in NORM_CASES])
def test_amd_kernels_norm_rows(launches: Any, row: Row, dtype: str, layout: str, shape: str) -> None:
    from test_miopen_engine_graphs import norm_case

    kw: dict[str, Any] = {"training": shape != "inference"}
    if shape == "transformer":
        kw.update(dims=(2, 5, 48), last_only=True)
    case = norm_case(row, DTYPES[dtype], layout, **kw)
    _check(launches, row, dtype, layout, shape, report=True, case=case)
