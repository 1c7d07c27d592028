"""Convolutions as sums over kernel taps of GEMMs on shifted rows: no im2col.

Every problem is made channels-last float32 on a *grid* of (N, GD, GH, GW) pixels, 1-D and 2-D
problems with GD (and GH) = 1, whose rows are the pixels in order. On such a grid a unit-stride
shift by a kernel tap (od, oh, ow) is a fixed row offset ``(od*GH + oh)*GW + ow``, so the rows a
tap reads are a plain strided matrix (leading dimension = channels) and each tap is one BLAS
GEMM accumulating (``beta = 1``) into the output rows. Rows past an output's last column or
line ("garbage" rows of the extended grid) are computed and dropped; the grid adds only the
padding to the problem. Strides become unit strides by splitting the padded input into its
``stride`` phases (polyphase: x[j*s + p] for each phase p; a tap a reads phase (a*dilation) %
s at offset (a*dilation) // s), one copy of the input in all:

- fprop: y = sum over taps of X_phase[rows + offset] @ W_tap, per group.
- dgrad: for each phase P of the padded dx, dx_P = sum over the taps of that phase of
  dY_padded[rows + (omax - o)] @ W_tap^T (a gather: every dx element is written once).
- wgrad: dW_tap = X_phase[rows + offset]^T @ dY_grid[rows], dY placed on the grid with zeros on
  the garbage rows (and x positions that no output reads zeroed, so an Inf there stays out).

Work runs in parts on the engine's thread pool with BLAS held to one thread
(:func:`._blas.single_threaded`): parts are fixed by the shape (never by the thread count) and
each output element is summed over taps in one fixed order, weight-gradient parts added in part
order, so the bits do not depend on the thread count. Scratch is the phase copy of the input
(about the input's size), dY on the grid for wgrad (about dY's size), one tile per thread, and
for wgrad one partial weight gradient per part (capped by :data:`PARTIAL_BYTES`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from itertools import product
from math import prod
from typing import Any, NamedTuple

import numpy as np

from hipdnn.engines.reference import _blas, _scratch
from hipdnn.engines.reference._parallel import run_parts, workers

__all__ = ["conv_dgrad", "conv_fprop", "conv_wgrad", "usable"]

_F32 = np.float32

#: Rows of output pixels a part computes at once (fprop/dgrad), before shape-based shrinking.
TILE_ROWS = 2048
#: Fewest rows of a part, however few parts the problem has.
MIN_TILE_ROWS = 256
#: Output columns of one GEMM at most (wider outputs are split into blocks of columns).
COLUMN_BLOCK = 256
#: Rows summed by one weight-gradient GEMM (fixed by the shape: parts = rows / this, capped).
WGRAD_ROWS = 4096
#: Bytes of per-part partial weight gradients at most (fewer, longer parts above it).
PARTIAL_BYTES = 1 << 26


def usable() -> _blas.Blas | None:
    """numpy's OpenBLAS when its ``sgemm`` can be called, else None."""
    return _blas.blas()


class _Dim(NamedTuple):
    """One spatial axis: taps as (phase, offset), the grid length, output length, and per used
    phase the grid range [lo, hi) holding input elements and the input start it maps to."""

    taps: tuple[tuple[int, int], ...]  # per kernel index a: (phase, offset)
    grid: int
    out: int
    fills: dict[int, tuple[int, int, int]]  # phase -> (lo, hi, first input index)


