#!/usr/bin/env python3
"""The first call: what building a plan costs in a fresh process, and what the caches save.

Each case runs in fresh processes on the REAL libMIOpen (3.4.0 = Debian 6.4.3, 3.5.1 = 7.2.4, the
cached sysroots of tools/miopen_sysroot.py) over the stub GPU of tools/stub_hip (gfx942 by
default): MIOpen decides and compiles its kernels for real, launches are recorded, nothing is
computed. MIOpen runs with the switches of the stubgpu lane's "switches" processes (no GCN asm
kernels, no Winograd RxS f2x3: Debian's builds lack their sources, and Find 2.0 aborts without
them). Per row, benchmarking (global.benchmarking 0: immediate mode, 1: Find 2.0 with tuning)
and MIOpen version, three processes in turn:

- cold: empty MIOpen caches (user db, find db, kernel cache, comgr cache) and empty plan store;
- warm MIOpen: MIOpen's caches as the cold process left them, empty plan store;
- warm store: both warm (hipdnn's plan store holds the decision).

Each process reports its build time (build_operation_graph to build_plans), the first execute,
and how many times it called MIOpen's solution enumeration (``*GetSolutionCount``), Find 2.0
(``miopenFindSolutions``), ``*CompileSolution`` and ``miopenLoadSolution`` (counted on the bound
library inside the process). ``--repeat N`` takes the median of N runs of each case (the cold
one re-emptying the caches each time).

    python benchmarks/bench_first_call.py                 # every row, 3.4 and 3.5, median of 3
    python benchmarks/bench_first_call.py --quick         # one conv row, 3.5, once (CI)
    python benchmarks/bench_first_call.py --precompile    # hipdnn.precompile: 1 vs 2 workers

``--quick`` ends with ``first-call: cold X s, warm-store Y s, enumerations in the warm process: N``.
Timings are of the host side on 2 shared CPU cores with a fake GPU: kernel compile and MIOpen's
own work are real, kernel run times are not (no GPU).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))

VERSIONS = {"7.2.4": "3.5.1", "6.4.3": "3.4.0"}
SWITCHES = {"MIOPEN_DEBUG_AMD_WINOGRAD_RXS_F2X3_G1": "0", "MIOPEN_DEBUG_GCN_ASM_KERNELS": "0"}
ROWS = {
    "conv": "conv fprop FP16 NHWC 8x64x56x56, 64 3x3 filters",
    "conv_bias_relu": "conv + bias + ReLU FP16 NHWC 8x64x56x56, 64 3x3 filters",
    "bn": "batchnorm training FP32 NHWC 8x64x56x56",
}
CASES = ("cold", "warm MIOpen", "warm store")

_BOOT = (
    "import os, site, sys\n"
    "for d in os.environ.get('HIPDNN_SITE_DIRS', '').split(os.pathsep):\n"
    "    d and site.addsitedir(d)\n"
    f"sys.path.insert(0, {str(REPO)!r})\n"
)

#: The child: builds one row through the public API, executes it once, prints RESULT {json}.
_CHILD = """
import json, sys, time
import numpy as np
import miopen_ctypes
import hipdnn
from hipdnn.core.types import DataType

lib = miopen_ctypes.load()
counts = {}
for name in list(vars(lib)):
    if name.endswith(("GetSolutionCount", "CompileSolution")) or name in (
            "miopenFindSolutions", "miopenLoadSolution", "miopenCompileFusionPlan"):
        real = getattr(lib, name)
        def counted(*args, _real=real, _name=name):
            counts[_name] = counts.get(_name, 0) + 1
            return _real(*args)
        setattr(lib, name, counted)

