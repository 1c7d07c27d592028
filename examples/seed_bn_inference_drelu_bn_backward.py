"""Seed row "BN inference + DReLU + BN backward": the backward pass of batchnorm + ReLU that
recomputes the batchnorm output from saved statistics, FP32 NCHW.

    python examples/seed_bn_inference_drelu_bn_backward.py

MIOpen 3.5: miopenBatchNormBackwardActivation; 3.4: a fusion plan [BNBackward,
ActivationBackward]; else unfused (recompute, activation backward, BN backward). Checked against
PyTorch autograd of batchnorm + ReLU (numpy without PyTorch).
"""

from __future__ import annotations

import numpy as np
from _check import bn_backward, check, report, workspace

import hipdnn


def main() -> int:
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 6, 8, 8), np.float32)
    dy = rng.standard_normal((4, 6, 8, 8), np.float32)
    scale, bias = (rng.standard_normal((1, 6, 1, 1), np.float32) for _ in range(2))
    eps = 1e-5
    mean64 = x.mean(axis=(0, 2, 3), keepdims=True, dtype=np.float64)
    inv64 = 1 / np.sqrt(x.var(axis=(0, 2, 3), keepdims=True, dtype=np.float64) + eps)
    mean, inv_std = mean64.astype(np.float32), inv64.astype(np.float32)

    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT, compute_data_type=hipdnn.DataType.FLOAT)
    xt, dyt, st, bt, mt, it = (g.tensor_like(a, name=n) for a, n in (
        (x, "x"), (dy, "dy"), (scale, "scale"), (bias, "bias"), (mean, "mean"),
        (inv_std, "inv_variance")))
    y = g.batchnorm_inference(xt, mt, it, st, bt, name="bn_inf")
    d = g.relu_backward(dyt, y, name="drelu")
    dx, dscale, dbias = g.batchnorm_backward(d, xt, st, mt, it, name="bn_bwd")
    for t in (dx, dscale, dbias):
        t.set_output(True)
    g.build()
    report(g)
    got = {t: np.empty(t.get_dim(), np.float32) for t in (dx, dscale, dbias)}
    g.execute({xt: x, dyt: dy, st: scale, bt: bias, mt: mean, it: inv_std, **got}, workspace(g))

    y_ref = (x - mean64) * inv64 * scale + bias  # the recomputed forward (float64)
    d_ref = np.where(y_ref > 0, dy, 0.0)  # ReLU backward
    want = bn_backward(d_ref, x, scale, eps)
    ok = [check(n, got[t].reshape(np.shape(w)), w, 1e-4, 1e-4)
          for n, t, w in zip(("dx", "dscale", "dbias"), (dx, dscale, dbias), want, strict=True)]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    raise SystemExit(main())
