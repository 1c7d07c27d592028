"""Knob ``global.workspace_size_limit`` of MIOPEN_ENGINE (convolutions only): its valid range is
from the smallest workspace of MIOpen's applicable solutions to 2**63 - 1, the default, meaning
no limit; a value below the minimum is a ``KnobError`` naming that range.

    python examples/knob_workspace_size_limit.py

Where MIOpen can run the graph, prints the range, builds a plan limited to the minimum, shows the
error for a value below it, and checks the result; elsewhere it prints why MIOpen cannot run here
(the knob is then not exercised) and checks the graph on the engine that can. Checked against
PyTorch (numpy without PyTorch).
"""

from __future__ import annotations

import numpy as np
from _check import check, conv_fprop, report, workspace

import hipdnn

MIOPEN = hipdnn.fnv1a_64("MIOPEN_ENGINE")


def main() -> int:
    rng = np.random.default_rng(10)
    x = rng.standard_normal((2, 8, 12, 12), np.float32)
    w = rng.standard_normal((16, 8, 3, 3), np.float32)

    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT, compute_data_type=hipdnn.DataType.FLOAT)
    xt, wt = g.tensor_like(x, name="x"), g.tensor_like(w, name="w")
    yt = g.conv_fprop(xt, wt, padding=[1, 1], name="conv").set_output(True)
    g.validate()
    g.build_operation_graph()
    why_not = g.engine_reasons()["MIOPEN_ENGINE"]
    if why_not is None:
        knob = next(k for k in g.get_knobs_for_engine(MIOPEN)
                    if k.id == "global.workspace_size_limit")
        lo, hi = knob.constraint.min, knob.constraint.max
        print(f"global.workspace_size_limit: default {knob.default}, valid {lo}..{hi} bytes")
        if lo > 0:
            try:
                g.create_execution_plan_ext(MIOPEN, {"global.workspace_size_limit": lo - 1})
                print("a value below the minimum was accepted -> FAIL")
                return 1
            except hipdnn.KnobError as exc:
                print(f"below the minimum: KnobError: {exc}")
        g.create_execution_plan_ext(MIOPEN, {"global.workspace_size_limit": lo})
        g.build_plans()
        print("workspace bytes:", g.get_workspace_size())
    else:
        print(f"global.workspace_size_limit not exercised: MIOPEN_ENGINE cannot run here: {why_not}")
        g.create_execution_plans()
        g.check_support()
        g.build_plans()
    report(g)
    y = np.empty(yt.get_dim(), np.float32)
    g.execute({xt: x, wt: w, yt: y}, workspace(g))
    return 0 if check("y", y, conv_fprop(x, w, 1), 1e-4, 1e-4) else 1


if __name__ == "__main__":
    raise SystemExit(main())
