"""1-D layouts (AMD provider's NCL and NLC): a 1-D convolution, then batchnorm training with a
ReLU, on rank-3 tensors in both memory orders; FP32.

    python examples/provider_conv1d_bn.py

Dims are logical (N, C, L); the layout lives in the strides: NCL is packed (C*L, L, 1), NLC is
an (N, L, C) array seen through ``transpose(0, 2, 1)`` (strides L*C, 1, C). Padding, stride and
dilation are one-element lists, as cudnn-frontend takes them for a 1-D convolution. On
MIOPEN_ENGINE the graphs run padded to 4-D N,C,L,1 as AMD's provider does (NCL as NCHW, NLC as
NHWC); without MIOpen the CPU engine runs them. Checked against PyTorch's conv1d and batch_norm
(float64 numpy without PyTorch).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _check import check, report, workspace

import hipdnn

try:
    import torch
except ImportError:  # numpy only
    torch = None


def conv1d_ref(x: np.ndarray, w: np.ndarray, pad: int, stride: int) -> np.ndarray:
    if torch is not None:
        return torch.nn.functional.conv1d(torch.from_numpy(x.astype(np.float64)),
                                          torch.from_numpy(w.astype(np.float64)),
                                          padding=pad, stride=stride).numpy()
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad)))
    k = w.shape[2]
    lo = (xp.shape[2] - k) // stride + 1
    y = np.zeros((x.shape[0], w.shape[0], lo))
    for i in range(k):
        y += np.einsum("ncl,kc->nkl", xp[:, :, i:i + stride * (lo - 1) + 1:stride], w[:, :, i])
    return y


def bn_relu_ref(x: np.ndarray, scale: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    x = x.astype(np.float64)
    if torch is not None:
        y = torch.nn.functional.batch_norm(torch.from_numpy(x), None, None,
                                           torch.from_numpy(scale.astype(np.float64).ravel()),
                                           torch.from_numpy(bias.astype(np.float64).ravel()),
                                           training=True, eps=eps).numpy()
    else:
        mean, var = x.mean(axis=(0, 2), keepdims=True), x.var(axis=(0, 2), keepdims=True)
        y = (x - mean) / np.sqrt(var + eps) * scale + bias
    return np.maximum(y, 0.0)


def in_layout(a: np.ndarray, layout: str) -> np.ndarray:
    """A logical (N, C, L) view of ``a`` stored in ``layout`` order."""
    return a.copy() if layout == "NCL" else np.ascontiguousarray(a.transpose(0, 2, 1)).transpose(0, 2, 1)


def empty(shape: tuple[int, ...], layout: str) -> np.ndarray:
    n, c, length = shape
    return np.empty(shape, np.float32) if layout == "NCL" else \
        np.empty((n, length, c), np.float32).transpose(0, 2, 1)


def graph() -> hipdnn.Graph:
    return hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT,
                        intermediate_data_type=hipdnn.DataType.FLOAT,
                        compute_data_type=hipdnn.DataType.FLOAT)


def run(layout: str, x: np.ndarray, w: np.ndarray, scale: np.ndarray, bias: np.ndarray,
        eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Conv1d (padding 1, stride 2), then batchnorm training + ReLU on its output."""
    xs, ws = in_layout(x, layout), in_layout(w, layout)
    g = graph()
    xt, wt = g.tensor_like(xs, name="x"), g.tensor_like(ws, name="w")
    yt = g.conv_fprop(xt, wt, padding=[1], stride=[2], dilation=[1], name="conv1d")
    yt.set_output(True)
    g.build()
    report(g)
    y = empty(tuple(yt.get_dim()), layout)  # Y follows X's layout
    pack: dict[Any, Any] = {xt: xs, wt: ws, yt: y}
    g.execute(pack, workspace(g))

    b = graph()
    bx = b.tensor_like(y, name="y")
    st, bt = b.tensor_like(scale, name="scale"), b.tensor_like(bias, name="bias")
    out, _, _, _, _ = b.batchnorm(bx, st, bt, eps, name="bn")
    assert out is not None
    zt = b.relu(out, name="relu")
    zt.set_output(True)
    b.build()
    report(b)
    z = empty(tuple(zt.get_dim()), layout)
    b.execute({bx: y, st: scale, bt: bias, zt: z}, workspace(b))
    return np.array(y), np.array(z)


def main() -> int:
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 4, 17), np.float32)
    w = (rng.standard_normal((6, 4, 3), np.float32) * 0.5).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, (1, 6, 1)).astype(np.float32)
    bias = rng.standard_normal((1, 6, 1), np.float32)
    eps = 1e-5
    want_y = conv1d_ref(x, w, pad=1, stride=2)
    want_z = bn_relu_ref(want_y, scale, bias, eps)
    ok = True
    for layout in ("NCL", "NLC"):
        y, z = run(layout, x, w, scale, bias, eps)
        ok &= check(f"conv1d y ({layout})", y, want_y, 1e-5, 1e-5)
        ok &= check(f"batchnorm + relu ({layout})", z, want_z, 4e-3, 4e-3)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
