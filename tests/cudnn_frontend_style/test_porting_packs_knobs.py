"""Variant packs and knob queries as cudnn-frontend scripts write them: output buffers larger
than the tensor or shaped differently (cuDNN takes any buffer by pointer; here a tensor that
states another shape is refused unless wrapped in ``by_pointer``), torch tensors in
another memory format than the graph tensor, and the ``knob_type`` sweep of
``test_conv_relu_execution_plan_creation``; against PyTorch on the CPU.
"""

from __future__ import annotations

import pytest

import hipdnn as cudnn

torch = pytest.importorskip("torch")


def _conv_graph(x: torch.Tensor, w: torch.Tensor) -> tuple[cudnn.Graph, ...]:
    g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT,
                      intermediate_data_type=cudnn.data_type.FLOAT,
                      compute_data_type=cudnn.data_type.FLOAT)
    X, W = g.tensor_like(x), g.tensor_like(w)
    Y = g.conv_fprop(image=X, weight=W, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
    Y.set_output(True)
    g.build([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    return g, X, W, Y


def test_output_buffer_larger_than_the_tensor_is_written_by_pointer() -> None:
    torch.manual_seed(0)
    x = torch.randn(2, 8, 6, 6).to(memory_format=torch.channels_last)
    w = torch.randn(4, 8, 3, 3).to(memory_format=torch.channels_last)
    g, X, W, Y = _conv_graph(x, w)
    expected = torch.nn.functional.conv2d(x, w, padding=1)
    big = torch.full((2, 8, 6, 6), float("nan")).to(memory_format=torch.channels_last)
    with pytest.raises(cudnn.VariantPackError, match=r"'.*Y'.*shape mismatch.*by_pointer"):
        g.execute({X: x, W: w, Y: big})  # it states another shape: another tensor
    g.execute({X: x, W: w, Y: cudnn.by_pointer(big)})  # cuDNN's reading, asked for
    got = torch.as_strided(big, Y.get_dim(), Y.get_stride())  # Y's layout from the pointer
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)
    tail = big.permute(0, 2, 3, 1).reshape(-1)[expected.numel():]
    assert bool(tail.isnan().all())  # nothing past the tensor is touched
    flat = torch.empty(expected.numel())  # a flat buffer of exactly the right size
    g.execute({X: x, W: w, Y: flat})
    torch.testing.assert_close(torch.as_strided(flat, Y.get_dim(), Y.get_stride()), expected,
                               atol=1e-5, rtol=1e-5)


def test_too_small_or_gappy_buffers_say_how_many_bytes_are_needed() -> None:
    x, w = torch.randn(2, 8, 6, 6), torch.randn(4, 8, 3, 3)
    g, X, W, Y = _conv_graph(x, w)
    need = 2 * 4 * 6 * 6 * 4
    with pytest.raises(cudnn.VariantPackError, match=rf"shape mismatch.*at least {need} bytes"):
        g.execute({X: x, W: w, Y: torch.empty(2, 4, 6, 5)})
    gappy = torch.empty(4, 8, 6, 6)[:, ::2]  # more elements than needed, but with gaps
    with pytest.raises(cudnn.VariantPackError, match=rf"gap-free block of at least {need} bytes"):
        g.execute({X: x, W: w, Y: cudnn.by_pointer(gappy)})
    strided = torch.full((2, 8, 6, 6), float("nan"))[:, ::2]  # Y's shape, every other channel
    g.execute({X: x, W: w, Y: strided})  # the same shape: written through its own strides
    torch.testing.assert_close(strided, torch.nn.functional.conv2d(x, w, padding=1),
                               atol=1e-5, rtol=1e-5)
    with pytest.raises(cudnn.VariantPackError, match="data type mismatch"):
        g.execute({X: x, W: w, Y: torch.empty(2, 8, 6, 6, dtype=torch.float16)})


def test_tensors_in_another_memory_format_are_read_and_written_logically() -> None:
    torch.manual_seed(1)
    x = torch.randn(2, 8, 7, 5).to(memory_format=torch.channels_last)
    w = torch.randn(4, 8, 3, 3).to(memory_format=torch.channels_last)
    g, X, W, Y = _conv_graph(x, w)  # every graph tensor channels-last
    expected = torch.nn.functional.conv2d(x, w, padding=1)
    y = torch.full(expected.shape, float("nan"))  # packed NCHW, as CPU torch conv3d returns
    g.execute({X: x.contiguous(), W: w.contiguous(), Y: y})
    torch.testing.assert_close(y, expected, atol=1e-5, rtol=1e-5)


def test_conv3d_bias_leaky_relu_with_a_packed_output() -> None:
    torch.manual_seed(2)
    n, c, d, h, w_, k = 2, 8, 9, 10, 11, 6
    x = torch.randn(n, d, h, w_, c, dtype=torch.float16).permute(0, 4, 1, 2, 3)
    w = torch.randn(k, 3, 3, 3, c, dtype=torch.float16).permute(0, 4, 1, 2, 3)
    b = torch.randn(1, 1, 1, 1, k, dtype=torch.float16).permute(0, 4, 1, 2, 3)
    with cudnn.graph(cudnn.create_handle(), io_data_type=cudnn.data_type.HALF,
                     intermediate_data_type=cudnn.data_type.FLOAT,
                     compute_data_type=cudnn.data_type.FLOAT) as (g, _):
        X, W, B = g.tensor_like(x), g.tensor_like(w), g.tensor_like(b)
        conv = g.conv_fprop(image=X, weight=W, padding=[0, 1, 2], stride=[2, 3, 1],
                            dilation=[1, 1, 1])
        Y = g.leaky_relu(name="relu", input=g.bias(name="bias", input=conv, bias=B),
                         negative_slope=0.01)
        Y.set_output(True)
    g.build([cudnn.heur_mode.A])
    ref = torch.nn.functional.conv3d(x.double(), w.double(), bias=b.double().reshape(-1),
                                     padding=[0, 1, 2], stride=[2, 3, 1])
    expected = torch.nn.functional.leaky_relu(ref, 0.01)
    y = torch.zeros(expected.shape, dtype=torch.float16)  # packed NCDHW; Y is channels-last
    assert list(y.stride()) != Y.get_stride()
    g.execute({X: x, W: w, B: b, Y: y})
    torch.testing.assert_close(y.double(), expected, atol=1e-1, rtol=1e-2)


def test_knob_type_sweep_as_cudnn_frontend_writes_it() -> None:
    torch.manual_seed(3)
    x = torch.randn(2, 4, 6, 6, dtype=torch.float16).to(memory_format=torch.channels_last)
    w = torch.randn(5, 4, 3, 3, dtype=torch.float16).to(memory_format=torch.channels_last)
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.HALF,
                          intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT)
    X = graph.tensor(name="X", dim=x.size(), stride=x.stride(), data_type=x.dtype)
    W = graph.tensor(name="W", dim=w.size(), stride=w.stride(), data_type=w.dtype)
    Y = graph.relu(name="relu", input=graph.conv_fprop(image=X, weight=W, padding=[0, 1]),
                   lower_clip=0.5, upper_clip=0.55)
    Y.set_output(True)
    graph.validate()
    graph.build_operation_graph()
    assert cudnn.knob_type.KERNEL_CFG == 12 and cudnn.knob_type.WARP_SPEC_CFG == 28
    seen = 0
    for engine in range(graph.get_engine_count()):
        knobs = graph.get_knobs_for_engine(engine)
        for knob in knobs:
            seen += 1
            assert knob.type != cudnn.knob_type.KERNEL_CFG  # ours are named, never KERNEL_CFG
        with pytest.raises(cudnn.KnobError, match="unknown knob 'KERNEL_CFG'"):
            graph.create_execution_plan(engine, {cudnn.knob_type.KERNEL_CFG: 0})
    assert graph.get_engine_count() >= 1
    graph.create_execution_plans([cudnn.heur_mode.A])
    graph.check_support()
    graph.build_plans()
    y = torch.empty(Y.get_dim(), dtype=torch.float16).to(memory_format=torch.channels_last)
    graph.execute({X: x, W: w, Y: y}, torch.empty(graph.get_workspace_size(), dtype=torch.uint8))
    ref = torch.clamp(torch.nn.functional.conv2d(x.float(), w.float(), padding=[0, 1]), 0.5,
                      0.55)
    torch.testing.assert_close(y.float(), ref, atol=1e-3, rtol=1e-3)
