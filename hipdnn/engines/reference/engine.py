"""CPU_REFERENCE_ENGINE: runs every graph of the hipdnn API node by node with numpy.

The oracle for the other engines and the default where no AMD GPU is usable. For each node in
topological order it reads its inputs as strided host views (never assuming packing), computes in
FP32 with :mod:`hipdnn.engines.reference.kernels` (float64, exact, for integer data: INT8
convolution, INT32 values), and rounds every result to its tensor's dtype (virtual intermediates
to the graph's intermediate dtype; BOOLEAN is 1/0, integers round to nearest and saturate). All
results are computed into temporaries first, then staged in each output's dtype
(:func:`stage_output`); outputs are written only when every node and every staging succeeded, so
a failure never leaves a partial result. Workspace: 0 bytes. No knobs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hipdnn.backend.engine import Engine, ExecutionPlan
from hipdnn.backend.knobs import Knob, KnobValue
from hipdnn.core.errors import ExecutionError, GraphNotSupportedError, HipdnnError, VariantPackError
from hipdnn.core.types import ConvolutionMode, DataType, PointwiseMode
from hipdnn.engines.reference import _bn, _conv, _parallel
from hipdnn.engines.reference import kernels as K
from hipdnn.engines.reference._bn import Deferred
from hipdnn.engines.reference._deferred import DeferredOutput
from hipdnn.engines.reference._norms import norm_backward, norm_forward
from hipdnn.engines.reference._parallel import PARALLEL_MIN_SIZE, map_chunks
from hipdnn.engines.reference._pointwise import POINTWISE_OPS, pointwise
from hipdnn.interop.buffers import host_view
from hipdnn.interop.dtypes import dtype_to_numpy
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
    LayernormBackwardNode,
    LayernormNode,
    MatmulNode,
    Node,
    PointwiseNode,
    ReductionNode,
    RmsnormBackwardNode,
    RmsnormNode,
)
from hipdnn.ir.nodes.layernorm import NormNodeBase

if TYPE_CHECKING:
    from hipdnn.core.handle import Handle
    from hipdnn.ir.tensor import Tensor
    from hipdnn.ir.view import GraphView

__all__ = ["FLOAT_DTYPES", "INTEGER_DTYPES", "SUPPORTED_DTYPES", "ReferenceEngine", "ReferencePlan"]

#: Floating-point tensor types every op reads and writes (computing in FP32).
FLOAT_DTYPES = frozenset({DataType.FLOAT, DataType.HALF, DataType.BFLOAT16})
#: Integer and boolean types (masks, INT8 convolution data, INT32 results): pointwise, genstats
#: and reduction take them anywhere; convolution takes INT8 X and W (INT32 compute).
INTEGER_DTYPES = frozenset({DataType.BOOLEAN, DataType.UINT8, DataType.INT8, DataType.INT32,
                            DataType.INT64})
#: Every tensor element type the reference engine reads and writes.
SUPPORTED_DTYPES = FLOAT_DTYPES | INTEGER_DTYPES
#: MIOpen's BATCHNORM_DEFAULT_EPSILON, used when a backward node has no saved statistics.
BN_DEFAULT_EPSILON = 1e-5

_F32 = np.float32
Env = dict[int, "np.ndarray | DeferredOutput"]


def _round(a: np.ndarray, dtype: DataType) -> np.ndarray:
    """``a`` rounded to ``dtype``: FP32 for FLOAT and BOOLEAN (1.0/0.0, non-zero is true);
    FP16 / BF16 arrays for HALF / BFLOAT16 (their values, one conversion, in parts on the pool
    for large arrays; readers convert to FP32 as they do for such inputs, and an output of that
    type is then copied as it is); float64 (exact for 32-bit integers) for integer types,
    rounded to nearest and saturated to the type's range with NaN as 0, as cuDNN converts to
    integers."""
    if dtype in INTEGER_DTYPES:
        if dtype == DataType.BOOLEAN:
            return (np.asarray(a) != 0).astype(_F32)
        info = np.iinfo(dtype_to_numpy(dtype))
        wide = np.nan_to_num(np.asarray(a, dtype=np.float64), nan=0.0)
        return np.clip(np.rint(wide), float(info.min), float(info.max))
    if dtype in (DataType.HALF, DataType.BFLOAT16) and getattr(a, "dtype", None) == \
            dtype_to_numpy(dtype):
        return np.asarray(a)  # a kernel rounded its FP32 sums to this type already
    a = np.asarray(a, dtype=_F32)
    if dtype in (DataType.HALF, DataType.BFLOAT16):
        low = np.empty_like(a, dtype=dtype_to_numpy(dtype))
        if a.ndim and a.shape[0] > 1 and a.size >= PARALLEL_MIN_SIZE:
            map_chunks(lambda sl: np.copyto(low[sl], a[sl], casting="unsafe"), a)
        else:
            np.copyto(low, a, casting="unsafe")
        return low
    return a


def _node_reason(node: Node) -> str | None:
    """Why this node cannot run here, or None."""
    label = f"node {node.name!r} ({type(node).__name__})"
    if not isinstance(node, _HANDLERS_TYPES):
        return f"{label}: operation not implemented by the reference engine"
    allowed = _allowed_dtypes(node)
    for port, t in (*node.inputs.items(), *node.outputs.items()):
        if t is None:
            continue
        if t.data_type not in allowed and not t.is_pass_by_value:
            names = ", ".join(d.name for d in sorted(allowed))
            return (f"{label}: port {port} tensor {t.name!r} has data type {t.data_type.name}; "
                    f"supported here: {names}")
    if isinstance(node, ConvFpropNode) and _is_int8_conv(node):
        if node.compute_data_type != DataType.INT32:
            return (f"{label}: INT8 convolution computes in INT32; compute_data_type is "
                    f"{node.compute_data_type.name} (set compute_data_type=INT32)")
    if isinstance(node, (ConvDgradNode, ConvWgradNode)) and _is_int8_conv(node):
        return f"{label}: INT8 data is supported by conv_fprop only (as in cuDNN)"
    if isinstance(node, (ConvFpropNode, ConvDgradNode, ConvWgradNode)):
        if node.convolution_mode != ConvolutionMode.CROSS_CORRELATION:
            return (f"{label}: convolution_mode {node.convolution_mode.name} is not supported; "
                    f"only CROSS_CORRELATION")
    if isinstance(node, (BatchnormNode, BatchnormBackwardNode)) and getattr(node, "peer_stats", None):
        return f"{label}: peer_stats (multi-device batchnorm) is not supported"
    if isinstance(node, PointwiseNode) and node.mode not in POINTWISE_OPS:
        known = ", ".join(sorted(m.name for m in POINTWISE_OPS))
        return f"{label}: pointwise mode {node.mode.name} is not supported; supported: {known}"
    return None


_INT8_CONV_IO = frozenset({DataType.INT8})
_INT8_CONV_OUT = frozenset({DataType.INT32, DataType.INT8, DataType.FLOAT, DataType.HALF,
                            DataType.BFLOAT16})


def _is_int8_conv(node: Node) -> bool:
    return any(t is not None and t.data_type in _INT8_CONV_IO for t in node.inputs.values())


def _allowed_dtypes(node: Node) -> frozenset[DataType]:
    """Element types each port of ``node`` may have on this engine."""
    if isinstance(node, (PointwiseNode, GenstatsNode, ReductionNode)):
        return SUPPORTED_DTYPES
    if isinstance(node, ConvFpropNode) and _is_int8_conv(node):
        return _INT8_CONV_IO | _INT8_CONV_OUT
    if isinstance(node, (ConvDgradNode, ConvWgradNode)) and _is_int8_conv(node):
        return FLOAT_DTYPES | _INT8_CONV_IO
    return FLOAT_DTYPES


class _Run:
    """One execution: values of every tensor by uid (inputs as strided host views, FP32 results)."""

    def __init__(self, graph: GraphView, buffers: Mapping[int, Any]) -> None:
        self.graph = graph
        self.buffers = buffers
        self.env: Env = {}

    def value(self, t: Tensor | None, port: str, node: Node) -> np.ndarray:
        """The tensor's current value (logical dims; any dtype/strides)."""
        if t is None:
            raise ExecutionError(f"node {node.name!r}: port {port} has no tensor")
        assert t.uid is not None
        if t.uid in self.env:
            v = self.env[t.uid]
            assert not isinstance(v, DeferredOutput)  # deferred outputs are read by no node
            return v
        if t.is_virtual:
            raise ExecutionError(f"node {node.name!r}: virtual tensor {t.name!r} (uid {t.uid}) "
                                 f"is read before any node produced it")
        buf = self.buffers.get(t.uid)
        if buf is None:
            if t.is_pass_by_value and t.value is not None:
                arr = np.full(t.dim or (1,), t.value, dtype=_F32)
            else:
                raise VariantPackError(
                    f"variant pack has no value for tensor {t.name!r} (uid {t.uid}), input "
                    f"{port} of node {node.name!r}", tensor=t.name)
        else:
            arr = host_view(buf, t)
        self.env[t.uid] = arr
        return arr

    def scalar(self, node: Node, port: str, default: float | None = None) -> float:
        """A pass-by-value scalar: the tensor's baked value, else the variant pack's."""
        t = node.inputs.get(port)
        if t is None:
            if default is None:
                raise ExecutionError(f"node {node.name!r}: scalar input {port} is missing")
            return default
        if t.value is not None:
            return float(t.value)
        buf = self.buffers.get(t.uid) if t.uid is not None else None
        if buf is not None and getattr(buf, "scalar", None) is not None:
            return float(buf.scalar)
        return float(np.asarray(self.value(t, port, node), dtype=np.float64).reshape(-1)[0])

    def _stored_type(self, t: Tensor) -> DataType:
        """The type an output is stored in: its own, or if unset the graph's intermediate type."""
        dtype = t.data_type
        if dtype == DataType.NOT_SET:
            dtype = getattr(self.graph, "intermediate_data_type", DataType.FLOAT)
        return DataType(dtype)

    def half_output(self, node: Node, port: str) -> Any:
        """The numpy type of output ``port`` when it is stored as FP16 or BF16, else None: a
        kernel may round its FP32 sums to it once itself."""
        t = node.outputs.get(port)
        if t is None:
            return None
        dtype = self._stored_type(t)
        return dtype_to_numpy(dtype) if dtype in (DataType.HALF, DataType.BFLOAT16) else None

    def put(self, node: Node, port: str, result: np.ndarray) -> None:
        """Store an output rounded to its dtype (virtual: the graph's intermediate dtype)."""
        t = node.outputs.get(port)
        if t is None:
            return
        assert t.uid is not None and t.dim is not None
        dtype = self._stored_type(t)
        res = np.asarray(result)
        dim = tuple(t.dim)
        if res.shape != dim:  # (C,) statistics into (1, C, 1, 1); broadcast pointwise results
            res = res.reshape(dim) if res.size == int(np.prod(dim)) else np.broadcast_to(res, dim)
        self.env[t.uid] = _round(res, dtype)

    def _fp32_output(self, node: Node, port: str, virtual: bool) -> Tensor | None:
        """Output ``port`` when it is FP32 (an unset type resolved as the engine does) and
        virtual or not as asked; else None."""
        t = node.outputs.get(port)
        if t is None or t.is_virtual != virtual or t.uid is None:
            return None
        return t if self._stored_type(t) == DataType.FLOAT else None

    def _readers(self, t: Tensor) -> list[tuple[Node, str]]:
        """(node, input port) of every node input that reads ``t``."""
        return [(other, p) for other in self.graph.nodes for p, u in other.inputs.items()
                if u is not None and u.uid == t.uid]

    def deferrable(self, node: Node, port: str) -> bool:
        """True when output ``port`` may be left as a :class:`Deferred` for the commit to write
        straight into the caller's buffer: a :meth:`direct_output` stored as FP32."""
        return (self._fp32_output(node, port, virtual=False) is not None
                and self.direct_output(node, port))

    def fusable_relu(self, node: Node, port: str) -> bool:
        """True when output ``port`` is a virtual FP32 tensor whose only reader is a plain or
        clipped (not leaky) RELU_FWD's IN_0: that ReLU can join the output's deferred pass."""
        t = self._fp32_output(node, port, virtual=True)
        if t is None:
            return False
        readers = self._readers(t)
        if len(readers) != 1:
            return False
        relu, p = readers[0]
        return (isinstance(relu, PointwiseNode) and relu.mode == PointwiseMode.RELU_FWD
                and p == "IN_0" and not relu.relu_lower_clip_slope)

    def direct_output(self, node: Node, port: str) -> bool:
        """True when output ``port`` is a non-virtual tensor no node reads (of any type): a
        :class:`DeferredOutput` of it is written at commit straight into the caller's buffer."""
        t = node.outputs.get(port)
        return (t is not None and not t.is_virtual and t.uid is not None
                and not self._readers(t))

    def put_deferred(self, node: Node, port: str, result: DeferredOutput) -> None:
        """Store a deferred output (only where :meth:`deferrable` or :meth:`direct_output`)."""
        t = node.outputs[port]
        assert t is not None and t.uid is not None and tuple(t.dim or ()) == result.shape
        self.env[t.uid] = result


