"""Reference-engine kernels vs PyTorch CPU on a named shape suite; prints a table and the geomean.

Suite: each of fprop, dgrad and wgrad (the data and weight gradients of training) of the
distinct convolution layers of ResNet-50 at batch 8 in NCHW and NHWC, of the 3-D layers of a
video network (R3D-18 / R(2+1)D-18) and a 3-D U-Net in NCDHW and NDHWC, and of four ResNet-50
layers in FP16 and BF16 (NHWC); then batchnorm training and backward on 8x256x56x56. "Ours" is
``graph.execute`` of a graph built with the public API on CPU_REFERENCE_ENGINE (outputs written
into arrays of the inputs' layout and dtype, as a user sees it); PyTorch runs ``conv2d``/
``conv3d`` or ``aten.convolution_backward`` for the one gradient, on tensors of the same layout
and dtype. Both sides run with the same number of threads (PyTorch's ``set_num_threads`` =
numpy's BLAS threads); each case keeps the best time of each side, the fairest number on a shared
machine. A summary per family (direction, 2-D/3-D, dtype) follows the table. Target: every case
within 1.5x of PyTorch on 2 cores and 2x at 16 threads, geometric mean <= 1.0.

    python benchmarks/bench_reference.py            # full suite (~200 cases, minutes)
    python benchmarks/bench_reference.py --filter "dgrad|wgrad"   # names matching (re.search)
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
import re
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


#: Directions of a convolution case: the forward pass and the two gradients of training.
DIRECTIONS = ("fprop", "dgrad", "wgrad")
#: 3-D layers (C, K, input D,H,W, kernel, stride, pad, batch) of a video network (R3D-18 and
#: R(2+1)D-18 on 8x112x112 clips: the stem, a residual 3x3x3, the factorised 1x3x3 spatial and
#: 3x1x1 temporal convolutions) and of a 3-D U-Net for volumes (a 3x3x3 at 32^3 and a strided
#: 3x3x3 downsampling); NCDHW and NDHWC.
CONV3D: tuple[tuple[int, int, tuple[int, ...], tuple[int, ...], tuple[int, ...],
                    tuple[int, ...], int], ...] = (
    (3, 64, (8, 112, 112), (3, 7, 7), (1, 2, 2), (1, 3, 3), 1),
    (64, 64, (8, 28, 28), (3, 3, 3), (1, 1, 1), (1, 1, 1), 2),
    (64, 144, (8, 56, 56), (1, 3, 3), (1, 1, 1), (0, 1, 1), 1),
    (144, 64, (8, 56, 56), (3, 1, 1), (1, 1, 1), (1, 0, 0), 1),
    (32, 32, (32, 32, 32), (3, 3, 3), (1, 1, 1), (1, 1, 1), 1),
    (32, 64, (32, 32, 32), (3, 3, 3), (2, 2, 2), (1, 1, 1), 1),
)
QUICK3D = {1, 4}
#: ResNet-50 layers (indices into RESNET50_CONVS) also timed in FP16 and BF16, NHWC: the stem,
#: a 3x3, a 1x1 expansion and a strided 3x3.
LOW_PRECISION = (0, 2, 3, 6)
DTYPES = {"fp32": F32, "fp16": hipdnn.DataType.HALF, "bf16": hipdnn.DataType.BFLOAT16}


def _np_dtype(name: str) -> Any:
    if name == "bf16":
        import ml_dtypes  # numpy's bfloat16; imported only for the BF16 cases
        return ml_dtypes.bfloat16
    return {"fp32": np.float32, "fp16": np.float16}[name]


def _conv_case(torch: Any, direction: str, c: int, k: int, sp: Sequence[int],
               ks: Sequence[int], stride: Sequence[int], pad: Sequence[int], layout: str,
               batch: int, dtype: str = "fp32") -> Case:
    """One convolution in one direction: ``graph.execute`` of conv_fprop / conv_dgrad /
    conv_wgrad on the reference engine (output in the inputs' layout and dtype), against
    PyTorch's conv (fprop) or ``aten.convolution_backward`` asked for that gradient only."""
    nsp = len(sp)

    def setup() -> tuple[Callable[[], Any], Callable[[], Any]]:
        rng = np.random.default_rng(0)
        npd = _np_dtype(dtype)
        x = rng.standard_normal((batch, c, *sp), dtype=np.float32)
        w = rng.standard_normal((k, c, *ks), dtype=np.float32)
        tconv = torch.nn.functional.conv2d if nsp == 2 else torch.nn.functional.conv3d
        out_sp = [(n + 2 * p - kd) // s + 1 for n, p, kd, s in zip(sp, pad, ks, stride, strict=True)]
        dy = rng.standard_normal((batch, k, *out_sp), dtype=np.float32)
        cl = layout in ("NHWC", "NDHWC")
        fmt = ((torch.channels_last if nsp == 2 else torch.channels_last_3d) if cl
               else torch.contiguous_format)
        tdt = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
        arrays = {}
        tensors = {}
        for name, a in (("x", x), ("w", w), ("dy", dy)):
            arrays[name] = (_channels_last_np(a) if cl else a).astype(npd)
            tensors[name] = torch.from_numpy(a).to(tdt).contiguous(memory_format=fmt)
        g = hipdnn.Graph(io_data_type=DTYPES[dtype], intermediate_data_type=F32,
                         compute_data_type=F32)
        geo = {"padding": list(pad), "stride": list(stride)}
        pack: dict[Any, Any]
        if direction == "fprop":
            xg, wg = g.tensor_like(arrays["x"], "x"), g.tensor_like(arrays["w"], "w")
            out = g.conv_fprop(xg, wg, **geo)
            pack = {xg: arrays["x"], wg: arrays["w"]}
        elif direction == "dgrad":
            dyg, wg = g.tensor_like(arrays["dy"], "dy"), g.tensor_like(arrays["w"], "w")
            out = g.conv_dgrad(dyg, wg, **geo)
            out.set_dim(list(x.shape)).set_stride(list(g.tensor_like(arrays["x"]).get_stride()))
            pack = {dyg: arrays["dy"], wg: arrays["w"]}
        else:
            xg, dyg = g.tensor_like(arrays["x"], "x"), g.tensor_like(arrays["dy"], "dy")
            out = g.conv_wgrad(xg, dyg, **geo)
            out.set_dim(list(w.shape)).set_stride(list(g.tensor_like(arrays["w"]).get_stride()))
            pack = {xg: arrays["x"], dyg: arrays["dy"]}
        out.set_output(True).set_data_type(DTYPES[dtype])
        pack[out] = _out(out).astype(npd)
        ours = _runner(g, pack)
        xt, wt, dyt = tensors["x"], tensors["w"], tensors["dy"]
        backward = torch.ops.aten.convolution_backward
        mask = [direction == "dgrad", direction == "wgrad", False]

        def ref() -> Any:
            with torch.no_grad():
                if direction == "fprop":
                    return tconv(xt, wt, stride=tuple(stride), padding=tuple(pad))
                return backward(dyt, xt, wt, None, list(stride), list(pad), [1] * nsp, False,
                                [0] * nsp, 1, mask)
        return ours, ref

    shape = f"{sp[0]}^3" if nsp == 3 and len(set(sp)) == 1 else "x".join(map(str, sp))
    kern = "x".join(map(str, ks))
    st = stride[0] if len(set(stride)) == 1 else ",".join(map(str, stride))
    extra = (f" n{batch}" if nsp == 3 else "") + ("" if dtype == "fp32" else f" {dtype}")
    return Case(f"{direction} {c}->{k} {kern}/{st} @{shape} {layout}{extra}", setup)


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
    for direction in DIRECTIONS:
        for layout in ("NCHW", "NHWC"):
            for i, (c, k, hw, ks, s, p) in enumerate(RESNET50_CONVS):
                if not quick or i in QUICK:
                    cases.append(_conv_case(torch, direction, c, k, (hw, hw), (ks, ks), (s, s),
                                            (p, p), layout, batch))
        for layout in ("NCDHW", "NDHWC"):
            for i, (c, k, sp, ks3, st3, p3, n) in enumerate(CONV3D):
                if not quick or i in QUICK3D:
                    cases.append(_conv_case(torch, direction, c, k, sp, ks3, st3, p3, layout, n))
        for dtype in ("fp16", "bf16"):
            for i in LOW_PRECISION[:2] if quick else LOW_PRECISION:
                c, k, hw, ks, s, p = RESNET50_CONVS[i]
                cases.append(_conv_case(torch, direction, c, k, (hw, hw), (ks, ks), (s, s),
                                        (p, p), "NHWC", batch, dtype))
    for layout in ("NCHW",) if quick else ("NCHW", "NHWC"):
        cases.extend(_bn_cases(torch, layout))
    return cases


def family(name: str) -> str:
    """The summary row of a case: its direction, 2-D/3-D and dtype (or "batchnorm")."""
    if name.startswith("bn "):
        return "batchnorm"
    words = name.split()
    dim = "3-D" if "D" in words[4] else "2-D"
    dtype = words[-1] if words[-1] in ("fp16", "bf16") else "fp32"
    return f"{words[0]} {dim} {dtype}"


def _best(fn: Callable[[], Any], repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _warm_best(fn: Callable[[], Any], repeats: int) -> float:
    """One warm-up call, then the best of ``repeats``; of one if the warm-up took over SLOW
    seconds, and none (the warm-up's time) over 5 x SLOW."""
    t0 = time.perf_counter()
    fn()
    warm = time.perf_counter() - t0
    if warm > 5 * SLOW:
        return warm
    return _best(fn, 1 if warm > SLOW else repeats)


#: Seconds: a side whose warm-up call took longer is timed once per round, or not again past
#: 5 x SLOW (PyTorch's FP16 weight gradient on CPU took 13-35 s a call on 2 cores).
SLOW = 1.0


def _time_pair(ours: Callable[[], Any], ref: Callable[[], Any], repeats: int,
               blocked: bool = False, pause: float = 0.0, rounds: int = 2
               ) -> tuple[float, float]:
    """Best seconds of ``ours`` and ``ref``. Alternating: call by call, so both see the same
    machine load. Blocked: ``repeats`` calls of one after a warm-up call, then of the other,
    ``rounds`` times over, so neither runs while the other's helper threads still spin
    (PyTorch's OpenMP workers spin-wait for a while after each parallel region), and a drift of
    the machine's speed meets both sides in turn. ``pause``: seconds of sleep before each
    blocked run, so the other side's helper threads (OpenBLAS's spin about 0.1 s) have gone
    idle."""
    if blocked:
        best_o = best_r = math.inf
        for _ in range(rounds):
            time.sleep(pause)
            best_o = min(best_o, _warm_best(ours, repeats))
            time.sleep(pause)
            best_r = min(best_r, _warm_best(ref, repeats))
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
    ap.add_argument("--filter", default="",
                    help="only cases whose name matches this regular expression (re.search)")
    ap.add_argument("--exclude", default="",
                    help="skip cases whose name matches this regular expression (re.search)")
    ap.add_argument("--blocked", action="store_true",
                    help="time each side in its own run of repeats (twice over) instead of "
                         "alternating call by call")
    ap.add_argument("--rounds", type=int, default=2,
                    help="with --blocked: how many times each side's run of calls is repeated, "
                         "in turn (more rounds: a case's best is less at the mercy of a noisy "
                         "moment)")
    ap.add_argument("--pause", type=float, default=0.0,
                    help="with --blocked: seconds to sleep before each side's run of calls, so "
                         "the other side's spinning helper threads are idle (0.15 on many cores)")
    args = ap.parse_args(argv)
    if args.rounds < 1 or (args.repeats is not None and args.repeats < 1):
        ap.error("--rounds and --repeats must be at least 1")
    try:
        import torch
    except ImportError:
        print("PyTorch is needed for the comparison: pip install torch", file=sys.stderr)
        return 1
    threads = blas_threads()
    torch.set_num_threads(threads)
    repeats = args.repeats or (3 if args.quick else 7)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    mode = f"blocked, {args.rounds} rounds" if args.blocked else "alternating"
    print(f"threads: numpy BLAS {threads}, torch {torch.get_num_threads()}; repeats {repeats} "
          f"(best of, {mode}, pause {args.pause} s); "
          f"load average at start {load:.2f}")
    print(f"reference batchnorm: {batchnorm_implementation()}")
    print(f"reference convolution: {convolution_implementation()}")
    print(f"{'case':<50} {'ours ms':>9} {'torch ms':>9} {'ratio':>6}")
    ratios: dict[str, float] = {}
    for case in suite(torch, args.quick):
        if not re.search(args.filter, case.name) or (args.exclude
                                                      and re.search(args.exclude, case.name)):
            continue
        ours, ref = case.setup()
        t_o, t_r = _time_pair(ours, ref, repeats, args.blocked, args.pause, args.rounds)
        ratios[case.name] = t_o / t_r
        print(f"{case.name:<50} {t_o * 1e3:9.2f} {t_r * 1e3:9.2f} {t_o / t_r:6.2f}", flush=True)
    if ratios:
        load_end = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        groups: dict[str, list[float]] = {}
        for name, r in ratios.items():
            groups.setdefault(family(name), []).append(r)
        print(f"\n{'family':<22} {'cases':>5} {'geomean':>8} {'min':>6} {'median':>6} {'max':>6}"
              f" {'over 1.5x':>9} {'over 2x':>7}")
        for fam, rs in [*groups.items(), ("all", list(ratios.values()))]:
            rs = sorted(rs)
            print(f"{fam:<22} {len(rs):5d} {_geomean(rs):8.2f} {rs[0]:6.2f} "
                  f"{rs[len(rs) // 2]:6.2f} {rs[-1]:6.2f} {sum(r > 1.5 for r in rs):9d} "
                  f"{sum(r > 2 for r in rs):7d}")
        print(f"geometric mean ratio (ours/torch) over {len(ratios)} cases: "
              f"{_geomean(list(ratios.values())):.2f} (target <= 1.0); load average at end "
              f"{load_end:.2f}")
    return 0


def _geomean(rs: Sequence[float]) -> float:
    return math.exp(sum(math.log(r) for r in rs) / len(rs))


def convolution_implementation() -> str:
    """Which reference convolution runs (and its compile, done here, outside the timings)."""
    from hipdnn.engines.reference import _conv

    describe = getattr(_conv, "implementation", None)
    return describe() if describe is not None else "im2col/col2im + BLAS GEMM (numpy)"


if __name__ == "__main__":
    raise SystemExit(main())
