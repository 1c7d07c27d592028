"""Every validation error: typed (ValidationError, also ValueError), naming node/port/values."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from hipdnn import DataType, Graph, HipdnnError, InvalidGraphError, ValidationError
from hipdnn.core.types import PointwiseMode
from hipdnn.ir.nodes import PointwiseNode

F, H = DataType.FLOAT, DataType.HALF


def _g() -> Graph:
    return Graph(name="g", io_data_type=H, intermediate_data_type=F, compute_data_type=F)


def _raises(build: Callable[[Graph], object], pattern: str) -> ValidationError:
    g = _g()
    with pytest.raises(ValidationError, match=pattern) as info:
        build(g)
        g.validate()
    assert isinstance(info.value, ValueError) and isinstance(info.value, HipdnnError)
    return info.value


def _conv(g: Graph, x: list[int], w: list[int], **kw: object) -> None:
    g.conv_fprop(g.tensor(dim=x, name="x"), g.tensor(dim=w, name="w"), name="conv",
                 **kw).set_output(True)  # type: ignore[arg-type]


def test_invalid_graph_error_is_validation_error() -> None:
    assert InvalidGraphError is ValidationError


def test_rank_mismatch_names_node_port_and_allowed_ranks() -> None:
    e = _raises(lambda g: _conv(g, [2, 3], [4, 3]), r"rank 2; expected rank 3 or 4 or 5")
    assert (e.node, e.port, e.tensor) == ("conv", "X", "x")


def test_filter_rank_mismatch() -> None:
    _raises(lambda g: _conv(g, [2, 3, 8, 8], [4, 3, 3, 3, 3]),
            r"node 'conv', port W.*rank 5; expected rank 4")


def test_channel_mismatch_conv() -> None:
    e = _raises(lambda g: _conv(g, [2, 3, 8, 8], [4, 2, 3, 3]),
                r"channel mismatch: X has C=3 but the filter has C/groups=2")
    assert e.port == "X"


def test_k_not_multiple_of_groups() -> None:
    _raises(lambda g: _conv(g, [2, 4, 8, 8], [3, 2, 3, 3]), r"K=3 is not a multiple of groups=2")


def test_negative_padding_and_zero_stride() -> None:
    _raises(lambda g: _conv(g, [2, 3, 8, 8], [4, 3, 3, 3], padding=[-1, 0]),
            re.escape("pre_padding [-1, 0] must be >= 0"))
    _raises(lambda g: _conv(g, [2, 3, 8, 8], [4, 3, 3, 3], stride=[0, 1]),
            re.escape("stride [0, 1] must be >= 1"))


def test_padding_length_mismatch_and_both_padding_forms() -> None:
    _raises(lambda g: _conv(g, [2, 3, 8, 8], [4, 3, 3, 3], padding=[1, 1, 1]),
            r"padding has 3 values \[1, 1, 1\] but the data tensors have rank 4: a 2-D "
            r"convolution \(rank 4\) takes 2 values")
    _raises(lambda g: _conv(g, [2, 3, 8, 8], [4, 3, 3, 3], padding=[1, 1], pre_padding=[1, 1]),
            r"either padding or pre_padding/post_padding")


def test_output_not_positive() -> None:
    _raises(lambda g: _conv(g, [1, 3, 2, 2], [4, 3, 5, 5]), r"output dims .* are not positive")


def test_non_positive_dims_set_after_creation() -> None:
    def build(g: Graph) -> None:
        x = g.tensor(dim=[2, 3, 8, 8], name="x")
        g.relu(x, name="act").set_output(True)
        x.set_dim([2, 0, 8, 8])
    _raises(build, r"tensor 'x': dims \[2, 0, 8, 8\] must all be positive")


def test_stride_dim_length_mismatch_set_after_creation() -> None:
    def build(g: Graph) -> None:
        x = g.tensor(dim=[2, 3, 8, 8], name="x")
        g.relu(x).set_output(True)
        x.set_stride([1, 1, 1])
    _raises(build, r"stride \[1, 1, 1\] has 3 entries but dim \[2, 3, 8, 8\] has 4")


def test_disallowed_dtype_lists_allowed() -> None:
    def build(g: Graph) -> None:
        g.conv_fprop(g.tensor(dim=[2, 3, 8, 8], data_type=DataType.INT32, name="x"),
                     g.tensor(dim=[4, 3, 3, 3]), name="conv").set_output(True)
    e = _raises(build, r"data type INT32 is not allowed here; allowed: BFLOAT16, DOUBLE, FLOAT, "
                       r"HALF, INT8")
    assert (e.node, e.port) == ("conv", "X")

    def mixed(g: Graph) -> None:
        g.conv_fprop(g.tensor(dim=[2, 3, 8, 8], data_type=DataType.INT8, name="x"),
                     g.tensor(dim=[4, 3, 3, 3]), name="conv").set_output(True)
    e = _raises(mixed, r"INT8 convolution needs INT8 X and W; got X INT8 and W HALF")
    assert (e.node, e.port) == ("conv", "W")


def test_dtype_not_set_anywhere() -> None:
    g = Graph()
    g.relu(g.tensor(dim=[1, 1, 2, 2], name="x")).set_output(True)
    with pytest.raises(ValidationError, match=r"tensor 'x': data type is not set.*io_data_type"):
        g.validate()


def test_dgrad_dims_not_inferable_with_stride() -> None:
    def build(g: Graph) -> None:
        g.conv_dgrad(g.tensor(dim=[2, 4, 4, 4]), g.tensor(dim=[4, 3, 3, 3]), padding=1, stride=2,
                     name="dgrad").set_output(True)
    e = _raises(build, r"DX dims cannot be inferred with stride \[2, 2\].*set_dim")
    assert (e.node, e.port) == ("dgrad", "DX")


def test_wgrad_dims_not_inferable_with_stride() -> None:
    def build(g: Graph) -> None:
        g.conv_wgrad(g.tensor(dim=[2, 3, 8, 8]), g.tensor(dim=[2, 4, 4, 4]), padding=1, stride=2,
                     name="wgrad").set_output(True)
    _raises(build, r"node 'wgrad', port DW.*cannot be inferred")


def test_user_dims_contradicting_inference() -> None:
    def build(g: Graph) -> None:
        y = g.conv_fprop(g.tensor(dim=[2, 3, 8, 8]), g.tensor(dim=[4, 3, 3, 3]), name="conv")
        y.set_dim([2, 4, 8, 8]).set_output(True)
    _raises(build, r"port Y.*dims \[2, 4, 8, 8\] were set, but the op produces \[2, 4, 6, 6\]")


def test_dgrad_dy_inconsistent_with_user_dx() -> None:
    def build(g: Graph) -> None:
        dx = g.conv_dgrad(g.tensor(dim=[2, 4, 4, 4]), g.tensor(dim=[4, 3, 3, 3]), padding=1,
                          stride=2)
        dx.set_dim([2, 3, 16, 16]).set_output(True)
    _raises(build, r"DY dims \[2, 4, 4, 4\] do not match the forward output \[2, 4, 8, 8\]")


def test_tensor_from_another_graph_rejected_at_op() -> None:
    other = _g().tensor(dim=[1, 1, 2, 2], name="foreign")
    g = _g()
    with pytest.raises(ValidationError, match=r"port IN_0, tensor 'foreign': tensor belongs to "
                                              r"another graph"):
        g.relu(other, name="act")


def test_non_tensor_argument_rejected() -> None:
    g = _g()
    with pytest.raises(ValidationError, match="expected a hipdnn Tensor, got list"):
        g.relu([1, 2], name="act")  # type: ignore[arg-type]


def test_tensor_used_before_defined() -> None:
    g = _g()
    x = g.tensor(dim=[1, 1, 2, 2], name="x")
    a = g.relu(x, name="first")
    g.relu(a, name="second").set_output(True)
    g.nodes.reverse()
    with pytest.raises(ValidationError, match=r"node 'second', port IN_0, tensor 'first::OUT_0'"
                                              r": tensor is used before it is defined"):
        g.validate()


def test_virtual_input_never_produced() -> None:
    def build(g: Graph) -> None:
        v = g.tensor(dim=[1, 1, 2, 2], is_virtual=True, name="v")
        g.relu(v, name="act").set_output(True)
    _raises(build, r"tensor 'v': virtual input is used before it is defined: no node produces it")


def test_virtual_tensor_never_produced_nor_used() -> None:
    def build(g: Graph) -> None:
        g.tensor(dim=[1, 1, 2, 2], is_virtual=True, name="ghost")
        g.relu(g.tensor(dim=[1, 1, 2, 2])).set_output(True)
    _raises(build, r"tensor 'ghost': virtual tensor is never produced")


def test_graph_without_output() -> None:
    _raises(lambda g: g.relu(g.tensor(dim=[1, 1, 2, 2])), r"produces no output.*set_output")


def test_duplicate_uids() -> None:
    def build(g: Graph) -> None:
        a = g.tensor(dim=[1, 1, 2, 2], uid=3, name="a")
        b = g.tensor(dim=[1, 1, 2, 2], uid=3, name="b")
        g.add(a, b).set_output(True)
    _raises(build, r"tensor 'b': duplicate uid 3: also used by tensor 'a'")


def test_tensor_produced_twice() -> None:
    g = _g()
    x = g.tensor(dim=[1, 1, 2, 2], name="x")
    y = g.relu(x, name="one").set_output(True)
    g.nodes.append(PointwiseNode("two", mode=PointwiseMode.RELU_FWD, IN_0=x, OUT_0=y))
    with pytest.raises(ValidationError, match=r"tensor is produced twice: by 'one' and by 'two'"):
        g.validate()


def test_required_port_missing() -> None:
    def build(g: Graph) -> None:
        x = g.tensor(dim=[2, 3, 4, 4])
        p = g.tensor(dim=[1, 3, 1, 1])
        g.batchnorm_inference(x, p, p, None, p, name="bn").set_output(True)
    _raises(build, r"node 'bn', port SCALE: required port is not connected")


def test_bn_param_channel_mismatch() -> None:
    def build(g: Graph) -> None:
        x = g.tensor(dim=[2, 3, 4, 4])
        p = g.tensor(dim=[1, 3, 1, 1])
        bad = g.tensor(dim=[1, 4, 1, 1], name="scale4")
        g.batchnorm(x, bad, p, epsilon=1e-5, name="bn")[0].set_output(True)  # type: ignore[union-attr]
    _raises(build, r"port SCALE, tensor 'scale4': channel mismatch: dims \[1, 4, 1, 1\]; "
                   r"per-channel tensors of X \[2, 3, 4, 4\] must have dims \[1, 3, 1, 1\]")


def test_bn_running_stats_need_all_three() -> None:
    g = _g()
    x, p = g.tensor(dim=[2, 3, 4, 4]), g.tensor(dim=[1, 3, 1, 1])
    with pytest.raises(ValidationError, match="in_running_mean, in_running_var and momentum"):
        g.batchnorm(x, p, p, epsilon=1e-5, in_running_mean=p, in_running_var=p)


def test_bn_epsilon_must_be_scalar_pass_by_value() -> None:
    def build(g: Graph) -> None:
        x, p = g.tensor(dim=[2, 3, 4, 4]), g.tensor(dim=[1, 3, 1, 1])
        eps = g.tensor(dim=[1, 1, 1, 1], name="eps")
        g.batchnorm_inference_variance_ext(x, p, p, p, p, eps, name="bn").set_output(True)
    _raises(build, r"port EPSILON, tensor 'eps': must be a pass-by-value scalar")


def test_bn_epsilon_bad_value() -> None:
    g = _g()
    x, p = g.tensor(dim=[2, 3, 4, 4]), g.tensor(dim=[1, 3, 1, 1])
    with pytest.raises(ValidationError, match="port EPSILON: expected a float"):
        g.batchnorm(x, p, p, epsilon="tiny")


def test_bn_inference_variance_form_needs_both() -> None:
    g = _g()
    x, p = g.tensor(dim=[2, 3, 4, 4]), g.tensor(dim=[1, 3, 1, 1])
    with pytest.raises(ValidationError, match="needs both variance= and epsilon="):
        g.batchnorm_inference(x, p, scale=p, bias=p, variance=p)
    with pytest.raises(ValidationError, match="not both"):
        g.batchnorm_inference(x, p, p, p, p, variance=p, epsilon=1e-5)


def test_bn_backward_saved_stats_together_and_dy_shape() -> None:
    def partial(g: Graph) -> None:
        x, p = g.tensor(dim=[2, 3, 4, 4]), g.tensor(dim=[1, 3, 1, 1])
        for t in g.batchnorm_backward(x, x, p, mean=p, name="bnb"):
            t.set_output(True)
    _raises(partial, r"node 'bnb', port INV_VARIANCE: MEAN and INV_VARIANCE must be given")

    def dy_shape(g: Graph) -> None:
        x, p = g.tensor(dim=[2, 3, 4, 4]), g.tensor(dim=[1, 3, 1, 1])
        dy = g.tensor(dim=[2, 3, 4, 5], name="dy")
        for t in g.batchnorm_backward(dy, x, p, p, p, name="bnb"):
            t.set_output(True)
    _raises(dy_shape, r"DY dims \[2, 3, 4, 5\] differ from X dims \[2, 3, 4, 4\]")


def test_peer_stats_rejected() -> None:
    g = _g()
    x, p = g.tensor(dim=[2, 3, 4, 4]), g.tensor(dim=[1, 3, 1, 1])
    with pytest.raises(ValidationError, match="peer_stats"):
        g.batchnorm(x, p, p, epsilon=1e-5, peer_stats=[p])


def test_pointwise_arity_and_broadcast_and_clips() -> None:
    _raises(lambda g: g.pointwise("add", g.tensor(dim=[1, 2]), name="p").set_output(True),
            r"node 'p', port IN_1: ADD takes 2 input\(s\) \['IN_0', 'IN_1'\]; IN_1 is missing")
    _raises(lambda g: g.pointwise(PointwiseMode.RELU_FWD, g.tensor(dim=[1, 2]),
                                  g.tensor(dim=[1, 2]), name="p").set_output(True),
            r"port IN_1: RELU_FWD takes 1 input\(s\).*must not be set")
    _raises(lambda g: g.add(g.tensor(dim=[2, 3]), g.tensor(dim=[2, 4], name="b")).set_output(True),
            r"tensor 'b': dims \[2, 4\] do not broadcast with \[2, 3\] \(axis 1: 4 vs 3")
    _raises(lambda g: g.add(g.tensor(dim=[2, 3]), g.tensor(dim=[3])).set_output(True),
            r"rank mismatch")
    _raises(lambda g: g.relu(g.tensor(dim=[2, 3]), lower_clip=1.0, upper_clip=0.5)
            .set_output(True), r"relu_upper_clip 0.5 is below relu_lower_clip 1.0")


def test_relu_backward_needs_equal_dims() -> None:
    _raises(lambda g: g.relu_backward(g.tensor(dim=[2, 3]), g.tensor(dim=[1, 3], name="x"))
            .set_output(True), r"RELU_BWD needs dy \(IN_0\) and the forward input \(IN_1\)")


def test_dynamic_shapes_rejected_and_unknown_graph_kwargs() -> None:
    with pytest.raises(ValidationError, match="dynamic / override shapes"):
        Graph(is_dynamic_shape_enabled=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        Graph(bogus=1)
    with pytest.warns(UserWarning, match="ignored"):
        Graph(sm_count=4)


@pytest.mark.parametrize("bad_call", [
    lambda g, x: g.relu(x, lower_clip=float("nan")),           # rejected by the node
    lambda g, x: g.swish(x, swish_beta=float("inf")),
    lambda g, x: g.add(x, _g().tensor(dim=[1, 1, 2, 2])),      # rejected by _add_node
    lambda g, x: g.batchnorm(x, x, x, epsilon=-1.0),
])
def test_a_rejected_op_call_leaves_the_graph_as_it_was(bad_call: Any) -> None:
    """The op's output tensors join the graph only with its node: after a caught error the
    graph still builds (they used to stay behind as virtual tensors no node produces)."""
    g = _g()
    x = g.tensor(dim=[1, 1, 2, 2], name="x")
    with pytest.raises(ValidationError):
        bad_call(g, x)
    assert [t.name for t in g.all_tensors] == ["x"] and g.nodes == []
    g.relu(x, name="act").set_output(True)
    g.validate()
    assert [t.name for t in g.all_tensors] == ["x", "act::OUT_0"]
