"""Graph build time: first build (cold plan cache) vs building the same graph again (warm cache).

For MIOPEN_ENGINE on the emulated device (``tests/emulated/device.py``, test code imported by
path; MIOpen 3.5 symbol set by default) and for CPU_REFERENCE_ENGINE (run with MIOPEN_ENGINE
unregistered), on three FP32 NCHW seed rows -- conv fprop, conv + bias + relu, BN inference
(defined here, shapes MIOPEN_ENGINE accepts) -- this prints
the median time of ``graph.build()`` for a freshly constructed graph on a cold plan cache
(``hipdnn.clear_plan_cache()`` first: "cold") and on a warm one ("warm"), their ratio (DESIGN
target: < 1/20), ``build()`` called again on the same, already built graph object ("same"),
its ratio to cold, and the time to construct a new graph object ("new", not part of any build).
A fresh graph object identical to one validated before (names, dims, dtypes, attributes, wiring)
gets the memoized validation (hipdnn.ir.validation.validate_structure), so "warm" costs its
structure signature plus the plan-cache lookups; the same object skips even the memo when
unchanged. ``clear_plan_cache()`` also clears the validation memo, so "cold" validates in full.
Every build of a row is timed interleaved cold/warm so both see the same machine load.

    PYTHONPATH=. python benchmarks/bench_graph_build.py [--repeat 15] [--all-rows]

``--all-rows`` adds every seed row of tests/unit/test_serialize.py (mixed dtypes and layouts;
MIOPEN_ENGINE declines some of them, then the reference engine builds them: see "engine used").
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "unit"))

from emulated.device import EmulatedDevice  # noqa: E402  (test code: the emulated device)
from test_serialize import SEED_ROWS  # noqa: E402  (the seed-row graph builders)

import hipdnn  # noqa: E402
from hipdnn.engines import register, registry, unregister  # noqa: E402
from hipdnn.engines.miopen import MiopenEngine  # noqa: E402

MIOPEN = "MIOPEN_ENGINE"
F = hipdnn.DataType.FLOAT


def conv_fprop() -> hipdnn.Graph:
    """Conv fprop, FP32 NCHW (a seed row MIOPEN_ENGINE accepts)."""
    g = hipdnn.Graph("conv_fprop", io_data_type=F, compute_data_type=F)
    x, w = g.tensor(dim=[2, 8, 16, 16], name="x"), g.tensor(dim=[8, 8, 3, 3], name="w")
    g.conv_fprop(x, w, padding=[1, 1], name="conv").set_output(True)
    return g


def conv_bias_relu() -> hipdnn.Graph:
    """Conv fprop + bias + ReLU, FP32 NCHW."""
    g = hipdnn.Graph("conv_bias_relu", io_data_type=F, intermediate_data_type=F,
                     compute_data_type=F)
    x, w = g.tensor(dim=[2, 8, 16, 16], name="x"), g.tensor(dim=[8, 8, 3, 3], name="w")
    b = g.tensor(dim=[1, 8, 1, 1], name="b")
    y = g.conv_fprop(x, w, padding=[1, 1], name="conv")
    g.relu(g.bias(y, b, name="bias"), name="relu").set_output(True)
    return g


def bn_inference() -> hipdnn.Graph:
    """BN inference (variance form), FP32 NCHW."""
    g = hipdnn.Graph("bn_inference", io_data_type=F, compute_data_type=F)
    x = g.tensor(dim=[2, 8, 16, 16], name="x")
    mean, var, scale, bias = (g.tensor(dim=[1, 8, 1, 1], name=n)
                              for n in ("mean", "var", "scale", "bias"))
    g.batchnorm_inference(x, mean, scale=scale, bias=bias, variance=var, epsilon=1e-5,
                          name="bn").set_output(True)
    return g


GRAPHS: dict[str, Callable[[], hipdnn.Graph]] = {
    f.__name__: f for f in (conv_fprop, conv_bias_relu, bn_inference)}


@contextmanager
def miopen_as(engine: MiopenEngine | None) -> Iterator[None]:
    """Register ``engine`` as MIOPEN_ENGINE (None: no MIOPEN_ENGINE at all) for the block."""
    previous = registry().get(hipdnn.backend.engine.fnv1a_64(MIOPEN))
    if engine is None:
        unregister(MIOPEN)
    else:
        register(engine)
    try:
        yield
    finally:
        if previous is not None:
            register(previous)
        else:
            unregister(MIOPEN)


def _timed_build(make: Callable[[], hipdnn.Graph], cold: bool) -> tuple[float, str]:
    g = make()
    if cold:
        hipdnn.clear_plan_cache()
    start = time.perf_counter()
    g.build()
    elapsed = time.perf_counter() - start
    engine = g.plans[0].engine.name
    g.close()
    return elapsed, engine


def _timed_rebuild(make: Callable[[], hipdnn.Graph]) -> float:
    """``build()`` again on the same, already built graph object (nothing edited)."""
    g = make()
    g.build()
    start = time.perf_counter()
    g.build()
    elapsed = time.perf_counter() - start
    g.close()
    return elapsed


def _timed_construct(make: Callable[[], hipdnn.Graph]) -> float:
    start = time.perf_counter()
    make()
    return time.perf_counter() - start


def bench(label: str, rows: list[str], repeat: int) -> float:
    """Print one line per row; returns the worst warm/cold ratio."""
    worst = 0.0
    for row in rows:
        make = GRAPHS.get(row) or SEED_ROWS[row]
        _timed_build(make, cold=True)  # warm up imports, handles, engine discovery
        colds, warms, agains, constructs = [], [], [], []
        engine = "?"
        for _ in range(repeat):
            t, engine = _timed_build(make, cold=True)
            colds.append(t)
            warms.append(_timed_build(make, cold=False)[0])
            agains.append(_timed_rebuild(make))
            constructs.append(_timed_construct(make))
        cold, warm = statistics.median(colds) * 1e3, statistics.median(warms) * 1e3
        again = statistics.median(agains) * 1e3
        construct = statistics.median(constructs) * 1e3
        worst = max(worst, warm / cold)
        print(f"{label:27} {row:15} {engine:21} {cold:8.3f} {warm:8.3f} {warm / cold:6.3f} "
              f"{again:8.3f} {again / cold:6.3f} {construct:8.3f}")
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--version", default="3.5", choices=("3.4", "3.5"))
    parser.add_argument("--all-rows", action="store_true", help="every seed row")
    args = parser.parse_args()
    rows = list(GRAPHS) + (list(SEED_ROWS) if args.all_rows else [])
    print(f"load average {os.getloadavg()}, {os.cpu_count()} cpus")
    print(f"{'engine setup':27} {'graph':15} {'engine used':21} {'cold ms':>8} {'warm ms':>8} "
          f"{'ratio':>6} {'same ms':>8} {'ratio':>6} {'new ms':>8}")
    device = EmulatedDevice(args.version)
    emulated = MiopenEngine(miopen_loader=lambda: device.miopen, hip_loader=lambda: device.hip)
    worst = 0.0
    with miopen_as(emulated):
        worst = max(worst, bench(f"MIOPEN_ENGINE emulated {args.version}", rows, args.repeat))
    with miopen_as(None):
        worst = max(worst, bench("CPU_REFERENCE_ENGINE", rows, args.repeat))
    verdict = "meets" if worst < 1 / 20 else "MISSES"
    print(f"worst warm/cold ratio (fresh graph object) {worst:.3f} ({verdict} the < 1/20 = 0.050 "
          f"target); load average after {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
