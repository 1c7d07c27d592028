"""AMD provider row "Pointwise binary (standalone)": out = a - b with b broadcast per channel,
then the other four ops; FP32, ranks 3 (NCL) and 5 (NCDHW), packed channels-first.

    python examples/provider_binary.py

MIOpen: miopenOpTensor (SUB runs as ADD with b scaled by -1, as AMD's provider runs it).
Checked against numpy in float64.
"""

from __future__ import annotations

import numpy as np
from _check import check, report

import hipdnn

OPS = {"sub": np.subtract, "add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def main() -> int:
    rng = np.random.default_rng(7)
    ok = True
    for shape in ((2, 3, 9), (2, 3, 2, 3, 4)):
        a = rng.standard_normal(shape).astype(np.float32)
        b = rng.standard_normal((1, shape[1]) + (1,) * (len(shape) - 2)).astype(np.float32)
        for op, ref in OPS.items():
            g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT,
                             compute_data_type=hipdnn.DataType.FLOAT)
            at, bt = g.tensor_like(a, name="a"), g.tensor_like(b, name="b")
            ct = g.pointwise(hipdnn.PointwiseMode[op.upper()], at, bt, name=op)
            ct.set_output(True)
            g.build()
            if op == "sub":
                report(g)
            c = np.empty_like(a)
            g.execute({at: a, bt: b, ct: c})
            ok &= check(f"{op} {len(shape)}-d", c, ref(a.astype(np.float64), b), 1e-6, 1e-6)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