row, bench = sys.argv[1], int(sys.argv[2])
N, C, H, W, K = 8, 64, 56, 56, 64
nhwc = lambda n, c, h, w: [c * h * w, 1, w * c, c]
pack = {}
if row.startswith("precompile:"):  # four conv layers at once, N workers, cold caches
    graphs = []
    for c in (16, 32, 48, 64):
        g = hipdnn.Graph(name=f"conv{c}", io_data_type=DataType.HALF, compute_data_type=DataType.FLOAT)
        x = g.tensor(dim=[8, c, 28, 28], stride=nhwc(8, c, 28, 28), name="x")
        w = g.tensor(dim=[c, c, 3, 3], stride=nhwc(c, c, 3, 3), name="w")
        g.conv_fprop(x, w, padding=[1, 1], stride=[1, 1], dilation=[1, 1], name="conv").set_output(True)
        graphs.append(g)
    t0 = time.perf_counter()
    summary = hipdnn.precompile(graphs, workers=int(row.split(":")[1]), progress=False,
                                knobs={"global.benchmarking": bench})
    took = time.perf_counter() - t0
    print("RESULT " + json.dumps({"plan": f"{len(summary.built)} built", "solution": None,
                                  "workspace": 0, "build_s": took, "execute_s": 0.0,
                                  "counts": counts}))
    raise SystemExit(0)
if row == "bn":
    F = DataType.FLOAT
    g = hipdnn.Graph(io_data_type=F, intermediate_data_type=F, compute_data_type=F)
    x = g.tensor(dim=[N, C, H, W], stride=nhwc(N, C, H, W), name="x")
    params = [g.tensor(dim=[1, C, 1, 1], name=n) for n in ("scale", "bias", "rm", "rv")]
    outs = g.batchnorm(x, params[0], params[1], 1e-5, momentum=0.1, in_running_mean=params[2],
                       in_running_var=params[3], name="bn")
    pack[x] = np.zeros((N, H, W, C), np.float32).transpose(0, 3, 1, 2)
    for t in params:
        pack[t] = np.ones((1, C, 1, 1), np.float32)
    for t in outs:
        t.set_output(True)
        d = t.get_dim()
        pack[t] = (np.zeros((d[0], d[2], d[3], d[1]), np.float32).transpose(0, 3, 1, 2)
                   if d[2] * d[3] > 1 else np.zeros(d, np.float32))
else:
    Hf = DataType.HALF
    g = hipdnn.Graph(io_data_type=Hf, intermediate_data_type=Hf, compute_data_type=DataType.FLOAT)
    x = g.tensor(dim=[N, C, H, W], stride=nhwc(N, C, H, W), name="x")
    w = g.tensor(dim=[K, C, 3, 3], stride=nhwc(K, C, 3, 3), name="w")
    y = g.conv_fprop(x, w, padding=[1, 1], stride=[1, 1], dilation=[1, 1], name="conv")
    pack[x] = np.zeros((N, H, W, C), np.float16).transpose(0, 3, 1, 2)
    pack[w] = np.zeros((K, 3, 3, C), np.float16).transpose(0, 3, 1, 2)
    if row == "conv_bias_relu":
        b = g.tensor(dim=[1, K, 1, 1], name="b")
        pack[b] = np.zeros((1, K, 1, 1), np.float16)
        y = g.relu(g.bias(y, b))
    y.set_output(True)
    pack[y] = np.zeros((N, H, W, K), np.float16).transpose(0, 3, 1, 2)
t0 = time.perf_counter()
g.build_operation_graph()
g.create_execution_plans()
g.create_execution_plan_ext("MIOPEN_ENGINE", {"global.benchmarking": bench})
g.build_plans()
build_s = time.perf_counter() - t0
plan = g.plans[0]
ws = plan.workspace_size
t1 = time.perf_counter()
g.execute(pack, np.zeros(ws, np.uint8) if ws else None)
execute_s = time.perf_counter() - t1
print("RESULT " + json.dumps({"plan": plan.name, "solution": plan.solution_id, "workspace": ws,
                              "build_s": build_s, "execute_s": execute_s, "counts": counts}))
