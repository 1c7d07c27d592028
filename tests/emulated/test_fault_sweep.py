"""Fault injection at every stage of a plan's life, every seed row, both MIOpen versions (the
short form of tools/fault_sweep.py: the first call of each call family in each stage fails).

Each fault must be a typed HipdnnError naming the call (or a fallback whose reason names it,
or absorbed by MIOpen's own fallback with right results); outputs of a failed execute stay
NaN; the Graph and Handle work afterwards on the engine the fault-free life chose, with
PyTorch's answer; nothing is left on the emulated device. See tests/emulated/faults.py.
"""

from __future__ import annotations

import pytest
from faults import baseline, cases, faults_of, run_fault

from hipdnn.engines.miopen import Row

pytest.importorskip("torch")

LIVES = cases(list(Row), ("3.4", "3.5"), ("fp32_nchw",))


@pytest.mark.parametrize("version,row,config,find", LIVES,
                         ids=[f"{v}-{r.name.lower()}{'-find' if f else ''}" for v, r, _, f in LIVES])
def test_one_fault_per_call_family(version: str, row: Row, config: str, find: bool) -> None:
    life = baseline(version, row, config, find)
    outcomes = [run_fault(version, row, config, fault, life, find)
                for fault in faults_of(life, short=True)]
    failed = [f"{o.fault.stage} {o.fault.name} (call {o.fault.nth}, status {o.fault.status}): "
              f"{o.problems}" for o in outcomes if o.kind == "FAIL"]
    assert not failed, "\n".join(failed)
    families = {o.fault.family for o in outcomes}
    assert {"handle", "descriptor", "staging", "stream", "destroy/free"} <= families
    assert families & {"launch", "find"}  # a Find 2.0 plan launches through miopenRunSolution
    assert any(o.kind == "typed error" for o in outcomes)


@pytest.mark.parametrize("version", ["3.4", "3.5"])
def test_a_lasting_fusion_compile_fault_is_not_kept_for_later_processes(version: str) -> None:
    """Each fusion-compile call of a conv + bias + activation life failing twice in a row (past
    MIOPEN_ENGINE's one retry), with each of the swept MIOpen statuses (AllocFailed,
    InternalError, UnknownError): the life keeps its decisions in a plan store of its own, and a
    later process builds the fault-free (fused) plan from it. Before, a twice-failed compile
    with miopenStatusUnknownError (7) was stored as "unfused" and kept for good."""
    life = baseline(version, Row.CONV_BIAS_ACT, "fp32_nchw")
    faults = [f for f in faults_of(life, short=False, statuses=3, repeat=2) if f.family == "fusion compile"]
    assert {f.status for f in faults} == {4, 5, 7} and any(f.name == "miopenCompileFusionPlan" for f in faults)
    outcomes = [run_fault(version, Row.CONV_BIAS_ACT, "fp32_nchw", f, life, later=True) for f in faults]
    failed = [f"{o.fault}: {o.problems}" for o in outcomes if o.kind == "FAIL"]
    assert not failed, "\n".join(failed)
    assert ":fused" in life.plan_name
