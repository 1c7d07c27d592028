"""hipdnn_frontend's enums that the native API has no counterpart for.

DataType, PointwiseMode, ConvolutionMode, NormFwdPhase, BuildPlanPolicy, KnobValueType and the
heuristic mode are the native enums themselves (same names and values). The operation enums
below (reduction, resample, attention, MoE) exist for name parity only: no node here uses them.
"""

from __future__ import annotations

import enum

__all__ = [
    "AttentionImplementation",
    "AutotuneCacheWriteOutcome",
    "AutotuneStrategy",
    "BehaviorNote",
    "DiagonalAlignment",
    "MoeGroupedMatmulMode",
    "PaddingMode",
    "PluginLoadingMode",
    "PrimingFailurePolicy",
    "ResampleMode",
    "TimingQuality",
    "TuneMode",
]


class TuneMode(enum.IntEnum):
    """STANDARD times each candidate as configured; EXHAUSTIVE first lets engines that can
    search (MIOPEN_ENGINE's ``global.benchmarking`` = 1, MIOpen Find) do so."""

    STANDARD = 0
    EXHAUSTIVE = 1


class AutotuneStrategy(enum.IntEnum):
    """FIXED_AVERAGE: mean of ``timed_iterations`` runs; RUN_UNTIL_STABLE: runs until the last
    ``window_size`` times agree within ``stability_threshold`` (at most ``max_iterations``)."""

    FIXED_AVERAGE = 0
    RUN_UNTIL_STABLE = 1


class PrimingFailurePolicy(enum.IntEnum):
    """What an EXHAUSTIVE autotune does when an engine's search fails."""

    ABORT_ON_PRIMING_FAILURE = 0
    BENCHMARK_UNPRIMED = 1


class AutotuneCacheWriteOutcome(enum.IntEnum):
    """Whether autotune wrote its results file (AutotuneStorageConfig.file_path)."""

    NOT_REQUESTED = 0
    WRITTEN = 1
    FAILED = 2


class TimingQuality(enum.IntEnum):
    """How an ExecutionTiming was measured (here: host wall clock around a synchronised run,
    reported as UNSTALLED; INVALID when nothing was measured)."""

    DEVICE_ONLY = 0
    UNSTALLED = 1
    INVALID = 2


class BehaviorNote(enum.IntEnum):
    """Engine behaviour notes (get_behavior_notes_for_engine)."""

    RUNTIME_COMPILATION = 0
    REQUIRES_LAYOUT_TRANSFORM = 1
    SUPPORTS_GRAPH_CAPTURE = 2
    EXTERNAL_LIBRARY_DEPENDENCY = 3
    SUPPORTS_EXECUTION_PLAN_SERIALIZATION = 4


class PluginLoadingMode(enum.IntEnum):
    """Engine plugin loading mode (set_engine_plugin_paths); see docs/HIPDNN_FRONTEND.md."""

    ADDITIVE = 0
    ABSOLUTE = 1


class ResampleMode(enum.IntEnum):
    """Resample modes (no resample node here)."""

    NOT_SET = 0
    MAXPOOL = 1
    AVGPOOL_EXCLUDE_PADDING = 2
    AVGPOOL_INCLUDE_PADDING = 3
    BILINEAR = 4
    NEAREST = 5


class PaddingMode(enum.IntEnum):
    """Resample padding modes (no resample node here)."""

    NOT_SET = 0
    NEG_INF_PAD = 1
    ZERO_PAD = 2
    EDGE_VAL_PAD = 3


class DiagonalAlignment(enum.IntEnum):
    """SDPA causal-mask alignment (no SDPA node here)."""

    TOP_LEFT = 0
    BOTTOM_RIGHT = 1


class AttentionImplementation(enum.IntEnum):
    """SDPA implementation choice (no SDPA node here)."""

    AUTO = 0
    COMPOSITE = 1
    UNIFIED = 2


class MoeGroupedMatmulMode(enum.IntEnum):
    """MoE grouped matmul modes (no MoE node here)."""

    NOT_SET = 0
    NONE = 1
    GATHER = 2
    SCATTER = 3