def _conv_args(node: ConvFpropNode | ConvDgradNode | ConvWgradNode
               ) -> tuple[Sequence[int], Sequence[int], Sequence[int], Sequence[int], int]:
    assert node.pre_padding is not None and node.post_padding is not None
    assert node.stride is not None and node.dilation is not None
    return (node.pre_padding, node.post_padding, node.stride, node.dilation, int(node.groups or 1))


def _conv_fprop(r: _Run, n: ConvFpropNode) -> None:
    x, w = r.value(n.inputs["X"], "X", n), r.value(n.inputs["W"], "W", n)
    # INT8 x INT8 accumulates exactly in float64 (every sum of int8 products below 2**53)
    acc = np.float64 if _is_int8_conv(n) else _F32
    pre, post, stride, dilation, groups = _conv_args(n)
    half = r.half_output(n, "Y")
    if acc is _F32 and _put_conv_deferred(r, n, "Y", "fprop", x, w, half):
        return
    r.put(n, "Y", K.conv_fprop(x, w, pre, post, stride, dilation, groups, acc, out_dtype=half))


def _conv_dgrad(r: _Run, n: ConvDgradNode) -> None:
    dx = n.outputs["DX"]
    assert dx is not None and dx.dim is not None
    dy, w = r.value(n.inputs["DY"], "DY", n), r.value(n.inputs["W"], "W", n)
    half = r.half_output(n, "DX")
    if _put_conv_deferred(r, n, "DX", "dgrad", dy, w, half):
        return
    r.put(n, "DX", K.conv_dgrad(dy, w, dx.dim, *_conv_args(n), out_dtype=half))


