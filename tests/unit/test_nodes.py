"""Every op's shape and dtype inference (ports, default names, strides, dtypes, groups)."""

from __future__ import annotations

import pytest

from hipdnn import ConvolutionMode, DataType, Graph, PointwiseMode
from hipdnn.core.shapes import packed_strides
from hipdnn.ir.nodes import (
    BatchnormBackwardNode,
    BatchnormInferenceNode,
    BatchnormInferenceVarianceNode,
    BatchnormNode,
    ConvDgradNode,
    ConvFpropNode,
    ConvWgradNode,
    PointwiseNode,
)

F, H, B = DataType.FLOAT, DataType.HALF, DataType.BFLOAT16


def _g(io: DataType = H) -> Graph:
    return Graph(io_data_type=io, intermediate_data_type=F, compute_data_type=F)


@pytest.mark.parametrize(("x", "w", "pad", "stride", "dil", "y"), [
    ([2, 3, 8, 8], [4, 3, 3, 3], [1, 1], [1, 1], [1, 1], [2, 4, 8, 8]),
    ([2, 3, 9, 7], [4, 3, 3, 2], [0, 1], [2, 1], [1, 2], [2, 4, 4, 7]),
    ([1, 4, 5, 6, 7], [8, 4, 3, 3, 3], [1, 1, 1], [1, 2, 3], [1, 1, 1], [1, 8, 5, 3, 3]),
])
def test_conv_fprop_output_dims(x: list[int], w: list[int], pad: list[int], stride: list[int],
                                dil: list[int], y: list[int]) -> None:
    g = _g()
    out = g.conv_fprop(image=g.tensor(dim=x), weight=g.tensor(dim=w), padding=pad, stride=stride,
                       dilation=dil, name="conv")
    assert out.get_dim() == y  # inferred when the op is added
    assert out.get_name() == "conv::Y" and out.get_is_virtual()
    out.set_output(True)
    g.validate()
    node = g.nodes[0]
    assert isinstance(node, ConvFpropNode) and node.groups == 1
    assert out.get_data_type() == H and node.compute_data_type == F


def test_conv_fprop_output_follows_input_layout_and_virtual_gets_intermediate_type() -> None:
    g = _g()
    x = g.tensor(dim=[2, 3, 8, 8], stride=[192, 1, 24, 3])  # NHWC
    y = g.conv_fprop(x, g.tensor(dim=[4, 3, 3, 3]), padding=1)
    r = g.relu(y).set_output(True)
    g.validate()
    assert y.get_stride() == [256, 1, 32, 4]
    assert y.get_data_type() == F and r.get_data_type() == H


def test_conv_fprop_grouped_and_asymmetric_padding() -> None:
    g = _g()
    y = g.conv_fprop(g.tensor(dim=[1, 8, 6, 6]), g.tensor(dim=[4, 2, 3, 3]), pre_padding=[1, 0],
                     post_padding=[0, 0], convolution_mode=ConvolutionMode.CONVOLUTION)
    y.set_output(True)
    g.validate()
    node = g.nodes[0]
    assert isinstance(node, ConvFpropNode)
    assert node.groups == 4 and y.get_dim() == [1, 4, 5, 4]
    assert node.pre_padding == (1, 0) and node.post_padding == (0, 0)
    assert node.convolution_mode == ConvolutionMode.CONVOLUTION


def test_conv_defaults_fill_stride_dilation_padding() -> None:
    g = _g()
    g.conv_fprop(g.tensor(dim=[1, 3, 5, 5]), g.tensor(dim=[2, 3, 3, 3])).set_output(True)
    g.validate()
    node = g.nodes[0]
    assert isinstance(node, ConvFpropNode)
    assert (node.pre_padding, node.stride, node.dilation) == ((0, 0), (1, 1), (1, 1))


