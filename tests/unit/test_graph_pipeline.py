"""Staged pipeline, engine/knob API, plan cache, ownership, execute and autotune (fake engine)."""

from __future__ import annotations

import dataclasses
import gc
import time
from collections.abc import Iterator

import numpy as np
import pytest
from fake_engine import DecliningEngine, FakeEngine, only_fake_engines

import hipdnn
from hipdnn import (
    BuildPlanPolicy,
    DataType,
    EngineError,
    Graph,
    GraphNotSupportedError,
    GraphStateError,
    HeurMode,
    KnobError,
    KnobSetting,
    PlanClosedError,
    VariantPackError,
    WorkspaceError,
)
from hipdnn.engines import fnv1a_64
from hipdnn.ir.view import GraphView

Engines = tuple[FakeEngine, DecliningEngine]


@pytest.fixture
def fakes() -> Iterator[Engines]:
    """Only the fake engines are registered during the test."""
    with only_fake_engines() as engines:
        yield engines


def _relu_graph(name: str = "relu_graph") -> tuple[Graph, hipdnn.Tensor, hipdnn.Tensor]:
    g = Graph(name=name, io_data_type=DataType.FLOAT)
    x = g.tensor(dim=[2, 3, 4, 4], name="x")
    y = g.relu(x, upper_clip=1.5, name="act").set_output(True)
    return g, x, y


