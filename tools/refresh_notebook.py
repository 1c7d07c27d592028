#!/usr/bin/env python3
"""Run every examples/*.ipynb in a fresh kernel and store its outputs in the file, so the
repository shows the pictures; ``--check`` says (exit 1) which notebook's stored outputs differ
from a fresh run instead of writing. tests/oracle/test_notebook.py runs ``--check``'s
comparison, so the committed outputs cannot go stale.

    python tools/refresh_notebook.py            # rewrite the stored outputs
    python tools/refresh_notebook.py --check    # compare only

Outputs are stored without execution counts and timings; the machine's own facts that a
notebook prints (an installed MIOpen, say) make a notebook differ, which is what the check is
for: run the refresh on a machine without ROCm, as CI is.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "examples").glob("*.ipynb"))


def execute(path: Path) -> Any:
    """The notebook at ``path`` run in a fresh python3 kernel (the checkout importable), its
    outputs normalised: no execution counts, no per-cell metadata."""
    import nbclient
    import nbformat

    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT),
                                                             os.environ.get("PYTHONPATH")]))
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    return normalised(nb)


def normalised(nb: Any) -> Any:
    for cell in nb.cells:
        cell.metadata = {}
        if cell.cell_type == "code":
            cell.execution_count = None
            for out in cell.outputs:
                if "execution_count" in out:
                    out["execution_count"] = None
                out.pop("metadata", None) if not out.get("metadata") else None
    nb.metadata.pop("widgets", None)
    return nb


def outputs(nb: Any) -> list[Any]:
    """What a reader sees: each code cell's outputs (type, text and display data)."""
    return [[{k: v for k, v in out.items() if k in ("output_type", "text", "data", "name")}
             for out in cell.outputs] for cell in nb.cells if cell.cell_type == "code"]


def main(argv: list[str] | None = None) -> int:
    import nbformat

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 if stale")
    args = ap.parse_args(argv)
    stale = []
    for path in NOTEBOOKS:
        fresh = execute(path)
        if args.check:
            if outputs(fresh) != outputs(nbformat.read(path, as_version=4)):
                stale.append(path.name)
        else:
            nbformat.write(fresh, path)
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print("stale outputs (run python tools/refresh_notebook.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
