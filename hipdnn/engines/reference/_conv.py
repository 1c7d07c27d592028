"""Convolution kernels (cross-correlation) for the reference engine: oneDNN's, tap GEMMs, or
im2col/col2im + BLAS GEMMs.

Every function takes logical N,C,(D),H,W arrays of any strides and dtype and returns float32 in
logical order. First choice, where Intel's ``onednn-cpu-gomp`` wheel is installed: oneDNN's
convolutions (:mod:`._onednn`, PyTorch's CPU kernels) for float32-accumulated FP32/FP16/BF16
problems it has a fast implementation of. Next (:func:`_taps`): float32-accumulated problems with at least
:data:`TAP_MIN_CHANNELS` channels per group on both sides, other than 1x1 unit-stride unpadded
filters, run as a sum over kernel taps of BLAS GEMMs on shifted rows of the (phase-split,
padded) channels-last input, with no im2col (:mod:`._conv_taps`), when numpy's bundled OpenBLAS
can be called directly (:mod:`._blas`). The rest: one of two memory orders is chosen from the
main input's strides: channels-last (GEMM rows = output pixels, columns = channels) or
channels-first (one GEMM per image with the pixels as the fast axis). Python loops run only over
kernel offsets (col2im); everything else is strided views, one contiguous copy, and ``np.matmul``.

With numba (:mod:`._conv_jit`) float32-accumulated problems of 16 or more channels per group
(:data:`MIN_COMPILED_CHANNELS`) that the tap GEMMs do not take, of the directions and ranks in
:data:`COMPILED_RANKS`, take the compiled path instead (:func:`implementation`):
channels-last float32 data, im2col in tiles of :data:`TILE_BYTES` (padding read in place, no
padded copy), one GEMM per tile and group; a unit-stride data gradient as the forward
convolution of dy with the flipped filter, a strided one as GEMMs and a compiled col2im gather;
weight-gradient sums in fixed pieces (:data:`WGRAD_CHUNK`), so the bits do not depend on the
thread count. 1x1 filters with unit strides and no padding keep the numpy path (no im2col).
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterator, Sequence
from importlib import metadata
from math import prod
from typing import Any, NamedTuple

import numpy as np

from hipdnn.core.shapes import conv_output_dims
from hipdnn.engines.reference import _bn_jit, _conv_jit, _conv_taps, _onednn, _scratch
from hipdnn.engines.reference._parallel import parallel_copy, run_parts, workers

__all__ = ["conv_dgrad", "conv_fprop", "conv_wgrad", "implementation"]

_F32 = np.float32


def _channels_last(a: np.ndarray) -> bool:
    """True when the channel axis is the fastest-moving axis in memory (NHWC/NDHWC-like)."""
    if a.ndim < 3 or a.shape[1] == 1:
        return False
    inner = [abs(s) for n, s in zip(a.shape[2:], a.strides[2:], strict=True) if n > 1]
    return not inner or abs(a.strides[1]) < min(inner)


#: Below this many channels per group a channels-last im2col copies runs too short to be fast.
_MIN_CL_CHANNELS = 16


def _gemm_order_channels_last(x: np.ndarray, kk: int, cg: int) -> bool:
    """Memory order for a forward GEMM: channels-last (one big GEMM) when there are enough
    channels per group; otherwise, and for 1x1 filters (no im2col copy at all on the packed
    path), the input's own order, so neither the input nor the output is transposed."""
    if kk > 1 and cg >= _MIN_CL_CHANNELS:
        return True
    return _channels_last(x)


def _to_cl(a: np.ndarray, acc: type = _F32) -> np.ndarray:
    """Logical (N, C, *S) -> contiguous ``acc`` (N, *S, C); no copy when already so."""
    return np.ascontiguousarray(np.moveaxis(a, 1, -1), dtype=acc)


def _to_cf(a: np.ndarray, acc: type = _F32) -> np.ndarray:
    """Logical (N, C, *S) -> contiguous ``acc`` (N, C, *S); no copy when already so."""
    return np.ascontiguousarray(a, dtype=acc)


def _pad(a: np.ndarray, sp_axis0: int, pre: Sequence[int], post: Sequence[int]) -> np.ndarray:
    """Zero-pad the spatial axes (starting at ``sp_axis0``) of a contiguous array; negative post crops."""
    if not any(pre) and not any(post):
        return a
    shape = list(a.shape)
    src = [slice(None)] * a.ndim
    dst = [slice(None)] * a.ndim
    for i, (p, q) in enumerate(zip(pre, post, strict=True)):
        ax = sp_axis0 + i
        n = a.shape[ax]
        shape[ax] = n + p + q
        keep = min(n, n + q)  # a negative post padding drops trailing input
        src[ax] = slice(0, keep)
        dst[ax] = slice(p, p + keep)
    out = np.zeros(shape, dtype=a.dtype)
    out[tuple(dst)] = a[tuple(src)]
    return out


def _windows(
    xp: np.ndarray,
    channels_last: bool,
    ksize: Sequence[int],
    out_sp: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
) -> np.ndarray:
    """Strided window view: (N, *O, *K, C) if channels_last else (N, C, *K, *O); no copy."""
    nsp = len(ksize)
    if channels_last:
        sp_strides = xp.strides[1 : 1 + nsp]
        shape = (xp.shape[0], *out_sp, *ksize, xp.shape[-1])
        strides = (
            xp.strides[0],
            *(s * st for s, st in zip(sp_strides, stride, strict=True)),
            *(s * d for s, d in zip(sp_strides, dilation, strict=True)),
            xp.strides[-1],
        )
    else:
        sp_strides = xp.strides[2:]
        shape = (xp.shape[0], xp.shape[1], *ksize, *out_sp)
        strides = (
            xp.strides[0],
            xp.strides[1],
            *(s * d for s, d in zip(sp_strides, dilation, strict=True)),
            *(s * st for s, st in zip(sp_strides, stride, strict=True)),
        )
    return np.lib.stride_tricks.as_strided(xp, shape, strides, writeable=False)


