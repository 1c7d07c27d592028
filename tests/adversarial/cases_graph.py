"""Catalog cases found at graph construction or build: dims/strides, conv attributes, batchnorm
scalars, pointwise ops and clips."""

from __future__ import annotations

from typing import Any

from _catalog import SHAPE, Outputs, add, bn_graph, conv_graph, graph

import hipdnn

V = hipdnn.ValidationError
A = hipdnn.ArgumentError

# -- dims / strides ------------------------------------------------------------------------------

_BAD_DIMS: dict[str, Any] = {
    "empty": [], "zero": [2, 0, 4, 4], "negative": [2, -3, 4, 4], "float": [2, 3.5, 4, 4],
    "str_item": [2, "3", 4, 4], "bool_item": [2, True, 4, 4], "str": "2344", "none_item": [2, None, 4, 4],
    "nested": [[2, 3], 4, 4], "scalar_float": 2.5,
}
for _name, _dims in _BAD_DIMS.items():
    def _case(out: Outputs, dims: Any = _dims) -> None:
        g = graph()
        x = g.tensor(dim=dims, name="xbad")
        g.relu(x).set_output(True)
        g.build()
    add("dims", f"input_dim_{_name}", V, ("xbad",), _case)

    def _set(out: Outputs, dims: Any = _dims) -> None:
        g = graph()
        x = g.tensor(dim=list(SHAPE), name="xset")
        x.set_dim(dims)
        g.relu(x).set_output(True)
        g.build()
    add("dims", f"set_dim_{_name}", V, ("xset",), _set)

_BAD_STRIDES: dict[str, Any] = {
    "short": [48, 16, 4], "long": [48, 16, 4, 1, 1], "negative": [48, 16, -4, 1],
    "float": [48, 16, 4, 1.0], "str_item": [48, 16, "4", 1], "str": "48", "huge": [2**62, 1, 1, 1],
    "bool_item": [48, 16, 4, True],
}
for _name, _stride in _BAD_STRIDES.items():
    def _case(out: Outputs, stride: Any = _stride) -> None:
        g = graph()
        x = g.tensor(dim=list(SHAPE), stride=stride, name="xs")
        g.relu(x).set_output(True)
        g.build()
    add("strides", f"input_stride_{_name}", V, ("xs",), _case)

_OVERLAPPING = {"all_zero": [0, 0, 0, 0], "all_one": [1, 1, 1, 1], "w_zero": [48, 16, 4, 0],
                "c_zero": [48, 0, 4, 1], "rows_overlap": [48, 16, 3, 1],
                "channels_alias_rows": [48, 4, 4, 1], "batch_alias": [16, 16, 4, 1],
                "interleaved": [48, 16, 1, 3], "nhwc_short": [48, 1, 9, 3]}
for _name, _stride in _OVERLAPPING.items():
    def _out(out: Outputs, stride: Any = _stride) -> None:
        g = graph()
        x = g.tensor(dim=list(SHAPE), name="x")
        g.relu(x, name="act").set_output(True).set_name("yo").set_stride(stride)
        g.build()
    add("strides", f"output_overlap_{_name}", V, ("yo", "act", "overlap"), _out)

    def _virtual(out: Outputs, stride: Any = _stride) -> None:
        g = graph()
        x = g.tensor(dim=list(SHAPE), name="x")
        mid = g.relu(x, name="act").set_name("mid").set_stride(stride)
        g.mul(mid, x).set_output(True)
        g.build()
    add("strides", f"intermediate_overlap_{_name}", V, ("mid", "intermediate"), _virtual)


def _dims_not_set(out: Outputs) -> None:
    g = graph()
    x = g.tensor(name="nodims")
    g.relu(x).set_output(True)
    g.build()


add("dims", "input_without_dims", V, ("nodims", "set_dim"), _dims_not_set)


def _wrong_output_dims(out: Outputs) -> None:
    g = graph()
    x = g.tensor(dim=list(SHAPE), name="x")
    g.relu(x, name="act").set_output(True).set_name("yd").set_dim([2, 3, 5, 5])
    g.build()


add("dims", "output_dims_disagree", V, ("yd", "[2, 3, 4, 4]"), _wrong_output_dims)


def _no_broadcast(out: Outputs) -> None:
    g = graph()
    a = g.tensor(dim=list(SHAPE), name="a")
    b = g.tensor(dim=[2, 4, 4, 4], name="bb")
    g.add(a, b, name="sum").set_output(True)
    g.build()


