"""A size-1 axis's stride addresses nothing (issue 29, defect 7): output strides inferred from
an input with size-1 axes are the standard packed/channels-last ones (before, ties between
size-1 axes were broken into non-standard orders: a C=1 NHWC input gave Y [75, 5, 15, 1], a
K=1 NHWC DY gave DX [50, 5, 10, 1]), and a dense tensor is recognised as every seed layout it
is dense in, whatever the strides of its size-1 axes."""

from __future__ import annotations

import pytest

import hipdnn
from hipdnn.core.shapes import layout_of, layout_order, layouts_of, packed_strides

F = hipdnn.DataType.FLOAT


def _graph() -> hipdnn.Graph:
    return hipdnn.Graph(io_data_type=F, compute_data_type=F, intermediate_data_type=F)


@pytest.mark.parametrize(("x_dim", "layout", "k"), [
    ((2, 1, 5, 5), "NHWC", 3), ((1, 1, 5, 5), "NHWC", 3), ((1, 4, 1, 1), "NHWC", 2),
    ((2, 1, 5, 5), None, 3), ((1, 1, 4, 5, 6), "NDHWC", 2)])
def test_conv_output_follows_the_inputs_standard_layout(x_dim: tuple[int, ...], layout: str,
                                                        k: int) -> None:
    g = _graph()
    x = g.tensor(dim=list(x_dim), stride=packed_strides(x_dim, layout), name="x")
    w_dim = (k, x_dim[1], *([1] * (len(x_dim) - 2)))
    w = g.tensor(dim=list(w_dim), stride=packed_strides(w_dim, layout), name="w")
    y = g.conv_fprop(x, w, padding=[0] * (len(x_dim) - 2), name="conv").set_output(True)
    g.validate()
    assert y.get_stride() == list(packed_strides(y.get_dim(), layout))


def test_dgrad_and_wgrad_outputs_follow_their_inputs() -> None:
    g = _graph()
    dy = g.tensor(dim=[1, 1, 5, 5], stride=packed_strides((1, 1, 5, 5), "NHWC"), name="dy")
    w = g.tensor(dim=[1, 2, 3, 3], stride=packed_strides((1, 2, 3, 3), "NHWC"), name="w")
    dx = g.conv_dgrad(dy, w, padding=[1, 1], name="dgrad").set_output(True)
    x = g.tensor(dim=[2, 1, 5, 5], stride=packed_strides((2, 1, 5, 5), "NHWC"), name="x")
    dy2 = g.tensor(dim=[2, 4, 5, 5], stride=packed_strides((2, 4, 5, 5), "NHWC"), name="dy2")
    dw = g.conv_wgrad(x, dy2, padding=[1, 1], name="wgrad").set_output(True)
    g.validate()
    assert dx.get_stride() == [50, 1, 10, 2]  # was [50, 5, 10, 1]
    assert dw.get_stride() == list(packed_strides((4, 1, 3, 3), "NHWC"))


def test_pointwise_output_of_an_n1_input_with_any_n_stride_is_channels_last() -> None:
    g = _graph()
    x = g.tensor(dim=[1, 4, 3, 3], stride=[0, 1, 12, 4], name="x")
    y = g.relu(x, name="act").set_output(True)
    g.validate()
    assert y.get_stride() == [36, 1, 12, 4]


def test_layouts_ignore_size1_strides_and_prefer_the_exact_match() -> None:
    assert layouts_of((2, 1, 5, 5), (25, 1, 5, 1)) == ("NHWC", "NCHW")
    assert layouts_of((2, 1, 5, 5), (25, 25, 5, 1)) == ("NCHW", "NHWC")
    assert layouts_of((2, 1, 5, 5), (25, 3, 5, 1)) == ("NCHW", "NHWC")  # C's stride: anything
    assert layouts_of((1, 4, 5, 5), (7, 1, 20, 4)) == ("NHWC",)
    assert layouts_of((2, 4, 5, 5), (100, 1, 25, 5)) == ()  # not dense in any
    assert layout_of((1, 4, 5, 5), (7, 1, 20, 4)) == "NHWC"
    assert layout_order((1, 1, 5, 5), (25, 1, 5, 1)) == (0, 2, 3, 1)
    assert layout_order((2, 3, 4), (12, 1, 3)) == (0, 2, 1)  # no seed layout: by stride
    assert layout_order((2, 1, 4), (4, 9, 1)) == (0, 1, 2)  # size-1 axis where channel-first is
