"""hipdnn_frontend's per-op attribute objects: plain values with chainable ``set_*`` and ``get_*``.

``graph.conv_fprop(x, w, ConvFpropAttributes().set_padding([1, 1]))`` reads the attributes and
adds the native node; the tensors the op is called with win over tensors set on the attributes
(as upstream, where the graph op fills them in). Setters check the argument's type and raise
TypeError (a tensor where a tensor belongs, ints for paddings) as upstream's bindings do;
values are checked by ``graph.validate()``.

>>> a = ConvFpropAttributes().set_name("conv").set_padding([1, 1]).set_stride([2, 2])
>>> a.get_pre_padding(), a.get_post_padding(), a.get_stride(), a.get_dilation()
([1, 1], [1, 1], [2, 2], [])
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, ClassVar

from hipdnn.core.types import ConvolutionMode, DataType, PointwiseMode, to_data_type, to_enum
from hipdnn.ir.tensor import Tensor as NativeTensor

__all__ = [
    "BatchnormAttributes",
    "BatchnormBackwardAttributes",
    "BatchnormInferenceAttributes",
    "BatchnormInferenceAttributesVarianceExt",
    "ConvDgradAttributes",
    "ConvFpropAttributes",
    "ConvWgradAttributes",
    "ConvolutionDgradAttributes",
    "ConvolutionFpropAttributes",
    "ConvolutionWgradAttributes",
    "PointwiseAttributes",
]

Convert = Callable[[Any, str], Any]


def _tensor(value: Any, what: str) -> NativeTensor | None:
    if value is not None and not isinstance(value, NativeTensor):
        raise TypeError(f"{what}() takes a hipdnn Tensor, got {type(value).__name__}")
    return value


def _tensors(values: Any, what: str) -> list[NativeTensor]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{what}() takes a list of hipdnn Tensors, got {type(values).__name__}")
    return [t for t in (_tensor(v, what) for v in values) if t is not None]


def _ints(values: Any, what: str) -> list[int]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{what}() takes a list of ints, got {type(values).__name__}")
    out = []
    for v in values:
        if isinstance(v, bool):
            raise TypeError(f"{what}() takes a list of ints, got a bool in {values!r}")
        try:
            out.append(operator.index(v))
        except TypeError:
            raise TypeError(f"{what}() takes a list of ints, got {v!r} "
                            f"({type(v).__name__}) in {values!r}") from None
    return out


def _float(value: Any, what: str) -> float:
    if isinstance(value, (str, bytes, bool)) or not hasattr(value, "__float__"):
        raise TypeError(f"{what}() takes a float, got {type(value).__name__}")
    return float(value)


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{what}() takes an int, got a bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what}() takes an int, got {type(value).__name__}") from None


def _str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what}() takes a str, got {type(value).__name__}")
    return value


def _dtype(value: Any, what: str) -> DataType:
    if not isinstance(value, DataType):
        raise TypeError(f"{what}() takes a DataType, got {type(value).__name__}")
    return to_data_type(value)


def _conv_mode(value: Any, what: str) -> ConvolutionMode:
    if not isinstance(value, ConvolutionMode):
        raise TypeError(f"{what}() takes a ConvolutionMode, got {type(value).__name__}")
    return to_enum(ConvolutionMode, value, what)


def _pw_mode(value: Any, what: str) -> PointwiseMode:
    if not isinstance(value, PointwiseMode):
        raise TypeError(f"{what}() takes a PointwiseMode, got {type(value).__name__}")
    return to_enum(PointwiseMode, value, what)


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value


def _setter(field: str, convert: Convert) -> Callable[..., Any]:
    def set_field(self: Any, value: Any) -> Any:
        self._values[field] = convert(value, f"set_{field}")
        return self

    set_field.__name__ = set_field.__qualname__ = f"set_{field}"
    set_field.__doc__ = f"Set ``{field}``; returns the attributes (chainable)."
    return set_field


def _getter(field: str) -> Callable[[Any], Any]:
    def get_field(self: Any) -> Any:
        return _copy(self._values.get(field, self._DEFAULTS.get(field)))

    get_field.__name__ = get_field.__qualname__ = f"get_{field}"
    get_field.__doc__ = f"``{field}`` (its default when never set)."
    return get_field


class _Attributes:
    """Base: a name, a compute data type and the op's fields in ``_values``."""

    _DEFAULTS: ClassVar[dict[str, Any]] = {"name": "", "compute_data_type": DataType.NOT_SET}

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    set_name = _setter("name", _str)
    get_name = _getter("name")
    set_compute_data_type = _setter("compute_data_type", _dtype)
    get_compute_data_type = _getter("compute_data_type")

    def value(self, field: str) -> Any:
        """The field's value or default (what the graph op reads)."""
        return self._values.get(field, self._DEFAULTS.get(field))

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={getattr(v, 'name', v)!r}" for k, v in self._values.items())
        return f"{type(self).__name__}({shown})"


