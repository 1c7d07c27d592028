"""oneDNN's CPU convolutions through ctypes: the reference engine's fprop, dgrad and wgrad when
Intel's ``onednn-cpu-gomp`` wheel (oneDNN 3.x, GNU OpenMP; Linux x86-64) is installed.

These are the kernels PyTorch's CPU convolutions run (its ``mkldnn`` path), so with the wheel the
reference engine's convolutions run at PyTorch's speed on any core count and in FP32, FP16 and
BF16 (AMX where the CPU has it). Without it, or with ``HIPDNN_REFERENCE_ONEDNN=0``, the numpy /
OpenBLAS paths of :mod:`._conv` run; those stay the independent implementation the oneDNN path
is tested against (besides PyTorch).

What is asked of oneDNN, and what is declined (the caller then takes its own paths):

- Data: FP32, FP16 or BF16 inputs of one type, summed in FP32 and returned as FP32, or for fprop
  and dgrad asked for an FP16/BF16 result, rounded once by oneDNN (the same bits as the engine's
  own rounding of the FP32 result). ``fpmath`` is set to strict, so an FP32 problem is never
  computed in a lower precision whatever ``ONEDNN_DEFAULT_FPMATH_MODE`` says.
- Layouts: a dense channels-last input is handed over as it lies (oneDNN's ``nhwc`` kernels,
  PyTorch's ``channels_last``); any other layout goes through oneDNN's reorders into the blocked
  layout the primitive chooses, as PyTorch does for NCHW. Weights always go through a reorder.
- An implementation named ``ref`` (oneDNN's slow reference loops) is declined.

Threads: oneDNN runs on OpenMP threads; each call sets the calling thread's OpenMP thread count
to the engine's (:func:`._parallel.workers`). The results have the same bits for any thread
count: fprop and dgrad sum each output in one thread, whatever the count; oneDNN's threaded
weight gradient splits its sums over the batch by the thread count, so wgrad runs instead as
a fixed (shape-given) set of parts, each on one thread, added in order (:func:`_wgrad_parts`),
or blocks of channels each summed whole (:func:`_wgrad_blocks`). The parts run on numba's
threads where numba is installed (:mod:`._onednn_jit`, no Python between parts), else on the
reference pool's Python threads (which hand the GIL over between parts and scale poorly on many
cores). ``HIPDNN_REFERENCE_ONEDNN=fast`` runs wgrad on oneDNN's own threads instead (the last
bits then depend on the thread count); ``fwd`` keeps wgrad on the tap GEMMs.

Primitives are cached by problem (:data:`CACHE_SIZE` most recent). A thread keeps the memory
objects, temporaries and stream of its recent problems (:data:`KEEP_BYTES` of temporaries at
most) and re-points them at each call's arrays (:func:`_bound_for`). Nothing is loaded at
import.

>>> lib = library()
>>> lib is None or lib.version[0] >= 3
True
"""

from __future__ import annotations

import collections
import ctypes
import glob
import itertools
import os
import site
import sys
import threading
from collections.abc import Callable, Sequence
from math import prod
from typing import Any, NamedTuple, Protocol

import numpy as np

from hipdnn.engines.reference import _onednn_jit
from hipdnn.engines.reference._deferred import DeferredOutput
from hipdnn.engines.reference._parallel import run_parts, workers

__all__ = ["ENV", "LIBRARY_ENV", "DeferredConv", "OneDNN", "conv", "deferred", "library", "mode"]

#: ``0`` turns the oneDNN path off; ``fwd`` keeps it for fprop and dgrad only; ``fast`` runs
#: wgrad on oneDNN's own threads (its bits then depend on the thread count).
ENV = "HIPDNN_REFERENCE_ONEDNN"
#: A full path to ``libdnnl.so.3`` to use instead of the one the wheel installed.
LIBRARY_ENV = "HIPDNN_ONEDNN_LIBRARY"
#: Problems whose primitives are kept.
CACHE_SIZE = 64
#: Parts of a weight gradient at most (fixed by the shape, never by the thread count): blocks
#: of its channels (:func:`_wgrad_blocks`), each summed whole ...
WGRAD_PARTS = 32
#: ... or slabs (:func:`_wgrad_slabs`: single images cut into slabs of output rows, or runs of
#: images when the batch has this many or more), each summing a partial gradient that is then
#: added: fewer, as each costs a partial to write and add (16 rather than 32 made the weight
#: gradients 0.91x the time at 16 threads and 0.96x on 2 cores, measured in one process
#: each, variants interleaved; docs/PERFORMANCE.md).
WGRAD_SLABS = 16
#: Multiply-adds of a weight-gradient part at least (fewer parts for small problems: each part
#: costs a primitive call and a partial gradient to add) ...
WGRAD_PART_MACS = 1 << 24
#: ... except that a problem of WGRAD_MIN_PARTS parts of WGRAD_SMALL_PART_MACS or more has that
#: many where its parts share no input rows (a mid-sized 1x1 gradient on many cores would
#: otherwise run on a few of them; where a kernel reaches across rows, smaller slabs re-read
#: more of x, which costs more than it gains on few cores).
WGRAD_MIN_PARTS = 16
WGRAD_SMALL_PART_MACS = 1 << 22
#: Pixels per image below which a 1x1 weight gradient's channel-first images are copied into
#: one run for one product (:func:`_packed_plan`) rather than summed one product per image.
PACK_PIXELS = 128
#: Bytes of partial weight gradients held at once (parts run in waves below it).
PARTIAL_BYTES = 1 << 26
#: Bytes of temporaries and scratchpads a thread keeps bound for its recent problems.
KEEP_BYTES = 1 << 27

_vp = ctypes.c_void_p
_i64 = ctypes.c_int64
_SUCCESS, _OUT_OF_MEMORY, _UNIMPLEMENTED = 0, 1, 3
_CPU = 1
_FORWARD_TRAINING, _BACKWARD_DATA, _BACKWARD_WEIGHTS = 64, 160, 192
_CONVOLUTION_DIRECT = 1
_FORMAT_ANY = 1
_QUERY_IMPL_INFO_STR = 8
_QUERY_SRC_MD, _QUERY_DIFF_SRC_MD, _QUERY_WEIGHTS_MD = 129, 130, 131
_QUERY_DIFF_WEIGHTS_MD, _QUERY_DST_MD, _QUERY_DIFF_DST_MD = 132, 133, 134
_ARG_SRC, _ARG_DST, _ARG_WEIGHTS = 1, 17, 33
_ARG_DIFF_SRC, _ARG_DIFF_DST, _ARG_DIFF_WEIGHTS = 129, 145, 161
_QUERY_SCRATCHPAD_MD = 136
_ARG_SCRATCHPAD = 80
_FPMATH_STRICT = 0
#: fprop / dgrad: (argument, query) of the data they read and of the data they write
_DATA_PORTS = {"fprop": ((_ARG_SRC, _QUERY_SRC_MD), (_ARG_DST, _QUERY_DST_MD)),
               "dgrad": ((_ARG_DIFF_DST, _QUERY_DIFF_DST_MD), (_ARG_DIFF_SRC, _QUERY_DIFF_SRC_MD))}
_SCRATCHPAD_USER = 1
_F32 = np.float32
_F32_DTYPE = np.dtype(_F32)
_DNNL_F16, _DNNL_BF16, _DNNL_F32 = 1, 2, 3


class _Keepable(Protocol):
    """What a thread keeps (:func:`_kept`): its bytes of temporaries, and a way to free them."""

    nbytes: int

    def close(self) -> None: ...


def _dnnl_type(dtype: np.dtype) -> int | None:
    """oneDNN's data type for a numpy dtype it takes (FP32, FP16, ml_dtypes' BF16), else None."""
    if dtype == np.float32:
        return _DNNL_F32
    if dtype == np.float16:
        return _DNNL_F16
    if dtype.name == "bfloat16":  # ml_dtypes
        return _DNNL_BF16
    return None


class _Version(ctypes.Structure):
    _fields_ = (("major", ctypes.c_int), ("minor", ctypes.c_int), ("patch", ctypes.c_int),
                ("hash", ctypes.c_char_p), ("cpu_runtime", ctypes.c_uint),
                ("gpu_runtime", ctypes.c_uint))


