"""AMD provider engine "MIOPEN_ENGINE_DETERMINISTIC": a convolution forward on the engine whose
convolution descriptor carries MIOpen's deterministic attribute; two executes give the same bits.

    python examples/provider_deterministic_conv.py

The engine is chosen by name (its id is FNV-1a 64 of the name). Without MIOpen or a GPU it
cannot run: the example says why and runs the graph on the engine the graph picks instead.
Checked against PyTorch (numpy without PyTorch).
"""

from __future__ import annotations

import numpy as np
from _check import check, conv_fprop, report

import hipdnn
from hipdnn.core.errors import HipdnnError

NAME = "MIOPEN_ENGINE_DETERMINISTIC"


def main() -> int:
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 3, 8, 8), np.float32)
    w = rng.standard_normal((4, 3, 3, 3), np.float32) * 0.3
    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT, compute_data_type=hipdnn.DataType.FLOAT)
    xt, wt = g.tensor_like(x, name="x"), g.tensor_like(w, name="w")
    yt = g.conv_fprop(xt, wt, padding=[1, 1], name="conv")
    yt.set_output(True)
    g.build_operation_graph()
    try:
        g.create_execution_plan_ext(NAME, {})
        g.build_plans()
    except HipdnnError as exc:
        print(f"{NAME} cannot run here: {exc}")
        g.build()
    report(g)
    ws = g.get_workspace_size()
    runs = []
    for _ in range(2):
        y = np.empty((2, 4, 8, 8), np.float32)
        g.execute({xt: x, wt: w, yt: y}, np.empty(ws, np.uint8) if ws else None)
        runs.append(y)
    same = bool(np.array_equal(runs[0], runs[1]))
    print(f"{'PASS' if same else 'FAIL'} two executes give the same bits")
    return 0 if check("y", runs[0], conv_fprop(x, w, 1), 1e-4, 1e-4) and same else 1


if __name__ == "__main__":
    raise SystemExit(main())
