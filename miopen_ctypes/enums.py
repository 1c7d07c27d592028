"""The enums of ``miopen.h`` as ``IntEnum`` with the header's exact values.

Values were taken from the MIOpen 3.4 (ROCm 6.4.3) and 3.5 (ROCm 7.2.4) headers; members marked
``# 3.5 only`` do not exist in 3.4, see ``ADDED_IN_3_5``. 3.4 spelled the fp8 data types
``miopenFloat8``/``miopenBFloat8`` (beta API); 3.5 renamed them ``*_fnuz`` with the same values, so
both spellings are present here (the 3.4 names are aliases), see ``RENAMED_IN_3_5``.
Members pass straight into ``c_enum`` (``c_uint``) arguments::

    >>> int(miopenDataType_t.miopenFloat)
    1
"""

from __future__ import annotations

from enum import IntEnum

__all__ = [
    "ADDED_IN_3_5",
    "ENUMS",
    "RENAMED_IN_3_5",
    "miopenActivationMode_t",
    "miopenBatchNormMode_t",
    "miopenCTCLossAlgo_t",
    "miopenConvAlgorithm_t",
    "miopenConvBwdDataAlgorithm_t",
    "miopenConvBwdWeightsAlgorithm_t",
    "miopenConvFwdAlgorithm_t",
    "miopenConvolutionAttrib_t",
    "miopenConvolutionFindMode_t",
    "miopenConvolutionMode_t",
    "miopenDataType_t",
    "miopenF8RoundingMode_t",
    "miopenFindResultsOrder_t",
    "miopenFusionDirection_t",
    "miopenIndexType_t",
    "miopenIndicesType_t",
    "miopenLRNMode_t",
    "miopenLossReductionMode_t",
    "miopenNanPropagation_t",
    "miopenNormMode_t",
    "miopenPaddingMode_t",
    "miopenPoolingMode_t",
    "miopenPoolingWorkspaceIndexMode_t",
    "miopenProblemDirection_t",
    "miopenRNGType_t",
    "miopenRNNAlgo_t",
    "miopenRNNBaseLayout_t",
    "miopenRNNBiasMode_t",
    "miopenRNNDirectionMode_t",
    "miopenRNNFWDMode_t",
    "miopenRNNGEMMalgoMode_t",
    "miopenRNNInputMode_t",
    "miopenRNNMode_t",
    "miopenRNNPaddingMode_t",
    "miopenReduceCalculationNanPropagation_t",
    "miopenReduceCalculationOp_t",
    "miopenReduceExtremeOp_t",
    "miopenReduceTensorIndices_t",
    "miopenReduceTensorOp_t",
    "miopenSoftmaxAlgorithm_t",
    "miopenSoftmaxMode_t",
    "miopenStatus_t",
    "miopenTensorArgumentId_t",
    "miopenTensorLayout_t",
    "miopenTensorOp_t",
    "miopenTuningPolicy_t",
]


class miopenStatus_t(IntEnum):
    """``miopenStatus_t``."""

    miopenStatusSuccess = 0
    miopenStatusNotInitialized = 1
    miopenStatusInvalidValue = 2
    miopenStatusBadParm = 3
    miopenStatusAllocFailed = 4
    miopenStatusInternalError = 5
    miopenStatusNotImplemented = 6
    miopenStatusUnknownError = 7
    miopenStatusUnsupportedOp = 8
    miopenStatusGpuOperationsSkipped = 9
    miopenStatusVersionMismatch = 10


class miopenDataType_t(IntEnum):
    """``miopenDataType_t``."""

    miopenHalf = 0
    miopenFloat = 1
    miopenInt32 = 2
    miopenInt8 = 3
    miopenBFloat16 = 5
    miopenDouble = 6
    miopenFloat8_fnuz = 7  # 3.5 name of 3.4 miopenFloat8
    miopenBFloat8_fnuz = 8  # 3.5 name of 3.4 miopenBFloat8
    miopenInt64 = 9
    miopenFloat8 = 7  # 3.4 spelling (beta API); 3.5 renamed it
    miopenBFloat8 = 8  # 3.4 spelling (beta API); 3.5 renamed it


class miopenTensorLayout_t(IntEnum):
    """``miopenTensorLayout_t``."""

    miopenTensorNCHW = 0
    miopenTensorNHWC = 1
    miopenTensorCHWN = 2
    miopenTensorNCHWc4 = 3
    miopenTensorNCHWc8 = 4
    miopenTensorCHWNc4 = 5
    miopenTensorCHWNc8 = 6
    miopenTensorNCDHW = 7
    miopenTensorNDHWC = 8


