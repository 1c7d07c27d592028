"""Convolutions on MIOpen: immediate mode (benchmarking 0) or Find 2.0 with tuning (1).

The three directions share one shape: descriptors ``(A, B, conv, C)`` where C is the output --
forward (w, x, conv, y), backward data (dy, w, conv, dx), backward weights (dy, x, conv, dw):
the ``operands()`` of the row classes in hipdnn/engines/miopen/roles.py.
"""

from __future__ import annotations

import base64
import ctypes
from collections.abc import Sequence
from dataclasses import dataclass

from hipdnn.backend.knobs import NO_WORKSPACE_LIMIT
from hipdnn.core.errors import ExecutionError, KnobError
from hipdnn.core.logs import logger
from hipdnn.core.shapes import packed_strides
from hipdnn.core.types import DataType
from hipdnn.engines.miopen.decision import ConvDecision
from hipdnn.engines.miopen.descriptors import ConvDesc, Owned, Resources, TensorDesc
from hipdnn.engines.miopen.patterns import ConvNode, Row
from hipdnn.engines.miopen.runtime import Call, CHandle, replay
from miopen_ctypes.enums import (
    miopenConvolutionFindMode_t,
    miopenFindResultsOrder_t,
    miopenProblemDirection_t,
    miopenTensorArgumentId_t,
    miopenTuningPolicy_t,
)
from miopen_ctypes.errors import MIOpenStatusError
from miopen_ctypes.hip import HipLibrary
from miopen_ctypes.loader import MIOpenLibrary
from miopen_ctypes.types import (
    miopenConvSolution_t,
    miopenFindOptions_t,
    miopenProblem_t,
    miopenSolution_t,
    miopenTensorArgument_t,
)

__all__ = ["DIRECTIONS", "NO_LIMIT", "ConvOp", "Direction", "FindResult", "conv_geometry"]

_X = miopenTensorArgumentId_t.miopenTensorConvolutionX
_W = miopenTensorArgumentId_t.miopenTensorConvolutionW
_Y = miopenTensorArgumentId_t.miopenTensorConvolutionY
_MAX_FIND = 16
#: global.workspace_size_limit's default: no limit (2**63 - 1, the largest INT64 knob value).
NO_LIMIT = NO_WORKSPACE_LIMIT


@dataclass(frozen=True)
class FindResult:
    """One solution Find 2.0 returned: MIOpen's solver id, its measured time and workspace."""

    solver_id: int | None
    time_ms: float
    workspace_size: int


@dataclass(frozen=True)
class Direction:
    """One convolution direction: its immediate-mode C functions (full names, so grep finds
    each call site) and the Find 2.0 ids of its operands (A, B, output)."""

    solution_count: str
    get_solution: str
    compile_solution: str
    immediate: str
    problem: miopenProblemDirection_t
    find_ids: tuple[miopenTensorArgumentId_t, miopenTensorArgumentId_t, miopenTensorArgumentId_t]


DIRECTIONS: dict[Row, Direction] = {
    Row.CONV_FPROP: Direction(
        "miopenConvolutionForwardGetSolutionCount", "miopenConvolutionForwardGetSolution",
        "miopenConvolutionForwardCompileSolution", "miopenConvolutionForwardImmediate",
        miopenProblemDirection_t.miopenProblemDirectionForward, (_W, _X, _Y)),
    Row.CONV_DGRAD: Direction(
        "miopenConvolutionBackwardDataGetSolutionCount", "miopenConvolutionBackwardDataGetSolution",
        "miopenConvolutionBackwardDataCompileSolution", "miopenConvolutionBackwardDataImmediate",
        miopenProblemDirection_t.miopenProblemDirectionBackward, (_Y, _W, _X)),
    Row.CONV_WGRAD: Direction(
        "miopenConvolutionBackwardWeightsGetSolutionCount",
        "miopenConvolutionBackwardWeightsGetSolution",
        "miopenConvolutionBackwardWeightsCompileSolution",
        "miopenConvolutionBackwardWeightsImmediate",
        miopenProblemDirection_t.miopenProblemDirectionBackwardWeights, (_Y, _X, _W)),
}


def conv_geometry(node: ConvNode) -> tuple[list[int], list[int], list[int], int]:
    """(padding, stride, dilation, groups) of a convolution node (padding is symmetric)."""
    groups = int(getattr(node, "groups", None) or 1)
    assert node.pre_padding is not None and node.stride is not None and node.dilation is not None
    return list(node.pre_padding), list(node.stride), list(node.dilation), groups


