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
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from stubgpu_util import SWITCHES, Stub, lane_version, run_build_child, without_compiler
from test_decisions import SOLUTION_KERNELS
from test_miopen_engine_graphs import build

from hipdnn.core.errors import GraphNotSupportedError
from hipdnn.core.types import DataType
from hipdnn.engines.miopen import NO_LIMIT, Row

CONV_CASES = [(row, layout) for row in (Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD)
              for layout in ("NCHW", "NHWC")]
#: Kernels Find 2.0's choices launch, beyond the immediate-mode table (solver id -> pattern).
FIND_KERNELS = {**SOLUTION_KERNELS,
                81: r"^gridwise_convolution_forward_implicit_gemm_v4r4_xdlops_",  # ConvHipImplicitGemmV4R4Xdlops
                }


def test_the_switches_are_set(stub: Stub) -> None:
    assert {k: os.environ.get(k) for k in SWITCHES} == SWITCHES


def _execute(case: Any, plan: Any) -> None:
    outs = {role: np.full_like(a, np.nan) for role, a in case.empty_outputs().items()}
    pack: dict[Any, Any] = {**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}}
    ws = plan.workspace_size
    case.graph.execute(pack, np.zeros(ws, np.uint8) if ws else None)


def _find_plan(case: Any, knobs: dict[str, int]) -> Any:
    g = case.graph
    g.build_operation_graph()
    g.create_execution_plans()
    g.create_execution_plan_ext("MIOPEN_ENGINE", {"global.benchmarking": 1, **knobs})
    g.build_plans()
    return g.plans[0]


def _counting(lib: Any, counts: dict[str, int]) -> None:
    """Count the library's solution enumerations and Find calls (the bound functions are
    instance attributes; the engine looks them up on each call)."""
    for name in list(vars(lib)):
        if name.endswith("GetSolutionCount") or name == "miopenFindSolutions":
            real = getattr(lib, name)

            def counted(*args: Any, _real: Any = real, _name: str = name) -> Any:
                counts[_name] = counts.get(_name, 0) + 1
                return _real(*args)
            setattr(lib, name, counted)


@pytest.mark.parametrize("row,layout", CONV_CASES, ids=[f"{r.name.lower()}-{lay}" for r, lay in CONV_CASES])
@pytest.mark.parametrize("limit", ["none", "min"])
def test_find2_with_tuning(stub: Stub, row: Row, layout: str, limit: str) -> None:
    case = build(row, DataType.FLOAT, layout)
    knob = {k.id: k for k in case.graph.get_knobs_for_engine("MIOPEN_ENGINE")}["global.workspace_size_limit"]
    lo, hi = knob.constraint.min, knob.constraint.max  # type: ignore[union-attr]
    assert hi == knob.default == NO_LIMIT  # the default sets no limit
    value = hi if limit == "none" else lo
    if not stub.compiles_kernels:
        # 3.4.0 without clang-21: Find 2.0 fails (status 7), the heuristic solution's kernel
        # does not build either: MIOPEN_ENGINE declines with the typed reason
        with pytest.raises(GraphNotSupportedError, match=r"CompileSolution failed.*\(7\)"):
            _find_plan(case, {"global.workspace_size_limit": value})
        without_compiler(stub, "Find 2.0 and the heuristic solution's kernel do not build")
    plan = _find_plan(case, {"global.workspace_size_limit": value})
    assert plan.engine.name == "MIOPEN_ENGINE" and plan.path == "find2"
    results = plan.runner.op.find_results
    # Find tunes every solver whatever its workspace; the plan is the fastest that fits the
    # limit (with the smallest limit a faster solver needing workspace may come first)
    fitting = [r for r in results if r.workspace_size <= value]
    assert fitting and plan.solution_id == fitting[0].solver_id, (results, value)
    assert plan.workspace_size == fitting[0].workspace_size <= value
    if limit == "none":
        assert fitting[0] == results[0]  # no limit: the fastest of all
    mark = stub.log.mark()
    _execute(case, plan)
    events = stub.log.since(mark)
    assert not [e for e in events if e["event"] == "error"]
    kernels = [e["kernel"] for e in events if e["event"] == "launch"]
    sid = plan.solution_id
    assert sid in FIND_KERNELS, f"Find 2.0 chose solver {sid}, new to this table: {sorted(set(kernels))}"
    assert "Find 2.0 failed" not in plan.describe()
    # the execute runs only the chosen solution (the search ran at build)
    assert kernels and all(re.match(FIND_KERNELS[sid], k) for k in kernels), (sid, kernels[-3:])


