"""``graph.autotune()``: time every candidate plan (each engine that can run the graph, and with
MIOpen each knob setting asked for) and select the fastest.

    python examples/autotune.py

Prints each plan's time per run (``hipdnn.PlanTiming``: name, seconds) and which plan was
selected, then checks the selected plan's result against PyTorch (numpy without PyTorch).
"""

from __future__ import annotations

import numpy as np
from _check import check, conv_fprop, report, workspace

import hipdnn


def main() -> int:
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 8, 12, 12), np.float32)
    w = rng.standard_normal((16, 8, 3, 3), np.float32)
    b = rng.standard_normal((1, 16, 1, 1), np.float32)

    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT, compute_data_type=hipdnn.DataType.FLOAT)
    xt, wt, bt = g.tensor_like(x, name="x"), g.tensor_like(w, name="w"), g.tensor_like(b, name="b")
    yt = g.relu(g.bias(g.conv_fprop(xt, wt, padding=[1, 1], name="conv"), bt, name="bias"),
                name="relu").set_output(True)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([hipdnn.HeurMode.A, hipdnn.HeurMode.FALLBACK])
    g.check_support()
    g.build_plans(hipdnn.BuildPlanPolicy.ALL)
    y = np.empty(yt.get_dim(), np.float32)
    timings = g.autotune({xt: x, wt: w, bt: b, yt: y}, workspace(g), iterations=5, warmup=1, progress=False)
    for t in timings:
        print(f"  {t.plan_name}: {t.milliseconds:.3f} ms per run")
    print("selected:", g.get_plan_name())
    report(g)
    y[...] = np.nan
    g.execute({xt: x, wt: w, bt: b, yt: y}, workspace(g))
    ok = timings[0].plan_name == g.get_plan_name() and all(t.seconds > 0 for t in timings)
    print(f"fastest plan selected, times positive -> {'PASS' if ok else 'FAIL'}")
    want = np.maximum(conv_fprop(x, w, 1) + b, 0)
    return 0 if check("y", y, want, 1e-4, 1e-4) and ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
