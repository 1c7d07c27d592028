"""After a failure (issue 29): what a failing HIP/MIOpen call leaves behind on the emulated device.

- A transient failure during MIOPEN_ENGINE's support check (the MIOpen handle not created, a
  descriptor or solution call failing) is reported with its real cause and is not remembered:
  the next build of the graph, or of another graph of its structure on the same Handle, runs
  on MIOPEN_ENGINE again.
- Handle.set_stream, Handle.synchronize and Graph.autotune raise HandleError naming the
  operation and the C call; a failed set_stream leaves the Handle on its old stream (every
  engine state too) and a retry switches.
- Handle.close() while other threads execute on it waits for the executes in flight, then
  destroys; later executes raise PlanClosedError; no MIOpen call sees a destroyed handle.
- A binding keeps its plan while graph and Handle are open and unedited, through re-planning
  and the plan cache evicting it.
"""

from __future__ import annotations

import threading
import time
import warnings
from typing import Any

import numpy as np
import pytest
from emulated.device import EmulatedDevice
from test_miopen_engine_graphs import Case, build
from test_miopen_engine_numerics import check_outputs

from hipdnn.core.errors import GraphNotSupportedError
from hipdnn.core.handle import Handle
from hipdnn.core.types import DataType as D
from hipdnn.engines.miopen import MiopenEngine, Row

pytest.importorskip("torch")

_HIP_OUT_OF_MEMORY = 2


def _pack(case: Case) -> tuple[dict[Any, np.ndarray], dict[str, np.ndarray]]:
    outs = case.empty_outputs()
    return {**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}}, outs


def _build_quietly(case: Case) -> None:
    with warnings.catch_warnings():  # the fallback warning of a passed-over MIOPEN_ENGINE
        warnings.simplefilter("ignore")
        case.graph.build()


def _run(case: Case) -> None:
    """Execute the built graph and compare with PyTorch."""
    pack, outs = _pack(case)
    case.graph.execute(pack, np.zeros(max(case.graph.get_workspace_size(), 1), np.uint8))
    check_outputs(case, outs)


# (C function, status it returns, what the reason must say): each a call of the support check
SUPPORT_FAULTS = [
    ("hipSetDevice", _HIP_OUT_OF_MEMORY, "out of device memory"),
    ("miopenCreate", 4, "out of device memory"),  # miopenStatusAllocFailed
    ("miopenCreate", 5, "could not create the MIOpen handle"),  # miopenStatusInternalError
    ("hipGetDevicePropertiesR0600", 1, "hipGetDevicePropertiesR0600"),
    ("miopenCreateTensorDescriptor", 4, "miopenCreateTensorDescriptor"),
    ("miopenSetTensorDescriptorV2", 5, "miopenSetTensorDescriptorV2"),
    ("miopenInitConvolutionNdDescriptor", 5, "miopenInitConvolutionNdDescriptor"),
    ("miopenConvolutionForwardGetSolutionCount", 4, "miopenConvolutionForwardGetSolutionCount"),
]


@pytest.mark.parametrize("name,status,says", SUPPORT_FAULTS,
                         ids=[f"{n}={s}" for n, s, _ in SUPPORT_FAULTS])
def test_a_transient_support_failure_is_not_remembered(
        emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine, name: str,
        status: int, says: str) -> None:
    h = Handle()
    case = build(Row.CONV_FPROP, D.FLOAT, "NCHW")
    case.graph.build_operation_graph(h)
    emulated_device.fail(name, status)
    _build_quietly(case)  # this build falls back, with the real cause as MIOPEN_ENGINE's reason
    assert case.graph.plans[0].engine.name == "CPU_REFERENCE_ENGINE"
    reason = case.graph.engine_reasons()["MIOPEN_ENGINE"]
    assert reason is not None and name in reason and says in reason, reason
    assert "no AMD GPU" not in reason, reason
    _run(case)

    # the next build of the same graph, and a new graph of its structure on the same Handle,
    # ask MIOpen again and run on it
    _build_quietly(case)
    assert case.graph.plans[0].engine is emulated_miopen_engine
    _run(case)
    twin = build(Row.CONV_FPROP, D.FLOAT, "NCHW")
    twin.graph.build_operation_graph(h)
    _build_quietly(twin)
    assert twin.graph.plans[0].engine is emulated_miopen_engine
    _run(twin)
    case.graph.close()
    twin.graph.close()
    h.close()
    assert not emulated_device.live_objects()


