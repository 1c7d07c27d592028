"""1-D graphs (rank-3 tensors, NCL and NLC): the graph API's rules for them, their bad input,
the hipdnn_frontend-style layer, and MIOPEN_ENGINE's padding to 4-D N,C,L,1 (AMD's provider's
rule) as a pure-Python transformation. Numerics against PyTorch: tests/oracle
(test_reference_engine.py), tests/cudnn_frontend_style/test_conv_fuzz.py, and the MIOpen lanes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hipdnn
from hipdnn.core.errors import ValidationError
from hipdnn.core.shapes import layout_strides
from hipdnn.engines.miopen.onedim import Padded, layouts_1d, pad_1d
from hipdnn.engines.miopen.patterns import Row, match
from hipdnn.engines.miopen.rules import Declined
from hipdnn.ir.view import GraphView

torch = pytest.importorskip("torch")
F = torch.nn.functional

NCL, NLC = (0, 1, 2), (0, 2, 1)


def _graph() -> hipdnn.Graph:
    return hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT,
                        intermediate_data_type=hipdnn.DataType.FLOAT,
                        compute_data_type=hipdnn.DataType.FLOAT)


def _t(g: hipdnn.Graph, dims: tuple[int, ...], order: tuple[int, ...], name: str) -> Any:
    return g.tensor(dim=list(dims), stride=list(layout_strides(dims, order)), name=name)


def _conv(order: tuple[int, ...] = NCL, **geo: Any) -> tuple[hipdnn.Graph, Any, Any, Any]:
    g = _graph()
    x, w = _t(g, (2, 4, 9), order, "x"), _t(g, (6, 4, 3), order, "w")
    y = g.conv_fprop(x, w, name="conv", **geo).set_output(True)
    return g, x, w, y


def _array(t: Any, fill: float = np.nan) -> np.ndarray:
    dims, strides = t.get_dim(), t.get_stride()
    buf = np.full(1 + sum((d - 1) * s for d, s in zip(dims, strides, strict=True)), fill,
                  np.float32)
    return np.lib.stride_tricks.as_strided(buf, dims, [4 * s for s in strides])


def _fill(t: Any, rng: np.random.Generator) -> np.ndarray:
    a = _array(t)
    a[...] = rng.uniform(-1, 1, a.shape)
    return a


# ------------------------------------------------------------------------------ the graph API
@pytest.mark.parametrize("order", [NCL, NLC], ids=["NCL", "NLC"])
def test_rank3_conv_validates_with_one_element_lists(order: tuple[int, ...]) -> None:
    g, _, _, y = _conv(order, padding=[1], stride=[2], dilation=[2])
    g.validate()
    assert y.get_dim() == [2, 6, 4]  # (9 + 2 - 2*(3-1) - 1) // 2 + 1
    assert tuple(y.get_stride()) == layout_strides((2, 6, 4), order)  # Y follows X's layout


def test_rank3_conv_takes_an_int_for_every_list() -> None:
    g, _, _, y = _conv(padding=1, stride=2, dilation=1)
    g.validate()
    assert y.get_dim() == [2, 6, 5]
    assert g.nodes[0].pre_padding == (1,) and g.nodes[0].stride == (2,)


@pytest.mark.parametrize("knob", ["padding", "stride", "dilation", "pre_padding"])
def test_two_element_list_on_rank3_is_a_typed_error(knob: str) -> None:
    kw: dict[str, Any] = {knob: [1, 1]}
    if knob == "pre_padding":
        kw["post_padding"] = [1]
    g, *_ = _conv(**kw)
    with pytest.raises(ValidationError) as info:
        g.validate()
    msg, want = str(info.value), "pre_padding" if knob == "padding" else knob
    assert info.value.node == "conv"
    assert f"{want} has 2 values [1, 1]" in msg and "rank 3" in msg and "takes 1 value" in msg, msg
    # after the failure the same graph, corrected, builds and runs
    setattr(g.nodes[0], want, (1,))
    if knob == "padding":
        g.nodes[0].post_padding = (1,)
    g.validate()


def test_one_element_list_on_rank4_is_a_typed_error() -> None:
    g = _graph()
    x = g.tensor(dim=[1, 2, 5, 5], name="x")
    w = g.tensor(dim=[2, 2, 3, 3], name="w")
    g.conv_fprop(x, w, padding=[1], name="c4").set_output(True)
    with pytest.raises(ValidationError, match=r"node 'c4'.*pre_padding has 1 value \[1\] but the "
                                              r"data tensors have rank 4.*takes 2 values"):
        g.validate()


@pytest.mark.parametrize("op", ["conv_fprop", "conv_dgrad", "conv_wgrad"])
def test_rank_mismatch_between_data_and_filter_is_a_typed_error(op: str) -> None:
    g = _graph()
    a = g.tensor(dim=[2, 4, 9], name="a")
    b = g.tensor(dim=[6, 4, 3, 3] if op != "conv_wgrad" else [2, 6, 7, 7], name="b")
    getattr(g, op)(a, b, padding=[1], name="c").set_output(True)
    with pytest.raises(ValidationError) as info:
        g.validate()
    assert info.value.node == "c" and info.value.port in ("W", "DY"), str(info.value)
    assert "rank 4" in str(info.value) and "expected rank 3" in str(info.value)


def test_rank3_batchnorm_and_pointwise_validate() -> None:
    g = _graph()
    x = _t(g, (3, 5, 7), NLC, "x")
    p = [g.tensor(dim=[1, 5, 1], name=n) for n in ("scale", "bias")]
    y, mean, inv, _, _ = g.batchnorm(x, p[0], p[1], 1e-5, name="bn")
    assert y is not None and mean is not None and inv is not None
    r = g.relu(y, name="act").set_output(True)
    g.validate()
    assert mean.get_dim() == [1, 5, 1] and r.get_dim() == [3, 5, 7]
    assert tuple(r.get_stride()) == layout_strides((3, 5, 7), NLC)


def test_rank3_batchnorm_with_rank4_parameters_is_a_typed_error() -> None:
    g = _graph()
    x = g.tensor(dim=[3, 5, 7], name="x")
    s, b = g.tensor(dim=[1, 5, 1, 1], name="s"), g.tensor(dim=[1, 5, 1], name="b")
    g.batchnorm_inference(x, b, b, s, b, name="bn").set_output(True)
    with pytest.raises(ValidationError, match=r"node 'bn'.*port SCALE.*must have dims \[1, 5, 1\]"):
        g.validate()


# ------------------------------------------------------------- strides neither NCL nor NLC
def test_rank3_strides_neither_ncl_nor_nlc_run_on_the_cpu_engine_and_miopen_declines() -> None:
    """N innermost (strides 1, 18, 2): not a layout MIOpen is given; the CPU engine computes it
    right, MIOPEN_ENGINE's row match declines naming the tensor, strides and the rule."""
    g = _graph()
    x = g.tensor(dim=[2, 4, 9], stride=[1, 18, 2], name="x")
    w = _t(g, (6, 4, 3), NCL, "w")
    y = g.conv_fprop(x, w, padding=[1], name="conv").set_output(True)
    g.validate()
    with pytest.raises(Declined, match=r"port X \(tensor 'x'\) has dims \[2, 4, 9\] strides "
                                       r"\[1, 18, 2\]: a 1-D \(rank-3\) tensor must be dense NCL"):
        match(GraphView.of(g))
    g.build([hipdnn.HeurMode.A])
    assert g.get_plan_name().startswith("CPU_REFERENCE_ENGINE")
    rng = np.random.default_rng(0)
    xa, wa, ya = _fill(x, rng), _fill(w, rng), _array(y)
    g.execute({x: xa, w: wa, y: ya})
    ref = F.conv1d(torch.from_numpy(np.ascontiguousarray(xa)), torch.from_numpy(wa), padding=1)
    np.testing.assert_allclose(ya, ref.numpy(), atol=1e-5, rtol=1e-5)


