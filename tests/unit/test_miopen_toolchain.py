"""tools/miopen_toolchain.py without building anything: the compiler wrapper and the bind list."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import miopen_toolchain


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX sh")
def test_wrapper_drops_only_the_isystem_usr_include_pair(tmp_path: Path) -> None:
    wrapper = tmp_path / "clang++-21"
    wrapper.write_text(miopen_toolchain._WRAPPER.format(real="printf '%s|'"))
    wrapper.chmod(0o755)
    args = ["-O3", "-isystem", "/usr/include", "-isystem", "/opt/x y", "-x", "hip",
            "--offload-arch=gfx90a", "-isystem", "/usr/include", "a b.cpp"]
    out = subprocess.run(["sh", str(wrapper), *args], capture_output=True, text=True, check=True)
    assert out.stdout.split("|")[:-1] == ["-O3", "-isystem", "/opt/x y", "-x", "hip",
                                          "--offload-arch=gfx90a", "a b.cpp"]


def test_bind_list_has_the_checkout_and_interpreter_parents_first() -> None:
    paths = miopen_toolchain._host_paths(["/tmp"])
    repo = os.path.realpath(Path(__file__).resolve().parents[2])
    assert any(repo == p or repo.startswith(p + "/") for p in paths)
    assert os.path.realpath(sys.prefix) in paths or any(
        os.path.realpath(sys.prefix).startswith(p + "/") for p in paths)
    assert not set(paths) & set(miopen_toolchain._SYSTEM_DIRS)
    assert [len(p) for p in paths] == sorted(len(p) for p in paths)  # parents mount first


def test_unknown_version_is_a_typed_error() -> None:
    with pytest.raises(miopen_toolchain.ToolchainUnavailable, match=r"known: \['6\.4\.3'\]"):
        miopen_toolchain.ensure_toolchain("9.9.9")
