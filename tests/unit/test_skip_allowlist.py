"""tests/skip_allowlist.py against the lanes that install less on purpose (floors, windows) and
against the skip sites in tests/; and the conftest guard: in CI every skip not on the list fails."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
for _p in (ROOT / "tests", ROOT / "tools"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import floors_lane  # noqa: E402
import windows_lane  # noqa: E402
from skip_allowlist import ALLOWED, LANES, allowed  # noqa: E402

#: What a lane lacks that is not a Python module.
PLATFORM = {"os.fork", "sh", "cc", "linux"}
#: Import name -> distribution name, where they differ.
DIST = {"mypy": "mypy", "torch": "torch", "numba": "numba", "ipykernel": "ipykernel"}


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~;\s\[]", r, maxsplit=1)[0].lower() for r in requirements}


def _floors_installs() -> set[str]:
    return _names(floors_lane.floor_requirements() + floors_lane._test_tools())


def _windows_installs() -> set[str]:
    return _names(floors_lane.floor_requirements()) | set(windows_lane.TEST_TOOLS) | {
        n.split("==")[0] for n in windows_lane.LANE_PINS.values()}


def _test_extra() -> set[str]:
    return _names(floors_lane._project()["optional-dependencies"]["test"])  # type: ignore[index]


@pytest.mark.parametrize("entry", ALLOWED, ids=lambda e: f"{'+'.join(e.lanes)}:{e.where}:{e.missing}")
def test_each_entry_is_what_its_lanes_leave_out(entry: Any) -> None:
    assert entry.lanes and set(entry.lanes) <= set(LANES), entry
    assert entry.why.strip(), entry
    if entry.missing in PLATFORM:
        # a platform feature: only the Windows lane lacks one
        assert entry.lanes == ("windows",), entry
        return
    dist = DIST.get(entry.missing, entry.missing)
    installs = {"floors": _floors_installs(), "windows": _windows_installs()}
    for lane in entry.lanes:
        assert dist not in installs[lane], f"{lane} installs {dist}: {entry} allows a skip it cannot have"
    # ... and CI's main lane installs it (the test extra), so the skipped tests run there
    assert dist in _test_extra(), f"{dist} is not in the test extra: no lane runs {entry.where}"


@pytest.mark.parametrize("entry", ALLOWED, ids=lambda e: f"{'+'.join(e.lanes)}:{e.where}:{e.missing}")
def test_each_entry_has_a_skip_site(entry: Any) -> None:
    """The reason text is at a skip site under ``where`` (a stale entry fails here)."""
    files = [p for p in (ROOT / "tests").rglob("*.py") if p.relative_to(ROOT).as_posix().startswith(entry.where)]
    assert files, f"no test file under {entry.where}"
    imported = re.match(r"could not import '([\w.]+)'", entry.reason)
    needle = f'importorskip("{imported.group(1)}"' if imported else entry.reason
    hits = [p for p in files if needle in p.read_text(encoding="utf-8")]
    assert hits, f"no skip site says {needle!r} under {entry.where}"


def test_no_main_lane_entries() -> None:
    """The main lane (and live, stubgpu, amdkernels: run by tools/run_tests.py, "main") may not
    skip anything in CI."""
    for entry in ALLOWED:
        assert allowed("main", entry.where + "x.py", entry.reason) is None


def _conftest() -> Any:
    spec = importlib.util.spec_from_file_location("_root_conftest", ROOT / "tests" / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _clear(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset every requirement variable the conftest knows (and the lane): a "local" run."""
    for var in (*_conftest().REQUIRE_ENV.values(), "HIPDNN_LANE"):
        monkeypatch.delenv(var, raising=False)


def test_guard_fails_every_skip_in_ci_unless_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    guard = _conftest()
    unit = ROOT / "tests" / "unit" / "test_binding_stubs.py"
    oracle = ROOT / "tests" / "oracle" / "test_notebook.py"
    reason = "mypy is in the test extra; the floors/windows lanes run without it"
    _clear(monkeypatch)
    assert guard._strict_var(unit, set(), reason) is None  # locally: a skip
    monkeypatch.setenv("HIPDNN_REQUIRE_LIVE", "1")  # CI, main lane
    assert "skip_allowlist" in guard._strict_var(unit, set(), reason)
    assert "skip_allowlist" in guard._strict_var(oracle, set(), "anything at all")
    # a require_or_skip of a variable this lane unset is still a skip CI must allow
    assert guard._strict_var(unit, set(), "numba is not installed (would fail with HIPDNN_REQUIRE_JIT=1)")
    monkeypatch.setenv("HIPDNN_LANE", "floors")
    assert guard._strict_var(unit, set(), reason) is None
    assert guard._strict_var(unit, set(), "numba is not installed (would fail with HIPDNN_REQUIRE_JIT=1)") is None
    assert guard._strict_var(oracle, set(), "nbformat is in the test extra")  # floors runs no oracle
    monkeypatch.setenv("HIPDNN_LANE", "windows")
    assert guard._strict_var(oracle, set(), "nbformat is in the test extra") is None
    assert guard._strict_var(unit, set(), "os.fork is POSIX-only")  # not at this file
