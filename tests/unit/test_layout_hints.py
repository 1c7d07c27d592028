"""A channel mismatch caused by dims written in channels-last order (an NHWC array's shape given
as the tensor's dims) says so and gives the dims and strides to use (issues 33 and 29): before,
"channel mismatch: X has C=10 but the filter has C/groups=16" left the newcomer to find the
NCHW-dims/NHWC-strides rule in an example. Following the hint builds and runs right."""

from __future__ import annotations

import numpy as np
import pytest

import hipdnn
from hipdnn.core.errors import ValidationError

torch = pytest.importorskip("torch")
F = hipdnn.DataType.FLOAT


def _graph() -> hipdnn.Graph:
    return hipdnn.Graph(io_data_type=F, compute_data_type=F, intermediate_data_type=F)


def test_nhwc_shaped_input_to_a_conv(reference_only: None) -> None:
    a = np.random.default_rng(0).standard_normal((2, 10, 10, 16)).astype(np.float32)  # NHWC
    wa = np.random.default_rng(1).standard_normal((8, 16, 3, 3)).astype(np.float32)
    g = _graph()
    x, w = g.tensor_like(a, "x"), g.tensor_like(wa, "w")
    g.conv_fprop(x, w, padding=[1, 1], name="conv").set_output(True)
    with pytest.raises(ValidationError) as info:
        g.validate()
    msg = str(info.value)
    assert "channel mismatch: X has C=10 but the filter has C/groups=16" in msg
    assert "X's dims [2, 10, 10, 16] look like NHWC order" in msg
    assert 'dim=[2, 16, 10, 10], stride=hipdnn.packed_strides([2, 16, 10, 10], "NHWC")' in msg
    assert "a.transpose(0, 3, 1, 2)" in msg and "t.permute(0, 3, 1, 2)" in msg
    # the advice works: the transposed view (same memory) has NCHW dims and NHWC strides
    g = _graph()
    x, w = g.tensor_like(a.transpose(0, 3, 1, 2), "x"), g.tensor_like(wa, "w")
    assert x.get_stride() == list(hipdnn.packed_strides([2, 16, 10, 10], "NHWC"))
    y = g.conv_fprop(x, w, padding=[1, 1], name="conv").set_output(True)
    g.build()
    out = np.zeros(y.get_dim(), np.float32)
    g.execute({x: a.transpose(0, 3, 1, 2), w: wa, y: out})
    want = torch.nn.functional.conv2d(torch.from_numpy(a).permute(0, 3, 1, 2).double(),
                                      torch.from_numpy(wa).double(), padding=1).numpy()
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


def test_khwc_shaped_filter_and_5d_and_gradients() -> None:
    g = _graph()
    x = g.tensor(dim=[2, 16, 10, 10], name="x")
    w = g.tensor(dim=[8, 3, 3, 16], name="w")  # K, kh, kw, C
    g.conv_fprop(x, w, padding=[1, 1], name="conv").set_output(True)
    with pytest.raises(ValidationError, match=r"W's dims \[8, 3, 3, 16\] look like NHWC order.*"
                                              r"dim=\[8, 16, 3, 3\]"):
        g.validate()
    g = _graph()
    x = g.tensor(dim=[2, 4, 4, 4, 16], name="x")  # NDHWC-shaped
    w = g.tensor(dim=[8, 16, 1, 1, 1], name="w")
    g.conv_fprop(x, w, padding=[0, 0, 0], name="conv").set_output(True)
    with pytest.raises(ValidationError, match=r"NDHWC order.*dim=\[2, 16, 4, 4, 4\].*"
                                              r"t\.permute\(0, 4, 1, 2, 3\)"):
        g.validate()
    g = _graph()
    x = g.tensor(dim=[2, 6, 6, 16], name="x")
    dy = g.tensor(dim=[2, 8, 6, 6], name="dy")
    dw = g.conv_wgrad(x, dy, padding=[1, 1], name="wgrad")
    dw.set_dim([8, 16, 3, 3]).set_output(True)
    with pytest.raises(ValidationError, match=r"X's dims \[2, 6, 6, 16\] look like NHWC"):
        g.validate()


def test_batchnorm_parameters_of_the_last_axis() -> None:
    g = _graph()
    x = g.tensor(dim=[2, 10, 10, 16], name="x")
    scale, bias = (g.tensor(dim=[1, 16, 1, 1], name=n) for n in ("scale", "bias"))
    g.batchnorm(x, scale, bias, 1e-5, name="bn")[0].set_output(True)
    with pytest.raises(ValidationError, match=r"must have dims \[1, 10, 1, 1\]; X's dims "
                                              r"\[2, 10, 10, 16\] look like NHWC order"):
        g.validate()


def test_no_hint_for_other_mismatches() -> None:
    g = _graph()
    x = g.tensor(dim=[2, 10, 7, 7], name="x")
    w = g.tensor(dim=[8, 16, 3, 3], name="w")
    g.conv_fprop(x, w, padding=[1, 1], name="conv").set_output(True)
    with pytest.raises(ValidationError) as info:
        g.validate()
    assert "channel mismatch" in str(info.value) and "look like" not in str(info.value)
    g = _graph()
    x = g.tensor(dim=[2, 10, 4, 4], name="x")
    scale, bias = (g.tensor(dim=[1, 12, 1, 1], name=n) for n in ("scale", "bias"))
    g.batchnorm(x, scale, bias, 1e-5, name="bn")[0].set_output(True)
    with pytest.raises(ValidationError) as info:
        g.validate()
    assert "channel mismatch" in str(info.value) and "look like" not in str(info.value)
