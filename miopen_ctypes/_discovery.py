"""Finding and loading a native ROCm library (MIOpen or the HIP runtime), lazily.

The search order is fixed and every attempt is recorded as ``(place, reason)`` so that a failure
can list all of them:

1. the explicit ``path`` argument, else the environment override (e.g. ``HIPDNN_MIOPEN_LIBRARY``);
   when either is given nothing else is tried (a bare file name goes to the dynamic loader);
2. a copy already loaded in this process (e.g. by PyTorch): ``/proc/self/maps`` on Linux,
   ``GetModuleHandleW`` on Windows;
3. TheRock's wheels: ``rocm_sdk.find_libraries(<short name>)`` (only if ``rocm_sdk`` imports);
4. ``$ROCM_PATH``, ``$HIP_PATH``, ``/opt/rocm``: ``lib/`` (Linux) and ``bin/`` (Windows);
5. the bare sonames / DLL names, resolved by the dynamic loader.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Candidate", "LibrarySpec", "candidates", "load_first"]

_IS_WINDOWS = sys.platform == "win32"
_dll_directories: list[object] = []  # os.add_dll_directory handles: keep them (and the path) alive


@dataclass(frozen=True)
class LibrarySpec:
    """What to look for: names per platform and where a user can override the search."""

    env_var: str
    linux_names: tuple[str, ...]  # versioned sonames, preferred first
    windows_names: tuple[str, ...]
    maps_marker: str  # substring of the file name in /proc/self/maps, e.g. "libMIOpen.so"
    rocm_sdk_name: str  # short name for rocm_sdk.find_libraries
    probe_symbol: str  # a symbol proving the file is the right library


@dataclass(frozen=True)
class Candidate:
    """One place to try: ``place`` says where it came from, ``target`` is a path or bare name."""

    place: str
    target: str
    is_path: bool = True
    handle: int | None = None  # an already-loaded module (Windows GetModuleHandle)
    skipped: str = ""  # why this place had nothing to try (then ``target`` is empty)


def _names(spec: LibrarySpec) -> tuple[str, ...]:
    return spec.windows_names if _IS_WINDOWS else spec.linux_names


def _already_loaded(spec: LibrarySpec) -> Iterator[Candidate]:
    if _IS_WINDOWS:
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
        kernel32.GetModuleHandleW.restype = ctypes.c_void_p
        kernel32.GetModuleHandleW.argtypes = [ctypes.c_wchar_p]
        for name in spec.windows_names:
            handle = kernel32.GetModuleHandleW(name)
            if handle:
                yield Candidate(f"already loaded in this process ({name})", name, False, handle)
        return
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            lines = maps.read().splitlines()
    except OSError:
        return
    seen: set[str] = set()
    for line in lines:
        path = line.split(maxsplit=5)[-1] if line.count(" ") >= 5 else ""
        if spec.maps_marker in os.path.basename(path) and path not in seen:
            seen.add(path)
            yield Candidate("already loaded in this process (/proc/self/maps)", path)
    if not seen:
        yield Candidate("already loaded in this process (/proc/self/maps)", "",
                        skipped=f"no {spec.maps_marker}* mapped")


def _rocm_sdk(spec: LibrarySpec) -> Iterator[Candidate]:
    try:
        rocm_sdk = importlib.import_module("rocm_sdk")
    except Exception as exc:  # not installed, or broken: then it is simply not a candidate
        yield Candidate(f"TheRock wheel (rocm_sdk.find_libraries({spec.rocm_sdk_name!r}))", "",
                        skipped=f"rocm_sdk does not import ({type(exc).__name__})")
        return
    try:
        found = rocm_sdk.find_libraries(spec.rocm_sdk_name)
    except Exception as exc:
        yield Candidate(f"rocm_sdk.find_libraries({spec.rocm_sdk_name!r}) failed: {exc}", "")
        return
    for path in found:
        yield Candidate(f"TheRock wheel (rocm_sdk.find_libraries({spec.rocm_sdk_name!r}))", str(path))


def _rocm_dirs(spec: LibrarySpec) -> Iterator[Candidate]:
    roots: list[tuple[str, str]] = []
    for var in ("ROCM_PATH", "HIP_PATH"):
        value = os.environ.get(var)
        if value:
            roots.append((f"${var}", value))
        else:
            yield Candidate(f"${var}", "", skipped="not set")
    roots.append(("default ROCm prefix", "C:\\Program Files\\AMD\\ROCm" if _IS_WINDOWS else "/opt/rocm"))
    subdirs = ("bin", "lib") if _IS_WINDOWS else ("lib", "lib64")
    for label, root in roots:
        for sub in subdirs:
            for name in _names(spec):
                yield Candidate(f"{label}={root}", str(Path(root) / sub / name))


def candidates(spec: LibrarySpec, path: str | os.PathLike[str] | None = None) -> list[Candidate]:
    """Every place to try, in order (see the module docstring)."""
    # a bare file name (no directory) is left to the dynamic loader's search
    if path is not None:
        target = os.fspath(path)
        return [Candidate("explicit path argument", target, is_path=bool(os.path.dirname(target)))]
    override = os.environ.get(spec.env_var)
    if override:
        return [Candidate(f"${spec.env_var}", override, is_path=bool(os.path.dirname(override)))]
    found = [*_already_loaded(spec), *_rocm_sdk(spec), *_rocm_dirs(spec)]
    found += [Candidate("system dynamic loader search", name, is_path=False) for name in _names(spec)]
    return found


def _open(candidate: Candidate) -> ctypes.CDLL:
    if candidate.handle is not None:
        return ctypes.CDLL(candidate.target, handle=candidate.handle)
    if candidate.is_path:
        if not os.path.isfile(candidate.target):
            raise OSError("no such file")
        if _IS_WINDOWS:  # dependencies (hip, rocblas, ...) live next to the DLL
            directory = os.path.dirname(os.path.abspath(candidate.target))
            _dll_directories.append(os.add_dll_directory(directory))  # type: ignore[attr-defined,unused-ignore]
    return ctypes.CDLL(candidate.target)


def load_first(
    spec: LibrarySpec,
    path: str | os.PathLike[str] | None,
    not_found: Callable[[Sequence[tuple[str, str]]], Exception],
) -> tuple[ctypes.CDLL, str]:
    """Load the first candidate that opens and exports ``spec.probe_symbol``.

    Returns the library and the path/name it was loaded from; raises ``not_found(attempts)``.
    """
    attempts: list[tuple[str, str]] = []
    for candidate in candidates(spec, path):
        where = f"{candidate.place}: {candidate.target}" if candidate.target else candidate.place
        if not candidate.target:
            attempts.append((where, candidate.skipped or "skipped"))
            continue
        try:
            lib = _open(candidate)
        except OSError as exc:
            attempts.append((where, str(exc) or type(exc).__name__))
            continue
        if not hasattr(lib, spec.probe_symbol):
            attempts.append((where, f"loaded, but it does not export {spec.probe_symbol}"))
            continue
        return lib, candidate.target
    raise not_found(attempts)
