"""CPU_REFERENCE_ENGINE behaviour: declines with reasons, typed errors, no partial results,
NaN/Inf propagation, pass-by-value scalars, intermediate rounding, extra pointwise modes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from engine_helpers import REFERENCE, alloc_like, run_on_reference
from oracle_helpers import assert_close, rounded

import hipdnn
from hipdnn.engines import fnv1a_64, get_engine
from hipdnn.engines.reference import kernels
from hipdnn.interop.buffers import Buffer

torch = pytest.importorskip("torch")
F = torch.nn.functional
FLOAT = hipdnn.DataType.FLOAT


def _graph(io: hipdnn.DataType = FLOAT, inter: hipdnn.DataType = FLOAT) -> hipdnn.Graph:
    return hipdnn.Graph(io_data_type=io, intermediate_data_type=inter, compute_data_type=FLOAT)


def _conv_bias_relu(g: hipdnn.Graph, x: np.ndarray, w: np.ndarray, b: np.ndarray
                    ) -> tuple[Any, Any, Any, Any, Any]:
    xt, wt, bt = g.tensor_like(x, "x"), g.tensor_like(w, "w"), g.tensor_like(b, "b")
    y = g.conv_fprop(xt, wt, padding=1, name="conv")
    out = g.relu(g.bias(y, bt, name="bias"), name="relu")
    return xt, wt, bt, y, out


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, (2, 3, 6, 6)).astype(np.float32),
            rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32),
            rng.uniform(-1, 1, (1, 4, 1, 1)).astype(np.float32))


def _torch_cbr(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    return F.relu(F.conv2d(torch.tensor(x), torch.tensor(w), padding=1) + torch.tensor(b)).numpy()


def test_engine_is_registered_last_with_no_knobs_and_no_workspace() -> None:
    eng = get_engine(REFERENCE)
    assert eng.rank == 1000 and eng.engine_id == fnv1a_64(REFERENCE)
    x, w, b = _data()
    g = _graph()
    _conv_bias_relu(g, x, w, b)[-1].set_output(True)
    g.validate()
    assert eng.check_support(g, None) is None
    assert eng.get_knobs(g, None) == []
    assert eng.build_plan(g, {}, None).workspace_size == 0


def _reason(g: hipdnn.Graph) -> str:
    g.validate()
    reason = get_engine(REFERENCE).check_support(g, None)
    assert reason is not None
    with pytest.raises(hipdnn.GraphNotSupportedError) as info:
        g.build()
    assert REFERENCE in info.value.reasons
    return reason


def test_declines_convolution_mode_with_reason() -> None:
    x, w, _ = _data()
    g = _graph()
    g.conv_fprop(g.tensor_like(x), g.tensor_like(w), padding=1,
                 convolution_mode=hipdnn.ConvolutionMode.CONVOLUTION).set_output(True)
    assert "CROSS_CORRELATION" in _reason(g)


def test_runs_every_pointwise_mode() -> None:
    """Every PointwiseMode but NOT_SET (refused by validation) has a reference kernel, so the
    engine's 'pointwise mode ... is not supported' decline is never reached."""
    from hipdnn.engines.reference._pointwise import POINTWISE_OPS
    assert set(hipdnn.PointwiseMode) - set(POINTWISE_OPS) == {hipdnn.PointwiseMode.NOT_SET}


def test_declines_double_tensors() -> None:
    g = _graph(io=hipdnn.DataType.DOUBLE)
    g.relu(g.tensor_like(_data()[0].astype(np.float64))).set_output(True)
    assert "DOUBLE" in _reason(g)


def test_non_cpu_output_buffer_is_a_typed_error_and_nothing_is_written() -> None:
    x, w, b = _data()
    g = _graph()
    xt, wt, bt, y, out = _conv_bias_relu(g, x, w, b)
    y.set_output(True)
    out.set_output(True)
    run_on_reference(g, {xt: x, wt: w, bt: b}, [y, out])  # builds the plan
    y_arr = alloc_like(y, -7.0)
    gpu = Buffer(ptr=0x10000, device="gpu", shape=tuple(out.get_dim()),
                 strides=tuple(out.get_stride()), dtype=FLOAT, kind="test device pointer")
    with pytest.raises(hipdnn.VariantPackError, match="host"):
        g.execute({xt: x, wt: w, bt: b, y: y_arr, out: gpu})
    assert np.all(y_arr == -7.0)


