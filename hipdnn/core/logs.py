"""Logging and the CPU-fallback warning of :mod:`hipdnn`.

Everything goes through the standard :mod:`logging` logger ``hipdnn``. Like cudnn-frontend's
``CUDNN_FRONTEND_LOG_INFO``/``CUDNN_FRONTEND_LOG_FILE``, two environment variables switch it on
at import time (an application may instead configure the ``hipdnn`` logger itself):

* ``HIPDNN_LOG_INFO``: ``0`` (default, nothing), ``1`` (INFO: each build names the chosen engine
  and why every higher-ranked engine was not used), ``2`` (DEBUG: also stage timings and what a
  plan runs);
* ``HIPDNN_LOG_FILE``: ``stderr`` (default), ``stdout`` or a file path (appended to).

Falling back from MIOPEN_ENGINE to another engine while an AMD GPU (``/dev/kfd``) or a MIOpen
library is present warns once per process with :class:`FallbackWarning` (filter it with
``warnings.filterwarnings("ignore", category=hipdnn.FallbackWarning)``).
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Mapping

__all__ = ["FallbackWarning", "configure_from_env", "logger", "warn_fallback"]

logger = logging.getLogger("hipdnn")
logger.addHandler(logging.NullHandler())

_LEVELS = {"0": None, "1": logging.INFO, "2": logging.DEBUG}
_env_handler: logging.Handler | None = None
_warned = False
#: How MIOPEN_ENGINE's reasons start when the machine, not the graph, is the cause.
ENVIRONMENT_REASONS = ("MIOpen library not found", "HIP runtime not found", "no AMD GPU available")


class FallbackWarning(UserWarning):
    """MIOPEN_ENGINE was not used although an AMD GPU or a MIOpen library is present."""


def configure_from_env(environ: Mapping[str, str] | None = None) -> logging.Handler | None:
    """Apply ``HIPDNN_LOG_INFO``/``HIPDNN_LOG_FILE`` (called on ``import hipdnn``).

    Returns the handler installed, or None when logging stays off. Calling it again replaces
    the handler it installed before. An unknown ``HIPDNN_LOG_INFO`` value raises ValueError
    naming the valid ones.
    """
    global _env_handler
    env = os.environ if environ is None else environ
    raw = env.get("HIPDNN_LOG_INFO", "0").strip() or "0"
    if raw not in _LEVELS:
        raise ValueError(f"HIPDNN_LOG_INFO={raw!r}: valid values are 0 (off), 1 (INFO), 2 (DEBUG)")
    if _env_handler is not None:
        logger.removeHandler(_env_handler)
        _env_handler.close()
        _env_handler = None
    level = _LEVELS[raw]
    if level is None:
        return None
    target = env.get("HIPDNN_LOG_FILE", "stderr").strip() or "stderr"
    handler: logging.Handler
    if target == "stdout":
        handler = logging.StreamHandler(sys.stdout)
    elif target == "stderr":
        handler = logging.StreamHandler(sys.stderr)
    else:
        handler = logging.FileHandler(target, encoding="utf-8")
    handler.setFormatter(logging.Formatter("[hipdnn %(levelname)s] %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(level)
    _env_handler = handler
    return handler


def amd_gpu_present() -> bool:
    """True when the machine shows an AMD GPU driver (``/dev/kfd`` on Linux)."""
    return os.path.exists("/dev/kfd")


def warn_fallback(chosen: str, reason: str) -> bool:
    """Warn once per process that ``chosen`` runs instead of MIOPEN_ENGINE because of the
    machine (``reason`` starts with one of :data:`ENVIRONMENT_REASONS`) while an AMD GPU or a
    MIOpen library is present. Returns True when it warned."""
    global _warned
    if _warned or not reason.startswith(ENVIRONMENT_REASONS):
        return False  # MIOpen declined this graph itself (not a seed row, ...): no install issue
    library_found = not reason.startswith("MIOpen library not found")
    if not (library_found or amd_gpu_present()):
        return False
    _warned = True
    warnings.warn(f"hipdnn: running on {chosen}, not MIOPEN_ENGINE, although "
                  f"{'a MIOpen library' if library_found else 'an AMD GPU'} is present: {reason}",
                  FallbackWarning, stacklevel=4)
    return True


def _reset_for_tests() -> None:
    global _warned
    _warned = False
