"""docs/RELIABILITY.md's guarantees section tells the truth: its Python block runs (on the
CPU), and every test file and benchmark it cites exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _section() -> str:
    text = (ROOT / "docs" / "RELIABILITY.md").read_text(encoding="utf-8")
    start = text.index("\n## Guarantees, and the tests that hold them\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def test_the_reliability_block_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", _section(), flags=re.S)
    assert len(blocks) == 1
    namespace: dict[str, object] = {}
    exec(compile(blocks[0], "docs/RELIABILITY.md (Guarantees)", "exec"), namespace)
    handle = namespace["handle"]
    assert getattr(handle, "closed", False)


def test_every_cited_file_exists() -> None:
    cited = re.findall(r"`((?:tests|benchmarks)/[\w/]+\.py)", _section())
    assert len(cited) >= 8
    missing = [path for path in cited if not (ROOT / path).is_file()]
    assert not missing, missing
