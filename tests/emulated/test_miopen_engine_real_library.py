"""MIOPEN_ENGINE against the real libMIOpen 3.4 (ROCm 6.4.3) and 3.5 (ROCm 7.2.4), no GPU.

Runs, under each cached sysroot's dynamic loader (tools/run_tests.py's live command), every
handle-free call the engine makes while building plans -- tensor descriptors (V2, 4-D/5-D,
NCHW/NHWC, fp32/fp16/bf16), derived FP32 BN descriptors, convolution descriptors (groups),
activation descriptors, fusion plans with their ops, Find 2.0 problems -- and checks that
MIOpen's own output-dimension arithmetic agrees with the graph's, and that the default engine
declines with "no AMD GPU available" because the handle cannot be created.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.live

REPO = Path(__file__).resolve().parents[2]

SCRIPT = r'''
import ctypes, sys
sys.path[:0] = [sys.argv[1] + "/tests", sys.argv[1] + "/tests/emulated", sys.argv[1]]
import miopen_ctypes
from miopen_ctypes import types as mt
from hipdnn.engines.miopen import ENGINE
from hipdnn.engines.miopen.conv_rows import conv_op_for
from hipdnn.engines.miopen.descriptors import ActivationDesc, Owned, Resources, TensorDesc, bn_param_desc
from hipdnn.engines.miopen.fusion import FusionPlan
from hipdnn.engines.miopen.patterns import Row, match
from hipdnn.core.handle import Handle
from test_miopen_engine_graphs import D, build

lib = miopen_ctypes.load()
res, checked = Resources(), 0
configs = ((D.FLOAT, "NCHW"), (D.BFLOAT16, "NHWC"), (D.HALF, "NDHWC"), (D.FLOAT, "NCDHW"))
for row in (Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD, Row.CONV_BIAS_ACT):
    for dt, lay in configs:
        m = match(build(row, dt, lay).graph)
        op = conv_op_for(lib, None, res, m)
        lib.miopenSetConvolutionFindMode(op.conv.handle, 1)
        p = mt.miopenProblem_t()
        lib.miopenCreateConvProblem(ctypes.byref(p), op.conv.handle, op.direction.problem)
        res.add(Owned(lib, p, "miopenDestroyProblem"))
        for desc, tid in zip(op.descs, op.direction.find_ids):
            lib.miopenSetProblemTensorDescriptor(p, tid, desc.handle)
        if row in (Row.CONV_FPROP, Row.CONV_BIAS_ACT):  # descs: (w, x, y)
            n = len(m.t.x.dim)
            out, nd = (ctypes.c_int * n)(), ctypes.c_int()
            lib.miopenGetConvolutionNdForwardOutputDim(op.conv.handle, op.descs[1].handle,
                                                      op.descs[0].handle, ctypes.byref(nd), out)
            want = tuple((m.t.conv_y if row == Row.CONV_BIAS_ACT else m.t.y).dim)
            assert tuple(out[: nd.value]) == want, (row, lay, tuple(out[: nd.value]), want)
        if row == Row.CONV_BIAS_ACT:
            x = res.add(TensorDesc(lib, m.t.x.data_type, m.t.x.dim, m.t.x.stride))
            plan = FusionPlan(lib, res, x)
            plan.conv_forward(op.conv, op.descs[0])
            b = m.t.bias
            plan.bias_forward(res.add(TensorDesc(lib, b.data_type, b.dim, b.stride)))
            plan.activation_forward(m.activation.mode)
            plan._res.close()
        checked += 1
for row in (Row.BN_INFERENCE, Row.BN_TRAINING_ACT, Row.BN_INF_DRELU_BN_BWD):
    for dt, lay in configs:
        m = match(build(row, dt, lay).graph)
        x = res.add(TensorDesc(lib, m.t.x.data_type, m.t.x.dim, m.t.x.stride))
        q = res.add(bn_param_desc(lib, x))
        dims, strides, dtype = (ctypes.c_int * 5)(), (ctypes.c_int * 5)(), ctypes.c_uint()
        lib.miopenGetTensorDescriptor(q.handle, ctypes.byref(dtype), dims, strides)
        assert dtype.value == 1 and tuple(dims[: len(q.dims)]) == q.dims, (row, lay, tuple(dims))
        if m.activation is not None:
            a = m.activation
            res.add(ActivationDesc(lib, a.mode, a.alpha, a.beta, a.gamma))
            plan = FusionPlan(lib, res, x)
            if row == Row.BN_TRAINING_ACT:
                plan.batchnorm_forward(True)
                plan.activation_forward(a.mode)
            else:
                plan.batchnorm_backward()
                plan.activation_backward(a.mode)
            plan._res.close()
        checked += 1
res.close()
reason = ENGINE.check_support(build(Row.CONV_FPROP, D.FLOAT, "NCHW").graph, Handle())
assert reason is not None and reason.startswith("no AMD GPU available"), reason
print("CHECKED", checked, lib.capabilities.version_string, "|", reason)
'''


def _sysroot_tools() -> tuple[object, object]:
    tools = str(REPO / "tools")
    if tools not in sys.path:
        sys.path.insert(0, tools)
    import miopen_sysroot
    import run_tests

    return miopen_sysroot, run_tests


@pytest.mark.parametrize("version", ["6.4.3", "7.2.4"])
def test_engine_handle_free_calls_on_the_real_library(version: str, require_or_skip: object) -> None:
    pytest.importorskip("torch")
    if not sys.platform.startswith("linux"):  # e.g. the windows lane, where a HIPDNN_CACHE_DIR
        pytest.skip("the real libMIOpen sysroots run only on Linux")  # may name Linux sysroots
    miopen_sysroot, run_tests = _sysroot_tools()
    sysroot = miopen_sysroot.find_sysroot(version)  # type: ignore[attr-defined]
    if sysroot is None:
        require_or_skip("HIPDNN_REQUIRE_LIVE",  # type: ignore[operator]
                        f"no cached MIOpen {version} sysroot (python tools/run_tests.py --build-sysroots)")
    cmd, env = run_tests.live_command(sysroot, [])  # type: ignore[attr-defined]
    cmd = [*cmd[: cmd.index("-c")], "-c", SCRIPT, str(REPO)]
    env["PYTHONPATH"] = f"{REPO}:{env.get('PYTHONPATH', '')}"
    out = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True, timeout=300,
                         check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("CHECKED"))
    assert line.startswith("CHECKED 28 ")
    expect = {"6.4.3": "3.4.0", "7.2.4": "3.5.1"}[version]
    assert f" {expect} | no AMD GPU available" in line
