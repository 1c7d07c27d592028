"""Fixtures shared by the unit tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hipdnn.backend import engine as base
from hipdnn.engines import register, registry, unregister


@pytest.fixture
def reference_only() -> Iterator[None]:
    """MIOPEN_ENGINE out of the registry for the test (plans come from the reference engine)."""
    previous = registry().get(base.fnv1a_64("MIOPEN_ENGINE"))
    unregister("MIOPEN_ENGINE")
    try:
        yield
    finally:
        if previous is not None:
            register(previous)
