"""Execution: variant-pack resolution, workspace checks, execute, bind, autotune (a Graph's Executor).

Variant-pack keys are graph tensors or uids (``None`` keys are skipped); values go through
:func:`hipdnn.interop.buffers.resolve` and are checked against the graph's tensors before any engine is
called. Pass-by-value scalars with a baked value need no entry.

Repeated calls are cheap two ways: :meth:`Executor.bind` validates a variant pack once and
returns a :class:`BoundExecution` that re-runs the plan; ``execute`` itself remembers the
binding of recent variant packs with a matcher each (:mod:`hipdnn.pipeline.packsig`: type, pointer,
shape, strides, dtype, device, read-only flag of every value, read on every call), so a loop
calling ``execute`` with the same tensors or pointers skips resolution and validation.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np

from hipdnn.core.errors import (
    GraphChangedError,
    HandleError,
    PlanClosedError,
    ValidationError,
    VariantPackError,
    WorkspaceError,
)
from hipdnn.core.handle import check_handle
from hipdnn.core.logs import logger
from hipdnn.core.progress import Progress
from hipdnn.core.shapes import overlap_free
from hipdnn.core.types import DataType, check_float, to_int
from hipdnn.interop.buffers import Buffer, check_against, resolve
from hipdnn.ir.graph_data import GraphData
from hipdnn.ir.nodes.norm import SCALAR_RANGES
from hipdnn.ir.tensor import Tensor
from hipdnn.pipeline.packsig import Matcher, compile_matcher

if TYPE_CHECKING:
    from hipdnn.backend.engine import ExecutionPlan
    from hipdnn.core.handle import Handle

__all__ = ["BoundExecution", "Executor", "PlanTiming"]


class PlanSource(Protocol):
    """What the executor reads of its graph's planner (:class:`~hipdnn.pipeline.planner.Planner`
    is one): the built plans, whether the graph is closed, its revision."""

    closed: bool
    revision: int
    plans: list[ExecutionPlan]

    @property
    def candidates(self) -> Sequence[object] | None: ...

    def plan(self, index: int = 0, what: str = "plan index") -> ExecutionPlan: ...

    def build_plan_at_index(self, index: int) -> None: ...

    def hold_bound(self, plan: ExecutionPlan) -> None: ...


class ExecutedGraph(GraphData, Protocol):
    """What the executor reads of its graph (:class:`hipdnn.Graph` is one)."""

    @property
    def handle(self) -> Handle: ...

    @property
    def _planner(self) -> PlanSource: ...



class PlanTiming(NamedTuple):
    """One plan's :meth:`hipdnn.graph.graph.Graph.autotune` result: its name and seconds per run."""

    plan_name: str
    seconds: float

    @property
    def milliseconds(self) -> float:
        """Time per run in milliseconds."""
        return self.seconds * 1e3

    def __str__(self) -> str:
        return f"{self.plan_name}: {self.seconds * 1e3:.3f} ms per run"


#: How many variant packs ``execute`` remembers per graph (most recently used first).
FAST_PACKS = 16


def _description(t: Tensor) -> str:
    return f"(dims {list(t.dim or ())}, strides {list(t.stride or ())}, {t.data_type.name})"


def _describes(other: Tensor, t: Tensor) -> bool:
    """``other`` (a tensor of another graph with ``t``'s uid) describes the same tensor."""
    return (other.dim, other.stride, other.data_type, other.is_virtual) == (
        t.dim, t.stride, t.data_type, t.is_virtual)


def _detached(buf: Buffer) -> Buffer:
    """``buf`` without the references that keep the caller's object alive, keeping the host
    views made over it (a pack that matches it has the same memory and layout)."""
    return dataclasses.replace(buf, owner=None, array=None, views={})


