"""AMD's provider's later rows on the REAL libMIOpen (3.4.0, 3.5.1) over the stub GPU: every
standalone activation mode and binary op builds and launches (or is declined with the rule the
real library shows), bf16 as the real library answers it, and no host copy in any row's execute.

With ``HIPDNN_STUBGPU_REPORT`` set, each case appends its decision for tools/stubgpu_report.py.
"""

from __future__ import annotations

import ctypes
import json
import os
from typing import Any

import numpy as np
import pytest
from stubgpu_util import Stub
from test_miopen_engine_graphs import (
    ACTIVATIONS,
    BINARY_OPS,
    build,
    pointwise_act_case,
    pointwise_binary_case,
)

from hipdnn.core.types import DataType as D
from hipdnn.engines.miopen import Row
from hipdnn.engines.miopen.errors import MiopenExecutionError

pytest.importorskip("torch")


def _report(record: dict[str, Any]) -> None:
    path = os.environ.get("HIPDNN_STUBGPU_REPORT")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


def _device_pack(hip: Any, case: Any) -> tuple[dict[Any, Any], list[int]]:
    """The case's inputs and (NaN) outputs uploaded to device memory: tensor -> pointer."""
    pack: dict[Any, Any] = {}
    ptrs: list[int] = []

    def upload(a: np.ndarray) -> int:
        p = ctypes.c_void_p()
        hip.hipMalloc(ctypes.byref(p), max(a.nbytes, 1))
        hip.hipMemcpy(p, a.ctypes.data, a.nbytes, 1)
        ptrs.append(int(p.value or 0))
        return int(p.value or 0)

    for t, a in case.inputs.items():
        pack[t] = float(np.asarray(a).reshape(-1)[0]) if t.is_pass_by_value else upload(np.ascontiguousarray(a))
    for role, a in case.empty_outputs().items():
        pack[case.outputs[role]] = upload(np.full_like(np.ascontiguousarray(a), np.nan))
    return pack, ptrs


@pytest.mark.parametrize("row", list(Row), ids=[r.name.lower() for r in Row])
def test_no_host_copy_in_execute(stub: Stub, hip: Any, row: Row) -> None:
    """Device-pointer inputs: the stub records no HostToDevice/DeviceToHost copy while a row
    executes (the real library's own copies included), on every version and architecture."""
    _no_host_copy(stub, hip, row, "NCHW")


#: 1-D graphs (padded to N,C,L,1 at build): the same no-copy execute.
ONE_D_COPY_CASES = [(Row.CONV_FPROP, "NLC"), (Row.CONV_BIAS_ACT, "NCL"),
                    (Row.BN_INFERENCE_INV, "NCL"), (Row.BN_TRAINING_ACT, "NLC"),
                    (Row.BN_BACKWARD, "NLC")]


@pytest.mark.parametrize("row,layout", ONE_D_COPY_CASES,
                         ids=[f"{r.name.lower()}-{lay}" for r, lay in ONE_D_COPY_CASES])
def test_no_host_copy_in_execute_1d(stub: Stub, hip: Any, row: Row, layout: str) -> None:
    _no_host_copy(stub, hip, row, layout)


def _no_host_copy(stub: Stub, hip: Any, row: Row, layout: str) -> None:
    case = build(row, D.FLOAT, layout)
    g = case.graph
    g.build()
    record: dict[str, Any] = {"kind": "copies", "version": stub.version, "arch": stub.arch,
                              "row": row.name.lower()}
    if layout != "NCHW":
        record["layout"] = layout
    try:
        if g.plans[0].engine.name != "MIOPEN_ENGINE":
            record["copies"] = f"declined: {g.engine_reasons()['MIOPEN_ENGINE']}"
            if row == Row.LAYERNORM_BACKWARD and stub.version == "6.4.3":  # 3.5's call
                assert "needs miopenLayerNormBackward" in record["copies"], record
                return
            pytest.skip(record["copies"])
        pack, ptrs = _device_pack(hip, case)
        size = g.get_workspace_size()
        ws = ctypes.c_void_p()
        if size:
            hip.hipMalloc(ctypes.byref(ws), size)
        if not stub.compiles_kernels:
            pytest.skip("MIOpen 3.4.0 builds no kernel outside the toolchain root")
        g.execute(pack, ws.value if size else None)  # first execute: compiles, finds
        mark = stub.log.mark()
        g.execute(pack, ws.value if size else None)
        events = stub.log.since(mark)
        copies = [e for e in events if e["event"] == "memcpy" and e["kind"] != "DeviceToDevice"]
        record["copies"] = len(copies)
        record["kernels"] = [e["kernel"] for e in events if e["event"] == "launch"]
        assert copies == [], copies
        assert record["kernels"], "no kernel was launched"
        for p in ptrs:
            hip.hipFree(ctypes.c_void_p(p))
        if size:
            hip.hipFree(ws)
    finally:
        _report(record)
        g.close()


