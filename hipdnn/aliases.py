"""cudnn-frontend's Python spellings, as aliases of hipdnn's own names.

A cudnn-frontend script for the supported ops runs after ``import hipdnn as cudnn``:
``cudnn.pygraph(...)``, ``cudnn.data_type.HALF``, ``cudnn.heur_mode.A``, ... all resolve here.
"""

from __future__ import annotations

from hipdnn.engines.base import Knob, KnobSetting
from hipdnn.errors import GraphNotSupportedError
from hipdnn.graph import Graph
from hipdnn.handle import create_handle, destroy_handle, get_stream, set_stream
from hipdnn.tensor import Tensor
from hipdnn.types import (
    BuildPlanPolicy,
    ConvolutionMode,
    DataType,
    HeurMode,
    KnobType,
    KnobValueType,
    NormFwdPhase,
    PointwiseMode,
    ReductionMode,
)

__all__ = [
    "backend_version",
    "backend_version_string",
    "build_plan_policy",
    "convolution_mode",
    "create_handle",
    "cudnnGraphNotSupportedError",
    "data_type",
    "destroy_handle",
    "get_stream",
    "heur_mode",
    "knob",
    "knob_setting",
    "knob_type",
    "knob_value_type",
    "norm_forward_phase",
    "pointwise_mode",
    "pygraph",
    "reduction_mode",
    "set_stream",
    "tensor",
]

pygraph = Graph
tensor = Tensor
data_type = DataType
heur_mode = HeurMode
build_plan_policy = BuildPlanPolicy
convolution_mode = ConvolutionMode
pointwise_mode = PointwiseMode
norm_forward_phase = NormFwdPhase
knob = Knob
knob_setting = KnobSetting
knob_value_type = KnobValueType
knob_type = KnobType
reduction_mode = ReductionMode
cudnnGraphNotSupportedError = GraphNotSupportedError


def backend_version() -> int:
    """The loaded MIOpen version as major*10000 + minor*100 + patch, or 0 when none loads.

    This loads libMIOpen (cudnn-frontend's equivalent reports the cuDNN library).
    """
    import miopen_ctypes  # noqa: PLC0415 (import hipdnn loads no binding: tests/unit/test_graph_import.py)

    try:
        major, minor, patch = miopen_ctypes.load().capabilities.version
    except Exception:
        return 0
    return major * 10000 + minor * 100 + patch


def backend_version_string() -> str:
    """``"M.m.p"`` of the loaded MIOpen, or ``""`` when none loads."""
    v = backend_version()
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}" if v else ""
