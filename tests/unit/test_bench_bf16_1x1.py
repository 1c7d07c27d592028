"""benchmarks/bench_bf16_1x1.py (what bounds issue 34's BF16 1x1 case) runs each way on
oneDNN, checks each result against the FP32 product before timing it, prints its table, and
refuses counts below one (its timings are not asserted: benchmarks print them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

import numpy as np
import pytest
from benchmark_module import load_benchmark


def test_each_way_is_checked_and_timed(capsys: pytest.CaptureFixture[str],
                                        require_or_skip: Callable[[str, str], NoReturn]) -> None:
    bench = load_benchmark("bench_bf16_1x1")
    if bench.od.library() is None:
        require_or_skip("HIPDNN_REQUIRE_ONEDNN", "oneDNN is not installed: pip install "
                        "'hipdnn-ctypes[cpu]' (Intel's onednn-cpu-gomp wheel, Linux x86-64)")
    pytest.importorskip("torch")  # the baseline
    assert bench.main(["--threads", "1,2", "--batch", "1", "--repeats", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("BF16 64->256 1x1 fprop, NHWC 1x56x56; oneDNN 3.")
    assert lines[1].split()[:3] == ["threads", "convolution", "matmul"]
    rows = [line.split() for line in lines[2:]]
    assert [row[0] for row in rows] == ["1", "2"]
    assert all(len(row) == 6 and all(float(v) > 0 for v in row[1:]) for row in rows)


def test_a_wrong_result_stops_the_benchmark() -> None:
    bench = load_benchmark("bench_bf16_1x1")
    want = np.ones((4, 4), np.float32)
    bench._check("ok", want.copy(), want)
    with pytest.raises(SystemExit, match="matmul: largest error 1"):
        bench._check("matmul", np.zeros((4, 4), np.float32), want)


def test_counts_below_one_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_benchmark("bench_bf16_1x1")
    for args in (["--threads", "0"], ["--batch", "0"], ["--repeats", "0"]):
        with pytest.raises(SystemExit):
            bench.main(args)
        assert "must be at least 1" in capsys.readouterr().err
