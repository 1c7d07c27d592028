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

from hipdnn.shapes import LAYOUTS, layout_of
from hipdnn.types import ConvolutionMode, DataType, PointwiseMode

#: A validated hipdnn.tensor.Tensor: uid, dim, stride and data_type are all set.
Tensor = Any

__all__ = ["Activation", "Declined", "Match", "Row", "match"]

_DATA_TYPES = (DataType.FLOAT, DataType.HALF, DataType.BFLOAT16)
_FLT_MAX = 3.4028234663852886e38


class Row(str, enum.Enum):
    """The nine rows of the seed table (names used in reasons and call-map tests)."""

    BN_INFERENCE = "batchnorm inference (variance)"
    BN_INF_DRELU_BN_BWD = "batchnorm inference + DReLU + batchnorm backward"
    BN_TRAINING = "batchnorm training"
    BN_TRAINING_ACT = "batchnorm training + activation"
    BN_BACKWARD = "batchnorm backward"
    CONV_FPROP = "convolution fprop"
    CONV_DGRAD = "convolution dgrad"
    CONV_WGRAD = "convolution wgrad"
    CONV_BIAS_ACT = "convolution fprop + (bias) + activation"


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


def _nodes_module() -> Any:
    import hipdnn.nodes as nodes

    return nodes


def _dtype(t: Tensor) -> DataType:
    return DataType(t.data_type)


def _compute(node: Any, graph: Any) -> DataType:
    """The node's compute type, inheriting the graph's; unset everywhere means FP32."""
    for value in (getattr(node, "compute_data_type", None), getattr(graph, "compute_data_type", None)):
        if value is not None and DataType(value) != DataType.NOT_SET:
            return DataType(value)
    return DataType.FLOAT


def _name(t: Tensor) -> str:
    return f"{t.name!r}" if getattr(t, "name", None) else f"uid {t.uid}"


def _port(node: Any, io: str, port: str, *, required: bool = True) -> Tensor | None:
    t = getattr(node, io).get(port)
    if t is None and required:
        raise Declined(f"node {node.name!r}: port {port} is not set; this row needs it")
    return t


def _need(node: Any, io: str, port: str) -> Tensor:
    t = _port(node, io, port)
    assert t is not None
    return t


def _check_dtype(node: Any, port: str, t: Tensor, allowed: Sequence[DataType], rule: str) -> None:
    dt = _dtype(t)
    if dt not in allowed:
        names = ", ".join(a.name for a in allowed)
        raise Declined(f"node {node.name!r}: port {port} (tensor {_name(t)}) has data type "
                       f"{dt.name}; {rule} allows {names}")


def _check_virtual(node: Any, port: str, t: Tensor, virtual: bool, rule: str) -> None:
    if bool(t.is_virtual) != virtual:
        state = "virtual" if t.is_virtual else "non-virtual"
        want = "virtual" if virtual else "non-virtual (in the variant pack)"
        raise Declined(f"node {node.name!r}: port {port} (tensor {_name(t)}) is {state}; "
                       f"{rule} needs it {want}")


def _dense_layout(node: Any, port: str, t: Tensor) -> str:
    """The tensor's layout; dense (packed) NCHW/NHWC/NCDHW/NDHWC only."""
    layout = layout_of(t.dim, t.stride)
    if layout is None:
        raise Declined(f"node {node.name!r}: port {port} (tensor {_name(t)}) has dims "
                       f"{list(t.dim)} strides {list(t.stride)}: dense tensors only, packed as one "
                       f"of {', '.join(LAYOUTS)}")
    return layout


def _same_layout(items: Sequence[tuple[Any, str, Tensor]]) -> str:
    first: str | None = None
    for node, port, t in items:
        lay = _dense_layout(node, port, t)
        if first is None:
            first = lay
        elif lay != first and not _ambiguous(t):
            raise Declined(f"node {node.name!r}: port {port} (tensor {_name(t)}) is {lay} but the "
                           f"other data tensors are {first}; all must share one layout")
    assert first is not None
    return first


