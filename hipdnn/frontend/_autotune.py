"""hipdnn_frontend's engine discovery, plan specs and autotuning, over the native graph.

Two ways to get candidates, as upstream: compiled plans (``build_plans(BuildPlanPolicy.ALL)``,
then ``autotune(handle, pack, workspace)``) or plan specs (``add_engine*()`` after
``build_operation_graph``, then ``autotune(..., workspace_size=get_estimated_max_workspace_size())``,
which builds them). Each candidate is run ``warmup_iterations`` times, then timed per
``strategy``; the fastest becomes the plan ``execute`` runs. Times are host wall clock around
synchronised runs. EXHAUSTIVE mode sets ``global.benchmarking`` = 1 on specs of engines that
have it (MIOPEN_ENGINE: MIOpen's Find search, results kept in its user database).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hipdnn.backend.engine import ExecutionPlan, fnv1a_64
from hipdnn.backend.knobs import BENCHMARKING_KNOB, WORKSPACE_SIZE_LIMIT_KNOB, knob_setting_pairs
from hipdnn.backend.knobs import NO_WORKSPACE_LIMIT as NO_LIMIT
from hipdnn.backend.knobs import Knob as NativeKnob
from hipdnn.backend.knobs import KnobSetting as NativeKnobSetting
from hipdnn.core.errors import HipdnnError
from hipdnn.core.handle import Handle as NativeHandle
from hipdnn.core.types import BuildPlanPolicy, HeurMode
from hipdnn.engines import registry
from hipdnn.frontend._enums import AutotuneStrategy, PrimingFailurePolicy, TuneMode
from hipdnn.frontend._errors import Error, ErrorCode, error_from
from hipdnn.frontend._graph_run import GraphRun
from hipdnn.frontend._handle import native_handle, optional_handle

__all__ = [
    "AutotuneConfig",
    "AutotuneResult",
    "AutotuneStorageConfig",
    "EngineConfigInfo",
    "EngineSweepSpec",
    "EngineVariant",
    "GraphAutotune",
    "Knob",
    "KnobSetting",
    "KnobSweepAxis",
]

_NEED_OP_GRAPH = "build_operation_graph(handle) has not succeeded on this graph"


class Knob(NativeKnob):
    """An engine knob with upstream's field names (``knob_id``, ``default_value``,
    ``is_deprecated``) and ``validate(setting) -> Error``; made only by the library."""

    @classmethod
    def of(cls, knob: NativeKnob) -> Knob:
        """The frontend view of a native knob (same fields)."""
        return cls(knob.id, knob.value_type, knob.default, knob.constraint, knob.description)

    @property
    def knob_id(self) -> str:
        """The knob's id (native ``id``)."""
        return self.id

    @property
    def default_value(self) -> Any:
        """The default value (native ``default``)."""
        return self.default

    @property
    def is_deprecated(self) -> bool:
        """Always False: no knob here is deprecated."""
        return False

    def validate(self, setting: NativeKnobSetting) -> Error:
        """OK when ``setting`` names this knob with an allowed value."""
        if setting.id != self.id:
            return Error(ErrorCode.INVALID_VALUE, f"setting {setting.id!r} is not knob {self.id!r}")
        try:
            self.check(setting.value)
        except HipdnnError as exc:
            return error_from(exc)
        return Error()


class KnobSetting(NativeKnobSetting):
    """``KnobSetting(knob_id, value)``: the native KnobSetting with upstream's ``knob_id``."""

    @property
    def knob_id(self) -> str:
        """The knob's id (the native field ``id``)."""
        return self.id


@dataclass
class EngineConfigInfo:
    """An engine that can run the graph: id, name, knobs, exhaustive support, workspace
    estimate (the largest workspace its plans may use, when the engine says)."""

    engine_id: int = -1
    engine_name: str = ""
    knobs: list[Knob] = field(default_factory=list)
    supports_exhaustive: bool = False
    estimated_workspace_size: int = 0


@dataclass
class EngineVariant:
    """One plan spec: an engine and explicit knob values ``{knob_id: value}``."""

    engine_id: int = -1
    knob_settings: dict[str, Any] = field(default_factory=dict)


@dataclass
class KnobSweepAxis:
    """One knob and the values a sweep tries."""

    knob_id: str = ""
    values: list[Any] = field(default_factory=list)