def _put_conv_deferred(r: _Run, n: ConvFpropNode | ConvDgradNode, port: str, kind: str,
                       a: np.ndarray, b: np.ndarray, half: Any) -> bool:
    """Store output ``port`` of an fprop/dgrad as a deferred oneDNN convolution written straight
    into the caller's buffer at commit, where it is a :meth:`_Run.direct_output` and oneDNN
    takes the problem; False (nothing stored) otherwise."""
    t = n.outputs[port]
    assert t is not None and t.dim is not None
    if not r.direct_output(n, port):
        return False
    late = K.conv_deferred(kind, a, b, t.dim, *_conv_args(n), out_dtype=half)
    if late is None:
        return False
    r.put_deferred(n, port, late)
    return True


def _conv_wgrad(r: _Run, n: ConvWgradNode) -> None:
    dw = n.outputs["DW"]
    assert dw is not None and dw.dim is not None
    r.put(n, "DW", K.conv_wgrad(r.value(n.inputs["X"], "X", n), r.value(n.inputs["DY"], "DY", n),
                                dw.dim, *_conv_args(n)))


def _p(r: _Run, n: Node, port: str) -> np.ndarray:
    return np.asarray(r.value(n.inputs[port], port, n), dtype=_F32).reshape(-1)


def _put_y(r: _Run, n: Node, y: Deferred) -> None:
    if r.deferrable(n, "Y") or r.fusable_relu(n, "Y"):  # a ReLU reading Y joins its pass
        r.put_deferred(n, "Y", y)
    else:
        r.put(n, "Y", y.materialize())


