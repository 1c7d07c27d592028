"""Every seed-table row through the public graph API on CPU_REFERENCE_ENGINE vs PyTorch.

dtype (FP32/FP16/BF16 data; BN parameters FP32 as the seed table says) x layout (NCL, NLC,
NCHW, NHWC, NCDHW, NDHWC as strided views) x row, with DESIGN.md tolerances. PyTorch computes in FP32 on the
same rounded inputs with FP32 intermediates (the graphs use FLOAT intermediates); outputs are
compared after rounding both sides to the output dtype (``assert_close(round_to=...)``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from engine_helpers import run_on_reference
from oracle_helpers import (
    DTYPES,
    LAYOUTS_1D,
    LAYOUTS_2D,
    LAYOUTS_3D,
    assert_close,
    in_layout,
    rounded,
)

import hipdnn

torch = pytest.importorskip("torch")
F = torch.nn.functional

DTYPE_NAMES = ("fp32", "fp16", "bf16")
LAYOUTS = LAYOUTS_1D + LAYOUTS_2D + LAYOUTS_3D
HIP_DTYPE = {"fp32": hipdnn.DataType.FLOAT, "fp16": hipdnn.DataType.HALF,
             "bf16": hipdnn.DataType.BFLOAT16}
EPS = 1e-5


def _graph(dtype: str) -> hipdnn.Graph:
    return hipdnn.Graph(io_data_type=HIP_DTYPE[dtype], intermediate_data_type=hipdnn.DataType.FLOAT,
                        compute_data_type=hipdnn.DataType.FLOAT)


def _nsp(layout: str) -> int:
    return 3 if "D" in layout else 1 if "L" in layout else 2


def _t(a: np.ndarray | torch.Tensor) -> Any:
    return torch.tensor(np.asarray(a, dtype=np.float32))


# ---------------------------------------------------------------------------- convolution

#: spatial rank -> (N, C, K, spatial, kernel, pre, post, stride, dilation); groups = 2
CONV = {
    1: (2, 4, 6, (13,), (3,), (1,), (2,), (2,), (2,)),
    2: (2, 4, 6, (9, 7), (3, 3), (1, 0), (2, 1), (2, 1), (1, 2)),
    3: (2, 4, 4, (5, 6, 5), (3, 2, 2), (1, 0, 1), (0, 1, 1), (2, 1, 1), (1, 2, 1)),
}


def _conv_setup(dtype: str, layout: str, seed: int = 0) -> dict[str, Any]:
    n, c, k, sp, ks, pre, post, st, dl = CONV[_nsp(layout)]
    rng = np.random.default_rng(seed)
    x = rounded(rng.uniform(-1, 1, (n, c, *sp)), dtype)
    w = rounded(rng.uniform(-1, 1, (k, c // 2, *ks)), dtype)
    pads = [p for i in reversed(range(len(sp))) for p in (pre[i], post[i])]
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[len(sp)]
    xt, wt = _t(x).requires_grad_(), _t(w).requires_grad_()
    y = conv(F.pad(xt, pads), wt, stride=st, dilation=dl, groups=2)
    dy = rounded(rng.uniform(-1, 1, tuple(y.shape)), dtype)
    y.backward(_t(dy))
    return {"x": x, "w": w, "dy": dy, "y": y.detach().numpy(), "dx": xt.grad.numpy(),
            "dw": wt.grad.numpy(), "geo": {"pre_padding": pre, "post_padding": post,
                                            "stride": st, "dilation": dl},
            "bias": rng.uniform(-1, 1, (1, k) + (1,) * len(sp)).astype(np.float32)}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_conv_fprop(dtype: str, layout: str) -> None:
    d = _conv_setup(dtype, layout)
    g = _graph(dtype)
    x = g.tensor_like(in_layout(d["x"], layout, dtype, 1), "x")
    w = g.tensor_like(in_layout(d["w"], layout, dtype), "w")
    y = g.conv_fprop(x, w, **d["geo"]).set_output(True)
    (out,) = run_on_reference(g, {x: in_layout(d["x"], layout, dtype, 1),
                                  w: in_layout(d["w"], layout, dtype)}, [y])
    assert out.strides == in_layout(np.zeros(out.shape), layout, dtype).strides  # layout kept
    assert_close(out, d["y"], "conv_fprop", dtype, round_to=dtype, what="conv fprop")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_conv_dgrad(dtype: str, layout: str) -> None:
    d = _conv_setup(dtype, layout)
    g = _graph(dtype)
    dy = g.tensor_like(in_layout(d["dy"], layout, dtype), "dy")
    w = g.tensor_like(in_layout(d["w"], layout, dtype), "w")
    dx = g.conv_dgrad(dy, w, **d["geo"]).set_output(True)
    dx.set_dim(d["x"].shape)
    (out,) = run_on_reference(g, {dy: in_layout(d["dy"], layout, dtype),
                                  w: in_layout(d["w"], layout, dtype)}, [dx])
    assert_close(out, d["dx"], "conv_dgrad", dtype, round_to=dtype, what="conv dgrad")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_conv_wgrad(dtype: str, layout: str) -> None:
    d = _conv_setup(dtype, layout)
    g = _graph(dtype)
    x = g.tensor_like(in_layout(d["x"], layout, dtype), "x")
    dy = g.tensor_like(in_layout(d["dy"], layout, dtype, 2), "dy")
    dw = g.conv_wgrad(x, dy, **d["geo"]).set_output(True)
    dw.set_dim(d["w"].shape)
    (out,) = run_on_reference(g, {x: in_layout(d["x"], layout, dtype),
                                  dy: in_layout(d["dy"], layout, dtype, 2)}, [dw])
    assert_close(out, d["dw"], "conv_wgrad", dtype, round_to=dtype, what="conv wgrad")


@pytest.mark.parametrize("act", ["relu", "clipped", "clamp", "none"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_conv_bias_activation(dtype: str, layout: str, act: str) -> None:
    """Conv + bias + ReLU / clipped ReLU / clamp (and conv + clipped ReLU without bias)."""
    d = _conv_setup(dtype, layout)
    clips = {"relu": (None, None), "clipped": (None, 0.7), "clamp": (0.2, 0.7), "none": (None, 0.7)}
    lo, hi = clips[act]
    g = _graph(dtype)
    x = g.tensor_like(in_layout(d["x"], layout, dtype), "x")
    w = g.tensor_like(in_layout(d["w"], layout, dtype), "w")
    inputs: dict[Any, Any] = {x: in_layout(d["x"], layout, dtype), w: in_layout(d["w"], layout, dtype)}
    y = g.conv_fprop(x, w, **d["geo"])
    ref = torch.tensor(d["y"])
    if act != "none":  # "none": conv + clipped ReLU with no bias node
        b = g.tensor_like(d["bias"].astype(DTYPES[dtype]), "bias")
        inputs[b] = d["bias"].astype(DTYPES[dtype])
        y = g.bias(y, b)
        ref = ref + _t(rounded(d["bias"], dtype))
    out_t = g.relu(y, lower_clip=lo, upper_clip=hi).set_output(True)
    ref = torch.clamp(ref, 0.0 if lo is None else lo, hi) if hi is not None else F.relu(ref)
    (out,) = run_on_reference(g, inputs, [out_t])
    assert_close(out, ref.numpy(), "conv_fprop", dtype, round_to=dtype, what=f"conv+{act}")


# ---------------------------------------------------------------------------- batchnorm


def _bn_setup(dtype: str, layout: str, seed: int = 1) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    shape = {1: (3, 5, 13), 2: (3, 5, 4, 6), 3: (2, 5, 3, 4, 3)}[_nsp(layout)]
    c = shape[1]
    return {"x": rounded(rng.normal(1.5, 2.0, shape), dtype),
            "dy": rounded(rng.normal(0.0, 1.0, shape), dtype),
            "scale": rng.uniform(0.5, 1.5, c).astype(np.float32),
            "bias": rng.uniform(-1, 1, c).astype(np.float32),
            "rmean": rng.uniform(-1, 1, c).astype(np.float32),
            "rvar": rng.uniform(0.5, 2, c).astype(np.float32), "c": c}


def _params(g: hipdnn.Graph, d: dict[str, Any], names: tuple[str, ...], layout: str) -> list[Any]:
    """FP32 per-channel tensors (1, C[, 1, 1[, 1]] ...), to be backed by the (C,) arrays ``d[name]``."""
    dims = [1, int(d["c"])] + [1] * _nsp(layout)
    return [g.tensor(dim=dims, data_type=hipdnn.DataType.FLOAT, name=n) for n in names]


def _batch_stats(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    xt = torch.tensor(x)
    var, mean = torch.var_mean(xt, dim=(0, *range(2, xt.dim())), unbiased=False)
    return mean.numpy(), (1.0 / torch.sqrt(var + EPS)).numpy()


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_bn_inference_variance_and_inv_variance(dtype: str, layout: str) -> None:
    d = _bn_setup(dtype, layout)
    ref = F.batch_norm(_t(d["x"]), _t(d["rmean"]), _t(d["rvar"]), _t(d["scale"]), _t(d["bias"]),
                       training=False, eps=1e-3).numpy()
    for form in ("variance", "inv_variance"):
        g = _graph(dtype)
        x = g.tensor_like(in_layout(d["x"], layout, dtype, 1), "x")
        sc, bi, mu, var = _params(g, d, ("scale", "bias", "rmean", "rvar"), layout)
        if form == "variance":
            y = g.batchnorm_inference(x, mu, scale=sc, bias=bi, variance=var, epsilon=1e-3)
            v_val = d["rvar"]
        else:
            y = g.batchnorm_inference(x, mu, var, sc, bi)
            v_val = (1.0 / np.sqrt(d["rvar"].astype(np.float64) + 1e-3)).astype(np.float32)
        y.set_output(True)
        (out,) = run_on_reference(g, {x: in_layout(d["x"], layout, dtype, 1), sc: d["scale"],
                                      bi: d["bias"], mu: d["rmean"], var: v_val}, [y])
        assert_close(out, ref, "bn_inference", dtype, round_to=dtype, what=f"bn inference {form}")


@pytest.mark.parametrize("activation", [False, True], ids=["bn", "bn+relu"])
@pytest.mark.parametrize("running", [False, True], ids=["batch_stats", "running_stats"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_bn_training(dtype: str, layout: str, running: bool, activation: bool) -> None:
    d = _bn_setup(dtype, layout)
    momentum = 0.9  # large, so a missing M/(M-1) correction exceeds the tolerance
    rm, rv = _t(d["rmean"]), _t(d["rvar"])
    ref_y = F.batch_norm(_t(d["x"]), rm, rv, _t(d["scale"]), _t(d["bias"]), training=True,
                         momentum=momentum, eps=EPS)
    if activation:
        ref_y = F.relu(ref_y)
    mean_ref, inv_ref = _batch_stats(d["x"])
    g = _graph(dtype)
    x = g.tensor_like(in_layout(d["x"], layout, dtype, 1), "x")
    sc, bi, prm, prv = _params(g, d, ("scale", "bias", "rmean", "rvar"), layout)
    inputs: dict[Any, Any] = {x: in_layout(d["x"], layout, dtype, 1), sc: d["scale"], bi: d["bias"]}
    if running:
        y, mean, inv, nrm, nrv = g.batchnorm(x, sc, bi, EPS, momentum=momentum,
                                             in_running_mean=prm, in_running_var=prv)
        inputs.update({prm: d["rmean"], prv: d["rvar"]})
    else:
        y, mean, inv, nrm, nrv = g.batchnorm(x, sc, bi, EPS)
    assert y is not None and mean is not None and inv is not None
    if activation:
        y = g.relu(y)
    outs = [y, mean, inv] + ([nrm, nrv] if running else [])
    for t in outs:
        assert t is not None
        t.set_output(True)
    got = run_on_reference(g, inputs, outs)  # type: ignore[arg-type]
    assert_close(got[0], ref_y.numpy(), "bn_training", dtype, round_to=dtype, what="bn y")
    assert_close(got[1].reshape(-1), mean_ref, "bn_training", dtype, what="saved mean")
    assert_close(got[2].reshape(-1), inv_ref, "bn_training", dtype, what="saved inv variance")
    if running:
        assert_close(got[3].reshape(-1), rm.numpy(), "bn_training", dtype, what="running mean")
        assert_close(got[4].reshape(-1), rv.numpy(), "bn_training", dtype, what="running var")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_bn_backward(dtype: str, layout: str) -> None:
    d = _bn_setup(dtype, layout)
    xt = _t(d["x"]).requires_grad_()
    st, bt = _t(d["scale"]).requires_grad_(), _t(d["bias"]).requires_grad_()
    F.batch_norm(xt, None, None, st, bt, training=True, eps=EPS).backward(_t(d["dy"]))
    mean, inv = _batch_stats(d["x"])
    g = _graph(dtype)
    dy = g.tensor_like(in_layout(d["dy"], layout, dtype, 2), "dy")
    x = g.tensor_like(in_layout(d["x"], layout, dtype), "x")
    sc, mu, iv = _params(g, {**d, "mean": mean, "inv": inv}, ("scale", "mean", "inv"), layout)
    dx, dsc, dbi = g.batchnorm_backward(dy, x, sc, mu, iv)
    for t in (dx, dsc, dbi):
        t.set_output(True)
    got = run_on_reference(g, {dy: in_layout(d["dy"], layout, dtype, 2),
                               x: in_layout(d["x"], layout, dtype), sc: d["scale"], mu: mean,
                               iv: inv}, [dx, dsc, dbi])
    assert_close(got[0], xt.grad.numpy(), "bn_backward", dtype, round_to=dtype, what="bn dx")
    assert_close(got[1].reshape(-1), st.grad.numpy(), "bn_backward", dtype, what="bn dscale")
    assert_close(got[2].reshape(-1), bt.grad.numpy(), "bn_backward", dtype, what="bn dbias")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_bn_inference_drelu_bn_backward(dtype: str, layout: str) -> None:
    """Seed row "BN inference + DReLU + BN backward" with the saved batch statistics of x."""
    d = _bn_setup(dtype, layout)
    xt = _t(d["x"]).requires_grad_()
    st, bt = _t(d["scale"]).requires_grad_(), _t(d["bias"]).requires_grad_()
    F.relu(F.batch_norm(xt, None, None, st, bt, training=True, eps=EPS)).backward(_t(d["dy"]))
    mean, inv = _batch_stats(d["x"])
    g = _graph(dtype)
    x = g.tensor_like(in_layout(d["x"], layout, dtype), "x")
    dy = g.tensor_like(in_layout(d["dy"], layout, dtype), "dy")
    sc, bi, mu, iv = _params(g, {**d, "mean": mean, "inv": inv},
                             ("scale", "bias", "mean", "inv"), layout)
    y = g.batchnorm_inference(x, mu, iv, sc, bi)
    dy_masked = g.relu_backward(dy, y)
    dx, dsc, dbi = g.batchnorm_backward(dy_masked, x, sc, mu, iv)
    for t in (dx, dsc, dbi):
        t.set_output(True)
    got = run_on_reference(g, {x: in_layout(d["x"], layout, dtype), dy: in_layout(d["dy"], layout, dtype),
                               sc: d["scale"], bi: d["bias"], mu: mean, iv: inv}, [dx, dsc, dbi])
    assert_close(got[0], xt.grad.numpy(), "bn_backward", dtype, round_to=dtype, what="fused dx")
    assert_close(got[1].reshape(-1), st.grad.numpy(), "bn_backward", dtype, what="fused dscale")
    assert_close(got[2].reshape(-1), bt.grad.numpy(), "bn_backward", dtype, what="fused dbias")
