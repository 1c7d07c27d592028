"""The rules every seed row shares: data types, virtuality, dense layouts, per-channel
parameters, FP32 compute, and the RELU -> miopenActivationMode_t mapping.

Each check raises :class:`Declined` whose message names the node, the port, the offending value
and what is allowed. Pure Python: no library is touched here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from hipdnn.core.shapes import LAYOUTS, layouts_of, packed_strides
from hipdnn.core.types import DataType, PointwiseMode
from hipdnn.ir.nodes import Node, PointwiseNode
from miopen_ctypes.enums import miopenActivationMode_t as M

__all__ = [
    "DATA_TYPES",
    "Activation",
    "Declined",
    "Tensor",
    "activation_of",
    "check_dtype",
    "check_fp32_compute",
    "check_param",
    "check_scalar",
    "check_virtual",
    "compute_type",
    "dense_layout",
    "dense_layouts",
    "descriptor_strides",
    "dtype_of",
    "is_pointwise",
    "label",
    "need",
    "port_tensor",
    "same_layout",
    "standalone_activation",
]

class Tensor(Protocol):
    """What a row reads of a validated graph tensor (hipdnn/ir/tensor.py's Tensor once the graph
    is validated: uid, dim, stride and data_type are all set, where the builder's Tensor types
    them Optional). Read-only: an engine never changes the graph it is given."""

    @property
    def name(self) -> str: ...
    @property
    def uid(self) -> int: ...
    @property
    def dim(self) -> tuple[int, ...]: ...
    @property
    def stride(self) -> tuple[int, ...]: ...
    @property
    def data_type(self) -> DataType: ...
    @property
    def is_virtual(self) -> bool: ...
    @property
    def is_pass_by_value(self) -> bool: ...
    @property
    def value(self) -> float | None: ...

DATA_TYPES = (DataType.FLOAT, DataType.HALF, DataType.BFLOAT16)
_FLT_MAX = 3.4028234663852886e38

class Declined(Exception):
    """The graph is not one of the seed rows; ``str(exc)`` names the failing rule."""


@dataclass(frozen=True)
class Activation:
    """A RELU_FWD / RELU_BWD node mapped to MIOpen: mode (miopenActivationMode_t) + alpha/beta."""

    mode: int
    alpha: float = 0.0
    beta: float = 0.0
    gamma: float = 0.0
    lower_clip: float | None = None
    upper_clip: float | None = None


def dtype_of(t: Tensor) -> DataType:
    return DataType(t.data_type)


def compute_type(node: Node, graph: object) -> DataType:
    """The node's compute type, inheriting the graph's; unset everywhere means FP32."""
    for value in (getattr(node, "compute_data_type", None), getattr(graph, "compute_data_type", None)):
        if value is not None and DataType(value) != DataType.NOT_SET:
            return DataType(value)
    return DataType.FLOAT


def label(t: Tensor) -> str:
    return f"{t.name!r}" if getattr(t, "name", None) else f"uid {t.uid}"


def port_tensor(node: Node, io: str, port: str, *, required: bool = True) -> Tensor | None:
    t = getattr(node, io).get(port)
    if t is None and required:
        raise Declined(f"node {node.name!r}: port {port} is not set; this row needs it")
    return t


def need(node: Node, io: str, port: str) -> Tensor:
    t = port_tensor(node, io, port)
    assert t is not None
    return t


def check_dtype(node: Node, port: str, t: Tensor, allowed: Sequence[DataType], rule: str) -> None:
    dt = dtype_of(t)
    if dt not in allowed:
        names = ", ".join(a.name for a in allowed)
        raise Declined(f"node {node.name!r}: port {port} (tensor {label(t)}) has data type "
                       f"{dt.name}; {rule} allows {names}")


def check_virtual(node: Node, port: str, t: Tensor, virtual: bool, rule: str) -> None:
    if bool(t.is_virtual) != virtual:
        state = "virtual" if t.is_virtual else "non-virtual"
        want = "virtual" if virtual else "non-virtual (in the variant pack)"
        raise Declined(f"node {node.name!r}: port {port} (tensor {label(t)}) is {state}; "
                       f"{rule} needs it {want}")


def dense_layouts(node: Node, port: str, t: Tensor) -> tuple[str, ...]:
    """The layouts the tensor is dense (packed) in, the strides of size-1 axes ignored (they
    address nothing): ``C == 1`` or ``N == 1`` tensors may be several at once. Dense NCHW/NHWC/
    NCDHW/NDHWC only."""
    layouts = layouts_of(t.dim, t.stride)
    if not layouts:
        raise Declined(f"node {node.name!r}: port {port} (tensor {label(t)}) has dims "
                       f"{list(t.dim)} strides {list(t.stride)}: dense tensors only, packed as one "
                       f"of {', '.join(LAYOUTS)} (strides of size-1 axes may be anything)")
    return layouts


def dense_layout(node: Node, port: str, t: Tensor) -> str:
    """The tensor's layout (its exact match first, else channel-first; see dense_layouts)."""
    return dense_layouts(node, port, t)[0]


