"""The staged pipeline and hipDNN's engine API of :class:`hipdnn.Graph` (mixin).

``validate -> build_operation_graph -> create_execution_plans -> check_support -> build_plans
-> get_workspace_size -> execute``; ``build()`` runs them all. Engines come from the registry,
ranked by ``Engine.rank``; a graph no engine supports raises GraphNotSupportedError listing every
engine's reason. Built plans are shared through :mod:`hipdnn.plan_cache`.
"""

from __future__ import annotations

import operator
import pickle
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hipdnn import serialize
from hipdnn.engines import load_errors
from hipdnn.engines.base import Engine, ExecutionPlan, Knob, KnobValue
from hipdnn.engines.engine_registry import registry
from hipdnn.errors import (
    ArgumentError,
    EngineError,
    GraphChangedError,
    GraphNotSupportedError,
    GraphStateError,
    HipdnnError,
    PlanClosedError,
    PlanIndexError,
)
from hipdnn.graph_view import GraphView
from hipdnn.handle import check_handle
from hipdnn.logs import logger, warn_fallback
from hipdnn.plan_cache import plan_cache
from hipdnn.progress import Progress
from hipdnn.types import BuildPlanPolicy, DataType, HeurMode, to_enum, to_int
from hipdnn.validation import (
    KnobSettings,
    ValidatedStructure,
    check_heur_modes,
    resolve_knob_settings,
    structure_signature,
    validate_graph,
)

if TYPE_CHECKING:
    from hipdnn.graph import Graph
    from hipdnn.graph_exec import Executor
    from hipdnn.handle import Handle

_INDEX_LIMIT = 1 << 32  # ints below are engine indices (ids are 64-bit hashes)

__all__ = ["GraphPlans"]


def plan_index(index: Any, count: int, what: str, of: str) -> int:
    """``index`` as an int in ``range(count)``: ArgumentError for a non-integer (bool and str
    included), PlanIndexError when out of range (negative indices too: they would silently pick
    a plan from the end)."""
    if isinstance(index, bool) or not hasattr(index, "__index__"):
        raise ArgumentError(f"{what}: index {index!r} ({type(index).__name__}) is not an int; "
                            f"valid: an int in 0..{count - 1} ({count} {of})"
                            if count else f"{what}: index {index!r} is not an int")
    i = operator.index(index)
    if not 0 <= i < count:
        valid = f"an int in 0..{count - 1}" if count else "none"
        raise PlanIndexError(f"{what}: index {i} is out of range; valid: {valid} ({count} {of})")
    return i


