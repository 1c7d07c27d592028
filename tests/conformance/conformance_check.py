"""Compare ctypes declarations with a parsed ``miopen.h`` (see miopen_header.py).

Every checker returns a list of human-readable problems; an empty list means conformant.
Rules (equal Shapes, plus one documented allowance):
- integers: same size and signedness (enums compare as their underlying integer type);
- floats: same size; ``bool`` only as ``c_bool``; ``void`` return only as ``None``;
- pointers: same depth, same pointee; a pointee record is matched by tag (opaque handles, so a
  tensor descriptor is never accepted for a convolution descriptor) and, when complete, by field
  offsets and sizes; function pointers by their full signature;
- allowance: a pointer to a *foreign* opaque struct (tag not starting with ``miopen``, i.e.
  ``hipStream_t``) may be bound as ``c_void_p`` (streams arrive as integers from PyTorch/HIP).
"""

from __future__ import annotations

import ctypes
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from miopen_header import HeaderModel, Shape

__all__ = [
    "COVERAGE",
    "check_enum",
    "check_prototype",
    "check_struct",
    "compare",
    "ctypes_shape",
    "exported_symbols",
    "missing_exports",
]

_CODES: dict[str, tuple[str, bool | None]] = {
    "b": ("int", True), "B": ("int", False), "h": ("int", True), "H": ("int", False),
    "i": ("int", True), "I": ("int", False), "l": ("int", True), "L": ("int", False),
    "q": ("int", True), "Q": ("int", False), "c": ("int", True), "f": ("float", None),
    "d": ("float", None), "g": ("float", None), "?": ("bool", False),
}
_CHAR = Shape("int", 1, True)
_FUNC_PTR: type = ctypes.CFUNCTYPE(None).__mro__[1]  # _ctypes.CFuncPtr, base of every CFUNCTYPE

#: Per-session record of what each header check covered (printed at the end): a count of bound
#: functions, or (bound, declared by the header) where the whole header must be bound.
COVERAGE: dict[str, int | tuple[int, int]] = {}


def _layout(cls: Any, base: int = 0) -> tuple[tuple[str, int, int], ...]:
    out: list[tuple[str, int, int]] = []
    anonymous = set(getattr(cls, "_anonymous_", ()))
    for entry in getattr(cls, "_fields_", ()):
        name, ftype = entry[0], entry[1]
        desc = getattr(cls, name)
        if name in anonymous:
            out.extend(_layout(ftype, base + desc.offset))
        else:
            out.append((name, base + desc.offset, desc.size))
    return tuple(out)


def ctypes_shape(t: Any) -> Shape:
    """Reduce a ctypes type (or None for void) to the Shape the header parser produces."""
    if t is None:
        return Shape("void")
    if isinstance(t, type) and issubclass(t, _FUNC_PTR):  # CFUNCTYPE(...)
        sig: Any = t
        return Shape("fnptr", 8, signature=(ctypes_shape(sig._restype_), *(ctypes_shape(a) for a in sig._argtypes_)))
    if isinstance(t, type) and issubclass(t, ctypes._Pointer):
        inner = ctypes_shape(t._type_)
        if inner.kind == "ptr":
            return Shape("ptr", 8, depth=inner.depth + 1, target=inner.target)
        return Shape("ptr", 8, depth=1, target=inner)
    if isinstance(t, type) and issubclass(t, (ctypes.Structure, ctypes.Union)):
        layout = _layout(t)
        return Shape("record", ctypes.sizeof(t) if layout else 0, tag=t.__name__, layout=layout)
    if isinstance(t, type) and issubclass(t, ctypes.Array):
        raise ValueError(f"array type {t.__name__} used as an argument; C arrays decay to pointers")
    code = getattr(t, "_type_", None)
    if code == "P":
        return Shape("ptr", 8, depth=1, target=Shape("void"))
    if code == "z":
        return Shape("ptr", 8, depth=1, target=_CHAR)
    if isinstance(code, str) and code in _CODES:
        kind, signed = _CODES[code]
        return Shape(kind, ctypes.sizeof(t), signed)
    raise ValueError(f"unsupported ctypes type {t!r}")


