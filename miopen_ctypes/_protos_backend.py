"""PROTOTYPES of MIOpen's own graph API (``miopenBackend*``, beta) and the MHA operator of Find 2.0.

Part of the one prototype table (``prototypes.PROTOTYPES``); same conventions as prototypes.py.
The backend API is cuDNN's backend API under MIOpen names: every object is a
``miopenBackendDescriptor_t`` whose kind is a ``miopenBackendDescriptorType_t``; attributes are
set and read as arrays of the C type that ``miopenBackendAttributeType_t`` names
(``arrayOfElements`` is ``void*``: pass ``byref(x)`` or an array).
"""

from __future__ import annotations

from ctypes import POINTER, c_float, c_int64, c_size_t, c_void_p
from functools import partial

from ._proto import V3_4, declare
from .types import (
    c_enum,
    miopenBackendDescriptor_t,
    miopenHandle_t,
    miopenMhaDescriptor_t,
    miopenProblem_t,
)

__all__ = ["BACKEND", "MHA"]

_fn = partial(declare, since=V3_4, restype=c_enum)
_beta = partial(declare, since=V3_4, restype=c_enum, beta=True)

_Desc = miopenBackendDescriptor_t

MHA = (
    _fn("miopenCreateMhaProblem",
        ("problem", POINTER(miopenProblem_t)), ("operatorDesc", miopenMhaDescriptor_t),
        ("direction", c_enum)),
    _fn("miopenCreateMhaDescriptor", ("mhaDesc", POINTER(miopenMhaDescriptor_t))),
    _fn("miopenSetMhaDescriptor", ("mhaDesc", miopenMhaDescriptor_t), ("scale", c_float)),
    _fn("miopenGetMhaDescriptor", ("mhaDesc", miopenMhaDescriptor_t), ("scale", POINTER(c_float))),
)

BACKEND = (
    _beta("miopenBackendCreateDescriptor",
          ("descriptorType", c_enum), ("descriptor", POINTER(_Desc))),
    _beta("miopenBackendSetAttribute",
          ("descriptor", _Desc), ("attributeName", c_enum), ("attributeType", c_enum),
          ("elementCount", c_int64), ("arrayOfElements", c_void_p)),
    _beta("miopenBackendFinalize", ("descriptor", _Desc)),
    _beta("miopenBackendGetAttribute",
          ("descriptor", _Desc), ("attributeName", c_enum), ("attributeType", c_enum),
          ("requestedElementCount", c_int64), ("elementCount", POINTER(c_int64)),
          ("arrayOfElements", c_void_p)),
    _beta("miopenBackendExecute",
          ("handle", miopenHandle_t), ("executionPlan", _Desc), ("variantPack", _Desc)),
    _beta("miopenBackendDestroyDescriptor", ("descriptor", _Desc)),
    # Initializes caller-owned memory of sizeInBytes as a descriptor (instead of Create).
    _beta("miopenBackendInitialize",
          ("descriptor", _Desc), ("descriptorType", c_enum), ("sizeInBytes", c_size_t)),
)
