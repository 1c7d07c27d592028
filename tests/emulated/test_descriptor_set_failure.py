"""A descriptor whose set call fails is destroyed at once, even while the caller keeps the error.

Before: the half-made Python object was destroyed by its finalizer only when collected, and the
raised error's traceback holds it, so a build failure kept by the caller (an engine reason, a
test's ``pytest.raises``) leaked the C descriptor until the error went away (found by the fault
sweep: a stored Find decision, then a failing ``miopenSetTensorDescriptorV2``)."""

from __future__ import annotations

import gc

import pytest
from emulated.device import EmulatedDevice

from hipdnn.core.types import DataType
from hipdnn.engines.miopen.descriptors import ActivationDesc, ConvDesc, TensorDesc
from miopen_ctypes.errors import MIOpenStatusError

CASES = {
    "tensor": ("miopenSetTensorDescriptorV2",
               lambda lib: TensorDesc(lib, DataType.FLOAT, (2, 3, 4, 5), (60, 20, 5, 1))),
    "convolution": ("miopenInitConvolutionNdDescriptor",
                    lambda lib: ConvDesc(lib, (1, 1), (1, 1), (1, 1), 1)),
    "grouped convolution": ("miopenSetConvolutionGroupCount",
                            lambda lib: ConvDesc(lib, (1, 1), (1, 1), (1, 1), 2)),
    "deterministic convolution": ("miopenSetConvolutionAttribute",
                                  lambda lib: ConvDesc(lib, (1, 1), (1, 1), (1, 1), 1, True)),
    "activation": ("miopenSetActivationDescriptor",
                   lambda lib: ActivationDesc(lib, 3, 0.0, 0.0, 0.0)),
}


def _live(device: EmulatedDevice) -> set[int]:
    return {k for k, v in device.handles._live.items() if v.kind != "stream"}


@pytest.mark.parametrize("case", list(CASES))
def test_a_failed_set_destroys_the_descriptor_at_once(emulated_device: EmulatedDevice,
                                                      case: str) -> None:
    function, make = CASES[case]
    lib = emulated_device.miopen
    if case == "tensor" and not lib.capabilities.has(function):
        function = "miopenSetTensorDescriptor"
    before = _live(emulated_device)
    gc.disable()  # nothing but the close under test may destroy it
    try:
        emulated_device.fail(function, 4, nth=1)
        with pytest.raises(MIOpenStatusError) as info:
            make(lib)
        assert info.value.function == function
        assert _live(emulated_device) == before, f"{case}: the descriptor outlives its failed set"
        made = make(lib)  # the next one is whole
        assert made.alive and _live(emulated_device) != before
        made.close()
        assert _live(emulated_device) == before
    finally:
        gc.enable()
