"""hipdnn.direct: calling MIOpen functions with arrays, on a library of injected fakes that record
what C would receive (the real library runs it in tests/live and the examples)."""

from __future__ import annotations

import ctypes
from ctypes import POINTER, c_float, c_size_t, c_void_p, cast
from typing import Any

import numpy as np
import pytest

from hipdnn.core.errors import VariantPackError, WorkspaceError
from hipdnn.direct import DeviceArray, Session
from miopen_ctypes import MIOpenLibrary, errors
from miopen_ctypes import types as mt
from miopen_ctypes.enums import miopenDataType_t, miopenPoolingMode_t


class FakeHip:
    """hipMalloc/hipFree/hipMemcpy on host memory."""

    def __init__(self) -> None:
        self.blocks: dict[int, Any] = {}

    def hipMalloc(self, ref: Any, size: int) -> None:
        block = ctypes.create_string_buffer(size)
        self.blocks[ctypes.addressof(block)] = block
        ref._obj.value = ctypes.addressof(block)

    def hipFree(self, ptr: Any) -> None:
        del self.blocks[ptr.value]

    def hipMemcpy(self, dst: int, src: int, size: int, kind: int) -> None:
        ctypes.memmove(dst, src, size)


class FakeMIOpen:
    """The few functions the tests call; records descriptors and calls."""

    def __init__(self) -> None:
        self.next_id = 0x1000
        self.tensors: dict[int, tuple[int, list[int], list[int]]] = {}
        self.live: set[int] = set()
        self.calls: list[tuple[str, Any]] = []

    def _new(self, out: Any, kind: Any) -> None:
        self.next_id += 0x10
        self.live.add(self.next_id)
        out[0] = cast(c_void_p(self.next_id), kind)

    def _gone(self, handle: Any) -> None:
        self.live.remove(mt.pointer_value(handle))

    def functions(self) -> dict[str, Any]:
        def set_tensor(desc: Any, dtype: int, n: int, dims: Any, strides: Any) -> None:
            self.tensors[mt.pointer_value(desc)] = (dtype, dims[:n], strides[:n])

        def ws_size(pool: Any, y: Any, out: Any) -> None:
            out[0] = 2 * int(np.prod(self.tensors[mt.pointer_value(y)][1]))

        def output_dim(pool: Any, x: Any, n: Any, c: Any, h: Any, w: Any) -> None:
            dims = self.tensors[mt.pointer_value(x)][1]
            n[0], c[0], h[0], w[0] = dims[0], dims[1], dims[2] // 2, dims[3] // 2

        def forward(handle: Any, pool: Any, alpha: Any, xd: Any, x: Any, beta: Any, yd: Any, y: Any,
                    do_backward: bool, ws: Any, ws_size: int) -> None:
            self.calls.append(("miopenPoolingForward", {
                "alpha": cast(alpha, POINTER(c_float))[0], "beta": cast(beta, POINTER(c_float))[0],
                "x": self.tensors[mt.pointer_value(xd)], "x_ptr": x, "y": self.tensors[mt.pointer_value(yd)],
                "y_ptr": y, "workspace": (ws, ws_size), "do_backward": do_backward,
                "handle": mt.pointer_value(handle)}))

        return {
            "miopenCreate": lambda out: self._new(out, mt.miopenHandle_t),
            "miopenDestroy": self._gone,
            "miopenCreateTensorDescriptor": lambda out: self._new(out, mt.miopenTensorDescriptor_t),
            "miopenDestroyTensorDescriptor": self._gone,
            "miopenSetTensorDescriptor": set_tensor,
            "miopenCreatePoolingDescriptor": lambda out: self._new(out, mt.miopenPoolingDescriptor_t),
            "miopenDestroyPoolingDescriptor": self._gone,
            "miopenSet2dPoolingDescriptor": lambda *a: self.calls.append(("set2d", a[1:])),
            "miopenPoolingGetWorkSpaceSizeV2": ws_size,
            "miopenGetPoolingForwardOutputDim": output_dim,
            "miopenPoolingForward": forward,
            "miopenSoftmaxForward_V2": lambda *a: 3,  # miopenStatusBadParm
            "miopenCreateReduceTensorDescriptor": lambda out: self._new(out, mt.miopenReduceTensorDescriptor_t),
            "miopenDestroyReduceTensorDescriptor": self._gone,
            "miopenGetReductionWorkspaceSize": lambda h, r, a, c, out: out.__setitem__(0, 0),
            "miopenGetReductionIndicesSize": lambda h, r, a, c, out: out.__setitem__(0, 0),
            "miopenReduceTensor": lambda h, r, i, isz, w, wsz, alpha, ad, a, beta, cd, c: self.calls.append(
                ("miopenReduceTensor", {"a": self.tensors[mt.pointer_value(ad)][1], "a_ptr": a,
                                        "c": self.tensors[mt.pointer_value(cd)][1], "c_ptr": c})),
        }


