"""Execution: variant-pack resolution, workspace checks, execute, autotune (Graph mixin).

Variant-pack keys are graph tensors or uids (``None`` keys are skipped); values go through
:func:`hipdnn.interop.resolve` and are checked against the graph's tensors before any engine is
called. Pass-by-value scalars with a baked value need no entry.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hipdnn.errors import VariantPackError, WorkspaceError
from hipdnn.tensor import Tensor

if TYPE_CHECKING:
    from hipdnn.engines.base import ExecutionPlan
    from hipdnn.handle import Handle
    from hipdnn.interop import Buffer

__all__ = ["GraphExec"]


class GraphExec:
    """Mixin: execute / execute_plan_at_index / autotune."""

    if TYPE_CHECKING:
        name: str
        tensors: dict[int, Tensor]
        _plans: list[ExecutionPlan]
        @property
        def handle(self) -> Handle: ...
        def _plan(self, index: int = 0) -> ExecutionPlan: ...
        def build_plan_at_index(self, index: int) -> None: ...
        _candidates: Any

    def _init_exec(self) -> None:
        self._required: list[Tensor] = []
        self._baked: dict[int, float] = {}

    def _prepare_exec(self) -> None:
        """Precompute which tensors a variant pack must hold (after plans are built)."""
        self._required = [t for t in self.tensors.values()
                          if not t.is_virtual and not (t.is_pass_by_value and t.value is not None)]
        self._baked = {uid: t.value for uid, t in self.tensors.items()
                       if t.is_pass_by_value and t.value is not None}

    def _tensor_for_key(self, key: Any) -> Tensor:
        if isinstance(key, Tensor):
            t = self.tensors.get(key.uid) if key.uid is not None else None
            if t is not key:
                where = "another graph" if key._graph is not self else "no node of this graph"
                raise VariantPackError(f"variant pack: tensor {key.name!r} belongs to {where}",
                                       tensor=key.name)
            return key
        if isinstance(key, int) and not isinstance(key, bool):
            t = self.tensors.get(key)
            if t is None:
                raise VariantPackError(f"variant pack: no tensor with uid {key} in graph "
                                       f"{self.name!r}; uids: {sorted(self.tensors)}")
            return t
        raise VariantPackError(f"variant pack keys must be graph tensors or int uids, got "
                               f"{type(key).__name__} {key!r}")

    def _resolve_pack(self, variant_pack: Mapping[Any, Any]) -> dict[int, Buffer]:
        from hipdnn import interop

        if not isinstance(variant_pack, Mapping):
            raise VariantPackError(f"the variant pack must be a dict {{tensor or uid: value}}, "
                                   f"got {type(variant_pack).__name__}")
        buffers: dict[int, Buffer] = {}
        for key, value in variant_pack.items():
            if key is None:
                continue
            t = self._tensor_for_key(key)
            if t.is_virtual:
                raise VariantPackError(
                    f"variant pack: tensor {t.name!r} (uid {t.uid}) is virtual: it lives only "
                    f"inside the graph; mark it with set_output(True) to read it",
                    tensor=t.name)
            try:
                buf = interop.resolve(value)
            except VariantPackError as exc:
                raise VariantPackError(f"variant pack: tensor {t.name!r} (uid {t.uid}): {exc}",
                                       tensor=t.name) from exc
            interop.check_against(buf, t, "execute: variant pack")
            if buf.readonly and t._producer is not None:
                raise VariantPackError(f"variant pack: output tensor {t.name!r} (uid {t.uid}) "
                                       f"is backed by read-only memory", tensor=t.name)
            assert t.uid is not None
            buffers[t.uid] = buf
        missing = [t for t in self._required if t.uid not in buffers]
        if missing:
            names = ", ".join(f"{t.name!r} (uid {t.uid})" for t in missing)
            raise VariantPackError(f"variant pack is missing {len(missing)} tensor(s) of graph "
                                   f"{self.name!r}: {names}", tensor=missing[0].name)
        for uid, value in self._baked.items():
            if uid not in buffers:
                buffers[uid] = interop.Buffer(ptr=0, device="cpu", scalar=value, kind="float")
        return buffers

    def _resolve_workspace(self, workspace: Any, size: int) -> Buffer | None:
        from hipdnn import interop

        if size == 0:
            return None
        if workspace is None:
            raise WorkspaceError(f"the plan needs a workspace of {size} bytes; got None "
                                 f"(allocate graph.get_workspace_size() bytes)")
        buf = interop.resolve(workspace)
        nbytes = buf.nbytes
        if nbytes is not None and nbytes < size:
            raise WorkspaceError(f"workspace of {nbytes} bytes is smaller than the plan's "
                                 f"{size} bytes")
        return buf

    def _run(self, plan: ExecutionPlan, variant_pack: Mapping[Any, Any], workspace: Any,
             handle: Handle | None) -> None:
        plan.check_open()
        buffers = self._resolve_pack(variant_pack)
        ws = self._resolve_workspace(workspace, plan.workspace_size)
        plan.execute(buffers, ws, handle if handle is not None else self.handle)

    def execute(self, variant_pack: Mapping[Any, Any], workspace: Any = None,
                handle: Handle | None = None) -> None:
        """Run the selected plan. ``variant_pack``: {tensor or uid: array/pointer/scalar}.

        ``workspace`` may be None when ``get_workspace_size()`` is 0.
        """
        self._run(self._plan(0), variant_pack, workspace, handle)

    def execute_plan_at_index(self, variant_pack: Mapping[Any, Any], workspace: Any,
                              index: int, handle: Handle | None = None) -> None:
        """Run built plan ``index``."""
        self._run(self._plan(index), variant_pack, workspace, handle)

    def autotune(self, variant_pack: Mapping[Any, Any], workspace: Any = None,
                 iterations: int = 10, warmup: int = 1,
                 handle: Handle | None = None) -> list[tuple[str, float]]:
        """Time every candidate plan and select the fastest (it becomes plan 0).

        Candidates not built yet are built first. Returns ``[(plan name, seconds per run)]``
        fastest first. Outputs in the variant pack are overwritten by every run.
        """
        self._plan(0)
        n_candidates = len(self._candidates or [])
        for i in range(len(self._plans), n_candidates):
            self.build_plan_at_index(i)
        h = handle if handle is not None else self.handle
        buffers = self._resolve_pack(variant_pack)
        timings: list[tuple[float, int]] = []
        for i, plan in enumerate(self._plans):
            ws = self._resolve_workspace(workspace, plan.workspace_size)
            for _ in range(max(0, warmup)):
                plan.execute(buffers, ws, h)
            h.synchronize()
            start = time.perf_counter()
            for _ in range(max(1, iterations)):
                plan.execute(buffers, ws, h)
            h.synchronize()
            timings.append(((time.perf_counter() - start) / max(1, iterations), i))
        timings.sort()
        self._plans[:] = [self._plans[i] for _, i in timings]
        return [(self._plans[k].name, t) for k, (t, _) in enumerate(timings)]
