"""Engine plugins: the contract (:mod:`hipdnn.backend.engine`), knobs (:mod:`hipdnn.backend.knobs`)
and the registry (:mod:`hipdnn.backend.registry`), re-exported here."""

from __future__ import annotations

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
from hipdnn.backend.registry import (
    BUILTIN_ENGINE_MODULES,
    get_engine,
    load_builtin_engines,
    load_errors,
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
    "load_errors",
    "register",
    "registry",
    "unregister",
]
