"""Batchnorm training step (batch statistics + running statistics) and its backward pass.

    python examples/batchnorm_train_backward.py

Numerics as MIOpen defines them: saved inverse variance 1/sqrt(biased var + eps); running
variance updated with the unbiased variance (M/(M-1), M = N*H*W).
"""

from __future__ import annotations

import numpy as np
from _check import report

import hipdnn

F32 = hipdnn.DataType.FLOAT


def main() -> int:
    rng = np.random.default_rng(2)
    n, c, h, w = 4, 6, 5, 5
    x = rng.normal(3.0, 2.0, (n, c, h, w)).astype(np.float32)
    dy = rng.normal(0.0, 1.0, (n, c, h, w)).astype(np.float32)
    scale, bias = np.full(c, 1.5, np.float32), np.full(c, 0.5, np.float32)
    run_mean, run_var = np.zeros(c, np.float32), np.ones(c, np.float32)
    eps, momentum = 1e-5, 0.1

    # forward: y, saved mean / inverse variance, updated running statistics
    fwd = hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    xt = fwd.tensor_like(x, "x")
    st, bt, rmt, rvt = (fwd.tensor(dim=[1, c, 1, 1], data_type=F32, name=k)
                        for k in ("scale", "bias", "running_mean", "running_var"))
    outs = fwd.batchnorm(xt, st, bt, eps, momentum=momentum, in_running_mean=rmt,
                         in_running_var=rvt)
    results = {}
    pack = {xt: x, st: scale, bt: bias, rmt: run_mean, rvt: run_var}
    for key, t in zip(("y", "mean", "inv_var", "next_mean", "next_var"), outs, strict=True):
        t.set_output(True)
        results[key] = pack[t] = np.zeros(t.get_dim(), np.float32)
    fwd.build()
    report(fwd)
    fwd.execute(pack)

    # backward: dx, dscale, dbias from the saved statistics
    bwd = hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    dyt, xt2 = bwd.tensor_like(dy, "dy"), bwd.tensor_like(x, "x")
    st2, mt, it = (bwd.tensor(dim=[1, c, 1, 1], data_type=F32, name=k)
                   for k in ("scale", "mean", "inv_var"))
    dxt, dst, dbt = bwd.batchnorm_backward(dyt, xt2, st2, mt, it)
    grads = {}
    pack2 = {dyt: dy, xt2: x, st2: scale, mt: results["mean"], it: results["inv_var"]}
    for key, t in zip(("dx", "dscale", "dbias"), (dxt, dst, dbt), strict=True):
        t.set_output(True)
        grads[key] = pack2[t] = np.zeros(t.get_dim(), np.float32)
    bwd.build()
    report(bwd)
    bwd.execute(pack2)
    print("engines:", fwd.get_plan_name(), "/", bwd.get_plan_name())

    # the same step in float64 numpy
    axes, m = (0, 2, 3), n * h * w
    mean, var = x.mean(axis=axes, dtype=np.float64), x.var(axis=axes, dtype=np.float64)
    inv = 1.0 / np.sqrt(var + eps)
    xhat = (x - mean.reshape(1, c, 1, 1)) * inv.reshape(1, c, 1, 1)
    dbias = dy.sum(axis=axes, dtype=np.float64)
    dscale = (dy * xhat).sum(axis=axes)
    expected = {
        "y": xhat * 1.5 + 0.5, "mean": mean, "inv_var": inv,
        "next_mean": momentum * mean, "next_var": (1 - momentum) + momentum * var * m / (m - 1),
        "dx": (1.5 * inv).reshape(1, c, 1, 1) / m
        * (m * dy - dbias.reshape(1, c, 1, 1) - xhat * dscale.reshape(1, c, 1, 1)),
        "dscale": dscale, "dbias": dbias,
    }
    ok = True
    for key, got in {**results, **grads}.items():
        want = expected[key].reshape(got.shape)
        err = float(np.abs(got - want).max())
        good = bool(np.all(np.abs(got - want) <= 1e-4 + 1e-4 * np.abs(want)))
        ok &= good
        print(f"  {key:<10} max abs error {err:.2e} {'ok' if good else 'FAIL'}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
