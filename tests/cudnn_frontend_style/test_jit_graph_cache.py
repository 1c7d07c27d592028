"""``@cudnn.jit`` + ``@cudnn.graph_cache`` + ``with cudnn.graph(handle) as (g, _)``, written the way
cudnn-frontend's newer tests are (conv + bias + clamp, conv reduction-style caching), against
PyTorch."""

from __future__ import annotations

from typing import Any

import pytest

import hipdnn as cudnn

torch = pytest.importorskip("torch")
F = torch.nn.functional

built: list[tuple[int, ...]] = []


def conv_key(handle: Any, X_gpu: Any, W_gpu: Any, B_gpu: Any, padding: Any, stride: Any) -> Any:
    return (tuple(X_gpu.shape), tuple(X_gpu.stride()), tuple(W_gpu.shape), X_gpu.dtype,
            tuple(padding), tuple(stride))


@cudnn.jit(heur_modes=[cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
@cudnn.graph_cache(key_fn=conv_key)
def create_conv_bias_clamp_graph(handle: Any, X_gpu: Any, W_gpu: Any, B_gpu: Any, padding: Any,
                                 stride: Any) -> Any:
    built.append(tuple(X_gpu.shape))
    with cudnn.graph(handle, io_data_type=cudnn.data_type.FLOAT,
                     intermediate_data_type=cudnn.data_type.FLOAT,
                     compute_data_type=cudnn.data_type.FLOAT) as (g, _):
        X = g.tensor_like(X_gpu)
        W = g.tensor_like(W_gpu)
        B = g.tensor_like(B_gpu)
        conv_output = g.conv_fprop(image=X, weight=W, pre_padding=padding, post_padding=padding,
                                   stride=stride, dilation=[1, 1])
        bias_output = g.bias(name="bias", input=conv_output, bias=B)
        Y = g.relu(name="relu", input=bias_output, lower_clip=0.0, upper_clip=0.5)
        Y.set_output(True)
    return g, [X, W, B, Y]


@pytest.mark.parametrize("shape", [(2, 8, 9, 9), (1, 8, 5, 7)])
def test_jit_conv_bias_clamp(shape: tuple[int, ...]) -> None:
    torch.manual_seed(0)
    handle = cudnn.create_handle()
    X_gpu = torch.randn(*shape).to(memory_format=torch.channels_last)
    W_gpu = torch.randn(4, 8, 3, 3).to(memory_format=torch.channels_last)
    B_gpu = torch.randn(1, 4, 1, 1)
    before = len(built)
    g, uids = create_conv_bias_clamp_graph(handle, X_gpu, W_gpu, B_gpu, [1, 1], [2, 2])
    assert len(built) == before + 1 and all(isinstance(u, int) for u in uids)
    expected = torch.clamp(F.conv2d(X_gpu, W_gpu, B_gpu.reshape(-1), padding=1, stride=2), 0, 0.5)
    Y_gpu = torch.empty_like(expected)
    workspace = torch.empty(g.get_workspace_size(), dtype=torch.uint8)
    g.execute(dict(zip(uids, [X_gpu, W_gpu, B_gpu, Y_gpu], strict=True)), workspace,
              handle=handle)
    torch.testing.assert_close(Y_gpu, expected, atol=1e-4, rtol=1e-4)
    # same key: the cached, built graph comes back without running the builder again
    g2, uids2 = create_conv_bias_clamp_graph(handle, X_gpu, W_gpu, B_gpu, [1, 1], [2, 2])
    assert g2 is g and uids2 == uids and len(built) == before + 1


def test_graph_context_defaults_are_cudnn_frontends() -> None:
    with cudnn.graph(None) as (g, extra):
        assert extra == []
        assert g.io_data_type == cudnn.data_type.HALF
        assert g.compute_data_type == cudnn.data_type.FLOAT
    assert g.name == "cudnn_graph"


def test_graph_cache_evicts_least_recently_used() -> None:
    calls: list[int] = []

    @cudnn.graph_cache(key_fn=lambda n: n, maxsize=2)
    def make(n: int) -> int:
        calls.append(n)
        return n * 10

    assert [make(1), make(2), make(1), make(3), make(1), make(2)] == [10, 20, 10, 30, 10, 20]
    assert calls == [1, 2, 3, 2]  # 2 was evicted by 3 (1 was used more recently)


def test_jit_rejects_a_wrong_return() -> None:
    @cudnn.jit()
    def bad() -> Any:
        return "graph"

    with pytest.raises(cudnn.ValidationError, match="must return"):
        bad()


def test_graph_cache_unhashable_key_is_an_argument_error() -> None:
    # a list key (e.g. [x.shape]) raised Python's bare "unhashable type: 'list'"
    built = []

    @cudnn.graph_cache(key_fn=lambda n: [n])
    def make(n: int) -> int:
        built.append(n)
        return n

    with pytest.raises(cudnn.ArgumentError, match="graph_cache: key_fn returned an unhashable list"):
        make(3)
    assert not built