add("dims", "pointwise_no_broadcast", V, ("bb", "sum", "broadcast"), _no_broadcast)


def _rank_mismatch(out: Outputs) -> None:
    g = graph()
    a = g.tensor(dim=list(SHAPE), name="a")
    b = g.tensor(dim=[3, 4, 4], name="rank3")
    g.add(a, b, name="sum").set_output(True)
    g.build()


add("dims", "pointwise_rank_mismatch", V, ("rank3", "rank"), _rank_mismatch)


def _uid(value: Any) -> Any:
    def run(out: Outputs) -> None:
        graph().tensor(dim=list(SHAPE), name="u", uid=value)
    return run


for _name, _value in {"str": "7", "float": 7.0, "bool": True, "list": [7]}.items():
    add("dims", f"uid_{_name}", V, ("u", "uid"), _uid(_value))


def _dup_uid(out: Outputs) -> None:
    g = graph()
    a = g.tensor(dim=list(SHAPE), name="a", uid=5)
    b = g.tensor(dim=list(SHAPE), name="b5", uid=5)
    g.add(a, b).set_output(True)
    g.build()


add("dims", "duplicate_uid", V, ("duplicate uid 5",), _dup_uid)

for _name, _dt in {"unknown_name": "float99", "complex": "complex64", "int_value": 99,
                   "float_value": 1.5, "object": object()}.items():
    def _dtype(out: Outputs, dt: Any = _dt) -> None:
        graph().tensor(dim=list(SHAPE), name="dt", data_type=dt)
    add("dims", f"tensor_data_type_{_name}", V, ("dt", "FLOAT", "HALF"), _dtype)

    def _graph_dtype(out: Outputs, dt: Any = _dt) -> None:
        hipdnn.Graph(io_data_type=dt)
    add("dims", f"graph_io_data_type_{_name}", V, ("io_data_type",), _graph_dtype)


def _no_dtype(out: Outputs) -> None:
    g = hipdnn.Graph()
    x = g.tensor(dim=list(SHAPE), name="untyped")
    g.relu(x).set_output(True)
    g.build()


add("dims", "data_type_not_set", V, ("untyped", "io_data_type"), _no_dtype)


def _virtual_input(out: Outputs) -> None:
    g = graph()
    x = g.tensor(dim=list(SHAPE), name="ghost", is_virtual=True)
    g.relu(x).set_output(True)
    g.build()


add("dims", "virtual_input_never_produced", V, ("ghost", "virtual"), _virtual_input)


def _foreign(out: Outputs) -> None:
    other = graph()
    x = other.tensor(dim=list(SHAPE), name="alien")
    g = graph()
    g.relu(x, name="act").set_output(True)
    g.build()


add("dims", "tensor_of_another_graph", V, ("alien", "another graph"), _foreign)


def _no_output(out: Outputs) -> None:
    g = graph()
    x = g.tensor(dim=list(SHAPE), name="x")
    g.relu(x)
    g.build()


add("dims", "no_output_marked", V, ("produces no output", "set_output"), _no_output)


def _no_nodes(out: Outputs) -> None:
    g = graph(name="hollow")
    g.tensor(dim=list(SHAPE), name="x")
    g.build()


add("dims", "graph_without_nodes", V, ("hollow", "no nodes"), _no_nodes)

# -- convolution attributes -------------------------------------------------------------------

