"""The emulated device's convolutions: math vs PyTorch, immediate mode, Find 1.0, Find 2.0, workspaces."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from emulated._client import Client
from emulated._conv import MIB
from emulated._testing import DevTensor, f32, fetch, put, scratch
from emulated.device import EmulatedDevice

from miopen_ctypes import errors
from miopen_ctypes.types import (
    miopenConvAlgoPerf_t,
    miopenConvSolution_t,
    miopenFindOptions_t,
    miopenProblem_t,
    miopenSolution_t,
    miopenTensorArgument_t,
)

torch = pytest.importorskip("torch")

X_DIMS, W_DIMS = (2, 4, 7, 6), (6, 2, 3, 3)
PADS, STRIDES, DILS, GROUPS = (1, 0), (2, 1), (1, 2), 2


@pytest.fixture
def client(emulated_device: EmulatedDevice) -> Iterator[Client]:
    with Client(emulated_device.miopen) as c:
        yield c


def _reference(direction: str, x: np.ndarray, w: np.ndarray, dy: np.ndarray | None = None) -> np.ndarray:
    tx, tw = torch.from_numpy(x.astype(np.float64)), torch.from_numpy(w.astype(np.float64))
    kw = {"stride": STRIDES, "padding": PADS, "dilation": DILS, "groups": GROUPS}
    if direction == "fwd":
        return torch.nn.functional.conv2d(tx, tw, **kw).numpy()
    assert dy is not None
    tdy = torch.from_numpy(dy.astype(np.float64))
    if direction == "bwd":
        return torch.nn.grad.conv2d_input(tx.shape, tw, tdy, **kw).numpy()
    return torch.nn.grad.conv2d_weight(tx, tw.shape, tdy, **kw).numpy()


class Problem:
    """x, w, dy on the device plus the conv descriptor; outputs allocated per call."""

    def __init__(self, dev: EmulatedDevice, client: Client, layout: str | None, dtype: int = 1) -> None:
        rng = np.random.default_rng(7)
        self.dev, self.client, self.layout, self.dtype = dev, client, layout, dtype
        self.xa = rng.standard_normal(X_DIMS).astype(np.float32)
        self.wa = rng.standard_normal(W_DIMS).astype(np.float32)
        self.conv = client.conv(PADS, STRIDES, DILS, groups=GROUPS)
        self.x, self.w = put(dev, client, self.xa, dtype, layout), put(dev, client, self.wa, dtype, layout)
        y_dims = client.conv_out(self.conv, self.x.desc, self.w.desc)
        self.dya = rng.standard_normal(y_dims).astype(np.float32)
        self.dy = put(dev, client, self.dya, dtype, layout)
        self.handle = client.handle()

    def out(self, direction: str) -> DevTensor:
        dims = {"fwd": self.dy.dims, "bwd": X_DIMS, "wrw": W_DIMS}[direction]
        return scratch(self.dev, self.client, dims, self.dtype, self.layout)

    def descs(self, direction: str, out: DevTensor) -> tuple[Any, ...]:
        """(first, second, conv, last) descriptors in the argument order of that direction."""
        if direction == "fwd":
            return (self.w.desc, self.x.desc, self.conv, out.desc)
        if direction == "bwd":
            return (self.dy.desc, self.w.desc, self.conv, out.desc)
        return (self.dy.desc, self.x.desc, self.conv, out.desc)

    def expected(self, direction: str) -> np.ndarray:
        return _reference(direction, self.xa, self.wa, self.dya)


PREFIX = {"fwd": "miopenConvolutionForward", "bwd": "miopenConvolutionBackwardData",
          "wrw": "miopenConvolutionBackwardWeights"}


def _solutions(lib: Any, p: Problem, direction: str, out: DevTensor) -> list[miopenConvSolution_t]:
    count = ctypes.c_size_t()
    getattr(lib, PREFIX[direction] + "GetSolutionCount")(p.handle, *p.descs(direction, out), ctypes.byref(count))
    sols = (miopenConvSolution_t * count.value)()
    got = ctypes.c_size_t()
    getattr(lib, PREFIX[direction] + "GetSolution")(p.handle, *p.descs(direction, out), count.value,
                                                    ctypes.byref(got), sols)
    return list(sols[: got.value])


def _immediate(lib: Any, p: Problem, direction: str, out: DevTensor, sol: Any, ws: int | None, ws_size: int) -> None:
    d = p.descs(direction, out)
    if direction == "fwd":
        args = (d[0], p.w.ptr, d[1], p.x.ptr, d[2], d[3], out.ptr)
    elif direction == "bwd":
        args = (d[0], p.dy.ptr, d[1], p.w.ptr, d[2], d[3], out.ptr)
    else:
        args = (d[0], p.dy.ptr, d[1], p.x.ptr, d[2], d[3], out.ptr)
    getattr(lib, PREFIX[direction] + "Immediate")(p.handle, *args, ws, ws_size, sol.solution_id)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("direction", ["fwd", "bwd", "wrw"])
def test_immediate_mode_matches_torch(emulated_device: EmulatedDevice, client: Client, direction: str,
                                      layout: str) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    p = Problem(dev, client, layout)
    out = p.out(direction)
    sols = _solutions(lib, p, direction, out)
    assert [s.workspace_size for s in sols] == [16 * MIB, 1 * MIB, 0]  # best first
    assert [s.time for s in sols] == sorted(s.time for s in sols)
    ws = dev.alloc(sols[1].workspace_size)
    dev.fill(ws, 0.0)
    getattr(lib, PREFIX[direction] + "CompileSolution")(p.handle, *p.descs(direction, out), sols[1].solution_id)
    _immediate(lib, p, direction, out, sols[1], ws, sols[1].workspace_size)
    np.testing.assert_allclose(fetch(dev, out), p.expected(direction), rtol=1e-4, atol=1e-4)
    assert np.isnan(dev.download(ws, (4,), np.float32)).all()  # the used workspace was scribbled


def test_immediate_rejects_small_workspace_and_foreign_ids(emulated_device: EmulatedDevice, client: Client) -> None:
    lib = emulated_device.miopen
    p = Problem(emulated_device, client, None)
    out = p.out("fwd")
    best = _solutions(lib, p, "fwd", out)[0]
    ws = emulated_device.alloc(MIB)
    with pytest.raises(errors.MIOpenBadParmError):
        _immediate(lib, p, "fwd", out, best, ws, MIB)  # needs 16 MiB
    foreign = miopenConvSolution_t(solution_id=999)
    with pytest.raises(errors.MIOpenBadParmError):
        _immediate(lib, p, "fwd", out, foreign, ws, MIB)
    size = ctypes.c_size_t()
    lib.miopenConvolutionForwardGetSolutionWorkspaceSize(p.handle, *p.descs("fwd", out), best.solution_id,
                                                         ctypes.byref(size))
    assert size.value == best.workspace_size


def test_conv_precision_types_match_torch(emulated_device: EmulatedDevice, client: Client) -> None:
    lib = emulated_device.miopen
    for dtype, tol in ((0, 2e-2), (5, 1e-1)):
        p = Problem(emulated_device, client, "NHWC", dtype)
        out = p.out("fwd")
        direct = _solutions(lib, p, "fwd", out)[-1]
        _immediate(lib, p, "fwd", out, direct, None, 0)
        want = _reference("fwd", fetch(emulated_device, p.x), fetch(emulated_device, p.w))
        np.testing.assert_allclose(fetch(emulated_device, out), want, rtol=tol, atol=tol)


def test_mixed_layouts_and_types_rejected(emulated_device: EmulatedDevice, client: Client) -> None:
    lib = emulated_device.miopen
    p = Problem(emulated_device, client, None)
    nhwc_out = scratch(emulated_device, client, p.dy.dims, layout="NHWC")
    count = ctypes.c_size_t()
    with pytest.raises(errors.MIOpenBadParmError):
        lib.miopenConvolutionForwardGetSolutionCount(p.handle, p.w.desc, p.x.desc, p.conv, nhwc_out.desc,
                                                     ctypes.byref(count))
    half_out = scratch(emulated_device, client, p.dy.dims, dtype=0)
    with pytest.raises(errors.MIOpenBadParmError):
        lib.miopenConvolutionForwardGetSolutionCount(p.handle, p.w.desc, p.x.desc, p.conv, half_out.desc,
                                                     ctypes.byref(count))


def test_find_1_0_then_execute(emulated_device: EmulatedDevice, client: Client) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    p = Problem(dev, client, None)
    out = p.out("fwd")
    size = ctypes.c_size_t()
    lib.miopenConvolutionForwardGetWorkSpaceSize(p.handle, p.w.desc, p.x.desc, p.conv, out.desc, ctypes.byref(size))
    assert size.value == 16 * MIB  # max over the solvers
    with pytest.raises(errors.MIOpenUnknownError):  # no invoker before a Find
        lib.miopenConvolutionForward(p.handle, f32(1), p.x.desc, p.x.ptr, p.w.desc, p.w.ptr, p.conv, 1, f32(0),
                                     out.desc, out.ptr, None, 0)
    ws = dev.alloc(MIB)
    perf = (miopenConvAlgoPerf_t * 4)()
    n = ctypes.c_int()
    lib.miopenFindConvolutionForwardAlgorithm(p.handle, p.x.desc, p.x.ptr, p.w.desc, p.w.ptr, p.conv, out.desc,
                                              out.ptr, 4, ctypes.byref(n), perf, ws, MIB, True)
    assert [(perf[i].fwd_algo, perf[i].memory) for i in range(n.value)] == [(3, MIB), (1, 0)]  # 16 MiB skipped
    for bad in ((2, 0), (1, 1)):
        with pytest.raises(errors.MIOpenBadParmError):
            lib.miopenConvolutionForward(p.handle, f32(bad[0]), p.x.desc, p.x.ptr, p.w.desc, p.w.ptr, p.conv,
                                         3, f32(bad[1]), out.desc, out.ptr, ws, MIB)
    with pytest.raises(errors.MIOpenBadParmError):  # Winograd needs 1 MiB
        lib.miopenConvolutionForward(p.handle, f32(1), p.x.desc, p.x.ptr, p.w.desc, p.w.ptr, p.conv, 3, f32(0),
                                     out.desc, out.ptr, ws, 1000)
    dev.fill(out.ptr, 0.0)
    lib.miopenConvolutionForward(p.handle, f32(1), p.x.desc, p.x.ptr, p.w.desc, p.w.ptr, p.conv, 3, f32(0),
                                 out.desc, out.ptr, ws, MIB)
    np.testing.assert_allclose(fetch(dev, out), p.expected("fwd"), rtol=1e-4, atol=1e-4)


def _find2(lib: Any, p: Problem, direction: int, out: DevTensor, options: Any, max_solutions: int = 8) -> list[Any]:
    problem = miopenProblem_t()
    lib.miopenCreateConvProblem(ctypes.byref(problem), p.conv, direction)
    x, w, y = {0: (p.x, p.w, out), 1: (out, p.w, p.dy), 2: (p.x, out, p.dy)}[direction]
    for tid, t in ((1, x), (2, w), (3, y)):
        lib.miopenSetProblemTensorDescriptor(problem, tid, t.desc)
    sols = (miopenSolution_t * max_solutions)()
    n = ctypes.c_size_t()
    lib.miopenFindSolutions(p.handle, problem, options, sols, ctypes.byref(n), max_solutions)
    lib.miopenDestroyProblem(problem)
    return list(sols[: n.value])


def _run(lib: Any, p: Problem, direction: int, out: DevTensor, sol: Any, ws: int | None, size: int) -> None:
    x, w, y = {0: (p.x, p.w, out), 1: (out, p.w, p.dy), 2: (p.x, out, p.dy)}[direction]
    args = (miopenTensorArgument_t * 3)(*(miopenTensorArgument_t(tid, None, t.ptr) for tid, t in
                                          ((1, x), (2, w), (3, y))))
    lib.miopenRunSolution(p.handle, sol, 3, args, ws, size)


@pytest.mark.parametrize("direction", [0, 1, 2], ids=["fwd", "bwd", "wrw"])
def test_find_2_0_matches_torch(emulated_device: EmulatedDevice, client: Client, direction: int) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    p = Problem(dev, client, "NHWC")
    name = ("fwd", "bwd", "wrw")[direction]
    out = p.out(name)
    options = miopenFindOptions_t()
    lib.miopenCreateFindOptions(ctypes.byref(options))
    lib.miopenSetFindOptionTuning(options, 1)
    lib.miopenSetFindOptionWorkspaceLimit(options, 2 * MIB)
    sols = _find2(lib, p, direction, out, options)
    sizes = []
    for s in sols:
        size = ctypes.c_size_t()
        lib.miopenGetSolutionWorkspaceSize(s, ctypes.byref(size))
        sizes.append(size.value)
    assert sizes == [MIB, 0]  # the workspace limit dropped the 16 MiB solver
    ws = dev.alloc(MIB)
    with pytest.raises(errors.MIOpenBadParmError):
        _run(lib, p, direction, out, sols[0], ws, MIB - 1)
    _run(lib, p, direction, out, sols[0], ws, MIB)
    np.testing.assert_allclose(fetch(dev, out), p.expected(name), rtol=1e-4, atol=1e-4)
    record = dev.find_records[-1]
    assert (record.direction, record.tuning, record.workspace_limit) == (name, 1, 2 * MIB)
    for s in sols:
        lib.miopenDestroySolution(s)
    lib.miopenDestroyFindOptions(options)
    assert not dev.live_objects("solution") and not dev.live_objects("problem")


def test_find_2_0_problem_copies_descriptor_and_options(emulated_device: EmulatedDevice, client: Client) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    p = Problem(dev, client, None)
    out = p.out("fwd")
    lib.miopenSetConvolutionFindMode(p.conv, 1)
    problem = miopenProblem_t()
    lib.miopenCreateConvProblem(ctypes.byref(problem), p.conv, 0)
    lib.miopenSetConvolutionFindMode(p.conv, 2)  # too late: the problem holds a copy
    for tid, t in ((1, p.x), (2, p.w), (3, out)):
        lib.miopenSetProblemTensorDescriptor(problem, tid, t.desc)
    options = miopenFindOptions_t()
    lib.miopenCreateFindOptions(ctypes.byref(options))
    lib.miopenSetFindOptionResultsOrder(options, 1)  # by workspace
    bench_out = scratch(dev, client, out.dims)
    dev.fill(bench_out.ptr, 0.0)
    for tid, t in ((1, p.x), (2, p.w), (3, bench_out)):
        lib.miopenSetFindOptionPreallocatedTensor(options, tid, t.ptr)
    ws = dev.alloc(MIB)
    lib.miopenSetFindOptionPreallocatedWorkspace(options, ws, MIB)  # its size is the limit
    sols = (miopenSolution_t * 8)()
    n = ctypes.c_size_t()
    lib.miopenFindSolutions(p.handle, problem, options, sols, ctypes.byref(n), 8)
    assert dev.find_records[-1].find_mode == 1
    ids = []
    for s in sols[: n.value]:
        sid = ctypes.c_uint64()
        lib.miopenGetSolutionSolverId(s, ctypes.byref(sid))
        algo = ctypes.c_uint()
        lib.miopenGetSolverIdConvAlgorithm(sid.value, ctypes.byref(algo))
        ids.append((sid.value, algo.value))
    assert ids == [(103, 1), (102, 3)]  # ordered by workspace: direct (0) then Winograd (1 MiB)
    assert np.isnan(fetch(dev, bench_out)).all()  # benchmarking overwrote the preallocated output
    # save / load round trip; a blob from another version is refused
    size = ctypes.c_size_t()
    lib.miopenGetSolutionSize(sols[1], ctypes.byref(size))
    blob = ctypes.create_string_buffer(size.value)
    lib.miopenSaveSolution(sols[1], blob)
    loaded = miopenSolution_t()
    lib.miopenLoadSolution(ctypes.byref(loaded), blob.raw, size.value)
    _run(lib, p, 0, out, loaded, ws, MIB)
    np.testing.assert_allclose(fetch(dev, out), p.expected("fwd"), rtol=1e-4, atol=1e-4)
    other = EmulatedDevice("3.4" if dev.version_name == "3.5" else "3.5")
    with pytest.raises(errors.MIOpenVersionMismatchError):
        other.miopen.miopenLoadSolution(ctypes.byref(miopenSolution_t()), blob.raw, size.value)
    for s in [*sols[: n.value], loaded]:
        lib.miopenDestroySolution(s)
    lib.miopenDestroyProblem(problem)
    lib.miopenDestroyFindOptions(options)


def test_catalogue_is_configurable(emulated_device: EmulatedDevice, client: Client) -> None:
    from emulated._conv import SolutionSpec

    emulated_device.conv_catalogue = lambda problem: [SolutionSpec(7, 0, 123, 0.1)]
    p = Problem(emulated_device, client, None)
    sols = _solutions(emulated_device.miopen, p, "fwd", p.out("fwd"))
    assert [(s.solution_id, s.workspace_size, s.algorithm) for s in sols] == [(7, 123, 0)]


def test_in_place_and_workspace_overlap_are_faults(emulated_device: EmulatedDevice, client: Client) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    p = Problem(dev, client, None)
    out = p.out("fwd")
    winograd = _solutions(lib, p, "fwd", out)[1]
    ws = dev.alloc(winograd.workspace_size)
    inside = DevTensor(out.desc, ws + 256, out.dims, out.strides, out.dtype)
    with pytest.raises(errors.MIOpenUnknownError):  # the output tensor lies in the workspace
        _immediate(lib, p, "fwd", inside, winograd, ws, winograd.workspace_size)
    assert "overlaps" in dev.faults[-1]
    same_buffer = DevTensor(out.desc, p.x.ptr, out.dims, out.strides, out.dtype)
    with pytest.raises(errors.MIOpenUnknownError):  # y written over x
        _immediate(lib, p, "fwd", same_buffer, _solutions(lib, p, "fwd", out)[2], None, 0)


@pytest.mark.parametrize("layout", ["NCDHW", "NDHWC"])
def test_3d_convolution_matches_torch(emulated_device: EmulatedDevice, client: Client, layout: str) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    rng = np.random.default_rng(17)
    xa, wa = rng.standard_normal((2, 3, 5, 6, 4)).astype(np.float32), rng.standard_normal((4, 3, 3, 2, 3)).astype(np.float32)
    x, w = put(dev, client, xa, layout=layout), put(dev, client, wa, layout=layout)
    conv = client.conv((1, 0, 1), (1, 2, 1), (2, 1, 1))
    y = scratch(dev, client, client.conv_out(conv, x.desc, w.desc), layout=layout)
    h = client.handle()
    n = ctypes.c_size_t()
    lib.miopenConvolutionForwardGetSolutionCount(h, w.desc, x.desc, conv, y.desc, ctypes.byref(n))
    sols = (miopenConvSolution_t * n.value)()
    lib.miopenConvolutionForwardGetSolution(h, w.desc, x.desc, conv, y.desc, n.value, ctypes.byref(n), sols)
    lib.miopenConvolutionForwardImmediate(h, w.desc, w.ptr, x.desc, x.ptr, conv, y.desc, y.ptr, None, 0,
                                          sols[n.value - 1].solution_id)
    want = torch.nn.functional.conv3d(torch.from_numpy(xa), torch.from_numpy(wa), stride=(1, 2, 1),
                                      padding=(1, 0, 1), dilation=(2, 1, 1)).numpy()
    np.testing.assert_allclose(fetch(dev, y), want, rtol=1e-4, atol=1e-4)