def _ambiguous(t: Tensor) -> bool:
    """C == 1 or spatial == 1: several layouts have the same strides."""
    return t.dim[1] == 1 or math.prod(t.dim[2:]) == 1


def _check_param(node: Any, port: str, t: Tensor, channels: int, rank: int, rule: str) -> None:
    want = (1, channels) + (1,) * (rank - 2)
    if tuple(t.dim) != want:
        raise Declined(f"node {node.name!r}: port {port} (tensor {_name(t)}) has dims "
                       f"{list(t.dim)}; {rule} needs per-channel {list(want)}")
    _dense_layout(node, port, t)


def _check_fp32_compute(node: Any, graph: Any, rule: str) -> None:
    ct = _compute(node, graph)
    if ct != DataType.FLOAT:
        raise Declined(f"node {node.name!r}: compute data type {ct.name}; {rule} needs FLOAT")


def _scalar_ok(node: Any, port: str, t: Tensor | None) -> None:
    if t is not None and not getattr(t, "is_pass_by_value", False) and t.value is None:
        raise Declined(f"node {node.name!r}: port {port} must be a pass-by-value scalar")


# --------------------------------------------------------------------------- activation mapping
def activation_of(node: Any, graph: Any) -> Activation:
    """Map a RELU_FWD/RELU_BWD node to MIOpen; RELU with no clip, lower clip, lower+upper clip."""
    _check_fp32_compute(node, graph, "an activation node")
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
    from miopen_ctypes.enums import miopenActivationMode_t as M

    if upper is None:
        if lower in (None, 0.0):
            return Activation(int(M.miopenActivationRELU), lower_clip=lower)
        return Activation(int(M.miopenActivationCLAMP), alpha=lower, beta=_FLT_MAX,
                          lower_clip=lower)
    if lower is None:
        if upper <= 0:
            raise Declined(f"node {node.name!r}: relu_upper_clip {upper} must be > 0 without a lower clip")
        return Activation(int(M.miopenActivationCLIPPEDRELU), alpha=upper, upper_clip=upper)
    return Activation(int(M.miopenActivationCLAMP), alpha=lower, beta=upper,
                      lower_clip=lower, upper_clip=upper)


def _is_pointwise(node: Any, mode: PointwiseMode) -> bool:
    nodes = _nodes_module()
    return isinstance(node, nodes.PointwiseNode) and PointwiseMode(node.mode) == mode


# --------------------------------------------------------------------------------- conv rows
def _conv_common(node: Any, graph: Any) -> None:
    mode = getattr(node, "convolution_mode", ConvolutionMode.CROSS_CORRELATION)
    if mode is not None and ConvolutionMode(mode) not in (ConvolutionMode.CROSS_CORRELATION,
                                                           ConvolutionMode.NOT_SET):
        raise Declined(f"node {node.name!r}: convolution_mode {ConvolutionMode(mode).name}; "
                       "MIOpen supports CROSS_CORRELATION only")
    _check_fp32_compute(node, graph, "a convolution")
    pre, post = list(node.pre_padding), list(node.post_padding)
    if pre != post:
        raise Declined(f"node {node.name!r}: pre_padding {pre} != post_padding {post}; MIOpen "
                       "supports symmetric padding only")


_CONV_PORTS = {
    "ConvFpropNode": (Row.CONV_FPROP, ("X", "W"), "Y", ("x", "w"), "y"),
    "ConvDgradNode": (Row.CONV_DGRAD, ("DY", "W"), "DX", ("dy", "w"), "dx"),
    "ConvWgradNode": (Row.CONV_WGRAD, ("X", "DY"), "DW", ("x", "dy"), "dw"),
}


