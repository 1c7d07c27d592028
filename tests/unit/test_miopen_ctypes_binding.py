"""miopen_ctypes: prototype table, binding onto injected functions, errors, NULL/type rejection."""

from __future__ import annotations

import ctypes
from ctypes import POINTER, byref, c_bool, c_float, c_size_t, c_uint, c_void_p, cast
from typing import Any

import pytest

import miopen_ctypes
from miopen_ctypes import PROTOTYPES, MIOpenLibrary, errors
from miopen_ctypes.enums import (
    ENUMS,
    miopenConvolutionMode_t,
    miopenDataType_t,
    miopenStatus_t,
    miopenTensorArgumentId_t,
)
from miopen_ctypes.prototypes import NULLABLE_HANDLES, V3_4, V3_5, required_handles
from miopen_ctypes.types import (
    HANDLE_TYPES,
    c_enum,
    miopenActivationDescriptor_t,
    miopenConvolutionDescriptor_t,
    miopenFindOptions_t,
    miopenHandle_t,
    miopenProblem_t,
    miopenSolution_t,
    miopenTensorDescriptor_t,
    pointer_value,
)


def fake_handle(kind: Any, address: int = 0x1000) -> Any:
    """A non-NULL handle of ``kind`` (never dereferenced by the fakes)."""
    return cast(c_void_p(address), kind)


# Functions the engines call (the binding issue's list); all must be bound.
NEEDED = """
miopenCreate miopenCreateWithStream miopenDestroy miopenSetStream miopenGetStream miopenEnableProfiling
miopenGetKernelTime miopenSetAllocator miopenGetErrorString miopenGetVersion
miopenCreateTensorDescriptor miopenSet4dTensorDescriptor miopenSetTensorDescriptor
miopenSetNdTensorDescriptorWithLayout miopenSetTensorDescriptorV2 miopenGetTensorDescriptor
miopenGetTensorDescriptorSize miopenGetTensorNumBytes miopenDestroyTensorDescriptor
miopenCreateConvolutionDescriptor miopenInitConvolutionNdDescriptor miopenGetConvolutionNdDescriptor
miopenSetConvolutionGroupCount miopenGetConvolutionGroupCount miopenSetConvolutionFindMode
miopenGetConvolutionFindMode miopenSetConvolutionAttribute miopenGetConvolutionAttribute
miopenGetConvolutionNdForwardOutputDim miopenDestroyConvolutionDescriptor
miopenConvolutionForwardGetSolutionCount miopenConvolutionForwardGetSolution
miopenConvolutionForwardGetSolutionWorkspaceSize miopenConvolutionForwardCompileSolution
miopenConvolutionForwardImmediate miopenConvolutionBackwardDataGetSolutionCount
miopenConvolutionBackwardDataGetSolution miopenConvolutionBackwardDataGetSolutionWorkspaceSize
miopenConvolutionBackwardDataCompileSolution miopenConvolutionBackwardDataImmediate
miopenConvolutionBackwardWeightsGetSolutionCount miopenConvolutionBackwardWeightsGetSolution
miopenConvolutionBackwardWeightsGetSolutionWorkspaceSize miopenConvolutionBackwardWeightsCompileSolution
miopenConvolutionBackwardWeightsImmediate miopenFindConvolutionForwardAlgorithm
miopenConvolutionForwardGetWorkSpaceSize miopenConvolutionForward miopenConvolutionBackwardData
miopenConvolutionBackwardWeights miopenConvolutionForwardBias miopenConvolutionBackwardBias
miopenCreateConvProblem miopenSetProblemTensorDescriptor miopenDestroyProblem miopenCreateFindOptions
miopenDestroyFindOptions miopenSetFindOptionTuning miopenSetFindOptionResultsOrder
miopenSetFindOptionWorkspaceLimit miopenSetFindOptionPreallocatedWorkspace
miopenSetFindOptionPreallocatedTensor miopenSetFindOptionAttachBinaries miopenFindSolutions
miopenGetSolutionWorkspaceSize miopenGetSolutionTime miopenGetSolutionSize miopenGetSolutionSolverId
miopenGetSolverIdConvAlgorithm miopenRunSolution miopenSaveSolution miopenLoadSolution
miopenDestroySolution miopenDeriveBNTensorDescriptor miopenBatchNormalizationForwardInference
miopenBatchNormalizationForwardTraining miopenBatchNormalizationBackward
miopenBatchNormalizationForwardInference_V2 miopenBatchNormalizationForwardTraining_V2
miopenBatchNormalizationBackward_V2 miopenBatchNormForwardInferenceActivation
miopenBatchNormForwardTrainingActivation miopenBatchNormBackwardActivation
miopenCreateActivationDescriptor miopenSetActivationDescriptor miopenGetActivationDescriptor
miopenDestroyActivationDescriptor miopenActivationForward miopenActivationBackward miopenOpTensor
miopenCreateFusionPlan miopenCreateOpConvForward miopenCreateOpBiasForward
miopenCreateOpActivationForward miopenCreateOpActivationBackward miopenCreateOpBatchNormInference
miopenCreateOpBatchNormForward miopenCreateOpBatchNormBackward miopenCompileFusionPlan
miopenCreateOperatorArgs miopenDestroyOperatorArgs miopenSetOpArgsConvForward miopenSetOpArgsBiasForward
miopenSetOpArgsActivForward miopenSetOpArgsActivBackward miopenSetOpArgsBatchNormInference
miopenSetOpArgsBatchNormForward miopenSetOpArgsBatchNormBackward miopenExecuteFusionPlan
miopenExecuteFusionPlan_v2 miopenFusionPlanGetWorkSpaceSize miopenFusionPlanConvolutionGetAlgo
miopenDestroyFusionPlan miopenSetTuningPolicy miopenGetTuningPolicy
""".split()

