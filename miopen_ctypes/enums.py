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
    "miopenAlphaBetaCase_t",
    "miopenBackendAttributeName_t",
    "miopenBackendAttributeType_t",
    "miopenBackendDescriptorType_t",
    "miopenBackendHeurMode_t",
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
    "miopenMhaMask_t",
    "miopenNanPropagation_t",
    "miopenNormMode_t",
    "miopenPaddingMode_t",
    "miopenPointwiseMode_t",
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
    "miopenRngDistribution_t",
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


class miopenMhaMask_t(IntEnum):
    """``miopenMhaMask_t``."""

    miopenMhaMaskNone = 0
    miopenMhaMaskCausal = 1


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


class miopenBackendDescriptorType_t(IntEnum):
    """``miopenBackendDescriptorType_t`` (beta API)."""

    MIOPEN_BACKEND_CONVOLUTION_DESCRIPTOR = 0
    MIOPEN_BACKEND_ENGINE_DESCRIPTOR = 1
    MIOPEN_BACKEND_ENGINECFG_DESCRIPTOR = 2
    MIOPEN_BACKEND_ENGINEHEUR_DESCRIPTOR = 3
    MIOPEN_BACKEND_EXECUTION_PLAN_DESCRIPTOR = 4
    MIOPEN_BACKEND_INTERMEDIATE_INFO_DESCRIPTOR = 5
    MIOPEN_BACKEND_KNOB_CHOICE_DESCRIPTOR = 6
    MIOPEN_BACKEND_KNOB_INFO_DESCRIPTOR = 7
    MIOPEN_BACKEND_LAYOUT_INFO_DESCRIPTOR = 8
    MIOPEN_BACKEND_MATMUL_DESCRIPTOR = 9
    MIOPEN_BACKEND_OPERATION_CONCAT_DESCRIPTOR = 10
    MIOPEN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR = 11
    MIOPEN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR = 12
    MIOPEN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR = 13
    MIOPEN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR = 14
    MIOPEN_BACKEND_OPERATION_MATMUL_DESCRIPTOR = 15
    MIOPEN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR = 16
    MIOPEN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR = 17
    MIOPEN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR = 18
    MIOPEN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR = 19
    MIOPEN_BACKEND_OPERATION_RESAMPLE_BWD_DESCRIPTOR = 20
    MIOPEN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR = 21
    MIOPEN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR = 22
    MIOPEN_BACKEND_OPERATION_RNG_DESCRIPTOR = 23
    MIOPEN_BACKEND_OPERATION_SIGNAL_DESCRIPTOR = 24
    MIOPEN_BACKEND_OPERATIONGRAPH_DESCRIPTOR = 25
    MIOPEN_BACKEND_POINTWISE_DESCRIPTOR = 26
    MIOPEN_BACKEND_REDUCTION_DESCRIPTOR = 27
    MIOPEN_BACKEND_RESAMPLE_DESCRIPTOR = 28
    MIOPEN_BACKEND_RNG_DESCRIPTOR = 29
    MIOPEN_BACKEND_TENSOR_DESCRIPTOR = 30
    MIOPEN_BACKEND_VARIANT_PACK_DESCRIPTOR = 31


