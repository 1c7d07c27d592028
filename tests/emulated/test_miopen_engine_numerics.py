"""Every seed row x dtype x layout through MIOPEN_ENGINE on the emulated device (MIOpen 3.4 and
3.5 symbol sets) matches PyTorch within DESIGN.md's tolerances. Where the emulated device's
fusion predicate declines, the fallback path runs and must match just the same, except for the
bf16 rows whose only fallback is MIOpen's standalone activation (fp32/fp16 kernels only): those
are refused with the rule as the reason (:func:`refusal`, :func:`assert_refused`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from emulated.device import EmulatedDevice
from test_miopen_engine_graphs import DTYPES, LAYOUT_1D, LAYOUT_NAMES, NORM_ROWS, Case, build

from hipdnn.core.errors import EngineError
from hipdnn.core.handle import Handle
from hipdnn.core.types import DataType
from hipdnn.engines.miopen import MiopenEngine, MiopenNotSupportedError, MiopenPlan, Row
from hipdnn.graph.graph import Graph
from hipdnn.interop import buffers as interop

pytest.importorskip("torch")


def run_case(engine: MiopenEngine, case: Case, knobs: dict[str, Any] | None = None,
             handle: Handle | None = None) -> tuple[MiopenPlan, dict[str, np.ndarray]]:
    """check_support -> knobs -> build_plan -> execute with host arrays (staged)."""
    h = handle if handle is not None else Handle()
    reason = engine.check_support(case.graph, h)
    assert reason is None, reason
    values = {k.id: k.default for k in engine.get_knobs(case.graph, h)}
    values.update(knobs or {})
    plan = engine.build_plan(case.graph, values, h)
    assert isinstance(plan, MiopenPlan)
    outs = case.empty_outputs()
    buffers = {t.uid: interop.resolve(a) for t, a in case.inputs.items()}
    buffers.update({case.outputs[r].uid: interop.resolve(a) for r, a in outs.items()})
    ws = np.zeros(max(plan.workspace_size, 1), np.uint8)
    plan.execute(buffers, interop.resolve(ws) if plan.workspace_size else None, h)
    return plan, outs


#: The 3.5 calls bf16 batchnorm + activation rows need (3.4's fusion plans are fp32/fp16 only).
BN_ACTIVATION_CALLS = {Row.BN_TRAINING_ACT: "miopenBatchNormForwardTrainingActivation",
                       Row.BN_INF_DRELU_BN_BWD: "miopenBatchNormBackwardActivation"}


def refusal(row: Row, dtype: DataType, version: str, layout: str = "NCHW") -> str | None:
    """How MIOPEN_ENGINE refuses ``row`` in ``dtype``/``layout`` on the emulated MIOpen
    ``version``: "check_support" (declined up front: bf16 batchnorm + activation on 3.4),
    "layout" (declined up front: channels-last batchnorm inference on 3.4, which the real
    3.4.0 has no solver for), "build" (the fusion plan did not compile) or None."""
    if row == Row.LAYERNORM_BACKWARD and version == "3.4":
        return "norm_34"  # miopenLayerNormBackward is MIOpen >= 3.5
    if dtype == DataType.BFLOAT16 and row in (Row.POINTWISE_ACT, Row.POINTWISE_BINARY):
        return "pointwise_bf16"  # AMD's rule: FLOAT/HALF (MIOpenNeuron.cl has no bf16)
    if row == Row.POINTWISE_BINARY and layout.endswith("C"):
        return "channels_first"  # AMD's rule: packed channels-first
    if dtype == DataType.BFLOAT16 and row in BN_INF_ACT_ROWS and version == "3.4":
        return "bf16_inf_act"
    if dtype == DataType.BFLOAT16 and row == Row.CONV_BIAS_ACT:
        return "build"  # the emulated Debian builds fuse fp32 NCHW convolutions only
    if dtype == DataType.BFLOAT16 and row in BN_ACTIVATION_CALLS and version == "3.4":
        return "check_support"
    if version == "3.4" and layout.endswith("C") and row in BN_INFERENCE_ROWS:
        return "layout"
    if version == "3.4" and layout == "NDHWC" and row in BN_V2_ROWS:
        return "ndhwc"
    return None


#: AMD's batchnorm inference + activation rows.
BN_INF_ACT_ROWS = (Row.BN_INFERENCE_ACT, Row.BN_INFERENCE_INV_ACT)
#: Rows calling batchnorm inference (on 3.4 also the DReLU row's unfused path).
BN_INFERENCE_ROWS = (Row.BN_INFERENCE, Row.BN_INFERENCE_INV, Row.BN_INF_DRELU_BN_BWD,
                     *BN_INF_ACT_ROWS)
#: Rows calling 3.4's batchnorm training/backward kernels, which mislaunch NDHWC (the real
#: 3.4's kernels in tests/amdkernels read past the per-channel tensors).
BN_V2_ROWS = (Row.BN_TRAINING, Row.BN_BACKWARD, Row.BN_TRAINING_ACT)


def assert_refused(device: EmulatedDevice, engine: MiopenEngine, case: Case) -> str:
    """Assert the refusal :func:`refusal` predicts, with its reason; returns the reason."""
    kind = refusal(case.row, case.dtype, device.version_name, case.layout)
    assert kind is not None
    h = Handle()
    reason = engine.check_support(case.graph, h)
    if kind == "layout":
        assert reason is not None and "NCHW only" in reason and "MIOpen >= 3.5" in reason, reason
        with pytest.raises(EngineError, match="BnFwdInference"):
            engine.build_plan(case.graph, {"global.benchmarking": 0}, h)
        h.close()
        return reason
    if kind == "ndhwc":
        assert reason is not None and "in NDHWC needs MIOpen >= 3.5" in reason, reason
        with pytest.raises(EngineError, match="per channel x depth"):
            engine.build_plan(case.graph, {"global.benchmarking": 0}, h)
        h.close()
        return reason
    if kind in ("pointwise_bf16", "channels_first", "bf16_inf_act", "norm_34"):
        want = {"pointwise_bf16": "BFLOAT16", "channels_first": "not packed channels-first",
                "bf16_inf_act": "needs miopenBatchNormForwardInferenceActivation (MIOpen >= 3.5)",
                "norm_34": "needs miopenLayerNormBackward, which MIOpen 3.4.0 does not export"}
        assert reason is not None and want[kind] in reason, reason
        with pytest.raises(EngineError, match=want[kind].split(" (")[0]):
            engine.build_plan(case.graph, {"global.benchmarking": 0}, h)
        h.close()
        return reason
    if kind == "check_support":
        call = BN_ACTIVATION_CALLS[case.row]
        assert reason is not None and f"bf16 {case.row.value} needs {call} (MIOpen >= 3.5)" in reason
        assert "standalone activation kernels support fp32/fp16 only" in reason
        with pytest.raises(EngineError, match=call):
            engine.build_plan(case.graph, {"global.benchmarking": 0}, h)
        h.close()
        return reason
    assert reason is None, reason  # the fusion plan compile is the test: made at build time
    knobs = {k.id: k.default for k in engine.get_knobs(case.graph, h)}
    baseline = set(device.live_objects())
    with pytest.raises(MiopenNotSupportedError) as info:
        engine.build_plan(case.graph, knobs, h)
    err = info.value
    assert isinstance(err, EngineError)
    assert err.function == "miopenCompileFusionPlan" and err.status == 8  # UnsupportedOp
    assert case.row.value in str(err) and "fp32/fp16 only" in str(err)
    assert set(device.live_objects()) == baseline  # the declined fusion plan and descriptors freed
    h.close()
    return str(err)


def check_outputs(case: Case, outs: dict[str, np.ndarray]) -> None:
    atol, rtol = case.tol()
    for role, want in case.expected.items():
        got = outs[role].astype(np.float32)
        np.testing.assert_allclose(got, want, atol=atol, rtol=rtol,
                                   err_msg=f"{case.row.value} {case.dtype.name} {case.layout}: {role}")


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("dtype", list(DTYPES), ids=list(DTYPES))
@pytest.mark.parametrize("row", list(Row), ids=[r.name.lower() for r in Row])
def test_row_matches_torch(emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine,
                           row: Row, dtype: str, layout: str) -> None:
    case = build(row, DTYPES[dtype], layout)
    if refusal(row, case.dtype, emulated_device.version_name, case.layout):
        assert_refused(emulated_device, emulated_miopen_engine, case)
        return
    plan, outs = run_case(emulated_miopen_engine, case)
    with plan:
        check_outputs(case, outs)


@pytest.mark.parametrize("layout", LAYOUT_1D)
@pytest.mark.parametrize("dtype", list(DTYPES), ids=list(DTYPES))
@pytest.mark.parametrize("row", list(Row), ids=[r.name.lower() for r in Row])
def test_row_1d_matches_torch(emulated_device: EmulatedDevice,
                              emulated_miopen_engine: MiopenEngine, row: Row, dtype: str,
                              layout: str) -> None:
    """1-D graphs (rank-3 tensors, NCL and NLC) on every row: the convolution and batchnorm
    rows padded to 4-D N,C,L,1 as AMD's provider does (NCL as NCHW, NLC as NHWC, W = 1), the
    standalone pointwise rows as they are; the same refusals as the 4-D layout they pad to."""
    case = build(row, DTYPES[dtype], layout)
    if refusal(row, case.dtype, emulated_device.version_name, case.layout):
        assert_refused(emulated_device, emulated_miopen_engine, case)
        return
    plan, outs = run_case(emulated_miopen_engine, case)
    with plan:
        # the norm rows take any rank as it is (MIOpen's layer norm calls are rank-agnostic)
        assert plan.match.padded_1d == (row not in (Row.POINTWISE_ACT, Row.POINTWISE_BINARY,
                                                    *NORM_ROWS))
        assert plan.match.layout_name == layout or (row == Row.POINTWISE_ACT and layout == "NCL")
        check_outputs(case, outs)


@pytest.mark.parametrize("lower,upper", [(None, None), (0.25, None), (-0.3, 0.8), (None, 0.7)],
                         ids=["relu", "lower", "lower_upper", "upper"])
@pytest.mark.parametrize("row", [Row.CONV_BIAS_ACT, Row.BN_TRAINING_ACT, Row.BN_INF_DRELU_BN_BWD],
                         ids=["conv_bias_act", "bn_training_act", "bn_inf_drelu_bn_bwd"])
def test_activation_clips(emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine,
                          row: Row, lower: float | None, upper: float | None) -> None:
    case = build(row, DTYPES["fp32"], "NCHW", lower=lower, upper=upper)
    if lower not in (None, 0.0) and "3.4" in emulated_device.version_name:
        # a lower clip is MIOpen's CLAMP, which MIOpen 3.4's kernels lack (AMD's kernels compute
        # zeros for it, tests/amdkernels): declined, never a wrong answer
        reason = emulated_miopen_engine.check_support(case.graph, Handle())
        assert reason is not None and "CLAMP" in reason and "3.5" in reason, reason
        return
    plan, outs = run_case(emulated_miopen_engine, case)
    with plan:
        check_outputs(case, outs)


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("dtype", list(DTYPES), ids=list(DTYPES))
def test_bn_training_running_stats(emulated_device: EmulatedDevice,
                                   emulated_miopen_engine: MiopenEngine, dtype: str,
                                   layout: str) -> None:
    case = build(Row.BN_TRAINING, DTYPES[dtype], layout, running=True)
    if refusal(case.row, case.dtype, emulated_device.version_name, case.layout):
        assert_refused(emulated_device, emulated_miopen_engine, case)
        return
    plan, outs = run_case(emulated_miopen_engine, case)
    with plan:
        check_outputs(case, outs)


def test_conv_without_bias(emulated_miopen_engine: MiopenEngine) -> None:
    case = build(Row.CONV_BIAS_ACT, DTYPES["fp32"], "NHWC", bias=False)
    plan, outs = run_case(emulated_miopen_engine, case)
    with plan:
        check_outputs(case, outs)


@pytest.mark.parametrize("bench", [0, 1])
def test_conv_find_path_matches(emulated_miopen_engine: MiopenEngine, bench: int) -> None:
    for row in (Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD):
        case = build(row, DTYPES["fp32"], "NCHW")
        plan, outs = run_case(emulated_miopen_engine, case, {"global.benchmarking": bench})
        with plan:
            assert plan.path == ("find2" if bench else "immediate")
            check_outputs(case, outs)


def test_through_the_graph_api(emulated_miopen_engine: MiopenEngine) -> None:
    """Graph.create_execution_plan_ext + execute with numpy arrays, on the registered engine."""
    from hipdnn.engines import register, registry

    previous = registry().get(emulated_miopen_engine.engine_id)
    register(emulated_miopen_engine)
    try:
        case = build(Row.CONV_BIAS_ACT, DTYPES["fp16"], "NHWC")
        g: Graph = case.graph
        g.build_operation_graph(Handle())
        g.create_execution_plan_ext("MIOPEN_ENGINE", {"global.benchmarking": 0})
        g.build_plans()
        assert g.get_execution_plan_engine_id() == emulated_miopen_engine.engine_id
        outs = case.empty_outputs()
        pack = {**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}}
        ws = np.zeros(max(g.get_workspace_size(), 1), np.uint8)
        g.execute(pack, ws)
        check_outputs(case, outs)
        g.close()
    finally:
        if previous is not None:
            register(previous)


@pytest.mark.parametrize("config", [("fp32", "NCHW"), ("fp16", "NCHW"), ("bf16", "NHWC"),
                                    ("fp16", "NDHWC")], ids=lambda c: "-".join(c))
def test_bn_training_act_running_stats(emulated_device: EmulatedDevice,
                                       emulated_miopen_engine: MiopenEngine,
                                       config: tuple[str, str]) -> None:
    """Running statistics through every BN training + activation path (3.5 call, 3.4 fusion
    plan, unfused); bf16 on 3.4 is refused."""
    case = build(Row.BN_TRAINING_ACT, DTYPES[config[0]], config[1], running=True,
                 lower=0.0, upper=1.5)
    if refusal(case.row, case.dtype, emulated_device.version_name, case.layout):
        assert_refused(emulated_device, emulated_miopen_engine, case)
        return
    plan, outs = run_case(emulated_miopen_engine, case)
    with plan:
        check_outputs(case, outs)


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("row", [Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD,
                                 Row.CONV_BIAS_ACT], ids=lambda r: r.name.lower())
def test_find2_every_layout(emulated_device: EmulatedDevice,
                            emulated_miopen_engine: MiopenEngine, row: Row, layout: str) -> None:
    for dtype in ("fp16", "bf16"):
        case = build(row, DTYPES[dtype], layout)
        if refusal(row, case.dtype, emulated_device.version_name, case.layout):
            assert_refused(emulated_device, emulated_miopen_engine, case)
            continue
        plan, outs = run_case(emulated_miopen_engine, case, {"global.benchmarking": 1})
        with plan:
            assert plan.path in ("find2", "fused", "unfused")
            check_outputs(case, outs)


@pytest.mark.parametrize("geometry", [{"groups": 2}, {"stride": 2}, {"dilation": 2},
                                      {"groups": 3, "stride": 2}],
                         ids=["grouped", "strided", "dilated", "grouped_strided"])
@pytest.mark.parametrize("row", [Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD],
                         ids=lambda r: r.name.lower())
def test_conv_geometry_beyond_the_seed(emulated_miopen_engine: MiopenEngine, row: Row,
                                       geometry: dict[str, int]) -> None:
    """Grouped, strided and dilated convolutions (group count set on the descriptor), 2-D, 3-D
    and 1-D (padded to N,C,L,1: the stride and dilation get a trailing 1, the padding a 0)."""
    from test_miopen_engine_graphs import conv_case

    for layout in ("NCHW", "NDHWC", "NCL", "NLC"):
        case = conv_case(row, DTYPES["fp32"], layout, **geometry)
        case.graph.validate()
        plan, outs = run_case(emulated_miopen_engine, case)
        with plan:
            check_outputs(case, outs)


@pytest.mark.parametrize("config", [("fp32", "NCHW"), ("fp16", "NHWC"), ("bf16", "NHWC")],
                         ids=lambda c: "-".join(c))
@pytest.mark.parametrize("row", [Row.BN_TRAINING, Row.BN_TRAINING_ACT], ids=lambda r: r.name.lower())
def test_bn_training_without_saved_stats(emulated_device: EmulatedDevice,
                                         emulated_miopen_engine: MiopenEngine, row: Row,
                                         config: tuple[str, str]) -> None:
    """Saved mean / inverse variance left virtual: NULL for _V2, scratch for the fusion plan."""
    case = build(row, DTYPES[config[0]], config[1])
    if refusal(row, case.dtype, emulated_device.version_name, case.layout):
        assert_refused(emulated_device, emulated_miopen_engine, case)
        return
    for role in ("mean", "inv_variance"):
        case.outputs.pop(role).set_output(False)
        case.expected.pop(role)
    plan, outs = run_case(emulated_miopen_engine, case)
    with plan:
        assert plan.match.t.mean is None and plan.match.t.inv_variance is None
        check_outputs(case, outs)


@pytest.mark.parametrize("row", [*BN_ACTIVATION_CALLS, Row.CONV_BIAS_ACT],
                         ids=lambda r: r.name.lower())
def test_refused_bf16_falls_through_to_the_next_engine(emulated_device: EmulatedDevice,
                                                       emulated_miopen_engine: MiopenEngine,
                                                       row: Row) -> None:
    """Through the graph API: a refused bf16 row runs on CPU_REFERENCE_ENGINE, and the refusal
    is MIOPEN_ENGINE's reason when it is the only engine left (3.5's BN *Activation calls run)."""
    from hipdnn.core.errors import GraphNotSupportedError

    case = build(row, DataType.BFLOAT16, "NHWC")
    refused = refusal(row, case.dtype, emulated_device.version_name, case.layout)
    g = case.graph
    g.build_operation_graph(Handle())
    g.build()
    outs = case.empty_outputs()
    pack = {**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}}
    ws = np.zeros(max(g.get_workspace_size(), 1), np.uint8)
    g.execute(pack, ws)
    check_outputs(case, outs)
    if refused is None:
        assert g.plans[0].engine is emulated_miopen_engine
        return
    assert g.plans[0].engine.name == "CPU_REFERENCE_ENGINE"
    g.create_execution_plans()
    g.deselect_engines("CPU_REFERENCE_ENGINE")
    with pytest.raises(GraphNotSupportedError) as info:
        g.build_plans()
    reason = info.value.reasons["MIOPEN_ENGINE"]
    assert "fp32/fp16 only" in reason and "bf16" in reason
    if refused == "build":
        assert reason.startswith("build_plan failed: MIOPEN_ENGINE: ")
        assert "miopenCompileFusionPlan" in reason
    else:
        assert f"needs {BN_ACTIVATION_CALLS[row]} (MIOpen >= 3.5)" in reason
    g.close()


def test_bf16_conv_bias_act_fuses_where_the_library_can(emulated_device: EmulatedDevice,
                                                        emulated_miopen_engine: MiopenEngine) -> None:
    """The fusion plan compile is the applicability test: a build with a bf16 fused conv kernel
    (as CK-enabled ROCm builds may have for NHWC) runs bf16 conv + bias + activation fused."""
    emulated_device.fusion_applicable = lambda plan, ops, version: None
    for layout in ("NCHW", "NHWC"):
        case = build(Row.CONV_BIAS_ACT, DataType.BFLOAT16, layout)
        plan, outs = run_case(emulated_miopen_engine, case)
        with plan:
            assert plan.path == "fused"
            check_outputs(case, outs)
