"""Reference-engine kernels vs PyTorch CPU on a named shape suite; prints a table and the geomean.

Suite: the distinct convolution layers of ResNet-50 at batch 8 (forward, NCHW and NHWC), one
3-D convolution, batchnorm training and backward on 8x256x56x56. "Ours" is ``graph.execute`` of a
graph built with the public API on CPU_REFERENCE_ENGINE (outputs written into arrays of the
requested layout, as a user sees it). Both sides run FP32 with the same
number of threads (PyTorch's ``set_num_threads`` = numpy's BLAS threads); each case alternates
ours/PyTorch repeats and keeps the best time of each, which is the fairest number on a shared
machine. Target: geometric mean of ours/PyTorch <= 2.

    python benchmarks/bench_reference.py            # full suite (~1-3 min)
    python benchmarks/bench_reference.py --quick    # a few cases, for a smoke run
    python benchmarks/bench_reference.py --blocked  # each side in its own run of calls

Alternating call by call, each side can run while the other's helper threads still hold the
cores (PyTorch's OpenMP workers spin-wait after a call): on a 16-core host that made our
batchnorm 2x slower than in a run of its own calls. ``--blocked`` avoids it.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import hipdnn
from hipdnn.engines import registry

__all__ = ["Case", "main", "suite"]


@dataclass(frozen=True)
class Case:
    """One benchmark case: a label and a factory returning (ours, torch) zero-argument callables."""

    name: str
    setup: Callable[[], tuple[Callable[[], Any], Callable[[], Any]]]


#: (C, K, input H=W, kernel, stride, pad) of ResNet-50 (torchvision v1.5: stride on the 3x3).
RESNET50_CONVS: tuple[tuple[int, int, int, int, int, int], ...] = (
    (3, 64, 224, 7, 2, 3),
    (64, 64, 56, 1, 1, 0), (64, 64, 56, 3, 1, 1), (64, 256, 56, 1, 1, 0), (256, 64, 56, 1, 1, 0),
    (256, 128, 56, 1, 1, 0), (128, 128, 56, 3, 2, 1), (128, 512, 28, 1, 1, 0),
    (256, 512, 56, 1, 2, 0), (512, 128, 28, 1, 1, 0), (128, 128, 28, 3, 1, 1),
    (512, 256, 28, 1, 1, 0), (256, 256, 28, 3, 2, 1), (256, 1024, 14, 1, 1, 0),
    (512, 1024, 28, 1, 2, 0), (1024, 256, 14, 1, 1, 0), (256, 256, 14, 3, 1, 1),
    (1024, 512, 14, 1, 1, 0), (512, 512, 14, 3, 2, 1), (512, 2048, 7, 1, 1, 0),
    (1024, 2048, 14, 1, 2, 0), (2048, 512, 7, 1, 1, 0), (512, 512, 7, 3, 1, 1),
)
QUICK = {0, 2, 3, 6, 8, 16}


def _channels_last_np(a: np.ndarray) -> np.ndarray:
    """Logical-order view of ``a`` stored channels-last."""
    order = (0, *range(2, a.ndim), 1)
    return np.ascontiguousarray(a.transpose(order)).transpose(np.argsort(order))


F32 = hipdnn.DataType.FLOAT


def _runner(g: hipdnn.Graph, pack: dict[Any, Any]) -> Callable[[], Any]:
    """Build ``g`` on the reference engine only; return a zero-argument executor."""
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans()
    g.deselect_engines([e.name for e in registry().values() if e.name != "CPU_REFERENCE_ENGINE"])
    g.build_plans()
    return lambda: g.execute(pack)


def _out(t: hipdnn.Tensor) -> np.ndarray:
    """An FP32 array with the tensor's dims and strides (its layout)."""
    dim, stride = t.get_dim(), t.get_stride()
    order = sorted(range(len(dim)), key=lambda a: -stride[a])
    return np.zeros([dim[a] for a in order], np.float32).transpose(np.argsort(order))


