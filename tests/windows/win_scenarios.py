"""Scenario runner and stand-in layout helpers of tests/windows (fixtures: tests/windows/conftest.py).

The stand-in DLLs (tests/windows/standins/*.c, built with ``x86_64-w64-mingw32-gcc`` by
tools/windows_lane.py) lie in ``$HIPDNN_WINDOWS_STANDINS``: ``good\\MIOpen.dll`` (exports
miopenGetVersion, imports ``amdhip64_7.dll``), ``wrong\\MIOpen.dll`` (no probe symbol),
``hip7\\amdhip64_7.dll`` and ``hip6\\amdhip64_6.dll``. Each scenario runs in a fresh python.exe
(:func:`run_scenario`), because a DLL once loaded stays in a process and would be found as
"already loaded" by the next scenario.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_SCRIPT = r"""
import ctypes, json, os, sys
request = json.loads(sys.argv[1])
os.environ.update(request["late_env"])
exec(request["setup"])
from miopen_ctypes import hip, loader
from miopen_ctypes.errors import LibraryNotFoundError
out = {}
try:
    lib = loader.load() if request["library"] == "miopen" else hip.load_hip()
    out.update(path=lib.path, version=list(lib.version))
except LibraryNotFoundError as exc:
    out.update(error=type(exc).__name__, attempts=exc.attempts, hint=str(exc).splitlines()[-1])
exec(request["after"])
kernel32 = ctypes.WinDLL("kernel32")
kernel32.GetModuleHandleW.restype = ctypes.c_void_p
kernel32.GetModuleHandleW.argtypes = [ctypes.c_wchar_p]
out["loaded"] = {p: bool(kernel32.GetModuleHandleW(p)) for p in request["check_loaded"]}
out["extra"] = globals().get("extra")
print("RESULT " + json.dumps(out))
"""

#: Variables a scenario starts without (they would steer discovery).
_CLEARED = ("HIPDNN_MIOPEN_LIBRARY", "HIPDNN_HIP_LIBRARY", "ROCM_PATH", "HIP_PATH")
#: Variables Wine sets again from its registry in every new process (Windows would keep the
#: parent's value): a scenario sets them in its own ``os.environ`` before discovery runs.
_SET_INSIDE = ("PROGRAMFILES", "SYSTEMROOT")


@dataclass
class Outcome:
    """What a scenario's python.exe reported."""

    path: str | None = None
    version: list[int] = field(default_factory=list)
    error: str | None = None
    attempts: list[list[str]] = field(default_factory=list)
    hint: str = ""
    loaded: dict[str, bool] = field(default_factory=dict)
    extra: Any = None

    def reason(self, place_prefix: str) -> str:
        """The reason recorded for the first attempt whose place starts with ``place_prefix``."""
        return next(reason for place, reason in self.attempts if place.startswith(place_prefix))


@dataclass
class Standins:
    """The built stand-in DLLs and a helper to lay them out like an installation."""

    root: Path

    def place(self, which: str, folder: Path, name: str | None = None) -> Path:
        """Copy ``good``/``wrong`` MIOpen.dll or the ``hip7``/``hip6`` runtime into ``folder``."""
        source = {"good": "good/MIOpen.dll", "wrong": "wrong/MIOpen.dll",
                  "hip7": "hip7/amdhip64_7.dll", "hip6": "hip6/amdhip64_6.dll"}[which]
        folder.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copy2(self.root / source, folder / (name or Path(source).name)))


def run_scenario(env: dict[str, str], library: str = "miopen", setup: str = "", after: str = "",
                 check_loaded: tuple[str, ...] = ()) -> Outcome:
    """Discover ``library`` ("miopen" or "hip") in a fresh python.exe with ``env`` added."""
    # Windows names are case-insensitive: ours replace os.environ's (which spells them in capitals)
    late_env = {k: v for k, v in env.items() if k.upper() in _SET_INSIDE}
    env = {k: v for k, v in env.items() if k not in late_env}
    replaced = {k.upper() for k in env} | set(_CLEARED)
    base = {k: v for k, v in os.environ.items() if k.upper() not in replaced}
    request = json.dumps({"library": library, "setup": setup, "after": after,
                          "check_loaded": list(check_loaded), "late_env": late_env})
    # cwd outside the checkout: ``-c`` puts the current folder first on sys.path
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, request], env={**base, **env},
                          cwd=tempfile.gettempdir(), capture_output=True, text=True, timeout=120,
                          check=False)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert proc.returncode == 0 and line, f"scenario failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return Outcome(**json.loads(line[len("RESULT "):]))