_BAD_CONV: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "padding_negative": ({"padding": [-1, 1]}, ("conv", "padding")),
    "padding_three": ({"padding": [1, 1, 1]}, ("conv", "padding")),
    "padding_str": ({"padding": "1"}, ("conv", "padding")),
    "padding_float": ({"padding": [1.5, 1]}, ("conv", "padding")),
    "padding_bool": ({"padding": [True, 1]}, ("conv", "padding")),
    "padding_none_item": ({"padding": [None, 1]}, ("conv", "padding")),
    "stride_zero": ({"stride": [0, 1]}, ("conv", "stride")),
    "stride_negative": ({"stride": [1, -2]}, ("conv", "stride")),
    "stride_one_entry": ({"stride": [1]}, ("conv", "stride")),
    "stride_float": ({"stride": 1.0}, ("conv", "stride")),
    "stride_str": ({"stride": "11"}, ("conv", "stride")),
    "dilation_zero": ({"dilation": [0, 1]}, ("conv", "dilation")),
    "dilation_negative": ({"dilation": [-1, -1]}, ("conv", "dilation")),
    "dilation_too_large": ({"dilation": [9, 9]}, ("conv", "dilation")),
    "dilation_float": ({"dilation": [1, 1.5]}, ("conv", "dilation")),
    "padding_and_pre_padding": ({"pre_padding": [1, 1]}, ("conv", "not both")),
    "pre_post_lengths": ({"padding": None, "pre_padding": [1, 1], "post_padding": [1]},
                         ("conv", "padding")),
    "convolution_mode_bogus": ({"convolution_mode": "SIDEWAYS"}, ("convolution_mode",)),
    "convolution_mode_int": ({"convolution_mode": 99}, ("convolution_mode",)),
    "compute_int8_on_float": ({"compute_data_type": "INT8"}, ("conv", "compute_data_type")),
    "compute_bool_on_float": ({"compute_data_type": "BOOLEAN"}, ("conv", "compute_data_type")),
    "compute_bogus": ({"compute_data_type": "QUAD"}, ("compute_data_type",)),
}
for _name, (_attrs, _culprit) in _BAD_CONV.items():
    def _conv(out: Outputs, attrs: dict[str, Any] = _attrs) -> None:
        g, *_ = conv_graph(**attrs)
        g.build()
    add("conv", _name, V, _culprit, _conv)


def _conv_shapes(x_dim: list[int], w_dim: list[int], x_dt: Any = None,
                 w_dt: Any = None) -> Any:
    def run(out: Outputs) -> None:
        g = graph()
        x = g.tensor(dim=x_dim, name="cx", data_type=x_dt or hipdnn.DataType.FLOAT)
        w = g.tensor(dim=w_dim, name="cw", data_type=w_dt or hipdnn.DataType.FLOAT)
        g.conv_fprop(x, w, name="conv").set_output(True)
        g.build()
    return run


add("conv", "x_rank2", V, ("conv", "cx", "rank"), _conv_shapes([2, 3], [4, 3]))
add("conv", "x_rank3_w_rank4", V, ("conv", "cw", "rank"), _conv_shapes([2, 3, 6], [4, 3, 3, 3]))


def _conv_1d_geometry(knob: str, values: list[int]) -> Any:
    # a 1-D convolution (rank-3 tensors) takes one value per list, as cudnn-frontend's do
    def run(out: Outputs) -> None:
        g = graph()
        x = g.tensor(dim=[2, 3, 6], name="cx")
        w = g.tensor(dim=[4, 3, 3], name="cw")
        g.conv_fprop(x, w, name="conv", **{knob: values}).set_output(True)
        g.build()
    return run


for _knob in ("padding", "stride", "dilation"):
    add("conv", f"rank3_two_element_{_knob}", V, ("conv", "rank 3", "takes 1 value"),
        _conv_1d_geometry(_knob, [1, 1]))
add("conv", "x_rank6", V, ("conv", "cx", "rank"), _conv_shapes([2, 3, 6, 6, 6, 6],
                                                               [4, 3, 3, 3, 3, 3]))
add("conv", "w_rank_mismatch", V, ("conv", "cw", "rank"), _conv_shapes([2, 3, 6, 6],
                                                                       [4, 3, 3, 3, 3]))
add("conv", "channels_not_divisible", V, ("conv",), _conv_shapes([2, 3, 6, 6], [4, 2, 3, 3]))
add("conv", "filter_larger_than_input", V, ("conv", "larger"), _conv_shapes([2, 3, 2, 2],
                                                                            [4, 3, 3, 3]))
add("conv", "int8_x_float_w", V, ("conv", "INT8"), _conv_shapes(
    [2, 3, 6, 6], [4, 3, 3, 3], hipdnn.DataType.INT8, hipdnn.DataType.FLOAT))
add("conv", "bool_data", V, ("conv", "BOOLEAN"), _conv_shapes(
    [2, 3, 6, 6], [4, 3, 3, 3], hipdnn.DataType.BOOLEAN, hipdnn.DataType.BOOLEAN))


def _conv_not_tensor(out: Outputs) -> None:
    g = graph()
    x = g.tensor(dim=[2, 3, 6, 6], name="x")
    g.conv_fprop(x, [[1.0]], name="conv")


add("conv", "weight_not_a_tensor", V, ("conv", "W"), _conv_not_tensor)


