"""PROTOTYPES of the classic layer families: pooling, LRN, softmax, dropout, CTC loss, reductions.

Part of the one prototype table (``prototypes.PROTOTYPES`` joins the family tables); same
conventions as prototypes.py. None of these is beta API except ``miopenCreateSoftmaxProblem``.
"""

from __future__ import annotations

from ctypes import (
    POINTER,
    c_bool,
    c_double,
    c_float,
    c_int,
    c_size_t,
    c_uint,
    c_ulonglong,
    c_void_p,
)
from functools import partial

from ._proto import V3_4, declare
from .types import (
    c_enum,
    miopenCTCLossDescriptor_t,
    miopenDropoutDescriptor_t,
    miopenHandle_t,
    miopenLRNDescriptor_t,
    miopenPoolingDescriptor_t,
    miopenProblem_t,
    miopenReduceTensorDescriptor_t,
    miopenSoftmaxDescriptor_t,
    miopenTensorDescriptor_t,
)

__all__ = ["CTC_LOSS", "DROPOUT", "LRN", "POOLING", "REDUCE_TENSOR", "SOFTMAX"]

_fn = partial(declare, since=V3_4, restype=c_enum)

_Pool = miopenPoolingDescriptor_t
_Tensor = miopenTensorDescriptor_t

POOLING = (
    _fn("miopenCreatePoolingDescriptor", ("poolDesc", POINTER(_Pool))),
    _fn("miopenSetPoolingIndexType", ("poolDesc", _Pool), ("index_type", c_enum)),
    _fn("miopenGetPoolingIndexType", ("poolDesc", _Pool), ("index_type", POINTER(c_enum))),
    _fn("miopenSetPoolingWorkSpaceIndexMode", ("poolDesc", _Pool), ("workspace_index", c_enum)),
    _fn("miopenGetPoolingWorkSpaceIndexMode",
        ("poolDesc", _Pool), ("workspace_index", POINTER(c_enum))),
    _fn("miopenSet2dPoolingDescriptor",
        ("poolDesc", _Pool), ("mode", c_enum), ("windowHeight", c_int), ("windowWidth", c_int),
        ("pad_h", c_int), ("pad_w", c_int), ("stride_h", c_int), ("stride_w", c_int)),
    _fn("miopenGet2dPoolingDescriptor",
        ("poolDesc", _Pool), ("mode", POINTER(c_enum)), ("windowHeight", POINTER(c_int)),
        ("windowWidth", POINTER(c_int)), ("pad_h", POINTER(c_int)), ("pad_w", POINTER(c_int)),
        ("stride_h", POINTER(c_int)), ("stride_w", POINTER(c_int))),
    _fn("miopenGetPoolingForwardOutputDim",
        ("poolDesc", _Pool), ("tensorDesc", _Tensor), ("n", POINTER(c_int)), ("c", POINTER(c_int)),
        ("h", POINTER(c_int)), ("w", POINTER(c_int))),
    _fn("miopenSetNdPoolingDescriptor",
        ("poolDesc", _Pool), ("mode", c_enum), ("nbDims", c_int), ("windowDimA", POINTER(c_int)),
        ("padA", POINTER(c_int)), ("stridesA", POINTER(c_int))),
    _fn("miopenGetNdPoolingDescriptor",
        ("poolDesc", _Pool), ("nbDimsRequested", c_int), ("mode", POINTER(c_enum)),
        ("nbDims", POINTER(c_int)), ("windowDimA", POINTER(c_int)), ("padA", POINTER(c_int)),
        ("stridesA", POINTER(c_int))),
    _fn("miopenGetPoolingNdForwardOutputDim",
        ("poolDesc", _Pool), ("tensorDesc", _Tensor), ("dims", c_int),
        ("tensorDimArr", POINTER(c_int))),
    _fn("miopenPoolingGetWorkSpaceSize", ("yDesc", _Tensor), ("workSpaceSize", POINTER(c_size_t))),
    _fn("miopenPoolingGetWorkSpaceSizeV2",
        ("poolDesc", _Pool), ("yDesc", _Tensor), ("workSpaceSize", POINTER(c_size_t))),
    _fn("miopenPoolingForward",
        ("handle", miopenHandle_t), ("poolDesc", _Pool), ("alpha", c_void_p), ("xDesc", _Tensor),
        ("x", c_void_p), ("beta", c_void_p), ("yDesc", _Tensor), ("y", c_void_p),
        ("do_backward", c_bool), ("workSpace", c_void_p), ("workSpaceSize", c_size_t)),
    _fn("miopenPoolingBackward",
        ("handle", miopenHandle_t), ("poolDesc", _Pool), ("alpha", c_void_p), ("yDesc", _Tensor),
        ("y", c_void_p), ("dyDesc", _Tensor), ("dy", c_void_p), ("xDesc", _Tensor),
        ("x", c_void_p), ("beta", c_void_p), ("dxDesc", _Tensor), ("dx", c_void_p),
        ("workSpace", c_void_p)),
    _fn("miopenDestroyPoolingDescriptor", ("poolDesc", _Pool)),
)

