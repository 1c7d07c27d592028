"""With the documented switches (stubgpu_util.SWITCHES: no Winograd RxS f2x3, no GCN asm
kernels, whose sources Debian's builds lack), on the stub gfx942: the real Find 2.0 with tuning
(``global.benchmarking=1``) chooses, compiles and runs a solution; conv + bias + activation
fusion is tried (no workaround on gfx942) and MIOpen answers UnsupportedOp (no fused solver left).

3.4.0 (6.4.3) has no kernel compiler here: its Find 2.0 fails with status 7, the engine runs
the heuristic solution instead (noted in the plan), whose kernel fails to build as a typed error.
"""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np
import pytest
from stubgpu_util import SWITCHES, Stub
from test_decisions import SOLUTION_KERNELS
from test_miopen_engine_graphs import build

from hipdnn.engines.miopen import Row
from hipdnn.engines.miopen.errors import MiopenExecutionError
from hipdnn.types import DataType

CONV_CASES = [(row, layout) for row in (Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD)
              for layout in ("NCHW", "NHWC")]
#: Kernels Find 2.0's choices launch, beyond the immediate-mode table (solver id -> pattern).
FIND_KERNELS = {**SOLUTION_KERNELS,
                81: r"^gridwise_convolution_forward_implicit_gemm_v4r4_xdlops_",  # ConvHipImplicitGemmV4R4Xdlops
                }


def test_the_switches_are_set(stub: Stub) -> None:
    assert {k: os.environ.get(k) for k in SWITCHES} == SWITCHES


def _execute(case: Any, plan: Any, limit: int) -> None:
    outs = {role: np.full_like(a, np.nan) for role, a in case.empty_outputs().items()}
    pack: dict[Any, Any] = {**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}}
    case.graph.execute(pack, np.zeros(max(limit, 1), np.uint8) if limit else None)


def _find_plan(case: Any, knobs: dict[str, int]) -> Any:
    g = case.graph
    g.build_operation_graph()
    g.create_execution_plans()
    g.create_execution_plan_ext("MIOPEN_ENGINE", {"global.benchmarking": 1, **knobs})
    g.build_plans()
    return g.plans[0]


@pytest.mark.parametrize("row,layout", CONV_CASES, ids=[f"{r.name.lower()}-{lay}" for r, lay in CONV_CASES])
@pytest.mark.parametrize("limit", ["max", "min"])
def test_find2_with_tuning(stub: Stub, row: Row, layout: str, limit: str) -> None:
    case = build(row, DataType.FLOAT, layout)
    knob = {k.id: k for k in case.graph.get_knobs_for_engine("MIOPEN_ENGINE")}["global.workspace_size_limit"]
    lo, hi = knob.constraint.min, knob.constraint.max  # type: ignore[union-attr]
    value = hi if limit == "max" else lo
    plan = _find_plan(case, {"global.workspace_size_limit": value})
    assert plan.engine.name == "MIOPEN_ENGINE" and plan.path == "find2"
    assert plan.workspace_size == value  # Find 2.0 may use up to the limit
    mark = stub.log.mark()
    if not stub.compiles_kernels:
        for _ in range(2):  # the plan stays usable: the same typed answer again
            with pytest.raises(MiopenExecutionError) as info:
                _execute(case, plan, value)
            assert info.value.status == 7
            assert "Find 2.0 failed (miopenFindSolutions: status 7)" in plan.describe()
        return
    _execute(case, plan, value)
    events = stub.log.since(mark)
    assert not [e for e in events if e["event"] == "error"]
    kernels = [e["kernel"] for e in events if e["event"] == "launch"]
    sid = plan.solution_id
    assert sid in FIND_KERNELS, f"Find 2.0 chose solver {sid}, new to this table: {sorted(set(kernels))}"
    assert "Find 2.0 failed" not in plan.describe()
    # the search itself launches candidates; the last launches are the chosen solution's run
    assert kernels and re.match(FIND_KERNELS[sid], kernels[-1]), (sid, kernels[-3:])


def test_gfx942_conv_bias_act_tries_the_fusion(stub: Stub) -> None:
    """No workaround on gfx942: the engine asks MIOpen to compile the fusion plan and follows
    its answer. With the asm solvers off, Debian's builds have no fused solver for gfx942 here
    (status 8, UnsupportedOp), so the plan is unfused with MIOpen's reason, not a workaround.
    (That the engine fuses when the plan compiles is shown on gfx90a with the table bypassed:
    test_tuning_and_workarounds.py.)"""
    case = build(Row.CONV_BIAS_ACT, DataType.FLOAT, "NCHW")
    case.graph.build()
    plan = case.graph.plans[0]
    assert plan.engine.name == "MIOPEN_ENGINE" and "workaround" not in plan.name
    assert plan.path == "unfused"
    assert plan.notes == ("fusion plan not used: miopenCompileFusionPlan returned "
                          "miopenStatusUnsupportedOp (8)",)
