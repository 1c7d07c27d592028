"""Knob ``global.benchmarking`` of MIOPEN_ENGINE: 0 = MIOpen's heuristic solution (immediate
mode), 1 = Find 2.0 with tuning (results kept in MIOpen's user databases, so later runs reuse them).

    python examples/knob_benchmarking.py

Where MIOpen can run the graph, builds one plan per knob value and checks both results; elsewhere
it prints why MIOpen cannot run here (the knob is then not exercised) and checks the graph on the
engine that can. Checked against PyTorch (numpy without PyTorch).
"""

from __future__ import annotations

import numpy as np
from _check import check, conv_fprop, report, workspace

import hipdnn

MIOPEN = hipdnn.fnv1a_64("MIOPEN_ENGINE")


def main() -> int:
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 8, 12, 12), np.float32)
    w = rng.standard_normal((16, 8, 3, 3), np.float32)
    want = conv_fprop(x, w, 1)

    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT, compute_data_type=hipdnn.DataType.FLOAT)
    xt, wt = g.tensor_like(x, name="x"), g.tensor_like(w, name="w")
    yt = g.conv_fprop(xt, wt, padding=[1, 1], name="conv").set_output(True)
    g.validate()
    g.build_operation_graph()
    why_not = g.engine_reasons()["MIOPEN_ENGINE"]
    ok = []
    if why_not is None:
        for knob in g.get_knobs_for_engine(MIOPEN):
            print(f"knob {knob.id}: default {knob.default}, {knob.constraint.describe()}")
        for value in (0, 1):
            g.create_execution_plan_ext(MIOPEN, {"global.benchmarking": value})
            g.build_plans()
            report(g)
            y = np.empty(yt.get_dim(), np.float32)
            g.execute({xt: x, wt: w, yt: y}, workspace(g))
            ok.append(check(f"y (global.benchmarking={value})", y, want, 1e-4, 1e-4))
            g.close()
            g = None  # a fresh graph for the next value
            g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT,
                             compute_data_type=hipdnn.DataType.FLOAT)
            xt, wt = g.tensor_like(x, name="x"), g.tensor_like(w, name="w")
            yt = g.conv_fprop(xt, wt, padding=[1, 1], name="conv").set_output(True)
            g.validate()
            g.build_operation_graph()
    else:
        print(f"global.benchmarking not exercised: MIOPEN_ENGINE cannot run here: {why_not}")
        g.create_execution_plans()
        g.check_support()
        g.build_plans()
        report(g)
        y = np.empty(yt.get_dim(), np.float32)
        g.execute({xt: x, wt: w, yt: y}, workspace(g))
        ok.append(check("y", y, want, 1e-4, 1e-4))
    return 0 if all(ok) else 1


if __name__ == "__main__":
    raise SystemExit(main())
