#!/usr/bin/env python3
"""MIOpen 3.4.0's kernel compilers for the stub-GPU lanes: a private Debian root with clang-21.

Test infrastructure only (never part of the package). Debian's MIOpen 3.4.0 (6.4.3) builds its
kernels by running compilers at absolute paths baked into the library: ``/usr/bin/clang++-21``
for HIP sources and, for OpenCL sources, ``/build/reproducible-path/miopen-6.4.3+dfsg/build/clang-21``
(a path of Debian's build tree). This machine has neither, and nothing here installs into the
real root. Instead:

1. the toolchain (clang-21, lld-21, llvm-21, rocm-device-libs-21, libstdc++-16-dev, ... with
   their dependency closure computed by the private apt of tools/sysroot_apt.py) plus the HIP
   development headers is downloaded and unpacked (``dpkg -x``) into
   ``<cache>/<version>/toolchain/root``;
2. the two absolute paths are made to exist inside that root: ``/usr/bin/clang++-21`` becomes a
   small ``sh`` wrapper that drops the ``-isystem /usr/include`` MIOpen passes (with
   libstdc++-16 it breaks ``#include_next <math.h>``) and runs the real clang++; the build-tree
   path is a link to clang-21;
3. :func:`wrap` turns a lane's command into one that runs in a private mount namespace
   (``unshare --mount``: invisible to the rest of the machine, gone when the command ends) and
   ``chroot`` s into that root, with the host paths the command uses (the checkout, the Python
   environment and its interpreter, the caches, /tmp, /proc, /dev, /sys) bind-mounted at the
   same paths, so the command runs unchanged (the sysroot loader and libraries of
   tools/miopen_sysroot.py included). Needs root (as the lanes' sysroots do not) and Linux.

    python tools/miopen_toolchain.py            # build or reuse, print the root
    python tools/miopen_toolchain.py --check    # exit 1 unless it is ready
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import sysconfig
import time
from collections.abc import Sequence
from pathlib import Path

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from miopen_sysroot import HIP_DEV_PACKAGE, cache_dir, log
from sysroot_apt import PrivateApt, archive_source
from sysroot_apt import run as _run

__all__ = ["TOOLCHAINS", "ToolchainUnavailable", "ensure_toolchain", "find_toolchain", "wrap"]

#: Per MIOpen build: the packages its kernel compilers need (sid) and the absolute compiler
#: paths its libMIOpen runs, mapped to the program inside the toolchain root.
TOOLCHAINS: dict[str, dict[str, object]] = {
    "6.4.3": {
        "packages": ("clang-21", "libclang-cpp21", "libllvm21", "libclang1-21",
                     "libclang-common-21-dev", "llvm-21", "clang-tools-21", "lld-21", "liblld-21",
                     "llvm-21-linker-tools", "rocm-device-libs-21", "libstdc++-16-dev",
                     "libgcc-16-dev", "libc6-dev", "linux-libc-dev", "dash"),
        "hip_compiler": "/usr/bin/clang++-21",
        "real_hip_compiler": "/usr/lib/llvm-21/bin/clang++",
        "ocl_compiler": "/build/reproducible-path/miopen-6.4.3+dfsg/build/clang-21",
        "real_ocl_compiler": "/usr/lib/llvm-21/bin/clang",
    },
}
#: Packages of the dependency closure that only serve programs the compilers never run.
_SKIP_PREFIXES = ("python3", "libpython3", "tzdata", "debconf", "media-types", "netbase",
                  "readline-common")
STAMP = ".hipdnn-toolchain.json"
RECIPE = 1

_WRAPPER = """#!/bin/sh
# hipdnn-ctypes test toolchain: MIOpen 3.4.0 passes -isystem /usr/include, which breaks
# libstdc++-16's #include_next <math.h>; drop that pair and run the real compiler.
skip=0
for a in "$@"; do
  shift
  if [ "$skip" = 1 ]; then skip=0; [ "$a" = /usr/include ] && continue; set -- "$@" -isystem "$a"; continue; fi
  if [ "$a" = -isystem ]; then skip=1; continue; fi
  set -- "$@" "$a"
