"""hipdnn_frontend's ``Graph``: upstream's methods over one native :class:`hipdnn.Graph`.

>>> import hipdnn.frontend as hipdnn
>>> g = hipdnn.Graph().set_name("relu").set_io_data_type(hipdnn.DataType.FLOAT)
>>> x = hipdnn.Tensor.create([1, 2, 2, 2], hipdnn.DataType.FLOAT)
>>> y = g.pointwise(x, hipdnn.PointwiseAttributes().set_mode(hipdnn.PointwiseMode.RELU_FWD))
>>> y.set_output(True) is y, g.validate().is_good(), g.native.nodes[0].op
(True, True, 'pointwise')
"""

from __future__ import annotations

from hipdnn.engines.base import ExecutionPlan
from hipdnn.frontend._autotune import GraphAutotune
from hipdnn.frontend._errors import Error
from hipdnn.frontend._graph_build import GraphBuild
from hipdnn.frontend._graph_run import GraphRun
from hipdnn.graph import Graph as NativeGraph

__all__ = ["Graph"]


class Graph(GraphBuild, GraphRun, GraphAutotune):
    """A hipDNN graph spelled as AMD's ``hipdnn_frontend`` spells it: attribute objects for
    ops, ``Error`` returns from the pipeline steps, ``execute(handle, variant_pack,
    workspace)``. ``graph.native`` is the :class:`hipdnn.Graph` holding the tensors, nodes and
    plans, usable with the native API at any time.
    """

    def __init__(self) -> None:
        self._native = NativeGraph(name="")
        self._deferred: list[Error] = []
        self._op_graph = False
        self._plans_created = False
        self._order: list[ExecutionPlan] = []
        self._preferred: int | None = None
        self._deselected: list[str | int] = []
        self._workspace_cap: int | None = None
        self._specs: list[tuple[int, dict[str, object]]] = []

    def __repr__(self) -> str:
        return f"<hipdnn.frontend.Graph {self._native.name!r}: {len(self._native.nodes)} node(s), " \
               f"{len(self._order)} plan(s) built>"
