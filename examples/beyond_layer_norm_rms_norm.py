"""Beyond AMD's provider: the graph API's layer norm and RMS norm on MIOpen's own calls.

    python examples/beyond_layer_norm_rms_norm.py

A transformer block's norms, X (batch, sequence, embedding) normalized over the embedding:
layer norm forward in TRAINING (mean and inverse standard deviation kept) and its backward, RMS
norm (FP16) forward and backward. On MIOPEN_ENGINE: miopenLayerNormForward /
miopenLayerNormBackward (MIOpen >= 3.5) and the T5 layer norm calls for RMS norm; without MIOpen
the CPU engine runs them (the report says which engine ran and why). Checked against PyTorch
(float64 numpy without it). MIOpen keeps the scale, bias and statistics in the data type of X,
so the FP16 graph gives them as HALF.
"""

from __future__ import annotations

import numpy as np
from _check import check, report, torch

import hipdnn

F32, F16 = hipdnn.DataType.FLOAT, hipdnn.DataType.HALF
EPS = 1e-5


def _graph(dtype: hipdnn.DataType) -> hipdnn.Graph:
    return hipdnn.Graph(io_data_type=dtype, intermediate_data_type=F32, compute_data_type=F32)


def _reference(x: np.ndarray, scale: np.ndarray, bias: np.ndarray | None, dy: np.ndarray) -> dict[str, np.ndarray]:
    """y, mean, inv_std and the gradients in float64: PyTorch's layer_norm / rms_norm and
    autograd when installed, else numpy (RMS norm: ``bias`` None)."""
    if torch is not None:
        xt = torch.from_numpy(x.astype(np.float64)).requires_grad_()
        st = torch.from_numpy(scale.astype(np.float64)).requires_grad_()
        bt = None if bias is None else torch.from_numpy(bias.astype(np.float64)).requires_grad_()
        if bt is None:
            y = torch.nn.functional.rms_norm(xt, (x.shape[-1],), st.reshape(-1), EPS)
            mean = torch.zeros_like(xt[..., :1])
        else:
            y = torch.nn.functional.layer_norm(xt, (x.shape[-1],), st.reshape(-1), bt.reshape(-1), EPS)
            mean = xt.mean(-1, keepdim=True)
        inv = torch.rsqrt(((xt - mean) ** 2).mean(-1, keepdim=True) + EPS)
        y.backward(torch.from_numpy(dy.astype(np.float64)))
        out = {"y": y, "mean": mean, "inv": inv, "dx": xt.grad, "dscale": st.grad}
        if bt is not None:
            out["dbias"] = bt.grad
        return {k: v.detach().numpy() for k, v in out.items() if v is not None}
    x = x.astype(np.float64)
    scale = scale.astype(np.float64)
    rms = bias is None
    mean = np.zeros_like(x[..., :1]) if rms else x.mean(-1, keepdims=True)
    inv = 1.0 / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + EPS)
    xhat = (x - mean) * inv
    y = xhat * scale + (0.0 if bias is None else bias.astype(np.float64))
    g = dy.astype(np.float64) * scale
    dx = g - xhat * (g * xhat).mean(-1, keepdims=True)
    if not rms:
        dx -= g.mean(-1, keepdims=True)
    dx *= inv
    dscale = (dy * xhat).sum(axis=(0, 1), keepdims=True)
    return {"y": y, "mean": mean, "inv": inv, "dx": dx, "dscale": dscale,
            "dbias": dy.astype(np.float64).sum(axis=(0, 1), keepdims=True)}


