"""The fast paths: graph.bind / BoundExecution, execute's remembered int-pointer packs, the plan
cache keyed on engine objects, rebuilding an unchanged graph without re-validation, the registry
snapshot, and the remembered "MIOpen not found" (with refresh)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import hipdnn
import miopen_ctypes
from hipdnn.backend import engine as base
from hipdnn.backend import knobs
from hipdnn.backend import registry as engine_registry
from hipdnn.core.errors import PlanClosedError, VariantPackError
from hipdnn.engines import register, registry, unregister
from hipdnn.graph.graph import Graph
from hipdnn.pipeline.executor import BoundExecution
from miopen_ctypes import _discovery, loader
from miopen_ctypes.errors import MIOpenNotFoundError

F = hipdnn.DataType.FLOAT


def _relu_bias() -> tuple[Graph, hipdnn.Tensor, hipdnn.Tensor, hipdnn.Tensor]:
    g = Graph("relu_bias", io_data_type=F, compute_data_type=F, intermediate_data_type=F)
    x = g.tensor(dim=[2, 3, 4, 4], name="x")
    b = g.tensor(dim=[1, 3, 1, 1], name="b")
    y = g.relu(g.bias(x, b, name="add"), name="relu").set_output(True)
    return g, x, b, y


def _arrays(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((2, 3, 4, 4)).astype(np.float32),
            rng.standard_normal((1, 3, 1, 1)).astype(np.float32),
            np.zeros((2, 3, 4, 4), np.float32))


def _want(xa: np.ndarray, ba: np.ndarray) -> np.ndarray:
    return np.maximum(xa + ba, 0)


def test_bound_matches_execute(reference_only: None) -> None:
    g, x, b, y = _relu_bias()
    g.build()
    xa, ba, ya = _arrays()
    g.execute({x: xa, b: ba, y: ya})
    executed = ya.copy()
    ya[...] = -1
    bound = g.bind({x: xa, b: ba, y: ya})
    assert isinstance(bound, BoundExecution) and bound.plan is g.plans[0]
    bound()
    np.testing.assert_array_equal(ya, executed)
    np.testing.assert_allclose(ya, _want(xa, ba), rtol=1e-6, atol=1e-6)
    xa[...] = -xa  # contents may change between runs: the next run reads them
    bound()
    np.testing.assert_allclose(ya, _want(xa, ba), rtol=1e-6, atol=1e-6)
    assert "relu_bias" in repr(bound)
    g.close()


def test_bind_validates_like_execute(reference_only: None) -> None:
    g, x, b, y = _relu_bias()
    g.build()
    xa, ba, ya = _arrays()
    with pytest.raises(VariantPackError, match="missing 1 tensor"):
        g.bind({x: xa, y: ya})
    with pytest.raises(VariantPackError, match="'x'"):
        g.bind({x: xa.astype(np.float16), b: ba, y: ya})
    g.close()


def test_bound_after_close_raises(reference_only: None) -> None:
    g, x, b, y = _relu_bias()
    g.build()
    xa, ba, ya = _arrays()
    bound = g.bind({x: xa, b: ba, y: ya})
    bound()
    g.close()
    with pytest.raises(PlanClosedError, match="closed"):
        bound()
    with pytest.raises(PlanClosedError):
        g.bind({x: xa, b: ba, y: ya})


def test_plan_bind_default_closes_over_execute(reference_only: None) -> None:
    g, x, b, y = _relu_bias()
    g.build()
    xa, ba, ya = _arrays()
    plan = g.plans[0]
    buffers = {int(t.uid or 0): hipdnn.interop.buffers.resolve(a) for t, a in ((x, xa), (b, ba), (y, ya))}
    run = plan.bind(buffers, None, g.handle)
    run()
    np.testing.assert_allclose(ya, _want(xa, ba), rtol=1e-6, atol=1e-6)
    plan.close()
    with pytest.raises(PlanClosedError):
        run()
    g.close()


def test_execute_remembers_int_pointer_packs(reference_only: None) -> None:
    g, x, b, y = _relu_bias()
    g.build()
    xa, ba, ya = _arrays()
    pack = {x: xa.ctypes.data, b: ba.ctypes.data, y: ya.ctypes.data}
    g.execute(pack)
    np.testing.assert_allclose(ya, _want(xa, ba), rtol=1e-6, atol=1e-6)
    assert len(g._fast) == 1
    xa[...] = 1.0
    g.execute(dict(pack))  # equal pack: the remembered binding
    assert len(g._fast) == 1
    np.testing.assert_allclose(ya, _want(xa, ba), rtol=1e-6, atol=1e-6)
    by_uid = {t.uid: p for t, p in pack.items()}
    g.execute(by_uid)  # uid keys are another pack
    assert len(g._fast) == 2
    # equal-but-not-int values take the checked path (True == 1, 1.0 == 1 as dict keys)
    with pytest.raises(VariantPackError, match="Python float"):
        g.execute({**pack, x: float(pack[x])})
    g.select_plan(0)  # selection changes forget the bindings
    assert not g._fast
    g.close()
    with pytest.raises(PlanClosedError):
        g.execute(pack)


def test_a_remembered_pack_reuses_its_host_views(reference_only: None,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A remembered pack's buffers keep the host views made over them: a run it serves builds
    none, sees the arrays' new contents, keeps no caller array alive, and a pack of other
    arrays gets views of its own memory."""
    import gc
    import weakref

    from hipdnn.interop import buffers as buffers_module

    made: list[str] = []
    real = buffers_module._host_view

    def counting(buffer, tensor, np_dtype):  # type: ignore[no-untyped-def]
        made.append(tensor.name)
        return real(buffer, tensor, np_dtype)

    monkeypatch.setattr(buffers_module, "_host_view", counting)
    g, x, b, y = _relu_bias()
    g.build()
    xa, ba, ya = _arrays()
    g.execute({x: xa, b: ba, y: ya})
    assert sorted(made) == sorted([x.name, b.name, y.name])
    xa[...] = -xa
    g.execute({x: xa, b: ba, y: ya})  # the remembered pack: its views are reused
    assert len(made) == 3
    np.testing.assert_allclose(ya, _want(xa, ba), rtol=1e-6, atol=1e-6)
    xb, bb, yb = _arrays(1)
    g.execute({x: xb, b: bb, y: yb})  # other memory: views of its own
    assert len(made) == 6
    np.testing.assert_allclose(yb, _want(xb, bb), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ya, _want(xa, ba), rtol=1e-6, atol=1e-6)  # untouched
    gone = weakref.ref(xb)
    del xb
    gc.collect()
    assert gone() is None  # the kept views hold no caller array
    bound = g.bind({x: xa, b: ba, y: ya})  # an explicit binding keeps its views too
    made.clear()
    for sign in (1, -1):
        xa[...] = sign * np.abs(xa)
        bound()
        np.testing.assert_allclose(ya, _want(xa, ba), rtol=1e-6, atol=1e-6)
    assert len(made) == 3
    g.close()


