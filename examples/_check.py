"""Shared by the examples: say which engine ran and why the others did not, and compare a result
with an independent computation (PyTorch on the CPU when installed, else float64 numpy).

Not part of the package: the examples import it from their own folder.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    import torch
except ImportError:  # numpy only
    torch = None

BACKEND = "PyTorch (CPU)" if torch is not None else "numpy (float64)"


def report(graph: Any) -> None:
    """Print the plan that runs, what it runs, and each other engine's reason."""
    plan = graph.plans[0]
    print(f"engine: {plan.engine.name}  plan: {plan.name}")
    print(f"  runs: {plan.describe()}")
    for engine, why in graph.engine_reasons().items():
        if engine != plan.engine.name:
            print(f"  not used: {engine}: {why or 'can run this graph, ranked lower'}")


def workspace(graph: Any) -> Any:
    """The workspace the selected plan needs (None when it needs none); host memory is fine:
    hipdnn stages host buffers for MIOpen."""
    size = graph.get_workspace_size()
    return np.empty(size, np.uint8) if size else None


def check(name: str, got: Any, want: Any, atol: float, rtol: float) -> bool:
    """PASS/FAIL line for one output: |got - want| <= atol + rtol * |want| everywhere."""
    g = np.asarray(got, np.float64)
    w = np.asarray(want, np.float64)
    ok = g.shape == w.shape and bool(np.all(np.abs(g - w) <= atol + rtol * np.abs(w)))
    err = float(np.abs(g - w).max()) if g.shape == w.shape else float("inf")
    print(f"{name}: max abs error vs {BACKEND}: {err:.2e} -> {'PASS' if ok else 'FAIL'}")
    return ok


def _t(a: Any) -> Any:
    return torch.from_numpy(np.asarray(a, np.float64))


# ---------------------------------------------------------------------------- references (float64)


def conv_fprop(x: Any, w: Any, pad: int) -> np.ndarray:
    if torch is not None:
        return torch.nn.functional.conv2d(_t(x), _t(w), padding=pad).numpy()
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    kh, kw = w.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho, wo = xp.shape[2] - kh + 1, xp.shape[3] - kw + 1
    y = np.zeros((x.shape[0], w.shape[0], ho, wo))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + ho, j:j + wo], w[:, :, i, j])
    return y


def conv_dgrad(dy: Any, w: Any, x_shape: tuple[int, ...], pad: int) -> np.ndarray:
    if torch is not None:
        return torch.nn.grad.conv2d_input(x_shape, _t(w), _t(dy), padding=pad).numpy()
    dy, w = np.asarray(dy, np.float64), np.asarray(w, np.float64)
    kh, kw = w.shape[2:]
    n, c, h, wd = x_shape
    dxp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad))
    ho, wo = dy.shape[2:]
    for i in range(kh):
        for j in range(kw):
            dxp[:, :, i:i + ho, j:j + wo] += np.einsum("nkhw,kc->nchw", dy, w[:, :, i, j])
    return dxp[:, :, pad:pad + h, pad:pad + wd]


def conv_wgrad(x: Any, dy: Any, w_shape: tuple[int, ...], pad: int) -> np.ndarray:
    if torch is not None:
        return torch.nn.grad.conv2d_weight(_t(x), w_shape, _t(dy), padding=pad).numpy()
    x, dy = np.asarray(x, np.float64), np.asarray(dy, np.float64)
    kh, kw = w_shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho, wo = dy.shape[2:]
    dw = np.zeros(w_shape)
    for i in range(kh):
        for j in range(kw):
            dw[:, :, i, j] = np.einsum("nkhw,nchw->kc", dy, xp[:, :, i:i + ho, j:j + wo])
    return dw


def _c(v: Any) -> np.ndarray:
    return np.asarray(v, np.float64).reshape(1, -1, 1, 1)


def bn_inference(x: Any, mean: Any, var: Any, scale: Any, bias: Any, eps: float) -> np.ndarray:
    if torch is not None:
        return torch.nn.functional.batch_norm(
            _t(x), _t(mean).flatten(), _t(var).flatten(), _t(scale).flatten(),
            _t(bias).flatten(), training=False, eps=eps).numpy()
    x = np.asarray(x, np.float64)
    return (x - _c(mean)) / np.sqrt(_c(var) + eps) * _c(scale) + _c(bias)


def bn_training(x: Any, scale: Any, bias: Any, eps: float) -> tuple[np.ndarray, np.ndarray,
                                                                   np.ndarray]:
    """(y, batch mean, saved inverse standard deviation 1/sqrt(biased var + eps))."""
    x = np.asarray(x, np.float64)
    mean = x.mean(axis=(0, 2, 3))
    var = x.var(axis=(0, 2, 3))
    if torch is not None:
        y = torch.nn.functional.batch_norm(_t(x), None, None, _t(scale).flatten(),
                                           _t(bias).flatten(), training=True, eps=eps).numpy()
    else:
        y = (x - _c(mean)) / np.sqrt(_c(var) + eps) * _c(scale) + _c(bias)
    return y, mean, 1.0 / np.sqrt(var + eps)


def bn_backward(dy: Any, x: Any, scale: Any, eps: float) -> tuple[
        np.ndarray, np.ndarray, np.ndarray]:
    """(dx, dscale, dbias) of batchnorm training, whose saved mean and inverse standard deviation
    are x's batch statistics (as the examples feed them)."""
    if torch is not None:
        xt = _t(x).requires_grad_(True)
        s = _t(scale).flatten().requires_grad_(True)
        b = torch.zeros_like(s, requires_grad=True)
        torch.nn.functional.batch_norm(xt, None, None, s, b, training=True, eps=eps).backward(_t(dy))
        return xt.grad.numpy(), s.grad.numpy(), b.grad.numpy()
    x, dy = np.asarray(x, np.float64), np.asarray(dy, np.float64)
    m = x.shape[0] * x.shape[2] * x.shape[3]
    inv_std = 1.0 / np.sqrt(x.var(axis=(0, 2, 3), keepdims=True) + eps)
    xh = (x - x.mean(axis=(0, 2, 3), keepdims=True)) * inv_std
    dxhat = dy * _c(scale)
    dx = inv_std / m * (m * dxhat - dxhat.sum(axis=(0, 2, 3), keepdims=True)
                        - xh * (dxhat * xh).sum(axis=(0, 2, 3), keepdims=True))
    return dx, (dy * xh).sum(axis=(0, 2, 3)), dy.sum(axis=(0, 2, 3))
