"""Graphs written as a hipdnn_frontend user writes them (``import hipdnn.frontend as hipdnn``:
Tensor.create, attribute objects, Error returns, DeviceBuffer pointers in the variant pack),
executed on CPU_REFERENCE_ENGINE and on MIOPEN_ENGINE over the emulated device, against
PyTorch with DESIGN.md's tolerances."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hipdnn.frontend as hipdnn

torch = pytest.importorskip("torch")
F = torch.nn.functional


def float_graph(name: str) -> hipdnn.Graph:
    g = hipdnn.Graph()
    return (g.set_name(name).set_io_data_type(hipdnn.DataType.FLOAT)
            .set_intermediate_data_type(hipdnn.DataType.FLOAT)
            .set_compute_data_type(hipdnn.DataType.FLOAT))


def build_all(graph: hipdnn.Graph, engine: str) -> hipdnn.Handle:
    handle = hipdnn.create_handle()
    for step in (graph.validate, lambda: graph.build_operation_graph(handle),
                 graph.create_execution_plans, graph.check_support, graph.build_plans):
        err = step()
        assert err.is_good(), err.get_message()
    assert graph.get_plan_name().startswith(engine)
    return handle


def run(graph: hipdnn.Graph, handle: hipdnn.Handle, inputs: dict[Any, np.ndarray],
        outputs: dict[Any, tuple[int, ...]]) -> dict[Any, np.ndarray]:
    """Execute with one DeviceBuffer per tensor, uid -> ptr(), as upstream's samples do."""
    buffers = {}
    for t, data in inputs.items():
        host = np.ascontiguousarray(data, np.float32)
        buffers[t] = hipdnn.DeviceBuffer(host.nbytes)
        buffers[t].copy_from_host(host.tobytes())
    for t, shape in outputs.items():
        buffers[t] = hipdnn.DeviceBuffer(4 * int(np.prod(shape)))
    size = graph.get_workspace_size()
    workspace = hipdnn.DeviceBuffer(size) if size else None
    pack = {t.get_uid(): b.ptr() for t, b in buffers.items()}
    err = graph.execute(handle, pack, workspace.ptr() if workspace else 0)
    assert err.is_good(), err.get_message()
    return {t: np.frombuffer(buffers[t].copy_to_host(), np.float32).reshape(shape)
            for t, shape in outputs.items()}


def conv_attrs(cls: type, name: str, pad: int, stride: int) -> Any:
    a = cls()
    a.set_name(name)
    a.set_padding([pad, pad])
    a.set_stride([stride, stride])
    a.set_dilation([1, 1])
    return a


def test_conv_fprop(engine: str) -> None:
    rng = np.random.default_rng(0)
    xd, wd = rng.standard_normal((2, 3, 7, 7)), rng.standard_normal((4, 3, 3, 3))
    g = float_graph("conv_fprop")
    x = hipdnn.Tensor.create(list(xd.shape), hipdnn.DataType.FLOAT)
    w = hipdnn.Tensor.create(list(wd.shape), hipdnn.DataType.FLOAT)
    y = g.conv_fprop(x, w, conv_attrs(hipdnn.ConvFpropAttributes, "conv", 1, 2))
    y.set_output(True)
    handle = build_all(g, engine)
    assert y.get_dim() == [2, 4, 4, 4]
    out = run(g, handle, {x: xd, w: wd}, {y: (2, 4, 4, 4)})[y]
    ref = F.conv2d(torch.from_numpy(xd), torch.from_numpy(wd), padding=1, stride=2)
    np.testing.assert_allclose(out, ref.numpy(), rtol=1e-5, atol=1e-5)


def test_conv_dgrad(engine: str) -> None:
    rng = np.random.default_rng(1)
    dyd, wd = rng.standard_normal((2, 4, 6, 6)), rng.standard_normal((4, 3, 3, 3))
    g = float_graph("conv_dgrad")
    dy = hipdnn.Tensor.create(list(dyd.shape), hipdnn.DataType.FLOAT)
    w = hipdnn.Tensor.create(list(wd.shape), hipdnn.DataType.FLOAT)
    dx = g.conv_dgrad(dy, w, conv_attrs(hipdnn.ConvDgradAttributes, "dgrad", 1, 1))
    dx.set_dim([2, 3, 6, 6]).set_output(True)
    handle = build_all(g, engine)
    out = run(g, handle, {dy: dyd, w: wd}, {dx: (2, 3, 6, 6)})[dx]
    ref = torch.nn.grad.conv2d_input((2, 3, 6, 6), torch.from_numpy(wd), torch.from_numpy(dyd),
                                     padding=1)
    np.testing.assert_allclose(out, ref.numpy(), rtol=8.5e-6 * 10, atol=8.5e-6 * 10)


