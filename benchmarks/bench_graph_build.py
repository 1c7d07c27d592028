"""Graph build time: first build (cold plan cache) vs rebuilding the same structure (warm cache).

Builds one graph per seed-table row with the registered engines (the MIOpen engine where it can
run, else the CPU reference engine) and prints, per row, the median time of ``graph.build()``
on a cold cache, on a warm cache for a freshly constructed graph of the same structure, their
ratio (DESIGN target: warm < 1/20 of cold), and the time to construct the graph itself.

    PYTHONPATH=. python benchmarks/bench_graph_build.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit"))

from test_serialize import SEED_ROWS  # noqa: E402  (the seed-row graph builders)

import hipdnn  # noqa: E402


def _median_ms(fn: Callable[[], float], repeat: int) -> float:
    return statistics.median(fn() for _ in range(repeat)) * 1e3


def _timed_build(make: Callable[[], hipdnn.Graph], cold: bool) -> float:
    g = make()
    if cold:
        hipdnn.clear_plan_cache()
    start = time.perf_counter()
    g.build()
    elapsed = time.perf_counter() - start
    g.close()
    return elapsed


def _timed_construct(make: Callable[[], hipdnn.Graph]) -> float:
    start = time.perf_counter()
    make()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    for make in SEED_ROWS.values():  # warm up imports and engine discovery
        _timed_build(make, cold=True)
    print(f"{'seed row':34} {'engine':22} {'cold ms':>9} {'warm ms':>9} {'ratio':>7} "
          f"{'construct ms':>12}")
    worst = 0.0
    for row, make in SEED_ROWS.items():
        cold = _median_ms(lambda m=make: _timed_build(m, cold=True), args.repeat)
        _timed_build(make, cold=True)
        warm = _median_ms(lambda m=make: _timed_build(m, cold=False), args.repeat)
        construct = _median_ms(lambda m=make: _timed_construct(m), args.repeat)
        g = make()
        g.build()
        engine = g.plans[0].engine.name
        g.close()
        ratio = warm / cold
        worst = max(worst, ratio)
        print(f"{row:34} {engine:22} {cold:9.3f} {warm:9.3f} {ratio:7.3f} {construct:12.3f}")
    verdict = "meets" if worst < 1 / 20 else "MISSES"
    print(f"worst warm/cold ratio {worst:.3f} ({verdict} the < 1/20 = 0.050 target)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
