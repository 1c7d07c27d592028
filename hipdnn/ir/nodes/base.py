"""The :class:`Node` base class and the shape/validation helpers the node classes share."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, ClassVar, Protocol, cast

from hipdnn.core.errors import ValidationError
from hipdnn.core.shapes import layout_order, layout_strides, packed_strides
from hipdnn.core.types import DataType, to_data_type
from hipdnn.ir.tensor import Tensor

__all__ = [
    "FLOAT_TYPES",
    "KnownTensor",
    "Node",
    "channels_last_hint",
    "check_dims",
    "check_rank",
    "check_tensor",
    "param_dims",
    "set_output_shape",
    "strides_like",
]

#: Element types the conv and batchnorm nodes accept (engines may accept fewer).
FLOAT_TYPES: frozenset[DataType] = frozenset(
    {DataType.FLOAT, DataType.HALF, DataType.BFLOAT16, DataType.DOUBLE})


class KnownTensor(Protocol):
    """A tensor whose dims and strides are known (what :func:`check_dims` returns)."""

    name: str
    dim: tuple[int, ...]
    stride: tuple[int, ...]
    data_type: DataType
    is_virtual: bool
    is_pass_by_value: bool
    value: float | None


class Node:
    """Base of every node: a name, a compute type, input and output ports, attributes.

    ``inputs``/``outputs`` map hipDNN port names to tensors (None for an absent optional port).
    """

    op: ClassVar[str] = ""
    INPUTS: ClassVar[tuple[str, ...]] = ()
    OUTPUTS: ClassVar[tuple[str, ...]] = ()
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()
    ATTRIBUTES: ClassVar[tuple[str, ...]] = ()
    #: Outputs shaped like the per-channel parameters; their dtype defaults to SCALE's dtype.
    PARAM_OUTPUTS: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, name: str = "", compute_data_type: Any = DataType.NOT_SET,
                 **ports: Tensor | None) -> None:
        self.name = str(name)
        try:
            self.compute_data_type: DataType = to_data_type(compute_data_type)
        except ValidationError as exc:
            raise ValidationError(f"compute_data_type: {exc}", node=self.name) from None
        self.inputs: dict[str, Tensor | None] = dict.fromkeys(self.INPUTS)
        self.outputs: dict[str, Tensor | None] = dict.fromkeys(self.OUTPUTS)
        for port, tensor in ports.items():
            if port in self.inputs:
                self.inputs[port] = tensor
            elif port in self.outputs:
                self.outputs[port] = tensor
            else:
                raise TypeError(f"{type(self).__name__} has no port {port!r}; ports: "
                                f"{list(self.INPUTS) + list(self.OUTPUTS)}")

    def infer(self) -> None:
        """Fill output dims/strides that follow from the inputs (silently skips what cannot)."""

    def validate(self) -> None:
        """Check inputs and attributes; set output shapes strictly. Raises ValidationError."""

    def attributes(self) -> dict[str, Any]:
        """Attribute values, JSON-able."""
        return {}

    def default_output_type(self, port: str) -> DataType | None:
        """A node-specific default dtype for an output port (None: the graph's rule applies)."""
        if port in self.PARAM_OUTPUTS:
            scale = self.inputs.get("SCALE")
            if scale is not None and scale.data_type != DataType.NOT_SET:
                return scale.data_type
        return None

    def __repr__(self) -> str:
        ins = ", ".join(f"{p}={t.name!r}" for p, t in self.inputs.items() if t is not None)
        outs = ", ".join(f"{p}={t.name!r}" for p, t in self.outputs.items() if t is not None)
        attrs = ", ".join(f"{k}={v!r}" for k, v in self.attributes().items() if v is not None)
        extra = f" {{{attrs}}}" if attrs else ""
        one = f"{type(self).__name__}({self.name!r}: {ins} -> {outs}{extra})"
        if len(one) <= 100:
            return one
        head = f"{type(self).__name__}({self.name!r}: {ins} -> {outs}"
        if len(head) <= 100:  # attributes on their own line
            return f"{head}\n  {{{attrs}}})"
        pad = "\n    "  # long nodes (BN with running stats) one port per line
        ins = pad.join(f"{p}={t.name!r}" for p, t in self.inputs.items() if t is not None)
        outs = pad.join(f"{p}={t.name!r}" for p, t in self.outputs.items() if t is not None)
        tail = f"\n  {{{attrs}}}" if attrs else ""
        return (f"{type(self).__name__}({self.name!r}:\n  in:{pad}{ins}\n  out:{pad}{outs}"
                f"{tail})")


def param_dims(x_dim: Sequence[int]) -> tuple[int, ...]:
    """Per-channel parameter dims for data dims ``x_dim``: (1, C, 1, 1[, 1])."""
    return (1, int(x_dim[1]), *([1] * (len(x_dim) - 2)))


def channels_last_hint(port: str, dim: Sequence[int]) -> str:
    """'' unless ``dim`` is 4-d or 5-d; else the hint that ``dim`` looks channels-last ordered
    (its channels last): dims are logical (N, C, ...) with the layout in the strides.

    >>> print(channels_last_hint("X", (2, 10, 10, 16)))
    ; X's dims [2, 10, 10, 16] look like NHWC order (channels last). Dims are always logical (N, C, H, W) and the layout lives in the strides: dim=[2, 16, 10, 10], stride=hipdnn.packed_strides([2, 16, 10, 10], "NHWC") (for an NHWC array a: g.tensor_like(a.transpose(0, 3, 1, 2)); torch: t.permute(0, 3, 1, 2))
    """
    if len(dim) not in (4, 5):
        return ""
    name, logical = ("NHWC", "(N, C, H, W)") if len(dim) == 4 else ("NDHWC", "(N, C, D, H, W)")
    fixed = [int(dim[0]), int(dim[-1]), *(int(d) for d in dim[1:-1])]
    axes = ", ".join(str(a) for a in (0, len(dim) - 1, *range(1, len(dim) - 1)))
    return (f"; {port}'s dims {[int(d) for d in dim]} look like {name} order (channels last). "
            f"Dims are always logical {logical} and the layout lives in the strides: "
            f"dim={fixed}, stride=hipdnn.packed_strides({fixed}, \"{name}\") (for an {name} "
            f"array a: g.tensor_like(a.transpose({axes})); torch: t.permute({axes}))")


def strides_like(dims: Sequence[int], like: Any) -> tuple[int, ...]:
    """Packed strides for ``dims`` in the same axis order as tensor ``like`` (else channel-first)."""
    stride, like_dim = getattr(like, "stride", None), getattr(like, "dim", None)
    if stride is None or like_dim is None or len(stride) != len(dims) or len(like_dim) != len(dims):
        return packed_strides(dims)
    return layout_strides(dims, layout_order(like_dim, stride))


def check_tensor(t: Tensor, node: str | None = None, port: str | None = None) -> None:
    """Dims positive, strides positive and of the same length as dims (when known)."""
    if t.dim is not None:
        if len(t.dim) == 0 or min(t.dim) <= 0:
            raise ValidationError(f"dims {list(t.dim)} must all be positive (and non-empty)",
                                  node=node, port=port, tensor=t.name)
        if t.stride is not None and len(t.stride) != len(t.dim):
            raise ValidationError(
                f"stride {list(t.stride)} has {len(t.stride)} entries but dim {list(t.dim)} has "
                f"{len(t.dim)}", node=node, port=port, tensor=t.name)
    if t.stride and min(t.stride) < 0:
        raise ValidationError(f"strides {list(t.stride)} must be >= 0", node=node, port=port,
                              tensor=t.name)


def check_dims(node: Node, port: str, dtypes: Collection[DataType] | None = None) -> KnownTensor:
    """The tensor at ``port``, which must be present with dims set, positive, and an allowed dtype."""
    t = node.inputs.get(port, node.outputs.get(port))
    if t is None:
        raise ValidationError("required input is missing", node=node.name, port=port)
    if t.dim is None:
        raise ValidationError("dims are not set; use set_dim([...])", node=node.name, port=port,
                              tensor=t.name)
    check_tensor(t, node.name, port)
    if t.stride is None:
        t._stride = packed_strides(t.dim)
    if dtypes is not None and t.data_type not in dtypes:
        allowed = ", ".join(sorted(d.name for d in dtypes))
        raise ValidationError(f"data type {t.data_type.name} is not allowed here; allowed: "
                              f"{allowed}", node=node.name, port=port, tensor=t.name)
    return cast(KnownTensor, t)


def check_rank(node: Node, port: str, t: KnownTensor, ranks: Collection[int]) -> None:
    """Raise unless ``t`` has one of ``ranks`` dims."""
    if len(t.dim) not in ranks:
        allowed = " or ".join(str(r) for r in sorted(ranks))
        raise ValidationError(f"rank mismatch: dims {list(t.dim)} have rank {len(t.dim)}; "
                              f"expected rank {allowed}", node=node.name, port=port, tensor=t.name)


def set_output_shape(node: Node, port: str, dims: Sequence[int], like: Any, *,
                     strict: bool) -> None:
    """Give output ``port`` the inferred ``dims`` (unless the user set them) and default strides.

    With ``strict``, dims the user set that disagree with ``dims`` raise ValidationError.
    """
    t = node.outputs.get(port)
    if t is None:
        return
    dims = tuple(int(d) for d in dims)
    if t.dim is None or t._dim_inferred:
        t._dim = dims
        t._dim_inferred = True
    elif strict and tuple(t.dim) != dims:
        raise ValidationError(f"dims {list(t.dim)} were set, but the op produces {list(dims)}",
                              node=node.name, port=port, tensor=t.name)
    dim = t.dim
    assert dim is not None  # set by the user or just inferred
    if t.stride is None or t._stride_inferred:
        t._stride = strides_like(dim, like)
        t._stride_inferred = True
    elif strict:
        check_tensor(t, node.name, port)
