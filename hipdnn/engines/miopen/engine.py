"""MIOPEN_ENGINE: the seed table's rows on libMIOpen, with hipDNN's two knobs.

>>> from hipdnn.engines.miopen import MiopenEngine
>>> MiopenEngine().name, MiopenEngine.rank
('MIOPEN_ENGINE', 0)

No library is loaded until a graph is checked; without MIOpen or without a GPU the engine
declines every graph with the reason, and the graph falls back to the next engine.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, cast

import miopen_ctypes
from hipdnn.backend.engine import Engine, ExecutionPlan, TransientReason
from hipdnn.backend.knobs import (
    BENCHMARKING_KNOB,
    WORKSPACE_SIZE_LIMIT_KNOB,
    IntConstraint,
    Knob,
    KnobValue,
)
from hipdnn.core.errors import EngineError, HipdnnError
from hipdnn.core.handle import default_handle
from hipdnn.core.logs import logger
from hipdnn.core.types import DataType, KnobValueType
from hipdnn.engines.miopen.batchnorm import BnBackwardRunner, BnInferenceRunner, BnTrainingRunner
from hipdnn.engines.miopen.conv import NO_LIMIT, conv_geometry
from hipdnn.engines.miopen.conv_rows import ConvBiasActRunner, ConvRunner, conv_op_for
from hipdnn.engines.miopen.decision import PlanDecision
from hipdnn.engines.miopen.descriptors import Resources
from hipdnn.engines.miopen.errors import translating
from hipdnn.engines.miopen.memory import MiopenHandleState
from hipdnn.engines.miopen.norm_patterns import NORM_CALLS
from hipdnn.engines.miopen.norms import (
    LayerNormBackwardRunner,
    LayerNormRunner,
    RmsNormBackwardRunner,
    RmsNormRunner,
)
from hipdnn.engines.miopen.patterns import Match, Row, match
from hipdnn.engines.miopen.plan import MiopenPlan
from hipdnn.engines.miopen.pointwise import ActivationRunner, BinaryRunner
from hipdnn.engines.miopen.roles import ConvBiasAct, ConvDgrad, ConvFprop, ConvWgrad
from hipdnn.engines.miopen.rules import Declined
from hipdnn.engines.miopen.runtime import CHandle, Runner
from hipdnn.engines.miopen.workarounds import workaround_for
from miopen_ctypes._discovery import forget_failures
from miopen_ctypes.enums import miopenActivationMode_t as ActivationMode
from miopen_ctypes.enums import miopenStatus_t
from miopen_ctypes.errors import (
    HipError,
    MIOpenAllocFailedError,
    MIOpenError,
    MIOpenNoDeviceError,
    MIOpenStatusError,
)
from miopen_ctypes.hip import HipLibrary, load_hip
from miopen_ctypes.loader import MIOpenLibrary

if TYPE_CHECKING:
    from hipdnn.core.handle import Handle
    from hipdnn.ir.view import GraphView

__all__ = ["DETERMINISTIC_ROWS", "MiopenDeterministicEngine", "MiopenEngine", "Unavailable",
           "check_library_rules"]

_serials = itertools.count(1)
#: Solution lists kept per MIOpen handle between check_support, get_knobs and build_plan.
_MEMO_SIZE = 64
_BN_RUNNERS: dict[Row, Callable[[MIOpenLibrary, HipLibrary, Resources, Match, CHandle], Runner]] = {
    Row.BN_INFERENCE: BnInferenceRunner,
    Row.BN_INFERENCE_INV: BnInferenceRunner,
    Row.BN_INFERENCE_ACT: BnInferenceRunner,
    Row.BN_INFERENCE_INV_ACT: BnInferenceRunner,
    Row.POINTWISE_ACT: ActivationRunner,
    Row.POINTWISE_BINARY: BinaryRunner,
    Row.BN_TRAINING: BnTrainingRunner,
    Row.BN_TRAINING_ACT: BnTrainingRunner,
    Row.BN_BACKWARD: BnBackwardRunner,
    Row.BN_INF_DRELU_BN_BWD: BnBackwardRunner,
    Row.LAYERNORM: LayerNormRunner,
    Row.LAYERNORM_BACKWARD: LayerNormBackwardRunner,
    Row.RMSNORM: RmsNormRunner,
    Row.RMSNORM_BACKWARD: RmsNormBackwardRunner,
}


class Unavailable(EngineError):
    """MIOpen cannot run here now (no library, no GPU, the MIOpen handle could not be created);
    ``str(exc)`` is check_support's reason."""


