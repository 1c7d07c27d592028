"""miopen_ctypes.hip against the real hip_runtime_api.h and libamdhip64 of ROCm 6.4.3 and 7.2.4.

Every prototype of ``HIP_PROTOTYPES`` (declared, arity, argument names, each type), every enum
member and struct layout of ``miopen_ctypes.hip_types``, the macros the binding resolves by hand
(``hipGetDeviceProperties``, ``hipDeviceProp_t``), the ``hipError_t`` codes the binding and the
emulated device use, and the exports of the real runtime library. Negative tests prove the
checks catch a wrong argument type and a wrong field offset.
"""

from __future__ import annotations

import ctypes
import dataclasses
import enum
import importlib
import inspect
import re
import shutil
import sys
from collections.abc import Callable
from ctypes import POINTER, c_int, c_size_t, c_uint, c_void_p
from pathlib import Path
from typing import Any, NoReturn

import pytest

pytest.importorskip("clang.cindex", reason="libclang is not installed (pip install '.[test]')")

from conformance_check import (
    COVERAGE,
    check_enum,
    check_prototype,
    compare,
    ctypes_shape,
    exported_symbols,
)
from hip_header import HipHeaderModel, canonical_tags, parse_hip_header

from miopen_ctypes import hip, hip_types

VERSIONS = ("6.4.3", "7.2.4")
#: Bound functions whose ``hipError_t`` result is data, not a status to raise on.
STATUS_AS_DATA = {"hipGetLastError"}


@pytest.fixture(scope="session")
def hip_headers(sysroots: dict[str, Any], require_or_skip: Callable[[str, str], NoReturn]) -> dict[str, HipHeaderModel]:
    """{version: HipHeaderModel} of each sysroot's hip/hip_runtime_api.h."""
    missing = [v for v, s in sysroots.items() if not s.hip_header.is_file()]
    if missing:
        require_or_skip("HIPDNN_REQUIRE_CONFORMANCE",
                        f"HIP headers of {missing} missing; rerun `python tools/miopen_sysroot.py`")
    return {v: parse_hip_header(s.hip_include) for v, s in sysroots.items()}


def _struct_classes() -> list[type[ctypes.Structure]]:
    return [c for _, c in inspect.getmembers(hip_types, inspect.isclass)
            if issubclass(c, ctypes.Structure) and c.__module__ == hip_types.__name__ and c._fields_]


def _enum_classes() -> list[type[enum.IntEnum]]:
    return [c for _, c in inspect.getmembers(hip_types, inspect.isclass)
            if issubclass(c, enum.IntEnum) and c.__module__ == hip_types.__name__]


def struct_problems(cls: Any, model: HipHeaderModel) -> list[str]:
    """Size and every field (name, offset, size) of ``cls`` against the header struct of its name."""
    name = cls.__name__
    if name in model.unmodelled:
        return [f"struct {name}: header declaration not modelled ({model.unmodelled[name]})"]
    record = model.records.get(name)
    if record is None:
        return [f"struct {name}: not in {model.path}"]
    return compare(record, canonical_tags(ctypes_shape(cls), model.tag_aliases), f"struct {name}")


def prototype_problems(proto: Any, model: HipHeaderModel) -> list[str]:
    """check_prototype, plus: a bound name must be a real declaration, not a macro."""
    if proto.name in model.macro_aliases:
        return [f"{proto.name} is a macro for {model.resolve(proto.name)}; bind that symbol"]
    if proto.name in model.unmodelled:
        return [f"{proto.name}: header declaration not modelled ({model.unmodelled[proto.name]})"]
    return check_prototype(proto, model)


# ---------------------------------------------------------------- the binding against the headers
@pytest.mark.parametrize("version", VERSIONS)
def test_every_hip_prototype_matches_header(version: str, hip_headers: dict[str, HipHeaderModel]) -> None:
    model = hip_headers[version]
    problems = [msg for p in hip.HIP_PROTOTYPES.values() for msg in prototype_problems(p, model)]
    assert not problems, f"{len(problems)} mismatches against HIP {version}:\n" + "\n".join(problems)
    assert len(hip.HIP_PROTOTYPES) >= 33
    COVERAGE[f"HIP {version}"] = len(hip.HIP_PROTOTYPES)


@pytest.mark.parametrize("version", VERSIONS)
def test_hip_status_flag_matches_header(version: str, hip_headers: dict[str, HipHeaderModel]) -> None:
    model = hip_headers[version]
    wrong = [f"{p.name}: header returns {model.result_spellings[p.name]!r}, returns_status={p.returns_status}"
             for p in hip.HIP_PROTOTYPES.values()
             if (model.result_spellings[p.name] == "hipError_t") != (p.returns_status or p.name in STATUS_AS_DATA)]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("version", VERSIONS)
