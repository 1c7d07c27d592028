"""Owning wrappers for MIOpen descriptors and objects, freed deterministically.

Every wrapper holds one C handle and a ``weakref.finalize`` that destroys it exactly once: on
``close()``, when collected, never at interpreter shutdown (the runtime may already be gone).
A :class:`Resources` stack owns a plan's objects and frees them in reverse creation order.
"""

from __future__ import annotations

import ctypes
import sys
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Protocol, TypeVar

from hipdnn.core.errors import PlanClosedError
from hipdnn.core.types import DataType
from hipdnn.engines.miopen.runtime import CHandle
from miopen_ctypes.enums import (
    miopenBatchNormMode_t,
    miopenConvolutionAttrib_t,
    miopenConvolutionMode_t,
    miopenDataType_t,
)
from miopen_ctypes.loader import MIOpenLibrary
from miopen_ctypes.types import (
    miopenActivationDescriptor_t,
    miopenConvolutionDescriptor_t,
    miopenTensorDescriptor_t,
)

__all__ = [
    "ActivationDesc",
    "Closable",
    "ConvDesc",
    "Owned",
    "Resources",
    "TensorDesc",
    "bn_param_desc",
    "miopen_dtype",
]

_MIOPEN_DTYPES = {
    DataType.FLOAT: miopenDataType_t.miopenFloat,
    DataType.HALF: miopenDataType_t.miopenHalf,
    DataType.BFLOAT16: miopenDataType_t.miopenBFloat16,
}


def miopen_dtype(dt: DataType) -> miopenDataType_t:
    """hipdnn DataType -> miopenDataType_t (FLOAT, HALF, BFLOAT16)."""
    try:
        return _MIOPEN_DTYPES[DataType(dt)]
    except KeyError:
        raise ValueError(f"data type {DataType(dt).name} has no MIOpen equivalent here; "
                         "FLOAT, HALF, BFLOAT16 are supported") from None


def _destroy(lib: MIOpenLibrary, function: str, handle: CHandle) -> None:
    """Finalizer body: destroy once; silent at shutdown or when the library refuses."""
    if sys.is_finalizing():
        return
    try:
        getattr(lib, function)(handle)
    except Exception:  # a finalizer must never raise
        pass


class Owned:
    """One C object: ``handle`` until :meth:`close`; ``destroy`` names the C destructor."""

    kind = "object"

    def __init__(self, lib: MIOpenLibrary, handle: CHandle, destroy: str) -> None:
        self._handle = handle
        #: The C handle without the liveness check, for plans' execute paths: a plan's objects
        #: are closed only by the plan's close(), after which execute() refuses to run.
        self.raw = handle
        self._finalizer = weakref.finalize(self, _destroy, lib, destroy, handle)
        self._finalizer.atexit = False

    @property
    def handle(self) -> CHandle:
        """The C handle; raises :class:`PlanClosedError` once closed."""
        if not self._finalizer.alive:
            raise PlanClosedError(f"MIOpen {self.kind} used after it was destroyed (its plan or "
                                  "its hipdnn.Handle was closed)")
        return self._handle

    @property
    def alive(self) -> bool:
        """False once destroyed."""
        return self._finalizer.alive

    def close(self) -> None:
        """Destroy the C object now (idempotent)."""
        self._finalizer()

    @contextmanager
    def _setting(self) -> Iterator[None]:
        """Around the calls that set a just-created object: when one fails, the object is
        destroyed at once, not when the half-made Python object is collected (the raised error's
        traceback holds it for as long as the caller keeps the error)."""
        try:
            yield
        except BaseException:
            self.close()
            raise


def _create(lib: MIOpenLibrary, create: str, handle_type: type[CHandle]) -> CHandle:
    handle = handle_type()
    getattr(lib, create)(ctypes.byref(handle))
    return handle


class TensorDesc(Owned):
    """``miopenTensorDescriptor_t`` from dims + strides (``miopenSetTensorDescriptorV2`` when
    exported, else ``miopenSetTensorDescriptor``). Dims are logical N,C,(D),H,W."""

    kind = "tensor descriptor"

    def __init__(self, lib: MIOpenLibrary, dtype: DataType, dims: Sequence[int], strides: Sequence[int]) -> None:
        handle = _create(lib, "miopenCreateTensorDescriptor", miopenTensorDescriptor_t)
        super().__init__(lib, handle, "miopenDestroyTensorDescriptor")
        self.dims, self.strides, self.dtype = tuple(dims), tuple(strides), DataType(dtype)
        n = len(self.dims)
        with self._setting():
            if lib.capabilities.has("miopenSetTensorDescriptorV2"):
                arr = ctypes.c_size_t * n
                lib.miopenSetTensorDescriptorV2(handle, miopen_dtype(dtype), n, arr(*self.dims),
                                                arr(*self.strides))
            else:
                iarr = ctypes.c_int * n
                lib.miopenSetTensorDescriptor(handle, miopen_dtype(dtype), n, iarr(*self.dims),
                                              iarr(*self.strides))

    @property
    def nbytes(self) -> int:
        """Bytes a packed tensor of this descriptor covers."""
        span = 1 + sum((d - 1) * s for d, s in zip(self.dims, self.strides, strict=False))
        return span * self.dtype.itemsize


