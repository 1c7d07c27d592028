"""Graph-level validation: wiring, topological order, dtype filling, uids (used by Graph.validate).

Per-node checks (shapes, ranks, channels, attributes) live in the node classes; this module
checks what spans nodes and fills what the graph decides: dtypes from the graph's io /
intermediate / compute types (virtual -> intermediate, FLOAT when unset; else io, as cudnn-frontend does) and uids.

Validation is a pure function of the graph's exact structure, so successful validations are
memoized (:func:`structure_signature` is the memo key): a graph identical to one validated before, names and
types included, gets the recorded result without running the checks again.
"""

from __future__ import annotations

import enum
import itertools
import operator
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from hipdnn.core import types as hipdnn_types
from hipdnn.core.errors import ValidationError
from hipdnn.core.shapes import overlap_free, packed_strides
from hipdnn.core.types import DataType, HeurMode, to_enum
from hipdnn.ir.nodes.base import check_tensor
from hipdnn.ir.tensor import Tensor

if TYPE_CHECKING:
    from hipdnn.ir.graph_data import GraphData
    from hipdnn.ir.nodes.base import Node

__all__ = [
    "ValidatedStructure",
    "check_heur_modes",
    "clear_validation_memo",
    "structure_signature",
    "validate_graph",
    "validate_structure",
]

def check_heur_modes(modes: Any) -> list[HeurMode]:
    """Heuristic modes (one, a list, or None) as HeurMode members; ValidationError otherwise."""
    if modes is None:
        return []
    items = list(modes) if isinstance(modes, Iterable) and not isinstance(modes, str) else [modes]
    return [to_enum(HeurMode, m, "heuristic mode") for m in items]


def _wiring(graph: GraphData) -> list[Tensor]:
    """Check ownership and producers; return the tensors the nodes use, in first-use order."""
    if not graph.nodes:
        raise ValidationError(f"graph {graph.name!r} has no nodes: add an operation (e.g. "
                              f"g.relu(x), g.conv_fprop(x, w)) and mark its result with "
                              f"set_output(True) before validate()/build()")
    produced_by: dict[int, Node] = {}
    position: dict[int, int] = {}
    for i, node in enumerate(graph.nodes):
        for port, t in node.outputs.items():
            if t is None:
                continue
            if id(t) in produced_by:
                raise ValidationError(
                    f"tensor is produced twice: by {produced_by[id(t)].name!r} and by "
                    f"{node.name!r} (each tensor has one producer)", node=node.name, port=port,
                    tensor=t.name)
            produced_by[id(t)] = node
            position[id(t)] = i
            t._producer = node
    used: dict[int, Tensor] = {}
    for i, node in enumerate(graph.nodes):
        for ports in (node.inputs, node.outputs):
            for port, t in ports.items():
                if t is None:
                    if port not in node.OPTIONAL:
                        raise ValidationError("required port is not connected", node=node.name,
                                              port=port)
                    continue
                if t._graph is not graph:
                    raise ValidationError("tensor belongs to another graph", node=node.name,
                                          port=port, tensor=t.name)
                used.setdefault(id(t), t)
        for port, t in node.inputs.items():
            if t is None:
                continue
            if id(t) in position and position[id(t)] >= i:
                raise ValidationError(
                    f"tensor is used before it is defined: produced by "
                    f"{produced_by[id(t)].name!r}, which comes later", node=node.name, port=port,
                    tensor=t.name)
            if id(t) not in position:
                t._producer = None
                if t.is_virtual:
                    raise ValidationError(
                        "virtual input is used before it is defined: no node produces it "
                        "(graph inputs must be non-virtual)", node=node.name, port=port,
                        tensor=t.name)
    for t in graph.all_tensors:
        if t.is_virtual and id(t) not in position and id(t) not in used:
            raise ValidationError("virtual tensor is never produced by any node (mark graph "
                                  "inputs non-virtual, outputs with set_output(True))",
                                  tensor=t.name)
    if graph.nodes and not any(not t.is_virtual for t in used.values() if id(t) in position):
        raise ValidationError(f"graph {graph.name!r} produces no output: mark at least one op "
                              "result with set_output(True)")
    return list(used.values())


