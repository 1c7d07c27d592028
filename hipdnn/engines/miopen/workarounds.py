"""Known-bad MIOpen paths per GPU architecture, as AMD's hipDNN provider rejects them.

A row of :data:`WORKAROUNDS` names a seed row and the architectures (``gcnArchName`` prefixes)
where MIOPEN_ENGINE must not take a MIOpen path although MIOpen may accept it: the engine takes
the row's other path (e.g. unfused conv, bias, activation), and the plan's name and
``describe()`` / INFO log say which workaround applied and why.

>>> from hipdnn.engines.miopen.patterns import Row
>>> workaround_for(Row.CONV_BIAS_ACT, "gfx90a:sramecc+:xnack-").issue
'ROCm/rocm-libraries#5409'
>>> workaround_for(Row.CONV_BIAS_ACT, "gfx942") is None
True
"""

from __future__ import annotations

from dataclasses import dataclass

from hipdnn.engines.miopen.patterns import Row

__all__ = ["WORKAROUNDS", "Workaround", "workaround_for"]


@dataclass(frozen=True)
class Workaround:
    """Do not use MIOpen's ``avoid`` path for ``row`` on ``archs``; ``issue`` says why."""

    row: Row
    archs: tuple[str, ...]  # gcnArchName prefixes, without target features
    avoid: str  # the path not taken
    reason: str
    issue: str

    def applies(self, row: Row, arch: str) -> bool:
        """True when ``row`` on ``arch`` (a gcnArchName, features allowed) is covered."""
        name = arch.split(":", 1)[0]
        return row == self.row and any(name.startswith(a) for a in self.archs)

    def note(self, arch: str) -> str:
        """The line shown by ``describe()`` and the log."""
        return (f"workaround {self.issue}: {self.avoid} path not used on {arch.split(':', 1)[0]} "
                f"({self.reason})")


#: hipDNN's MIOpen provider rejects these in production (its ``Workarounds.hpp``).
WORKAROUNDS: tuple[Workaround, ...] = (
    Workaround(Row.CONV_BIAS_ACT, ("gfx90a",), "fused",
               "MIOpen's fused conv + bias + activation kernels give incorrect results there",
               "ROCm/rocm-libraries#5409"),
    Workaround(Row.CONV_BIAS_ACT, ("gfx10", "gfx11", "gfx12"), "fused",
               "no CK fusion solver covers RDNA architectures (no applicable solution)",
               "ROCm/rocm-libraries#6979"),
)


def workaround_for(row: Row, arch: str) -> Workaround | None:
    """The workaround covering ``row`` on ``arch``, or None."""
    return next((w for w in WORKAROUNDS if w.applies(row, arch)), None)
