"""Adversarial buffers that are legal and must give the right answer (CPU_REFERENCE_ENGINE),
next to the catalog's refusals (test_catalog.py): an output that is its own input (in place) or
overlaps it shifted, inputs and outputs with negative strides, torch outputs that are permuted
or sliced views, and non-finite pass-by-value scalars (whose results are the IEEE answer).
Every result is compared with numpy on a copy of the inputs taken before the call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import hipdnn

D = hipdnn.DataType
SHAPE = (2, 3, 4, 4)
X = np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32)
RELU = np.maximum(X, 0)


def _relu() -> tuple[hipdnn.Graph, Any, Any]:
    g = hipdnn.Graph(io_data_type=D.FLOAT)
    x = g.tensor(dim=list(SHAPE), name="x")
    y = g.relu(x, name="act").set_output(True)
    g.build()
    return g, x, y


def _in_place() -> tuple[np.ndarray, np.ndarray]:
    a = X.copy()
    return a, a


def _shifted_overlap() -> tuple[np.ndarray, np.ndarray]:
    buf = np.concatenate([X.ravel(), X.ravel()])
    return buf[: X.size].reshape(SHAPE), buf[5 : 5 + X.size].reshape(SHAPE)


def _negative_strides() -> tuple[np.ndarray, np.ndarray]:
    flipped = np.ascontiguousarray(X[:, :, ::-1, :])[:, :, ::-1, :]  # X's values, strides < 0
    out = np.full(SHAPE, -7.0, np.float32)[::-1, :, :, ::-1]  # written through strides < 0
    return flipped, out


PACKS: dict[str, Callable[[], tuple[Any, Any]]] = {
    "in_place": _in_place,
    "output_overlaps_input_shifted": _shifted_overlap,
    "negative_strides": _negative_strides,
}


@pytest.mark.parametrize("make", list(PACKS.values()), ids=list(PACKS))
def test_legal_aliasing_and_strides_give_the_right_answer(make: Callable[[], tuple[Any, Any]]) -> None:
    g, x, y = _relu()
    xin, yout = make()
    want = np.maximum(np.array(xin, copy=True), 0)
    g.execute({x: xin, y: yout})
    np.testing.assert_array_equal(yout, want)
    g.close()


@pytest.mark.parametrize("view", ["permuted", "sliced", "negative_step_numpy_of_torch"])
def test_torch_outputs_that_are_views(view: str) -> None:
    torch = pytest.importorskip("torch")
    g, x, y = _relu()
    if view == "permuted":  # NCHW dims over NHWC memory
        out = torch.full((2, 4, 4, 3), -7.0).permute(0, 3, 1, 2)
    elif view == "sliced":  # every other element of the last axis; the others stay as they were
        full = torch.full((2, 3, 4, 8), -7.0)
        out = full[..., ::2]
    else:  # torch has no negative strides; a numpy view over torch memory does
        base = torch.full(SHAPE, -7.0)
        out = base.numpy()[:, :, ::-1, :]
    g.execute({x: torch.from_numpy(X.copy()), y: out})
    got = out.numpy() if hasattr(out, "numpy") else out
    np.testing.assert_array_equal(got, RELU)
    if view == "sliced":
        assert (full[..., 1::2] == -7.0).all()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), 1e39],
                         ids=["nan", "inf", "-inf", "1e39"])
def test_non_finite_pass_by_value_scalars_give_the_ieee_answer(value: float) -> None:
    """A multiplier scalar given at execute: x*value in float32, as numpy computes it (1e39 is
    inf in float32), never an error and never a stale value of an earlier execute."""
    g = hipdnn.Graph(io_data_type=D.FLOAT)
    x = g.tensor(dim=list(SHAPE), name="x")
    s = g.tensor(dim=[1, 1, 1, 1], name="s", is_pass_by_value=True)
    y = g.mul(x, s, name="m").set_output(True)
    g.build()
    out = np.full(SHAPE, -7.0, np.float32)
    g.execute({x: X, s: 2.0, y: out})
    np.testing.assert_array_equal(out, X * np.float32(2.0))
    with np.errstate(all="ignore"):
        want = X * np.float32(value)
    g.execute({x: X, s: value, y: out})
    np.testing.assert_array_equal(out, want)
    g.close()
