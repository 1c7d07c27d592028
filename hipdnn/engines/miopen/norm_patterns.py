"""Layer norm and RMS norm graphs as MIOpen sees them: which node maps to which call, and why not.

MIOpen's layer norm (``miopenLayerNormForward`` / ``miopenLayerNormBackward``) normalizes each
row of a packed tensor over its trailing axes from ``normalized_dim`` on; its T5 layer norm
(``miopenT5LayerNormForward`` / ``Backward``, RMS norm without a mean) over the last axis. Their
kernels (MIOpenLayerNorm.cpp as embedded in the real 3.4.0 and 3.5.1 libraries) index memory
contiguously (``row * inner_size + i``) and read the weight and bias and write the mean and
inverse standard deviation in the data type of x (``INPUT_TYPE`` / ``OUTPUT_TYPE``).

The graph's nodes normalize over the axes where SCALE's dim is not 1. :func:`norm_geometry`
orders X's axes the way memory holds them; when the normalized axes are the innermost ones,
MIOpen is given the same memory with its dims in that order (a channels-last X normalized over
C is an (N, H, W, C) tensor with ``normalized_dim`` 3), and for T5 the normalized axes are
merged into one. Anything else is a :class:`Declined` naming the rule. Pure Python.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hipdnn.core.shapes import layout_of, layout_order, layout_strides
from hipdnn.core.types import DataType
from hipdnn.engines.miopen.roles import (
    LayerNormBackward,
    LayerNormForward,
    RmsNormBackward,
    RmsNormForward,
)
from hipdnn.engines.miopen.rules import (
    DATA_TYPES,
    Declined,
    Tensor,
    check_dtype,
    check_fp32_compute,
    check_scalar,
    check_virtual,
    dtype_of,
    label,
    need,
    port_tensor,
)
from hipdnn.ir.nodes import (
    LayernormBackwardNode,
    LayernormNode,
    Node,
    RmsnormBackwardNode,
    RmsnormNode,
)
from hipdnn.ir.nodes.layernorm import NormNodeBase

__all__ = ["NORM_CALLS", "NORM_NODES", "NormGeometry", "NormRow", "match_norm", "norm_geometry"]

#: The graph nodes MIOpen runs: layernorm and RMSnorm, forward and backward.
NORM_NODES = (LayernormNode, LayernormBackwardNode, RmsnormNode, RmsnormBackwardNode)
#: Each row class's MIOpen call (the library must export it).
NORM_CALLS: dict[type, str] = {
    LayerNormForward: "miopenLayerNormForward",
    LayerNormBackward: "miopenLayerNormBackward",
    RmsNormForward: "miopenT5LayerNormForward",
    RmsNormBackward: "miopenT5LayerNormBackward",
}
_INT32_MAX = 2**31 - 1
#: A norm row's tensors (``Match.t`` of the four norm rows).
NormRow = (LayerNormForward[Tensor, Tensor] | LayerNormBackward[Tensor]
           | RmsNormForward[Tensor, Tensor] | RmsNormBackward[Tensor])


@dataclass(frozen=True)
class NormGeometry:
    """X's axes as MIOpen is given them: ``order`` (graph axes, outermost first: the kept axes,
    then the normalized ones), ``outer`` and ``inner`` their dims."""

    order: tuple[int, ...]
    outer: tuple[int, ...]
    inner: tuple[int, ...]

    @property
    def dims(self) -> tuple[int, ...]:
        """X's dims in memory order (what MIOpen's x descriptor holds)."""
        return self.outer + self.inner

    @property
    def normalized_dim(self) -> int:
        """MIOpen's ``normalized_dim``: the first normalized axis of :attr:`dims`."""
        return len(self.outer)

    @property
    def rows(self) -> int:
        """How many statistics (one per normalized row)."""
        return math.prod(self.outer)


