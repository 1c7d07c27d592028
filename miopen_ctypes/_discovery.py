"""Finding and loading a native ROCm library (MIOpen or the HIP runtime), lazily.

The search order is fixed, the same for both libraries, and every place tried is recorded as
``(place, reason)`` so that a failure lists all of them:

1. **override**: the explicit ``path`` argument, else the environment variable
   (``HIPDNN_MIOPEN_LIBRARY`` / ``HIPDNN_HIP_LIBRARY``); when given, nothing else is tried.
   A bare file name goes to the dynamic loader on Linux; on Windows it is looked for in the
   ``PATH`` folders and System32 (steps 6 and 7).
2. **already loaded** in this process (e.g. by ``import torch``): found by ``/proc/self/maps``
   (Linux) or ``GetModuleHandleW`` (Windows), reported by its full path and loaded again by
   that path, so this package holds its own reference.
3. **TheRock wheels**: ``rocm_sdk.find_libraries(<short name>)``. On Windows the folder of
   the HIP runtime (``_rocm_sdk_core\\bin``) is added to the DLL search path for the load,
   because MIOpen.dll's dependencies (amdhip64, hiprtc, amd_comgr) live there, not beside it.
4. **PyTorch ROCm**: ``<torch>/lib`` (found without importing torch).
5. **install prefixes**: Linux ``$ROCM_PATH``, ``$HIP_PATH``, ``/opt/rocm`` (``lib``, ``lib64``);
   Windows ``$ROCM_PATH``, ``$HIP_PATH``, then ``%ProgramFiles%\\AMD\\ROCm\\<X.Y>`` newest
   first (``bin``). Quotes and trailing separators around the variables are ignored.
6. **Windows: the folders on PATH**, searched here: since Python 3.8 ``ctypes.CDLL`` never
   searches ``PATH``, so each folder is checked and the file loaded by its full path with
   ``LOAD_WITH_ALTERED_SEARCH_PATH``, so that its dependencies are found on ``PATH`` too.
7. **last**: Linux hands the bare sonames to the dynamic loader; Windows tries
   ``%SystemRoot%\\System32`` (where the GPU driver installs ``amdhip64_N.dll``).

A candidate is taken only if it loads and exports the spec's probe symbol. A rejected one
leaves nothing behind: the library is released and the DLL folders added for it are removed.
A failed search is remembered (:func:`load_remembered`) until a variable of
:data:`DISCOVERY_ENV` changes or :func:`forget_failures` is called.
"""

from __future__ import annotations

import ctypes
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ._native import DllDirectory, System

__all__ = [
    "DISCOVERY_ENV",
    "Candidate",
    "LibrarySpec",
    "candidates",
    "forget_failures",
    "load_first",
    "load_remembered",
]

#: Environment variables discovery reads: a change of any of them retries a failed search.
DISCOVERY_ENV = ("HIPDNN_MIOPEN_LIBRARY", "HIPDNN_HIP_LIBRARY", "ROCM_PATH", "HIP_PATH", "PATH")
_LINUX_PREFIX = "/opt/rocm"
#: A DLL found on PATH is loaded the pre-3.8 way: its dependencies are searched in its own
#: folder, System32, the Windows folder, the current folder and PATH (LoadLibraryExW flag 0x8).
LOAD_WITH_ALTERED_SEARCH_PATH = 0x8
_VERSION_DIR = re.compile(r"\d+(\.\d+)*")
#: DLL folders added for libraries that were kept: they stay while those libraries are loaded.
_kept_dll_directories: list[DllDirectory] = []


@dataclass(frozen=True)
class LibrarySpec:
    """What to look for: names per platform and where a user can override the search."""

    env_var: str
    linux_names: tuple[str, ...]  # versioned sonames, preferred first
    windows_names: tuple[str, ...]
    maps_marker: str  # substring of the file name in /proc/self/maps, e.g. "libMIOpen.so"
    rocm_sdk_name: str  # short name for rocm_sdk.find_libraries
    probe_symbol: str  # a symbol proving the file is the right library
    #: rocm_sdk short names whose folders hold this library's dependencies (Windows)
    rocm_sdk_dependencies: tuple[str, ...] = ()


@dataclass(frozen=True)
class Candidate:
    """One place to try: ``place`` says which step found it, ``target`` is a path or bare name."""

    place: str
    target: str = ""
    is_path: bool = True
    dll_dirs: tuple[str, ...] = ()  # folders added to the DLL search path while loading (Windows)
    #: LoadLibraryExW flags (Windows): None = Python's default (the DLL's folder, System32 and
    #: os.add_dll_directory folders); LOAD_WITH_ALTERED_SEARCH_PATH also searches PATH.
    winmode: int | None = None
    skipped: str = ""  # why this place had nothing to try (then ``target`` is empty)

    @property
    def where(self) -> str:
        return f"{self.place}: {self.target}" if self.target else self.place


def _names(spec: LibrarySpec, system: System) -> tuple[str, ...]:
    return spec.windows_names if system.windows else spec.linux_names


