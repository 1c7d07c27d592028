"""AMD's provider's rows beyond the seed on MIOPEN_ENGINE over the emulated device (MIOpen 3.4
and 3.5): batchnorm inference + activation (both forms), the standalone activations and binary
ops against PyTorch/numpy, AMD's rules as declines naming node, port and value (the CPU engine
then runs the graph, with the reason reported), and no host copy in any row's execute."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest
from emulated.device import EmulatedDevice
from test_miopen_engine_graphs import (
    ACTIVATIONS,
    BINARY_OPS,
    DTYPES,
    build,
    pointwise_act_case,
    pointwise_binary_case,
)
from test_miopen_engine_numerics import assert_refused, check_outputs, refusal, run_case

from hipdnn.core.errors import VariantPackError
from hipdnn.core.types import DataType
from hipdnn.core.types import PointwiseMode as PM
from hipdnn.engines.miopen import MiopenEngine, Row
from hipdnn.graph.graph import Graph

pytest.importorskip("torch")

D = DataType
#: hipMemcpyKind values that cross the host/device boundary (and Default, which may).
_HOST_KINDS = {0: "HostToHost", 1: "HostToDevice", 2: "DeviceToHost", 4: "Default"}


def _to_device(device: EmulatedDevice, a: np.ndarray) -> int:
    ptr = device.alloc(max(a.nbytes, 1))
    ctypes.memmove(ptr, a.ctypes.data, a.nbytes)
    return ptr


def host_copies(device: EmulatedDevice, since: int) -> list[str]:
    """The hipMemcpy* calls after ``since`` whose kind is not device-to-device."""
    out = []
    for c in device.calls[since:]:
        if c.name.startswith("hipMemcpy"):
            kind = int(c.args[3]) if len(c.args) > 3 else 4
            if kind != 3:
                out.append(f"{c.name}({_HOST_KINDS.get(kind, kind)})")
    return out


# ------------------------------------------------------------------------- copies per execute
@pytest.mark.parametrize("row", list(Row), ids=[r.name.lower() for r in Row])
def test_no_host_copy_in_execute(emulated_device: EmulatedDevice,
                                 emulated_miopen_engine: MiopenEngine, row: Row) -> None:
    """Every row with device-pointer inputs: zero host<->device copies per execute (the inverse
    variance becomes a variance on the device; before, two synchronous copies per call)."""
    case = build(row, D.FLOAT, "NCHW")
    if refusal(row, D.FLOAT, emulated_device.version_name):
        assert_refused(emulated_device, emulated_miopen_engine, case)
        return
    g = case.graph
    g.build()
    assert g.plans[0].engine is emulated_miopen_engine, g.engine_reasons()
    pack: dict[Any, Any] = {}
    for t, a in case.inputs.items():
        pack[t] = float(np.asarray(a).reshape(-1)[0]) if t.is_pass_by_value else _to_device(emulated_device, a)
    outs = case.empty_outputs()
    ptrs = {r: _to_device(emulated_device, a) for r, a in outs.items()}
    pack.update({case.outputs[r]: p for r, p in ptrs.items()})
    size = g.get_workspace_size()
    ws = emulated_device.alloc(size) if size else None
    g.execute(pack, ws)  # first execute may compile / find
    for _ in range(2):
        mark = len(emulated_device.calls)
        g.execute(pack, ws)
        assert host_copies(emulated_device, mark) == [], row
    for role, p in ptrs.items():
        got = np.empty_like(outs[role])
        ctypes.memmove(got.ctypes.data, p, got.nbytes)
        outs[role] = got
    check_outputs(case, outs)
    g.close()


# ------------------------------------------------------------- batchnorm inference + activation
@pytest.mark.parametrize("lower,upper", [(None, None), (None, 0.7), (-0.3, 0.8)],
                         ids=["relu", "clipped", "clamp"])
@pytest.mark.parametrize("row", [Row.BN_INFERENCE_ACT, Row.BN_INFERENCE_INV_ACT],
                         ids=["variance", "inverse_variance"])
def test_bn_inference_activation_clips(emulated_device: EmulatedDevice,
                                       emulated_miopen_engine: MiopenEngine, row: Row,
                                       lower: float | None, upper: float | None) -> None:
    case = build(row, D.FLOAT, "NCHW", lower=lower, upper=upper)
    if lower is not None and emulated_device.version_name == "3.4":
        reason = emulated_miopen_engine.check_support(case.graph, None)
        assert reason is not None and "CLAMP" in reason and "MIOpen >= 3.5" in reason, reason
        return
    plan, outs = run_case(emulated_miopen_engine, case)
    with plan:
        assert plan.path == ("bn_activation" if emulated_device.version_name == "3.5" else "unfused")
        check_outputs(case, outs)


def test_bn_inference_activation_rules(emulated_miopen_engine: MiopenEngine) -> None:
    """AMD's fused rows: intermediate Y FP32, the activation ReLU/clipped/CLAMP only."""
    case = build(Row.BN_INFERENCE_ACT, D.HALF, "NCHW")
    bn_y = case.graph.nodes[0].outputs["Y"]
    bn_y.set_data_type(D.HALF)
    reason = emulated_miopen_engine.check_support(case.graph, None)
    assert reason is not None and "port Y" in reason and "HALF" in reason and "FLOAT" in reason
    g = Graph(io_data_type=D.FLOAT, intermediate_data_type=D.FLOAT, compute_data_type=D.FLOAT)
    x = g.tensor(dim=[2, 3, 4, 4], stride=[48, 16, 4, 1], data_type=D.FLOAT, name="x")
    ps = [g.tensor(dim=[1, 3, 1, 1], stride=[3, 1, 1, 1], data_type=D.FLOAT, name=n)
          for n in ("mean", "inv", "scale", "bias")]
    y = g.leaky_relu(g.batchnorm_inference(x, *ps, name="bn"), 0.1, name="act")
    y.set_output(True)
    g.validate()
    reason = emulated_miopen_engine.check_support(g, None)
    assert reason is not None and "relu_lower_clip_slope = 0.1" in reason and "'act'" in reason


