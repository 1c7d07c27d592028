"""hipdnn's host cost per execute next to cudnn-frontend's whole execute and PyTorch's op, in one
process, for every op both libraries have; and first-build / cache-hit build times.

Run on a CUDA machine with ``nvidia-cudnn-frontend`` and torch (without them the cudnn and torch
columns are left out; the hipdnn columns still run, over device pointers of the emulated device):

    PYTHONPATH=. python benchmarks/bench_vs_cudnn_frontend.py [--number 5000] [--repeat 5]

Both libraries build the *same* graph with the same calls (``lib.pygraph``, ``tensor``, the op,
``validate`` ... ``build_plans``): FP16 NHWC tensors, FP32 compute and per-channel statistics,
as cudnn-frontend's own batchnorm samples use. hipdnn builds on the emulated MIOpen device with the
execute-time MIOpen symbols bound to C no-op functions (``benchmarks/bench_overhead.py``'s
machinery), so its columns are the host cost of getting to the MIOpen call(s) (there is no AMD GPU
here); cudnn-frontend's and torch's columns are whole calls that launch real kernels, timed as
``number`` calls then one ``torch.cuda.synchronize()`` (the shapes are small: the host is the
bottleneck, not the GPU). All columns of an op are timed interleaved, best of ``repeat`` rounds.

Columns (us per call): ``raw`` (the plan's ctypes calls, prebuilt; ``-`` for rows whose plans
do host work between MIOpen calls: BN inference from an inverse variance, BN training with
separate in/out running statistics), ``bind()``, ``ints``
(``execute`` with int pointers), ``torch`` (``execute`` with torch CUDA tensors; ``cai``: objects with
``__cuda_array_interface__`` over emulated device memory, where torch has no CUDA or the plan does
host work between MIOpen calls), ``cudnn`` (cudnn-frontend ``execute`` with torch tensors), ``F.op`` (the
matching ``torch.nn.functional`` call). Build table (ms): hipdnn first build (plan cache cleared),
hipdnn cache-hit build (a new identical graph), cudnn-frontend build of a new graph.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_overhead as bo  # noqa: E402  (its path setup, emulated device and no-op library)

import hipdnn  # noqa: E402
from hipdnn.engines import register, registry, unregister  # noqa: E402
from hipdnn.engines.miopen import MiopenEngine  # noqa: E402

N, C, H, W, K = 1, 16, 8, 8, 16  # the shape: fp16 NHWC 1x16x8x8, 16 3x3 filters
#: conv_bias_relu is built (``--op conv_bias_relu``) but the emulated MIOpen 3.5 device leaves
#: this FP16 NHWC conv + bias + ReLU graph to CPU_REFERENCE_ENGINE, so it is not in the default
#: set; bench_overhead.py times that row (FP32 NCHW), fused and unfused.
OPS = ("conv_fprop", "conv_dgrad", "conv_wgrad", "bn_training", "bn_inference", "bn_backward")


def _nhwc(dim: list[int]) -> list[int]:
    _n, c, h, w = dim
    return [h * w * c, 1, w * c, c]


def _packed(dim: list[int]) -> list[int]:
    out, acc = [], 1
    for d in reversed(dim):
        out.append(acc)
        acc *= d
    return out[::-1]


class Spec:
    """One graph tensor as both libraries need it."""

    def __init__(self, name: str, dim: list[int], half: bool, nhwc: bool,
                 by_value: float | None = None) -> None:
        self.name, self.dim, self.half, self.by_value = name, dim, half, by_value
        self.stride = _nhwc(dim) if nhwc else _packed(dim)


def make_graph(lib: Any, op: str, handle: Any) -> tuple[Any, dict[str, Any], list[Spec]]:
    """Build ``op`` with ``lib`` (cudnn or hipdnn): graph, {name: graph tensor}, specs."""
    dt = lib.data_type
    g = lib.pygraph(io_data_type=dt.HALF, intermediate_data_type=dt.FLOAT,
                    compute_data_type=dt.FLOAT, handle=handle)
    specs: list[Spec] = []
    t: dict[str, Any] = {}

    def tensor(name: str, dim: list[int], half: bool = True, nhwc: bool = True,
               by_value: float | None = None) -> Any:
        s = Spec(name, dim, half, nhwc, by_value)
        specs.append(s)
        kw: dict[str, Any] = {}
        if by_value is not None:
            kw["is_pass_by_value"] = True
        t[name] = g.tensor(name=name, dim=dim, stride=s.stride,
                           data_type=dt.HALF if half else dt.FLOAT, **kw)
        return t[name]

    def output(name: str, x: Any, dim: list[int], half: bool = True, nhwc: bool = True) -> None:
        s = Spec(name, dim, half, nhwc)
        specs.append(s)
        x.set_output(True).set_dim(dim).set_stride(s.stride).set_data_type(
            dt.HALF if half else dt.FLOAT)
        t[name] = x

    conv = {"padding": [1, 1], "stride": [1, 1], "dilation": [1, 1]}
    ch = [1, C, 1, 1]
    if op in ("conv_fprop", "conv_bias_relu"):
        x, w = tensor("x", [N, C, H, W]), tensor("w", [K, C, 3, 3])
        y = g.conv_fprop(image=x, weight=w, **conv)
        if op == "conv_bias_relu":
            b = tensor("b", [1, K, 1, 1])
            y = g.relu(input=g.bias(input=y, bias=b))
        output("y", y, [N, K, H, W])
    elif op == "conv_dgrad":
        dy, w = tensor("dy", [N, K, H, W]), tensor("w", [K, C, 3, 3])
        output("dx", g.conv_dgrad(loss=dy, filter=w, **conv), [N, C, H, W])
    elif op == "conv_wgrad":
        x, dy = tensor("x", [N, C, H, W]), tensor("dy", [N, K, H, W])
        output("dw", g.conv_wgrad(image=x, loss=dy, **conv), [K, C, 3, 3])
    elif op == "bn_training":
        x = tensor("x", [8, C, H, W])
        s, b = tensor("scale", ch, False), tensor("bias", ch, False)
        rm, rv = tensor("running_mean", ch, False), tensor("running_var", ch, False)
        eps = tensor("eps", [1, 1, 1, 1], False, by_value=1e-5)
        mom = tensor("momentum", [1, 1, 1, 1], False, by_value=0.1)
        y, mean, inv, nrm, nrv = g.batchnorm(input=x, scale=s, bias=b, in_running_mean=rm,
                                             in_running_var=rv, epsilon=eps, momentum=mom)
        output("y", y, [8, C, H, W])
        for name, v in (("mean", mean), ("inv_variance", inv), ("next_running_mean", nrm),
                        ("next_running_var", nrv)):
            output(name, v, ch, False)
    elif op == "bn_inference":
        x = tensor("x", [8, C, H, W])
        mean, inv = tensor("mean", ch, False), tensor("inv_variance", ch, False)
        s, b = tensor("scale", ch, False), tensor("bias", ch, False)
        output("y", g.batchnorm_inference(input=x, mean=mean, inv_variance=inv, scale=s, bias=b),
               [8, C, H, W])
    elif op == "bn_backward":
        dy, x = tensor("dy", [8, C, H, W]), tensor("x", [8, C, H, W])
        s = tensor("scale", ch, False)
        mean, inv = tensor("mean", ch, False), tensor("inv_variance", ch, False)
        dx, ds, db = g.batchnorm_backward(grad=dy, input=x, scale=s, mean=mean,
                                          inv_variance=inv)
        output("dx", dx, [8, C, H, W])
        output("dscale", ds, ch, False)
        output("dbias", db, ch, False)
    else:
        raise ValueError(op)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([lib.heur_mode.A, lib.heur_mode.FALLBACK])
    g.check_support()
    g.build_plans()
    return g, t, specs


def _nbytes(s: Spec) -> int:
    return (1 + sum((d - 1) * st for d, st in zip(s.dim, s.stride, strict=True))) * (
        2 if s.half else 4)


def _torch_tensors(torch: Any, specs: list[Spec], device: str) -> dict[str, Any]:
    out = {}
    for s in specs:
        if s.by_value is not None:
            out[s.name] = torch.full((1, 1, 1, 1), s.by_value, dtype=torch.float32)
            continue
        a = torch.empty_strided(s.dim, s.stride, dtype=torch.float16 if s.half
                                else torch.float32, device=device)
        a.copy_(torch.rand(s.dim, dtype=a.dtype) + (0.5 if "var" in s.name else 0.0))
        out[s.name] = a
    return out


class CaiArray:
    """Device memory behind ``__cuda_array_interface__`` (a new dict per access)."""

    def __init__(self, ptr: int, s: Spec) -> None:
        item = 2 if s.half else 4
        self.ptr, self.shape = ptr, tuple(s.dim)
        self.typestr, self.strides = ("<f2" if s.half else "<f4"), tuple(item * x for x in s.stride)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {"data": (self.ptr, False), "shape": self.shape, "typestr": self.typestr,
                "strides": self.strides, "version": 3}


def _timed(cols: dict[str, Callable[[], Any]], number: int, repeat: int,
           sync: Callable[[], None]) -> dict[str, float]:
    best = {k: float("inf") for k in cols}
    for fn in cols.values():
        fn()
    sync()
    for _ in range(repeat):
        for name, fn in cols.items():
            n = max(1, number // 10) if name == "checked" else number
            start = time.perf_counter()
            for _ in range(n):
                fn()
            sync()
            best[name] = min(best[name], (time.perf_counter() - start) / n * 1e6)
    return best


def torch_op(torch: Any, op: str, tt: dict[str, Any]) -> Callable[[], Any] | None:
    """The matching torch.nn.functional call on the same tensors."""
    F = torch.nn.functional
    if op == "conv_fprop":
        return lambda: F.conv2d(tt["x"], tt["w"], padding=1)
    if op == "conv_bias_relu":
        b = tt["b"].reshape(-1)
        return lambda: F.relu(F.conv2d(tt["x"], tt["w"], b, padding=1))
    if op == "conv_dgrad":
        return lambda: torch.ops.aten.convolution_backward(
            tt["dy"], tt["dx"], tt["w"], None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
            [True, False, False])
    if op == "conv_wgrad":
        return lambda: torch.ops.aten.convolution_backward(
            tt["dy"], tt["x"], tt["dw"], None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
            [False, True, False])
    if op == "bn_training":
        rm, rv = tt["running_mean"].reshape(-1), tt["running_var"].reshape(-1)
        s, b = tt["scale"].reshape(-1), tt["bias"].reshape(-1)
        return lambda: F.batch_norm(tt["x"], rm, rv, s, b, True, 0.1, 1e-5)
    if op == "bn_inference":
        m, v = tt["mean"].reshape(-1), tt["inv_variance"].reshape(-1)
        s, b = tt["scale"].reshape(-1), tt["bias"].reshape(-1)
        return lambda: F.batch_norm(tt["x"], m, v, s, b, False, 0.1, 1e-5)
    if op == "bn_backward":
        s = tt["scale"].reshape(-1)
        m, v = tt["mean"].reshape(-1), tt["inv_variance"].reshape(-1)
        return lambda: torch.ops.aten.native_batch_norm_backward(
            tt["dy"], tt["x"], s, None, None, m, v, True, 1e-5, [True, True, True])
    return None


def run_op(op: str, device: Any, cudnn: Any, cudnn_handle: Any, torch: Any,
           number: int, repeat: int) -> tuple[dict[str, float], dict[str, float]]:
    """(execute columns in us, build columns in ms) for one op."""
    cuda = torch is not None and torch.cuda.is_available()
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    builds: dict[str, float] = {}
    firsts, hits = [], []
    for _ in range(3):
        hipdnn.clear_plan_cache()
        t0 = time.perf_counter()
        g, ht, specs = make_graph(hipdnn, op, None)
        firsts.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        make_graph(hipdnn, op, None)[0].close()
        hits.append(time.perf_counter() - t0)
        g.close()
    builds["hipdnn first"] = statistics.median(firsts) * 1e3
    builds["hipdnn cache hit"] = statistics.median(hits) * 1e3
    g, ht, specs = make_graph(hipdnn, op, None)
    plan = g.plans[0]
    assert plan.engine.name == "MIOPEN_ENGINE", plan
    ints: dict[Any, Any] = {}
    fw: dict[Any, Any] = {}
    tt = _torch_tensors(torch, specs, "cuda") if cuda else {}
    # plans doing host work between MIOpen calls (hipMemcpy of statistics) need the emulated
    # device's own memory: torch's pointers would reach the emulated hipMemcpy
    emulated_memory = g.bind({ht[s.name]: s.by_value if s.by_value is not None
                              else device.alloc(_nbytes(s)) for s in specs},
                             device.alloc(plan.workspace_size) if plan.workspace_size else None)
    use_torch = cuda and getattr(emulated_memory._run, "prepared", None) is not None
    for s in specs:
        if s.by_value is not None:
            ints[ht[s.name]] = fw[ht[s.name]] = s.by_value
            continue
        if use_torch:
            ints[ht[s.name]], fw[ht[s.name]] = tt[s.name].data_ptr(), tt[s.name]
        else:
            ints[ht[s.name]] = device.alloc(_nbytes(s))
            fw[ht[s.name]] = CaiArray(ints[ht[s.name]], s)
    ws = device.alloc(plan.workspace_size) if plan.workspace_size else None
    bound = g.bind(ints, ws)
    fw_name = "torch" if use_torch else "cai"
    cols: dict[str, Callable[[], Any]] = {"bind()": bound, "ints": lambda: g.execute(ints, ws),
                                          fw_name: lambda: g.execute(fw, ws)}
    prepared = getattr(bound._run, "prepared", None)
    if prepared is not None:  # rows with host work between MIOpen calls have no raw floor
        cols["raw"] = bo._raw(prepared)
    if cudnn is not None and cuda:
        try:
            cg, ct, _ = make_graph(cudnn, op, cudnn_handle)
            cws = torch.empty(max(1, cg.get_workspace_size()), dtype=torch.uint8, device="cuda")
            cpack = {ct[s.name]: tt[s.name] for s in specs}
            cols["cudnn"] = lambda: cg.execute(cpack, cws, handle=cudnn_handle)
            cols["cudnn"]()
            sync()
            cb = []
            for _ in range(3):
                t0 = time.perf_counter()
                make_graph(cudnn, op, cudnn_handle)
                cb.append(time.perf_counter() - t0)
            builds["cudnn build"] = statistics.median(cb) * 1e3
        except Exception as exc:
            print(f"  {op}: cudnn-frontend failed: {type(exc).__name__}: {exc}")
            traceback.print_exc(limit=3)
    if cuda:
        fn = torch_op(torch, op, tt)
        if fn is not None:
            try:
                fn()
                cols["F.op"] = fn
            except Exception as exc:
                print(f"  {op}: torch op failed: {type(exc).__name__}: {exc}")
    best = _timed(cols, number, repeat, sync)
    g.close()
    return best, builds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--number", type=int, default=5000, help="calls per timing")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved rounds (best kept)")
    parser.add_argument("--op", action="append", choices=OPS, help="ops (default: all)")
    parser.add_argument("--quick", action="store_true", help="tiny counts")
    args = parser.parse_args(argv)
    number, repeat = (20, 1) if args.quick else (args.number, args.repeat)
    try:
        import torch
    except ImportError:
        torch = None
    try:
        import cudnn
        cudnn_handle = cudnn.create_handle()
        version = f"cudnn-frontend {getattr(cudnn, '__version__', '?')}, cuDNN " \
                  f"{cudnn.backend_version()}"
    except Exception as exc:
        cudnn = cudnn_handle = None
        version = f"cudnn-frontend unavailable ({type(exc).__name__}: {exc})"
    gpu = torch.cuda.get_device_name() if torch is not None and torch.cuda.is_available() \
        else "no CUDA"
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load {os.getloadavg()}, "
          f"torch {getattr(torch, '__version__', 'absent')} ({gpu}), {version}")
    print(f"shapes: conv fp16 NHWC {N}x{C}x{H}x{W}, {K} 3x3 filters; batchnorm fp16 NHWC "
          f"8x{C}x{H}x{W}, FP32 stats; hipdnn: emulated MIOpen 3.5 build, C no-op execute")
    results = []
    with tempfile.TemporaryDirectory(prefix="hipdnn-bench-") as tmp:
        noop = bo.build_noop_library(tmp)
        device = bo.EmulatedDevice("3.5")
        lib = bo.hybrid_library(device, noop)
        engine = MiopenEngine(miopen_loader=lambda: lib, hip_loader=lambda: device.hip)
        previous = registry().get(engine.engine_id)
        register(engine)
        try:
            for op in args.op or OPS:
                try:
                    results.append((op, *run_op(op, device, cudnn, cudnn_handle, torch,
                                                number, repeat)))
                except Exception as exc:
                    print(f"{op}: failed: {type(exc).__name__}: {exc}")
                    traceback.print_exc(limit=4)
        finally:
            if previous is not None:
                register(previous)
            else:
                unregister(engine)
    cols = ["raw", "bind()", "ints", "torch", "cai", "cudnn", "F.op"]
    cols = [c for c in cols if any(c in r[1] for r in results)]
    print("\nexecute, us per call (hipdnn: host cost to the MIOpen call; cudnn/F.op: whole call)")
    print(f"| op | {' | '.join(cols)} | fw / ints | hipdnn fw / cudnn |")
    print(f"|---|{'---|' * (len(cols) + 2)}")
    for op, us, _ in results:
        fwcol = us.get("torch", us.get("cai"))
        ratio = f"{fwcol / us['cudnn']:.2f}" if "cudnn" in us and fwcol else "-"
        cells = " | ".join(f"{us[c]:.2f}" if c in us else "-" for c in cols)
        print(f"| {op} | {cells} | {fwcol / us['ints']:.2f} | {ratio} |")
    print("\nbuild, ms (median of 3): graph build + plans")
    bcols = ["hipdnn first", "hipdnn cache hit", "cudnn build"]
    print(f"| op | {' | '.join(bcols)} |")
    print(f"|---|{'---|' * len(bcols)}")
    for op, _, b in results:
        print(f"| {op} | {' | '.join(f'{b[c]:.2f}' if c in b else '-' for c in bcols)} |")
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
