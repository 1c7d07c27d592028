"""Named element-wise math ops with cudnn-frontend's argument names (``graph.sqrt(input=...)``,
``graph.div(a=..., b=...)``, ``graph.max(input0=..., input1=...)``, ``binary_select`` with a
torch.bool mask, ``tanh_backward(loss=..., input=...)``), against PyTorch. FP32: DESIGN.md's
pointwise tolerance (1e-5)."""

from __future__ import annotations

from typing import Any

import pytest

import hipdnn as cudnn

torch = pytest.importorskip("torch")

SHAPE = (2, 3, 4, 5)


def _run(build: Any, inputs: dict[str, Any]) -> Any:
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT,
                          intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT)
    ts = {k: graph.tensor_like(v) for k, v in inputs.items()}
    y = build(graph, **ts)
    y.set_output(True)
    graph.build([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    out = torch.full(SHAPE, float("nan"))
    graph.execute({**{ts[k]: v for k, v in inputs.items()}, y: out})
    return out


UNARY = {
    "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "reciprocal": torch.reciprocal, "exp": torch.exp,
    "log": torch.log, "neg": torch.neg, "abs": torch.abs, "ceil": torch.ceil,
    "floor": torch.floor, "sin": torch.sin, "tan": torch.tan, "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
}


@pytest.mark.parametrize("op", list(UNARY))
def test_unary(op: str) -> None:
    torch.manual_seed(0)
    x = torch.rand(SHAPE) * 2 + 0.1  # positive, so sqrt/log/rsqrt are defined
    if op in ("neg", "abs", "ceil", "floor", "sin", "tan", "tanh", "sigmoid"):
        x = x - 1.0
    y = _run(lambda g, x: getattr(g, op)(input=x, name=op), {"x": x})
    torch.testing.assert_close(y, UNARY[op](x), atol=1e-5, rtol=1e-5)


BINARY = {
    "div": (("a", "b"), torch.div), "add_square": (("a", "b"), lambda a, b: a + b * b),
    "max": (("input0", "input1"), torch.maximum), "min": (("input0", "input1"), torch.minimum),
    "tanh_backward": (("loss", "input"), lambda dy, x: dy * (1 - torch.tanh(x) ** 2)),
    "sigmoid_backward": (("loss", "input"),
                         lambda dy, x: dy * torch.sigmoid(x) * (1 - torch.sigmoid(x))),
}


@pytest.mark.parametrize("op", list(BINARY))
def test_binary(op: str) -> None:
    torch.manual_seed(1)
    names, ref = BINARY[op]
    a, b = torch.randn(SHAPE), torch.rand(SHAPE) + 0.5
    y = _run(lambda g, **t: getattr(g, op)(**{names[0]: t["a"], names[1]: t["b"]}),
             {"a": a, "b": b})
    torch.testing.assert_close(y, ref(a, b), atol=1e-5, rtol=1e-5)


def test_binary_select_with_a_bool_mask() -> None:
    torch.manual_seed(2)
    a, b = torch.randn(SHAPE), torch.randn(SHAPE)
    mask = torch.rand(SHAPE) > 0.5
    y = _run(lambda g, a, b, m: g.binary_select(input0=a, input1=b, mask=m),
             {"a": a, "b": b, "m": mask})
    torch.testing.assert_close(y, torch.where(mask, a, b), atol=0, rtol=0)
    assert 0 < int(mask.sum()) < mask.numel()


@pytest.mark.parametrize("axis", [0, 1, 3])
def test_gen_index(axis: int) -> None:
    """``gen_index(input, axis)``: each element's coordinate along ``axis``, into an INT32
    output as cudnn-frontend scripts set it."""
    x_gpu = torch.randn(SHAPE).to(memory_format=torch.channels_last)
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT,
                          intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT)
    x = graph.tensor_like(x_gpu)
    index = graph.gen_index(input=x, axis=axis, name="idx")
    index.set_output(True).set_data_type(cudnn.data_type.INT32)
    graph.build([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    out = torch.full(SHAPE, -1, dtype=torch.int32)
    graph.execute({x: x_gpu, index: out})
    view = [1] * len(SHAPE)
    view[axis] = SHAPE[axis]
    expected = torch.arange(SHAPE[axis], dtype=torch.int32).reshape(view).expand(SHAPE)
    torch.testing.assert_close(out, expected, atol=0, rtol=0)


@pytest.mark.parametrize("axis", [None, 4, -1])
def test_gen_index_needs_an_axis_of_the_input(axis: int | None) -> None:
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    x = graph.tensor(dim=list(SHAPE), name="x")
    graph.pointwise(cudnn.pointwise_mode.GEN_INDEX, x, axis=axis, name="idx").set_output(True)
    with pytest.raises(cudnn.ValidationError, match=r"'idx'.*GEN_INDEX needs axis in 0\.\.3"):
        graph.validate()
