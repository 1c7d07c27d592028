"""The MIOPEN_ENGINE execution plan: owns its MIOpen objects, stages host buffers, runs a row."""

from __future__ import annotations

import dataclasses
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from hipdnn.backend.engine import Engine, ExecutionPlan
from hipdnn.backend.knobs import KnobValue
from hipdnn.core.errors import GraphStateError, PlanClosedError, VariantPackError
from hipdnn.engines.miopen.descriptors import Owned, Resources
from hipdnn.engines.miopen.errors import execution_error, translating
from hipdnn.engines.miopen.memory import MiopenHandleState, Staging, check_workspace, scalar_value
from hipdnn.engines.miopen.patterns import Match
from hipdnn.engines.miopen.roles import is_scalar
from hipdnn.engines.miopen.rules import Tensor
from hipdnn.engines.miopen.runtime import Ctx, Path, Runner
from miopen_ctypes.errors import MIOpenError
from miopen_ctypes.hip import HipLibrary

if TYPE_CHECKING:
    from hipdnn.core.handle import Handle
    from hipdnn.interop.buffers import Buffer

__all__ = ["MiopenPlan"]


def _close_all(res: Resources) -> None:
    res.close()


def _closed_error(plan: MiopenPlan, handle: Handle | None = None) -> PlanClosedError:
    which = "the hipdnn.Handle was closed" if handle is None else f"{handle!r} was closed"
    return PlanClosedError(f"execution plan {plan.name!r}: its MIOpen handle was destroyed "
                           f"({which}); build or bind again on an open handle")


def _refuse(plan: MiopenPlan, handle: Handle | None = None) -> None:
    plan.check_open()
    raise _closed_error(plan, handle)


#: A call prepared by ``lib.prepare_call``: the bare ctypes function and its converted arguments.
Prepared = tuple[Callable[..., object], tuple[object, ...]]


def _bound_runner(plan: MiopenPlan, state: MiopenHandleState, ctx: Ctx[object],
                  prepared: tuple[Prepared, ...] | None) -> Callable[[], None]:
    """The hot loop of a bound plan: the open checks, then the prebuilt ctypes calls.

    The closure holds ``state`` and the plan (whose objects are destroyed only by
    ``close()``). Each run is counted on ``state`` while it calls MIOpen (its ``_inflight``
    list, inline: :meth:`MiopenHandleState.enter`), so ``Handle.close()`` on another thread
    waits for it before the MIOpen handle is destroyed, and a run after that is refused; and
    on the plan (``_runs``, :meth:`MiopenPlan._leave`), so a plan closed meanwhile frees its
    MIOpen objects only when the last run returned."""
    operation = plan.operation
    inflight, leave = state._inflight, state.leave
    runs = plan._runs
    if plan._serial is not None:  # a fused plan: one operator-args object, one run at a time
        return _bound_serialized(plan, state, ctx, prepared, plan._serial)
    if prepared is None:
        run_row = plan.runner.run

        def run_runner() -> None:
            runs.append(None)
            inflight.append(None)
            try:
                if plan._closed or state.closed:
                    _refuse(plan)
                run_row(Ctx(ctx.handle, ctx.ptr, ctx.ws, ctx.ws_size, state.stream))
            except MIOpenError as exc:
                raise execution_error(operation, exc) from exc
            finally:
                leave()
                runs.pop()  # MiopenPlan._leave, inline (hot path)
                if plan._closed and not runs:
                    plan._finalizer()
        return run_runner
    if len(prepared) == 1:
        ((cfunc, cargs),) = prepared

        def run_one() -> None:
            runs.append(None)
            inflight.append(None)
            try:
                if plan._closed or state.closed:
                    _refuse(plan)
                cfunc(*cargs)
            except MIOpenError as exc:
                raise execution_error(operation, exc) from exc
            finally:
                leave()
                runs.pop()  # MiopenPlan._leave, inline (hot path)
                if plan._closed and not runs:
                    plan._finalizer()
        run_one.prepared = prepared  # type: ignore[attr-defined]  # (cfunc, cargs): benchmarks
        return run_one

    def run_calls() -> None:
        runs.append(None)
        inflight.append(None)
        try:
            if plan._closed or state.closed:
                _refuse(plan)
            for cfunc, cargs in prepared:
                cfunc(*cargs)
        except MIOpenError as exc:
            raise execution_error(operation, exc) from exc
        finally:
            leave()
            runs.pop()  # MiopenPlan._leave, inline (hot path)
            if plan._closed and not runs:
                plan._finalizer()
    run_calls.prepared = prepared  # type: ignore[attr-defined]
    return run_calls


