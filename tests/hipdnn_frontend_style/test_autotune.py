"""Engine discovery, plan specs, the per-plan-index API and autotune, as upstream's autotune
tests use them, on CPU_REFERENCE_ENGINE and on MIOPEN_ENGINE over the emulated device."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hipdnn.frontend as fe
from hipdnn.backend.engine import fnv1a_64
from hipdnn.backend.knobs import BENCHMARKING_KNOB

FLOAT = fe.DataType.FLOAT


class _NullHandle:
    def get(self) -> int:
        return 0


def conv_graph() -> tuple[fe.Graph, list[fe.Tensor]]:
    g = (fe.Graph().set_name("tune").set_io_data_type(FLOAT).set_compute_data_type(FLOAT)
         .set_intermediate_data_type(FLOAT))
    x = fe.Tensor.create([1, 2, 8, 8], FLOAT)
    w = fe.Tensor.create([4, 2, 3, 3], FLOAT)
    y = g.conv_fprop(x, w, fe.ConvFpropAttributes().set_padding([1, 1]).set_stride([1, 1])
                     .set_dilation([1, 1]))
    y.set_output(True)
    return g, [x, w, y]


def buffers(ts: list[fe.Tensor]) -> tuple[dict[int, int], list[fe.DeviceBuffer]]:
    rng = np.random.default_rng(0)
    bufs, pack = [], {}
    for t in ts:
        data = rng.standard_normal(t.get_dim()).astype(np.float32)
        buf = fe.DeviceBuffer(data.nbytes)
        buf.copy_from_host(data.tobytes())
        bufs.append(buf)
        pack[t.get_uid()] = buf.ptr()
    return pack, bufs


def test_struct_defaults_and_fields(tmp_path: Path) -> None:
    s = fe.KnobSetting("tile.size", 64)
    assert s.knob_id == "tile.size" and s.value == 64 and "tile.size" in repr(s)
    assert s == fe.KnobSetting("tile.size", 64) and s != fe.KnobSetting("tile.size", 128)
    cfg = fe.EngineConfigInfo()
    assert (cfg.engine_id, cfg.engine_name, cfg.knobs, cfg.supports_exhaustive,
            cfg.estimated_workspace_size) == (-1, "", [], False, 0)
    v = fe.EngineVariant()
    assert v.engine_id == -1 and v.knob_settings == {}
    spec = fe.EngineSweepSpec()
    assert spec.axes == [] and spec.fixed_settings == {} and fe.KnobSweepAxis().values == []
    at = fe.AutotuneConfig()
    assert (at.mode, at.strategy, at.warmup_iterations, at.timed_iterations, at.max_iterations,
            at.window_size, at.engine_id_filter) == (
        fe.TuneMode.STANDARD, fe.AutotuneStrategy.RUN_UNTIL_STABLE, 1, 10, 100, 3, [])
    assert at.stability_threshold == pytest.approx(0.05)
    assert at.priming_failure_policy == fe.PrimingFailurePolicy.ABORT_ON_PRIMING_FAILURE
    r = fe.AutotuneResult()
    assert (r.engine_id, r.rank, r.succeeded, r.compiled_plan_index) == (-1, -1, False, -1)
    with pytest.raises(AttributeError):
        r.engine_id = 5  # type: ignore[misc]
    st = fe.AutotuneStorageConfig()
    assert str(st.file_path) in ("", ".") and st.delete_all_existing_file_content is False
    with pytest.raises(TypeError):
        fe.Knob()  # type: ignore[call-arg]


def test_discovery_and_specs_need_an_operation_graph() -> None:
    g = fe.Graph()
    for call in (g.get_engine_configs, lambda: g.get_knobs_for_engine(0),
                 lambda: g.get_knob_lookup_for_engine(0), g.get_estimated_max_workspace_size):
        with pytest.raises(RuntimeError) as info:
            call()
        assert str(info.value)
    errors = [g.add_engine(0), g.add_engine_configs([]), g.add_engine_variants([]),
              g.add_engine_sweep([]), g.add_engines([]), g.add_all_engines()]
    assert all(e.is_bad() and e.get_message() for e in errors)
    assert "build_operation_graph" in errors[0].get_message()
    assert g.create_execution_plan_ext(0, [fe.KnobSetting("tile.size", 64)]).is_bad()


def test_filters_are_fluent_and_empty_plan_list_reports_out_of_bounds() -> None:
    g = fe.Graph()
    assert g.deselect_workspace_greater_than(1024) is g
    assert g.deselect_engines(["MIOPEN_ENGINE"]).deselect_engines([1234]) is g
    assert g.get_execution_plan_count() == 0 and g.get_autotune_workspace_size() == 0
    for accessor in (g.get_plan_name_at_index, g.get_workspace_size_plan_at_index):
        with pytest.raises(RuntimeError, match="out of bounds"):
            accessor(0)
    assert "out of bounds" in g.build_plan_at_index(0).get_message()
    assert "out of bounds" in g.execute_plan_at_index(_NullHandle(), {1: 1}, 0, 0).get_message()
    err, timing = g.execute_timed_ext(_NullHandle(), {}, 0)
    assert err.is_bad() and timing.elapsed_ms is None and not timing.timed_out
    assert timing.quality == fe.TimingQuality.INVALID


@pytest.mark.parametrize("field, value, name", [
    ("warmup_iterations", -1, "warmupIterations"), ("timed_iterations", 0, "timedIterations"),
    ("max_iterations", 0, "maxIterations"), ("window_size", 1, "windowSize"),
    ("stability_threshold", 0.0, "stabilityThreshold")])
def test_invalid_autotune_config_names_the_field(field: str, value: Any, name: str) -> None:
    cfg = fe.AutotuneConfig()
    if field == "timed_iterations":
        cfg.strategy = fe.AutotuneStrategy.FIXED_AVERAGE
    setattr(cfg, field, value)
    with pytest.raises(RuntimeError, match=name):
        fe.Graph().autotune(_NullHandle(), {1: 1}, config=cfg)


def test_null_handle_is_refused() -> None:
    with pytest.raises(RuntimeError, match="handle must not be null"):
        fe.Graph().autotune(_NullHandle(), {1: 1})


def test_manual_plan_index_loop_and_compiled_plan_autotune(engine: str) -> None:
    g, ts = conv_graph()
    handle = fe.create_handle()
    assert g.validate().is_good() and g.build_operation_graph(handle).is_good()
    configs = g.get_engine_configs()
    assert configs[0].engine_name == engine and configs[0].engine_id == fnv1a_64(engine)
    assert (BENCHMARKING_KNOB in g.get_knob_lookup_for_engine(configs[0].engine_id)) \
        == configs[0].supports_exhaustive
    assert g.create_execution_plans().is_good() and g.check_support().is_good()
    assert g.build_plans(fe.BuildPlanPolicy.ALL).is_good()
    count = g.get_execution_plan_count()
    assert count >= 1
    assert g.get_autotune_workspace_size() == max(
        g.get_workspace_size_plan_at_index(i) for i in range(count))
    pack, bufs = buffers(ts)
    ws = fe.DeviceBuffer(max(g.get_autotune_workspace_size(), 1))
    for i in range(count):
        assert g.execute_plan_at_index(handle, pack, ws.ptr(), i).is_good()
    last = count - 1
    assert g.build_plan_at_index(last).is_good()
    assert g.get_plan_name() == g.get_plan_name_at_index(last)  # indices do not move
    assert g.execute_plan_at_index(handle, pack, 0, count).is_bad()
    assert g.build_plan_at_index(count).is_bad()
    results = g.autotune(handle, pack, ws.ptr(), config=fe.AutotuneConfig(
        strategy=fe.AutotuneStrategy.FIXED_AVERAGE, timed_iterations=2))
    assert len(results) == count and results[0].rank == 0 and results[0].succeeded
    assert [r.rank for r in results] == list(range(count))
    assert all(r.min_time_ms > 0 and r.iterations_run == 2 for r in results)
    assert all(r.avg_time_ms >= r.min_time_ms and r.stddev_ms >= 0 for r in results)
    assert g.get_plan_name() == g.get_plan_name_at_index(results[0].compiled_plan_index)
    assert g.execute(handle, pack, ws.ptr()).is_good() and bufs


def test_plan_spec_autotune_and_storage(engine: str, tmp_path: Path) -> None:
    g, ts = conv_graph()
    handle = fe.create_handle()
    assert g.build_operation_graph(handle).is_good()
    assert g.add_all_engines().is_good()
    assert g.add_engine(fnv1a_64("NO_SUCH_ENGINE")).get_code() == fe.ErrorCode.GRAPH_NOT_SUPPORTED
    bad = g.add_engine(fnv1a_64(engine), [fe.KnobSetting("tile.size", 64)])
    assert bad.is_bad() and "tile.size" in bad.get_message()  # add_engine is strict, as upstream
    assert g.add_engine(fnv1a_64(engine)).is_good()
    size = g.get_estimated_max_workspace_size()
    pack, bufs = buffers(ts)
    ws = fe.DeviceBuffer(max(size, 1))
    out = tmp_path / "tune.json"
    results = g.autotune(handle, pack, ws.ptr(), workspace_size=size,
                         config=fe.AutotuneConfig(mode=fe.TuneMode.EXHAUSTIVE, window_size=2,
                                                  stability_threshold=10.0),
                         storage_config=fe.AutotuneStorageConfig(file_path=out))
    assert results and results[0].succeeded and results[0].converged
    assert all(r.mode_used == fe.TuneMode.EXHAUSTIVE and r.succeeded for r in results)
    assert [r.rank for r in results] == list(range(len(results)))
    assert all(a.min_time_ms <= b.min_time_ms for a, b in itertools.pairwise(results))
    mine = [r for r in results if r.engine_name == engine]
    assert len(mine) == 2  # add_all_engines() and add_engine() each added one spec
    if engine == "MIOPEN_ENGINE":  # MIOpen's Find ran: the spec got global.benchmarking = 1
        assert mine[0].supports_exhaustive and mine[0].ran_exhaustive
        assert fe.KnobSetting(BENCHMARKING_KNOB, 1) in mine[0].knob_settings
    else:
        assert not mine[0].ran_exhaustive and mine[0].exhaustive_not_run_reason
    saved = json.loads(out.read_text())["engine_overrides"]
    assert [o["engine_name"] for o in saved] == [results[0].engine_name]
    assert saved[0]["autotune_metadata"]["rank"] == 0
    assert g.execute(handle, pack, ws.ptr()).is_good() and bufs


def test_preferred_engine_and_hard_selection() -> None:
    g, _ = conv_graph()
    handle = fe.create_handle()
    g.set_preferred_engine_id_ext("NOT_AN_ENGINE")  # a preference: the others still run
    assert g.build_operation_graph(handle).is_good() and g.create_execution_plans().is_good()
    assert g.build_plans().is_good()
    cpu = fnv1a_64("CPU_REFERENCE_ENGINE")
    assert g.create_execution_plan_ext(cpu).is_good() and g.build_plans().is_good()
    assert g.get_execution_plan_engine_id() == cpu
    bad = g.create_execution_plan_ext(fnv1a_64("NOT_AN_ENGINE"))
    assert bad.is_bad() and "unknown engine id" in bad.get_message()
    assert g.get_behavior_notes_for_engine(cpu) == []


def test_knobs_have_upstream_fields(engine: str) -> None:
    g, _ = conv_graph()
    assert g.build_operation_graph(fe.create_handle()).is_good()
    engine_id = fnv1a_64(engine)
    knobs = g.get_knobs_for_engine(engine_id)
    assert set(g.get_knob_lookup_for_engine(engine_id)) == {k.knob_id for k in knobs}
    for knob in knobs:
        assert isinstance(knob, fe.Knob) and isinstance(knob.value_type, fe.KnobValueType)
        assert knob.is_deprecated is False
        assert knob.validate(fe.KnobSetting(knob.knob_id, knob.default_value)).is_good()
        assert knob.validate(fe.KnobSetting(knob.knob_id, "text")).is_bad()
    settings = [fe.KnobSetting(k.knob_id, k.default_value) for k in knobs]
    assert g.create_execution_plan_ext(engine_id, settings).is_good()
    assert g.build_plans().is_good() and g.get_execution_plan_engine_id() == engine_id
    with pytest.warns(UserWarning, match="no.such.knob"):  # ignored here, as upstream
        assert g.create_execution_plan_ext(engine_id, [fe.KnobSetting("no.such.knob", 1)]).is_good()


def test_spec_errors_and_nothing_to_benchmark() -> None:
    g, ts = conv_graph()
    handle = fe.create_handle()
    assert g.build_operation_graph(handle).is_good()
    assert "-999" in g.add_engine(-999).get_message()
    for err in (g.add_engine_configs([]), g.add_engines([]), g.add_engine_variants([]),
                g.add_engine_sweep([])):
        assert err.is_bad() and "empty" in err.get_message()
    sweep = fe.EngineSweepSpec(engine_id=fnv1a_64("CPU_REFERENCE_ENGINE"))
    assert g.add_engine_sweep([sweep]).is_good()  # no axes: the one combination
    pack, bufs = buffers(ts)
    partial = dict(pack)
    partial.pop(ts[-1].get_uid())
    with pytest.raises(RuntimeError, match="missing required non-virtual tensor UIDs"):
        g.autotune(handle, partial, 0, workspace_size=1 << 20)
    with pytest.raises(RuntimeError, match="excluded by engineIdFilter"):
        g.autotune(handle, pack, 0, workspace_size=1 << 20,
                   config=fe.AutotuneConfig(engine_id_filter=[12345]))
    g.deselect_engines(["CPU_REFERENCE_ENGINE"])
    with pytest.raises(RuntimeError, match="1 deselected"):
        g.autotune(handle, pack, 0, workspace_size=1 << 20)
    assert bufs


def test_name_accessors_take_an_optional_handle(engine: str) -> None:
    # Upstream reaches its handle-taking C++ overloads through a ``handle=`` keyword; the names
    # are the same with or without it, and a destroyed handle is refused like everywhere else.
    fresh = fe.Graph()
    for unbuilt in (lambda h: fresh.get_plan_name(handle=h),
                    lambda h: fresh.get_plan_name_at_index(0, handle=h),
                    lambda h: fresh.get_engine_configs(handle=h)):
        with pytest.raises(RuntimeError):
            unbuilt(None)
    g, _ = conv_graph()
    h = fe.create_handle()
    assert g.validate().is_good() and g.build_operation_graph(h).is_good()
    assert [c.engine_id for c in g.get_engine_configs(handle=h)] == \
        [c.engine_id for c in g.get_engine_configs(h)] == [c.engine_id for c in g.get_engine_configs()]
    assert g.create_execution_plans().is_good() and g.check_support().is_good()
    assert g.build_plans().is_good()
    assert g.get_plan_name(handle=h) == g.get_plan_name() == g.get_plan_name_at_index(0, handle=h)
    assert g.get_plan_name() == engine
    gone = fe.create_handle()
    fe.destroy_handle(gone)
    for call in (lambda: g.get_plan_name(handle=gone), lambda: g.get_engine_configs(handle=gone),
                 lambda: g.get_plan_name_at_index(0, handle=gone)):
        with pytest.raises(RuntimeError, match="destroyed"):
            call()


def test_workspace_cap_bars_plan_specs_and_says_so(engine: str) -> None:
    # deselect_workspace_greater_than() on the plan-spec path: a plan needing more than the cap
    # is not timed, and when nothing is left the error counts it as deselected, as upstream's
    # does; a plan within the cap (CPU_REFERENCE_ENGINE needs none) is timed as usual.
    def tuned(cap: int | None) -> tuple[fe.Graph, Any]:
        g, ts = conv_graph()
        handle = fe.create_handle()
        assert g.build_operation_graph(handle).is_good()
        assert g.add_engine(fnv1a_64(engine)).is_good()
        if cap is not None:
            assert g.deselect_workspace_greater_than(cap) is g
        pack, _bufs = buffers(ts)
        ws = fe.DeviceBuffer(1 << 25)
        try:
            return g, g.autotune(handle, pack, ws.ptr(), workspace_size=1 << 25,
                                 config=fe.AutotuneConfig(strategy=fe.AutotuneStrategy.FIXED_AVERAGE,
                                                          timed_iterations=1))
        except RuntimeError as exc:
            return g, exc

    _, free = tuned(None)
    assert isinstance(free, list) and free[0].succeeded
    need = free[0].workspace_size
    assert (need > 0) == (engine == "MIOPEN_ENGINE")  # both branches below are exercised
    if need == 0:
        _, capped = tuned(0)
        assert isinstance(capped, list) and capped[0].succeeded and capped[0].workspace_size == 0
        return
    g, capped = tuned(need - 1)
    assert isinstance(capped, RuntimeError)
    assert str(capped).startswith("Autotune failed: No execution plans were benchmarkable: ")
    assert "1 deselected (deselect_workspace_greater_than)" in str(capped)
    assert g.get_execution_plan_count() == 0
    _, fits = tuned(need)
    assert isinstance(fits, list) and fits[0].succeeded and fits[0].workspace_size == need
