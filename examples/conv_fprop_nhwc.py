"""Forward convolution on NHWC (channels-last) tensors, checked against a direct numpy loop.

    python examples/conv_fprop_nhwc.py

Dims are always logical N, C, H, W; the NHWC layout is expressed by the strides only.
"""

from __future__ import annotations

import numpy as np
from _check import report

import hipdnn
from hipdnn.core.shapes import packed_strides


def nhwc(a: np.ndarray) -> np.ndarray:
    """The same logical array stored channels-last (a strided numpy view)."""
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)


def reference(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """Cross-correlation by the definition, one output pixel at a time (tiny sizes only)."""
    n, _, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho, wo = (h + 2 * pad - r) // stride + 1, (wd + 2 * pad - s) // stride + 1
    y = np.zeros((n, k, ho, wo))
    for i in range(ho):
        for j in range(wo):
            patch = xp[:, :, i * stride:i * stride + r, j * stride:j * stride + s]
            y[:, :, i, j] = np.einsum("ncrs,kcrs->nk", patch, w)
    return y


def main() -> int:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 8, 10, 10)).astype(np.float32)
    w = rng.standard_normal((16, 8, 3, 3)).astype(np.float32)

    graph = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT,
                         compute_data_type=hipdnn.DataType.FLOAT)
    xt = graph.tensor(dim=x.shape, stride=packed_strides(x.shape, "NHWC"), name="x")
    wt = graph.tensor(dim=w.shape, stride=packed_strides(w.shape, "NHWC"), name="w")
    yt = graph.conv_fprop(xt, wt, padding=1, stride=2, name="conv").set_output(True)
    graph.build()
    report(graph)
    print("output dims", yt.get_dim(), "strides", yt.get_stride(), "engine", graph.get_plan_name())

    y = nhwc(np.zeros(yt.get_dim(), np.float32))  # output in NHWC too, as its strides say
    size = graph.get_workspace_size()  # MIOpen's solution may need one; host memory is fine
    graph.execute({xt: nhwc(x), wt: nhwc(w), yt: y}, np.empty(size, np.uint8) if size else None)

    err = float(np.abs(y - reference(x, w, stride=2, pad=1)).max())
    ok = err < 1e-4
    print(f"max abs error vs numpy: {err:.2e} -> {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
