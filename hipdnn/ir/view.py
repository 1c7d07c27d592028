"""GraphView: the immutable, validated view of a graph that engines receive.

Engines (:mod:`hipdnn.backend.engine`) are given a ``GraphView`` in ``check_support``,
``get_knobs`` and ``build_plan``, never the mutable :class:`~hipdnn.graph.graph.Graph`: its fields
cannot be reassigned (``FrozenInstanceError``, an ``AttributeError``), ``nodes`` is a tuple and
``tensors`` a read-only mapping. All three calls get the view of one validated private copy of
the graph per operation-graph key (``Planner._view`` in :mod:`hipdnn.pipeline.planner`), so an
engine never holds the user's nodes and tensors, and a plan, cached and shared by every graph
of the same structure, never sees later edits of the graph it was built from. The freezing is
one level deep: the ``Node`` and ``Tensor`` objects in a view are ordinary mutable objects of
that private copy, which engines must only read (every engine and plan given the copy shares
them).

>>> import hipdnn
>>> g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT)
>>> y = g.relu(g.tensor(dim=[1, 2, 3, 3], name="x"), name="r").set_output(True)
>>> view = GraphView.of(g.validate())
>>> [n.name for n in view.nodes], sorted(view.tensors) == sorted(g.tensors)
(['r'], True)
>>> view.nodes = ()
Traceback (most recent call last):
...
dataclasses.FrozenInstanceError: cannot assign to field 'nodes'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hipdnn.ir.nodes.base import Node
    from hipdnn.ir.tensor import Tensor

__all__ = ["GraphView"]


@dataclasses.dataclass(frozen=True)
class GraphView:
    """What an engine may read of a validated graph: its name, nodes in topological order, and
    its tensors by uid (every tensor has its uid, dims, strides and data type filled in)."""

    name: str
    nodes: tuple[Node, ...]
    tensors: Mapping[int, Tensor]

    @classmethod
    def of(cls, graph: Any) -> GraphView:
        """The view of ``graph`` (validated already: its ``tensors`` are filled by validation)."""
        return cls(graph.name, tuple(graph.nodes), MappingProxyType(dict(graph.tensors)))
