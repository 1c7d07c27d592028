"""The record every bound C function is declared with (see prototypes.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["V3_4", "V3_5", "Prototype", "declare"]

V3_4 = (3, 4, 0)
V3_5 = (3, 5, 0)


@dataclass(frozen=True)
class Prototype:
    """One C function: the single source of truth for its ctypes declaration.

    ``since`` is the first MIOpen version exporting it; ``returns_status`` marks functions whose
    result is a ``miopenStatus_t`` (or ``hipError_t``) that the binding turns into an exception;
    ``beta`` marks functions the header declares only under ``MIOPEN_BETA_API`` (MIOpen may change
    them between releases; the Debian/ROCm builds export them).
    """

    name: str
    restype: Any
    argtypes: tuple[Any, ...]
    argnames: tuple[str, ...]
    since: tuple[int, int, int] = (3, 4, 0)
    returns_status: bool = True
    beta: bool = False

    def __post_init__(self) -> None:
        if len(self.argtypes) != len(self.argnames):
            raise ValueError(f"{self.name}: {len(self.argtypes)} argtypes but {len(self.argnames)} argnames")


def declare(
    name: str,
    *args: tuple[str, Any],
    since: tuple[int, int, int],
    restype: Any,
    status: bool = True,
    beta: bool = False,
) -> Prototype:
    """A ``Prototype`` from ``(argname, argtype)`` pairs, as the prototype tables write them."""
    return Prototype(
        name=name,
        restype=restype,
        argtypes=tuple(t for _, t in args),
        argnames=tuple(n for n, _ in args),
        since=since,
        returns_status=status,
        beta=beta,
    )