class _Arg(ctypes.Structure):
    _fields_ = (("arg", ctypes.c_int), ("memory", _vp))


class OneDNNError(RuntimeError):
    """A oneDNN call failed with ``status`` (1 = out of memory, 3 = unimplemented)."""

    def __init__(self, call: str, status: int) -> None:
        super().__init__(f"oneDNN {call} failed with status {status}")
        self.call, self.status = call, status


class OneDNN:
    """The loaded library: one CPU engine, its OpenMP runtime, the primitive cache, and each
    thread's kept bindings (``_local.bounds``, :func:`_kept`)."""

    def __init__(self, lib: ctypes.CDLL, omp: ctypes.CDLL | None, path: str) -> None:
        self.lib, self.omp, self.path = lib, omp, path
        self._omp_set = None
        if omp is not None:
            self._omp_set = omp.omp_set_num_threads
            self._omp_set.argtypes, self._omp_set.restype = [ctypes.c_int], None
        lib.dnnl_version.restype = ctypes.POINTER(_Version)
        v = lib.dnnl_version().contents
        self.version = (int(v.major), int(v.minor), int(v.patch))
        lib.dnnl_primitive_desc_query_md.restype = _vp
        lib.dnnl_memory_desc_get_size.restype = ctypes.c_size_t
        lib.dnnl_memory_desc_get_size.argtypes = [_vp]
        lib.dnnl_primitive_desc_query.argtypes = [_vp, ctypes.c_int, ctypes.c_int, _vp]
        # called per part of a weight gradient: typed, so ctypes converts nothing by guessing
        lib.dnnl_memory_set_data_handle.argtypes = [_vp, _vp]
        lib.dnnl_primitive_execute.argtypes = [_vp, _vp, ctypes.c_int, _vp]
        lib.dnnl_stream_wait.argtypes = [_vp]
        self.engine = _vp()
        self._check(lib.dnnl_engine_create(ctypes.byref(self.engine), _CPU, ctypes.c_size_t(0)),
                    "dnnl_engine_create")
        self._local = threading.local()  # .bounds: the thread's kept bindings
        self._cache: collections.OrderedDict[tuple, _Plan | None] = collections.OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _check(status: int, call: str) -> None:
        if status != _SUCCESS:
            raise OneDNNError(call, int(status))

    def set_threads(self, count: int) -> None:
        if self._omp_set is not None:
            self._omp_set(int(count))

    # memory descriptors ----------------------------------------------------------------------

    def md_strided(self, dims: Sequence[int], strides: Sequence[int], dtype: int) -> _MD:
        md = _vp()
        n = len(dims)
        self._check(self.lib.dnnl_memory_desc_create_with_strides(
            ctypes.byref(md), n, (_i64 * n)(*dims), dtype, (_i64 * n)(*strides)),
            "dnnl_memory_desc_create_with_strides")
        return _MD(self, md)

    def md_any(self, dims: Sequence[int], dtype: int) -> _MD:
        md = _vp()
        n = len(dims)
        self._check(self.lib.dnnl_memory_desc_create_with_tag(
            ctypes.byref(md), n, (_i64 * n)(*dims), dtype, _FORMAT_ANY),
            "dnnl_memory_desc_create_with_tag")
        return _MD(self, md)

    def queried(self, pd: _vp, what: int) -> _MD:
        """A memory descriptor the primitive descriptor chose (cloned: it outlives ``pd``)."""
        md = self.lib.dnnl_primitive_desc_query_md(pd, what, 0)
        clone = _vp()
        self._check(self.lib.dnnl_memory_desc_clone(ctypes.byref(clone), _vp(md)),
                    "dnnl_memory_desc_clone")
        return _MD(self, clone)

    def primitive(self, pd: _vp) -> _vp:
        prim = _vp()
        self._check(self.lib.dnnl_primitive_create(ctypes.byref(prim), pd), "dnnl_primitive_create")
        return prim

    def impl(self, pd: _vp) -> str:
        name = ctypes.c_char_p()
        self._check(self.lib.dnnl_primitive_desc_query(pd, _QUERY_IMPL_INFO_STR, 0,
                                                       ctypes.byref(name)),
                    "dnnl_primitive_desc_query")
        return (name.value or b"").decode()

    def attr(self) -> _vp:
        """A new attribute: strict FP32 math, and scratchpads the caller passes (oneDNN's own
        scratchpad is shared by every primitive, so primitives could not run concurrently)."""
        attr = _vp()
        self._check(self.lib.dnnl_primitive_attr_create(ctypes.byref(attr)),
                    "dnnl_primitive_attr_create")
        try:
            self._check(self.lib.dnnl_primitive_attr_set_fpmath_mode(attr, _FPMATH_STRICT),
                        "dnnl_primitive_attr_set_fpmath_mode")
            self._check(self.lib.dnnl_primitive_attr_set_scratchpad_mode(attr, _SCRATCHPAD_USER),
                        "dnnl_primitive_attr_set_scratchpad_mode")
        except OneDNNError:
            self.lib.dnnl_primitive_attr_destroy(attr)
            raise
        return attr

    def reorder(self, src: _MD, dst: _MD) -> _Prim:
        pd = _vp()
        attr = self.attr()
        try:
            self._check(self.lib.dnnl_reorder_primitive_desc_create(
                ctypes.byref(pd), src.handle, self.engine, dst.handle, self.engine, attr),
                "dnnl_reorder_primitive_desc_create")
        finally:
            self.lib.dnnl_primitive_attr_destroy(attr)
        try:
            return _Prim(self.primitive(pd), self.queried(pd, _QUERY_SCRATCHPAD_MD))
        finally:
            self.lib.dnnl_primitive_desc_destroy(pd)

    def memory(self, md: _MD, address: int) -> _vp:
        mem = _vp()
        self._check(self.lib.dnnl_memory_create(ctypes.byref(mem), md.handle, self.engine,
                                                _vp(address)), "dnnl_memory_create")
        return mem


class _MD:
    """A memory descriptor owned by Python (destroyed with it)."""

    def __init__(self, owner: OneDNN, handle: _vp) -> None:
        self.owner, self.handle = owner, handle
        self.size = int(owner.lib.dnnl_memory_desc_get_size(handle))

    def __del__(self) -> None:
        try:
            self.owner.lib.dnnl_memory_desc_destroy(self.handle)
        except Exception:  # interpreter shutdown
            pass


class _Prim(NamedTuple):
    """A primitive and the scratchpad each execution of it takes (its size may be 0)."""

    handle: _vp
    scratch: _MD


class _Side(NamedTuple):
    """One tensor of a primitive: the user's layout, the primitive's, and the reorder between
    them (None when the primitive reads or writes the user's layout itself); ``view``: where
    the primitive sees the reordered bytes under other dims (images packed into one run of
    pixels: a 3-D copy read as a matrix), else None."""

    user: _MD
    inner: _MD
    reorder: _Prim | None
    view: _MD | None = None


class _Plan:
    """A created primitive and its sides, in execution order: inputs, then the output."""

    def __init__(self, owner: OneDNN, prim: _Prim, impl: str, inputs: list[tuple[int, _Side]],
                 output: tuple[int, _Side]) -> None:
        self.owner, self.prim, self.impl = owner, prim, impl
        self.inputs, self.output = inputs, output

    def __del__(self) -> None:
        try:
            destroy = self.owner.lib.dnnl_primitive_destroy
            for _, side in [*self.inputs, self.output]:
                if side.reorder is not None:
                    destroy(side.reorder.handle)
            destroy(self.prim.handle)
        except Exception:  # interpreter shutdown
            pass


_STATE: list[OneDNN | None] = []
_STATE_LOCK = threading.Lock()
#: [this process ran a primitive, this process is a fork of one that had]
_RAN = [False, False]


def _after_fork_in_child() -> None:
    # GNU OpenMP keeps the parent's thread pool in its state but not its threads: a forked
    # child's first parallel region hangs (seen here). Such a child takes the other paths.
    if _RAN[0]:
        _RAN[1] = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _candidates() -> list[str]:
    explicit = os.environ.get(LIBRARY_ENV, "").strip()
    if explicit:
        return [explicit]
    roots = [sys.prefix, sys.base_prefix, getattr(site, "USER_BASE", None) or ""]
    found: list[str] = []
    for root in roots:
        if root:
            found += sorted(glob.glob(os.path.join(root, "lib", "libdnnl.so.3")))
    return list(dict.fromkeys(found))