done
exec {real} "$@"
"""


class ToolchainUnavailable(RuntimeError):
    """The toolchain cannot be built or used here (the message says why and what to do)."""


def _root(version: str, base: Path | None = None) -> Path:
    return (base or cache_dir()) / version / "toolchain" / "root"


def find_toolchain(version: str, base: Path | None = None) -> Path | None:
    """The finished toolchain root for ``version``, or None (never builds)."""
    root = _root(version, base)
    try:
        data = json.loads((root / STAMP).read_text())
    except (OSError, ValueError):
        return None
    spec = TOOLCHAINS[version]
    ok = data.get("recipe") == RECIPE and (root / str(spec["real_hip_compiler"]).lstrip("/")).exists()
    return root if ok else None


def _closure(apt: PrivateApt, packages: Sequence[str]) -> list[str]:
    """The packages an ``apt-get install`` of ``packages`` would unpack on an empty system."""
    out = _run(["apt-get", *apt._opts(), "-s", "install", "--no-install-recommends", *packages],
               capture=True)
    names = [line.split()[1] for line in out.splitlines() if line.startswith("Inst ")]
    return [n for n in names if not n.startswith(_SKIP_PREFIXES)]


def ensure_toolchain(version: str, base: Path | None = None) -> Path:
    """Build (or reuse) the toolchain root for ``version``; return it (concurrent callers wait)."""
    if version not in TOOLCHAINS:
        raise ToolchainUnavailable(f"no toolchain recipe for MIOpen {version}; known: {list(TOOLCHAINS)}")
    ready = find_toolchain(version, base)
    if ready is not None:
        return ready
    import fcntl

    lock_dir = base or cache_dir()
    lock_dir.mkdir(parents=True, exist_ok=True)
    with open(lock_dir / ".toolchain.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return find_toolchain(version, base) or _build(version, base)


def _build(version: str, base: Path | None) -> Path:
    for tool in ("apt-get", "dpkg"):
        if shutil.which(tool) is None:
            raise ToolchainUnavailable(f"{tool} not found: the toolchain is built from Debian packages")
    base = base or cache_dir()
    spec = TOOLCHAINS[version]
    start = time.monotonic()
    apt = PrivateApt(base / "apt")
    uri, keyring = archive_source()
    if apt.configure(uri, keyring) or not apt.have_lists():
        apt.update()
    names = _closure(apt, [*spec["packages"], HIP_DEV_PACKAGE])  # type: ignore[misc]
    debs = base / version / "toolchain" / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    have = {p.name.split("_", 1)[0] for p in debs.glob("*.deb")}
    missing = [n for n in names if n not in have]
    if missing:
        log(f"toolchain {version}: downloading {len(missing)} packages")
        apt.download(missing, debs)
    root = _root(version, base)
    partial = root.with_name("root.partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    wanted = set(names)
    for deb in sorted(debs.glob("*.deb")):
        if deb.name.split("_", 1)[0] in wanted:
            _run(["dpkg", "-x", str(deb), str(partial)])
    for link in ("bin", "lib", "lib64", "sbin"):  # merged /usr, as Debian's base-files makes it
        if not (partial / link).exists():
            (partial / link).symlink_to(f"usr/{link}")
    (partial / "usr" / "lib64").mkdir(exist_ok=True)
    sh = partial / "usr" / "bin" / "sh"
    if not sh.exists():
        sh.symlink_to("dash")
    hip = partial / str(spec["hip_compiler"]).lstrip("/")
    hip.unlink(missing_ok=True)
    hip.write_text(_WRAPPER.format(real=spec["real_hip_compiler"]))
    hip.chmod(0o755)
    ocl = partial / str(spec["ocl_compiler"]).lstrip("/")
    ocl.parent.mkdir(parents=True, exist_ok=True)
    ocl.unlink(missing_ok=True)
    ocl.symlink_to(str(spec["real_ocl_compiler"]))
    for d in ("proc", "dev", "sys", "tmp", "root", "etc"):
        (partial / d).mkdir(exist_ok=True)
    (partial / STAMP).write_text(json.dumps({"recipe": RECIPE, "version": version,
                                             "packages": sorted(wanted)}, indent=1))
    shutil.rmtree(root, ignore_errors=True)
    partial.rename(root)
    log(f"toolchain {version}: {len(wanted)} packages unpacked into {root} "
        f"in {time.monotonic() - start:.0f} s")
    return root


_SYSTEM_DIRS = ("/", "/usr", "/usr/local", "/usr/lib", "/usr/bin", "/usr/local/lib", "/usr/local/bin")


def _interpreter_paths() -> tuple[list[str], list[tuple[str, str]]]:
    """Host paths of this interpreter (its prefix, or stdlib + binary for a system Python) and
    the symlinks leading to it that must be recreated inside the root."""
    base = os.path.realpath(sys.base_prefix)
    if base not in _SYSTEM_DIRS:  # pyenv, conda, a self-built Python: its whole prefix
        return [base], []
    paths = [sysconfig.get_paths()["stdlib"], os.path.realpath(sys.executable),
             *(sysconfig.get_config_var(v) or "" for v in ("LIBDIR", "LIBPL"))]
    links: list[tuple[str, str]] = []
    hop = sys.executable
    while os.path.islink(hop):
        target = os.readlink(hop)
        links.append((hop, target))
        hop = os.path.join(os.path.dirname(hop), target)
    return [p for p in paths if p and os.path.realpath(p) not in _SYSTEM_DIRS], links


def _host_paths(extra: Sequence[str]) -> list[str]:
    """Host paths a lane's command needs inside the root, at the same place (parents first)."""
    interpreter, _ = _interpreter_paths()
    paths = [str(Path(__file__).resolve().parents[1]), sys.prefix, *interpreter,
             str(cache_dir().parent), "/tmp", *extra]
    found = {os.path.realpath(p) for p in paths if p and os.path.exists(p)}
    return sorted((p for p in found if p not in _SYSTEM_DIRS), key=len)


