"""Parse the real ``miopen.h`` with libclang into a comparable model (functions, enums, structs).

Types are reduced to a ``Shape``: what the C ABI cares about (size, signedness, int vs float,
pointer depth, pointee record tag and field layout, function-pointer signatures). The same
reduction of a ctypes type lives in ctypes_shapes.py; conformance means equal shapes.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import clang.cindex as ci

__all__ = [
    "HeaderModel",
    "Shape",
    "beta_line_ranges",
    "exported_by_text",
    "parse_header",
    "record_layout",
]

# miopen.h relies on <hip/hip_runtime_api.h> for hipStream_t and <stdint.h>; config.h includes
# <hip/hip_version.h> for a boost workaround that declares nothing.
_HIP_STUBS = {
    "hip_runtime_api.h": "#include <stdint.h>\ntypedef struct ihipStream_t* hipStream_t;\n",
    "hip_version.h": "",
}


@dataclass(frozen=True)
class Shape:
    """ABI-relevant description of one C (or ctypes) type.

    kind: "void", "int", "float", "bool", "ptr", "record", "fnptr".
    For "ptr": ``depth`` pointers to ``target`` (a non-pointer Shape). For "record": ``tag`` and
    ``layout`` ((name, offset, size) per field, anonymous members flattened). For "fnptr":
    ``signature`` = (restype, *argtypes).
    """

    kind: str
    size: int = 0
    signed: bool | None = None
    depth: int = 0
    target: Shape | None = None
    tag: str = ""
    layout: tuple[tuple[str, int, int], ...] = ()
    signature: tuple[Shape, ...] = ()

    def describe(self) -> str:
        """Short human form, e.g. ``uint32``, ``float*``, ``struct miopenHandle*``."""
        if self.kind == "ptr":
            assert self.target is not None
            return self.target.describe() + "*" * self.depth
        if self.kind == "int":
            return f"{'int' if self.signed else 'uint'}{self.size * 8}"
        if self.kind == "float":
            return f"float{self.size * 8}"
        if self.kind == "record":
            return f"struct {self.tag or '<anonymous>'}"
        if self.kind == "fnptr":
            return f"fn({', '.join(s.describe() for s in self.signature[1:])}) -> {self.signature[0].describe()}"
        return self.kind


@dataclass
class HeaderModel:
    """What one ``miopen.h`` declares."""

    path: Path
    functions: dict[str, tuple[Shape, tuple[Shape, ...], tuple[str, ...]]] = field(default_factory=dict)
    result_spellings: dict[str, str] = field(default_factory=dict)  # function -> declared result type
    #: function -> each parameter's declared type, as written (``const miopenTensorDescriptor_t``)
    arg_spellings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    enum_constants: dict[str, int] = field(default_factory=dict)
    enums: dict[str, dict[str, int]] = field(default_factory=dict)  # typedef/tag name -> members
    records: dict[str, Shape] = field(default_factory=dict)  # typedef/tag name -> record Shape
    diagnostics: list[str] = field(default_factory=list)
    #: functions declared inside an ``#ifdef MIOPEN_BETA_API`` block
    beta_functions: set[str] = field(default_factory=set)
    #: names of ``MIOPEN_EXPORT`` functions found by a plain text scan (comments stripped): an
    #: independent count, so a declaration libclang skipped cannot shrink the denominator
    exported_by_text: set[str] = field(default_factory=set)


_INT_KINDS = {
    ci.TypeKind.CHAR_S: True, ci.TypeKind.SCHAR: True, ci.TypeKind.CHAR_U: False,
    ci.TypeKind.UCHAR: False, ci.TypeKind.SHORT: True, ci.TypeKind.USHORT: False,
    ci.TypeKind.INT: True, ci.TypeKind.UINT: False, ci.TypeKind.LONG: True,
    ci.TypeKind.ULONG: False, ci.TypeKind.LONGLONG: True, ci.TypeKind.ULONGLONG: False,
}
_FLOAT_KINDS = {ci.TypeKind.FLOAT, ci.TypeKind.DOUBLE, ci.TypeKind.LONGDOUBLE, ci.TypeKind.HALF}


def record_layout(decl: ci.Cursor, outer: ci.Cursor | None = None) -> tuple[tuple[str, int, int], ...]:
    """(name, byte offset, byte size) of every field, anonymous struct/union members flattened.

    Offsets are taken from the outermost record (libclang resolves names inside anonymous
    members there), so flattened fields carry their real offsets.
    """
    outer = outer or decl
    out: list[tuple[str, int, int]] = []
    for f in decl.get_children():
        if f.kind in (ci.CursorKind.STRUCT_DECL, ci.CursorKind.UNION_DECL) and f.is_anonymous():
            out.extend(record_layout(f, outer))
        elif f.kind == ci.CursorKind.FIELD_DECL and f.spelling:
            offset = outer.type.get_offset(f.spelling)
            if offset < 0:
                raise ValueError(f"no offset for {outer.spelling}.{f.spelling}")
            out.append((f.spelling, offset // 8, f.type.get_canonical().get_size()))
    return tuple(out)


def shape_of(t: ci.Type) -> Shape:
    """Reduce a clang type to a Shape (canonical, so typedefs and enums resolve)."""
    t = t.get_canonical()
    k = t.kind
    if k == ci.TypeKind.VOID:
        return Shape("void")
    if k == ci.TypeKind.BOOL:
        return Shape("bool", 1, False)
    if k in _INT_KINDS:
        return Shape("int", t.get_size(), _INT_KINDS[k])
    if k in _FLOAT_KINDS:
        return Shape("float", t.get_size())
    if k == ci.TypeKind.ENUM:
        return shape_of(t.get_declaration().enum_type)
    if k in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY):
        return _pointer_to(shape_of(t.element_type))
    if k == ci.TypeKind.POINTER:
        pointee = t.get_pointee().get_canonical()
        if pointee.kind in (ci.TypeKind.FUNCTIONPROTO, ci.TypeKind.FUNCTIONNOPROTO):
            args = tuple(shape_of(a) for a in pointee.argument_types()) if pointee.kind == ci.TypeKind.FUNCTIONPROTO else ()
            return Shape("fnptr", 8, signature=(shape_of(pointee.get_result()), *args))
        return _pointer_to(shape_of(pointee))
    if k == ci.TypeKind.RECORD:
        decl = t.get_declaration()
        layout = record_layout(decl) if t.get_size() > 0 else ()
        tag = decl.spelling if decl.spelling.isidentifier() else ""
        # An opaque handle's struct is empty (size 1 in C++, 0 in ctypes): compare by tag only.
        return Shape("record", t.get_size() if layout else 0, tag=tag, layout=layout)
    raise ValueError(f"unhandled C type {t.spelling!r} ({k})")


def _pointer_to(inner: Shape) -> Shape:
    if inner.kind == "ptr":
        return Shape("ptr", 8, depth=inner.depth + 1, target=inner.target)
    return Shape("ptr", 8, depth=1, target=inner)


def _resource_include() -> list[str]:
    """``-isystem`` for stddef.h/stdbool.h: the machine's gcc include dir (libclang wheels lack it)."""
    try:
        out = subprocess.run(["gcc", "-print-file-name=include"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return []
    path = out.stdout.strip()
    return ["-isystem", path] if Path(path, "stddef.h").is_file() else []


def _enum_members(decl: ci.Cursor) -> dict[str, int]:
    return {e.spelling: int(e.enum_value) for e in decl.get_children()
            if e.kind == ci.CursorKind.ENUM_CONSTANT_DECL}


_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_EXPORTED = re.compile(r"\bMIOPEN_EXPORT\s+[^;{(]*?\b(\w+)\s*\(")


def exported_by_text(text: str) -> set[str]:
    """Every function name following ``MIOPEN_EXPORT`` once comments are stripped."""
    return set(_EXPORTED.findall(_COMMENTS.sub(" ", text)))


def beta_line_ranges(text: str) -> list[tuple[int, int]]:
    """(first, last) line of every ``#ifdef MIOPEN_BETA_API`` branch (up to its #else/#endif)."""
    stack: list[tuple[int, bool]] = []
    ranges: list[tuple[int, int]] = []
    for number, line in enumerate(text.splitlines(), 1):
        directive = line.strip()
        if directive.startswith("#if"):
            stack.append((number, "MIOPEN_BETA_API" in directive))
        elif directive.startswith(("#else", "#elif")) and stack:
            start, beta = stack[-1]
            if beta:
                ranges.append((start, number))
            stack[-1] = (number, False)
        elif directive.startswith("#endif") and stack:
            start, beta = stack.pop()
            if beta:
                ranges.append((start, number))
    return ranges


def _declarations(cursor: ci.Cursor) -> list[ci.Cursor]:
    out: list[ci.Cursor] = []
    for cur in cursor.get_children():
        if cur.kind == ci.CursorKind.LINKAGE_SPEC:
            out.extend(_declarations(cur))
        else:
            out.append(cur)
    return out


@cache
def parse_header(header: Path) -> HeaderModel:
    """Parse ``<include>/miopen/miopen.h`` with MIOPEN_BETA_API (the Debian library exports the
    beta API: Find 2.0, fusion). As C++ (inside its ``extern "C"``): the header uses default
    arguments and ``nullptr``, which C rejects. Raises RuntimeError on any parse error."""
    include = header.parent.parent
    model = HeaderModel(header)
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "hip").mkdir()
        for name, text in _HIP_STUBS.items():
            Path(tmp, "hip", name).write_text(text)
        args = ["-x", "c++", "-std=c++17", "-DMIOPEN_BETA_API=1", "-I", str(include), "-I", tmp, *_resource_include()]
        tu = ci.Index.create().parse(str(header), args=args)
    errors = [str(d) for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        raise RuntimeError(f"parsing {header} failed: {errors[:5]}")
    model.diagnostics = [str(d) for d in tu.diagnostics]
    text = header.read_text()
    model.exported_by_text = exported_by_text(text)
    beta_ranges = beta_line_ranges(text)
    for cur in _declarations(tu.cursor):
        if cur.location.file is None or Path(cur.location.file.name).name != "miopen.h":
            continue
        if cur.kind == ci.CursorKind.FUNCTION_DECL:
            argcs = list(cur.get_arguments())
            model.result_spellings[cur.spelling] = cur.result_type.spelling
            model.arg_spellings[cur.spelling] = tuple(a.type.spelling for a in argcs)
            if any(first <= cur.location.line <= last for first, last in beta_ranges):
                model.beta_functions.add(cur.spelling)
            model.functions[cur.spelling] = (
                shape_of(cur.result_type),
                tuple(shape_of(a.type) for a in argcs),
                tuple(a.spelling for a in argcs),
            )
        elif cur.kind == ci.CursorKind.ENUM_DECL:
            members = _enum_members(cur)
            model.enum_constants.update(members)
            if cur.spelling.isidentifier():
                model.enums[cur.spelling] = members
        elif cur.kind == ci.CursorKind.TYPEDEF_DECL:
            under = cur.underlying_typedef_type.get_canonical()
            if under.kind == ci.TypeKind.ENUM:
                model.enums[cur.spelling] = _enum_members(under.get_declaration())
            elif under.kind == ci.TypeKind.RECORD and under.get_size() > 0:
                model.records[cur.spelling] = shape_of(under)
        elif cur.kind in (ci.CursorKind.STRUCT_DECL, ci.CursorKind.UNION_DECL) and cur.spelling.isidentifier():
            if cur.type.get_size() > 0:
                model.records[cur.spelling] = shape_of(cur.type)
    return model
