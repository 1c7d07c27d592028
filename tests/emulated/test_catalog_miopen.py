"""The adversarial catalog's execute-time cases on conv and batchnorm graphs, run with
MIOPEN_ENGINE on the emulated device (MIOpen 3.4 and 3.5): the same typed errors naming the
culprit, and every sentinel-filled output untouched, as on CPU_REFERENCE_ENGINE
(tests/adversarial/test_catalog.py). The test checks that MIOPEN_ENGINE built the plans."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any

import pytest

import hipdnn

_CATALOG = str(Path(__file__).resolve().parent.parent / "adversarial")
if _CATALOG not in sys.path:
    sys.path.insert(0, _CATALOG)

import cases_exec  # noqa: E402,F401  (registers its cases)
from _catalog import CASES, Case, Outputs  # noqa: E402

_PREFIXES = ("variant_pack/bn_", "variant_pack/conv_", "variant_pack/epsilon_at_execute_",
             "variant_pack/pass_by_value_")
SELECTED = [c for c in CASES if c.name.startswith(_PREFIXES)]


def test_selection_is_not_empty() -> None:
    assert len(SELECTED) >= 15


@pytest.mark.parametrize("case", SELECTED, ids=[c.name for c in SELECTED])
def test_case_on_miopen_engine(case: Case, emulated_miopen_engine: Any,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    real = type(emulated_miopen_engine).build_plan

    def counting(self: Any, graph: Any, knobs: Any, handle: Any) -> Any:
        built.append(graph.name)
        return real(self, graph, knobs, handle)

    monkeypatch.setattr(type(emulated_miopen_engine), "build_plan", counting)
    hipdnn.clear_plan_cache()
    out = Outputs()
    with pytest.raises(case.exc) as info:
        case.run(out)
    assert isinstance(info.value, hipdnn.HipdnnError)
    for culprit in case.culprit:
        assert culprit in str(info.value), f"{culprit!r} not named in: {info.value}"
    out.check()
    assert built, "MIOPEN_ENGINE built no plan: the case ran on another engine"
    del info
    gc.collect()  # the cases' graphs (and the plans they hold) go with this test
    hipdnn.clear_plan_cache()


def _huge_graphs() -> dict[str, Any]:
    f32 = hipdnn.DataType.FLOAT

    def relu() -> Any:
        g = hipdnn.Graph(io_data_type=f32)
        g.relu(g.tensor(dim=[1, 1, 2**32 + 5, 1], name="x"), name="r").set_output(True)
        return g

    def conv() -> Any:
        g = hipdnn.Graph(io_data_type=f32)
        x = g.tensor(dim=[1, 4, 2**32 + 4, 1], name="x")
        w = g.tensor(dim=[4, 4, 1, 1], name="w")
        g.conv_fprop(x, w, padding=[0, 0], name="c").set_output(True)
        return g

    def bn() -> Any:
        g = hipdnn.Graph(io_data_type=f32, compute_data_type=f32)
        x = g.tensor(dim=[1, 2, 2**32 + 4, 1], name="x")
        s, b = (g.tensor(dim=[1, 2, 1, 1], name=n) for n in ("s", "b"))
        for o in g.batchnorm(x, s, b, 1e-5, name="bn")[:3]:
            o.set_output(True)
        return g
    return {"relu": relu, "conv": conv, "bn": bn}


@pytest.mark.parametrize("graph", ["relu", "conv", "bn"])
def test_dims_beyond_a_c_int_without_descriptor_v2(graph: str) -> None:
    """A MIOpen without miopenSetTensorDescriptorV2 takes dims and strides as C ints: 2**32 + 5
    would arrive as 5 and the plan would run on another tensor. MIOPEN_ENGINE declines such a
    graph, naming the tensor and the valid range (it built, on the truncated dims, before)."""
    from emulated.device import EmulatedDevice

    from hipdnn.engines import register, registry, unregister
    from hipdnn.engines.miopen import MiopenEngine

    device = EmulatedDevice("3.5", without=("miopenSetTensorDescriptorV2",))
    engine = MiopenEngine(miopen_loader=lambda: device.miopen, hip_loader=lambda: device.hip)
    previous = registry().get(engine.engine_id)
    register(engine)
    try:
        hipdnn.clear_plan_cache()
        g = _huge_graphs()[graph]()
        g.build_operation_graph()
        with pytest.raises(hipdnn.GraphNotSupportedError) as info:
            g.create_execution_plan_ext("MIOPEN_ENGINE", {})
            g.build_plans()
        reason = str(info.value)
        assert "tensor 'x'" in reason and "2**31-1" in reason, reason
        assert not device.calls_of("miopenSetTensorDescriptor")
    finally:
        if previous is not None:
            register(previous)
        else:
            unregister(engine)
        hipdnn.clear_plan_cache()
