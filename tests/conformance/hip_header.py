"""Parse the real ``hip/hip_runtime_api.h`` (HIP platform AMD) with libclang into a HeaderModel.

Same reduction as miopen_header.py (``shape_of`` / ``record_layout``), so conformance_check's
``check_prototype`` / ``check_struct`` / ``check_enum`` apply unchanged. Parsed as C: ctypes
calls the C-linkage entry points, and C mode hides the header's C++-only overloads and templates.
Object-like macros whose body is one identifier (``#define hipGetDeviceProperties
hipGetDevicePropertiesR0600``, ``#define hipDeviceProp_t hipDeviceProp_tR0600``) are recorded in
``macro_aliases``; ``tag_aliases`` maps every typedef or macro name of a struct to its C tag
(``hipUUID`` -> ``hipUUID_t``), so a ctypes class named after the typedef is the same struct.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

import clang.cindex as ci
from miopen_header import (
    HeaderModel,
    Shape,
    _declarations,
    _enum_members,
    _resource_include,
    shape_of,
)

__all__ = ["HipHeaderModel", "canonical_tags", "parse_hip_header"]

_IDENT = re.compile(r"[A-Za-z_]\w*\Z")


@dataclass
class HipHeaderModel(HeaderModel):
    """A HeaderModel of the HIP runtime API plus the name aliases the header defines."""

    macro_aliases: dict[str, str] = field(default_factory=dict)  # macro -> identifier it expands to
    tag_aliases: dict[str, str] = field(default_factory=dict)  # typedef/macro name -> struct tag
    #: declarations the Shape reduction cannot model (e.g. unions of named nested structs), with
    #: the reason; a bound name found here is reported, never silently skipped.
    unmodelled: dict[str, str] = field(default_factory=dict)

    def resolve(self, name: str) -> str:
        """Follow single-identifier macros: ``hipGetDeviceProperties`` -> ``...R0600``."""
        seen = {name}
        while name in self.macro_aliases:
            name = self.macro_aliases[name]
            if name in seen:
                break
            seen.add(name)
        return name


def canonical_tags(shape: Shape, tag_aliases: dict[str, str]) -> Shape:
    """``shape`` with every record tag replaced by the header's C tag for that name."""
    if shape.kind == "record":
        return replace(shape, tag=tag_aliases.get(shape.tag, shape.tag))
    if shape.kind == "ptr" and shape.target is not None:
        return replace(shape, target=canonical_tags(shape.target, tag_aliases))
    if shape.kind == "fnptr":
        return replace(shape, signature=tuple(canonical_tags(s, tag_aliases) for s in shape.signature))
    return shape


def _macro_alias(cur: ci.Cursor) -> tuple[str, str] | None:
    tokens = [t.spelling for t in cur.get_tokens()]
    if len(tokens) == 2 and tokens[0] == cur.spelling and _IDENT.match(tokens[1]):
        return tokens[0], tokens[1]
    return None


def _add_record(model: HipHeaderModel, name: str, t: ci.Type) -> None:
    try:
        model.records[name] = shape_of(t)
    except ValueError as exc:
        model.unmodelled[name] = str(exc)


@cache
def parse_hip_header(include: Path) -> HipHeaderModel:
    """Model of ``<include>/hip/hip_runtime_api.h`` and the HIP headers it includes, parsed as C
    with ``__HIP_PLATFORM_AMD__``. Raises RuntimeError on any parse error."""
    header = include / "hip" / "hip_runtime_api.h"
    args = ["-x", "c", "-std=c11", "-D__HIP_PLATFORM_AMD__=1", "-I", str(include), *_resource_include()]
    tu = ci.Index.create().parse(
        str(header), args=args, options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
    errors = [str(d) for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        raise RuntimeError(f"parsing {header} failed: {errors[:5]}")
    model = HipHeaderModel(header, diagnostics=[str(d) for d in tu.diagnostics])
    hip_dir = (include / "hip").resolve()
    for cur in _declarations(tu.cursor):
        loc = cur.location.file
        if loc is None or hip_dir not in Path(loc.name).resolve().parents:
            continue
        if cur.kind == ci.CursorKind.MACRO_DEFINITION:
            alias = _macro_alias(cur)
            if alias:
                model.macro_aliases[alias[0]] = alias[1]
        elif cur.kind == ci.CursorKind.FUNCTION_DECL:
            argcs = list(cur.get_arguments())
            model.result_spellings[cur.spelling] = cur.result_type.spelling
            try:
                model.functions[cur.spelling] = (
                    shape_of(cur.result_type), tuple(shape_of(a.type) for a in argcs),
                    tuple(a.spelling for a in argcs))
            except ValueError as exc:
                model.unmodelled[cur.spelling] = str(exc)
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
                _add_record(model, cur.spelling, under)
                model.tag_aliases[cur.spelling] = under.get_declaration().spelling
        elif cur.kind in (ci.CursorKind.STRUCT_DECL, ci.CursorKind.UNION_DECL) and cur.spelling.isidentifier():
            if cur.type.get_size() > 0:
                _add_record(model, cur.spelling, cur.type)
    for macro in model.macro_aliases:  # e.g. hipDeviceProp_t names struct hipDeviceProp_tR0600
        target = model.resolve(macro)
        if target in model.records:
            model.records.setdefault(macro, model.records[target])
            model.tag_aliases.setdefault(macro, model.tag_aliases.get(target, target))
        if target in model.unmodelled:
            model.unmodelled.setdefault(macro, model.unmodelled[target])
        if target in model.enums:
            model.enums.setdefault(macro, model.enums[target])
    return model