@pytest.fixture
def fake() -> FakeMIOpen:
    return FakeMIOpen()


@pytest.fixture
def session(fake: FakeMIOpen) -> Any:
    lib = MIOpenLibrary.from_functions(fake.functions(), version=(3, 5, 1))
    with Session(lib, FakeHip()) as s:
        yield s
    assert fake.live == set(), "the session left MIOpen objects alive"


def _pool(s: Session) -> Any:
    return s.descriptor("Pooling", "miopenSet2dPoolingDescriptor", miopenPoolingMode_t.miopenPoolingMax,
                        2, 2, 0, 0, 2, 2)


def test_arrays_become_descriptor_and_pointer(session: Session, fake: FakeMIOpen) -> None:
    x = session.to_device(np.arange(2 * 3 * 4 * 6, dtype=np.float32).reshape(2, 3, 4, 6))
    y = session.empty((2, 3, 2, 3))
    pool = _pool(session)
    assert fake.calls[-1] == ("set2d", (0, 2, 2, 0, 0, 2, 2))
    ws = session.workspace(session.query("miopenPoolingGetWorkSpaceSizeV2", pool, y))
    session.call("miopenPoolingForward", pool, 1.0, x, 0.0, y, True, ws)
    name, seen = fake.calls[-1]
    assert name == "miopenPoolingForward"
    assert (seen["alpha"], seen["beta"]) == (1.0, 0.0)  # host floats, as MIOpen reads them
    assert seen["x"] == (int(miopenDataType_t.miopenFloat), [2, 3, 4, 6], [72, 24, 6, 1])
    assert seen["y"][1:] == ([2, 3, 2, 3], [18, 6, 3, 1])
    assert (seen["x_ptr"], seen["y_ptr"]) == (x.ptr, y.ptr)
    assert seen["workspace"] == (ws.ptr, 2 * 36)
    assert seen["handle"] != 0
    assert len([h for h in fake.live if h not in (mt.pointer_value(pool),)]) == 1  # only the handle


def test_upper_case_data_names_pair_with_their_descriptors(session: Session, fake: FakeMIOpen) -> None:
    """miopenReduceTensor names its tensors "aDesc, A" and "cDesc, C": an array fills both too."""
    a, c = session.empty((4, 8, 16)), session.empty((4, 1, 16))
    reduce = session.descriptor("ReduceTensor", None)
    session.call("miopenReduceTensor", reduce, None, 0, None, 0, 1.0, a, 0.0, c)
    name, seen = fake.calls[-1]
    assert name == "miopenReduceTensor"
    assert (seen["a"], seen["a_ptr"], seen["c"], seen["c_ptr"]) == ([4, 8, 16], a.ptr, [4, 1, 16], c.ptr)


def test_workspace_too_small_is_refused_before_the_call(session: Session, fake: FakeMIOpen) -> None:
    x, y = session.empty((1, 1, 4, 4)), session.empty((1, 1, 2, 2))
    pool = _pool(session)
    with pytest.raises(WorkspaceError, match=r"miopenPoolingForward: workSpace holds 7 bytes, MIOpen needs 8"):
        session.call("miopenPoolingForward", pool, 1.0, x, 0.0, y, True, session.workspace(7))
    with pytest.raises(WorkspaceError, match="workSpace is NULL but MIOpen needs 8 bytes"):
        session.call("miopenPoolingForward", pool, 1.0, x, 0.0, y, True, None, 0)
    assert not [c for c in fake.calls if c[0] == "miopenPoolingForward"]
    session.call("miopenPoolingForward", pool, 1.0, x, 0.0, y, False, None, 0)  # no indices kept
    session.call("miopenPoolingForward", pool, 1.0, x, 0.0, y, True, session.workspace(8))  # retry works
    assert len([c for c in fake.calls if c[0] == "miopenPoolingForward"]) == 2


