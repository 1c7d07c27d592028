"""The wheel's contents as pyproject.toml declares them: every package and typing file ships."""

from __future__ import annotations

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
