"""Conv + bias + ReLU as one graph (the seed table's fused pattern), FP16 data, FP32 compute
(intermediates and compute FP32, as cudnn-frontend's samples write it).

    python examples/conv_bias_relu_fusion.py

MIOpen runs it as a fusion plan when it can (else conv, bias add and activation as separate calls,
with the bias in FP16 like the data); the CPU reference engine runs it node by node,
keeping the conv output and the biased value as FP32 intermediates and rounding the result to FP16.
"""

from __future__ import annotations

import numpy as np
from _check import report, workspace

import hipdnn


def reference(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """1x1 convolution is a matrix product over channels; then bias and ReLU."""
    y = np.einsum("nchw,kc->nkhw", x.astype(np.float64), w[:, :, 0, 0].astype(np.float64))
    return np.maximum(y + b.reshape(1, -1, 1, 1), 0.0)


def main() -> int:
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (4, 16, 7, 7)).astype(np.float16)
    w = rng.uniform(-1, 1, (32, 16, 1, 1)).astype(np.float16)
    b = rng.uniform(-1, 1, (1, 32, 1, 1)).astype(np.float16)

    graph = hipdnn.Graph(io_data_type=hipdnn.DataType.HALF,
                         intermediate_data_type=hipdnn.DataType.FLOAT,
                         compute_data_type=hipdnn.DataType.FLOAT)
    xt, wt, bt = graph.tensor_like(x, "x"), graph.tensor_like(w, "w"), graph.tensor_like(b, "b")
    conv = graph.conv_fprop(xt, wt, name="conv")
    biased = graph.bias(conv, bt, name="bias")
    out = graph.relu(biased, name="relu").set_output(True)
    graph.build()
    report(graph)

    y = np.empty(out.get_dim(), np.float16)
    graph.execute({xt: x, wt: w, bt: b, out: y}, workspace(graph))

    want = reference(x, w, b)
    err = float(np.abs(y.astype(np.float64) - want).max())
    ok = bool(np.all(np.abs(y - want) <= 1e-2 + 1e-2 * np.abs(want)))  # FP16 output rounding
    print(f"max abs error vs numpy: {err:.2e} -> {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
