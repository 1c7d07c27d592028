"""Calling MIOpen directly: a tensor reduction with miopenReduceTensor (docs/MIOPEN_DIRECT.md).

    python examples/miopen_direct_reduction.py

Needs libMIOpen (HIPDNN_MIOPEN_LIBRARY or a ROCm install). Without a GPU it runs what MIOpen
answers on the host -- the reduction descriptor set and read back, MIOpen's refusal of 16-bit
flattened indices -- and checks them; with one, it also sums over an axis on the device (workspace and
indices sized by MIOpen's own queries) and checks against numpy.
"""

from __future__ import annotations

import numpy as np
from _check import check

import miopen_ctypes
from hipdnn.direct import Session
from miopen_ctypes.enums import (
    miopenDataType_t,
    miopenIndicesType_t,
    miopenNanPropagation_t,
    miopenReduceTensorIndices_t,
    miopenReduceTensorOp_t,
)

ADD = miopenReduceTensorOp_t.MIOPEN_REDUCE_TENSOR_ADD
SETTINGS = (ADD, miopenDataType_t.miopenFloat, miopenNanPropagation_t.MIOPEN_NOT_PROPAGATE_NAN,
            miopenReduceTensorIndices_t.MIOPEN_REDUCE_TENSOR_NO_INDICES,
            miopenIndicesType_t.MIOPEN_32BIT_INDICES)


def _exact(name: str, got: object, want: object) -> bool:
    ok = got == want
    print(f"{name}: {got} -> {'PASS' if ok else f'FAIL (expected {want})'}")
    return ok


def main() -> int:
    a_host = np.random.default_rng(4).standard_normal((4, 8, 16)).astype(np.float32)
    ok = True
    with Session() as s:
        red = s.descriptor("ReduceTensor", "miopenSetReduceTensorDescriptor", *SETTINGS)
        ok &= _exact("descriptor read back", s.query("miopenGetReduceTensorDescriptor", red),
                     tuple(int(v) for v in SETTINGS))
        try:  # MIOpen's own rule for index outputs, answered on the host
            s.descriptor("ReduceTensor", "miopenSetReduceTensorDescriptor", *SETTINGS[:3],
                         miopenReduceTensorIndices_t.MIOPEN_REDUCE_TENSOR_FLATTENED_INDICES,
                         miopenIndicesType_t.MIOPEN_16BIT_INDICES)
            ok &= _exact("16-bit indices refused", False, True)
        except miopen_ctypes.MIOpenError as exc:
            ok &= _exact(f"16-bit indices refused ({type(exc).__name__})", True, True)
        try:
            s.handle  # noqa: B018  (made here: needs a GPU)
        except miopen_ctypes.MIOpenError as exc:
            print(f"no GPU, the reduction itself is not run: {exc}")
            return 0 if ok else 1
        a, c = s.to_device(a_host), s.empty((4, 1, 16))
        ws = s.workspace(max(s.query("miopenGetReductionWorkspaceSize", red, a, c), 1))
        indices = s.workspace(max(s.query("miopenGetReductionIndicesSize", red, a, c), 1))
        s.call("miopenReduceTensor", red, indices, ws, 1.0, a, 0.0, c)
        ok &= check("sum over axis 1", c.numpy(), a_host.astype(np.float64).sum(1, keepdims=True), 1e-5, 1e-5)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