def _clean(value: str, system: System) -> str:
    """An environment value as a folder/file: no surrounding blanks or quotes, no trailing separator."""
    value = value.strip().strip('"').strip("'").strip()
    stripped = value.rstrip("\\/" if system.windows else "/")
    drive_root = system.windows and re.fullmatch(r"[A-Za-z]:", stripped)
    return value if not stripped or drive_root else stripped


def _override(spec: LibrarySpec, path: str | None, system: System) -> list[Candidate] | None:
    if path is not None:
        place, target = "explicit path argument", path
    else:
        value = system.environ.get(spec.env_var, "")
        if not value.strip():
            return None
        place, target = f"${spec.env_var}", _clean(value, system)
    if system.path.dirname(target):
        return [Candidate(place, target)]
    if not system.windows:  # a bare soname: the dynamic loader's own search
        return [Candidate(place, target, is_path=False)]
    return [*_path_folders(system, (target,), f"{place} -> PATH"),
            Candidate(f"{place} -> System32", system.path.join(system.system_folder(), target))]


def _already_loaded(spec: LibrarySpec, system: System) -> Iterator[Candidate]:
    place = "already loaded in this process"
    paths = system.loaded_copies(spec.windows_names, spec.maps_marker)
    for path in paths:
        yield Candidate(place, path)
    if not paths:
        what = ", ".join(spec.windows_names) if system.windows else f"{spec.maps_marker}*"
        yield Candidate(place, skipped=f"no {what} {'loaded' if system.windows else 'mapped'}")


def _rocm_sdk(spec: LibrarySpec, system: System) -> Iterator[Candidate]:
    place = f"TheRock wheel (rocm_sdk.find_libraries({spec.rocm_sdk_name!r}))"
    try:
        rocm_sdk = system.import_module("rocm_sdk")
    except Exception as exc:  # not installed, or broken: then it is simply not a candidate
        yield Candidate(place, skipped=f"rocm_sdk does not import ({type(exc).__name__}: {exc})")
        return
    try:
        found = [str(p) for p in rocm_sdk.find_libraries(spec.rocm_sdk_name)]
    except Exception as exc:
        yield Candidate(place, skipped=f"rocm_sdk.find_libraries raised {type(exc).__name__}: {exc}")
        return
    if not found:
        yield Candidate(place, skipped="rocm_sdk found no such library")
        return
    dll_dirs: dict[str, None] = {}
    if system.windows:
        for name in spec.rocm_sdk_dependencies:  # e.g. _rocm_sdk_core\bin for MIOpen.dll
            try:
                deps = [str(p) for p in rocm_sdk.find_libraries(name)]
            except Exception as exc:
                yield Candidate(f"{place} dependency folder ({name!r})",
                                skipped=f"rocm_sdk.find_libraries raised {type(exc).__name__}: {exc}")
                continue
            dll_dirs.update((d, None) for d in map(system.path.dirname, deps) if system.isdir(d))
    for path in found:
        own = system.path.dirname(path)
        yield Candidate(place, path, dll_dirs=tuple(d for d in dll_dirs if d != own))


def _torch(spec: LibrarySpec, system: System) -> Iterator[Candidate]:
    place = "PyTorch ROCm (torch/lib)"
    try:
        folder = system.package_dir("torch")
    except Exception as exc:  # a broken installation is reported, not raised
        yield Candidate(place, skipped=f"locating torch raised {type(exc).__name__}: {exc}")
        return
    if folder is None:
        yield Candidate(place, skipped="torch is not installed")
        return
    names = _names(spec, system) if system.windows else (*spec.linux_names, spec.maps_marker)
    for name in names:
        yield Candidate(place, system.path.join(folder, "lib", name))


def _prefixes(spec: LibrarySpec, system: System) -> Iterator[Candidate]:
    roots: list[tuple[str, str]] = []
    for var in ("ROCM_PATH", "HIP_PATH"):
        value = _clean(system.environ.get(var, ""), system)
        if value:
            roots.append((f"${var}", value))
        else:
            yield Candidate(f"${var}", skipped="not set")
    if system.windows:
        yield from _windows_prefixes(spec, system, roots)
        return
    roots.append(("default ROCm prefix", _LINUX_PREFIX))
    for label, root in roots:
        for sub in ("lib", "lib64"):
            for name in spec.linux_names:
                yield Candidate(f"{label}={root}", system.path.join(root, sub, name))


def _windows_prefixes(spec: LibrarySpec, system: System,
                      roots: list[tuple[str, str]]) -> Iterator[Candidate]:
    program_files = _clean(system.environ.get("ProgramFiles", ""), system) or "C:\\Program Files"
    amd = system.path.join(program_files, "AMD", "ROCm")
    versions = sorted((d for d in system.listdir(amd) if _VERSION_DIR.fullmatch(d)),
                      key=lambda d: tuple(int(p) for p in d.split(".")), reverse=True)
    roots = roots + [("AMD ROCm folder", system.path.join(amd, v)) for v in versions]
    for label, root in roots:
        for name in spec.windows_names:
            yield Candidate(f"{label}={root}", system.path.join(root, "bin", name))
    if not versions:
        yield Candidate(f"AMD ROCm folders {amd}\\<X.Y>", skipped="none installed")


