"""Progress on long work (hipdnn.core.progress): a terminal line when forced or on a TTY, nothing when
not interactive or switched off; autotune() returns PlanTiming (name, seconds) results."""

from __future__ import annotations

import io

import numpy as np
import pytest

import hipdnn
from hipdnn.core import progress

F = hipdnn.DataType.FLOAT


def graph() -> tuple[hipdnn.Graph, dict[hipdnn.Tensor, np.ndarray]]:
    g = hipdnn.Graph(name="prog", io_data_type=F, compute_data_type=F)
    xs = np.ones((1, 2, 3, 3), np.float32)
    x = g.tensor_like(xs)
    y = g.relu(x).set_output(True)
    return g, {x: xs, y: np.zeros_like(xs)}


def test_terminal_line_when_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HIPDNN_PROGRESS", raising=False)
    out = io.StringIO()
    with progress.Progress("job", 2, True, delay=0.0, stream=out) as bar:
        bar.step("first")
        bar.advance()
        bar.step("second")
        bar.advance()
    text = out.getvalue()
    assert "job: 1/2 first (" in text and "job: 2/2 second (" in text
    assert text.endswith("\n") and "job: done, 2/2 in " in text


def test_silent_when_not_interactive_or_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HIPDNN_PROGRESS", raising=False)
    assert progress.enabled(None) is None  # pytest captures stderr: not a TTY
    assert progress.enabled(False) is None
    assert progress.enabled(True) == "terminal"
    monkeypatch.setenv("HIPDNN_PROGRESS", "0")
    assert progress.enabled(True) is None
    out = io.StringIO()
    with progress.Progress("job", 1, True, delay=0.0, stream=out) as bar:
        bar.step("x")
    assert out.getvalue() == ""


def test_autotune_named_results_with_units_and_progress(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("HIPDNN_PROGRESS", raising=False)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    g, pack = graph()
    g.build(progress=True)
    assert "building 'prog': 1/1 CPU_REFERENCE_ENGINE plan" in capsys.readouterr().err
    result = g.autotune(pack, iterations=2, progress=True)
    assert len(result) == 1 and isinstance(result[0], hipdnn.PlanTiming)
    timing = result[0]
    assert timing.plan_name == g.get_plan_name() and timing.seconds > 0
    assert timing.milliseconds == pytest.approx(timing.seconds * 1e3)
    name, seconds = timing  # still unpacks as (name, seconds)
    assert (name, seconds) == (timing.plan_name, timing.seconds)
    assert str(timing).endswith(" ms per run")
    err = capsys.readouterr().err
    assert "autotune 'prog': 1/1 timing CPU_REFERENCE_ENGINE" in err and "done, 1/1" in err
    g.autotune(pack, iterations=1, progress=False)
    assert capsys.readouterr().err == ""