@pytest.mark.parametrize("name,status", [("miopenCreate", 4), ("hipSetDevice", 2),
                                         ("miopenConvolutionForwardGetSolutionCount", 5)])
def test_asking_for_miopen_after_a_transient_failure(
        emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine, name: str,
        status: int) -> None:
    """Asking for MIOPEN_ENGINE explicitly: the failed attempt names the call; the retry works."""
    h = Handle()
    case = build(Row.CONV_FPROP, D.FLOAT, "NCHW")
    case.graph.build_operation_graph(h)
    emulated_device.fail(name, status)
    with pytest.raises(GraphNotSupportedError, match=name) as info:
        case.graph.create_execution_plan_ext("MIOPEN_ENGINE", {})
    assert "no AMD GPU" not in str(info.value)
    case.graph.create_execution_plan_ext("MIOPEN_ENGINE", {})
    case.graph.build_plans()
    assert case.graph.plans[0].engine is emulated_miopen_engine
    _run(case)
    case.graph.close()
    h.close()


def test_a_missing_device_is_still_named(emulated_device: EmulatedDevice,
                                         emulated_miopen_engine: MiopenEngine) -> None:
    """hipErrorNoDevice (100) from hipSetDevice: the reason says no AMD GPU is available."""
    emulated_device.fail("hipSetDevice", 100)
    h = Handle()
    case = build(Row.BN_INFERENCE, D.FLOAT, "NCHW")
    reason = emulated_miopen_engine.check_support(case.graph, h)
    assert reason is not None and reason.startswith("no AMD GPU available: hipSetDevice failed")
    assert emulated_miopen_engine.check_support(case.graph, h) is None  # the device came back
    h.close()


# ================================================= Handle.set_stream / synchronize / autotune
def _device_stream(device: EmulatedDevice) -> int:
    """The stream of the (one) live MIOpen handle on the device."""
    (state,) = device.live_objects("handle").values()
    return int(state.stream)


def _conv_on(h: Handle) -> Case:
    case = build(Row.CONV_FPROP, D.FLOAT, "NCHW")
    case.graph.build_operation_graph(h)
    _build_quietly(case)
    assert case.graph.plans[0].engine.name == "MIOPEN_ENGINE"
    _run(case)  # creates the Handle's MIOpen handle
    return case


def test_a_failed_set_stream_keeps_the_old_stream(emulated_device: EmulatedDevice,
                                                  emulated_miopen_engine: MiopenEngine) -> None:
    from hipdnn.core.errors import HandleError

    h = Handle()
    case = _conv_on(h)
    s1, s2 = emulated_device.create_stream(), emulated_device.create_stream()
    h.set_stream(s1)
    assert _device_stream(emulated_device) == s1
    emulated_device.fail("miopenSetStream", 3)
    with pytest.raises(HandleError, match=r"set_stream.*miopenSetStream") as info:
        h.set_stream(s2)
    assert info.value.function == "miopenSetStream" and info.value.status == 3
    assert info.value.operation == f"Handle.set_stream({s2:#x})"
    assert h.get_stream() == s1 and _device_stream(emulated_device) == s1  # nothing moved
    mark = len(emulated_device.calls)
    _run(case)
    assert all(c.arg("handle") for c in emulated_device.calls[mark:] if c.name.startswith("miopenConv"))
    h.set_stream(s2)  # the retry switches
    assert h.get_stream() == s2 and _device_stream(emulated_device) == s2
    _run(case)
    case.graph.close()
    h.close()


class _Refuses:
    """An engine state whose set_stream fails (a second engine on the same Handle)."""

    def set_stream(self, stream: int | None) -> None:
        raise RuntimeError("this engine cannot switch streams now")


def test_set_stream_sets_back_what_it_switched(emulated_device: EmulatedDevice,
                                               emulated_miopen_engine: MiopenEngine) -> None:
    from hipdnn.core.errors import HandleError

    h = Handle()
    case = _conv_on(h)
    s1, s2 = emulated_device.create_stream(), emulated_device.create_stream()
    h.set_stream(s1)
    h.state("refuses", lambda _: _Refuses())  # after MIOpen's: MIOpen switches first
    with pytest.raises(HandleError, match="cannot switch"):
        h.set_stream(s2)
    assert h.get_stream() == s1 and _device_stream(emulated_device) == s1
    _run(case)
    case.graph.close()
    h.close()


