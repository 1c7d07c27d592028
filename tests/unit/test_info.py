"""``python -m hipdnn info`` / ``--json`` / ``--version``: exits 0 without ROCm and says so,
lists every place tried with the fix hint, every engine with its reason, the env in effect."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import hipdnn

ROOT = Path(__file__).resolve().parents[2]
WINDOWS = sys.platform == "win32"
# a minimal environment; on Windows without a home folder (no USERPROFILE): info must still work
ENV = {"PATH": "/usr/bin:/bin", "HIPDNN_MIOPEN_LIBRARY": "/nonexistent/libMIOpen.so.1",
       "HIPDNN_HIP_LIBRARY": "/nonexistent/libamdhip64.so", "MIOPEN_FIND_MODE": "NORMAL",
       **({"SYSTEMROOT": os.environ["SYSTEMROOT"]} if WINDOWS else {})}
HINT = "HIPDNN_MIOPEN_LIBRARY=C:\\" if WINDOWS else "HIPDNN_MIOPEN_LIBRARY=/path/to"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hipdnn", *args], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=120)


def test_info_without_rocm_exits_0_and_says_why() -> None:
    res = run("info")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert out.startswith(f"hipdnn {hipdnn.__version__}\n")
    assert "MIOpen: not found; tried:\n  - $HIPDNN_MIOPEN_LIBRARY" in out
    assert "/nonexistent/libMIOpen.so.1" in out and HINT in out
    assert "HIP runtime: not found; tried:" in out
    assert "MIOPEN_ENGINE (rank 0): cannot run: MIOpen library not found" in out
    assert "CPU_REFERENCE_ENGINE (rank 1000): can run" in out
    assert "MIOPEN_FIND_MODE=NORMAL" in out and "kernel cache (MIOPEN_CUSTOM_CACHE_DIR)" in out
    assert "No ROCm here: hipdnn runs every graph on CPU_REFERENCE_ENGINE" in out


def test_info_json_and_version() -> None:
    res = run("info", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["hipdnn"] == hipdnn.__version__ and doc["miopen"]["found"] is False
    assert doc["miopen"]["tried"][0].startswith("$HIPDNN_MIOPEN_LIBRARY")
    assert [e["name"] for e in doc["engines"]] == ["MIOPEN_ENGINE", "MIOPEN_ENGINE_DETERMINISTIC",
                                                 "CPU_REFERENCE_ENGINE"]
    assert doc["engines"][2]["can_run"] is True and doc["engines"][0]["reason"]
    assert doc["engines"][1]["can_run"] is False and doc["engines"][1]["reason"]
    assert doc["environment"]["HIPDNN_MIOPEN_LIBRARY"] == "/nonexistent/libMIOpen.so.1"
    ver = run("--version")
    assert ver.returncode == 0 and ver.stdout.strip() == f"hipdnn {hipdnn.__version__}"


def test_info_says_how_the_reference_engine_runs() -> None:
    """Its thread count and which batchnorm implementation runs, and why (the switch wins)."""
    res = subprocess.run([sys.executable, "-m", "hipdnn", "info"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120,
                         env={**ENV, "HIPDNN_REFERENCE_THREADS": "3", "HIPDNN_REFERENCE_JIT": "0"})
    assert res.returncode == 0, res.stderr
    assert "    threads: 3 (HIPDNN_REFERENCE_THREADS" in res.stdout
    assert "    batchnorm: numpy passes (HIPDNN_REFERENCE_JIT=0)" in res.stdout
    assert "HIPDNN_REFERENCE_JIT=0" in res.stdout.split("environment: ")[1]


def test_an_engine_whose_runtime_details_raise_is_reported() -> None:
    from hipdnn.engines import registry
    from hipdnn.engines.reference.engine import ReferenceEngine
    from hipdnn.surfaces import diagnostics

    class Broken(ReferenceEngine):
        name = "BROKEN_DETAILS_ENGINE"

        def runtime_details(self) -> dict[str, str]:
            raise OSError("no /proc here")

    from hipdnn.engines import register, unregister
    engine = Broken()
    register(engine)
    try:
        rows = {r["name"]: r for r in diagnostics.collect()["engines"]}
    finally:
        unregister(engine)
    assert rows["BROKEN_DETAILS_ENGINE"]["details"] == {"runtime_details": "OSError: no /proc here"}
    assert engine.engine_id not in registry()
