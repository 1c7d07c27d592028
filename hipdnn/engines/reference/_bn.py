"""Batchnorm training forward and backward, in blocks split over the reference thread pool.

A packed array is viewed, without a copy, as a 2-D matrix: channel-first (N, C, *S) as N*C rows
of the S spatial elements (row ``r`` belongs to channel ``r % C``), channels-last as M = N*S rows
of C. Each pass reads its inputs from memory once. The rows are split into parts (about
:data:`PART` elements each) that the calling thread and the pool of :mod:`._parallel` take in
turn; a part is walked in blocks of at most :data:`BLOCK` elements, each reduced or transformed
by a few numpy calls (they release the GIL). Per-channel constants meet a block as a (rows, 1)
column (channel-first), a slice of a (C, S) tile (short channel-first rows) or one small
(R, C) tile broadcast over the block viewed as (k, R, C) (channels-last), so nothing of the
tensor's size is built serially. Nothing in a pass calls BLAS (whose own threads would
oversubscribe the pool's) and no pass allocates a large array per call: the block-sized
scratch of the offset-data passes is reused (:mod:`._scratch`), and dx's pass needs
none (it works in place in the output).

Results do not depend on the split: a reduction leaves one float32 partial per fixed group (a
channel-first row, or :data:`_RUN` channels-last rows) in its slot, and the groups are combined
in float64 in one fixed order on the calling thread; the element-wise passes compute each
element alone. Any thread count, block or part size gives the same bits
(tests/unit/test_reference_bn_threads.py).

Numerics. Statistics: one pass yields per group the float32 sum and sum of squares, combined in
float64 as ``M2 = sum(x**2) - sum(x)**2/M`` (for the same group partials this equals Chan's
``sum(M2_g) + sum(n_g*(mean_g-mean)**2)`` up to float64 rounding). That is accurate
while the sum of squares is not much larger than M2 (``|mean| <= ~4*std``; measured relative error of the variance < 1e-5 there);
beyond :data:`MAX_SQUARE_RATIO` (offset data), or when the float32 sum of squares overflowed
(``|x|`` above ~1.8e19), another pass sums ``d = x - c`` and ``d**2`` in float64 around ``c``,
the float32 mean found so far (``x - c`` taken in float64 from the float32 values, as the
compiled loops do, is exact near the mean, and so is ``d**2``): ``mean = c + sum(d)/M`` and
``M2 = sum(d**2) - sum(d)**2/M`` in float64, repeated (at most :data:`MAX_SHIFTED_PASSES`)
while the ratio still says the centre is off. Backward: ``sum(dy*(x-mean)) = sum(dy*x) -
mean*sum(dy)`` while ``|mean|*inv_std <= MAX_MEAN_STDS``, else x is centred block by block first.
Element-wise outputs use per-channel affine constants, as PyTorch's CPU kernels:
``y = x*a + (bias - mean*a)`` with ``a = scale*inv_std``; ``dx = (dy + x*r + e)*k`` (four
in-place passes over dx); on offset data (``|mean|*inv_std > MAX_MEAN_STDS``), where ``x*a`` and ``mean*a`` would cancel,
``y = (x - c)*a + (bias - (mean - c)*a)``. On data with mean 1000 and std 0.01 this makes y,
the mean and the variance at least as accurate as PyTorch's CPU kernels in FP32/FP16/BF16
(tests/oracle/test_bn_offset_accuracy.py).

Compiled loops. When numba is installed (and ``HIPDNN_REFERENCE_JIT`` is not 0), a float32
tensor of at least :data:`JIT_MIN_SIZE` elements has its passes run as fused loops instead
(:mod:`._bn_jit`): one parallel loop per pass over the whole matrix on numba's threads (as
many as this pool would use), float64 partials per the same fixed groups, combined the same
way, so the results have the same bits for any thread count there too. They always centre on the float32 mean (the sums around ``c``, then
``y = (x - c)*a + (bias - (mean - c)*a)`` and ``dx = (((x - c)*r + dy) + e)*k``), which costs
nothing in a fused loop and never cancels; the statistics' square-ratio check and shifted
passes are the same. FP16/BF16 tensors keep the numpy passes.

Output. ``train_forward_deferred`` / ``backward_deferred`` stop before the element-wise pass and
return it as a :class:`Deferred`, which the reference engine runs straight into the caller's
buffer at commit time (hipdnn/engines/reference/engine.py), saving a full array and its copy.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from importlib import metadata
from typing import Any, NamedTuple

import numpy as np

from hipdnn.engines.reference import _bn_jit, _parallel, _scratch
from hipdnn.engines.reference._deferred import DeferredOutput

__all__ = [
    "BLOCK",
    "JIT_MIN_SIZE",
    "MAX_MEAN_STDS",
    "MAX_SHIFTED_PASSES",
    "MAX_SQUARE_RATIO",
    "MAX_TILE",
    "Deferred",
    "Matrix",
    "affine_deferred",
    "backward",
    "backward_deferred",
    "implementation",
    "matrix",
    "packed",
    "train_forward",
    "train_forward_deferred",
]

_F32 = np.float32
_F64 = np.float64
#: Most elements per block (4 MiB of float32): each numpy call of a pass covers a whole block.
#: Fewer, larger calls won on the 16-core GPU host at every thread count (8x256x56x56, one
#: sweep: 1 Mi elements against 128 Ki-512 Ki, 10-40% less time), as the tensor stays in its
#: 300 MB L3 between passes while every call costs a GIL hand-off.
BLOCK = 1 << 20
#: Elements per part (3 MiB of float32): a tensor is split into about size / PART parts, run by at most as many
#: threads (8x256x56x56: 8 parts). On that host 8 parts beat 4, 16 and 32 at 2 to 16 threads:
#: with more threads the memory bandwidth is spent (a numpy multiply over 25.7 MB took 0.68 ms
#: on 8 threads, 0.91 ms on 16) and each thread only adds GIL hand-offs.
PART = 3 << 18
#: Largest channel-first (C, S) expansion of a per-channel constant (elements; 8 MiB).
MAX_TILE = 1 << 21
#: Channel-first rows at least this long take a (rows, 1) column operand instead of a tile.
COL_MIN_S = 1024
#: One-pass variance while sum(x**2) <= this * sum((x-mean)**2) per channel; else two passes.
MAX_SQUARE_RATIO = 17.0
#: Uncentred backward sums, and the uncentred affine forward, while |mean| * inv_std <= this
#: for every channel.
MAX_MEAN_STDS = 4.0
#: Most shifted passes over offset data (each re-centres on the mean the previous one found;
#: one suffices unless float32 runs lost most of the first pass's mean).
MAX_SHIFTED_PASSES = 3
#: Rows of a channels-last group: its column sums add in float32, the groups in float64 (the
#: compiled loops group the same rows).
_RUN = _bn_jit.RUN
#: Smallest channels-last constant tile (elements): a block is viewed as (k, rows, C) and
#: the tile (rows, C) broadcast over k, so every numpy inner loop is this long or longer.
_CL_TILE = 1 << 14
#: Smallest tensor (elements) run by the compiled loops of :mod:`._bn_jit`: below it the numpy
#: passes take tens of microseconds, and a process that never reaches it never imports numba
#: (about half a second, with its kernels loaded from numba's cache).
JIT_MIN_SIZE = 1 << 16
Operand = Callable[[int, int], Any]


def implementation() -> str:
    """Which implementation float32 batchnorm of :data:`JIT_MIN_SIZE` elements or more gets,
    and why (``python -m hipdnn info``); imports and compiles nothing."""
    if _bn_jit.switched_off():
        return f"numpy passes ({_bn_jit.ENV}=0)"
    try:
        numba = metadata.version("numba")
    except metadata.PackageNotFoundError:
        # the [jit] extra is numba alone; naming numba works for a checkout and a wheel alike
        return f"numpy passes (numba not installed: pip install '{_bn_jit.REQUIREMENT}')"
    return f"loops compiled by numba {numba} (float32, {JIT_MIN_SIZE // 1024} Ki elements or more)"


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


class Deferred(DeferredOutput):
    """A float32 output in ``like``'s memory order whose last pass has not run yet.

    Everything the pass needs (statistics, per-channel operands) is prepared, so
    :meth:`write_into` runs only float32 numpy ufuncs into existing memory: nothing can fail
    once it starts writing. The reference engine writes such an output straight into the
    caller's buffer at commit time (no engine-side array and no full copy) when :meth:`fits`
    says it can, and otherwise :meth:`materialize` s it into a new array that is committed as
    usual.
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
    """How ``m`` is split and how a per-channel vector meets a block.

    Rows are split into about size / :data:`PART` parts, run by :func:`._parallel.run_parts`
    on at most that many threads, each part walked in blocks of at most :data:`BLOCK` elements. Reductions
    produce one float32 partial per group, whatever the split: channel-first a row (the S
    elements of one (n, c)), channels-last :data:`_RUN` rows; the groups are combined in
    float64 on the calling thread, so the results have the same bits for any thread count.

    ``mode``: "cl" (channels-last: a block is viewed as (k, R, C) against one (R, C) tile);
    "col" (channel-first rows of at least :data:`COL_MIN_S` elements: a (rows, 1) column);
    "scalar" (channel-first rows of half a block or more: one row a block, same column);
    "tile" (short channel-first rows: blocks of R rows with R dividing C, against a slice of
    a (C, S) expansion of at most :data:`MAX_TILE` elements).
    """

    def __init__(self, m: Matrix) -> None:
        self.m = m
        rows, width = m.mat.shape
        per = max(1, BLOCK // max(width, 1))
        self.mode, unit = "col", 1
        if m.kind == "cl":
            self.mode = "cl"
            unit = _RUN * max(1, -(-_CL_TILE // (_RUN * max(m.c, 1))))
        elif m.s >= BLOCK // 2:
            self.mode = "scalar"
        elif m.s < COL_MIN_S and m.n >= 4 and m.c * m.s <= MAX_TILE:
            unit = max(d for d in range(1, min(m.c, per) + 1) if m.c % d == 0)
            if unit * m.s >= BLOCK // 8:
                self.mode = "tile"
            else:
                unit = 1
        self.unit = unit
        self.step = max(unit, per // unit * unit)
        units = -(-rows // unit)
        count = _parallel.workers()
        parts = (1 if count < 2 or m.mat.size < _parallel.PARALLEL_MIN_SIZE
                 else max(1, min(units, round(m.mat.size / PART))))
        edges = [min(rows, units * i // parts * unit) for i in range(parts + 1)]
        self.spans = [(lo, hi) for lo, hi in itertools.pairwise(edges) if hi > lo]
        #: threads that run the parts at once
        self.threads = min(count, len(self.spans))
        self.groups = -(-rows // _RUN) if m.kind == "cl" else rows
        #: the compiled loops (:mod:`._bn_jit`) for a float32 matrix, else None (numpy passes)
        kernels = (_bn_jit.kernels() if m.mat.dtype == _F32 and m.mat.size >= JIT_MIN_SIZE
                   else None)
        self.jit = None if kernels is None else kernels.cl if m.kind == "cl" else kernels.cf
        #: numba threads for the compiled loops
        self.jit_threads = 1 if m.mat.size < _parallel.PARALLEL_MIN_SIZE else count

    def blocks(self, lo: int, hi: int) -> Iterator[tuple[int, int]]:
        """The blocks of rows [lo, hi); channels-last, a last block shorter than the tile's rows
        is split off."""
        for b0 in range(lo, hi, self.step):
            b1 = min(b0 + self.step, hi)
            if self.mode == "cl" and (b1 - b0) % self.unit and b1 - b0 > self.unit:
                cut = b0 + (b1 - b0) // self.unit * self.unit
                yield b0, cut
                yield cut, b1
            else:
                yield b0, b1

    def view(self, a: np.ndarray, lo: int, hi: int) -> np.ndarray:
        """Rows [lo, hi) of 2-D ``a`` shaped to meet :meth:`operand` (channels-last: 3-D)."""
        blk = a[lo:hi]
        if self.mode != "cl":
            return blk
        rows = hi - lo
        return blk.reshape(rows // self.unit, self.unit, -1) if rows % self.unit == 0 else blk[None]

    def operand(self, v: np.ndarray) -> Operand:
        """``v`` (C,) as a function of a block's rows (lo, hi) giving its float32 operand."""
        m, v = self.m, np.asarray(v, dtype=_F32)
        if self.mode == "cl":
            tile = np.tile(v, min(self.unit, m.mat.shape[0])).reshape(-1, m.c)
            return lambda lo, hi: tile if (hi - lo) % self.unit == 0 else tile[: hi - lo]
        if self.mode == "tile":
            full = np.empty((m.c, m.s), dtype=_F32)
            full[...] = v[:, None]
            return lambda lo, hi: full[lo % m.c : lo % m.c + hi - lo]
        col = np.tile(v, m.n)[:, None]
        return lambda lo, hi: col[lo:hi]

    def run(self, fn: Callable[[int, int, np.ndarray | None], None],
            scratch: list[np.ndarray] | None = None) -> None:
        """``fn(lo, hi, tmp)`` for every block, the parts on the pool; ``tmp`` is a block-sized
        float32 buffer from ``scratch`` (one per thread, :meth:`scratch_size` each) or None."""
        free = list(scratch) if scratch else None
        spans = self.spans

        def part(i: int) -> None:
            buf = free.pop() if free is not None else None  # list.pop is atomic under the GIL
            try:
                for lo, hi in self.blocks(*spans[i]):
                    tmp = None if buf is None else buf[: (hi - lo) * self.m.mat.shape[1]]
                    fn(lo, hi, tmp)
            finally:
                if buf is not None:
                    assert free is not None
                    free.append(buf)

        _parallel.run_parts(part, len(spans), self.threads)

    def launch(self, kernel: Callable[..., None], *args: Any) -> None:
        """Run a compiled loop (:mod:`._bn_jit`) over the whole matrix on numba's threads."""
        _bn_jit.launch(kernel, self.jit_threads, *args)

    def scratch_size(self) -> int:
        """Elements of one block's scratch."""
        return min(self.step, self.m.mat.shape[0]) * self.m.mat.shape[1]

    def reserve(self) -> list[np.ndarray]:
        """Scratch for :meth:`run`: one block-sized buffer per thread."""
        return _scratch.take(max(self.threads, 1), self.scratch_size())

    def partials(self, dtype: Any = _F32) -> np.ndarray:
        """An array for one partial sum per group: (rows,) channel-first, (groups, C) channels-last."""
        shape = (self.groups, self.m.c) if self.m.kind == "cl" else (self.groups,)
        return np.empty(shape, dtype=dtype)

    def total(self, part: np.ndarray) -> np.ndarray:
        """Per-channel float64 (C,) sum of the group partials, added in one fixed order (the
        groups' row order), without a float64 copy of the partials."""
        return np.add.reduce(part.reshape(-1, self.m.c), axis=0, dtype=_F64)

    def sums(self, a: np.ndarray, b: np.ndarray | None, lo: int, hi: int,
             out: np.ndarray) -> None:
        """Group sums of block rows [lo, hi) of ``a`` (or of ``a*b``) into ``out``'s groups."""
        if self.mode != "cl":
            np.einsum("ij->i" if b is None else "ij,ij->i", *((a,) if b is None else (a, b)),
                      out=out[lo:hi])
            return
        g0, full = lo // _RUN, (hi - lo) // _RUN * _RUN
        ops = (a,) if b is None else (a, b)
        if full:
            runs = [o[:full].reshape(-1, _RUN, o.shape[1]) for o in ops]
            np.einsum(",".join(["kmc"] * len(runs)) + "->kc", *runs, out=out[g0 : g0 + full // _RUN])
        if full < hi - lo:
            np.einsum(",".join(["mc"] * len(ops)) + "->c", *(o[full:] for o in ops),
                      out=out[g0 + full // _RUN])


def _stats(p: _Plan) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel float64 (mean, M2 = sum of squared deviations) of ``p.m``."""
    if p.jit is not None:
        return _stats_jit(p, p.jit)
    m = p.m
    s_part, q_part = p.partials(), p.partials()

    def sums(lo: int, hi: int, tmp: np.ndarray | None) -> None:
        blk = _f32(m.mat[lo:hi])
        p.sums(blk, None, lo, hi, s_part)
        p.sums(blk, blk, lo, hi, q_part)

    p.run(sums)
    # Chan's combination of the groups, sum(M2_g) + sum(n_g*(mean_g - mean)**2), equals
    # sum(x**2) - sum(x)**2/M exactly for the same group partials; in float64, with the
    # ratio below bounded, the two differ by float64 rounding only (~1e-15), far below the
    # float32 partials' own error, and this form is two reductions instead of a dozen
    # float64 passes over the (groups, C) partials on the calling thread.
    s, sq = p.total(s_part), p.total(q_part)
    total = float(m.n * m.s)
    mean = s / total
    m2 = sq - s * mean
    if np.all(np.isfinite(sq)) and np.all(~(sq > MAX_SQUARE_RATIO * m2)):
        return mean, np.maximum(m2, 0.0)
    # offset data (the one-pass sums cancel), or float32 squares that overflowed (|x| above
    # ~1.8e19: sum(x**2) inf, the variance inf, inv_std 0): float64 sums around a centre, the
    # first one zero where the float32 mean is no number
    mean = np.where(np.isfinite(mean), mean, 0.0)
    s_part, q_part = p.partials(_F64), p.partials(_F64)
    for _ in range(MAX_SHIFTED_PASSES):  # shifted sums around the last mean
        centre32 = mean.astype(_F32)
        centre = p.operand(centre32)

        def shifted(lo: int, hi: int, tmp: np.ndarray | None, centre: Operand = centre) -> None:
            # x - c taken in float64 (as in the compiled loops) is exact near the mean, and so
            # is its square: only the float64 accumulation rounds
            d = np.subtract(p.view(_f32(m.mat), lo, hi), centre(lo, hi), dtype=_F64)
            d = d.reshape(hi - lo, -1)
            p.sums(d, None, lo, hi, s_part)
            p.sums(d, d, lo, hi, q_part)

        p.run(shifted)
        mean, m2, settled = _around(centre32, p.total(s_part), p.total(q_part), total)
        if settled:
            break
    return mean, np.maximum(m2, 0.0)


def _around(centre32: np.ndarray, s1: np.ndarray, s2: np.ndarray,
            total: float) -> tuple[np.ndarray, np.ndarray, bool]:
    """(mean, M2, settled) from the float64 sums of ``d = x - c`` and ``d**2`` around the
    float32 centre ``c`` actually subtracted (its offset corrected in float64); settled: the
    square ratio says ``c`` is near enough the mean that M2 lost nothing to cancellation."""
    mean = centre32.astype(_F64) + s1 / total
    m2 = s2 - s1 * s1 / total
    return mean, m2, bool(np.all(~(s2 > MAX_SQUARE_RATIO * m2)))


def _stats_jit(p: _Plan, k: _bn_jit.Layout) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_stats` by the compiled loop: float64 sums around a float32 centre (zero first,
    then the mean found so far while the square ratio says the centre is off)."""
    m = p.m
    s_part, q_part = p.partials(_F64), p.partials(_F64)
    total = float(m.n * m.s)
    centre32 = np.zeros(m.c, dtype=_F32)
    for _ in range(1 + MAX_SHIFTED_PASSES):
        p.launch(k.moments, m.mat, m.c, centre32, s_part, q_part)
        mean, m2, settled = _around(centre32, p.total(s_part), p.total(q_part), total)
        if settled:
            break
        centre32 = mean.astype(_F32)
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
    if p.jit is not None:  # centred always: no cancellation, and no extra pass to pay for it
        centre32 = mean.astype(_F32)
        return (_affine(p, a, bias - (mean - centre32.astype(_F64)) * a64, centre32),
                mean, var, inv)
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
    if p.jit is not None:
        return _affine_jit(p, p.jit, mul_v, add_v, centre_v)
    m = p.m
    mul, add = p.operand(mul_v), p.operand(add_v)
    centre = None if centre_v is None else p.operand(centre_v)
    post: list[Callable[[np.ndarray], None]] = []

    def write(ymat: np.ndarray) -> None:
        def blk(lo: int, hi: int, tmp: np.ndarray | None) -> None:
            xb, yb = p.view(_f32(m.mat), lo, hi), p.view(ymat, lo, hi)
            if centre is not None:
                xb = np.subtract(xb, centre(lo, hi), out=yb)
            np.multiply(xb, mul(lo, hi), out=yb)
            np.add(yb, add(lo, hi), out=yb)
            for step in post:
                step(yb)
        p.run(blk)

    return Deferred(m, write, (m.mat,), post)


def _vec(v: np.ndarray | None, c: int) -> np.ndarray:
    """A per-channel constant as the compiled loops take it: float32 (C,), contiguous."""
    return np.zeros(c, dtype=_F32) if v is None else np.ascontiguousarray(v, dtype=_F32)


def _affine_jit(p: _Plan, k: _bn_jit.Layout, mul_v: np.ndarray, add_v: np.ndarray,
                centre_v: np.ndarray | None) -> Deferred:
    """:func:`_affine` by the compiled loop (``x - 0`` is exact: no centre is a zero one)."""
    m = p.m
    mul, add, centre = _vec(mul_v, m.c), _vec(add_v, m.c), _vec(centre_v, m.c)
    post: list[Callable[[np.ndarray], None]] = []

    def write(ymat: np.ndarray) -> None:
        p.launch(k.affine, m.mat, m.c, centre, mul, add, ymat)
        if post:  # another pass, in blocks on the pool (numpy's element-wise steps)
            def blk(lo: int, hi: int, tmp: np.ndarray | None) -> None:
                yb = p.view(ymat, lo, hi)
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
    if p.jit is not None and dm.mat.dtype == _F32:
        return _backward_jit(p, p.jit, dm, scale, mean, inv)
    mean64, inv64 = np.asarray(mean, dtype=_F64), np.asarray(inv, dtype=_F64)
    centre = p.operand(mean) if not np.all(~(np.abs(mean64 * inv64) > MAX_MEAN_STDS)) else None
    s_part, d_part = p.partials(), p.partials()

    def sums(lo: int, hi: int, tmp: np.ndarray | None) -> None:
        xb, dyb = _f32(m.mat[lo:hi]), _f32(dm.mat[lo:hi])
        if centre is not None:
            assert tmp is not None
            xc = p.view(tmp.reshape(hi - lo, -1), 0, hi - lo)
            np.subtract(p.view(xb, 0, hi - lo), centre(lo, hi), out=xc)
            xb = xc.reshape(hi - lo, -1)
        p.sums(dyb, None, lo, hi, s_part)
        p.sums(dyb, xb, lo, hi, d_part)

    if centre is None:
        p.run(sums)
    else:
        scratch = p.reserve()
        try:
            p.run(sums, scratch)
        finally:
            _scratch.give(scratch)
    dbias = p.total(s_part)
    dot = p.total(d_part)
    if centre is None:
        dot -= mean64 * dbias
    if not (np.isfinite(dbias).all() and np.isfinite(dot).all()):
        # a float32 partial overflowed (|dy*x| summed past 3.4e38, e.g. |x| ~ 1e30 with
        # |dy| ~ 1e10): the sums again in float64, centred on the float64 mean, as PyTorch
        # CPU accumulates them (inf/nan inputs stay non-finite, as they should)
        dbias, dot = _grad_sums64(m, dm, mean64)
    dscale = dot * inv64
    k = np.asarray(scale, dtype=_F64) * inv64
    count = m.n * m.s
    # dx = k*dy - k*dbias/M - (x-mean)*k*inv*dscale/M = k*(dy + r*(x - centre) + e), with
    # r = -inv*dscale/M and e = -dbias/M (- r*mean when x is not centred): four in-place
    # passes over the output and no scratch (a block-sized temporary for dy*k cost a third
    # more time on channels-last 8x256x56x56, 2 threads)
    r = -(inv64 * dscale / count)
    e = -(dbias / count) - (r * mean64 if centre is None else 0.0)
    k_t, r_t, e_t = p.operand(k), p.operand(r), p.operand(e)

    def write(dxmat: np.ndarray) -> None:
        def blk(lo: int, hi: int, tmp: np.ndarray | None) -> None:
            dxb, xb = p.view(dxmat, lo, hi), p.view(_f32(m.mat), lo, hi)
            if centre is not None:
                xb = np.subtract(xb, centre(lo, hi), out=dxb)
            np.multiply(xb, r_t(lo, hi), out=dxb)
            np.add(dxb, p.view(_f32(dm.mat), lo, hi), out=dxb)
            np.add(dxb, e_t(lo, hi), out=dxb)
            np.multiply(dxb, k_t(lo, hi), out=dxb)
        p.run(blk)

    return Deferred(m, write, (m.mat, dm.mat)), dscale, dbias


def _grad_sums64(m: Matrix, dm: Matrix, mean64: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel float64 ``(sum(dy), sum(dy*(x - mean)))`` over whole float64 copies: the
    rare pass after a float32 partial overflowed (memory: two float64 copies of the input)."""
    x64, d64 = m.mat.astype(_F64), dm.mat.astype(_F64)
    with np.errstate(all="ignore"):  # inf/nan inputs give the non-finite sums they should
        if m.kind == "cf":  # (N*C, S) rows
            x64 -= np.tile(mean64, m.n)[:, None]
            s1 = d64.sum(axis=1).reshape(m.n, m.c).sum(axis=0)
            s2 = np.einsum("ij,ij->i", d64, x64).reshape(m.n, m.c).sum(axis=0)
        else:  # (M, C)
            x64 -= mean64
            s1 = d64.sum(axis=0)
            s2 = np.einsum("ij,ij->j", d64, x64)
    return s1, s2


def _backward_jit(p: _Plan, k: _bn_jit.Layout, dm: Matrix, scale: np.ndarray, mean: np.ndarray,
                  inv: np.ndarray) -> tuple[Deferred, np.ndarray, np.ndarray]:
    """:func:`backward_deferred` by the compiled loops, centred on the float32 mean ``c``:
    ``sum(dy*(x - mean)) = sum(dy*(x - c)) - (mean - c)*sum(dy)`` and
    ``dx = (((x - c)*r + dy) + e)*k`` with ``e = -dbias/M - r*(mean - c)``."""
    m = p.m
    mean64, inv64 = np.asarray(mean, dtype=_F64), np.asarray(inv, dtype=_F64)
    centre = _vec(mean, m.c)
    shift = mean64 - centre.astype(_F64)
    s_part, d_part = p.partials(_F64), p.partials(_F64)
    p.launch(k.grad_sums, dm.mat, m.mat, m.c, centre, s_part, d_part)
    dbias = p.total(s_part)
    dscale = (p.total(d_part) - shift * dbias) * inv64
    count = m.n * m.s
    r = -(inv64 * dscale / count)
    kv, rv, ev = (_vec(v, m.c) for v in (np.asarray(scale, dtype=_F64) * inv64, r,
                                         -(dbias / count) - r * shift))

    def write(dxmat: np.ndarray) -> None:
        p.launch(k.grad_input, dm.mat, m.mat, m.c, centre, rv, ev, kv, dxmat)

    return Deferred(m, write, (m.mat, dm.mat)), dscale, dbias
