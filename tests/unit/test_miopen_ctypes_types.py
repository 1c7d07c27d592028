"""miopen_ctypes.types: struct layouts as laid out by the C compiler for miopen.h (LP64)."""

from __future__ import annotations

import ctypes

import pytest

from miopen_ctypes.types import (
    miopenAllocatorFunction,
    miopenConvAlgoPerf_t,
    miopenConvSolution_t,
    miopenTensorArgument_t,
    miopenTensorDescriptor_t,
    pointer_value,
)

# the offsets of a 64-bit target: Linux x86-64 (LP64) and Windows x64 (LLP64) agree, because
# these structs hold no C long (the one type whose size differs)
pytestmark = pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8,
                                reason="offsets below are those of a 64-bit target")


def offsets(struct: type[ctypes.Structure]) -> dict[str, int]:
    return {name: getattr(struct, name).offset for name, *_ in struct._fields_}


def test_conv_solution_layout() -> None:
    # float time @0, size_t workspace_size @8, uint64_t solution_id @16, enum algorithm @24
    assert ctypes.sizeof(miopenConvSolution_t) == 32
    assert ctypes.alignment(miopenConvSolution_t) == 8
    assert offsets(miopenConvSolution_t) == {
        "time": 0,
        "workspace_size": 8,
        "solution_id": 16,
        "algorithm": 24,
    }


def test_conv_algo_perf_layout_with_anonymous_union() -> None:
    # union {fwd_algo; bwd_weights_algo; bwd_data_algo} @0, float time @4, size_t memory @8
    assert ctypes.sizeof(miopenConvAlgoPerf_t) == 16
    assert offsets(miopenConvAlgoPerf_t) == {"_algo": 0, "time": 4, "memory": 8}
    perf = miopenConvAlgoPerf_t()
    perf.bwd_data_algo = 5
    assert perf.fwd_algo == 5 and perf.bwd_weights_algo == 5  # one storage, three names
    raw = bytes(perf)
    assert raw[:4] == (5).to_bytes(4, "little")


def test_tensor_argument_layout() -> None:
    assert ctypes.sizeof(miopenTensorArgument_t) == 24
    assert offsets(miopenTensorArgument_t) == {"id": 0, "descriptor": 8, "buffer": 16}
    arg = miopenTensorArgument_t()
    arg.id = 0x80000003  # scalar ids use bit 31: the field must be unsigned 32-bit
    assert arg.id == 0x80000003
    assert not arg.descriptor  # NULL: no descriptor override


def test_tensor_argument_array_for_run_solution() -> None:
    args = (miopenTensorArgument_t * 3)()
    args[1].buffer = 0xBEEF
    assert ctypes.sizeof(args) == 72 and args[1].buffer == 0xBEEF


def test_allocator_callback_type() -> None:
    calls: list[int] = []

    def allocate(context: int | None, size: int) -> int:
        calls.append(size)
        return 0x4000

    callback = miopenAllocatorFunction(allocate)
    assert callback(None, 128) == 0x4000 and calls == [128]


def test_pointer_value() -> None:
    assert pointer_value(miopenTensorDescriptor_t()) == 0
    assert pointer_value(ctypes.cast(ctypes.c_void_p(0x1230), miopenTensorDescriptor_t)) == 0x1230
