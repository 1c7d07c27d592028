"""Root test configuration: optional lanes skip locally with a reason and fail when CI requires them.

CI sets ``HIPDNN_REQUIRE_LIVE=1``, ``HIPDNN_REQUIRE_CONFORMANCE=1``, ``HIPDNN_REQUIRE_TORCH=1``,
``HIPDNN_REQUIRE_AMDKERNELS=1``, ``HIPDNN_REQUIRE_STUBGPU=1``, ``HIPDNN_REQUIRE_WINDOWS=1``
(tests/windows, run under Wine by tools/windows_lane.py) and ``HIPDNN_REQUIRE_JIT=1`` (numba's
compiled batchnorm and convolution loops of the reference engine, the ``bn_path`` and
``conv_path`` fixtures).
A test needing something optional calls the ``require_or_skip`` fixture::

    def test_against_torch(require_or_skip):
        torch = pytest.importorskip("torch")   # also strict in CI, see the hook below
        if not real_library_available():
            require_or_skip("HIPDNN_REQUIRE_LIVE", "no real libMIOpen loadable")

Safety net: in CI (any requirement variable is 1) EVERY skip, in every lane, is reported as a
failure unless tests/skip_allowlist.py allows it for this lane (``HIPDNN_LANE``: "floors" and
"windows" are set by their tools, else "main") with its reason; so no test and no lane can
silently go empty in CI. A ``require_or_skip`` whose own variable is 1 fails by itself.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest

__all__ = ["REQUIRE_ENV", "current_lane", "is_required", "require_or_skip"]

# Tests build plans from scratch and assert on MIOpen's calls: the persistent plan store is off
# here (and in the processes tests start); its own tests choose a directory.
os.environ["HIPDNN_PLAN_STORE"] = "off"

#: Requirement variable per optional lane.
REQUIRE_ENV: dict[str, str] = {
    "live": "HIPDNN_REQUIRE_LIVE",
    "conformance": "HIPDNN_REQUIRE_CONFORMANCE",
    "torch": "HIPDNN_REQUIRE_TORCH",
    "amdkernels": "HIPDNN_REQUIRE_AMDKERNELS",
    "stubgpu": "HIPDNN_REQUIRE_STUBGPU",
    "windows": "HIPDNN_REQUIRE_WINDOWS",
    "jit": "HIPDNN_REQUIRE_JIT",
    "onednn": "HIPDNN_REQUIRE_ONEDNN",
}
_TESTS = Path(__file__).resolve().parent
if str(_TESTS) not in sys.path:  # tests/skip_allowlist.py
    sys.path.insert(0, str(_TESTS))


def is_required(env_var: str) -> bool:
    """True when ``env_var`` (one of REQUIRE_ENV's values) is set to 1."""
    if env_var not in REQUIRE_ENV.values():
        raise ValueError(f"unknown requirement variable {env_var!r}; known: {sorted(REQUIRE_ENV.values())}")
    return os.environ.get(env_var, "").strip() == "1"


def require_or_skip(env_var: str, reason: str) -> NoReturn:
    """Skip the current test with ``reason``, or fail it when ``env_var`` is 1."""
    if is_required(env_var):
        pytest.fail(f"{reason} [{env_var}=1 requires this, so it fails instead of skipping]", pytrace=False)
    pytest.skip(f"{reason} (would fail with {env_var}=1)")


@pytest.fixture(name="require_or_skip", scope="session")
def require_or_skip_fixture() -> Callable[[str, str], NoReturn]:
    """The ``require_or_skip(env_var, reason)`` helper, as a fixture (conftest is not importable)."""
    return require_or_skip


@pytest.fixture(params=["jit", "numpy"])
def bn_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a test on each of the reference batchnorm's two implementations: numba's compiled
    loops ("jit", hipdnn/engines/reference/_bn_jit.py; skipped without numba, required in CI)
    and the numpy passes ("numpy", what runs without numba)."""
    from hipdnn.engines.reference import _bn, _bn_jit

    if request.param == "numpy":
        monkeypatch.setenv(_bn_jit.ENV, "0")
        return "numpy"
    monkeypatch.delenv(_bn_jit.ENV, raising=False)
    monkeypatch.setattr(_bn, "JIT_MIN_SIZE", 0)  # small test tensors take the compiled loops too
    if _bn_jit.kernels() is None:
        require_or_skip("HIPDNN_REQUIRE_JIT", "numba is not installed (or could not compile the "
                        "reference batchnorm loops): pip install numba")
    return "jit"


@pytest.fixture(params=["onednn", "taps", "jit", "numpy"])
def conv_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a test on each of the reference convolution's implementations: oneDNN's
    ("onednn", hipdnn/engines/reference/_onednn.py, where it has a fast kernel, else the paths
    below; skipped without Intel's onednn-cpu-gomp wheel, required in CI), the tap GEMMs on
    numpy's OpenBLAS ("taps", _conv_taps.py; skipped where numpy's BLAS is not the bundled
    OpenBLAS, required in CI), the tiled im2col/col2im compiled by numba ("jit", _conv_jit.py;
    skipped without numba, required in CI) and the numpy im2col/col2im ("numpy"). Each forces
    its path onto every problem it can take; all but "onednn" switch oneDNN off."""
    from hipdnn.engines.reference import _bn_jit, _conv, _conv_jit, _conv_taps, _onednn

    if request.param == "onednn":
        monkeypatch.delenv(_onednn.ENV, raising=False)
        if _onednn.library() is None:
            require_or_skip("HIPDNN_REQUIRE_ONEDNN", "oneDNN is not installed: pip install "
                            "'hipdnn-ctypes[cpu]' (Intel's onednn-cpu-gomp wheel, Linux x86-64)")
        return "onednn"
    monkeypatch.setenv(_onednn.ENV, "0")
    if request.param == "taps":
        monkeypatch.setattr(_conv, "TAP_MIN_CHANNELS", 1)  # few-channel test data too
        if _conv_taps.usable() is None:
            require_or_skip("HIPDNN_REQUIRE_JIT", "numpy's BLAS is not its bundled OpenBLAS")
        return "taps"
    monkeypatch.setattr(_conv, "TAP_PATH", False)
    if request.param == "numpy":
        monkeypatch.setenv(_bn_jit.ENV, "0")
        return "numpy"
    monkeypatch.delenv(_bn_jit.ENV, raising=False)
    monkeypatch.setattr(_conv, "MIN_COMPILED_CHANNELS", 1)  # few-channel test data too
    monkeypatch.setattr(_conv, "COMPILED_RANKS", dict.fromkeys(("fprop", "dgrad", "wgrad"),
                                                                (1, 2, 3)))  # every problem
    if _conv_jit.kernels() is None:
        require_or_skip("HIPDNN_REQUIRE_JIT", "numba is not installed (or could not compile the "
                        "reference convolution loops): pip install numba")
    return "jit"


def _lane_of(path: Path, markers: set[str]) -> str | None:
    for lane in ("live", "conformance", "amdkernels", "stubgpu", "windows"):
        if lane in markers:
            return lane
        try:
            path.resolve().relative_to(_TESTS / lane)
            return lane
        except ValueError:
            continue
    return None


def _skip_reason(longrepr: Any) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def current_lane() -> str:
    """The lane this process runs (``HIPDNN_LANE``; "main" when unset)."""
    return os.environ.get("HIPDNN_LANE", "").strip() or "main"


def _strict_var(path: Path, markers: set[str], reason: str) -> str | None:
    """Why this skip is forbidden (the requirement variable(s) set to 1), or None."""
    if "requires this" in reason:
        return None  # require_or_skip already failed it
    lane = _lane_of(path, markers)
    if lane is not None and is_required(REQUIRE_ENV[lane]) and "would fail with" not in reason:
        return f"{REQUIRE_ENV[lane]}=1"
    ci = sorted(v for v in REQUIRE_ENV.values() if is_required(v))
    if not ci:
        return None  # locally a skip stays a skip
    from skip_allowlist import allowed

    try:
        rel = path.resolve().relative_to(_TESTS.parent).as_posix()
    except ValueError:
        rel = path.as_posix()
    if allowed(current_lane(), rel, reason) is not None:
        return None
    return (f"{'/'.join(ci)}=1 (CI) and tests/skip_allowlist.py allows no such skip in lane "
            f"{current_lane()!r}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Turn a forbidden skip (see module docstring) into a failure."""
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report.longrepr)
    var = _strict_var(Path(str(item.path)), {m.name for m in item.iter_markers()}, reason)
    if var is not None:
        report.outcome = "failed"
        report.longrepr = f"skipped ({reason}) but {var} forbids skipping here"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """Same for module-level skips (e.g. ``pytest.importorskip("torch")`` at import time)."""
    outcome = yield
    report = outcome.get_result()
    if not report.skipped:
        return
    reason = _skip_reason(report.longrepr)
    var = _strict_var(Path(str(collector.path)), set(), reason)
    if var is not None:
        report.outcome = "failed"
        report.longrepr = f"module skipped ({reason}) but {var} forbids skipping here"
