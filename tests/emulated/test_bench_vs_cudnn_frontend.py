"""benchmarks/bench_vs_cudnn_frontend.py --quick runs its hipdnn side on the emulated device
(cudnn-frontend and CUDA absent here: those columns are left out); nothing is about time."""

from __future__ import annotations

import shutil
import sys

import pytest
from benchmark_module import load_benchmark


def test_quick_mode_prints_every_op(capsys: pytest.CaptureFixture[str]) -> None:
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("the benchmark compiles its C no-op library: no cc/gcc on this machine")
    try:
        bench = load_benchmark("bench_vs_cudnn_frontend")
        assert bench.main(["--quick"]) == 0
    finally:
        sys.modules.pop("bench_vs_cudnn_frontend", None)
        sys.modules.pop("bench_overhead", None)
    out = capsys.readouterr().out
    execute, build = out.split("execute, us per call")[1].split("build, ms")
    for op in bench.OPS:
        row = next((ln for ln in execute.splitlines() if ln.startswith(f"| {op} |")), None)
        assert row is not None and "failed" not in out, (op, out)
        assert any(ln.startswith(f"| {op} |") for ln in build.splitlines()), op
    # rows whose plans prebuild their calls have a raw floor (pass-by-value scalars do not
    # make a plan stage host memory)
    assert "| conv_fprop | " in execute and "| bn_backward | " in execute
