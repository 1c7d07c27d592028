"""MIOPEN_ENGINE never leaves a partial result in host buffers: staged outputs are copied back all
or none. Every device-to-host ``hipMemcpy`` of an execute is failed in turn (through the public
graph API, host numpy buffers sentinel-filled): each failure is a typed error and every output
buffer is byte-for-byte untouched; the next execute succeeds and matches PyTorch.
"""

from __future__ import annotations

import numpy as np
import pytest
from emulated.device import EmulatedDevice
from test_miopen_engine_calls import CONFIGS, REFUSED, expected_path
from test_miopen_engine_graphs import Case, build
from test_miopen_engine_numerics import assert_refused, check_outputs

from hipdnn.core.handle import Handle
from hipdnn.engines.miopen import MiopenEngine, MiopenExecutionError, Row
from miopen_ctypes.hip_types import hipMemcpyKind

pytest.importorskip("torch")

_D2H = int(hipMemcpyKind.hipMemcpyDeviceToHost)
SENTINEL = -7.25  # exact in fp32, fp16 and bf16


def _outputs(case: Case) -> dict[str, np.ndarray]:
    outs = case.empty_outputs()
    for arr in outs.values():
        arr[...] = SENTINEL
    return outs


def _d2h_indices(device: EmulatedDevice, since: int) -> list[int]:
    """1-based positions, among the hipMemcpy calls after ``since``, of the device-to-host ones."""
    memcpys = [c for c in device.calls[since:] if c.name == "hipMemcpy"]
    return [i for i, c in enumerate(memcpys, 1) if int(c.args[3]) == _D2H]


def _case(row: Row, config: str) -> Case:
    if row == Row.BN_TRAINING:  # five outputs: y, mean, inv_variance, both running stats
        return build(row, *CONFIGS[config], running=True)
    return build(row, *CONFIGS[config])


@pytest.mark.parametrize("config", ["fp32_nchw", "fp16_nhwc"])
@pytest.mark.parametrize("row", list(Row), ids=[r.name.lower() for r in Row])
def test_failing_each_copy_back_leaves_every_output_untouched(
        emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine, row: Row,
        config: str) -> None:
    case = _case(row, config)
    if expected_path(row, emulated_device.version_name, config) == REFUSED:
        assert_refused(emulated_device, emulated_miopen_engine, case)  # nothing to run
        return
    g = case.graph
    g.build_operation_graph(Handle())
    g.create_execution_plan_ext("MIOPEN_ENGINE", {})
    g.build_plans()
    assert g.plans[0].engine is emulated_miopen_engine
    ws = np.zeros(max(g.get_workspace_size(), 1), np.uint8)

    def pack(outs: dict[str, np.ndarray]) -> dict[object, np.ndarray]:
        return {**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}}

    mark = len(emulated_device.calls)
    g.execute(pack(_outputs(case)), ws)
    d2h = _d2h_indices(emulated_device, mark)
    assert len(d2h) >= len(case.outputs)  # one copy back per host output at least
    allocations = dict(emulated_device.live_allocations())
    for nth in d2h:
        outs = _outputs(case)
        before = {r: a.tobytes() for r, a in outs.items()}
        emulated_device.fail("hipMemcpy", 1, nth=nth)
        with pytest.raises(MiopenExecutionError, match="hipMemcpy") as info:
            g.execute(pack(outs), ws)
        assert info.value.function == "hipMemcpy" and row.value in str(info.value)
        for role, arr in outs.items():
            assert arr.tobytes() == before[role], (
                f"{role} written although D2H copy {nth} of {d2h} failed")
        assert emulated_device.live_allocations() == allocations  # staging freed
    outs = _outputs(case)
    g.execute(pack(outs), ws)  # the graph still works afterwards, and right
    check_outputs(case, outs)
    g.close()
