"""hipdnn.core.logs: HIPDNN_LOG_INFO/HIPDNN_LOG_FILE, the INFO build log naming why higher-ranked
engines were not used, DEBUG stage timings, engine_reasons()/check_support() and the
once-per-process FallbackWarning."""

from __future__ import annotations

import logging
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import hipdnn
from hipdnn.backend.engine import Engine
from hipdnn.core import logs

F = hipdnn.DataType.FLOAT
ROOT = Path(__file__).resolve().parents[2]


def conv_graph(name: str = "g") -> hipdnn.Graph:
    g = hipdnn.Graph(name=name, io_data_type=F, compute_data_type=F)
    x = g.tensor_like(np.zeros((1, 2, 3, 3), np.float32))
    w = g.tensor_like(np.zeros((2, 2, 1, 1), np.float32))
    g.conv_fprop(x, w, padding=[0, 0]).set_output(True)
    return g


def test_env_levels_and_file(tmp_path: Path) -> None:
    assert logs.configure_from_env({"HIPDNN_LOG_INFO": "0"}) is None
    path = tmp_path / "log.txt"
    try:
        handler = logs.configure_from_env({"HIPDNN_LOG_INFO": "1", "HIPDNN_LOG_FILE": str(path)})
        assert handler is not None and logs.logger.level == logging.INFO
        conv_graph("logged").build()
        handler.flush()
        text = path.read_text()
        assert "graph 'logged': built plan" in text and "[hipdnn INFO]" in text
        assert "build stages" not in text  # DEBUG only
        logs.configure_from_env({"HIPDNN_LOG_INFO": "2", "HIPDNN_LOG_FILE": str(path)})
        assert logs.logger.level == logging.DEBUG
        with pytest.raises(ValueError, match="valid values are 0"):
            logs.configure_from_env({"HIPDNN_LOG_INFO": "yes"})
    finally:
        logs.configure_from_env({"HIPDNN_LOG_INFO": "0"})
        logs.logger.setLevel(logging.NOTSET)


def test_env_switches_logging_on_at_import() -> None:
    code = ("import numpy as np, hipdnn\n"
            "F = hipdnn.DataType.FLOAT\n"
            "g = hipdnn.Graph(name='env', io_data_type=F, compute_data_type=F)\n"
            "x = g.tensor_like(np.zeros((1, 2, 3, 3), np.float32))\n"
            "w = g.tensor_like(np.zeros((2, 2, 1, 1), np.float32))\n"
            "g.conv_fprop(x, w, padding=[0, 0]).set_output(True)\n"
            "g.build()\n")
    env = {"HIPDNN_LOG_INFO": "2", "HIPDNN_LOG_FILE": "stdout", "PATH": "/usr/bin:/bin",
           "HIPDNN_MIOPEN_LIBRARY": "/nonexistent/libMIOpen.so.1"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, check=True).stdout
    assert "[hipdnn INFO] graph 'env': built plan CPU_REFERENCE_ENGINE" in out
    # the user pointed HIPDNN_MIOPEN_LIBRARY at a file: the one line names it and where to look
    assert ("MIOPEN_ENGINE not used: MIOpen library not found: tried $HIPDNN_MIOPEN_LIBRARY: "
            "/nonexistent/libMIOpen.so.1 (`python -m hipdnn info` says where hipdnn looked)") in out
    assert "[hipdnn DEBUG] graph 'env' build stages: operation graph" in out
    assert "runs numpy on the CPU, unfused, node by node: conv_fprop_0" in out


class _Declines(Engine):
    name = "AAA_TEST_DECLINES"
    rank = -100

    def check_support(self, graph, handle):  # type: ignore[no-untyped-def]
        return "test engine: declines everything. Fix: none needed"

    def get_knobs(self, graph, handle):  # type: ignore[no-untyped-def]
        return []

    def build_plan(self, graph, knobs, handle):  # type: ignore[no-untyped-def]
        raise AssertionError("never built")


def test_engine_reasons_and_info_log(caplog: pytest.LogCaptureFixture) -> None:
    engine = _Declines()
    hipdnn.engines.register(engine)
    try:
        g = conv_graph("reasons")
        report = g.check_support()
        assert report["AAA_TEST_DECLINES"] == "test engine: declines everything. Fix: none needed"
        assert report["CPU_REFERENCE_ENGINE"] is None
        assert next(iter(report)) == "AAA_TEST_DECLINES"  # preferred first
        with caplog.at_level(logging.INFO, logger="hipdnn"):
            g.build()
        assert g.engine_reasons() == report
        assert ("AAA_TEST_DECLINES not used: test engine: declines everything. Fix: none needed"
                in caplog.text)
    finally:
        hipdnn.engines.unregister(engine)


def test_fallback_warns_once_when_library_present(monkeypatch: pytest.MonkeyPatch) -> None:
    logs._reset_for_tests()
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            assert not logs.warn_fallback("CPU_REFERENCE_ENGINE", "MIOpen library not found: x") \
                or logs.amd_gpu_present()
            logs._reset_for_tests()
            assert logs.warn_fallback("CPU_REFERENCE_ENGINE", "no AMD GPU available: no device")
            assert not logs.warn_fallback("CPU_REFERENCE_ENGINE", "no AMD GPU available")
            logs._reset_for_tests()
            assert not logs.warn_fallback("CPU_REFERENCE_ENGINE", "graph X is not a seed-table "
                                          "pattern")  # the graph, not the machine
        hits = [w for w in seen if issubclass(w.category, hipdnn.FallbackWarning)]
        assert len(hits) == 1 and "no AMD GPU available: no device" in str(hits[0].message)
        logs._reset_for_tests()
        monkeypatch.setattr(logs, "amd_gpu_present", lambda: True)
        with pytest.warns(hipdnn.FallbackWarning, match="an AMD GPU is present"):
            assert logs.warn_fallback("CPU_REFERENCE_ENGINE", "MIOpen library not found: x")
    finally:
        logs._reset_for_tests()


def test_build_warns_once_when_miopen_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    from hipdnn.engines.miopen import ENGINE

    monkeypatch.setattr(ENGINE, "check_support",
                        lambda graph, handle: "no AMD GPU available: miopenCreate failed (test)")
    hipdnn.clear_plan_cache()
    logs._reset_for_tests()
    try:
        with pytest.warns(hipdnn.FallbackWarning, match="running on CPU_REFERENCE_ENGINE"):
            conv_graph("first").build()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            conv_graph("second").build()  # once per process
            logs._reset_for_tests()
            g = conv_graph("explicit")  # the user chose the engine: no warning
            g.create_execution_plan_ext("CPU_REFERENCE_ENGINE")
            g.build_plans()
    finally:
        logs._reset_for_tests()
        hipdnn.clear_plan_cache()
