"""What library discovery asks of the operating system, in one object tests can replace.

:class:`System` answers file-system questions, opens and releases shared libraries, adds and
removes DLL search folders (Windows) and lists the copies of a library already loaded in this
process (``/proc/self/maps`` on Linux; ``GetModuleHandleW`` + ``GetModuleFileNameW`` on Windows).
``miopen_ctypes/_discovery.py`` decides *what* to try; this module only does it.
tests/unit/test_discovery_order.py drives the discovery logic with a fake ``System`` on any
platform; tests/windows/ runs the real one under Windows (or Wine).
"""

from __future__ import annotations

import _ctypes
import ctypes
import importlib
import importlib.util
import ntpath
import os
import posixpath
import sys
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any, Protocol

__all__ = ["DllDirectory", "System"]


class DllDirectory(Protocol):
    """A folder added to the process's DLL search path (``os.add_dll_directory``'s result)."""

    def close(self) -> None: ...


class System:
    """The real operating system (``windows`` picks the Windows rules; default: this platform)."""

    def __init__(self, windows: bool | None = None) -> None:
        self.windows = sys.platform == "win32" if windows is None else windows
        self.path = ntpath if self.windows else posixpath
        self.pathsep = ";" if self.windows else ":"

    @property
    def environ(self) -> Mapping[str, str]:
        return os.environ

    # ------------------------------------------------------------------------- file system
    def isfile(self, path: str) -> bool:
        return os.path.isfile(path)

    def isdir(self, path: str) -> bool:
        return os.path.isdir(path)

    def listdir(self, path: str) -> list[str]:
        try:
            return os.listdir(path)
        except OSError:
            return []

    # ------------------------------------------------------------------------- Python modules
    def import_module(self, name: str) -> ModuleType:
        return importlib.import_module(name)

    def package_dir(self, name: str) -> str | None:
        """The folder of an installed top-level package, without importing it."""
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            return None
        return str(next(iter(spec.submodule_search_locations)))

    # ------------------------------------------------------------------------- libraries
    def open(self, target: str, winmode: int | None = None) -> ctypes.CDLL:
        """Load ``target`` (a full path, or on Linux a bare soname for the dynamic loader).

        On Windows, with ``winmode=None`` Python >= 3.8 loads a full path with
        ``LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR``: dependencies come
        from the DLL's own folder, the application folder, System32 and folders added with
        ``os.add_dll_directory`` -- never PATH. ``winmode`` is passed to ``LoadLibraryExW``.
        """
        return ctypes.CDLL(target, winmode=winmode)

    def release(self, lib: ctypes.CDLL) -> None:
        """Drop the reference ``open`` took (the library unloads unless someone else holds it)."""

        handle = getattr(lib, "_handle", None)
        if not handle:
            return
        if self.windows:
            _ctypes.FreeLibrary(handle)  # type: ignore[attr-defined,unused-ignore]
        else:
            _ctypes.dlclose(handle)  # type: ignore[attr-defined,unused-ignore]

    def add_dll_directory(self, folder: str) -> DllDirectory:
        return os.add_dll_directory(folder)  # type: ignore[attr-defined,no-any-return,unused-ignore]

    def system_folder(self) -> str:
        """``%SystemRoot%\\System32``, where the GPU driver installs ``amdhip64_N.dll``."""
        return ntpath.join(self.environ.get("SystemRoot") or "C:\\Windows", "System32")

    def loaded_copies(self, windows_names: Sequence[str], maps_marker: str) -> list[str]:
        """Full paths of the matching libraries already loaded in this process."""
        if self.windows:
            return _windows_loaded(windows_names)
        return _linux_loaded(maps_marker)


def _linux_loaded(maps_marker: str) -> list[str]:
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            lines = maps.read().splitlines()
    except OSError:
        return []
    found: list[str] = []
    for line in lines:
        path = line.split(maxsplit=5)[-1] if line.count(" ") >= 5 else ""
        if maps_marker in os.path.basename(path) and path not in found:
            found.append(path)
    return found


def _windows_loaded(names: Sequence[str]) -> list[str]:
    kernel32: Any = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
    get_handle = kernel32.GetModuleHandleW
    get_handle.restype, get_handle.argtypes = ctypes.c_void_p, [ctypes.c_wchar_p]
    get_name = kernel32.GetModuleFileNameW
    get_name.restype = ctypes.c_uint32
    get_name.argtypes = [ctypes.c_void_p, ctypes.c_wchar_p, ctypes.c_uint32]
    found: list[str] = []
    for name in names:
        handle = get_handle(name)  # no reference taken: the caller loads the full path itself
        if not handle:
            continue
        buffer = ctypes.create_unicode_buffer(32768)
        length = get_name(handle, buffer, len(buffer))
        if length and buffer.value not in found:
            found.append(buffer.value)
    return found