def test_conv_wgrad_takes_dy_first(engine: str) -> None:
    """Upstream's argument order is conv_wgrad(dy, x, attrs) (the native API's is (x, dy))."""
    rng = np.random.default_rng(2)
    xd, dyd = rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((2, 4, 6, 6))
    g = float_graph("conv_wgrad")
    dy = hipdnn.Tensor.create(list(dyd.shape), hipdnn.DataType.FLOAT)
    x = hipdnn.Tensor.create(list(xd.shape), hipdnn.DataType.FLOAT)
    dw = g.conv_wgrad(dy, x, conv_attrs(hipdnn.ConvWgradAttributes, "wgrad", 1, 1))
    dw.set_dim([4, 3, 3, 3]).set_output(True)
    handle = build_all(g, engine)
    out = run(g, handle, {dy: dyd, x: xd}, {dw: (4, 3, 3, 3)})[dw]
    ref = torch.nn.grad.conv2d_weight(torch.from_numpy(xd), (4, 3, 3, 3),
                                      torch.from_numpy(dyd), padding=1)
    np.testing.assert_allclose(out, ref.numpy(), rtol=2e-4, atol=2e-4)


def epsilon(value: float = 1e-5) -> hipdnn.Tensor:
    eps = hipdnn.Tensor()
    eps.set_name("epsilon")
    eps.set_value(value)
    return eps


def test_batchnorm_training(engine: str) -> None:
    rng = np.random.default_rng(3)
    xd = rng.standard_normal((4, 3, 5, 5)) * 2 + 1
    sd, bd = rng.standard_normal((1, 3, 1, 1)), rng.standard_normal((1, 3, 1, 1))
    g = float_graph("bn_train")
    x = hipdnn.Tensor.create([4, 3, 5, 5], hipdnn.DataType.FLOAT)
    scale = hipdnn.Tensor.create([1, 3, 1, 1], hipdnn.DataType.FLOAT)
    bias = hipdnn.Tensor.create([1, 3, 1, 1], hipdnn.DataType.FLOAT)
    attrs = hipdnn.BatchnormAttributes().set_name("bn").set_epsilon(epsilon())
    outs = g.batchnorm(x, scale, bias, attrs)
    assert isinstance(outs, tuple) and len(outs) == 5 and outs[3] is None and outs[4] is None
    y, mean, inv_var = outs[:3]
    for t in (y, mean, inv_var):
        t.set_output(True)
    handle = build_all(g, engine)
    res = run(g, handle, {x: xd, scale: sd, bias: bd},
              {y: (4, 3, 5, 5), mean: (1, 3, 1, 1), inv_var: (1, 3, 1, 1)})
    ref = F.batch_norm(torch.from_numpy(xd), None, None, torch.from_numpy(sd.ravel()),
                       torch.from_numpy(bd.ravel()), training=True, eps=1e-5)
    np.testing.assert_allclose(res[y], ref.numpy(), rtol=4e-3, atol=4e-3)
    np.testing.assert_allclose(res[mean].ravel(), xd.mean(axis=(0, 2, 3)), rtol=4e-3, atol=4e-3)
    np.testing.assert_allclose(res[inv_var].ravel(), 1 / np.sqrt(xd.var(axis=(0, 2, 3)) + 1e-5),
                               rtol=4e-3, atol=4e-3)


