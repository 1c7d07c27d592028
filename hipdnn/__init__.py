"""hipdnn: AMD hipDNN's graph API (graph -> plan -> execute) in pure Python over MIOpen.

>>> import hipdnn
>>> g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT)
>>> x = g.tensor(dim=[2, 3, 8, 8], name="x")
>>> y = g.relu(x, name="act").set_output(True)
>>> y.get_dim(), y.get_name()
([2, 3, 8, 8], 'act::OUT_0')

Importing loads no C library; MIOpen is loaded when a MIOpen plan is first built.
cudnn-frontend spellings (``pygraph``, ``data_type``, ``heur_mode``, ...) are aliases.
AMD's ``hipdnn_frontend`` API is :mod:`hipdnn.frontend` (``import hipdnn.frontend as hipdnn``);
its names that mean nothing else here (the attribute objects, ``Error``, ``DeviceBuffer``, ...)
are also ``hipdnn.<name>``, imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hipdnn.backend.engine import Engine, ExecutionPlan, fnv1a_64
from hipdnn.backend.knobs import (
    BENCHMARKING_KNOB,
    NO_WORKSPACE_LIMIT,
    WORKSPACE_SIZE_LIMIT_KNOB,
    IntConstraint,
    Knob,
    KnobSetting,
)
from hipdnn.core.errors import (
    ArgumentError,
    EngineError,
    ExecutionError,
    GraphChangedError,
    GraphNotSupportedError,
    GraphStateError,
    HandleError,
    HipdnnError,
    InvalidGraphError,
    KnobError,
    PlanClosedError,
    PlanIndexError,
    ValidationError,
    VariantPackError,
    WorkspaceError,
)
from hipdnn.core.handle import (
    Handle,
    create_handle,
    default_handle,
    destroy_handle,
    get_stream,
    set_stream,
)
from hipdnn.core.logs import FallbackWarning, configure_from_env
from hipdnn.core.shapes import packed_strides
from hipdnn.core.types import (
    BuildPlanPolicy,
    ConvolutionMode,
    DataType,
    HeurMode,
    KnobType,
    KnobValueType,
    NormFwdPhase,
    PointwiseMode,
    ReductionMode,
    TensorReordering,
)
from hipdnn.graph.graph import Graph
from hipdnn.interop.buffers import by_pointer
from hipdnn.ir.tensor import Tensor
from hipdnn.pipeline.executor import BoundExecution, PlanTiming
from hipdnn.pipeline.plan_cache import clear_plan_cache, plan_cache
from hipdnn.pipeline.plan_store import plan_store, set_plan_store
from hipdnn.pipeline.precompile import PrecompileSummary, precompile
from hipdnn.surfaces.aliases import (
    DeviceProperties,
    KernelCache,
    backend_version,
    backend_version_string,
    build_plan_policy,
    convolution_mode,
    create_device_properties,
    create_kernel_cache,
    cudnnGraphNotSupportedError,
    data_type,
    heur_mode,
    knob,
    knob_setting,
    knob_type,
    knob_value_type,
    norm_forward_phase,
    pointwise_mode,
    pygraph,
    reduction_mode,
    tensor,
    tensor_reordering,
)
from hipdnn.surfaces.jit import graph_cache, jit

if TYPE_CHECKING:
    from hipdnn import frontend
    from hipdnn.frontend import (
        AutotuneStrategy,
        BatchnormAttributes,
        BatchnormBackwardAttributes,
        BatchnormInferenceAttributes,
        BatchnormInferenceAttributesVarianceExt,
        ConvDgradAttributes,
        ConvFpropAttributes,
        ConvolutionDgradAttributes,
        ConvolutionFpropAttributes,
        ConvolutionWgradAttributes,
        ConvWgradAttributes,
        DeviceBuffer,
        EngineInfo,
        Error,
        ErrorCode,
        ExecutionTiming,
        PointwiseAttributes,
        PrimingFailurePolicy,
        TimingQuality,
        TuneMode,
        get_dtype_size,
    )

__version__ = "0.1.0"

#: hipdnn_frontend names that are also ``hipdnn.<name>``: none of them means anything else in
#: the native or the cudnn-frontend API. Graph, Tensor, Handle, the handle functions, KnobSetting
#: and the autotune structs differ in convention or could collide, so they stay in
#: hipdnn.frontend only.
FRONTEND_EXPORTS = frozenset({
    "AutotuneStrategy", "BatchnormAttributes", "BatchnormBackwardAttributes",
    "BatchnormInferenceAttributes", "BatchnormInferenceAttributesVarianceExt",
    "ConvDgradAttributes", "ConvFpropAttributes", "ConvWgradAttributes",
    "ConvolutionDgradAttributes", "ConvolutionFpropAttributes", "ConvolutionWgradAttributes",
    "DeviceBuffer", "EngineInfo", "Error", "ErrorCode", "ExecutionTiming", "PointwiseAttributes",
    "PrimingFailurePolicy", "TimingQuality", "TuneMode", "get_dtype_size",
})


def __getattr__(name: str) -> Any:
    """``hipdnn.frontend`` and its :data:`FRONTEND_EXPORTS`, imported on first use (keeps
    ``import hipdnn`` light)."""
    if name == "frontend" or name in FRONTEND_EXPORTS:
        module = importlib.import_module("hipdnn.frontend")
        return module if name == "frontend" else getattr(module, name)
    raise AttributeError(f"module 'hipdnn' has no attribute {name!r}")


configure_from_env()

__all__ = [  # noqa: RUF022  (native names, then the hipdnn_frontend re-exports)
    "BENCHMARKING_KNOB",
    "WORKSPACE_SIZE_LIMIT_KNOB",
    "NO_WORKSPACE_LIMIT",
    "ArgumentError",
    "BoundExecution",
    "BuildPlanPolicy",
    "ConvolutionMode",
    "DataType",
    "DeviceProperties",
    "Engine",
    "EngineError",
    "ExecutionError",
    "ExecutionPlan",
    "FallbackWarning",
    "Graph",
    "GraphChangedError",
    "GraphNotSupportedError",
    "GraphStateError",
    "HandleError",
    "Handle",
    "HeurMode",
    "HipdnnError",
    "IntConstraint",
    "InvalidGraphError",
    "KernelCache",
    "Knob",
    "KnobError",
    "KnobSetting",
    "KnobType",
    "KnobValueType",
    "NormFwdPhase",
    "PlanClosedError",
    "PlanIndexError",
    "PlanTiming",
    "PointwiseMode",
    "ReductionMode",
    "Tensor",
    "TensorReordering",
    "ValidationError",
    "VariantPackError",
    "WorkspaceError",
    "__version__",
    "backend_version",
    "backend_version_string",
    "build_plan_policy",
    "by_pointer",
    "clear_plan_cache",
    "plan_store",
    "set_plan_store",
    "precompile",
    "PrecompileSummary",
    "convolution_mode",
    "create_device_properties",
    "create_handle",
    "create_kernel_cache",
    "cudnnGraphNotSupportedError",
    "data_type",
    "default_handle",
    "destroy_handle",
    "fnv1a_64",
    "get_stream",
    "graph_cache",
    "heur_mode",
    "jit",
    "knob",
    "knob_setting",
    "knob_type",
    "knob_value_type",
    "norm_forward_phase",
    "packed_strides",
    "plan_cache",
    "pointwise_mode",
    "pygraph",
    "reduction_mode",
    "set_stream",
    "tensor",
    "tensor_reordering",
    # hipdnn_frontend (hipdnn.frontend), imported on first use
    "AutotuneStrategy",
    "BatchnormAttributes",
    "BatchnormBackwardAttributes",
    "BatchnormInferenceAttributes",
    "BatchnormInferenceAttributesVarianceExt",
    "ConvDgradAttributes",
    "ConvFpropAttributes",
    "ConvWgradAttributes",
    "ConvolutionDgradAttributes",
    "ConvolutionFpropAttributes",
    "ConvolutionWgradAttributes",
    "DeviceBuffer",
    "EngineInfo",
    "Error",
    "ErrorCode",
    "ExecutionTiming",
    "PointwiseAttributes",
    "PrimingFailurePolicy",
    "TimingQuality",
    "TuneMode",
    "frontend",
    "get_dtype_size",
]