def _path_folders(system: System, names: Sequence[str], label: str = "PATH") -> list[Candidate]:
    raw = system.environ.get("PATH", "").split(system.pathsep)
    folders = [f for f in dict.fromkeys(_clean(p, system) for p in raw) if f]
    found = [Candidate(f"{label} folder", system.path.join(folder, name),
                       winmode=LOAD_WITH_ALTERED_SEARCH_PATH)
             for folder in folders for name in names if system.isfile(system.path.join(folder, name))]
    return found or [Candidate(label, skipped=f"no {' or '.join(names)} in any of its "
                                              f"{len(folders)} folders")]


def _last(spec: LibrarySpec, system: System) -> Iterator[Candidate]:
    if system.windows:
        yield from _path_folders(system, spec.windows_names)
        for name in spec.windows_names:
            yield Candidate("System32", system.path.join(system.system_folder(), name))
        return
    for name in spec.linux_names:
        yield Candidate("system dynamic loader search", name, is_path=False)


def iter_candidates(spec: LibrarySpec, path: str | None = None,
                    system: System | None = None) -> Iterator[Candidate]:
    """Every place to try, in order (see the module docstring), produced as needed."""
    system = system or System()
    override = _override(spec, path, system)
    if override is not None:
        yield from override
        return
    for step in (_already_loaded, _rocm_sdk, _torch, _prefixes, _last):
        yield from step(spec, system)


def candidates(spec: LibrarySpec, path: object = None, system: System | None = None) -> list[Candidate]:
    """:func:`iter_candidates` as a list (every step runs)."""
    return list(iter_candidates(spec, _fspath(path), system))


def _fspath(path: object) -> str | None:
    return None if path is None else os.fspath(path)  # type: ignore[call-overload]


def _try(candidate: Candidate, spec: LibrarySpec, system: System) -> tuple[ctypes.CDLL | None, str]:
    """Load one candidate; on any rejection release what was taken and say why."""
    if candidate.is_path:
        if system.isdir(candidate.target):
            return None, f"is a folder; expected the library file itself ({_names(spec, system)[0]})"
        if not system.isfile(candidate.target):
            return None, "no such file"
    added: list[DllDirectory] = []
    try:
        for folder in candidate.dll_dirs:
            added.append(system.add_dll_directory(folder))
        lib = system.open(candidate.target, candidate.winmode)
    except OSError as exc:
        _close(added)
        return None, str(exc) or type(exc).__name__
    try:
        getattr(lib, spec.probe_symbol)
    except AttributeError:
        system.release(lib)
        _close(added)
        return None, f"loaded, but it does not export {spec.probe_symbol}: not the library looked for"
    _kept_dll_directories.extend(added)
    return lib, ""


def _close(added: list[DllDirectory]) -> None:
    for handle in added:
        handle.close()


def load_first(
    spec: LibrarySpec,
    path: object,
    not_found: Callable[..., Exception],
    system: System | None = None,
) -> tuple[ctypes.CDLL, str]:
    """Load the first candidate that opens and exports ``spec.probe_symbol``.

    Returns the library and the path (or, for the Linux loader search, the soname) it was
    loaded from; raises ``not_found(attempts, windows=...)`` listing every place tried.
    """
    system = system or System()
    attempts: list[tuple[str, str]] = []
    tried: dict[str, str] = {}
    for candidate in iter_candidates(spec, _fspath(path), system):
        if not candidate.target:
            attempts.append((candidate.where, candidate.skipped or "skipped"))
            continue
        key = system.path.normcase(candidate.target)
        if key in tried:
            attempts.append((candidate.where, f"same file as {tried[key]} (not tried again)"))
            continue
        tried[key] = candidate.place
        lib, reason = _try(candidate, spec, system)
        if lib is not None:
            return lib, candidate.target
        attempts.append((candidate.where, reason))
    raise not_found(attempts, windows=system.windows)


#: Remembered failed searches: (env var, path, discovery environment) -> attempts.
_failures: dict[tuple[object, ...], list[tuple[str, str]]] = {}
_failures_lock = threading.Lock()


def forget_failures() -> None:
    """Forget every remembered failed search (e.g. after installing ROCm in this process)."""
    with _failures_lock:
        _failures.clear()


def load_remembered(
    spec: LibrarySpec, path: str | None, not_found: Callable[..., Exception]
) -> tuple[ctypes.CDLL, str]:
    """:func:`load_first`, but a failed search is raised again without searching the disk.

    The one memo of failed searches for every library: it holds until a variable of
    :data:`DISCOVERY_ENV` changes or :func:`forget_failures` is called.
    """
    key = (spec.env_var, path, *(os.environ.get(var) for var in DISCOVERY_ENV))
    with _failures_lock:
        attempts = _failures.get(key)
    windows = System().windows
    if attempts is not None:
        raise not_found(attempts, windows=windows)
    try:
        return load_first(spec, path, not_found)
    except Exception as exc:
        remembered = getattr(exc, "attempts", None)
        if remembered is not None:
            with _failures_lock:
                _failures[key] = list(remembered)
        raise
