"""Build the stub GPU (``stub_hip.c`` as ``libamdhip64``, ``stub_rocblas.c`` as ``librocblas``) for
one real libMIOpen, into a cache directory. Test tooling: never part of the wheel.

The soname and the symbol versions come from ``objdump -T`` of that libMIOpen (``hip_4.2``,
``hip_5.5``, ``hip_6.0`` ...); the stub also exports every HIP function ``miopen_ctypes.hip``
binds (so the engine's own HIP calls land on it) and the unversioned ``libamdhip64.so`` that
libhiprtc dlopens. The result is cached by a hash of the sources, the header and the symbol set.

    python tools/stub_hip/build.py 7.2.4     # prints the directory holding the libraries
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_TOOLS = _HERE.parent
_REPO = _TOOLS.parent
for _p in (_TOOLS, _REPO):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import miopen_sysroot  # noqa: E402  (sibling tool)

__all__ = ["ARCHS", "StubGpu", "build_stubgpu", "hip_imports", "rocblas_imports"]

#: Fake devices stub_hip.c knows (HIPDNN_STUBGPU_ARCH): gcnArchName and compute units.
ARCHS = {"gfx90a": ("gfx90a:sramecc+:xnack-", 104), "gfx942": ("gfx942:sramecc+:xnack-", 304),
         "gfx908": ("gfx908:sramecc+:xnack-", 120),
         "gfx1100": ("gfx1100", 48)}
#: HIP functions the stub exports beyond MIOpen's imports and miopen_ctypes.hip's table.
_EXTRA = ("hipModuleLaunchKernel", "hipPeekAtLastError", "hipHostFree", "hipGetDeviceCount",
          "hipdnn_stubgpu_lookup", "hipdnn_stubgpu_fail", "hipdnn_stubgpu_clear_faults",
          "hipdnn_stubgpu_calls")
#: hipRuntimeGetVersion of each HIP build (major*1e7 + minor*1e5 + patch).
_HIP_VERSION = {"6": 60443000, "7": 70224000}
_UND = re.compile(r"\*UND\*\s+\S+\s+(?:\(([^)]+)\)\s+)?(\S+)$")


@dataclass(frozen=True)
class StubGpu:
    """A built stub: ``libdir`` goes first on the loader's library path."""

    libdir: Path
    hip_soname: str
    rocblas_soname: str
    symbols: dict[str, str]  # exported HIP symbol -> version node


def _imports(libmiopen: Path, prefix: str) -> dict[str, str]:
    out = subprocess.run(["objdump", "-T", str(libmiopen)], check=True, capture_output=True, text=True).stdout
    found: dict[str, str] = {}
    for line in out.splitlines():
        m = _UND.search(line)
        if m and m.group(2).startswith(prefix):
            found[m.group(2)] = m.group(1) or ""
    return found


def hip_imports(libmiopen: Path) -> dict[str, str]:
    """HIP symbol -> version node (e.g. ``hip_6.0``) of every HIP function libMIOpen imports."""
    return {k: v for k, v in _imports(libmiopen, "hip").items() if not k.startswith("hiprtc")}


def rocblas_imports(libmiopen: Path) -> list[str]:
    """The rocblas functions libMIOpen imports."""
    return sorted(_imports(libmiopen, "rocblas_"))


