"""Calling MIOpen directly: max pooling with miopenPoolingForward (docs/MIOPEN_DIRECT.md).

    python examples/miopen_direct_pooling.py

Needs libMIOpen (HIPDNN_MIOPEN_LIBRARY or a ROCm install). Without a GPU it runs what MIOpen
answers on the host -- the output shape, the workspace size, the refusal of a too-small workspace
-- and checks them; with one, it also pools on the device and checks the result against PyTorch.
"""

from __future__ import annotations

import numpy as np
from _check import check, torch

import miopen_ctypes
from hipdnn import WorkspaceError
from hipdnn.direct import Session
from miopen_ctypes.enums import miopenPoolingMode_t


def _exact(name: str, got: object, want: object) -> bool:
    ok = got == want
    print(f"{name}: {got} -> {'PASS' if ok else f'FAIL (expected {want})'}")
    return ok


def main() -> int:
    rng = np.random.default_rng(0)
    x_host = rng.standard_normal((2, 3, 8, 6)).astype(np.float32)
    ok = True
    with Session() as s:
        pool = s.descriptor("Pooling", "miopenSet2dPoolingDescriptor",
                            miopenPoolingMode_t.miopenPoolingMax, 2, 2, 0, 0, 2, 2)  # window, pad, stride
        shape = s.query("miopenGetPoolingForwardOutputDim", pool, x_host)  # host arrays describe
        ok &= _exact("output dims", shape, (2, 3, 4, 3))
        y_host = np.empty(shape, np.float32)
        need = s.query("miopenPoolingGetWorkSpaceSizeV2", pool, y_host)
        ok &= _exact("workspace bytes (one uint8 index per output)", need, y_host.size)
        try:  # refused before any C call: descriptors and NULL data suffice to see it
            s.call("miopenPoolingForward", pool, 1.0, s.tensor(x_host), 0, 0.0, s.tensor(y_host), 0,
                   True, None, 0)
            ok = _exact("NULL workspace refused", False, True)
        except WorkspaceError as exc:
            ok &= _exact(f"NULL workspace refused ({exc})", True, True)
        try:
            s.handle  # noqa: B018  (made here: needs a GPU)
        except miopen_ctypes.MIOpenError as exc:
            print(f"no GPU, the pooling itself is not run: {exc}")
            return 0 if ok else 1
        x, y = s.to_device(x_host), s.empty(shape)
        s.call("miopenPoolingForward", pool, 1.0, x, 0.0, y, True, s.workspace(need))
        if torch is not None:
            want = torch.nn.functional.max_pool2d(torch.from_numpy(x_host), 2, 2).numpy()
        else:
            want = x_host.reshape(2, 3, 4, 2, 3, 2).max(axis=(3, 5))
        ok &= check("y", y.numpy(), want, 0, 0)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
