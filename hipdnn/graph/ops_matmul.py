"""The matmul builder of :class:`hipdnn.Graph`, with cudnn-frontend's name, keywords and return
value. No MIOpen seed row has it: CPU_REFERENCE_ENGINE runs it (MIOPEN_ENGINE declines the
graph, saying so).

>>> import numpy as np, hipdnn as cudnn
>>> g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
>>> a = g.tensor(dim=[1, 2, 3], name="a")
>>> b = g.tensor(dim=[1, 3, 2], name="b")
>>> c = g.matmul(A=a, B=b, compute_data_type=cudnn.data_type.FLOAT, name="mm")
>>> _ = c.set_output(True); _ = g.build()
>>> out = np.empty((1, 2, 2), np.float32)
>>> g.execute({a: np.arange(6, dtype=np.float32).reshape(1, 2, 3),
...            b: np.ones((1, 3, 2), np.float32), c: out})
>>> out[0].tolist()
[[3.0, 3.0], [12.0, 12.0]]
"""

from __future__ import annotations

import math
from typing import Any

from hipdnn.core.errors import ValidationError
from hipdnn.core.types import DataType
from hipdnn.graph.ops import GraphOps
from hipdnn.ir.nodes import MatmulNode
from hipdnn.ir.tensor import Tensor, not_a_tensor_hint

__all__ = ["MatmulOps"]


class MatmulOps(GraphOps):
    """Matrix multiplication of :class:`hipdnn.Graph`."""

    def matmul(self, A: Tensor, B: Tensor, compute_data_type: Any = DataType.NOT_SET,
               padding: float = 0.0, name: str = "") -> Tensor:
        """C = A @ B over the last two axes (A (..., M, K), B (..., K, N) of the same rank; a
        batch dim of 1 broadcasts); returns C (..., M, N), row-major. ``padding`` (cuDNN's
        padding value for ragged M/N/K overrides) is accepted only as 0.0: the overrides are
        not implemented.

        Parameters
        ----------
        A : Tensor
            The left operand, (..., M, K).
        B : Tensor
            The right operand, (..., K, N); batch dims equal or 1 (broadcast).
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        padding : float, optional
            cudnn-frontend's padding value of a ragged matmul; only 0.0 is supported.
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        name = self._node_name(name, "matmul")
        for port, t in (("A", A), ("B", B)):
            if not isinstance(t, Tensor):
                raise ValidationError(not_a_tensor_hint(t), node=name, port=port)
        if (isinstance(padding, bool) or not isinstance(padding, (int, float))
                or not math.isfinite(padding) or padding != 0.0):
            raise ValidationError(f"padding={padding!r} is not supported: the padding value "
                                  f"applies to ragged M/N/K overrides, which hipDNN does not "
                                  f"implement; valid: 0.0", node=name)
        c = self._output(name, "C")
        self._add_node(MatmulNode(name, compute_data_type, A=A, B=B, C=c))
        return c