# ----------------------------------------------------------------------- MIOpen's padding
def test_layouts_1d() -> None:
    assert layouts_1d((2, 3, 5), (15, 5, 1)) == ("NCL",)
    assert layouts_1d((2, 3, 5), (15, 1, 3)) == ("NLC",)
    assert layouts_1d((2, 3, 1), (3, 1, 1)) == ("NCL", "NLC")  # L == 1: both
    assert layouts_1d((2, 3, 5), (1, 10, 2)) == ()


@pytest.mark.parametrize("order,layout,strides4", [
    (NCL, "NCHW", (36, 9, 1, 1)), (NLC, "NHWC", (36, 1, 4, 4))], ids=["NCL", "NLC"])
def test_conv_padded_to_n_c_l_1(order: tuple[int, ...], layout: str,
                                strides4: tuple[int, ...]) -> None:
    g, x, _, _ = _conv(order, padding=[1], stride=[2], dilation=[2])
    g.validate()
    view = GraphView.of(g)
    padded = pad_1d(view)
    assert padded is not view
    (node,) = padded.nodes
    assert node is not g.nodes[0] and type(node) is type(g.nodes[0])
    assert (node.pre_padding, node.post_padding, node.stride, node.dilation) == (
        (1, 0), (1, 0), (2, 1), (2, 1))
    px = node.inputs["X"]
    assert isinstance(px, Padded) and px.uid == x.uid and px.name == "x"
    assert px.dim == (2, 4, 9, 1) and px.stride == strides4
    assert node.outputs["Y"].dim == (2, 6, 4, 1)
    # the user's graph and its validated copy are untouched
    assert g.nodes[0].pre_padding == (1,) and len(view.tensors[x.uid].dim) == 3
    m = match(view)
    assert m.row == Row.CONV_FPROP and m.padded_1d and m.layout == layout
    assert m.layout_name == ("NCL" if order == NCL else "NLC")


