"""The README's code tells the truth: its first Python block runs and picks an engine."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[2] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_starts_with_the_two_commands() -> None:
    first_block = re.search(r"```bash\n(.*?)```", README.read_text(), flags=re.S)
    assert first_block is not None
    lines = [line for line in first_block.group(1).splitlines() if line.strip()]
    assert lines[0].startswith("pip install . && python -m hipdnn demo")
    assert lines[1].startswith("pip install '.[test]' && python tools/run_tests.py")


def test_readme_quickstart_runs_and_matches_numpy() -> None:
    namespace: dict[str, object] = {}
    exec(compile(_python_blocks()[0], str(README), "exec"), namespace)
    out, xs, ws, bs = (np.asarray(namespace[k], np.float64) for k in ("out", "xs", "ws", "bs"))
    # Independent check of one output pixel: conv 3x3 pad 1 at (n=0, k=5, h=0, w=0), + bias, ReLU.
    patch = np.zeros((64, 3, 3))
    patch[:, 1:, 1:] = xs[0, :, :2, :2]
    want = max(float(np.sum(patch * ws[5])) + float(bs[0, 5, 0, 0]), 0.0)
    assert abs(float(out[0, 5, 0, 0]) - want) <= 1e-3 * max(1.0, abs(want))
    assert out.shape == (8, 64, 56, 56) and np.all(out >= 0)


def test_every_python_block_runs_in_order() -> None:
    """Every ```python block of the README runs on this (CPU-only or not) machine, in order, in
    one namespace (the API-at-a-glance block continues the quick start's)."""
    blocks = _python_blocks()
    assert len(blocks) >= 2
    namespace: dict[str, object] = {"__name__": "readme"}
    for i, block in enumerate(blocks):
        try:
            exec(compile(block, f"{README}:python block {i}", "exec"), namespace)
        except Exception as exc:  # name the block that failed
            raise AssertionError(f"README python block {i} failed: {exc!r}\n{block}") from exc


def test_cli_help_has_no_raw_rst() -> None:
    import subprocess
    import sys

    root = README.parent
    for args in (["--help"], ["info", "--help"], ["demo", "--help"], ["engines", "--help"]):
        out = subprocess.run([sys.executable, "-m", "hipdnn", *args], cwd=root, text=True,
                             capture_output=True, check=True).stdout
        assert "``" not in out and ":func:" not in out and ":class:" not in out, (args, out)


def test_readme_is_a_front_door() -> None:
    """Short (the long pages live in docs/), no line wider than a table row needs, and every
    page it links to exists."""
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    assert text.index("Nothing here has run on AMD hardware") < 3000  # near the top
    links = re.findall(r"\]\((docs/[\w./-]+)\)", text)
    assert links and all((README.parent / link).is_file() for link in links), [
        link for link in links if not (README.parent / link).is_file()]
