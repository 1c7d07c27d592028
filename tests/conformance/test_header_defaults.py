"""hipdnn.direct.HEADER_DEFAULTS against the C++ default arguments the real miopen.h declares
(3.4.0 and 3.5.1): Session.call fills trailing parameters left out from that table, so it must
hold exactly the header's defaults, no more and no fewer."""

from __future__ import annotations

import re
from typing import Any

import pytest

from hipdnn.direct import HEADER_DEFAULTS

_CPP = {"nullptr": None, "false": False, "true": True}


def _defaults(text: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for m in re.finditer(r"MIOPEN_EXPORT\s+miopenStatus_t\s+(\w+)\s*\(([^;{]*?)\)\s*;", text, re.S):
        params = re.sub(r"/\*.*?\*/|//[^\n]*", "", m.group(2), flags=re.S).split(",")
        found = {}
        for param in params:
            if "=" in param:
                decl, value = (p.strip() for p in param.split("=", 1))
                found[decl.split()[-1].lstrip("*")] = _CPP.get(value, None if value in _CPP else int(value))
        if found:
            out[m.group(1)] = found
    return out


@pytest.mark.parametrize("version", ["6.4.3", "7.2.4"])
def test_header_defaults_are_the_headers(sysroots: dict[str, Any], version: str) -> None:
    declared = _defaults(sysroots[version].header.read_text())
    assert "miopenKthvalueForward" in declared  # the parse found some
    assert declared == {k: dict(v) for k, v in HEADER_DEFAULTS.items()}
