"""The oneDNN path's parts launched on numba's threads, when numba is installed: one compiled
loop executes prepared oneDNN calls (each part points its memory objects at the call's arrays,
then runs its steps, reorders and a convolution or matrix products, and waits, on the part's
own stream, on one OpenMP thread), the parts spread over numba's threads with no Python
between them; and a second loop adds the parts' partial gradients in part order
(:func:`add_partials`), blocks of the gradient spread over the threads.

Why: a weight gradient runs as parts fixed by its shape, each a single-thread oneDNN call, so
its bits do not depend on the thread count (:func:`._onednn._wgrad_parts`). Run from the
reference pool's Python threads, every part hands the GIL over several times; on the 16-core
host 24 parts of a 1x1 layer took 2.3-2.5 ms from 16 Python threads and 1.0-1.3 ms from 16
numba threads (oneDNN's own threaded weight gradient: 0.7-1.0 ms, PyTorch's 0.8-1.0 ms).

numba is optional, as for the batchnorm loops (:mod:`._bn_jit`, whose switch, launch lock and
fork rules this shares): without it, with ``HIPDNN_REFERENCE_JIT=0``, or if compiling fails (a
warning says why, once), the pool runs the parts. The loop calls oneDNN and GNU OpenMP through
function pointers passed as arguments (their addresses are never compiled in, so numba's
on-disk cache is valid in every process).
"""

from __future__ import annotations

import ctypes
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from hipdnn.engines.reference import _bn_jit

__all__ = ["Launcher", "Part", "Prepared", "add_partials", "launcher"]

#: The loop's parallel range: numba.prange once compiled (a plain range until then).
prange = range

_EXECUTE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int,
                            ctypes.c_size_t)
_WAIT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_size_t)
_SET_HANDLE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t)
_SET_THREADS = ctypes.CFUNCTYPE(None, ctypes.c_int)


def execute_parts(execute: Any, wait: Any, set_handle: Any, set_threads: Any, prims: Any,
                  nargs: Any, args: Any, first: Any, mems: Any, sources: Any, offsets: Any,
                  mem_first: Any, bases: Any, streams: Any, status: Any) -> None:
    """Part ``p`` first points its memory objects ``mems[mem_first[p]:mem_first[p + 1]]`` at
    ``bases[sources[m]] + offsets[m]``, then runs calls ``first[p]`` to ``first[p + 1] - 1``
    (``execute(prims[j], streams[p], nargs[j], args[j])``) in order on one OpenMP thread and
    waits for its stream; ``status[p]``: 0, or the first failing call's oneDNN status (its
    later calls skipped)."""
    for p in prange(first.size - 1):
        set_threads(1)
        st = 0
        for m in range(mem_first[p], mem_first[p + 1]):
            st = set_handle(mems[m], bases[sources[m]] + offsets[m])
            if st != 0:
                break
        if st == 0:
            for j in range(first[p], first[p + 1]):
                st = execute(prims[j], streams[p], nargs[j], args[j])
                if st != 0:
                    break
        if st == 0:
            st = wait(streams[p])
        status[p] = st


