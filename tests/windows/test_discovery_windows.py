"""MIOpen.dll and amdhip64_N.dll discovery with real Windows DLLs, one fresh python.exe each.

Layouts imitate the real ones (miopen_ctypes/_discovery.py's docstring and README "Windows"):
an explicit override, TheRock's wheels (MIOpen.dll in ``_rocm_sdk_libraries_<family>\\bin``,
its dependency ``amdhip64_7.dll`` in ``_rocm_sdk_core\\bin``), a folder on PATH, the versioned
``AMD\\ROCm\\<X.Y>`` folders, a copy already loaded, the driver's System32. The good stand-in's
patch number (42042) comes from the HIP stand-in it imports, so it proves the dependency loaded.
"""

from __future__ import annotations

from pathlib import Path

from win_scenarios import Standins, run_scenario

GOOD_VERSION = [3, 5, 42042]  # miopenGetVersion of good\MIOpen.dll through hip7\amdhip64_7.dll
NOT_MIOPEN = "loaded, but it does not export miopenGetVersion: not the library looked for"

ROCM_SDK = """
from pathlib import Path
HERE = Path(__file__).resolve().parent.parent
LAYOUT = {{"miopen": HERE / "_rocm_sdk_libraries_gfx110X" / "bin" / "MIOpen.dll",
          "amdhip64": HERE / "_rocm_sdk_core" / "bin" / "amdhip64_7.dll"}}


def find_libraries(*names):
    {body}
"""


def therock(root: Path, standins: Standins, miopen: str = "good", body: str = "") -> dict[str, str]:
    """A site-packages folder laid out like TheRock's wheels, with a small ``rocm_sdk``."""
    site = root / "site-packages"
    standins.place(miopen, site / "_rocm_sdk_libraries_gfx110X" / "bin")
    standins.place("hip7", site / "_rocm_sdk_core" / "bin")
    # a DLL only findable while _rocm_sdk_core\bin is on the DLL search path
    standins.place("wrong", site / "_rocm_sdk_core" / "bin", "hipdnn_marker.dll")
    (site / "rocm_sdk").mkdir()
    body = body or "return [LAYOUT[n] for n in names if LAYOUT[n].exists()]"
    (site / "rocm_sdk" / "__init__.py").write_text(ROCM_SDK.format(body=body), encoding="utf-8")
    return {"PYTHONPATH": str(site)}


#: Whether _rocm_sdk_core\bin is still on the DLL search path: a bare name resolves only there.
CORE_DIR_ON_SEARCH_PATH = """
try:
    ctypes.CDLL("hipdnn_marker.dll"); extra = True
except OSError:
    extra = False
"""


def test_override_with_its_dependency_beside_it(standins: Standins, tmp_path: Path,
                                                 no_rocm: dict[str, str]) -> None:
    dll = standins.place("good", tmp_path / "bin")
    standins.place("hip7", tmp_path / "bin")
    got = run_scenario({**no_rocm, "HIPDNN_MIOPEN_LIBRARY": f'"{dll}"'})  # quotes are ignored
    assert (got.path, got.version) == (str(dll), GOOD_VERSION)


def test_override_whose_dependency_is_missing_says_so(standins: Standins, tmp_path: Path,
                                                      no_rocm: dict[str, str]) -> None:
    dll = standins.place("good", tmp_path / "alone")
    got = run_scenario({**no_rocm, "HIPDNN_MIOPEN_LIBRARY": str(dll)})
    assert got.error == "MIOpenNotFoundError" and len(got.attempts) == 1  # the override is exclusive
    assert "one of its dependencies" in got.reason("$HIPDNN_MIOPEN_LIBRARY")


def test_override_pointing_at_a_folder_or_nowhere(standins: Standins, tmp_path: Path,
                                                  no_rocm: dict[str, str]) -> None:
    got = run_scenario({**no_rocm, "HIPDNN_MIOPEN_LIBRARY": str(tmp_path)})
    assert got.reason("$HIPDNN_MIOPEN_LIBRARY").startswith("is a folder")
    got = run_scenario({**no_rocm, "HIPDNN_MIOPEN_LIBRARY": str(tmp_path / "MIOpen.dll")})
    assert got.attempts == [[f"$HIPDNN_MIOPEN_LIBRARY: {tmp_path / 'MIOpen.dll'}", "no such file"]]


def test_wrong_dll_under_miopens_name_is_rejected_reported_and_unloaded(
        standins: Standins, tmp_path: Path, no_rocm: dict[str, str]) -> None:
    wrong = standins.place("wrong", tmp_path / "w")
    got = run_scenario({**no_rocm, "HIPDNN_MIOPEN_LIBRARY": str(wrong)}, check_loaded=(str(wrong),))
    assert got.error == "MIOpenNotFoundError"
    assert got.attempts == [[f"$HIPDNN_MIOPEN_LIBRARY: {wrong}", NOT_MIOPEN]]
    assert got.loaded == {str(wrong): False}  # released, not left in the process


def test_therock_layout_finds_miopen_and_its_dependencies_in_the_core_folder(
        standins: Standins, tmp_path: Path, no_rocm: dict[str, str]) -> None:
    env = {**no_rocm, **therock(tmp_path, standins)}
    got = run_scenario(env, after=CORE_DIR_ON_SEARCH_PATH)
    site = tmp_path / "site-packages"
    assert got.path == str(site / "_rocm_sdk_libraries_gfx110X" / "bin" / "MIOpen.dll")
    assert got.version == GOOD_VERSION and got.extra is True  # core folder kept while loaded
    hip = run_scenario(env, library="hip")
    assert hip.path == str(site / "_rocm_sdk_core" / "bin" / "amdhip64_7.dll")
    assert hip.version == [7, 2, 42042]


