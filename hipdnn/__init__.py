"""hipdnn: AMD hipDNN's graph API (graph -> plan -> execute) in pure Python over MIOpen."""

from __future__ import annotations

from hipdnn.errors import (
    EngineError,
    ExecutionError,
    GraphNotSupportedError,
    GraphStateError,
    HipdnnError,
    InvalidGraphError,
    KnobError,
    PlanClosedError,
    ValidationError,
    VariantPackError,
    WorkspaceError,
)
from hipdnn.types import (
    BuildPlanPolicy,
    ConvolutionMode,
    DataType,
    HeurMode,
    KnobValueType,
    NormFwdPhase,
    PointwiseMode,
)

__all__ = [
    "BuildPlanPolicy",
    "ConvolutionMode",
    "DataType",
    "EngineError",
    "ExecutionError",
    "GraphNotSupportedError",
    "GraphStateError",
    "HeurMode",
    "HipdnnError",
    "InvalidGraphError",
    "KnobError",
    "KnobValueType",
    "NormFwdPhase",
    "PlanClosedError",
    "PointwiseMode",
    "ValidationError",
    "VariantPackError",
    "WorkspaceError",
]