@dataclass
class EngineSweepSpec:
    """An engine, knob axes (their Cartesian product is swept) and fixed knob values."""

    engine_id: int = -1
    axes: list[KnobSweepAxis] = field(default_factory=list)
    fixed_settings: dict[str, Any] = field(default_factory=dict)


@dataclass
class AutotuneConfig:
    """How autotune times candidates (upstream's fields and defaults)."""

    mode: TuneMode = TuneMode.STANDARD
    strategy: AutotuneStrategy = AutotuneStrategy.RUN_UNTIL_STABLE
    warmup_iterations: int = 1
    timed_iterations: int = 10
    max_iterations: int = 100
    window_size: int = 3
    stability_threshold: float = 0.05
    engine_id_filter: list[int] = field(default_factory=list)
    priming_failure_policy: PrimingFailurePolicy = PrimingFailurePolicy.ABORT_ON_PRIMING_FAILURE

    def check(self) -> None:
        """RuntimeError naming the first invalid field (upstream's C++ field names)."""
        bad = [("warmupIterations", self.warmup_iterations < 0, ">= 0"),
               ("timedIterations", self.strategy == AutotuneStrategy.FIXED_AVERAGE
                and self.timed_iterations < 1, ">= 1 with FIXED_AVERAGE"),
               ("maxIterations", self.max_iterations < 1, ">= 1"),
               ("windowSize", self.window_size < 2, ">= 2"),
               ("stabilityThreshold", not self.stability_threshold > 0, "> 0")]
        for name, wrong, rule in bad:
            if wrong:
                raise RuntimeError(f"Autotune failed: invalid AutotuneConfig: {name} must be "
                                   f"{rule}")


@dataclass(frozen=True)
class AutotuneResult:
    """One candidate's outcome (read-only)."""

    engine_id: int = -1
    engine_name: str = ""
    knob_settings: list[KnobSetting] = field(default_factory=list)
    min_time_ms: float = 0.0
    avg_time_ms: float = 0.0
    stddev_ms: float = 0.0
    iterations_run: int = 0
    converged: bool = False
    rank: int = -1
    succeeded: bool = False
    error_message: str = ""
    compiled_plan_index: int = -1
    workspace_size: int = 0
    estimated_workspace_size: int = 0
    mode_used: TuneMode = TuneMode.STANDARD
    strategy_used: AutotuneStrategy = AutotuneStrategy.RUN_UNTIL_STABLE
    supports_exhaustive: bool = False
    ran_exhaustive: bool = False
    exhaustive_not_run_reason: str = ""


@dataclass
class AutotuneStorageConfig:
    """Where autotune writes its results as JSON (nothing is written when ``file_path`` is
    empty); ``delete_all_existing_file_content`` replaces the file instead of adding to it."""

    file_path: Path = field(default_factory=lambda: Path(""))
    delete_all_existing_file_content: bool = False