def _dim_x(length: int, pre: int, stride: int, dil: int, k: int, out: int) -> _Dim:
    """An axis of x for fprop / wgrad: phase p holds x[j*stride + p - pre] at grid j."""
    taps = tuple(((a * dil) % stride, (a * dil) // stride) for a in range(k))
    grid = out + max(o for _, o in taps)
    fills = {}
    for p in sorted({p for p, _ in taps}):
        lo = max(0, -((p - pre) // stride))  # ceil((pre - p) / stride)
        last = length - 1 + pre - p
        hi = min(grid, last // stride + 1) if last >= 0 else 0
        fills[p] = (lo, max(lo, hi), lo * stride + p - pre)
    return _Dim(taps, grid, out, fills)


def _pad1(v: Sequence[int], fill: int) -> tuple[int, ...]:
    return (fill,) * (3 - len(v)) + tuple(int(i) for i in v)


def _cl_view(a: np.ndarray) -> np.ndarray:
    """Logical (N, C, *S) -> a (N, D, H, W, C) view (1-D and 2-D with unit D / H)."""
    v = np.moveaxis(a, 1, -1)
    while v.ndim < 5:
        v = v[:, None]
    return v


def _channels_first(a: np.ndarray) -> bool:
    """The channel axis is not the fastest-moving one in memory (NCHW-like)."""
    if a.shape[1] == 1:
        return True
    inner = [abs(s) for n, s in zip(a.shape[2:], a.strides[2:], strict=True) if n > 1]
    return bool(inner) and abs(a.strides[1]) > min(inner)


def _fill_grid(dst: np.ndarray, src: np.ndarray, ranges: Sequence[tuple[int, int, int]],
               steps: Sequence[int]) -> None:
    """dst (N, GD, GH, GW, C) = src[:, first::step, ...] on [lo, hi) per axis, zeros elsewhere,
    in parts over the images on the pool."""
    n = dst.shape[0]

    def part(i: int) -> None:
        d = dst[i:i + 1]
        for ax, (lo, hi, _) in enumerate(ranges, start=1):
            if lo > 0:
                d[(slice(None),) * ax + (slice(0, lo),)] = 0
            if hi < d.shape[ax]:
                d[(slice(None),) * ax + (slice(hi, None),)] = 0
        if all(hi > lo for lo, hi, _ in ranges):
            inner = tuple(slice(lo, hi) for lo, hi, _ in ranges)
            srcs = tuple(slice(f, f + (hi - lo - 1) * s + 1, s)
                         for (lo, hi, f), s in zip(ranges, steps, strict=True))
            to, frm = (slice(None), *inner), (slice(i, i + 1), *srcs)
            np.copyto(d[to], src[frm], casting="unsafe")

    run_parts(part, n)


class _Tls(threading.local):
    buf: np.ndarray | None = None


_TLS = _Tls()


def _tile(size: int) -> np.ndarray:
    """This thread's reused float32 tile of at least ``size`` elements."""
    b = _TLS.buf
    if b is None or b.size < size:
        b = np.empty(max(size, 1 << 16), dtype=_F32)
        _TLS.buf = b
    return b


#: How fprop and dgrad run their tap GEMMs: "parts" (tiles of TILE_ROWS on the engine's pool,
#: each GEMM on one BLAS thread), "blas" (tiles of up to BLAS_TILE_BYTES of output, one after
#: another, each GEMM on BLAS's own threads; the copies out on the pool) or "auto" ("blas" from
#: BLAS_MODE_THREADS threads on: many Python threads each calling small GEMMs scale poorly,
#: GIL and all; on the 16-core host 64x64 GEMMs of 812 rows reached 158 GFLOP/s on 16 Python
#: threads and 210 on 8, one threaded GEMM over all rows 643). Environment variable
#: ``HIPDNN_REFERENCE_TAPS_MODE``. Each output element is the same sum in the same order
#: either way (the same-bits test compares them).
MODE = os.environ.get("HIPDNN_REFERENCE_TAPS_MODE", "auto")
#: Threads from which the "auto" mode runs "blas".
BLAS_MODE_THREADS = 8
#: Bytes of one output tile in the "blas" mode.
BLAS_TILE_BYTES = 1 << 25


def _blas_mode() -> bool:
    return MODE == "blas" or (MODE == "auto" and workers() >= BLAS_MODE_THREADS)


def _row_tiles(rows: int, gw: int, width: int = 0) -> int:
    """Rows per part: whole grid lines, about TILE_ROWS, fewer (down to MIN_TILE_ROWS) when
    the problem has few rows; a function of the shape only. In the "blas" mode, as many as
    BLAS_TILE_BYTES of ``width`` float32 columns hold."""
    if _blas_mode():
        return max(1, BLAS_TILE_BYTES // max(1, width * 4 * gw)) * gw
    target = min(TILE_ROWS, max(MIN_TILE_ROWS, rows // 32))
    return max(1, target // gw) * gw


def _col_blocks(groups: int, width: int) -> list[tuple[int, int, int]]:
    """(group, first, stop) column blocks of each group's ``width`` output columns."""
    nb = 1 if _blas_mode() else -(-width // COLUMN_BLOCK)
    step = -(-width // nb)
    return [(g, c0, min(width, c0 + step)) for g in range(groups) for c0 in range(0, width, step)]


def _gemm_sum(lib: _blas.Blas, src: np.ndarray, src_c: int, row0: int, taps: Sequence[tuple[int, int]],
              wts: np.ndarray, g: int, c0: int, c1: int, cin: int, out: np.ndarray, rows: int) -> None:
    """out[:rows, :c1-c0] = sum over taps (row offset, weight index) of
    src[row0 + off + r, g*cin:(g+1)*cin] @ wts[t, g, :, c0:c1], in tap order."""
    a_base = src.ctypes.data + (row0 * src_c + g * cin) * 4
    kw = wts.shape[3]
    w_base = wts.ctypes.data + (g * cin * kw + c0) * 4
    w_step = wts.shape[1] * cin * kw * 4
    o = out.ctypes.data
    beta = 0.0
    for off, t in taps:
        lib.sgemm(False, rows, c1 - c0, cin, a_base + off * src_c * 4, src_c, w_base + t * w_step,
                  kw, beta, o, c1 - c0)
        beta = 1.0


def _copy_out(tile: np.ndarray, first_line: int, lines: int, gw: int,
              grid: tuple[int, int, int], valid: Sequence[tuple[int, int]], dst: Any) -> None:
    """Rows of ``tile`` (``lines`` grid lines from ``first_line``, ``gw`` rows each) whose grid
    position (d, h, w) lies in ``valid`` [lo, hi) per axis go to ``dst(n, d, h0, h1)`` -> a
    (h1-h0, w_hi-w_lo, cols) destination view."""
    gd, gh, _ = grid
    (dlo, dhi), (hlo, hhi), (wlo, whi) = valid
    t3 = tile.reshape(lines, gw, -1)
    line = first_line
    end = first_line + lines
    while line < end:
        plane, h = divmod(line, gh)
        stop = min(end, (plane + 1) * gh)
        n, d = divmod(plane, gd)
        a, b = max(h, hlo), min(stop - plane * gh, hhi)
        if dlo <= d < dhi and a < b:
            i0 = line - first_line + (a - h)
            dst(n, d, a, b)[...] = t3[i0:i0 + (b - a), wlo:whi]
        line = stop


def _threads(items: int) -> int:
    return min(workers(), items)


def _emit(tile: np.ndarray, first_line: int, lines: int, gw: int,
          grid: tuple[int, int, int], valid: Sequence[tuple[int, int]], dst: Any) -> None:
    """:func:`_copy_out`, in parts over the pool in the "blas" mode (where the tile is large and
    the caller runs alone)."""
    if not _blas_mode() or lines < 2:
        _copy_out(tile, first_line, lines, gw, grid, valid, dst)
        return
    parts = min(workers() * 2, lines)
    step = -(-lines // parts)
    t2 = tile.reshape(lines, -1)

    def part(i: int) -> None:
        a, b = i * step, min(lines, (i + 1) * step)
        if a < b:
            _copy_out(t2[a:b], first_line + a, b - a, gw, grid, valid, dst)

    run_parts(part, parts)


def _launch(lib: _blas.Blas, item: Any, items: int) -> None:
    """Run ``item(0..items-1)``: on the pool with BLAS on one thread ("parts"), or in order with
    BLAS threaded ("blas")."""
    if _blas_mode():
        for i in range(items):
            item(i)
        return
    with _blas.single_threaded(lib):
        run_parts(item, items, _threads(items))


def conv_fprop(lib: _blas.Blas, x: np.ndarray, w: np.ndarray, out_sp: Sequence[int],
               pre: Sequence[int], stride: Sequence[int], dilation: Sequence[int],
               groups: int) -> np.ndarray:
    """Forward cross-correlation producing ``out_sp``; float32 in x's memory order."""
    nsp = x.ndim - 2
    n, c, k = x.shape[0], x.shape[1], w.shape[0]
    g, cg, kg = groups, w.shape[1], k // groups
    ksz, st, dl, pr = _pad1(w.shape[2:], 1), _pad1(stride, 1), _pad1(dilation, 1), _pad1(pre, 0)
    sp, osp = _pad1(x.shape[2:], 1), _pad1(out_sp, 1)
    dims = [_dim_x(sp[i], pr[i], st[i], dl[i], ksz[i], osp[i]) for i in range(3)]
    grid = (dims[0].grid, dims[1].grid, dims[2].grid)
    phases = list(product(*(sorted(d.fills) for d in dims)))
    pindex = {p: i for i, p in enumerate(phases)}
    gsize = n * prod(grid)
    # taps in kernel order: (row offset into the phase array stack, weight index)
    taps = []
    for t, (a, b, e) in enumerate(product(*(range(kd) for kd in ksz))):
        (pa, oa), (pb, ob), (pe, oe) = dims[0].taps[a], dims[1].taps[b], dims[2].taps[e]
        off = pindex[(pa, pb, pe)] * gsize + (oa * grid[1] + ob) * grid[2] + oe
        taps.append((off, t))
    # (taps, G, Cg, Kg): a tap's weights as a (Cg, Kg) matrix per group
    wts = np.ascontiguousarray(np.moveaxis(
        w.astype(_F32, copy=False).reshape(g, kg, cg, len(taps)), 3, 0).transpose(0, 1, 3, 2))
    last = ((n - 1) * grid[0] + osp[0] - 1) * grid[1] * grid[2] + (osp[1] - 1) * grid[2] + osp[2]
    rows = last  # rows past the last output pixel are never needed
    src_v = _cl_view(x)
    scratch = _scratch.take(1, len(phases) * gsize * c)
    try:
        stack = scratch[0].reshape(len(phases), n, *grid, c)
        for p, ph in enumerate(phases):
            ranges = [dims[i].fills[ph[i]] for i in range(3)]
            _fill_grid(stack[p], src_v, ranges, st)
        flat = stack.reshape(-1, c)
        cf = nsp > 0 and _channels_first(x)
        y = np.empty((n, k, *osp) if cf else (n, *osp, k), dtype=_F32)
        tile_rows = _row_tiles(rows, grid[2], kg)
        blocks = _col_blocks(g, kg)
        tiles = -(-rows // tile_rows)
        valid = [(0, osp[0]), (0, osp[1]), (0, osp[2])]

        def item(i: int) -> None:
            ti, (gi, c0, c1) = divmod(i, len(blocks))[0], blocks[i % len(blocks)]
            m0 = ti * tile_rows
            r = min(tile_rows, rows - m0)
            lines = -(-r // grid[2])
            buf = _tile(lines * grid[2] * (c1 - c0))[:lines * grid[2] * (c1 - c0)].reshape(
                lines * grid[2], c1 - c0)
            _gemm_sum(lib, flat, c, m0, taps, wts, gi, c0, c1, cg, buf, r)
            k0, k1 = gi * kg + c0, gi * kg + c1
            if cf:
                def dst(nn: int, d: int, h0: int, h1: int) -> np.ndarray:
                    return np.moveaxis(y[nn, k0:k1, d, h0:h1], 0, -1)
            else:
                def dst(nn: int, d: int, h0: int, h1: int) -> np.ndarray:
                    return y[nn, d, h0:h1, :, k0:k1]
            _emit(buf, m0 // grid[2], lines, grid[2], grid, valid, dst)

        _launch(lib, item, tiles * len(blocks))
    finally:
        _scratch.give(scratch)
    if cf:
        return y.reshape(n, k, *out_sp)
    return np.moveaxis(y.reshape(n, *out_sp, k), -1, 1)


def conv_dgrad(lib: _blas.Blas, dy: np.ndarray, w: np.ndarray, x_shape: Sequence[int],
               pre: Sequence[int], stride: Sequence[int], dilation: Sequence[int],
               groups: int) -> np.ndarray:
    """Data gradient (shape ``x_shape``); float32 in dy's memory order."""
    n, k, c = x_shape[0], w.shape[0], x_shape[1]
    g, cg, kg = groups, w.shape[1], k // groups
    ksz, st, dl, pr = _pad1(w.shape[2:], 1), _pad1(stride, 1), _pad1(dilation, 1), _pad1(pre, 0)
    sp, osp = _pad1(x_shape[2:], 1), _pad1(dy.shape[2:], 1)
    # per axis: taps (phase, offset) as for fprop; dx phase P holds dx[J*s + P - pre]
    tap_axes = [tuple(((a * dl[i]) % st[i], (a * dl[i]) // st[i]) for a in range(ksz[i]))
                for i in range(3)]
    omax = [max(o for _, o in tap_axes[i]) for i in range(3)]
    jmax = [(pr[i] + sp[i] - 1) // st[i] + 1 for i in range(3)]
    grid = (max(jmax[0], osp[0]) + omax[0], max(jmax[1], osp[1]) + omax[1],
            max(jmax[2], osp[2]) + omax[2])
    gsize = n * prod(grid)
    # dx phase P of an axis: grid rows J with 0 <= J*s + P - pre < length
    def jrange(i: int, p: int) -> tuple[int, int]:
        lo = max(0, -((p - pr[i]) // st[i]))
        last = sp[i] - 1 + pr[i] - p
        return (lo, max(lo, min(grid[i], last // st[i] + 1)) if last >= 0 else lo)
    # (taps, G, Kg, Cg): a tap's weights transposed, per group
    ntap = prod(ksz)
    wts = np.ascontiguousarray(np.moveaxis(
        w.astype(_F32, copy=False).reshape(g, kg, cg, ntap), 3, 0))
    cf = _channels_first(dy)
    dx = np.empty((n, c, *sp) if cf else (n, *sp, c), dtype=_F32)
    # work per dx phase: its taps (row offset into dY on the grid, weight index)
    work = []
    for ph in product(*(range(s) for s in st)):
        taps = []
        for t, abe in enumerate(product(*(range(kd) for kd in ksz))):
            pe = [tap_axes[i][abe[i]] for i in range(3)]
            if all(pe[i][0] == ph[i] for i in range(3)):
                o = [omax[i] - pe[i][1] for i in range(3)]
                taps.append(((o[0] * grid[1] + o[1]) * grid[2] + o[2], t))
        valid = [jrange(i, ph[i]) for i in range(3)]
        first = [valid[i][0] * st[i] + ph[i] - pr[i] for i in range(3)]
        steps = tuple(slice(f, None, s) for f, s in zip(first, st, strict=True))
        where = (slice(None), slice(None), *steps) if cf else (slice(None), *steps)
        view = dx[where]
        if any(lo >= hi for lo, hi in valid):
            continue
        if not taps:
            view[...] = 0
            continue
        work.append((taps, valid, view))
    rows = n * prod(grid)
    src_v = _cl_view(dy)
    scratch = _scratch.take(1, gsize * k)
    try:
        dyg = scratch[0].reshape(n, *grid, k)
        _fill_grid(dyg, src_v, [(omax[i], omax[i] + osp[i], 0) for i in range(3)], (1, 1, 1))
        flat = dyg.reshape(-1, k)
        # the last row any phase keeps, so no row past it (nor past the grid) is read
        rows = max(((n - 1) * grid[0] + v[0][1] - 1) * grid[1] * grid[2]
                   + (v[1][1] - 1) * grid[2] + v[2][1] for _, v, _ in work) if work else 0
        tile_rows = _row_tiles(rows, grid[2], cg)
        blocks = _col_blocks(g, cg)
        tiles = -(-rows // tile_rows) if rows else 0
        per_phase = tiles * len(blocks)

        def item(i: int) -> None:
            taps, valid, view = work[i // per_phase]
            j = i % per_phase
            ti, (gi, c0, c1) = j // len(blocks), blocks[j % len(blocks)]
            m0 = ti * tile_rows
            r = min(tile_rows, rows - m0)
            lines = -(-r // grid[2])
            buf = _tile(lines * grid[2] * (c1 - c0))[:lines * grid[2] * (c1 - c0)].reshape(
                lines * grid[2], c1 - c0)
            _gemm_sum(lib, flat, k, m0, taps, wts, gi, c0, c1, kg, buf, r)
            k0, k1 = gi * cg + c0, gi * cg + c1
            (dlo, _), (hlo, _), _ = valid
            v5 = view
            if cf:
                def dst(nn: int, d: int, h0: int, h1: int) -> np.ndarray:
                    return np.moveaxis(v5[nn, k0:k1, d - dlo, h0 - hlo:h1 - hlo], 0, -1)
            else:
                def dst(nn: int, d: int, h0: int, h1: int) -> np.ndarray:
                    return v5[nn, d - dlo, h0 - hlo:h1 - hlo, :, k0:k1]
            _emit(buf, m0 // grid[2], lines, grid[2], grid, valid, dst)

        _launch(lib, item, len(work) * per_phase)
    finally:
        _scratch.give(scratch)
    if cf:
        return dx.reshape(n, c, *x_shape[2:])
    return np.moveaxis(dx.reshape(n, *x_shape[2:], c), -1, 1)


def conv_wgrad(lib: _blas.Blas, x: np.ndarray, dy: np.ndarray, w_shape: Sequence[int],
               pre: Sequence[int], stride: Sequence[int], dilation: Sequence[int],
               groups: int) -> np.ndarray:
    """Weight gradient (shape ``w_shape``), float32 contiguous."""
    n, c, k = x.shape[0], x.shape[1], w_shape[0]
    g, cg, kg = groups, w_shape[1], k // groups
    ksz, st, dl, pr = _pad1(w_shape[2:], 1), _pad1(stride, 1), _pad1(dilation, 1), _pad1(pre, 0)
    sp, osp = _pad1(x.shape[2:], 1), _pad1(dy.shape[2:], 1)
    dims = [_dim_x(sp[i], pr[i], st[i], dl[i], ksz[i], osp[i]) for i in range(3)]
    grid = (dims[0].grid, dims[1].grid, dims[2].grid)
    phases = list(product(*(sorted(d.fills) for d in dims)))
    pindex = {p: i for i, p in enumerate(phases)}
    gsize = n * prod(grid)
    taps = []
    for a, b, e in product(*(range(kd) for kd in ksz)):
        (pa, oa), (pb, ob), (pe, oe) = dims[0].taps[a], dims[1].taps[b], dims[2].taps[e]
        taps.append(pindex[(pa, pb, pe)] * gsize + (oa * grid[1] + ob) * grid[2] + oe)
    rows = ((n - 1) * grid[0] + osp[0] - 1) * grid[1] * grid[2] + (osp[1] - 1) * grid[2] + osp[2]
    ntap = len(taps)
    wbytes = ntap * g * cg * kg * 4
    parts = max(1, min(-(-rows // WGRAD_ROWS), PARTIAL_BYTES // max(wbytes, 1)))
    step = -(-rows // parts)
    parts = -(-rows // step)
    blocks = _col_blocks(g, kg)
    scratch = _scratch.take(2, max(len(phases) * gsize * c, gsize * k))
    try:
        stack = scratch[0][:len(phases) * gsize * c].reshape(len(phases), n, *grid, c)
        x_v = _cl_view(x)
        for p, ph in enumerate(phases):
            _fill_grid(stack[p], x_v, [dims[i].fills[ph[i]] for i in range(3)], st)
            # grid positions no output pixel reads (past the last one of every tap) are
            # zeroed: a garbage row reads them against dY's zeros, and Inf * 0 would be NaN
            for i in range(3):
                read = np.zeros(grid[i], dtype=bool)
                for pp, o in dims[i].taps:
                    if pp == ph[i]:
                        read[o:o + osp[i]] = True
                unread = np.flatnonzero(~read)
                if unread.size:
                    idx: list[Any] = [slice(None)] * 5
                    idx[1 + i] = unread
                    stack[p][tuple(idx)] = 0
        dyg = scratch[1][:gsize * k].reshape(n, *grid, k)
        _fill_grid(dyg, _cl_view(dy), [(0, osp[i], 0) for i in range(3)], (1, 1, 1))
        xflat, dflat = stack.reshape(-1, c), dyg.reshape(-1, k)
        partial = np.empty((parts, ntap, g, cg, kg), dtype=_F32)
        per_part = ntap * len(blocks)

        def item(i: int) -> None:
            pi, j = divmod(i, per_part)
            t, (gi, c0, c1) = j // len(blocks), blocks[j % len(blocks)]
            r0 = pi * step
            r = min(step, rows - r0)
            out = partial[pi, t, gi]
            lib.sgemm(True, cg, c1 - c0, r,
                      xflat.ctypes.data + ((r0 + taps[t]) * c + gi * cg) * 4, c,
                      dflat.ctypes.data + (r0 * k + gi * kg + c0) * 4, k, 0.0,
                      out.ctypes.data + c0 * 4, kg)

        items = parts * per_part
        with _blas.single_threaded(lib):
            run_parts(item, items, _threads(items))
    finally:
        _scratch.give(scratch)
    dw = partial[0]
    for pi in range(1, parts):  # parts added in order: the same bits for any thread count
        dw += partial[pi]
    # (taps, G, Cg, Kg) -> (K, Cg, *kernel)
    out = np.ascontiguousarray(dw.transpose(1, 3, 2, 0)).reshape(k, cg, *w_shape[2:])
    return out