def test_conv_dgrad_infers_dx_with_unit_stride() -> None:
    g = _g()
    dx = g.conv_dgrad(loss=g.tensor(dim=[2, 4, 8, 8]), filter=g.tensor(dim=[4, 3, 3, 3]),
                      padding=[1, 1], name="dgrad")
    assert dx.get_dim() == [2, 3, 8, 8] and dx.get_name() == "dgrad::DX"
    dx.set_output(True)
    g.validate()
    assert isinstance(g.nodes[0], ConvDgradNode) and g.nodes[0].groups == 1


def test_conv_dgrad_with_stride_uses_user_dims_and_infers_groups() -> None:
    g = _g()
    dx = g.conv_dgrad(g.tensor(dim=[2, 4, 4, 4]), g.tensor(dim=[4, 2, 3, 3]), padding=[1, 1],
                      stride=[2, 2])
    assert dx.get_dim() == []
    dx.set_dim([2, 4, 8, 8]).set_output(True)
    g.validate()
    assert g.nodes[0].groups == 2  # type: ignore[attr-defined]
    assert dx.get_stride() == [256, 64, 8, 1]  # unset: DY's layout (NCHW here), AMD hipDNN's rule


def test_conv_wgrad_infers_dw_with_unit_stride() -> None:
    g = _g()
    dw = g.conv_wgrad(image=g.tensor(dim=[2, 3, 8, 8]), loss=g.tensor(dim=[2, 4, 8, 8]),
                      padding=[1, 1], name="wgrad")
    assert dw.get_dim() == [4, 3, 3, 3] and dw.get_name() == "wgrad::DW"
    dw.set_output(True)
    g.validate()
    assert isinstance(g.nodes[0], ConvWgradNode)


def test_conv_wgrad_with_stride_and_user_dims() -> None:
    g = _g()
    dw = g.conv_wgrad(g.tensor(dim=[2, 3, 8, 8]), g.tensor(dim=[2, 4, 4, 4]), padding=1,
                      stride=2)
    dw.set_dim([4, 3, 3, 3]).set_output(True)
    g.validate()
    assert dw.get_stride() == [27, 9, 3, 1]  # unset: X's layout (NCHW here), AMD hipDNN's rule


@pytest.mark.parametrize("layout", ["NCHW", "NHWC", "NCDHW", "NDHWC"])
def test_unset_conv_output_strides_follow_the_data_input(layout: str) -> None:
    """Y follows X, DX follows DY, DW follows X (the frontend's rule; one layout per conv, which
    MIOpen needs): NCHW inputs never give a channels-last gradient; user strides win."""
    rank = len(layout)
    sp = (6,) * (rank - 2)
    x_dim, w_dim, y_dim = (2, 3, *sp), (4, 3, *(3,) * (rank - 2)), (2, 4, *sp)
    g = _g()
    x = g.tensor(dim=list(x_dim), stride=list(packed_strides(x_dim, layout)))
    dy = g.tensor(dim=list(y_dim), stride=list(packed_strides(y_dim, layout)))
    w = g.tensor(dim=list(w_dim), stride=list(packed_strides(w_dim, layout)))
    y = g.conv_fprop(x, w, padding=1)
    dx = g.conv_dgrad(dy, w, padding=1)
    dw = g.conv_wgrad(x, dy, padding=1)
    for t in (y, dx, dw):
        t.set_output(True)
    g.validate()
    assert y.get_stride() == list(packed_strides(y_dim, layout))
    assert dx.get_stride() == list(packed_strides(x_dim, layout))
    assert dw.get_stride() == list(packed_strides(w_dim, layout))
    g2 = _g()
    other = "NHWC" if layout == "NCHW" else "NCHW" if rank == 4 else layout
    dx2 = g2.conv_dgrad(g2.tensor(dim=list(y_dim), stride=list(packed_strides(y_dim, layout))),
                        g2.tensor(dim=list(w_dim)), padding=1)
    dx2.set_stride(list(packed_strides(x_dim, other))).set_output(True)
    g2.validate()
    assert dx2.get_stride() == list(packed_strides(x_dim, other))


