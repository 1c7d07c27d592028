"""The engine plugin contract: :class:`Engine` and :class:`ExecutionPlan`.

An engine is a plain Python object. For a validated graph it says whether it applies (``None``)
or why not (a string), lists its knobs (:mod:`hipdnn.backend.knobs`), and builds an
:class:`ExecutionPlan`. Engines are keyed by ``fnv1a_64(name)``, the 64-bit FNV-1a hash hipDNN
uses for engine ids; :mod:`hipdnn.backend.registry` holds the registered ones.

>>> fnv1a_64("MIOPEN_ENGINE") == Engine.id_of("MIOPEN_ENGINE")
True
"""

from __future__ import annotations

import functools
import itertools
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from hipdnn.backend.knobs import (
    Knob,
    KnobValue,
)
from hipdnn.core.errors import PlanClosedError

if TYPE_CHECKING:
    from types import TracebackType

    from hipdnn.core.handle import Handle
    from hipdnn.ir.view import GraphView

__all__ = [
    "Engine",
    "ExecutionPlan",
    "TransientReason",
    "fnv1a_64",
]

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK64 = (1 << 64) - 1


def fnv1a_64(name: str) -> int:
    """hipDNN's engine id: FNV-1a 64 over the UTF-8 bytes of ``name``, as a signed int64."""
    h = _FNV_OFFSET
    for byte in name.encode("utf-8"):
        h = ((h ^ byte) * _FNV_PRIME) & _MASK64
    return h - (1 << 64) if h >= 1 << 63 else h


class TransientReason(str):
    """A :meth:`Engine.check_support` reason that is not the engine's answer for the graph: a
    call failed on the way (out of device memory, a driver error, a library not loadable now),
    so the question was not answered. The planner reports it like any reason but does not
    remember it: the next build asks the engine again. A plain ``str`` reason is a definitive
    answer for the graph's structure and Handle and is cached.

    >>> reason = TransientReason("miopenCreate failed (miopenStatusAllocFailed (4))")
    >>> isinstance(reason, str), reason.startswith("miopenCreate")
    (True, True)
    """

    __slots__ = ()


class ExecutionPlan(ABC):
    """A built, executable plan: one engine, fixed knob values, a workspace size.

    Template methods: :meth:`execute` checks the plan is open, then calls the engine's
    :meth:`_execute`; :meth:`close` calls the engine's :meth:`_release` once and marks the plan
    closed (idempotent). Engines implement ``_execute`` and, when they own resources,
    ``_release``. Plans are context managers.

    An engine written against the earlier contract, overriding ``execute``/``close`` directly,
    still gets the same guarantees: :meth:`__init_subclass__` wraps such overrides with the
    open check / run-once logic (and only those).
    """

    engine: Engine
    knobs: dict[str, KnobValue]
    name: str
    workspace_size: int = 0
    _closed: bool = False
    #: True when the plan reads and writes each host buffer through the buffer's own strides,
    #: so a buffer holding the tensor in another layout is fine (see
    #: :func:`hipdnn.interop.buffers.check_against`); False: buffers are passed by pointer and must
    #: have the graph tensor's layout.
    reads_buffer_strides: bool = False
    #: Why this plan's choice came from a failure that may not recur (an engine sets it, e.g.
    #: MIOPEN_ENGINE running the heuristic solution after a failed Find 2.0 search): the planner
    #: then neither keeps it in the plan cache for other builds nor writes its decision to the
    #: persistent plan store, so the next build asks again.
    provisional: str | None = None

    def __init__(self, engine: Engine, knobs: Mapping[str, KnobValue] | None = None,
                 name: str | None = None, workspace_size: int = 0) -> None:
        self.engine = engine
        self.knobs = dict(knobs or {})
        self.name = name if name is not None else engine.name
        self.workspace_size = int(workspace_size)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "execute" in cls.__dict__:  # the earlier contract: guard the override itself
            cls.execute = _guard_execute(cls.__dict__["execute"])  # type: ignore[method-assign]
        if "close" in cls.__dict__:
            cls.close = _guard_close(cls.__dict__["close"])  # type: ignore[method-assign,assignment]

    def execute(self, buffers: Mapping[int, Any], workspace: Any, handle: Handle | None) -> None:
        """Run the plan. ``buffers`` maps uid -> Buffer (hipdnn.interop.buffers); ``workspace`` is a
        Buffer or None when ``workspace_size`` is 0. Raises :class:`PlanClosedError` once
        closed, before the engine's :meth:`_execute` runs."""
        self.check_open()
        self._execute(buffers, workspace, handle)

    def _execute(self, buffers: Mapping[int, Any], workspace: Any, handle: Handle | None) -> None:
        """The engine's run (called by :meth:`execute` on an open plan)."""
        raise NotImplementedError(f"{type(self).__name__} implements neither _execute nor execute")

    def bind(self, buffers: Mapping[int, Any], workspace: Any,
             handle: Handle | None) -> Callable[[], None]:
        """A callable that re-runs :meth:`execute` with these buffers (validated by the caller).

        Engines override it to prebuild their calls so each run costs little more than the
        calls themselves; the callable must still raise :class:`PlanClosedError` once the plan
        is closed. The default simply closes over ``execute`` (which checks that).
        """
        self.check_open()
        execute = self.execute

        def run() -> None:
            execute(buffers, workspace, handle)
        return run

    def close(self) -> None:
        """Release the plan's resources (the engine's :meth:`_release`, once). Idempotent and
        safe from several threads at once: the plan is marked closed first (executes starting
        later raise :class:`PlanClosedError`), then exactly one caller runs :meth:`_release`."""
        if not _mark_closed(self):
            return
        self._release()

    def _release(self) -> None:
        """Free what the plan owns; called once by :meth:`close`. Nothing by default."""
        return None  # a plan that owns nothing has nothing to free

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def check_open(self) -> None:
        """Raise :class:`PlanClosedError` if the plan was closed."""
        if self._closed:
            raise PlanClosedError(f"execution plan {self.name!r} ({self.engine.name}) is closed")

    def __enter__(self) -> ExecutionPlan:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def describe(self) -> str:
        """What the plan runs, in words (engines override it with their calls)."""
        return f"{self.engine.name} ({type(self).__name__})"

    def __repr__(self) -> str:
        state = " closed" if self._closed else ""
        return (f"<ExecutionPlan {self.name!r} engine={self.engine.name} knobs={self.knobs} "
                f"workspace={self.workspace_size} runs={self.describe()!r}{state}>")


