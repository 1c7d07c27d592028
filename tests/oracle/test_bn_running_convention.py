"""Batchnorm's running statistics convention, stated where users read it (issue 29, defect 8):
``momentum`` weighs the batch and the running variance is the unbiased batch variance, as in
cuDNN and PyTorch; ONNX weighs the previous value and takes the population variance. Through
the public graph API against PyTorch in float64 and against ONNX's formula, and the docstrings
say it."""

from __future__ import annotations

import numpy as np
import pytest

import hipdnn
import hipdnn.frontend as fe

torch = pytest.importorskip("torch")
F = hipdnn.DataType.FLOAT


def _run(x: np.ndarray, prev_rm: np.ndarray, prev_rv: np.ndarray, momentum: float,
         eps: float) -> dict[str, np.ndarray]:
    c = x.shape[1]
    g = hipdnn.Graph(io_data_type=F, compute_data_type=F, intermediate_data_type=F)
    X = g.tensor_like(x, "x")
    scale, bias, rm, rv = (g.tensor(dim=[1, c, 1, 1], name=n) for n in ("s", "b", "rm", "rv"))
    outs = g.batchnorm(X, scale, bias, eps, momentum=momentum, in_running_mean=rm,
                       in_running_var=rv)
    for t in outs:
        t.set_output(True)
    g.build()
    arrays = [np.full(t.get_dim(), np.nan, np.float32) for t in outs]
    g.execute({X: x, scale: np.ones((1, c, 1, 1), np.float32),
               bias: np.zeros((1, c, 1, 1), np.float32), rm: prev_rm, rv: prev_rv,
               **dict(zip(outs, arrays, strict=True))})
    return dict(zip(("y", "mean", "inv", "next_rm", "next_rv"), arrays, strict=True))


@pytest.mark.parametrize("momentum", [0.3, 0.9])
def test_running_statistics_are_cudnns_and_pytorchs(momentum: float) -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(1.5, 2.0, (3, 4, 5, 6)).astype(np.float32)
    prev_rm = rng.normal(0, 1, (1, 4, 1, 1)).astype(np.float32)
    prev_rv = rng.uniform(0.5, 2.0, (1, 4, 1, 1)).astype(np.float32)
    got = _run(x, prev_rm, prev_rv, momentum, 1e-5)
    rm, rv = (torch.from_numpy(a.ravel().astype(np.float64)) for a in (prev_rm, prev_rv))
    torch.nn.functional.batch_norm(torch.from_numpy(x).double(), rm, rv, training=True,
                                   momentum=momentum, eps=1e-5)
    np.testing.assert_allclose(got["next_rm"].ravel(), rm.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["next_rv"].ravel(), rv.numpy(), rtol=1e-5)
    # the other convention (momentum on the previous value, population variance) is far off
    m_count = 3 * 5 * 6
    var = x.astype(np.float64).var(axis=(0, 2, 3))
    onnx = momentum * prev_rv.ravel() + (1 - momentum) * var
    assert np.max(np.abs(got["next_rv"].ravel() - onnx)) > 1e-2
    # ... and the conversion the docs give reaches it: our momentum = 1 - ONNX's, then the
    # unbiased correction of the batch term taken off, var recovered from INV_VARIANCE
    ours = _run(x, prev_rm, prev_rv, 1 - momentum, 1e-5)
    var_back = 1 / ours["inv"].astype(np.float64) ** 2 - 1e-5
    onnx_from_ours = ours["next_rv"] - (1 - momentum) * var_back / (m_count - 1)
    np.testing.assert_allclose(onnx_from_ours.ravel(), onnx, rtol=1e-5)


def test_the_docstrings_state_the_convention() -> None:
    for doc in (hipdnn.Graph.batchnorm.__doc__, fe.BatchnormAttributes.__doc__):
        assert doc is not None
        text = " ".join(doc.split())
        assert "unbiased" in text and "(1 - momentum)*prev + momentum*batch" in text, text
        assert "ONNX" in text
    assert "1 - onnx_momentum" in " ".join((hipdnn.Graph.batchnorm.__doc__ or "").split())