def compare(expected: Shape, actual: Shape, where: str) -> list[str]:
    """Problems making ``actual`` (ctypes) not ABI-equivalent to ``expected`` (header)."""
    bad = [f"{where}: header has {expected.describe()}, binding has {actual.describe()}"]
    if expected.kind == "ptr" and actual.kind == "ptr":
        assert expected.target is not None and actual.target is not None
        foreign = expected.target.kind == "record" and not expected.target.layout \
            and not expected.target.tag.startswith("miopen")
        if foreign and actual.target.kind == "void" and actual.depth == expected.depth:
            return []
        if expected.depth != actual.depth:
            return [f"{where}: pointer depth {expected.depth} in the header "
                    f"({expected.describe()}), {actual.depth} in the binding ({actual.describe()})"]
        return compare(expected.target, actual.target, where + " (pointee)")
    if expected.kind != actual.kind:
        return bad
    if expected.kind in ("int", "float", "bool"):
        return [] if (expected.size, expected.signed) == (actual.size, actual.signed) else bad
    if expected.kind == "record":
        if expected.tag != actual.tag:
            return [f"{where}: header has struct {expected.tag!r}, binding has struct {actual.tag!r} "
                    "(wrong handle/struct kind)"]
        if expected.layout and (expected.size, expected.layout) != (actual.size, actual.layout):
            return [f"{where}: struct {expected.tag} layout differs: header size {expected.size} "
                    f"{list(expected.layout)}, binding size {actual.size} {list(actual.layout)}"]
        return []
    if expected.kind == "fnptr":
        if len(expected.signature) != len(actual.signature):
            return bad
        out: list[str] = []
        for i, (e, a) in enumerate(zip(expected.signature, actual.signature, strict=True)):
            out += compare(e, a, f"{where} [{'result' if i == 0 else f'arg {i - 1}'}]")
        return out
    return []


def check_prototype(proto: Any, model: HeaderModel) -> list[str]:
    """Problems of one Prototype against one header: declared, arity, names, every type."""
    decl = model.functions.get(proto.name)
    if decl is None:
        return [f"{proto.name}: not declared in {model.path}"]
    restype, argtypes, argnames = decl
    problems: list[str] = []
    if len(proto.argtypes) != len(argtypes):
        return [f"{proto.name}: {len(argtypes)} arguments in the header {list(argnames)}, "
                f"{len(proto.argtypes)} in the binding {list(proto.argnames)}"]
    try:
        problems += compare(restype, ctypes_shape(proto.restype), f"{proto.name} return type")
        for i, (exp, act) in enumerate(zip(argtypes, proto.argtypes, strict=True)):
            problems += compare(exp, ctypes_shape(act), f"{proto.name} arg {i} ({argnames[i]})")
    except ValueError as exc:
        problems.append(f"{proto.name}: {exc}")
    if tuple(proto.argnames) != tuple(argnames):
        problems.append(f"{proto.name}: argument names {list(proto.argnames)} != header {list(argnames)}")
    return problems


def check_enum(cls: Any, models: Mapping[str, HeaderModel]) -> list[str]:
    """Every member (aliases included) of IntEnum ``cls`` has the header's value in every version
    declaring it, belongs to the header enum of the same name there, and some version declares it."""
    problems: list[str] = []
    for name, member in cls.__members__.items():
        seen = False
        for version, model in models.items():
            value = model.enum_constants.get(name)
            if value is None:
                continue
            seen = True
            if value != int(member):
                problems.append(f"{cls.__name__}.{name} = {int(member)}, header {version} says {value}")
            owner = model.enums.get(cls.__name__)
            if owner is not None and name not in owner:
                problems.append(f"{cls.__name__}.{name}: header {version} declares it in another enum")
        if not seen:
            problems.append(f"{cls.__name__}.{name}: no such enumerator in any header ({sorted(models)})")
    return problems


def check_struct(cls: Any, model: HeaderModel) -> list[str]:
    """Size and field (name, offset, size) list of ctypes struct ``cls`` equal the header's."""
    record = model.records.get(cls.__name__)
    if record is None:
        return [f"struct {cls.__name__}: not in {model.path}"]
    return compare(record, ctypes_shape(cls), f"struct {cls.__name__}")


def exported_symbols(library: Path) -> set[str]:
    """Defined dynamic symbols of a shared library (``nm -D --defined-only``)."""
    out = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True, text=True, check=True)
    return {line.split()[-1].split("@")[0] for line in out.stdout.splitlines() if line.strip()}


def missing_exports(names: Iterable[str], library: Path) -> list[str]:
    """Names from ``names`` that ``library`` does not export."""
    exported = exported_symbols(library)
    return sorted(n for n in names if n not in exported)
