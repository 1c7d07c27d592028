"""Find 2.0 problems and find options on the real library (finding itself needs a GPU)."""

from __future__ import annotations

import ctypes
from typing import Any

import pytest
from live_util import int_array, objects

from miopen_ctypes import types as mt
from miopen_ctypes.enums import (
    miopenConvolutionFindMode_t,
    miopenDataType_t,
    miopenFindResultsOrder_t,
    miopenProblemDirection_t,
    miopenTensorArgumentId_t,
)

FLOAT = int(miopenDataType_t.miopenFloat)
IDS = [miopenTensorArgumentId_t.miopenTensorConvolutionX, miopenTensorArgumentId_t.miopenTensorConvolutionW,
       miopenTensorArgumentId_t.miopenTensorConvolutionY]
DIRECTIONS = [miopenProblemDirection_t.miopenProblemDirectionForward,
              miopenProblemDirection_t.miopenProblemDirectionBackward,
              miopenProblemDirection_t.miopenProblemDirectionBackwardWeights]


@pytest.mark.parametrize("direction", DIRECTIONS, ids=lambda d: d.name)
@pytest.mark.parametrize("spatial", [2, 3])
def test_conv_problem(lib: Any, direction: miopenProblemDirection_t, spatial: int) -> None:
    x_dims, w_dims, y_dims = (2, 3) + (8,) * spatial, (4, 3) + (3,) * spatial, (2, 4) + (8,) * spatial
    with objects(lib) as o:
        conv = o.new("conv")
        lib.miopenInitConvolutionNdDescriptor(conv, spatial, int_array([1] * spatial), int_array([1] * spatial),
                                              int_array([1] * spatial), 0)
        # the engine sets Normal before creating the problem (the problem copies the descriptor)
        lib.miopenSetConvolutionFindMode(conv, int(miopenConvolutionFindMode_t.miopenConvolutionFindModeNormal))
        mode = ctypes.c_uint()
        lib.miopenGetConvolutionFindMode(conv, ctypes.byref(mode))
        assert mode.value == miopenConvolutionFindMode_t.miopenConvolutionFindModeNormal
        problem = mt.miopenProblem_t()
        lib.miopenCreateConvProblem(ctypes.byref(problem), conv, int(direction))
        assert problem
        o.own("miopenDestroyProblem", problem)
        for arg_id, dims in zip(IDS, (x_dims, w_dims, y_dims), strict=True):
            lib.miopenSetProblemTensorDescriptor(problem, int(arg_id), o.tensor(FLOAT, dims))


def test_find_options(lib: Any) -> None:
    """Every find option the engine sets is accepted (a failing status would raise; the status
    functions return None on success), and a NULL options object is refused before MIOpen."""
    import miopen_ctypes

    with objects(lib) as o:
        options = o.new("options")
        results = [lib.miopenSetFindOptionTuning(options, 1)]
        results += [lib.miopenSetFindOptionResultsOrder(options, int(order)) for order in miopenFindResultsOrder_t]
        results.append(lib.miopenSetFindOptionWorkspaceLimit(options, 64 << 20))
        results.append(lib.miopenSetFindOptionPreallocatedWorkspace(options, 0x10000, 1 << 20))
        results += [lib.miopenSetFindOptionPreallocatedTensor(options, int(arg_id), 0x20000 + 0x1000 * int(arg_id))
                    for arg_id in IDS]
        assert results == [None] * (3 + len(miopenFindResultsOrder_t) + len(IDS))
    with pytest.raises(miopen_ctypes.NullArgumentError, match="options"):
        lib.miopenSetFindOptionTuning(mt.miopenFindOptions_t(), 1)


def test_null_problem_rejected_in_python(lib: Any) -> None:
    import miopen_ctypes

    with pytest.raises(miopen_ctypes.NullArgumentError, match="problem"):
        lib.miopenSetProblemTensorDescriptor(mt.miopenProblem_t(), 1, mt.miopenTensorDescriptor_t())
