"""DLPack consumer in ctypes only: ``obj.__dlpack__()`` -> pointer, device, shape, strides, dtype.

Follows the DLPack Python protocol: ask for a versioned capsule (``max_version``), fall back
to the legacy one, take ownership by renaming the capsule to ``used_dltensor[_versioned]``,
and call the producer's deleter exactly once, when the returned ``owner`` is collected.
Struct layouts are those of ``dlpack.h`` (v1.x; ``DLTensor`` unchanged since v0.x).
"""

from __future__ import annotations

import ctypes
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
