"""Batchnorm and pointwise nodes (re-exported by :mod:`hipdnn.ir.nodes`)."""

from __future__ import annotations

from typing import Any, ClassVar

from hipdnn.core.errors import ValidationError
from hipdnn.core.types import DataType, PointwiseMode, check_float, to_enum, to_int
from hipdnn.ir.nodes.base import (
    FLOAT_TYPES,
    KnownTensor,
    Node,
    channels_last_hint,
    check_dims,
    check_rank,
    param_dims,
    set_output_shape,
)
from hipdnn.ir.tensor import Tensor

__all__ = [
    "SCALAR_RANGES",
    "BatchnormBackwardNode",
    "BatchnormInferenceNode",
    "BatchnormInferenceVarianceNode",
    "BatchnormNode",
    "PointwiseNode",
    "check_scalar",
]


def _check_param(node: Node, port: str, x: KnownTensor) -> None:
    t = check_dims(node, port, FLOAT_TYPES)
    expect = param_dims(x.dim)
    if tuple(t.dim) != expect:
        # X's dims in channels-last order (an NHWC array's shape) give per-channel tensors of
        # the last axis' size
        channels = [int(d) for d in t.dim if d != 1]
        hint = channels_last_hint("X", x.dim) if (
            channels == [int(x.dim[-1])] and int(x.dim[-1]) != int(x.dim[1])) else ""
        raise ValidationError(
            f"channel mismatch: dims {list(t.dim)}; per-channel tensors of X {list(x.dim)} "
            f"must have dims {list(expect)}{hint}", node=node.name, port=port, tensor=t.name)


#: Allowed ranges of scalar inputs: port -> (low, high, low excluded). Baked values are checked
#: when the node is made and at validate; values given at execute time are checked at execute.
SCALAR_RANGES: dict[str, tuple[float | None, float | None, bool]] = {
    "EPSILON": (0.0, None, True), "MOMENTUM": (0.0, 1.0, False)}


def check_scalar(node: Node, port: str) -> None:
    t = check_dims(node, port)
    n = 1
    for d in t.dim:
        n *= d
    if n != 1:
        raise ValidationError(f"must be a scalar (one element), has dims {list(t.dim)}",
                              node=node.name, port=port, tensor=t.name)
    if not t.is_pass_by_value:
        raise ValidationError("must be a pass-by-value scalar: pass a Python float or "
                              "graph.tensor(dim=[1,1,1,1], is_pass_by_value=True)",
                              node=node.name, port=port, tensor=t.name)
    low, high, low_open = SCALAR_RANGES.get(port, (None, None, False))
    if t.value is not None:
        check_float(t.value, port.lower(), node=node.name, low=low, high=high, low_open=low_open,
                    tensor=t.name)


def _check_data(node: Node, port: str) -> KnownTensor:
    x = check_dims(node, port, FLOAT_TYPES)
    check_rank(node, port, x, (3, 4, 5))
    return x


def _set_like_x(node: Node, x: KnownTensor, data_ports: tuple[str, ...],
                param_ports: tuple[str, ...], strict: bool) -> None:
    for port in data_ports:
        set_output_shape(node, port, x.dim, x, strict=strict)
    for port in param_ports:
        set_output_shape(node, port, param_dims(x.dim), None, strict=strict)


def _infer_from(node: Node, x_port: str, data_ports: tuple[str, ...],
                param_ports: tuple[str, ...]) -> None:
    x = node.inputs.get(x_port)
    if x is None or x.dim is None or len(x.dim) < 2:
        return
    _set_like_x(node, x, data_ports, param_ports, strict=False)  # type: ignore[arg-type]