def _fill_dtypes(graph: GraphData, tensors: list[Tensor]) -> None:
    def default_for(t: Tensor) -> DataType:
        if t.is_pass_by_value:
            return DataType.FLOAT
        if t._producer is not None:
            for port, out in t._producer.outputs.items():
                if out is t:
                    special = t._producer.default_output_type(port)
                    if special is not None:
                        return special
        if t.is_virtual:
            inter = graph.intermediate_data_type
            return inter if inter != DataType.NOT_SET else DataType.FLOAT
        return graph.io_data_type

    inputs = [t for t in tensors if t._producer is None]
    outputs = [t for node in graph.nodes for t in node.outputs.values() if t is not None]
    for t in (*inputs, *outputs):
        if t.data_type == DataType.NOT_SET or t._dtype_inferred:
            t._data_type = default_for(t)
            t._dtype_inferred = True
        if t.data_type == DataType.NOT_SET:
            kind = "io_data_type"
            where = t._producer.name if t._producer is not None else None
            raise ValidationError(f"data type is not set: call set_data_type(...) or give the "
                                  f"graph an {kind}", node=where, tensor=t.name)
    for node in graph.nodes:
        if node.compute_data_type == DataType.NOT_SET:
            node.compute_data_type = (graph.compute_data_type
                                      if graph.compute_data_type != DataType.NOT_SET
                                      else DataType.FLOAT)


def _assign_uids(graph: GraphData, tensors: list[Tensor]) -> dict[int, Tensor]:
    by_uid: dict[int, Tensor] = {}
    for t in tensors:
        if t.uid is None:
            continue
        other = by_uid.get(t.uid)
        if other is not None:
            raise ValidationError(f"duplicate uid {t.uid}: also used by tensor {other.name!r}",
                                  tensor=t.name)
        by_uid[t.uid] = t
    next_uid = max(by_uid, default=0) + 1
    for t in tensors:
        if t.uid is None:
            t._uid = next_uid
            by_uid[next_uid] = t
            next_uid += 1
    return {t.uid: t for t in tensors if t.uid is not None}


def _validate_full(graph: GraphData) -> dict[int, Tensor]:
    """Run every check; fill dims, strides, dtypes, uids in place; return used tensors by uid."""
    tensors = _wiring(graph)
    for t in tensors:
        check_tensor(t, t._producer.name if t._producer is not None else None)
        if t._producer is None and t.dim is not None and t.stride is None:
            t._stride = packed_strides(t.dim)
    for node in graph.nodes:
        node.infer()
    _fill_dtypes(graph, tensors)
    for node in graph.nodes:
        node.validate()
        _check_compute_type(node)
    for t in tensors:
        if t.dim is None:
            raise ValidationError("dims are not set and cannot be inferred; use set_dim([...])",
                                  node=t._producer.name if t._producer is not None else None,
                                  tensor=t.name)
        if t.value is not None and not t.is_pass_by_value:
            raise ValidationError("a value is set but the tensor is not pass-by-value (the value "
                                  "would be ignored); valid: set_is_pass_by_value(True) for a "
                                  "one-element scalar, or set_value(None)", tensor=t.name)
        if t.is_pass_by_value:
            if t._producer is not None:
                raise ValidationError("an op result cannot be pass-by-value (pass-by-value "
                                      "tensors are host scalar inputs); valid: "
                                      "set_is_pass_by_value(False)", node=t._producer.name,
                                      tensor=t.name)
            if t.dim is not None and any(d != 1 for d in t.dim):
                raise ValidationError(f"a pass-by-value tensor is a host scalar: dims "
                                      f"{list(t.dim)} must all be 1 (one element)",
                                      tensor=t.name)
        if t.stride is not None:
            _check_extent(t)
            if t._producer is not None:
                _check_no_overlap(t)
    return _assign_uids(graph, tensors)


#: Compute types of a node whose data is all floating point (FLOAT_TYPES of ir.nodes.base).
_FLOAT_COMPUTE = (DataType.FLOAT, DataType.HALF, DataType.BFLOAT16, DataType.DOUBLE)


