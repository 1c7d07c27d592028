"""An array that states its shape must hold the graph tensor it is given for.

Before, the gap-free rule ("one block at least as large as the tensor is read from its
pointer, as cuDNN does") applied to numpy arrays, torch tensors and DLPack/CAI objects too: an
NHWC-shaped array for NCHW dims, or a (2, 4, 16, 16) array for a (2, 4, 8, 8) tensor, ran with
no error and wrong numbers. Now such a value is a VariantPackError naming the tensor and both
shapes (with the strides to use for a permutation), the outputs untouched; reshapes that keep
memory order are accepted; raw pointers and ``hipdnn.by_pointer`` keep cuDNN's rule. Numbers
against torch on the CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import hipdnn
from hipdnn.core.errors import VariantPackError
from hipdnn.interop import buffers as interop

torch = pytest.importorskip("torch")
F = hipdnn.DataType.FLOAT


class DLOnly:
    """Only ``__dlpack__`` (delegating to the wrapped numpy array's or torch tensor's)."""

    def __init__(self, a: Any) -> None:
        self.a = a

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self.a.__dlpack_device__()


class CudaArray:
    """A ``__cuda_array_interface__`` object (over host memory: only its shape is looked at
    before the reference engine would refuse device memory)."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = a
        self.__cuda_array_interface__ = {
            "data": (a.ctypes.data, False), "shape": a.shape, "typestr": a.dtype.str,
            "strides": a.strides, "version": 3}


KINDS: dict[str, Callable[[np.ndarray], Any]] = {
    "numpy": lambda a: a,
    "torch": torch.from_numpy,
    "dlpack(numpy)": DLOnly,
    "dlpack(torch)": lambda a: DLOnly(torch.from_numpy(a)),
    "cuda_array_interface": CudaArray,
}


def _conv(c: int) -> tuple[hipdnn.Graph, hipdnn.Tensor, hipdnn.Tensor, hipdnn.Tensor]:
    g = hipdnn.Graph(io_data_type=F, compute_data_type=F, intermediate_data_type=F)
    x = g.tensor(dim=[2, c, 8, 8], name="x")
    w = g.tensor(dim=[4, c, 3, 3], name="w")
    y = g.conv_fprop(x, w, padding=[1, 1], name="conv").set_output(True)
    g.build()
    return g, x, w, y


def _torch_conv(xa: np.ndarray, wa: np.ndarray) -> np.ndarray:
    return torch.nn.functional.conv2d(torch.from_numpy(xa).double(), torch.from_numpy(wa).double(),
                                      padding=1).numpy()


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize(("c", "shape"), [(4, (2, 8, 8, 4)), (4, (2, 4, 16, 16)),
                                          (3, (2, 3, 9, 8))])
