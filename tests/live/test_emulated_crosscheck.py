"""Cross-check: the emulated device's descriptor bookkeeping against the real library.

Every case runs the same calls on the real libMIOpen (this sysroot) and on
``tests/emulated``'s EmulatedDevice of the same version, and compares what a caller observes:
the outputs, or the failing status. A mismatch means the emulation (which the MIOpen engine's
tests rely on) no longer tells the truth about the library.
"""

from __future__ import annotations

import ctypes
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from emulated._client import Client, Failed
from emulated.device import EmulatedDevice
from live_util import conv_configs, get_tensor, int_array, objects

from hipdnn.core.shapes import LAYOUTS, packed_strides
from miopen_ctypes import types as mt
from miopen_ctypes.errors import MIOpenStatusError

Outcome = tuple[str, Any]
Case = Callable[[Any], Any]
DTYPES = [0, 1, 2, 3, 5, 6, 7, 8, 9]
DIMS = {4: (2, 3, 5, 7), 5: (2, 3, 4, 5, 6)}


@pytest.fixture(scope="module")
def emulated(live_version: str, require_or_skip: Callable[[str, str], Any]) -> Any:
    """The emulated libMIOpen of the version under test (tests/ is on sys.path via the root conftest)."""
    try:
        from emulated.device import EmulatedDevice
    except ImportError as exc:
        require_or_skip("HIPDNN_REQUIRE_LIVE", f"tests/emulated is not importable ({exc})")
    return EmulatedDevice("3.5" if live_version == "7.2.4" else "3.4").miopen


def outcome(lib: Any, case: Case) -> Outcome:
    """("ok", outputs) or ("status", miopenStatus_t value) of one case on one library."""
    try:
        return ("ok", case(lib))
    except MIOpenStatusError as exc:
        return ("status", exc.status)


def compare(real: Any, emulated: Any, cases: dict[str, Case], failing: set[str]) -> list[str]:
    """Every case whose outcome differs, described; ``failing`` names the cases that must fail on
    the real library (so a broken case that fails everywhere cannot pass as "equal")."""
    out = []
    for name, case in cases.items():
        want, got = outcome(real, case), outcome(emulated, case)
        if (want[0] == "status") != (name in failing):
            out.append(f"{name}: expected the real library to {'fail' if name in failing else 'succeed'}, got {want}")
        if want != got:
            out.append(f"{name}: real {want}, emulated {got}")
    return out


# ------------------------------------------------------------------ tensors
def _tensor_case(dtype: int, dims: tuple[int, ...], strides: tuple[int, ...] | None) -> Case:
    def run(lib: Any) -> Any:
        with objects(lib) as o:
            desc = o.tensor(dtype, dims, strides)
            nbytes = ctypes.c_size_t()
            lib.miopenGetTensorNumBytes(desc, ctypes.byref(nbytes))
            return (*get_tensor(lib, desc), nbytes.value)
    return run


def _layout_case(dtype: int, layout: int, lens: tuple[int, ...]) -> Case:
    def run(lib: Any) -> Any:
        with objects(lib) as o:
            desc = o.new("tensor")
            lib.miopenSetNdTensorDescriptorWithLayout(desc, dtype, layout, int_array(lens), len(lens))
            return get_tensor(lib, desc)
    return run


