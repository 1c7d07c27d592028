"""Seed row "conv dgrad": the data gradient of a 3x3 convolution, FP32 NCHW.

    python examples/seed_conv_dgrad.py

The output's dims are those of the forward input (set with set_dim). Checked against PyTorch's
``torch.nn.grad.conv2d_input`` (numpy without PyTorch).
"""

from __future__ import annotations

import numpy as np
from _check import check, conv_dgrad, report, workspace

import hipdnn
from hipdnn.core.shapes import packed_strides


def main() -> int:
    rng = np.random.default_rng(1)
    dy = rng.standard_normal((2, 16, 10, 10), np.float32)
    w = rng.standard_normal((16, 8, 3, 3), np.float32)
    x_shape = (2, 8, 10, 10)

    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT, compute_data_type=hipdnn.DataType.FLOAT)
    dyt, wt = g.tensor_like(dy, name="dy"), g.tensor_like(w, name="w")
    dxt = g.conv_dgrad(dyt, wt, padding=[1, 1], stride=[1, 1], dilation=[1, 1], name="dgrad")
    # cudnn-frontend's rule gives an unset DX stride channels-last (NHWC); MIOpen wants
    # one layout for all data tensors, so say NCHW (packed channel-first) here
    dxt.set_dim(list(x_shape)).set_stride(list(packed_strides(x_shape))).set_output(True)
    g.build()
    report(g)
    dx = np.empty(x_shape, np.float32)
    g.execute({dyt: dy, wt: w, dxt: dx}, workspace(g))
    return 0 if check("dx", dx, conv_dgrad(dy, w, x_shape, 1), 1e-4, 1e-4) else 1


if __name__ == "__main__":
    raise SystemExit(main())
