"""1-D graphs (rank-3 tensors, NCL or NLC) on MIOpen: padded to 4-D as AMD's provider does.

AMD's MIOpen provider (rocm-libraries ``dnn-providers/miopen-provider``, its operation-support
page, note 6) runs the convolution and batchnorm rows on 3-D tensors by
padding them to 4-D with a trailing spatial dimension of 1, and extends a convolution's padding,
stride and dilation by that dimension (padding 0, stride 1, dilation 1). :func:`pad_1d` does the
same to a graph before the row is matched: N,C,L becomes N,C,L,1, so an NCL tensor is an NCHW
one of W = 1 and an NLC tensor (strides L*C, 1, C) an NHWC one (strides L*C, 1, C, C). Every
later step (rules, descriptors, solution lists, fusion plans) sees an ordinary 4-D graph; the
tensors keep their uids, so variant packs bind as before, and the elements addressed are the
same. The standalone pointwise rows take rank-3 tensors as they are (MIOpen's activation and
tensor-op calls accept them) and are not padded.

Pure Python: no library is touched here.

>>> from types import SimpleNamespace as T
>>> padded_strides(T(dim=(2, 3, 5), stride=(15, 1, 3)))
(15, 1, 3, 3)
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol

from hipdnn.core.shapes import layout_strides
from hipdnn.core.types import DataType
from hipdnn.engines.miopen.rules import Declined, label
from hipdnn.ir.nodes import (
    BatchnormBackwardNode,
    BatchnormInferenceNode,
    BatchnormInferenceVarianceNode,
    BatchnormNode,
    ConvDgradNode,
    ConvFpropNode,
    ConvWgradNode,
)
from hipdnn.ir.nodes.base import Node
from hipdnn.ir.tensor import Tensor
from hipdnn.ir.view import GraphView

__all__ = ["LAYOUT_1D", "Padded", "is_1d", "layouts_1d", "pad_1d", "padded_strides"]

#: The 1-D layout names of the 4-D layouts a padded graph matches.
LAYOUT_1D = {"NCHW": "NCL", "NHWC": "NLC"}
_ORDERS = {"NCL": (0, 1, 2), "NLC": (0, 2, 1)}
#: Nodes whose rows AMD's provider pads (the convolutions, every batchnorm node).
_PADDED_NODES = (ConvFpropNode, ConvDgradNode, ConvWgradNode, BatchnormNode,
                 BatchnormInferenceNode, BatchnormInferenceVarianceNode,
                 BatchnormBackwardNode)
_CONV_NODES = (ConvFpropNode, ConvDgradNode, ConvWgradNode)


@dataclass(frozen=True)
class Padded:
    """A rank-3 graph tensor seen as 4-D (N,C,L,1): the same uid, name, type and flags."""

    name: str
    uid: int
    dim: tuple[int, ...]
    stride: tuple[int, ...]
    data_type: DataType
    is_virtual: bool
    is_pass_by_value: bool
    value: float | None
    #: The tensor's own 3-D dims and strides (for messages).
    dim_1d: tuple[int, ...]
    stride_1d: tuple[int, ...]


def layouts_1d(dim: tuple[int, ...], stride: tuple[int, ...]) -> tuple[str, ...]:
    """The 1-D layouts (NCL, NLC) a rank-3 tensor is dense in, the strides of size-1 axes
    ignored (a tensor with C == 1 or L == 1 is both).

    >>> layouts_1d((2, 3, 5), (15, 5, 1)), layouts_1d((2, 3, 5), (15, 1, 3))
    (('NCL',), ('NLC',))
    >>> layouts_1d((2, 1, 5), (5, 5, 1)), layouts_1d((2, 3, 5), (30, 10, 2))
    (('NCL', 'NLC'), ())
    """
    found = []
    for name, order in _ORDERS.items():
        packed = layout_strides(dim, order)
        if all(int(d) == 1 or int(s) == p for d, s, p in zip(dim, stride, packed, strict=True)):
            found.append(name)
    return tuple(found)


class _Shaped(Protocol):
    @property
    def dim(self) -> Sequence[int] | None: ...
    @property
    def stride(self) -> Sequence[int] | None: ...


def padded_strides(t: _Shaped) -> tuple[int, ...]:
    """The 4-D strides of rank-3 ``t`` padded to N,C,L,1: its own, and for the new size-1 axis
    the stride that makes an exact NLC tensor an exact NHWC one (C), else 1 (exact NCL gives
    exact NCHW; for other strides the size-1 axis addresses nothing either way)."""
    assert t.dim is not None and t.stride is not None  # a validated tensor
    dim, stride = tuple(int(d) for d in t.dim), tuple(int(s) for s in t.stride)
    nlc = layout_strides(dim, _ORDERS["NLC"])
    last = dim[1] if stride == nlc and stride != layout_strides(dim, _ORDERS["NCL"]) else 1
    return (*stride, last)


def _padded(t: Tensor) -> Padded:
    assert t.uid is not None and t.dim is not None and t.stride is not None  # validated
    return Padded(t.name, t.uid, (*(int(d) for d in t.dim), 1), padded_strides(t), t.data_type,
                  bool(t.is_virtual), bool(t.is_pass_by_value), t.value,
                  tuple(int(d) for d in t.dim), tuple(int(s) for s in t.stride))


def _ports(node: Node) -> list[tuple[str, str, Tensor]]:
    return [(io, port, t) for io in ("inputs", "outputs")
            for port, t in getattr(node, io).items() if t is not None]


def is_1d(graph: GraphView) -> bool:
    """True when ``graph`` has a convolution or batchnorm node on rank-3 data."""
    return any(isinstance(n, _PADDED_NODES) and any(
        len(t.dim or ()) == 3 and not t.is_pass_by_value for _, _, t in _ports(n))
        for n in graph.nodes)


def pad_1d(graph: GraphView) -> GraphView:
    """``graph`` itself unless it has a convolution or batchnorm node on rank-3 tensors; then
    a :class:`GraphView` of copies of its nodes whose rank-3 tensors are :class:`Padded` to
    N,C,L,1 and whose convolutions have a padding of 0, a stride of 1 and a dilation of 1
    appended. Raises :class:`Declined` naming the tensor when a rank-3 data tensor is dense in
    neither NCL nor NLC (the CPU engine runs such graphs)."""
    if not is_1d(graph):
        return graph
    tensors: dict[int, Padded] = {}
    nodes: list[Node] = []
    for node in graph.nodes:
        twin = copy.copy(node)
        for io in ("inputs", "outputs"):
            ports: dict[str, object] = dict(getattr(node, io))
            for port, t in getattr(node, io).items():
                if t is None or t.is_pass_by_value or len(t.dim or ()) != 3:
                    continue
                assert t.uid is not None and t.dim is not None and t.stride is not None
                if t.uid not in tensors:
                    if not layouts_1d(tuple(t.dim), tuple(t.stride)):
                        raise Declined(
                            f"node {node.name!r}: port {port} (tensor {label(t)}) has dims "
                            f"{list(t.dim)} strides {list(t.stride)}: a 1-D (rank-3) tensor "
                            "must be dense NCL (strides L*C, L, 1) or NLC (strides L*C, 1, C) "
                            "to be padded to 4-D N,C,L,1 as AMD's provider does (strides of "
                            "size-1 axes may be anything)")
                    tensors[t.uid] = _padded(t)
                ports[port] = tensors[t.uid]
            setattr(twin, io, ports)
        if isinstance(node, _CONV_NODES):
            # validation filled these in (one value per spatial dimension); the node's own
            # attributes, not a tensor's
            for attr, extra in (("pre_padding", 0), ("post_padding", 0), ("stride", 1),
                                ("dilation", 1)):
                setattr(twin, attr, (*(getattr(node, attr) or ()), extra))
        nodes.append(twin)
    view_tensors: dict[int, object] = dict(graph.tensors)
    view_tensors.update(tensors)
    # the padded tensors stand in for the graph's (rules.Tensor is all a row reads of them)
    return GraphView(graph.name, tuple(nodes), MappingProxyType(view_tensors))  # type: ignore[arg-type]

