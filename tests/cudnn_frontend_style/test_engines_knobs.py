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


def test_dgrad_output_given_only_dims_follows_dy_and_channels_last_buffers_still_work() -> None:
    """Unset DX strides follow DY (NCHW here; cudnn-frontend would infer NHWC, README), and a
    port that allocates DX channels-last, as cudnn-frontend's default asks, still gets the right
    gradient: the reference engine writes through the buffer's own strides."""
    torch.manual_seed(4)
    dy = torch.randn(2, 4, 4, 4)
    w = torch.randn(4, 3, 3, 3)
    g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    DY, W = g.tensor_like(dy), g.tensor_like(w)
    DX = g.conv_dgrad(loss=DY, filter=W, padding=[1, 1], stride=[2, 2])
    DX.set_dim([2, 3, 8, 8]).set_output(True)
    g.build()
    dx = torch.empty(2, 3, 8, 8).to(memory_format=torch.channels_last)  # what cudnn users pass
    assert DX.get_stride() == [192, 64, 8, 1]
    assert list(dx.stride()) == [192, 1, 24, 3]
    g.execute({DY: dy, W: w, DX: dx})
    expected = torch.nn.grad.conv2d_input((2, 3, 8, 8), w, dy, stride=2, padding=1)
    torch.testing.assert_close(dx, expected, atol=8.5e-6, rtol=8.5e-6)
