"""miopen_ctypes.spellings against the real miopen.h (3.4.0 and 3.5.1): the C type name
:func:`~miopen_ctypes.spellings.c_type_name` gives each parameter of each bound function (shown in
hipdnn.direct's argument errors) is the header's own spelling, ``const`` left out. ctypes itself
cannot tell an enum from ``unsigned int`` or ``size_t`` from ``uint64_t``, so without
HEADER_SPELLINGS these would differ."""

from __future__ import annotations

from typing import Any

import pytest

from miopen_ctypes.prototypes import PROTOTYPES
from miopen_ctypes.spellings import HEADER_SPELLINGS, c_type_name


def _without_const(spelling: str) -> str:
    words = [w for w in spelling.replace("*", " * ").split() if w != "const"]
    return " ".join(words).replace(" *", "*")


@pytest.mark.parametrize("version", ["6.4.3", "7.2.4"])
def test_every_parameter_is_spelled_as_the_header_does(headers: dict[str, Any], version: str) -> None:
    declared = headers[version].arg_spellings
    checked, wrong = 0, []
    for function, spellings in sorted(declared.items()):
        if function not in PROTOTYPES:
            continue
        for index, spelling in enumerate(spellings):
            checked += 1
            want, got = _without_const(spelling), c_type_name(function, index)
            if want != got:
                wrong.append(f"{function}({PROTOTYPES[function].argnames[index]}): header {want!r}, "
                             f"c_type_name {got!r}")
    assert checked > 1500 and not wrong, "\n".join(wrong[:40])


def test_the_table_names_only_real_parameters() -> None:
    for function, own in HEADER_SPELLINGS.items():
        assert set(own) <= set(PROTOTYPES[function].argnames), function
