"""Element-type mappings between hipdnn's :class:`DataType` and numpy, torch and DLPack.

torch is never imported to map *from* a torch dtype (dtypes are matched by name); only
:func:`dtype_to_torch` imports it. ``ml_dtypes`` (bfloat16 and the FP8 types in numpy; about a
second to import) is imported the first time one of its types is asked for or met, so
``import hipdnn`` does not pay for it. Only the DataType members the graph layer defines take part.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

import numpy as np

from hipdnn.core.errors import VariantPackError
from hipdnn.core.types import DataType

__all__ = [
    "dlpack_to_dtype",
    "dtype_to_numpy",
    "dtype_to_torch",
    "numpy_to_dtype",
    "torch_to_dtype",
]

_NUMPY_BY_NAME: dict[str, Any] = {
    "FLOAT": np.float32,
    "HALF": np.float16,
    "DOUBLE": np.float64,
    "UINT8": np.uint8,
    "INT32": np.int32,
    "INT8": np.int8,
    "INT64": np.int64,
    "BOOLEAN": np.bool_,
}
#: DataType name -> the ml_dtypes attribute holding its numpy scalar type (imported lazily).
_ML_DTYPES_BY_NAME: dict[str, str] = {
    "BFLOAT16": "bfloat16",
    "FP8_E4M3": "float8_e4m3fn",
    "FP8_E5M2": "float8_e5m2",
    "FP8_E8M0": "float8_e8m0fnu",  # ml_dtypes >= 0.5
    "FP8_E4M3_FNUZ": "float8_e4m3fnuz",
    "FP8_E5M2_FNUZ": "float8_e5m2fnuz",
}
_TORCH_BY_NAME: dict[str, str] = {
    "FLOAT": "float32",
    "HALF": "float16",
    "BFLOAT16": "bfloat16",
    "DOUBLE": "float64",
    "UINT8": "uint8",
    "INT32": "int32",
    "INT8": "int8",
    "INT64": "int64",
    "BOOLEAN": "bool",
    "FP8_E4M3": "float8_e4m3fn",
    "FP8_E5M2": "float8_e5m2",
    "FP8_E8M0": "float8_e8m0fnu",
    "FP8_E4M3_FNUZ": "float8_e4m3fnuz",
    "FP8_E5M2_FNUZ": "float8_e5m2fnuz",
}
# Only the DataType members the graph layer defines take part in the mappings.
_TO_NUMPY: dict[DataType, np.dtype[Any]] = {
    dt: np.dtype(_NUMPY_BY_NAME[dt.name]) for dt in DataType if dt.name in _NUMPY_BY_NAME
}
_FROM_NUMPY: dict[np.dtype[Any], DataType] = {v: k for k, v in _TO_NUMPY.items()}
_ml_lock = threading.Lock()
_FROM_TORCH: dict[str, DataType] = {
    f"torch.{_TORCH_BY_NAME[dt.name]}": dt
    for dt in DataType if dt.name in _TORCH_BY_NAME
    and (dt.name in _NUMPY_BY_NAME or dt.name in _ML_DTYPES_BY_NAME)
}


@functools.cache
def _with_ml_dtypes() -> None:
    """Add the ml_dtypes types to the numpy mappings (once; the first caller imports ml_dtypes)."""
    import ml_dtypes  # noqa: PLC0415 (about a second to import: only when its types are needed)

    with _ml_lock:
        for dt in DataType:
            scalar = getattr(ml_dtypes, _ML_DTYPES_BY_NAME.get(dt.name, ""), None)
            if scalar is not None and dt not in _TO_NUMPY:
                _TO_NUMPY[dt] = np.dtype(scalar)
                _FROM_NUMPY[np.dtype(scalar)] = dt

# (code, bits, lanes) -> DataType; kDLInt=0, kDLUInt=1, kDLFloat=2, kDLBfloat=4, kDLBool=6,
# kDLFloat8_e4m3fn=10, kDLFloat8_e4m3fnuz=11, kDLFloat8_e5m2=12, kDLFloat8_e5m2fnuz=13,
# kDLFloat8_e8m0fnu=14 (as torch exports them).
_DLPACK_BY_NAME = {
    "FLOAT": (2, 32), "HALF": (2, 16), "BFLOAT16": (4, 16), "DOUBLE": (2, 64),
    "UINT8": (1, 8), "INT32": (0, 32), "INT8": (0, 8), "INT64": (0, 64), "BOOLEAN": (6, 8),
    "FP8_E4M3": (10, 8), "FP8_E5M2": (12, 8), "FP8_E8M0": (14, 8), "FP8_E4M3_FNUZ": (11, 8),
    "FP8_E5M2_FNUZ": (13, 8),
}
_DLPACK_DTYPES: dict[tuple[int, int, int], DataType] = {
    (*_DLPACK_BY_NAME[dt.name], 1): dt for dt in DataType if dt.name in _DLPACK_BY_NAME
}


def dtype_to_numpy(data_type: DataType) -> np.dtype[Any]:
    """numpy dtype for a :class:`DataType` (``BFLOAT16`` -> ``ml_dtypes.bfloat16``)."""
    try:
        found = _TO_NUMPY.get(DataType(data_type))
        if found is None:
            _with_ml_dtypes()
            found = _TO_NUMPY[DataType(data_type)]
        return found
    except (KeyError, ValueError):
        valid = ", ".join(dt.name for dt in _TO_NUMPY)
        raise VariantPackError(
            f"data type {data_type!r} has no numpy equivalent; valid: {valid}"
        ) from None


def numpy_to_dtype(dtype: Any) -> DataType:
    """:class:`DataType` for a numpy dtype (or anything ``np.dtype`` accepts)."""
    np_dtype = np.dtype(dtype)
    key = np_dtype.newbyteorder("=") if np_dtype.isnative else np_dtype
    found = _FROM_NUMPY.get(key)
    if found is None:
        _with_ml_dtypes()  # a bfloat16/FP8 array (or an unsupported dtype: the message lists all)
        found = _FROM_NUMPY.get(key)
    if found is None:
        valid = ", ".join(str(d) for d in _FROM_NUMPY)
        raise VariantPackError(f"numpy dtype {np_dtype} is not supported; valid: {valid}")
    return found


def torch_to_dtype(torch_dtype: Any) -> DataType:
    """:class:`DataType` for a ``torch.dtype``, matched by name (torch is not imported)."""
    found = _FROM_TORCH.get(str(torch_dtype))
    if found is None:
        valid = ", ".join(_FROM_TORCH)
        raise VariantPackError(f"torch dtype {torch_dtype} is not supported; valid: {valid}")
    return found


def dtype_to_torch(data_type: DataType) -> Any:
    """``torch.dtype`` for a :class:`DataType` (imports torch on first use)."""
    import torch  # noqa: PLC0415 (optional dependency, imported when used)

    name = _TORCH_BY_NAME.get(DataType(data_type).name)
    if name is None or not hasattr(torch, name):
        raise VariantPackError(f"data type {data_type!r} has no torch equivalent")
    return getattr(torch, name)



def dlpack_to_dtype(code: int, bits: int, lanes: int) -> DataType:
    """:class:`DataType` for a DLPack ``DLDataType`` (code, bits, lanes)."""
    found = _DLPACK_DTYPES.get((code, bits, lanes))
    if found is None:
        valid = ", ".join(f"{dt.name}={key}" for key, dt in _DLPACK_DTYPES.items())
        raise VariantPackError(
            f"DLPack dtype (code={code}, bits={bits}, lanes={lanes}) is not supported; "
            f"valid (code, bits, lanes): {valid}"
        )
    return found
