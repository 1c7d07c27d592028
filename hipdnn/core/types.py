"""hipDNN's enumerations, with hipDNN's numeric values (``hipdnn_frontend/Types.hpp``).

Every enum is an :class:`enum.IntEnum`, so a value passes straight into a C ``int`` and prints
its name. :func:`to_data_type` turns the spellings users write (``DataType``, ``"half"``, a numpy
or torch dtype) into a :class:`DataType`.
"""

from __future__ import annotations

import enum
import math
import operator
from collections.abc import Iterable
from typing import Any, TypeVar

from hipdnn.core.errors import ArgumentError, ValidationError

__all__ = [
    "BuildPlanPolicy",
    "ConvolutionMode",
    "DataType",
    "HeurMode",
    "KnobType",
    "KnobValueType",
    "NormFwdPhase",
    "PointwiseMode",
    "ReductionMode",
    "check_float",
    "to_data_type",
    "to_enum",
    "to_int",
    "to_int_tuple",
]

E = TypeVar("E", bound=enum.IntEnum)


def _where(node: str | None, tensor: str | None) -> dict[str, str | None]:
    return {"node": node or None, "tensor": tensor or None}


def to_enum(cls: type[E], value: Any, what: str, *, node: str | None = None,
            tensor: str | None = None) -> E:
    """Coerce ``value`` (a member, its int value, or its name in any case) to enum ``cls``.

    Anything else raises :class:`~hipdnn.core.errors.ValidationError` (also a ValueError) naming
    ``what`` (and the node/tensor when given), the value, and the valid members.

    >>> to_enum(ConvolutionMode, "cross_correlation", "convolution_mode")
    <ConvolutionMode.CROSS_CORRELATION: 1>
    """
    if isinstance(value, cls):
        return value
    try:
        if isinstance(value, str):
            key = value.strip().upper().removeprefix(cls.__name__.upper() + ".")
            if key in cls.__members__:
                return cls[key]
        elif not isinstance(value, (bool, float)):
            return cls(operator.index(value))
    except (TypeError, ValueError):
        pass
    valid = ", ".join(f"{m.name} ({m.value})" for m in cls)
    raise ValidationError(f"{what}: {value!r} is not a {cls.__name__}; valid: {valid}",
                          **_where(node, tensor))


def to_int(value: Any, what: str, *, node: str | None = None, tensor: str | None = None,
           minimum: int | None = None) -> int:
    """``operator.index(value)``: ints, numpy integers, torch.Size entries; never a float,
    bool or str. Raises ValidationError naming ``what``, the value and what is allowed."""
    allowed = "an integer" if minimum is None else f"an integer >= {minimum}"
    if isinstance(value, bool):
        out = None
    else:
        try:
            out = operator.index(value)
        except TypeError:
            out = None
    if out is None:
        raise ArgumentError(f"{what}: {value!r} ({type(value).__name__}) is not an integer; "
                              f"{what} takes {allowed} (int or numpy integer, not float, bool "
                              f"or str)", **_where(node, tensor))
    if minimum is not None and out < minimum:
        raise ValidationError(f"{what}: {out} is out of range; {what} takes {allowed}",
                              **_where(node, tensor))
    return out


