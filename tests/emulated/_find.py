"""Find 2.0: problems, find options, solutions (find, run, getters, save/load).

A convolution problem stores a *copy* of the convolution descriptor taken at creation (later
changes to the descriptor do not reach it), and tensor descriptors by id (X=1, W=2, Y=3 in every
direction). FindSolutions honours the workspace limit (a preallocated workspace's size *is* the
limit) and the results order; with preallocated tensors it "benchmarks" into them, so the output
tensor's buffer is overwritten, as on a GPU.
"""

from __future__ import annotations

import ctypes
import json
from ctypes import c_float, c_size_t, c_uint, c_uint64, c_void_p
from dataclasses import dataclass, field

from miopen_ctypes.types import miopenTensorArgument_t

from ._conv import (
    DIRECTIONS,
    SOLVER_ALGORITHMS,
    SOLVERS_SINCE_3_5,
    ConvApi,
    ConvProblem,
    SolutionSpec,
    check_conv,
)
from ._core import (
    BAD_PARM,
    INVALID_VALUE,
    NOT_IMPLEMENTED,
    VERSION_MISMATCH,
    Args,
    Status,
    addr,
    api,
    require,
    write_out,
)
from ._objects import ConvDesc, TensorDesc

__all__ = ["FindApi", "FindOptions", "FindRecord", "Problem", "Solution"]

SIZE_MAX = (1 << 64) - 1
_X, _W, _Y = 1, 2, 3
_MAGIC = "emulated-miopen-solution"


@dataclass
class Problem:
    """miopenProblem_t; only convolution problems can be solved by the emulator."""

    kind: str
    direction: int
    conv: ConvDesc | None = None
    tensors: dict[int, TensorDesc] = field(default_factory=dict)


@dataclass
class FindOptions:
    """miopenFindOptions_t with the library's defaults."""

    tuning: int = 0
    order: int = 0  # by time
    workspace_limit: int = SIZE_MAX
    workspace: tuple[int, int] | None = None
    tensors: dict[int, int] = field(default_factory=dict)
    attach_binaries: int = 0


@dataclass
class Solution:
    """miopenSolution_t: a solved problem and its solver."""

    problem: ConvProblem
    spec: SolutionSpec


@dataclass(frozen=True)
class FindRecord:
    """What one miopenFindSolutions saw (tests assert on knobs reaching MIOpen)."""

    direction: str
    find_mode: int
    tuning: int
    tuning_policy: int
    workspace_limit: int
    returned: tuple[int, ...]


