"""The emulated kernels' math: MIOpen's activation formulas and per-mode batchnorm on numpy arrays.

Convolution and spatial batchnorm come from hipdnn's reference kernels (an independent oracle
checks those against PyTorch); per-activation batchnorm reuses them by folding C,H,W into the
channel axis. Activation follows MIOpen's own formula table and its backward gating (which
differs from cuDNN/PyTorch at the clip boundaries), so it is written out here.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hipdnn.engines.reference import kernels

from ._core import BAD_PARM, NOT_IMPLEMENTED, Status, require

__all__ = [
    "ACTIVATION_NAMES",
    "activation_backward",
    "activation_forward",
    "bn_apply_inv",
    "bn_backward",
    "bn_batch_stats",
    "bn_inference",
    "bn_train",
]

F32 = np.float32

ACTIVATION_NAMES = {
    0: "PASTHRU", 1: "LOGISTIC", 2: "TANH", 3: "RELU", 4: "SOFTRELU", 5: "ABS", 6: "POWER",
    7: "CLIPPEDRELU", 8: "LEAKYRELU", 9: "ELU", 10: "CLAMP",
}


def _power(base: np.ndarray, g: np.float32) -> np.ndarray:
    """MIOpenNeuron.cl's POWER: ``base <= EPSILON ? 0 : pow(base, gamma)`` (EPSILON 1e-6, fp32)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(base <= F32(1e-6), F32(0), np.power(base, g))


def activation_forward(mode: int, x: np.ndarray, alpha: float, beta: float, gamma: float) -> np.ndarray:
    """MIOpen's activation forward on float32 ``x`` (alpha/beta/gamma as in miopenActivationMode_t)."""
    a, b, g = F32(alpha), F32(beta), F32(gamma)
    table: dict[int, Callable[[], np.ndarray]] = {
        0: lambda: x.copy(),
        1: lambda: 1 / (1 + np.exp(-x)),
        2: lambda: b * np.tanh(a * x),
        3: lambda: np.maximum(x, F32(0)),
        4: lambda: np.log1p(np.exp(x)),
        5: lambda: np.abs(x),
        6: lambda: _power(a + b * x, g),  # MIOpenNeuron.cl: 0 where the base <= EPSILON
        7: lambda: np.minimum(np.maximum(x, F32(0)), a),
        8: lambda: np.where(x > 0, x, a * x),
        9: lambda: np.where(x > 0, x, a * np.expm1(x)),
        10: lambda: np.maximum(a, np.minimum(b, x)),
    }
    require(mode in table, f"unknown activation mode {mode}", BAD_PARM)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(table[mode](), dtype=F32)


def activation_backward(
    mode: int, dy: np.ndarray, x: np.ndarray, y: np.ndarray, alpha: float, beta: float, gamma: float
) -> np.ndarray:
    """MIOpen's activation backward: dx from dy, the forward input x and output y."""
    a, b = F32(alpha), F32(beta)
    zero = F32(0)
    table: dict[int, Callable[[], np.ndarray]] = {
        0: lambda: dy.copy(),
        1: lambda: dy * y * (1 - y),
        2: lambda: dy * a * (b - y * y / b) if b != 0 else np.zeros_like(dy),
        3: lambda: np.where(x > 0, dy, zero),
        5: lambda: dy * np.sign(x),
        7: lambda: np.where((x > 0) & (x <= a), dy, zero),
        8: lambda: np.where(x > 0, dy, a * dy),
        9: lambda: np.where(x > 0, dy, dy * (y + a)),
        10: lambda: np.where((x > a) & (x <= b), dy, zero),
    }
    if mode not in table:
        raise Status(NOT_IMPLEMENTED, f"activation backward for mode {ACTIVATION_NAMES.get(mode, mode)} is not emulated")
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(table[mode](), dtype=F32)


def _fold(x: np.ndarray, spatial: bool) -> np.ndarray:
    """Per-activation mode = spatial mode over a (N, C*H*W, 1) view."""
    return x if spatial else x.reshape(x.shape[0], -1, 1)


def bn_train(
    x: np.ndarray, scale: np.ndarray, bias: np.ndarray, eps: float, spatial: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(y, mean, inv_std, unbiased_var); statistics flattened (C,) or (C*H*W,)."""
    y, mean, inv, unbiased = kernels.bn_train_forward(_fold(x, spatial), scale.ravel(), bias.ravel(), eps)
    return y.reshape(x.shape), mean, inv, unbiased


def bn_inference(
    x: np.ndarray, scale: np.ndarray, bias: np.ndarray, mean: np.ndarray, var: np.ndarray,
    eps: float, spatial: bool,
) -> np.ndarray:
    """Inference with an estimated (not inverse) variance."""
    y = kernels.bn_inference_variance(_fold(x, spatial), scale.ravel(), bias.ravel(), mean.ravel(), var.ravel(), eps)
    return y.reshape(x.shape)


def bn_apply_inv(
    x: np.ndarray, scale: np.ndarray, bias: np.ndarray, mean: np.ndarray, inv_std: np.ndarray, spatial: bool
) -> np.ndarray:
    """``scale*(x-mean)*inv_std + bias`` (the BN output recomputed from saved statistics)."""
    y = kernels.bn_inference_inv_variance(_fold(x, spatial), scale.ravel(), bias.ravel(), mean.ravel(), inv_std.ravel())
    return y.reshape(x.shape)


def bn_backward(
    dy: np.ndarray, x: np.ndarray, scale: np.ndarray, mean: np.ndarray, inv_std: np.ndarray, spatial: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dx, dscale, dbias) from the saved mean and inverse standard deviation."""
    dx, dscale, dbias = kernels.bn_backward(_fold(dy, spatial), _fold(x, spatial), scale.ravel(), mean.ravel(), inv_std.ravel())
    return dx.reshape(x.shape), dscale, dbias


def bn_batch_stats(x: np.ndarray, eps: float, spatial: bool) -> tuple[np.ndarray, np.ndarray]:
    """(mean, inv_std) of the batch, as backward recomputes them when none were saved."""
    c = _fold(x, spatial).shape[1]
    _, mean, inv, _ = kernels.bn_train_forward(_fold(x, spatial), np.ones(c, F32), np.zeros(c, F32), eps)
    return mean, inv
