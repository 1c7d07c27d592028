"""CPU_REFERENCE_ENGINE: every graph of the hipdnn API on the CPU with numpy.

Importing this package registers the engine (``hipdnn.backend.registry.registry()`` imports it lazily).
The kernels (:mod:`hipdnn.engines.reference.kernels`) are also used by the emulated device.
"""

from __future__ import annotations

from hipdnn.backend.registry import register
from hipdnn.engines.reference.engine import ReferenceEngine, ReferencePlan

__all__ = ["ENGINE", "ReferenceEngine", "ReferencePlan"]

#: The registered engine instance.
ENGINE: ReferenceEngine = ReferenceEngine()
register(ENGINE)
