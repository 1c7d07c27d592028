"""benchmarks/bench_wgrad_sums.py runs and says both sums gave the numpy bits (its timings are
not asserted: benchmarks print them)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_partial_sum_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("bench_wgrad_sums",
                                                  ROOT / "benchmarks" / "bench_wgrad_sums.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--quick", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "numba ms" in out and out.rstrip().endswith("yes")