def to_int_tuple(values: Any, what: str, *, node: str | None = None,
                 tensor: str | None = None) -> tuple[int, ...]:
    """A sequence of integers (see :func:`to_int`) as a tuple; a str or a scalar is rejected."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise ValidationError(f"{what}: {values!r} is not a sequence of integers; {what} takes "
                              f"a list/tuple of ints (e.g. [1, 1])", **_where(node, tensor))
    items = list(values)
    out = []
    for i, v in enumerate(items):
        try:
            out.append(to_int(v, f"{what}[{i}]"))
        except ValidationError:
            raise ValidationError(f"{what}: {items!r} holds {v!r} ({type(v).__name__}) at "
                                  f"index {i}; {what} takes integers only (int or numpy "
                                  f"integer, not float, bool or str)",
                                  **_where(node, tensor)) from None
    return tuple(out)


def check_float(value: Any, what: str, *, node: str | None = None, low: float | None = None,
                high: float | None = None, low_open: bool = False,
                tensor: str | None = None) -> float | None:
    """``float(value)`` (None stays None), finite and inside [low, high] (``(low, high]`` with
    ``low_open``); else ValidationError naming ``what``, the value and the allowed range."""
    if value is None:
        return None
    lo = "-inf" if low is None else repr(float(low))
    hi = "inf" if high is None else repr(float(high))
    allowed = f"a finite number in {'(' if low_open or low is None else '['}{lo}, {hi}" \
              f"{')' if high is None else ']'}"
    try:
        if isinstance(value, (str, bytes, bool)):
            raise TypeError
        number = float(value)
    except (TypeError, ValueError):
        raise ValidationError(f"{what}: {value!r} is not a number; {what} takes {allowed}",
                              **_where(node, tensor)) from None
    if (not math.isfinite(number) or (low is not None and (number <= low if low_open
                                                            else number < low))
            or (high is not None and number > high)):
        raise ValidationError(f"{what}: {number!r} is out of range; {what} takes {allowed}",
                              **_where(node, tensor))
    return number


class DataType(enum.IntEnum):
    """Tensor element types (values of hipDNN's ``DataType`` / flatbuffer ``data_types.fbs``)."""

    NOT_SET = 0
    FLOAT = 1
    HALF = 2
    BFLOAT16 = 3
    DOUBLE = 4
    UINT8 = 5
    INT32 = 6
    INT8 = 7
    FP8_E4M3 = 8
    FP8_E5M2 = 9
    FP8_E8M0 = 10
    FP4_E2M1 = 11
    FP6_E2M3 = 12
    FP6_E3M2 = 13
    INT4 = 14
    INT64 = 15
    BOOLEAN = 16
    FP8_E4M3_FNUZ = 17
    FP8_E5M2_FNUZ = 18

    @property
    def itemsize(self) -> int:
        """Bytes per element (0 for NOT_SET and for sub-byte types)."""
        return _ITEMSIZE.get(self, 0)

    @property
    def is_floating(self) -> bool:
        """True for FLOAT, HALF, BFLOAT16, DOUBLE and the FP8/FP6/FP4 types."""
        return self in _FLOATING


_ITEMSIZE = {
    DataType.FLOAT: 4, DataType.HALF: 2, DataType.BFLOAT16: 2, DataType.DOUBLE: 8,
    DataType.UINT8: 1, DataType.INT32: 4, DataType.INT8: 1, DataType.FP8_E4M3: 1,
    DataType.FP8_E5M2: 1, DataType.FP8_E8M0: 1, DataType.INT64: 8, DataType.BOOLEAN: 1,
    DataType.FP8_E4M3_FNUZ: 1, DataType.FP8_E5M2_FNUZ: 1,
}
_FLOATING = frozenset({
    DataType.FLOAT, DataType.HALF, DataType.BFLOAT16, DataType.DOUBLE, DataType.FP8_E4M3,
    DataType.FP8_E5M2, DataType.FP8_E8M0, DataType.FP4_E2M1, DataType.FP6_E2M3, DataType.FP6_E3M2,
    DataType.FP8_E4M3_FNUZ, DataType.FP8_E5M2_FNUZ,
})

# Spellings of numpy / torch / ml_dtypes dtypes (by name, so nothing is imported here).
_DTYPE_NAMES = {
    "float32": DataType.FLOAT, "float": DataType.FLOAT, "fp32": DataType.FLOAT,
    "float16": DataType.HALF, "half": DataType.HALF, "fp16": DataType.HALF,
    "bfloat16": DataType.BFLOAT16, "bf16": DataType.BFLOAT16,
    "float64": DataType.DOUBLE, "double": DataType.DOUBLE, "fp64": DataType.DOUBLE,
    "uint8": DataType.UINT8, "int32": DataType.INT32, "int8": DataType.INT8,
    "int64": DataType.INT64, "float8_e4m3fn": DataType.FP8_E4M3, "float8_e5m2": DataType.FP8_E5M2,
    "bool": DataType.BOOLEAN, "float8_e4m3fnuz": DataType.FP8_E4M3_FNUZ,
    "float8_e5m2fnuz": DataType.FP8_E5M2_FNUZ, "float8_e8m0fnu": DataType.FP8_E8M0,
    "not_set": DataType.NOT_SET,
}


def to_data_type(value: Any) -> DataType:
    """Coerce ``value`` to a :class:`DataType`.

    Accepts a DataType, its int value, a name (``"HALF"``, ``"float16"``, ``"bf16"``), a numpy
    dtype or scalar type, a torch dtype (``torch.float16``) or ``None`` (NOT_SET).

    >>> to_data_type("float16")
    <DataType.HALF: 2>
    """
    if value is None:
        return DataType.NOT_SET
    if isinstance(value, DataType):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return to_enum(DataType, value, "data_type")
    if isinstance(value, (bool, float)):
        return to_enum(DataType, value, "data_type")
    if isinstance(value, str):
        name = value
    else:
        # numpy dtype (.name), numpy scalar type (__name__), torch dtype (str "torch.float16")
        name = getattr(value, "name", None) or getattr(value, "__name__", None) or str(value)
        if not isinstance(name, str):
            name = str(value)
    key = name.strip().lower().removeprefix("torch.").removeprefix("datatype.")
    if key.upper() in DataType.__members__:
        return DataType[key.upper()]
    found = _DTYPE_NAMES.get(key)
    if found is None:
        known = ", ".join(m.name for m in DataType)
        raise ValidationError(f"data_type: unknown data type {value!r}; use one of {known} or "
                              f"a numpy/torch dtype")
    return found


class PointwiseMode(enum.IntEnum):
    """Element-wise operations (hipDNN ``PointwiseMode``). Clamp is RELU_FWD with both clips."""

    NOT_SET = 0
    ABS = 1
    ADD = 2
    ADD_SQUARE = 3
    BINARY_SELECT = 4
    CEIL = 5
    CMP_EQ = 6
    CMP_GE = 7
    CMP_GT = 8
    CMP_LE = 9
    CMP_LT = 10
    CMP_NEQ = 11
    DIV = 12
    ELU_BWD = 13
    ELU_FWD = 14
    ERF = 15
    EXP = 16
    FLOOR = 17
    GELU_APPROX_TANH_BWD = 18
    GELU_APPROX_TANH_FWD = 19
    GELU_BWD = 20
    GELU_FWD = 21
    GEN_INDEX = 22
    IDENTITY = 23
    LOG = 24
    LOGICAL_AND = 25
    LOGICAL_NOT = 26
    LOGICAL_OR = 27
    MAX = 28
    MIN = 29
    MUL = 30
    NEG = 31
    RECIPROCAL = 32
    RELU_BWD = 33
    RELU_FWD = 34
    RSQRT = 35
    SIGMOID_BWD = 36
    SIGMOID_FWD = 37
    SIN = 38
    SOFTPLUS_BWD = 39
    SOFTPLUS_FWD = 40
    SQRT = 41
    SUB = 42
    SWISH_BWD = 43
    SWISH_FWD = 44
    TAN = 45
    TANH_BWD = 46
    TANH_FWD = 47

    @property
    def arity(self) -> int:
        """Number of tensor inputs the mode takes (1, 2 or 3)."""
        if self in _TERNARY:
            return 3
        if self in _BINARY:
            return 2
        return 1


_TERNARY = frozenset({PointwiseMode.BINARY_SELECT})
_BINARY = frozenset({
    PointwiseMode.ADD, PointwiseMode.ADD_SQUARE, PointwiseMode.CMP_EQ, PointwiseMode.CMP_GE,
    PointwiseMode.CMP_GT, PointwiseMode.CMP_LE, PointwiseMode.CMP_LT, PointwiseMode.CMP_NEQ,
    PointwiseMode.DIV, PointwiseMode.ELU_BWD, PointwiseMode.GELU_APPROX_TANH_BWD,
    PointwiseMode.GELU_BWD, PointwiseMode.LOGICAL_AND,
    PointwiseMode.LOGICAL_OR, PointwiseMode.MAX, PointwiseMode.MIN, PointwiseMode.MUL,
    PointwiseMode.RELU_BWD, PointwiseMode.SIGMOID_BWD, PointwiseMode.SOFTPLUS_BWD,
    PointwiseMode.SUB, PointwiseMode.SWISH_BWD, PointwiseMode.TANH_BWD,
})


class ConvolutionMode(enum.IntEnum):
    """How the filter is applied; MIOpen engines support CROSS_CORRELATION only."""

    NOT_SET = 0
    CROSS_CORRELATION = 1
    CONVOLUTION = 2


class HeurMode(enum.IntEnum):
    """Heuristic modes. hipDNN maps every mode to its static engine order (FALLBACK)."""

    FALLBACK = 0
    A = 1
    B = 2
    OPENSOURCE = 3


class BuildPlanPolicy(enum.IntEnum):
    """Which plans ``build_plans`` builds: the heuristics' first choice, or every candidate."""

    HEURISTICS_CHOICE = 0
    ALL = 1


class KnobValueType(enum.IntEnum):
    """Value type of an engine knob."""

    NOT_SET = 0
    INT64 = 1
    FLOAT64 = 2
    STRING = 3


class NormFwdPhase(enum.IntEnum):
    """Forward phase of a normalization (hipDNN ``NormFwdPhase``)."""

    NOT_SET = 0
    INFERENCE = 1
    TRAINING = 2


class ReductionMode(enum.IntEnum):
    """How ``reduction`` combines the reduced elements (cudnn-frontend's ``reduction_mode``,
    same order): ADD sum, MUL product, MIN/MAX, AMAX max of absolute values, AVG mean, NORM1
    sum of absolute values, NORM2 square root of the sum of squares, MUL_NO_ZEROS product of
    the non-zero elements."""

    NOT_SET = 0
    ADD = 1
    MUL = 2
    MIN = 3
    MAX = 4
    AMAX = 5
    AVG = 6
    NORM1 = 7
    NORM2 = 8
    MUL_NO_ZEROS = 9


class TensorReordering(enum.IntEnum):
    """cudnn-frontend's ``tensor_reordering`` (its values). Only NONE is supported here: no
    engine reads the reordered (vectorized) INT8x32 / F16x16 / F8_128x4 layouts."""

    NONE = 0
    INT8x32 = 1
    F16x16 = 2
    F8_128x4 = 3


class KnobType(enum.IntEnum):
    """cudnn-frontend's ``knob_type`` names (its order). No engine here offers these knobs: ours
    are named (``global.benchmarking``, ``global.workspace_size_limit``), so a script that
    looks for ``KERNEL_CFG`` finds none, and setting one is a KnobError naming the real knobs."""

    NOT_SET = 0
    SWIZZLE = 1
    TILE_SIZE = 2
    EDGE = 3
    MULTIPLY = 4
    SPLIT_K_BUF = 5
    TILEK = 6
    STAGES = 7
    REDUCTION_MODE = 8
    SPLIT_K_SLC = 9
    IDX_MODE = 10
    SPECFILT = 11
    KERNEL_CFG = 12
    WORKSPACE = 13
    TILE_CGA_M = 14
    TILE_CGA_N = 15
    BLOCK_SIZE = 16
    OCCUPANCY = 17
    ARRAY_SIZE_PER_THREAD = 18
    SPLIT_COLS = 19
    TILE_ROWS = 20
    TILE_COLS = 21
    LOAD_SIZE = 22
    CTA_COUNT = 23
    STREAM_K = 24
    SPLIT_P_SLC = 25
    TILE_M = 26
    TILE_N = 27
    WARP_SPEC_CFG = 28


def _enum_str(self: enum.IntEnum) -> str:
    return f"{type(self).__name__}.{self.name}"


def _enum_format(self: enum.IntEnum, spec: str) -> str:
    return format(int(self), spec)


# print(t.get_data_type()) shows DataType.FLOAT, not 1 (Python 3.11 made IntEnum's str the
# int's); format() and f-strings keep the number, so messages and C calls are unchanged.
for _enum in [v for v in list(globals().values())
              if isinstance(v, type) and issubclass(v, enum.IntEnum) and v is not enum.IntEnum]:
    _enum.__str__ = _enum_str  # type: ignore[method-assign,assignment]
    _enum.__format__ = _enum_format  # type: ignore[method-assign,assignment]
del _enum
