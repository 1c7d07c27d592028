"""Reference kernels: pure numpy, compute in float32, return float32.

Inputs are logical N,C,(D),H,W arrays of any strides and dtype (float16, ``ml_dtypes.bfloat16``,
float32, float64); per-channel parameters have shape (C,) (any shape with C elements is accepted).
Used by CPU_REFERENCE_ENGINE and by the emulated MIOpen device in the tests.

Batchnorm follows DESIGN.md "Numerics" (MIOpen's definition, spatial mode):
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

from hipdnn.engines.reference._conv import conv_dgrad, conv_fprop, conv_wgrad
from hipdnn.engines.reference._parallel import map_chunks

__all__ = [
    "bn_backward",
    "bn_inference_inv_variance",
    "bn_inference_variance",
    "bn_running_update",
    "bn_train_forward",
    "conv_dgrad",
    "conv_fprop",
    "conv_wgrad",
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


def _bshape(x: np.ndarray) -> tuple[int, ...]:
    """Shape that broadcasts a (C,) vector over logical (N, C, *S)."""
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def _stat_axes(x: np.ndarray) -> tuple[int, ...]:
    """Every axis but the channel axis: spatial batchnorm statistics."""
    return (0, *range(2, x.ndim))


def _as_matrix(a: np.ndarray) -> tuple[str, np.ndarray] | None:
    """A no-copy view of a packed array: ("cf", (N, C, S)) or ("cl", (N*S, C)); None otherwise."""
    n, c = a.shape[0], a.shape[1]
    if a.flags.c_contiguous:
        return "cf", a.reshape(n, c, -1)
    cl = np.moveaxis(a, 1, -1)
    if cl.flags.c_contiguous:
        return "cl", cl.reshape(-1, c)
    return None


def _packed_f32(a: np.ndarray) -> np.ndarray:
    """float32 in the same memory order, made packed (channel-first) if it had gaps."""
    af = _f32(a)
    return af if _as_matrix(af) is not None else np.ascontiguousarray(af)


def _channel_sum(a: np.ndarray) -> np.ndarray:
    """Per-channel sum over N and spatial dims as float64 (C,); one einsum pass on packed data."""
    m = _as_matrix(a) if a.dtype == _F32 else None
    if m is None:
        return np.add.reduce(a, axis=_stat_axes(a), dtype=np.float64)
    kind, mat = m
    return np.einsum("ncs->c" if kind == "cf" else "mc->c", mat).astype(np.float64)


def _channel_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-channel sum of a*b over N and spatial dims as float64 (C,), without a temporary."""
    ma, mb = _as_matrix(a), _as_matrix(b)
    if ma is not None and mb is not None and ma[0] == mb[0] and a.dtype == b.dtype == _F32:
        if ma[0] == "cf":
            return np.einsum("ncs,ncs->c", ma[1], mb[1]).astype(np.float64)
        return np.einsum("mc,mc->c", ma[1], mb[1]).astype(np.float64)
    return _channel_sum(a * b)


def bn_train_forward(
    x: np.ndarray, scale: np.ndarray, bias: np.ndarray, eps: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Training batchnorm with batch statistics.

    Returns ``(y, mean, inv_var, unbiased_var)``; the last three have shape (C,).

    >>> y, m, iv, uv = bn_train_forward(np.array([[[1.0]], [[3.0]]]), [1.0], [0.0], 0.0)
    >>> y.ravel().tolist(), m.tolist(), iv.tolist(), uv.tolist()
    ([-1.0, 1.0], [2.0], [1.0], [2.0])
    """
    xf = _packed_f32(x)
    c = xf.shape[1]
    count = xf.size // c if c else 0
    g = _param(scale, c, "scale")
    b = _param(bias, c, "bias")
    shp = _bshape(xf)
    mean64 = np.sum(map_chunks(lambda sl: _channel_sum(xf[sl]), xf), axis=0) / max(count, 1)
    mean = mean64.astype(_F32).reshape(shp)

    def centred_square_sum(sl: slice) -> np.ndarray:
        d = xf[sl] - mean  # the chunk's temporary stays in cache
        return _channel_dot(d, d)

    var64 = np.sum(map_chunks(centred_square_sum, xf), axis=0) / max(count, 1)
    inv = (1.0 / np.sqrt(var64 + float(eps))).astype(_F32)
    a = (g * inv).reshape(shp)
    y = np.empty_like(xf)

    def normalise(sl: slice) -> None:
        np.subtract(xf[sl], mean, out=y[sl])
        y[sl] *= a
        y[sl] += b.reshape(shp)

    map_chunks(normalise, xf)
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
    """Inference batchnorm from a saved inverse standard deviation: ``scale*(x-mean)*inv_var + bias``."""
    xf = _f32(x)
    c = xf.shape[1]
    shp = _bshape(xf)
    a = _param(scale, c, "scale") * _param(inv_var, c, "inv_var")
    shift = _param(bias, c, "bias") - a * _param(mean, c, "mean")
    y = xf * a.reshape(shp)
    y += shift.reshape(shp)
    return y


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
    c = np.asarray(x).shape[1]
    v = _param(var, c, "var").astype(np.float64)
    inv = (1.0 / np.sqrt(v + float(eps))).astype(_F32)
    return bn_inference_inv_variance(x, scale, bias, mean, inv)


def bn_backward(
    dy: np.ndarray, x: np.ndarray, scale: np.ndarray, mean: np.ndarray, inv_var: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training batchnorm backward from the saved batch statistics.

    Returns ``(dx, dscale, dbias)``: dbias = sum(dy), dscale = sum(dy*xhat),
    dx = scale*inv_var*(dy - dbias/M - xhat*dscale/M) with xhat = (x-mean)*inv_var.
    """
    xf = _packed_f32(x)
    dyf = _packed_f32(dy)
    if dyf.shape != xf.shape:
        raise ValueError(f"batchnorm backward: dy shape {dyf.shape} != x shape {xf.shape}")
    c = xf.shape[1]
    count = max(xf.size // c if c else 0, 1)
    shp = _bshape(xf)
    inv = _param(inv_var, c, "inv_var")
    g = _param(scale, c, "scale")
    mean = _param(mean, c, "mean").reshape(shp)

    def sums(sl: slice) -> tuple[np.ndarray, np.ndarray]:  # sum(dy), sum(dy*(x-mean))
        return _channel_sum(dyf[sl]), _channel_dot(dyf[sl], xf[sl] - mean)

    parts = map_chunks(sums, xf)
    dbias = np.sum([p[0] for p in parts], axis=0)
    dscale = np.sum([p[1] for p in parts], axis=0) * inv
    k = g * inv
    # dx = k*dy - k*dbias/M - (x-mean)*(k*inv*dscale/M), chunk by chunk
    slope = (-(k * inv * dscale / count)).astype(_F32).reshape(shp)
    shift = (-(k * dbias / count)).astype(_F32).reshape(shp)
    kk = k.astype(_F32).reshape(shp)
    dx = np.empty_like(xf)

    def write(sl: slice) -> None:
        np.subtract(xf[sl], mean, out=dx[sl])
        dx[sl] *= slope
        dx[sl] += dyf[sl] * kk
        dx[sl] += shift

    map_chunks(write, xf)
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
