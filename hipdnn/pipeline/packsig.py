"""Matchers for ``graph.execute``'s remembered bindings: is this variant pack the bound one?

A matcher is made once per bound pack (after the pack was resolved and checked) and called on
every later ``execute``: it reads afresh, from each value of the pack it is given, everything
:func:`hipdnn.interop.buffers.resolve` and :func:`hipdnn.interop.buffers.check_against` look at -- the exact
type, the data pointer, shape, strides, dtype, device and read-only flag (a whole
``__cuda_array_interface__`` dict, a DLPack export) -- and compares it with what the bound pack
had. Equal reads resolve to equal :class:`~hipdnn.interop.buffers.Buffer` fields, so they pass or fail
the same checks, and the bound plan can run without resolving the pack again; nothing is
trusted by object identity alone (graph-tensor keys and the handle are compared by identity,
as the binding holds them).

Each matcher is one boolean expression over the pack's items, generated per *kind sequence*
(which value kinds sit at which positions) and cached, so that binding a pack of a kind
sequence seen before costs a function call, not a compile. Kinds, read in ``resolve``'s order:

===========  ====================================================================
``int``      exact ``int`` (a raw pointer): equal value
``float``    exact ``float`` (a pass-by-value scalar): equal value, and sign for 0.0
``numpy``    exact ``numpy.ndarray``: pointer (read from the array struct), shape,
             strides, dtype, writeable flag
``ndarray``  an ndarray subclass: the same, pointer through ``__array_interface__``
``torch``    a torch tensor type: ``data_ptr()``, shape, ``stride()``, dtype, device, and
             neither the negative nor (complex dtypes only: no other dtype carries it) the
             conjugate bit (views with them are never bound)
``torch_g``  an exact ``torch.Tensor`` / ``nn.Parameter`` (once per pack): ``data_ptr()``
             in Python; shape, strides, dtype, device and the view bits of every such value
             in one C call (see *Torch tensor guards* below)
``cai``      an object with ``__cuda_array_interface__``: the whole dict, compared
             with a deep copy of the bound one
``object``   anything else ``resolve`` takes (``__dlpack__``, ``__array_interface__``):
             :func:`signature` of the object (a DLPack export is read by
             :func:`hipdnn.interop.dlpack.read`, without consuming it)
===========  ====================================================================

Torch tensor guards: reading shape, strides, device and the view bits through torch's Python
accessors costs about 0.5 us per tensor (each builds a tuple or a device object), several times
the int-pointer path's whole per-value cost. Torch's own guard object for compiled graphs,
``torch._C._dynamo.guards.TensorGuards``, compares exactly these in C++ for a whole tuple of
tensors: the exact Python type, the dispatch key set (which holds the device type and the
negative/conjugate bits), dtype, device index, ``requires_grad``, rank, and every size and stride
(given as ints: none is left dynamic). It is private torch API, so :func:`_tensor_guards`
uses it only after a self-test on probe tensors shows that it accepts an equal tensor and
rejects each changed read (shape, strides on a size-1 axis and of a zero-size tensor, dtype,
device type, the negative and conjugate bits); otherwise the ``torch`` test above is used. The
key set is compared after the thread's local include/exclude sets are applied, so a guarded
matcher also reads, on every call, that the thread excludes neither view bit (inside
``torch._C._ExcludeDispatchKeyGuard`` a negative view would otherwise read as plain), and a
binding made while a thread includes either bit gets no guard. ``requires_grad`` and other
keys are extra reads: a change there is a miss, never a wrong hit. The guard rejects a tuple
holding one tensor twice, so only the first occurrence of an object in a pack is guarded.

Values ``resolve`` treats specially (bool, int subclasses, numpy scalars, ``Buffer``) get no
matcher: such packs always take the checked path. A matcher that raises (an object whose
interface became malformed, a sparse torch tensor) is a miss; the checked path then reports
the error.

>>> import numpy as np
>>> a, b = np.zeros((2, 3), np.float32), np.zeros(3, np.float32)
>>> match = compile_matcher({1: a, 2: b}, None, None, "bound")
>>> match({1: a[:], 2: b}, None, None), match({1: a.T, 2: b}, None, None)
('bound', None)
"""

from __future__ import annotations

