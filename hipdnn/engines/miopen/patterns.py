"""Which seed-table row a graph is, with every requirement of that row checked.

:func:`match` returns a :class:`Match` (the row, its nodes and its tensors by role) or raises
:class:`Declined` whose message names the failing rule: node, port, value and what is allowed.
Pure Python: no library is touched here.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hipdnn import nodes as nd
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
)
from hipdnn.types import ConvolutionMode, DataType, PointwiseMode

__all__ = ["Activation", "Declined", "Match", "Row", "match"]

class Row(str, enum.Enum):
    """The nine rows of the seed table (names used in reasons and call-map tests)."""

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


@dataclass
class Match:
    """A matched row: its nodes (graph order), tensors by role, conv node and activation."""

    row: Row
    nodes: tuple[Any, ...]
    t: dict[str, Tensor] = field(default_factory=dict)
    layout: str = "NCHW"
    activation: Activation | None = None
    conv: Any = None

    @property
    def has_conv(self) -> bool:
        """True for the rows with a convolution (they get the workspace knob)."""
        return self.conv is not None

    def opt(self, role: str) -> Tensor | None:
        """The tensor for ``role`` or None when the graph does not carry it."""
        return self.t.get(role)


# --------------------------------------------------------------------------------- conv rows
def _conv_common(node: Any, graph: Any) -> None:
    mode = getattr(node, "convolution_mode", ConvolutionMode.CROSS_CORRELATION)
    if mode is not None and ConvolutionMode(mode) not in (ConvolutionMode.CROSS_CORRELATION,
                                                           ConvolutionMode.NOT_SET):
        raise Declined(f"node {node.name!r}: convolution_mode {ConvolutionMode(mode).name}; "
                       "MIOpen supports CROSS_CORRELATION only")
    check_fp32_compute(node, graph, "a convolution")
    pre, post = list(node.pre_padding), list(node.post_padding)
    if pre != post:
        raise Declined(f"node {node.name!r}: pre_padding {pre} != post_padding {post}; MIOpen "
                       "supports symmetric padding only")


_CONV_PORTS: dict[type, tuple[Row, tuple[str, str], str, tuple[str, str], str]] = {
    nd.ConvFpropNode: (Row.CONV_FPROP, ("X", "W"), "Y", ("x", "w"), "y"),
    nd.ConvDgradNode: (Row.CONV_DGRAD, ("DY", "W"), "DX", ("dy", "w"), "dx"),
    nd.ConvWgradNode: (Row.CONV_WGRAD, ("X", "DY"), "DW", ("x", "dy"), "dw"),
}


def _match_conv(node: Any, graph: Any) -> Match:
    row, in_ports, out_port, in_roles, out_role = _CONV_PORTS[type(node)]
    _conv_common(node, graph)
    roles: dict[str, Tensor] = {}
    items = []
    for port, role in (*zip(in_ports, in_roles, strict=False), (out_port, out_role)):
        t = need(node, "inputs" if port != out_port else "outputs", port)
        check_dtype(node, port, t, DATA_TYPES, "MIOpen convolution")
        check_virtual(node, port, t, False, f"a single-node {row.value}")
        roles[role] = t
        items.append((node, port, t))
    dts = {dtype_of(t) for t in roles.values()}
    if len(dts) != 1:
        raise Declined(f"node {node.name!r}: tensors have data types {sorted(d.name for d in dts)}; "
                       "MIOpen convolution needs one data type for all of them")
    layout = same_layout(items)
    return Match(row, (node,), roles, layout=layout, conv=node)


def _match_conv_bias_act(graph: Any, nodes: Sequence[Any]) -> Match:
    conv = nodes[0]
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
    roles: dict[str, Tensor] = {"x": x, "w": w, "conv_y": cy}
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
        if ct != xdt:
            raise Declined(f"node {add.name!r}: compute data type {ct.name}; {rule} needs the bias "
                           f"compute type = the input type {xdt.name}")
        check_virtual(add, "IN_1", bias, False, rule)
        check_dtype(add, "IN_1", bias, (xdt,), f"{rule} (bias: the input type)")
        check_param(add, "IN_1", bias, int(cy.dim[1]), len(cy.dim), rule)
        by = need(add, "outputs", "OUT_0")
        check_virtual(add, "OUT_0", by, True, rule)
        check_dtype(add, "OUT_0", by, (DataType.FLOAT, xdt), f"{rule} (bias output)")
        roles["bias"], roles["bias_y"] = bias, by
        act_in = by
    act = nodes[-1]
    if need(act, "inputs", "IN_0").uid != act_in.uid:
        raise Declined(f"node {act.name!r}: the activation must take the previous node's output")
    y = need(act, "outputs", "OUT_0")
    check_virtual(act, "OUT_0", y, False, rule)
    check_dtype(act, "OUT_0", y, (xdt,), f"{rule} (output: the input type)")
    roles["y"] = y
    layout = same_layout([(conv, "X", x), (conv, "W", w), (act, "OUT_0", y)])
    return Match(Row.CONV_BIAS_ACT, tuple(nodes), roles, layout=layout,
                 activation=activation_of(act, graph), conv=conv)


# ----------------------------------------------------------------------------------- BN rows
def _bn_data(node: Any, items: Sequence[tuple[str, str, Tensor]], rule: str) -> tuple[DataType, str]:
    dts = set()
    for port, _, t in items:
        check_dtype(node, port, t, DATA_TYPES, rule)
        dts.add(dtype_of(t))
    if len(dts) != 1:
        raise Declined(f"node {node.name!r}: data tensors have types {sorted(d.name for d in dts)}; "
                       f"{rule} needs one data type")
    x = items[0][2]
    if len(x.dim) not in (4, 5):
        raise Declined(f"node {node.name!r}: {len(x.dim)}-d data; {rule} supports 4-d and 5-d")
    layout = same_layout([(node, p, t) for p, _, t in items])
    return dts.pop(), layout


def _bn_params(node: Any, items: Sequence[tuple[str, Tensor]], x: Tensor, rule: str) -> None:
    for port, t in items:
        if tuple(t.dim) != (1, x.dim[1]) + (1,) * (len(x.dim) - 2):
            raise Declined(f"node {node.name!r}: port {port} (tensor {label(t)}) has dims "
                           f"{list(t.dim)}: spatial batchnorm only (per-channel parameters "
                           f"{[1, x.dim[1]] + [1] * (len(x.dim) - 2)})")
        check_dtype(node, port, t, (DataType.FLOAT,), f"{rule} (scale/bias/mean/variance: FP32)")
        dense_layout(node, port, t)


def _take(node: Any, io: str, ports: Sequence[str], rule: str,
          roles: dict[str, Tensor]) -> list[tuple[str, Tensor]]:
    """The required, non-virtual tensors at ``ports``, each also put in ``roles`` under its
    lowercase port name; as (port, tensor) pairs."""
    taken = []
    for port in ports:
        t = need(node, io, port)
        check_virtual(node, port, t, False, rule)
        roles[port.lower()] = t
        taken.append((port, t))
    return taken


def _scalar(node: Any, port: str, roles: dict[str, Tensor]) -> None:
    """The required pass-by-value scalar at input ``port``, put in ``roles``."""
    t = need(node, "inputs", port)
    check_scalar(node, port, t)
    roles[port.lower()] = t


def _reduce_ok(node: Any, x: Tensor) -> None:
    if math.prod(x.dim) // x.dim[1] <= 1:
        raise Declined(f"node {node.name!r}: N x spatial = 1; batch statistics need more than one value")


def _match_bn_inference(node: Any, graph: Any) -> Match:
    inv = not isinstance(node, nd.BatchnormInferenceVarianceNode)
    row = Row.BN_INFERENCE_INV if inv else Row.BN_INFERENCE
    rule = row.value
    check_fp32_compute(node, graph, rule)
    x, y = need(node, "inputs", "X"), need(node, "outputs", "Y")
    _dt, layout = _bn_data(node, [("X", "x", x), ("Y", "y", y)], rule)
    for port, t in (("X", x), ("Y", y)):
        check_virtual(node, port, t, False, rule)
    roles = {"x": x, "y": y}
    params = _take(node, "inputs", ("MEAN", "INV_VARIANCE" if inv else "VARIANCE", "SCALE", "BIAS"),
                   rule, roles)
    _bn_params(node, params, x, rule)
    if not inv:
        _scalar(node, "EPSILON", roles)
    return Match(row, (node,), roles, layout=layout)


def _match_bn_training(graph: Any, nodes: Sequence[Any]) -> Match:
    bn = nodes[0]
    row = Row.BN_TRAINING if len(nodes) == 1 else Row.BN_TRAINING_ACT
    rule = row.value
    check_fp32_compute(bn, graph, rule)
    if getattr(bn, "peer_stats", None):
        raise Declined(f"node {bn.name!r}: peer_stats given; MIOpen batchnorm is single-GPU")
    x, y = need(bn, "inputs", "X"), need(bn, "outputs", "Y")
    roles: dict[str, Tensor] = {"x": x}
    data = [("X", "x", x)]
    check_virtual(bn, "X", x, False, rule)
    if row == Row.BN_TRAINING:
        check_virtual(bn, "Y", y, False, rule)
        roles["y"] = y
        data.append(("Y", "y", y))
    else:
        act = nodes[1]
        check_virtual(bn, "Y", y, True, rule)
        if need(act, "inputs", "IN_0").uid != y.uid:
            raise Declined(f"node {act.name!r}: the activation must take the batchnorm's Y")
        ay = need(act, "outputs", "OUT_0")
        check_virtual(act, "OUT_0", ay, False, rule)
        roles["bn_y"], roles["y"] = y, ay
        data.append(("OUT_0", "y", ay))
    dt, layout = _bn_data(bn, data, rule)
    if row == Row.BN_TRAINING_ACT:
        check_dtype(bn, "Y", y, (DataType.FLOAT, dt), f"{rule} (intermediate Y)")
    _reduce_ok(bn, x)
    params = _take(bn, "inputs", ("SCALE", "BIAS"), rule, roles)
    for port, role in (("MEAN", "mean"), ("INV_VARIANCE", "inv_variance")):
        t = port_tensor(bn, "outputs", port, required=False)
        if t is not None:
            params.append((port, t))
            if not t.is_virtual:
                roles[role] = t
    running = {p: port_tensor(bn, io, p, required=False) for io, p in (
        ("inputs", "PREV_RUNNING_MEAN"), ("inputs", "PREV_RUNNING_VARIANCE"),
        ("outputs", "NEXT_RUNNING_MEAN"), ("outputs", "NEXT_RUNNING_VARIANCE"))}
    present = [p for p, t in running.items() if t is not None]
    if present and len(present) != 4:
        missing = [p for p, t in running.items() if t is None]
        raise Declined(f"node {bn.name!r}: running statistics need all of PREV/NEXT_RUNNING_MEAN/"
                       f"VARIANCE; missing {missing}")
    if present:
        _scalar(bn, "MOMENTUM", roles)
        for port, t in running.items():
            assert t is not None
            check_virtual(bn, port, t, False, rule)
            params.append((port, t))
            roles[port.lower()] = t
    _bn_params(bn, params, x, rule)
    _scalar(bn, "EPSILON", roles)
    activation = activation_of(nodes[1], graph) if row == Row.BN_TRAINING_ACT else None
    return Match(row, tuple(nodes), roles, layout=layout, activation=activation)


def _match_bn_backward(graph: Any, nodes: Sequence[Any]) -> Match:
    bwd = nodes[-1]
    row = Row.BN_BACKWARD if len(nodes) == 1 else Row.BN_INF_DRELU_BN_BWD
    rule = row.value
    check_fp32_compute(bwd, graph, rule)
    if getattr(bwd, "peer_stats", None):
        raise Declined(f"node {bwd.name!r}: peer_stats given; MIOpen batchnorm is single-GPU")
    dy, x = need(bwd, "inputs", "DY"), need(bwd, "inputs", "X")
    roles: dict[str, Tensor] = {"x": x}
    _take(bwd, "outputs", ("DX", "DSCALE", "DBIAS"), rule, roles)
    # Without both saved statistics (plain row only) MIOpen recomputes them from x: NULL
    # savedMean/savedInvVariance, its documented behaviour.
    saved: tuple[str, ...] = ("MEAN", "INV_VARIANCE")
    if row == Row.BN_BACKWARD and all(port_tensor(bwd, "inputs", p, required=False) is None
                                      for p in saved):
        saved = ()
    params = [(p, need(bwd, "inputs", p)) for p in ("SCALE", *saved)]
    params += [("DSCALE", roles["dscale"]), ("DBIAS", roles["dbias"])]
    for port, t in params[:1 + len(saved)]:
        check_virtual(bwd, port, t, False, rule)
        roles[port.lower()] = t
    check_virtual(bwd, "X", x, False, rule)
    activation = None
    if row == Row.BN_BACKWARD:
        check_virtual(bwd, "DY", dy, False, rule)
        roles["dy"] = dy
        data = [("X", "x", x), ("DY", "dy", dy), ("DX", "dx", roles["dx"])]
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
        for port, role in (("X", "x"), ("MEAN", "mean"), ("INV_VARIANCE", "inv_variance"),
                           ("SCALE", "scale")):
            if need(inf, "inputs", port).uid != roles[role].uid:
                raise Declined(f"node {inf.name!r}: port {port} must be the same tensor as the "
                               f"batchnorm backward's {port}")
        bias = need(inf, "inputs", "BIAS")
        check_virtual(inf, "BIAS", bias, False, rule)
        params.append(("BIAS", bias))
        roles.update(dy=loss, bias=bias, bn_y=by, drelu=dy)
        activation = activation_of(drelu, graph)
        data = [("X", "x", x), ("IN_0", "dy", loss), ("DX", "dx", roles["dx"])]
    _dt, layout = _bn_data(bwd, data, rule)
    _reduce_ok(bwd, x)
    _bn_params(bwd, params, x, rule)
    return Match(row, tuple(nodes), roles, layout=layout, activation=activation)


# ------------------------------------------------------------------------------------- entry
#: Element types the seed never has (masks, integer data): declined before pattern matching.
_NON_SEED_TYPES = frozenset({DataType.BOOLEAN, DataType.UINT8, DataType.INT8, DataType.INT32,
                             DataType.INT64})


def _outside_seed(nodes: Sequence[Any]) -> None:
    """Raise :class:`Declined` naming the first node no seed row can contain: genstats and
    reduction, and BOOLEAN/integer tensors (masks, INT8 convolution with INT32 compute)."""
    for n in nodes:
        label = f"node {n.name!r} ({type(n).__name__})"
        if isinstance(n, (nd.GenstatsNode, nd.ReductionNode)):
            raise Declined(f"{label}: no seed row computes {n.op}; CPU_REFERENCE_ENGINE runs it")
        for port, t in (*n.inputs.items(), *n.outputs.items()):
            if t is None or t.is_pass_by_value or t.data_type not in _NON_SEED_TYPES:
                continue
            what = ("INT8 convolution (INT32 compute) is not a seed row"
                    if type(n) in _CONV_PORTS else "seed rows use FLOAT, HALF and BFLOAT16 "
                    "tensors only")
            raise Declined(f"{label}: port {port} tensor {t.name!r} is {t.data_type.name}; "
                           f"{what}; CPU_REFERENCE_ENGINE runs it")


def match(graph: Any) -> Match:
    """The seed row ``graph`` is, or raise :class:`Declined` naming the failing rule."""
    nodes = list(graph.nodes)
    _outside_seed(nodes)
    if len(nodes) == 1:
        n = nodes[0]
        if type(n) in _CONV_PORTS:
            return _match_conv(n, graph)
        if isinstance(n, nd.BatchnormInferenceVarianceNode):
            return _match_bn_inference(n, graph)
        if isinstance(n, nd.BatchnormNode):
            return _match_bn_training(graph, nodes)
        if isinstance(n, nd.BatchnormBackwardNode):
            return _match_bn_backward(graph, nodes)
        if isinstance(n, nd.BatchnormInferenceNode):
            return _match_bn_inference(n, graph)
    elif len(nodes) == 2:
        a, b = nodes
        if isinstance(a, nd.BatchnormNode) and is_pointwise(b, PointwiseMode.RELU_FWD):
            return _match_bn_training(graph, nodes)
        if isinstance(a, nd.ConvFpropNode) and is_pointwise(b, PointwiseMode.RELU_FWD):
            return _match_conv_bias_act(graph, nodes)
    elif len(nodes) == 3:
        a, b, c = nodes
        if (isinstance(a, nd.ConvFpropNode) and is_pointwise(b, PointwiseMode.ADD)
                and is_pointwise(c, PointwiseMode.RELU_FWD)):
            return _match_conv_bias_act(graph, nodes)
        if (isinstance(a, nd.BatchnormInferenceNode) and is_pointwise(b, PointwiseMode.RELU_BWD)
                and isinstance(c, nd.BatchnormBackwardNode)):
            return _match_bn_backward(graph, nodes)
    desc = " -> ".join(_describe(n) for n in nodes) or "an empty graph"
    raise Declined(f"graph {desc} is not a seed-table pattern; supported: "
                   + "; ".join(r.value for r in Row))


def _describe(node: Any) -> str:
    mode = getattr(node, "mode", None)
    kind = type(node).__name__
    if isinstance(mode, enum.Enum):
        return f"{kind}({mode.name})"
    return f"{kind}({PointwiseMode(mode).name})" if mode is not None else kind