def _conv_data_not_tensor(op: str, port: str) -> Any:
    # with one int for padding/stride, the spatial rank is read from the data input: that used
    # to be an AttributeError ('NoneType' object has no attribute 'dim') before the port check
    def run(out: Outputs) -> None:
        g = graph()
        other = g.tensor(dim=[4, 3, 3, 3] if op != "conv_wgrad" else [2, 4, 6, 6], name="other")
        getattr(g, op)(None, other, padding=1, stride=1, dilation=1, name="conv")
    return run


for _op, _port in (("conv_fprop", "X"), ("conv_dgrad", "DY"), ("conv_wgrad", "X")):
    add("conv", f"{_op}_data_none_scalar_padding", V, ("conv", _port),
        _conv_data_not_tensor(_op, _port))


def _dgrad_groups(out: Outputs) -> None:
    g = graph()
    dy = g.tensor(dim=[2, 4, 6, 6], name="dy")
    w = g.tensor(dim=[5, 3, 3, 3], name="w")
    g.conv_dgrad(dy, w, padding=[1, 1], name="dgrad").set_output(True).set_dim([2, 3, 6, 6])
    g.build()


add("conv", "dgrad_k_mismatch", V, ("dgrad",), _dgrad_groups)


def _wgrad_padding(out: Outputs) -> None:
    g = graph()
    x = g.tensor(dim=[2, 3, 6, 6], name="x")
    dy = g.tensor(dim=[2, 4, 6, 6], name="dy")
    g.conv_wgrad(x, dy, padding=[-2, 1], name="wgrad").set_output(True).set_dim([4, 3, 3, 3])
    g.build()


add("conv", "wgrad_negative_padding", V, ("wgrad", "padding"), _wgrad_padding)


def _wgrad_dims(out: Outputs) -> None:
    g = graph()
    x = g.tensor(dim=[2, 3, 6, 6], name="x")
    dy = g.tensor(dim=[2, 4, 5, 5], name="dy")
    g.conv_wgrad(x, dy, padding=[1, 1], name="wgrad").set_output(True).set_dim([4, 3, 3, 3])
    g.build()


add("conv", "wgrad_dy_dims_disagree", V, ("wgrad",), _wgrad_dims)

# -- batchnorm scalars and shapes -------------------------------------------------------------

_EPS = {"zero": 0.0, "negative": -1e-5, "nan": float("nan"), "inf": float("inf"),
        "str": "1e-5", "bool": True, "list": [1e-5], "complex": 1j, "bytes": b"1"}
for _name, _eps in _EPS.items():
    def _eps_case(out: Outputs, eps: Any = _eps) -> None:
        bn_graph(epsilon=eps)
    add("batchnorm", f"epsilon_{_name}", V, ("bn", "EPSILON" if isinstance(_eps, (str, bool, list, complex, bytes)) else "epsilon"), _eps_case)

_MOM = {"negative": -0.1, "above_one": 1.5, "nan": float("nan"), "inf": float("inf"),
        "str": "0.1", "bool": False, "none_item": [None]}
for _name, _mom in _MOM.items():
    def _mom_case(out: Outputs, mom: Any = _mom) -> None:
        bn_graph(momentum=mom)
    add("batchnorm", f"momentum_{_name}", V, ("bn", "MOMENTUM" if isinstance(_mom, (str, bool, list)) else "momentum"), _mom_case)

for _name, _value in {"nan": float("nan"), "negative": -1.0, "zero": 0.0}.items():
    def _baked(out: Outputs, value: float = _value) -> None:
        g = graph()
        t = {n: g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("scale", "bias")}
        x = g.tensor(dim=list(SHAPE), name="x")
        eps = g.tensor(dim=[1, 1, 1, 1], name="eps", is_pass_by_value=True, value=value)
        g.batchnorm(x, t["scale"], t["bias"], eps, name="bn")
    add("batchnorm", f"epsilon_tensor_value_{_name}", V, ("bn", "eps", "epsilon"), _baked)

    def _edited(out: Outputs, value: float = _value) -> None:
        g = graph()
        t = {n: g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("scale", "bias")}
        x = g.tensor(dim=list(SHAPE), name="x")
        eps = g.tensor(dim=[1, 1, 1, 1], name="eps", is_pass_by_value=True, value=1e-5)
        for o in g.batchnorm(x, t["scale"], t["bias"], eps, name="bn"):
            if o is not None:
                o.set_output(True)
        eps.set_value(value)
        g.build()
    add("batchnorm", f"epsilon_set_value_{_name}_then_build", V, ("bn", "eps", "epsilon"),
        _edited)


