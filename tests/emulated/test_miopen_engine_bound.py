"""Bound execution (``graph.bind`` / ``MiopenPlan.bind``) and execute's remembered int-pointer
packs on MIOPEN_ENGINE over the emulated device (MIOpen 3.4 and 3.5 symbol sets): same results as
``execute`` and PyTorch, exactly the row's MIOpen calls per run, every safety check kept."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest
from emulated.device import EmulatedDevice
from test_miopen_engine_graphs import Case, build
from test_miopen_engine_numerics import assert_refused, refusal

from hipdnn.backend.knobs import BENCHMARKING_KNOB
from hipdnn.core.errors import PlanClosedError, VariantPackError, WorkspaceError
from hipdnn.core.handle import Handle
from hipdnn.core.types import DataType
from hipdnn.engines.miopen import MiopenEngine, MiopenExecutionError, Row
from hipdnn.graph.graph import Graph
from hipdnn.interop import buffers as interop

pytest.importorskip("torch")

#: Rows whose bound run is exactly these prebuilt calls (per path), on both versions.
PREBUILT = {
    Row.CONV_FPROP: ["miopenConvolutionForwardImmediate"],
    Row.CONV_DGRAD: ["miopenConvolutionBackwardDataImmediate"],
    Row.CONV_WGRAD: ["miopenConvolutionBackwardWeightsImmediate"],
    Row.BN_INFERENCE: ["miopenBatchNormalizationForwardInference_V2"],
}


def _to_device(device: EmulatedDevice, a: np.ndarray) -> int:
    """Upload a dense (possibly transposed) host array byte for byte."""
    ptr = device.alloc(a.nbytes)
    ctypes.memmove(ptr, a.ctypes.data, a.nbytes)
    return ptr


def _from_device(device: EmulatedDevice, ptr: int, like: np.ndarray) -> np.ndarray:
    out = np.empty_like(like)  # same strides (empty_like keeps the layout)
    ctypes.memmove(out.ctypes.data, ptr, out.nbytes)
    return out


def _device_pack(device: EmulatedDevice, case: Case) -> tuple[dict[Any, Any], dict[str, int],
                                                              dict[str, np.ndarray]]:
    pack: dict[Any, Any] = {}
    for t, a in case.inputs.items():
        pack[t] = float(np.asarray(a).reshape(-1)[0]) if t.is_pass_by_value else _to_device(device, a)
    outs = case.empty_outputs()
    ptrs = {role: _to_device(device, a) for role, a in outs.items()}
    pack.update({case.outputs[role]: p for role, p in ptrs.items()})
    return pack, ptrs, outs


def _built(case: Case, engine: MiopenEngine, **knobs: Any) -> Graph:
    g = case.graph
    if knobs:
        g.create_execution_plan_ext(engine.engine_id, knobs)
        g.build_plans()
    else:
        g.build()
    assert g.plans[0].engine is engine, g.plans[0]
    return g


def _ws(device: EmulatedDevice, g: Graph) -> int | None:
    size = g.get_workspace_size()
    return device.alloc(size) if size else None


def _check(case: Case, got: dict[str, np.ndarray]) -> None:
    atol, rtol = case.tol()
    for role, want in case.expected.items():
        np.testing.assert_allclose(got[role].astype(np.float32), want, atol=atol, rtol=rtol,
                                   err_msg=f"{case.row.value}: {role}")


@pytest.mark.parametrize("fusion", ["fused", "unfused"])
@pytest.mark.parametrize("row", list(Row), ids=[r.name.lower() for r in Row])
def test_bound_matches_execute_and_torch(emulated_device: EmulatedDevice,
                                         emulated_miopen_engine: MiopenEngine, row: Row,
                                         fusion: str) -> None:
    if fusion == "unfused":
        emulated_device.fusion_applicable = lambda *a, **k: "declined by the test"
    case = build(row, DataType.FLOAT, "NCHW")
    if refusal(row, DataType.FLOAT, emulated_device.version_name):
        assert_refused(emulated_device, emulated_miopen_engine, case)
        return
    g = _built(case, emulated_miopen_engine)
    size = g.get_workspace_size()
    ws = emulated_device.alloc(size) if size else None
    # execute with host arrays (staged) ...
    staged = case.empty_outputs()
    g.execute({**case.inputs, **{case.outputs[r]: a for r, a in staged.items()}},
              np.zeros(max(size, 1), np.uint8) if size else None)
    # ... and bound with device pointers, run twice (the second run re-reads the inputs)
    pack, ptrs, like = _device_pack(emulated_device, case)
    bound = g.bind(pack, ws)
    bound()
    emulated_device.clear_calls()
    bound()
    got = {role: _from_device(emulated_device, p, like[role]) for role, p in ptrs.items()}
    _check(case, got)
    for role in got:
        np.testing.assert_array_equal(got[role], staged[role], err_msg=role)
    if row in PREBUILT:
        assert emulated_device.call_names() == PREBUILT[row]
    if row == Row.CONV_BIAS_ACT and fusion == "fused":
        names = emulated_device.call_names()
        assert names[-1].startswith("miopenExecuteFusionPlan") and not any(
            n.startswith(("miopenCreate", "miopenCompile")) for n in names), names
    g.close()


def test_execute_remembers_int_pointer_packs(emulated_device: EmulatedDevice,
                                             emulated_miopen_engine: MiopenEngine) -> None:
    case = build(Row.CONV_FPROP, DataType.FLOAT, "NCHW")
    g = _built(case, emulated_miopen_engine)
    pack, ptrs, like = _device_pack(emulated_device, case)
    ws = _ws(emulated_device, g)
    g.execute(pack, ws)
    assert len(g._fast) == 1
    emulated_device.clear_calls()
    g.execute(dict(pack), ws)  # an equal pack (a new dict) reuses the binding
    assert emulated_device.call_names() == ["miopenConvolutionForwardImmediate"]
    assert len(g._fast) == 1
    _check(case, {"y": _from_device(emulated_device, ptrs["y"], like["y"])})
    # True == 1 and 1.0 == 1 as dict keys: such a pack must take the checked path
    x = next(t for t in case.inputs)
    with pytest.raises(VariantPackError):
        g.execute({**pack, x: float(pack[x])}, ws)
    g.close()
    with pytest.raises(PlanClosedError):
        g.execute(pack, ws)


def test_bound_after_close_raises(emulated_device: EmulatedDevice,
                                  emulated_miopen_engine: MiopenEngine) -> None:
    case = build(Row.CONV_FPROP, DataType.FLOAT, "NCHW")
    g = _built(case, emulated_miopen_engine)
    pack, _, _ = _device_pack(emulated_device, case)
    ws = _ws(emulated_device, g)
    bound = g.bind(pack, ws)
    plan_bound = g.plans[0].bind({t.uid: interop.resolve(v) for t, v in pack.items()}, ws,
                                 g.handle)
    bound()
    g.plans[0].close()  # closing the plan kills every binding of it
    with pytest.raises(PlanClosedError):
        plan_bound()
    with pytest.raises(PlanClosedError):
        bound()
    with pytest.raises(PlanClosedError):
        g.plans[0].bind({}, None, g.handle)
    g.close()
    with pytest.raises(PlanClosedError, match="closed"):
        bound()


def test_bound_after_handle_close_raises(emulated_device: EmulatedDevice,
                                         emulated_miopen_engine: MiopenEngine) -> None:
    h = Handle()
    case = build(Row.BN_INFERENCE, DataType.FLOAT, "NCHW")
    case.graph._handle = h
    g = _built(case, emulated_miopen_engine)
    pack, _, _ = _device_pack(emulated_device, case)
    bound = g.bind(pack)
    bound()
    h.close()  # miopenDestroy: a prebuilt call would pass a dangling handle
    emulated_device.clear_calls()
    with pytest.raises(PlanClosedError, match="handle"):
        bound()
    assert emulated_device.call_names() == []
    g.close()


def test_workspace_is_checked_at_bind(emulated_device: EmulatedDevice,
                                      emulated_miopen_engine: MiopenEngine) -> None:
    case = build(Row.BN_INFERENCE_INV, DataType.FLOAT, "NCHW")  # workspace: derived variance
    g = _built(case, emulated_miopen_engine)
    size = g.get_workspace_size()
    assert size > 0
    pack, ptrs, like = _device_pack(emulated_device, case)
    emulated_device.clear_calls()
    with pytest.raises(WorkspaceError, match=f"{size} bytes"):
        g.bind(pack)
    with pytest.raises(WorkspaceError, match="smaller"):
        g.bind(pack, np.zeros(size - 1, np.uint8))
    with pytest.raises(WorkspaceError):
        g.plans[0].bind({t.uid: interop.resolve(v) for t, v in pack.items()}, None, g.handle)
    assert emulated_device.call_names() == []  # nothing ran
    bound = g.bind(pack, emulated_device.alloc(size))
    bound()  # the inverse-variance row has host work between calls: the runner path
    _check(case, {r: _from_device(emulated_device, p, like[r]) for r, p in ptrs.items()})
    g.close()


def test_bound_host_arrays_are_staged_each_run(emulated_device: EmulatedDevice,
                                               emulated_miopen_engine: MiopenEngine) -> None:
    case = build(Row.CONV_BIAS_ACT, DataType.FLOAT, "NCHW")
    g = _built(case, emulated_miopen_engine)
    outs = case.empty_outputs()
    size = g.get_workspace_size()
    bound = g.bind({**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}},
                   np.zeros(max(size, 1), np.uint8) if size else None)
    bound()
    _check(case, outs)
    for a in case.inputs.values():  # new input values are picked up by the next run
        a[...] = 0
    bound()
    assert not np.any(outs["y"]), "relu(0 * w + 0) must be 0"
    g.close()


def test_bound_error_names_the_operation(emulated_device: EmulatedDevice,
                                         emulated_miopen_engine: MiopenEngine) -> None:
    case = build(Row.CONV_FPROP, DataType.FLOAT, "NCHW")
    g = _built(case, emulated_miopen_engine)
    pack, _, _ = _device_pack(emulated_device, case)
    bound = g.bind(pack, _ws(emulated_device, g))
    emulated_device.fail("miopenConvolutionForwardImmediate", 3)
    with pytest.raises(MiopenExecutionError, match="conv") as info:
        bound()
    assert info.value.function == "miopenConvolutionForwardImmediate" and info.value.status == 3
    bound()  # the next run succeeds again
    g.close()


def test_find2_plan_binds_through_the_runner(emulated_device: EmulatedDevice,
                                             emulated_miopen_engine: MiopenEngine) -> None:
    case = build(Row.CONV_FPROP, DataType.FLOAT, "NCHW")
    g = _built(case, emulated_miopen_engine, **{BENCHMARKING_KNOB: 1})
    size = g.get_workspace_size()
    pack, ptrs, like = _device_pack(emulated_device, case)
    bound = g.bind(pack, emulated_device.alloc(size) if size else None)
    bound()  # Find 2.0 runs on the first call, then miopenRunSolution
    emulated_device.clear_calls()
    bound()
    assert emulated_device.call_names() == ["miopenRunSolution"]
    _check(case, {r: _from_device(emulated_device, p, like[r]) for r, p in ptrs.items()})
    # once found, a new binding prebuilds miopenRunSolution
    again = g.plans[0].bind({t.uid: interop.resolve(v) for t, v in pack.items()},
                            interop.resolve(emulated_device.alloc(size)) if size else None,
                            g.handle)
    assert getattr(again, "prepared", None) is not None
    g.close()


def _loader(device: EmulatedDevice, which: str) -> Any:
    return lambda: getattr(device, which)


def test_plan_cache_keeps_engine_objects_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two MIOPEN_ENGINE objects (MIOpen 3.4 and 3.5 devices) never share plans or answers,
    even if nothing purged the cache between them."""
    import hipdnn.backend.registry as engine_registry
    from hipdnn.engines import register, registry, unregister

    devices = {v: EmulatedDevice(v) for v in ("3.4", "3.5")}
    engines = {v: MiopenEngine(miopen_loader=_loader(d, "miopen"), hip_loader=_loader(d, "hip"))
               for v, d in devices.items()}
    assert engines["3.4"].engine_id == engines["3.5"].engine_id
    assert engines["3.4"].cache_token != engines["3.5"].cache_token
    previous = registry().get(engines["3.4"].engine_id)
    monkeypatch.setattr(engine_registry, "_SUBSCRIBERS", [])  # no purge on register
    h = Handle()
    try:
        plans = {}
        for version, engine in engines.items():
            register(engine)
            g = build(Row.CONV_FPROP, DataType.FLOAT, "NCHW").graph
            g._handle = h
            g.build()
            plans[version] = g.plans[0]
            assert plans[version].engine is engine
        assert plans["3.4"] is not plans["3.5"]
        assert devices["3.5"].calls_of("miopenConvolutionForwardCompileSolution")
    finally:
        monkeypatch.undo()
        if previous is not None:
            register(previous)
        else:
            unregister(engines["3.5"])
        h.close()
