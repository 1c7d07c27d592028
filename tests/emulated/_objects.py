"""Descriptor objects (tensor, convolution, activation) and the library's shape rules.

The rules (defaults, accepted values, statuses) were read off the real libMIOpen 3.4.0 and 3.5.1
under tests/live (see test_emulated_crosscheck.py, which keeps them honest).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

from ._core import BAD_PARM, INVALID_VALUE, UNKNOWN_ERROR, Status, require

__all__ = [
    "BFLOAT16",
    "DTYPES",
    "FLOAT",
    "HALF",
    "LAYOUTS",
    "ActivationDesc",
    "ConvDesc",
    "TensorDesc",
    "conv_output_dims",
    "strides_for",
]

#: miopenDataType_t -> numpy dtype (the element size MIOpen uses for byte counts).
DTYPES: dict[int, np.dtype] = {
    0: np.dtype(np.float16),
    1: np.dtype(np.float32),
    2: np.dtype(np.int32),
    3: np.dtype(np.int8),
    5: np.dtype(ml_dtypes.bfloat16),
    6: np.dtype(np.float64),
    7: np.dtype(ml_dtypes.float8_e4m3fnuz),
    8: np.dtype(ml_dtypes.float8_e5m2fnuz),
    9: np.dtype(np.int64),
}
FLOAT, HALF, BFLOAT16 = 1, 0, 5

# miopenTensorLayout_t -> (rank, memory order of the logical N,C,(D),H,W axes)
LAYOUTS: dict[int, tuple[int, tuple[int, ...]]] = {
    0: (4, (0, 1, 2, 3)),  # NCHW
    1: (4, (0, 2, 3, 1)),  # NHWC
    2: (4, (1, 2, 3, 0)),  # CHWN
    7: (5, (0, 1, 2, 3, 4)),  # NCDHW
    8: (5, (0, 2, 3, 4, 1)),  # NDHWC
}


def strides_for(dims: tuple[int, ...], order: tuple[int, ...]) -> tuple[int, ...]:
    strides = [0] * len(dims)
    step = 1
    for axis in reversed(order):
        strides[axis] = step
        step *= dims[axis]
    return tuple(strides)


@dataclass
class TensorDesc:
    """miopenTensorDescriptor: a fresh one is 0-d float (GetTensorNumBytes = 4, as the library)."""

    dtype: int = FLOAT
    dims: tuple[int, ...] = ()
    strides: tuple[int, ...] = ()

    @property
    def np_dtype(self) -> np.dtype:
        """The numpy dtype of the elements."""
        return DTYPES[self.dtype]

    @property
    def element_span(self) -> int:
        """Elements from the first to one past the last (stride padding included)."""
        return 1 + sum((d - 1) * s for d, s in zip(self.dims, self.strides, strict=True))

    @property
    def num_bytes(self) -> int:
        """GetTensorNumBytes: element span x sizeof(dtype)."""
        return self.element_span * self.np_dtype.itemsize

    @property
    def is_packed(self) -> bool:
        """Dense (any axis order): the span equals the element count."""
        return self.element_span == int(np.prod(self.dims, dtype=np.int64))

    @property
    def is_nchw_packed(self) -> bool:
        """Packed in channel-first (N,C,(D),H,W) order."""
        return self.strides == strides_for(self.dims, tuple(range(len(self.dims))))

    def same_as(self, other: TensorDesc) -> bool:
        """Equal dtype, dims and strides."""
        return (self.dtype, self.dims, self.strides) == (other.dtype, other.dims, other.strides)

    def set(self, dtype: int, dims: tuple[int, ...], strides: tuple[int, ...] | None) -> None:
        """Validate like the library, then replace the contents (a failed set changes nothing)."""
        require(dtype in DTYPES, "Unsupported data type")
        require(dims, "nbDims must be > 0", INVALID_VALUE)
        require(all(d > 0 for d in dims), "Lengths must be > 0")
        if strides is None:
            strides = strides_for(dims, tuple(range(len(dims))))
        require(len(strides) == len(dims), "Lengths and strides dimensions must be equal")
        require(all(s > 0 for s in strides), "Strides must be > 0")
        self.dtype, self.dims, self.strides = dtype, tuple(dims), tuple(strides)


@dataclass
class ConvDesc:
    """miopenConvolutionDescriptor with the library's defaults (2-D, pad 0, stride/dilation 1)."""

    spatial_dim: int = 2
    pads: tuple[int, ...] = (0, 0)
    strides: tuple[int, ...] = (1, 1)
    dilations: tuple[int, ...] = (1, 1)
    mode: int = 0
    group_count: int = 1
    find_mode: int = 5  # miopenConvolutionFindModeDefault = DynamicHybrid
    attributes: dict[int, int] = field(default_factory=lambda: {0: -1, 1: 0, 2: 1})
    trans_output_pads: tuple[int, ...] = (0, 0)

    def copy(self) -> ConvDesc:
        """An independent copy (Find 2.0 problems store one)."""
        return copy.deepcopy(self)


def conv_output_dims(conv: ConvDesc, x: TensorDesc, w: TensorDesc) -> tuple[int, ...]:
    """miopenGetConvolutionNdForwardOutputDim, including the library's checks and its clamp to 1."""
    require(x.dims and w.dims, "tensor descriptors are not set")
    if len(x.dims) != conv.spatial_dim + 2 or len(w.dims) != conv.spatial_dim + 2:
        # the library fails building a layout string here; 5-D tensors give UnknownError
        code = UNKNOWN_ERROR if len(x.dims) == 5 else BAD_PARM
        raise Status(code, "mismatched layout string / Unsupported layout")
    require(x.dtype == w.dtype, "Types do not match for the filter")
    in_c, wei_k, wei_c = x.dims[1], w.dims[0], w.dims[1]
    if conv.mode == 1:  # transpose: in_c must equal K; out channels = C_w * groups
        require(in_c == wei_k, "Channels do not match for the filter")
        require(all(adj < s for adj, s in zip(conv.trans_output_pads, conv.strides, strict=True)),
                "Output shape doesn't match due to invalid output padding")
        spatial = [
            conv.strides[i] * (x.dims[2 + i] - 1) + 1 + conv.dilations[i] * (w.dims[2 + i] - 1)
            - 2 * conv.pads[i] + conv.trans_output_pads[i]
            for i in range(conv.spatial_dim)
        ]
        return (x.dims[0], wei_c * conv.group_count, *spatial)
    if conv.group_count > 1:
        require(in_c % wei_c == 0 and wei_k % (in_c // wei_c) == 0, "Channels do not match for the filter")
    else:
        require(in_c == wei_c, "Channels do not match for the filter")
    spatial = []
    for i in range(conv.spatial_dim):
        span = x.dims[2 + i] + 2 * conv.pads[i] - (1 + conv.dilations[i] * (w.dims[2 + i] - 1))
        spatial.append(max(1, span // conv.strides[i] + 1))
    return (x.dims[0], wei_k, *spatial)


@dataclass
class ActivationDesc:
    """miopenActivationDescriptor; ``mode is None`` until set (the library crashes on Get then)."""

    mode: int | None = None
    alpha: float = 0.0
    beta: float = 0.0
    gamma: float = 0.0
