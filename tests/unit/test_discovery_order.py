"""Discovery's search order and its bad-input handling, on any platform, with a fake System.

``FakeSystem`` replaces the operating system (files, environment, loaded modules, DLL folders,
``rocm_sdk``/``torch``); the order and the rules are those of miopen_ctypes/_discovery.py.
tests/windows/ checks the same behaviour with real DLLs under Windows (or Wine).
"""

from __future__ import annotations

import ntpath
import posixpath
import types
from collections.abc import Iterable
from typing import Any

import pytest

from miopen_ctypes import _discovery
from miopen_ctypes._discovery import Candidate, candidates, load_first, load_remembered
from miopen_ctypes._native import System
from miopen_ctypes.errors import HipNotFoundError, MIOpenNotFoundError
from miopen_ctypes.hip import HIP_SPEC
from miopen_ctypes.loader import MIOPEN_SPEC

PF = "C:\\Program Files"
SYS32 = "C:\\Windows\\System32"


class FakeLibrary:
    """A loaded library exporting ``symbols``."""

    def __init__(self, path: str, symbols: Iterable[str]) -> None:
        self.path = path
        self._symbols = set(symbols)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in self._symbols:
            raise AttributeError(name)
        return lambda *args: 0


class FakeDllDirectory:
    def __init__(self, system: FakeSystem, folder: str) -> None:
        self.system, self.folder = system, folder

    def close(self) -> None:
        self.system.dll_dirs.remove(self.folder)


class FakeSystem(System):
    """Files are ``{path: exported symbols}``; everything discovery does is recorded."""

    def __init__(self, windows: bool, files: dict[str, Iterable[str]] | None = None,
                 env: dict[str, str] | None = None, loaded: Iterable[str] = (),
                 modules: dict[str, Any] | None = None, torch_dir: str | None = None) -> None:
        super().__init__(windows)
        self.files = {k: set(v) for k, v in (files or {}).items()}
        self.env = {"SystemRoot": "C:\\Windows", "ProgramFiles": PF} if windows else {}
        self.env.update(env or {})
        self.loaded = list(loaded)
        self.modules = modules or {}
        self.torch_dir = torch_dir
        self.opened: list[str] = []
        self.released: list[str] = []
        self.dll_dirs: list[str] = []  # currently on the DLL search path
        self.winmodes: list[int | None] = []  # of each successful open

    @property
    def environ(self) -> dict[str, str]:  # type: ignore[override]
        return self.env

    def _norm(self, p: str) -> str:
        return self.path.normcase(p)

    def isfile(self, path: str) -> bool:
        return any(self._norm(f) == self._norm(path) for f in self.files)

    def isdir(self, path: str) -> bool:
        prefix = self._norm(path).rstrip("\\/") + ("\\" if self.windows else "/")
        return any(self._norm(f).startswith(prefix) for f in self.files)

    def listdir(self, path: str) -> list[str]:
        prefix = self._norm(path).rstrip("\\/") + ("\\" if self.windows else "/")
        return sorted({self._norm(f)[len(prefix):].split("\\" if self.windows else "/")[0]
                       for f in self.files if self._norm(f).startswith(prefix)})

    def import_module(self, name: str) -> Any:
        if name not in self.modules:
            raise ModuleNotFoundError(f"No module named {name!r}")
        module = self.modules[name]
        if isinstance(module, Exception):
            raise module
        return module

    def package_dir(self, name: str) -> str | None:
        return self.torch_dir if name == "torch" else None

    def open(self, target: str, winmode: int | None = None) -> Any:
        symbols = next((v for k, v in self.files.items() if self._norm(k) == self._norm(target)), None)
        if symbols is None or "<unloadable>" in symbols:
            raise OSError(f"cannot load {target}")
        if "<needs-core>" in symbols and not any("core" in d for d in self.dll_dirs):
            raise OSError(f"Could not find module '{target}' (or one of its dependencies)")
        self.winmodes.append(winmode)
        self.opened.append(target)
        return FakeLibrary(target, symbols)

    def release(self, lib: Any) -> None:
        self.released.append(lib.path)

    def add_dll_directory(self, folder: str) -> FakeDllDirectory:
        self.dll_dirs.append(folder)
        return FakeDllDirectory(self, folder)

    def loaded_copies(self, windows_names: Any, maps_marker: str) -> list[str]:
        return list(self.loaded)


