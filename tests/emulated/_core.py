"""Plumbing of the emulated device: statuses, argument access, call records, object tables.

Every emulated C function is a method taking one ``Args`` object (the ctypes-converted arguments
by their header names) and either returning normally (success) or raising ``Status``. The binder
(device.py) catches everything, so no Python exception ever crosses the C boundary.
"""

from __future__ import annotations

import ctypes
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

__all__ = [
    "ALLOC_FAILED",
    "BAD_PARM",
    "INTERNAL_ERROR",
    "INVALID_VALUE",
    "NOT_IMPLEMENTED",
    "NOT_INITIALIZED",
    "SUCCESS",
    "UNKNOWN_ERROR",
    "UNSUPPORTED_OP",
    "VERSION_MISMATCH",
    "Args",
    "Call",
    "HandleTable",
    "Status",
    "addr",
    "api",
    "implementations",
    "read_array",
    "read_scalar",
    "require",
    "write_out",
]

SUCCESS = 0
NOT_INITIALIZED = 1
INVALID_VALUE = 2
BAD_PARM = 3
ALLOC_FAILED = 4
INTERNAL_ERROR = 5
NOT_IMPLEMENTED = 6
UNKNOWN_ERROR = 7
UNSUPPORTED_OP = 8
VERSION_MISMATCH = 10


class Status(Exception):
    """An emulated C function's non-success status, with the message MIOpen would log."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"status {code}: {message}")
        self.code = code
        self.message = message


def require(condition: object, message: str, code: int = BAD_PARM) -> None:
    """Raise ``Status(code, message)`` unless ``condition`` holds."""
    if not condition:
        raise Status(code, message)


def addr(value: Any) -> int:
    """The address a converted C argument holds (0 for NULL): ints, c_void_p, any ctypes pointer."""
    if value is None:
        return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, ctypes._SimpleCData):
        inner = value.value
        return inner if isinstance(inner, int) else 0
    if isinstance(value, (ctypes._Pointer, ctypes.Array, ctypes._CFuncPtr)):  # type: ignore[attr-defined]
        return ctypes.cast(value, ctypes.c_void_p).value or 0
    raise TypeError(f"not a pointer argument: {value!r}")


def write_out(pointer: Any, ctype: Any, value: Any, name: str) -> None:
    """``*pointer = value`` for an out-parameter; NULL is BadParm ("Dereferencing nullptr")."""
    where = addr(pointer)
    require(where, f"{name}: Dereferencing nullptr")
    ctype.from_address(where).value = value


def read_scalar(pointer: Any, ctype: Any, name: str) -> Any:
    """``*pointer`` for an input pointer (host memory); NULL is BadParm."""
    where = addr(pointer)
    require(where, f"{name}: Dereferencing nullptr")
    return ctype.from_address(where).value


def read_array(pointer: Any, ctype: Any, count: int, name: str) -> list[Any]:
    """``pointer[0:count]`` of a host array argument; NULL is BadParm."""
    where = addr(pointer)
    require(where, f"{name}: Dereferencing nullptr")
    return list((ctype * count).from_address(where))


class Args:
    """The arguments of one call, by the header's parameter names (``a.xDesc``, ``a.workSpace``)."""

    __slots__ = ("_names", "_values")

    def __init__(self, names: Sequence[str], values: Sequence[Any]) -> None:
        self._names = tuple(names)
        self._values = tuple(values)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[self._names.index(name)]
        except ValueError:
            raise AttributeError(f"no argument {name!r}; have {self._names}") from None

    def __getitem__(self, index: int) -> Any:
        return self._values[index]

    def items(self) -> Iterator[tuple[str, Any]]:
        """(name, value) pairs in C order."""
        return zip(self._names, self._values, strict=True)


class Call(NamedTuple):
    """One recorded call: the C name and its arguments (pointers as int addresses, NULL as 0)."""

    name: str
    args: tuple[Any, ...]
    names: tuple[str, ...] = ()

    def arg(self, name: str) -> Any:
        """The recorded value of parameter ``name``."""
        return self.args[self.names.index(name)]


