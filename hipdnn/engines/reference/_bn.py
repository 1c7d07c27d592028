"""Batchnorm training forward and backward, streamed through the cache in blocks.

A packed array is viewed, without a copy, as a 2-D matrix: channel-first (N, C, *S) as N*C rows
of the S spatial elements (row ``r`` belongs to channel ``r % C``), channels-last as M = N*S rows
of C. Each pass reads its inputs from memory once; a block of rows (about :data:`BLOCK`
elements) is reduced and transformed while it is in cache, and the blocks are split over the
thread pool of :mod:`._parallel`. Per-channel constants are expanded once into block-shaped
tiles, so every element-wise step is a contiguous numpy loop (a broadcast operand runs at half
the speed).

Numerics. Statistics: one pass yields per block (channel-first: per row) the sum and the sum of
squares (float32 runs added in float64), combined in float64 with Chan's formula
``M2 = sum(M2_b) + sum(n_b*(mean_b-mean)**2)``. That is accurate while the sum of squares is not
much larger than M2 (``|mean| <= ~4*std``; measured relative error of the variance < 1e-5 there);
beyond :data:`MAX_SQUARE_RATIO` (offset data) another pass sums ``d = x - c`` and ``d**2`` in
float64 around ``c``, the float32 mean found so far (``x - c`` is exact there, and ``d**2`` in
float64): ``mean = c + sum(d)/M`` and
``M2 = sum(d**2) - sum(d)**2/M`` in float64, repeated (at most :data:`MAX_SHIFTED_PASSES`)
while the ratio still says the centre is off. Backward: ``sum(dy*(x-mean)) = sum(dy*x) -
mean*sum(dy)`` while ``|mean|*inv_std <= MAX_MEAN_STDS``, else x is centred block by block first.
Element-wise outputs use per-channel affine constants, as PyTorch's CPU kernels:
``y = x*a + (bias - mean*a)`` with ``a = scale*inv_std``; ``dx = dy*k + x*slope + c0``; on offset
data (``|mean|*inv_std > MAX_MEAN_STDS``), where ``x*a`` and ``mean*a`` would cancel,
``y = (x - c)*a + (bias - (mean - c)*a)``. On data with mean 1000 and std 0.01 this makes y,
the mean and the variance at least as accurate as PyTorch's CPU kernels in FP32/FP16/BF16
(tests/oracle/test_bn_offset_accuracy.py).

Output. ``train_forward_deferred`` / ``backward_deferred`` stop before the element-wise pass and
return it as a :class:`Deferred`, which the reference engine runs straight into the caller's
buffer at commit time (hipdnn/engines/reference/engine.py), saving a full array and its copy.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from hipdnn.engines.reference._parallel import map_ranges

__all__ = [
    "BLOCK",
    "MAX_MEAN_STDS",
    "MAX_SHIFTED_PASSES",
    "MAX_SQUARE_RATIO",
    "MAX_TILE",
    "Deferred",
    "Matrix",
    "affine_deferred",
    "backward",
    "backward_deferred",
    "matrix",
    "packed",
    "train_forward",
    "train_forward_deferred",
]

_F32 = np.float32
_F64 = np.float64
#: Elements per block (2 MiB of float32): large enough to amortise the per-call overhead (the
#: numpy calls between GIL releases: on 16 threads, 8x256x56x56, halving the block cost 1.5x and
#: doubling it from 1 MiB saved 10-25%, benchmarks/bench_reference.py cases), small enough that
#: a block and its temporary stay in a core's L2 / the shared cache.
BLOCK = 1 << 19
#: Largest channel-first (C, S) expansion of a per-channel constant (elements; 8 MiB).
MAX_TILE = 1 << 21
#: One-pass variance while sum(x**2) <= this * sum((x-mean)**2) per channel; else two passes.
MAX_SQUARE_RATIO = 17.0
#: Uncentred backward sums, and the uncentred affine forward, while |mean| * inv_std <= this
#: for every channel.
MAX_MEAN_STDS = 4.0
#: Most shifted passes over offset data (each re-centres on the mean the previous one found;
#: one suffices unless float32 runs lost most of the first pass's mean).
MAX_SHIFTED_PASSES = 3
#: Rows a channels-last column sum adds in float32 before switching to float64.
_RUN = 64
_ONES_RUN = np.ones((1, _RUN), dtype=_F32)
_VECDOT: Any = getattr(np, "vecdot", None)  # numpy >= 2: a BLAS dot per row
Expand = Callable[[int, int], Any]


class Matrix(NamedTuple):
    """A packed N,C,*S array as a 2-D view: ``kind`` "cf" ((N*C, S) rows) or "cl" ((M, C))."""

    kind: str
    mat: np.ndarray
    shape: tuple[int, ...]

    @property
    def n(self) -> int:
        """Batch size N."""
        return self.shape[0]

    @property
    def c(self) -> int:
        """Channels C."""
        return self.shape[1]

    @property
    def s(self) -> int:
        """Spatial elements per (n, c)."""
        return math.prod(self.shape[2:])


def matrix(a: np.ndarray) -> Matrix | None:
    """The no-copy 2-D view of a packed channel-first or channels-last array; None otherwise."""
    n, c = a.shape[0], a.shape[1]
    s = math.prod(a.shape[2:])
    cl = np.moveaxis(a, 1, -1)
    if cl.flags.c_contiguous and (s == 1 or not a.flags.c_contiguous):
        return Matrix("cl", cl.reshape(n * s, c), a.shape)
    if a.flags.c_contiguous:
        return Matrix("cf", a.reshape(n * c, s), a.shape)
    return None


def packed(a: np.ndarray) -> Matrix:
    """:func:`matrix` of ``a``, copied to packed float32 first if it has gaps (memory order kept
    when it is channel-first or channels-last with padding)."""
    m = matrix(a)
    if m is None:
        m = matrix(np.array(a, dtype=_F32, order="K"))
    if m is None:
        m = matrix(np.ascontiguousarray(a, dtype=_F32))
    assert m is not None
    return m


def _like(m: Matrix) -> tuple[np.ndarray, np.ndarray]:
    """A new float32 array in ``m``'s memory order: (logical N,C,*S view, its 2-D matrix)."""
    mat = np.empty(m.mat.shape, dtype=_F32)
    if m.kind == "cf":
        return mat.reshape(m.shape), mat
    return np.moveaxis(mat.reshape(m.n, *m.shape[2:], m.c), -1, 1), mat


