"""Graph: the builder (tensors, ops, validate, serialize); owns a HighLevel, Planner, Executor.

>>> import hipdnn
>>> g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT)
>>> x = g.tensor(dim=[2, 3, 8, 8], name="x")
>>> w = g.tensor(dim=[4, 3, 3, 3], name="w")
>>> y = g.conv_fprop(x, w, padding=[1, 1], name="conv").set_output(True)
>>> y.get_dim()
[2, 4, 8, 8]
"""

from __future__ import annotations

import contextlib
import copy
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from hipdnn.core.errors import ArgumentError, ValidationError
from hipdnn.core.handle import check_handle, default_handle
from hipdnn.core.types import BuildPlanPolicy, DataType, HeurMode, to_data_type
from hipdnn.graph.highlevel import HighLevel, accepting_framework_tensors
from hipdnn.graph.ops import GraphOps
from hipdnn.graph.ops_math import MathOps
from hipdnn.graph.ops_matmul import MatmulOps
from hipdnn.graph.ops_norm import NormOps
from hipdnn.ir import pictures, serialize
from hipdnn.ir.validation import validate_structure
from hipdnn.pipeline.executor import BoundExecution, Executor, PlanTiming
from hipdnn.pipeline.planner import Planner


def _dtype_arg(value: Any, what: str) -> DataType:
    """to_data_type, with the error naming the Graph argument (io_data_type, ...)."""
    try:
        return to_data_type(value)
    except ValidationError as exc:
        raise ValidationError(f"Graph {what}: {exc}") from None

if TYPE_CHECKING:
    from types import TracebackType

    from hipdnn.backend.engine import ExecutionPlan
    from hipdnn.backend.knobs import Knob, KnobSettings, KnobValue
    from hipdnn.core.handle import Handle

__all__ = ["Graph", "graph_context"]

_IGNORED_CUDNN_ARGS = ("sm_count", "sm_version", "kernel_cache", "device_property")


def _handle_and_data(handle_: Any, pyobj: Any) -> tuple[Any, Any]:
    return handle_, pyobj


def _data_only(pyobj: Any) -> tuple[Any, Any]:
    return None, pyobj


class _ClassOrInstance:
    """A method name with one meaning on the class and another on an instance (cudnn-frontend
    spells an in-place load ``g.deserialize(data)``; ours was ``Graph.deserialize(text)``)."""

    def __init__(self, on_class: str, on_instance: str) -> None:
        self.on_class, self.on_instance = on_class, on_instance

    def __get__(self, obj: object, owner: type) -> Callable[..., Any]:
        return cast("Callable[..., Any]", getattr(owner, self.on_class) if obj is None
                    else getattr(obj, self.on_instance))