def _bn_inputs(g: Graph, dims: list[int]) -> tuple:  # type: ignore[type-arg]
    c = dims[1]
    p = [1, c] + [1] * (len(dims) - 2)
    return (g.tensor(dim=dims, name="x"),
            *(g.tensor(dim=p, data_type=F, name=n) for n in ("scale", "bias", "m", "v")))


@pytest.mark.parametrize("dims", [[2, 3, 4, 4], [2, 3, 2, 4, 4]])
def test_batchnorm_training_outputs(dims: list[int]) -> None:
    g = _g()
    x, scale, bias, _, _ = _bn_inputs(g, dims)
    y, mean, inv_var, rm, rv = g.batchnorm(input=x, scale=scale, bias=bias, epsilon=1e-5,
                                           name="bn")
    assert rm is None and rv is None
    for t in (y, mean, inv_var):
        t.set_output(True)
    g.validate()
    stat = [1, dims[1]] + [1] * (len(dims) - 2)
    assert y.get_dim() == dims and mean.get_dim() == stat and inv_var.get_dim() == stat
    assert [t.get_name() for t in (y, mean, inv_var)] == ["bn::Y", "bn::MEAN", "bn::INV_VARIANCE"]
    assert y.get_data_type() == H
    assert mean.get_data_type() == F  # stats follow SCALE's dtype (FP32 for FP16 data)
    node = g.nodes[0]
    assert isinstance(node, BatchnormNode)
    eps = node.inputs["EPSILON"]
    assert eps is not None and eps.is_pass_by_value and eps.value == 1e-5
    assert node.inputs["MOMENTUM"] is None


def test_batchnorm_training_running_stats() -> None:
    g = _g()
    x, scale, bias, m, v = _bn_inputs(g, [2, 3, 4, 4])
    mom = g.tensor(dim=[1, 1, 1, 1], is_pass_by_value=True, name="mom")
    outs = g.batchnorm(x, scale, bias, epsilon=1e-3, momentum=mom, in_running_mean=m,
                       in_running_var=v, name="bn")
    assert all(t is not None for t in outs)
    for t in outs:
        t.set_output(True)  # type: ignore[union-attr]
    g.validate()
    assert outs[3].get_dim() == [1, 3, 1, 1]  # type: ignore[union-attr]
    assert outs[3].get_name() == "bn::NEXT_RUNNING_MEAN"  # type: ignore[union-attr]
    assert outs[4].get_data_type() == F  # type: ignore[union-attr]
    assert g.nodes[0].inputs["MOMENTUM"] is mom


def test_batchnorm_inference_inv_variance_and_variance_forms() -> None:
    g = _g(B)
    x, scale, bias, m, v = _bn_inputs(g, [2, 3, 4, 4])
    y1 = g.batchnorm_inference(input=x, mean=m, inv_variance=v, scale=scale, bias=bias)
    y2 = g.batchnorm_inference(x, m, scale=scale, bias=bias, variance=v, epsilon=1e-5)
    y3 = g.batchnorm_inference_variance_ext(x, m, v, scale, bias, 1e-5)
    for y in (y1, y2, y3):
        y.set_output(True)
    g.validate()
    kinds = [type(n) for n in g.nodes]
    assert kinds == [BatchnormInferenceNode, BatchnormInferenceVarianceNode,
                     BatchnormInferenceVarianceNode]
    assert all(y.get_dim() == [2, 3, 4, 4] and y.get_data_type() == B for y in (y1, y2, y3))


