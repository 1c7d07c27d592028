"""The engine plugin contract: :class:`Engine`, :class:`ExecutionPlan`, knobs and the registry.

An engine is a plain Python object. For a validated graph it says whether it applies (``None``)
or why not (a string), lists its knobs, and builds an :class:`ExecutionPlan`. Engines are keyed
by ``fnv1a_64(name)``, the 64-bit FNV-1a hash hipDNN uses for engine ids.

>>> fnv1a_64("MIOPEN_ENGINE") == Engine.id_of("MIOPEN_ENGINE")
True
"""

from __future__ import annotations

import functools
import itertools
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, cast

from hipdnn.errors import KnobError, PlanClosedError
from hipdnn.types import KnobValueType

if TYPE_CHECKING:
    from types import TracebackType

    from hipdnn.graph import Graph
    from hipdnn.handle import Handle

__all__ = [
    "BENCHMARKING_KNOB",
    "WORKSPACE_SIZE_LIMIT_KNOB",
    "Engine",
    "ExecutionPlan",
    "FloatConstraint",
    "IntConstraint",
    "Knob",
    "KnobSetting",
    "KnobValue",
    "StringConstraint",
    "fnv1a_64",
    "get_engine",
    "register",
    "registry",
    "unregister",
]

#: 0 = heuristic solution choice, 1 = exhaustive search (hipDNN ``BENCHMARKING_KNOB_NAME``).
BENCHMARKING_KNOB = "global.benchmarking"
#: Largest workspace (bytes) a convolution solution may use (``WORKSPACE_SIZE_LIMIT_KNOB_NAME``).
WORKSPACE_SIZE_LIMIT_KNOB = "global.workspace_size_limit"

KnobValue = int | float | str

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK64 = (1 << 64) - 1


def fnv1a_64(name: str) -> int:
    """hipDNN's engine id: FNV-1a 64 over the UTF-8 bytes of ``name``, as a signed int64."""
    h = _FNV_OFFSET
    for byte in name.encode("utf-8"):
        h = ((h ^ byte) * _FNV_PRIME) & _MASK64
    return h - (1 << 64) if h >= 1 << 63 else h


@dataclass(frozen=True)
class IntConstraint:
    """Integer range ``[min, max]`` in steps of ``step`` from ``min``, or an explicit value list."""

    min: int
    max: int
    step: int = 1
    valid_values: tuple[int, ...] | None = None

    def describe(self) -> str:
        """The allowed values in words, e.g. ``"an integer in [0, 1]"``."""
        if self.valid_values is not None:
            return f"one of {list(self.valid_values)}"
        step = f" in steps of {self.step}" if self.step != 1 else ""
        return f"an integer in [{self.min}, {self.max}]{step}"

    def check(self, value: Any, knob: str = "knob") -> int:
        """Return ``value`` as an int, or raise :class:`KnobError` naming ``knob`` and the range."""
        if isinstance(value, bool) or not isinstance(value, int):
            try:
                import numpy as np

                is_np_int = isinstance(value, np.integer)
            except ImportError:  # pragma: no cover - numpy is a dependency
                is_np_int = False
            if not is_np_int:
                raise KnobError(
                    f"knob {knob!r} takes {self.describe()}; got {value!r} "
                    f"({type(value).__name__})", knob=knob)
        v = int(value)
        if self.valid_values is not None:
            ok = v in self.valid_values
        else:
            ok = self.min <= v <= self.max and (self.step <= 1 or (v - self.min) % self.step == 0)
        if not ok:
            raise KnobError(f"knob {knob!r} = {v} is out of range; valid: {self.describe()}",
                            knob=knob)
        return v


@dataclass(frozen=True)
class FloatConstraint:
    """Float range ``[min, max]``."""

    min: float
    max: float

    def describe(self) -> str:
        """The allowed values in words."""
        return f"a number in [{self.min}, {self.max}]"

    def check(self, value: Any, knob: str = "knob") -> float:
        """Return ``value`` as a float, or raise :class:`KnobError`."""
        if isinstance(value, (bool, str)) or not isinstance(value, (int, float)):
            raise KnobError(f"knob {knob!r} takes {self.describe()}; got {value!r}", knob=knob)
        v = float(value)
        if not self.min <= v <= self.max:
            raise KnobError(f"knob {knob!r} = {v} is out of range; valid: {self.describe()}",
                            knob=knob)
        return v


@dataclass(frozen=True)
class StringConstraint:
    """One of a fixed set of strings."""

    valid_values: tuple[str, ...]

    def describe(self) -> str:
        """The allowed values in words."""
        return f"one of {list(self.valid_values)}"

    def check(self, value: Any, knob: str = "knob") -> str:
        """Return ``value``, or raise :class:`KnobError` naming the valid strings."""
        if not isinstance(value, str) or value not in self.valid_values:
            raise KnobError(f"knob {knob!r} = {value!r} is invalid; valid: {self.describe()}",
                            knob=knob)
        return value


Constraint = IntConstraint | FloatConstraint | StringConstraint


@dataclass(frozen=True)
class Knob:
    """A tunable setting an engine offers for a given graph (hipDNN ``Knob``)."""

    id: str
    value_type: KnobValueType
    default: KnobValue
    constraint: Constraint | None = None
    description: str = ""

    def check(self, value: Any) -> KnobValue:
        """Validate ``value`` against the type and constraint; return the normalised value."""
        if self.constraint is not None:
            return self.constraint.check(value, self.id)
        expected: tuple[type, ...] = {
            KnobValueType.INT64: (int,), KnobValueType.FLOAT64: (int, float),
            KnobValueType.STRING: (str,),
        }.get(self.value_type, (int, float, str))
        if isinstance(value, bool) or not isinstance(value, expected):
            raise KnobError(f"knob {self.id!r} takes a {self.value_type.name} value; got {value!r}",
                            knob=self.id)
        return cast(KnobValue, value)