class miopenBackendAttributeName_t(IntEnum):
    """``miopenBackendAttributeName_t`` (beta API)."""

    MIOPEN_ATTR_POINTWISE_MODE = 0
    MIOPEN_ATTR_POINTWISE_MATH_PREC = 1
    MIOPEN_ATTR_POINTWISE_NAN_PROPAGATION = 2
    MIOPEN_ATTR_POINTWISE_RELU_LOWER_CLIP = 3
    MIOPEN_ATTR_POINTWISE_RELU_UPPER_CLIP = 4
    MIOPEN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE = 5
    MIOPEN_ATTR_POINTWISE_ELU_ALPHA = 6
    MIOPEN_ATTR_POINTWISE_SOFTPLUS_BETA = 7
    MIOPEN_ATTR_POINTWISE_SWISH_BETA = 8
    MIOPEN_ATTR_POINTWISE_AXIS = 9
    MIOPEN_ATTR_CONVOLUTION_COMP_TYPE = 100
    MIOPEN_ATTR_CONVOLUTION_CONV_MODE = 101
    MIOPEN_ATTR_CONVOLUTION_DILATIONS = 102
    MIOPEN_ATTR_CONVOLUTION_FILTER_STRIDES = 103
    MIOPEN_ATTR_CONVOLUTION_POST_PADDINGS = 104
    MIOPEN_ATTR_CONVOLUTION_PRE_PADDINGS = 105
    MIOPEN_ATTR_CONVOLUTION_SPATIAL_DIMS = 106
    MIOPEN_ATTR_ENGINEHEUR_MODE = 200
    MIOPEN_ATTR_ENGINEHEUR_OPERATION_GRAPH = 201
    MIOPEN_ATTR_ENGINEHEUR_RESULTS = 202
    MIOPEN_ATTR_ENGINEHEUR_SM_COUNT_TARGET = 203
    MIOPEN_ATTR_ENGINECFG_ENGINE = 300
    MIOPEN_ATTR_ENGINECFG_INTERMEDIATE_INFO = 301
    MIOPEN_ATTR_ENGINECFG_KNOB_CHOICES = 302
    MIOPEN_ATTR_EXECUTION_PLAN_HANDLE = 400
    MIOPEN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG = 401
    MIOPEN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE = 402
    MIOPEN_ATTR_EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS = 403
    MIOPEN_ATTR_EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS = 404
    MIOPEN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION = 405
    MIOPEN_ATTR_INTERMEDIATE_INFO_UNIQUE_ID = 500
    MIOPEN_ATTR_INTERMEDIATE_INFO_SIZE = 501
    MIOPEN_ATTR_INTERMEDIATE_INFO_DEPENDENT_DATA_UIDS = 502
    MIOPEN_ATTR_INTERMEDIATE_INFO_DEPENDENT_ATTRIBUTES = 503
    MIOPEN_ATTR_KNOB_CHOICE_KNOB_TYPE = 600
    MIOPEN_ATTR_KNOB_CHOICE_KNOB_VALUE = 601
    MIOPEN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA = 700
    MIOPEN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA = 701
    MIOPEN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC = 702
    MIOPEN_ATTR_OPERATION_CONVOLUTION_FORWARD_W = 703
    MIOPEN_ATTR_OPERATION_CONVOLUTION_FORWARD_X = 704
    MIOPEN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y = 705
    MIOPEN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA = 706
    MIOPEN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA = 707
    MIOPEN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC = 708
    MIOPEN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W = 709
    MIOPEN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX = 710
    MIOPEN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY = 711
    MIOPEN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA = 712
    MIOPEN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA = 713
    MIOPEN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC = 714
    MIOPEN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW = 715
    MIOPEN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X = 716
    MIOPEN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY = 717
    MIOPEN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR = 750
    MIOPEN_ATTR_OPERATION_POINTWISE_XDESC = 751
    MIOPEN_ATTR_OPERATION_POINTWISE_BDESC = 752
    MIOPEN_ATTR_OPERATION_POINTWISE_YDESC = 753
    MIOPEN_ATTR_OPERATION_POINTWISE_ALPHA1 = 754
    MIOPEN_ATTR_OPERATION_POINTWISE_ALPHA2 = 755
    MIOPEN_ATTR_OPERATION_POINTWISE_DXDESC = 756
    MIOPEN_ATTR_OPERATION_POINTWISE_DYDESC = 757
    MIOPEN_ATTR_OPERATION_POINTWISE_TDESC = 758
    MIOPEN_ATTR_OPERATION_GENSTATS_MODE = 770
    MIOPEN_ATTR_OPERATION_GENSTATS_MATH_PREC = 771
    MIOPEN_ATTR_OPERATION_GENSTATS_XDESC = 772
    MIOPEN_ATTR_OPERATION_GENSTATS_SUMDESC = 773
    MIOPEN_ATTR_OPERATION_GENSTATS_SQSUMDESC = 774
    MIOPEN_ATTR_OPERATION_BN_FINALIZE_STATS_MODE = 780
    MIOPEN_ATTR_OPERATION_BN_FINALIZE_MATH_PREC = 781
    MIOPEN_ATTR_OPERATION_BN_FINALIZE_Y_SUM_DESC = 782
    MIOPEN_ATTR_OPERATION_BN_FINALIZE_Y_SQ_SUM_DESC = 783
    MIOPEN_ATTR_OPERATION_BN_FINALIZE_SCALE_DESC = 784
    MIOPEN_ATTR_OPERATION_BN_FINALIZE_BIAS_DESC = 785
    MIOPEN_ATTR_OPERATION_BN_FINALIZE_PREV_RUNNING_MEAN_DESC = 786
    MIOPEN_ATTR_OPERATION_BN_FINALIZE_PREV_RUNNING_VAR_DESC = 787
    MIOPEN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_MEAN_DESC = 788
    MIOPEN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_VAR_DESC = 789
    MIOPEN_ATTR_OPERATION_BN_FINALIZE_SAVED_MEAN_DESC = 790
    MIOPEN_ATTR_OPERATION_BN_FINALIZE_SAVED_INV_STD_DESC = 791
    MIOPEN_ATTR_OPERATION_BN_FINALIZE_EQ_SCALE_DESC = 792
    MIOPEN_ATTR_OPERATION_BN_FINALIZE_EQ_BIAS_DESC = 793
    MIOPEN_ATTR_OPERATION_BN_FINALIZE_ACCUM_COUNT_DESC = 794
    MIOPEN_ATTR_OPERATION_BN_FINALIZE_EPSILON_DESC = 795
    MIOPEN_ATTR_OPERATION_BN_FINALIZE_EXP_AVERATE_FACTOR_DESC = 796
    MIOPEN_ATTR_OPERATIONGRAPH_HANDLE = 800
    MIOPEN_ATTR_OPERATIONGRAPH_OPS = 801
    MIOPEN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT = 802
    MIOPEN_ATTR_TENSOR_BYTE_ALIGNMENT = 900
    MIOPEN_ATTR_TENSOR_DATA_TYPE = 901
    MIOPEN_ATTR_TENSOR_DIMENSIONS = 902
    MIOPEN_ATTR_TENSOR_STRIDES = 903
    MIOPEN_ATTR_TENSOR_VECTOR_COUNT = 904
    MIOPEN_ATTR_TENSOR_VECTORIZED_DIMENSION = 905
    MIOPEN_ATTR_TENSOR_UNIQUE_ID = 906
    MIOPEN_ATTR_TENSOR_IS_VIRTUAL = 907
    MIOPEN_ATTR_TENSOR_IS_BY_VALUE = 908
    MIOPEN_ATTR_TENSOR_REORDERING_MODE = 909
    MIOPEN_ATTR_TENSOR_RAGGED_OFFSET_DESC = 910
    MIOPEN_ATTR_VARIANT_PACK_UNIQUE_IDS = 1000
    MIOPEN_ATTR_VARIANT_PACK_DATA_POINTERS = 1001
    MIOPEN_ATTR_VARIANT_PACK_INTERMEDIATES = 1002
    MIOPEN_ATTR_VARIANT_PACK_WORKSPACE = 1003
    MIOPEN_ATTR_LAYOUT_INFO_TENSOR_UID = 1100
    MIOPEN_ATTR_LAYOUT_INFO_TYPES = 1101
    MIOPEN_ATTR_KNOB_INFO_TYPE = 1200
    MIOPEN_ATTR_KNOB_INFO_MAXIMUM_VALUE = 1201
    MIOPEN_ATTR_KNOB_INFO_MINIMUM_VALUE = 1202
    MIOPEN_ATTR_KNOB_INFO_STRIDE = 1203
    MIOPEN_ATTR_ENGINE_OPERATION_GRAPH = 1300
    MIOPEN_ATTR_ENGINE_GLOBAL_INDEX = 1301
    MIOPEN_ATTR_ENGINE_KNOB_INFO = 1302
    MIOPEN_ATTR_ENGINE_NUMERICAL_NOTE = 1303
    MIOPEN_ATTR_ENGINE_LAYOUT_INFO = 1304
    MIOPEN_ATTR_ENGINE_BEHAVIOR_NOTE = 1305
    MIOPEN_ATTR_ENGINE_SM_COUNT_TARGET = 1306
    MIOPEN_ATTR_MATMUL_COMP_TYPE = 1500
    MIOPEN_ATTR_MATMUL_PADDING_VALUE = 1501
    MIOPEN_ATTR_OPERATION_MATMUL_ADESC = 1520
    MIOPEN_ATTR_OPERATION_MATMUL_BDESC = 1521
    MIOPEN_ATTR_OPERATION_MATMUL_CDESC = 1522
    MIOPEN_ATTR_OPERATION_MATMUL_DESC = 1523
    MIOPEN_ATTR_OPERATION_MATMUL_IRREGULARLY_STRIDED_BATCH_COUNT = 1524
    MIOPEN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC = 1525
    MIOPEN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC = 1526
    MIOPEN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC = 1527
    MIOPEN_ATTR_REDUCTION_OPERATOR = 1600
    MIOPEN_ATTR_REDUCTION_COMP_TYPE = 1601
    MIOPEN_ATTR_OPERATION_REDUCTION_XDESC = 1610
    MIOPEN_ATTR_OPERATION_REDUCTION_YDESC = 1611
    MIOPEN_ATTR_OPERATION_REDUCTION_DESC = 1612
    MIOPEN_ATTR_OPERATION_BN_BWD_WEIGHTS_MATH_PREC = 1620
    MIOPEN_ATTR_OPERATION_BN_BWD_WEIGHTS_MEAN_DESC = 1621
    MIOPEN_ATTR_OPERATION_BN_BWD_WEIGHTS_INVSTD_DESC = 1622
    MIOPEN_ATTR_OPERATION_BN_BWD_WEIGHTS_BN_SCALE_DESC = 1623
    MIOPEN_ATTR_OPERATION_BN_BWD_WEIGHTS_X_DESC = 1624
    MIOPEN_ATTR_OPERATION_BN_BWD_WEIGHTS_DY_DESC = 1625
    MIOPEN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_SCALE_DESC = 1626
    MIOPEN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_BIAS_DESC = 1627
    MIOPEN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_DY_SCALE_DESC = 1628
    MIOPEN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_X_SCALE_DESC = 1629
    MIOPEN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_BIAS = 1630
    MIOPEN_ATTR_RESAMPLE_MODE = 1700
    MIOPEN_ATTR_RESAMPLE_COMP_TYPE = 1701
    MIOPEN_ATTR_RESAMPLE_SPATIAL_DIMS = 1702
    MIOPEN_ATTR_RESAMPLE_POST_PADDINGS = 1703
    MIOPEN_ATTR_RESAMPLE_PRE_PADDINGS = 1704
    MIOPEN_ATTR_RESAMPLE_STRIDES = 1705
    MIOPEN_ATTR_RESAMPLE_WINDOW_DIMS = 1706
    MIOPEN_ATTR_RESAMPLE_NAN_PROPAGATION = 1707
    MIOPEN_ATTR_RESAMPLE_PADDING_MODE = 1708
    MIOPEN_ATTR_OPERATION_RESAMPLE_FWD_XDESC = 1710
    MIOPEN_ATTR_OPERATION_RESAMPLE_FWD_YDESC = 1711
    MIOPEN_ATTR_OPERATION_RESAMPLE_FWD_IDXDESC = 1712
    MIOPEN_ATTR_OPERATION_RESAMPLE_FWD_ALPHA = 1713
    MIOPEN_ATTR_OPERATION_RESAMPLE_FWD_BETA = 1714
    MIOPEN_ATTR_OPERATION_RESAMPLE_FWD_DESC = 1716
    MIOPEN_ATTR_OPERATION_RESAMPLE_BWD_DXDESC = 1720
    MIOPEN_ATTR_OPERATION_RESAMPLE_BWD_DYDESC = 1721
    MIOPEN_ATTR_OPERATION_RESAMPLE_BWD_IDXDESC = 1722
    MIOPEN_ATTR_OPERATION_RESAMPLE_BWD_ALPHA = 1723
    MIOPEN_ATTR_OPERATION_RESAMPLE_BWD_BETA = 1724
    MIOPEN_ATTR_OPERATION_RESAMPLE_BWD_DESC = 1725
    MIOPEN_ATTR_OPERATION_RESAMPLE_BWD_XDESC = 1726
    MIOPEN_ATTR_OPERATION_RESAMPLE_BWD_YDESC = 1727
    MIOPEN_ATTR_OPERATION_CONCAT_AXIS = 1800
    MIOPEN_ATTR_OPERATION_CONCAT_INPUT_DESCS = 1801
    MIOPEN_ATTR_OPERATION_CONCAT_INPLACE_INDEX = 1802
    MIOPEN_ATTR_OPERATION_CONCAT_OUTPUT_DESC = 1803
    MIOPEN_ATTR_OPERATION_SIGNAL_MODE = 1900
    MIOPEN_ATTR_OPERATION_SIGNAL_FLAGDESC = 1901
    MIOPEN_ATTR_OPERATION_SIGNAL_VALUE = 1902
    MIOPEN_ATTR_OPERATION_SIGNAL_XDESC = 1903
    MIOPEN_ATTR_OPERATION_SIGNAL_YDESC = 1904
    MIOPEN_ATTR_OPERATION_NORM_FWD_MODE = 2000
    MIOPEN_ATTR_OPERATION_NORM_FWD_PHASE = 2001
    MIOPEN_ATTR_OPERATION_NORM_FWD_XDESC = 2002
    MIOPEN_ATTR_OPERATION_NORM_FWD_MEAN_DESC = 2003
    MIOPEN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC = 2004
    MIOPEN_ATTR_OPERATION_NORM_FWD_SCALE_DESC = 2005
    MIOPEN_ATTR_OPERATION_NORM_FWD_BIAS_DESC = 2006
    MIOPEN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC = 2007
    MIOPEN_ATTR_OPERATION_NORM_FWD_EXP_AVG_FACTOR_DESC = 2008
    MIOPEN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_MEAN_DESC = 2009
    MIOPEN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_VAR_DESC = 2010
    MIOPEN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC = 2011
    MIOPEN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_VAR_DESC = 2012
    MIOPEN_ATTR_OPERATION_NORM_FWD_YDESC = 2013
    MIOPEN_ATTR_OPERATION_NORM_FWD_PEER_STAT_DESCS = 2014
    MIOPEN_ATTR_OPERATION_NORM_BWD_MODE = 2100
    MIOPEN_ATTR_OPERATION_NORM_BWD_XDESC = 2101
    MIOPEN_ATTR_OPERATION_NORM_BWD_MEAN_DESC = 2102
    MIOPEN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC = 2103
    MIOPEN_ATTR_OPERATION_NORM_BWD_DYDESC = 2104
    MIOPEN_ATTR_OPERATION_NORM_BWD_SCALE_DESC = 2105
    MIOPEN_ATTR_OPERATION_NORM_BWD_EPSILON_DESC = 2106
    MIOPEN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC = 2107
    MIOPEN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC = 2108
    MIOPEN_ATTR_OPERATION_NORM_BWD_DXDESC = 2109
    MIOPEN_ATTR_OPERATION_NORM_BWD_PEER_STAT_DESCS = 2110
    MIOPEN_ATTR_OPERATION_RESHAPE_XDESC = 2200
    MIOPEN_ATTR_OPERATION_RESHAPE_YDESC = 2201
    MIOPEN_ATTR_RNG_DISTRIBUTION = 2300
    MIOPEN_ATTR_RNG_NORMAL_DIST_MEAN = 2301
    MIOPEN_ATTR_RNG_NORMAL_DIST_STANDARD_DEVIATION = 2302
    MIOPEN_ATTR_RNG_UNIFORM_DIST_MAXIMUM = 2303
    MIOPEN_ATTR_RNG_UNIFORM_DIST_MINIMUM = 2304
    MIOPEN_ATTR_RNG_BERNOULLI_DIST_PROBABILITY = 2305
    MIOPEN_ATTR_OPERATION_RNG_YDESC = 2310
    MIOPEN_ATTR_OPERATION_RNG_SEED = 2311
    MIOPEN_ATTR_OPERATION_RNG_DESC = 2312
    MIOPEN_ATTR_OPERATION_RNG_OFFSET_DESC = 2313


