"""tools/stubgpu_report.py formats the stubgpu lane's records (the lane itself runs in tests/stubgpu)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import stubgpu_report


def test_table_rows_sorted_with_kernels_collapsed_and_reasons() -> None:
    records = [
        {"version": "7.2.4", "arch": "gfx942", "row": "conv_fprop", "dtype": "fp32", "layout": "NCHW",
         "decision": "built", "path": "immediate", "solution": 91, "workspace": 4608,
         "kernels": ["Im2d2Col_v2", "Im2d2Col_v2", ""]},
        {"version": "6.4.3", "arch": "gfx90a", "row": "conv_bias_act", "dtype": "bf16", "layout": "NCHW",
         "decision": "declined", "reason": "workaround ROCm/rocm-libraries#5409 | x"},
    ]
    lines = stubgpu_report.table(records).splitlines()
    assert len(lines) == 4 and lines[0].startswith("| row | dtype")
    assert lines[2].startswith("| conv_bias_act | bf16 | NCHW | 6.4.3 | gfx90a | declined |")
    assert "#5409 / x" in lines[2]
    assert lines[3].endswith("| immediate | 91 | 4608 | Im2d2Col_v2 x2, (rocBLAS) |")
