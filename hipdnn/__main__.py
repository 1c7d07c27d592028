"""``python -m hipdnn demo``: build, run and verify real graphs on the best available engine.

Runs conv + bias + ReLU, batchnorm training (with running statistics) and batchnorm backward
through the public graph API, on MIOPEN_ENGINE when it can run here and otherwise on
CPU_REFERENCE_ENGINE (the graph's normal heuristic choice; ``--engine`` forces one). Prints which
engine ran and why the others did not, checks every output against a small float64 numpy
computation written here (independent of PyTorch and of the engines' kernels), and exits
non-zero if any check fails.

    python -m hipdnn demo [--engine auto|MIOPEN_ENGINE|CPU_REFERENCE_ENGINE]
    python -m hipdnn engines        # list the registered engines
    python -m hipdnn info [--json]  # versions, MIOpen/HIP/devices, engines, environment
    python -m hipdnn --version
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import hipdnn
from hipdnn.core.logs import ENVIRONMENT_REASONS
from hipdnn.core.shapes import packed_strides
from hipdnn.engines import load_errors, registry
from hipdnn.ir.view import GraphView
from hipdnn.pipeline.plan_store import PlanStore, plan_store
from hipdnn.surfaces import diagnostics

__all__ = ["main"]

F32 = hipdnn.DataType.FLOAT
TOL = 1e-4  # abs + rel, FP32 data and compute
Checks = list[tuple[bool, str]]


# ------------------------------------------------------------------ independent numpy references


def ref_conv_bias_relu(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int) -> np.ndarray:
    """Cross-correlation (stride 1) + bias + ReLU in float64, one einsum per kernel offset."""
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    n, _, h, wd = x.shape
    k, _, kh, kw = w.shape
    xp = np.pad(x64, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho, wo = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, k, ho, wo))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + ho, j:j + wo], w64[:, :, i, j])
    return np.maximum(y + b.reshape(1, k, 1, 1), 0.0)


def ref_bn_train(x: np.ndarray, s: np.ndarray, b: np.ndarray, eps: float, m: float,
                 rm: np.ndarray, rv: np.ndarray) -> dict[str, np.ndarray]:
    """Batchnorm training as MIOpen defines it (see hipdnn/engines/reference/kernels.py), float64."""
    x64 = x.astype(np.float64)
    axes = (0, 2, 3)
    count = x.size // x.shape[1]
    mean, var = x64.mean(axis=axes), x64.var(axis=axes)
    inv = 1.0 / np.sqrt(var + eps)
    c = (1, -1, 1, 1)
    y = (x64 - mean.reshape(c)) * (inv * s).reshape(c) + b.reshape(c)
    return {"y": y, "mean": mean, "inv_variance": inv,
            "running_mean": (1 - m) * rm + m * mean,
            "running_var": (1 - m) * rv + m * var * count / (count - 1)}


def ref_bn_backward(dy: np.ndarray, x: np.ndarray, s: np.ndarray, mean: np.ndarray,
                    inv: np.ndarray) -> dict[str, np.ndarray]:
    """Batchnorm backward from saved statistics, float64."""
    c = (1, -1, 1, 1)
    axes = (0, 2, 3)
    count = x.size // x.shape[1]
    dy64 = dy.astype(np.float64)
    xhat = (x.astype(np.float64) - mean.reshape(c)) * inv.reshape(c)
    dbias = dy64.sum(axis=axes)
    dscale = (dy64 * xhat).sum(axis=axes)
    dx = (s * inv).reshape(c) / count * (count * dy64 - dbias.reshape(c) - xhat * dscale.reshape(c))
    return {"dx": dx, "dscale": dscale, "dbias": dbias}


# ------------------------------------------------------------------------------------ running


def _nhwc(a: np.ndarray) -> np.ndarray:
    """Logical-order view of ``a`` stored NHWC."""
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)


def _build(g: hipdnn.Graph, engine: str) -> None:
    """The normal pipeline; with an engine name, every other engine is deselected first."""
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans()
    if engine != "auto":
        g.deselect_engines([e.name for e in registry().values() if e.name != engine])
    g.check_support()
    g.build_plans()


def _machine_reason(reason: str | None) -> bool:
    """True when ``reason`` says the machine lacks MIOpen or a GPU (not about the graph)."""
    return reason is not None and reason.startswith(ENVIRONMENT_REASONS)


def _report_engines(g: hipdnn.Graph, said: set[str]) -> str:
    """``ran on`` and, for each other engine, why it was not used. A reason about the machine
    (no MIOpen, no GPU) that ``said`` holds was printed before: it is not repeated."""
    ran = g.get_plan_name().split(":")[0]
    lines = [f"    ran on: {ran}"]
    for eng in registry().values():
        if eng.name == ran:
            continue
        try:
            reason = eng.check_support(GraphView.of(g), g.handle)
        except hipdnn.HipdnnError as exc:
            reason = f"{type(exc).__name__}: {exc}"
        if _machine_reason(reason) and reason in said:
            continue
        why = reason if reason is not None else f"applies, but ranks after {ran} or was deselected"
        lines.append(f"    not used: {eng.name}: {why}")
    return "\n".join(lines)


def _machine_summary(engine: str) -> tuple[str | None, set[str]]:
    """One line when MIOPEN_ENGINE cannot run anything on this machine (no MIOpen, no HIP, no
    GPU), and the reason it gave, so the per-graph reports do not repeat it."""
    probe = hipdnn.Graph(name="probe", io_data_type=hipdnn.DataType.FLOAT,
                         compute_data_type=hipdnn.DataType.FLOAT)
    x = probe.tensor(dim=[1, 1, 3, 3], name="x")
    w = probe.tensor(dim=[1, 1, 1, 1], name="w")
    probe.conv_fprop(x, w, padding=[0, 0]).set_output(True)
    view = GraphView.of(probe.validate())
    for eng in registry().values():
        if eng.name != "MIOPEN_ENGINE" or engine == eng.name:  # asked for: its FAIL line says why
            continue
        reason = eng.check_support(view, None)
        if _machine_reason(reason):
            assert reason is not None
            target = "CPU_REFERENCE_ENGINE" if engine == "auto" else engine
            runs = "every graph runs on" if engine == "auto" else "the demo runs, as asked, on"
            summary = (f"{reason.split(' (')[0]}: {runs} {target}. "
                       "`python -m hipdnn info` says where hipdnn looked and how to install it.")
            return summary, {reason}
    return None, set()


def _check(name: str, got: np.ndarray, want: np.ndarray) -> tuple[bool, str]:
    got64 = np.asarray(got, dtype=np.float64).reshape(want.shape)
    err = np.abs(got64 - want)
    ok = bool(np.all(err <= TOL + TOL * np.abs(want)))
    return ok, f"    {name:<14} max abs err {float(err.max()):.2e}  {'ok' if ok else 'FAIL'}"


def demo_conv_bias_relu(engine: str, rng: np.random.Generator) -> tuple[hipdnn.Graph, Checks]:
    """Conv 3x3 (pad 1) + bias + ReLU, FP32, NHWC tensors."""
    x = rng.uniform(-1, 1, (2, 3, 8, 8)).astype(np.float32)
    w = rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, (1, 4, 1, 1)).astype(np.float32)
    g = hipdnn.Graph(name="conv_bias_relu", io_data_type=F32, intermediate_data_type=F32,
                     compute_data_type=F32)
    xt = g.tensor(dim=x.shape, stride=packed_strides(x.shape, "NHWC"), name="x")
    wt = g.tensor(dim=w.shape, stride=packed_strides(w.shape, "NHWC"), name="w")
    bt = g.tensor(dim=b.shape, name="bias")
    y = g.relu(g.bias(g.conv_fprop(xt, wt, padding=1, name="conv"), bt, name="bias_add"),
               name="relu").set_output(True)
    _build(g, engine)
    out = _nhwc(np.zeros(y.get_dim(), np.float32))
    g.execute({xt: _nhwc(x), wt: _nhwc(w), bt: b, y: out})
    return g, [_check("y", out, ref_conv_bias_relu(x, w, b, 1))]


def demo_bn_training(engine: str, rng: np.random.Generator
                     ) -> tuple[hipdnn.Graph, Checks, dict[str, np.ndarray]]:
    """Batchnorm training with running statistics, FP32 NCHW."""
    x = rng.normal(1.0, 2.0, (4, 3, 5, 5)).astype(np.float32)
    s = rng.uniform(0.5, 1.5, 3).astype(np.float32)
    b = rng.uniform(-1, 1, 3).astype(np.float32)
    rm, rv = np.zeros(3, np.float32), np.ones(3, np.float32)
    eps, momentum = 1e-5, 0.1
    g = hipdnn.Graph(name="bn_training", io_data_type=F32, intermediate_data_type=F32,
                     compute_data_type=F32)
    xt = g.tensor(dim=x.shape, name="x")
    st, bt, rmt, rvt = (g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("scale", "bias", "rm", "rv"))
    outs = g.batchnorm(xt, st, bt, eps, momentum=momentum, in_running_mean=rmt,
                       in_running_var=rvt, name="bn")
    names = ("y", "mean", "inv_variance", "running_mean", "running_var")
    pack: dict[Any, Any] = {xt: x, st: s, bt: b, rmt: rm, rvt: rv}
    arrays: dict[str, np.ndarray] = {}
    for name, t in zip(names, outs, strict=True):
        assert t is not None
        t.set_output(True)
        arrays[name] = np.zeros(t.get_dim(), np.float32)
        pack[t] = arrays[name]
    _build(g, engine)
    g.execute(pack)
    want = ref_bn_train(x, s, b, eps, momentum, rm, rv)
    saved = {"x": x, "scale": s, "mean": arrays["mean"].reshape(-1),
             "inv_variance": arrays["inv_variance"].reshape(-1)}
    return g, [_check(n, arrays[n], want[n]) for n in names], saved


def demo_bn_backward(engine: str, rng: np.random.Generator,
                     saved: dict[str, np.ndarray]) -> tuple[hipdnn.Graph, Checks]:
    """Batchnorm backward from the training step's saved mean and inverse variance."""
    x, s = saved["x"], saved["scale"]
    dy = rng.normal(0.0, 1.0, x.shape).astype(np.float32)
    g = hipdnn.Graph(name="bn_backward", io_data_type=F32, intermediate_data_type=F32,
                     compute_data_type=F32)
    dyt, xt = g.tensor(dim=x.shape, name="dy"), g.tensor(dim=x.shape, name="x")
    st, mt, it = (g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("scale", "mean", "inv_variance"))
    dx, dscale, dbias = g.batchnorm_backward(dyt, xt, st, mt, it, name="bn_bwd")
    for t in (dx, dscale, dbias):
        t.set_output(True)
    _build(g, engine)
    got = {"dx": np.zeros(x.shape, np.float32), "dscale": np.zeros(3, np.float32),
           "dbias": np.zeros(3, np.float32)}
    g.execute({dyt: dy, xt: x, st: s, mt: saved["mean"], it: saved["inv_variance"],
               dx: got["dx"], dscale: got["dscale"], dbias: got["dbias"]})
    want = ref_bn_backward(dy, x, s, saved["mean"].astype(np.float64),
                           saved["inv_variance"].astype(np.float64))
    return g, [_check(n, got[n], want[n]) for n in ("dx", "dscale", "dbias")]


