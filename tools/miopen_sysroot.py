#!/usr/bin/env python3
"""Build sysroots holding the real libMIOpen 6.4.3 and 7.2.4 (+ MIOpen and HIP headers) into a cache.

Test infrastructure only (never part of the package). Debian's libMIOpen needs glibc >= 2.38, so
the packages are downloaded with ``apt-get download`` (a private apt state directory, source URI
taken from this machine's own apt configuration, suites sid and experimental), unpacked with
``dpkg -x`` (nothing is installed), and completed with a stub ``librocblas`` compiled by the
machine's gcc that exports exactly the rocblas symbols libMIOpen imports. Python then runs under
``<root>/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2`` (see tools/run_tests.py).

The HIP development headers (``libamdhip64-dev``, from the suite of the pinned HIP runtime and
checked to depend on exactly that runtime build) are unpacked apart, into ``<root>/hip-dev``, so
``<root>/usr/include`` keeps only MIOpen's headers (miopen.h is parsed against minimal HIP stubs).

The apt pieces live in tools/sysroot_apt.py, the rocblas stub in tools/sysroot_stub.py.

Idempotent: each finished piece leaves a stamp and is reused. Example::

    python tools/miopen_sysroot.py            # build or reuse both, print the roots
    python tools/miopen_sysroot.py --check    # exit 1 (building nothing) unless both are ready
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

if str(Path(__file__).resolve().parent) not in sys.path:  # also when loaded by file path (conftest)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from sysroot_apt import PrivateApt, archive_source
from sysroot_apt import run as _run
from sysroot_stub import build_rocblas_stub

__all__ = [
    "SYSROOTS",
    "Sysroot",
    "SysrootSpec",
    "archive_source",
    "build_sysroot",
    "cache_dir",
    "ensure_all",
    "find_sysroot",
]

LIBDIR = "usr/lib/x86_64-linux-gnu"
STAMP = ".hipdnn-sysroot.json"
#: Bump when the layout or recipe changes so stale caches are rebuilt.
RECIPE = 2
#: Subdirectory of a root holding the unpacked HIP development package (its own usr/include).
HIP_DEV_DIR = "hip-dev"
HIP_DEV_PACKAGE = "libamdhip64-dev"

_COMMON_SID = (
    "libc6", "libstdc++6", "libgcc-s1", "libzstd1", "libbz2-1.0", "libboost-filesystem1.90.0",
    "libboost-atomic1.90.0", "libsqlite3-0", "zlib1g", "libnuma1", "libdrm2", "libdrm-amdgpu1",
    "libelf1t64",
)


@dataclass(frozen=True)
class SysrootSpec:
    """One MIOpen build: pinned libmiopen packages plus the runtime closure, by suite."""

    version: str                       # Debian upstream version, e.g. "6.4.3"
    miopen_deb_version: str            # exact pin for libmiopen1 and libmiopen-dev
    miopen_suite: str                  # suite holding that pin
    sid: tuple[str, ...]               # packages taken at sid's candidate version
    experimental: tuple[str, ...]      # packages taken from experimental (sid if absent there)
    rocblas_soname: str                # soname libMIOpen imports rocblas under (stubbed)
    miopen_api: tuple[int, int, int]   # miopenGetVersion() of this build
    hip_runtime: str                   # the libamdhip64-N package above (libamdhip64-dev's pin)
    hip_suite: str                     # suite hip_runtime (and so libamdhip64-dev) comes from


SYSROOTS: dict[str, SysrootSpec] = {
    "6.4.3": SysrootSpec(
        version="6.4.3",
        miopen_deb_version="6.4.3+dfsg-1+b1",
        miopen_suite="sid",
        sid=(*_COMMON_SID, "liblzma5", "libroctx64-4", "libamdhip64-6", "libhsa-runtime64-1"),
        experimental=(),
        rocblas_soname="librocblas.so.4",
        miopen_api=(3, 4, 0),
        hip_runtime="libamdhip64-6",
        hip_suite="sid",
    ),
    "7.2.4": SysrootSpec(
        version="7.2.4",
        miopen_deb_version="7.2.4+dfsg-1",
        miopen_suite="experimental",
        sid=(*_COMMON_SID, "liblzma5", "libllvm22", "libedit2", "libffi8", "libxml2-16",
             "libz3-4", "libbsd0", "libmd0", "libtinfo6"),
        experimental=("libamdhip64-7", "libhsa-runtime64-1", "libamd-comgr3", "libhiprtc7",
                      "libroctx64-4"),
        rocblas_soname="librocblas.so.5",
        miopen_api=(3, 5, 1),
        hip_runtime="libamdhip64-7",
        hip_suite="experimental",
    ),
}


@dataclass(frozen=True)
class Sysroot:
    """A finished sysroot: where the loader, the libraries, libMIOpen and miopen.h are."""

    version: str
    root: Path

    @property
    def libdir(self) -> Path:
        """Directory of the sysroot's shared libraries (the loader's --library-path)."""
        return self.root / LIBDIR

    @property
    def loader(self) -> Path:
        """The sysroot's dynamic loader (glibc >= 2.38)."""
        return self.libdir / "ld-linux-x86-64.so.2"

    @property
    def libmiopen(self) -> Path:
        """The real ``libMIOpen.so.1``."""
        return self.libdir / "libMIOpen.so.1"

    @property
    def include(self) -> Path:
        """Include directory holding ``miopen/miopen.h``."""
        return self.root / "usr" / "include"

    @property
    def header(self) -> Path:
        """The real ``miopen.h``."""
        return self.include / "miopen" / "miopen.h"

    @property
    def hip_include(self) -> Path:
        """Include directory holding ``hip/hip_runtime_api.h`` (libamdhip64-dev, kept apart)."""
        return self.root / HIP_DEV_DIR / "usr" / "include"

    @property
    def hip_header(self) -> Path:
        """The real ``hip/hip_runtime_api.h`` of this HIP build."""
        return self.hip_include / "hip" / "hip_runtime_api.h"

    @property
    def libamdhip64(self) -> Path:
        """The real HIP runtime (``libamdhip64.so.<major>``) the sysroot's libMIOpen loads."""
        found = sorted(self.libdir.glob("libamdhip64.so.[0-9]"))
        return found[-1] if found else self.libdir / "libamdhip64.so"


