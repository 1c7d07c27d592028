"""benchmarks/ab_wgrad_parts.py runs two variants of the weight-gradient constants, restores
them afterwards, and refuses a constant that does not exist (its timings are not asserted:
benchmarks print them)."""

from __future__ import annotations

import pytest
from benchmark_module import load_benchmark

from hipdnn.engines.reference import _onednn


def test_the_interleaved_ab_runs_and_restores(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    if _onednn.library() is None:
        pytest.skip("oneDNN is not installed (the 'cpu' extra)")
    before = (_onednn.WGRAD_SLABS, _onednn.PACK_PIXELS, _onednn._problem, _onednn._cached)
    ab = load_benchmark("ab_wgrad_parts")
    assert ab.main(["old:WGRAD_SLABS=32,PACK_PIXELS=0", "new:", "--filter",
                    "^wgrad 256->256 3x3/1 @14x14", "--rounds", "1", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "B/A" in out and "geometric mean new/old over" in out
    assert (_onednn.WGRAD_SLABS, _onednn.PACK_PIXELS, _onednn._problem,
            _onednn._cached) == before


def test_an_unknown_constant_is_refused() -> None:
    with pytest.raises(SystemExit, match="WGRAD_NOPE"):
        load_benchmark("ab_wgrad_parts").parse_variant("x:WGRAD_NOPE=3")
