"""Calling MIOpen directly: miopenSoftmaxForward_V2 in every algorithm and mode (docs/MIOPEN_DIRECT.md).

    python examples/miopen_direct_softmax.py

Needs libMIOpen. Without a GPU it checks MIOpen's Find 2.0 softmax descriptor for each algorithm
and mode (what it stores) and stops; with one it runs each on the device against PyTorch.
"""

from __future__ import annotations

import numpy as np
from _check import check, torch

import miopen_ctypes
from hipdnn.direct import Session
from miopen_ctypes.enums import miopenSoftmaxAlgorithm_t, miopenSoftmaxMode_t


def reference(x: np.ndarray, algorithm: int, mode: int) -> np.ndarray:
    """softmax over C (MODE_CHANNEL) or over C*H*W per image (MODE_INSTANCE), in float64."""
    x64 = x.astype(np.float64)
    flat = x64 if mode == miopenSoftmaxMode_t.MIOPEN_SOFTMAX_MODE_CHANNEL else x64.reshape(x.shape[0], -1, 1, 1)
    if torch is not None:
        t = torch.from_numpy(flat)
        out = torch.log_softmax(t, 1) if algorithm == miopenSoftmaxAlgorithm_t.MIOPEN_SOFTMAX_LOG else torch.softmax(t, 1)
        return out.numpy().reshape(x.shape)
    shifted = flat - flat.max(axis=1, keepdims=True)
    log = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return (log if algorithm == miopenSoftmaxAlgorithm_t.MIOPEN_SOFTMAX_LOG else np.exp(log)).reshape(x.shape)


def main() -> int:
    x_host = np.random.default_rng(0).standard_normal((2, 5, 3, 4)).astype(np.float32)
    ok = True
    with Session() as s:
        for algorithm in miopenSoftmaxAlgorithm_t:
            for mode in miopenSoftmaxMode_t:
                desc = s.descriptor("Softmax", "miopenSetSoftmaxDescriptor", 1.0, 0.0, algorithm, mode)
                stored = s.query("miopenGetSoftmaxDescriptor", desc)
                good = stored == (1.0, 0.0, algorithm, mode)
                print(f"descriptor {algorithm.name} {mode.name}: {stored} -> {'PASS' if good else 'FAIL'}")
                ok &= good
        try:
            s.handle  # noqa: B018  (made here: needs a GPU)
        except miopen_ctypes.MIOpenError as exc:
            print(f"no GPU, the softmax itself is not run: {exc}")
            return 0 if ok else 1
        x = s.to_device(x_host)
        for algorithm in miopenSoftmaxAlgorithm_t:
            for mode in miopenSoftmaxMode_t:
                y = s.empty(x_host.shape)
                s.call("miopenSoftmaxForward_V2", 1.0, x, 0.0, y, algorithm, mode)
                want = reference(x_host, algorithm, mode)
                if algorithm == miopenSoftmaxAlgorithm_t.MIOPEN_SOFTMAX_FAST:  # no max subtraction
                    want = reference(x_host, miopenSoftmaxAlgorithm_t.MIOPEN_SOFTMAX_ACCURATE, mode)
                ok &= check(f"y {algorithm.name} {mode.name}", y.numpy(), want, 1e-5, 1e-4)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
