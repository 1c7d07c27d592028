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

Idempotent: each finished piece leaves a stamp and is reused. Example::

    python tools/miopen_sysroot.py            # build or reuse both, print the roots
    python tools/miopen_sysroot.py --check    # exit 1 (building nothing) unless both are ready
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

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


# ---------------------------------------------------------------- apt source from the machine
def _deb822_stanzas(text: str) -> list[dict[str, str]]:
    stanzas: list[dict[str, str]] = []
    cur: dict[str, str] = {}
    key = ""
    for raw in text.splitlines():
        if raw.startswith("#"):
            continue
        if not raw.strip():
            if cur:
                stanzas.append(cur)
            cur, key = {}, ""
            continue
        if raw[0] in " \t" and key:
            cur[key] += "\n" + raw.strip()
            continue
        if ":" in raw:
            key, _, val = raw.partition(":")
            key = key.strip().lower()
            cur[key] = val.strip()
    if cur:
        stanzas.append(cur)
    return stanzas


def _one_line_entries(text: str) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line.startswith("deb ") and not line.startswith("deb\t"):
            continue
        opts: dict[str, str] = {}
        m = re.match(r"deb\s+\[([^\]]*)\]\s+(.*)", line)
        rest = line[3:].strip()
        if m:
            for kv in m.group(1).split():
                k, _, v = kv.partition("=")
                opts[k.lower()] = v
            rest = m.group(2)
        fields = rest.split()
        if len(fields) >= 2:
            out.append({"types": "deb", "uris": fields[0], "suites": fields[1],
                        "signed-by": opts.get("signed-by", "")})
    return out


def archive_source(etc: Path = Path("/etc/apt")) -> tuple[str, str]:
    """(URI, keyring) of the Debian archive configured on this machine.

    Picks the first ``deb`` entry whose URI path ends in ``/debian`` (not ``debian-security``,
    not a third-party repository) from ``sources.list.d/*.sources`` then ``sources.list`` (and
    ``sources.list.d/*.list``). Raises RuntimeError naming the files read when none is found.
    """
    entries: list[dict[str, str]] = []
    read: list[str] = []
    parts = etc / "sources.list.d"
    for path in sorted(parts.glob("*.sources")) if parts.is_dir() else []:
        read.append(str(path))
        entries += _deb822_stanzas(path.read_text(errors="replace"))
    for path in [etc / "sources.list", *(sorted(parts.glob("*.list")) if parts.is_dir() else [])]:
        if path.is_file():
            read.append(str(path))
            entries += _one_line_entries(path.read_text(errors="replace"))
    for entry in entries:
        if "deb" not in entry.get("types", "").split() or entry.get("enabled", "yes") == "no":
            continue
        for uri in entry.get("uris", "").split():
            if uri.rstrip("/").endswith("/debian"):
                key = entry.get("signed-by", "").strip()
                if not key or "\n" in key or not Path(key).is_file():
                    key = "/usr/share/keyrings/debian-archive-keyring.gpg"
                return uri.rstrip("/"), key
    raise RuntimeError(f"no Debian archive URI (path ending in /debian) in {read or [str(etc)]}")