def test_tensor_descriptors(lib: Any, emulated: Any) -> None:
    cases: dict[str, Case] = {}
    for dtype, layout in itertools.product(DTYPES, sorted(LAYOUTS)):
        dims = DIMS[len(LAYOUTS[layout])]
        cases[f"set dt{dtype} {layout}"] = _tensor_case(dtype, dims, packed_strides(dims, layout))
    cases["default strides"] = _tensor_case(1, (2, 3, 4, 5), None)
    cases["padded strides"] = _tensor_case(1, (2, 3, 4, 5), (200, 60, 15, 3))
    cases["1-d"] = _tensor_case(1, (7,), None)
    cases["zero length"] = _tensor_case(1, (2, 0, 4, 5), None)
    cases["zero stride"] = _tensor_case(1, (2, 3, 4, 5), (60, 20, 5, 0))
    for layout_id, dtype in itertools.product((0, 1, 2, 7, 8), (0, 1, 5)):
        for lens in ((2, 3, 5, 7), (2, 3, 4, 5, 6)):
            cases[f"layout {layout_id} dt{dtype} rank {len(lens)}"] = _layout_case(dtype, layout_id, lens)
    assert compare(lib, emulated, cases, {"zero length", "zero stride", "layout 2 dt0 rank 5", "layout 2 dt1 rank 5",
                                          "layout 2 dt5 rank 5", *(f"layout {la} dt{dt} rank {r}" for la, r in
                                          [(0, 5), (1, 5), (7, 4), (8, 4)] for dt in (0, 1, 5))}) == []


# ------------------------------------------------------------------ convolution
def _conv_case(x: list[int], w: list[int], pad: list[int], stride: list[int], dil: list[int], groups: int = 1,
               mode: int = 0, x_dtype: int = 1, w_dtype: int = 1) -> Case:
    def run(lib: Any) -> Any:
        with objects(lib) as o:
            conv = o.new("conv")
            lib.miopenInitConvolutionNdDescriptor(conv, len(pad), int_array(pad), int_array(stride), int_array(dil),
                                                  mode)
            lib.miopenSetConvolutionGroupCount(conv, groups)
            xd, wd = o.tensor(x_dtype, x), o.tensor(w_dtype, w)
            ndim, dims = ctypes.c_int(), (ctypes.c_int * 8)()
            lib.miopenGetConvolutionNdForwardOutputDim(conv, xd, wd, ctypes.byref(ndim), dims)
            return tuple(dims[: ndim.value])
    return run


def test_convolution_output_dims(lib: Any, emulated: Any) -> None:
    cases: dict[str, Case] = {
        f"random {i}": _conv_case(c["x"], c["w"], c["pad"], c["stride"], c["dil"], c["groups"])
        for i, c in enumerate(conv_configs(120))
    }
    cases.update({
        "kernel larger than input": _conv_case([2, 3, 4, 5], [4, 3, 7, 7], [0, 0], [1, 1], [1, 1]),
        "channel mismatch": _conv_case([2, 3, 8, 8], [4, 2, 3, 3], [1, 1], [1, 1], [1, 1]),
        "groups not dividing": _conv_case([2, 6, 8, 8], [4, 4, 3, 3], [1, 1], [1, 1], [1, 1], groups=2),
        "dtype mismatch": _conv_case([2, 3, 8, 8], [4, 3, 3, 3], [1, 1], [1, 1], [1, 1], w_dtype=0),
        "5-d tensors, 2-d conv": _conv_case([2, 3, 4, 8, 8], [4, 3, 3, 3, 3], [1, 1], [1, 1], [1, 1]),
        "transpose": _conv_case([2, 4, 8, 8], [4, 3, 3, 3], [1, 1], [2, 2], [1, 1], mode=1),
        "transpose grouped": _conv_case([2, 4, 8, 8], [4, 3, 3, 3], [0, 0], [1, 1], [1, 1], groups=2, mode=1),
    })
    failing = {"channel mismatch", "groups not dividing", "dtype mismatch", "5-d tensors, 2-d conv"}
    assert compare(lib, emulated, cases, failing) == []


def _conv_nd_get(requested: int) -> Case:
    def run(lib: Any) -> Any:
        with objects(lib) as o:
            conv = o.new("conv")
            lib.miopenInitConvolutionNdDescriptor(conv, 2, int_array([1, 2]), int_array([3, 1]), int_array([1, 2]), 0)
            n, mode = ctypes.c_int(), ctypes.c_uint()
            arrays = [(ctypes.c_int * 3)() for _ in range(3)]
            lib.miopenGetConvolutionNdDescriptor(conv, requested, ctypes.byref(n), *arrays, ctypes.byref(mode))
            return n.value, [list(a[:requested]) for a in arrays], mode.value
    return run


