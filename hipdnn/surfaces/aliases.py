"""cudnn-frontend's Python spellings, as aliases of hipdnn's own names.

A cudnn-frontend script for the supported ops runs after ``import hipdnn as cudnn``:
``cudnn.pygraph(...)``, ``cudnn.data_type.HALF``, ``cudnn.heur_mode.A``, ... all resolve here.
"""

from __future__ import annotations

import json

from hipdnn.backend.knobs import Knob, KnobSetting
from hipdnn.core.errors import ArgumentError, GraphNotSupportedError, ValidationError
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
from hipdnn.ir.tensor import Tensor

__all__ = [
    "DeviceProperties",
    "KernelCache",
    "backend_version",
    "backend_version_string",
    "build_plan_policy",
    "convolution_mode",
    "create_device_properties",
    "create_kernel_cache",
    "cudnnGraphNotSupportedError",
    "data_type",
    "heur_mode",
    "knob",
    "knob_setting",
    "knob_type",
    "knob_value_type",
    "norm_forward_phase",
    "pointwise_mode",
    "pygraph",
    "reduction_mode",
    "tensor",
    "tensor_reordering",
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
tensor_reordering = TensorReordering
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


_DEVICE_FORMAT = "hipdnn-ctypes.device_properties"


class DeviceProperties:
    """cudnn-frontend's device properties (for deviceless ahead-of-time builds): here only the
    device id. ``Graph(device_property=...)`` accepts and ignores it: no engine here builds for
    another device (CPU_REFERENCE_ENGINE needs none, MIOPEN_ENGINE builds on its handle's GPU).

    >>> import hipdnn
    >>> hipdnn.create_device_properties(hipdnn.create_device_properties(0).serialize()).device_id
    0
    """

    def __init__(self, device_id: int) -> None:
        self.device_id = device_id

    def serialize(self) -> str:
        """The properties as JSON, readable by :func:`create_device_properties`."""
        return json.dumps({"format": _DEVICE_FORMAT, "device_id": self.device_id})

    def __repr__(self) -> str:
        return f"DeviceProperties(device_id={self.device_id})"


def create_device_properties(device: int | str) -> DeviceProperties:
    """cudnn-frontend's ``create_device_properties(device_id)`` or
    ``create_device_properties(json_str)`` (what :meth:`DeviceProperties.serialize` returned)."""
    device_id: object = device
    if isinstance(device, str):
        try:
            doc = json.loads(device)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"create_device_properties: not a JSON document: {exc}") from None
        if not isinstance(doc, dict) or doc.get("format") != _DEVICE_FORMAT:
            raise ValidationError(f"create_device_properties: not a {_DEVICE_FORMAT} document "
                                  f"(what DeviceProperties.serialize() returns)")
        device_id = doc.get("device_id")
    if type(device_id) is not int or device_id < 0:
        raise ArgumentError(f"create_device_properties: the device id must be an int >= 0 (or "
                            f"the JSON of DeviceProperties.serialize()), got {device_id!r:.60}")
    return DeviceProperties(device_id)


_KERNEL_CACHE_FORMAT = "hipdnn-ctypes.kernel_cache"


class KernelCache:
    """cudnn-frontend's kernel cache (compiled kernels shared between graphs): it holds nothing
    here, and ``Graph(kernel_cache=...)`` accepts and ignores it. Rebuilding a graph of a known
    structure is served from hipdnn's plan cache; MIOpen keeps its kernels in its own on-disk
    cache.

    >>> import hipdnn
    >>> cache = hipdnn.create_kernel_cache()
    >>> cache.deserialize(cache.serialize())
    """

    def serialize(self) -> str:
        """The (empty) cache as JSON, readable by :meth:`deserialize`."""
        return json.dumps({"format": _KERNEL_CACHE_FORMAT})

    def deserialize(self, data: str | bytes) -> None:
        """Read :meth:`serialize`'s JSON (a cuDNN kernel cache is a ValidationError)."""
        try:
            doc = json.loads(data)
        except (json.JSONDecodeError, TypeError, UnicodeDecodeError) as exc:
            raise ValidationError(f"kernel_cache.deserialize: not a JSON document: {exc}") from None
        if not isinstance(doc, dict) or doc.get("format") != _KERNEL_CACHE_FORMAT:
            raise ValidationError(f"kernel_cache.deserialize: not a {_KERNEL_CACHE_FORMAT} "
                                  f"document (what KernelCache.serialize() returns; cuDNN's "
                                  f"kernel caches hold CUDA kernels and are not readable here)")


def create_kernel_cache() -> KernelCache:
    """cudnn-frontend's ``create_kernel_cache()`` (see :class:`KernelCache`)."""
    return KernelCache()
