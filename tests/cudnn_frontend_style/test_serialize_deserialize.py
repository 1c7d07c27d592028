"""Serialization the way cudnn-frontend's scripts write it, against PyTorch: its deviceless
ahead-of-time test (``create_device_properties``, build, ``serialize``, then
``cudnn.pygraph().deserialize(handle, json)`` and execute with the ORIGINAL graph's tensors as
keys) and sample 02's ``deserialized_graph = cudnn.pygraph(); deserialized_graph.deserialize(data)``
executed by uid. cuDNN's ``deserialize`` loads into the graph it is called on and leaves it
executable; a variant pack is keyed by uid, so another graph's tensor stands for its twin."""

from __future__ import annotations

from typing import Any

import pytest

import hipdnn as cudnn

torch = pytest.importorskip("torch")
F = torch.nn.functional

F32 = cudnn.data_type.FLOAT


def test_device_properties_aot() -> None:
    """cudnn-frontend test/python/test_deviceless_aot_compilation.py, smaller shapes."""
    device_props_original = cudnn.create_device_properties(0)
    json_str_original = device_props_original.serialize()
    device_props_deserialized = cudnn.create_device_properties(json_str_original)
    assert device_props_deserialized.serialize() == json_str_original

    N, K, C, H, W, R, S = 2, 8, 4, 9, 9, 3, 3
    padding = stride = dilation = [1, 1]
    with pytest.warns(UserWarning, match="device_property"):
        graph = cudnn.pygraph(io_data_type=F32, intermediate_data_type=F32,
                              compute_data_type=F32, device_property=device_props_deserialized)
    X_tensor = graph.tensor(name="X", dim=[N, C, H, W], stride=[C * H * W, 1, C * W, C])
    W_tensor = graph.tensor(name="W", dim=[K, C, R, S], stride=[C * R * S, 1, C * S, C])
    Y_tensor = graph.conv_fprop(X_tensor, W_tensor, padding=padding, stride=stride,
                                dilation=dilation)
    Y_tensor.set_output(True)
    graph.build([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    json_str = graph.serialize()

    torch.manual_seed(0)
    X_gpu = torch.randn(N, C, H, W).to(memory_format=torch.channels_last)
    W_gpu = torch.randn(K, C, R, S).to(memory_format=torch.channels_last)
    Y_ref = F.conv2d(X_gpu, W_gpu, padding=padding, stride=stride, dilation=dilation)

    cudnn_handle = cudnn.create_handle()
    try:
        graph_deserialized = cudnn.pygraph()
        assert graph_deserialized.deserialize(cudnn_handle, json_str) is None  # in place
        Y_actual = torch.zeros_like(Y_ref)
        workspace = torch.empty(graph_deserialized.get_workspace_size(), dtype=torch.uint8)
        graph_deserialized.execute({X_tensor: X_gpu, W_tensor: W_gpu, Y_tensor: Y_actual},
                                   workspace, handle=cudnn_handle)
        torch.testing.assert_close(Y_ref, Y_actual, atol=1e-5, rtol=1e-5)
    finally:
        cudnn.destroy_handle(cudnn_handle)


def _conv_bias_relu(handle: Any) -> tuple[Any, list[Any]]:
    graph = cudnn.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32,
                          handle=handle, name="cbr")
    x = graph.tensor(name="x", dim=[2, 3, 6, 6])
    w = graph.tensor(name="w", dim=[4, 3, 3, 3])
    b = graph.tensor(name="b", dim=[1, 4, 1, 1])
    y = graph.relu(graph.bias(graph.conv_fprop(x, w, padding=[1, 1], stride=[1, 1],
                                               dilation=[1, 1]), b))
    for i, t in enumerate((x, w, b, y)):
        t.set_uid(i)
    y.set_output(True)
    return graph, [x, w, b, y]


def test_deserialize_in_place_then_execute_by_uid() -> None:
    """cudnn-frontend samples/python/02_low_level_api.ipynb's serialization cell (its graph is
    SDPA there; conv + bias + ReLU here)."""
    handle = cudnn.create_handle()
    graph, _ = _conv_bias_relu(handle)
    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    graph.check_support()
    graph.build_plans()
    serialized_data = graph.serialize()

    deserialized_graph = cudnn.pygraph()
    deserialized_graph.deserialize(serialized_data)
    assert deserialized_graph.name == "cbr"

    torch.manual_seed(1)
    x, w, b = torch.randn(2, 3, 6, 6), torch.randn(4, 3, 3, 3), torch.randn(1, 4, 1, 1)
    y = torch.full((2, 4, 6, 6), float("nan"))
    workspace = torch.empty(deserialized_graph.get_workspace_size(), dtype=torch.uint8)
    deserialized_graph.execute({0: x, 1: w, 2: b, 3: y}, workspace)
    torch.testing.assert_close(y, torch.relu(F.conv2d(x, w, b.reshape(-1), padding=1)),
                               atol=1e-5, rtol=1e-5)
    keyworded = cudnn.pygraph()
    keyworded.deserialize(handle_=handle, pyobj=serialized_data)  # the binding's keywords
    y2 = torch.empty_like(y)
    keyworded.execute({0: x, 1: w, 2: b, 3: y2}, workspace, handle=handle)
    torch.testing.assert_close(y2, y)
    # hipdnn's own spelling on the class still returns a new graph
    copy = cudnn.pygraph.deserialize(serialized_data)
    assert isinstance(copy, cudnn.pygraph) and len(copy.nodes) == 3


def test_deserialize_bad_input_leaves_the_graph() -> None:
    graph, (x, w, b, y) = _conv_bias_relu(None)
    graph.build()
    with pytest.raises(cudnn.ValidationError, match="from_json: not a JSON graph"):
        graph.deserialize("{not json")
    with pytest.raises(cudnn.ArgumentError, match=r"deserialize takes \(pyobj\) or "
                                                  r"\(handle_, pyobj\)"):
        graph.deserialize(None, "{}", "{}")
    with pytest.raises(cudnn.ArgumentError, match=r"\(handle_, pyobj\).*'text'"):
        graph.deserialize(text="{}")
    with pytest.raises(cudnn.ArgumentError, match="deserialize handle"):
        graph.deserialize("gpu0", graph.serialize())
    out = torch.empty(2, 4, 6, 6)
    graph.execute({x: torch.ones(2, 3, 6, 6), w: torch.ones(4, 3, 3, 3),
                   b: torch.zeros(1, 4, 1, 1), y: out})  # still the built graph
    assert torch.all(out[:, :, 1:-1, 1:-1] == 27)


def test_another_graphs_tensor_must_describe_its_twin() -> None:
    graph, (x, w, b, y) = _conv_bias_relu(None)
    graph.build()
    other = cudnn.pygraph(io_data_type=F32)
    alien = other.tensor(name="x", dim=[2, 3, 6, 7], uid=0)
    other.relu(alien).set_output(True)
    other.build()
    pack = {w: torch.ones(4, 3, 3, 3), b: torch.zeros(1, 4, 1, 1), y: torch.empty(2, 4, 6, 6)}
    with pytest.raises(cudnn.VariantPackError, match=r"'x' belongs to another graph .*'x' "
                                                     r"\(dims \[2, 3, 6, 6\].*not \(dims "
                                                     r"\[2, 3, 6, 7\]"):
        graph.execute({alien: torch.ones(2, 3, 6, 7), **pack})
    twin_graph, (twin_x, *_) = _conv_bias_relu(None)
    twin_graph.build()
    with pytest.raises(cudnn.VariantPackError, match=r"'x' \(uid 0\) is given twice"):
        graph.execute({x: torch.ones(2, 3, 6, 6), twin_x: torch.ones(2, 3, 6, 6), **pack})
    graph.execute({twin_x: torch.ones(2, 3, 6, 6), **pack})


@pytest.mark.parametrize(("arg", "exc", "needle"), [
    (-1, cudnn.ArgumentError, "int >= 0"),
    (True, cudnn.ArgumentError, "int >= 0"),
    ("{oops", cudnn.ValidationError, "not a JSON document"),
    ('{"device_id": 0}', cudnn.ValidationError, "DeviceProperties.serialize"),
    ('{"format": "hipdnn-ctypes.device_properties", "device_id": "0"}', cudnn.ArgumentError,
     "int >= 0"),
])
def test_create_device_properties_bad_input(arg: Any, exc: type[Exception], needle: str) -> None:
    with pytest.raises(exc, match=needle):
        cudnn.create_device_properties(arg)