def test_convolution_descriptor_get(lib: Any, emulated: Any) -> None:
    assert compare(lib, emulated, {f"requested {r}": _conv_nd_get(r) for r in (1, 2, 3)}, {"requested 3"}) == []


# ------------------------------------------------------------------ BN, activation, fusion
def _bn_case(dtype: int, dims: tuple[int, ...], strides: tuple[int, ...], mode: int) -> Case:
    def run(lib: Any) -> Any:
        with objects(lib) as o:
            derived = o.new("tensor")
            lib.miopenDeriveBNTensorDescriptor(derived, o.tensor(dtype, dims, strides), mode)
            return get_tensor(lib, derived)
    return run


def test_derived_bn(lib: Any, emulated: Any) -> None:
    cases = {
        f"dt{dt} {layout} mode{mode}": _bn_case(dt, DIMS[len(LAYOUTS[layout])],
                                                packed_strides(DIMS[len(LAYOUTS[layout])], layout), mode)
        for dt, layout, mode in itertools.product((0, 1, 5), sorted(LAYOUTS), (0, 1))
    }
    assert compare(lib, emulated, cases, set()) == []


def _activation_case(mode: int) -> Case:
    def run(lib: Any) -> Any:
        with objects(lib) as o:
            desc = o.new("activation")
            lib.miopenSetActivationDescriptor(desc, mode, 0.5, 6.0, -1.0)
            m, a, b, g = ctypes.c_uint(), ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
            lib.miopenGetActivationDescriptor(desc, ctypes.byref(m), ctypes.byref(a), ctypes.byref(b), ctypes.byref(g))
            return m.value, a.value, b.value, g.value
    return run


def test_activation_descriptors(lib: Any, emulated: Any) -> None:
    assert compare(lib, emulated, {f"mode {m}": _activation_case(m) for m in range(11)}, set()) == []


def _fusion_case(index: int) -> Case:
    def run(lib: Any) -> Any:
        with objects(lib) as o:
            x = o.tensor(1, (2, 3, 8, 8))
            conv = o.new("conv")
            lib.miopenInitConvolutionNdDescriptor(conv, 2, int_array([1, 1]), int_array([1, 1]), int_array([1, 1]), 0)
            plan = mt.miopenFusionPlanDescriptor_t()
            lib.miopenCreateFusionPlan(ctypes.byref(plan), 0, x)
            o.own("miopenDestroyFusionPlan", plan)
            op = mt.miopenFusionOpDescriptor_t()
            lib.miopenCreateOpConvForward(plan, ctypes.byref(op), conv, o.tensor(1, (4, 3, 3, 3)))
            lib.miopenCreateOpActivationForward(plan, ctypes.byref(mt.miopenFusionOpDescriptor_t()), 3)
            got = mt.miopenFusionOpDescriptor_t()
            lib.miopenFusionPlanGetOp(plan, index, ctypes.byref(got))
            return ctypes.cast(got, ctypes.c_void_p).value == ctypes.cast(op, ctypes.c_void_p).value
    return run


def test_fusion_get_op(lib: Any, emulated: Any) -> None:
    assert compare(lib, emulated, {f"index {i}": _fusion_case(i) for i in (-1, 0, 1, 2)}, {"index -1", "index 2"}) == []

# ------------------------------------------------------------------ more cases, through tests/emulated/_client.py
# (each runs on both libraries through the same Client and must give the same answer or status)
HALF, FLOAT, BF16 = 0, 1, 5
DTYPE_IDS = {"fp16": HALF, "fp32": FLOAT, "bf16": BF16}
EMULATED_VERSION = {"6.4.3": "3.4", "7.2.4": "3.5"}


