"""hipdnn.precompile: a list of graphs built by N worker threads, each on its own Handle, one
progress display, a summary (built / declined with reasons / time each); the plans are the ones
one-by-one builds choose, and the graphs execute at once (emulated device, checked against
PyTorch)."""

from __future__ import annotations

import numpy as np
import pytest
from emulated.device import EmulatedDevice
from test_miopen_engine_graphs import build
from test_miopen_engine_numerics import check_outputs

import hipdnn
from hipdnn.core.errors import ArgumentError
from hipdnn.core.types import DataType as D
from hipdnn.engines.miopen import MiopenEngine, Row
from hipdnn.pipeline.plan_cache import clear_plan_cache

pytest.importorskip("torch")

ROWS = [(Row.CONV_FPROP, D.HALF, "NHWC"), (Row.CONV_DGRAD, D.FLOAT, "NCHW"),
        (Row.CONV_WGRAD, D.FLOAT, "NHWC"), (Row.CONV_BIAS_ACT, D.HALF, "NHWC"),
        (Row.BN_TRAINING, D.FLOAT, "NCHW"), (Row.BN_INFERENCE, D.FLOAT, "NHWC")]


def _declined_graph() -> hipdnn.Graph:
    """A graph no engine runs (true convolution, not cross-correlation)."""
    g = hipdnn.Graph(name="true_convolution", io_data_type=D.FLOAT, compute_data_type=D.FLOAT)
    x = g.tensor(dim=[1, 4, 8, 8], name="x")
    w = g.tensor(dim=[4, 4, 3, 3], name="w")
    g.conv_fprop(x, w, padding=[1, 1], convolution_mode="CONVOLUTION", name="conv").set_output(True)
    return g


@pytest.mark.parametrize("workers", [1, 3])
def test_precompile_builds_what_one_by_one_builds(emulated_device: EmulatedDevice,
                                                  emulated_miopen_engine: MiopenEngine,
                                                  workers: int) -> None:
    clear_plan_cache()
    alone = []
    for row, dt, layout in ROWS:
        case = build(row, dt, layout)
        case.graph.build()
        alone.append(case.graph.get_plan_name())
        case.graph.close()
    clear_plan_cache()
    cases = [build(row, dt, layout) for row, dt, layout in ROWS]
    for i, c in enumerate(cases):
        c.graph.set_name(f"g{i}")
    graphs = [c.graph for c in cases] + [_declined_graph()]
    summary = hipdnn.precompile(graphs, workers=workers, progress=False)
    assert [r.graph for r in summary.results] == [g.name for g in graphs]
    assert [r.plan for r in summary.built] == alone
    assert all(r.plan.startswith(f"{r.engine}:") and r.seconds >= 0 for r in summary.built)
    (declined,) = summary.declined
    assert declined.status == "declined" and declined.graph == "true_convolution"
    assert "MIOPEN_ENGINE" in (declined.reason or "") and "CROSS_CORRELATION" in (declined.reason or "")
    handles = {id(c.graph.handle) for c in cases}
    assert 1 <= len(handles) <= workers  # each worker's own Handle
    assert hipdnn.default_handle() not in [c.graph.handle for c in cases]
    text = str(summary)
    assert f"with {workers} worker(s)" in text and "6 built, 1 not built" in text
    for case in cases:  # built on their worker's Handle: they run at once
        outs = case.empty_outputs()
        pack = {**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}}
        ws = case.graph.get_workspace_size()
        case.graph.execute(pack, np.zeros(ws, np.uint8) if ws else None)
        check_outputs(case, outs)


def test_precompile_with_knobs_runs_find(emulated_device: EmulatedDevice,
                                         emulated_miopen_engine: MiopenEngine) -> None:
    clear_plan_cache()
    cases = [build(Row.CONV_FPROP, D.FLOAT, "NCHW"), build(Row.BN_TRAINING, D.FLOAT, "NCHW")]
    before = len(emulated_device.find_records)
    summary = hipdnn.precompile([c.graph for c in cases], workers=2, progress=False,
                                knobs={"global.benchmarking": 1})
    assert [r.status for r in summary.results] == ["built", "built"]
    assert cases[0].graph.plans[0].path == "find2"
    assert len(emulated_device.find_records) == before + 1


def test_precompile_refuses_bad_arguments() -> None:
    with pytest.raises(ArgumentError, match="workers"):
        hipdnn.precompile([], workers=0)
    with pytest.raises(ArgumentError, match=r"not a hipdnn\.Graph"):
        hipdnn.precompile(["g"])  # type: ignore[list-item]
    assert hipdnn.precompile([], workers=2).results == []
