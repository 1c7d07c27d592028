"""Reference kernels vs PyTorch (CPU): every op x dtype x layout, DESIGN.md tolerances.

Inputs of every dtype are rounded from the same fp32 data; PyTorch computes in fp32 on the rounded
values, and the kernels (which compute in fp32 and return fp32) must match within the dtype's
tolerance. Layout views are strided (NHWC/NDHWC by transposition, optionally not packed).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from oracle_helpers import LAYOUTS_2D, LAYOUTS_3D, assert_close, in_layout, rounded, wait_for_child

from hipdnn.engines.reference import _bn
from hipdnn.engines.reference import _parallel as P
from hipdnn.engines.reference import kernels as K

torch = pytest.importorskip("torch")
F = torch.nn.functional

DTYPE_NAMES = ("fp32", "fp16", "bf16")
LAYOUTS = LAYOUTS_2D + LAYOUTS_3D

#: conv configs per spatial rank: (N, C, K, spatial, kernel, pre, post, stride, dilation, groups)
CONV_CASES: dict[int, list[tuple[Any, ...]]] = {
    2: [
        (2, 4, 6, (9, 7), (3, 3), (1, 0), (2, 1), (2, 1), (1, 2), 2),
        (2, 3, 5, (6, 6), (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 1),
    ],
    3: [
        (2, 4, 4, (5, 6, 5), (3, 2, 2), (1, 0, 1), (0, 1, 1), (2, 1, 1), (1, 2, 1), 2),
        (1, 3, 4, (4, 5, 4), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), (1, 1, 1), 1),
    ],
}


def _nsp(layout: str) -> int:
    return 3 if "D" in layout else 2


def torch_conv(
    x: np.ndarray, w: np.ndarray, dy: np.ndarray | None, pre: Any, post: Any, stride: Any, dil: Any, groups: int
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """y, dx, dw from PyTorch autograd (asymmetric padding via F.pad)."""
    nsp = x.ndim - 2
    xt = torch.tensor(x, dtype=torch.float32, requires_grad=True)
    wt = torch.tensor(w, dtype=torch.float32, requires_grad=True)
    pads = [p for i in reversed(range(nsp)) for p in (pre[i], post[i])]
    conv = F.conv2d if nsp == 2 else F.conv3d
    yt = conv(F.pad(xt, pads), wt, stride=tuple(stride), dilation=tuple(dil), groups=groups)
    if dy is None:
        return yt.detach().numpy(), None, None
    yt.backward(torch.tensor(dy, dtype=torch.float32))
    assert xt.grad is not None and wt.grad is not None
    return yt.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()


def _conv_data(case: tuple[Any, ...], dtype: str, seed: int = 0) -> dict[str, Any]:
    n, c, k, sp, ks, pre, post, st, dl, g = case
    rng = np.random.default_rng(seed)
    x = rounded(rng.uniform(-1, 1, (n, c, *sp)), dtype)
    w = rounded(rng.uniform(-1, 1, (k, c // g, *ks)), dtype)
    y0, _, _ = torch_conv(x, w, None, pre, post, st, dl, g)
    dy = rounded(rng.uniform(-1, 1, y0.shape), dtype)
    y, dx, dw = torch_conv(x, w, dy, pre, post, st, dl, g)
    return {"x": x, "w": w, "dy": dy, "y": y, "dx": dx, "dw": dw, "pre": pre, "post": post,
            "stride": st, "dil": dl, "groups": g}


@pytest.mark.parametrize("pad", [0, 3], ids=["packed", "strided"])
@pytest.mark.parametrize("case_idx", [0, 1])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_conv_all_directions(dtype: str, layout: str, case_idx: int, pad: int) -> None:
    d = _conv_data(CONV_CASES[_nsp(layout)][case_idx], dtype)
    x = in_layout(d["x"], layout, dtype, pad)
    dy = in_layout(d["dy"], layout, dtype, pad)
    w = in_layout(d["w"], layout, dtype)
    args = (d["pre"], d["post"], d["stride"], d["dil"], d["groups"])
    y = K.conv_fprop(x, w, *args)
    assert y.dtype == np.float32
    assert_close(y, d["y"], "conv_fprop", dtype, what="conv_fprop y")
    dx = K.conv_dgrad(dy, w, d["x"].shape, *args)
    assert dx.dtype == np.float32
    assert_close(dx, d["dx"], "conv_dgrad", dtype, what="conv_dgrad dx")
    dw = K.conv_wgrad(x, dy, d["w"].shape, *args)
    assert dw.dtype == np.float32
    assert_close(dw, d["dw"], "conv_wgrad", dtype, what="conv_wgrad dw")


def test_conv_mixed_layouts_and_1x1_gemm_path() -> None:
    """x channels-last with dy channels-first (and vice versa) still agree; 1x1 uses the plain GEMM."""
    case = (2, 6, 4, (5, 5), (1, 1), (0, 0), (0, 0), (1, 1), (1, 1), 1)
    d = _conv_data(case, "fp32")
    args = (d["pre"], d["post"], d["stride"], d["dil"], d["groups"])
    for lx, ldy in (("NHWC", "NCHW"), ("NCHW", "NHWC")):
        x, dy = in_layout(d["x"], lx, "fp32"), in_layout(d["dy"], ldy, "fp32")
        assert_close(K.conv_fprop(x, d["w"], *args), d["y"], "conv_fprop", "fp32", what=lx)
        assert_close(K.conv_dgrad(dy, d["w"], d["x"].shape, *args), d["dx"], "conv_dgrad", "fp32", what=ldy)
        assert_close(K.conv_wgrad(x, dy, d["w"].shape, *args), d["dw"], "conv_wgrad", "fp32", what=lx)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_conv_many_channels_switches_memory_order(layout: str) -> None:
    """>= 16 channels per group: the forward GEMM runs channels-last whatever the input order."""
    case = ((2, 32, 8, (6, 5), (3, 3), (1, 0), (0, 1), (1, 2), (1, 1), 2) if _nsp(layout) == 2 else
            (1, 16, 4, (4, 4, 3), (2, 3, 2), (1, 1, 0), (0, 1, 1), (1, 1, 2), (2, 1, 1), 1))
    d = _conv_data(case, "fp32")
    args = (d["pre"], d["post"], d["stride"], d["dil"], d["groups"])
    x, dy = in_layout(d["x"], layout, "fp32", 1), in_layout(d["dy"], layout, "fp32")
    assert_close(K.conv_fprop(x, d["w"], *args), d["y"], "conv_fprop", "fp32", what=layout)
    assert_close(K.conv_dgrad(dy, d["w"], d["x"].shape, *args), d["dx"], "conv_dgrad", "fp32",
                 what=layout)
    assert_close(K.conv_wgrad(x, dy, d["w"].shape, *args), d["dw"], "conv_wgrad", "fp32",
                 what=layout)


def test_conv_nan_and_inf_propagate_like_torch() -> None:
    case = (1, 2, 3, (6, 6), (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 1)
    d = _conv_data(case, "fp32")
    x = d["x"].copy()
    x[0, 0, 1, 1] = np.nan
    x[0, 1, 4, 4] = np.inf
    y_ref, _, _ = torch_conv(x, d["w"], None, d["pre"], d["post"], d["stride"], d["dil"], 1)
    for layout in LAYOUTS_2D:
        with np.errstate(invalid="ignore"):  # NaN through BLAS
            y = K.conv_fprop(in_layout(x, layout, "fp32"), d["w"], d["pre"], d["post"], d["stride"],
                             d["dil"], 1)
        assert_close(y, y_ref, "conv_fprop", "fp32", what=f"NaN/Inf conv {layout}")


def test_conv_rejects_bad_groups() -> None:
    with pytest.raises(ValueError, match="groups"):
        K.conv_fprop(np.zeros((1, 4, 3, 3)), np.zeros((2, 3, 1, 1)), [0, 0], [0, 0], [1, 1], [1, 1], 2)


# ---------------------------------------------------------------------------------- batchnorm


def _bn_data(layout: str, dtype: str, seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    shape = (3, 5, 4, 6) if _nsp(layout) == 2 else (2, 5, 3, 4, 3)
    x = rounded(rng.normal(1.5, 2.0, shape), dtype)
    dy = rounded(rng.normal(0.0, 1.0, shape), dtype)
    c = shape[1]
    return {
        "x": x, "dy": dy,
        "scale": rng.uniform(0.5, 1.5, c).astype(np.float32),
        "bias": rng.uniform(-1, 1, c).astype(np.float32),
        "rmean": rng.uniform(-1, 1, c).astype(np.float32),
        "rvar": rng.uniform(0.5, 2, c).astype(np.float32),
    }


@pytest.mark.parametrize("pad", [0, 2], ids=["packed", "strided"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.usefixtures("bn_path")
def test_bn_training_forward_and_running_stats(dtype: str, layout: str, pad: int) -> None:
    d = _bn_data(layout, dtype)
    eps, momentum = 1e-5, 0.9  # large, so a missing M/(M-1) correction is detected
    rm, rv = torch.tensor(d["rmean"]), torch.tensor(d["rvar"])
    xt = torch.tensor(d["x"])
    y_ref = F.batch_norm(xt, rm, rv, torch.tensor(d["scale"]), torch.tensor(d["bias"]),
                         training=True, momentum=momentum, eps=eps).numpy()
    axes = (0, *range(2, xt.dim()))
    var_ref, mean_ref = torch.var_mean(xt, dim=axes, unbiased=False)
    y, mean, inv, unb = K.bn_train_forward(in_layout(d["x"], layout, dtype, pad), d["scale"], d["bias"], eps)
    assert y.dtype == mean.dtype == inv.dtype == unb.dtype == np.float32
    assert_close(y, y_ref, "bn_training", dtype, what="bn y")
    assert_close(mean, mean_ref.numpy(), "bn_training", dtype, what="bn saved mean")
    assert_close(inv, (1.0 / torch.sqrt(var_ref + eps)).numpy(), "bn_training", dtype, what="bn saved inv var")
    new_m, new_v = K.bn_running_update(d["rmean"], d["rvar"], mean, unb, momentum)
    assert_close(new_m, rm.numpy(), "bn_training", dtype, what="running mean")
    assert_close(new_v, rv.numpy(), "bn_training", dtype, what="running var (unbiased)")


@pytest.mark.usefixtures("bn_path")
def test_bn_single_element_per_channel_has_no_bessel_correction() -> None:
    x = np.arange(3, dtype=np.float32).reshape(1, 3, 1, 1)
    _, mean, inv, unb = K.bn_train_forward(x, np.ones(3), np.zeros(3), 1.0)
    np.testing.assert_array_equal(mean, [0, 1, 2])
    np.testing.assert_array_equal(unb, [0, 0, 0])
    np.testing.assert_array_equal(inv, [1, 1, 1])


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.usefixtures("bn_path")
def test_bn_inference_both_forms(dtype: str, layout: str) -> None:
    d = _bn_data(layout, dtype)
    eps = 1e-3
    xt = torch.tensor(d["x"])
    y_ref = F.batch_norm(xt, torch.tensor(d["rmean"]), torch.tensor(d["rvar"]), torch.tensor(d["scale"]),
                         torch.tensor(d["bias"]), training=False, eps=eps).numpy()
    x = in_layout(d["x"], layout, dtype, 1)
    y = K.bn_inference_variance(x, d["scale"], d["bias"], d["rmean"], d["rvar"], eps)
    assert_close(y, y_ref, "bn_inference", dtype, what="bn inference (variance)")
    inv = (1.0 / np.sqrt(d["rvar"].astype(np.float64) + eps)).astype(np.float32)
    y2 = K.bn_inference_inv_variance(x, d["scale"], d["bias"], d["rmean"], inv)
    assert_close(y2, y_ref, "bn_inference", dtype, what="bn inference (inv variance)")


@pytest.mark.parametrize("pad", [0, 2], ids=["packed", "strided"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.usefixtures("bn_path")
def test_bn_backward(dtype: str, layout: str, pad: int) -> None:
    d = _bn_data(layout, dtype)
    eps = 1e-5
    xt = torch.tensor(d["x"], requires_grad=True)
    gt = torch.tensor(d["scale"], requires_grad=True)
    bt = torch.tensor(d["bias"], requires_grad=True)
    F.batch_norm(xt, None, None, gt, bt, training=True, eps=eps).backward(torch.tensor(d["dy"]))
    axes = (0, *range(2, xt.dim()))
    var, mean = torch.var_mean(xt.detach(), dim=axes, unbiased=False)
    inv = (1.0 / torch.sqrt(var + eps)).numpy()
    dx, dscale, dbias = K.bn_backward(in_layout(d["dy"], layout, dtype, pad),
                                      in_layout(d["x"], layout, dtype, pad), d["scale"], mean.numpy(), inv)
    assert dx.dtype == dscale.dtype == dbias.dtype == np.float32
    assert xt.grad is not None and gt.grad is not None and bt.grad is not None
    assert_close(dx, xt.grad.numpy(), "bn_backward", dtype, what="bn dx")
    assert_close(dscale, gt.grad.numpy(), "bn_backward", dtype, what="bn dscale")
    assert_close(dbias, bt.grad.numpy(), "bn_backward", dtype, what="bn dbias")


@pytest.mark.usefixtures("bn_path")
def test_bn_nan_propagates_like_torch() -> None:
    x = np.random.default_rng(2).normal(size=(2, 3, 4, 4)).astype(np.float32)
    x[1, 1, 2, 2] = np.nan
    y_ref = F.batch_norm(torch.tensor(x), None, None, torch.ones(3), torch.zeros(3), training=True).numpy()
    y, mean, _, _ = K.bn_train_forward(x, np.ones(3), np.zeros(3), 1e-5)
    assert_close(y, y_ref, "bn_training", "fp32", what="NaN BN")
    assert np.isnan(mean[1]) and not np.isnan(mean[0])


def _bn_ref64(x: np.ndarray, dy: np.ndarray, g: np.ndarray, b: np.ndarray, mean: np.ndarray,
              inv: np.ndarray) -> tuple[np.ndarray, ...]:
    """float64 (y, mean, biased var) from x, and (dx, dscale, dbias) from the given mean/inv."""
    axes, shp = (0, *range(2, x.ndim)), (1, -1) + (1,) * (x.ndim - 2)
    x64, dy64, g64 = x.astype(np.float64), dy.astype(np.float64), g.astype(np.float64)
    m64, v64 = x64.mean(axis=axes), x64.var(axis=axes)
    y = (x64 - m64.reshape(shp)) / np.sqrt(v64.reshape(shp) + 1e-5) * g64.reshape(shp) + b.reshape(shp)
    xhat = (x64 - mean.astype(np.float64).reshape(shp)) * inv.astype(np.float64).reshape(shp)
    count = x.size // x.shape[1]
    dbias, dscale = dy64.sum(axis=axes), (dy64 * xhat).sum(axis=axes)
    dx = (g64 * inv).reshape(shp) / count * (count * dy64 - dbias.reshape(shp) - xhat * dscale.reshape(shp))
    return y, m64, v64, dx, dscale, dbias


@pytest.mark.parametrize("centre", [0.5, 3e3], ids=["one_pass", "two_pass"])
@pytest.mark.parametrize(("shape", "layout", "mode"), [
    ((6, 8, 16, 20), "NCHW", "tile"), ((2, 8, 16, 20), "NCHW", "col"),
    ((2, 3, 8, 8, 12), "NCDHW", "scalar"), ((6, 8, 16, 20), "NHWC", "cl"), ((3, 5, 4, 6, 5), "NDHWC", "cl"),
])
@pytest.mark.usefixtures("bn_path")
def test_bn_block_plans_match_float64(monkeypatch: pytest.MonkeyPatch, shape: tuple[int, ...], layout: str,
                                      mode: str, centre: float) -> None:
    """Small blocks and a low threading threshold run every block plan over several pool ranges; a
    mean of 1500 standard deviations takes the two-pass variance and the centred backward sums
    (the one-pass sums would lose every digit there)."""
    monkeypatch.setattr(_bn, "BLOCK", 1 << 10)
    monkeypatch.setattr(P, "PARALLEL_MIN_SIZE", 1 << 12)
    monkeypatch.setattr(_bn, "PART", 1 << 10)
    rng = np.random.default_rng(11)
    x = rng.normal(centre, 2.0, shape).astype(np.float32)
    dy = rng.normal(size=shape).astype(np.float32)
    c = shape[1]
    g, b = rng.uniform(0.5, 1.5, c).astype(np.float32), rng.uniform(-1, 1, c).astype(np.float32)
    xl, dyl = in_layout(x, layout, "fp32"), in_layout(dy, layout, "fp32")
    assert _bn._Plan(_bn.packed(xl)).mode == mode
    y, mean, inv, unb = K.bn_train_forward(xl, g, b, 1e-5)
    dx, dscale, dbias = K.bn_backward(dyl, xl, g, mean, inv)
    y_r, m_r, v_r, dx_r, ds_r, db_r = _bn_ref64(x, dy, g, b, mean, inv)
    count = x.size // c
    assert_close(y, y_r, "bn_training", "fp32", what=f"{mode} y")
    assert_close(mean, m_r, "bn_training", "fp32", what=f"{mode} mean")
    assert_close(unb, v_r * count / (count - 1), "bn_training", "fp32", what=f"{mode} unbiased var")
    assert_close(dx, dx_r, "bn_backward", "fp32", what=f"{mode} dx")
    assert_close(dscale, ds_r, "bn_backward", "fp32", what=f"{mode} dscale")
    assert_close(dbias, db_r, "bn_backward", "fp32", what=f"{mode} dbias")


@pytest.mark.usefixtures("bn_path")
def test_bn_constant_channel_and_mixed_layout_backward() -> None:
    """A constant channel has variance exactly 0; dy in another memory order than x is read right."""
    rng = np.random.default_rng(12)
    x = rng.normal(size=(4, 3, 8, 8)).astype(np.float32)
    x[:, 1] = np.float32(0.1)
    g, b = np.ones(3, np.float32), np.array([0.0, 0.5, 0.0], np.float32)
    y, mean, inv, unb = K.bn_train_forward(x, g, b, 1e-5)
    assert unb[1] == 0.0 and inv[1] == np.float32(1 / np.sqrt(1e-5))
    np.testing.assert_allclose(y[:, 1], 0.5, atol=1e-4)
    x, dy = rng.normal(size=(2, *x.shape)).astype(np.float32)
    _, mean, inv, _ = K.bn_train_forward(x, g, b, 1e-5)
    want = K.bn_backward(dy, x, g, mean, inv)
    got = K.bn_backward(dy, in_layout(x, "NHWC", "fp32"), g, mean, inv)
    for a, r in zip(got, want, strict=True):
        np.testing.assert_allclose(a, r, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------- relu

#: (lower_clip, upper_clip, negative_slope) and the PyTorch function with the same semantics
RELU_VARIANTS: dict[str, tuple[tuple[float | None, float | None, float | None], Any]] = {
    "relu": ((None, None, None), lambda t: F.relu(t)),
    "lower_clip": ((0.2, None, None), lambda t: F.threshold(t, 0.2, 0.2)),
    "lower_upper_clip": ((0.2, 0.7, None), lambda t: F.hardtanh(t, 0.2, 0.7)),
    "upper_clip": ((None, 6.0, None), lambda t: F.hardtanh(t, 0.0, 6.0)),
    "negative_slope": ((None, None, 0.1), lambda t: F.leaky_relu(t, 0.1)),
}


@pytest.mark.parametrize("variant", sorted(RELU_VARIANTS))
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_relu_forward_backward(dtype: str, layout: str, variant: str) -> None:
    (lo, hi, slope), fn = RELU_VARIANTS[variant]
    rng = np.random.default_rng(3)
    shape = (2, 3, 4, 5) if _nsp(layout) == 2 else (2, 3, 2, 4, 3)
    x = rounded(rng.normal(0.3, 4.0, shape), dtype)
    x.reshape(-1)[:4] = [np.nan, np.inf, -np.inf, 0.0]
    dy = rounded(rng.normal(size=shape), dtype)
    xt = torch.tensor(x, requires_grad=True)
    yt = fn(xt)
    yt.backward(torch.tensor(dy))
    assert xt.grad is not None
    y = K.relu_forward(in_layout(x, layout, dtype, 1), lo, hi, slope)
    dx = K.relu_backward(in_layout(dy, layout, dtype, 1), in_layout(x, layout, dtype), lo, hi, slope)
    assert y.dtype == dx.dtype == np.float32
    assert_close(y, yt.detach().numpy(), "pointwise", dtype, what=f"{variant} forward")
    assert_close(dx, xt.grad.numpy(), "pointwise", dtype, what=f"{variant} backward")


@pytest.mark.parametrize("layout", LAYOUTS_2D)
@pytest.mark.usefixtures("bn_path")
def test_bn_large_tensor_uses_threaded_chunks(layout: str) -> None:
    """>= 1M elements: statistics and outputs are computed chunk-parallel; same numbers."""
    rng = np.random.default_rng(8)
    x = rng.normal(0.5, 1.5, (6, 16, 112, 112)).astype(np.float32)
    dy = rng.normal(size=x.shape).astype(np.float32)
    assert x.size >= P.PARALLEL_MIN_SIZE and len(P.batch_chunks(x)) > 1
    g, b = np.linspace(0.5, 1.5, 16, dtype=np.float32), np.linspace(-1, 1, 16, dtype=np.float32)
    xt = torch.tensor(x, requires_grad=True)
    gt, bt = torch.tensor(g, requires_grad=True), torch.tensor(b, requires_grad=True)
    yt = F.batch_norm(xt, None, None, gt, bt, training=True, eps=1e-5)
    yt.backward(torch.tensor(dy))
    y, mean, inv, _ = K.bn_train_forward(in_layout(x, layout, "fp32"), g, b, 1e-5)
    assert_close(y, yt.detach().numpy(), "bn_training", "fp32", what="large bn y")
    dx, dg, db = K.bn_backward(in_layout(dy, layout, "fp32"), in_layout(x, layout, "fp32"), g, mean, inv)
    assert xt.grad is not None and gt.grad is not None and bt.grad is not None
    assert_close(dx, xt.grad.numpy(), "bn_backward", "fp32", what="large bn dx")
    assert_close(dg, gt.grad.numpy(), "bn_backward", "fp32", what="large bn dscale")
    assert_close(db, bt.grad.numpy(), "bn_backward", "fp32", what="large bn dbias")


@pytest.mark.parametrize("layout", LAYOUTS_2D)
def test_conv_large_im2col_uses_threaded_copy(layout: str) -> None:
    """An im2col of >= 1M elements is copied chunk-parallel; same numbers as PyTorch."""
    case = (2, 16, 8, (64, 64), (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 1)
    assert 2 * 64 * 64 * 16 * 9 >= P.PARALLEL_MIN_SIZE
    d = _conv_data(case, "fp32")
    args = (d["pre"], d["post"], d["stride"], d["dil"], d["groups"])
    x, dy = in_layout(d["x"], layout, "fp32"), in_layout(d["dy"], layout, "fp32")
    assert_close(K.conv_fprop(x, d["w"], *args), d["y"], "conv_fprop", "fp32", what=layout)
    assert_close(K.conv_wgrad(x, dy, d["w"].shape, *args), d["dw"], "conv_wgrad", "fp32",
                 what=layout)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_threaded_kernels_work_in_a_forked_child() -> None:
    import os

    x = np.random.default_rng(9).normal(size=(8, 8, 128, 128)).astype(np.float32)
    K.bn_train_forward(x, np.ones(8), np.zeros(8), 1e-5)  # the pool exists in the parent now
    pid = os.fork()
    if pid == 0:  # child: must not hang on the parent's (absent) pool threads
        y = K.bn_train_forward(x, np.ones(8), np.zeros(8), 1e-5)[0]
        os._exit(0 if np.isfinite(y).all() else 1)
    assert wait_for_child(pid, "a threaded kernel") == 0
