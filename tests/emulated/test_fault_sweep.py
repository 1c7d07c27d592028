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
