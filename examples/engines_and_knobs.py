"""Engines and knobs: which engines exist, which apply to a graph (and why not), their knobs,
and running a graph on an engine chosen by id.

    python examples/engines_and_knobs.py
"""

from __future__ import annotations

import numpy as np

import hipdnn
from hipdnn.engines import get_engine, registry


def main() -> int:
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (2, 4, 6, 6)).astype(np.float32)
    w = rng.uniform(-1, 1, (8, 4, 3, 3)).astype(np.float32)

    graph = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT,
                         compute_data_type=hipdnn.DataType.FLOAT)
    xt, wt = graph.tensor_like(x, "x"), graph.tensor_like(w, "w")
    y = graph.relu(graph.conv_fprop(xt, wt, padding=1), upper_clip=0.5).set_output(True)
    graph.validate()
    graph.build_operation_graph()

    print("registered engines (preferred first):")
    for engine_id, engine in registry().items():
        reason = engine.check_support(graph, graph.handle)
        print(f"  {engine.name:<22} id={engine_id:<21} rank={engine.rank:<5} "
              f"{'applies' if reason is None else 'does not apply: ' + reason}")

    ranked = graph.get_ranked_engine_ids()
    print("applicable, in heuristic order:", [get_engine(i).name for i in ranked])
    for engine_id in ranked:
        knobs = graph.get_knobs_for_engine(engine_id)
        print(f"  knobs of {get_engine(engine_id).name}:",
              [f"{k.id} (default {k.default})" for k in knobs] or "none")

    # run on the last applicable engine (the CPU reference when nothing else applies)
    chosen = ranked[-1]
    graph.create_execution_plan_ext(chosen, {})
    graph.build_plans()
    out = np.zeros(y.get_dim(), np.float32)
    graph.execute({xt: x, wt: w, y: out})
    print("ran on:", graph.get_plan_name(), "workspace bytes:", graph.get_workspace_size())

    # clipped ReLU of a 3x3 'same' convolution, computed directly
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = sum(np.einsum("nchw,kc->nkhw", xp[:, :, i:i + 6, j:j + 6], w[:, :, i, j])
               for i in range(3) for j in range(3))
    want = np.clip(want, 0.0, 0.5)
    err = float(np.abs(out - want).max())
    ok = err < 1e-4
    print(f"max abs error vs numpy: {err:.2e} -> {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