MIOPEN = ["miopenGetVersion"]
HIP = ["hipGetDeviceCount"]
NOT_MIOPEN = ["strlen"]


def places(system: FakeSystem, spec: Any = MIOPEN_SPEC, path: str | None = None) -> list[str]:
    return [c.where for c in candidates(spec, path, system)]


def fail(system: FakeSystem, spec: Any = MIOPEN_SPEC, path: str | None = None,
         error: type[Exception] = MIOpenNotFoundError) -> list[tuple[str, str]]:
    with pytest.raises(error) as info:
        load_first(spec, path, error, system)
    return info.value.attempts  # type: ignore[attr-defined,no-any-return]


def rocm_sdk(layout: dict[str, list[str]]) -> types.SimpleNamespace:
    return types.SimpleNamespace(find_libraries=lambda name: layout.get(name, []))


# ----------------------------------------------------------------------------------- order
def test_windows_order_every_step_in_place() -> None:
    core = "C:\\venv\\Lib\\site-packages\\_rocm_sdk_core\\bin"
    libs = "C:\\venv\\Lib\\site-packages\\_rocm_sdk_libraries_gfx110X\\bin"
    files = {f"{core}\\amdhip64_7.dll": HIP, f"{PF}\\AMD\\ROCm\\6.4\\bin\\x.dll": [],
             f"{PF}\\AMD\\ROCm\\10.0\\bin\\x.dll": [], f"{PF}\\AMD\\ROCm\\7.1\\bin\\x.dll": [],
             f"{PF}\\AMD\\ROCm\\latest\\bin\\x.dll": [], "D:\\tools\\MIOpen.dll": MIOPEN}
    system = FakeSystem(True, files, env={"HIP_PATH": "C:\\HIP", "PATH": "C:\\empty;D:\\tools"},
                        loaded=["E:\\app\\MIOpen.dll"],
                        modules={"rocm_sdk": rocm_sdk({"miopen": [f"{libs}\\MIOpen.dll"],
                                                       "amdhip64": [f"{core}\\amdhip64_7.dll"]})},
                        torch_dir="C:\\venv\\Lib\\site-packages\\torch")
    found = candidates(MIOPEN_SPEC, None, system)
    assert [c.where for c in found] == [
        "already loaded in this process: E:\\app\\MIOpen.dll",
        f"TheRock wheel (rocm_sdk.find_libraries('miopen')): {libs}\\MIOpen.dll",
        "PyTorch ROCm (torch/lib): C:\\venv\\Lib\\site-packages\\torch\\lib\\MIOpen.dll",
        "$ROCM_PATH",
        "$HIP_PATH=C:\\HIP: C:\\HIP\\bin\\MIOpen.dll",
        f"AMD ROCm folder={PF}\\AMD\\ROCm\\10.0: {PF}\\AMD\\ROCm\\10.0\\bin\\MIOpen.dll",  # newest first,
        f"AMD ROCm folder={PF}\\AMD\\ROCm\\7.1: {PF}\\AMD\\ROCm\\7.1\\bin\\MIOpen.dll",  # numerically
        f"AMD ROCm folder={PF}\\AMD\\ROCm\\6.4: {PF}\\AMD\\ROCm\\6.4\\bin\\MIOpen.dll",  # "latest": no
        "PATH folder: D:\\tools\\MIOpen.dll",
        f"System32: {SYS32}\\MIOpen.dll",
    ]
    assert found[1].dll_dirs == (core,)  # MIOpen.dll's dependencies live in _rocm_sdk_core\bin
    # only a DLL found on PATH is loaded so that PATH serves its dependencies too
    assert [c.place for c in found if c.winmode is not None] == ["PATH folder"]
    assert [c.dll_dirs for c in found if c is not found[1]] == [()] * (len(found) - 1)


def test_linux_order_is_unchanged_plus_torch() -> None:
    system = FakeSystem(False, env={"ROCM_PATH": "/r", "HIP_PATH": "/h/"}, torch_dir="/v/torch")
    got = places(system)
    assert got[:4] == ["already loaded in this process", "TheRock wheel (rocm_sdk.find_libraries("
                       "'miopen'))", "PyTorch ROCm (torch/lib): /v/torch/lib/libMIOpen.so.1",
                       "PyTorch ROCm (torch/lib): /v/torch/lib/libMIOpen.so"]
    assert got[4:] == [f"{var}={root}: {root}/{sub}/libMIOpen.so.1"
                       for var, root in (("$ROCM_PATH", "/r"), ("$HIP_PATH", "/h"),
                                         ("default ROCm prefix", "/opt/rocm"))
                       for sub in ("lib", "lib64")] + ["system dynamic loader search: libMIOpen.so.1"]


