"""Seed row "conv wgrad": the weight gradient of a 3x3 convolution, FP32 NCHW.

    python examples/seed_conv_wgrad.py

The output's dims are the filter's (set with set_dim). Checked against PyTorch's
``torch.nn.grad.conv2d_weight`` (numpy without PyTorch).
"""

from __future__ import annotations

import numpy as np
from _check import check, conv_wgrad, report, workspace

import hipdnn
from hipdnn.core.shapes import packed_strides


def main() -> int:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 8, 10, 10), np.float32)
    dy = rng.standard_normal((2, 16, 10, 10), np.float32)
    w_shape = (16, 8, 3, 3)

    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT, compute_data_type=hipdnn.DataType.FLOAT)
    xt, dyt = g.tensor_like(x, name="x"), g.tensor_like(dy, name="dy")
    dwt = g.conv_wgrad(xt, dyt, padding=[1, 1], stride=[1, 1], dilation=[1, 1], name="wgrad")
    # cudnn-frontend's rule gives an unset DW stride channels-last (NHWC); MIOpen wants
    # one layout for all data tensors, so say NCHW (packed channel-first) here
    dwt.set_dim(list(w_shape)).set_stride(list(packed_strides(w_shape))).set_output(True)
    g.build()
    report(g)
    dw = np.empty(w_shape, np.float32)
    g.execute({xt: x, dyt: dy, dwt: dw}, workspace(g))
    return 0 if check("dw", dw, conv_wgrad(x, dy, w_shape, 1), 1e-3, 1e-4) else 1


if __name__ == "__main__":
    raise SystemExit(main())