@contextlib.contextmanager
def _im2col(
    x: np.ndarray,
    channels_last: bool,
    ksize: Sequence[int],
    out_sp: Sequence[int],
    pre: Sequence[int],
    post: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    acc: type = _F32,
) -> Iterator[np.ndarray]:
    """Contiguous columns, (N*P, prod(K)*C) channels-last or (N, C*prod(K), P) channels-first,
    for the ``with`` block: they live in reused scratch (:mod:`._scratch`), given back when it
    ends, so nothing may keep them (or a view of them) past it."""
    n, c = x.shape[0], x.shape[1]
    p = prod(out_sp)
    kk = prod(ksize)
    trivial = kk == 1 and not any(pre) and not any(post) and all(s == 1 for s in stride)
    if channels_last:
        xc = _to_cl(x, acc)
        if trivial and tuple(xc.shape[1:-1]) == tuple(out_sp):
            yield xc.reshape(n * p, c)
            return
        view = _windows(_pad(xc, 1, pre, post), True, ksize, out_sp, stride, dilation)
    else:
        xc = _to_cf(x, acc)
        if trivial and tuple(xc.shape[2:]) == tuple(out_sp):
            yield xc.reshape(n, c, p)
            return
        view = _windows(_pad(xc, 2, pre, post), False, ksize, out_sp, stride, dilation)
    scratch = _scratch.take(1, view.size, view.dtype)
    try:
        cols = parallel_copy(view, scratch[0].reshape(view.shape))
        yield cols.reshape(n * p, kk * c) if channels_last else cols.reshape(n, c * kk, p)
    finally:
        _scratch.give(scratch)


def _col2im_windows(
    ksize: Sequence[int], out_sp: Sequence[int], stride: Sequence[int], dilation: Sequence[int]
) -> Iterator[tuple[tuple[int, ...], tuple[slice, ...]]]:
    """Per kernel offset: the offset and the padded-input slices its output pixels read (col2im)."""
    for off in itertools.product(*(range(kd) for kd in ksize)):
        yield off, tuple(
            slice(o * d, o * d + (n - 1) * st + 1, st)
            for o, d, n, st in zip(off, dilation, out_sp, stride, strict=True)
        )


def _check(
    x_shape: Sequence[int], w_shape: Sequence[int], groups: int, nsp: int, *params: Sequence[int]
) -> None:
    if len(x_shape) != nsp + 2 or len(w_shape) != nsp + 2:
        raise ValueError(f"conv needs {nsp + 2}-d x and w, got {tuple(x_shape)} and {tuple(w_shape)}")
    if groups < 1 or x_shape[1] != w_shape[1] * groups or w_shape[0] % groups:
        raise ValueError(
            f"groups={groups} does not fit x channels {x_shape[1]} and w {tuple(w_shape)}"
        )
    for prm in params:
        if len(prm) != nsp:
            raise ValueError(f"conv parameter {tuple(prm)} must have {nsp} entries")


def _conv_fprop_block(
    x: np.ndarray,
    w: np.ndarray,
    pre_padding: Sequence[int],
    post_padding: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    groups: int = 1,
    acc: type = _F32,
) -> np.ndarray:
    """:func:`conv_fprop` on one block (every image and output row at once)."""
    nsp = x.ndim - 2
    _check(x.shape, w.shape, groups, nsp, pre_padding, post_padding, stride, dilation)
    y_dim = conv_output_dims(x.shape, w.shape, pre_padding, post_padding, stride, dilation)
    n, k, out_sp = y_dim[0], y_dim[1], y_dim[2:]
    ksize = w.shape[2:]
    kk, cg, kg, g = prod(ksize), w.shape[1], k // groups, groups
    p = prod(out_sp)
    wf: np.ndarray = w.astype(acc, copy=False)
    cl = _gemm_order_channels_last(x, kk, cg)
    with _im2col(x, cl, ksize, out_sp, pre_padding, post_padding, stride, dilation,
                 acc) as cols:  # every result below is a new array, not a view of the columns
        if cl:
            # rows: output pixels; columns ordered (K offsets, G, Cg)
            w_cl = np.moveaxis(wf.reshape(g, kg, cg, kk), 1, -1)  # (G, Cg, KK, Kg)
            if g == 1:
                y = cols @ np.ascontiguousarray(w_cl[0].transpose(1, 0, 2)).reshape(kk * cg, kg)
            else:
                cg_cols = np.ascontiguousarray(cols.reshape(n * p, kk, g, cg).transpose(2, 0, 1, 3))
                wg = np.ascontiguousarray(w_cl.transpose(0, 2, 1, 3)).reshape(g, kk * cg, kg)
                y = (cg_cols.reshape(g, n * p, kk * cg) @ wg).transpose(1, 0, 2).reshape(n * p, k)
            return np.moveaxis(y.reshape(n, *out_sp, k), -1, 1)
        # channels-first: cols (N, C*KK, P) with C = (G, Cg); one GEMM per image and group
        wg = np.ascontiguousarray(wf).reshape(g, kg, cg * kk)
        y = np.matmul(wg, cols.reshape(n, g, cg * kk, p))
        return y.reshape(n, k, *out_sp)