def layer_norm(rng: np.random.Generator) -> bool:
    x = rng.standard_normal((2, 7, 64)).astype(np.float32)
    scale = (rng.random((1, 1, 64)) + 0.5).astype(np.float32)
    bias = rng.standard_normal((1, 1, 64)).astype(np.float32)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    ref = _reference(x, scale, bias, dy)
    ok = True

    g = _graph(F32)
    X, S, B = (g.tensor_like(a, name=n) for a, n in ((x, "x"), (scale, "scale"), (bias, "bias")))
    Y, MEAN, INV = g.layernorm("TRAINING", X, S, B, epsilon=EPS, name="ln")
    for t in (Y, MEAN, INV):
        t.set_output(True)
    g.build()
    report(g)
    y, mean, inv = np.empty_like(x), np.empty((2, 7, 1), np.float32), np.empty((2, 7, 1), np.float32)
    g.execute({X: x, S: scale, B: bias, Y: y, MEAN: mean, INV: inv}, _workspace(g))
    ok &= check("layer norm y", y, ref["y"], 1e-4, 1e-4)
    ok &= check("layer norm mean", mean, ref["mean"], 1e-5, 1e-5)
    ok &= check("layer norm inv_variance", inv, ref["inv"], 1e-4, 1e-4)

    gb = _graph(F32)
    DY, X2, S2, M2, I2 = (gb.tensor_like(a, name=n) for a, n in
                          ((dy, "dy"), (x, "x"), (scale, "scale"), (mean, "mean"), (inv, "inv")))
    DX, DS, DB = gb.layernorm_backward(DY, X2, S2, M2, I2, name="ln_bwd")
    for t in (DX, DS, DB):
        t.set_output(True)
    gb.build()
    report(gb)
    dx, ds, db = np.empty_like(x), np.empty_like(scale), np.empty_like(bias)
    gb.execute({DY: dy, X2: x, S2: scale, M2: mean, I2: inv, DX: dx, DS: ds, DB: db}, _workspace(gb))
    ok &= check("layer norm dx", dx, ref["dx"], 1e-4, 1e-4)
    ok &= check("layer norm dscale", ds, ref["dscale"], 1e-4, 1e-4)
    ok &= check("layer norm dbias", db, ref["dbias"], 1e-4, 1e-4)
    return ok


def rms_norm(rng: np.random.Generator) -> bool:
    x = rng.standard_normal((2, 7, 64)).astype(np.float16)
    scale = (rng.random((1, 1, 64)) + 0.5).astype(np.float16)
    dy = rng.standard_normal(x.shape).astype(np.float16)
    ref = _reference(x, scale, None, dy)
    ok = True

    g = _graph(F16)
    X, S = g.tensor_like(x, name="x"), g.tensor_like(scale, name="scale")
    Y, INV = g.rmsnorm("TRAINING", X, S, epsilon=EPS, name="rms")
    Y.set_output(True)
    INV.set_output(True).set_data_type(F16)  # MIOpen writes the statistics in X's type
    g.build()
    report(g)
    y, inv = np.empty_like(x), np.empty((2, 7, 1), np.float16)
    g.execute({X: x, S: scale, Y: y, INV: inv}, _workspace(g))
    ok &= check("RMS norm y", y, ref["y"], 1e-2, 1e-2)
    ok &= check("RMS norm inv_variance", inv, ref["inv"], 1e-2, 1e-2)

    gb = _graph(F16)
    DY, X2, S2, I2 = (gb.tensor_like(a, name=n) for a, n in ((dy, "dy"), (x, "x"), (scale, "scale"),
                                                              (inv, "inv")))
    DX, DS, _ = gb.rmsnorm_backward(DY, X2, S2, I2, False, name="rms_bwd")
    DX.set_output(True)
    DS.set_output(True)
    gb.build()
    report(gb)
    dx, ds = np.empty_like(x), np.empty_like(scale)
    gb.execute({DY: dy, X2: x, S2: scale, I2: inv, DX: dx, DS: ds}, _workspace(gb))
    # the reference's statistics are exact, the graph's the saved FP16 ones: FP16's tolerance
    ok &= check("RMS norm dx", dx, ref["dx"], 2e-2, 2e-2)
    ok &= check("RMS norm dscale", ds, ref["dscale"], 5e-2, 1e-2)
    return ok


def _workspace(graph: hipdnn.Graph) -> np.ndarray | None:
    size = graph.get_workspace_size()
    return np.empty(size, np.uint8) if size else None


def main() -> int:
    rng = np.random.default_rng(11)
    ok = layer_norm(rng)
    ok &= rms_norm(rng)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
