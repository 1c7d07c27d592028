"""Which seed-table row a graph is, with every requirement of that row checked.

:func:`match` returns a :class:`Match` (the row, its nodes, and its tensors in the row's
contract class of hipdnn/engines/miopen/roles.py) or raises :class:`Declined` whose message names
the failing rule: node, port, value and what is allowed. Pure Python: no library is touched here.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, cast

from hipdnn.core.shapes import layout_of, layout_order, layout_strides
from hipdnn.core.types import ConvolutionMode, DataType, PointwiseMode
from hipdnn.engines.miopen.norm_patterns import NORM_NODES, match_norm
from hipdnn.engines.miopen.onedim import LAYOUT_1D, pad_1d
from hipdnn.engines.miopen.roles import (
    BnBackward,
    BnInfDreluBnBwd,
    BnInference,
    BnInferenceAct,
    BnInferenceInv,
    BnInferenceInvAct,
    BnTraining,
    BnTrainingAct,
    ConvBiasAct,
    ConvDgrad,
    ConvFprop,
    ConvWgrad,
    LayerNormBackward,
    LayerNormForward,
    PointwiseActivation,
    PointwiseBinary,
    RmsNormBackward,
    RmsNormForward,
    RowTensors,
)
from hipdnn.engines.miopen.rules import (
    DATA_TYPES,
    Activation,
    Declined,
    Tensor,
    activation_of,
    check_dtype,
    check_fp32_compute,
    check_param,
    check_scalar,
    check_virtual,
    compute_type,
    dense_layout,
    dtype_of,
    is_pointwise,
    label,
    need,
    port_tensor,
    same_layout,
    standalone_activation,
)
from hipdnn.ir.nodes import (
    BatchnormBackwardNode,
    BatchnormInferenceNode,
    BatchnormInferenceVarianceNode,
    BatchnormNode,
    ConvDgradNode,
    ConvFpropNode,
    ConvWgradNode,
    GenstatsNode,
    InstancenormBackwardNode,
    InstancenormNode,
    MatmulNode,
    Node,
    PointwiseNode,
    ReductionNode,
)

if TYPE_CHECKING:
    from hipdnn.ir.view import GraphView

__all__ = ["ConvNode", "Match", "Row", "match"]

#: The convolution node of a conv row.
ConvNode: TypeAlias = "ConvFpropNode | ConvDgradNode | ConvWgradNode"

class Row(str, enum.Enum):
    """The seed table's nine rows and AMD's provider's later ones (names used in reasons and
    call-map tests)."""

    BN_INFERENCE = "batchnorm inference (variance)"
    BN_INFERENCE_INV = "batchnorm inference (inverse variance)"  # beyond the seed
    BN_INF_DRELU_BN_BWD = "batchnorm inference + DReLU + batchnorm backward"
    BN_TRAINING = "batchnorm training"
    BN_TRAINING_ACT = "batchnorm training + activation"
    BN_BACKWARD = "batchnorm backward"
    CONV_FPROP = "convolution fprop"
    CONV_DGRAD = "convolution dgrad"
    CONV_WGRAD = "convolution wgrad"
    CONV_BIAS_ACT = "convolution fprop + (bias) + activation"
    # AMD's provider's rows beyond the seed (its operation list, see docs/PROVIDER.md)
    BN_INFERENCE_INV_ACT = "batchnorm inference (inverse variance) + activation"
    BN_INFERENCE_ACT = "batchnorm inference (variance) + activation"
    POINTWISE_ACT = "standalone pointwise activation"
    POINTWISE_BINARY = "standalone pointwise binary"
    # MIOpen's own norm calls (beyond AMD's provider, which has neither)
    LAYERNORM = "layer norm"
    LAYERNORM_BACKWARD = "layer norm backward"
    RMSNORM = "RMS norm"
    RMSNORM_BACKWARD = "RMS norm backward"


@dataclass
class Match:
    """A matched row: its nodes (graph order), its tensors (``t``: the row's class of
    hipdnn/engines/miopen/roles.py), the data type of its data tensors, their layout, the conv
    node and the activation."""

    row: Row
    nodes: tuple[Node, ...]
    t: RowTensors
    data_type: DataType
    layout: str = "NCHW"
    activation: Activation | None = None
    conv: ConvNode | None = None
    #: MIOPEN_ENGINE_DETERMINISTIC: the convolution descriptor gets MIOpen's deterministic
    #: attribute (only solvers with bit-reproducible results apply).
    deterministic: bool = False
    #: A 1-D graph (rank-3 tensors) padded to 4-D N,C,L,1 (hipdnn/engines/miopen/onedim.py):
    #: its tensors in ``t`` are :class:`~hipdnn.engines.miopen.onedim.Padded`, ``layout`` is
    #: the 4-D one MIOpen is given (NCHW for NCL, NHWC for NLC).
    padded_1d: bool = False

    @property
    def layout_name(self) -> str:
        """The layout as the user's tensors have it: NCL/NLC for a padded 1-D graph."""
        return LAYOUT_1D.get(self.layout, self.layout) if self.padded_1d else self.layout

    @property
    def has_conv(self) -> bool:
        """True for the rows with a convolution (they get the workspace knob)."""
        return self.conv is not None


