"""The direct examples' device branches (examples/miopen_direct_*.py) on AMD's kernels: real
MIOpen compiles for the emulated gfx1100 and tools/rdna3 runs the code, so each example's own
check against PyTorch runs. Where MIOpen cannot build a kernel in the sysroot, the example's
typed failure is asserted with the reason."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
VERSION = os.environ.get("HIPDNN_AMDKERNELS_VERSION", "7.2.4")
#: (example, version) -> the typed failure's text where MIOpen's kernel does not build or run
#: here: CTC loss's kernel uses opcodes tools/rdna3 lacks (3.5.1 VOPC 205, 3.4.0 VOP3 201); dropout's
#: state kernel and the accurate instance softmax include rocrand headers, 3.5.1's pooling
#: <hip/hip_runtime.h>, none in the Debian sysroot (docs/MIOPEN_DIRECT.md)
FAILS: dict[tuple[str, str], str] = {
    **{("miopen_direct_ctc_loss", v): "miopenCTCLoss failed" for v in ("6.4.3", "7.2.4")},
    **{("miopen_direct_dropout", v): "miopenSetDropoutDescriptor failed" for v in ("6.4.3", "7.2.4")},
    **{("miopen_direct_softmax", v): "miopenSoftmaxForward_V2 failed" for v in ("6.4.3", "7.2.4")},
    ("miopen_direct_pooling", "7.2.4"): "miopenPoolingForward failed",
}
NAMES = ["miopen_direct_lrn", "miopen_direct_norms", "miopen_direct_reduction", "miopen_direct_ctc_loss",
         "miopen_direct_dropout", "miopen_direct_softmax", "miopen_direct_pooling"]


@pytest.mark.parametrize("name", NAMES)
def test_direct_example_device_branch(launches: Any, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    sys.path.insert(0, str(EXAMPLES))
    try:
        spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        fails = FAILS.get((name, VERSION))
        if fails is not None:
            with pytest.raises(Exception, match=fails):
                module.main()
            return
        rc = module.main()
    finally:
        sys.path.remove(str(EXAMPLES))
    out = capsys.readouterr().out
    print(out)
    assert rc == 0 and "no GPU" not in out, out
    assert "PASS" in out and "FAIL" not in out, out
