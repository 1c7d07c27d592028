"""Lifetime loop, short form of benchmarks/bench_leak.py (the 10,000-cycle numbers come from the
benchmark): build / execute / close on a fresh Handle with a distinct graph structure each cycle,
on CPU_REFERENCE_ENGINE and on MIOPEN_ENGINE over the emulated MIOpen 3.5. Afterwards nothing the
cycles created is cached or alive (plans, engine answers, MIOpen objects, device allocations), and
RSS is flat once the bounded validation memo is full (made small here so it fills quickly).
"""

from __future__ import annotations

import gc
import sys
from types import ModuleType

import pytest
from benchmark_module import load_benchmark

from hipdnn.ir import validation
from hipdnn.pipeline.plan_cache import plan_cache

MB = 2**20


@pytest.fixture(autouse=True)
def _nothing_cached_before() -> None:
    """Start from an empty plan cache: what earlier tests left (e.g. a default handle's answers)
    would otherwise be counted in the first sample and vanish by the last."""
    gc.collect()
    plan_cache.clear()


def _bench() -> ModuleType:
    try:
        return load_benchmark("bench_leak")
    finally:
        sys.modules.pop("bench_leak", None)


@pytest.mark.parametrize("engine,cycles", [("reference", 300), ("miopen", 150)])
def test_build_execute_close_cycles_leave_nothing_behind(monkeypatch: pytest.MonkeyPatch,
                                                         engine: str, cycles: int) -> None:
    monkeypatch.setattr(validation, "_MEMO_SIZE", 32)
    bench = _bench()
    samples = bench.run(engine, cycles, samples=6)
    first, third, last = samples[0], samples[2], samples[-1]
    assert last.cycle == cycles
    assert last.plans <= first.plans and last.answers <= first.answers
    assert last.miopen_objects == first.miopen_objects
    assert last.device_allocations == first.device_allocations
    if sys.platform.startswith("linux"):  # RSS flat over the last two thirds
        assert last.rss - third.rss < 2 * MB, [round(s.rss / MB, 1) for s in samples]


def test_the_benchmark_prints_the_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    assert _bench().main(["--cycles", "20"]) == 0
    out = capsys.readouterr().out
    assert out.count("everything the cycles created was released") == 2
    assert "RSS" in out and "MIOpen objs" in out


@pytest.mark.parametrize("engine", ["reference", "miopen"])
def test_distinct_structures_on_one_handle_stay_within_the_cache_bounds(
        monkeypatch: pytest.MonkeyPatch, engine: str) -> None:
    """One open Handle, a new structure per cycle: the caches fill to their bounds and no
    further; closing the handle releases everything."""
    from hipdnn.pipeline.plan_cache import plan_cache

    monkeypatch.setattr(plan_cache, "maxsize", 8)
    monkeypatch.setattr(plan_cache, "max_answers", 16)
    samples = _bench().run(engine, 60, samples=6, mode="structures")
    assert max(s.plans for s in samples) == 8 and max(s.answers for s in samples) == 16
    if engine == "miopen":  # 8 cached plans x 3 descriptors + the MIOpen handle, no more
        assert max(s.miopen_objects for s in samples) <= 8 * 3 + 1
    first, last = samples[0], samples[-1]
    assert (last.plans, last.answers, last.miopen_objects, last.device_allocations) == (
        first.plans, first.answers, first.miopen_objects, first.device_allocations)


def test_fresh_handles_on_one_structure_leave_nothing_behind() -> None:
    samples = _bench().run("miopen", 40, samples=4, mode="handles")
    assert all(s.plans == 0 and s.answers == 0 and s.miopen_objects == 0 for s in samples)


@pytest.mark.parametrize("engine", ["reference", "miopen"])
def test_handles_never_closed_leave_nothing_behind(engine: str) -> None:
    samples = _bench().run(engine, 60, samples=4, mode="dropped")
    assert all(s.plans == 0 and s.answers == 0 and s.miopen_objects == 0 for s in samples)
