"""Seed row "BN training + activation": batchnorm training followed by ReLU, FP32 NCHW.

    python examples/seed_bn_training_relu.py

MIOpen 3.5: miopenBatchNormForwardTrainingActivation; 3.4: a fusion plan [BNForward,
ActivationForward]; else batchnorm then activation. Checked against PyTorch (numpy without it).
"""

from __future__ import annotations

import numpy as np
from _check import bn_training, check, report, workspace

import hipdnn


def main() -> int:
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 6, 8, 8), np.float32)
    scale, bias = (rng.standard_normal((1, 6, 1, 1), np.float32) for _ in range(2))
    eps = 1e-3

    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT, compute_data_type=hipdnn.DataType.FLOAT)
    xt, st, bt = (g.tensor_like(a, name=n) for a, n in ((x, "x"), (scale, "scale"), (bias, "bias")))
    y, mean, inv_var, _, _ = g.batchnorm(xt, st, bt, epsilon=eps, name="bn")
    out = g.relu(y, name="relu")  # type: ignore[arg-type]
    for t in (out, mean, inv_var):
        t.set_output(True)  # type: ignore[union-attr]
    g.build()
    report(g)
    got = {t: np.empty(t.get_dim(), np.float32) for t in (out, mean, inv_var)}  # type: ignore[union-attr]
    g.execute({xt: x, st: scale, bt: bias, **got}, workspace(g))

    y_ref, mean_ref, inv_ref = bn_training(x, scale, bias, eps)
    ok = [check("relu(y)", got[out], np.maximum(y_ref, 0), 1e-4, 1e-4),
          check("mean", got[mean].ravel(), mean_ref, 1e-5, 1e-4),  # type: ignore[index]
          check("inv_variance", got[inv_var].ravel(), inv_ref, 1e-5, 1e-4)]  # type: ignore[index]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    raise SystemExit(main())
