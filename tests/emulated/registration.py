"""An engine registered for the length of a test, the registry as it was afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

from hipdnn.backend.engine import Engine
from hipdnn.backend.registry import register, registry, unregister

__all__ = ["registered"]

E = TypeVar("E", bound=Engine)


@contextmanager
def registered(engine: E) -> Iterator[E]:
    """Register ``engine`` for the block; afterwards the engine its id had before (or none)."""
    previous = registry().get(engine.engine_id)
    register(engine)
    try:
        yield engine
    finally:
        if previous is not None:
            register(previous)
        else:
            unregister(engine)
