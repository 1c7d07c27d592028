"""The permanent adversarial catalog (issue 9): every case is a named bad input; each must raise
its typed error (a HipdnnError subclass) naming the culprit, and leave every sentinel-filled
output untouched. Cases live in cases_*.py; the machinery in _catalog.py."""

from __future__ import annotations

import collections

import cases_exec  # noqa: F401  (registers its cases)
import cases_graph  # noqa: F401
import cases_misc  # noqa: F401
import pytest
from _catalog import CASES, Case, Outputs

import hipdnn


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case: Case) -> None:
    out = Outputs()
    with pytest.raises(case.exc) as info:
        case.run(out)
    assert isinstance(info.value, hipdnn.HipdnnError), type(info.value).__mro__
    message = str(info.value)
    for culprit in case.culprit:
        assert culprit in message, f"{culprit!r} not named in: {message}"
    out.check()


def test_catalog_size_and_names() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))
    per = collections.Counter(c.category for c in CASES)
    assert len(CASES) >= 250, per
    for category in ("dims", "strides", "conv", "batchnorm", "pointwise", "variant_pack",
                     "workspace", "knobs", "json", "lifecycle"):
        assert per[category] >= 8, (category, per)
