"""Knobs and architecture workarounds against the REAL libMIOpen, with MIOpen's default settings.

- ``global.workspace_size_limit`` at the bottom of its range makes MIOpen's own list yield a
  solution that fits (a different one where the range allows).
- ``global.benchmarking=1`` (Find 2.0 with tuning) with Debian's builds and no switches: the
  real library either fails with a status (the engine then runs the heuristic solution, the
  plan stays usable) or ABORTS THE PROCESS (an uncaught ``miopen::Exception`` when a solver's
  kernel source is missing or its compiler absent). The abort is shown in a child process;
  the switches processes (test_switches.py) run Find 2.0 for real.
- The workaround table (hipdnn/engines/miopen/workarounds.py): on gfx90a conv + bias +
  activation runs unfused although the real fusion plan compiles (ROCm/rocm-libraries#5409); on
  gfx942 no workaround applies and the engine's path follows the real fusion compile.
"""

from __future__ import annotations

import logging
import re
import subprocess
import textwrap
from typing import Any

import numpy as np
import pytest
from stubgpu_util import Stub, child_command, without_compiler
from test_decisions import SOLUTION_KERNELS
from test_miopen_engine_graphs import build

from hipdnn.core.errors import GraphNotSupportedError
from hipdnn.core.types import DataType
from hipdnn.engines.miopen import NO_LIMIT, Row

#: What Find 2.0 with tuning does on Debian's builds without switches, per version x arch, for
#: the seed's conv fprop (FP32 NCHW 2x4x7x6, 3x3): "abort" (the process dies in MIOpen) or
#: "status" (miopenFindSolutions returns 7; the heuristic fallback then runs) when 3.4.0 has no
#: kernel compilers, and Find 2.0 succeeds when it has them (tools/miopen_toolchain.py).
FIND_WITHOUT_SWITCHES = {("7.2.4", "gfx90a"): "abort", ("7.2.4", "gfx942"): "abort",
                         ("6.4.3", "gfx90a"): "abort", ("6.4.3", "gfx942"): "status"}


def _execute(case: Any, plan: Any) -> None:
    outs = {role: np.full_like(a, np.nan) for role, a in case.empty_outputs().items()}
    pack: dict[Any, Any] = {**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}}
    ws = plan.workspace_size
    case.graph.execute(pack, np.zeros(ws, np.uint8) if ws else None)


def _plan_with(case: Any, knobs: dict[str, int]) -> Any:
    g = case.graph
    g.build_operation_graph()
    g.create_execution_plans()
    g.create_execution_plan_ext("MIOPEN_ENGINE", knobs)
    g.build_plans()
    return g.plans[0]


@pytest.mark.parametrize("row", [Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD], ids=lambda r: r.name.lower())
def test_workspace_limit_picks_a_solution_that_fits(stub: Stub, row: Row) -> None:
    case = build(row, DataType.FLOAT, "NCHW")
    knob = {k.id: k for k in case.graph.get_knobs_for_engine("MIOPEN_ENGINE")}["global.workspace_size_limit"]
    lo, hi = knob.constraint.min, knob.constraint.max  # type: ignore[union-attr]
    assert lo < hi, "this shape should offer solutions of different workspace sizes"
    if not stub.compiles_kernels:
        # 3.4.0: the solution that fits is a naive HIP kernel, which needs clang-21
        with pytest.raises(GraphNotSupportedError, match=r"CompileSolution failed.*\(7\)"):
            _plan_with(case, {"global.workspace_size_limit": lo})
        without_compiler(stub, "the solution within the smallest limit is a naive HIP kernel")
    plan = _plan_with(case, {"global.workspace_size_limit": lo})
    assert plan.engine.name == "MIOPEN_ENGINE" and plan.workspace_size <= lo
    default = build(row, DataType.FLOAT, "NCHW")
    default.graph.build()
    assert hi == NO_LIMIT and default.graph.plans[0].workspace_size > lo  # MIOpen's first choice
    assert plan.solution_id != default.graph.plans[0].solution_id
    mark = stub.log.mark()
    _execute(case, plan)
    kernels = [e["kernel"] for e in stub.log.since(mark) if e["event"] == "launch"]
    assert kernels and all(re.match(SOLUTION_KERNELS[plan.solution_id], k) for k in kernels), kernels