class miopenBackendAttributeType_t(IntEnum):
    """``miopenBackendAttributeType_t`` (beta API)."""

    MIOPEN_TYPE_HANDLE = 0
    MIOPEN_TYPE_DATA_TYPE = 1
    MIOPEN_TYPE_BOOLEAN = 2
    MIOPEN_TYPE_INT64 = 3
    MIOPEN_TYPE_FLOAT = 4
    MIOPEN_TYPE_DOUBLE = 5
    MIOPEN_TYPE_VOID_PTR = 6
    MIOPEN_TYPE_CONVOLUTION_MODE = 7
    MIOPEN_TYPE_HEUR_MODE = 8
    MIOPEN_TYPE_KNOB_TYPE = 9
    MIOPEN_TYPE_NAN_PROPOGATION = 10
    MIOPEN_TYPE_NUMERICAL_NOTE = 11
    MIOPEN_TYPE_LAYOUT_TYPE = 12
    MIOPEN_TYPE_ATTRIB_NAME = 13
    MIOPEN_TYPE_POINTWISE_MODE = 14
    MIOPEN_TYPE_BACKEND_DESCRIPTOR = 15
    MIOPEN_TYPE_GENSTATS_MODE = 16
    MIOPEN_TYPE_BN_FINALIZE_STATS_MODE = 17
    MIOPEN_TYPE_REDUCTION_OPERATOR_TYPE = 18
    MIOPEN_TYPE_BEHAVIOR_NOTE = 19
    MIOPEN_TYPE_TENSOR_REORDERING_MODE = 20
    MIOPEN_TYPE_RESAMPLE_MODE = 21
    MIOPEN_TYPE_PADDING_MODE = 22
    MIOPEN_TYPE_INT32 = 23
    MIOPEN_TYPE_CHAR = 24
    MIOPEN_TYPE_SIGNAL_MODE = 25
    MIOPEN_TYPE_FRACTION = 26
    MIOPEN_TYPE_NORM_MODE = 27
    MIOPEN_TYPE_NORM_FWD_PHASE = 28
    MIOPEN_TYPE_RNG_DISTRIBUTION = 29