def bn_param_desc(lib: MIOpenLibrary, x_desc: TensorDesc) -> TensorDesc:
    """FP32 per-channel descriptor (1,C,1,1[,1]) via ``miopenDeriveBNTensorDescriptor``."""
    desc = TensorDesc.__new__(TensorDesc)
    handle = _create(lib, "miopenCreateTensorDescriptor", miopenTensorDescriptor_t)
    Owned.__init__(desc, lib, handle, "miopenDestroyTensorDescriptor")
    with desc._setting():
        lib.miopenDeriveBNTensorDescriptor(handle, x_desc.handle,
                                           miopenBatchNormMode_t.miopenBNSpatial)
    desc.dims = (1, x_desc.dims[1]) + (1,) * (len(x_desc.dims) - 2)
    desc.strides = (x_desc.dims[1],) + (1,) * (len(x_desc.dims) - 1)
    desc.dtype = DataType.FLOAT
    return desc


class ConvDesc(Owned):
    """Cross-correlation ``miopenConvolutionDescriptor_t`` (Nd init, then group count if > 1,
    then MIOpen's deterministic attribute when asked)."""

    kind = "convolution descriptor"

    def __init__(self, lib: MIOpenLibrary, padding: Sequence[int], stride: Sequence[int],
                 dilation: Sequence[int], groups: int, deterministic: bool = False) -> None:
        handle = _create(lib, "miopenCreateConvolutionDescriptor", miopenConvolutionDescriptor_t)
        super().__init__(lib, handle, "miopenDestroyConvolutionDescriptor")
        n = len(padding)
        arr = ctypes.c_int * n
        with self._setting():
            lib.miopenInitConvolutionNdDescriptor(handle, n, arr(*padding), arr(*stride),
                                                  arr(*dilation),
                                                  miopenConvolutionMode_t.miopenConvolution)
            if groups != 1:
                lib.miopenSetConvolutionGroupCount(handle, int(groups))
            if deterministic:  # MIOpen then applies only solvers with reproducible results
                lib.miopenSetConvolutionAttribute(
                    handle, miopenConvolutionAttrib_t.MIOPEN_CONVOLUTION_ATTRIB_DETERMINISTIC, 1)


class ActivationDesc(Owned):
    """``miopenActivationDescriptor_t`` set to (mode, alpha, beta, gamma)."""

    kind = "activation descriptor"

    def __init__(self, lib: MIOpenLibrary, mode: int, alpha: float, beta: float, gamma: float) -> None:
        handle = _create(lib, "miopenCreateActivationDescriptor", miopenActivationDescriptor_t)
        super().__init__(lib, handle, "miopenDestroyActivationDescriptor")
        with self._setting():
            lib.miopenSetActivationDescriptor(handle, int(mode), float(alpha), float(beta),
                                              float(gamma))


class Closable(Protocol):
    """What :class:`Resources` owns: an :class:`Owned`, a nested stack, a device block."""

    def close(self) -> None: ...


_C = TypeVar("_C", bound=Closable)


class Resources:
    """A plan's owned objects; :meth:`close` frees them newest first, each exactly once."""

    def __init__(self) -> None:
        self._items: list[Closable] = []

    def add(self, item: _C) -> _C:
        """Take ownership of ``item`` (an :class:`Owned` or anything with ``close()``)."""
        self._items.append(item)
        return item

    def close(self) -> None:
        """Free everything (reverse order); errors in one destructor do not skip the others."""
        while True:
            try:
                item = self._items.pop()
            except IndexError:  # empty (another thread may be closing the same stack)
                return
            try:
                item.close()
            except Exception:
                pass

    def owned(self) -> tuple[Owned, ...]:
        """The live MIOpen objects held, oldest first, nested stacks (a fusion plan's) flattened."""
        out: list[Owned] = []
        for item in self._items:
            if isinstance(item, Resources):
                out.extend(item.owned())
            elif isinstance(item, Owned) and item.alive:
                out.append(item)
        return tuple(out)

    def __len__(self) -> int:
        return len(self._items)