def _bn_train(r: _Run, n: BatchnormNode) -> None:
    eps = r.scalar(n, "EPSILON")
    y, mean, inv, unbiased = K.bn_train_forward_deferred(r.value(n.inputs["X"], "X", n),
                                                         _p(r, n, "SCALE"), _p(r, n, "BIAS"), eps)
    _put_y(r, n, y)
    r.put(n, "MEAN", mean)
    r.put(n, "INV_VARIANCE", inv)
    if n.inputs.get("PREV_RUNNING_MEAN") is not None:
        momentum = r.scalar(n, "MOMENTUM")
        new_m, new_v = K.bn_running_update(_p(r, n, "PREV_RUNNING_MEAN"),
                                           _p(r, n, "PREV_RUNNING_VARIANCE"), mean, unbiased,
                                           momentum)
        r.put(n, "NEXT_RUNNING_MEAN", new_m)
        r.put(n, "NEXT_RUNNING_VARIANCE", new_v)


def _bn_inference(r: _Run, n: BatchnormInferenceNode) -> None:
    _put_y(r, n, K.bn_inference_inv_variance_deferred(
        r.value(n.inputs["X"], "X", n), _p(r, n, "SCALE"), _p(r, n, "BIAS"), _p(r, n, "MEAN"),
        _p(r, n, "INV_VARIANCE")))