#: hipError_t values that say the device itself is missing: hipErrorInsufficientDriver,
#: hipErrorNoDevice, hipErrorInvalidDevice.
_HIP_NO_DEVICE = frozenset({35, 100, 101})
_HIP_OUT_OF_MEMORY = 2


def _handle_failure(exc: BaseException, device: int) -> str:
    """Why the MIOpen handle of ``device`` could not be created, by the failing call's cause:
    "no AMD GPU available" only when the call said so (MIOpen's UnknownError from miopenCreate,
    HIP's no-device statuses), "out of device memory" for an allocation failure."""
    function = getattr(exc, "function", "miopenCreate")
    failed = f"{function} failed ({_status_text(exc)})"
    status = getattr(exc, "status", None)
    if isinstance(exc, MIOpenNoDeviceError) or (isinstance(exc, HipError)
                                                 and status in _HIP_NO_DEVICE):
        return f"no AMD GPU available: {failed}"
    if isinstance(exc, MIOpenAllocFailedError) or (isinstance(exc, HipError)
                                                   and status == _HIP_OUT_OF_MEMORY):
        return f"out of device memory creating the MIOpen handle on device {device}: {failed}"
    return f"could not create the MIOpen handle on device {device}: {failed}"


#: Rows whose activation runs on the data type, and the 3.5 call that fuses it (bf16 needs it).
_BN_ACTIVATION_CALLS = {
    Row.BN_TRAINING_ACT: "miopenBatchNormForwardTrainingActivation",
    Row.BN_INF_DRELU_BN_BWD: "miopenBatchNormBackwardActivation",
}


#: Rows that call miopenBatchNormalizationForwardInference_V2 (on 3.4 for the DReLU row too,
#: whose NCHW-only fusion plan does not apply to channels-last).
_BN_INFERENCE_ROWS = (Row.BN_INFERENCE, Row.BN_INFERENCE_INV, Row.BN_INF_DRELU_BN_BWD,
                      Row.BN_INFERENCE_ACT, Row.BN_INFERENCE_INV_ACT)
#: Rows whose activation runs standalone on MIOpen 3.4 (miopenActivationForward).
#: Rows that hand MIOpen an activation (fused or standalone): on MIOpen 3.4 a CLAMP there is
#: computed as zeros (its MIOpenNeuron.cl has no CLAMP; AMD's kernels on tests/amdkernels).
_ACTIVATION_34_ROWS = (Row.BN_INFERENCE_ACT, Row.BN_INFERENCE_INV_ACT, Row.POINTWISE_ACT,
                       Row.CONV_BIAS_ACT, Row.BN_TRAINING_ACT, Row.BN_INF_DRELU_BN_BWD)
#: Rows that run MIOpen 3.4's batchnorm training/backward kernels (the _V2 calls; the
#: activation row's unfused path too).
_BN_PLAIN_ROWS = (Row.BN_TRAINING, Row.BN_BACKWARD, Row.BN_TRAINING_ACT)
#: A MIOpen 3.5 symbol: its presence marks the batchnorm generation that runs channels-last inference.
_BN_35_MARKER = "miopenBatchNormForwardInferenceActivation"


_C_INT_MAX = 2**31 - 1


