"""numpy's own BLAS through ctypes: ``cblas_sgemm`` with ``beta`` (accumulate into C, which
``np.matmul`` cannot) and the BLAS thread count, for the tap convolutions (:mod:`._conv_taps`).

Only the OpenBLAS that numpy's wheels bundle (``scipy-openblas``, in ``numpy.libs`` or
``numpy/.dylibs``) is looked for; its symbols carry a ``scipy_`` prefix and a ``64_`` suffix
(64-bit integers). Anything else (a numpy built on Accelerate or MKL, a library that is not
found or lacks a symbol) gives None and the caller keeps its numpy path. Nothing is loaded at
import: :func:`blas` loads on first use.

While :func:`single_threaded` is held, every BLAS call in the process runs on one thread (the
setting is global in OpenBLAS); the caller runs its own parts on the engine's thread pool, so
each GEMM's sums run in one order whatever the thread count.

>>> b = blas()
>>> b is None or b.threads() >= 1
True
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import threading
from collections.abc import Iterator

import numpy as np

__all__ = ["Blas", "blas", "single_threaded"]

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112


class Blas:
    """The loaded library's ``sgemm`` and thread-count calls."""

    def __init__(self, lib: ctypes.CDLL, prefix: str, suffix: str) -> None:
        i64 = ctypes.c_int64
        self._sgemm = getattr(lib, f"{prefix}cblas_sgemm{suffix}")
        self._sgemm.restype = None
        self._sgemm.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, i64, i64, i64,
                                ctypes.c_float, ctypes.c_void_p, i64, ctypes.c_void_p, i64,
                                ctypes.c_float, ctypes.c_void_p, i64]
        self._get = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}")
        self._get.restype = ctypes.c_int
        self._get.argtypes = []
        self._set = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}")
        self._set.restype = None
        self._set.argtypes = [ctypes.c_int]

    def sgemm(self, trans_a: bool, m: int, n: int, k: int, a: int, lda: int, b: int, ldb: int,
              beta: float, c: int, ldc: int) -> None:
        """Row-major ``C = op(A) @ B + beta * C`` on float32 addresses (``op(A)`` = A^T when
        ``trans_a``: A is stored k x m). The caller keeps the arrays alive and in bounds."""
        self._sgemm(_ROW_MAJOR, _TRANS if trans_a else _NO_TRANS, _NO_TRANS, m, n, k, 1.0, a,
                    lda, b, ldb, beta, c, ldc)

    def threads(self) -> int:
        """The BLAS thread count now."""
        return int(self._get())

    def set_threads(self, count: int) -> None:
        """Set the BLAS thread count (process-wide)."""
        self._set(int(count))


_STATE: list[Blas | None] = []
_LOCK = threading.Lock()


def _candidates() -> list[str]:
    root = os.path.dirname(os.path.abspath(np.__file__))
    found: list[str] = []
    for pattern in ("numpy.libs/libscipy_openblas64_*", ".dylibs/libscipy_openblas64_*",
                    "numpy.libs/libscipy_openblas64_*.dll"):
        base = os.path.dirname(root) if pattern.startswith("numpy.libs") else root
        found += sorted(glob.glob(os.path.join(base, pattern)))
    return list(dict.fromkeys(found))


def _load() -> Blas | None:
    config = getattr(np.__config__, "CONFIG", {})
    blas_info = config.get("Build Dependencies", {}).get("blas", {})
    if "openblas" not in str(blas_info.get("name", "")):
        return None
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
            return Blas(lib, "scipy_", "64_")
        except (OSError, AttributeError):
            continue
    return None


def blas() -> Blas | None:
    """numpy's OpenBLAS, or None (see the module docstring); the first call loads it."""
    if not _STATE:
        with _LOCK:
            if not _STATE:
                try:
                    _STATE.append(_load())
                except Exception:  # an odd numpy build: the numpy paths still work
                    _STATE.append(None)
    return _STATE[0]


_HELD = [0, 0]  # [holders, thread count to restore]
_HELD_LOCK = threading.Lock()


@contextlib.contextmanager
def single_threaded(lib: Blas) -> Iterator[None]:
    """BLAS on one thread while held (nested and concurrent holders share it; the last one
    out restores the thread count the first one found)."""
    with _HELD_LOCK:
        if _HELD[0] == 0:
            _HELD[1] = lib.threads()
            if _HELD[1] != 1:
                lib.set_threads(1)
        _HELD[0] += 1
    try:
        yield
    finally:
        with _HELD_LOCK:
            _HELD[0] -= 1
            if _HELD[0] == 0 and _HELD[1] != 1:
                lib.set_threads(_HELD[1])