class Graph(MathOps, NormOps, MatmulOps):
    """A hipDNN operation graph (cudnn-frontend's ``pygraph``).

    Graph-level data types are defaults: a tensor without a data type gets
    ``intermediate_data_type`` when virtual (FLOAT if that is unset) and ``io_data_type``
    otherwise; batchnorm statistics outputs (mean, inv_variance, running stats, dscale, dbias)
    default to the SCALE tensor's type; a node without a compute type gets
    ``compute_data_type`` (FLOAT if that is unset). ``handle`` defaults
    to the calling thread's default :class:`~hipdnn.core.handle.Handle`.

    The graph owns the plans it builds: ``close()`` (or ``with``) releases them.

    The same class is cudnn-frontend 1.x's high-level ``cudnn.Graph``: ops take framework
    tensors, ``inputs=``/``outputs=``/``heuristics=``/``workspace_alloc=`` (keyword-only) and
    ``set_io_tuples`` order a positional call, and a high-level ``with`` block builds the plans
    on exit instead of closing them (the rule is in :mod:`hipdnn.graph.highlevel`).
    """

    def __init__(
        self,
        name: str = "graph",
        io_data_type: Any = DataType.NOT_SET,
        intermediate_data_type: Any = DataType.NOT_SET,
        compute_data_type: Any = DataType.NOT_SET,
        handle: Handle | None = None,
        *,
        is_dynamic_shape_enabled: bool = False,
        is_override_shape_enabled: bool = False,
        inputs: list[Any] | tuple[Any, ...] | None = None,
        outputs: list[Any] | tuple[Any, ...] | None = None,
        heuristics: list[Any] | tuple[Any, ...] | None = None,
        workspace_alloc: bool | None = None,
        **cudnn_only: Any,
    ) -> None:
        for key in cudnn_only:
            if key not in _IGNORED_CUDNN_ARGS:
                raise ArgumentError(f"Graph() got an unexpected keyword argument {key!r}; valid "
                                    f"cudnn-frontend-only ones (ignored): "
                                    f"{list(_IGNORED_CUDNN_ARGS)}")
        if any(v is not None for v in cudnn_only.values()):
            warnings.warn(f"Graph(): {sorted(cudnn_only)} are cudnn-frontend options with no "
                          f"meaning here; ignored", stacklevel=2)
        if is_dynamic_shape_enabled or is_override_shape_enabled:
            raise ValidationError("dynamic / override shapes are not supported: build one graph "
                                  "per shape (rebuilds are served from the plan cache)")
        self.name = str(name)
        self.io_data_type: DataType = _dtype_arg(io_data_type, "io_data_type")
        self.intermediate_data_type: DataType = _dtype_arg(intermediate_data_type, "intermediate_data_type")
        self.compute_data_type: DataType = _dtype_arg(compute_data_type, "compute_data_type")
        super().__init__()  # the tensors and nodes (hipdnn.graph.core)
        self._handle = check_handle(handle, "Graph handle")
        self._attach_pipeline()
        #: the high-level form's records and calls; see hipdnn.graph.highlevel
        self._high_level = HighLevel(self, inputs, outputs, heuristics, workspace_alloc)

    def _attach_pipeline(self) -> None:
        """A fresh executor and planner: the state of a graph that was never built."""
        #: runs the built plans (variant packs, bindings, autotune); see hipdnn.pipeline.executor
        self._executor = Executor(self)
        #: the executor's remembered bindings (the same list object): execute's fast path
        self._fast = self._executor.fast
        #: the pipeline, the engine and knob API and the built plans; see hipdnn.pipeline.planner
        self._planner = Planner(self, self._executor)

    # -- copies and pickles: the structure, never the plans ----------------------------------------
    _PIPELINE = ("_executor", "_fast", "_planner")

    def __deepcopy__(self, memo: dict[int, Any]) -> Graph:
        """``copy.deepcopy``: an independent, unbuilt graph of the same tensors, nodes, settings
        and high-level records, on the same handle (plans and MIOpen objects are never copied:
        build the copy). Tensors copied together with the graph, as in
        ``copy.deepcopy((g, x, y))``, are the copy's tensors."""
        clone = type(self).__new__(type(self))
        memo[id(self)] = clone
        for key, value in self.__dict__.items():
            if key not in self._PIPELINE and key != "_handle":
                clone.__dict__[key] = copy.deepcopy(value, memo)
        clone._handle = self._handle
        clone._attach_pipeline()
        clone._high_level.rekey()
        return clone

    def __copy__(self) -> Graph:
        """``copy.copy`` gives the same as ``copy.deepcopy``: a tensor belongs to one graph, so
        a copy sharing the tensors and nodes could not be edited or built on its own."""
        return self.__deepcopy__({})

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the structure (tensors, nodes, settings, high-level records), not the plans
        nor the handle: the unpickled graph is unbuilt and runs on the default handle of the
        thread that builds it (``build_operation_graph(handle)`` sets another)."""
        return {key: value for key, value in self.__dict__.items()
                if key not in self._PIPELINE and key != "_handle"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._handle = None
        self._attach_pipeline()
        self._high_level.rekey()

    # -- graph-wide settings (hipDNN setters, chainable) ---------------------------------------
    def set_name(self, name: str) -> Graph:
        """Set the graph's name.

        Parameters
        ----------
        name : str
            The new name.

        Returns
        -------
        Graph
            This graph (calls chain).
        """
        self.name = str(name)
        self._changed()
        return self

    def set_io_data_type(self, data_type: Any) -> Graph:
        """Default dtype of non-virtual tensors.

        Parameters
        ----------
        data_type : DataType
            The default element type of non-virtual tensors.

        Returns
        -------
        Graph
            This graph (calls chain).
        """
        self.io_data_type = _dtype_arg(data_type, "io_data_type")
        self._changed()
        return self

    def set_intermediate_data_type(self, data_type: Any) -> Graph:
        """Default dtype of virtual tensors.

        Parameters
        ----------
        data_type : DataType
            The default element type of virtual tensors.

        Returns
        -------
        Graph
            This graph (calls chain).
        """
        self.intermediate_data_type = _dtype_arg(data_type, "intermediate_data_type")
        self._changed()
        return self

    def set_compute_data_type(self, data_type: Any) -> Graph:
        """Default compute dtype of nodes.

        Parameters
        ----------
        data_type : DataType
            The default compute type of the graph's nodes.

        Returns
        -------
        Graph
            This graph (calls chain).
        """
        self.compute_data_type = _dtype_arg(data_type, "compute_data_type")
        self._changed()
        return self

    @property
    def handle(self) -> Handle:
        """The graph's handle (the thread's default handle unless one was given)."""
        if self._handle is None:
            self._handle = default_handle()
        return self._handle

    def _changed(self) -> None:
        """A setter of the graph, a tensor or a node edited it: the built plans and remembered
        bindings are stale until the next build (the planner's revision moves on)."""
        self._planner.changed()

    # -- the pipeline, engines, knobs and plans (delegated to the graph's Planner) -------------
    def build_operation_graph(self, handle: Handle | None = None) -> None:
        """Validate and fix the graph's structure key (cudnn-frontend's operation graph).

        Parameters
        ----------
        handle : Handle, optional
            The Handle the graph is built for (default: the graph's).
        """
        self._planner.build_operation_graph(handle)

    def create_execution_plans(self, modes: Sequence[HeurMode] | HeurMode | None = None) -> None:
        """Rank the applicable engines.

        ``modes``: a HeurMode, its name or value, or a list of them. Every valid mode (A, B,
        FALLBACK, OPENSOURCE) gives the same ranking, the engines' static ranks, as hipDNN does;
        an unknown mode raises ValidationError listing the valid ones.

        Parameters
        ----------
        modes : HeurMode or sequence of HeurMode, optional
            Heuristic modes (a HeurMode, its name or value, or a list of them).

        Raises
        ------
        ValidationError
            An unknown mode (the message lists the valid ones).
        GraphNotSupportedError
            No engine applies (the message gives each engine's reason).
        """
        self._planner.create_execution_plans(modes)

    def check_support(self) -> dict[str, str | None]:
        """Raise GraphNotSupportedError unless at least one candidate engine remains.

        Returns :meth:`engine_reasons` (cudnn-frontend returns nothing: code ignoring the
        result works the same).

        Returns
        -------
        dict
            Each candidate engine's name: None (it can run the graph) or its reason.

        Raises
        ------
        GraphNotSupportedError
            No candidate engine remains (the message gives each engine's reason).
        """
        return self._planner.check_support()

    def engine_reasons(self) -> dict[str, str | None]:
        """Every registered engine, preferred first: None when it can run this graph (and was
        not deselected or refused while building), else the full reason it was not used.

        Returns
        -------
        dict
            Each registered engine's name, preferred first: None when it can run this graph, else
            its reason.
        """
        return self._planner.engine_reasons()

    def deselect_engines(self, names: Sequence[str | int] | str | int) -> None:
        """Drop candidate engines by name or id (cudnn-frontend ``deselect_engines``).

        Call after ``create_execution_plans`` (it is run first when needed) and before
        ``build_plans``. Names that match no candidate are ignored, as in cudnn-frontend.

        Parameters
        ----------
        names : str, int or sequence of them
            Engine names or ids.

        Raises
        ------
        ArgumentError
            A name or id of no registered engine.
        """
        self._planner.deselect_engines(names)

    def deselect_workspace_greater_than(self, workspace: int | None) -> None:
        """Skip plans needing more than ``workspace`` bytes (cudnn-frontend's filter).

        A plan's workspace is known once it is built, so the limit applies in ``build_plans``
        (a candidate whose plan needs more is released and skipped, its reason recorded; with
        HEURISTICS_CHOICE the next candidate is tried) and drops already-built plans now.
        The limit stays until the next call (``None`` removes it).

        Parameters
        ----------
        workspace : int or None
            The largest workspace in bytes a plan may need (None: no limit).
        """
        self._planner.deselect_workspace_greater_than(workspace)

    def build_plans(self, policy: BuildPlanPolicy = BuildPlanPolicy.HEURISTICS_CHOICE,
                    progress: bool | None = None) -> None:
        """Build the first candidate that builds (HEURISTICS_CHOICE) or every candidate (ALL).

        ``policy`` may also be given by name or value; anything else raises ValidationError.
        ``progress``: a build that takes long (MIOpen compiling kernels on first use, Find 2.0
        tuning) shows what it builds on a terminal or in a notebook; False (or
        ``HIPDNN_PROGRESS=0``) keeps it quiet; see :mod:`hipdnn.core.progress`.

        Parameters
        ----------
        policy : BuildPlanPolicy, optional
            HEURISTICS_CHOICE (the first candidate that builds) or ALL.
        progress : bool, optional
            Show a progress line (None: on a terminal or in a notebook when it takes long).

        Raises
        ------
        GraphNotSupportedError
            No candidate builds (the message gives each one's reason).
        """
        self._planner.build_plans(policy, progress)

    def build(self, modes: Sequence[HeurMode] | HeurMode | None = None,
              policy: BuildPlanPolicy = BuildPlanPolicy.HEURISTICS_CHOICE,
              progress: bool | None = None) -> Graph:
        """Run the whole pipeline: validate, build_operation_graph, create_execution_plans,
        check_support, build_plans.

        Unlike cudnn-frontend, where ``build()`` without arguments stops after the operation
        graph, this always builds plans (default heuristics), so ``execute`` can follow.
        ``progress`` is passed to :meth:`build_plans`.

        Parameters
        ----------
        modes : HeurMode or sequence of HeurMode, optional
            Heuristic modes, checked and accepted as cudnn-frontend takes them; every
            registered engine that supports the graph is a candidate, best rank first.
        policy : BuildPlanPolicy
            Which candidates ``build_plans`` builds (``HEURISTICS_CHOICE``: the first that
            builds; ``ALL``: every one).
        progress : bool, optional
            Show a progress line (None: on a terminal or notebook when it takes long).

        Returns
        -------
        Graph
            This graph, built.

        Raises
        ------
        ValidationError
            The graph is malformed (names the node, port and tensor).
        GraphNotSupportedError
            No engine can run it (the reasons per engine are in the message).
        """
        self._planner.build(modes, policy, progress)
        return self

    def get_engine_count(self) -> int:
        """Number of engines that can run this graph.

        Returns
        -------
        int
            Number of engines that can run this graph.
        """
        return self._planner.get_engine_count()

    def get_ranked_engine_ids(self) -> list[int]:
        """Ids of the applicable engines, preferred first.

        Returns
        -------
        list of int
            The ids, preferred first.
        """
        return self._planner.get_ranked_engine_ids()

    def get_knobs_for_engine(self, engine_id: int | str) -> list[Knob]:
        """The knobs ``engine_id`` offers for this graph (id, type, default, constraint, help).

        Parameters
        ----------
        engine_id : int or str
            The engine's id (``get_ranked_engine_ids``) or name.

        Returns
        -------
        list of Knob
            The knobs (id, type, default, constraint, help).

        Raises
        ------
        EngineError
            ``engine_id`` names no registered engine.
        """
        return self._planner.get_knobs_for_engine(engine_id)

    def create_execution_plan_ext(self, engine_id: int | str,
                                  knob_settings: KnobSettings = None) -> None:
        """Select ``engine_id`` with ``knob_settings`` (a list of KnobSetting or a dict).

        Settings are checked now: an unknown knob or a value outside its constraint raises
        KnobError naming the knob and the valid values. Calls accumulate, so several
        configurations can be built with BuildPlanPolicy.ALL and compared by autotune().

        Parameters
        ----------
        engine_id : int or str
            The engine's id (``get_ranked_engine_ids``) or name.
        knob_settings : dict or sequence of KnobSetting, optional
            Knob values by knob id; knobs left out take their defaults.

        Raises
        ------
        EngineError
            ``engine_id`` names no registered engine.
        KnobError
            A knob value outside its constraint.
        """
        self._planner.create_execution_plan_ext(engine_id, knob_settings)

    def create_execution_plan(self, engine_id: int | str,
                              knob_settings: KnobSettings = None) -> None:
        """cudnn-frontend's name for :meth:`create_execution_plan_ext` (same arguments).

        Parameters
        ----------
        engine_id : int or str
            The engine's id (``get_ranked_engine_ids``) or name.
        knob_settings : dict or sequence of KnobSetting, optional
            Knob values by knob id; knobs left out take their defaults.

        Raises
        ------
        EngineError
            ``engine_id`` names no registered engine.
        KnobError
            A knob value outside its constraint.
        """
        self._planner.create_execution_plan(engine_id, knob_settings)

    def build_plan_at_index(self, index: int) -> None:
        """Build only candidate ``index`` (appended to the built plans unless its workspace
        exceeds the deselect_workspace_greater_than limit).

        Parameters
        ----------
        index : int
            Index of a built plan (0: the selected one), or of a candidate for
            :meth:`build_plan_at_index`.

        Raises
        ------
        PlanIndexError
            ``index`` is not the index of a candidate.
        """
        self._planner.build_plan_at_index(index)

    def get_execution_plan_count(self) -> int:
        """Number of built plans.

        Returns
        -------
        int
            Number of built plans.
        """
        return self._planner.get_execution_plan_count()

    def get_execution_plan_engine_id(self) -> int:
        """Engine id of the selected plan (index 0).

        Returns
        -------
        int
            Engine id of the selected plan (index 0).
        """
        return self._planner.get_execution_plan_engine_id()

    def get_plan_name(self) -> str:
        """Name of the selected plan (index 0).

        Returns
        -------
        str
            Name of the selected plan (index 0).
        """
        return self._planner.get_plan_name()

    def get_plan_name_at_index(self, index: int) -> str:
        """Name of built plan ``index``.

        Parameters
        ----------
        index : int
            Index of a built plan (0: the selected one), or of a candidate for
            :meth:`build_plan_at_index`.

        Returns
        -------
        str
            Name of built plan ``index``.

        Raises
        ------
        PlanIndexError
            ``index`` is not the index of a built plan.
        """
        return self._planner.get_plan_name_at_index(index)

    def get_workspace_size_plan_at_index(self, index: int) -> int:
        """Workspace bytes of built plan ``index``.

        Parameters
        ----------
        index : int
            Index of a built plan (0: the selected one), or of a candidate for
            :meth:`build_plan_at_index`.

        Returns
        -------
        int
            Workspace bytes of built plan ``index``.

        Raises
        ------
        PlanIndexError
            ``index`` is not the index of a built plan.
        """
        return self._planner.get_workspace_size_plan_at_index(index)

    def get_workspace_size(self) -> int:
        """Workspace bytes that fit every built plan (the selected plan's when only one).

        Returns
        -------
        int
            Workspace bytes that fit every built plan (the selected plan's when only one).
        """
        return self._planner.get_workspace_size()

    def get_engine_and_knobs_at_index(self, index: int) -> tuple[int, dict[str, KnobValue]]:
        """(engine id, knob values) of built plan ``index``: persist an autotuned choice and
        replay it with ``create_execution_plan_ext(engine_id, knobs)``.

        Parameters
        ----------
        index : int
            Index of a built plan (0: the selected one), or of a candidate for
            :meth:`build_plan_at_index`.

        Returns
        -------
        tuple of (int, dict)
            The engine id and its knob values, for ``create_execution_plan_ext``.

        Raises
        ------
        PlanIndexError
            ``index`` is not the index of a built plan.
        """
        return self._planner.get_engine_and_knobs_at_index(index)

    def select_plan(self, index: int) -> None:
        """Make built plan ``index`` the one ``execute`` runs (index 0).

        Parameters
        ----------
        index : int
            Index of a built plan (0: the selected one), or of a candidate for
            :meth:`build_plan_at_index`.

        Raises
        ------
        PlanIndexError
            ``index`` is not the index of a built plan.
        """
        self._planner.select_plan(index)

    def close(self) -> None:
        """Release the graph's plans (idempotent); later pipeline calls raise PlanClosedError."""
        self._planner.close()

    @property
    def plans(self) -> list[ExecutionPlan]:
        """The built plans, selected first."""
        return list(self._planner.plans)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._planner.closed

    # -- execution (delegated to the graph's Executor) -------------------------------------------
    def execute(self, variant_pack: Mapping[Any, Any], workspace: Any = None,
                handle: Handle | None = None) -> None:
        """Run the selected plan. ``variant_pack``: {tensor or uid: array/pointer/scalar}.

        ``workspace`` may be None when ``get_workspace_size()`` is 0. A pack is bound on first
        use (see :meth:`bind`) and the binding is reused while every value reads the same
        (type, data pointer, shape, strides, dtype, device, read-only flag, read afresh on
        each call by a :mod:`hipdnn.pipeline.packsig` matcher), so the checks a new pack would get
        are still made on every call without resolving the pack again.

        Parameters
        ----------
        variant_pack : Mapping
            {graph tensor or uid: value}; a value is an int device pointer, a Python float
            (pass-by-value tensors), a numpy array, a torch tensor, or any ``__dlpack__`` /
            ``__cuda_array_interface__`` / ``__array_interface__`` object.
        workspace : optional
            At least ``get_workspace_size()`` bytes (same kinds of value); None when that is 0.
        handle : Handle, optional
            The Handle to run on (default: the graph's).

        Raises
        ------
        VariantPackError
            A value is missing, of another dtype or shape than its tensor, or unreadable.
        WorkspaceError
            The workspace is missing or too small.
        GraphChangedError, PlanClosedError
            The graph was edited since ``build()``, or it, the plan or the handle is closed.
        """
        fast = self._fast  # the executor's list: a hit costs no call into the executor
        if fast:
            try:
                run = fast[0](variant_pack, workspace, handle)
            except Exception:  # a value whose reads fail: the checked path reports it
                run = None
            if run is not None:
                run()
                return
        self._executor.execute_miss(variant_pack, workspace, handle)

    def bind(self, variant_pack: Mapping[Any, Any], workspace: Any = None,
             handle: Handle | None = None) -> BoundExecution:
        """Validate ``variant_pack`` once and return a callable re-running the selected plan.

        For loops that run a graph many times on the same memory: the variant pack and the
        workspace are resolved and checked now (same rules and errors as :meth:`execute`), and
        the plan prebuilds its calls, so each run costs little more than the engine's own
        calls. Contents of the bound arrays may change between runs; the objects stay alive
        as long as the binding. Host arrays work too (staged on each run by MIOPEN_ENGINE).

        >>> import numpy as np, hipdnn
        >>> g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT)
        >>> x = g.tensor(dim=[1, 2, 3, 3], name="x")
        >>> y = g.relu(x).set_output(True)
        >>> _ = g.build()
        >>> xs = np.ones((1, 2, 3, 3), np.float32); ys = np.empty_like(xs)
        >>> run = g.bind({x: xs, y: ys})
        >>> xs[:] = -1.0; run(); float(ys.max())
        0.0

        The binding belongs to the plan selected now (it keeps running that plan after the
        graph is rebuilt or another plan is selected); closing the graph, the plan or the
        plan's handle makes later calls raise ``PlanClosedError``.

        Parameters
        ----------
        variant_pack : Mapping
            {graph tensor or uid: value}, as for :meth:`execute`.
        workspace : optional
            As for :meth:`execute`.
        handle : Handle, optional
            The Handle to run on (default: the graph's).

        Returns
        -------
        BoundExecution
            Call it (no arguments) to run the plan on the bound memory.

        Raises
        ------
        VariantPackError, WorkspaceError, GraphChangedError, PlanClosedError
            As :meth:`execute`, raised here once instead of on each run.
        """
        return self._executor.bind(variant_pack, workspace, handle)

    def execute_plan_at_index(self, variant_pack: Mapping[Any, Any], workspace: Any,
                              index: int, handle: Handle | None = None) -> None:
        """Run built plan ``index``.

        Parameters
        ----------
        variant_pack : Mapping
            {graph tensor or uid: value}; a value is an int device pointer, a Python float (pass-by-
            value tensors), a numpy array, a torch tensor, or any ``__dlpack__`` /
            ``__cuda_array_interface__`` / ``__array_interface__`` object.
        workspace : optional
            The workspace: at least the plan's workspace size in bytes (an int device pointer, an
            array, a tensor); None when that is 0.
        index : int
            Index of a built plan (0: the selected one), or of a candidate for
            :meth:`build_plan_at_index`.
        handle : Handle, optional
            The Handle to use (default: the graph's).

        Raises
        ------
        VariantPackError
            A value is missing, of another dtype or shape than its tensor, or unreadable
            (WorkspaceError: the workspace).
        PlanIndexError
            ``index`` is not the index of a built plan.
        """
        self._executor.execute_plan_at_index(variant_pack, workspace, index, handle)

    def autotune(self, variant_pack: Mapping[Any, Any], workspace: Any = None,
                 iterations: int = 10, warmup: int = 1,
                 handle: Handle | None = None, progress: bool | None = None) -> list[PlanTiming]:
        """Time every candidate plan and select the fastest (it becomes plan 0).

        Candidates not built yet are built first. Returns a :class:`PlanTiming` (plan name,
        seconds per run; it unpacks as a ``(name, seconds)`` tuple) per plan, fastest first.
        Outputs in the variant pack are overwritten by every run. ``progress``: see
        :mod:`hipdnn.core.progress` (None: shown on a terminal or in a notebook when it takes long).

        Parameters
        ----------
        variant_pack : Mapping
            {graph tensor or uid: value}; a value is an int device pointer, a Python float (pass-by-
            value tensors), a numpy array, a torch tensor, or any ``__dlpack__`` /
            ``__cuda_array_interface__`` / ``__array_interface__`` object.
        workspace : optional
            The workspace: at least the plan's workspace size in bytes (an int device pointer, an
            array, a tensor); None when that is 0.
        iterations : int, optional
            Timed runs per plan.
        warmup : int, optional
            Untimed runs per plan first.
        handle : Handle, optional
            The Handle to use (default: the graph's).
        progress : bool, optional
            Show a progress line (None: on a terminal or in a notebook when it takes long).

        Returns
        -------
        list of PlanTiming
            Each plan's name and time per run, fastest first.

        Raises
        ------
        VariantPackError
            A value is missing, of another dtype or shape than its tensor, or unreadable.
        HandleError
            Synchronizing the handle failed.
        """
        return self._executor.autotune(variant_pack, workspace, iterations, warmup, handle,
                                       progress)

    # -- the high-level form (delegated to the graph's HighLevel) --------------------------------
    def set_io_tuples(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
        """Order of the inputs and outputs for positional calls ``graph(*inputs)``.

        Items are recorded names (``"conv::image"``), tensor names, uids, graph tensors or the
        framework tensors the ops were given. Before the plans are built the lists are kept and
        applied when the ``with`` block ends.

        Parameters
        ----------
        inputs : sequence
            The input tensors (or the framework tensors they were made from), in call order.
        outputs : sequence
            The output tensors, in return order.
        """
        self._high_level.set_io_tuples(inputs, outputs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Execute: ``graph(*inputs)`` after ``set_io_tuples`` or ``graph({name: tensor})``."""
        return self._high_level.call(args, kwargs)

    # -- validation and serialization ------------------------------------------------------------
    def validate(self) -> Graph:
        """Infer shapes and dtypes, check everything, assign uids. Raises ValidationError.

        A structure identical to one validated successfully before (names, dims, strides,
        dtypes, uids, virtuality, attributes and wiring all equal) is served from a memo.

        Returns
        -------
        Graph
            This graph, with ``tensors`` (uid -> tensor) filled.

        Raises
        ------
        ValidationError
            Names the node, port and tensor at fault and what is valid.
        """
        self.tensors, self._planner.validated = validate_structure(self)
        return self

    def key(self) -> int:
        """Stable structural hash (validates first): equal for graphs built the same way.

        Returns
        -------
        int
            The hash.
        """
        self.validate()
        return serialize.graph_key(self)

    def to_json(self) -> str:
        """The graph as JSON (tensors, nodes, attributes, uids, dtypes); see Graph.from_json.

        Returns
        -------
        str
            The graph as JSON (tensors, nodes, attributes, uids, dtypes).
        """
        return serialize.to_json(self)

    def serialize(self) -> str:
        """cudnn-frontend spelling of :meth:`to_json`.

        Returns
        -------
        str
            Cudnn-frontend spelling of :meth:`to_json`.
        """
        return self.to_json()

    @classmethod
    def from_json(cls, text: str | bytes, handle: Handle | None = None) -> Graph:
        """Rebuild a graph from :meth:`to_json` output.

        Parameters
        ----------
        text : str or bytes
            A document of :meth:`serialize` / :meth:`to_json`.
        handle : Handle, optional
            The Handle to use (default: the graph's).

        Returns
        -------
        Graph
            This graph, holding the document's tensors and nodes.
        """
        return serialize.from_json(text, handle, cls)

    def _deserialize_into(self, *args: Any, **kwargs: Any) -> None:
        """cudnn-frontend's ``g.deserialize(data)`` / ``g.deserialize(handle, data)`` (keywords
        ``pyobj``, ``handle_``): this graph becomes the document's graph (name, types,
        tensors, nodes, uids) and its plans are built, so ``execute`` can follow as it does on
        a deserialized cuDNN graph.

        The document is read into a new graph first: a malformed one leaves this graph as
        it was.
        """
        try:
            handle, data = (_handle_and_data if len(args) + len(kwargs) == 2 else _data_only)(
                *args, **kwargs)
        except TypeError as exc:
            raise ArgumentError(f"deserialize takes (pyobj) or (handle_, pyobj): {exc}; pyobj "
                                f"is what serialize()/to_json() returned") from None
        handle = check_handle(handle, "deserialize handle")
        source = serialize.from_json(data, None, type(self))
        self.name = source.name
        for what in ("io_data_type", "intermediate_data_type", "compute_data_type"):
            setattr(self, what, getattr(source, what))
        self.nodes, self.all_tensors, self.tensors = source.nodes, source.all_tensors, {}
        for t in self.all_tensors:
            t._graph = self
        if handle is not None:
            self._handle = handle
        self._changed()
        self.build()

    #: On a graph, cudnn-frontend's in-place ``deserialize([handle,] data)`` (plans built);
    #: on the class, ``Graph.deserialize(text, handle=None)`` is :meth:`from_json`.
    deserialize = _ClassOrInstance("from_json", "_deserialize_into")

    def __repr__(self) -> str:
        return pictures.graph_text(self)

    def _repr_svg_(self) -> str:
        """Jupyter's picture of the graph (see :mod:`hipdnn.ir.pictures`)."""
        return pictures.graph_svg(self)

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the picture and a table of the tensors."""
        return pictures.graph_html(self)

    def __enter__(self) -> Graph:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None and self._high_level.finish():
            return
        self.close()


for _ops in (GraphOps, MathOps, NormOps, MatmulOps):
    for _op in [m for m in vars(_ops) if not m.startswith("_")]:
        setattr(Graph, _op, accepting_framework_tensors(getattr(_ops, _op)))
del _ops, _op


@contextlib.contextmanager
def graph_context(handle: Handle | None, name: str = "cudnn_graph",
                  io_data_type: Any = DataType.HALF,
                  intermediate_data_type: Any = DataType.FLOAT,
                  compute_data_type: Any = DataType.FLOAT,
                  **kwargs: Any) -> Iterator[tuple[Graph, list[Any]]]:
    """cudnn-frontend's ``cudnn.graph(handle, ...)`` context manager: yields ``(graph, [])``.

    The graph is not built or closed on exit (use :func:`hipdnn.jit` to build it). Note the
    defaults: io HALF, intermediate and compute FLOAT, as in cudnn-frontend.
    """
    yield Graph(name, io_data_type, intermediate_data_type, compute_data_type, handle,
                **kwargs), []
