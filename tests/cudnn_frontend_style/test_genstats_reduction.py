"""``genstats`` and ``reduction`` written as cudnn-frontend users write them (a scale-bias-ReLU-conv
with genstats, a jit/graph_cache conv + channel reduction, every ``reduction_mode``), after
``import hipdnn as cudnn``, against PyTorch on the CPU. Only CPU_REFERENCE_ENGINE runs them.
"""

from __future__ import annotations

from typing import Any

import pytest

import hipdnn as cudnn
from hipdnn.engines import get_engine

torch = pytest.importorskip("torch")


def test_conv_genstats() -> None:
    torch.manual_seed(0)
    n, c, k = 2, 16, 32
    handle = cudnn.create_handle()
    x_gpu = torch.randn(n, c, 12, 12, dtype=torch.float16).to(memory_format=torch.channels_last)
    w_gpu = torch.randn(k, c, 3, 3, dtype=torch.float16).to(memory_format=torch.channels_last)
    scale = (torch.randn(1, c, 1, 1, dtype=torch.float16) * 0.5).to(
        memory_format=torch.channels_last)
    bias = (torch.randn(1, c, 1, 1, dtype=torch.float16) * 0.5).to(
        memory_format=torch.channels_last)

    graph = cudnn.pygraph(io_data_type=cudnn.data_type.HALF,
                          intermediate_data_type=cudnn.data_type.HALF,
                          compute_data_type=cudnn.data_type.FLOAT, handle=handle)
    X = graph.tensor(name="X", dim=x_gpu.size(), stride=x_gpu.stride(), data_type=x_gpu.dtype)
    W = graph.tensor(name="W", dim=w_gpu.size(), stride=w_gpu.stride(), data_type=w_gpu.dtype)
    S = graph.tensor(name="S", dim=scale.size(), stride=scale.stride(), data_type=scale.dtype)
    B = graph.tensor(name="B", dim=bias.size(), stride=bias.stride(), data_type=bias.dtype)
    conv_in = graph.relu(name="relu", input=graph.bias(name="bias", input=graph.scale(
        name="scale", input=X, scale=S), bias=B))
    Y = graph.conv_fprop(image=conv_in, weight=W, padding=[1, 1], stride=[1, 1],
                         dilation=[1, 1])
    Y.set_output(True)
    SUM, SQ_SUM = graph.genstats(name="genstats", input=Y)
    SUM.set_output(True).set_data_type(cudnn.data_type.FLOAT)
    SQ_SUM.set_output(True).set_data_type(cudnn.data_type.FLOAT)
    graph.validate()
    assert SUM.get_dim() == [1, k, 1, 1] and SQ_SUM.get_stride() == [k, 1, k, k]  # NHWC
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    graph.check_support()
    graph.build_plans()

    y_ref = torch.nn.functional.conv2d(
        torch.relu(x_gpu.double() * scale.double() + bias.double()).half().double(),
        w_gpu.double(), padding=1)
    y_act = torch.full(y_ref.shape, float("nan"), dtype=torch.float16).to(
        memory_format=torch.channels_last)
    sum_dev = torch.full((1, k, 1, 1), float("nan"))
    sq_dev = torch.full((1, k, 1, 1), float("nan"))
    graph.execute({X: x_gpu.data_ptr(), W: w_gpu, Y: y_act.data_ptr(), SUM: sum_dev,
                   SQ_SUM: sq_dev, S: scale, B: bias},
                  torch.empty(graph.get_workspace_size(), dtype=torch.uint8).data_ptr(),
                  handle=handle)
    torch.testing.assert_close(y_act.double(), y_ref, atol=1e-1, rtol=1e-2)
    # the statistics of the values written to Y (FP32 sums of 288 values)
    ya = y_act.double()
    torch.testing.assert_close(sum_dev.double(), ya.sum(dim=(0, 2, 3), keepdim=True),
                               atol=1e-4, rtol=1e-5)
    torch.testing.assert_close(sq_dev.double(), (ya * ya).sum(dim=(0, 2, 3), keepdim=True),
                               atol=1e-3, rtol=1e-5)
    # and against PyTorch's own fp16 path, with cudnn-frontend's genstats tolerance for the sum
    # (0.5: a sum of 288 fp16-rounded values)
    torch.testing.assert_close(sum_dev.double(), y_ref.sum(dim=(0, 2, 3), keepdim=True),
                               atol=0.5, rtol=1e-2)