def _bn_param(port: str, dims: list[int]) -> Any:
    def run(out: Outputs) -> None:
        g = graph()
        t = {n: g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("scale", "bias")}
        t[port] = g.tensor(dim=dims, name=f"bad_{port}")
        x = g.tensor(dim=list(SHAPE), name="x")
        for o in g.batchnorm(x, t["scale"], t["bias"], 1e-5, name="bn"):
            if o is not None:
                o.set_output(True)
        g.build()
    return run


for _port in ("scale", "bias"):
    for _name, _dims in {"channels": [1, 4, 1, 1], "flat": [3], "spatial": [1, 3, 4, 4],
                         "rank5": [1, 3, 1, 1, 1]}.items():
        add("batchnorm", f"{_port}_dims_{_name}", V, ("bn", f"bad_{_port}"),
            _bn_param(_port, _dims))


def _bn_running_without_momentum(out: Outputs) -> None:
    g = graph()
    t = {n: g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("scale", "bias", "rm", "rv")}
    x = g.tensor(dim=list(SHAPE), name="x")
    g.batchnorm(x, t["scale"], t["bias"], 1e-5, in_running_mean=t["rm"], in_running_var=t["rv"],
                name="bn")


add("batchnorm", "running_stats_without_momentum", V, ("bn", "momentum"),
    _bn_running_without_momentum)


def _bn_no_epsilon(out: Outputs) -> None:
    g = graph()
    t = {n: g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("scale", "bias")}
    x = g.tensor(dim=list(SHAPE), name="x")
    g.batchnorm(x, t["scale"], t["bias"], None, name="bn")


add("batchnorm", "epsilon_missing", V, ("bn", "epsilon"), _bn_no_epsilon)


def _bn_peer(out: Outputs) -> None:
    g = graph()
    t = {n: g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("scale", "bias")}
    x = g.tensor(dim=list(SHAPE), name="x")
    g.batchnorm(x, t["scale"], t["bias"], 1e-5, peer_stats=[x], name="bn")


add("batchnorm", "peer_stats", V, ("bn", "peer_stats"), _bn_peer)


def _bn_inference_both(out: Outputs) -> None:
    g = graph()
    t = {n: g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("m", "iv", "v", "s", "b")}
    x = g.tensor(dim=list(SHAPE), name="x")
    g.batchnorm_inference(x, t["m"], t["iv"], t["s"], t["b"], variance=t["v"], epsilon=1e-5,
                          name="bni")


add("batchnorm", "inference_inv_variance_and_variance", V, ("bni", "not both"),
    _bn_inference_both)


def _bn_inference_eps(eps: Any) -> Any:
    def run(out: Outputs) -> None:
        g = graph()
        t = {n: g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("m", "v", "s", "b")}
        x = g.tensor(dim=list(SHAPE), name="x")
        g.batchnorm_inference(x, t["m"], None, t["s"], t["b"], variance=t["v"], epsilon=eps,
                              name="bni")
    return run


for _name, _eps in {"negative": -1.0, "nan": float("nan"), "str": "x"}.items():
    add("batchnorm", f"inference_epsilon_{_name}", V, ("bni",), _bn_inference_eps(_eps))


def _bn_bwd_mean_dims(out: Outputs) -> None:
    g = graph()
    dy = g.tensor(dim=list(SHAPE), name="dy")
    x = g.tensor(dim=list(SHAPE), name="x")
    s = g.tensor(dim=[1, 3, 1, 1], name="s")
    m = g.tensor(dim=[1, 2, 1, 1], name="bad_mean")
    iv = g.tensor(dim=[1, 3, 1, 1], name="iv")
    for o in g.batchnorm_backward(dy, x, s, m, iv, name="bnb"):
        o.set_output(True)
    g.build()


add("batchnorm", "backward_mean_dims", V, ("bnb", "bad_mean"), _bn_bwd_mean_dims)


def _bn_scale_int(out: Outputs) -> None:
    g = graph()
    t = {n: g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("scale", "bias")}
    t["scale"].set_data_type("INT32")
    x = g.tensor(dim=list(SHAPE), name="x")
    for o in g.batchnorm(x, t["scale"], t["bias"], 1e-5, name="bn"):
        if o is not None:
            o.set_output(True)
    g.build()