def _check_restrided(plans: Sequence[ExecutionPlan], t: Tensor, buf: Buffer) -> None:
    """Refuse a buffer in another layout than ``t`` for plans that pass buffers by pointer."""
    for plan in plans:
        if not plan.reads_buffer_strides:
            raise VariantPackError(
                f"execute: variant pack: tensor {t.name!r} (uid {t.uid}): the {buf.kind} has "
                f"strides {buf.strides} for shape {buf.shape}, but plan {plan.name!r} passes "
                f"buffers by pointer in the graph tensor's layout (stride {t.stride} for dim "
                f"{t.dim}); pass a tensor with those strides (np.ascontiguousarray(a) or a "
                f"torch tensor's .contiguous() for packed channel-first strides; for torch, "
                f".contiguous(memory_format=torch.channels_last) is NHWC), or set the graph "
                f"tensor's stride to the buffer's", tensor=t.name)


class BoundExecution:
    """A variant pack bound to a graph's selected plan: calling it runs the plan again.

    Made by :meth:`Executor.bind`. Everything that does not change between runs was checked
    at bind time (tensors, dtypes, shapes, workspace size; scalar values given in the pack are
    fixed then too); a call only checks that the graph and the plan are still open, then makes
    the plan's calls. The bound objects
    (arrays, pointers, workspace) are kept alive by the binding; their contents may change
    between calls, their addresses must not. Calling after ``graph.close()`` or after the
    plan was closed raises :class:`~hipdnn.core.errors.PlanClosedError`.
    """

    __slots__ = ("_graph", "_planner", "_revision", "_run", "buffers", "handle", "plan",
                 "workspace")

    def __init__(self, graph: ExecutedGraph, plan: ExecutionPlan, buffers: dict[int, Buffer],
                 workspace: Buffer | None, handle: Handle) -> None:
        self._graph = graph
        self._planner = graph._planner  # its closed flag and revision are checked on each call
        self._revision = self._planner.revision
        self.plan, self.buffers, self.workspace, self.handle = plan, buffers, workspace, handle
        run = plan.bind(buffers, workspace, handle)
        # the graph holds the plan while it is open and unedited: a re-planning and unrelated
        # builds evicting the plan from the cache do not close it under this binding
        self._planner.hold_bound(plan)
        refreshes = [b.refresh for b in buffers.values() if b.refresh is not None]
        if refreshes:  # torch views with the negative/conjugate bit: copy their values first
            def run_resolved() -> None:
                for refresh in refreshes:
                    refresh()
                run()
            self._run = run_resolved
        else:
            self._run = run

    def __call__(self) -> None:
        """Run the bound plan once."""
        if self._planner.closed:
            raise PlanClosedError(f"graph {self._graph.name!r} is closed: this binding is dead")
        if self._planner.revision != self._revision:
            raise GraphChangedError(f"graph {self._graph.name!r} changed since this binding "
                                    f"was made: bind again")
        if self.handle._closed:
            raise _handle_closed(self.handle, "this binding")
        self._run()

    def __repr__(self) -> str:
        return (f"<BoundExecution graph={self._graph.name!r} plan={self.plan.name!r} "
                f"tensors={sorted(self.buffers)}>")


def _byte_range(t: Tensor, buf: Buffer) -> tuple[int, int] | None:
    """Absolute byte range ``[lo, hi)`` the output ``buf`` covers, when known."""
    if buf.scalar is not None or buf.ptr == 0:
        return None
    span = buf.span
    if span is None and buf.shape is None and t.dim is not None and t.stride is not None:
        lo = sum((d - 1) * s for d, s in zip(t.dim, t.stride, strict=True) if s < 0)
        hi = 1 + sum((d - 1) * s for d, s in zip(t.dim, t.stride, strict=True) if s > 0)
        itemsize = DataType(t.data_type).itemsize or 1
        span = (lo * itemsize, hi * itemsize)
    if span is None or span[1] <= span[0]:
        return None
    return buf.ptr + span[0], buf.ptr + span[1]


#: Work bound of the exact element-overlap test of two outputs in one block (numpy's
#: ``max_work``; beyond it, they count as sharing).
_SHARE_WORK: Any = 100_000


