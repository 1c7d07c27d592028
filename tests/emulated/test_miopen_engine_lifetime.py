"""MIOPEN_ENGINE on the emulated device: every injected MIOpen/HIP error becomes a typed hipdnn
error naming the operation and the C function (never a partial result, never a leak); plans free
every object they own; host staging and device pointers; no library, no GPU."""

from __future__ import annotations

import gc
import itertools
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from emulated.device import EmulatedDevice
from test_miopen_engine_calls import CONFIGS, EXEC_CALLS, REFUSED, expected_path
from test_miopen_engine_graphs import Case, build
from test_miopen_engine_numerics import assert_refused

from hipdnn.core.errors import (
    EngineError,
    ExecutionError,
    PlanClosedError,
    VariantPackError,
    WorkspaceError,
)
from hipdnn.core.handle import Handle
from hipdnn.engines.miopen import (
    MiopenBuildError,
    MiopenEngine,
    MiopenExecutionError,
    MiopenPlan,
    Row,
)
from hipdnn.interop import buffers as interop

pytest.importorskip("torch")

STATUSES = range(1, 11)  # every non-success miopenStatus_t


def _plan(engine: MiopenEngine, case: Case, h: Handle, **knobs: Any) -> Any:
    assert engine.check_support(case.graph, h) is None
    values = {k.id: k.default for k in engine.get_knobs(case.graph, h)}
    values.update(knobs)
    return engine.build_plan(case.graph, values, h)


def _pack(case: Case, plan: Any) -> tuple[dict[int, Any], Any, dict[str, np.ndarray]]:
    outs = case.empty_outputs()
    bufs = {t.uid: interop.resolve(a) for t, a in case.inputs.items()}
    bufs.update({case.outputs[r].uid: interop.resolve(a) for r, a in outs.items()})
    ws = interop.resolve(np.zeros(plan.workspace_size, np.uint8)) if plan.workspace_size else None
    return bufs, ws, outs


# ================================================================ errors at every call
@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("row", list(Row), ids=[r.name.lower() for r in Row])
def test_every_status_at_every_execute_call(emulated_device: EmulatedDevice,
                                            emulated_miopen_engine: MiopenEngine, row: Row,
                                            config: str) -> None:
    case = build(row, *CONFIGS[config])
    path = expected_path(row, emulated_device.version_name, config)
    if path == REFUSED:  # no plan to run
        assert_refused(emulated_device, emulated_miopen_engine, case)
        return
    h = Handle()
    with _plan(emulated_miopen_engine, case, h) as plan:
        calls = EXEC_CALLS[(row, emulated_device.version_name, path)]
        before = dict(emulated_device.live_allocations())
        for name in calls:
            for status in STATUSES:
                bufs, ws, outs = _pack(case, plan)
                emulated_device.fail(name, status)
                with pytest.raises(MiopenExecutionError) as info:
                    plan.execute(bufs, ws, h)
                err = info.value
                assert isinstance(err, ExecutionError)
                assert err.function == name and err.status == status
                assert row.value in str(err) and name in str(err)
                assert getattr(err.__cause__, "status", None) == status
                for role, arr in outs.items():  # never a partial result
                    assert not np.any(arr.astype(np.float32)), f"{role} written after {name} failed"
                assert emulated_device.live_allocations() == before  # staging freed
        bufs, ws, outs = _pack(case, plan)
        plan.execute(bufs, ws, h)  # the plan still works afterwards


@pytest.mark.parametrize("name,status", [("hipMalloc", 2), ("hipMemcpy", 1)])
def test_hip_errors_are_typed(emulated_device: EmulatedDevice,
                              emulated_miopen_engine: MiopenEngine, name: str, status: int) -> None:
    case = build(Row.BN_INFERENCE, *CONFIGS["fp32_nchw"])
    h = Handle()
    with _plan(emulated_miopen_engine, case, h) as plan:
        before = dict(emulated_device.live_allocations())
        bufs, ws, outs = _pack(case, plan)
        emulated_device.fail(name, status, nth=2)
        with pytest.raises(MiopenExecutionError) as info:
            plan.execute(bufs, ws, h)
        assert info.value.function == name
        assert emulated_device.live_allocations() == before
        assert not np.any(outs["y"].astype(np.float32))


