"""Thread workloads of tests/emulated/test_threads.py, also run as a script in a fresh interpreter:

    python tests/emulated/_threads_worker.py reference 8   # 8 threads race their first build
    python tests/emulated/_threads_worker.py miopen 8      # on MIOPEN_ENGINE, emulated MIOpen 3.5

The script prints one JSON line: threads, how many succeeded, the errors, the engines used.
Every workload checks every result against numpy (float64), so a race that computes a wrong
answer fails as surely as one that raises.
"""

from __future__ import annotations

import json
import sys
import threading
import traceback
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

F32_NAME = "FLOAT"


def bn_graph(hipdnn: Any, shape: tuple[int, int, int, int], handle: Any = None,
             ) -> tuple[Any, Any, list[Any]]:
    """A BN-training graph of x ``shape`` (y, mean and inverse std as outputs)."""
    f32 = hipdnn.DataType.FLOAT
    g = hipdnn.Graph(io_data_type=f32, intermediate_data_type=f32, compute_data_type=f32,
                     handle=handle)
    c = shape[1]
    xt = g.tensor(dim=list(shape), data_type=f32, name="x")
    st, bt = (g.tensor(dim=[1, c, 1, 1], data_type=f32, name=k) for k in ("scale", "bias"))
    outs = list(g.batchnorm(xt, st, bt, 1e-5)[:3])
    for t in outs:
        t.set_output(True)
    return g, (xt, st, bt), outs


def run_bn(g: Any, ins: Any, outs: list[Any], seed: int, shape: tuple[int, ...],
           handle: Any = None) -> None:
    """Execute ``g`` on fresh data made from ``seed`` and check y, mean and inverse std."""
    xt, st, bt = ins
    c = shape[1]
    rng = np.random.default_rng(seed)
    x = rng.normal(seed % 5, 1 + seed % 3, shape).astype(np.float32)
    scale = rng.uniform(0.5, 2, c).astype(np.float32)
    bias = rng.normal(size=c).astype(np.float32)
    got = [np.full(shape, np.nan, np.float32), np.full(c, np.nan, np.float32),
           np.full(c, np.nan, np.float32)]
    pack = {xt: x, st: scale, bt: bias, **dict(zip(outs, got, strict=True))}
    ws = np.zeros(max(g.get_workspace_size(), 1), np.uint8)
    if handle is None:
        g.execute(pack, ws)
    else:
        g.execute(pack, ws, handle)
    x64 = x.astype(np.float64)
    mean, var = x64.mean(axis=(0, 2, 3)), x64.var(axis=(0, 2, 3))
    inv = 1 / np.sqrt(var + 1e-5)
    b = (1, c, 1, 1)
    y = (x64 - mean.reshape(b)) * (inv * scale).reshape(b) + bias.reshape(b)
    for name, have, want in (("y", got[0], y), ("mean", got[1], mean), ("inv", got[2], inv)):
        if not np.allclose(have, want, rtol=1e-4, atol=1e-4):
            raise AssertionError(f"seed {seed}: {name} off by {np.nanmax(np.abs(have - want))}")


def emulated_miopen() -> tuple[Any, Callable[[], None]]:
    """Register MIOPEN_ENGINE over a new emulated MIOpen 3.5 device; (device, restore)."""
    tests = str(ROOT / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    from emulated.device import EmulatedDevice
    from emulated.registration import registered

    from hipdnn.engines.miopen import MiopenEngine

    device = EmulatedDevice("3.5")
    registration = ExitStack()
    registration.enter_context(registered(MiopenEngine(miopen_loader=lambda: device.miopen,
                                                       hip_loader=lambda: device.hip)))
    return device, registration.close


def race(threads: int, work: Callable[[int], Any]) -> tuple[list[Any], list[str]]:
    """Run ``work(i)`` on ``threads`` threads released together; (results, errors)."""
    barrier = threading.Barrier(threads)
    results: list[Any] = [None] * threads
    errors: list[str] = []

    def body(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work(i)
        except BaseException:  # every failure is reported
            errors.append(f"thread {i}: {traceback.format_exc(limit=4)}")

    pool = [threading.Thread(target=body, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(120)
    errors.extend(f"thread {i} did not finish" for i, t in enumerate(pool) if t.is_alive())
    return results, errors


def cold_start(engine: str, threads: int) -> dict[str, Any]:
    """In a fresh interpreter: every thread builds its first graph at the same moment (half of
    them one shared structure, half their own), executes it and checks the result."""
    sys.path.insert(0, str(ROOT))
    restore = None
    if engine == "miopen":
        _, restore = emulated_miopen()  # registered, nothing loaded or built yet
    import hipdnn

    want = "MIOPEN_ENGINE" if engine == "miopen" else "CPU_REFERENCE_ENGINE"

    def first_build(i: int) -> str:
        shape = (2, 3, 4, 4) if i % 2 else (2, 1 + i, 3, 5)
        g, ins, outs = bn_graph(hipdnn, shape)
        g.build()
        run_bn(g, ins, outs, i, shape)
        name = g.get_plan_name()
        g.close()
        return name

    try:
        names, errors = race(threads, first_build)
    finally:
        if restore is not None:
            restore()
    wrong = [n for n in names if n is not None and not n.startswith(want)]
    return {"threads": threads, "ok": threads - len(errors), "errors": errors + wrong,
            "plans": sorted({n for n in names if n})}


def _build_on(g: Any, engine_name: str) -> None:
    g.build_operation_graph()
    g.create_execution_plan_ext(engine_name, {})
    g.build_plans()


def shared_graph(hipdnn: Any, engine_name: str, threads: int, iterations: int,
                 check: Callable[[Any], None] | None = None) -> list[str]:
    """One built graph executed by every thread ``iterations`` times, each on its own data;
    odd threads pass their own Handle (a MIOpen handle per thread), even ones the graph's.
    ``check(handle)`` runs in each thread at its end, with the Handle its executes used."""
    shape = (2, 3, 4, 5)
    main = hipdnn.Handle()
    g, ins, outs = bn_graph(hipdnn, shape, main)
    _build_on(g, engine_name)

    def work(i: int) -> int:
        handle = hipdnn.Handle() if i % 2 else None
        try:
            for it in range(iterations):
                run_bn(g, ins, outs, 1000 * i + it, shape, handle)
            if check is not None:
                check(handle if handle is not None else main)
        finally:
            if handle is not None:
                handle.close()
        return iterations

    try:
        done, errors = race(threads, work)
    finally:
        g.close()
        main.close()
    assert sum(d for d in done if d) == threads * iterations or errors
    return errors


def distinct_graphs(hipdnn: Any, engine_name: str, threads: int, iterations: int) -> list[str]:
    """Every thread builds, runs and closes ``iterations`` graphs on its own Handle (closed at
    the end, while the others still build): a third of the structures are shared by all
    threads (served from the plan cache, possibly built by two at once), the rest its own."""

    def work(i: int) -> int:
        with hipdnn.Handle() as h:
            for it in range(iterations):
                shape = (2, 2, 3, 1 + it) if it % 3 == 0 else (2, 1 + i, 2, 1 + it)
                g, ins, outs = bn_graph(hipdnn, shape, h)
                with g:
                    _build_on(g, engine_name)
                    run_bn(g, ins, outs, 1000 * i + it, shape)
        return iterations

    return race(threads, work)[1]


def main(argv: list[str]) -> int:
    engine, threads = argv[0], int(argv[1])
    print(json.dumps(cold_start(engine, threads)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
