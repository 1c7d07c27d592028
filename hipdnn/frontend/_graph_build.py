"""Graph construction, the base of the frontend :class:`~hipdnn.frontend.Graph`: the state of
the whole graph (declared in :meth:`GraphBuild.__init__`), settings, tensors, ops with attribute
objects, validation, ``build_operation_graph`` and serialization, all on one native graph.
:class:`~hipdnn.frontend._graph_run.GraphRun` (plans, execution) and
:class:`~hipdnn.frontend._autotune.GraphAutotune` (engine discovery, autotune) build on it, in that
order, each seeing what it uses by inheritance.

Upstream ops never raise for a bad graph: the op is recorded and ``validate()`` returns the bad
Error. Native ops check some things as they are added; when one refuses, the refusal is kept
and returned by ``validate()`` (and by every later pipeline step), and the op returns a
placeholder tensor so the script runs on to its check.
"""

from __future__ import annotations

import copy
import json
import zlib
from collections.abc import Callable
from typing import Any

from hipdnn.backend.engine import ExecutionPlan
from hipdnn.core.errors import HipdnnError
from hipdnn.core.types import DataType
from hipdnn.frontend._attributes import (
    BatchnormAttributes,
    BatchnormBackwardAttributes,
    BatchnormInferenceAttributes,
    BatchnormInferenceAttributesVarianceExt,
    ConvDgradAttributes,
    ConvFpropAttributes,
    ConvWgradAttributes,
    PointwiseAttributes,
)
from hipdnn.frontend._errors import Error, ErrorCode, attempt, error_from
from hipdnn.frontend._handle import native_handle
from hipdnn.frontend._memory import tensor_metadata
from hipdnn.frontend._tensor import Tensor, as_frontend_tensor
from hipdnn.graph.graph import Graph as NativeGraph
from hipdnn.ir.tensor import Tensor as NativeTensor

__all__ = ["NODE_TYPE_NAMES", "GraphBuild"]

#: Native node type -> the type tag upstream's JSON writes (its FlatBuffer union names).
NODE_TYPE_NAMES = {
    "conv_fprop": "ConvolutionFwdAttributes",
    "conv_dgrad": "ConvolutionBwdAttributes",
    "conv_wgrad": "ConvolutionWrwAttributes",
    "batchnorm": "BatchnormAttributes",
    "batchnorm_backward": "BatchnormBackwardAttributes",
    "batchnorm_inference": "BatchnormInferenceAttributes",
    "batchnorm_inference_variance_ext": "BatchnormInferenceAttributesVarianceExt",
    "pointwise": "PointwiseAttributes",
}
_NATIVE_TYPES = {v: k for k, v in NODE_TYPE_NAMES.items()}
#: Prefix of :meth:`GraphBuild.to_binary` output (zlib-compressed JSON follows).
BINARY_MAGIC = b"HIPDNN-PY-GRAPH\x01"


def _attrs(value: Any, cls: type, op: str) -> Any:
    if not isinstance(value, cls):
        raise TypeError(f"{op}(): the last argument must be {cls.__name__}, got "
                        f"{type(value).__name__}")
    return value


def _ints_or_none(values: list[int]) -> list[int] | None:
    return list(values) if values else None


