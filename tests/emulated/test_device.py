"""The emulated device itself: symbol sets per version, handles, descriptor rules, recording, status
injection, HIP memory/streams/events and bounds checks."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator

import numpy as np
import pytest
from emulated._client import Client, Failed
from emulated._core import implementations
from emulated.device import EmulatedDevice

import miopen_ctypes
from miopen_ctypes import errors
from miopen_ctypes.hip import hipDeviceProp_t, hipEvent_t, hipPointerAttribute_t
from miopen_ctypes.types import miopenHandle_t, miopenTensorDescriptor_t

V3_5 = (3, 5, 0)


@pytest.fixture
def client(emulated_device: EmulatedDevice) -> Iterator[Client]:
    with Client(emulated_device.miopen) as c:
        yield c


def test_symbol_set_per_version(emulated_device: EmulatedDevice) -> None:
    lib = emulated_device.miopen
    # the 3.5-only functions the emulation implements (it emulates what the engines call)
    emulated = implementations(emulated_device)
    newer = sorted(n for n, p in miopen_ctypes.PROTOTYPES.items() if p.since >= V3_5 and n in emulated)
    assert newer, "the prototype table marks no 3.5-only function"
    on_3_5 = emulated_device.version >= V3_5
    assert lib.capabilities.version == ((3, 5, 1) if on_3_5 else (3, 4, 0))
    for name in newer:
        assert lib.capabilities.has(name) is on_3_5, name
    if not on_3_5:
        with pytest.raises(errors.MIOpenVersionError):
            lib.miopenSetTuningPolicy(miopenHandle_t(), 2)
    version = [ctypes.c_size_t() for _ in range(3)]
    lib.miopenGetVersion(*(ctypes.byref(v) for v in version))
    assert tuple(v.value for v in version) == lib.capabilities.version


def test_without_drops_symbols() -> None:
    dev = EmulatedDevice("3.5", without=["miopenBatchNormBackwardActivation", "miopenExecuteFusionPlan_v2"])
    assert not dev.miopen.capabilities.has("miopenBatchNormBackwardActivation")
    assert not dev.miopen.capabilities.has("miopenExecuteFusionPlan_v2")
    assert dev.miopen.capabilities.has("miopenBatchNormForwardTrainingActivation")
    with pytest.raises(ValueError, match="no known prototype"):
        EmulatedDevice("3.5", without=["miopenNoSuchThing"])
    with pytest.raises(ValueError, match="version"):
        EmulatedDevice("3.3")


def test_tuning_policy(emulated_device: EmulatedDevice, client: Client) -> None:
    if emulated_device.version < V3_5:
        assert not emulated_device.miopen.capabilities.has("miopenGetTuningPolicy")
        return
    lib, h = emulated_device.miopen, client.handle()
    value = ctypes.c_uint()
    lib.miopenGetTuningPolicy(h, ctypes.byref(value))
    assert value.value == 1
    lib.miopenSetTuningPolicy(h, 4)
    lib.miopenGetTuningPolicy(h, ctypes.byref(value))
    assert value.value == 4
    with pytest.raises(errors.MIOpenBadParmError):
        lib.miopenSetTuningPolicy(h, 9)


def test_descriptor_rules(client: Client) -> None:
    assert client.describe(client.new_tensor()) == (0, 1, (), (), 4)  # as the real library
    nhwc = client.tensor_layout(1, 1, (2, 3, 4, 5))
    assert client.describe(nhwc) == (4, 1, (2, 3, 4, 5), (60, 1, 15, 3), 480)
    assert client.describe(client.tensor(0, (2, 3, 4, 5), (100, 30, 6, 1)))[4] == 2 * 183  # span, not count
    assert client.get_4d(client.tensor(1, (2, 3, 4, 5, 6)))[:5] == (1, 2, 3, 4, 5)
    for bad in (lambda: client.tensor(4, (1, 2, 3, 4)), lambda: client.tensor(1, (2, 0, 4)),
                lambda: client.tensor(1, (2, 3), (0, 1)), lambda: client.tensor_layout(1, 1, (2, 3, 4, 5, 6))):
        assert client.attempt(bad) == Failed(3)
    conv = client.conv((1, 1), (1, 1), (1, 1))
    assert client.conv_out(conv, client.tensor(1, (2, 3, 8, 8)), client.tensor(1, (4, 3, 3, 3))) == (2, 4, 8, 8)
    assert client.conv_out(conv, client.tensor(1, (2, 3, 1, 1)), client.tensor(1, (4, 3, 5, 5))) == (2, 4, 1, 1)
    bn = client.derive_bn(client.tensor_layout(5, 8, (2, 3, 4, 5, 6)), 1)
    assert client.describe(bn) == (5, 1, (1, 3, 1, 1, 1), (3, 1, 1, 1, 1), 12)
    act = client.activation(7, 6.0, 0.0, 1.0)
    assert client.get_activation(act) == (7, 6.0, 0.0, 1.0)


def test_destroyed_and_null_handles(emulated_device: EmulatedDevice) -> None:
    lib = emulated_device.miopen
    d = miopenTensorDescriptor_t()
    lib.miopenCreateTensorDescriptor(ctypes.byref(d))
    lib.miopenDestroyTensorDescriptor(d)
    with pytest.raises(errors.MIOpenBadParmError):
        lib.miopenSet4dTensorDescriptor(d, 1, 1, 1, 1, 1)
    assert "destroyed" in emulated_device.errors[-1][2]
    with pytest.raises(errors.NullArgumentError):  # the binding guards required handles itself
        lib.miopenSet4dTensorDescriptor(miopenTensorDescriptor_t(), 1, 1, 1, 1, 1)
    raw = lib.cfunc("miopenSet4dTensorDescriptor")  # ... and the device too, below the guard
    with pytest.raises(errors.MIOpenBadParmError):
        raw(miopenTensorDescriptor_t(), 1, 1, 1, 1, 1)
    assert "NULL" in emulated_device.errors[-1][2]
    with pytest.raises(errors.MIOpenBadParmError):
        lib.miopenCreateTensorDescriptor(None)


def test_calls_are_recorded(emulated_device: EmulatedDevice, client: Client) -> None:
    emulated_device.clear_calls()
    client.tensor_4d(1, 2, 3, 4, 5)
    assert emulated_device.call_names() == ["miopenCreateTensorDescriptor", "miopenSet4dTensorDescriptor"]
    call = emulated_device.calls[-1]
    assert (call.arg("dataType"), call.arg("n"), call.arg("w")) == (1, 2, 5)
    assert call.arg("tensorDesc") in emulated_device.live_objects("tensor")
    emulated_device.clear_calls()
    assert emulated_device.calls == []


@pytest.mark.parametrize("status", sorted(errors.STATUS_ERRORS))
def test_injected_status_surfaces_as_its_error(emulated_device: EmulatedDevice, client: Client, status: int) -> None:
    emulated_device.fail("miopenSet4dTensorDescriptor", status, nth=2)
    client.tensor_4d(1, 1, 2, 3, 4)  # the first call still succeeds
    with pytest.raises(errors.STATUS_ERRORS[status]) as info:
        client.tensor_4d(1, 1, 2, 3, 4)
    assert info.value.function == "miopenSet4dTensorDescriptor" and info.value.status == status
    client.tensor_4d(1, 1, 2, 3, 4)  # injected once only


def test_no_device() -> None:
    dev = EmulatedDevice("3.4", device_count=0)
    with pytest.raises(errors.MIOpenNoDeviceError):
        dev.miopen.miopenCreate(ctypes.byref(miopenHandle_t()))
    with pytest.raises(errors.HipError) as info:
        dev.hip.hipGetDeviceCount(ctypes.byref(ctypes.c_int()))
    assert info.value.status == 100


def test_handles_and_streams(emulated_device: EmulatedDevice) -> None:
    lib, hip = emulated_device.miopen, emulated_device.hip
    stream = ctypes.c_void_p()
    hip.hipStreamCreate(ctypes.byref(stream))
    h = miopenHandle_t()
    lib.miopenCreateWithStream(ctypes.byref(h), stream)
    got = ctypes.c_void_p()
    lib.miopenGetStream(h, ctypes.byref(got))
    assert got.value == stream.value
    lib.miopenSetStream(h, None)
    lib.miopenGetStream(h, ctypes.byref(got))
    assert got.value is None
    with pytest.raises(errors.MIOpenBadParmError):
        lib.miopenSetStream(h, 0x1234)
    lib.miopenEnableProfiling(h, True)
    ms = ctypes.c_float()
    lib.miopenGetKernelTime(h, ctypes.byref(ms))
    assert ms.value > 0
    lib.miopenDestroy(h)
    with pytest.raises(errors.MIOpenBadParmError):
        lib.miopenGetKernelTime(h, ctypes.byref(ms))
    hip.hipStreamDestroy(stream)
    assert not emulated_device.live_objects()


def test_hip_memory(emulated_device: EmulatedDevice) -> None:
    dev, hip = emulated_device, emulated_device.hip
    ptr = ctypes.c_void_p()
    hip.hipMalloc(ctypes.byref(ptr), 64)
    assert ptr.value is not None and ptr.value % 256 == 0 and dev.live_allocations() == {ptr.value: 64}
    src = np.arange(16, dtype=np.float32)
    hip.hipMemcpy(ptr, src.ctypes.data, 64, 1)
    other = dev.alloc(64)
    hip.hipMemcpy(other, ptr, 64, 3)
    hip.hipMemset(ptr, 0, 32)
    back = np.empty(16, np.float32)
    hip.hipMemcpy(back.ctypes.data, ptr, 64, 4)  # hipMemcpyDefault: the table decides the direction
    np.testing.assert_array_equal(back, np.r_[np.zeros(8), np.arange(8, 16)])
    np.testing.assert_array_equal(dev.download(other, (16,), np.float32), src)
    for bad in (lambda: hip.hipMemcpy(ptr, src.ctypes.data, 65, 1),  # overrun
                lambda: hip.hipMemcpy(src.ctypes.data, ptr, 64, 1),  # kind says host->device
                lambda: hip.hipMemset((ptr.value or 0) + 60, 0, 8)):
        with pytest.raises(errors.HipError):
            bad()
    assert len(dev.faults) == 3
    attrs = hipPointerAttribute_t()
    hip.hipPointerGetAttributes(ctypes.byref(attrs), ptr)
    assert (attrs.type, attrs.devicePointer) == (2, ptr.value)
    hip.hipPointerGetAttributes(ctypes.byref(attrs), src.ctypes.data)
    assert attrs.type != 2
    hip.hipFree(ptr)
    with pytest.raises(errors.HipError):
        hip.hipFree(ptr)  # double free
    dev.free(other)
    assert dev.live_allocations() == {}


def test_hip_device_and_events(emulated_device: EmulatedDevice) -> None:
    hip = emulated_device.hip
    count = ctypes.c_int()
    hip.hipGetDeviceCount(ctypes.byref(count))
    assert count.value == 1
    props = hipDeviceProp_t()
    hip.hipGetDevicePropertiesR0600(ctypes.byref(props), 0)
    assert props.gcnArchName == b"gfx908"
    assert EmulatedDevice("3.4", gcn_arch_name="gfx1100").hip.gcn_arch_name() == "gfx1100"
    start, stop = hipEvent_t(), hipEvent_t()
    hip.hipEventCreate(ctypes.byref(start))
    hip.hipEventCreate(ctypes.byref(stop))
    hip.hipEventRecord(start, None)
    hip.hipEventRecord(stop, None)
    hip.hipEventSynchronize(stop)
    ms = ctypes.c_float()
    hip.hipEventElapsedTime(ctypes.byref(ms), start, stop)
    assert 0 < ms.value < 1
    hip.hipEventDestroy(start)
    hip.hipEventDestroy(stop)


def test_test_helpers(emulated_device: EmulatedDevice) -> None:
    dev = emulated_device
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    ptr = dev.upload(a)
    np.testing.assert_array_equal(dev.download(ptr, a.shape, np.float32), a)
    np.testing.assert_array_equal(dev.download(ptr, (3, 2), np.float32, strides=(1, 12)), a.reshape(2, 12)[:, :3].T)
    dev.fill(ptr, 7.0)
    assert (dev.download(ptr, (24,), np.float32) == 7).all()
    assert np.isnan(dev.download(dev.alloc(8), (2,), np.float32)).all()  # fresh memory is garbage


def test_engine_fixture_registers_the_emulated_engine(emulated_device: EmulatedDevice,
                                                      emulated_miopen_engine: object) -> None:
    from hipdnn.engines import get_engine

    assert get_engine("MIOPEN_ENGINE") is emulated_miopen_engine
    lib, hip = emulated_miopen_engine.libraries()  # type: ignore[attr-defined]
    assert lib is emulated_device.miopen and hip is emulated_device.hip
