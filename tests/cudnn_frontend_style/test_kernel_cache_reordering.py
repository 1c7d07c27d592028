"""cudnn-frontend module names a conv script may use that hipdnn lacked: ``create_kernel_cache()``
(given to ``pygraph(kernel_cache=...)``) and ``tensor_reordering`` (``tensor(reordering_type=
cudnn.tensor_reordering.NONE)``, ``get_/set_reordering_type``), against PyTorch."""

from __future__ import annotations

import pytest

import hipdnn as cudnn

torch = pytest.importorskip("torch")
F = torch.nn.functional


def test_conv_with_kernel_cache_and_reordering_none() -> None:
    torch.manual_seed(0)
    cache = cudnn.create_kernel_cache()
    X_gpu = torch.randn(2, 8, 7, 7).to(memory_format=torch.channels_last)
    W_gpu = torch.randn(4, 8, 3, 3).to(memory_format=torch.channels_last)
    with pytest.warns(UserWarning, match="kernel_cache"):
        graph = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT,
                              intermediate_data_type=cudnn.data_type.FLOAT,
                              compute_data_type=cudnn.data_type.FLOAT, kernel_cache=cache)
    X = graph.tensor(name="X", dim=X_gpu.size(), stride=X_gpu.stride(),
                     data_type=X_gpu.dtype, reordering_type=cudnn.tensor_reordering.NONE)
    W = graph.tensor_like(W_gpu).set_reordering_type(cudnn.tensor_reordering.NONE)
    assert X.get_reordering_type() == cudnn.tensor_reordering.NONE
    Y = graph.conv_fprop(X, W, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
    Y.set_output(True)
    graph.build([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    Y_actual = torch.zeros(2, 4, 7, 7).to(memory_format=torch.channels_last)
    workspace = torch.empty(graph.get_workspace_size(), dtype=torch.uint8)
    graph.execute({X: X_gpu, W: W_gpu, Y: Y_actual}, workspace)
    torch.testing.assert_close(Y_actual, F.conv2d(X_gpu, W_gpu, padding=1), atol=1e-5,
                               rtol=1e-5)
    again = cudnn.create_kernel_cache()
    again.deserialize(cache.serialize())


def test_reordered_layouts_are_refused() -> None:
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.INT8)
    x = graph.tensor(name="x", dim=[1, 32, 2, 2])
    with pytest.raises(cudnn.ValidationError, match=r"tensor 'x'.*INT8x32 is not supported.*"
                                                    r"valid: NONE"):
        x.set_reordering_type(cudnn.tensor_reordering.INT8x32)
    with pytest.raises(cudnn.ValidationError, match="reordering_type"):
        x.set_reordering_type("sideways")
    with pytest.raises(cudnn.ValidationError, match="reordering_type is not supported"):
        graph.tensor(name="y", dim=[1, 32, 2, 2], reordering_type=cudnn.tensor_reordering.F16x16)


@pytest.mark.parametrize("data", ["{oops", '{"kernels": []}', b"\xff"])
def test_kernel_cache_deserialize_bad_input(data: str | bytes) -> None:
    with pytest.raises(cudnn.ValidationError, match=r"kernel_cache\.deserialize"):
        cudnn.create_kernel_cache().deserialize(data)
