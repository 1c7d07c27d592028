"""Host overhead of executing a built MIOPEN_ENGINE plan, next to the ctypes call(s) it makes.

DESIGN target: ``execute()`` host overhead per call at most 2x the raw ctypes call(s) it makes,
measured side by side in one run.

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

Rows, per graph (all timed interleaved, best of ``--repeat`` rounds of ``--number`` calls):

* ``raw ctypes``      the plan's ctypes call(s) with prebuilt arguments (``cfunc(*cargs)``, the
                      same function objects, argtypes and errcheck a bound plan calls): the floor;
* ``bound()``         ``graph.bind(pack)()``: :class:`hipdnn.graph_exec.BoundExecution`;
* ``graph.execute``   ``graph.execute({tensor: int_ptr, ...})`` (the remembered int-pointer pack);
* ``checked execute`` what ``graph.execute`` does for a pack it does not remember (any pack
                      with arrays): resolve + check every value, then ``plan.execute``;
* ``plan.execute``    ``plan.execute(buffers, ws, handle)`` with resolved ``Buffer`` objects;
* ``first execute``   ``graph.execute`` with a fresh pack (resolution + validation + bind).

The emulated variant repeats the rows with the execute symbols on the emulated device (the
Python emulation does the math, so it dominates and the ratios approach 1).

    PYTHONPATH=. python benchmarks/bench_overhead.py [--number 20000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from emulated.device import EmulatedDevice  # noqa: E402  (test code: the emulated device)

import hipdnn  # noqa: E402
import miopen_ctypes  # noqa: E402
from hipdnn.engines import register, registry, unregister  # noqa: E402
from hipdnn.engines.miopen import MiopenEngine  # noqa: E402
from hipdnn.handle import Handle  # noqa: E402

EXECUTE_SYMBOLS = (
    "miopenConvolutionForwardImmediate", "miopenConvolutionBackwardDataImmediate",
    "miopenConvolutionBackwardWeightsImmediate", "miopenRunSolution",
    "miopenBatchNormalizationForwardInference_V2", "miopenExecuteFusionPlan",
    "miopenExecuteFusionPlan_v2", "miopenSetOpArgsConvForward", "miopenSetOpArgsBiasForward",
    "miopenSetOpArgsActivForward", "miopenOpTensor", "miopenActivationForward",
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


def conv_graph(handle: Handle) -> tuple[hipdnn.Graph, list[hipdnn.Tensor]]:
    g = hipdnn.Graph("conv_fprop", io_data_type=hipdnn.DataType.FLOAT, handle=handle)
    x = g.tensor(dim=[1, 4, 8, 8], name="x")
    w = g.tensor(dim=[4, 4, 3, 3], name="w")
    y = g.conv_fprop(x, w, padding=[1, 1]).set_output(True)
    return g, [x, w, y]


def bn_graph(handle: Handle) -> tuple[hipdnn.Graph, list[hipdnn.Tensor]]:
    g = hipdnn.Graph("bn_inference", io_data_type=hipdnn.DataType.FLOAT, handle=handle)
    x = g.tensor(dim=[1, 4, 8, 8], name="x")
    params = [g.tensor(dim=[1, 4, 1, 1], name=n) for n in ("mean", "var", "scale", "bias")]
    y = g.batchnorm_inference(x, params[0], None, params[2], params[3], variance=params[1],
                              epsilon=1e-5).set_output(True)
    return g, [x, *params, y]


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


def _execute(g: hipdnn.Graph, pack: dict[Any, int], ws: int | None,
             fresh: bool) -> Callable[[], None]:
    """``graph.execute(pack)``; ``fresh``: forget remembered packs first (resolve + bind)."""
    if not fresh:
        return lambda: g.execute(pack, ws)

    def first() -> None:
        g._forget_bindings()
        g.execute(dict(pack), ws)
    return first


def _checked_execute(g: hipdnn.Graph, pack: dict[Any, int], ws: int | None) -> Callable[[], None]:
    """The resolve-and-check path (what execute does for packs it does not remember)."""
    return lambda: g._run(g._plan(0), pack, ws, None)


def _plan_execute(plan: Any, buffers: Any, ws: Any, handle: Handle) -> Callable[[], None]:
    return lambda: plan.execute(buffers, ws, handle)


def measure(device: EmulatedDevice, lib: miopen_ctypes.MIOpenLibrary, number: int,
            repeat: int) -> list[tuple[str, str, float]]:
    """(graph, row, us per call) for both graphs with ``lib`` as the MIOpen library."""
    engine = MiopenEngine(miopen_loader=lambda: lib, hip_loader=lambda: device.hip)
    previous = registry().get(engine.engine_id)
    register(engine)
    results: list[tuple[str, str, float]] = []
    try:
        for make in (conv_graph, bn_graph):
            handle = Handle()
            g, tensors = make(handle)
            g.build()
            plan = g.plans[0]
            assert plan.engine is engine, plan
            pack = {t: device.alloc(_nbytes(t)) for t in tensors}
            ws = device.alloc(plan.workspace_size) if plan.workspace_size else None
            buffers = {t.uid: hipdnn.interop.resolve(p) for t, p in pack.items()}
            wsbuf = None if ws is None else hipdnn.interop.resolve(ws)
            bound = g.bind(pack, ws)
            prepared = getattr(bound._run, "prepared", None)  # the plan's prebuilt (cfunc, cargs)
            assert prepared is not None, f"{g.name}: the plan did not prebuild its calls"
            g.execute(pack, ws)  # remember the int-pointer pack
            rows: dict[str, Callable[[], None]] = {
                "raw ctypes": _raw(prepared),
                "bound()": bound,
                "graph.execute(ints)": _execute(g, pack, ws, fresh=False),
                "checked execute": _checked_execute(g, pack, ws),
                "plan.execute": _plan_execute(plan, buffers, wsbuf, handle),
                "first execute": _execute(g, pack, ws, fresh=True),
            }
            best = {name: float("inf") for name in rows}
            for _ in range(repeat):  # interleaved: every row sees the same machine load
                for name, fn in rows.items():
                    n = max(1, number // 20) if name == "first execute" else number
                    best[name] = min(best[name], timeit.timeit(fn, number=n) / n * 1e6)
            results += [(g.name, name, best[name]) for name in rows]
            g.close()
            handle.close()
    finally:
        if previous is not None:
            register(previous)
        else:
            unregister(engine)
    return results


def floor_call(noop: ctypes.CDLL, number: int, repeat: int) -> float:
    """us per call of a no-argument C function through ctypes (the machine's ctypes floor)."""
    f = noop.hipdnn_bench_noop0
    f.restype, f.argtypes = ctypes.c_int, ()
    return min(timeit.repeat(f, number=number, repeat=repeat)) / number * 1e6


def report(title: str, results: list[tuple[str, str, float]]) -> None:
    print(title)
    print(f"  {'graph':14} {'path':22} {'us/call':>9} {'x raw':>7}")
    raw = {g: us for g, row, us in results if row == "raw ctypes"}
    for graph, row, us in results:
        print(f"  {graph:14} {row:22} {us:9.3f} {us / raw[graph]:7.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--number", type=int, default=20000, help="calls per timing")
    parser.add_argument("--repeat", type=int, default=7, help="interleaved rounds (best kept)")
    parser.add_argument("--version", default="3.5", choices=("3.4", "3.5"))
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, load average {os.getloadavg()}, "
          f"{os.cpu_count()} cpus, emulated MIOpen {args.version}")
    with tempfile.TemporaryDirectory(prefix="hipdnn-bench-") as tmp:
        noop = build_noop_library(tmp)
        print(f"ctypes floor (no-argument C call): {floor_call(noop, args.number, args.repeat):.3f} us")
        device = EmulatedDevice(args.version)
        report("MIOPEN_ENGINE, execute symbols = C no-ops (build on the emulated device):",
               measure(device, hybrid_library(device, noop), args.number, args.repeat))
        small = max(1, args.number // 20)
        report(f"MIOPEN_ENGINE, everything emulated (Python math; {small} calls per timing):",
               measure(device, device.miopen, small, args.repeat))
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
