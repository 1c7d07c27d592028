"""Comparison, logical, leaky ReLU and identity pointwise ops, written as a cudnn-frontend user
writes them (``import hipdnn as cudnn``, pygraph, tensor_like, execute with a dict), against
PyTorch. These modes run on CPU_REFERENCE_ENGINE; MIOPEN_ENGINE has no seed row for them.
"""

from __future__ import annotations

from typing import Any

import pytest

import hipdnn as cudnn

torch = pytest.importorskip("torch")


def _run(build: Any, inputs: list[Any], out_dtype: Any = torch.float32) -> Any:
    handle = cudnn.create_handle()
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT,
                          intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT, handle=handle)
    ts = [graph.tensor_like(t) for t in inputs]
    Y = build(graph, *ts)
    Y.set_output(True)
    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    graph.check_support()
    graph.build_plans()
    assert graph.get_plan_name_at_index(0).startswith("CPU_REFERENCE_ENGINE")
    y = torch.empty(inputs[0].shape, dtype=out_dtype)
    workspace = torch.empty(graph.get_workspace_size(), dtype=torch.uint8)
    graph.execute({**dict(zip(ts, inputs, strict=True)), Y: y}, workspace, handle=handle)
    return y


@pytest.mark.parametrize("op,ref", [
    ("cmp_gt", torch.gt), ("cmp_ge", torch.ge), ("cmp_lt", torch.lt),
    ("cmp_le", torch.le), ("cmp_eq", torch.eq), ("cmp_neq", torch.ne)])
def test_comparisons(op: str, ref: Any) -> None:
    torch.manual_seed(0)
    a = torch.randint(-2, 3, (2, 3, 4, 5)).float()
    b = torch.randint(-2, 3, (1, 3, 1, 1)).float()
    y = _run(lambda g, x, c: getattr(g, op)(input=x, comparison=c, name="cmp"), [a, b])
    torch.testing.assert_close(y, ref(a, b).float(), rtol=0, atol=0)
    assert 0 < int(y.sum()) < y.numel()  # both outcomes occur: the check can fail


@pytest.mark.parametrize("op,ref", [("logical_and", torch.logical_and),
                                    ("logical_or", torch.logical_or)])
def test_logical_binary(op: str, ref: Any) -> None:
    torch.manual_seed(1)
    a = torch.randint(0, 2, (2, 3, 4, 4)).float()
    b = torch.randint(0, 2, (2, 3, 4, 4)).float()
    y = _run(lambda g, x, c: getattr(g, op)(x, c), [a, b])
    torch.testing.assert_close(y, ref(a, b).float(), rtol=0, atol=0)


def test_logical_not_and_identity() -> None:
    a = torch.randint(0, 2, (2, 3, 4, 4)).float()
    y = _run(lambda g, x: g.logical_not(x), [a])
    torch.testing.assert_close(y, torch.logical_not(a).float(), rtol=0, atol=0)
    x = torch.randn(2, 3, 4, 4)
    torch.testing.assert_close(_run(lambda g, t: g.identity(input=t), [x]), x)


def test_binary_select_picks_in0_where_mask() -> None:
    torch.manual_seed(2)
    a, b = torch.randn(2, 3, 4, 4), torch.randn(2, 3, 4, 4)
    m = torch.randint(0, 2, (2, 3, 4, 4)).float()
    y = _run(lambda g, x, z, t: g.pointwise(cudnn.pointwise_mode.BINARY_SELECT, x, z, t),
             [a, b, m])
    torch.testing.assert_close(y, torch.where(m != 0, a, b))


def test_leaky_relu_and_backward() -> None:
    torch.manual_seed(3)
    x = torch.randn(2, 4, 6, 6)
    y = _run(lambda g, t: g.leaky_relu(input=t, negative_slope=0.2), [x])
    torch.testing.assert_close(y, torch.nn.functional.leaky_relu(x, 0.2))
    dy = torch.randn(2, 4, 6, 6)
    xr = x.clone().requires_grad_(True)
    torch.nn.functional.leaky_relu(xr, 0.2).backward(dy)
    dx = _run(lambda g, dyt, t: g.leaky_relu_backward(loss=dyt, input=t, negative_slope=0.2),
              [dy, x])
    torch.testing.assert_close(dx, xr.grad)
