"""Each bound parameter's C type as ``miopen.h`` spells it, for messages (:func:`c_type_name`).

ctypes cannot say it: an enum, ``unsigned int`` and ``uint32_t`` are all ``c_uint``; ``size_t``
and ``uint64_t`` are one type (``c_ulong`` on Linux, ``c_ulonglong`` on Windows, where ``int``
is ``c_long``). A parameter's name is the scalar's spelling below, or a handle's typedef, unless
:data:`HEADER_SPELLINGS` holds the header's own (an enum, a fixed-width integer, ``long``, ...).
``const`` is left out. tests/conformance/test_header_spellings.py checks every parameter of every
bound function against the real 3.4.0 and 3.5.1 headers (and prints the table to paste when
they differ).
"""

from __future__ import annotations

import ctypes
from typing import Any

from .prototypes import PROTOTYPES
from .types import HANDLE_TYPES

__all__ = ["HEADER_SPELLINGS", "c_type_name"]

# Keyed by the ctypes type object: the aliases (c_int is c_long on Windows, c_size_t is c_ulong on
# Linux) land on the same entry on every platform.
_SCALARS: dict[Any, str] = {
    ctypes.c_int: "int", ctypes.c_uint: "unsigned int", ctypes.c_size_t: "size_t",
    ctypes.c_int64: "int64_t", ctypes.c_float: "float", ctypes.c_double: "double",
    ctypes.c_bool: "bool", ctypes.c_char: "char", ctypes.c_char_p: "char*", ctypes.c_void_p: "void*",
}


def _spelled(ctype: Any) -> str:
    if ctype in HANDLE_TYPES:
        return str(ctype.__name__)
    if ctype in _SCALARS:
        return _SCALARS[ctype]
    if isinstance(ctype, type) and issubclass(ctype, ctypes._Pointer):
        return _spelled(ctype._type_) + "*"
    return str(getattr(ctype, "__name__", ctype))


def c_type_name(function: str, parameter: str | int) -> str:
    """The C type of ``function``'s ``parameter`` (its name or position) as the header spells
    it, without ``const``: ``int``, ``size_t*``, ``miopenPoolingMode_t``,
    ``miopenTensorDescriptor_t``."""
    proto = PROTOTYPES[function]
    index = parameter if isinstance(parameter, int) else proto.argnames.index(parameter)
    own = HEADER_SPELLINGS.get(function, {}).get(proto.argnames[index])
    return own if own is not None else _spelled(proto.argtypes[index])