def _match_conv(node: Any, graph: Any) -> Match:
    row, in_ports, out_port, in_roles, out_role = _CONV_PORTS[type(node).__name__]
    _conv_common(node, graph)
    roles: dict[str, Tensor] = {}
    items = []
    for port, role in (*zip(in_ports, in_roles, strict=False), (out_port, out_role)):
        t = _need(node, "inputs" if port != out_port else "outputs", port)
        _check_dtype(node, port, t, _DATA_TYPES, "MIOpen convolution")
        _check_virtual(node, port, t, False, f"a single-node {row.value}")
        roles[role] = t
        items.append((node, port, t))
    dts = {_dtype(t) for t in roles.values()}
    if len(dts) != 1:
        raise Declined(f"node {node.name!r}: tensors have data types {sorted(d.name for d in dts)}; "
                       "MIOpen convolution needs one data type for all of them")
    layout = _same_layout(items)
    return Match(row, (node,), roles, layout=layout, conv=node)


def _match_conv_bias_act(graph: Any, nodes: Sequence[Any]) -> Match:
    conv = nodes[0]
    _conv_common(conv, graph)
    x, w, cy = _need(conv, "inputs", "X"), _need(conv, "inputs", "W"), _need(conv, "outputs", "Y")
    rule = Row.CONV_BIAS_ACT.value
    for port, t in (("X", x), ("W", w)):
        _check_dtype(conv, port, t, _DATA_TYPES, rule)
        _check_virtual(conv, port, t, False, rule)
    xdt = _dtype(x)
    if _dtype(w) != xdt:
        raise Declined(f"node {conv.name!r}: W is {_dtype(w).name} but X is {xdt.name}; {rule} "
                       "needs one input data type")
    _check_virtual(conv, "Y", cy, True, rule)
    has_bias = len(nodes) == 3
    allowed_cy = (DataType.FLOAT, xdt) if has_bias else (DataType.FLOAT,)
    _check_dtype(conv, "Y", cy, allowed_cy, f"{rule} (conv Y: FP32, or the input type only with bias)")
    roles: dict[str, Tensor] = {"x": x, "w": w, "conv_y": cy}
    act_in = cy
    if has_bias:
        add = nodes[1]
        a0, a1 = _need(add, "inputs", "IN_0"), _need(add, "inputs", "IN_1")
        if a0.uid == cy.uid:
            bias = a1
        elif a1.uid == cy.uid:
            bias = a0
        else:
            raise Declined(f"node {add.name!r}: the bias ADD must take the convolution's Y")
        ct = _compute(add, graph)
        if ct != xdt:
            raise Declined(f"node {add.name!r}: compute data type {ct.name}; {rule} needs the bias "
                           f"compute type = the input type {xdt.name}")
        _check_virtual(add, "IN_1", bias, False, rule)
        _check_dtype(add, "IN_1", bias, (xdt,), f"{rule} (bias: the input type)")
        _check_param(add, "IN_1", bias, int(cy.dim[1]), len(cy.dim), rule)
        by = _need(add, "outputs", "OUT_0")
        _check_virtual(add, "OUT_0", by, True, rule)
        _check_dtype(add, "OUT_0", by, (DataType.FLOAT, xdt), f"{rule} (bias output)")
        roles["bias"], roles["bias_y"] = bias, by
        act_in = by
    act = nodes[-1]
    if _need(act, "inputs", "IN_0").uid != act_in.uid:
        raise Declined(f"node {act.name!r}: the activation must take the previous node's output")
    y = _need(act, "outputs", "OUT_0")
    _check_virtual(act, "OUT_0", y, False, rule)
    _check_dtype(act, "OUT_0", y, (xdt,), f"{rule} (output: the input type)")
    roles["y"] = y
    layout = _same_layout([(conv, "X", x), (conv, "W", w), (act, "OUT_0", y)])
    return Match(Row.CONV_BIAS_ACT, tuple(nodes), roles, layout=layout,
                 activation=activation_of(act, graph), conv=conv)


