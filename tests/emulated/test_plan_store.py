"""The persistent plan store (hipdnn/pipeline/plan_store.py) with MIOPEN_ENGINE on the emulated
device: a later build (a new Handle and an empty in-process plan cache, as in a new process)
takes the stored decision without listing solutions or running Find; stale, corrupt, colliding
and unwritable entries rebuild, never a wrong plan. (Across real processes and the real MIOpen:
tests/stubgpu/test_plan_store_processes.py; concurrent writers: tests/unit/test_plan_store_files.py.)
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from emulated.device import EmulatedDevice
from test_miopen_engine_calls import miopen_calls
from test_miopen_engine_graphs import build
from test_miopen_engine_numerics import check_outputs

import hipdnn
from hipdnn.core.handle import Handle
from hipdnn.core.types import DataType as D
from hipdnn.engines.miopen import MiopenEngine, Row
from hipdnn.pipeline import plan_store as ps
from hipdnn.pipeline.plan_cache import clear_plan_cache

pytest.importorskip("torch")

ENUMERATE = "GetSolutionCount"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ps.PlanStore]:
    chosen = ps.set_plan_store(tmp_path / "plans")
    assert chosen is not None
    try:
        yield chosen
    finally:
        ps.set_plan_store(None)
        clear_plan_cache()


def _build(device: EmulatedDevice, row: Row, knobs: dict[str, int] | None,
           config: tuple[Any, ...] = (D.HALF, "NHWC")) -> tuple[Any, list[str], Any]:
    """A fresh build as a new process does it: new Handle, empty plan cache. Returns (plan,
    the MIOpen calls of the build, the case); the plan is executed and checked."""
    clear_plan_cache()
    case = build(row, *config)
    g = case.graph
    mark = len(device.calls)
    g.build_operation_graph(Handle())
    g.create_execution_plans()
    if knobs is not None:
        g.create_execution_plan_ext("MIOPEN_ENGINE", knobs)
    g.build_plans()
    calls = miopen_calls(device, mark)
    plan = g.plans[0]
    outs = case.empty_outputs()
    pack = {**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}}
    g.execute(pack, np.zeros(max(plan.workspace_size, 1), np.uint8) if plan.workspace_size else None)
    check_outputs(case, outs)
    return plan, calls, case


def _entries(store: ps.PlanStore) -> list[ps.StoreEntry]:
    return list(store.entries())


CASES = [(row, knobs) for row in (Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD, Row.CONV_BIAS_ACT)
         for knobs in (None, {"global.benchmarking": 1})] + [(Row.BN_TRAINING, None)]
CASES += [(Row.LAYERNORM, None), (Row.RMSNORM_BACKWARD, None)]  # the norm rows (workspace sized at build)


@pytest.mark.parametrize("row,knobs", CASES, ids=[f"{r.name.lower()}-{'find' if k else 'default'}"
                                                  for r, k in CASES])
def test_a_later_build_takes_the_stored_decision(emulated_device: EmulatedDevice,
                                                 emulated_miopen_engine: MiopenEngine,
                                                 store: ps.PlanStore, row: Row,
                                                 knobs: dict[str, int] | None) -> None:
    first, calls1, _ = _build(emulated_device, row, knobs)
    kinds = sorted(e.kind for e in _entries(store))
    assert kinds == ["answers", "plan"] and all(e.ok for e in _entries(store))
    if row not in (Row.BN_TRAINING, Row.LAYERNORM, Row.RMSNORM_BACKWARD):
        assert sum(ENUMERATE in c for c in calls1) + calls1.count("miopenFindSolutions") >= 1
    hits = store.hits
    second, calls2, _ = _build(emulated_device, row, knobs)
    assert store.hits == hits + 2  # the answers and the plan
    # no solution list, no Find: the stored decision is compiled / loaded
    assert not [c for c in calls2 if ENUMERATE in c or c == "miopenFindSolutions"], calls2
    assert second.name == first.name and second.path == first.path
    assert second.workspace_size == first.workspace_size
    assert second.solution_id == first.solution_id
    assert second.notes == first.notes
    if knobs and first.path == "find2":
        assert "miopenLoadSolution" in calls2
        assert second.runner.op.find_results == first.runner.op.find_results


def test_knob_settings_are_separate_entries(emulated_device: EmulatedDevice,
                                            emulated_miopen_engine: MiopenEngine,
                                            store: ps.PlanStore) -> None:
    cfg = (D.FLOAT, "NCHW")
    low, _, _ = _build(emulated_device, Row.CONV_FPROP, {"global.workspace_size_limit": 0}, cfg)
    high, _, _ = _build(emulated_device, Row.CONV_FPROP, None, cfg)
    assert low.solution_id != high.solution_id and low.workspace_size == 0
    assert sorted(e.kind for e in _entries(store)) == ["answers", "plan", "plan"]
    again, calls, _ = _build(emulated_device, Row.CONV_FPROP, {"global.workspace_size_limit": 0}, cfg)
    assert again.solution_id == low.solution_id and not [c for c in calls if ENUMERATE in c]


def test_a_corrupt_entry_warns_once_and_is_rebuilt(emulated_device: EmulatedDevice,
                                                   emulated_miopen_engine: MiopenEngine,
                                                   store: ps.PlanStore,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    first, _, _ = _build(emulated_device, Row.CONV_FPROP, None)
    for entry in _entries(store):
        data = entry.path.read_bytes()
        entry.path.write_bytes(data[: len(data) // 2])  # truncated, as by a crash mid-write
    with caplog.at_level(logging.WARNING, logger="hipdnn"):
        second, calls, _ = _build(emulated_device, Row.CONV_FPROP, None)
    warnings = [r for r in caplog.records if "corrupt or truncated" in r.getMessage()]
    assert len(warnings) == 2, caplog.text  # one per entry
    assert any(ENUMERATE in c for c in calls)  # rebuilt from MIOpen's answers
    assert second.solution_id == first.solution_id
    assert all(e.ok for e in _entries(store))  # rewritten whole
    _, calls, _ = _build(emulated_device, Row.CONV_FPROP, None)
    assert not [c for c in calls if ENUMERATE in c]


def test_a_solution_the_library_lacks_is_rebuilt(emulated_device: EmulatedDevice,
                                                 emulated_miopen_engine: MiopenEngine,
                                                 store: ps.PlanStore) -> None:
    first, _, _ = _build(emulated_device, Row.CONV_DGRAD, None)
    plan_entry = next(e for e in _entries(store) if e.kind == "plan")
    doc = json.loads(plan_entry.path.read_text())
    doc["value"]["conv"]["solution_id"] = 987654  # no such solver
    plan_entry.path.write_text(json.dumps(doc))
    second, calls, _ = _build(emulated_device, Row.CONV_DGRAD, None)
    assert "miopenConvolutionBackwardDataCompileSolution" in calls
    assert any(ENUMERATE in c for c in calls)  # the stored one failed to compile: afresh
    assert second.solution_id == first.solution_id
    doc = json.loads(plan_entry.path.read_text())
    assert doc["value"]["conv"]["solution_id"] == first.solution_id  # rewritten


def test_a_colliding_file_name_is_a_miss_never_a_wrong_plan(emulated_device: EmulatedDevice,
                                                           emulated_miopen_engine: MiopenEngine,
                                                           store: ps.PlanStore,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Every key hashed to one file name: each entry overwrites the others, and a read of
    another key's file is a miss (the full key is stored and compared)."""
    monkeypatch.setattr(ps.PlanStore, "path_of", lambda self, key: self.directory / "same.json")
    cfg = (D.FLOAT, "NCHW")
    low, _, _ = _build(emulated_device, Row.CONV_FPROP, {"global.workspace_size_limit": 0}, cfg)
    high, calls, _ = _build(emulated_device, Row.CONV_FPROP, None, cfg)
    assert high.solution_id != low.solution_id
    assert any(ENUMERATE in c for c in calls)