ONLY_3_5 = {
    "miopenBatchNormForwardInferenceActivation",
    "miopenBatchNormForwardTrainingActivation",
    "miopenBatchNormBackwardActivation",
    "miopenExecuteFusionPlan_v2",
    "miopenSetTuningPolicy",
    "miopenGetTuningPolicy",
    "miopenGetLayerNormBackwardWorkspaceSize",
    "miopenLayerNormBackward",
}


# ---------------------------------------------------------------- prototype table


def test_table_covers_every_needed_function() -> None:
    assert len(PROTOTYPES) >= 95
    assert [name for name in NEEDED if name not in PROTOTYPES] == []


def test_since_marks_exactly_the_3_5_only_functions() -> None:
    assert {n for n, p in PROTOTYPES.items() if p.since == V3_5} == ONLY_3_5
    assert {p.since for p in PROTOTYPES.values()} == {V3_4, V3_5}


def test_prototype_records_are_consistent() -> None:
    for name, proto in PROTOTYPES.items():
        assert proto.name == name
        assert len(proto.argtypes) == len(proto.argnames)
        assert proto.returns_status == (name != "miopenGetErrorString")
    with pytest.raises(ValueError, match="argtypes"):
        miopen_ctypes.Prototype("f", None, (c_uint,), ())


@pytest.mark.parametrize(
    ("function", "parameter", "ctype"),
    [
        ("miopenSetFindOptionAttachBinaries", "attach", c_uint),  # header: unsigned
        ("miopenFindConvolutionForwardAlgorithm", "exhaustiveSearch", c_bool),
        ("miopenEnableProfiling", "enable", c_bool),
        ("miopenSetFindOptionWorkspaceLimit", "value", c_size_t),
        ("miopenConvolutionForwardImmediate", "solution_id", ctypes.c_uint64),
        ("miopenConvolutionForward", "alpha", c_void_p),  # const void*, read as const float*
        ("miopenBatchNormalizationForwardTraining_V2", "epsilon", ctypes.c_double),
        ("miopenSet4dTensorDescriptor", "dataType", c_enum),
        ("miopenCreateTensorDescriptor", "tensorDesc", POINTER(miopenTensorDescriptor_t)),
        ("miopenLoadSolution", "data", ctypes.c_char_p),
        ("miopenSaveSolution", "data", POINTER(ctypes.c_char)),
    ],
)
def test_argument_types_follow_the_header(function: str, parameter: str, ctype: Any) -> None:
    proto = PROTOTYPES[function]
    assert proto.argtypes[proto.argnames.index(parameter)] is ctype


def test_handle_kinds_are_distinct_pointer_types() -> None:
    assert len(set(HANDLE_TYPES)) == len(HANDLE_TYPES) == 21  # every MIOPEN_DECLARE_OBJECT
    for kind in HANDLE_TYPES:
        assert issubclass(kind, ctypes._Pointer)
        assert ctypes.sizeof(kind) == ctypes.sizeof(c_void_p)


