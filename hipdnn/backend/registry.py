"""The engine registry: which engines exist, in which order, and loading the built-in ones.

Built-in engines are imported lazily on the first :func:`registry` call, so ``import hipdnn``
loads no C library. A built-in engine package registers its engine when imported (by calling
:func:`register`) or exposes it as a module attribute ``ENGINE``. Loading happens once, under a
lock, and completes before any thread sees the registry (a thread racing the first build waits).

Other layers learn about changes through :func:`subscribe`: the plan cache drops an engine's
plans and answers when an engine of that id is registered or removed.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable

from hipdnn.backend.engine import Engine, fnv1a_64

__all__ = [
    "BUILTIN_ENGINE_MODULES",
    "get_engine",
    "load_builtin_engines",
    "load_errors",
    "register",
    "registry",
    "subscribe",
    "unregister",
]

#: Packages holding the built-in engines, imported by :func:`load_builtin_engines`.
BUILTIN_ENGINE_MODULES = ("hipdnn.engines.reference", "hipdnn.engines.miopen")
#: Why a built-in engine package could not be imported (module -> message), for diagnostics.
load_errors: dict[str, str] = {}

_REGISTRY: dict[int, Engine] = {}
_ORDERED: list[tuple[int, Engine]] | None = None  # registry() order, rebuilt after a change
_LOCK = threading.Lock()
_SUBSCRIBERS: list[Callable[[int], None]] = []
_loaded = False
_load_lock = threading.RLock()  # re-entrant: an engine package may read the registry on import


def subscribe(callback: Callable[[int], None]) -> None:
    """Call ``callback(engine_id)`` after an engine of that id is registered or removed."""
    _SUBSCRIBERS.append(callback)


def _changed(engine_id: int) -> None:
    for callback in list(_SUBSCRIBERS):
        callback(engine_id)


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
    _changed(engine.engine_id)
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
    _changed(key)


def _registered() -> dict[int, Engine]:
    with _LOCK:
        return dict(_REGISTRY)


def load_builtin_engines() -> None:
    """Import the built-in engine packages once; an import failure is recorded, not raised.

    Every caller returns only after loading has finished (threads wait on the lock; the flag is
    set after the imports). An engine the user registered before the registry was first read
    keeps its id: a built-in engine with the same id (same name) is not registered over it.
    """
    global _loaded
    if _loaded:
        return
    with _load_lock:
        if _loaded or getattr(_loading, "active", False):
            return  # done by another thread, or re-entered from an engine package's import
        _loading.active = True
        try:
            for modname in BUILTIN_ENGINE_MODULES:
                _load_one(modname)
        finally:
            _loading.active = False
            _loaded = True


_loading = threading.local()


def _load_one(modname: str) -> None:
    before = _registered()
    try:
        module = importlib.import_module(modname)
    except Exception as exc:  # a broken optional engine must not break the API
        load_errors[modname] = f"{type(exc).__name__}: {exc}"
        return
    # built-in packages register on import: put back any user engine they replaced
    for eid, engine in _registered().items():
        if eid in before and before[eid] is not engine:
            register(before[eid])
    builtin = getattr(module, "ENGINE", None)
    if isinstance(builtin, Engine) and builtin.engine_id not in before:
        register(builtin)


def registry() -> dict[int, Engine]:
    """A snapshot of the registered engines, id -> engine, ordered by (rank, name)."""
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