class FindApi(ConvApi):
    """Mixin: the Find 2.0 entry points."""

    def __init__(self) -> None:
        super().__init__()
        self.find_records: list[FindRecord] = []

    def _problem(self, handle: object) -> Problem:
        return self.handles.get("problem", handle, "problem", Problem)

    def _options(self, handle: object) -> FindOptions:
        return self.handles.get("find_options", handle, "options", FindOptions)

    def _solution(self, handle: object) -> Solution:
        return self.handles.get("solution", handle, "solution", Solution)

    def conv_problem_of(self, p: Problem) -> ConvProblem:
        """The solvable ConvProblem of a Find 2.0 problem (all of X, W, Y must be set)."""
        if p.kind != "conv" or p.conv is None:
            raise Status(NOT_IMPLEMENTED, f"{p.kind} problems are not emulated (only convolution)")
        require(p.direction in (0, 1, 2), f"direction {p.direction} is not valid for a convolution")
        missing = [n for n, i in (("X", _X), ("W", _W), ("Y", _Y)) if i not in p.tensors]
        require(not missing, f"problem tensor descriptors not set: {missing}")
        cp = ConvProblem(DIRECTIONS[p.direction], p.conv.copy(), p.tensors[_X], p.tensors[_W], p.tensors[_Y])
        check_conv(cp)
        return cp

    # ------------------------------------------------------------------ problems
    def _new_problem(self, a: Args, problem: Problem) -> None:
        require(addr(a.problem), "problem: Dereferencing nullptr")
        write_out(a.problem, c_size_t, self.handles.new("problem", problem), "problem")

    @api("miopenCreateConvProblem")
    def _create_conv_problem(self, a: Args) -> None:
        conv = self.conv_desc(a.operatorDesc, "operatorDesc")
        self._new_problem(a, Problem("conv", a.direction, conv.copy()))

    @api("miopenCreateActivationProblem")
    def _create_act_problem(self, a: Args) -> None:
        self.activation_desc(a.operatorDesc, "operatorDesc")
        self._new_problem(a, Problem("activation", a.direction))

    @api("miopenCreateBiasProblem")
    def _create_bias_problem(self, a: Args) -> None:
        self._new_problem(a, Problem("bias", a.direction))

    @api("miopenCreateBatchnormProblem")
    def _create_bn_problem(self, a: Args) -> None:
        self._new_problem(a, Problem("batchnorm", a.direction))

    @api("miopenFuseProblems")
    def _fuse_problems(self, a: Args) -> None:
        self._problem(a.problem1)
        self._problem(a.problem2)
        raise Status(NOT_IMPLEMENTED, "fused Find 2.0 problems are not emulated")

    @api("miopenSetProblemTensorDescriptor")
    def _set_problem_tensor(self, a: Args) -> None:
        p = self._problem(a.problem)
        desc = self.set_tensor_desc(a.descriptor, "descriptor")
        p.tensors[a.id] = TensorDesc(desc.dtype, desc.dims, desc.strides)  # stored by value

    @api("miopenDestroyProblem")
    def _destroy_problem(self, a: Args) -> None:
        self.handles.destroy("problem", a.problem, "problem")

    # ------------------------------------------------------------------ options
    @api("miopenCreateFindOptions")
    def _create_options(self, a: Args) -> None:
        require(addr(a.options), "options: Dereferencing nullptr")
        write_out(a.options, c_size_t, self.handles.new("find_options", FindOptions()), "options")

    @api("miopenDestroyFindOptions")
    def _destroy_options(self, a: Args) -> None:
        self.handles.destroy("find_options", a.options, "options")

    @api("miopenSetFindOptionTuning")
    def _opt_tuning(self, a: Args) -> None:
        self._options(a.options).tuning = a.value

    @api("miopenSetFindOptionResultsOrder")
    def _opt_order(self, a: Args) -> None:
        self._options(a.options).order = a.value

    @api("miopenSetFindOptionWorkspaceLimit")
    def _opt_limit(self, a: Args) -> None:
        self._options(a.options).workspace_limit = a.value

    @api("miopenSetFindOptionPreallocatedWorkspace")
    def _opt_workspace(self, a: Args) -> None:
        opts = self._options(a.options)
        opts.workspace = (addr(a.buffer), a.size)  # checked when Find uses it

    @api("miopenSetFindOptionPreallocatedTensor")
    def _opt_tensor(self, a: Args) -> None:
        opts = self._options(a.options)
        opts.tensors[a.id] = addr(a.buffer)  # the library accepts anything here; Find uses it

    @api("miopenSetFindOptionAttachBinaries")
    def _opt_attach(self, a: Args) -> None:
        self._options(a.options).attach_binaries = a.attach

    # ------------------------------------------------------------------ find / run
    @api("miopenFindSolutions")
    def _find_solutions(self, a: Args) -> None:
        state = self.handle_state(a.handle)
        cp = self.conv_problem_of(self._problem(a.problem))
        opts = self._options(a.options) if addr(a.options) else FindOptions()
        limit = opts.workspace[1] if opts.workspace is not None else opts.workspace_limit
        specs = [s for s in self.solutions_for(cp) if s.workspace_size <= limit]
        specs.sort(key=(lambda s: s.workspace_size) if opts.order == 1 else (lambda s: s.time))
        if opts.tensors:  # benchmarking runs the kernels on the caller's buffers
            require(all(i in opts.tensors for i in (_X, _W, _Y)),
                    "preallocated tensors must cover X, W and Y")
            for desc, tid in ((cp.x, _X), (cp.w, _W), (cp.y, _Y)):
                self.view(desc, opts.tensors[tid], f"preallocated tensor {tid}")
            out_desc, out_id = {"fwd": (cp.y, _Y), "bwd": (cp.x, _X), "wrw": (cp.w, _W)}[cp.direction]
            self.view(out_desc, opts.tensors[out_id], "benchmark output").fill(float("nan"))
        if opts.workspace is not None and specs and specs[0].workspace_size:
            self.use_workspace(opts.workspace[0], opts.workspace[1], specs[0].workspace_size, "find workspace")
        specs = specs[: a.maxSolutions]
        if specs:
            where = addr(a.solutions)
            require(where, "solutions: Dereferencing nullptr")
            out = (c_void_p * len(specs)).from_address(where)
            for i, spec in enumerate(specs):
                out[i] = self.handles.new("solution", Solution(cp, spec))
        write_out(a.numSolutions, c_size_t, len(specs), "numSolutions")
        self.find_records.append(FindRecord(cp.direction, cp.conv.find_mode, opts.tuning,
                                            state.tuning_policy, limit,
                                            tuple(s.solution_id for s in specs)))

    @api("miopenRunSolution")
    def _run_solution(self, a: Args) -> None:
        self.handle_state(a.handle)
        sol = self._solution(a.solution)
        require(a.nInputs >= 3 and addr(a.tensors), "RunSolution needs the X, W and Y arguments")
        args = (miopenTensorArgument_t * a.nInputs).from_address(addr(a.tensors))
        buffers: dict[int, int] = {}
        for arg in args:
            require(arg.id in (_X, _W, _Y), f"tensor argument id {arg.id} is not X, W or Y")
            require(arg.id not in buffers, f"tensor argument id {arg.id} given twice")
            if arg.descriptor:  # an override must describe the same tensor
                override = self.tensor_desc(arg.descriptor[0], "descriptor override")
                role = {_X: sol.problem.x, _W: sol.problem.w, _Y: sol.problem.y}[arg.id]
                require(override.same_as(role), f"descriptor override for id {arg.id} differs from the problem")
            buffers[arg.id] = arg.buffer or 0
        require(set(buffers) == {_X, _W, _Y}, f"RunSolution got ids {sorted(buffers)}, needs 1, 2, 3")
        self.use_workspace(a.workspace, a.workspaceSize, sol.spec.workspace_size, "workspace")
        self.compute(sol.problem, buffers[_X], buffers[_W], buffers[_Y], (a.workspace, sol.spec.workspace_size))

    # ------------------------------------------------------------------ solution objects
    @api("miopenDestroySolution")
    def _destroy_solution(self, a: Args) -> None:
        self.handles.destroy("solution", a.solution, "solution")

    @api("miopenGetSolutionWorkspaceSize")
    def _sol_ws(self, a: Args) -> None:
        write_out(a.workspaceSize, c_size_t, self._solution(a.solution).spec.workspace_size, "workspaceSize")

    @api("miopenGetSolutionTime")
    def _sol_time(self, a: Args) -> None:
        write_out(a.time, c_float, self._solution(a.solution).spec.time, "time")

    @api("miopenGetSolutionSolverId")
    def _sol_id(self, a: Args) -> None:
        write_out(a.solverId, c_uint64, self._solution(a.solution).spec.solution_id, "solverId")

    @api("miopenGetSolverIdConvAlgorithm")
    def _solver_algo(self, a: Args) -> None:
        algorithm = self.known_solvers.get(a.solverId, SOLVER_ALGORITHMS.get(a.solverId))
        if a.solverId in SOLVERS_SINCE_3_5 and self.version < (3, 5, 0):
            algorithm = None
        require(algorithm is not None, f"unknown solver id {a.solverId}", INVALID_VALUE)
        write_out(a.result, c_uint, algorithm, "result")

    def _blob(self, sol: Solution) -> bytes:
        cp = sol.problem
        body = {
            "magic": _MAGIC, "version": list(self.version), "direction": cp.direction,
            "conv": [cp.conv.spatial_dim, list(cp.conv.pads), list(cp.conv.strides),
                     list(cp.conv.dilations), cp.conv.group_count, cp.conv.mode],
            "tensors": [[t.dtype, list(t.dims), list(t.strides)] for t in (cp.x, cp.w, cp.y)],
            "spec": [sol.spec.solution_id, sol.spec.algorithm, sol.spec.workspace_size, sol.spec.time],
        }
        return json.dumps(body).encode()

    @api("miopenGetSolutionSize")
    def _sol_size(self, a: Args) -> None:
        write_out(a.size, c_size_t, len(self._blob(self._solution(a.solution))), "size")

    @api("miopenSaveSolution")
    def _sol_save(self, a: Args) -> None:
        blob = self._blob(self._solution(a.solution))
        where = addr(a.data)
        require(where, "data: Dereferencing nullptr")
        ctypes.memmove(where, blob, len(blob))

    @api("miopenLoadSolution")
    def _sol_load(self, a: Args) -> None:
        require(addr(a.solution), "solution: Dereferencing nullptr")
        raw = a.data if isinstance(a.data, bytes) else b""
        try:
            body = json.loads(raw[: a.size].decode())
            require(body.get("magic") == _MAGIC, "not a serialized solution")
        except (ValueError, UnicodeDecodeError, AttributeError):
            raise Status(BAD_PARM, "not a serialized solution") from None
        if tuple(body["version"]) != tuple(self.version):
            raise Status(VERSION_MISMATCH, f"solution saved by MIOpen {body['version']}")
        sd, pads, strides, dils, groups, mode = body["conv"]
        conv = ConvDesc(sd, tuple(pads), tuple(strides), tuple(dils), mode, groups)
        x, w, y = (TensorDesc(t[0], tuple(t[1]), tuple(t[2])) for t in body["tensors"])
        spec = SolutionSpec(*body["spec"])
        handle = self.handles.new("solution", Solution(ConvProblem(body["direction"], conv, x, w, y), spec))
        write_out(a.solution, c_size_t, handle, "solution")