import copy
import ctypes
import math
import sys
import threading
from collections.abc import Callable, Hashable
from typing import Any, NamedTuple, cast

import numpy as np

from hipdnn.interop import dlpack
from hipdnn.interop.buffers import Buffer
from hipdnn.ir.tensor import Tensor

__all__ = ["MAX_READERS", "READERS", "Matcher", "compile_matcher", "kind_of", "matcher_source",
           "signature"]

#: ``match(variant_pack, workspace, handle)`` -> the bound result, or None.
Matcher = Callable[[Any, Any, Any], Any]


def _numpy_ptr_by_interface(a: np.ndarray[Any, Any]) -> int:
    return int(a.__array_interface__["data"][0])


def _numpy_ptr_by_struct(a: np.ndarray[Any, Any]) -> int:
    # numpy's public PyArrayObject_fields: ``char *data`` follows PyObject_HEAD
    return _VOIDP.from_address(id(a) + _DATA_OFFSET).value or 0


_VOIDP = ctypes.c_void_p
_DATA_OFFSET = 2 * ctypes.sizeof(ctypes.c_void_p)  # ob_refcnt, ob_type


def _address_space() -> Any:
    """The process's memory as an array of pointer-sized words (read by index, never written).

    Indexing it reads one word in C without making a ctypes object per read, which halves the
    cost of :func:`_numpy_ptr_by_struct`; None where such a type cannot be made.
    """
    try:
        return (ctypes.c_size_t * (2 ** (8 * ctypes.sizeof(ctypes.c_size_t) - 5))) \
            .from_address(0)
    except (OverflowError, ValueError, MemoryError):  # pragma: no cover - 32-bit interpreters
        return None


_words = _address_space()


