"""Engine/knob queries as cudnn-frontend scripts write them: small engine indices
(``for i in range(graph.get_engine_count())``) and the knob fields type/min_value/max_value/stride."""

from __future__ import annotations

import pytest

import hipdnn as cudnn
from hipdnn.engines import IntConstraint, Knob

torch = pytest.importorskip("torch")


def _graph() -> cudnn.Graph:
    g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    x = g.tensor_like(torch.randn(2, 3, 4, 4))
    g.relu(x).set_output(True)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    return g


def test_small_engine_indices_and_64_bit_ids_agree() -> None:
    g = _graph()
    ranked = g.get_ranked_engine_ids()
    assert g.get_engine_count() == len(ranked) >= 1
    for index in range(g.get_engine_count()):
        by_index = [k.id for k in g.get_knobs_for_engine(index)]
        assert by_index == [k.id for k in g.get_knobs_for_engine(ranked[index])]
    assert not 0 <= ranked[0] < 1 << 32  # ids (signed 64-bit hashes) are not indices
    with pytest.raises(cudnn.EngineError, match="unknown engine id"):
        g.get_knobs_for_engine(g.get_engine_count())


def test_knob_fields() -> None:
    k = Knob("split_k", cudnn.knob_value_type.INT64, 1, IntConstraint(1, 16, 3))
    assert (k.type, k.min_value, k.max_value, k.stride) == ("split_k", 1, 16, 3)
    free = Knob("name", cudnn.knob_value_type.STRING, "")
    assert (free.min_value, free.max_value, free.stride) == (None, None, None)
