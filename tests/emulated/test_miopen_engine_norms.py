"""Layer norm and RMS norm on MIOPEN_ENGINE (emulated MIOpen 3.4 / 3.5): the graph's axes and
attributes reach MIOpen's calls exactly (normalized_dim, epsilon, the mode, the descriptors in
memory order), INFERENCE keeps the statistics in the workspace, the backward calls get the
workspace MIOpen asks for, and what MIOpen cannot express is declined naming the rule while the
CPU engine runs the graph. Every row x dtype x layout against PyTorch: test_miopen_engine_numerics.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from emulated.device import EmulatedDevice
from test_miopen_engine_graphs import norm_case
from test_miopen_engine_numerics import check_outputs, run_case

from hipdnn.core.types import DataType as D
from hipdnn.engines.miopen import MiopenEngine, Row
from hipdnn.graph.graph import Graph

pytest.importorskip("torch")


def _args(device: EmulatedDevice, name: str) -> Any:
    calls = device.calls_of(name)
    assert calls, f"{name} was not called"
    return SimpleNamespace(**dict(zip(calls[-1].names, calls[-1].args, strict=True)))


@pytest.mark.parametrize("training", [True, False], ids=["training", "inference"])
@pytest.mark.parametrize("row", [Row.LAYERNORM, Row.RMSNORM], ids=["layernorm", "rmsnorm"])
def test_forward_attributes_reach_miopen(emulated_device: EmulatedDevice,
                                         emulated_miopen_engine: MiopenEngine, row: Row,
                                         training: bool) -> None:
    """A transformer-shaped X (B, S, E) normalized over E: normalized_dim 2, the graph's epsilon,
    the weight/bias mode; INFERENCE's statistics go to the workspace (one per row each)."""
    case = norm_case(row, D.FLOAT, "NCL", dims=(3, 5, 40), training=training, eps=3e-3,
                     last_only=True)
    plan, outs = run_case(emulated_miopen_engine, case)
    with plan:
        check_outputs(case, outs)
        layer = row == Row.LAYERNORM
        args = _args(emulated_device, "miopenLayerNormForward" if layer else "miopenT5LayerNormForward")
        assert math.isclose(args.epsilon, 3e-3, rel_tol=1e-6)
        assert args.mode == (1 if layer else 5)  # MIOPEN_WEIGHT_BIAS / MIOPEN_WEIGHT_BIAS_T5
        if layer:
            assert args.normalized_dim == 2
        stats = 2 if layer else 1
        assert plan.workspace_size == (0 if training else (stats - 1) * 256 + 15 * 4)


def test_channels_last_normalizes_innermost_c(emulated_device: EmulatedDevice,
                                              emulated_miopen_engine: MiopenEngine) -> None:
    """X NHWC normalized over C: MIOpen is given (N, H, W, C) with normalized_dim 3."""
    case = norm_case(Row.LAYERNORM, D.FLOAT, "NHWC")
    plan, outs = run_case(emulated_miopen_engine, case)
    with plan:
        check_outputs(case, outs)
        args = _args(emulated_device, "miopenLayerNormForward")
        assert args.normalized_dim == 3
        x = emulated_device.tensor_desc(args.xDesc, "xDesc")
        assert x.dims == (2, 4, 5, 3) and x.is_nchw_packed  # X (2, 3, 4, 5) in memory order


def test_backward_gets_the_workspace_miopen_asks_for(emulated_device: EmulatedDevice,
                                                     emulated_miopen_engine: MiopenEngine) -> None:
    """Enough rows that MIOpen's backward kernels sum dscale in parallel: the plan's workspace is
    the size miopenGet[T5]LayerNormBackwardWorkspaceSize answered, handed to the call."""
    rows = (Row.RMSNORM_BACKWARD,) if emulated_device.version_name == "3.4" else (
        Row.RMSNORM_BACKWARD, Row.LAYERNORM_BACKWARD)
    for row in rows:
        case = norm_case(row, D.FLOAT, "NCL", dims=(64, 128, 64), last_only=True)
        plan, outs = run_case(emulated_miopen_engine, case)
        with plan:
            check_outputs(case, outs)
            name = "miopenLayerNormBackward" if row == Row.LAYERNORM_BACKWARD else "miopenT5LayerNormBackward"
            args = _args(emulated_device, name)
            assert args.workspaceSizeInBytes > 0 and plan.workspace_size >= args.workspaceSizeInBytes


def _graph(dtype: D = D.FLOAT) -> Graph:
    return Graph(io_data_type=dtype, intermediate_data_type=D.FLOAT, compute_data_type=D.FLOAT)


