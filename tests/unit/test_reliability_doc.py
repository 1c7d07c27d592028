"""docs/RELIABILITY.md tells the truth: the Python blocks of its "What a variant pack must
hold" section run (on the CPU), each in a fresh namespace, and print the hint they describe."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "RELIABILITY.md"


def _section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


BLOCKS = re.findall(r"```python\n(.*?)```", _section("What a variant pack must hold"), flags=re.S)


def test_the_section_has_its_examples() -> None:
    assert len(BLOCKS) == 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_each_block_runs(reference_only: None, index: int) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(BLOCKS[index], f"{DOC} (python block {index})", "exec"), {})
    if index == 0:
        assert "NHWC order" in out.getvalue() and "a.transpose(0, 3, 1, 2)" in out.getvalue()