def _build_calls(device: EmulatedDevice, engine: MiopenEngine, case: Case) -> list[str]:
    """The MIOpen calls build_plan itself makes (not check_support/get_knobs)."""
    with Handle() as h:  # closed now: its MIOpen handle is not left to the garbage collector
        assert engine.check_support(case.graph, h) is None
        knobs = {k.id: k.default for k in engine.get_knobs(case.graph, h)}
        mark = len(device.calls)
        engine.build_plan(case.graph, knobs, h).close()
    return [n for n in device.call_names()[mark:]
            if n.startswith("miopen") and not n.startswith("miopenDestroy")
            and n not in ("miopenGetErrorString", "miopenCreate")]


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("row", list(Row), ids=[r.name.lower() for r in Row])
def test_errors_while_building_are_typed_and_leak_nothing(
        emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine, row: Row,
        config: str) -> None:
    case = build(row, *CONFIGS[config])
    if expected_path(row, emulated_device.version_name, config) == REFUSED:
        assert_refused(emulated_device, emulated_miopen_engine, case)  # and leaks nothing
        return
    names = sorted(set(_build_calls(emulated_device, emulated_miopen_engine, case)))
    h = Handle()
    assert emulated_miopen_engine.check_support(case.graph, h) is None
    knobs = {k.id: k.default for k in emulated_miopen_engine.get_knobs(case.graph, h)}
    with emulated_miopen_engine.build_plan(case.graph, knobs, h) as clean:
        clean_path = clean.path  # without a fault
    baseline = len(emulated_device.live_objects())
    for name in names:
        for status in (3, 5, 7):
            emulated_device.fail(name, status)
            try:
                plan = emulated_miopen_engine.build_plan(case.graph, knobs, h)
            except MiopenBuildError as exc:
                assert isinstance(exc, EngineError)
                assert exc.function == name and row.value in str(exc)
            else:  # only a declined fusion compile may succeed: it falls back (3: no solver);
                # 7 (a passing failure, or a fused kernel that does not build, which fails again)
                # is asked once more, and that compile answers as without the fault
                assert name == "miopenCompileFusionPlan" and status in (3, 7)
                assert isinstance(plan, MiopenPlan)
                assert plan.path == ("unfused" if status == 3 else clean_path)
                plan.close()
            assert len(emulated_device.live_objects()) == baseline, f"leak after {name}={status}"


def test_find2_errors_are_typed(emulated_device: EmulatedDevice,
                                emulated_miopen_engine: MiopenEngine) -> None:
    """Find 2.0 runs at build: a failing Find call is a typed build error (nothing leaked), a
    failing search runs the heuristic solution instead, and the found solution's run fails
    at execute as a typed error leaving the output untouched."""
    case = build(Row.CONV_FPROP, *CONFIGS["fp32_nchw"])
    h = Handle()
    calls = ["miopenCreateFindOptions", "miopenSetFindOptionTuning", "miopenFindSolutions",
             "miopenGetSolutionWorkspaceSize"]
    if emulated_device.version_name == "3.5":
        calls += ["miopenGetTuningPolicy", "miopenSetTuningPolicy"]
    assert emulated_miopen_engine.check_support(case.graph, h) is None  # the MIOpen handle
    baseline = set(emulated_device.live_objects())
    for name in calls:
        emulated_device.fail(name, 5)
        if name == "miopenFindSolutions":  # a failing search: the heuristic solution runs
            with _plan(emulated_miopen_engine, case, h, **{"global.benchmarking": 1}) as plan:
                bufs, ws, outs = _pack(case, plan)
                plan.execute(bufs, ws, h)
                assert "Find 2.0 failed (miopenFindSolutions: status 5)" in plan.describe()
                assert plan.path == "find2" and np.any(outs["y"])
            continue
        with pytest.raises(MiopenBuildError) as built:
            _plan(emulated_miopen_engine, case, h, **{"global.benchmarking": 1})
        assert built.value.function == name and "convolution fprop" in str(built.value)
        assert set(emulated_device.live_objects()) == baseline, f"leak after {name}"
    with _plan(emulated_miopen_engine, case, h, **{"global.benchmarking": 1}) as plan:
        before = dict(emulated_device.live_allocations())
        bufs, ws, outs = _pack(case, plan)
        emulated_device.fail("miopenRunSolution", 5)
        with pytest.raises(MiopenExecutionError) as info:
            plan.execute(bufs, ws, h)
        assert info.value.function == "miopenRunSolution"
        assert emulated_device.live_allocations() == before
        assert not np.any(outs["y"])
    assert set(emulated_device.live_objects()) <= set(emulated_device.live_objects("handle"))