# --------------------------------------------------------------------------------- conv rows
def _conv_common(node: ConvNode, graph: object) -> None:
    mode = getattr(node, "convolution_mode", ConvolutionMode.CROSS_CORRELATION)
    if mode is not None and ConvolutionMode(mode) not in (ConvolutionMode.CROSS_CORRELATION,
                                                           ConvolutionMode.NOT_SET):
        raise Declined(f"node {node.name!r}: convolution_mode {ConvolutionMode(mode).name}; "
                       "MIOpen supports CROSS_CORRELATION only")
    check_fp32_compute(node, graph, "a convolution")
    assert node.pre_padding is not None and node.post_padding is not None  # validated
    pre, post = list(node.pre_padding), list(node.post_padding)
    if pre != post:
        raise Declined(f"node {node.name!r}: pre_padding {pre} != post_padding {post}; MIOpen "
                       "supports symmetric padding only")


#: Per conv node class: its row, its ports in the order of the row class's fields, that class.
_ConvRow = ConvFprop[Tensor] | ConvDgrad[Tensor] | ConvWgrad[Tensor]
_CONV_PORTS: dict[type[Node],
                  tuple[Row, tuple[str, str, str], Callable[[Tensor, Tensor, Tensor], _ConvRow]]] = {
    ConvFpropNode: (Row.CONV_FPROP, ("X", "W", "Y"), ConvFprop),
    ConvDgradNode: (Row.CONV_DGRAD, ("DY", "W", "DX"), ConvDgrad),
    ConvWgradNode: (Row.CONV_WGRAD, ("X", "DY", "DW"), ConvWgrad),
}


def _match_conv(node: ConvNode, graph: object) -> Match:
    row, ports, cls = _CONV_PORTS[type(node)]
    _conv_common(node, graph)
    items = []
    for i, port in enumerate(ports):
        t = need(node, "outputs" if i == 2 else "inputs", port)
        check_dtype(node, port, t, DATA_TYPES, "MIOpen convolution")
        check_virtual(node, port, t, False, f"a single-node {row.value}")
        items.append((node, port, t))
    dts = {dtype_of(t) for _, _, t in items}
    if len(dts) != 1:
        raise Declined(f"node {node.name!r}: tensors have data types {sorted(d.name for d in dts)}; "
                       "MIOpen convolution needs one data type for all of them")
    layout = same_layout(items)
    tensors = cls(*(t for _, _, t in items))
    return Match(row, (node,), tensors, dts.pop(), layout=layout, conv=node)


