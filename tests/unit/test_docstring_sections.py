"""The public methods of Graph, Tensor and Handle, and those of hipdnn.frontend, document their
parameters and results in numpydoc sections (the way cuda-python's ``cuda.core`` does): a
``Parameters`` section naming every parameter, and a ``Returns`` section unless the method
returns None. The prose above the sections keeps the reasons."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable

import pytest

import hipdnn
import hipdnn.frontend as frontend

CLASSES = (hipdnn.Graph, hipdnn.Tensor, hipdnn.Handle,
           frontend.Graph, frontend.Tensor, frontend.Handle)


def _public_methods() -> list[tuple[str, Callable[..., object]]]:
    found: dict[Callable[..., object], str] = {}
    for cls in CLASSES:
        for name, member in inspect.getmembers(cls):
            if name.startswith("_") or isinstance(member, property) or not callable(member):
                continue
            function = inspect.unwrap(member)
            if hasattr(function, "__code__"):
                found.setdefault(function, f"{cls.__module__}.{cls.__name__}.{name}")
    return sorted(((label, f) for f, label in found.items()), key=lambda item: item[0])


METHODS = _public_methods()


def _section(doc: str, title: str) -> str | None:
    match = re.search(rf"^{title}\n-{{{len(title)}}}\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", doc,
                      re.S | re.M)
    return None if match is None else match.group(1)


@pytest.mark.parametrize(("label", "function"), METHODS, ids=[m[0] for m in METHODS])
def test_public_method_has_numpydoc_sections(label: str, function: Callable[..., object]) -> None:
    doc = inspect.getdoc(function) or ""
    assert doc.strip(), f"{label} has no docstring"
    signature = inspect.signature(function)
    names = [p.name for p in signature.parameters.values() if p.name not in ("self", "cls")]
    if names:
        params = _section(doc, "Parameters")
        assert params is not None, f"{label}: no Parameters section"
        listed = set(re.findall(r"^\**(\w+)(?: :|$)", params, re.M))
        missing = [n for n in names if n not in listed]
        assert not missing, f"{label}: parameters not in its Parameters section: {missing}"
    returns = signature.return_annotation
    if returns not in ("None", None, inspect.Signature.empty):
        assert _section(doc, "Returns") is not None, f"{label}: no Returns section"


def test_the_check_reads_the_sections() -> None:
    def documented(x: int) -> int:
        """Twice ``x``.

        Parameters
        ----------
        x : int
            A number.

        Returns
        -------
        int
            The double.
        """
        return 2 * x

    doc = inspect.getdoc(documented) or ""
    assert _section(doc, "Parameters") == "x : int\n    A number.\n\n"
    assert (_section(doc, "Returns") or "").startswith("int")
    assert _section(doc, "Raises") is None
    assert len(METHODS) > 150  # Graph's op builders are found through their wrappers
