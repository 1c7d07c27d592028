"""Error hints for common mistakes: float64 data (cast), non-packed arrays
(np.ascontiguousarray), a data array where a graph tensor is expected."""

from __future__ import annotations

import numpy as np
import pytest

import hipdnn
from hipdnn.core.errors import GraphNotSupportedError, VariantPackError
from hipdnn.core.types import PointwiseMode
from hipdnn.ir.nodes import PointwiseNode
from hipdnn.ir.tensor import not_a_tensor_hint

F = hipdnn.DataType.FLOAT


def relu_graph() -> tuple[hipdnn.Graph, hipdnn.Tensor, hipdnn.Tensor]:
    g = hipdnn.Graph(io_data_type=F, compute_data_type=F)
    x = g.tensor(dim=[1, 2, 3, 3], name="x")
    y = g.relu(x).set_output(True)
    g.build()
    return g, x, y


def test_float64_at_build_gets_the_cast_hint() -> None:
    g = hipdnn.Graph(io_data_type=F, compute_data_type=F)
    x = g.tensor_like(np.zeros((1, 2, 3, 3)), name="x64")
    w = g.tensor_like(np.zeros((2, 2, 1, 1), np.float32), name="w")
    g.conv_fprop(x, w, padding=[0, 0]).set_output(True)
    with pytest.raises(GraphNotSupportedError) as info:
        g.build()
    msg = str(info.value)
    assert "tensor(s) 'x64' are DOUBLE" in msg and "a.astype(np.float32)" in msg


def test_float64_at_execute_gets_the_cast_hint() -> None:
    g, x, y = relu_graph()
    with pytest.raises(VariantPackError, match=r"got DOUBLE .*; cast it: "
                       r"a\.astype\(np\.float32\) \(numpy\) or t\.float\(\) \(torch\)"):
        g.execute({x: np.zeros((1, 2, 3, 3)), y: np.zeros((1, 2, 3, 3), np.float32)})


@pytest.mark.parametrize("make", [
    lambda: np.zeros((1, 2, 3, 6), np.float32)[..., ::2],  # a slice: not packed
    lambda: np.asfortranarray(np.zeros((1, 2, 3, 3), np.float32)),  # packed, other order
])
def test_non_contiguous_arrays_get_ascontiguousarray(make) -> None:  # type: ignore[no-untyped-def]
    from types import SimpleNamespace

    from hipdnn.interop.buffers import resolve
    from hipdnn.pipeline.executor import _check_restrided

    g, x, y = relu_graph()
    a = make()
    a[...] = np.arange(a.size, dtype=np.float32).reshape(a.shape) - 5
    out = np.zeros((1, 2, 3, 3), np.float32)
    g.execute({x: a, y: out})  # CPU_REFERENCE_ENGINE reads through the array's own strides
    np.testing.assert_array_equal(out, np.maximum(a, 0))
    by_pointer = SimpleNamespace(reads_buffer_strides=False, name="MIOPEN_ENGINE:relu")
    with pytest.raises(VariantPackError, match=r"np\.ascontiguousarray\(a\)"):
        _check_restrided([by_pointer], x, resolve(a))  # type: ignore[list-item]


def test_data_array_where_a_graph_tensor_is_expected() -> None:
    g = hipdnn.Graph(io_data_type=F, compute_data_type=F)
    node = PointwiseNode("relu", F, mode=PointwiseMode.RELU_FWD)
    node.inputs["IN_0"] = np.zeros(3, np.float32)  # type: ignore[assignment]
    with pytest.raises(hipdnn.ValidationError, match=r"got a numpy\.ndarray \(a data array\): "
                       r"ops take graph tensors; describe it with t = graph\.tensor_like"):
        g._add_node(node)
    assert "got list; create it with graph.tensor()" in not_a_tensor_hint([1])
