"""The emulated device's batchnorm, activation and tensor arithmetic: math vs PyTorch and MIOpen's rules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from emulated._client import Client
from emulated._testing import DevTensor, f32, fetch, put, scratch
from emulated.device import EmulatedDevice

from miopen_ctypes import errors

torch = pytest.importorskip("torch")

SPATIAL, PER_ACTIVATION = 1, 0
EPS, MOMENTUM = 1e-5, 0.1


@pytest.fixture
def client(emulated_device: EmulatedDevice) -> Iterator[Client]:
    with Client(emulated_device.miopen) as c:
        yield c


class Bn:
    """x, scale, bias (+ running mean/var) on the device; parameters fp32 1xCx1x1[x1]."""

    def __init__(self, dev: EmulatedDevice, client: Client, dims: tuple[int, ...], dtype: int = 1,
                 layout: str | None = None, mode: int = SPATIAL) -> None:
        rng = np.random.default_rng(3)
        self.dev, self.client, self.mode = dev, client, mode
        self.xa = (rng.standard_normal(dims) * 2 + 0.5).astype(np.float32)
        self.x = put(dev, client, self.xa, dtype, layout)
        self.xa = fetch(dev, self.x)  # what the device really holds (rounded to dtype)
        pdims = (1, dims[1], *((1,) * (len(dims) - 2))) if mode == SPATIAL else (1, *dims[1:])
        self.pdims = pdims
        self.scale_a = rng.uniform(0.5, 1.5, pdims).astype(np.float32)
        self.bias_a = rng.standard_normal(pdims).astype(np.float32)
        self.scale, self.bias = put(dev, client, self.scale_a), put(dev, client, self.bias_a)
        self.rmean = put(dev, client, np.zeros(pdims, np.float32))
        self.rvar = put(dev, client, np.ones(pdims, np.float32))
        self.dya = rng.standard_normal(dims).astype(np.float32)
        self.dy = put(dev, client, self.dya, dtype, layout)
        self.dya = fetch(dev, self.dy)
        self.dims, self.dtype, self.layout = dims, dtype, layout
        self.handle = client.handle()

    def out(self) -> DevTensor:
        return scratch(self.dev, self.client, self.dims, self.dtype, self.layout)

    def param(self) -> DevTensor:
        return scratch(self.dev, self.client, self.pdims)

    def torch_train(self) -> tuple[Any, ...]:
        x = torch.from_numpy(self.xa.astype(np.float64)).requires_grad_(True)
        rm, rv = torch.zeros(self.dims[1], dtype=torch.float64), torch.ones(self.dims[1], dtype=torch.float64)
        y = torch.nn.functional.batch_norm(x, rm, rv, torch.from_numpy(self.scale_a.ravel().astype(np.float64)),
                                           torch.from_numpy(self.bias_a.ravel().astype(np.float64)),
                                           training=True, momentum=MOMENTUM, eps=EPS)
        return x, y, rm, rv


def _train(lib: Any, b: Bn, y: DevTensor, run: tuple[Any, Any], save: tuple[Any, Any], alpha: float = 1.0) -> None:
    s = b.scale.desc
    lib.miopenBatchNormalizationForwardTraining_V2(
        b.handle, b.mode, f32(alpha), f32(0), b.x.desc, b.x.ptr, y.desc, y.ptr, s, s, s, s,
        b.scale.ptr, b.bias.ptr, MOMENTUM, run[0], run[1], EPS, save[0], save[1])


@pytest.mark.parametrize(("dims", "dtype", "layout"), [
    ((4, 3, 5, 6), 1, None), ((4, 3, 5, 6), 1, "NHWC"), ((3, 2, 3, 4, 5), 0, "NDHWC"), ((4, 3, 5, 6), 5, None),
], ids=["fp32-NCHW", "fp32-NHWC", "fp16-NDHWC", "bf16-NCHW"])
def test_bn_training_matches_torch(emulated_device: EmulatedDevice, client: Client, dims: tuple[int, ...],
                                   dtype: int, layout: str | None) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    b = Bn(dev, client, dims, dtype, layout)
    y, smean, sinv = b.out(), b.param(), b.param()
    _train(lib, b, y, (b.rmean.ptr, b.rvar.ptr), (smean.ptr, sinv.ptr))
    _, ty, rm, rv = b.torch_train()
    tol = {1: 4e-3, 0: 4e-3, 5: 8e-3}[dtype]
    np.testing.assert_allclose(fetch(dev, y), ty.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(fetch(dev, b.rmean).ravel(), rm.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fetch(dev, b.rvar).ravel(), rv.numpy(), rtol=1e-5, atol=1e-5)  # unbiased
    axes = tuple(i for i in range(len(dims)) if i != 1)
    np.testing.assert_allclose(fetch(dev, smean).ravel(), b.xa.mean(axis=axes), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fetch(dev, sinv).ravel(), 1 / np.sqrt(b.xa.var(axis=axes) + EPS), rtol=1e-4)


def test_bn_training_optional_outputs_and_rules(emulated_device: EmulatedDevice, client: Client) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    b = Bn(dev, client, (4, 3, 5, 6))
    y = b.out()
    _train(lib, b, y, (None, b.rvar.ptr), (None, None))  # one running pointer NULL: not updated
    assert (fetch(dev, b.rmean) == 0).all() and (fetch(dev, b.rvar) == 1).all()
    with pytest.raises(errors.MIOpenBadParmError):
        _train(lib, b, y, (None, None), (None, None), alpha=2.0)
    with pytest.raises(errors.MIOpenBadParmError):  # scale/bias are required
        lib.miopenBatchNormalizationForwardTraining_V2(
            b.handle, SPATIAL, f32(1), f32(0), b.x.desc, b.x.ptr, y.desc, y.ptr, *(b.scale.desc,) * 4,
            None, b.bias.ptr, MOMENTUM, None, None, EPS, None, None)
    padded = client.tensor(1, b.dims, (200, 60, 10, 1))  # not fully packed
    with pytest.raises(errors.MIOpenBadParmError):
        lib.miopenBatchNormalizationForwardTraining_V2(
            b.handle, SPATIAL, f32(1), f32(0), padded, b.x.ptr, padded, y.ptr, *(b.scale.desc,) * 4,
            b.scale.ptr, b.bias.ptr, MOMENTUM, None, None, EPS, None, None)
    bf16_params = client.tensor(5, b.pdims)
    with pytest.raises(errors.MIOpenBadParmError):  # params must be fp32 (or x's fp16)
        lib.miopenBatchNormalizationForwardTraining_V2(
            b.handle, SPATIAL, f32(1), f32(0), b.x.desc, b.x.ptr, y.desc, y.ptr, *(bf16_params,) * 4,
            b.scale.ptr, b.bias.ptr, MOMENTUM, None, None, EPS, None, None)


def test_bn_per_activation_training(emulated_device: EmulatedDevice, client: Client) -> None:
    dev = emulated_device
    b = Bn(dev, client, (5, 2, 3, 4), mode=PER_ACTIVATION)
    y = b.out()
    _train(dev.miopen, b, y, (None, None), (None, None))
    mean, var = b.xa.mean(axis=0, keepdims=True), b.xa.var(axis=0, keepdims=True)
    want = b.scale_a * (b.xa - mean) / np.sqrt(var + EPS) + b.bias_a
    np.testing.assert_allclose(fetch(dev, y), want, rtol=1e-4, atol=1e-4)


def test_bn_inference_matches_torch(emulated_device: EmulatedDevice, client: Client) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    # NHWC on 3.5; 3.4.0 has no channels-last inference solver (test_bn_inference_nhwc_on_34)
    b = Bn(dev, client, (4, 3, 5, 6), layout="NHWC" if dev.version_name == "3.5" else None)
    mean_a, var_a = np.array([[[[0.5]], [[-1.0]], [[2.0]]]], np.float32), np.array([[[[2.0]], [[0.5]], [[4.0]]]], np.float32)
    mean, var = put(dev, client, mean_a), put(dev, client, var_a)
    y = b.out()
    s = b.scale.desc
    lib.miopenBatchNormalizationForwardInference_V2(b.handle, SPATIAL, f32(1), f32(0), b.x.desc, b.x.ptr, y.desc,
                                                    y.ptr, s, s, s, s, b.scale.ptr, b.bias.ptr, mean.ptr, var.ptr, EPS)
    want = torch.nn.functional.batch_norm(torch.from_numpy(b.xa), torch.from_numpy(mean_a.ravel()),
                                          torch.from_numpy(var_a.ravel()), torch.from_numpy(b.scale_a.ravel()),
                                          torch.from_numpy(b.bias_a.ravel()), training=False, eps=EPS)
    np.testing.assert_allclose(fetch(dev, y), want.numpy(), rtol=2e-4, atol=2e-4)
    # NULL estimates: the documented fallback to batch statistics
    lib.miopenBatchNormalizationForwardInference_V2(b.handle, SPATIAL, f32(1), f32(0), b.x.desc, b.x.ptr, y.desc,
                                                    y.ptr, s, s, s, s, b.scale.ptr, b.bias.ptr, None, None, EPS)
    np.testing.assert_allclose(fetch(dev, y), b.torch_train()[1].detach().numpy(), rtol=4e-3, atol=4e-3)


def test_bn_inference_nhwc_on_34(emulated_device: EmulatedDevice, client: Client) -> None:
    """As the real 3.4.0 answers (stubgpu lane): "BnFwdInference: Not applicable", "No solver
    found" (miopenStatusNotImplemented) for channels-last batchnorm inference; 3.5 runs it."""
    dev = emulated_device
    b = Bn(dev, client, (2, 3, 4, 4), layout="NHWC")
    y, s = b.out(), b.scale.desc
    args = (b.handle, SPATIAL, f32(1), f32(0), b.x.desc, b.x.ptr, y.desc, y.ptr, s, s, s, s,
            b.scale.ptr, b.bias.ptr, None, None, EPS)
    if dev.version_name == "3.5":
        dev.miopen.miopenBatchNormalizationForwardInference_V2(*args)
        return
    with pytest.raises(errors.MIOpenStatusError) as info:
        dev.miopen.miopenBatchNormalizationForwardInference_V2(*args)
    assert info.value.status == 6