def test_hip_structs_have_header_layout(version: str, hip_headers: dict[str, HipHeaderModel]) -> None:
    classes = _struct_classes()
    assert {"hipDeviceProp_tR0600", "hipPointerAttribute_t", "hipUUID"} <= {c.__name__ for c in classes}
    problems = [msg for cls in classes for msg in struct_problems(cls, hip_headers[version])]
    assert not problems, "\n".join(problems)
    props = hip_headers[version].records["hipDeviceProp_tR0600"]
    assert (props.size, len(props.layout)) == (ctypes.sizeof(hip_types.hipDeviceProp_t), len(hip_types.hipDeviceProp_t._fields_))


@pytest.mark.parametrize("version", VERSIONS)
def test_hip_macros_resolve_to_what_is_bound(version: str, hip_headers: dict[str, HipHeaderModel]) -> None:
    model = hip_headers[version]
    assert "hipGetDeviceProperties" not in model.functions
    assert model.resolve("hipGetDeviceProperties") == "hipGetDevicePropertiesR0600"
    assert "hipGetDevicePropertiesR0600" in hip.HIP_PROTOTYPES
    assert model.resolve("hipDeviceProp_t") == hip_types.hipDeviceProp_t.__name__
    assert hip_types.hipDeviceProp_t is hip.hipDeviceProp_t


def test_hip_enums_have_header_values(hip_headers: dict[str, HipHeaderModel]) -> None:
    classes = _enum_classes()
    assert {"hipMemcpyKind", "hipMemoryType", "hipDeviceAttribute_t"} <= {c.__name__ for c in classes}
    problems = [msg for cls in classes for msg in check_enum(cls, hip_headers)]
    assert not problems, "\n".join(problems)
    for version, model in hip_headers.items():
        missing = sorted(c.__name__ for c in classes if c.__name__ not in model.enums)
        assert not missing, f"HIP {version} declares no enum {missing}"


@pytest.mark.parametrize("version", VERSIONS)
def test_hip_error_codes_used_match_header(version: str, hip_headers: dict[str, HipHeaderModel]) -> None:
    """hipSuccess of the binding and every hipError_t code the emulated device returns."""
    errors = hip_headers[version].enums["hipError_t"]
    assert errors["hipSuccess"] == hip_types.hipSuccess
    runtime = importlib.import_module("emulated._runtime")
    wrong = {code: name for code, name in runtime.HIP_ERRORS.items() if errors.get(name) != code}
    assert not wrong, f"emulated HIP error codes not in HIP {version}'s hipError_t: {wrong}"
    assert errors["hipErrorNotReady"] == 600  # the emulated event's not-recorded status
    assert errors["hipErrorNoDevice"] == 100  # tests/unit/test_hip_binding.py's error text


@pytest.mark.parametrize("version", VERSIONS)
def test_runtime_exports_every_bound_symbol(version: str, sysroots: dict[str, Any]) -> None:
    library = sysroots[version].libamdhip64
    exported = exported_symbols(library)
    missing = sorted(set(hip.HIP_PROTOTYPES) - exported)
    assert not missing, f"{library.name} ({version}) lacks {missing}"
    assert library.name == f"libamdhip64.so.{version.split('.')[0]}"


@pytest.mark.parametrize("version", VERSIONS)
def test_headers_are_the_runtime_build(version: str, sysroots: dict[str, Any]) -> None:
    """hip_version.h names the libamdhip64 file's build, and HIP_VERSION packs the way
    HipLibrary decodes hipRuntimeGetVersion (major * 1e7 + minor * 1e5 + patch)."""
    text = (sysroots[version].hip_include / "hip" / "hip_version.h").read_text()
    parts = {k: int(v) for k, v in re.findall(r"#define HIP_VERSION_(MAJOR|MINOR|PATCH) (\d+)", text)}
    real = sysroots[version].libamdhip64.resolve().name  # e.g. libamdhip64.so.6.4.43484
    assert real == f"libamdhip64.so.{parts['MAJOR']}.{parts['MINOR']}.{parts['PATCH']}"
    assert (parts["MAJOR"], parts["MINOR"]) == tuple(int(x) for x in version.split(".")[:2])
    packed = re.search(r"#define HIP_VERSION\s+\((.*)\)", text)
    assert packed and packed.group(1).split() == [
        "HIP_VERSION_MAJOR", "*", "10000000", "+", "HIP_VERSION_MINOR", "*", "100000", "+", "HIP_VERSION_PATCH"]
    packed_value = parts["MAJOR"] * 10_000_000 + parts["MINOR"] * 100_000 + parts["PATCH"]

    def runtime_version(out: Any) -> int:
        out[0] = packed_value
        return 0

    cfuncs = hip.HipLibrary._wrap_functions({"hipRuntimeGetVersion": runtime_version}, hip.HIP_PROTOTYPES)
    assert hip.HipLibrary(cfuncs, None, None).version == (parts["MAJOR"], parts["MINOR"], parts["PATCH"])


