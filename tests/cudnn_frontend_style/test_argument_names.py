"""Every keyword that cudnn-frontend's ``pygraph`` binding (python/pygraph/pygraph.cpp,
pointwise.cpp, norm.cpp; cudnn-frontend 1.x) declares for the graph methods hipdnn has is a
keyword of hipdnn's method, so a script calling them with keywords ports by renaming the
module. The table is those files' ``py::arg`` names; methods hipdnn lacks are not listed."""

from __future__ import annotations

import inspect

import pytest

import hipdnn as cudnn

torch = pytest.importorskip("torch")

UNARY = ["compute_data_type", "input", "name"]
BINARY = ["a", "b", "compute_data_type", "name"]
CMP = ["comparison", "compute_data_type", "input", "name"]
BACKWARD = ["compute_data_type", "input", "loss", "name"]
CONV = ["compute_data_type", "convolution_mode", "dilation", "name", "padding", "post_padding",
        "pre_padding", "stride"]
CUDNN_KEYWORDS: dict[str, list[str]] = {
    **{op: UNARY for op in ("abs", "ceil", "exp", "floor", "genstats", "identity", "log",
                            "logical_not", "neg", "reciprocal", "rsqrt", "sigmoid", "sin",
                            "sqrt", "tan", "tanh")},
    **{op: BINARY for op in ("add", "add_square", "div", "logical_and", "logical_or", "mul",
                             "sub")},
    **{op: CMP for op in ("cmp_eq", "cmp_ge", "cmp_gt", "cmp_le", "cmp_lt", "cmp_neq")},
    **{op: BACKWARD for op in ("sigmoid_backward", "tanh_backward")},
    "batchnorm": ["bias", "compute_data_type", "epsilon", "in_running_mean", "in_running_var",
                  "input", "momentum", "name", "peer_stats", "scale"],
    "batchnorm_backward": ["compute_data_type", "grad", "input", "inv_variance", "mean", "name",
                           "peer_stats", "scale"],
    "batchnorm_inference": ["bias", "compute_data_type", "input", "inv_variance", "mean",
                            "name", "scale"],
    "bias": ["bias", "compute_data_type", "input", "name"],
    "binary_select": ["compute_data_type", "input0", "input1", "mask", "name"],
    "conv_dgrad": [*CONV, "filter", "loss"],
    "conv_fprop": [*CONV, "image", "weight"],
    "conv_wgrad": [*CONV, "image", "loss"],
    "leaky_relu": ["compute_data_type", "input", "name", "negative_slope"],
    "leaky_relu_backward": [*BACKWARD, "negative_slope"],
    "max": ["compute_data_type", "input0", "input1", "name"],
    "min": ["compute_data_type", "input0", "input1", "name"],
    "reduction": ["compute_data_type", "input", "mode", "name"],
    "relu": ["compute_data_type", "input", "lower_clip", "name", "negative_slope", "upper_clip"],
    "relu_backward": [*BACKWARD, "lower_clip", "negative_slope", "upper_clip"],
    "scale": ["compute_data_type", "input", "name", "scale"],
    "tensor_like": ["input", "name"],
    "build_plan_at_index": ["index"],
    "build_plans": ["policy"],
    "get_plan_name_at_index": ["index"],
    "get_workspace_size_plan_at_index": ["index"],
}


@pytest.mark.parametrize("method", sorted(CUDNN_KEYWORDS))
def test_cudnn_frontend_keywords_accepted(method: str) -> None:
    params = inspect.signature(getattr(cudnn.pygraph, method)).parameters
    assert not [k for k in CUDNN_KEYWORDS[method] if k not in params], params


def test_tensor_like_input_keyword() -> None:
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    x_gpu = torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)
    X = graph.tensor_like(input=x_gpu, name="X")
    assert X.get_dim() == [2, 3, 4, 5] and X.get_stride() == list(x_gpu.stride())
    Y = graph.tensor_like(input=X)  # cudnn-frontend's other overload: a graph tensor's copy
    assert Y.get_dim() == X.get_dim() and Y.get_stride() == X.get_stride()
    out = graph.relu(input=X).set_output(True)
    graph.build()
    y = torch.empty_like(x_gpu)
    graph.execute({X: x_gpu, out: y})
    torch.testing.assert_close(y, torch.relu(x_gpu))
