"""CPU_REFERENCE_ENGINE writes batchnorm's Y (training, inference) and DX (backward) straight
into the caller's buffer when it can (hipdnn/engines/reference/_bn.py ``Deferred``), with the
same bits as the kernel's own array, and falls back to a staged copy when the output aliases an input, has
another memory order or dtype, or is read by a later node.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hipdnn
from hipdnn.engines.reference import _bn
from hipdnn.engines.reference import kernels as K

#: Both implementations of the reference batchnorm (numba's compiled loops, the numpy passes).
pytestmark = pytest.mark.usefixtures("bn_path")

F32 = hipdnn.DataType.FLOAT
SHAPES = [(2, 3, 4, 5), (4, 64, 64, 64)]  # one block; many blocks on the thread pool


def _cl(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)


def _out(t: Any) -> np.ndarray:
    """A sentinel-filled FP32 array with the tensor's dims and strides."""
    dim, stride = t.get_dim(), t.get_stride()
    order = sorted(range(len(dim)), key=lambda a: -stride[a])
    return np.full([dim[a] for a in order], -7.25, np.float32).transpose(np.argsort(order))


def _reference(g: hipdnn.Graph) -> None:
    g.build_operation_graph()
    g.create_execution_plan_ext("CPU_REFERENCE_ENGINE", {})
    g.build_plans()