def _match_conv_bias_act(graph: object, nodes: Sequence[Node]) -> Match:
    conv = nodes[0]
    assert isinstance(conv, ConvFpropNode)  # match() dispatched on it
    _conv_common(conv, graph)
    x, w, cy = need(conv, "inputs", "X"), need(conv, "inputs", "W"), need(conv, "outputs", "Y")
    rule = Row.CONV_BIAS_ACT.value
    for port, t in (("X", x), ("W", w)):
        check_dtype(conv, port, t, DATA_TYPES, rule)
        check_virtual(conv, port, t, False, rule)
    xdt = dtype_of(x)
    if dtype_of(w) != xdt:
        raise Declined(f"node {conv.name!r}: W is {dtype_of(w).name} but X is {xdt.name}; {rule} "
                       "needs one input data type")
    check_virtual(conv, "Y", cy, True, rule)
    has_bias = len(nodes) == 3
    allowed_cy = (DataType.FLOAT, xdt) if has_bias else (DataType.FLOAT,)
    check_dtype(conv, "Y", cy, allowed_cy, f"{rule} (conv Y: FP32, or the input type only with bias)")
    bias: Tensor | None = None
    by: Tensor | None = None
    act_in = cy
    if has_bias:
        add = nodes[1]
        a0, a1 = need(add, "inputs", "IN_0"), need(add, "inputs", "IN_1")
        if a0.uid == cy.uid:
            bias = a1
        elif a1.uid == cy.uid:
            bias = a0
        else:
            raise Declined(f"node {add.name!r}: the bias ADD must take the convolution's Y")
        ct = compute_type(add, graph)
        if ct not in (DataType.FLOAT, xdt):
            raise Declined(f"node {add.name!r}: compute data type {ct.name}; {rule} needs the bias "
                           f"compute type FLOAT or the input type {xdt.name}")
        check_virtual(add, "IN_1", bias, False, rule)
        if dtype_of(bias) != xdt:
            raise Declined(
                f"node {add.name!r}: port IN_1 (bias {label(bias)}) is {dtype_of(bias).name} but "
                f"the convolution's data type is {xdt.name}; MIOpen adds a bias only in the "
                f"convolution's data type (miopenOpTensor refuses it: 'Datatypes for B and C "
                f"tensors do not match', and a fusion plan's bias op reads the buffer as "
                f"{xdt.name}); give the bias as {xdt.name}")
        check_param(add, "IN_1", bias, int(cy.dim[1]), len(cy.dim), rule)
        by = need(add, "outputs", "OUT_0")
        check_virtual(add, "OUT_0", by, True, rule)
        check_dtype(add, "OUT_0", by, (DataType.FLOAT, xdt), f"{rule} (bias output)")
        act_in = by
    act = nodes[-1]
    if need(act, "inputs", "IN_0").uid != act_in.uid:
        raise Declined(f"node {act.name!r}: the activation must take the previous node's output")
    y = need(act, "outputs", "OUT_0")
    check_virtual(act, "OUT_0", y, False, rule)
    check_dtype(act, "OUT_0", y, (xdt,), f"{rule} (output: the input type)")
    layout = same_layout([(conv, "X", x), (conv, "W", w), (act, "OUT_0", y)])
    return Match(Row.CONV_BIAS_ACT, tuple(nodes), ConvBiasAct(x, w, y, bias, cy, by), xdt,
                 layout=layout, activation=activation_of(act, graph), conv=conv)


# ----------------------------------------------------------------------------------- BN rows
def _bn_data(node: Node, items: Sequence[tuple[str, Tensor]], rule: str) -> tuple[DataType, str]:
    dts = set()
    for port, t in items:
        check_dtype(node, port, t, DATA_TYPES, rule)
        dts.add(dtype_of(t))
    if len(dts) != 1:
        raise Declined(f"node {node.name!r}: data tensors have types {sorted(d.name for d in dts)}; "
                       f"{rule} needs one data type")
    x = items[0][1]
    if len(x.dim) not in (4, 5):
        raise Declined(f"node {node.name!r}: {len(x.dim)}-d data; {rule} supports 4-d and 5-d")
    layout = same_layout([(node, p, t) for p, t in items])
    return dts.pop(), layout


def _bn_params(node: Node, items: Sequence[tuple[str, Tensor]], x: Tensor, rule: str) -> None:
    for port, t in items:
        if tuple(t.dim) != (1, x.dim[1]) + (1,) * (len(x.dim) - 2):
            raise Declined(f"node {node.name!r}: port {port} (tensor {label(t)}) has dims "
                           f"{list(t.dim)}: spatial batchnorm only (per-channel parameters "
                           f"{[1, x.dim[1]] + [1] * (len(x.dim) - 2)})")
        check_dtype(node, port, t, (DataType.FLOAT,), f"{rule} (scale/bias/mean/variance: FP32)")
        dense_layout(node, port, t)


def _take(node: Node, io: str, ports: Sequence[str], rule: str) -> list[tuple[str, Tensor]]:
    """The required, non-virtual tensors at ``ports``, as (port, tensor) pairs."""
    taken = []
    for port in ports:
        t = need(node, io, port)
        check_virtual(node, port, t, False, rule)
        taken.append((port, t))
    return taken


def _scalar(node: Node, port: str) -> Tensor:
    """The required pass-by-value scalar at input ``port``."""
    t = need(node, "inputs", port)
    check_scalar(node, port, t)
    return t


def _reduce_ok(node: Node, x: Tensor) -> None:
    if math.prod(x.dim) // x.dim[1] <= 1:
        raise Declined(f"node {node.name!r}: N x spatial = 1; batch statistics need more than one value")


def _match_bn_inference(node: Node, graph: object) -> Match:
    inv = not isinstance(node, BatchnormInferenceVarianceNode)
    row = Row.BN_INFERENCE_INV if inv else Row.BN_INFERENCE
    rule = row.value
    check_fp32_compute(node, graph, rule)
    x, y = need(node, "inputs", "X"), need(node, "outputs", "Y")
    dt, layout = _bn_data(node, [("X", x), ("Y", y)], rule)
    for port, t in (("X", x), ("Y", y)):
        check_virtual(node, port, t, False, rule)
    params = _take(node, "inputs", ("MEAN", "INV_VARIANCE" if inv else "VARIANCE", "SCALE", "BIAS"),
                   rule)
    _bn_params(node, params, x, rule)
    mean, var, scale, bias = (t for _, t in params)
    tensors: BnInference[Tensor, Tensor] | BnInferenceInv[Tensor] = (
        BnInferenceInv(x, y, mean, var, scale, bias) if inv
        else BnInference(x, y, mean, var, scale, bias, _scalar(node, "EPSILON")))
    return Match(row, (node,), tensors, dt, layout=layout)