def _conv_dgrad_block(
    dy: np.ndarray,
    w: np.ndarray,
    x_shape: Sequence[int],
    pre_padding: Sequence[int],
    post_padding: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    groups: int = 1,
) -> np.ndarray:
    """:func:`conv_dgrad` on one block (every image and output row at once)."""
    nsp = dy.ndim - 2
    x_shape = tuple(int(v) for v in x_shape)
    _check(x_shape, w.shape, groups, nsp, pre_padding, post_padding, stride, dilation)
    y_dim = conv_output_dims(x_shape, w.shape, pre_padding, post_padding, stride, dilation)
    if tuple(dy.shape) != y_dim:
        raise ValueError(f"dy shape {tuple(dy.shape)} != conv output shape {y_dim}")
    n, k, out_sp = y_dim[0], y_dim[1], y_dim[2:]
    c, ksize = x_shape[1], w.shape[2:]
    kk, cg, kg, g = prod(ksize), w.shape[1], k // groups, groups
    p = prod(out_sp)
    wf = w.astype(_F32, copy=False)
    in_sp = x_shape[2:]
    trivial = kk == 1 and not any(pre_padding) and all(s == 1 for s in stride) and out_sp == in_sp
    # padded extent: big enough for the input and for every window position
    ext = [
        max(in_sp[i] + pre_padding[i], (out_sp[i] - 1) * stride[i] + (ksize[i] - 1) * dilation[i] + 1)
        for i in range(nsp)
    ]
    crop = tuple(slice(pre_padding[i], pre_padding[i] + in_sp[i]) for i in range(nsp))
    cl = _channels_last(dy)
    dyc: np.ndarray
    if cl:
        dyc = _to_cl(dy).reshape(n * p, k)
        w_cl = np.moveaxis(wf.reshape(g, kg, cg, kk), 2, -1)  # (G, Kg, KK, Cg)
        if g == 1:
            cols: np.ndarray = dyc @ np.ascontiguousarray(w_cl[0]).reshape(kg, kk * cg)
            cols6 = cols.reshape(n, *out_sp, *ksize, c)
        else:
            dyg = np.ascontiguousarray(dyc.reshape(n * p, g, kg).transpose(1, 0, 2))
            cols = dyg @ np.ascontiguousarray(w_cl).reshape(g, kg, kk * cg)  # (G, NP, KK*Cg)
            cols6 = np.moveaxis(cols.reshape(g, n, *out_sp, *ksize, cg), 0, -2)  # (..., G, Cg)
        if trivial:
            return np.moveaxis(cols6.reshape(n, *out_sp, c), -1, 1)
        dxp = np.zeros((n, *ext, c), dtype=_F32)
        for off, sl in _col2im_windows(ksize, out_sp, stride, dilation):
            src = cols6[(slice(None),) * (1 + nsp) + off]
            if cols6.ndim != 2 + 2 * nsp:  # grouped: (..., G, Cg) -> (..., C)
                src = src.reshape(*src.shape[:-2], c)
            dst = (slice(None), *sl)
            dxp[dst] += src
        keep: tuple[slice, ...] = (slice(None), *crop)
        return np.moveaxis(dxp[keep], -1, 1)
    dyc = _to_cf(dy).reshape(n, g, kg, p)
    wt = np.ascontiguousarray(wf.reshape(g, kg, cg * kk).transpose(0, 2, 1))  # (G, Cg*KK, Kg)
    cols = np.matmul(wt, dyc).reshape(n, c, *ksize, *out_sp)
    if trivial:
        return cols.reshape(n, c, *out_sp)
    dxp = np.zeros((n, c, *ext), dtype=_F32)
    for off, sl in _col2im_windows(ksize, out_sp, stride, dilation):
        src_idx: tuple[slice | int, ...] = (slice(None), slice(None), *off)
        dst = (slice(None), slice(None), *sl)
        dxp[dst] += cols[src_idx]
    keep_cf: tuple[slice, ...] = (slice(None), slice(None), *crop)
    return dxp[keep_cf]


def _conv_wgrad_block(
    x: np.ndarray,
    dy: np.ndarray,
    w_shape: Sequence[int],
    pre_padding: Sequence[int],
    post_padding: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    groups: int = 1,
) -> np.ndarray:
    """:func:`conv_wgrad` on one block (every image and output row at once)."""
    nsp = x.ndim - 2
    w_shape = tuple(int(v) for v in w_shape)
    _check(x.shape, w_shape, groups, nsp, pre_padding, post_padding, stride, dilation)
    y_dim = conv_output_dims(x.shape, w_shape, pre_padding, post_padding, stride, dilation)
    if tuple(dy.shape) != y_dim:
        raise ValueError(f"dy shape {tuple(dy.shape)} != conv output shape {y_dim}")
    n, k, out_sp = y_dim[0], y_dim[1], y_dim[2:]
    ksize = w_shape[2:]
    kk, cg, kg, g = prod(ksize), w_shape[1], k // groups, groups
    p = prod(out_sp)
    cl = _channels_last(x)
    dyc: np.ndarray
    with _im2col(x, cl, ksize, out_sp, pre_padding, post_padding, stride,
                 dilation) as cols:  # every result below is a new array
        if cl:
            dyc = _to_cl(dy).reshape(n * p, k)
            if g == 1:
                dw = dyc.T @ cols  # (K, KK*C)
                return np.moveaxis(dw.reshape(k, *ksize, cg), -1, 1)
            cols_g = cols.reshape(n * p, kk, g, cg)
            dws = []
            for gi in range(g):  # one GEMM per group
                dws.append(dyc[:, gi * kg : (gi + 1) * kg].T
                           @ cols_g[:, :, gi, :].reshape(n * p, kk * cg))
            dw = np.concatenate(dws, axis=0)
            return np.moveaxis(dw.reshape(k, *ksize, cg), -1, 1)
        dyc = _to_cf(dy).reshape(n, g, kg, p)
        colsg = cols.reshape(n, g, cg * kk, p)
        dw = np.matmul(dyc, colsg.swapaxes(-1, -2)).sum(axis=0, dtype=_F32)  # (G, Kg, Cg*KK)
        return dw.reshape(w_shape)