def test_host_arrays_describe_but_never_pass_as_device_pointers(session: Session) -> None:
    pool = _pool(session)
    assert session.query("miopenGetPoolingForwardOutputDim", pool, np.zeros((2, 3, 8, 6), np.float32)) == (2, 3, 4, 3)
    with pytest.raises(VariantPackError, match=r"miopenPoolingForward\(x\): a host array.*to_device"):
        session.call("miopenPoolingForward", pool, 1.0, np.zeros((1, 1, 4, 4), np.float32), 0.0,
                     session.empty((1, 1, 2, 2)), False, None, 0)
    with pytest.raises(VariantPackError, match="UINT8 has no MIOpen data type; valid: FLOAT"):
        session.tensor(np.zeros(3, np.uint8))
    with pytest.raises(VariantPackError, match="complex64 is not supported"):
        session.tensor(np.zeros(3, np.complex64))


def test_failing_status_names_the_call_and_the_session_goes_on(session: Session) -> None:
    x, y = session.empty((2, 5)), session.empty((2, 5))
    with pytest.raises(errors.MIOpenBadParmError, match="miopenSoftmaxForward_V2"):
        session.call("miopenSoftmaxForward_V2", 1.0, x, 0.0, y, 1, 1)
    assert session.query("miopenGetPoolingForwardOutputDim", _pool(session), x.numpy().reshape(1, 1, 2, 5))[2:] == (1, 2)


def test_argument_count_errors_name_the_parameters(session: Session) -> None:
    with pytest.raises(TypeError, match=r"miopenPoolingForward: missing an argument for 'workSpace'"):
        session.call("miopenPoolingForward", _pool(session), 1.0, session.empty((1, 1, 2, 2)), 0.0,
                     session.empty((1, 1, 1, 1)), True)
    with pytest.raises(ValueError, match=r"kinds: .*Pooling"):
        session.descriptor("Poolng")


def test_close_frees_everything_and_refuses_reuse(fake: FakeMIOpen) -> None:
    hip = FakeHip()
    s = Session(MIOpenLibrary.from_functions(fake.functions(), version=(3, 5, 1)), hip)
    array = s.to_device(np.ones(4, np.float32))
    np.testing.assert_array_equal(array.numpy(), np.ones(4, np.float32))
    _pool(s)
    s.tensor(array)
    assert fake.live and hip.blocks
    s.close()
    assert fake.live == set() and hip.blocks == {} and array.ptr == 0
    with pytest.raises(RuntimeError, match="closed"):
        s.empty((1,))
    s.close()  # idempotent
    assert isinstance(array, DeviceArray)
    assert c_size_t(array.nbytes).value == 16


@pytest.mark.parametrize("make", [
    lambda: np.zeros((4, 6), np.float32)[::-1],  # negative strides: MIOpen would read past it
    lambda: np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), (2**32 + 5,), (0,)),
    lambda: np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), (3, 2), (2**33, 0)),
], ids=["negative_stride", "dim_beyond_c_int", "stride_beyond_c_int"])
def test_descriptors_refuse_what_a_c_int_cannot_hold(session: Session, fake: FakeMIOpen,
                                                     make: Any) -> None:
    """miopenSetTensorDescriptor takes C ints: a dim of 2**32 + 5 would arrive as 5 (a
    descriptor of another tensor) and a negative stride makes MIOpen read outside the array;
    both are a VariantPackError with the valid range, before any descriptor is made."""
    before = dict(fake.tensors)
    with pytest.raises(VariantPackError, match=r"C ints; valid: 0\.\.2\*\*31-1"):
        session.tensor(make())
    assert fake.tensors == before