def test_failure_in_a_later_node_leaves_every_output_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    x, w, b = _data()
    g = _graph()
    xt, wt, bt, y, out = _conv_bias_relu(g, x, w, b)
    y.set_output(True)
    out.set_output(True)
    run_on_reference(g, {xt: x, wt: w, bt: b}, [y, out])

    def broken(*args: Any, **kwargs: Any) -> np.ndarray:
        raise ValueError("injected failure")
    monkeypatch.setattr(kernels, "relu_forward", broken)
    y_arr, o_arr = alloc_like(y, -7.0), alloc_like(out, -7.0)
    with pytest.raises(hipdnn.ExecutionError, match="relu"):
        g.execute({xt: x, wt: w, bt: b, y: y_arr, out: o_arr})
    assert np.all(y_arr == -7.0) and np.all(o_arr == -7.0)


def test_nan_and_inf_propagate_like_torch() -> None:
    x, w, b = _data()
    x[0, 0, 2, 2], x[1, 2, 4, 1] = np.nan, np.inf
    g = _graph()
    xt, wt, bt, _, out = _conv_bias_relu(g, x, w, b)
    out.set_output(True)
    (got,) = run_on_reference(g, {xt: x, wt: w, bt: b}, [out])
    assert np.isnan(got).any()
    assert_close(got, _torch_cbr(x, w, b), "conv_fprop", "fp32", what="NaN/Inf conv+bias+relu")


def test_intermediates_are_rounded_to_the_intermediate_dtype() -> None:
    x, w, b = _data(3)
    g = _graph(io=FLOAT, inter=hipdnn.DataType.HALF)
    xt, wt, bt, _, out = _conv_bias_relu(g, x, w, b)
    out.set_output(True)
    (got,) = run_on_reference(g, {xt: x, wt: w, bt: b}, [out])
    y = rounded(F.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy(), "fp16")
    expect = np.maximum(rounded(y + b, "fp16"), 0)
    assert_close(got, expect, "conv_fprop", "fp32", what="FP16 intermediates")
    assert not np.array_equal(got, _torch_cbr(x, w, b))  # the rounding is visible


def test_epsilon_and_momentum_from_the_variant_pack() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 3, 4, 4)).astype(np.float32)
    c = 3
    g = _graph()
    xt = g.tensor_like(x, "x")
    p = [g.tensor(dim=[1, c, 1, 1], data_type=FLOAT, name=n) for n in ("s", "b", "rm", "rv")]
    eps = g.tensor(dim=[1, 1, 1, 1], data_type=FLOAT, is_pass_by_value=True, name="eps")
    mom = g.tensor(dim=[1, 1, 1, 1], data_type=FLOAT, is_pass_by_value=True, name="momentum")
    y, _, inv, nrm, nrv = g.batchnorm(xt, p[0], p[1], eps, momentum=mom, in_running_mean=p[2],
                                    in_running_var=p[3])
    for t in (y, inv, nrm, nrv):
        assert t is not None
        t.set_output(True)
    ones, zeros = np.ones(c, np.float32), np.zeros(c, np.float32)
    got = run_on_reference(g, {xt: x, p[0]: ones, p[1]: zeros, p[2]: zeros, p[3]: ones,
                               eps: 0.5, mom: 0.25}, [y, inv, nrm, nrv])  # type: ignore[list-item]
    rm, rv = torch.zeros(c), torch.ones(c)
    ref = F.batch_norm(torch.tensor(x), rm, rv, training=True, momentum=0.25, eps=0.5).numpy()
    assert_close(got[0], ref, "bn_training", "fp32", what="y with eps=0.5 from the pack")
    assert_close(got[2].reshape(-1), rm.numpy(), "bn_training", "fp32", what="momentum 0.25")
    assert_close(got[3].reshape(-1), rv.numpy(), "bn_training", "fp32", what="momentum 0.25")


