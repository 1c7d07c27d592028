"""conv_dgrad / conv_wgrad whose output strides are left to inference run on MIOPEN_ENGINE.

The output follows its data input's layout (hipdnn/ir/nodes/conv.py; AMD hipDNN's frontend rule), so
NCHW DY and W give an NCHW DX (it used to be channels-last, a mixed-layout problem the engine
declined, leaving the graph to CPU_REFERENCE_ENGINE). Numbers vs PyTorch; the real library's
acceptance of the same graphs: tests/stubgpu/test_inferred_layout.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from emulated.device import EmulatedDevice

from hipdnn import DataType, Graph
from hipdnn.engines.miopen import MiopenEngine

torch = pytest.importorskip("torch")


def _t(shape: tuple[int, ...], layout: str, seed: int) -> Any:
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(shape, generator=g)
    return t.to(memory_format=torch.channels_last) if layout == "NHWC" else t.contiguous()


def grad_graph(op: str, layout: str) -> tuple[Graph, Any, dict[Any, Any], Any, Any]:
    """(graph, inferred output tensor, pack without the output, output buffer, expected)."""
    x, w = _t((2, 3, 6, 6), layout, 1), _t((4, 3, 3, 3), layout, 2)
    dy = _t((2, 4, 6, 6), layout, 3)
    g = Graph(io_data_type=DataType.FLOAT, compute_data_type=DataType.FLOAT)
    if op == "dgrad":
        DY, W = g.tensor_like(dy, "dy"), g.tensor_like(w, "w")
        out = g.conv_dgrad(DY, W, padding=[1, 1], name="dgrad")
        pack: dict[Any, Any] = {DY: dy, W: w}
        want = torch.nn.grad.conv2d_input(x.shape, w, dy, padding=1)
        buf = torch.empty_like(x)
    else:
        X, DY = g.tensor_like(x, "x"), g.tensor_like(dy, "dy")
        out = g.conv_wgrad(X, DY, padding=[1, 1], name="wgrad")
        pack = {X: x, DY: dy}
        want = torch.nn.grad.conv2d_weight(x, w.shape, dy, padding=1)
        buf = torch.empty_like(w)
    out.set_output(True)
    g.validate()
    return g, out, pack, buf, want


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("op", ["dgrad", "wgrad"])
def test_inferred_gradient_layout_runs_on_miopen(emulated_device: EmulatedDevice,
                                                 emulated_miopen_engine: MiopenEngine,
                                                 op: str, layout: str) -> None:
    g, out, pack, buf, want = grad_graph(op, layout)
    assert out.get_stride() == list(buf.stride())  # the input's layout
    assert emulated_miopen_engine.check_support(g, None) is None
    g.build()
    try:
        plan = g.plans[0]
        assert plan.engine.name == "MIOPEN_ENGINE", g.engine_reasons()
        ws = g.get_workspace_size()
        g.execute({**pack, out: buf}, torch.empty(ws, dtype=torch.uint8) if ws else None)
        torch.testing.assert_close(buf, want, atol=2e-5, rtol=2e-5)
    finally:
        g.close()
