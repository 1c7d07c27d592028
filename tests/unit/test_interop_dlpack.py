"""hipdnn.interop.buffers: __dlpack__ (ctypes capsule parsing), __cuda_array_interface__, __array_interface__."""

from __future__ import annotations

import ctypes
import gc
import sys
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from hipdnn.core.errors import VariantPackError
from hipdnn.core.shapes import packed_strides
from hipdnn.core.types import DataType
from hipdnn.interop import buffers as interop
from hipdnn.interop import dlpack as _dlpack
from hipdnn.ir.tensor import Tensor

NCHW = (2, 3, 4, 5)
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi)
)
_DELETER_T = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def tensor(layout=None, data_type=DataType.FLOAT, dim=NCHW) -> Tensor:
    return Tensor(dim, packed_strides(dim, layout), data_type, name="bn::X", uid=5)


class Wrapped:
    """Hides a producer behind its __dlpack__ only, so resolve takes the DLPack path."""

    def __init__(self, producer: Any, legacy: bool = False) -> None:
        self.producer = producer
        self.legacy = legacy
        self.capsule: Any = None

    def __dlpack__(self, **kwargs: Any) -> Any:
        if self.legacy and "max_version" in kwargs:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        self.capsule = self.producer.__dlpack__(**kwargs)
        return self.capsule


class HandMade:
    """A DLPack producer made of ctypes structs that counts its deleter calls."""

    def __init__(
        self, memory: np.ndarray, shape: tuple[int, ...], *, versioned: bool = True,
        strides: tuple[int, ...] | None = None, device_type: int = 1, code: int = 2,
        bits: int = 32, lanes: int = 1, byte_offset: int = 0, flags: int = 0, major: int = 1,
    ) -> None:
        self.memory = memory
        self.versioned = versioned
        self.calls: list[int] = []
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.strides = None if strides is None else (ctypes.c_int64 * len(shape))(*strides)
        self.deleter = _DELETER_T(self.calls.append)
        cls = _dlpack.DLManagedTensorVersioned if versioned else _dlpack.DLManagedTensor
        self.managed = cls()
        t = self.managed.dl_tensor
        t.data = memory.ctypes.data
        t.device = _dlpack.DLDevice(device_type, 0)
        t.ndim = len(shape)
        t.dtype = _dlpack.DLDataType(code, bits, lanes)
        t.shape = self.shape
        if self.strides is not None:
            t.strides = self.strides
        t.byte_offset = byte_offset
        self.managed.deleter = ctypes.cast(self.deleter, ctypes.c_void_p).value
        if versioned:
            self.managed.version = _dlpack.DLPackVersion(major, 0)
            self.managed.flags = flags

    @property
    def address(self) -> int:
        return ctypes.addressof(self.managed)

    def __dlpack__(self, **kwargs: Any) -> Any:
        name = b"dltensor_versioned" if self.versioned else b"dltensor"
        return _capsule_new(self.address, name, None)


# ------------------------------------------------------------------------------ real producers


@pytest.mark.parametrize("legacy", [False, True])
def test_dlpack_from_numpy_renames_capsule_and_views_memory(legacy: bool) -> None:
    a = np.zeros((2, 4, 5, 3), np.float32).transpose(0, 3, 1, 2)  # NHWC memory
    w = Wrapped(a, legacy=legacy)
    buf = interop.resolve(w)
    expected = "used_dltensor" if legacy else "used_dltensor_versioned"
    assert f'"{expected}"' in repr(w.capsule)
    assert (buf.ptr, buf.device, buf.kind) == (a.ctypes.data, "cpu", "__dlpack__ object")
    assert buf.shape == NCHW and buf.strides == packed_strides(NCHW, "NHWC")
    assert buf.dtype == DataType.FLOAT
    interop.check_against(buf, tensor("NHWC"), "execute")
    interop.host_view(buf, tensor("NHWC"))[1, 2, 3, 4] = 9.0
    assert a[1, 2, 3, 4] == 9.0