# ---------------------------------------------------------------------------- bounded memory
#: Largest im2col/col2im column matrix (bytes) built at once; bigger problems run in slabs of
#: images and of output rows (first spatial axis), so memory stays near the tensors' own size.
COLUMN_BYTES_LIMIT = 1 << 28


class _Slab(NamedTuple):
    """A block of images and output rows, and the rows of the input padded along the first
    spatial axis (see :func:`_pad_rows`) that they read."""

    images: slice
    rows: slice  # output rows along the first spatial axis
    inputs: slice  # padded input rows along the first spatial axis
    pre: tuple[int, ...]  # padding of the slab: none along the first spatial axis
    post: tuple[int, ...]


def _slabs(n: int, out_sp: Sequence[int], ksize: Sequence[int], channels: int,
           pre: Sequence[int], post: Sequence[int], stride: Sequence[int],
           dilation: Sequence[int], itemsize: int) -> list[_Slab] | None:
    """Slabs whose column matrices stay under :data:`COLUMN_BYTES_LIMIT`; None: one block."""
    per_row = prod(out_sp[1:]) * prod(ksize) * channels * itemsize
    if n * out_sp[0] * per_row <= COLUMN_BYTES_LIMIT or min(out_sp) < 1:
        return None
    rows = max(1, COLUMN_BYTES_LIMIT // per_row)
    images = max(1, rows // out_sp[0]) if rows >= out_sp[0] else 1
    rows = min(rows, out_sp[0])
    span = dilation[0] * (ksize[0] - 1) + 1
    return [_Slab(slice(i0, min(i0 + images, n)), slice(a, min(a + rows, out_sp[0])),
                  slice(a * stride[0], (min(a + rows, out_sp[0]) - 1) * stride[0] + span),
                  (0, *pre[1:]), (0, *post[1:]))
            for i0 in range(0, n, images) for a in range(0, out_sp[0], rows)]


def _pad_rows(a: np.ndarray, pre: int, post: int) -> np.ndarray:
    """``a`` zero-padded along axis 2 (a negative ``post`` crops), as the windows read it."""
    if not pre and not post:
        return a
    rows = a.shape[2]
    keep = min(rows, rows + post)
    out = np.zeros((*a.shape[:2], pre + rows + post, *a.shape[3:]), dtype=a.dtype)
    out[:, :, pre:pre + keep] = a[:, :, :keep]
    return out


# ---------------------------------------------------------------------------- compiled tiles
#: Bytes of im2col columns built at once by the compiled path: problems run in tiles of output
#: pixels (fprop, wgrad) or of images (dgrad with a stride), fixed by the shape alone (never by
#: the thread count, so sums run in the same order for any), so memory stays near the tensors'
#: own size and each tile is still in cache when its GEMM reads it.
TILE_BYTES = 1 << 24


#: Rows of one weight-gradient GEMM: BLAS may sum a longer reduction in other pieces when it
#: runs threaded (OpenBLAS 0.3.31 gave other bits with 1 thread than with 2 for sums of 512
#: rows and more, never at 256), so each GEMM sums this many rows and the partial sums are
#: added in row order. Cost: about 5% of a weight gradient's time (single-thread CPU time).
WGRAD_CHUNK = 256


def implementation() -> str:
    """Which convolution runs for float32 data, and why; imports and compiles nothing (numpy's
    BLAS library is looked up, not called)."""
    onednn = _onednn.describe()
    if onednn:
        scope = {"fwd": "fprop and dgrad", "fast": "fprop, dgrad and wgrad (on its own threads)"
                 }.get(_onednn.mode(), "fprop, dgrad and wgrad")
        onednn = f"{onednn} for {scope} where it has a fast kernel; else "
    elif _onednn.mode() == "off":
        onednn = f"(oneDNN off: {_onednn.ENV}=0) "
    taps = (f"{onednn}tap GEMMs on numpy's OpenBLAS (no im2col) where both sides have "
            f">= {TAP_MIN_CHANNELS} channels per group; ")
    if not _taps_on():
        taps = f"{onednn}(tap GEMMs off: {TAPS_ENV}=0) "
    elif _conv_taps.usable() is None:
        taps = onednn
    if _bn_jit.switched_off():
        return f"{taps}im2col/col2im in numpy + BLAS GEMMs ({_bn_jit.ENV}=0)"
    try:
        numba = metadata.version("numba")
    except metadata.PackageNotFoundError:
        return (f"{taps}im2col/col2im in numpy + BLAS GEMMs (numba not installed: pip install "
                "'hipdnn-ctypes[jit]')")
    return (f"{taps}3-D dgrad/wgrad: tiled im2col/col2im compiled by numba {numba} + BLAS "
            f"GEMMs; the rest: im2col/col2im in numpy + BLAS GEMMs")


#: Fewest channels per group of the gathered tensor (x; dy for a unit-stride dgrad; dx for a
#: strided one) for the compiled path: a channels-last row copies runs of this many values, and
#: shorter runs (a 3-channel stem, depthwise) were slower than the numpy im2col's own order
#: (single-thread CPU time, 2-core host: 3->64 7x7 fprop 107 ms compiled, 43 ms numpy).
MIN_COMPILED_CHANNELS = 16


#: Direction -> spatial ranks that take the compiled path. Measured on the 2-core host against
#: the numpy path (bench_reference.py, whole suite each, ratio to PyTorch per family), the
#: compiled path helped 3-D dgrad and wgrad and was slower for 2-D and for 3-D fprop at 2 and
#: 16 threads (its tiles alternate a gather on the pool with a threaded BLAS GEMM), so only
#: those two run it by default; the tests run every direction and rank on both paths.
COMPILED_RANKS: dict[str, tuple[int, ...]] = {"fprop": (), "dgrad": (3,), "wgrad": (3,)}


def _compiled(acc: type, channels: int, direction: str = "fprop",
              nsp: int = 2) -> _conv_jit.Kernels | None:
    """The compiled loops, for float32 accumulation (float64, the exact INT8 path, stays numpy)
    of ``channels`` per group or more, where :data:`COMPILED_RANKS` takes them."""
    if (np.dtype(acc) != np.float32 or channels < MIN_COMPILED_CHANNELS
            or nsp not in COMPILED_RANKS[direction]):
        return None
    return _conv_jit.kernels()


#: Take the tap GEMMs (:mod:`._conv_taps`) where they apply: float32 accumulation, at least
#: :data:`TAP_MIN_CHANNELS` channels per group on both sides, numpy's OpenBLAS callable.
TAP_PATH = True
#: Fewest input and output channels per group for the tap GEMMs: each tap is a GEMM whose
#: inner or outer size is the channel count, and a 3-channel stem or depthwise filter makes
#: GEMMs too thin to be fast (those keep the im2col paths).
TAP_MIN_CHANNELS = 16


#: Environment variable: "0" turns the tap GEMMs off (the im2col paths run).
TAPS_ENV = "HIPDNN_REFERENCE_TAPS"


def _taps_on() -> bool:
    return TAP_PATH and os.environ.get(TAPS_ENV, "").strip() != "0"


def _taps(acc: type, cg: int, kg: int) -> Any:
    """numpy's BLAS for the tap GEMMs, or None when they do not apply."""
    if not _taps_on() or np.dtype(acc) != np.float32 or min(cg, kg) < TAP_MIN_CHANNELS:
        return None
    return _conv_taps.usable()


def _three(v: Sequence[int], fill: int) -> np.ndarray:
    """A spatial parameter as 3 int64 entries (D, H, W), leading ``fill`` for 1-D and 2-D."""
    return np.array([fill] * (3 - len(v)) + [int(i) for i in v], dtype=np.int64)


def _cl5(kern: _conv_jit.Kernels, a: np.ndarray) -> np.ndarray:
    """Logical (N, C, *S) -> contiguous float32 (N, D, H, W, C), 1-D and 2-D with D (H) = 1;
    no copy when already so, else one parallel pass."""
    if a.dtype not in (np.float32, np.float64):  # float16, bfloat16: numpy converts, layout kept
        a = a.astype(_F32)
    n, c, sp = a.shape[0], a.shape[1], a.shape[2:]
    five = (n, *([1] * (3 - len(sp))), *sp, c)
    view = np.moveaxis(a, 1, -1)
    if view.dtype == _F32 and view.flags.c_contiguous:
        return view.reshape(five)
    out = np.empty(five, dtype=_F32)
    src = view.reshape(n, -1, c)  # a view for NC*S / N*SC strides (a copy only for odd ones)
    _gather(kern, "to_float32", src.shape[0] * src.shape[1], src, out.reshape(n, -1, c))
    return out


#: How the compiled gathers run: "numba" (one parallel loop on numba's threads) or "pool"
#: (serial compiled loops in parts on the reference engine's thread pool).
GATHER = "pool"


def _gather(kern: _conv_jit.Kernels, name: str, rows: int, *args: Any) -> None:
    """The compiled ``im2col`` / ``col2im`` over ``rows`` parallel rows."""
    threads = workers()
    if GATHER == "numba":
        _bn_jit.launch(getattr(kern, name), threads, *args, 0, rows)
        return
    fn = getattr(kern, name + "_serial")
    parts = min(threads * 4, rows) if rows * 64 >= 1 << 16 else 1
    step = -(-rows // parts)
    run_parts(lambda i: fn(*args, i * step, min(rows, (i + 1) * step)), parts, threads)


def _rows_per_tile(row_bytes: int) -> int:
    return max(1, TILE_BYTES // max(row_bytes, 1))


def _fprop_compiled(kern: _conv_jit.Kernels, x: np.ndarray, w: np.ndarray, out_sp: Sequence[int],
                    pre: Sequence[int], stride: Sequence[int], dilation: Sequence[int],
                    groups: int) -> np.ndarray:
    """Forward cross-correlation producing ``out_sp`` (the window may read outside x: zeros):
    per tile of output pixels, the compiled im2col into reused scratch and one GEMM per group
    writing the output rows. Returns the logical view of a channels-last float32 result."""
    n, k, ksize = x.shape[0], w.shape[0], w.shape[2:]
    kk, cg, g = prod(ksize), w.shape[1], groups
    kg = k // g
    x5 = _cl5(kern, x)
    # (G, KK*Cg, Kg): a GEMM row per column of im2col, (kernel offset, channel) order
    wg = np.ascontiguousarray(w.astype(_F32, copy=False).reshape(g, kg, cg, kk)
                              .transpose(0, 3, 2, 1)).reshape(g, kk * cg, kg)
    total = n * prod(out_sp)
    y = np.empty((total, k), dtype=_F32)
    tile = min(total, _rows_per_tile(g * kk * cg * 4))
    geo = (_three(out_sp, 1), _three(ksize, 1), _three(stride, 1), _three(pre, 0),
           _three(dilation, 1))
    scratch = _scratch.take(1, g * tile * kk * cg)
    try:
        for m0 in range(0, total, tile):
            r = min(tile, total - m0)
            cols = scratch[0][:g * r * kk * cg].reshape(g, r, kk * cg)
            _gather(kern, "im2col", r, x5, m0, *geo, cols)
            if g == 1:
                np.matmul(cols[0], wg[0], out=y[m0:m0 + r])
            else:
                y[m0:m0 + r].reshape(r, g, kg)[:] = np.matmul(cols, wg).transpose(1, 0, 2)
    finally:
        _scratch.give(scratch)
    return np.moveaxis(y.reshape(n, *out_sp, k), -1, 1)


def _dgrad_compiled(kern: _conv_jit.Kernels, dy: np.ndarray, w: np.ndarray,
                    x_shape: Sequence[int], pre: Sequence[int], stride: Sequence[int],
                    dilation: Sequence[int], groups: int) -> np.ndarray | None:
    """Data gradient. Unit strides: the forward convolution of dy with the filter flipped and
    its channel axes swapped (padding (k-1)*dilation - pre). Else per tile of images, a GEMM
    per group into columns and the compiled col2im gather; None (the numpy slabs run) when one
    image's columns exceed :data:`COLUMN_BYTES_LIMIT`."""
    nsp = dy.ndim - 2
    k, cg, ksize = w.shape[0], w.shape[1], w.shape[2:]
    g, kk = groups, prod(ksize)
    kg, c, n = k // g, cg * groups, x_shape[0]
    in_sp, out_sp = tuple(x_shape[2:]), tuple(dy.shape[2:])
    wf = w.astype(_F32, copy=False)
    if all(s == 1 for s in stride):
        flipped = wf.reshape(g, kg, cg, *ksize).swapaxes(1, 2).reshape(c, kg, *ksize)
        reverse: tuple[slice, ...] = (slice(None),) * 2 + (slice(None, None, -1),) * nsp
        flipped = flipped[reverse]
        pre_t = [(kd - 1) * d - p for kd, d, p in zip(ksize, dilation, pre, strict=True)]
        return _fprop_compiled(kern, dy, flipped, in_sp, pre_t, stride, dilation, groups)
    op = prod(out_sp)
    per_image = op * kk * c * 4
    if per_image > COLUMN_BYTES_LIMIT:
        return None
    images = max(1, TILE_BYTES // per_image)
    dy2 = _cl5(kern, dy).reshape(n * op, k)
    wd = np.ascontiguousarray(wf.reshape(g, kg, cg, kk).transpose(0, 1, 3, 2)).reshape(
        g, kg, kk * cg)  # (G, Kg, KK*Cg)
    dx = np.empty((n, *([1] * (3 - nsp)), *in_sp, c), dtype=_F32)
    geo = (_three(out_sp, 1), _three(ksize, 1), _three(stride, 1), _three(pre, 0),
           _three(dilation, 1))
    scratch = _scratch.take(1, min(images, n) * op * kk * c)
    try:
        for i0 in range(0, n, images):
            i1 = min(n, i0 + images)
            r = (i1 - i0) * op
            cols = scratch[0][:r * kk * c].reshape(g, r, kk * cg)
            np.matmul(dy2[i0 * op:i1 * op].reshape(r, g, kg).transpose(1, 0, 2), wd, out=cols)
            part = dx[i0:i1]
            _gather(kern, "col2im", part.shape[0] * part.shape[1] * part.shape[2], cols, *geo,
                    part)
    finally:
        _scratch.give(scratch)
    return np.moveaxis(dx.reshape(n, *in_sp, c), -1, 1)


def _wgrad_compiled(kern: _conv_jit.Kernels, x: np.ndarray, dy: np.ndarray,
                    w_shape: Sequence[int], pre: Sequence[int], stride: Sequence[int],
                    dilation: Sequence[int], groups: int) -> np.ndarray:
    """Weight gradient: per tile of output pixels, the compiled im2col and one GEMM per group
    (dy's rows transposed times the columns), the tiles' sums added in tile order."""
    n, k, cg, ksize = x.shape[0], w_shape[0], w_shape[1], tuple(w_shape[2:])
    g, kk = groups, prod(ksize)
    kg = k // g
    out_sp = tuple(dy.shape[2:])
    total = n * prod(out_sp)
    x5 = _cl5(kern, x)
    dy2 = _cl5(kern, dy).reshape(total, k)
    dw = np.zeros((g, kg, kk * cg), dtype=_F32)
    tile = min(total, _rows_per_tile(g * kk * cg * 4))
    geo = (_three(out_sp, 1), _three(ksize, 1), _three(stride, 1), _three(pre, 0),
           _three(dilation, 1))
    scratch = _scratch.take(1, g * tile * kk * cg)
    try:
        for m0 in range(0, total, tile):
            r = min(tile, total - m0)
            cols = scratch[0][:g * r * kk * cg].reshape(g, r, kk * cg)
            _gather(kern, "im2col", r, x5, m0, *geo, cols)
            full = r - r % WGRAD_CHUNK
            if full:  # GEMMs over WGRAD_CHUNK rows each, their partial sums added in order
                dyt = dy2[m0:m0 + full].reshape(full // WGRAD_CHUNK, WGRAD_CHUNK, g, kg)
                parts = np.matmul(dyt.transpose(2, 0, 3, 1),
                                  cols[:, :full].reshape(g, -1, WGRAD_CHUNK, kk * cg))
                dw += np.add.reduce(parts, axis=1)
            if r > full:
                dw += np.matmul(dy2[m0 + full:m0 + r].reshape(r - full, g, kg).transpose(1, 2, 0),
                                cols[:, full:])
    finally:
        _scratch.give(scratch)
    return np.ascontiguousarray(np.moveaxis(dw.reshape(k, *ksize, cg), -1, 1))


def _trivial(ksize: Sequence[int], pre: Sequence[int], post: Sequence[int],
             stride: Sequence[int]) -> bool:
    """A 1x1 filter, unit strides, no padding: a plain GEMM over the data as it lies (numpy's
    path has no im2col then, so the compiled path is not taken)."""
    return (prod(ksize) == 1 and not any(pre) and not any(post)
            and all(s == 1 for s in stride))


def conv_fprop(
    x: np.ndarray,
    w: np.ndarray,
    pre_padding: Sequence[int],
    post_padding: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    groups: int = 1,
    acc: type = _F32,
    out_dtype: Any = None,
) -> np.ndarray:
    """Forward cross-correlation: y[n,k,o] = sum_{c,r} x[n, g*Cg+c, o*stride + r*dilation - pre] * w[k,c,r].

    ``acc`` is the accumulation type (float64 gives exact sums of integer products). Large
    problems run in slabs (:data:`COLUMN_BYTES_LIMIT`). ``out_dtype`` (FP16/BF16) lets the
    oneDNN path return the sums rounded once to that type; the other paths return ``acc``.

    >>> conv_fprop(np.ones((1, 1, 3, 3)), np.ones((1, 1, 2, 2)), [0, 0], [0, 0], [1, 1], [1, 1]).tolist()
    [[[[4.0, 4.0], [4.0, 4.0]]]]
    """
    _check(x.shape, w.shape, groups, x.ndim - 2, pre_padding, post_padding, stride, dilation)
    y_dim = conv_output_dims(x.shape, w.shape, pre_padding, post_padding, stride, dilation)
    if np.dtype(acc) == np.float32:
        fast = _onednn.conv("fprop", x, w, y_dim, pre_padding, post_padding, stride, dilation,
                            groups, out_dtype)
        if fast is not None:
            return fast
    trivial = _trivial(w.shape[2:], pre_padding, post_padding, stride)
    lib = _taps(acc, w.shape[1], w.shape[0] // groups)
    if lib is not None and min(y_dim) > 0 and min(x.shape) > 0 and not trivial:
        return _conv_taps.conv_fprop(lib, x, w, y_dim[2:], pre_padding, stride, dilation, groups)
    kern = _compiled(acc, w.shape[1], "fprop", x.ndim - 2)
    if kern is not None and min(y_dim) > 0 and not _trivial(w.shape[2:], pre_padding,
                                                            post_padding, stride):
        return _fprop_compiled(kern, x, w, y_dim[2:], pre_padding, stride, dilation, groups)
    slabs = _slabs(x.shape[0], y_dim[2:], w.shape[2:], x.shape[1], pre_padding, post_padding,
                   stride, dilation, np.dtype(acc).itemsize)
    if slabs is None:
        return _conv_fprop_block(x, w, pre_padding, post_padding, stride, dilation, groups, acc)
    xp = _pad_rows(x, pre_padding[0], post_padding[0])
    y: np.ndarray = np.empty(y_dim, dtype=acc)
    for sl in slabs:
        y[sl.images, :, sl.rows] = _conv_fprop_block(
            xp[sl.images, :, sl.inputs], w, sl.pre, sl.post, stride, dilation, groups, acc)
    return y


def conv_deferred(kind: str, a: np.ndarray, b: np.ndarray, out_shape: Sequence[int],
                  pre_padding: Sequence[int], post_padding: Sequence[int],
                  stride: Sequence[int], dilation: Sequence[int], groups: int = 1,
                  out_dtype: Any = None) -> _onednn.DeferredConv | None:
    """fprop (a=x, b=w) or dgrad (a=dy, b=w) for oneDNN to write straight into the caller's
    output at commit (:class:`._onednn.DeferredConv`), falling back to :func:`conv_fprop` /
    :func:`conv_dgrad` where the output buffer does not suit it; None without oneDNN."""
    if kind == "fprop":
        def fallback() -> np.ndarray:
            return conv_fprop(a, b, pre_padding, post_padding, stride, dilation, groups,
                              out_dtype=out_dtype)
    else:
        def fallback() -> np.ndarray:
            return conv_dgrad(a, b, out_shape, pre_padding, post_padding, stride, dilation,
                              groups, out_dtype=out_dtype)
    return _onednn.deferred(kind, a, b, out_shape, pre_padding, post_padding, stride, dilation,
                            groups, fallback)


def conv_dgrad(
    dy: np.ndarray,
    w: np.ndarray,
    x_shape: Sequence[int],
    pre_padding: Sequence[int],
    post_padding: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    groups: int = 1,
    out_dtype: Any = None,
) -> np.ndarray:
    """Gradient of :func:`conv_fprop` with respect to x (shape ``x_shape``), via GEMM + col2im;
    large problems run in slabs (:data:`COLUMN_BYTES_LIMIT`). ``out_dtype``: as for
    :func:`conv_fprop`."""
    x_shape = tuple(int(v) for v in x_shape)
    _check(x_shape, w.shape, groups, dy.ndim - 2, pre_padding, post_padding, stride, dilation)
    y_dim = conv_output_dims(x_shape, w.shape, pre_padding, post_padding, stride, dilation)
    if tuple(dy.shape) == y_dim:
        dx = _onednn.conv("dgrad", dy, w, x_shape, pre_padding, post_padding, stride, dilation,
                          groups, out_dtype)
        if dx is not None:
            return dx
    lib = _taps(_F32, w.shape[1], w.shape[0] // groups)
    if (lib is not None and tuple(dy.shape) == y_dim and min(y_dim) > 0 and min(x_shape) > 0
            and not _trivial(w.shape[2:], pre_padding, post_padding, stride)):
        return _conv_taps.conv_dgrad(lib, dy, w, x_shape, pre_padding, stride, dilation, groups)
    gathered = w.shape[0] // groups if all(s == 1 for s in stride) else w.shape[1]
    kern = _compiled(_F32, gathered, "dgrad", dy.ndim - 2)
    if (kern is not None and tuple(dy.shape) == y_dim and min(y_dim) > 0 and min(x_shape) > 0
            and not _trivial(w.shape[2:], pre_padding, post_padding, stride)):
        dx = _dgrad_compiled(kern, dy, w, x_shape, pre_padding, stride, dilation, groups)
        if dx is not None:
            return dx
    slabs = _slabs(x_shape[0], y_dim[2:], w.shape[2:], x_shape[1], pre_padding, post_padding,
                   stride, dilation, 4)
    if slabs is None or tuple(dy.shape) != y_dim:
        return _conv_dgrad_block(dy, w, x_shape, pre_padding, post_padding, stride, dilation,
                                 groups)
    pre0, rows = pre_padding[0], x_shape[2]
    dxp = np.zeros((*x_shape[:2], max(pre0 + rows + post_padding[0], pre0 + rows),
                    *x_shape[3:]), dtype=_F32)
    for sl in slabs:
        part = (len(range(*sl.images.indices(x_shape[0]))), x_shape[1],
                sl.inputs.stop - sl.inputs.start, *x_shape[3:])
        dxp[sl.images, :, sl.inputs] += _conv_dgrad_block(
            dy[sl.images, :, sl.rows], w, part, sl.pre, sl.post, stride, dilation, groups)
    return dxp[:, :, pre0:pre0 + rows]


def conv_wgrad(
    x: np.ndarray,
    dy: np.ndarray,
    w_shape: Sequence[int],
    pre_padding: Sequence[int],
    post_padding: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    groups: int = 1,
) -> np.ndarray:
    """Gradient of :func:`conv_fprop` with respect to w (shape ``w_shape``): dy^T @ im2col(x);
    large problems run in slabs (:data:`COLUMN_BYTES_LIMIT`) whose partial sums are added."""
    w_shape = tuple(int(v) for v in w_shape)
    _check(x.shape, w_shape, groups, x.ndim - 2, pre_padding, post_padding, stride, dilation)
    y_dim = conv_output_dims(x.shape, w_shape, pre_padding, post_padding, stride, dilation)
    if tuple(dy.shape) == y_dim:
        dw = _onednn.conv("wgrad", x, dy, w_shape, pre_padding, post_padding, stride, dilation,
                          groups)
        if dw is not None:
            return dw
    lib = _taps(_F32, w_shape[1], w_shape[0] // groups)
    if (lib is not None and tuple(dy.shape) == y_dim and min(y_dim) > 0 and min(x.shape) > 0
            and not _trivial(w_shape[2:], pre_padding, post_padding, stride)):
        return _conv_taps.conv_wgrad(lib, x, dy, w_shape, pre_padding, stride, dilation, groups)
    kern = _compiled(_F32, w_shape[1], "wgrad", x.ndim - 2)
    if (kern is not None and tuple(dy.shape) == y_dim and min(y_dim) > 0
            and not _trivial(w_shape[2:], pre_padding, post_padding, stride)):
        return _wgrad_compiled(kern, x, dy, w_shape, pre_padding, stride, dilation, groups)
    slabs = _slabs(x.shape[0], y_dim[2:], w_shape[2:], x.shape[1], pre_padding, post_padding,
                   stride, dilation, 4)
    if slabs is None or tuple(dy.shape) != y_dim:
        return _conv_wgrad_block(x, dy, w_shape, pre_padding, post_padding, stride, dilation,
                                 groups)
    xp = _pad_rows(x, pre_padding[0], post_padding[0])
    dw = np.zeros(w_shape, dtype=_F32)
    for sl in slabs:
        dw += _conv_wgrad_block(xp[sl.images, :, sl.inputs], dy[sl.images, :, sl.rows], w_shape,
                                sl.pre, sl.post, stride, dilation, groups)
    return dw