def _load() -> OneDNN | None:
    if not sys.platform.startswith("linux"):
        return None
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        try:
            omp: ctypes.CDLL | None = ctypes.CDLL("libgomp.so.1")
        except OSError:
            omp = None
        try:
            one = OneDNN(lib, omp, path)
        except (AttributeError, OneDNNError):
            continue
        if one.version[0] == 3:
            return one
    return None


def library() -> OneDNN | None:
    """The loaded oneDNN, or None (not installed, not Linux, switched off by ``ENV=0``, or a
    forked child of a process that ran it: GNU OpenMP would hang there)."""
    if mode() == "off" or _RAN[1]:
        return None
    if not _STATE:
        with _STATE_LOCK:
            if not _STATE:
                try:
                    _STATE.append(_load())
                except Exception:  # an odd install: the numpy paths still work
                    _STATE.append(None)
    return _STATE[0]


def mode() -> str:
    """``off`` (``ENV=0``), ``fwd`` (fprop and dgrad only), ``fast`` (wgrad on oneDNN's own
    threads: faster on many cores, its last bits depend on the thread count) or ``on`` (the
    default)."""
    val = os.environ.get(ENV, "").strip().lower()
    if val in ("0", "off", "false", "no"):
        return "off"
    return val if val in ("fwd", "fast") else "on"


def _channels_last_dense(a: np.ndarray) -> bool:
    """C (axis 1) innermost and the rest packed in N, spatial... order: oneDNN's ``nhwc``."""
    if a.ndim < 3 or a.size == 0:
        return False
    order = [0, *range(2, a.ndim), 1]
    expect = a.itemsize
    for axis in reversed(order):
        if a.shape[axis] != 1 and a.strides[axis] != expect:
            return False
        expect *= a.shape[axis]
    return True