def test_synchronize_and_autotune_failures_are_typed(emulated_device: EmulatedDevice,
                                                     emulated_miopen_engine: MiopenEngine) -> None:
    from hipdnn.core.errors import HandleError

    h = Handle()
    case = _conv_on(h)
    h.set_stream(emulated_device.create_stream())
    emulated_device.fail("hipStreamSynchronize", 1)
    with pytest.raises(HandleError, match=r"Handle\.synchronize.*hipStreamSynchronize") as info:
        h.synchronize()
    assert info.value.function == "hipStreamSynchronize" and info.value.operation == "Handle.synchronize"
    h.synchronize()  # the retry waits
    pack, _ = _pack(case)
    ws = np.zeros(max(case.graph.get_workspace_size(), 1), np.uint8)
    selected = case.graph.plans[0]
    # host buffers on a stream: the warm-up execute's copy back waits first (call 1), then
    # autotune's own Handle.synchronize (call 2)
    emulated_device.fail("hipStreamSynchronize", 1, nth=2)
    with pytest.raises(HandleError, match=r"autotune.*hipStreamSynchronize") as info:
        case.graph.autotune(pack, ws, iterations=2, warmup=1)
    assert info.value.operation == "Graph.autotune" and info.value.function == "hipStreamSynchronize"
    assert case.graph.plans[0] is selected  # the selection is not changed by a failed autotune
    case.graph.autotune(pack, ws, iterations=2)  # the retry times and selects
    _run(case)
    case.graph.close()
    h.close()