def test_hip_runtime_on_windows_comes_last_from_system32_newest_first() -> None:
    system = FakeSystem(True, {f"{SYS32}\\amdhip64_6.dll": HIP, f"{SYS32}\\amdhip64_7.dll": HIP})
    where = load_first(HIP_SPEC, None, HipNotFoundError, system)[1]
    assert where == f"{SYS32}\\amdhip64_7.dll" and system.opened == [where]
    assert places(system, HIP_SPEC)[-2:] == [f"System32: {SYS32}\\amdhip64_7.dll",
                                             f"System32: {SYS32}\\amdhip64_6.dll"]


@pytest.mark.parametrize("value", ['"C:\\ROCm\\6.4\\"', "C:\\ROCm\\6.4\\", " 'C:\\ROCm\\6.4' ",
                                   "C:\\ROCm\\6.4/"])
def test_hip_path_with_quotes_or_trailing_separator(value: str) -> None:
    system = FakeSystem(True, {"C:\\ROCm\\6.4\\bin\\MIOpen.dll": MIOPEN}, env={"HIP_PATH": value})
    where = load_first(MIOPEN_SPEC, None, MIOpenNotFoundError, system)[1]
    assert where == "C:\\ROCm\\6.4\\bin\\MIOpen.dll"


def test_a_drive_root_keeps_its_separator() -> None:
    system = FakeSystem(True, env={"HIP_PATH": "D:\\"})
    assert "$HIP_PATH=D:\\: D:\\bin\\MIOpen.dll" in places(system)


# ----------------------------------------------------------------------------------- override
def test_override_is_exclusive_and_cleaned() -> None:
    system = FakeSystem(True, {"C:\\m\\MIOpen.dll": MIOPEN, f"{SYS32}\\MIOpen.dll": MIOPEN},
                        env={"HIPDNN_MIOPEN_LIBRARY": ' "C:\\m\\MIOpen.dll" '})
    assert places(system) == ["$HIPDNN_MIOPEN_LIBRARY: C:\\m\\MIOpen.dll"]
    assert places(system, path="C:\\x\\MIOpen.dll") == ["explicit path argument: C:\\x\\MIOpen.dll"]


def test_bare_override_on_windows_searches_path_then_system32() -> None:
    system = FakeSystem(True, {"D:\\b\\MyMIOpen.dll": MIOPEN},
                        env={"HIPDNN_MIOPEN_LIBRARY": "MyMIOpen.dll", "PATH": "D:\\a;D:\\b;;D:\\b"})
    assert places(system) == ["$HIPDNN_MIOPEN_LIBRARY -> PATH folder: D:\\b\\MyMIOpen.dll",
                              f"$HIPDNN_MIOPEN_LIBRARY -> System32: {SYS32}\\MyMIOpen.dll"]
    assert load_first(MIOPEN_SPEC, None, MIOpenNotFoundError, system)[1] == "D:\\b\\MyMIOpen.dll"
    assert system.winmodes == [_discovery.LOAD_WITH_ALTERED_SEARCH_PATH]  # its dependencies: PATH too


def test_bare_override_on_linux_goes_to_the_dynamic_loader() -> None:
    system = FakeSystem(False, env={"HIPDNN_MIOPEN_LIBRARY": "libMIOpen.so.1"})
    (only,) = candidates(MIOPEN_SPEC, None, system)
    assert only == Candidate("$HIPDNN_MIOPEN_LIBRARY", "libMIOpen.so.1", is_path=False)


@pytest.mark.parametrize("windows", [True, False])
def test_override_pointing_at_a_folder_or_nowhere(windows: bool) -> None:
    folder = "C:\\ROCm\\bin" if windows else "/rocm/lib"
    system = FakeSystem(windows, {(ntpath if windows else posixpath).join(folder, "x"): []})
    assert fail(system, path=folder) == [(f"explicit path argument: {folder}",
                                          "is a folder; expected the library file itself "
                                          f"({'MIOpen.dll' if windows else 'libMIOpen.so.1'})")]
    nowhere = folder + ("\\MIOpen.dll" if windows else "/libMIOpen.so.1")
    assert fail(system, path=nowhere + "x") == [(f"explicit path argument: {nowhere}x", "no such file")]


