"""copy.copy / copy.deepcopy / pickle of graphs and handles: a graph copies its structure (never
its plans) and shares its handle; a Handle is an identity, never duplicated."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import hipdnn

F = hipdnn.DataType.FLOAT


def _relu_graph(handle: hipdnn.Handle | None = None) -> tuple[hipdnn.Graph, hipdnn.Tensor,
                                                                hipdnn.Tensor]:
    g = hipdnn.Graph(io_data_type=F, handle=handle)
    x = g.tensor(dim=[2, 3, 4, 4], name="x")
    y = g.relu(x).set_output(True)
    return g, x, y


def _runs(g: hipdnn.Graph, x: hipdnn.Tensor, y: hipdnn.Tensor) -> bool:
    xs = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float32)
    out = np.full_like(xs, np.nan)
    g.execute({x: xs, y: out})
    return bool(np.array_equal(out, np.maximum(xs, 0)))


@pytest.mark.parametrize("built", [False, True])
def test_deepcopy_is_an_independent_unbuilt_graph_on_the_same_handle(built: bool) -> None:
    with hipdnn.Handle() as handle:
        g, x, y = _relu_graph(handle)
        if built:
            g.build()  # its plans, handle states and locks used to make deepcopy fail
        g2, x2, y2 = copy.deepcopy((g, x, y))
        assert g2.handle is handle and x2 is not x and y2 is not y
        with pytest.raises(hipdnn.GraphStateError):
            g2.execute({x2: np.zeros((2, 3, 4, 4), np.float32),
                        y2: np.zeros((2, 3, 4, 4), np.float32)})
        g2.build()
        assert _runs(g2, x2, y2)
        g2.relu(y2).set_output(True)  # editing the copy leaves the original alone
        assert len(g.nodes) == 1 and len(g2.nodes) == 2
        with pytest.raises(hipdnn.ValidationError, match="belongs to another graph"):
            g2.relu(x)
        g.build()
        assert _runs(g, x, y)
        g.close()
        g2.close()


def test_shallow_copy_does_not_share_tensors_or_plans() -> None:
    g, x, y = _relu_graph()
    g.build()
    g2 = copy.copy(g)
    assert g2.nodes is not g.nodes and g2.nodes[0] is not g.nodes[0]
    assert g2._planner is not g._planner and not g2.plans
    g2.build()
    t = {tensor.name: tensor for tensor in g2.all_tensors}
    assert _runs(g2, t["x"], t[y.name])
    assert _runs(g, x, y)


def test_copy_of_a_closed_graph_can_be_built() -> None:
    g, x, y = _relu_graph()
    g.build()
    g.close()
    g2, x2, y2 = copy.deepcopy((g, x, y))
    assert not g2.closed
    g2.build()
    assert _runs(g2, x2, y2)


def test_pickle_keeps_the_structure_and_leaves_the_handle_out() -> None:
    with hipdnn.Handle() as handle:
        g, x, y = _relu_graph(handle)
        g.build()
        g2, x2, y2 = pickle.loads(pickle.dumps((g, x, y)))
        assert g2.handle is not handle and not g2.plans
        g2.build()
        assert _runs(g2, x2, y2)
        assert g2.to_json() == g.to_json()


def test_high_level_graph_copies_keep_their_recorded_inputs() -> None:
    xs = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 2, 2)
    with hipdnn.Graph(io_data_type=F) as hl:
        hl.relu(xs, name="r").set_output(True)
    hl.set_io_tuples([xs], ["r::OUT_0"])
    hl2, xs2 = copy.deepcopy((hl, xs))
    hl2.build()
    assert np.array_equal(hl2(xs2), np.maximum(xs, 0))  # the copied array is the recorded input
    hl3 = pickle.loads(pickle.dumps(hl))
    hl3.build()
    assert np.array_equal(hl3({})["r::OUT_0"], np.maximum(xs, 0))


def test_handle_is_never_duplicated() -> None:
    handle = hipdnn.Handle()
    # a copy used to share the engine states and the plan-cache serial: closing it closed the
    # original's MIOpen handle underneath it
    assert copy.copy(handle) is handle and copy.deepcopy(handle) is handle
    with pytest.raises(hipdnn.ArgumentError, match="cannot be pickled"):
        pickle.dumps(handle)
    assert not handle.closed
    handle.close()
