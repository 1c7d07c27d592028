"""Shared helpers of the stubgpu lane (see conftest.py): this process's version, architecture
and the stub's launch log."""

from __future__ import annotations

import ctypes
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

__all__ = ["API", "COMPILES_KERNELS", "DECISIONS", "SWITCHES", "SWITCHES_MODULES", "LaunchLog", "Stub", "child_command",
           "lane_arch", "lane_profile", "lane_version", "why_not", "without_compiler"]

#: The documented MIOpen switches of the "switches" processes (tools/run_tests.py): Debian's
#: builds lack the assembly sources of the Winograd RxS and other GCN asm solvers, and with them
#: enabled Find 2.0 aborts the process and gfx942 fusion compiles fail with status 7.
SWITCHES = {"MIOPEN_DEBUG_AMD_WINOGRAD_RXS_F2X3_G1": "0", "MIOPEN_DEBUG_GCN_ASM_KERNELS": "0"}
#: Test modules collected only in the "switches" processes (all others only in "default" ones).
SWITCHES_MODULES = frozenset({"test_switches.py"})

#: What the real library decided per (row, dtype, layout) in this process (test_decisions.py's
#: records; test_emulation_agrees.py compares the emulated device's decisions to them).
DECISIONS: dict[tuple[str, str, str], dict[str, Any]] = {}

#: miopenGetVersion() of each Debian build.
API = {"6.4.3": (3, 4, 0), "7.2.4": (3, 5, 1)}
#: Where each version compiles kernels: 3.5.1 in-process (hiprtc + comgr, in the sysroot);
#: 3.5.1 compiles in-process (hiprtc + comgr); 3.4.0 runs clang-21 at absolute paths, which
#: exist only inside tools/miopen_toolchain.py's root (the runner then sets HIPDNN_STUBGPU_TOOLCHAIN).
COMPILES_KERNELS = {"7.2.4": True, "6.4.3": False}


def without_compiler(stub: Stub, what: str) -> NoReturn:
    """End a test that needs a kernel build where MIOpen cannot build one (3.4.0 outside
    tools/miopen_toolchain.py's root: no clang-21): a skip with ``what`` locally, a FAILURE in
    CI (``HIPDNN_REQUIRE_STUBGPU=1``: the runner must provide the toolchain), never a pass."""
    import pytest

    reason = (f"MIOpen {stub.version} builds kernels with clang-21, which exists only inside "
              f"tools/miopen_toolchain.py's root (HIPDNN_STUBGPU_TOOLCHAIN unset): {what}")
    if os.environ.get("HIPDNN_REQUIRE_STUBGPU", "").strip() == "1":
        pytest.fail(f"{reason} [HIPDNN_REQUIRE_STUBGPU=1 requires this, so it fails instead of skipping]",
                    pytrace=False)
    pytest.skip(f"{reason} (would fail with HIPDNN_REQUIRE_STUBGPU=1)")


def lane_version() -> str:
    """The MIOpen Debian version of this process ("" outside the lane)."""
    return os.environ.get("HIPDNN_STUBGPU_VERSION", "")


def lane_profile() -> str:
    """ "switches" in the processes run with :data:`SWITCHES`, else "default"."""
    return os.environ.get("HIPDNN_STUBGPU_PROFILE", "default")


def child_command(code: str) -> list[str]:
    """A command running ``python -c code`` the way this process runs: under the sysroot's
    loader with the same library path (stub first), the venv's site dirs and tests/emulated."""
    argv = Path(f"/proc/{os.getpid()}/cmdline").read_bytes().split(b"\0")
    prefix = [a.decode() for a in argv[:3]] if len(argv) > 2 and argv[1] == b"--library-path" else []
    boot = ("import os, site, sys\n"
            "for d in os.environ.get('HIPDNN_SITE_DIRS', '').split(os.pathsep):\n"
            "    d and site.addsitedir(d)\n"
            f"sys.path[:0] = [{str(Path(__file__).resolve().parents[2])!r}, "
            f"{str(Path(__file__).resolve().parents[1] / 'emulated')!r}]\n")
    return [*prefix, os.path.realpath(sys.executable), "-c", boot + code]


def lane_arch() -> str:
    """The fake architecture of this process ("" outside the lane)."""
    return os.environ.get("HIPDNN_STUBGPU_ARCH", "")