LRN = (
    _fn("miopenCreateLRNDescriptor", ("lrnDesc", POINTER(miopenLRNDescriptor_t))),
    _fn("miopenSetLRNDescriptor",
        ("lrnDesc", miopenLRNDescriptor_t), ("mode", c_enum), ("lrnN", c_uint),
        ("lrnAlpha", c_double), ("lrnBeta", c_double), ("lrnK", c_double)),
    _fn("miopenGetLRNDescriptor",
        ("lrnDesc", miopenLRNDescriptor_t), ("mode", POINTER(c_enum)), ("lrnN", POINTER(c_uint)),
        ("lrnAlpha", POINTER(c_double)), ("lrnBeta", POINTER(c_double)),
        ("lrnK", POINTER(c_double))),
    _fn("miopenLRNGetWorkSpaceSize", ("yDesc", _Tensor), ("workSpaceSize", POINTER(c_size_t))),
    _fn("miopenLRNForward",
        ("handle", miopenHandle_t), ("lrnDesc", miopenLRNDescriptor_t), ("alpha", c_void_p),
        ("xDesc", _Tensor), ("x", c_void_p), ("beta", c_void_p), ("yDesc", _Tensor),
        ("y", c_void_p), ("do_backward", c_bool), ("workSpace", c_void_p)),
    _fn("miopenLRNBackward",
        ("handle", miopenHandle_t), ("lrnDesc", miopenLRNDescriptor_t), ("alpha", c_void_p),
        ("yDesc", _Tensor), ("y", c_void_p), ("dyDesc", _Tensor), ("dy", c_void_p),
        ("xDesc", _Tensor), ("x", c_void_p), ("beta", c_void_p), ("dxDesc", _Tensor),
        ("dx", c_void_p), ("workSpace", c_void_p)),
    _fn("miopenDestroyLRNDescriptor", ("lrnDesc", miopenLRNDescriptor_t)),
)