def _numpy_ptr_by_word(a: np.ndarray[Any, Any]) -> int:
    return int(_words[(id(a) + _DATA_OFFSET) // _DATA_WORD])


_DATA_WORD = ctypes.sizeof(ctypes.c_size_t)


def _pick_numpy_ptr() -> tuple[Callable[[np.ndarray[Any, Any]], int], str]:
    """The cheapest pointer read that agrees with ``__array_interface__`` here, and its
    expression for generated matchers (``{v}``: the array)."""
    probes: list[np.ndarray[Any, Any]] = [np.arange(6, dtype=np.float32),
                                         np.zeros((3, 4), np.float16)[1:, ::2]]
    for read, expr in ((_numpy_ptr_by_word,
                        f"_words[(id({{v}}) + {_DATA_OFFSET}) // {_DATA_WORD}]"),
                       (_numpy_ptr_by_struct, "_np_ptr({v})")):
        try:
            if (read is not _numpy_ptr_by_word or _words is not None) and all(
                    read(p) == _numpy_ptr_by_interface(p) for p in probes):
                return read, expr
        except (ValueError, OSError):  # pragma: no cover - an interpreter without that layout
            pass
    return _numpy_ptr_by_interface, "_np_iface_ptr({v})"  # pragma: no cover


_numpy_ptr, _NUMPY_PTR_EXPR = _pick_numpy_ptr()


def _interface(iface: Any) -> tuple[Any, ...]:
    # lists (a shape given as a list, numpy's descr) are made hashable; anything else that is
    # not hashable makes a comparison fail, and the pack takes the checked path
    shape, strides, descr = iface["shape"], iface.get("strides"), iface.get("descr")
    return (iface["data"], shape if type(shape) is tuple else tuple(shape),
            strides if strides is None or type(strides) is tuple else tuple(strides),
            iface["typestr"], descr if descr is None else tuple(tuple(e) for e in descr),
            iface.get("mask") is None, iface.get("stream"))


_MISSING = object()


def signature(obj: Any) -> Hashable:
    """What ``resolve`` reads from an interface object, in its order (CAI, DLPack, AI).

    >>> a = np.zeros((2, 3), np.float32)
    >>> class AI:
    ...     __array_interface__ = a.__array_interface__
    >>> signature(AI())[1:4] == ("ai", (a.ctypes.data, False), (2, 3))
    True
    """
    iface = getattr(obj, "__cuda_array_interface__", _MISSING)
    if iface is not _MISSING:
        return (type(obj), "cai", *_interface(iface))
    if hasattr(obj, "__dlpack__"):
        return (type(obj), "dlpack", *dlpack.read(obj))  # released before it returns
    return (type(obj), "ai", *_interface(obj.__array_interface__))


def _is_torch_type(tp: type) -> bool:
    return any(c.__name__ == "Tensor" and c.__module__.split(".")[0] == "torch"
               for c in tp.__mro__)


#: Exact type -> matcher kind (None: never remembered), filled by :func:`kind_of`.
READERS: dict[type, str | None] = {}
#: At most this many types are remembered (a program making classes on the fly must not grow
#: it, nor keep its classes alive): when full it starts again, which costs one classification.
MAX_READERS = 256


def kind_of(value: Any) -> str | None:
    """``value``'s matcher kind (see the module docstring); None: never remembered.

    >>> kind_of(4096), kind_of(True), kind_of(2.5), kind_of(np.float32(1))
    ('int', None, 'float', None)
    """
    tp = type(value)
    if tp is int or tp is float:
        return "int" if tp is int else "float"
    try:
        kind = READERS[tp]
    except KeyError:
        if len(READERS) >= MAX_READERS:
            READERS.clear()
        kind = READERS[tp] = _classify(tp)
    if kind == "object" and hasattr(value, "__cuda_array_interface__"):
        return "cai"  # per instance, as resolve decides
    return kind


def _classify(tp: type) -> str | None:
    if issubclass(tp, (bool, np.bool_, int, np.integer, float, np.floating, Buffer)):
        return None  # exact int and float are handled first; subclasses and the rest are rare
    if tp is np.ndarray:
        return "numpy"
    if issubclass(tp, np.ndarray):
        return "ndarray"
    if _is_torch_type(tp):
        return "torch"
    return "object"


# ---------------------------------------------------------------------------- torch guards

class _TorchGuards(NamedTuple):
    """What a guarded matcher needs from torch (see the module docstring)."""

    make: Callable[[list[Any]], Callable[..., bool]]  # tensors -> their guard's ``check``
    types: tuple[type, ...]  # exact types guarded: their accessors are torch's own
    excluded: Callable[[Any], bool]  # the thread excludes this dispatch key
    included: Callable[[Any], bool]  # the thread includes it
    neg: Any
    conj: Any

    def thread_is_clean(self) -> bool:
        """The thread neither includes nor excludes a view bit's key (a guard made now holds
        the tensor's own bits, and compares them on a later call where the thread excludes
        neither)."""
        return not any(f(k) for f in (self.excluded, self.included)
                       for k in (self.neg, self.conj))


_UNSET: Any = object()
_torch_guards: Any = _UNSET


def _tensor_guards() -> _TorchGuards | None:
    """torch's tensor guard, once it passed :func:`_guard_self_test`; None where torch lacks
    it or the test fails (the ``torch`` matcher kind is used then). Decided once per process,
    on the first torch value bound on a thread that neither includes nor excludes a view-bit
    key."""
    global _torch_guards
    if _torch_guards is _UNSET:
        api = _tensor_guard_api()
        if api is not None and not api.thread_is_clean():
            return None  # this thread's view-bit keys would skew the self-test: decide later
        _torch_guards = _load_tensor_guards(api)
    return cast("_TorchGuards | None", _torch_guards)


def _load_tensor_guards(api: _TorchGuards | None = None) -> _TorchGuards | None:
    """:func:`_tensor_guard_api`'s answer if it passes the self-test, else None."""
    api = api or _tensor_guard_api()
    try:
        return api if api is not None and _guard_self_test(api, sys.modules["torch"]) else None
    except Exception:  # a probe torch cannot make or check: the per-value test
        return None


def _tensor_guard_api() -> _TorchGuards | None:
    """torch's guard and thread-state readers; None where this torch lacks one of them."""
    torch = sys.modules.get("torch")
    try:
        tensor_guards = torch._C._dynamo.guards.TensorGuards  # type: ignore[union-attr]
        api = _TorchGuards(
            make=lambda ts: tensor_guards(
                *ts, dynamic_dims_sizes=[[int(d) for d in t.shape] for t in ts],
                dynamic_dims_strides=[[int(s) for s in t.stride()] for t in ts]).check,
            types=(torch.Tensor, torch.nn.Parameter),  # type: ignore[union-attr]
            excluded=torch._C._dispatch_tls_is_dispatch_key_excluded,  # type: ignore[union-attr]
            included=torch._C._dispatch_tls_is_dispatch_key_included,  # type: ignore[union-attr]
            neg=torch._C.DispatchKey.Negative,  # type: ignore[union-attr]
            conj=torch._C.DispatchKey.Conjugate)  # type: ignore[union-attr]
    except AttributeError:  # another torch: no such API
        return None
    return api


def _guard_self_test(api: _TorchGuards, torch: Any) -> bool:
    """The guard accepts an equal tensor (another object) and rejects every changed read."""
    if not api.thread_is_clean():
        return False
    base = torch.zeros((2, 1, 3, 4))
    z = torch.zeros((2, 0, 3))
    c = torch.zeros((2, 3), dtype=torch.complex64)
    check = api.make([base, z, c])
    if not check(base[:], z[:], c[:]):
        return False
    changed = [
        torch.zeros((2, 1, 3, 5)),  # shape
        torch.zeros((2, 1, 4, 3)).transpose(2, 3),  # strides
        base.as_strided((2, 1, 3, 4), (12, 5, 4, 1)),  # the stride of a size-1 axis
        torch.zeros((2, 1, 3, 4), dtype=torch.float64),  # dtype
        torch.zeros((2, 1, 3, 4), dtype=torch.int32),
        torch._neg_view(base),  # the negative bit
        torch.zeros((2, 1, 3, 4), device="meta"),  # device type
        torch.zeros((2, 1, 3)),  # rank
    ]
    if any(check(t, z, c) for t in changed):
        return False
    if check(base, z.as_strided((2, 0, 3), (1, 1, 1)), c) or check(base, z, c.conj()) \
            or check(base, z, torch._neg_view(c)):
        return False  # a zero-size tensor's strides, the conjugate and negative bits
    return bool(check(base, z, c))


# ---------------------------------------------------------------------------- compiling

#: Per kind: the test on value ``{v}`` (its constants are ``{c}<name>``).
_TESTS: dict[str, str] = {
    "int": "type({v}) is int and {v} == {c}ptr",
    "float": ("type({v}) is float and {v} == {c}value and "
              "({v} != 0.0 or _sign(1.0, {v}) == {c}sign)"),
    "numpy": ("type({v}) is {c}type and " + _NUMPY_PTR_EXPR + " == {c}ptr and "
              "{v}.shape == {c}shape and {v}.strides == {c}strides and {v}.dtype == {c}dtype "
              "and {v}.flags.writeable == {c}w"),
    "ndarray": ("type({v}) is {c}type and _np_iface_ptr({v}) == {c}ptr and "
                "{v}.shape == {c}shape and {v}.strides == {c}strides and "
                "{v}.dtype == {c}dtype and {v}.flags.writeable == {c}w"),
    "torch": ("type({v}) is {c}type and {v}.data_ptr() == {c}ptr and {v}.shape == {c}shape "
              "and {v}.stride() == {c}strides and {v}.dtype is {c}dtype and "
              "{v}.device == {c}device and not {v}.is_neg()"),
    # only complex tensors carry the conjugate bit: one more read for them
    "torch_complex": ("type({v}) is {c}type and {v}.data_ptr() == {c}ptr and "
                      "{v}.shape == {c}shape and {v}.stride() == {c}strides and "
                      "{v}.dtype is {c}dtype and {v}.device == {c}device and "
                      "not {v}.is_neg() and not {v}.is_conj()"),
    # shape, strides, dtype, device and view bits: the pack's one guard call (matcher_source)
    "torch_g": "type({v}) is {c}type and {v}.data_ptr() == {c}ptr",
    "cai": "type({v}) is {c}type and {v}.__cuda_array_interface__ == {c}iface",
    "object": "type({v}) is {c}type and _signature({v}) == {c}sig",
}

#: Per kind, the constant names its test uses, in the order ``_constants`` gives them.
_NAMES: dict[str, tuple[str, ...]] = {
    "int": ("ptr",), "float": ("value", "sign"),
    "numpy": ("type", "ptr", "shape", "strides", "dtype", "w"),
    "ndarray": ("type", "ptr", "shape", "strides", "dtype", "w"),
    "torch": ("type", "ptr", "shape", "strides", "dtype", "device"),
    "torch_complex": ("type", "ptr", "shape", "strides", "dtype", "device"),
    "torch_g": ("type", "ptr"),
    "cai": ("type", "iface"), "object": ("type", "sig"),
}


def _constants(kind: str, v: Any) -> tuple[Any, ...]:
    """The constants of ``_TESTS[kind]`` read from ``v`` now, in ``_NAMES[kind]`` order."""
    if kind == "int":
        return (v,)
    if kind == "float":
        return v, math.copysign(1.0, v)
    if kind in ("numpy", "ndarray"):
        ptr = (_numpy_ptr if kind == "numpy" else _numpy_ptr_by_interface)(v)
        return type(v), ptr, v.shape, v.strides, v.dtype, bool(v.flags.writeable)
    if kind == "torch_g":
        return type(v), v.data_ptr()
    if kind in ("torch", "torch_complex"):
        return (type(v), v.data_ptr(), tuple(v.shape), tuple(v.stride()), v.dtype,
                v.device)
    if kind == "cai":
        iface = copy.deepcopy(v.__cuda_array_interface__)  # the producer may mutate its own
        if type(iface) is not dict:
            raise TypeError("__cuda_array_interface__ is not a dict")
        return type(v), iface
    sig = signature(v)
    hash(sig)  # compared by ==: it must hold values, not mutable views of the object
    return type(v), sig


_GLOBALS = {"_np_ptr": _numpy_ptr, "_words": _words, "_np_iface_ptr": _numpy_ptr_by_interface,
            "_signature": signature, "_sign": math.copysign}
#: One layout: (key kinds, value kinds, workspace kind); key kinds are tensor / uid / none.
Layout = tuple[tuple[str, ...], tuple["str | None", ...], "str | None"]
_factories: dict[Layout, Callable[..., Matcher]] = {}
_factories_lock = threading.Lock()
#: Layouts whose generated factory is kept (a program has a handful).
FACTORIES = 256


def _tuple(names: list[str]) -> str:
    return ", ".join(names) + ("," if len(names) == 1 else "")


def matcher_source(layout: Layout) -> str:
    """The generated source of ``make(keys, consts, result, handle) -> match`` for ``layout``.

    >>> print(matcher_source((("tensor",), ("int",), None)))  # doctest: +NORMALIZE_WHITESPACE
    def make(keys, consts, result, bound_handle):
        c0_ptr, = consts
        k0, = keys
        def match(pack, ws, handle):
            if type(pack) is not dict or len(pack) != 1 or handle is not bound_handle:
                return None
            (x0, v0), = pack.items()
            return result if (x0 is k0 and type(v0) is int and v0 == c0_ptr and ws is None) else None
        return match
    """
    key_kinds, value_kinds, ws_kind = layout
    n = len(key_kinds)
    slots = [*enumerate(value_kinds), (n, ws_kind)]
    consts = [f"c{i}_{name}" for i, kind in slots if kind is not None for name in _NAMES[kind]]
    if "torch_g" in value_kinds or ws_kind == "torch_g":
        consts += ["g_check", "g_excluded", "g_neg", "g_conj"]
    lines = ["def make(keys, consts, result, bound_handle):"]
    if consts:
        lines.append(f"    {_tuple(consts)} = consts")
    if n:
        lines.append(f"    {_tuple([f'k{i}' for i in range(n)])} = keys")
    lines += ["    def match(pack, ws, handle):",
              f"        if type(pack) is not dict or len(pack) != {n} "
              "or handle is not bound_handle:",
              "            return None"]
    if n:
        lines.append(f"        {_tuple([f'(x{i}, v{i})' for i in range(n)])} = pack.items()")
    tests = []
    for i, (key_kind, kind) in enumerate(zip(key_kinds, value_kinds, strict=True)):
        tests.append(f"x{i} is k{i}" if key_kind == "tensor" else f"x{i} is None"
                     if key_kind == "none" else f"type(x{i}) is int and x{i} == k{i}")
        if kind is not None:
            tests.append(_TESTS[kind].format(v=f"v{i}", c=f"c{i}_"))
    tests.append("ws is None" if ws_kind is None else _TESTS[ws_kind].format(v="ws", c=f"c{n}_"))
    guarded = [f"v{i}" if i < n else "ws" for i, kind in slots if kind == "torch_g"]
    if guarded:  # everything else torch_g values must read the same, in one call
        tests.append(f"not g_excluded(g_neg) and not g_excluded(g_conj) and "
                     f"g_check({_tuple(guarded)})")
    lines += [f"        return result if ({' and '.join(tests)}) else None",
              "    return match"]
    return "\n".join(lines) + "\n"


def _factory(layout: Layout) -> Callable[..., Matcher]:
    """The compiled ``make`` of :func:`matcher_source`, cached per layout."""
    make = _factories.get(layout)
    if make is None:
        namespace = dict(_GLOBALS)
        exec(compile(matcher_source(layout), "<hipdnn.pipeline.packsig matcher>", "exec"), namespace)
        make = namespace["make"]
        with _factories_lock:
            if len(_factories) >= FACTORIES:
                _factories.clear()
            _factories[layout] = make
    return make


def _torch_kind(value: Any, guarded: list[Any] | None) -> str | None:
    """``torch_g`` (appending ``value`` to ``guarded``; never when that is None), ``torch`` or
    ``torch_complex``; None for a negative or conjugate view (``execute`` never binds one: it
    reads a resolved copy)."""
    if value.is_neg() or value.is_conj():
        return None
    api = None if guarded is None else _tensor_guards()
    if api is not None and guarded is not None and type(value) in api.types and api.thread_is_clean() \
            and not any(value is g for g in guarded):
        guarded.append(value)
        return "torch_g"
    return "torch_complex" if value.dtype.is_complex else "torch"


def compile_matcher(variant_pack: Any, workspace: Any, handle: Any,
                    result: Any, *, guard: bool = True) -> Matcher | None:
    """A matcher returning ``result`` for packs that read as ``variant_pack`` reads now.

    Keys must be graph tensors, exact int uids or None (whose value is ignored, as
    ``execute`` ignores it); the workspace None or a value of a matcher kind; the handle is
    compared by identity. None: the pack cannot be remembered (a value without a kind, a
    key of another type, a value whose reads fail). ``guard=False``: torch tensors get the
    per-value test (see the module docstring).

    >>> match = compile_matcher({7: 4096, None: "ignored"}, None, None, "run")
    >>> match({7: 4096, None: 0}, None, None), match({7: 4097, None: 0}, None, None)
    ('run', None)
    """
    if type(variant_pack) is not dict:
        return None
    key_kinds: list[str] = []
    value_kinds: list[str | None] = []
    keys: list[Any] = []
    consts: list[Any] = []
    guarded: list[Any] = []
    try:
        for key, value in variant_pack.items():
            if key is None:
                key_kinds.append("none")
                value_kinds.append(None)
                keys.append(None)
                continue
            tk = type(key)
            if tk is not Tensor and tk is not int:
                return None
            kind = kind_of(value)
            if kind == "torch":
                kind = _torch_kind(value, guarded if guard else None)
            if kind is None:
                return None
            key_kinds.append("tensor" if tk is Tensor else "uid")
            value_kinds.append(kind)
            keys.append(key)
            consts.extend(_constants(kind, value))
        ws_kind = None if workspace is None else kind_of(workspace)
        if ws_kind == "torch":
            ws_kind = _torch_kind(workspace, guarded if guard else None)
        if workspace is not None:
            if ws_kind is None:
                return None
            consts.extend(_constants(ws_kind, workspace))
        if guarded:
            api = _tensor_guards()
            assert api is not None
            try:
                check = api.make(guarded)
            except Exception:  # the guard cannot hold one of these: the per-value test can
                return compile_matcher(variant_pack, workspace, handle, result, guard=False)
            consts.extend((check, api.excluded, api.neg, api.conj))
    except Exception:  # unreadable now: never remembered, the checked path runs
        return None
    make = _factory((tuple(key_kinds), tuple(value_kinds), ws_kind))
    return make(tuple(keys), tuple(consts), result, handle)
