"""Seed row "BN backward": batchnorm backward with the saved batch mean and inverse std, FP32 NCHW.

    python examples/seed_bn_backward.py

Outputs dx, dscale and dbias. MIOpen: miopenBatchNormalizationBackward_V2. Checked against
PyTorch autograd through ``batch_norm(training=True)`` (numpy without PyTorch).
"""

from __future__ import annotations

import numpy as np
from _check import bn_backward, check, report, workspace

import hipdnn


def main() -> int:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 6, 8, 8), np.float32)
    dy = rng.standard_normal((4, 6, 8, 8), np.float32)
    scale = rng.standard_normal((1, 6, 1, 1), np.float32)
    eps = 1e-5
    mean = x.mean(axis=(0, 2, 3), keepdims=True, dtype=np.float64).astype(np.float32)
    inv_std = (1 / np.sqrt(x.var(axis=(0, 2, 3), keepdims=True, dtype=np.float64) + eps)
               ).astype(np.float32)  # what batchnorm training saved

    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT, compute_data_type=hipdnn.DataType.FLOAT)
    xt, dyt, st, mt, it = (g.tensor_like(a, name=n) for a, n in (
        (x, "x"), (dy, "dy"), (scale, "scale"), (mean, "mean"), (inv_std, "inv_variance")))
    dx, dscale, dbias = g.batchnorm_backward(dyt, xt, st, mt, it, name="bn_bwd")
    for t in (dx, dscale, dbias):
        t.set_output(True)
    g.build()
    report(g)
    got = {t: np.empty(t.get_dim(), np.float32) for t in (dx, dscale, dbias)}
    g.execute({xt: x, dyt: dy, st: scale, mt: mean, it: inv_std, **got}, workspace(g))

    want = bn_backward(dy, x, scale, eps)
    ok = [check(n, got[t].reshape(np.shape(w)), w, 1e-4, 1e-4)
          for n, t, w in zip(("dx", "dscale", "dbias"), (dx, dscale, dbias), want, strict=True)]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    raise SystemExit(main())
