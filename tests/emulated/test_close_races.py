"""Closing from several threads at once, and closing while another thread executes, on the
emulated device: every object with a close (Handle, execution plans, the direct layer's
Session and DeviceArray) frees each MIOpen/HIP object exactly once, never under a call that
is still running, and raises nothing but the documented PlanClosedError afterwards.

Each race is made deterministic with a gate: the device's call record holds the first call of
one C function until the test releases it, so one thread is known to be inside that call while
the other closes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from emulated.device import EmulatedDevice
from test_miopen_engine_graphs import Case, build
from test_miopen_engine_numerics import check_outputs

from hipdnn.core.errors import PlanClosedError
from hipdnn.core.handle import Handle
from hipdnn.core.types import DataType as D
from hipdnn.direct import Session
from hipdnn.engines.miopen import MiopenEngine, Row

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]


class _Gate(list):  # type: ignore[type-arg]
    """The device's call record, holding the first call named ``name`` (or one of the names
    ``name`` holds, a tuple) until ``release``."""

    def __init__(self, name: str | tuple[str, ...]) -> None:
        super().__init__()
        self.names = (name,) if isinstance(name, str) else name
        self.entered = threading.Event()
        self.release = threading.Event()

    def append(self, call: Any) -> None:
        super().append(call)
        if call.name in self.names and not self.entered.is_set():
            self.entered.set()
            self.release.wait(10)


def _thread(target: Any, errors: list[BaseException]) -> threading.Thread:
    def body() -> None:
        try:
            target()
        except BaseException as exc:  # reported by the test's assertions
            errors.append(exc)
    t = threading.Thread(target=body)
    t.start()
    return t


def _built(row: Row, handle: Handle) -> tuple[Case, dict[Any, np.ndarray], dict[str, np.ndarray], np.ndarray]:
    case = build(row, D.FLOAT, "NCHW")
    case.graph.build_operation_graph(handle)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        case.graph.build()
    outs = case.empty_outputs()
    pack = {**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}}
    ws = np.zeros(max(case.graph.get_workspace_size(), 1), np.uint8)
    return case, pack, outs, ws


def _destroyed_uses(device: EmulatedDevice) -> list[tuple[str, int, str]]:
    return [e for e in device.errors if "destroyed" in e[2] or "unknown" in e[2]]


# ==================================================================================== Handle
def test_two_threads_close_one_handle(emulated_device: EmulatedDevice,
                                      emulated_miopen_engine: MiopenEngine) -> None:
    """While an execute is inside a MIOpen call, two threads close its Handle: both wait for
    the execute, the MIOpen handle is destroyed once, neither close() returns before it is."""
    h = Handle()
    case, pack, outs, ws = _built(Row.CONV_FPROP, h)
    gate = _Gate("miopenConvolutionForwardImmediate")
    emulated_device.calls = gate
    errors: list[BaseException] = []
    runner = _thread(lambda: case.graph.execute(pack, ws, h), errors)
    assert gate.entered.wait(10)
    closers = [_thread(h.close, errors) for _ in range(2)]
    for c in closers:
        c.join(0.3)
    assert all(c.is_alive() for c in closers), "a close() returned while an execute ran on the handle"
    gate.release.set()
    for t in (runner, *closers):
        t.join(10)
        assert not t.is_alive()
    assert errors == []
    check_outputs(case, outs)
    assert len(emulated_device.calls_of("miopenDestroy")) == 1
    assert not emulated_device.live_objects("handle")
    assert _destroyed_uses(emulated_device) == []
    with pytest.raises(PlanClosedError):
        case.graph.execute(pack, ws, h)
    case.graph.close()


def test_close_racing_a_first_build_leaves_no_miopen_handle(emulated_device: EmulatedDevice,
                                                            emulated_miopen_engine: MiopenEngine) -> None:
    """A build making the Handle's MIOpen handle while another thread closes the Handle: the
    MIOpen handle made is destroyed by the close (or never made), never left behind."""
    for _ in range(20):
        h = Handle()
        errors: list[BaseException] = []
        case = build(Row.CONV_FPROP, D.FLOAT, "NCHW")

        def first_build(case: Case = case, h: Handle = h) -> None:
            case.graph.build_operation_graph(h)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                case.graph.build()

        builder = _thread(first_build, errors)
        closer = _thread(h.close, errors)
        builder.join(10)
        closer.join(10)
        case.graph.close()
        assert all(type(e).__name__ in ("PlanClosedError", "GraphStateError",
                                        "GraphNotSupportedError") for e in errors), errors
        assert not emulated_device.live_objects("handle")


# ================================================================================ plans
@pytest.mark.parametrize("how", ["execute", "bind"])
@pytest.mark.parametrize("row,call", [(Row.CONV_FPROP, "miopenConvolutionForwardImmediate"),
                                      (Row.CONV_BIAS_ACT, ("miopenExecuteFusionPlan",
                                                           "miopenExecuteFusionPlan_v2"))],
                         ids=["conv_fprop", "conv_bias_act"])
def test_plan_closed_while_another_thread_executes_it(emulated_device: EmulatedDevice,
                                                      emulated_miopen_engine: MiopenEngine,
                                                      row: Row, call: Any, how: str) -> None:
    """A plan closed (twice, from two threads) while another thread executes it on its own
    Handle: the execute finishes with its results on live MIOpen objects; the objects are freed
    when it returns; the next execute raises PlanClosedError. (Before: the close destroyed the
    descriptors under the running call, which then failed on destroyed objects.)"""
    h, mine = Handle(), Handle()
    case, pack, outs, ws = _built(row, h)
    plan = case.graph.plans[0]
    assert plan.path == ("fused" if row == Row.CONV_BIAS_ACT else "immediate")
    bound = case.graph.bind(pack, ws, mine) if how == "bind" else None
    gate = _Gate(call)
    emulated_device.calls = gate
    errors: list[BaseException] = []
    runner = _thread(bound if bound is not None else (lambda: case.graph.execute(pack, ws, mine)),
                     errors)
    assert gate.entered.wait(10)
    closers = [_thread(plan.close, errors) for _ in range(2)]
    for c in closers:
        c.join(10)
    assert plan.closed and plan.live_objects > 0  # still running: nothing freed yet
    gate.release.set()
    runner.join(10)
    assert errors == []
    check_outputs(case, outs)
    assert _destroyed_uses(emulated_device) == []
    assert plan.live_objects == 0  # freed when the execute returned
    with pytest.raises(PlanClosedError):
        bound() if bound is not None else case.graph.execute(pack, ws, mine)
    case.graph.close()
    h.close()
    mine.close()
    assert not emulated_device.live_objects("handle")


# ================================================================ the direct helper layer
def test_device_array_freed_by_two_threads_at_once(emulated_device: EmulatedDevice) -> None:
    s = Session(lib=emulated_device.miopen, hip=emulated_device.hip)
    a = s.empty((64,), np.float32)
    gate = _Gate("hipFree")
    emulated_device.calls = gate
    errors: list[BaseException] = []
    first = _thread(a.free, errors)
    assert gate.entered.wait(10)
    second = _thread(a.free, errors)
    second.join(10)
    gate.release.set()
    first.join(10)
    assert errors == []
    assert len(emulated_device.calls_of("hipFree")) == 1
    assert a.ptr == 0 and not emulated_device.live_allocations()
    s.close()  # frees nothing twice either
    assert len(emulated_device.calls_of("hipFree")) == 1


def test_session_closed_by_two_threads_at_once(emulated_device: EmulatedDevice) -> None:
    s = Session(lib=emulated_device.miopen, hip=emulated_device.hip)
    s.tensor(np.zeros((2, 3), np.float32))
    s.handle  # noqa: B018 - makes the MIOpen handle
    s.empty((8,), np.float32)
    gate = _Gate("miopenDestroyTensorDescriptor")
    emulated_device.calls = gate
    errors: list[BaseException] = []
    first = _thread(s.close, errors)
    assert gate.entered.wait(10)
    second = _thread(s.close, errors)
    second.join(0.3)
    assert second.is_alive(), "the second close() returned before the session was closed"
    gate.release.set()
    first.join(10)
    second.join(10)
    assert errors == []
    for name in ("miopenDestroyTensorDescriptor", "miopenDestroy", "hipFree"):
        assert len(emulated_device.calls_of(name)) == 1, name
    assert not emulated_device.live_objects() and not emulated_device.live_allocations()


# ======================================================================= interpreter exit
_AT_EXIT = textwrap.dedent("""
    import sys, threading, warnings
    import numpy as np
    sys.path[:0] = [{tests!r}, {emulated!r}]
    from _threads_worker import emulated_miopen
    device, _ = emulated_miopen()
    import hipdnn
    from hipdnn.direct import Session
    from test_miopen_engine_graphs import build
    from hipdnn.engines.miopen import Row
    from hipdnn.core.types import DataType

    keep = []
    for row in (Row.CONV_FPROP, Row.CONV_BIAS_ACT, Row.BN_TRAINING):
        h = hipdnn.Handle()
        case = build(row, DataType.FLOAT, "NCHW")
        case.graph.build_operation_graph(h)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            case.graph.build()
        outs = case.empty_outputs()
        pack = {{**case.inputs, **{{case.outputs[r]: a for r, a in outs.items()}}}}
        ws = np.zeros(max(case.graph.get_workspace_size(), 1), np.uint8)
        run = case.graph.bind(pack, ws)
        run()
        keep.append((h, case, run))      # never closed: collected at exit
    s = Session(lib=device.miopen, hip=device.hip)
    s.tensor(np.zeros(4, np.float32)); s.empty((4,), np.float32)

    def spin():                           # still executing while the interpreter exits
        while True:
            for _, _, run in keep:
                run()
    threading.Thread(target=spin, daemon=True).start()
    print("ok", flush=True)
""")


def test_interpreter_exit_with_everything_open() -> None:
    """Handles, graphs, bound plans, a Session and device memory left open, and a daemon thread
    still executing, when the interpreter exits: it exits cleanly (no finalizer error, no
    crash)."""
    code = _AT_EXIT.format(tests=str(ROOT / "tests"), emulated=str(ROOT / "tests" / "emulated"))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=False,
                          # the lane's environment kept: on Windows (Wine) torch's OpenMP needs
                          # its KMP_AFFINITY, and Python itself SYSTEMROOT
                          env={**os.environ, "PYTHONPATH": str(ROOT), "HIPDNN_PLAN_STORE": "off"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("ok")
    assert "Exception ignored" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