def test_an_input_of_another_shape_is_refused(reference_only: None, kind: str, c: int,
                                              shape: tuple[int, ...]) -> None:
    g, x, w, y = _conv(c)
    rng = np.random.default_rng(0)
    xa = rng.standard_normal(shape).astype(np.float32)
    wa = rng.standard_normal((4, c, 3, 3)).astype(np.float32)
    ya = np.full((2, 4, 8, 8), np.nan, np.float32)
    with pytest.raises(VariantPackError) as exc:
        g.execute({x: KINDS[kind](xa), w: wa, y: ya})
    msg = str(exc.value)
    assert exc.value.tensor == "x" and "tensor 'x'" in msg and "shape mismatch" in msg
    assert f"dim {(2, c, 8, 8)}" in msg and f"shape {shape}" in msg
    assert np.isnan(ya).all()  # nothing written
    if shape == (2, 8, 8, 4):  # a permutation: the transposed view and the strides to use
        assert "NHWC order" in msg and "a.transpose(0, 3, 1, 2)" in msg
        assert "t.permute(0, 3, 1, 2)" in msg and "strides (256, 1, 32, 4)" in msg
        assert 'hipdnn.packed_strides((2, 4, 8, 8), "NHWC")' in msg
        assert "by_pointer" not in msg  # reading it by pointer is the wrong answer
    else:
        assert "hipdnn.by_pointer(a)" in msg and f"{2 * c * 8 * 8 * 4} bytes" in msg
    # the hint works: the transposed view, with the tensor's strides set to it, runs right
    if shape == (2, 8, 8, 4) and kind == "numpy":
        x.set_stride(hipdnn.packed_strides([2, 4, 8, 8], "NHWC"))
        g.build()
        g.execute({x: xa.transpose(0, 3, 1, 2), w: wa, y: ya})
        np.testing.assert_allclose(ya, _torch_conv(xa.transpose(0, 3, 1, 2), wa),
                                   rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("kind", ["numpy", "torch", "dlpack(numpy)"])
def test_an_output_of_another_shape_is_refused(reference_only: None, kind: str) -> None:
    g, x, w, y = _conv(4)
    xa = np.ones((2, 4, 8, 8), np.float32)
    wa = np.ones((4, 4, 3, 3), np.float32)
    for shape in [(2, 8, 8, 4), (2, 4, 16, 16), (4, 4, 8, 8)]:
        ya = np.full(shape, np.nan, np.float32)
        with pytest.raises(VariantPackError, match=r"'conv::Y'.*shape mismatch"):
            g.execute({x: xa, w: wa, y: KINDS[kind](ya)})
        assert np.isnan(ya).all()


def test_the_hint_says_when_the_tensor_already_has_the_strides(reference_only: None) -> None:
    xt = torch.randn(2, 4, 8, 8).to(memory_format=torch.channels_last)
    wt = torch.randn(4, 4, 3, 3)
    g = hipdnn.Graph(io_data_type=F, compute_data_type=F, intermediate_data_type=F)
    x, w = g.tensor_like(xt, name="x"), g.tensor_like(wt, name="w")
    y = g.conv_fprop(x, w, padding=[1, 1], name="conv").set_output(True)
    g.build()
    nhwc = xt.permute(0, 2, 3, 1)  # what a user holding channels-last data may pass
    yt = torch.full((2, 4, 8, 8), float("nan"))
    with pytest.raises(VariantPackError, match=r"NHWC order.*t\.permute\(0, 3, 1, 2\).*"
                                               r"strides \(256, 1, 32, 4\) \(the tensor's own\)"):
        g.execute({x: nhwc.contiguous(), w: wt, y: yt})
    g.execute({x: nhwc.contiguous().permute(0, 3, 1, 2), w: wt, y: yt})
    torch.testing.assert_close(yt, torch.nn.functional.conv2d(xt, wt, padding=1),
                               rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_reshapes_that_keep_memory_order_are_accepted(kind: str) -> None:
    """(C,) or (1, C) for (1, C, 1, 1); size-1 axes added or left out; axes merged in order
    (a flat block of the tensor's size included)."""
    def fits(shape: tuple[int, ...], dim: tuple[int, ...], stride: Any = None) -> bool:
        t = hipdnn.Tensor(dim, stride or hipdnn.packed_strides(dim), F, name="t", uid=1)
        buf = interop.resolve(KINDS[kind](np.zeros(shape, np.float32)))
        return interop.check_against(buf, t, "execute")

    assert fits((3,), (1, 3, 1, 1)) is False
    assert fits((1, 3), (1, 3, 1, 1)) is False
    assert fits((2, 4, 8, 8), (2, 4, 1, 8, 8)) is False  # unsqueezed
    assert fits((2, 1, 8, 8), (2, 8, 8)) is False  # squeezed
    with pytest.raises(VariantPackError, match="NHWC order"):  # H = W = 2, C = 4: NHWC (1, 2,
        fits((1, 2, 2, 4), (1, 4, 2, 2))  # 2, 4) also regroups (1, 4, 2, 2); a permutation
    assert fits((2, 4, 64), (2, 4, 8, 8)) is False  # merged in order
    assert fits((512,), (2, 4, 8, 8)) is False  # flat
    nhwc = hipdnn.packed_strides((2, 4, 8, 8), "NHWC")
    assert fits((512,), (2, 4, 8, 8), nhwc) is False  # a flat block states no axis order
    for shape in [(2, 256), (2, 4, 64)]:  # row-major regroupings are not NHWC's order
        with pytest.raises(VariantPackError, match="shape mismatch"):
            fits(shape, (2, 4, 8, 8), nhwc)
    for shape in [(2, 8, 32), (4, 2, 8, 8), (2, 4, 8, 8, 2), (511,), (8, 8, 2, 4)]:
        with pytest.raises(VariantPackError, match="shape mismatch"):
            fits(shape, (2, 4, 8, 8))


def test_accepted_reshapes_give_torchs_numbers(reference_only: None) -> None:
    g = hipdnn.Graph(io_data_type=F, compute_data_type=F, intermediate_data_type=F)
    x = g.tensor(dim=[2, 4, 8, 8], name="x")
    w = g.tensor(dim=[4, 4, 3, 3], name="w")
    b = g.tensor(dim=[1, 4, 1, 1], name="b")
    y = g.bias(g.conv_fprop(x, w, padding=[1, 1], name="conv"), b, name="add").set_output(True)
    g.build()
    rng = np.random.default_rng(1)
    xa = rng.standard_normal((2, 4, 8, 8)).astype(np.float32)
    wa = rng.standard_normal((4, 4, 3, 3)).astype(np.float32)
    ba = rng.standard_normal(4).astype(np.float32)
    expected = _torch_conv(xa, wa) + ba.reshape(1, 4, 1, 1)
    y_flat = np.full(512, np.nan, np.float32)
    g.execute({x: torch.from_numpy(xa.reshape(2, 4, 64)), w: wa.reshape(4, 36),
               b: torch.from_numpy(ba), y: y_flat})
    np.testing.assert_allclose(y_flat.reshape(2, 4, 8, 8), expected, rtol=1e-5, atol=1e-4)


def test_raw_pointers_and_by_pointer_keep_cudnns_rule(reference_only: None) -> None:
    g, x, w, y = _conv(4)
    rng = np.random.default_rng(2)
    xa = rng.standard_normal((2, 4, 8, 8)).astype(np.float32)
    wa = rng.standard_normal((4, 4, 3, 3)).astype(np.float32)
    expected = _torch_conv(xa, wa)
    for wrap in (lambda a: a.ctypes.data, hipdnn.by_pointer,
                 lambda a: hipdnn.by_pointer(torch.from_numpy(a))):
        arena = np.full(600, np.nan, np.float32)  # larger than Y's 512 elements
        g.execute({x: xa, w: wa, y: wrap(arena)})
        np.testing.assert_allclose(arena[:512].reshape(2, 4, 8, 8), expected, rtol=1e-5,
                                   atol=1e-4)
        assert np.isnan(arena[512:]).all()
    small = np.zeros(500, np.float32)
    with pytest.raises(VariantPackError, match=r"'conv::Y'.*by_pointer.*at least 2048 bytes"):
        g.execute({x: xa, w: wa, y: hipdnn.by_pointer(small)})
    gappy = np.zeros(1200, np.float32)[::2]
    with pytest.raises(VariantPackError, match="one gap-free block"):
        g.execute({x: xa, w: wa, y: hipdnn.by_pointer(gappy)})
    with pytest.raises(VariantPackError, match="data type mismatch"):
        g.execute({x: xa, w: wa, y: hipdnn.by_pointer(np.zeros(600, np.float64))})
    with pytest.raises(VariantPackError, match="takes memory"):
        hipdnn.by_pointer(1.5)


def test_by_pointer_of_the_tensors_shape_uses_the_tensors_strides(reference_only: None) -> None:
    """Wrapped, even an array of the tensor's shape in another layout is memory: the tensor's
    strides from its pointer (unwrapped, its own strides are followed)."""
    g, x, w, y = _conv(4)
    xa = np.random.default_rng(3).standard_normal((2, 4, 8, 8)).astype(np.float32)
    wa = np.random.default_rng(4).standard_normal((4, 4, 3, 3)).astype(np.float32)
    out = np.full((2, 8, 8, 4), np.nan, np.float32).transpose(0, 3, 1, 2)  # NHWC memory
    g.execute({x: xa, w: wa, y: hipdnn.by_pointer(out)})
    np.testing.assert_allclose(out.transpose(0, 2, 3, 1).reshape(2, 4, 8, 8), _torch_conv(xa, wa),
                               rtol=1e-5, atol=1e-4)
