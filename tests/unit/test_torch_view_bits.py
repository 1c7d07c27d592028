"""Issue 9, defect 4: torch views with the negative or conjugate bit.

``z.conj().imag`` shares ``z``'s memory but shows the values negated (torch's negative bit);
before the fix it was read as ``z.imag`` (max error 2.41). As an input such a view is now read
through a resolved copy (``resolve_conj().resolve_neg()``), made on every execute and before every
run of a binding, so later changes to the view are seen; as an output it is refused with a
VariantPackError naming the tensor (results written to a copy would be lost), outputs untouched.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hipdnn

torch = pytest.importorskip("torch")
F32 = hipdnn.DataType.FLOAT
SENTINEL = -7.25


def _relu() -> tuple[hipdnn.Graph, Any, Any]:
    g = hipdnn.Graph(io_data_type=F32)
    x = g.tensor(dim=[2, 3, 4, 4], name="x")
    y = g.relu(x).set_output(True).set_name("y")
    g.build()
    return g, x, y


def _views() -> dict[str, Any]:
    torch.manual_seed(0)
    z = torch.randn(2, 3, 4, 4, dtype=torch.complex64)
    r = torch.randn(2, 3, 4, 4)
    return {"conj_imag": z.conj().imag, "neg_view": torch._neg_view(r),
            "neg_view_channels_last": torch._neg_view(r.to(memory_format=torch.channels_last))}


@pytest.mark.parametrize("kind", sorted(_views()))
def test_negative_view_input_is_read_with_its_sign(kind: str) -> None:
    g, x, y = _relu()
    v = _views()[kind]
    assert v.is_neg()
    out = torch.full((2, 3, 4, 4), SENTINEL)
    g.execute({x: v, y: out})
    torch.testing.assert_close(out, torch.relu(v), rtol=0, atol=0)


def test_plain_then_negative_view_of_the_same_memory_are_not_confused() -> None:
    """z.imag and z.conj().imag have the same pointer, shape and strides: execute's remembered
    binding for one must not serve the other."""
    g, x, y = _relu()
    z = torch.randn(2, 3, 4, 4, dtype=torch.complex64)
    out = torch.empty(2, 3, 4, 4)
    for v in (z.imag, z.conj().imag, z.imag, z.conj().imag, z.conj().imag):
        out.fill_(SENTINEL)
        g.execute({x: v, y: out})
        torch.testing.assert_close(out, torch.relu(v), rtol=0, atol=0)


def test_binding_of_a_negative_view_sees_later_changes() -> None:
    g, x, y = _relu()
    z = torch.randn(2, 3, 4, 4, dtype=torch.complex64)
    v = z.conj().imag
    out = torch.empty(2, 3, 4, 4)
    run = g.bind({x: v, y: out})
    run()
    torch.testing.assert_close(out, torch.relu(v), rtol=0, atol=0)
    z.imag.mul_(-3.0)  # the view's values change in place
    run()
    torch.testing.assert_close(out, torch.relu(v), rtol=0, atol=0)


@pytest.mark.parametrize("call", ["execute", "bind"])
def test_negative_view_output_is_refused(call: str) -> None:
    g, x, y = _relu()
    zo = torch.complex(torch.full((2, 3, 4, 4), SENTINEL), torch.full((2, 3, 4, 4), SENTINEL))
    xs = torch.randn(2, 3, 4, 4)
    with pytest.raises(hipdnn.VariantPackError, match=r"output tensor 'y'.*negative bit"):
        getattr(g, call)({x: xs, y: zo.conj().imag})
    assert bool((zo.real == SENTINEL).all()) and bool((zo.imag == SENTINEL).all())
    other = torch.full((2, 3, 4, 4), SENTINEL)
    with pytest.raises(hipdnn.VariantPackError, match=r"'y'.*resolve_neg"):
        getattr(g, call)({x: xs, y: torch._neg_view(other)})
    assert bool((other == SENTINEL).all())


def test_negative_view_scalar_input() -> None:
    """A pass-by-value scalar given as a negative view is read with its sign too."""
    g = hipdnn.Graph(io_data_type=F32)
    x = g.tensor(dim=[1, 2, 2, 2], name="x")
    s = g.tensor(dim=[1, 1, 1, 1], name="s")
    y = g.mul(x, s).set_output(True)
    g.build()
    xs = np.ones((1, 2, 2, 2), np.float32)
    ys = np.zeros_like(xs)
    g.execute({x: xs, s: torch._neg_view(torch.full((1, 1, 1, 1), 2.0)), y: ys})
    assert (ys == -2.0).all()
