"""docs/INTERNALS.md matches the code: every module is in its layout, and its layer rules hold.

The layers below are the drawing in docs/INTERNALS.md ("Layers"); the check runs over the real
import graph of tests/unit/test_import_graph.py (function-local imports included, imports under
``if TYPE_CHECKING:`` ignored).
"""

from __future__ import annotations

import re

import pytest
from test_import_graph import ROOT, _modules, import_graph

DOC = ROOT / "docs" / "INTERNALS.md"

#: Layer of each hipdnn module, lowest first (docs/INTERNALS.md, "Layers"); miopen_ctypes is 0.
LAYERS: dict[str, tuple[str, ...]] = {
    "core": ("core",),
    "interop": ("interop",),
    "graph IR": ("ir",),
    "engine contract": ("backend",),
    "engines": ("engines", "engines.reference", "engines.miopen"),
    "pipeline": ("pipeline",),
    "builder": ("graph",),
    "surfaces": ("", "__main__", "surfaces", "frontend", "direct"),
}
ENGINE_PACKAGES = ("hipdnn.engines.reference", "hipdnn.engines.miopen")


def _layer(module: str) -> int:
    if module.split(".")[0] == "miopen_ctypes":
        return 0
    rest = module.removeprefix("hipdnn").removeprefix(".")
    best: tuple[int, int] | None = None  # (prefix length, layer): the longest listed prefix wins
    for level, (_, names) in enumerate(LAYERS.items(), start=1):
        for name in names:
            if rest == name or (name and rest.startswith(name + ".")) or (name == "" and rest == ""):
                if best is None or len(name) > best[0]:
                    best = (len(name), level)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS and docs/INTERNALS.md")
    return best[1]


def test_every_module_is_in_the_layout() -> None:
    text = DOC.read_text(encoding="utf-8")
    layout = text[text.index("## Package layout"):text.index("## One operation's path")]
    words = set(re.findall(r"[\w./]+", layout))
    missing = []
    for path, _ in _modules().values():
        rel = path.relative_to(ROOT).as_posix()
        parts = rel.split("/")
        # listed by its path under its package line ("engines/miopen/conv.py"), or by name under
        # its folder's own line ("frontend/" then "_graph.py")
        tail = "/".join(parts[1:])
        folder = "/".join(parts[1:-1]) + "/"
        if tail not in words and not (parts[-1] in words and folder in words):
            missing.append(rel)
    assert not missing, f"modules missing from docs/INTERNALS.md's layout: {missing}"


def test_every_module_has_a_layer() -> None:
    for module in _modules():
        _layer(module)


def test_imports_point_down_the_layers() -> None:
    # imports under TYPE_CHECKING count too: a layer types against Protocols of its own, never
    # against a class of a layer above it
    upward = [f"{m} (layer {_layer(m)}) imports {t} (layer {_layer(t)}) at line {lines[0]}"
              for m, targets in import_graph(type_checking=True).items()
              for t, lines in targets.items() if _layer(t) > _layer(m)]
    assert not upward, "imports against docs/INTERNALS.md's layers:\n" + "\n".join(upward)


def test_engines_are_independent_and_private() -> None:
    bad = []
    for m, targets in import_graph().items():
        own = next((p for p in ENGINE_PACKAGES if m == p or m.startswith(p + ".")), None)
        for t in targets:
            engine = next((p for p in ENGINE_PACKAGES if t == p or t.startswith(p + ".")), None)
            if engine is not None and engine != own:
                bad.append(f"{m} imports {t}")
    assert not bad, "only an engine's own package may import its modules:\n" + "\n".join(bad)


def test_binding_imports_nothing_from_hipdnn() -> None:
    bad = [f"{m} imports {t}" for m, targets in import_graph().items()
           if m.startswith("miopen_ctypes") for t in targets if t.startswith("hipdnn")]
    assert not bad


@pytest.mark.parametrize("path", ["docs/INTERNALS.md"])
def test_doc_cites_only_files_in_the_repo(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    cited = set(re.findall(r"\b((?:docs|tools|tests|hipdnn|miopen_ctypes|benchmarks|examples)"
                           r"/[\w./-]*\w)", text))
    missing = sorted(c for c in cited if not (ROOT / c).exists()
                     and not (ROOT / "hipdnn" / c).exists())
    assert not missing, f"{path} cites paths that do not exist: {missing}"