class ConvOp:
    """One convolution owned by a plan: descriptors, the chosen solution, the call.

    ``operands`` are the direction's (A, B, output) as (dtype, dims); descriptors (``descs``,
    same order) use packed strides of ``layout`` (the graph's strides for real tensors, the same
    layout for intermediates). Pointers are passed in the same order.
    """

    def __init__(self, lib: MIOpenLibrary, hip: HipLibrary, res: Resources, node: ConvNode,
                 direction: Direction, operands: Sequence[tuple[DataType, tuple[int, ...]]], layout: str,
                 deterministic: bool = False) -> None:
        self.lib, self.hip, self.res, self.direction = lib, hip, res, direction
        a, b, c = (res.add(TensorDesc(lib, dtype, dims, packed_strides(dims, layout)))
                   for dtype, dims in operands)
        self.descs: tuple[TensorDesc, TensorDesc, TensorDesc] = (a, b, c)
        pad, stride, dilation, groups = conv_geometry(node)
        self.conv = res.add(ConvDesc(lib, pad, stride, dilation, groups, deterministic))
        self.benchmarking = 0
        self.solution_id: int | None = None
        self.workspace_size = 0
        self.limit = 0
        self._problem: Owned | None = None
        self._solution: Owned | None = None
        self._solution_ws = 0
        #: Set when Find 2.0 failed and the heuristic solution runs instead (see Runner.provisional).
        self.provisional: str | None = None
        #: What Find 2.0 returned (fastest first); empty in immediate mode.
        self.find_results: tuple[FindResult, ...] = ()
        #: Why the plan runs differently than asked (e.g. Find 2.0 failed); shown by describe().
        self.notes: list[str] = []

    # ------------------------------------------------------------------ queries (immediate mode)
    def _quad(self) -> tuple[CHandle, CHandle, CHandle, CHandle]:
        a, b, c = self.descs
        return a.raw, b.raw, self.conv.raw, c.raw

    def solutions(self, handle: CHandle) -> list[tuple[int, int]]:
        """(solution_id, workspace_size) of the applicable solutions, best first."""
        lib, d = self.lib, self.direction
        count = ctypes.c_size_t()
        getattr(lib, d.solution_count)(handle, *self._quad(), ctypes.byref(count))
        if count.value == 0:
            return []
        sols = (miopenConvSolution_t * count.value)()
        got = ctypes.c_size_t()
        getattr(lib, d.get_solution)(handle, *self._quad(), count.value, ctypes.byref(got), sols)
        return [(int(s.solution_id), int(s.workspace_size)) for s in sols[: got.value]]

    # ------------------------------------------------------------------------------ plan build
    def prepare(self, handle: CHandle, benchmarking: int, limit: int | None,
                solutions: list[tuple[int, int]] | None = None,
                preset: ConvDecision | None = None) -> int:
        """Choose the solution; returns the workspace size the plan needs.

        ``limit`` None: no limit. Immediate mode (``benchmarking`` 0) compiles the first
        solution of MIOpen's list that fits. Find 2.0 (1) runs here, at build, with tuning, on
        buffers MIOpen allocates itself (never the caller's data), considering every solver
        within the limit; the plan's workspace is what the fastest one needs.
        ``solutions``: the (id, workspace) list check_support made (None: asked here when
        needed). ``preset``: a stored :meth:`decision` to apply instead of choosing (no
        solution list, no Find)."""
        self.benchmarking = int(benchmarking)
        self.limit = NO_LIMIT if limit is None else int(limit)
        if preset is not None:
            self._apply(handle, preset)
            return self.workspace_size
        if self.benchmarking == 0 or limit is not None:
            sols = self.solutions(handle) if solutions is None else solutions
            if not sols:
                raise KnobError("no MIOpen solution applies to this convolution", knob=None)
            lo = min(ws for _, ws in sols)
            if self.limit < lo:
                raise KnobError(f"knob 'global.workspace_size_limit' = {limit} is below every "
                                f"applicable solution's workspace; valid range [{lo}, {NO_LIMIT}] "
                                f"({NO_LIMIT}: no limit)", knob="global.workspace_size_limit")
        if self.benchmarking == 0:
            sid, ws = next((s, w) for s, w in sols if w <= self.limit)
            self.use_solution(handle, sid, ws)
            return self.workspace_size
        lib = self.lib
        # the problem copies the descriptor: the find mode must be set before creating it
        lib.miopenSetConvolutionFindMode(self.conv.handle,
                                         miopenConvolutionFindMode_t.miopenConvolutionFindModeNormal)
        problem = miopenProblem_t()
        lib.miopenCreateConvProblem(ctypes.byref(problem), self.conv.handle, self.direction.problem)
        self._problem = self.res.add(Owned(lib, problem, "miopenDestroyProblem"))
        for desc, tid in zip(self.descs, self.direction.find_ids, strict=True):
            lib.miopenSetProblemTensorDescriptor(problem, tid, desc.handle)
        try:
            self._find(handle)
        except MIOpenStatusError as exc:
            if exc.function != "miopenFindSolutions":
                raise
            self._heuristic_instead(handle, exc, solutions)
        return self.workspace_size

    # ------------------------------------------------------------------ the plan store
    def decision(self) -> ConvDecision:
        """What was chosen, for the plan store: the mode, MIOpen's solution (solver) id, its
        workspace, Find 2.0's results, and the found solution serialized by MIOpen
        (``miopenSaveSolution``, base64) so a later process runs it without searching."""
        out: ConvDecision = {
            "mode": "immediate" if self._solution is None else "find2",
            "solution_id": self.solution_id, "workspace": self.workspace_size,
            "find": [(r.solver_id, r.time_ms, r.workspace_size) for r in self.find_results]}
        if self._solution is not None:
            size = ctypes.c_size_t()
            self.lib.miopenGetSolutionSize(self._solution.handle, ctypes.byref(size))
            blob = ctypes.create_string_buffer(max(int(size.value), 1))
            self.lib.miopenSaveSolution(self._solution.handle, blob)
            out["solution"] = base64.b64encode(blob.raw[: size.value]).decode()
        return out

    def _apply(self, handle: CHandle, preset: ConvDecision) -> None:
        """Take a stored decision: compile the immediate-mode solution, or load the solution
        Find 2.0 chose (MIOpen compiles its kernels or takes them from its cache either way).
        A solution the library does not have any more fails here, as a MIOpen error."""
        mode, ws = preset["mode"], int(preset["workspace"])
        if ws > self.limit:
            raise ValueError(f"the stored solution needs {ws} bytes, over the limit {self.limit}")
        self.find_results = tuple(FindResult(None if r[0] is None else int(r[0]), float(r[1]),
                                             int(r[2])) for r in preset.get("find", ()))
        if mode == "immediate":
            sid = preset["solution_id"]
            if sid is None:
                raise ValueError("the stored immediate-mode decision names no solution")
            self.use_solution(handle, int(sid), ws)
            return
        if mode != "find2":
            raise ValueError(f"unknown stored mode {mode!r}")
        blob = base64.b64decode(preset["solution"])
        lib = self.lib
        sol = miopenSolution_t()
        lib.miopenLoadSolution(ctypes.byref(sol), blob, len(blob))
        owned = self.res.add(Owned(lib, sol, "miopenDestroySolution"))
        size = ctypes.c_size_t()
        lib.miopenGetSolutionWorkspaceSize(owned.handle, ctypes.byref(size))
        self._solution, self._solution_ws = owned, int(size.value)
        sid = preset.get("solution_id")
        self.benchmarking, self.workspace_size = 1, int(size.value)
        self.solution_id = None if sid is None else int(sid)

    def use_solution(self, handle: CHandle, sid: int, ws: int) -> None:
        """Immediate mode with solution ``sid`` (compiled, or loaded from MIOpen's kernel cache)."""
        getattr(self.lib, self.direction.compile_solution)(handle, *self._quad(), sid)
        self.benchmarking, self.solution_id, self.workspace_size = 0, sid, ws

    # --------------------------------------------------------------------------------- execute
    def run(self, handle: CHandle, ptrs: tuple[int, int, int], ws: int, ws_size: int) -> None:
        """Run the convolution: ``ptrs`` are the device pointers of (A, B, output)."""
        replay(self.lib, self.calls(handle, ptrs, ws))

    def calls(self, handle: CHandle, ptrs: tuple[int, int, int], ws: int) -> list[Call]:
        """The call :meth:`run` makes."""
        a, b, c = ptrs
        if self.benchmarking == 0:
            da, db, conv, dc = self._quad()
            return [(self.direction.immediate,
                     (handle, da, a, db, b, conv, dc, c, ws or None,
                      self.workspace_size, self.solution_id))]
        assert self._solution is not None
        args = (miopenTensorArgument_t * 3)()
        for i, (ptr, tid) in enumerate(zip(ptrs, self.direction.find_ids, strict=True)):
            args[i].id, args[i].buffer = int(tid), ptr
        return [("miopenRunSolution", (handle, self._solution.raw, 3, args, ws or None,
                                       self._solution_ws))]

    def _heuristic_instead(self, handle: CHandle, exc: MIOpenStatusError,
                           solutions: list[tuple[int, int]] | None) -> None:
        """Find 2.0 failed (the real 3.4.0 answers status 7 when a solver's kernel does not
        build): the heuristic (immediate-mode) solution within the limit is compiled instead,
        noted in the plan, so the plan is usable."""
        sols = [(s, w) for s, w in (solutions or self.solutions(handle)) if w <= self.limit]
        if not sols:
            raise exc
        sid, size = sols[0]
        note = (f"Find 2.0 failed ({exc.function}: status {exc.status}); the heuristic solution "
                f"{sid} runs instead")
        if note not in self.notes:
            self.notes.append(note)
            logger.warning("MIOPEN_ENGINE: %s", note)
        self.use_solution(handle, sid, size)
        # a search that failed once decides nothing for later builds: not cached, not stored
        self.provisional = f"{note}; the next build searches again"

    def _find(self, handle: CHandle) -> None:
        """Find 2.0 with tuning at build time: MIOpen allocates the tensors and workspace it
        benchmarks on (so the search never touches the caller's buffers, and no workspace cap
        hides a solver); results by time, the fastest within the limit is kept."""
        lib, caps = self.lib, self.lib.capabilities
        opts: Owned | None = None
        owned: list[Owned] = []
        policy_set = False
        old = ctypes.c_uint()
        try:
            options = miopenFindOptions_t()
            lib.miopenCreateFindOptions(ctypes.byref(options))
            opts = Owned(lib, options, "miopenDestroyFindOptions")
            lib.miopenSetFindOptionTuning(options, 1)
            lib.miopenSetFindOptionResultsOrder(options, miopenFindResultsOrder_t.miopenFindResultsOrderByTime)
            if self.limit < NO_LIMIT:
                lib.miopenSetFindOptionWorkspaceLimit(options, self.limit)
            if caps.has("miopenGetTuningPolicy") and caps.has("miopenSetTuningPolicy"):
                lib.miopenGetTuningPolicy(handle, ctypes.byref(old))
                lib.miopenSetTuningPolicy(handle, miopenTuningPolicy_t.miopenTuningPolicySearch)
                policy_set = True
            sols = (miopenSolution_t * _MAX_FIND)()
            found = ctypes.c_size_t()
            try:
                lib.miopenFindSolutions(handle, self._problem.handle if self._problem else None,
                                        options, sols, ctypes.byref(found), _MAX_FIND)
                owned = [Owned(lib, sols[i], "miopenDestroySolution") for i in range(found.value)]
            finally:
                if policy_set:
                    lib.miopenSetTuningPolicy(handle, old.value)
            results = []
            for sol in owned:  # sorted by time; keep the first that fits the limit
                size, time_ms = ctypes.c_size_t(), ctypes.c_float()
                lib.miopenGetSolutionWorkspaceSize(sol.handle, ctypes.byref(size))
                lib.miopenGetSolutionTime(sol.handle, ctypes.byref(time_ms))
                solver = None
                if caps.has("miopenGetSolutionSolverId"):
                    sid = ctypes.c_uint64()
                    lib.miopenGetSolutionSolverId(sol.handle, ctypes.byref(sid))
                    solver = int(sid.value)
                results.append(FindResult(solver, float(time_ms.value), int(size.value)))
                if self._solution is None and size.value <= self.limit:
                    self._solution, self._solution_ws = self.res.add(sol), int(size.value)
                    self.solution_id, self.workspace_size = solver, int(size.value)
            self.find_results = tuple(results)
            if self._solution is None:
                raise ExecutionError(f"Find 2.0 returned no solution within the workspace "
                                     f"limit {self.limit} bytes")
        finally:
            for sol in owned:
                if sol is not self._solution:
                    sol.close()
            if opts is not None:
                opts.close()
