"""C types of MIOpen's API: one opaque pointer type per handle kind, the structs, scalar aliases.

Every ``MIOPEN_DECLARE_OBJECT(name)`` of ``miopen.h`` (``struct name {}; typedef struct name*
name_t;``) becomes a distinct ``POINTER(<empty Structure>)``, so a tensor descriptor passed where a
convolution descriptor belongs is a ``ctypes.ArgumentError``, not a crash on the GPU::

    >>> from ctypes import byref
    >>> desc = miopenTensorDescriptor_t()          # NULL until miopenCreateTensorDescriptor fills it
    >>> bool(desc)
    False

Structs are laid out exactly as in ``miopen.h`` (checked against the 3.4 and 3.5 headers; sizes and
offsets are asserted in the unit tests and by the conformance tests).
"""

from __future__ import annotations

import ctypes
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    Union,
    c_float,
    c_size_t,
    c_uint,
    c_uint64,
    c_void_p,
)
from typing import Any

__all__ = [
    "HANDLE_TYPES",
    "c_enum",
    "hipStream_t",
    "miopenActivationDescriptor",
    "miopenActivationDescriptor_t",
    "miopenAllocatorFunction",
    "miopenBackendDescriptor",
    "miopenBackendDescriptor_t",
    "miopenCTCLossDescriptor",
    "miopenCTCLossDescriptor_t",
    "miopenConvAlgoPerf_t",
    "miopenConvSolution_t",
    "miopenConvolutionDescriptor",
    "miopenConvolutionDescriptor_t",
    "miopenDeallocatorFunction",
    "miopenDropoutDescriptor",
    "miopenDropoutDescriptor_t",
    "miopenFindOptions",
    "miopenFindOptions_t",
    "miopenFusionOpDescriptor",
    "miopenFusionOpDescriptor_t",
    "miopenFusionPlanDescriptor",
    "miopenFusionPlanDescriptor_t",
    "miopenHandle",
    "miopenHandle_t",
    "miopenLRNDescriptor",
    "miopenLRNDescriptor_t",
    "miopenMhaDescriptor",
    "miopenMhaDescriptor_t",
    "miopenOperatorArgs",
    "miopenOperatorArgs_t",
    "miopenOperatorDescriptor",
    "miopenOperatorDescriptor_t",
    "miopenPoolingDescriptor",
    "miopenPoolingDescriptor_t",
    "miopenProblem",
    "miopenProblem_t",
    "miopenRNNDescriptor",
    "miopenRNNDescriptor_t",
    "miopenReduceTensorDescriptor",
    "miopenReduceTensorDescriptor_t",
    "miopenSeqTensorDescriptor",
    "miopenSeqTensorDescriptor_t",
    "miopenSoftmaxDescriptor",
    "miopenSoftmaxDescriptor_t",
    "miopenSolution",
    "miopenSolution_t",
    "miopenTensorArgument_t",
    "miopenTensorDescriptor",
    "miopenTensorDescriptor_t",
    "pointer_value",
]

# Every enum of miopen.h: 4 bytes, and unsigned with GCC/Clang on Linux because no member is
# negative (miopenTensorArgumentId_t even uses 0x80000000+). MSVC uses int: same size and ABI.
c_enum = c_uint

# miopenAcceleratorQueue_t is hipStream_t (``struct ihipStream_t*``). Streams arrive from other
# libraries (PyTorch, hip-python) as integers, so they stay untyped ``void*`` here.
hipStream_t = c_void_p


def _opaque(struct_name: str) -> tuple[type[Structure], Any]:
    """``struct name {}`` and its pointer typedef ``name_t``: a distinct ctypes pointer type."""
    struct = type(struct_name, (Structure,), {"_fields_": []})
    handle: Any = POINTER(struct)
    handle.__name__ = struct_name + "_t"
    handle.__qualname__ = struct_name + "_t"
    return struct, handle


