"""benchmarks/bench_reference.py (issue 34's suite) runs, prints its table and summary, times
each side in turn for as many rounds as asked, and refuses a count below one (its timings are
not asserted: benchmarks print them)."""

from __future__ import annotations

import pytest
from benchmark_module import load_benchmark


def test_blocked_timing_takes_turns_for_the_rounds_asked() -> None:
    calls: list[str] = []
    bench = load_benchmark("bench_reference")
    best_o, best_r = bench._time_pair(lambda: calls.append("o"), lambda: calls.append("r"),
                                      repeats=2, blocked=True, rounds=3)
    # each round: a warm-up call and two timed of ours, then of PyTorch's
    assert "".join(calls) == "ooorrr" * 3
    assert 0 <= best_o < 1 and 0 <= best_r < 1


def test_the_suite_runs_and_summarises(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    bench = load_benchmark("bench_reference")
    assert bench.main(["--quick", "--repeats", "1", "--blocked", "--rounds", "1",
                       "--filter", "^(fprop|wgrad) 256->256 3x3/1 @14x14 NCHW"]) == 0
    out = capsys.readouterr().out
    assert "blocked, 1 rounds" in out
    assert "geometric mean ratio (ours/torch) over" in out
    assert "\nfprop " in out and "\nwgrad " in out


@pytest.mark.parametrize("flag", ["--rounds", "--repeats"])
def test_counts_below_one_are_refused(flag: str) -> None:
    with pytest.raises(SystemExit):
        load_benchmark("bench_reference").main([flag, "0"])
