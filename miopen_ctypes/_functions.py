"""Bases that give ``MIOpenLibrary`` and ``HipLibrary`` their typed C functions.

At run time these classes are empty: ``BoundLibrary`` puts each bound function in the instance's
``__dict__``. Type checkers read ``_functions.pyi`` instead, generated from the prototype tables
by ``tools/gen_binding_stubs.py``, where every function is declared with its arguments.
"""

from __future__ import annotations

__all__ = ["HipFunctions", "MIOpenFunctions"]


class MIOpenFunctions:
    """MIOpen's C API as bound by MIOpenLibrary (declared in _functions.pyi)."""


class HipFunctions:
    """The HIP runtime calls bound by HipLibrary (declared in _functions.pyi)."""