class miopenPointwiseMode_t(IntEnum):
    """``miopenPointwiseMode_t`` (beta API)."""

    MIOPEN_POINTWISE_ADD = 0
    MIOPEN_POINTWISE_ADD_SQUARE = 1
    MIOPEN_POINTWISE_DIV = 2
    MIOPEN_POINTWISE_MAX = 3
    MIOPEN_POINTWISE_MIN = 4
    MIOPEN_POINTWISE_MOD = 5
    MIOPEN_POINTWISE_MUL = 6
    MIOPEN_POINTWISE_POW = 7
    MIOPEN_POINTWISE_SUB = 8
    MIOPEN_POINTWISE_ABS = 9
    MIOPEN_POINTWISE_CEIL = 10
    MIOPEN_POINTWISE_COS = 11
    MIOPEN_POINTWISE_EXP = 12
    MIOPEN_POINTWISE_FLOOR = 13
    MIOPEN_POINTWISE_LOG = 14
    MIOPEN_POINTWISE_NEG = 15
    MIOPEN_POINTWISE_RSQRT = 16
    MIOPEN_POINTWISE_SIN = 17
    MIOPEN_POINTWISE_SQRT = 18
    MIOPEN_POINTWISE_TAN = 19
    MIOPEN_POINTWISE_ERF = 20
    MIOPEN_POINTWISE_IDENTITY = 21
    MIOPEN_POINTWISE_RELU_FWD = 22
    MIOPEN_POINTWISE_TANH_FWD = 23
    MIOPEN_POINTWISE_SIGMOID_FWD = 24
    MIOPEN_POINTWISE_ELU_FWD = 25
    MIOPEN_POINTWISE_GELU_FWD = 26
    MIOPEN_POINTWISE_SOFTPLUS_FWD = 27
    MIOPEN_POINTWISE_SWISH_FWD = 28
    MIOPEN_POINTWISE_GELU_APPROX_TANH_FWD = 29
    MIOPEN_POINTWISE_RELU_BWD = 30
    MIOPEN_POINTWISE_TANH_BWD = 31
    MIOPEN_POINTWISE_SIGMOID_BWD = 32
    MIOPEN_POINTWISE_ELU_BWD = 33
    MIOPEN_POINTWISE_GELU_BWD = 34
    MIOPEN_POINTWISE_SOFTPLUS_BWD = 35
    MIOPEN_POINTWISE_SWISH_BWD = 36
    MIOPEN_POINTWISE_GELU_APPROX_TANH_BWD = 37
    MIOPEN_POINTWISE_CMP_EQ = 38
    MIOPEN_POINTWISE_CMP_NEQ = 39
    MIOPEN_POINTWISE_CMP_GT = 40
    MIOPEN_POINTWISE_CMP_GE = 41
    MIOPEN_POINTWISE_CMP_LT = 42
    MIOPEN_POINTWISE_CMP_LE = 43
    MIOPEN_POINTWISE_LOGICAL_AND = 44
    MIOPEN_POINTWISE_LOGICAL_OR = 45
    MIOPEN_POINTWISE_LOGICAL_NOT = 46
    MIOPEN_POINTWISE_GEN_INDEX = 47
    MIOPEN_POINTWISE_BINARY_SELECT = 48
    MIOPEN_POINTWISE_RECIPROCAL = 49


