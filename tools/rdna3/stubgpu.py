"""The amdkernels lane's stand-in GPU: build ``stubhip/stubhip.c`` as ``libamdhip64`` and run the
kernels MIOpen launches on it with this package's emulator.

``build_stub(out_dir, include_dir)`` compiles the stub (cached by source hash) into
``out_dir/libamdhip64.so.7`` (+ the unversioned name hiprtc dlopens). In the test process, after
the stub is loaded (it must come first on the loader's library path), :class:`Launches` registers
the launch handler: each launch's code object is parsed, its kernarg segment completed with the
hidden arguments, and run on :func:`~.dispatch.launch` with memory bounds-checked against the
stub's allocations. Every launch is recorded (kernel, seconds, wave-instructions, error).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .codeobject import CodeObject
from .dispatch import build_kernargs, launch
from .memory import Memory

__all__ = ["LaunchRecord", "Launches", "build_stub"]

_SRC = Path(__file__).resolve().parent / "stubhip"
SONAME = "libamdhip64.so.7"
#: The HIP runtime soname each Debian MIOpen build links (tools/miopen_sysroot.py).
SONAMES = {"7.2.4": "libamdhip64.so.7", "6.4.3": "libamdhip64.so.6"}

_HANDLER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t,
                            ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint32),
                            ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t)


def build_stub(out_dir: Path, include_dir: Path, cc: str = "gcc", soname: str = SONAME) -> Path:
    """Compile the stub if its sources changed; returns the directory holding ``libamdhip64``
    (named ``soname``: ``libamdhip64.so.6`` for MIOpen 3.4, ``.so.7`` for 3.5)."""
    c_src, script = _SRC / "stubhip.c", _SRC / "stubhip.map"
    key = hashlib.sha256(c_src.read_bytes() + script.read_bytes() + str(include_dir).encode()
                         + soname.encode()).hexdigest()[:16]
    target = out_dir / key
    lib = target / soname
    if not lib.exists():
        target.mkdir(parents=True, exist_ok=True)
        tmp = target / (soname + ".tmp")
        subprocess.run([cc, "-O1", "-shared", "-fPIC", "-fvisibility=hidden", f"-I{include_dir}",
                        f"-Wl,--version-script={script}", f"-Wl,-soname,{soname}", "-o", str(tmp), str(c_src)],
                       check=True, capture_output=True, text=True)
        os.replace(tmp, lib)
        link = target / "libamdhip64.so"
        if not link.exists():
            link.symlink_to(soname)
    return target


@dataclass
class LaunchRecord:
    """One kernel launch run on the emulator."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    seconds: float
    wave_instructions: int
    error: str | None = None


class Launches:
    """Registers the emulator as the stub's launch handler and records what ran.

    >>> launches = Launches(ctypes.CDLL(SONAME))   # doctest: +SKIP
    >>> launches.records[-1].kernel                 # doctest: +SKIP
    'naive_conv_ab_nonpacked_fwd_nchw_float_double_float'
    """

    def __init__(self, stub: ctypes.CDLL) -> None:
        self.records: list[LaunchRecord] = []
        self._codes: dict[bytes, CodeObject] = {}
        self._lookup_fn = stub.amdemu_lookup
        self._lookup_fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                    ctypes.POINTER(ctypes.c_size_t)]
        self._lookup_fn.restype = ctypes.c_int
        self._callback = _HANDLER(self._on_launch)  # kept alive as long as this object
        stub.amdemu_set_launch_handler.argtypes = [_HANDLER]
        stub.amdemu_set_launch_handler(self._callback)
        self._stub = stub

    def close(self) -> None:
        """Unregister: later launches fail (nothing runs silently)."""
        self._stub.amdemu_set_launch_handler(_HANDLER())

    def _lookup(self, addr: int) -> tuple[int, int] | None:
        base, size = ctypes.c_void_p(), ctypes.c_size_t()
        if self._lookup_fn(ctypes.c_void_p(addr), ctypes.byref(base), ctypes.byref(size)):
            return int(base.value or 0), int(size.value)
        return None

    def _on_launch(self, name: bytes, image: int, image_size: int, grid_p: object, block_p: object,
                   shared: int, args: int, args_size: int) -> int:
        kernel = name.decode()
        grid = tuple(grid_p[i] for i in range(3))  # type: ignore[index]
        block = tuple(block_p[i] for i in range(3))  # type: ignore[index]
        rec = LaunchRecord(kernel, grid, block, 0.0, 0)  # type: ignore[arg-type]
        self.records.append(rec)
        t0 = time.perf_counter()
        try:
            raw = ctypes.string_at(image, image_size)
            key = hashlib.sha1(raw).digest()
            co = self._codes.get(key)
            if co is None:
                co = self._codes[key] = CodeObject(raw)
            k = co.kernels[kernel]
            if shared:
                raise RuntimeError(f"{kernel}: dynamic LDS ({shared} bytes) is not emulated")
            seg = build_kernargs(k, ctypes.string_at(args, args_size) if args else b"", grid, block)
            stats = launch(co, kernel, grid, block, seg, Memory(lookup=self._lookup))
            rec.wave_instructions = stats.wave_instructions
            return 0
        except Exception as exc:  # reported through the record and the failed HIP launch
            rec.error = f"{type(exc).__name__}: {exc}"
            # the HIP caller only sees a failed launch: say why where pytest shows it
            print(f"[rdna3] launch of {kernel} failed: {rec.error}", file=sys.stderr, flush=True)
            return 1
        finally:
            rec.seconds = time.perf_counter() - t0