def _match_bn_inference_act(graph: object, nodes: Sequence[Node]) -> Match:
    """BN inference (either form) -> RELU_FWD: AMD's fused rows (the intermediate Y virtual
    FP32, the activation ReLU / clipped ReLU / CLAMP)."""
    bn, act = nodes
    inv = not isinstance(bn, BatchnormInferenceVarianceNode)
    row = Row.BN_INFERENCE_INV_ACT if inv else Row.BN_INFERENCE_ACT
    rule = row.value
    check_fp32_compute(bn, graph, rule)
    x, bn_y = need(bn, "inputs", "X"), need(bn, "outputs", "Y")
    check_virtual(bn, "X", x, False, rule)
    check_virtual(bn, "Y", bn_y, True, rule)
    check_dtype(bn, "Y", bn_y, (DataType.FLOAT,), f"{rule} (intermediate Y: FP32, e.g. the "
                "graph's intermediate_data_type)")
    if need(act, "inputs", "IN_0").uid != bn_y.uid:
        raise Declined(f"node {act.name!r}: the activation must take the batchnorm's Y")
    y = need(act, "outputs", "OUT_0")
    check_virtual(act, "OUT_0", y, False, rule)
    dt, layout = _bn_data(bn, [("X", x), ("OUT_0", y)], rule)
    params = _take(bn, "inputs", ("MEAN", "INV_VARIANCE" if inv else "VARIANCE", "SCALE", "BIAS"),
                   rule)
    _bn_params(bn, params, x, rule)
    mean, var, scale, bias = (t for _, t in params)
    activation = activation_of(act, graph)
    tensors: BnInferenceAct[Tensor, Tensor] | BnInferenceInvAct[Tensor] = (
        BnInferenceInvAct(x, y, mean, var, scale, bias, bn_y) if inv
        else BnInferenceAct(x, y, mean, var, scale, bias, _scalar(bn, "EPSILON"), bn_y))
    return Match(row, tuple(nodes), tensors, dt, layout=layout, activation=activation)


# -------------------------------------------------------------------------- pointwise rows
#: The binary modes MIOpen's miopenOpTensor runs (SUB as ADD with in_1 scaled by -1).
BINARY_MODES = (PointwiseMode.ADD, PointwiseMode.SUB, PointwiseMode.MUL, PointwiseMode.MAX,
                PointwiseMode.MIN)
#: Data types of MIOpen's activation and tensor-op kernels as AMD's provider uses them.
POINTWISE_TYPES = (DataType.FLOAT, DataType.HALF)
_INT32_MAX = 2**31 - 1


def _dense_same(node: Node, items: Sequence[tuple[str, Tensor]], rule: str) -> str:
    """The layout name of tensors that are dense (packed in some axis order) and share their
    strides: NCL/NLC, a seed layout, or "packed" for other orders. The strides of size-1 axes
    address nothing and are not compared."""
    (port0, t0), *rest = items
    dims = tuple(t0.dim)
    for port, t in rest:
        if tuple(t.dim) != dims or any(d != 1 and int(a) != int(b) for d, a, b in
                                       zip(dims, t.stride, t0.stride, strict=True)):
            raise Declined(f"node {node.name!r}: port {port} (tensor {label(t)}) has dims "
                           f"{list(t.dim)} strides {list(t.stride)} but {port0} has "
                           f"{list(t0.dim)} {list(t0.stride)}; {rule} needs input and output "
                           "of one shape and one layout")
    packed = layout_strides(dims, layout_order(dims, t0.stride))
    if any(d != 1 and int(s) != p for d, s, p in zip(dims, t0.stride, packed, strict=True)):
        raise Declined(f"node {node.name!r}: port {port0} (tensor {label(t0)}) has dims "
                       f"{list(t0.dim)} strides {list(t0.stride)}: {rule} needs dense (packed) "
                       "tensors")
    return _layout_name(t0)


def _layout_name(t: Tensor) -> str:
    dims, strides = tuple(t.dim), tuple(t.stride)
    if len(dims) == 3:
        if strides == layout_strides(dims, (0, 1, 2)):
            return "NCL"
        if strides == layout_strides(dims, (0, 2, 1)):
            return "NLC"
    return layout_of(dims, strides) or "packed"