def _packed_in(t: Tensor, order: tuple[int, ...]) -> bool:
    """Whether ``t`` is packed with its axes in ``order`` (strides of size-1 axes ignored)."""
    want = layout_strides(t.dim, order)
    return all(d == 1 or int(s) == w for d, s, w in zip(t.dim, t.stride, want, strict=True))


def norm_geometry(node: NormNodeBase, x: Tensor, scale: Tensor) -> NormGeometry:
    """The geometry of ``node`` (normalizing over SCALE's axes), or :class:`Declined`."""
    axes = tuple(node.norm_axes(tuple(x.dim), tuple(scale.dim)))
    memory = layout_order(x.dim, x.stride)
    if not _packed_in(x, memory):
        raise Declined(f"node {node.name!r}: port X (tensor {label(x)}) has dims {list(x.dim)} "
                       f"strides {list(x.stride)}: MIOpen's layer norm kernels need packed tensors")
    order = tuple(a for a in memory if a not in axes) + tuple(a for a in memory if a in axes)
    if not _packed_in(x, order):
        raise Declined(f"node {node.name!r}: the normalized axes {list(axes)} (where SCALE's dim "
                       f"is not 1) are not the innermost axes of X in memory (strides "
                       f"{list(x.stride)}); MIOpen's layer norm kernels normalize each row of "
                       "contiguous elements: store X with the normalized axes last")
    n_outer = len(order) - len(axes)
    return NormGeometry(order, tuple(int(x.dim[a]) for a in order[:n_outer]),
                        tuple(int(x.dim[a]) for a in order[n_outer:]))


def _layout_name(x: Tensor) -> str:
    if len(x.dim) == 3:
        return "NLC" if tuple(x.stride) == layout_strides(x.dim, (0, 2, 1)) and x.dim[1] != 1 \
            else "NCL"
    return layout_of(x.dim, x.stride) or "packed"


