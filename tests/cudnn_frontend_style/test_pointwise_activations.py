"""cudnn-frontend's activation ops that hipdnn lacked (``erf``, ``elu``, ``gelu``,
``gelu_approx_tanh``, ``softplus``, ``swish`` and their ``*_backward(loss, input)``), with its
argument names, against PyTorch (forward functions; backward by autograd). FP32: DESIGN.md's
pointwise tolerance (1e-5); FP16 io: 1e-3. Also a conv + bias + activation fusion as
cudnn-frontend's conv tests write it (the activation in place of ReLU)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import hipdnn as cudnn

torch = pytest.importorskip("torch")
F = torch.nn.functional

SHAPE = (2, 3, 8, 9)


def _silu_beta(beta: float) -> Callable[[Any], Any]:
    return lambda x: x * torch.sigmoid(beta * x)


FORWARD: dict[str, tuple[Callable[[Any], Any], dict[str, Any]]] = {
    "erf": (torch.erf, {}),
    "elu": (F.elu, {}),
    "gelu": (F.gelu, {}),
    "gelu_approx_tanh": (lambda x: F.gelu(x, approximate="tanh"), {}),
    "softplus": (F.softplus, {}),
    "swish": (F.silu, {}),
    "swish_beta": (_silu_beta(1.7), {"swish_beta": 1.7}),
}


def _graph(io: Any) -> Any:
    return cudnn.pygraph(io_data_type=io, intermediate_data_type=cudnn.data_type.FLOAT,
                         compute_data_type=cudnn.data_type.FLOAT)


def _execute(graph: Any, pack: dict[Any, Any], y: Any, like: Any) -> Any:
    y.set_output(True)
    graph.build([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    assert graph.get_plan_name().startswith("CPU_REFERENCE_ENGINE")
    out = torch.full_like(like, float("nan"))
    workspace = torch.empty(graph.get_workspace_size(), dtype=torch.uint8)
    graph.execute({**pack, y: out}, workspace)
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("op", list(FORWARD))
def test_forward(op: str, dtype: Any) -> None:
    torch.manual_seed(0)
    x_gpu = (torch.randn(SHAPE) * 3).to(dtype)
    ref, extra = FORWARD[op]
    graph = _graph(cudnn.data_type.FLOAT if dtype == torch.float32 else cudnn.data_type.HALF)
    x = graph.tensor_like(x_gpu)
    y = getattr(graph, op.removesuffix("_beta"))(input=x, name=op, **extra)
    out = _execute(graph, {x: x_gpu}, y, x_gpu)
    tol = 1e-5 if dtype == torch.float32 else 1e-3
    torch.testing.assert_close(out, ref(x_gpu.float()).to(dtype), atol=tol, rtol=tol)


@pytest.mark.parametrize("op", [op for op in FORWARD if op != "erf"])
def test_backward(op: str) -> None:
    torch.manual_seed(1)
    x_gpu, dy_gpu = torch.randn(SHAPE) * 3, torch.randn(SHAPE)
    ref, extra = FORWARD[op]
    x_ref = x_gpu.clone().requires_grad_(True)
    ref(x_ref).backward(dy_gpu)
    graph = _graph(cudnn.data_type.FLOAT)
    loss, x = graph.tensor_like(dy_gpu), graph.tensor_like(x_gpu)
    dx = getattr(graph, op.removesuffix("_beta") + "_backward")(loss=loss, input=x, **extra)
    out = _execute(graph, {loss: dy_gpu, x: x_gpu}, dx, x_gpu)
    torch.testing.assert_close(out, x_ref.grad, atol=1e-5, rtol=1e-5)


def test_generic_pointwise_alpha_and_beta() -> None:
    """elu_alpha / softplus_beta reach the kernels through the generic pointwise node."""
    torch.manual_seed(2)
    x_gpu = torch.randn(SHAPE) * 3
    for mode, kw, ref in [(cudnn.pointwise_mode.ELU_FWD, {"elu_alpha": 0.3},
                           lambda x: F.elu(x, alpha=0.3)),
                          (cudnn.pointwise_mode.SOFTPLUS_FWD, {"softplus_beta": 2.0},
                           lambda x: F.softplus(x, beta=2.0))]:
        graph = _graph(cudnn.data_type.FLOAT)
        x = graph.tensor_like(x_gpu)
        out = _execute(graph, {x: x_gpu}, graph.pointwise(mode, x, **kw), x_gpu)
        torch.testing.assert_close(out, ref(x_gpu), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("act", ["gelu", "swish", "elu", "softplus", "gelu_approx_tanh"])
def test_conv_bias_activation(act: str) -> None:
    torch.manual_seed(3)
    X_gpu = torch.randn(2, 8, 9, 9).to(memory_format=torch.channels_last)
    W_gpu = torch.randn(4, 8, 3, 3).to(memory_format=torch.channels_last)
    B_gpu = torch.randn(1, 4, 1, 1)
    graph = _graph(cudnn.data_type.FLOAT)
    X, W, B = graph.tensor_like(X_gpu), graph.tensor_like(W_gpu), graph.tensor_like(B_gpu)
    conv_output = graph.conv_fprop(image=X, weight=W, padding=[1, 1], stride=[2, 2],
                                   dilation=[1, 1])
    Y = getattr(graph, act)(input=graph.bias(name="bias", input=conv_output, bias=B), name=act)
    expected = F.conv2d(X_gpu, W_gpu, B_gpu.reshape(-1), padding=1, stride=2)
    expected = FORWARD[act][0](expected)
    out = _execute(graph, {X: X_gpu, W: W_gpu, B: B_gpu}, Y, expected)
    torch.testing.assert_close(out, expected, atol=1e-4, rtol=1e-5)


def test_swish_beta_only_on_swish() -> None:
    graph = _graph(cudnn.data_type.FLOAT)
    x = graph.tensor(dim=list(SHAPE), name="x")
    with pytest.raises(cudnn.ValidationError, match="swish_beta"):
        graph.swish(x, swish_beta=float("nan"))
    graph.pointwise(cudnn.pointwise_mode.GELU_FWD, x, swish_beta=2.0).set_output(True)
    with pytest.raises(cudnn.ValidationError, match=r"swish_beta=2\.0 does not apply"):
        graph.validate()