# ----------------------------------------------------------------------------------- rejection
def test_wrong_library_earlier_is_rejected_released_and_reported() -> None:
    system = FakeSystem(True, {"C:\\a\\bin\\MIOpen.dll": NOT_MIOPEN, "C:\\b\\bin\\MIOpen.dll": MIOPEN},
                        env={"ROCM_PATH": "C:\\a", "HIP_PATH": "C:\\b"})
    with pytest.raises(MIOpenNotFoundError):
        load_first(MIOPEN_SPEC, None, MIOpenNotFoundError, FakeSystem(True))
    where = load_first(MIOPEN_SPEC, None, MIOpenNotFoundError, system)[1]
    assert where == "C:\\b\\bin\\MIOpen.dll"
    assert system.opened == ["C:\\a\\bin\\MIOpen.dll", "C:\\b\\bin\\MIOpen.dll"]
    assert system.released == ["C:\\a\\bin\\MIOpen.dll"]  # the wrong one is not kept loaded


def test_therock_layout_adds_core_folder_and_removes_it_when_rejected() -> None:
    core, libs = "C:\\sp\\_rocm_sdk_core\\bin", "C:\\sp\\_rocm_sdk_libraries_gfx110X\\bin"
    layout = {"miopen": [f"{libs}\\MIOpen.dll"], "amdhip64": [f"{core}\\amdhip64_7.dll"]}
    good = FakeSystem(True, {f"{libs}\\MIOpen.dll": [*MIOPEN, "<needs-core>"], f"{core}\\amdhip64_7.dll": HIP},
                      modules={"rocm_sdk": rocm_sdk(layout)})
    assert load_first(MIOPEN_SPEC, None, MIOpenNotFoundError, good)[1] == f"{libs}\\MIOpen.dll"
    assert good.dll_dirs == [core]  # kept while MIOpen.dll is loaded
    _discovery._kept_dll_directories.clear()
    wrong = FakeSystem(True, {f"{libs}\\MIOpen.dll": NOT_MIOPEN, f"{core}\\amdhip64_7.dll": HIP},
                       modules={"rocm_sdk": rocm_sdk(layout)})
    attempts = fail(wrong)
    assert wrong.dll_dirs == [] and wrong.released == [f"{libs}\\MIOpen.dll"]
    assert (f"TheRock wheel (rocm_sdk.find_libraries('miopen')): {libs}\\MIOpen.dll",
            "loaded, but it does not export miopenGetVersion: not the library looked for") in attempts


def test_therock_without_its_core_folder_reports_the_dependency_failure() -> None:
    libs = "C:\\sp\\_rocm_sdk_libraries_gfx110X\\bin"
    broken = {"miopen": [f"{libs}\\MIOpen.dll"]}  # find_libraries('amdhip64') finds nothing
    system = FakeSystem(True, {f"{libs}\\MIOpen.dll": [*MIOPEN, "<needs-core>"]},
                        modules={"rocm_sdk": rocm_sdk(broken)})
    attempts = dict(fail(system))
    assert "or one of its dependencies" in attempts[f"TheRock wheel (rocm_sdk.find_libraries("
                                                   f"'miopen')): {libs}\\MIOpen.dll"]
    assert system.dll_dirs == []


@pytest.mark.parametrize("windows", [True, False])
def test_rocm_sdk_that_raises_is_reported(windows: bool) -> None:
    def find_libraries(name: str) -> list[str]:
        raise RuntimeError(f"no GPU family for {name}")

    system = FakeSystem(windows, modules={"rocm_sdk": types.SimpleNamespace(find_libraries=find_libraries)})
    attempts = dict(fail(system))
    assert attempts["TheRock wheel (rocm_sdk.find_libraries('miopen'))"] == (
        "rocm_sdk.find_libraries raised RuntimeError: no GPU family for miopen")
    broken_import = FakeSystem(windows, modules={"rocm_sdk": ImportError("DLL load failed")})
    assert dict(fail(broken_import))["TheRock wheel (rocm_sdk.find_libraries('miopen'))"] == (
        "rocm_sdk does not import (ImportError: DLL load failed)")


