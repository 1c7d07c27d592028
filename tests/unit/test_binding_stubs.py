"""The generated stub (miopen_ctypes/_functions.pyi) types every bound C function.

It is generated from the prototype tables by tools/gen_binding_stubs.py; these tests keep it fresh
and prove a type checker uses it (a misspelt function or a wrong argument count is an error).
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

from miopen_ctypes import PROTOTYPES, MIOpenLibrary
from miopen_ctypes._functions import HipFunctions, MIOpenFunctions
from miopen_ctypes.hip import HIP_PROTOTYPES, HipLibrary

ROOT = Path(__file__).resolve().parents[2]
STUB = ROOT / "miopen_ctypes" / "_functions.pyi"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_binding_stubs", ROOT / "tools" / "gen_binding_stubs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_stub_is_what_the_generator_writes() -> None:
    assert STUB.read_text() == _generator().render(), "run: python tools/gen_binding_stubs.py"


def test_stub_declares_every_prototype_with_its_arity() -> None:
    tree = ast.parse(STUB.read_text())
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    for cls_name, table in (("MIOpenFunctions", PROTOTYPES), ("HipFunctions", HIP_PROTOTYPES)):
        methods = {f.name: f for f in classes[cls_name].body if isinstance(f, ast.FunctionDef)}
        assert set(methods) == set(table)
        for name, proto in table.items():
            params = [a.arg for a in methods[name].args.posonlyargs][1:]  # minus self
            assert params == list(proto.argnames), name


def test_libraries_have_the_typed_bases_and_still_bind_at_run_time() -> None:
    assert issubclass(MIOpenLibrary, MIOpenFunctions) and issubclass(HipLibrary, HipFunctions)
    lib = MIOpenLibrary.from_functions({"miopenGetErrorString": lambda status: b"boom"})
    assert lib.miopenGetErrorString(3) == b"boom"
    misspelt = "miopenGetErrorStrin"
    with pytest.raises(AttributeError, match=misspelt):
        getattr(lib, misspelt)


def test_mypy_rejects_a_misspelt_function_and_a_wrong_arity(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api", reason="mypy is in the test extra; the floors/windows lanes run without it")
    snippet = tmp_path / "uses_binding.py"
    snippet.write_text(
        "from miopen_ctypes import MIOpenLibrary\n"
        "from miopen_ctypes.hip import HipLibrary\n"
        "def f(lib: MIOpenLibrary, hip: HipLibrary) -> None:\n"
        "    lib.miopenCreat(None)\n"
        "    lib.miopenCreate()\n"
        "    hip.hipMemcpy(0, 0, 4)\n"
        "    text: int = lib.miopenGetErrorString(3)\n"
        "    lib.miopenCreate(None)\n"
    )
    out, _, status = api.run([str(snippet), "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
                              "--python-executable", sys.executable])
    assert status == 1, out
    assert 'has no attribute "miopenCreat"' in out
    assert 'Too few arguments for "miopenCreate"' in out
    assert 'Too few arguments for "hipMemcpy"' in out
    assert 'expression has type "bytes"' in out
    assert out.count("error:") == 4, out  # the last, correct call type-checks
