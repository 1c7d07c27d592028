"""hipdnn_frontend's status convention: :class:`Error` values with ``is_good()``, and one place
(:func:`error_from`) that turns the native API's exceptions into them.

The native API raises typed :class:`~hipdnn.core.errors.HipdnnError` subclasses; AMD's frontend returns
an ``Error`` from validate/build/execute calls. Only HipdnnError becomes an Error: a TypeError from
a wrong argument type propagates, as nanobind's argument check does upstream.

>>> err = Error(ErrorCode.INVALID_VALUE, "stride must be positive")
>>> err.is_bad(), err.get_code().name, err.get_message()
(True, 'INVALID_VALUE', 'stride must be positive')
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from hipdnn.core.errors import (
    EngineError,
    ExecutionError,
    GraphNotSupportedError,
    GraphStateError,
    HandleError,
    HipdnnError,
    KnobError,
    PlanClosedError,
    ValidationError,
    VariantPackError,
)

__all__ = ["Error", "ErrorCode", "attempt", "error_from"]


class ErrorCode(enum.IntEnum):
    """hipdnn_frontend's ``ErrorCode`` (names as upstream binds them; the CUDA/NVRTC ones are
    kept for name parity and never produced here)."""

    OK = 0
    INVALID_VALUE = 1
    HIPDNN_BACKEND_ERROR = 2
    ATTRIBUTE_NOT_SET = 3
    GRAPH_NOT_SUPPORTED = 4
    SHAPE_DEDUCTION_FAILED = 5
    INVALID_TENSOR_NAME = 6
    INVALID_VARIANT_PACK = 7
    GRAPH_EXECUTION_PLAN_CREATION_FAILED = 8
    GRAPH_EXECUTION_FAILED = 9
    HEURISTIC_QUERY_FAILED = 10
    UNSUPPORTED_GRAPH_FORMAT = 11
    CUDA_API_FAILED = 12
    CUDNN_BACKEND_API_FAILED = 13
    INVALID_CUDA_DEVICE = 14
    HANDLE_ERROR = 15
    NVRTC_COMPILATION_FAILED = 16


class Error:
    """A status: ``Error()`` is OK; ``Error(code, message)`` is bad unless ``code`` is OK.

    ``code`` and ``err_msg`` are plain fields, as upstream binds them (``def_rw``).
    """

    __slots__ = ("code", "err_msg")

    def __init__(self, code: ErrorCode = ErrorCode.OK, err_msg: str = "") -> None:
        if not isinstance(code, ErrorCode):
            if isinstance(code, bool) or not isinstance(code, int):
                raise TypeError(f"Error(code, err_msg): code must be an ErrorCode, got "
                                f"{type(code).__name__}")
            code = ErrorCode(code)
        if not isinstance(err_msg, str):
            raise TypeError(f"Error(code, err_msg): err_msg must be a str, got "
                            f"{type(err_msg).__name__}")
        self.code = code
        self.err_msg = err_msg

    def get_code(self) -> ErrorCode:
        """The status code."""
        return self.code

    def get_message(self) -> str:
        """The message (empty for OK)."""
        return self.err_msg

    def is_good(self) -> bool:
        """True when the code is OK."""
        return self.code == ErrorCode.OK

    def is_bad(self) -> bool:
        """True when the code is not OK."""
        return self.code != ErrorCode.OK

    def __bool__(self) -> bool:
        raise TypeError("an Error has no truth value: call is_good() or is_bad()")

    def __repr__(self) -> str:
        if self.is_good():
            return "Error(OK)"
        return f"Error({self.code.name}, {self.err_msg!r})"


# Most specific first: VariantPackError is a ValueError like ValidationError.
_CODES: tuple[tuple[type[HipdnnError], ErrorCode], ...] = (
    (VariantPackError, ErrorCode.INVALID_VARIANT_PACK),
    (KnobError, ErrorCode.INVALID_VALUE),
    (ValidationError, ErrorCode.INVALID_VALUE),
    (GraphNotSupportedError, ErrorCode.GRAPH_NOT_SUPPORTED),
    (EngineError, ErrorCode.GRAPH_EXECUTION_PLAN_CREATION_FAILED),
    (ExecutionError, ErrorCode.GRAPH_EXECUTION_FAILED),
    (HandleError, ErrorCode.HANDLE_ERROR),
    (PlanClosedError, ErrorCode.INVALID_VALUE),
    (GraphStateError, ErrorCode.INVALID_VALUE),
)


def error_from(exc: HipdnnError, default: ErrorCode = ErrorCode.HIPDNN_BACKEND_ERROR) -> Error:
    """The Error for a native exception: its code by type, its message verbatim."""
    for cls, code in _CODES:
        if isinstance(exc, cls):
            return Error(code, str(exc))
    return Error(default, str(exc))


def attempt(call: Callable[[], Any]) -> Error:
    """Run ``call``; OK, or the Error for the HipdnnError it raised."""
    try:
        call()
    except HipdnnError as exc:
        return error_from(exc)
    return Error()