def _element_strides(a: np.ndarray) -> list[int]:
    """``a``'s strides in elements; a dense layout's own (the strides of size-1 axes do not
    matter: they are said as the layout has them)."""
    if _channels_last_dense(a):
        return _cl_strides(a.shape)
    if a.flags.c_contiguous:
        return _cf_strides(a.shape)
    return [s // a.itemsize for s in a.strides]


def _user_md(one: OneDNN, a: np.ndarray, dims: Sequence[int], dtype: int) -> _MD:
    strides = _element_strides(a)
    if len(dims) == a.ndim + 1:  # grouped weights: (G, K/G, C/G, ...) from (K, C/G, ...)
        kg = dims[1]
        strides = [kg * strides[0], *strides]
    return one.md_strided(dims, strides, dtype)


def _groups_dims(shape: Sequence[int], groups: int) -> list[int]:
    if groups == 1:
        return list(shape)
    return [groups, shape[0] // groups, *shape[1:]]


def _plain(a: np.ndarray) -> np.ndarray | None:
    """``a`` with positive, element-aligned strides (oneDNN reads any such layout): ``a``
    itself, the same memory with the (meaningless) strides of its size-1 axes made positive (a
    caller's view of a size-1 axis often has stride 0), or None where a copy would be needed."""
    if not a.flags.aligned or any(n > 1 and (s <= 0 or s % a.itemsize)
                                  for n, s in zip(a.shape, a.strides, strict=True)):
        return None
    if all(s > 0 for s in a.strides):
        return a
    strides = [s if n > 1 else a.itemsize for n, s in zip(a.shape, a.strides, strict=True)]
    return np.lib.stride_tricks.as_strided(a, a.shape, strides, writeable=a.flags.writeable)


def _readable(a: np.ndarray) -> np.ndarray:
    """:func:`_plain`, else a packed copy."""
    plain = _plain(a)
    return np.ascontiguousarray(a) if plain is None else plain


def _create(one: OneDNN, kind: str, a: np.ndarray, b: np.ndarray, out_dims: Sequence[int],
            out_strides: Sequence[int], dtype: int, out_type: int, groups: int,
            pre: Sequence[int], post: Sequence[int], stride: Sequence[int],
            dilation: Sequence[int]) -> _Plan | None:
    """The primitive for ``kind`` (fprop: a=x, b=w; dgrad: a=dy, b=w; wgrad: a=x, b=dy), or None
    where oneDNN has no fast implementation: on the data as it lies where every data tensor is
    dense channels-last, else (or if that has none) through reorders into oneDNN's layouts."""
    data = [a, b] if kind == "wgrad" else [a]
    if all(_channels_last_dense(t) for t in data):
        plan = _create_as(one, kind, a, b, out_dims, out_strides, dtype, out_type, groups, pre, post,
                          stride, dilation, True)
        if plan is not None:
            return plan
    return _create_as(one, kind, a, b, out_dims, out_strides, dtype, out_type, groups, pre, post,
                      stride, dilation, False)


def _create_as(one: OneDNN, kind: str, a: np.ndarray, b: np.ndarray, out_dims: Sequence[int],
               out_strides: Sequence[int], dtype: int, out_type: int, groups: int,
               pre: Sequence[int], post: Sequence[int], stride: Sequence[int],
               dilation: Sequence[int], keep_a: bool) -> _Plan | None:
    """:func:`_create` with the data in the user's layouts (``keep_a``) or oneDNN's."""
    lib = one.lib
    n = len(stride)
    out_is_w = kind == "wgrad"  # else b is the weights
    w_dims = _groups_dims(out_dims if out_is_w else b.shape, groups)
    a_dims = list(a.shape)
    attr = one.attr()
    try:
        a_user = _user_md(one, a, a_dims, dtype)
        a_req = a_user if keep_a else one.md_any(a_dims, dtype)
        w_req = one.md_any(w_dims, _DNNL_F32 if out_is_w else dtype)
        if out_is_w:
            d_user = _user_md(one, b, list(b.shape), dtype)
            d_req = d_user if keep_a else one.md_any(list(b.shape), dtype)
        else:
            o_plain = list(out_strides) == _cl_strides(out_dims)
            o_req = (one.md_strided(out_dims, out_strides, out_type) if keep_a and o_plain
                     else one.md_any(out_dims, out_type))
        strides_ = (_i64 * n)(*stride)
        dil = (_i64 * n)(*[d - 1 for d in dilation])
        pl, pr = (_i64 * n)(*pre), (_i64 * n)(*post)
        pd = _vp()
        if kind == "fprop":
            call = "dnnl_convolution_forward_primitive_desc_create"
            status = lib.dnnl_convolution_forward_primitive_desc_create(
                ctypes.byref(pd), one.engine, _FORWARD_TRAINING, _CONVOLUTION_DIRECT,
                a_req.handle, w_req.handle, None, o_req.handle, strides_, dil, pl, pr, attr)
        elif kind == "dgrad":
            call = "dnnl_convolution_backward_data_primitive_desc_create"
            status = lib.dnnl_convolution_backward_data_primitive_desc_create(
                ctypes.byref(pd), one.engine, _CONVOLUTION_DIRECT, o_req.handle, w_req.handle,
                a_req.handle, strides_, dil, pl, pr, None, attr)
        else:
            call = "dnnl_convolution_backward_weights_primitive_desc_create"
            status = lib.dnnl_convolution_backward_weights_primitive_desc_create(
                ctypes.byref(pd), one.engine, _CONVOLUTION_DIRECT, a_req.handle, w_req.handle,
                None, d_req.handle, strides_, dil, pl, pr, None, attr)
        if status == _UNIMPLEMENTED:
            return None
        one._check(status, call)
    finally:
        lib.dnnl_primitive_attr_destroy(attr)
    try:
        impl = one.impl(pd)
        if impl.startswith("ref"):
            return None

        def side(user: _MD, what: int, into: bool) -> _Side:
            inner = one.queried(pd, what)
            if user.size == inner.size and lib.dnnl_memory_desc_equal(user.handle, inner.handle):
                return _Side(user, user, None)
            return _Side(user, inner, one.reorder(user, inner) if into else one.reorder(inner, user))

        if not out_is_w:  # fprop, dgrad: the data in, the weights, the data out
            (a_arg, a_query), (o_arg, o_query) = _DATA_PORTS[kind]
            w_user = _user_md(one, b, w_dims, dtype)
            inputs = [(a_arg, side(a_user, a_query, True)),
                      (_ARG_WEIGHTS, side(w_user, _QUERY_WEIGHTS_MD, True))]
            o_user = one.md_strided(out_dims, out_strides, out_type)
            output = (o_arg, side(o_user, o_query, False))
        else:
            inputs = [(_ARG_SRC, side(a_user, _QUERY_SRC_MD, True)),
                      (_ARG_DIFF_DST, side(d_user, _QUERY_DIFF_DST_MD, True))]
            o_strides = list(out_strides)  # (K, C/G, ...)'s, said of (G, K/G, C/G, ...)
            if groups > 1:
                o_strides = [w_dims[1] * o_strides[0], *o_strides]
            o_user = one.md_strided(w_dims, o_strides, out_type)
            output = (_ARG_DIFF_WEIGHTS, side(o_user, _QUERY_DIFF_WEIGHTS_MD, False))
        prim = _Prim(one.primitive(pd), one.queried(pd, _QUERY_SCRATCHPAD_MD))
        return _Plan(one, prim, impl, inputs, output)
    finally:
        lib.dnnl_primitive_desc_destroy(pd)


def _cf_strides(dims: Sequence[int]) -> list[int]:
    out, acc = [], 1
    for d in reversed(dims):
        out.append(acc)
        acc *= d
    return out[::-1]


def _cl_strides(dims: Sequence[int]) -> list[int]:
    """Element strides of a channels-last array with logical dims (N, C, spatial...)."""
    order = [0, *range(2, len(dims)), 1]
    strides = [0] * len(dims)
    acc = 1
    for axis in reversed(order):
        strides[axis] = acc
        acc *= dims[axis]
    return strides


class _Bound:
    """``plan``'s memory objects, temporaries and scratchpads, made once: :meth:`bind` points
    the user sides at arrays (their layouts are the plan's), :meth:`run` executes (reorders into
    temporaries, the primitive, a reorder into the output) and allocates nothing. A thread keeps
    its recent small ones (:func:`_bound_for`), so a call of a kept problem costs a few handle
    updates instead of creating objects and faulting in fresh temporaries."""

    def __init__(self, one: OneDNN, plan: _Plan, threads: int) -> None:
        self.one, self.plan, self.threads = one, plan, threads
        self.temps: list[np.ndarray] = []  # alive while the memory objects are
        self.mems: list[_vp] = []
        self.users: list[_vp] = []  # the user sides: the inputs in order, then the output
        self.arg_arrays: list[ctypes.Array] = []  # the steps' argument lists, by address
        steps: list[tuple[_Prim, list[tuple[int, _vp]]]] = []
        self.stream = _vp()  # its own (a stream is used by one thread at a time)
        try:
            one._check(one.lib.dnnl_stream_create(ctypes.byref(self.stream), one.engine,
                                                  ctypes.c_uint(1)), "dnnl_stream_create")
            args = []
            for arg, side in plan.inputs:
                user, inner, seen = self._side(side)
                if side.reorder is not None:
                    steps.append((side.reorder, [(_ARG_SRC, user), (_ARG_DST, inner)]))
                args.append((arg, seen))
            arg, side = plan.output
            user, result, seen = self._side(side)
            args.append((arg, seen))
            steps.append((plan.prim, args))
            if side.reorder is not None:
                steps.append((side.reorder, [(_ARG_SRC, result), (_ARG_DST, user)]))
            self.steps: list[tuple[int, int, int]] = []  # (primitive, arg count, arg list)
            for prim, step in steps:
                step = self._scratch(prim, step)
                arr = (_Arg * len(step))(*[_Arg(a, m) for a, m in step])
                self.arg_arrays.append(arr)
                self.steps.append((int(prim.handle.value or 0), len(step),
                                   ctypes.addressof(arr)))
        except BaseException:
            self.close()
            raise
        self.nbytes = sum(t.nbytes for t in self.temps)

    @staticmethod
    def temp_bytes(plan: _Plan) -> int:
        """The bytes of temporaries and scratchpads binding ``plan`` allocates (:attr:`nbytes`
        once bound), read from its descriptors: a temporary per reordered side, a scratchpad
        per primitive that asks for one, each 64 bytes more for its alignment."""
        sides = [side for _, side in [*plan.inputs, plan.output]]
        sizes = [plan.prim.scratch.size] + [size for s in sides if s.reorder is not None
                                            for size in (s.inner.size, s.reorder.scratch.size)]
        return sum(size + 64 for size in sizes if size)

    def _memory(self, md: _MD, address: int) -> _vp:
        mem = self.one.memory(md, address)
        self.mems.append(mem)
        return mem

    def _temp(self, md: _MD, view: _MD | None = None) -> tuple[_vp, _vp]:
        """A fresh temporary of ``md``'s bytes: (its memory as ``md``, as ``view`` or ``md``)."""
        buf = np.empty(md.size + 64, dtype=np.uint8)  # 64-byte aligned below
        self.temps.append(buf)
        base = buf.ctypes.data
        mem = self._memory(md, base + (-base) % 64)
        return mem, (mem if view is None else self._memory(view, base + (-base) % 64))

    def _side(self, side: _Side) -> tuple[_vp, _vp, _vp]:
        """(the user's memory, unbound; the reorder's other end; the memory the primitive
        uses: the reorder's end, or its bytes as ``side.view``)."""
        user = self._memory(side.user, 0)
        self.users.append(user)
        if side.reorder is None:
            return user, user, user
        return user, *self._temp(side.inner, side.view)

    def _scratch(self, prim: _Prim, args: list[tuple[int, _vp]]) -> list[tuple[int, _vp]]:
        if not prim.scratch.size:
            return args
        return [*args, (_ARG_SCRATCHPAD, self._temp(prim.scratch)[0])]

    def bind(self, arrays: Sequence[np.ndarray], out: np.ndarray) -> None:
        """Point the user sides at ``arrays`` and ``out`` (the caller keeps them alive until
        :meth:`run` returns)."""
        _point(self.one, [(mem, _address(a))
                          for mem, a in zip(self.users, [*arrays, out], strict=True)])

    def run(self) -> None:
        """Execute, on ``threads`` OpenMP threads."""
        _RAN[0] = True
        one = self.one
        one.set_threads(self.threads)
        stream = self.stream
        execute = one.lib.dnnl_primitive_execute
        for prim, n, args in self.steps:
            one._check(execute(prim, stream, n, args), "dnnl_primitive_execute")
        one._check(one.lib.dnnl_stream_wait(stream), "dnnl_stream_wait")

    def close(self) -> None:
        """Destroy the memory objects."""
        mems, self.mems = self.mems, []
        for m in mems:
            self.one.lib.dnnl_memory_destroy(m)
        self.temps, self.users = [], []
        stream, self.stream = self.stream, _vp()
        if stream:
            self.one.lib.dnnl_stream_destroy(stream)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _point(one: OneDNN, handles: Sequence[tuple[Any, int]]) -> None:
    """Point each (memory object, address) memory object at its address."""
    set_handle = one.lib.dnnl_memory_set_data_handle
    for mem, address in handles:
        one._check(set_handle(mem, address), "dnnl_memory_set_data_handle")


def _kept(one: OneDNN, key: tuple, make: Callable[[], _Keepable | None]
          ) -> tuple[_Keepable | None, bool]:
    """(this thread's kept object for ``key``, or ``make()``'s; whether it is kept). A thread
    keeps at most :data:`KEEP_BYTES` of temporaries, least recently used dropped first; an
    object over half of that is made for one call (the caller closes it)."""
    kept = getattr(one._local, "bounds", None)
    if kept is None:
        kept = one._local.bounds = collections.OrderedDict()
    got = kept.get(key)
    if got is not None:
        kept.move_to_end(key)
        return got, True
    got = make()
    if got is None or got.nbytes > KEEP_BYTES // 2:
        return got, False
    kept[key] = got
    total = sum(b.nbytes for b in kept.values())
    while total > KEEP_BYTES:
        total -= kept.popitem(last=False)[1].nbytes
    return got, True


def _bound_for(one: OneDNN, plan: _Plan, threads: int) -> tuple[_Bound, bool]:
    """(this thread's kept :class:`_Bound` of ``plan``, or a new one; whether it is kept)."""
    # a kept bound holds its plan: the id is not reused meanwhile
    bound, kept = _kept(one, (id(plan), threads), lambda: _Bound(one, plan, threads))
    assert isinstance(bound, _Bound)
    return bound, kept


def _run(one: OneDNN, plan: _Plan, arrays: Sequence[np.ndarray], out: np.ndarray,
         threads: int) -> None:
    """Execute ``plan`` on ``arrays`` into ``out`` on ``threads`` OpenMP threads."""
    bound, kept = _bound_for(one, plan, threads)
    try:
        bound.bind(arrays, out)
        bound.run()
    finally:
        if not kept:
            bound.close()


#: The arrays a weight gradient's parts lie in (indices of a call's bases).
_X, _DY, _DW, _SPARE = range(4)
#: One step of a part: its plan (made for one thread), then where its inputs and its output
#: lie (index of the array among the call's bases, and the step's view of it).
_Step = tuple[_Plan, Sequence[tuple[int, np.ndarray]], tuple[int, np.ndarray]]
#: One part: its steps, run in order on one thread.
_Job = list[_Step]


class _Parts:
    """A weight gradient's parts prepared once for a thread: each part's steps bound (their
    temporaries, memory objects and streams kept), where its arrays lie as byte offsets into x,
    dy, dw and the partials, and the block of partials. A call of the same problem (shapes,
    strides, arguments) only points the parts at its arrays and runs them: on numba's threads
    where numba is installed (the handles set there too: no Python per part), else on the
    reference pool."""

    def __init__(self, one: OneDNN, jobs: Sequence[_Job], bases: Sequence[np.ndarray],
                 spare: np.ndarray, wave: int) -> None:
        self.one, self.spare, self.wave = one, spare, wave
        self.bounds: list[list[_Bound]] = []  # per part: its steps'
        self.memories: list[list[tuple[int, int, int]]] = []  # per part: (memory, base, offset)
        self._prepared: dict[int, Any] = {}  # wave start -> the launcher's arrays
        starts = [*(_address(b) for b in bases), _address(spare)]
        try:
            for job in jobs:
                bounds: list[_Bound] = []
                self.bounds.append(bounds)
                memories = []
                for plan, inputs, (source, out) in job:
                    bound = _Bound(one, plan, 1)
                    bounds.append(bound)
                    memories += [(int(mem.value or 0), src, _address(view) - starts[src])
                                 for mem, (src, view) in zip(bound.users,
                                                             [*inputs, (source, out)],
                                                             strict=True)]
                self.memories.append(memories)
        except BaseException:
            self.close()
            raise
        self.nbytes = sum(b.nbytes for part in self.bounds for b in part) + spare.nbytes

    def run(self, bases: Sequence[np.ndarray], start: int) -> None:
        """Run the wave of parts from ``start`` on ``bases`` (x, dy, dw; the partials are this
        object's); a failure raises the first failed part's :class:`OneDNNError` once every
        part of the wave has finished."""
        stop = min(len(self.bounds), start + self.wave)
        addresses = [*(_address(b) for b in bases), _address(self.spare)]
        threads = min(workers(), stop - start)
        launch = _onednn_jit.launcher(self.one.lib, self.one.omp) if threads > 1 else None
        if launch is None:
            def part(i: int) -> None:
                _point(self.one, [(mem, addresses[src] + offset)
                                  for mem, src, offset in self.memories[i]])
                for bound in self.bounds[i]:
                    bound.run()

            run_parts(lambda i: part(start + i), stop - start)
            return
        prepared = self._prepared.get(start)
        if prepared is None:
            prepared = self._prepared[start] = launch.prepare(
                [_onednn_jit.Part(int(bounds[0].stream.value or 0),
                                  [step for b in bounds for step in b.steps], m)
                 for bounds, m in zip(self.bounds[start:stop], self.memories[start:stop],
                                      strict=True)])
        _RAN[0] = True
        status = launch(prepared, np.array(addresses, np.uint64), threads)
        failed = np.flatnonzero(status)
        if failed.size:
            raise OneDNNError("dnnl_primitive_execute", int(status[failed[0]]))

    def close(self) -> None:
        bounds, self.bounds = self.bounds, []
        for part in bounds:
            for b in part:
                b.close()


def _run_parts(one: OneDNN, key: tuple, x: np.ndarray, dy: np.ndarray, dw: np.ndarray,
               make: Callable[[], tuple[list[_Job], np.ndarray, int] | None],
               accumulate: bool) -> bool:
    """Run a weight gradient's parts into ``dw``: this thread's kept :class:`_Parts` for
    ``key`` (the problem), else the jobs ``make()`` gives (parts, the block of partials, the
    parts per wave) for the arrays at hand; with ``accumulate``, part 0 sums into dw and each
    wave's partials are added to it in part order. Parts whose temporaries are too many to
    keep (over half of :data:`KEEP_BYTES`) are bound a thread count of them at a time, so
    memory stays bounded. False where a plan is missing or oneDNN failed (the caller's other
    paths run; dw is then not the gradient), a MemoryError where it ran out of memory."""
    bases = (x, dy, dw)
    made: list[tuple[list[_Job], np.ndarray, int]] = []

    def build() -> _Parts | None:
        got = make()
        if got is None:
            return None
        made.append(got)
        jobs, spare, wave = got
        need = sum(_Bound.temp_bytes(plan) for job in jobs for plan, _, _ in job)
        if need + spare.nbytes > KEEP_BYTES // 2:
            return None  # not kept: bound in groups below
        return _Parts(one, jobs, bases, spare, wave)

    parts, kept = _kept(one, ("parts", *key), build)
    if parts is None and not made:
        return False
    if isinstance(parts, _Parts):
        count, wave, spare = len(parts.bounds), parts.wave, parts.spare

        def run_wave(start: int, stop: int) -> None:
            parts.run(bases, start)
    else:
        jobs, spare, wave = made[0]
        count = len(jobs)

        def run_wave(start: int, stop: int) -> None:
            step = max(1, workers())
            for first in range(start, stop, step):
                group = _Parts(one, jobs[first:min(stop, first + step)], bases, spare, step)
                try:
                    group.run(bases, 0)
                finally:
                    group.close()
    try:
        for start in range(0, count, wave):
            stop = min(count, start + wave)
            run_wave(start, stop)
            if accumulate:
                _accumulate(dw, spare, [i % wave for i in range(max(1, start), stop)])
    except OneDNNError as exc:
        if exc.status == _OUT_OF_MEMORY:
            raise MemoryError("oneDNN ran out of memory running the weight gradient") from exc
        return False
    finally:
        if isinstance(parts, _Parts) and not kept:
            parts.close()
    return True


def conv(kind: str, a: np.ndarray, b: np.ndarray, out_shape: Sequence[int],
         pre: Sequence[int], post: Sequence[int], stride: Sequence[int],
         dilation: Sequence[int], groups: int, out_dtype: np.dtype | None = None
         ) -> np.ndarray | None:
    """fprop (a=x, b=w -> y), dgrad (a=dy, b=w -> dx) or wgrad (a=x, b=dy -> dw) summed in FP32
    with logical dims ``out_shape``, or None where this path declines (the caller's paths run).

    The result is FP32, or for fprop and dgrad ``out_dtype`` (FP16 or BF16) when given: oneDNN
    rounds the FP32 sums once, to nearest even, as the engine would (a weight gradient's parts
    are added in FP32 first, so it is always FP32).

    y and dx come back in the input's layout (channels-last when ``a`` is dense channels-last),
    dw packed (K, C/G, spatial...). fprop and dgrad run on the engine's thread count of OpenMP
    threads (their sums do not depend on it); wgrad runs in :func:`_wgrad_parts`."""
    one = library()
    if one is None or (kind == "wgrad" and mode() == "fwd") or not _takes(a, b, out_shape):
        return None
    a, b = _readable(a), _readable(b)
    if kind == "wgrad" and mode() == "fast":
        return _one(one, kind, a, b, out_shape, pre, post, stride, dilation, groups, workers())
    if kind == "wgrad":
        return _wgrad_parts(one, a, b, out_shape, pre, post, stride, dilation, groups)
    target = _F32_DTYPE
    if out_dtype is not None and _dnnl_type(np.dtype(out_dtype)) in (_DNNL_F16, _DNNL_BF16):
        target = np.dtype(out_dtype)
    return _one(one, kind, a, b, out_shape, pre, post, stride, dilation, groups, workers(),
                target)


def _takes(a: np.ndarray, b: np.ndarray, out_shape: Sequence[int]) -> bool:
    """Whether this path takes the problem from its arrays alone: one data type oneDNN has,
    1-D to 3-D, nothing empty."""
    return (a.dtype == b.dtype and _dnnl_type(a.dtype) is not None and a.ndim in (3, 4, 5)
            and min(a.shape) > 0 and min(b.shape) > 0 and min(out_shape) > 0)


def _flat_pixels(a: np.ndarray) -> tuple[int, int] | None:
    """(count, element stride) of ``a``'s pixels (every axis but the channels, axis 1) where
    they lie at one stride (a channels-last array or part of one, one image of a channel-first
    array or a run of its rows), else None."""
    axes = [(n, s // a.itemsize) for axis, (n, s) in enumerate(zip(a.shape, a.strides, strict=True))
            if axis != 1 and n > 1]
    if not axes:
        return 1, 1
    count, stride = axes[-1]
    for n, s in reversed(axes[:-1]):
        if s != stride * count:
            return None
        count *= n
    return count, stride


def _pointwise(w_shape: Sequence[int], pre: Sequence[int], post: Sequence[int],
               stride: Sequence[int], groups: int, dtype: np.dtype) -> bool:
    """Whether a weight gradient is one matrix product of its pixels: an FP32 1x1 filter, unit
    stride, no padding, one group."""
    return (dtype == _F32_DTYPE and groups == 1 and all(k == 1 for k in w_shape[2:])
            and all(s == 1 for s in stride) and not any(pre) and not any(post))


def _matmul_steps(one: OneDNN, x: np.ndarray, dy: np.ndarray, out: tuple[int, np.ndarray]
                  ) -> list[_Step] | None:
    """A 1x1 part's products (:func:`_matmul_plan`): one where its pixels lie at one stride,
    else (a run of channel-first images) one over the images' pixels copied into one run where
    an image has fewer than :data:`PACK_PIXELS` (:func:`_packed_plan`), else one per image,
    each added to the sum of those before it in image order; None where oneDNN has no fast
    product."""
    plan = _matmul_plan(one, x, dy, out[1])
    if plan is None and x.shape[0] > 1 and prod(x.shape[2:]) < PACK_PIXELS:
        plan = _packed_plan(one, x, dy, out[1])
    if plan is not None:
        return [(plan, ((_DY, dy), (_X, x)), out)]
    if x.shape[0] < 2:
        return None
    steps: list[_Step] = []
    for n in range(x.shape[0]):
        a, b = x[n:n + 1], dy[n:n + 1]
        plan = _matmul_plan(one, a, b, out[1], accumulate=n > 0)
        if plan is None:
            return None
        steps.append((plan, ((_DY, b), (_X, a)), out))
    return steps


def _matmul_plan(one: OneDNN, x: np.ndarray, dy: np.ndarray, out: np.ndarray,
                 accumulate: bool = False) -> _Plan | None:
    """A 1x1 weight-gradient part as oneDNN's matrix product ``out = dy^T x`` over the part's
    pixels (its ``brg`` kernels run a part 10-70% faster than the 1x1 convolution's on one
    thread), reading (dy, x) where they lie, added to ``out`` with ``accumulate``; None where
    the pixels are not at one stride or oneDNN has no fast product."""
    px, pd = _flat_pixels(x), _flat_pixels(dy)
    if px is None or pd is None or px[0] != pd[0]:
        return None

    def el(a: np.ndarray, axis: int) -> int:  # a size-1 axis's stride is said as 1
        return a.strides[axis] // a.itemsize if a.shape[axis] > 1 else 1

    k, c, pixels = out.shape[0], out.shape[1], px[0]
    # dy^T as (k, pixels), x as (pixels, c), the result as (k, c)
    strides = (el(dy, 1), pd[1], px[1], el(x, 1), el(out, 0), el(out, 1))
    key = ("matmul", k, pixels, c, *strides, accumulate, 1)  # made for one thread
    return _cached(one, key, 1, lambda: _create_matmul(one, (k, pixels, c), strides, accumulate),
                   "the weight gradient's product")


def _cached(one: OneDNN, key: tuple, threads: int, create: Callable[[], _Plan | None],
            what: str) -> _Plan | None:
    """The cached plan for ``key`` (None too is cached: oneDNN has no fast one), else
    ``create()``'s on ``threads`` OpenMP threads, cached (the :data:`CACHE_SIZE` most recent
    kept); out of memory while creating is a MemoryError naming ``what``, another oneDNN
    failure None. ``key`` must hold ``threads``: oneDNN fixes an implementation's work split
    at creation from the creating thread's OpenMP thread count."""
    with one._lock:
        hit = key in one._cache
        plan = one._cache.get(key)
        if hit:
            one._cache.move_to_end(key)
    if hit:
        return plan
    one.set_threads(threads)
    try:
        plan = create()
    except OneDNNError as exc:
        if exc.status == _OUT_OF_MEMORY:
            raise MemoryError(f"oneDNN ran out of memory creating {what}") from exc
        plan = None
    with one._lock:
        one._cache[key] = plan
        while len(one._cache) > CACHE_SIZE:
            one._cache.popitem(last=False)
    return plan


def _packed_plan(one: OneDNN, x: np.ndarray, dy: np.ndarray, out: np.ndarray) -> _Plan | None:
    """A 1x1 weight-gradient part over a run of channel-first images as one product: dy's and
    x's channels reordered into (channel, image, pixel) temporaries, read as matrices of every
    image's pixels in one run. Small images (7x7) summed one product per image spend their
    time loading and storing the result (single-thread blocks of a 2048->512 7x7 gradient:
    35-45 GMAC/s, 47-56 copies included when packed); None where an image's pixels are not
    in one dense run or oneDNN has no fast product."""
    if _flat_pixels(x[:1]) != (prod(x.shape[2:]), 1) or _flat_pixels(dy[:1]) != (
            prod(dy.shape[2:]), 1):
        return None
    n, c, k, pixels = x.shape[0], x.shape[1], dy.shape[1], prod(x.shape[2:])
    (dy_image, dy_channel), (x_image, x_channel) = (_element_strides(a)[:2] for a in (dy, x))
    out_strides = _element_strides(out)
    key = ("matmul-packed", k, c, n, pixels, dy_image, dy_channel, x_image, x_channel,
           *out_strides, 1)  # made for one thread
    run = n * pixels  # every image's pixels, one after another in the temporaries
    return _cached(one, key, 1, lambda: _create_matmul(
        one, (k, run, c), [run, 1, 1, run, *out_strides],
        packed=(([k, n, pixels], [dy_channel, dy_image, 1]),
                ([c, n, pixels], [x_channel, x_image, 1]))),
        "the weight gradient's product")


def _create_matmul(one: OneDNN, dims: tuple[int, int, int], strides: Sequence[int],
                   accumulate: bool = False,
                   packed: tuple[tuple[list[int], list[int]], tuple[list[int], list[int]]]
                   | None = None) -> _Plan | None:
    """The FP32 product (k, pixels) x (pixels, c) -> (k, c) with the given element strides of
    dy^T, x and the result (added to it with ``accumulate``: a sum post-op, scale 1), on one
    thread; None where oneDNN has only its reference loops. With ``packed`` ((dims, strides)
    of dy and of x as (channel, image, pixel)), each is first reordered into a dense
    temporary that the product reads as its matrix (``strides`` then describe those)."""
    k, pixels, c = dims
    src = one.md_strided([k, pixels], list(strides[0:2]), _DNNL_F32)
    wei = one.md_strided([pixels, c], list(strides[2:4]), _DNNL_F32)
    dst = one.md_strided([k, c], list(strides[4:6]), _DNNL_F32)
    pd = _vp()
    attr = one.attr()
    try:
        if accumulate:
            ops = _vp()
            one._check(one.lib.dnnl_post_ops_create(ctypes.byref(ops)), "dnnl_post_ops_create")
            try:
                one._check(one.lib.dnnl_post_ops_append_sum(ops, ctypes.c_float(1.0), 0, 0),
                           "dnnl_post_ops_append_sum")
                one._check(one.lib.dnnl_primitive_attr_set_post_ops(attr, ops),
                           "dnnl_primitive_attr_set_post_ops")
            finally:
                one.lib.dnnl_post_ops_destroy(ops)
        status = one.lib.dnnl_matmul_primitive_desc_create(ctypes.byref(pd), one.engine,
                                                           src.handle, wei.handle, None,
                                                           dst.handle, attr)
    finally:
        one.lib.dnnl_primitive_attr_destroy(attr)
    if status == _UNIMPLEMENTED:
        return None
    one._check(status, "dnnl_matmul_primitive_desc_create")
    try:
        impl = one.impl(pd)
        if impl.startswith("ref"):
            return None
        sides = [_Side(src, src, None), _Side(wei, wei, None)]
        try:
            if packed is not None:  # user layout -> dense (channel, image, pixel) as a matrix
                sides = []
                for (dims3, user_strides), seen in zip(packed, (src, wei), strict=True):
                    user = one.md_strided(dims3, user_strides, _DNNL_F32)
                    inner = one.md_strided(dims3, _cf_strides(dims3), _DNNL_F32)
                    sides.append(_Side(user, inner, one.reorder(user, inner), seen))
            prim = _Prim(one.primitive(pd), one.queried(pd, _QUERY_SCRATCHPAD_MD))
        except BaseException:  # the reorders made so far are not owned by a plan yet
            for side in sides:
                if side.reorder is not None:
                    one.lib.dnnl_primitive_destroy(side.reorder.handle)
            raise
        return _Plan(one, prim, impl, [(_ARG_SRC, sides[0]), (_ARG_WEIGHTS, sides[1])],
                     (_ARG_DST, _Side(dst, dst, None)))
    finally:
        one.lib.dnnl_primitive_desc_destroy(pd)


def _wgrad_slabs(x_rows: int, out_rows: int, n: int, pre: int, stride: int,
                 reach: int, count: int) -> list[tuple[slice, slice, slice, int, int]]:
    """The parts of a weight gradient, at most about ``count``: (images, input rows, output
    rows, top padding, bottom padding) along the first spatial axis; ``reach`` = (kernel - 1) *
    dilation."""
    if n >= count:
        per = -(-n // count)
        return [(slice(i, min(n, i + per)), slice(None), slice(None), -1, -1)
                for i in range(0, n, per)]
    slabs = max(1, min(out_rows, -(-count // n)))
    bounds = [s * out_rows // slabs for s in range(slabs + 1)]  # even slabs: 14 rows -> 3,4,3,4
    parts = []
    for i in range(n):
        for r0, r1 in itertools.pairwise(bounds):
            first, last = r0 * stride - pre, (r1 - 1) * stride - pre + reach
            lo, hi = max(0, first), min(x_rows, last + 1)
            if lo < hi:  # else these outputs read only padding: no contribution
                parts.append((slice(i, i + 1), slice(lo, hi), slice(r0, r1), lo - first,
                              last + 1 - hi))
    return parts


def _wgrad_parts(one: OneDNN, x: np.ndarray, dy: np.ndarray, w_shape: Sequence[int],
                 pre: Sequence[int], post: Sequence[int], stride: Sequence[int],
                 dilation: Sequence[int], groups: int) -> np.ndarray | None:
    """The weight gradient as a sum of :func:`_wgrad_slabs` parts, each on one OpenMP thread
    (:class:`_Parts`), added in part order: the same bits for any thread count (oneDNN's own
    threaded weight gradient splits its sums by the thread count)."""
    reach = (w_shape[2] - 1) * dilation[0]
    split, count = _wgrad_split(x, dy, w_shape, reach, groups)
    if split == "blocks":
        return _wgrad_blocks(one, x, dy, w_shape, pre, post, stride, dilation, count)
    dw = np.empty(tuple(w_shape), dtype=_F32)

    def make() -> tuple[list[_Job], np.ndarray, int] | None:
        parts = _wgrad_slabs(x.shape[2], dy.shape[2], x.shape[0], pre[0], stride[0], reach,
                             count)
        if not parts:
            return None
        wave = max(1, min(len(parts), max(workers(), PARTIAL_BYTES // (4 * prod(w_shape)))))
        # part 0 sums into dw, the others into one block of partials per wave
        spare = np.empty((wave, *w_shape), dtype=_F32)
        pointwise = _pointwise(w_shape, pre, post, stride, groups, x.dtype)
        jobs: list[_Job] = []
        for i, (images, rows_in, rows_out, top, bottom) in enumerate(parts):
            a, b = x[images, :, rows_in], dy[images, :, rows_out]
            out = (_DW, dw) if i == 0 else (_SPARE, spare[i % wave])
            steps = _matmul_steps(one, a, b, out) if pointwise else None
            if steps is not None:
                jobs.append(steps)
                continue
            plan = _plan(one, "wgrad", a, b, out[1], list(pre) if top < 0 else [top, *pre[1:]],
                         list(post) if bottom < 0 else [bottom, *post[1:]], stride, dilation,
                         groups, 1)
            if plan is None:
                return None
            jobs.append([(plan, ((_X, a), (_DY, b)), out)])
        return jobs, spare, wave

    key = ("slabs", *_problem(x, dy, w_shape, pre, post, stride, dilation, groups))
    return dw if _run_parts(one, key, x, dy, dw, make, accumulate=True) else None


def _wgrad_split(x: np.ndarray, dy: np.ndarray, w_shape: Sequence[int], reach: int,
                 groups: int) -> tuple[str, int]:
    """How a weight gradient is cut, fixed by the shape and data type alone: ("slabs", count)
    of :func:`_wgrad_slabs`, or ("blocks", count) of :func:`_wgrad_blocks` where the slabs'
    FP32 partial gradients would outweigh the data in bytes (1x1 and deep layers; FP16 and BF16
    data sooner, as it is half the bytes); ``reach`` = (kernel - 1) * dilation along the rows."""
    macs = prod(dy.shape) * prod(w_shape[1:])
    slabs = _part_count(macs, shared_rows=reach > 0, most=WGRAD_SLABS)
    if groups == 1 and slabs > 1 and slabs * prod(w_shape) * 4 > x.nbytes + dy.nbytes:
        return "blocks", _part_count(macs, shared_rows=reach > 0)
    return "slabs", slabs


def _part_count(macs: int, shared_rows: bool = False, most: int | None = None) -> int:
    """The parts of a weight gradient of ``macs`` multiply-adds, fixed by the shape alone (never
    the thread count): one per :data:`WGRAD_PART_MACS`, at most ``most`` (default
    :data:`WGRAD_PARTS`); unless ``shared_rows`` (the kernel reaches across the rows the slabs
    split), at least :data:`WGRAD_MIN_PARTS` where each part then has
    :data:`WGRAD_SMALL_PART_MACS`."""
    many = macs // WGRAD_PART_MACS
    if not shared_rows:
        many = max(many, min(WGRAD_MIN_PARTS, macs // WGRAD_SMALL_PART_MACS))
    return max(1, min(WGRAD_PARTS if most is None else most, many))


def _problem(x: np.ndarray, dy: np.ndarray, w_shape: Sequence[int], pre: Sequence[int],
             post: Sequence[int], stride: Sequence[int], dilation: Sequence[int],
             groups: int) -> tuple:
    """What fixes a weight gradient's parts and where they lie: the arrays' types, shapes and
    strides, the arguments, and the thread count (it sets the parts per wave)."""
    return (x.dtype, x.shape, x.strides, dy.shape, dy.strides, tuple(w_shape), tuple(pre),
            tuple(post), tuple(stride), tuple(dilation), groups, workers())


def _wgrad_blocks(one: OneDNN, x: np.ndarray, dy: np.ndarray, w_shape: Sequence[int],
                  pre: Sequence[int], post: Sequence[int], stride: Sequence[int],
                  dilation: Sequence[int], count: int) -> np.ndarray | None:
    """An ungrouped weight gradient as about ``count`` blocks of (output, input) channels, each
    computed whole on one OpenMP thread (its sums over the batch and pixels in one order) and
    written straight into its block of dw (:class:`_Parts`): the same bits for any thread
    count. The split (fixed by the shape) balances the re-reads of x and dy: x is read once
    per output-channel block, dy once per input-channel block."""
    k, c = int(w_shape[0]), int(w_shape[1])
    dw = np.empty(tuple(w_shape), dtype=_F32)

    def make() -> tuple[list[_Job], np.ndarray, int] | None:
        k_vectors, c_vectors = -(-k // 16), -(-c // 16)  # blocks hold whole vectors of channels
        _, pk, pc = min((pk * x.size + pc * dy.size, pk, pc)
                        for pk in range(1, min(count, k_vectors) + 1)
                        for pc in [max(1, min(count // pk, c_vectors))])
        kb, cb = -(-k // pk), -(-c // pc)
        kb, cb = -(-kb // 16) * 16, -(-cb // 16) * 16  # whole vectors of channels
        blocks = [(k0, min(k, k0 + kb), c0, min(c, c0 + cb))
                  for k0 in range(0, k, kb) for c0 in range(0, c, cb)]
        pointwise = _pointwise(w_shape, pre, post, stride, 1, x.dtype)
        jobs: list[_Job] = []
        for k0, k1, c0, c1 in blocks:
            a, b, out = x[:, c0:c1], dy[:, k0:k1], dw[k0:k1, c0:c1]
            steps = _matmul_steps(one, a, b, (_DW, out)) if pointwise else None
            if steps is not None:
                jobs.append(steps)
                continue
            plan = _plan(one, "wgrad", a, b, out, pre, post, stride, dilation, 1, 1)
            if plan is None:
                return None
            jobs.append([(plan, ((_X, a), (_DY, b)), (_DW, out))])
        return jobs, np.empty(0, dtype=_F32), len(jobs)

    key = ("blocks", count, *_problem(x, dy, w_shape, pre, post, stride, dilation, 1))
    return dw if _run_parts(one, key, x, dy, dw, make, accumulate=False) else None


def _accumulate(dw: np.ndarray, spare: np.ndarray, order: Sequence[int]) -> None:
    """``dw += spare[r]`` for each ``r`` of ``order`` in turn: each element summed in that order,
    so the bits depend on neither the thread count nor the blocks. On numba's threads where
    numba is installed (:func:`._onednn_jit.add_partials`: blocks of the gradient kept in cache
    while every partial is added), else element ranges on the pool."""
    if not order:
        return
    assert dw.flags.c_contiguous and spare.flags.c_contiguous  # flat views, not copies
    total = dw.reshape(-1)
    rows = spare.reshape(spare.shape[0], -1)
    if _onednn_jit.add_partials(total, rows, order, workers()):
        return
    flats = [rows[r] for r in order]
    step = max(1 << 15, -(-total.size // (4 * workers())))

    def chunk(i: int) -> None:
        sl = slice(i * step, min(total.size, (i + 1) * step))
        for p in flats:
            total[sl] += p[sl]

    run_parts(chunk, -(-total.size // step))


def _one(one: OneDNN, kind: str, a: np.ndarray, b: np.ndarray, out_shape: Sequence[int],
         pre: Sequence[int], post: Sequence[int], stride: Sequence[int],
         dilation: Sequence[int], groups: int, threads: int,
         out_dtype: np.dtype = _F32_DTYPE) -> np.ndarray | None:
    """One oneDNN call of ``kind`` on ``threads`` OpenMP threads, its result in ``out_dtype``
    (see :func:`conv`)."""
    # the result in the input's layout: channels-last if ``a`` is dense channels-last (y, dx)
    if kind != "wgrad" and _channels_last_dense(a):
        order = [0, *range(2, len(out_shape)), 1]
        out = np.moveaxis(np.empty([out_shape[i] for i in order], dtype=out_dtype), -1, 1)
    else:
        out = np.empty(out_shape, dtype=out_dtype)
    plan = _plan(one, kind, a, b, out, pre, post, stride, dilation, groups, threads)
    if plan is None:
        return None
    try:
        _run(one, plan, [a, b], out, threads)
    except OneDNNError as exc:
        if exc.status == _OUT_OF_MEMORY:
            raise MemoryError(f"oneDNN ran out of memory running the {kind} convolution") from exc
        return None
    return out


def _plan(one: OneDNN, kind: str, a: np.ndarray, b: np.ndarray, out: np.ndarray,
          pre: Sequence[int], post: Sequence[int], stride: Sequence[int],
          dilation: Sequence[int], groups: int, threads: int) -> _Plan | None:
    """The cached (or a new) primitive for the problem, writing ``out``'s layout and type (a
    weight gradient: packed FP32), or None."""
    dtype, out_type = _dnnl_type(a.dtype), _dnnl_type(out.dtype)
    assert dtype is not None and out_type is not None
    out_shape, out_strides = out.shape, _element_strides(out)
    key = (kind, a.dtype, a.shape, a.strides, b.shape, b.strides,
           tuple(out_shape), tuple(out_strides), groups, tuple(pre), tuple(post), tuple(stride),
           tuple(dilation), threads, out.dtype)
    return _cached(one, key, threads, lambda: _create(one, kind, a, b, out_shape, out_strides,
                                                      dtype, out_type, groups, pre, post,
                                                      stride, dilation),
                   f"the {kind} convolution")


class DeferredConv(DeferredOutput):
    """An fprop or dgrad output that oneDNN writes straight into the caller's buffer at commit
    (no engine-side array, no copy): :meth:`fits` makes (or finds) the primitive for the
    buffer's own layout and type and every temporary, so :meth:`write_into` only executes.
    ``fallback`` computes the value where the buffer does not fit (the kernels' own dispatch:
    another layout of oneDNN, or the tap GEMMs)."""

    def __init__(self, one: OneDNN, kind: str, a: np.ndarray, b: np.ndarray,
                 shape: Sequence[int], conv_args: tuple[Sequence[int], Sequence[int],
                                                        Sequence[int], Sequence[int], int],
                 fallback: Callable[[], np.ndarray]) -> None:
        self.one, self.kind, self.a, self.b = one, kind, a, b
        self.shape = tuple(int(v) for v in shape)
        self.reads = (a, b)
        self.conv_args = conv_args
        self.fallback = fallback
        self._bound: tuple[np.ndarray, np.ndarray, _Bound, bool] | None = None

    def fits(self, view: np.ndarray) -> bool:
        if view.shape != self.shape or _dnnl_type(view.dtype) is None or view.size == 0:
            return False
        target = _plain(view)
        if target is None or not view.flags.writeable:
            return False
        if any(np.may_share_memory(view, r) for r in self.reads):  # an output over an input
            return False
        pre, post, stride, dilation, groups = self.conv_args
        threads = workers()
        try:
            plan = _plan(self.one, self.kind, self.a, self.b, target, pre, post, stride,
                         dilation, groups, threads)
            if plan is None:
                return False
            # this thread's kept binding of the plan (its temporaries already faulted in), or a
            # new one; bound to the arrays in write_into, as another output may share it
            bound, kept = _bound_for(self.one, plan, threads)
            self._bound = (view, target, bound, kept)
        except (OneDNNError, MemoryError):
            return False
        return True

    def write_into(self, view: np.ndarray) -> None:
        assert self._bound is not None and self._bound[0] is view
        _, target, bound, kept = self._bound
        self._bound = None
        try:
            bound.bind([self.a, self.b], target)
            bound.run()
        finally:
            if not kept:
                bound.close()

    def materialize(self) -> np.ndarray:
        if self._bound is not None:
            _, _, bound, kept = self._bound
            self._bound = None
            if not kept:
                bound.close()
        return self.fallback()


def deferred(kind: str, a: np.ndarray, b: np.ndarray, out_shape: Sequence[int],
             pre: Sequence[int], post: Sequence[int], stride: Sequence[int],
             dilation: Sequence[int], groups: int,
             fallback: Callable[[], np.ndarray]) -> DeferredConv | None:
    """fprop or dgrad as a :class:`DeferredConv` (the engine commits it into the caller's
    output), or None where :func:`conv` would decline from the inputs alone."""
    one = library()
    if one is None or kind == "wgrad" or not _takes(a, b, out_shape):
        return None
    return DeferredConv(one, kind, _readable(a), _readable(b), out_shape,
                        (pre, post, stride, dilation, groups), fallback)


def describe() -> str:
    """One line for ``python -m hipdnn info``."""
    one = library()
    if one is None:
        return ""
    major, minor, patch = one.version
    return f"oneDNN {major}.{minor}.{patch} ({one.path})"
