#!/usr/bin/env python3
"""Decision table of the stubgpu lane: for each seed row x dtype x layout x MIOpen version x fake
architecture, what the REAL libMIOpen decided over the stub GPU of tools/stub_hip (path,
convolution solution id, workspace bytes, kernels launched, or the decline with its reason).

Runs tests/stubgpu/test_decisions.py (as ``tools/run_tests.py --lane stubgpu`` does, default
processes only) with ``HIPDNN_STUBGPU_REPORT`` set, then prints the records as a table.

    python tools/stubgpu_report.py --out table.txt   # markdown table (for docs/STUBGPU.md)
    python tools/stubgpu_report.py --json   # the records

Kernels are launched into the stub's log, never executed: no number is computed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_tests

__all__ = ["collect", "main", "table"]


def collect(versions: Sequence[str] = ("6.4.3", "7.2.4")) -> list[dict[str, Any]]:
    """Run test_decisions.py in the lane's default processes and return its records."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.jsonl"
        os.environ["HIPDNN_STUBGPU_REPORT"] = str(path)
        try:
            run_tests.main(["--lane", "stubgpu", "--versions", *versions, "--", "-q", "-k", "real_library_decides"])
        finally:
            os.environ.pop("HIPDNN_STUBGPU_REPORT", None)
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _kernels(names: Sequence[str]) -> str:
    out: list[str] = []
    for name in names:  # consecutive repeats collapsed: "Im2d2Col x2"
        if out and out[-1].split(" x")[0] == name:
            base, _, n = out[-1].partition(" x")
            out[-1] = f"{base} x{int(n or 1) + 1}"
        else:
            out.append(name or "(rocBLAS)")
    return ", ".join(out)


def table(records: Sequence[dict[str, Any]]) -> str:
    """Markdown table, one line per record, sorted by row, dtype, layout, version, arch."""
    lines = ["| row | dtype | layout | MIOpen | arch | decision | path | solution | workspace | kernels launched / reason |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    key = lambda r: (r["row"], r["dtype"], r["layout"], r["version"], r["arch"])  # noqa: E731
    for r in sorted(records, key=key):
        what = (_kernels(r.get("kernels", [])) if r.get("decision") == "built"
                else str(r.get("reason", "")).replace("|", "/")[:220])
        if r.get("execute"):
            what = r["execute"]
        lines.append(f"| {r['row']} | {r['dtype']} | {r['layout']} | {r['version']} | {r['arch']} | "
                     f"{r.get('decision', '?')} | {r.get('path', '')} | {r.get('solution', '') or ''} | "
                     f"{r.get('workspace', '')} | {what} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--versions", nargs="*", default=["6.4.3", "7.2.4"])
    ap.add_argument("--out", help="write the table here (the lane's own output goes to stdout)")
    args = ap.parse_args(argv)
    records = collect(args.versions)
    text = json.dumps(records, indent=1) if args.json else table(records)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0 if records else 1


if __name__ == "__main__":
    raise SystemExit(main())
