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
from pathlib import Path
from typing import Any

import pytest
from _threads_worker import distinct_graphs, shared_graph
from emulated.device import EmulatedDevice

import hipdnn
from hipdnn.engines.miopen import MiopenEngine

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
