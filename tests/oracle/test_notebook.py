"""Every examples/*.ipynb runs headless (nbclient, a fresh Python kernel) without an error; the
graph picture cell produces the SVG/HTML display."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "examples").glob("*.ipynb"))


def test_there_is_a_notebook() -> None:
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat", reason="nbformat is in the test extra")
    nbclient = pytest.importorskip("nbclient", reason="nbclient is in the test extra")
    pytest.importorskip("ipykernel", reason="ipykernel is in the test extra")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()  # raises CellExecutionError on any failing cell (the numeric check asserts)
    displays = [out for cell in nb.cells if cell.cell_type == "code"
                for out in cell.get("outputs", []) if out.get("output_type") == "execute_result"]
    html = [d["data"]["text/html"] for d in displays if "text/html" in d.get("data", {})]
    assert html and all("<svg" in h for h in html)
    assert any("runs on " in h for h in html)  # after build(): the engine per node
    text = "".join(out.get("text", "") for cell in nb.cells if cell.cell_type == "code"
                   for out in cell.get("outputs", []) if out.get("output_type") == "stream")
    assert "matches the oracle within 1e-4" in text and "  plan: " in text


def test_committed_outputs_are_fresh() -> None:
    """The outputs stored in each notebook (so the repository shows its pictures) are what a
    fresh run prints; `python tools/refresh_notebook.py` rewrites them."""
    pytest.importorskip("nbclient", reason="nbclient is in the test extra")
    pytest.importorskip("ipykernel", reason="ipykernel is in the test extra")
    import importlib.util

    spec = importlib.util.spec_from_file_location("refresh_notebook",
                                                  ROOT / "tools" / "refresh_notebook.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    import nbformat

    for path in NOTEBOOKS:
        stored = tool.outputs(nbformat.read(path, as_version=4))
        assert any(stored), f"{path.name} is committed without outputs"
        assert tool.outputs(tool.execute(path)) == stored, (
            f"{path.name}: stored outputs are stale; run python tools/refresh_notebook.py")