# ----------------------------------------------------------------------------------- BN rows
def _bn_data(node: Any, items: Sequence[tuple[str, str, Tensor]], rule: str) -> tuple[DataType, str]:
    dts = set()
    for port, _, t in items:
        _check_dtype(node, port, t, _DATA_TYPES, rule)
        dts.add(_dtype(t))
    if len(dts) != 1:
        raise Declined(f"node {node.name!r}: data tensors have types {sorted(d.name for d in dts)}; "
                       f"{rule} needs one data type")
    x = items[0][2]
    if len(x.dim) not in (4, 5):
        raise Declined(f"node {node.name!r}: {len(x.dim)}-d data; {rule} supports 4-d and 5-d")
    layout = _same_layout([(node, p, t) for p, _, t in items])
    return dts.pop(), layout


def _bn_params(node: Any, items: Sequence[tuple[str, Tensor]], x: Tensor, rule: str) -> None:
    for port, t in items:
        if tuple(t.dim) != (1, x.dim[1]) + (1,) * (len(x.dim) - 2):
            raise Declined(f"node {node.name!r}: port {port} (tensor {_name(t)}) has dims "
                           f"{list(t.dim)}: spatial batchnorm only (per-channel parameters "
                           f"{[1, x.dim[1]] + [1] * (len(x.dim) - 2)})")
        _check_dtype(node, port, t, (DataType.FLOAT,), f"{rule} (scale/bias/mean/variance: FP32)")
        _dense_layout(node, port, t)


def _reduce_ok(node: Any, x: Tensor) -> None:
    if math.prod(x.dim) // x.dim[1] <= 1:
        raise Declined(f"node {node.name!r}: N x spatial = 1; batch statistics need more than one value")


def _match_bn_inference(node: Any, graph: Any) -> Match:
    rule = Row.BN_INFERENCE.value
    _check_fp32_compute(node, graph, rule)
    x, y = _need(node, "inputs", "X"), _need(node, "outputs", "Y")
    _dt, layout = _bn_data(node, [("X", "x", x), ("Y", "y", y)], rule)
    for port, t in (("X", x), ("Y", y)):
        _check_virtual(node, port, t, False, rule)
    roles = {"x": x, "y": y}
    params = []
    for port in ("MEAN", "VARIANCE", "SCALE", "BIAS"):
        t = _need(node, "inputs", port)
        _check_virtual(node, port, t, False, rule)
        roles[port.lower()] = t
        params.append((port, t))
    _bn_params(node, params, x, rule)
    eps = _need(node, "inputs", "EPSILON")
    _scalar_ok(node, "EPSILON", eps)
    roles["epsilon"] = eps
    return Match(Row.BN_INFERENCE, (node,), roles, layout=layout)


