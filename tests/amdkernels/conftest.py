"""Lane amdkernels: the real libMIOpen 3.5.1 over the stub gfx1100 of tools/rdna3/stubhip, its
kernels run on tools/rdna3's emulator. tools/run_tests.py starts this directory under the
sysroot's loader with the stub first on the library path (``HIPDNN_AMDKERNELS_STUB`` names it).
Elsewhere every test skips with the reason, or fails when ``HIPDNN_REQUIRE_AMDKERNELS=1``.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

_ROOT = Path(__file__).resolve().parents[2]
for _p in (_ROOT / "tools", _ROOT / "tests" / "emulated"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this directory carries the ``amdkernels`` marker."""
    for item in items:
        if "tests/amdkernels" in str(item.path).replace(os.sep, "/"):
            item.add_marker(pytest.mark.amdkernels)


def _soname() -> str:
    """The HIP runtime name this process's libMIOpen links (3.5: .so.7, 3.4: .so.6)."""
    return os.environ.get("HIPDNN_AMDKERNELS_SONAME", "libamdhip64.so.7")


def _why_not() -> str | None:
    if not os.environ.get("HIPDNN_AMDKERNELS_STUB"):
        return ("the amdkernels lane runs under tools/run_tests.py (--lane amdkernels), which loads "
                "the real libMIOpen 3.5.1 over the stub gfx1100; HIPDNN_AMDKERNELS_STUB is unset")
    try:
        stub = ctypes.CDLL(_soname())
        stub.amdemu_set_launch_handler  # noqa: B018  (the stub's own entry point, not a real HIP)
    except (OSError, AttributeError) as exc:
        return f"{_soname()} here is not the emulator's stub ({exc})"
    return None


@pytest.fixture(scope="session")
def launches(require_or_skip: Callable[[str, str], NoReturn]) -> Iterator[Any]:
    """The emulator registered as the stub's launch handler (records every launch)."""
    why = _why_not()
    if why is not None:
        require_or_skip("HIPDNN_REQUIRE_AMDKERNELS", why)
    from rdna3.stubgpu import Launches

    recorder = Launches(ctypes.CDLL(_soname()))
    yield recorder
    recorder.close()
