"""A tiny engine for exercising the graph API's pipeline (registered by test fixtures only).

It supports pointwise graphs (RELU_FWD / RELU_BWD / ADD / SUB / MUL), batchnorm inference
(both forms), and chains of those, computing on host buffers with numpy in float32. Any
other op makes it decline with a reason. It offers two knobs: ``global.benchmarking`` (0..1)
and ``fake.tile`` (1..8 in steps of 1, default 4); ``fake.workspace`` (bytes, 0..4096) sets the
plan's workspace size. Every call is recorded in ``FakeEngine.calls``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

from hipdnn.backend import registry as engines_registry
from hipdnn.backend.engine import Engine, ExecutionPlan
from hipdnn.backend.knobs import BENCHMARKING_KNOB, IntConstraint, Knob
from hipdnn.core.types import KnobValueType, PointwiseMode
from hipdnn.engines import load_builtin_engines, register, unregister
from hipdnn.interop import buffers as interop
from hipdnn.ir.nodes import BatchnormInferenceNode, BatchnormInferenceVarianceNode, PointwiseNode

__all__ = [
    "DecliningEngine", "FakeEngine", "FakePlan", "only_fake_engines", "registered_fake_engine",
]

_MODES = {PointwiseMode.RELU_FWD, PointwiseMode.RELU_BWD, PointwiseMode.ADD, PointwiseMode.SUB,
          PointwiseMode.MUL}


class FakePlan(ExecutionPlan):
    """Runs the graph node by node with numpy; intermediates kept in a dict by uid."""

    def __init__(self, engine: FakeEngine, graph: Any, knobs: dict[str, Any]) -> None:
        super().__init__(engine, knobs, name=f"FAKE_TEST_ENGINE[tile={knobs['fake.tile']}]",
                         workspace_size=int(knobs["fake.workspace"]))
        self.graph = graph
        self.executions = 0

    def _execute(self, buffers: Mapping[int, Any], workspace: Any, handle: Any) -> None:
        self.engine.calls.append(("execute", self.name))  # type: ignore[attr-defined]
        self.executions += 1
        time.sleep(self.knobs["fake.tile"] * 2e-5)  # larger tiles are slower (for autotune)
        vals: dict[int, np.ndarray[Any, Any]] = {}

        def get(t: Any) -> np.ndarray[Any, Any]:
            if t.uid in vals:
                return vals[t.uid]
            buf = buffers[t.uid]
            if buf.scalar is not None:
                return np.float32(buf.scalar)  # type: ignore[return-value]
            return interop.host_view(buf, t).astype(np.float32)

        for node in self.graph.nodes:
            if isinstance(node, PointwiseNode):
                a = get(node.inputs["IN_0"])
                b = get(node.inputs["IN_1"]) if node.inputs["IN_1"] is not None else None
                if node.mode == PointwiseMode.RELU_FWD:
                    lo = node.relu_lower_clip if node.relu_lower_clip is not None else 0.0
                    hi = node.relu_upper_clip if node.relu_upper_clip is not None else np.inf
                    out = np.clip(a, lo, hi)
                elif node.mode == PointwiseMode.RELU_BWD:
                    out = np.where(b > 0, a, 0)
                elif node.mode == PointwiseMode.ADD:
                    out = a + b
                elif node.mode == PointwiseMode.SUB:
                    out = a - b
                else:
                    out = a * b
                vals[node.outputs["OUT_0"].uid] = out  # type: ignore[union-attr]
            elif isinstance(node, BatchnormInferenceNode):
                x, mean, inv_var, scale, bias = (get(node.inputs[p]) for p in (
                    "X", "MEAN", "INV_VARIANCE", "SCALE", "BIAS"))
                vals[node.outputs["Y"].uid] = (x - mean) * inv_var * scale + bias  # type: ignore[union-attr]
            else:
                x, mean, var, scale, bias, eps = (get(node.inputs[p]) for p in (
                    "X", "MEAN", "VARIANCE", "SCALE", "BIAS", "EPSILON"))
                y = (x - mean) / np.sqrt(var + eps) * scale + bias
                vals[node.outputs["Y"].uid] = y  # type: ignore[union-attr]
        for uid, out in vals.items():
            t = self.graph.tensors[uid]
            if not t.is_virtual:
                view = interop.host_view(buffers[uid], t)
                view[...] = out.astype(view.dtype)

    def _release(self) -> None:
        self.engine.calls.append(("close", self.name))  # type: ignore[attr-defined]


class FakeEngine(Engine):
    """Pointwise and BN-inference-variance graphs on the host; ranked before every engine."""

    name = "FAKE_TEST_ENGINE"
    rank = -100

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def check_support(self, graph: Any, handle: Any) -> str | None:
        self.calls.append(("check_support", graph.name))
        for node in graph.nodes:
            if isinstance(node, PointwiseNode):
                if node.mode not in _MODES:
                    return f"node {node.name!r}: pointwise mode {node.mode.name} not supported"
            elif not isinstance(node, (BatchnormInferenceNode, BatchnormInferenceVarianceNode)):
                return f"node {node.name!r}: {type(node).__name__} not supported"
        return None

    def get_knobs(self, graph: Any, handle: Any) -> list[Knob]:
        self.calls.append(("get_knobs", graph.name))
        return [
            Knob(BENCHMARKING_KNOB, KnobValueType.INT64, 0, IntConstraint(0, 1),
                 "0 = heuristic, 1 = search"),
            Knob("fake.tile", KnobValueType.INT64, 4, IntConstraint(1, 8), "tile size"),
            Knob("fake.workspace", KnobValueType.INT64, 0, IntConstraint(0, 4096, 256),
                 "workspace bytes the plan asks for"),
        ]

    def build_plan(self, graph: Any, knobs: dict[str, Any], handle: Any) -> FakePlan:
        self.calls.append(("build_plan", dict(knobs)))
        return FakePlan(self, graph, knobs)


@contextmanager
def registered_fake_engine() -> Iterator[FakeEngine]:
    """Register a fresh FakeEngine (alongside the built-in engines), then unregister it."""
    engine = register(FakeEngine())
    try:
        yield engine  # type: ignore[misc]
    finally:
        unregister(engine)


class DecliningEngine(FakeEngine):
    """Declines every graph with a fixed reason (ranked after FakeEngine)."""

    name = "FAKE_DECLINING_ENGINE"
    rank = 50

    def check_support(self, graph: Any, handle: Any) -> str | None:
        self.calls.append(("check_support", graph.name))
        return "declines everything (test engine)"


@contextmanager
def only_fake_engines() -> Iterator[tuple[FakeEngine, DecliningEngine]]:
    """Hide the built-in engines and register a FakeEngine and a DecliningEngine for one test."""
    load_builtin_engines()
    saved = engines_registry.registry()
    for engine in saved.values():
        unregister(engine)
    fake, declining = register(FakeEngine()), register(DecliningEngine())
    try:
        yield fake, declining  # type: ignore[misc]
    finally:
        unregister(fake)
        unregister(declining)
        for engine in saved.values():
            register(engine)