def _declined(emulated_miopen_engine: MiopenEngine, g: Graph, *phrases: str) -> str:
    g.validate()
    reason = emulated_miopen_engine.check_support(g, None)
    assert reason is not None
    for p in phrases:
        assert p in reason, reason
    g.build()
    assert g.plans[0].engine.name == "CPU_REFERENCE_ENGINE"
    assert p in g.engine_reasons()["MIOPEN_ENGINE"]
    return reason


def test_declines_name_the_rule(emulated_device: EmulatedDevice,
                                emulated_miopen_engine: MiopenEngine) -> None:
    # RMS norm with a bias: T5 layer norm has none
    g = _graph()
    x = g.tensor(dim=[2, 3, 8], stride=[24, 8, 1], data_type=D.FLOAT, name="x")
    s = g.tensor(dim=[1, 1, 8], stride=[8, 8, 1], data_type=D.FLOAT, name="s")
    b = g.tensor(dim=[1, 1, 8], stride=[8, 8, 1], data_type=D.FLOAT, name="b")
    y, _ = g.rmsnorm("INFERENCE", x, s, b, epsilon=1e-5, name="rms")
    y.set_output(True)
    _declined(emulated_miopen_engine, g, "node 'rms'", "port BIAS", "has no bias")
    # RMS norm backward with dbias
    g = _graph()
    x, dy = (g.tensor(dim=[2, 3, 8], stride=[24, 8, 1], data_type=D.FLOAT, name=n) for n in "x dy".split())
    s = g.tensor(dim=[1, 1, 8], stride=[8, 8, 1], data_type=D.FLOAT, name="s")
    inv = g.tensor(dim=[2, 3, 1], stride=[3, 1, 1], data_type=D.FLOAT, name="inv")
    for t in g.rmsnorm_backward(dy, x, s, inv, True, name="rmsb"):
        assert t is not None
        t.set_output(True)
    _declined(emulated_miopen_engine, g, "DBIAS", "dx and dscale only")
    # fp16 data with FLOAT statistics: MIOpen writes them in the data type
    g = _graph(D.HALF)
    x = g.tensor(dim=[2, 3, 8], stride=[24, 8, 1], data_type=D.HALF, name="x")
    s = g.tensor(dim=[1, 1, 8], stride=[8, 8, 1], data_type=D.HALF, name="s")
    b = g.tensor(dim=[1, 1, 8], stride=[8, 8, 1], data_type=D.HALF, name="b")
    outs = g.layernorm("TRAINING", x, s, b, epsilon=1e-5, name="ln")
    for t in outs:
        assert t is not None
        t.set_output(True)
    _declined(emulated_miopen_engine, g, "port MEAN", "FLOAT but X is HALF", "give MEAN as HALF")
    # the normalized axis (C) is not innermost in an NCHW X
    g = _graph()
    x = g.tensor(dim=[2, 3, 4, 5], stride=[60, 20, 5, 1], data_type=D.FLOAT, name="x")
    s = g.tensor(dim=[1, 3, 1, 1], stride=[3, 1, 1, 1], data_type=D.FLOAT, name="s")
    b = g.tensor(dim=[1, 3, 1, 1], stride=[3, 1, 1, 1], data_type=D.FLOAT, name="b")
    y, _, _ = g.layernorm("INFERENCE", x, s, b, epsilon=1e-5, name="ln")
    y.set_output(True)
    _declined(emulated_miopen_engine, g, "normalized axes [1]", "not the innermost")
    # instance norm: MIOpen has no call for it
    g = _graph()
    x = g.tensor(dim=[2, 3, 4, 5], stride=[60, 20, 5, 1], data_type=D.FLOAT, name="x")
    s = g.tensor(dim=[1, 3, 1, 1], stride=[3, 1, 1, 1], data_type=D.FLOAT, name="s")
    b = g.tensor(dim=[1, 3, 1, 1], stride=[3, 1, 1, 1], data_type=D.FLOAT, name="b")
    y, _, _ = g.instancenorm("INFERENCE", x, s, b, epsilon=1e-5, name="inorm")
    y.set_output(True)
    _declined(emulated_miopen_engine, g, "instancenorm")


def test_inference_statistics_never_reach_the_pack(emulated_device: EmulatedDevice,
                                                   emulated_miopen_engine: MiopenEngine) -> None:
    """INFERENCE: MIOpen writes mean/rstd into the plan's workspace, not into any pack buffer."""
    case = norm_case(Row.LAYERNORM, D.HALF, "NDHWC", training=False)
    plan, outs = run_case(emulated_miopen_engine, case)
    with plan:
        check_outputs(case, outs)
        assert set(outs) == {"y"} and plan.workspace_size > 0
        assert not np.isnan(outs["y"].astype(np.float32)).any()
