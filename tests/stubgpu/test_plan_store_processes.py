"""The plan store across processes with the REAL libMIOpen over the stub GPU (MIOpen's default
settings): a second process building the same graph takes the first one's stored decision --
no solution enumeration, no fusion compile retried -- builds the same plan, and its execute
launches the same kernels. Calls are counted on the bound library in each child process.
(Find 2.0's stored solutions: test_switches.py; the store's failure cases: tests/emulated.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from stubgpu_util import Stub, run_build_child, without_compiler

from hipdnn.engines.miopen.fusion import rechecks_stored_decline
from hipdnn.pipeline.plan_store import PlanStore

CASES = [("CONV_FPROP", "FLOAT", "NHWC"), ("CONV_WGRAD", "HALF", "NCHW"),
         ("CONV_BIAS_ACT", "FLOAT", "NCHW"), ("BN_TRAINING", "FLOAT", "NHWC")]


def _enumerations(counts: dict[str, int]) -> int:
    return sum(n for name, n in counts.items() if name.endswith("GetSolutionCount"))


@pytest.mark.parametrize("row,dtype,layout", CASES, ids=[f"{r.lower()}-{d.lower()}-{lay}" for r, d, lay in CASES])
def test_a_second_process_builds_from_the_store(stub: Stub, tmp_path: Path, row: str, dtype: str,
                                                layout: str) -> None:
    if not stub.compiles_kernels:
        without_compiler(stub, "a plan's kernels must build to compare two processes' launches")
    env = {"HIPDNN_PLAN_STORE": str(tmp_path / "plans")}
    first = run_build_child(row, dtype, layout, {}, env)
    second = run_build_child(row, dtype, layout, {}, env)
    assert first["engine"] == second["engine"] == "MIOPEN_ENGINE"
    for field in ("plan", "path", "solution", "workspace", "notes"):
        assert second[field] == first[field], field
    assert second["kernels"] == first["kernels"] and first["kernels"]
    assert _enumerations(second["counts"]) == 0, second["counts"]
    assert "miopenFindSolutions" not in second["counts"]
    if row.startswith("CONV"):  # one per MIOpen engine that can run it (MIOPEN_ENGINE and
        # MIOPEN_ENGINE_DETERMINISTIC both answer check_support), and no more
        assert _enumerations(first["counts"]) == first["miopen_engines"] >= 1, first["counts"]
    if first["path"] == "unfused":  # a definitive fusion decline is not tried again; one after
        # miopenStatusUnknownError (these builds lack the fused kernels' sources, but it is also
        # MIOpen's answer for a passing fault) is asked once, not the first build's twice
        again = 1 if rechecks_stored_decline(None, first["notes"]) else 0
        assert second["counts"].get("miopenCompileFusionPlan", 0) == again, (first["notes"], second["counts"])
    # one plan entry; answers entries of each MIOpen engine that answered (the one that built
    # and MIOPEN_ENGINE_DETERMINISTIC, supported or not), all whole
    entries = list(PlanStore(tmp_path / "plans").entries())
    assert [e.kind for e in entries].count("plan") == 1 and all(e.ok for e in entries)
    assert {e.engine for e in entries if e.kind == "answers"} >= {"MIOPEN_ENGINE"}
