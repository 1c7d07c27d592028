"""Seed row "BN inference with variance": batchnorm with given mean and variance, FP32 NCHW.

    python examples/seed_bn_inference.py

MIOpen: miopenBatchNormalizationForwardInference_V2. Checked against PyTorch's
``batch_norm(training=False)`` (numpy without PyTorch).
"""

from __future__ import annotations

import numpy as np
from _check import bn_inference, check, report, workspace

import hipdnn


def main() -> int:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 6, 8, 8), np.float32)
    mean, scale, bias = (rng.standard_normal((1, 6, 1, 1), np.float32) for _ in range(3))
    var = rng.uniform(0.5, 2.0, (1, 6, 1, 1)).astype(np.float32)

    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT, compute_data_type=hipdnn.DataType.FLOAT)
    xt = g.tensor_like(x, name="x")
    mt, vt, st, bt = (g.tensor_like(a, name=n) for a, n in
                      ((mean, "mean"), (var, "var"), (scale, "scale"), (bias, "bias")))
    yt = g.batchnorm_inference(xt, mt, scale=st, bias=bt, variance=vt, epsilon=1e-5, name="bn")
    yt.set_output(True)
    g.build()
    report(g)
    y = np.empty(x.shape, np.float32)
    g.execute({xt: x, mt: mean, vt: var, st: scale, bt: bias, yt: y}, workspace(g))
    return 0 if check("y", y, bn_inference(x, mean, var, scale, bias, 1e-5), 1e-4, 1e-4) else 1


if __name__ == "__main__":
    raise SystemExit(main())
