"""hipdnn.direct's workspace rules for the loss and reduce-calculation families, with the real
libMIOpen (3.4.0, 3.5.1) on the stub GPU: each rule asks MIOpen's own size query with the call's
arguments (a wrong pairing would be a TypeError or a wrong answer here) and a workspace one byte
short of it is refused before the C call; the same query answered directly agrees."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hipdnn.core.errors import WorkspaceError
from hipdnn.direct import Session
from miopen_ctypes.enums import (
    miopenLossReductionMode_t,
    miopenReduceCalculationNanPropagation_t,
    miopenReduceCalculationOp_t,
)

MEAN = miopenLossReductionMode_t.MIOPEN_LOSS_REDUCTION_MEAN


def _soft_margin(s: Session) -> tuple[int, Any]:
    """(MIOpen's answer asked directly, the call given a workspace)."""
    x, t, out = s.empty((4, 8)), s.empty((4, 8)), s.empty((1,))
    need = s.query("miopenGetSoftMarginLossForwardWorkspaceSize", x, t, out, MEAN)
    return need, lambda ws: s.call("miopenSoftMarginLossForward", x, t, out, MEAN, ws)


def _multi_margin(s: Session) -> tuple[int, Any]:
    x, t, w, out = s.empty((4, 8)), s.empty((4,), np.int64), s.empty((8,)), s.empty((1,))
    need = s.query("miopenGetMultiMarginLossForwardWorkspaceSize", x, t, w, out, 1, 1.0, MEAN)
    return need, lambda ws: s.call("miopenMultiMarginLossForward", x, t, w, out, 1, 1.0, MEAN, ws)


def _reduce_calculation(s: Session) -> tuple[int, Any]:
    a, r = s.empty((4, 8, 16)), s.empty((4, 16))  # the reduced dim dropped
    op = miopenReduceCalculationOp_t.MIOPEN_REDUCE_CALCULATION_SUM
    nan = miopenReduceCalculationNanPropagation_t.MIOPEN_REDUCE_CALCULATION_NOT_PROPAGATE_NAN
    need = s.query("miopenGetReduceCalculationWorkspaceSize", a, 1, op, r)
    return need, lambda ws: s.call("miopenReduceCalculationForward", nan, ws, a, 1, op, r)


CASES = {"soft_margin": _soft_margin, "multi_margin": _multi_margin, "reduce_calculation": _reduce_calculation}


@pytest.mark.parametrize("case", list(CASES))
def test_short_workspace_is_refused_before_the_call(lib: Any, hip: Any, case: str) -> None:
    with Session(lib, hip) as s:
        need, run = CASES[case](s)
        if case == "reduce_calculation":  # MIOpen asks no workspace for this sum (3.4.0, 3.5.1,
            assert need == 0             # gfx90a, gfx942): nothing to refuse
            return
        assert need > 0
        with pytest.raises(WorkspaceError, match=rf"workspace holds {need - 1} bytes, MIOpen needs {need}"):
            run(s.workspace(need - 1))
