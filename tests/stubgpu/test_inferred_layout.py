"""conv_dgrad / conv_wgrad with NCHW inputs and the output's strides left to inference, on the
REAL libMIOpen: the inferred output is NCHW too (hipdnn/ir/nodes/conv.py), MIOPEN_ENGINE builds the
plan from the real solution list and its kernels launch with no failing call (nothing is
computed here; the numbers: tests/emulated/test_miopen_engine_inferred_layout.py).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from stubgpu_util import Stub, without_compiler
from test_decisions import SOLUTION_KERNELS

from hipdnn import DataType, Graph


def _graph(op: str) -> tuple[Graph, Any, dict[Any, Any], np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 6), np.float32)
    w = rng.standard_normal((4, 3, 3, 3), np.float32)
    dy = rng.standard_normal((2, 4, 6, 6), np.float32)
    g = Graph(io_data_type=DataType.FLOAT, compute_data_type=DataType.FLOAT)
    if op == "dgrad":
        DY, W = g.tensor_like(dy, "dy"), g.tensor_like(w, "w")
        out = g.conv_dgrad(DY, W, padding=[1, 1], name="dgrad")
        return g, out, {DY: dy, W: w}, np.full_like(x, np.nan)
    X, DY = g.tensor_like(x, "x"), g.tensor_like(dy, "dy")
    out = g.conv_wgrad(X, DY, padding=[1, 1], name="wgrad")
    return g, out, {X: x, DY: dy}, np.full_like(w, np.nan)


@pytest.mark.parametrize("op", ["dgrad", "wgrad"])
def test_nchw_gradient_with_inferred_output_strides_on_the_real_library(stub: Stub, op: str) -> None:
    g, out, pack, buf = _graph(op)
    out.set_output(True)
    try:
        g.build()
        assert out.get_stride() == [int(s) // 4 for s in buf.strides]  # NCHW, like the input
        reason = g.engine_reasons()["MIOPEN_ENGINE"]
        plan = g.plans[0]
        if not stub.compiles_kernels and reason is not None:  # 3.4.0 without clang-21
            assert "CompileSolution failed" in reason and "(7)" in reason, reason
            without_compiler(stub, reason)
        assert plan.engine.name == "MIOPEN_ENGINE", reason
        assert plan.path == "immediate"
        mark = stub.log.mark()
        ws = g.get_workspace_size()
        g.execute({**pack, out: buf}, np.zeros(ws, np.uint8) if ws else None)
        events = stub.log.since(mark)
        assert not [e for e in events if e["event"] == "error"]
        kernels = [e["kernel"] for e in events if e["event"] == "launch"]
        sid = plan.solution_id
        assert kernels and sid in SOLUTION_KERNELS, (sid, kernels)
        assert all(re.match(SOLUTION_KERNELS[sid], k) for k in kernels), (sid, kernels)
    finally:
        g.close()