def _f32(block: np.ndarray) -> np.ndarray:
    return block if block.dtype == _F32 else block.astype(_F32)


class Deferred:
    """A float32 output in ``like``'s memory order whose last pass has not run yet.

    Everything the pass needs (statistics, per-channel tiles) is prepared, so :meth:`write_into`
    runs only float32 numpy ufuncs into existing memory: nothing can fail once it starts
    writing. The reference engine writes such an output straight into the caller's buffer
    at commit time (no engine-side array and no full copy) when :meth:`fits` says it can, and
    otherwise :meth:`materialize` s it into a new array that is committed as usual.
    """

    def __init__(self, like: Matrix, write: Callable[[np.ndarray], None],
                 reads: tuple[np.ndarray, ...],
                 post: list[Callable[[np.ndarray], None]] | None = None) -> None:
        self.like = like
        self.shape = like.shape
        self.dtype = np.dtype(_F32)
        self._write = write
        #: the arrays the pass reads (must not be written before, or by, the pass)
        self.reads = reads
        #: in-place element-wise steps the pass applies to each finished block (None: the pass
        #: takes none)
        self.post = post

    def then(self, step: Callable[[np.ndarray], None]) -> Deferred | None:
        """This pass with ``step`` (an in-place float32 element-wise op, e.g. a ReLU) applied to
        each block while it is in cache; None when the pass takes no steps."""
        if self.post is None:
            return None
        self.post.append(step)
        return self

    def fits(self, view: np.ndarray) -> bool:
        """True when ``view`` is float32, of the output's shape, in the same packed memory order."""
        if view.dtype != _F32 or view.shape != self.shape:
            return False
        if any(r.dtype != _F32 for r in self.reads):  # a block conversion would allocate
            return False
        vm = matrix(view)
        return vm is not None and vm.kind == self.like.kind

    def write_into(self, view: np.ndarray) -> None:
        """Run the pass into ``view`` (which :meth:`fits`)."""
        vm = matrix(view)
        assert vm is not None
        self._write(vm.mat)

    def materialize(self) -> np.ndarray:
        """Run the pass into a new array; returns its logical N,C,*S view."""
        out, mat = _like(self.like)
        self._write(mat)
        return out


