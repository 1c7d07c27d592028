"""JSON serialization of graphs and the structural key used for plan caching.

The JSON holds the graph's types, every tensor (in creation order; nodes refer to tensors by
position) and every node (type, name, compute type, ports, attributes). ``from_json(to_json(g))``
reproduces ``g`` exactly, so ``to_json`` of the copy is identical. ``graph_key`` hashes the same
content without names, after validation, so graphs built the same way share a key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from hipdnn.core.errors import ArgumentError, HipdnnError, ValidationError
from hipdnn.core.types import DataType, to_enum
from hipdnn.ir.nodes import NODE_TYPES
from hipdnn.ir.tensor import Tensor

if TYPE_CHECKING:
    from hipdnn.core.handle import Handle
    from hipdnn.ir.graph_data import GraphData

G = TypeVar("G", bound="GraphData")

__all__ = ["FORMAT", "from_dict", "from_json", "graph_key", "graph_to_dict", "to_json"]

#: Identifies our JSON documents (with ``"version"``).
FORMAT = "hipdnn-ctypes.graph"
_VERSION = 1


def _tensor_dict(t: Tensor, names: bool) -> dict[str, Any]:
    d: dict[str, Any] = {
        "uid": t.uid,
        "dim": None if t.dim is None else list(t.dim),
        "stride": None if t.stride is None else list(t.stride),
        "data_type": t.data_type.name,
        "is_virtual": t.is_virtual,
        "is_pass_by_value": t.is_pass_by_value,
        "value": t.value,
    }
    if names:
        d = {"name": t.name, **d}
    return d


def graph_to_dict(graph: GraphData, names: bool = True) -> dict[str, Any]:
    """The graph as plain JSON-able data (``names=False`` drops every name, for the key)."""
    index = {id(t): i for i, t in enumerate(graph.all_tensors)}

    def ref(t: Tensor | None) -> int | None:
        return None if t is None else index[id(t)]

    nodes = []
    for node in graph.nodes:
        nd: dict[str, Any] = {
            "type": node.op,
            "compute_data_type": node.compute_data_type.name,
            "inputs": {p: ref(t) for p, t in node.inputs.items() if t is not None},
            "outputs": {p: ref(t) for p, t in node.outputs.items() if t is not None},
            "attributes": node.attributes(),
        }
        if names:
            nd = {"name": node.name, **nd}
        nodes.append(nd)
    doc: dict[str, Any] = {
        "format": FORMAT,
        "version": _VERSION,
        "io_data_type": graph.io_data_type.name,
        "intermediate_data_type": graph.intermediate_data_type.name,
        "compute_data_type": graph.compute_data_type.name,
        "tensors": [_tensor_dict(t, names) for t in graph.all_tensors],
        "nodes": nodes,
    }
    if names:
        doc = {"name": graph.name, **doc}
    return doc


def to_json(graph: GraphData, indent: int | None = 1) -> str:
    """Serialize ``graph`` (in its current state; call validate() first for inferred fields)."""
    return json.dumps(graph_to_dict(graph), indent=indent)


def graph_key(graph: GraphData) -> int:
    """64-bit structural hash of a validated graph: names excluded, uids and values included."""
    text = json.dumps(graph_to_dict(graph, names=False), sort_keys=True, separators=(",", ":"))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def from_json(text: str | bytes, handle: Handle | None,
              graph_class: Callable[[str, DataType, DataType, DataType, Handle | None], G]) -> G:
    """Rebuild a ``graph_class`` graph from :func:`to_json` output (ValidationError on a
    malformed document). Users call ``Graph.from_json``; the class is passed in so this module
    does not import the graph module (which imports this one)."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValidationError(f"from_json: the bytes are not UTF-8 text ({exc}); from_json "
                                  f"takes the str (or its UTF-8 bytes) that to_json() "
                                  f"returned") from None
    if not isinstance(text, str):
        raise ArgumentError(f"from_json: {text!r:.60} ({type(text).__name__}) is not a JSON "
                            f"document; from_json takes the str (or UTF-8 bytes) that to_json() "
                            f"returned")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"from_json: not a JSON graph: {exc}") from None
    except RecursionError:
        raise ValidationError("from_json: not a JSON graph: it is nested too deeply to "
                              "parse (a graph document is a few levels deep)") from None
    return from_dict(doc, handle, graph_class)


_GRAPH_DTYPES = ("io_data_type", "intermediate_data_type", "compute_data_type")


def from_dict(doc: Any, handle: Handle | None,
              graph_class: Callable[[str, DataType, DataType, DataType, Handle | None], G]) -> G:
    """Rebuild a ``graph_class`` graph from :func:`graph_to_dict` output (what
    :func:`from_json` parses)."""
    make = graph_class
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValidationError(f"not a {FORMAT} document (missing or wrong 'format')")
    if doc.get("version") != _VERSION:
        raise ValidationError(f"unsupported graph document version {doc.get('version')!r}; "
                              f"this hipdnn reads version {_VERSION}")
    try:
        io, intermediate, compute = (to_enum(DataType, doc[key], key) for key in _GRAPH_DTYPES)
        g = make(doc.get("name", "graph"), io, intermediate, compute, handle)
        for td in doc["tensors"]:
            t = Tensor(td["dim"], td["stride"], to_enum(DataType, td["data_type"], "data_type",
                                                           tensor=td.get("name")),
                       name=td.get("name", ""),
                       uid=td["uid"], is_virtual=td["is_virtual"],
                       is_pass_by_value=td["is_pass_by_value"], value=td["value"], graph=g)
            g.all_tensors.append(t)
        for nd in doc["nodes"]:
            cls = NODE_TYPES.get(nd["type"])
            if cls is None:
                raise ValidationError(f"unknown node type {nd['type']!r}; known: "
                                      f"{sorted(NODE_TYPES)}", node=nd.get("name"))
            ports = {p: _tensor_at(g, i, nd.get("name"), p)
                     for p, i in {**nd["inputs"], **nd["outputs"]}.items()}
            node = cls(nd.get("name", ""),
                       to_enum(DataType, nd["compute_data_type"], "compute_data_type",
                               node=nd.get("name")),
                       **nd["attributes"], **ports)
            g.nodes.append(node)
            for out in node.outputs.values():
                if out is not None:
                    out._producer = node
    except HipdnnError:
        raise
    except (KeyError, IndexError, TypeError, AttributeError, ValueError, OverflowError,
            RecursionError) as exc:
        raise ValidationError(f"malformed graph document: {type(exc).__name__}: {exc}") from None
    return g


def _tensor_at(g: GraphData, index: Any, node: Any, port: Any) -> Tensor | None:
    """The document's tensor ``index`` (an int into its 'tensors' list), or None for an absent
    optional port; a negative, bool or out-of-range index is malformed (never wraps around)."""
    if index is None:
        return None
    count = len(g.all_tensors)
    if type(index) is not int or not 0 <= index < count:
        raise ValidationError(f"malformed graph document: port {port!r} refers to tensor "
                              f"{index!r}; valid: an int index in 0..{count - 1} into 'tensors'",
                              node=None if node is None else str(node))
    return g.all_tensors[index]
