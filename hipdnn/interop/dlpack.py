"""DLPack consumer in ctypes only: ``obj.__dlpack__()`` -> pointer, device, shape, strides, dtype.

Follows the DLPack Python protocol: ask for a versioned capsule (``max_version``), fall back
to the legacy one, take ownership by renaming the capsule to ``used_dltensor[_versioned]``,
and call the producer's deleter exactly once, when the returned ``owner`` is collected.
Struct layouts are those of ``dlpack.h`` (v1.x; ``DLTensor`` unchanged since v0.x).
:func:`read` describes an export without consuming it (remembered bindings re-read it on every
call).
"""

from __future__ import annotations

import ctypes
import struct
import weakref
from dataclasses import dataclass
from typing import Any

__all__ = [
    "GPU_DEVICES",
    "HOST_DEVICES",
    "DLDataType",
    "DLDevice",
    "DLManagedTensor",
    "DLManagedTensorVersioned",
    "DLPackError",
    "DLPackExport",
    "DLPackVersion",
    "DLTensor",
    "consume",
    "export",
    "read",
]

#: DLDeviceType values whose memory the host can address: kDLCPU, kDLCUDAHost, kDLROCMHost.
HOST_DEVICES: dict[int, str] = {1: "cpu", 3: "cpu", 11: "cpu"}
#: Device memory: kDLCUDA, kDLROCM, kDLCUDAManaged.
GPU_DEVICES: frozenset[int] = frozenset({2, 10, 13})
#: The DLPack version we ask for; any 1.x answer is understood.
MAX_VERSION = (1, 1)
_FLAG_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY


class DLPackError(Exception):
    """The object's ``__dlpack__`` export could not be consumed (message says why)."""


class DLDevice(ctypes.Structure):
    _fields_ = (("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32))


class DLDataType(ctypes.Structure):
    _fields_ = (("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16))


class DLTensor(ctypes.Structure):
    _fields_ = (
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    )


class DLManagedTensor(ctypes.Structure):
    _fields_ = (
        ("dl_tensor", DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),  # void (*)(DLManagedTensor*)
    )


class DLPackVersion(ctypes.Structure):
    _fields_ = (("major", ctypes.c_uint32), ("minor", ctypes.c_uint32))


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = (
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),  # void (*)(DLManagedTensorVersioned*)
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    )


# Own function objects (not ctypes.pythonapi's shared ones, whose argtypes others may set).
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi)
)
_capsule_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)
_capsule_set_name = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_void_p)(
    ("PyCapsule_SetName", ctypes.pythonapi)
)
# PyCapsule_SetName keeps the char* it is given: these buffers live as long as the module.
_USED_NAMES = {
    b"dltensor": ctypes.create_string_buffer(b"used_dltensor"),
    b"dltensor_versioned": ctypes.create_string_buffer(b"used_dltensor_versioned"),
}
# PYFUNCTYPE keeps the GIL held: producers' deleters may touch Python objects.
_DELETER = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)


def _release(deleter: int, managed: int) -> None:
    if deleter:
        _DELETER(deleter)(managed)


class _ManagedOwner:
    """Owns one consumed DLPack export; collecting it calls the producer's deleter once."""

    def __init__(self, managed: int, deleter: int) -> None:
        self.managed = managed
        self._finalizer = weakref.finalize(self, _release, deleter, managed)
        self._finalizer.atexit = False  # producers may be torn down at interpreter exit

    def release(self) -> None:
        """Call the deleter now (idempotent)."""
        self._finalizer()


@dataclass(frozen=True)
class DLPackExport:
    """What a consumed DLPack capsule says; ``owner`` must be kept while ``ptr`` is used."""

    ptr: int
    device_type: int
    device_id: int
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None  # elements; None = compact row-major
    code: int
    bits: int
    lanes: int
    readonly: bool
    version: tuple[int, int] | None  # None for a legacy (unversioned) capsule
    owner: Any


def _call_dlpack(obj: Any) -> Any:
    try:
        return obj.__dlpack__(max_version=MAX_VERSION)
    except TypeError:  # producers predating DLPack 1.0 take no max_version
        pass
    except Exception as exc:
        raise DLPackError(f"__dlpack__(max_version={MAX_VERSION}) failed: {exc}") from exc
    try:
        return obj.__dlpack__()
    except Exception as exc:
        raise DLPackError(f"__dlpack__() failed: {exc}") from exc


def export(obj: Any) -> DLPackExport:
    """Consume ``obj.__dlpack__()`` and describe the tensor it exports."""
    return consume(_call_dlpack(obj))


