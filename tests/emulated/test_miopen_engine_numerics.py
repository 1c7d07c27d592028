"""Every seed row x dtype x layout through MIOPEN_ENGINE on the emulated device (MIOpen 3.4 and
3.5 symbol sets) matches PyTorch within DESIGN.md's tolerances. Where the emulated device's
fusion predicate declines, the fallback path runs and must match just the same."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_miopen_engine_graphs import DTYPES, LAYOUT_NAMES, Case, build

from hipdnn import interop
from hipdnn.engines.miopen import MiopenEngine, MiopenPlan, Row
from hipdnn.graph import Graph
from hipdnn.handle import Handle

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


def check_outputs(case: Case, outs: dict[str, np.ndarray]) -> None:
    atol, rtol = case.tol()
    for role, want in case.expected.items():
        got = outs[role].astype(np.float32)
        np.testing.assert_allclose(got, want, atol=atol, rtol=rtol,
                                   err_msg=f"{case.row.value} {case.dtype.name} {case.layout}: {role}")


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("dtype", list(DTYPES), ids=list(DTYPES))
@pytest.mark.parametrize("row", list(Row), ids=[r.name.lower() for r in Row])
def test_row_matches_torch(emulated_miopen_engine: MiopenEngine, row: Row, dtype: str,
                           layout: str) -> None:
    case = build(row, DTYPES[dtype], layout)
    plan, outs = run_case(emulated_miopen_engine, case)
    with plan:
        check_outputs(case, outs)


@pytest.mark.parametrize("lower,upper", [(None, None), (0.25, None), (-0.3, 0.8), (None, 0.7)],
                         ids=["relu", "lower", "lower_upper", "upper"])
@pytest.mark.parametrize("row", [Row.CONV_BIAS_ACT, Row.BN_TRAINING_ACT, Row.BN_INF_DRELU_BN_BWD],
                         ids=["conv_bias_act", "bn_training_act", "bn_inf_drelu_bn_bwd"])
def test_activation_clips(emulated_miopen_engine: MiopenEngine, row: Row,
                          lower: float | None, upper: float | None) -> None:
    case = build(row, DTYPES["fp32"], "NCHW", lower=lower, upper=upper)
    plan, outs = run_case(emulated_miopen_engine, case)
    with plan:
        check_outputs(case, outs)


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("dtype", list(DTYPES), ids=list(DTYPES))
def test_bn_training_running_stats(emulated_miopen_engine: MiopenEngine, dtype: str,
                                   layout: str) -> None:
    case = build(Row.BN_TRAINING, DTYPES[dtype], layout, running=True)
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
def test_bn_training_act_running_stats(emulated_miopen_engine: MiopenEngine,
                                       config: tuple[str, str]) -> None:
    """Running statistics through every BN training + activation path (3.5 call, 3.4 fusion
    plan, unfused)."""
    case = build(Row.BN_TRAINING_ACT, DTYPES[config[0]], config[1], running=True,
                 lower=0.0, upper=1.5)
    plan, outs = run_case(emulated_miopen_engine, case)
    with plan:
        check_outputs(case, outs)


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("row", [Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD,
                                 Row.CONV_BIAS_ACT], ids=lambda r: r.name.lower())
def test_find2_every_layout(emulated_miopen_engine: MiopenEngine, row: Row, layout: str) -> None:
    for dtype in ("fp16", "bf16"):
        case = build(row, DTYPES[dtype], layout)
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
    """Grouped, strided and dilated convolutions (group count set on the descriptor)."""
    from test_miopen_engine_graphs import conv_case

    for layout in ("NCHW", "NDHWC"):
        case = conv_case(row, DTYPES["fp32"], layout, **geometry)
        case.graph.validate()
        plan, outs = run_case(emulated_miopen_engine, case)
        with plan:
            check_outputs(case, outs)


@pytest.mark.parametrize("config", [("fp32", "NCHW"), ("bf16", "NHWC")], ids=lambda c: "-".join(c))
@pytest.mark.parametrize("row", [Row.BN_TRAINING, Row.BN_TRAINING_ACT], ids=lambda r: r.name.lower())
def test_bn_training_without_saved_stats(emulated_miopen_engine: MiopenEngine, row: Row,
                                         config: tuple[str, str]) -> None:
    """Saved mean / inverse variance left virtual: NULL for _V2, scratch for the fusion plan."""
    case = build(row, DTYPES[config[0]], config[1])
    for role in ("mean", "inv_variance"):
        case.outputs.pop(role).set_output(False)
        case.expected.pop(role)
    plan, outs = run_case(emulated_miopen_engine, case)
    with plan:
        assert "mean" not in plan.match.t
        check_outputs(case, outs)
