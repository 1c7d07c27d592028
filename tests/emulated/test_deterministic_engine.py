"""MIOPEN_ENGINE_DETERMINISTIC over the emulated device (MIOpen 3.4 and 3.5): AMD's second engine,
selectable by name and by id (FNV-1a 64 of the name, as every engine id), listed by
get_ranked_engine_ids / get_engine_configs for the conv rows, MIOpen's deterministic attribute on
every convolution descriptor it builds, the same bits across repeated executes and Find runs, and
batchnorm / pointwise graphs declined naming the rule."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from emulated.device import EmulatedDevice
from emulated.registration import registered
from test_miopen_engine_graphs import build
from test_miopen_engine_numerics import check_outputs

from hipdnn.backend.engine import fnv1a_64
from hipdnn.backend.registry import registry
from hipdnn.core.errors import HipdnnError
from hipdnn.core.types import DataType as D
from hipdnn.engines.miopen import MiopenDeterministicEngine, MiopenEngine, Row
from hipdnn.engines.miopen.descriptors import ConvDesc
from miopen_ctypes.enums import miopenConvolutionAttrib_t

pytest.importorskip("torch")

NAME = "MIOPEN_ENGINE_DETERMINISTIC"
CONV_ROWS = (Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD, Row.CONV_BIAS_ACT)


@pytest.fixture
def det_engine(emulated_device: EmulatedDevice,
               emulated_miopen_engine: MiopenEngine) -> Iterator[MiopenDeterministicEngine]:
    """MIOPEN_ENGINE_DETERMINISTIC over the emulated device, registered for the test."""
    with registered(MiopenDeterministicEngine(miopen_loader=lambda: emulated_device.miopen,
                                              hip_loader=lambda: emulated_device.hip)) as engine:
        yield engine


def _run(case: Any) -> dict[str, np.ndarray]:
    outs = case.empty_outputs()
    ws = case.graph.get_workspace_size()
    case.graph.execute({**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}},
                       np.zeros(ws, np.uint8) if ws else None)
    return outs


def _attribute(emulated_device: EmulatedDevice, plan: Any) -> list[int]:
    """MIOpen's deterministic attribute on every convolution descriptor the plan owns."""
    import ctypes

    out = []
    for o in plan.miopen_objects:
        if isinstance(o, ConvDesc):
            v = ctypes.c_int(-1)
            emulated_device.miopen.miopenGetConvolutionAttribute(
                o.raw, miopenConvolutionAttrib_t.MIOPEN_CONVOLUTION_ATTRIB_DETERMINISTIC,
                ctypes.byref(v))
            out.append(v.value)
    return out


def test_name_and_id() -> None:
    engine = registry()[fnv1a_64(NAME)]
    assert engine.name == NAME and isinstance(engine, MiopenDeterministicEngine)
    assert engine.engine_id == fnv1a_64(NAME) != fnv1a_64("MIOPEN_ENGINE")
    assert registry()[fnv1a_64("MIOPEN_ENGINE")].rank < engine.rank < \
        registry()[fnv1a_64("CPU_REFERENCE_ENGINE")].rank


@pytest.mark.parametrize("select", ["name", "id"])
@pytest.mark.parametrize("row", CONV_ROWS, ids=[r.name.lower() for r in CONV_ROWS])
def test_conv_rows_by_name_and_id(emulated_device: EmulatedDevice,
                                  det_engine: MiopenDeterministicEngine, row: Row,
                                  select: str) -> None:
    case = build(row, D.FLOAT, "NCHW")
    g = case.graph
    g.build_operation_graph()
    assert det_engine.engine_id in g.get_ranked_engine_ids()
    g.create_execution_plan_ext(NAME if select == "name" else det_engine.engine_id,
                                {"global.benchmarking": 0})
    g.build_plans()
    plan = g.plans[0]
    assert plan.engine is det_engine and plan.name.startswith(NAME + ":")
    attrs = _attribute(emulated_device, plan)
    assert attrs and all(a == 1 for a in attrs), attrs
    first = _run(case)
    check_outputs(case, first)
    again = _run(case)
    for role in first:
        np.testing.assert_array_equal(again[role], first[role], err_msg=role)
    g.close()