def _match_pointwise_act(node: PointwiseNode, graph: object) -> Match:
    rule = Row.POINTWISE_ACT.value
    activation = standalone_activation(node, graph)
    for port in ("IN_1", "IN_2"):
        if port_tensor(node, "inputs", port, required=False) is not None:
            raise Declined(f"node {node.name!r}: port {port} is set; {rule} takes IN_0 only")
    x, y = need(node, "inputs", "IN_0"), need(node, "outputs", "OUT_0")
    for io_port, t in (("IN_0", x), ("OUT_0", y)):
        check_virtual(node, io_port, t, False, rule)
        if dtype_of(t) == DataType.BFLOAT16:
            raise Declined(f"node {node.name!r}: port {io_port} (tensor {label(t)}) is BFLOAT16; "
                           f"{rule} allows FLOAT, HALF: MIOpen's activation kernels "
                           "(MIOpenNeuron.cl) are built for fp32/fp16 only")
        check_dtype(node, io_port, t, POINTWISE_TYPES, rule)
        if getattr(t, "is_pass_by_value", False):
            raise Declined(f"node {node.name!r}: port {io_port} is a pass-by-value scalar; "
                           f"{rule} needs device tensors")
    if dtype_of(x) != dtype_of(y):
        raise Declined(f"node {node.name!r}: IN_0 is {dtype_of(x).name} but OUT_0 is "
                       f"{dtype_of(y).name}; {rule} needs one data type")
    if not 1 <= len(x.dim) <= 5:
        raise Declined(f"node {node.name!r}: {len(x.dim)}-d tensors; {rule} supports ranks 1 to 5")
    layout = _dense_same(node, [("IN_0", x), ("OUT_0", y)], rule)
    return Match(Row.POINTWISE_ACT, (node,), PointwiseActivation(x, y), dtype_of(x),
                 layout=layout, activation=activation)


def _match_pointwise_binary(node: PointwiseNode, graph: object) -> Match:
    """AMD's provider's rules (MiopenBinaryPointwiseChecks): FP32 compute; in_0, in_1, out_0
    non-virtual device tensors of one type (FLOAT/HALF), ranks 3 to 5 and all equal, packed
    channels-first; in_0 of the output's dims, in_1 equal or 1 per axis; no in_2; not in place."""
    rule = Row.POINTWISE_BINARY.value
    check_fp32_compute(node, graph, rule)
    if port_tensor(node, "inputs", "IN_2", required=False) is not None:
        raise Declined(f"node {node.name!r}: port IN_2 is set; {rule} takes IN_0 and IN_1")
    a, b = need(node, "inputs", "IN_0"), need(node, "inputs", "IN_1")
    c = need(node, "outputs", "OUT_0")
    items = (("IN_0", a), ("IN_1", b), ("OUT_0", c))
    for port, t in items:
        check_virtual(node, port, t, False, rule)
        if getattr(t, "is_pass_by_value", False) or t.value is not None:
            raise Declined(f"node {node.name!r}: port {port} (tensor {label(t)}) is a "
                           f"pass-by-value scalar; {rule} needs device tensors")
        check_dtype(node, port, t, DATA_TYPES, rule)
    dts = {port: dtype_of(t) for port, t in items}
    if len(set(dts.values())) != 1:
        raise Declined(f"node {node.name!r}: mixed data types "
                       f"({', '.join(f'{p} {d.name}' for p, d in dts.items())}); {rule} needs "
                       "IN_0, IN_1 and OUT_0 of one data type (miopenOpTensor)")
    dt = dts["OUT_0"]
    if dt not in POINTWISE_TYPES:
        raise Declined(f"node {node.name!r}: data type {dt.name}; {rule} allows FLOAT, HALF")
    if c.uid in (a.uid, b.uid):
        raise Declined(f"node {node.name!r}: OUT_0 is also an input (in place); {rule} needs "
                       "an output distinct from IN_0 and IN_1")
    rank = len(c.dim)
    if not 3 <= rank <= 5:
        raise Declined(f"node {node.name!r}: port OUT_0 (tensor {label(c)}) is {rank}-d; {rule} "
                       "supports ranks 3 to 5")
    for port, t in items[:2]:
        if len(t.dim) != rank:
            raise Declined(f"node {node.name!r}: port {port} (tensor {label(t)}) is "
                           f"{len(t.dim)}-d but OUT_0 is {rank}-d; {rule} needs equal ranks")
    if math.prod(c.dim) > _INT32_MAX:
        raise Declined(f"node {node.name!r}: {math.prod(c.dim)} output elements; {rule} allows "
                       f"at most {_INT32_MAX} (MIOpen indexes with 32-bit integers)")
    for port, t in items:
        expect = 1
        for i in reversed(range(rank)):
            if t.dim[i] > 1 and t.stride[i] != expect:
                raise Declined(f"node {node.name!r}: port {port} (tensor {label(t)}) has dims "
                               f"{list(t.dim)} strides {list(t.stride)}: not packed "
                               f"channels-first at axis {i}; {rule} needs packed NCL/NCHW/NCDHW "
                               "strides (MIOpen's tensor-op kernels read channels-last "
                               "broadcasts wrongly)")
            expect *= int(t.dim[i])
    if tuple(a.dim) != tuple(c.dim):
        raise Declined(f"node {node.name!r}: port IN_0 (tensor {label(a)}) has dims "
                       f"{list(a.dim)} but OUT_0 has {list(c.dim)}; {rule} broadcasts IN_1 only "
                       "(miopenOpTensor cannot broadcast its first operand): give the full-shape "
                       "operand as IN_0")
    for i, (bd, cd) in enumerate(zip(b.dim, c.dim, strict=True)):
        if bd not in (1, cd):
            raise Declined(f"node {node.name!r}: port IN_1 (tensor {label(b)}) dim {bd} at axis "
                           f"{i} neither 1 nor the output's {cd}")
    layout = {3: "NCL", 4: "NCHW", 5: "NCDHW"}[rank]
    return Match(Row.POINTWISE_BINARY, (node,), PointwiseBinary(a, b, c), dt, layout=layout)