class miopenTensorOp_t(IntEnum):
    """``miopenTensorOp_t``."""

    miopenTensorOpAdd = 0
    miopenTensorOpMul = 1
    miopenTensorOpMin = 2
    miopenTensorOpMax = 3


class miopenConvolutionMode_t(IntEnum):
    """``miopenConvolutionMode_t``."""

    miopenConvolution = 0
    miopenTranspose = 1
    miopenGroupConv = 2
    miopenDepthwise = 3


class miopenPaddingMode_t(IntEnum):
    """``miopenPaddingMode_t``."""

    miopenPaddingDefault = 0
    miopenPaddingSame = 1
    miopenPaddingValid = 2


class miopenBatchNormMode_t(IntEnum):
    """``miopenBatchNormMode_t``."""

    miopenBNPerActivation = 0
    miopenBNSpatial = 1


class miopenActivationMode_t(IntEnum):
    """``miopenActivationMode_t``."""

    miopenActivationPASTHRU = 0
    miopenActivationLOGISTIC = 1
    miopenActivationTANH = 2
    miopenActivationRELU = 3
    miopenActivationSOFTRELU = 4
    miopenActivationABS = 5
    miopenActivationPOWER = 6
    miopenActivationCLIPPEDRELU = 7
    miopenActivationLEAKYRELU = 8
    miopenActivationELU = 9
    miopenActivationCLAMP = 10  # 3.5 only


class miopenConvolutionAttrib_t(IntEnum):
    """``miopenConvolutionAttrib_t``."""

    MIOPEN_CONVOLUTION_ATTRIB_FP16_ALT_IMPL = 0
    MIOPEN_CONVOLUTION_ATTRIB_DETERMINISTIC = 1
    MIOPEN_CONVOLUTION_ATTRIB_FP8_ROUNDING_MODE = 2


class miopenF8RoundingMode_t(IntEnum):
    """``miopenF8RoundingMode_t``."""

    miopenF8RoundingModeStandard = 0
    miopenF8RoundingModeStochastic = 1


class miopenConvolutionFindMode_t(IntEnum):
    """``miopenConvolutionFindMode_t``."""

    miopenConvolutionFindModeNormal = 1
    miopenConvolutionFindModeFast = 2
    miopenConvolutionFindModeHybrid = 3
    miopenConvolutionFindModeDynamicHybrid = 5
    miopenConvolutionFindModeTrustVerify = 6  # 3.5 only
    miopenConvolutionFindModeTrustVerifyFull = 7  # 3.5 only
    miopenConvolutionFindModeDefault = 5


class miopenConvFwdAlgorithm_t(IntEnum):
    """``miopenConvFwdAlgorithm_t``."""

    miopenConvolutionFwdAlgoGEMM = 0
    miopenConvolutionFwdAlgoDirect = 1
    miopenConvolutionFwdAlgoFFT = 2
    miopenConvolutionFwdAlgoWinograd = 3
    miopenConvolutionFwdAlgoImplicitGEMM = 5


class miopenConvBwdWeightsAlgorithm_t(IntEnum):
    """``miopenConvBwdWeightsAlgorithm_t``."""

    miopenConvolutionBwdWeightsAlgoGEMM = 0
    miopenConvolutionBwdWeightsAlgoDirect = 1
    miopenConvolutionBwdWeightsAlgoWinograd = 3
    miopenConvolutionBwdWeightsAlgoImplicitGEMM = 5


class miopenConvBwdDataAlgorithm_t(IntEnum):
    """``miopenConvBwdDataAlgorithm_t``."""

    miopenConvolutionBwdDataAlgoGEMM = 0
    miopenConvolutionBwdDataAlgoDirect = 1
    miopenConvolutionBwdDataAlgoFFT = 2
    miopenConvolutionBwdDataAlgoWinograd = 3
    miopenTransposeBwdDataAlgoGEMM = 4
    miopenConvolutionBwdDataAlgoImplicitGEMM = 5


class miopenConvAlgorithm_t(IntEnum):
    """``miopenConvAlgorithm_t``."""

    miopenConvolutionAlgoGEMM = 0
    miopenConvolutionAlgoDirect = 1
    miopenConvolutionAlgoFFT = 2
    miopenConvolutionAlgoWinograd = 3
    miopenConvolutionAlgoImplicitGEMM = 5


class miopenFusionDirection_t(IntEnum):
    """``miopenFusionDirection_t``."""

    miopenVerticalFusion = 0
    miopenHorizontalFusion = 1


class miopenProblemDirection_t(IntEnum):
    """``miopenProblemDirection_t``."""

    miopenProblemDirectionForward = 0
    miopenProblemDirectionBackward = 1
    miopenProblemDirectionBackwardWeights = 2
    miopenProblemDirectionInference = 4


