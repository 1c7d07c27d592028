"""Chunk-parallel helpers for the reference kernels: numpy's element-wise loops, copies and
einsum release the GIL but run on one thread, so large arrays are split into parts that run on
a small shared thread pool, created on first use (none at import).

Thread count (:func:`workers`): ``HIPDNN_REFERENCE_THREADS``, else ``OPENBLAS_NUM_THREADS`` /
``OMP_NUM_THREADS``, else the usable CPUs. Results never depend on it: every part computes the
same values whichever thread runs it, and callers combine the parts' results in index order."""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from typing import TypeVar

import numpy as np

__all__ = ["PARALLEL_MIN_SIZE", "THREADS_ENV", "batch_chunks", "map_chunks", "parallel_copy", "run_parts",
           "workers"]

T = TypeVar("T")


def batch_chunks(a: np.ndarray, target: int = 1 << 18) -> list[slice]:
    """Slices along N of about ``target`` elements each, so per-chunk temporaries stay in cache."""
    per = max(a.size // max(a.shape[0], 1), 1)
    step = max(1, target // per)
    return [slice(i, i + step) for i in range(0, a.shape[0], step)]


_POOL: list[tuple[int, ThreadPoolExecutor]] = []  # (threads, pool): at most one
_POOL_LOCK = threading.Lock()
if hasattr(os, "register_at_fork"):  # a forked child has none of the pool's threads
    os.register_at_fork(after_in_child=_POOL.clear)
#: Environment variable naming the reference engine's thread count (overrides the BLAS settings).
THREADS_ENV = "HIPDNN_REFERENCE_THREADS"
_LOCAL = threading.local()  # .busy: this thread is running parts (a nested call runs inline)
#: Arrays smaller than this run their chunks on the calling thread.
PARALLEL_MIN_SIZE = 1 << 20


def workers() -> int:
    """Thread count: ``HIPDNN_REFERENCE_THREADS``, else the BLAS thread setting
    (OPENBLAS/OMP_NUM_THREADS), else the usable CPUs."""
    for var in (THREADS_ENV, "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        val = os.environ.get(var, "").strip()
        if val.isdigit() and int(val) > 0:
            return int(val)
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def _pool(count: int) -> ThreadPoolExecutor:
    """The shared pool, with at least ``count`` threads (a larger count replaces it)."""
    with _POOL_LOCK:
        if not _POOL or _POOL[0][0] < count:
            if _POOL:
                _POOL.pop()[1].shutdown(wait=False)
            _POOL.append((count, ThreadPoolExecutor(count, thread_name_prefix="hipdnn-reference")))
        return _POOL[0][1]


def run_parts(fn: Callable[[int], T], parts: int, threads: int | None = None) -> list[T]:
    """``[fn(0), ..., fn(parts - 1)]``: the calling thread and up to ``threads - 1`` pool
    threads (default :func:`workers`) take the parts in turn.

    Each result lands at its index, so the list (and anything combined from it in order) is
    the same whichever thread ran which part. If parts fail, the error of the lowest-numbered
    failed part is raised (the same exception object, so its type is kept) after every part
    that started has finished; parts not yet started are then skipped.
    """
    count = min(workers() if threads is None else threads, parts)
    if count < 2 or getattr(_LOCAL, "busy", False):
        return [fn(i) for i in range(parts)]
    results: list[T | None] = [None] * parts
    errors: list[BaseException | None] = [None] * parts
    ticket = itertools.count()  # next() is atomic under the GIL
    failed = [False]

    def take() -> None:
        _LOCAL.busy = True
        try:
            for i in ticket:
                if i >= parts or failed[0]:
                    return
                try:
                    results[i] = fn(i)
                except BaseException as exc:  # re-raised by the caller below
                    errors[i] = exc
                    failed[0] = True
        finally:
            _LOCAL.busy = False

    helpers = [_pool(count - 1).submit(take) for _ in range(count - 1)]
    take()
    wait_futures(helpers)
    for exc in errors:
        if exc is not None:
            raise exc
    return results  # type: ignore[return-value]  # every slot was filled


def map_chunks(fn: Callable[[slice], T], a: np.ndarray) -> list[T]:
    """``fn`` over :func:`batch_chunks` of ``a``, in order; threads for large arrays (numpy's
    element-wise loops and einsum release the GIL, and are otherwise single-threaded)."""
    chunks = batch_chunks(a)
    count = workers()
    if len(chunks) < 2 or count < 2 or a.size < PARALLEL_MIN_SIZE:
        return [fn(sl) for sl in chunks]
    return list(_pool(count).map(fn, chunks))


def parallel_copy(src: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``np.ascontiguousarray(src)`` (into ``out``, a C-contiguous array of src's shape and dtype,
    when given), the copy split along axis 0 over the thread pool."""
    if out is None and (src.size < PARALLEL_MIN_SIZE or src.shape[0] < 2):
        return np.ascontiguousarray(src)
    dst = np.empty(src.shape, dtype=src.dtype) if out is None else out

    def copy(sl: slice) -> None:
        dst[sl] = src[sl]

    map_chunks(copy, src)
    return dst
