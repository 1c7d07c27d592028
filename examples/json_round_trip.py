"""Serialize a graph to JSON, rebuild it, and run both: same structure key, same results.

    python examples/json_round_trip.py

Tensors are addressed by uid in the variant pack, so the rebuilt graph is fed the same way.
"""

from __future__ import annotations

import json

import numpy as np
from _check import report, workspace

import hipdnn


def build() -> hipdnn.Graph:
    graph = hipdnn.Graph(name="bn_inference_relu", io_data_type=hipdnn.DataType.FLOAT,
                         intermediate_data_type=hipdnn.DataType.FLOAT,
                         compute_data_type=hipdnn.DataType.FLOAT)
    x = graph.tensor(dim=[2, 3, 4, 4], name="x", uid=1)
    mean, var, scale, bias = (graph.tensor(dim=[1, 3, 1, 1], name=n, uid=u)
                              for u, n in enumerate(("mean", "var", "scale", "bias"), start=2))
    y = graph.batchnorm_inference(x, mean, scale=scale, bias=bias, variance=var, epsilon=1e-3)
    graph.relu(y).set_output(True).set_uid(10)
    return graph


def main() -> int:
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 3, 4, 4)).astype(np.float32)
    mean, scale, bias = (rng.normal(size=3).astype(np.float32) for _ in range(3))
    var = rng.uniform(0.5, 2.0, 3).astype(np.float32)

    original = build()
    original.validate()
    text = original.to_json()
    print(f"JSON: {len(text)} characters, {len(json.loads(text)['nodes'])} nodes")
    copy = hipdnn.Graph.from_json(text)
    same_json = copy.to_json() == text
    same_key = copy.key() == original.key()
    print("round trip reproduces the JSON:", same_json, "| same structural key:", same_key)

    outs = []
    for graph in (original, copy):
        graph.build()
        report(graph)
        out = np.zeros((2, 3, 4, 4), np.float32)
        graph.execute({1: x, 2: mean, 3: var, 4: scale, 5: bias, 10: out}, workspace(graph))
        outs.append(out)
    c = (1, 3, 1, 1)
    want = np.maximum((x - mean.reshape(c)) / np.sqrt(var.reshape(c) + 1e-3) * scale.reshape(c)
                      + bias.reshape(c), 0.0)
    err = float(np.abs(outs[0] - want).max())
    ok = same_json and same_key and np.array_equal(outs[0], outs[1]) and err < 1e-5
    print(f"max abs error vs numpy: {err:.2e}; results identical: "
          f"{np.array_equal(outs[0], outs[1])} -> {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