#: function -> {parameter: the header's spelling} where it is not the default of its ctypes type.
HEADER_SPELLINGS: dict[str, dict[str, str]] = {
    "miopenAddLayerNormForward": {"mode": "miopenNormMode_t", "normalized_dim": "int32_t"},
    "miopenBackendCreateDescriptor": {"descriptorType": "miopenBackendDescriptorType_t"},
    "miopenBackendGetAttribute": {
        "attributeName": "miopenBackendAttributeName_t",
        "attributeType": "miopenBackendAttributeType_t",
    },
    "miopenBackendInitialize": {"descriptorType": "miopenBackendDescriptorType_t"},
    "miopenBackendSetAttribute": {
        "attributeName": "miopenBackendAttributeName_t",
        "attributeType": "miopenBackendAttributeType_t",
    },
    "miopenBatchNormBackwardActivation": {"bn_mode": "miopenBatchNormMode_t"},
    "miopenBatchNormForwardInferenceActivation": {"bn_mode": "miopenBatchNormMode_t"},
    "miopenBatchNormForwardTrainingActivation": {"bn_mode": "miopenBatchNormMode_t"},
    "miopenBatchNormalizationBackward": {"bn_mode": "miopenBatchNormMode_t"},
    "miopenBatchNormalizationBackward_V2": {"bn_mode": "miopenBatchNormMode_t"},
    "miopenBatchNormalizationForwardInference": {"bn_mode": "miopenBatchNormMode_t"},
    "miopenBatchNormalizationForwardInference_V2": {"bn_mode": "miopenBatchNormMode_t"},
    "miopenBatchNormalizationForwardTraining": {"bn_mode": "miopenBatchNormMode_t"},
    "miopenBatchNormalizationForwardTraining_V2": {"bn_mode": "miopenBatchNormMode_t"},
    "miopenCTCLoss": {"algo": "miopenCTCLossAlgo_t"},
    "miopenCatForward": {"xCount": "int32_t", "dim": "int32_t"},
    "miopenConvolutionBackwardData": {"algo": "miopenConvBwdDataAlgorithm_t"},
    "miopenConvolutionBackwardDataCompileSolution": {"solution_id": "uint64_t"},
    "miopenConvolutionBackwardDataGetSolutionWorkspaceSize": {"solution_id": "uint64_t"},
    "miopenConvolutionBackwardDataImmediate": {"solution_id": "uint64_t"},
    "miopenConvolutionBackwardWeights": {"algo": "miopenConvBwdWeightsAlgorithm_t"},
    "miopenConvolutionBackwardWeightsCompileSolution": {"solution_id": "uint64_t"},
    "miopenConvolutionBackwardWeightsGetSolutionWorkspaceSize": {"solution_id": "uint64_t"},
    "miopenConvolutionBackwardWeightsImmediate": {"solution_id": "uint64_t"},
    "miopenConvolutionBiasActivationForward": {"algo": "miopenConvFwdAlgorithm_t"},
    "miopenConvolutionForward": {"algo": "miopenConvFwdAlgorithm_t"},
    "miopenConvolutionForwardCompileSolution": {"solution_id": "uint64_t"},
    "miopenConvolutionForwardGetSolutionWorkspaceSize": {"solution_id": "uint64_t"},
    "miopenConvolutionForwardImmediate": {"solution_id": "uint64_t"},
    "miopenCreateActivationProblem": {"direction": "miopenProblemDirection_t"},
    "miopenCreateBatchnormProblem": {
        "mode": "miopenBatchNormMode_t", "direction": "miopenProblemDirection_t",
    },
    "miopenCreateBiasProblem": {"direction": "miopenProblemDirection_t"},
    "miopenCreateConvProblem": {"direction": "miopenProblemDirection_t"},
    "miopenCreateFusionPlan": {"fuseDirection": "miopenFusionDirection_t"},
    "miopenCreateMhaProblem": {"direction": "miopenProblemDirection_t"},
    "miopenCreateOpActivationBackward": {"mode": "miopenActivationMode_t"},
    "miopenCreateOpActivationForward": {"mode": "miopenActivationMode_t"},
    "miopenCreateOpBatchNormBackward": {"bn_mode": "miopenBatchNormMode_t"},
    "miopenCreateOpBatchNormForward": {"bn_mode": "miopenBatchNormMode_t"},
    "miopenCreateOpBatchNormInference": {"bn_mode": "miopenBatchNormMode_t"},
    "miopenCreateSoftmaxProblem": {"direction": "miopenProblemDirection_t"},
    "miopenCreateWithStream": {"stream": "miopenAcceleratorQueue_t"},
    "miopenDeriveBNTensorDescriptor": {"bn_mode": "miopenBatchNormMode_t"},
    "miopenFusionPlanConvolutionGetAlgo": {"returnedAlgos": "miopenConvFwdAlgorithm_t*"},
    "miopenFusionPlanConvolutionSetAlgo": {"algo": "miopenConvFwdAlgorithm_t"},
    "miopenFusionPlanGetWorkSpaceSize": {"algo": "miopenConvFwdAlgorithm_t"},
    "miopenGLUBackward": {"dim": "uint32_t"},
    "miopenGLUForward": {"dim": "uint32_t"},
    "miopenGet2dPoolingDescriptor": {"mode": "miopenPoolingMode_t*"},
    "miopenGet4dTensorDescriptor": {"dataType": "miopenDataType_t*"},
    "miopenGetActivationDescriptor": {"mode": "miopenActivationMode_t*"},
    "miopenGetCTCLossDescriptor": {"dataType": "miopenDataType_t*"},
    "miopenGetCTCLossWorkspaceSize": {"algo": "miopenCTCLossAlgo_t"},
    "miopenGetConvolutionAttribute": {"attr": "miopenConvolutionAttrib_t"},
    "miopenGetConvolutionDescriptor": {"c_mode": "miopenConvolutionMode_t*"},
    "miopenGetConvolutionFindMode": {"findMode": "miopenConvolutionFindMode_t*"},
    "miopenGetConvolutionNdDescriptor": {"c_mode": "miopenConvolutionMode_t*"},
    "miopenGetDropoutDescriptor": {"seed": "unsigned long long*", "rng_mode": "miopenRNGType_t*"},
    "miopenGetErrorString": {"error": "miopenStatus_t"},
    "miopenGetGetitemWorkspaceSize": {"indexCount": "uint32_t"},
    "miopenGetLRNDescriptor": {"mode": "miopenLRNMode_t*"},
    "miopenGetLayerNormBackwardWorkspaceSize": {
        "mode": "miopenNormMode_t", "normalized_dim": "int32_t",
    },
    "miopenGetMultiMarginLossForwardWorkspaceSize": {
        "p": "long", "reduction": "miopenLossReductionMode_t",
    },
    "miopenGetNdPoolingDescriptor": {"mode": "miopenPoolingMode_t*"},
    "miopenGetPoolingIndexType": {"index_type": "miopenIndexType_t*"},
    "miopenGetPoolingWorkSpaceIndexMode": {"workspace_index": "miopenPoolingWorkspaceIndexMode_t*"},
    "miopenGetRNNDataSeqTensorDescriptor": {
        "dataType": "miopenDataType_t*", "layout": "miopenRNNBaseLayout_t*",
    },
    "miopenGetRNNDescriptor": {
        "rnnMode": "miopenRNNMode_t*", "algoMode": "miopenRNNAlgo_t*",
        "inputMode": "miopenRNNInputMode_t*", "dirMode": "miopenRNNDirectionMode_t*",
        "biasMode": "miopenRNNBiasMode_t*",
    },
    "miopenGetRNNDescriptor_V2": {
        "inputMode": "miopenRNNInputMode_t*", "dirMode": "miopenRNNDirectionMode_t*",
        "rnnMode": "miopenRNNMode_t*", "biasMode": "miopenRNNBiasMode_t*",
        "algoMode": "miopenRNNAlgo_t*", "dataType": "miopenDataType_t*",
    },
    "miopenGetRNNPaddingMode": {"paddingMode": "miopenRNNPaddingMode_t*"},
    "miopenGetRNNParamsDescriptor": {"dtype": "miopenDataType_t"},
    "miopenGetRNNParamsSize": {"dtype": "miopenDataType_t"},
    "miopenGetRNNTempSpaceSizes": {"fwdMode": "miopenRNNFWDMode_t"},
    "miopenGetReduceCalculationWorkspaceSize": {
        "dim": "int32_t", "reduceCalculationOp": "miopenReduceCalculationOp_t",
    },
    "miopenGetReduceTensorDescriptor": {
        "reduceTensorOp": "miopenReduceTensorOp_t*", "reduceTensorCompType": "miopenDataType_t*",
        "reduceTensorNanOpt": "miopenNanPropagation_t*",
        "reduceTensorIndices": "miopenReduceTensorIndices_t*",
        "reduceTensorIndicesType": "miopenIndicesType_t*",
    },
    "miopenGetSoftMarginLossForwardWorkspaceSize": {"reduction": "miopenLossReductionMode_t"},
    "miopenGetSoftmaxDescriptor": {
        "algorithm": "miopenSoftmaxAlgorithm_t*", "mode": "miopenSoftmaxMode_t*",
    },
    "miopenGetSolutionSolverId": {"solverId": "uint64_t*"},
    "miopenGetSolverIdConvAlgorithm": {"solverId": "uint64_t", "result": "miopenConvAlgorithm_t*"},
    "miopenGetStream": {"streamID": "miopenAcceleratorQueue_t*"},
    "miopenGetT5LayerNormBackwardWorkspaceSize": {"mode": "miopenNormMode_t"},
    "miopenGetTensorDescriptor": {"dataType": "miopenDataType_t*"},
    "miopenGetTuningPolicy": {"value": "miopenTuningPolicy_t*"},
    "miopenGetitemBackward": {
        "indexCount": "uint32_t", "dimCount": "uint32_t", "dims": "int32_t*",
        "sliceCount": "uint32_t", "slices": "int32_t*", "offset": "uint32_t",
    },
    "miopenGroupNormForward": {"mode": "miopenNormMode_t", "num_groups": "uint64_t"},
    "miopenInitConvolutionDescriptor": {"c_mode": "miopenConvolutionMode_t"},
    "miopenInitConvolutionNdDescriptor": {"c_mode": "miopenConvolutionMode_t"},
    "miopenKthvalueForward": {"dim": "int32_t"},
    "miopenLayerNormBackward": {"mode": "miopenNormMode_t", "normalized_dim": "int32_t"},
    "miopenLayerNormForward": {"mode": "miopenNormMode_t", "normalized_dim": "int32_t"},
    "miopenMultiMarginLossForward": {"p": "long", "reduction": "miopenLossReductionMode_t"},
    "miopenOpTensor": {"tensorOp": "miopenTensorOp_t"},
    "miopenRNNForward": {"fwdMode": "miopenRNNFWDMode_t"},
    "miopenReduceCalculationForward": {
        "nanPropagation": "miopenReduceCalculationNanPropagation_t", "dim": "int32_t",
        "reduceCalculationOp": "miopenReduceCalculationOp_t",
    },
    "miopenReduceExtremeForward": {"dim": "int32_t", "reduceExtremeOp": "miopenReduceExtremeOp_t"},
    "miopenRestoreDropoutDescriptor": {"seed": "unsigned long long", "rng_mode": "miopenRNGType_t"},
    "miopenSet2dPoolingDescriptor": {"mode": "miopenPoolingMode_t"},
    "miopenSet4dTensorDescriptor": {"dataType": "miopenDataType_t"},
    "miopenSet4dTensorDescriptorEx": {"dataType": "miopenDataType_t"},
    "miopenSetActivationDescriptor": {"mode": "miopenActivationMode_t"},
    "miopenSetAllocator": {
        "allocator": "miopenAllocatorFunction", "deallocator": "miopenDeallocatorFunction",
    },
    "miopenSetCTCLossDescriptor": {"dataType": "miopenDataType_t"},
    "miopenSetConvolutionAttribute": {"attr": "miopenConvolutionAttrib_t"},
    "miopenSetConvolutionFindMode": {"findMode": "miopenConvolutionFindMode_t"},
    "miopenSetDropoutDescriptor": {"seed": "unsigned long long", "rng_mode": "miopenRNGType_t"},
    "miopenSetFindOptionPreallocatedTensor": {"id": "miopenTensorArgumentId_t"},
    "miopenSetFindOptionResultsOrder": {"value": "miopenFindResultsOrder_t"},
    "miopenSetLRNDescriptor": {"mode": "miopenLRNMode_t"},
    "miopenSetNdPoolingDescriptor": {"mode": "miopenPoolingMode_t"},
    "miopenSetNdTensorDescriptorWithLayout": {
        "dataType": "miopenDataType_t", "tensorLayout": "miopenTensorLayout_t",
    },
    "miopenSetPoolingIndexType": {"index_type": "miopenIndexType_t"},
    "miopenSetPoolingWorkSpaceIndexMode": {"workspace_index": "miopenPoolingWorkspaceIndexMode_t"},
    "miopenSetProblemTensorDescriptor": {"id": "miopenTensorArgumentId_t"},
    "miopenSetRNNDataSeqTensorDescriptor": {
        "dataType": "miopenDataType_t", "layout": "miopenRNNBaseLayout_t",
    },
    "miopenSetRNNDescriptor": {
        "inMode": "miopenRNNInputMode_t", "direction": "miopenRNNDirectionMode_t",
        "rnnMode": "miopenRNNMode_t", "biasMode": "miopenRNNBiasMode_t", "algo": "miopenRNNAlgo_t",
        "dataType": "miopenDataType_t",
    },
    "miopenSetRNNDescriptor_V2": {
        "inMode": "miopenRNNInputMode_t", "direction": "miopenRNNDirectionMode_t",
        "rnnMode": "miopenRNNMode_t", "biasMode": "miopenRNNBiasMode_t", "algo": "miopenRNNAlgo_t",
        "dataType": "miopenDataType_t",
    },
    "miopenSetRNNPaddingMode": {"paddingMode": "miopenRNNPaddingMode_t"},
    "miopenSetReduceTensorDescriptor": {
        "reduceTensorOp": "miopenReduceTensorOp_t", "reduceTensorCompType": "miopenDataType_t",
        "reduceTensorNanOpt": "miopenNanPropagation_t",
        "reduceTensorIndices": "miopenReduceTensorIndices_t",
        "reduceTensorIndicesType": "miopenIndicesType_t",
    },
    "miopenSetSoftmaxDescriptor": {
        "algorithm": "miopenSoftmaxAlgorithm_t", "mode": "miopenSoftmaxMode_t",
    },
    "miopenSetStream": {"streamID": "miopenAcceleratorQueue_t"},
    "miopenSetTensorCastType": {"cast_type": "miopenDataType_t"},
    "miopenSetTensorDescriptor": {"dataType": "miopenDataType_t"},
    "miopenSetTensorDescriptorV2": {"dataType": "miopenDataType_t"},
    "miopenSetTuningPolicy": {"newValue": "miopenTuningPolicy_t"},
    "miopenSoftMarginLossBackward": {"reduction": "miopenLossReductionMode_t"},
    "miopenSoftMarginLossForward": {"reduction": "miopenLossReductionMode_t"},
    "miopenSoftmaxBackward_V2": {
        "algorithm": "miopenSoftmaxAlgorithm_t", "mode": "miopenSoftmaxMode_t",
    },
    "miopenSoftmaxForward_V2": {
        "algorithm": "miopenSoftmaxAlgorithm_t", "mode": "miopenSoftmaxMode_t",
    },
    "miopenT5LayerNormBackward": {"mode": "miopenNormMode_t"},
    "miopenT5LayerNormForward": {"mode": "miopenNormMode_t"},
}
