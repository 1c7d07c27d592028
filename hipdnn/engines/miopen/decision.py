"""What MIOPEN_ENGINE keeps of a plan in the persistent plan store (hipdnn/pipeline/plan_store.py):
the JSON forms of its decisions, written by ``MiopenEngine.plan_decision`` and applied again by
``MiopenEngine.build_from_decision``. A stored entry may come from another process or version:
its readers convert every value and treat a malformed one as "build afresh"."""

from __future__ import annotations

from typing import TypedDict

__all__ = ["ConvDecision", "PlanDecision"]


class _ConvDecision(TypedDict):
    mode: str  # "immediate" or "find2"
    solution_id: int | None
    workspace: int
    find: list[tuple[int | None, float, int]]  # Find 2.0's (solver id, time ms, workspace)


class ConvDecision(_ConvDecision, total=False):
    """A convolution's choice (``ConvOp.decision``); ``solution`` is the base64 of
    ``miopenSaveSolution`` (Find 2.0 only)."""

    solution: str


class _PlanDecision(TypedDict):
    row: str  # Row's name
    path: str  # Path's value
    workspace: int
    notes: list[str]


class PlanDecision(_PlanDecision, total=False):
    """A plan's choice (``MiopenEngine.plan_decision``); ``conv`` for a convolution run on
    its own or unfused; ``fusion_status`` the miopenCompileFusionPlan status of a declined
    fusion plan (a later build asks the compile again unless it was a definitive one)."""

    conv: ConvDecision
    fusion_status: int
