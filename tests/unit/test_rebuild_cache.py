"""Memoized validation (hipdnn.ir.validation.validate_structure): a new graph of a structure that
was validated before is served from the memo, but any difference -- an attribute, a dim, a
stride, a dtype, a uid, virtuality, wiring, a name, a value's type -- is validated in full, so a
graph that full validation rejects is still rejected; edits after a build re-validate."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

import hipdnn
from hipdnn.core.errors import ValidationError
from hipdnn.graph.graph import Graph
from hipdnn.ir import validation
from hipdnn.ir.tensor import Tensor

F = hipdnn.DataType.FLOAT


@pytest.fixture(autouse=True)
def fresh_memo() -> Iterator[None]:
    validation.clear_validation_memo()
    yield
    validation.clear_validation_memo()


def _conv_relu() -> tuple[Graph, dict[str, Tensor]]:
    g = Graph("conv_relu", io_data_type=F, intermediate_data_type=F, compute_data_type=F)
    x = g.tensor(dim=[1, 4, 6, 6], name="x")
    w = g.tensor(dim=[4, 4, 3, 3], name="w")
    y = g.conv_fprop(x, w, padding=[1, 1], name="conv")
    z = g.relu(y, name="relu").set_output(True)
    return g, {"x": x, "w": w, "y": y, "z": z}


def _full_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    full = validation._validate_full

    def counting(graph: Graph) -> dict[int, Tensor]:
        calls.append(1)
        return full(graph)

    monkeypatch.setattr(validation, "_validate_full", counting)
    return calls


def _state(g: Graph) -> tuple[object, ...]:
    """Everything validation fills, comparable across graph objects."""
    pos = {id(n): i for i, n in enumerate(g.nodes)}
    tensors = tuple((t.name, t.dim, t.stride, t.data_type, t.uid, t.is_virtual,
                     t._dim_inferred, t._stride_inferred, t._dtype_inferred,
                     None if t._producer is None else pos[id(t._producer)])
                    for t in g.all_tensors)
    nodes = tuple(sorted((k, repr(v)) for k, v in vars(n).items() if k not in ("inputs",
                                                                                "outputs"))
                  for n in g.nodes)
    return tensors, nodes, tuple(sorted(g.tensors))


def test_identical_new_graph_is_served_from_the_memo_with_the_same_state(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _full_calls(monkeypatch)
    a, _ = _conv_relu()
    a.validate()
    assert len(calls) == 1
    b, _ = _conv_relu()
    b.validate()
    assert len(calls) == 1  # served from the memo
    assert _state(b) == _state(a)
    conv: Any = b.nodes[0]
    assert conv.pre_padding == (1, 1) and b.tensors[3].dim == (1, 4, 6, 6)
    validation.clear_validation_memo()
    c, _ = _conv_relu()
    c.validate()
    assert len(calls) == 2 and _state(c) == _state(a)


def test_validating_twice_changes_nothing() -> None:
    """What makes memoizing the validated form itself sound."""
    g, _ = _conv_relu()
    g.validate()
    once = _state(g)
    validation._validate_full(g)
    assert _state(g) == once


EDITS: dict[str, Callable[[Graph, dict[str, Tensor]], object]] = {
    "dim": lambda g, t: t["x"].set_dim([1, 4, 7, 7]).set_stride([196, 49, 7, 1]),
    "stride": lambda g, t: t["x"].set_stride([144, 1, 24, 4]),
    "dtype": lambda g, t: t["w"].set_data_type(hipdnn.DataType.HALF),
    "uid": lambda g, t: t["x"].set_uid(40),
    "virtuality": lambda g, t: t["y"].set_output(True),
    "attribute": lambda g, t: setattr(g.nodes[0], "stride", (2, 2)),
    "pointwise attribute": lambda g, t: setattr(g.nodes[1], "relu_upper_clip", 6.0),
    "node name": lambda g, t: setattr(g.nodes[1], "name", "other"),
    "tensor name": lambda g, t: t["z"].set_name("out"),
    "graph dtype": lambda g, t: g.set_compute_data_type(hipdnn.DataType.HALF),
    "wiring": lambda g, t: g.nodes[0].inputs.update(X=t["w"], W=t["x"]),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_any_difference_is_validated_in_full(edit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    a, _ = _conv_relu()
    a.validate()
    calls = _full_calls(monkeypatch)
    b, tb = _conv_relu()
    EDITS[edit](b, tb)
    try:
        b.validate()
    except ValidationError:
        pass
    assert calls == [1], f"{edit}: a different structure must be validated in full"


REJECTED: dict[str, Callable[[Graph, dict[str, Tensor]], object]] = {
    "channel mismatch": lambda g, t: t["w"].set_dim([4, 3, 3, 3]).set_stride([27, 9, 3, 1]),
    "float stride attribute": lambda g, t: setattr(g.nodes[0], "stride", (1.0, 1.0)),
    "bool stride attribute": lambda g, t: setattr(g.nodes[0], "stride", (True, True)),
    "int dtype": lambda g, t: setattr(t["w"], "_data_type", 99),  # past the setter, which refuses it
    "NOT_SET mode": lambda g, t: setattr(g.nodes[1], "mode", hipdnn.PointwiseMode.NOT_SET),
    "negative padding": lambda g, t: setattr(g.nodes[0], "pre_padding", (-1, 1)),
    "virtual input": lambda g, t: t["x"].set_is_virtual(True),
    "no output": lambda g, t: t["z"].set_output(False),
    "duplicate uid": lambda g, t: (t["x"].set_uid(7), t["w"].set_uid(7)),
    "foreign tensor": lambda g, t: g.nodes[1].inputs.update(
        IN_0=Graph().tensor(dim=[1, 4, 6, 6])),
}


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_memo_never_accepts_what_full_validation_rejects(case: str) -> None:
    good, _ = _conv_relu()
    good.validate()  # the memo now holds the valid structure (before and after validation)
    bad, tensors = _conv_relu()
    REJECTED[case](bad, tensors)
    with pytest.raises((ValidationError, AttributeError, TypeError)):
        bad.validate()
    again, tensors = _conv_relu()  # and rejected the same way every time
    REJECTED[case](again, tensors)
    with pytest.raises((ValidationError, AttributeError, TypeError)):
        again.validate()


def test_zero_signs_and_number_types_are_different_structures() -> None:
    def make(value: object) -> Graph:
        g = Graph(io_data_type=F)
        x = g.tensor(dim=[1, 2, 2, 2], name="x")
        g.relu(x, name="r", upper_clip=1.0).set_output(True)
        relu: Any = g.nodes[0]
        relu.relu_lower_clip = value
        return g

    signatures = {validation.structure_signature(make(v)) for v in (0.0, -0.0)}
    assert len(signatures) == 2
    assert validation.structure_signature(make(0)) not in signatures  # int is another type
    g, t = _conv_relu()
    t["x"]._dim = [1, 4, 6, 6]  # type: ignore[assignment]  # a list, past the setter: not described, not memoized
    assert validation.structure_signature(g) is None
    g.validate()
    assert g._planner.validated is None


def test_edit_after_build_revalidates_and_gets_another_plan(reference_only: None,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    a, _ = _conv_relu()
    a.build()
    calls = _full_calls(monkeypatch)
    b, tb = _conv_relu()
    b.build()
    assert calls == [] and b.plans[0] is a.plans[0]  # memo and plan cache both served it
    tb["x"].set_dim([1, 4, 8, 8]).set_stride([256, 64, 8, 1])
    b.build()
    # validated in full (and so is the private copy the new plan is built from)
    assert len(calls) == 2 and b.plans[0] is not a.plans[0]
    assert tb["z"].dim == (1, 4, 8, 8)
    conv: Any = b.nodes[0]  # direct attribute edits, no setter
    conv.pre_padding = (9, 9)
    conv.post_padding = (9, 9)
    b.build()
    assert len(calls) == 4 and tb["z"].dim == (1, 4, 24, 24)
    conv.stride = (0, 0)
    with pytest.raises(ValidationError, match="stride"):
        b.build()
    a.close()
    b.close()


def test_clear_plan_cache_clears_the_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    a, _ = _conv_relu()
    a.validate()
    hipdnn.clear_plan_cache()
    calls = _full_calls(monkeypatch)
    b, _ = _conv_relu()
    b.validate()
    assert calls == [1]


def test_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validation, "_MEMO_SIZE", 4)
    for c in range(1, 8):
        g = Graph(io_data_type=F)
        g.relu(g.tensor(dim=[1, c, 2, 2], name="x"), name="r").set_output(True)
        g.validate()
    assert len(validation._memo) <= 4


def test_int_fast_paths_keep_their_checks() -> None:
    import numpy as np

    g = Graph(io_data_type=F)
    assert g.tensor(dim=(np.int64(2), 3, 4, 4)).dim == (2, 3, 4, 4)
    assert type(g.tensor(dim=[2, 3, 4, 4]).dim) is tuple
    bads: list[Any] = [[True, 3, 4, 4], [2.0, 3, 4, 4], [2, "3", 4, 4]]
    for bad in bads:
        with pytest.raises(ValidationError, match="dim"):
            g.tensor(dim=bad)
    x, w = g.tensor(dim=[1, 2, 5, 5], name="x"), g.tensor(dim=[2, 2, 3, 3], name="w")
    with pytest.raises(ValidationError, match="padding"):
        g.conv_fprop(x, w, padding=[1.0, 1.0])  # type: ignore[list-item]
    with pytest.raises(ValidationError, match="must all be positive"):
        g.tensor(dim=[2, 0, 4, 4])
    with pytest.raises(ValidationError, match=">= 0"):
        g.tensor(dim=[2, 3], stride=[3, -1])
