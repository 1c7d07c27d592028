"""cudnn-frontend 1.x's high-level ``cudnn.Graph`` form (with-block, framework tensors passed to
the ops, ``set_io_tuples``, calling the graph), written as a cudnn-frontend user writes it, checked
against PyTorch; and the low-level form of the same class keeps working."""

from __future__ import annotations

import numpy as np
import pytest

import hipdnn as cudnn

torch = pytest.importorskip("torch")
F = torch.nn.functional


def test_conv_bias_relu_positional_call() -> None:
    torch.manual_seed(0)
    x = torch.randn(2, 8, 10, 10).to(memory_format=torch.channels_last)
    w = torch.randn(16, 8, 3, 3).to(memory_format=torch.channels_last)
    b = torch.randn(1, 16, 1, 1)
    with cudnn.Graph(io_data_type=cudnn.data_type.FLOAT,
                     compute_data_type=cudnn.data_type.FLOAT) as graph:
        conv = graph.conv_fprop(image=x, weight=w, padding=[1, 1], stride=[1, 1],
                                dilation=[1, 1], name="conv2d")
        biased = graph.bias(name="bias", input=conv, bias=b)
        y = graph.relu(name="relu", input=biased)
        y.set_output(True)
    graph.set_io_tuples(["conv2d::image", "conv2d::weight", "bias::bias"], ["relu::OUT_0"])
    out = graph(x, w, b)
    torch.testing.assert_close(out, F.relu(F.conv2d(x, w, padding=1) + b), atol=1e-4, rtol=1e-4)
    # a second call with new values reuses the plans
    x2 = torch.randn_like(x)
    torch.testing.assert_close(graph(x2, w, b), F.relu(F.conv2d(x2, w, padding=1) + b),
                               atol=1e-4, rtol=1e-4)


def test_inputs_outputs_in_constructor_and_dict_call() -> None:
    torch.manual_seed(1)
    x = torch.randn(2, 4, 6, 6)
    w = torch.randn(4, 4, 1, 1)
    with cudnn.Graph(inputs=["conv::image", "conv::weight"], outputs=["conv::Y"],
                     io_data_type=cudnn.data_type.FLOAT) as graph:
        y = graph.conv_fprop(image=x, weight=w, padding=0, name="conv")
        y.set_output(True)
    out = graph(x, w)
    torch.testing.assert_close(out, F.conv2d(x, w), atol=1e-4, rtol=1e-4)
    # dict form: keys by recorded name; the output is allocated and added under its name
    x2 = torch.randn_like(x)
    result = graph({"conv::image": x2, "conv::weight": w})
    torch.testing.assert_close(result["conv::Y"], F.conv2d(x2, w), atol=1e-4, rtol=1e-4)


def test_dict_call_defaults_to_build_time_tensors_and_fills_given_output() -> None:
    x = torch.randn(3, 5, 4, 4)
    with cudnn.Graph(io_data_type=cudnn.data_type.FLOAT) as graph:
        y = graph.leaky_relu(x, negative_slope=0.1, name="lrelu")
        y.set_output(True)
    dest = torch.empty(3, 5, 4, 4)
    graph({y: dest})
    torch.testing.assert_close(dest, F.leaky_relu(x, 0.1))


def test_same_framework_tensor_is_one_graph_tensor() -> None:
    a = torch.randn(2, 3, 4, 4)
    with cudnn.Graph(io_data_type=cudnn.data_type.FLOAT) as graph:
        y = graph.mul(a, a, name="sq")
        y.set_output(True)
    graph.set_io_tuples([a], [y])
    torch.testing.assert_close(graph(a), a * a)


def test_errors_name_the_fix() -> None:
    x = torch.randn(2, 3, 4, 4)
    with cudnn.Graph(io_data_type=cudnn.data_type.FLOAT) as graph:
        graph.relu(x, name="r").set_output(True)
    with pytest.raises(cudnn.GraphStateError, match="set_io_tuples"):
        graph(x)
    with pytest.raises(cudnn.ValidationError, match="not a recorded input"):
        graph.set_io_tuples(["nope"], ["r::OUT_0"])
    graph.set_io_tuples([x], ["r::OUT_0"])
    with pytest.raises(cudnn.VariantPackError, match="1 positional inputs"):
        graph(x, x)


def test_low_level_with_block_still_closes() -> None:
    with cudnn.Graph(io_data_type=cudnn.data_type.FLOAT) as graph:
        x = graph.tensor(dim=[1, 2, 3, 3], name="x")
        graph.relu(x).set_output(True)
    assert graph.get_execution_plan_count() == 0  # no plans built by the low-level block
    assert graph.closed


def test_dict_call_by_recorded_name_of_an_op_built_on_another_op() -> None:
    # relu/bias/scale add their node through pointwise/add/mul: the inner op also recorded the
    # input (as "r::1"), and the dict call resolved that alias first, with the build-time
    # default, then skipped the name the user gave ("r::0"): the old input was used silently.
    x = torch.randn(2, 3, 4, 4)
    b = torch.randn(1, 3, 1, 1)
    with cudnn.Graph(io_data_type=cudnn.data_type.FLOAT) as graph:
        y = graph.relu(graph.bias(x, b, name="bias"), name="r")
        y.set_output(True)
    assert sorted(graph._high_level.inputs) == ["bias::0", "bias::1", "r::0"]  # r::0 virtual
    x2, b2 = torch.randn_like(x), torch.randn_like(b)
    out = graph({"bias::0": x2, "bias::1": b2})
    torch.testing.assert_close(out["r::OUT_0"], F.relu(x2 + b2))
    # keyed by the framework tensor the op was given, as the positional form takes it
    torch.testing.assert_close(graph({x: x2, b: b2})["r::OUT_0"], F.relu(x2 + b2))
    torch.testing.assert_close(graph({})["r::OUT_0"], F.relu(x + b))  # build-time defaults
    uids = {name: t.get_uid() for name, t in graph._high_level.inputs.items()}
    out = graph({np.int64(uids["bias::0"]): x2, uids["bias::1"]: b2})  # uids, numpy ints too
    torch.testing.assert_close(out["r::OUT_0"], F.relu(x2 + b2))


def test_dict_call_refuses_keys_it_cannot_place() -> None:
    x = torch.randn(2, 3)
    with cudnn.Graph(io_data_type=cudnn.data_type.FLOAT) as graph:
        graph.leaky_relu(x, negative_slope=0.1, name="act").set_output(True)
    with pytest.raises(cudnn.VariantPackError, match=r"'act::typo'.*valid: \['act::0'"):
        graph({"act::typo": torch.randn(2, 3)})  # was ignored: the build-time x was used
    with pytest.raises(cudnn.VariantPackError, match="two keys give tensor"):
        graph({"act::0": torch.randn(2, 3), x: torch.randn(2, 3)})