def test_find_considers_solvers_that_need_workspace(stub: Stub, lib: Any) -> None:
    """With benchmarking on and no limit set, the real Find 2.0 tunes every applicable solver,
    whatever its workspace: for an FP16 NCHW 8x64x56x56 3x3 convolution on gfx942 its results
    include GEMM (3.6 MB of workspace) next to the naive kernel. One solution enumeration per MIOpen engine and
    one Find per build, counted on the library."""
    if not stub.compiles_kernels:
        without_compiler(stub, "MIOpen 3.4.0 runs Find only with its kernel compilers")
    import hipdnn

    counts: dict[str, int] = {}
    _counting(lib, counts)
    g = hipdnn.Graph(io_data_type=DataType.HALF, compute_data_type=DataType.FLOAT)
    n, c, h, w, k = 8, 64, 56, 56, 64
    x = g.tensor(name="x", dim=[n, c, h, w], stride=[c * h * w, h * w, w, 1])
    f = g.tensor(name="w", dim=[k, c, 3, 3], stride=[c * 9, 9, 3, 1])
    y = g.conv_fprop(x, f, padding=[1, 1], stride=[1, 1], dilation=[1, 1], name="conv")
    y.set_output(True)
    g.build_operation_graph()
    g.create_execution_plans()
    g.create_execution_plan_ext("MIOPEN_ENGINE", {"global.benchmarking": 1})
    g.build_plans()
    plan = g.plans[0]
    assert plan.path == "find2"
    assert dict(plan.knobs)["global.workspace_size_limit"] == NO_LIMIT
    results = plan.runner.op.find_results
    assert any(r.workspace_size > 0 for r in results), results
    assert plan.workspace_size == results[0].workspace_size
    seen = dict(counts)
    engines = sum(1 for n, r in g.engine_reasons().items() if n.startswith("MIOPEN") and r is None)
    # one enumeration per MIOpen engine that answers check_support, one Find (the built plan's)
    assert seen == {"miopenConvolutionForwardGetSolutionCount": engines, "miopenFindSolutions": 1}, seen


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


@pytest.mark.parametrize("row,layout", [("CONV_FPROP", "NCHW"), ("CONV_DGRAD", "NHWC")])
def test_a_second_process_runs_the_stored_find_result(stub: Stub, tmp_path: Path, row: str,
                                                      layout: str) -> None:
    """Find 2.0 with tuning in one process; a second process (same MIOpen caches) loads the
    solution Find chose from the plan store: no solution list, no search, the same solver's
    kernels launch."""
    if not stub.compiles_kernels:
        without_compiler(stub, "MIOpen 3.4.0 runs Find only with its kernel compilers")
    env = {"HIPDNN_PLAN_STORE": str(tmp_path / "plans")}
    first = run_build_child(row, "FLOAT", layout, {"global.benchmarking": 1}, env)
    second = run_build_child(row, "FLOAT", layout, {"global.benchmarking": 1}, env)
    assert first["path"] == second["path"] == "find2"
    assert first["counts"].get("miopenFindSolutions") == 1
    assert second["counts"].get("miopenFindSolutions") is None, second["counts"]
    assert not any(k.endswith("GetSolutionCount") for k in second["counts"]), second["counts"]
    assert second["counts"].get("miopenLoadSolution") == 1
    assert (second["solution"], second["workspace"]) == (first["solution"], first["workspace"])
    assert second["kernels"] == first["kernels"] and second["kernels"]


if lane_version() == "7.2.4":  # the benchmark picks MIOpen 3.5.1 itself: run it in one process

    def test_bench_first_call_quick(stub: Stub, tmp_path: Path) -> None:
        """benchmarks/bench_first_call.py --quick (CI's quick form): a cold process compiles,
        a second one with the plan store warm builds without one solution enumeration."""
        import subprocess
        import sys

        root = Path(__file__).resolve().parents[2]
        proc = subprocess.run([os.path.realpath(sys.executable), str(root / "benchmarks" / "bench_first_call.py"),
                               "--quick", "--work", str(tmp_path)], capture_output=True, text=True,
                              timeout=900, cwd=root)
        assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
        last = proc.stdout.strip().splitlines()[-1]
        found = re.fullmatch(r"first-call: cold ([\d.]+) s, warm-store ([\d.]+) s, "
                             r"enumerations in the warm process: (\d+)", last)
        assert found, proc.stdout[-2000:]
        cold, warm, enumerations = float(found[1]), float(found[2]), int(found[3])
        assert enumerations == 0
        assert warm < cold  # the cold process compiled the kernel; the warm one loaded it
        rows = [ln for ln in proc.stdout.splitlines() if ln.startswith("| 3.5.1 | conv |")]
        assert [r.split("|")[4].strip() for r in rows] == ["cold", "warm MIOpen", "warm store"]
