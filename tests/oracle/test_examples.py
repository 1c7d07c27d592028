"""Every runnable example and ``python -m hipdnn demo`` exit 0 and report PASS; the demo exits
non-zero when a result is wrong."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hipdnn.__main__ as cli
from hipdnn.engines.reference import kernels

ROOT = Path(__file__).resolve().parents[2]
# miopen_direct_* call libMIOpen itself (no CPU fallback): tests/live/test_direct_examples.py runs them
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.py")
                  if not p.name.startswith(("_", "miopen_direct_")))


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_and_checks_itself(script: Path) -> None:
    proc = _run([str(script)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout and "FAIL" not in proc.stdout


def test_demo_command_passes_and_names_the_engine() -> None:
    proc = _run(["-m", "hipdnn", "demo"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ran on: " in proc.stdout
    assert "PASS: 9/9" in proc.stdout


def test_demo_exits_nonzero_when_a_result_is_wrong(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    real = kernels.relu_forward

    def off_by_one(*args: object, **kwargs: object) -> np.ndarray:
        return real(*args, **kwargs) + np.float32(1.0)  # type: ignore[arg-type]
    monkeypatch.setattr(kernels, "relu_forward", off_by_one)
    assert cli.main(["demo", "--engine", "CPU_REFERENCE_ENGINE"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "PASS" not in out.splitlines()[-1]


def test_demo_with_an_engine_that_cannot_run_fails_with_the_reason(tmp_path: Path) -> None:
    """MIOpen made unloadable (HIPDNN_MIOPEN_LIBRARY names a file that does not exist), so the
    outcome is known on every machine: exit 1, FAIL naming the engine and why (the file)."""
    missing = tmp_path / "libMIOpen.so.1"
    env = {**os.environ, "HIPDNN_MIOPEN_LIBRARY": str(missing),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "hipdnn", "demo", "--engine", "MIOPEN_ENGINE"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    fail = [ln for ln in proc.stdout.splitlines() if ln.startswith("FAIL")]
    assert fail and "MIOPEN_ENGINE" in fail[0] and str(missing) in fail[0], proc.stdout
    assert "PASS" not in proc.stdout and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
