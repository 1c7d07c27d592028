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


def test_refused_knobs_are_runtime_errors_as_in_cudnn_frontend() -> None:
    """cudnn-frontend's test_conv_relu_execution_plan_creation skips knob settings cuDNN refuses
    with ``except RuntimeError`` (its CUDNN_BACKEND_API_FAILED); here they are KnobErrors, also
    RuntimeErrors, so the same loop goes on to the default plan."""
    torch.manual_seed(0)
    X_gpu = torch.randn(2, 4, 6, 6).to(memory_format=torch.channels_last)
    W_gpu = torch.randn(3, 4, 3, 4).to(memory_format=torch.channels_last)
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT,
                          intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT)
    X, W = graph.tensor_like(X_gpu), graph.tensor_like(W_gpu)
    Y = graph.relu(input=graph.conv_fprop(image=X, weight=W, padding=[0, 1], stride=[2, 3],
                                          dilation=[1, 1]), lower_clip=0.5, upper_clip=0.55)
    Y.set_output(True)
    graph.validate()
    graph.build_operation_graph()
    refused = 0
    for engine in range(graph.get_engine_count()):
        for kernel_cfg in range(3):
            try:
                graph.create_execution_plan(engine, {cudnn.knob_type.KERNEL_CFG: kernel_cfg})
            except RuntimeError as exc:
                assert isinstance(exc, cudnn.KnobError) and "KERNEL_CFG" in str(exc)
                refused += 1
    assert refused == 3 * graph.get_engine_count()
    graph.check_support()
    graph.build_plans()
    Y_actual = torch.zeros(2, 3, 2, 2).to(memory_format=torch.channels_last)
    graph.execute({X: X_gpu, W: W_gpu, Y: Y_actual},
                  torch.empty(graph.get_workspace_size(), dtype=torch.uint8))
    expected = torch.clamp(torch.nn.functional.conv2d(X_gpu, W_gpu, padding=[0, 1],
                                                      stride=[2, 3]), 0.5, 0.55)
    torch.testing.assert_close(Y_actual, expected, atol=1e-5, rtol=1e-5)