SOFTMAX = (
    _fn("miopenSoftmaxForward",
        ("handle", miopenHandle_t), ("alpha", c_void_p), ("xDesc", _Tensor), ("x", c_void_p),
        ("beta", c_void_p), ("yDesc", _Tensor), ("y", c_void_p)),
    _fn("miopenSoftmaxBackward",
        ("handle", miopenHandle_t), ("alpha", c_void_p), ("yDesc", _Tensor), ("y", c_void_p),
        ("dyDesc", _Tensor), ("dy", c_void_p), ("beta", c_void_p), ("dxDesc", _Tensor),
        ("dx", c_void_p)),
    _fn("miopenSoftmaxForward_V2",
        ("handle", miopenHandle_t), ("alpha", c_void_p), ("xDesc", _Tensor), ("x", c_void_p),
        ("beta", c_void_p), ("yDesc", _Tensor), ("y", c_void_p), ("algorithm", c_enum),
        ("mode", c_enum)),
    _fn("miopenSoftmaxBackward_V2",
        ("handle", miopenHandle_t), ("alpha", c_void_p), ("yDesc", _Tensor), ("y", c_void_p),
        ("dyDesc", _Tensor), ("dy", c_void_p), ("beta", c_void_p), ("dxDesc", _Tensor),
        ("dx", c_void_p), ("algorithm", c_enum), ("mode", c_enum)),
    # The softmax operator of Find 2.0: a descriptor holding alpha, beta, algorithm and mode.
    _fn("miopenCreateSoftmaxDescriptor", ("softmaxDesc", POINTER(miopenSoftmaxDescriptor_t))),
    _fn("miopenSetSoftmaxDescriptor",
        ("softmaxDesc", miopenSoftmaxDescriptor_t), ("alpha", c_float), ("beta", c_float),
        ("algorithm", c_enum), ("mode", c_enum)),
    _fn("miopenGetSoftmaxDescriptor",
        ("softmaxDesc", miopenSoftmaxDescriptor_t), ("alpha", POINTER(c_float)),
        ("beta", POINTER(c_float)), ("algorithm", POINTER(c_enum)), ("mode", POINTER(c_enum))),
    _fn("miopenCreateSoftmaxProblem",
        ("problem", POINTER(miopenProblem_t)), ("operatorDesc", miopenSoftmaxDescriptor_t),
        ("direction", c_enum), beta=True),
)

_Dropout = miopenDropoutDescriptor_t

DROPOUT = (
    _fn("miopenCreateDropoutDescriptor", ("dropoutDesc", POINTER(_Dropout))),
    _fn("miopenDestroyDropoutDescriptor", ("dropoutDesc", _Dropout)),
    _fn("miopenDropoutGetReserveSpaceSize",
        ("xDesc", _Tensor), ("reserveSpaceSizeInBytes", POINTER(c_size_t))),
    _fn("miopenDropoutGetStatesSize",
        ("handle", miopenHandle_t), ("stateSizeInBytes", POINTER(c_size_t))),
    _fn("miopenGetDropoutDescriptor",
        ("dropoutDesc", _Dropout), ("handle", miopenHandle_t), ("dropout", POINTER(c_float)),
        ("states", POINTER(c_void_p)), ("seed", POINTER(c_ulonglong)), ("use_mask", POINTER(c_bool)),
        ("state_evo", POINTER(c_bool)), ("rng_mode", POINTER(c_enum))),
    _fn("miopenRestoreDropoutDescriptor",
        ("dropoutDesc", _Dropout), ("handle", miopenHandle_t), ("dropout", c_float),
        ("states", c_void_p), ("stateSizeInBytes", c_size_t), ("seed", c_ulonglong),
        ("use_mask", c_bool), ("state_evo", c_bool), ("rng_mode", c_enum)),
    _fn("miopenSetDropoutDescriptor",
        ("dropoutDesc", _Dropout), ("handle", miopenHandle_t), ("dropout", c_float),
        ("states", c_void_p), ("stateSizeInBytes", c_size_t), ("seed", c_ulonglong),
        ("use_mask", c_bool), ("state_evo", c_bool), ("rng_mode", c_enum)),
    _fn("miopenDropoutForward",
        ("handle", miopenHandle_t), ("dropoutDesc", _Dropout), ("noise_shape", _Tensor),
        ("xDesc", _Tensor), ("x", c_void_p), ("yDesc", _Tensor), ("y", c_void_p),
        ("reserveSpace", c_void_p), ("reserveSpaceSizeInBytes", c_size_t)),
    _fn("miopenDropoutBackward",
        ("handle", miopenHandle_t), ("dropoutDesc", _Dropout), ("noise_shape", _Tensor),
        ("dyDesc", _Tensor), ("dy", c_void_p), ("dxDesc", _Tensor), ("dx", c_void_p),
        ("reserveSpace", c_void_p), ("reserveSpaceSizeInBytes", c_size_t)),
)

