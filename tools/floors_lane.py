#!/usr/bin/env python3
"""The ``floors`` test lane: ``tests/unit`` with the LOWEST version of every runtime dependency.

Test infrastructure only (never part of the package); run by ``python tools/run_tests.py`` (lane
``floors``) or directly. Each ``name>=X`` of pyproject.toml's ``[project] dependencies`` becomes
``name==X`` in a venv of this interpreter (cached under ``<cache>/../floors/py3X-<hash>``, next to
the MIOpen sysroots of tools/miopen_sysroot.py), with the test extra's pytest, hypothesis,
setuptools and wheel at their current versions; torch (large, and an interop extra) is left
out, so the torch tests skip there (``HIPDNN_REQUIRE_TORCH`` is unset for this lane: the main lane
requires them), and so is numba (an optional extra: ``HIPDNN_REQUIRE_JIT`` is unset too, and the
reference batchnorm runs its numpy passes). The tests import the package from the checkout.

    python tools/floors_lane.py              # tests/unit with the floors
    python tools/floors_lane.py -- -x -q tests/unit/test_interop_dlpack.py   # no tests/... path: + tests/unit
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import venv
from collections.abc import Sequence
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the copy pip vendors
    from pip._vendor import tomli as tomllib  # type: ignore[no-redef]

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from miopen_sysroot import cache_dir

__all__ = ["floor_requirements", "main"]

REPO = Path(__file__).resolve().parent.parent
#: Test tools taken from the ``test`` extra (torch, ruff, mypy and libclang are left out).
TEST_TOOLS = ("pytest", "hypothesis", "setuptools", "wheel")
_FLOOR = re.compile(r"^\s*([A-Za-z0-9._-]+)\s*>=\s*([^,;\s]+)\s*$")


def log(msg: str) -> None:
    print(f"[floors_lane] {msg}", flush=True)


def _project() -> dict[str, object]:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]  # type: ignore[no-any-return]


def floor_requirements() -> list[str]:
    """``name==X`` for every runtime dependency ``name>=X``; any other form is an error."""
    out = []
    for req in _project()["dependencies"]:  # type: ignore[attr-defined]
        match = _FLOOR.match(req)
        if not match:
            raise ValueError(f"dependency {req!r} has no single '>=' floor to test")
        out.append(f"{match.group(1)}=={match.group(2)}")
    return out


def _test_tools() -> list[str]:
    extra = _project()["optional-dependencies"]["test"]  # type: ignore[index]
    return [r for r in extra if re.split(r"[<>=!~;\s\[]", r, maxsplit=1)[0].lower() in TEST_TOOLS]


def _normal(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", requirement.split("==")[0]).lower()


def ensure_venv() -> Path:
    """The cached venv with the floors installed; its python."""
    reqs = floor_requirements() + _test_tools()
    tag = hashlib.sha256("\n".join(reqs).encode()).hexdigest()[:12]
    root = cache_dir().parent / "floors" / f"py{sys.version_info[0]}{sys.version_info[1]}-{tag}"
    python = root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if (root / ".complete").exists():
        return python
    log(f"creating {root}: {' '.join(reqs)}")
    venv.create(root, clear=True, with_pip=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    "--only-binary=:all:", *reqs], check=True)
    (root / ".complete").write_text("\n".join(reqs), encoding="utf-8")
    return python


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--"]:
        args = args[1:]
    python = ensure_venv()
    shown = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze",
                            "--disable-pip-version-check"], capture_output=True, text=True, check=False)
    names = {_normal(r) for r in floor_requirements()}
    log("installed: " + " ".join(ln for ln in shown.stdout.split() if _normal(ln) in names))
    env = {k: v for k, v in os.environ.items()
           if k not in ("HIPDNN_REQUIRE_TORCH", "HIPDNN_REQUIRE_JIT", "HIPDNN_REQUIRE_ONEDNN",
                         "PYTHONPATH")}
    env["HIPDNN_LANE"] = "floors"  # tests/skip_allowlist.py: the skips this lane may have in CI
    cmd = [str(python), "-m", "pytest", "-p", "no:cacheprovider", *args,
           *([] if any(a.startswith("tests") for a in args) else ["tests/unit"])]
    return subprocess.run(cmd, cwd=REPO, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