# ========================================================== closing a Handle while it runs
class _Gate(list):  # type: ignore[type-arg]
    """The device's call record, holding the first call whose name starts with ``prefix``
    until ``release`` is set (so a test knows an execute is inside a MIOpen call)."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix
        self.entered = threading.Event()
        self.release = threading.Event()

    def append(self, call: Any) -> None:
        super().append(call)
        if call.name.startswith(self.prefix) and not self.entered.is_set():
            self.entered.set()
            self.release.wait(10)


def _destroyed_uses(device: EmulatedDevice) -> list[tuple[str, int, str]]:
    return [e for e in device.errors if "was destroyed" in e[2] or "unknown handle" in e[2]]


@pytest.mark.parametrize("how", ["execute", "bind"])
def test_close_waits_for_an_execute_in_flight(emulated_device: EmulatedDevice,
                                              emulated_miopen_engine: MiopenEngine,
                                              how: str) -> None:
    """A fused plan (bound to the MIOpen handle it was compiled on) executing in one thread
    while another closes its Handle: close() waits until the execute returned (with its
    results), then destroys the MIOpen handle; the next execute is a PlanClosedError."""
    from hipdnn.core.errors import PlanClosedError

    h = Handle()
    case = build(Row.CONV_BIAS_ACT, D.FLOAT, "NCHW")
    case.graph.build_operation_graph(h)
    _build_quietly(case)
    assert case.graph.plans[0].path == "fused"
    pack, outs = _pack(case)
    ws = np.zeros(max(case.graph.get_workspace_size(), 1), np.uint8)
    bound = case.graph.bind(pack, ws)
    gate = _Gate("miopenExecuteFusionPlan")
    emulated_device.calls = gate
    errors: list[BaseException] = []

    def execute() -> None:
        try:
            bound() if how == "bind" else case.graph.execute(pack, ws)
        except BaseException as exc:  # reported by the assertions below
            errors.append(exc)

    runner = threading.Thread(target=execute)
    runner.start()
    assert gate.entered.wait(10)
    closer = threading.Thread(target=h.close)
    closer.start()
    closer.join(0.3)
    assert closer.is_alive(), "close() returned while an execute was inside a MIOpen call"
    assert emulated_device.live_objects("handle")
    gate.release.set()
    runner.join(10)
    closer.join(10)
    assert not runner.is_alive() and not closer.is_alive()
    assert errors == []
    check_outputs(case, outs)  # the execute in flight finished with its results
    assert h.closed and not emulated_device.live_objects("handle")
    assert _destroyed_uses(emulated_device) == []
    with pytest.raises(PlanClosedError):
        bound()
    with pytest.raises(PlanClosedError):
        case.graph.execute(pack, ws)
    case.graph.close()
    assert not emulated_device.live_objects()


@pytest.mark.parametrize("row,dtype,layout", [(Row.CONV_BIAS_ACT, D.HALF, "NHWC"),
                                              (Row.BN_TRAINING, D.FLOAT, "NCHW"),
                                              (Row.CONV_FPROP, D.FLOAT, "NCHW")],
                         ids=["conv_bias_act_unfused", "bn_training", "conv_fprop"])
def test_close_while_threads_execute(emulated_device: EmulatedDevice,
                                     emulated_miopen_engine: MiopenEngine, row: Row,
                                     dtype: D, layout: str) -> None:
    """Four threads executing and binding in a loop while the main thread closes the Handle:
    every run either completes or raises PlanClosedError; no MIOpen call ever sees a
    destroyed handle; nothing is left on the device. (Not a fused plan: its operator
    arguments are the plan's, so one fused plan runs on one thread at a time, as the README's
    thread-safety note says; test_close_waits_for_an_execute_in_flight closes under one.)"""
    from hipdnn.core.errors import PlanClosedError

    h = Handle()
    case = build(row, dtype, layout)
    case.graph.build_operation_graph(h)
    _build_quietly(case)
    ws = np.zeros(max(case.graph.get_workspace_size(), 1), np.uint8)
    started = threading.Barrier(5)
    outcomes: list[str] = []

    def loop(k: int) -> None:
        pack, _ = _pack(case)
        bound = case.graph.bind(pack, ws)
        started.wait()
        for i in range(400):
            try:
                bound() if (i + k) % 2 else case.graph.execute(pack, ws)
            except PlanClosedError:
                outcomes.append("closed")
                return
            except BaseException as exc:
                outcomes.append(f"{type(exc).__name__}: {exc}")
                return
        outcomes.append("done")

    threads = [threading.Thread(target=loop, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    started.wait()
    time.sleep(0.01)
    h.close()
    for t in threads:
        t.join(60)
    assert all(o in ("closed", "done") for o in outcomes), outcomes
    assert len(outcomes) == 4
    assert _destroyed_uses(emulated_device) == []
    case.graph.close()
    assert not emulated_device.live_objects()


# ============================================== a binding outlives re-planning and eviction
def test_a_binding_outlives_replanning_and_eviction(emulated_device: EmulatedDevice,
                                                    emulated_miopen_engine: MiopenEngine,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Bind, re-plan with create_execution_plan_ext + build_plans (another plan), then build
    unrelated graphs until the old plan is evicted from the plan cache: the old binding still
    runs its plan, right, while graph and Handle are open and unedited; graph.close() frees it."""
    from hipdnn.core.errors import PlanClosedError
    from hipdnn.pipeline.plan_cache import plan_cache

    monkeypatch.setattr(plan_cache, "maxsize", 3)
    h = Handle()
    case = build(Row.CONV_FPROP, D.FLOAT, "NCHW")
    g = case.graph
    g.build_operation_graph(h)
    g.create_execution_plan_ext("MIOPEN_ENGINE", {"global.benchmarking": 0})
    g.build_plans()
    old = g.plans[0]
    pack, outs = _pack(case)
    ws = np.zeros(max(g.get_workspace_size(), 1 << 20), np.uint8)
    bound = g.bind(pack, ws)
    g.create_execution_plans()  # a new selection: ext configs start again
    g.create_execution_plan_ext("MIOPEN_ENGINE", {"global.benchmarking": 1})
    g.build_plans()
    assert g.plans[0] is not old
    others = []
    for row, dtype, layout in [(Row.BN_INFERENCE, D.FLOAT, "NCHW"), (Row.BN_TRAINING, D.FLOAT, "NCHW"),
                               (Row.BN_BACKWARD, D.FLOAT, "NCHW"), (Row.CONV_DGRAD, D.FLOAT, "NCHW"),
                               (Row.BN_INFERENCE, D.HALF, "NHWC")]:
        other = build(row, dtype, layout)
        other.graph.build_operation_graph(h)
        _build_quietly(other)
        other.graph.close()
        others.append(other)
    assert not any(p is old for p in plan_cache._plans.values())  # evicted
    assert not old.closed
    outs["y"][...] = np.nan
    bound()  # the binding runs its plan
    check_outputs(case, outs)
    g.execute(*_exec_args(case, ws))  # and the graph its new one
    g.close()
    assert old.closed  # freed with the graph
    with pytest.raises(PlanClosedError, match="is closed"):
        bound()
    h.close()
    assert not emulated_device.live_objects()


def _exec_args(case: Case, ws: np.ndarray) -> tuple[dict[Any, np.ndarray], np.ndarray]:
    pack, _ = _pack(case)
    return pack, ws