class miopenTensorArgumentId_t(IntEnum):
    """``miopenTensorArgumentId_t``."""

    miopenTensorArgumentIdInvalid = 0
    miopenTensorConvolutionX = 1
    miopenTensorConvolutionW = 2
    miopenTensorConvolutionY = 3
    miopenTensorMhaK = 4
    miopenTensorMhaQ = 5
    miopenTensorMhaV = 6
    miopenTensorMhaDescaleK = 7
    miopenTensorMhaDescaleQ = 8
    miopenTensorMhaDescaleV = 9
    miopenTensorMhaDescaleS = 10
    miopenTensorMhaScaleS = 11
    miopenTensorMhaScaleO = 12
    miopenTensorMhaDropoutProbability = 13
    miopenTensorMhaDropoutSeed = 14
    miopenTensorMhaDropoutOffset = 15
    miopenTensorMhaO = 16
    miopenTensorMhaAmaxO = 17
    miopenTensorMhaAmaxS = 18
    miopenTensorMhaM = 19
    miopenTensorMhaZInv = 20
    miopenTensorMhaDO = 21
    miopenTensorMhaDescaleO = 22
    miopenTensorMhaDescaleDO = 23
    miopenTensorMhaDescaleDS = 24
    miopenTensorMhaScaleDS = 25
    miopenTensorMhaScaleDQ = 26
    miopenTensorMhaScaleDK = 27
    miopenTensorMhaScaleDV = 28
    miopenTensorMhaDQ = 29
    miopenTensorMhaDK = 30
    miopenTensorMhaDV = 31
    miopenTensorMhaAmaxDQ = 32
    miopenTensorMhaAmaxDK = 33
    miopenTensorMhaAmaxDV = 34
    miopenTensorMhaAmaxDS = 35
    miopenTensorMhaBias = 36
    miopenTensorActivationX = 37
    miopenTensorActivationY = 38
    miopenTensorActivationDX = 39
    miopenTensorActivationDY = 40
    miopenTensorBiasX = 41
    miopenTensorBiasY = 42
    miopenTensorBias = 43
    miopenTensorSoftmaxX = 44
    miopenTensorSoftmaxY = 45
    miopenTensorSoftmaxDX = 46
    miopenTensorSoftmaxDY = 47
    miopenTensorBatchnormX = 48
    miopenTensorBatchnormY = 49
    miopenTensorBatchnormRunningMean = 50
    miopenTensorBatchnormRunningVariance = 51
    miopenTensorBatchnormSavedMean = 52
    miopenTensorBatchnormSavedVariance = 53
    miopenTensorBatchnormScale = 54
    miopenTensorBatchnormScaleDiff = 55
    miopenTensorBatchnormEstimatedMean = 56
    miopenTensorBatchnormEstimatedVariance = 57
    miopenTensorBatchnormBias = 58
    miopenTensorBatchnormBiasDiff = 59
    miopenTensorBatchnormDX = 60
    miopenTensorBatchnormDY = 61
    miopenTensorArgumentIsScalar = 0x80000000
    miopenTensorMhaMask = 0x80000001
    miopenScalarBatchnormExpAvgFactor = 0x80000002
    miopenScalarBatchnormEpsilon = 0x80000003


class miopenFindResultsOrder_t(IntEnum):
    """``miopenFindResultsOrder_t``."""

    miopenFindResultsOrderByTime = 0
    miopenFindResultsOrderByWorkspaceSize = 1


class miopenTuningPolicy_t(IntEnum):
    """``miopenTuningPolicy_t``."""

    miopenTuningPolicyNone = 1  # 3.5 only
    miopenTuningPolicyDbUpdate = 2  # 3.5 only
    miopenTuningPolicySearch = 3  # 3.5 only
    miopenTuningPolicySearchDbUpdate = 4  # 3.5 only
    miopenTuningPolicyDbClean = 5  # 3.5 only


class miopenIndexType_t(IntEnum):
    """``miopenIndexType_t``."""

    miopenIndexUint8 = 0
    miopenIndexUint16 = 1
    miopenIndexUint32 = 2
    miopenIndexUint64 = 3


class miopenPoolingMode_t(IntEnum):
    """``miopenPoolingMode_t``."""

    miopenPoolingMax = 0
    miopenPoolingAverage = 1
    miopenPoolingAverageInclusive = 2


class miopenPoolingWorkspaceIndexMode_t(IntEnum):
    """``miopenPoolingWorkspaceIndexMode_t``."""

    miopenPoolingWorkspaceIndexMask = 0
    miopenPoolingWorkspaceIndexImage = 1


