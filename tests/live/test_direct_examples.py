"""The examples that call MIOpen directly (examples/miopen_direct_*.py) on the real libMIOpen.

They need the library, so they run here rather than in tests/oracle/test_examples.py; without a
GPU each checks what MIOpen answers on the host and says what it did not run.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DIRECT = sorted(p.stem for p in EXAMPLES.glob("miopen_direct_*.py"))


def test_there_are_direct_examples() -> None:
    assert len(DIRECT) >= 4


@pytest.mark.parametrize("name", DIRECT)
def test_direct_example_checks_itself(name: str, lib: Any, capsys: pytest.CaptureFixture[str]) -> None:
    sys.path.insert(0, str(EXAMPLES))
    try:
        spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        rc = module.main()
    finally:
        sys.path.remove(str(EXAMPLES))
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "PASS" in out and "FAIL" not in out, out
