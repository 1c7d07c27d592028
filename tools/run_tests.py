#!/usr/bin/env python3
"""The README's test command: the main pytest suite, then the real-libMIOpen lane per sysroot.

Lanes:
- ``main``: ``pytest tests --ignore=tests/live`` with this interpreter (unit, oracle, emulated
  device, conformance).
- ``live-<version>``: ``pytest tests/live`` under the sysroot's dynamic loader
  (``<root>/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 --library-path <sysroot libs>:<libpython
  dir> <real python> ...``) with ``HIPDNN_MIOPEN_LIBRARY`` pointing at that sysroot's libMIOpen.

The sysroots (tools/miopen_sysroot.py) are built first when ``HIPDNN_REQUIRE_LIVE=1`` or
``HIPDNN_REQUIRE_CONFORMANCE=1`` or ``--build-sysroots``; otherwise cached ones are used and the
live lanes are skipped, with the reason, when none is cached. Exit status is non-zero if any lane
fails; in CI (any ``HIPDNN_REQUIRE_*=1``) pytest's "no tests collected" (5) is a failure too.

    python tools/run_tests.py                       # everything available locally
    python tools/run_tests.py --build-sysroots      # fetch the real libraries first (~16 s, ~0.5 GB)
    python tools/run_tests.py --lane live -- -x -q  # only the live lanes, extra pytest arguments
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import site
import subprocess
import sys
import sysconfig
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["LaneResult", "live_command", "main"]

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import miopen_sysroot  # noqa: E402  (sibling tool, not part of the package)

REQUIRE_VARS = ("HIPDNN_REQUIRE_LIVE", "HIPDNN_REQUIRE_CONFORMANCE", "HIPDNN_REQUIRE_TORCH")
NO_TESTS = 5
_SUMMARY = re.compile(r"^=+ .*\bin [\d.]+s\b.*=+$")

# Run inside the sysroot: process the venv's .pth files (PYTHONPATH alone does not), then pytest.
_BOOTSTRAP = (
    "import os, site, sys\n"
    "for d in os.environ.get('HIPDNN_SITE_DIRS', '').split(os.pathsep):\n"
    "    d and site.addsitedir(d)\n"
    "import pytest\n"
    "sys.exit(pytest.main(sys.argv[1:]))\n"
)


class LaneResult:
    """Outcome of one lane: exit status and pytest's closing summary line."""

    def __init__(self, name: str, status: int | None, summary: str, note: str = "") -> None:
        self.name = name
        self.status = status  # None = lane skipped
        self.summary = summary
        self.note = note


def _ci() -> bool:
    return any(os.environ.get(v, "").strip() == "1" for v in REQUIRE_VARS)


