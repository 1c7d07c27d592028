"""Seed-row graph builders for the test_miopen_engine_* modules: every row x dtype x layout as a
hipdnn Graph with host inputs, a PyTorch (CPU) reference per output and DESIGN.md's tolerances.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from hipdnn.core.shapes import LAYOUTS, packed_strides
from hipdnn.core.types import DataType
from hipdnn.engines.miopen.patterns import Row
from hipdnn.graph.graph import Graph

D = DataType
DTYPES = {"fp32": D.FLOAT, "fp16": D.HALF, "bf16": D.BFLOAT16}
NP = {D.FLOAT: np.dtype(np.float32), D.HALF: np.dtype(np.float16),
      D.BFLOAT16: np.dtype(ml_dtypes.bfloat16)}
LAYOUT_NAMES = tuple(LAYOUTS)  # NCHW, NHWC, NCDHW, NDHWC
#: 1-D layouts (rank-3 tensors): every builder takes them too (MIOPEN_ENGINE pads them to 4-D).
LAYOUT_1D = ("NCL", "NLC")
#: Axis order (outermost first) of every layout a builder takes.
ORDERS: dict[str, tuple[int, ...]] = {**LAYOUTS, "NCL": (0, 1, 2), "NLC": (0, 2, 1)}

# DESIGN.md tolerances (atol = rtol) per op and dtype; conv fprop lists (atol, rtol).
TOL: dict[str, dict[DataType, tuple[float, float]]] = {
    "bn_inference": {D.FLOAT: (2e-4, 2e-4), D.HALF: (8e-4, 8e-4), D.BFLOAT16: (7e-3, 7e-3)},
    "bn_training": {D.FLOAT: (4e-3, 4e-3), D.HALF: (4e-3, 4e-3), D.BFLOAT16: (8e-3, 8e-3)},
    "bn_backward": {D.FLOAT: (2e-3, 2e-3), D.HALF: (4e-4, 4e-4), D.BFLOAT16: (3e-3, 3e-3)},
    "conv_fprop": {D.FLOAT: (1e-5, 1e-5), D.HALF: (1e-1, 1e-2), D.BFLOAT16: (1e-1, 2e-2)},
    "conv_dgrad": {D.FLOAT: (8.5e-6, 8.5e-6), D.HALF: (2e-2, 2e-2), D.BFLOAT16: (2e-2, 2e-2)},
    "conv_wgrad": {D.FLOAT: (2e-4, 2e-4), D.HALF: (2e-1, 2e-1), D.BFLOAT16: (2e-1, 2e-1)},
    "pointwise": {D.FLOAT: (1e-5, 1e-5), D.HALF: (1e-3, 1e-3), D.BFLOAT16: (1e-2, 1e-2)},
    # Not in DESIGN.md. MIOpen's layer norm kernels take the variance in one float32 pass
    # (sum(x^2)/n - mean^2) and keep the weight, bias and statistics in the data type (fp16 /
    # bf16 rstd rounded before y is computed; dscale sums fp16 products over the batch): the
    # pointwise tolerances x10 on fp32/fp16, bf16 (8 mantissa bits) 3e-2.
    "norm": {D.FLOAT: (1e-4, 1e-4), D.HALF: (1e-2, 1e-2), D.BFLOAT16: (3e-2, 3e-2)},
}
ROW_TOL = {
    Row.BN_INFERENCE: "bn_inference", Row.BN_INFERENCE_INV: "bn_inference",
    Row.BN_TRAINING: "bn_training",
    Row.BN_TRAINING_ACT: "bn_training", Row.BN_BACKWARD: "bn_backward",
    Row.BN_INF_DRELU_BN_BWD: "bn_backward", Row.CONV_FPROP: "conv_fprop",
    Row.CONV_DGRAD: "conv_dgrad", Row.CONV_WGRAD: "conv_wgrad", Row.CONV_BIAS_ACT: "conv_fprop",
    Row.BN_INFERENCE_ACT: "bn_inference", Row.BN_INFERENCE_INV_ACT: "bn_inference",
    Row.POINTWISE_ACT: "pointwise", Row.POINTWISE_BINARY: "pointwise",
    Row.LAYERNORM: "norm", Row.LAYERNORM_BACKWARD: "norm", Row.RMSNORM: "norm",
    Row.RMSNORM_BACKWARD: "norm",
}


@dataclass
class Case:
    """A graph of one seed row, host inputs (by tensor) and the PyTorch reference per output."""

    row: Row
    graph: Graph
    dtype: DataType
    layout: str
    inputs: dict[Any, np.ndarray] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)   # role -> Tensor
    expected: dict[str, np.ndarray] = field(default_factory=dict)  # role -> float32 logical
    #: What the graph asks of MIOpen, as the builder set it (tests read back what MIOpen holds and
    #: compare): convolution "padding"/"stride"/"dilation" (per axis) and "groups"; batchnorm
    #: "epsilon"/"momentum"; activation "lower"/"upper" clips ("act" present when there is one).
    args: dict[str, Any] = field(default_factory=dict)

    def tol(self) -> tuple[float, float]:
        return TOL[ROW_TOL[self.row]][self.dtype]

    def empty_outputs(self) -> dict[str, np.ndarray]:
        if self.layout not in LAYOUTS:  # NCL / NLC
            return {role: _host(np.zeros(t.dim, np.float32), DataType(t.data_type), self.layout)
                    for role, t in self.outputs.items()}
        return {role: host_array(np.zeros(t.dim, np.float32), DataType(t.data_type), self.layout
                                 if len(t.dim) == len(LAYOUTS[self.layout]) and t.dim[0] != 1
                                 else None)
                for role, t in self.outputs.items()}


def host_array(logical: np.ndarray, dtype: DataType, layout: str | None) -> np.ndarray:
    """A host array holding ``logical`` (N,C,...) in ``dtype``, stored in ``layout`` order."""
    order = ORDERS[layout] if layout else tuple(range(logical.ndim))
    phys = np.ascontiguousarray(logical.transpose(order)).astype(NP[dtype])
    return phys.transpose(np.argsort(order))


def _rq(a: np.ndarray, dtype: DataType) -> np.ndarray:
    """Round through ``dtype`` (what the engine actually sees), back to float32."""
    return a.astype(NP[dtype]).astype(np.float32)


def _data(g: Graph, name: str, dims: tuple[int, ...], dtype: DataType, layout: str) -> Any:
    return g.tensor(dim=list(dims), stride=list(_strides(dims, layout)), data_type=dtype,
                    name=name)


def _param(g: Graph, name: str, c: int, rank: int) -> Any:
    dims = (1, c) + (1,) * (rank - 2)
    return g.tensor(dim=list(dims), stride=list(packed_strides(dims)), data_type=D.FLOAT, name=name)


def _out(t: Any, layout: str | None) -> Any:
    t.set_output(True)
    if layout is not None:
        t.set_stride(list(_strides(tuple(t.dim), layout)))
    return t


def new_graph(dtype: DataType) -> Graph:
    return Graph(io_data_type=dtype, intermediate_data_type=D.FLOAT, compute_data_type=D.FLOAT)


# ------------------------------------------------------------------------------------ references
def _torch() -> Any:
    return pytest.importorskip("torch")


def act_ref(x: Any, lower: float | None, upper: float | None) -> Any:
    """RELU_FWD with clips (cudnn semantics): max(x, lower or 0), then min(., upper)."""
    torch = _torch()
    y = torch.clamp(x, min=0.0 if lower is None else lower)
    return y if upper is None else torch.clamp(y, max=upper)


def act_grad_mask(x: Any, lower: float | None, upper: float | None) -> Any:
    lo = 0.0 if lower is None else lower
    m = x > lo
    return m if upper is None else m & (x < upper)


def _conv_fn(rank: int) -> Any:
    torch = _torch()
    return {3: torch.nn.functional.conv1d, 4: torch.nn.functional.conv2d,
            5: torch.nn.functional.conv3d}[rank]


# ------------------------------------------------------------------------------------- builders
def per_axis(value: int | Sequence[int], n: int, what: str) -> list[int]:
    """``value`` for each of ``n`` spatial axes (an int is repeated)."""
    out = [int(value)] * n if isinstance(value, int) else [int(v) for v in value]
    if len(out) != n:
        raise ValueError(f"{what}: {len(out)} values for {n} spatial axes")
    return out


def random_geometry(seed: int, n: int) -> dict[str, list[int]]:
    """Per-axis convolution geometry drawn from ``seed`` for ``n`` spatial axes, every axis
    different from every other in padding, stride and dilation (so an engine that passes one
    axis's value for another, or the axes in reverse order, computes something else), kernel
    sizes >= 2 (dilation matters) and spatial sizes giving 2-3 output positions per axis."""
    rng = np.random.default_rng(seed)
    pad = [int(v) for v in rng.permutation([0, 1, 2])[:n]]
    stride = [int(v) for v in rng.permutation([1, 2, 3])[:n]]
    dilation = [int(v) for v in rng.permutation([1, 2, 3])[:n]]
    kernel = [int(rng.integers(2, 4)) for _ in range(n)]
    spatial = []
    for i in range(n):
        if dilation[i] * (kernel[i] - 1) + 1 <= pad[i]:
            kernel[i] = 3  # padding smaller than the dilated kernel
        eff = dilation[i] * (kernel[i] - 1) + 1
        out = int(rng.integers(2, 4))
        size = eff - 2 * pad[i] + stride[i] * (out - 1) + int(rng.integers(0, stride[i]))
        spatial.append(max(size, 1))
    return {"padding": pad, "stride": stride, "dilation": dilation, "kernel": kernel,
            "spatial": spatial}


def conv_case(row: Row, dtype: DataType, layout: str, seed: int = 0, *, groups: int = 1,
              stride: int | Sequence[int] = 1, dilation: int | Sequence[int] = 1,
              padding: int | Sequence[int] = 1, kernel: int | Sequence[int] = 3,
              spatial: Sequence[int] | None = None,
              infer_output_strides: bool = False) -> Case:
    """conv fprop / dgrad / wgrad, padding 1 and 3-wide kernels unless given (optionally grouped,
    strided, dilated; padding, stride, dilation, kernel: one value or one per spatial axis;
    ``spatial``: the input's spatial dims); with ``infer_output_strides`` the output's strides
    are left to inference (they follow the input)."""
    torch = _torch()
    rng = np.random.default_rng(seed)
    rank = len(ORDERS[layout])
    n = rank - 2
    c_in = 4 if groups == 1 else 2 * groups
    sp = tuple(spatial) if spatial is not None else {3: (9,), 4: (7, 6), 5: (4, 5, 4)}[rank]
    xd = (2, c_in, *sp)
    k = 3 if groups == 1 else 2 * groups
    wd = (k, c_in // groups, *per_axis(kernel, n, "kernel"))
    geo = {"padding": per_axis(padding, n, "padding"), "stride": per_axis(stride, n, "stride"),
           "dilation": per_axis(dilation, n, "dilation")}
    tgeo: dict[str, Any] = {key: tuple(v) for key, v in geo.items()}
    tgeo["groups"] = groups
    x = _rq(rng.standard_normal(xd, np.float32), dtype)
    w = _rq(rng.standard_normal(wd, np.float32) * 0.3, dtype)
    conv = _conv_fn(rank)
    yd = tuple(conv(torch.from_numpy(x), torch.from_numpy(w), **tgeo).shape)
    g = new_graph(dtype)
    c = Case(row, g, dtype, layout, args={**geo, "groups": groups, "dims": (xd, wd, yd)})
    out_layout = None if infer_output_strides else layout
    if row == Row.CONV_FPROP:
        tx, tw = _data(g, "x", xd, dtype, layout), _data(g, "w", wd, dtype, layout)
        ty = _out(g.conv_fprop(tx, tw, name="conv", **geo), out_layout)
        c.inputs = {tx: host_array(x, dtype, layout), tw: host_array(w, dtype, layout)}
        c.outputs = {"y": ty}
        c.expected = {"y": conv(torch.from_numpy(x), torch.from_numpy(w), **tgeo).numpy()}
    elif row == Row.CONV_DGRAD:
        dy = _rq(rng.standard_normal(yd, np.float32), dtype)
        tdy, tw = _data(g, "dy", yd, dtype, layout), _data(g, "w", wd, dtype, layout)
        tdx = g.conv_dgrad(tdy, tw, name="dgrad", **geo)
        tdx.set_dim(list(xd))
        tdx = _out(tdx, out_layout)
        c.inputs = {tdy: host_array(dy, dtype, layout), tw: host_array(w, dtype, layout)}
        c.outputs = {"dx": tdx}
        xt = torch.from_numpy(x).requires_grad_(True)
        conv(xt, torch.from_numpy(w), **tgeo).backward(torch.from_numpy(dy))
        c.expected = {"dx": xt.grad.numpy()}
    else:
        dy = _rq(rng.standard_normal(yd, np.float32), dtype)
        tx, tdy = _data(g, "x", xd, dtype, layout), _data(g, "dy", yd, dtype, layout)
        tdw = g.conv_wgrad(tx, tdy, name="wgrad", **geo)
        tdw.set_dim(list(wd))
        tdw = _out(tdw, out_layout)
        c.inputs = {tx: host_array(x, dtype, layout), tdy: host_array(dy, dtype, layout)}
        c.outputs = {"dw": tdw}
        wt = torch.from_numpy(w).requires_grad_(True)
        conv(torch.from_numpy(x), wt, **tgeo).backward(torch.from_numpy(dy))
        c.expected = {"dw": wt.grad.numpy()}
    return c


def conv_bias_act_case(dtype: DataType, layout: str, *, bias: bool = True,
                       lower: float | None = None, upper: float | None = None,
                       seed: int = 0, bias_compute: DataType | None = None,
                       bias_dtype: DataType | None = None, padding: int | Sequence[int] = 1,
                       stride: int | Sequence[int] = 1, dilation: int | Sequence[int] = 1,
                       spatial: Sequence[int] | None = None) -> Case:
    """conv fprop (+ bias ADD) + RELU_FWD; conv Y virtual FP32, bias compute = ``bias_compute``
    (default: the input type; DataType.NOT_SET leaves it to the graph's FLOAT, as cudnn-frontend's
    samples do), bias in ``bias_dtype`` (default: the input type); padding 1, stride 1,
    dilation 1 unless given (one value or one per spatial axis), ``spatial``: the input's
    spatial dims."""
    torch = _torch()
    rng = np.random.default_rng(seed)
    rank = len(ORDERS[layout])
    n = rank - 2
    sp = tuple(spatial) if spatial is not None else {3: (9,), 4: (5, 5), 5: (3, 4, 4)}[rank]
    xd = (2, 3, *sp) if rank == 5 else (2, 4, *sp)
    wd = {3: (3, xd[1], 3), 4: (3, xd[1], 3, 3), 5: (4, xd[1], 3, 3, 3)}[rank]
    geo = {"padding": per_axis(padding, n, "padding"), "stride": per_axis(stride, n, "stride"),
           "dilation": per_axis(dilation, n, "dilation")}
    tgeo = {key: tuple(v) for key, v in geo.items()}
    x = _rq(rng.standard_normal(xd, np.float32), dtype)
    w = _rq(rng.standard_normal(wd, np.float32) * 0.3, dtype)
    b = _rq(rng.standard_normal((1, wd[0]) + (1,) * (rank - 2), np.float32), dtype)
    g = new_graph(dtype)
    tx, tw = _data(g, "x", xd, dtype, layout), _data(g, "w", wd, dtype, layout)
    cy = g.conv_fprop(tx, tw, name="conv", **geo)
    c = Case(Row.CONV_BIAS_ACT, g, dtype, layout,
             args={**geo, "groups": 1, "act": True, "lower": lower, "upper": upper})
    c.inputs = {tx: host_array(x, dtype, layout), tw: host_array(w, dtype, layout)}
    ref = _conv_fn(rank)(torch.from_numpy(x), torch.from_numpy(w), **tgeo)
    c.args["dims"] = (xd, wd, tuple(ref.shape))
    if bias:
        bdt = dtype if bias_dtype is None else bias_dtype
        tb = g.tensor(dim=list(b.shape), stride=list(packed_strides(b.shape)), data_type=bdt,
                      name="b")
        ct = dtype if bias_compute is None else bias_compute
        kw = {} if ct == D.NOT_SET else {"compute_data_type": ct}
        cy = g.bias(cy, tb, name="bias", **kw)
        c.inputs[tb] = host_array(b, bdt, None)
        ref = ref + torch.from_numpy(b)
    ty = _out(g.relu(cy, lower_clip=lower, upper_clip=upper, name="act"), layout)
    c.outputs = {"y": ty}
    c.expected = {"y": act_ref(ref, lower, upper).numpy()}
    return c


#: The batchnorm rows' epsilon and momentum unless a test gives others: not MIOpen's and hipDNN's
#: defaults (1e-5, 0.1), so an engine passing a default where the graph's value belongs computes
#: something else on every lane that runs the seed rows.
SEED_EPSILON, SEED_MOMENTUM = 1e-3, 0.2


def _bn_shape(layout: str) -> tuple[int, ...]:
    return {3: (2, 3, 11), 4: (2, 3, 4, 4), 5: (2, 3, 2, 3, 3)}[len(ORDERS[layout])]


def _bn_params(rng: np.random.Generator, c: int) -> dict[str, np.ndarray]:
    return {"scale": (rng.random(c, np.float32) + 0.5), "bias": rng.standard_normal(c, np.float32),
            "mean": rng.standard_normal(c, np.float32) * 0.1,
            "variance": rng.random(c, np.float32) + 0.5}


def _p(v: np.ndarray, rank: int) -> np.ndarray:
    return v.reshape((1, -1) + (1,) * (rank - 2)).astype(np.float32)


def bn_inference_case(dtype: DataType, layout: str, seed: int = 0, *, inv: bool = False,
                      eps: float = SEED_EPSILON, activation: bool = False, lower: float | None = None,
                      upper: float | None = None, variance_scale: float = 1.0) -> Case:
    """BN inference with variance (batchnorm_inference_variance_ext) and ``eps``, or with the
    inverse variance 1/sqrt(var + eps) when ``inv``; with ``activation`` followed by RELU_FWD
    (clips ``lower``/``upper``), the batchnorm's Y virtual FP32. The variances are 0.5 .. 1.5
    times ``variance_scale``."""
    rng = np.random.default_rng(seed)
    xd = _bn_shape(layout)
    rank = len(xd)
    x = _rq(rng.standard_normal(xd, np.float32), dtype)
    p = _bn_params(rng, xd[1])
    p["variance"] = (p["variance"] * np.float32(variance_scale)).astype(np.float32)
    g = new_graph(dtype)
    tx = _data(g, "x", xd, dtype, layout)
    tp = {k: _param(g, k, xd[1], rank) for k in p}
    if inv:
        p["variance"] = (1.0 / np.sqrt(p["variance"].astype(np.float64) + eps)).astype(np.float32)
        ty = g.batchnorm_inference(tx, tp["mean"], tp["variance"], tp["scale"], tp["bias"],
                                   name="bn")
    else:
        ty = g.batchnorm_inference(tx, tp["mean"], scale=tp["scale"], bias=tp["bias"],
                                   variance=tp["variance"], epsilon=eps, name="bn")
    if activation:
        ty = g.relu(ty, lower_clip=lower, upper_clip=upper, name="act")
    ty = _out(ty, layout)
    row = ((Row.BN_INFERENCE_INV_ACT if inv else Row.BN_INFERENCE_ACT) if activation
           else Row.BN_INFERENCE_INV if inv else Row.BN_INFERENCE)
    c = Case(row, g, dtype, layout, args={"epsilon": 0.0 if inv else eps})  # inv: MIOpen must add no epsilon
    c.inputs = {tx: host_array(x, dtype, layout), **{tp[k]: _p(v, rank) for k, v in p.items()}}
    c.outputs = {"y": ty}
    pp = {k: _p(v, rank).astype(np.float64) for k, v in p.items()}
    inv_std = pp["variance"] if inv else 1.0 / np.sqrt(pp["variance"] + eps)
    y = (x - pp["mean"]) * inv_std * pp["scale"] + pp["bias"]
    if activation:
        y = act_ref(_torch().from_numpy(y), lower, upper).numpy()
    c.expected = {"y": y.astype(np.float32)}
    return c


#: Standalone activations: name -> (graph builder keywords, torch reference).
ACTIVATIONS: dict[str, tuple[dict[str, Any], Callable[[Any], Any]]] = {
    "relu": ({}, lambda x: act_ref(x, None, None)),
    "clipped_relu": ({"upper_clip": 0.7}, lambda x: act_ref(x, None, 0.7)),
    "clamp": ({"lower_clip": -0.4, "upper_clip": 0.9}, lambda x: act_ref(x, -0.4, 0.9)),
    "leaky_relu": ({"negative_slope": 0.1},
                   lambda x: _torch().nn.functional.leaky_relu(x, 0.1)),
    "sigmoid": ({}, lambda x: _torch().sigmoid(x)),
    "tanh": ({}, lambda x: _torch().tanh(x)),
}


def _spatial_dims(layout: str) -> tuple[int, ...]:
    rank = len(LAYOUTS[layout]) if layout in LAYOUTS else 3
    return {3: (2, 3, 7), 4: (2, 3, 4, 5), 5: (2, 3, 2, 3, 4)}[rank]


def _strides(dims: tuple[int, ...], layout: str) -> tuple[int, ...]:
    if layout == "NCL":
        return packed_strides(dims)
    if layout == "NLC":
        return (dims[1] * dims[2], 1, dims[1])
    return packed_strides(dims, layout)


def pointwise_act_case(dtype: DataType, layout: str, seed: int = 0, *,
                       act: str = "leaky_relu") -> Case:
    """One standalone activation node (``act`` of :data:`ACTIVATIONS`) over a dense tensor."""
    torch = _torch()
    rng = np.random.default_rng(seed)
    dims = _spatial_dims(layout)
    x = _rq(rng.standard_normal(dims, np.float32) * 1.5, dtype)
    g = new_graph(dtype)
    tx = g.tensor(dim=list(dims), stride=list(_strides(dims, layout)), data_type=dtype, name="x")
    kw, ref = ACTIVATIONS[act]
    if act == "sigmoid":
        ty = g.sigmoid(tx, name="act")
    elif act == "tanh":
        ty = g.tanh(tx, name="act")
    else:
        ty = g.relu(tx, name="act", **kw)
    ty.set_output(True)
    ty.set_stride(list(_strides(dims, layout)))
    c = Case(Row.POINTWISE_ACT, g, dtype, layout)
    c.inputs = {tx: _host(x, dtype, layout)}
    c.outputs = {"y": ty}
    c.expected = {"y": ref(torch.from_numpy(x)).numpy()}
    return c


#: Standalone binary ops: name -> numpy reference.
BINARY_OPS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
}


def pointwise_binary_case(dtype: DataType, layout: str, seed: int = 0, *, op: str = "sub",
                          b_dims: tuple[int, ...] | None = None) -> Case:
    """One standalone binary node ``op``: IN_0 full shape, IN_1 broadcast per channel (or
    ``b_dims``), all packed in ``layout``."""
    from hipdnn.core.types import PointwiseMode

    rng = np.random.default_rng(seed)
    dims = _spatial_dims(layout)
    bd = b_dims if b_dims is not None else (1, dims[1]) + (1,) * (len(dims) - 2)
    a = _rq(rng.standard_normal(dims, np.float32), dtype)
    b = _rq(rng.standard_normal(bd, np.float32), dtype)
    g = new_graph(dtype)
    ta = g.tensor(dim=list(dims), stride=list(_strides(dims, layout)), data_type=dtype, name="a")
    tb = g.tensor(dim=list(bd), stride=list(_strides(bd, layout)), data_type=dtype, name="b")
    tc = g.pointwise(PointwiseMode[op.upper()], ta, tb, name=op)
    tc.set_output(True)
    tc.set_stride(list(_strides(dims, layout)))
    c = Case(Row.POINTWISE_BINARY, g, dtype, layout)
    c.inputs = {ta: _host(a, dtype, layout), tb: _host(b, dtype, layout)}
    c.outputs = {"c": tc}
    c.expected = {"c": BINARY_OPS[op](a, b).astype(np.float32)}
    return c


def _host(logical: np.ndarray, dtype: DataType, layout: str) -> np.ndarray:
    return host_array(logical, dtype, layout)


def bn_training_case(dtype: DataType, layout: str, *, running: bool = False,
                     activation: bool = False, lower: float | None = None,
                     upper: float | None = None, seed: int = 0, eps: float = SEED_EPSILON,
                     momentum: float = SEED_MOMENTUM) -> Case:
    """BN training (batch stats; running stats with ``momentum`` when ``running``), optionally
    + RELU_FWD."""
    torch = _torch()
    rng = np.random.default_rng(seed)
    xd = _bn_shape(layout)
    rank, ch = len(xd), xd[1]
    x = _rq(rng.standard_normal(xd, np.float32) * 2 + 0.5, dtype)
    p = _bn_params(rng, ch)
    g = new_graph(dtype)
    tx = _data(g, "x", xd, dtype, layout)
    ts, tb = _param(g, "scale", ch, rank), _param(g, "bias", ch, rank)
    kw: dict[str, Any] = {}
    if running:
        trm, trv = _param(g, "running_mean", ch, rank), _param(g, "running_var", ch, rank)
        kw = {"momentum": momentum, "in_running_mean": trm, "in_running_var": trv}
    y, mean, inv, nrm, nrv = g.batchnorm(tx, ts, tb, eps, name="bn", **kw)
    row = Row.BN_TRAINING_ACT if activation else Row.BN_TRAINING
    c = Case(row, g, dtype, layout, args={"epsilon": eps})
    if running:
        c.args["momentum"] = momentum
    if activation:
        c.args.update(act=True, lower=lower, upper=upper)
    assert y is not None  # batchnorm's Y always exists (mean/inv/running are optional)
    if activation:
        y = g.relu(y, lower_clip=lower, upper_clip=upper, name="act")
    c.outputs = {"y": _out(y, layout), "mean": _out(mean, None), "inv_variance": _out(inv, None)}
    c.inputs = {tx: host_array(x, dtype, layout), ts: _p(p["scale"], rank), tb: _p(p["bias"], rank)}
    rm, rv = torch.from_numpy(p["mean"].copy()), torch.from_numpy(p["variance"].copy())
    if running:
        c.inputs[trm], c.inputs[trv] = _p(p["mean"], rank), _p(p["variance"], rank)
        c.outputs["next_running_mean"] = _out(nrm, None)
        c.outputs["next_running_variance"] = _out(nrv, None)
    xt = torch.from_numpy(x)
    ref = torch.nn.functional.batch_norm(xt, rm, rv, torch.from_numpy(p["scale"]),
                                         torch.from_numpy(p["bias"]), True, momentum, eps)
    dims = [0, *range(2, rank)]
    bm = xt.double().mean(dim=dims)
    bv = xt.double().var(dim=dims, unbiased=False)
    c.expected = {"y": (act_ref(ref, lower, upper) if activation else ref).numpy(),
                  "mean": _p(bm.float().numpy(), rank),
                  "inv_variance": _p((1.0 / torch.sqrt(bv + eps)).float().numpy(), rank)}
    if running:
        c.expected["next_running_mean"] = _p(rm.numpy(), rank)
        c.expected["next_running_variance"] = _p(rv.numpy(), rank)
    return c


def bn_backward_case(dtype: DataType, layout: str, *, drelu: bool = False,
                     lower: float | None = None, upper: float | None = None,
                     seed: int = 0) -> Case:
    """BN backward with saved stats; with ``drelu``: BN inference -> RELU_BWD -> BN backward."""
    torch = _torch()
    xd = _bn_shape(layout)
    rank, ch = len(xd), xd[1]
    eps = 1e-5
    dims = [0, *range(2, rank)]
    for s in range(seed, seed + 50):  # keep the recomputed pre-activation away from the kinks
        rng = np.random.default_rng(s)
        x = _rq(rng.standard_normal(xd, np.float32), dtype)
        dy = _rq(rng.standard_normal(xd, np.float32) * 0.2, dtype)
        p = _bn_params(rng, ch)
        xt = torch.from_numpy(x).double()
        mean = xt.mean(dim=dims)
        inv = 1.0 / torch.sqrt(xt.var(dim=dims, unbiased=False) + eps)
        pre = ((xt - torch.from_numpy(_p(mean.numpy(), rank))) * torch.from_numpy(_p(inv.numpy(), rank))
               * torch.from_numpy(_p(p["scale"], rank)) + torch.from_numpy(_p(p["bias"], rank)))
        kinks = [k for k in (0.0 if lower is None else lower, upper) if k is not None]
        if not drelu or all(float((pre - k).abs().min()) > 0.05 for k in kinks):
            break
    g = new_graph(dtype)
    tx, tdy = _data(g, "x", xd, dtype, layout), _data(g, "dy", xd, dtype, layout)
    ts, tm, ti = (_param(g, n, ch, rank) for n in ("scale", "mean", "inv_variance"))
    grad = torch.from_numpy(dy).double()
    c = Case(Row.BN_INF_DRELU_BN_BWD if drelu else Row.BN_BACKWARD, g, dtype, layout,
             args={"act": True, "lower": lower, "upper": upper} if drelu else {})
    c.inputs = {tx: host_array(x, dtype, layout), tdy: host_array(dy, dtype, layout),
                ts: _p(p["scale"], rank), tm: _p(mean.float().numpy(), rank),
                ti: _p(inv.float().numpy(), rank)}
    if drelu:
        tbias = _param(g, "bias", ch, rank)
        c.inputs[tbias] = _p(p["bias"], rank)
        by = g.batchnorm_inference(tx, tm, ti, ts, tbias, name="bn_inf")
        gdy = g.relu_backward(tdy, by, lower_clip=lower, upper_clip=upper, name="drelu")
        grad = grad * act_grad_mask(pre, lower, upper)
    else:
        gdy = tdy
    dx, dscale, dbias = g.batchnorm_backward(gdy, tx, ts, tm, ti, name="bn_bwd")
    c.outputs = {"dx": _out(dx, layout), "dscale": _out(dscale, None), "dbias": _out(dbias, None)}
    xr = torch.from_numpy(x).double().requires_grad_(True)
    sr = torch.from_numpy(p["scale"]).double().requires_grad_(True)
    br = torch.zeros(ch, dtype=torch.float64, requires_grad=True)
    torch.nn.functional.batch_norm(xr, None, None, sr, br, True, 0.0, eps).backward(grad)
    c.expected = {"dx": xr.grad.float().numpy(), "dscale": _p(sr.grad.float().numpy(), rank),
                  "dbias": _p(br.grad.float().numpy(), rank)}
    return c


#: The norm rows' cases normalize over C and the spatial axes in a channels-first layout (each
#: sample as a whole, torch's ``normalized_shape`` = X's dims but N) and over C alone in a
#: channels-last one (C innermost in memory: MIOpen is given (N, ..., C)).
NORM_ROWS = (Row.LAYERNORM, Row.LAYERNORM_BACKWARD, Row.RMSNORM, Row.RMSNORM_BACKWARD)


def _norm_param_dims(dims: tuple[int, ...], layout: str) -> tuple[int, ...]:
    if layout.endswith("C"):
        return (1, dims[1]) + (1,) * (len(dims) - 2)
    return (1, *dims[1:])


def norm_case(row: Row, dtype: DataType, layout: str, seed: int = 0, *,
              training: bool = True, eps: float = 1e-5, dims: tuple[int, ...] | None = None,
              stats_type: DataType | None = None, last_only: bool = False) -> Case:
    """One layernorm / RMSnorm node, forward (``training``: with its statistics) or backward,
    over ``dims`` (default by ``layout``) stored in ``layout``; SCALE/BIAS and the statistics
    in the data type (what MIOpen's kernels read and write) unless ``stats_type``;
    ``last_only``: over the last axis only (a transformer's (B, S, E) over E)."""
    torch = _torch()
    rng = np.random.default_rng(seed)
    dims = dims if dims is not None else _spatial_dims(layout)
    pdims = ((1,) * (len(dims) - 1) + (dims[-1],)) if last_only else _norm_param_dims(dims, layout)
    axes = tuple(i for i, d in enumerate(pdims) if d != 1)
    rms = row in (Row.RMSNORM, Row.RMSNORM_BACKWARD)
    st = stats_type or dtype
    x = _rq(rng.standard_normal(dims, np.float32) * 1.5 + 0.3, dtype)
    scale = _rq(rng.random(pdims, np.float32) + 0.5, dtype)
    bias = _rq(rng.standard_normal(pdims, np.float32), dtype)
    g = new_graph(dtype)
    tx = g.tensor(dim=list(dims), stride=list(_strides(dims, layout)), data_type=dtype, name="x")
    ts = g.tensor(dim=list(pdims), stride=list(packed_strides(pdims)), data_type=dtype, name="scale")
    c = Case(row, g, dtype, layout, args={"epsilon": eps})
    x64 = torch.from_numpy(x.astype(np.float64)).requires_grad_()
    s64 = torch.from_numpy(scale.astype(np.float64)).requires_grad_()
    b64 = torch.from_numpy(bias.astype(np.float64)).requires_grad_()
    if rms:
        inv = 1.0 / torch.sqrt((x64 * x64).mean(dim=axes, keepdim=True) + eps)
        y64 = x64 * inv * s64
        mean = None
    else:
        mean = x64.mean(dim=axes, keepdim=True)
        var = ((x64 - mean) ** 2).mean(dim=axes, keepdim=True)
        inv = 1.0 / torch.sqrt(var + eps)
        y64 = (x64 - mean) * inv * s64 + b64
    sdims = tuple(1 if i in axes else d for i, d in enumerate(dims))
    sstr = list(_strides(sdims, layout)) if layout in LAYOUTS else list(packed_strides(sdims))
    if row in (Row.LAYERNORM, Row.RMSNORM):
        tb = None
        if rms:
            outs = g.rmsnorm("TRAINING" if training else "INFERENCE", tx, ts, epsilon=eps, name="norm")
            y, tinv = outs[0], outs[1] if training else None
            tm = None
        else:
            tb = g.tensor(dim=list(pdims), stride=list(packed_strides(pdims)), data_type=dtype,
                          name="bias")
            y, tm, tinv = g.layernorm("TRAINING" if training else "INFERENCE", tx, ts, tb,
                                      epsilon=eps, name="norm")
        c.inputs = {tx: _host(x, dtype, layout), ts: scale.astype(NP[dtype])}
        if tb is not None:
            c.inputs[tb] = bias.astype(NP[dtype])
        y.set_data_type(dtype)
        c.outputs = {"y": _out(y, layout if layout in LAYOUTS else None)}
        if layout not in LAYOUTS:
            y.set_stride(list(_strides(dims, layout)))
        c.expected = {"y": y64.detach().numpy().astype(np.float32)}
        for role, t, v in (("mean", tm, mean), ("inv_variance", tinv, inv)):
            if t is not None and v is not None:
                t.set_data_type(st)
                t.set_output(True)
                t.set_stride(sstr)
                c.outputs[role] = t
                c.expected[role] = v.detach().numpy().astype(np.float32)
        c.graph.validate()  # uids assigned: callers key buffers by them
        return c
    # backward: the saved statistics as inputs (rounded to their type: the node's inputs, which
    # the gradient is taken at: y = (x - mean_in) * inv_in * scale + bias, then the chain rule
    # through mean and inv as functions of x, as cuDNN defines the backward node), dy random
    dy = _rq(rng.standard_normal(dims, np.float32), dtype)
    inv_h = _rq(inv.detach().numpy().astype(np.float32), st)
    inv_r = torch.from_numpy(inv_h.astype(np.float64))
    dy64 = torch.from_numpy(dy.astype(np.float64))
    mean_r = None if mean is None else torch.from_numpy(
        _rq(mean.detach().numpy().astype(np.float32), st).astype(np.float64))
    xhat = (x64.detach() if mean_r is None else x64.detach() - mean_r) * inv_r
    gs = dy64 * s64.detach()
    dx_ref = gs - xhat * (gs * xhat).mean(dim=axes, keepdim=True)
    if mean_r is not None:
        dx_ref = dx_ref - gs.mean(dim=axes, keepdim=True)
    dx_ref = dx_ref * inv_r
    red = tuple(i for i, d in enumerate(pdims) if d == 1)
    grads = {"dscale": (dy64 * xhat).sum(dim=red, keepdim=True), "dbias": dy64.sum(dim=red, keepdim=True)}
    y64.backward(dy64)  # torch's autograd agrees where the statistics are exact (checked below)
    assert x64.grad is not None and s64.grad is not None
    if st == D.FLOAT and dtype == D.FLOAT:
        np.testing.assert_allclose(dx_ref.numpy(), x64.grad.numpy(), rtol=1e-5, atol=1e-5)
    tdy = g.tensor(dim=list(dims), stride=list(_strides(dims, layout)), data_type=dtype, name="dy")
    tinv = g.tensor(dim=list(sdims), stride=sstr, data_type=st, name="inv_variance")
    c.inputs = {tx: _host(x, dtype, layout), ts: scale.astype(NP[dtype]), tdy: _host(dy, dtype, layout),
                tinv: inv_h.astype(NP[st])}
    if rms:
        dx, dscale, _ = g.rmsnorm_backward(tdy, tx, ts, tinv, False, name="norm_bwd")
        dbias = None
    else:
        tm = g.tensor(dim=list(sdims), stride=sstr, data_type=st, name="mean")
        c.inputs[tm] = _rq(mean.detach().numpy().astype(np.float32), st).astype(NP[st])  # type: ignore[union-attr]
        dx, dscale, dbias = g.layernorm_backward(tdy, tx, ts, tm, tinv, name="norm_bwd")
    dx.set_data_type(dtype)
    c.outputs = {"dx": _out(dx, layout if layout in LAYOUTS else None)}
    if layout not in LAYOUTS:
        dx.set_stride(list(_strides(dims, layout)))
    c.expected = {"dx": dx_ref.numpy().astype(np.float32)}
    for role, t, grad in (("dscale", dscale, grads["dscale"]), ("dbias", dbias, grads["dbias"])):
        if t is not None:
            t.set_data_type(dtype)
            c.outputs[role] = _out(t, None)
            c.expected[role] = grad.numpy().astype(np.float32)
    c.graph.validate()
    return c


def build(row: Row, dtype: DataType, layout: str, **kw: Any) -> Case:
    """The case for ``row``."""
    makers: dict[Row, Callable[..., Case]] = {
        Row.CONV_FPROP: lambda d, lay, **k: conv_case(Row.CONV_FPROP, d, lay, **k),
        Row.CONV_DGRAD: lambda d, lay, **k: conv_case(Row.CONV_DGRAD, d, lay, **k),
        Row.CONV_WGRAD: lambda d, lay, **k: conv_case(Row.CONV_WGRAD, d, lay, **k),
        Row.CONV_BIAS_ACT: conv_bias_act_case,
        Row.BN_INFERENCE: bn_inference_case,
        Row.BN_INFERENCE_INV: lambda d, lay, **k: bn_inference_case(d, lay, inv=True, **k),
        Row.BN_TRAINING: bn_training_case,
        Row.BN_TRAINING_ACT: lambda d, lay, **k: bn_training_case(d, lay, activation=True, **k),
        Row.BN_BACKWARD: bn_backward_case,
        Row.BN_INF_DRELU_BN_BWD: lambda d, lay, **k: bn_backward_case(d, lay, drelu=True, **k),
        Row.BN_INFERENCE_ACT: lambda d, lay, **k: bn_inference_case(d, lay, activation=True, **k),
        Row.BN_INFERENCE_INV_ACT: lambda d, lay, **k: bn_inference_case(d, lay, inv=True,
                                                                        activation=True, **k),
        Row.POINTWISE_ACT: pointwise_act_case,
        Row.POINTWISE_BINARY: pointwise_binary_case,
        **{r: (lambda d, lay, _r=r, **k: norm_case(_r, d, lay, **k)) for r in NORM_ROWS},
    }
    case = makers[row](dtype, layout, **kw)
    case.graph.validate()
    return case