def descriptor_strides(t: Tensor, layout: str) -> tuple[int, ...]:
    """The strides MIOpen is given for a dense tensor: its own when they are a seed layout's
    packed strides exactly; else (a size-1 axis with another stride, which addresses nothing)
    the packed strides of ``layout`` (the match's), or of the tensor's own layout when it is
    not dense in that one. Either way MIOpen addresses the same elements.

    >>> from types import SimpleNamespace as T
    >>> descriptor_strides(T(dim=(1, 4, 2, 2), stride=(99, 1, 8, 4)), "NHWC")
    (16, 1, 8, 4)
    """
    own = tuple(int(s) for s in t.stride)
    layouts = layouts_of(t.dim, own)
    if not layouts or own == packed_strides(t.dim, layouts[0]):
        return own
    return packed_strides(t.dim, layout if layout in layouts else layouts[0])


def same_layout(items: Sequence[tuple[Node, str, Tensor]]) -> str:
    """The one layout every data tensor is dense in (the first tensor's preference first)."""
    common: list[str] = []
    for i, (node, port, t) in enumerate(items):
        layouts = dense_layouts(node, port, t)
        shared = list(layouts) if i == 0 else [lay for lay in common if lay in layouts]
        if not shared:
            raise Declined(f"node {node.name!r}: port {port} (tensor {label(t)}) is "
                           f"{'/'.join(layouts)} but the other data tensors are "
                           f"{'/'.join(common)}; all must share one layout")
        common = shared
    return common[0]


def check_param(node: Node, port: str, t: Tensor, channels: int, rank: int, rule: str) -> None:
    want = (1, channels) + (1,) * (rank - 2)
    if tuple(t.dim) != want:
        raise Declined(f"node {node.name!r}: port {port} (tensor {label(t)}) has dims "
                       f"{list(t.dim)}; {rule} needs per-channel {list(want)}")
    dense_layout(node, port, t)


def check_fp32_compute(node: Node, graph: object, rule: str) -> None:
    ct = compute_type(node, graph)
    if ct != DataType.FLOAT:
        raise Declined(f"node {node.name!r}: compute data type {ct.name}; {rule} needs FLOAT")


def check_scalar(node: Node, port: str, t: Tensor | None) -> None:
    if t is not None and not getattr(t, "is_pass_by_value", False) and t.value is None:
        raise Declined(f"node {node.name!r}: port {port} must be a pass-by-value scalar")


