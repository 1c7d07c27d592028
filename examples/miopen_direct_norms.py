"""Calling MIOpen directly: layer norm, T5 layer norm (RMS norm) and group norm (docs/MIOPEN_DIRECT.md).

    python examples/miopen_direct_norms.py

Needs libMIOpen (HIPDNN_MIOPEN_LIBRARY or a ROCm install). Without a GPU it checks what the
loaded library exports (miopenLayerNormBackward only from MIOpen 3.5, a typed version error on
3.4); with one, it also normalizes on the device and checks each against PyTorch. (The graph
API runs layer norm and RMS norm on these calls too: examples/beyond_layer_norm_rms_norm.py.)
"""

from __future__ import annotations

import numpy as np
from _check import check, torch

import miopen_ctypes
from hipdnn.direct import Session
from miopen_ctypes.enums import miopenNormMode_t
from miopen_ctypes.prototypes import PROTOTYPES

EPS = 1e-5


def _exact(name: str, got: object, want: object) -> bool:
    ok = got == want
    print(f"{name}: {got} -> {'PASS' if ok else f'FAIL (expected {want})'}")
    return ok


def main() -> int:
    rng = np.random.default_rng(7)
    x_host = rng.standard_normal((4, 6, 32)).astype(np.float32)
    w_host, b_host = (rng.random(32) + 0.5).astype(np.float32), rng.standard_normal(32).astype(np.float32)
    ok = True
    with Session() as s:
        since = PROTOTYPES["miopenLayerNormBackward"].since
        version = s.lib.capabilities.version
        ok &= _exact(f"miopenLayerNormBackward exported by MIOpen {'.'.join(map(str, version))}",
                     s.lib.capabilities.has("miopenLayerNormBackward"), version >= since)
        try:
            s.handle  # noqa: B018  (made here: needs a GPU)
        except miopen_ctypes.MIOpenError as exc:
            print(f"no GPU, the norms themselves are not run: {exc}")
            return 0 if ok else 1
        if torch is None:
            print("PyTorch is not installed: nothing to compare the device results with")
            return 0 if ok else 1
        xt = torch.from_numpy(x_host.astype(np.float64))
        wt, bt = torch.from_numpy(w_host.astype(np.float64)), torch.from_numpy(b_host.astype(np.float64))
        x, w, b = s.to_device(x_host), s.to_device(w_host), s.to_device(b_host)
        y, mean, rstd = s.empty(x_host.shape), s.empty((4, 6)), s.empty((4, 6))
        s.call("miopenLayerNormForward", miopenNormMode_t.MIOPEN_WEIGHT_BIAS, x, w, b, EPS, 2, y, mean, rstd)
        ok &= check("layer norm y", y.numpy(), torch.nn.functional.layer_norm(xt, (32,), wt, bt, EPS).numpy(),
                    1e-5, 1e-4)
        ok &= check("layer norm mean", mean.numpy(), xt.mean(-1).numpy(), 1e-6, 1e-5)
        y5, rstd5 = s.empty(x_host.shape), s.empty((4, 6, 1))
        s.call("miopenT5LayerNormForward", miopenNormMode_t.MIOPEN_WEIGHT_BIAS_T5, x, w, EPS, y5, rstd5)
        ok &= check("T5 layer norm y", y5.numpy(), torch.nn.functional.rms_norm(xt, (32,), wt, EPS).numpy(),
                    1e-5, 1e-4)
        xg = rng.standard_normal((2, 6, 4, 5)).astype(np.float32)
        yg, mg, rg = s.empty(xg.shape), s.empty((2, 3)), s.empty((2, 3))
        try:
            s.call("miopenGroupNormForward", miopenNormMode_t.MIOPEN_WEIGHT_BIAS, s.to_device(xg),
                   s.to_device(w_host[:6]), s.to_device(b_host[:6]), 3, EPS, yg, mg, rg)
        except miopen_ctypes.errors.MIOpenNotImplementedError as exc:  # e.g. RDNA3: no solver
            print(f"group norm not checked: MIOpen has no group norm solver for this GPU ({exc})")
            return 0 if ok else 1
        want = torch.nn.functional.group_norm(torch.from_numpy(xg.astype(np.float64)), 3, wt[:6], bt[:6], EPS)
        ok &= check("group norm y", yg.numpy(), want.numpy(), 1e-5, 1e-4)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
