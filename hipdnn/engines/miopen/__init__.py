"""MIOPEN_ENGINE: hipDNN's MIOpen provider, in Python (see :mod:`hipdnn.engines.miopen.engine`).

Importing this package registers the default engine (which discovers the installed MIOpen and
HIP runtime lazily, on the first graph it checks). Nothing is loaded at import time.
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