def _bound_serialized(plan: MiopenPlan, state: MiopenHandleState, ctx: Ctx[object],
                      prepared: tuple[Prepared, ...] | None,
                      lock: threading.Lock) -> Callable[[], None]:
    """:func:`_bound_runner` for a fused plan: its set-args calls and the execute run under the
    plan's lock (see ``MiopenPlan._serial``)."""
    operation = plan.operation
    inflight, leave = state._inflight, state.leave
    runs = plan._runs
    run_row = plan.runner.run

    def run_locked() -> None:
        runs.append(None)
        inflight.append(None)
        try:
            if plan._closed or state.closed:
                _refuse(plan)
            with lock:
                if prepared is None:
                    run_row(Ctx(ctx.handle, ctx.ptr, ctx.ws, ctx.ws_size, state.stream))
                else:
                    for cfunc, cargs in prepared:
                        cfunc(*cargs)
        except MIOpenError as exc:
            raise execution_error(operation, exc) from exc
        finally:
            leave()
            runs.pop()  # MiopenPlan._leave, inline (hot path)
            if plan._closed and not runs:
                plan._finalizer()
    if prepared is not None:
        run_locked.prepared = prepared  # type: ignore[attr-defined]
    return run_locked


class MiopenPlan(ExecutionPlan):
    """A built plan for one seed row. ``path`` says which MIOpen path was chosen.

    Owns descriptors, solutions and fusion plans; :meth:`close` (or the context manager, or
    garbage collection) frees them. Host (CPU) buffers are staged through ``hipMalloc``.
    """

    def __init__(self, engine: Engine, knobs: Mapping[str, KnobValue], m: Match,
                 runner: Runner, res: Resources, state: MiopenHandleState, hip: HipLibrary) -> None:
        tags = "".join(f"[{n.split(':', 1)[0]}]" for n in getattr(runner, "notes", ())
                       if n.startswith("workaround "))
        super().__init__(engine, knobs, name=f"{engine.name}:{m.row.name.lower()}:{runner.path}{tags}",
                         workspace_size=runner.workspace_size)
        self.match, self.runner, self.path, self.row = m, runner, runner.path, m.row
        self.provisional = runner.provisional or getattr(getattr(runner, "op", None),
                                                         "provisional", None)
        self._state, self._hip = state, hip
        self._res = res
        self._finalizer = weakref.finalize(self, _close_all, res)
        self._finalizer.atexit = False
        nodes = ", ".join(repr(n.name) for n in m.nodes)
        self.operation = f"{m.row.value} (node {nodes})"
        produced = {t.uid for n in m.nodes for t in n.outputs.values() if t is not None}
        # Each execute fills an instance of the row's class (hipdnn/engines/miopen/roles.py) with
        # device pointers and scalar values: ``_template`` holds what is fixed at build (None
        # for absent fields, virtual intermediates as their tensors, scalars baked into the
        # graph), ``_io`` (field index, role, uid, tensor, is output) the variant-pack tensors,
        # ``_scalars`` (field index, role, tensor) the scalars each variant pack gives.
        self._row_cls: Callable[..., object] = type(m.t)
        self._template: list[Tensor | float | int | None] = []
        self._io: list[tuple[int, str, int, Tensor, bool]] = []
        self._scalars: list[tuple[int, str, Tensor]] = []
        for i, f in enumerate(dataclasses.fields(m.t)):
            t = getattr(m.t, f.name)
            if t is not None and is_scalar(f):
                if t.value is None:
                    self._scalars.append((i, f.name, t))
                t = None if t.value is None else float(t.value)
            elif t is not None and not t.is_virtual:
                self._io.append((i, f.name, t.uid, t, t.uid in produced))
                t = None
            self._template.append(t)
        # (serial of the Handle the plan ran on last, its state): one tuple, read and replaced
        # whole, so a thread never pairs another thread's Handle with its own state; a serial,
        # not the Handle, so a cached plan does not keep a dropped Handle alive
        self._last: tuple[int, MiopenHandleState] = (0, state)
        # A fused plan's operator args are one MIOpen object that each execute fills
        # (miopenSetOpArgs*) and then reads (miopenExecuteFusionPlan), and the plan always runs
        # on the MIOpen handle it was compiled on: executes of it from several threads at once
        # take turns on this lock (the kernel launch copies the args, so the lock is held for
        # the host calls only). Other paths keep no state between their calls.
        self._serial: threading.Lock | None = (threading.Lock() if self.path == Path.FUSED
                                               else None)

        #: One entry per execute of this plan in flight (list append/pop are atomic): a plan
        #: closed while some run (on any thread, any Handle) frees its MIOpen objects when the
        #: last of them returns, never under a running call.
        self._runs: list[None] = []

    def _leave(self) -> None:
        """An execute counted in ``_runs`` returned: the last one out of a closed plan frees it.
        (A run pops before it reads ``_closed``; close sets ``_closed`` before it reads
        ``_runs``: so either the run or the close sees the other, and frees.)"""
        runs = self._runs
        runs.pop()
        if self._closed and not runs:
            self._finalizer()

    def _run(self, ctx: Ctx) -> None:
        """The runner's calls, under the plan's lock when it has one."""
        lock = self._serial
        if lock is None:
            self.runner.run(ctx)
            return
        with lock:
            self.runner.run(ctx)

    @property
    def solution_id(self) -> int | None:
        """The MIOpen convolution solution immediate mode compiled (None: no convolution, a
        fused plan, or Find 2.0 not run yet)."""
        op = getattr(self.runner, "op", None)
        if op is None or getattr(self.runner, "fusion", None) is not None:
            return None
        return getattr(op, "solution_id", None)

    @property
    def notes(self) -> tuple[str, ...]:
        """Why the path is what it is, when MIOpen or a workaround changed it (e.g. a fusion
        plan that did not compile, an architecture's known-bad fusion)."""
        return tuple(getattr(self.runner, "notes", ()))

    def describe(self) -> str:
        """The seed row, its nodes and the MIOpen path (fused plan, immediate mode, ...), the
        convolution solution when one was chosen, and why the path was taken."""
        extra = f", solution {self.solution_id}" if self.solution_id is not None else ""
        notes = "".join(f"; {n}" for n in self.notes)
        return (f"{self.operation} on MIOpen path {self.path.value!r} "
                f"({type(self.runner).__name__}{extra}){notes}")

    @property
    def miopen_objects(self) -> tuple[Owned, ...]:
        """The MIOpen objects the plan owns, oldest first (:class:`TensorDesc`, :class:`ConvDesc`,
        :class:`ActivationDesc`, fusion plans, ...; see hipdnn/engines/miopen/descriptors.py),
        each with its C handle in ``raw``: what tests read back from MIOpen (the descriptors'
        getters) to compare with the graph. Empty after close."""
        return self._res.owned()

    @property
    def live_objects(self) -> int:
        """How many owned MIOpen objects are still alive (0 after close)."""
        return len(self._res)

    def _state_for(self, handle: Handle | None) -> MiopenHandleState:
        """The MIOpen handle to run on; :class:`PlanClosedError` when it (or ``handle``) is closed."""
        if handle is not None and handle.closed:
            _refuse(self, handle)
        # a compiled fusion plan is bound to the MIOpen handle it was compiled on
        if handle is None or self.path == Path.FUSED:
            state = self._state
        elif handle.serial == (last := self._last)[0]:
            state = last[1]
        else:
            try:
                state = self.engine.handle_state(handle)  # type: ignore[attr-defined]
            except GraphStateError as exc:  # closed meanwhile, by another thread
                raise _closed_error(self, handle) from exc
            self._last = (handle.serial, state)
        if state.closed:
            _refuse(self, handle)
        return state

    def _execute(self, buffers: Mapping[int, Buffer], workspace: Buffer | None,
                 handle: Handle | None) -> None:
        """Run the row's calls; see the class docstring for staging. (A device pointer ``int``
        in place of a Buffer, in ``buffers`` or as the workspace, is taken as it is.)"""
        size = self.workspace_size
        if size:
            check_workspace(workspace, size)  # before any call
        state = self._state_for(handle)
        vals = self._template.copy()
        on_device = True
        try:
            for i, _role, uid, _t, _out in self._io:  # fast path: device pointers only
                value = buffers[uid]
                if type(value) is int:
                    vals[i] = value
                elif value.device == "cpu":
                    on_device = False
                    break
                else:
                    vals[i] = value.ptr
        except KeyError:
            self._missing(buffers)
        for i, role, t in self._scalars:
            vals[i] = scalar_value(t, buffers, f"{self.operation}: {role}")
        self._runs.append(None)  # counted on the plan: a close meanwhile frees after this run
        try:
            if self._closed:  # closed by another thread since execute() checked
                self.check_open()
            if not state.enter():  # closed by another thread since _state_for
                _refuse(self, handle)
            try:  # counted while it calls MIOpen: Handle.close() waits for it
                if on_device and (workspace is None or type(workspace) is int
                                  or workspace.device != "cpu"):
                    ws = 0 if workspace is None else (
                        workspace if type(workspace) is int else workspace.ptr)
                    try:
                        self._run(Ctx(state.handle, self._row_cls(*vals), ws, size, state.stream))
                    except MIOpenError as exc:
                        raise execution_error(self.operation, exc) from exc
                    return
                self._execute_staged(buffers, workspace, state, vals)
            finally:
                state.leave()
        finally:
            self._leave()

    def bind(self, buffers: Mapping[int, Buffer], workspace: Buffer | None,
             handle: Handle | None) -> Callable[[], None]:
        """A callable re-running the plan on these buffers with prebuilt ctypes arguments.

        Checked once, here: the plan and ``handle`` are open, the workspace is large enough, every tensor is in
        ``buffers``, scalars have values, the MIOpen handle is alive, the calls' NULL rules.
        Each call then checks only that the plan and its MIOpen handle are still open and makes
        the row's ctypes calls (:meth:`Runner.calls`); rows with host work between calls (the
        derived variance, running-stat copies, Find 2.0 before its first run) call the runner.
        Host (CPU) buffers are staged on every call, exactly as :meth:`execute` does.
        """
        self.check_open()
        state = self._state_for(handle)
        size = self.workspace_size
        if size:
            check_workspace(workspace, size)
        self._missing(buffers)
        values = [buffers[uid] for _, _, uid, _, _ in self._io]
        # pass-by-value scalars (device "cpu", no memory) are not host arrays to stage
        host = any(type(v) is not int and v.device == "cpu" and v.scalar is None
                   for v in values) or (
            workspace is not None and type(workspace) is not int and workspace.device == "cpu")
        if host:
            execute = self.execute

            def staged() -> None:
                execute(buffers, workspace, handle)
            return staged
        vals = self._template.copy()
        for i, role, t in self._scalars:
            vals[i] = scalar_value(t, buffers, f"{self.operation}: {role}")
        for (i, _, _, _, _), v in zip(self._io, values, strict=True):
            vals[i] = v if type(v) is int else v.ptr
        ws = 0 if workspace is None else (workspace if type(workspace) is int else workspace.ptr)
        ctx = Ctx(state.handle, self._row_cls(*vals), ws, size, state.stream)
        with translating(self.operation):
            planned = self.runner.calls(ctx)
            prepared = (None if planned is None else
                        tuple(state.lib.prepare_call(name, *args) for name, args in planned))
        return _bound_runner(self, state, ctx, prepared)

    def _missing(self, buffers: Mapping[int, Buffer]) -> None:
        for _, role, uid, t, _ in self._io:
            if uid not in buffers:
                raise VariantPackError(f"{self.operation}: tensor {t.name!r} (uid {uid}, {role}) "
                                       "is missing from the variant pack", tensor=t.name)

    def _execute_staged(self, buffers: Mapping[int, Buffer], workspace: Buffer | None,
                        state: MiopenHandleState, vals: list[Tensor | float | int | None]) -> None:
        """Host buffers: hipMalloc + copy in, run, copy outputs back, hipFree. ``vals``: the
        row's fields with the scalars filled in."""
        self._missing(buffers)
        staging = Staging(self._hip, state.stream)
        try:
            with translating(self.operation):
                for i, _, uid, t, out in self._io:
                    vals[i] = staging.pointer(buffers[uid], t, is_output=out)
                ws = staging.workspace(workspace, self.workspace_size)
                self._run(Ctx(state.handle, self._row_cls(*vals), ws, self.workspace_size,
                              state.stream))
                staging.commit()
        finally:
            staging.close()

    def _release(self) -> None:
        """Free every MIOpen object the plan owns, now or, while executes of it are in flight
        on other threads, when the last of them returns (:meth:`_leave`)."""
        if not self._runs:
            self._finalizer()
