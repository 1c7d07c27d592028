"""The frontend Graph's settings, validation, pipeline order and serialization, with upstream's
return conventions: Error values that are bad with a message naming the problem, never a
silent success; the graph is one native hipdnn.Graph."""

from __future__ import annotations

import json
from typing import Any

import pytest

import hipdnn
import hipdnn.frontend as fe

FLOAT = fe.DataType.FLOAT


def float_graph() -> fe.Graph:
    return (fe.Graph().set_io_data_type(FLOAT).set_intermediate_data_type(FLOAT)
            .set_compute_data_type(FLOAT))


def add_graph(dim_a: list[int], dim_b: list[int]) -> tuple[fe.Graph, fe.Tensor]:
    g = float_graph()
    a = fe.Tensor.create(dim_a, FLOAT).set_name("a")
    b = fe.Tensor.create(dim_b, FLOAT).set_name("b")
    out = g.pointwise(a, b, fe.PointwiseAttributes().set_name("add").set_mode(fe.PointwiseMode.ADD))
    out.set_name("out").set_output(True)
    return g, out


def conv_graph(**attrs: list[int]) -> fe.Graph:
    g = float_graph().set_name("conv")
    x = fe.Tensor.create([1, 2, 8, 8], FLOAT).set_name("x")
    w = fe.Tensor.create([4, 2, 3, 3], FLOAT).set_name("w")
    a = fe.ConvFpropAttributes().set_name("conv")
    for field, value in {"padding": [1, 1], "stride": [1, 1], "dilation": [1, 1], **attrs}.items():
        getattr(a, f"set_{field}")(value)
    g.conv_fprop(x, w, a).set_output(True)
    return g


def test_settings_chain_and_read_back() -> None:
    g = fe.Graph()
    assert g.get_name() == "" and g.get_io_data_type() == fe.DataType.NOT_SET
    same = (g.set_name("chained").set_io_data_type(fe.DataType.HALF)
            .set_compute_data_type(FLOAT).set_intermediate_data_type(FLOAT))
    assert same is g and g.get_name() == "chained"
    assert g.get_io_data_type() == fe.DataType.HALF and g.get_compute_data_type() == FLOAT
    assert g.get_intermediate_data_type() == FLOAT
    assert isinstance(g.native, hipdnn.Graph) and g.native.name == "chained"


def test_graph_is_one_native_graph() -> None:
    g, out = add_graph([2, 3], [2, 3])
    assert g.validate().is_good()
    assert out in g.native.all_tensors and out.graph is g.native and out.has_uid()
    assert [n.op for n in g.native.nodes] == ["pointwise"]
    assert isinstance(out, fe.Tensor)


def test_valid_graph_and_shape_errors() -> None:
    g, _ = add_graph([8, 16], [8, 16])
    assert g.validate().is_good()
    err = add_graph([8, 16], [4, 4])[0].validate()
    assert err.is_bad() and err.get_code() == fe.ErrorCode.INVALID_VALUE and err.get_message()


def test_missing_dims_and_duplicate_uids_fail_validation() -> None:
    g = float_graph()
    a = fe.Tensor().set_name("a")
    b = fe.Tensor.create([8, 16], FLOAT).set_name("b")
    g.pointwise(a, b, fe.PointwiseAttributes().set_mode(fe.PointwiseMode.ADD)).set_output(True)
    err = g.validate()
    assert err.is_bad() and "'a'" in err.get_message()
    g = float_graph()
    a = fe.Tensor.create([8, 16], FLOAT).set_uid(1)
    b = fe.Tensor.create([8, 16], FLOAT).set_uid(1)
    g.pointwise(a, b, fe.PointwiseAttributes().set_mode(fe.PointwiseMode.ADD)).set_output(True)
    err = g.validate()
    assert err.is_bad() and "uid" in err.get_message()


@pytest.mark.parametrize("field", ["stride", "dilation"])
def test_conv_without_stride_or_dilation_is_attribute_not_set(field: str) -> None:
    g = float_graph()
    x = fe.Tensor.create([1, 2, 8, 8], FLOAT)
    w = fe.Tensor.create([4, 2, 3, 3], FLOAT)
    a = fe.ConvFpropAttributes().set_padding([1, 1])
    getattr(a, f"set_{'dilation' if field == 'stride' else 'stride'}")([1, 1])
    g.conv_fprop(x, w, a).set_output(True)
    err = g.validate()
    assert err.get_code() == fe.ErrorCode.ATTRIBUTE_NOT_SET and field in err.get_message()
    # every later step reports it too: no silent success
    assert g.build_operation_graph(fe.create_handle()).get_code() == fe.ErrorCode.ATTRIBUTE_NOT_SET


def test_refused_op_is_reported_by_validate_not_raised() -> None:
    """An op the native graph refuses while it is added (no epsilon) returns placeholder tensors;
    validate() returns the refusal, as upstream records the op and fails validation."""
    g = float_graph()
    x = fe.Tensor.create([2, 3, 4, 4], FLOAT)
    s, b = fe.Tensor.create([1, 3, 1, 1], FLOAT), fe.Tensor.create([1, 3, 1, 1], FLOAT)
    y, *_ = g.batchnorm(x, s, b, fe.BatchnormAttributes())
    assert isinstance(y, fe.Tensor)
    err = g.validate()
    assert err.is_bad() and "epsilon" in err.get_message()


def test_wrong_types_raise_type_error() -> None:
    g = float_graph()
    x = fe.Tensor.create([1, 2, 8, 8], FLOAT)
    with pytest.raises(TypeError, match="ConvFpropAttributes"):
        g.conv_fprop(x, x, fe.ConvDgradAttributes())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Tensor"):
        g.conv_fprop(x, [4, 2, 3, 3], fe.ConvFpropAttributes())  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        g.pointwise(x)
    with pytest.raises(TypeError):
        g.pointwise(x, x, x, x, fe.PointwiseAttributes())


def test_steps_out_of_order_return_bad_errors() -> None:
    g = conv_graph()
    handle = fe.create_handle()
    for step, missing in [(g.create_execution_plans, "build_operation_graph"),
                          (g.check_support, "create_execution_plans"),
                          (g.build_plans, "create_execution_plans"),
                          (lambda: g.execute(handle, {}, 0), "build_plans")]:
        err = step()
        assert err.is_bad() and missing in err.get_message(), (step, err)
    with pytest.raises(RuntimeError):
        g.get_workspace_size()
    with pytest.raises(RuntimeError, match="out of bounds"):
        g.get_plan_name()
    with pytest.raises(RuntimeError):
        g.get_ranked_engine_ids()
    assert g.validate().is_good() and g.build_operation_graph(handle).is_good()
    assert g.create_execution_plans().is_good() and g.check_support().is_good()
    assert g.build_plans().is_good() and g.get_workspace_size() == 0
    assert g.get_execution_plan_count() == 1
    # changing the graph needs a new operation graph
    g.pointwise(fe.Tensor.create([1], FLOAT), fe.PointwiseAttributes()
                .set_mode(fe.PointwiseMode.IDENTITY))
    assert g.build_plans().is_bad()


def test_missing_variant_pack_entry_and_small_buffer() -> None:
    g, out = add_graph([2, 3], [2, 3])
    handle = fe.create_handle()
    for step in (g.validate, lambda: g.build_operation_graph(handle),
                 g.create_execution_plans, g.check_support, g.build_plans):
        assert step().is_good()
    a, b = (t for t in g.native.all_tensors if t.name in ("a", "b"))
    buf = fe.DeviceBuffer(24)
    err = g.execute(handle, {a.get_uid(): buf.ptr()}, 0)
    assert err.get_code() == fe.ErrorCode.INVALID_VARIANT_PACK and "missing" in err.get_message()
    small = fe.DeviceBuffer(8)
    err = g.execute(handle, {a.get_uid(): buf.ptr(), b.get_uid(): small.ptr(),
                             out.get_uid(): buf.ptr()}, 0)
    assert err.get_code() == fe.ErrorCode.INVALID_VARIANT_PACK and "8 bytes" in err.get_message()
    with pytest.raises(ValueError, match="has no uid"):
        g.execute(handle, {fe.Tensor(): buf}, 0)
    # an int outside any DeviceBuffer is a device pointer: the host engine refuses it (no crash)
    full = {a.get_uid(): buf.ptr(), b.get_uid(): buf.ptr(), out.get_uid(): buf.ptr()}
    for stray in (1, 0):
        err = g.execute(handle, {**full, b.get_uid(): stray}, 0)
        assert err.get_code() == fe.ErrorCode.INVALID_VARIANT_PACK, err
    destroyed = fe.create_handle()
    fe.destroy_handle(destroyed)
    with pytest.raises(RuntimeError, match="destroyed"):
        g.execute(destroyed, {}, 0)


def test_json_roundtrip_with_upstream_type_tags() -> None:
    g = conv_graph()
    assert g.validate().is_good()
    text = g.to_json()
    assert [n["type"] for n in json.loads(text)["nodes"]] == ["ConvolutionFwdAttributes"]
    restored = fe.Graph()
    assert restored.from_json(text).is_good()
    assert restored.to_json() == text and restored.to_binary() == g.to_binary()
    assert restored.get_name() == "conv" and isinstance(restored.native.all_tensors[0], fe.Tensor)


