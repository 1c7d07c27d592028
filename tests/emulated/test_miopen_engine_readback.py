"""MIOPEN_ENGINE's arguments, read back from MIOpen (here the emulated device; the same checks
run on the real library in tests/stubgpu/test_readback.py) and its outputs against PyTorch:

- the argument cases (tests/emulated/argument_cases.py): every axis a different padding, stride
  and dilation, epsilon and momentum other than the defaults, each activation mapping;
- random per-axis geometry (seeded; the seed is in the test id and in every failure message):
  ``HIPDNN_GEOMETRY_SEED=<n>`` moves the seeds to n, n+1, ... (default 0).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from argument_cases import ARG_CASES, ARG_IDS, arg_case
from emulated.device import EmulatedDevice
from miopen_readback import RecordingLib, mismatches
from test_miopen_engine_graphs import LAYOUTS, ORDERS, Case, build, random_geometry
from test_miopen_engine_numerics import assert_refused, refusal

from hipdnn.core.handle import Handle
from hipdnn.core.types import DataType
from hipdnn.engines.miopen import MiopenEngine, MiopenPlan, Row
from hipdnn.interop import buffers as interop

pytest.importorskip("torch")

SEED_BASE = int(os.environ.get("HIPDNN_GEOMETRY_SEED", "0"))
SEEDS = [SEED_BASE + i for i in range(4)]


@pytest.fixture
def recorded(emulated_device: EmulatedDevice) -> Iterator[tuple[MiopenEngine, RecordingLib]]:
    """MIOPEN_ENGINE over the emulated device, its MIOpen calls recorded by parameter name."""
    lib = RecordingLib(emulated_device.miopen)
    yield MiopenEngine(miopen_loader=lambda: lib, hip_loader=lambda: emulated_device.hip), lib


def run_and_read_back(engine: MiopenEngine, lib: Any, case: Case, what: str,
                      knobs: dict[str, Any] | None = None) -> MiopenPlan:
    """Build (with ``knobs`` over the defaults) and run ``case``; its outputs must match PyTorch
    and what MIOpen holds the graph. Returns the (closed) plan."""
    h = Handle()
    try:
        reason = engine.check_support(case.graph, h)
        assert reason is None, f"{what}: {reason}"
        values = {k.id: k.default for k in engine.get_knobs(case.graph, h)}
        knobs = {**values, **(knobs or {})}
        plan = engine.build_plan(case.graph, knobs, h)
        assert isinstance(plan, MiopenPlan)
        with plan:
            outs = case.empty_outputs()
            buffers = {t.uid: interop.resolve(a) for t, a in case.inputs.items()}
            buffers.update({case.outputs[r].uid: interop.resolve(a) for r, a in outs.items()})
            ws = np.zeros(max(plan.workspace_size, 1), np.uint8)
            plan.execute(buffers, interop.resolve(ws) if plan.workspace_size else None, h)
            bad = mismatches(lib._lib, plan, case, lib.calls)
            assert not bad, f"{what} ({plan.name}): " + "; ".join(bad)
            atol, rtol = case.tol()
            for role, want in case.expected.items():
                np.testing.assert_allclose(outs[role].astype(np.float32), want, atol=atol, rtol=rtol,
                                           err_msg=f"{what} ({plan.name}): {role}")
        return plan
    finally:
        h.close()


@pytest.mark.parametrize("name,row,layout,kw", ARG_CASES, ids=ARG_IDS)
def test_arguments_reach_miopen(emulated_device: EmulatedDevice,
                                recorded: tuple[MiopenEngine, RecordingLib],
                                name: str, row: Row, layout: str, kw: dict[str, Any]) -> None:
    engine, lib = recorded
    case = arg_case(row, layout, kw)
    if refusal(row, case.dtype, emulated_device.version_name, layout):
        assert_refused(emulated_device, engine, case)
        return
    if "3.4" in emulated_device.version_name and kw.get("lower") not in (None, 0.0):
        # a lower clip is CLAMP, which MIOpen 3.4's kernels lack: declined there (never zeros)
        reason = engine.check_support(case.graph, Handle())
        assert reason is not None and "CLAMP" in reason, reason
        return
    run_and_read_back(engine, lib, case, f"{name} {kw}")


@pytest.mark.parametrize("seed", SEEDS, ids=[f"seed{s}" for s in SEEDS])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC", "NCDHW", "NDHWC", "NCL", "NLC"])
@pytest.mark.parametrize("row", [Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD],
                         ids=lambda r: r.name.lower())
def test_random_per_axis_geometry(recorded: tuple[MiopenEngine, RecordingLib], row: Row,
                                  layout: str, seed: int) -> None:
    engine, lib = recorded
    geo = random_geometry(seed, len(ORDERS[layout]) - 2)
    case = build(row, DataType.FLOAT, layout, seed=seed, **geo)
    run_and_read_back(engine, lib, case, f"seed {seed} (HIPDNN_GEOMETRY_SEED={seed}): {row.name} "
                                         f"{layout} {geo}")


@pytest.mark.parametrize("seed", SEEDS[:3], ids=[f"seed{s}" for s in SEEDS[:3]])
@pytest.mark.parametrize("layout", ["NCHW", "NDHWC"])
def test_random_per_axis_geometry_conv_bias_act(emulated_device: EmulatedDevice,
                                                recorded: tuple[MiopenEngine, RecordingLib],
                                                layout: str, seed: int) -> None:
    engine, lib = recorded
    geo = random_geometry(seed, len(LAYOUTS[layout]) - 2)
    geo.pop("kernel")  # the builder's kernels are 3 wide
    geo["spatial"] = [s + 2 for s in geo["spatial"]]
    # CLAMP (a lower clip) on 3.5; 3.4 declines CLAMP, so there the clip is the upper one only
    lower = None if "3.4" in emulated_device.version_name else -0.2
    case = build(Row.CONV_BIAS_ACT, DataType.FLOAT, layout, seed=seed, lower=lower, upper=0.9, **geo)
    run_and_read_back(engine, lib, case, f"seed {seed} (HIPDNN_GEOMETRY_SEED={seed}): "
                                         f"CONV_BIAS_ACT {layout} {geo}")


def test_random_geometry_differs_on_every_axis() -> None:
    """No axis shares its padding, stride or dilation with another (the point of the draw)."""
    for seed in SEEDS:
        for n in (2, 3):
            geo = random_geometry(seed, n)
            for key in ("padding", "stride", "dilation"):
                assert len(set(geo[key])) == n, (seed, n, geo)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_inverse_variance_of_a_small_variance(emulated_device: EmulatedDevice,
                                              recorded: tuple[MiopenEngine, RecordingLib],
                                              layout: str) -> None:
    """Variances near 1e-4 and epsilon 1e-6: the variance derived from the inverse variance must
    reach MIOpen exactly (no epsilon added again: 1e-5 more would be 10% here)."""
    engine, lib = recorded
    case = build(Row.BN_INFERENCE_INV, DataType.FLOAT, layout, eps=1e-6, variance_scale=1e-4)
    if refusal(Row.BN_INFERENCE_INV, case.dtype, emulated_device.version_name, layout):
        assert_refused(emulated_device, engine, case)
        return
    run_and_read_back(engine, lib, case, f"BN_INFERENCE_INV {layout}, variance ~1e-4, eps 1e-6")


@pytest.mark.parametrize("name,row,layout,kw", [c for c in ARG_CASES if c[1] in
                                                (Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD)],
                         ids=[c[0] for c in ARG_CASES if c[1] in (Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD)])
def test_find2_on_the_argument_cases(recorded: tuple[MiopenEngine, RecordingLib], name: str, row: Row,
                                     layout: str, kw: dict[str, Any]) -> None:
    """Find 2.0 (global.benchmarking 1) succeeds on the emulated device (no fallback to the
    heuristic solution, which would hide a bad Find setup: a short scratch output, wrong
    preallocated tensors) and its solution computes PyTorch's answer."""
    engine, lib = recorded
    case = arg_case(row, layout, kw)
    plan = run_and_read_back(engine, lib, case, f"{name} find2", {"global.benchmarking": 1})
    assert plan.path == "find2" and not [n for n in plan.notes if "Find 2.0 failed" in n], plan.notes
    assert [n for n, _ in lib.calls].count("miopenFindSolutions") == 1


