"""Seed row "BN training (batch stats)": batchnorm training with running statistics, FP32 NCHW.

    python examples/seed_bn_training.py

Outputs y, the batch mean, the saved inverse standard deviation and the updated running mean and
variance (momentum 0.1; the running variance uses the unbiased batch variance). MIOpen:
miopenBatchNormalizationForwardTraining_V2. Checked against PyTorch (numpy without PyTorch).
"""

from __future__ import annotations

import numpy as np
from _check import bn_training, check, report, workspace

import hipdnn


def main() -> int:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 6, 8, 8), np.float32) * 2 + 1
    scale, bias, rm = (rng.standard_normal((1, 6, 1, 1), np.float32) for _ in range(3))
    rv = rng.uniform(0.5, 2.0, (1, 6, 1, 1)).astype(np.float32)
    eps, momentum = 1e-5, 0.1

    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT, compute_data_type=hipdnn.DataType.FLOAT)
    xt = g.tensor_like(x, name="x")
    st, bt, rmt, rvt = (g.tensor_like(a, name=n) for a, n in
                        ((scale, "scale"), (bias, "bias"), (rm, "running_mean"), (rv, "running_var")))
    outs = g.batchnorm(xt, st, bt, epsilon=eps, momentum=momentum, in_running_mean=rmt,
                       in_running_var=rvt, name="bn")
    for t in outs:
        t.set_output(True)  # type: ignore[union-attr]
    g.build()
    report(g)
    got = [np.empty(t.get_dim(), np.float32) for t in outs]  # type: ignore[union-attr]
    g.execute({xt: x, st: scale, bt: bias, rmt: rm, rvt: rv, **dict(zip(outs, got, strict=True))}, workspace(g))

    y, mean, inv_std = bn_training(x, scale, bias, eps)
    m = x.size // x.shape[1]
    var_unbiased = x.astype(np.float64).var(axis=(0, 2, 3)) * m / (m - 1)
    want = [y, mean, inv_std, (1 - momentum) * rm.ravel() + momentum * mean,
            (1 - momentum) * rv.ravel() + momentum * var_unbiased]
    names = ["y", "mean", "inv_variance", "next_running_mean", "next_running_var"]
    ok = [check(n, a.reshape(np.shape(w)), w, 1e-4, 1e-4) for n, a, w in zip(names, got, want, strict=True)]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    raise SystemExit(main())
