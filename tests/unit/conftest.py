"""Fixtures shared by the unit tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hipdnn.backend import engine as base
from hipdnn.engines import register, registry, unregister


@pytest.fixture
def reference_only() -> Iterator[None]:
    """The MIOpen engines out of the registry for the test (plans come from the reference engine)."""
    names = ("MIOPEN_ENGINE", "MIOPEN_ENGINE_DETERMINISTIC")
    previous = [registry().get(base.fnv1a_64(n)) for n in names]
    for n in names:
        unregister(n)
    try:
        yield
    finally:
        for engine in previous:
            if engine is not None:
                register(engine)
