"""Host overhead of executing built MIOPEN_ENGINE plans of every seed row, next to the ctypes
calls each plan makes, on the MIOpen 3.4 and 3.5 symbol sets.

Targets (issue 12; DESIGN "Performance targets"), per row, side by side in one run:
``bind()`` <= 1.5x the raw calls, ``execute(ints)`` <= 2x, ``execute(framework tensors)`` <= 3x
(and <= 2x ``execute(ints)``).

How the floor is made honest without a GPU:

* **Build phase** on the emulated device (``tests/emulated/device.py``, test code imported by
  path): descriptors, solution queries, the MIOpen handle are emulated Python functions.
* **Execute phase** on real C functions: at benchmark time the machine's C compiler builds, in a
  temporary directory, a tiny shared library exporting every execute-path MIOpen symbol (the
  ones bound plans prebuild: immediate convolutions, ``miopenRunSolution``, BN inference V2,
  fusion execute/SetOpArgs, ``miopenOpTensor``, ``miopenActivationForward``) as ``return 0``
  no-ops with the header's parameter types (generated from ``miopen_ctypes.PROTOTYPES``).
  The benchmark's ``MIOpenLibrary`` binds those symbols to the C library's ctypes functions
  (exactly as ``from_cdll`` binds a real libMIOpen: same argtypes, restype and errcheck) and
  every other symbol to the emulated device. This library is benchmark infrastructure only.

Graphs are the FP32 NCHW seed-row builders of ``tests/emulated/test_miopen_engine_graphs.py``
(conv + bias + ReLU twice: fused, and unfused with the emulated fusion compile declining).
Columns, per row (all timed interleaved, best of ``--repeat`` rounds of ``--number`` calls):

* ``raw``       the plan's ctypes call(s) with prebuilt arguments (``cfunc(*cargs)``: the same
                function objects, argtypes and errcheck a bound plan calls): the floor, in us;
* ``bind()``    ``graph.bind(pack)()``, as a multiple of raw;
* ``ints``      ``graph.execute({tensor: int_ptr, ...})``;
* ``cai``       ``graph.execute`` with objects exposing ``__cuda_array_interface__`` (a fresh
                dict per access, as numba and CuPy do) over the same device pointers;
* ``torch`` / ``dlpack``  with torch CUDA tensors / objects exposing only ``__dlpack__`` (torch
                CUDA tensors behind it); only where ``torch.cuda.is_available()`` (the pointers
                reach only the C no-ops);
* ``checked``   the resolve-and-check path (``graph._executor.run``: what a pack never seen before costs);
* ``torch0``    torch CUDA tensors (other memory) matched by the per-value torch test, as every
                torch tensor was before torch's tensor guard was used (``hipdnn/pipeline/packsig.py``):
                before and after side by side, interleaved in one run;
* ``fw/ints``   the slowest framework column over ``ints`` (target <= 2); ``t/ints`` and
                ``t0/ints``: ``torch`` and ``torch0`` over ``ints``.

    PYTHONPATH=. python benchmarks/bench_overhead.py [--number 20000] [--repeat 5] [--quick] [--lock]

``--lock`` prints instead what the per-plan lock of fused plans costs one thread: ``bind()`` and
``execute(ints)`` of each fused row with the lock and with it taken away, interleaved.

``--quick`` (CI, via tests/emulated/test_bench_overhead.py) runs every row once with tiny counts.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import timeit
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "emulated"))
# The emulated device's decisions must not come from (or go to) the user's persistent plan store:
# a stored decision of another emulated configuration (e.g. "unfused") would change the rows.
os.environ["HIPDNN_PLAN_STORE"] = "off"

from emulated.device import EmulatedDevice  # noqa: E402  (test code: the emulated device)
from test_miopen_engine_graphs import build  # noqa: E402  (test code: seed-row graphs)

import hipdnn  # noqa: E402
import miopen_ctypes  # noqa: E402
from hipdnn.core.types import DataType  # noqa: E402
from hipdnn.engines import register, registry, unregister  # noqa: E402
from hipdnn.engines.miopen import MiopenEngine, Row  # noqa: E402
from hipdnn.pipeline import packsig as _packsig  # noqa: E402  (to bind one pack with the per-value torch test)

EXECUTE_SYMBOLS = (
    "miopenConvolutionForwardImmediate", "miopenConvolutionBackwardDataImmediate",
    "miopenConvolutionBackwardWeightsImmediate", "miopenRunSolution",
    "miopenBatchNormalizationForwardInference_V2", "miopenExecuteFusionPlan",
    "miopenExecuteFusionPlan_v2", "miopenSetOpArgsConvForward", "miopenSetOpArgsBiasForward",
    "miopenSetOpArgsActivForward", "miopenOpTensor", "miopenActivationForward",
    "miopenBatchNormalizationForwardTraining_V2", "miopenBatchNormalizationBackward_V2",
    "miopenBatchNormForwardTrainingActivation", "miopenBatchNormBackwardActivation",
    "miopenSetOpArgsBatchNormForward", "miopenSetOpArgsBatchNormBackward",
    "miopenSetOpArgsActivBackward",
)

_C_TYPES = {
    ctypes.c_float: "float", ctypes.c_double: "double", ctypes.c_size_t: "size_t",
    ctypes.c_int: "int", ctypes.c_uint: "unsigned", ctypes.c_int64: "long long",
    ctypes.c_bool: "_Bool",
}


def _c_source() -> str:
    lines = ["#include <stddef.h>"]
    for name in EXECUTE_SYMBOLS:
        proto = miopen_ctypes.PROTOTYPES[name]
        params = ", ".join(f"{_C_TYPES.get(t, 'void*')} a{i}" for i, t in enumerate(proto.argtypes))
        lines.append(f"int {name}({params}) {{ return 0; }}")
    lines.append("int hipdnn_bench_noop0(void) { return 0; }")
    return "\n".join(lines) + "\n"


def build_noop_library(tmp: str) -> ctypes.CDLL:
    """Compile the no-op execute-path library with the machine's C compiler into ``tmp``."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        raise SystemExit("bench_overhead needs a C compiler (cc/gcc) for the honest ctypes floor")
    src, lib = Path(tmp) / "noop_miopen.c", Path(tmp) / "libnoop_miopen.so"
    src.write_text(_c_source())
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return ctypes.CDLL(str(lib))


