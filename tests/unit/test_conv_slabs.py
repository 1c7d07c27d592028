"""The reference convolutions run large problems in slabs of images and output rows so the
im2col/col2im columns stay bounded (a cudnn-frontend fuzzer 3-D config needed 41 GiB at once);
forced here with a tiny limit and checked against PyTorch autograd in float64. Slabs are the
numpy implementation's (the compiled one tiles by itself, tests/oracle/test_conv_paths.py), so
the compiled loops are switched off here."""

from __future__ import annotations

import numpy as np
import pytest

from hipdnn.engines.reference import _conv as C

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("seed", range(12))
def test_slabbed_conv_matches_torch(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    rng = np.random.default_rng(seed)
    nsp = 2 + seed % 2
    n, g = int(rng.integers(1, 4)), int(rng.choice([1, 2]))
    c, k = g * int(rng.integers(1, 4)), g * int(rng.integers(1, 4))
    ks = [int(rng.integers(1, 4)) for _ in range(nsp)]
    st = [int(rng.integers(1, 3)) for _ in range(nsp)]
    dl = [int(rng.integers(1, 3)) for _ in range(nsp)]
    pad = [int(rng.integers(0, 3)) for _ in range(nsp)]
    sp = [int(rng.integers(dl[i] * (ks[i] - 1) + 1, 9)) for i in range(nsp)]
    x = rng.standard_normal((n, c, *sp)).astype(np.float32)
    if seed % 3 == 0:  # channels-last memory
        x = np.moveaxis(np.ascontiguousarray(np.moveaxis(x, 1, -1)), -1, 1)
    w = rng.standard_normal((k, c // g, *ks)).astype(np.float32)
    conv = torch.nn.functional.conv2d if nsp == 2 else torch.nn.functional.conv3d
    xt = torch.from_numpy(np.ascontiguousarray(x)).double().requires_grad_()
    wt = torch.from_numpy(w).double().requires_grad_()
    yt = conv(xt, wt, stride=st, padding=pad, dilation=dl, groups=g)
    dy = rng.standard_normal(tuple(yt.shape)).astype(np.float32)
    yt.backward(torch.from_numpy(dy).double())
    monkeypatch.setenv("HIPDNN_REFERENCE_JIT", "0")
    limit = 1 if seed % 2 else 200  # one output row per slab, or several rows/images
    monkeypatch.setattr(C, "COLUMN_BYTES_LIMIT", limit)
    if limit == 1:
        assert C._slabs(n, yt.shape[2:], ks, c, pad, pad, st, dl, 4) is not None
    np.testing.assert_allclose(C.conv_fprop(x, w, pad, pad, st, dl, g),
                               yt.detach().numpy(), atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(C.conv_dgrad(dy, w, x.shape, pad, pad, st, dl, g),
                               xt.grad.numpy(), atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(C.conv_wgrad(x, dy, w.shape, pad, pad, st, dl, g),
                               wt.grad.numpy(), atol=1e-4, rtol=1e-4)
