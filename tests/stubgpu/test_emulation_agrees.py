"""Cross-check: the emulated device (tests/emulated) decides what the REAL libMIOpen decides.

For every case of test_decisions.py (seed row x dtype x layout) MIOPEN_ENGINE is built twice in
this process: over the real library on the stub GPU (test_decisions.py's record, or a fresh
build when run alone) and over an ``EmulatedDevice`` of the same MIOpen version and the same
``gcnArchName``. Both must agree on: declined or built, the path (immediate / fused / unfused /
v2 / bn_activation), and when a fusion plan was refused, the status MIOpen answered. The
emulation may not claim what the real library disproves.

Not compared: solution ids and workspace sizes (the emulated catalogue is the project's own, see
tests/emulated/_conv.py), and, on MIOpen 3.4.0, paths that end in a kernel build this machine
cannot do (no clang-21 here: the real library's answer is unknown; the emulation must build),
including a fusion compile answering status 7 (a missing compiler or a missing source).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from stubgpu_util import DECISIONS, Stub, without_compiler
from test_decisions import CASES
from test_miopen_engine_graphs import DTYPES, build

from hipdnn.core.errors import HipdnnError
from hipdnn.engines.miopen import Row

#: EmulatedDevice's version name for each Debian build.
_EMULATED_VERSION = {"6.4.3": "3.4", "7.2.4": "3.5"}
_STATUS = re.compile(r"returned (miopenStatus\w+) \((\d+)\)")


def _fusion_status(notes: Any) -> str | None:
    """The status of a refused fusion compile named in a plan's notes, or None."""
    for note in notes or ():
        found = _STATUS.search(note)
        if found and "miopenCompileFusionPlan" in note:
            return found.group(1)
    return None


def _summary(decision: str, path: str | None, notes: Any, reason: str | None) -> dict[str, Any]:
    return {"decision": decision, "path": path, "fusion": _fusion_status(notes), "reason": reason}


def _real(stub: Stub, row: Row, dtype: str, layout: str) -> dict[str, Any]:
    """The real library's decision (recorded by test_decisions.py, else built now)."""
    rec = DECISIONS.get((row.name.lower(), dtype, layout))
    if rec is None:
        case = build(row, DTYPES[dtype], layout)
        try:
            case.graph.build()
            plan = case.graph.plans[0]
            reason = case.graph.engine_reasons()["MIOPEN_ENGINE"]
            if plan.engine.name == "MIOPEN_ENGINE":
                rec = {"decision": "built", "path": str(plan.path), "notes": list(plan.notes)}
            elif reason is not None and "CompileSolution failed" in reason and not stub.compiles_kernels:
                rec = {"decision": "kernel build failed", "reason": reason}
            else:
                rec = {"decision": "declined", "reason": reason}
        finally:
            case.graph.close()
    return _summary(rec["decision"], rec.get("path"), rec.get("notes"), rec.get("reason"))


@pytest.fixture(scope="module")
def emulated_engine(stub: Stub) -> Any:
    """MIOPEN_ENGINE over an emulated device of this process's version and architecture."""
    from emulated.device import EmulatedDevice
    from stub_hip.build import ARCHS

    from hipdnn.core.handle import Handle
    from hipdnn.engines.miopen import MiopenEngine

    dev = EmulatedDevice(_EMULATED_VERSION[stub.version], gcn_arch_name=ARCHS[stub.arch][0])
    engine = MiopenEngine(miopen_loader=lambda: dev.miopen, hip_loader=lambda: dev.hip)
    handle = Handle()
    yield engine, handle, dev
    handle.close()
    assert not dev.internal_errors, dev.internal_errors


def _emulated(engine: Any, handle: Any, row: Row, dtype: str, layout: str) -> dict[str, Any]:
    case = build(row, DTYPES[dtype], layout)
    try:
        reason = engine.check_support(case.graph, handle)
        if reason is not None:
            return _summary("declined", None, None, reason)
        knobs = {k.id: k.default for k in engine.get_knobs(case.graph, handle)}
        try:
            plan = engine.build_plan(case.graph, knobs, handle)
        except HipdnnError as exc:
            return _summary("declined", None, None, str(exc))
        try:
            return _summary("built", str(plan.path), plan.notes, None)
        finally:
            plan.close()
    finally:
        case.graph.close()


@pytest.mark.parametrize("row,dtype,layout", CASES, ids=[f"{r.name.lower()}-{d}-{lay}" for r, d, lay in CASES])
def test_emulated_device_decides_like_the_real_library(stub: Stub, emulated_engine: Any, row: Row,
                                                       dtype: str, layout: str) -> None:
    engine, handle, _ = emulated_engine
    real = _real(stub, row, dtype, layout)
    emulated = _emulated(engine, handle, row, dtype, layout)
    if real["decision"] == "kernel build failed":  # 3.4.0 here: the real answer is unknown
        assert emulated["decision"] == "built", (real, emulated)
        without_compiler(stub, f"the real library's decision for {row.name} {dtype} {layout} is unknown")
    assert emulated["decision"] == real["decision"], (real, emulated)
    if (real["decision"] == "built" and not stub.compiles_kernels
            and real["fusion"] == "miopenStatusUnknownError"):
        without_compiler(stub, f"the fused kernel of {row.name} {dtype} {layout} needs clang-21")
    if real["decision"] == "built":
        assert (emulated["path"], emulated["fusion"]) == (real["path"], real["fusion"]), (real, emulated)
