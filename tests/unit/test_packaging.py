"""The wheel's contents as pyproject.toml declares them: every package and typing file ships."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is Python >= 3.11; other lanes cover it")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_package_directory_is_declared() -> None:
    declared = set(_pyproject()["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("miopen_ctypes", "hipdnn")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert found == declared, f"missing from pyproject: {sorted(found - declared)}; " \
        f"declared but absent: {sorted(declared - found)}"


def test_typing_files_ship() -> None:
    data = _pyproject()["tool"]["setuptools"]["package-data"]
    for package in ("miopen_ctypes", "hipdnn"):
        assert "py.typed" in data[package] and (ROOT / package / "py.typed").exists()
    assert "_functions.pyi" in data["miopen_ctypes"]
    assert (ROOT / "miopen_ctypes" / "_functions.pyi").exists()


def test_wheel_contains_every_package(tmp_path: Path) -> None:
    """A wheel built from a copy of the sources holds every declared package, including
    hipdnn.frontend (AMD hipdnn_frontend's API), and the typing files."""
    pytest.importorskip("setuptools", reason="setuptools is in the test extra")
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for package in ("hipdnn", "miopen_ctypes"):
        shutil.copytree(ROOT / package, src / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(out), str(src)], check=True,
                   capture_output=True, text=True, timeout=300)
    (wheel,) = out.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for package in _pyproject()["tool"]["setuptools"]["packages"]:
        assert f"{package.replace('.', '/')}/__init__.py" in names, package
    assert "hipdnn/frontend/_graph.py" in names and "hipdnn/py.typed" in names
