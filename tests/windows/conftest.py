"""tests/windows: discovery with real DLLs on Windows (in CI: Windows CPython under Wine).

The stand-in DLLs are built by tools/windows_lane.py (see tests/windows/win_scenarios.py); every
test here is required (fails instead of skipping) when ``HIPDNN_REQUIRE_WINDOWS=1``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest
from win_scenarios import Standins


@pytest.fixture(scope="session")
def standins(require_or_skip: Callable[[str, str], NoReturn]) -> Standins:
    if sys.platform != "win32":
        pytest.skip("Windows only: run by the windows lane (python tools/run_tests.py --lane windows)")
    folder = os.environ.get("HIPDNN_WINDOWS_STANDINS", "")
    if not folder or not (Path(folder) / "good" / "MIOpen.dll").is_file():
        require_or_skip("HIPDNN_REQUIRE_WINDOWS", "no stand-in DLLs: $HIPDNN_WINDOWS_STANDINS is unset or "
                        "empty (tools/windows_lane.py builds them with x86_64-w64-mingw32-gcc)")
    return Standins(Path(folder))


@pytest.fixture
def no_rocm(tmp_path: Path) -> dict[str, str]:
    """A scenario environment with no ROCm anywhere: an empty Program Files."""
    (tmp_path / "pf").mkdir()
    return {"ProgramFiles": str(tmp_path / "pf")}