def test_another_hipdnn_version_does_not_share_entries(emulated_device: EmulatedDevice,
                                                       emulated_miopen_engine: MiopenEngine,
                                                       store: ps.PlanStore,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _build(emulated_device, Row.CONV_FPROP, None)
    monkeypatch.setattr(hipdnn, "__version__", "99.0.0")
    _, calls, _ = _build(emulated_device, Row.CONV_FPROP, None)
    assert any(ENUMERATE in c for c in calls)
    assert len(_entries(store)) == 4  # both versions' entries side by side


def test_an_unwritable_store_warns_once_and_plans_still_build(
        emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the store directory should be")
    ps.set_plan_store(blocker / "plans")
    try:
        with caplog.at_level(logging.WARNING, logger="hipdnn"):
            for row in (Row.CONV_FPROP, Row.CONV_DGRAD):
                plan, _, _ = _build(emulated_device, row, None)
                assert plan.engine is emulated_miopen_engine
        warnings = [r for r in caplog.records if "cannot be written" in r.getMessage()]
        assert len(warnings) == 1, caplog.text
        assert "plans still build" in warnings[0].getMessage()
    finally:
        ps.set_plan_store(None)
        clear_plan_cache()


def test_the_switch_turns_it_off(emulated_device: EmulatedDevice,
                                 emulated_miopen_engine: MiopenEngine, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIPDNN_PLAN_STORE", str(tmp_path / "env-plans"))
    ps.set_plan_store(None)
    try:
        assert ps.plan_store() is not None and ps.plan_store().directory == tmp_path / "env-plans"  # type: ignore[union-attr]
        _build(emulated_device, Row.CONV_FPROP, None)
        assert len(list((tmp_path / "env-plans").glob("*.json"))) == 2
        monkeypatch.setenv("HIPDNN_PLAN_STORE", "off")
        assert ps.plan_store() is None
        _, calls, _ = _build(emulated_device, Row.CONV_FPROP, None)
        assert any(ENUMERATE in c for c in calls)
        ps.set_plan_store(False)
        monkeypatch.setenv("HIPDNN_PLAN_STORE", str(tmp_path / "env-plans"))
        assert ps.plan_store() is None  # the API's choice wins over the variable
    finally:
        ps.set_plan_store(None)
        clear_plan_cache()


def test_a_declined_answer_is_kept_too(emulated_device: EmulatedDevice,
                                       emulated_miopen_engine: MiopenEngine, store: ps.PlanStore,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine's definitive answer (here a decline) is stored when it is given, so a later
    process does not ask that engine again even though no plan of it was built."""
    asked: list[int] = []
    real = emulated_miopen_engine.check_support

    def counted(graph: Any, handle: Any) -> Any:
        asked.append(1)
        return real(graph, handle)

    monkeypatch.setattr(emulated_miopen_engine, "check_support", counted)

    def attempt() -> dict[str, str | None]:
        clear_plan_cache()
        g = hipdnn.Graph(name="true_convolution", io_data_type=D.FLOAT, compute_data_type=D.FLOAT)
        x = g.tensor(dim=[1, 4, 8, 8], name="x")
        w = g.tensor(dim=[4, 4, 3, 3], name="w")
        g.conv_fprop(x, w, padding=[1, 1], convolution_mode="CONVOLUTION", name="c").set_output(True)
        g.build_operation_graph(Handle())
        return g.engine_reasons()

    first = attempt()
    assert len(asked) == 1 and "CROSS_CORRELATION" in (first["MIOPEN_ENGINE"] or "")
    second = attempt()
    assert len(asked) == 1 and second["MIOPEN_ENGINE"] == first["MIOPEN_ENGINE"]


@pytest.mark.parametrize("status", [7, 4, 5], ids=["unknown_error", "alloc_failed", "internal_error"])
def test_a_fusion_compile_that_failed_once_is_not_kept(emulated_device: EmulatedDevice,
                                                       emulated_miopen_engine: MiopenEngine,
                                                       store: ps.PlanStore, status: int) -> None:
    """miopenCompileFusionPlan failing once with a status MIOpen also returns for passing
    trouble (miopenStatusUnknownError: a HIP error or exception inside the compile; AllocFailed;
    InternalError) decides nothing for later builds. Status 7 is asked once more (it is also the
    answer of a fused kernel that does not build on this install, which fails again): the build
    runs fused. AllocFailed and InternalError fail this MIOpen build, which falls back to
    another engine with PyTorch's answer. Neither the plan store nor the plan cache keeps an
    unfused decision, and the next build, without the fault, runs fused. (Before, status 7 was
    stored as "unfused" and every later process ran unfused.)"""
    config = (D.FLOAT, "NCHW")
    emulated_device.fail("miopenCompileFusionPlan", status)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", hipdnn.FallbackWarning)
        first, _, _ = _build(emulated_device, Row.CONV_BIAS_ACT, None, config)
    assert (first.engine.name, getattr(first, "path", None)) == (
        ("MIOPEN_ENGINE", "fused") if status == 7 else ("CPU_REFERENCE_ENGINE", None))
    assert not [e for e in _entries(store) if e.kind == "plan" and "unfused" in e.path.read_text()]
    # a rebuild in this process (the plan cache) and in a later one (the store) run fused
    case = build(Row.CONV_BIAS_ACT, *config)
    case.graph.build_operation_graph(Handle())
    case.graph.build_plans()
    assert case.graph.plans[0].path == "fused"
    again, _, _ = _build(emulated_device, Row.CONV_BIAS_ACT, None, config)
    assert again.path == "fused"
    assert [e.kind for e in _entries(store) if e.kind == "plan"] == ["plan"]


def test_a_find_that_failed_once_is_not_kept(emulated_device: EmulatedDevice,
                                             emulated_miopen_engine: MiopenEngine,
                                             store: ps.PlanStore) -> None:
    """A Find 2.0 search that fails (here once, status 7) runs the heuristic solution for that
    build (plan.provisional says why); the heuristic choice is neither stored nor cached, so the
    next build searches again and its result is what is kept."""
    knobs = {"global.benchmarking": 1}
    emulated_device.fail("miopenFindSolutions", 7)
    first, _, _ = _build(emulated_device, Row.CONV_FPROP, knobs)
    assert first.provisional and "Find 2.0 failed" in first.provisional
    assert any("Find 2.0 failed" in n for n in first.notes)
    assert not [e for e in _entries(store) if e.kind == "plan"]
    second, calls, _ = _build(emulated_device, Row.CONV_FPROP, knobs)
    assert second.provisional is None and not any("Find 2.0 failed" in n for n in second.notes)
    assert "miopenFindSolutions" in calls
    assert [e.kind for e in _entries(store) if e.kind == "plan"] == ["plan"]


def test_a_fusion_compile_failing_twice_is_kept_but_asked_again(
        emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine,
        store: ps.PlanStore) -> None:
    """miopenStatusUnknownError from both attempts (as the real Debian builds answer for a
    fused kernel whose source they lack, tests/stubgpu, but also a HIP error or exception
    inside the compile that lasted through both): unfused, and the decision is stored (a later
    process lists no solutions) with the status. It is not a definitive answer: a later build
    asks the compile once (not twice) and, the fault gone, runs fused and rewrites the entry.
    (Before, the stored "unfused" was applied without compiling: fusion was never tried again.)"""
    config = (D.FLOAT, "NCHW")
    emulated_device.fail("miopenCompileFusionPlan", 7, 1)
    emulated_device.fail("miopenCompileFusionPlan", 7, 2)
    first, calls, _ = _build(emulated_device, Row.CONV_BIAS_ACT, None, config)
    assert first.path == "unfused" and calls.count("miopenCompileFusionPlan") == 2
    stored = [e for e in _entries(store) if e.kind == "plan"]
    assert len(stored) == 1 and json.loads(stored[0].path.read_text())["value"]["fusion_status"] == 7
    second, calls, _ = _build(emulated_device, Row.CONV_BIAS_ACT, None, config)
    assert second.path == "fused" and "miopenCompileFusionPlan" in calls
    assert not any("miopenCompileFusionPlan" in n for n in second.notes), second.notes
    plans = [e for e in _entries(store) if e.kind == "plan"]
    assert len(plans) == 1 and json.loads(plans[0].path.read_text())["value"]["path"] == "fused"
    third, calls, _ = _build(emulated_device, Row.CONV_BIAS_ACT, None, config)
    assert third.path == "fused" and not [c for c in calls if ENUMERATE in c], calls


@pytest.mark.parametrize("legacy", [False, True], ids=["status", "entry_without_status"])
def test_a_lasting_unknown_error_is_asked_once_per_later_build(
        emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine,
        store: ps.PlanStore, legacy: bool) -> None:
    """The install's answer (miopenStatusUnknownError every time): a later build takes the
    stored unfused decision (no solution list) after one compile, not the first build's two.
    An entry written before the status was kept is read from its decline note."""
    config = (D.FLOAT, "NCHW")
    for nth in range(1, 5):
        emulated_device.fail("miopenCompileFusionPlan", 7, nth)
    first, calls, _ = _build(emulated_device, Row.CONV_BIAS_ACT, None, config)
    assert first.path == "unfused" and calls.count("miopenCompileFusionPlan") == 2
    if legacy:
        [entry] = [e for e in _entries(store) if e.kind == "plan"]
        body = json.loads(entry.path.read_text())
        del body["value"]["fusion_status"]
        entry.path.write_text(json.dumps(body, sort_keys=True))
    hits = store.hits
    second, calls, _ = _build(emulated_device, Row.CONV_BIAS_ACT, None, config)
    assert store.hits == hits + 2
    assert second.path == "unfused" and calls.count("miopenCompileFusionPlan") == 1, calls
    assert not [c for c in calls if ENUMERATE in c or c == "miopenFindSolutions"], calls
    assert second.notes == first.notes


def test_a_definitive_fusion_decline_is_kept(emulated_device: EmulatedDevice,
                                             emulated_miopen_engine: MiopenEngine,
                                             store: ps.PlanStore) -> None:
    """MIOpen's "no fusion solver applies" (miopenStatusUnsupportedOp) is its definitive answer:
    the unfused decision is stored, and a later build takes it without compiling again."""
    config = (D.FLOAT, "NCHW")
    emulated_device.fusion_applicable = lambda plan, ops, version: "declined by the test"
    first, _, _ = _build(emulated_device, Row.CONV_BIAS_ACT, None, config)
    assert first.path == "unfused"
    assert [e.kind for e in _entries(store) if e.kind == "plan"] == ["plan"]
    second, calls, _ = _build(emulated_device, Row.CONV_BIAS_ACT, None, config)
    assert second.path == "unfused" and "miopenCompileFusionPlan" not in calls
