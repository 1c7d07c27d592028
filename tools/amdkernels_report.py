#!/usr/bin/env python3
"""Table of the amdkernels lane: per seed row x dtype x layout, the kernels AMD's MIOpen (3.5.1, or
3.4.0 with ``--version 6.4.3``) ran on the emulated gfx1100, the worst relative error against
PyTorch and the emulator's seconds.

Runs ``tests/amdkernels`` (as ``tools/run_tests.py --lane amdkernels`` does) with
``HIPDNN_AMDKERNELS_REPORT`` set, then merges the two shapes of each combination.

    python tools/amdkernels_report.py            # markdown table (docs/AMDKERNELS.md)
    python tools/amdkernels_report.py --version 6.4.3   # MIOpen 3.4.0 (in its toolchain root)
    python tools/amdkernels_report.py --json     # [{"row", "dtype", "layout", "kernels",
                                                 #   "max_rel_err", "ok", "seconds"}, ...]

Relative error is ``|got - want| / max(|want|, 1)`` over every output element. Seconds are the
emulator's time per kernel launch on this machine (AMD's code, emulated: not GPU timings).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import miopen_sysroot
import run_tests

__all__ = ["collect", "main", "merge", "table"]


def collect(pytest_args: Sequence[str] = (), version: str = run_tests.AMDKERNELS_VERSION) -> list[dict[str, Any]]:
    """Run the lane and return its per-test records (one per row x dtype x layout x shape)."""
    sysroot = miopen_sysroot.find_sysroot(version)
    if sysroot is None:
        sysroot = miopen_sysroot.ensure_all([version])[version]
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:  # /tmp: visible inside the toolchain root
        out = Path(tmp) / "records.jsonl"
        cmd, env = run_tests.amdkernels_command(sysroot, ["-q", "-p", "no:cacheprovider", *pytest_args])
        cmd, env, note = run_tests.with_toolchain(version, cmd, env, "HIPDNN_REQUIRE_AMDKERNELS")
        if note:
            raise SystemExit(note)
        env["HIPDNN_AMDKERNELS_REPORT"] = str(out)
        done = subprocess.run(cmd, env=env, cwd=run_tests.REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, check=False)
        if not out.exists():
            raise SystemExit(f"the amdkernels lane wrote no records:\n{done.stdout[-3000:]}")
        return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


def merge(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per row x dtype x layout: kernels in launch order (unique), worst error, all ok,
    seconds per kernel name (the largest of its launches)."""
    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in records:
        key = (r["row"], r["dtype"], r["layout"])
        m = merged.setdefault(key, {"row": r["row"], "dtype": r["dtype"], "layout": r["layout"],
                                    "kernels": [], "max_rel_err": None, "ok": True, "seconds": {}})
        for k, s in zip(r["kernels"], r["seconds"], strict=False):
            if k not in m["kernels"]:
                m["kernels"].append(k)
            m["seconds"][k] = max(m["seconds"].get(k, 0.0), s)
        if r["max_rel_err"] is not None:
            m["max_rel_err"] = max(m["max_rel_err"] or 0.0, r["max_rel_err"])
        m["ok"] = m["ok"] and bool(r["ok"])
        if r.get("path"):
            m["path"] = r["path"]  # the plan's MIOpen path (immediate, unfused, v2, bn_activation...)
        if r.get("declined"):
            m["declined"] = r["declined"]
    out = list(merged.values())
    for m in out:
        m["seconds"] = [round(m["seconds"][k], 3) for k in m["kernels"]]
    return out


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown table of merged records."""
    lines = ["| row | dtype | layout | plan path | kernels (AMD's, emulated gfx1100) | max rel. err | s per kernel | ok |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        kernels = "<br>".join(r["kernels"]) if r["kernels"] else "declined: no MIOpen kernel (real decline)"
        err = "-" if r["max_rel_err"] is None else f"{r['max_rel_err']:.1e}"
        secs = " / ".join(f"{s:.2f}" for s in r["seconds"]) or "-"
        lines.append(f"| {r['row']} | {r['dtype']} | {r['layout']} | {r.get('path', '-')} | {kernels} | {err} | {secs} | "
                     f"{'yes' if r['ok'] else 'NO'} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--json", action="store_true", help="print the merged records as JSON")
    ap.add_argument("--version", default=run_tests.AMDKERNELS_VERSION,
                    choices=list(run_tests.AMDKERNELS_VERSIONS),
                    help="Debian ROCm release of the MIOpen build (7.2.4: 3.5.1, 6.4.3: 3.4.0)")
    args = ap.parse_args(argv)
    rows = merge(collect(version=args.version))
    print(json.dumps(rows, indent=1) if args.json else table(rows))
    return 0 if rows and all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    os.chdir(run_tests.REPO)
    sys.exit(main())