def _check_outputs_disjoint(tensors: Mapping[int, Tensor], buffers: Mapping[int, Buffer]) -> None:
    """Two outputs backed by the same memory would overwrite each other's results (one of
    them silently wrong): refused. An output may alias an input (in-place ops)."""
    spans = []
    for uid, buf in buffers.items():
        t = tensors.get(uid)
        if t is None or t._producer is None:
            continue
        rng = _byte_range(t, buf)
        if rng is not None:
            spans.append((rng, t, buf))
    if len(spans) < 2:
        return
    spans.sort(key=lambda item: item[0])
    for (r1, t1, b1), (r2, t2, b2) in itertools.combinations(spans, 2):
        if r2[0] >= r1[1] or r1[0] >= r2[1] or (b1.device != b2.device and b1.device_known
                                                 and b2.device_known):
            continue
        if b1.array is not None and b2.array is not None:
            try:
                if not np.shares_memory(b1.array, b2.array, max_work=_SHARE_WORK):
                    continue  # interleaved views of one block (e.g. a[::2] and a[1::2])
            except np.exceptions.TooHardError:
                pass
        raise VariantPackError(
            f"variant pack: output tensors {t1.name!r} (uid {t1.uid}) and {t2.name!r} (uid "
            f"{t2.uid}) share memory (bytes {max(r1[0], r2[0]):#x}..{min(r1[1], r2[1]):#x}); "
            f"each output needs its own buffer, or one would overwrite the other",
            tensor=t2.name)


def _workspace_buffer(workspace: Any) -> Buffer:
    try:
        return resolve(workspace)
    except VariantPackError as exc:
        raise WorkspaceError(f"workspace: {exc}") from None


def _handle_closed(handle: Handle, what: str) -> PlanClosedError:
    return PlanClosedError(f"{what}: {handle!r} is closed (its engine state is gone); use an "
                           f"open Handle: graph.execute(pack, workspace, handle=hipdnn.Handle())")


def _check_output_buffer(t: Tensor, buf: Buffer) -> None:
    """An output's memory must be writable and must not alias itself (an array whose own
    strides map two elements to one address, e.g. an ``as_strided`` view with a 0 stride)."""
    if buf.view_bit is not None:
        raise VariantPackError(
            f"variant pack: output tensor {t.name!r} (uid {t.uid}) is a torch view with the "
            f"{buf.view_bit} bit set (e.g. z.conj().imag): its memory holds other values than "
            f"it shows, and results written to a resolved copy would be lost; pass a tensor "
            f"without the bit (resolve_neg()/resolve_conj() return one, as a copy)",
            tensor=t.name)
    if buf.readonly:
        raise VariantPackError(f"variant pack: output tensor {t.name!r} (uid {t.uid}) "
                               f"is backed by read-only memory", tensor=t.name)
    if buf.shape is not None and buf.strides is not None and not overlap_free(buf.shape,
                                                                              buf.strides):
        raise VariantPackError(
            f"variant pack: output tensor {t.name!r} (uid {t.uid}) is backed by a "
            f"{buf.kind} of shape {list(buf.shape)} whose strides {list(buf.strides)} "
            f"(elements) make its elements overlap; an output may not alias itself: pass "
            f"memory with distinct elements (e.g. a contiguous copy)", tensor=t.name)


