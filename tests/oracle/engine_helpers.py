"""Helpers for running graphs on CPU_REFERENCE_ENGINE through the public graph API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

import hipdnn
from hipdnn.engines import registry

__all__ = ["REFERENCE", "alloc_like", "run_on_reference"]

REFERENCE = "CPU_REFERENCE_ENGINE"


def alloc_like(t: hipdnn.Tensor, fill: float = 0.0) -> np.ndarray:
    """A numpy array with exactly the tensor's dims, strides and dtype (filled with ``fill``)."""
    from hipdnn.interop.dtypes import dtype_to_numpy

    dt = dtype_to_numpy(t.get_data_type())
    dim, stride = t.get_dim(), t.get_stride()
    size = 1 + sum((d - 1) * s for d, s in zip(dim, stride, strict=True))
    buf = np.full(size, fill, dtype=dt)
    return np.lib.stride_tricks.as_strided(buf, dim, [s * dt.itemsize for s in stride])


def run_on_reference(g: hipdnn.Graph, inputs: Mapping[hipdnn.Tensor, Any],
                     outputs: list[hipdnn.Tensor]) -> list[np.ndarray]:
    """Validate and build ``g`` on the reference engine only, execute, return the outputs."""
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans()
    others = [e.name for e in registry().values() if e.name != REFERENCE]
    g.deselect_engines(others)
    g.check_support()
    g.build_plans()
    assert g.get_plan_name().startswith(REFERENCE), g.get_plan_name()
    outs = [alloc_like(t, np.nan) for t in outputs]
    pack: dict[Any, Any] = dict(inputs)
    pack.update(zip(outputs, outs, strict=True))
    g.execute(pack)
    return outs
