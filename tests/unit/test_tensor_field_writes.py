"""Inside the package, shape/type inference writes a tensor's private fields (``t._dim``), never
the public ones: ``t.dim = ...`` is the setter, which marks a user's edit of a built graph
(docs/INTERNALS.md, "An op"). A source scan keeps new ops to that rule."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "hipdnn"
#: an assignment to another object's public tensor field (``self.<field> =`` is a class's own)
_WRITE = re.compile(r"^\s*(?!self\.)[A-Za-z_][\w\[\]\"'.]*\.(dim|stride|data_type|uid)\s*=[^=]")


def test_no_module_assigns_a_tensor_field_through_its_setter() -> None:
    found = [f"{path.relative_to(PACKAGE.parent)}:{n}: {line.strip()}"
             for path in sorted(PACKAGE.rglob("*.py")) if path.name != "tensor.py"
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if _WRITE.match(line)]
    assert not found, "write the private field (t._dim ...) in inference:\n" + "\n".join(found)


def test_the_scan_sees_such_a_write() -> None:
    assert _WRITE.match("        c.dim = dims")
    assert _WRITE.match('    outs["Y"].stride = packed(d)')
    assert not _WRITE.match("        c._dim = dims")
    assert not _WRITE.match("        self.stride = ints(stride)")
    assert not _WRITE.match("    if t.dim == dims:")
