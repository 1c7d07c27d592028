"""The planner of a :class:`hipdnn.Graph`: the staged pipeline, hipDNN's engine API, the plans.

``validate -> build_operation_graph -> create_execution_plans -> check_support -> build_plans
-> get_workspace_size -> execute``; ``build()`` runs them all. Engines come from the registry,
ranked by ``Engine.rank``; a graph no engine supports raises GraphNotSupportedError listing every
engine's reason. Built plans are shared through :mod:`hipdnn.pipeline.plan_cache`.
"""

from __future__ import annotations

import json
import operator
import pickle
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from hipdnn.backend.engine import Engine, ExecutionPlan, TransientReason
from hipdnn.backend.knobs import Knob, KnobSettings, KnobValue, resolve_knob_settings
from hipdnn.backend.registry import registry
from hipdnn.core.errors import (
    ArgumentError,
    EngineError,
    GraphChangedError,
    GraphNotSupportedError,
    GraphStateError,
    HipdnnError,
    PlanClosedError,
    PlanIndexError,
)
from hipdnn.core.handle import check_handle
from hipdnn.core.logs import logger, warn_fallback
from hipdnn.core.progress import Progress
from hipdnn.core.types import BuildPlanPolicy, DataType, HeurMode, to_enum, to_int
from hipdnn.engines import load_errors
from hipdnn.ir import serialize
from hipdnn.ir.graph_data import GraphData
from hipdnn.ir.validation import (
    ValidatedStructure,
    check_heur_modes,
    structure_signature,
    validate_graph,
)
from hipdnn.ir.view import GraphView
from hipdnn.pipeline.plan_cache import plan_cache
from hipdnn.pipeline.plan_store import PlanStore, knobs_from_json, knobs_to_json, plan_store

if TYPE_CHECKING:
    from hipdnn.core.handle import Handle
    from hipdnn.pipeline.executor import Executor

_INDEX_LIMIT = 1 << 32  # ints below are engine indices (ids are 64-bit hashes)

__all__ = ["Planner", "plan_index"]


def plan_index(index: Any, count: int, what: str, of: str) -> int:
    """``index`` as an int in ``range(count)``: ArgumentError for a non-integer (bool and str
    included), PlanIndexError when out of range (negative indices too: they would silently pick
    a plan from the end)."""
    try:  # a one-element numpy array has __index__ and raises TypeError from it
        i = None if isinstance(index, bool) else operator.index(index)
    except TypeError:
        i = None
    if i is None:
        raise ArgumentError(f"{what}: index {index!r} ({type(index).__name__}) is not an int; "
                            f"valid: an int in 0..{count - 1} ({count} {of})"
                            if count else f"{what}: index {index!r} is not an int")
    if not 0 <= i < count:
        valid = f"an int in 0..{count - 1}" if count else "none"
        raise PlanIndexError(f"{what}: index {i} is out of range; valid: {valid} ({count} {of})")
    return i


class PlannedGraph(GraphData, Protocol):
    """What the planner reads of its graph (:class:`hipdnn.Graph` is one): its data, its
    handle (``_handle`` is None until the default one is taken) and ``validate()``."""

    _handle: Handle | None

    @property
    def handle(self) -> Handle: ...

    def validate(self) -> object: ...