def _run_lane(name: str, cmd: Sequence[str], env: dict[str, str]) -> LaneResult:
    shown = " ".join("<bootstrap>" if arg == _BOOTSTRAP else arg for arg in cmd)
    print(f"\n===== lane {name}: {shown}", flush=True)
    tail: collections.deque[str] = collections.deque(maxlen=60)
    start = time.monotonic()
    proc = subprocess.Popen(list(cmd), cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace")
    assert proc.stdout is not None
    for line in proc.stdout:
        sys.stdout.write(line)
        tail.append(line.rstrip("\n"))
    status = proc.wait()
    summary = next((ln for ln in reversed(tail) if _SUMMARY.match(ln)), tail[-1] if tail else "")
    note = f"{time.monotonic() - start:.0f}s"
    if status == NO_TESTS:
        note += "; no tests collected" + (" (a failure in CI)" if _ci() else "")
    return LaneResult(name, status, summary, note)


def python_libdir() -> str:
    """Directory holding libpython (shared builds) so the sysroot loader can find it."""
    libdir = sysconfig.get_config_var("LIBDIR") or str(Path(sys.base_prefix) / "lib")
    return str(libdir)


def site_dirs() -> list[str]:
    """This interpreter's site-packages directories (the venv's when run from a venv)."""
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        dirs.append(site.getusersitepackages())
    return dirs


def live_command(sysroot: miopen_sysroot.Sysroot, pytest_args: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """Command and environment running ``pytest tests/live`` under ``sysroot``'s loader."""
    real_python = os.path.realpath(sys.executable)
    libpath = f"{sysroot.libdir}{os.pathsep}{python_libdir()}"
    cmd = [str(sysroot.loader), "--library-path", libpath, real_python, "-c", _BOOTSTRAP,
           "tests/live", *pytest_args]
    env = dict(os.environ)
    sites = site_dirs()
    env["PYTHONPATH"] = os.pathsep.join([*[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p], *sites])
    env["HIPDNN_SITE_DIRS"] = os.pathsep.join(sites)
    env["HIPDNN_MIOPEN_LIBRARY"] = str(sysroot.libmiopen)
    env["HIPDNN_LIVE_VERSION"] = sysroot.version
    env["HIPDNN_LIVE_SYSROOT"] = str(sysroot.root)
    env.pop("PYTHONHOME", None)
    return cmd, env


def _sysroots(build: bool) -> tuple[dict[str, miopen_sysroot.Sysroot], str]:
    if build and sys.platform.startswith("linux"):
        try:
            return miopen_sysroot.ensure_all(), ""
        except Exception as exc:  # reported as a failed lane below
            return {}, f"building the sysroots failed: {exc}"
    found = {v: s for v in miopen_sysroot.SYSROOTS if (s := miopen_sysroot.find_sysroot(v)) is not None}
    return found, "" if found else "no real MIOpen sysroot cached (run with --build-sysroots)"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the lanes; return 0 only if every lane that ran passed (and none was required but skipped)."""
    ap = argparse.ArgumentParser(description="hipdnn-ctypes test runner (README's test command)")
    ap.add_argument("--build-sysroots", action="store_true", help="fetch/build the real MIOpen sysroots first")
    ap.add_argument("--lane", choices=["all", "main", "live"], default="all")
    ap.add_argument("--versions", nargs="*", default=list(miopen_sysroot.SYSROOTS))
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = ap.parse_args(argv)
    ci = _ci()
    need_build = args.build_sysroots or any(
        os.environ.get(v, "").strip() == "1" for v in ("HIPDNN_REQUIRE_LIVE", "HIPDNN_REQUIRE_CONFORMANCE"))
    results: list[LaneResult] = []
    sysroots, problem = _sysroots(need_build)
    if problem and need_build:
        results.append(LaneResult("sysroots", 1, "", problem))
    if args.lane in ("all", "main"):
        cmd = [sys.executable, "-m", "pytest", "tests", "--ignore=tests/live", *args.pytest_args]
        results.append(_run_lane("main", cmd, dict(os.environ)))
    if args.lane in ("all", "live"):
        live_required = os.environ.get("HIPDNN_REQUIRE_LIVE", "").strip() == "1"
        for version in args.versions:
            sysroot = sysroots.get(version)
            if not sys.platform.startswith("linux"):
                results.append(LaneResult(f"live-{version}", 1 if live_required else None, "",
                                          "the real-library lane needs Linux (a Debian sysroot)"))
                continue
            if sysroot is None:
                why = problem or f"no sysroot for MIOpen {version} in {miopen_sysroot.cache_dir()}"
                results.append(LaneResult(f"live-{version}", 1 if live_required else None, "", why))
                continue
            cmd, env = live_command(sysroot, args.pytest_args)
            results.append(_run_lane(f"live-{version}", cmd, env))
    print("\n===== summary", flush=True)
    failed = False
    for r in results:
        bad = r.status is not None and r.status != 0 and not (r.status == NO_TESTS and not ci)
        failed |= bad
        state = "SKIPPED" if r.status is None else ("FAILED" if bad else "ok")
        print(f"{r.name:14} {state:8} {r.summary}  {r.note}".rstrip(), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