class _ConvAttributes(_Attributes):
    """Padding, stride, dilation and mode shared by the three convolution directions."""

    _DEFAULTS: ClassVar[dict[str, Any]] = {**_Attributes._DEFAULTS, "pre_padding": [], "post_padding": [], "stride": [],
                 "dilation": [], "convolution_mode": ConvolutionMode.CROSS_CORRELATION}

    set_pre_padding = _setter("pre_padding", _ints)
    get_pre_padding = _getter("pre_padding")
    set_post_padding = _setter("post_padding", _ints)
    get_post_padding = _getter("post_padding")
    set_stride = _setter("stride", _ints)
    get_stride = _getter("stride")
    set_dilation = _setter("dilation", _ints)
    get_dilation = _getter("dilation")
    set_convolution_mode = _setter("convolution_mode", _conv_mode)
    get_convolution_mode = _getter("convolution_mode")

    def set_padding(self, padding: Any) -> Any:
        """Set pre and post padding to ``padding``; returns the attributes."""
        values = _ints(padding, "set_padding")
        self._values["pre_padding"] = list(values)
        self._values["post_padding"] = list(values)
        return self


class ConvFpropAttributes(_ConvAttributes):
    """Forward convolution: X, W -> Y."""

    set_x = _setter("x", _tensor)
    get_x = _getter("x")
    set_w = _setter("w", _tensor)
    get_w = _getter("w")
    set_y = _setter("y", _tensor)
    get_y = _getter("y")


class ConvDgradAttributes(_ConvAttributes):
    """Data gradient: DY, W -> DX."""

    set_dy = _setter("dy", _tensor)
    get_dy = _getter("dy")
    set_w = _setter("w", _tensor)
    get_w = _getter("w")
    set_dx = _setter("dx", _tensor)
    get_dx = _getter("dx")


class ConvWgradAttributes(_ConvAttributes):
    """Weight gradient: DY, X -> DW."""

    set_x = _setter("x", _tensor)
    get_x = _getter("x")
    set_dy = _setter("dy", _tensor)
    get_dy = _getter("dy")
    set_dw = _setter("dw", _tensor)
    get_dw = _getter("dw")


#: Upstream's long names are the same classes.
ConvolutionFpropAttributes = ConvFpropAttributes
ConvolutionDgradAttributes = ConvDgradAttributes
ConvolutionWgradAttributes = ConvWgradAttributes


class PointwiseAttributes(_Attributes):
    """An element-wise op: mode, its scalar parameters, up to three inputs, one output."""

    _DEFAULTS: ClassVar[dict[str, Any]] = {**_Attributes._DEFAULTS, "mode": PointwiseMode.NOT_SET}

    set_mode = _setter("mode", _pw_mode)
    get_mode = _getter("mode")
    set_relu_lower_clip = _setter("relu_lower_clip", _float)
    get_relu_lower_clip = _getter("relu_lower_clip")
    set_relu_upper_clip = _setter("relu_upper_clip", _float)
    get_relu_upper_clip = _getter("relu_upper_clip")
    set_relu_lower_clip_slope = _setter("relu_lower_clip_slope", _float)
    get_relu_lower_clip_slope = _getter("relu_lower_clip_slope")
    set_swish_beta = _setter("swish_beta", _float)
    get_swish_beta = _getter("swish_beta")
    set_elu_alpha = _setter("elu_alpha", _float)
    get_elu_alpha = _getter("elu_alpha")
    set_softplus_beta = _setter("softplus_beta", _float)
    get_softplus_beta = _getter("softplus_beta")
    set_axis = _setter("axis", _int)
    get_axis = _getter("axis")
    set_input_0 = _setter("input_0", _tensor)
    get_input_0 = _getter("input_0")
    set_input_1 = _setter("input_1", _tensor)
    get_input_1 = _getter("input_1")
    set_input_2 = _setter("input_2", _tensor)
    get_input_2 = _getter("input_2")
    set_output_0 = _setter("output_0", _tensor)
    get_output_0 = _getter("output_0")