def _bn_inference_var(r: _Run, n: BatchnormInferenceVarianceNode) -> None:
    _put_y(r, n, K.bn_inference_variance_deferred(
        r.value(n.inputs["X"], "X", n), _p(r, n, "SCALE"), _p(r, n, "BIAS"), _p(r, n, "MEAN"),
        _p(r, n, "VARIANCE"), r.scalar(n, "EPSILON")))


def _bn_backward(r: _Run, n: BatchnormBackwardNode) -> None:
    x = r.value(n.inputs["X"], "X", n)
    if n.inputs.get("MEAN") is not None:
        mean, inv = _p(r, n, "MEAN"), _p(r, n, "INV_VARIANCE")
    else:  # no saved statistics: recompute them as MIOpen does, with its default epsilon
        c = x.shape[1]
        # the statistics only: y's pass is never run
        _, mean, inv, _ = K.bn_train_forward_deferred(x, np.ones(c, _F32), np.zeros(c, _F32),
                                                      BN_DEFAULT_EPSILON)
    dx, dscale, dbias = K.bn_backward_deferred(r.value(n.inputs["DY"], "DY", n), x,
                                               _p(r, n, "SCALE"), mean, inv)
    if r.deferrable(n, "DX"):
        r.put_deferred(n, "DX", dx)
    else:
        r.put(n, "DX", dx.materialize())
    r.put(n, "DSCALE", dscale)
    r.put(n, "DBIAS", dbias)


def _pointwise(r: _Run, n: PointwiseNode) -> None:
    src = n.inputs.get("IN_0")
    pending = r.env.get(src.uid) if src is not None and src.uid is not None else None
    if isinstance(pending, Deferred):  # a batchnorm's y that only this ReLU reads
        assert src is not None and src.uid is not None
        lo = _F32(0.0 if n.relu_lower_clip is None else n.relu_lower_clip)
        hi = None if n.relu_upper_clip is None else _F32(n.relu_upper_clip)

        def relu(yb: np.ndarray) -> None:  # kernels.relu_forward's float32 ops, in place
            np.maximum(yb, lo, out=yb)
            if hi is not None:
                np.minimum(yb, hi, out=yb)

        fused = pending.then(relu)
        if fused is not None:
            if r.deferrable(n, "OUT_0"):
                r.put_deferred(n, "OUT_0", fused)
            else:
                r.put(n, "OUT_0", fused.materialize())
            return
        r.env[src.uid] = pending.materialize()
    args = [r.value(t, p, n) for p, t in n.inputs.items() if t is not None]
    r.put(n, "OUT_0", pointwise(n, args))


def _genstats(r: _Run, n: GenstatsNode) -> None:
    total, squares = K.genstats(r.value(n.inputs["X"], "X", n))
    r.put(n, "SUM", total)
    r.put(n, "SQ_SUM", squares)


def _reduction(r: _Run, n: ReductionNode) -> None:
    r.put(n, "Y", K.reduce(r.value(n.inputs["X"], "X", n), n.mode, n.reduced_axes()))


def _norm_axes(r: _Run, n: NormNodeBase) -> tuple[np.ndarray, tuple[int, ...], np.ndarray]:
    x = r.value(n.inputs["X"], "X", n)
    scale = r.value(n.inputs["SCALE"], "SCALE", n)
    return x, n.norm_axes(x.shape, scale.shape), scale


def _norm_forward(r: _Run, n: NormNodeBase) -> None:
    x, axes, scale = _norm_axes(r, n)
    bias = r.value(n.inputs["BIAS"], "BIAS", n) if n.inputs.get("BIAS") is not None else None
    y, mean, inv = norm_forward(x, axes, scale, bias, r.scalar(n, "EPSILON"),
                                rms=isinstance(n, RmsnormNode))
    r.put(n, "Y", y)
    r.put(n, "MEAN", mean)  # put() skips the statistics INFERENCE does not output
    r.put(n, "INV_VARIANCE", inv)