class Planner:
    """Turns a graph's validated structure into plans, and owns them.

    Owned by one :class:`~hipdnn.graph.graph.Graph` (``graph._planner``), which delegates every
    pipeline stage and the engine, knob and plan API to it (the public docs are on the Graph's
    methods). It reads the graph (name, handle, tensors, nodes, validation) and tells the
    graph's executor when the plans change (:meth:`Executor.forget <hipdnn.pipeline.executor.Executor.
    forget>`, :meth:`~hipdnn.pipeline.executor.Executor.prepare`). Its state:

    * ``revision``: bumped by :meth:`changed` (every setter of the graph, its tensors and
      nodes); ``built_revision`` is the revision the plans were built at, so a plan of an
      edited graph raises GraphChangedError.
    * ``validated``: the graph's last successful validation (set by ``Graph.validate``);
      ``fingerprint``: its structure signature and plan-cache key; ``op_key``: the operation
      graph's key once built (None after an edit); ``view``: that key and the engines' view
      of a private validated copy of the graph (see :meth:`_view`).
    * ``candidates`` (ranked engines with their knobs, None until ranked), ``ext_configs``
      (``create_execution_plan_ext`` selections), ``reasons`` (engine name -> why not used).
    * ``plans``: the built plans, selected first (held in :mod:`hipdnn.pipeline.plan_cache` with the
      graph as holder); ``workspace_limit``; ``closed``.
    """

    def __init__(self, graph: PlannedGraph, executor: Executor) -> None:
        self.graph = graph
        self.executor = executor
        self.op_key: bytes | None = None
        self.fingerprint: tuple[tuple[Any, ...], bytes] | None = None
        self.validated: ValidatedStructure | None = None
        self.candidates: list[tuple[Engine, dict[str, KnobValue] | None]] | None = None
        self.ext_configs: list[tuple[Engine, dict[str, KnobValue]]] = []
        self.reasons: dict[str, str] = {}
        self.plans: list[ExecutionPlan] = []
        self.workspace_limit: int | None = None
        self.view: tuple[bytes, GraphView] | None = None
        #: Plans bound (:meth:`hold_bound`) and the revision they were bound at: held in the
        #: plan cache for the graph, so a binding outlives re-planning and cache eviction.
        self.bound: list[tuple[ExecutionPlan, int]] = []
        self._store_doc: tuple[bytes, str] | None = None
        self.closed = False
        self.revision = 0
        self.built_revision = 0

    def _invalidate(self) -> None:
        """The graph changed: forget the operation graph and candidates (plans stay owned)."""
        self.op_key = None
        self.candidates = None
        self.executor.forget()

    def changed(self) -> None:
        """A setter edited the graph: built plans and bindings are stale until the next build."""
        self.revision += 1
        self._invalidate()

    def _check_current(self) -> None:
        if self.revision != self.built_revision and self.plans:
            raise GraphChangedError(
                f"graph {self.graph.name!r} changed since build() (a tensor, node or graph "
                f"setting was edited); its plans describe the old graph: call build() again")

    def _check_handle_open(self) -> None:
        handle = self.graph._handle
        if handle is not None and handle.closed:
            raise PlanClosedError(f"graph {self.graph.name!r}: its {handle!r} is closed; build "
                                  f"on an open Handle (build_operation_graph(handle) or "
                                  f"Graph(handle=hipdnn.Handle()))")

    def _check_open(self) -> None:
        if self.closed:
            raise PlanClosedError(f"graph {self.graph.name!r} is closed")

    # -- stages ----------------------------------------------------------------------------------
    def build_operation_graph(self, handle: Handle | None = None) -> None:
        """See :meth:`hipdnn.graph.graph.Graph.build_operation_graph`."""
        self._check_open()
        handle = check_handle(handle, "build_operation_graph handle")
        if handle is not None and handle is not self.graph._handle:
            self.graph._handle = handle
            self.executor.forget()
        self._check_handle_open()
        self.op_key = self._structure_key()

    def _structure_key(self) -> bytes:
        """Validate (unless nothing changed since the last validation) and return the plan-cache
        key of the graph's structure: ``graph_to_dict(names=False)``, pickled.

        The graph's :func:`~hipdnn.ir.validation.structure_signature` (everything validation reads
        and writes, names included) is compared with the one right after its last successful
        validation: equal, the graph is served without re-validation. Any edit (tensor setters or
        fields, node attributes, new nodes or tensors, names) changes it and re-validates. A new
        graph of a structure validated before gets the memoized validation and the key computed
        then. Unlike ``Graph.key()`` this is an exact in-process key (no hash, not stable across runs).
        """
        if self.fingerprint is not None:
            signature, key = self.fingerprint
            if structure_signature(self.graph) == signature:
                return key
        self.fingerprint = None
        self.graph.validate()
        record = self.validated
        if record is not None and record.plan_key is not None:
            key = record.plan_key
        else:
            key = self._pickled_structure()
            if record is not None:
                record.plan_key = key
        if record is not None:
            self.fingerprint = (record.signature, key)
        return key

    def _pickled_structure(self) -> bytes:
        doc = serialize.graph_to_dict(self.graph, names=False)
        try:
            return pickle.dumps(doc, protocol=5)
        except Exception:  # an attribute pickle refuses: its repr is exact enough for a key
            return repr(doc).encode()

    def _graph_key(self) -> bytes:
        if self.op_key is None:
            self.build_operation_graph()
        assert self.op_key is not None
        return self.op_key

    def _support(self, engine: Engine) -> str | None:
        """The engine's answer for this graph and Handle: cached when it is one (None or a
        plain reason); a :class:`~hipdnn.backend.engine.TransientReason` (a call failed before
        the engine could answer) or an error raised by the engine is reported, not cached,
        so the next build asks again."""
        ck = (self._graph_key(), engine.cache_token, "support", self.graph.handle.serial)
        found, reason = plan_cache.answer(ck)
        if found:
            return reason
        stored, reason = self._stored_answers(engine)
        if stored:  # the plan store answered for the engine: it is not asked
            plan_cache.store_answer(ck, reason)
            return reason
        try:
            reason = engine.check_support(self._view(), self.graph.handle)
        except HipdnnError as exc:
            return TransientReason(f"{type(exc).__name__}: {exc}")
        if not isinstance(reason, TransientReason):
            plan_cache.store_answer(ck, reason)
            self._keep_support(engine, reason)
        return reason

    def _applicable(self) -> list[Engine]:
        self.reasons = {}
        ok = []
        for engine in registry().values():
            reason = self._support(engine)
            if reason is None:
                ok.append(engine)
            else:
                self.reasons[engine.name] = reason
        return ok

    def _not_supported(self, what: str = "is not supported by any engine") -> GraphNotSupportedError:
        reasons = dict(self.reasons)
        for mod, err in load_errors.items():
            reasons.setdefault(mod, f"could not be imported: {err}")
        if not reasons:
            reasons["(registry)"] = "no engines are registered"
        double = [t.name for t in self.graph.all_tensors
                  if t.data_type is not None and int(t.data_type) == int(DataType.DOUBLE)]
        if double:
            reasons["(hint)"] = (f"tensor(s) {', '.join(map(repr, double))} are DOUBLE (e.g. "
                                 f"tensor_like() of a float64 array): cast the arrays with "
                                 f"a.astype(np.float32) before tensor_like(), or call "
                                 f"set_data_type(hipdnn.DataType.FLOAT)")
        return GraphNotSupportedError(f"graph {self.graph.name!r} {what}:", reasons)

    def create_execution_plans(self, modes: Sequence[HeurMode] | HeurMode | None = None) -> None:
        """See :meth:`hipdnn.graph.graph.Graph.create_execution_plans`."""
        self._check_open()
        check_heur_modes(modes)
        self.ext_configs = []
        self.candidates = [(e, None) for e in self._applicable()]
        if not self.candidates:
            raise self._not_supported()

    def check_support(self) -> dict[str, str | None]:
        """See :meth:`hipdnn.graph.graph.Graph.check_support`."""
        self._check_open()
        if self.candidates is None:
            self.create_execution_plans()
        if not self.candidates:
            raise self._not_supported()
        return self.engine_reasons()

    def engine_reasons(self) -> dict[str, str | None]:
        """See :meth:`hipdnn.graph.graph.Graph.engine_reasons`."""
        self._check_open()
        if self.candidates is None and not self.reasons:
            self._applicable()
        return {e.name: self.reasons.get(e.name) for e in registry().values()}

    def _log_choice(self) -> None:
        """INFO: the chosen plan and why each higher-ranked engine was not used; the warning
        when MIOPEN_ENGINE was passed over on a machine that has a GPU or the library."""
        chosen = self.plans[0]
        above = []
        for engine in registry().values():
            if engine is chosen.engine:
                break
            above.append((engine.name, self.reasons.get(engine.name, "not tried")))
        if logger.isEnabledFor(20):
            lines = [f"graph {self.graph.name!r}: built plan {chosen.name} on {chosen.engine.name}"]
            lines += [f"  {name} not used: {why}" for name, why in above]
            logger.info("\n".join(lines))
            logger.debug("graph %r: plan %r runs %s", self.graph.name, chosen.name, chosen.describe())
        miopen = dict(above).get("MIOPEN_ENGINE")
        if miopen is not None and not self.ext_configs and not miopen.startswith("deselected"):
            warn_fallback(chosen.engine.name, miopen)

    def deselect_engines(self, names: Sequence[str | int] | str | int) -> None:
        """See :meth:`hipdnn.graph.graph.Graph.deselect_engines`."""
        items = [names] if isinstance(names, (str, int)) else names
        if isinstance(names, bytes) or not isinstance(items, (list, tuple, set, frozenset)) or \
                not all(isinstance(n, (str, int)) and not isinstance(n, bool) for n in items):
            raise ArgumentError(f"deselect_engines: {names!r:.60} is not an engine name or id; "
                                f"valid: a str name or int id, or a list of them (registered: "
                                f"{[e.name for e in registry().values()]})")
        drop = set(items)
        if self.candidates is None:
            self.create_execution_plans()
        assert self.candidates is not None
        for engine, _ in self.candidates:
            if engine.name in drop or engine.engine_id in drop:
                self.reasons[engine.name] = "deselected by deselect_engines()"
        self.candidates = [c for c in self.candidates
                            if c[0].name not in drop and c[0].engine_id not in drop]

    def deselect_workspace_greater_than(self, workspace: int | None) -> None:
        """See :meth:`hipdnn.graph.graph.Graph.deselect_workspace_greater_than`."""
        if workspace is None:
            self.workspace_limit = None
            return
        self.workspace_limit = to_int(workspace, "deselect_workspace_greater_than workspace",
                                       minimum=0)
        kept = []
        for plan in self.plans:
            if self._fits(plan):
                kept.append(plan)
            else:
                plan_cache.release(plan, self.graph)
        if len(kept) != len(self.plans):
            self.plans = kept
            self.executor.forget()

    def _fits(self, plan: ExecutionPlan) -> bool:
        limit = self.workspace_limit
        if limit is None or plan.workspace_size <= limit:
            return True
        self.reasons[plan.engine.name] = (
            f"plan {plan.name} needs a workspace of {plan.workspace_size} bytes, more than the "
            f"{limit} bytes allowed by deselect_workspace_greater_than()")
        return False

    def build_plans(self, policy: BuildPlanPolicy = BuildPlanPolicy.HEURISTICS_CHOICE,
                    progress: bool | None = None) -> None:
        """See :meth:`hipdnn.graph.graph.Graph.build_plans`."""
        self._check_open()
        self._check_handle_open()
        policy = to_enum(BuildPlanPolicy, policy, "build plan policy")
        if self.candidates is None:
            self.create_execution_plans()
        assert self.candidates is not None
        self._release_plans()
        candidates = self.candidates
        with Progress(f"building {self.graph.name!r}", len(candidates), progress) as bar:
            for engine, knobs in candidates:
                bar.step(f"{engine.name} plan (a first MIOpen build compiles its kernels)"
                         if engine.name == "MIOPEN_ENGINE" else f"{engine.name} plan")
                t0 = time.perf_counter()
                try:
                    plan = self._build_one(engine, knobs)
                except (EngineError, GraphNotSupportedError) as exc:
                    self.reasons[engine.name] = f"build_plan failed: {exc}"
                    bar.advance()
                    continue
                bar.advance()
                logger.debug("graph %r: %s plan %r built in %.3f ms", self.graph.name, engine.name,
                              plan.name, (time.perf_counter() - t0) * 1e3)
                if not self._fits(plan):
                    plan_cache.release(plan, self.graph)
                    continue
                self.plans.append(plan)
                if policy == BuildPlanPolicy.HEURISTICS_CHOICE:
                    break
        if not self.plans:
            raise self._not_supported("has no engine that could build a plan")
        self._log_choice()
        self.built_revision = self.revision
        self.executor.prepare()

    def build(self, modes: Sequence[HeurMode] | HeurMode | None = None,
              policy: BuildPlanPolicy = BuildPlanPolicy.HEURISTICS_CHOICE,
              progress: bool | None = None) -> None:
        """See :meth:`hipdnn.graph.graph.Graph.build`."""
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
                         "%.3f ms, build plans %.3f ms", self.graph.name, (t1 - t0) * 1e3,
                         (t2 - t1) * 1e3, (t3 - t2) * 1e3)

    # -- engine and knob API -----------------------------------------------------------------
    def get_engine_count(self) -> int:
        """See :meth:`hipdnn.graph.graph.Graph.get_engine_count`."""
        return len(self._applicable())

    def get_ranked_engine_ids(self) -> list[int]:
        """See :meth:`hipdnn.graph.graph.Graph.get_ranked_engine_ids`."""
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
        """See :meth:`hipdnn.graph.graph.Graph.get_knobs_for_engine`."""
        return list(self._knobs(self._engine(engine_id)))

    def _knobs(self, engine: Engine) -> list[Knob]:
        """The engine's (cached) knob list for this graph; do not mutate it."""
        reason = self._support(engine)
        if reason is not None:
            raise GraphNotSupportedError(f"engine {engine.name} does not apply to graph "
                                         f"{self.graph.name!r}", {engine.name: reason})
        ck = (self._graph_key(), engine.cache_token, "knobs", self.graph.handle.serial)
        knobs: list[Knob] = plan_cache.answer_or(
            ck, lambda: list(engine.get_knobs(self._view(), self.graph.handle)))
        return knobs

    def _resolve_knobs(self, engine: Engine,
                       settings: KnobSettings) -> dict[str, KnobValue]:
        return resolve_knob_settings(self._knobs(engine), settings, engine.name, self.graph.name)

    def create_execution_plan_ext(self, engine_id: int | str,
                                  knob_settings: KnobSettings = None) -> None:
        """See :meth:`hipdnn.graph.graph.Graph.create_execution_plan_ext`."""
        self._check_open()
        engine = self._engine(engine_id)
        values = self._resolve_knobs(engine, knob_settings)
        self.ext_configs.append((engine, values))
        self.candidates = [(e, dict(k)) for e, k in self.ext_configs]

    def create_execution_plan(self, engine_id: int | str,
                              knob_settings: KnobSettings = None) -> None:
        """See :meth:`hipdnn.graph.graph.Graph.create_execution_plan`."""
        self.create_execution_plan_ext(engine_id, knob_settings)

    # -- the persistent plan store ---------------------------------------------------------------
    def _store_graph(self) -> str:
        """The graph's structure as the plan store keys it: graph_to_dict(names=False) as
        canonical JSON (stable across processes, unlike the in-process pickled key)."""
        key = self._graph_key()
        if self._store_doc is None or self._store_doc[0] != key:
            doc = serialize.graph_to_dict(self.graph, names=False)
            self._store_doc = (key, json.dumps(doc, sort_keys=True, separators=(",", ":"),
                                               default=repr))
        return self._store_doc[1]

    def _store_for(self, engine: Engine) -> tuple[PlanStore, str] | None:
        """(store, the engine's token) when the plan store is on and the engine keeps plans."""
        store = plan_store()
        if store is None:
            return None
        try:
            token = engine.store_token(self.graph.handle)
        except Exception:  # an engine that cannot say now: nothing stored or read
            return None
        return None if token is None else (store, token)

    def _stored_answers(self, engine: Engine) -> tuple[bool, str | None]:
        """(True, answer) when the plan store holds this engine's support answer for the graph
        (and, when it is supported and a plan was built, its knob list, then served as the
        engine's knob answer): the engine is not asked (for MIOpen: no solution enumeration)."""
        kept = self._store_for(engine)
        if kept is None:
            return False, None
        store, token = kept
        found = store.get(store.key("answers", engine.name, token, self._store_graph()))
        if not isinstance(found, dict) or "support" not in found:
            return False, None
        reason = found["support"]
        if reason is not None:
            return (True, reason) if isinstance(reason, str) else (False, None)
        if found.get("knobs") is not None:
            try:
                knobs = knobs_from_json(found["knobs"])
            except ValueError:
                return False, None
            plan_cache.store_answer((self._graph_key(), engine.cache_token, "knobs",
                                     self.graph.handle.serial), knobs)
        return True, None

    def _keep_support(self, engine: Engine, reason: str | None) -> None:
        """Write an engine's definitive support answer to the plan store (knobs come with the
        first plan built; never raises)."""
        kept = self._store_for(engine)
        if kept is not None:
            store, token = kept
            store.put(store.key("answers", engine.name, token, self._store_graph()),
                      {"support": reason, "knobs": None}, kind="answers", engine=engine.name,
                      token=token)

    def _plan_key(self, store: PlanStore, engine: Engine, token: str,
                  items: tuple[Any, ...]) -> str:
        return store.key("plan", engine.name, token, self._store_graph(), [list(i) for i in items])

    def _build_stored(self, engine: Engine, values: dict[str, KnobValue],
                      items: tuple[Any, ...]) -> ExecutionPlan | None:
        """The plan the store's decision describes, or None (no entry, or the engine cannot
        apply it any more: then the planner builds afresh and the entry is rewritten)."""
        kept = self._store_for(engine)
        if kept is None:
            return None
        store, token = kept
        decision = store.get(self._plan_key(store, engine, token, items))
        if not isinstance(decision, dict):
            return None
        try:
            plan = engine.build_from_decision(self._view(), dict(values), self.graph.handle,
                                              decision)
        except HipdnnError as exc:
            plan = None
            logger.info("graph %r: %s could not use its stored decision (%s); building afresh",
                        self.graph.name, engine.name, exc)
        if plan is not None:
            logger.debug("graph %r: %s plan %r from the plan store %s", self.graph.name,
                         engine.name, plan.name, store.directory)
        return plan

    def _keep(self, engine: Engine, plan: ExecutionPlan, items: tuple[Any, ...]) -> None:
        """Write the engine's decision and answers to the plan store (never raises)."""
        kept = self._store_for(engine)
        if kept is None:
            return
        store, token = kept
        try:
            decision = engine.plan_decision(plan)
            if decision is None:
                return
            knobs = knobs_to_json(self._knobs(engine))
        except Exception as exc:  # the store must never break a build
            logger.info("graph %r: %s plan not kept in the plan store: %s", self.graph.name,
                        engine.name, exc)
            return
        if store.put(self._plan_key(store, engine, token, items), decision, kind="plan",
                     engine=engine.name, token=token):
            store.put(store.key("answers", engine.name, token, self._store_graph()),
                      {"support": None, "knobs": knobs}, kind="answers", engine=engine.name,
                      token=token)

    def _build_one(self, engine: Engine, knobs: dict[str, KnobValue] | None) -> ExecutionPlan:
        graph_key, token, serial = self._graph_key(), engine.cache_token, self.graph.handle.serial
        if knobs is None:  # the engine's defaults for this structure, remembered with its knobs
            def defaults() -> tuple[dict[str, KnobValue], tuple[Any, ...]]:
                values = self._resolve_knobs(engine, None)
                return values, tuple(sorted(values.items()))

            values, items = plan_cache.answer_or((graph_key, token, "defaults", serial), defaults)
        else:
            values, items = knobs, tuple(sorted(knobs.items()))
        ck = (graph_key, token, items, serial)
        plan = plan_cache.acquire(ck, self.graph)
        if plan is None:
            plan = self._build_stored(engine, values, items)
            if plan is None:
                plan = engine.build_plan(self._view(), dict(values), self.graph.handle)
                if plan.provisional:  # chosen after a failure that may pass: ask again next time
                    logger.info("graph %r: %s plan %r kept for this graph only: %s",
                                self.graph.name, engine.name, plan.name, plan.provisional)
                    plan_cache.hold(plan, self.graph)
                    return plan
                self._keep(engine, plan, items)
            plan_cache.insert(ck, plan, self.graph)
        return plan

    def _view(self) -> GraphView:
        """What engines are given (check_support, get_knobs, build_plan): the frozen view of a
        validated private copy of the graph, one per operation-graph key, made when an engine
        is first asked about that key (answers and plans served from the plan cache need none).

        Private: no user graph holds its nodes and tensors, so an engine never sees later edits
        of the user's graph, and a cached plan (shared by every graph of the same key) never
        describes a graph edited since. The copy holds no Handle (engines are given it), so a
        cached plan never keeps a dropped Handle alive."""
        key = self._graph_key()
        if self.view is None or self.view[0] != key:
            snap = serialize.from_dict(serialize.graph_to_dict(self.graph), None, type(self.graph))
            snap.tensors = validate_graph(snap, memo=False)  # a private one-off: not memoized
            self.view = (key, GraphView.of(snap))
        return self.view[1]

    def build_plan_at_index(self, index: int) -> None:
        """See :meth:`hipdnn.graph.graph.Graph.build_plan_at_index`."""
        self._check_open()
        if self.candidates is None:
            self.create_execution_plans()
        assert self.candidates is not None
        index = plan_index(index, len(self.candidates), "build_plan_at_index",
                           "candidate(s) (create_execution_plans ranked them; "
                           "get_engine_count() tells how many)")
        if self.revision != self.built_revision:  # stale plans of the graph before an edit
            self._release_plans()
        engine, knobs = self.candidates[index]
        plan = self._build_one(engine, knobs)
        if self._fits(plan):
            self.plans.append(plan)
        else:
            plan_cache.release(plan, self.graph)
        self.built_revision = self.revision
        self.executor.prepare()

    def get_execution_plan_count(self) -> int:
        """See :meth:`hipdnn.graph.graph.Graph.get_execution_plan_count`."""
        return len(self.plans)

    def plan(self, index: int = 0, what: str = "plan index") -> ExecutionPlan:
        """Built plan ``index`` of the current graph (selected: 0); raises when the graph is
        closed, edited since build() or has no plans, PlanIndexError for a bad index."""
        self._check_open()
        self._check_current()
        if not self.plans:
            raise GraphStateError(f"graph {self.graph.name!r} has no built plan: call build() or "
                                  f"build_plans() first")
        if index == 0 and type(index) is int:
            return self.plans[0]
        return self.plans[plan_index(index, len(self.plans), what, "built plan(s)")]

    def get_execution_plan_engine_id(self) -> int:
        """See :meth:`hipdnn.graph.graph.Graph.get_execution_plan_engine_id`."""
        return self.plan(0).engine.engine_id

    def get_plan_name(self) -> str:
        """See :meth:`hipdnn.graph.graph.Graph.get_plan_name`."""
        return self.plan(0).name

    def get_plan_name_at_index(self, index: int) -> str:
        """See :meth:`hipdnn.graph.graph.Graph.get_plan_name_at_index`."""
        return self.plan(index, "get_plan_name_at_index").name

    def get_workspace_size_plan_at_index(self, index: int) -> int:
        """See :meth:`hipdnn.graph.graph.Graph.get_workspace_size_plan_at_index`."""
        return self.plan(index, "get_workspace_size_plan_at_index").workspace_size

    def get_workspace_size(self) -> int:
        """See :meth:`hipdnn.graph.graph.Graph.get_workspace_size`."""
        self.plan(0)
        return max(p.workspace_size for p in self.plans)

    def get_engine_and_knobs_at_index(self, index: int) -> tuple[int, dict[str, KnobValue]]:
        """See :meth:`hipdnn.graph.graph.Graph.get_engine_and_knobs_at_index`."""
        plan = self.plan(index, "get_engine_and_knobs_at_index")
        return plan.engine.engine_id, dict(plan.knobs)

    def select_plan(self, index: int) -> None:
        """See :meth:`hipdnn.graph.graph.Graph.select_plan`."""
        plan = self.plan(index, "select_plan")
        self.plans.remove(plan)
        self.plans.insert(0, plan)
        self.executor.forget()

    # -- ownership -----------------------------------------------------------------------------
    def _release_plans(self) -> None:
        self.executor.forget()
        plans, self.plans = self.plans, []
        for plan in plans:
            plan_cache.release(plan, self.graph)
        if self.bound and self.revision != self.built_revision:
            self._release_bound(self.revision)

    def hold_bound(self, plan: ExecutionPlan) -> None:
        """A binding of ``plan`` was made: the graph holds the plan (once per plan and
        revision) until it is closed or edited and built again. A binding made before a
        re-planning (``create_execution_plan_ext`` + ``build_plans``) keeps running its plan
        however many unrelated builds evict it from the plan cache."""
        revision = self.revision
        if not any(p is plan and r == revision for p, r in self.bound):
            plan_cache.hold(plan, self.graph)
            self.bound.append((plan, revision))

    def _release_bound(self, below: int | None = None) -> None:
        """Drop the holds of bindings made before revision ``below`` (every one when None):
        such bindings refuse to run (GraphChangedError, or the graph is closed)."""
        keep = []
        for plan, revision in self.bound:
            if below is None or revision < below:
                plan_cache.release(plan, self.graph)
            else:
                keep.append((plan, revision))
        self.bound = keep

    def close(self) -> None:
        """See :meth:`hipdnn.graph.graph.Graph.close`."""
        if self.closed:
            return
        self.closed = True
        self._release_plans()
        self._release_bound()