def test_binary_roundtrip_and_with_handle() -> None:
    g, _ = add_graph([2, 3], [2, 3])
    assert g.validate().is_good()
    data = g.to_binary()
    assert isinstance(data, bytes) and data
    restored = fe.Graph()
    assert restored.from_binary(data).is_good() and restored.to_binary() == data
    handle = fe.create_handle()
    again = fe.Graph()
    assert again.from_binary(handle, data).is_good()
    assert again.create_execution_plans().is_good()  # finalized: plans may follow at once
    assert fe.Graph().from_json(handle, g.to_json()).is_good()


@pytest.mark.parametrize("bad, code", [
    (b"\x08\x00\x00\x00flatbuffer", fe.ErrorCode.UNSUPPORTED_GRAPH_FORMAT),
    (b"HIPDNN-PY-GRAPH\x01garbage", fe.ErrorCode.UNSUPPORTED_GRAPH_FORMAT),
])
def test_unreadable_binary_is_a_bad_error(bad: bytes, code: fe.ErrorCode) -> None:
    err = fe.Graph().from_binary(bad)
    assert err.get_code() == code and err.get_message()


def test_unreadable_json_is_a_bad_error() -> None:
    assert fe.Graph().from_json("{not json").get_code() == fe.ErrorCode.UNSUPPORTED_GRAPH_FORMAT
    assert fe.Graph().from_json('{"nodes": []}').is_bad()
    with pytest.raises(TypeError):
        fe.Graph().from_json(3)  # type: ignore[arg-type]


def test_error_objects() -> None:
    ok = fe.Error()
    assert ok.is_good() and not ok.is_bad() and ok.get_code() == fe.ErrorCode.OK
    bad = fe.Error(fe.ErrorCode.GRAPH_NOT_SUPPORTED, "sentinel")
    assert bad.is_bad() and bad.get_message() == "sentinel" and bad.err_msg == "sentinel"
    for code in fe.ErrorCode:
        assert fe.Error(code, "x").get_code() == code
    with pytest.raises(TypeError, match="is_good"):
        bool(bad)


@pytest.mark.parametrize("name", ["ReductionMode", "ResampleMode", "PaddingMode", "NormFwdPhase",
                                  "DiagonalAlignment", "AttentionImplementation",
                                  "MoeGroupedMatmulMode", "HeuristicMode", "BuildPlanPolicy",
                                  "KnobValueType", "BehaviorNote", "PluginLoadingMode"])
def test_upstream_enums_exist(name: str) -> None:
    members: Any = getattr(fe, name)
    assert len(members) >= 1


def test_top_level_reexports_are_the_frontend_objects() -> None:
    for name in sorted(hipdnn.FRONTEND_EXPORTS):
        assert getattr(hipdnn, name) is getattr(fe, name), name
        assert name in hipdnn.__all__
    # different conventions stay apart: hipdnn.Graph is the native graph
    assert hipdnn.Graph is not fe.Graph and issubclass(fe.Tensor, hipdnn.Tensor)
    assert issubclass(fe.Handle, hipdnn.Handle) and hipdnn.frontend is fe
    with pytest.raises(AttributeError):
        hipdnn.NoSuchName  # noqa: B018


@pytest.mark.parametrize("module", ["__init__", "_attributes", "_errors", "_graph", "_handle",
                                    "_memory", "_tensor"])
def test_docstring_examples(module: str) -> None:
    import doctest
    import importlib

    mod = importlib.import_module("hipdnn.frontend" if module == "__init__"
                                  else f"hipdnn.frontend.{module}")
    result = doctest.testmod(mod)
    assert result.attempted > 0 and result.failed == 0


def test_refused_single_output_op_returns_one_tensor() -> None:
    g = float_graph()
    a = fe.Tensor.create([2, 3], FLOAT)
    y = g.pointwise(a, a, fe.PointwiseAttributes().set_mode(fe.PointwiseMode.RELU_FWD))
    assert isinstance(y, fe.Tensor) and y.set_output(True) is y
    err = g.validate()
    assert err.is_bad() and "IN_1" in err.get_message()


def test_tensor_of_another_graph_is_reported() -> None:
    a = fe.Tensor.create([2, 3], FLOAT)
    first, second = float_graph(), float_graph()
    relu = fe.PointwiseAttributes().set_mode(fe.PointwiseMode.RELU_FWD)
    first.pointwise(a, relu).set_output(True)
    second.pointwise(a, relu).set_output(True)
    assert first.validate().is_good()
    err = second.validate()
    assert err.is_bad() and "another graph" in err.get_message()