class Executor:
    """Runs a graph's built plans: variant-pack resolution, bindings, execute, autotune.

    Owned by one :class:`~hipdnn.graph.graph.Graph` (``graph._executor``), which delegates
    ``bind``, ``execute_plan_at_index`` and ``autotune`` to it, and ``execute`` past its inline
    hit of the latest remembered binding (:meth:`execute_miss`). Its state:

    * ``fast``: the remembered bindings of recent variant packs (matchers, most recent first).
      The list object is never replaced, only mutated, so the graph keeps it as ``_fast`` and
      its ``execute`` fast path reads it with no extra attribute hop.
    * ``required`` / ``baked`` / ``ranged`` / ``byvalue``: what a variant pack must hold,
      precomputed by :meth:`prepare` after plans are built.

    Interface for the graph: :meth:`prepare` (plans built), :meth:`forget` (plans, tensors or
    the handle changed), and the four public operations; the graph's planner calls the first
    two. The plans it runs are the planner's (``graph._planner``: ``plan(i)``, which checks the
    graph is open and unchanged since build, ``plans``, ``candidates``), read when needed: the
    Graph makes its executor first and gives it to its :class:`~hipdnn.pipeline.planner.Planner`.
    """

    def __init__(self, graph: ExecutedGraph) -> None:
        self.graph = graph
        self.fast: list[Matcher] = []
        self.required: list[Tensor] = []
        self.baked: dict[int, float] = {}
        self.ranged: dict[int, tuple[str, str]] = {}
        self.byvalue: frozenset[int] = frozenset()

    def forget(self) -> None:
        """Plans, tensors or the handle changed: execute's remembered bindings are stale."""
        self.fast.clear()

    def prepare(self) -> None:
        """Precompute which tensors a variant pack must hold (after plans are built)."""
        self.forget()
        tensors = self.graph.tensors
        self.required = [t for t in tensors.values()
                         if not t.is_virtual and not (t.is_pass_by_value and t.value is not None)]
        self.baked = {uid: t.value for uid, t in tensors.items()
                      if t.is_pass_by_value and t.value is not None}
        self.byvalue = frozenset(uid for uid, t in tensors.items() if t.is_pass_by_value)

        self.ranged = {t.uid: (node.name, port) for node in self.graph.nodes
                       for port, t in node.inputs.items()
                       if port in SCALAR_RANGES and t is not None and t.uid is not None
                       and t.is_pass_by_value}

    def check_scalars(self, buffers: dict[int, Buffer]) -> None:
        """Scalars given at execute time (epsilon, momentum) must be in their node's range."""

        for uid, (node, port) in self.ranged.items():
            buf = buffers.get(uid)
            if buf is None:
                continue
            value = buf.scalar
            if value is None and buf.array is not None and buf.array.size == 1:
                value = buf.array.reshape(-1)[0].item()
            if value is None:
                continue  # device memory: not readable here
            low, high, low_open = SCALAR_RANGES[port]
            name = self.graph.tensors[uid].name
            try:
                check_float(value, port.lower(), node=node, low=low, high=high,
                            low_open=low_open, tensor=name)
            except ValidationError as exc:
                raise VariantPackError(f"variant pack: {exc}", tensor=name) from None

    def tensor_for_key(self, key: Any) -> Tensor | None:
        """The graph tensor ``key`` stands for; None for a tensor this graph made that no node
        uses (cuDNN ignores such an entry: cudnn-frontend's own instancenorm test passes one)."""
        if isinstance(key, Tensor):
            t = self.graph.tensors.get(key.uid) if key.uid is not None else None
            if t is key:
                return key
            if key._graph is self.graph:
                return None
            if t is not None and _describes(key, t):
                # cudnn-frontend keys a pack by uid: a tensor of the graph this one was
                # deserialized from (or of an identical graph) stands for its twin here
                return t
            why = (f"this graph has no tensor with its uid {key.uid}" if t is None else
                   f"this graph's tensor of uid {key.uid} is {t.name!r} "
                   f"{_description(t)}, not {_description(key)}")
            raise VariantPackError(f"variant pack: tensor {key.name!r} belongs to another graph "
                                   f"and stands for none of this graph's ({why}); pass this "
                                   f"graph's tensors or their uids", tensor=key.name)
        if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
            key = int(key)  # numpy integers are uids too, as everywhere else
            t = self.graph.tensors.get(key)
            if t is None:
                raise VariantPackError(f"variant pack: no tensor with uid {key} in graph "
                                       f"{self.graph.name!r}; uids: {sorted(self.graph.tensors)}")
            return t
        raise VariantPackError(f"variant pack keys must be graph tensors or int uids (int or "
                               f"numpy integer), got {type(key).__name__} {key!r:.60}")

    def resolve_pack(self, variant_pack: Mapping[Any, Any],
                      plans: Sequence[ExecutionPlan] = ()) -> dict[int, Buffer]:
        """{uid: Buffer} for ``variant_pack``, checked against the graph's tensors (and, for a
        buffer holding a tensor in another layout, against each of ``plans``)."""
        if not isinstance(variant_pack, Mapping):
            raise VariantPackError(f"the variant pack must be a dict {{tensor or uid: value}}, "
                                   f"got {type(variant_pack).__name__}")
        buffers: dict[int, Buffer] = {}
        for key, value in variant_pack.items():
            if key is None:
                continue
            t = self.tensor_for_key(key)
            if t is None:
                continue  # a tensor of this graph that no node uses: nothing reads or writes it
            if t.uid in buffers:
                raise VariantPackError(f"variant pack: tensor {t.name!r} (uid {t.uid}) is given "
                                       f"twice (two keys name it: the tensor, its uid or a tensor of "
                                       f"another graph with its uid); give each tensor "
                                       f"once", tensor=t.name)
            if t.is_virtual:
                raise VariantPackError(
                    f"variant pack: tensor {t.name!r} (uid {t.uid}) is virtual: it lives only "
                    f"inside the graph; mark it with set_output(True) to read it",
                    tensor=t.name)
            if t.is_pass_by_value and isinstance(value, (int, np.integer)) and not isinstance(
                    value, (bool, np.bool_, enum.Enum)):
                raise VariantPackError(
                    f"variant pack: pass-by-value tensor {t.name!r} (uid {t.uid}) got the int "
                    f"{value!r}, which would be read as a pointer; valid: its value as a float "
                    f"(e.g. {float(value)!r}) or a one-element host array", tensor=t.name)
            try:
                buf = resolve(value)
            except VariantPackError as exc:
                raise VariantPackError(f"variant pack: tensor {t.name!r} (uid {t.uid}): {exc}",
                                       tensor=t.name) from exc
            if t._producer is not None:
                _check_output_buffer(t, buf)
            if check_against(buf, t, "execute: variant pack"):
                _check_restrided(plans, t, buf)
            assert t.uid is not None
            buffers[t.uid] = buf
        if len(buffers) > 2:
            _check_outputs_disjoint(self.graph.tensors, buffers)
        missing = [t for t in self.required if t.uid not in buffers]
        if missing:
            names = ", ".join(f"{t.name!r} (uid {t.uid})" for t in missing)
            raise VariantPackError(f"variant pack is missing {len(missing)} tensor(s) of graph "
                                   f"{self.graph.name!r}: {names}", tensor=missing[0].name)
        if self.ranged:
            self.check_scalars(buffers)
        for uid, value in self.baked.items():
            if uid not in buffers:
                buffers[uid] = Buffer(ptr=0, device="cpu", scalar=value, kind="float")
        return buffers

    def resolve_workspace(self, workspace: Any, size: int) -> Buffer | None:
        if size == 0:
            if workspace is not None and type(workspace) is not int:
                buf = _workspace_buffer(workspace)  # not needed, but it must be memory
                if buf.scalar is not None:
                    raise WorkspaceError(f"the workspace must be memory (an array, tensor or "
                                         f"device pointer int) or None; got a "
                                         f"{type(workspace).__name__} value {workspace!r:.40}")
            return None
        if workspace is None:
            raise WorkspaceError(f"the plan needs a workspace of {size} bytes; got None "
                                 f"(allocate graph.get_workspace_size() bytes)")
        buf = _workspace_buffer(workspace)
        if buf.scalar is not None:
            raise WorkspaceError(f"the workspace must be memory (an array, tensor or device "
                                 f"pointer int) of at least {size} bytes; got a "
                                 f"{type(workspace).__name__} value {workspace!r:.40}")
        if buf.readonly:
            raise WorkspaceError(f"the workspace ({buf.kind}) is read-only; the plan writes "
                                 f"its {size} bytes of workspace: pass writable memory")
        nbytes = buf.nbytes
        span, numel, itemsize = buf.span, buf.numel, buf.itemsize
        if span is not None and numel and itemsize and (
                span[0] != 0 or span[1] - span[0] != numel * itemsize):
            raise WorkspaceError(
                f"the workspace must be one contiguous block of memory starting at its data "
                f"pointer (e.g. a C-contiguous array); got shape {list(buf.shape or ())} with "
                f"strides {list(buf.strides or ())} (elements), whose {numel * itemsize} bytes "
                f"are spread over {span[1] - span[0]} bytes")
        if nbytes is not None and nbytes < size:
            raise WorkspaceError(f"workspace of {nbytes} bytes is smaller than the plan's "
                                 f"{size} bytes")
        if buf.ptr + size > 1 << 64:
            raise WorkspaceError(f"workspace pointer {buf.ptr:#x}: its {size} bytes would end "
                                 f"past the 64-bit address space")
        return buf

    def checked(self, plan: ExecutionPlan, variant_pack: Mapping[Any, Any],
                 workspace: Any) -> tuple[dict[int, Buffer], Buffer | None]:
        """The open ``plan``'s variant pack and workspace, resolved and checked."""
        plan.check_open()
        buffers = self.resolve_pack(variant_pack, (plan,))
        return buffers, self.resolve_workspace(workspace, plan.workspace_size)

    def open_handle(self, handle: Any, what: str) -> Handle:
        """``handle`` (the graph's when None), which must be an open :class:`Handle`."""
        h = check_handle(handle, f"{what} handle")
        if h is None:
            h = self.graph.handle
        if h._closed:
            raise _handle_closed(h, what)
        return h

    def run(self, plan: ExecutionPlan, variant_pack: Mapping[Any, Any], workspace: Any,
             handle: Handle | None, what: str = "execute") -> None:
        h = self.open_handle(handle, what)
        buffers, ws = self.checked(plan, variant_pack, workspace)
        plan.execute(buffers, ws, h)

    def execute_miss(self, variant_pack: Mapping[Any, Any], workspace: Any,
                     handle: Handle | None) -> None:
        """``execute`` after the latest remembered binding did not match: an older one, or
        resolve, check and (for a dict) remember the pack."""
        fast = self.fast
        if len(fast) > 1:
            run = self._match_older(fast, variant_pack, workspace, handle)
            if run is not None:
                run()
                return
        if type(variant_pack) is not dict:  # a Mapping of another type is never remembered
            self.run(self.graph._planner.plan(0), variant_pack, workspace, handle)
            return
        self.bind_remembered(variant_pack, workspace, handle)()

    def _match_older(self, fast: list[Matcher], variant_pack: Any, workspace: Any,
                     handle: Any) -> Callable[[], None] | None:
        """A remembered binding other than the latest; a hit moves it to the front."""
        for i in range(1, len(fast)):
            try:
                run = fast[i](variant_pack, workspace, handle)
            except Exception:  # as above: a miss
                continue
            if run is not None:
                fast[:] = [fast[i], *fast[:i], *fast[i + 1:]]
                return run
        return None

    def bind_remembered(self, variant_pack: Mapping[Any, Any], workspace: Any,
                         handle: Handle | None) -> Callable[[], None]:
        """Resolve, check and bind ``variant_pack``; remember the binding with a matcher.

        The binding keeps pointers, not the pack's objects: a later pack the matcher accepts
        resolves to the same pointers and geometry, and is alive while ``execute`` runs.
        """
        plan = self.graph._planner.plan(0)
        h = self.open_handle(handle, "execute")
        buffers, ws = self.checked(plan, variant_pack, workspace)
        if any(b.refresh is not None for b in buffers.values()):
            # a resolved copy of a negative/conjugate torch view: the binding must own it,
            # and the pack is not remembered (each execute resolves the view again)
            return BoundExecution(self.graph, plan, buffers, ws, h)._run
        bound = BoundExecution(self.graph, plan, {uid: _detached(b) for uid, b in buffers.items()},
                               None if ws is None else _detached(ws), h)._run

        def run() -> None:
            if h._closed:  # closing the graph or editing it forgets this; closing h does not
                raise _handle_closed(h, "execute")
            bound()
        # a scalar read from array contents at bind time may change: never remember those
        for uid in self.byvalue:
            buf = buffers.get(uid)
            if buf is not None and buf.scalar is None and buf.kind != "int":
                return run
        match = compile_matcher(variant_pack, workspace, handle, run)
        if match is not None:
            # the graph's close()/rebuild clears these, so the plan's own callable is enough
            self.fast[:] = [match, *self.fast[:FAST_PACKS - 1]]
        return run

    def bind(self, variant_pack: Mapping[Any, Any], workspace: Any = None,
             handle: Handle | None = None) -> BoundExecution:
        """Resolve and check ``variant_pack`` once; a :class:`BoundExecution` of the selected plan
        (see :meth:`hipdnn.graph.graph.Graph.bind`)."""
        plan = self.graph._planner.plan(0)
        h = self.open_handle(handle, "bind")
        buffers, ws = self.checked(plan, variant_pack, workspace)
        # the binding fixes the memory and layouts: host views made over them are kept
        buffers = {uid: dataclasses.replace(b, views={}) for uid, b in buffers.items()}
        return BoundExecution(self.graph, plan, buffers, ws, h)

    def execute_plan_at_index(self, variant_pack: Mapping[Any, Any], workspace: Any,
                              index: int, handle: Handle | None = None) -> None:
        """Run built plan ``index``."""
        self.run(self.graph._planner.plan(index, "execute_plan_at_index"), variant_pack, workspace, handle,
                  "execute_plan_at_index")

    def _synchronize(self, h: Handle, plan: ExecutionPlan) -> None:
        """``h.synchronize()`` for autotune: a failure is a HandleError naming the autotune
        and the plan being timed (the plans keep their order)."""
        try:
            h.synchronize()
        except HandleError as exc:
            raise HandleError(f"graph {self.graph.name!r} autotune, timing plan {plan.name!r}: "
                              f"{exc}", operation="Graph.autotune", function=exc.function,
                              status=exc.status) from exc

    def autotune(self, variant_pack: Mapping[Any, Any], workspace: Any = None,
                 iterations: int = 10, warmup: int = 1,
                 handle: Handle | None = None, progress: bool | None = None) -> list[PlanTiming]:
        """Time every candidate plan and select the fastest (see
        :meth:`hipdnn.graph.graph.Graph.autotune`)."""
        planner = self.graph._planner
        planner.plan(0)
        iterations = to_int(iterations, "autotune iterations", minimum=1)
        warmup = to_int(warmup, "autotune warmup", minimum=0)
        n_candidates = len(planner.candidates or [])
        h = self.open_handle(handle, "autotune")
        with Progress(f"autotune {self.graph.name!r}", max(n_candidates, len(planner.plans)),
                      progress) as bar:
            for i in range(len(planner.plans), n_candidates):
                bar.step(f"building candidate {i}")
                planner.build_plan_at_index(i)
            buffers = self.resolve_pack(variant_pack, planner.plans)
            timings: list[tuple[float, int]] = []
            bar.total = len(planner.plans)
            for i, plan in enumerate(planner.plans):
                bar.step(f"timing {plan.name}")
                ws = self.resolve_workspace(workspace, plan.workspace_size)
                for _ in range(max(0, warmup)):
                    plan.execute(buffers, ws, h)
                self._synchronize(h, plan)
                start = time.perf_counter()
                for _ in range(max(1, iterations)):
                    plan.execute(buffers, ws, h)
                self._synchronize(h, plan)
                timings.append(((time.perf_counter() - start) / max(1, iterations), i))
                bar.advance()
        timings.sort()
        planner.plans[:] = [planner.plans[i] for _, i in timings]
        self.forget()
        result = [PlanTiming(planner.plans[k].name, t) for k, (t, _) in enumerate(timings)]
        logger.info("graph %r autotune: %s", self.graph.name, "; ".join(map(str, result)))
        return result