# ---------------------------------------------------------------- private apt
class PrivateApt:
    """apt-get/apt-cache with their own state, lists and cache under ``base`` (system untouched)."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.lists = base / "lists"
        self.archives = base / "archives"

    def _opts(self) -> list[str]:
        b = self.base
        return [
            "-o", f"Dir::Etc::SourceList={b / 'etc' / 'sources.list'}",
            "-o", f"Dir::Etc::SourceParts={b / 'etc' / 'sources.list.d'}",
            "-o", f"Dir::Etc::Preferences={b / 'etc' / 'preferences'}",
            "-o", f"Dir::Etc::PreferencesParts={b / 'etc' / 'preferences.d'}",
            "-o", f"Dir::State={b / 'state'}",
            "-o", f"Dir::State::Lists={self.lists}",
            "-o", f"Dir::State::status={b / 'state' / 'status'}",
            "-o", f"Dir::Cache={b / 'cache'}",
            "-o", "APT::Sandbox::User=root",
            "-o", "APT::Get::AllowUnauthenticated=false",
            "-o", "Acquire::Languages=none",
            "-o", "APT::Architectures=amd64",
            "-q",
        ]

    def configure(self, uri: str, keyring: str) -> bool:
        """Write the private sources (sid + experimental); True if they changed."""
        for sub in ("etc/sources.list.d", "etc/preferences.d", "state", "cache", "lists/partial"):
            (self.base / sub).mkdir(parents=True, exist_ok=True)
        (self.base / "etc" / "sources.list").touch()
        (self.base / "etc" / "preferences").touch()
        (self.base / "state" / "status").touch()
        src = (f"Types: deb\nURIs: {uri}\nSuites: sid experimental\nComponents: main\n"
               f"Signed-By: {keyring}\n")
        path = self.base / "etc" / "sources.list.d" / "hipdnn-miopen.sources"
        if path.is_file() and path.read_text() == src:
            return False
        path.write_text(src)
        return True

    def update(self) -> None:
        """``apt-get update`` into the private lists."""
        _run(["apt-get", *self._opts(), "update"])

    def have_lists(self) -> bool:
        """True when Packages indices for sid and experimental are present."""
        names = [p.name for p in self.lists.glob("*Packages*")]
        return any("_sid_" in n for n in names) and any("_experimental_" in n for n in names)

    def download(self, targets: Sequence[str], dest: Path) -> None:
        """``apt-get download`` the given ``pkg=ver`` / ``pkg/suite`` targets into ``dest``."""
        dest.mkdir(parents=True, exist_ok=True)
        _run(["apt-get", *self._opts(), "download", *targets], cwd=dest)

    def has_version_in(self, package: str, suite: str) -> bool:
        """Whether ``package`` has a version in ``suite`` (per the private lists)."""
        out = _run(["apt-cache", *self._opts(), "showpkg", package], capture=True)
        return any(f"_{suite}_" in line for line in out.splitlines() if "(" in line)


def _run(cmd: Sequence[str], cwd: Path | None = None, capture: bool = False) -> str:
    proc = subprocess.run(list(cmd), cwd=cwd, text=True,
                          stdout=subprocess.PIPE if capture else sys.stderr,
                          stderr=subprocess.PIPE if capture else None)
    if proc.returncode != 0:
        detail = (proc.stderr or "").strip()[-2000:] if capture else ""
        raise RuntimeError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{detail}")
    return proc.stdout or ""


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


def rocblas_imports(libmiopen: Path) -> list[tuple[str, str]]:
    """(symbol, version-or-"") of every undefined rocblas symbol libMIOpen imports (objdump -T)."""
    out = _run(["objdump", "-T", str(libmiopen)], capture=True)
    found: dict[str, str] = {}
    for line in out.splitlines():
        if "*UND*" not in line:
            continue
        name = line.split()[-1]
        if not name.startswith("rocblas_"):
            continue
        m = re.search(r"\*UND\*\s+\S+\s+(?:\(?([A-Za-z0-9_.@]+)\)?\s+)?" + re.escape(name) + "$", line)
        ver = m.group(1) if m and m.group(1) and m.group(1) != "Base" else ""
        found[name] = ver
    return sorted(found.items())


def build_rocblas_stub(libdir: Path, soname: str, libmiopen: Path) -> list[str]:
    """Compile ``libdir/soname`` exporting each rocblas symbol libMIOpen imports (returns 1 =
    rocblas_status_invalid_handle; never reached by handle-free calls)."""
    symbols = rocblas_imports(libmiopen)
    if not symbols:
        raise RuntimeError(f"objdump -T found no rocblas imports in {libmiopen}")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "rocblas_stub.c"
        src.write_text("/* generated by tools/miopen_sysroot.py: loader satisfaction only */\n"
                       + "".join(f"int {name}(void) {{ return 1; }}\n" for name, _ in symbols))
        cmd = ["gcc", "-shared", "-fPIC", "-O1", f"-Wl,-soname,{soname}", "-o", str(libdir / soname), str(src)]
        versions = sorted({v for _, v in symbols if v})
        if versions:
            vs = Path(tmp) / "stub.map"
            vs.write_text("".join(
                f"{v} {{ global: {' '.join(n + ';' for n, sv in symbols if sv == v)} }};\n" for v in versions
            ) + "")
            cmd.insert(1, f"-Wl,--version-script={vs}")
        _run(cmd)
    return [name for name, _ in symbols]


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
