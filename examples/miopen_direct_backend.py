"""Calling MIOpen directly: MIOpen's own graph API, miopenBackend* (docs/MIOPEN_DIRECT.md).

    python examples/miopen_direct_backend.py

Needs libMIOpen (no GPU). Makes a backend tensor descriptor, sets its attributes as arrays of the
C type each attribute type names, finalizes it and reads them back; lists which descriptor kinds
this MIOpen creates (the others are refused with miopenStatusUnsupportedOp, a typed error).
"""

from __future__ import annotations

import ctypes
from ctypes import byref, c_int64, c_uint

import miopen_ctypes
from miopen_ctypes import types as mt
from miopen_ctypes.enums import (
    miopenBackendAttributeName_t as Attr,
)
from miopen_ctypes.enums import (
    miopenBackendAttributeType_t as Type,
)
from miopen_ctypes.enums import (
    miopenBackendDescriptorType_t as Kind,
)
from miopen_ctypes.enums import miopenDataType_t


def main() -> int:
    lib = miopen_ctypes.load()
    made = []
    for kind in Kind:
        desc = mt.miopenBackendDescriptor_t()
        try:
            lib.miopenBackendCreateDescriptor(kind, byref(desc))
        except miopen_ctypes.errors.MIOpenUnsupportedOpError:
            continue
        made.append(kind.name.removeprefix("MIOPEN_BACKEND_").removesuffix("_DESCRIPTOR"))
        lib.miopenBackendDestroyDescriptor(desc)
    print(f"descriptor kinds MIOpen {'.'.join(map(str, lib.version))} creates: {', '.join(made)}")

    tensor = mt.miopenBackendDescriptor_t()
    lib.miopenBackendCreateDescriptor(Kind.MIOPEN_BACKEND_TENSOR_DESCRIPTOR, byref(tensor))
    try:
        def put(name: Attr, kind: Type, values: list[int], ctype: type) -> None:
            lib.miopenBackendSetAttribute(tensor, name, kind, len(values), (ctype * len(values))(*values))

        put(Attr.MIOPEN_ATTR_TENSOR_DATA_TYPE, Type.MIOPEN_TYPE_DATA_TYPE, [miopenDataType_t.miopenFloat], c_uint)
        put(Attr.MIOPEN_ATTR_TENSOR_DIMENSIONS, Type.MIOPEN_TYPE_INT64, [2, 3, 4, 5], c_int64)
        put(Attr.MIOPEN_ATTR_TENSOR_STRIDES, Type.MIOPEN_TYPE_INT64, [60, 20, 5, 1], c_int64)
        put(Attr.MIOPEN_ATTR_TENSOR_UNIQUE_ID, Type.MIOPEN_TYPE_INT64, [1], c_int64)
        lib.miopenBackendFinalize(tensor)
        dims, count = (c_int64 * 4)(), c_int64()
        lib.miopenBackendGetAttribute(tensor, Attr.MIOPEN_ATTR_TENSOR_DIMENSIONS, Type.MIOPEN_TYPE_INT64, 4,
                                      byref(count), ctypes.cast(dims, ctypes.c_void_p))
    finally:
        lib.miopenBackendDestroyDescriptor(tensor)
    ok = list(dims)[: count.value] == [2, 3, 4, 5] and "TENSOR" in made and "OPERATIONGRAPH" in made
    print(f"tensor dims read back after finalize: {list(dims)[: count.value]} -> {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