def _reduce_key(handle: Any, x_gpu: Any, w_gpu: Any) -> tuple[Any, ...]:
    return (tuple(x_gpu.shape), tuple(x_gpu.stride()), tuple(w_gpu.shape),
            tuple(w_gpu.stride()), x_gpu.dtype, w_gpu.dtype)


builds: list[int] = []


@cudnn.jit(heur_modes=[cudnn.heur_mode.A, cudnn.heur_mode.B])
@cudnn.graph_cache(key_fn=_reduce_key)
def create_conv_reduce_graph(handle: Any, x_gpu: Any, w_gpu: Any) -> Any:
    builds.append(1)
    with cudnn.graph(handle) as (g, _):
        X = g.tensor_like(x_gpu)
        Wt = g.tensor_like(w_gpu)
        y_conv = g.conv_fprop(X, Wt, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
        Y = g.reduction(y_conv, mode=cudnn.reduction_mode.ADD)
        n, _, h, w = X.get_dim()
        Y.set_output(True).set_dim([n, 1, h, w]).set_data_type(cudnn.data_type.FLOAT)
    return g, [X, Wt, Y]


def test_conv_reduction_with_jit_and_graph_cache() -> None:
    torch.manual_seed(1)
    handle = cudnn.create_handle()
    n, k, c, h, w = 2, 32, 16, 10, 12
    x_gpu = torch.randn(n, c, h, w, dtype=torch.float16).to(memory_format=torch.channels_last)
    w_gpu = torch.randn(k, c, 3, 3, dtype=torch.float16).to(memory_format=torch.channels_last)
    y_expected = torch.nn.functional.conv2d(x_gpu.float(), w_gpu.float(), padding=1).sum(dim=1)

    builds.clear()
    g, (x_uid, w_uid, y_uid) = create_conv_reduce_graph(handle, x_gpu, w_gpu)
    g2, uids2 = create_conv_reduce_graph(handle, torch.randn_like(x_gpu), torch.randn_like(w_gpu))
    assert g2 is g and list(uids2) == [x_uid, w_uid, y_uid] and len(builds) == 1
    y_actual = torch.zeros_like(y_expected)  # (N, H, W): the size-1 reduced axis dropped
    g.execute({x_uid: x_gpu, w_uid: w_gpu, y_uid: y_actual},
              torch.empty(g.get_workspace_size(), dtype=torch.uint8), handle=handle)
    # FP32 sums of 32 channels of FP32 conv results: conv fp32 tolerance, scaled by the length
    torch.testing.assert_close(y_actual, y_expected, atol=1e-3, rtol=1e-4)


_MODES = {
    "ADD": lambda x, d: x.sum(dim=d, keepdim=True),
    "MUL": lambda x, d: x.prod(dim=d[0], keepdim=True) if len(d) == 1 else None,
    "MIN": lambda x, d: x.amin(dim=d, keepdim=True),
    "MAX": lambda x, d: x.amax(dim=d, keepdim=True),
    "AMAX": lambda x, d: x.abs().amax(dim=d, keepdim=True),
    "AVG": lambda x, d: x.mean(dim=d, keepdim=True),
    "NORM1": lambda x, d: x.abs().sum(dim=d, keepdim=True),
    "NORM2": lambda x, d: x.square().sum(dim=d, keepdim=True).sqrt(),
    "MUL_NO_ZEROS": lambda x, d: torch.where(x == 0, torch.ones_like(x), x).prod(
        dim=d[0], keepdim=True) if len(d) == 1 else None,
}


@pytest.mark.parametrize("mode", list(_MODES))
@pytest.mark.parametrize("axes", [(1,), (2, 3), (0, 2, 3)], ids=["C", "HW", "NHW"])
def test_reduction_modes(mode: str, axes: tuple[int, ...]) -> None:
    if mode in ("MUL", "MUL_NO_ZEROS") and len(axes) > 1:
        axes = axes[:1]  # products of few values, so FP32 keeps them well inside its range
    torch.manual_seed(2)
    x = torch.rand(2, 6, 3, 4) + 0.5
    x[0, 1, 2, 3] = 0.0  # a zero for MUL_NO_ZEROS and MIN
    x[1, 2, 0, 0] = -3.0  # a negative for AMAX/NORM1
    g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT,
                      intermediate_data_type=cudnn.data_type.FLOAT,
                      compute_data_type=cudnn.data_type.FLOAT)
    X = g.tensor_like(x)
    Y = g.reduction(input=X, mode=getattr(cudnn.reduction_mode, mode), name="red")
    out_dim = [1 if i in axes else d for i, d in enumerate(x.shape)]
    Y.set_output(True).set_dim(out_dim)
    g.build([cudnn.heur_mode.A])
    expected = _MODES[mode](x.double(), list(axes)).float()
    y = torch.full(out_dim, float("nan")).contiguous(memory_format=torch.channels_last)
    # unset strides are channels-last packed (torch may pick any stride for a size-1 axis)
    assert [s for d, s in zip(out_dim, y.stride(), strict=True) if d != 1] == [
        s for d, s in zip(out_dim, Y.get_stride(), strict=True) if d != 1]
    g.execute({X: x, Y: y})
    torch.testing.assert_close(y, expected, atol=1e-5, rtol=1e-5)