def _conv_case(torch: Any, c: int, k: int, hw: int, ks: int, s: int, p: int, layout: str,
               batch: int) -> Case:
    def setup() -> tuple[Callable[[], Any], Callable[[], Any]]:
        rng = np.random.default_rng(0)
        x = rng.standard_normal((batch, c, hw, hw), dtype=np.float32)
        w = rng.standard_normal((k, c, ks, ks), dtype=np.float32)
        xt, wt = torch.from_numpy(x), torch.from_numpy(w)
        if layout == "NHWC":
            x, w = _channels_last_np(x), _channels_last_np(w)
            xt = xt.contiguous(memory_format=torch.channels_last)
            wt = wt.contiguous(memory_format=torch.channels_last)
        g = hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
        xg, wg = g.tensor_like(x, "x"), g.tensor_like(w, "w")
        y = g.conv_fprop(xg, wg, padding=p, stride=s).set_output(True)
        ours = _runner(g, {xg: x, wg: w, y: _out(y)})
        conv2d = torch.nn.functional.conv2d

        def ref() -> Any:
            with torch.no_grad():
                return conv2d(xt, wt, stride=s, padding=p)
        return ours, ref
    return Case(f"conv {c}->{k} {ks}x{ks}/{s} @{hw} {layout}", setup)


def _conv3d_case(torch: Any) -> Case:
    def setup() -> tuple[Callable[[], Any], Callable[[], Any]]:
        rng = np.random.default_rng(0)
        x = rng.standard_normal((2, 32, 16, 28, 28), dtype=np.float32)
        w = rng.standard_normal((64, 32, 3, 3, 3), dtype=np.float32)
        xt, wt = torch.from_numpy(x), torch.from_numpy(w)
        g = hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
        xg, wg = g.tensor_like(x, "x"), g.tensor_like(w, "w")
        y = g.conv_fprop(xg, wg, padding=1).set_output(True)
        ours = _runner(g, {xg: x, wg: w, y: _out(y)})

        def ref() -> Any:
            with torch.no_grad():
                return torch.nn.functional.conv3d(xt, wt, padding=1)
        return ours, ref
    return Case("conv3d 32->64 3x3x3/1 @16x28x28 NCDHW n2", setup)


def _bn_cases(torch: Any, layout: str) -> list[Case]:
    shape = (8, 256, 56, 56)
    c = shape[1]

    def data() -> tuple[np.ndarray, np.ndarray, Any, Any]:
        rng = np.random.default_rng(0)
        x = rng.standard_normal(shape, dtype=np.float32)
        dy = rng.standard_normal(shape, dtype=np.float32)
        if layout == "NHWC":
            x, dy = _channels_last_np(x), _channels_last_np(dy)
        fmt = torch.channels_last if layout == "NHWC" else torch.contiguous_format
        return x, dy, torch.from_numpy(np.ascontiguousarray(x)).contiguous(memory_format=fmt), \
            torch.from_numpy(np.ascontiguousarray(dy)).contiguous(memory_format=fmt)

    def params(g: hipdnn.Graph, names: Sequence[str]) -> list[hipdnn.Tensor]:
        return [g.tensor(dim=[1, c, 1, 1], data_type=F32, name=n) for n in names]

    def train() -> tuple[Callable[[], Any], Callable[[], Any]]:
        x, _, xt, _ = data()
        g = hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
        xg = g.tensor_like(x, "x")
        sg, bg, rmg, rvg = params(g, ("scale", "bias", "rm", "rv"))
        outs = g.batchnorm(xg, sg, bg, 1e-5, momentum=0.1, in_running_mean=rmg,
                           in_running_var=rvg)
        pack: dict[Any, Any] = {xg: x, sg: np.ones(c, np.float32), bg: np.zeros(c, np.float32),
                                rmg: np.zeros(c, np.float32), rvg: np.ones(c, np.float32)}
        for t in outs:
            assert t is not None
            t.set_output(True)
            pack[t] = _out(t)
        ours = _runner(g, pack)
        trm, trv, tg, tb = torch.zeros(c), torch.ones(c), torch.ones(c), torch.zeros(c)

        def ref() -> Any:
            return torch.nn.functional.batch_norm(xt, trm, trv, tg, tb, training=True,
                                                  momentum=0.1, eps=1e-5)
        return ours, ref

    def backward() -> tuple[Callable[[], Any], Callable[[], Any]]:
        x, dy, xt, dyt = data()
        axes = (0, 2, 3)
        mean = x.mean(axis=axes, dtype=np.float64).astype(np.float32)
        inv = (1.0 / np.sqrt(x.var(axis=axes, dtype=np.float64) + 1e-5)).astype(np.float32)
        g = hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
        dyg, xg = g.tensor_like(dy, "dy"), g.tensor_like(x, "x")
        sg, mg, ig = params(g, ("scale", "mean", "inv"))
        outs = g.batchnorm_backward(dyg, xg, sg, mg, ig)
        pack: dict[Any, Any] = {dyg: dy, xg: x, sg: np.ones(c, np.float32), mg: mean, ig: inv}
        for t in outs:
            t.set_output(True)
            pack[t] = _out(t)
        ours = _runner(g, pack)
        tg, tm, ti = torch.ones(c), torch.from_numpy(mean), torch.from_numpy(inv)

        def ref() -> Any:
            return torch.ops.aten.native_batch_norm_backward(
                dyt, xt, tg, None, None, tm, ti, True, 1e-5, [True, True, True])
        return ours, ref
    return [Case(f"bn train 8x256x56x56 {layout}", train),
            Case(f"bn backward 8x256x56x56 {layout}", backward)]


