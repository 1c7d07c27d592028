"""Convolutions: immediate mode, Find 1.0 + execute, GetWorkSpaceSize, and the shared checks.

Solutions come from a configurable catalogue (``device.conv_catalogue(problem)``), sorted
best-first, each with an exact workspace size; every execute path checks that the workspace it
is given is large enough, then scribbles over the part it "uses" (so an engine that keeps live
data in a workspace MIOpen is using sees NaNs, as it would on a GPU).
"""

from __future__ import annotations

from collections.abc import Callable
from ctypes import c_int, c_size_t
from dataclasses import dataclass, field

from hipdnn.engines.reference import kernels
from miopen_ctypes.types import miopenConvAlgoPerf_t, miopenConvSolution_t

from ._base import DeviceBase
from ._core import (
    BAD_PARM,
    NOT_IMPLEMENTED,
    UNKNOWN_ERROR,
    Args,
    Status,
    addr,
    api,
    require,
    write_out,
)
from ._descriptors import ConvDesc, TensorDesc, conv_output_dims
from ._objects import strides_for

__all__ = [
    "DEFAULT_SOLVER_IDS",
    "DIRECTIONS",
    "MIB",
    "SOLVERS_SINCE_3_5",
    "SOLVER_ALGORITHMS",
    "ConvApi",
    "ConvProblem",
    "SolutionSpec",
    "default_catalogue",
    "layout_kind",
    "layout_kinds",
    "run_conv",
]

MIB = 1 << 20
DIRECTIONS = ("fwd", "bwd", "wrw")  # = miopenProblemDirection_t 0, 1, 2


@dataclass(frozen=True)
class SolutionSpec:
    """One solver the emulated device offers for a problem."""

    solution_id: int
    algorithm: int  # miopenConvAlgorithm_t
    workspace_size: int
    time: float  # ms


@dataclass
class ConvProblem:
    """A convolution problem; for "bwd" x is dx and y is dy, for "wrw" w is dw."""

    direction: str
    conv: ConvDesc
    x: TensorDesc
    w: TensorDesc
    y: TensorDesc
    key: tuple[object, ...] = field(init=False)

    def __post_init__(self) -> None:
        c = self.conv
        self.key = (
            self.direction, c.spatial_dim, c.pads, c.strides, c.dilations, c.group_count, c.mode,
            *((t.dtype, t.dims, t.strides) for t in (self.x, self.w, self.y)),
        )


#: miopenGetSolverIdConvAlgorithm of the real libMIOpen 3.4/3.5 for every id it knows (180: 3.5 only).
SOLVER_ALGORITHMS: dict[int, int] = {
    **dict.fromkeys((1, 2, 3, 5, 6, 7, 8, 9, 11, 13, *range(16, 26), 85, 86, 87), 1),
    **dict.fromkeys((14, 15, 35, *range(37, 50), 53, *range(67, 72), *range(75, 80), 84, 139, 180), 3),
    **dict.fromkeys((26, 31, *range(54, 58), *range(60, 67), 72, 73, 74, *range(80, 84), 98, 99, 100, 103, 104,
                     105, 107, 108, 110, 114, 127, 128, 129, 137, 138, 140, 141, 155, 156), 5),
    34: 2,
    **dict.fromkeys((88, 89, 90, 91, 95, 96, 97, 101, 102), 0),
}
SOLVERS_SINCE_3_5 = frozenset({180})
#: Solver ids of the default catalogue, per direction (fictitious, stable: engine tests name them;
#: 101-103 shadow real ids in miopenGetSolverIdConvAlgorithm once the catalogue handed them out).
DEFAULT_SOLVER_IDS = {"fwd": (101, 102, 103), "bwd": (201, 202, 203), "wrw": (301, 302, 303)}


def default_catalogue(problem: ConvProblem) -> list[SolutionSpec]:
    """Three solvers, best first: more workspace buys speed (16 MiB, 1 MiB, none)."""
    gemm, winograd, direct = DEFAULT_SOLVER_IDS[problem.direction]
    return [
        SolutionSpec(gemm, 5, 16 * MIB, 0.25),  # implicit GEMM
        SolutionSpec(winograd, 3, 1 * MIB, 0.5),  # Winograd
        SolutionSpec(direct, 1, 0, 1.0),  # direct
    ]