def wrap(version: str, cmd: Sequence[str], *, extra_paths: Sequence[str] = (),
         base: Path | None = None) -> list[str]:
    """``cmd`` run inside the toolchain root of ``version`` (built first if needed), in a
    private mount namespace, with the host paths it needs bind-mounted at the same places."""
    if not sys.platform.startswith("linux"):
        raise ToolchainUnavailable("the MIOpen 3.4 toolchain root needs Linux")
    if os.geteuid() != 0:
        raise ToolchainUnavailable("the MIOpen 3.4 toolchain root needs root (unshare --mount, "
                                   "chroot); run the lane as root or without MIOpen 3.4 kernels")
    for tool in ("unshare", "chroot", "mount"):
        if shutil.which(tool) is None:
            raise ToolchainUnavailable(f"{tool} not found (util-linux / coreutils)")
    root = ensure_toolchain(version, base)
    for link, target in _interpreter_paths()[1]:  # e.g. /usr/bin/python3 -> python3.11
        inside = root / link.lstrip("/")
        if not inside.is_symlink() and not inside.exists():
            inside.parent.mkdir(parents=True, exist_ok=True)
            inside.symlink_to(target)
    script = ["set -e", f"R={shlex.quote(str(root))}",
              'mount -t proc proc "$R/proc"', 'mount --rbind /dev "$R/dev"',
              'mount --rbind /sys "$R/sys"']
    for p in _host_paths(extra_paths):
        target = root / p.lstrip("/")
        if Path(p).is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.touch()
        script.append(f"mount --bind {shlex.quote(p)} \"$R\"{shlex.quote(p)}")
    # inside the root: back to the caller's directory, then the command itself
    script.append('exec chroot "$R" /bin/sh -c \'cd "$0" && exec "$@"\' "$PWD" "$@"')
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", "\n".join(script),
            "hipdnn-toolchain", *cmd]


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("version", nargs="?", default="6.4.3", choices=sorted(TOOLCHAINS))
    ap.add_argument("--check", action="store_true", help="only report whether it is ready")
    args = ap.parse_args(argv)
    if args.check:
        root = find_toolchain(args.version)
        print(f"{args.version}: {root or 'missing'}")
        return 0 if root else 1
    print(ensure_toolchain(args.version))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