# ------------------------------------------------------------------- standalone activations
@pytest.mark.parametrize("layout", ["NCHW", "NHWC", "NCL", "NLC", "NCDHW"])
@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
@pytest.mark.parametrize("act", list(ACTIVATIONS))
def test_standalone_activation(emulated_device: EmulatedDevice,
                               emulated_miopen_engine: MiopenEngine, act: str, dtype: str,
                               layout: str) -> None:
    case = pointwise_act_case(DTYPES[dtype], layout, act=act)
    case.graph.validate()
    if act == "clamp":  # no standalone CLAMP kernel in the real 3.4.0 or 3.5.1
        reason = emulated_miopen_engine.check_support(case.graph, None)
        assert reason is not None and "CLAMP" in reason and "ClampU" in reason, reason
        return
    plan, outs = run_case(emulated_miopen_engine, case)
    with plan:
        assert plan.path == "activation"
        assert emulated_device.calls_of("miopenActivationForward")
        check_outputs(case, outs)


def _one_node(mode: PM, dims: list[int], **kw: Any) -> tuple[Graph, Any]:
    g = Graph(io_data_type=D.FLOAT, compute_data_type=D.FLOAT)
    x = g.tensor(dim=dims, stride=[int(np.prod(dims[i + 1:])) for i in range(len(dims))],
                 data_type=D.FLOAT, name="x")
    y = g.pointwise(mode, x, name="act", **kw)
    y.set_output(True)
    g.validate()
    return g, y