def test_required_handles_follow_the_nullable_table() -> None:
    names = [n for _, n, _ in required_handles(PROTOTYPES["miopenFindSolutions"])]
    assert names == ["handle", "problem"]  # options may be NULL
    assert NULLABLE_HANDLES["miopenFindSolutions"] == {"options"}
    assert [n for _, n, _ in required_handles(PROTOTYPES["miopenCreateTensorDescriptor"])] == []


# ---------------------------------------------------------------- enums


def test_enum_values_match_the_header() -> None:
    assert [int(s) for s in miopenStatus_t] == list(range(11))
    assert miopenDataType_t.miopenBFloat16 == 5 and miopenDataType_t.miopenInt64 == 9
    assert miopenDataType_t.miopenFloat8 is miopenDataType_t.miopenFloat8_fnuz  # 3.4 alias
    assert miopenTensorArgumentId_t.miopenScalarBatchnormEpsilon == 0x80000003
    assert ENUMS["miopenConvolutionFindMode_t"]["miopenConvolutionFindModeDefault"] == 5
    assert ENUMS["miopenTuningPolicy_t"]["miopenTuningPolicyDbClean"] == 5


# ---------------------------------------------------------------- binding onto fakes


def test_arguments_cross_ctypes_conversions_and_out_pointers_work() -> None:
    seen: dict[str, Any] = {}

    def create(out: Any) -> int:
        out[0] = fake_handle(miopenTensorDescriptor_t, 0xABC0)
        return 0

    def set4d(desc: Any, dtype: int, n: int, c: int, h: int, w: int) -> None:
        seen["set4d"] = (type(desc), pointer_value(desc), dtype, n, c, h, w)

    lib = MIOpenLibrary.from_functions(
        {"miopenCreateTensorDescriptor": create, "miopenSet4dTensorDescriptor": set4d}
    )
    desc = miopenTensorDescriptor_t()
    assert lib.miopenCreateTensorDescriptor(byref(desc)) is None
    assert pointer_value(desc) == 0xABC0
    lib.miopenSet4dTensorDescriptor(desc, miopenDataType_t.miopenHalf, 1, 2, 3, 4)
    assert seen["set4d"][1:] == (0xABC0, 0, 1, 2, 3, 4)
    assert seen["set4d"][0] is miopenTensorDescriptor_t


def test_alpha_beta_pass_as_host_float_pointers() -> None:
    seen: dict[str, float] = {}

    def forward(handle: Any, act: Any, alpha: int, xd: Any, x: int, beta: int, yd: Any, y: int) -> int:
        seen["alpha"] = c_float.from_address(alpha).value
        seen["x"] = x
        return 0

    lib = MIOpenLibrary.from_functions({"miopenActivationForward": forward})
    t = fake_handle(miopenTensorDescriptor_t)
    lib.miopenActivationForward(
        fake_handle(miopenHandle_t), fake_handle(miopenActivationDescriptor_t),
        byref(c_float(2.5)), t, 0x5000, byref(c_float(0.0)), t, 0x6000,
    )  # fmt: skip
    assert seen == {"alpha": 2.5, "x": 0x5000}


@pytest.mark.parametrize("status", [s for s in miopenStatus_t if s != 0])
def test_each_status_raises_its_own_class(status: miopenStatus_t) -> None:
    lib = MIOpenLibrary.from_functions(
        {
            "miopenDestroy": lambda handle: int(status),
            "miopenGetErrorString": lambda s: f"text for {s}".encode(),
        }
    )
    with pytest.raises(errors.STATUS_ERRORS[status]) as info:
        lib.miopenDestroy(fake_handle(miopenHandle_t))
    message = str(info.value)
    assert "miopenDestroy" in message and status.name in message and f"text for {int(status)}" in message
    assert info.value.status == status and info.value.function == "miopenDestroy"
    assert isinstance(info.value, errors.MIOpenStatusError)


@pytest.mark.parametrize("creator", ["miopenCreate", "miopenCreateWithStream"])
def test_handle_creation_unknown_error_means_no_device(creator: str) -> None:
    def create(*args: object) -> int:
        return 7

    lib = MIOpenLibrary.from_functions({creator: create})
    handle = miopenHandle_t()
    args = (byref(handle),) if creator == "miopenCreate" else (byref(handle), None)
    with pytest.raises(errors.MIOpenNoDeviceError) as info:
        getattr(lib, creator)(*args)
    assert isinstance(info.value, errors.MIOpenUnknownError)
    assert str(info.value).startswith(f"no AMD GPU available: {creator} failed")
    assert "CPU_REFERENCE_ENGINE" in str(info.value)
    # The same status from any other function keeps its plain class.
    other = MIOpenLibrary.from_functions({"miopenDestroy": lambda handle: 7})
    with pytest.raises(errors.MIOpenUnknownError) as plain:
        other.miopenDestroy(fake_handle(miopenHandle_t))
    assert not isinstance(plain.value, errors.MIOpenNoDeviceError)


