"""Catalog cases for JSON documents and object lifecycles (order of calls, close, edits)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from _catalog import SHAPE, Outputs, add, conv_graph, graph, relu_graph, relu_pack

import hipdnn

V = hipdnn.ValidationError
A = hipdnn.ArgumentError

# -- JSON -----------------------------------------------------------------------------------


def _doc() -> dict[str, Any]:
    g, *_ = conv_graph()
    g.validate()
    return json.loads(g.to_json())


def _json(text: Any) -> Any:
    def run(out: Outputs) -> None:
        hipdnn.Graph.from_json(text() if callable(text) else text)
    return run


def _edited(edit: Any) -> Any:
    def run(out: Outputs) -> None:
        doc = _doc()
        edit(doc)
        hipdnn.Graph.from_json(json.dumps(doc))
    return run


_BAD_TEXT: dict[str, tuple[Any, type[Exception], tuple[str, ...]]] = {
    "none": (None, A, ("from_json", "to_json()")),
    "int": (42, A, ("from_json",)),
    "dict": ({"format": "hipdnn-ctypes.graph"}, A, ("from_json",)),
    "invalid_utf8": (b"\xff\xfe\xfa", V, ("UTF-8",)),
    "deeply_nested_list": ("[" * 200_000 + "]" * 200_000, V, ("nested too deeply",)),
    "deeply_nested_object": ('{"a":' * 200_000 + "1" + "}" * 200_000, V, ("nested too deeply",)),
    "empty": ("", V, ("not a JSON graph",)),
    "truncated": (lambda: json.dumps(_doc())[:-5], V, ("not a JSON graph",)),
    "a_list": ("[1, 2]", V, ("format",)),
    "wrong_format": ('{"format": "onnx"}', V, ("format",)),
    "nan_literal": ("NaN", V, ("format",)),
}
for _name, (_text, _exc, _culprit) in _BAD_TEXT.items():
    add("json", _name, _exc, _culprit, _json(_text))


def _set(path: list[Any], value: Any) -> Any:
    def edit(doc: dict[str, Any]) -> None:
        target: Any = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


def _delete(path: list[Any]) -> Any:
    def edit(doc: dict[str, Any]) -> None:
        target: Any = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return edit


_BAD_DOC: dict[str, tuple[Any, tuple[str, ...]]] = {
    "version_99": (_set(["version"], 99), ("version 99",)),
    "tensors_missing": (_delete(["tensors"]), ("malformed graph document", "tensors")),
    "tensors_int": (_set(["tensors"], 5), ("malformed graph document",)),
    "tensor_is_list": (_set(["tensors", 0], [1, 2]), ("malformed graph document",)),
    "tensor_dim_str": (_set(["tensors", 0, "dim"], "2366"), ("dim",)),
    "tensor_dim_negative": (_set(["tensors", 0, "dim"], [2, -3, 6, 6]), ("x",)),
    "tensor_data_type_bogus": (_set(["tensors", 0, "data_type"], "FLOAT99"), ("data_type",)),
    "tensor_uid_str": (_set(["tensors", 0, "uid"], "1"), ("uid",)),
    "tensor_value_str": (_set(["tensors", 0, "value"], "one"), ("value",)),
    "nodes_missing": (_delete(["nodes"]), ("malformed graph document", "nodes")),
    "node_type_unknown": (_set(["nodes", 0, "type"], "slice"), ("unknown node type",)),
    "node_type_missing": (_delete(["nodes", 0, "type"]), ("malformed graph document",)),
    "port_index_negative": (_set(["nodes", 0, "inputs", "X"], -1), ("refers to tensor -1",)),
    "port_index_bool": (_set(["nodes", 0, "inputs", "X"], True), ("refers to tensor True",)),
    "port_index_too_large": (_set(["nodes", 0, "inputs", "X"], 99), ("refers to tensor 99",)),
    "port_index_str": (_set(["nodes", 0, "inputs", "X"], "0"), ("refers to tensor '0'",)),
    "port_index_float": (_set(["nodes", 0, "inputs", "X"], 0.0), ("refers to tensor 0.0",)),
    "port_unknown": (_set(["nodes", 0, "inputs", "Q"], 0), ("malformed graph document", "Q")),
    "inputs_list": (_set(["nodes", 0, "inputs"], [0, 1]), ("malformed graph document",)),
    "attribute_unknown": (_set(["nodes", 0, "attributes", "bogus"], 1), ("bogus",)),
    "attribute_padding_str": (_set(["nodes", 0, "attributes", "pre_padding"], "11"),
                              ("padding",)),
    "attribute_stride_zero": (_set(["nodes", 0, "attributes", "stride"], [0, 1]),
                              ("stride",)),
    "attribute_mode_bogus": (_set(["nodes", 0, "attributes", "convolution_mode"], "SIDEWAYS"),
                             ("convolution_mode",)),
    "compute_data_type_bogus": (_set(["nodes", 0, "compute_data_type"], "QUAD"),
                                ("compute_data_type",)),
    "io_data_type_bogus": (_set(["io_data_type"], 3.5), ("io_data_type",)),
    "attributes_not_dict": (_set(["nodes", 0, "attributes"], [1]), ("malformed graph document",)),
}
for _name, (_edit, _culprit) in _BAD_DOC.items():
    def _doc_case(out: Outputs, edit: Any = _edit) -> None:
        doc = _doc()
        edit(doc)
        g = hipdnn.Graph.from_json(json.dumps(doc))
        g.build()  # some documents parse and fail validation
    add("json", f"document_{_name}", V, _culprit, _doc_case)


def _json_handle(out: Outputs) -> None:
    g, *_ = conv_graph()
    hipdnn.Graph.from_json(g.to_json(), handle="gpu0")


add("json", "from_json_handle_str", A, ("Graph handle", "hipdnn.Handle"), _json_handle)

# -- lifecycle ------------------------------------------------------------------------------


def _before_build(call: Any) -> Any:
    def run(out: Outputs) -> None:
        g, x, y = relu_graph(build=False)
        call(g, relu_pack(out, x, y))
    return run


_BEFORE_BUILD = {
    "execute": lambda g, p: g.execute(p),
    "bind": lambda g, p: g.bind(p),
    "execute_plan_at_index": lambda g, p: g.execute_plan_at_index(p, None, 0),
    "autotune": lambda g, p: g.autotune(p),
    "get_workspace_size": lambda g, p: g.get_workspace_size(),
    "get_plan_name": lambda g, p: g.get_plan_name(),
    "select_plan": lambda g, p: g.select_plan(0),
}
for _name, _call in _BEFORE_BUILD.items():
    add("lifecycle", f"{_name}_before_build", hipdnn.GraphStateError, ("no built plan", "build()"),
        _before_build(_call))


def _after_close(call: Any) -> Any:
    def run(out: Outputs) -> None:
        g, x, y = relu_graph()
        pack = relu_pack(out, x, y)
        bound = g.bind(pack)
        g.close()
        call(g, pack, bound)
    return run


_AFTER_CLOSE = {
    "execute": lambda g, p, b: g.execute(p),
    "bound_call": lambda g, p, b: b(),
    "bind": lambda g, p, b: g.bind(p),
    "build": lambda g, p, b: g.build(),
    "build_plans": lambda g, p, b: g.build_plans(),
    "execute_plan_at_index": lambda g, p, b: g.execute_plan_at_index(p, None, 0),
    "get_workspace_size": lambda g, p, b: g.get_workspace_size(),
    "autotune": lambda g, p, b: g.autotune(p),
}
for _name, _call in _AFTER_CLOSE.items():
    add("lifecycle", f"{_name}_after_graph_close", hipdnn.PlanClosedError, ("closed",),
        _after_close(_call))


def _handle_closed(call: Any) -> Any:
    def run(out: Outputs) -> None:
        h = hipdnn.Handle()
        g, x, y = relu_graph(handle=h)
        pack = relu_pack(out, x, y)
        g.execute(pack)  # a remembered binding
        bound = g.bind(pack)
        out.arrays[-1][...] = -7.25
        h.close()
        call(g, pack, bound)
    return run


_HANDLE_CLOSED = {
    "execute": lambda g, p, b: g.execute(p),
    "bound_call": lambda g, p, b: b(),
    "bind": lambda g, p, b: g.bind(p),
    "execute_plan_at_index": lambda g, p, b: g.execute_plan_at_index(p, None, 0),
    "autotune": lambda g, p, b: g.autotune(p),
    "explicit_closed_handle": lambda g, p, b: g.execute(p, handle=_closed_handle()),
}


def _closed_handle() -> hipdnn.Handle:
    h = hipdnn.Handle()
    h.close()
    return h


for _name, _call in _HANDLE_CLOSED.items():
    add("lifecycle", f"{_name}_after_handle_close", hipdnn.PlanClosedError,
        ("closed", "Handle"), _handle_closed(_call))


def _edit_after_build(edit: Any, call: Any) -> Any:
    def run(out: Outputs) -> None:
        g, x, y = relu_graph()
        pack = relu_pack(out, x, y)
        bound = g.bind(pack)
        edit(g, x, y)
        call(g, pack, bound)
    return run


_EDITS = {
    "set_stride": lambda g, x, y: x.set_stride([48, 1, 12, 3]),
    "set_dim": lambda g, x, y: x.set_dim([2, 3, 4, 4]),
    "set_data_type": lambda g, x, y: x.set_data_type("HALF"),
    "set_output_name": lambda g, x, y: y.set_name("renamed"),
    "graph_compute_type": lambda g, x, y: g.set_compute_data_type("FLOAT"),
    "added_node": lambda g, x, y: g.relu(x),
}
for _name, _edit in _EDITS.items():
    add("lifecycle", f"execute_after_{_name}", hipdnn.GraphChangedError, ("changed since",),
        _edit_after_build(_edit, lambda g, p, b: g.execute(p)))
    add("lifecycle", f"bound_call_after_{_name}", hipdnn.GraphChangedError, ("changed since",),
        _edit_after_build(_edit, lambda g, p, b: b()))


def _plan_index(index: Any, exc: type[Exception], culprit: tuple[str, ...]) -> None:
    def run(out: Outputs) -> None:
        g, x, y = relu_graph()
        g.execute_plan_at_index(relu_pack(out, x, y), None, index)
    add("lifecycle", f"plan_index_{index!r}", exc, culprit, run)


for _index in (-1, 1, 2**40):
    _plan_index(_index, hipdnn.PlanIndexError, ("execute_plan_at_index", "0..0"))
for _index in ("0", 0.0, None, np.array([0])):  # a 1-element array's __index__ raises TypeError
    _plan_index(_index, A, ("execute_plan_at_index", "not an int"))

# beyond a C int (hipSetDevice's), ctypes silently kept the low 32 bits: 2**32 + 1 was GPU 1
for _name, _value in {"str": "gpu0", "float": 0.0, "negative": -1, "list": [0],
                      "beyond_int32": 2**31, "wraps_to_gpu1": 2**32 + 1,
                      "one_element_array": np.array([0])}.items():
    def _dev(out: Outputs, value: Any = _value) -> None:
        hipdnn.Handle(device=value)
    add("lifecycle", f"handle_device_{_name}", V, ("device", ">= 0"), _dev)

# beyond a pointer, ctypes' c_void_p silently kept the low 64 bits
for _name, _value in {"str": "s", "float": 1.5, "negative": -4, "beyond_pointer": 2**64 + 5,
                      "one_element_array": np.array([0])}.items():
    def _stream(out: Outputs, value: Any = _value) -> None:
        with hipdnn.Handle() as h:
            h.set_stream(value)
    add("lifecycle", f"set_stream_{_name}", V, ("stream", "hipStream_t"), _stream)

for _name, _value in {"str": "handle", "int": 0, "dict": {}}.items():
    def _ghandle(out: Outputs, value: Any = _value) -> None:
        graph(handle=value)
    add("lifecycle", f"graph_handle_{_name}", A, ("Graph handle", "hipdnn.Handle"), _ghandle)

    def _ehandle(out: Outputs, value: Any = _value) -> None:
        g, x, y = relu_graph()
        g.execute(relu_pack(out, x, y), handle=value)
    add("lifecycle", f"execute_handle_{_name}", A, ("execute handle", "hipdnn.Handle"), _ehandle)


def _autotune(kw: dict[str, Any]) -> Any:
    def run(out: Outputs) -> None:
        g, x, y = relu_graph()
        g.autotune(relu_pack(out, x, y), **kw)
    return run


for _name, _kw in {"iterations_str": {"iterations": "3"}, "iterations_zero": {"iterations": 0},
                   "warmup_negative": {"warmup": -1}, "warmup_float": {"warmup": 1.5}}.items():
    add("lifecycle", f"autotune_{_name}", V, ("autotune",), _autotune(_kw))


def _build_plan_index(index: Any) -> Any:
    def run(out: Outputs) -> None:
        g, _x, _y = relu_graph()
        g.build_plan_at_index(index)
    return run


add("lifecycle", "build_plan_at_index_7", hipdnn.PlanIndexError, ("build_plan_at_index", "7"),
    _build_plan_index(7))
add("lifecycle", "build_plan_at_index_negative", hipdnn.PlanIndexError,
    ("build_plan_at_index", "-1"), _build_plan_index(-1))


def _bad_call_dict(out: Outputs) -> None:
    x = np.zeros(SHAPE, np.float32)
    with hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT) as g:
        g.relu(x, name="r").set_output(True)
    g(x)


add("lifecycle", "positional_call_without_io_tuples", hipdnn.GraphStateError,
    ("set_io_tuples",), _bad_call_dict)


def _io_tuples(out: Outputs) -> None:
    x = np.zeros(SHAPE, np.float32)
    with hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT) as g:
        g.relu(x, name="r").set_output(True)
    g.set_io_tuples(["nope"], ["r::OUT_0"])


add("lifecycle", "set_io_tuples_unknown_name", V, ("nope", "not a recorded input"), _io_tuples)


def _build_on_closed_handle(out: Outputs) -> None:
    g, _x, _y = relu_graph(handle=_closed_handle(), build=False)
    g.build()


add("lifecycle", "build_on_closed_handle", hipdnn.PlanClosedError, ("closed", "open Handle"),
    _build_on_closed_handle)
