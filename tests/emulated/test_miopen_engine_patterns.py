"""MIOPEN_ENGINE pattern matching (no device needed): every seed row is recognised in every
dtype and layout, and everything else is declined with a reason naming the failing rule."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from test_miopen_engine_graphs import DTYPES, LAYOUT_NAMES, build, new_graph

from hipdnn.core.types import ConvolutionMode
from hipdnn.core.types import DataType as D
from hipdnn.engines.miopen import roles
from hipdnn.engines.miopen.patterns import Row, match
from hipdnn.engines.miopen.roles import BnTraining, is_scalar
from hipdnn.engines.miopen.rules import Declined
from hipdnn.graph.graph import Graph

pytest.importorskip("torch")


# ========================================================================== pattern tests
@pytest.mark.parametrize("row", list(Row))
@pytest.mark.parametrize("layout", LAYOUT_NAMES)
def test_every_row_matches(row: Row, layout: str) -> None:
    for dtype in DTYPES.values():
        case = build(row, dtype, layout)
        pointwise = row in (Row.POINTWISE_ACT, Row.POINTWISE_BINARY)
        if pointwise and (dtype == D.BFLOAT16 or (row == Row.POINTWISE_BINARY
                                                  and layout.endswith("C"))):
            # AMD's rules: FLOAT/HALF only; binary ops packed channels-first only
            with pytest.raises(Declined, match=r"BFLOAT16|not packed channels-first"):
                match(case.graph)
            continue
        m = match(case.graph)
        assert m.row == row
        assert m.layout == layout
        assert m.has_conv == row.name.startswith("CONV")


#: The contract class (hipdnn/engines/miopen/roles.py) each row's Match.t is.
ROW_CLASSES = {
    Row.CONV_FPROP: roles.ConvFprop, Row.CONV_DGRAD: roles.ConvDgrad,
    Row.CONV_WGRAD: roles.ConvWgrad, Row.CONV_BIAS_ACT: roles.ConvBiasAct,
    Row.BN_INFERENCE: roles.BnInference, Row.BN_INFERENCE_INV: roles.BnInferenceInv,
    Row.BN_TRAINING: roles.BnTraining, Row.BN_TRAINING_ACT: roles.BnTrainingAct,
    Row.BN_BACKWARD: roles.BnBackward, Row.BN_INF_DRELU_BN_BWD: roles.BnInfDreluBnBwd,
    Row.BN_INFERENCE_ACT: roles.BnInferenceAct, Row.BN_INFERENCE_INV_ACT: roles.BnInferenceInvAct,
    Row.POINTWISE_ACT: roles.PointwiseActivation, Row.POINTWISE_BINARY: roles.PointwiseBinary,
    Row.LAYERNORM: roles.LayerNormForward, Row.LAYERNORM_BACKWARD: roles.LayerNormBackward,
    Row.RMSNORM: roles.RmsNormForward, Row.RMSNORM_BACKWARD: roles.RmsNormBackward,
}


@pytest.mark.parametrize("row", list(Row))
def test_row_contract(row: Row) -> None:
    """Each row's tensors are its roles class: every graph tensor a row binds is a field (the
    non-virtual ones exactly once), scalars are pass-by-value fields, a misspelled role fails."""
    case = build(row, D.FLOAT, "NCHW")
    m = match(case.graph)
    assert type(m.t) is ROW_CLASSES[row]
    assert m.data_type == D.FLOAT
    bound = {f.name: getattr(m.t, f.name) for f in dataclasses.fields(m.t)}
    graph_uids = {t.uid for n in case.graph.nodes for t in (*n.inputs.values(), *n.outputs.values())
                  if t is not None}
    assert all(t.uid in graph_uids for t in bound.values() if t is not None)
    pack = [t.uid for t in bound.values() if t is not None and not t.is_virtual
            and not t.is_pass_by_value]
    assert len(pack) == len(set(pack))
    want_pack = {t.uid for n in case.graph.nodes
                 for port, t in (*n.inputs.items(), *n.outputs.items())
                 if t is not None and not t.is_virtual and not t.is_pass_by_value}
    assert set(pack) == want_pack
    for f in dataclasses.fields(m.t):
        if is_scalar(f) and bound[f.name] is not None:
            assert f.name in ("epsilon", "momentum")
    with pytest.raises(AttributeError):
        m.t.inv_varaince  # type: ignore[union-attr]  # noqa: B018


def test_running_stats_roles() -> None:
    case = build(Row.BN_TRAINING, D.HALF, "NHWC", running=True, momentum=0.3, eps=1e-3)
    m = match(case.graph)
    assert isinstance(m.t, BnTraining)
    by_name = {t.name: t for t in case.inputs}
    assert m.t.prev_running_mean is by_name["running_mean"]
    assert m.t.prev_running_variance is by_name["running_var"]
    assert m.t.next_running_mean is case.outputs["next_running_mean"]
    assert m.t.next_running_variance is case.outputs["next_running_variance"]
    assert m.t.momentum is not None and float(m.t.momentum.value) == pytest.approx(0.3)
    assert m.t.epsilon is not None and float(m.t.epsilon.value) == pytest.approx(1e-3)


def _declined(g: Graph) -> str:
    g.validate()
    with pytest.raises(Declined) as info:
        match(g)
    return str(info.value)


def _conv_graph(dtype: D = D.FLOAT, **kw: Any) -> tuple[Graph, Any, Any]:
    g = new_graph(dtype)
    x = g.tensor(dim=[2, 4, 5, 5], data_type=dtype, name="x")
    w = g.tensor(dim=[3, 4, 3, 3], data_type=dtype, name="w")
    return g, x, w


def test_declines_convolution_mode() -> None:
    g, x, w = _conv_graph()
    g.conv_fprop(x, w, padding=[1, 1], convolution_mode=ConvolutionMode.CONVOLUTION,
                 name="c").set_output(True)
    msg = _declined(g)
    assert "'c'" in msg and "CONVOLUTION" in msg and "CROSS_CORRELATION only" in msg


def test_declines_asymmetric_padding() -> None:
    g, x, w = _conv_graph()
    g.conv_fprop(x, w, pre_padding=[1, 1], post_padding=[0, 0], name="c").set_output(True)
    assert "symmetric padding" in _declined(g)


def test_declines_non_dense_tensor() -> None:
    g = new_graph(D.FLOAT)
    x = g.tensor(dim=[2, 4, 5, 5], stride=[200, 50, 10, 2], name="x")
    w = g.tensor(dim=[3, 4, 3, 3], name="w")
    g.conv_fprop(x, w, padding=[1, 1], name="c").set_output(True)
    msg = _declined(g)
    assert "port X" in msg and "dense tensors only" in msg and "NHWC" in msg


def test_declines_conv_compute_half() -> None:
    g, x, w = _conv_graph(D.HALF)
    g.conv_fprop(x, w, padding=[1, 1], compute_data_type=D.HALF, name="c").set_output(True)
    assert "compute data type HALF" in _declined(g)


def test_declines_conv_y_input_type_without_bias() -> None:
    g, x, w = _conv_graph(D.HALF)
    y = g.conv_fprop(x, w, padding=[1, 1], name="c")
    y.set_data_type(D.HALF)
    g.relu(y, name="r").set_output(True)
    msg = _declined(g)
    assert "port Y" in msg and "HALF" in msg and "only with bias" in msg


def test_declines_bias_compute_neither_fp32_nor_input_type() -> None:
    g, x, w = _conv_graph(D.HALF)
    y = g.conv_fprop(x, w, padding=[1, 1], name="c")
    b = g.tensor(dim=[1, 3, 1, 1], data_type=D.HALF, name="b")
    g.relu(g.bias(y, b, compute_data_type=D.BFLOAT16, name="add"), name="r").set_output(True)
    msg = _declined(g)
    assert "'add'" in msg and "bias compute type FLOAT or the input type HALF" in msg


def test_declines_leaky_relu() -> None:
    g, x, w = _conv_graph()
    y = g.conv_fprop(x, w, padding=[1, 1], name="c")
    g.relu(y, negative_slope=0.1, name="r").set_output(True)
    assert "relu_lower_clip_slope" in _declined(g)


def test_declines_half_bn_params() -> None:
    g = new_graph(D.HALF)
    x = g.tensor(dim=[2, 3, 4, 4], name="x")
    ps = [g.tensor(dim=[1, 3, 1, 1], data_type=D.HALF, name=n)
          for n in ("mean", "var", "scale", "bias")]
    g.batchnorm_inference(x, ps[0], scale=ps[2], bias=ps[3], variance=ps[1], epsilon=1e-5,
                          name="bn").set_output(True)
    msg = _declined(g)
    assert "port MEAN" in msg and "FP32" in msg


def test_declines_other_graphs() -> None:
    g = new_graph(D.FLOAT)
    a = g.tensor(dim=[2, 3, 4, 4], name="a")
    g.relu(g.relu(a, name="r"), name="r2").set_output(True)  # two activations: no row
    msg = _declined(g)
    assert "not a seed-table pattern" in msg and "PointwiseNode(RELU_FWD)" in msg
    g = new_graph(D.FLOAT)
    g.exp(g.tensor(dim=[2, 3, 4, 4], name="a"), name="e").set_output(True)
    msg = _declined(g)
    assert "not a seed-table pattern" in msg and "PointwiseNode(EXP)" in msg