def _match_bn_training(graph: Any, nodes: Sequence[Any]) -> Match:
    bn = nodes[0]
    row = Row.BN_TRAINING if len(nodes) == 1 else Row.BN_TRAINING_ACT
    rule = row.value
    _check_fp32_compute(bn, graph, rule)
    if getattr(bn, "peer_stats", None):
        raise Declined(f"node {bn.name!r}: peer_stats given; MIOpen batchnorm is single-GPU")
    x, y = _need(bn, "inputs", "X"), _need(bn, "outputs", "Y")
    roles: dict[str, Tensor] = {"x": x}
    data = [("X", "x", x)]
    _check_virtual(bn, "X", x, False, rule)
    if row == Row.BN_TRAINING:
        _check_virtual(bn, "Y", y, False, rule)
        roles["y"] = y
        data.append(("Y", "y", y))
    else:
        act = nodes[1]
        _check_virtual(bn, "Y", y, True, rule)
        if _need(act, "inputs", "IN_0").uid != y.uid:
            raise Declined(f"node {act.name!r}: the activation must take the batchnorm's Y")
        ay = _need(act, "outputs", "OUT_0")
        _check_virtual(act, "OUT_0", ay, False, rule)
        roles["bn_y"], roles["y"] = y, ay
        data.append(("OUT_0", "y", ay))
    dt, layout = _bn_data(bn, data, rule)
    if row == Row.BN_TRAINING_ACT:
        _check_dtype(bn, "Y", y, (DataType.FLOAT, dt), f"{rule} (intermediate Y)")
    _reduce_ok(bn, x)
    params = []
    for port in ("SCALE", "BIAS"):
        t = _need(bn, "inputs", port)
        _check_virtual(bn, port, t, False, rule)
        roles[port.lower()] = t
        params.append((port, t))
    for port, role in (("MEAN", "mean"), ("INV_VARIANCE", "inv_variance")):
        t = _port(bn, "outputs", port, required=False)
        if t is not None:
            params.append((port, t))
            if not t.is_virtual:
                roles[role] = t
    running = {p: _port(bn, io, p, required=False) for io, p in (
        ("inputs", "PREV_RUNNING_MEAN"), ("inputs", "PREV_RUNNING_VARIANCE"),
        ("outputs", "NEXT_RUNNING_MEAN"), ("outputs", "NEXT_RUNNING_VARIANCE"))}
    present = [p for p, t in running.items() if t is not None]
    if present and len(present) != 4:
        missing = [p for p, t in running.items() if t is None]
        raise Declined(f"node {bn.name!r}: running statistics need all of PREV/NEXT_RUNNING_MEAN/"
                       f"VARIANCE; missing {missing}")
    if present:
        momentum = _need(bn, "inputs", "MOMENTUM")
        _scalar_ok(bn, "MOMENTUM", momentum)
        roles["momentum"] = momentum
        for port, t in running.items():
            assert t is not None
            _check_virtual(bn, port, t, False, rule)
            params.append((port, t))
            roles[port.lower()] = t
    _bn_params(bn, params, x, rule)
    eps = _need(bn, "inputs", "EPSILON")
    _scalar_ok(bn, "EPSILON", eps)
    roles["epsilon"] = eps
    activation = activation_of(nodes[1], graph) if row == Row.BN_TRAINING_ACT else None
    return Match(row, tuple(nodes), roles, layout=layout, activation=activation)


def _match_bn_backward(graph: Any, nodes: Sequence[Any]) -> Match:
    bwd = nodes[-1]
    row = Row.BN_BACKWARD if len(nodes) == 1 else Row.BN_INF_DRELU_BN_BWD
    rule = row.value
    _check_fp32_compute(bwd, graph, rule)
    if getattr(bwd, "peer_stats", None):
        raise Declined(f"node {bwd.name!r}: peer_stats given; MIOpen batchnorm is single-GPU")
    dy, x = _need(bwd, "inputs", "DY"), _need(bwd, "inputs", "X")
    roles: dict[str, Tensor] = {"x": x}
    for port in ("DX", "DSCALE", "DBIAS"):
        t = _need(bwd, "outputs", port)
        _check_virtual(bwd, port, t, False, rule)
        roles[port.lower()] = t
    params = [(p, _need(bwd, "inputs", p)) for p in ("SCALE", "MEAN", "INV_VARIANCE")]
    params += [("DSCALE", roles["dscale"]), ("DBIAS", roles["dbias"])]
    for port, t in params[:3]:
        _check_virtual(bwd, port, t, False, rule)
        roles[port.lower()] = t
    _check_virtual(bwd, "X", x, False, rule)
    activation = None
    if row == Row.BN_BACKWARD:
        _check_virtual(bwd, "DY", dy, False, rule)
        roles["dy"] = dy
        data = [("X", "x", x), ("DY", "dy", dy), ("DX", "dx", roles["dx"])]
    else:
        inf, drelu = nodes[0], nodes[1]
        _check_fp32_compute(inf, graph, rule)
        _check_virtual(bwd, "DY", dy, True, rule)
        if _need(drelu, "outputs", "OUT_0").uid != dy.uid:
            raise Declined(f"node {bwd.name!r}: DY must be the RELU_BWD node's output")
        loss, fwd_in = _need(drelu, "inputs", "IN_0"), _need(drelu, "inputs", "IN_1")
        by = _need(inf, "outputs", "Y")
        if fwd_in.uid != by.uid:
            raise Declined(f"node {drelu.name!r}: IN_1 must be the batchnorm inference Y")
        _check_virtual(inf, "Y", by, True, rule)
        _check_virtual(drelu, "IN_0", loss, False, rule)
        for port, role in (("X", "x"), ("MEAN", "mean"), ("INV_VARIANCE", "inv_variance"),
                           ("SCALE", "scale")):
            if _need(inf, "inputs", port).uid != roles[role].uid:
                raise Declined(f"node {inf.name!r}: port {port} must be the same tensor as the "
                               f"batchnorm backward's {port}")
        bias = _need(inf, "inputs", "BIAS")
        _check_virtual(inf, "BIAS", bias, False, rule)
        params.append(("BIAS", bias))
        roles.update(dy=loss, bias=bias, bn_y=by, drelu=dy)
        activation = activation_of(drelu, graph)
        data = [("X", "x", x), ("IN_0", "dy", loss), ("DX", "dx", roles["dx"])]
    _dt, layout = _bn_data(bwd, data, rule)
    _reduce_ok(bwd, x)
    _bn_params(bwd, params, x, rule)
    return Match(row, tuple(nodes), roles, layout=layout, activation=activation)


