"""What ``python -m hipdnn`` prints on a machine without ROCm: the demo says "MIOpen not found"
once, as a note, not per graph and not as an error; ``--engine`` failures describe what the
user asked; ``engines`` prints the unsigned ids; a closed pipe ends the output quietly; the
numba install hint names a requirement any pip can satisfy."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from hipdnn.engines import registry
from hipdnn.engines.reference import _bn, _bn_jit

ROOT = Path(__file__).resolve().parents[2]
# no ROCm anywhere this process looks (an empty ROCM_PATH folder, no loader-path library)
ENV = {**os.environ, "HIPDNN_MIOPEN_LIBRARY": "", "ROCM_PATH": str(ROOT / "nonexistent-rocm"),
       "HIP_PATH": str(ROOT / "nonexistent-rocm")}


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hipdnn", *args], cwd=ROOT, env=env or ENV,
                          capture_output=True, text=True, timeout=180)


def test_demo_says_miopen_is_missing_once_and_as_a_note() -> None:
    res = run("demo")
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    missing = [line for line in lines if "MIOpen library not found" in line]
    assert len(missing) == 1, res.stdout  # once, not once per graph
    assert "every graph runs on CPU_REFERENCE_ENGINE" in missing[0]
    assert "python -m hipdnn info" in missing[0]
    # nothing that reads as an error: no search list, no "Fix:", no FAIL, no traceback
    for word in ("tried ", "Fix:", "FAIL", "Traceback", "Error"):
        assert word not in res.stdout, (word, res.stdout)
    assert lines[-1].startswith("PASS: 9/9")


def test_demo_with_miopen_engine_asked_for_says_what_was_asked() -> None:
    res = run("demo", "--engine", "MIOPEN_ENGINE")
    assert res.returncode == 1
    fail = [line for line in res.stdout.splitlines() if line.startswith("FAIL")]
    assert fail == [fail[0]] and "--engine MIOPEN_ENGINE was asked for" in fail[0], res.stdout
    assert "MIOpen library not found" in fail[0]
    assert "deselect" not in res.stdout  # a call the user never made


def test_engines_prints_unsigned_fnv_ids_and_the_int64() -> None:
    res = run("engines")
    assert res.returncode == 0, res.stderr
    for eng in registry().values():
        unsigned = eng.engine_id & (2**64 - 1)
        row = next(line for line in res.stdout.splitlines() if line.startswith(eng.name + " "))
        assert re.search(rf"\bid +{unsigned} ", row) and f"int64 {eng.engine_id})" in row, row
        # the FNV-1a 64 of the name, computed here independently
        h = 0xCBF29CE484222325
        for byte in eng.name.encode():
            h = ((h ^ byte) * 0x100000001B3) % 2**64
        assert unsigned == h and f"0x{h:016x}" in row


def test_a_closed_pipe_ends_the_output_without_a_traceback() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "hipdnn", "info", "--json"], cwd=ROOT,
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away after one line, as `| head -1` does
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


def test_the_numba_hint_is_installable_from_anywhere(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from importlib import metadata

    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(_bn.metadata, "version", missing)
    monkeypatch.delenv(_bn_jit.ENV, raising=False)
    text = _bn.implementation()
    assert "pip install 'numba>=0.61'" in text and "hipdnn-ctypes[" not in text
    # the hint names what the jit extra holds
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f'jit = ["{_bn_jit.REQUIREMENT}"]' in pyproject
