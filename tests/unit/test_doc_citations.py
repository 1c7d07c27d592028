"""Docstrings and comments of the package cite only files that are in the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_cited_markdown_file_exists() -> None:
    missing = []
    for pkg in ("hipdnn", "miopen_ctypes", "tools", "examples", "benchmarks"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            for cited in set(re.findall(r"[\w./-]*[A-Za-z_]\w*\.md\b", text)):
                name = cited.lstrip("./")
                if not ((ROOT / name).exists() or (ROOT / "docs" / name).exists()
                        or list(ROOT.glob(f"**/{Path(name).name}"))):
                    missing.append(f"{path.relative_to(ROOT)}: {cited}")
    assert not missing, missing


def test_no_design_or_style_notes_cited() -> None:
    """DESIGN.md and STYLE.md are the project's working notes, not shipped files."""
    for pkg in ("hipdnn", "miopen_ctypes"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            assert "DESIGN.md" not in text and "STYLE.md" not in text, path
