"""Thread safety (issue 9): on CPU_REFERENCE_ENGINE and on MIOPEN_ENGINE over the emulated
device, every result of every thread is checked against numpy (tests/emulated/_threads_worker.py).

- cold start: a fresh interpreter whose N threads build their first graph at the same moment
  (registry loading, library loading, MIOpen handle creation, plan cache), 3 runs per engine;
- one shared graph executed by T threads x I iterations (8 x 50), half of them on their own Handle;
- T threads each building, running and closing I graphs (shared and own structures) on their
  own Handle, closing it while the others still use the plan cache.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _threads_worker import distinct_graphs, shared_graph
from emulated.device import EmulatedDevice

import hipdnn
from hipdnn.core.types import DataType
from hipdnn.engines.miopen import MiopenEngine, Row

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("_threads_worker.py")
COLD_THREADS, COLD_RUNS = 8, 3
THREADS, ITERATIONS = 8, 50


@pytest.mark.parametrize("engine", ["reference", "miopen"])
def test_cold_start_threads_racing_their_first_build(engine: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for run in range(COLD_RUNS):
        proc = subprocess.run([sys.executable, str(WORKER), engine, str(COLD_THREADS)],
                              capture_output=True, text=True, env=env, cwd=ROOT, timeout=300,
                              check=False)
        assert proc.returncode == 0, proc.stderr
        report = json.loads(proc.stdout.strip().splitlines()[-1])
        assert report["errors"] == [], f"run {run}: {report['errors']}"
        assert report["ok"] == COLD_THREADS and len(report["plans"]) == 1, report


def test_shared_graph_reference() -> None:
    assert shared_graph(hipdnn, "CPU_REFERENCE_ENGINE", THREADS, ITERATIONS) == []


class _ThreadCalls(list):  # type: ignore[type-arg]
    """The device's call log, remembering which thread made each call."""

    def __init__(self) -> None:
        super().__init__()
        self.by_thread: dict[int, list[Any]] = {}

    def append(self, call: Any) -> None:
        super().append(call)
        self.by_thread.setdefault(threading.get_ident(), []).append(call)


def test_shared_graph_miopen(emulated_device: EmulatedDevice,
                             emulated_miopen_engine: MiopenEngine,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Also: every thread's MIOpen calls ran on its own Handle's MIOpen handle (switching
    threads as often as the interpreter allows)."""
    baseline = len(emulated_device.live_objects())
    calls = _ThreadCalls()
    monkeypatch.setattr(emulated_device, "calls", calls)
    interval = sys.getswitchinterval()
    wrong: list[str] = []

    def check(handle: hipdnn.Handle) -> None:
        state = handle.peek_state(emulated_miopen_engine._key)
        mine = ctypes.cast(state.handle, ctypes.c_void_p).value
        used = {c.args[0] for c in calls.by_thread.get(threading.get_ident(), ())
                if c.name == "miopenBatchNormalizationForwardTraining_V2"}
        if used != {mine}:
            wrong.append(f"{threading.get_ident()}: ran on {used}, its handle is {mine}")

    sys.setswitchinterval(1e-6)
    try:
        assert shared_graph(hipdnn, "MIOPEN_ENGINE", THREADS, ITERATIONS, check) == []
    finally:
        sys.setswitchinterval(interval)
    assert wrong == []
    assert not emulated_device.live_allocations()  # staging freed by every thread
    assert len(emulated_device.live_objects()) == baseline, emulated_device.live_objects()


def test_distinct_graphs_reference() -> None:
    assert distinct_graphs(hipdnn, "CPU_REFERENCE_ENGINE", THREADS, ITERATIONS) == []


def test_distinct_graphs_miopen(emulated_device: EmulatedDevice,
                                emulated_miopen_engine: MiopenEngine) -> None:
    baseline = len(emulated_device.live_objects())
    assert distinct_graphs(hipdnn, "MIOPEN_ENGINE", THREADS, ITERATIONS) == []
    # every thread closed its handle: nothing cached for it stays alive
    assert len(emulated_device.live_objects()) == baseline, emulated_device.live_objects()
    assert not emulated_device.live_allocations()


class _SlowFusionExecute(list):  # type: ignore[type-arg]
    """The device's call log; every fusion-plan execute pauses (GIL released) just before it
    runs, so other threads get to set their operator args in between, as on a real GPU."""

    def append(self, call: Any) -> None:
        super().append(call)
        if call.name.startswith("miopenExecuteFusionPlan"):
            time.sleep(0.002)


FUSED_ROWS = [Row.CONV_BIAS_ACT, Row.BN_TRAINING_ACT, Row.BN_INF_DRELU_BN_BWD]


@pytest.mark.parametrize("how", ["execute", "bind"])
@pytest.mark.parametrize("row", FUSED_ROWS, ids=[r.name.lower() for r in FUSED_ROWS])
def test_one_fused_plan_executed_by_many_threads(emulated_device: EmulatedDevice,
                                                 emulated_miopen_engine: MiopenEngine,
                                                 row: Row, how: str) -> None:
    """A fused plan's operator args are one MIOpen object per plan: threads executing the plan
    at once (each with its own buffers, half on their own Handle) must each get their own
    answer, not another thread's weights or outputs. Every result is checked against PyTorch.
    (Before the plan's lock, threads ran with each other's weights or wrote each other's outputs.)"""
    from test_miopen_engine_graphs import build
    from test_miopen_engine_numerics import check_outputs

    threads, rounds = 6, 4
    cases = [build(row, DataType.FLOAT, "NCHW", seed=i) for i in range(threads)]
    g = cases[0].graph
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g.build()
    # fused everywhere but 3.5's batchnorm rows (its *Activation calls): those run here too
    assert (g.plans[0].path == "fused") == (row == Row.CONV_BIAS_ACT
                                            or emulated_device.version_name == "3.4")
    by_name = {t.name: t for t in cases[0].inputs}
    by_name.update({t.name: t for t in cases[0].outputs.values()})
    ws = g.get_workspace_size()
    handles = [hipdnn.Handle() if i % 2 else None for i in range(threads)]
    emulated_device.calls = _SlowFusionExecute()
    barrier = threading.Barrier(threads)
    errors: list[str] = []

    def work(i: int) -> None:
        case = cases[i]
        try:
            barrier.wait()
            for _ in range(rounds):
                outs = case.empty_outputs()
                pack = {by_name[t.name]: a for t, a in case.inputs.items()}
                pack.update({by_name[case.outputs[r].name]: a for r, a in outs.items()})
                space = np.zeros(max(ws, 1), np.uint8)
                if how == "bind":
                    g.bind(pack, space, handles[i])()
                else:
                    g.execute(pack, space, handles[i])
                check_outputs(case, outs)
        except BaseException as exc:  # every thread's failure is reported
            errors.append(f"thread {i}: {type(exc).__name__}: {str(exc)[:300]}")

    pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(60)
    for h in handles:
        if h is not None:
            h.close()
    assert errors == []
    assert not emulated_device.live_allocations()