def test_binary_output_overlapping_the_last_input_element_is_refused(
        emulated_device: EmulatedDevice, emulated_miopen_engine: MiopenEngine) -> None:
    """OUT_0's buffer starting at IN_0's LAST element (one element shared) is refused: the
    aliasing check covers each tensor's whole byte span, the last element included."""
    import ctypes

    from test_miopen_engine_graphs import pointwise_binary_case

    from hipdnn.core.errors import VariantPackError

    case = pointwise_binary_case(DataType.FLOAT, "NCHW", op="add")
    g = case.graph
    g.build()
    a_t, b_t = list(case.inputs)
    c_t = case.outputs["c"]
    a_host, b_host = case.inputs[a_t], case.inputs[b_t]
    n = a_host.size
    block = emulated_device.alloc(4 * 2 * n)
    ctypes.memmove(block, np.ascontiguousarray(a_host).ctypes.data, a_host.nbytes)
    b_ptr = emulated_device.alloc(b_host.nbytes)
    ctypes.memmove(b_ptr, np.ascontiguousarray(b_host).ctypes.data, b_host.nbytes)
    with pytest.raises(VariantPackError, match="OUT_0 buffer overlaps the IN_0 buffer"):
        g.execute({a_t: block, b_t: b_ptr, c_t: block + 4 * (n - 1)}, None)
    g.execute({a_t: block, b_t: b_ptr, c_t: block + 4 * n}, None)  # adjacent, not overlapping
    got = np.empty(n, np.float32)
    ctypes.memmove(got.ctypes.data, block + 4 * n, got.nbytes)
    np.testing.assert_allclose(got.reshape(case.expected["c"].shape), case.expected["c"], rtol=1e-6, atol=1e-6)
    g.close()