def add_rows(total: Any, rows: Any, order: Any, block: Any) -> None:
    """``total += rows[r]`` for each ``r`` of ``order`` in turn, in float32: each element summed
    in that order whatever the threads (the numpy passes' bits); blocks of ``block`` elements
    spread over the threads, each block summed in a copy of its own (an array that aliases no
    row, so the adds vectorise: 2.5x faster than adding into ``total`` in place)."""
    n = total.size
    for b in prange((n + block - 1) // block):
        lo = b * block
        hi = min(n, lo + block)
        acc = total[lo:hi].copy()
        for r in range(order.size):
            acc += rows[order[r], lo:hi]
        total[lo:hi] = acc


def _functions(lib: ctypes.CDLL, omp: ctypes.CDLL) -> tuple[Any, Any, Any, Any]:
    """The loop's function pointers: oneDNN's execute, wait and memory handle setter, and
    OpenMP's thread count."""
    def pointer(fn: Any) -> int:
        return int(ctypes.cast(fn, ctypes.c_void_p).value or 0)

    return (_EXECUTE(pointer(lib.dnnl_primitive_execute)), _WAIT(pointer(lib.dnnl_stream_wait)),
            _SET_HANDLE(pointer(lib.dnnl_memory_set_data_handle)),
            _SET_THREADS(pointer(omp.omp_set_num_threads)))


class Part(NamedTuple):
    """One part: its stream, its calls in order (primitive, argument count, address of the
    argument list), and its memory objects to point at the call's arrays (memory object, index
    of the array in the call's bases, byte offset from that array's first byte, never
    negative)."""

    stream: int
    calls: Sequence[tuple[int, int, int]]
    memories: Sequence[tuple[int, int, int]]


class Prepared(NamedTuple):
    """Parts as the loop's arrays (made once, run many times)."""

    prims: np.ndarray
    nargs: np.ndarray
    args: np.ndarray
    first: np.ndarray
    mems: np.ndarray
    sources: np.ndarray
    offsets: np.ndarray
    mem_first: np.ndarray
    streams: np.ndarray


class Launcher:
    """The compiled loop bound to one loaded oneDNN and its OpenMP runtime."""

    def __init__(self, loop: Callable[..., None], lib: ctypes.CDLL, omp: ctypes.CDLL) -> None:
        self.loop = loop
        self.libraries = (lib, omp)  # kept loaded while the pointers into them are
        self.functions = _functions(lib, omp)

    @staticmethod
    def prepare(parts: Sequence[Part]) -> Prepared:
        calls = [c for p in parts for c in p.calls]
        memories = [m for p in parts for m in p.memories]
        return Prepared(np.array([c[0] for c in calls], np.uint64),
                        np.array([c[1] for c in calls], np.int32),
                        np.array([c[2] for c in calls], np.uint64),
                        np.cumsum([0, *[len(p.calls) for p in parts]]).astype(np.int64),
                        np.array([m[0] for m in memories], np.uint64),
                        np.array([m[1] for m in memories], np.int64),
                        np.array([m[2] for m in memories], np.uint64),
                        np.cumsum([0, *[len(p.memories) for p in parts]]).astype(np.int64),
                        np.array([p.stream for p in parts], np.uint64))

    def __call__(self, prepared: Prepared, bases: np.ndarray, threads: int) -> np.ndarray:
        """Run the parts with their memories pointed into ``bases`` (the call's arrays'
        addresses, uint64) on ``threads`` of numba's threads; their statuses."""
        status = np.zeros(prepared.streams.size, np.int32)
        _bn_jit.launch(self.loop, threads, *self.functions, *prepared[:8], bases,
                       prepared.streams, status)
        return status


_STATE: list[Callable[..., None] | None] = []  # [] not tried yet; [None] unavailable; [loop]
_LAUNCHERS: dict[tuple[int, int], Launcher] = {}  # by (id(lib), id(omp)), made once each


def _compiled(loop: Callable[..., None], what: str, instead: str,
              warm: Callable[[Callable[..., None]], None]) -> Callable[..., None] | None:
    """``loop`` compiled by numba (kept in its on-disk cache) and run once by ``warm`` so that
    a failure shows here, or None: numba missing, switched off or unusable here, or it could
    not compile ``what`` (a warning says so, and what runs ``instead``)."""
    if _bn_jit.kernels() is None:
        return None
    numba = _bn_jit._NUMBA[0]
    try:
        globals()["prange"] = numba.prange
        built = _bn_jit.build_cached(numba, lambda nb, cache: nb.njit(
            nogil=True, cache=cache, boundscheck=False, parallel=True)(loop))
        warm(built)
    except Exception as exc:  # a numba that cannot compile this: the Python fallback runs
        warnings.warn(f"hipdnn: numba could not compile {what} ({type(exc).__name__}: {exc}); "
                      f"{instead} (set {_bn_jit.ENV}=0 to silence)", RuntimeWarning,
                      stacklevel=4)
        return None
    return built


def _compile(lib: ctypes.CDLL, omp: ctypes.CDLL) -> Callable[..., None] | None:
    def warm(loop: Callable[..., None]) -> None:  # no parts: nothing is called
        none = Launcher.prepare([])
        _bn_jit.launch(loop, 1, *_functions(lib, omp), *none[:8], np.zeros(1, np.uint64),
                       none.streams, np.zeros(0, np.int32))

    return _compiled(execute_parts, "the oneDNN part launcher", "using Python threads", warm)


#: Elements of a weight gradient one thread adds the partials to at a time (16 KiB of FP32).
ADD_BLOCK = 4096
_ADD_STATE: list[Callable[..., None] | None] = []  # as _STATE, for add_rows


def _compile_add() -> Callable[..., None] | None:
    def warm(add: Callable[..., None]) -> None:
        _bn_jit.launch(add, 1, np.zeros(1, np.float32), np.zeros((1, 1), np.float32),
                       np.zeros(1, np.int64), ADD_BLOCK)

    return _compiled(add_rows, "the partial-gradient sum", "using numpy", warm)


def add_partials(total: np.ndarray, rows: np.ndarray, order: Sequence[int], threads: int
                 ) -> bool:
    """``total += rows[r]`` for each ``r`` of ``order`` in turn (``total`` 1-D, ``rows`` 2-D,
    both C-contiguous float32) on ``threads`` of numba's threads, the same bits as adding the
    rows one after another in numpy; False (nothing done) where numba is missing, switched off
    or unusable in this process."""
    add = _bn_jit.compiled_once(_ADD_STATE, _compile_add)
    if add is None:
        return False
    _bn_jit.launch(add, threads, total, rows, np.asarray(order, np.int64), ADD_BLOCK)
    return True


def launcher(lib: ctypes.CDLL, omp: ctypes.CDLL | None) -> Launcher | None:
    """A :class:`Launcher` for ``lib``, or None when the pool must run the parts (no numba, or
    switched off, or unusable in this process; no OpenMP runtime found). The first call
    compiles the loop (and the batchnorm loops, if not yet compiled)."""
    if omp is None:
        return None
    loop = _bn_jit.compiled_once(_STATE, lambda: _compile(lib, omp))
    if loop is None:
        return None
    key = (id(lib), id(omp))  # a kept Launcher holds both: their ids are not reused
    got = _LAUNCHERS.get(key)
    if got is None:
        got = _LAUNCHERS.setdefault(key, Launcher(loop, lib, omp))
    return got
