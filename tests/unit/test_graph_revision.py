"""Issue 9, defect 2: a graph edited after build() never runs its stale plans.

Every setter of a Tensor and of the Graph bumps the graph's revision; execute, bind, an
existing binding, execute_plan_at_index and the plan queries then raise GraphChangedError
(a GraphStateError, so a HipdnnError) until build() runs again. Nodes have no setters (their
attributes are fixed when the graph op creates them); adding a node is an edit too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import hipdnn
from hipdnn import GraphChangedError, GraphStateError, HipdnnError


def _graph() -> tuple[hipdnn.Graph, Any, Any, Any]:
    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT, compute_data_type=hipdnn.DataType.FLOAT)
    x = g.tensor(dim=[1, 2, 3, 4], name="x")
    s = g.tensor(dim=[1, 1, 1, 1], name="s", is_pass_by_value=True, value=2.0)
    y = g.mul(x, s).set_output(True).set_name("y")
    g.build()
    return g, x, s, y


_TENSOR_EDITS: dict[str, Callable[[Any, Any, Any], object]] = {
    "set_output": lambda x, s, y: y.set_output(True),
    "set_is_virtual": lambda x, s, y: y.set_is_virtual(False),
    "set_is_pass_by_value": lambda x, s, y: s.set_is_pass_by_value(True),
    "set_data_type": lambda x, s, y: x.set_data_type(hipdnn.DataType.FLOAT),
    "set_name": lambda x, s, y: x.set_name("x2"),
    "set_uid": lambda x, s, y: x.set_uid(77),
    "clear_uid": lambda x, s, y: x.clear_uid(),
    "set_dim": lambda x, s, y: x.set_dim([1, 2, 3, 4]),
    "set_stride": lambda x, s, y: x.set_stride([24, 1, 8, 2]),
    "set_value": lambda x, s, y: s.set_value(float("nan")),
}

_GRAPH_EDITS: dict[str, Callable[[hipdnn.Graph], object]] = {
    "set_name": lambda g: g.set_name("renamed"),
    "set_io_data_type": lambda g: g.set_io_data_type(hipdnn.DataType.FLOAT),
    "set_intermediate_data_type": lambda g: g.set_intermediate_data_type(hipdnn.DataType.FLOAT),
    "set_compute_data_type": lambda g: g.set_compute_data_type(hipdnn.DataType.FLOAT),
    "add_node": lambda g: g.relu(g.tensor(dim=[1, 1, 1, 1], name="extra")),
}


#: Tensor setters that change nothing: set_reordering_type accepts only NONE (the default).
_TENSOR_NOT_EDITS = {"set_reordering_type"}


def test_every_tensor_setter_is_covered() -> None:
    setters = {n for n in dir(hipdnn.Tensor) if n.startswith("set_") or n == "clear_uid"}
    assert setters == set(_TENSOR_EDITS) | _TENSOR_NOT_EDITS


#: Graph setters that do not change what the plans compute, so they keep the plans:
#: set_io_tuples only orders the high-level graph's positional call arguments (it is
#: normally called after the ``with`` block built the plans).
_NOT_EDITS = {"set_io_tuples"}


def test_every_graph_setter_is_covered() -> None:
    setters = {n for n in dir(hipdnn.Graph) if n.startswith("set_")}
    assert setters <= set(_GRAPH_EDITS) | _NOT_EDITS, setters - set(_GRAPH_EDITS) - _NOT_EDITS


def test_set_io_tuples_keeps_the_plans_and_checks_the_revision() -> None:
    """set_io_tuples orders the positional call; it is no edit, and a positional call on a
    graph edited since build() is refused like execute."""
    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT)
    xs = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4) - 12
    with g:
        y = g.relu(xs, name="r")
        y.set_output(True)
    revision = g._planner.revision
    g.set_io_tuples([xs], ["r::OUT_0"])
    assert g._planner.revision == revision
    np.testing.assert_array_equal(g(xs), np.maximum(xs, 0))
    y.set_name("renamed")
    with pytest.raises(GraphChangedError, match="changed since"):
        g(xs)


def _assert_stale(g: hipdnn.Graph, pack: dict[Any, Any], binding: Any) -> None:
    for call in (lambda: g.execute(pack), lambda: g.bind(pack), binding,
                 lambda: g.execute_plan_at_index(pack, None, 0), g.get_plan_name,
                 g.get_workspace_size):
        with pytest.raises(GraphChangedError, match=r"changed since"):
            call()
    assert issubclass(GraphChangedError, GraphStateError)
    assert issubclass(GraphChangedError, HipdnnError)


def _edit_invalidates(edit: Callable[[Any, Any, Any], object]) -> None:
    """Build and run, bind, make ``edit`` (x, s, y): every use of the old plans is refused."""
    g, x, s, y = _graph()
    xs = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
    ys = np.full_like(xs, -7.0)
    pack = {x: xs, y: ys}
    g.execute(pack)
    binding = g.bind(pack)
    ys[:] = -7.0
    edit(x, s, y)
    _assert_stale(g, pack, binding)
    assert (ys == -7.0).all()  # nothing ran


@pytest.mark.parametrize("setter", sorted(_TENSOR_EDITS))
def test_tensor_setter_invalidates_plans(setter: str) -> None:
    _edit_invalidates(_TENSOR_EDITS[setter])


@pytest.mark.parametrize("setter", sorted(_GRAPH_EDITS))
def test_graph_setter_invalidates_plans(setter: str) -> None:
    g, x, _s, y = _graph()
    xs = np.ones((1, 2, 3, 4), np.float32)
    ys = np.full_like(xs, -7.0)
    pack = {x: xs, y: ys}
    binding = g.bind(pack)
    _GRAPH_EDITS[setter](g)
    _assert_stale(g, pack, binding)
    assert (ys == -7.0).all()


def test_rebuild_after_stride_edit_computes_the_new_layout() -> None:
    """The reported case: NCHW -> NHWC after build ran the old plan (96 of 384 written)."""
    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT)
    x = g.tensor(dim=[2, 3, 4, 4], name="x")
    y = g.relu(x).set_output(True)
    g.build()
    x.set_stride([48, 1, 12, 3])
    y.set_stride([48, 1, 12, 3])
    xs = np.random.default_rng(0).standard_normal((2, 4, 4, 3)).astype(np.float32)
    xs = xs.transpose(0, 3, 1, 2)  # NHWC memory, NCHW logical
    ys = np.full((2, 4, 4, 3), np.nan, np.float32).transpose(0, 3, 1, 2)
    with pytest.raises(GraphChangedError):
        g.execute({x: xs, y: ys})
    assert np.isnan(ys).all()
    g.build()
    g.execute({x: xs, y: ys})
    np.testing.assert_array_equal(ys, np.maximum(xs, 0))
    old = g.bind({x: xs, y: ys})
    old()
    y.set_name("y")
    g.build()
    with pytest.raises(GraphChangedError, match="bind again"):
        old()  # made before the edit: its checks were against the old graph


def test_nan_epsilon_after_build_is_not_ignored() -> None:
    g, x, s, y = _graph()
    s.set_value(float("nan"))
    xs = np.ones((1, 2, 3, 4), np.float32)
    ys = np.zeros_like(xs)
    with pytest.raises(GraphChangedError):
        g.execute({x: xs, y: ys})
    g.build()
    g.execute({x: xs, y: ys})
    assert np.isnan(ys).all()


def test_build_plan_at_index_after_edit_drops_stale_plans() -> None:
    g, x, s, y = _graph()
    s.set_value(3.0)
    g.build_plan_at_index(0)
    assert g.get_execution_plan_count() == 1
    xs = np.ones((1, 2, 3, 4), np.float32)
    ys = np.zeros_like(xs)
    g.execute({x: xs, y: ys})
    assert (ys == 3.0).all()


#: Assigning a field is its setter: (field, the tensor it is assigned on, value).
_FIELD_ASSIGNMENTS: dict[str, tuple[str, Any]] = {
    "dim": ("x", [1, 2, 3, 4]),
    "stride": ("x", [24, 1, 8, 2]),
    "data_type": ("x", hipdnn.DataType.FLOAT),
    "uid": ("x", 77),
    "name": ("x", "x2"),
    "is_virtual": ("y", False),
    "is_pass_by_value": ("s", True),
    "value": ("s", 3.0),
}


@pytest.mark.parametrize("field", sorted(_FIELD_ASSIGNMENTS))
def test_assigning_a_field_invalidates_plans(field: str) -> None:
    """``x.stride = ...`` after build() ran the old plan before (a gap-free buffer of the new
    layout was partly written with no error); an assignment is now the field's setter."""
    name, value = _FIELD_ASSIGNMENTS[field]
    _edit_invalidates(lambda x, s, y: setattr({"x": x, "s": s, "y": y}[name], field, value))


def test_every_settable_field_is_covered() -> None:
    fields = {n for n in dir(hipdnn.Tensor)
              if isinstance(getattr(hipdnn.Tensor, n), property) and getattr(hipdnn.Tensor, n).fset}
    assert fields == set(_FIELD_ASSIGNMENTS)


@pytest.mark.parametrize(("field", "value"), [("dim", [1, "a", 3]), ("stride", 5),
                                              ("data_type", "complex"), ("uid", 1.5),
                                              ("is_virtual", "yes"), ("value", "x")])
def test_assigning_a_bad_value_is_a_typed_error_and_keeps_the_old_one(field: str, value: Any) -> None:
    _g, x, _s, _y = _graph()
    before = getattr(x, field)
    with pytest.raises(HipdnnError, match="x"):
        setattr(x, field, value)
    assert getattr(x, field) == before


def test_assigning_none_clears_the_uid_and_dims() -> None:
    _g, x, _s, _y = _graph()
    x.uid = None
    assert x.uid is None and x.get_uid() == -1
    x.dim = None
    assert x.dim is None and x.get_dim() == []