@pytest.fixture
def both(lib: Any, live_version: str) -> Iterator[tuple[Client, Client]]:
    """(client on the real library, client on the emulated device of the same version)."""
    device = EmulatedDevice(EMULATED_VERSION[live_version])
    with Client(lib) as real, Client(device.miopen) as emulated:
        yield real, emulated
    assert not device.internal_errors


def same(both: tuple[Client, Client], op: Callable[[Client], Any]) -> Any:
    """Run ``op`` on both clients; the answers (or failing statuses) must be equal."""
    real, emulated = both
    want = Client.attempt(lambda: op(real))
    got = Client.attempt(lambda: op(emulated))
    assert got == want, f"emulated {got!r} != real {want!r}"
    return want


def test_versions_agree(lib: Any, live_version: str) -> None:
    device = EmulatedDevice(EMULATED_VERSION[live_version])
    assert device.miopen.capabilities.version == lib.capabilities.version


def test_fresh_tensor_descriptor(both: tuple[Client, Client]) -> None:
    assert same(both, lambda c: c.describe(c.new_tensor())) == (0, FLOAT, (), (), 4)


@pytest.mark.parametrize("dtype", [0, 1, 2, 3, 5, 6, 7, 8, 9, 4, 99])
def test_set4d_every_dtype(both: tuple[Client, Client], dtype: int) -> None:
    same(both, lambda c: c.describe(c.tensor_4d(dtype, 2, 3, 4, 5)))
    same(both, lambda c: c.get_4d(c.tensor_4d(dtype, 2, 3, 4, 5)))


@pytest.mark.parametrize(("dims", "strides"), [
    ((2, 3, 4, 5), (100, 30, 6, 1)),        # padded: GetTensorNumBytes counts the span
    ((2, 3, 4, 5), (60, 1, 15, 3)),         # NHWC strides
    ((7,), None), ((2, 3, 4), None), ((1, 2, 2, 2, 2, 2, 2, 2), None),
    ((2, 3, 4, 5, 6), None),
    ((2, 0, 4, 5), None), ((2, -1, 4, 5), None), ((2, 3, 4, 5), (0, 1, 15, 3)),
])
def test_tensor_set_get_and_rejections(both: tuple[Client, Client], dims: tuple[int, ...],
                                       strides: tuple[int, ...] | None) -> None:
    same(both, lambda c: c.describe(c.tensor(FLOAT, dims, strides)))


def test_get4d_on_5d(both: tuple[Client, Client]) -> None:
    same(both, lambda c: c.get_4d(c.tensor(FLOAT, (2, 3, 4, 5, 6))))


def test_conv_output_dims_layouts_and_types(both: tuple[Client, Client]) -> None:
    def out(cl: Client, xt: int, wt: int, nhwc: bool) -> tuple[int, ...]:
        conv = cl.conv((1, 1), (2, 2), (1, 1))
        x = cl.tensor_layout(xt, 1 if nhwc else 0, (2, 4, 9, 9))
        return cl.conv_out(conv, x, cl.tensor(wt, (6, 4, 3, 3)))

    for xt, wt, nhwc in ((FLOAT, FLOAT, True), (HALF, HALF, False), (BF16, FLOAT, False), (BF16, BF16, True)):
        same(both, lambda cl, xt=xt, wt=wt, nhwc=nhwc: out(cl, xt, wt, nhwc))
    # 2-D convolution over 5-D tensors and 3-D over 4-D are rejected (with different statuses)
    same(both, lambda cl: cl.conv_out(cl.conv((0, 0), (1, 1), (1, 1)), cl.tensor(FLOAT, (1, 2, 4, 4, 4)),
                                      cl.tensor(FLOAT, (1, 2, 3, 3, 3))))
    same(both, lambda cl: cl.conv_out(cl.conv((0, 0, 0), (1, 1, 1), (1, 1, 1)), cl.tensor(FLOAT, (1, 2, 4, 4)),
                                      cl.tensor(FLOAT, (1, 2, 3, 3))))


