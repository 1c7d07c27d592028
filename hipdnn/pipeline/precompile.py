"""Build many graphs ahead of time: :func:`precompile`, N worker threads, each on its own Handle.

The first build of a graph on MIOpen lists solutions, may run Find 2.0 and compiles kernels.
``hipdnn.precompile(graphs, workers=N)`` does that for a list of graphs (the layers of a model)
before the first execute: each worker thread has its own :class:`hipdnn.Handle` (its own MIOpen
handle), builds the graphs it takes from a shared queue, and one progress line counts them. What
the builds decide lands in MIOpen's caches and in hipdnn's plan store, so a later process builds
the same graphs from the store (docs/FIRST_CALL.md). A graph that no engine can run is reported
as declined with every engine's reason, never raised; the graphs stay built on their worker's
Handle and can be executed at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hipdnn.core.errors import ArgumentError, GraphNotSupportedError, HipdnnError
from hipdnn.core.handle import Handle
from hipdnn.core.progress import Progress

#: A hipdnn.Graph (typed loosely: the pipeline layer sits below the graph builder).
Graph = Any

__all__ = ["PrecompileResult", "PrecompileSummary", "precompile"]


@dataclass(frozen=True)
class PrecompileResult:
    """One graph: ``status`` "built", "declined" (no engine can run it: ``reason`` lists
    each engine's) or "failed" (an error: ``reason``); the plan and engine; seconds taken."""

    graph: str
    status: str
    seconds: float
    plan: str | None = None
    engine: str | None = None
    reason: str | None = None


@dataclass
class PrecompileSummary:
    """What :func:`precompile` did: one result per graph, in the order given."""

    results: list[PrecompileResult] = field(default_factory=list)
    seconds: float = 0.0
    workers: int = 1

    @property
    def built(self) -> list[PrecompileResult]:
        return [r for r in self.results if r.status == "built"]

    @property
    def declined(self) -> list[PrecompileResult]:
        return [r for r in self.results if r.status != "built"]

    def __str__(self) -> str:
        lines = [f"precompiled {len(self.results)} graph(s) with {self.workers} worker(s) in "
                 f"{self.seconds:.2f} s: {len(self.built)} built, {len(self.declined)} not built"]
        for r in self.results:
            what = f"{r.plan}" if r.status == "built" else f"{r.status}: {r.reason}"
            lines.append(f"  {r.graph}: {r.seconds:.3f} s  {what}")
        return "\n".join(lines)


def precompile(graphs: Sequence[Graph], workers: int = 2, *,
               knobs: Mapping[str, Any] | None = None,
               progress: bool | None = None) -> PrecompileSummary:
    """Build ``graphs`` with ``workers`` threads, each on its own Handle (a graph given a
    Handle keeps it); returns a :class:`PrecompileSummary` (also for graphs that failed).

    ``knobs``: settings for MIOPEN_ENGINE (e.g. ``{"global.benchmarking": 1}`` to run Find 2.0
    now rather than on a user's first call); without them each graph gets the engines' defaults
    (its heuristic choice). ``progress``: as ``Graph.build`` (None: the HIPDNN_PROGRESS default).
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ArgumentError(f"precompile: workers={workers!r}; valid: an int >= 1")
    items = list(graphs)
    for i, g in enumerate(items):
        if not hasattr(g, "_planner") or not callable(getattr(g, "build", None)):
            raise ArgumentError(f"precompile: item {i} is a {type(g).__name__}, not a hipdnn.Graph")
    results: list[PrecompileResult | None] = [None] * len(items)
    lock = threading.Lock()
    queue = list(range(len(items)))
    errors: list[BaseException] = []
    t0 = time.perf_counter()
    with Progress("precompiling", len(items), progress) as bar:

        def work() -> None:
            handle: Handle | None = None
            while True:
                with lock:
                    if not queue:
                        return
                    i = queue.pop(0)
                    bar.step(f"{items[i].name} ({len(items) - len(queue)}/{len(items)})")
                g = items[i]
                if g._handle is None:
                    handle = handle or Handle()
                    g.build_operation_graph(handle)
                start = time.perf_counter()
                try:
                    results[i] = _build(g, knobs, start)
                except BaseException as exc:  # e.g. KeyboardInterrupt: stop the others too
                    with lock:
                        errors.append(exc)
                        queue.clear()
                    return
                finally:
                    with lock:
                        bar.advance()

        threads = [threading.Thread(target=work, name=f"hipdnn-precompile-{k}", daemon=True)
                   for k in range(min(workers, max(len(items), 1)))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
    return PrecompileSummary([r for r in results if r is not None],
                             time.perf_counter() - t0, workers)


def _build(g: Graph, knobs: Mapping[str, Any] | None, start: float) -> PrecompileResult:
    try:
        if knobs is None:
            g.build()
        else:
            g.build_operation_graph()
            g.create_execution_plans()
            if g.engine_reasons().get("MIOPEN_ENGINE") is None:
                g.create_execution_plan_ext("MIOPEN_ENGINE", dict(knobs))
            g.build_plans()
    except GraphNotSupportedError as exc:
        reasons = "; ".join(f"{k}: {v}" for k, v in getattr(exc, "reasons", {}).items())
        return PrecompileResult(g.name, "declined", time.perf_counter() - start,
                                reason=reasons or str(exc))
    except HipdnnError as exc:
        return PrecompileResult(g.name, "failed", time.perf_counter() - start,
                                reason=f"{type(exc).__name__}: {exc}")
    plan = g.plans[0]
    return PrecompileResult(g.name, "built", time.perf_counter() - start, plan=plan.name,
                            engine=plan.engine.name)