class BatchnormNode(Node):
    """Batchnorm training (spatial): batch statistics, optionally running-statistics update
    (cuDNN's convention: MOMENTUM weighs the batch, the running variance is unbiased)."""

    op = "batchnorm"
    INPUTS = ("X", "SCALE", "BIAS", "PREV_RUNNING_MEAN", "PREV_RUNNING_VARIANCE", "EPSILON",
              "MOMENTUM")
    OUTPUTS = ("Y", "MEAN", "INV_VARIANCE", "NEXT_RUNNING_MEAN", "NEXT_RUNNING_VARIANCE")
    OPTIONAL = frozenset({"PREV_RUNNING_MEAN", "PREV_RUNNING_VARIANCE", "MOMENTUM",
                          "NEXT_RUNNING_MEAN", "NEXT_RUNNING_VARIANCE"})
    PARAM_OUTPUTS = frozenset({"MEAN", "INV_VARIANCE", "NEXT_RUNNING_MEAN",
                               "NEXT_RUNNING_VARIANCE"})
    _PARAMS: ClassVar[tuple[str, ...]] = (
        "MEAN", "INV_VARIANCE", "NEXT_RUNNING_MEAN", "NEXT_RUNNING_VARIANCE")

    def infer(self) -> None:
        _infer_from(self, "X", ("Y",), self._PARAMS)

    def validate(self) -> None:
        x = _check_data(self, "X")
        for port in ("SCALE", "BIAS"):
            _check_param(self, port, x)
        check_scalar(self, "EPSILON")
        running = ("PREV_RUNNING_MEAN", "PREV_RUNNING_VARIANCE", "MOMENTUM")
        given = [p for p in running if self.inputs[p] is not None]
        if given and len(given) != 3:
            missing = [p for p in running if self.inputs[p] is None]
            raise ValidationError(f"running statistics need PREV_RUNNING_MEAN, "
                                  f"PREV_RUNNING_VARIANCE and MOMENTUM together; missing "
                                  f"{missing}", node=self.name, port=missing[0])
        if given:
            _check_param(self, "PREV_RUNNING_MEAN", x)
            _check_param(self, "PREV_RUNNING_VARIANCE", x)
            check_scalar(self, "MOMENTUM")
        _set_like_x(self, x, ("Y",), self._PARAMS, strict=True)


class BatchnormInferenceNode(Node):
    """Batchnorm inference with a precomputed inverse variance (1/sqrt(var + eps))."""

    op = "batchnorm_inference"
    INPUTS = ("X", "MEAN", "INV_VARIANCE", "SCALE", "BIAS")
    OUTPUTS = ("Y",)

    def infer(self) -> None:
        _infer_from(self, "X", ("Y",), ())

    def validate(self) -> None:
        x = _check_data(self, "X")
        for port in self.INPUTS[1:]:
            _check_param(self, port, x)
        _set_like_x(self, x, ("Y",), (), strict=True)


class BatchnormInferenceVarianceNode(Node):
    """Batchnorm inference from the variance and epsilon (hipDNN's "variance ext" form)."""

    op = "batchnorm_inference_variance_ext"
    INPUTS = ("X", "MEAN", "VARIANCE", "SCALE", "BIAS", "EPSILON")
    OUTPUTS = ("Y",)

    def infer(self) -> None:
        _infer_from(self, "X", ("Y",), ())

    def validate(self) -> None:
        x = _check_data(self, "X")
        for port in ("MEAN", "VARIANCE", "SCALE", "BIAS"):
            _check_param(self, port, x)
        check_scalar(self, "EPSILON")
        _set_like_x(self, x, ("Y",), (), strict=True)


class BatchnormBackwardNode(Node):
    """Batchnorm backward: DX, DSCALE, DBIAS from DY, X, SCALE and the saved MEAN/INV_VARIANCE."""

    op = "batchnorm_backward"
    INPUTS = ("DY", "X", "SCALE", "MEAN", "INV_VARIANCE")
    OUTPUTS = ("DX", "DSCALE", "DBIAS")
    OPTIONAL = frozenset({"MEAN", "INV_VARIANCE"})
    PARAM_OUTPUTS = frozenset({"DSCALE", "DBIAS"})

    def infer(self) -> None:
        _infer_from(self, "X", ("DX",), ("DSCALE", "DBIAS"))

    def validate(self) -> None:
        x = _check_data(self, "X")
        dy = _check_data(self, "DY")
        if tuple(dy.dim) != tuple(x.dim):
            raise ValidationError(f"DY dims {list(dy.dim)} differ from X dims {list(x.dim)}",
                                  node=self.name, port="DY", tensor=dy.name)
        _check_param(self, "SCALE", x)
        saved = [p for p in ("MEAN", "INV_VARIANCE") if self.inputs[p] is not None]
        if len(saved) == 1:
            missing = "INV_VARIANCE" if saved == ["MEAN"] else "MEAN"
            raise ValidationError("MEAN and INV_VARIANCE must be given together",
                                  node=self.name, port=missing)
        for port in saved:
            _check_param(self, port, x)
        _set_like_x(self, x, ("DX",), ("DSCALE", "DBIAS"), strict=True)