def test_batchnorm_training_with_running_stats(engine: str) -> None:
    rng = np.random.default_rng(4)
    xd = rng.standard_normal((4, 2, 3, 3))
    g = float_graph("bn_running")
    x = hipdnn.Tensor.create([4, 2, 3, 3], hipdnn.DataType.FLOAT)
    params = [hipdnn.Tensor.create([1, 2, 1, 1], hipdnn.DataType.FLOAT) for _ in range(4)]
    scale, bias, rmean, rvar = params
    momentum = hipdnn.Tensor().set_value(0.1)
    attrs = (hipdnn.BatchnormAttributes().set_epsilon(epsilon())
             .set_previous_running_stats(rmean, rvar, momentum))
    y, _, _, next_mean, next_var = g.batchnorm(x, scale, bias, attrs)
    for t in (y, next_mean, next_var):
        t.set_output(True)
    handle = build_all(g, engine)
    ones, zeros = np.ones((1, 2, 1, 1)), np.zeros((1, 2, 1, 1))
    res = run(g, handle, {x: xd, scale: ones, bias: zeros, rmean: zeros, rvar: ones},
              {y: (4, 2, 3, 3), next_mean: (1, 2, 1, 1), next_var: (1, 2, 1, 1)})
    rm, rv = torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)
    F.batch_norm(torch.from_numpy(xd), rm, rv, training=True, momentum=0.1, eps=1e-5)
    np.testing.assert_allclose(res[next_mean].ravel(), rm.numpy(), rtol=4e-3, atol=4e-3)
    np.testing.assert_allclose(res[next_var].ravel(), rv.numpy(), rtol=4e-3, atol=4e-3)


