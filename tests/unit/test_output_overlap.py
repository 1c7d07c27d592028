"""Issue 9, defect 3: an op result whose elements overlap is refused, inputs may broadcast.

Before the fix an output with ``set_stride([0, 0, 0, 0])`` or ``[1, 1, 1, 1]`` built and ran,
writing 96 results into 1 or 10 memory elements. Now a graph output or a virtual intermediate
(which the engine keeps in its workspace) with self-overlapping strides fails validation with
a ValidationError naming the tensor, and an output buffer whose own strides overlap (an
``as_strided`` or ``expand`` view) fails execute with a VariantPackError naming the tensor,
leaving memory untouched. Inputs may broadcast with stride 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hipdnn
from hipdnn.core.shapes import overlap_free

F32 = hipdnn.DataType.FLOAT
SENTINEL = -7.25


@pytest.mark.parametrize(("dim", "stride", "free"), [
    ([2, 3, 4, 4], [48, 16, 4, 1], True),  # NCHW
    ([2, 3, 4, 4], [48, 1, 12, 3], True),  # NHWC
    ([2, 3, 4, 4], [96, 32, 8, 2], True),  # gaps are fine
    ([1, 3, 1, 1], [0, 1, 0, 0], True),  # size-1 axes: stride unused
    ([1, 1, 1, 1], [0, 0, 0, 0], True),
    ([2, 3, 4, 4], [0, 0, 0, 0], False),
    ([2, 3, 4, 4], [1, 1, 1, 1], False),
    ([2, 3, 4, 4], [48, 16, 4, 0], False),
    ([2, 3, 4, 4], [48, 16, 3, 1], False),  # rows overlap by one element
    ([2, 3, 4, 4], [48, 4, 4, 1], False),  # channels alias rows
    ([2, 3], [3, 2], False),  # interleaved: distinct addresses, still refused (documented)
    ([4, 5], [5, 1], True),
    ([4, 5], [0, 1], False),
    ([2, 3, 4, 4], [48, 16, 4, -1], True),  # a reversed view walks its axis backwards
    ([2, 3, 4, 4], [-48, 16, -4, 1], True),
    ([2, 3, 4, 4], [48, 16, -3, 1], False),
])
def test_overlap_free(dim: list[int], stride: list[int], free: bool) -> None:
    assert overlap_free(dim, stride) is free


def _relu_graph(out_stride: list[int] | None) -> tuple[hipdnn.Graph, Any, Any]:
    g = hipdnn.Graph(io_data_type=F32)
    x = g.tensor(dim=[2, 3, 4, 4], name="x")
    y = g.relu(x).set_output(True).set_name("y")
    if out_stride is not None:
        y.set_stride(out_stride)
    return g, x, y


@pytest.mark.parametrize("stride", [[0, 0, 0, 0], [1, 1, 1, 1], [48, 16, 4, 0], [16, 0, 4, 1],
                                    [48, 16, 3, 1]])
def test_overlapping_output_strides_fail_validation(stride: list[int]) -> None:
    g, _x, _y = _relu_graph(stride)
    with pytest.raises(hipdnn.ValidationError, match=r"tensor 'y'.*output strides.*overlap"):
        g.build()
    with pytest.raises(hipdnn.ValidationError, match=r"'y'"):
        g.validate()


def test_overlapping_intermediate_fails_validation() -> None:
    g = hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32)
    x = g.tensor(dim=[2, 3, 4, 4], name="x")
    mid = g.relu(x).set_name("mid").set_stride([0, 0, 0, 0])
    g.mul(mid, x).set_output(True).set_name("y")
    with pytest.raises(hipdnn.ValidationError, match=r"tensor 'mid'.*intermediate strides"):
        g.build()


def test_overlapping_conv_output_and_bn_statistics() -> None:
    g = hipdnn.Graph(io_data_type=F32)
    x = g.tensor(dim=[1, 2, 5, 5], name="x")
    w = g.tensor(dim=[3, 2, 3, 3], name="w")
    g.conv_fprop(x, w, padding=[1, 1]).set_output(True).set_name("cy").set_stride([25, 0, 5, 1])
    with pytest.raises(hipdnn.ValidationError, match="tensor 'cy'"):
        g.build()
    g = hipdnn.Graph(io_data_type=F32)
    x = g.tensor(dim=[2, 3, 4, 4], name="x")
    s, b = (g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("scale", "bias"))
    y, mean, inv_var, *_ = g.batchnorm(x, s, b, 1e-5)
    assert y is not None and mean is not None and inv_var is not None
    for t in (y, inv_var):
        t.set_output(True)
    mean.set_output(True).set_name("mean").set_stride([3, 0, 1, 1])
    with pytest.raises(hipdnn.ValidationError, match="tensor 'mean'"):
        g.build()


def test_size_one_output_axes_take_any_stride() -> None:
    g = hipdnn.Graph(io_data_type=F32)
    x = g.tensor(dim=[1, 3, 1, 1], name="x")
    y = g.relu(x).set_output(True).set_stride([0, 1, 0, 7])
    g.build()
    xs = np.array([-1.0, 2.0, -3.0], np.float32).reshape(1, 3, 1, 1)
    ys = np.full((1, 3, 1, 1), SENTINEL, np.float32)
    g.execute({x: xs, y: ys})
    np.testing.assert_array_equal(ys, np.maximum(xs, 0))


def test_inputs_may_broadcast_with_stride_zero() -> None:
    g = hipdnn.Graph(io_data_type=F32)
    x = g.tensor(dim=[2, 3, 4, 4], stride=[0, 1, 0, 0], name="x")  # one value per channel
    b = g.tensor(dim=[2, 3, 4, 4], name="b")
    y = g.add(x, b).set_output(True)
    g.build()
    per_channel = np.array([1.0, -2.0, 3.0], np.float32)
    xs = np.lib.stride_tricks.as_strided(per_channel, (2, 3, 4, 4), (0, 4, 0, 0))
    bs = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float32)
    ys = np.full((2, 3, 4, 4), SENTINEL, np.float32)
    g.execute({x: xs, b: bs, y: ys})
    np.testing.assert_allclose(ys, per_channel.reshape(1, 3, 1, 1) + bs, rtol=1e-6)
    # a read-only broadcast view is fine for an input too
    ys[:] = SENTINEL
    g.execute({x: np.broadcast_to(per_channel.reshape(1, 3, 1, 1), (2, 3, 4, 4)),
               b: bs, y: ys})
    np.testing.assert_allclose(ys, per_channel.reshape(1, 3, 1, 1) + bs, rtol=1e-6)


@pytest.mark.parametrize("byte_strides", [(0, 16, 16, 4), (0, 0, 0, 0), (4, 4, 4, 4)])
def test_overlapping_output_buffer_fails_execute(byte_strides: tuple[int, ...]) -> None:
    g, x, y = _relu_graph(None)
    g.build()
    base = np.full(200, SENTINEL, np.float32)
    ys = np.lib.stride_tricks.as_strided(base, (2, 3, 4, 4), byte_strides)
    xs = np.ones((2, 3, 4, 4), np.float32)
    with pytest.raises(hipdnn.VariantPackError, match=r"output tensor 'y'.*overlap"):
        g.execute({x: xs, y: ys})
    with pytest.raises(hipdnn.VariantPackError, match=r"output tensor 'y'.*overlap"):
        g.bind({x: xs, y: ys})
    assert (base == SENTINEL).all()


def test_expanded_torch_output_fails_execute() -> None:
    torch = pytest.importorskip("torch")
    g, x, y = _relu_graph(None)
    g.build()
    base = torch.full((1, 3, 4, 4), SENTINEL)
    with pytest.raises(hipdnn.VariantPackError, match=r"output tensor 'y'.*overlap"):
        g.execute({x: torch.ones(2, 3, 4, 4), y: base.expand(2, 3, 4, 4)})
    assert bool((base == SENTINEL).all())


def _two_outputs() -> tuple[hipdnn.Graph, Any, Any, Any]:
    g = hipdnn.Graph(io_data_type=F32)
    x = g.tensor(dim=[2, 3, 4, 4], name="x")
    y1 = g.relu(x).set_output(True).set_name("y1")
    y2 = g.mul(x, x).set_output(True).set_name("y2")
    g.build()
    return g, x, y1, y2


def test_two_outputs_in_one_buffer_are_refused() -> None:
    g, x, y1, y2 = _two_outputs()
    base = np.full(144, SENTINEL, np.float32)
    xs = np.linspace(-1, 1, 96, dtype=np.float32).reshape(2, 3, 4, 4)
    with pytest.raises(hipdnn.VariantPackError, match=r"'y1'.*'y2'.*share memory"):
        g.execute({x: xs, y1: base[:96].reshape(2, 3, 4, 4), y2: base[48:].reshape(2, 3, 4, 4)})
    assert (base == SENTINEL).all()


def test_interleaved_outputs_and_in_place_inputs_are_fine() -> None:
    """Views of one block that share no element (a[..., ::2], a[..., 1::2]) are separate
    outputs; an output may alias an input (in place)."""
    g, x, y1, y2 = _two_outputs()
    block = np.full((2, 3, 4, 8), SENTINEL, np.float32)
    xs = np.linspace(-1, 1, 96, dtype=np.float32).reshape(2, 3, 4, 4)
    g.execute({x: xs, y1: block[..., ::2], y2: block[..., 1::2]})
    np.testing.assert_array_equal(block[..., ::2], np.maximum(xs, 0))
    np.testing.assert_array_equal(block[..., 1::2], xs * xs)
    inplace = xs.copy()
    other = np.empty_like(xs)
    g.execute({x: inplace, y1: inplace, y2: other})
    np.testing.assert_array_equal(inplace, np.maximum(xs, 0))
    np.testing.assert_array_equal(other, xs * xs)


def test_reversed_numpy_output_is_written_through_its_strides() -> None:
    # An output of the tensor's shape with a negative stride (a[..., ::-1], np.flip) has
    # distinct elements; it was refused as "make its elements overlap". The reference engine
    # writes it through its own strides, as it reads reversed inputs.
    torch = pytest.importorskip("torch")
    g = hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    x = g.tensor(dim=[4, 3, 5, 5], name="x")
    s = g.tensor(dim=[1, 3, 1, 1], name="s")
    b = g.tensor(dim=[1, 3, 1, 1], name="b")
    y, mean, inv_var, _, _ = g.batchnorm(x, s, b, epsilon=1e-5)
    z = g.relu(x).set_output(True)
    for t in (y, mean, inv_var):
        assert t is not None
        t.set_output(True)
    g.build()
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((4, 3, 5, 5)).astype(np.float32)
    ss, bs = (rng.standard_normal((1, 3, 1, 1)).astype(np.float32) for _ in range(2))
    ys = np.full((4, 3, 5, 5), SENTINEL, np.float32)[::-1, :, :, ::-1]
    zs = np.flip(np.full((4, 3, 5, 5), SENTINEL, np.float32), 2)
    means = np.full((1, 3, 1, 1), SENTINEL, np.float32)[:, ::-1]
    inv = np.full((1, 3, 1, 1), SENTINEL, np.float32)
    g.execute({x: xs, s: ss, b: bs, y: ys, mean: means, inv_var: inv, z: zs})
    ref = torch.nn.functional.batch_norm(torch.from_numpy(xs), None, None,
                                         torch.from_numpy(ss.ravel()),
                                         torch.from_numpy(bs.ravel()), training=True, eps=1e-5)
    np.testing.assert_allclose(ys, ref.numpy(), rtol=4e-3, atol=4e-3)
    np.testing.assert_allclose(means.ravel(), xs.mean((0, 2, 3)), rtol=4e-3, atol=4e-3)
    assert np.array_equal(zs, np.maximum(xs, 0))
    # another shape with a negative stride is still refused: its data pointer is its last
    # element, so the tensor could not be laid out from it
    out = np.full(400, SENTINEL, np.float32)
    with pytest.raises(hipdnn.VariantPackError, match="shape mismatch"):
        g.execute({x: xs, s: ss, b: bs, y: out[::-1][:300], mean: means, inv_var: inv, z: zs})
    assert (out == SENTINEL).all()
