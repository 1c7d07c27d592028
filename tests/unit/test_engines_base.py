"""hipdnn.backend.engine: engine ids, knob constraints, plan lifecycle, the registry."""

from __future__ import annotations

from typing import Any

import pytest

from hipdnn import engines
from hipdnn.backend import registry as engine_registry
from hipdnn.backend.engine import Engine, ExecutionPlan, fnv1a_64
from hipdnn.backend.knobs import (
    BENCHMARKING_KNOB,
    WORKSPACE_SIZE_LIMIT_KNOB,
    FloatConstraint,
    IntConstraint,
    Knob,
    KnobSetting,
    StringConstraint,
)
from hipdnn.core.errors import KnobError, PlanClosedError
from hipdnn.core.types import KnobValueType


def _signed(u: int) -> int:
    return u - (1 << 64) if u >= 1 << 63 else u


@pytest.mark.parametrize(("text", "unsigned"), [
    ("", 0xCBF29CE484222325),          # the offset basis
    ("a", 0xAF63DC4C8601EC8C),         # published FNV-1a 64 test vectors
    ("foobar", 0x85944171F73967E8),
])
def test_fnv1a_64_matches_published_vectors_as_signed_int64(text: str, unsigned: int) -> None:
    assert fnv1a_64(text) == _signed(unsigned)


def test_fnv1a_64_engine_names_are_distinct_signed_int64() -> None:
    ids = {fnv1a_64(n) for n in ("MIOPEN_ENGINE", "CPU_REFERENCE_ENGINE",
                                 "MIOPEN_ENGINE_DETERMINISTIC")}
    assert len(ids) == 3
    assert all(-(1 << 63) <= i < (1 << 63) for i in ids)
    assert fnv1a_64("MIOPEN_ENGINE") == 1563989756945604898


def test_global_knob_names_are_hipdnns() -> None:
    assert BENCHMARKING_KNOB == "global.benchmarking"
    assert WORKSPACE_SIZE_LIMIT_KNOB == "global.workspace_size_limit"


def test_int_constraint_accepts_in_range_and_rejects_with_range_in_message() -> None:
    c = IntConstraint(0, 1)
    assert c.check(1, "global.benchmarking") == 1
    with pytest.raises(KnobError, match=r"'global.benchmarking' = 2 .*\[0, 1\]") as info:
        c.check(2, "global.benchmarking")
    assert info.value.knob == "global.benchmarking"
    assert isinstance(info.value, ValueError)


def test_int_constraint_step_valid_values_and_types() -> None:
    c = IntConstraint(0, 4096, step=256)
    assert c.check(512, "ws") == 512
    with pytest.raises(KnobError, match="steps of 256"):
        c.check(100, "ws")
    with pytest.raises(KnobError, match="one of"):
        IntConstraint(0, 10, valid_values=(1, 3)).check(2, "k")
    for bad in (1.5, "1", True):
        with pytest.raises(KnobError, match="takes an integer"):
            c.check(bad, "ws")


def test_float_and_string_constraints() -> None:
    assert FloatConstraint(0.0, 1.0).check(0.5, "f") == 0.5
    with pytest.raises(KnobError, match=r"\[0.0, 1.0\]"):
        FloatConstraint(0.0, 1.0).check(2, "f")
    assert StringConstraint(("a", "b")).check("a", "s") == "a"
    with pytest.raises(KnobError, match=r"\['a', 'b'\]"):
        StringConstraint(("a", "b")).check("c", "s")


def test_knob_check_without_constraint_checks_type() -> None:
    k = Knob("x.name", KnobValueType.STRING, "a")
    assert k.check("z") == "z"
    with pytest.raises(KnobError, match="STRING"):
        k.check(3)
    assert KnobSetting("global.benchmarking", 1).value == 1


class _Engine(Engine):
    name = "TEST_BASE_ENGINE"
    rank = 7

    def check_support(self, graph: Any, handle: Any) -> str | None:
        return None

    def get_knobs(self, graph: Any, handle: Any) -> list[Knob]:
        return []

    def build_plan(self, graph: Any, knobs: dict[str, Any], handle: Any) -> ExecutionPlan:
        return _Plan(self, knobs)


class _Plan(ExecutionPlan):
    def __init__(self, engine: Engine, knobs: dict[str, Any]) -> None:
        super().__init__(engine, knobs, workspace_size=16)
        self.runs = 0
        self.frees = 0

    def _execute(self, buffers: Any, workspace: Any, handle: Any) -> None:
        self.runs += 1

    def _release(self) -> None:
        self.frees += 1


def test_engine_id_is_fnv_of_name() -> None:
    e = _Engine()
    assert e.engine_id == fnv1a_64("TEST_BASE_ENGINE") == Engine.id_of(e.name)
    assert "TEST_BASE_ENGINE" in repr(e)