def test_status_classes_are_one_per_status() -> None:
    assert sorted(errors.STATUS_ERRORS) == list(range(1, 11))
    assert len(set(errors.STATUS_ERRORS.values())) == 10


def test_unknown_status_and_missing_error_string_degrade_gracefully() -> None:
    lib = MIOpenLibrary.from_functions({"miopenDestroy": lambda handle: 42})
    with pytest.raises(errors.MIOpenUnknownStatusError, match=r"miopenDestroy failed: .*\(42\)$"):
        lib.miopenDestroy(fake_handle(miopenHandle_t))

    def broken(status: int) -> bytes:
        raise RuntimeError("no text")

    lib = MIOpenLibrary.from_functions(
        {"miopenDestroy": lambda handle: 3, "miopenGetErrorString": broken}
    )
    with pytest.raises(errors.MIOpenBadParmError, match=r"miopenStatusBadParm \(3\)$"):
        lib.miopenDestroy(fake_handle(miopenHandle_t))


def test_exception_inside_an_injected_function_reaches_the_caller() -> None:
    class Boom(Exception):
        pass

    def create(out: Any) -> int:
        raise Boom("from the fake")

    lib = MIOpenLibrary.from_functions({"miopenCreate": create})
    with pytest.raises(Boom, match="from the fake"):
        lib.miopenCreate(byref(miopenHandle_t()))
    lib2 = MIOpenLibrary.from_functions({"miopenCreate": lambda out: None})
    lib2.miopenCreate(byref(miopenHandle_t()))  # nothing left pending from the failed call


def test_injected_function_must_return_a_status() -> None:
    lib = MIOpenLibrary.from_functions({"miopenDestroy": lambda handle: "ok"})
    with pytest.raises(TypeError, match="injected miopenDestroy must return a status"):
        lib.miopenDestroy(fake_handle(miopenHandle_t))
    lib = MIOpenLibrary.from_functions({"miopenDestroy": lambda handle: miopenStatus_t(3)})
    with pytest.raises(errors.MIOpenBadParmError):
        lib.miopenDestroy(fake_handle(miopenHandle_t))


def test_absent_function_raises_version_error_not_attribute_error() -> None:
    lib = MIOpenLibrary.from_functions({"miopenCreate": lambda out: 0}, version=(3, 4, 0))
    with pytest.raises(errors.MIOpenVersionError) as info:
        lib.miopenSetTuningPolicy(fake_handle(miopenHandle_t), 1)
    assert str(info.value) == "miopenSetTuningPolicy requires MIOpen >= 3.5.0, loaded 3.4.0"
    assert not lib.capabilities.has("miopenSetTuningPolicy")
    assert lib.capabilities.has("miopenCreate")
    assert not lib.capabilities.tuning_policy and not lib.capabilities.bn_activation
    with pytest.raises(errors.MIOpenVersionError, match="does not export it"):
        lib.miopenDestroy(fake_handle(miopenHandle_t))  # old enough, just absent
    with pytest.raises(AttributeError, match="not a function bound"):
        lib.miopenNoSuchThing  # noqa: B018


def test_capabilities_of_a_3_5_library() -> None:
    functions = {name: (lambda *args: 0) for name in ONLY_3_5}
    caps = MIOpenLibrary.from_functions(functions, version=(3, 5, 0)).capabilities
    assert caps.bn_activation and caps.execute_fusion_plan_v2 and caps.tuning_policy
    assert caps.version_string == "3.5.0"
    assert "miopenCreate" in caps.missing
    with pytest.raises(errors.MIOpenVersionError, match=r"miopenCreate requires MIOpen >= 3\.4\.0"):
        caps.require("miopenCreate")


def test_unknown_injected_name_is_rejected() -> None:
    with pytest.raises(ValueError, match="miopenCreat"):
        MIOpenLibrary.from_functions({"miopenCreat": lambda out: 0})


# ---------------------------------------------------------------- bad input


class Recorder:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, *args: Any) -> int:
        self.calls += 1
        return 0