@pytest.mark.parametrize("order", [NCL, NLC], ids=["NCL", "NLC"])
def test_batchnorm_rows_padded(order: tuple[int, ...]) -> None:
    g = _graph()
    x = _t(g, (3, 5, 7), order, "x")
    s, b = g.tensor(dim=[1, 5, 1], name="s"), g.tensor(dim=[1, 5, 1], name="b")
    y, mean, inv, _, _ = g.batchnorm(x, s, b, 1e-5, name="bn")
    assert y is not None and mean is not None and inv is not None
    for t in (mean, inv):
        t.set_output(True)
    g.relu(y, name="act").set_output(True)
    g.validate()
    m = match(GraphView.of(g))
    assert m.row == Row.BN_TRAINING_ACT and m.padded_1d
    assert m.t.scale.dim == (1, 5, 1, 1) and m.t.x.dim == (3, 5, 7, 1)  # type: ignore[attr-defined]


def test_standalone_pointwise_rows_are_not_padded() -> None:
    g = _graph()
    a = _t(g, (2, 3, 7), NCL, "a")
    g.relu(a, name="act").set_output(True)
    g.validate()
    view = GraphView.of(g)
    assert pad_1d(view) is view
    m = match(view)
    assert m.row == Row.POINTWISE_ACT and not m.padded_1d and m.layout_name == "NCL"


def test_a_declined_1d_graph_says_it_was_padded() -> None:
    g, *_ = _conv(pre_padding=[1], post_padding=[0])
    g.validate()
    with pytest.raises(Declined, match=r"symmetric padding only \(a 1-D graph, matched padded "
                                       r"to 4-D N,C,L,1"):
        match(GraphView.of(g))


# ---------------------------------------------------------- the hipdnn_frontend-style layer
def test_hipdnn_frontend_layer_takes_a_1d_convolution() -> None:
    import hipdnn.frontend as hf

    handle = hf.Handle()
    graph = hf.Graph()
    graph.set_io_data_type(hf.DataType.FLOAT)
    graph.set_compute_data_type(hf.DataType.FLOAT)
    x = hf.Tensor.create([2, 4, 9], hf.DataType.FLOAT)
    w = hf.Tensor.create([6, 4, 3], hf.DataType.FLOAT)
    attrs = hf.ConvFpropAttributes()
    attrs.set_padding([1])
    attrs.set_stride([2])
    attrs.set_dilation([1])
    y = graph.conv_fprop(x, w, attrs)
    y.set_output(True)
    for step in (graph.validate, lambda: graph.build_operation_graph(handle),
                 graph.create_execution_plans, graph.check_support, graph.build_plans):
        result = step()
        assert result.is_good(), result.get_message()
    rng = np.random.default_rng(1)
    xd = rng.uniform(-1, 1, (2, 4, 9)).astype(np.float32)
    wd = rng.uniform(-1, 1, (6, 4, 3)).astype(np.float32)
    bufs = [hf.DeviceBuffer(a.nbytes) for a in (xd, wd)] + [hf.DeviceBuffer(2 * 6 * 5 * 4)]
    bufs[0].copy_from_host(xd.tobytes())
    bufs[1].copy_from_host(wd.tobytes())
    pack = {x.get_uid(): bufs[0].ptr(), w.get_uid(): bufs[1].ptr(), y.get_uid(): bufs[2].ptr()}
    assert graph.execute(handle, pack, 0).is_good()
    got = np.frombuffer(bufs[2].copy_to_host(), np.float32).reshape(2, 6, 5)
    ref = F.conv1d(torch.from_numpy(xd), torch.from_numpy(wd), padding=1, stride=2)
    np.testing.assert_allclose(got, ref.numpy(), atol=1e-5, rtol=1e-5)
    hf.destroy_handle(handle)


def test_hipdnn_frontend_layer_reports_a_two_element_list_on_rank3() -> None:
    import hipdnn.frontend as hf

    graph = hf.Graph()
    graph.set_io_data_type(hf.DataType.FLOAT)
    graph.set_compute_data_type(hf.DataType.FLOAT)
    x = hf.Tensor.create([2, 4, 9], hf.DataType.FLOAT)
    w = hf.Tensor.create([6, 4, 3], hf.DataType.FLOAT)
    attrs = hf.ConvFpropAttributes().set_padding([1, 1]).set_stride([1, 1]).set_dilation([1, 1])
    graph.conv_fprop(x, w, attrs).set_output(True)
    result = graph.validate()
    assert not result.is_good()
    assert "has 2 values" in result.get_message() and "rank 3" in result.get_message()