class miopenLRNMode_t(IntEnum):
    """``miopenLRNMode_t``."""

    miopenLRNWithinChannel = 0
    miopenLRNCrossChannel = 1


class miopenNormMode_t(IntEnum):
    """``miopenNormMode_t`` (beta API)."""

    MIOPEN_ELEMENTWISE_AFFINE = 0
    MIOPEN_WEIGHT_BIAS = 1
    MIOPEN_ELEMENTWISE_AFFINE_FUSED_ADD = 2
    MIOPEN_WEIGHT_BIAS_FUSED_ADD = 3
    MIOPEN_ELEMENTWISE_AFFINE_T5 = 4
    MIOPEN_WEIGHT_BIAS_T5 = 5


class miopenSoftmaxAlgorithm_t(IntEnum):
    """``miopenSoftmaxAlgorithm_t``."""

    MIOPEN_SOFTMAX_FAST = 0
    MIOPEN_SOFTMAX_ACCURATE = 1
    MIOPEN_SOFTMAX_LOG = 2


class miopenSoftmaxMode_t(IntEnum):
    """``miopenSoftmaxMode_t``."""

    MIOPEN_SOFTMAX_MODE_INSTANCE = 0
    MIOPEN_SOFTMAX_MODE_CHANNEL = 1


class miopenReduceTensorOp_t(IntEnum):
    """``miopenReduceTensorOp_t``."""

    MIOPEN_REDUCE_TENSOR_ADD = 0
    MIOPEN_REDUCE_TENSOR_MUL = 1
    MIOPEN_REDUCE_TENSOR_MIN = 2
    MIOPEN_REDUCE_TENSOR_MAX = 3
    MIOPEN_REDUCE_TENSOR_AMAX = 4
    MIOPEN_REDUCE_TENSOR_AVG = 5
    MIOPEN_REDUCE_TENSOR_NORM1 = 6
    MIOPEN_REDUCE_TENSOR_NORM2 = 7


class miopenNanPropagation_t(IntEnum):
    """``miopenNanPropagation_t``."""

    MIOPEN_NOT_PROPAGATE_NAN = 0
    MIOPEN_PROPAGATE_NAN = 1


class miopenReduceTensorIndices_t(IntEnum):
    """``miopenReduceTensorIndices_t``."""

    MIOPEN_REDUCE_TENSOR_NO_INDICES = 0
    MIOPEN_REDUCE_TENSOR_FLATTENED_INDICES = 1


class miopenIndicesType_t(IntEnum):
    """``miopenIndicesType_t``."""

    MIOPEN_32BIT_INDICES = 0
    MIOPEN_64BIT_INDICES = 1
    MIOPEN_16BIT_INDICES = 2
    MIOPEN_8BIT_INDICES = 3


class miopenRNNMode_t(IntEnum):
    """``miopenRNNMode_t``."""

    miopenRNNRELU = 0
    miopenRNNTANH = 1
    miopenLSTM = 2
    miopenGRU = 3


class miopenRNNInputMode_t(IntEnum):
    """``miopenRNNInputMode_t``."""

    miopenRNNlinear = 0
    miopenRNNskip = 1


class miopenRNNAlgo_t(IntEnum):
    """``miopenRNNAlgo_t``."""

    miopenRNNdefault = 0
    miopenRNNfundamental = 1
    miopenRNNroundedDynamic = 2


class miopenRNNDirectionMode_t(IntEnum):
    """``miopenRNNDirectionMode_t``."""

    miopenRNNunidirection = 0
    miopenRNNbidirection = 1


class miopenRNNBiasMode_t(IntEnum):
    """``miopenRNNBiasMode_t``."""

    miopenRNNNoBias = 0
    miopenRNNwithBias = 1


class miopenRNNGEMMalgoMode_t(IntEnum):
    """``miopenRNNGEMMalgoMode_t``."""

    miopenRNNAlgoGEMM = 0


class miopenRNNPaddingMode_t(IntEnum):
    """``miopenRNNPaddingMode_t``."""

    miopenRNNIONotPadded = 0
    miopenRNNIOWithPadding = 1


class miopenRNNFWDMode_t(IntEnum):
    """``miopenRNNFWDMode_t``."""

    miopenRNNTraining = 0
    miopenRNNInference = 1


class miopenRNNBaseLayout_t(IntEnum):
    """``miopenRNNBaseLayout_t``."""

    miopenRNNDataUnknownLayout = 0
    miopenRNNDataSeqMajorNotPadded = 1
    miopenRNNDataSeqMajorPadded = 2
    miopenRNNDataBatchMajorPadded = 3