def check_library_rules(m: Match, lib: MIOpenLibrary) -> None:
    """Raise :class:`Declined` when this library cannot run ``m`` (known before building).

    Channels-last batchnorm inference needs MIOpen 3.5: 3.4.0's only inference solver is
    NCHW-only (the real library says "No solver found"; tests/stubgpu/test_decisions.py).

    bf16 batchnorm + activation rows need the MIOpen 3.5 ``*Activation`` calls: MIOpen's
    batchnorm + activation fusion plans and its standalone activation kernels (MIOpenNeuron.cl)
    are built for fp32/fp16 only.

    On MIOpen 3.4, AMD's own kernels (run on the emulated gfx1100 of tests/amdkernels) showed
    its NDHWC batchnorm training/backward launching a workgroup per channel x depth, reading
    past the per-channel tensors: declined there. (Its batchnorm + activation fusion kernels
    compute 4-D NCHW only: other layouts run unfused, hipdnn/engines/miopen/batchnorm.py.)

    The norm rows need their call in the library: ``miopenLayerNormBackward`` is MIOpen >= 3.5.
    """
    norm_call = NORM_CALLS.get(type(m.t))
    if norm_call is not None and not lib.capabilities.has(norm_call):
        version = ".".join(map(str, lib.version))
        raise Declined(f"node {m.nodes[0].name!r}: {m.row.value} needs {norm_call}, which MIOpen "
                       f"{version} does not export (MIOpen >= 3.5 does)")
    if not lib.capabilities.has("miopenSetTensorDescriptorV2"):
        # miopenSetTensorDescriptor takes C ints: 2**32 + 5 would arrive as 5 (a descriptor of
        # another tensor, a plausible wrong answer), 2**31 + 5 as a negative number
        for node in m.nodes:
            for port, t in (*node.inputs.items(), *node.outputs.items()):
                if t is None or t.dim is None:
                    continue
                big = [int(v) for v in (*t.dim, *(t.stride or ())) if int(v) > _C_INT_MAX]
                if big:
                    raise Declined(f"node {node.name!r}: port {port} (tensor {t.name!r}) has dims "
                                   f"{list(t.dim)} strides {list(t.stride or ())}: this MIOpen "
                                   f"has no miopenSetTensorDescriptorV2, and "
                                   f"miopenSetTensorDescriptor takes dims and strides as C ints "
                                   f"(valid: at most 2**31-1 = {_C_INT_MAX})")
    if (m.row == Row.POINTWISE_ACT and m.activation is not None
            and m.activation.mode == int(ActivationMode.miopenActivationCLAMP)):
        raise Declined(f"node {m.nodes[0].name!r}: a lower clip (CLAMP) has no standalone MIOpen "
                       "kernel: MIOpen 3.4's MIOpenNeuron.cl has no CLAMP mode (mode 10 computes "
                       "zeros) and MIOpen 3.5.1's standalone CLAMP kernel does not compile "
                       "(ActivationFunction_ClampU undeclared; the real library over the stub GPU, "
                       "tests/stubgpu); ReLU, clipped ReLU (upper clip only), leaky ReLU, sigmoid "
                       "and tanh run")
    if (m.row in _ACTIVATION_34_ROWS and not lib.capabilities.has(_BN_35_MARKER)
            and m.activation is not None and m.activation.mode == int(ActivationMode.miopenActivationCLAMP)):
        act = next((n for n in m.nodes if "RELU" in str(n.attributes().get("mode", ""))),
                   m.nodes[-1])
        raise Declined(f"node {act.name!r}: a lower clip (CLAMP) needs MIOpen >= 3.5: "
                       "MIOpen 3.4's activation kernels (MIOpenNeuron.cl) have no CLAMP mode and "
                       "compute zeros for it; ReLU, clipped ReLU (upper clip only) and leaky ReLU "
                       "run there")
    if (m.row in (Row.BN_INFERENCE_ACT, Row.BN_INFERENCE_INV_ACT)
            and m.data_type == DataType.BFLOAT16
            and not lib.capabilities.has("miopenBatchNormForwardInferenceActivation")):
        raise Declined(f"node {m.nodes[0].name!r}: bf16 {m.row.value} needs "
                       "miopenBatchNormForwardInferenceActivation (MIOpen >= 3.5), which this "
                       "library lacks; MIOpen's standalone activation kernels support fp32/fp16 only")
    call = _BN_ACTIVATION_CALLS.get(m.row)
    if (call is not None and m.data_type == DataType.BFLOAT16
            and not lib.capabilities.has(call)):
        raise Declined(f"node {m.nodes[0].name!r}: bf16 {m.row.value} needs {call} (MIOpen >= "
                       "3.5), which this library lacks; MIOpen's batchnorm + activation fusion "
                       "plans and its standalone activation kernels support fp32/fp16 only")
    if (m.row in _BN_INFERENCE_ROWS and m.layout.endswith("C")
            and not lib.capabilities.has(_BN_35_MARKER)):
        raise Declined(f"node {m.nodes[0].name!r}: {m.row.value} in {m.layout_name} needs MIOpen >= "
                       f"3.5 (this library lacks {_BN_35_MARKER}): MIOpen 3.4's batchnorm "
                       "inference solver (BnFwdInference) is NCHW only, the real 3.4.0 answers "
                       "'No solver found' (miopenStatusNotImplemented) for channels-last")
    if (m.row in _BN_PLAIN_ROWS and m.layout == "NDHWC"
            and not lib.capabilities.has(_BN_35_MARKER)):
        raise Declined(f"node {m.nodes[0].name!r}: {m.row.value} in NDHWC needs MIOpen >= 3.5: "
                       "MIOpen 3.4 launches its 5-D channels-last batchnorm kernels with a workgroup "
                       "per channel x depth, reading past the per-channel tensors (run by AMD's "
                       "kernels, tests/amdkernels)")