def _match_bn_training(graph: object, nodes: Sequence[Node]) -> Match:
    bn = nodes[0]
    row = Row.BN_TRAINING if len(nodes) == 1 else Row.BN_TRAINING_ACT
    rule = row.value
    check_fp32_compute(bn, graph, rule)
    if getattr(bn, "peer_stats", None):
        raise Declined(f"node {bn.name!r}: peer_stats given; MIOpen batchnorm is single-GPU")
    x, bn_y = need(bn, "inputs", "X"), need(bn, "outputs", "Y")
    data = [("X", x)]
    check_virtual(bn, "X", x, False, rule)
    if row == Row.BN_TRAINING:
        check_virtual(bn, "Y", bn_y, False, rule)
        y = bn_y
        data.append(("Y", y))
    else:
        act = nodes[1]
        check_virtual(bn, "Y", bn_y, True, rule)
        if need(act, "inputs", "IN_0").uid != bn_y.uid:
            raise Declined(f"node {act.name!r}: the activation must take the batchnorm's Y")
        y = need(act, "outputs", "OUT_0")
        check_virtual(act, "OUT_0", y, False, rule)
        data.append(("OUT_0", y))
    dt, layout = _bn_data(bn, data, rule)
    if row == Row.BN_TRAINING_ACT:
        check_dtype(bn, "Y", bn_y, (DataType.FLOAT, dt), f"{rule} (intermediate Y)")
    _reduce_ok(bn, x)
    params = _take(bn, "inputs", ("SCALE", "BIAS"), rule)
    scale, bias = (t for _, t in params)
    # the saved statistics are bound only when the graph keeps them (non-virtual)
    saved: list[Tensor | None] = []
    for port in ("MEAN", "INV_VARIANCE"):
        t = port_tensor(bn, "outputs", port, required=False)
        if t is not None:
            params.append((port, t))
        saved.append(None if t is None or t.is_virtual else t)
    running = {p: port_tensor(bn, io, p, required=False) for io, p in (
        ("inputs", "PREV_RUNNING_MEAN"), ("inputs", "PREV_RUNNING_VARIANCE"),
        ("outputs", "NEXT_RUNNING_MEAN"), ("outputs", "NEXT_RUNNING_VARIANCE"))}
    present = [p for p, t in running.items() if t is not None]
    if present and len(present) != 4:
        missing = [p for p, t in running.items() if t is None]
        raise Declined(f"node {bn.name!r}: running statistics need all of PREV/NEXT_RUNNING_MEAN/"
                       f"VARIANCE; missing {missing}")
    momentum = _scalar(bn, "MOMENTUM") if present else None
    for port, t in running.items():
        if t is not None:
            check_virtual(bn, port, t, False, rule)
            params.append((port, t))
    _bn_params(bn, params, x, rule)
    epsilon = _scalar(bn, "EPSILON")
    mean, inv_variance = saved
    prev_mean, prev_var, next_mean, next_var = running.values()
    if row == Row.BN_TRAINING:
        tensors = BnTraining(x, y, scale, bias, mean, inv_variance, prev_mean, prev_var,
                             next_mean, next_var, epsilon, momentum)
        return Match(row, tuple(nodes), tensors, dt, layout=layout)
    tensors = BnTrainingAct(x, y, scale, bias, mean, inv_variance, prev_mean, prev_var, next_mean,
                            next_var, epsilon, momentum, bn_y)
    return Match(row, tuple(nodes), tensors, dt, layout=layout,
                 activation=activation_of(nodes[1], graph))


