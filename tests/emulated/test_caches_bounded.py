"""Every cache is bounded, and what was cached for a Handle goes when it closes (issue 9, defect 5).

Shown with the emulated device's live MIOpen objects: closing a Handle frees the descriptors of
the plans cached for it (before: every cached plan of a closed handle pinned its descriptors until
``clear_plan_cache()``); a graph still holding such a plan keeps it until the graph closes. The
engine-answer cache is LRU-bounded like the plan cache, and so are the validation memo and
the signature readers of ``hipdnn/pipeline/packsig.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from emulated.device import EmulatedDevice
from test_miopen_engine_calls import CONFIGS, REFUSED, expected_path
from test_miopen_engine_graphs import build
from test_miopen_engine_numerics import assert_refused, check_outputs

import hipdnn
from hipdnn.core.handle import Handle
from hipdnn.engines.miopen import MiopenEngine, Row
from hipdnn.ir import validation
from hipdnn.pipeline import packsig as _packsig
from hipdnn.pipeline.plan_cache import plan_cache

F32 = hipdnn.DataType.FLOAT


def _bn_graph(h: Handle, c: int, w: int) -> tuple[hipdnn.Graph, dict[Any, np.ndarray]]:
    """A BN-training graph on ``h`` of x (2, c, 2, w) with its host pack (outputs included)."""
    x = np.random.default_rng(c * 100 + w).normal(size=(2, c, 2, w)).astype(np.float32)
    g = hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32, handle=h)
    xt = g.tensor_like(x, "x")
    st, bt = (g.tensor(dim=[1, c, 1, 1], data_type=F32, name=k) for k in ("scale", "bias"))
    y, mean, inv = g.batchnorm(xt, st, bt, 1e-5)[:3]
    pack: dict[Any, np.ndarray] = {xt: x, st: np.ones(c, np.float32), bt: np.zeros(c, np.float32)}
    for t in (y, mean, inv):
        t.set_output(True)
        pack[t] = np.zeros(t.get_dim(), np.float32)
    return g, pack


def _build_run(g: hipdnn.Graph, pack: dict[Any, np.ndarray], engine: str = "MIOPEN_ENGINE") -> None:
    g.build_operation_graph()
    g.create_execution_plan_ext(engine, {})
    g.build_plans()
    g.execute(pack, np.zeros(max(g.get_workspace_size(), 1), np.uint8))


def _cached_for(h: Handle) -> int:
    """Plans and answers cached for ``h`` (every key ends with the handle's serial)."""
    return sum(1 for k in (*plan_cache._plans, *plan_cache._answers) if k[-1] == h.serial)


def test_closing_a_handle_frees_the_miopen_objects_cached_for_it(
        emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine) -> None:
    baseline = len(emulated_device.live_objects())
    for i in range(20):
        h = Handle()
        g, pack = _bn_graph(h, 1 + i % 4, 1 + i)
        _build_run(g, pack)
        g.close()  # the plan stays cached: a rebuild on h would reuse it
        assert len(plan_cache) >= 1 and _cached_for(h) >= 1
        assert len(emulated_device.live_objects()) > baseline  # descriptors + the MIOpen handle
        h.close()
        assert _cached_for(h) == 0
        assert len(emulated_device.live_objects()) == baseline, emulated_device.live_objects()
    assert not emulated_device.live_allocations()


def test_a_graph_holding_a_plan_of_a_closed_handle_frees_it_when_it_closes(
        emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine) -> None:
    baseline = len(emulated_device.live_objects())
    h = Handle()
    g, pack = _bn_graph(h, 3, 5)
    _build_run(g, pack)
    plan = g.plans[0]
    h.close()  # the handle's MIOpen handle goes; the graph still holds its plan
    assert not plan.closed and _cached_for(h) == 0
    with pytest.raises(hipdnn.core.errors.PlanClosedError):
        g.execute(pack, np.zeros(max(g.get_workspace_size(), 1), np.uint8))
    g.close()
    assert plan.closed
    assert len(emulated_device.live_objects()) == baseline


def test_plans_and_answers_are_lru_bounded_on_an_open_handle(
        emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan_cache, "maxsize", 4)
    monkeypatch.setattr(plan_cache, "max_answers", 10)
    hipdnn.clear_plan_cache()
    baseline = len(emulated_device.live_objects())
    with Handle() as h:
        for i in range(30):
            g, pack = _bn_graph(h, 2, 1 + i)
            _build_run(g, pack)
            g.close()
            assert len(plan_cache) <= 4 and len(plan_cache._answers) <= 10
        # 4 cached plans x 3 descriptors, plus the MIOpen handle: not 30 x 3
        assert len(emulated_device.live_objects()) <= baseline + 4 * 3 + 1
        assert _cached_for(h) <= 4 + 10
    assert len(emulated_device.live_objects()) == baseline
    assert len(plan_cache) == 0 and len(plan_cache._answers) == 0


def test_the_reference_engine_keeps_nothing_for_a_closed_handle() -> None:
    before = (len(plan_cache), len(plan_cache._answers))
    for i in range(10):
        with Handle() as h:
            g, pack = _bn_graph(h, 2, 1 + i)
            _build_run(g, pack, "CPU_REFERENCE_ENGINE")
            g.close()
            assert _cached_for(h) > 0
        assert _cached_for(h) == 0
    assert (len(plan_cache), len(plan_cache._answers)) == before


def test_the_validation_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validation, "_MEMO_SIZE", 8)
    with Handle() as h:
        for i in range(20):
            g, _ = _bn_graph(h, 1, 1 + i)
            g.validate()
            assert len(validation._memo) <= 8