def check_arch_rules(m: Match, arch: str) -> None:
    """Raise :class:`Declined` when a workaround leaves no path for ``m`` on ``arch``: bf16
    conv + bias + activation runs only fused, and the fused path is not used there."""
    w = workaround_for(m.row, arch)
    if w is not None and m.row == Row.CONV_BIAS_ACT and m.data_type == DataType.BFLOAT16:
        raise Declined(f"node {m.nodes[0].name!r}: bf16 {m.row.value} runs only as a MIOpen fusion "
                       f"plan (MIOpen's standalone activation kernels support fp32/fp16 only), "
                       f"and {w.note(arch)}")


def _default_miopen() -> MIOpenLibrary:
    return miopen_ctypes.load()


def _default_hip() -> HipLibrary:
    return load_hip()


#: Where a missing library's reason sends the user: one line, no search list (``info`` has it).
_WHERE = "(`python -m hipdnn info` says where hipdnn looked)"


def _not_found(what: str, variable: str, exc: BaseException) -> str:
    """One line for a library that was not found. The places tried are named only when the
    user pointed ``variable`` at a file (they asked for that one); otherwise ``info`` and the
    exception (``miopen_ctypes.load()``) list every place and the fix for this platform."""

    if os.environ.get(variable):
        return f"{what} not found: {_short(exc)} {_WHERE}"
    return f"{what} not found {_WHERE}"


def _short(exc: BaseException) -> str:
    # only the places that had a file or name to open (the full list is in the exception)
    attempts = [place for place, _ in getattr(exc, "attempts", None) or () if ": " in place]
    if attempts:
        return "tried " + "; ".join(attempts[:6]) + (
            f" (+{len(attempts) - 6} more)" if len(attempts) > 6 else "")
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _status_text(exc: BaseException) -> str:
    """``miopenStatusUnknownError (7): No device`` for a status error, else the message."""

    status, text = getattr(exc, "status", None), getattr(exc, "text", None)
    if isinstance(exc, HipError):
        name = "hipError_t"
    elif isinstance(exc, MIOpenStatusError) and status in set(miopenStatus_t):
        name = miopenStatus_t(status).name
    else:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"{name} ({status})" + (f": {text}" if text else "")


