"""Every docstring example in the package runs and prints what it says.

The examples are documentation; one that drifted from the code (the
reference engine's ``genstats`` printed another array's sums) misleads the
reader who copies it.  Modules are imported by name, so this also catches an
example whose module no longer imports.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil

import pytest

import hipdnn
import miopen_ctypes


def _modules() -> list[str]:
    names = []
    for pkg in (miopen_ctypes, hipdnn):
        names.append(pkg.__name__)
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            names.append(info.name)
    return sorted(names)


def _has_examples(name: str) -> bool:
    spec = importlib.util.find_spec(name)
    origin = spec.origin if spec else None
    if not origin or not origin.endswith(".py"):
        return False
    with open(origin, encoding="utf-8") as f:
        return ">>> " in f.read()


MODULES = [m for m in _modules() if _has_examples(m)]


def test_examples_are_found() -> None:
    # The docstring examples live in at least these modules; an empty list
    # would make the test below vacuous.
    for name in ("hipdnn.interop.buffers", "hipdnn.engines.reference._stats", "hipdnn.graph.graph"):
        assert name in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} docstring example(s) in {name} failed"
