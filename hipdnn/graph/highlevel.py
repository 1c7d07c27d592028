"""cudnn-frontend 1.x's high-level ``cudnn.Graph`` form, folded into :class:`hipdnn.Graph`.

>>> import numpy as np, hipdnn as cudnn
>>> x = np.arange(6, dtype=np.float32).reshape(1, 6, 1, 1) - 3
>>> with cudnn.Graph(io_data_type=cudnn.data_type.FLOAT) as graph:
...     y = graph.relu(x, name="act")
...     _ = y.set_output(True)
>>> graph.set_io_tuples([x], ["act::OUT_0"])
>>> graph(x).ravel().tolist()
[0.0, 0.0, 0.0, 0.0, 1.0, 2.0]

What the form adds to the low-level graph (one class, so every pygraph script keeps working):

- ops accept framework tensors (numpy arrays, torch tensors, ``__dlpack__`` objects) wherever
  they take a graph tensor; each object becomes ``tensor_like(obj)`` once (the same object
  passed twice is one graph tensor) and is remembered as the default value of that input;
- inputs are recorded as ``"<node>::<argument>"`` (keyword) or ``"<node>::<position>"``,
  outputs under their tensor names (``"<node>::<PORT>"``); a node given no name is named
  ``"<op>.<n>"`` (``conv_fprop.0``, n counted per op), as cudnn-frontend's wrapper does;
- leaving a ``with`` block without an exception validates the graph and builds its plans
  (``heuristics=``, default ``[A, FALLBACK]``) when the graph is in the high-level form: it was
  constructed with ``inputs=``/``outputs=``/``heuristics=``/``workspace_alloc=``, or an op was
  given a framework tensor. Otherwise ``with`` keeps its low-level meaning (``close()`` on exit);
- ``set_io_tuples(inputs, outputs)`` fixes the order for positional calls; ``graph(x, w)``
  returns the output (or a tuple of outputs) in newly allocated buffers; ``graph({...})`` takes
  values keyed by recorded name, tensor name, uid, graph tensor or the framework tensor an op
  was given (a key that names none of the graph's inputs or outputs is a VariantPackError) and
  returns the dict with the outputs it allocated added. An op built on another (``relu`` on
  ``pointwise``) records its inputs under its own node and argument names only.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from hipdnn.core.errors import ArgumentError, GraphStateError, ValidationError, VariantPackError
from hipdnn.core.types import HeurMode
from hipdnn.interop.dtypes import dtype_to_numpy, dtype_to_torch
from hipdnn.ir.tensor import Tensor

if TYPE_CHECKING:
    from hipdnn.ir.nodes.base import Node

__all__ = ["HighLevel", "accepting_framework_tensors"]


def _is_framework_tensor(obj: Any) -> bool:
    if isinstance(obj, (Tensor, np.generic, str, bytes, int, float, bool)) or obj is None:
        return False
    return isinstance(obj, np.ndarray) or hasattr(obj, "__dlpack__") or hasattr(
        obj, "__cuda_array_interface__") or hasattr(obj, "__array_interface__")


def _is_torch(obj: Any) -> bool:
    return type(obj).__module__.startswith("torch")


class HighLevelGraph(Protocol):
    """What the high-level form calls on its graph (:class:`hipdnn.Graph` is one): its nodes,
    its ``HighLevel`` and the public steps it runs for the user."""

    nodes: list[Node]

    @property
    def _high_level(self) -> HighLevel: ...

    def tensor_like(self, *args: Any, **kwargs: Any) -> Tensor: ...

    def validate(self) -> object: ...

    def build_operation_graph(self, *args: Any, **kwargs: Any) -> object: ...

    def create_execution_plans(self, *args: Any, **kwargs: Any) -> object: ...

    def check_support(self, *args: Any, **kwargs: Any) -> object: ...

    def build_plans(self, *args: Any, **kwargs: Any) -> object: ...

    def get_execution_plan_count(self) -> int: ...

    def get_workspace_size(self) -> int: ...

    def execute(self, *args: Any, **kwargs: Any) -> object: ...



class HighLevel:
    """The high-level form's state and work, owned by a :class:`hipdnn.Graph`
    (``graph._high_level``).

    The graph delegates :meth:`set_io_tuples`, its call (:meth:`call`) and the end of a ``with``
    block (:meth:`finish`) to it; the op wrappers of :func:`accepting_framework_tensors` use
    :meth:`graph_tensor`, :meth:`node_name` and :meth:`record`. Its state: ``requested`` (the
    graph was constructed in the high-level form), ``used`` (an op was given a framework
    tensor), the recorded inputs and outputs (``inputs``/``outputs``: name -> tensor), the
    framework objects turned into graph tensors (``objects``), the io tuples and the workspace
    allocated for calls.
    """

    def __init__(self, graph: HighLevelGraph, inputs: Sequence[Any] | None, outputs: Sequence[Any] | None,
                 heuristics: Sequence[Any] | None, workspace_alloc: bool | None) -> None:
        for what, value in (("inputs", inputs), ("outputs", outputs), ("heuristics", heuristics)):
            if value is not None and not isinstance(value, (list, tuple)):
                raise ValidationError(f"Graph(): {what} must be a list or tuple, got "
                                      f"{type(value).__name__}")
        self.graph = graph
        self.requested = any(v is not None for v in (inputs, outputs, heuristics,
                                                     workspace_alloc))
        self.used = False
        self.io: tuple[Sequence[Any], Sequence[Any]] | None = (
            (list(inputs or []), list(outputs or [])) if inputs or outputs else None)
        self.heuristics = list(heuristics) if heuristics else [HeurMode.A, HeurMode.FALLBACK]
        self.workspace_alloc = True if workspace_alloc is None else bool(workspace_alloc)
        self.workspace: Any = None
        self.objects: dict[int, tuple[Any, Tensor]] = {}  # id(obj) -> (obj kept alive, tensor)
        self.inputs: dict[str, Tensor] = {}
        self.outputs: dict[str, Tensor] = {}
        self.tuples: tuple[tuple[Tensor, ...], tuple[Tensor, ...]] | None = None
        self.torch = False
        self.counts: dict[str, int] = {}
        #: ops running now: an op another op calls (relu -> pointwise) records nothing itself
        self.depth = 0

    def rekey(self) -> None:
        """After the graph was copied or unpickled: index the copied framework objects by
        their own ids (the recorded ids were the originals')."""
        self.objects = {id(obj): (obj, t) for obj, t in self.objects.values()}

    # -- building -------------------------------------------------------------------------------
    def graph_tensor(self, obj: Any) -> Any:
        """``obj`` itself, or for a framework tensor the graph tensor made of it (once per
        object; the object is kept as that input's default value)."""
        if not _is_framework_tensor(obj):
            return obj
        entry = self.objects.get(id(obj))
        if entry is None or entry[0] is not obj:
            value = obj.detach() if getattr(obj, "requires_grad", False) else obj
            entry = (obj, self.graph.tensor_like(value))
            self.objects[id(obj)] = entry
        self.used = True
        self.torch = self.torch or _is_torch(obj)
        return entry[1]

    def node_name(self, op: str) -> str:
        """cudnn-frontend's high-level default node name: ``"<op>.<n>"``, n counted per op."""
        n = self.counts.get(op, 0)
        self.counts[op] = n + 1
        return f"{op}.{n}"

    def record(self, before: int, args: Sequence[Any], kwargs: Mapping[str, Any],
               result: Any) -> None:
        """Record the inputs and outputs of the node an op just added (if it added one)."""
        if len(self.graph.nodes) == before:
            return
        node = self.graph.nodes[-1].name
        for i, t in enumerate(args):
            if isinstance(t, Tensor):
                self.inputs[f"{node}::{i}"] = t
        for key, t in kwargs.items():
            if isinstance(t, Tensor):
                self.inputs[f"{node}::{key}"] = t
        outs = result if isinstance(result, (list, tuple)) else [result]
        for t in outs:
            if isinstance(t, Tensor):
                self.outputs[t.name] = t

    # -- finishing (with-block exit) -------------------------------------------------------------
    def finish(self) -> bool:
        """Build plans at the end of a high-level ``with`` block; False if not high-level."""
        g = self.graph
        if not (self.requested or self.used) or g.get_execution_plan_count() or not g.nodes:
            return False
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans(self.heuristics)
        g.check_support()
        g.build_plans()
        if self.workspace_alloc:
            size = self.graph.get_workspace_size()
            self.workspace = self._allocate((size,), (1,), np.dtype(np.uint8), None)
        if self.io is not None:
            self.set_io_tuples(*self.io)
        return True

    # -- io tuples and calls -------------------------------------------------------------------
    def _find(self, item: Any, table: Mapping[str, Tensor], what: str, index: int) -> Tensor:
        if isinstance(item, Tensor):
            return item
        if isinstance(item, str):
            if item in table:
                return table[item]
            for t in table.values():
                if t.name == item:
                    return t
        elif isinstance(item, int) and not isinstance(item, bool):
            for t in table.values():
                if t.uid == item:
                    return t
        elif id(item) in self.objects and self.objects[id(item)][0] is item:
            return self.objects[id(item)][1]
        raise ValidationError(f"set_io_tuples: {what} at index {index} ({item!r:.60}) is not a "
                              f"recorded {what}; known: {sorted(table)}")

    def set_io_tuples(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
        """See :meth:`hipdnn.graph.graph.Graph.set_io_tuples`."""
        if not isinstance(inputs, (list, tuple)) or not isinstance(outputs, (list, tuple)):
            raise ValidationError("set_io_tuples: inputs and outputs must be lists or tuples")
        if not self.graph.get_execution_plan_count():
            self.io = (list(inputs), list(outputs))
            return
        ins = tuple(self._find(x, self.inputs, "input", i) for i, x in enumerate(inputs))
        outs = tuple(self._find(x, self.outputs, "output", i) for i, x in enumerate(outputs))
        seen: set[int] = set()
        for t in ins + outs:
            if id(t) in seen:
                raise ValidationError(f"set_io_tuples: tensor {t.name!r} is listed twice")
            seen.add(id(t))
        for i, t in enumerate(ins):
            if t.is_virtual:
                raise ValidationError(f"set_io_tuples: input at index {i} ({t.name!r}) is virtual")
        for name, t in self.outputs.items():
            if not t.is_virtual and id(t) not in seen:
                raise ValidationError(f"set_io_tuples: output {name!r} is not virtual but not in "
                                      f"outputs")
        for name, t in self.inputs.items():
            if not t.is_virtual and id(t) not in seen:
                raise ValidationError(f"set_io_tuples: input {name!r} is not virtual but not in "
                                      f"inputs or outputs")
        self.tuples = (ins, outs)

    def _allocate(self, dim: Sequence[int], stride: Sequence[int], dtype: np.dtype[Any],
                  data_type: Any) -> Any:
        if self.torch:
            import torch  # noqa: PLC0415 (optional dependency, imported when used)

            tdt = torch.uint8 if data_type is None else dtype_to_torch(data_type)
            return torch.empty_strided(tuple(dim), tuple(stride), dtype=tdt)
        npdt = dtype if data_type is None else dtype_to_numpy(data_type)
        size = 1 + sum((d - 1) * s for d, s in zip(dim, stride, strict=True)) if all(dim) else 0
        base = np.empty(size, dtype=npdt)
        return np.lib.stride_tricks.as_strided(
            base, tuple(dim), tuple(s * npdt.itemsize for s in stride))

    def _like(self, t: Tensor) -> Any:
        return self._allocate(t.get_dim(), t.get_stride(), np.dtype(np.uint8), t.get_data_type())

    def _run_pack(self, pack: dict[Any, Any], kwargs: Mapping[str, Any]) -> None:
        unknown = set(kwargs) - {"handle", "workspace"}
        if unknown:
            raise ArgumentError(f"graph call got unexpected keyword arguments {sorted(unknown)}; "
                                f"valid: handle, workspace")
        workspace = kwargs.get("workspace", self.workspace)
        if workspace is None and self.graph.get_workspace_size() and not self.workspace_alloc:
            raise VariantPackError("workspace_alloc=False: pass workspace= to the call")
        self.graph.execute(pack, workspace, handle=kwargs.get("handle"))

    def call(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
        """See :meth:`hipdnn.graph.graph.Graph.__call__`."""
        if not self.graph.get_execution_plan_count():
            raise GraphStateError("call the graph after its plans are built (leave the `with "
                                  "Graph(...)` block, or call build())")
        if len(args) == 1 and isinstance(args[0], dict):
            return self._call_dict(args[0], kwargs)
        if self.tuples is None:
            raise GraphStateError("positional graph calls need set_io_tuples(inputs, outputs) "
                                  "first (or Graph(inputs=..., outputs=...))")
        ins, outs = self.tuples
        if len(args) != len(ins):
            raise VariantPackError(f"the graph takes {len(ins)} positional inputs "
                                   f"({[t.name for t in ins]}), got {len(args)}")
        results = [self._like(t) for t in outs]
        pack: dict[Any, Any] = dict(zip(ins, args, strict=True))
        pack.update(zip(outs, results, strict=True))
        self._run_pack(pack, kwargs)
        return results[0] if len(results) == 1 else tuple(results)

    def _key_tensor(self, key: Any) -> Tensor | None:
        """The recorded graph tensor a ``graph({...})`` key names: a graph tensor, a recorded
        name, a tensor name, a uid, or the framework object an op was given; None if none."""
        recorded = [*self.inputs.items(), *self.outputs.items()]
        if isinstance(key, Tensor):
            return key if any(t is key for _, t in recorded) else None
        if isinstance(key, str):
            for table in (self.inputs, self.outputs):
                if key in table:
                    return table[key]
            return next((t for _, t in recorded if t.name == key), None)
        if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
            return next((t for _, t in recorded if t.uid == key), None)
        try:
            entry = self.objects.get(id(key))
        except TypeError:
            return None
        return entry[1] if entry is not None and entry[0] is key else None

    def _call_dict(self, values: dict[Any, Any], kwargs: Mapping[str, Any]) -> dict[Any, Any]:
        pack: dict[Any, Any] = {}
        unknown: list[str] = []
        for key, value in values.items():
            t = self._key_tensor(key)
            if t is None or t.is_virtual:
                unknown.append(f"{key!r:.60}" + (" (a virtual tensor)" if t is not None else ""))
            elif t in pack and pack[t] is not value:
                raise VariantPackError(f"graph call: two keys give tensor {t.name!r} (uid "
                                       f"{t.uid}) different values; give it once",
                                       tensor=t.name)
            else:
                pack[t] = value
        if unknown:
            raise VariantPackError(
                f"graph call: keys {', '.join(unknown)} name no input or output of the graph; "
                f"valid: "
                f"{sorted(n for n, t in [*self.inputs.items(), *self.outputs.items()] if not t.is_virtual)}"
                f" (recorded names), tensor names, uids, graph tensors or the framework tensors "
                f"the ops were given")
        missing: list[str] = []
        defaults = {id(t): obj for obj, t in self.objects.values()}
        for table, is_out in ((self.inputs, False), (self.outputs, True)):
            for name, t in table.items():
                if t.is_virtual or t in pack:
                    continue
                if is_out:
                    pack[t] = values[name] = self._like(t)
                elif id(t) in defaults:
                    pack[t] = defaults[id(t)]
                else:
                    missing.append(name)
        if missing:
            raise VariantPackError(f"no value for the graph inputs {missing}: key them by "
                                   f"recorded name, tensor name, uid or graph tensor")
        self._run_pack(pack, kwargs)
        return values


def accepting_framework_tensors(method: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap an op builder: framework tensors given for its tensor parameters (those annotated
    ``Tensor``) become graph tensors; the node's inputs and outputs are recorded."""
    params = list(inspect.signature(method).parameters.values())[1:]
    tensor_params = {p.name for p in params if "Tensor" in str(p.annotation)}
    positional = [p.name in tensor_params for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]

    op_name = method.__name__

    @functools.wraps(method)
    def op(self: HighLevelGraph, *args: Any, **kwargs: Any) -> Any:
        hl = self._high_level
        if hl.depth:  # called by another op (relu -> pointwise): that op names and records
            return method(self, *args, **kwargs)
        args = tuple(hl.graph_tensor(a) if i < len(positional) and positional[i] else a
                     for i, a in enumerate(args))
        kwargs = {k: hl.graph_tensor(v) if k in tensor_params else v
                  for k, v in kwargs.items()}
        if not kwargs.get("name") and (hl.requested or hl.used):
            kwargs["name"] = hl.node_name(op_name)
        before = len(self.nodes)
        hl.depth += 1
        try:
            result = method(self, *args, **kwargs)
        finally:
            hl.depth -= 1
        hl.record(before, args, kwargs, result)
        return result

    return op
