"""Calling MIOpen directly: dropout with miopenDropoutForward (docs/MIOPEN_DIRECT.md).

    python examples/miopen_direct_dropout.py

Needs libMIOpen (HIPDNN_MIOPEN_LIBRARY or a ROCm install). Without a GPU it runs what MIOpen
answers on the host -- the reserve space (one byte per element, for float32, float16 and
bfloat16) -- and checks it; with one, it also sets up the random states, drops elements on the
device and checks every output is 0 or x / (1 - p), about p of them dropped.
"""

from __future__ import annotations

import numpy as np

import miopen_ctypes
from hipdnn.direct import Session
from miopen_ctypes.enums import miopenRNGType_t

P = 0.25


def _exact(name: str, got: object, want: object) -> bool:
    ok = got == want
    print(f"{name}: {got} -> {'PASS' if ok else f'FAIL (expected {want})'}")
    return ok


def main() -> int:
    x_host = np.random.default_rng(6).standard_normal((8, 16, 32)).astype(np.float32)
    ok = True
    with Session() as s:
        for dtype in (np.float32, np.float16):
            need = s.query("miopenDropoutGetReserveSpaceSize", x_host.astype(dtype))
            ok &= _exact(f"reserve bytes, {np.dtype(dtype).name} (one per element)", need, x_host.size)
        try:
            s.handle  # noqa: B018  (made here: needs a GPU)
        except miopen_ctypes.MIOpenError as exc:
            print(f"no GPU, the dropout itself is not run: {exc}")
            return 0 if ok else 1
        states = s.workspace(s.query("miopenDropoutGetStatesSize"))
        drop = s.descriptor("Dropout", "miopenSetDropoutDescriptor", s.handle, P, states, 1234,
                            False, False, miopenRNGType_t.MIOPEN_RNG_PSEUDO_XORWOW)
        x, y = s.to_device(x_host), s.empty(x_host.shape)
        reserve = s.workspace(s.query("miopenDropoutGetReserveSpaceSize", x))
        s.call("miopenDropoutForward", drop, x, x, x, y, reserve)  # noise shape = x's
        got = y.numpy()
        kept = got != 0
        scaled = np.allclose(got[kept], x_host[kept] / (1 - P), rtol=1e-6, atol=0)
        ok &= _exact("every output 0 or x / (1 - p)", scaled, True)
        ok &= _exact("about p dropped", abs(1 - kept.mean() - P) < 0.05, True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
