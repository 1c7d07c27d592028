#!/usr/bin/env python3
"""The README's test command: the main pytest suite, then the real-libMIOpen lane per sysroot.

Lanes:
- ``main``: ``pytest tests --ignore=tests/live`` with this interpreter (unit, oracle, emulated
  device, conformance).
- ``amdkernels`` (and ``amdkernels-6.4.3``): ``pytest tests/amdkernels`` under the MIOpen 3.5.1
  (7.2.4) sysroot's loader (3.4.0: the same, inside tools/miopen_toolchain.py's root, where its
  clang-21 kernel compilers exist) with the stub gfx1100 ``libamdhip64`` of
  ``tools/rdna3/stubhip`` (compiled with gcc) first on the library path: AMD's kernels, compiled
  by the real MIOpen, run on the ``tools/rdna3`` emulator. Kernel caches (MIOpen user db,
  comgr) persist under ``<cache>/../rdna3/miopen-<version>``.
- ``stubgpu-<version>-<arch>``: ``pytest tests/stubgpu`` under the sysroot's loader with the stub
  GPU of ``tools/stub_hip`` (a gfx90a or gfx942 ``libamdhip64`` + a rocblas whose calls succeed,
  compiled with the machine's C compiler) first on the library path: the REAL libMIOpen decides
  (solutions, fusion compiles, Find 2.0, kernel builds); launches are recorded, nothing computed.
  A third process per version (``-gfx942-switches``) runs with the documented MIOpen switches.
  The 6.4.3 processes run inside tools/miopen_toolchain.py's root (3.4.0 builds kernels there).
- ``windows``: tools/windows_lane.py: the built wheel on a Windows CPython 3.11 under Debian's
  ``wine64`` (cached under ``<cache>/../windows``): the demo, the examples, and ``tests/unit``,
  ``tests/oracle``, ``tests/emulated`` and the Windows discovery tests ``tests/windows`` (stand-in
  DLLs built with ``x86_64-w64-mingw32-gcc``). Skipped with the reason when Wine or MinGW is
  missing; required when ``HIPDNN_REQUIRE_WINDOWS=1``.
- ``floors``: tools/floors_lane.py: ``tests/unit`` in a cached venv holding the lowest version of
  every runtime dependency pyproject.toml declares (``name>=X`` installed as ``name==X``).
- ``live-<version>``: ``pytest tests/live`` under the sysroot's dynamic loader
  (``<root>/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 --library-path <sysroot libs>:<libpython
  dir> <real python> ...``) with ``HIPDNN_MIOPEN_LIBRARY`` pointing at that sysroot's libMIOpen.

The sysroots (tools/miopen_sysroot.py) are built (or reused from the cache) first on Linux, so
every lane runs by default; ``--no-build-sysroots`` uses only cached ones. When they cannot be
built here (no apt archive reachable, not Linux), the lanes that need them are skipped with the
reason, which the summary prints; in CI (any ``HIPDNN_REQUIRE_*=1``) that is a failure. Exit
status is non-zero if any lane fails; in CI pytest's "no tests collected" (5) is a failure too.

    python tools/run_tests.py                       # every lane (fetches the real libraries once: ~20 s, ~0.5 GB)
    python tools/run_tests.py --no-build-sysroots   # only what is cached
    python tools/run_tests.py --lane live -- -x -q  # only the live lanes, extra pytest arguments
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["LaneResult", "live_command", "main"]

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import miopen_sysroot  # noqa: E402  (sibling tool, not part of the package)
import windows_lane  # noqa: E402

REQUIRE_VARS = ("HIPDNN_REQUIRE_LIVE", "HIPDNN_REQUIRE_CONFORMANCE", "HIPDNN_REQUIRE_TORCH",
                "HIPDNN_REQUIRE_AMDKERNELS", "HIPDNN_REQUIRE_STUBGPU", "HIPDNN_REQUIRE_WINDOWS",
                "HIPDNN_REQUIRE_JIT", "HIPDNN_REQUIRE_ONEDNN")
#: MIOpen builds of the amdkernels lane: 3.5.1 compiles its kernels in-process (hiprtc + comgr),
#: 3.4.0 with clang-21 inside tools/miopen_toolchain.py's root. The first is lane "amdkernels".
AMDKERNELS_VERSIONS = ("7.2.4", "6.4.3")
AMDKERNELS_VERSION = AMDKERNELS_VERSIONS[0]
# MIOpen settings of the amdkernels lane: no GEMM (rocBLAS is a stub), and no Winograd RxS
# f2x3 (Debian's build lacks its assembly source, so a fusion plan choosing it fails with status 7).
AMDKERNELS_ENV = {"MIOPEN_DEBUG_CONV_GEMM": "0", "MIOPEN_DEBUG_AMD_WINOGRAD_RXS_F2X3_G1": "0",
                  "AMD_COMGR_CACHE": "1"}
#: The stubgpu lane's processes per MIOpen version (tools/stub_hip): fake arch x profile.
#: "switches" runs tests/stubgpu's switches-only modules with STUBGPU_SWITCHES set (its own
#: caches): Debian's builds lack the GCN asm kernel sources, so with those solvers enabled
#: Find 2.0 aborts the process (an uncaught miopen::Exception) and gfx942 fusion compiles fail.
STUBGPU_RUNS = (("gfx90a", "default"), ("gfx942", "default"), ("gfx942", "switches"))
STUBGPU_SWITCHES = {"MIOPEN_DEBUG_AMD_WINOGRAD_RXS_F2X3_G1": "0", "MIOPEN_DEBUG_GCN_ASM_KERNELS": "0"}
NO_TESTS = 5
#: ``--help``'s lane table: what each lane checks, what it fetches, and how long it took on the
#: 2-core development machine (a warm cache; the first run adds the downloads).
LANES_HELP = """\
lanes (all run by default, in this order; times: 2 cores, caches warm):
  main        unit, oracle (vs PyTorch CPU), emulated MIOpen device, adversarial catalog,
              cudnn-frontend and hipdnn_frontend style ports, header conformance
              (libclang vs the real miopen.h), examples, README/docs code blocks.
              Needs: the [test] extra (PyTorch CPU, numba, libclang, ...).   ~4 min
  live        the real libMIOpen 3.4.0 and 3.5.1 (Debian's libmiopen1 6.4.3 / 7.2.4,
              unpacked into ~/.cache/hipdnn-ctypes/miopen: ~0.5 GB, ~20 s to fetch
              once) loaded through our ctypes table: handle-free calls.  ~10 s
  stubgpu     the real libMIOpen over a stub gfx90a/gfx942 HIP runtime (built with
              gcc): MIOpen's own solution lists, Find 2.0, fusion and kernel
              compiles; launches recorded, nothing computed. 3.4.0 runs inside an
              unpacked clang toolchain root (fetched once).       ~12 min
  amdkernels  AMD's kernels, compiled by the real MIOpen 3.5.1 and 3.4.0 for gfx1100,
              executed on tools/rdna3's emulator, checked against PyTorch.  ~5 min
  windows     the built wheel on Windows CPython 3.11 under Wine (needs apt packages
              wine64 and gcc-mingw-w64-x86-64; Python's Windows installer cached once):
              demo, examples, unit/oracle/emulated tests.            ~4 min
  floors      tests/unit with the lowest declared version of every runtime
              dependency (a cached venv; pip downloads those versions once).  ~1 min
A lane this machine cannot run is SKIPPED with the reason in the summary; with any
HIPDNN_REQUIRE_*=1 set (as .ci/run does) that is a failure.
"""
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


def amdkernels_command(sysroot: miopen_sysroot.Sysroot, pytest_args: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """Command and environment running ``pytest tests/amdkernels`` on the stub gfx1100."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from rdna3.stubgpu import SONAMES, build_stub

    cache = miopen_sysroot.cache_dir().parent / "rdna3" / f"miopen-{sysroot.version}"
    cache.mkdir(parents=True, exist_ok=True)
    soname = SONAMES[sysroot.version]
    stub = build_stub(cache / "stub", sysroot.root / "hip-dev" / "usr" / "include", soname=soname)
    cmd, env = live_command(sysroot, pytest_args)
    cmd[2] = f"{stub}{os.pathsep}{cmd[2]}"  # --library-path: the stub before the real libamdhip64
    cmd[cmd.index("tests/live")] = "tests/amdkernels"
    env.update(AMDKERNELS_ENV)
    env.update({"HIPDNN_AMDKERNELS_STUB": str(stub), "HIPDNN_AMDKERNELS_SONAME": soname,
                "HIPDNN_AMDKERNELS_VERSION": sysroot.version,
                "MIOPEN_USER_DB_PATH": str(cache),
                "MIOPEN_CUSTOM_CACHE_DIR": str(cache), "AMD_COMGR_CACHE_DIR": str(cache / "comgr")})
    return cmd, env


def stubgpu_command(sysroot: miopen_sysroot.Sysroot, arch: str, profile: str,
                    pytest_args: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """Command and environment running ``pytest tests/stubgpu`` on the stub ``arch`` GPU.

    The stub libamdhip64 + librocblas (tools/stub_hip, compiled here) come first on the
    loader's path; MIOpen's user db, kernel cache and comgr's cache persist per version x arch
    under ``<cache>/<version>/stubgpu/<arch>``; the user db and the stub's launch log are fresh, in
    a ``run-*`` folder of this run's own there.
    """
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from stub_hip.build import build_stubgpu

    stub = build_stubgpu(sysroot)
    work = miopen_sysroot.cache_dir() / sysroot.version / "stubgpu" / (
        arch if profile == "default" else f"{arch}-{profile}")
    for sub in ("kcache", "comgr"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    # a fresh user db and launch log per run, in a folder of this run's own (removed when the lane
    # ends): Find 2.0 records in a shared db would steer later immediate-mode choices, and two runs
    # at once (two checkouts on one machine) must not truncate each other's log
    run = Path(tempfile.mkdtemp(prefix="run-", dir=work))
    userdb = run / "userdb"
    userdb.mkdir()
    log = run / "stubgpu-log.jsonl"
    cmd, env = live_command(sysroot, pytest_args)
    cmd[2] = f"{stub.libdir}{os.pathsep}{cmd[2]}"  # --library-path: the stub before the real HIP
    cmd[cmd.index("tests/live")] = "tests/stubgpu"
    env.update({"HIPDNN_STUBGPU_DIR": str(stub.libdir), "HIPDNN_STUBGPU_ARCH": arch,
                "HIPDNN_STUBGPU_VERSION": sysroot.version, "HIPDNN_STUBGPU_LOG": str(log),
                "MIOPEN_USER_DB_PATH": str(userdb), "MIOPEN_CUSTOM_CACHE_DIR": str(work / "kcache"),
                "AMD_COMGR_CACHE": "1", "AMD_COMGR_CACHE_DIR": str(work / "comgr")})
    env.pop("HIPDNN_STUBGPU_HOOK", None)
    for name in STUBGPU_SWITCHES:
        env.pop(name, None)
    env["HIPDNN_STUBGPU_PROFILE"] = profile
    if profile == "switches":
        env.update(STUBGPU_SWITCHES)
    return cmd, env


def with_toolchain(version: str, cmd: list[str], env: dict[str, str],
                   require_var: str = "HIPDNN_REQUIRE_STUBGPU") -> tuple[list[str], dict[str, str], str]:
    """``cmd`` wrapped to run where MIOpen ``version`` finds its kernel compilers, if it needs
    tools/miopen_toolchain.py's root (3.4.0 does); returns (cmd, env, note). When that root
    cannot be built or entered, the command runs as is (the tests then expect MIOpen's failure
    to build a kernel) and the note says why; when ``require_var`` is 1 (CI) that raises."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import miopen_toolchain

    if version not in miopen_toolchain.TOOLCHAINS:
        return cmd, env, ""
    try:
        wrapped = miopen_toolchain.wrap(version, cmd)
    except (miopen_toolchain.ToolchainUnavailable, RuntimeError, OSError) as exc:
        if os.environ.get(require_var, "").strip() == "1":
            raise RuntimeError(f"MIOpen {version}'s kernel toolchain: {exc}") from exc
        return cmd, env, f"MIOpen {version} runs without its kernel compilers ({exc})"
    env = dict(env, HIPDNN_STUBGPU_TOOLCHAIN=str(miopen_toolchain.find_toolchain(version)))
    return wrapped, env, ""


def _stubgpu_lanes(sysroots: dict[str, miopen_sysroot.Sysroot], versions: Sequence[str], problem: str,
                   pytest_args: Sequence[str]) -> list[LaneResult]:
    required = os.environ.get("HIPDNN_REQUIRE_STUBGPU", "").strip() == "1"
    out: list[LaneResult] = []
    for version in versions:
        for arch, profile in STUBGPU_RUNS:
            name = f"stubgpu-{version}-{arch}" + ("" if profile == "default" else f"-{profile}")
            sysroot = sysroots.get(version)
            why = ("the stubgpu lane needs Linux (a Debian sysroot)" if not sys.platform.startswith("linux")
                   else None if sysroot is not None
                   else problem or f"no sysroot for MIOpen {version} in {miopen_sysroot.cache_dir()}")
            if why is None and sysroot is not None:
                try:
                    cmd, env = stubgpu_command(sysroot, arch, profile, pytest_args)
                    cmd, env, note = with_toolchain(version, cmd, env)
                    if note:  # no kernel compilers: a kernel cached by a run that had them
                        kcache = Path(env["MIOPEN_CUSTOM_CACHE_DIR"])  # would change the answers
                        shutil.rmtree(kcache, ignore_errors=True)
                        kcache.mkdir(parents=True)
                except (OSError, RuntimeError, subprocess.CalledProcessError) as exc:  # no C compiler, ...
                    why = f"building the stub GPU failed: {exc}"
                else:
                    try:
                        out.append(_run_lane(name + ("" if not note else "-nocompiler"), cmd, env))
                    finally:
                        shutil.rmtree(Path(env["HIPDNN_STUBGPU_LOG"]).parent, ignore_errors=True)
                    if note:
                        print(f"[run_tests] {name}: {note}", flush=True)
                    continue
            out.append(LaneResult(name, 1 if required else None, "", str(why)))
    return out


def _sysroots(build: bool) -> tuple[dict[str, miopen_sysroot.Sysroot], str]:
    if build and sys.platform.startswith("linux"):
        try:
            return miopen_sysroot.ensure_all(), ""
        except Exception as exc:  # reported as a failed lane below
            return {}, f"building the sysroots failed: {exc}"
    found = {v: s for v in miopen_sysroot.SYSROOTS if (s := miopen_sysroot.find_sysroot(v)) is not None}
    return found, "" if found else "no real MIOpen sysroot cached (run without --no-build-sysroots)"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the lanes; return 0 only if every lane that ran passed (and none was required but skipped)."""
    ap = argparse.ArgumentParser(description="hipdnn-ctypes test runner (README's test command)",
                                 epilog=LANES_HELP,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-sysroots", action="store_true",
                    help="fetch/build the real MIOpen sysroots first (the default; kept for old command lines)")
    ap.add_argument("--no-build-sysroots", action="store_true",
                    help="use only cached sysroots (lanes without one are skipped with the reason)")
    ap.add_argument("--lane", choices=["all", "main", "live", "amdkernels", "stubgpu", "windows", "floors"],
                    help="run one lane (default: all; see the table below)",
                    default="all")
    ap.add_argument("--versions", nargs="*", default=list(miopen_sysroot.SYSROOTS),
                    metavar="DEB_VERSION",
                    help="the Debian libmiopen1 versions whose real libraries the live, stubgpu "
                         "and amdkernels lanes use: 6.4.3 (MIOpen 3.4.0), 7.2.4 (MIOpen 3.5.1); "
                         f"default: {' '.join(miopen_sysroot.SYSROOTS)}")
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = ap.parse_args(argv)
    ci = _ci()
    required = any(
        os.environ.get(v, "").strip() == "1"
        for v in ("HIPDNN_REQUIRE_LIVE", "HIPDNN_REQUIRE_CONFORMANCE", "HIPDNN_REQUIRE_AMDKERNELS",
                  "HIPDNN_REQUIRE_STUBGPU"))
    needs_sysroots = args.lane in ("all", "main", "live", "amdkernels", "stubgpu")  # main: conformance
    need_build = needs_sysroots and (required or not args.no_build_sysroots)
    results: list[LaneResult] = []
    sysroots, problem = _sysroots(need_build)
    if problem and need_build:  # a failure in CI; locally the lanes say why they were skipped
        results.append(LaneResult("sysroots", 1 if required else None, "", problem))
    if args.lane in ("all", "main"):
        cmd = [sys.executable, "-m", "pytest", "tests", "--ignore=tests/live", "--ignore=tests/amdkernels",
               "--ignore=tests/stubgpu", "--ignore=tests/windows", *args.pytest_args]
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
    if args.lane in ("all", "amdkernels"):
        for version in AMDKERNELS_VERSIONS:
            if version in args.versions:
                results.append(_amdkernels_lane(version, sysroots.get(version), problem,
                                                args.pytest_args))
    if args.lane in ("all", "stubgpu"):
        results += _stubgpu_lanes(sysroots, args.versions, problem, args.pytest_args)
    if args.lane in ("all", "floors"):
        cmd = [sys.executable, str(REPO / "tools" / "floors_lane.py"), "--", *args.pytest_args]
        results.append(_run_lane("floors", cmd, dict(os.environ)))
    if args.lane in ("all", "windows"):
        results.append(_windows_lane(args.pytest_args))
    print("\n===== summary", flush=True)
    failed = False
    for r in results:
        bad = r.status is not None and r.status != 0 and not (r.status == NO_TESTS and not ci)
        failed |= bad
        state = "SKIPPED" if r.status is None else ("FAILED" if bad else "ok")
        print(f"{r.name:22} {state:8} {r.summary}  {r.note}".rstrip(), flush=True)
    return 1 if failed else 0


def _windows_lane(pytest_args: Sequence[str]) -> LaneResult:
    required = os.environ.get("HIPDNN_REQUIRE_WINDOWS", "").strip() == "1"
    if not sys.platform.startswith("linux"):
        return LaneResult("windows", 1 if required else None, "", "the windows lane runs Wine on Linux")
    try:
        windows_lane.prerequisites(install=False)
    except windows_lane.LaneUnavailable as exc:
        return LaneResult("windows", 1 if required else None, "", str(exc))
    cmd = [sys.executable, str(REPO / "tools" / "windows_lane.py"), *(["--", *pytest_args] if pytest_args else [])]
    return _run_lane("windows", cmd, dict(os.environ))


def _amdkernels_lane(version: str, sysroot: miopen_sysroot.Sysroot | None, problem: str,
                     pytest_args: Sequence[str]) -> LaneResult:
    name = "amdkernels" if version == AMDKERNELS_VERSION else f"amdkernels-{version}"
    required = os.environ.get("HIPDNN_REQUIRE_AMDKERNELS", "").strip() == "1"
    if not sys.platform.startswith("linux"):
        return LaneResult(name, 1 if required else None, "", "the amdkernels lane needs Linux")
    if sysroot is None:
        why = problem or f"no sysroot for MIOpen {version} in {miopen_sysroot.cache_dir()}"
        return LaneResult(name, 1 if required else None, "", why)
    try:
        cmd, env = amdkernels_command(sysroot, pytest_args)
        cmd, env, note = with_toolchain(version, cmd, env, "HIPDNN_REQUIRE_AMDKERNELS")
    except (OSError, RuntimeError, subprocess.CalledProcessError) as exc:  # no C compiler, ...
        detail = getattr(exc, "stderr", "") or ""
        return LaneResult(name, 1 if required else None, "",
                          f"setting up the stub gfx1100 for MIOpen {version} failed: {exc} {detail}".strip())
    if note:  # without its kernel compilers MIOpen 3.4 computes nothing: the lane cannot run
        return LaneResult(name, 1 if required else None, "", note)
    return _run_lane(name, cmd, env)


if __name__ == "__main__":
    sys.exit(main())