def _needed(libmiopen: Path, prefix: str) -> str:
    out = subprocess.run(["objdump", "-p", str(libmiopen)], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "NEEDED" and parts[1].startswith(prefix):
            return parts[1]
    raise RuntimeError(f"{libmiopen} does not link {prefix}*")


def _compile(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"building the stub GPU failed: {' '.join(cmd)}\n{proc.stderr}")


def _version_key(node: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", node))


def _version_script(symbols: dict[str, str]) -> str:
    nodes = sorted({v for v in symbols.values()}, key=_version_key)
    out, prev = [], ""
    for i, node in enumerate(nodes):
        names = " ".join(f"{s};" for s, v in sorted(symbols.items()) if v == node)
        local = " local: *;" if i == 0 else ""
        out.append(f"{node} {{ global: {names}{local} }}{' ' + prev if prev else ''};")
        prev = node
    return "\n".join(out) + "\n"


def _exported(lib: Path) -> set[str]:
    out = subprocess.run(["objdump", "-T", str(lib)], check=True, capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if " .text" in line}


def build_stubgpu(sysroot: miopen_sysroot.Sysroot, out_dir: Path | None = None, cc: str | None = None) -> StubGpu:
    """Compile (or reuse) the stub libraries for ``sysroot``'s libMIOpen; returns where they are."""
    from miopen_ctypes.hip import HIP_PROTOTYPES

    cc = cc or os.environ.get("CC") or shutil.which("cc") or "gcc"
    imports = hip_imports(sysroot.libmiopen)
    base = min(imports.values(), key=_version_key)
    symbols = dict(imports)
    for name in (*HIP_PROTOTYPES, *_EXTRA):
        symbols.setdefault(name, base)
    hip_soname, rocblas_soname = _needed(sysroot.libmiopen, "libamdhip64"), _needed(sysroot.libmiopen, "librocblas")
    major = hip_soname.rsplit(".", 1)[-1]
    sources = [_HERE / "stub_hip.c", _HERE / "stub_rocblas.c", _HERE / "stubgpu_hook.h"]
    digest = hashlib.sha256()
    for src in sources:
        digest.update(src.read_bytes())
    digest.update(json.dumps([sorted(symbols.items()), hip_soname, rocblas_soname, cc,
                              str(sysroot.hip_include)]).encode())
    target = (out_dir or miopen_sysroot.cache_dir() / sysroot.version / "stubgpu" / "lib") / digest.hexdigest()[:16]
    stub = StubGpu(target, hip_soname, rocblas_soname, symbols)
    if (target / "stamp.json").is_file():
        return stub
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    script = tmp / "libamdhip64.map"
    script.write_text(_version_script(symbols))
    common = [cc, "-O1", "-shared", "-fPIC", "-fvisibility=hidden", "-Wall"]
    _compile([*common, f"-I{sysroot.hip_include}", f"-I{_HERE}",
                    f"-DSTUBGPU_HIP_VERSION={_HIP_VERSION.get(major, 70224000)}",
                    f"-Wl,--version-script={script}", f"-Wl,-soname,{hip_soname}", "-o",
                    str(tmp / hip_soname), str(_HERE / "stub_hip.c"), "-ldl", "-lpthread"])
    _compile([*common, f"-Wl,-soname,{rocblas_soname}", "-o", str(tmp / rocblas_soname),
              str(_HERE / "stub_rocblas.c")])
    missing = sorted(set(symbols) - _exported(tmp / hip_soname))
    missing_blas = sorted(set(rocblas_imports(sysroot.libmiopen)) - _exported(tmp / rocblas_soname))
    if missing or missing_blas:
        raise RuntimeError(f"the stub GPU lacks symbols libMIOpen or miopen_ctypes need: {missing + missing_blas}")
    (tmp / "libamdhip64.so").symlink_to(hip_soname)  # the name libhiprtc dlopens
    (tmp / "stamp.json").write_text(json.dumps({"hip": symbols, "rocblas": rocblas_imports(sysroot.libmiopen)},
                                               indent=1, sort_keys=True))
    try:
        os.replace(tmp, target)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return stub


def main(argv: list[str] | None = None) -> int:
    """``build.py VERSION``: build the stub for that cached sysroot, print its directory."""
    args = sys.argv[1:] if argv is None else argv
    for version in args or list(miopen_sysroot.SYSROOTS):
        sysroot = miopen_sysroot.find_sysroot(version)
        if sysroot is None:
            print(f"no cached sysroot for MIOpen {version} (python tools/miopen_sysroot.py)", file=sys.stderr)
            return 1
        print(build_stubgpu(sysroot).libdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