def test_conv_descriptor_defaults_and_settings(both: tuple[Client, Client]) -> None:
    import ctypes

    from miopen_ctypes.types import miopenConvolutionDescriptor_t

    def fresh(cl: Client) -> Any:
        c = miopenConvolutionDescriptor_t()
        cl.lib.miopenCreateConvolutionDescriptor(ctypes.byref(c))
        cl._cleanup.append(lambda: cl.lib.miopenDestroyConvolutionDescriptor(c))
        return c

    same(both, lambda cl: cl.conv_settings(fresh(cl)))
    same(both, lambda cl: cl.conv_settings(cl.conv((1, 2, 0), (2, 1, 3), (1, 2, 1), groups=3)))
    for mode in (1, 2, 3, 4):
        same(both, lambda cl, m=mode: cl.conv_settings(cl.conv((0, 0), (1, 1), (1, 1), mode=m)))
    for bad in (((-1, 0), (1, 1), (1, 1)), ((0, 0), (0, 1), (1, 1)), ((0, 0), (1, 1), (0, 1))):
        assert isinstance(same(both, lambda cl, b=bad: cl.conv(*b)), Failed)
    for find_mode in range(9):
        same(both, lambda cl, f=find_mode: cl.lib.miopenSetConvolutionFindMode(fresh(cl), f))
    for attr, value in ((0, -2), (0, -1), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (2, 1), (7, 1)):
        same(both, lambda cl, a=attr, v=value: cl.lib.miopenSetConvolutionAttribute(fresh(cl), a, v))
    for groups in (0, -1, 4):
        same(both, lambda cl, g=groups: cl.lib.miopenSetConvolutionGroupCount(fresh(cl), g))


@pytest.mark.parametrize("dims", [(2, 3), (2, 3, 4), (2, 3, 4, 5)])
def test_derived_bn_low_rank(both: tuple[Client, Client], dims: tuple[int, ...]) -> None:
    for mode in (0, 1):
        same(both, lambda c, m=mode: c.describe(c.derive_bn(c.tensor(FLOAT, dims), m)))


@pytest.mark.parametrize("mode", range(11))
def test_activation_descriptor(both: tuple[Client, Client], mode: int) -> None:
    same(both, lambda c: c.get_activation(c.activation(mode, 0.5, 6.0, 1.5)))
    same(both, lambda c: c.get_activation(c.activation(mode, -1.0, 0.0, 2.0)))


@pytest.mark.parametrize("dtype", list(DTYPE_IDS), ids=list(DTYPE_IDS))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_tensor_v2_and_layout_calls(both: tuple[Client, Client], layout: str, dtype: str) -> None:
    dims = DIMS[len(LAYOUTS[layout])]
    strides = packed_strides(dims, layout)
    code = {"NCHW": 0, "NHWC": 1, "NCDHW": 7, "NDHWC": 8}[layout]
    by_layout = same(both, lambda c: c.describe(c.tensor_layout(DTYPE_IDS[dtype], code, dims)))
    assert by_layout[2:4] == (dims, strides)  # lens stay in logical N,C,(D),H,W order
    assert same(both, lambda c: c.describe(c.tensor_v2(DTYPE_IDS[dtype], dims, strides))) == by_layout


@pytest.mark.parametrize("adj", [(0, 0), (1, 0), (1, 2), (3, 3)])
def test_transpose_output_padding(both: tuple[Client, Client], adj: tuple[int, int]) -> None:
    def out(cl: Client, nd: bool) -> tuple[int, ...]:
        conv = cl.conv((1, 0), (2, 3), (1, 1), mode=1)
        if nd:
            cl.lib.miopenSetTransposeConvNdOutputPadding(conv, 2, int_array(adj))
        else:
            cl.lib.miopenSetTransposeConvOutputPadding(conv, *adj)
        return cl.conv_out(conv, cl.tensor(FLOAT, (2, 4, 5, 6)), cl.tensor(FLOAT, (4, 3, 3, 3)))

    same(both, lambda cl: out(cl, True))
    same(both, lambda cl: out(cl, False))


