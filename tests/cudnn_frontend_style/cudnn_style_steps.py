"""The build steps a cudnn-frontend script spells out, shared by the tests written that way."""

from __future__ import annotations

from typing import Any

import hipdnn as cudnn

__all__ = ["build"]


def build(graph: Any) -> None:
    """validate -> operation graph -> plans (heuristics A, then FALLBACK) -> support -> build."""
    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    graph.check_support()
    graph.build_plans()