def _decide(stub: Stub, case: Any) -> dict[str, Any]:
    """Build with the graph API and execute (host arrays, staged); what happened."""
    g = case.graph
    out: dict[str, Any] = {}
    try:
        g.build()
        plan = g.plans[0]
        out["engine"] = plan.engine.name
        out["reason"] = g.engine_reasons()["MIOPEN_ENGINE"]
        if plan.engine.name != "MIOPEN_ENGINE":
            return out
        out["plan"] = plan.name
        if not stub.compiles_kernels:
            return out
        mark = stub.log.mark()
        outs = case.empty_outputs()
        pack = {**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}}
        ws = g.get_workspace_size()
        try:
            g.execute(pack, np.zeros(ws, np.uint8) if ws else None)
        except MiopenExecutionError as exc:
            out["execute"] = f"{exc.function}: status {exc.status}"
        out["kernels"] = [e["kernel"] for e in stub.log.since(mark) if e["event"] == "launch"]
        return out
    finally:
        g.close()


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
@pytest.mark.parametrize("act", list(ACTIVATIONS))
def test_standalone_activation_modes(stub: Stub, act: str, dtype: str) -> None:
    """Each standalone activation: built and launched as MIOpenActiveFwd, except CLAMP, which the
    real library cannot run standalone (3.4: no CLAMP in MIOpenNeuron.cl; 3.5.1: its CLAMP kernel
    does not compile) and MIOPEN_ENGINE declines naming that."""
    case = pointwise_act_case(D.FLOAT if dtype == "fp32" else D.HALF, "NCHW", act=act)
    got = _decide(stub, case)
    _report({"kind": "activation", "version": stub.version, "arch": stub.arch, "act": act,
             "dtype": dtype, **got})
    if act == "clamp":
        assert got["engine"] == "CPU_REFERENCE_ENGINE", got
        assert "CLAMP" in got["reason"], got
        return
    assert got["engine"] == "MIOPEN_ENGINE", got
    if stub.compiles_kernels:
        assert "execute" not in got, got
        assert len(got["kernels"]) == 1 and got["kernels"][0].startswith("MIOpenActiveFwd"), got


@pytest.mark.parametrize("op", list(BINARY_OPS))
def test_standalone_binary_ops(stub: Stub, op: str) -> None:
    """Each binary op (ranks 3, 4, 5; IN_1 per channel) built and launched as one tensor-op kernel."""
    for layout in ("NCL", "NCHW", "NCDHW"):
        case = pointwise_binary_case(D.FLOAT, layout, op=op)
        got = _decide(stub, case)
        _report({"kind": "binary", "version": stub.version, "arch": stub.arch, "op": op,
                 "layout": layout, **got})
        assert got["engine"] == "MIOPEN_ENGINE", got
        if stub.compiles_kernels:
            assert "execute" not in got, got
            assert len(got["kernels"]) == 1, got


def _raw_status(fn: Any) -> str:
    try:
        fn()
    except Exception as exc:  # the binding's typed error: what the real library answered
        return f"{type(exc).__name__}: {getattr(exc, 'status', '')}"
    return "ok"


def test_bf16_pointwise_as_the_real_library_answers(stub: Stub, lib: Any, hip: Any) -> None:
    """bf16 standalone ops (declined, as AMD's provider declines them): what the real library
    does with them, called directly: the activation kernels have no bf16 type, the tensor-op
    kernels are recorded as they answer."""
    from hipdnn.engines.miopen.descriptors import ActivationDesc, TensorDesc
    from hipdnn.engines.miopen.fusion import ONE, ZERO
    from miopen_ctypes import types as mt

    h = mt.miopenHandle_t()
    lib.miopenCreate(ctypes.byref(h))
    dims, strides = (2, 3, 4, 5), (60, 20, 5, 1)
    x = TensorDesc(lib, D.BFLOAT16, dims, strides)
    b = TensorDesc(lib, D.BFLOAT16, (1, 3, 1, 1), (3, 1, 1, 1))
    act = ActivationDesc(lib, 3, 0.0, 0.0, 0.0)
    buf = ctypes.c_void_p()
    hip.hipMalloc(ctypes.byref(buf), 4096)
    p = buf.value
    answers = {
        "miopenActivationForward": _raw_status(lambda: lib.miopenActivationForward(
            h, act.raw, ONE, x.raw, p, ZERO, x.raw, p + 2048)),
        "miopenOpTensor": _raw_status(lambda: lib.miopenOpTensor(
            h, 0, ONE, x.raw, p, ONE, b.raw, p + 1024, ZERO, x.raw, p + 2048)),
    }
    _report({"kind": "bf16_probe", "version": stub.version, "arch": stub.arch, **answers})
    if stub.compiles_kernels:
        assert answers["miopenActivationForward"] != "ok", answers
    for d in (x, b, act):
        d.close()
    hip.hipFree(buf)
    lib.miopenDestroy(h)


@pytest.mark.parametrize("lower,upper", [(None, 0.7), (-0.3, 0.8)], ids=["clipped", "clamp"])
@pytest.mark.parametrize("row", [Row.BN_INFERENCE_ACT, Row.BN_INFERENCE_INV_ACT],
                         ids=["variance", "inverse_variance"])
def test_bn_inference_activation_clips(stub: Stub, row: Row, lower: float | None,
                                       upper: float | None) -> None:
    """Clipped ReLU and CLAMP after batchnorm inference: 3.5.1 fuses both in its batchnorm
    inference kernel; 3.4 runs the clipped ReLU standalone and declines CLAMP (no such mode)."""
    case = build(row, D.FLOAT, "NCHW", lower=lower, upper=upper)
    got = _decide(stub, case)
    _report({"kind": "bn_inf_act_clips", "version": stub.version, "arch": stub.arch,
             "row": row.name.lower(), "lower": lower, "upper": upper, **got})
    if stub.version == "6.4.3" and lower is not None:
        assert got["engine"] == "CPU_REFERENCE_ENGINE" and "CLAMP" in got["reason"], got
        return
    assert got["engine"] == "MIOPEN_ENGINE", got
    if stub.compiles_kernels:
        assert "execute" not in got, got


_DET_CASES = [(row, dtype, layout) for row in (Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD)
              for dtype in ("fp32", "fp16") for layout in ("NCHW", "NHWC")]


@pytest.mark.parametrize("row,dtype,layout", _DET_CASES,
                         ids=[f"{r.name.lower()}-{d}-{lay}" for r, d, lay in _DET_CASES])
def test_deterministic_solution_list(stub: Stub, row: Row, dtype: str, layout: str) -> None:
    """The real library's applicable solutions under MIOPEN_CONVOLUTION_ATTRIB_DETERMINISTIC are
    a non-empty subset of the default list (on these Debian builds and shapes the lists are
    equal: their applicable solvers, naive and GEMM, are deterministic; the atomic split-K
    solvers MIOpen drops under the attribute are not among them); the descriptor the
    MIOPEN_ENGINE_DETERMINISTIC plan owns holds the attribute, its solution is in the list and its
    kernels launch."""
    from hipdnn.backend.registry import registry
    from hipdnn.engines.miopen.patterns import match

    engines = {e.name: e for e in registry().values()}
    default, det = engines["MIOPEN_ENGINE"], engines["MIOPEN_ENGINE_DETERMINISTIC"]
    case = build(row, D.FLOAT if dtype == "fp32" else D.HALF, layout)
    g = case.graph
    g.validate()
    state = default.handle_state(g.handle)  # type: ignore[attr-defined]
    every = default._solutions(match(g), state)  # type: ignore[attr-defined]
    only = det._solutions(det.match(g), det.handle_state(g.handle))  # type: ignore[attr-defined]
    ids, det_ids = [s for s, _ in every], [s for s, _ in only]
    record = {"kind": "deterministic", "version": stub.version, "arch": stub.arch,
              "row": row.name.lower(), "dtype": dtype, "layout": layout, "solutions": ids,
              "deterministic": det_ids, "excluded": sorted(set(ids) - set(det_ids))}
    try:
        assert det_ids and set(det_ids) <= set(ids), record
        g.build_operation_graph()
        g.create_execution_plan_ext("MIOPEN_ENGINE_DETERMINISTIC", {"global.benchmarking": 0})
        g.build_plans()
        plan = g.plans[0]
        assert plan.engine is det
        record["plan"] = plan.name
        record["solution"] = plan.solution_id
        assert plan.solution_id in det_ids
        from hipdnn.engines.miopen.descriptors import ConvDesc
        from miopen_ctypes.enums import miopenConvolutionAttrib_t as A

        held = []
        for o in plan.miopen_objects:  # what the real library holds on the descriptor
            if isinstance(o, ConvDesc):
                v = ctypes.c_int(-1)
                det.libraries()[0].miopenGetConvolutionAttribute(  # type: ignore[attr-defined]
                    o.raw, A.MIOPEN_CONVOLUTION_ATTRIB_DETERMINISTIC, ctypes.byref(v))
                held.append(v.value)
        assert held == [1], held
        if stub.compiles_kernels:
            mark = stub.log.mark()
            outs = case.empty_outputs()
            ws = g.get_workspace_size()
            g.execute({**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}},
                      np.zeros(ws, np.uint8) if ws else None)
            record["kernels"] = [e["kernel"] for e in stub.log.since(mark) if e["event"] == "launch"]
            assert record["kernels"]
    finally:
        _report(record)
        g.close()