class _Plan:
    """How ``m`` is walked: rows per block and how a per-channel vector meets a block.

    ``mode``: "cl" (one (rows, C) tile serves every block); "tile" (channel-first, blocks of R
    rows with R dividing C, tiles cut from a (C, S) expansion, at most :data:`MAX_TILE` elements
    and a quarter of the tensor each, ~10% less CPU than "col"); "scalar" (channel-first rows
    long enough to be one block each); "col" (channel-first, a broadcast (rows, 1) column).
    """

    def __init__(self, m: Matrix) -> None:
        self.m = m
        width = max(m.mat.shape[1], 1)
        self.step = max(1, BLOCK // width)
        self.mode = "cl" if m.kind == "cl" else "col"
        if m.kind == "cf":
            if m.s >= BLOCK // 2:
                self.mode, self.step = "scalar", 1
            else:
                r = max(d for d in range(1, min(m.c, self.step) + 1) if m.c % d == 0)
                if m.n >= 4 and r * m.s >= BLOCK // 8 and m.c * m.s <= MAX_TILE:
                    self.mode, self.step = "tile", r

    def expand(self, v: np.ndarray) -> Expand:
        """``v`` (C,) as a function of a block's rows (lo, hi) giving its float32 operand."""
        m, v = self.m, np.asarray(v, dtype=_F32)
        if self.mode == "cl":
            tile = np.tile(v, min(self.step, m.mat.shape[0])).reshape(-1, m.c)
            return lambda lo, hi: tile[: hi - lo]
        if self.mode == "tile":
            full = np.empty((m.c, m.s), dtype=_F32)
            full[...] = v[:, None]
            return lambda lo, hi: full[lo % m.c : lo % m.c + hi - lo]
        if self.mode == "scalar":
            return lambda lo, hi: v[lo % m.c]
        rows = np.tile(v, m.n)[:, None]
        return lambda lo, hi: rows[lo:hi]

    def run(self, fn: Callable[[int, int, np.ndarray], Any]) -> list[Any]:
        """``fn(lo, hi, tmp)`` for every block, on the pool; ``tmp`` is a block-sized scratch.
        Returns the results in block order."""
        rows, step, width = self.m.mat.shape[0], self.step, self.m.mat.shape[1]

        def span(lo: int, hi: int) -> list[Any]:
            tmp = np.empty((min(step, hi - lo), width), dtype=_F32)
            return [fn(b0, min(b0 + step, hi), tmp[: min(b0 + step, hi) - b0])
                    for b0 in range(lo, hi, step)]

        return [r for part in map_ranges(span, rows, self.m.mat.size, step) for r in part]

    def per_channel(self, parts: list[np.ndarray]) -> np.ndarray:
        """Per-block sums (channel-first: per-row float32 sums) as float64 (G, C) group sums."""
        if self.m.kind == "cl":
            return np.array(parts, dtype=_F64).reshape(-1, self.m.c)
        return np.concatenate(parts).astype(_F64).reshape(self.m.n, self.m.c)


def _row_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _VECDOT(a, b) if _VECDOT is not None else np.einsum("ij,ij->i", a, b)


def _col_sum(*blocks: np.ndarray) -> np.ndarray:
    """float64 column sums of a (rows, C) block (or of the product of two): runs of :data:`_RUN`
    rows add in float32, the runs in float64 (as fast as one einsum, and more accurate). A
    single block's runs are a batched BLAS product with a ones row (~40% less time than the
    einsum here: 2048x256 block, 126 -> 74 us)."""
    rows = blocks[0].shape[0]
    if rows % _RUN or rows == _RUN:
        return np.einsum(",".join(["mc"] * len(blocks)) + "->c", *blocks).astype(_F64)
    runs = [b.reshape(rows // _RUN, _RUN, -1) for b in blocks]
    if len(runs) == 1:
        return np.matmul(_ONES_RUN, runs[0]).sum(axis=0, dtype=_F64).reshape(-1)
    return np.einsum(",".join(["kmc"] * len(runs)) + "->kc", *runs).sum(axis=0, dtype=_F64)


def _sum(p: _Plan, blk: np.ndarray) -> np.ndarray:
    """Per-row (channel-first) or per-column (channels-last) sums of a block. (A BLAS product
    with a ones vector is faster per row on one thread, but OpenBLAS threads it inside the
    pool's workers: 2 threads, 8x256x56x56, the statistics pass took 3.5 -> 5.0 ms.)"""
    return np.einsum("ij->i", blk) if p.m.kind == "cf" else _col_sum(blk)


def _dot(p: _Plan, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-row (channel-first) or per-column (channels-last) sums of a*b."""
    return _row_dot(a, b) if p.m.kind == "cf" else _col_sum(a, b)


def _stats(p: _Plan) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel float64 (mean, M2 = sum of squared deviations) of ``p.m``."""
    m = p.m

    def sums(lo: int, hi: int, tmp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        blk = _f32(m.mat[lo:hi])
        return _sum(p, blk), _dot(p, blk, blk)

    parts = p.run(sums)
    s = p.per_channel([q[0] for q in parts])
    sq = p.per_channel([q[1] for q in parts])
    if m.kind == "cf":
        counts = np.full((m.n, 1), float(m.s))
    else:
        counts = np.diff([min(b, m.mat.shape[0]) for b in range(0, m.mat.shape[0] + p.step, p.step)])
        counts = counts.astype(_F64)[:, None]
    total = float(m.n * m.s)
    mean = s.sum(axis=0) / total
    dev = s / counts - mean
    m2 = (sq - s * s / counts).sum(axis=0) + (counts * dev * dev).sum(axis=0)
    if np.all(~(sq.sum(axis=0) > MAX_SQUARE_RATIO * m2)):
        return mean, np.maximum(m2, 0.0)
    for _ in range(MAX_SHIFTED_PASSES):  # offset data: shifted sums around the last mean
        centre32 = mean.astype(_F32)
        centre = p.expand(centre32)

        def shifted(lo: int, hi: int, tmp: np.ndarray,
                    centre: Expand = centre) -> tuple[np.ndarray, np.ndarray]:
            # x - c is exact near the mean, and so is its square in float64: only the float64
            # accumulation rounds
            d = np.subtract(_f32(m.mat[lo:hi]), centre(lo, hi), out=tmp).astype(_F64)
            return _sum(p, d), _dot(p, d, d)

        parts = p.run(shifted)
        s1 = p.per_channel([q[0] for q in parts]).sum(axis=0)
        s2 = p.per_channel([q[1] for q in parts]).sum(axis=0)
        # the centre actually subtracted is the float32 one: correct for its offset in float64
        mean = centre32.astype(_F64) + s1 / total
        m2 = s2 - s1 * s1 / total
        if np.all(~(s2 > MAX_SQUARE_RATIO * m2)):
            break
    return mean, np.maximum(m2, 0.0)


def train_forward(
    x: np.ndarray, scale: np.ndarray, bias: np.ndarray, eps: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(y, mean, biased_var, inv_std)``: y float32 in x's memory order, mean and variance
    float64 (C,), ``inv_std = 1/sqrt(biased_var + eps)`` float32 (C,)."""
    y, mean, var, inv = train_forward_deferred(x, scale, bias, eps)
    return y.materialize(), mean, var, inv


def train_forward_deferred(
    x: np.ndarray, scale: np.ndarray, bias: np.ndarray, eps: float
) -> tuple[Deferred, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`train_forward` with y's pass left to run (:class:`Deferred`)."""
    m = packed(x)
    if m.mat.size == 0:
        mean, var = np.zeros(m.c), np.zeros(m.c)
        return (Deferred(m, lambda out: None, ()), mean, var,
                (1.0 / np.sqrt(var + float(eps))).astype(_F32))
    p = _Plan(m)
    mean, m2 = _stats(p)
    var = m2 / (m.n * m.s)
    inv = (1.0 / np.sqrt(var + float(eps))).astype(_F32)
    a = scale * inv
    a64 = a.astype(_F64)
    if np.all(~(np.abs(mean) * inv > MAX_MEAN_STDS)):
        y = _affine(p, a, bias - mean * a64)
    else:  # offset data: x*a and mean*a would cancel; (x - c)*a is exact for c near the mean
        centre32 = mean.astype(_F32)
        y = _affine(p, a, bias - (mean - centre32.astype(_F64)) * a64, centre32)
    return y, mean, var, inv


def affine_deferred(x: np.ndarray, mul: np.ndarray, add: np.ndarray,
                    centre: np.ndarray | None = None) -> Deferred:
    """``x*mul + add`` (or ``(x - centre)*mul + add``) per channel, float32, in x's memory
    order, as a :class:`Deferred` (batchnorm inference's element-wise pass)."""
    m = packed(x)
    if m.mat.size == 0:
        return Deferred(m, lambda out: None, ())
    return _affine(_Plan(m), mul, add, centre)


def _affine(p: _Plan, mul_v: np.ndarray, add_v: np.ndarray,
            centre_v: np.ndarray | None = None) -> Deferred:
    m = p.m
    mul, add = p.expand(mul_v), p.expand(add_v)
    post: list[Callable[[np.ndarray], None]] = []
    if centre_v is None:
        def write(ymat: np.ndarray) -> None:
            def blk(lo: int, hi: int, tmp: np.ndarray) -> None:
                yb = np.multiply(_f32(m.mat[lo:hi]), mul(lo, hi), out=ymat[lo:hi])
                np.add(yb, add(lo, hi), out=yb)
                for step in post:
                    step(yb)
            p.run(blk)
    else:
        centre = p.expand(centre_v)

        def write(ymat: np.ndarray) -> None:
            def blk(lo: int, hi: int, tmp: np.ndarray) -> None:
                yb = np.subtract(_f32(m.mat[lo:hi]), centre(lo, hi), out=ymat[lo:hi])
                np.multiply(yb, mul(lo, hi), out=yb)
                np.add(yb, add(lo, hi), out=yb)
                for step in post:
                    step(yb)
            p.run(blk)

    return Deferred(m, write, (m.mat,), post)


def backward(
    dy: np.ndarray, x: np.ndarray, scale: np.ndarray, mean: np.ndarray, inv: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dx, dscale, dbias)``: dx float32 in x's memory order, the sums float64 (C,)."""
    dx, dscale, dbias = backward_deferred(dy, x, scale, mean, inv)
    return dx.materialize(), dscale, dbias


def backward_deferred(
    dy: np.ndarray, x: np.ndarray, scale: np.ndarray, mean: np.ndarray, inv: np.ndarray
) -> tuple[Deferred, np.ndarray, np.ndarray]:
    """:func:`backward` with dx's pass left to run (:class:`Deferred`)."""
    m = packed(x)
    dm = matrix(dy)
    if dm is None or dm.kind != m.kind:  # dy in x's memory order
        buf, _ = _like(m)
        buf[...] = dy
        dm = matrix(buf)
    assert dm is not None
    if m.mat.size == 0:
        return Deferred(m, lambda out: None, ()), np.zeros(m.c), np.zeros(m.c)
    p = _Plan(m)
    mean64, inv64 = np.asarray(mean, dtype=_F64), np.asarray(inv, dtype=_F64)
    centre = p.expand(mean) if not np.all(~(np.abs(mean64 * inv64) > MAX_MEAN_STDS)) else None

    def sums(lo: int, hi: int, tmp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        xb, dyb = _f32(m.mat[lo:hi]), _f32(dm.mat[lo:hi])
        if centre is not None:
            xb = np.subtract(xb, centre(lo, hi), out=tmp)
        return _sum(p, dyb), _dot(p, dyb, xb)

    parts = p.run(sums)
    dbias = p.per_channel([q[0] for q in parts]).sum(axis=0)
    dot = p.per_channel([q[1] for q in parts]).sum(axis=0)
    if centre is None:
        dot -= mean64 * dbias
    dscale = dot * inv64
    k = np.asarray(scale, dtype=_F64) * inv64
    count = m.n * m.s
    # dx = k*dy - k*dbias/M - (x-mean)*k*inv*dscale/M = k*dy + slope*(x - centre) + c0
    slope = -(k * inv64 * dscale / count)
    c0 = -(k * dbias / count) - (slope * mean64 if centre is None else 0.0)
    k_t, slope_t, c0_t = p.expand(k), p.expand(slope), p.expand(c0)

    def write(dxmat: np.ndarray) -> None:
        def blk(lo: int, hi: int, tmp: np.ndarray) -> None:
            dxb, xb = dxmat[lo:hi], _f32(m.mat[lo:hi])
            if centre is not None:
                xb = np.subtract(xb, centre(lo, hi), out=dxb)
            np.multiply(xb, slope_t(lo, hi), out=dxb)
            dxb += np.multiply(_f32(dm.mat[lo:hi]), k_t(lo, hi), out=tmp)
            dxb += c0_t(lo, hi)
        p.run(blk)

    return Deferred(m, write, (m.mat, dm.mat)), dscale, dbias