class GraphAutotune(GraphRun):
    """Engine configs, plan specs and autotune, on top of
    :class:`~hipdnn.frontend._graph_run.GraphRun` (whose variant-pack and workspace resolution
    it uses)."""

    def _require_op_graph(self, what: str) -> None:
        if not self._op_graph:
            raise RuntimeError(f"Failed to {what}: {_NEED_OP_GRAPH}")

    # -- discovery --------------------------------------------------------------------------
    def get_engine_configs(self, modes: Sequence[HeurMode] | NativeHandle | None = None,
                           handle: Any = None) -> list[EngineConfigInfo]:
        """Every engine that can run the graph, with its knobs (RuntimeError before
        build_operation_graph). ``handle`` is upstream's optional handle (also accepted as the
        only positional argument); engines are found the same with or without one.

        Parameters
        ----------
        modes : HeurMode or sequence of HeurMode, optional
            Heuristic modes, accepted as cudnn-frontend takes them; every registered engine that
            supports the graph is a candidate, best rank first.
        handle : Handle, optional
            The Handle to use (default: the graph's).

        Returns
        -------
        list of EngineConfigInfo
            Every engine that can run the graph, with its knobs.

        Raises
        ------
        RuntimeError
            Before build_operation_graph.
        """
        if handle is None and isinstance(modes, NativeHandle):
            modes, handle = None, modes
        optional_handle(handle)
        self._require_op_graph("get engine configs")
        out = []
        for engine_id in self._native.get_ranked_engine_ids():
            knobs = [Knob.of(k) for k in self._native.get_knobs_for_engine(engine_id)]
            by_id = {k.id: k for k in knobs}
            limit = by_id.get(WORKSPACE_SIZE_LIMIT_KNOB)
            out.append(EngineConfigInfo(
                engine_id, registry()[engine_id].name, knobs,
                BENCHMARKING_KNOB in by_id, _estimate_of(limit)))
        return out

    def get_knobs_for_engine(self, engine_id: int) -> list[Knob]:
        """The knobs ``engine_id`` offers for this graph (RuntimeError before
        build_operation_graph or for an engine that cannot run it).

        Parameters
        ----------
        engine_id : int or str
            The engine's id (``get_ranked_engine_ids``) or name.

        Returns
        -------
        list of Knob
            The knobs ``engine_id`` offers for this graph.

        Raises
        ------
        RuntimeError
            Before build_operation_graph or for an engine that cannot run it.
        """
        self._require_op_graph("get knobs for engine")
        try:
            return [Knob.of(k) for k in self._native.get_knobs_for_engine(int(engine_id))]
        except HipdnnError as exc:
            raise RuntimeError(f"Failed to get knobs for engine: {exc}") from None

    def get_knob_lookup_for_engine(self, engine_id: int) -> dict[str, Knob]:
        """The same knobs keyed by knob id.

        Parameters
        ----------
        engine_id : int or str
            The engine's id (``get_ranked_engine_ids``) or name.

        Returns
        -------
        dict of str to Knob
            The same knobs keyed by knob id.
        """
        self._require_op_graph("get knob lookup for engine")
        return {k.id: k for k in self.get_knobs_for_engine(engine_id)}

    def _estimate(self, engine_id: int) -> int:
        for cfg in self.get_engine_configs():
            if cfg.engine_id == engine_id:
                return cfg.estimated_workspace_size
        return 0

    def get_estimated_max_workspace_size(self) -> int:
        """The largest workspace estimate over the specs added by add_engine*().

        Returns
        -------
        int
            The largest workspace estimate over the specs added by add_engine*().
        """
        if not self._specs:
            raise RuntimeError("Failed to get estimated max workspace size: no plan specs were "
                               "added; call add_engine*() after build_operation_graph(handle)")
        return max(self._estimate(e) for e, _ in self._specs)

    # -- plan specs -------------------------------------------------------------------------
    def _add(self, what: str, specs: list[tuple[int, Any]]) -> Error:
        """Add plan specs; unlike create_execution_plan_ext, a knob the engine does not offer
        or a value outside its constraint is an error here, as upstream."""
        if not self._op_graph:
            return Error(ErrorCode.INVALID_VALUE, f"{what}(): {_NEED_OP_GRAPH}")
        if not specs:
            return Error(ErrorCode.INVALID_VALUE, f"{what}(): nothing to add (an empty list)")
        try:
            ranked = self._native.get_ranked_engine_ids()
            resolved = []
            for engine_id, values in specs:
                if int(engine_id) not in ranked:
                    return Error(ErrorCode.GRAPH_NOT_SUPPORTED,
                                 f"{what}(): engine {engine_id} cannot run this graph; engines "
                                 f"that can: {ranked}")
                knobs = {k.id: k for k in self._native.get_knobs_for_engine(int(engine_id))}
                checked = {}
                for kid, value in knob_setting_pairs(values, str(engine_id)):
                    if kid not in knobs:
                        return Error(ErrorCode.INVALID_VALUE,
                                     f"{what}(): engine {engine_id} has no knob {kid!r}; its "
                                     f"knobs: {sorted(knobs)}")
                    checked[kid] = knobs[kid].check(value)
                resolved.append((int(engine_id), checked))
        except HipdnnError as exc:
            return error_from(exc)
        self._specs.extend(resolved)
        return Error()

    def add_engine(self, engine_id: int, knob_settings: Sequence[Any] = ()) -> Error:
        """Add one engine (with knob overrides) as a plan spec.

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
        return self._add("add_engine", [(engine_id, knob_settings)])

    def add_engines(self, engine_ids: Sequence[int]) -> Error:
        """Add engines with their default knobs.

        Parameters
        ----------
        engine_ids : sequence of int
            Engine ids.

        Returns
        -------
        Error
            ``ErrorCode.OK``, or the failure's code and message (upstream's convention: the call
            does not raise).
        """
        return self._add("add_engines", [(e, None) for e in engine_ids])

    def add_engine_configs(self, configs: Sequence[EngineConfigInfo]) -> Error:
        """Add engines from :meth:`get_engine_configs` with their default knobs.

        Parameters
        ----------
        configs : sequence of EngineConfigInfo
            Engines from :meth:`get_engine_configs`.

        Returns
        -------
        Error
            ``ErrorCode.OK``, or the failure's code and message (upstream's convention: the call
            does not raise).
        """
        return self._add("add_engine_configs", [(c.engine_id, None) for c in configs])

    def add_engine_variants(self, variants: Sequence[EngineVariant]) -> Error:
        """Add one spec per variant (engine and explicit knob values).

        Parameters
        ----------
        variants : sequence of EngineVariant
            Engines with explicit knob values.

        Returns
        -------
        Error
            ``ErrorCode.OK``, or the failure's code and message (upstream's convention: the call
            does not raise).
        """
        return self._add("add_engine_variants", [(v.engine_id, v.knob_settings) for v in variants])

    def add_engine_sweep(self, specs: Sequence[EngineSweepSpec]) -> Error:
        """Add the Cartesian product of each spec's knob axes (plus its fixed values).

        Parameters
        ----------
        specs : sequence of EngineSweepSpec
            Per engine: the knob axes to sweep and fixed knob values.

        Returns
        -------
        Error
            ``ErrorCode.OK``, or the failure's code and message (upstream's convention: the call
            does not raise).
        """
        out: list[tuple[int, Any]] = []
        for spec in specs:
            axes = [a for a in spec.axes if a.values]
            for combo in itertools.product(*(a.values for a in axes)):
                values = dict(spec.fixed_settings)
                values.update({a.knob_id: v for a, v in zip(axes, combo, strict=True)})
                out.append((spec.engine_id, values))
        return self._add("add_engine_sweep", out)

    def add_all_engines(self, modes: Sequence[HeurMode] | None = None) -> Error:
        """Add every engine that can run the graph with its default knobs.

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
            return Error(ErrorCode.INVALID_VALUE, f"add_all_engines(): {_NEED_OP_GRAPH}")
        return self._add("add_all_engines",
                         [(e, None) for e in self._native.get_ranked_engine_ids()])

    # -- autotune ---------------------------------------------------------------------------
    def _deselected_ids(self) -> set[int]:
        return {fnv1a_64(e) if isinstance(e, str) else int(e) for e in self._deselected}

    def _build_specs(self, mode: TuneMode, budget: int | None = None) -> None:
        """Build every spec's plan; ``budget`` (autotune's workspace_size) becomes the
        workspace limit of a spec that sets none, so a search (MIOpen's Find) considers only
        solutions the caller's workspace can hold."""
        native = self._native
        native.create_execution_plans()
        barred = self._deselected_ids()
        for engine_id, values in self._specs:
            if engine_id in barred:
                continue
            knobs = dict(values)
            offered = {k.id for k in native.get_knobs_for_engine(engine_id)}
            if mode == TuneMode.EXHAUSTIVE and BENCHMARKING_KNOB in offered:
                knobs.setdefault(BENCHMARKING_KNOB, 1)
            limit = next((k for k in native.get_knobs_for_engine(engine_id)
                          if k.id == WORKSPACE_SIZE_LIMIT_KNOB), None)
            low = getattr(getattr(limit, "constraint", None), "min", None)
            if budget is not None and limit is not None and isinstance(low, int) and budget >= low:
                knobs.setdefault(WORKSPACE_SIZE_LIMIT_KNOB, int(budget))
            native.create_execution_plan_ext(engine_id, knobs)
        # the workspace cap is applied once the plans (and so their workspaces) exist, so that
        # the plans it bars are counted as deselected, as upstream counts them
        native.deselect_workspace_greater_than(None)
        native.build_plans(BuildPlanPolicy.ALL)
        built = len(native.plans)
        if self._workspace_cap is not None:
            native.deselect_workspace_greater_than(self._workspace_cap)
        self._over_cap = built - len(native.plans)
        self._order = list(native.plans)

    def _check_pack(self, pack: Mapping[int, Any]) -> None:
        needed = [t.uid for t in self._native.tensors.values() if not t.is_virtual
                  and not (t.is_pass_by_value and t.value is not None)]
        missing = sorted(uid for uid in needed if uid is not None and uid not in pack)
        if missing:
            raise RuntimeError(f"Autotune failed: the variant pack is missing required "
                               f"non-virtual tensor UIDs {missing}")

    def _time(self, plan: ExecutionPlan, pack: dict[int, Any], workspace: Any, handle: Any,
              cfg: AutotuneConfig) -> tuple[list[float], bool]:
        native = self._native

        def run() -> float:
            start = time.perf_counter()
            native.execute_plan_at_index(pack, workspace, native.plans.index(plan), handle=handle)
            handle.synchronize()
            return (time.perf_counter() - start) * 1e3

        for _ in range(cfg.warmup_iterations):
            run()
        if cfg.strategy == AutotuneStrategy.FIXED_AVERAGE:
            return [run() for _ in range(cfg.timed_iterations)], True
        times: list[float] = []
        converged = False
        while len(times) < cfg.max_iterations and not converged:
            times.append(run())
            window = times[-cfg.window_size:]
            converged = len(window) == cfg.window_size and min(window) > 0 and \
                (max(window) - min(window)) / min(window) <= cfg.stability_threshold
        return times, converged

    def autotune(self, handle: Any, variant_pack: Mapping[Any, Any], workspace: Any = 0,
                 workspace_size: int | None = None, config: AutotuneConfig | None = None,
                 storage_config: AutotuneStorageConfig | None = None) -> list[AutotuneResult]:
        """Time the candidates and make the fastest the active plan; one result per candidate,
        fastest first (failures last). RuntimeError when autotuning cannot start or nothing
        could be timed (the message counts what was deselected, filtered or failed).

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
        workspace_size : int, optional
            Bytes of ``workspace`` (default: the largest plan's).
        config : AutotuneConfig, optional
            Iterations, warm-up and strategy (default: upstream's defaults).
        storage_config : AutotuneStorageConfig, optional
            Where autotune results are kept (accepted; nothing is stored).

        Returns
        -------
        list of AutotuneResult
            Time the candidates and make the fastest the active plan.

        Raises
        ------
        RuntimeError
            When autotuning cannot start or nothing could be timed (the message counts what was
            deselected, filtered or failed.
        """
        cfg = config if config is not None else AutotuneConfig()
        cfg.check()
        h = native_handle(handle)
        deselected = self._over_cap = 0
        try:
            if workspace_size is not None:
                if not self._specs:
                    raise RuntimeError("Autotune failed: no plan specs; call add_engine*() after "
                                       "build_operation_graph(handle)")
                barred = self._deselected_ids()
                deselected = sum(1 for e, _ in self._specs if e in barred)
                pack = self._pack(variant_pack)
                self._check_pack(pack)
                if deselected < len(self._specs):
                    self._build_specs(cfg.mode, workspace_size)
                else:
                    self._order = []
            elif not self._order:
                raise RuntimeError("Autotune failed: no compiled plan; call "
                                   "build_plans(BuildPlanPolicy.ALL) or add_engine*() first")
            else:
                pack = self._pack(variant_pack)
                self._check_pack(pack)
            ws = self._workspace(workspace)
        except HipdnnError as exc:
            raise RuntimeError(f"Autotune failed: {exc}") from exc
        budget = workspace_size
        measured: list[tuple[float, int, dict[str, Any]]] = []
        failed: list[dict[str, Any]] = []
        filtered = over_budget = 0
        for index, plan in enumerate(self._order):
            if cfg.engine_id_filter and plan.engine.engine_id not in cfg.engine_id_filter:
                filtered += 1
                continue
            if budget is not None and plan.workspace_size > budget:
                over_budget += 1
                continue
            exhaustive = BENCHMARKING_KNOB in plan.knobs
            ran = exhaustive and plan.knobs.get(BENCHMARKING_KNOB) == 1
            reason = "" if ran or cfg.mode != TuneMode.EXHAUSTIVE else (
                "the engine has no exhaustive search (no global.benchmarking knob)"
                if not exhaustive else "the plan was compiled without global.benchmarking = 1; "
                "add it with add_engine*() so autotune builds it exhaustively")
            base = {"engine_id": plan.engine.engine_id, "engine_name": plan.engine.name,
                    "knob_settings": [KnobSetting(k, v) for k, v in sorted(plan.knobs.items())],
                    "compiled_plan_index": index, "workspace_size": plan.workspace_size,
                    "estimated_workspace_size": self._estimate(plan.engine.engine_id),
                    "mode_used": cfg.mode, "strategy_used": cfg.strategy,
                    "supports_exhaustive": exhaustive, "ran_exhaustive": ran,
                    "exhaustive_not_run_reason": reason}
            try:
                times, converged = self._time(plan, pack, ws, h, cfg)
            except HipdnnError as exc:
                failed.append({**base, "error_message": str(exc)})
                continue
            mean = sum(times) / len(times)
            spread = (sum((t - mean) ** 2 for t in times) / len(times)) ** 0.5
            measured.append((min(times), index, {
                **base, "min_time_ms": min(times), "avg_time_ms": mean, "stddev_ms": spread,
                "iterations_run": len(times), "converged": converged, "succeeded": True}))
        if not measured:
            self._nothing_timed(deselected, self._over_cap, filtered, over_budget, failed)
        measured.sort(key=lambda m: (m[0], m[1]))
        results = [AutotuneResult(rank=r, **fields) for r, (_, _, fields) in enumerate(measured)]
        results += [AutotuneResult(**fields) for fields in failed]
        winner = self._order[measured[0][1]]
        self._native.select_plan(self._native.plans.index(winner))
        self._store(results[0], storage_config)
        return results

    @staticmethod
    def _nothing_timed(deselected: int, over_cap: int, filtered: int, over_budget: int,
                       failed: list[dict[str, Any]]) -> None:
        parts = []
        if deselected:
            parts.append(f"{deselected} deselected (deselect_engines)")
        if over_cap:
            parts.append(f"{over_cap} deselected (deselect_workspace_greater_than)")
        if filtered:
            parts.append(f"{filtered} excluded by engineIdFilter")
        if over_budget:
            parts.append(f"{over_budget} over the workspace budget")
        parts += [f"{f['engine_name']} failed: {f['error_message']}" for f in failed]
        raise RuntimeError("Autotune failed: No execution plans were benchmarkable: "
                           + ("; ".join(parts) or "no candidate"))

    def _store(self, winner: AutotuneResult, storage: AutotuneStorageConfig | None) -> None:
        """Write the winner as an engine override (upstream's ``engine_overrides`` list):
        replacing the file, or adding to it (an entry of the same engine is replaced)."""
        if storage is None or str(storage.file_path) in ("", "."):
            return
        path = Path(storage.file_path)
        overrides: list[Any] = []
        if path.exists() and not storage.delete_all_existing_file_content:
            try:
                overrides = list(json.loads(path.read_text()).get("engine_overrides", []))
            except (ValueError, TypeError, AttributeError):
                overrides = []
        overrides = [o for o in overrides if o.get("engine_name") != winner.engine_name]
        overrides.append({
            "graph": self._native.name, "engine_id": winner.engine_id,
            "engine_name": winner.engine_name,
            "knobs": {s.id: s.value for s in winner.knob_settings},
            "autotune_metadata": {"rank": winner.rank, "min_time_ms": winner.min_time_ms,
                                  "avg_time_ms": winner.avg_time_ms,
                                  "iterations_run": winner.iterations_run}})
        path.write_text(json.dumps({"engine_overrides": overrides}, indent=1))


def _estimate_of(limit: Any) -> int:
    """A workspace estimate from an engine's ``global.workspace_size_limit`` knob: its default,
    or, when the default sets no limit (MIOPEN_ENGINE: Find may choose any solver), the least
    workspace a plan needs (its constraint's minimum); 0 without the knob."""
    if limit is None or not isinstance(limit.default, int):
        return 0
    if limit.default >= NO_LIMIT:
        return int(getattr(limit.constraint, "min", 0) or 0)
    return int(limit.default)