@pytest.mark.parametrize("null", [None, miopenTensorDescriptor_t()])
def test_null_handle_is_rejected_before_the_call(null: Any) -> None:
    fake = Recorder()
    lib = MIOpenLibrary.from_functions({"miopenSet4dTensorDescriptor": fake})
    with pytest.raises(errors.NullArgumentError) as info:
        lib.miopenSet4dTensorDescriptor(null, 1, 1, 1, 1, 1)
    assert "miopenSet4dTensorDescriptor" in str(info.value) and "'tensorDesc'" in str(info.value)
    assert isinstance(info.value, ValueError) and fake.calls == 0


def test_documented_optional_handle_may_be_null() -> None:
    fake = Recorder()
    lib = MIOpenLibrary.from_functions({"miopenFindSolutions": fake})
    count = c_size_t()
    solutions = (miopenSolution_t * 4)()
    lib.miopenFindSolutions(
        fake_handle(miopenHandle_t), fake_handle(miopenProblem_t), None, solutions, byref(count), 4
    )
    assert fake.calls == 1
    with pytest.raises(errors.NullArgumentError, match="'problem'"):
        lib.miopenFindSolutions(fake_handle(miopenHandle_t), None, None, solutions, byref(count), 4)


@pytest.mark.parametrize(
    "bad",
    [
        fake_handle(miopenConvolutionDescriptor_t),  # wrong handle kind
        miopenConvolutionDescriptor_t(),  # wrong kind, NULL: still a type error
        0x1000,  # a bare integer
        c_void_p(0x1000),
    ],
)
def test_wrong_pointer_kind_is_an_argument_error(bad: Any) -> None:
    fake = Recorder()
    lib = MIOpenLibrary.from_functions({"miopenDestroyTensorDescriptor": fake})
    with pytest.raises(ctypes.ArgumentError, match="miopenTensorDescriptor_t"):
        lib.miopenDestroyTensorDescriptor(bad)
    assert fake.calls == 0


def test_wrong_python_types_and_counts_fail_before_the_call() -> None:
    fake = Recorder()
    lib = MIOpenLibrary.from_functions({"miopenSetConvolutionGroupCount": fake})
    conv = fake_handle(miopenConvolutionDescriptor_t)
    with pytest.raises(ctypes.ArgumentError):
        lib.miopenSetConvolutionGroupCount(conv, "2")
    with pytest.raises(TypeError, match=r"miopenSetConvolutionGroupCount\(convDesc, groupCount\)"):
        lib.miopenSetConvolutionGroupCount(conv)
    with pytest.raises(TypeError, match="takes 2 arguments, 3 given"):
        lib.miopenSetConvolutionGroupCount(conv, 2, 3)
    assert fake.calls == 0
    lib.miopenSetConvolutionGroupCount(conv, 2)
    assert fake.calls == 1


def test_enum_members_pass_into_enum_arguments() -> None:
    got: list[int] = []
    lib = MIOpenLibrary.from_functions(
        {"miopenInitConvolutionNdDescriptor": lambda *a: got.append(a[-1])}
    )
    ints = (ctypes.c_int * 2)(1, 1)
    lib.miopenInitConvolutionNdDescriptor(
        fake_handle(miopenConvolutionDescriptor_t), 2, ints, ints, ints,
        miopenConvolutionMode_t.miopenTranspose,
    )  # fmt: skip
    assert got == [1]


def test_error_string_from_an_injected_function() -> None:
    lib = MIOpenLibrary.from_functions({"miopenGetErrorString": lambda s: "miopenStatusBadParm"})
    assert lib.miopenGetErrorString(3) == b"miopenStatusBadParm"
    assert lib.error_string(3) == "miopenStatusBadParm"
    assert MIOpenLibrary.from_functions({}).error_string(3) is None


def test_find_options_handle_round_trip() -> None:
    state: dict[str, int] = {}

    def create(out: Any) -> None:
        out[0] = fake_handle(miopenFindOptions_t, 0x7770)

    def tuning(options: Any, value: int) -> None:
        state["options"], state["value"] = pointer_value(options), value

    lib = MIOpenLibrary.from_functions(
        {"miopenCreateFindOptions": create, "miopenSetFindOptionTuning": tuning}
    )
    options = miopenFindOptions_t()
    lib.miopenCreateFindOptions(byref(options))
    lib.miopenSetFindOptionTuning(options, 1)
    assert state == {"options": 0x7770, "value": 1}