_FIND_CHILD = """
import numpy as np
from test_miopen_engine_graphs import build
from hipdnn.engines.miopen import Row
from hipdnn.core.types import DataType
case = build(Row.CONV_FPROP, DataType.FLOAT, "NCHW")
g = case.graph
g.build_operation_graph(); g.create_execution_plans()
g.create_execution_plan_ext("MIOPEN_ENGINE", {"global.benchmarking": 1}); g.build_plans()
plan = g.plans[0]
outs = {r: np.full_like(a, np.nan) for r, a in case.empty_outputs().items()}
pack = {**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}}
for attempt in range(2):  # the second execute shows the plan stayed usable
    try:
        g.execute(pack, np.zeros(plan.workspace_size, np.uint8))
        print("RESULT ok", plan.describe())
    except Exception as exc:
        print("RESULT", type(exc).__name__, getattr(exc, "function", ""), getattr(exc, "status", ""),
              plan.describe())
"""


def test_find2_without_switches_is_what_the_real_library_does(stub: Stub) -> None:
    proc = subprocess.run(child_command(textwrap.dedent(_FIND_CHILD)), capture_output=True, text=True,
                          timeout=300)
    expected = FIND_WITHOUT_SWITCHES[(stub.version, stub.arch)]
    if expected == "status" and stub.compiles_kernels:
        expected = "ok"  # 3.4.0 inside tools/miopen_toolchain.py's root: its kernels build
    if expected == "abort":
        assert proc.returncode == -6, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])  # SIGABRT
        assert "terminate called after throwing an instance of 'miopen::Exception'" in proc.stderr
        assert ("Failed to load kernel source" in proc.stderr if stub.version == "7.2.4"
                else "clang++-21" in proc.stderr)
        return
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = [line for line in proc.stdout.splitlines() if line.startswith("RESULT")]
    if expected == "ok":  # Find 2.0 chose a solution and it ran, twice
        assert len(results) == 2 and all(r.startswith("RESULT ok") and "find2" in r for r in results), proc.stdout
        return
    # Find failed with status 7; the heuristic solution ran instead and, without clang-21 here,
    # its kernel did not build either: a typed error naming the call, from a plan that stays
    # usable (the second execute answers the same way, no crash, no half-built state)
    assert len(results) == 2, proc.stdout
    for result in results:
        assert "Find 2.0 failed (miopenFindSolutions: status 7)" in result, result
        assert result.startswith("RESULT MiopenExecutionError miopenConvolutionForward"), result
    without_compiler(stub, "Find 2.0 and the heuristic solution's kernel did not build")


def test_gfx90a_conv_bias_act_is_unfused_by_the_workaround(stub: Stub, caplog: pytest.LogCaptureFixture) -> None:
    case = build(Row.CONV_BIAS_ACT, DataType.FLOAT, "NCHW")
    with caplog.at_level(logging.INFO, logger="hipdnn"):
        case.graph.build()
    plan = case.graph.plans[0]
    assert plan.engine.name == "MIOPEN_ENGINE" and plan.path == "unfused"
    if stub.arch == "gfx90a":
        assert plan.name.endswith("[workaround ROCm/rocm-libraries#5409]")
        assert any("#5409" in n and "incorrect results" in n for n in plan.notes)
        assert "workaround ROCm/rocm-libraries#5409" in caplog.text
    else:  # gfx942: no workaround; the real fusion compile failed (status 7), so unfused
        assert "workaround" not in plan.name
        assert plan.notes == ("fusion plan not used: miopenCompileFusionPlan returned "
                              "miopenStatusUnknownError (7)",)


def test_the_fusion_the_gfx90a_workaround_skips_does_compile(stub: Stub) -> None:
    """Without the table the real gfx90a (3.5.1) compiles this fusion plan: the workaround, not
    MIOpen, makes the path unfused. gfx942 fails the compile (missing Winograd source)."""
    from hipdnn.engines import registry
    from hipdnn.engines.miopen.conv_rows import ConvBiasActRunner
    from hipdnn.engines.miopen.descriptors import Resources
    from hipdnn.engines.miopen.patterns import match

    case = build(Row.CONV_BIAS_ACT, DataType.FLOAT, "NCHW")
    engine = next(e for e in registry().values() if e.name == "MIOPEN_ENGINE")
    state = engine.handle_state(case.graph.handle)  # type: ignore[attr-defined]
    lib, hip = engine.libraries()  # type: ignore[attr-defined]
    res = Resources()
    try:
        runner = ConvBiasActRunner(lib, hip, res, match(case.graph), state.handle, 0, None)
        fuses = stub.arch == "gfx90a" and stub.compiles_kernels
        assert runner.path == ("fused" if fuses else "unfused"), runner.notes
    finally:
        res.close()