class GraphBuild:
    """Settings, tensors, ops, validation and serialization; the graph's state.

    The state every part of the frontend Graph reads lives here: the native graph, the op
    refusals kept for ``validate()``, and the pipeline's progress (operation graph built, plans
    created, the plans in upstream's index order, the preferred engine, deselected engines, the
    workspace cap, the plan specs of ``add_engine*``).
    """

    def __init__(self) -> None:
        self._native = NativeGraph(name="")
        self._deferred: list[Error] = []
        self._op_graph = False
        self._plans_created = False
        self._order: list[ExecutionPlan] = []
        self._preferred: int | None = None
        self._deselected: list[str | int] = []
        self._workspace_cap: int | None = None
        self._over_cap = 0
        self._specs: list[tuple[int, dict[str, Any]]] = []

    # -- copies and pickles: the native graph's rule (structure and settings, never plans) --
    def __getstate__(self) -> dict[str, Any]:
        """``copy.deepcopy`` / ``pickle``: the native graph copied as it copies itself (unbuilt,
        see :meth:`hipdnn.Graph.__deepcopy__`), the settings and op refusals kept, the pipeline
        back before ``build_operation_graph``."""
        state = dict(self.__dict__)
        state.update(_op_graph=False, _plans_created=False, _order=[], _over_cap=0)
        return state

    def __copy__(self) -> Any:
        """``copy.copy`` gives the same as ``copy.deepcopy`` (as for the native graph)."""
        return copy.deepcopy(self)

    def _reset(self) -> None:
        """The graph changed: a new operation graph and new plans are needed."""
        self._op_graph = self._plans_created = False
        self._order = []

    # -- the native graph ------------------------------------------------------------------
    @property
    def native(self) -> NativeGraph:
        """The :class:`hipdnn.Graph` this graph is: its tensors, nodes and plans."""
        return self._native

    def _adopt(self, t: Any, op: str) -> NativeTensor:
        if not isinstance(t, NativeTensor):
            raise TypeError(f"{op}(): expected a hipdnn Tensor, got {type(t).__name__}")
        if t._graph is None:  # created by Tensor.create(): it joins the first graph using it
            t._graph = self._native
            self._native.all_tensors.append(t)
        return t

    def _optional(self, t: Any, op: str) -> NativeTensor | None:
        return None if t is None else self._adopt(t, op)

    def _op(self, op: str, outputs: int, call: Callable[[], Any]) -> Any:
        """Run a native op; keep its refusal for validate() and return placeholders instead."""
        try:
            result = call()
        except HipdnnError as exc:
            self._deferred.append(error_from(exc))
            placeholders = [Tensor(name=f"{op}::OUT_{i}", is_virtual=True) for i in range(outputs)]
            result = placeholders[0] if outputs == 1 else placeholders
        self._reset()
        if isinstance(result, NativeTensor):
            return as_frontend_tensor(result)
        return tuple(None if t is None else as_frontend_tensor(t) for t in result)

    # -- graph settings (chainable) --------------------------------------------------------
    def set_name(self, name: str) -> Any:
        """Set the graph's name.

        Parameters
        ----------
        name : str
            The new name.

        Returns
        -------
        Graph
            This graph (calls chain).
        """
        self._native.set_name(name)
        return self

    def get_name(self) -> str:
        """The graph's name.

        Returns
        -------
        str
            The graph's name.
        """
        return self._native.name

    def set_io_data_type(self, data_type: DataType) -> Any:
        """Default data type of non-virtual tensors.

        Parameters
        ----------
        data_type : DataType
            The default element type of non-virtual tensors.

        Returns
        -------
        Graph
            This graph (calls chain).
        """
        self._native.set_io_data_type(data_type)
        return self

    def get_io_data_type(self) -> DataType:
        """The io data type.

        Returns
        -------
        DataType
            The io data type.
        """
        return self._native.io_data_type

    def set_intermediate_data_type(self, data_type: DataType) -> Any:
        """Default data type of virtual tensors.

        Parameters
        ----------
        data_type : DataType
            The default element type of virtual tensors.

        Returns
        -------
        Graph
            This graph (calls chain).
        """
        self._native.set_intermediate_data_type(data_type)
        return self

    def get_intermediate_data_type(self) -> DataType:
        """The intermediate data type.

        Returns
        -------
        DataType
            The intermediate data type.
        """
        return self._native.intermediate_data_type

    def set_compute_data_type(self, data_type: DataType) -> Any:
        """Default compute data type of nodes.

        Parameters
        ----------
        data_type : DataType
            The default compute type of the graph's nodes.

        Returns
        -------
        Graph
            This graph (calls chain).
        """
        self._native.set_compute_data_type(data_type)
        return self

    def get_compute_data_type(self) -> DataType:
        """The compute data type.

        Returns
        -------
        DataType
            The compute data type.
        """
        return self._native.compute_data_type

    # -- tensors (static, as upstream binds them) ---------------------------------------------
    @staticmethod
    def tensor(tensor: NativeTensor) -> Tensor:
        """A new tensor with ``tensor``'s attributes (uid included), in no graph yet.

        Parameters
        ----------
        tensor : Tensor
            The tensor whose attributes (uid included) the new one takes.

        Returns
        -------
        Tensor
            The new graph tensor.
        """
        if not isinstance(tensor, NativeTensor):
            raise TypeError(f"tensor(): expected a hipdnn Tensor, got {type(tensor).__name__}")
        return Tensor(tensor.dim, tensor.stride, tensor.data_type, name=tensor.name,
                      uid=tensor.uid, is_virtual=tensor.is_virtual,
                      is_pass_by_value=tensor.is_pass_by_value, value=tensor.value)

    @staticmethod
    def tensor_like(tensor: Any, name: str = "") -> Tensor:
        """A tensor like ``tensor`` (uid cleared), or like a ``__dlpack__`` producer: its dims,
        element strides and data type; host memory makes it a pass-by-value tensor.

        Parameters
        ----------
        tensor : Tensor or array
            A graph tensor, or a framework tensor or array (its dims, strides and dtype).
        name : str, optional
            The tensor's name.

        Returns
        -------
        Tensor
            The new graph tensor.
        """
        if isinstance(tensor, NativeTensor):
            t = GraphBuild.tensor(tensor).clear_uid()
            return t.set_name(name) if name else t  # type: ignore[return-value]
        dims, strides, dtype, host = tensor_metadata(tensor)
        return Tensor(dims, strides, dtype, name=name, is_pass_by_value=host)

    # -- convolution --------------------------------------------------------------------------
    def _conv_args(self, attrs: Any, node: str) -> dict[str, Any]:
        for field in ("pre_padding", "post_padding", "stride", "dilation"):
            if not attrs.value(field):  # upstream's pre-validation: these have no default
                self._deferred.append(Error(ErrorCode.ATTRIBUTE_NOT_SET,
                                            f"{node} missing {field} (set_{field}() on the "
                                            f"attributes{'; set_padding() sets both' if 'padding' in field else ''})"))
                break
        return {"pre_padding": _ints_or_none(attrs.get_pre_padding()),
                "post_padding": _ints_or_none(attrs.get_post_padding()),
                "stride": _ints_or_none(attrs.get_stride()),
                "dilation": _ints_or_none(attrs.get_dilation()),
                "convolution_mode": attrs.get_convolution_mode(),
                "compute_data_type": attrs.get_compute_data_type(), "name": attrs.get_name()}

    def conv_fprop(self, x: NativeTensor, w: NativeTensor, attributes: ConvFpropAttributes) -> Tensor:
        """Forward convolution; returns Y.

        Parameters
        ----------
        x : Tensor
            The data tensor X.
        w : Tensor
            The filter W.
        attributes : attributes object
            The op's attributes (upstream's ``*Attributes`` class: name, compute data type and the
            op's settings).

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).
        """
        attrs = _attrs(attributes, ConvFpropAttributes, "conv_fprop")
        x, w = self._adopt(x, "conv_fprop"), self._adopt(w, "conv_fprop")
        return self._op("conv_fprop", 1, lambda: self._native.conv_fprop(
            x, w, **self._conv_args(attrs, "ConvolutionFpropNode")))

    def conv_dgrad(self, dy: NativeTensor, w: NativeTensor,
                   attributes: ConvDgradAttributes) -> Tensor:
        """Data gradient; returns DX (set its dims when the stride is > 1).

        Parameters
        ----------
        dy : Tensor
            The gradient DY.
        w : Tensor
            The filter W.
        attributes : attributes object
            The op's attributes (upstream's ``*Attributes`` class: name, compute data type and the
            op's settings).

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).
        """
        attrs = _attrs(attributes, ConvDgradAttributes, "conv_dgrad")
        dy, w = self._adopt(dy, "conv_dgrad"), self._adopt(w, "conv_dgrad")
        return self._op("conv_dgrad", 1, lambda: self._native.conv_dgrad(
            dy, w, **self._conv_args(attrs, "ConvolutionDgradNode")))

    def conv_wgrad(self, dy: NativeTensor, x: NativeTensor,
                   attributes: ConvWgradAttributes) -> Tensor:
        """Weight gradient (upstream's order: DY first, then X); returns DW.

        Parameters
        ----------
        dy : Tensor
            The gradient DY.
        x : Tensor
            The data tensor X.
        attributes : attributes object
            The op's attributes (upstream's ``*Attributes`` class: name, compute data type and the
            op's settings).

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).
        """
        attrs = _attrs(attributes, ConvWgradAttributes, "conv_wgrad")
        dy, x = self._adopt(dy, "conv_wgrad"), self._adopt(x, "conv_wgrad")
        return self._op("conv_wgrad", 1, lambda: self._native.conv_wgrad(
            x, dy, **self._conv_args(attrs, "ConvolutionWgradNode")))

    # -- pointwise ----------------------------------------------------------------------------
    def pointwise(self, *args: Any) -> Tensor:
        """``pointwise(a, attrs)``, ``pointwise(a, b, attrs)`` or ``pointwise(a, b, c, attrs)``.

        Parameters
        ----------
        *args
            The inputs IN_0[, IN_1[, IN_2]] (Tensors), then the pointwise attributes, as
            upstream passes them.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).
        """
        if not 2 <= len(args) <= 4:
            raise TypeError(f"pointwise() takes 1 to 3 tensors and a PointwiseAttributes, got "
                            f"{len(args)} arguments")
        attrs = _attrs(args[-1], PointwiseAttributes, "pointwise")
        first, *rest = [self._adopt(t, "pointwise") for t in args[:-1]]
        ins: list[NativeTensor | None] = [*rest, None, None]
        return self._op("pointwise", 1, lambda: self._native.pointwise(
            attrs.get_mode(), first, ins[0], ins[1],
            relu_lower_clip=attrs.get_relu_lower_clip(),
            relu_upper_clip=attrs.get_relu_upper_clip(),
            relu_lower_clip_slope=attrs.get_relu_lower_clip_slope(),
            swish_beta=attrs.get_swish_beta(), elu_alpha=attrs.get_elu_alpha(),
            softplus_beta=attrs.get_softplus_beta(), axis=attrs.get_axis(),
            compute_data_type=attrs.get_compute_data_type(), name=attrs.get_name()))

    # -- batchnorm ----------------------------------------------------------------------------
    def batchnorm(self, x: NativeTensor, scale: NativeTensor, bias: NativeTensor,
                  attributes: BatchnormAttributes) -> tuple[Tensor | None, ...]:
        """Batchnorm training; returns (Y, MEAN, INV_VARIANCE, NEXT_RUNNING_MEAN,
        NEXT_RUNNING_VARIANCE), the last two None without previous running statistics.

        Parameters
        ----------
        x : Tensor
            The data tensor X.
        scale : Tensor
            The per-channel scale (gamma).
        bias : Tensor
            The per-channel bias (beta).
        attributes : attributes object
            The op's attributes (upstream's ``*Attributes`` class: name, compute data type and the
            op's settings).

        Returns
        -------
        tuple of Tensor or None
            (Y, MEAN, INV_VARIANCE, NEXT_RUNNING_MEAN, NEXT_RUNNING_VARIANCE); the last two
            None without previous running statistics.
        """
        attrs = _attrs(attributes, BatchnormAttributes, "batchnorm")
        op = "batchnorm"
        x, scale, bias = (self._adopt(t, op) for t in (x, scale, bias))
        eps, momentum = (self._optional(attrs.get_epsilon(), op),
                         self._optional(attrs.get_momentum(), op))
        mean, var = (self._optional(attrs.get_prev_running_mean(), op),
                     self._optional(attrs.get_prev_running_variance(), op))
        peers = [self._adopt(t, op) for t in attrs.get_peer_stats()]
        if mean is None and var is None:
            momentum = None  # momentum alone updates nothing
        return self._op(op, 5, lambda: self._native.batchnorm(
            x, scale, bias, eps, momentum=momentum, in_running_mean=mean, in_running_var=var,
            peer_stats=peers or None, compute_data_type=attrs.get_compute_data_type(),
            name=attrs.get_name()))

    def batchnorm_backward(self, dy: NativeTensor, x: NativeTensor, scale: NativeTensor,
                           attributes: BatchnormBackwardAttributes) -> tuple[Tensor | None, ...]:
        """Batchnorm backward; returns (DX, DSCALE, DBIAS).

        Parameters
        ----------
        dy : Tensor
            The gradient DY.
        x : Tensor
            The data tensor X.
        scale : Tensor
            The per-channel scale (gamma).
        attributes : attributes object
            The op's attributes (upstream's ``*Attributes`` class: name, compute data type and the
            op's settings).

        Returns
        -------
        tuple of Tensor or None
            (DX, DSCALE, DBIAS).
        """
        attrs = _attrs(attributes, BatchnormBackwardAttributes, "batchnorm_backward")
        op = "batchnorm_backward"
        dy, x, scale = (self._adopt(t, op) for t in (dy, x, scale))
        mean, inv_var = (self._optional(attrs.get_mean(), op),
                         self._optional(attrs.get_inv_variance(), op))
        peers = [self._adopt(t, op) for t in attrs.get_peer_stats()]
        return self._op(op, 3, lambda: self._native.batchnorm_backward(
            dy, x, scale, mean, inv_var, peers or None,
            compute_data_type=attrs.get_compute_data_type(), name=attrs.get_name()))

    def batchnorm_inference(self, x: NativeTensor, mean: NativeTensor, inv_variance: NativeTensor,
                            scale: NativeTensor, bias: NativeTensor,
                            attributes: BatchnormInferenceAttributes) -> Tensor:
        """Batchnorm inference from the inverse variance; returns Y.

        Parameters
        ----------
        x : Tensor
            The data tensor X.
        mean : Tensor
            The saved or running mean.
        inv_variance : Tensor, optional
            The inverse standard deviation (give it or ``variance`` and ``epsilon``).
        scale : Tensor
            The per-channel scale (gamma).
        bias : Tensor
            The per-channel bias (beta).
        attributes : attributes object
            The op's attributes (upstream's ``*Attributes`` class: name, compute data type and the
            op's settings).

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).
        """
        attrs = _attrs(attributes, BatchnormInferenceAttributes, "batchnorm_inference")
        ts = [self._adopt(t, "batchnorm_inference") for t in (x, mean, inv_variance, scale, bias)]
        return self._op("batchnorm_inference", 1, lambda: self._native.batchnorm_inference(
            *ts, compute_data_type=attrs.get_compute_data_type(), name=attrs.get_name()))

    def batchnorm_inference_variance_ext(
            self, x: NativeTensor, mean: NativeTensor, variance: NativeTensor,
            scale: NativeTensor, bias: NativeTensor, epsilon: NativeTensor,
            attributes: BatchnormInferenceAttributesVarianceExt) -> Tensor:
        """Batchnorm inference from the variance and epsilon; returns Y.

        Parameters
        ----------
        x : Tensor
            The data tensor X.
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
        attributes : attributes object
            The op's attributes (upstream's ``*Attributes`` class: name, compute data type and the
            op's settings).

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).
        """
        op = "batchnorm_inference_variance_ext"
        attrs = _attrs(attributes, BatchnormInferenceAttributesVarianceExt, op)
        ts = [self._adopt(t, op) for t in (x, mean, variance, scale, bias, epsilon)]
        return self._op(op, 1, lambda: self._native.batchnorm_inference_variance_ext(
            *ts, compute_data_type=attrs.get_compute_data_type(), name=attrs.get_name()))

    # -- validation ---------------------------------------------------------------------------
    def validate(self) -> Error:
        """Infer shapes and data types, check every node, assign uids.

        Returns
        -------
        Error
            ``ErrorCode.OK``, or the failure's code and message (upstream's convention: the call
            does not raise).
        """
        if self._deferred:
            return self._deferred[0]
        # unset conv output strides follow the data input's layout (upstream's rule) in the
        # native graph itself (hipdnn/ir/nodes/conv.py)
        return attempt(self._native.validate)

    # -- serialization ------------------------------------------------------------------------
    def build_operation_graph(self, handle: Any) -> Error:
        """Validate and fix the graph for ``handle`` (RuntimeError for a destroyed handle).

        Parameters
        ----------
        handle : Handle, optional
            The Handle the graph is built for (default: the graph's).

        Returns
        -------
        Error
            ``ErrorCode.OK``, or the failure's code and message (upstream's convention: the call
            does not raise).

        Raises
        ------
        RuntimeError
            For a destroyed handle.
        """
        h = native_handle(handle)
        err = self.validate()
        if err.is_good():
            err = attempt(lambda: self._native.build_operation_graph(h))
        self._reset()
        self._op_graph = err.is_good()
        return err

    def to_json(self) -> str:
        """The graph as JSON: the native document with upstream's node type tags.

        Returns
        -------
        str
            The graph as JSON.
        """
        doc = json.loads(self._native.to_json())
        for node in doc["nodes"]:
            node["type"] = NODE_TYPE_NAMES.get(node["type"], node["type"])
        return json.dumps(doc, indent=1)

    def to_binary(self) -> bytes:
        """The graph as bytes (this package's format: compressed :meth:`to_json`; upstream's
        FlatBuffer bytes are a different format).

        Returns
        -------
        bytes
            The graph as bytes (this package's format: compressed :meth:`to_json`; upstream's
            FlatBuffer bytes are a different format).
        """
        return BINARY_MAGIC + zlib.compress(self.to_json().encode(), 9)

    def _load(self, text: str | bytes) -> Error:
        try:
            doc = json.loads(text)
            for node in doc.get("nodes", []):
                node["type"] = _NATIVE_TYPES.get(node.get("type"), node.get("type"))
            native = NativeGraph.from_json(json.dumps(doc))
        except (ValueError, TypeError, AttributeError) as exc:
            return Error(ErrorCode.UNSUPPORTED_GRAPH_FORMAT, f"not a graph document: {exc}")
        except HipdnnError as exc:
            return error_from(exc)
        for t in native.all_tensors:
            as_frontend_tensor(t)
        self._native, self._deferred = native, []
        self._reset()
        return Error()

    def _finish(self, err: Error, handle: Any) -> Error:
        if err.is_bad() or handle is None:
            return err
        return self.build_operation_graph(handle)

    def from_json(self, *args: Any) -> Error:
        """``from_json(json_string)`` replaces this graph's contents; ``from_json(handle,
        json_string)`` also builds the operation graph.

        Parameters
        ----------
        *args
            ``(json_string)`` or ``(handle, json_string)``.

        Returns
        -------
        Error
            ``ErrorCode.OK``, or the failure's code and message (upstream's convention: the call
            does not raise).
        """
        handle, text = self._serial_args(args, "from_json", (str, bytes))
        if handle is not None:
            native_handle(handle)
        return self._finish(self._load(text), handle)

    def from_binary(self, *args: Any) -> Error:
        """``from_binary(data)`` / ``from_binary(handle, data)`` for :meth:`to_binary` bytes.

        Parameters
        ----------
        *args
            ``(data)`` or ``(handle, data)``.

        Returns
        -------
        Error
            ``ErrorCode.OK``, or the failure's code and message (upstream's convention: the call
            does not raise).
        """
        handle, data = self._serial_args(args, "from_binary", (bytes, bytearray))
        if handle is not None:
            native_handle(handle)
        if not bytes(data).startswith(BINARY_MAGIC):
            return Error(ErrorCode.UNSUPPORTED_GRAPH_FORMAT,
                         "not a graph from this package's to_binary() (upstream's FlatBuffer "
                         "binaries are not readable here; exchange graphs as to_json())")
        try:
            text = zlib.decompress(bytes(data)[len(BINARY_MAGIC):]).decode()
        except (zlib.error, UnicodeDecodeError) as exc:
            return Error(ErrorCode.UNSUPPORTED_GRAPH_FORMAT, f"corrupt graph binary: {exc}")
        return self._finish(self._load(text), handle)

    @staticmethod
    def _serial_args(args: tuple[Any, ...], what: str,
                     kinds: tuple[type, ...]) -> tuple[Any, Any]:
        if len(args) == 1 and isinstance(args[0], kinds):
            return None, args[0]
        if len(args) == 2 and isinstance(args[1], kinds):
            return args[0], args[1]
        raise TypeError(f"{what}() takes (data) or (handle, data) with data of type "
                        f"{' or '.join(k.__name__ for k in kinds)}")
