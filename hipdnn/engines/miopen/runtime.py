"""What a row's runner sees at execute time, and the workspace layout helper."""

from __future__ import annotations

import ctypes
import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeAlias, TypeVar

if TYPE_CHECKING:
    from miopen_ctypes.loader import MIOpenLibrary

__all__ = ["ALIGN", "Arena", "CHandle", "Call", "Ctx", "Path", "Runner", "replay"]

#: The row class (hipdnn/engines/miopen/roles.py) a runner's ``Ctx.ptr`` is an instance of.
P = TypeVar("P")

#: A MIOpen object's C handle as miopen_ctypes.types makes them (``miopenHandle_t()``, a tensor
#: descriptor, a fusion op, a solution): one ctypes pointer type per kind of object.
CHandle: TypeAlias = "ctypes._Pointer[ctypes.Structure]"

#: One prebuildable MIOpen call: (C name, arguments as ``lib.<name>`` takes them: ints, floats,
#: None for NULL, C handles, ctypes arrays).
Call = tuple[str, tuple[object, ...]]


def replay(lib: MIOpenLibrary, calls: Iterable[Call]) -> None:
    """Make ``calls`` on ``lib`` in order: the one spelling of a row's calls serves both
    :meth:`Runner.run` and bound plans (which prepare the same list once)."""
    for name, args in calls:
        getattr(lib, name)(*args)


class Path(str, enum.Enum):
    """Which MIOpen path a plan takes (shown in plan names; compares equal to its value)."""

    V2 = "v2"  # a _V2 batchnorm call
    IMMEDIATE = "immediate"  # convolution immediate mode, heuristic solution
    FIND2 = "find2"  # convolution Find 2.0 with tuning (global.benchmarking=1)
    FUSED = "fused"  # a compiled fusion plan
    UNFUSED = "unfused"  # separate calls, intermediates in the workspace
    BN_ACTIVATION = "bn_activation"  # MIOpen 3.5's batchnorm + activation calls
    ACTIVATION = "activation"  # a standalone miopenActivationForward
    TENSOR_OP = "op_tensor"  # a standalone miopenOpTensor
    NORM = "norm"  # MIOpen's layer norm / T5 layer norm calls

    def __str__(self) -> str:
        return self.value


#: Alignment of every block carved from the workspace (bytes).
ALIGN = 256


@dataclass
class Ctx(Generic[P]):
    """One execute: MIOpen handle, the row's tensors as device pointers and its scalars as
    floats (``ptr``: an instance of the row's class in hipdnn/engines/miopen/roles.py, e.g.
    ``ctx.ptr.x``, ``ctx.ptr.epsilon``), workspace."""

    handle: CHandle
    ptr: P
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

    def at(self, ctx: Ctx[P], name: str) -> int:
        """Device address of block ``name`` in ``ctx``'s workspace."""
        return ctx.ws + self.offsets[name]


class Runner(Generic[P]):
    """A row's MIOpen call sequence: built once per plan, run per execute. ``P``: the row
    class(es) of hipdnn/engines/miopen/roles.py whose pointers it reads."""

    #: Bytes of workspace the runner needs.
    workspace_size: int = 0
    #: The path taken.
    path: Path = Path.V2
    #: The bound MIOpen library the calls go to (set by each runner's constructor).
    lib: MIOpenLibrary
    #: Why the path was chosen when it is not the row's first choice (shown by describe()).
    notes: Sequence[str] = ()
    #: Set when the path was chosen because of a failure that may not recur (e.g. a failed
    #: Find 2.0 search): such a plan is neither cached for other builds nor stored.
    provisional: str | None = None

    def run(self, ctx: Ctx[P]) -> None:
        """Issue the calls: replays :meth:`calls`, or :meth:`run_with_host_work` when the calls
        are not prebuildable."""
        planned = self.calls(ctx)
        if planned is None:
            self.run_with_host_work(ctx)
        else:
            replay(self.lib, planned)

    def run_with_host_work(self, ctx: Ctx[P]) -> None:  # pragma: no cover - abstract
        """Runners whose calls need host work in between (or lazy setup) override this."""
        raise NotImplementedError(f"{type(self).__name__} has neither calls() nor host work")

    def calls(self, ctx: Ctx[P]) -> list[Call] | None:
        """The MIOpen calls ``run(ctx)`` makes, in order, when they depend on nothing but ``ctx``
        (no host work, no lazy setup between them): a bound plan prebuilds and replays them.
        None (the default) means "not prebuildable": bound plans then call :meth:`run`."""
        return None