class MiopenEngine(Engine):
    """hipDNN's MIOpen provider in Python (rank 0: preferred when it applies).

    ``miopen_loader`` / ``hip_loader`` return the bound libraries (default: discover the
    installed ones); tests inject an emulated device through them.
    """

    name = "MIOPEN_ENGINE"
    rank = 0

    def __init__(self, miopen_loader: Callable[[], MIOpenLibrary] | None = None,
                 hip_loader: Callable[[], HipLibrary] | None = None) -> None:
        self._miopen_loader = miopen_loader or _default_miopen
        self._hip_loader = hip_loader or _default_hip
        self._libs: tuple[MIOpenLibrary, HipLibrary] | None = None
        self._lock = threading.Lock()
        self._key = ("MIOPEN_ENGINE", next(_serials))

    # ------------------------------------------------------------------------- libraries/handle
    def libraries(self, *, refresh: bool = False) -> tuple[MIOpenLibrary, HipLibrary]:
        """(MIOpenLibrary, HipLibrary), loaded on first use; raises :class:`Unavailable`.

        A failed search is remembered by discovery itself (miopen_ctypes/_discovery.py), so
        asking again is cheap, until a discovery variable (``HIPDNN_MIOPEN_LIBRARY``,
        ``HIPDNN_HIP_LIBRARY``, ``ROCM_PATH``, ``HIP_PATH``, ``PATH``) changes,
        ``miopen_ctypes.load(refresh=True)`` is called, or ``refresh=True`` is passed here.
        """
        if self._libs is None:
            with self._lock:
                if self._libs is None:
                    self._libs = self._load(refresh)
        return self._libs

    def _load(self, refresh: bool) -> tuple[MIOpenLibrary, HipLibrary]:
        if refresh:
            forget_failures()
        try:
            lib = self._miopen_loader()
        except Exception as exc:
            raise Unavailable(_not_found("MIOpen library", "HIPDNN_MIOPEN_LIBRARY", exc)) from exc
        try:
            hip = self._hip_loader()
        except Exception as exc:
            raise Unavailable(_not_found("HIP runtime", "HIPDNN_HIP_LIBRARY", exc)) from exc
        return lib, hip

    def handle_state(self, handle: Handle | None) -> MiopenHandleState:
        """The MIOpen handle of ``handle`` (the default handle when None), created on first use."""

        lib, hip = self.libraries()
        h = handle if handle is not None else default_handle()
        try:
            return h.state(self._key, lambda hh: MiopenHandleState(lib, hip, hh.device, hh.stream))
        except HipdnnError:  # a closed Handle (GraphStateError) is the caller's error, not ours
            raise
        except Exception as exc:  # nothing is stored: the next call tries again
            raise Unavailable(_handle_failure(exc, h.device)) from exc

    def match(self, graph: GraphView) -> Match:
        """The row ``graph`` is on this engine, or raise :class:`Declined` naming the rule."""
        return match(graph)

    # ----------------------------------------------------------------------------- the contract
    def check_support(self, graph: GraphView, handle: Handle | None) -> str | None:
        """None when a seed row matches and MIOpen can run it here, else the reason (never raises).

        Only MIOpen's answers about the graph (a row that does not match, a library or
        architecture rule, no applicable convolution solution) are definitive. A failure on the
        way (the library not loadable, the MIOpen handle not created, a descriptor or solution
        call failing, e.g. out of memory) is a :class:`TransientReason` naming the call and its
        status: the planner does not cache it, and the next build asks again."""
        try:
            m = self.match(graph)
            state = self.handle_state(handle)
            check_library_rules(m, state.lib)
            with translating(f"{m.row.value}: device query", building=True):
                arch = state.arch
            check_arch_rules(m, arch)
            if m.has_conv:
                self._solutions(m, state)
        except Declined as exc:
            return str(exc)
        except Unavailable as exc:
            return TransientReason(str(exc))
        except Exception as exc:  # check_support never raises
            return TransientReason(f"{type(exc).__name__}: {exc}")
        return None

    def _solutions(self, m: Match, state: MiopenHandleState, *, take: bool = False) -> list[tuple[int, int]]:
        """Applicable conv solutions (id, workspace) for the row's convolution.

        One enumeration per build: check_support's list is kept on the MIOpen handle (a
        small LRU keyed by the exact problem) and served to get_knobs; build_plan takes it
        (``take``: removed), so the next build of the problem asks MIOpen again (its answer can
        change once Find has written its find db)."""
        memo: OrderedDict[Hashable, list[tuple[int, int]]] | None = getattr(state, "solution_memo", None)
        if memo is None:
            memo = state.solution_memo = OrderedDict()  # type: ignore[attr-defined]
        key = _problem_key(m)
        with self._lock:
            sols = memo.pop(key, None) if take else memo.get(key)
        if sols is not None:
            return sols
        lib, hip = self.libraries()
        res = Resources()
        try:
            with state.using(f"{m.row.value}: solution query"), \
                    translating(f"{m.row.value}: solution query", building=True):
                sols = conv_op_for(lib, hip, res, m).solutions(state.handle)
        finally:
            res.close()
        if not sols:
            assert m.conv is not None
            raise Declined(f"node {m.conv.name!r}: MIOpen reports no applicable solution for this "
                           "convolution")
        if not take:
            with self._lock:
                memo[key] = sols
                while len(memo) > _MEMO_SIZE:
                    memo.popitem(last=False)
        return sols

    def get_knobs(self, graph: GraphView, handle: Handle | None) -> list[Knob]:
        """global.benchmarking always; global.workspace_size_limit for graphs with a convolution."""
        knobs = [Knob(BENCHMARKING_KNOB, KnobValueType.INT64, 0, IntConstraint(0, 1),
                      "0: heuristic solution (immediate mode); 1: exhaustive search (Find 2.0 "
                      "with tuning, results kept in MIOpen's user databases)")]
        try:
            m = self.match(graph)
        except Declined:
            return knobs
        if m.has_conv:
            try:
                sols = self._solutions(m, self.handle_state(handle))
            except (Declined, Unavailable) as exc:
                raise EngineError(f"MIOPEN_ENGINE cannot list knobs: {exc}") from exc
            lo = min(ws for _, ws in sols)
            knobs.append(Knob(WORKSPACE_SIZE_LIMIT_KNOB, KnobValueType.INT64, NO_LIMIT,
                              IntConstraint(lo, NO_LIMIT),
                              f"largest workspace (bytes) a convolution solution may use; the "
                              f"default {NO_LIMIT} (2**63 - 1) sets no limit: immediate mode takes "
                              f"MIOpen's first solution, Find 2.0 considers every solver it "
                              f"tunes whatever its workspace (the plan's workspace is what the "
                              f"chosen solution needs); below {lo} no solution fits"))
        return knobs

    def build_plan(self, graph: GraphView, knobs: dict[str, KnobValue],
                   handle: Handle | None) -> ExecutionPlan:
        """Match, create the MIOpen objects, choose the path; errors name the row and call."""
        return self._build(graph, knobs, handle, None)

    # -------------------------------------------------------------------------- the plan store
    def store_token(self, handle: Handle | None) -> str | None:
        """``MIOpen <version> on <arch>`` plus MIOpen's switches that change its choices
        (``MIOPEN_DEBUG_*``, ``MIOPEN_FIND_*``); None when the architecture is unknown."""
        lib, _ = self.libraries()
        arch = self.handle_state(handle).arch
        if not arch:
            return None
        switches = ",".join(f"{k}={v}" for k, v in sorted(os.environ.items())
                            if k.startswith(("MIOPEN_DEBUG_", "MIOPEN_FIND_")))
        version = ".".join(map(str, lib.version))
        return f"MIOpen {version} on {arch}" + (f" [{switches}]" if switches else "")

    def plan_decision(self, plan: ExecutionPlan) -> PlanDecision | None:
        """The row, path, workspace and notes; for a convolution run on its own or unfused, the
        solution (:meth:`ConvOp.decision <hipdnn.engines.miopen.conv.ConvOp.decision>`); for a
        declined fusion plan, the status MIOpen declined it with."""
        if not isinstance(plan, MiopenPlan) or plan.engine is not self:
            return None
        out: PlanDecision = {"row": plan.row.name, "path": str(plan.path),
                               "workspace": plan.workspace_size, "notes": list(plan.notes)}
        op = getattr(plan.runner, "op", None)
        if op is not None and getattr(plan.runner, "fusion", None) is None:
            out["conv"] = op.decision()
        fusion_status = getattr(plan.runner, "fusion_status", None)
        if fusion_status is not None:
            out["fusion_status"] = fusion_status
        return out

    def build_from_decision(self, graph: GraphView, knobs: dict[str, KnobValue],
                            handle: Handle | None,
                            decision: Mapping[str, object]) -> ExecutionPlan | None:
        """The plan ``decision`` describes, without listing solutions or running Find; None
        when it does not apply (another row, a solution this library cannot compile or load,
        a malformed entry)."""
        try:  # a malformed entry fails in the conversions of its readers (caught here)
            plan = self._build(graph, knobs, handle, cast(PlanDecision, decision))
        except (HipdnnError, MIOpenError, ValueError, KeyError, TypeError, IndexError) as exc:
            logger.info("MIOPEN_ENGINE: stored decision not used: %s: %s", type(exc).__name__, exc)
            return None
        if str(plan.path) != decision.get("path"):
            plan.close()
            return None
        return plan

    def _build(self, graph: GraphView, knobs: dict[str, KnobValue], handle: Handle | None,
               preset: PlanDecision | None) -> MiopenPlan:
        try:
            m = self.match(graph)
            state = self.handle_state(handle)
            check_library_rules(m, state.lib)
            with translating(f"{m.row.value} (plan build)", building=True):
                arch = state.arch
            check_arch_rules(m, arch)
        except (Declined, Unavailable) as exc:
            raise EngineError(f"MIOPEN_ENGINE cannot build this graph: {exc}") from exc
        if preset is not None and preset.get("row") != m.row.name:
            raise ValueError(f"the stored decision is for row {preset.get('row')!r}, not {m.row.name}")
        lib, hip = self.libraries()
        bench = int(knobs.get(BENCHMARKING_KNOB, 0))
        limit = knobs.get(WORKSPACE_SIZE_LIMIT_KNOB)
        limit = None if limit is None or int(limit) >= NO_LIMIT else int(limit)
        res = Resources()
        try:
            with state.using(f"{m.row.value} (plan build)"), \
                    translating(f"{m.row.value} (plan build)", building=True):
                # immediate mode chooses from the list check_support made (one enumeration per
                # build); Find 2.0 needs it only to check a limit set below every solution
                sols = (self._solutions(m, state, take=True) if preset is None and m.has_conv
                        and (bench == 0 or limit is not None) else None)
                runner = self._runner(lib, hip, res, m, state, bench, limit, sols, preset)
        except BaseException:
            res.close()
            raise
        for note in runner.notes:  # why the path is not the row's first choice
            logger.info("MIOPEN_ENGINE: %s on %s: %s", m.row.value, state.arch or "?", note)
        settings = {BENCHMARKING_KNOB: bench}
        if m.has_conv:
            settings[WORKSPACE_SIZE_LIMIT_KNOB] = NO_LIMIT if limit is None else limit
        return MiopenPlan(self, settings, m, runner, res, state, hip)

    @staticmethod
    def _runner(lib: MIOpenLibrary, hip: HipLibrary, res: Resources, m: Match, state: MiopenHandleState,
                bench: int, limit: int | None, sols: list[tuple[int, int]] | None = None,
                preset: PlanDecision | None = None) -> Runner:
        h = state.handle
        if m.row in _BN_RUNNERS:
            return _BN_RUNNERS[m.row](lib, hip, res, m, h)
        if m.row == Row.CONV_BIAS_ACT:
            w = workaround_for(m.row, state.arch)
            return ConvBiasActRunner(lib, hip, res, m, h, bench, limit, sols,
                                     workaround=None if w is None else w.note(state.arch),
                                     preset=preset)
        return ConvRunner(lib, hip, res, m, h, bench, limit, sols, preset)