def why_not() -> str | None:
    if not os.environ.get("HIPDNN_STUBGPU_DIR"):
        return ("the stubgpu lane runs under tools/run_tests.py (--lane stubgpu), which loads the "
                "real libMIOpen over the stub GPU of tools/stub_hip; HIPDNN_STUBGPU_DIR is unset")
    if lane_version() not in API:
        return f"HIPDNN_STUBGPU_VERSION={lane_version()!r}; expected one of {sorted(API)}"
    soname = "libamdhip64.so.6" if lane_version() == "6.4.3" else "libamdhip64.so.7"
    try:
        ctypes.CDLL(soname).hipdnn_stubgpu_lookup  # noqa: B018  (the stub's own export)
    except (OSError, AttributeError) as exc:
        return f"{soname} here is not the stub GPU ({exc})"
    return None


class LaunchLog:
    """The stub's JSON-lines log: ``mark()`` then ``since(mark)`` gives one test's events."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def mark(self) -> int:
        """Current end of the log."""
        return self.path.stat().st_size if self.path.exists() else 0

    def since(self, mark: int) -> list[dict[str, Any]]:
        """Events written after ``mark`` (by this process)."""
        if not self.path.exists():
            return []
        with self.path.open("rb") as f:
            f.seek(mark)
            lines = f.read().splitlines()
        pid = os.getpid()
        return [e for e in map(json.loads, lines) if e.get("pid") == pid]


@dataclass(frozen=True)
class Stub:
    """This process's setting: version, architecture, log."""

    version: str
    arch: str
    log: LaunchLog
    libdir: Path

    @property
    def compiles_kernels(self) -> bool:
        return COMPILES_KERNELS[self.version] or bool(os.environ.get("HIPDNN_STUBGPU_TOOLCHAIN"))




#: A child process building one seed row (``build(Row[row], DataType[dtype], layout)``) with
#: ``knobs``, executing it once, printing one ``RESULT {json}`` line: the plan, the MIOpen calls
#: that enumerate solutions, search or compile (counted on the bound library), the kernels launched
#: by the execute, and the build time. The plan store is whatever HIPDNN_PLAN_STORE says.
BUILD_CHILD = """
import json, os, time
from pathlib import Path
import numpy as np
import miopen_ctypes
from stubgpu_util import LaunchLog
lib = miopen_ctypes.load()
counts = {{}}
for name in list(vars(lib)):
    if name.endswith(("GetSolutionCount", "CompileSolution")) or name in (
            "miopenFindSolutions", "miopenLoadSolution", "miopenCompileFusionPlan"):
        real = getattr(lib, name)
        def counted(*args, _real=real, _name=name):
            counts[_name] = counts.get(_name, 0) + 1
            return _real(*args)
        setattr(lib, name, counted)
from test_miopen_engine_graphs import build
from hipdnn.engines.miopen import Row
from hipdnn.core.types import DataType
case = build(Row[{row!r}], DataType[{dtype!r}], {layout!r})
g = case.graph
t0 = time.perf_counter()
g.build_operation_graph(); g.create_execution_plans()
g.create_execution_plan_ext("MIOPEN_ENGINE", {knobs!r}); g.build_plans()
built = time.perf_counter() - t0
plan = g.plans[0]
log = LaunchLog(Path(os.environ["HIPDNN_STUBGPU_LOG"]))
mark = log.mark()
outs = {{r: np.full_like(a, np.nan) for r, a in case.empty_outputs().items()}}
pack = {{**case.inputs, **{{case.outputs[r]: a for r, a in outs.items()}}}}
ws = plan.workspace_size
t1 = time.perf_counter()
g.execute(pack, np.zeros(ws, np.uint8) if ws else None)
first = time.perf_counter() - t1
kernels = [e["kernel"] for e in log.since(mark) if e["event"] == "launch"]
print("RESULT " + json.dumps({{"plan": plan.name, "path": str(plan.path), "solution": plan.solution_id,
      "workspace": ws, "notes": list(plan.notes), "counts": counts, "kernels": kernels,
      "build_s": built, "execute_s": first, "engine": plan.engine.name,
      "miopen_engines": sum(1 for n, r in g.engine_reasons().items() if n.startswith("MIOPEN") and r is None)}}))
"""


def run_build_child(row: str, dtype: str, layout: str, knobs: dict[str, int],
                    env: dict[str, str] | None = None, timeout: float = 600) -> dict[str, Any]:
    """Run :data:`BUILD_CHILD` in a fresh process (the lane's loader and library path) and
    return its RESULT; AssertionError with the child's output when it fails."""
    import subprocess

    code = BUILD_CHILD.format(row=row, dtype=dtype, layout=layout, knobs=knobs)
    full_env = dict(os.environ, **(env or {}))
    full_env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(__file__).resolve().parent), full_env.get("PYTHONPATH", "")])
    proc = subprocess.run(child_command(code), capture_output=True, text=True, timeout=timeout,
                          env=full_env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
    result: dict[str, Any] = json.loads(lines[-1][len("RESULT "):])
    return result