def test_bn_backward_without_saved_stats_recomputes_them() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(1, 2, (2, 3, 4, 4)).astype(np.float32)
    dy = rng.normal(size=x.shape).astype(np.float32)
    s = rng.uniform(0.5, 1.5, 3).astype(np.float32)
    g = _graph()
    xt, dyt = g.tensor_like(x, "x"), g.tensor_like(dy, "dy")
    st = g.tensor(dim=[1, 3, 1, 1], data_type=FLOAT, name="scale")
    outs = g.batchnorm_backward(dyt, xt, st)
    for t in outs:
        t.set_output(True)
    got = run_on_reference(g, {xt: x, dyt: dy, st: s}, outs)
    xr = torch.tensor(x, requires_grad=True)
    sr = torch.tensor(s, requires_grad=True)
    br = torch.zeros(3, requires_grad=True)
    F.batch_norm(xr, None, None, sr, br, training=True, eps=1e-5).backward(torch.tensor(dy))
    assert_close(got[0], xr.grad.numpy(), "bn_backward", "fp32", what="dx")
    assert_close(got[1].reshape(-1), sr.grad.numpy(), "bn_backward", "fp32", what="dscale")


@pytest.mark.parametrize("mode,fn", [
    ("SUB", lambda a, b: a - b), ("MUL", lambda a, b: a * b), ("MAX", torch.maximum),
    ("SIGMOID_FWD", lambda a, b: torch.sigmoid(a)), ("TANH_FWD", lambda a, b: torch.tanh(a)),
    ("ABS", lambda a, b: torch.abs(a)), ("IDENTITY", lambda a, b: a),
])
def test_more_pointwise_modes_with_broadcast(mode: str, fn: Any) -> None:
    rng = np.random.default_rng(6)
    a = rng.normal(size=(2, 3, 4, 5)).astype(np.float32)
    b = rng.normal(size=(1, 3, 1, 1)).astype(np.float32)
    g = _graph()
    at, bt = g.tensor_like(a, "a"), g.tensor_like(b, "b")
    binary = hipdnn.PointwiseMode[mode].arity == 2
    out = g.pointwise(mode, at, bt if binary else None).set_output(True)
    (got,) = run_on_reference(g, {at: a, bt: b} if binary else {at: a}, [out])
    assert_close(got, fn(torch.tensor(a), torch.tensor(b)).numpy(), "pointwise", "fp32", what=mode)


def test_running_statistics_updated_in_place() -> None:
    """PREV_ and NEXT_RUNNING_* backed by the same arrays: inputs are read before any write."""
    rng = np.random.default_rng(7)
    x = rng.normal(2, 3, (4, 3, 3, 3)).astype(np.float32)
    c = 3
    g = _graph()
    xt = g.tensor_like(x, "x")
    s, b, rm, rv = (g.tensor(dim=[1, c, 1, 1], data_type=FLOAT, name=n)
                    for n in ("s", "b", "rm", "rv"))
    y, _, _, nrm, nrv = g.batchnorm(xt, s, b, 1e-5, momentum=0.5, in_running_mean=rm,
                                    in_running_var=rv)
    for t in (y, nrm, nrv):
        assert t is not None
        t.set_output(True)
    run_mean, run_var = np.full(c, 1.0, np.float32), np.full(c, 2.0, np.float32)
    y_arr = np.zeros(x.shape, np.float32)
    run_on_reference(g, {xt: x, s: np.ones(c, np.float32), b: np.zeros(c, np.float32)} |
                     {rm: run_mean, rv: run_var, nrm: run_mean, nrv: run_var, y: y_arr}, [])
    trm, trv = torch.full((c,), 1.0), torch.full((c,), 2.0)
    F.batch_norm(torch.tensor(x), trm, trv, training=True, momentum=0.5, eps=1e-5)
    assert_close(run_mean, trm.numpy(), "bn_training", "fp32", what="in-place running mean")
    assert_close(run_var, trv.numpy(), "bn_training", "fp32", what="in-place running var")


def test_read_only_output_is_rejected_before_any_write() -> None:
    x, w, b = _data()
    g = _graph()
    xt, wt, bt, y, out = _conv_bias_relu(g, x, w, b)
    y.set_output(True)
    out.set_output(True)
    run_on_reference(g, {xt: x, wt: w, bt: b}, [y, out])
    y_arr, o_arr = alloc_like(y, -7.0), alloc_like(out, -7.0)
    o_arr.flags.writeable = False
    with pytest.raises(hipdnn.VariantPackError, match="read-only"):
        g.execute({xt: x, wt: w, bt: b, y: y_arr, out: o_arr})
    assert np.all(y_arr == -7.0)
