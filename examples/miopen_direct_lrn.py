"""Calling MIOpen directly: local response normalization with miopenLRNForward (docs/MIOPEN_DIRECT.md).

    python examples/miopen_direct_lrn.py

Needs libMIOpen (HIPDNN_MIOPEN_LIBRARY or a ROCm install). Without a GPU it runs what MIOpen
answers on the host -- the LRN descriptor set and read back, the refusal of a getter on a
descriptor never set (the real library crashes there), the backward workspace size -- and checks
them; with one, it also normalizes on the device and checks against PyTorch.
"""

from __future__ import annotations

import numpy as np
from _check import check, torch

import miopen_ctypes
from hipdnn.direct import Session, UnsetDescriptorError
from miopen_ctypes.enums import miopenLRNMode_t

N, ALPHA, BETA, K = 5, 1e-2, 0.75, 2.0


def _exact(name: str, got: object, want: object) -> bool:
    ok = got == want
    print(f"{name}: {got} -> {'PASS' if ok else f'FAIL (expected {want})'}")
    return ok


def _reference(x: np.ndarray) -> np.ndarray:
    if torch is not None:
        return torch.nn.functional.local_response_norm(torch.from_numpy(x.astype(np.float64)), N,
                                                       ALPHA, BETA, K).numpy()
    sq = np.pad(x.astype(np.float64) ** 2, ((0, 0), (N // 2, (N - 1) // 2), (0, 0), (0, 0)))
    window = sum(sq[:, i:i + x.shape[1]] for i in range(N))
    return x / (K + ALPHA / N * window) ** BETA


def main() -> int:
    x_host = np.random.default_rng(3).standard_normal((2, 7, 3, 4)).astype(np.float32)
    ok = True
    with Session() as s:
        lrn = s.descriptor("LRN", "miopenSetLRNDescriptor", miopenLRNMode_t.miopenLRNCrossChannel,
                           N, ALPHA, BETA, K)
        mode, n, alpha, beta, k = s.query("miopenGetLRNDescriptor", lrn)
        ok &= _exact("descriptor read back (mode, n, beta, k)", (mode, n, beta, k),
                     (int(miopenLRNMode_t.miopenLRNCrossChannel), N, BETA, K))
        ok &= _exact("alpha read back", abs(alpha - ALPHA) < 1e-12, True)
        try:  # a getter on a descriptor never set: the real library crashes, the Session refuses
            s.query("miopenGetLRNDescriptor", s.descriptor("LRN"))
            ok &= _exact("unset descriptor refused", False, True)
        except UnsetDescriptorError as exc:
            ok &= _exact(f"unset descriptor refused ({str(exc)[:60]}...)", True, True)
        need = s.query("miopenLRNGetWorkSpaceSize", x_host)  # backward's scale buffer
        ok &= _exact("workspace bytes (4 per element)", need, 4 * x_host.size)
        try:
            s.handle  # noqa: B018  (made here: needs a GPU)
        except miopen_ctypes.MIOpenError as exc:
            print(f"no GPU, the LRN itself is not run: {exc}")
            return 0 if ok else 1
        x, y = s.to_device(x_host), s.empty(x_host.shape)
        s.call("miopenLRNForward", lrn, 1.0, x, 0.0, y, False, None)
        ok &= check("y", y.numpy(), _reference(x_host), 1e-5, 1e-4)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
