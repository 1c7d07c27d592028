"""miopen_ctypes discovery: lazy import, the search order, and the not-found report."""

from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import miopen_ctypes
from miopen_ctypes import _discovery, loader
from miopen_ctypes._discovery import LibrarySpec, candidates, load_first
from miopen_ctypes.errors import MIOpenNotFoundError

REPO = Path(__file__).resolve().parents[2]
WINDOWS = sys.platform == "win32"


def stand_in_library() -> tuple[str, str]:
    """A library that is surely there and is not MIOpen, by full path, and a symbol it exports."""
    if WINDOWS:  # the C runtime, loaded in every python.exe
        return os.path.join(os.environ.get("SystemRoot", "C:\\Windows"), "System32", "ucrtbase.dll"), "strlen"
    libc = ctypes.util.find_library("c")
    assert libc
    return libc, "printf"

BOGUS = LibrarySpec(
    env_var="HIPDNN_TEST_BOGUS_LIBRARY",
    linux_names=("libhipdnnNoSuchLibrary.so.1",),
    windows_names=("hipdnnNoSuchLibrary.dll",),
    maps_marker="libhipdnnNoSuchLibrary",
    rocm_sdk_name="nosuch",
    probe_symbol="nosuch_symbol",
)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for var in ("HIPDNN_MIOPEN_LIBRARY", "HIPDNN_TEST_BOGUS_LIBRARY", "ROCM_PATH", "HIP_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setitem(sys.modules, "rocm_sdk", None)  # "not installed"
    _discovery.forget_failures()
    return monkeypatch


def test_import_does_not_load_any_native_library() -> None:
    code = (
        "import miopen_ctypes, hipdnn, sys\n"
        "maps = open('/proc/self/maps').read() if sys.platform == 'linux' else ''\n"
        "assert 'libMIOpen' not in maps and 'amdhip64' not in maps, 'loaded at import'\n"
        "print(len(miopen_ctypes.PROTOTYPES))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "HIPDNN_MIOPEN_LIBRARY": "/nonexistent/libMIOpen.so.1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) >= 95


def test_not_found_lists_every_place_tried(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("ROCM_PATH", str(tmp_path / "rocm"))
    clean_env.setenv("HIP_PATH", str(tmp_path / "hip"))
    with pytest.raises(MIOpenNotFoundError) as info:
        load_first(BOGUS, None, MIOpenNotFoundError)
    places = [place for place, _ in info.value.attempts]
    joined = "\n".join(places)
    assert f"$ROCM_PATH={tmp_path / 'rocm'}" in joined
    assert f"$HIP_PATH={tmp_path / 'hip'}" in joined
    last = ("System32", "AMD ROCm folder") if WINDOWS else ("system dynamic loader search", "default ROCm prefix")
    assert places[-1].startswith(last[0])
    # ordered: already loaded, TheRock, torch, ROCM_PATH, HIP_PATH, default/versioned prefix, last
    order = [next(i for i, p in enumerate(places) if p.startswith(key)) for key in
             ("already loaded", "TheRock wheel", "PyTorch ROCm", "$ROCM_PATH", "$HIP_PATH", *last[::-1])]
    assert order == sorted(order)
    message = str(info.value)
    assert "HIPDNN_MIOPEN_LIBRARY=" in message and "no such file" in message
    assert all(reason for _, reason in info.value.attempts)


def test_not_found_also_names_the_places_that_had_nothing(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.delenv("ROCM_PATH", raising=False)
    clean_env.delenv("HIP_PATH", raising=False)
    clean_env.setitem(sys.modules, "rocm_sdk", None)  # makes `import rocm_sdk` fail
    with pytest.raises(MIOpenNotFoundError) as info:
        load_first(BOGUS, None, MIOpenNotFoundError)
    attempts = dict(info.value.attempts)
    assert attempts["$ROCM_PATH"] == "not set" and attempts["$HIP_PATH"] == "not set"
    assert any(place.startswith("TheRock wheel") and reason.startswith("rocm_sdk does not import")
               for place, reason in info.value.attempts)
    word = "loaded" if WINDOWS else "mapped"
    assert any(place.startswith("already loaded in this process") and word in reason
               for place, reason in info.value.attempts)
    assert "$ROCM_PATH: not set" in str(info.value)


def test_env_override_is_exclusive_and_reported(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    missing = tmp_path / "libMIOpen.so.1"
    clean_env.setenv("HIPDNN_MIOPEN_LIBRARY", str(missing))
    assert [c.place for c in candidates(loader.MIOPEN_SPEC)] == ["$HIPDNN_MIOPEN_LIBRARY"]
    with pytest.raises(MIOpenNotFoundError) as info:
        miopen_ctypes.load()
    assert info.value.attempts == [(f"$HIPDNN_MIOPEN_LIBRARY: {missing}", "no such file")]


def test_explicit_path_wins_over_env(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("HIPDNN_MIOPEN_LIBRARY", "/elsewhere/libMIOpen.so.1")
    found = candidates(loader.MIOPEN_SPEC, tmp_path / "mine.so")
    assert [(c.place, c.target) for c in found] == [("explicit path argument", str(tmp_path / "mine.so"))]


def test_a_library_that_is_not_miopen_is_refused(clean_env: pytest.MonkeyPatch) -> None:
    other, _ = stand_in_library()
    clean_env.setenv("HIPDNN_MIOPEN_LIBRARY", other)
    with pytest.raises(MIOpenNotFoundError, match="does not export miopenGetVersion"):
        load_first(loader.MIOPEN_SPEC, None, MIOpenNotFoundError)


def test_a_folder_where_the_file_belongs_is_refused(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("HIPDNN_MIOPEN_LIBRARY", str(tmp_path))
    with pytest.raises(MIOpenNotFoundError) as info:
        miopen_ctypes.load()
    (place, reason), = info.value.attempts
    assert place == f"$HIPDNN_MIOPEN_LIBRARY: {tmp_path}" and reason.startswith("is a folder")


def test_unloadable_file_reports_the_loader_error(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    junk = tmp_path / "libMIOpen.so.1"
    junk.write_bytes(b"not an ELF file")
    with pytest.raises(MIOpenNotFoundError) as info:
        load_first(loader.MIOPEN_SPEC, junk, MIOpenNotFoundError)
    (place, reason), = info.value.attempts
    assert place == f"explicit path argument: {junk}" and reason != "no such file"


def test_already_loaded_copy_is_found_first_by_its_full_path(clean_env: pytest.MonkeyPatch) -> None:
    path, symbol = stand_in_library()
    base = os.path.basename(path)
    spec = LibrarySpec("HIPDNN_TEST_BOGUS_LIBRARY", ("libc.so.6",), (base,), "libc.so", "c", symbol)
    found = candidates(spec)
    assert found[0].place == "already loaded in this process"
    lib, where = load_first(spec, None, MIOpenNotFoundError)
    assert os.path.isabs(where) and hasattr(lib, symbol)
    assert os.path.basename(where).lower().startswith(base.split(".")[0].lower())


def test_rocm_sdk_wheels_are_consulted(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    wheel_lib = tmp_path / "site-packages" / "_rocm_sdk_libraries" / "lib" / "libMIOpen.so.1"
    asked: list[str] = []

    def find_libraries(*names: str) -> list[Path]:
        asked.extend(names)
        return [wheel_lib]

    clean_env.setitem(sys.modules, "rocm_sdk", types.SimpleNamespace(find_libraries=find_libraries))
    found = candidates(loader.MIOPEN_SPEC)
    # on Windows the HIP runtime is asked for too: its folder holds MIOpen.dll's dependencies
    assert asked == (["miopen", "amdhip64"] if WINDOWS else ["miopen"])
    wheel = [c for c in found if c.target == str(wheel_lib)]
    assert wheel and "TheRock wheel" in wheel[0].place
    assert found.index(wheel[0]) < next(i for i, c in enumerate(found) if c.place == "$ROCM_PATH")


def test_rocm_sdk_failure_is_reported_not_raised(clean_env: pytest.MonkeyPatch) -> None:
    def find_libraries(*names: str) -> list[Path]:
        raise ModuleNotFoundError("rocm-sdk-libraries not installed")

    clean_env.setitem(sys.modules, "rocm_sdk", types.SimpleNamespace(find_libraries=find_libraries))
    with pytest.raises(MIOpenNotFoundError) as info:
        load_first(BOGUS, None, MIOpenNotFoundError)
    assert any(place.startswith("TheRock wheel") and "rocm-sdk-libraries not installed" in reason
               for place, reason in info.value.attempts)


def test_load_is_cached_per_path(clean_env: pytest.MonkeyPatch) -> None:
    other, _ = stand_in_library()
    opened: list[str | None] = []

    def fake_load_first(spec: LibrarySpec, path: str | None, not_found: object) -> tuple[ctypes.CDLL, str]:
        opened.append(path)
        return ctypes.CDLL(other), other

    clean_env.setattr(_discovery, "load_first", fake_load_first)
    clean_env.setattr(loader, "_cache", {})
    first = miopen_ctypes.load()
    assert miopen_ctypes.load() is first and opened == [None]
    assert first.capabilities.version == (0, 0, 0) and not first.capabilities.symbols
    with pytest.raises(miopen_ctypes.MIOpenVersionError, match="miopenCreate requires"):
        first.miopenCreate(None)