# --------------------------------------------------------------------------- activation mapping
def activation_of(node: Node, graph: object) -> Activation:
    """Map a RELU_FWD/RELU_BWD node to MIOpen; RELU with no clip, lower clip, lower+upper clip."""
    check_fp32_compute(node, graph, "an activation node")
    slope = getattr(node, "relu_lower_clip_slope", None)
    if slope not in (None, 0.0):
        raise Declined(f"node {node.name!r}: relu_lower_clip_slope = {slope}; the MIOpen fused "
                       "patterns support RELU with no clip, a lower clip, or lower and upper clips")
    lower = getattr(node, "relu_lower_clip", None)
    upper = getattr(node, "relu_upper_clip", None)
    lower = None if lower is None else float(lower)
    upper = None if upper is None else float(upper)
    if upper is not None and math.isinf(upper) and upper > 0:
        upper = None
    if upper is not None and lower is not None and upper < lower:
        raise Declined(f"node {node.name!r}: relu_upper_clip {upper} < relu_lower_clip {lower}")

    if upper is None:
        if lower in (None, 0.0):
            return Activation(int(M.miopenActivationRELU), lower_clip=lower)
        return Activation(int(M.miopenActivationCLAMP), alpha=lower, beta=_FLT_MAX,
                          lower_clip=lower)
    if lower is None or (lower == 0.0 and upper > 0):  # a lower clip of 0 is ReLU's own
        if upper <= 0:
            raise Declined(f"node {node.name!r}: relu_upper_clip {upper} must be > 0 without a lower clip")
        return Activation(int(M.miopenActivationCLIPPEDRELU), alpha=upper, lower_clip=lower,
                          upper_clip=upper)
    return Activation(int(M.miopenActivationCLAMP), alpha=lower, beta=upper,
                      lower_clip=lower, upper_clip=upper)


def is_pointwise(node: Node, mode: PointwiseMode) -> bool:
    return isinstance(node, PointwiseNode) and PointwiseMode(node.mode) == mode


#: Standalone activation modes (MIOpen's activation API) and what they map to.
STANDALONE_MODES = (PointwiseMode.RELU_FWD, PointwiseMode.SIGMOID_FWD, PointwiseMode.TANH_FWD)


def standalone_activation(node: PointwiseNode, graph: object) -> Activation:
    """Map a single-node activation (miopenActivationForward) the way AMD's provider does:
    RELU_FWD with lower and upper clips -> CLAMP, upper clip only -> CLIPPEDRELU, a slope ->
    LEAKYRELU, else RELU (a lower clip alone -> CLAMP(lower, FLT_MAX), beyond AMD's, which
    refuses it); SIGMOID_FWD -> LOGISTIC; TANH_FWD -> TANH (alpha = beta = 1).

    A slope that is NaN or infinite, or a slope together with a clip (cudnn's leaky ReLU
    around a lower clip, or clipped above: MIOpen's LEAKYRELU is ``x > 0 ? x : slope * x``)
    is declined naming the value."""
    check_fp32_compute(node, graph, "a standalone MIOpen activation")
    mode = PointwiseMode(node.mode)
    if mode == PointwiseMode.SIGMOID_FWD:
        return Activation(int(M.miopenActivationLOGISTIC))
    if mode == PointwiseMode.TANH_FWD:
        return Activation(int(M.miopenActivationTANH), alpha=1.0, beta=1.0)
    if mode != PointwiseMode.RELU_FWD:
        raise Declined(f"node {node.name!r}: pointwise mode {mode.name}; a standalone MIOpen "
                       "activation supports RELU_FWD (ReLU, clipped ReLU, CLAMP, leaky ReLU), "
                       "SIGMOID_FWD and TANH_FWD")
    slope = getattr(node, "relu_lower_clip_slope", None)
    if slope is not None and not math.isfinite(float(slope)):
        raise Declined(f"node {node.name!r}: relu_lower_clip_slope = {slope}; a leaky ReLU "
                       "slope must be a finite number")
    if slope not in (None, 0.0):
        lower = getattr(node, "relu_lower_clip", None)
        upper = getattr(node, "relu_upper_clip", None)
        if lower not in (None, 0.0) or (upper is not None and not (math.isinf(upper) and upper > 0)):
            raise Declined(f"node {node.name!r}: relu_lower_clip_slope = {slope} with "
                           f"relu_lower_clip = {lower}, relu_upper_clip = {upper}; MIOpen's "
                           "LEAKYRELU is x > 0 ? x : slope * x (no clips): leave the clips unset")
        return Activation(int(M.miopenActivationLEAKYRELU), alpha=float(slope))
    return activation_of(node, graph)
