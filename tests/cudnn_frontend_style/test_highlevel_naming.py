"""The high-level ``cudnn.Graph`` names unnamed nodes ``"<op>.<n>"`` as cudnn-frontend's wrapper
does (notebook 01's ``set_io_tuples(["conv_fprop.0::0", ...])``); low-level graphs keep their
``"<op>_<n>"`` names (the pointwise mode for pointwise ops). Checked against PyTorch on the CPU."""

from __future__ import annotations

import pytest

import hipdnn as cudnn

torch = pytest.importorskip("torch")


def test_unnamed_high_level_nodes_are_op_dot_count() -> None:
    torch.manual_seed(0)
    x = torch.randn(2, 8, 6, 6, dtype=torch.float16).to(memory_format=torch.channels_last)
    w = torch.randn(4, 8, 3, 3, dtype=torch.float16).to(memory_format=torch.channels_last)
    b = torch.randn(1, 4, 1, 1, dtype=torch.float16)
    with cudnn.Graph(io_data_type=cudnn.data_type.HALF,
                     compute_data_type=cudnn.data_type.FLOAT) as graph:
        y = graph.conv_fprop(x, weight=w, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
        z = graph.relu(graph.bias(y, b))
        z2 = graph.relu(z, lower_clip=0.0, upper_clip=1.0)
        z2.set_output(True)
    assert [n.name for n in graph.nodes] == ["conv_fprop.0", "bias.0", "relu.0", "relu.1"]
    graph.set_io_tuples(["conv_fprop.0::0", "conv_fprop.0::weight", "bias.0::1"],
                        ["relu.1::OUT_0"])
    out = graph(x, w, b)
    ref = torch.clamp(torch.nn.functional.conv2d(x.float(), w.float(), padding=1)
                      + b.float(), 0.0, 1.0)
    torch.testing.assert_close(out.float(), ref, atol=1e-1, rtol=1e-2)


def test_low_level_graphs_keep_their_names() -> None:
    g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    x = g.tensor(dim=[1, 2, 3, 3], name="x")
    g.relu(g.relu(x)).set_output(True)
    assert [n.name for n in g.nodes] == ["relu_fwd_0", "relu_fwd_1"]