def consume(capsule: Any) -> DLPackExport:
    """Take ownership of a ``dltensor`` / ``dltensor_versioned`` capsule and describe it
    (DLPackError when ``capsule`` is not an unconsumed DLPack capsule)."""
    versioned = bool(_capsule_is_valid(capsule, b"dltensor_versioned"))
    name = b"dltensor_versioned" if versioned else b"dltensor"
    if not versioned and not _capsule_is_valid(capsule, name):
        raise DLPackError(
            f"__dlpack__ returned {capsule!r}, not an unconsumed 'dltensor' or "
            "'dltensor_versioned' capsule"
        )
    address = int(_capsule_get_pointer(capsule, name) or 0)
    if not address:
        raise DLPackError("__dlpack__ returned a capsule with a NULL pointer")
    struct: DLManagedTensorVersioned | DLManagedTensor
    struct = (DLManagedTensorVersioned if versioned else DLManagedTensor).from_address(address)
    # From here on we own the export: the producer's capsule destructor will skip it.
    _capsule_set_name(capsule, ctypes.addressof(_USED_NAMES[name]))
    owner = _ManagedOwner(address, int(struct.deleter or 0))
    version: tuple[int, int] | None = None
    readonly = False
    if isinstance(struct, DLManagedTensorVersioned):
        version = (int(struct.version.major), int(struct.version.minor))
        readonly = bool(struct.flags & _FLAG_READ_ONLY)
        if version[0] != 1:
            owner.release()
            raise DLPackError(f"DLPack version {version} is not supported (need 1.x)")
    t = struct.dl_tensor
    ndim = int(t.ndim)
    shape = tuple(int(t.shape[i]) for i in range(ndim)) if ndim else ()
    strides = tuple(int(t.strides[i]) for i in range(ndim)) if ndim and t.strides else None
    return DLPackExport(
        ptr=int(t.data or 0) + int(t.byte_offset),
        device_type=int(t.device.device_type),
        device_id=int(t.device.device_id),
        shape=shape,
        strides=strides,
        code=int(t.dtype.code),
        bits=int(t.dtype.bits),
        lanes=int(t.dtype.lanes),
        readonly=readonly,
        version=version,
        owner=owner,
    )


# ------------------------------------------------------------------- reading without consuming

#: The two managed structs above as ``struct`` layouts (native alignment, as C lays them out):
#: one unpack reads every field of an export instead of one ctypes attribute read per field.
_VERSIONED_LAYOUT = struct.Struct("@IIPPQPiiiBBHPPQ")  # version, ctx, deleter, flags, DLTensor
_LEGACY_LAYOUT = struct.Struct("@PiiiBBHPPQPP")  # DLTensor, ctx, deleter
_VERSIONED_BYTES = ctypes.c_char * _VERSIONED_LAYOUT.size
_LEGACY_BYTES = ctypes.c_char * _LEGACY_LAYOUT.size
_LAYOUTS_MATCH = (_VERSIONED_LAYOUT.size == ctypes.sizeof(DLManagedTensorVersioned)
                  and _LEGACY_LAYOUT.size == ctypes.sizeof(DLManagedTensor)
                  and DLManagedTensorVersioned.dl_tensor.offset == 32
                  and ctypes.sizeof(ctypes.c_void_p) == 8)
#: More dimensions than any producer makes: a larger ndim is a corrupt export.
MAX_NDIM = 64
#: Per ndim: the int64 array's bytes and its layout (shape and strides arrays).
_INT64S = [(ctypes.c_char * (8 * n), struct.Struct(f"@{n}q")) for n in range(MAX_NDIM + 1)]
Read = tuple[int, int, int, tuple[int, ...], "tuple[int, ...] | None", int, int, int, bool]


def read(obj: Any) -> Read:
    """``obj``'s export as (ptr, device_type, device_id, shape, strides, code, bits, lanes,
    readonly): the fields :func:`export` gives, with the same values, for reading what an
    object exports on every call rather than its memory.

    The capsule is read while it holds the export and is not consumed: dropping it on return
    runs the producer's capsule destructor, which the DLPack Python protocol requires to call
    the deleter of an unconsumed export (in C, cheaper than renaming and calling it from here).

    >>> import numpy as np
    >>> a = np.zeros((2, 3), np.float32)[:, ::2]
    >>> read(a)[3:] == ((2, 2), (3, 2), 2, 32, 1, False)
    True
    """
    if not _LAYOUTS_MATCH:  # pragma: no cover - 32-bit or unusual ABIs
        e = export(obj)
        try:
            return (e.ptr, e.device_type, e.device_id, e.shape, e.strides, e.code, e.bits,
                    e.lanes, e.readonly)
        finally:
            e.owner.release()
    capsule = _call_dlpack(obj)
    try:  # a wrong name (or not a capsule) makes PyCapsule_GetPointer raise ValueError
        address = _capsule_get_pointer(capsule, b"dltensor_versioned")
        versioned = True
    except ValueError:
        try:
            address = _capsule_get_pointer(capsule, b"dltensor")
        except ValueError:
            raise DLPackError(f"__dlpack__ returned {capsule!r}, not an unconsumed 'dltensor' "
                              "or 'dltensor_versioned' capsule") from None
        versioned = False
    if not address:
        raise DLPackError("__dlpack__ returned a capsule with a NULL pointer")
    if versioned:
        (major, minor, _, _, flags, data, device_type, device_id, ndim, code, bits, lanes,
         shape_at, strides_at, offset) = _VERSIONED_LAYOUT.unpack_from(
            _VERSIONED_BYTES.from_address(address))
        if major != 1:
            raise DLPackError(f"DLPack version {(major, minor)} is not supported (need 1.x)")
    else:
        (data, device_type, device_id, ndim, code, bits, lanes, shape_at, strides_at, offset, _,
         _) = _LEGACY_LAYOUT.unpack_from(_LEGACY_BYTES.from_address(address))
        flags = 0
    if not 0 <= ndim <= MAX_NDIM:
        raise DLPackError(f"the export has ndim {ndim}; valid: 0-{MAX_NDIM}")
    if ndim:
        if not shape_at:
            raise DLPackError(f"the export has ndim {ndim} and a NULL shape")
        raw, layout = _INT64S[ndim]
        shape = layout.unpack_from(raw.from_address(shape_at))
        strides = layout.unpack_from(raw.from_address(strides_at)) if strides_at else None
    else:
        shape, strides = (), None
    return ((data or 0) + offset, device_type, device_id, shape, strides, code, bits, lanes,
            bool(flags & _FLAG_READ_ONLY))
