"""AMD provider row "Batchnorm inference + activation" (fused), in both forms: from the inverse
variance (hipDNN's batchnorm_inference) and from the variance (batchnorm_inference_variance_ext),
each followed by a clipped ReLU; FP32 NCHW, the batchnorm's Y a virtual FP32 intermediate.

    python examples/provider_bn_inference_relu.py

MIOpen 3.5: miopenBatchNormForwardInferenceActivation (the inverse variance is first folded into
the scale on the device: miopenOpTensor, with a variance of ones from miopenSetTensor); 3.4: _V2
then miopenActivationForward. Checked against PyTorch (numpy without PyTorch).
"""

from __future__ import annotations

import numpy as np
from _check import bn_inference, check, report, workspace

import hipdnn


def main() -> int:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4, 6, 6), np.float32)
    mean, scale, bias = (rng.standard_normal((1, 4, 1, 1), np.float32) for _ in range(3))
    var = rng.uniform(0.5, 2.0, (1, 4, 1, 1)).astype(np.float32)
    eps = 1e-5
    inv = (1.0 / np.sqrt(var.astype(np.float64) + eps)).astype(np.float32)
    want = np.minimum(np.maximum(bn_inference(x, mean, var, scale, bias, eps), 0.0), 1.5)
    ok = True
    for form in ("inverse variance", "variance"):
        g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT,
                         intermediate_data_type=hipdnn.DataType.FLOAT,
                         compute_data_type=hipdnn.DataType.FLOAT)
        xt = g.tensor_like(x, name="x")
        mt, st, bt = (g.tensor_like(a, name=n) for a, n in ((mean, "mean"), (scale, "scale"),
                                                           (bias, "bias")))
        vt = g.tensor_like(inv if form == "inverse variance" else var, name="v")
        if form == "inverse variance":
            bn_y = g.batchnorm_inference(xt, mt, vt, st, bt, name="bn")
        else:
            bn_y = g.batchnorm_inference(xt, mt, scale=st, bias=bt, variance=vt, epsilon=eps,
                                         name="bn")
        yt = g.relu(bn_y, upper_clip=1.5, name="act")
        yt.set_output(True)
        g.build()
        report(g)
        y = np.empty(x.shape, np.float32)
        pack = {xt: x, mt: mean, vt: inv if form == "inverse variance" else var, st: scale,
                bt: bias, yt: y}
        g.execute(pack, workspace(g))
        ok &= check(f"y ({form})", y, want, 1e-4, 1e-4)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
