"""AMD's ``hipdnn_frontend`` Python API, on this package: ``import hipdnn.frontend as hipdnn``.

Scripts written for the compiled ``hipdnn_frontend`` wheel run here with that one import
changed (docs/HIPDNN_FRONTEND.md has the porting table and every difference). Everything maps
onto the native objects: :class:`Graph` wraps one :class:`hipdnn.Graph` (``graph.native``),
:class:`Tensor` and :class:`Handle` are subclasses of the native ones, and the engines are the
native engines. Upstream's status convention is kept here, not in the native API: pipeline
calls return an :class:`Error` (``is_good()``) instead of raising.

>>> import hipdnn.frontend as hipdnn
>>> g = hipdnn.Graph()
>>> g.set_io_data_type(hipdnn.DataType.FLOAT) is g
True
>>> g.build_plans().get_message()
'create_execution_plans() has not succeeded on this graph'
"""

from __future__ import annotations

from hipdnn.backend.knobs import FloatConstraint, IntConstraint, StringConstraint
from hipdnn.core.types import (
    BuildPlanPolicy,
    ConvolutionMode,
    DataType,
    KnobValueType,
    NormFwdPhase,
    PointwiseMode,
    ReductionMode,
)
from hipdnn.core.types import HeurMode as HeuristicMode
from hipdnn.frontend._attributes import (
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
    PointwiseAttributes,
)
from hipdnn.frontend._autotune import (
    AutotuneConfig,
    AutotuneResult,
    AutotuneStorageConfig,
    EngineConfigInfo,
    EngineSweepSpec,
    EngineVariant,
    Knob,
    KnobSetting,
    KnobSweepAxis,
)
from hipdnn.frontend._enums import (
    AttentionImplementation,
    AutotuneCacheWriteOutcome,
    AutotuneStrategy,
    BehaviorNote,
    DiagonalAlignment,
    MoeGroupedMatmulMode,
    PaddingMode,
    PluginLoadingMode,
    PrimingFailurePolicy,
    ResampleMode,
    TimingQuality,
    TuneMode,
)
from hipdnn.frontend._errors import Error, ErrorCode
from hipdnn.frontend._graph import Graph
from hipdnn.frontend._graph_run import ExecutionTiming
from hipdnn.frontend._handle import (
    EngineInfo,
    Handle,
    create_handle,
    destroy_handle,
    get_loaded_engine_plugin_paths,
    get_stream,
    hip_get_device_count,
    set_engine_plugin_paths,
    set_stream,
)
from hipdnn.frontend._hip import (
    HipEvent,
    HipStallGate,
    hip_can_use_stream_wait_value,
    hip_device_synchronize,
    hip_stream_synchronize,
)
from hipdnn.frontend._memory import DeviceBuffer, get_dtype_size
from hipdnn.frontend._tensor import Tensor

__all__ = [
    "AttentionImplementation",
    "AutotuneCacheWriteOutcome",
    "AutotuneConfig",
    "AutotuneResult",
    "AutotuneStorageConfig",
    "AutotuneStrategy",
    "BatchnormAttributes",
    "BatchnormBackwardAttributes",
    "BatchnormInferenceAttributes",
    "BatchnormInferenceAttributesVarianceExt",
    "BehaviorNote",
    "BuildPlanPolicy",
    "ConvDgradAttributes",
    "ConvFpropAttributes",
    "ConvWgradAttributes",
    "ConvolutionDgradAttributes",
    "ConvolutionFpropAttributes",
    "ConvolutionMode",
    "ConvolutionWgradAttributes",
    "DataType",
    "DeviceBuffer",
    "DiagonalAlignment",
    "EngineConfigInfo",
    "EngineInfo",
    "EngineSweepSpec",
    "EngineVariant",
    "Error",
    "ErrorCode",
    "ExecutionTiming",
    "FloatConstraint",
    "Graph",
    "Handle",
    "HeuristicMode",
    "HipEvent",
    "HipStallGate",
    "IntConstraint",
    "Knob",
    "KnobSetting",
    "KnobSweepAxis",
    "KnobValueType",
    "MoeGroupedMatmulMode",
    "NormFwdPhase",
    "PaddingMode",
    "PluginLoadingMode",
    "PointwiseAttributes",
    "PointwiseMode",
    "PrimingFailurePolicy",
    "ReductionMode",
    "ResampleMode",
    "StringConstraint",
    "Tensor",
    "TimingQuality",
    "TuneMode",
    "create_handle",
    "destroy_handle",
    "get_dtype_size",
    "get_loaded_engine_plugin_paths",
    "get_stream",
    "hip_can_use_stream_wait_value",
    "hip_device_synchronize",
    "hip_get_device_count",
    "hip_stream_synchronize",
    "set_engine_plugin_paths",
    "set_stream",
]
