"""hipdnn.interop.buffers: ints, floats, numpy and torch values -> Buffer; checks; host views."""

from __future__ import annotations

import gc
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

from hipdnn.core.errors import VariantPackError
from hipdnn.core.shapes import packed_strides
from hipdnn.core.types import DataType
from hipdnn.interop import buffers as interop
from hipdnn.interop import dtypes
from hipdnn.ir.tensor import Tensor

NCHW = (2, 3, 4, 5)


def tensor(dim=NCHW, layout=None, data_type=DataType.FLOAT, name="x", uid=7, **kw) -> Tensor:
    return Tensor(dim, packed_strides(dim, layout), data_type, name=name, uid=uid, **kw)


# ------------------------------------------------------------------------------ kinds


def test_int_is_a_raw_pointer_with_a_guessed_device() -> None:
    buf = interop.resolve(0x7F00_0000_1000)
    assert (buf.ptr, buf.device, buf.device_known) == (0x7F00_0000_1000, "gpu", False)
    assert buf.shape is None and buf.strides is None and buf.dtype is None
    assert interop.resolve(np.int64(0x7F00_0000_2000), default_device="cpu").device == "cpu"
    interop.check_against(buf, tensor(), "execute")  # nothing revealed, nothing to contradict


def test_negative_int_and_bool_are_rejected() -> None:
    with pytest.raises(VariantPackError, match="negative"):
        interop.resolve(-8)
    with pytest.raises(VariantPackError, match=r"builtins\.bool"):
        interop.resolve(True)


def test_float_is_a_pass_by_value_scalar() -> None:
    buf = interop.resolve(1e-5)
    assert buf.scalar == 1e-5 and buf.ptr == 0 and buf.kind == "float"
    assert interop.resolve(np.float32(0.5)).scalar == 0.5
    eps = tensor((1, 1, 1, 1), name="eps", is_pass_by_value=True)
    interop.check_against(buf, eps, "execute")
    np.testing.assert_array_equal(interop.host_view(buf, eps), np.full((1, 1, 1, 1), 1e-5, "f4"))
    with pytest.raises(VariantPackError, match=r"tensor 'x' \(uid 7\).*Python float"):
        interop.check_against(buf, tensor(), "execute")


@pytest.mark.parametrize(
    ("np_dtype", "data_type"),
    [(np.float32, DataType.FLOAT), (np.float16, DataType.HALF),
     (ml_dtypes.bfloat16, DataType.BFLOAT16), (np.float64, DataType.DOUBLE),
     (np.int8, DataType.INT8), (np.int32, DataType.INT32), (np.int64, DataType.INT64),
     (np.uint8, DataType.UINT8)],
)
def test_numpy_array(np_dtype: type, data_type: DataType) -> None:
    a = np.zeros(NCHW, np_dtype)
    buf = interop.resolve(a)
    assert (buf.ptr, buf.device, buf.device_known) == (a.ctypes.data, "cpu", True)
    assert buf.shape == NCHW and buf.strides == packed_strides(NCHW) and buf.dtype == data_type
    assert buf.array is a and buf.owner is a
    assert buf.nbytes == a.nbytes and buf.numel == a.size
    interop.check_against(buf, tensor(data_type=data_type), "execute")


def test_numpy_nhwc_via_strides() -> None:
    n, c, h, w = NCHW
    a = np.arange(n * h * w * c, dtype=np.float32).reshape(n, h, w, c).transpose(0, 3, 1, 2)
    buf = interop.resolve(a)
    assert buf.shape == NCHW and buf.strides == packed_strides(NCHW, "NHWC")
    assert interop.check_against(buf, tensor(layout="NHWC"), "execute") is False
    # the same logical tensor in another layout: accepted, read through the array's strides
    assert interop.check_against(buf, tensor(), "execute") is True
    view = interop.host_view(buf, tensor())
    np.testing.assert_array_equal(view, a)
    view[1, 2, 3, 4] = -1.0
    assert a[1, 2, 3, 4] == -1.0


def test_non_packed_numpy_slice_keeps_its_strides() -> None:
    a = np.zeros((2, 6, 4, 5), np.float32)[:, ::2]
    buf = interop.resolve(a)
    assert buf.strides == (120, 40, 5, 1) and buf.ptr == a.ctypes.data


def test_byte_strides_that_split_elements_are_rejected() -> None:
    raw = np.zeros(64, np.uint8)
    odd = np.lib.stride_tricks.as_strided(raw[:40].view(np.float32), shape=(3,), strides=(6,))
    with pytest.raises(VariantPackError, match="not multiples of the item size 4"):
        interop.resolve(odd)


def test_unsupported_numpy_dtype_names_valid_ones() -> None:
    with pytest.raises(VariantPackError, match="complex64 is not supported; valid: float32"):
        interop.resolve(np.zeros(3, np.complex64))


