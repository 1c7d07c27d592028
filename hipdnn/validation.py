"""Graph-level validation: wiring, topological order, dtype filling, uids (used by Graph.validate).

Per-node checks (shapes, ranks, channels, attributes) live in the node classes; this module
checks what spans nodes and fills what the graph decides: dtypes from the graph's io /
intermediate / compute types (virtual -> intermediate, FLOAT when unset; else io, as cudnn-frontend does) and uids.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hipdnn.engines.base import Knob, KnobSetting, KnobValue
from hipdnn.errors import KnobError, ValidationError
from hipdnn.nodes_base import check_tensor
from hipdnn.shapes import packed_strides
from hipdnn.tensor import Tensor
from hipdnn.types import DataType, HeurMode, to_enum

if TYPE_CHECKING:
    from hipdnn.graph import Graph
    from hipdnn.nodes_base import Node

__all__ = ["KnobSettings", "check_heur_modes", "resolve_knob_settings", "validate_graph"]

#: What ``create_execution_plan_ext`` takes as knob settings.
KnobSettings = Sequence[KnobSetting] | Mapping[str, KnobValue] | None


def check_heur_modes(modes: Any) -> list[HeurMode]:
    """Heuristic modes (one, a list, or None) as HeurMode members; ValidationError otherwise."""
    if modes is None:
        return []
    items = list(modes) if isinstance(modes, Iterable) and not isinstance(modes, str) else [modes]
    return [to_enum(HeurMode, m, "heuristic mode") for m in items]


def resolve_knob_settings(knobs: Sequence[Knob], settings: KnobSettings, engine: str,
                          graph: str) -> dict[str, KnobValue]:
    """Every knob's value: its default, or the checked setting. A setting that is not a
    KnobSetting, names an unknown knob, repeats a knob or is out of range raises KnobError."""
    by_id = {k.id: k for k in knobs}
    if settings is None:
        pairs: list[tuple[str, Any]] = []
    elif isinstance(settings, Mapping):
        pairs = [(str(getattr(k, "name", k)), v) for k, v in settings.items()]
    else:
        pairs = []
        for s in settings:
            if not isinstance(s, KnobSetting):
                raise KnobError(f"knob settings must be KnobSetting(id, value) objects or a "
                                f"dict, got {s!r}")
            pairs.append((s.id, s.value))
    values = {k.id: k.default for k in by_id.values()}
    seen: set[str] = set()
    for kid, value in pairs:
        if kid in seen:
            raise KnobError(f"knob {kid!r} is set more than once for engine {engine}; give "
                            f"each knob one value", knob=kid)
        seen.add(kid)
        knob = by_id.get(kid)
        if knob is None:
            known = ", ".join(sorted(by_id)) or "none"
            raise KnobError(f"unknown knob {kid!r} for engine {engine} on graph {graph!r}; its "
                            f"knobs: {known}", knob=kid)
        values[kid] = knob.check(value)
    return values


def _wiring(graph: Graph) -> list[Tensor]:
    """Check ownership and producers; return the tensors the nodes use, in first-use order."""
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


def _fill_dtypes(graph: Graph, tensors: list[Tensor]) -> None:
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
            t.data_type = default_for(t)
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


def _assign_uids(graph: Graph, tensors: list[Tensor]) -> dict[int, Tensor]:
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
            t.uid = next_uid
            by_uid[next_uid] = t
            next_uid += 1
    return {t.uid: t for t in tensors if t.uid is not None}


def validate_graph(graph: Graph) -> dict[int, Tensor]:
    """Validate ``graph`` in place; return its used tensors by uid (uids assigned as needed)."""
    tensors = _wiring(graph)
    for t in tensors:
        check_tensor(t, t._producer.name if t._producer is not None else None)
        if t._producer is None and t.dim is not None and t.stride is None:
            t.stride = packed_strides(t.dim)
    for node in graph.nodes:
        node.infer()
    _fill_dtypes(graph, tensors)
    for node in graph.nodes:
        node.validate()
    for t in tensors:
        if t.dim is None:
            raise ValidationError("dims are not set and cannot be inferred; use set_dim([...])",
                                  node=t._producer.name if t._producer is not None else None,
                                  tensor=t.name)
    return _assign_uids(graph, tensors)
