"""GraphData: what the IR layer reads of a graph.

:class:`hipdnn.Graph` is one; validation, serialization and the pictures are written against this
Protocol, not against ``Graph``, so the IR never imports the layer above it (the graph builder).
"""

from __future__ import annotations

from typing import Protocol

from hipdnn.core.types import DataType
from hipdnn.ir.nodes.base import Node
from hipdnn.ir.tensor import Tensor

__all__ = ["GraphData"]


class GraphData(Protocol):
    """A graph's settings, nodes and tensors, as the IR reads them."""

    name: str
    io_data_type: DataType
    intermediate_data_type: DataType
    compute_data_type: DataType
    #: the nodes in the order added
    nodes: list[Node]
    #: every tensor the graph made, in order
    all_tensors: list[Tensor]
    #: uid -> tensor, filled by validation
    tensors: dict[int, Tensor]

    def _changed(self) -> None: ...
