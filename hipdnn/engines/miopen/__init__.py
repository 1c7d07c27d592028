"""MIOPEN_ENGINE: hipDNN's MIOpen provider, in Python (see :mod:`hipdnn.engines.miopen.engine`).

Importing this package registers the default engine (which discovers the installed MIOpen and
HIP runtime lazily, on the first graph it checks). Nothing is loaded at import time.

Modules: ``patterns``/``rules`` (which seed row a graph is, or why not), ``descriptors`` (owning
wrappers), ``conv`` + ``conv_rows`` (immediate mode / Find 2.0, conv + bias + activation),
``batchnorm``, ``fusion``, ``memory`` (device blocks, host staging, the per-Handle MIOpen handle),
``plan`` (:class:`MiopenPlan`; ``plan.path`` names the MIOpen path chosen: "v2", "immediate",
"find2", "fused", "unfused" or "bn_activation").

Variant-pack values that are device pointers (ints, GPU buffers) go straight to MIOpen. Host
(CPU) arrays are accepted as a convenience for scripts and notebooks: each execute copies them
to ``hipMalloc`` blocks, runs, copies the outputs back and frees the blocks (outputs are written
only when every call succeeded). For speed, pass device memory.
"""

from __future__ import annotations

from hipdnn.engines.base import register
from hipdnn.engines.miopen.engine import MiopenEngine, Unavailable
from hipdnn.engines.miopen.errors import MiopenBuildError, MiopenCallError, MiopenExecutionError
from hipdnn.engines.miopen.patterns import Declined, Row
from hipdnn.engines.miopen.plan import MiopenPlan

__all__ = [
    "ENGINE",
    "Declined",
    "MiopenBuildError",
    "MiopenCallError",
    "MiopenEngine",
    "MiopenExecutionError",
    "MiopenPlan",
    "Row",
    "Unavailable",
]

#: The registered default instance (miopen_ctypes.load / miopen_ctypes.hip.load_hip).
ENGINE = register(MiopenEngine())
