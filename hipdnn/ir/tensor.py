"""Tensor: cudnn-frontend's tensor attributes (dims, strides, dtype, uid, name, virtuality).

Dims are logical N, C, (D,) H, W; the memory layout is expressed only by strides (in elements).
Tensors are created by a graph (``graph.tensor(...)``, ``graph.tensor_like(...)``) or returned by
its ops. Setters return the tensor, so they chain::

    y = graph.conv_fprop(x, w, padding=[1, 1])
    y.set_output(True).set_data_type(hipdnn.DataType.HALF).set_name("y")
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from hipdnn.core.errors import ArgumentError, ValidationError
from hipdnn.core.types import (
    DataType,
    TensorReordering,
    to_data_type,
    to_enum,
    to_int,
    to_int_tuple,
)

__all__ = ["Producer", "Tensor", "TensorOwner", "not_a_tensor_hint"]


class TensorOwner(Protocol):
    """What a tensor needs of the graph that made it (:class:`hipdnn.Graph` is one): to be told
    that an edit changed it."""

    def _changed(self) -> None: ...


class Producer(Protocol):
    """What the IR reads of the node that outputs a tensor (every :class:`~hipdnn.ir.nodes.base.Node`
    is one)."""

    name: str
    outputs: dict[str, Tensor | None]

    def default_output_type(self, port: str) -> DataType | None: ...


_INTS = frozenset({int})


def _int_tuple(values: Iterable[Any] | None, what: str, name: str) -> tuple[int, ...] | None:
    if values is None:
        return None
    if type(values) in (tuple, list) and _INTS.issuperset(map(type, values)):
        return tuple(values)  # plain ints: what to_int_tuple returns, without its per-item checks
    return to_int_tuple(values, what, tensor=name or "<unnamed>")


def _uid(uid: Any, name: str) -> int | None:
    """None or a negative int: unassigned (cudnn-frontend's -1); else an integer uid."""
    if uid is None:
        return None
    value = to_int(uid, "uid", tensor=name or "<unnamed>")
    return None if value < 0 else value


def _float(value: Any, what: str, name: str) -> float | None:
    if value is None:
        return None
    try:
        if isinstance(value, (str, bytes)):
            raise TypeError
        return float(value)
    except (TypeError, ValueError):
        raise ValidationError(f"{what}: {value!r} is not a number; {what} takes a float or "
                              f"None", tensor=name or "<unnamed>") from None


def _bool(value: Any, what: str, name: str) -> bool:
    """A flag: bool, numpy bool, or the ints 0 and 1; anything else (e.g. the str "false",
    which bool() would take as True) is an ArgumentError naming the flag."""
    numpy_bool = type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")
    if isinstance(value, bool) or numpy_bool or (type(value) is int and value in (0, 1)):
        return bool(value)
    raise ArgumentError(f"{what}: {value!r:.40} ({type(value).__name__}) is not a flag; valid: "
                        f"True or False", tensor=name or "<unnamed>")


def _dtype(value: Any, name: str) -> DataType:
    try:
        return to_data_type(value)
    except ValidationError as exc:
        raise ValidationError(str(exc), tensor=name or "<unnamed>") from None


class Tensor:
    """A graph tensor. Its fields read plainly; assigning one (``t.dim = ...``) is the matching
    ``set_*``, and cudnn-frontend's get_*/set_* work too.

    ``dim``/``stride`` are tuples or None when not yet known; ``data_type`` is NOT_SET until the
    graph fills it from its io/intermediate types at ``validate()``; ``uid`` is None until set
    or assigned at ``validate()``. ``value`` is the baked value of a pass-by-value scalar.

    Every ``set_*`` (and ``clear_uid``, and assigning a field) of a tensor whose graph was built invalidates the
    graph's plans: execute, bind, existing bindings and plan queries raise
    :class:`~hipdnn.core.errors.GraphChangedError` until ``graph.build()`` runs again.
    """

    __slots__ = (
        "_data_type", "_dim", "_dim_inferred", "_dtype_inferred", "_graph", "_is_pass_by_value",
        "_is_virtual", "_name", "_producer", "_stride", "_stride_inferred", "_uid", "_value",
    )

    def __init__(
        self,
        dim: Iterable[int] | None = None,
        stride: Iterable[int] | None = None,
        data_type: Any = DataType.NOT_SET,
        *,
        name: str = "",
        uid: int | None = None,
        is_virtual: bool = False,
        is_pass_by_value: bool = False,
        value: float | None = None,
        graph: TensorOwner | None = None,
    ) -> None:
        self._name: str = str(name or "")
        self._dim: tuple[int, ...] | None = _int_tuple(dim, "dim", self._name)
        self._stride: tuple[int, ...] | None = _int_tuple(stride, "stride", self._name)
        self._data_type: DataType = _dtype(data_type, self._name)
        self._uid: int | None = _uid(uid, self._name)
        self._is_virtual: bool = _bool(is_virtual, "is_virtual", name)
        self._is_pass_by_value: bool = _bool(is_pass_by_value, "is_pass_by_value", name)
        self._value: float | None = _float(value, "value", self._name)
        self._graph = graph
        self._producer: Producer | None = None
        self._dim_inferred = False
        self._stride_inferred = False
        self._dtype_inferred = False

    # -- the fields: reading is plain; assigning is the matching set_* (checked, and it
    # invalidates a built graph's plans, as every setter does). Validation's own inference
    # writes the private fields (``_dim`` ...), which changes nothing the user set.
    @property
    def dim(self) -> tuple[int, ...] | None:
        """Logical dims N, C, (D,) H, W, or None when not known yet; assigning is :meth:`set_dim`."""
        return self._dim

    @dim.setter
    def dim(self, dim: Iterable[int] | None) -> None:
        self.set_dim(dim)

    @property
    def stride(self) -> tuple[int, ...] | None:
        """Strides in elements, or None when not known yet; assigning is :meth:`set_stride`."""
        return self._stride

    @stride.setter
    def stride(self, stride: Iterable[int] | None) -> None:
        self.set_stride(stride)

    @property
    def data_type(self) -> DataType:
        """The element type (NOT_SET until validate fills it); assigning is :meth:`set_data_type`."""
        return self._data_type

    @data_type.setter
    def data_type(self, data_type: Any) -> None:
        self.set_data_type(data_type)

    @property
    def uid(self) -> int | None:
        """The variant-pack uid, or None until set or assigned at validate; assigning is
        :meth:`set_uid` (None: :meth:`clear_uid`)."""
        return self._uid

    @uid.setter
    def uid(self, uid: int | None) -> None:
        if uid is None:
            self.clear_uid()
        else:
            self.set_uid(uid)

    @property
    def is_virtual(self) -> bool:
        """True for graph-internal tensors; assigning is :meth:`set_is_virtual`."""
        return self._is_virtual

    @is_virtual.setter
    def is_virtual(self, is_virtual: bool) -> None:
        self.set_is_virtual(is_virtual)

    @property
    def is_pass_by_value(self) -> bool:
        """True for host scalars; assigning is :meth:`set_is_pass_by_value`."""
        return self._is_pass_by_value

    @is_pass_by_value.setter
    def is_pass_by_value(self, is_pass_by_value: bool) -> None:
        self.set_is_pass_by_value(is_pass_by_value)

    @property
    def value(self) -> float | None:
        """The baked scalar of a pass-by-value tensor; assigning is :meth:`set_value`."""
        return self._value

    @value.setter
    def value(self, value: float | None) -> None:
        self.set_value(value)

    @property
    def name(self) -> str:
        """The tensor's name; assigning is :meth:`set_name`."""
        return self._name

    @name.setter
    def name(self, name: str) -> None:
        self.set_name(name)

    # -- cudnn-frontend setters (chainable) -------------------------------------------------
    def set_output(self, is_output: bool = True) -> Tensor:
        """Mark as a graph output (non-virtual) or back to virtual; same as set_is_virtual(not b).

        Parameters
        ----------
        is_output : bool, optional
            True to make the tensor a graph output (non-virtual).

        Returns
        -------
        Tensor
            This tensor (calls chain).
        """
        self._is_virtual = not _bool(is_output, "set_output", self._name)
        self._touch()
        return self

    def set_is_virtual(self, is_virtual: bool) -> Tensor:
        """Virtual tensors live only inside the graph and never appear in the variant pack.

        Parameters
        ----------
        is_virtual : bool
            True for a graph-internal tensor (no memory in the variant pack).

        Returns
        -------
        Tensor
            This tensor (calls chain).
        """
        self._is_virtual = _bool(is_virtual, "is_virtual", self._name)
        self._touch()
        return self

    def set_is_pass_by_value(self, is_pass_by_value: bool) -> Tensor:
        """Pass-by-value tensors are host scalars (epsilon, momentum).

        Parameters
        ----------
        is_pass_by_value : bool
            True for a host scalar given by value.

        Returns
        -------
        Tensor
            This tensor (calls chain).
        """
        self._is_pass_by_value = _bool(is_pass_by_value, "is_pass_by_value", self._name)
        self._touch()
        return self

    def set_data_type(self, data_type: Any) -> Tensor:
        """Set the element type (DataType, name, numpy or torch dtype).

        Parameters
        ----------
        data_type : DataType
            The element type.

        Returns
        -------
        Tensor
            This tensor (calls chain).
        """
        self._data_type = _dtype(data_type, self._name)
        self._dtype_inferred = False
        self._touch()
        return self

    def set_name(self, name: str) -> Tensor:
        """Set the tensor's name.

        Parameters
        ----------
        name : str
            The new name.

        Returns
        -------
        Tensor
            This tensor (calls chain).
        """
        self._name = str(name)
        self._touch()
        return self

    def set_uid(self, uid: int) -> Tensor:
        """Set the unique id used as the variant-pack key.

        Parameters
        ----------
        uid : int
            The uid (unique in the graph).

        Returns
        -------
        Tensor
            This tensor (calls chain).
        """
        self._uid = _uid(uid, self._name)
        self._touch()
        return self

    def clear_uid(self) -> Tensor:
        """Forget the uid (a new one is assigned at validate).

        Returns
        -------
        Tensor
            This tensor (calls chain).
        """
        self._uid = None
        self._touch()
        return self

    def set_dim(self, dim: Iterable[int] | None) -> Tensor:
        """Set the logical dims N, C, (D,) H, W.

        Parameters
        ----------
        dim : sequence of int
            The logical dims, N, C, (D), H, W.

        Returns
        -------
        Tensor
            This tensor (calls chain).
        """
        self._dim = _int_tuple(dim, "dim", self._name)
        self._dim_inferred = False
        self._touch()
        return self

    def set_stride(self, stride: Iterable[int] | None) -> Tensor:
        """Set strides in elements (layout); same length as dim.

        Parameters
        ----------
        stride : sequence of int
            The strides in elements, one per dim.

        Returns
        -------
        Tensor
            This tensor (calls chain).
        """
        self._stride = _int_tuple(stride, "stride", self._name)
        self._stride_inferred = False
        self._touch()
        return self

    def set_value(self, value: float | None) -> Tensor:
        """Bake a scalar value into a pass-by-value tensor (None: take it from the variant pack).

        Parameters
        ----------
        value : float, optional
            The scalar's value, baked into the graph (None: given in the variant pack).

        Returns
        -------
        Tensor
            This tensor (calls chain).
        """
        self._value = _float(value, "value", self._name)
        self._touch()
        return self

    def _touch(self) -> None:
        """Every setter: the owning graph's built plans no longer describe it."""
        if self._graph is not None:
            self._graph._changed()

    # -- cudnn-frontend getters --------------------------------------------------------------
    def get_dim(self) -> list[int]:
        """The dims as a list (empty when unknown).

        Returns
        -------
        list of int
            The dims as a list (empty when unknown).
        """
        return list(self.dim or ())

    def get_stride(self) -> list[int]:
        """The strides as a list (empty when unknown).

        Returns
        -------
        list of int
            The strides as a list (empty when unknown).
        """
        return list(self.stride or ())

    def get_data_type(self) -> DataType:
        """The element type.

        Returns
        -------
        DataType
            The element type.
        """
        return self.data_type

    def get_name(self) -> str:
        """The name.

        Returns
        -------
        str
            The name.
        """
        return self.name

    def get_uid(self) -> int:
        """The uid, or -1 when not assigned yet (as cudnn-frontend).

        Returns
        -------
        int
            The uid, or -1 when not assigned yet (as cudnn-frontend).
        """
        return -1 if self.uid is None else self.uid

    def get_is_virtual(self) -> bool:
        """True for graph-internal tensors.

        Returns
        -------
        bool
            True for graph-internal tensors.
        """
        return self.is_virtual

    def get_is_pass_by_value(self) -> bool:
        """True for host scalars.

        Returns
        -------
        bool
            True for host scalars.
        """
        return self.is_pass_by_value

    def get_value(self) -> float | None:
        """The baked scalar value, if any.

        Returns
        -------
        float or None
            The baked scalar value, if any.
        """
        return self.value

    def get_reordering_type(self) -> TensorReordering:
        """cudnn-frontend's reordering type: always NONE here (see :meth:`set_reordering_type`).

        Returns
        -------
        TensorReordering
            Cudnn-frontend's reordering type.
        """
        return TensorReordering.NONE

    def set_reordering_type(self, reordering_type: Any) -> Tensor:
        """cudnn-frontend's setter: NONE (the default) only; no engine here reads the reordered
        INT8x32 / F16x16 / F8_128x4 layouts, so another value is a ValidationError.

        Parameters
        ----------
        reordering_type : TensorReordering
            cudnn-frontend's reordering type; only NONE is supported.

        Returns
        -------
        Tensor
            This tensor (calls chain).
        """
        value = to_enum(TensorReordering, reordering_type, "reordering_type", tensor=self.name)
        if value != TensorReordering.NONE:
            raise ValidationError(f"reordering_type {value.name} is not supported (no engine "
                                  f"here reads reordered layouts); valid: NONE", tensor=self.name)
        return self

    # -- helpers -----------------------------------------------------------------------------
    @property
    def graph(self) -> TensorOwner | None:
        """The graph that created this tensor (a :class:`hipdnn.Graph`)."""
        return self._graph

    @property
    def producer(self) -> Producer | None:
        """The node whose output this tensor is, if any."""
        return self._producer

    @property
    def ndim(self) -> int:
        """Number of dims (0 when unknown)."""
        return len(self.dim or ())

    def numel(self) -> int:
        """Number of elements (0 when dims are unknown).

        Returns
        -------
        int
            Number of elements (0 when dims are unknown).
        """
        if self.dim is None:
            return 0
        n = 1
        for d in self.dim:
            n *= d
        return n

    def __repr__(self) -> str:
        parts = [f"name={self.name!r}"]
        if self.uid is not None:
            parts.append(f"uid={self.uid}")
        parts.append(f"dim={list(self.dim) if self.dim is not None else None}")
        parts.append(f"stride={list(self.stride) if self.stride is not None else None}")
        parts.append(f"data_type={self.data_type.name}")
        if self.is_virtual:
            parts.append("virtual")
        if self.is_pass_by_value:
            parts.append("pass_by_value" + (f"={self.value!r}" if self.value is not None else ""))
        return f"Tensor({', '.join(parts)})"


def not_a_tensor_hint(obj: object) -> str:
    """Why ``obj`` is not a graph tensor and what to do, for errors of ops given something else:
    a data array (numpy, torch, DLPack) gets the tensor_like/variant-pack hint."""
    module = type(obj).__module__
    kind = type(obj).__name__ if module == "builtins" else f"{module}.{type(obj).__name__}"
    if any(hasattr(obj, a) for a in ("__array_interface__", "__dlpack__",
                                     "__cuda_array_interface__")):
        return (f"expected a hipdnn Tensor, got a {kind} (a data array): ops take graph tensors; "
                f"describe it with t = graph.tensor_like(array) and pass the array itself in "
                f"execute()'s variant pack ({{t: array}})")
    return f"expected a hipdnn Tensor, got {kind}; create it with graph.tensor()/tensor_like()"