# ------------------------------------------------------------------------------------- entry
def match(graph: Any) -> Match:
    """The seed row ``graph`` is, or raise :class:`Declined` naming the failing rule."""
    nodes = list(graph.nodes)
    nd = _nodes_module()
    kinds = [type(n).__name__ for n in nodes]
    if len(nodes) == 1:
        n = nodes[0]
        if kinds[0] in _CONV_PORTS:
            return _match_conv(n, graph)
        if isinstance(n, nd.BatchnormInferenceVarianceNode):
            return _match_bn_inference(n, graph)
        if isinstance(n, nd.BatchnormNode):
            return _match_bn_training(graph, nodes)
        if isinstance(n, nd.BatchnormBackwardNode):
            return _match_bn_backward(graph, nodes)
        if isinstance(n, nd.BatchnormInferenceNode):
            raise Declined(f"node {n.name!r}: batchnorm inference with inverse variance alone is "
                           "not a seed row; use the variance form (batchnorm_inference with "
                           "variance= and epsilon=)")
    elif len(nodes) == 2:
        a, b = nodes
        if isinstance(a, nd.BatchnormNode) and _is_pointwise(b, PointwiseMode.RELU_FWD):
            return _match_bn_training(graph, nodes)
        if isinstance(a, nd.ConvFpropNode) and _is_pointwise(b, PointwiseMode.RELU_FWD):
            return _match_conv_bias_act(graph, nodes)
    elif len(nodes) == 3:
        a, b, c = nodes
        if (isinstance(a, nd.ConvFpropNode) and _is_pointwise(b, PointwiseMode.ADD)
                and _is_pointwise(c, PointwiseMode.RELU_FWD)):
            return _match_conv_bias_act(graph, nodes)
        if (isinstance(a, nd.BatchnormInferenceNode) and _is_pointwise(b, PointwiseMode.RELU_BWD)
                and isinstance(c, nd.BatchnormBackwardNode)):
            return _match_bn_backward(graph, nodes)
    desc = " -> ".join(_describe(n) for n in nodes) or "an empty graph"
    raise Declined(f"graph {desc} is not a seed-table pattern; supported: "
                   + "; ".join(r.value for r in Row))


def _describe(node: Any) -> str:
    mode = getattr(node, "mode", None)
    kind = type(node).__name__
    return f"{kind}({PointwiseMode(mode).name})" if mode is not None else kind