class BatchnormAttributes(_Attributes):
    """Batchnorm training: X, SCALE, BIAS, EPSILON (+ running statistics and MOMENTUM) ->
    Y, MEAN, INV_VARIANCE (+ next running statistics).

    As in cuDNN: MOMENTUM weighs the batch (``next = (1 - momentum)*prev + momentum*batch``)
    and the running variance takes the unbiased batch variance (``var*M/(M - 1)``, M elements
    per channel); INV_VARIANCE uses the population variance. ONNX differs on both
    (hipdnn.Graph.batchnorm's docstring gives the conversion)."""

    _DEFAULTS: ClassVar[dict[str, Any]] = {**_Attributes._DEFAULTS, "peer_stats": []}

    set_x = _setter("x", _tensor)
    get_x = _getter("x")
    set_scale = _setter("scale", _tensor)
    get_scale = _getter("scale")
    set_bias = _setter("bias", _tensor)
    get_bias = _getter("bias")
    set_epsilon = _setter("epsilon", _tensor)
    get_epsilon = _getter("epsilon")
    set_momentum = _setter("momentum", _tensor)
    get_momentum = _getter("momentum")
    set_peer_stats = _setter("peer_stats", _tensors)
    get_peer_stats = _getter("peer_stats")
    set_prev_running_mean = _setter("prev_running_mean", _tensor)
    get_prev_running_mean = _getter("prev_running_mean")
    set_prev_running_variance = _setter("prev_running_variance", _tensor)
    get_prev_running_variance = _getter("prev_running_variance")
    set_y = _setter("y", _tensor)
    get_y = _getter("y")
    set_mean = _setter("mean", _tensor)
    get_mean = _getter("mean")
    set_inv_variance = _setter("inv_variance", _tensor)
    get_inv_variance = _getter("inv_variance")
    set_next_running_mean = _setter("next_running_mean", _tensor)
    get_next_running_mean = _getter("next_running_mean")
    set_next_running_variance = _setter("next_running_variance", _tensor)
    get_next_running_variance = _getter("next_running_variance")

    def set_previous_running_stats(self, mean: Any, variance: Any, momentum: Any) -> Any:
        """Set the previous running mean and variance and the momentum; returns the
        attributes."""
        self.set_prev_running_mean(mean)
        self.set_prev_running_variance(variance)
        return self.set_momentum(momentum)


class BatchnormBackwardAttributes(_Attributes):
    """Batchnorm backward: DY, X, SCALE (+ saved MEAN, INV_VARIANCE) -> DX, DSCALE, DBIAS."""

    _DEFAULTS: ClassVar[dict[str, Any]] = {**_Attributes._DEFAULTS, "peer_stats": []}

    set_dy = _setter("dy", _tensor)
    get_dy = _getter("dy")
    set_x = _setter("x", _tensor)
    get_x = _getter("x")
    set_scale = _setter("scale", _tensor)
    get_scale = _getter("scale")
    set_mean = _setter("mean", _tensor)
    get_mean = _getter("mean")
    set_inv_variance = _setter("inv_variance", _tensor)
    get_inv_variance = _getter("inv_variance")
    set_dx = _setter("dx", _tensor)
    get_dx = _getter("dx")
    set_dscale = _setter("dscale", _tensor)
    get_dscale = _getter("dscale")
    set_dbias = _setter("dbias", _tensor)
    get_dbias = _getter("dbias")
    set_peer_stats = _setter("peer_stats", _tensors)
    get_peer_stats = _getter("peer_stats")

    def set_saved_mean_and_inv_variance(self, mean: Any, inv_variance: Any) -> Any:
        """Set the saved mean and inverse variance of the forward pass; returns the
        attributes."""
        self.set_mean(mean)
        return self.set_inv_variance(inv_variance)


class BatchnormInferenceAttributes(_Attributes):
    """Batchnorm inference: X, MEAN, INV_VARIANCE, SCALE, BIAS -> Y."""

    set_x = _setter("x", _tensor)
    get_x = _getter("x")
    set_mean = _setter("mean", _tensor)
    get_mean = _getter("mean")
    set_inv_variance = _setter("inv_variance", _tensor)
    get_inv_variance = _getter("inv_variance")
    set_scale = _setter("scale", _tensor)
    get_scale = _getter("scale")
    set_bias = _setter("bias", _tensor)
    get_bias = _getter("bias")
    set_y = _setter("y", _tensor)
    get_y = _getter("y")


class BatchnormInferenceAttributesVarianceExt(_Attributes):
    """Batchnorm inference from the variance: X, MEAN, VARIANCE, SCALE, BIAS, EPSILON -> Y."""

    set_x = _setter("x", _tensor)
    get_x = _getter("x")
    set_mean = _setter("mean", _tensor)
    get_mean = _getter("mean")
    set_variance = _setter("variance", _tensor)
    get_variance = _getter("variance")
    set_scale = _setter("scale", _tensor)
    get_scale = _getter("scale")
    set_bias = _setter("bias", _tensor)
    get_bias = _getter("bias")
    set_epsilon = _setter("epsilon", _tensor)
    get_epsilon = _getter("epsilon")
    set_y = _setter("y", _tensor)
    get_y = _getter("y")
