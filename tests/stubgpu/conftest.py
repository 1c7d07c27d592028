"""Lane stubgpu: the REAL libMIOpen (3.4.0 / 3.5.1) over the stub GPU of tools/stub_hip.

tools/run_tests.py starts this directory once per version x fake architecture (gfx90a, gfx942)
under the sysroot's loader, with the stub ``libamdhip64`` + ``librocblas`` first on the library
path. It sets ``HIPDNN_STUBGPU_DIR`` (the stub), ``HIPDNN_STUBGPU_ARCH``, ``HIPDNN_STUBGPU_VERSION``
and ``HIPDNN_STUBGPU_LOG`` (the stub's JSON-lines record of allocations, copies, module loads and
kernel launches). MIOpen's host side runs for real; kernels are compiled for real (3.5.1) and
launched into the log, never executed: no number is computed in this lane.

Elsewhere every test skips with the reason, or fails when ``HIPDNN_REQUIRE_STUBGPU=1``. Tests
that apply to one version or architecture only are not collected in the other processes (a
skip would be a failure in CI).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest

_ROOT = Path(__file__).resolve().parents[2]
for _p in (_ROOT / "tools", _ROOT / "tests" / "emulated"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from stubgpu_util import (  # noqa: E402
    SWITCHES_MODULES,
    LaunchLog,
    Stub,
    lane_arch,
    lane_profile,
    lane_version,
    why_not,
)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Collect the switches-only modules in the "switches" processes, the others elsewhere."""
    name = collection_path.name
    if not (name.startswith("test_") and name.endswith(".py")):
        return None
    return True if (name in SWITCHES_MODULES) != (lane_profile() == "switches") else None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this directory carries the ``stubgpu`` marker."""
    for item in items:
        if "tests/stubgpu" in str(item.path).replace(os.sep, "/"):
            item.add_marker(pytest.mark.stubgpu)


@pytest.fixture(scope="session")
def stub(require_or_skip: Callable[[str, str], NoReturn]) -> Stub:
    """The lane's setting (skips, or fails in CI, outside the lane)."""
    why = why_not()
    if why is not None:
        require_or_skip("HIPDNN_REQUIRE_STUBGPU", why)
    return Stub(lane_version(), lane_arch(), LaunchLog(Path(os.environ["HIPDNN_STUBGPU_LOG"])),
                Path(os.environ["HIPDNN_STUBGPU_DIR"]))


@pytest.fixture(scope="session")
def lib(stub: Stub) -> Any:
    """The real libMIOpen through the project's own binding."""
    import miopen_ctypes

    return miopen_ctypes.load()


@pytest.fixture(scope="session")
def hip(stub: Stub) -> Any:
    """The stub HIP runtime through the project's own binding."""
    from miopen_ctypes.hip import load_hip

    return load_hip()
