"""Plans and execution of the frontend :class:`~hipdnn.frontend.Graph`, on top of
:class:`~hipdnn.frontend._graph_build.GraphBuild` (whose state and ``validate`` it uses).

Upstream's order is enforced: ``build_operation_graph(handle)`` before plans are created,
``create_execution_plans()`` before ``check_support()``/``build_plans()``, built plans before
``execute``; a call out of order returns a bad Error naming the missing step. Plan indices are
stable: ``build_plan_at_index(i)`` makes plan ``i`` the one ``execute`` runs without renumbering.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from hipdnn.backend.engine import ExecutionPlan, fnv1a_64
from hipdnn.backend.knobs import knob_setting_pairs
from hipdnn.core.errors import HipdnnError, VariantPackError
from hipdnn.core.handle import Handle as NativeHandle
from hipdnn.core.types import BuildPlanPolicy, DataType, HeurMode, to_enum
from hipdnn.frontend._enums import BehaviorNote, TimingQuality
from hipdnn.frontend._errors import Error, ErrorCode, attempt, error_from
from hipdnn.frontend._graph_build import GraphBuild
from hipdnn.frontend._handle import native_handle, optional_handle
from hipdnn.frontend._memory import DeviceBuffer, find_buffer, get_data_ptr
from hipdnn.graph.graph import Graph as NativeGraph
from hipdnn.interop.buffers import Buffer, check_against, resolve
from hipdnn.interop.dlpack import GPU_DEVICES
from hipdnn.interop.hostmem import element_span
from hipdnn.ir.tensor import Tensor as NativeTensor

__all__ = ["ExecutionTiming", "GraphRun", "known_settings"]

_NEED_OP_GRAPH = "build_operation_graph(handle) has not succeeded on this graph"
_NEED_PLANS = "create_execution_plans() has not succeeded on this graph"


def known_settings(native: NativeGraph, engine_id: int,
                   values: Mapping[str, Any] | Iterable[Any] | None) -> dict[str, Any]:
    """``values`` without knobs the engine does not offer (each dropped with a warning, as
    upstream); values are checked when the plan is selected."""
    offered = {k.id for k in native.get_knobs_for_engine(int(engine_id))}
    kept = {}
    for kid, value in knob_setting_pairs(values, str(engine_id)):
        if kid in offered:
            kept[kid] = value
        else:
            warnings.warn(f"engine {engine_id} has no knob {kid!r} for this graph (knobs: "
                          f"{sorted(offered)}); ignored", stacklevel=3)
    return kept


def _device_dlpack(value: Any) -> bool:
    """A non-torch ``__dlpack__`` producer reporting device (not host) memory."""
    device = getattr(value, "__dlpack_device__", None)
    if device is None or type(value).__module__.split(".")[0] == "torch":
        return False
    try:
        return int(device()[0]) in GPU_DEVICES
    except Exception:
        return False


class ExecutionTiming:
    """What ``execute_timed_ext`` measured (read-only): ``elapsed_ms`` (None when nothing was
    measured), ``quality`` and ``timed_out``."""

    __slots__ = ("_elapsed", "_quality")

    def __init__(self, elapsed_ms: float | None = None,
                 quality: TimingQuality = TimingQuality.INVALID) -> None:
        self._elapsed, self._quality = elapsed_ms, quality

    @property
    def elapsed_ms(self) -> float | None:
        """Milliseconds of the one run (host wall clock around a synchronised execute)."""
        return self._elapsed

    @property
    def quality(self) -> TimingQuality:
        """UNSTALLED when measured here (host timing includes launch overhead), else INVALID."""
        return self._quality

    @property
    def timed_out(self) -> bool:
        """Always False: no watchdog here."""
        return False

    def __repr__(self) -> str:
        return f"ExecutionTiming(elapsed_ms={self._elapsed!r}, quality={self._quality.name})"


class GraphRun(GraphBuild):
    """Plans, execution and the engine-id API."""

    # -- stages -----------------------------------------------------------------------------
    def _modes(self, modes: Any) -> list[HeurMode]:
        items = [modes] if modes is None or isinstance(modes, (int, str)) else list(modes)
        return [to_enum(HeurMode, m, "heuristic mode") for m in items if m is not None]

    def create_execution_plans(self, modes: Sequence[HeurMode] | None = None) -> Error:
        """Rank the engines that can run the graph (the preferred engine first, if it can).

        Parameters
        ----------
        modes : HeurMode or sequence of HeurMode, optional
            Heuristic modes, accepted as cudnn-frontend takes them; every registered engine that
            supports the graph is a candidate, best rank first.

        Returns
        -------
        Error
            ``ErrorCode.OK``, or the failure's code and message (upstream's convention: the call
            does not raise).
        """
        if not self._op_graph:
            return Error(ErrorCode.INVALID_VALUE, _NEED_OP_GRAPH)
        self._order, self._plans_created = [], False
        err = attempt(lambda: self._native.create_execution_plans(self._modes(modes)))
        if err.is_good() and self._preferred is not None:
            ranked = self._native.get_ranked_engine_ids()
            if self._preferred in ranked:
                ranked.remove(self._preferred)
                order = [self._preferred, *ranked]

                def prefer() -> None:
                    for engine_id in order:
                        self._native.create_execution_plan_ext(engine_id)

                err = attempt(prefer)
        self._plans_created = err.is_good()
        return err

    def create_execution_plan_ext(self, engine_id: int, knob_settings: Sequence[Any] = ()) -> Error:
        """Hard-select ``engine_id`` with knob overrides (unknown knobs are ignored with a
        warning, as upstream); no fallback to another engine.

        Parameters
        ----------
        engine_id : int or str
            The engine's id (``get_ranked_engine_ids``) or name.
        knob_settings : dict or sequence of KnobSetting, optional
            Knob values by knob id; knobs left out take their defaults.

        Returns
        -------
        Error
            ``ErrorCode.OK``, or the failure's code and message (upstream's convention: the call
            does not raise).
        """
        if not self._op_graph:
            return Error(ErrorCode.INVALID_VALUE, _NEED_OP_GRAPH)

        self._order, self._plans_created = [], False

        def select() -> None:
            self._native.create_execution_plans()
            settings = known_settings(self._native, engine_id, knob_settings)
            self._native.create_execution_plan_ext(int(engine_id), settings)

        err = attempt(select)
        self._plans_created = err.is_good()
        return err

    def check_support(self) -> Error:
        """OK when an engine can run the graph.

        Returns
        -------
        Error
            ``ErrorCode.OK``, or the failure's code and message (upstream's convention: the call
            does not raise).
        """
        if not self._plans_created:
            return Error(ErrorCode.INVALID_VALUE, _NEED_PLANS)
        return attempt(self._native.check_support)

    def _apply_filters(self) -> None:
        if self._deselected:
            self._native.deselect_engines(list(self._deselected))
        if self._workspace_cap is not None:
            self._native.deselect_workspace_greater_than(self._workspace_cap)

    def build_plans(self, policy: BuildPlanPolicy = BuildPlanPolicy.HEURISTICS_CHOICE) -> Error:
        """Build the first plan that builds (HEURISTICS_CHOICE) or every plan (ALL).

        Parameters
        ----------
        policy : BuildPlanPolicy, optional
            HEURISTICS_CHOICE (the first candidate that builds) or ALL.

        Returns
        -------
        Error
            ``ErrorCode.OK``, or the failure's code and message (upstream's convention: the call
            does not raise).
        """
        if not self._plans_created:
            return Error(ErrorCode.INVALID_VALUE, _NEED_PLANS)

        def build() -> None:
            self._apply_filters()
            self._native.build_plans(policy)

        err = attempt(build)
        self._order = list(self._native.plans) if err.is_good() else []
        return err

    # -- plans by index ---------------------------------------------------------------------
    def _at(self, index: int) -> ExecutionPlan:
        if not 0 <= int(index) < len(self._order):
            raise IndexError(f"plan index {index} is out of bounds: {len(self._order)} plan(s) "
                             f"built")
        return self._order[int(index)]

    def _raising(self, what: str, index: int) -> ExecutionPlan:
        try:
            return self._at(index)
        except IndexError as exc:
            raise RuntimeError(f"Failed to get {what}: {exc}") from None

    def get_execution_plan_count(self) -> int:
        """Number of built plans.

        Returns
        -------
        int
            Number of built plans.
        """
        return len(self._order)

    def get_plan_name_at_index(self, plan_index: int, handle: Any = None) -> str:
        """Engine name of built plan ``plan_index``, as upstream names plans (RuntimeError when
        out of bounds; ``graph.native.plans[i].name`` has the native plan name). ``handle`` is
        upstream's optional handle (engines are named the same with or without one; a
        destroyed handle raises RuntimeError).

        Parameters
        ----------
        plan_index : int
            Index of a built plan.
        handle : Handle, optional
            The Handle to use (default: the graph's).

        Returns
        -------
        str
            Engine name of built plan ``plan_index``, as upstream names plans.

        Raises
        ------
        RuntimeError
            When out of bounds.
        """
        optional_handle(handle)
        return self._raising("plan name", plan_index).engine.name

    def get_workspace_size_plan_at_index(self, plan_index: int) -> int:
        """Workspace bytes of built plan ``plan_index`` (RuntimeError when out of bounds).

        Parameters
        ----------
        plan_index : int
            Index of a built plan.

        Returns
        -------
        int
            Workspace bytes of built plan ``plan_index``.

        Raises
        ------
        RuntimeError
            When out of bounds.
        """
        return self._raising("workspace size for plan", plan_index).workspace_size

    def get_plan_name(self, handle: Any = None) -> str:
        """Engine name of the plan ``execute`` runs (RuntimeError when none is built);
        ``handle`` as in :meth:`get_plan_name_at_index`.

        Parameters
        ----------
        handle : Handle, optional
            The Handle to use (default: the graph's).

        Returns
        -------
        str
            Engine name of the plan ``execute`` runs.

        Raises
        ------
        RuntimeError
            When none is built.
        """
        optional_handle(handle)
        if not self._order:
            raise RuntimeError("Failed to get plan name: plan index 0 is out of bounds: no plan "
                               "built")
        return self._native.plans[0].engine.name

    def get_workspace_size(self) -> int:
        """Workspace bytes of the plan ``execute`` runs (RuntimeError when none is built).

        Returns
        -------
        int
            Workspace bytes of the plan ``execute`` runs.

        Raises
        ------
        RuntimeError
            When none is built.
        """
        if not self._order:
            raise RuntimeError("Failed to get workspace size: no plan built; call build_plans()")
        return self._native.plans[0].workspace_size

    def get_autotune_workspace_size(self) -> int:
        """Largest workspace of the built plans (0 when none is built).

        Returns
        -------
        int
            Largest workspace of the built plans (0 when none is built).
        """
        return max((p.workspace_size for p in self._order), default=0)

    def build_plan_at_index(self, plan_index: int) -> Error:
        """Make built plan ``plan_index`` the one ``execute`` runs.

        Parameters
        ----------
        plan_index : int
            Index of a built plan.

        Returns
        -------
        Error
            ``ErrorCode.OK``, or the failure's code and message (upstream's convention: the call
            does not raise).
        """
        try:
            plan = self._at(plan_index)
        except IndexError as exc:
            return Error(ErrorCode.INVALID_VALUE, str(exc))
        return attempt(lambda: self._native.select_plan(self._native.plans.index(plan)))

    def get_execution_plan_engine_id(self) -> int:
        """Engine id of the plan ``execute`` runs (RuntimeError when none is built).

        Returns
        -------
        int
            Engine id of the plan ``execute`` runs.

        Raises
        ------
        RuntimeError
            When none is built.
        """
        if not self._order:
            raise RuntimeError("Failed to get execution plan engine id: no plan built")
        return self._native.get_execution_plan_engine_id()

    # -- engines ----------------------------------------------------------------------------
    def get_ranked_engine_ids(self, modes: Sequence[HeurMode] | None = None) -> list[int]:
        """Ids of the engines that can run the graph, preferred first (RuntimeError before
        build_operation_graph).

        Parameters
        ----------
        modes : HeurMode or sequence of HeurMode, optional
            Heuristic modes, accepted as cudnn-frontend takes them; every registered engine that
            supports the graph is a candidate, best rank first.

        Returns
        -------
        list of int
            Ids of the engines that can run the graph, preferred first.

        Raises
        ------
        RuntimeError
            Before build_operation_graph.
        """
        if not self._op_graph:
            raise RuntimeError(f"Failed to get ranked engine ids: {_NEED_OP_GRAPH}")
        self._modes(modes)
        return self._native.get_ranked_engine_ids()

    def get_behavior_notes_for_engine(self, engine_id: int) -> list[BehaviorNote]:
        """MIOPEN_ENGINE compiles kernels at run time and needs libMIOpen; other engines none.

        Parameters
        ----------
        engine_id : int or str
            The engine's id (``get_ranked_engine_ids``) or name.

        Returns
        -------
        list of BehaviorNote
            MIOPEN_ENGINE compiles kernels at run time and needs libMIOpen.
        """
        if engine_id not in self.get_ranked_engine_ids():
            raise RuntimeError(f"Failed to get behavior notes for engine: {engine_id} cannot "
                               f"run this graph")

        if engine_id == fnv1a_64("MIOPEN_ENGINE"):
            return [BehaviorNote.RUNTIME_COMPILATION, BehaviorNote.EXTERNAL_LIBRARY_DEPENDENCY]
        return []

    def set_preferred_engine_id_ext(self, engine: int | str | None = None) -> Any:
        """Prefer an engine (by id or name) when plans are created; None clears it. If the
        engine cannot run the graph the others are used (a preference, not a selection).

        Parameters
        ----------
        engine : int, str or None, optional
            The engine's id or name; None clears the preference.

        Returns
        -------
        Graph
            This graph (calls chain).
        """

        self._preferred = fnv1a_64(engine) if isinstance(engine, str) else (
            None if engine is None else int(engine))
        return self

    def get_preferred_engine_id_ext(self) -> int | None:
        """The preferred engine id, or None.

        Returns
        -------
        int or None
            The preferred engine id, or None.
        """
        return self._preferred

    def deselect_engines(self, engines: Sequence[str | int]) -> Any:
        """Bar engines (names or ids) from the plans built next; returns the graph.

        Parameters
        ----------
        engines : sequence of str or int
            Engine names or ids.

        Returns
        -------
        Graph
            This graph (calls chain).
        """
        self._deselected.extend(engines)
        return self

    def deselect_workspace_greater_than(self, workspace: int) -> Any:
        """Bar plans needing more than ``workspace`` bytes; returns the graph.

        Parameters
        ----------
        workspace : int or None
            The largest workspace in bytes a plan may need (None: no limit).

        Returns
        -------
        Graph
            This graph (calls chain).
        """
        self._workspace_cap = int(workspace)
        return self

    # -- execution --------------------------------------------------------------------------
    def _host_region(self, address: int, nbytes: int, what: str, by_value: bool) -> Any:
        """A host Buffer for ``address`` when it lies in a live DeviceBuffer (bounds checked);
        else a device pointer, which host-memory engines refuse instead of dereferencing."""

        found = find_buffer(address)
        if found is None:
            if by_value:
                return address
            if address == 0:
                raise VariantPackError(f"{what}: null pointer")
            return Buffer(ptr=address, device="gpu", device_known=True,
                                  kind="int (a device pointer: not inside a DeviceBuffer)")
        buf, offset = found
        if offset + nbytes > buf.size():
            raise VariantPackError(f"{what} needs {nbytes} bytes at offset {offset} of a "
                                   f"DeviceBuffer of {buf.size()} bytes")
        return Buffer(ptr=address, device="cpu", owner=buf,
                              kind="hipdnn.frontend.DeviceBuffer")

    def _device_pointer(self, value: Any, uid: int) -> int:
        """The pointer of a device-memory DLPack producer (upstream takes only that), once the
        shape and dtype it states fit the tensor (the rules of the native variant pack)."""
        tensor = self._native.tensors.get(uid)
        if tensor is None or tensor.dim is None:
            return get_data_ptr(value)
        buf = resolve(value)
        check_against(buf, tensor, "execute: variant pack")
        return buf.ptr

    def _value(self, value: Any, uid: int) -> Any:
        if isinstance(value, DeviceBuffer):
            value = value.ptr()
        elif isinstance(value, Buffer) and value.by_pointer:
            value = value.ptr  # hipdnn.by_pointer(obj): the pointer, as for an int
        elif _device_dlpack(value):
            value = self._device_pointer(value, uid)
        elif not isinstance(value, (int, np.integer, float, np.ndarray)) and not any(
                hasattr(value, a) for a in ("__dlpack__", "__cuda_array_interface__",
                                            "__array_interface__")) \
                and type(value).__module__.split(".")[0] != "torch":
            value = get_data_ptr(value)  # upstream's data_ptr() objects; else TypeError
        if isinstance(value, (bool, np.bool_)):
            raise TypeError(f"variant pack uid {uid}: a bool is not a pointer")
        if not isinstance(value, (int, np.integer)):
            return value
        tensor = self._native.tensors.get(uid)
        if tensor is None or tensor.dim is None or tensor.stride is None:
            return int(value)
        lo, hi = element_span(tensor.dim, tensor.stride)
        itemsize = max(tensor.data_type.itemsize, 1)
        return self._host_region(int(value), (hi - min(lo, 0)) * itemsize,
                                 f"tensor {tensor.name!r} (uid {uid})", tensor.is_pass_by_value)

    def _pack(self, variant_pack: Mapping[Any, Any]) -> dict[int, Any]:
        if not isinstance(variant_pack, Mapping):
            raise TypeError(f"variant_pack must be a dict {{uid or Tensor: pointer or buffer}}, "
                            f"got {type(variant_pack).__name__}")
        out: dict[int, Any] = {}
        for key, value in variant_pack.items():
            if isinstance(key, NativeTensor):
                if key.uid is None:
                    raise ValueError(f"variant pack key tensor {key.name!r} has no uid: use the "
                                     f"graph's tensors after validate()")
                uid = key.uid
            elif isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
                uid = int(key)
            else:
                raise TypeError(f"variant pack keys are uids (int) or Tensors, got "
                                f"{type(key).__name__}")
            out[uid] = self._value(value, uid)
        return out

    def _workspace(self, workspace: Any) -> Any:
        if workspace is None:
            return None
        if isinstance(workspace, DeviceBuffer):
            workspace = workspace.ptr()
        elif not isinstance(workspace, (int, np.integer)) and not hasattr(workspace, "__dlpack__") \
                and not hasattr(workspace, "__array_interface__") \
                and type(workspace).__module__.split(".")[0] != "torch":
            workspace = get_data_ptr(workspace)
        if isinstance(workspace, (int, np.integer)):
            if int(workspace) == 0:
                return None
            found = find_buffer(int(workspace))
            if found is not None:
                buf, offset = found
                size = buf.size() - offset
                return Buffer(ptr=int(workspace), device="cpu", shape=(size,),
                                      strides=(1,), dtype=DataType.UINT8,
                                      owner=buf, kind="hipdnn.frontend.DeviceBuffer")
            return int(workspace)
        return workspace

    def _run(self, handle: Any, variant_pack: Mapping[Any, Any], workspace: Any,
             plan: ExecutionPlan | None) -> Error:
        if not self._order:
            return Error(ErrorCode.GRAPH_EXECUTION_FAILED,
                         "no execution plan is built: call build_plans() first")
        h = native_handle(handle)
        try:
            pack, ws = self._pack(variant_pack), self._workspace(workspace)
        except HipdnnError as exc:
            return error_from(exc)
        if plan is None:
            return attempt(lambda: self._native.execute(pack, ws, handle=h))
        index = self._native.plans.index(plan)
        return attempt(lambda: self._native.execute_plan_at_index(pack, ws, index, handle=h))

    def execute(self, handle: Any, variant_pack: Mapping[Any, Any], workspace: Any = 0) -> Error:
        """Run the active plan. ``variant_pack``: {uid or Tensor: pointer (int, DeviceBuffer
        address), DeviceBuffer, array, torch tensor or ``__dlpack__`` object}.

        Parameters
        ----------
        handle : Handle, optional
            The Handle to use (default: the graph's).
        variant_pack : Mapping
            {graph tensor or uid: value}; a value is an int device pointer, a Python float (pass-by-
            value tensors), a numpy array, a torch tensor, or any ``__dlpack__`` /
            ``__cuda_array_interface__`` / ``__array_interface__`` object.
        workspace : optional
            The workspace: at least the plan's workspace size in bytes (an int device pointer, an
            array, a tensor); None when that is 0.

        Returns
        -------
        Error
            ``ErrorCode.OK``, or the failure's code and message (upstream's convention: the call
            does not raise).
        """
        return self._run(handle, variant_pack, workspace, None)

    def execute_plan_at_index(self, handle: Any, variant_pack: Mapping[Any, Any],
                              workspace: Any, plan_index: int) -> Error:
        """Run built plan ``plan_index`` without making it the active one.

        Parameters
        ----------
        handle : Handle, optional
            The Handle to use (default: the graph's).
        variant_pack : Mapping
            {graph tensor or uid: value}; a value is an int device pointer, a Python float (pass-by-
            value tensors), a numpy array, a torch tensor, or any ``__dlpack__`` /
            ``__cuda_array_interface__`` / ``__array_interface__`` object.
        workspace : optional
            The workspace: at least the plan's workspace size in bytes (an int device pointer, an
            array, a tensor); None when that is 0.
        plan_index : int
            Index of a built plan.

        Returns
        -------
        Error
            ``ErrorCode.OK``, or the failure's code and message (upstream's convention: the call
            does not raise).
        """
        try:
            plan = self._at(plan_index)
        except IndexError as exc:
            return Error(ErrorCode.INVALID_VALUE, str(exc))
        return self._run(handle, variant_pack, workspace, plan)

    def execute_timed_ext(self, handle: Any, variant_pack: Mapping[Any, Any],
                          workspace: Any = 0) -> tuple[Error, ExecutionTiming]:
        """Run the active plan once and time it: ``(Error, ExecutionTiming)``. The timing is
        host wall clock around the run and a stream synchronisation (quality UNSTALLED).

        Parameters
        ----------
        handle : Handle
            The Handle to run on.
        variant_pack : Mapping
            {graph tensor or uid: value}; a value is an int device pointer, a Python float (pass-by-
            value tensors), a numpy array, a torch tensor, or any ``__dlpack__`` /
            ``__cuda_array_interface__`` / ``__array_interface__`` object.
        workspace : optional
            The workspace: at least the plan's workspace size in bytes (an int device pointer, an
            array, a tensor); None when that is 0.

        Returns
        -------
        tuple of (Error, ExecutionTiming)
            Run the active plan once and time it.
        """
        if not self._order:
            return (Error(ErrorCode.GRAPH_EXECUTION_FAILED,
                          "no execution plan is built: call build_plans() first"),
                    ExecutionTiming())
        start = time.perf_counter()
        err = self.execute(handle, variant_pack, workspace)
        if err.is_bad():
            return err, ExecutionTiming()
        h = native_handle(handle)
        if isinstance(h, NativeHandle):
            try:
                h.synchronize()
            except HipdnnError as exc:  # e.g. hipStreamSynchronize failed: HANDLE_ERROR
                return error_from(exc), ExecutionTiming()
        elapsed = (time.perf_counter() - start) * 1e3
        return err, ExecutionTiming(elapsed if math.isfinite(elapsed) else None,
                                    TimingQuality.UNSTALLED)
