"""hipdnn.direct: calling MIOpen functions with arrays, on a library of injected fakes that record
what C would receive (the real library runs it in tests/live and the examples)."""

from __future__ import annotations

import ctypes
from ctypes import POINTER, c_float, c_size_t, c_void_p, cast
from typing import Any

import numpy as np
import pytest

from hipdnn.core.errors import ArgumentError, VariantPackError, WorkspaceError
from hipdnn.direct import DeviceArray, Session, SessionClosedError
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
        device = dst if kind == 1 else src  # hipMemcpyHostToDevice = 1
        if not any(a <= device < a + len(b) for a, b in self.blocks.items()):  # not a live block:
            raise AssertionError(f"hipMemcpy of freed device memory {device:#x}")  # (a segfault on a GPU)
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


# ---------------------------------------------------------------- use after close
def _lib(fake: FakeMIOpen) -> Any:
    return MIOpenLibrary.from_functions(fake.functions(), version=(3, 5, 1))


def test_arrays_and_descriptors_of_a_closed_session_are_refused_by_name(fake: FakeMIOpen) -> None:
    """After close: reading, writing or passing its arrays and descriptors is a SessionClosedError
    naming the array (or call and parameter), never hipMemcpy from a freed address (a segfault,
    test_use_after_close_never_crashes) nor a destroyed descriptor handed to MIOpen."""
    a = Session(_lib(fake), FakeHip())
    x, pool = a.to_device(np.ones((1, 1, 4, 4), np.float32)), _pool(a)
    a.close()
    live = set(fake.live)
    for use in (x.numpy, lambda: x.copy_from(np.ones((1, 1, 4, 4), np.float32)),
                lambda: x.__cuda_array_interface__):
        with pytest.raises(SessionClosedError, match=r"DeviceArray\(shape=\(1, 1, 4, 4\), dtype=float32\) "
                                                     r"cannot be used: its Session is closed"):
            use()
    for use in (lambda: a.to_device(np.ones(2)), lambda: a.empty((2,)), lambda: a.call("miopenCreate", None),
                lambda: a.query("miopenGetPoolingForwardOutputDim", pool, x), lambda: a.descriptor("Pooling"),
                lambda: a.tensor(np.ones(3, np.float32))):
        with pytest.raises(SessionClosedError, match="the Session is closed"):
            use()
    assert fake.live == live  # nothing made for a closed session (tensor() made a descriptor before)
    with Session(_lib(fake), FakeHip()) as b:  # A's objects passed to a call of session B
        y = b.empty((1, 1, 2, 2))
        with pytest.raises(SessionClosedError, match=r"miopenPoolingForward\(xDesc\): DeviceArray.*its Session is closed"):
            b.call("miopenPoolingForward", _pool(b), 1.0, x, 0.0, y, False, None, 0)
        with pytest.raises(SessionClosedError, match=r"miopenPoolingForward\(poolDesc\): .*destroyed "
                                                     r"\(miopenDestroyPoolingDescriptor\) when its Session closed"):
            b.call("miopenPoolingForward", pool, 1.0, b.empty((1, 1, 4, 4)), 0.0, y, False, None, 0)
        with pytest.raises(SessionClosedError, match=r"Session.tensor: DeviceArray.*its Session is closed"):
            b.tensor(x)
        assert mt.pointer_value(pool) == 0  # NULL in place: the raw binding refuses it too
        with pytest.raises(errors.NullArgumentError):  # destroying it twice included
            b.lib.miopenDestroyPoolingDescriptor(pool)
        b.call("miopenPoolingForward", _pool(b), 1.0, b.empty((1, 1, 4, 4)), 0.0, y, False, None, 0)  # B goes on
    x.free()  # idempotent after close
    a.close()