def layout_kinds(t: TensorDesc) -> frozenset[str]:
    """The packed layouts ``t`` is in: "cf" (channels-first), "cl" (channels-last), both (a
    size-1 axis's stride addresses nothing, so a dense tensor with C == 1 or spatial size 1
    is both), or none."""
    order_cf = tuple(range(len(t.dims)))
    order_cl = (0, *range(2, len(t.dims)), 1)
    kinds = set()
    for kind, order in (("cf", order_cf), ("cl", order_cl)):
        step, ok = 1, True
        for axis in reversed(order):
            if t.dims[axis] != 1 and t.strides[axis] != step:
                ok = False
            step *= t.dims[axis]
        if ok:
            kinds.add(kind)
    return frozenset(kinds)


def layout_kind(t: TensorDesc) -> str | None:
    """"cf" or "cl" when ``t`` is packed in one of them (its exact strides decide when it is
    both), else None."""
    kinds = layout_kinds(t)
    if len(kinds) < 2:
        return next(iter(kinds), None)
    cl = strides_for(t.dims, (0, *range(2, len(t.dims)), 1))
    return "cl" if tuple(t.strides) == tuple(cl) else "cf"


def check_conv(problem: ConvProblem) -> None:
    """The library's (and the emulator's) preconditions for computing ``problem``."""
    conv, x, w, y = problem.conv, problem.x, problem.w, problem.y
    require(x.dims and w.dims and y.dims, "a tensor descriptor of the problem was never set")
    if conv.mode != 0:
        raise Status(NOT_IMPLEMENTED, "only cross-correlation (miopenConvolution) is emulated")
    require(conv.spatial_dim in (2, 3), f"{conv.spatial_dim}-d convolutions are not supported")
    require(conv.group_count >= 1, f"group count {conv.group_count} must be >= 1")
    require(x.dims[1] == w.dims[1] * conv.group_count and w.dims[0] % conv.group_count == 0,
            "Channels do not match for the filter (with the group count)")
    require(x.dtype == w.dtype == y.dtype, "x, w and y must have the same data type")
    require(x.dtype in (0, 1, 5), "only fp16, fp32 and bf16 convolutions are emulated")
    expected = conv_output_dims(conv, x, w)
    require(y.dims == expected, f"y dims {y.dims} != convolution output {expected}")
    shared = layout_kinds(x) & layout_kinds(w) & layout_kinds(y)
    require(bool(shared),
            "x, w and y must all be packed, in the same layout (NCHW-like or NHWC-like)")