def test_unknown_type_names_type_and_accepted_kinds() -> None:
    with pytest.raises(VariantPackError) as exc:
        interop.resolve([1.0, 2.0])
    msg = str(exc.value)
    assert "builtins.list" in msg
    for kind in interop.ACCEPTED_KINDS:
        assert kind in msg
    with pytest.raises(VariantPackError, match=r"builtins\.str"):
        interop.resolve("0x1000")


def test_buffer_passes_through() -> None:
    buf = interop.resolve(np.zeros(3, np.float32))
    assert interop.resolve(buf) is buf
    assert interop.describe is interop.resolve


# ------------------------------------------------------------------------------ check_against


def test_dtype_mismatch_names_tensor_expected_and_got() -> None:
    buf = interop.resolve(np.zeros(NCHW, np.float16))
    with pytest.raises(VariantPackError) as exc:
        interop.check_against(buf, tensor(name="conv::X", uid=3), "execute: variant pack")
    msg = str(exc.value)
    assert msg.startswith("execute: variant pack: tensor 'conv::X' (uid 3)")
    assert "expects FLOAT" in msg and "got HALF" in msg and exc.value.tensor == "conv::X"


def test_shape_mismatch_names_tensor() -> None:
    buf = interop.resolve(np.zeros((2, 3, 4, 4), np.float32))
    with pytest.raises(VariantPackError, match=r"'x' \(uid 7\): shape mismatch.*\(2, 3, 4, 5\).*"
                       r"\(2, 3, 4, 4\).*by_pointer.*480 bytes"):
        interop.check_against(buf, tensor(), "execute")


def test_larger_gap_free_buffer_holds_the_tensor_only_by_pointer() -> None:
    big = np.zeros((2, 3, 4, 6), np.float32)  # 144 elements, the tensor needs 120
    with pytest.raises(VariantPackError, match=r"shape mismatch.*\(2, 3, 4, 6\)"):
        interop.check_against(interop.resolve(big), tensor(), "execute")  # it states a shape
    buf = interop.by_pointer(big)
    assert interop.check_against(buf, tensor(), "execute") is False
    view = interop.host_view(buf, tensor())
    view[...] = 1.0  # laid out from the data pointer with the tensor's own strides
    assert big.reshape(-1)[:120].sum() == 120 and big.reshape(-1)[120:].sum() == 0
    flat = interop.resolve(np.zeros(120, np.float32))  # a flat block of exactly its size
    assert interop.check_against(flat, tensor(), "execute") is False
    gappy = interop.by_pointer(np.zeros((2, 3, 4, 12), np.float32)[..., ::2])  # not one block
    with pytest.raises(VariantPackError, match="gap-free block of at least 480 bytes"):
        interop.check_against(gappy, tensor(), "execute")


def test_size_one_axes_may_differ() -> None:
    scale = tensor((1, 3, 1, 1), name="bn::SCALE")
    interop.check_against(interop.resolve(np.ones(3, np.float32)), scale, "execute")
    interop.check_against(interop.resolve(np.ones((1, 3), np.float32)), scale, "execute")
    with pytest.raises(VariantPackError, match="shape mismatch"):
        interop.check_against(interop.resolve(np.ones(2, np.float32)), scale, "execute")
    # every other element: the same logical tensor, read through the array's own strides
    assert interop.check_against(interop.resolve(np.ones(6, np.float32)[::2]), scale,
                                 "execute") is True


def test_zero_size_and_non_finite_are_not_errors() -> None:
    empty = np.zeros((0, 3, 4, 5), np.float32)
    interop.check_against(interop.resolve(empty), tensor((0, 3, 4, 5)), "execute")
    bad = np.full(NCHW, np.nan, np.float32)
    bad[0, 0, 0, 0] = np.inf
    interop.check_against(interop.resolve(bad), tensor(), "execute")
    assert interop.host_view(interop.resolve(empty), tensor((0, 3, 4, 5))).shape == (0, 3, 4, 5)


# ------------------------------------------------------------------------------ host_view


@pytest.mark.parametrize("layout", [None, "NHWC"])
def test_host_view_writes_land_in_the_original_array(layout: str | None) -> None:
    t = tensor(layout=layout)
    if layout == "NHWC":
        a = np.zeros((2, 4, 5, 3), np.float32).transpose(0, 3, 1, 2)
    else:
        a = np.zeros(NCHW, np.float32)
    view = interop.host_view(interop.resolve(a), t)
    assert view.shape == NCHW and view.flags.writeable
    view[1, 2, 3, 4] = 42.0
    view[0, 1] += 1.0
    assert a[1, 2, 3, 4] == 42.0 and np.all(a[0, 1] == 1.0) and a.sum() == 42.0 + 20