def _check_compute_type(node: Node) -> None:
    """A node on floating-point data computes in a floating-point type: an integer, boolean or
    FP8/FP4 compute_data_type would be ignored by the engines (computed in FP32), so it is
    refused. (Integer data, e.g. INT8 convolution in INT32, is left to the engines.)"""
    if node.compute_data_type in _FLOAT_COMPUTE:
        return
    data = [t.data_type for t in (*node.inputs.values(), *node.outputs.values())
            if t is not None and not t.is_pass_by_value]
    if data and all(d in _FLOAT_COMPUTE for d in data):
        valid = ", ".join(d.name for d in _FLOAT_COMPUTE)
        raise ValidationError(
            f"compute_data_type {node.compute_data_type.name} does not apply to floating-point "
            f"data; valid: {valid} (an integer compute type, e.g. INT32, is for INT8 "
            f"convolution data)", node=node.name)


#: Largest byte extent a tensor may have (signed 64-bit sizes, as MIOpen and numpy use).
MAX_TENSOR_BYTES = 2**63 - 1


def _check_extent(t: Tensor) -> None:
    """The bytes from the tensor's first to its last element must fit in a signed 64-bit size
    (e.g. a stride of 2**62 for FLOAT elements does not)."""
    assert t.dim is not None and t.stride is not None
    span = 1 + sum((d - 1) * s for d, s in zip(t.dim, t.stride, strict=True))
    nbytes = span * max(1, DataType(t.data_type).itemsize)
    if nbytes > MAX_TENSOR_BYTES or max(t.dim) > MAX_TENSOR_BYTES:
        raise ValidationError(
            f"dims {list(t.dim)} with strides {list(t.stride)} span {nbytes} bytes of "
            f"{DataType(t.data_type).name}; valid: at most 2**63 - 1 bytes from the first to "
            f"the last element", node=t._producer.name if t._producer is not None else None,
            tensor=t.name)


def _check_no_overlap(t: Tensor) -> None:
    """An op result (a graph output, or an intermediate the engine keeps in workspace) is
    written element by element: its strides may not map two elements onto one memory element.
    GraphData inputs may (a stride of 0 broadcasts)."""
    assert t.dim is not None and t.stride is not None and t._producer is not None
    if overlap_free(t.dim, t.stride):
        return
    kind = "intermediate" if t.is_virtual else "output"
    raise ValidationError(
        f"{kind} strides {list(t.stride)} for dims {list(t.dim)} make elements overlap (two "
        f"elements would be written to the same memory); an op result may not alias itself: "
        f"sorted by stride, each stride of an axis longer than 1 must be at least the extent "
        f"of the smaller-stride axes, e.g. packed {list(packed_strides(t.dim))}",
        node=t._producer.name, tensor=t.name)


# -- memoized validation ---------------------------------------------------------------------
_NONE = type(None)
_INTS = frozenset({int})
_DTYPES = frozenset({DataType})
_FLOATS = frozenset({float, _NONE})
_SHAPES = frozenset({tuple, _NONE})
_NODE_VALUE_TYPES = frozenset({_NONE, bool, int, float, str, tuple, *(
    v for v in vars(hipdnn_types).values()
    if isinstance(v, type) and issubclass(v, enum.Enum) and v is not enum.Enum)})
_TENSORS_ONLY = frozenset({Tensor})
_PORTS = ("inputs", "outputs")
_is_tuple = tuple.__instancecheck__


#: Per node class: its fields' names (ports excluded), as a tuple and a set of every field, and
#: a getter of their values.
_LAYOUTS: dict[type, tuple[tuple[str, ...], frozenset[str], operator.itemgetter[str]]] = {}


def _layout(node: Node) -> tuple[tuple[str, ...], operator.itemgetter[str]] | None:
    fields = getattr(node, "__dict__", None)
    if type(fields) is not dict:
        return None
    layout = _LAYOUTS.get(type(node))
    if layout is None or fields.keys() != layout[1]:
        names = tuple(k for k in fields if k not in _PORTS)
        if len(names) < 2 or len(names) + 2 != len(fields):  # itemgetter of 2+ gives a tuple
            return None
        layout = (names, frozenset(fields), operator.itemgetter(*names))
        _LAYOUTS.setdefault(type(node), layout)
    return layout[0], layout[2]


def _node_values(node: Node,
                 ) -> tuple[tuple[str, ...], tuple[Any, ...], tuple[type, ...]] | None:
    """The names, values and exact types of the node's own fields except its ports, if every
    value is an immutable plain value (None: not describable)."""
    layout = _layout(node)
    if layout is None:
        return None
    names, getter = layout
    values: tuple[Any, ...] = getter(node.__dict__)
    types = tuple(map(type, values))
    if not _NODE_VALUE_TYPES.issuperset(types):
        return None
    if tuple in types and not _INTS.issuperset(  # exact tuples only (checked just above)
            map(type, itertools.chain.from_iterable(filter(_is_tuple, values)))):
        return None
    return names, values, types