# ================================================================================ lifetime
@pytest.mark.parametrize("row", list(Row), ids=[r.name.lower() for r in Row])
def test_close_frees_every_object(emulated_device: EmulatedDevice,
                                  emulated_miopen_engine: MiopenEngine, row: Row) -> None:
    for config in CONFIGS:
        if expected_path(row, emulated_device.version_name, config) == REFUSED:
            continue
        case = build(row, *CONFIGS[config])
        h = Handle()
        assert emulated_miopen_engine.check_support(case.graph, h) is None
        baseline = set(emulated_device.live_objects())
        plan = _plan(emulated_miopen_engine, case, h)
        bufs, ws, _ = _pack(case, plan)
        plan.execute(bufs, ws, h)
        assert plan.live_objects > 0
        plan.close()
        plan.close()  # idempotent
        assert set(emulated_device.live_objects()) == baseline
        with pytest.raises(PlanClosedError):
            plan.execute(bufs, ws, h)
        h.close()
        assert not emulated_device.live_objects("handle")


def test_finalizer_and_context_manager(emulated_device: EmulatedDevice,
                                       emulated_miopen_engine: MiopenEngine) -> None:
    case = build(Row.CONV_BIAS_ACT, *CONFIGS["fp16_nhwc"])  # unfused: Find 2.0 solution kept
    h = Handle()
    assert emulated_miopen_engine.check_support(case.graph, h) is None
    baseline = set(emulated_device.live_objects())
    plan = _plan(emulated_miopen_engine, case, h, **{"global.benchmarking": 1})
    bufs, ws, _ = _pack(case, plan)
    plan.execute(bufs, ws, h)  # finds and keeps a miopenSolution_t
    assert emulated_device.live_objects("solution")
    del plan
    gc.collect()
    assert set(emulated_device.live_objects()) == baseline
    with _plan(emulated_miopen_engine, case, h):
        assert set(emulated_device.live_objects()) != baseline
    assert set(emulated_device.live_objects()) == baseline


# ========================================================================== closed handles
@pytest.mark.parametrize("config", ["fp32_nchw", "fp16_nhwc"])  # fused and unfused paths
@pytest.mark.parametrize("row", [Row.CONV_FPROP, Row.CONV_BIAS_ACT, Row.BN_TRAINING_ACT],
                         ids=lambda r: r.name.lower())
def test_plan_on_closed_handle_raises_plan_closed(emulated_device: EmulatedDevice,
                                                  emulated_miopen_engine: MiopenEngine, row: Row,
                                                  config: str) -> None:
    """A plan whose hipdnn.Handle was closed raises PlanClosedError naming that handle, before
    any MIOpen call (not the engine's internal "no AMD GPU available"); an open handle still
    runs it (except a fused plan: bound to the MIOpen handle it was compiled on)."""
    from test_miopen_engine_numerics import check_outputs

    case = build(row, *CONFIGS[config])
    h = Handle()
    plan = _plan(emulated_miopen_engine, case, h)
    bufs, ws, outs = _pack(case, plan)
    h.close()
    emulated_device.clear_calls()
    for handle in (h, None):
        for run in (lambda hh=handle: plan.execute(bufs, ws, hh),
                    lambda hh=handle: plan.bind(bufs, ws, hh)):
            with pytest.raises(PlanClosedError) as info:
                run()
            assert not isinstance(info.value, EngineError)
            assert f"{h!r} was closed" in str(info.value) or handle is None
            assert "no AMD GPU" not in str(info.value) and plan.name in str(info.value)
    assert emulated_device.call_names() == []
    if plan.path != "fused":
        with Handle() as h2:
            plan.execute(bufs, ws, h2)
        check_outputs(case, outs)
    else:
        with Handle() as h2, pytest.raises(PlanClosedError):
            plan.execute(bufs, ws, h2)
    plan.close()