F = TypeVar("F", bound=Callable[..., Any])


def api(name: str) -> Callable[[F], F]:
    """Mark a method as the emulation of the C function ``name``."""

    def mark(fn: F) -> F:
        fn.__emulates__ = name  # type: ignore[attr-defined]
        return fn

    return mark


def implementations(obj: object) -> dict[str, Callable[[Args], Any]]:
    """C name -> bound method for every ``@api`` method of ``obj`` (and its bases)."""
    found: dict[str, Callable[[Args], Any]] = {}
    for klass in reversed(type(obj).__mro__):
        for member in vars(klass).values():
            name = getattr(member, "__emulates__", None)
            if name is not None:
                if name in found:
                    raise TypeError(f"{name} is emulated twice")
                found[name] = member.__get__(obj, type(obj))  # that class's method, even if shadowed
    return found


T = TypeVar("T")


@dataclass
class _Entry:
    kind: str
    obj: Any


class HandleTable:
    """Fake opaque handles (distinct, never-dereferenced addresses) mapped to Python objects.

    Each kind gets its own address range so a handle of one kind passed as another is caught.
    Destroyed handles are remembered: using one is BadParm (MIOpen itself would crash).
    """

    _BASES: Mapping[str, int] = {
        "handle": 0x7E5700000000,
        "stream": 0x7E5710000000,
        "event": 0x7E5720000000,
        "tensor": 0x7E5730000000,
        "conv": 0x7E5740000000,
        "activation": 0x7E5750000000,
        "fusion_plan": 0x7E5760000000,
        "fusion_op": 0x7E5770000000,
        "op_args": 0x7E5780000000,
        "problem": 0x7E5790000000,
        "find_options": 0x7E57A0000000,
        "solution": 0x7E57B0000000,
    }

    #: Destroyed handles remembered for "was destroyed" errors (older ones read as "unknown
    #: handle", still an error): bounded, so a long lifetime loop measures hipdnn, not this log.
    DEAD_KEPT = 1 << 12

    def __init__(self) -> None:
        self._live: dict[int, _Entry] = {}
        self._dead: dict[int, str] = {}
        self._counters = {kind: itertools.count(1) for kind in self._BASES}

    def new(self, kind: str, obj: Any) -> int:
        """Register ``obj`` and return its new handle."""
        handle = self._BASES[kind] + 0x40 * next(self._counters[kind])
        self._live[handle] = _Entry(kind, obj)
        return handle

    def get(self, kind: str, handle: Any, name: str, cls: type[T]) -> T:
        """The live object of ``kind`` behind ``handle``; BadParm if NULL, destroyed or foreign."""
        key = addr(handle)
        require(key, f"{name}: NULL {kind} handle")
        entry = self._live.get(key)
        if entry is None:
            if key in self._dead:
                raise Status(BAD_PARM, f"{name}: {self._dead[key]} handle {key:#x} was destroyed")
            raise Status(BAD_PARM, f"{name}: unknown {kind} handle {key:#x}")
        require(entry.kind == kind, f"{name}: handle {key:#x} is a {entry.kind}, not a {kind}")
        assert isinstance(entry.obj, cls)
        return entry.obj

    def destroy(self, kind: str, handle: Any, name: str) -> Any:
        """Forget a live handle (BadParm when not live) and return its object."""
        obj = self.get(kind, handle, name, object)
        key = addr(handle)
        del self._live[key]
        self._dead[key] = kind
        if len(self._dead) > self.DEAD_KEPT:  # oldest first: dicts keep insertion order
            del self._dead[next(iter(self._dead))]
        return obj

    def live(self, kind: str | None = None) -> dict[int, Any]:
        """Live handles (optionally of one kind) -> objects; tests use it for leak checks."""
        return {h: e.obj for h, e in self._live.items() if kind is None or e.kind == kind}
