"""hipdnn_frontend's ``Graph``: upstream's methods over one native :class:`hipdnn.Graph`.

>>> import hipdnn.frontend as hipdnn
>>> g = hipdnn.Graph().set_name("relu").set_io_data_type(hipdnn.DataType.FLOAT)
>>> x = hipdnn.Tensor.create([1, 2, 2, 2], hipdnn.DataType.FLOAT)
>>> y = g.pointwise(x, hipdnn.PointwiseAttributes().set_mode(hipdnn.PointwiseMode.RELU_FWD))
>>> y.set_output(True) is y, g.validate().is_good(), g.native.nodes[0].op
(True, True, 'pointwise')
"""

from __future__ import annotations

from hipdnn.frontend._autotune import GraphAutotune

__all__ = ["Graph"]


class Graph(GraphAutotune):
    """A hipDNN graph spelled as AMD's ``hipdnn_frontend`` spells it: attribute objects for
    ops, ``Error`` returns from the pipeline steps, ``execute(handle, variant_pack,
    workspace)``. ``graph.native`` is the :class:`hipdnn.Graph` holding the tensors, nodes and
    plans, usable with the native API at any time.
    """

    def __repr__(self) -> str:
        return f"<hipdnn.frontend.Graph {self._native.name!r}: {len(self._native.nodes)} node(s), " \
               f"{len(self._order)} plan(s) built>"
