"""Op builders of :class:`hipdnn.Graph`, with cudnn-frontend's names and keyword arguments.

Every op takes ``name=`` (default ``"<op>_<n>"``) and ``compute_data_type=``, and returns new
virtual tensors named ``"<node>::<PORT>"``; mark graph outputs with ``set_output(True)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from hipdnn.core.errors import ValidationError
from hipdnn.core.types import (
    ConvolutionMode,
    DataType,
    PointwiseMode,
    ReductionMode,
    check_float,
    to_enum,
    to_int,
    to_int_tuple,
)
from hipdnn.graph.core import GraphCore
from hipdnn.ir.nodes import (
    BatchnormBackwardNode,
    BatchnormInferenceNode,
    BatchnormInferenceVarianceNode,
    BatchnormNode,
    ConvDgradNode,
    ConvFpropNode,
    ConvWgradNode,
    GenstatsNode,
    PointwiseNode,
    ReductionNode,
)
from hipdnn.ir.nodes.norm import SCALAR_RANGES
from hipdnn.ir.tensor import Tensor, not_a_tensor_hint

__all__ = ["GraphOps"]

Ints = int | Sequence[int] | None


def _spatial_arg(value: Ints, ref: Tensor, what: str, node: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    if not isinstance(value, Iterable):  # one value for every spatial dimension
        n = len(ref.dim) - 2 if ref.dim is not None and len(ref.dim) > 2 else 2
        return (to_int(value, what, node=node),) * n
    return to_int_tuple(value, what, node=node)



def _required_slope(value: Any, op: str, name: str) -> None:
    if value is None:
        raise ValidationError(f"{op}: negative_slope is required; valid: a finite float (e.g. "
                              f"0.01); use relu() for a plain ReLU", node=name or None)


class GraphOps(GraphCore):
    """The op builders (conv, batchnorm, pointwise) of :class:`hipdnn.Graph`, on the graph's
    tensors and nodes (:class:`~hipdnn.graph.core.GraphCore`)."""

    # -- helpers -------------------------------------------------------------------------------
    def _scalar(self, value: Any, node: str, port: str) -> Tensor | None:
        """A float becomes a pass-by-value FLOAT scalar tensor with the value baked in."""
        low, high, low_open = SCALAR_RANGES.get(port, (None, None, False))
        what = port.lower()
        if value is None:
            return None
        if isinstance(value, Tensor):
            if value.value is not None:  # a baked value is checked now, like a float
                check_float(value.value, what, node=node, low=low, high=high,
                            low_open=low_open, tensor=value.name)
            return value
        if isinstance(value, (str, bytes, bool)) or not hasattr(value, "__float__"):
            raise ValidationError(f"expected a float or a pass-by-value scalar Tensor, "
                                  f"got {value!r}", node=node, port=port)
        number = check_float(value, what, node=node, low=low, high=high, low_open=low_open)
        return self.tensor(dim=(1, 1, 1, 1), stride=(1, 1, 1, 1), data_type=DataType.FLOAT,
                           is_pass_by_value=True, name=f"{node}::{port}", value=number)

    def _conv(self, cls: type[Any], op: str, ins: dict[str, Tensor], out_port: str, ref: Tensor,
              padding: Ints, stride: Ints, dilation: Ints, pre_padding: Ints, post_padding: Ints,
              convolution_mode: Any, compute_data_type: Any, name: str) -> Tensor:
        name = self._node_name(name, op)
        if padding is not None and (pre_padding is not None or post_padding is not None):
            raise ValidationError("give either padding or pre_padding/post_padding, not both",
                                  node=name)
        for port, t in ins.items():  # first: one int for padding/stride reads ref's rank
            if not isinstance(t, Tensor):
                raise ValidationError(not_a_tensor_hint(t), node=name, port=port)
        pre = _spatial_arg(padding if padding is not None else pre_padding, ref, "padding", name)
        post = _spatial_arg(padding if padding is not None else post_padding, ref, "padding",
                            name)
        out = self._output(name, out_port)
        node = cls(name, compute_data_type, pre_padding=pre, post_padding=post,
                   stride=_spatial_arg(stride, ref, "stride", name),
                   dilation=_spatial_arg(dilation, ref, "dilation", name),
                   convolution_mode=convolution_mode, **ins, **{out_port: out})
        self._add_node(node)
        return out

    # -- convolution -----------------------------------------------------------------------------
    def conv_fprop(self, image: Tensor, weight: Tensor, padding: Ints = None, stride: Ints = None,
                   dilation: Ints = None, *, pre_padding: Ints = None, post_padding: Ints = None,
                   convolution_mode: Any = ConvolutionMode.CROSS_CORRELATION,
                   compute_data_type: Any = DataType.NOT_SET, name: str = "") -> Tensor:
        """Forward convolution; returns Y (N, K, out spatial...). Groups = C / weight's C.

        Parameters
        ----------
        image : Tensor
            The data tensor X, (N, C, spatial...).
        weight : Tensor
            The filter W, (K, C / groups, filter spatial...).
        padding : int or sequence of int, optional
            Symmetric zero padding per spatial axis (one int: every axis); excludes
            ``pre_padding``/``post_padding``.
        stride : int or sequence of int, optional
            Stride per spatial axis (default 1).
        dilation : int or sequence of int, optional
            Dilation per spatial axis (default 1).
        pre_padding : int or sequence of int, optional
            Padding before each spatial axis.
        post_padding : int or sequence of int, optional
            Padding after each spatial axis.
        convolution_mode : ConvolutionMode, optional
            CROSS_CORRELATION (the default; what deep-learning frameworks call convolution) or
            CONVOLUTION.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self._conv(ConvFpropNode, "conv_fprop", {"X": image, "W": weight}, "Y", image,
                          padding, stride, dilation, pre_padding, post_padding, convolution_mode,
                          compute_data_type, name)

    def conv_dgrad(self, loss: Tensor, filter: Tensor, padding: Ints = None, stride: Ints = None,
                   dilation: Ints = None, *, pre_padding: Ints = None, post_padding: Ints = None,
                   convolution_mode: Any = ConvolutionMode.CROSS_CORRELATION,
                   compute_data_type: Any = DataType.NOT_SET, name: str = "") -> Tensor:
        """Data gradient; returns DX. With a stride > 1 set DX's dims (``DX.set_dim``).

        Parameters
        ----------
        loss : Tensor
            The gradient of the loss with respect to the op's output (DY).
        filter : Tensor
            The filter W, (K, C / groups, filter spatial...).
        padding : int or sequence of int, optional
            Symmetric zero padding per spatial axis (one int: every axis); excludes
            ``pre_padding``/``post_padding``.
        stride : int or sequence of int, optional
            Stride per spatial axis (default 1).
        dilation : int or sequence of int, optional
            Dilation per spatial axis (default 1).
        pre_padding : int or sequence of int, optional
            Padding before each spatial axis.
        post_padding : int or sequence of int, optional
            Padding after each spatial axis.
        convolution_mode : ConvolutionMode, optional
            CROSS_CORRELATION (the default; what deep-learning frameworks call convolution) or
            CONVOLUTION.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self._conv(ConvDgradNode, "conv_dgrad", {"DY": loss, "W": filter}, "DX", loss,
                          padding, stride, dilation, pre_padding, post_padding, convolution_mode,
                          compute_data_type, name)

    def conv_wgrad(self, image: Tensor, loss: Tensor, padding: Ints = None, stride: Ints = None,
                   dilation: Ints = None, *, pre_padding: Ints = None, post_padding: Ints = None,
                   convolution_mode: Any = ConvolutionMode.CROSS_CORRELATION,
                   compute_data_type: Any = DataType.NOT_SET, name: str = "") -> Tensor:
        """Weight gradient; returns DW. Set DW's dims unless all strides are 1 and groups = 1.

        Parameters
        ----------
        image : Tensor
            The data tensor X, (N, C, spatial...).
        loss : Tensor
            The gradient of the loss with respect to the op's output (DY).
        padding : int or sequence of int, optional
            Symmetric zero padding per spatial axis (one int: every axis); excludes
            ``pre_padding``/``post_padding``.
        stride : int or sequence of int, optional
            Stride per spatial axis (default 1).
        dilation : int or sequence of int, optional
            Dilation per spatial axis (default 1).
        pre_padding : int or sequence of int, optional
            Padding before each spatial axis.
        post_padding : int or sequence of int, optional
            Padding after each spatial axis.
        convolution_mode : ConvolutionMode, optional
            CROSS_CORRELATION (the default; what deep-learning frameworks call convolution) or
            CONVOLUTION.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self._conv(ConvWgradNode, "conv_wgrad", {"X": image, "DY": loss}, "DW", image,
                          padding, stride, dilation, pre_padding, post_padding, convolution_mode,
                          compute_data_type, name)

    # -- batchnorm -------------------------------------------------------------------------------
    def batchnorm(self, input: Tensor, scale: Tensor, bias: Tensor,
                  epsilon: Tensor | float | None = None, *,
                  momentum: Tensor | float | None = None, in_running_mean: Tensor | None = None,
                  in_running_var: Tensor | None = None, peer_stats: Sequence[Tensor] | None = None,
                  compute_data_type: Any = DataType.NOT_SET,
                  name: str = "") -> list[Tensor | None]:
        """Batchnorm training. Returns [Y, mean, inv_variance, next_running_mean,
        next_running_var]; the running outputs are None unless both running inputs and
        ``momentum`` are given. ``epsilon``/``momentum``: float or pass-by-value scalar tensor.

        Statistics are per channel over N and the spatial axes (M elements each):
        ``inv_variance = 1/sqrt(var + epsilon)`` with the population (biased) batch variance.
        The running statistics follow cuDNN (and PyTorch): ``momentum`` is the weight of the
        batch, ``next = (1 - momentum)*prev + momentum*batch``, and the running variance takes
        the unbiased batch variance ``var*M/(M - 1)``. ONNX's BatchNormalization is the other
        way round on both: its momentum weighs the previous value (use ``1 - onnx_momentum``)
        and its running variance takes the population variance (ONNX's is
        ``next_running_var - momentum*var/(M - 1)``, var from ``inv_variance``; see
        docs/OPERATIONS.md, "Batchnorm statistics").

        Arguments after ``epsilon`` are keyword-only: cudnn-frontend's positional order puts the
        running statistics before epsilon, so positional calls would silently mix them up.

        Parameters
        ----------
        input : Tensor
            The data tensor X, (N, C, spatial...).
        scale : Tensor
            The per-channel scale (gamma).
        bias : Tensor
            The per-channel bias (beta).
        epsilon : Tensor or float, optional
            Added to the variance; a float becomes a pass-by-value scalar tensor.
        momentum : Tensor or float, optional
            Running-statistics factor: next = (1 - momentum) * prev + momentum * batch.
        in_running_mean : Tensor, optional
            The previous running mean (with ``in_running_var`` and ``momentum``: the next running
            statistics are outputs).
        in_running_var : Tensor, optional
            The previous running variance.
        peer_stats : sequence of Tensor, optional
            cuDNN's multi-GPU statistics exchange; accepted and recorded, no engine here runs it.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        list of Tensor or None
            [Y, MEAN, INV_VARIANCE, NEXT_RUNNING_MEAN, NEXT_RUNNING_VARIANCE]; the running
            statistics are None without ``in_running_mean``.

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        name = self._node_name(name, "batchnorm")
        if epsilon is None:
            raise ValidationError("epsilon is required (a float > 0 or a pass-by-value scalar "
                                  "tensor)", node=name)
        if peer_stats:
            raise ValidationError("peer_stats (multi-device statistics) is not supported",
                                  node=name)
        running = in_running_mean is not None or in_running_var is not None
        if running and (in_running_mean is None or in_running_var is None or momentum is None):
            raise ValidationError("running statistics need in_running_mean, in_running_var and "
                                  "momentum together", node=name)
        outs: dict[str, Tensor | None] = {
            p: self._output(name, p) for p in ("Y", "MEAN", "INV_VARIANCE")}
        if running:
            outs["NEXT_RUNNING_MEAN"] = self._output(name, "NEXT_RUNNING_MEAN")
            outs["NEXT_RUNNING_VARIANCE"] = self._output(name, "NEXT_RUNNING_VARIANCE")
        node = BatchnormNode(
            name, compute_data_type, X=input, SCALE=scale, BIAS=bias,
            EPSILON=self._scalar(epsilon, name, "EPSILON"),
            MOMENTUM=self._scalar(momentum, name, "MOMENTUM") if running else None,
            PREV_RUNNING_MEAN=in_running_mean, PREV_RUNNING_VARIANCE=in_running_var, **outs)
        self._add_node(node)
        return [outs.get(p) for p in BatchnormNode.OUTPUTS]

    def batchnorm_inference(self, input: Tensor, mean: Tensor, inv_variance: Tensor | None = None,
                            scale: Tensor | None = None, bias: Tensor | None = None, *,
                            variance: Tensor | None = None,
                            epsilon: Tensor | float | None = None,
                            compute_data_type: Any = DataType.NOT_SET, name: str = "") -> Tensor:
        """Batchnorm inference with ``inv_variance`` (= 1/sqrt(var+eps)); or, given
        ``variance=`` and ``epsilon=``, the variance form (batchnorm_inference_variance_ext).

        Parameters
        ----------
        input : Tensor
            The data tensor X, (N, C, spatial...).
        mean : Tensor
            The saved or running mean.
        inv_variance : Tensor, optional
            The inverse standard deviation (give it or ``variance`` and ``epsilon``).
        scale : Tensor, optional
            The per-channel scale (gamma).
        bias : Tensor, optional
            The per-channel bias (beta).
        variance : Tensor, optional
            The running variance (with ``epsilon``).
        epsilon : Tensor or float, optional
            Added to ``variance``.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        if variance is not None or epsilon is not None:
            if inv_variance is not None:
                raise ValidationError("give inv_variance, or variance and epsilon, not both",
                                      node=name or None)
            if variance is None or epsilon is None:
                raise ValidationError("the variance form needs both variance= and epsilon=",
                                      node=name or None)
            return self.batchnorm_inference_variance_ext(
                input, mean, variance, scale, bias, epsilon,  # type: ignore[arg-type]
                compute_data_type=compute_data_type, name=name)
        name = self._node_name(name, "batchnorm_inference")
        y = self._output(name, "Y")
        self._add_node(BatchnormInferenceNode(name, compute_data_type, X=input, MEAN=mean,
                                              INV_VARIANCE=inv_variance, SCALE=scale, BIAS=bias,
                                              Y=y))
        return y

    def batchnorm_inference_variance_ext(self, input: Tensor, mean: Tensor, variance: Tensor,
                                         scale: Tensor, bias: Tensor,
                                         epsilon: Tensor | float, *,
                                         compute_data_type: Any = DataType.NOT_SET,
                                         name: str = "") -> Tensor:
        """Batchnorm inference from the running variance and epsilon (the seed's BN inference).

        Parameters
        ----------
        input : Tensor
            The data tensor X, (N, C, spatial...).
        mean : Tensor
            The saved or running mean.
        variance : Tensor
            The running variance.
        scale : Tensor
            The per-channel scale (gamma).
        bias : Tensor
            The per-channel bias (beta).
        epsilon : Tensor or float
            Added to the variance; a float becomes a pass-by-value scalar tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        name = self._node_name(name, "batchnorm_inference")
        y = self._output(name, "Y")
        self._add_node(BatchnormInferenceVarianceNode(
            name, compute_data_type, X=input, MEAN=mean, VARIANCE=variance, SCALE=scale,
            BIAS=bias, EPSILON=self._scalar(epsilon, name, "EPSILON"), Y=y))
        return y

    def batchnorm_backward(self, grad: Tensor, input: Tensor, scale: Tensor,
                           mean: Tensor | None = None, inv_variance: Tensor | None = None,
                           peer_stats: Sequence[Tensor] | None = None, *,
                           compute_data_type: Any = DataType.NOT_SET,
                           name: str = "") -> list[Tensor]:
        """Batchnorm backward; returns [DX, DScale, DBias].

        Parameters
        ----------
        grad : Tensor
            The gradient of the loss with respect to the forward output (DY).
        input : Tensor
            The forward input X.
        scale : Tensor
            The per-channel scale (gamma).
        mean : Tensor, optional
            The saved mean (with ``inv_variance``; else it is recomputed from X).
        inv_variance : Tensor, optional
            The saved inverse standard deviation.
        peer_stats : sequence of Tensor, optional
            cuDNN's multi-GPU statistics exchange; accepted and recorded, no engine here runs it.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        list of Tensor
            [DX, DSCALE, DBIAS].

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        name = self._node_name(name, "batchnorm_backward")
        if peer_stats:
            raise ValidationError("peer_stats (multi-device statistics) is not supported",
                                  node=name)
        outs = {p: self._output(name, p) for p in BatchnormBackwardNode.OUTPUTS}
        self._add_node(BatchnormBackwardNode(name, compute_data_type, DY=grad, X=input,
                                             SCALE=scale, MEAN=mean, INV_VARIANCE=inv_variance,
                                             **outs))
        return [outs["DX"], outs["DSCALE"], outs["DBIAS"]]

    # -- statistics ------------------------------------------------------------------------------
    def genstats(self, input: Tensor, *, compute_data_type: Any = DataType.NOT_SET,
                 name: str = "") -> list[Tensor]:
        """Per-channel SUM and SQ_SUM of ``input`` (N, C, ...), each (1, C, 1, ...);
        cudnn-frontend's ``genstats``. CPU_REFERENCE_ENGINE only (no MIOpen seed row).

        Parameters
        ----------
        input : Tensor
            The data tensor, (N, C, ...).
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        list of Tensor
            [SUM, SQ_SUM], each (1, C, 1, ...).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        name = self._node_name(name, "genstats")
        outs = {p: self._output(name, p) for p in GenstatsNode.OUTPUTS}
        self._add_node(GenstatsNode(name, compute_data_type, X=input, **outs))
        return [outs["SUM"], outs["SQ_SUM"]]

    def reduction(self, input: Tensor, mode: ReductionMode | int | str, *,
                  compute_data_type: Any = DataType.NOT_SET, name: str = "") -> Tensor:
        """Reduce ``input`` with ``mode`` (:class:`~hipdnn.core.types.ReductionMode`) over the axes
        where the output's dim is 1: the output starts with ``input``'s dims, so shrink them
        with ``Y.set_dim([...])``. CPU_REFERENCE_ENGINE only (no MIOpen seed row).

        Parameters
        ----------
        input : Tensor
            The tensor reduced over the axes where the output's dim is 1.
        mode : ReductionMode, int or str
            The reduction (ADD, MUL, MIN, MAX, AMAX, AVG, NORM1, NORM2, MUL_NO_ZEROS).
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        rmode = to_enum(ReductionMode, mode, "reduction mode", node=name or None)
        name = self._node_name(name, "reduction")
        y = self._output(name, "Y")
        self._add_node(ReductionNode(name, compute_data_type, mode=rmode, X=input, Y=y))
        return y

    # -- pointwise -------------------------------------------------------------------------------
    def pointwise(self, mode: PointwiseMode | int | str, in0: Tensor, in1: Tensor | None = None,
                  in2: Tensor | None = None, *, relu_lower_clip: float | None = None,
                  relu_upper_clip: float | None = None,
                  relu_lower_clip_slope: float | None = None, swish_beta: float | None = None,
                  elu_alpha: float | None = None, softplus_beta: float | None = None,
                  axis: int | None = None, compute_data_type: Any = DataType.NOT_SET,
                  name: str = "") -> Tensor:
        """Generic element-wise op over 1-3 inputs (size-1 dims broadcast).

        Parameters
        ----------
        mode : PointwiseMode, int or str
            The element-wise function.
        in0 : Tensor
            The first input (IN_0).
        in1 : Tensor, optional
            The second input (IN_1), for binary and ternary modes.
        in2 : Tensor, optional
            The third input (IN_2), for ternary modes (BINARY_SELECT).
        relu_lower_clip : float, optional
            RELU_FWD/RELU_BWD: the lower clip.
        relu_upper_clip : float, optional
            RELU_FWD/RELU_BWD: the upper clip.
        relu_lower_clip_slope : float, optional
            RELU_FWD/RELU_BWD: the slope below the lower clip (leaky ReLU).
        swish_beta : float, optional
            The beta of x * sigmoid(beta * x) (default 1).
        elu_alpha : float, optional
            ELU_FWD/ELU_BWD: alpha (default 1).
        softplus_beta : float, optional
            SOFTPLUS_FWD/SOFTPLUS_BWD: beta (default 1).
        axis : int, optional
            GEN_INDEX: the axis whose index is generated.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        pmode = to_enum(PointwiseMode, mode, "pointwise mode", node=name or None)
        name = self._node_name(name, pmode.name.lower())
        out = self._output(name, "OUT_0")
        self._add_node(PointwiseNode(
            name, compute_data_type, mode=pmode, relu_lower_clip=relu_lower_clip,
            relu_upper_clip=relu_upper_clip, relu_lower_clip_slope=relu_lower_clip_slope,
            swish_beta=swish_beta, elu_alpha=elu_alpha, softplus_beta=softplus_beta, axis=axis,
            IN_0=in0, IN_1=in1, IN_2=in2, OUT_0=out))
        return out

    def relu(self, input: Tensor, negative_slope: float | None = None,
             lower_clip: float | None = None, upper_clip: float | None = None, *,
             compute_data_type: Any = DataType.NOT_SET, name: str = "") -> Tensor:
        """ReLU (RELU_FWD); ``upper_clip`` gives clipped ReLU, both clips give clamp.

        Parameters
        ----------
        input : Tensor
            The input tensor.
        negative_slope : float, optional
            Slope for negative inputs (leaky ReLU).
        lower_clip : float, optional
            Outputs below it are clipped to it (0 for a plain ReLU).
        upper_clip : float, optional
            Outputs above it are clipped to it.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        check_float(negative_slope, "negative_slope", node=name or None)
        return self.pointwise(PointwiseMode.RELU_FWD, input, relu_lower_clip=lower_clip,
                              relu_upper_clip=upper_clip, relu_lower_clip_slope=negative_slope,
                              compute_data_type=compute_data_type, name=name or "")

    def relu_backward(self, loss: Tensor, input: Tensor, negative_slope: float | None = None,
                      lower_clip: float | None = None, upper_clip: float | None = None, *,
                      compute_data_type: Any = DataType.NOT_SET, name: str = "") -> Tensor:
        """dReLU (RELU_BWD): IN_0 = ``loss`` (dy), IN_1 = the forward ``input``.

        Parameters
        ----------
        loss : Tensor
            The gradient of the loss with respect to the op's output (DY).
        input : Tensor
            The forward input X.
        negative_slope : float, optional
            Slope for negative inputs (leaky ReLU).
        lower_clip : float, optional
            Outputs below it are clipped to it (0 for a plain ReLU).
        upper_clip : float, optional
            Outputs above it are clipped to it.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        check_float(negative_slope, "negative_slope", node=name or None)
        return self.pointwise(PointwiseMode.RELU_BWD, loss, input, relu_lower_clip=lower_clip,
                              relu_upper_clip=upper_clip, relu_lower_clip_slope=negative_slope,
                              compute_data_type=compute_data_type, name=name)

    def add(self, a: Tensor, b: Tensor, *, compute_data_type: Any = DataType.NOT_SET,
            name: str = "") -> Tensor:
        """a + b (ADD).

        Parameters
        ----------
        a : Tensor
            The first operand (IN_0).
        b : Tensor
            The second operand (IN_1); broadcast where its dims are 1.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(PointwiseMode.ADD, a, b, compute_data_type=compute_data_type,
                              name=name)

    def bias(self, input: Tensor, bias: Tensor, *, compute_data_type: Any = DataType.NOT_SET,
             name: str = "") -> Tensor:
        """input + bias (ADD; a 1xCx1x1 bias broadcasts over N and spatial dims).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        bias : Tensor
            The per-channel bias (beta).
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(PointwiseMode.ADD, input, bias,
                              compute_data_type=compute_data_type, name=name)

    def sub(self, a: Tensor, b: Tensor, *, compute_data_type: Any = DataType.NOT_SET,
            name: str = "") -> Tensor:
        """a - b (SUB).

        Parameters
        ----------
        a : Tensor
            The first operand (IN_0).
        b : Tensor
            The second operand (IN_1); broadcast where its dims are 1.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(PointwiseMode.SUB, a, b, compute_data_type=compute_data_type,
                              name=name)

    def mul(self, a: Tensor, b: Tensor, *, compute_data_type: Any = DataType.NOT_SET,
            name: str = "") -> Tensor:
        """a * b (MUL).

        Parameters
        ----------
        a : Tensor
            The first operand (IN_0).
        b : Tensor
            The second operand (IN_1); broadcast where its dims are 1.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(PointwiseMode.MUL, a, b, compute_data_type=compute_data_type,
                              name=name)

    def scale(self, input: Tensor, scale: Tensor, *, compute_data_type: Any = DataType.NOT_SET,
              name: str = "") -> Tensor:
        """input * scale (MUL).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        scale : Tensor
            The per-channel scale (gamma).
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(PointwiseMode.MUL, input, scale,
                              compute_data_type=compute_data_type, name=name)

    def leaky_relu(self, input: Tensor, negative_slope: float, *,
                   compute_data_type: Any = DataType.NOT_SET, name: str = "") -> Tensor:
        """Leaky ReLU (cudnn-frontend's ``leaky_relu``): RELU_FWD with ``negative_slope``
        (required: a finite float).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        negative_slope : float
            Slope for negative inputs (leaky ReLU).
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        _required_slope(negative_slope, "leaky_relu", name)
        return self.relu(input, negative_slope, compute_data_type=compute_data_type, name=name)

    def leaky_relu_backward(self, loss: Tensor, input: Tensor, negative_slope: float, *,
                            compute_data_type: Any = DataType.NOT_SET, name: str = "") -> Tensor:
        """Leaky dReLU (cudnn-frontend's ``leaky_relu_backward``): RELU_BWD with the slope
        (required: a finite float).

        Parameters
        ----------
        loss : Tensor
            The gradient of the loss with respect to the op's output (DY).
        input : Tensor
            The input tensor.
        negative_slope : float
            Slope for negative inputs (leaky ReLU).
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        _required_slope(negative_slope, "leaky_relu_backward", name)
        return self.relu_backward(loss, input, negative_slope,
                                  compute_data_type=compute_data_type, name=name)

    def identity(self, input: Tensor, *, compute_data_type: Any = DataType.NOT_SET,
                 name: str = "") -> Tensor:
        """A copy of ``input`` (IDENTITY), converted to the output's data type.

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(PointwiseMode.IDENTITY, input,
                              compute_data_type=compute_data_type, name=name)

    def _binary(self, mode: PointwiseMode, a: Tensor, b: Tensor, compute_data_type: Any,
                name: str) -> Tensor:
        return self.pointwise(mode, a, b, compute_data_type=compute_data_type, name=name)

    def cmp_gt(self, input: Tensor, comparison: Tensor, *,
               compute_data_type: Any = DataType.NOT_SET, name: str = "") -> Tensor:
        """1 where ``input > comparison`` else 0 (CMP_GT; CPU_REFERENCE_ENGINE only).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        comparison : Tensor
            The tensor ``input`` is compared with (IN_1).
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self._binary(PointwiseMode.CMP_GT, input, comparison, compute_data_type, name)

    def cmp_ge(self, input: Tensor, comparison: Tensor, *,
               compute_data_type: Any = DataType.NOT_SET, name: str = "") -> Tensor:
        """1 where ``input >= comparison`` else 0 (CMP_GE).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        comparison : Tensor
            The tensor ``input`` is compared with (IN_1).
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self._binary(PointwiseMode.CMP_GE, input, comparison, compute_data_type, name)

    def cmp_lt(self, input: Tensor, comparison: Tensor, *,
               compute_data_type: Any = DataType.NOT_SET, name: str = "") -> Tensor:
        """1 where ``input < comparison`` else 0 (CMP_LT).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        comparison : Tensor
            The tensor ``input`` is compared with (IN_1).
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self._binary(PointwiseMode.CMP_LT, input, comparison, compute_data_type, name)

    def cmp_le(self, input: Tensor, comparison: Tensor, *,
               compute_data_type: Any = DataType.NOT_SET, name: str = "") -> Tensor:
        """1 where ``input <= comparison`` else 0 (CMP_LE).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        comparison : Tensor
            The tensor ``input`` is compared with (IN_1).
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self._binary(PointwiseMode.CMP_LE, input, comparison, compute_data_type, name)

    def cmp_eq(self, input: Tensor, comparison: Tensor, *,
               compute_data_type: Any = DataType.NOT_SET, name: str = "") -> Tensor:
        """1 where ``input == comparison`` else 0 (CMP_EQ).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        comparison : Tensor
            The tensor ``input`` is compared with (IN_1).
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self._binary(PointwiseMode.CMP_EQ, input, comparison, compute_data_type, name)

    def cmp_neq(self, input: Tensor, comparison: Tensor, *,
                compute_data_type: Any = DataType.NOT_SET, name: str = "") -> Tensor:
        """1 where ``input != comparison`` else 0 (CMP_NEQ).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        comparison : Tensor
            The tensor ``input`` is compared with (IN_1).
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self._binary(PointwiseMode.CMP_NEQ, input, comparison, compute_data_type, name)

    def logical_and(self, a: Tensor, b: Tensor, *, compute_data_type: Any = DataType.NOT_SET,
                    name: str = "") -> Tensor:
        """1 where both inputs are non-zero else 0 (LOGICAL_AND).

        Parameters
        ----------
        a : Tensor
            The first operand (IN_0).
        b : Tensor
            The second operand (IN_1); broadcast where its dims are 1.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self._binary(PointwiseMode.LOGICAL_AND, a, b, compute_data_type, name)

    def logical_or(self, a: Tensor, b: Tensor, *, compute_data_type: Any = DataType.NOT_SET,
                   name: str = "") -> Tensor:
        """1 where either input is non-zero else 0 (LOGICAL_OR).

        Parameters
        ----------
        a : Tensor
            The first operand (IN_0).
        b : Tensor
            The second operand (IN_1); broadcast where its dims are 1.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self._binary(PointwiseMode.LOGICAL_OR, a, b, compute_data_type, name)

    def logical_not(self, input: Tensor, *, compute_data_type: Any = DataType.NOT_SET,
                    name: str = "") -> Tensor:
        """1 where ``input`` is zero else 0 (LOGICAL_NOT).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(PointwiseMode.LOGICAL_NOT, input,
                              compute_data_type=compute_data_type, name=name)
