"""Dense tensors with a size-1 axis run on MIOPEN_ENGINE (issue 29, defect 7).

A size-1 axis's stride addresses nothing, so a dense NHWC tensor with C == 1 or N == 1 is
dense whatever that stride is. Before, output-stride inference broke ties between size-1 axes
into non-standard orders (a C=1 NHWC input gave Y strides [75, 5, 15, 1], a K=1 NHWC DY gave DX
[50, 5, 10, 1]), and the engine's layout check compared the strides of size-1 axes too, so these
graphs were declined ("dense tensors only", or mixed layouts) and ran on CPU_REFERENCE_ENGINE.
The emulated device's layout classifier called a C=1 tensor NCHW only. Numbers vs PyTorch in
float64; the real library's acceptance of the same graphs: tests/stubgpu/test_size1_layouts.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hipdnn
from hipdnn import DataType, Graph
from hipdnn.engines.miopen import MiopenEngine

torch = pytest.importorskip("torch")
F = DataType.FLOAT
NHWC = "NHWC"


def _nhwc(shape: tuple[int, ...], seed: int) -> Any:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g).to(memory_format=torch.channels_last)


def conv_cases() -> dict[str, Any]:
    """name -> builder returning (graph, output tensor, pack without the output, expected,
    the output's expected strides or None)."""
    def c1_nhwc_inferred_y() -> tuple[Any, ...]:
        x, w = _nhwc((2, 1, 5, 5), 1), _nhwc((3, 1, 3, 3), 2)
        g = Graph(io_data_type=F, compute_data_type=F)
        X, W = g.tensor_like(x, "x"), g.tensor_like(w, "w")
        assert X.get_stride() == [25, 1, 5, 1]  # exactly NHWC (NCHW would be [25, 25, 5, 1])
        y = g.conv_fprop(X, W, padding=[1, 1], name="conv")
        want = torch.nn.functional.conv2d(x.double(), w.double(), padding=1)
        return g, y, {X: x, W: w}, want, [75, 1, 15, 3]

    def k1_nhwc_dy_inferred_dx() -> tuple[Any, ...]:
        dy, w = _nhwc((1, 1, 5, 5), 3), _nhwc((1, 2, 3, 3), 4)
        g = Graph(io_data_type=F, compute_data_type=F)
        DY, W = g.tensor_like(dy, "dy"), g.tensor_like(w, "w")
        dx = g.conv_dgrad(DY, W, padding=[1, 1], name="dgrad")
        want = torch.nn.grad.conv2d_input((1, 2, 5, 5), w.double(), dy.double(), padding=1)
        return g, dx, {DY: dy, W: w}, want, [50, 1, 10, 2]

    def n1_nhwc_any_n_stride() -> tuple[Any, ...]:
        x, w = _nhwc((1, 4, 5, 5), 5), _nhwc((6, 4, 3, 3), 6)
        g = Graph(io_data_type=F, compute_data_type=F)
        X = g.tensor(dim=[1, 4, 5, 5], stride=[7, 1, 20, 4], name="x")  # N's stride: anything
        W = g.tensor_like(w, "w")
        y = g.conv_fprop(X, W, padding=[1, 1], name="conv")
        want = torch.nn.functional.conv2d(x.double(), w.double(), padding=1)
        return g, y, {X: x, W: w}, want, [150, 1, 30, 6]

    def c1_nchw_x_nhwc_w_and_y() -> tuple[Any, ...]:
        x = torch.randn((2, 1, 5, 5), generator=torch.Generator().manual_seed(7))  # contiguous
        w = _nhwc((3, 1, 3, 3), 8)
        g = Graph(io_data_type=F, compute_data_type=F)
        X, W = g.tensor_like(x, "x"), g.tensor_like(w, "w")
        assert X.get_stride() == [25, 25, 5, 1]
        y = g.conv_fprop(X, W, padding=[1, 1], name="conv")
        y.set_stride(hipdnn.packed_strides([2, 3, 5, 5], NHWC))
        want = torch.nn.functional.conv2d(x.double(), w.double(), padding=1)
        return g, y, {X: x, W: w}, want, None

    return {f.__name__: f for f in (c1_nhwc_inferred_y, k1_nhwc_dy_inferred_dx,
                                    n1_nhwc_any_n_stride, c1_nchw_x_nhwc_w_and_y)}


CASES = conv_cases()


@pytest.mark.parametrize("case", sorted(CASES))
def test_conv_with_size1_axes_runs_on_miopen(emulated_miopen_engine: MiopenEngine,
                                             case: str) -> None:
    g, out, pack, want, strides = CASES[case]()
    out.set_output(True)
    g.validate()
    if strides is not None:
        assert out.get_stride() == strides  # the standard channels-last strides
    assert emulated_miopen_engine.check_support(g, None) is None
    g.build()
    try:
        assert g.plans[0].engine.name == "MIOPEN_ENGINE", g.engine_reasons()
        buf = torch.full(out.get_dim(), float("nan")).as_strided(out.get_dim(), out.get_stride())
        ws = g.get_workspace_size()
        g.execute({**pack, out: buf}, torch.empty(ws, dtype=torch.uint8) if ws else None)
        torch.testing.assert_close(buf.double(), want, atol=1e-5, rtol=1e-5)
    finally:
        g.close()


def test_batchnorm_nhwc_with_n1_any_n_stride_runs_on_miopen(
        emulated_miopen_engine: MiopenEngine) -> None:
    x = _nhwc((1, 3, 4, 4), 9)
    rng = np.random.default_rng(10)
    mean, scale, bias = (torch.from_numpy(rng.standard_normal((1, 3, 1, 1)).astype(np.float32))
                         for _ in range(3))
    var = torch.from_numpy(rng.uniform(0.5, 2.0, (1, 3, 1, 1)).astype(np.float32))
    g = Graph(io_data_type=F, compute_data_type=F, intermediate_data_type=F)
    X = g.tensor(dim=[1, 3, 4, 4], stride=[1, 1, 12, 3], name="x")
    params = [g.tensor_like(t, n) for t, n in ((mean, "mean"), (var, "var"), (scale, "scale"),
                                               (bias, "bias"))]
    y = g.batchnorm_inference(X, params[0], scale=params[2], bias=params[3], variance=params[1],
                              epsilon=1e-5, name="bn")
    y.set_output(True)
    g.build()
    try:
        reason = g.engine_reasons()["MIOPEN_ENGINE"]
        if reason is not None and "in NHWC needs MIOpen >= 3.5" in reason:
            return  # 3.4 has no channels-last BN inference; the layout was accepted before that
        assert g.plans[0].engine.name == "MIOPEN_ENGINE", reason
        assert y.get_stride() == [48, 1, 12, 3]
        out = torch.full((1, 3, 4, 4), float("nan")).to(memory_format=torch.channels_last)
        g.execute({X: x, params[0]: mean, params[1]: var, params[2]: scale, params[3]: bias,
                   y: out})
        want = torch.nn.functional.batch_norm(x.double(), mean.double().flatten(),
                                              var.double().flatten(), scale.double().flatten(),
                                              bias.double().flatten(), eps=1e-5)
        torch.testing.assert_close(out.double(), want, atol=2e-4, rtol=2e-4)
    finally:
        g.close()


def test_activation_of_an_n1_tensor_with_any_n_stride_runs_on_miopen(
        emulated_miopen_engine: MiopenEngine) -> None:
    """The standalone activation row compared the strides of size-1 axes too: an N=1 NHWC input
    whose N stride is not the packed one, and its inferred (packed) output, were declined."""
    x = _nhwc((1, 4, 3, 3), 12)
    g = Graph(io_data_type=F, compute_data_type=F, intermediate_data_type=F)
    X = g.tensor(dim=[1, 4, 3, 3], stride=[0, 1, 12, 4], name="x")
    y = g.relu(X, name="act").set_output(True)
    g.build()
    try:
        assert y.get_stride() == [36, 1, 12, 4]
        assert g.plans[0].engine.name == "MIOPEN_ENGINE", g.engine_reasons()
        out = torch.full((1, 4, 3, 3), float("nan")).to(memory_format=torch.channels_last)
        g.execute({X: x, y: out})
        torch.testing.assert_close(out, torch.relu(x))
    finally:
        g.close()