def hybrid_library(device: EmulatedDevice, noop: ctypes.CDLL) -> miopen_ctypes.MIOpenLibrary:
    """Emulated build-phase symbols + real C no-ops for the execute-path symbols."""
    cfuncs: dict[str, Any] = {n: device.miopen.cfunc(n) for n in device.miopen.symbols}
    for name in EXECUTE_SYMBOLS:
        if name not in cfuncs:
            continue  # keep the emulated version's symbol set (3.4 lacks some)
        proto = miopen_ctypes.PROTOTYPES[name]
        cfunc = getattr(noop, name)
        cfunc.restype, cfunc.argtypes = proto.restype, proto.argtypes
        cfuncs[name] = cfunc
    return miopen_ctypes.MIOpenLibrary(cfuncs, device.miopen.version, "emulated + C no-ops")


#: (label, seed row, fusion compile declined)
ROWS = (
    ("conv_fprop", Row.CONV_FPROP, False),
    ("conv_dgrad", Row.CONV_DGRAD, False),
    ("conv_wgrad", Row.CONV_WGRAD, False),
    ("conv_bias_relu", Row.CONV_BIAS_ACT, False),
    ("conv_bias_relu_unf", Row.CONV_BIAS_ACT, True),
    ("bn_inference", Row.BN_INFERENCE, False),
    ("bn_training", Row.BN_TRAINING, False),
    ("bn_training_relu", Row.BN_TRAINING_ACT, False),
    ("bn_backward", Row.BN_BACKWARD, False),
    ("bn_inf_drelu_bn_bwd", Row.BN_INF_DRELU_BN_BWD, False),
)
FRAMEWORK = ("cai", "torch", "dlpack")
#: The torch pack bound with the per-value matcher (not a target column: the before of "torch").
PLAIN_TORCH = "torch0"