def _one_node_graphs() -> list[tuple[str, Any]]:
    def t(*dims: int) -> fe.Tensor:
        return fe.Tensor.create(list(dims), FLOAT)

    def eps() -> fe.Tensor:
        return fe.Tensor().set_value(1e-5)

    def conv(cls: Any) -> Any:
        return cls().set_padding([1, 1]).set_stride([1, 1]).set_dilation([1, 1])

    def build(fn: Any) -> Any:
        def make() -> fe.Graph:
            g = float_graph().set_name("one")
            out = fn(g)
            for o in out if isinstance(out, tuple) else (out,):
                if o is not None:
                    o.set_output(True)
            return g
        return make

    return [
        ("PointwiseAttributes", build(lambda g: g.pointwise(
            t(2, 3), t(2, 3), fe.PointwiseAttributes().set_mode(fe.PointwiseMode.ADD)))),
        ("ConvolutionFwdAttributes", build(lambda g: g.conv_fprop(
            t(1, 2, 5, 5), t(3, 2, 3, 3), conv(fe.ConvFpropAttributes)))),
        ("ConvolutionBwdAttributes", build(lambda g: g.conv_dgrad(
            t(1, 3, 5, 5), t(3, 2, 3, 3), conv(fe.ConvDgradAttributes)).set_dim([1, 2, 5, 5]))),
        ("ConvolutionWrwAttributes", build(lambda g: g.conv_wgrad(
            t(1, 3, 5, 5), t(1, 2, 5, 5), conv(fe.ConvWgradAttributes)).set_dim([3, 2, 3, 3]))),
        ("BatchnormAttributes", build(lambda g: g.batchnorm(
            t(2, 3, 4, 4), t(1, 3, 1, 1), t(1, 3, 1, 1),
            fe.BatchnormAttributes().set_epsilon(eps()))[:3])),
        ("BatchnormBackwardAttributes", build(lambda g: g.batchnorm_backward(
            t(2, 3, 4, 4), t(2, 3, 4, 4), t(1, 3, 1, 1), fe.BatchnormBackwardAttributes()))),
        ("BatchnormInferenceAttributes", build(lambda g: g.batchnorm_inference(
            t(2, 3, 4, 4), t(1, 3, 1, 1), t(1, 3, 1, 1), t(1, 3, 1, 1), t(1, 3, 1, 1),
            fe.BatchnormInferenceAttributes()))),
        ("BatchnormInferenceAttributesVarianceExt", build(lambda g: g.batchnorm_inference_variance_ext(
            t(2, 3, 4, 4), t(1, 3, 1, 1), t(1, 3, 1, 1), t(1, 3, 1, 1), t(1, 3, 1, 1), eps(),
            fe.BatchnormInferenceAttributesVarianceExt()))),
    ]


@pytest.mark.parametrize("tag, make", _one_node_graphs(), ids=[n for n, _ in _one_node_graphs()])
def test_every_op_round_trips_through_json_and_binary(tag: str, make: Any) -> None:
    g = make()
    assert g.validate().is_good()
    text, data = g.to_json(), g.to_binary()
    assert [n["type"] for n in json.loads(text)["nodes"]] == [tag]
    from_text, from_data = fe.Graph(), fe.Graph()
    assert from_text.from_json(text).is_good() and from_data.from_binary(data).is_good()
    for restored in (from_text, from_data):
        assert restored.to_json() == text and restored.to_binary() == data


def test_graph_copies_and_pickles_are_unbuilt_graphs_of_the_same_structure() -> None:
    # deepcopy and pickle of a built graph failed on its plans ("cannot pickle 'mappingproxy'
    # object"); they follow the native graph's rule: structure and settings, never the plans
    import copy
    import pickle

    import numpy as np

    g, out = add_graph([2, 3], [2, 3])
    a, b = (t for t in g.native.all_tensors if t.name in ("a", "b"))
    handle = fe.create_handle()
    steps = ("validate", "build_operation_graph", "create_execution_plans", "check_support",
             "build_plans")

    def build(graph: fe.Graph) -> None:
        for step in steps:
            result = graph.build_operation_graph(handle) if step == "build_operation_graph" \
                else getattr(graph, step)()
            assert result.is_good(), result.get_message()

    build(g)
    av, bv = np.ones((2, 3), np.float32), np.full((2, 3), 2.0, np.float32)
    copies = [copy.deepcopy((g, a, b, out)), pickle.loads(pickle.dumps((g, a, b, out))),
              (copy.copy(g), a, b, out)]
    for g2, a2, b2, out2 in copies:
        assert g2.native is not g.native
        result = np.zeros((2, 3), np.float32)
        pack = {a2.get_uid(): av, b2.get_uid(): bv, out2.get_uid(): result}
        assert not g2.execute(handle, pack, 0).is_good()  # unbuilt: plans are never copied
        build(g2)
        assert g2.execute(handle, pack, 0).is_good()
        assert (result == 3.0).all()
    fe.destroy_handle(handle)