add("batchnorm", "scale_int32", V, ("bn", "scale", "INT32"), _bn_scale_int)

# -- pointwise and clips --------------------------------------------------------------------

_CLIPS: dict[str, dict[str, Any]] = {
    "upper_below_lower": {"lower_clip": 1.0, "upper_clip": 0.0},
    "lower_nan": {"lower_clip": float("nan")}, "upper_inf": {"upper_clip": float("inf")},
    "upper_str": {"upper_clip": "6"}, "lower_bool": {"lower_clip": True},
    "slope_nan": {"negative_slope": float("nan")}, "slope_str": {"negative_slope": "0.1"},
    "slope_list": {"negative_slope": [0.1]},
}
for _name, _kw in _CLIPS.items():
    def _clip(out: Outputs, kw: dict[str, Any] = _kw) -> None:
        g = graph()
        x = g.tensor(dim=list(SHAPE), name="x")
        g.relu(x, name="clamp", **kw)
    culprit = ("clamp", "slope") if _name.startswith("slope") else (
        ("clamp", "upper clip must be >= the lower clip") if _name == "upper_below_lower"
        else ("clamp", "clip", "finite"))
    add("pointwise", f"relu_{_name}", V, culprit, _clip)

_POINTWISE_ATTRS = {"swish_beta": float("nan"), "elu_alpha": float("inf"),
                    "softplus_beta": "2", "relu_lower_clip_slope": -float("inf"),
                    "axis": 1.5}
for _attr, _value in _POINTWISE_ATTRS.items():
    def _pw(out: Outputs, attr: str = _attr, value: Any = _value) -> None:
        g = graph()
        x = g.tensor(dim=list(SHAPE), name="x")
        g.pointwise("RELU_FWD", x, name="pw", **{attr: value})
    add("pointwise", f"attribute_{_attr}", V, ("pw", _attr), _pw)

for _name, _mode in {"unknown": "FROBNICATE", "int": 9999, "float": 1.0, "none": None,
                     "not_set": "NOT_SET"}.items():
    def _mode_case(out: Outputs, mode: Any = _mode) -> None:
        g = graph()
        x = g.tensor(dim=list(SHAPE), name="x")
        g.pointwise(mode, x, name="pw").set_output(True)
        g.build()
    add("pointwise", f"mode_{_name}", V, ("pointwise mode",), _mode_case)


def _arity(mode: str, n: int) -> Any:
    def run(out: Outputs) -> None:
        g = graph()
        ins = [g.tensor(dim=list(SHAPE), name=f"i{k}") for k in range(n)]
        g.pointwise(mode, *ins, name="pw").set_output(True)
        g.build()
    return run


add("pointwise", "add_one_input", V, ("pw", "IN_1", "missing"), _arity("ADD", 1))
add("pointwise", "relu_two_inputs", V, ("pw", "IN_1", "must not"), _arity("RELU_FWD", 2))
add("pointwise", "add_three_inputs", V, ("pw", "IN_2", "must not"), _arity("ADD", 3))
add("pointwise", "sqrt_two_inputs", V, ("pw", "IN_1"), _arity("SQRT", 2))


def _relu_bwd_dims(out: Outputs) -> None:
    g = graph()
    dy = g.tensor(dim=list(SHAPE), name="dy")
    x = g.tensor(dim=[2, 3, 4, 1], name="xfwd")
    g.relu_backward(dy, x, name="drelu").set_output(True)
    g.build()


add("pointwise", "relu_backward_dims_differ", V, ("drelu", "xfwd"), _relu_bwd_dims)


def _pw_not_tensor(value: Any) -> Any:
    def run(out: Outputs) -> None:
        g = graph()
        x = g.tensor(dim=list(SHAPE), name="x")
        g.add(x, value, name="sum").set_output(True)
        g.build()
    return run


for _name, _value in {"float": 1.0, "list": [1.0], "str": "x", "none": None}.items():
    add("pointwise", f"add_operand_{_name}", hipdnn.HipdnnError, ("sum",), _pw_not_tensor(_value))


def _leaky(value: Any) -> Any:
    def run(out: Outputs) -> None:
        g = graph()
        x = g.tensor(dim=list(SHAPE), name="x")
        g.leaky_relu(x, value, name="leaky")
    return run