class miopenRngDistribution_t(IntEnum):
    """``miopenRngDistribution_t`` (beta API)."""

    MIOPEN_RNG_DISTRIBUTION_BERNOULLI = 0
    MIOPEN_RNG_DISTRIBUTION_UNIFORM = 1
    MIOPEN_RNG_DISTRIBUTION_NORMAL = 2


class miopenAlphaBetaCase_t(IntEnum):
    """``miopenAlphaBetaCase_t`` (beta API)."""

    DEFAULT = 0
    SCALE = 1
    BILINEAR = 2
    ERROR_STATE = 3


class miopenBackendHeurMode_t(IntEnum):
    """``miopenBackendHeurMode_t`` (beta API)."""

    MIOPEN_HEUR_MODE_INSTANT = 0
    MIOPEN_HEUR_MODE_B = 1
    MIOPEN_HEUR_MODE_FALLBACK = 2
    MIOPEN_HEUR_MODE_A = 3
    MIOPEN_HEUR_MODES_COUNT = 4


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
        miopenMhaMask_t,
        miopenReduceCalculationNanPropagation_t,
        miopenReduceCalculationOp_t,
        miopenReduceExtremeOp_t,
        miopenBackendDescriptorType_t,
        miopenBackendAttributeName_t,
        miopenBackendAttributeType_t,
        miopenPointwiseMode_t,
        miopenRngDistribution_t,
        miopenAlphaBetaCase_t,
        miopenBackendHeurMode_t,
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