def test_solver_id_algorithms(both: tuple[Client, Client]) -> None:
    def algorithm(cl: Client, solver: int) -> int:
        out = ctypes.c_uint()
        cl.lib.miopenGetSolverIdConvAlgorithm(solver, ctypes.byref(out))
        return out.value

    for solver in range(0, 200):
        same(both, lambda cl, s=solver: algorithm(cl, s))


def test_find_2_0_setters(both: tuple[Client, Client]) -> None:
    def problem(cl: Client, direction: int, ids: tuple[int, ...]) -> bool:
        p = mt.miopenProblem_t()
        cl.lib.miopenCreateConvProblem(ctypes.byref(p), cl.conv((1, 1), (1, 1), (1, 1)), direction)
        try:
            for tid in ids:
                cl.lib.miopenSetProblemTensorDescriptor(p, tid, cl.tensor(FLOAT, (2, 3, 8, 8)))
        finally:
            cl.lib.miopenDestroyProblem(p)
        return True

    for direction in range(6):
        same(both, lambda cl, d=direction: problem(cl, d, (0, 1, 2, 3, 4, 37, 48)))

    def options(cl: Client, setter: str, *args: Any) -> bool:
        o = mt.miopenFindOptions_t()
        cl.lib.miopenCreateFindOptions(ctypes.byref(o))
        try:
            getattr(cl.lib, setter)(o, *args)
        finally:
            cl.lib.miopenDestroyFindOptions(o)
        return True

    for setter, args in (("miopenSetFindOptionResultsOrder", (2,)), ("miopenSetFindOptionTuning", (-1,)),
                         ("miopenSetFindOptionWorkspaceLimit", (0,)),
                         ("miopenSetFindOptionPreallocatedTensor", (1, None)),
                         ("miopenSetFindOptionPreallocatedTensor", (0, 1234)),
                         ("miopenSetFindOptionPreallocatedWorkspace", (None, 0)),
                         ("miopenSetFindOptionPreallocatedWorkspace", (None, 100)),
                         ("miopenSetFindOptionAttachBinaries", (1,))):
        same(both, lambda cl, s=setter, a=args: options(cl, s, *a))


def test_fusion_op_args_rules(both: tuple[Client, Client]) -> None:
    buf = (ctypes.c_float * 16)()
    one, zero = ctypes.byref(ctypes.c_float(1.0)), ctypes.byref(ctypes.c_float(0.0))

    def bn_forward_args(cl: Client, running_flag: bool, running: bool, wrong_op: bool, direction: int = 0) -> bool:
        lib = cl.lib
        with objects(lib) as o:
            plan = mt.miopenFusionPlanDescriptor_t()
            lib.miopenCreateFusionPlan(ctypes.byref(plan), direction, o.tensor(FLOAT, (2, 3, 8, 8)))
            o.own("miopenDestroyFusionPlan", plan)
            bn, act = mt.miopenFusionOpDescriptor_t(), mt.miopenFusionOpDescriptor_t()
            lib.miopenCreateOpBatchNormForward(plan, ctypes.byref(bn), 1, running_flag)
            lib.miopenCreateOpActivationForward(plan, ctypes.byref(act), 3)
            args = o.new("args")
            ptr = ctypes.addressof(buf)
            run = ptr if running else None
            if wrong_op:
                lib.miopenSetOpArgsConvForward(args, act, one, zero, ptr)
            lib.miopenSetOpArgsBatchNormForward(args, bn, one, zero, ptr, ptr, ptr, ptr, run, run, 0.1, 1e-5)
            lib.miopenSetOpArgsActivForward(args, act, one, zero, 0.0, 0.0, 0.0)
        return True

    for flag, running, wrong in ((True, False, False), (True, True, False), (False, False, False),
                                 (False, True, True)):
        same(both, lambda cl, f=flag, r=running, w=wrong: bn_forward_args(cl, f, r, w))
    same(both, lambda cl: bn_forward_args(cl, False, True, False, direction=1))
