"""Issue 9, defects 7 and 8: every bad argument the adversarial run found gives a typed error.

Defect 7: 14 inputs raised bare Python exceptions (OverflowError, ValueError, RuntimeError,
KeyError, TypeError, IndexError, AttributeError, UnicodeDecodeError, RecursionError). Each now
raises a :class:`hipdnn.HipdnnError` subclass whose message names the argument and the valid
values (wrong types are :class:`hipdnn.ArgumentError`, also a TypeError; a plan index out of
range is :class:`hipdnn.PlanIndexError`, also an IndexError).

Defect 8: 7 inputs were silently accepted; each is now an error naming the argument and the
valid values, or (numpy-integer uids) accepted as everywhere else.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import hipdnn
from hipdnn import ArgumentError, HipdnnError, PlanIndexError

F32 = hipdnn.DataType.FLOAT
SENTINEL = -7.25
SHAPE = (2, 3, 4, 4)


def _relu(handle: hipdnn.Handle | None = None) -> tuple[hipdnn.Graph, Any, Any]:
    g = hipdnn.Graph(io_data_type=F32, handle=handle)
    x = g.tensor(dim=list(SHAPE), name="x")
    y = g.relu(x).set_output(True).set_name("y")
    g.build()
    return g, x, y


def _pack(x: Any, y: Any) -> tuple[dict[Any, Any], np.ndarray]:
    ys = np.full(SHAPE, SENTINEL, np.float32)
    return {x: np.linspace(-1, 1, 96, dtype=np.float32).reshape(SHAPE), y: ys}, ys


def _expect(call: Callable[[], object], cls: type[HipdnnError], *names: str) -> str:
    with pytest.raises(cls) as info:
        call()
    message = str(info.value)
    for name in names:
        assert name in message, (name, message)
    return message


class _NoData:
    __array_interface__ = {"shape": SHAPE, "typestr": "<f4", "version": 3}  # noqa: RUF012


# -- defect 7: the 14 bare exceptions -----------------------------------------------------------

def test_huge_stride_is_a_validation_error_not_overflow() -> None:
    g = hipdnn.Graph(io_data_type=F32)
    x = g.tensor(dim=[2, 1, 1, 1], stride=[2**62, 1, 1, 1], name="x")
    g.relu(x).set_output(True)
    _expect(g.build, hipdnn.ValidationError, "'x'", "2**63 - 1 bytes")


def test_memoryview_values_and_workspaces() -> None:
    g, x, y = _relu()
    pack, ys = _pack(x, y)
    for bad in (memoryview(bytearray(384)), memoryview(b"\0" * 384)):
        _expect(lambda b=bad: g.execute({**pack, x: b}), hipdnn.VariantPackError, "'x'",
                "accepted")
        _expect(lambda b=bad: g.execute({**pack, y: b}), hipdnn.VariantPackError, "'y'")
    assert (ys == SENTINEL).all()


def test_sparse_torch_tensor() -> None:
    torch = pytest.importorskip("torch")
    g, x, y = _relu()
    pack, ys = _pack(x, y)
    for bad in (torch.zeros(SHAPE).to_sparse(), torch.zeros(SHAPE).to_sparse_csr()
                if False else torch.zeros(SHAPE).to_sparse(2)):
        _expect(lambda b=bad: g.execute({**pack, x: b}), hipdnn.VariantPackError, "'x'",
                "torch.strided")
    assert (ys == SENTINEL).all()


@pytest.mark.parametrize("iface", [
    {"shape": SHAPE, "typestr": "<f4", "version": 3},  # no 'data'
    {"data": (4096, False), "typestr": "<f4"},  # no 'shape'
    {"shape": SHAPE, "data": (4096, False)},  # no 'typestr'
    {"shape": SHAPE, "typestr": "<f4", "data": "abc"},
    {"shape": SHAPE, "typestr": "<f4", "data": (None, False, 3)},
    {"shape": "abc", "typestr": "<f4", "data": (4096, False)},
    {"shape": (2, -3, 4, 4), "typestr": "<f4", "data": (4096, False)},
    {"shape": SHAPE, "typestr": "<f4", "data": (-5, False)},
    {"shape": SHAPE, "typestr": "<f4", "data": (4096, False), "strides": "x"},
    {"shape": SHAPE, "typestr": 5, "data": (4096, False)},
    [1, 2, 3],
])
def test_malformed_array_interface(iface: Any) -> None:
    g, x, y = _relu()
    pack, ys = _pack(x, y)
    obj = type("Iface", (), {"__array_interface__": iface})()
    _expect(lambda: g.execute({**pack, x: obj}), hipdnn.VariantPackError, "'x'",
            "__array_interface__")
    assert (ys == SENTINEL).all()


def test_array_interface_property_raising() -> None:
    class Broken:
        @property
        def __array_interface__(self) -> Any:
            raise RuntimeError("device lost")

    g, x, y = _relu()
    pack, ys = _pack(x, y)
    _expect(lambda: g.execute({**pack, x: Broken()}), hipdnn.VariantPackError, "'x'",
            "device lost")
    assert (ys == SENTINEL).all()


@pytest.mark.parametrize("settings", [5, 2.5, "global.benchmarking", b"x", object()])
def test_knob_settings_of_the_wrong_type(settings: Any) -> None:
    g = hipdnn.Graph(io_data_type=F32)
    x = g.tensor(dim=list(SHAPE), name="x")
    g.relu(x).set_output(True)
    g.build_operation_graph()
    _expect(lambda: g.create_execution_plan_ext("CPU_REFERENCE_ENGINE", settings),
            hipdnn.KnobError, "knob settings", "KnobSetting")


def test_single_knob_setting_is_read_as_a_setting() -> None:
    g = hipdnn.Graph(io_data_type=F32)
    x = g.tensor(dim=list(SHAPE), name="x")
    g.relu(x).set_output(True)
    g.build_operation_graph()
    _expect(lambda: g.create_execution_plan_ext("CPU_REFERENCE_ENGINE",
                                                hipdnn.KnobSetting("no.such", 1)),
            hipdnn.KnobError, "unknown knob 'no.such'", "CPU_REFERENCE_ENGINE")


@pytest.mark.parametrize("index", ["0", 0.0, None, True, [0]])
def test_plan_index_of_the_wrong_type(index: Any) -> None:
    g, x, y = _relu()
    pack, ys = _pack(x, y)
    msg = _expect(lambda: g.execute_plan_at_index(pack, None, index), ArgumentError,
                  "execute_plan_at_index", "0..0")
    assert "index" in msg
    _expect(lambda: g.build_plan_at_index(index), ArgumentError, "build_plan_at_index")
    for query in (g.get_plan_name_at_index, g.get_workspace_size_plan_at_index,
                  g.get_engine_and_knobs_at_index, g.select_plan):
        _expect(lambda q=query: q(index), ArgumentError, query.__name__)
    assert (ys == SENTINEL).all()
    assert issubclass(ArgumentError, TypeError)


@pytest.mark.parametrize("index", [1, 7, -1, -2, 2**70])
def test_plan_index_out_of_range(index: int) -> None:
    g, x, y = _relu()
    pack, ys = _pack(x, y)
    _expect(lambda: g.execute_plan_at_index(pack, None, index), PlanIndexError,
            "execute_plan_at_index", str(index), "0..0")
    _expect(lambda: g.build_plan_at_index(index), PlanIndexError, "build_plan_at_index",
            str(index))
    _expect(lambda: g.select_plan(index), PlanIndexError, "select_plan")
    assert (ys == SENTINEL).all()
    assert issubclass(PlanIndexError, IndexError) and issubclass(PlanIndexError,
                                                                 hipdnn.GraphStateError)
    g.execute_plan_at_index(pack, None, np.int64(0))  # numpy integers are fine
    assert (ys == np.maximum(pack[x], 0)).all()


@pytest.mark.parametrize("handle", ["str", 0, 1.5, object(), [None]])
def test_graph_handle_of_the_wrong_type(handle: Any) -> None:
    _expect(lambda: hipdnn.Graph(handle=handle), ArgumentError, "Graph handle",
            "hipdnn.Handle")
    g, x, y = _relu()
    pack, ys = _pack(x, y)
    for call in (lambda: g.execute(pack, handle=handle), lambda: g.bind(pack, handle=handle),
                 lambda: g.execute_plan_at_index(pack, None, 0, handle=handle),
                 lambda: g.autotune(pack, handle=handle),
                 lambda: g.build_operation_graph(handle)):
        _expect(call, ArgumentError, "handle", "hipdnn.Handle")
    assert (ys == SENTINEL).all()


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"iterations": "3"}, "iterations"), ({"iterations": 0}, "iterations"),
    ({"iterations": 2.5}, "iterations"), ({"warmup": "1"}, "warmup"),
    ({"warmup": -1}, "warmup"), ({"iterations": None}, "iterations"),
])
def test_autotune_counts(kwargs: dict[str, Any], name: str) -> None:
    g, x, y = _relu()
    pack, ys = _pack(x, y)
    _expect(lambda: g.autotune(pack, **kwargs), hipdnn.ValidationError, f"autotune {name}")
    assert (ys == SENTINEL).all()


@pytest.mark.parametrize(("text", "cls", "needle"), [
    (None, ArgumentError, "from_json"),
    (42, ArgumentError, "to_json()"),
    ({"format": "x"}, ArgumentError, "from_json"),
    (b"\xff\xfe\xfa", hipdnn.ValidationError, "UTF-8"),
    ("[" * 100_000 + "]" * 100_000, hipdnn.ValidationError, "nested too deeply"),
    ("{" + '"a":{' * 200_000 + "}" * 200_001, hipdnn.ValidationError, "nested too deeply"),
    ("", hipdnn.ValidationError, "not a JSON graph"),
    ("nul", hipdnn.ValidationError, "not a JSON graph"),
])
def test_from_json_bad_documents(text: Any, cls: type[HipdnnError], needle: str) -> None:
    _expect(lambda: hipdnn.Graph.from_json(text), cls, needle)


def test_from_json_accepts_utf8_bytes() -> None:
    g, _x, _y = _relu()
    again = hipdnn.Graph.from_json(g.to_json().encode())
    assert [t.name for t in again.all_tensors] == [t.name for t in g.all_tensors]


@pytest.mark.parametrize("device", ["gpu0", "0", 1.0, None, -1, True])
def test_handle_device(device: Any) -> None:
    _expect(lambda: hipdnn.Handle(device=device), hipdnn.ValidationError, "device", ">= 0")


@pytest.mark.parametrize("stream", ["s", 1.5, -4, b"\0", object()])
def test_handle_stream(stream: Any) -> None:
    _expect(lambda: hipdnn.Handle(stream=stream), hipdnn.ValidationError, "stream")
    with hipdnn.Handle() as h:
        _expect(lambda: h.set_stream(stream), hipdnn.ValidationError, "stream", "hipStream_t")
        assert h.get_stream() is None


def test_handle_numpy_integers_are_fine() -> None:
    with hipdnn.Handle(device=np.int64(0), stream=np.uint64(0x40)) as h:
        assert h.device == 0 and h.get_stream() == 0x40
        h.set_stream(0)
        assert h.get_stream() is None


# -- defect 8: silently accepted ------------------------------------------------------------

def test_negative_plan_index_no_longer_runs_the_last_plan() -> None:
    g, x, y = _relu()
    pack, ys = _pack(x, y)
    _expect(lambda: g.execute_plan_at_index(pack, None, -1), PlanIndexError, "-1", "0..0")
    assert (ys == SENTINEL).all()


def test_execute_with_a_str_handle() -> None:
    g, x, y = _relu()
    pack, ys = _pack(x, y)
    g.execute(pack)  # remembered binding for the default handle
    ys[:] = SENTINEL
    _expect(lambda: g.execute(pack, handle="str"), ArgumentError, "execute handle")
    assert (ys == SENTINEL).all()


def test_reference_engine_after_handle_close() -> None:
    h = hipdnn.Handle()
    g, x, y = _relu(h)
    pack, ys = _pack(x, y)
    g.execute(pack)  # remembered
    bound = g.bind(pack)
    ys[:] = SENTINEL
    h.close()
    for call in (lambda: g.execute(pack), bound, lambda: g.bind(pack),
                 lambda: g.execute_plan_at_index(pack, None, 0), lambda: g.autotune(pack)):
        _expect(call, hipdnn.PlanClosedError, "closed")
    assert (ys == SENTINEL).all()
    with hipdnn.Handle() as other:  # another, open handle still runs the graph
        g.execute(pack, handle=other)
    assert (ys == np.maximum(pack[x], 0)).all()


def test_graph_without_nodes() -> None:
    g = hipdnn.Graph(io_data_type=F32)
    _expect(g.build, hipdnn.ValidationError, "no nodes")
    g.tensor(dim=[1, 2], name="lonely")
    _expect(g.validate, hipdnn.ValidationError, "no nodes")


@pytest.mark.parametrize("compute", ["INT8", "INT32", "UINT8", "BOOLEAN", "FP8_E4M3"])
def test_integer_compute_type_on_float_data(compute: str) -> None:
    g = hipdnn.Graph(io_data_type=F32)
    x = g.tensor(dim=[1, 2, 5, 5], name="x")
    w = g.tensor(dim=[3, 2, 3, 3], name="w")
    g.conv_fprop(x, w, padding=[1, 1], compute_data_type=compute, name="conv").set_output(True)
    _expect(g.build, hipdnn.ValidationError, "'conv'", compute, "FLOAT, HALF")
    g = hipdnn.Graph(io_data_type=F32, compute_data_type=compute)
    x = g.tensor(dim=[1, 2, 5, 5], name="x")
    g.relu(x, name="act").set_output(True)
    _expect(g.build, hipdnn.ValidationError, "'act'", compute)


def test_int8_convolution_still_computes_in_int32() -> None:
    g = hipdnn.Graph(io_data_type=hipdnn.DataType.INT8, compute_data_type=hipdnn.DataType.INT32)
    x = g.tensor(dim=[1, 2, 3, 3], name="x")
    w = g.tensor(dim=[2, 2, 1, 1], name="w")
    y = g.conv_fprop(x, w).set_output(True).set_data_type(hipdnn.DataType.INT32)
    g.build()
    xs = np.arange(18, dtype=np.int8).reshape(1, 2, 3, 3)
    ws = np.array([1, 2, -1, 3], np.int8).reshape(2, 2, 1, 1)
    ys = np.zeros((1, 2, 3, 3), np.int32)
    g.execute({x: xs, w: ws, y: ys})
    expect = np.einsum("kc,nchw->nkhw", ws[:, :, 0, 0].astype(np.int32), xs.astype(np.int32))
    np.testing.assert_array_equal(ys, expect)


def test_masked_array() -> None:
    g, x, y = _relu()
    pack, ys = _pack(x, y)
    masked = np.ma.masked_array(pack[x], mask=pack[x] < 0)
    _expect(lambda: g.execute({**pack, x: masked}), hipdnn.VariantPackError, "'x'",
            "MaskedArray", "filled")
    out = np.ma.masked_array(np.full(SHAPE, SENTINEL, np.float32))
    _expect(lambda: g.execute({**pack, y: out}), hipdnn.VariantPackError, "'y'", "MaskedArray")
    assert (ys == SENTINEL).all() and (out.data == SENTINEL).all()


@pytest.mark.parametrize("kind", [np.int64, np.int32, np.uint16, np.intp])
def test_numpy_integer_uid_keys(kind: type) -> None:
    g, x, y = _relu()
    pack, ys = _pack(x, y)
    g.execute({kind(x.uid): pack[x], kind(y.uid): ys})
    assert (ys == np.maximum(pack[x], 0)).all()


def test_tensor_given_twice_in_a_pack() -> None:
    g, x, y = _relu()
    pack, ys = _pack(x, y)
    _expect(lambda: g.execute({**pack, x.uid: pack[x]}), hipdnn.VariantPackError, "'x'",
            "twice")
    assert (ys == SENTINEL).all()


@pytest.mark.parametrize("key", [np.bool_(True), 1.0, "x", None.__class__])
def test_other_keys_are_refused(key: Any) -> None:
    g, x, y = _relu()
    pack, ys = _pack(x, y)
    _expect(lambda: g.execute({**pack, key: pack[x]}), hipdnn.VariantPackError,
            "keys must be graph tensors or int uids")
    assert (ys == SENTINEL).all()


def test_json_port_index_never_wraps_around() -> None:
    g, _x, _y = _relu()
    doc = json.loads(g.to_json())
    for bad in (-1, True, 99, "0", 1.0):
        doc["nodes"][0]["inputs"]["X"] = bad
        _expect(lambda: hipdnn.Graph.from_json(json.dumps(doc)), hipdnn.ValidationError,
                "refers to tensor", "into 'tensors'")
