"""INT8 convolution computed in INT32, written as cudnn-frontend users write it (``io_data_type``
INT8, ``intermediate``/``compute_data_type`` INT32, an ``identity`` to an INT32 output), checked
for exact integer results against an exact float64 reference. CPU_REFERENCE_ENGINE only.
"""

from __future__ import annotations

from typing import Any

import pytest

import hipdnn as cudnn
from hipdnn.engines import get_engine

torch = pytest.importorskip("torch")


@cudnn.jit(heur_modes=[cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
def create_conv_int8_graph(handle: Any, x_gpu: Any, w_gpu: Any, padding: list[int],
                           stride: list[int], dilation: list[int]) -> Any:
    with cudnn.graph(handle, io_data_type=cudnn.data_type.INT8,
                     intermediate_data_type=cudnn.data_type.INT32,
                     compute_data_type=cudnn.data_type.INT32) as (g, _):
        X = g.tensor_like(x_gpu)
        W = g.tensor_like(w_gpu)
        conv_output = g.conv_fprop(image=X, weight=W, padding=padding, stride=stride,
                                   dilation=dilation)
        Y = g.identity(name="identity", input=conv_output)
        Y.set_output(True).set_data_type(cudnn.data_type.INT32)
        return g, [X, W, Y]


def _exact(x: Any, w: Any, **conv: Any) -> Any:
    """int8 x int8 convolution in float64: exact (every partial sum is below 2**53)."""
    return torch.nn.functional.conv2d(x.double(), w.double(), **conv).round().to(torch.int64)


def test_conv_int8_is_exact_beyond_fp32() -> None:
    torch.manual_seed(0)
    handle = cudnn.create_handle()
    n, c, h, w, k = 2, 512, 6, 6, 4
    # values near 127 so the sums pass 2**24, where FP32 accumulation would round
    x_gpu = (127 - torch.randint(0, 3, (n, c, h, w))).to(torch.int8).to(
        memory_format=torch.channels_last)
    w_gpu = (127 - torch.randint(0, 3, (k, c, 3, 3))).to(torch.int8).to(
        memory_format=torch.channels_last)
    expected = _exact(x_gpu, w_gpu, padding=1)
    assert int(expected.abs().max()) > 2 ** 24
    assert not torch.equal(expected, expected.float().to(torch.int64))  # FP32 could not hold it

    g, (x_uid, w_uid, y_uid) = create_conv_int8_graph(handle, x_gpu, w_gpu, [1, 1], [1, 1],
                                                      [1, 1])
    # cudnn-frontend's test passes an output buffer shaped like X (larger than Y); a tensor that
    # states another shape is refused here unless wrapped in by_pointer (the one change this
    # port needs): then Y is laid out from its data pointer with Y's own (channels-last)
    # strides, as cuDNN does
    y_actual = torch.randint(0, 127, x_gpu.size(), dtype=torch.int32).to(
        memory_format=torch.channels_last)
    workspace = torch.empty(g.get_workspace_size(), dtype=torch.uint8)
    with pytest.raises(cudnn.VariantPackError, match=r"shape mismatch.*by_pointer"):
        g.execute({x_uid: x_gpu, w_uid: w_gpu, y_uid: y_actual}, workspace, handle=handle)
    g.execute({x_uid: x_gpu, w_uid: w_gpu, y_uid: cudnn.by_pointer(y_actual)}, workspace,
              handle=handle)
    Y = g.tensors[y_uid]
    got = torch.as_strided(y_actual, Y.get_dim(), Y.get_stride())
    assert torch.equal(got.to(torch.int64), expected)


@pytest.mark.parametrize("out_type", ["INT32", "FLOAT"])
def test_conv_int8_strided_dilated_grouped(out_type: str) -> None:
    torch.manual_seed(1)
    x = torch.randint(-128, 128, (2, 8, 11, 9), dtype=torch.int8)
    w = torch.randint(-128, 128, (6, 4, 3, 2), dtype=torch.int8)  # groups = 2
    g = cudnn.pygraph(io_data_type=cudnn.data_type.INT8,
                      intermediate_data_type=cudnn.data_type.INT32,
                      compute_data_type=cudnn.data_type.INT32)
    X, Wt = g.tensor_like(x), g.tensor_like(w)
    Y = g.conv_fprop(X, Wt, padding=[1, 0], stride=[2, 1], dilation=[1, 2])
    Y.set_output(True).set_data_type(getattr(cudnn.data_type, out_type))
    g.build([cudnn.heur_mode.A])
    expected = torch.nn.functional.conv2d(x.double(), w.double(), padding=(1, 0),
                                          stride=(2, 1), dilation=(1, 2), groups=2)
    y = torch.empty(Y.get_dim(), dtype=torch.int32 if out_type == "INT32" else torch.float32)
    g.execute({X: x, Wt: w, Y: y})  # a packed NCHW buffer for the NHWC Y: read by its strides
    if out_type == "INT32":
        assert torch.equal(y.to(torch.int64), expected.to(torch.int64))
    else:
        torch.testing.assert_close(y, expected.float(), atol=0, rtol=2 ** -23)


def test_int8_conv_needs_int32_compute_and_int8_filter() -> None:
    x = torch.zeros(1, 4, 5, 5, dtype=torch.int8)
    g = cudnn.pygraph(io_data_type=cudnn.data_type.INT8,
                      intermediate_data_type=cudnn.data_type.INT32,
                      compute_data_type=cudnn.data_type.FLOAT)
    X, Wt = g.tensor_like(x), g.tensor_like(torch.zeros(2, 4, 3, 3, dtype=torch.int8))
    g.conv_fprop(X, Wt, name="conv").set_output(True).set_data_type(cudnn.data_type.INT32)
    with pytest.raises(cudnn.GraphNotSupportedError, match=r"node 'conv'.*computes in INT32; "
                                                           r"compute_data_type is FLOAT"):
        g.build([cudnn.heur_mode.A])
    g = cudnn.pygraph(io_data_type=cudnn.data_type.INT8,
                      compute_data_type=cudnn.data_type.INT32)
    X = g.tensor_like(x)
    Wt = g.tensor_like(torch.zeros(2, 4, 3, 3, dtype=torch.float16))
    g.conv_fprop(X, Wt, name="conv").set_output(True)
    with pytest.raises(cudnn.ValidationError, match=r"node 'conv'.*INT8 convolution needs INT8 "
                                                    r"X and W"):
        g.validate()


def test_miopen_engine_declines_int8_conv_naming_the_node() -> None:
    g = cudnn.pygraph(io_data_type=cudnn.data_type.INT8,
                      compute_data_type=cudnn.data_type.INT32)
    X = g.tensor_like(torch.zeros(1, 4, 5, 5, dtype=torch.int8))
    Wt = g.tensor_like(torch.zeros(2, 4, 3, 3, dtype=torch.int8))
    g.conv_fprop(X, Wt, name="conv").set_output(True).set_data_type(cudnn.data_type.INT32)
    g.validate()
    reason = get_engine("MIOPEN_ENGINE").check_support(g, None)
    assert reason is not None and "node 'conv'" in reason
    assert "INT8 convolution (INT32 compute) is not a seed row" in reason
