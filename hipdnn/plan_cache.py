"""Process-wide cache of built plans and of engine answers, keyed by graph structure.

Keys are ``(graph.key(), engine.cache_token, knob settings, handle serial)``, so building a graph
with the same structure again reuses the plan instead of rebuilding it. ``cache_token`` is
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

from hipdnn.engines.base import ExecutionPlan
from hipdnn.engines.engine_registry import subscribe
from hipdnn.validation import clear_validation_memo

__all__ = ["PlanCache", "clear_plan_cache", "plan_cache"]


class PlanCache:
    """LRU cache of plans (``maxsize`` entries) plus unbounded small caches of engine answers."""

    def __init__(self, maxsize: int = 256) -> None:
        self.maxsize = maxsize
        self.enabled = True
        self.hits = 0
        self.misses = 0
        self._plans: OrderedDict[Hashable, ExecutionPlan] = OrderedDict()
        # plan -> {holder: count}; both weak, so a dead plan's address cannot inherit its counts
        # and a graph collected without close() releases what it held.
        self._holders: weakref.WeakKeyDictionary[ExecutionPlan, weakref.WeakKeyDictionary[Any, int]]
        self._holders = weakref.WeakKeyDictionary()
        self._answers: dict[Hashable, Any] = {}
        self._lock = threading.RLock()

    def answer(self, key: Hashable) -> tuple[bool, Any]:
        """(found, value) for a cached engine answer (support reason or knob list)."""
        with self._lock:
            if key in self._answers:
                return True, self._answers[key]
            return False, None

    def store_answer(self, key: Hashable, value: Any) -> None:
        """Remember an engine answer."""
        if self.enabled:
            with self._lock:
                self._answers[key] = value

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
        with self._lock:
            self._hold(plan, holder)
            if not self.enabled:
                return
            self._plans[key] = plan
            self._plans.move_to_end(key)
            while len(self._plans) > self.maxsize:
                _, old = self._plans.popitem(last=False)
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

    def purge_engine(self, engine_id: int) -> None:
        """Forget everything about one engine (it was registered again or unregistered)."""
        with self._lock:
            for key in [k for k in self._answers if _engine_of(k) == engine_id]:
                del self._answers[key]
            for key in [k for k in self._plans if _engine_of(k) == engine_id]:
                plan = self._plans.pop(key)
                if not self._held(plan):
                    plan.close()

    def clear(self) -> None:
        """Drop every cached plan (closing those no graph holds) and every engine answer."""
        with self._lock:
            plans = list(self._plans.values())
            self._plans.clear()
            self._answers.clear()
            for plan in plans:
                if not self._held(plan):
                    plan.close()

    def __len__(self) -> int:
        return len(self._plans)


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


def clear_plan_cache() -> None:
    """Clear the process-wide plan cache, and the memo of validated graph structures."""

    plan_cache.clear()
    clear_validation_memo()