def test_graph_on_closed_handle(emulated_device: EmulatedDevice,
                                emulated_miopen_engine: MiopenEngine) -> None:
    """Through the graph API: execute/bind after the graph's Handle was closed -> PlanClosedError;
    the engine declines a closed handle with that reason and build_plan raises GraphStateError."""
    from hipdnn.core.errors import GraphStateError
    from hipdnn.engines.miopen import Unavailable

    assert issubclass(Unavailable, EngineError)
    h = Handle()
    case = build(Row.CONV_FPROP, *CONFIGS["fp32_nchw"])
    g = case.graph
    g.build_operation_graph(h)
    g.build()
    assert g.plans[0].engine is emulated_miopen_engine
    outs = case.empty_outputs()
    pack = {**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}}
    ws = np.zeros(g.get_workspace_size(), np.uint8)
    h.close()
    for run in (lambda: g.execute(pack, ws), lambda: g.execute(pack, ws, handle=h),
                lambda: g.bind(pack, ws)()):
        with pytest.raises(PlanClosedError, match="closed") as info:
            run()
        assert "no AMD GPU" not in str(info.value)
    reason = emulated_miopen_engine.check_support(case.graph, h)
    assert reason == f"GraphStateError: {h!r} is closed"
    with pytest.raises(GraphStateError, match="is closed"):
        emulated_miopen_engine.build_plan(case.graph, {"global.benchmarking": 0}, h)
    g.close()


# ========================================================================= memory handling
def test_staging_leaves_no_allocations(emulated_device: EmulatedDevice,
                                       emulated_miopen_engine: MiopenEngine) -> None:
    for row, config in itertools.product(Row, ("fp16_nhwc", "bf16_nhwc")):
        if expected_path(row, emulated_device.version_name, config) == REFUSED:
            continue
        case = build(row, *CONFIGS[config])
        h = Handle()
        with _plan(emulated_miopen_engine, case, h) as plan:
            before = dict(emulated_device.live_allocations())
            bufs, ws, _ = _pack(case, plan)
            plan.execute(bufs, ws, h)
            assert emulated_device.live_allocations() == before


def test_device_pointers_go_straight_through(emulated_device: EmulatedDevice,
                                             emulated_miopen_engine: MiopenEngine) -> None:
    from test_miopen_engine_numerics import check_outputs

    case = build(Row.BN_TRAINING_ACT, *CONFIGS["fp32_nchw"])
    h = Handle()
    with _plan(emulated_miopen_engine, case, h) as plan:
        bufs: dict[int, Any] = {}
        for t, arr in case.inputs.items():
            phys = np.ascontiguousarray(arr.transpose(np.argsort(arr.strides)[::-1]))
            bufs[t.uid] = emulated_device.upload(phys)
        outs = case.empty_outputs()
        for role, arr in outs.items():
            bufs[case.outputs[role].uid] = emulated_device.alloc(arr.nbytes)
        ws = emulated_device.alloc(plan.workspace_size) if plan.workspace_size else None
        mark = len(emulated_device.calls)
        plan.execute(bufs, ws, h)
        assert not [n for n in emulated_device.call_names()[mark:] if n.startswith("hip")]
        for role, t in case.outputs.items():
            outs[role] = emulated_device.download(bufs[t.uid], t.dim, np.float32, t.stride)
        check_outputs(case, outs)


def test_workspace_checked_before_any_call(emulated_device: EmulatedDevice,
                                           emulated_miopen_engine: MiopenEngine) -> None:
    case = build(Row.CONV_FPROP, *CONFIGS["fp32_nchw"])
    h = Handle()
    with _plan(emulated_miopen_engine, case, h) as plan:
        bufs, _, _ = _pack(case, plan)
        mark = len(emulated_device.calls)
        with pytest.raises(WorkspaceError, match=str(plan.workspace_size)):
            plan.execute(bufs, interop.resolve(np.zeros(plan.workspace_size - 1, np.uint8)), h)
        with pytest.raises(WorkspaceError):
            plan.execute(bufs, None, h)
        missing = {k: v for k, v in bufs.items() if k != case.outputs["y"].uid}
        ws = interop.resolve(np.zeros(plan.workspace_size, np.uint8))
        with pytest.raises(VariantPackError, match=r"conv::Y.*missing"):
            plan.execute(missing, ws, h)
        assert emulated_device.call_names()[mark:] == []


