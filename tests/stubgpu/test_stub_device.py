"""The stub GPU itself (tools/stub_hip): what the real libMIOpen and our binding see of it.

Properties in the real hipDeviceProp_tR0600 layout, the symbol versions libMIOpen imports, host
memory that starts NaN, real copies, recorded streams/events, typed HIP errors, the launch hook
contract of stubgpu_hook.h (run in a child process: the hook is chosen when the stub starts).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import struct
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from stub_hip.build import ARCHS, hip_imports
from stubgpu_util import API, Stub, child_command

from miopen_ctypes.errors import HipError

_HERE = Path(__file__).resolve().parent
_HOOK_H = _HERE.parents[1] / "tools" / "stub_hip"


def _objdump_T(path: Path) -> dict[str, str]:
    out = subprocess.run(["objdump", "-T", str(path)], check=True, capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if " .text" in line and len(parts) >= 2:
            found[parts[-1]] = parts[-2]
    return found


def test_properties_are_the_chosen_arch(stub: Stub, hip: Any) -> None:
    props = hip.device_properties(0)
    gcn, cus = ARCHS[stub.arch]
    assert props.gcnArchName.decode() == gcn
    assert props.multiProcessorCount == cus
    assert props.warpSize == (32 if stub.arch.startswith("gfx11") else 64)
    assert hip.gcn_arch_name() == stub.arch
    count = ctypes.c_int()
    hip.hipGetDeviceCount(ctypes.byref(count))
    assert count.value == 1
    with pytest.raises(HipError, match="hipGetDevicePropertiesR0600"):
        hip.device_properties(1)


def test_exports_match_what_libmiopen_imports(stub: Stub, lib: Any) -> None:
    """Same names at the same symbol versions; every HIP call miopen_ctypes binds; the
    unversioned name libhiprtc dlopens; the soname libMIOpen needs."""
    from miopen_ctypes.hip import HIP_PROTOTYPES

    soname = "libamdhip64.so.6" if stub.version == "6.4.3" else "libamdhip64.so.7"
    exported = _objdump_T(stub.libdir / soname)
    imports = hip_imports(Path(os.environ["HIPDNN_MIOPEN_LIBRARY"]))
    assert len(imports) >= 30
    assert {n: exported.get(n) for n in imports} == imports
    assert set(HIP_PROTOTYPES) <= set(exported)
    assert (stub.libdir / "libamdhip64.so").resolve() == (stub.libdir / soname).resolve()
    assert tuple(lib.version) == API[stub.version]


def test_fresh_memory_is_nan_and_copies_are_real(stub: Stub, hip: Any) -> None:
    ptr = ctypes.c_void_p()
    hip.hipMalloc(ctypes.byref(ptr), 64)
    try:
        fresh = np.frombuffer(ctypes.string_at(ptr.value, 64), np.float32)
        assert np.isnan(fresh).all()
        src = np.arange(16, dtype=np.float32)
        hip.hipMemcpy(ptr, src.ctypes.data, 64, 1)
        back = np.empty(16, np.float32)
        hip.hipMemcpy(back.ctypes.data, ptr, 64, 2)
        np.testing.assert_array_equal(back, src)
        hip.hipMemset(ptr, 0, 64)
        assert not np.frombuffer(ctypes.string_at(ptr.value, 64), np.float32).any()
        with pytest.raises(HipError, match="hipMemcpy"):  # 65 bytes do not fit in 64
            hip.hipMemcpy(ptr, src.ctypes.data, 65, 1)
    finally:
        hip.hipFree(ptr)
    with pytest.raises(HipError, match="hipFree"):
        hip.hipFree(ptr)  # no longer a live allocation


def test_lookup_bounds_and_memory_accounting(stub: Stub, hip: Any) -> None:
    soname = "libamdhip64.so.6" if stub.version == "6.4.3" else "libamdhip64.so.7"
    lookup = ctypes.CDLL(soname).hipdnn_stubgpu_lookup
    lookup.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)]
    free0, total = ctypes.c_size_t(), ctypes.c_size_t()
    hip.hipMemGetInfo(ctypes.byref(free0), ctypes.byref(total))
    ptr = ctypes.c_void_p()
    hip.hipMalloc(ctypes.byref(ptr), 1000)
    try:
        base, size = ctypes.c_void_p(), ctypes.c_size_t()
        assert lookup(ptr.value + 999, ctypes.byref(base), ctypes.byref(size)) == 0
        assert (base.value, size.value) == (ptr.value, 1000)
        assert lookup(ptr.value + 1000, ctypes.byref(base), ctypes.byref(size)) != 0
        host = np.zeros(4)
        assert lookup(host.ctypes.data, ctypes.byref(base), ctypes.byref(size)) != 0
        free1 = ctypes.c_size_t()
        hip.hipMemGetInfo(ctypes.byref(free1), ctypes.byref(total))
        assert free0.value - free1.value == 1024  # rounded to 256 bytes
    finally:
        hip.hipFree(ptr)


def test_streams_and_events_are_recorded_and_checked(stub: Stub, hip: Any) -> None:
    from miopen_ctypes.hip import hipEvent_t, hipStream_t

    mark = stub.log.mark()
    s, a, b = hipStream_t(), hipEvent_t(), hipEvent_t()
    hip.hipStreamCreate(ctypes.byref(s))
    hip.hipEventCreate(ctypes.byref(a))
    hip.hipEventCreate(ctypes.byref(b))
    hip.hipEventRecord(a, s)
    hip.hipEventRecord(b, s)
    ms = ctypes.c_float()
    hip.hipEventElapsedTime(ctypes.byref(ms), a, b)
    assert 0.0 <= ms.value < 1000.0
    hip.hipStreamSynchronize(s)
    for e in (a, b):
        hip.hipEventDestroy(e)
    hip.hipStreamDestroy(s)
    events = [e["event"] for e in stub.log.since(mark)]
    assert events.count("stream_create") == 1 and events.count("stream_destroy") == 1
    bogus = np.zeros(4, np.uint64)  # not a stream the stub made
    with pytest.raises(HipError, match="hipStreamSynchronize"):
        hip.hipStreamSynchronize(bogus.ctypes.data)


def test_miopen_handle_on_the_stub(stub: Stub, lib: Any) -> None:
    """miopenCreate succeeds on the fake device (it fails with "No device" without one)."""
    from miopen_ctypes import types as mt

    h = mt.miopenHandle_t()
    lib.miopenCreate(ctypes.byref(h))
    try:
        assert h
    finally:
        lib.miopenDestroy(h)


_HOOK_C = r"""
#include <stdio.h>
#include <string.h>
#include "stubgpu_hook.h"
int hipdnn_stubgpu_on_launch(const hipdnn_stubgpu_launch_t *l) {
  void *base; size_t size;
  const void *arg0 = *(void *const *)l->kernarg;
  int inside = hipdnn_stubgpu_lookup(arg0, &base, &size) == 0;
  FILE *f = fopen(getenv_path(), "a");
  fprintf(f, "%s %zu %u %u %u %u %u %u %zu %d %zu\n", l->kernel_name, l->code_object_size, l->grid[0],
          l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], l->kernarg_size, inside, size);
  fclose(f);
  return strcmp(l->kernel_name, "refused_kernel") == 0 ? 3 : 0;
}
"""

_CHILD = r"""
import ctypes, sys
hip = ctypes.CDLL(sys.argv[1])
image = open(sys.argv[2], "rb").read()
mod, fn, bad, buf = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
assert hip.hipModuleLoadData(ctypes.byref(mod), image) == 0
assert hip.hipModuleGetFunction(ctypes.byref(fn), mod, b"my_kernel") == 0
assert hip.hipModuleGetFunction(ctypes.byref(bad), mod, b"no_such_kernel") != 0
assert hip.hipMalloc(ctypes.byref(buf), 4096) == 0
args = (ctypes.c_void_p * 2)(buf.value, 7)
size = ctypes.c_size_t(16)
extra = (ctypes.c_void_p * 5)(1, ctypes.addressof(args), 2, ctypes.addressof(size), 3)
launch = hip.hipExtModuleLaunchKernel
launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint32] * 6 + [ctypes.c_size_t, ctypes.c_void_p,
                   ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32]
