"""Process-wide cache of built plans and of engine answers, keyed by graph structure.

Keys are ``(graph.key(), engine.cache_token, knob settings, handle serial)``, so building a graph
with the same structure again reuses the plan instead of rebuilding it. Every key ends with the
serial of the :class:`~hipdnn.core.handle.Handle` it was made for; when that Handle closes, its plans
(those no live graph holds) are closed and its answers dropped, so their MIOpen objects are freed
with the handle. Cached plans do not keep a Handle alive: one dropped without ``close()`` is
forgotten the same way at the cache's next lookup or insert after it was collected. Both caches are bounded: at most ``maxsize`` plans and ``max_answers`` answers,
least recently used dropped first. ``cache_token`` is
``(engine_id, serial of the engine object)``: two engine objects of the same name (e.g. an
emulated MIOpen 3.4 and 3.5 MIOPEN_ENGINE) never share plans or answers. Graphs hold references to
the plans they use (counted per holding graph, weakly: a graph that is garbage collected without
``close()`` stops holding its plans); an evicted plan is closed once no live graph holds it.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from hipdnn.backend.engine import ExecutionPlan
from hipdnn.backend.registry import subscribe
from hipdnn.core.handle import _collected, collected_serials, on_close
from hipdnn.ir.validation import clear_validation_memo

__all__ = ["PlanCache", "clear_plan_cache", "plan_cache"]


class PlanCache:
    """LRU cache of plans (``maxsize`` entries) and of engine answers (``max_answers``)."""

    def __init__(self, maxsize: int = 256, max_answers: int = 1024) -> None:
        self.maxsize = maxsize
        self.max_answers = max_answers
        self.enabled = True
        self.hits = 0
        self.misses = 0
        self._plans: OrderedDict[Hashable, ExecutionPlan] = OrderedDict()
        # plan -> {holder: count}; both weak, so a dead plan's address cannot inherit its counts
        # and a graph collected without close() releases what it held.
        self._holders: weakref.WeakKeyDictionary[ExecutionPlan, weakref.WeakKeyDictionary[Any, int]]
        self._holders = weakref.WeakKeyDictionary()
        self._answers: OrderedDict[Hashable, Any] = OrderedDict()
        # handle serial -> the plan and answer keys made for it (dropped when it closes)
        self._by_handle: dict[int, set[Hashable]] = {}
        self._lock = threading.RLock()

    @property
    def answer_count(self) -> int:
        """How many engine answers are cached."""
        return len(self._answers)

    def _index(self, key: Hashable) -> None:
        serial = _handle_of(key)
        if serial is not None:
            self._by_handle.setdefault(serial, set()).add(key)

    def _unindex(self, key: Hashable) -> None:
        serial = _handle_of(key)
        keys = self._by_handle.get(serial) if serial is not None else None
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._by_handle[serial]  # type: ignore[arg-type]

    def forget_collected(self) -> None:
        """Forget now what was cached for Handles garbage-collected without ``close()`` (done
        anyway at the next lookup or insert)."""
        self._drain()

    def _drain(self) -> None:
        """Forget what was cached for Handles garbage-collected without close()."""
        if _collected:
            for serial in collected_serials():
                self.purge_handle(serial)

    def answer(self, key: Hashable) -> tuple[bool, Any]:
        """(found, value) for a cached engine answer (support reason or knob list)."""
        self._drain()
        with self._lock:
            if key in self._answers:
                self._answers.move_to_end(key)
                return True, self._answers[key]
            return False, None

    def store_answer(self, key: Hashable, value: Any) -> None:
        """Remember an engine answer (the least recently used goes beyond ``max_answers``)."""
        if self.enabled:
            with self._lock:
                self._answers[key] = value
                self._answers.move_to_end(key)
                self._index(key)
                while len(self._answers) > self.max_answers:
                    old, _ = self._answers.popitem(last=False)
                    if old not in self._plans:
                        self._unindex(old)

    def answer_or(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The cached engine answer for ``key``, or ``compute()`` (then remembered)."""
        found, value = self.answer(key)
        if not found:
            value = compute()
            self.store_answer(key, value)
        return value

    def _hold(self, plan: ExecutionPlan, holder: object) -> None:
        counts = self._holders.get(plan)
        if counts is None:
            counts = self._holders[plan] = weakref.WeakKeyDictionary()
        counts[holder] = counts.get(holder, 0) + 1

    def _held(self, plan: ExecutionPlan) -> bool:
        return bool(self._holders.get(plan))

    def hold(self, plan: ExecutionPlan, holder: object) -> None:
        """One more hold of ``plan`` by ``holder`` (undone by :meth:`release`): while held,
        an evicted plan is not closed."""
        with self._lock:
            self._hold(plan, holder)

    def acquire(self, key: Hashable, holder: object) -> ExecutionPlan | None:
        """The cached, open plan for ``key`` (now held by ``holder``), or None."""
        if not self.enabled:
            return None
        with self._lock:
            plan = self._plans.get(key)
            if plan is None or plan.closed:
                self.misses += 1
                return None
            self._plans.move_to_end(key)
            self._hold(plan, holder)
            self.hits += 1
            return plan

    def insert(self, key: Hashable, plan: ExecutionPlan, holder: object) -> None:
        """Cache a freshly built plan, held by ``holder``."""
        self._drain()
        with self._lock:
            self._hold(plan, holder)
            if not self.enabled:
                return
            self._plans[key] = plan
            self._plans.move_to_end(key)
            self._index(key)
            while len(self._plans) > self.maxsize:
                old_key, old = self._plans.popitem(last=False)
                if old_key not in self._answers:
                    self._unindex(old_key)
                if not self._held(old):
                    old.close()

    def release(self, plan: ExecutionPlan, holder: object) -> None:
        """Drop one hold of ``holder``; close the plan if it is no longer cached or held."""
        with self._lock:
            counts = self._holders.get(plan)
            if counts is not None and holder in counts:
                if counts[holder] > 1:
                    counts[holder] -= 1
                else:
                    del counts[holder]
            if self._held(plan):
                return
            self._holders.pop(plan, None)
            if not any(p is plan for p in self._plans.values()):
                plan.close()

    def _drop(self, keys: list[Hashable]) -> None:
        """Forget ``keys`` (plans and answers); close the dropped plans no graph holds."""
        for key in keys:
            self._answers.pop(key, None)
            plan = self._plans.pop(key, None)
            self._unindex(key)
            if plan is not None and not self._held(plan):
                plan.close()

    def purge_engine(self, engine_id: int) -> None:
        """Forget everything about one engine (it was registered again or unregistered)."""
        with self._lock:
            self._drop([k for k in (*self._answers, *self._plans) if _engine_of(k) == engine_id])

    def purge_handle(self, serial: int) -> None:
        """Forget everything cached for the Handle of ``serial`` (it closed): its plans no live
        graph holds are closed now (their MIOpen objects freed), the others when released."""
        with self._lock:
            self._drop(list(self._by_handle.get(serial, ())))

    def clear(self) -> None:
        """Drop every cached plan (closing those no graph holds) and every engine answer."""
        with self._lock:
            plans = list(self._plans.values())
            self._plans.clear()
            self._answers.clear()
            self._by_handle.clear()
            for plan in plans:
                if not self._held(plan):
                    plan.close()

    def __len__(self) -> int:
        return len(self._plans)


def _handle_of(key: Hashable) -> int | None:
    """The handle serial a key ends with (None: a key of another shape)."""
    if isinstance(key, tuple) and key and type(key[-1]) is int:
        return key[-1]
    return None


def _engine_of(key: Hashable) -> Any:
    """The engine id in a key (its second item is ``(engine_id, serial)`` or an engine id)."""
    if not isinstance(key, tuple) or len(key) < 2:
        return None
    engine = key[1]
    return engine[0] if isinstance(engine, tuple) and engine else engine


#: The process-wide cache used by every Graph.
plan_cache = PlanCache()
#: A re-registered or removed engine's plans and answers are dropped (their engine object changed).
subscribe(plan_cache.purge_engine)
#: A closed Handle's plans and answers go with it.
on_close(plan_cache.purge_handle)


def clear_plan_cache() -> None:
    """Clear the process-wide plan cache, and the memo of validated graph structures."""

    plan_cache.clear()
    clear_validation_memo()
