"""Conformance lane: the binding against the real MIOpen 3.4 / 3.5 headers and libraries.

The headers and ``libMIOpen.so.1`` come from the sysroots that tools/miopen_sysroot.py builds
(tools/run_tests.py builds them first in CI). Without them, or without libclang, these tests
skip with the reason locally and fail when ``HIPDNN_REQUIRE_CONFORMANCE=1``.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import pytest

VERSIONS = ("6.4.3", "7.2.4")
_TOOL = Path(__file__).resolve().parents[2] / "tools" / "miopen_sysroot.py"


def sysroot_tool() -> ModuleType:
    """tools/miopen_sysroot.py as a module (it is test infrastructure, not part of the package)."""
    module = sys.modules.get("miopen_sysroot")
    if module is None:
        spec = importlib.util.spec_from_file_location("miopen_sysroot", _TOOL)
        assert spec is not None and spec.loader is not None, _TOOL
        module = importlib.util.module_from_spec(spec)
        sys.modules["miopen_sysroot"] = module
        spec.loader.exec_module(module)
    return module


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this directory carries the ``conformance`` marker."""
    for item in items:
        if "tests/conformance" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.conformance)


@pytest.fixture(scope="session")
def sysroots(require_or_skip: Callable[[str, str], NoReturn]) -> dict[str, Any]:
    """{version: Sysroot} for 6.4.3 and 7.2.4 (skip/fail when not built)."""
    tool = sysroot_tool()
    found = {v: tool.find_sysroot(v) for v in VERSIONS}
    missing = [v for v, s in found.items() if s is None]
    if missing:
        require_or_skip(
            "HIPDNN_REQUIRE_CONFORMANCE",
            f"MIOpen {missing} headers/libraries not in {tool.cache_dir()}; "
            "run `python tools/miopen_sysroot.py` (or tools/run_tests.py --build-sysroots)",
        )
    return found


@pytest.fixture(scope="session")
def headers(sysroots: dict[str, Any], require_or_skip: Callable[[str, str], NoReturn]) -> dict[str, Any]:
    """{version: HeaderModel} parsed from each sysroot's miopen.h."""
    try:
        import clang.cindex  # noqa: F401
    except ImportError as exc:
        require_or_skip("HIPDNN_REQUIRE_CONFORMANCE", f"libclang is not installed ({exc}); pip install '.[test]'")
    from miopen_header import parse_header

    return {v: parse_header(s.header) for v, s in sysroots.items()}


@pytest.fixture(scope="session")
def api_versions() -> dict[str, tuple[int, int, int]]:
    """miopenGetVersion() of each Debian build."""
    tool = sysroot_tool()
    return {v: tool.SYSROOTS[v].miopen_api for v in VERSIONS}


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print how many bound functions were checked against each header."""
    module = sys.modules.get("conformance_check")
    COVERAGE = getattr(module, "COVERAGE", None)
    if COVERAGE:
        text = ", ".join(f"{v}: {n[0]}/{n[1]}" if isinstance(n, tuple) else f"{v}: {n}"
                         for v, n in sorted(COVERAGE.items()))
        terminalreporter.write_line(f"conformance coverage, functions bound (declared + typed + exported): {text}")
