"""Progress display for long work: plan builds (a first MIOpen build compiles kernels; Find 2.0
tunes), and :meth:`hipdnn.Graph.autotune`.

One :class:`Progress` per job. Where it shows:

* a notebook (an IPython kernel is running): one display updated in place;
* an interactive terminal (stderr is a TTY): one line rewritten with ``\\r``, ended when done;
* anywhere else (scripts piped to a file, CI, tests): nothing.

``progress=False`` on the call, or ``HIPDNN_PROGRESS=0`` in the environment, turns it off;
``progress=True`` forces it on (to stderr when not in a notebook). A job that finishes within
``delay`` seconds (:data:`DELAY`, 0.5) shows nothing, so quick cached builds stay quiet.
"""

from __future__ import annotations

import os
import sys
import time
from types import TracebackType
from typing import Any, TextIO

__all__ = ["DELAY", "Progress", "enabled"]

#: Seconds a job runs before its progress shows.
DELAY = 0.5


def _in_notebook() -> bool:
    ipython = sys.modules.get("IPython")
    if ipython is None or "ipykernel" not in sys.modules:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:
        return False
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def enabled(progress: bool | None) -> str | None:
    """Where to show progress: ``"notebook"``, ``"terminal"`` or None (off)."""
    if progress is False or os.environ.get("HIPDNN_PROGRESS", "").strip() == "0":
        return None
    if _in_notebook():
        return "notebook"
    if progress is True or (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return "terminal"
    return None


class Progress:
    """``with Progress("autotune", total=3) as p: p.step("plan X")`` ... (see the module doc)."""

    def __init__(self, label: str, total: int, progress: bool | None = None,
                 delay: float | None = None, stream: TextIO | None = None) -> None:
        self.label, self.total, self.done = label, total, 0
        self.mode = enabled(progress)
        self.delay = DELAY if delay is None else delay
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.monotonic()
        self.shown = False
        self._display: Any = None
        self.last = ""

    def __enter__(self) -> Progress:
        return self

    def step(self, what: str) -> None:
        """About to do ``what`` (item ``done + 1`` of ``total``)."""
        self._show(f"{self.label}: {self.done + 1}/{self.total} {what}")

    def advance(self) -> None:
        """One item finished."""
        self.done += 1

    def _show(self, text: str) -> None:
        self.last = text
        if self.mode is None:
            return
        elapsed = time.monotonic() - self.start
        if not self.shown and elapsed < self.delay:
            return
        line = f"{text} ({elapsed:.1f} s)"
        if self.mode == "notebook":
            from IPython.display import display  # noqa: PLC0415 (optional dependency, imported when used)

            if self._display is None:
                self._display = display({"text/plain": line}, raw=True, display_id=True)
            else:
                self._display.update({"text/plain": line}, raw=True)
        else:
            self.stream.write("\r\x1b[2K" + line)
            self.stream.flush()
        self.shown = True

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if not self.shown:
            return
        elapsed = time.monotonic() - self.start
        end = f"{self.label}: {'done' if exc is None else 'failed'}, {self.done}/{self.total} " \
              f"in {elapsed:.1f} s"
        if self.mode == "notebook":
            self._display.update({"text/plain": end}, raw=True)
        else:
            self.stream.write("\r\x1b[2K" + end + "\n")
            self.stream.flush()
