"""Live lane: the real libMIOpen, run by tools/run_tests.py under a sysroot's dynamic loader.

The runner sets ``HIPDNN_MIOPEN_LIBRARY`` (the binding's env override) to the sysroot's
``libMIOpen.so.1`` and ``HIPDNN_LIVE_VERSION`` to its Debian version. Without a loadable real
library every test here skips with the reason, or fails when ``HIPDNN_REQUIRE_LIVE=1``.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from typing import Any, NoReturn

import pytest

#: miopenGetVersion() of each Debian build the runner knows.
EXPECTED_API = {"6.4.3": (3, 4, 0), "7.2.4": (3, 5, 1)}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this directory carries the ``live`` marker."""
    for item in items:
        if "tests/live" in str(item.path).replace(os.sep, "/"):
            item.add_marker(pytest.mark.live)


def _why_not_loadable() -> str | None:
    path = os.environ.get("HIPDNN_MIOPEN_LIBRARY")
    if not path:
        return ("no real libMIOpen: HIPDNN_MIOPEN_LIBRARY is unset (run this lane through "
                "`python tools/run_tests.py --build-sysroots`)")
    try:
        ctypes.CDLL(path)
    except OSError as exc:
        return f"real libMIOpen at {path} does not load here ({exc}); run it under its sysroot loader via tools/run_tests.py"
    return None


@pytest.fixture(scope="session")
def live_library_path(require_or_skip: Callable[[str, str], NoReturn]) -> str:
    """Path of the real libMIOpen.so.1 (skips/fails when none is loadable)."""
    why = _why_not_loadable()
    if why is not None:
        require_or_skip("HIPDNN_REQUIRE_LIVE", why)
    return os.environ["HIPDNN_MIOPEN_LIBRARY"]


@pytest.fixture(scope="session")
def live_version(live_library_path: str) -> str:
    """Debian version of the sysroot under test ("6.4.3" or "7.2.4")."""
    version = os.environ.get("HIPDNN_LIVE_VERSION", "")
    if version not in EXPECTED_API:
        pytest.fail(f"HIPDNN_LIVE_VERSION={version!r}; expected one of {sorted(EXPECTED_API)}")
    return version


@pytest.fixture(scope="session")
def expected_api(live_version: str) -> tuple[int, int, int]:
    """miopenGetVersion() this sysroot's library must report."""
    return EXPECTED_API[live_version]


@pytest.fixture(scope="session")
def lib(live_library_path: str) -> Any:
    """The project's own loader, pointed at the real library by HIPDNN_MIOPEN_LIBRARY."""
    import miopen_ctypes

    return miopen_ctypes.load()
