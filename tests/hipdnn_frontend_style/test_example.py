"""examples/hipdnn_frontend_conv_fprop.py and hipdnn_frontend_autotune.py (hipdnn_frontend-style
scripts whose only change is the import) run on both engines and match PyTorch; their own
main() passes; the hipdnn_frontend block of docs/HIPDNN_FRONTEND.md runs."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hipdnn_frontend_conv_fprop.py"
AUTOTUNE = EXAMPLE.with_name("hipdnn_frontend_autotune.py")

torch = pytest.importorskip("torch")


def test_example_matches_pytorch(engine: str, capsys: pytest.CaptureFixture[str]) -> None:
    module = runpy.run_path(str(EXAMPLE), run_name="example")
    x, w, y = module["run_conv_fprop"](n=2, c=4, h=9, w=9, k=8, stride=2, pad=1, seed=3)
    assert f"plan: {engine}" in capsys.readouterr().out
    ref = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=1,
                                     stride=2)
    assert y.shape == tuple(ref.shape) == (2, 8, 5, 5)
    np.testing.assert_allclose(y, ref.numpy(), rtol=1e-5, atol=1e-5)


def test_autotune_example_matches_pytorch(engine: str) -> None:
    module = runpy.run_path(str(AUTOTUNE), run_name="example")
    x, w, y, results = module["run_autotune"](n=1, c=4, h=6, w=6, k=4, seed=5)
    assert any(r.engine_name == engine and r.succeeded for r in results)
    assert results[0].rank == 0
    ref = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=1)
    np.testing.assert_allclose(y, ref.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("path", [EXAMPLE, AUTOTUNE], ids=lambda p: p.stem)
def test_example_main_passes(path: Path) -> None:
    assert runpy.run_path(str(path), run_name="example")["main"]() == 0


@pytest.mark.parametrize("path", [EXAMPLE, AUTOTUNE], ids=lambda p: p.stem)
def test_example_differs_from_a_hipdnn_frontend_script_only_in_the_import(path: Path) -> None:
    code = [line for line in path.read_text().splitlines()
            if line.startswith(("import ", "from ")) and "__future__" not in line]
    assert code == ["import numpy as np",
                    "import hipdnn.frontend as hipdnn  # the one change: was "
                    "`import hipdnn_frontend as hipdnn`"]
    body = path.read_text().split('"""', 2)[2]
    assert "hipdnn.frontend" not in body.replace("import hipdnn.frontend as hipdnn", "")


def test_readme_hipdnn_frontend_block_runs(capsys: pytest.CaptureFixture[str]) -> None:
    import re

    readme = (EXAMPLE.parents[1] / "docs" / "HIPDNN_FRONTEND.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", readme, flags=re.S)
                if "import hipdnn.frontend as hipdnn" in b]
    namespace: dict[str, object] = {}
    exec(compile(block, "docs/HIPDNN_FRONTEND.md", "exec"), namespace)
    out = np.frombuffer(namespace["buffers"][namespace["out"]].copy_to_host(), np.float32)  # type: ignore[index]
    np.testing.assert_array_equal(out, np.arange(8, dtype=np.float32) + 0.5)
    assert capsys.readouterr().out.startswith("True [")