def test_signature_readers_are_bounded() -> None:
    """A program making array-interface classes on the fly does not grow the reader table."""
    for i in range(3 * _packsig.MAX_READERS):
        cls = type(f"Array{i}", (), {"__array_interface__": {"data": (0, False), "shape": (1,),
                                                              "typestr": "<f4", "version": 3}})
        assert _packsig.signature(cls()) is not None
        assert _packsig.kind_of(cls()) == "object"
        assert len(_packsig.READERS) <= _packsig.MAX_READERS


def test_a_finished_threads_default_handle_leaves_nothing_cached(
        emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine) -> None:
    """A thread building on its default handle (no Handle given) and ending: what was cached for
    that handle is dropped, so its MIOpen handle and descriptors are freed (they were pinned by
    the plan cache until evicted). A graph that outlives the thread keeps working."""
    import gc
    import threading

    baseline = len(emulated_device.live_objects())
    kept: list[Any] = []

    def work(keep: bool) -> None:
        g, pack = _bn_graph(None, 2, 7)  # type: ignore[arg-type]  # the thread's default handle
        _build_run(g, pack)
        if keep:
            kept.append((g, pack))
        else:
            g.close()

    for keep in (False, True):
        t = threading.Thread(target=work, args=(keep,))
        t.start()
        t.join()
    gc.collect()
    g, pack = kept.pop()
    assert len(emulated_device.live_objects()) > baseline  # the kept graph's plan and handle
    g.execute(pack, np.zeros(max(g.get_workspace_size(), 1), np.uint8))  # still works
    assert not [k for k in (*plan_cache._plans, *plan_cache._answers)
                if k[-1] == g.handle.serial]
    g.close()
    del g, pack
    gc.collect()
    assert len(emulated_device.live_objects()) == baseline, emulated_device.live_objects()


#: every row with the default knobs, and the convolution rows with Find 2.0 too
ROW_KNOBS = [(row, bench) for row in Row
             for bench in ((0, 1) if row.name.startswith("CONV") else (0,))]


@pytest.mark.parametrize("row,benchmarking", ROW_KNOBS,
                         ids=[f"{r.name.lower()}-bench{b}" for r, b in ROW_KNOBS])
def test_every_seed_row_frees_its_cached_objects_with_the_handle(
        emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine, row: Row,
        benchmarking: int) -> None:
    """Descriptors, convolution solutions, Find 2.0 problems and fusion plans of every row's
    cached plan go when the Handle closes (fp32 NCHW: the fused paths)."""
    case = build(row, *CONFIGS["fp32_nchw"])
    if expected_path(row, emulated_device.version_name, "fp32_nchw") == REFUSED:
        assert_refused(emulated_device, emulated_miopen_engine, case)
        return
    baseline = len(emulated_device.live_objects())
    h = Handle()
    g = case.graph
    g.build_operation_graph(h)
    g.create_execution_plan_ext("MIOPEN_ENGINE", {"global.benchmarking": benchmarking})
    g.build_plans()
    outs = case.empty_outputs()
    g.execute({**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}},
              np.zeros(max(g.get_workspace_size(), 1), np.uint8))
    check_outputs(case, outs)
    g.close()  # the plan stays cached for h
    assert len(emulated_device.live_objects()) > baseline
    h.close()
    assert len(emulated_device.live_objects()) == baseline, emulated_device.live_objects()
    assert not emulated_device.live_allocations()


def test_handles_dropped_without_close_leave_nothing_cached(
        emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine) -> None:
    """A script that makes a Handle per graph and never closes it: cached plans do not keep the
    Handle alive, and once it is collected the cache forgets it at its next lookup (its MIOpen
    handle and descriptors were pinned until LRU eviction: up to 256 MIOpen handles)."""
    import gc

    baseline = len(emulated_device.live_objects())
    for i in range(6):
        g, pack = _bn_graph(Handle(), 2, 1 + i)  # the graph holds the only reference
        _build_run(g, pack)
        g.close()
        del g, pack
        gc.collect()
        # this cycle's plan (and only it) may still be cached until the next lookup
        assert len(emulated_device.live_objects()) <= baseline + 3 + 1
    plan_cache.answer(("any key",))  # a lookup forgets the collected handles
    assert len(plan_cache) == 0 and len(plan_cache._answers) == 0
    assert len(emulated_device.live_objects()) == baseline, emulated_device.live_objects()