class TensorEntry(NamedTuple):
    """One tensor's part of :func:`structure_signature` (stored as a plain tuple in this order).

    Every ``Tensor`` slot is either one of these fields or listed in
    :data:`NOT_IN_SIGNATURE` with the reason (tests/unit/test_validation_memo_fields.py checks
    it), so a new Tensor field cannot be forgotten and let two different graphs share a memo
    entry.
    """

    name: Any
    dim: Any
    stride: Any
    data_type: Any
    uid: Any
    is_virtual: Any
    is_pass_by_value: Any
    value: Any
    dim_inferred: Any  # Tensor._dim_inferred
    stride_inferred: Any  # Tensor._stride_inferred
    dtype_inferred: Any  # Tensor._dtype_inferred
    owned: Any  # Tensor._graph is the validated graph


#: Tensor slots that are not TensorEntry fields, and why.
NOT_IN_SIGNATURE = {
    "_graph": "described as TensorEntry.owned (whether the validated graph owns the tensor)",
    "_producer": "an output of validation, recorded in ValidatedStructure.producers",
}


def structure_signature(graph: GraphData) -> tuple[Any, ...] | None:
    """An exact, hashable description of everything validation reads and writes, or None.

    Covers the graph's name and data types; per tensor (by position in ``all_tensors``) its
    name, dims, strides, dtype, uid, virtuality, pass-by-value, value (exact bits), the inferred
    flags and whether the graph owns it; per node its class, every field (name, compute type,
    attributes) with its exact type, and its ports as tensor positions. None when the graph
    holds something that cannot be described exactly (a list where a tuple belongs, a float
    dim, a tensor listed twice, a port tensor not in ``all_tensors``...): such a graph is
    always validated in full.
    """
    return _signature(graph, None)


def _signature(graph: GraphData, fields: list[dict[str, Any]] | None) -> tuple[Any, ...] | None:
    """:func:`structure_signature`; appends each node's own fields to ``fields`` if given."""
    name, io = graph.name, graph.io_data_type
    inter, compute = graph.intermediate_data_type, graph.compute_data_type
    if type(name) is not str or not (type(io) is type(inter) is type(compute) is DataType):
        return None
    tensors = graph.all_tensors
    if tensors and not _TENSORS_ONLY.issuperset(map(type, tensors)):
        return None
    index = {id(t): i for i, t in enumerate(tensors)}
    if len(index) != len(tensors):
        return None
    # Names, uids and the flags need no type check: equal values (1 == True == 1.0) behave the
    # same in every check (names only appear in messages, uids are dict keys, flags are tested
    # for truth). Dims, strides, dtypes and values must have their exact types.
    # plain tuples in TensorEntry's field order (building the named tuple costs ~5x more here)
    entries: list[tuple[Any, ...]] = [(t.name, t.dim, t.stride, t.data_type, t.uid, t.is_virtual, t.is_pass_by_value,
                t.value, t._dim_inferred, t._stride_inferred, t._dtype_inferred,
                t._graph is graph) for t in tensors]
    if entries:
        columns = TensorEntry._make(zip(*entries, strict=True))
        dims, strides, dtypes, values = columns.dim, columns.stride, columns.data_type, columns.value
        shapes = dims + strides
        if not (_DTYPES.issuperset(map(type, dtypes)) and _SHAPES.issuperset(map(type, shapes))
                and _INTS.issuperset(map(type, itertools.chain.from_iterable(
                    filter(None, shapes))))):
            return None
        if values.count(None) != len(values):  # exact bits: -0.0 and 0.0 differ
            if not _FLOATS.issuperset(map(type, values)):
                return None
            at_value = TensorEntry._fields.index("value")
            entries = [e if e[at_value] is None else (*e[:at_value], e[at_value].hex(), *e[at_value + 1:])
                       for e in entries]
    index[id(None)] = -1
    at = index.__getitem__
    nsig = []
    for node in graph.nodes:
        described = _node_values(node)
        if described is None:
            return None
        names, values, types = described
        if fields is not None:
            fields.append(dict(zip(names, values, strict=True)))
        ins, outs = node.inputs, node.outputs
        if type(ins) is not dict or type(outs) is not dict:
            return None
        if float in types:
            values = tuple(v.hex() if type(v) is float else v for v in values)
        try:
            ports = (tuple(ins), tuple(map(at, map(id, ins.values()))),
                     tuple(outs), tuple(map(at, map(id, outs.values()))))
        except KeyError:
            return None
        nsig.append((type(node), names, types, values, ports))
    if len({id(n) for n in graph.nodes}) != len(nsig):
        return None
    return (name, io, inter, compute, tuple(entries), tuple(nsig))


