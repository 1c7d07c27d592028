"""Reference kernels: pure numpy, compute in float32, return float32.

Inputs are logical N,C,(D),H,W arrays of any strides and dtype (float16, ``ml_dtypes.bfloat16``,
float32, float64); per-channel parameters have shape (C,) (any shape with C elements is accepted).
Used by CPU_REFERENCE_ENGINE and by the emulated MIOpen device in the tests.

Batchnorm follows MIOpen's definition (spatial mode):
saved inverse variance = 1/sqrt(biased batch variance + eps); running mean
``(1-m)*old + m*mean``; running variance uses the unbiased variance ``var*M/(M-1)`` (M = N*spatial;
no correction when M == 1).

ReLU follows cuDNN/PyTorch: no clip = ``max(x, 0)``; lower/upper clip = ``clamp(x, lower, upper)``
(PyTorch ``hardtanh``); negative slope = leaky ReLU below the lower clip (default 0). The backward
passes dy where the forward input lies inside the passing region (``lower < x < upper``, strict, as
PyTorch's ``threshold_backward``/``hardtanh_backward``) and ``slope*dy`` below it for leaky ReLU.
NaN/Inf propagate as in PyTorch (a NaN forward input passes dy without an upper clip and blocks it
with one, as PyTorch's vectorised CPU kernels do).
"""

from __future__ import annotations

import numpy as np

from hipdnn.engines.reference import _bn
from hipdnn.engines.reference._conv import conv_deferred, conv_dgrad, conv_fprop, conv_wgrad
from hipdnn.engines.reference._stats import genstats, reduce

__all__ = [
    "bn_backward",
    "bn_backward_deferred",
    "bn_inference_inv_variance",
    "bn_inference_inv_variance_deferred",
    "bn_inference_variance",
    "bn_inference_variance_deferred",
    "bn_running_update",
    "bn_train_forward",
    "bn_train_forward_deferred",
    "conv_deferred",
    "conv_dgrad",
    "conv_fprop",
    "conv_wgrad",
    "genstats",
    "reduce",
    "relu_backward",
    "relu_forward",
]

_F32 = np.float32


def _f32(a: np.ndarray) -> np.ndarray:
    """float32 view/copy that keeps the memory order of ``a``."""
    return np.asarray(a).astype(_F32, copy=False)


def _param(p: np.ndarray | float, c: int, name: str) -> np.ndarray:
    """Per-channel parameter as float32 (C,)."""
    arr = np.asarray(p, dtype=_F32).reshape(-1)
    if arr.size != c:
        raise ValueError(f"batchnorm parameter {name} has {arr.size} elements, expected C={c}")
    return arr


