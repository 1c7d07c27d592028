"""What the REAL libMIOpen decides for every seed row, through the public graph API.

Each seed row x FP32/FP16/BF16 x NCHW/NHWC/NCL/NLC (plus NCDHW in FP32) is built with ``Graph.build()``
on this process's stub GPU. The engine MIOPEN_ENGINE either builds (path, convolution solution
and workspace chosen from the real library's own solution list, ``global.workspace_size_limit``
spanning it) or is passed over with the real reason. The plan then executes: the kernels MIOpen
launches are recorded by the stub (names checked per solution), no HIP call fails. Nothing is
computed here: the numbers come from the oracle and amdkernels lanes.

MIOpen 3.4.0 (Debian 6.4.3) compiles kernels with clang-21 at absolute paths; tools/run_tests.py
runs its processes inside tools/miopen_toolchain.py's root, where those paths exist, and sets
``HIPDNN_STUBGPU_TOOLCHAIN`` (its kernels then build and launch as 3.5.1's do). Without that
root (not root, no apt) the kernel build failure is asserted instead, as the typed error it
surfaces as (status 7, naming the call); in CI that setting is an error. With
``HIPDNN_STUBGPU_REPORT`` set, each case appends its decision (JSON lines) for
tools/stubgpu_report.py.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import numpy as np
import pytest
from stubgpu_util import DECISIONS, Stub, without_compiler
from test_miopen_engine_graphs import DTYPES, Case, build

from hipdnn.core.types import DataType
from hipdnn.engines.miopen import NO_LIMIT, Row
from hipdnn.engines.miopen.errors import MiopenBuildError, MiopenExecutionError

LAYOUTS = ("NCHW", "NHWC")
CASES = [(row, dtype, layout) for row in Row for dtype in DTYPES for layout in LAYOUTS]
CASES += [(row, "fp32", "NCDHW") for row in Row]
#: 1-D graphs (rank-3 tensors): MIOPEN_ENGINE pads the convolution and batchnorm rows to 4-D
#: N,C,L,1 (NCL as NCHW, NLC as NHWC), as AMD's provider does; the pointwise rows stay rank 3.
LAYOUTS_1D = ("NCL", "NLC")
CASES += [(row, dtype, layout) for row in Row for dtype in DTYPES for layout in LAYOUTS_1D]
CONV_ROWS = (Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD)
BN_ACTIVATION_ROWS = (Row.BN_TRAINING_ACT, Row.BN_INF_DRELU_BN_BWD)
#: AMD's batchnorm inference + activation rows (3.5: miopenBatchNormForwardInferenceActivation;
#: 3.4: _V2 then miopenActivationForward).
BN_INF_ACT_ROWS = (Row.BN_INFERENCE_ACT, Row.BN_INFERENCE_INV_ACT)
#: Rows whose inverse variance is folded into the scale on the device first (miopenSetTensor of
#: a variance of ones, miopenOpTensor scale * inv_variance): their first two kernels.
INV_ROWS = (Row.BN_INFERENCE_INV, Row.BN_INFERENCE_INV_ACT)
INV_KERNELS = (r"^SubTensorOpWithScalar\dd$", r"^(OpTensorFwdBias|Op\w*Tensor\w*)$")  # set 1s; scale * inv
#: Standalone pointwise rows' kernels.
POINTWISE_KERNELS = {Row.POINTWISE_ACT: r"^MIOpenActiveFwd",
                     Row.POINTWISE_BINARY: r"^(OpTensorFwdBias|Op[1-5]dTensor\w*|OpTensor\w*)$"}

#: Kernels each convolution solution launches (the real library's names; a solution not listed
#: here fails the test: the table grows when MIOpen picks something new).
SOLUTION_KERNELS = {
    11: r"^MIOpenConvUni$",                              # ConvOclDirectFwd
    85: r"^naive_conv_ab_nonpacked_fwd_",                # ConvDirectNaiveConvFwd
    86: r"^naive_conv_ab_nonpacked_bwd_",                # ConvDirectNaiveConvBwd
    87: r"^naive_conv_ab_nonpacked_wrw_",                # ConvDirectNaiveConvWrw
    88: r"^$",                                           # GemmFwd1x1_0_1: rocBLAS only
    91: r"^Im[23]d2Col(_v2)?$",                          # GemmFwdRest (+ rocBLAS, stubbed)
    97: r"^Col2Im[23]dU$",                               # GemmBwdRest (+ rocBLAS)
    102: r"^(SubTensorOpWithScalar1d|Im[23]d2Col(_v2)?)$",  # GemmWrwUniversal (+ rocBLAS)
}
#: Kernels of the batchnorm rows, by row (MIOpen picks NCHW/NHWC variants within a family).
BN_KERNELS = {
    Row.BN_INFERENCE: r"^MIOpenBatchNormFwdInfer", Row.BN_INFERENCE_INV: r"^MIOpenBatchNormFwdInfer",
    Row.BN_INFERENCE_ACT: r"^MIOpenBatchNorm(Activ)?(Fwd)?Infer",
    Row.BN_INFERENCE_INV_ACT: r"^MIOpenBatchNorm(Activ)?(Fwd)?Infer",
    Row.BN_TRAINING: r"^MIOpenBatchNormFwdTrain", Row.BN_TRAINING_ACT: r"^MIOpenBatchNormFwdTrain",
    Row.BN_BACKWARD: r"^MIOpenBatchNormBwd", Row.BN_INF_DRELU_BN_BWD: r"^MIOpenBatchNormBwd",
}
#: MIOpen 3.4's batchnorm + activation fusion plans (path "fused") launch the Activ kernels.
BN_FUSED_KERNELS = {Row.BN_TRAINING_ACT: r"^MIOpenBatchNormActivFwdTrain",
                    Row.BN_INF_DRELU_BN_BWD: r"^MIOpenBatchNormActivBwd"}
#: The norm rows' kernels (MIOpenLayerNorm.cpp; the backward ones add a dscale/dbias pass, and a
#: reduction over the workspace when MIOpen sums in parallel).
NORM_KERNELS = {Row.LAYERNORM: r"^LayernormFwd(Contiguous)?$",
                Row.LAYERNORM_BACKWARD: r"^LayernormBwd(Contiguous|WeightBias\w*|ReduceSum)?$",
                Row.RMSNORM: r"^T5LayernormFwdContiguous$",
                Row.RMSNORM_BACKWARD: r"^T5LayernormBwd\w*$"}
#: The unfused conv + bias + activation epilogue: bias add (miopenOpTensor), then activation.
EPILOGUE = (r"^(OpTensorFwdBias|Op[45]dTensorGeneric)$", r"^MIOpenActiveFwd")


def _report(record: dict[str, Any]) -> None:
    path = os.environ.get("HIPDNN_STUBGPU_REPORT")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


def _declined_up_front(stub: Stub, row: Row, dtype: str, layout: str) -> str | None:
    """The reason MIOPEN_ENGINE must give for a graph the real library cannot run, or None."""
    if dtype == "bf16" and row == Row.POINTWISE_ACT:
        return "MIOpenNeuron.cl"
    if dtype == "bf16" and row == Row.POINTWISE_BINARY:
        return "allows FLOAT, HALF"
    if layout.endswith("C") and row == Row.POINTWISE_BINARY:
        return "not packed channels-first"
    if stub.version == "6.4.3" and row == Row.LAYERNORM_BACKWARD:
        return "needs miopenLayerNormBackward"
    if stub.version == "6.4.3" and dtype == "bf16" and row in BN_INF_ACT_ROWS:
        return "MIOpen >= 3.5"
    if dtype == "bf16" and row == Row.CONV_BIAS_ACT:  # only fused: no bf16 standalone activation
        return "#5409" if stub.arch == "gfx90a" else "miopenCompileFusionPlan"
    if stub.version == "6.4.3" and dtype == "bf16" and row in BN_ACTIVATION_ROWS:
        return "MIOpen >= 3.5"
    if (stub.version == "6.4.3" and layout.endswith("C")
            and row in (Row.BN_INFERENCE, Row.BN_INFERENCE_INV, Row.BN_INF_DRELU_BN_BWD,
                        *BN_INF_ACT_ROWS)):
        return "BnFwdInference"  # 3.4.0: "No solver found" for channels-last inference
    return None


def _run(case: Case, ws: int) -> None:
    outs = {role: np.full_like(a, np.nan) for role, a in case.empty_outputs().items()}
    pack: dict[Any, Any] = dict(case.inputs)
    pack.update({case.outputs[r]: a for r, a in outs.items()})
    case.graph.execute(pack, np.zeros(ws, np.uint8) if ws else None)


def _check_kernels(row: Row, plan: Any, kernels: list[str]) -> None:
    assert kernels, "no kernel was launched"
    sid = plan.solution_id
    if row in POINTWISE_KERNELS:
        assert len(kernels) == 1 and re.match(POINTWISE_KERNELS[row], kernels[0]), kernels
        return
    if row in NORM_KERNELS:
        assert all(re.match(NORM_KERNELS[row], k) for k in kernels), kernels
        return
    if row in INV_ROWS:  # the device-side variance first
        assert len(kernels) > 2, kernels
        assert re.match(INV_KERNELS[0], kernels[0]) and re.match(INV_KERNELS[1], kernels[1]), kernels
        kernels = kernels[2:]
    if row in BN_INF_ACT_ROWS and plan.path == "unfused":  # 3.4: _V2, then the activation
        assert len(kernels) == 2 and re.match(BN_KERNELS[Row.BN_INFERENCE], kernels[0]), kernels
        assert re.match(r"^MIOpenActiveFwd", kernels[1]), kernels
        return
    if row in BN_KERNELS:
        if plan.path == "unfused":  # batchnorm kernels, and the activation's between them
            bn = [k for k in kernels if re.match(r"^MIOpenBatchNorm", k)]
            act = [k for k in kernels if re.match(r"^MIOpenActive", k)]
            fold = [k for k in kernels if re.match(INV_KERNELS[0], k) or re.match(INV_KERNELS[1], k)]
            assert bn and act and len(bn) + len(act) + len(fold) == len(kernels), (plan.path, kernels)
            return
        pattern = BN_FUSED_KERNELS[row] if plan.path == "fused" else BN_KERNELS[row]
        assert all(re.match(pattern, k) for k in kernels), (plan.path, kernels)
        return
    if plan.path == "fused":
        assert kernels == ["MIOpenConvUniBatchNormActiv"], kernels
        return
    assert sid in SOLUTION_KERNELS, f"solution {sid} is new to this table: {kernels}"
    conv = kernels[:-2] if row == Row.CONV_BIAS_ACT else kernels
    assert all(re.match(SOLUTION_KERNELS[sid], k) for k in conv), (sid, kernels)
    if row == Row.CONV_BIAS_ACT:
        assert re.match(EPILOGUE[0], kernels[-2]) and re.match(EPILOGUE[1], kernels[-1]), kernels


def _solutions(case: Case) -> list[tuple[int, int]]:
    """The real library's (solution id, workspace) list for the case's convolution."""
    from hipdnn.engines import registry
    from hipdnn.engines.miopen.patterns import match

    engine = next(e for e in registry().values() if e.name == "MIOPEN_ENGINE")
    m = match(case.graph)
    return engine._solutions(m, engine.handle_state(case.graph.handle))  # type: ignore[attr-defined]


@pytest.mark.parametrize("row,dtype,layout", CASES, ids=[f"{r.name.lower()}-{d}-{lay}" for r, d, lay in CASES])
def test_real_library_decides(stub: Stub, row: Row, dtype: str, layout: str) -> None:
    case = build(row, DTYPES[dtype], layout)
    g = case.graph
    record: dict[str, Any] = {"version": stub.version, "arch": stub.arch, "row": row.name.lower(),
                              "dtype": dtype, "layout": layout}
    try:
        g.build()
        reason = g.engine_reasons()["MIOPEN_ENGINE"]
        plan = g.plans[0]
        declined = _declined_up_front(stub, row, dtype, layout)
        if declined is not None:
            assert plan.engine.name != "MIOPEN_ENGINE" and reason is not None and declined in reason, reason
            record.update(decision="declined", reason=reason)
            return
        if not stub.compiles_kernels and reason is not None:
            # 3.4.0 picked a solution, then could not build its kernel (no clang-21 here)
            assert "CompileSolution failed" in reason and "(7)" in reason, reason
            record.update(decision="kernel build failed", reason=reason)
            without_compiler(stub, f"{row.name} {dtype} {layout}: {reason}")
        assert plan.engine.name == "MIOPEN_ENGINE", reason
        record.update(decision="built", plan=plan.name, path=str(plan.path), notes=list(plan.notes),
                      workspace=plan.workspace_size, solution=plan.solution_id)
        if row in CONV_ROWS or (row == Row.CONV_BIAS_ACT and plan.path == "unfused"):
            sols = _solutions(case)
            record["solutions"] = sols
            knob = {k.id: k for k in g.get_knobs_for_engine("MIOPEN_ENGINE")}["global.workspace_size_limit"]
            lo, hi = min(w for _, w in sols), max(w for _, w in sols)
            assert (knob.constraint.min, knob.constraint.max) == (lo, NO_LIMIT)  # type: ignore[union-attr]
            sid, ws = next((s, w) for s, w in sols if w <= hi)
            assert plan.solution_id == sid
            assert plan.workspace_size == ws if row in CONV_ROWS else plan.workspace_size >= ws
        expected_path = ("immediate" if row in CONV_ROWS else
                         "activation" if row == Row.POINTWISE_ACT else
                         "op_tensor" if row == Row.POINTWISE_BINARY else
                         "norm" if row in NORM_KERNELS else
                         ("bn_activation" if stub.version == "7.2.4" else "unfused")
                         if row in BN_INF_ACT_ROWS else
                         "bn_activation" if row in BN_ACTIVATION_ROWS and stub.version == "7.2.4" else
                         None if row in BN_ACTIVATION_ROWS else "v2" if row in BN_KERNELS else None)
        if expected_path is not None:
            assert plan.path == expected_path, plan.name
        if plan.path == "unfused" and row not in (Row.CONV_BIAS_ACT, *BN_INF_ACT_ROWS):
            # 3.4: the fusion plan did not compile, or (not 4-D NCHW) was not tried
            want = ("miopenCompileFusionPlan returned" if layout in ("NCHW", "NCL")
                    else "4-D NCHW only")
            assert plan.notes and want in plan.notes[0], plan.notes
        mark = stub.log.mark()
        if not stub.compiles_kernels:
            with pytest.raises(MiopenExecutionError) as info:
                _run(case, plan.workspace_size)
            assert info.value.status == 7 and info.value.function.startswith("miopen")
            record.update(execute=f"{info.value.function}: status 7 (kernel build failed)")
            without_compiler(stub, f"{row.name} {dtype} {layout}: {info.value.function} status 7")
        _run(case, plan.workspace_size)
        events = stub.log.since(mark)
        errors = [e for e in events if e["event"] == "error"]
        assert not errors, errors
        kernels = [e["kernel"] for e in events if e["event"] == "launch"]
        record["kernels"] = kernels
        _check_kernels(row, plan, kernels)
    except MiopenBuildError as exc:  # never expected: build() falls back with the reason
        record.update(decision="error", reason=str(exc))
        raise
    finally:
        DECISIONS[(row.name.lower(), dtype, layout)] = record  # for test_emulation_agrees.py
        _report(record)
        g.close()


def test_bf16_conv_bias_act_names_the_fusion_compile(stub: Stub) -> None:
    """The real library compiles no bf16 fusion plan: the typed error names the call (on
    gfx90a the workaround table declines first, naming the issue)."""
    from hipdnn.core.errors import EngineError
    from hipdnn.engines import registry
    from hipdnn.engines.miopen import MiopenNotSupportedError

    case = build(Row.CONV_BIAS_ACT, DataType.BFLOAT16, "NCHW")
    engine = next(e for e in registry().values() if e.name == "MIOPEN_ENGINE")
    h = case.graph.handle
    knobs = {k.id: k.default for k in engine.get_knobs(case.graph, h)}
    if stub.arch == "gfx90a":
        with pytest.raises(EngineError, match="ROCm/rocm-libraries#5409"):
            engine.build_plan(case.graph, knobs, h)
        return
    with pytest.raises(MiopenNotSupportedError) as info:
        engine.build_plan(case.graph, knobs, h)
    assert info.value.function == "miopenCompileFusionPlan"
    assert info.value.status in (7, 8)  # 7: the chosen solver's kernel did not build; 8: none
