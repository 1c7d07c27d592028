"""Seed row "conv + bias + activation": one graph, FP32 NCHW.

    python examples/seed_conv_bias_relu.py

MIOpen runs it as a fusion plan when the plan compiles (else conv, bias and activation as separate
calls); the CPU reference engine node by node. Checked against PyTorch (numpy without PyTorch).
"""

from __future__ import annotations

import numpy as np
from _check import check, conv_fprop, report, workspace

import hipdnn


def main() -> int:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 8, 10, 10), np.float32)
    w = rng.standard_normal((16, 8, 3, 3), np.float32)
    b = rng.standard_normal((1, 16, 1, 1), np.float32)

    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT, compute_data_type=hipdnn.DataType.FLOAT)
    xt, wt, bt = g.tensor_like(x, name="x"), g.tensor_like(w, name="w"), g.tensor_like(b, name="b")
    conv = g.conv_fprop(xt, wt, padding=[1, 1], stride=[1, 1], dilation=[1, 1], name="conv")
    yt = g.relu(g.bias(conv, bt, name="bias"), name="relu")
    yt.set_output(True)
    g.build()
    report(g)
    y = np.empty(yt.get_dim(), np.float32)
    g.execute({xt: x, wt: w, bt: b, yt: y}, workspace(g))
    want = np.maximum(conv_fprop(x, w, 1) + b, 0.0)
    return 0 if check("y", y, want, 1e-4, 1e-4) else 1


if __name__ == "__main__":
    raise SystemExit(main())
