"""benchmarks/bench_reference.py (issue 34's suite) runs, prints its table and summary, times
each side in turn for as many rounds as asked, and refuses a count below one (its timings are
not asserted: benchmarks print them)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_reference",
                                                  ROOT / "benchmarks" / "bench_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_blocked_timing_takes_turns_for_the_rounds_asked() -> None:
    calls: list[str] = []
    bench = _load()
    best_o, best_r = bench._time_pair(lambda: calls.append("o"), lambda: calls.append("r"),
                                      repeats=2, blocked=True, rounds=3)
    # each round: a warm-up call and two timed of ours, then of PyTorch's
    assert "".join(calls) == "ooorrr" * 3
    assert 0 <= best_o < 1 and 0 <= best_r < 1


def test_the_suite_runs_and_summarises(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    bench = _load()
    assert bench.main(["--quick", "--repeats", "1", "--blocked", "--rounds", "1",
                       "--filter", "^(fprop|wgrad) 256->256 3x3/1 @14x14 NCHW"]) == 0
    out = capsys.readouterr().out
    assert "blocked, 1 rounds" in out
    assert "geometric mean ratio (ours/torch) over" in out
    assert "\nfprop " in out and "\nwgrad " in out


@pytest.mark.parametrize("flag", ["--rounds", "--repeats"])
def test_counts_below_one_are_refused(flag: str) -> None:
    with pytest.raises(SystemExit):
        _load().main([flag, "0"])