def _problem_key(m: Match) -> Hashable:
    """The exact convolution problem of a conv row, what MIOpen's solution list depends on
    (besides the MIOpen handle the list is kept on)."""
    t = m.t
    if isinstance(t, ConvBiasAct):
        operands = (t.w, t.x, t.conv_y)
    else:
        assert isinstance(t, (ConvFprop, ConvDgrad, ConvWgrad))
        operands = t.operands()
    assert m.conv is not None
    return (m.row, m.layout, tuple((int(o.data_type), tuple(o.dim)) for o in operands),
            repr(conv_geometry(m.conv)))


#: The rows MIOPEN_ENGINE_DETERMINISTIC runs (AMD's: its conv plan builders only).
DETERMINISTIC_ROWS = (Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD, Row.CONV_BIAS_ACT)


class MiopenDeterministicEngine(MiopenEngine):
    """MIOPEN_ENGINE_DETERMINISTIC (AMD's provider's second engine): the three convolutions and
    conv + bias + activation with MIOpen's deterministic convolution attribute
    (``MIOPEN_CONVOLUTION_ATTRIB_DETERMINISTIC``: only solvers whose results are bit-reproducible
    apply, e.g. no atomics); batchnorm and pointwise graphs are declined, as AMD's does.

    Rank 1: after MIOPEN_ENGINE, before CPU_REFERENCE_ENGINE; pick it by name or id
    (``create_execution_plan_ext("MIOPEN_ENGINE_DETERMINISTIC")``,
    ``set_preferred_engine_id_ext``). Same knobs as MIOPEN_ENGINE.
    """

    name = "MIOPEN_ENGINE_DETERMINISTIC"
    rank = 1

    def match(self, graph: GraphView) -> Match:
        m = match(graph)
        if m.row not in DETERMINISTIC_ROWS:
            raise Declined(f"{m.row.value}: {self.name} runs convolutions only (fprop, dgrad, "
                           "wgrad, conv + bias + activation); MIOpen has no deterministic mode "
                           "for batchnorm or pointwise ops (AMD's provider declines them too): "
                           "use MIOPEN_ENGINE")
        m.deterministic = True
        return m