def run_demo(engine: str) -> int:
    """Run the three demo graphs; 0 when every check passes, 1 otherwise."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(2026)
    engines = ", ".join(f"{e.name} (rank {e.rank})" for e in registry().values())
    print(f"hipdnn demo: numpy {np.__version__}; registered engines: {engines}")
    print(f"engine choice: {engine} (auto = the graph's own heuristic ranking)")
    summary, said = _machine_summary(engine)
    if summary:
        print(summary)
    results: Checks = []
    try:
        g1, c1 = demo_conv_bias_relu(engine, rng)
        print("[1] conv 3x3 pad 1 + bias + ReLU, FP32 NHWC, x 2x3x8x8 -> y 2x4x8x8")
        print(_report_engines(g1, said))
        print("\n".join(line for _, line in c1))
        g2, c2, saved = demo_bn_training(engine, rng)
        print("[2] batchnorm training with running statistics, FP32 NCHW, x 4x3x5x5")
        print(_report_engines(g2, said))
        print("\n".join(line for _, line in c2))
        g3, c3 = demo_bn_backward(engine, rng, saved)
        print("[3] batchnorm backward from the saved mean / inverse variance")
        print(_report_engines(g3, said))
        print("\n".join(line for _, line in c3))
        results = c1 + c2 + c3
        for g in (g1, g2, g3):
            g.close()
    except hipdnn.GraphNotSupportedError as exc:
        if engine != "auto":  # the user chose the engine: say that, not how it was done
            why = exc.reasons.get(engine, str(exc))
            print(f"FAIL: --engine {engine} was asked for and cannot run the demo's graphs: {why}")
        else:
            print(f"FAIL: {type(exc).__name__}: {exc}")
        return 1
    except hipdnn.HipdnnError as exc:
        print(f"FAIL: {type(exc).__name__}: {exc}")
        return 1
    failed = sum(not ok for ok, _ in results)
    verdict = "PASS" if failed == 0 else "FAIL"
    print(f"{verdict}: {len(results) - failed}/{len(results)} outputs match the numpy references "
          f"(tolerance {TOL:g} abs + rel) in {time.perf_counter() - t0:.2f} s")
    return 0 if failed == 0 else 1


def list_engines() -> int:
    """Print the registered engines and any built-in engine that failed to import."""

    print("engine ids are FNV-1a 64 of the name: unsigned, and (as hipDNN stores them) int64")
    for eng in registry().values():
        unsigned = eng.engine_id & 0xFFFFFFFFFFFFFFFF
        print(f"{eng.name:<24} id {unsigned:>20} (0x{unsigned:016x}, int64 {eng.engine_id})"
              f"  rank {eng.rank}")
    for mod, err in load_errors.items():
        print(f"{mod}: not loaded ({err})")
    return 0


def plan_store_command(action: str, directory: str | None) -> int:
    """``python -m hipdnn cache [list|clear] [--dir DIR]``."""


    store = PlanStore(directory) if directory else plan_store()
    if store is None:
        print("the plan store is off (HIPDNN_PLAN_STORE=off); --dir DIR names a store to list or clear")
        return 0
    if action == "clear":
        print(f"plan store {store.directory}: removed {store.clear()} entries")
        return 0
    entries = list(store.entries())
    total = sum(e.size for e in entries)
    print(f"plan store {store.directory}: {len(entries)} entries, {total} bytes")
    for e in entries:
        state = "" if e.ok else "  (unreadable, corrupt or of another store format)"
        print(f"  {e.path.name[:16]}  {e.kind:<8} {e.engine:<22} {e.token}  {e.size} B{state}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (``python -m hipdnn`` / ``hipdnn-demo``); runs the demo by default."""
    ap = argparse.ArgumentParser(prog="python -m hipdnn",
                                 description=__doc__.splitlines()[0].replace("``", ""))
    sub = ap.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="build, run and verify conv and batchnorm graphs")
    names = ["auto", *(e.name for e in registry().values())]
    demo.add_argument("--engine", choices=names, default="auto",
                      help="engine to run on (default: the graph's heuristic choice)")
    ap.add_argument("--version", action="version", version=f"hipdnn {hipdnn.__version__}")
    sub.add_parser("engines", help="list the registered engines")
    info = sub.add_parser("info", help="versions, MIOpen and HIP (or every place tried), "
                                       "devices, engines and why they can or cannot run")
    info.add_argument("--json", action="store_true", help="print the report as JSON")
    cache = sub.add_parser("cache", help="list or clear hipdnn's plan store (decisions kept "
                                         "across processes; MIOpen's own caches: see info)")
    cache.add_argument("action", nargs="?", choices=["list", "clear"], default="list")
    cache.add_argument("--dir", help="the store directory (default: HIPDNN_PLAN_STORE or "
                                     "<user cache>/hipdnn-ctypes/plans)")
    args = ap.parse_args(sys.argv[1:] if argv is None else list(argv))
    if args.command == "engines":
        return list_engines()
    if args.command == "cache":
        return plan_store_command(args.action, args.dir)
    if args.command == "info":
        report = diagnostics.collect()
        if args.json:
            print(json.dumps(report, indent=2, default=str))
        else:
            print(diagnostics.format_report(report))
        return 0
    return run_demo(getattr(args, "engine", "auto"))


def console_main() -> int:
    """``main()``; a reader that closes the pipe early (``info --json | head``) ends the
    output, not with a BrokenPipeError traceback (Python's documented SIGPIPE recipe)."""
    try:
        code = main()
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not fail too
        return 141  # 128 + SIGPIPE, as a shell reports a reader that went away


if __name__ == "__main__":
    raise SystemExit(console_main())