class DeviceArray:
    """Device memory described by ``__cuda_array_interface__`` (a new dict per access)."""

    def __init__(self, ptr: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> None:
        self.ptr, self.shape, self.byte_strides = ptr, shape, tuple(4 * s for s in strides)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {"data": (self.ptr, False), "shape": self.shape, "typestr": "<f4",
                "strides": self.byte_strides, "version": 3}


class DLPackOnly:
    """Exposes only ``__dlpack__`` / ``__dlpack_device__`` of a wrapped tensor."""

    def __init__(self, t: Any) -> None:
        self._t = t

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._t.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self._t.__dlpack_device__()


def _nbytes(t: hipdnn.Tensor) -> int:
    assert t.dim is not None and t.stride is not None
    span = 1 + sum((d - 1) * s for d, s in zip(t.dim, t.stride, strict=True))
    return int(span) * 4


def _raw(prepared: Any) -> Callable[[], None]:
    """The plan's prebuilt ctypes calls, with nothing around them."""
    if len(prepared) == 1:
        ((cfunc, cargs),) = prepared

        def one() -> None:
            cfunc(*cargs)
        return one

    def calls() -> None:
        for cfunc, cargs in prepared:
            cfunc(*cargs)
    return calls


def _torch_cuda() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _packs(device: EmulatedDevice, tensors: list[hipdnn.Tensor],
           torch: Any) -> dict[str, dict[Any, Any]]:
    """The same tensors as int pointers and as each framework kind."""
    ints: dict[Any, Any] = {}
    packs: dict[str, dict[Any, Any]] = {"ints": ints, "cai": {}}
    if torch is not None:
        packs["torch"], packs["dlpack"], packs[PLAIN_TORCH] = {}, {}, {}
    for t in tensors:
        if t.is_pass_by_value:
            for pack in packs.values():
                pack[t] = 1e-5
            continue
        assert t.dim is not None and t.stride is not None
        shape, strides = tuple(t.dim), tuple(t.stride)
        if torch is None:
            ints[t] = device.alloc(_nbytes(t))
        else:
            tt = torch.empty_strided(shape, strides, dtype=torch.float32, device="cuda")
            packs["torch"][t], packs["dlpack"][t] = tt, DLPackOnly(tt)
            # other memory: the guarded matcher of "torch" must not take this pack
            packs[PLAIN_TORCH][t] = torch.empty_strided(shape, strides, dtype=torch.float32,
                                                        device="cuda")
            ints[t] = tt.data_ptr()
        packs["cai"][t] = DeviceArray(ints[t], shape, strides)
    return packs


@contextlib.contextmanager
def _per_value_torch_matcher() -> Iterator[None]:
    """Packs bound inside get the per-value torch test instead of torch's tensor guard."""
    saved = _packsig._torch_guards
    _packsig._torch_guards = None
    try:
        yield
    finally:
        _packsig._torch_guards = saved


def measure_row(device: EmulatedDevice, row: Row, unfused: bool, number: int,
                repeat: int, torch: Any) -> dict[str, float]:
    """us per call of each column for one seed row (``raw`` in us, the rest too)."""
    if unfused:
        device.fusion_applicable = lambda *a, **k: "declined by the benchmark"
    try:
        case = build(row, DataType.FLOAT, "NCHW")
        g = case.graph
        hipdnn.clear_plan_cache()  # a fused twin built before must not be reused
        g.build()
    finally:
        if unfused:
            from emulated._fusion import default_fusion_applicable
            device.fusion_applicable = default_fusion_applicable
    plan = g.plans[0]
    assert plan.engine.name == "MIOPEN_ENGINE", plan
    assert ("unfused" if unfused else "fused") == plan.path or row != Row.CONV_BIAS_ACT, plan
    tensors = [*case.inputs, *case.outputs.values()]
    packs = _packs(device, tensors, torch)
    ws = device.alloc(plan.workspace_size) if plan.workspace_size else None
    bound = g.bind(packs["ints"], ws)
    prepared = getattr(bound._run, "prepared", None)
    assert prepared is not None, f"{row}: the plan did not prebuild its calls"
    cols: dict[str, Callable[[], None]] = {"raw": _raw(prepared), "bind()": bound}
    for kind, pack in packs.items():
        if kind == PLAIN_TORCH:
            with _per_value_torch_matcher():
                g.execute(pack, ws)
        else:
            g.execute(pack, ws)  # remembered from here on
        if kind in ("torch", PLAIN_TORCH):  # each column times the matcher it names
            guarded = "g_check" in g._fast[0].__code__.co_freevars
            assert guarded == (kind == "torch" and _packsig._tensor_guards() is not None), kind
        cols[kind] = (lambda p=pack: g.execute(p, ws))
    cols["checked"] = lambda: g._executor.run(g._planner.plan(0), packs["cai"], ws, None)
    best = {name: float("inf") for name in cols}
    for _ in range(repeat):  # interleaved: every column sees the same machine load
        for name, fn in cols.items():
            n = max(1, number // 10) if name == "checked" else number
            best[name] = min(best[name], timeit.timeit(fn, number=n) / n * 1e6)
    g.close()
    return best


def measure(version: str, noop: ctypes.CDLL, number: int, repeat: int,
            torch: Any) -> list[tuple[str, dict[str, float]]]:
    device = EmulatedDevice(version)
    lib = hybrid_library(device, noop)
    engine = MiopenEngine(miopen_loader=lambda: lib, hip_loader=lambda: device.hip)
    previous = registry().get(engine.engine_id)
    register(engine)
    try:
        return [(label, measure_row(device, row, unfused, number, repeat, torch))
                for label, row, unfused in ROWS]
    finally:
        if previous is not None:
            register(previous)
        else:
            unregister(engine)


def measure_lock(device: EmulatedDevice, row: Row, number: int, repeat: int) -> dict[str, float]:
    """us per call of a fused plan's ``bind()`` and ``execute(ints)`` with its per-plan lock
    (hipdnn/engines/miopen/plan.py, ``MiopenPlan._serial``) and with the lock taken away, timed
    interleaved in one process: the single-thread price of serializing a fused plan's runs."""
    case = build(row, DataType.FLOAT, "NCHW")
    g = case.graph
    hipdnn.clear_plan_cache()
    g.build()
    plan = g.plans[0]
    lock = plan._serial
    assert plan.path == "fused" and lock is not None, plan
    ints = _packs(device, [*case.inputs, *case.outputs.values()], None)["ints"]
    ws = device.alloc(plan.workspace_size) if plan.workspace_size else None
    locked = g.bind(ints, ws)
    plan._serial = None
    unlocked = g.bind(ints, ws)
    plan._serial = lock
    g.execute(ints, ws)
    best = {k: float("inf") for k in ("bind", "bind_nolock", "ints", "ints_nolock")}
    for _ in range(repeat):
        for name, fn, serial in (("bind", locked, lock), ("bind_nolock", unlocked, lock),
                                 ("ints", lambda: g.execute(ints, ws), lock),
                                 ("ints_nolock", lambda: g.execute(ints, ws), None)):
            plan._serial = serial
            best[name] = min(best[name], timeit.timeit(fn, number=number) / number * 1e6)
    plan._serial = lock
    g.close()
    return best


def lock_table(version: str, noop: ctypes.CDLL, number: int, repeat: int) -> None:
    """Print the fused-plan lock's cost per call for every row fused on ``version``."""
    device = EmulatedDevice(version)
    lib = hybrid_library(device, noop)
    engine = MiopenEngine(miopen_loader=lambda: lib, hip_loader=lambda: device.hip)
    previous = registry().get(engine.engine_id)
    register(engine)
    print(f"MIOpen {version}: a fused plan's lock, single thread (us per call; best of {repeat})")
    print(f"  {'row':20}{'bind()':>8}{'no lock':>8}{'cost':>8}{'ints':>8}{'no lock':>8}{'cost':>8}")
    try:
        for label, row, unfused in ROWS:
            case = build(row, DataType.FLOAT, "NCHW")
            case.graph.build()
            fused = case.graph.plans[0].path == "fused"
            case.graph.close()
            if unfused or not fused:
                continue
            us = measure_lock(device, row, number, repeat)
            print(f"  {label:20}{us['bind']:8.3f}{us['bind_nolock']:8.3f}"
                  f"{us['bind'] - us['bind_nolock']:8.3f}{us['ints']:8.3f}"
                  f"{us['ints_nolock']:8.3f}{us['ints'] - us['ints_nolock']:8.3f}")
    finally:
        if previous is not None:
            register(previous)
        else:
            unregister(engine)


def floor_call(noop: ctypes.CDLL, number: int, repeat: int) -> float:
    """us per call of a no-argument C function through ctypes (the machine's ctypes floor)."""
    f = noop.hipdnn_bench_noop0
    f.restype, f.argtypes = ctypes.c_int, ()
    return min(timeit.repeat(f, number=number, repeat=repeat)) / number * 1e6


def report(version: str, results: list[tuple[str, dict[str, float]]]) -> list[str]:
    """Print one version's table; returns the targets missed."""
    kinds = [k for k in FRAMEWORK if k in results[0][1]]
    extra = [PLAIN_TORCH] if PLAIN_TORCH in results[0][1] else []
    over_ints = ["torch", PLAIN_TORCH] if extra else []
    print(f"MIOpen {version} (emulated build, execute symbols = C no-ops); raw in us, the rest "
          "as x raw; fw/ints = slowest framework column / ints")
    head = "".join(f"{k:>8}" for k in ("raw", "bind()", "ints", *kinds, "checked", *extra,
                                       "fw/ints", *("t/ints", "t0/ints")[:len(over_ints)]))
    print(f"  {'row':20}{head}")
    missed = []
    for label, us in results:
        raw = us["raw"]
        fw = max(us[k] for k in kinds)
        cells = [f"{raw:8.2f}"] + [f"{us[k] / raw:8.2f}" for k in ("bind()", "ints", *kinds,
                                                                  "checked", *extra)]
        cells += [f"{fw / us['ints']:8.2f}"] + [f"{us[k] / us['ints']:8.2f}" for k in over_ints]
        print(f"  {label:20}{''.join(cells)}")
        for name, limit in (("bind()", 1.5), ("ints", 2.0), *((k, 3.0) for k in kinds)):
            if us[name] / raw > limit:
                missed.append(f"{version} {label}: {name} {us[name] / raw:.2f}x raw > {limit}")
        if fw / us["ints"] > 2.0:
            missed.append(f"{version} {label}: framework {fw / us['ints']:.2f}x ints > 2")
    return missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--number", type=int, default=20000, help="calls per timing")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved rounds (best kept)")
    parser.add_argument("--version", choices=("3.4", "3.5"), action="append",
                        help="MIOpen symbol set(s); default both")
    parser.add_argument("--quick", action="store_true", help="tiny counts (CI: it runs)")
    parser.add_argument("--lock", action="store_true",
                        help="only the fused-plan lock's cost: with and without it, interleaved")
    args = parser.parse_args(argv)
    number, repeat = (20, 1) if args.quick else (args.number, args.repeat)
    torch = _torch_cuda()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load average "
          f"{os.getloadavg()}, torch CUDA tensors: {'yes' if torch is not None else 'no'}")
    if torch is not None:
        print(f"torch {torch.__version__}; torch's tensor guard (hipdnn/pipeline/packsig.py): "
              f"{'in use' if _packsig._load_tensor_guards() is not None else 'unavailable'}")
    missed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="hipdnn-bench-") as tmp:
        noop = build_noop_library(tmp)
        print(f"ctypes floor (no-argument C call): {floor_call(noop, number, repeat):.3f} us")
        for version in args.version or ["3.4", "3.5"]:
            if args.lock:
                lock_table(version, noop, number, repeat)
                continue
            missed += report(version, measure(version, noop, number, repeat, torch))
    print(f"load average after: {os.getloadavg()}")
    print("targets missed: " + ("; ".join(missed) if missed else "none"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
