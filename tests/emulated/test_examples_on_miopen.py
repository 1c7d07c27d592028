"""The examples' MIOPEN_ENGINE branches, run on the emulated device (MIOpen 3.4 and 3.5): every
seed-row example runs on MIOPEN_ENGINE and passes its own check; the knob examples exercise their
knob (both benchmarking values; the workspace range and the KnobError below it); autotune times
both engines' plans."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEED = sorted(p.stem for p in EXAMPLES.glob("seed_*.py"))


def _run(name: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    sys.path.insert(0, str(EXAMPLES))
    try:
        spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        rc = module.main()
    finally:
        sys.path.remove(str(EXAMPLES))
    return rc, capsys.readouterr().out


def test_nine_seed_rows() -> None:
    assert len(SEED) == 9


@pytest.mark.parametrize("name", SEED)
def test_seed_example_runs_on_miopen(name: str, emulated_miopen_engine: Any,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _run(name, capsys)
    assert rc == 0, out
    assert "engine: MIOPEN_ENGINE" in out and "FAIL" not in out, out
    assert "not used: CPU_REFERENCE_ENGINE: can run this graph, ranked lower" in out


def test_knob_benchmarking_example(emulated_miopen_engine: Any,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _run("knob_benchmarking", capsys)
    assert rc == 0, out
    assert "not exercised" not in out
    assert "y (global.benchmarking=0)" in out and "y (global.benchmarking=1)" in out


def test_knob_workspace_example(emulated_miopen_engine: Any,
                                capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _run("knob_workspace_size_limit", capsys)
    assert rc == 0, out
    assert "not exercised" not in out and "global.workspace_size_limit: default" in out


def test_autotune_example_times_both_engines(emulated_miopen_engine: Any,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _run("autotune", capsys)
    assert rc == 0, out
    assert "MIOPEN_ENGINE" in out and "CPU_REFERENCE_ENGINE:3 node(s): " in out


def test_cudnn_frontend_port_runs_on_miopen(emulated_miopen_engine: Any,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _run("cudnn_frontend_port", capsys)
    assert rc == 0, out
    assert "engine: MIOPEN_ENGINE" in out and "FAIL" not in out, out


OTHERS = ["conv_fprop_nhwc", "conv_bias_relu_fusion", "batchnorm_train_backward",
          "engines_and_knobs", "json_round_trip"]


@pytest.mark.parametrize("name", OTHERS)
def test_other_examples_pass_with_miopen_registered(name: str, emulated_miopen_engine: Any,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _run(name, capsys)
    assert rc == 0, out
    assert "PASS" in out and "FAIL" not in out, out


#: AMD provider rows beyond the seed: each example runs on MIOPEN_ENGINE and passes its check.
PROVIDER = ["provider_bn_inference_relu", "provider_activation", "provider_binary", "provider_conv1d_bn"]


@pytest.mark.parametrize("name", PROVIDER)
def test_provider_example_runs_on_miopen(name: str, emulated_miopen_engine: Any,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _run(name, capsys)
    assert rc == 0, out
    assert "engine: MIOPEN_ENGINE " in out and "engine: CPU_REFERENCE_ENGINE" not in out, out
    assert "PASS" in out and "FAIL" not in out, out


def test_norm_example_runs_on_miopen(emulated_device: Any, emulated_miopen_engine: Any,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Layer norm and RMS norm, forward and backward, on MIOPEN_ENGINE; on MIOpen 3.4 (no
    miopenLayerNormBackward) the layer norm backward on the CPU engine, with that reason."""
    rc, out = _run("beyond_layer_norm_rms_norm", capsys)
    assert rc == 0 and "PASS" in out and "FAIL" not in out, out
    engines = [line.split()[1] for line in out.splitlines() if line.startswith("engine: ")]
    if emulated_device.version_name == "3.4":
        assert engines == ["MIOPEN_ENGINE", "CPU_REFERENCE_ENGINE", "MIOPEN_ENGINE", "MIOPEN_ENGINE"], out
        assert "needs miopenLayerNormBackward" in out, out
    else:
        assert engines == ["MIOPEN_ENGINE"] * 4, out


def test_deterministic_example_runs_on_its_engine(emulated_device: Any, emulated_miopen_engine: Any,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from hipdnn.backend.registry import register, registry
    from hipdnn.engines.miopen import MiopenDeterministicEngine

    engine = MiopenDeterministicEngine(miopen_loader=lambda: emulated_device.miopen,
                                       hip_loader=lambda: emulated_device.hip)
    previous = registry()[engine.engine_id]
    register(engine)
    try:
        rc, out = _run("provider_deterministic_conv", capsys)
    finally:
        register(previous)
    assert rc == 0, out
    assert "engine: MIOPEN_ENGINE_DETERMINISTIC" in out and "FAIL" not in out, out
