"""Layernorm, RMSnorm and instancenorm, forward and backward, in float64.

``axes`` are the normalized axes; ``scale``/``bias`` and the statistics are given and returned
with keepdims shapes that broadcast against ``x``. Statistics are two-pass float64 (mean, then
the mean of squared deviations), so large offsets cost no accuracy; callers round the results.
"""

from __future__ import annotations

import numpy as np

__all__ = ["norm_backward", "norm_forward"]

_F64 = np.float64


def norm_forward(x: np.ndarray, axes: tuple[int, ...], scale: np.ndarray,
                 bias: np.ndarray | None, eps: float,
                 rms: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(y, mean, inv_variance); RMSnorm (``rms``) has mean 0 and inv_variance = 1/rms."""
    xd = np.asarray(x, dtype=_F64)
    if rms:
        mean = np.zeros([1 if i in axes else d for i, d in enumerate(xd.shape)], _F64)
        centered = xd
    else:
        mean = xd.mean(axis=axes, keepdims=True)
        centered = xd - mean
    var = np.square(centered).mean(axis=axes, keepdims=True)
    inv = 1.0 / np.sqrt(var + eps)
    y = centered * inv * np.asarray(scale, _F64)
    if bias is not None:
        y += np.asarray(bias, _F64)
    return y, mean, inv


def norm_backward(dy: np.ndarray, x: np.ndarray, axes: tuple[int, ...], scale: np.ndarray,
                  mean: np.ndarray | None,
                  inv: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dx, dscale, dbias) from the saved statistics; ``mean`` None for RMSnorm.

    dx = inv * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * scale, xhat the normalized x
    (RMSnorm drops the mean(g) term); dscale/dbias sum over the axes where scale's dim is 1.
    """
    dyd = np.asarray(dy, _F64)
    invd = np.asarray(inv, _F64)
    xhat = np.asarray(x, _F64) if mean is None else np.asarray(x, _F64) - np.asarray(mean, _F64)
    xhat *= invd
    g = dyd * np.asarray(scale, _F64)
    proj = (g * xhat).mean(axis=axes, keepdims=True)
    dx = g - xhat * proj
    if mean is not None:
        dx -= g.mean(axis=axes, keepdims=True)
    dx *= invd
    param_axes = tuple(i for i, d in enumerate(np.shape(scale)) if d == 1 and dyd.shape[i] != 1)
    dscale = (dyd * xhat).sum(axis=param_axes, keepdims=True)
    dbias = dyd.sum(axis=param_axes, keepdims=True)
    return dx, dscale, dbias