def suite(torch: Any, quick: bool = False, batch: int = 8) -> list[Case]:
    """The named shape suite (a subset with ``quick``)."""
    cases = []
    for layout in ("NCHW", "NHWC"):
        for i, (c, k, hw, ks, s, p) in enumerate(RESNET50_CONVS):
            if not quick or i in QUICK:
                cases.append(_conv_case(torch, c, k, hw, ks, s, p, layout, batch))
    cases.append(_conv3d_case(torch))
    for layout in ("NCHW",) if quick else ("NCHW", "NHWC"):
        cases.extend(_bn_cases(torch, layout))
    return cases


def _best(fn: Callable[[], Any], repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _time_pair(ours: Callable[[], Any], ref: Callable[[], Any], repeats: int,
               blocked: bool = False) -> tuple[float, float]:
    """Best seconds of ``ours`` and ``ref``. Alternating: call by call, so both see the same
    machine load. Blocked: ``repeats`` calls of one after a warm-up call, then of the other,
    twice over, so neither runs while the other's helper threads still spin (PyTorch's OpenMP
    workers spin-wait for a while after each parallel region)."""
    if blocked:
        best_o = best_r = math.inf
        for _ in range(2):
            ours()
            best_o = min(best_o, _best(ours, repeats))
            ref()
            best_r = min(best_r, _best(ref, repeats))
        return best_o, best_r
    ours()
    ref()
    best_o = best_r = math.inf
    for _ in range(repeats):  # alternate so both see the same machine load
        t0 = time.perf_counter()
        ours()
        t1 = time.perf_counter()
        ref()
        t2 = time.perf_counter()
        best_o, best_r = min(best_o, t1 - t0), min(best_r, t2 - t1)
    return best_o, best_r


def blas_threads() -> int:
    """Threads numpy's BLAS uses (OPENBLAS_NUM_THREADS/OMP_NUM_THREADS, else the CPU count)."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        val = os.environ.get(var, "").strip()
        if val.isdigit() and int(val) > 0:
            return int(val)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def batchnorm_implementation() -> str:
    """Which reference batchnorm runs (and its compile, done here, outside the timings)."""
    from hipdnn.engines.reference import _bn_jit

    if _bn_jit.kernels() is None:
        return f"numpy passes (numba missing or {_bn_jit.ENV}=0)"
    import numba
    return f"loops compiled by numba {numba.__version__} ({_bn_jit.ENV}=0 for the numpy passes)"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite and print the table; returns 0 (1 if PyTorch is missing)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a few representative cases only")
    ap.add_argument("--repeats", type=int, default=None, help="timed repeats per case")
    ap.add_argument("--filter", default="", help="only cases whose name contains this text")
    ap.add_argument("--blocked", action="store_true",
                    help="time each side in its own run of repeats (twice over) instead of "
                         "alternating call by call")
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("PyTorch is needed for the comparison: pip install torch", file=sys.stderr)
        return 1
    threads = blas_threads()
    torch.set_num_threads(threads)
    repeats = args.repeats or (3 if args.quick else 7)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"threads: numpy BLAS {threads}, torch {torch.get_num_threads()}; repeats {repeats} "
          f"(best of, {'blocked' if args.blocked else 'alternating'}); load average at start {load:.2f}")
    print(f"reference batchnorm: {batchnorm_implementation()}")
    print(f"{'case':<44} {'ours ms':>9} {'torch ms':>9} {'ratio':>6}")
    ratios = []
    for case in suite(torch, args.quick):
        if args.filter and args.filter not in case.name:
            continue
        ours, ref = case.setup()
        t_o, t_r = _time_pair(ours, ref, repeats, args.blocked)
        ratios.append(t_o / t_r)
        print(f"{case.name:<44} {t_o * 1e3:9.2f} {t_r * 1e3:9.2f} {t_o / t_r:6.2f}", flush=True)
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        load_end = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"geometric mean ratio (ours/torch) over {len(ratios)} cases: {geo:.2f} "
              f"(target <= 2.0); load average at end {load_end:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