_FLOAT_ATTRS = ("relu_lower_clip", "relu_upper_clip", "relu_lower_clip_slope", "swish_beta",
                "elu_alpha", "softplus_beta")


def _broadcast(node: Node, tensors: list[tuple[str, Tensor]]) -> tuple[int, ...] | None:
    if not tensors:
        return None
    first = tensors[0][1].dim
    if first is None or any(t.dim is None for _, t in tensors):
        return None
    out = list(first)
    for port, t in tensors[1:]:
        assert t.dim is not None
        if len(t.dim) != len(first):
            raise ValidationError(f"rank mismatch: dims {list(t.dim)} vs IN_0 {list(first)}"
                                  f" (broadcasting needs equal ranks)", node=node.name, port=port,
                                  tensor=t.name)
        for i, d in enumerate(t.dim):
            if d != out[i] and 1 not in (d, out[i]):
                raise ValidationError(f"dims {list(t.dim)} do not broadcast with {out} (axis "
                                      f"{i}: {d} vs {out[i]}; each must be equal or 1)",
                                      node=node.name, port=port, tensor=t.name)
            out[i] = max(out[i], d)
    return tuple(out)


#: The pointwise modes each attribute applies to (set for any other mode, it would be ignored).
_ATTR_MODES: dict[str, frozenset[PointwiseMode]] = {
    **dict.fromkeys(("relu_lower_clip", "relu_upper_clip", "relu_lower_clip_slope"),
                    frozenset({PointwiseMode.RELU_FWD, PointwiseMode.RELU_BWD})),
    "swish_beta": frozenset({PointwiseMode.SWISH_FWD, PointwiseMode.SWISH_BWD}),
    "elu_alpha": frozenset({PointwiseMode.ELU_FWD, PointwiseMode.ELU_BWD}),
    "softplus_beta": frozenset({PointwiseMode.SOFTPLUS_FWD, PointwiseMode.SOFTPLUS_BWD}),
    "axis": frozenset({PointwiseMode.GEN_INDEX}),
}


def _check_attrs_apply(node: Any) -> None:
    for key, modes in _ATTR_MODES.items():
        if getattr(node, key) is not None and node.mode not in modes:
            valid = " or ".join(sorted(m.name for m in modes))
            raise ValidationError(f"{key}={getattr(node, key)!r} does not apply to pointwise mode "
                                  f"{node.mode.name} (it would be ignored); {key} is for "
                                  f"{valid} only", node=node.name)


def _check_clips(node: Any) -> None:
    lo, hi = node.relu_lower_clip, node.relu_upper_clip
    if lo is not None and hi is not None and hi < lo:
        raise ValidationError(f"relu_upper_clip {hi} is below relu_lower_clip {lo}; the upper "
                              f"clip must be >= the lower clip", node=node.name)


