"""HIP runtime binding (in progress: prototypes and HipLibrary follow in the next commit)."""

from __future__ import annotations

__all__: list[str] = []
