"""The sysroot itself: newer glibc and the real library through raw ctypes (binding-independent)."""

from __future__ import annotations

import ctypes


def test_runs_under_newer_glibc(live_library_path: str) -> None:
    libc = ctypes.CDLL("libc.so.6")
    libc.gnu_get_libc_version.restype = ctypes.c_char_p
    major, minor = (int(p) for p in libc.gnu_get_libc_version().decode().split(".")[:2])
    assert (major, minor) >= (2, 38), "the live lane must run under the sysroot's loader"


def test_raw_get_version(live_library_path: str, expected_api: tuple[int, int, int]) -> None:
    raw = ctypes.CDLL(live_library_path)
    parts = [ctypes.c_size_t() for _ in range(3)]
    assert raw.miopenGetVersion(*[ctypes.byref(p) for p in parts]) == 0
    assert tuple(p.value for p in parts) == expected_api
