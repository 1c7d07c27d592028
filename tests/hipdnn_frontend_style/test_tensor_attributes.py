"""hipdnn_frontend's Tensor and attribute objects, as upstream's own tests exercise them: every
setter returns the object and round-trips through its getter; wrong argument types raise
TypeError; the tensors are the native hipdnn tensors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hipdnn
import hipdnn.frontend as fe

FLOAT = fe.DataType.FLOAT


def roundtrip(obj: Any, calls: list[tuple[str, tuple[Any, ...], str, Any]]) -> None:
    for setter, args, getter, expected in calls:
        assert getattr(obj, setter)(*args) is obj, f"{setter}() must return the object"
        got = getattr(obj, getter)()
        assert got == expected if not isinstance(expected, fe.Tensor) else got is expected, \
            f"{getter}() -> {got!r}, expected {expected!r}"


def tensors(n: int) -> list[fe.Tensor]:
    return [fe.Tensor.create([1], FLOAT) for _ in range(n)]


def test_tensor_create_packs_row_major_and_is_native() -> None:
    t = fe.Tensor.create([2, 3, 4, 5], fe.DataType.HALF)
    assert isinstance(t, hipdnn.Tensor)
    assert t.get_dim() == [2, 3, 4, 5] and t.get_stride() == [60, 20, 5, 1]
    assert t.get_data_type() == fe.DataType.HALF and t.get_volume() == 120
    assert not t.has_uid() and t.get_uid() == -1
    assert t.set_uid(7) is t and t.has_uid() and t.clear_uid() is t and not t.has_uid()
    assert t.validate().is_good()


def test_tensor_validate_names_what_is_missing() -> None:
    err = fe.Tensor().set_name("empty").validate()
    assert err.is_bad() and err.get_code() == fe.ErrorCode.ATTRIBUTE_NOT_SET
    assert "empty" in err.get_message() and "dims" in err.get_message()
    bad = fe.Tensor.create([2, 2], FLOAT).set_stride([1])
    assert bad.validate().is_bad()


@pytest.mark.parametrize("value, dtype", [(1e-5, fe.DataType.FLOAT), (3, fe.DataType.INT64),
                                          (True, fe.DataType.BOOLEAN)])
def test_set_value_makes_a_one_element_constant(value: Any, dtype: fe.DataType) -> None:
    t = fe.Tensor().set_value(value)
    assert t.get_is_pass_by_value() and t.get_dim() == [1] and t.get_stride() == [1]
    assert t.get_data_type() == dtype and t.get_value() == float(value)
    d = fe.Tensor.create([1], fe.DataType.HALF).set_value(0.5, fe.DataType.DOUBLE)
    assert d.get_data_type() == fe.DataType.DOUBLE


def test_boolean_and_fnuz_data_types() -> None:
    assert fe.DataType.BOOLEAN.itemsize == 1 and hipdnn.DataType.BOOLEAN is fe.DataType.BOOLEAN
    assert fe.DataType.FP8_E4M3_FNUZ.is_floating and fe.DataType.FP8_E5M2_FNUZ.itemsize == 1
    assert fe.Graph.tensor_like(np.zeros((2,), np.bool_)).get_data_type() == fe.DataType.BOOLEAN


def test_graph_tensor_copies_and_tensor_like_clears_uid() -> None:
    src = fe.Tensor.create([4, 8], FLOAT).set_name("src").set_uid(3)
    copy = fe.Graph.tensor(src)
    assert copy is not src and copy.get_uid() == 3 and copy.get_name() == "src"
    like = fe.Graph().tensor_like(src, "like")
    assert like.get_dim() == [4, 8] and not like.has_uid() and like.get_name() == "like"
    assert not like.get_is_pass_by_value()
    with pytest.raises(TypeError):
        fe.Graph.tensor([4, 8])  # type: ignore[arg-type]


def test_tensor_like_from_host_arrays() -> None:
    t = fe.Graph.tensor_like(np.zeros((4, 6), np.float32)[:, ::2], "x")
    assert t.get_dim() == [4, 3] and t.get_stride() == [6, 2] and t.get_name() == "x"
    assert t.get_is_pass_by_value()  # host memory: a runtime pass-by-value tensor, as upstream
    scalar = fe.Graph.tensor_like(np.array(2.5, np.float32))
    assert scalar.get_dim() == [] and scalar.get_stride() == []
    with pytest.raises(ValueError, match="unsupported DLPack dtype"):
        fe.Graph.tensor_like(np.zeros(2, np.uint16))
    with pytest.raises(TypeError, match="__dlpack__"):
        fe.Graph.tensor_like(object())


def test_tensor_like_from_torch_dtypes() -> None:
    torch = pytest.importorskip("torch")
    for name, dtype in [("bfloat16", fe.DataType.BFLOAT16), ("float8_e4m3fn", fe.DataType.FP8_E4M3),
                        ("float8_e4m3fnuz", fe.DataType.FP8_E4M3_FNUZ),
                        ("float8_e5m2fnuz", fe.DataType.FP8_E5M2_FNUZ)]:
        t = fe.Graph.tensor_like(torch.empty(2, 4, dtype=getattr(torch, name)))
        assert t.get_data_type() == dtype, name
    t = fe.Graph.tensor_like(torch.empty(4, 4).t())
    assert t.get_stride() == [1, 4]


def test_conv_attributes_roundtrip_and_aliases() -> None:
    assert fe.ConvFpropAttributes is fe.ConvolutionFpropAttributes
    assert fe.ConvDgradAttributes is fe.ConvolutionDgradAttributes
    assert fe.ConvWgradAttributes is fe.ConvolutionWgradAttributes
    conv = [("set_padding", ([9],), "get_pre_padding", [9]),
            ("set_padding", ([9],), "get_post_padding", [9]),
            ("set_pre_padding", ([1],), "get_pre_padding", [1]),
            ("set_post_padding", ([2],), "get_post_padding", [2]),
            ("set_stride", ([3],), "get_stride", [3]),
            ("set_dilation", ([4],), "get_dilation", [4]),
            ("set_convolution_mode", (fe.ConvolutionMode.CONVOLUTION,), "get_convolution_mode",
             fe.ConvolutionMode.CONVOLUTION),
            ("set_name", ("conv",), "get_name", "conv"),
            ("set_compute_data_type", (FLOAT,), "get_compute_data_type", FLOAT)]
    a, b, c = tensors(3)
    roundtrip(fe.ConvFpropAttributes(), [*conv, ("set_x", (a,), "get_x", a),
                                         ("set_w", (b,), "get_w", b), ("set_y", (c,), "get_y", c)])
    roundtrip(fe.ConvDgradAttributes(), [*conv, ("set_dy", (a,), "get_dy", a),
                                         ("set_w", (b,), "get_w", b),
                                         ("set_dx", (c,), "get_dx", c)])
    roundtrip(fe.ConvWgradAttributes(), [*conv, ("set_x", (a,), "get_x", a),
                                         ("set_dy", (b,), "get_dy", b),
                                         ("set_dw", (c,), "get_dw", c)])
    fresh = fe.ConvFpropAttributes()
    assert fresh.get_pre_padding() == [] and fresh.get_x() is None and fresh.get_name() == ""
    assert fresh.get_convolution_mode() == fe.ConvolutionMode.CROSS_CORRELATION


def test_pointwise_attributes_roundtrip() -> None:
    a, b, c, d = tensors(4)
    roundtrip(fe.PointwiseAttributes(), [
        ("set_mode", (fe.PointwiseMode.ADD,), "get_mode", fe.PointwiseMode.ADD),
        ("set_relu_lower_clip", (0.0,), "get_relu_lower_clip", 0.0),
        ("set_relu_upper_clip", (1.0,), "get_relu_upper_clip", 1.0),
        ("set_relu_lower_clip_slope", (0.25,), "get_relu_lower_clip_slope", 0.25),
        ("set_swish_beta", (0.5,), "get_swish_beta", 0.5),
        ("set_elu_alpha", (2.0,), "get_elu_alpha", 2.0),
        ("set_softplus_beta", (4.0,), "get_softplus_beta", 4.0),
        ("set_axis", (0,), "get_axis", 0),
        ("set_input_0", (a,), "get_input_0", a), ("set_input_1", (b,), "get_input_1", b),
        ("set_input_2", (c,), "get_input_2", c), ("set_output_0", (d,), "get_output_0", d)])
    assert fe.PointwiseAttributes().get_mode() == fe.PointwiseMode.NOT_SET
    assert fe.PointwiseAttributes().get_relu_lower_clip() is None


def test_batchnorm_attributes_roundtrip() -> None:
    ts = tensors(12)
    fields = ["x", "scale", "bias", "epsilon", "prev_running_mean", "prev_running_variance",
              "momentum", "y", "mean", "inv_variance", "next_running_mean",
              "next_running_variance"]
    bn = fe.BatchnormAttributes()
    roundtrip(bn, [(f"set_{f}", (t,), f"get_{f}", t) for f, t in zip(fields, ts, strict=True)])
    roundtrip(bn, [("set_peer_stats", ([ts[0]],), "get_peer_stats", [ts[0]])])
    m, v, mom = tensors(3)
    bn.set_previous_running_stats(m, v, mom)
    assert bn.get_prev_running_mean() is m and bn.get_prev_running_variance() is v
    assert bn.get_momentum() is mom
    bwd = fe.BatchnormBackwardAttributes()
    fields = ["dy", "x", "scale", "mean", "inv_variance", "dx", "dscale", "dbias"]
    ts = tensors(8)
    roundtrip(bwd, [(f"set_{f}", (t,), f"get_{f}", t) for f, t in zip(fields, ts, strict=True)])
    sm, si = tensors(2)
    assert bwd.set_saved_mean_and_inv_variance(sm, si) is bwd
    assert bwd.get_mean() is sm and bwd.get_inv_variance() is si
    inf = fe.BatchnormInferenceAttributes()
    fields = ["x", "mean", "inv_variance", "scale", "bias", "y"]
    ts = tensors(6)
    roundtrip(inf, [(f"set_{f}", (t,), f"get_{f}", t) for f, t in zip(fields, ts, strict=True)])
    ext = fe.BatchnormInferenceAttributesVarianceExt()
    fields = ["x", "mean", "variance", "scale", "bias", "epsilon", "y"]
    ts = tensors(7)
    roundtrip(ext, [(f"set_{f}", (t,), f"get_{f}", t) for f, t in zip(fields, ts, strict=True)])


@pytest.mark.parametrize("call", [
    lambda: fe.ConvFpropAttributes().set_padding([1.5, 1]),
    lambda: fe.ConvFpropAttributes().set_stride(2),
    lambda: fe.ConvFpropAttributes().set_x(np.zeros(2)),
    lambda: fe.ConvFpropAttributes().set_convolution_mode(1),
    lambda: fe.PointwiseAttributes().set_mode("ADD"),
    lambda: fe.PointwiseAttributes().set_relu_lower_clip("0"),
    lambda: fe.BatchnormAttributes().set_epsilon(1e-5),
    lambda: fe.BatchnormAttributes().set_peer_stats([1]),
    lambda: fe.ConvFpropAttributes().set_name(3),
])
def test_wrong_argument_types_raise_type_error(call: Any) -> None:
    with pytest.raises(TypeError):
        call()