class GraphPlans:
    """Mixin: pipeline stages, engine/knob API, plan ownership."""

    if TYPE_CHECKING:
        name: str
        _handle: Handle | None
        _executor: Executor
        @property
        def handle(self) -> Handle: ...
        def validate(self) -> Graph: ...
        def key(self) -> int: ...

    def _init_plans(self) -> None:
        self._key: bytes | None = None
        self._fingerprint: tuple[tuple[Any, ...], bytes] | None = None
        self._validated: ValidatedStructure | None = None
        self._candidates: list[tuple[Engine, dict[str, KnobValue] | None]] | None = None
        self._ext_configs: list[tuple[Engine, dict[str, KnobValue]]] = []
        self._reasons: dict[str, str] = {}
        self._plans: list[ExecutionPlan] = []
        self._workspace_limit: int | None = None
        self._closed = False
        #: bumped by every setter of the graph, its tensors and nodes (see _changed)
        self._revision = 0
        self._built_revision = 0

    def _forget_bindings(self) -> None:
        """Plans, tensors or the handle changed: execute's remembered bindings are stale."""
        self._executor.forget()

    def _invalidate(self) -> None:
        """The graph changed: forget the operation graph and candidates (plans stay owned)."""
        self._key = None
        self._candidates = None
        self._forget_bindings()

    def _changed(self) -> None:
        """A setter edited the graph: built plans and bindings are stale until the next build."""
        self._revision += 1
        self._invalidate()

    def _check_current(self) -> None:
        if self._revision != self._built_revision and self._plans:
            raise GraphChangedError(
                f"graph {self.name!r} changed since build() (a tensor, node or graph setting "
                f"was edited); its plans describe the old graph: call build() again")

    def _check_handle_open(self) -> None:
        if self._handle is not None and self._handle.closed:
            raise PlanClosedError(f"graph {self.name!r}: its {self._handle!r} is closed; build "
                                  f"on an open Handle (build_operation_graph(handle) or "
                                  f"Graph(handle=hipdnn.Handle()))")

    def _check_open(self) -> None:
        if self._closed:
            raise PlanClosedError(f"graph {self.name!r} is closed")

    # -- stages ----------------------------------------------------------------------------------
    def build_operation_graph(self, handle: Handle | None = None) -> None:
        """Validate and fix the graph's structure key (cudnn-frontend's operation graph)."""
        self._check_open()
        handle = check_handle(handle, "build_operation_graph handle")
        if handle is not None and handle is not self._handle:
            self._handle = handle
            self._forget_bindings()
        self._check_handle_open()
        self._key = self._structure_key()

    def _structure_key(self) -> bytes:
        """Validate (unless nothing changed since the last validation) and return the plan-cache
        key of the graph's structure: ``graph_to_dict(names=False)``, pickled.

        The graph's :func:`~hipdnn.validation.structure_signature` (everything validation reads
        and writes, names included) is compared with the one right after its last successful
        validation: equal, the graph is served without re-validation. Any edit (tensor setters or
        fields, node attributes, new nodes or tensors, names) changes it and re-validates. A new
        graph of a structure validated before gets the memoized validation and the key computed
        then. Unlike :meth:`key` this is an exact in-process key (no hash, not stable across runs).
        """
        if self._fingerprint is not None:
            signature, key = self._fingerprint
            if structure_signature(self) == signature:  # type: ignore[arg-type]
                return key
        self._fingerprint = None
        self.validate()
        record = self._validated
        if record is not None and record.plan_key is not None:
            key = record.plan_key
        else:
            key = self._pickled_structure()
            if record is not None:
                record.plan_key = key
        if record is not None:
            self._fingerprint = (record.signature, key)
        return key

    def _pickled_structure(self) -> bytes:
        doc = serialize.graph_to_dict(self, names=False)  # type: ignore[arg-type]
        try:
            return pickle.dumps(doc, protocol=5)
        except Exception:  # an attribute pickle refuses: its repr is exact enough for a key
            return repr(doc).encode()

    def _graph_key(self) -> bytes:
        if self._key is None:
            self.build_operation_graph()
        assert self._key is not None
        return self._key

    def _support(self, engine: Engine) -> str | None:
        def check() -> str | None:
            try:
                return engine.check_support(GraphView.of(self), self.handle)
            except HipdnnError as exc:
                return f"{type(exc).__name__}: {exc}"

        ck = (self._graph_key(), engine.cache_token, "support", self.handle.serial)
        return plan_cache.answer_or(ck, check)  # type: ignore[no-any-return,unused-ignore]

    def _applicable(self) -> list[Engine]:
        self._reasons = {}
        ok = []
        for engine in registry().values():
            reason = self._support(engine)
            if reason is None:
                ok.append(engine)
            else:
                self._reasons[engine.name] = reason
        return ok

    def _not_supported(self, what: str = "is not supported by any engine") -> GraphNotSupportedError:
        reasons = dict(self._reasons)
        for mod, err in load_errors.items():
            reasons.setdefault(mod, f"could not be imported: {err}")
        if not reasons:
            reasons["(registry)"] = "no engines are registered"
        double = [t.name for t in getattr(self, "all_tensors", ())
                  if t.data_type is not None and int(t.data_type) == int(DataType.DOUBLE)]
        if double:
            reasons["(hint)"] = (f"tensor(s) {', '.join(map(repr, double))} are DOUBLE (e.g. "
                                 f"tensor_like() of a float64 array): cast the arrays with "
                                 f"a.astype(np.float32) before tensor_like(), or call "
                                 f"set_data_type(hipdnn.DataType.FLOAT)")
        return GraphNotSupportedError(f"graph {self.name!r} {what}:", reasons)

    def create_execution_plans(self, modes: Sequence[HeurMode] | HeurMode | None = None) -> None:
        """Rank the applicable engines.

        ``modes``: a HeurMode, its name or value, or a list of them. Every valid mode (A, B,
        FALLBACK, OPENSOURCE) gives the same ranking, the engines' static ranks, as hipDNN does;
        an unknown mode raises ValidationError listing the valid ones. Raises
        GraphNotSupportedError listing each engine's reason when no engine applies.
        """
        self._check_open()
        check_heur_modes(modes)
        self._ext_configs = []
        self._candidates = [(e, None) for e in self._applicable()]
        if not self._candidates:
            raise self._not_supported()

    def check_support(self) -> dict[str, str | None]:
        """Raise GraphNotSupportedError unless at least one candidate engine remains.

        Returns :meth:`engine_reasons` (cudnn-frontend returns nothing: code ignoring the
        result works the same).
        """
        self._check_open()
        if self._candidates is None:
            self.create_execution_plans()
        if not self._candidates:
            raise self._not_supported()
        return self.engine_reasons()

    def engine_reasons(self) -> dict[str, str | None]:
        """Every registered engine, preferred first: None when it can run this graph (and was
        not deselected or refused while building), else the full reason it was not used."""
        self._check_open()
        if self._candidates is None and not self._reasons:
            self._applicable()
        return {e.name: self._reasons.get(e.name) for e in registry().values()}

    def _log_choice(self) -> None:
        """INFO: the chosen plan and why each higher-ranked engine was not used; the warning
        when MIOPEN_ENGINE was passed over on a machine that has a GPU or the library."""
        chosen = self._plans[0]
        above = []
        for engine in registry().values():
            if engine is chosen.engine:
                break
            above.append((engine.name, self._reasons.get(engine.name, "not tried")))
        if logger.isEnabledFor(20):
            lines = [f"graph {self.name!r}: built plan {chosen.name} on {chosen.engine.name}"]
            lines += [f"  {name} not used: {why}" for name, why in above]
            logger.info("\n".join(lines))
            logger.debug("graph %r: plan %r runs %s", self.name, chosen.name, chosen.describe())
        miopen = dict(above).get("MIOPEN_ENGINE")
        if miopen is not None and not self._ext_configs and not miopen.startswith("deselected"):
            warn_fallback(chosen.engine.name, miopen)

    def deselect_engines(self, names: Sequence[str | int] | str | int) -> None:
        """Drop candidate engines by name or id (cudnn-frontend ``deselect_engines``).

        Call after ``create_execution_plans`` (it is run first when needed) and before
        ``build_plans``. Names that match no candidate are ignored, as in cudnn-frontend.
        """
        items = [names] if isinstance(names, (str, int)) else names
        if isinstance(names, bytes) or not isinstance(items, (list, tuple, set, frozenset)) or \
                not all(isinstance(n, (str, int)) and not isinstance(n, bool) for n in items):
            raise ArgumentError(f"deselect_engines: {names!r:.60} is not an engine name or id; "
                                f"valid: a str name or int id, or a list of them (registered: "
                                f"{[e.name for e in registry().values()]})")
        drop = set(items)
        if self._candidates is None:
            self.create_execution_plans()
        assert self._candidates is not None
        for engine, _ in self._candidates:
            if engine.name in drop or engine.engine_id in drop:
                self._reasons[engine.name] = "deselected by deselect_engines()"
        self._candidates = [c for c in self._candidates
                            if c[0].name not in drop and c[0].engine_id not in drop]

    def deselect_workspace_greater_than(self, workspace: int | None) -> None:
        """Skip plans needing more than ``workspace`` bytes (cudnn-frontend's filter).

        A plan's workspace is known once it is built, so the limit applies in ``build_plans``
        (a candidate whose plan needs more is released and skipped, its reason recorded; with
        HEURISTICS_CHOICE the next candidate is tried) and drops already-built plans now.
        The limit stays until the next call (``None`` removes it).
        """
        if workspace is None:
            self._workspace_limit = None
            return
        self._workspace_limit = to_int(workspace, "deselect_workspace_greater_than workspace",
                                       minimum=0)
        kept = []
        for plan in self._plans:
            if self._fits(plan):
                kept.append(plan)
            else:
                plan_cache.release(plan, self)
        if len(kept) != len(self._plans):
            self._plans = kept
            self._forget_bindings()

    def _fits(self, plan: ExecutionPlan) -> bool:
        limit = self._workspace_limit
        if limit is None or plan.workspace_size <= limit:
            return True
        self._reasons[plan.engine.name] = (
            f"plan {plan.name} needs a workspace of {plan.workspace_size} bytes, more than the "
            f"{limit} bytes allowed by deselect_workspace_greater_than()")
        return False

    def build_plans(self, policy: BuildPlanPolicy = BuildPlanPolicy.HEURISTICS_CHOICE,
                    progress: bool | None = None) -> None:
        """Build the first candidate that builds (HEURISTICS_CHOICE) or every candidate (ALL).

        ``policy`` may also be given by name or value; anything else raises ValidationError.
        ``progress``: a build that takes long (MIOpen compiling kernels on first use, Find 2.0
        tuning) shows what it builds on a terminal or in a notebook; False (or
        ``HIPDNN_PROGRESS=0``) keeps it quiet; see :mod:`hipdnn.progress`.
        """
        self._check_open()
        self._check_handle_open()
        policy = to_enum(BuildPlanPolicy, policy, "build plan policy")
        if self._candidates is None:
            self.create_execution_plans()
        assert self._candidates is not None
        self._release_plans()
        candidates = self._candidates
        with Progress(f"building {self.name!r}", len(candidates), progress) as bar:
            for engine, knobs in candidates:
                bar.step(f"{engine.name} plan (a first MIOpen build compiles its kernels)"
                         if engine.name == "MIOPEN_ENGINE" else f"{engine.name} plan")
                t0 = time.perf_counter()
                try:
                    plan = self._build_one(engine, knobs)
                except (EngineError, GraphNotSupportedError) as exc:
                    self._reasons[engine.name] = f"build_plan failed: {exc}"
                    bar.advance()
                    continue
                bar.advance()
                logger.debug("graph %r: %s plan %r built in %.3f ms", self.name, engine.name,
                              plan.name, (time.perf_counter() - t0) * 1e3)
                if not self._fits(plan):
                    plan_cache.release(plan, self)
                    continue
                self._plans.append(plan)
                if policy == BuildPlanPolicy.HEURISTICS_CHOICE:
                    break
        if not self._plans:
            raise self._not_supported("has no engine that could build a plan")
        self._log_choice()
        self._built_revision = self._revision
        self._executor.prepare()

    def build(self, modes: Sequence[HeurMode] | HeurMode | None = None,
              policy: BuildPlanPolicy = BuildPlanPolicy.HEURISTICS_CHOICE,
              progress: bool | None = None) -> Graph:
        """Run the whole pipeline: validate, build_operation_graph, create_execution_plans,
        check_support, build_plans.

        Unlike cudnn-frontend, where ``build()`` without arguments stops after the operation
        graph, this always builds plans (default heuristics), so ``execute`` can follow.
        ``progress`` is passed to :meth:`build_plans`.
        """
        check_heur_modes(modes)
        to_enum(BuildPlanPolicy, policy, "build plan policy")
        debug = logger.isEnabledFor(10)
        t0 = time.perf_counter()
        self.build_operation_graph()
        t1 = time.perf_counter()
        self.create_execution_plans(modes)
        self.check_support()
        t2 = time.perf_counter()
        self.build_plans(policy, progress)
        if debug:
            t3 = time.perf_counter()
            logger.debug("graph %r build stages: operation graph %.3f ms, engine support "
                         "%.3f ms, build plans %.3f ms", self.name, (t1 - t0) * 1e3,
                         (t2 - t1) * 1e3, (t3 - t2) * 1e3)
        return self  # type: ignore[return-value]

    # -- engine and knob API -----------------------------------------------------------------
    def get_engine_count(self) -> int:
        """Number of engines that can run this graph."""
        return len(self._applicable())

    def get_ranked_engine_ids(self) -> list[int]:
        """Ids of the applicable engines, preferred first."""
        return [e.engine_id for e in self._applicable()]

    def _engine(self, engine_id: int | str) -> Engine:
        """An engine by 64-bit id, by name, or (as cudnn-frontend scripts pass them) by small
        index into :meth:`get_ranked_engine_ids`; an int naming two engines both ways is an
        error."""
        reg = registry()
        exact = [e for eid, e in reg.items() if engine_id in (eid, e.name)]
        if isinstance(engine_id, int) and not isinstance(engine_id, bool) and \
                0 <= engine_id < _INDEX_LIMIT:
            ranked = self._applicable()
            if engine_id < len(ranked):
                if exact and exact[0] is not ranked[engine_id]:
                    raise EngineError(f"{engine_id} is both the id of {exact[0].name} and the "
                                      f"index of {ranked[engine_id].name}; pass the name")
                return ranked[engine_id]
        if exact:
            return exact[0]
        known = ", ".join(f"{e.name} ({eid})" for eid, e in reg.items()) or "none"
        raise EngineError(f"unknown engine id {engine_id!r}; registered engines: {known}; an "
                          f"int below 2**32 is an index below get_engine_count()")

    def get_knobs_for_engine(self, engine_id: int | str) -> list[Knob]:
        """The knobs ``engine_id`` offers for this graph (id, type, default, constraint, help)."""
        return list(self._knobs(self._engine(engine_id)))

    def _knobs(self, engine: Engine) -> list[Knob]:
        """The engine's (cached) knob list for this graph; do not mutate it."""
        reason = self._support(engine)
        if reason is not None:
            raise GraphNotSupportedError(f"engine {engine.name} does not apply to graph "
                                         f"{self.name!r}", {engine.name: reason})
        ck = (self._graph_key(), engine.cache_token, "knobs", self.handle.serial)
        return plan_cache.answer_or(  # type: ignore[no-any-return,unused-ignore]
            ck, lambda: list(engine.get_knobs(GraphView.of(self), self.handle)))

    def _resolve_knobs(self, engine: Engine,
                       settings: KnobSettings) -> dict[str, KnobValue]:
        return resolve_knob_settings(self._knobs(engine), settings, engine.name, self.name)

    def create_execution_plan_ext(self, engine_id: int | str,
                                  knob_settings: KnobSettings = None) -> None:
        """Select ``engine_id`` with ``knob_settings`` (a list of KnobSetting or a dict).

        Settings are checked now: an unknown knob or a value outside its constraint raises
        KnobError naming the knob and the valid values. Calls accumulate, so several
        configurations can be built with BuildPlanPolicy.ALL and compared by autotune().
        """
        self._check_open()
        engine = self._engine(engine_id)
        values = self._resolve_knobs(engine, knob_settings)
        self._ext_configs.append((engine, values))
        self._candidates = [(e, dict(k)) for e, k in self._ext_configs]

    def create_execution_plan(self, engine_id: int | str,
                              knob_settings: KnobSettings = None) -> None:
        """cudnn-frontend's name for :meth:`create_execution_plan_ext` (same arguments)."""
        self.create_execution_plan_ext(engine_id, knob_settings)

    def _build_one(self, engine: Engine, knobs: dict[str, KnobValue] | None) -> ExecutionPlan:
        graph_key, token, serial = self._graph_key(), engine.cache_token, self.handle.serial
        if knobs is None:  # the engine's defaults for this structure, remembered with its knobs
            def defaults() -> tuple[dict[str, KnobValue], tuple[Any, ...]]:
                values = self._resolve_knobs(engine, None)
                return values, tuple(sorted(values.items()))

            values, items = plan_cache.answer_or((graph_key, token, "defaults", serial), defaults)
        else:
            values, items = knobs, tuple(sorted(knobs.items()))
        ck = (graph_key, token, items, serial)
        plan = plan_cache.acquire(ck, self)
        if plan is None:
            plan = engine.build_plan(self._snapshot(), dict(values), self.handle)
            plan_cache.insert(ck, plan, self)
        return plan

    def _snapshot(self) -> GraphView:
        """The immutable view of a validated private copy, for engines: a cached plan, shared
        by every graph of the same key, must not see later edits of the graph it was first
        built from. The copy holds no Handle (engines are given it), so a cached plan never
        keeps a dropped Handle alive."""
        snap = serialize.from_dict(serialize.graph_to_dict(self), None, type(self))  # type: ignore[arg-type]
        snap.tensors = validate_graph(snap, memo=False)  # a private one-off: not memoized
        return GraphView.of(snap)

    def build_plan_at_index(self, index: int) -> None:
        """Build only candidate ``index`` (appended to the built plans unless its workspace
        exceeds the deselect_workspace_greater_than limit)."""
        self._check_open()
        if self._candidates is None:
            self.create_execution_plans()
        assert self._candidates is not None
        index = plan_index(index, len(self._candidates), "build_plan_at_index",
                           "candidate(s) (create_execution_plans ranked them; "
                           "get_engine_count() tells how many)")
        if self._revision != self._built_revision:  # stale plans of the graph before an edit
            self._release_plans()
        engine, knobs = self._candidates[index]
        plan = self._build_one(engine, knobs)
        if self._fits(plan):
            self._plans.append(plan)
        else:
            plan_cache.release(plan, self)
        self._built_revision = self._revision
        self._executor.prepare()

    def get_execution_plan_count(self) -> int:
        """Number of built plans."""
        return len(self._plans)

    def _plan(self, index: int = 0, what: str = "plan index") -> ExecutionPlan:
        self._check_open()
        self._check_current()
        if not self._plans:
            raise GraphStateError(f"graph {self.name!r} has no built plan: call build() or "
                                  f"build_plans() first")
        if index == 0 and type(index) is int:
            return self._plans[0]
        return self._plans[plan_index(index, len(self._plans), what, "built plan(s)")]

    def get_execution_plan_engine_id(self) -> int:
        """Engine id of the selected plan (index 0)."""
        return self._plan(0).engine.engine_id

    def get_plan_name(self) -> str:
        """Name of the selected plan (index 0)."""
        return self._plan(0).name

    def get_plan_name_at_index(self, index: int) -> str:
        """Name of built plan ``index``."""
        return self._plan(index, "get_plan_name_at_index").name

    def get_workspace_size_plan_at_index(self, index: int) -> int:
        """Workspace bytes of built plan ``index``."""
        return self._plan(index, "get_workspace_size_plan_at_index").workspace_size

    def get_workspace_size(self) -> int:
        """Workspace bytes that fit every built plan (the selected plan's when only one)."""
        self._plan(0)
        return max(p.workspace_size for p in self._plans)

    def get_engine_and_knobs_at_index(self, index: int) -> tuple[int, dict[str, KnobValue]]:
        """(engine id, knob values) of built plan ``index``: persist an autotuned choice and
        replay it with ``create_execution_plan_ext(engine_id, knobs)``."""
        plan = self._plan(index, "get_engine_and_knobs_at_index")
        return plan.engine.engine_id, dict(plan.knobs)

    def select_plan(self, index: int) -> None:
        """Make built plan ``index`` the one ``execute`` runs (index 0)."""
        plan = self._plan(index, "select_plan")
        self._plans.remove(plan)
        self._plans.insert(0, plan)
        self._forget_bindings()

    @property
    def plans(self) -> list[ExecutionPlan]:
        """The built plans, selected first."""
        return list(self._plans)

    # -- ownership -----------------------------------------------------------------------------
    def _release_plans(self) -> None:
        self._forget_bindings()
        plans, self._plans = self._plans, []
        for plan in plans:
            plan_cache.release(plan, self)

    def close(self) -> None:
        """Release the graph's plans (idempotent); later pipeline calls raise PlanClosedError."""
        if self._closed:
            return
        self._closed = True
        self._release_plans()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed
