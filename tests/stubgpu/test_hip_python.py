"""hip-python (AMD's HIP bindings, the ``test`` extra) on the stub GPU: its stream is accepted by
a hipdnn Handle, its ``hipMalloc`` memory in variant packs and workspaces, and hipdnn's results
are read back with its ``hipMemcpy``. The stub computes nothing: what comes back is what MIOpen's
recorded kernels left there (the stub never runs them), so the check is on the calls and bytes
that moved, not on values."""

from __future__ import annotations

from typing import Any

import numpy as np
from stubgpu_util import Stub
from test_miopen_engine_graphs import build

from hipdnn.core.handle import Handle
from hipdnn.core.types import DataType
from hipdnn.engines.miopen import Row


def _ok(result: Any) -> Any:
    from hip import hip

    err, *rest = result if isinstance(result, tuple) else (result,)
    assert err == hip.hipError_t.hipSuccess, err
    return rest[0] if len(rest) == 1 else rest


def test_hip_python_stream_memory_and_readback(stub: Stub) -> None:
    from hip import hip

    stream = _ok(hip.hipStreamCreate())
    h = Handle(stream=int(stream))
    case = build(Row.CONV_FPROP, DataType.FLOAT, "NCHW")
    g = case.graph
    g.build()
    plan = g.plans[0]
    assert plan.engine.name == "MIOPEN_ENGINE"
    ptrs: dict[Any, Any] = {}
    keep = []
    for t, a in case.inputs.items():
        p = _ok(hip.hipMalloc(a.nbytes))
        _ok(hip.hipMemcpy(p, a.ctypes.data, a.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
        ptrs[t] = int(p)
        keep.append(p)
    out_role, out = next(iter(case.empty_outputs().items()))
    y = _ok(hip.hipMalloc(out.nbytes))
    ptrs[case.outputs[out_role]] = int(y)
    ws = _ok(hip.hipMalloc(max(plan.workspace_size, 1)))
    mark = stub.log.mark()
    g.execute(ptrs, int(ws), handle=h)
    back = np.full_like(out, 7.0)
    _ok(hip.hipMemcpy(back.ctypes.data, y, out.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
    events = stub.log.since(mark)
    launches = [e for e in events if e["event"] == "launch"]
    assert launches and all(e["stream"] == int(stream) for e in launches), launches[-3:]  # hip-python's stream
    assert not (back == 7.0).all()  # the bytes came back from the stub's device memory
    for p in (*keep, y, ws):
        _ok(hip.hipFree(p))
    _ok(hip.hipStreamDestroy(stream))
