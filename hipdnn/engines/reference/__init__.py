"""CPU_REFERENCE_ENGINE: every graph of the hipdnn API on the CPU with numpy (see kernels.py)."""

from __future__ import annotations

__all__: list[str] = []
