"""hipdnn.interop.buffers with torch CPU tensors (read through data_ptr/stride, never copied)."""

from __future__ import annotations

import numpy as np
import pytest

from hipdnn.core.errors import VariantPackError
from hipdnn.core.shapes import packed_strides
from hipdnn.core.types import DataType
from hipdnn.interop import buffers as interop
from hipdnn.interop import dtypes
from hipdnn.ir.tensor import Tensor

torch = pytest.importorskip("torch")  # CI (HIPDNN_REQUIRE_TORCH=1) turns this skip into a failure

NCHW = (2, 3, 4, 5)


def tensor(layout=None, data_type=DataType.FLOAT, dim=NCHW) -> Tensor:
    return Tensor(dim, packed_strides(dim, layout), data_type, name="conv::X", uid=11)


@pytest.mark.parametrize(
    ("torch_dtype", "data_type"),
    [("float32", DataType.FLOAT), ("float16", DataType.HALF), ("bfloat16", DataType.BFLOAT16)],
)
@pytest.mark.parametrize("layout", [None, "NHWC"])
def test_cpu_tensor(torch_dtype: str, data_type: DataType, layout: str | None) -> None:
    fmt = torch.channels_last if layout == "NHWC" else torch.contiguous_format
    t = torch.randn(NCHW).to(getattr(torch, torch_dtype)).to(memory_format=fmt)
    buf = interop.resolve(t)
    assert (buf.ptr, buf.device, buf.kind) == (t.data_ptr(), "cpu", "torch.Tensor")
    assert buf.shape == NCHW and buf.strides == packed_strides(NCHW, layout)
    assert buf.dtype == data_type and buf.owner is t
    interop.check_against(buf, tensor(layout, data_type), "execute")
    assert buf.array is not None
    np.testing.assert_array_equal(buf.array.astype(np.float32), t.float().numpy())
    # Writes through the engine's view land in the torch tensor.
    view = interop.host_view(buf, tensor(layout, data_type))
    view[1, 2, 3, 4] = 3.0
    assert float(t[1, 2, 3, 4]) == 3.0


def test_channels_last_against_nchw_tensor_is_read_through_its_strides() -> None:
    t = torch.arange(float(np.prod(NCHW))).reshape(NCHW).to(memory_format=torch.channels_last)
    buf = interop.resolve(t)
    assert interop.check_against(buf, tensor(), "execute") is True
    np.testing.assert_array_equal(interop.host_view(buf, tensor()), t.numpy())


def test_dtype_mismatch_names_torch_and_tensor() -> None:
    t = torch.zeros(NCHW, dtype=torch.bfloat16)
    with pytest.raises(VariantPackError, match=r"'conv::X' \(uid 11\).*expects HALF, got BFLOAT16"):
        interop.check_against(interop.resolve(t), tensor(data_type=DataType.HALF), "execute")


def test_storage_offset_and_requires_grad() -> None:
    base = torch.arange(240, dtype=torch.float32).reshape(4, 3, 4, 5).requires_grad_()
    t = base[2:]
    buf = interop.resolve(t)
    assert buf.ptr == base.data_ptr() + 2 * 60 * 4 and buf.shape == NCHW
    assert float(buf.array[0, 0, 0, 0]) == 120.0


def test_unsupported_torch_dtype_and_device() -> None:
    with pytest.raises(VariantPackError, match=r"torch\.complex64 is not supported; valid:"):
        interop.resolve(torch.zeros(3, dtype=torch.complex64))
    with pytest.raises(VariantPackError, match="meta has no addressable memory"):
        interop.resolve(torch.zeros(3, device="meta"))


def test_torch_dtype_maps() -> None:
    assert dtypes.torch_to_dtype(torch.bfloat16) == DataType.BFLOAT16
    assert dtypes.dtype_to_torch(DataType.HALF) is torch.float16
    for dt in (DataType.FLOAT, DataType.HALF, DataType.BFLOAT16, DataType.INT64, DataType.INT8):
        assert dtypes.torch_to_dtype(dtypes.dtype_to_torch(dt)) == dt


def test_parameter_subclass_is_a_tensor() -> None:
    p = torch.nn.Parameter(torch.ones(3))
    assert interop.resolve(p).kind == "torch.Tensor"