def test_execute_binding_cache_is_bounded(reference_only: None) -> None:
    from hipdnn.pipeline.executor import FAST_PACKS

    g, x, b, y = _relu_bias()
    g.build()
    arrays = [_arrays(i) for i in range(FAST_PACKS + 3)]
    for xa, ba, ya in arrays:
        g.execute({x: xa.ctypes.data, b: ba.ctypes.data, y: ya.ctypes.data})
        np.testing.assert_allclose(ya, _want(xa, ba), rtol=1e-6, atol=1e-6)
    assert len(g._fast) == FAST_PACKS
    g.close()


def test_same_graph_rebuild_skips_validation(reference_only: None,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    g, x, b, y = _relu_bias()
    calls: list[int] = []
    validate = Graph.validate

    def counting(self: Graph) -> Graph:
        if self is g:
            calls.append(1)
        return validate(self)

    monkeypatch.setattr(Graph, "validate", counting)
    g.build()
    assert len(calls) == 1
    plan = g.plans[0]
    g.build()
    assert len(calls) == 1 and g.plans[0] is plan  # unchanged: no validation, same plan
    for t in (x, y):
        t.set_dim([2, 3, 5, 5]).set_stride([75, 25, 5, 1])
    g.build()
    assert len(calls) == 2 and g.plans[0] is not plan  # edited: validated, another structure
    xa = np.ones((2, 3, 5, 5), np.float32)
    ya = np.zeros_like(xa)
    g.execute({x: xa, b: np.ones((1, 3, 1, 1), np.float32), y: ya})
    assert float(ya.min()) == 2.0
    g.nodes[0].name = "renamed"  # names are part of what validation checks
    g.build()
    assert len(calls) == 3
    g.close()


def test_equal_graphs_share_the_cached_plan(reference_only: None) -> None:
    a, *_ = _relu_bias()
    b, *_ = _relu_bias()
    b.set_name("other")
    a.build()
    b.build()
    assert a.plans[0] is b.plans[0]
    a.close()
    b.close()


class _Twin(base.Engine):
    """A trivial engine; two objects share one name (and id)."""

    name = "P1_TWIN_ENGINE"
    rank = -10

    def check_support(self, graph: object, handle: object) -> str | None:
        return None

    def get_knobs(self, graph: object, handle: object) -> list[knobs.Knob]:
        return []

    def build_plan(self, graph: object, knobs: dict[str, knobs.KnobValue],
                   handle: object) -> base.ExecutionPlan:
        return _TwinPlan(self)


class _TwinPlan(base.ExecutionPlan):
    def _execute(self, buffers: object, workspace: object, handle: object) -> None:
        pass


def test_plan_cache_keys_on_engine_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    one, two = _Twin(), _Twin()
    assert one.engine_id == two.engine_id and one.cache_token != two.cache_token
    assert one.cache_token == one.cache_token
    monkeypatch.setattr(engine_registry, "_SUBSCRIBERS", [])  # nothing purges between them
    try:
        plans = []
        for engine in (one, two):
            register(engine)
            g, *_ = _relu_bias()
            g.build()
            plans.append(g.plans[0])
        assert plans[0].engine is one and plans[1].engine is two
    finally:
        unregister(two)
        monkeypatch.undo()
        hipdnn.clear_plan_cache()


def test_registry_snapshot_follows_register_and_unregister() -> None:
    twin = _Twin()
    register(twin)
    try:
        reg = registry()
        assert next(iter(reg.values())) is twin  # rank -10: first
        reg.clear()  # a snapshot: mutating it changes nothing
        assert twin.engine_id in registry()
    finally:
        unregister(twin)
    assert twin.engine_id not in registry()


@pytest.fixture
def no_discovery_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for var in loader.DISCOVERY_ENV:
        if var != "PATH":
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(loader, "_cache", {})
    monkeypatch.setattr(_discovery, "_failures", {})
    return monkeypatch


def test_miopen_not_found_is_remembered(no_discovery_env: pytest.MonkeyPatch,
                                        tmp_path: Path) -> None:
    searches: list[str | None] = []

    def failing(spec: object, path: str | None, not_found: type[Exception]) -> object:
        searches.append(path)
        raise not_found([("somewhere", "no such file")])

    no_discovery_env.setattr(_discovery, "load_first", failing)
    for _ in range(3):
        with pytest.raises(MIOpenNotFoundError, match="somewhere"):
            miopen_ctypes.load()
    assert searches == [None]  # one file-system search
    no_discovery_env.setenv("HIPDNN_MIOPEN_LIBRARY", str(tmp_path / "libMIOpen.so.1"))
    with pytest.raises(MIOpenNotFoundError):
        miopen_ctypes.load()
    assert searches == [None, None]  # the environment changed: searched again
    with pytest.raises(MIOpenNotFoundError):
        miopen_ctypes.load(refresh=True)
    assert searches == [None, None, None]


def test_refresh_finds_a_library_installed_later(no_discovery_env: pytest.MonkeyPatch) -> None:
    import ctypes.util

    # a library that is surely there: the C library (ucrtbase.dll, loaded in every python.exe)
    libc = "ucrtbase.dll" if sys.platform == "win32" else ctypes.util.find_library("c")
    assert libc
    installed: list[bool] = [False]

    def fake(spec: object, path: str | None, not_found: type[Exception]) -> object:
        if not installed[0]:
            raise not_found([("default ROCm prefix", "no such file")])
        return ctypes.CDLL(libc), libc

    no_discovery_env.setattr(_discovery, "load_first", fake)
    with pytest.raises(MIOpenNotFoundError):
        miopen_ctypes.load()
    installed[0] = True
    with pytest.raises(MIOpenNotFoundError):
        miopen_ctypes.load()  # still remembered
    lib = miopen_ctypes.load(refresh=True)
    assert lib.path == libc
    assert miopen_ctypes.load() is lib


def test_prepare_call_checks_once_and_converts(no_discovery_env: pytest.MonkeyPatch) -> None:
    import ctypes

    from miopen_ctypes.errors import MIOpenVersionError, NullArgumentError

    seen: list[tuple[object, ...]] = []

    def set_tensor(*args: object) -> int:
        seen.append(args)
        return 0

    lib = miopen_ctypes.MIOpenLibrary.from_functions({"miopenSetTensor": set_tensor},
                                                     version=(3, 4, 0))
    handle = ctypes.cast(0x10, miopen_ctypes.types.miopenHandle_t)
    desc = ctypes.cast(0x20, miopen_ctypes.types.miopenTensorDescriptor_t)
    cfunc, cargs = lib.prepare_call("miopenSetTensor", handle, desc, 0x30, 0x40)
    assert isinstance(cargs[2], ctypes.c_void_p) and cargs[2].value == 0x30
    assert cargs[0] is handle  # handles pass through unchanged
    cfunc(*cargs)
    cfunc(*cargs)
    assert len(seen) == 2
    with pytest.raises(NullArgumentError):
        lib.prepare_call("miopenSetTensor", None, desc, 0x30, 0x40)
    with pytest.raises(TypeError, match="takes 4 arguments"):
        lib.prepare_call("miopenSetTensor", handle, desc)
    with pytest.raises(MIOpenVersionError):
        lib.prepare_call("miopenCreate", None)


def test_engine_remembers_a_missing_library(no_discovery_env: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    from hipdnn.engines.miopen import MiopenEngine

    searches: list[object] = []

    def missing(spec: _discovery.LibrarySpec, path: str | None, not_found: type[Exception]) -> object:
        searches.append(spec.env_var)
        raise not_found([("default ROCm prefix: /opt/rocm/lib/libMIOpen.so.1", "no such file")])

    no_discovery_env.setattr(_discovery, "load_first", missing)
    engine = MiopenEngine()  # the default loaders: miopen_ctypes.load / load_hip
    graphs = []
    for size in (8, 9):  # two seed-row graphs (conv fprop, FP32 NCHW)
        g = Graph(io_data_type=F, compute_data_type=F)
        y = g.conv_fprop(g.tensor(dim=[1, 4, size, size]), g.tensor(dim=[4, 4, 3, 3]),
                         padding=[1, 1])
        y.set_output(True)
        graphs.append(g.validate())
    reasons = {engine.check_support(g, None) for g in graphs for _ in range(2)}
    assert len(reasons) == 1
    # one line (no search list: `info` and the exception have it)
    assert reasons.pop() == "MIOpen library not found (`python -m hipdnn info` says where hipdnn looked)"
    assert len(searches) == 1  # asked four times, searched once (discovery's one memo)
    no_discovery_env.setenv("ROCM_PATH", str(tmp_path))
    assert engine.check_support(graphs[0], None) is not None
    assert len(searches) == 2  # a discovery variable changed: searched again
    from hipdnn.engines.miopen.engine import Unavailable

    with pytest.raises(Unavailable):
        engine.libraries(refresh=True)
    assert len(searches) == 3
    with pytest.raises(MIOpenNotFoundError):
        miopen_ctypes.load(refresh=True)  # searches again; the engine shares that result
    assert len(searches) == 4
    assert engine.check_support(graphs[0], None) is not None
    assert len(searches) == 4