print(launch(fn, 1000, 4, 1, 256, 1, 1, 0, None, None, extra, None, None, 0))
assert hip.hipModuleGetFunction(ctypes.byref(fn), mod, b"refused_kernel") == 0
print(launch(fn, 64, 1, 1, 64, 1, 1, 0, None, None, extra, None, None, 0))
"""


def test_launch_hook_contract(stub: Stub, tmp_path: Path) -> None:
    """A hook library named by HIPDNN_STUBGPU_HOOK sees every launch (grid in workgroups, the
    whole code object, the argument buffer, lookup of a device pointer) and can fail it."""
    # the host's cc, or clang-21 inside tools/miopen_toolchain.py's root (MIOpen 3.4 processes)
    cc = os.environ.get("CC") or next((c for c in ("cc", "gcc", "clang-21") if shutil.which(c)), "cc")
    out = tmp_path / "seen.txt"
    src = tmp_path / "hook.c"
    src.write_text(_HOOK_C.replace("getenv_path()", f'"{out}"'))
    hook = tmp_path / "libhook.so"
    subprocess.run([cc, "-shared", "-fPIC", f"-I{_HOOK_H}", "-o", str(hook), str(src)], check=True)
    kern = tmp_path / "kern.c"
    kern.write_text("void my_kernel(void) {}\nvoid refused_kernel(void) {}\n")
    obj = tmp_path / "kern.o"  # any ELF64 with the symbols: the stub never runs code
    subprocess.run([cc, "-c", "-o", str(obj), str(kern)], check=True)
    soname = "libamdhip64.so.6" if stub.version == "6.4.3" else "libamdhip64.so.7"
    cmd = [*child_command(textwrap.dedent(_CHILD)), soname, str(obj)]
    env = dict(os.environ, HIPDNN_STUBGPU_HOOK=str(hook))
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "719"]  # hipSuccess, hipErrorLaunchFailure
    first, second = out.read_text().splitlines()
    name, co_size, *dims, karg, inside, alloc = first.split()
    assert name == "my_kernel" and int(co_size) == obj.stat().st_size
    assert dims == ["4", "4", "1", "256", "1", "1"]  # ceil(1000 / 256) workgroups
    assert (karg, inside, alloc) == ("16", "1", "4096")
    assert second.startswith("refused_kernel ")


def _offload_bundle(entries: list[tuple[str, bytes]]) -> bytes:
    """A clang offload bundle (the layout clang-offload-bundler writes, uncompressed)."""
    head = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", len(entries))
    table_size = sum(24 + len(t) for t, _ in entries)
    offset, table, blobs = len(head) + table_size, b"", b""
    for triple, blob in entries:
        table += struct.pack("<QQQ", offset, len(blob), len(triple)) + triple.encode()
        blobs += blob
        offset += len(blob)
    return head + table + blobs


def test_offload_bundles_load_this_architectures_entry(stub: Stub, tmp_path: Path) -> None:
    """MIOpen 3.4 loads its HIP kernels as clang offload bundles: the stub takes the entry for
    its own architecture (target features ignored) and refuses a bundle without one."""
    cc = os.environ.get("CC") or next((c for c in ("cc", "gcc", "clang-21") if shutil.which(c)), "cc")
    kern = tmp_path / "kern.c"
    kern.write_text("void my_kernel(void) {}\n")
    obj = tmp_path / "kern.o"
    subprocess.run([cc, "-c", "-o", str(obj), str(kern)], check=True)
    elf = obj.read_bytes()
    soname = "libamdhip64.so.6" if stub.version == "6.4.3" else "libamdhip64.so.7"
    hip = ctypes.CDLL(soname)
    other = "gfx1100" if stub.arch != "gfx1100" else "gfx90a"
    good = _offload_bundle([("host-x86_64-unknown-linux-gnu-", b""),
                            (f"hipv4-amdgcn-amd-amdhsa--{other}", b"\0" * 64),
                            (f"hipv4-amdgcn-amd-amdhsa--{stub.arch}:sramecc+:xnack-", elf)])
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    assert hip.hipModuleLoadData(ctypes.byref(mod), good) == 0
    assert hip.hipModuleGetFunction(ctypes.byref(fn), mod, b"my_kernel") == 0
    path = tmp_path / "kern.hipfb"
    path.write_bytes(good)
    assert hip.hipModuleLoad(ctypes.byref(mod), str(path).encode()) == 0
    foreign = _offload_bundle([(f"hipv4-amdgcn-amd-amdhsa--{other}", elf)])
    assert hip.hipModuleLoadData(ctypes.byref(mod), foreign) != 0
    truncated = good[:60]
    path.write_bytes(truncated)
    assert hip.hipModuleLoad(ctypes.byref(mod), str(path).encode()) != 0
