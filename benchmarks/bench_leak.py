"""Lifetime loop: build / execute / close graphs of distinct structures on fresh handles, and watch
what stays behind (process RSS, the plan cache, live MIOpen objects and device allocations).

    python benchmarks/bench_leak.py                    # 10,000 cycles per engine
    python benchmarks/bench_leak.py --cycles 500       # shorter
    python benchmarks/bench_leak.py --engine reference # one engine only
    python benchmarks/bench_leak.py --mode handles     # fresh handles, one structure
    python benchmarks/bench_leak.py --mode structures  # distinct structures, one handle
    python benchmarks/bench_leak.py --mode dropped     # handles never closed, just dropped

Every cycle makes a new :class:`hipdnn.Handle`, a BN-training graph whose shape no earlier cycle
used (so nothing is served from a cache), builds it, executes it on numpy arrays, checks one
value, closes the graph and the handle. Engines: ``CPU_REFERENCE_ENGINE``, and ``MIOPEN_ENGINE``
over the emulated MIOpen 3.5 device of ``tests/emulated/device.py`` (test code imported by path;
its live object counts are what a real libMIOpen would hold). A line is printed every tenth of
the run; the last says whether everything the cycles created was released.

Also used by tests/unit/test_leak.py (short runs, in CI) through :func:`run`.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import hipdnn  # noqa: E402
from hipdnn.core.handle import Handle  # noqa: E402
from hipdnn.engines import register, registry, unregister  # noqa: E402
from hipdnn.engines.miopen import MiopenEngine  # noqa: E402
from hipdnn.pipeline.plan_cache import plan_cache  # noqa: E402

F32 = hipdnn.DataType.FLOAT
#: Distinct shapes come from varying C (1..16) and W (1, 2, ...); N = 2, H = 2.
CHANNELS = 16


def rss_bytes() -> int:
    """Resident set size of this process now: /proc on Linux, the working set on Windows
    (GetProcessMemoryInfo), 0 where neither can be read."""
    if sys.platform == "win32":
        return _working_set()
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


def _working_set() -> int:
    class Counters(ctypes.Structure):  # PROCESS_MEMORY_COUNTERS
        _fields_ = [("cb", ctypes.c_uint32), ("PageFaultCount", ctypes.c_uint32),
                    *((name, ctypes.c_size_t) for name in (
                        "PeakWorkingSetSize", "WorkingSetSize", "QuotaPeakPagedPoolUsage",
                        "QuotaPagedPoolUsage", "QuotaPeakNonPagedPoolUsage",
                        "QuotaNonPagedPoolUsage", "PagefileUsage", "PeakPagefileUsage"))]

    try:
        kernel32 = ctypes.WinDLL("kernel32")  # type: ignore[attr-defined,unused-ignore]
        kernel32.GetCurrentProcess.restype = ctypes.c_void_p
        info = Counters()
        info.cb = ctypes.sizeof(info)
        ok = kernel32.K32GetProcessMemoryInfo(ctypes.c_void_p(kernel32.GetCurrentProcess()),
                                              ctypes.byref(info), info.cb)
        return int(info.WorkingSetSize) if ok else 0
    except (OSError, AttributeError):
        return 0


@dataclass
class Sample:
    """What is alive after ``cycle`` cycles."""

    cycle: int
    rss: int
    plans: int
    answers: int
    miopen_objects: int
    device_allocations: int


def cycle_shape(i: int) -> tuple[int, int, int, int]:
    """The x shape of cycle ``i``: distinct for every i."""
    return (2, 1 + i % CHANNELS, 2, 1 + i // CHANNELS)


#: What changes from cycle to cycle: "both" (a fresh Handle and a new shape), "handles" (a fresh
#: Handle, always the same shape), "structures" (a new shape, one Handle for the whole run,
#: closed at the end), "dropped" (a fresh Handle and a new shape, the Handle never closed).
MODES = ("both", "handles", "structures", "dropped")


def one_cycle(i: int, engine: str, handle: Handle | None = None, same_shape: bool = False,
              close: bool = True) -> None:
    """A graph of cycle ``i``'s shape (or always the first) on ``handle`` (None: a new Handle,
    closed after unless ``close`` is False: then just dropped): build, execute, check, close."""
    shape = cycle_shape(0 if same_shape else i)
    c = shape[1]
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) % 7
    own = handle is None
    h = Handle() if handle is None else handle
    try:
        _build_run_check(i, engine, h, x, c)
    finally:
        if own and close:
            h.close()


def _build_run_check(i: int, engine: str, h: Handle, x: np.ndarray, c: int) -> None:
    with hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32,
                      handle=h) as g:
        xt = g.tensor_like(x, "x")
        st, bt = (g.tensor(dim=[1, c, 1, 1], data_type=F32, name=k) for k in ("scale", "bias"))
        y, mean, inv = g.batchnorm(xt, st, bt, 1e-5)[:3]
        for t in (y, mean, inv):
            t.set_output(True)
        g.build_operation_graph()
        g.create_execution_plan_ext(engine, {})
        g.build_plans()
        out = {y: np.empty_like(x), mean: np.empty(c, np.float32), inv: np.empty(c, np.float32)}
        g.execute({xt: x, st: np.ones(c, np.float32), bt: np.zeros(c, np.float32), **out},
                  np.zeros(max(g.get_workspace_size(), 1), np.uint8))
        want = x.mean(axis=(0, 2, 3))
        if not np.allclose(out[mean], want, rtol=1e-5, atol=1e-5):
            raise AssertionError(f"cycle {i}: wrong mean {out[mean]} (want {want})")


def emulated_engine() -> tuple[Any, Any, Callable[[], None]]:
    """(device, engine, restore): MIOPEN_ENGINE over an emulated MIOpen 3.5, registered."""
    tests = str(ROOT / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    from emulated.device import EmulatedDevice  # test code: tests/ is on the path only now

    device = EmulatedDevice("3.5")
    engine = MiopenEngine(miopen_loader=lambda: device.miopen, hip_loader=lambda: device.hip)
    previous = registry().get(engine.engine_id)
    register(engine)

    def restore() -> None:
        if previous is not None:
            register(previous)
        else:
            unregister(engine)

    return device, engine, restore


def run(engine: str, cycles: int, samples: int = 10,
        report: Callable[[Sample], None] | None = None, mode: str = "both") -> list[Sample]:
    """``cycles`` cycles on ``engine`` ("reference" or "miopen") in ``mode`` (:data:`MODES`);
    samples at 0, every ``cycles // samples`` cycles (after a garbage collection) and at the
    end (in "structures" mode after closing the run's Handle)."""
    name = "CPU_REFERENCE_ENGINE" if engine == "reference" else "MIOPEN_ENGINE"
    device, restore = None, None
    if engine == "miopen":
        device, _, restore = emulated_engine()
    every = max(1, cycles // samples)

    def sample(i: int) -> Sample:
        gc.collect()
        plan_cache.forget_collected()  # what the next build would do first
        s = Sample(i, rss_bytes(), len(plan_cache), plan_cache.answer_count,
                   len(device.live_objects()) if device is not None else 0,
                   len(device.live_allocations()) if device is not None else 0)
        if report is not None:
            report(s)
        return s

    out = []
    shared = Handle() if mode == "structures" else None
    try:
        for i in range(cycles):
            if i % every == 0:
                out.append(sample(i))
            one_cycle(i, name, shared, same_shape=mode == "handles", close=mode != "dropped")
            if device is not None:
                device.clear_calls()  # the call log is the device's, not ours
        if shared is not None:
            out.append(sample(cycles))  # still open: its plans are cached, within the bounds
            shared.close()
        out.append(sample(cycles))
    finally:
        if restore is not None:
            restore()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cycles", type=int, default=10_000)
    ap.add_argument("--engine", choices=("reference", "miopen", "both"), default="both")
    ap.add_argument("--mode", choices=MODES, default="both",
                    help="both: a fresh Handle and a new shape per cycle; handles: a fresh "
                         "Handle, same shape; structures: a new shape, one Handle (closed at "
                         "the end); dropped: like both, the Handle never closed")
    args = ap.parse_args(argv)
    engines = ["reference", "miopen"] if args.engine == "both" else [args.engine]
    what = {"both": "fresh Handle, distinct shape", "handles": "fresh Handle, same shape",
            "structures": "one Handle, distinct shapes",
            "dropped": "fresh Handle never closed, distinct shape"}[args.mode]
    ok = True
    for engine in engines:
        print(f"{engine}: {args.cycles} cycles ({what}; build, execute, close)")
        print(f"  {'cycle':>6} {'RSS MB':>8} {'plans':>6} {'answers':>8} {'MIOpen objs':>11} "
              f"{'dev allocs':>10}")
        t0 = time.perf_counter()

        def line(s: Sample) -> None:
            print(f"  {s.cycle:>6} {s.rss / 2**20:>8.1f} {s.plans:>6} {s.answers:>8} "
                  f"{s.miopen_objects:>11} {s.device_allocations:>10}", flush=True)

        got = run(engine, args.cycles, report=line, mode=args.mode)
        first, last = got[0], got[-1]
        dt = time.perf_counter() - t0
        released = (last.plans <= first.plans and last.answers <= first.answers
                    and last.miopen_objects <= first.miopen_objects
                    and last.device_allocations <= first.device_allocations)
        bounded = all(s.plans <= plan_cache.maxsize and s.answers <= plan_cache.max_answers
                      for s in got)
        ok &= released and bounded
        verdict = ("everything the cycles created was released" if released and bounded
                   else "LEAK")
        print(f"  RSS {first.rss / 2**20:.1f} -> {last.rss / 2**20:.1f} MB; {verdict}; "
              f"{dt:.1f} s ({dt / max(args.cycles, 1) * 1e3:.2f} ms per cycle)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
