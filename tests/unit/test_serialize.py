"""JSON round trip for a graph of every seed-table row; the structural key; repr."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from hipdnn import DataType, Graph, ValidationError
from hipdnn.ir.serialize import FORMAT, graph_to_dict

F, H, B = DataType.FLOAT, DataType.HALF, DataType.BFLOAT16
NCHW, NHWC = [2, 3, 6, 6], [108, 1, 18, 3]


def _graph(io: DataType) -> Graph:
    return Graph(name="seed", io_data_type=io, intermediate_data_type=F, compute_data_type=F)


def conv_fprop(io: DataType = H) -> Graph:
    g = _graph(io)
    x = g.tensor(dim=NCHW, stride=NHWC, name="x")
    w = g.tensor(dim=[4, 3, 3, 3], name="w")
    g.conv_fprop(x, w, padding=[1, 1], stride=[2, 2], dilation=[1, 1], name="conv").set_output(
        True)
    return g


def conv_dgrad(io: DataType = H) -> Graph:
    g = _graph(io)
    dy, w = g.tensor(dim=[2, 4, 3, 3], name="dy"), g.tensor(dim=[4, 3, 3, 3], name="w")
    g.conv_dgrad(dy, w, padding=[1, 1], stride=[2, 2], name="dgrad").set_dim(NCHW).set_output(True)
    return g


def conv_wgrad(io: DataType = H) -> Graph:
    g = _graph(io)
    x, dy = g.tensor(dim=NCHW, name="x"), g.tensor(dim=[2, 4, 6, 6], name="dy")
    g.conv_wgrad(x, dy, padding=[1, 1], name="wgrad").set_output(True)
    return g


def conv_bias_relu(io: DataType = H) -> Graph:
    g = _graph(io)
    x, w = g.tensor(dim=NCHW, stride=NHWC, name="x"), g.tensor(dim=[4, 3, 3, 3], name="w")
    b = g.tensor(dim=[1, 4, 1, 1], name="b")
    y = g.conv_fprop(x, w, padding=[1, 1], name="conv")
    z = g.bias(y, b, compute_data_type=io, name="bias")
    g.relu(z, lower_clip=0.2, upper_clip=0.7, name="clamp").set_output(True)
    return g


def conv_relu(io: DataType = F) -> Graph:
    g = _graph(io)
    x, w = g.tensor(dim=NCHW, name="x"), g.tensor(dim=[4, 3, 3, 3], name="w")
    g.relu(g.conv_fprop(x, w, padding=1, name="conv"), name="relu").set_output(True)
    return g


def _bn_params(g: Graph, *names: str) -> list:  # type: ignore[type-arg]
    return [g.tensor(dim=[1, 3, 1, 1], data_type=F, name=n) for n in names]


def bn_inference_variance(io: DataType = B) -> Graph:
    g = _graph(io)
    x = g.tensor(dim=[2, 3, 2, 4, 4], name="x")
    mean, var, scale, bias = (g.tensor(dim=[1, 3, 1, 1, 1], data_type=F, name=n)
                              for n in ("mean", "var", "scale", "bias"))
    g.batchnorm_inference(x, mean, scale=scale, bias=bias, variance=var, epsilon=1e-5,
                          name="bn").set_output(True)
    return g


def bn_training(io: DataType = H) -> Graph:
    g = _graph(io)
    x = g.tensor(dim=NCHW, stride=NHWC, name="x")
    scale, bias = _bn_params(g, "scale", "bias")
    for t in g.batchnorm(x, scale, bias, epsilon=1e-5, name="bn")[:3]:
        t.set_output(True)  # type: ignore[union-attr]
    return g


def bn_training_running(io: DataType = F) -> Graph:
    g = _graph(io)
    x = g.tensor(dim=NCHW, name="x")
    scale, bias, rm, rv = _bn_params(g, "scale", "bias", "rm", "rv")
    for t in g.batchnorm(x, scale, bias, epsilon=1e-5, momentum=0.1, in_running_mean=rm,
                         in_running_var=rv, name="bn"):
        t.set_output(True)  # type: ignore[union-attr]
    return g


def bn_training_relu(io: DataType = H) -> Graph:
    g = _graph(io)
    x = g.tensor(dim=NCHW, name="x")
    scale, bias = _bn_params(g, "scale", "bias")
    y, mean, inv_var, _, _ = g.batchnorm(x, scale, bias, epsilon=1e-3, name="bn")
    g.relu(y, name="relu").set_output(True)  # type: ignore[arg-type]
    mean.set_output(True)  # type: ignore[union-attr]
    inv_var.set_output(True)  # type: ignore[union-attr]
    return g


def bn_backward(io: DataType = F) -> Graph:
    g = _graph(io)
    x, dy = g.tensor(dim=NCHW, name="x"), g.tensor(dim=NCHW, name="dy")
    scale, mean, inv_var = _bn_params(g, "scale", "mean", "inv_var")
    for t in g.batchnorm_backward(dy, x, scale, mean, inv_var, name="bnb"):
        t.set_output(True)
    return g


def bn_inference_drelu_bn_backward(io: DataType = H) -> Graph:
    g = _graph(io)
    x, dy = g.tensor(dim=NCHW, name="x"), g.tensor(dim=NCHW, name="dy")
    scale, bias, mean, inv_var = _bn_params(g, "scale", "bias", "mean", "inv_var")
    y = g.batchnorm_inference(x, mean, inv_var, scale, bias, name="bn_inf")
    d = g.relu_backward(dy, y, name="drelu")
    for t in g.batchnorm_backward(d, x, scale, mean, inv_var, name="bn_bwd"):
        t.set_output(True)
    return g


SEED_ROWS: dict[str, Callable[[], Graph]] = {f.__name__: f for f in (
    conv_fprop, conv_dgrad, conv_wgrad, conv_bias_relu, conv_relu, bn_inference_variance,
    bn_training, bn_training_running, bn_training_relu, bn_backward,
    bn_inference_drelu_bn_backward)}


@pytest.mark.parametrize("row", SEED_ROWS)
def test_json_round_trip_is_exact_before_and_after_validation(row: str) -> None:
    g = SEED_ROWS[row]()
    text = g.to_json()
    assert Graph.from_json(text).to_json() == text  # unvalidated: dtypes/uids still unset
    g.validate()
    text = g.to_json()
    copy = Graph.from_json(text)
    assert copy.to_json() == text
    copy.validate()
    assert copy.to_json() == text
    assert copy.key() == g.key()
    assert {u: (t.name, t.dim, t.stride, t.data_type, t.is_virtual, t.value)
            for u, t in copy.tensors.items()} == {
        u: (t.name, t.dim, t.stride, t.data_type, t.is_virtual, t.value)
        for u, t in g.tensors.items()}
    assert [(type(n), n.name, n.attributes(), n.compute_data_type) for n in copy.nodes] == [
        (type(n), n.name, n.attributes(), n.compute_data_type) for n in g.nodes]


def test_json_content_is_readable() -> None:
    g = conv_bias_relu()
    g.validate()
    doc = json.loads(g.to_json())
    assert doc["format"] == FORMAT and doc["io_data_type"] == "HALF"
    assert [n["type"] for n in doc["nodes"]] == ["conv_fprop", "pointwise", "pointwise"]
    conv = doc["nodes"][0]
    assert conv["inputs"] == {"X": 0, "W": 1} and conv["name"] == "conv"
    assert conv["attributes"] == {"pre_padding": [1, 1], "post_padding": [1, 1],
                                  "stride": [1, 1], "dilation": [1, 1],
                                  "convolution_mode": "CROSS_CORRELATION", "groups": 1}
    clamp = doc["nodes"][2]["attributes"]
    assert (clamp["mode"], clamp["relu_lower_clip"], clamp["relu_upper_clip"]) == (
        "RELU_FWD", 0.2, 0.7)
    y = doc["tensors"][conv["outputs"]["Y"]]
    assert y == {"name": "conv::Y", "uid": 3, "dim": [2, 4, 6, 6], "stride": [144, 1, 24, 4],
                 "data_type": "FLOAT", "is_virtual": True, "is_pass_by_value": False,
                 "value": None}


def test_baked_scalars_round_trip() -> None:
    g = bn_training_running()
    g.validate()
    copy = Graph.from_json(g.serialize())
    eps = copy.nodes[0].inputs["EPSILON"]
    mom = copy.nodes[0].inputs["MOMENTUM"]
    assert eps is not None and (eps.is_pass_by_value, eps.value) == (True, 1e-5)
    assert mom is not None and mom.value == 0.1


@pytest.mark.parametrize("row", SEED_ROWS)
def test_key_is_stable_and_ignores_names_and_identity(row: str) -> None:
    a, b = SEED_ROWS[row](), SEED_ROWS[row]()
    b.set_name("other")
    for t in b.all_tensors:
        t.set_name(t.name + "_renamed")
    assert a.key() == b.key()
    assert a.key() == a.key()


def test_key_changes_with_structure() -> None:
    base = conv_fprop().key()
    assert conv_fprop(F).key() != base
    g = conv_fprop()
    g.nodes[0].stride = (1, 1)  # type: ignore[attr-defined]
    g.all_tensors[2].clear_uid()
    g.all_tensors[2].set_dim([2, 4, 6, 6])
    assert g.key() != base
    h = conv_fprop()
    h.all_tensors[0].set_uid(100)
    assert h.key() != base


def test_from_json_rejects_malformed_documents() -> None:
    with pytest.raises(ValidationError, match="not a JSON graph"):
        Graph.from_json("{")
    with pytest.raises(ValidationError, match="missing or wrong 'format'"):
        Graph.from_json("{}")
    doc = graph_to_dict(conv_fprop())
    with pytest.raises(ValidationError, match="unsupported graph document version"):
        Graph.from_json(json.dumps({**doc, "version": 99}))
    doc["nodes"][0]["type"] = "slice"  # an op hipDNN does not have
    with pytest.raises(ValidationError, match="unknown node type 'slice'"):
        Graph.from_json(json.dumps(doc))
    doc = graph_to_dict(conv_fprop())
    doc["nodes"][0]["inputs"]["X"] = 42
    with pytest.raises(ValidationError, match=r"malformed graph document: port .X. refers to tensor 42"):
        Graph.from_json(json.dumps(doc))
    doc = graph_to_dict(conv_fprop())
    doc["tensors"][0]["data_type"] = "FLOAT7"
    with pytest.raises(ValidationError, match=r"data_type.*FLOAT7.*FLOAT \(1\)"):
        Graph.from_json(json.dumps(doc))
    doc = graph_to_dict(conv_fprop())
    doc["io_data_type"] = "nope"
    with pytest.raises(ValidationError, match="io_data_type"):
        Graph.from_json(json.dumps(doc))


def test_graph_repr_lists_inputs_and_nodes() -> None:
    g = conv_relu()
    text = repr(g)
    assert text.splitlines()[0] == ("Graph('seed', io=FLOAT, intermediate=FLOAT, compute=FLOAT, "
                                    "2 node(s))")
    assert "    x: FLOAT (default) [2, 3, 6, 6]" in text and "ConvFpropNode('conv': X='x', W='w' -> Y='conv::Y'" in text
    assert "PointwiseNode('relu': IN_0='conv::Y' -> OUT_0='relu::OUT_0' {mode='RELU_FWD'})" in text