def _match_bn_backward(graph: object, nodes: Sequence[Node]) -> Match:
    bwd = nodes[-1]
    row = Row.BN_BACKWARD if len(nodes) == 1 else Row.BN_INF_DRELU_BN_BWD
    rule = row.value
    check_fp32_compute(bwd, graph, rule)
    if getattr(bwd, "peer_stats", None):
        raise Declined(f"node {bwd.name!r}: peer_stats given; MIOpen batchnorm is single-GPU")
    dy, x = need(bwd, "inputs", "DY"), need(bwd, "inputs", "X")
    dx, dscale, dbias = (t for _, t in _take(bwd, "outputs", ("DX", "DSCALE", "DBIAS"), rule))
    # Without both saved statistics (plain row only) MIOpen recomputes them from x: NULL
    # savedMean/savedInvVariance, its documented behaviour.
    saved: tuple[str, ...] = ("MEAN", "INV_VARIANCE")
    if row == Row.BN_BACKWARD and all(port_tensor(bwd, "inputs", p, required=False) is None
                                      for p in saved):
        saved = ()
    params = [(p, need(bwd, "inputs", p)) for p in ("SCALE", *saved)]
    for port, t in params:
        check_virtual(bwd, port, t, False, rule)
    scale = params[0][1]
    mean, inv_variance = (params[1][1], params[2][1]) if saved else (None, None)
    params += [("DSCALE", dscale), ("DBIAS", dbias)]
    check_virtual(bwd, "X", x, False, rule)
    activation = None
    tensors: BnBackward[Tensor] | BnInfDreluBnBwd[Tensor]
    if row == Row.BN_BACKWARD:
        check_virtual(bwd, "DY", dy, False, rule)
        tensors = BnBackward(x, dy, dx, dscale, dbias, scale, mean, inv_variance)
        data = [("X", x), ("DY", dy), ("DX", dx)]
    else:
        inf, drelu = nodes[0], nodes[1]
        check_fp32_compute(inf, graph, rule)
        check_virtual(bwd, "DY", dy, True, rule)
        if need(drelu, "outputs", "OUT_0").uid != dy.uid:
            raise Declined(f"node {bwd.name!r}: DY must be the RELU_BWD node's output")
        loss, fwd_in = need(drelu, "inputs", "IN_0"), need(drelu, "inputs", "IN_1")
        by = need(inf, "outputs", "Y")
        if fwd_in.uid != by.uid:
            raise Declined(f"node {drelu.name!r}: IN_1 must be the batchnorm inference Y")
        check_virtual(inf, "Y", by, True, rule)
        check_virtual(drelu, "IN_0", loss, False, rule)
        assert mean is not None and inv_variance is not None
        for port, t in (("X", x), ("MEAN", mean), ("INV_VARIANCE", inv_variance), ("SCALE", scale)):
            if need(inf, "inputs", port).uid != t.uid:
                raise Declined(f"node {inf.name!r}: port {port} must be the same tensor as the "
                               f"batchnorm backward's {port}")
        bias = need(inf, "inputs", "BIAS")
        check_virtual(inf, "BIAS", bias, False, rule)
        params.append(("BIAS", bias))
        tensors = BnInfDreluBnBwd(x, loss, dx, dscale, dbias, scale, bias, mean, inv_variance,
                                  by, dy)
        activation = activation_of(drelu, graph)
        data = [("X", x), ("IN_0", loss), ("DX", dx)]
    dt, layout = _bn_data(bwd, data, rule)
    _reduce_ok(bwd, x)
    _bn_params(bwd, params, x, rule)
    return Match(row, tuple(nodes), tensors, dt, layout=layout, activation=activation)


# ------------------------------------------------------------------------------------- entry
#: Element types the seed never has (masks, integer data): declined before pattern matching.
_NON_SEED_TYPES = frozenset({DataType.BOOLEAN, DataType.UINT8, DataType.INT8, DataType.INT32,
                             DataType.INT64})


#: Instance norms: no row (MIOpen has no instance norm call; layer and RMS norms have theirs).
_NORM_NODES = (InstancenormNode, InstancenormBackwardNode)
#: The norm rows by their tensors' class (hipdnn/engines/miopen/norm_patterns.py matches them).
_NORM_ROWS: dict[type, Row] = {
    LayerNormForward: Row.LAYERNORM, LayerNormBackward: Row.LAYERNORM_BACKWARD,
    RmsNormForward: Row.RMSNORM, RmsNormBackward: Row.RMSNORM_BACKWARD,
}


