"""What the loaded MIOpen offers: its version and which bound symbols it exports.

Engines consult this instead of catching errors::

    >>> caps = Capabilities((3, 4, 0), frozenset({"miopenCreate"}))
    >>> caps.has("miopenCreate"), caps.bn_activation
    (True, False)
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import MIOpenVersionError
from .prototypes import PROTOTYPES

__all__ = ["Capabilities"]

_BN_ACTIVATION = (
    "miopenBatchNormForwardInferenceActivation",
    "miopenBatchNormForwardTrainingActivation",
    "miopenBatchNormBackwardActivation",
)


@dataclass(frozen=True)
class Capabilities:
    """``version`` of the loaded library and ``symbols``: the bound names it exports."""

    version: tuple[int, int, int]
    symbols: frozenset[str]

    def has(self, name: str) -> bool:
        """True if the loaded library exports the bound function ``name``."""
        return name in self.symbols

    def require(self, name: str) -> None:
        """Raise ``MIOpenVersionError`` unless ``name`` is available."""
        if name not in self.symbols:
            since = PROTOTYPES[name].since if name in PROTOTYPES else (0, 0, 0)
            raise MIOpenVersionError(name, since, self.version)

    @property
    def missing(self) -> frozenset[str]:
        """Bound functions the loaded library does not export."""
        return frozenset(PROTOTYPES) - self.symbols

    @property
    def bn_activation(self) -> bool:
        """The fused batchnorm+activation calls (MIOpen 3.5)."""
        return all(name in self.symbols for name in _BN_ACTIVATION)

    @property
    def execute_fusion_plan_v2(self) -> bool:
        """miopenExecuteFusionPlan_v2 with a workspace (MIOpen 3.5)."""
        return "miopenExecuteFusionPlan_v2" in self.symbols

    @property
    def tuning_policy(self) -> bool:
        """miopenSetTuningPolicy / miopenGetTuningPolicy (MIOpen 3.5)."""
        return "miopenSetTuningPolicy" in self.symbols and "miopenGetTuningPolicy" in self.symbols

    @property
    def version_string(self) -> str:
        """``"3.5.0"``."""
        return ".".join(map(str, self.version))
