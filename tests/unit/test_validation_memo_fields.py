"""The validation memo's key covers every Tensor field: a new field cannot be forgotten."""

from __future__ import annotations

import hipdnn
from hipdnn.ir.tensor import Tensor
from hipdnn.ir.validation import NOT_IN_SIGNATURE, TensorEntry, structure_signature

_SLOT_OF_FIELD = {"dim_inferred": "_dim_inferred", "stride_inferred": "_stride_inferred",
                  "dtype_inferred": "_dtype_inferred", "owned": "_graph"}


def test_every_tensor_slot_is_in_the_signature_or_excluded_with_a_reason() -> None:
    # a public field (dim, stride, ...) lives in the slot of its name with an underscore
    covered = {_SLOT_OF_FIELD.get(f, "_" + f) for f in TensorEntry._fields}
    slots = set(Tensor.__slots__)
    assert slots - covered - set(NOT_IN_SIGNATURE) == set(), "add the new Tensor field to TensorEntry"
    assert all(reason for reason in NOT_IN_SIGNATURE.values())


def test_signature_entries_are_in_tensor_entry_order() -> None:
    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT)
    x = g.tensor(name="x", dim=[1, 2, 3, 3], stride=[18, 9, 3, 1])
    y = g.relu(x)
    y.set_output(True)
    g.validate()
    sig = structure_signature(g)
    assert sig is not None
    entries = {TensorEntry._make(e).name: TensorEntry._make(e) for e in sig[4]}
    ex = entries["x"]
    assert (ex.dim, ex.stride, ex.data_type, ex.uid, ex.is_virtual, ex.owned) == (
        (1, 2, 3, 3), (18, 9, 3, 1), hipdnn.DataType.FLOAT, x.get_uid(), False, True)
    ey = entries[y.get_name()]
    assert ey.dim_inferred and ey.stride_inferred and ey.dim == (1, 2, 3, 3)


def test_graphs_differing_only_in_a_tensor_value_do_not_share_a_memo_entry() -> None:
    def graph(eps: float) -> hipdnn.Graph:
        g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT)
        x = g.tensor(name="x", dim=[1, 2, 1, 1])
        e = g.tensor(name="e", dim=[1, 1, 1, 1], is_pass_by_value=True, data_type=hipdnn.DataType.FLOAT)
        e.set_value(eps)
        y = g.add(x, e)
        y.set_output(True)
        g.validate()
        return g

    a, b = structure_signature(graph(1e-5)), structure_signature(graph(0.5))
    assert a is not None and b is not None and a != b