def test_unloadable_and_duplicate_files_are_reported_once() -> None:
    dll = "C:\\r\\bin\\MIOpen.dll"
    system = FakeSystem(True, {dll: ["<unloadable>"]}, env={"ROCM_PATH": "C:\\r", "HIP_PATH": "C:\\r\\",
                                                           "PATH": "C:\\r\\bin"})
    attempts = fail(system)
    assert system.opened == []
    assert (f"$ROCM_PATH=C:\\r: {dll}", f"cannot load {dll}") in attempts
    assert (f"$HIP_PATH=C:\\r: {dll}", "same file as $ROCM_PATH=C:\\r (not tried again)") in attempts
    assert (f"PATH folder: {dll}", "same file as $ROCM_PATH=C:\\r (not tried again)") in attempts


def test_already_loaded_copy_is_taken_by_full_path_only_if_it_exports_the_probe() -> None:
    system = FakeSystem(True, {"E:\\x\\MIOpen.dll": NOT_MIOPEN, "E:\\y\\MIOpen.dll": MIOPEN},
                        loaded=["E:\\x\\MIOpen.dll", "E:\\y\\MIOpen.dll"])
    where = load_first(MIOPEN_SPEC, None, MIOpenNotFoundError, system)[1]
    assert where == "E:\\y\\MIOpen.dll" and system.released == ["E:\\x\\MIOpen.dll"]


# ----------------------------------------------------------------------------------- not found
def test_nothing_found_lists_every_step_and_a_windows_hint() -> None:
    system = FakeSystem(True, env={"PATH": "C:\\a;C:\\b"}, torch_dir="C:\\sp\\torch")
    with pytest.raises(MIOpenNotFoundError) as info:
        load_first(MIOPEN_SPEC, None, MIOpenNotFoundError, system)
    got = [place.split(": ")[0] for place, _ in info.value.attempts]
    assert got == ["already loaded in this process", "TheRock wheel (rocm_sdk.find_libraries('miopen'))",
                   "PyTorch ROCm (torch/lib)", "$ROCM_PATH", "$HIP_PATH",
                   f"AMD ROCm folders {PF}\\AMD\\ROCm\\<X.Y>", "PATH", "System32"]
    reasons = dict(info.value.attempts)
    assert reasons["PATH"] == "no MIOpen.dll in any of its 2 folders"
    assert reasons["already loaded in this process"] == "no MIOpen.dll loaded"
    message = str(info.value).splitlines()
    assert "HIP SDK for Windows ships no MIOpen" in message[-1] and "HIPDNN_MIOPEN_LIBRARY=C:\\" in message[-1]
    assert "ROCM_PATH" not in message[-1]


def test_linux_hint_stays_linux() -> None:
    message = str(MIOpenNotFoundError([("x", "y")], windows=False)).splitlines()[-1]
    assert "HIPDNN_MIOPEN_LIBRARY=/path/to/libMIOpen.so.1" in message and "ROCM_PATH" in message
    hip = str(HipNotFoundError([("x", "y")], windows=True)).splitlines()[-1]
    assert "System32" in hip and "amdhip64_7.dll" in hip


# ----------------------------------------------------------------------------------- the one memo
def test_one_memo_remembers_until_the_environment_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    searches: list[str] = []

    def failing(spec: Any, path: str | None, not_found: Any) -> Any:
        searches.append(spec.env_var)
        raise not_found([("somewhere", "no such file")])

    monkeypatch.setattr(_discovery, "load_first", failing)
    monkeypatch.setattr(_discovery, "_failures", {})
    monkeypatch.delenv("HIP_PATH", raising=False)
    for _ in range(3):
        for spec, error in ((MIOPEN_SPEC, MIOpenNotFoundError), (HIP_SPEC, HipNotFoundError)):
            with pytest.raises(error, match="somewhere"):
                load_remembered(spec, None, error)
    assert searches == ["HIPDNN_MIOPEN_LIBRARY", "HIPDNN_HIP_LIBRARY"]  # one search per library
    monkeypatch.setenv("HIP_PATH", "C:\\ROCm\\7.1")
    with pytest.raises(HipNotFoundError):
        load_remembered(HIP_SPEC, None, HipNotFoundError)
    assert len(searches) == 3
    _discovery.forget_failures()
    with pytest.raises(HipNotFoundError):
        load_remembered(HIP_SPEC, None, HipNotFoundError)
    assert len(searches) == 4