@pytest.fixture
def materialized(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts :meth:`_bn.Deferred.materialize` calls (0: the output was written directly)."""
    calls = [0]
    real = _bn.Deferred.materialize

    def counting(self: _bn.Deferred) -> np.ndarray:
        calls[0] += 1
        return real(self)

    monkeypatch.setattr(_bn.Deferred, "materialize", counting)
    return calls


def _train(calls: list[int], x: np.ndarray, y_strides: list[int] | None = None, alias: bool = False,
           relu: bool = False) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    c = x.shape[1]
    rng = np.random.default_rng(1)
    scale, bias = rng.normal(1, 0.5, c).astype(np.float32), rng.normal(0, 1, c).astype(np.float32)
    g = hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    xt = g.tensor_like(x, "x")
    st, bt = (g.tensor(dim=[1, c, 1, 1], data_type=F32, name=k) for k in ("scale", "bias"))
    y, mean, inv, _, _ = g.batchnorm(xt, st, bt, 1e-5)
    assert y is not None and mean is not None and inv is not None
    outs = {"y": y, "mean": mean, "inv": inv}
    if y_strides is not None:
        y.set_stride(y_strides)
    if relu:
        outs["relu"] = g.relu(y)
    for t in outs.values():
        t.set_output(True)
    _reference(g)
    ref_y, ref_mean, ref_inv, _ = K.bn_train_forward(x.copy(order="K"), scale, bias, 1e-5)
    arrays = {k: _out(t) for k, t in outs.items()}
    if alias:
        arrays["y"] = x
    calls[0] = 0  # count the engine's materializations only
    g.execute({xt: x, st: scale, bt: bias, **{t: arrays[k] for k, t in outs.items()}})
    assert np.array_equal(arrays["mean"].ravel(), ref_mean)
    assert np.array_equal(arrays["inv"].ravel(), ref_inv)
    return arrays["y"], ref_y, arrays


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_training_y_is_written_directly(materialized: list[int], shape: Any, layout: str) -> None:
    x = np.random.default_rng(0).normal(2.0, 3.0, shape).astype(np.float32)
    if layout == "NHWC":
        x = _cl(x)
    y, ref_y, _ = _train(materialized, x)
    assert materialized[0] == 0
    assert np.array_equal(y, ref_y)


@pytest.mark.parametrize("shape", SHAPES)
def test_training_offset_data_is_written_directly(materialized: list[int], shape: Any) -> None:
    x = np.random.default_rng(0).normal(1000.0, 0.01, shape).astype(np.float32)
    y, ref_y, _ = _train(materialized, x)
    assert materialized[0] == 0
    assert np.array_equal(y, ref_y)


@pytest.mark.parametrize("shape", SHAPES)
def test_training_in_place_falls_back_to_a_copy(materialized: list[int], shape: Any) -> None:
    x = np.random.default_rng(0).normal(2.0, 3.0, shape).astype(np.float32)
    y, ref_y, _ = _train(materialized, x, alias=True)  # Y's buffer is X's
    assert materialized[0] == 1
    assert np.array_equal(y, ref_y)


def test_training_other_memory_order_falls_back_to_a_copy(materialized: list[int]) -> None:
    _, c, h, w = SHAPES[1]
    x = np.random.default_rng(0).normal(2.0, 3.0, SHAPES[1]).astype(np.float32)
    y, ref_y, _ = _train(materialized, x, y_strides=[h * w * c, 1, w * c, c])  # X NCHW, Y NHWC
    assert materialized[0] == 1
    assert np.array_equal(y, ref_y)


def test_training_y_read_by_a_later_node_is_materialized(materialized: list[int]) -> None:
    x = np.random.default_rng(0).normal(2.0, 3.0, SHAPES[1]).astype(np.float32)
    y, ref_y, arrays = _train(materialized, x, relu=True)
    assert materialized[0] == 1
    assert np.array_equal(y, ref_y)
    assert np.array_equal(arrays["relu"], np.maximum(ref_y, 0))


def _backward(calls: list[int], dy: np.ndarray, x: np.ndarray,
              alias: bool = False) -> tuple[np.ndarray, np.ndarray]:
    c = x.shape[1]
    rng = np.random.default_rng(2)
    scale = rng.normal(1, 0.5, c).astype(np.float32)
    xd = x.astype(np.float64)
    mean = xd.mean(axis=(0, 2, 3)).astype(np.float32)
    inv = (1 / np.sqrt(xd.var(axis=(0, 2, 3)) + 1e-5)).astype(np.float32)
    g = hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    dyt, xt = g.tensor_like(dy, "dy"), g.tensor_like(x, "x")
    st, mt, it = (g.tensor(dim=[1, c, 1, 1], data_type=F32, name=k)
                  for k in ("scale", "mean", "inv"))
    outs = g.batchnorm_backward(dyt, xt, st, mt, it)
    for t in outs:
        t.set_output(True)
    _reference(g)
    ref_dx, ref_ds, ref_db = K.bn_backward(dy.copy(order="K"), x, scale, mean, inv)
    arrays = [_out(t) for t in outs]
    if alias:
        arrays[0] = dy
    calls[0] = 0
    g.execute({dyt: dy, xt: x, st: scale, mt: mean, it: inv, **dict(zip(outs, arrays, strict=True))})
    assert np.array_equal(arrays[1].ravel(), ref_ds)
    assert np.array_equal(arrays[2].ravel(), ref_db)
    return arrays[0], ref_dx


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_backward_dx_is_written_directly(materialized: list[int], shape: Any, layout: str) -> None:
    rng = np.random.default_rng(0)
    x, dy = rng.normal(2.0, 3.0, shape).astype(np.float32), rng.normal(size=shape).astype(np.float32)
    if layout == "NHWC":
        x, dy = _cl(x), _cl(dy)
    dx, ref_dx = _backward(materialized, dy, x)
    assert materialized[0] == 0
    assert np.array_equal(dx, ref_dx)


@pytest.mark.parametrize("shape", SHAPES)
def test_backward_in_place_falls_back_to_a_copy(materialized: list[int], shape: Any) -> None:
    rng = np.random.default_rng(0)
    x, dy = rng.normal(2.0, 3.0, shape).astype(np.float32), rng.normal(size=shape).astype(np.float32)
    dx, ref_dx = _backward(materialized, dy, x, alias=True)  # DX's buffer is DY's
    assert materialized[0] == 1
    assert np.array_equal(dx, ref_dx)


def _inference(calls: list[int], x: np.ndarray, form: str,
               alias: bool = False, relu: bool = False) -> tuple[np.ndarray, np.ndarray]:
    c = x.shape[1]
    rng = np.random.default_rng(3)
    scale, bias = rng.normal(1, 0.5, c).astype(np.float32), rng.normal(0, 1, c).astype(np.float32)
    xd = x.astype(np.float64)
    mean = xd.mean(axis=(0, 2, 3)).astype(np.float32)
    var = xd.var(axis=(0, 2, 3)).astype(np.float32)
    g = hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    xt = g.tensor_like(x, "x")
    st, bt, mt, vt = (g.tensor(dim=[1, c, 1, 1], data_type=F32, name=k)
                      for k in ("scale", "bias", "mean", "stat"))
    if form == "inv_variance":
        stat = (1 / np.sqrt(var.astype(np.float64) + 1e-5)).astype(np.float32)
        y = g.batchnorm_inference(xt, mt, vt, st, bt)
        ref = K.bn_inference_inv_variance(x.copy(order="K"), scale, bias, mean, stat)
    else:
        stat = var
        y = g.batchnorm_inference_variance_ext(xt, mt, vt, st, bt, 1e-5)
        ref = K.bn_inference_variance(x.copy(order="K"), scale, bias, mean, stat, 1e-5)
    if relu:
        y = g.pointwise(hipdnn.PointwiseMode.RELU_FWD, y)
        ref = K.relu_forward(ref)
    y.set_output(True)
    _reference(g)
    out = x if alias else _out(y)
    calls[0] = 0
    g.execute({xt: x, st: scale, bt: bias, mt: mean, vt: stat, y: out})
    return out, ref


@pytest.mark.parametrize("form", ["inv_variance", "variance"])
@pytest.mark.parametrize("offset", [0.0, 1000.0])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_inference_y_is_written_directly(materialized: list[int], form: str, offset: float,
                                         layout: str) -> None:
    x = np.random.default_rng(0).normal(offset, 0.5, SHAPES[1]).astype(np.float32)
    if layout == "NHWC":
        x = _cl(x)
    y, ref = _inference(materialized, x, form)
    assert materialized[0] == 0
    assert np.array_equal(y, ref)


def test_inference_in_place_falls_back_to_a_copy(materialized: list[int]) -> None:
    x = np.random.default_rng(0).normal(2.0, 3.0, SHAPES[1]).astype(np.float32)
    y, ref = _inference(materialized, x, "inv_variance", alias=True)
    assert materialized[0] == 1
    assert np.array_equal(y, ref)


def _train_relu(calls: list[int], x: np.ndarray, relu_kw: dict[str, float],
                y_output: bool = False, relu_read_again: bool = False,
                ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    c = x.shape[1]
    rng = np.random.default_rng(4)
    scale, bias = rng.normal(1, 0.5, c).astype(np.float32), rng.normal(0, 1, c).astype(np.float32)
    g = hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    xt = g.tensor_like(x, "x")
    st, bt = (g.tensor(dim=[1, c, 1, 1], data_type=F32, name=k) for k in ("scale", "bias"))
    y, mean, inv, _, _ = g.batchnorm(xt, st, bt, 1e-5)
    assert y is not None and mean is not None and inv is not None
    out = g.pointwise(hipdnn.PointwiseMode.RELU_FWD, y, **relu_kw)
    outs = {"out": out, "mean": mean, "inv": inv}
    if y_output:
        outs["y"] = y
    if relu_read_again:
        outs["twice"] = g.pointwise(hipdnn.PointwiseMode.ADD, out, out)
    for t in outs.values():
        t.set_output(True)
    _reference(g)
    ref_y = K.bn_train_forward(x.copy(order="K"), scale, bias, 1e-5)[0]
    ref = K.relu_forward(ref_y, relu_kw.get("relu_lower_clip"), relu_kw.get("relu_upper_clip"),
                         relu_kw.get("relu_lower_clip_slope"))
    arrays = {k: _out(t) for k, t in outs.items()}
    calls[0] = 0
    g.execute({xt: x, st: scale, bt: bias, **{t: arrays[k] for k, t in outs.items()}})
    if y_output:
        assert np.array_equal(arrays["y"], ref_y)
    if relu_read_again:
        assert np.array_equal(arrays["twice"], ref + ref)
    return arrays, ref


RELUS = [{}, {"relu_lower_clip": -0.5, "relu_upper_clip": 1.5}]


@pytest.mark.parametrize("relu_kw", RELUS, ids=["relu", "clamp"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_training_relu_joins_the_direct_pass(materialized: list[int], relu_kw: dict[str, float],
                                             layout: str) -> None:
    x = np.random.default_rng(0).normal(2.0, 3.0, SHAPES[1]).astype(np.float32)
    if layout == "NHWC":
        x = _cl(x)
    arrays, ref = _train_relu(materialized, x, relu_kw)
    assert materialized[0] == 0
    assert np.array_equal(arrays["out"], ref)


@pytest.mark.parametrize("case", ["leaky", "y_output", "relu_read_again"])
def test_training_relu_not_fused_stays_correct(materialized: list[int], case: str) -> None:
    x = np.random.default_rng(0).normal(2.0, 3.0, SHAPES[1]).astype(np.float32)
    kw = {"relu_lower_clip_slope": 0.1} if case == "leaky" else {}
    arrays, ref = _train_relu(materialized, x, kw, y_output=case == "y_output",
                              relu_read_again=case == "relu_read_again")
    # leaky: y is materialized for the ReLU kernel; Y an output: written directly, the ReLU
    # reads a materialized y; ReLU output read again: the fused pass is materialized
    assert materialized[0] == 1
    assert np.array_equal(arrays["out"], ref)


@pytest.mark.parametrize("form", ["inv_variance", "variance"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_inference_relu_joins_the_direct_pass(materialized: list[int], form: str,
                                              layout: str) -> None:
    x = np.random.default_rng(0).normal(0.5, 2.0, SHAPES[1]).astype(np.float32)
    if layout == "NHWC":
        x = _cl(x)
    y, ref = _inference(materialized, x, form, relu=True)
    assert materialized[0] == 0
    assert np.array_equal(y, ref)
