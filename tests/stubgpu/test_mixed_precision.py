"""FP16 convolution + bias + ReLU as cudnn-frontend's samples write it (I/O FP16, intermediates and
compute FP32), on the REAL libMIOpen: MIOPEN_ENGINE builds it, the real library accepts every
descriptor and call of the plan (its kernels are launched into the stub's log, nothing computed;
the numbers: tests/emulated/test_miopen_engine_mixed_precision.py), and the real library's
miopenOpTensor refuses an FP32 bias with FP16 data: the refusal MIOPEN_ENGINE's decline names.
"""

from __future__ import annotations

import ctypes
import re
from typing import Any

import numpy as np
import pytest
from stubgpu_util import Stub, without_compiler
from test_decisions import EPILOGUE, SOLUTION_KERNELS
from test_miopen_engine_graphs import build

from hipdnn.core.shapes import packed_strides
from hipdnn.core.types import DataType as D
from hipdnn.engines.miopen import Row
from hipdnn.engines.miopen.descriptors import Resources, TensorDesc
from miopen_ctypes.enums import miopenTensorOp_t
from miopen_ctypes.errors import MIOpenStatusError


def _engine() -> Any:
    from hipdnn.engines import registry

    return next(e for e in registry().values() if e.name == "MIOPEN_ENGINE")


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_fp16_conv_bias_relu_fp32_compute_on_the_real_library(stub: Stub, layout: str) -> None:
    case = build(Row.CONV_BIAS_ACT, D.HALF, layout, bias_compute=D.NOT_SET)
    g = case.graph
    try:
        g.build()
        plan = g.plans[0]
        reason = g.engine_reasons()["MIOPEN_ENGINE"]
        if not stub.compiles_kernels and reason is not None:  # 3.4.0 without clang-21
            assert "CompileSolution failed" in reason and "(7)" in reason, reason
            without_compiler(stub, reason)
        assert plan.engine.name == "MIOPEN_ENGINE", reason
        outs = {r: np.full_like(a, np.nan) for r, a in case.empty_outputs().items()}
        pack: dict[Any, Any] = dict(case.inputs)
        pack.update({case.outputs[r]: a for r, a in outs.items()})
        mark = stub.log.mark()
        g.execute(pack, np.zeros(plan.workspace_size, np.uint8) if plan.workspace_size else None)
        events = stub.log.since(mark)
        assert not [e for e in events if e["event"] == "error"]
        kernels = [e["kernel"] for e in events if e["event"] == "launch"]
        if plan.path == "fused":
            assert kernels == ["MIOpenConvUniBatchNormActiv"], kernels
        else:  # the convolution, then the bias add (miopenOpTensor on FP16) and the activation
            assert plan.path == "unfused", plan.name
            assert all(re.match(SOLUTION_KERNELS[plan.solution_id], k)
                       for k in kernels[:-2]), kernels
            assert re.match(EPILOGUE[0], kernels[-2]), kernels
            assert re.match(EPILOGUE[1], kernels[-1]), kernels
    finally:
        g.close()


def test_real_library_refuses_an_fp32_bias_on_fp16_data(stub: Stub, lib: Any, hip: Any) -> None:
    """miopenOpTensor (the unfused bias add) with B FLOAT and A, C HALF: 'Datatypes for B and C
    tensors do not match' (status 7); MIOPEN_ENGINE declines such a graph naming exactly that."""
    state = _engine().handle_state(None)
    res = Resources()
    buf = ctypes.c_void_p()
    hip.hipMalloc(ctypes.byref(buf), 4096)
    one, zero = ctypes.c_float(1), ctypes.c_float(0)
    try:
        y = res.add(TensorDesc(lib, D.HALF, (2, 3, 5, 5), packed_strides((2, 3, 5, 5))))
        for bias_type, ok in ((D.HALF, True), (D.FLOAT, False)):
            b = res.add(TensorDesc(lib, bias_type, (1, 3, 1, 1), (3, 1, 1, 1)))
            args = (state.handle, miopenTensorOp_t.miopenTensorOpAdd, ctypes.byref(one), y.raw,
                    buf.value, ctypes.byref(one), b.raw, buf.value, ctypes.byref(zero), y.raw,
                    buf.value)
            if ok:
                lib.miopenOpTensor(*args)
            else:
                with pytest.raises(MIOpenStatusError) as info:
                    lib.miopenOpTensor(*args)
                assert info.value.status == 7
    finally:
        res.close()
        hip.hipFree(buf)
    case = build(Row.CONV_BIAS_ACT, D.HALF, "NCHW", bias_compute=D.NOT_SET, bias_dtype=D.FLOAT)
    reason = _engine().check_support(case.graph, None)
    assert reason is not None and "Datatypes for B and C tensors do not match" in reason, reason
    case.graph.build()
    try:
        assert case.graph.plans[0].engine.name == "CPU_REFERENCE_ENGINE"
    finally:
        case.graph.close()
