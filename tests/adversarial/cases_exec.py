"""Catalog cases found at execute: variant packs, workspaces, knobs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np
from _catalog import (
    SENTINEL,
    SHAPE,
    Outputs,
    add,
    bn_graph,
    bn_pack,
    conv_graph,
    conv_pack,
    graph,
    relu_graph,
    relu_pack,
)

import hipdnn
from hipdnn.backend.engine import Engine, ExecutionPlan
from hipdnn.backend.knobs import IntConstraint, Knob
from hipdnn.core.types import KnobValueType
from hipdnn.engines import register, unregister
from hipdnn.interop import buffers as interop
from hipdnn.ir.nodes import PointwiseNode

VP = hipdnn.VariantPackError
WS = hipdnn.WorkspaceError
K = hipdnn.KnobError

try:
    import torch
except ImportError:  # pragma: no cover - torch is a test dependency
    torch = None


# -- variant packs --------------------------------------------------------------------------

def _with_x(value: Any, culprit: tuple[str, ...]) -> None:
    def run(out: Outputs) -> None:
        g, x, y = relu_graph()
        pack = relu_pack(out, x, y)
        pack[x] = value() if callable(value) else value
        g.execute(pack)
    CASES_X.append((run, culprit))


CASES_X: list[Any] = []

_BAD_X: dict[str, tuple[Any, tuple[str, ...]]] = {
    "none": (None, ("'x'", "accepted")),
    "str": ("abc", ("'x'", "accepted")),
    "bytes": (b"\0" * 384, ("'x'", "accepted")),
    "list": ([[1.0]], ("'x'", "accepted")),
    "dict": ({"data": 1}, ("'x'", "accepted")),
    "bool": (True, ("'x'", "accepted")),
    "negative_pointer": (-4096, ("'x'", "negative")),
    # a small int or an IntEnum member was read as a host pointer: a segfault
    "pointer_in_first_page": (1, ("'x'", "first page")),
    "numpy_int_in_first_page": (np.int64(96), ("'x'", "first page")),
    "enum_member": (hipdnn.DataType.FLOAT, ("'x'", "DataType", "accepted")),
    "pointer_beyond_64_bits": (2**64 + 4096, ("'x'", "64 bits")),  # ctypes keeps the low bits
    "pointer_ending_past_64_bits": (2**64 - 16, ("'x'", "64-bit address space")),
    "memoryview": (lambda: memoryview(bytearray(384)), ("'x'", "accepted")),
    "float_for_tensor": (1.5, ("'x'", "scalar")),
    "float64_array": (lambda: np.zeros(SHAPE), ("'x'", "FLOAT", "DOUBLE")),
    "float16_array": (lambda: np.zeros(SHAPE, np.float16), ("'x'", "FLOAT", "HALF")),
    "int32_array": (lambda: np.zeros(SHAPE, np.int32), ("'x'", "FLOAT", "INT32")),
    "complex_array": (lambda: np.zeros(SHAPE, np.complex64), ("'x'", "complex")),
    "object_array": (lambda: np.zeros(SHAPE, object), ("'x'",)),
    "big_endian": (lambda: np.zeros(SHAPE, ">f4"), ("'x'",)),
    "too_small": (lambda: np.zeros((2, 3, 4, 3), np.float32), ("'x'", "shape mismatch")),
    "too_small_flat": (lambda: np.zeros(95, np.float32), ("'x'", "95")),
    "wrong_rank_gappy": (lambda: np.zeros((6, 4, 8), np.float32)[..., ::2],
                         ("'x'", "shape mismatch")),
    "gappy_other_shape": (lambda: np.zeros((4, 3, 4, 4), np.float32)[::2, :, :, :2],
                          ("'x'", "shape mismatch")),
    "masked_array": (lambda: np.ma.masked_array(np.zeros(SHAPE, np.float32), mask=True),
                     ("'x'", "MaskedArray")),
    "structured": (lambda: np.zeros(SHAPE, [("a", "<f4")]), ("'x'",)),
    "zero_size": (lambda: np.zeros((0,), np.float32), ("'x'",)),
    # arrays stating another shape were read from their pointer (gap-free and large enough):
    # silently wrong numbers before issue 29
    "nhwc_shaped": (lambda: np.zeros((2, 4, 4, 3), np.float32),
                    ("'x'", "shape mismatch", "NHWC order", "a.transpose(0, 3, 1, 2)",
                     "(48, 1, 12, 3)")),
    "larger": (lambda: np.zeros((2, 3, 8, 8), np.float32), ("'x'", "(2, 3, 8, 8)", "by_pointer")),
    "one_row_longer": (lambda: np.zeros((2, 3, 5, 4), np.float32), ("'x'", "(2, 3, 5, 4)")),
    "flat_larger": (lambda: np.zeros(97, np.float32), ("'x'", "(97,)", "by_pointer")),
}
for _name, (_value, _culprit) in _BAD_X.items():
    _with_x(_value, _culprit)
    add("variant_pack", f"input_{_name}", VP, *CASES_X[-1][::-1])


def _iface(d: Any) -> Any:
    return type("Iface", (), {"__array_interface__": d})()


_BAD_IFACE = {
    "no_data": {"shape": SHAPE, "typestr": "<f4", "version": 3},
    "no_shape": {"typestr": "<f4", "data": (4096, False), "version": 3},
    "no_typestr": {"shape": SHAPE, "data": (4096, False), "version": 3},
    "data_str": {"shape": SHAPE, "typestr": "<f4", "data": "x", "version": 3},
    "data_none_pointer": {"shape": SHAPE, "typestr": "<f4", "data": (None, False), "version": 3},
    "shape_str": {"shape": "2344", "typestr": "<f4", "data": (4096, False), "version": 3},
    "shape_negative": {"shape": (2, -3, 4, 4), "typestr": "<f4", "data": (4096, False)},
    "typestr_unknown": {"shape": SHAPE, "typestr": "<q9", "data": (4096, False)},
    "strides_str": {"shape": SHAPE, "typestr": "<f4", "data": (4096, False), "strides": "s"},
    "strides_odd_bytes": {"shape": SHAPE, "typestr": "<f4", "data": (4096, False),
                          "strides": (192, 64, 16, 3)},
    "masked": {"shape": SHAPE, "typestr": "<f4", "data": (4096, False), "mask": object()},
    "not_a_dict": [("shape", SHAPE)],
    "data_in_first_page": {"shape": SHAPE, "typestr": "<f4", "data": (8, False), "version": 3},
}
for _name, _d in _BAD_IFACE.items():
    def _iface_case(out: Outputs, d: Any = _d) -> None:
        g, x, y = relu_graph()
        pack = relu_pack(out, x, y)
        pack[x] = _iface(d)
        g.execute(pack)
    add("variant_pack", f"array_interface_{_name}", VP, ("'x'", "__array_interface__"),
        _iface_case)


def _out_value(make: Any, culprit: tuple[str, ...]) -> Any:
    def run(out: Outputs) -> None:
        g, x, y = relu_graph()
        pack = relu_pack(out, x, y)
        pack[y] = make(out)
        g.execute(pack)
    return run


def _readonly(out: Outputs) -> Any:
    a = out.np()
    a.setflags(write=False)
    return a


def _overlapping(out: Outputs) -> Any:
    base = out.np((20,))
    return np.lib.stride_tricks.as_strided(base, SHAPE, (0, 16, 16, 4))


def _broadcast_out(out: Outputs) -> Any:
    return np.broadcast_to(out.np((1, 3, 1, 1)), SHAPE)


_BAD_Y = {
    "read_only": (_readonly, ("'y'", "read-only")),
    "self_overlapping": (_overlapping, ("'y'", "overlap")),
    "broadcast_view": (_broadcast_out, ("'y'",)),
    "too_small": (lambda out: out.np((2, 3, 4, 3)), ("'y'", "shape mismatch")),
    "nhwc_shaped": (lambda out: out.np((2, 4, 4, 3)), ("'y'", "NHWC order", "(48, 1, 12, 3)")),
    "larger": (lambda out: out.np((2, 3, 8, 8)), ("'y'", "(2, 3, 8, 8)", "by_pointer")),
    "float64": (lambda out: out.np(SHAPE, np.float64), ("'y'", "DOUBLE")),
    "int8": (lambda out: out.np(SHAPE, np.int8), ("'y'", "INT8")),
    "masked": (lambda out: out.keep(np.ma.masked_array(np.full(SHAPE, SENTINEL, np.float32))),
               ("'y'", "MaskedArray")),
    "python_float": (lambda out: 1.0, ("'y'", "scalar")),
    "none": (lambda out: None, ("'y'",)),
}
for _name, (_make, _culprit) in _BAD_Y.items():
    add("variant_pack", f"output_{_name}", VP, _culprit, _out_value(_make, _culprit))

if torch is not None:
    def _torch_out(make: Any) -> Any:
        def run(out: Outputs) -> None:
            g, x, y = relu_graph()
            pack = relu_pack(out, x, y)
            pack[y] = make(out)
            g.execute(pack)
        return run

    def _t(out: Outputs, shape: tuple[int, ...] = SHAPE, **kw: Any) -> Any:
        return out.keep(torch.full(shape, SENTINEL, **kw))

    add("variant_pack", "torch_output_expanded", VP, ("'y'", "overlap"),
        _torch_out(lambda out: _t(out, (1, 3, 1, 1)).expand(*SHAPE)))
    add("variant_pack", "torch_output_negative_view", VP, ("'y'", "negative bit"),
        _torch_out(lambda out: torch._neg_view(_t(out))))
    add("variant_pack", "torch_output_float64", VP, ("'y'", "DOUBLE"),
        _torch_out(lambda out: _t(out, dtype=torch.float64)))
    add("variant_pack", "torch_output_meta", VP, ("'y'", "meta"),
        _torch_out(lambda out: torch.empty(SHAPE, device="meta")))
    add("variant_pack", "torch_input_sparse", VP, ("'x'", "torch.strided"),
        lambda out: _torch_in(out, torch.zeros(SHAPE).to_sparse()))
    add("variant_pack", "torch_input_complex", VP, ("'x'", "complex64"),
        lambda out: _torch_in(out, torch.zeros(SHAPE, dtype=torch.complex64)))
    add("variant_pack", "torch_input_nested", VP, ("'x'",),
        lambda out: _torch_in(out, torch.nested.nested_tensor([torch.zeros(3), torch.zeros(2)],
                                                                 layout=torch.jagged)))


def _torch_in(out: Outputs, value: Any) -> None:
    g, x, y = relu_graph()
    pack = relu_pack(out, x, y)
    pack[x] = value
    g.execute(pack)


def _missing(out: Outputs) -> None:
    g, _x, y = relu_graph()
    g.execute({y: out.np()})


add("variant_pack", "missing_input", VP, ("'x'", "missing"), _missing)


def _missing_output(out: Outputs) -> None:
    g, x, _y = relu_graph()
    g.execute({x: np.zeros(SHAPE, np.float32)})


add("variant_pack", "missing_output", VP, ("'y'", "missing"), _missing_output)


def _virtual_key(out: Outputs) -> None:
    g = graph()
    x = g.tensor(dim=list(SHAPE), name="x")
    mid = g.relu(x).set_name("mid")
    y = g.mul(mid, x).set_output(True).set_name("y")
    g.build()
    g.execute({x: np.zeros(SHAPE, np.float32), y: out.np(), mid: out.np()})


add("variant_pack", "virtual_tensor_given", VP, ("'mid'", "virtual"), _virtual_key)


def _foreign_key(out: Outputs) -> None:
    g, _x, y = relu_graph()
    g2 = graph()  # its tensor 'x' has x's uid but another shape: it stands for nothing in g
    x2 = g2.tensor(dim=[2, 3, 4, 5], name="x")
    g2.relu(x2).set_output(True)
    g2.build()
    g.execute({x2: np.zeros(SHAPE, np.float32), y: out.np()})


def _twin_key_twice(out: Outputs) -> None:
    g, x, y = relu_graph()
    _g2, x2, _y2 = relu_graph()  # x2 describes x (cudnn-frontend keys packs by uid)
    g.execute({x: np.zeros(SHAPE, np.float32), y: out.np(), x2: np.zeros(SHAPE, np.float32)})


add("variant_pack", "tensor_of_another_graph", VP, ("'x'", "another graph", "dims [2, 3, 4, 5]"),
    _foreign_key)
add("variant_pack", "twin_tensor_of_another_graph_twice", VP, ("'x'", "twice"), _twin_key_twice)


def _unknown_uid(out: Outputs) -> None:
    g, x, y = relu_graph()
    g.execute({**relu_pack(out, x, y), 999: np.zeros(SHAPE, np.float32)})


add("variant_pack", "unknown_uid", VP, ("999", "uids"), _unknown_uid)

for _name, _key in {"str": "x", "float": 1.0, "bool": True, "tuple": (1,),
                    "numpy_bool": np.bool_(False)}.items():
    def _key_case(out: Outputs, key: Any = _key) -> None:
        g, x, y = relu_graph()
        g.execute({**relu_pack(out, x, y), key: np.zeros(SHAPE, np.float32)})
    add("variant_pack", f"key_{_name}", VP, ("keys must be graph tensors or int uids",),
        _key_case)


def _twice(out: Outputs) -> None:
    g, x, y = relu_graph()
    pack = relu_pack(out, x, y)
    g.execute({**pack, x.uid: pack[x]})


add("variant_pack", "tensor_given_twice", VP, ("'x'", "twice"), _twice)


def _not_a_mapping(value: Any) -> Any:
    def run(out: Outputs) -> None:
        g, _x, _y = relu_graph()
        out.np()
        g.execute(value)
    return run


for _name, _value in {"list": [1, 2], "none": None, "str": "pack", "tuple_pairs": ((1, 2),)}.items():
    add("variant_pack", f"pack_{_name}", VP, ("variant pack must be a dict",),
        _not_a_mapping(_value))


def _bn_scalar_at_execute(port: str, value: Any) -> Any:
    def run(out: Outputs) -> None:
        g = graph()
        t = {n: g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("scale", "bias")}
        x = g.tensor(dim=list(SHAPE), name="x")
        eps = g.tensor(dim=[1, 1, 1, 1], name="eps_in", is_pass_by_value=True)
        outs = [o for o in g.batchnorm(x, t["scale"], t["bias"], eps, name="bn") if o is not None]
        for o in outs:
            o.set_output(True)
        g.build()
        pack = {x: np.ones(SHAPE, np.float32), t["scale"]: np.ones((1, 3, 1, 1), np.float32),
                t["bias"]: np.zeros((1, 3, 1, 1), np.float32), eps: value}
        pack[outs[0]] = out.np()
        pack[outs[1]] = out.np((1, 3, 1, 1))
        pack[outs[2]] = out.np((1, 3, 1, 1))
        g.execute(pack)
    return run


for _name, _value in {"nan": float("nan"), "zero": 0.0, "negative": -1.0,
                      "inf": float("inf"), "array_nan": np.array([np.nan], np.float32),
                      "array_negative": np.array([[[[-2.0]]]], np.float32)}.items():
    add("variant_pack", f"epsilon_at_execute_{_name}", VP, ("eps_in", "epsilon"),
        _bn_scalar_at_execute("EPSILON", _value))


def _bn_exec(mutate: Any, culprit: tuple[str, ...]) -> Any:
    def run(out: Outputs) -> None:
        g, t = bn_graph()
        pack = bn_pack(out, t)
        mutate(pack, t, out)
        g.execute(pack)
    return run


add("variant_pack", "bn_scale_too_few_channels", VP, ("'scale'", "shape mismatch"),
    _bn_exec(lambda p, t, o: p.__setitem__(t["scale"], np.ones((1, 2, 1, 1), np.float32)),
             ("'scale'",)))
add("variant_pack", "bn_mean_output_read_only", VP, ("'mean'", "read-only"),
    _bn_exec(lambda p, t, o: p[t["mean"]].setflags(write=False), ("'mean'",)))
add("variant_pack", "bn_running_var_float16", VP, ("'rvar'", "HALF"),
    _bn_exec(lambda p, t, o: p.__setitem__(t["rvar"], np.ones((1, 3, 1, 1), np.float16)),
             ("'rvar'",)))
add("variant_pack", "bn_y_overlapping", VP, ("'y'", "overlap"),
    _bn_exec(lambda p, t, o: p.__setitem__(t["y"], np.lib.stride_tricks.as_strided(
        o.np((48,)), SHAPE, (0, 64, 16, 4))), ("'y'",)))
add("variant_pack", "bn_missing_bias", VP, ("'bias'", "missing"),
    _bn_exec(lambda p, t, o: p.pop(t["bias"]), ("'bias'",)))


def _conv_exec(mutate: Any) -> Any:
    def run(out: Outputs) -> None:
        g, x, w, y = conv_graph()
        g.build()
        pack = conv_pack(out, x, w, y)
        mutate(pack, x, w, y, out)
        g.execute(pack)
    return run


add("variant_pack", "conv_weight_transposed_view", VP, ("'w'", "shape mismatch"),
    _conv_exec(lambda p, x, w, y, o: p.__setitem__(w, np.zeros((3, 4, 3, 3), np.float32)
                                                   .transpose(1, 0, 2, 3)[:, :, :, :2])))
add("variant_pack", "conv_output_too_small", VP, ("'y'",),
    _conv_exec(lambda p, x, w, y, o: p.__setitem__(y, o.np((2, 4, 5, 5)))))
add("variant_pack", "conv_input_int8", VP, ("'x'", "INT8"),
    _conv_exec(lambda p, x, w, y, o: p.__setitem__(x, np.zeros((2, 3, 6, 6), np.int8))))

# -- workspaces -------------------------------------------------------------------------------


class _WsPlan(ExecutionPlan):
    def __init__(self, engine: Engine, graph: Any, knobs: dict[str, Any]) -> None:
        super().__init__(engine, knobs, name="CATALOG_WS_ENGINE[plan]",
                         workspace_size=int(knobs["catalog.ws"]))
        self.graph = graph

    def _execute(self, buffers: Mapping[int, Any], workspace: Any, handle: Any) -> None:
        for node in self.graph.nodes:
            x, y = node.inputs["IN_0"], node.outputs["OUT_0"]
            interop.host_view(buffers[y.uid], y)[...] = np.maximum(
                interop.host_view(buffers[x.uid], x), 0)


class _WsEngine(Engine):
    """ReLU graphs only, with a workspace of knob ``catalog.ws`` bytes (registered per case)."""

    name = "CATALOG_WS_ENGINE"
    rank = 900

    def check_support(self, graph: Any, handle: Any) -> str | None:
        ok = all(isinstance(n, PointwiseNode) and n.mode.name == "RELU_FWD" for n in graph.nodes)
        return None if ok else "relu graphs only"

    def get_knobs(self, graph: Any, handle: Any) -> list[Knob]:
        return [Knob("catalog.ws", KnobValueType.INT64, 1024, IntConstraint(0, 1 << 20, 64),
                     "workspace bytes")]

    def build_plan(self, graph: Any, knobs: dict[str, Any], handle: Any) -> _WsPlan:
        return _WsPlan(self, graph, knobs)


@contextmanager
def _ws_engine() -> Iterator[Engine]:
    engine = register(_WsEngine())
    try:
        yield engine
    finally:
        unregister(engine)


def _ws_case(workspace: Any, size: int = 1024) -> Any:
    def run(out: Outputs) -> None:
        with _ws_engine():
            g, x, y = relu_graph(build=False)
            g.build_operation_graph()
            g.create_execution_plan_ext("CATALOG_WS_ENGINE", {"catalog.ws": size})
            g.build_plans()
            assert g.get_workspace_size() == size
            g.execute(relu_pack(out, x, y), workspace(out) if callable(workspace) else workspace)
    return run


_BAD_WS: dict[str, tuple[Any, type[Exception], tuple[str, ...]]] = {
    "none": (None, WS, ("1024 bytes", "get_workspace_size")),
    "too_small": (lambda out: np.zeros(1023, np.uint8), WS, ("1023", "1024")),
    "too_small_float": (lambda out: np.zeros(255, np.float32), WS, ("1020", "1024")),
    "strided": (lambda out: np.zeros(4096, np.uint8)[::2], WS, ("contiguous",)),
    "reversed": (lambda out: np.zeros(2048, np.uint8)[::-1], WS, ("contiguous",)),
    "read_only": (lambda out: np.broadcast_to(np.zeros(1, np.uint8), (2048,)), WS,
                  ("read-only",)),
    "str": ("workspace", VP, ("accepted",)),
    "list": ([0] * 1024, VP, ("accepted",)),
    "negative_pointer": (-1, VP, ("negative",)),
    "pointer_beyond_64_bits": (2**64 + 4096, WS, ("64 bits",)),
    "pointer_ending_past_64_bits": (2**64 - 512, WS, ("1024 bytes", "64-bit address space")),
    "float": (1024.0, WS, ("must be memory", "1024 bytes")),
    "zero_size_array": (lambda out: np.zeros(0, np.uint8), WS, ("0 bytes", "1024")),
}
for _name, (_ws, _exc, _culprit) in _BAD_WS.items():
    add("workspace", _name, _exc, _culprit, _ws_case(_ws))


def _ws_bind(out: Outputs) -> None:
    with _ws_engine():
        g, x, y = relu_graph(build=False)
        g.build_operation_graph()
        g.create_execution_plan_ext("CATALOG_WS_ENGINE", {"catalog.ws": 512})
        g.build_plans()
        g.bind(relu_pack(out, x, y), np.zeros(256, np.uint8))


add("workspace", "bind_too_small", WS, ("256", "512"), _ws_bind)


def _ws_autotune(out: Outputs) -> None:
    with _ws_engine():
        g, x, y = relu_graph(build=False)
        g.build_operation_graph()
        g.create_execution_plan_ext("CATALOG_WS_ENGINE", {"catalog.ws": 512})
        g.build_plans()
        g.autotune(relu_pack(out, x, y), None)


add("workspace", "autotune_without_workspace", WS, ("512 bytes",), _ws_autotune)


def _ws_limit(value: Any) -> Any:
    def run(out: Outputs) -> None:
        g, _x, _y = relu_graph()
        g.deselect_workspace_greater_than(value)
    return run


for _name, _value in {"negative": -1, "str": "1kb", "float": 1.5}.items():
    add("workspace", f"deselect_limit_{_name}", hipdnn.ValidationError,
        ("deselect_workspace_greater_than",), _ws_limit(_value))

# -- knobs ----------------------------------------------------------------------------------


def _knob_case(settings: Any, engine: Any = "CATALOG_WS_ENGINE") -> Any:
    def run(out: Outputs) -> None:
        with _ws_engine():
            g, _x, _y = relu_graph(build=False)
            g.build_operation_graph()
            g.create_execution_plan_ext(engine, settings)
    return run


_BAD_KNOBS: dict[str, tuple[Any, type[Exception], tuple[str, ...]]] = {
    "unknown_id": ({"catalog.nope": 1}, K, ("catalog.nope", "catalog.ws")),
    "out_of_range": ({"catalog.ws": 1 << 30}, K, ("catalog.ws",)),
    "negative": ({"catalog.ws": -64}, K, ("catalog.ws",)),
    "off_step": ({"catalog.ws": 100}, K, ("catalog.ws",)),
    "str_value": ({"catalog.ws": "64"}, K, ("catalog.ws",)),
    "float_value": ({"catalog.ws": 64.5}, K, ("catalog.ws",)),
    "bool_value": ({"catalog.ws": True}, K, ("catalog.ws",)),
    "none_value": ({"catalog.ws": None}, K, ("catalog.ws",)),
    "settings_int": (5, K, ("knob settings", "KnobSetting")),
    "settings_str": ("catalog.ws", K, ("knob settings", "KnobSetting")),
    "settings_list_of_tuples": ([("catalog.ws", 64)], K, ("KnobSetting",)),
    "repeated": ([hipdnn.KnobSetting("catalog.ws", 64), hipdnn.KnobSetting("catalog.ws", 128)],
                 K, ("catalog.ws", "more than once")),
    "single_setting_unknown": (hipdnn.KnobSetting("catalog.zz", 1), K, ("catalog.zz",)),
}
for _name, (_settings, _exc, _culprit) in _BAD_KNOBS.items():
    add("knobs", _name, _exc, _culprit, _knob_case(_settings))

for _name, _engine in {"unknown_name": "NO_SUCH_ENGINE", "unknown_id": 12345678901234,
                       "index_too_large": 50, "none": None, "float": 1.5}.items():
    add("knobs", f"engine_{_name}", hipdnn.EngineError, ("engine",), _knob_case({}, _engine))


def _heur(modes: Any) -> Any:
    def run(out: Outputs) -> None:
        g, _x, _y = relu_graph(build=False)
        g.build(modes)
    return run


for _name, _modes in {"unknown": "Z", "int": 77, "list_bad": ["A", "nope"]}.items():
    add("knobs", f"heuristic_mode_{_name}", hipdnn.ValidationError, ("heuristic mode",),
        _heur(_modes))


def _policy(out: Outputs) -> None:
    g, _x, _y = relu_graph(build=False)
    g.build(policy="EVERYTHING")


add("knobs", "build_policy_unknown", hipdnn.ValidationError, ("build plan policy",), _policy)


def _knobs_unsupported_engine(out: Outputs) -> None:
    with _ws_engine():
        g, _x, _w, _y = conv_graph()
        g.build_operation_graph()
        g.get_knobs_for_engine("CATALOG_WS_ENGINE")


add("knobs", "knobs_of_engine_that_declines", hipdnn.GraphNotSupportedError,
    ("CATALOG_WS_ENGINE", "relu graphs only"), _knobs_unsupported_engine)


# -- found while building the catalog ---------------------------------------------------------

def _bn_eps_pack(value: Any) -> Any:
    def run(out: Outputs) -> None:
        g = graph()
        t = {n: g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("scale", "bias")}
        x = g.tensor(dim=list(SHAPE), name="x")
        eps = g.tensor(dim=[1, 1, 1, 1], name="eps_in", is_pass_by_value=True)
        outs = [o for o in g.batchnorm(x, t["scale"], t["bias"], eps, name="bn") if o is not None]
        for o in outs:
            o.set_output(True)
        g.build()
        pack = {x: np.ones(SHAPE, np.float32), t["scale"]: np.ones((1, 3, 1, 1), np.float32),
                t["bias"]: np.zeros((1, 3, 1, 1), np.float32), eps: value,
                outs[0]: out.np(), outs[1]: out.np((1, 3, 1, 1)), outs[2]: out.np((1, 3, 1, 1))}
        g.execute(pack)
    return run


for _name, _value in {"int": 2, "numpy_int": np.int64(1), "pointer_like": 0x7F0000001000}.items():
    # an int for a pass-by-value scalar was read as a pointer (a crash on the reference engine)
    add("variant_pack", f"pass_by_value_{_name}", VP, ("eps_in", "pointer", "float"),
        _bn_eps_pack(_value))


def _two_outputs_one_buffer(view: Any) -> Any:
    def run(out: Outputs) -> None:
        g = graph()
        x = g.tensor(dim=list(SHAPE), name="x")
        g.relu(x).set_output(True).set_name("y1")
        g.mul(x, x).set_output(True).set_name("y2")
        g.build()
        y1 = g.tensors[next(t.uid for t in g.tensors.values() if t.name == "y1")]
        y2 = g.tensors[next(t.uid for t in g.tensors.values() if t.name == "y2")]
        a, b = view(out)
        g.execute({x: np.ones(SHAPE, np.float32), y1: a, y2: b})
    return run


add("variant_pack", "two_outputs_same_array", VP, ("'y1'", "'y2'", "share memory"),
    _two_outputs_one_buffer(lambda out: (out.np(),) * 2))
add("variant_pack", "two_outputs_overlapping_halves", VP, ("'y1'", "'y2'", "share memory"),
    _two_outputs_one_buffer(lambda out: (lambda base: (base[:96].reshape(SHAPE),
                                                       base[48:144].reshape(SHAPE)))(
        out.np((144,)))))


def _deselect(names: Any) -> Any:
    def run(out: Outputs) -> None:
        g, _x, _y = relu_graph(build=False)
        g.deselect_engines(names)
    return run


for _name, _names in {"float": 5.5, "none": None, "list_of_floats": [1.5], "bytes": b"MIOPEN"}.items():
    add("knobs", f"deselect_engines_{_name}", hipdnn.ArgumentError, ("deselect_engines",),
        _deselect(_names))


def _tensor_kw(out: Outputs) -> None:
    graph().tensor(dims=[1, 2])


add("dims", "tensor_unknown_keyword", hipdnn.ArgumentError, ("dims", "valid: dim"), _tensor_kw)


for _name, _ws in {"str": "workspace", "float": 64.0, "list": [0, 1], "dict": {}}.items():
    def _unneeded(out: Outputs, ws: Any = _ws) -> None:
        g, x, y = relu_graph()
        assert g.get_workspace_size() == 0
        g.execute(relu_pack(out, x, y), ws)
    add("workspace", f"unneeded_but_{_name}", WS, ("workspace",), _unneeded)