def test_batchnorm_backward_outputs() -> None:
    g = _g()
    x, scale, _, m, iv = _bn_inputs(g, [2, 3, 4, 4])
    dy = g.tensor(dim=[2, 3, 4, 4], stride=[48, 1, 12, 3], name="dy")
    dx, dscale, dbias = g.batchnorm_backward(grad=dy, input=x, scale=scale, mean=m,
                                             inv_variance=iv, name="bnb")
    for t in (dx, dscale, dbias):
        t.set_output(True)
    g.validate()
    assert isinstance(g.nodes[0], BatchnormBackwardNode)
    assert dx.get_dim() == [2, 3, 4, 4] and dscale.get_dim() == [1, 3, 1, 1]
    assert dx.get_stride() == [48, 16, 4, 1]  # follows X (the data input)
    assert (dx.get_data_type(), dscale.get_data_type(), dbias.get_data_type()) == (H, F, F)
    assert [t.get_name() for t in (dx, dscale, dbias)] == ["bnb::DX", "bnb::DSCALE", "bnb::DBIAS"]


def test_relu_variants_set_clip_attributes() -> None:
    g = _g()
    x = g.tensor(dim=[1, 2, 3, 3])
    g.relu(x, name="plain")
    g.relu(x, upper_clip=6.0, name="clipped")
    g.relu(x, lower_clip=0.2, upper_clip=0.7, name="clamp")
    g.relu(x, negative_slope=0.1, name="leaky").set_output(True)
    nodes = g.nodes
    assert all(isinstance(n, PointwiseNode) and n.mode == PointwiseMode.RELU_FWD for n in nodes)
    assert nodes[0].attributes()["relu_upper_clip"] is None
    assert nodes[1].attributes()["relu_upper_clip"] == 6.0
    assert (nodes[2].relu_lower_clip, nodes[2].relu_upper_clip) == (0.2, 0.7)  # type: ignore[attr-defined]
    assert nodes[3].relu_lower_clip_slope == 0.1  # type: ignore[attr-defined]


def test_relu_backward_ports_and_bias_broadcast() -> None:
    g = _g()
    x = g.tensor(dim=[2, 3, 4, 4], name="x")
    dy = g.tensor(dim=[2, 3, 4, 4], name="dy")
    dx = g.relu_backward(loss=dy, input=x, name="drelu").set_output(True)
    b = g.tensor(dim=[1, 3, 1, 1], name="b")
    out = g.bias(input=x, bias=b, name="bias").set_output(True)
    s = g.add(a=x, b=dy).set_output(True)
    g.validate()
    node = g.nodes[0]
    assert isinstance(node, PointwiseNode) and node.mode == PointwiseMode.RELU_BWD
    assert node.inputs["IN_0"] is dy and node.inputs["IN_1"] is x
    assert dx.get_name() == "drelu::OUT_0" and dx.get_dim() == [2, 3, 4, 4]
    assert out.get_dim() == [2, 3, 4, 4] and s.get_dim() == [2, 3, 4, 4]


def test_generic_pointwise_mode_by_name_and_default_node_names() -> None:
    g = _g()
    a = g.tensor(dim=[2, 3])
    out = g.pointwise("sub", a, g.tensor(dim=[1, 3])).set_output(True)
    out2 = g.mul(a, a).set_output(True)
    g.validate()
    assert out.get_name() == "sub_0::OUT_0" and out2.get_name() == "mul_1::OUT_0"
    assert out.get_dim() == [2, 3]


def test_compute_type_per_op_overrides_graph() -> None:
    g = _g()
    g.relu(g.tensor(dim=[1, 1, 2, 2]), compute_data_type=H).set_output(True)
    g.validate()
    assert g.nodes[0].compute_data_type == H


def test_compute_type_defaults_to_float_when_graph_has_none() -> None:
    g = Graph(io_data_type=F)
    g.relu(g.tensor(dim=[1, 1, 2, 2])).set_output(True)
    g.validate()
    assert g.nodes[0].compute_data_type == F


def test_uids_assigned_in_order_and_user_uids_kept() -> None:
    g = _g()
    x = g.tensor(dim=[1, 1, 2, 2], uid=10)
    y = g.relu(x).set_output(True)
    g.validate()
    assert x.get_uid() == 10 and y.get_uid() == 11
    assert set(g.tensors) == {10, 11}


