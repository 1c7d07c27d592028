"""Fused batchnorm loops compiled by numba, when it is installed: each pass of :mod:`._bn` as
one loop over a part of the tensor instead of several numpy calls per block.

numba is optional (``pip install 'hipdnn-ctypes[jit]'``; it ships wheels, no compiler). Without
it, or with ``HIPDNN_REFERENCE_JIT=0``, or if compiling fails (a warning says why, once), the
numpy passes of :mod:`._bn` run instead; :func:`kernels` decides, per call.

The kernels are serial and release the GIL (``nogil``): :mod:`._bn` runs them on the parts of
its own thread pool, so the thread count (``HIPDNN_REFERENCE_THREADS``), the split and the
fixed-order combination of per-group partials stay the numpy passes' (the same bits for any
thread count); numba's own threading layer is never used (it is not safe to enter from two
Python threads at once). Every kernel reads a packed 2-D float32 matrix (channel-first
``(N*C, S)``, row ``r`` in channel ``r % C``, or channels-last ``(N*S, C)``) between rows
``lo`` and ``hi``.

Numerics: sums accumulate in float64 around a per-channel float32 centre (``d = x - c``, exact
in float64); a channel-first row's sum may be reassociated by the compiler into SIMD lanes
(``fastmath={"reassoc"}``, the only fast-math flag, and only there): a fixed order for a given
machine, whatever the thread count; channels-last sums add across rows in row order. Element-wise outputs are float32 ``(x - c)*a + b`` and ``(((x - c)*r + dy) + e)*k``
without fused multiply-adds (numba compiles without fast-math), the numpy passes' own
rounding steps.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

__all__ = ["ENV", "RUN", "Kernels", "Layout", "kernels"]

#: Environment variable: "0" turns the compiled loops off (the numpy passes run).
ENV = "HIPDNN_REFERENCE_JIT"
#: Channels-last rows per partial-sum group (:mod:`._bn`'s ``_RUN``).
RUN = 64


# The kernels' Python source, compiled by :func:`kernels`. Arguments: ``x``/``dy``/``out`` the
# 2-D float32 matrices, ``c`` the channel count, ``centre`` and
# the per-channel constants float32 (C,), ``ps``/``pq`` float64 partials: one per row
# (channel-first) or (groups, C) per RUN-row group (channels-last; ``lo`` a multiple of RUN).

def moments_cl(x: Any, lo: int, hi: int, c: int, centre: Any, ps: Any, pq: Any) -> None:
    """Per group: ``sum(x - centre)`` and ``sum((x - centre)**2)`` in float64. Channels-last (N*S, C)."""
    s = np.zeros(c)
    q = np.zeros(c)
    k = centre.astype(np.float64)
    for g in range(lo // RUN, (hi + RUN - 1) // RUN):
        s[:] = 0.0
        q[:] = 0.0
        for m in range(g * RUN, min(hi, (g + 1) * RUN)):
            row = x[m]
            for j in range(c):
                d = np.float64(row[j]) - k[j]
                s[j] += d
                q[j] += d * d
        ps[g, :] = s
        pq[g, :] = q


def moments_cf(x: Any, lo: int, hi: int, c: int, centre: Any, ps: Any, pq: Any) -> None:
    """Per row: ``sum(x - centre)`` and ``sum((x - centre)**2)`` in float64. Channel-first (N*C, S)."""
    for r in range(lo, hi):
        row = x[r]
        k = np.float64(centre[r % c])
        ts = 0.0
        tq = 0.0
        for i in range(row.shape[0]):
            d = np.float64(row[i]) - k
            ts += d
            tq += d * d
        ps[r] = ts
        pq[r] = tq


def grad_sums_cl(dy: Any, x: Any, lo: int, hi: int, c: int, centre: Any, ps: Any, pq: Any) -> None:
    """Per group: ``sum(dy)`` and ``sum(dy*(x - centre))`` in float64. Channels-last (N*S, C)."""
    s = np.zeros(c)
    q = np.zeros(c)
    k = centre.astype(np.float64)
    for g in range(lo // RUN, (hi + RUN - 1) // RUN):
        s[:] = 0.0
        q[:] = 0.0
        for m in range(g * RUN, min(hi, (g + 1) * RUN)):
            row, drow = x[m], dy[m]
            for j in range(c):
                v = np.float64(drow[j])
                s[j] += v
                q[j] += v * (np.float64(row[j]) - k[j])
        ps[g, :] = s
        pq[g, :] = q


def grad_sums_cf(dy: Any, x: Any, lo: int, hi: int, c: int, centre: Any, ps: Any, pq: Any) -> None:
    """Per row: ``sum(dy)`` and ``sum(dy*(x - centre))`` in float64. Channel-first (N*C, S)."""
    for r in range(lo, hi):
        row, drow = x[r], dy[r]
        k = np.float64(centre[r % c])
        ts = 0.0
        tq = 0.0
        for i in range(row.shape[0]):
            v = np.float64(drow[i])
            ts += v
            tq += v * (np.float64(row[i]) - k)
        ps[r] = ts
        pq[r] = tq


def affine_cl(x: Any, lo: int, hi: int, c: int, centre: Any, mul: Any, add: Any, out: Any) -> None:
    """``out = (x - centre)*mul + add`` in float32 (two roundings, as numpy's two ufuncs). Channels-last (N*S, C)."""
    for m in range(lo, hi):
        row, orow = x[m], out[m]
        for j in range(c):
            orow[j] = (row[j] - centre[j]) * mul[j] + add[j]


def affine_cf(x: Any, lo: int, hi: int, c: int, centre: Any, mul: Any, add: Any, out: Any) -> None:
    """``out = (x - centre)*mul + add`` in float32 (two roundings, as numpy's two ufuncs). Channel-first (N*C, S)."""
    width = x.shape[1]
    for r in range(lo, hi):
        row, orow = x[r], out[r]
        k, a, b = centre[r % c], mul[r % c], add[r % c]
        for i in range(width):
            orow[i] = (row[i] - k) * a + b


def grad_input_cl(dy: Any, x: Any, lo: int, hi: int, c: int, centre: Any, rv: Any, ev: Any, kv: Any, out: Any) -> None:
    """``out = (((x - centre)*r + dy) + e)*k`` in float32, rounding each step. Channels-last (N*S, C)."""
    for m in range(lo, hi):
        row, drow, orow = x[m], dy[m], out[m]
        for j in range(c):
            orow[j] = (((row[j] - centre[j]) * rv[j] + drow[j]) + ev[j]) * kv[j]


def grad_input_cf(dy: Any, x: Any, lo: int, hi: int, c: int, centre: Any, rv: Any, ev: Any, kv: Any, out: Any) -> None:
    """``out = (((x - centre)*r + dy) + e)*k`` in float32, rounding each step. Channel-first (N*C, S)."""
    width = x.shape[1]
    for r in range(lo, hi):
        row, drow, orow = x[r], dy[r], out[r]
        k, a, e, f = centre[r % c], rv[r % c], ev[r % c], kv[r % c]
        for i in range(width):
            orow[i] = (((row[i] - k) * a + drow[i]) + e) * f


class Layout(NamedTuple):
    """The compiled kernels of one memory layout (channel-first or channels-last)."""

    moments: Callable[..., None]
    grad_sums: Callable[..., None]
    affine: Callable[..., None]
    grad_input: Callable[..., None]


class Kernels(NamedTuple):
    """The compiled kernels: ``cf`` (channel-first) and ``cl`` (channels-last)."""

    cf: Layout
    cl: Layout


_STATE: list[Kernels | None] = []  # [] not tried yet; [None] unavailable; [Kernels]
_LOCK = threading.Lock()


def _compile() -> Kernels | None:
    try:
        import numba  # noqa: PLC0415  (optional, and 0.3 s to import: only on first use)
    except ImportError:
        return None
    try:
        jit = numba.njit(nogil=True, cache=True, boundscheck=False)
        # a row sum vectorises only if it may be reassociated (into SIMD lanes)
        lanes = numba.njit(nogil=True, cache=True, boundscheck=False, fastmath={"reassoc"})
        built = Kernels(Layout(lanes(moments_cf), lanes(grad_sums_cf), jit(affine_cf),
                               jit(grad_input_cf)),
                        Layout(jit(moments_cl), jit(grad_sums_cl), jit(affine_cl),
                               jit(grad_input_cl)))
        # compile now for float32 C-contiguous matrices, both layouts, so a failure shows here
        x = np.zeros((RUN, 2), np.float32)
        v = np.zeros(2, np.float32)
        for lay, ps in ((built.cf, np.zeros(RUN)), (built.cl, np.zeros((1, 2)))):
            lay.moments(x, 0, RUN, 2, v, ps, ps.copy())
            lay.grad_sums(x, x, 0, RUN, 2, v, ps, ps.copy())
            lay.affine(x, 0, RUN, 2, v, v, v, x.copy())
            lay.grad_input(x, x, 0, RUN, 2, v, v, v, v, x.copy())
    except Exception as exc:  # a numba that cannot compile these: the numpy passes still work
        warnings.warn(f"hipdnn: numba {getattr(numba, '__version__', '?')} could not compile the "
                      f"reference batchnorm loops ({type(exc).__name__}: {exc}); using numpy "
                      f"(set {ENV}=0 to silence)", RuntimeWarning, stacklevel=3)
        return None
    return built


def kernels() -> Kernels | None:
    """The compiled kernels, or None: numba missing, ``HIPDNN_REFERENCE_JIT=0``, or compiling
    failed. The first call imports numba and compiles (from numba's on-disk cache after the
    first process)."""
    if os.environ.get(ENV, "").strip() == "0":
        return None
    if not _STATE:
        with _LOCK:
            if not _STATE:
                _STATE.append(_compile())
    return _STATE[0]
