"""Convolution data movement compiled by numba, when it is installed: the im2col gather (padding,
strides and dilation read in place, no padded copy) and the col2im gather of the data gradient,
each one parallel loop; the arithmetic stays in BLAS GEMMs (:mod:`._conv`).

numba is optional, as for the batchnorm loops (:mod:`._bn_jit`, whose switch and launch lock
these share): without it, with ``HIPDNN_REFERENCE_JIT=0``, or if compiling fails (a warning
says why, once), :mod:`._conv` runs its numpy im2col/col2im instead. The first use compiles the
loops, with the batchnorm loops if not yet compiled (15 s on the 16-core host, 15-22 s on the
busy 2-core one); numba's on-disk cache makes later processes load them in about 1.6 s.

Every array is channels-last and 5-D: (N, D, H, W, C) for the data, 2-D and 1-D problems as
D = 1 (and H = 1). Columns are (G, rows, KD*KH*KW*Cg): one row per output pixel (n, od, oh, ow)
in that order, ``rows`` of them from pixel ``m0``, the kernel offsets outermost and the group's
channels innermost in a row. Each parallel iteration writes its own row (im2col) or its own
input row (col2im, which sums the contributing columns in one fixed order of kernel offsets,
the order of the numpy col2im), so the results are the same bits for any thread count.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from hipdnn.engines.reference import _bn_jit

__all__ = ["Kernels", "kernels"]

#: The loops' parallel range: numba.prange once compiled (a plain range until then).
prange = range


def im2col(x: Any, m0: int, osp: Any, ksz: Any, st: Any, pad: Any, dil: Any, cols: Any,
           lo: int, hi: int) -> None:
    """cols[g, i, (a, b, e, c)] = x[n, od*sd - pd + a*dd, oh*sh - ph + b*dh, ow*sw - pw + e*dw,
    g*Cg + c] for output pixel m0 + i = (n, od, oh, ow); zero outside x."""
    dd_, hh, ww, c = x.shape[1], x.shape[2], x.shape[3], x.shape[4]
    g = cols.shape[0]
    cg = c // g
    od, oh, ow = osp[0], osp[1], osp[2]
    kd, kh, kw = ksz[0], ksz[1], ksz[2]
    for i in prange(lo, hi):
        m = m0 + i
        j = m % ow
        t = m // ow
        h = t % oh
        t = t // oh
        d = t % od
        n = t // od
        for a in range(kd):
            z = d * st[0] - pad[0] + a * dil[0]
            for b in range(kh):
                y = h * st[1] - pad[1] + b * dil[1]
                for e in range(kw):
                    xw = j * st[2] - pad[2] + e * dil[2]
                    col0 = ((a * kh + b) * kw + e) * cg
                    inside = 0 <= z < dd_ and 0 <= y < hh and 0 <= xw < ww
                    for gi in range(g):
                        dst = cols[gi, i]
                        if inside:
                            src = x[n, z, y, xw]
                            for q in range(cg):
                                dst[col0 + q] = src[gi * cg + q]
                        else:
                            for q in range(cg):
                                dst[col0 + q] = 0.0


def col2im(cols: Any, osp: Any, ksz: Any, st: Any, pad: Any, dil: Any, dx: Any, lo: int,
           hi: int) -> None:
    """dx[n, z, y, x, g*Cg + c] = the sum, over kernel offsets (a, b, e) in order, of the column
    entries that read that input element (the adjoint of :func:`im2col` with m0 = 0)."""
    dd_, hh, ww, c = dx.shape[1], dx.shape[2], dx.shape[3], dx.shape[4]
    g = cols.shape[0]
    cg = c // g
    od, oh, ow = osp[0], osp[1], osp[2]
    kd, kh, kw = ksz[0], ksz[1], ksz[2]
    for t in prange(lo, hi):
        n = t // (dd_ * hh)
        z = (t // hh) % dd_
        y = t % hh
        for xw in range(ww):
            out = dx[n, z, y, xw]
            for q in range(c):
                out[q] = 0.0
            for a in range(kd):
                zz = z + pad[0] - a * dil[0]
                if zz < 0 or zz % st[0] != 0 or zz // st[0] >= od:
                    continue
                for b in range(kh):
                    yy = y + pad[1] - b * dil[1]
                    if yy < 0 or yy % st[1] != 0 or yy // st[1] >= oh:
                        continue
                    for e in range(kw):
                        xx = xw + pad[2] - e * dil[2]
                        if xx < 0 or xx % st[2] != 0 or xx // st[2] >= ow:
                            continue
                        m = ((n * od + zz // st[0]) * oh + yy // st[1]) * ow + xx // st[2]
                        col0 = ((a * kh + b) * kw + e) * cg
                        for gi in range(g):
                            src = cols[gi, m]
                            for q in range(cg):
                                out[gi * cg + q] += src[col0 + q]


def to_float32(src: Any, dst: Any, lo: int, hi: int) -> None:
    """dst = src as float32, both (N, S, C) arrays of any strides: a layout change (and a
    float64 conversion) in one parallel pass."""
    s = src.shape[1]
    for t in prange(lo, hi):
        a = src[t // s, t % s]
        b = dst[t // s, t % s]
        for j in range(a.shape[0]):
            b[j] = np.float32(a[j])


class Kernels(NamedTuple):
    """The compiled loops."""

    im2col: Callable[..., None]
    col2im: Callable[..., None]
    to_float32: Callable[..., None]
    im2col_serial: Callable[..., None]
    col2im_serial: Callable[..., None]
    to_float32_serial: Callable[..., None]


_STATE: list[Kernels | None] = []  # [] not tried yet; [None] unavailable; [Kernels]


def _build(numba: Any, cache: bool) -> Kernels:
    jit = numba.njit(nogil=True, cache=cache, boundscheck=False, parallel=True)
    serial = numba.njit(nogil=True, cache=cache, boundscheck=False)
    return Kernels(jit(im2col), jit(col2im), jit(to_float32), serial(im2col), serial(col2im),
                   serial(to_float32))


def _compile() -> Kernels | None:
    if _bn_jit.kernels() is None:  # numba missing, switched off or unusable here
        return None
    numba = _bn_jit._NUMBA[0]
    try:
        globals()["prange"] = numba.prange
        built = _bn_jit.build_cached(numba, _build)
        # compile now for float32 (and the float32 conversion of float16 / float64 inputs)
        x = np.zeros((1, 1, 2, 2, 2), np.float32)
        v = np.ones(3, np.int64)
        cols = np.zeros((1, 4, 2), np.float32)
        geo = (np.array([1, 2, 2]), v, v, v * 0, v)
        _bn_jit.launch(built.im2col, 1, x, 0, *geo, cols, 0, 4)
        _bn_jit.launch(built.col2im, 1, cols, *geo, x, 0, 2)
        built.im2col_serial(x, 0, *geo, cols, 0, 4)
        built.col2im_serial(cols, *geo, x, 0, 2)
        for dt in (np.float32, np.float64):
            src = np.zeros((2, 2, 2), dt).transpose(0, 2, 1)
            _bn_jit.launch(built.to_float32, 1, src, np.zeros((2, 2, 2), np.float32), 0, 4)
            built.to_float32_serial(src, np.zeros((2, 2, 2), np.float32), 0, 4)
    except Exception as exc:  # a numba that cannot compile these: the numpy path still works
        warnings.warn(f"hipdnn: numba could not compile the reference convolution loops "
                      f"({type(exc).__name__}: {exc}); using numpy (set {_bn_jit.ENV}=0 to "
                      f"silence)", RuntimeWarning, stacklevel=3)
        return None
    return built


def kernels() -> Kernels | None:
    """The compiled loops, or None when the numpy path must run (see the module docstring);
    the first call compiles them."""
    return _bn_jit.compiled_once(_STATE, _compile)
