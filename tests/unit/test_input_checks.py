"""Bad user input raises ValidationError naming the tensor/node, the parameter, the value and
what is allowed: integers (operator.index semantics), enums, scalar ranges, missing epsilon."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import hipdnn
from hipdnn.core.errors import HipdnnError, ValidationError
from hipdnn.core.types import (
    BuildPlanPolicy,
    ConvolutionMode,
    DataType,
    HeurMode,
    KnobValueType,
    PointwiseMode,
    check_float,
    to_data_type,
    to_enum,
    to_int,
    to_int_tuple,
)


def _g() -> hipdnn.Graph:
    return hipdnn.Graph(io_data_type=DataType.FLOAT)


# -- integers -----------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [3.7, 3.0, True, "3", None, 1 + 0j])
def test_tensor_dim_rejects_non_integers(bad: Any) -> None:
    g = _g()
    with pytest.raises(ValidationError) as info:
        g.tensor(dim=[2, bad, 4, 4], name="x")
    msg = str(info.value)
    assert "tensor 'x'" in msg and "dim" in msg and repr(bad) in msg and "integer" in msg
    assert info.value.tensor == "x"


def test_tensor_dim_float_is_not_truncated() -> None:
    g = _g()
    with pytest.raises(ValidationError, match=r"tensor 'x'.*dim.*3\.7.*index 1"):
        g.tensor(dim=[2, 3.7, 4, 4], name="x")


def test_tensor_dims_accept_numpy_and_torch_sizes() -> None:
    g = _g()
    t = g.tensor(dim=np.array([2, 3, 4, 4], dtype=np.int64), name="a")
    assert t.dim == (2, 3, 4, 4) and all(type(d) is int for d in t.dim)
    t2 = g.tensor(dim=[np.int32(2), np.uint8(3), 4, 4], stride=(48, 16, 4, np.int16(1)))
    assert t2.dim == (2, 3, 4, 4) and t2.stride == (48, 16, 4, 1)
    torch = pytest.importorskip("torch")
    t3 = g.tensor(dim=torch.zeros(2, 3, 5, 5).shape)
    assert t3.dim == (2, 3, 5, 5)


@pytest.mark.parametrize("bad", ["2345", 7, 2.5])
def test_tensor_dim_rejects_a_non_sequence(bad: Any) -> None:
    with pytest.raises(ValidationError, match="dim"):
        _g().tensor(dim=bad, name="x")


def test_tensor_stride_and_set_dim_reject_floats() -> None:
    g = _g()
    with pytest.raises(ValidationError, match=r"tensor 'x'.*stride.*1\.5"):
        g.tensor(dim=[1, 1, 2, 2], stride=[4, 4, 2, 1.5], name="x")
    t = g.tensor(dim=[1, 1, 2, 2], name="y")
    with pytest.raises(ValidationError, match=r"tensor 'y'.*dim.*2\.2"):
        t.set_dim([1, 1, 2, 2.2])
    assert t.dim == (1, 1, 2, 2)


@pytest.mark.parametrize("bad", ["x", 1.5, True, [1]])
def test_uid_rejects_non_integers(bad: Any) -> None:
    g = _g()
    with pytest.raises(ValidationError, match=r"tensor 'x'.*uid.*integer") as info:
        g.tensor(dim=[1, 1, 1, 1], name="x", uid=bad)
    assert isinstance(info.value, ValueError) and isinstance(info.value, HipdnnError)
    t = g.tensor(dim=[1, 1, 1, 1], name="z", uid=np.int64(7))
    assert t.uid == 7 and type(t.uid) is int
    with pytest.raises(ValidationError, match="uid"):
        t.set_uid(bad)
    assert t.set_uid(-1).uid is None


def test_tensor_value_rejects_strings() -> None:
    with pytest.raises(ValidationError, match=r"tensor 'e'.*value.*'abc'"):
        _g().tensor(dim=[1, 1, 1, 1], name="e", is_pass_by_value=True, value="abc")


@pytest.mark.parametrize("kw", ["padding", "stride", "dilation", "pre_padding", "post_padding"])
@pytest.mark.parametrize("bad", [[1.5, 1], 1.5, "ab", [1, "1"], [True, 1]])
def test_conv_geometry_rejects_non_integers(kw: str, bad: Any) -> None:
    g = _g()
    x, w = g.tensor(dim=[1, 2, 5, 5]), g.tensor(dim=[3, 2, 3, 3])
    with pytest.raises(ValidationError) as info:
        g.conv_fprop(x, w, **{kw: bad}, name="c")
    msg = str(info.value)
    assert info.value.node == "c"
    assert kw.split("_")[-1] in msg and "integer" in msg


def test_conv_padding_float_never_runs_as_truncated() -> None:
    g = _g()
    x, w = g.tensor(dim=[1, 2, 5, 5]), g.tensor(dim=[3, 2, 3, 3])
    with pytest.raises(ValidationError, match=r"node 'c'.*padding.*1\.5"):
        g.conv_fprop(x, w, padding=[1.5, 1], name="c")


def test_conv_geometry_accepts_numpy_integers() -> None:
    g = _g()
    x, w = g.tensor(dim=[1, 2, 5, 5]), g.tensor(dim=[3, 2, 3, 3])
    y = g.conv_fprop(x, w, padding=np.int64(1), stride=np.array([1, 1]),
                     dilation=(np.int32(1), 1))
    assert y.dim == (1, 3, 5, 5)


def test_conv_node_made_directly_checks_ints_and_groups() -> None:
    from hipdnn.ir.nodes import ConvFpropNode

    with pytest.raises(ValidationError, match=r"node 'n'.*stride.*2\.0"):
        ConvFpropNode("n", stride=[2.0, 2])
    with pytest.raises(ValidationError, match=r"node 'n'.*groups.*>= 1"):
        ConvFpropNode("n", groups=0)


# -- enums --------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["nope", 999, -1, 1.0, True])
def test_tensor_data_type_rejects_unknown_values(bad: Any) -> None:
    with pytest.raises(ValidationError) as info:
        _g().tensor(dim=[1, 1, 1, 1], data_type=bad, name="x")
    msg = str(info.value)
    assert "tensor 'x'" in msg and "FLOAT" in msg and "HALF" in msg
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("arg", ["io_data_type", "intermediate_data_type", "compute_data_type"])
def test_graph_data_types_reject_unknown_values(arg: str) -> None:
    with pytest.raises(ValidationError, match=rf"{arg}.*'nope'.*FLOAT"):
        hipdnn.Graph(**{arg: "nope"})
    with pytest.raises(ValidationError, match=rf"{arg}.*999"):
        getattr(_g(), f"set_{arg}")(999)


def test_node_compute_data_type_is_checked() -> None:
    g = _g()
    x = g.tensor(dim=[1, 1, 2, 2])
    with pytest.raises(ValidationError, match=r"node 'r'.*compute_data_type.*'nope'"):
        g.relu(x, compute_data_type="nope", name="r")


@pytest.mark.parametrize("bad", [12345, "nope", 2.0, None])
def test_pointwise_rejects_unknown_modes(bad: Any) -> None:
    g = _g()
    x = g.tensor(dim=[1, 1, 2, 2])
    with pytest.raises(ValidationError) as info:
        g.pointwise(bad, x, name="p")
    msg = str(info.value)
    assert "node 'p'" in msg and "pointwise mode" in msg and "RELU_FWD (34)" in msg
    assert not isinstance(info.value, KeyError)


def test_pointwise_accepts_names_values_and_members() -> None:
    g = _g()
    x = g.tensor(dim=[1, 1, 2, 2])
    for mode in ("relu_fwd", "RELU_FWD", 34, PointwiseMode.RELU_FWD, np.int64(34)):
        g.pointwise(mode, x)
        assert g.nodes[-1].mode is PointwiseMode.RELU_FWD  # type: ignore[attr-defined]


@pytest.mark.parametrize("bad", ["nope", 7, 1.0])
def test_conv_mode_rejects_unknown_values(bad: Any) -> None:
    g = _g()
    x, w = g.tensor(dim=[1, 2, 5, 5]), g.tensor(dim=[3, 2, 3, 3])
    with pytest.raises(ValidationError, match=r"node 'c'.*convolution_mode.*CROSS_CORRELATION"):
        g.conv_fprop(x, w, convolution_mode=bad, name="c")
    g.conv_fprop(x, w, convolution_mode="cross_correlation")
    assert g.nodes[-1].convolution_mode is ConvolutionMode.CROSS_CORRELATION  # type: ignore[attr-defined]


@pytest.mark.parametrize("cls", [DataType, PointwiseMode, ConvolutionMode, HeurMode,
                                 BuildPlanPolicy, KnobValueType])
def test_to_enum_lists_every_member(cls: Any) -> None:
    with pytest.raises(ValidationError) as info:
        to_enum(cls, "definitely_not_a_member", "thing")
    msg = str(info.value)
    assert all(m.name in msg for m in cls)
    first = next(iter(cls))
    assert to_enum(cls, first.name.lower(), "thing") is first
    assert to_enum(cls, int(first), "thing") is first
    assert to_enum(cls, f"{cls.__name__}.{first.name}", "thing") is first


def test_to_data_type_still_takes_dtypes() -> None:
    assert to_data_type(np.float16) is DataType.HALF
    assert to_data_type(np.dtype("float32")) is DataType.FLOAT
    assert to_data_type(2) is DataType.HALF
    with pytest.raises(ValidationError, match="DataType"):
        to_data_type(3.0)


def test_to_int_helpers() -> None:
    assert to_int(np.uint16(5), "n") == 5
    with pytest.raises(ValidationError, match=r"n: 5\.0 \(float\)"):
        to_int(5.0, "n")
    with pytest.raises(ValidationError, match="n: -1 is out of range; n takes an integer >= 0"):
        to_int(-1, "n", minimum=0)
    assert to_int_tuple(range(3), "r") == (0, 1, 2)


# -- scalar attributes ---------------------------------------------------------------------------
def _bn_inputs(g: hipdnn.Graph) -> tuple[Any, Any, Any]:
    return g.tensor(dim=[2, 3, 4, 4]), g.tensor(dim=[1, 3, 1, 1]), g.tensor(dim=[1, 3, 1, 1])


def test_batchnorm_without_epsilon_names_the_node() -> None:
    g = _g()
    x, s, b = _bn_inputs(g)
    with pytest.raises(ValidationError, match=r"^node 'bn': epsilon is required"):
        g.batchnorm(x, s, b, name="bn")
    with pytest.raises(ValidationError, match=r"^node 'batchnorm_\d+': epsilon is required"):
        g.batchnorm(input=x, scale=s, bias=b)


@pytest.mark.parametrize("eps", [0.0, -1e-5, math.nan, math.inf])
def test_batchnorm_epsilon_must_be_positive_and_finite(eps: float) -> None:
    g = _g()
    x, s, b = _bn_inputs(g)
    with pytest.raises(ValidationError, match=r"node 'bn'.*epsilon.*(nan|inf|0\.0|1e-05).*"
                                              r"\(0\.0, inf\)"):
        g.batchnorm(x, s, b, eps, name="bn")
    with pytest.raises(ValidationError, match=r"node 'bi'.*epsilon"):
        g.batchnorm_inference(x, s, scale=s, bias=b, variance=b, epsilon=eps, name="bi")


@pytest.mark.parametrize("mom", [-0.1, 1.5, math.nan, -math.inf])
def test_batchnorm_momentum_must_be_in_unit_interval(mom: float) -> None:
    g = _g()
    x, s, b = _bn_inputs(g)
    rm, rv = g.tensor(dim=[1, 3, 1, 1]), g.tensor(dim=[1, 3, 1, 1])
    with pytest.raises(ValidationError, match=r"node 'bn'.*momentum.*\[0\.0, 1\.0\]"):
        g.batchnorm(x, s, b, 1e-5, momentum=mom, in_running_mean=rm, in_running_var=rv,
                    name="bn")


@pytest.mark.parametrize("mom", [0.0, 1.0, np.float32(0.1)], ids=["0", "1", "f32_0.1"])
def test_batchnorm_edge_values_are_accepted(mom: Any) -> None:
    """Momentum 0 and 1 and numpy scalars are accepted and mean what PyTorch means: the next
    running statistics are (1 - momentum) * running + momentum * batch (unbiased variance)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    xv = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    sv, bv = rng.random((1, 3, 1, 1)).astype(np.float32) + 0.5, rng.standard_normal((1, 3, 1, 1)).astype(np.float32)
    rmv, rvv = rng.standard_normal((1, 3, 1, 1)).astype(np.float32), rng.random((1, 3, 1, 1)).astype(np.float32) + 0.5
    g = _g()
    x, s, b = _bn_inputs(g)
    rm, rv = g.tensor(dim=[1, 3, 1, 1]), g.tensor(dim=[1, 3, 1, 1])
    y, _, _, nrm, nrv = g.batchnorm(x, s, b, np.float64(1e-5), momentum=mom, in_running_mean=rm,
                                    in_running_var=rv)
    outs = {t: np.full((2, 3, 4, 4) if t is y else (1, 3, 1, 1), np.nan, np.float32) for t in (y, nrm, nrv)}
    for t in outs:
        t.set_output(True)
    g.build()
    ws = g.get_workspace_size()
    g.execute({x: xv, s: sv, b: bv, rm: rmv, rv: rvv, **outs}, np.zeros(ws, np.uint8) if ws else None)
    trm, trv = torch.from_numpy(rmv.reshape(3).copy()), torch.from_numpy(rvv.reshape(3).copy())
    want = torch.nn.functional.batch_norm(torch.from_numpy(xv), trm, trv, torch.from_numpy(sv.reshape(3)),
                                          torch.from_numpy(bv.reshape(3)), True, float(mom), 1e-5)
    np.testing.assert_allclose(outs[y], want.numpy(), atol=4e-3, rtol=4e-3)
    np.testing.assert_allclose(outs[nrm].reshape(3), trm.numpy(), atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(outs[nrv].reshape(3), trv.numpy(), atol=1e-5, rtol=1e-5)


def test_baked_scalar_tensor_is_checked_when_node_is_made_and_at_validate() -> None:
    g = _g()
    x, s, b = _bn_inputs(g)
    bad = g.tensor(dim=[1, 1, 1, 1], is_pass_by_value=True, value=-1.0, name="eps")
    with pytest.raises(ValidationError, match=r"node 'bn'.*tensor 'eps'.*epsilon.*-1\.0"):
        g.batchnorm(x, s, b, bad, name="bn")
    g2 = _g()
    x, s, b = _bn_inputs(g2)
    eps = g2.tensor(dim=[1, 1, 1, 1], is_pass_by_value=True, value=1e-5, name="eps")
    y = g2.batchnorm(x, s, b, eps, name="bn")[0]
    assert y is not None
    y.set_output(True)
    eps.set_value(0.0)  # edited after the node was made: validate catches it
    with pytest.raises(ValidationError, match=r"node 'bn'.*tensor 'eps'.*epsilon: 0\.0"):
        g2.validate()


@pytest.mark.parametrize(("kw", "value"), [
    ("lower_clip", math.nan), ("upper_clip", math.inf), ("upper_clip", math.nan),
    ("lower_clip", -math.inf), ("negative_slope", math.nan), ("negative_slope", math.inf)])
def test_relu_rejects_non_finite_attributes(kw: str, value: float) -> None:
    g = _g()
    x = g.tensor(dim=[1, 1, 2, 2])
    with pytest.raises(ValidationError, match=r"node 'r'.*(clip|slope).*finite"):
        g.relu(x, **{kw: value}, name="r")


def test_relu_lower_clip_above_upper_clip_is_rejected_when_made() -> None:
    g = _g()
    x = g.tensor(dim=[1, 1, 2, 2])
    with pytest.raises(ValidationError, match=r"node 'r'.*relu_upper_clip 1\.0 is below "
                                              r"relu_lower_clip 2\.0"):
        g.relu(x, lower_clip=2.0, upper_clip=1.0, name="r")
    y = g.relu(x, lower_clip=1.0, upper_clip=1.0)  # equal clips: a constant, allowed
    assert y.dim == (1, 1, 2, 2)


def test_pointwise_float_attributes_must_be_finite() -> None:
    g = _g()
    x = g.tensor(dim=[1, 1, 2, 2])
    for kw in ("swish_beta", "elu_alpha", "softplus_beta"):
        with pytest.raises(ValidationError, match=rf"node 'p'.*{kw}.*nan"):
            g.pointwise(PointwiseMode.SWISH_FWD, x, **{kw: math.nan}, name="p")
    with pytest.raises(ValidationError, match=r"node 'p'.*swish_beta.*'big'"):
        g.pointwise(PointwiseMode.SWISH_FWD, x, swish_beta="big", name="p")  # type: ignore[arg-type]


def test_check_float_ranges() -> None:
    assert check_float(None, "a") is None
    assert check_float(np.float16(0.5), "a", low=0.0, high=1.0) == 0.5
    with pytest.raises(ValidationError, match=r"a: 0\.0 is out of range; a takes a finite "
                                              r"number in \(0\.0, inf\)"):
        check_float(0.0, "a", low=0.0, low_open=True)
    with pytest.raises(ValidationError, match="not a number"):
        check_float(True, "a")


# -- execute-time checks: workspace contiguity, scalars given in the variant pack ----------------
def _bn_variance_graph() -> tuple[hipdnn.Graph, dict[str, Any]]:
    g = _g()
    t = {k: g.tensor(dim=[1, 3, 1, 1], name=k) for k in ("mean", "var", "scale", "bias")}
    t["x"] = g.tensor(dim=[2, 3, 4, 4], name="x")
    t["eps"] = g.tensor(dim=[1, 1, 1, 1], is_pass_by_value=True, name="eps")
    t["y"] = g.batchnorm_inference(t["x"], t["mean"], scale=t["scale"], bias=t["bias"],
                                   variance=t["var"], epsilon=t["eps"], name="bn")
    t["y"].set_output(True)
    return g, t


def _bn_pack(t: dict[str, Any], eps: Any) -> dict[Any, Any]:
    rng = np.random.default_rng(0)
    pack: dict[Any, Any] = {t[k]: rng.standard_normal((1, 3, 1, 1)).astype(np.float32)
                            for k in ("mean", "scale", "bias")}
    pack[t["var"]] = np.ones((1, 3, 1, 1), np.float32)
    pack[t["x"]] = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    pack[t["y"]] = np.empty((2, 3, 4, 4), np.float32)
    pack[t["eps"]] = eps
    return pack


@pytest.mark.parametrize("eps", [0.0, -1e-3, math.nan, np.full((1, 1, 1, 1), -2.0, np.float32)])
def test_epsilon_given_at_execute_is_checked(eps: Any) -> None:
    from fake_engine import only_fake_engines

    from hipdnn.core.errors import VariantPackError

    with only_fake_engines():
        g, t = _bn_variance_graph()
        g.build()
        with pytest.raises(VariantPackError, match=r"node 'bn'.*tensor 'eps'.*epsilon.*"
                                                   r"\(0\.0, inf\)") as info:
            g.execute(_bn_pack(t, eps))
        assert info.value.tensor == "eps"
        with pytest.raises(VariantPackError, match="epsilon"):
            g.bind(_bn_pack(t, eps))
        pack = _bn_pack(t, 1e-3)
        g.execute(pack)  # a valid value runs
        x, m, v = pack[t["x"]], pack[t["mean"]], pack[t["var"]]
        ref = (x - m) / np.sqrt(v + 1e-3) * pack[t["scale"]] + pack[t["bias"]]
        np.testing.assert_allclose(pack[t["y"]], ref, rtol=1e-5, atol=1e-5)


def test_momentum_given_at_execute_is_checked() -> None:
    from hipdnn.core.errors import VariantPackError

    g = _g()
    x = g.tensor(dim=[2, 3, 4, 4], name="x")
    s, b, rm, rv = (g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("s", "b", "rm", "rv"))
    mom = g.tensor(dim=[1, 1, 1, 1], is_pass_by_value=True, name="mom")
    outs = g.batchnorm(x, s, b, 1e-5, momentum=mom, in_running_mean=rm, in_running_var=rv,
                       name="bn")
    for o in outs:
        assert o is not None
        o.set_output(True)
    g.build()
    pack: dict[Any, Any] = {x: np.ones((2, 3, 4, 4), np.float32), mom: 1.5}
    pack.update({t: np.ones((1, 3, 1, 1), np.float32) for t in (s, b, rm, rv)})
    pack.update({o: np.empty(o.dim, np.float32) for o in outs if o is not None})
    with pytest.raises(VariantPackError, match=r"node 'bn'.*tensor 'mom'.*momentum: 1\.5.*"
                                               r"\[0\.0, 1\.0\]"):
        g.execute(pack)
    pack[mom] = 0.25
    g.execute(pack)


def _ws_graph() -> tuple[hipdnn.Graph, dict[Any, Any]]:
    g = _g()
    x = g.tensor(dim=[1, 2, 3, 3], name="x")
    y = g.relu(x, name="relu").set_output(True)
    g.build_operation_graph()
    g.create_execution_plan("FAKE_TEST_ENGINE", {"fake.workspace": 256})
    g.build_plans()
    assert g.get_workspace_size() == 256
    xs = np.linspace(-1, 1, 18, dtype=np.float32).reshape(1, 2, 3, 3)
    return g, {x: xs, y: np.empty_like(xs)}


@pytest.mark.parametrize("make", [
    lambda: np.empty(128, np.float32)[::2],          # 256 bytes of data spread over 508
    lambda: np.empty(64, np.float32)[::-1],          # starts at its highest address
    lambda: np.empty((32, 4), np.float32)[:, :2],    # rows with gaps
])
def test_non_contiguous_workspace_is_rejected(make: Any) -> None:
    from fake_engine import only_fake_engines

    from hipdnn.core.errors import WorkspaceError

    with only_fake_engines():
        g, pack = _ws_graph()
        with pytest.raises(WorkspaceError, match="workspace must be one contiguous block"):
            g.execute(pack, make())
        with pytest.raises(WorkspaceError, match="contiguous"):
            g.bind(pack, make())


def test_contiguous_workspaces_are_accepted() -> None:
    from fake_engine import only_fake_engines

    from hipdnn.core.errors import WorkspaceError

    with only_fake_engines():
        g, pack = _ws_graph()
        xs, ys = pack.values()
        for ws in (np.empty(256, np.uint8), np.empty((8, 8), np.float32, order="F"),
                   np.empty(1024, np.uint8)[100:400]):
            ys[:] = 7
            g.execute(pack, ws)
            np.testing.assert_array_equal(ys, np.maximum(xs, 0))
        with pytest.raises(WorkspaceError, match="smaller"):
            g.execute(pack, np.empty(255, np.uint8))
