"""A failing HIP or MIOpen call is named once in the error (issue 29, defect 8): the binding's
errors already begin "<function> failed: ...", and the engine's and hipdnn.frontend's wrappers
repeated it ("hipMemcpy failed: hipMemcpy failed: hipError_t 1"), and a status whose text is
its name said that twice ("miopenStatusBadParm (3): miopenStatusBadParm"). On the emulated
device, with
the failure injected at plan build, at execute (a staging copy and a launch) and in the
frontend's HIP helpers."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from emulated.device import EmulatedDevice
from test_miopen_engine_graphs import build

import hipdnn.frontend as fe
from hipdnn.core.errors import ExecutionError
from hipdnn.core.types import DataType as D
from hipdnn.engines.miopen import MiopenEngine, Row
from hipdnn.frontend import _hip

pytest.importorskip("torch")


def _once(message: str, function: str) -> None:
    assert message.count(function) == 1, message
    assert f"{function} failed" in message, message
    parts = message.split(": ")  # nor a status name twice ("miopenStatusBadParm (3): ...")
    names = [p.split(" (")[0] for p in parts]
    assert len(set(names)) == len(names), message


def _case() -> Any:
    case = build(Row.CONV_FPROP, D.FLOAT, "NCHW")
    case.graph.build()
    assert case.graph.plans[0].engine.name == "MIOPEN_ENGINE"
    return case


@pytest.mark.parametrize(("name", "status"), [("hipMemcpy", 1),
                                              ("miopenConvolutionForwardImmediate", 3)])
def test_an_execute_failure_names_the_call_once(emulated_device: EmulatedDevice,
                                               emulated_miopen_engine: MiopenEngine,
                                               name: str, status: int) -> None:
    case = _case()
    outs = case.empty_outputs()
    pack = {**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}}
    emulated_device.fail(name, status)
    with pytest.raises(ExecutionError) as info:
        case.graph.execute(pack, np.zeros(max(case.graph.get_workspace_size(), 1), np.uint8))
    _once(str(info.value), name)
    case.graph.close()


def test_a_build_failure_names_the_call_once(emulated_device: EmulatedDevice,
                                            emulated_miopen_engine: MiopenEngine) -> None:
    case = build(Row.CONV_FPROP, D.FLOAT, "NCHW")
    emulated_device.fail("miopenConvolutionForwardGetSolutionCount", 5)
    with warnings.catch_warnings():  # the fallback warning of the passed-over MIOPEN_ENGINE
        warnings.simplefilter("ignore")
        case.graph.build()
    reason = case.graph.engine_reasons()["MIOPEN_ENGINE"]
    assert reason is not None
    _once(reason, "miopenConvolutionForwardGetSolutionCount")
    case.graph.close()


def test_the_frontends_hip_helpers_name_the_call_once(monkeypatch: pytest.MonkeyPatch) -> None:
    device = EmulatedDevice("3.5")
    monkeypatch.setattr(_hip, "runtime_loader", lambda: device.hip)
    device.fail("hipStreamSynchronize", 1)
    with pytest.raises(RuntimeError) as info:
        fe.hip_stream_synchronize(0)
    _once(str(info.value), "hipStreamSynchronize")
