"""FP16/BF16 convolution + bias + ReLU written the way cudnn-frontend's samples write it: I/O in
the half type, intermediates and compute FP32 (no per-node compute type on the bias ADD).

MIOPEN_ENGINE takes it (it used to decline it for the ADD's FP32 compute type): MIOpen adds the
bias in the convolution's data type, a result within the half type's tolerance. A bias given in
FP32 while the data is FP16 is declined with the reason (the real library's refusal is checked
in tests/stubgpu/test_mixed_precision.py) and runs on CPU_REFERENCE_ENGINE.
"""

from __future__ import annotations

import numpy as np
import pytest
from emulated.device import EmulatedDevice
from test_miopen_engine_graphs import build
from test_miopen_engine_numerics import check_outputs, run_case

from hipdnn.core.types import DataType as D
from hipdnn.engines.miopen import MiopenEngine, Row
from hipdnn.engines.miopen.patterns import match
from hipdnn.engines.miopen.rules import Declined


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_fp16_conv_bias_relu_fp32_compute_runs_on_miopen(
        emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine, layout: str) -> None:
    case = build(Row.CONV_BIAS_ACT, D.HALF, layout, bias_compute=D.NOT_SET)
    assert case.graph.nodes[1].compute_data_type == D.FLOAT  # filled from the graph's default
    plan, outs = run_case(emulated_miopen_engine, case)
    with plan:
        assert plan.row == Row.CONV_BIAS_ACT
        check_outputs(case, outs)


def test_explicit_fp32_bias_compute_is_the_same_row() -> None:
    """FLOAT on the ADD node itself (as well as the graph default) matches too."""
    m = match(build(Row.CONV_BIAS_ACT, D.HALF, "NCHW", bias_compute=D.FLOAT).graph)
    assert m.row == Row.CONV_BIAS_ACT and m.data_type == D.HALF


def test_other_bias_compute_types_still_declined() -> None:
    case = build(Row.CONV_BIAS_ACT, D.HALF, "NCHW", bias_compute=D.BFLOAT16)
    with pytest.raises(Declined, match=r"compute data type BFLOAT16.*FLOAT or the input type HALF"):
        match(case.graph)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_fp32_bias_with_fp16_data_declined_with_reason_and_falls_back(
        emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine, layout: str) -> None:
    case = build(Row.CONV_BIAS_ACT, D.HALF, layout, bias_compute=D.NOT_SET, bias_dtype=D.FLOAT)
    reason = emulated_miopen_engine.check_support(case.graph, None)
    assert reason is not None
    assert "bias 'b') is FLOAT but the convolution's data type is HALF" in reason, reason
    assert "Datatypes for B and C tensors do not match" in reason and "give the bias as HALF" in reason
    g = case.graph
    g.build()
    try:
        assert g.plans[0].engine.name == "CPU_REFERENCE_ENGINE"
        outs = case.empty_outputs()
        pack = dict(case.inputs)
        pack.update({case.outputs[r]: a for r, a in outs.items()})
        g.execute(pack)
        check_outputs(case, outs)
        assert not np.isnan(outs["y"].astype(np.float32)).any()
    finally:
        g.close()
