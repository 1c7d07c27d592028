"""Fused batchnorm loops compiled by numba, when it is installed: each pass of :mod:`._bn` as
one parallel loop over the tensor instead of several numpy calls per block.

numba is optional (``pip install 'numba>=0.61'``, the ``jit`` extra; it ships wheels, no
compiler). Without it, or with ``HIPDNN_REFERENCE_JIT=0``, or if compiling fails (a warning says
why, once), the numpy passes of :mod:`._bn` run instead; :func:`kernels` decides, per call.

Each kernel is one parallel loop over the whole packed 2-D float32 matrix (channel-first
``(N*C, S)``, row ``r`` in channel ``r % C``, or channels-last ``(N*S, C)``), its rows or
row groups split over numba's threads (``parallel=True``; :func:`launch` sets their count to
the reference engine's, ``HIPDNN_REFERENCE_THREADS``). Numba's threads start and meet far
faster than a Python pool can hand out parts (on a 16-core host an empty 16-part round of the
reference pool costs 0.3 ms; a whole statistics pass over 25.7 MB in a numba loop, 0.12 ms).
Every row or group writes its own float64 partial, combined by :mod:`._bn` in a fixed order,
so the results have the same bits for any thread count.

Threading layer: numba's own choice (``NUMBA_THREADING_LAYER``, else TBB if installed, else
GNU OpenMP, else its ``workqueue``); the process's choice is never changed. Workqueue must not
be entered from two threads at once, so :func:`launch` holds one lock per process (the kernels
release the GIL while they run). A program that also runs its own numba-parallel code on other
threads at the same time should pick a thread-safe layer (``tbb`` or ``omp``), as numba
documents. A process forked after its parent ran the loops on GNU OpenMP could not launch them
again (GNU OpenMP aborts it), so :func:`kernels` returns None there and the numpy passes run
(tbb and workqueue are fork-safe). Measured on the 16-core GPU host, GNU OpenMP ran these loops
1.5-3x faster than workqueue at 16 threads; on a machine whose cores are busy with other
processes its spinning threads can make them slower than the numpy passes (as PyTorch's own
OpenMP kernels slow down there): ``OMP_WAIT_POLICY=passive`` or ``HIPDNN_REFERENCE_JIT=0``.

Numerics: sums accumulate in float64 around a per-channel float32 centre (``d = x - c``, exact
in float64); a channel-first row's sum may be reassociated by the compiler into SIMD lanes
(``fastmath={"reassoc"}``, the only fast-math flag, and only there): a fixed order for a given
machine, whatever the thread count; channels-last sums add across rows in row order.
Element-wise outputs are float32 ``(x - c)*a + b`` and ``(((x - c)*r + dy) + e)*k``
without fused multiply-adds (numba compiles without fast-math), the numpy passes' own
rounding steps.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import numpy as np

__all__ = ["ENV", "FORK_SAFE_LAYERS", "RUN", "Kernels", "Layout", "build_cached", "kernels", "launch",
           "switched_off"]

T = TypeVar("T")

#: Environment variable: "0" turns the compiled loops off (the numpy passes run).
ENV = "HIPDNN_REFERENCE_JIT"
#: What to install for these loops (the ``jit`` extra of pyproject.toml is this alone).
REQUIREMENT = "numba>=0.61"
#: Channels-last rows per partial-sum group, of both implementations (:mod:`._bn` reads it).
RUN = 64
#: The kernels' parallel loop; :func:`_compile` makes it ``numba.prange`` before compiling them
#: (a plain ``range`` until then, so the module imports without numba).
prange = range


# The kernels' Python source, compiled by :func:`kernels` with ``parallel=True``: each loops over
# the whole matrix, its outer loop a ``prange`` over rows (channel-first) or RUN-row groups
# (channels-last) split over numba's threads. Arguments: ``x``/``dy``/``out`` the 2-D float32
# matrices, ``c`` the channel count, ``centre`` and the per-channel constants float32 (C,),
# ``ps``/``pq`` float64 partials: one per row (channel-first) or (groups, C) (channels-last).

def moments_cf(x: Any, c: int, centre: Any, ps: Any, pq: Any) -> None:
    """Per row: ``sum(x - centre)`` and ``sum((x - centre)**2)`` in float64. Channel-first (N*C, S)."""
    for r in prange(x.shape[0]):
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


def moments_cl(x: Any, c: int, centre: Any, ps: Any, pq: Any) -> None:
    """Per RUN-row group: ``sum(x - centre)`` and ``sum((x - centre)**2)`` in float64, added
    row by row. Channels-last (N*S, C)."""
    rows = x.shape[0]
    for g in prange(ps.shape[0]):
        srow, qrow = ps[g], pq[g]
        for j in range(c):
            srow[j] = 0.0
            qrow[j] = 0.0
        for m in range(g * RUN, min(rows, (g + 1) * RUN)):
            row = x[m]
            for j in range(c):
                d = np.float64(row[j]) - np.float64(centre[j])
                srow[j] += d
                qrow[j] += d * d


def grad_sums_cf(dy: Any, x: Any, c: int, centre: Any, ps: Any, pq: Any) -> None:
    """Per row: ``sum(dy)`` and ``sum(dy*(x - centre))`` in float64. Channel-first (N*C, S)."""
    for r in prange(x.shape[0]):
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


def grad_sums_cl(dy: Any, x: Any, c: int, centre: Any, ps: Any, pq: Any) -> None:
    """Per RUN-row group: ``sum(dy)`` and ``sum(dy*(x - centre))`` in float64. Channels-last."""
    rows = x.shape[0]
    for g in prange(ps.shape[0]):
        srow, qrow = ps[g], pq[g]
        for j in range(c):
            srow[j] = 0.0
            qrow[j] = 0.0
        for m in range(g * RUN, min(rows, (g + 1) * RUN)):
            row, drow = x[m], dy[m]
            for j in range(c):
                v = np.float64(drow[j])
                srow[j] += v
                qrow[j] += v * (np.float64(row[j]) - np.float64(centre[j]))


def affine_cf(x: Any, c: int, centre: Any, mul: Any, add: Any, out: Any) -> None:
    """``out = (x - centre)*mul + add`` in float32 (each step rounded, as numpy's ufuncs).
    Channel-first (N*C, S)."""
    for r in prange(x.shape[0]):
        row, orow = x[r], out[r]
        k, a, b = centre[r % c], mul[r % c], add[r % c]
        for i in range(row.shape[0]):
            orow[i] = (row[i] - k) * a + b


def affine_cl(x: Any, c: int, centre: Any, mul: Any, add: Any, out: Any) -> None:
    """``out = (x - centre)*mul + add`` in float32. Channels-last (N*S, C), RUN rows a task."""
    rows = x.shape[0]
    for g in prange((rows + RUN - 1) // RUN):
        for m in range(g * RUN, min(rows, (g + 1) * RUN)):
            row, orow = x[m], out[m]
            for j in range(c):
                orow[j] = (row[j] - centre[j]) * mul[j] + add[j]


def grad_input_cf(dy: Any, x: Any, c: int, centre: Any, rv: Any, ev: Any, kv: Any,
                  out: Any) -> None:
    """``out = (((x - centre)*r + dy) + e)*k`` in float32, each step rounded. Channel-first."""
    for r in prange(x.shape[0]):
        row, drow, orow = x[r], dy[r], out[r]
        k, a, e, f = centre[r % c], rv[r % c], ev[r % c], kv[r % c]
        for i in range(row.shape[0]):
            orow[i] = (((row[i] - k) * a + drow[i]) + e) * f


def grad_input_cl(dy: Any, x: Any, c: int, centre: Any, rv: Any, ev: Any, kv: Any,
                  out: Any) -> None:
    """``out = (((x - centre)*r + dy) + e)*k`` in float32. Channels-last, RUN rows a task."""
    rows = x.shape[0]
    for g in prange((rows + RUN - 1) // RUN):
        for m in range(g * RUN, min(rows, (g + 1) * RUN)):
            row, drow, orow = x[m], dy[m], out[m]
            for j in range(c):
                orow[j] = (((row[j] - centre[j]) * rv[j] + drow[j]) + ev[j]) * kv[j]


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
_LOCK = threading.RLock()  # first compiles (re-entered: a loop beside these compiles them first)
_LAUNCH = threading.Lock()  # one parallel launch at a time (see the module docstring)
_NUMBA: list[Any] = []  # the numba module, once the kernels compiled
_FORKED = [False]  # this process is a fork of one that imported this module
#: Numba threading layers that work in a forked child once the parent has launched on them
#: (GNU OpenMP aborts the child: "fork() called from a process already using GNU OpenMP").
FORK_SAFE_LAYERS = ("tbb", "workqueue")


def _after_fork_in_child() -> None:
    _FORKED[0] = True
    globals()["_LAUNCH"] = threading.Lock()  # a fork mid-launch must not leave it held


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _usable_here() -> bool:
    """False in a forked child whose parent started a threading layer that is not fork-safe."""
    if not _FORKED[0]:
        return True
    try:
        return bool(_NUMBA[0].threading_layer() in FORK_SAFE_LAYERS)
    except ValueError:  # the parent never launched: the child starts its own layer
        return True


def launch(kernel: Callable[..., None], threads: int, *args: Any) -> None:
    """Run ``kernel(*args)`` on ``threads`` of numba's threads (at most NUMBA_NUM_THREADS),
    one launch at a time in this process."""
    with _LAUNCH:
        numba = _NUMBA[0]
        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
        kernel(*args)


def _build(numba: Any, cache: bool) -> Kernels:
    """The kernels, compiled lazily by numba (``cache``: kept in numba's on-disk cache, beside
    this file or in the user's cache directory)."""
    jit = numba.njit(nogil=True, cache=cache, boundscheck=False, parallel=True)
    # a row sum vectorises only if it may be reassociated (into SIMD lanes)
    lanes = numba.njit(nogil=True, cache=cache, boundscheck=False, parallel=True,
                       fastmath={"reassoc"})
    return Kernels(Layout(lanes(moments_cf), lanes(grad_sums_cf), jit(affine_cf),
                          jit(grad_input_cf)),
                   Layout(jit(moments_cl), jit(grad_sums_cl), jit(affine_cl), jit(grad_input_cl)))


def build_cached(numba: Any, build: Callable[[Any, bool], T]) -> T:
    """``build(numba, True)``: loops kept in numba's on-disk cache; where no cache directory is
    writable, ``build(numba, False)`` (compiled again in every process)."""
    try:
        return build(numba, True)
    except RuntimeError as exc:
        if "cannot cache" not in str(exc):
            raise
        return build(numba, False)


def _compile() -> Kernels | None:
    try:
        import numba  # noqa: PLC0415  (optional, and 0.3 s to import: only on first use)
    except ImportError:
        return None
    if getattr(numba.config, "DISABLE_JIT", 0):  # NUMBA_DISABLE_JIT: the loops would be Python
        return None
    try:
        globals()["prange"] = numba.prange  # read when the kernels compile, below
        built = build_cached(numba, _build)
        _NUMBA[:] = [numba]
        # compile now for float32 C-contiguous matrices, both layouts, so a failure shows here
        x = np.zeros((RUN, 2), np.float32)
        v = np.zeros(2, np.float32)
        for lay, ps in ((built.cf, np.zeros(RUN)), (built.cl, np.zeros((1, 2)))):
            launch(lay.moments, 1, x, 2, v, ps, ps.copy())
            launch(lay.grad_sums, 1, x, x, 2, v, ps, ps.copy())
            launch(lay.affine, 1, x, 2, v, v, v, x.copy())
            launch(lay.grad_input, 1, x, x, 2, v, v, v, v, x.copy())
    except Exception as exc:  # a numba that cannot compile these: the numpy passes still work
        warnings.warn(f"hipdnn: numba {getattr(numba, '__version__', '?')} could not compile the "
                      f"reference batchnorm loops ({type(exc).__name__}: {exc}); using numpy "
                      f"(set {ENV}=0 to silence)", RuntimeWarning, stacklevel=3)
        return None
    return built


def switched_off() -> bool:
    """True when ``HIPDNN_REFERENCE_JIT=0`` asks for the numpy passes."""
    return os.environ.get(ENV, "").strip() == "0"


def _once(state: list[T | None], compile: Callable[[], T | None]) -> T | None:
    """``compile()``'s result, made by the first caller and kept in ``state`` (``[]`` until
    then, ``[None]`` when unavailable)."""
    if not state:
        with _LOCK:
            if not state:
                state.append(compile())
    return state[0]


def compiled_once(state: list[T | None], compile: Callable[[], T | None]) -> T | None:
    """Loops compiled by numba beside these kernels (:mod:`._conv_jit`, :mod:`._onednn_jit`):
    ``compile()``'s result, made on first use and kept in ``state``, or None wherever these
    kernels are unavailable too (switched off, numba missing, a forked child on GNU OpenMP:
    see :func:`kernels`)."""
    if switched_off():
        return None
    got = _once(state, compile)
    return got if kernels() is not None else None


def kernels() -> Kernels | None:
    """The compiled kernels, or None: numba missing or its JIT disabled (``NUMBA_DISABLE_JIT``),
    ``HIPDNN_REFERENCE_JIT=0``, compiling failed, or this is a forked child of a process that launched them on a threading layer
    that is not fork-safe (GNU OpenMP). The first call imports numba and compiles (from
    numba's on-disk cache after the first process)."""
    if switched_off():
        return None
    got = _once(_STATE, _compile)
    return got if _usable_here() else None