def test_reduction_and_genstats_errors_name_the_node() -> None:
    g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    X = g.tensor(dim=[2, 3, 4, 4], name="x")
    g.reduction(X, mode=cudnn.reduction_mode.MAX, name="red").set_output(True).set_dim(
        [2, 2, 1, 1])
    with pytest.raises(cudnn.ValidationError, match=r"node 'red'.*Y dims \[2, 2, 1, 1\] do not "
                                                    r"fit X \[2, 3, 4, 4\]"):
        g.validate()
    g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    X = g.tensor(dim=[2, 3, 4, 4], name="x")
    g.reduction(X, mode=cudnn.reduction_mode.NOT_SET, name="red").set_output(True)
    with pytest.raises(cudnn.ValidationError, match=r"node 'red'.*NOT_SET; valid: ADD, MUL"):
        g.validate()
    with pytest.raises(cudnn.ValidationError, match=r"reduction mode.*'SUM' is not a "
                                                    r"ReductionMode"):
        g.reduction(X, mode="SUM")
    g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    X = g.tensor(dim=[2, 3, 4, 4], name="x")
    s, q = g.genstats(X, name="gs")
    s.set_output(True).set_dim([1, 4, 1, 1])
    q.set_output(True)
    with pytest.raises(cudnn.ValidationError, match=r"node 'gs'.*\[1, 4, 1, 1\].*produces "
                                                    r"\[1, 3, 1, 1\]"):
        g.validate()


def test_miopen_engine_declines_genstats_and_reduction_naming_the_node() -> None:
    for op in ("genstats", "reduction"):
        g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
        X = g.tensor(dim=[2, 3, 4, 4], name="x")
        if op == "genstats":
            for t in g.genstats(X, name="stats"):
                t.set_output(True)
        else:
            g.reduction(X, mode=cudnn.reduction_mode.ADD, name="stats").set_output(True)
        g.validate()
        reason = get_engine("MIOPEN_ENGINE").check_support(g, None)
        assert reason is not None and "node 'stats'" in reason and f"computes {op}" in reason


def test_genstats_and_reduction_round_trip_through_json() -> None:
    torch.manual_seed(3)
    x = torch.randn(2, 3, 4, 5)
    g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    X = g.tensor_like(x)
    s, q = g.genstats(X, name="gs")
    s.set_output(True)
    q.set_output(True)
    g.reduction(X, mode=cudnn.reduction_mode.NORM2, name="red").set_output(True).set_dim(
        [2, 3, 1, 1])
    g.validate()
    g2 = cudnn.Graph.from_json(g.to_json())
    g2.build([cudnn.heur_mode.A])
    outs = {t.get_name(): t for t in g2.all_tensors}
    buffers = {name: torch.empty(outs[name].get_dim()) for name in
               ("gs::SUM", "gs::SQ_SUM", "red::Y")}
    g2.execute({X.get_uid(): x, **{outs[n]: b for n, b in buffers.items()}})
    torch.testing.assert_close(buffers["gs::SUM"], x.sum(dim=(0, 2, 3), keepdim=True))
    torch.testing.assert_close(buffers["gs::SQ_SUM"], x.square().sum(dim=(0, 2, 3),
                                                                      keepdim=True))
    torch.testing.assert_close(buffers["red::Y"], x.square().sum(dim=(2, 3),
                                                                  keepdim=True).sqrt())