class ValidatedStructure:
    """What a successful validation of one exact structure produced (shared by the graphs of
    that structure): every tensor's filled fields, the producers, node fields, uids.

    ``signature`` is :func:`structure_signature` of the validated graph; ``plan_key`` is free
    for the plan pipeline to remember the structure's plan-cache key in.
    """

    __slots__ = ("nodes", "plan_key", "producers", "signature", "uids")

    def __init__(self, graph: GraphData, signature: tuple[Any, ...],
                 tensors: dict[int, Tensor], nodes: list[dict[str, Any]]) -> None:
        position = {id(t): i for i, t in enumerate(graph.all_tensors)}
        node_position = {id(n): j for j, n in enumerate(graph.nodes)}
        self.signature = signature  # its tensor entries hold the filled fields apply() sets
        node_position[id(None)] = -1
        used = [position[id(t)] for t in tensors.values()]
        self.producers = tuple(zip(used, [node_position[id(t._producer)]
                                          for t in tensors.values()], strict=True))
        self.nodes = tuple(nodes)
        self.uids = tuple(zip(tensors, used, strict=True))
        self.plan_key: Any = None

    def apply(self, graph: GraphData) -> dict[int, Tensor]:
        """Give ``graph`` (of the recorded structure) the validated state; its tensors by uid."""
        tensors, nodes = graph.all_tensors, graph.nodes
        for t, e in zip(tensors, map(TensorEntry._make, self.signature[4]), strict=True):
            t._dim, t._stride, t._data_type, t._uid = e.dim, e.stride, e.data_type, e.uid
            t._dim_inferred, t._stride_inferred = e.dim_inferred, e.stride_inferred
            t._dtype_inferred = e.dtype_inferred
        for i, j in self.producers:
            tensors[i]._producer = nodes[j] if j >= 0 else None
        for node, fields in zip(nodes, self.nodes, strict=True):
            node.__dict__.update(fields)
        return {uid: tensors[i] for uid, i in self.uids}


_MEMO_SIZE = 1024
_memo: dict[tuple[Any, ...], ValidatedStructure] = {}
_memo_lock = threading.Lock()


def clear_validation_memo() -> None:
    """Forget every memoized validation (``hipdnn.clear_plan_cache()`` calls this)."""
    with _memo_lock:
        _memo.clear()


def _remember(signature: tuple[Any, ...], record: ValidatedStructure) -> None:
    with _memo_lock:
        while len(_memo) >= _MEMO_SIZE:
            del _memo[next(iter(_memo))]
        _memo[signature] = record


def validate_structure(graph: GraphData, memo: bool = True,
                       ) -> tuple[dict[int, Tensor], ValidatedStructure | None]:
    """Validate ``graph`` in place (served from the memo when an identical structure was
    validated before); its used tensors by uid and the record (None: not memoizable, or
    ``memo=False``: validated in full, nothing remembered)."""
    if not memo:
        return _validate_full(graph), None
    before = structure_signature(graph)
    if before is not None:
        try:
            record = _memo.get(before)
        except TypeError:  # an unhashable name: not memoizable
            before = record = None
        if record is not None:
            return record.apply(graph), record
    tensors = _validate_full(graph)
    if before is None:
        return tensors, None
    nodes: list[dict[str, Any]] = []
    after = _signature(graph, nodes)
    if after is None:
        return tensors, None
    record = ValidatedStructure(graph, after, tensors, nodes)
    _remember(after, record)  # validating a validated graph changes nothing
    _remember(before, record)
    return tensors, record


def validate_graph(graph: GraphData, memo: bool = True) -> dict[int, Tensor]:
    """Validate ``graph`` in place; return its used tensors by uid (uids assigned as needed).
    ``memo=False`` always runs every check and leaves the memo alone."""
    return validate_structure(graph, memo)[0]
