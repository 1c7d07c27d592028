"""MIOPEN_ENGINE on the emulated device: the MIOpen calls per row and version (DESIGN.md's call
map), knobs changing the path and the solution, fallbacks when symbols are missing or fusion
declines. (Errors, lifetime and staging: test_miopen_engine_lifetime.py.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from emulated.device import EmulatedDevice
from test_miopen_engine_graphs import Case, build
from test_miopen_engine_numerics import assert_refused, check_outputs, refusal

from hipdnn.core.errors import KnobError
from hipdnn.core.handle import Handle
from hipdnn.core.types import DataType as D
from hipdnn.engines.miopen import NO_LIMIT, MiopenEngine, Row
from hipdnn.interop import buffers as interop

pytest.importorskip("torch")

FP32_NCHW = (D.FLOAT, "NCHW")   # every fused kernel of the emulated Debian builds applies
FP16_NHWC = (D.HALF, "NHWC")    # no fused kernel applies: the fallbacks run
BF16_NHWC = (D.BFLOAT16, "NHWC")  # no fused kernel either; rows needing one are refused
CONFIGS = {"fp32_nchw": FP32_NCHW, "fp16_nhwc": FP16_NHWC, "bf16_nhwc": BF16_NHWC}
#: The path name of a refused (row, version, config): see refusal.
REFUSED = "refused"

# (row, version, path) -> the MIOpen calls one execute makes, in order
EXEC_CALLS: dict[tuple[Row, str, str], list[str]] = {}
for _v in ("3.4", "3.5"):
    EXEC_CALLS.update({
        (Row.BN_INFERENCE, _v, "v2"): ["miopenBatchNormalizationForwardInference_V2"],
        (Row.BN_INFERENCE_INV, _v, "v2"): ["miopenSetTensor", "miopenOpTensor",
                                            "miopenBatchNormalizationForwardInference_V2"],
        (Row.POINTWISE_ACT, _v, "activation"): ["miopenActivationForward"],
        (Row.POINTWISE_BINARY, _v, "op_tensor"): ["miopenOpTensor"],
        (Row.LAYERNORM, _v, "norm"): ["miopenLayerNormForward"],
        (Row.LAYERNORM_BACKWARD, _v, "norm"): ["miopenLayerNormBackward"],
        (Row.RMSNORM, _v, "norm"): ["miopenT5LayerNormForward"],
        (Row.RMSNORM_BACKWARD, _v, "norm"): ["miopenT5LayerNormBackward"],
        (Row.BN_TRAINING, _v, "v2"): ["miopenBatchNormalizationForwardTraining_V2"],
        (Row.BN_BACKWARD, _v, "v2"): ["miopenBatchNormalizationBackward_V2"],
        (Row.CONV_FPROP, _v, "immediate"): ["miopenConvolutionForwardImmediate"],
        (Row.CONV_DGRAD, _v, "immediate"): ["miopenConvolutionBackwardDataImmediate"],
        (Row.CONV_WGRAD, _v, "immediate"): ["miopenConvolutionBackwardWeightsImmediate"],
        (Row.CONV_BIAS_ACT, _v, "unfused"): ["miopenConvolutionForwardImmediate", "miopenOpTensor",
                                             "miopenActivationForward"],
        (Row.BN_TRAINING_ACT, _v, "unfused"): ["miopenBatchNormalizationForwardTraining_V2",
                                               "miopenActivationForward"],
        (Row.BN_INF_DRELU_BN_BWD, _v, "unfused"): [
            "miopenSetTensor", "miopenOpTensor",
            "miopenBatchNormalizationForwardInference_V2", "miopenActivationBackward",
            "miopenBatchNormalizationBackward_V2"],
        (Row.BN_TRAINING_ACT, _v, "fused"): ["miopenSetOpArgsBatchNormForward",
                                             "miopenSetOpArgsActivForward",
                                             "miopenExecuteFusionPlan"],
        (Row.BN_INF_DRELU_BN_BWD, _v, "fused"): ["miopenSetOpArgsBatchNormBackward",
                                                 "miopenSetOpArgsActivBackward",
                                                 "miopenExecuteFusionPlan"],
    })
EXEC_CALLS[(Row.CONV_BIAS_ACT, "3.4", "fused")] = [
    "miopenSetOpArgsConvForward", "miopenSetOpArgsBiasForward", "miopenSetOpArgsActivForward",
    "miopenExecuteFusionPlan"]
EXEC_CALLS[(Row.CONV_BIAS_ACT, "3.5", "fused")] = [
    "miopenSetOpArgsConvForward", "miopenSetOpArgsBiasForward", "miopenSetOpArgsActivForward",
    "miopenExecuteFusionPlan_v2"]
EXEC_CALLS[(Row.BN_INFERENCE_ACT, "3.4", "unfused")] = [
    "miopenBatchNormalizationForwardInference_V2", "miopenActivationForward"]
EXEC_CALLS[(Row.BN_INFERENCE_INV_ACT, "3.4", "unfused")] = [
    "miopenSetTensor", "miopenOpTensor", "miopenBatchNormalizationForwardInference_V2",
    "miopenActivationForward"]
EXEC_CALLS[(Row.BN_INFERENCE_ACT, "3.5", "bn_activation")] = [
    "miopenBatchNormForwardInferenceActivation"]
EXEC_CALLS[(Row.BN_INFERENCE_INV_ACT, "3.5", "bn_activation")] = [
    "miopenSetTensor", "miopenOpTensor", "miopenBatchNormForwardInferenceActivation"]
EXEC_CALLS[(Row.BN_TRAINING_ACT, "3.5", "bn_activation")] = [
    "miopenBatchNormForwardTrainingActivation"]
EXEC_CALLS[(Row.BN_INF_DRELU_BN_BWD, "3.5", "bn_activation")] = [
    "miopenBatchNormBackwardActivation"]


for _row in (Row.CONV_BIAS_ACT, Row.BN_TRAINING_ACT, Row.BN_INF_DRELU_BN_BWD, Row.BN_INFERENCE,
             Row.BN_INFERENCE_INV, Row.BN_INFERENCE_ACT, Row.BN_INFERENCE_INV_ACT,
             Row.POINTWISE_ACT, Row.POINTWISE_BINARY, Row.LAYERNORM_BACKWARD):
    for _v in ("3.4", "3.5"):
        EXEC_CALLS[(_row, _v, REFUSED)] = []


def expected_path(row: Row, version: str, config: str) -> str:
    if refusal(row, CONFIGS[config][0], version, CONFIGS[config][1]):
        return REFUSED
    if row in (Row.BN_INFERENCE, Row.BN_INFERENCE_INV, Row.BN_TRAINING, Row.BN_BACKWARD):
        return "v2"
    if row in (Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD):
        return "immediate"
    if row == Row.POINTWISE_ACT:
        return "activation"
    if row == Row.POINTWISE_BINARY:
        return "op_tensor"
    if row in (Row.LAYERNORM, Row.LAYERNORM_BACKWARD, Row.RMSNORM, Row.RMSNORM_BACKWARD):
        return "norm"
    if row in (Row.BN_INFERENCE_ACT, Row.BN_INFERENCE_INV_ACT):
        return "bn_activation" if version == "3.5" else "unfused"
    if row in (Row.BN_TRAINING_ACT, Row.BN_INF_DRELU_BN_BWD) and version == "3.5":
        return "bn_activation"
    return "fused" if config == "fp32_nchw" else "unfused"


def miopen_calls(device: EmulatedDevice, since: int = 0) -> list[str]:
    return [n for n in device.call_names()[since:] if n.startswith("miopen")]


def is_subsequence(needle: list[str], hay: list[str]) -> bool:
    it = iter(hay)
    return all(any(n == h for h in it) for n in needle)


def split_calls(device: EmulatedDevice, engine: MiopenEngine, case: Case,
                knobs: dict[str, Any] | None = None) -> tuple[Any, list[str], list[str]]:
    """Build then execute, recording the MIOpen calls of each phase separately."""
    h = Handle()
    assert engine.check_support(case.graph, h) is None
    values = {k.id: k.default for k in engine.get_knobs(case.graph, h)}
    values.update(knobs or {})
    mark = len(device.calls)
    plan = engine.build_plan(case.graph, values, h)
    built = miopen_calls(device, mark)
    outs = case.empty_outputs()
    buffers = {t.uid: interop.resolve(a) for t, a in case.inputs.items()}
    buffers.update({case.outputs[r].uid: interop.resolve(a) for r, a in outs.items()})
    ws = np.zeros(max(plan.workspace_size, 1), np.uint8)
    mark = len(device.calls)
    plan.execute(buffers, interop.resolve(ws) if plan.workspace_size else None, h)
    executed = miopen_calls(device, mark)
    check_outputs(case, outs)
    return plan, built, executed


# =================================================================== the call map, per row
@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("row", list(Row), ids=[r.name.lower() for r in Row])
def test_call_map(emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine,
                  row: Row, config: str) -> None:
    version = emulated_device.version_name
    case = build(row, *CONFIGS[config])
    if expected_path(row, version, config) == REFUSED:
        assert_refused(emulated_device, emulated_miopen_engine, case)
        return
    plan, built, executed = split_calls(emulated_device, emulated_miopen_engine, case)
    with plan:
        path = expected_path(row, version, config)
        assert plan.path == path
        assert executed == EXEC_CALLS[(row, version, path)]
        # build-time structure
        if path == "immediate" or (row == Row.CONV_BIAS_ACT and path == "unfused"):
            prefix = {Row.CONV_DGRAD: "miopenConvolutionBackwardData",
                      Row.CONV_WGRAD: "miopenConvolutionBackwardWeights"}.get(
                          row, "miopenConvolutionForward")
            # the solution list check_support made is the one build_plan chooses from
            assert prefix + "CompileSolution" in built and prefix + "GetSolutionCount" not in built
        fusion = ["miopenCreateFusionPlan", "miopenCompileFusionPlan"]
        if path in ("fused", "unfused") and row in (Row.CONV_BIAS_ACT, Row.BN_TRAINING_ACT,
                                                    Row.BN_INF_DRELU_BN_BWD):
            if row != Row.CONV_BIAS_ACT and case.layout != "NCHW":
                # 3.4's batchnorm + activation fusion kernels are NCHW-only: not even tried
                assert "miopenCreateFusionPlan" not in built and path == "unfused"
                assert "4-D NCHW only" in plan.notes[0]
            else:
                assert is_subsequence(fusion, built)
            if path == "fused":
                assert "miopenCreateOperatorArgs" in built
            elif "miopenCreateFusionPlan" in built:
                assert "miopenDestroyFusionPlan" in built  # the declined plan is freed at once
        if row.name.startswith("BN"):
            assert "miopenDeriveBNTensorDescriptor" in built  # FP32 parameter descriptors
        if row == Row.CONV_BIAS_ACT and path == "fused" and version == "3.5":
            assert "miopenFusionPlanGetWorkSpaceSize" in built


def test_bn_training_running_stats_call(emulated_device: EmulatedDevice,
                                        emulated_miopen_engine: MiopenEngine) -> None:
    """Running stats: prev copied into next, MIOpen updates them in place with momentum."""
    case = build(Row.BN_TRAINING, D.HALF, "NHWC", running=True)
    plan, _, _ = split_calls(emulated_device, emulated_miopen_engine, case)
    with plan:
        call = emulated_device.calls_of("miopenBatchNormalizationForwardTraining_V2")[-1]
        assert call.arg("expAvgFactor") == pytest.approx(0.2)  # the builder's SEED_MOMENTUM
        assert call.arg("epsilon") == pytest.approx(1e-3)  # the builder's SEED_EPSILON
        assert call.arg("resultRunningMean") and call.arg("resultRunningVariance")
    plain = build(Row.BN_TRAINING, D.HALF, "NHWC")
    plan, _, _ = split_calls(emulated_device, emulated_miopen_engine, plain)
    with plan:
        call = emulated_device.calls_of("miopenBatchNormalizationForwardTraining_V2")[-1]
        assert not call.arg("resultRunningMean") and not call.arg("resultRunningVariance")


def test_alpha_beta_are_float_one_zero(emulated_device: EmulatedDevice,
                                       emulated_miopen_engine: MiopenEngine) -> None:
    import ctypes

    plan, _, _ = split_calls(emulated_device, emulated_miopen_engine,
                             build(Row.BN_BACKWARD, D.FLOAT, "NCHW"))
    with plan:
        call = emulated_device.calls_of("miopenBatchNormalizationBackward_V2")[-1]
        for name, want in (("alphaDataDiff", 1.0), ("betaDataDiff", 0.0), ("alphaParamDiff", 1.0),
                           ("betaParamDiff", 0.0)):
            assert ctypes.c_float.from_address(call.arg(name)).value == want


# ======================================================================= knobs change the path
def test_benchmarking_selects_find2(emulated_device: EmulatedDevice,
                                    emulated_miopen_engine: MiopenEngine) -> None:
    version = emulated_device.version_name
    case = build(Row.CONV_FPROP, D.FLOAT, "NHWC")
    plan, built, executed = split_calls(emulated_device, emulated_miopen_engine, case,
                                        {"global.benchmarking": 1})
    with plan:
        assert plan.path == "find2"
        # the problem copies the descriptor: find mode Normal must be set before it is created
        assert is_subsequence(["miopenSetConvolutionFindMode", "miopenCreateConvProblem",
                               "miopenSetProblemTensorDescriptor"], built)
        assert built.count("miopenSetProblemTensorDescriptor") == 3
        assert "miopenConvolutionForwardCompileSolution" not in built
        # Find 2.0 runs at build, on buffers MIOpen allocates (never the caller's), with no
        # workspace limit (the knob's default), so no solver is hidden by a workspace cap
        find = ["miopenCreateFindOptions", "miopenSetFindOptionTuning",
                "miopenSetFindOptionResultsOrder", "miopenFindSolutions",
                "miopenGetSolutionWorkspaceSize"]
        assert is_subsequence(find, built)
        assert not {"miopenSetFindOptionPreallocatedTensor", "miopenSetFindOptionWorkspaceLimit",
                    "miopenSetFindOptionPreallocatedWorkspace"} & set(built)
        # no solution list was asked for: Find needs none
        assert "miopenConvolutionForwardGetSolutionCount" not in built
        assert executed == ["miopenRunSolution"]
        policy = ["miopenGetTuningPolicy", "miopenSetTuningPolicy", "miopenFindSolutions",
                  "miopenSetTuningPolicy"]
        if version == "3.5":
            assert is_subsequence(policy, built)
            sets = [c.arg("newValue") for c in emulated_device.calls_of("miopenSetTuningPolicy")]
            assert sets == [3, 1]  # Search while finding, then the previous policy (None) again
        else:
            assert "miopenSetTuningPolicy" not in built
        rec = emulated_device.find_records[-1]
        assert (rec.find_mode, rec.tuning) == (1, 1)
        assert rec.workspace_limit == (1 << 64) - 1  # MIOpen's default: no limit
        if version == "3.5":
            assert rec.tuning_policy == 3
        # the plan runs the fastest solution Find returned, with the workspace it needs
        results = plan.runner.op.find_results
        assert [r.solver_id for r in results] == list(rec.returned)
        assert [r.time_ms for r in results] == sorted(r.time_ms for r in results)
        assert plan.solution_id == results[0].solver_id
        assert plan.workspace_size == results[0].workspace_size
        run = emulated_device.calls_of("miopenRunSolution")[-1]
        assert run.arg("nInputs") == 3
        # a second execute runs the found solution again
        mark = len(emulated_device.calls)
        outs = case.empty_outputs()
        bufs = {t.uid: interop.resolve(a) for t, a in case.inputs.items()}
        bufs.update({case.outputs[r].uid: interop.resolve(a) for r, a in outs.items()})
        ws = np.zeros(max(plan.workspace_size, 1), np.uint8)
        plan.execute(bufs, interop.resolve(ws), None)  # None: the handle the plan was built on
        again = miopen_calls(emulated_device, mark)
        assert again == ["miopenRunSolution"]
        check_outputs(case, outs)


def test_find2_with_a_limit_passes_it(emulated_device: EmulatedDevice,
                                      emulated_miopen_engine: MiopenEngine) -> None:
    case = build(Row.CONV_FPROP, D.FLOAT, "NCHW")
    plan, _built, _ = split_calls(emulated_device, emulated_miopen_engine, case,
                                 {"global.benchmarking": 1, "global.workspace_size_limit": 1 << 20})
    with plan:
        assert emulated_device.find_records[-1].workspace_limit == 1 << 20
        assert plan.workspace_size <= 1 << 20
        assert dict(plan.knobs)["global.workspace_size_limit"] == 1 << 20


def test_benchmarking_zero_is_immediate(emulated_device: EmulatedDevice,
                                        emulated_miopen_engine: MiopenEngine) -> None:
    plan, built, executed = split_calls(emulated_device, emulated_miopen_engine,
                                        build(Row.CONV_WGRAD, D.HALF, "NCDHW"),
                                        {"global.benchmarking": 0})
    with plan:
        assert plan.path == "immediate"
        assert "miopenFindSolutions" not in built + executed
        assert "miopenSetTuningPolicy" not in built + executed


def _knobs(engine: MiopenEngine, case: Case) -> dict[str, Any]:
    return {k.id: k for k in engine.get_knobs(case.graph, Handle())}


def test_workspace_knob_range_and_choice(emulated_device: EmulatedDevice,
                                         emulated_miopen_engine: MiopenEngine) -> None:
    case = build(Row.CONV_FPROP, D.FLOAT, "NCHW")
    knobs = _knobs(emulated_miopen_engine, case)
    ws = knobs["global.workspace_size_limit"]
    assert (ws.constraint.min, ws.constraint.max, ws.default) == (0, NO_LIMIT, NO_LIMIT)
    bench = knobs["global.benchmarking"]
    assert (bench.constraint.min, bench.constraint.max, bench.default) == (0, 1, 0)
    chosen = {}
    for limit in (NO_LIMIT, 16 << 20, (1 << 20) + 5, 0):
        plan, _, _ = split_calls(emulated_device, emulated_miopen_engine, case,
                                 {"global.workspace_size_limit": limit})
        with plan:
            call = emulated_device.calls_of("miopenConvolutionForwardImmediate")[-1]
            chosen[limit] = (call.arg("solution_id"), plan.workspace_size)
    assert chosen == {NO_LIMIT: (101, 16 << 20), 16 << 20: (101, 16 << 20),
                      (1 << 20) + 5: (102, 1 << 20), 0: (103, 0)}


def test_workspace_limit_below_min_is_a_knob_error(emulated_device: EmulatedDevice,
                                                   emulated_miopen_engine: MiopenEngine) -> None:
    from emulated._conv import SolutionSpec

    emulated_device.conv_catalogue = lambda p: [SolutionSpec(7, 5, 4 << 20, 0.2),
                                                SolutionSpec(8, 1, 1 << 20, 0.9)]
    case = build(Row.CONV_DGRAD, D.FLOAT, "NCHW")
    ws = _knobs(emulated_miopen_engine, case)["global.workspace_size_limit"]
    assert (ws.constraint.min, ws.constraint.max) == (1 << 20, NO_LIMIT)
    with pytest.raises(KnobError) as info:
        emulated_miopen_engine.build_plan(case.graph, {"global.benchmarking": 0,
                                                       "global.workspace_size_limit": 1000}, Handle())
    assert f"[1048576, {NO_LIMIT}]" in str(info.value)
    assert info.value.knob == "global.workspace_size_limit"
    # through the graph API the constraint rejects it when the plan is created
    g = case.graph
    g.build_operation_graph(Handle())
    with pytest.raises(KnobError) as info:
        g.create_execution_plan_ext("MIOPEN_ENGINE", {"global.workspace_size_limit": 1000})
    assert "1048576" in str(info.value)


@pytest.mark.parametrize("row", [Row.BN_INFERENCE, Row.BN_INFERENCE_INV, Row.BN_TRAINING,
                                 Row.BN_TRAINING_ACT,
                                 Row.BN_BACKWARD, Row.BN_INF_DRELU_BN_BWD])
def test_no_workspace_knob_without_convolution(emulated_miopen_engine: MiopenEngine,
                                               row: Row) -> None:
    knobs = _knobs(emulated_miopen_engine, build(row, D.FLOAT, "NCHW"))
    assert set(knobs) == {"global.benchmarking"}


# ============================================================================== fallbacks
def test_missing_bn_activation_symbols_fall_back_to_fusion() -> None:
    dev = EmulatedDevice("3.5", without={"miopenBatchNormForwardTrainingActivation",
                                          "miopenBatchNormBackwardActivation"})
    engine = MiopenEngine(lambda: dev.miopen, lambda: dev.hip)
    for row in (Row.BN_TRAINING_ACT, Row.BN_INF_DRELU_BN_BWD):
        plan, _, executed = split_calls(dev, engine, build(row, D.FLOAT, "NCHW"))
        with plan:
            assert plan.path == "fused"
            assert executed[-1] == "miopenExecuteFusionPlan_v2"


def test_missing_execute_v2_and_tensor_v2_fall_back() -> None:
    dev = EmulatedDevice("3.5", without={"miopenExecuteFusionPlan_v2",
                                          "miopenSetTensorDescriptorV2"})
    engine = MiopenEngine(lambda: dev.miopen, lambda: dev.hip)
    plan, built, executed = split_calls(dev, engine, build(Row.CONV_BIAS_ACT, D.FLOAT, "NCHW"))
    with plan:
        assert executed[-1] == "miopenExecuteFusionPlan"
        assert "miopenSetTensorDescriptor" in built and "miopenSetTensorDescriptorV2" not in built
        assert "miopenFusionPlanGetWorkSpaceSize" not in built


@pytest.mark.parametrize("status", [3, 6, 8])
def test_fusion_declined_falls_back(emulated_device: EmulatedDevice,
                                    emulated_miopen_engine: MiopenEngine, status: int) -> None:
    """A compile returning BadParm / NotImplemented / UnsupportedOp means 'use the unfused path'."""
    emulated_device.fail("miopenCompileFusionPlan", status)
    # CLAMP (a lower clip) where MIOpen has it; 3.4 declines CLAMP, so there the upper clip only
    lower = None if "3.4" in emulated_device.version_name else 0.1
    case = build(Row.CONV_BIAS_ACT, D.FLOAT, "NCHW", lower=lower, upper=2.0)
    plan, _, executed = split_calls(emulated_device, emulated_miopen_engine, case)
    with plan:
        assert plan.path == "unfused"
        assert executed == EXEC_CALLS[(Row.CONV_BIAS_ACT, emulated_device.version_name, "unfused")]


def test_fusion_compile_other_error_is_typed(emulated_device: EmulatedDevice,
                                             emulated_miopen_engine: MiopenEngine) -> None:
    from hipdnn.core.errors import EngineError
    from hipdnn.engines.miopen import MiopenBuildError

    emulated_device.fail("miopenCompileFusionPlan", 5)
    case = build(Row.CONV_BIAS_ACT, D.FLOAT, "NCHW")
    h = Handle()
    knobs = {k.id: k.default for k in emulated_miopen_engine.get_knobs(case.graph, h)}
    with pytest.raises(MiopenBuildError) as info:
        emulated_miopen_engine.build_plan(case.graph, knobs, h)
    assert isinstance(info.value, EngineError)
    assert "miopenCompileFusionPlan" in str(info.value) and "convolution fprop" in str(info.value)


def test_streams_follow_the_handle(emulated_device: EmulatedDevice,
                                   emulated_miopen_engine: MiopenEngine) -> None:
    h = Handle()
    case = build(Row.BN_INFERENCE, D.FLOAT, "NCHW")
    assert emulated_miopen_engine.check_support(case.graph, h) is None
    stream = emulated_device.create_stream()
    h.set_stream(stream)
    h.set_stream(stream)  # idempotent
    calls = emulated_device.calls_of("miopenSetStream")
    assert len(calls) == 1 and calls[0].arg("streamID") == stream
    h.close()
    assert emulated_device.calls_of("miopenDestroy")


def test_handle_with_stream(emulated_device: EmulatedDevice,
                            emulated_miopen_engine: MiopenEngine) -> None:
    """A Handle created on a stream: miopenCreateWithStream, and staged outputs wait for it."""
    stream = emulated_device.create_stream()
    h = Handle(device=0, stream=stream)
    case = build(Row.BN_INFERENCE, D.HALF, "NCDHW")  # (3.4 has no channels-last inference)
    assert emulated_miopen_engine.check_support(case.graph, h) is None
    created = emulated_device.calls_of("miopenCreateWithStream")
    assert len(created) == 1 and created[0].arg("stream") == stream
    knobs = {k.id: k.default for k in emulated_miopen_engine.get_knobs(case.graph, h)}
    with emulated_miopen_engine.build_plan(case.graph, knobs, h) as plan:
        outs = case.empty_outputs()
        bufs = {t.uid: interop.resolve(a) for t, a in case.inputs.items()}
        bufs.update({case.outputs[r].uid: interop.resolve(a) for r, a in outs.items()})
        mark = len(emulated_device.calls)
        plan.execute(bufs, None, h)
        names = emulated_device.call_names()[mark:]
        assert is_subsequence(["miopenBatchNormalizationForwardInference_V2",
                               "hipStreamSynchronize", "hipMemcpy"], names)
        check_outputs(case, outs)
    h.close()


@pytest.mark.parametrize("knobs", [None, {"global.benchmarking": 0}, {"global.benchmarking": 1}],
                         ids=["defaults", "immediate", "find"])
def test_one_solution_enumeration_per_build(emulated_device: EmulatedDevice,
                                            emulated_miopen_engine: MiopenEngine,
                                            knobs: dict[str, int] | None) -> None:
    """check_support, the knob listing and build_plan share one solution list: MIOpen
    enumerates once per build (it did three times); a second build of another graph of the
    same problem asks again, once."""
    for _ in range(2):
        case = build(Row.CONV_DGRAD, D.HALF, "NHWC")
        g = case.graph
        mark = len(emulated_device.calls)
        g.build_operation_graph(Handle())
        g.create_execution_plans()
        if knobs is not None:
            g.create_execution_plan_ext("MIOPEN_ENGINE", knobs)
        g.build_plans()
        calls = miopen_calls(emulated_device, mark)
        assert calls.count("miopenConvolutionBackwardDataGetSolutionCount") == 1
        assert calls.count("miopenFindSolutions") == (1 if knobs and knobs["global.benchmarking"] else 0)
        assert g.plans[0].engine is emulated_miopen_engine
        g.close()
