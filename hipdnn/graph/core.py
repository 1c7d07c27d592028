"""GraphCore: a graph's tensors and nodes, and the primitives the op builders add them with.

:class:`hipdnn.graph.graph.Graph` is a ``GraphCore``; the op builders (:mod:`hipdnn.graph.ops`,
:mod:`hipdnn.graph.ops_math`) subclass it, so what they use of the graph (``tensor``,
``_add_node``, ``_output``, ``_node_name``) is typed by inheritance. Every edit calls
:meth:`GraphCore._changed`, which the Graph implements (its planner forgets the old plans).

>>> import hipdnn
>>> g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT)
>>> x = g.tensor(dim=[1, 2, 3, 3], name="x")
>>> y = g.relu(x)
>>> [n.name for n in g.nodes], y.name, len(g.all_tensors)
(['relu_fwd_0'], 'relu_fwd_0::OUT_0', 2)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hipdnn.core.errors import ArgumentError, ValidationError
from hipdnn.core.shapes import packed_strides
from hipdnn.core.types import DataType
from hipdnn.interop.buffers import resolve
from hipdnn.ir.nodes.base import Node, check_tensor
from hipdnn.ir.tensor import Tensor, not_a_tensor_hint

__all__ = ["GraphCore"]


class GraphCore:
    """The tensors and nodes of a graph (base of :class:`hipdnn.graph.graph.Graph`).

    State, set up here: ``nodes`` (in the order added), ``all_tensors`` (every tensor the graph
    made, in order), ``tensors`` (uid -> tensor, filled by validation).
    """

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.all_tensors: list[Tensor] = []
        self.tensors: dict[int, Tensor] = {}
        #: output tensors made by :meth:`_output` for the node being built; they join
        #: ``all_tensors`` only with their node, so an op call that raises adds nothing
        self._pending_outputs: list[Tensor] = []

    def _changed(self) -> None:
        """Called by every edit of the graph, its tensors and nodes. The Graph implements it
        (hipdnn.graph.graph.Graph._changed): the plans and bindings of the old graph become stale."""
        raise NotImplementedError

    # -- tensors -------------------------------------------------------------------------------
    def tensor(
        self,
        dim: Iterable[int] | None = None,
        stride: Iterable[int] | None = None,
        data_type: Any = DataType.NOT_SET,
        is_virtual: bool = False,
        is_pass_by_value: bool = False,
        name: str = "",
        uid: int | None = None,
        value: float | None = None,
        **cudnn_only: Any,
    ) -> Tensor:
        """A new tensor of this graph. Without ``stride`` it is packed channel-first (NCHW).

        ``value`` bakes the value of a pass-by-value scalar. cudnn-frontend's ``ragged_offset``
        and ``reordering_type`` are accepted only at their defaults.

        Parameters
        ----------
        dim : sequence of int, optional
            The logical dims, N, C, (D), H, W.
        stride : sequence of int, optional
            The strides in elements (default: packed in the dims' order).
        data_type : DataType, optional
            The element type (default: the graph's io or intermediate data type).
        is_virtual : bool, optional
            True for a graph-internal tensor (no memory in the variant pack).
        is_pass_by_value : bool, optional
            True for a host scalar given by value.
        name : str, optional
            The tensor's name (default ``"tensor_<n>"``).
        uid : int, optional
            The tensor's uid (default: assigned at validation).
        value : float, optional
            The scalar's value, baked into the graph (None: given in the variant pack).
        **cudnn_only
            cudnn-frontend's keywords ``ragged_offset`` and ``reordering_type``, accepted at
            their defaults only.

        Returns
        -------
        Tensor
            The new graph tensor.
        """
        for key, val in cudnn_only.items():
            if key not in ("ragged_offset", "reordering_type"):
                raise ArgumentError(f"tensor() got an unexpected keyword argument {key!r}; "
                                    f"valid: dim, stride, data_type, is_virtual, "
                                    f"is_pass_by_value, name, uid, value")
            if val not in (None, 0) and getattr(val, "name", "NONE") != "NONE":
                raise ValidationError(f"{key} is not supported", tensor=name or None)
        t = Tensor(dim, stride, data_type, name=name or f"tensor_{len(self.all_tensors)}",
                   uid=uid, is_virtual=is_virtual,
                   is_pass_by_value=is_pass_by_value or value is not None,
                   value=value, graph=self)
        check_tensor(t)
        if t.dim is not None and t.stride is None:
            t._stride = packed_strides(t.dim)
        self.all_tensors.append(t)
        return t

    def tensor_like(self, input: Any, name: str = "") -> Tensor:
        """A tensor with the dims, strides and dtype of ``input`` (cudnn-frontend's argument name).

        ``input`` is a :class:`Tensor` (copied, fresh uid), a numpy array, a torch tensor, or any
        ``__dlpack__`` / ``__cuda_array_interface__`` / ``__array_interface__`` object. As in
        cudnn-frontend, a one-element host object becomes a pass-by-value scalar. A reversed
        numpy view (``a[..., ::-1]``, ``np.flip``) gives the same strides made positive: the
        same memory order, as graph strides cannot be negative (its values are still read
        through the view's own strides).

        Parameters
        ----------
        input : array or Tensor
            A framework tensor or array (its dims, strides and dtype), or a graph tensor to copy.
        name : str, optional
            The tensor's name.

        Returns
        -------
        Tensor
            The new graph tensor.
        """
        if isinstance(input, Tensor):
            return self.tensor(input.dim, input.stride, input.data_type, input.is_virtual,
                               input.is_pass_by_value, name or input.name, value=input.value)

        buf = resolve(input, default_device="cpu")
        if buf.shape is None or buf.dtype is None:
            raise ValidationError(f"tensor_like() needs an object that reveals shape and dtype; "
                                  f"a {type(input).__name__} does not", tensor=name or None)
        shape = tuple(buf.shape)
        strides = (tuple(abs(s) for s in buf.strides) if buf.strides is not None
                   else packed_strides(shape))
        numel = 1
        for d in shape:
            numel *= d
        scalar = buf.device == "cpu" and numel == 1 and buf.scalar is None
        return self.tensor(shape or (1,), strides or (1,), buf.dtype, False, scalar, name)

    def _add_node(self, node: Node) -> Node:
        """Append ``node`` (its inputs must be tensors of this graph) and infer its outputs."""
        pending, self._pending_outputs = self._pending_outputs, []
        for port, t in node.inputs.items():
            if t is None:
                continue
            if not isinstance(t, Tensor):
                raise ValidationError(not_a_tensor_hint(t), node=node.name, port=port)
            if t._graph is not self:
                raise ValidationError("tensor belongs to another graph", node=node.name,
                                      port=port, tensor=t.name)
        node.infer()
        outputs = {id(t) for t in node.outputs.values() if t is not None}
        self.all_tensors.extend(t for t in pending if id(t) in outputs)
        self.nodes.append(node)
        self._changed()
        return node

    def _output(self, node_name: str, port: str) -> Tensor:
        """A new virtual tensor ``"<node>::<PORT>"`` for a node's output port; it joins the
        graph with its node in :meth:`_add_node` (never, when the op call raises first)."""
        t = Tensor(name=f"{node_name}::{port}", is_virtual=True, graph=self)
        self._pending_outputs.append(t)
        return t

    def _node_name(self, name: str, op: str) -> str:
        """``name``, or ``"<op>_<n>"`` with the first ``n`` no node of the graph uses."""
        if name:
            return str(name)
        taken = {n.name for n in self.nodes}
        i = len(self.nodes)
        while f"{op}_{i}" in taken:
            i += 1
        return f"{op}_{i}"
