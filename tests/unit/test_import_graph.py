"""The package's import graph has no cycles, counting imports inside functions too, and none
either when the imports under ``if TYPE_CHECKING:`` are counted.

A cycle hidden behind a function-local import still couples two modules both ways, and so does a
cycle closed only by a type annotation: the lower module then cannot be read, checked or reused
without the higher one. Lower layers type against small Protocols (``hipdnn.ir.graph_data``,
``Planner``'s ``PlannedGraph``, ...) instead of importing ``Graph``. The only run-time import by
name is the built-in engine loading (importlib in backend/registry.py), which this check does not
see by construction; every module's implicit import of its parent packages is ignored.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("miopen_ctypes", "hipdnn")


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom,
             known: dict[str, tuple[Path, bool]]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join([*parts, base] if base else parts)
    return [base, *(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known)]


def import_graph(type_checking: bool = False) -> dict[str, dict[str, list[int]]]:
    """module -> imported package module -> line numbers (function-local imports included;
    imports under ``if TYPE_CHECKING:`` too when ``type_checking``)."""
    known = _modules()
    graph: dict[str, dict[str, list[int]]] = {}
    for module, (path, is_package) in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        type_only = set() if type_checking else {
            id(n) for block in ast.walk(tree)
            if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
            for n in ast.walk(block)}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) in type_only:
                continue
            for target in _targets(module, is_package, node, known):
                if target in known and target != module and not module.startswith(target + "."):
                    graph.setdefault(module, {}).setdefault(target, []).append(node.lineno)
    return graph


def _cycles(graph: dict[str, dict[str, list[int]]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in list(graph):
        if v not in index:
            visit(v)
    return components


@pytest.mark.parametrize("type_checking", [False, True], ids=["run-time", "with-TYPE_CHECKING"])
def test_no_import_cycles_even_through_function_local_imports(type_checking: bool) -> None:
    graph = import_graph(type_checking)
    cycles = _cycles(graph)
    detail = [
        f"{a} -> {b} (line {graph[a][b][0]})"
        for cycle in cycles for a in cycle for b in graph.get(a, {}) if b in cycle
    ]
    assert not cycles, "import cycles:\n  " + "\n  ".join(detail)


def test_the_checker_sees_a_cycle_hidden_in_a_function() -> None:
    graph = {"a": {"b": [3]}, "b": {"a": [10]}}  # b imports a inside a function, say
    assert _cycles(graph) == [["a", "b"]]
    assert "hipdnn.graph.graph" in import_graph()  # and it reads the real package
