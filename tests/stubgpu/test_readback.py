"""What MIOPEN_ENGINE hands the REAL libMIOpen, read back from it after every build and run:
tensor descriptors (dims, strides, data type), convolution descriptors (per-axis padding, stride,
dilation, groups, and MIOpen's own output-size arithmetic on them), activation descriptors
(mode, alpha, beta evaluated with MIOpen's formula vs the graph's clips) and the epsilon and
momentum each batchnorm call receives (tests/emulated/miopen_readback.py), for the argument
cases of tests/emulated/argument_cases.py: every axis a different padding, stride and dilation,
non-default epsilon and momentum, each activation mapping.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from argument_cases import ARG_CASES, ARG_IDS, CLAMP_34_DECLINED, REAL_LIBRARY_FAILS, arg_case
from miopen_readback import RecordingLib, mismatches
from stubgpu_util import Stub, without_compiler

from hipdnn.core.handle import Handle
from hipdnn.engines.miopen import MiopenEngine, MiopenExecutionError, MiopenPlan, Row
from hipdnn.interop import buffers as interop

pytest.importorskip("torch")


@pytest.mark.parametrize("name,row,layout,kw", ARG_CASES, ids=ARG_IDS)
def test_real_library_holds_the_graphs_arguments(stub: Stub, lib: Any, name: str, row: Row,
                                                 layout: str, kw: dict[str, Any]) -> None:
    if not stub.compiles_kernels:
        without_compiler(stub, "the argument cases build and run kernels")
    rec = RecordingLib(lib)
    engine = MiopenEngine(miopen_loader=lambda: rec)
    case = arg_case(row, layout, kw)
    h = Handle()
    try:
        reason = engine.check_support(case.graph, h)
        if name in CLAMP_34_DECLINED and stub.version == "6.4.3":
            # the real 3.4.0 accepts CLAMP (mode 10) but its kernels compute zeros for it
            assert reason is not None and "CLAMP" in reason, f"{name}: {reason}"
            return
        assert reason is None, f"{name}: {reason}"
        knobs = {k.id: k.default for k in engine.get_knobs(case.graph, h)}
        plan = engine.build_plan(case.graph, knobs, h)
        assert isinstance(plan, MiopenPlan)
        with plan:
            outs = case.empty_outputs()
            buffers = {t.uid: interop.resolve(a) for t, a in case.inputs.items()}
            buffers.update({case.outputs[r].uid: interop.resolve(a) for r, a in outs.items()})
            ws = np.zeros(max(plan.workspace_size, 1), np.uint8)
            mark = stub.log.mark()
            fails = REAL_LIBRARY_FAILS.get((name, stub.version))
            if fails is not None and plan.path == "unfused":
                with pytest.raises(MiopenExecutionError, match=fails) as info:
                    plan.execute(buffers, interop.resolve(ws) if plan.workspace_size else None, h)
                assert info.value.status == 7, info.value
            else:
                plan.execute(buffers, interop.resolve(ws) if plan.workspace_size else None, h)
                events = stub.log.since(mark)
                assert not [e for e in events if e["event"] == "error"], events
                assert [e for e in events if e["event"] == "launch"], "no kernel was launched"
            bad = mismatches(lib, plan, case, rec.calls)
            assert not bad, f"{name} {kw} ({plan.name}) on MIOpen {stub.version} {stub.arch}: " + "; ".join(bad)
    finally:
        h.close()