@pytest.mark.parametrize("row", [Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD],
                         ids=["fprop", "dgrad", "wgrad"])
def test_same_bits_across_find_runs(emulated_device: EmulatedDevice,
                                    det_engine: MiopenDeterministicEngine, row: Row) -> None:
    """global.benchmarking=1 (Find 2.0 with tuning) twice, on fresh graphs: identical bits, and
    identical to the heuristic (immediate) plan's."""
    results = []
    for bench in (1, 1, 0):
        case = build(row, D.HALF, "NHWC")
        g = case.graph
        g.build_operation_graph()
        g.create_execution_plan_ext(NAME, {"global.benchmarking": bench})
        g.build_plans()
        assert g.plans[0].engine is det_engine
        results.append(_run(case))
        check_outputs(case, results[-1])
        g.close()
    for other in results[1:]:
        for role in results[0]:
            np.testing.assert_array_equal(other[role], results[0][role], err_msg=role)


@pytest.mark.parametrize("row", [Row.BN_INFERENCE, Row.BN_TRAINING, Row.BN_BACKWARD,
                                 Row.BN_INFERENCE_INV_ACT, Row.POINTWISE_BINARY],
                         ids=["bn_inference", "bn_training", "bn_backward", "bn_inf_act", "binary"])
def test_batchnorm_and_pointwise_declined(det_engine: MiopenDeterministicEngine,
                                          emulated_miopen_engine: MiopenEngine, row: Row) -> None:
    case = build(row, D.FLOAT, "NCHW")
    g = case.graph
    reason = det_engine.check_support(g, None)
    assert reason is not None and NAME in reason and "convolutions only" in reason, reason
    assert row.value in reason
    g.build()  # MIOPEN_ENGINE runs it; the deterministic engine's reason is reported
    assert g.plans[0].engine is emulated_miopen_engine
    assert g.engine_reasons()[NAME] == reason
    assert det_engine.engine_id not in g.get_ranked_engine_ids()
    g2 = build(row, D.FLOAT, "NCHW").graph
    g2.build_operation_graph()
    with pytest.raises(HipdnnError, match="convolutions only"):
        g2.create_execution_plan_ext(NAME, {})
        g2.build_plans()


def test_frontend_lists_and_prefers_it(det_engine: MiopenDeterministicEngine,
                                       emulated_miopen_engine: MiopenEngine) -> None:
    """hipdnn.frontend as AMD's sample writes it: get_engine_configs lists both MIOpen engines
    for a convolution; set_preferred_engine_id_ext(name) builds on the deterministic one."""
    import hipdnn.frontend as fe

    f32 = fe.DataType.FLOAT
    g = (fe.Graph().set_io_data_type(f32).set_compute_data_type(f32)
         .set_intermediate_data_type(f32))
    x = fe.Tensor.create([1, 2, 8, 8], f32)
    w = fe.Tensor.create([4, 2, 3, 3], f32)
    y = g.conv_fprop(x, w, fe.ConvFpropAttributes().set_padding([1, 1]).set_stride([1, 1])
                     .set_dilation([1, 1]))
    y.set_output(True)
    g.set_preferred_engine_id_ext(NAME)
    handle = fe.create_handle()
    assert g.build_operation_graph(handle).is_good()
    configs = g.get_engine_configs()
    assert [c.engine_name for c in configs][:2] == ["MIOPEN_ENGINE", NAME], configs
    assert configs[1].engine_id == fnv1a_64(NAME)
    assert g.create_execution_plans().is_good() and g.build_plans().is_good()
    assert g.get_execution_plan_engine_id() == fnv1a_64(NAME)