def test_therock_wrong_dll_leaves_nothing_behind(standins: Standins, tmp_path: Path,
                                                 no_rocm: dict[str, str]) -> None:
    env = {**no_rocm, **therock(tmp_path, standins, miopen="wrong")}
    wrong = tmp_path / "site-packages" / "_rocm_sdk_libraries_gfx110X" / "bin" / "MIOpen.dll"
    good = standins.place("good", tmp_path / "hip" / "bin")
    standins.place("hip7", tmp_path / "hip" / "bin")
    env["HIP_PATH"] = str(tmp_path / "hip") + "\\"  # a trailing separator, as the HIP SDK sets it
    got = run_scenario(env, after=CORE_DIR_ON_SEARCH_PATH, check_loaded=(str(wrong),))
    assert got.path == str(good) and got.version == GOOD_VERSION
    assert got.loaded == {str(wrong): False}  # the rejected DLL was released
    assert got.extra is False  # and _rocm_sdk_core\bin is off the DLL search path again


def test_rocm_sdk_that_raises_gives_the_typed_error(standins: Standins, tmp_path: Path,
                                                    no_rocm: dict[str, str]) -> None:
    env = {**no_rocm, **therock(tmp_path, standins, body='raise RuntimeError("no GPU family")')}
    got = run_scenario(env)
    assert got.error == "MIOpenNotFoundError"
    assert got.reason("TheRock wheel") == "rocm_sdk.find_libraries raised RuntimeError: no GPU family"


def test_path_folders_are_searched_with_dependencies_on_path(standins: Standins, tmp_path: Path,
                                                             no_rocm: dict[str, str]) -> None:
    import os

    dll = standins.place("good", tmp_path / "p2")
    standins.place("hip7", tmp_path / "p3")  # the dependency in yet another PATH folder
    (tmp_path / "p1").mkdir()
    path = os.pathsep.join([os.environ.get("PATH", ""), *(str(tmp_path / p) for p in ("p1", "p2", "p3"))])
    got = run_scenario({**no_rocm, "PATH": path})
    assert (got.path, got.version) == (str(dll), GOOD_VERSION)


def test_versioned_rocm_folders_newest_first_wrong_one_rejected(standins: Standins,
                                                                tmp_path: Path) -> None:
    amd = tmp_path / "pf" / "AMD" / "ROCm"
    wrong = standins.place("wrong", amd / "7.1" / "bin")
    env = {"ProgramFiles": str(tmp_path / "pf")}
    got = run_scenario(env)  # only the wrong one: rejected, and reported
    assert got.reason(f"AMD ROCm folder={amd / '7.1'}") == NOT_MIOPEN
    good = standins.place("good", amd / "6.4" / "bin")
    standins.place("hip7", amd / "6.4" / "bin")
    (amd / "latest").mkdir()  # not a version: ignored
    got = run_scenario(env, check_loaded=(str(wrong),))
    assert (got.path, got.version) == (str(good), GOOD_VERSION)
    assert got.loaded == {str(wrong): False}  # 7.1 was tried first, rejected and released


def test_already_loaded_copy_wins_by_full_path_and_is_kept_alive(standins: Standins, tmp_path: Path,
                                                                 no_rocm: dict[str, str]) -> None:
    mine = standins.place("good", tmp_path / "mine")
    standins.place("hip7", tmp_path / "mine")
    standins.place("good", tmp_path / "hip" / "bin")
    standins.place("hip7", tmp_path / "hip" / "bin")
    preload = f"theirs = ctypes.CDLL(r'{mine}')  # e.g. what `import torch` does with PyTorch ROCm\n"
    drop_theirs = "import _ctypes\n_ctypes.FreeLibrary(theirs._handle)\n"  # ours must keep it loaded
    got = run_scenario({**no_rocm, "HIP_PATH": str(tmp_path / "hip")}, setup=preload,
                       after=drop_theirs, check_loaded=(str(mine),))
    assert (got.path, got.version) == (str(mine), GOOD_VERSION)
    assert got.loaded == {str(mine): True}


def test_hip_runtime_from_system32_newest_name_first(standins: Standins, tmp_path: Path,
                                                     no_rocm: dict[str, str]) -> None:
    system32 = tmp_path / "Windows" / "System32"
    six = standins.place("hip6", system32)
    setup = f"os.environ['SystemRoot'] = r'{tmp_path / 'Windows'}'\n"  # after start-up: only ours sees it
    got = run_scenario(no_rocm, library="hip", setup=setup)
    assert (got.path, got.version) == (str(six), [6, 4, 43210])
    seven = standins.place("hip7", system32)
    got = run_scenario(no_rocm, library="hip", setup=setup)
    assert got.path == str(seven)


def test_nothing_found_lists_every_place_in_order_with_windows_advice(
        standins: Standins, no_rocm: dict[str, str]) -> None:
    got = run_scenario(no_rocm)
    assert got.error == "MIOpenNotFoundError"
    places = [place.split(": ")[0] for place, _ in got.attempts]
    steps = ["already loaded in this process", "TheRock wheel", "PyTorch ROCm", "$ROCM_PATH",
             "$HIP_PATH", "AMD ROCm folders", "PATH", "System32"]
    firsts = [next(i for i, p in enumerate(places) if p.startswith(step)) for step in steps]
    assert firsts == sorted(firsts) and places[-1] == "System32"
    assert all(reason for _, reason in got.attempts)
    assert "HIP SDK for Windows ships no MIOpen" in got.hint and "HIPDNN_MIOPEN_LIBRARY=C:\\" in got.hint
    hip = run_scenario(no_rocm, library="hip")
    assert hip.error == "HipNotFoundError" and "System32" in hip.hint
