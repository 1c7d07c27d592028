"""The checker itself: it must reject each kind of wrong declaration (and accept right ones)."""

from __future__ import annotations

import ctypes
import dataclasses
from ctypes import POINTER, c_float, c_int, c_size_t, c_uint, c_uint64, c_void_p
from typing import Any

import pytest

pytest.importorskip("clang.cindex", reason="libclang is not installed (pip install '.[test]')")

from conformance_check import check_prototype, check_struct, compare, ctypes_shape

from miopen_ctypes import PROTOTYPES
from miopen_ctypes import types as mio_types
from miopen_ctypes._proto import Prototype


def _opaque(tag: str) -> Any:
    return POINTER(type(tag, (ctypes.Structure,), {"_fields_": []}))


# Independent of the binding: our own handle types, named after the header's struct tags.
Handle = _opaque("miopenHandle")
TensorDesc = _opaque("miopenTensorDescriptor")
ConvDesc = _opaque("miopenConvolutionDescriptor")
Solution = _opaque("miopenSolution")


class miopenTensorArgument_t(ctypes.Structure):
    _fields_ = [("id", c_uint), ("descriptor", POINTER(TensorDesc)), ("buffer", c_void_p)]


class SwappedTensorArgument(ctypes.Structure):
    _fields_ = [("descriptor", POINTER(TensorDesc)), ("id", c_uint), ("buffer", c_void_p)]


SwappedTensorArgument.__name__ = "miopenTensorArgument_t"

RUN_SOLUTION = ("handle", "solution", "nInputs", "tensors", "workspace", "workspaceSize")
RIGHT = {
    "miopenCreateTensorDescriptor": Prototype(
        "miopenCreateTensorDescriptor", c_uint, (POINTER(TensorDesc),), ("tensorDesc",)),
    "miopenDestroyConvolutionDescriptor": Prototype(
        "miopenDestroyConvolutionDescriptor", c_uint, (ConvDesc,), ("convDesc",)),
    "miopenRunSolution": Prototype(
        "miopenRunSolution", c_uint,
        (Handle, Solution, c_size_t, POINTER(miopenTensorArgument_t), c_void_p, c_size_t), RUN_SOLUTION),
    "miopenGetVersion": Prototype(
        "miopenGetVersion", c_uint, (POINTER(c_size_t),) * 3, ("major", "minor", "patch")),
}  # fmt: skip


def _wrong(name: str, index: int, argtype: Any) -> Prototype:
    proto = RIGHT[name]
    args = list(proto.argtypes)
    args[index] = argtype
    return dataclasses.replace(proto, argtypes=tuple(args))


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_handmade_right_prototypes_pass(name: str, headers: dict[str, Any]) -> None:
    for model in headers.values():
        assert check_prototype(RIGHT[name], model) == []


WRONG = {
    "c_int where size_t belongs": (_wrong("miopenRunSolution", 2, c_int), "uint64"),
    "unsigned where signed": (_wrong("miopenGetVersion", 0, POINTER(ctypes.c_ssize_t)), "binding has int64"),
    "float where int": (_wrong("miopenRunSolution", 5, ctypes.c_double), "float64"),
    "pointer depth 1 where 2": (_wrong("miopenCreateTensorDescriptor", 0, TensorDesc), "pointer depth"),
    "wrong handle kind": (_wrong("miopenDestroyConvolutionDescriptor", 0, TensorDesc), "wrong handle"),
    "void* where a handle belongs": (_wrong("miopenDestroyConvolutionDescriptor", 0, c_void_p), "binding has void"),
    "wrong struct layout": (_wrong("miopenRunSolution", 3, POINTER(SwappedTensorArgument)), "layout differs"),
    "wrong return type": (dataclasses.replace(RIGHT["miopenGetVersion"], restype=ctypes.c_int64), "return type"),
    "missing argument": (dataclasses.replace(RIGHT["miopenGetVersion"], argtypes=(POINTER(c_size_t),) * 2,
                                             argnames=("major", "minor")), "3 arguments in the header"),
    "swapped argument names": (dataclasses.replace(RIGHT["miopenGetVersion"], argnames=("minor", "major", "patch")),
                               "argument names"),
    "undeclared function": (dataclasses.replace(RIGHT["miopenGetVersion"], name="miopenGetVersionX"), "not declared"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(WRONG))
def test_checker_rejects(case: str, headers: dict[str, Any]) -> None:
    proto, needle = WRONG[case]
    for version, model in headers.items():
        problems = check_prototype(proto, model)
        assert problems, f"{case}: the checker accepted a wrong declaration against {version}"
        assert any(needle in p for p in problems), problems


def test_checker_rejects_a_corrupted_binding_entry(headers: dict[str, Any]) -> None:
    """Mutate a real PROTOTYPES entry: its first size_t argument becomes c_int."""
    proto = next(p for p in PROTOTYPES.values() if c_size_t in p.argtypes and p.since <= (3, 4, 0))
    index = proto.argtypes.index(c_size_t)
    broken = dataclasses.replace(proto, argtypes=(*proto.argtypes[:index], c_int, *proto.argtypes[index + 1:]))
    assert check_prototype(proto, headers["6.4.3"]) == []
    assert any(f"arg {index}" in p for p in check_prototype(broken, headers["6.4.3"]))


def test_struct_checker_rejects_wrong_layout(headers: dict[str, Any]) -> None:
    assert check_struct(miopenTensorArgument_t, headers["7.2.4"]) == []
    assert check_struct(SwappedTensorArgument, headers["7.2.4"])
    small = type("miopenConvSolution_t", (ctypes.Structure,), {"_fields_": [("time", c_float), ("workspace_size", c_uint)]})
    assert check_struct(small, headers["7.2.4"])


def test_function_pointer_signatures_compared() -> None:
    alloc = ctypes_shape(mio_types.miopenAllocatorFunction)
    wrong = ctypes_shape(ctypes.CFUNCTYPE(c_void_p, c_void_p, c_uint))
    assert compare(alloc, alloc, "alloc") == []
    assert compare(alloc, wrong, "alloc")


def test_foreign_stream_may_be_void_pointer(headers: dict[str, Any]) -> None:
    """The one allowance: hipStream_t (struct ihipStream_t*) bound as c_void_p."""
    model = headers["7.2.4"]
    stream_arg = model.functions["miopenSetStream"][1][1]
    assert stream_arg.target is not None and stream_arg.target.tag == "ihipStream_t"
    assert compare(stream_arg, ctypes_shape(c_void_p), "stream") == []
    assert compare(stream_arg, ctypes_shape(POINTER(c_void_p)), "stream")
    assert compare(stream_arg, ctypes_shape(c_uint64), "stream")