_CLOSING = threading.Lock()


def _mark_closed(plan: ExecutionPlan) -> bool:
    """Set ``plan._closed``; True for the one caller that changed it (the others: False)."""
    with _CLOSING:
        if plan._closed:
            return False
        plan._closed = True
        return True


def _guard_execute(fn: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(fn)
    def execute(self: ExecutionPlan, *args: Any, **kwargs: Any) -> None:
        self.check_open()
        fn(self, *args, **kwargs)
    execute.__hipdnn_guarded__ = True  # type: ignore[attr-defined]
    return execute


def _guard_close(fn: Callable[[ExecutionPlan], None]) -> Callable[[ExecutionPlan], None]:
    if getattr(fn, "__hipdnn_guarded__", False):
        return fn

    @functools.wraps(fn)
    def close(self: ExecutionPlan) -> None:
        if self._closed:
            return
        try:
            fn(self)
        finally:
            _mark_closed(self)
    close.__hipdnn_guarded__ = True  # type: ignore[attr-defined]
    return close


class Engine(ABC):
    """An engine plugin. Subclasses set ``name`` and ``rank`` (lower = preferred)."""

    name: ClassVar[str] = ""
    rank: ClassVar[int] = 500

    @staticmethod
    def id_of(name: str) -> int:
        """Engine id for an engine name (FNV-1a 64, signed)."""
        return fnv1a_64(name)

    @property
    def engine_id(self) -> int:
        """``fnv1a_64(self.name)`` (memoized per name)."""
        memo = self.__dict__.get("_hipdnn_id")
        name = self.name
        if memo is None or memo[0] != name:
            memo = self.__dict__["_hipdnn_id"] = (name, fnv1a_64(name))
        return memo[1]

    @property
    def cache_token(self) -> tuple[int, int]:
        """``(engine_id, serial of this engine object)``: the plan cache keys plans and answers
        on it, so two engine objects of the same name (e.g. MIOPEN_ENGINE over MIOpen 3.4 and
        over 3.5) never share them."""
        token = self.__dict__.get("_hipdnn_token")
        if token is None or token[0] != self.engine_id:
            token = self.__dict__["_hipdnn_token"] = (self.engine_id, next(_TOKENS))
        return token

    def runtime_details(self) -> dict[str, str]:
        """Settings that decide how this engine runs in this process (``python -m hipdnn info``
        prints them); must import, load and compile nothing. Empty by default."""
        return {}

    @abstractmethod
    def check_support(self, graph: GraphView, handle: Handle | None) -> str | None:
        """None if this engine can run ``graph``, else a one-line reason why not: a plain
        ``str`` when that is the answer for the graph (cached per structure and Handle), a
        :class:`TransientReason` when a failure kept the engine from answering (not cached)."""

    @abstractmethod
    def get_knobs(self, graph: GraphView, handle: Handle | None) -> list[Knob]:
        """The knobs this engine offers for ``graph`` (may depend on the graph)."""

    @abstractmethod
    def build_plan(self, graph: GraphView, knobs: dict[str, KnobValue],
                   handle: Handle | None) -> ExecutionPlan:
        """Build a plan. ``knobs`` holds a validated value for every knob from get_knobs."""

    # -- the persistent plan store (hipdnn/pipeline/plan_store.py); optional -------------------
    def store_token(self, handle: Handle | None) -> str | None:
        """What this engine's decisions depend on besides the graph and the knobs (for MIOpen:
        the library version, the device architecture, MIOpen's switches), as a string; None
        (the default) keeps this engine's plans out of the plan store."""
        return None

    def plan_decision(self, plan: ExecutionPlan) -> Mapping[str, object] | None:
        """What the engine decided when it built ``plan`` (JSON-serializable), for the plan
        store; None: nothing worth keeping."""
        return None

    def build_from_decision(self, graph: GraphView, knobs: dict[str, KnobValue],
                            handle: Handle | None,
                            decision: Mapping[str, object]) -> ExecutionPlan | None:
        """Build the plan ``decision`` (from :meth:`plan_decision`, possibly of another
        process) describes, without deciding again; None when it no longer applies (the
        planner then builds afresh). Must never build a plan that differs from what
        :meth:`build_plan` could build for the same graph and knobs."""
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} id={self.engine_id} rank={self.rank}>"


#: Serials of engine objects (see Engine.cache_token).
_TOKENS = itertools.count(1)
