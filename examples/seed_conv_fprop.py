"""Seed row "conv fprop": a 3x3 convolution, FP32, channels-last (NHWC) data.

    python examples/seed_conv_fprop.py

MIOpen runs it in immediate mode (or Find 2.0 with global.benchmarking=1); the CPU reference
engine runs it with BLAS. Checked against PyTorch (numpy without PyTorch).
"""

from __future__ import annotations

import numpy as np
from _check import check, conv_fprop, report, workspace

import hipdnn


def main() -> int:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 8, 10, 10), np.float32)
    w = rng.standard_normal((16, 8, 3, 3), np.float32)
    # the same logical NCHW arrays stored channels-last (NHWC); MIOpen wants all data tensors,
    # the filter included, in one layout
    x_nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    w_nhwc = np.ascontiguousarray(w.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)

    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT, compute_data_type=hipdnn.DataType.FLOAT)
    xt, wt = g.tensor_like(x_nhwc, name="x"), g.tensor_like(w_nhwc, name="w")
    yt = g.conv_fprop(xt, wt, padding=[1, 1], stride=[1, 1], dilation=[1, 1], name="conv")
    yt.set_output(True)
    g.build()
    report(g)
    y = np.empty((2, 10, 10, 16), np.float32).transpose(0, 3, 1, 2)  # y is NHWC too
    g.execute({xt: x_nhwc, wt: w_nhwc, yt: y}, workspace(g))
    return 0 if check("y", y, conv_fprop(x, w, 1), 1e-4, 1e-4) else 1


if __name__ == "__main__":
    raise SystemExit(main())