def test_plan_close_is_idempotent_and_use_after_close_raises() -> None:
    plan = _Engine().build_plan(None, {}, None)
    assert plan.name == "TEST_BASE_ENGINE" and plan.workspace_size == 16
    plan.execute({}, None, None)
    plan.close()
    plan.close()
    assert plan.frees == 1 and plan.closed
    with pytest.raises(PlanClosedError, match="closed"):
        plan.execute({}, None, None)
    assert plan.runs == 1
    assert "closed" in repr(plan)


def test_plan_is_a_context_manager() -> None:
    with _Engine().build_plan(None, {}, None) as plan:
        plan.execute({}, None, None)
    assert plan.closed and plan.frees == 1  # type: ignore[attr-defined]


def test_plan_written_against_the_earlier_contract_is_still_guarded() -> None:
    """An engine overriding execute/close directly (before _execute/_release) keeps the
    guarantees: execute after close raises, close runs once."""

    class Legacy(ExecutionPlan):
        closes = 0

        def execute(self, buffers: Any, workspace: Any, handle: Any) -> None:
            pass

        def close(self) -> None:
            type(self).closes += 1

    legacy = Legacy(_Engine())
    legacy.close()
    legacy.close()
    assert Legacy.closes == 1 and legacy.closed
    with pytest.raises(PlanClosedError):
        legacy.execute({}, None, None)


def test_plan_without_release_still_tracks_closed() -> None:
    class Bare(ExecutionPlan):
        def _execute(self, buffers: Any, workspace: Any, handle: Any) -> None:
            pass

    p = Bare(_Engine())
    p.close()
    with pytest.raises(PlanClosedError):
        p.execute({}, None, None)


def test_register_unregister_and_lookup() -> None:
    e = engines.register(_Engine())
    try:
        reg = engines.registry()
        assert reg[e.engine_id] is e
        assert engines.get_engine("TEST_BASE_ENGINE") is e
        assert engines.get_engine(e.engine_id) is e
        ranks = [x.rank for x in reg.values()]
        assert ranks == sorted(ranks)
    finally:
        engines.unregister("TEST_BASE_ENGINE")
    assert e.engine_id not in engines.registry()
    with pytest.raises(KeyError, match="registered:"):
        engines.get_engine("TEST_BASE_ENGINE")
    with pytest.raises(TypeError):
        engines.register(object())  # type: ignore[arg-type]


def test_register_replaces_same_name() -> None:
    a, b = _Engine(), _Engine()
    engines.register(a)
    engines.register(b)
    try:
        assert engines.registry()[b.engine_id] is b
    finally:
        engines.unregister(b)


_EARLY_REGISTRATION = """
import sys
from hipdnn import engines
from hipdnn.backend.engine import Engine
from hipdnn.backend import registry as engine_registry
from hipdnn.backend.registry import _REGISTRY

class Mine(Engine):
    name = "CPU_REFERENCE_ENGINE"   # the built-in's name, hence its id
    rank = 3
    def check_support(self, graph, handle): return None
    def get_knobs(self, graph, handle): return []
    def build_plan(self, graph, knobs, handle): raise NotImplementedError

mine = engines.register(Mine())
assert not engine_registry._loaded and "hipdnn.engines.reference" not in sys.modules
reg = engines.registry()                 # first read: the built-ins load now
assert "hipdnn.engines.reference" in sys.modules
assert reg[mine.engine_id] is mine, reg
assert _REGISTRY[mine.engine_id] is mine
assert engines.get_engine("CPU_REFERENCE_ENGINE") is mine
names = sorted(e.name for e in reg.values())
assert "MIOPEN_ENGINE" in names or "hipdnn.engines.miopen" in engines.load_errors, names
print("OK", names)
"""


def test_engine_registered_before_first_read_is_not_replaced_by_builtin() -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run([sys.executable, "-c", _EARLY_REGISTRATION], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("OK") and "CPU_REFERENCE_ENGINE" in proc.stdout


def test_builtin_engine_already_registered_is_kept_on_reload(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading again (fresh flag) keeps whatever object holds a built-in id."""
    engines.load_builtin_engines()
    reg = engines.registry()
    before = dict(reg)
    monkeypatch.setattr(engine_registry, "_loaded", False)
    engines.load_builtin_engines()
    assert engines.registry() == before
    assert all(engines.registry()[k] is v for k, v in before.items())


_COLD_START_RACE = """
import sys, threading
from hipdnn import engines
from hipdnn.backend import registry as engine_registry
assert not engine_registry._loaded
barrier = threading.Barrier(8)
seen = []
def first_read():
    barrier.wait()
    seen.append(sorted(e.name for e in engines.registry().values()))
threads = [threading.Thread(target=first_read) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
assert len(seen) == 8 and all("CPU_REFERENCE_ENGINE" in names for names in seen), seen
assert all(names == seen[0] for names in seen), seen
print("OK")
"""


def test_threads_racing_the_first_registry_read_all_see_every_builtin_engine() -> None:
    """Loading completes before any thread sees the registry (it was marked loaded first)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    for _ in range(3):  # a fresh interpreter each time: the race is on the very first read
        proc = subprocess.run([sys.executable, "-c", _COLD_START_RACE], env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        assert proc.returncode == 0 and proc.stdout.strip() == "OK", proc.stderr
