"""The adversarial catalog's execute-time cases on conv and batchnorm graphs, run with
MIOPEN_ENGINE on the emulated device (MIOpen 3.4 and 3.5): the same typed errors naming the
culprit, and every sentinel-filled output untouched, as on CPU_REFERENCE_ENGINE
(tests/adversarial/test_catalog.py). The test checks that MIOPEN_ENGINE built the plans."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any

import pytest

import hipdnn

_CATALOG = str(Path(__file__).resolve().parent.parent / "adversarial")
if _CATALOG not in sys.path:
    sys.path.insert(0, _CATALOG)

import cases_exec  # noqa: E402,F401  (registers its cases)
from _catalog import CASES, Case, Outputs  # noqa: E402

_PREFIXES = ("variant_pack/bn_", "variant_pack/conv_", "variant_pack/epsilon_at_execute_",
             "variant_pack/pass_by_value_")
SELECTED = [c for c in CASES if c.name.startswith(_PREFIXES)]


def test_selection_is_not_empty() -> None:
    assert len(SELECTED) >= 15


@pytest.mark.parametrize("case", SELECTED, ids=[c.name for c in SELECTED])
def test_case_on_miopen_engine(case: Case, emulated_miopen_engine: Any,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    real = type(emulated_miopen_engine).build_plan

    def counting(self: Any, graph: Any, knobs: Any, handle: Any) -> Any:
        built.append(graph.name)
        return real(self, graph, knobs, handle)

    monkeypatch.setattr(type(emulated_miopen_engine), "build_plan", counting)
    hipdnn.clear_plan_cache()
    out = Outputs()
    with pytest.raises(case.exc) as info:
        case.run(out)
    assert isinstance(info.value, hipdnn.HipdnnError)
    for culprit in case.culprit:
        assert culprit in str(info.value), f"{culprit!r} not named in: {info.value}"
    out.check()
    assert built, "MIOPEN_ENGINE built no plan: the case ran on another engine"
    del info
    gc.collect()  # the cases' graphs (and the plans they hold) go with this test
    hipdnn.clear_plan_cache()