_CTC = miopenCTCLossDescriptor_t

CTC_LOSS = (
    _fn("miopenCreateCTCLossDescriptor", ("ctcLossDesc", POINTER(_CTC))),
    _fn("miopenGetCTCLossDescriptor",
        ("ctcLossDesc", _CTC), ("dataType", POINTER(c_enum)), ("blank_label_id", POINTER(c_int)),
        ("apply_softmax_layer", POINTER(c_bool))),
    _fn("miopenDestroyCTCLossDescriptor", ("ctcLossDesc", _CTC)),
    _fn("miopenSetCTCLossDescriptor",
        ("ctcLossDesc", _CTC), ("dataType", c_enum), ("blank_label_id", c_int),
        ("apply_softmax_layer", c_bool)),
    # labels / labelLengths / inputLengths are host int arrays (MIOpen reads them on the CPU).
    _fn("miopenGetCTCLossWorkspaceSize",
        ("handle", miopenHandle_t), ("probsDesc", _Tensor), ("gradientsDesc", _Tensor),
        ("labels", POINTER(c_int)), ("labelLengths", POINTER(c_int)),
        ("inputLengths", POINTER(c_int)), ("algo", c_enum), ("ctcLossDesc", _CTC),
        ("workSpaceSize", POINTER(c_size_t))),
    _fn("miopenCTCLoss",
        ("handle", miopenHandle_t), ("probsDesc", _Tensor), ("probs", c_void_p),
        ("labels", POINTER(c_int)), ("labelLengths", POINTER(c_int)),
        ("inputLengths", POINTER(c_int)), ("losses", c_void_p), ("gradientsDesc", _Tensor),
        ("gradients", c_void_p), ("algo", c_enum), ("ctcLossDesc", _CTC), ("workSpace", c_void_p),
        ("workSpaceSize", c_size_t)),
)

_Reduce = miopenReduceTensorDescriptor_t

REDUCE_TENSOR = (
    _fn("miopenCreateReduceTensorDescriptor", ("reduceTensorDesc", POINTER(_Reduce))),
    _fn("miopenDestroyReduceTensorDescriptor", ("reduceTensorDesc", _Reduce)),
    _fn("miopenSetReduceTensorDescriptor",
        ("reduceTensorDesc", _Reduce), ("reduceTensorOp", c_enum),
        ("reduceTensorCompType", c_enum), ("reduceTensorNanOpt", c_enum),
        ("reduceTensorIndices", c_enum), ("reduceTensorIndicesType", c_enum)),
    _fn("miopenGetReduceTensorDescriptor",
        ("reduceTensorDesc", _Reduce), ("reduceTensorOp", POINTER(c_enum)),
        ("reduceTensorCompType", POINTER(c_enum)), ("reduceTensorNanOpt", POINTER(c_enum)),
        ("reduceTensorIndices", POINTER(c_enum)), ("reduceTensorIndicesType", POINTER(c_enum))),
    _fn("miopenGetReductionIndicesSize",
        ("handle", miopenHandle_t), ("reduceTensorDesc", _Reduce), ("aDesc", _Tensor),
        ("cDesc", _Tensor), ("sizeInBytes", POINTER(c_size_t))),
    _fn("miopenGetReductionWorkspaceSize",
        ("handle", miopenHandle_t), ("reduceTensorDesc", _Reduce), ("aDesc", _Tensor),
        ("cDesc", _Tensor), ("sizeInBytes", POINTER(c_size_t))),
    _fn("miopenReduceTensor",
        ("handle", miopenHandle_t), ("reduceTensorDesc", _Reduce), ("indices", c_void_p),
        ("indicesSizeInBytes", c_size_t), ("workspace", c_void_p),
        ("workspaceSizeInBytes", c_size_t), ("alpha", c_void_p), ("aDesc", _Tensor),
        ("A", c_void_p), ("beta", c_void_p), ("cDesc", _Tensor), ("C", c_void_p)),
)
