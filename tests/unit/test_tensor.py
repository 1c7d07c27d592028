"""Tensors: graph.tensor / tensor_like, chainable setters, getters, defaults, repr."""

from __future__ import annotations

import numpy as np
import pytest

import hipdnn
from hipdnn import DataType, Graph, ValidationError


def test_tensor_defaults_packed_channel_first() -> None:
    g = Graph()
    t = g.tensor(dim=[2, 3, 4, 5], data_type=DataType.HALF, name="x")
    assert t.get_stride() == [60, 20, 5, 1]
    assert t.get_dim() == [2, 3, 4, 5]
    assert t.get_data_type() == DataType.HALF
    assert t.get_name() == "x"
    assert t.get_uid() == -1
    assert t.get_is_virtual() is False
    assert t.get_is_pass_by_value() is False
    assert t.graph is g


def test_tensor_without_name_gets_one_and_explicit_uid_kept() -> None:
    g = Graph()
    t = g.tensor(dim=[1, 2, 3, 3], uid=42)
    assert t.name == "tensor_0"
    assert t.get_uid() == 42


def test_setters_chain_and_set_output_is_not_virtual() -> None:
    g = Graph()
    t = g.tensor(dim=[1, 2, 3, 3])
    same = (t.set_output(True).set_data_type("bfloat16").set_name("y").set_uid(7)
            .set_dim([1, 2, 4, 4]).set_stride([32, 1, 8, 2]).set_is_virtual(False))
    assert same is t
    assert (t.get_data_type(), t.get_name(), t.get_uid()) == (DataType.BFLOAT16, "y", 7)
    assert (t.get_dim(), t.get_stride()) == ([1, 2, 4, 4], [32, 1, 8, 2])
    t.set_output(False)
    assert t.get_is_virtual() is True
    assert t.clear_uid().get_uid() == -1


def test_data_type_accepts_numpy_and_torch_dtypes() -> None:
    g = Graph()
    assert g.tensor(dim=[1], data_type=np.float16).data_type == DataType.HALF
    assert g.tensor(dim=[1], data_type=np.dtype("float32")).data_type == DataType.FLOAT
    torch = pytest.importorskip("torch")
    assert g.tensor(dim=[1], data_type=torch.bfloat16).data_type == DataType.BFLOAT16
    with pytest.raises(ValueError, match="unknown data type"):
        g.tensor(dim=[1], data_type="complex64")


@pytest.mark.parametrize("dim", [[2, 0, 3, 3], [2, -1, 3, 3], []])
def test_non_positive_or_empty_dims_rejected(dim: list[int]) -> None:
    with pytest.raises(ValidationError, match="must all be positive"):
        Graph().tensor(dim=dim, name="bad")


def test_stride_length_mismatch_rejected_naming_tensor() -> None:
    with pytest.raises(ValidationError, match=r"tensor 'x'.*stride \[1, 1\] has 2 entries"):
        Graph().tensor(dim=[1, 2, 3, 3], stride=[1, 1], name="x")


def test_repr_is_readable() -> None:
    g = Graph(io_data_type="float")
    x = g.tensor(dim=[1, 2, 3, 3], name="x")
    assert repr(x) == ("Tensor(name='x', dim=[1, 2, 3, 3], stride=[18, 9, 3, 1], "
                       "data_type=NOT_SET)")
    e = g.tensor(dim=[1, 1, 1, 1], is_pass_by_value=True, value=1e-5, name="eps")
    assert "pass_by_value=1e-05" in repr(e)


def test_tensor_like_numpy_keeps_shape_strides_dtype() -> None:
    g = Graph()
    a = np.zeros((2, 3, 4, 5), np.float16)
    t = g.tensor_like(a, name="a")
    assert (t.get_dim(), t.get_stride(), t.get_data_type()) == (
        [2, 3, 4, 5], [60, 20, 5, 1], DataType.HALF)
    nhwc = np.zeros((2, 4, 5, 3), np.float32).transpose(0, 3, 1, 2)
    assert g.tensor_like(nhwc).get_stride() == [60, 1, 15, 3]


def test_tensor_like_torch_channels_last_and_scalar() -> None:
    torch = pytest.importorskip("torch")
    g = Graph()
    x = torch.zeros(2, 3, 4, 5).to(memory_format=torch.channels_last)
    t = g.tensor_like(x)
    assert t.get_stride() == list(x.stride())
    assert t.get_data_type() == DataType.FLOAT
    eps = g.tensor_like(torch.full((1, 1, 1, 1), 1e-5))
    assert eps.get_is_pass_by_value() is True


def test_tensor_like_copies_a_graph_tensor() -> None:
    g = Graph()
    x = g.tensor(dim=[1, 2, 3, 3], data_type="half", uid=5, name="x")
    y = g.tensor_like(x, name="y")
    assert y is not x and y.get_dim() == x.get_dim() and y.get_data_type() == DataType.HALF
    assert y.get_uid() == -1 and y.get_name() == "y"


def test_tensor_like_rejects_pointer_without_shape() -> None:
    with pytest.raises(ValidationError, match="reveals shape and dtype"):
        Graph().tensor_like(0x1000)


def test_cudnn_only_tensor_args_accepted_at_defaults() -> None:
    g = Graph()
    t = g.tensor(dim=[1, 2, 2, 2], ragged_offset=None)
    assert t.get_dim() == [1, 2, 2, 2]
    with pytest.raises(TypeError, match="unexpected keyword"):
        g.tensor(dim=[1], bogus=1)


def test_tensor_alias_is_the_class() -> None:
    assert hipdnn.tensor is hipdnn.Tensor
