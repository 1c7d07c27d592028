"""MIOPEN_ENGINE: hipDNN's MIOpen provider, in Python (see :mod:`hipdnn.engines.miopen.engine`).

Importing this package registers the default engine (which discovers the installed MIOpen and
HIP runtime lazily, on the first graph it checks). Nothing is loaded at import time.

Modules: ``patterns``/``rules`` (which seed row a graph is, or why not), ``descriptors`` (owning
wrappers), ``conv`` + ``conv_rows`` (immediate mode / Find 2.0, conv + bias + activation),
``batchnorm``, ``fusion``, ``memory`` (device blocks, host staging, the per-Handle MIOpen handle),
``plan`` (:class:`MiopenPlan`; ``plan.path`` is a :class:`runtime.Path` naming the MIOpen path: "v2", "immediate",
"find2", "fused", "unfused" or "bn_activation").

BF16 and activations: MIOpen's standalone activation kernels (``miopenActivationForward`` /
``miopenActivationBackward``, MIOpenNeuron.cl) are built for FP32 and FP16 only, so no BF16 path
here ends in them. BF16 batchnorm training + activation and BN inference + DReLU + BN backward
need MIOpen >= 3.5's ``miopenBatchNormForwardTrainingActivation`` /
``miopenBatchNormBackwardActivation``: on a library without them (MIOpen 3.4, whose batchnorm +
activation fusion plans are FP32/FP16 only) check_support declines them with that reason. BF16
conv + (bias) + activation runs only as a fusion plan: when ``miopenCompileFusionPlan`` declines
it, ``build_plan`` raises :class:`MiopenNotSupportedError` (an ``EngineError``) and the graph
moves on to the next engine (CPU_REFERENCE_ENGINE), recording the reason. Every other BF16 row
(conv alone, BN alone, the 3.5 ``*Activation`` calls) runs on MIOpen.

A plan whose :class:`hipdnn.Handle` was closed raises :class:`hipdnn.core.errors.PlanClosedError`
(before any MIOpen call); :class:`Unavailable` (no library, no GPU) is an ``EngineError``.

Variant-pack values that are device pointers (ints, GPU buffers) go straight to MIOpen. Host
(CPU) arrays are accepted as a convenience for scripts and notebooks: each execute copies them
to ``hipMalloc`` blocks, runs, copies the outputs back and frees the blocks (outputs are written
only when every call succeeded). For speed, pass device memory.
"""

from __future__ import annotations

from hipdnn.backend.registry import register
from hipdnn.engines.miopen.conv import NO_LIMIT
from hipdnn.engines.miopen.engine import MiopenDeterministicEngine, MiopenEngine, Unavailable
from hipdnn.engines.miopen.errors import (
    MiopenBuildError,
    MiopenCallError,
    MiopenExecutionError,
    MiopenNotSupportedError,
)
from hipdnn.engines.miopen.patterns import Row
from hipdnn.engines.miopen.plan import MiopenPlan
from hipdnn.engines.miopen.rules import Declined

__all__ = [
    "DETERMINISTIC_ENGINE",
    "ENGINE",
    "NO_LIMIT",
    "Declined",
    "MiopenBuildError",
    "MiopenCallError",
    "MiopenDeterministicEngine",
    "MiopenEngine",
    "MiopenExecutionError",
    "MiopenNotSupportedError",
    "MiopenPlan",
    "Row",
    "Unavailable",
]

#: The registered default instance (miopen_ctypes.load / miopen_ctypes.hip.load_hip).
ENGINE = register(MiopenEngine())
#: MIOPEN_ENGINE_DETERMINISTIC: convolutions with MIOpen's deterministic attribute.
DETERMINISTIC_ENGINE = register(MiopenDeterministicEngine())