"""


class Runner:
    """Fresh processes of one MIOpen version over the stub GPU, with caches under ``work``."""

    def __init__(self, version: str, arch: str, work: Path) -> None:
        import miopen_sysroot
        import run_tests
        from stub_hip.build import build_stubgpu

        sysroot = miopen_sysroot.find_sysroot(version)
        if sysroot is None:
            raise SystemExit(f"no MIOpen {version} sysroot cached; run python tools/run_tests.py "
                             "--lane stubgpu once (it builds them) or tools/miopen_sysroot.py")
        stub = build_stubgpu(sysroot)
        cmd, env = run_tests.live_command(sysroot, [])
        cmd[2] = f"{stub.libdir}{os.pathsep}{cmd[2]}"  # --library-path: the stub first
        self.prefix = cmd[: cmd.index("-c")]
        self.work = work
        env.update({"HIPDNN_STUBGPU_DIR": str(stub.libdir), "HIPDNN_STUBGPU_ARCH": arch,
                    "HIPDNN_STUBGPU_VERSION": version,
                    "HIPDNN_STUBGPU_LOG": str(work / "stubgpu-log.jsonl"),
                    "MIOPEN_USER_DB_PATH": str(work / "userdb"),
                    "MIOPEN_CUSTOM_CACHE_DIR": str(work / "kcache"), "AMD_COMGR_CACHE": "1",
                    "AMD_COMGR_CACHE_DIR": str(work / "comgr"),
                    "HIPDNN_PLAN_STORE": str(work / "plans"), **SWITCHES})
        env.pop("HIPDNN_STUBGPU_HOOK", None)
        self.env = env
        self.version = version
        self.run_tests = run_tests

    def empty(self, *, miopen: bool, store: bool) -> None:
        """Empty MIOpen's caches and/or the plan store."""
        names = (["userdb", "kcache", "comgr"] if miopen else []) + (["plans"] if store else [])
        for name in names:
            shutil.rmtree(self.work / name, ignore_errors=True)
            (self.work / name).mkdir(parents=True)

    def run(self, row: str, bench: int) -> dict[str, Any]:
        """One fresh process; its RESULT plus the process's wall time."""
        cmd = [*self.prefix, "-c", _BOOT + _CHILD, row, str(bench)]
        cmd, env, note = self.run_tests.with_toolchain(self.version, cmd, dict(self.env))
        if note:
            print(f"[bench_first_call] {note}", file=sys.stderr)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True, timeout=900)
        wall = time.perf_counter() - t0
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        if proc.returncode != 0 or not lines:
            raise RuntimeError(f"MIOpen {self.version} {row} benchmarking={bench}: the process "
                               f"failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
        result: dict[str, Any] = json.loads(lines[-1][len("RESULT "):])
        result["process_s"] = wall
        return result


def _enumerations(counts: dict[str, int]) -> int:
    return sum(n for k, n in counts.items() if k.endswith("GetSolutionCount"))


def measure(runner: Runner, row: str, bench: int, repeat: int) -> dict[str, dict[str, Any]]:
    """The three cases, each the median of ``repeat`` runs (counts from the last run)."""
    runs: dict[str, list[dict[str, Any]]] = {c: [] for c in CASES}
    for _ in range(repeat):
        runner.empty(miopen=True, store=True)
        runs["cold"].append(runner.run(row, bench))
        runner.empty(miopen=False, store=True)
        runs["warm MIOpen"].append(runner.run(row, bench))
        runs["warm store"].append(runner.run(row, bench))
    out = {}
    for case, results in runs.items():
        last = dict(results[-1])
        for key in ("build_s", "execute_s", "process_s"):
            last[key] = statistics.median(r[key] for r in results)
        out[case] = last
    return out


def table(rows: list[tuple[str, str, int, str, dict[str, Any]]]) -> str:
    head = ("| MIOpen | row | benchmarking | case | build | first execute | process | "
            "enumerations | Find | CompileSolution | LoadSolution | plan |")
    lines = [head, "|" + "---|" * 12]
    for version, row, bench, case, r in rows:
        c = r["counts"]
        compiles = sum(n for k, n in c.items() if k.endswith("CompileSolution"))
        lines.append(f"| {VERSIONS[version]} | {row} | {bench} | {case} | {r['build_s']:.3f} s | "
                     f"{r['execute_s']:.3f} s | {r['process_s']:.2f} s | {_enumerations(c)} | "
                     f"{c.get('miopenFindSolutions', 0)} | {compiles} | "
                     f"{c.get('miopenLoadSolution', 0)} | {r['plan']} |")
    return "\n".join(lines)


def precompile_table(args: argparse.Namespace) -> int:
    """hipdnn.precompile of four FP16 NHWC conv layers (8xCx28x28, C = 16, 32, 48, 64, 3x3) in
    a fresh process with cold MIOpen caches and store: one worker (one by one) vs two."""
    work_root = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="hipdnn-first-call-"))
    print("| MIOpen | workers | benchmarking | build of the 4 graphs (median) | enumerations | Find |")
    print("|---|---|---|---|---|---|")
    for version in args.versions:
        runner = Runner(version, args.arch, work_root / version)
        for workers in (1, 2):
            times, last = [], {}
            for _ in range(args.repeat):
                runner.empty(miopen=True, store=True)
                last = runner.run(f"precompile:{workers}", 0)
                times.append(last["build_s"])
            c = last["counts"]
            print(f"| {VERSIONS[version]} | {workers} | 0 | {statistics.median(times):.2f} s | "
                  f"{_enumerations(c)} | {c.get('miopenFindSolutions', 0)} |", flush=True)
    if not args.work:
        shutil.rmtree(work_root, ignore_errors=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="one conv row on MIOpen 3.5, benchmarking 0, once (a few minutes)")
    ap.add_argument("--versions", nargs="*", default=list(VERSIONS), choices=list(VERSIONS))
    ap.add_argument("--rows", nargs="*", default=list(ROWS), choices=list(ROWS))
    ap.add_argument("--arch", default="gfx942", choices=["gfx90a", "gfx942"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", help="where the caches live (default: a temporary folder)")
    ap.add_argument("--precompile", action="store_true",
                    help="instead: hipdnn.precompile of four conv layers, 1 vs 2 workers, cold")
    args = ap.parse_args(argv)
    if args.precompile:
        return precompile_table(args)
    if args.quick:
        args.versions, args.rows, args.repeat = ["7.2.4"], ["conv"], 1
    work_root = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="hipdnn-first-call-"))
    results: list[tuple[str, str, int, str, dict[str, Any]]] = []
    for version in args.versions:
        runner = Runner(version, args.arch, work_root / version)
        for row in args.rows:
            for bench in ((0,) if args.quick or row == "bn" else (0, 1)):
                print(f"[bench_first_call] MIOpen {VERSIONS[version]} {args.arch}: {ROWS[row]}, "
                      f"benchmarking {bench}", file=sys.stderr, flush=True)
                for case, r in measure(runner, row, bench, args.repeat).items():
                    results.append((version, row, bench, case, r))
                    print(table([results[-1]]).splitlines()[-1], file=sys.stderr, flush=True)
    print(f"# first call: fresh processes, real MIOpen over the stub {args.arch}, switches "
          f"{', '.join(f'{k}={v}' for k, v in SWITCHES.items())}; median of {args.repeat}")
    for row in args.rows:
        print(f"# {row}: {ROWS[row]}")
    print(table(results))
    if not args.work:
        shutil.rmtree(work_root, ignore_errors=True)
    cold = next(r for v, row, b, c, r in results if c == "cold")
    warm = next(r for v, row, b, c, r in results if c == "warm store")
    print(f"first-call: cold {cold['build_s'] + cold['execute_s']:.2f} s, warm-store "
          f"{warm['build_s'] + warm['execute_s']:.2f} s, enumerations in the warm process: "
          f"{_enumerations(warm['counts'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