def match_norm(node: NormNodeBase, graph: object) -> tuple[NormRow, DataType, str]:
    """(the row's tensors, data type, layout name) of a single layernorm / RMSnorm node (forward
    or backward) MIOpen can run, or :class:`Declined` naming the rule."""
    backward = isinstance(node, (LayernormBackwardNode, RmsnormBackwardNode))
    rms = isinstance(node, (RmsnormNode, RmsnormBackwardNode))
    call = {(False, False): "miopenLayerNormForward", (True, False): "miopenLayerNormBackward",
            (False, True): "miopenT5LayerNormForward",
            (True, True): "miopenT5LayerNormBackward"}[(backward, rms)]
    rule = f"{node.op} on MIOpen ({call})"
    check_fp32_compute(node, graph, rule)
    x = need(node, "inputs", "X")
    scale = need(node, "inputs", "SCALE")
    data = [("X", "inputs", x)]
    data += ([("DY", "inputs", need(node, "inputs", "DY")), ("DX", "outputs", need(node, "outputs", "DX"))]
             if backward else [("Y", "outputs", need(node, "outputs", "Y"))])
    for port, _, t in data:
        check_dtype(node, port, t, DATA_TYPES, rule)
        check_virtual(node, port, t, False, rule)
    dt = dtype_of(x)
    for port, _, t in data[1:]:
        if dtype_of(t) != dt:
            raise Declined(f"node {node.name!r}: port {port} (tensor {label(t)}) is "
                           f"{dtype_of(t).name} but X is {dt.name}; {rule} needs one data type")
    if math.prod(x.dim) > _INT32_MAX:
        raise Declined(f"node {node.name!r}: {math.prod(x.dim)} elements; {rule} allows at most "
                       f"{_INT32_MAX}")
    g = norm_geometry(node, x, scale)
    for port, _, t in data[1:]:
        if tuple(t.dim) != tuple(x.dim) or not _packed_in(t, g.order):
            raise Declined(f"node {node.name!r}: port {port} (tensor {label(t)}) has dims "
                           f"{list(t.dim)} strides {list(t.stride)} but X has {list(x.dim)} "
                           f"{list(x.stride)}; {rule} needs them in one packed layout")
    # per-feature tensors (SCALE's dims) and statistics (one per row): in X's data type, packed
    # in X's axis order (MIOpen's kernels read them as arrays of the data type)
    params: list[tuple[str, str]] = [("inputs", "SCALE")]
    stats: list[tuple[str, str]] = []
    if rms and not backward and port_tensor(node, "inputs", "BIAS", required=False) is not None:
        raise Declined(f"node {node.name!r}: port BIAS is set; MIOpen's T5 layer norm (RMS norm) "
                       "has no bias: the CPU engine runs an RMS norm with a bias")
    if rms and backward and port_tensor(node, "outputs", "DBIAS", required=False) is not None:
        raise Declined(f"node {node.name!r}: port DBIAS is set (has_dbias); MIOpen's T5 layer norm "
                       "backward computes dx and dscale only")
    if not rms and not backward:
        params.append(("inputs", "BIAS"))
    if backward:
        params += [("outputs", "DSCALE")] + ([] if rms else [("outputs", "DBIAS")])
        stats = ([] if rms else [("inputs", "MEAN")]) + [("inputs", "INV_VARIANCE")]
    else:
        stats = ([] if rms else [("outputs", "MEAN")]) + [("outputs", "INV_VARIANCE")]
    bound: dict[str, Tensor | None] = {}

    def bind(port: str, t: Tensor, what: str) -> None:
        """A real tensor of X's type, packed in X's axis order (``what`` names it in the decline)."""
        check_virtual(node, port, t, False, rule)
        _same_type(node, port, t, dt, rule)
        if not _packed_in(t, g.order):
            raise Declined(f"node {node.name!r}: port {port} (tensor {label(t)}) has dims "
                           f"{list(t.dim)} strides {list(t.stride)}: {rule} needs {what} packed in "
                           "X's axis order")
        bound[port] = t

    for io, port in params:
        bind(port, need(node, io, port), "it")
    for io, port in stats:
        st = port_tensor(node, io, port, required=backward)
        if st is None or (not backward and st.is_virtual):
            bound[port] = None  # INFERENCE, or virtual: the plan's workspace holds them
            continue
        bind(port, st, "the statistics")
    layout = _layout_name(x)
    if backward:
        dy, dx = data[1][2], data[2][2]
        if rms:
            inv = bound["INV_VARIANCE"]
            assert inv is not None
            return (RmsNormBackward(dy, x, scale, inv, dx, _bound(bound, "DSCALE")), dt, layout)
        return (LayerNormBackward(dy, x, scale, _bound(bound, "MEAN"), _bound(bound, "INV_VARIANCE"),
                                  dx, _bound(bound, "DSCALE"), _bound(bound, "DBIAS")), dt, layout)
    y = data[1][2]
    eps = need(node, "inputs", "EPSILON")
    check_scalar(node, "EPSILON", eps)
    if rms:
        return RmsNormForward(x, y, scale, bound["INV_VARIANCE"], eps), dt, layout
    return (LayerNormForward(x, y, scale, _bound(bound, "BIAS"), bound["MEAN"],
                             bound["INV_VARIANCE"], eps), dt, layout)


def _bound(bound: dict[str, Tensor | None], port: str) -> Tensor:
    t = bound[port]
    assert t is not None
    return t


def _same_type(node: Node, port: str, t: Tensor, dt: DataType, rule: str) -> None:
    if dtype_of(t) != dt:
        raise Declined(f"node {node.name!r}: port {port} (tensor {label(t)}) is "
                       f"{dtype_of(t).name} but X is {dt.name}; {rule} reads and writes the "
                       f"weight, bias and statistics in the data type of X (its kernels' "
                       f"INPUT_TYPE/OUTPUT_TYPE): give {port} as {dt.name}")