def test_numpy_export_is_released_when_the_buffer_goes() -> None:
    a = np.zeros(NCHW, np.float32)
    before = sys.getrefcount(a)
    buf = interop.resolve(Wrapped(a))
    assert sys.getrefcount(a) > before  # the export holds the array
    view = interop.host_view(buf, tensor())
    del buf
    gc.collect()
    assert sys.getrefcount(a) > before  # ... while a view of it exists
    del view
    gc.collect()
    assert sys.getrefcount(a) == before


def test_readonly_numpy_export_is_flagged() -> None:
    a = np.zeros(NCHW, np.float32)
    a.flags.writeable = False
    buf = interop.resolve(Wrapped(a))
    assert buf.readonly
    with pytest.raises(ValueError, match="read-only"):
        interop.host_view(buf, tensor())[0, 0, 0, 0] = 1.0


@pytest.mark.parametrize(
    ("name", "data_type"),
    [("float32", DataType.FLOAT), ("float16", DataType.HALF), ("bfloat16", DataType.BFLOAT16)],
)
def test_dlpack_from_torch(name: str, data_type: DataType) -> None:
    torch = pytest.importorskip("torch")
    t = torch.randn(NCHW).to(getattr(torch, name)).to(memory_format=torch.channels_last)
    buf = interop.resolve(Wrapped(t))
    assert buf.ptr == t.data_ptr() and buf.dtype == data_type
    assert buf.strides == packed_strides(NCHW, "NHWC")
    np.testing.assert_array_equal(buf.array.astype(np.float32), t.float().numpy())


# ------------------------------------------------------------------------------ hand-made exports


@pytest.mark.parametrize("versioned", [True, False])
def test_deleter_called_exactly_once_after_last_view(versioned: bool) -> None:
    mem = np.arange(6, dtype=np.float32)
    producer = HandMade(mem, (2, 3), versioned=versioned)
    buf = interop.resolve(producer)
    assert buf.shape == (2, 3) and buf.strides == (3, 1)  # NULL strides = row-major
    assert producer.calls == []
    view = interop.host_view(buf, Tensor((2, 3), (3, 1), DataType.FLOAT, name="t", uid=1))
    del buf
    gc.collect()
    assert producer.calls == []  # the view still uses the memory
    assert float(view[1, 2]) == 5.0
    del view
    gc.collect()
    gc.collect()
    assert producer.calls == [producer.address]


def test_strides_byte_offset_and_flags() -> None:
    mem = np.arange(24, dtype=np.float32)
    producer = HandMade(mem, (3, 2), strides=(1, 3), byte_offset=8, flags=1)
    buf = interop.resolve(producer)
    assert buf.ptr == mem.ctypes.data + 8 and buf.strides == (1, 3) and buf.readonly
    np.testing.assert_array_equal(buf.array, [[2, 5], [3, 6], [4, 7]])


def test_rocm_device_memory_is_not_host() -> None:
    producer = HandMade(np.zeros(120, np.float16), NCHW, device_type=10, code=2, bits=16)
    buf = interop.resolve(producer)
    assert (buf.device, buf.device_known, buf.array) == ("gpu", True, None)
    interop.check_against(buf, tensor(data_type=DataType.HALF), "execute")
    with pytest.raises(VariantPackError, match=r"'bn::X' \(uid 5\).*gpu:0 is not host memory"):
        interop.host_view(buf, tensor(data_type=DataType.HALF))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"device_type": 4}, "device type 4 is not supported"),
     ({"code": 5, "bits": 64}, r"\(code=5, bits=64, lanes=1\) is not supported"),
     ({"lanes": 2}, "lanes=2"),
     ({"major": 2}, r"version \(2, 0\) is not supported")],
)
def test_unusable_exports_raise_and_still_release(kwargs: dict[str, int], message: str) -> None:
    producer = HandMade(np.zeros(8, np.float32), (8,), **kwargs)
    with pytest.raises(VariantPackError, match=message):
        interop.resolve(producer)
    gc.collect()
    assert producer.calls == [producer.address]


