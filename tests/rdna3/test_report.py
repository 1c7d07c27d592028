"""tools/amdkernels_report.py: merging the lane's per-shape records and printing the table."""

from __future__ import annotations

import amdkernels_report as report

RECORDS = [
    {"row": "convolution fprop", "dtype": "fp32", "layout": "NHWC", "shape": "default",
     "kernels": ["naive_fwd"], "max_rel_err": 1e-7, "ok": True, "seconds": [0.2], "path": "immediate"},
    {"row": "convolution fprop", "dtype": "fp32", "layout": "NHWC", "shape": "second",
     "kernels": ["naive_fwd"], "max_rel_err": 3e-7, "ok": False, "seconds": [0.5]},
    {"row": "conv + act", "dtype": "bf16", "layout": "NCHW", "shape": "default", "kernels": [],
     "max_rel_err": None, "ok": True, "seconds": [], "declined": "no fused kernel"},
]


def test_merge_keeps_worst_error_and_any_failure() -> None:
    merged = report.merge(RECORDS)
    assert [(m["row"], m["dtype"], m["layout"]) for m in merged] == [
        ("convolution fprop", "fp32", "NHWC"), ("conv + act", "bf16", "NCHW")]
    conv, declined = merged
    assert conv["kernels"] == ["naive_fwd"] and conv["seconds"] == [0.5]
    assert conv["max_rel_err"] == 3e-7 and conv["ok"] is False
    assert set(conv) >= {"row", "dtype", "layout", "kernels", "max_rel_err", "ok", "seconds"}
    assert declined["declined"] == "no fused kernel" and declined["max_rel_err"] is None


def test_table_marks_failures_and_declines() -> None:
    text = report.table(report.merge(RECORDS))
    assert "| convolution fprop | fp32 | NHWC | immediate | naive_fwd | 3.0e-07 | 0.50 | NO |" in text
    assert "declined: no MIOpen kernel (real decline)" in text
