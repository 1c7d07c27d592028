"""Engine plugins: the contract (:mod:`hipdnn.engines.base`), knobs (:mod:`hipdnn.engines.knobs`)
and the registry (:mod:`hipdnn.engines.engine_registry`), re-exported here."""

from __future__ import annotations

from hipdnn.engines.base import Engine, ExecutionPlan, fnv1a_64
from hipdnn.engines.engine_registry import (
    BUILTIN_ENGINE_MODULES,
    get_engine,
    load_builtin_engines,
    load_errors,
    register,
    registry,
    unregister,
)
from hipdnn.engines.knobs import (
    BENCHMARKING_KNOB,
    WORKSPACE_SIZE_LIMIT_KNOB,
    FloatConstraint,
    IntConstraint,
    Knob,
    KnobSetting,
    StringConstraint,
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
