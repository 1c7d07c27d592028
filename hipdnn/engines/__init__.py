"""Engine plugins: the contract (:mod:`hipdnn.engines.base`) and the registry.

Built-in engines are imported lazily on the first :func:`registry` call, so ``import hipdnn``
loads no C library. A built-in engine package registers its engine when imported (by calling
:func:`register`) or exposes it as a module attribute ``ENGINE``.
"""

from __future__ import annotations

import importlib
import threading

from hipdnn.engines import base as _base
from hipdnn.engines.base import (
    BENCHMARKING_KNOB,
    WORKSPACE_SIZE_LIMIT_KNOB,
    Engine,
    ExecutionPlan,
    FloatConstraint,
    IntConstraint,
    Knob,
    KnobSetting,
    StringConstraint,
    fnv1a_64,
    get_engine,
    register,
    registry,
    unregister,
)

__all__ = [
    "BENCHMARKING_KNOB",
    "BUILTIN_ENGINE_MODULES",
    "WORKSPACE_SIZE_LIMIT_KNOB",
    "Engine",
    "ExecutionPlan",
    "FloatConstraint",
    "IntConstraint",
    "Knob",
    "KnobSetting",
    "StringConstraint",
    "fnv1a_64",
    "get_engine",
    "load_builtin_engines",
    "register",
    "registry",
    "unregister",
]

#: Packages holding the built-in engines, imported by :func:`load_builtin_engines`.
BUILTIN_ENGINE_MODULES = ("hipdnn.engines.reference", "hipdnn.engines.miopen")

_loaded = False
_load_lock = threading.Lock()
#: Why a built-in engine package could not be imported (module -> message), for diagnostics.
load_errors: dict[str, str] = {}


def _registered() -> dict[int, Engine]:
    with _base._LOCK:
        return dict(_base._REGISTRY)


def load_builtin_engines() -> None:
    """Import the built-in engine packages once; an import failure is recorded, not raised.

    An engine the user registered before the registry was first read keeps its id: a
    built-in engine with the same id (same name) is not registered over it.
    """
    global _loaded
    if _loaded:
        return
    with _load_lock:
        if _loaded:
            return
        _loaded = True
        for modname in BUILTIN_ENGINE_MODULES:
            before = _registered()
            try:
                module = importlib.import_module(modname)
            except Exception as exc:  # a broken optional engine must not break the API
                load_errors[modname] = f"{type(exc).__name__}: {exc}"
                continue
            # built-in packages register on import: put back any user engine they replaced
            for eid, engine in _registered().items():
                if eid in before and before[eid] is not engine:
                    register(before[eid])
            builtin = getattr(module, "ENGINE", None)
            if isinstance(builtin, Engine) and builtin.engine_id not in before:
                register(builtin)