class ConvApi(DeviceBase):
    """Mixin: convolution entry points (immediate mode, Find 1.0, workspace queries)."""

    conv_catalogue: Callable[[ConvProblem], list[SolutionSpec]]
    known_solvers: dict[int, int]  # solver id -> miopenConvAlgorithm_t, of every id handed out

    # ------------------------------------------------------------------ helpers
    def conv_problem(self, direction: str, a: Args) -> ConvProblem:
        """The problem named by the descriptor arguments of an immediate/Find 1.0 call."""
        conv = self.conv_desc(a.convDesc, "convDesc")
        if direction == "fwd":
            x, w, y = a.xDesc, a.wDesc, a.yDesc
        elif direction == "bwd":
            x, w, y = a.dxDesc, a.wDesc, a.dyDesc
        else:
            x, w, y = a.xDesc, a.dwDesc, a.dyDesc
        return ConvProblem(direction, conv.copy(), self.tensor_desc(x, "x"), self.tensor_desc(w, "w"),
                           self.tensor_desc(y, "y"))

    def solutions_for(self, problem: ConvProblem) -> list[SolutionSpec]:
        """The applicable solutions, best first (after the problem's own checks)."""
        check_conv(problem)
        specs = list(self.conv_catalogue(problem))
        self.known_solvers.update({s.solution_id: s.algorithm for s in specs})
        return specs

    def spec_by_id(self, problem: ConvProblem, solution_id: int) -> SolutionSpec:
        """The catalogue entry ``solution_id`` for ``problem`` (BadParm if not applicable)."""
        for spec in self.solutions_for(problem):
            if spec.solution_id == solution_id:
                return spec
        raise Status(BAD_PARM, f"solution id {solution_id} is not applicable to this problem")

    def compute(self, problem: ConvProblem, x: object, w: object, y: object,
                workspace: tuple[object, int] = (None, 0)) -> None:
        """Run ``problem`` on device pointers (x/w/y roles as in ConvProblem); none may overlap."""
        self.check_disjoint([("x", x, problem.x.num_bytes), ("w", w, problem.w.num_bytes),
                             ("y", y, problem.y.num_bytes), ("workspace", *workspace)])
        run_conv(self, problem, x, w, y)

    # ------------------------------------------------------------------ immediate mode
    def _count(self, direction: str, a: Args) -> None:
        self.handle_state(a.handle)
        write_out(a.solutionCount, c_size_t, len(self.solutions_for(self.conv_problem(direction, a))),
                  "solutionCount")

    def _get(self, direction: str, a: Args) -> None:
        self.handle_state(a.handle)
        specs = self.solutions_for(self.conv_problem(direction, a))[: a.maxSolutionCount]
        where = addr(a.solutions)
        require(where or not specs, "solutions: Dereferencing nullptr")
        out = (miopenConvSolution_t * max(len(specs), 1)).from_address(where) if specs else None
        for i, spec in enumerate(specs):
            assert out is not None
            out[i].time, out[i].workspace_size = spec.time, spec.workspace_size
            out[i].solution_id, out[i].algorithm = spec.solution_id, spec.algorithm
        write_out(a.solutionCount, c_size_t, len(specs), "solutionCount")

    def _ws(self, direction: str, a: Args) -> None:
        self.handle_state(a.handle)
        spec = self.spec_by_id(self.conv_problem(direction, a), a.solution_id)
        write_out(a.workSpaceSize, c_size_t, spec.workspace_size, "workSpaceSize")

    def _compile(self, direction: str, a: Args) -> None:
        self.handle_state(a.handle)
        self.spec_by_id(self.conv_problem(direction, a), a.solution_id)

    def _immediate(self, direction: str, a: Args, x: object, w: object, y: object) -> None:
        self.handle_state(a.handle)
        problem = self.conv_problem(direction, a)
        spec = self.spec_by_id(problem, a.solution_id)
        self.use_workspace(a.workSpace, a.workSpaceSize, spec.workspace_size, "workSpace")
        self.compute(problem, x, w, y, (a.workSpace, spec.workspace_size))

    @api("miopenConvolutionForwardGetSolutionCount")
    def _fwd_count(self, a: Args) -> None:
        self._count("fwd", a)

    @api("miopenConvolutionBackwardDataGetSolutionCount")
    def _bwd_count(self, a: Args) -> None:
        self._count("bwd", a)

    @api("miopenConvolutionBackwardWeightsGetSolutionCount")
    def _wrw_count(self, a: Args) -> None:
        self._count("wrw", a)

    @api("miopenConvolutionForwardGetSolution")
    def _fwd_get(self, a: Args) -> None:
        self._get("fwd", a)

    @api("miopenConvolutionBackwardDataGetSolution")
    def _bwd_get(self, a: Args) -> None:
        self._get("bwd", a)

    @api("miopenConvolutionBackwardWeightsGetSolution")
    def _wrw_get(self, a: Args) -> None:
        self._get("wrw", a)

    @api("miopenConvolutionForwardGetSolutionWorkspaceSize")
    def _fwd_ws(self, a: Args) -> None:
        self._ws("fwd", a)

    @api("miopenConvolutionBackwardDataGetSolutionWorkspaceSize")
    def _bwd_ws(self, a: Args) -> None:
        self._ws("bwd", a)

    @api("miopenConvolutionBackwardWeightsGetSolutionWorkspaceSize")
    def _wrw_ws(self, a: Args) -> None:
        self._ws("wrw", a)

    @api("miopenConvolutionForwardCompileSolution")
    def _fwd_compile(self, a: Args) -> None:
        self._compile("fwd", a)

    @api("miopenConvolutionBackwardDataCompileSolution")
    def _bwd_compile(self, a: Args) -> None:
        self._compile("bwd", a)

    @api("miopenConvolutionBackwardWeightsCompileSolution")
    def _wrw_compile(self, a: Args) -> None:
        self._compile("wrw", a)

    @api("miopenConvolutionForwardImmediate")
    def _fwd_immediate(self, a: Args) -> None:
        self._immediate("fwd", a, a.x, a.w, a.y)

    @api("miopenConvolutionBackwardDataImmediate")
    def _bwd_immediate(self, a: Args) -> None:
        self._immediate("bwd", a, a.dx, a.w, a.dy)

    @api("miopenConvolutionBackwardWeightsImmediate")
    def _wrw_immediate(self, a: Args) -> None:
        self._immediate("wrw", a, a.x, a.dw, a.dy)

    # ------------------------------------------------------------------ Find 1.0
    def _workspace_size(self, direction: str, a: Args) -> None:
        self.handle_state(a.handle)
        specs = self.solutions_for(self.conv_problem(direction, a))
        write_out(a.workSpaceSize, c_size_t, max((s.workspace_size for s in specs), default=0),
                  "workSpaceSize")

    @api("miopenConvolutionForwardGetWorkSpaceSize")
    def _fwd_wss(self, a: Args) -> None:
        self._workspace_size("fwd", a)

    @api("miopenConvolutionBackwardDataGetWorkSpaceSize")
    def _bwd_wss(self, a: Args) -> None:
        self._workspace_size("bwd", a)

    @api("miopenConvolutionBackwardWeightsGetWorkSpaceSize")
    def _wrw_wss(self, a: Args) -> None:
        self._workspace_size("wrw", a)

    def _find(self, direction: str, a: Args, x: object, w: object, y: object) -> None:
        state = self.handle_state(a.handle)
        problem = self.conv_problem(direction, a)
        fitting = [s for s in self.solutions_for(problem) if s.workspace_size <= a.workSpaceSize]
        if any(s.workspace_size for s in fitting):
            require(addr(a.workSpace), "workSpace is NULL but workSpaceSize > 0")
        best: dict[int, SolutionSpec] = {}
        for spec in sorted(fitting, key=lambda s: s.time):
            best.setdefault(spec.algorithm, spec)  # only the best solver per algorithm survives
        ranked = sorted(best.values(), key=lambda s: s.time)[: max(a.requestAlgoCount, 0)]
        require(a.requestAlgoCount >= 1, "requestAlgoCount must be >= 1")
        self.compute(problem, x, w, y)  # Find runs the kernels: the output is written
        if ranked:
            self.use_workspace(a.workSpace, a.workSpaceSize, ranked[0].workspace_size, "workSpace")
        where = addr(a.perfResults)
        require(where, "perfResults: Dereferencing nullptr")
        out = (miopenConvAlgoPerf_t * max(len(ranked), 1)).from_address(where)
        for i, spec in enumerate(ranked):
            out[i].fwd_algo, out[i].time, out[i].memory = spec.algorithm, spec.time, spec.workspace_size
        write_out(a.returnedAlgoCount, c_int, len(ranked), "returnedAlgoCount")
        registered = state.find1.setdefault(problem.key, {})
        registered.update({s.algorithm: s for s in ranked})

    def _execute(self, direction: str, a: Args, x: object, w: object, y: object) -> None:
        state = self.handle_state(a.handle)
        self.check_alpha_beta(a.alpha, a.beta, "alpha/beta")
        problem = self.conv_problem(direction, a)
        self.solutions_for(problem)
        spec = state.find1.get(problem.key, {}).get(a.algo)
        if spec is None:
            raise Status(UNKNOWN_ERROR, f"No invoker was registered for algorithm {a.algo} of this "
                                        "convolution. Was find executed?")
        self.use_workspace(a.workSpace, a.workSpaceSize, spec.workspace_size, "workSpace")
        self.compute(problem, x, w, y, (a.workSpace, spec.workspace_size))

    @api("miopenFindConvolutionForwardAlgorithm")
    def _fwd_find(self, a: Args) -> None:
        self._find("fwd", a, a.x, a.w, a.y)

    @api("miopenFindConvolutionBackwardDataAlgorithm")
    def _bwd_find(self, a: Args) -> None:
        self._find("bwd", a, a.dx, a.w, a.dy)

    @api("miopenFindConvolutionBackwardWeightsAlgorithm")
    def _wrw_find(self, a: Args) -> None:
        self._find("wrw", a, a.x, a.dw, a.dy)

    @api("miopenConvolutionForward")
    def _fwd_exec(self, a: Args) -> None:
        self._execute("fwd", a, a.x, a.w, a.y)

    @api("miopenConvolutionBackwardData")
    def _bwd_exec(self, a: Args) -> None:
        self._execute("bwd", a, a.dx, a.w, a.dy)

    @api("miopenConvolutionBackwardWeights")
    def _wrw_exec(self, a: Args) -> None:
        self._execute("wrw", a, a.x, a.dw, a.dy)


def run_conv(dev: DeviceBase, problem: ConvProblem, x: object, w: object, y: object) -> None:
    """The convolution math on device memory through hipdnn's reference kernels."""
    conv = problem.conv
    pads, strides, dils, groups = list(conv.pads), list(conv.strides), list(conv.dilations), conv.group_count
    if problem.direction == "fwd":
        out = kernels.conv_fprop(dev.view(problem.x, x, "x"), dev.view(problem.w, w, "w"),
                                 pads, pads, strides, dils, groups)
        dev.store(problem.y, y, out, "y")
    elif problem.direction == "bwd":
        out = kernels.conv_dgrad(dev.view(problem.y, y, "dy"), dev.view(problem.w, w, "w"),
                                 problem.x.dims, pads, pads, strides, dils, groups)
        dev.store(problem.x, x, out, "dx")
    else:
        out = kernels.conv_wgrad(dev.view(problem.x, x, "x"), dev.view(problem.y, y, "dy"),
                                 problem.w.dims, pads, pads, strides, dils, groups)
        dev.store(problem.w, w, out, "dw")