@dataclass(frozen=True)
class KnobSetting:
    """A value chosen for a knob: ``KnobSetting("global.benchmarking", 1)``."""

    id: str
    value: KnobValue


class ExecutionPlan(ABC):
    """A built, executable plan: one engine, fixed knob values, a workspace size.

    Subclasses implement :meth:`execute` and may override :meth:`close` to free resources.
    The base class makes both safe: ``close()`` is idempotent (a subclass's body runs once),
    and ``execute()`` after ``close()`` raises :class:`PlanClosedError` before the subclass runs.
    Plans are context managers.
    """

    engine: Engine
    knobs: dict[str, KnobValue]
    name: str
    workspace_size: int = 0
    _closed: bool = False

    def __init__(self, engine: Engine, knobs: Mapping[str, KnobValue] | None = None,
                 name: str | None = None, workspace_size: int = 0) -> None:
        self.engine = engine
        self.knobs = dict(knobs or {})
        self.name = name if name is not None else engine.name
        self.workspace_size = int(workspace_size)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "execute" in cls.__dict__:
            cls.execute = _guard_execute(cls.__dict__["execute"])  # type: ignore[method-assign]
        if "close" in cls.__dict__:
            cls.close = _guard_close(cls.__dict__["close"])  # type: ignore[method-assign,assignment]

    @abstractmethod
    def execute(self, buffers: Mapping[int, Any], workspace: Any, handle: Handle | None) -> None:
        """Run the plan. ``buffers`` maps uid -> Buffer (hipdnn.interop); ``workspace`` is a
        Buffer or None when ``workspace_size`` is 0."""

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
        """Release the plan's resources. Idempotent."""
        self._closed = True

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

    def __repr__(self) -> str:
        state = " closed" if self._closed else ""
        return (f"<ExecutionPlan {self.name!r} engine={self.engine.name} knobs={self.knobs} "
                f"workspace={self.workspace_size}{state}>")


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
            self._closed = True
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

    @abstractmethod
    def check_support(self, graph: Graph, handle: Handle | None) -> str | None:
        """None if this engine can run ``graph``, else a one-line reason why not."""

    @abstractmethod
    def get_knobs(self, graph: Graph, handle: Handle | None) -> list[Knob]:
        """The knobs this engine offers for ``graph`` (may depend on the graph)."""

    @abstractmethod
    def build_plan(self, graph: Graph, knobs: dict[str, KnobValue],
                   handle: Handle | None) -> ExecutionPlan:
        """Build a plan. ``knobs`` holds a validated value for every knob from get_knobs."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} id={self.engine_id} rank={self.rank}>"


_REGISTRY: dict[int, Engine] = {}
_ORDERED: list[tuple[int, Engine]] | None = None  # registry() order, rebuilt after a change
_TOKENS = itertools.count(1)
_LOCK = threading.Lock()


def register(engine: Engine) -> Engine:
    """Add ``engine`` to the registry (replacing one of the same name) and return it."""
    if not isinstance(engine, Engine):
        raise TypeError(f"register() takes an Engine instance, got {type(engine).__name__}")
    if not engine.name:
        raise ValueError(f"{type(engine).__name__} has no name")
    global _ORDERED
    with _LOCK:
        _REGISTRY[engine.engine_id] = engine
        _ORDERED = None
    _forget(engine.engine_id)
    return engine


def unregister(engine: Engine | str | int) -> None:
    """Remove an engine given as the object, its name or its id (no error if absent)."""
    if isinstance(engine, Engine):
        key = engine.engine_id
    elif isinstance(engine, str):
        key = fnv1a_64(engine)
    else:
        key = int(engine)
    global _ORDERED
    with _LOCK:
        _REGISTRY.pop(key, None)
        _ORDERED = None
    _forget(key)


def _forget(engine_id: int) -> None:
    """Drop cached plans and answers of an engine id (its object may have changed)."""
    import sys

    cache_module = sys.modules.get("hipdnn.plan_cache")
    if cache_module is not None:
        cache_module.plan_cache.purge_engine(engine_id)


def registry() -> dict[int, Engine]:
    """A snapshot of the registered engines, id -> engine, ordered by (rank, name)."""
    from hipdnn.engines import load_builtin_engines

    global _ORDERED
    load_builtin_engines()
    ordered = _ORDERED
    if ordered is None:
        with _LOCK:
            engines = sorted(_REGISTRY.values(), key=lambda e: (e.rank, e.name))
            ordered = _ORDERED = [(e.engine_id, e) for e in engines]
    return dict(ordered)


def get_engine(engine: int | str) -> Engine:
    """The registered engine with this id or name; KeyError lists the registered ones."""
    reg = registry()
    key = fnv1a_64(engine) if isinstance(engine, str) else int(engine)
    if key not in reg:
        known = ", ".join(f"{e.name} ({eid})" for eid, e in reg.items()) or "none"
        raise KeyError(f"no engine with id/name {engine!r}; registered: {known}")
    return reg[key]


def _registered_ids() -> Sequence[int]:
    with _LOCK:
        return list(_REGISTRY)
