"""benchmarks/bench_overhead.py --quick runs every seed row on both MIOpen symbol sets (CI keeps
the benchmark working; nothing here is about time)."""

from __future__ import annotations

import shutil
import sys

import pytest
from benchmark_module import load_benchmark

pytest.importorskip("torch")  # the seed-row builders compute PyTorch references


def test_quick_mode_covers_every_row_on_both_versions(capsys: pytest.CaptureFixture[str]) -> None:
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("bench_overhead compiles its C no-op library: no cc/gcc on this machine")
    bench = load_benchmark("bench_overhead")
    try:
        assert bench.main(["--quick"]) == 0
    finally:
        sys.modules.pop("bench_overhead", None)
    out = capsys.readouterr().out
    for version in ("3.4", "3.5"):
        section = out.split(f"MIOpen {version} ")[1].split("MIOpen ")[0]
        for label, _row, _unfused in bench.ROWS:
            line = next((ln for ln in section.splitlines() if ln.split()[:1] == [label]), None)
            assert line is not None, f"{version}: no line for {label}"
            assert len(line.split()) >= 6, line  # raw, bind(), ints, cai, checked, fw/ints
    assert "targets missed:" in out