def test_batchnorm_backward(engine: str) -> None:
    rng = np.random.default_rng(5)
    xd, dyd = rng.standard_normal((4, 3, 4, 4)), rng.standard_normal((4, 3, 4, 4))
    sd = rng.standard_normal((1, 3, 1, 1))
    mean_d = xd.mean(axis=(0, 2, 3), keepdims=True)
    inv_d = 1 / np.sqrt(xd.var(axis=(0, 2, 3), keepdims=True) + 1e-5)
    g = float_graph("bn_bwd")
    dy, x = (hipdnn.Tensor.create([4, 3, 4, 4], hipdnn.DataType.FLOAT) for _ in range(2))
    scale, mean, inv = (hipdnn.Tensor.create([1, 3, 1, 1], hipdnn.DataType.FLOAT)
                        for _ in range(3))
    attrs = hipdnn.BatchnormBackwardAttributes().set_saved_mean_and_inv_variance(mean, inv)
    dx, dscale, dbias = g.batchnorm_backward(dy, x, scale, attrs)
    for t in (dx, dscale, dbias):
        t.set_output(True)
    handle = build_all(g, engine)
    res = run(g, handle, {dy: dyd, x: xd, scale: sd, mean: mean_d, inv: inv_d},
              {dx: (4, 3, 4, 4), dscale: (1, 3, 1, 1), dbias: (1, 3, 1, 1)})
    xt = torch.from_numpy(xd).requires_grad_()
    st = torch.from_numpy(sd.ravel()).requires_grad_()
    bt = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    F.batch_norm(xt, None, None, st, bt, training=True, eps=1e-5).backward(torch.from_numpy(dyd))
    np.testing.assert_allclose(res[dx], xt.grad.numpy(), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(res[dscale].ravel(), st.grad.numpy(), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(res[dbias].ravel(), bt.grad.numpy(), rtol=2e-3, atol=2e-3)


def test_batchnorm_backward_without_saved_statistics(engine: str) -> None:
    # upstream's batchnorm_backward(dy, x, scale, attrs) with no saved mean/inv_variance: the
    # statistics come from x (MIOpen: NULL saved pointers; epsilon 1e-5), on both engines
    rng = np.random.default_rng(6)
    xd, dyd = rng.standard_normal((2, 3, 5, 4)) * 2 + 1, rng.standard_normal((2, 3, 5, 4))
    sd = rng.standard_normal((1, 3, 1, 1))
    g = float_graph("bn_bwd_recompute")
    dy, x = (hipdnn.Tensor.create([2, 3, 5, 4], hipdnn.DataType.FLOAT) for _ in range(2))
    scale = hipdnn.Tensor.create([1, 3, 1, 1], hipdnn.DataType.FLOAT)
    dx, dscale, dbias = g.batchnorm_backward(dy, x, scale, hipdnn.BatchnormBackwardAttributes())
    for t in (dx, dscale, dbias):
        t.set_output(True)
    handle = build_all(g, engine)
    res = run(g, handle, {dy: dyd, x: xd, scale: sd},
              {dx: (2, 3, 5, 4), dscale: (1, 3, 1, 1), dbias: (1, 3, 1, 1)})
    xt = torch.from_numpy(xd).requires_grad_()
    st = torch.from_numpy(sd.ravel()).requires_grad_()
    bt = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    F.batch_norm(xt, None, None, st, bt, training=True, eps=1e-5).backward(torch.from_numpy(dyd))
    np.testing.assert_allclose(res[dx], xt.grad.numpy(), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(res[dscale].ravel(), st.grad.numpy(), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(res[dbias].ravel(), bt.grad.numpy(), rtol=2e-3, atol=2e-3)


def test_batchnorm_inference_both_forms(engine: str) -> None:
    rng = np.random.default_rng(6)
    xd = rng.standard_normal((2, 3, 4, 4))
    md, vd = rng.standard_normal((1, 3, 1, 1)), rng.random((1, 3, 1, 1)) + 0.5
    sd, bd = rng.standard_normal((1, 3, 1, 1)), rng.standard_normal((1, 3, 1, 1))
    ref = F.batch_norm(torch.from_numpy(xd), torch.from_numpy(md.ravel()),
                       torch.from_numpy(vd.ravel()), torch.from_numpy(sd.ravel()),
                       torch.from_numpy(bd.ravel()), training=False, eps=1e-5).numpy()

    g = float_graph("bn_inference")
    x = hipdnn.Tensor.create([2, 3, 4, 4], hipdnn.DataType.FLOAT)
    m, iv, s, b = (hipdnn.Tensor.create([1, 3, 1, 1], hipdnn.DataType.FLOAT) for _ in range(4))
    y = g.batchnorm_inference(x, m, iv, s, b, hipdnn.BatchnormInferenceAttributes())
    y.set_output(True)
    if engine == "MIOPEN_ENGINE":  # the seed row is the variance form; inv_variance is not
        handle = hipdnn.create_handle()
        assert g.validate().is_good() and g.build_operation_graph(handle).is_good()
        err = g.create_execution_plans()
        assert err.is_good() or err.get_code() == hipdnn.ErrorCode.GRAPH_NOT_SUPPORTED
    else:
        handle = build_all(g, engine)
        out = run(g, handle, {x: xd, m: md, iv: 1 / np.sqrt(vd + 1e-5), s: sd, b: bd},
                  {y: (2, 3, 4, 4)})[y]
        np.testing.assert_allclose(out, ref, rtol=2e-4, atol=2e-4)

    g = float_graph("bn_inference_variance")
    x = hipdnn.Tensor.create([2, 3, 4, 4], hipdnn.DataType.FLOAT)
    m, v, s, b = (hipdnn.Tensor.create([1, 3, 1, 1], hipdnn.DataType.FLOAT) for _ in range(4))
    y = g.batchnorm_inference_variance_ext(x, m, v, s, b, epsilon(),
                                           hipdnn.BatchnormInferenceAttributesVarianceExt())
    y.set_output(True)
    handle = build_all(g, engine)
    out = run(g, handle, {x: xd, m: md, v: vd, s: sd, b: bd}, {y: (2, 3, 4, 4)})[y]
    np.testing.assert_allclose(out, ref, rtol=2e-4, atol=2e-4)


def test_conv_bias_relu_pointwise_chain(engine: str) -> None:
    """A fused pattern spelled with PointwiseAttributes: conv, ADD bias, RELU_FWD."""
    rng = np.random.default_rng(7)
    xd, wd = rng.standard_normal((1, 4, 6, 6)), rng.standard_normal((8, 4, 3, 3))
    bd = rng.standard_normal((1, 8, 1, 1))
    g = float_graph("conv_bias_relu")
    x = hipdnn.Tensor.create([1, 4, 6, 6], hipdnn.DataType.FLOAT)
    w = hipdnn.Tensor.create([8, 4, 3, 3], hipdnn.DataType.FLOAT)
    b = hipdnn.Tensor.create([1, 8, 1, 1], hipdnn.DataType.FLOAT)
    conv = g.conv_fprop(x, w, conv_attrs(hipdnn.ConvFpropAttributes, "conv", 1, 1))
    biased = g.pointwise(conv, b, hipdnn.PointwiseAttributes().set_mode(hipdnn.PointwiseMode.ADD))
    y = g.pointwise(biased, hipdnn.PointwiseAttributes().set_mode(hipdnn.PointwiseMode.RELU_FWD))
    y.set_output(True)
    handle = build_all(g, engine)
    out = run(g, handle, {x: xd, w: wd, b: bd}, {y: (1, 8, 6, 6)})[y]
    ref = F.relu(F.conv2d(torch.from_numpy(xd), torch.from_numpy(wd), padding=1)
                 + torch.from_numpy(bd))
    np.testing.assert_allclose(out, ref.numpy(), rtol=1e-5, atol=1e-5)


def test_pointwise_ternary_and_scalar_attributes() -> None:
    """Three-input pointwise (BINARY_SELECT) and a clipped ReLU through set_relu_*_clip."""
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    cond = (rng.random((2, 3, 4)) > 0.5).astype(np.float64)
    g = float_graph("select")
    ta, tb, tc = (hipdnn.Tensor.create([2, 3, 4], hipdnn.DataType.FLOAT) for _ in range(3))
    sel = g.pointwise(ta, tb, tc,
                      hipdnn.PointwiseAttributes().set_mode(hipdnn.PointwiseMode.BINARY_SELECT))
    y = g.pointwise(sel, hipdnn.PointwiseAttributes().set_mode(hipdnn.PointwiseMode.RELU_FWD)
                    .set_relu_lower_clip(0.0).set_relu_upper_clip(0.5))
    y.set_output(True)
    handle = build_all(g, "CPU_REFERENCE_ENGINE")
    out = run(g, handle, {ta: a, tb: b, tc: cond}, {y: (2, 3, 4)})[y]
    np.testing.assert_allclose(out, np.clip(np.where(cond != 0, a, b), 0.0, 0.5), rtol=1e-6,
                               atol=1e-6)


def test_variant_pack_spellings() -> None:
    """Tensor keys, DeviceBuffer values, numpy arrays and torch tensors all work, mixed
    (a lone ADD runs on CPU_REFERENCE_ENGINE: MIOPEN_ENGINE has no seed row for it)."""
    g = float_graph("add")
    a, b = (hipdnn.Tensor.create([2, 3, 2, 2], hipdnn.DataType.FLOAT) for _ in range(2))
    out = g.pointwise(a, b, hipdnn.PointwiseAttributes().set_mode(hipdnn.PointwiseMode.ADD))
    out.set_output(True)
    handle = build_all(g, "CPU_REFERENCE_ENGINE")
    ad = np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2)
    bbuf = hipdnn.DeviceBuffer(96)
    bbuf.copy_from_host(np.full(24, 0.5, np.float32).tobytes())
    y = torch.zeros(2, 3, 2, 2)
    err = g.execute(handle, {a: ad, b: bbuf, out.get_uid(): y}, None)
    assert err.is_good(), err.get_message()
    np.testing.assert_array_equal(y.numpy(), ad + 0.5)
    err = g.execute(handle, {np.int64(a.get_uid()): ad, b: bbuf, out: y}, np.uint64(0))
    assert err.is_good(), err.get_message()


class _DeviceProducer:
    """Exports a DeviceBuffer's memory through ``__dlpack__`` as ROCm device memory
    (kDLROCM = 10), as upstream's tests wrap device pointers: only the pointer is used."""

    def __init__(self, buffer: hipdnn.DeviceBuffer, numel: int,
                 shape: tuple[int, ...] | None = None) -> None:
        import ctypes

        from hipdnn.interop import dlpack as _dlpack

        shape = shape or (numel,)
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._managed = _dlpack.DLManagedTensor()
        t = self._managed.dl_tensor
        t.data, t.ndim, t.shape = buffer.ptr(), len(shape), self._shape
        t.device.device_type, t.dtype.code, t.dtype.bits, t.dtype.lanes = 10, 2, 32, 1
        self._new = ctypes.pythonapi.PyCapsule_New
        self._new.restype = ctypes.py_object
        self._new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        self._addr = ctypes.addressof(self._managed)

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._new(self._addr, b"dltensor", None)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (10, 0)


def test_values_stating_another_shape_are_refused() -> None:
    """A device DLPack producer or an array that states another shape than its tensor's dims
    (here NHWC for NCHW dims) is an Error naming the tensor, not a silently wrong result (they
    ran before); an int pointer or hipdnn.by_pointer(obj) lays the tensor out from the pointer."""
    import hipdnn as native

    g = float_graph("relu")
    x = hipdnn.Tensor.create([1, 4, 2, 2], hipdnn.DataType.FLOAT)
    x.set_name("x")
    y = g.pointwise(x, hipdnn.PointwiseAttributes().set_mode(hipdnn.PointwiseMode.RELU_FWD))
    y.set_output(True)
    handle = build_all(g, "CPU_REFERENCE_ENGINE")
    data = np.linspace(-1, 1, 16, dtype=np.float32)
    xb, yb = hipdnn.DeviceBuffer(64), hipdnn.DeviceBuffer(128)
    xb.copy_from_host(data.tobytes())
    yb.copy_from_host(np.full(32, np.nan, np.float32).tobytes())
    for bad in (_DeviceProducer(xb, 16, (1, 2, 2, 4)), data.reshape(1, 2, 2, 4),
                torch.from_numpy(data.reshape(1, 2, 2, 4))):
        err = g.execute(handle, {x: bad, y: yb.ptr()}, 0)
        assert not err.is_good()
        assert "tensor 'x'" in err.get_message() and "(1, 2, 2, 4)" in err.get_message()
        assert "NHWC order" in err.get_message()
    err = g.execute(handle, {x: xb.ptr(), y: _DeviceProducer(yb, 32, (1, 4, 2, 4))}, 0)
    assert not err.is_good() and "shape mismatch" in err.get_message()
    assert np.isnan(np.frombuffer(yb.copy_to_host(), np.float32)).all()
    for wrap in (lambda p: p.ptr(), lambda p: native.by_pointer(_DeviceProducer(p, 32))):
        err = g.execute(handle, {x: _DeviceProducer(xb, 16, (1, 4, 2, 2)), y: wrap(yb)}, 0)
        assert err.is_good(), err.get_message()
        got = np.frombuffer(yb.copy_to_host(), np.float32)
        np.testing.assert_array_equal(got[:16], np.maximum(data, 0))
        assert np.isnan(got[16:]).all()


def test_timed_execute_with_device_dlpack_producers() -> None:
    g = float_graph("relu")
    x = hipdnn.Tensor.create([1, 4, 2, 2], hipdnn.DataType.FLOAT)
    y = g.pointwise(x, hipdnn.PointwiseAttributes().set_mode(hipdnn.PointwiseMode.RELU_FWD))
    y.set_output(True)
    handle = build_all(g, "CPU_REFERENCE_ENGINE")
    data = np.linspace(-1, 1, 16, dtype=np.float32)
    xb, yb = hipdnn.DeviceBuffer(64), hipdnn.DeviceBuffer(64)
    xb.copy_from_host(data.tobytes())
    err, timing = g.execute_timed_ext(handle, {x: _DeviceProducer(xb, 16),
                                               y: _DeviceProducer(yb, 16)}, 0)
    assert err.is_good(), err.get_message()
    assert timing.elapsed_ms is not None and timing.elapsed_ms >= 0 and not timing.timed_out
    assert timing.quality == hipdnn.TimingQuality.UNSTALLED
    np.testing.assert_array_equal(np.frombuffer(yb.copy_to_host(), np.float32),
                                  np.maximum(data, 0))


class _FailingSync:
    """An engine state whose stream wait fails as the HIP runtime's would."""

    def synchronize(self) -> None:
        from miopen_ctypes.errors import HipError

        raise HipError("hipStreamSynchronize", 700, "hipErrorIllegalAddress")


def test_timed_execute_returns_an_error_when_the_wait_fails() -> None:
    """execute_timed_ext returns a bad Error (HANDLE_ERROR naming the call), as the rest of the
    frontend does, instead of raising the binding's HipError (issue 29)."""
    g = float_graph("relu_timed_fail")
    x = hipdnn.Tensor.create([1, 4, 2, 2], hipdnn.DataType.FLOAT)
    y = g.pointwise(x, hipdnn.PointwiseAttributes().set_mode(hipdnn.PointwiseMode.RELU_FWD))
    y.set_output(True)
    handle = build_all(g, "CPU_REFERENCE_ENGINE")
    handle.state("failing-sync", lambda _: _FailingSync())
    data = np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 4, 2, 2)
    out = np.zeros_like(data)
    err, timing = g.execute_timed_ext(handle, {x: data, y: out}, 0)
    assert err.is_bad() and err.get_code() == hipdnn.ErrorCode.HANDLE_ERROR
    assert "hipStreamSynchronize" in err.get_message() and "synchronize" in err.get_message()
    assert timing.elapsed_ms is None
