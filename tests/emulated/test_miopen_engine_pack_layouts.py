"""MIOPEN_ENGINE passes variant-pack buffers by pointer in the graph tensor's layout: a buffer of
the tensor's shape in another layout is refused with the strides to use (the reference engine
would read it through its own strides), and a larger gap-free buffer given by pointer (an int,
or ``hipdnn.by_pointer``) holds the tensor from its data pointer, as cuDNN does. Over the emulated device (MIOpen 3.4 and 3.5)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hipdnn
from hipdnn.core.errors import VariantPackError, WorkspaceError
from hipdnn.core.shapes import packed_strides


def _graph() -> tuple[hipdnn.Graph, hipdnn.Tensor, hipdnn.Tensor, hipdnn.Tensor]:
    g = hipdnn.Graph(io_data_type=hipdnn.DataType.FLOAT, compute_data_type=hipdnn.DataType.FLOAT)
    x = g.tensor(dim=[1, 4, 6, 6], stride=packed_strides((1, 4, 6, 6), "NHWC"), name="x")
    w = g.tensor(dim=[8, 4, 3, 3], stride=packed_strides((8, 4, 3, 3), "NHWC"), name="w")
    y = g.conv_fprop(x, w, padding=[1, 1], name="conv").set_output(True)
    g.build([hipdnn.HeurMode.A])
    assert g.get_plan_name_at_index(0).startswith("MIOPEN_ENGINE")
    return g, x, w, y


def _torch_conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """PyTorch's convolution (padding 1), the oracle: the emulated device computes with the
    project's own reference kernels, so those may not judge it."""
    torch = pytest.importorskip("torch")
    return torch.nn.functional.conv2d(torch.from_numpy(np.ascontiguousarray(x)),
                                      torch.from_numpy(np.ascontiguousarray(w)), padding=1).numpy()


def _ws(g: hipdnn.Graph) -> np.ndarray:
    return np.zeros(g.get_workspace_size(), np.uint8)


def _nhwc(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)


def test_buffer_in_another_layout_is_refused_with_the_strides(emulated_miopen_engine: Any) -> None:
    g, x, w, y = _graph()
    rng = np.random.default_rng(0)
    xa = _nhwc(rng.standard_normal((1, 4, 6, 6)).astype(np.float32))
    wa = _nhwc(rng.standard_normal((8, 4, 3, 3)).astype(np.float32))
    packed_y = np.zeros((1, 8, 6, 6), np.float32)  # NCHW, the graph's Y is NHWC
    with pytest.raises(VariantPackError, match=r"'conv::Y'.*passes buffers by pointer.*stride "
                                               r"\(288, 1, 48, 8\)"):
        g.execute({x: xa, w: wa, y: packed_y}, _ws(g))
    assert not packed_y.any()  # refused before any call
    out = _nhwc(np.zeros((1, 8, 6, 6), np.float32))
    g.execute({x: xa, w: wa, y: out}, _ws(g))
    expected = _torch_conv(xa, wa)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_larger_buffer_holds_the_tensor_from_its_pointer(emulated_miopen_engine: Any) -> None:
    g, x, w, y = _graph()
    rng = np.random.default_rng(1)
    xa = _nhwc(rng.standard_normal((1, 4, 6, 6)).astype(np.float32))
    wa = _nhwc(rng.standard_normal((8, 4, 3, 3)).astype(np.float32))
    big = np.full(400, np.nan, np.float32)  # 288 elements needed
    with pytest.raises(VariantPackError, match=r"'conv::Y'.*shape mismatch.*by_pointer"):
        g.execute({x: xa, w: wa, y: big}, _ws(g))  # an array states its shape
    assert np.isnan(big).all()
    g.execute({x: xa, w: wa, y: hipdnn.by_pointer(big)}, _ws(g))
    got = np.lib.stride_tricks.as_strided(big, (1, 8, 6, 6), tuple(4 * s for s in y.stride))
    expected = _torch_conv(xa, wa)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert np.isnan(big[288:]).all()


@pytest.mark.parametrize(("role", "pointer", "error", "match"), [
    ("x", 2**64 + 4096, VariantPackError, "does not fit in 64 bits"),
    ("x", 2**64 - 16, VariantPackError, "ends past the 64-bit address space"),
    ("workspace", 2**64 + 4096, WorkspaceError, "does not fit in 64 bits"),
    ("workspace", 2**64 - 16, WorkspaceError, "past the 64-bit address space"),
])
def test_pointer_ints_beyond_64_bits_are_refused(emulated_miopen_engine: Any, role: str,
                                                 pointer: int, error: type[Exception],
                                                 match: str) -> None:
    # ctypes passes the low 64 bits of a larger int: MIOpen was handed another address
    # (0x1000 for 2**64 + 4096), or a tensor wrapping around the address space
    g, x, w, y = _graph()
    rng = np.random.default_rng(2)
    pack: dict[Any, Any] = {x: _nhwc(rng.standard_normal((1, 4, 6, 6)).astype(np.float32)),
                            w: _nhwc(rng.standard_normal((8, 4, 3, 3)).astype(np.float32)),
                            y: _nhwc(np.full((1, 8, 6, 6), -7.0, np.float32))}
    workspace: Any = _ws(g)
    if role == "x":
        pack[x] = pointer
    else:
        assert g.get_workspace_size() > 0
        workspace = pointer
    with pytest.raises(error, match=match):
        g.execute(pack, workspace)
    assert (pack[y] == -7.0).all()
