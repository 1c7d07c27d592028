"""Dense tensors with a size-1 axis on the REAL libMIOpen (issue 29, defect 7): the graphs of
tests/emulated/test_miopen_engine_size1_layouts.py (a C=1 NHWC input with Y's strides left to
inference, a K=1 NHWC DY with DX's left to inference, an N=1 NHWC input whose N stride is not
the packed one, a C=1 NCHW input with NHWC W and Y) were declined before; MIOPEN_ENGINE now
builds them from the real solution list and their kernels launch with no failing call (nothing
is computed here; the numbers are checked on the emulated device).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from stubgpu_util import Stub
from test_decisions import SOLUTION_KERNELS

from hipdnn import DataType, Graph, packed_strides

F = DataType.FLOAT


def _graph(case: str) -> tuple[Graph, object, dict[object, np.ndarray]]:
    rng = np.random.default_rng(0)
    g = Graph(io_data_type=F, compute_data_type=F)

    def t(dim: list[int], stride: list[int] | tuple[int, ...], name: str) -> object:
        return g.tensor(dim=dim, stride=list(stride), name=name)

    def data(dim: list[int]) -> np.ndarray:
        return rng.standard_normal(int(np.prod(dim)), np.float32)

    if case == "c1_nhwc_inferred_y":
        x, w = t([2, 1, 5, 5], [25, 1, 5, 1], "x"), t([3, 1, 3, 3], [9, 1, 3, 1], "w")
        out = g.conv_fprop(x, w, padding=[1, 1], name="conv")
        return g, out, {x: data([2, 1, 5, 5]), w: data([3, 1, 3, 3])}
    if case == "k1_nhwc_dy_inferred_dx":
        dy, w = t([1, 1, 5, 5], [25, 1, 5, 1], "dy"), t([1, 2, 3, 3], [18, 1, 6, 2], "w")
        out = g.conv_dgrad(dy, w, padding=[1, 1], name="dgrad")
        return g, out, {dy: data([1, 1, 5, 5]), w: data([1, 2, 3, 3])}
    if case == "n1_nhwc_any_n_stride":
        x = t([1, 4, 5, 5], [7, 1, 20, 4], "x")
        w = t([6, 4, 3, 3], packed_strides([6, 4, 3, 3], "NHWC"), "w")
        out = g.conv_fprop(x, w, padding=[1, 1], name="conv")
        return g, out, {x: data([1, 4, 5, 5]), w: data([6, 4, 3, 3])}
    x, w = t([2, 1, 5, 5], [25, 25, 5, 1], "x"), t([3, 1, 3, 3], [9, 1, 3, 1], "w")
    out = g.conv_fprop(x, w, padding=[1, 1], name="conv")
    out.set_stride(packed_strides([2, 3, 5, 5], "NHWC"))
    return g, out, {x: data([2, 1, 5, 5]), w: data([3, 1, 3, 3])}


@pytest.mark.parametrize("case", ["c1_nhwc_inferred_y", "k1_nhwc_dy_inferred_dx",
                                  "n1_nhwc_any_n_stride", "c1_nchw_x_nhwc_w_and_y"])
def test_size1_axes_build_and_launch_on_the_real_library(stub: Stub, case: str) -> None:
    g, out, pack = _graph(case)
    out.set_output(True)
    try:
        g.build()
        reason = g.engine_reasons()["MIOPEN_ENGINE"]
        plan = g.plans[0]
        if not stub.compiles_kernels and reason is not None:  # 3.4.0 without clang-21
            assert "CompileSolution failed" in reason and "(7)" in reason, reason
            return
        assert plan.engine.name == "MIOPEN_ENGINE", reason
        mark = stub.log.mark()
        ws = g.get_workspace_size()
        buf = np.full(int(np.prod(out.get_dim())), np.nan, np.float32)
        g.execute({**pack, out: buf}, np.zeros(ws, np.uint8) if ws else None)
        events = stub.log.since(mark)
        assert not [e for e in events if e["event"] == "error"]
        kernels = [e["kernel"] for e in events if e["event"] == "launch"]
        sid = plan.solution_id
        assert kernels and sid in SOLUTION_KERNELS, (sid, kernels)
        assert all(re.match(SOLUTION_KERNELS[sid], k) for k in kernels), (sid, kernels)
    finally:
        g.close()
