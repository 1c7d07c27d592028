"""The hipdnn exception hierarchy: every error the package raises derives from :class:`HipdnnError`.

Errors about user input also derive from :class:`ValueError` (so code written for
cudnn-frontend, which raises ValueError for bad graphs and variant packs, keeps working).
Messages name the offending node, port, tensor or knob and say what is allowed.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "ArgumentError",
    "EngineError",
    "ExecutionError",
    "GraphChangedError",
    "GraphNotSupportedError",
    "GraphStateError",
    "HandleError",
    "HipdnnError",
    "InvalidGraphError",
    "KnobError",
    "PlanClosedError",
    "PlanIndexError",
    "ValidationError",
    "VariantPackError",
    "WorkspaceError",
    "call_failed",
]


class HipdnnError(Exception):
    """Root of every error raised by hipdnn."""


class ValidationError(HipdnnError, ValueError):
    """The graph is malformed: bad shapes, dtypes, wiring, uids or attributes.

    ``node``, ``port`` and ``tensor`` name what is wrong when known (else ``None``).
    """

    def __init__(
        self, message: str, *, node: str | None = None, port: str | None = None,
        tensor: str | None = None,
    ) -> None:
        where = []
        if node is not None:
            where.append(f"node {node!r}")
        if port is not None:
            where.append(f"port {port}")
        if tensor is not None:
            where.append(f"tensor {tensor!r}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)
        self.node = node
        self.port = port
        self.tensor = tensor


class ArgumentError(ValidationError, TypeError):
    """An argument of a hipdnn call has the wrong type (a str where a Handle, an int or a
    JSON document is expected, ...). Also a TypeError, as Python's own argument errors are."""


#: Another name for :class:`ValidationError`.
InvalidGraphError = ValidationError


class GraphNotSupportedError(HipdnnError):
    """No engine can run the graph. ``reasons`` maps each engine name to why it declined."""

    def __init__(self, message: str, reasons: Mapping[str, str] | None = None) -> None:
        self.reasons: dict[str, str] = dict(reasons or {})
        if self.reasons:
            lines = "\n".join(f"  - {name}: {why}" for name, why in self.reasons.items())
            message = f"{message}\n{lines}"
        super().__init__(message)


class GraphStateError(HipdnnError, RuntimeError):
    """A pipeline step was called out of order (e.g. execute before build_plans) or after close."""


class PlanIndexError(GraphStateError, IndexError):
    """A plan or candidate index is out of range (``execute_plan_at_index``,
    ``build_plan_at_index``, ``select_plan``, ...); negative indices are refused (they would
    silently pick a plan from the end). Also an IndexError."""


class GraphChangedError(GraphStateError):
    """The graph (a tensor, node or graph setting) was edited after ``build()``: its plans and
    bindings describe the old graph, so execute/bind/plan queries refuse until it is rebuilt."""


class KnobError(HipdnnError, ValueError, RuntimeError):
    """A knob setting is unknown, of the wrong type, or outside its constraint. Also a
    RuntimeError, as cudnn-frontend raises for a knob cuDNN refuses, so a ported
    ``try: graph.create_execution_plan(...) except RuntimeError: continue`` skips it."""

    def __init__(self, message: str, *, knob: str | None = None) -> None:
        super().__init__(message)
        self.knob = knob


class VariantPackError(HipdnnError, ValueError):
    """The variant pack is missing a tensor, holds a virtual or foreign tensor, or a bad value."""

    def __init__(self, message: str, *, tensor: str | None = None) -> None:
        super().__init__(message)
        self.tensor = tensor


class WorkspaceError(VariantPackError):
    """The workspace is missing or smaller than the plan needs."""


class PlanClosedError(HipdnnError, RuntimeError):
    """An execution plan (or the graph owning it) was used after ``close()``."""


class ExecutionError(HipdnnError, RuntimeError):
    """An engine failed while executing a plan."""


class EngineError(HipdnnError, RuntimeError):
    """An engine failed to build a plan, or an engine id is unknown."""


class HandleError(HipdnnError, RuntimeError):
    """A device call made by a :class:`~hipdnn.core.handle.Handle` operation failed (``set_stream``,
    ``synchronize``, ...). ``operation`` names the Handle operation, ``function`` the C call
    (None when unknown) and ``status`` its status; the engine's own error is ``__cause__``."""

    def __init__(self, message: str, *, operation: str, function: str | None = None,
                 status: int | None = None) -> None:
        super().__init__(message)
        self.operation = operation
        self.function = function
        self.status = status


def call_failed(function: str, cause: BaseException) -> str:
    """``"<function> failed: <why>"``, the function named once: the binding's errors (MIOpen
    status and HIP errors) already begin with it.

    >>> from miopen_ctypes.errors import HipError
    >>> call_failed("hipMemcpy", HipError("hipMemcpy", 1, "invalid argument"))
    'hipMemcpy failed: hipError_t 1: invalid argument'
    >>> call_failed("hipMemcpy", OSError("no device"))
    'hipMemcpy failed: no device'
    """
    text = str(cause)
    return text if text.startswith(f"{function} failed") else f"{function} failed: {text}"
