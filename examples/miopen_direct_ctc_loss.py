"""Calling MIOpen directly: the CTC loss descriptor and miopenCTCLoss (docs/MIOPEN_DIRECT.md).

    python examples/miopen_direct_ctc_loss.py

Needs libMIOpen (HIPDNN_MIOPEN_LIBRARY or a ROCm install). Without a GPU it runs what MIOpen
answers on the host -- a fresh descriptor's defaults, a setting read back -- and checks them; with
one, it also computes the loss of a small batch (workspace sized by MIOpen's own query) and
checks it against PyTorch's ctc_loss.
"""

from __future__ import annotations

import ctypes

import numpy as np
from _check import check, torch

import miopen_ctypes
from hipdnn.direct import Session
from miopen_ctypes.enums import miopenCTCLossAlgo_t, miopenDataType_t


def _exact(name: str, got: object, want: object) -> bool:
    ok = got == want
    print(f"{name}: {got} -> {'PASS' if ok else f'FAIL (expected {want})'}")
    return ok


def _ints(values: list[int]) -> ctypes.Array[ctypes.c_int]:
    return (ctypes.c_int * len(values))(*values)


def main() -> int:
    steps, batch, classes = 10, 2, 5
    ok = True
    with Session() as s:
        fresh = s.descriptor("CTCLoss")
        ok &= _exact("fresh descriptor (dtype, blank, softmax)", s.query("miopenGetCTCLossDescriptor", fresh),
                     (int(miopenDataType_t.miopenFloat), 0, 1))
        ctc = s.descriptor("CTCLoss", "miopenSetCTCLossDescriptor", miopenDataType_t.miopenFloat, 0, 1)
        ok &= _exact("set and read back", s.query("miopenGetCTCLossDescriptor", ctc),
                     (int(miopenDataType_t.miopenFloat), 0, 1))
        try:
            s.handle  # noqa: B018  (made here: needs a GPU)
        except miopen_ctypes.MIOpenError as exc:
            print(f"no GPU, the loss itself is not run: {exc}")
            return 0 if ok else 1
        rng = np.random.default_rng(5)
        logits = rng.standard_normal((steps, batch, classes)).astype(np.float32)  # softmax applied by MIOpen
        labels, label_lengths, input_lengths = [1, 2, 2, 3, 4], [2, 3], [steps, steps]
        probs, grads, losses = s.to_device(logits), s.empty(logits.shape), s.empty((batch,))
        algo = miopenCTCLossAlgo_t.MIOPEN_CTC_LOSS_ALGO_DETERMINISTIC
        need = s.query("miopenGetCTCLossWorkspaceSize", logits, logits, _ints(labels),
                       _ints(label_lengths), _ints(input_lengths), algo, ctc)
        s.call("miopenCTCLoss", probs, _ints(labels), _ints(label_lengths), _ints(input_lengths),
               losses, grads, algo, ctc, s.workspace(need))
        if torch is not None:
            logp = torch.log_softmax(torch.from_numpy(logits.astype(np.float64)), 2)
            want = torch.nn.functional.ctc_loss(logp, torch.tensor(labels), torch.tensor(input_lengths),
                                                torch.tensor(label_lengths), reduction="none").numpy()
            ok &= check("losses", losses.numpy(), want, 1e-4, 1e-4)
        else:
            ok &= _exact("losses finite", bool(np.isfinite(losses.numpy()).all()), True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
