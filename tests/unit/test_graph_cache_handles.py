"""``graph_cache`` never serves a graph that can no longer run: an entry whose graph or whose
graph's Handle was closed is built again (issue 9, defect 5: entries tied to a Handle go with it)."""

from __future__ import annotations

import numpy as np

import hipdnn as cudnn

calls: list[int] = []


@cudnn.jit(heur_modes=[cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
@cudnn.graph_cache(key_fn=lambda handle, x: (x.shape, x.dtype.str))  # the handle is not in the key
def relu_graph(handle: cudnn.Handle, x: np.ndarray) -> tuple[cudnn.Graph, list[cudnn.Tensor]]:
    calls.append(1)
    with cudnn.graph(handle, io_data_type=cudnn.data_type.FLOAT) as (g, _):
        xt = g.tensor_like(x)
        yt = g.relu(xt).set_output(True)
    return g, [xt, yt]


def _run(handle: cudnn.Handle, x: np.ndarray) -> np.ndarray:
    g, (xu, yu) = relu_graph(handle, x)
    y = np.empty_like(x)
    g.execute({xu: x, yu: y}, None, handle)
    return y


def test_a_closed_handles_graph_is_rebuilt_on_the_next_handle() -> None:
    x = np.array([[-1.0, 2.0, -3.0]], np.float32)
    relu_graph.cache_clear()  # type: ignore[attr-defined]
    calls.clear()
    with cudnn.Handle() as h1:
        np.testing.assert_array_equal(_run(h1, x), np.maximum(x, 0))
        np.testing.assert_array_equal(_run(h1, x), np.maximum(x, 0))
        assert len(calls) == 1  # served from the cache
    with cudnn.Handle() as h2:  # h1 is closed: its graph would raise PlanClosedError
        np.testing.assert_array_equal(_run(h2, x), np.maximum(x, 0))
        assert len(calls) == 2
        g, _ = relu_graph(h2, x)
        g.close()  # a closed graph is not served either
        np.testing.assert_array_equal(_run(h2, x), np.maximum(x, 0))
        assert len(calls) == 3
