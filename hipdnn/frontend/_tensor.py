"""hipdnn_frontend's ``Tensor``: the native :class:`hipdnn.Tensor` plus upstream's extras.

Upstream tensors exist before any graph (``Tensor.create(dims, data_type)``) and join the graph
of the first op that uses them; the graph's ops return tensors of this class too. Every object
is a native Tensor, so the same tensor works with both APIs.

>>> t = Tensor.create([2, 3, 4], DataType.FLOAT)
>>> t.get_stride(), t.get_volume(), t.has_uid()
([12, 4, 1], 24, False)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hipdnn.core.errors import HipdnnError
from hipdnn.core.shapes import packed_strides
from hipdnn.core.types import DataType
from hipdnn.frontend._errors import Error, ErrorCode, error_from
from hipdnn.ir.nodes.base import check_tensor
from hipdnn.ir.tensor import Tensor as NativeTensor

__all__ = ["Tensor", "as_frontend_tensor"]


class Tensor(NativeTensor):
    """A graph tensor with hipdnn_frontend's ``create``, ``has_uid``, ``get_volume``,
    ``validate`` and ``set_value(value, data_type=None)``."""

    __slots__ = ()

    @classmethod
    def create(cls, dims: Iterable[int], data_type: Any) -> Tensor:
        """A tensor with ``dims``, packed row-major (NCHW order) strides and ``data_type``.

        Parameters
        ----------
        dims : sequence of int
            The dims; the strides are packed row-major (NCHW order).
        data_type : DataType
            The element type.

        Returns
        -------
        Tensor
            This tensor (calls chain).
        """
        dim = list(dims)
        return cls(dim, packed_strides(dim) if dim else [], data_type)

    def has_uid(self) -> bool:
        """True once a uid was set or assigned (by validate).

        Returns
        -------
        bool
            True once a uid was set or assigned (by validate).
        """
        return self.uid is not None

    def get_volume(self) -> int:
        """Number of elements: the product of the dims (1 for no dims).

        Returns
        -------
        int
            Number of elements.
        """
        n = 1
        for d in self.dim or ():
            n *= d
        return n

    def validate(self) -> Error:
        """Dims and strides set, consistent and positive; a data type set.

        Returns
        -------
        Error
            ``ErrorCode.OK``, or the failure's code and message (upstream's convention: the call
            does not raise).
        """
        if not self.dim:
            return Error(ErrorCode.ATTRIBUTE_NOT_SET, f"tensor {self.name!r}: dims are not set")
        if not self.stride:
            return Error(ErrorCode.ATTRIBUTE_NOT_SET,
                         f"tensor {self.name!r}: strides are not set")
        if self.data_type == DataType.NOT_SET:
            return Error(ErrorCode.ATTRIBUTE_NOT_SET,
                         f"tensor {self.name!r}: data type is not set")
        try:
            check_tensor(self)
        except HipdnnError as exc:
            return error_from(exc)
        return Error()

    def set_value(self, value: float | None, data_type: Any = None) -> Tensor:
        """Bake a compile-time scalar, as upstream does: the tensor becomes a one-element
        pass-by-value tensor (dims and strides [1]) of ``data_type``, else its own data type,
        else BOOLEAN / INT64 / FLOAT for a Python bool / int / float.

        Parameters
        ----------
        value : float, optional
            The scalar's value, baked into the graph (None: given in the variant pack).
        data_type : DataType, optional
            The scalar's element type (default: unchanged).

        Returns
        -------
        Tensor
            This tensor (calls chain).
        """
        if value is None:
            super().set_value(None)
            return self
        if data_type is not None:
            self.set_data_type(data_type)
        elif self.data_type == DataType.NOT_SET:
            self.set_data_type(DataType.BOOLEAN if isinstance(value, bool) else
                               DataType.INT64 if isinstance(value, int) else DataType.FLOAT)
        super().set_value(value)
        self.set_is_pass_by_value(True)
        self.set_dim([1]).set_stride([1])
        return self


def as_frontend_tensor(t: NativeTensor) -> Tensor:
    """``t`` itself, now answering to the frontend methods (the object and its graph are kept:
    the class adds methods only, no fields)."""
    if not isinstance(t, Tensor):
        t.__class__ = Tensor
    return t  # type: ignore[return-value]
