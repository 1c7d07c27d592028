"""The skips CI allows, each with its reason (tests/conftest.py's guard reads this file).

In CI (any ``HIPDNN_REQUIRE_*=1``) every skip in every lane is a failure unless an entry here
matches it: the lane (``HIPDNN_LANE``, set by tools/floors_lane.py and tools/windows_lane.py;
"main" when unset), the test's path and a text of its skip reason. Only the lanes that install
less on purpose have entries: ``floors`` (tests/unit with the lowest runtime dependencies and
the test tools pytest, hypothesis, setuptools, wheel: no torch, numba, mypy, notebook) and
``windows`` (Windows CPython under Wine: no fork, no POSIX sh, no C compiler, no Linux sysroots,
no mypy, no notebook kernel). tests/unit/test_skip_allowlist.py checks every entry against what
those lanes install and against the skip sites in tests/.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ALLOWED", "LANES", "AllowedSkip", "allowed"]

#: The lanes that install less on purpose; no other lane may skip in CI.
LANES = ("floors", "windows")


@dataclass(frozen=True)
class AllowedSkip:
    """A skip that is allowed in CI in ``lanes``, for tests under ``where``, whose reason
    contains ``reason``; ``missing`` names what the lane lacks (a module, or a platform
    feature ``os.fork``, ``sh``, ``cc``, ``linux``); ``why`` is shown in the test report."""

    lanes: tuple[str, ...]
    where: str
    reason: str
    missing: str
    why: str


ALLOWED: tuple[AllowedSkip, ...] = (
    AllowedSkip(("floors",), "tests/unit", "could not import 'torch'", "torch",
                "floors leaves torch out (large; an interop extra): the main lane runs these"),
    AllowedSkip(("floors", "windows"), "tests/", "numba is not installed", "numba",
                "floors leaves numba out (the jit extra) and the Windows lane installs pytest, "
                "hypothesis and torch only: the numpy batchnorm passes run there"),
    AllowedSkip(("floors", "windows"), "tests/", "oneDNN is not installed", "onednn-cpu-gomp",
                "floors leaves the cpu extra out, and Intel's onednn-cpu-gomp wheel is Linux "
                "x86-64 only: the tap GEMMs and numpy paths run there"),
    AllowedSkip(("floors", "windows"), "tests/unit/test_binding_stubs.py", "mypy is in the test extra",
                "mypy", "mypy checks the generated stubs on Linux; floors and windows install no mypy"),
    AllowedSkip(("windows",), "tests/oracle/test_notebook.py", "is in the test extra", "ipykernel",
                "the notebook runs on a Linux Jupyter kernel; the Windows lane installs none"),
    AllowedSkip(("windows",), "tests/unit/test_reference_bn_jit.py", "os.fork is POSIX-only", "os.fork",
                "Windows has no fork()"),
    AllowedSkip(("windows",), "tests/oracle/test_kernels.py", "needs os.fork", "os.fork",
                "Windows has no fork()"),
    AllowedSkip(("windows",), "tests/unit/test_miopen_toolchain.py", "needs a POSIX sh", "sh",
                "the toolchain root's scripts are POSIX sh; Windows has none"),
    AllowedSkip(("windows",), "tests/emulated/test_miopen_engine_real_library.py",
                "sysroots run only on Linux", "linux", "the real libMIOpen sysroots are Linux ELF"),
    AllowedSkip(("windows",), "tests/emulated/test_bench_", "no cc/gcc on this machine", "cc",
                "the benchmarks compile a C no-op library with the machine's cc; Wine's CPython has none"),
)


def allowed(lane: str, path: str, reason: str) -> AllowedSkip | None:
    """The entry allowing a skip of the test at ``path`` (relative, '/'-separated) with
    ``reason`` in ``lane``, or None."""
    for entry in ALLOWED:
        if lane in entry.lanes and path.startswith(entry.where) and entry.reason in reason:
            return entry
    return None