miopenHandle, miopenHandle_t = _opaque("miopenHandle")
miopenTensorDescriptor, miopenTensorDescriptor_t = _opaque("miopenTensorDescriptor")
miopenConvolutionDescriptor, miopenConvolutionDescriptor_t = _opaque("miopenConvolutionDescriptor")
miopenActivationDescriptor, miopenActivationDescriptor_t = _opaque("miopenActivationDescriptor")
miopenFusionPlanDescriptor, miopenFusionPlanDescriptor_t = _opaque("miopenFusionPlanDescriptor")
# The header declares miopenFusionOpDescriptor (the type fusion ops are created as).
miopenFusionOpDescriptor, miopenFusionOpDescriptor_t = _opaque("miopenFusionOpDescriptor")
miopenOperatorArgs, miopenOperatorArgs_t = _opaque("miopenOperatorArgs")
miopenProblem, miopenProblem_t = _opaque("miopenProblem")
miopenFindOptions, miopenFindOptions_t = _opaque("miopenFindOptions")
miopenSolution, miopenSolution_t = _opaque("miopenSolution")
miopenSeqTensorDescriptor, miopenSeqTensorDescriptor_t = _opaque("miopenSeqTensorDescriptor")
miopenPoolingDescriptor, miopenPoolingDescriptor_t = _opaque("miopenPoolingDescriptor")
miopenLRNDescriptor, miopenLRNDescriptor_t = _opaque("miopenLRNDescriptor")
miopenRNNDescriptor, miopenRNNDescriptor_t = _opaque("miopenRNNDescriptor")
miopenCTCLossDescriptor, miopenCTCLossDescriptor_t = _opaque("miopenCTCLossDescriptor")
miopenDropoutDescriptor, miopenDropoutDescriptor_t = _opaque("miopenDropoutDescriptor")
miopenReduceTensorDescriptor, miopenReduceTensorDescriptor_t = _opaque("miopenReduceTensorDescriptor")
miopenMhaDescriptor, miopenMhaDescriptor_t = _opaque("miopenMhaDescriptor")
miopenSoftmaxDescriptor, miopenSoftmaxDescriptor_t = _opaque("miopenSoftmaxDescriptor")
# Declared by the header for the fusion API; no exported function takes one.
miopenOperatorDescriptor, miopenOperatorDescriptor_t = _opaque("miopenOperatorDescriptor")
# The backend (graph) API's one handle kind; miopenBackendDescriptorType_t says what it holds.
miopenBackendDescriptor, miopenBackendDescriptor_t = _opaque("miopenBackendDescriptor")

#: Every handle kind bound here (the loader rejects NULL for these unless the header allows it).
HANDLE_TYPES: tuple[Any, ...] = (
    miopenHandle_t,
    miopenTensorDescriptor_t,
    miopenConvolutionDescriptor_t,
    miopenActivationDescriptor_t,
    miopenFusionPlanDescriptor_t,
    miopenFusionOpDescriptor_t,
    miopenOperatorArgs_t,
    miopenProblem_t,
    miopenFindOptions_t,
    miopenSolution_t,
    miopenSeqTensorDescriptor_t,
    miopenPoolingDescriptor_t,
    miopenLRNDescriptor_t,
    miopenRNNDescriptor_t,
    miopenCTCLossDescriptor_t,
    miopenDropoutDescriptor_t,
    miopenReduceTensorDescriptor_t,
    miopenMhaDescriptor_t,
    miopenSoftmaxDescriptor_t,
    miopenOperatorDescriptor_t,
    miopenBackendDescriptor_t,
)

#: ``typedef void* (*miopenAllocatorFunction)(void* context, size_t sizeBytes);``
miopenAllocatorFunction = CFUNCTYPE(c_void_p, c_void_p, c_size_t)
#: ``typedef void (*miopenDeallocatorFunction)(void* context, void* memory);``
miopenDeallocatorFunction = CFUNCTYPE(None, c_void_p, c_void_p)


class _ConvAlgoUnion(Union):
    """The anonymous union at the head of miopenConvAlgoPerf_t (three 4-byte enums)."""

    _fields_ = [
        ("fwd_algo", c_enum),  # miopenConvFwdAlgorithm_t
        ("bwd_weights_algo", c_enum),  # miopenConvBwdWeightsAlgorithm_t
        ("bwd_data_algo", c_enum),  # miopenConvBwdDataAlgorithm_t
    ]


class miopenConvAlgoPerf_t(Structure):
    """Find 1.0 result: ``{union {fwd_algo; bwd_weights_algo; bwd_data_algo;}; float time;
    size_t memory;}`` -- 16 bytes on LP64 (union @0, time @4, memory @8).

    The union is anonymous in C, so ``perf.fwd_algo`` reads it directly.
    """

    _anonymous_ = ("_algo",)
    _fields_ = [
        ("_algo", _ConvAlgoUnion),
        ("time", c_float),
        ("memory", c_size_t),
    ]


class miopenConvSolution_t(Structure):
    """Immediate-mode solution: ``{float time; size_t workspace_size; uint64_t solution_id;
    miopenConvAlgorithm_t algorithm;}`` -- 32 bytes (offsets 0, 8, 16, 24)."""

    _fields_ = [
        ("time", c_float),
        ("workspace_size", c_size_t),
        ("solution_id", c_uint64),
        ("algorithm", c_enum),
    ]


class miopenTensorArgument_t(Structure):
    """``struct miopenTensorArgument_t {miopenTensorArgumentId_t id; miopenTensorDescriptor_t*
    descriptor; void* buffer;}`` -- 24 bytes (offsets 0, 8, 16); an array of these feeds
    miopenRunSolution. ``descriptor`` may be NULL (no override); for scalar ids (bit 31 set)
    ``buffer`` points to host memory holding the value."""

    _fields_ = [
        ("id", c_enum),
        ("descriptor", POINTER(miopenTensorDescriptor_t)),
        ("buffer", c_void_p),
    ]


def pointer_value(handle: Any) -> int:
    """The address held by a handle (0 for NULL); works for any ctypes pointer or ``c_void_p``."""
    return ctypes.cast(handle, c_void_p).value or 0