for _name, _value in {"nan": float("nan"), "str": "0.1", "none": None}.items():
    add("pointwise", f"leaky_relu_slope_{_name}", V, ("negative_slope",), _leaky(_value))


def _reduction_mode(out: Outputs) -> None:
    g = graph()
    x = g.tensor(dim=list(SHAPE), name="x")
    g.reduction(x, "MEDIAN", name="red")


add("pointwise", "reduction_mode_unknown", V, ("reduction mode", "MEDIAN"), _reduction_mode)


def _compute_on_pointwise(out: Outputs) -> None:
    g = graph()
    x = g.tensor(dim=list(SHAPE), name="x")
    g.relu(x, name="act", compute_data_type="INT32").set_output(True)
    g.build()


add("pointwise", "compute_int32_on_float", V, ("act", "compute_data_type"), _compute_on_pointwise)

# -- found while building the catalog ---------------------------------------------------------

_MISPLACED: dict[str, tuple[str, int, dict[str, Any]]] = {
    "lower_clip_on_add": ("ADD", 2, {"relu_lower_clip": 1.0}),
    "upper_clip_on_mul": ("MUL", 2, {"relu_upper_clip": 6.0}),
    "slope_on_sigmoid": ("SIGMOID_FWD", 1, {"relu_lower_clip_slope": 0.1}),
    "swish_beta_on_relu": ("RELU_FWD", 1, {"swish_beta": 2.0}),
    "elu_alpha_on_sqrt": ("SQRT", 1, {"elu_alpha": 2.0}),
    "softplus_beta_on_tanh": ("TANH_FWD", 1, {"softplus_beta": 1.0}),
    "axis_on_relu": ("RELU_FWD", 1, {"axis": 1}),
}
for _name, (_mode, _n, _kw) in _MISPLACED.items():
    def _misplaced(out: Outputs, mode: str = _mode, n: int = _n,
                   kw: dict[str, Any] = _kw) -> None:
        g = graph()
        ins = [g.tensor(dim=list(SHAPE), name=f"i{k}") for k in range(n)]
        g.pointwise(mode, *ins, name="pw", **kw).set_output(True)
        g.build()
    add("pointwise", f"attribute_{_name}", V, ("pw", next(iter(_kw)), "does not apply"),
        _misplaced)

for _name, _attrs in {"stride_2_70": {"stride": [2**70, 1]}, "padding_2_40": {"padding": [2**40, 0]},
                      "dilation_2_31": {"dilation": [2**31, 1]}}.items():
    def _big(out: Outputs, attrs: dict[str, Any] = _attrs) -> None:
        g, *_ = conv_graph(**attrs)
        g.build()
    add("conv", _name, V, ("conv", "2**31-1"), _big)


def _value_not_pbv(out: Outputs) -> None:
    g = graph()
    x = g.tensor(dim=list(SHAPE), name="xv")
    x.set_value(3.0)
    g.relu(x).set_output(True)
    g.build()


add("dims", "value_on_tensor_not_pass_by_value", V, ("xv", "not pass-by-value"), _value_not_pbv)


def _pbv_big(out: Outputs) -> None:
    g = graph()
    x = g.tensor(dim=list(SHAPE), name="pbv", is_pass_by_value=True)
    g.relu(x).set_output(True)
    g.build()


add("dims", "pass_by_value_with_many_elements", V, ("pbv", "must all be 1"), _pbv_big)


def _pbv_output(out: Outputs) -> None:
    g = graph()
    x = g.tensor(dim=list(SHAPE), name="x")
    g.relu(x, name="act").set_output(True).set_name("yp").set_is_pass_by_value(True)
    g.build()


add("dims", "pass_by_value_output", V, ("yp", "act", "pass-by-value"), _pbv_output)

for _name, _flag in {"str_false": "false", "none": None, "two": 2, "list": [True]}.items():
    def _flag_case(out: Outputs, flag: Any = _flag) -> None:
        g = graph()
        x = g.tensor(dim=list(SHAPE), name="x")
        g.relu(x).set_name("yf").set_output(flag)
    add("dims", f"set_output_{_name}", A, ("yf", "set_output", "True or False"), _flag_case)

    def _virtual_flag(out: Outputs, flag: Any = _flag) -> None:
        graph().tensor(dim=list(SHAPE), name="xf", is_virtual=flag)
    add("dims", f"is_virtual_{_name}", A, ("xf", "is_virtual"), _virtual_flag)
