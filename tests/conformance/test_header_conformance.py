"""Every bound function, enum and struct against the real miopen.h and libMIOpen of 3.4 and 3.5."""

from __future__ import annotations

import ctypes
import enum
import inspect
import re
from typing import Any

import pytest

pytest.importorskip("clang.cindex", reason="libclang is not installed (pip install '.[test]')")

from conformance_check import (
    COVERAGE,
    check_enum,
    check_prototype,
    check_struct,
    exported_symbols,
)

import miopen_ctypes
from miopen_ctypes import enums as mio_enums
from miopen_ctypes import types as mio_types

VERSIONS = ("6.4.3", "7.2.4")


def _claimed(api: tuple[int, int, int]) -> list[Any]:
    return [p for p in miopen_ctypes.PROTOTYPES.values() if tuple(p.since) <= api]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_prototype_matches_header(version: str, headers: dict[str, Any], api_versions: dict[str, Any]) -> None:
    model = headers[version]
    claimed = _claimed(api_versions[version])
    problems = [msg for proto in claimed for msg in check_prototype(proto, model)]
    assert not problems, f"{len(problems)} mismatches against MIOpen {version}:\n" + "\n".join(problems)


@pytest.mark.parametrize("version", VERSIONS)
def test_every_exported_function_is_bound(
    version: str, headers: dict[str, Any], sysroots: dict[str, Any], api_versions: dict[str, Any]
) -> None:
    """The whole API: every ``MIOPEN_EXPORT`` function of the header (beta blocks included) is in
    PROTOTYPES with a ``since`` this version meets, and the library exports it."""
    model = headers[version]
    assert model.exported_by_text == set(model.functions), (
        "the text scan and libclang disagree on the exported functions: "
        f"{sorted(model.exported_by_text ^ set(model.functions))}")
    claimed = {p.name for p in _claimed(api_versions[version])}
    unbound = sorted(set(model.functions) - claimed)
    assert not unbound, f"{len(unbound)} functions of MIOpen {version}'s header are not bound: {unbound}"
    assert not sorted(claimed - set(model.functions)), "bound but not declared"
    assert not sorted(claimed - exported_symbols(sysroots[version].libmiopen))
    COVERAGE[version] = (len(claimed & set(model.functions)), len(model.functions))


@pytest.mark.parametrize("version", VERSIONS)
def test_beta_flag_matches_header(version: str, headers: dict[str, Any], api_versions: dict[str, Any]) -> None:
    """``Prototype.beta`` is set exactly for the functions declared under MIOPEN_BETA_API."""
    model = headers[version]
    wrong = sorted(f"{p.name}: beta={p.beta}, header says {p.name in model.beta_functions}"
                   for p in _claimed(api_versions[version])
                   if p.beta != (p.name in model.beta_functions))
    assert not wrong, "\n".join(wrong)
    assert model.beta_functions, "the header scan found no beta block"


@pytest.mark.parametrize("version", VERSIONS)
def test_returns_status_flag_matches_header(version: str, headers: dict[str, Any], api_versions: dict[str, Any]) -> None:
    model = headers[version]
    wrong = [
        f"{p.name}: header returns {model.result_spellings[p.name]!r}, returns_status={p.returns_status}"
        for p in _claimed(api_versions[version])
        if p.name in model.result_spellings
        and (model.result_spellings[p.name] == "miopenStatus_t") != bool(p.returns_status)
    ]
    assert not wrong, "\n".join(wrong)


def test_since_is_exact(headers: dict[str, Any], api_versions: dict[str, Any]) -> None:
    """A function claimed only from 3.5 must not be in the 3.4 header (capabilities rely on it)."""
    old = api_versions["6.4.3"]
    early = sorted(p.name for p in miopen_ctypes.PROTOTYPES.values()
                   if tuple(p.since) > old and p.name in headers["6.4.3"].functions)
    assert not early, f"declared in the 3.4 header but bound with since > {old}: {early}"
    newest = max(api_versions.values())
    unreachable = sorted(p.name for p in miopen_ctypes.PROTOTYPES.values() if tuple(p.since) > newest)
    assert not unreachable, f"claimed by no tested version: {unreachable}"


@pytest.mark.parametrize("version", VERSIONS)
def test_library_exports_every_bound_symbol(version: str, sysroots: dict[str, Any], api_versions: dict[str, Any]) -> None:
    exported = exported_symbols(sysroots[version].libmiopen)
    claimed = {p.name for p in _claimed(api_versions[version])}
    assert not sorted(claimed - exported), f"libMIOpen {version} lacks {sorted(claimed - exported)}"
    later = {p.name for p in miopen_ctypes.PROTOTYPES.values()} - claimed
    assert not sorted(later & exported), f"libMIOpen {version} already exports {sorted(later & exported)}"


def _enum_classes() -> list[type[enum.IntEnum]]:
    return [c for _, c in inspect.getmembers(mio_enums, inspect.isclass)
            if issubclass(c, enum.IntEnum) and c is not enum.IntEnum and c.__module__ == mio_enums.__name__]


def test_enums_have_header_values(headers: dict[str, Any]) -> None:
    classes = _enum_classes()
    assert classes, "miopen_ctypes.enums defines no IntEnum"
    problems = [msg for cls in classes for msg in check_enum(cls, headers)]
    assert not problems, "\n".join(problems)
    missing = sorted(c.__name__ for c in classes if not any(c.__name__ in m.enums for m in headers.values()))
    assert not missing, f"enum classes not named after a header enum: {missing}"
    declared = {name for m in headers.values() for name in m.enums if name.startswith("miopen")}
    unbound = sorted(declared - {c.__name__ for c in classes})
    assert not unbound, f"header enums without an IntEnum: {unbound}"
    assert set(mio_enums.ENUMS) == {c.__name__ for c in classes}, "ENUMS lists another set"


def _struct_classes() -> list[type[ctypes.Structure]]:
    return [c for _, c in inspect.getmembers(mio_types, inspect.isclass)
            if issubclass(c, ctypes.Structure) and c.__module__ == mio_types.__name__
            and getattr(c, "_fields_", None) and not c.__name__.startswith("_")]


@pytest.mark.parametrize("version", VERSIONS)
def test_structs_have_header_layout(version: str, headers: dict[str, Any]) -> None:
    classes = _struct_classes()
    assert classes, "miopen_ctypes.types defines no struct"
    problems = [msg for cls in classes for msg in check_struct(cls, headers[version])]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("version", VERSIONS)
def test_handle_kinds_are_header_objects(version: str, headers: dict[str, Any]) -> None:
    model = headers[version]
    tags = [h._type_.__name__ for h in mio_types.HANDLE_TYPES]
    assert len(set(tags)) == len(tags), f"two handle types share a struct: {tags}"
    unknown = [t for t in tags if t not in model.records]
    assert not unknown, f"handle structs not declared by MIOpen {version}: {unknown}"
    text = model.path.read_text()
    objects = set(re.findall(r"^MIOPEN_DECLARE_OBJECT\((\w+)\)", text, re.M))
    assert objects, "no MIOPEN_DECLARE_OBJECT found"
    assert sorted(objects - set(tags)) == [], "header objects without a handle type"