@pytest.mark.parametrize("saved", [True, False], ids=["saved_stats", "recomputed"])
def test_bn_backward_matches_torch(emulated_device: EmulatedDevice, client: Client, saved: bool) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    b = Bn(dev, client, (4, 3, 5, 6), layout="NHWC")
    y, smean, sinv = b.out(), b.param(), b.param()
    _train(lib, b, y, (None, None), (smean.ptr, sinv.ptr))
    dx, dscale, dbias = b.out(), b.param(), b.param()
    s = b.scale.desc
    lib.miopenBatchNormalizationBackward_V2(
        b.handle, SPATIAL, f32(1), f32(0), f32(1), f32(0), b.x.desc, b.x.ptr, b.dy.desc, b.dy.ptr, dx.desc, dx.ptr,
        s, s, s, s, b.scale.ptr, dscale.ptr, dbias.ptr, EPS, smean.ptr if saved else None,
        sinv.ptr if saved else None)
    x = torch.from_numpy(b.xa.astype(np.float64)).requires_grad_(True)
    g = torch.from_numpy(b.scale_a.ravel().astype(np.float64)).requires_grad_(True)
    be = torch.from_numpy(b.bias_a.ravel().astype(np.float64)).requires_grad_(True)
    torch.nn.functional.batch_norm(x, None, None, g, be, training=True, eps=EPS).backward(
        torch.from_numpy(b.dya.astype(np.float64)))
    np.testing.assert_allclose(fetch(dev, dx), x.grad.numpy(), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(fetch(dev, dscale).ravel(), g.grad.numpy(), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(fetch(dev, dbias).ravel(), be.grad.numpy(), rtol=2e-3, atol=2e-3)
    with pytest.raises(errors.MIOpenBadParmError):
        lib.miopenBatchNormalizationBackward_V2(
            b.handle, SPATIAL, f32(1), f32(0), f32(1), f32(1), b.x.desc, b.x.ptr, b.dy.desc, b.dy.ptr, dx.desc,
            dx.ptr, s, s, s, s, b.scale.ptr, dscale.ptr, dbias.ptr, EPS, None, None)


def test_bn_backward_fp16_params_not_implemented(emulated_device: EmulatedDevice, client: Client) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    b = Bn(dev, client, (2, 3, 4, 5), dtype=0)
    half = client.tensor(0, b.pdims)
    p16 = put(dev, client, np.ones(b.pdims, np.float32), 0)
    dx = b.out()
    with pytest.raises(errors.MIOpenNotImplementedError):
        lib.miopenBatchNormalizationBackward_V2(
            b.handle, SPATIAL, f32(1), f32(0), f32(1), f32(0), b.x.desc, b.x.ptr, b.dy.desc, b.dy.ptr, dx.desc,
            dx.ptr, half, half, half, half, p16.ptr, p16.ptr, p16.ptr, EPS, None, None)


def test_bn_activation_calls_are_3_5_only(emulated_device: EmulatedDevice, client: Client) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    b = Bn(dev, client, (4, 3, 5, 6))
    relu = client.activation(3, 0.0, 0.0, 0.0)
    y, smean, sinv = b.out(), b.param(), b.param()
    s = b.scale.desc

    def train(act: Any) -> None:
        lib.miopenBatchNormForwardTrainingActivation(
            b.handle, SPATIAL, f32(1), f32(0), b.x.desc, b.x.ptr, y.desc, y.ptr, s, s, s, s, b.scale.ptr,
            b.bias.ptr, MOMENTUM, None, None, EPS, smean.ptr, sinv.ptr, act)

    if dev.version < (3, 5, 0):
        with pytest.raises(errors.MIOpenVersionError):
            train(relu)
        return
    train(relu)
    np.testing.assert_allclose(fetch(dev, y), torch.relu(b.torch_train()[1]).detach().numpy(), rtol=4e-3, atol=4e-3)
    with pytest.raises(errors.MIOpenNotImplementedError):  # the kernels implement PASTHRU/RELU/CLIPPEDRELU/CLAMP
        train(client.activation(1, 0.0, 0.0, 0.0))
    clipped = client.activation(7, 0.8, 0.0, 0.0)
    est_var = put(dev, client, np.full(b.pdims, 2.0, np.float32))
    lib.miopenBatchNormForwardInferenceActivation(
        b.handle, SPATIAL, f32(1), f32(0), b.x.desc, b.x.ptr, y.desc, y.ptr, s, s, s, s, b.scale.ptr, b.bias.ptr,
        b.rmean.ptr, est_var.ptr, EPS, clipped)
    want = torch.clamp(torch.nn.functional.batch_norm(
        torch.from_numpy(b.xa), torch.zeros(3), torch.full((3,), 2.0), torch.from_numpy(b.scale_a.ravel()),
        torch.from_numpy(b.bias_a.ravel()), training=False, eps=EPS), 0.0, 0.8)
    np.testing.assert_allclose(fetch(dev, y), want.numpy(), rtol=2e-4, atol=2e-4)
    dx, dscale, dbias = b.out(), b.param(), b.param()
    clamp = client.activation(10, -0.5, 1.0, 0.0)
    lib.miopenBatchNormBackwardActivation(
        b.handle, SPATIAL, f32(1), f32(0), f32(1), f32(0), b.x.desc, b.x.ptr, b.dy.desc, b.dy.ptr, dx.desc, dx.ptr,
        s, s, s, s, b.scale.ptr, b.bias.ptr, dscale.ptr, dbias.ptr, EPS, smean.ptr, sinv.ptr, clamp)
    x = torch.from_numpy(b.xa.astype(np.float64)).requires_grad_(True)
    g = torch.from_numpy(b.scale_a.ravel().astype(np.float64)).requires_grad_(True)
    be = torch.from_numpy(b.bias_a.ravel().astype(np.float64)).requires_grad_(True)
    out = torch.clamp(torch.nn.functional.batch_norm(x, None, None, g, be, training=True, eps=EPS), -0.5, 1.0)
    out.backward(torch.from_numpy(b.dya.astype(np.float64)))
    np.testing.assert_allclose(fetch(dev, dx), x.grad.numpy(), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(fetch(dev, dscale).ravel(), g.grad.numpy(), rtol=2e-3, atol=2e-3)


ACTIVATIONS = {
    "relu": (3, 0.0, 0.0, torch.relu),
    "clipped_relu": (7, 1.5, 0.0, lambda t: torch.clamp(t, 0.0, 1.5)),
    "clamp": (10, -0.5, 1.0, lambda t: torch.clamp(t, -0.5, 1.0)),
    "leaky_relu": (8, 0.1, 0.0, lambda t: torch.nn.functional.leaky_relu(t, 0.1)),
    "passthru": (0, 0.0, 0.0, lambda t: t * 1.0),
}


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_matches_torch(emulated_device: EmulatedDevice, client: Client, name: str) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    mode, alpha, beta, fn = ACTIVATIONS[name]
    act = client.activation(mode, alpha, beta, 1.0)
    h = client.handle()
    rng = np.random.default_rng(5)
    xa = rng.standard_normal((2, 3, 4, 5)).astype(np.float32) * 2
    dya = rng.standard_normal(xa.shape).astype(np.float32)
    x, dy, y, dx = put(dev, client, xa), put(dev, client, dya), scratch(dev, client, xa.shape), scratch(dev, client, xa.shape)
    lib.miopenActivationForward(h, act, f32(1), x.desc, x.ptr, f32(0), y.desc, y.ptr)
    tx = torch.from_numpy(xa).requires_grad_(True)
    ty = fn(tx)
    np.testing.assert_allclose(fetch(dev, y), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    lib.miopenActivationBackward(h, act, f32(1), y.desc, y.ptr, dy.desc, dy.ptr, x.desc, x.ptr, f32(0), dx.desc, dx.ptr)
    ty.backward(torch.from_numpy(dya))
    np.testing.assert_allclose(fetch(dev, dx), tx.grad.numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(errors.MIOpenBadParmError):
        lib.miopenActivationForward(h, act, f32(1), x.desc, x.ptr, f32(0.5), y.desc, y.ptr)
    nhwc = scratch(dev, client, xa.shape, layout="NHWC")
    with pytest.raises(errors.MIOpenBadParmError):  # packed x and y in different layouts
        lib.miopenActivationForward(h, act, f32(1), x.desc, x.ptr, f32(0), nhwc.desc, nhwc.ptr)
    dev.activation_dtypes = (1, 0)  # upstream's fp32/fp16-only activation kernels
    xb, yb = put(dev, client, xa, 5), scratch(dev, client, xa.shape, 5)
    with pytest.raises(errors.MIOpenNotImplementedError):
        lib.miopenActivationForward(h, act, f32(1), xb.desc, xb.ptr, f32(0), yb.desc, yb.ptr)


def test_op_tensor_and_forward_bias(emulated_device: EmulatedDevice, client: Client) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    h = client.handle()
    rng = np.random.default_rng(9)
    aa, ba = rng.standard_normal((2, 3, 4, 5)).astype(np.float32), rng.standard_normal((1, 3, 1, 1)).astype(np.float32)
    a, b, c = put(dev, client, aa, layout="NHWC"), put(dev, client, ba), scratch(dev, client, aa.shape, layout="NHWC")
    # real MIOpen's OpTensorFwdBias kernel adds a (1,C,1,1) bias to the wrong elements of NHWC-strided
    # tensors (lane amdkernels): the device refuses that form instead of computing what MIOpen does not
    with pytest.raises(errors.MIOpenBadParmError):
        lib.miopenOpTensor(h, 0, f32(1), a.desc, a.ptr, f32(2), b.desc, b.ptr, f32(0), c.desc, c.ptr)
    assert "OpTensorFwdBias" in dev.errors[-1][2]
    a, c = put(dev, client, aa), scratch(dev, client, aa.shape)
    lib.miopenOpTensor(h, 0, f32(1), a.desc, a.ptr, f32(2), b.desc, b.ptr, f32(0), c.desc, c.ptr)  # C never read
    np.testing.assert_allclose(fetch(dev, c), aa + 2 * ba, rtol=1e-6)
    lib.miopenConvolutionForwardBias(h, f32(1), b.desc, b.ptr, f32(0), c.desc, c.ptr)  # y += bias
    np.testing.assert_allclose(fetch(dev, c), aa + 3 * ba, rtol=1e-6)
    db = scratch(dev, client, (1, 3, 1, 1))
    lib.miopenConvolutionBackwardBias(h, f32(1), a.desc, a.ptr, f32(0), db.desc, db.ptr)
    np.testing.assert_allclose(fetch(dev, db), aa.sum(axis=(0, 2, 3), keepdims=True), rtol=1e-5)
    wrong = put(dev, client, np.zeros((1, 4, 1, 1), np.float32))
    with pytest.raises(errors.MIOpenBadParmError):
        lib.miopenOpTensor(h, 0, f32(1), a.desc, a.ptr, f32(1), wrong.desc, wrong.ptr, f32(0), c.desc, c.ptr)


def test_kernel_access_outside_allocation_is_a_status(emulated_device: EmulatedDevice, client: Client) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    h = client.handle()
    act = client.activation(3, 0.0, 0.0, 0.0)
    desc = client.tensor(1, (2, 3, 4, 5))
    small = dev.alloc(100)  # the tensor needs 480 bytes
    with pytest.raises(errors.MIOpenUnknownError):
        lib.miopenActivationForward(h, act, f32(1), desc, small, f32(0), desc, small)
    assert dev.faults and "overrun" in dev.faults[-1]
    with pytest.raises(errors.MIOpenUnknownError):  # host memory is not device memory
        host = np.zeros(120, np.float32)
        lib.miopenActivationForward(h, act, f32(1), desc, host.ctypes.data, f32(0), desc, small)
    assert "not device memory" in dev.faults[-1]