def cache_dir() -> Path:
    """``$HIPDNN_CACHE_DIR`` or ``~/.cache/hipdnn-ctypes/miopen``."""
    env = os.environ.get("HIPDNN_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "hipdnn-ctypes" / "miopen"


def log(msg: str) -> None:
    """Progress line on stderr (stdout carries the result)."""
    print(f"[miopen_sysroot] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- build steps
def _targets(spec: SysrootSpec, apt: PrivateApt) -> list[str]:
    pin = spec.miopen_deb_version
    out = [f"libmiopen1={pin}", f"libmiopen-dev={pin}"]
    out += list(spec.sid)
    for pkg in spec.experimental:
        out.append(f"{pkg}/experimental" if apt.has_version_in(pkg, "experimental") else pkg)
    out.append(HIP_DEV_PACKAGE if spec.hip_suite == "sid" else f"{HIP_DEV_PACKAGE}/{spec.hip_suite}")
    return out


def _deb_name(path: Path) -> str:
    return path.name.split("_", 1)[0]


def _check_loads(sysroot: Sysroot) -> None:
    """Resolve every dependency of libMIOpen with the sysroot's loader (no Python involved)."""
    out = _run([str(sysroot.loader), "--library-path", str(sysroot.libdir), "--list",
                str(sysroot.libmiopen)], capture=True)
    missing = [line.strip() for line in out.splitlines() if "not found" in line]
    if missing:
        raise RuntimeError(f"{sysroot.version}: unresolved libraries: {missing}")


def find_sysroot(version: str, base: Path | None = None) -> Sysroot | None:
    """The finished sysroot for ``version`` in the cache, or None (never builds)."""
    root = (base or cache_dir()) / version / "root"
    stamp = root / STAMP
    if not stamp.is_file():
        return None
    try:
        data = json.loads(stamp.read_text())
    except ValueError:
        return None
    sysroot = Sysroot(version, root)
    ok = data.get("recipe") == RECIPE and sysroot.libmiopen.exists() and sysroot.header.is_file() \
        and sysroot.hip_header.is_file()
    return sysroot if ok and sysroot.loader.exists() else None


def build_sysroot(spec: SysrootSpec, base: Path, apt: PrivateApt, did: list[str]) -> Sysroot:
    """Build (or reuse) the sysroot for ``spec`` under ``base/<version>/root``."""
    ready = find_sysroot(spec.version, base)
    if ready is not None:
        did.append(f"{spec.version}: reused {ready.root}")
        return ready
    debs = base / spec.version / "debs"
    have = {_deb_name(p) for p in debs.glob("*.deb")} if debs.is_dir() else set()
    want = [t.split("=")[0].split("/")[0] for t in _targets_names(spec)]
    if not set(want) <= have:
        if not apt.have_lists():
            apt.update()
            did.append("apt-get update (private lists: sid, experimental)")
        targets = [t for t in _targets(spec, apt) if t.split("=")[0].split("/")[0] not in have]
        log(f"{spec.version}: downloading {len(targets)} packages")
        try:
            apt.download(targets, debs)
        except RuntimeError:
            # cached lists may name versions the archive has since replaced: refresh once
            log(f"{spec.version}: download failed; refreshing the private lists and retrying")
            apt.update()
            did.append("apt-get update (retry after a failed download)")
            targets = [t for t in _targets(spec, apt) if t.split("=")[0].split("/")[0] not in have]
            apt.download(targets, debs)
        did.append(f"{spec.version}: downloaded {len(targets)} packages")
    else:
        did.append(f"{spec.version}: reused {len(have)} cached .deb files")
    root = base / spec.version / "root"
    tmp_root = base / spec.version / "root.partial"
    shutil.rmtree(tmp_root, ignore_errors=True)
    tmp_root.mkdir(parents=True)
    debs_used = sorted(p for p in debs.glob("*.deb") if _deb_name(p) in set(want) - {HIP_DEV_PACKAGE})
    for deb in debs_used:
        _run(["dpkg", "-x", str(deb), str(tmp_root)])
    hip_dev = _unpack_hip_dev(spec, debs, tmp_root)
    debs_used.append(hip_dev)
    sysroot = Sysroot(spec.version, tmp_root)
    if not sysroot.libmiopen.exists():
        raise RuntimeError(f"{spec.version}: libMIOpen.so.1 missing after unpacking {debs}")
    stubbed = build_rocblas_stub(sysroot.libdir, spec.rocblas_soname, sysroot.libmiopen.resolve())
    did.append(f"{spec.version}: built {spec.rocblas_soname} stub ({len(stubbed)} symbols) with gcc")
    _check_loads(sysroot)
    (tmp_root / STAMP).write_text(json.dumps({
        "recipe": RECIPE, "version": spec.version, "miopen_deb_version": spec.miopen_deb_version,
        "debs": [p.name for p in debs_used], "rocblas_stub": stubbed,
    }, indent=1))
    shutil.rmtree(root, ignore_errors=True)
    tmp_root.rename(root)
    did.append(f"{spec.version}: unpacked {len(debs_used)} packages into {root}")
    return Sysroot(spec.version, root)


def _targets_names(spec: SysrootSpec) -> list[str]:
    return ["libmiopen1", "libmiopen-dev", *spec.sid, *spec.experimental, HIP_DEV_PACKAGE]


def _deb_field(deb: Path, name: str) -> str:
    return _run(["dpkg-deb", "-f", str(deb), name], capture=True).strip()


def _unpack_hip_dev(spec: SysrootSpec, debs: Path, root: Path) -> Path:
    """Unpack libamdhip64-dev into ``root/hip-dev`` after checking it was built for exactly the
    libamdhip64-N .deb of this sysroot (its ``Depends`` pins ``libamdhip64-N (= version)``)."""
    dev = sorted(debs.glob(f"{HIP_DEV_PACKAGE}_*.deb"))
    runtime = sorted(debs.glob(f"{spec.hip_runtime}_*.deb"))
    if len(dev) != 1 or len(runtime) != 1:
        raise RuntimeError(f"{spec.version}: expected one {HIP_DEV_PACKAGE} and one {spec.hip_runtime} "
                           f".deb in {debs}, found {[p.name for p in dev + runtime]}")
    runtime_version = _deb_field(runtime[0], "Version")
    pin = f"{spec.hip_runtime} (= {runtime_version})"
    if pin not in _deb_field(dev[0], "Depends"):
        raise RuntimeError(f"{spec.version}: {dev[0].name} does not depend on {pin}; delete {debs} "
                           "to fetch a matching pair")
    _run(["dpkg", "-x", str(dev[0]), str(root / HIP_DEV_DIR)])
    if not Sysroot(spec.version, root).hip_header.is_file():
        raise RuntimeError(f"{spec.version}: hip/hip_runtime_api.h missing after unpacking {dev[0].name}")
    return dev[0]


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def ensure_all(versions: Iterable[str] = tuple(SYSROOTS), base: Path | None = None) -> dict[str, Sysroot]:
    """Build or reuse every requested sysroot; print what was done; return them by version."""
    base = base or cache_dir()
    base.mkdir(parents=True, exist_ok=True)
    import fcntl  # POSIX only, like apt and dpkg; imported here so find_sysroot works anywhere

    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # concurrent runs wait instead of unpacking twice
        return _ensure_locked(list(versions), base)


def _ensure_locked(versions: list[str], base: Path) -> dict[str, Sysroot]:
    apt = PrivateApt(base / "apt")
    did: list[str] = []
    out: dict[str, Sysroot] = {}
    pending = [v for v in versions if find_sysroot(v, base) is None]
    if pending:
        uri, keyring = archive_source()
        if apt.configure(uri, keyring):
            shutil.rmtree(apt.lists, ignore_errors=True)
            apt.configure(uri, keyring)
            did.append("configured private apt (archive URI from /etc/apt, suites sid experimental)")
    for version in versions:
        out[version] = build_sysroot(SYSROOTS[version], base, apt, did)
    for line in did:
        log(line)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("versions", nargs="*", help=f"default: all of {list(SYSROOTS)}")
    ap.add_argument("--cache-dir", type=Path, default=None, help="default: $HIPDNN_CACHE_DIR or ~/.cache/hipdnn-ctypes/miopen")
    ap.add_argument("--check", action="store_true", help="only report whether the sysroots are ready")
    ap.add_argument("--json", action="store_true", help="print {version: root} as JSON")
    args = ap.parse_args(argv)
    base = args.cache_dir or cache_dir()
    versions = args.versions or list(SYSROOTS)
    unknown = [v for v in versions if v not in SYSROOTS]
    if unknown:
        ap.error(f"unknown version(s) {unknown}; known: {list(SYSROOTS)}")
    if args.check:
        missing = [v for v in versions if find_sysroot(v, base) is None]
        for v in versions:
            print(f"{v}: {'missing' if v in missing else find_sysroot(v, base).root}")  # type: ignore[union-attr]
        return 1 if missing else 0
    start = time.monotonic()
    roots = ensure_all(versions, base)
    log(f"done in {time.monotonic() - start:.1f}s; cache {base} holds {_du(base) / 1e6:.0f} MB")
    if args.json:
        print(json.dumps({v: str(s.root) for v, s in roots.items()}))
    else:
        for v, s in roots.items():
            print(f"{v}: {s.root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
