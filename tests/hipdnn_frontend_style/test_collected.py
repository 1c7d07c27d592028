"""tools/run_tests.py's main lane (the README's test command, CI's too) runs this directory."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_main_lane_collects_this_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "tools"))
    import run_tests

    seen: list[list[str]] = []

    def fake_lane(name: str, cmd: list[str], env: dict[str, str]) -> Any:
        seen.append(list(cmd))
        return run_tests.LaneResult(name, 0, "1 passed in 0.01s")

    monkeypatch.setattr(run_tests, "_run_lane", fake_lane)
    assert run_tests.main(["--lane", "main"]) == 0
    (cmd,) = seen
    here = Path(__file__).resolve().parent.relative_to(ROOT).as_posix()
    targets = [a for a in cmd[cmd.index("pytest") + 1:] if not a.startswith("-")]
    assert any(here == t or here.startswith(f"{t.rstrip('/')}/") for t in targets), cmd
    ignored = [a.split("=", 1)[1] for a in cmd if a.startswith("--ignore=")]
    assert not any(here == i or here.startswith(f"{i.rstrip('/')}/") for i in ignored), cmd
    assert cmd[0] == sys.executable
