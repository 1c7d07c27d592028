"""Every ```python block of every page under docs/ runs (on this machine, CPU-only or not), each
page's blocks in order in one fresh namespace: the docs show code that works. Sketches that are
not meant to run (signatures, declarations) are fenced as ```text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(p for p in DOCS.glob("*.md") if "```python" in p.read_text(encoding="utf-8"))


def test_pages_with_code_are_found() -> None:
    assert len(PAGES) >= 3


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_every_python_block_runs(page: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    for i, block in enumerate(blocks):
        try:
            exec(compile(block, f"{page}:python block {i}", "exec"), namespace)
        except Exception as exc:  # name the block that failed
            raise AssertionError(f"{page.name} python block {i} failed: {exc!r}\n{block}") from exc