def bn_train_forward(
    x: np.ndarray, scale: np.ndarray, bias: np.ndarray, eps: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Training batchnorm with batch statistics.

    Returns ``(y, mean, inv_var, unbiased_var)``; the last three have shape (C,).

    >>> y, m, iv, uv = bn_train_forward(np.array([[[1.0]], [[3.0]]]), [1.0], [0.0], 0.0)
    >>> y.ravel().tolist(), m.tolist(), iv.tolist(), uv.tolist()
    ([-1.0, 1.0], [2.0], [1.0], [2.0])
    """
    y, mean, inv, unbiased = bn_train_forward_deferred(x, scale, bias, eps)
    return y.materialize(), mean, inv, unbiased


def bn_train_forward_deferred(
    x: np.ndarray, scale: np.ndarray, bias: np.ndarray, eps: float
) -> tuple[_bn.Deferred, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`bn_train_forward` with y's element-wise pass not yet run (a :class:`_bn.Deferred`
    the engine can write straight into the caller's buffer)."""
    xa = np.asarray(x)
    c = xa.shape[1]
    count = xa.size // c if c else 0
    y, mean64, var64, inv = _bn.train_forward_deferred(xa, _param(scale, c, "scale"),
                                                       _param(bias, c, "bias"), eps)
    unbiased = var64 * (count / (count - 1)) if count > 1 else var64
    return y, mean64.astype(_F32), inv, unbiased.astype(_F32)


def bn_running_update(
    running_mean: np.ndarray,
    running_var: np.ndarray,
    mean: np.ndarray,
    unbiased_var: np.ndarray,
    momentum: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Exponential running statistics: ``(1-m)*old + m*new`` for mean and (unbiased) variance.

    >>> [a.tolist() for a in bn_running_update([0.0], [1.0], [2.0], [3.0], 0.5)]
    [[1.0], [2.0]]
    """
    m = float(momentum)
    rm = np.asarray(running_mean, dtype=_F32).reshape(-1)
    rv = np.asarray(running_var, dtype=_F32).reshape(-1)
    c = rm.size
    new_mean = (1.0 - m) * rm + m * _param(mean, c, "mean")
    new_var = (1.0 - m) * rv + m * _param(unbiased_var, c, "unbiased_var")
    return new_mean.astype(_F32), new_var.astype(_F32)


def bn_inference_inv_variance(
    x: np.ndarray, scale: np.ndarray, bias: np.ndarray, mean: np.ndarray, inv_var: np.ndarray
) -> np.ndarray:
    """Inference batchnorm from a saved inverse standard deviation: ``scale*(x-mean)*inv_var + bias``.

    As ``x*a + (bias - a*mean)`` (``a = scale*inv_var``), PyTorch's CPU form; on offset data
    (``|mean|*inv_var > MAX_MEAN_STDS`` for a channel), where ``x*a`` and ``a*mean`` would
    cancel, as ``(x - mean)*a + bias`` (``x - mean`` is exact near the mean).

    >>> bn_inference_inv_variance(np.full((1, 1, 1), 1000.5, np.float32), [1.0], [0.0],
    ...                           [1000.0], [100.0]).ravel().tolist()
    [50.0]
    """
    return bn_inference_inv_variance_deferred(x, scale, bias, mean, inv_var).materialize()


def bn_inference_inv_variance_deferred(
    x: np.ndarray, scale: np.ndarray, bias: np.ndarray, mean: np.ndarray, inv_var: np.ndarray
) -> _bn.Deferred:
    """:func:`bn_inference_inv_variance` as a :class:`_bn.Deferred` (its element-wise pass not
    yet run: the engine can write it straight into the caller's buffer)."""
    xa = np.asarray(x)
    c = xa.shape[1]
    inv, m = _param(inv_var, c, "inv_var"), _param(mean, c, "mean")
    a = _param(scale, c, "scale") * inv
    b = _param(bias, c, "bias")
    if np.all(~(np.abs(m) * np.abs(inv) > _bn.MAX_MEAN_STDS)):
        return _bn.affine_deferred(xa, a, b - a * m)
    return _bn.affine_deferred(xa, a, b, m)


def bn_inference_variance(
    x: np.ndarray,
    scale: np.ndarray,
    bias: np.ndarray,
    mean: np.ndarray,
    var: np.ndarray,
    eps: float,
) -> np.ndarray:
    """Inference batchnorm from a variance: ``scale*(x-mean)/sqrt(var+eps) + bias``.

    >>> bn_inference_variance(np.full((1, 1, 1), 3.0), [2.0], [1.0], [1.0], [4.0], 0.0).ravel().tolist()
    [3.0]
    """
    return bn_inference_variance_deferred(x, scale, bias, mean, var, eps).materialize()


def bn_inference_variance_deferred(
    x: np.ndarray,
    scale: np.ndarray,
    bias: np.ndarray,
    mean: np.ndarray,
    var: np.ndarray,
    eps: float,
) -> _bn.Deferred:
    """:func:`bn_inference_variance` as a :class:`_bn.Deferred`."""
    c = np.asarray(x).shape[1]
    v = _param(var, c, "var").astype(np.float64)
    inv = (1.0 / np.sqrt(v + float(eps))).astype(_F32)
    return bn_inference_inv_variance_deferred(x, scale, bias, mean, inv)


def bn_backward(
    dy: np.ndarray, x: np.ndarray, scale: np.ndarray, mean: np.ndarray, inv_var: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training batchnorm backward from the saved batch statistics.

    Returns ``(dx, dscale, dbias)``: dbias = sum(dy), dscale = sum(dy*xhat),
    dx = scale*inv_var*(dy - dbias/M - xhat*dscale/M) with xhat = (x-mean)*inv_var.
    """
    dx, dscale, dbias = bn_backward_deferred(dy, x, scale, mean, inv_var)
    return dx.materialize(), dscale, dbias


def bn_backward_deferred(
    dy: np.ndarray, x: np.ndarray, scale: np.ndarray, mean: np.ndarray, inv_var: np.ndarray
) -> tuple[_bn.Deferred, np.ndarray, np.ndarray]:
    """:func:`bn_backward` with dx's element-wise pass not yet run (a :class:`_bn.Deferred`)."""
    xa, dya = np.asarray(x), np.asarray(dy)
    if dya.shape != xa.shape:
        raise ValueError(f"batchnorm backward: dy shape {dya.shape} != x shape {xa.shape}")
    c = xa.shape[1]
    dx, dscale, dbias = _bn.backward_deferred(dya, xa, _param(scale, c, "scale"),
                                              _param(mean, c, "mean"), _param(inv_var, c, "inv_var"))
    return dx, dscale.astype(_F32), dbias.astype(_F32)


def relu_forward(
    x: np.ndarray,
    lower_clip: float | None = None,
    upper_clip: float | None = None,
    negative_slope: float | None = None,
) -> np.ndarray:
    """ReLU family: ``max(x, lower)``, optionally ``min(., upper)``; leaky below ``lower`` with a slope.

    >>> relu_forward(np.array([-2.0, 0.5, 3.0]), upper_clip=1.0).tolist()
    [0.0, 0.5, 1.0]
    >>> relu_forward(np.array([-2.0, 3.0]), negative_slope=0.5).tolist()
    [-1.0, 3.0]
    """
    xf = _f32(x)
    lo = _F32(0.0 if lower_clip is None else lower_clip)
    if negative_slope is not None and float(negative_slope) != 0.0:
        # leaky: continuous at the lower clip; NaN falls into the slope branch and stays NaN
        y = np.where(xf > lo, xf, lo + _F32(negative_slope) * (xf - lo)).astype(_F32)
    else:
        y = np.maximum(xf, lo)
    if upper_clip is not None:
        np.minimum(y, _F32(upper_clip), out=y)
    return y


def relu_backward(
    dy: np.ndarray,
    x: np.ndarray,
    lower_clip: float | None = None,
    upper_clip: float | None = None,
    negative_slope: float | None = None,
) -> np.ndarray:
    """Gradient of :func:`relu_forward` at forward input ``x``: dy where lower < x < upper.

    >>> relu_backward(np.ones(3), np.array([-1.0, 0.5, 2.0]), upper_clip=1.0).tolist()
    [0.0, 1.0, 0.0]
    """
    xf = _f32(x)
    dyf = _f32(dy)
    lo = _F32(0.0 if lower_clip is None else lower_clip)
    zero = _F32(0.0)
    below = xf <= lo  # NaN compares False: passes dy like PyTorch
    if negative_slope is not None and float(negative_slope) != 0.0:
        dx = np.where(xf > lo, dyf, _F32(negative_slope) * dyf).astype(_F32)
    else:
        dx = np.where(below, zero, dyf).astype(_F32)
    if upper_clip is not None:
        # clipped: only lower < x < upper passes; NaN is blocked (PyTorch hardtanh_backward, MIOpen CLAMP)
        dx[~(xf < _F32(upper_clip))] = zero
    return dx
