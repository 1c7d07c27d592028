"""benchmarks/ab_wgrad_parts.py runs two variants of the weight-gradient constants, restores
them afterwards, and refuses a constant that does not exist (its timings are not asserted:
benchmarks print them)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from hipdnn.engines.reference import _onednn

ROOT = Path(__file__).resolve().parents[2]


def _load():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("ab_wgrad_parts",
                                                  ROOT / "benchmarks" / "ab_wgrad_parts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_interleaved_ab_runs_and_restores(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    if _onednn.library() is None:
        pytest.skip("oneDNN is not installed (the 'cpu' extra)")
    before = (_onednn.WGRAD_SLABS, _onednn.PACK_PIXELS, _onednn._problem, _onednn._cached)
    ab = _load()
    assert ab.main(["old:WGRAD_SLABS=32,PACK_PIXELS=0", "new:", "--filter",
                    "^wgrad 256->256 3x3/1 @14x14", "--rounds", "1", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "B/A" in out and "geometric mean new/old over" in out
    assert (_onednn.WGRAD_SLABS, _onednn.PACK_PIXELS, _onednn._problem,
            _onednn._cached) == before


def test_an_unknown_constant_is_refused() -> None:
    with pytest.raises(SystemExit, match="WGRAD_NOPE"):
        _load().parse_variant("x:WGRAD_NOPE=3")
