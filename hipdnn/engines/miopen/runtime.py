"""What a row's runner sees at execute time, and the workspace layout helper."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ALIGN", "Arena", "Call", "Ctx", "Runner"]

#: One prebuildable MIOpen call: (C name, arguments as ``lib.<name>`` takes them).
Call = tuple[str, tuple[Any, ...]]

#: Alignment of every block carved from the workspace (bytes).
ALIGN = 256


@dataclass
class Ctx:
    """One execute: MIOpen handle, device pointers by role, scalars, workspace."""

    handle: Any
    ptr: dict[str, int]
    scalars: dict[str, float] = field(default_factory=dict)
    ws: int = 0
    ws_size: int = 0
    stream: int | None = None


class Arena:
    """Carves named, aligned blocks out of the plan workspace (offsets fixed at build time)."""

    def __init__(self, start: int = 0) -> None:
        self.size = start
        self.offsets: dict[str, int] = {}

    def reserve(self, name: str, nbytes: int) -> int:
        """Reserve ``nbytes`` for ``name``; returns its offset."""
        off = -(-self.size // ALIGN) * ALIGN
        self.offsets[name] = off
        self.size = off + int(nbytes)
        return off

    def at(self, ctx: Ctx, name: str) -> int:
        """Device address of block ``name`` in ``ctx``'s workspace."""
        return ctx.ws + self.offsets[name]


class Runner:
    """A row's MIOpen call sequence: built once per plan, run per execute."""

    #: Bytes of workspace the runner needs.
    workspace_size: int = 0
    #: Short name of the path taken (e.g. "immediate", "find2", "fused", "unfused", "bn_activation").
    path: str = ""

    def run(self, ctx: Ctx) -> None:  # pragma: no cover - abstract
        """Issue the calls."""
        raise NotImplementedError

    def calls(self, ctx: Ctx) -> list[Call] | None:
        """The MIOpen calls ``run(ctx)`` makes, in order, when they depend on nothing but ``ctx``
        (no host work, no lazy setup between them): a bound plan prebuilds and replays them.
        None (the default) means "not prebuildable": bound plans then call :meth:`run`."""
        return None