def _norm_backward(r: _Run, n: NormNodeBase) -> None:
    x, axes, scale = _norm_axes(r, n)
    mean = r.value(n.inputs["MEAN"], "MEAN", n) if "MEAN" in n.inputs else None
    dx, dscale, dbias = norm_backward(r.value(n.inputs["DY"], "DY", n), x, axes, scale, mean,
                                      r.value(n.inputs["INV_VARIANCE"], "INV_VARIANCE", n))
    r.put(n, "DX", dx)
    r.put(n, "DSCALE", dscale)
    r.put(n, "DBIAS", dbias)


def _matmul(r: _Run, n: MatmulNode) -> None:
    # DOUBLE compute accumulates in float64, every other float compute type in float32
    acc = np.float64 if n.compute_data_type == DataType.DOUBLE else _F32
    a = np.asarray(r.value(n.inputs["A"], "A", n), dtype=acc)
    b = np.asarray(r.value(n.inputs["B"], "B", n), dtype=acc)
    r.put(n, "C", np.matmul(a, b))  # numpy broadcasts batch dims of 1 as cuDNN does


_HANDLERS: dict[type[Node], Callable[[_Run, Any], None]] = {
    ConvFpropNode: _conv_fprop,
    ConvDgradNode: _conv_dgrad,
    ConvWgradNode: _conv_wgrad,
    BatchnormNode: _bn_train,
    BatchnormInferenceNode: _bn_inference,
    BatchnormInferenceVarianceNode: _bn_inference_var,
    BatchnormBackwardNode: _bn_backward,
    PointwiseNode: _pointwise,
    GenstatsNode: _genstats,
    ReductionNode: _reduction,
    LayernormNode: _norm_forward,
    LayernormBackwardNode: _norm_backward,
    RmsnormNode: _norm_forward,
    RmsnormBackwardNode: _norm_backward,
    InstancenormNode: _norm_forward,
    InstancenormBackwardNode: _norm_backward,
    MatmulNode: _matmul,
}
_HANDLERS_TYPES = tuple(_HANDLERS)


def stage_output(value: np.ndarray | DeferredOutput, view: np.ndarray,
                 commits: Sequence[np.ndarray] = ()) -> np.ndarray | DeferredOutput:
    """``value`` as an array of ``view``'s dtype and shape that no commit writes into.

    A :class:`DeferredOutput` value stays deferred (its last pass will write ``view`` directly, after
    every copy) when ``view`` fits it and none of the ``commits`` views overlaps the memory the
    pass reads (an output aliasing X or DY, or one written before the pass reads them); else it
    is materialized here, before anything is written.

    An output may alias an input, so the commit must not read memory it writes: a value that
    may be caller memory is copied. A value the engine allocated itself (numpy owns the memory
    under it, it has ``view``'s dtype and shape, and overlaps none of the ``commits`` views) is
    already staged:
    no copy (for a large batchnorm output that copy was a serial pass over the whole tensor).
    """
    if isinstance(value, DeferredOutput):
        if value.fits(view) and not any(np.may_share_memory(r, c)
                                        for r in value.reads for c in commits):
            return value
        value = value.materialize()
    if (value.dtype == view.dtype and value.shape == view.shape and _engine_owned(value)
            and not any(np.may_share_memory(value, c) for c in commits)):
        return value
    return np.array(np.broadcast_to(value, view.shape), dtype=view.dtype, copy=True)


def _engine_owned(a: np.ndarray) -> bool:
    """True when ``a`` is (a view of) an array numpy allocated: caller memory reaches the engine
    only through :func:`hipdnn.interop.buffers.host_view`, whose arrays rest on a ``HostSpan``."""
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root.base is None and root.flags.owndata


def commit_output(view: np.ndarray, value: np.ndarray) -> None:
    """Copy a staged ``value`` into ``view`` (same dtype: cannot fail), large ones on the pool."""
    if view.ndim and view.shape[0] > 1 and view.size >= PARALLEL_MIN_SIZE:
        map_chunks(lambda sl: np.copyto(view[sl], value[sl], casting="no"), view)
    else:
        np.copyto(view, value, casting="no")


