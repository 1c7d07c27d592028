"""AMD provider row "Pointwise activation (standalone)": one activation node per graph (leaky
ReLU, clipped ReLU, sigmoid, tanh), FP16 NHWC.

    python examples/provider_activation.py

MIOpen: miopenActivationForward (LEAKYRELU, CLIPPEDRELU, LOGISTIC, TANH). Checked against
PyTorch (numpy without PyTorch) within FP16's tolerance.
"""

from __future__ import annotations

import numpy as np
from _check import check, report

import hipdnn

REFS = {
    "leaky_relu": lambda x: np.where(x > 0, x, 0.1 * x),
    "clipped_relu": lambda x: np.minimum(np.maximum(x, 0.0), 0.7),
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "tanh": np.tanh,
}


def main() -> int:
    rng = np.random.default_rng(6)
    logical = rng.standard_normal((2, 3, 5, 4)).astype(np.float16)
    x = np.ascontiguousarray(logical.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)  # NHWC memory
    ok = True
    for act, ref in REFS.items():
        g = hipdnn.Graph(io_data_type=hipdnn.DataType.HALF, compute_data_type=hipdnn.DataType.FLOAT)
        xt = g.tensor_like(x, name="x")
        if act == "leaky_relu":
            yt = g.leaky_relu(xt, 0.1, name=act)
        elif act == "clipped_relu":
            yt = g.relu(xt, upper_clip=0.7, name=act)
        elif act == "sigmoid":
            yt = g.sigmoid(xt, name=act)
        else:
            yt = g.tanh(xt, name=act)
        yt.set_output(True)
        yt.set_stride(list(xt.stride))  # the output in the input's layout (NHWC)
        g.build()
        report(g)
        y = np.empty_like(x)
        g.execute({xt: x, yt: y})
        ok &= check(act, y, ref(logical.astype(np.float64)), 1e-3, 1e-3)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
