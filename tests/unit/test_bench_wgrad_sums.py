"""benchmarks/bench_wgrad_sums.py runs and says both sums gave the numpy bits (its timings are
not asserted: benchmarks print them)."""

from __future__ import annotations

import pytest
from benchmark_module import load_benchmark


def test_the_partial_sum_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_benchmark("bench_wgrad_sums")
    assert bench.main(["--quick", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "numba ms" in out and out.rstrip().endswith("yes")