class ReferencePlan(ExecutionPlan):
    """A reference-engine plan: the graph's nodes, run in order on the CPU."""

    reads_buffer_strides = True  # every buffer is read and written as a strided numpy view

    def __init__(self, engine: ReferenceEngine, graph: GraphView,
                 knobs: Mapping[str, KnobValue] | None = None) -> None:
        super().__init__(engine, knobs, name=f"{engine.name}:{len(graph.nodes)} node(s)",
                         workspace_size=0)
        self.graph = graph
        self._steps = [(node, _HANDLERS[type(node)]) for node in graph.nodes]

    def describe(self) -> str:
        """The nodes run one after another in numpy on the CPU (no fusion)."""
        names = ", ".join(f"{node.name} ({type(node).__name__})" for node, _ in self._steps)
        return f"numpy on the CPU, unfused, node by node: {names}"

    def _execute(self, buffers: Mapping[int, Any], workspace: Any, handle: Handle | None) -> None:
        """Run every node; write every non-virtual output only after all succeeded."""
        run = _Run(self.graph, buffers)
        outputs: list[tuple[Tensor, np.ndarray]] = []
        # resolve output views first: a non-host buffer fails before any work is done
        for node, _ in self._steps:
            for t in node.outputs.values():
                if t is not None and not t.is_virtual:
                    assert t.uid is not None
                    buf = buffers.get(t.uid)
                    if buf is None:
                        raise VariantPackError(f"variant pack has no buffer for output tensor "
                                               f"{t.name!r} (uid {t.uid}) of node {node.name!r}",
                                               tensor=t.name)
                    view = host_view(buf, t)
                    if not view.flags.writeable:
                        raise VariantPackError(f"output tensor {t.name!r} (uid {t.uid}) of node "
                                               f"{node.name!r} is backed by read-only memory",
                                               tensor=t.name)
                    outputs.append((t, view))
        with np.errstate(all="ignore"):  # NaN/Inf propagate silently, as in PyTorch
            for node, step in self._steps:
                try:
                    step(run, node)
                except HipdnnError:
                    raise
                except (ValueError, TypeError, IndexError, OverflowError, MemoryError,
                        RuntimeError, AssertionError) as exc:  # a kernel's (or oneDNN's) fault
                    raise ExecutionError(f"node {node.name!r} ({type(node).__name__}) failed on "
                                         f"{self.engine.name}: {type(exc).__name__}: "
                                         f"{exc}") from exc
            # stage every output in its own memory and dtype first (this may fail: nothing is
            # written yet), then commit with same-dtype copies, which cannot fail
            views = [view for _, view in outputs]
            try:
                staged = [(view, stage_output(run.env[t.uid], view, views))
                          for t, view in outputs if t.uid is not None]
            except MemoryError as exc:
                raise ExecutionError(f"{self.engine.name}: out of host memory staging the "
                                     f"outputs: {exc}") from exc
            # the copies first, then the deferred passes (they read inputs no commit touches)
            for view, value in staged:
                if not isinstance(value, DeferredOutput):
                    commit_output(view, value)
            for view, value in staged:
                if isinstance(value, DeferredOutput):
                    value.write_into(view)


class ReferenceEngine(Engine):
    """numpy on the CPU; applies to every graph of the supported ops (rank 1000: last choice)."""

    name = "CPU_REFERENCE_ENGINE"
    rank = 1000

    def runtime_details(self) -> dict[str, str]:
        """The thread count and which batchnorm and convolution implementations run (nothing
        imported)."""
        return {"threads": f"{_parallel.workers()} (HIPDNN_REFERENCE_THREADS, else "
                           "OPENBLAS/OMP_NUM_THREADS, else the usable CPUs)",
                "batchnorm": _bn.implementation(), "convolution": _conv.implementation()}

    def check_support(self, graph: GraphView, handle: Handle | None) -> str | None:
        """None when every node is supported, else the first reason found."""
        for node in graph.nodes:
            reason = _node_reason(node)
            if reason is not None:
                return reason
        return None

    def get_knobs(self, graph: GraphView, handle: Handle | None) -> list[Knob]:
        """The reference engine has no knobs."""
        return []

    def build_plan(self, graph: GraphView, knobs: dict[str, KnobValue],
                   handle: Handle | None) -> ExecutionPlan:
        """A plan that runs ``graph``'s nodes in order; declines unsupported graphs."""
        reason = self.check_support(graph, handle)
        if reason is not None:
            raise GraphNotSupportedError(f"{self.name} cannot run this graph",
                                         {self.name: reason})
        return ReferencePlan(self, graph, knobs)