def _outside_seed(nodes: Sequence[Node]) -> None:
    """Raise :class:`Declined` naming the first node no seed row can contain: genstats,
    reduction, matmul and the instance norms, and BOOLEAN/integer tensors (masks, INT8
    convolution with INT32 compute)."""
    for n in nodes:
        label = f"node {n.name!r} ({type(n).__name__})"
        if isinstance(n, (GenstatsNode, ReductionNode, MatmulNode, *_NORM_NODES)):
            raise Declined(f"{label}: no seed row computes {n.op}; CPU_REFERENCE_ENGINE runs it")
        for port, t in (*n.inputs.items(), *n.outputs.items()):
            if t is None or t.is_pass_by_value or t.data_type not in _NON_SEED_TYPES:
                continue
            what = ("INT8 convolution (INT32 compute) is not a seed row"
                    if type(n) in _CONV_PORTS else "seed rows use FLOAT, HALF and BFLOAT16 "
                    "tensors only")
            raise Declined(f"{label}: port {port} tensor {t.name!r} is {t.data_type.name}; "
                           f"{what}; CPU_REFERENCE_ENGINE runs it")


def match(graph: GraphView) -> Match:
    """The seed row ``graph`` is, or raise :class:`Declined` naming the failing rule.

    A graph with a convolution or batchnorm on rank-3 tensors (1-D: NCL, NLC) is matched padded
    to 4-D N,C,L,1 (:func:`~hipdnn.engines.miopen.onedim.pad_1d`), as AMD's provider runs it."""
    padded = pad_1d(graph)
    if padded is graph:
        return _match(graph)
    try:
        m = _match(padded)
    except Declined as exc:
        raise Declined(f"{exc} (a 1-D graph, matched padded to 4-D N,C,L,1 as AMD's provider "
                       "runs it)") from None
    m.padded_1d = True
    return m


def _match(graph: GraphView) -> Match:
    nodes = list(graph.nodes)
    _outside_seed(nodes)
    if len(nodes) == 1:
        n = nodes[0]
        if type(n) in _CONV_PORTS:
            return _match_conv(cast(ConvNode, n), graph)
        if isinstance(n, BatchnormInferenceVarianceNode):
            return _match_bn_inference(n, graph)
        if isinstance(n, BatchnormNode):
            return _match_bn_training(graph, nodes)
        if isinstance(n, BatchnormBackwardNode):
            return _match_bn_backward(graph, nodes)
        if isinstance(n, BatchnormInferenceNode):
            return _match_bn_inference(n, graph)
        if isinstance(n, NORM_NODES):
            tensors, dt, layout = match_norm(n, graph)
            return Match(_NORM_ROWS[type(tensors)], (n,), tensors, dt, layout=layout)
        if isinstance(n, PointwiseNode):
            mode = PointwiseMode(n.mode)
            if mode in BINARY_MODES:
                return _match_pointwise_binary(n, graph)
            if mode in (PointwiseMode.RELU_FWD, PointwiseMode.SIGMOID_FWD, PointwiseMode.TANH_FWD):
                return _match_pointwise_act(n, graph)
    elif len(nodes) == 2:
        a, b = nodes
        if (isinstance(a, (BatchnormInferenceNode, BatchnormInferenceVarianceNode))
                and is_pointwise(b, PointwiseMode.RELU_FWD)):
            return _match_bn_inference_act(graph, nodes)
        if isinstance(a, BatchnormNode) and is_pointwise(b, PointwiseMode.RELU_FWD):
            return _match_bn_training(graph, nodes)
        if isinstance(a, ConvFpropNode) and is_pointwise(b, PointwiseMode.RELU_FWD):
            return _match_conv_bias_act(graph, nodes)
    elif len(nodes) == 3:
        a, b, c = nodes
        if (isinstance(a, ConvFpropNode) and is_pointwise(b, PointwiseMode.ADD)
                and is_pointwise(c, PointwiseMode.RELU_FWD)):
            return _match_conv_bias_act(graph, nodes)
        if (isinstance(a, BatchnormInferenceNode) and is_pointwise(b, PointwiseMode.RELU_BWD)
                and isinstance(c, BatchnormBackwardNode)):
            return _match_bn_backward(graph, nodes)
    desc = " -> ".join(_describe(n) for n in nodes) or "an empty graph"
    raise Declined(f"graph {desc} is not a seed-table pattern; supported: "
                   + "; ".join(r.value for r in Row))


def _describe(node: Node) -> str:
    mode = getattr(node, "mode", None)
    kind = type(node).__name__
    if isinstance(mode, enum.Enum):
        return f"{kind}({mode.name})"
    return f"{kind}({PointwiseMode(mode).name})" if mode is not None else kind