# ============================================================================ no lib / no GPU
def test_no_gpu_is_a_reason(emulated_device: EmulatedDevice) -> None:
    engine = MiopenEngine(lambda: emulated_device.miopen, lambda: emulated_device.hip)
    emulated_device.fail("miopenCreate", 7)
    reason = engine.check_support(build(Row.BN_INFERENCE, *CONFIGS["fp32_nchw"]).graph, Handle())
    assert reason is not None and reason.startswith("no AMD GPU available: miopenCreate failed")


def test_no_library_is_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    from miopen_ctypes import MIOpenNotFoundError

    monkeypatch.delenv("HIPDNN_MIOPEN_LIBRARY", raising=False)  # the user named no file

    def missing() -> Any:
        raise MIOpenNotFoundError([("$ROCM_PATH", "not set"),
                                   ("default ROCm prefix=/opt/rocm: /opt/rocm/lib/libMIOpen.so.1",
                                    "no such file")])

    engine = MiopenEngine(missing)
    reason = engine.check_support(build(Row.CONV_FPROP, *CONFIGS["fp32_nchw"]).graph, Handle())
    # one line: the search list and the fix are in `info` and in the exception, not in every
    # reason, log line and picture; unless the user named a file, which it then names
    assert reason == "MIOpen library not found (`python -m hipdnn info` says where hipdnn looked)"


def test_import_loads_no_library() -> None:
    code = ("import hipdnn, hipdnn.engines.miopen as m, miopen_ctypes.loader as L; "
            "assert m.ENGINE._libs is None and not L._cache; "
            "assert m.ENGINE.name == 'MIOPEN_ENGINE' and m.ENGINE.rank == 0; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False, env={"PYTHONPATH": ".", "PATH": ""}, cwd=_root())
    assert out.stdout.strip() == "ok", out.stderr


def _root() -> str:
    from pathlib import Path

    return str(Path(__file__).resolve().parents[2])


@pytest.mark.parametrize("row", [Row.BN_TRAINING, Row.CONV_FPROP, Row.BN_INF_DRELU_BN_BWD],
                         ids=lambda r: r.name.lower())
def test_errors_with_device_pointers_are_typed(emulated_device: EmulatedDevice,
                                               emulated_miopen_engine: MiopenEngine,
                                               row: Row) -> None:
    config = "fp16_nhwc"  # the fallback paths
    kw: dict[str, Any] = {"running": True} if row == Row.BN_TRAINING else {}
    # 5-D fp16 for the DReLU row: its fallback on 3.4 without the channels-last inference 3.4 lacks
    case = (build(row, CONFIGS[config][0], "NCDHW") if row == Row.BN_INF_DRELU_BN_BWD
            else build(row, *CONFIGS[config], **kw))
    h = Handle()
    with _plan(emulated_miopen_engine, case, h) as plan:
        bufs = {t.uid: emulated_device.upload(a) for t, a in case.inputs.items()}
        bufs.update({t.uid: emulated_device.alloc(4096) for t in case.outputs.values()})
        ws = emulated_device.alloc(plan.workspace_size) if plan.workspace_size else None
        version = emulated_device.version_name
        calls = EXEC_CALLS[(row, version, expected_path(row, version, config))]
        for name in calls:
            emulated_device.fail(name, 3)
            with pytest.raises(MiopenExecutionError) as info:
                plan.execute(bufs, ws, h)
            assert info.value.function == name and row.value in str(info.value)
        if row == Row.BN_TRAINING:  # the running-stats copy goes through hipMemcpy
            emulated_device.fail("hipMemcpy", 1)
            with pytest.raises(MiopenExecutionError, match="hipMemcpy"):
                plan.execute(bufs, ws, h)
        plan.execute(bufs, ws, h)
