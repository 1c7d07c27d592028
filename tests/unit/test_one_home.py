"""One home per name: an enum the native API and hipdnn.frontend both offer is one class, and no
module re-exports another hipdnn module's names except the public faces (hipdnn, hipdnn.frontend,
hipdnn.engines and the node registry hipdnn.ir.nodes)."""

from __future__ import annotations

import ast
import enum

from test_import_graph import ROOT, _modules

import hipdnn
import hipdnn.frontend

#: modules whose job is to gather names from others for users (the public faces)
PUBLIC_FACES = {"hipdnn", "hipdnn.frontend", "hipdnn.engines", "hipdnn.ir.nodes",
                "hipdnn.engines.miopen", "hipdnn.engines.reference",
                "hipdnn.engines.reference.kernels",
                "hipdnn.frontend.hipdnn_frontend_python"}  # upstream's pybind module name


def test_shared_enums_are_one_class() -> None:
    shared = sorted(set(dir(hipdnn)) & set(dir(hipdnn.frontend)))
    enums = [n for n in shared
             if isinstance(getattr(hipdnn, n), type) and issubclass(getattr(hipdnn, n), enum.Enum)]
    assert "ReductionMode" in enums
    assert [n for n in enums if getattr(hipdnn, n) is not getattr(hipdnn.frontend, n)] == []


def test_no_module_re_exports_another_modules_names() -> None:
    found = []
    for module, (path, _) in _modules().items():
        if not module.startswith("hipdnn") or module in PUBLIC_FACES:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        exported: set[str] = set()
        imported: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                exported = {e.value for e in ast.walk(node.value)
                            if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hipdnn"):
                imported |= {a.asname or a.name for a in node.names}
        found += [f"{module}: {name}" for name in sorted(exported & imported)]
    assert not found, f"names re-exported outside the public faces ({ROOT.name}):\n" + \
        "\n".join(found)