def _data(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((2, 3, 4, 4)).astype(np.float32)


def test_staged_pipeline_and_execute(fakes: Engines) -> None:
    g, x, y = _relu_graph()
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([HeurMode.A, HeurMode.FALLBACK])
    g.check_support()
    g.build_plans(BuildPlanPolicy.HEURISTICS_CHOICE)
    assert g.get_workspace_size() == 0
    xa, ya = _data(), np.full((2, 3, 4, 4), np.nan, np.float32)
    g.execute({x: xa, y: ya}, None)
    np.testing.assert_allclose(ya, np.clip(xa, 0, 1.5), rtol=1e-6)
    assert g.get_execution_plan_engine_id() == fnv1a_64("FAKE_TEST_ENGINE")
    assert g.get_plan_name() == "FAKE_TEST_ENGINE[tile=4]"
    assert g.get_execution_plan_count() == 1


def test_build_runs_the_whole_pipeline_and_uid_keys(fakes: Engines) -> None:
    g, x, y = _relu_graph()
    assert g.build() is g
    xa, ya = _data(1), np.zeros((2, 3, 4, 4), np.float32)
    g.execute({x.get_uid(): xa, y.get_uid(): ya, None: 123})
    np.testing.assert_allclose(ya, np.clip(xa, 0, 1.5))


def test_not_supported_lists_every_engines_reason(fakes: Engines) -> None:
    g = Graph(name="convg", io_data_type=DataType.FLOAT)
    y = g.conv_fprop(g.tensor(dim=[1, 3, 5, 5]), g.tensor(dim=[2, 3, 3, 3]), name="conv")
    y.set_output(True)
    with pytest.raises(GraphNotSupportedError) as info:
        g.build()
    err = info.value
    assert err.reasons == {
        "FAKE_TEST_ENGINE": "node 'conv': ConvFpropNode not supported",
        "FAKE_DECLINING_ENGINE": "declines everything (test engine)",
    }
    assert "graph 'convg' is not supported by any engine" in str(err)
    assert "  - FAKE_DECLINING_ENGINE: declines everything" in str(err)
    assert hipdnn.cudnnGraphNotSupportedError is GraphNotSupportedError


def test_ranking_and_engine_count(fakes: Engines) -> None:
    fake, _ = fakes

    class Second(FakeEngine):
        name = "FAKE_SECOND_ENGINE"
        rank = 10

    second = hipdnn.engines.register(Second())
    try:
        g, _, _ = _relu_graph()
        g.build_operation_graph()
        assert g.get_engine_count() == 2
        assert g.get_ranked_engine_ids() == [fake.engine_id, second.engine_id]
        g.create_execution_plans()
        g.build_plans(BuildPlanPolicy.ALL)
        assert g.get_execution_plan_count() == 2
        assert g.get_plan_name_at_index(0).startswith("FAKE_TEST_ENGINE")
        g.deselect_engines(["FAKE_TEST_ENGINE"])
        g.build_plans()
        assert g.get_execution_plan_engine_id() == second.engine_id
    finally:
        hipdnn.engines.unregister(second)


def test_get_knobs_for_engine(fakes: Engines) -> None:
    fake, declining = fakes
    g, _, _ = _relu_graph()
    knobs = {k.id: k for k in g.get_knobs_for_engine(fake.engine_id)}
    assert set(knobs) == {"global.benchmarking", "fake.tile", "fake.workspace"}
    tile = knobs["fake.tile"]
    assert (tile.default, tile.constraint.min, tile.constraint.max,  # type: ignore[union-attr]
            tile.constraint.step) == (4, 1, 8, 1)  # type: ignore[union-attr]
    assert tile.value_type == hipdnn.KnobValueType.INT64 and tile.description
    with pytest.raises(GraphNotSupportedError, match="declines everything"):
        g.get_knobs_for_engine(declining.engine_id)


def test_create_execution_plan_ext_list_and_dict(fakes: Engines) -> None:
    fake, _ = fakes
    g, x, y = _relu_graph()
    g.create_execution_plan_ext(fake.engine_id, [KnobSetting("fake.tile", 2)])
    g.create_execution_plan_ext("FAKE_TEST_ENGINE", {"fake.tile": 8, "global.benchmarking": 1})
    g.check_support()
    g.build_plans(BuildPlanPolicy.ALL)
    assert [p.knobs for p in g.plans] == [
        {"global.benchmarking": 0, "fake.tile": 2, "fake.workspace": 0},
        {"global.benchmarking": 1, "fake.tile": 8, "fake.workspace": 0},
    ]
    ya = np.zeros((2, 3, 4, 4), np.float32)
    g.execute_plan_at_index({x: _data(), y: ya}, None, 1)
    assert g.plans[1].executions == 1  # type: ignore[attr-defined]
    with pytest.raises(GraphStateError, match=r"index 5 is out of range; valid: an int in 0\.\.1 \(2 built plan"):
        g.execute_plan_at_index({x: _data(), y: ya}, None, 5)


def test_knob_out_of_range_names_knob_and_range(fakes: Engines) -> None:
    fake, _ = fakes
    g, _, _ = _relu_graph()
    with pytest.raises(KnobError, match=r"knob 'fake.tile' = 9 is out of range; valid: an "
                                        r"integer in \[1, 8\]") as info:
        g.create_execution_plan_ext(fake.engine_id, [KnobSetting("fake.tile", 9)])
    assert info.value.knob == "fake.tile"
    with pytest.raises(KnobError, match=r"steps of 256"):
        g.create_execution_plan_ext(fake.engine_id, {"fake.workspace": 100})
    with pytest.raises(KnobError, match="takes an integer"):
        g.create_execution_plan_ext(fake.engine_id, {"fake.tile": 2.5})


def test_unknown_knob_lists_known_ones(fakes: Engines) -> None:
    fake, _ = fakes
    g, _, _ = _relu_graph()
    with pytest.raises(KnobError, match=r"unknown knob 'global.workspace_size_limit' for engine "
                                        r"FAKE_TEST_ENGINE.*its knobs: fake.tile, fake.workspace,"
                                        r" global.benchmarking"):
        g.create_execution_plan_ext(fake.engine_id, {"global.workspace_size_limit": 1})
    with pytest.raises(KnobError, match="KnobSetting"):
        g.create_execution_plan_ext(fake.engine_id, [("fake.tile", 2)])  # type: ignore[list-item]


def test_unknown_engine_id_lists_registered(fakes: Engines) -> None:
    g, _, _ = _relu_graph()
    with pytest.raises(EngineError, match=r"unknown engine id 12345; registered engines: "
                                          r"FAKE_TEST_ENGINE"):
        g.create_execution_plan_ext(12345, {})


def test_workspace_checked_before_engine_runs(fakes: Engines) -> None:
    fake, _ = fakes
    g, x, y = _relu_graph()
    g.create_execution_plan_ext(fake.engine_id, {"fake.workspace": 512})
    g.build_plans()
    assert g.get_workspace_size() == 512 == g.get_workspace_size_plan_at_index(0)
    pack = {x: _data(), y: np.zeros((2, 3, 4, 4), np.float32)}
    fake.calls.clear()
    with pytest.raises(WorkspaceError, match="needs a workspace of 512 bytes"):
        g.execute(pack, None)
    with pytest.raises(WorkspaceError, match="256 bytes is smaller than the plan's 512"):
        g.execute(pack, np.zeros(256, np.uint8))
    assert not any(c[0] == "execute" for c in fake.calls)
    g.execute(pack, np.zeros(512, np.uint8))
    assert ("execute", "FAKE_TEST_ENGINE[tile=4]") in fake.calls


def test_variant_pack_errors_name_the_tensor(fakes: Engines) -> None:
    g = Graph(io_data_type=DataType.FLOAT)
    x = g.tensor(dim=[2, 3, 4, 4], name="x")
    mid = g.relu(x, name="a")
    y = g.relu(mid, name="b").set_output(True)
    g.build()
    xa, ya = _data(), np.zeros((2, 3, 4, 4), np.float32)
    with pytest.raises(VariantPackError, match=r"missing 1 tensor\(s\).*'b::OUT_0' \(uid 3\)"):
        g.execute({x: xa})
    with pytest.raises(VariantPackError, match=r"'a::OUT_0' .* is virtual"):
        g.execute({x: xa, y: ya, mid: ya})
    with pytest.raises(VariantPackError, match=r"no tensor with uid 99 .* uids: \[1, 2, 3\]"):
        g.execute({99: xa})
    other = Graph().tensor(dim=[1], name="alien")
    with pytest.raises(VariantPackError, match="'alien' belongs to another graph"):
        g.execute({other: xa})
    with pytest.raises(VariantPackError, match=r"'x'.*shape mismatch"):
        g.execute({x: np.zeros((2, 3, 4, 3), np.float32), y: ya})  # too small, even by pointer
    with pytest.raises(VariantPackError, match=r"'x'.*data type mismatch"):
        g.execute({x: xa.astype(np.float16), y: ya})
    with pytest.raises(VariantPackError, match="keys must be graph tensors or int uids"):
        g.execute({"x": xa})
    with pytest.raises(VariantPackError, match="must be a dict"):
        g.execute([xa, ya])  # type: ignore[arg-type]


def test_pass_by_value_scalar_from_pack_or_baked(fakes: Engines) -> None:
    g = Graph(io_data_type=DataType.FLOAT)
    x = g.tensor(dim=[2, 3, 4, 4], name="x")
    p = [g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("mean", "var", "scale", "bias")]
    eps = g.tensor(dim=[1, 1, 1, 1], is_pass_by_value=True, name="eps")
    y = g.batchnorm_inference(x, p[0], scale=p[2], bias=p[3], variance=p[1], epsilon=eps)
    y.set_output(True)
    g.build()
    rng = np.random.default_rng(3)
    xa = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    mean, scale, bias = (rng.standard_normal((1, 3, 1, 1)).astype(np.float32) for _ in range(3))
    var = rng.uniform(0.5, 2.0, (1, 3, 1, 1)).astype(np.float32)
    ya = np.zeros_like(xa)
    pack = {x: xa, p[0]: mean, p[1]: var, p[2]: scale, p[3]: bias, y: ya}
    with pytest.raises(VariantPackError, match="'eps'"):
        g.execute(pack)
    g.execute({**pack, eps: 0.25})
    np.testing.assert_allclose(ya, (xa - mean) / np.sqrt(var + 0.25) * scale + bias, rtol=1e-5)


def test_rebuild_reuses_cached_plans(fakes: Engines) -> None:
    fake, _ = fakes
    g1, _, _ = _relu_graph("first")
    g1.build()
    builds = [c for c in fake.calls if c[0] == "build_plan"]
    checks = len([c for c in fake.calls if c[0] == "check_support"])
    g2, x2, y2 = _relu_graph("second")  # same structure, new objects, other names
    g2.build()
    assert g2.key() == g1.key()
    assert [c for c in fake.calls if c[0] == "build_plan"] == builds
    assert len([c for c in fake.calls if c[0] == "check_support"]) == checks
    assert g2.plans[0] is g1.plans[0]
    ya = np.zeros((2, 3, 4, 4), np.float32)
    g2.execute({x2: _data(), y2: ya})
    g3, _, _ = _relu_graph("third")
    g3.create_execution_plan_ext(fake.engine_id, {"fake.tile": 1})
    g3.build_plans()
    assert len([c for c in fake.calls if c[0] == "build_plan"]) == len(builds) + 1


def test_close_releases_plans_and_blocks_use(fakes: Engines) -> None:
    fake, _ = fakes
    hipdnn.clear_plan_cache()
    with _relu_graph()[0] as g:
        g.build()
        plan = g.plans[0]
    assert g.closed
    with pytest.raises(PlanClosedError, match="graph 'relu_graph' is closed"):
        g.execute({}, None)
    with pytest.raises(PlanClosedError):
        g.build()
    assert not plan.closed  # still cached for the next graph of this structure
    hipdnn.clear_plan_cache()
    assert plan.closed and ("close", plan.name) in fake.calls
    g.close()  # idempotent


def test_graph_collected_without_close_stops_holding_its_plan(fakes: Engines) -> None:
    fake, _ = fakes
    hipdnn.clear_plan_cache()
    g = _relu_graph()[0]
    g.build()
    plan = g.plans[0]
    del g
    gc.collect()
    assert not plan.closed  # still cached
    hipdnn.clear_plan_cache()  # no live graph holds it any more: closed now
    assert plan.closed and ("close", plan.name) in fake.calls


def test_uncached_plan_closed_with_graph(fakes: Engines) -> None:
    hipdnn.plan_cache.enabled = False
    try:
        g, _, _ = _relu_graph()
        g.build()
        plan = g.plans[0]
        g.close()
        assert plan.closed
    finally:
        hipdnn.plan_cache.enabled = True


def test_execute_before_build(fakes: Engines) -> None:
    g, x, y = _relu_graph()
    with pytest.raises(GraphStateError, match="no built plan: call build"):
        g.execute({x: _data(), y: _data()})


def test_autotune_keeps_the_fastest(fakes: Engines, monkeypatch: pytest.MonkeyPatch) -> None:
    fake, _ = fakes
    # a deterministic clock: each fake execute "takes" its sleep, whatever the machine's load
    clock = [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(time, "sleep", lambda seconds: clock.__setitem__(0, clock[0] + seconds))
    g, x, y = _relu_graph()
    g.create_execution_plan_ext(fake.engine_id, {"fake.tile": 8})
    g.create_execution_plan_ext(fake.engine_id, {"fake.tile": 1})
    g.build_plans()  # only the first; autotune builds the rest
    assert g.get_execution_plan_count() == 1
    timings = g.autotune({x: _data(), y: np.zeros((2, 3, 4, 4), np.float32)}, None,
                         iterations=5)
    assert [name for name, _ in timings] == ["FAKE_TEST_ENGINE[tile=1]",
                                             "FAKE_TEST_ENGINE[tile=8]"]
    assert timings[0][1] <= timings[1][1]
    assert g.get_plan_name() == "FAKE_TEST_ENGINE[tile=1]"
    assert all(p.executions == 6 for p in g.plans)  # type: ignore[attr-defined]


def test_engines_get_a_private_copy_of_the_graph(fakes: Engines) -> None:
    hipdnn.clear_plan_cache()
    g1, x1, _ = _relu_graph("first")
    g1.build()
    plan_graph = g1.plans[0].graph  # type: ignore[attr-defined]
    assert isinstance(plan_graph, GraphView)  # the frozen view, not the mutable Graph
    assert [n.name for n in plan_graph.nodes] == [n.name for n in g1.nodes]
    assert {u: t.get_dim() for u, t in plan_graph.tensors.items()} == \
        {u: t.get_dim() for u, t in g1.tensors.items()}
    assert all(plan_graph.tensors[u] is not t for u, t in g1.tensors.items())  # a private copy
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan_graph.nodes = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        plan_graph.tensors[0] = x1  # type: ignore[index]
    assert isinstance(plan_graph.nodes, tuple)
    x1.set_dim([4, 3, 4, 4])  # editing g1 later must not reach the cached plan
    g2, x2, y2 = _relu_graph("second")
    g2.build()
    assert g2.plans[0] is g1.plans[0]
    assert plan_graph.tensors[x2.get_uid()].get_dim() == [2, 3, 4, 4]
    ya = np.zeros((2, 3, 4, 4), np.float32)
    g2.execute({x2: _data(), y2: ya})


def test_every_engine_call_gets_the_same_private_view(fakes: Engines,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """check_support, get_knobs and build_plan all see one private validated copy per
    operation-graph key, never the user's nodes and tensors; an edit gives a new copy."""
    fake, _ = fakes
    seen: list[tuple[str, GraphView]] = []
    for method in ("check_support", "get_knobs", "build_plan"):
        original = getattr(fake, method)

        def spy(graph: GraphView, *args: object, _name: str = method,
                _original: object = original) -> object:
            seen.append((_name, graph))
            return _original(graph, *args)  # type: ignore[operator]

        monkeypatch.setattr(fake, method, spy)
    hipdnn.clear_plan_cache()
    g, x, _ = _relu_graph("viewed")
    g.build()
    assert [name for name, _ in seen] == ["check_support", "get_knobs", "build_plan"]
    view = seen[0][1]
    assert all(v is view for _, v in seen)  # one copy for the key, made once
    user_objects = {id(n) for n in g.nodes} | {id(t) for t in g.all_tensors}
    assert not user_objects & ({id(n) for n in view.nodes} | {id(t) for t in view.tensors.values()})
    x.set_dim([4, 3, 4, 4])
    g.build()
    assert seen[-1][1] is not view and view.tensors[x.get_uid()].get_dim() == [2, 3, 4, 4]


def test_tuned_choice_can_be_persisted_and_replayed(fakes: Engines) -> None:
    fake, _ = fakes
    g, _, _ = _relu_graph()
    g.create_execution_plan_ext(fake.engine_id, {"fake.tile": 8})
    g.create_execution_plan_ext(fake.engine_id, {"fake.tile": 2})
    g.build_plans(BuildPlanPolicy.ALL)
    g.select_plan(1)
    engine_id, knobs = g.get_engine_and_knobs_at_index(0)
    assert (engine_id, knobs["fake.tile"]) == (fake.engine_id, 2)
    replay, _, _ = _relu_graph("replay")
    replay.create_execution_plan_ext(engine_id, knobs)
    replay.build_plans()
    assert replay.get_plan_name() == "FAKE_TEST_ENGINE[tile=2]"


def test_read_only_output_rejected(fakes: Engines) -> None:
    g, x, y = _relu_graph()
    g.build()
    out = np.zeros((2, 3, 4, 4), np.float32)
    out.flags.writeable = False
    with pytest.raises(VariantPackError, match=r"output tensor 'act::OUT_0' .* read-only"):
        g.execute({x: _data(), y: out})