def test_activation_declines_name_the_rule(emulated_miopen_engine: MiopenEngine) -> None:
    """A NaN slope (a graph whose field was written past the setter, as a deserialized one may
    be), a slope with clips, bf16: declined naming node and value; CPU_REFERENCE_ENGINE runs the
    graphs it can."""
    g, _ = _one_node(PM.RELU_FWD, [2, 3, 4, 5], relu_lower_clip_slope=0.2)
    g.nodes[0].relu_lower_clip_slope = float("nan")  # past validation, as a loaded graph may be
    reason = emulated_miopen_engine.check_support(g, None)
    assert reason is not None and "relu_lower_clip_slope = nan" in reason and "'act'" in reason

    g, _ = _one_node(PM.RELU_FWD, [2, 3, 4, 5], relu_lower_clip_slope=0.2, relu_upper_clip=1.0)
    reason = emulated_miopen_engine.check_support(g, None)
    assert reason is not None and "relu_upper_clip = 1.0" in reason and "no clips" in reason
    g.build()
    assert g.plans[0].engine.name == "CPU_REFERENCE_ENGINE"
    assert "relu_upper_clip = 1.0" in (g.engine_reasons()["MIOPEN_ENGINE"] or "")

    case = pointwise_act_case(D.BFLOAT16, "NCHW", act="relu")
    reason = emulated_miopen_engine.check_support(case.graph, None)
    assert reason is not None and "BFLOAT16" in reason and "MIOpenNeuron.cl" in reason
    case.graph.build()
    assert case.graph.plans[0].engine.name == "CPU_REFERENCE_ENGINE"


# ----------------------------------------------------------------------- standalone binary ops
#: (layout, IN_1 dims): per-channel, per-axis mixes, full shape; ranks 3 to 5.
_BINARY_SHAPES = [
    ("NCL", (1, 3, 1)), ("NCL", (2, 1, 7)), ("NCHW", (1, 3, 1, 1)), ("NCHW", (1, 1, 4, 5)),
    ("NCHW", (2, 3, 4, 5)), ("NCHW", (2, 1, 1, 5)), ("NCDHW", (1, 3, 1, 1, 1)),
    ("NCDHW", (1, 1, 2, 3, 4)),
]


@pytest.mark.parametrize("layout,b_dims", _BINARY_SHAPES,
                         ids=[f"{lay}-{'x'.join(map(str, b))}" for lay, b in _BINARY_SHAPES])
@pytest.mark.parametrize("op", list(BINARY_OPS))
def test_standalone_binary(emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine,
                           op: str, layout: str, b_dims: tuple[int, ...]) -> None:
    for dtype in (D.FLOAT, D.HALF):
        case = pointwise_binary_case(dtype, layout, op=op, b_dims=b_dims)
        case.graph.validate()
        mark = len(emulated_device.calls)
        plan, outs = run_case(emulated_miopen_engine, case)
        with plan:
            assert plan.path == "op_tensor"
            calls = [c for c in emulated_device.calls[mark:] if c.name == "miopenOpTensor"]
            assert len(calls) == 1
            check_outputs(case, outs)


def _binary_graph(a_dims: list[int], b_dims: list[int], *, a_dt: D = D.FLOAT, b_dt: D = D.FLOAT,
                  mode: PM = PM.ADD, channels_last: bool = False) -> Graph:
    from hipdnn.core.shapes import packed_strides

    def st(d: list[int]) -> list[int]:
        return list(packed_strides(d, "NHWC" if channels_last else None))

    g = Graph(io_data_type=D.FLOAT, compute_data_type=D.FLOAT)
    a = g.tensor(dim=a_dims, stride=st(a_dims), data_type=a_dt, name="a")
    b = g.tensor(dim=b_dims, stride=st(b_dims), data_type=b_dt, name="b")
    c = g.pointwise(mode, a, b, name="op")
    c.set_data_type(a_dt)
    c.set_output(True)
    if channels_last:
        c.set_stride(st(list(c.dim)))
    g.validate()
    return g


