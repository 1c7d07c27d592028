"""The MIOpen engine is typed: hipdnn/engines/miopen uses no ``typing.Any`` (issue 32 took it
from 123 to 0). C handles are ``CHandle``, nodes the IR's classes, graphs ``GraphView``, plan-store
decisions TypedDicts; a new module that needs an opaque value says ``object``."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "hipdnn" / "engines" / "miopen"


def _any_uses(path: Path) -> list[int]:
    """Line numbers where ``Any`` is named (as ``Any`` or ``typing.Any``) in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "Any":
            lines.append(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == "Any":
            lines.append(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "Any" in node.value:
            try:  # a string annotation ("dict[str, Any]")
                inner = ast.parse(node.value, mode="eval")
            except SyntaxError:
                continue
            if any(isinstance(n, ast.Name) and n.id == "Any" for n in ast.walk(inner)):
                lines.append(node.lineno)
    return lines


def test_the_miopen_engine_names_no_any() -> None:
    modules = sorted(ENGINE.glob("*.py"))
    assert len(modules) >= 10  # the engine's modules are where this test looks
    found = {p.name: _any_uses(p) for p in modules}
    found = {name: lines for name, lines in found.items() if lines}
    assert not found, f"typing.Any in hipdnn/engines/miopen (use a real type or object): {found}"


def test_the_check_sees_any(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import typing\nfrom typing import Any\nx: Any\ny: typing.Any\nz: 'dict[str, Any]'\n")
    assert _any_uses(probe) == [3, 4, 5]
