"""Binding errors -> typed hipdnn errors naming the graph operation and the C function."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hipdnn.core.errors import EngineError, ExecutionError, call_failed
from miopen_ctypes.errors import MIOpenError

__all__ = [
    "MiopenBuildError",
    "MiopenCallError",
    "MiopenExecutionError",
    "MiopenNotSupportedError",
    "execution_error",
    "translating",
]


class MiopenCallError:
    """Mixin: ``operation`` (graph node/row), ``function`` (C symbol) and ``status`` (int or None)."""

    operation: str
    function: str
    status: int | None


def _message(operation: str, function: str, cause: BaseException) -> str:
    return f"MIOPEN_ENGINE: {operation}: {call_failed(function, cause)}"


class MiopenExecutionError(ExecutionError, MiopenCallError):
    """A MIOpen/HIP call failed while a plan executed."""

    def __init__(self, operation: str, function: str, cause: BaseException) -> None:
        super().__init__(_message(operation, function, cause))
        self.operation, self.function = operation, function
        self.status = getattr(cause, "status", None)


class MiopenBuildError(EngineError, MiopenCallError):
    """A MIOpen/HIP call failed while a plan was built or the knobs were queried."""

    def __init__(self, operation: str, function: str, cause: BaseException) -> None:
        super().__init__(_message(operation, function, cause))
        self.operation, self.function = operation, function
        self.status = getattr(cause, "status", None)


class MiopenNotSupportedError(MiopenBuildError):
    """MIOpen answered, while the plan was built, that it cannot run the graph.

    E.g. a bf16 conv + bias + activation whose fusion plan did not compile (no unfused path:
    MIOpen's standalone activation kernels are fp32/fp16 only). ``function`` is the call that
    declined and ``status`` its status; the graph API moves on to the next engine.
    """

    def __init__(self, operation: str, reason: str, function: str, cause: BaseException) -> None:
        EngineError.__init__(self, f"MIOPEN_ENGINE: {operation}: {reason} "
                                   f"({call_failed(function, cause)})")
        self.operation, self.function = operation, function
        self.status = getattr(cause, "status", None)


def execution_error(operation: str, exc: MIOpenError) -> MiopenExecutionError:
    """The hipdnn error for a binding error (``MIOpenError``, incl. ``HipError``) raised while a
    plan executed: the one translation of :func:`translating` and of the plan's hot loops (which
    raise it from a plain ``except`` instead of entering a context manager on every run)."""
    return MiopenExecutionError(operation, getattr(exc, "function", type(exc).__name__), exc)


@contextmanager
def translating(operation: str, *, building: bool = False) -> Iterator[None]:
    """Re-raise any binding error (``MIOpenError``, incl. ``HipError``) as a hipdnn error.

    >>> with translating("conv_fprop 'c1'"):   # doctest: +SKIP
    ...     lib.miopenConvolutionForwardImmediate(...)
    """

    try:
        yield
    except MIOpenError as exc:
        if building:
            raise MiopenBuildError(operation, getattr(exc, "function", type(exc).__name__),
                                   exc) from exc
        raise execution_error(operation, exc) from exc