def test_host_view_bf16_and_half() -> None:
    for np_dtype, data_type in [(ml_dtypes.bfloat16, DataType.BFLOAT16),
                                (np.float16, DataType.HALF)]:
        a = np.zeros(NCHW, np_dtype)
        view = interop.host_view(interop.resolve(a), tensor(data_type=data_type))
        assert view.dtype == np.dtype(np_dtype)
        view[...] = np.arange(a.size, dtype=np.float32).reshape(NCHW) / 8
        np.testing.assert_array_equal(a.astype(np.float32),
                                      (np.arange(a.size) / 8).reshape(NCHW).astype(np_dtype))


@pytest.mark.parametrize("default_device", ["cpu", "gpu"])
def test_host_view_from_a_raw_int_pointer(default_device: str) -> None:
    a = np.zeros((2, 4, 5, 3), np.float32)  # NHWC memory
    buf = interop.resolve(a.ctypes.data, default_device=default_device)
    view = interop.host_view(buf, tensor(layout="NHWC"))
    view[1, 2, 3, 4] = 7.0  # logical n=1, c=2, h=3, w=4
    assert a[1, 3, 4, 2] == 7.0 and a.sum() == 7.0


def test_host_view_rejects_a_tensor_larger_than_the_array() -> None:
    buf = interop.resolve(np.zeros((2, 3, 4, 4), np.float32))
    with pytest.raises(VariantPackError, match=r"tensor 'x' \(uid 7\).*covers only"):
        interop.host_view(buf, tensor())


def test_host_view_bounds_with_negative_strides() -> None:
    a = np.arange(6, dtype=np.float32)[::-1]
    buf = interop.resolve(a)
    assert buf.strides == (-1,) and buf.span == (-20, 4)
    reversed_t = Tensor((6,), (-1,), DataType.FLOAT, name="r", uid=2)
    np.testing.assert_array_equal(interop.host_view(buf, reversed_t), a)
    # the same shape with other strides is read through the array's own strides
    forward = interop.host_view(buf, Tensor((6,), (1,), DataType.FLOAT, name="r", uid=2))
    np.testing.assert_array_equal(forward, a)
    # another shape is laid out from the pointer, which the reversed array does not cover
    with pytest.raises(VariantPackError, match=r"covers bytes \(0, 24\).*only \(-20, 4\)"):
        interop.host_view(buf, Tensor((2, 3), (3, 1), DataType.FLOAT, name="r", uid=2))


def test_host_view_names_tensor_with_unmappable_dtype() -> None:
    with pytest.raises(VariantPackError, match=r"tensor 'x' \(uid 7\): data type .*NOT_SET"):
        interop.host_view(interop.resolve(np.zeros(NCHW, np.float32)),
                          tensor(data_type=DataType.NOT_SET))


def test_host_view_rejects_null_pointer() -> None:
    with pytest.raises(VariantPackError, match="null pointer"):
        interop.host_view(interop.resolve(0), tensor())


def test_host_view_keeps_the_source_alive() -> None:
    a = np.arange(120, dtype=np.float32).reshape(NCHW)
    view = interop.host_view(interop.resolve(a), tensor())
    del a
    gc.collect()
    np.testing.assert_array_equal(view, np.arange(120, dtype=np.float32).reshape(NCHW))


def test_readonly_array_gives_readonly_view() -> None:
    a = np.zeros(NCHW, np.float32)
    a.flags.writeable = False
    buf = interop.resolve(a)
    assert buf.readonly
    with pytest.raises(ValueError, match="read-only"):
        interop.host_view(buf, tensor())[0, 0, 0, 0] = 1.0


# ------------------------------------------------------------------------------ dtype maps


def test_dtype_maps_round_trip() -> None:
    for data_type in (DataType.FLOAT, DataType.HALF, DataType.BFLOAT16, DataType.DOUBLE,
                      DataType.UINT8, DataType.INT32, DataType.INT8, DataType.INT64):
        assert dtypes.numpy_to_dtype(dtypes.dtype_to_numpy(data_type)) == data_type
    assert dtypes.dtype_to_numpy(DataType.BFLOAT16) == np.dtype(ml_dtypes.bfloat16)
    assert dtypes.numpy_to_dtype(np.dtype(">f4").newbyteorder("=")) == DataType.FLOAT
    with pytest.raises(VariantPackError, match=r"NOT_SET.*no numpy equivalent; valid: FLOAT"):
        dtypes.dtype_to_numpy(DataType.NOT_SET)


def test_import_does_not_import_torch() -> None:
    code = "import sys, hipdnn.interop.buffers; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_docstring_examples() -> None:
    import doctest

    result = doctest.testmod(interop)
    assert result.attempted >= 8 and result.failed == 0