class miopenCTCLossAlgo_t(IntEnum):
    """``miopenCTCLossAlgo_t``."""

    MIOPEN_CTC_LOSS_ALGO_DETERMINISTIC = 0


class miopenRNGType_t(IntEnum):
    """``miopenRNGType_t``."""

    MIOPEN_RNG_PSEUDO_XORWOW = 0


class miopenReduceCalculationNanPropagation_t(IntEnum):
    """``miopenReduceCalculationNanPropagation_t`` (beta API)."""

    MIOPEN_REDUCE_CALCULATION_NOT_PROPAGATE_NAN = 0
    MIOPEN_REDUCE_CALCULATION_PROPAGATE_NAN = 1


class miopenReduceCalculationOp_t(IntEnum):
    """``miopenReduceCalculationOp_t`` (beta API)."""

    MIOPEN_REDUCE_CALCULATION_PROD = 1
    MIOPEN_REDUCE_CALCULATION_SUM = 2


class miopenReduceExtremeOp_t(IntEnum):
    """``miopenReduceExtremeOp_t`` (beta API)."""

    MIOPEN_REDUCE_EXTREME_ARGMIN = 1
    MIOPEN_REDUCE_EXTREME_ARGMAX = 2
    MIOPEN_REDUCE_EXTREME_MIN = 3
    MIOPEN_REDUCE_EXTREME_MAX = 4


class miopenLossReductionMode_t(IntEnum):
    """``miopenLossReductionMode_t`` (beta API)."""

    MIOPEN_LOSS_REDUCTION_NONE = 0
    MIOPEN_LOSS_REDUCTION_SUM = 1
    MIOPEN_LOSS_REDUCTION_MEAN = 2


#: Every enum bound here, by its C typedef name.
ENUMS: dict[str, type[IntEnum]] = {
    cls.__name__: cls
    for cls in (
        miopenStatus_t,
        miopenDataType_t,
        miopenTensorLayout_t,
        miopenTensorOp_t,
        miopenConvolutionMode_t,
        miopenPaddingMode_t,
        miopenBatchNormMode_t,
        miopenActivationMode_t,
        miopenConvolutionAttrib_t,
        miopenF8RoundingMode_t,
        miopenConvolutionFindMode_t,
        miopenConvFwdAlgorithm_t,
        miopenConvBwdWeightsAlgorithm_t,
        miopenConvBwdDataAlgorithm_t,
        miopenConvAlgorithm_t,
        miopenFusionDirection_t,
        miopenProblemDirection_t,
        miopenTensorArgumentId_t,
        miopenFindResultsOrder_t,
        miopenTuningPolicy_t,
        miopenIndexType_t,
        miopenPoolingMode_t,
        miopenPoolingWorkspaceIndexMode_t,
        miopenLRNMode_t,
        miopenNormMode_t,
        miopenSoftmaxAlgorithm_t,
        miopenSoftmaxMode_t,
        miopenReduceTensorOp_t,
        miopenNanPropagation_t,
        miopenReduceTensorIndices_t,
        miopenIndicesType_t,
        miopenRNNMode_t,
        miopenRNNInputMode_t,
        miopenRNNAlgo_t,
        miopenRNNDirectionMode_t,
        miopenRNNBiasMode_t,
        miopenRNNGEMMalgoMode_t,
        miopenRNNPaddingMode_t,
        miopenRNNFWDMode_t,
        miopenRNNBaseLayout_t,
        miopenCTCLossAlgo_t,
        miopenRNGType_t,
        miopenReduceCalculationNanPropagation_t,
        miopenReduceCalculationOp_t,
        miopenReduceExtremeOp_t,
        miopenLossReductionMode_t,
    )
}

#: Member names that only the 3.5 header declares (enum name -> member names).
ADDED_IN_3_5: dict[str, frozenset[str]] = {
    "miopenDataType_t": frozenset({"miopenFloat8_fnuz", "miopenBFloat8_fnuz"}),
    "miopenActivationMode_t": frozenset({"miopenActivationCLAMP"}),
    "miopenConvolutionFindMode_t": frozenset(
        {"miopenConvolutionFindModeTrustVerify", "miopenConvolutionFindModeTrustVerifyFull"}
    ),
    "miopenTuningPolicy_t": frozenset(miopenTuningPolicy_t.__members__),
}

#: Member names only the 3.4 header declares (renamed in 3.5, same value).
RENAMED_IN_3_5: dict[str, dict[str, str]] = {
    "miopenDataType_t": {"miopenFloat8": "miopenFloat8_fnuz", "miopenBFloat8": "miopenBFloat8_fnuz"},
}