def test_node_repr_names_ports() -> None:
    g = _g()
    g.relu(g.tensor(dim=[1, 1, 2, 2], name="x"), upper_clip=1.0, name="act")
    assert repr(g.nodes[0]) == ("PointwiseNode('act': IN_0='x' -> OUT_0='act::OUT_0' "
                                "{mode='RELU_FWD', relu_upper_clip=1.0})")


def test_conv_inference_matches_torch_shapes() -> None:
    torch = pytest.importorskip("torch")
    import itertools

    for (h, k, pad, stride, dil, groups) in itertools.product(
            (5, 8), (1, 3), (0, 2), (1, 2, 3), (1, 2), (1, 3)):
        if dil * (k - 1) + 1 > h + 2 * pad:
            continue
        g = _g(F)
        x = g.tensor(dim=[2, 6, h, h + 1])
        w = g.tensor(dim=[9, 6 // groups, k, k])
        y = g.conv_fprop(x, w, padding=pad, stride=stride, dilation=dil).set_output(True)
        g.validate()
        ref = torch.nn.functional.conv2d(torch.zeros(2, 6, h, h + 1), torch.zeros(9, 6 // groups,
                                         k, k), padding=pad, stride=stride, dilation=dil,
                                         groups=groups)
        assert y.get_dim() == list(ref.shape)
        assert g.nodes[0].groups == groups  # type: ignore[attr-defined]
        if stride == 1 and groups == 1:  # then dgrad/wgrad dims are inferred back exactly
            g2 = _g(F)
            dx = g2.conv_dgrad(g2.tensor(dim=list(ref.shape)), g2.tensor(dim=w.get_dim()),
                               padding=pad, dilation=dil)
            dw = g2.conv_wgrad(g2.tensor(dim=x.get_dim()), g2.tensor(dim=list(ref.shape)),
                               padding=pad, dilation=dil)
            assert dx.get_dim() == x.get_dim() and dw.get_dim() == w.get_dim()


def test_tensor_like_cuda_array_interface_object_is_not_a_scalar() -> None:
    class DeviceArray:
        @property
        def __cuda_array_interface__(self) -> dict[str, object]:
            return {"shape": (1, 1, 1, 1), "typestr": "<f2", "data": (0x7000_0000, False),
                    "strides": None, "version": 3}

    t = Graph().tensor_like(DeviceArray())
    assert t.get_dim() == [1, 1, 1, 1] and t.get_data_type() == H
    assert not t.get_is_pass_by_value()


def test_tensor_like_reversed_numpy_view_keeps_its_memory_order() -> None:
    # numpy views such as img[..., ::-1] (BGR <-> RGB) or np.flip have negative strides, which a
    # graph tensor cannot; tensor_like takes them made positive (the view's memory order), and
    # the view's values are still read through its own strides.
    np = pytest.importorskip("numpy")
    base = np.arange(-60, 60, dtype=np.float32).reshape(2, 3, 4, 5)
    for view in (base[..., ::-1], base[:, ::-1, ::-1], np.flip(base.transpose(0, 2, 3, 1), 0)):
        g = _g(F)
        x = g.tensor_like(view, name="x")
        assert x.get_dim() == list(view.shape)
        assert x.get_stride() == [abs(s) // 4 for s in view.strides]
        y = g.relu(x).set_output(True)
        g.build()
        out = np.full(view.shape, np.nan, np.float32)
        g.execute({x: view, y: out})
        assert np.array_equal(out, np.maximum(view, 0))
    rgb = base[..., ::-1]
    with Graph(io_data_type=F) as hl:  # the high-level form makes its inputs with tensor_like
        hl.relu(rgb, name="r").set_output(True)
    hl.set_io_tuples([rgb], ["r::OUT_0"])
    assert np.array_equal(hl(rgb), np.maximum(rgb, 0))