def test_sysroot_refuses_hip_headers_of_another_runtime(sysroots: dict[str, Any], tmp_path: Path) -> None:
    """tools/miopen_sysroot.py unpacks libamdhip64-dev only when it pins the sysroot's runtime."""
    tool = sys.modules["miopen_sysroot"]  # loaded by the sysroots fixture
    debs = tmp_path / "debs"
    debs.mkdir()
    for version, pattern in (("7.2.4", "libamdhip64-dev_*.deb"), ("6.4.3", "libamdhip64-6_*.deb")):
        for deb in (sysroots[version].root.parent / "debs").glob(pattern):
            shutil.copy(deb, debs)
    with pytest.raises(RuntimeError, match=r"does not depend on libamdhip64-6 \(= 6\.4\.3"):
        tool._unpack_hip_dev(tool.SYSROOTS["6.4.3"], debs, tmp_path / "root")
    assert not (tmp_path / "root").exists()


# ---------------------------------------------------------------- the checks catch wrong declarations
def _with_arg(name: str, index: int, argtype: Any) -> Any:
    proto = hip.HIP_PROTOTYPES[name]
    args = list(proto.argtypes)
    args[index] = argtype
    return dataclasses.replace(proto, argtypes=tuple(args))


WRONG_ARGS = [
    ("hipMalloc", 1, c_uint, "size_t as a 32-bit int"),
    ("hipMemcpy", 3, c_int, "hipMemcpyKind (unsigned) as signed int"),
    ("hipMalloc", 0, c_void_p, "void** as void*"),
    ("hipEventElapsedTime", 0, POINTER(ctypes.c_double), "float* as double*"),
    ("hipEventRecord", 0, POINTER(hip.hipEvent_t), "hipEvent_t as hipEvent_t*"),
    ("hipGetDevicePropertiesR0600", 0, POINTER(hip_types.hipPointerAttribute_t), "wrong struct pointer"),
    ("hipDeviceGetAttribute", 2, c_size_t, "int device as size_t"),
]


@pytest.mark.parametrize(("name", "index", "argtype", "why"), WRONG_ARGS, ids=[w[3] for w in WRONG_ARGS])
def test_checker_catches_wrong_hip_argtype(name: str, index: int, argtype: Any, why: str,
                                           hip_headers: dict[str, HipHeaderModel]) -> None:
    model = hip_headers["7.2.4"]
    assert not prototype_problems(hip.HIP_PROTOTYPES[name], model)
    problems = prototype_problems(_with_arg(name, index, argtype), model)
    assert problems and f"arg {index}" in problems[0], (why, problems)


def test_checker_catches_wrong_hip_arity_and_macro(hip_headers: dict[str, HipHeaderModel]) -> None:
    model = hip_headers["6.4.3"]
    proto = hip.HIP_PROTOTYPES["hipMemsetAsync"]
    short = dataclasses.replace(proto, argtypes=proto.argtypes[:-1], argnames=proto.argnames[:-1])
    assert "4 arguments in the header" in prototype_problems(short, model)[0]
    renamed = dataclasses.replace(hip.HIP_PROTOTYPES["hipGetDevicePropertiesR0600"], name="hipGetDeviceProperties")
    assert "macro for hipGetDevicePropertiesR0600" in prototype_problems(renamed, model)[0]


def _props_with(fields: list[Any]) -> type[ctypes.Structure]:
    return type("hipDeviceProp_tR0600", (ctypes.Structure,), {"_fields_": fields})


@pytest.mark.parametrize("version", VERSIONS)
def test_checker_catches_wrong_struct_offset(version: str, hip_headers: dict[str, HipHeaderModel]) -> None:
    model = hip_headers[version]
    fields: list[Any] = list(hip_types.hipDeviceProp_t._fields_)
    assert not struct_problems(_props_with(fields), model)
    i = [f[0] for f in fields].index("regsPerBlock")
    shifted = [*fields[:i], ("regsPerBlock", ctypes.c_int64), *fields[i + 1:]]  # later offsets move
    problems = struct_problems(_props_with(shifted), model)
    assert problems and "layout differs" in problems[0], problems
    swapped = list(fields)
    j = [f[0] for f in fields].index("major")
    swapped[j], swapped[j + 1] = swapped[j + 1], swapped[j]  # same size, names at wrong offsets
    assert struct_problems(_props_with(swapped), model)
    attr_fields: list[Any] = list(hip_types.hipPointerAttribute_t._fields_)
    wide_device = [(f[0], c_size_t if f[0] == "device" else f[1]) for f in attr_fields]
    attr = type("hipPointerAttribute_t", (ctypes.Structure,), {"_fields_": wide_device})
    assert "layout differs" in struct_problems(attr, model)[0]
    padded = type("hipPointerAttribute_t", (ctypes.Structure,), {"_fields_": [*attr_fields, ("pad", c_int)]})
    assert "layout differs" in struct_problems(padded, model)[0]