class PointwiseNode(Node):
    """Element-wise op ``mode`` over IN_0[, IN_1[, IN_2]] -> OUT_0, broadcasting size-1 dims.

    RELU_FWD covers ReLU, clipped ReLU and clamp via ``relu_lower_clip``/``relu_upper_clip``
    (and leaky ReLU via ``relu_lower_clip_slope``). RELU_BWD: IN_0 = dy, IN_1 = forward input.
    """

    op = "pointwise"
    INPUTS = ("IN_0", "IN_1", "IN_2")
    OUTPUTS = ("OUT_0",)
    OPTIONAL = frozenset({"IN_1", "IN_2"})
    ATTRIBUTES = ("mode", *_FLOAT_ATTRS, "axis")

    def __init__(self, name: str = "", compute_data_type: Any = DataType.NOT_SET, *,
                 mode: PointwiseMode | int | str = PointwiseMode.NOT_SET,
                 relu_lower_clip: float | None = None, relu_upper_clip: float | None = None,
                 relu_lower_clip_slope: float | None = None, swish_beta: float | None = None,
                 elu_alpha: float | None = None, softplus_beta: float | None = None,
                 axis: int | None = None, **ports: Any) -> None:
        super().__init__(name, compute_data_type, **ports)
        self.mode = to_enum(PointwiseMode, mode, "pointwise mode", node=self.name)
        name = self.name  # every float attribute must be finite
        self.relu_lower_clip = check_float(relu_lower_clip, "relu_lower_clip", node=name)
        self.relu_upper_clip = check_float(relu_upper_clip, "relu_upper_clip", node=name)
        self.relu_lower_clip_slope = check_float(relu_lower_clip_slope, "relu_lower_clip_slope",
                                                 node=name)
        self.swish_beta = check_float(swish_beta, "swish_beta", node=name)
        self.elu_alpha = check_float(elu_alpha, "elu_alpha", node=name)
        self.softplus_beta = check_float(softplus_beta, "softplus_beta", node=name)
        self.axis = None if axis is None else to_int(axis, "axis", node=self.name)
        _check_clips(self)

    def _present(self) -> list[tuple[str, Tensor]]:
        return [(p, t) for p, t in self.inputs.items() if t is not None]

    def infer(self) -> None:
        try:
            dims = _broadcast(self, self._present())
        except ValidationError:
            return
        if dims is not None:
            set_output_shape(self, "OUT_0", dims, self.inputs["IN_0"], strict=False)

    def validate(self) -> None:
        if self.mode == PointwiseMode.NOT_SET:
            raise ValidationError("pointwise mode is NOT_SET", node=self.name)
        n = self.mode.arity
        expected = self.INPUTS[:n]
        for port in self.INPUTS:
            if port in expected and self.inputs[port] is None:
                raise ValidationError(f"{self.mode.name} takes {n} input(s) {list(expected)}; "
                                      f"{port} is missing", node=self.name, port=port)
            if port not in expected and self.inputs[port] is not None:
                raise ValidationError(f"{self.mode.name} takes {n} input(s) {list(expected)}; "
                                      f"{port} must not be set", node=self.name, port=port)
        for port in expected:
            check_dims(self, port)
        for key in _FLOAT_ATTRS:  # attributes may have been edited since construction
            check_float(getattr(self, key), key, node=self.name)
        _check_clips(self)
        _check_attrs_apply(self)
        if self.mode == PointwiseMode.RELU_BWD:
            dy, x = self.inputs["IN_0"], self.inputs["IN_1"]
            assert dy is not None and x is not None
            if dy.dim != x.dim:
                raise ValidationError(f"RELU_BWD needs dy (IN_0) and the forward input (IN_1) "
                                      f"of equal dims; got {list(dy.dim or ())} and "
                                      f"{list(x.dim or ())}", node=self.name, port="IN_1",
                                      tensor=x.name)
        dims = _broadcast(self, self._present())
        assert dims is not None
        if self.mode == PointwiseMode.GEN_INDEX and (self.axis is None
                                                     or not 0 <= self.axis < len(dims)):
            raise ValidationError(f"GEN_INDEX needs axis in 0..{len(dims) - 1} (a dim of the "
                                  f"{len(dims)}-d input), got {self.axis}", node=self.name)
        set_output_shape(self, "OUT_0", dims, self.inputs["IN_0"], strict=True)

    def attributes(self) -> dict[str, Any]:
        """Attribute values, JSON-able (mode by name; unset floats as None)."""
        out: dict[str, Any] = {"mode": self.mode.name}
        for key in _FLOAT_ATTRS:
            out[key] = getattr(self, key)
        out["axis"] = self.axis
        return out