@pytest.mark.parametrize("kind,graph,want", [
    ("broadcast in_0", lambda: _binary_graph([1, 3, 1, 1], [2, 3, 4, 5]),
     ["port IN_0 (tensor 'a')", "broadcasts IN_1 only"]),
    ("mixed dtypes", lambda: _binary_graph([2, 3, 4, 5], [1, 3, 1, 1], b_dt=D.HALF),
     ["mixed data types", "IN_1 HALF", "one data type"]),
    ("channels-last", lambda: _binary_graph([2, 3, 4, 5], [1, 3, 1, 1], channels_last=True),
     ["not packed channels-first", "port IN_0"]),
    ("bf16", lambda: _binary_graph([2, 3, 4, 5], [1, 3, 1, 1], a_dt=D.BFLOAT16, b_dt=D.BFLOAT16),
     ["BFLOAT16", "FLOAT, HALF"]),
    ("rank 2", lambda: _binary_graph([6, 5], [1, 5]), ["2-d", "ranks 3 to 5"]),
])
def test_binary_declines_name_the_rule(emulated_miopen_engine: MiopenEngine, kind: str,
                                       graph: Any, want: list[str]) -> None:
    g = graph()
    reason = emulated_miopen_engine.check_support(g, None)
    assert reason is not None and "node 'op'" in reason, reason
    for w in want:
        assert w in reason, (kind, reason)
    g.build()  # the CPU engine runs it, MIOPEN_ENGINE's reason reported
    assert g.plans[0].engine.name == "CPU_REFERENCE_ENGINE"
    assert g.engine_reasons()["MIOPEN_ENGINE"] == reason


def test_binary_in_place_buffers(emulated_device: EmulatedDevice,
                                 emulated_miopen_engine: MiopenEngine) -> None:
    """OUT_0 in IN_0's buffer (the same tensor) runs right; OUT_0 over a broadcast IN_1 is a
    typed error naming the rule, nothing written, and a retry with its own buffer works."""
    case = pointwise_binary_case(D.FLOAT, "NCHW", op="add", b_dims=(1, 3, 1, 1))
    g = case.graph
    g.build()
    a_t, b_t = list(case.inputs)
    c_t = case.outputs["c"]
    a_host, b_host = case.inputs[a_t], case.inputs[b_t]
    a_ptr, b_ptr = _to_device(emulated_device, a_host), _to_device(emulated_device, b_host)
    g.execute({a_t: a_ptr, b_t: b_ptr, c_t: a_ptr}, None)  # in place on IN_0
    got = np.empty_like(a_host)
    ctypes.memmove(got.ctypes.data, a_ptr, got.nbytes)
    np.testing.assert_allclose(got, case.expected["c"], rtol=1e-6, atol=1e-6)
    big_b = _to_device(emulated_device, np.zeros(a_host.size, np.float32))
    ctypes.memmove(big_b, b_host.ctypes.data, b_host.nbytes)
    before = np.empty(a_host.size, np.float32)
    ctypes.memmove(before.ctypes.data, big_b, before.nbytes)
    with pytest.raises(VariantPackError, match="OUT_0 buffer overlaps the IN_1 buffer"):
        g.execute({a_t: a_ptr, b_t: big_b, c_t: big_b}, None)
    after = np.empty_like(before)
    ctypes.memmove(after.ctypes.data, big_b, after.nbytes)
    np.testing.assert_array_equal(after, before)
    out = _to_device(emulated_device, np.zeros(a_host.size, np.float32))
    g.execute({a_t: a_ptr, b_t: big_b, c_t: out}, None)
    g.close()


def test_new_rows_refusals_match_the_numerics_table(emulated_device: EmulatedDevice) -> None:
    """The shared refusal table covers the new rows (bf16 standalone ops, channels-last binary)."""
    v = emulated_device.version_name
    assert refusal(Row.POINTWISE_ACT, D.BFLOAT16, v) == "pointwise_bf16"
    assert refusal(Row.POINTWISE_BINARY, D.FLOAT, v, "NHWC") == "channels_first"
    assert refusal(Row.POINTWISE_BINARY, D.FLOAT, v, "NCHW") is None