def test_free_and_close_from_many_threads_free_once(fake: FakeMIOpen) -> None:
    import threading

    hip = FakeHip()
    s = Session(_lib(fake), hip)
    arrays = [s.to_device(np.full(8, i, np.float32)) for i in range(4)]
    _pool(s)
    threads = [threading.Thread(target=f) for f in [s.close] * 4 + [arr.free for arr in arrays]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert hip.blocks == {} and fake.live == set()  # hipFree/destroy each once (a second raises KeyError)
    assert {arr.freed for arr in arrays} <= {"it was freed", "its Session is closed"}


PROBE = r"""
import ctypes, sys
import numpy as np
sys.path.insert(0, {root!r})
from hipdnn.direct import Session, SessionClosedError
from miopen_ctypes import MIOpenLibrary

class Hip:  # device memory on the host: a read of a freed (NULL) address is a real segfault
    def __init__(self): self.blocks = {{}}
    def hipMalloc(self, ref, n):
        b = ctypes.create_string_buffer(n); self.blocks[ctypes.addressof(b)] = b; ref._obj.value = ctypes.addressof(b)
    def hipFree(self, p): del self.blocks[p.value]
    def hipMemcpy(self, dst, src, n, kind): ctypes.memmove(dst, src, n)

lib = MIOpenLibrary.from_functions({{}}, version=(3, 5, 1))
s = Session(lib, Hip())
x = s.to_device(np.arange(4, dtype=np.float32))
s.close()
try:
    x.{use}
except SessionClosedError as exc:
    print("typed:", exc)
left_open = Session(lib, Hip())
kept = left_open.to_device(np.ones(3, np.float32))  # never closed: the interpreter exits with it
"""


@pytest.mark.parametrize("use", ["numpy()", "copy_from(np.zeros(4, np.float32))"])
def test_use_after_close_never_crashes(use: str) -> None:
    """In a child process, so a segfault is a failing test: before the fix numpy() after close
    was hipMemcpy from address 0 (SIGSEGV); exiting with a session left open is clean."""
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", PROBE.format(root=root, use=use)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "typed:" in done.stdout and "its Session is closed" in done.stdout, done.stdout


# ---------------------------------------------------------------- bfloat16
def test_bfloat16_torch_tensors_go_in_and_come_back(session: Session, fake: FakeMIOpen) -> None:
    """torch's .numpy() refuses bfloat16 ("unsupported ScalarType BFloat16"): to_device takes
    the tensor's bits (ml_dtypes.bfloat16), numpy()/torch() give them back, and a call describes
    it as miopenBFloat16."""
    torch = pytest.importorskip("torch")
    t = torch.randn(2, 3, 4, 6).to(torch.bfloat16)
    x = session.to_device(t)
    assert x.dtype.name == "bfloat16" and x.nbytes == t.numel() * 2
    back = x.torch()
    assert back.dtype == torch.bfloat16 and torch.equal(back, t)
    assert x.numpy().astype(np.float32).tolist() == t.float().numpy().tolist()
    y = session.empty((2, 3, 2, 3), torch.bfloat16)
    session.call("miopenPoolingForward", _pool(session), 1.0, x, 0.0, y, False, None, 0)
    assert fake.calls[-1][1]["x"][0] == int(miopenDataType_t.miopenBFloat16)
    x.copy_from(t * 2)
    assert torch.equal(x.torch(), t * 2)
    with pytest.raises(VariantPackError, match="copy_from: dtype float32"):
        x.copy_from(np.zeros(t.shape, np.float32))


# ---------------------------------------------------------------- argument checks
def test_kthvalue_pairs_its_size_t_indices_and_takes_the_header_defaults() -> None:
    """miopenKthvalueForward's indices are "size_t* indices" (not void*): an array there was left
    unpaired and every argument after it shifted, a TypeError about the argument count; dim and
    keepDim have C++ defaults in miopen.h (-1, false)."""
    seen: list[Any] = []
    lib = MIOpenLibrary.from_functions({**FakeMIOpen().functions(), "miopenKthvalueForward": lambda *a: seen.append(a)},
                                       version=(3, 5, 1))
    with Session(lib, FakeHip()) as s:
        x, y = s.empty((4, 8)), s.empty((4,))
        idx = s.empty((4,), np.int64)
        s.call("miopenKthvalueForward", x, y, idx, 3)
        args = seen[-1]
        assert ctypes.cast(args[6], c_void_p).value == idx.ptr
        assert (args[7], args[8], args[9]) == (3, -1, False)
        s.call("miopenKthvalueForward", x, y, idx, 2, 1, True)
        assert (seen[-1][7], seen[-1][8], seen[-1][9]) == (2, 1, True)
        # the header's C type, not the ctypes one (c_ulong on Linux, c_ulonglong on Windows)
        with pytest.raises(VariantPackError, match=r"miopenKthvalueForward\(indices\): the C parameter is "
                                                   r"size_t\* \(8-byte elements\); .*INT32 has 4-byte"):
            s.call("miopenKthvalueForward", x, y, s.empty((4,), np.int32), 3)
        assert len(seen) == 2


def test_wrong_typed_arguments_name_the_parameter(session: Session) -> None:
    x, y = session.empty((1, 1, 4, 4)), session.empty((1, 1, 2, 2))
    with pytest.raises(ArgumentError, match=r"miopenPoolingForward\(poolDesc\): the C parameter is "
                                            r"miopenPoolingDescriptor_t; got 'pool'"):
        session.call("miopenPoolingForward", "pool", 1.0, x, 0.0, y, False, None, 0)
    with pytest.raises(ArgumentError, match=r"miopenPoolingForward\(poolDesc\).*got miopenTensorDescriptor_t"):
        session.call("miopenPoolingForward", session.tensor(x), 1.0, x, 0.0, y, False, None, 0)
    with pytest.raises(ArgumentError, match=r"miopenSet2dPoolingDescriptor\(windowHeight\): the C parameter "
                                            r"is int; got 2\.5$"):  # not c_int (c_long on Windows)
        session.descriptor("Pooling", "miopenSet2dPoolingDescriptor", miopenPoolingMode_t.miopenPoolingMax,
                           2.5, 2, 0, 0, 2, 2)
    # the header's names on every platform (ctypes says c_uint for an enum, c_ulong or
    # c_ulonglong for size_t): never a ctypes type name
    with pytest.raises(ArgumentError, match=r"miopenSet2dPoolingDescriptor\(mode\): the C parameter is "
                                            r"miopenPoolingMode_t; got 'max'$") as info:
        session.descriptor("Pooling", "miopenSet2dPoolingDescriptor", "max", 2, 2, 0, 0, 2, 2)
    assert "c_" not in str(info.value)
    with pytest.raises(ArgumentError, match=r"miopenPoolingForward\(workSpaceSize\): the C parameter is "
                                            r"size_t; got 1\.5$") as info:
        session.call("miopenPoolingForward", _pool(session), 1.0, x, 0.0, y, False, None, 1.5)
    with pytest.raises(ArgumentError, match=r"miopenPoolingForward\(poolDesc\): the C parameter is "
                                            r"miopenPoolingDescriptor_t; got miopenTensorDescriptor_t$"):
        session.call("miopenPoolingForward", session.tensor(x), 1.0, x, 0.0, y, False, None, 0)
    with pytest.raises(ArgumentError, match=r"'miopenPoolingForwad' is not a function of miopen\.h; did you "
                                            r"mean miopenPoolingForward"):
        session.call("miopenPoolingForwad")
    session.call("miopenPoolingForward", _pool(session), 1.0, x, 0.0, y, False, None, 0)  # a retry works


def test_a_descriptor_larger_than_its_array_is_refused(fake: FakeMIOpen) -> None:
    """A descriptor given as is with a DeviceArray as its data: the array must hold what the
    descriptor describes, or MIOpen reads/writes past it."""
    fns = fake.functions()

    def rank(desc: Any, out: Any) -> None:
        out[0] = len(fake.tensors.get(mt.pointer_value(desc), (0, []))[1])

    def nbytes(desc: Any, out: Any) -> None:
        out[0] = 4 * int(np.prod(fake.tensors[mt.pointer_value(desc)][1]))

    fns.update(miopenGetTensorDescriptorSize=rank, miopenGetTensorNumBytes=nbytes)
    with Session(MIOpenLibrary.from_functions(fns, version=(3, 5, 1)), FakeHip()) as s:
        x, y = s.empty((1, 1, 4, 4)), s.empty((1, 1, 2, 2))
        big = s.tensor(np.zeros((1, 1, 8, 8), np.float32))
        before = len(fake.calls)
        with pytest.raises(VariantPackError, match=r"miopenPoolingForward\(x\): the array holds 64 bytes, "
                                                   r"its descriptor 'xDesc' describes 256"):
            s.call("miopenPoolingForward", _pool(s), 1.0, big, x, 0.0, y, False, None, 0)
        assert len(fake.calls) == before + 1  # only the pooling descriptor's setter ran
        s.call("miopenPoolingForward", _pool(s), 1.0, s.tensor(x), x, 0.0, y, False, None, 0)
        assert fake.calls[-1][0] == "miopenPoolingForward"

        class Gpu:  # a foreign GPU array (torch on ROCm, CuPy): only the CUDA array interface
            def __init__(self, array: DeviceArray) -> None:
                self.__cuda_array_interface__ = array.__cuda_array_interface__

        with pytest.raises(VariantPackError, match=r"miopenPoolingForward\(x\): the array holds 64 bytes"):
            s.call("miopenPoolingForward", _pool(s), 1.0, big, Gpu(x), 0.0, y, False, None, 0)
        s.call("miopenPoolingForward", _pool(s), 1.0, s.tensor(x), Gpu(x), 0.0, y, False, None, 0)
        assert fake.calls[-1][1]["x_ptr"] == x.ptr


def test_every_workspace_rule_names_real_parameters() -> None:
    """Each rule of WORKSPACE_RULES asks its size query with parameters the call has, as many as
    the query takes (the handle and the trailing out-parameter(s) aside), and names a pointer
    the call has: a misspelt name would be a KeyError at call time, a wrong count a TypeError."""
    from hipdnn.direct import WORKSPACE_RULES
    from miopen_ctypes.prototypes import PROTOTYPES

    class Probe:
        def __init__(self, function: str) -> None:
            self.params = PROTOTYPES[function].argnames
            self.args = {p: 1 for p in self.params}
            self.asked: list[str] = []

        def query_all(self, function: str, *names: Any) -> Any:
            proto = PROTOTYPES[function]
            inputs = [p for p in proto.argnames if p != "handle"]
            outs = 2 if function == "miopenGetRNNTempSpaceSizes" else 1
            assert len(names) == len(inputs) - outs, (function, names, inputs)
            assert all(n in self.params for n in names if isinstance(n, str)), (function, names)
            self.asked.append(function)
            return (0, 0) if outs == 2 else 0

        def query(self, function: str, *names: Any) -> int:
            return int(self.query_all(function, *names))

    assert {"miopenPReLUBackward", "miopenRNNForward", "miopenSoftMarginLossForward"} <= set(WORKSPACE_RULES)
    for function, rules in WORKSPACE_RULES.items():
        probe = Probe(function)
        for pointer, required, _ in rules:
            assert pointer in probe.params, (function, pointer)
            required(probe)  # type: ignore[arg-type]
        assert len(probe.asked) == len(rules), function