def test_consumed_capsule_is_rejected() -> None:
    producer = HandMade(np.zeros(4, np.float32), (4,))  # must outlive its capsule
    capsule = producer.__dlpack__()

    class Replays:
        def __dlpack__(self, **kwargs: Any) -> Any:
            return capsule

    buf = interop.resolve(Replays())
    with pytest.raises(VariantPackError, match="not an unconsumed"):
        interop.resolve(Replays())
    del buf
    gc.collect()
    assert producer.calls == [producer.address]


def test_failing_producer_is_reported() -> None:
    class Broken:
        def __dlpack__(self, **kwargs: Any) -> Any:
            raise BufferError("cannot export")

    with pytest.raises(VariantPackError, match="cannot export"):
        interop.resolve(Broken())


# ------------------------------------------------------------------------------ array interfaces


class CudaArray:
    """A hand-made __cuda_array_interface__ (v3) producer."""

    def __init__(self, ptr: int, shape: tuple[int, ...], typestr: str, **extra: Any) -> None:
        self.__cuda_array_interface__ = {
            "version": 3, "data": (ptr, False), "shape": shape, "typestr": typestr,
            "strides": None, **extra,
        }


def test_cuda_array_interface_with_byte_strides() -> None:
    nhwc = packed_strides(NCHW, "NHWC")
    obj = CudaArray(0xDEAD0000, NCHW, "<f2", strides=tuple(2 * s for s in nhwc), stream=1)
    buf = interop.resolve(obj)
    assert (buf.ptr, buf.device, buf.array, buf.stream) == (0xDEAD0000, "gpu", None, 1)
    assert buf.shape == NCHW and buf.strides == nhwc and buf.dtype == DataType.HALF
    assert interop.check_against(buf, tensor("NHWC", DataType.HALF), "execute") is False
    # another layout of the same tensor: only plans that read buffer strides take it
    assert interop.check_against(buf, tensor(None, DataType.HALF), "execute") is True


def test_cuda_array_interface_packed_and_bf16_descr() -> None:
    buf = interop.resolve(CudaArray(0x1000, NCHW, "<V2", descr=[("bfloat16", "<V2")]))
    assert buf.dtype == DataType.BFLOAT16 and buf.strides == packed_strides(NCHW)
    assert interop.resolve(CudaArray(0x1000, NCHW, "<f4")).dtype == DataType.FLOAT


@pytest.mark.parametrize(
    ("typestr", "extra", "message"),
    [("<V2", {}, "opaque; bfloat16 needs a 'descr'"),
     (">f4", {}, "not in native byte order"),
     ("<f4", {"mask": object()}, "masked arrays"),
     ("<c8", {}, "complex64 is not supported")],
)
def test_bad_cuda_array_interface(typestr: str, extra: dict[str, Any], message: str) -> None:
    with pytest.raises(VariantPackError, match=message):
        interop.resolve(CudaArray(0x1000, NCHW, typestr, **extra))


def test_cuda_array_interface_null_pointer() -> None:
    with pytest.raises(VariantPackError, match="null data pointer"):
        interop.resolve(CudaArray(0, NCHW, "<f4"))
    assert interop.resolve(CudaArray(0, (0, 3), "<f4")).shape == (0, 3)


def test_array_interface_object_is_host_memory() -> None:
    a = np.zeros(NCHW, ml_dtypes.bfloat16)

    class HostArray:
        def __init__(self) -> None:
            self.__array_interface__ = {**a.__array_interface__, "typestr": "<V2",
                                        "descr": [("bfloat16", "<V2")]}

    buf = interop.resolve(HostArray())
    assert (buf.ptr, buf.device, buf.dtype) == (a.ctypes.data, "cpu", DataType.BFLOAT16)
    interop.host_view(buf, tensor(data_type=DataType.BFLOAT16))[0, 1, 2, 3] = 1.5
    assert float(a[0, 1, 2, 3]) == 1.5
