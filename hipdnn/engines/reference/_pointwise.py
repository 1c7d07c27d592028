"""Pointwise modes of the reference engine: FP32 numpy, broadcasting size-1 dims like numpy."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hipdnn.core.types import PointwiseMode
from hipdnn.engines.reference import kernels as K

__all__ = ["POINTWISE_OPS", "pointwise"]

_F32 = np.float32
M = PointwiseMode


def _bool(a: np.ndarray) -> np.ndarray:
    return a.astype(_F32)


def _select(a: np.ndarray, b: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """BINARY_SELECT: IN_0 where the mask (IN_2) is non-zero, else IN_1."""
    out: np.ndarray = np.where(mask != 0, a, b)
    return out


def _sigmoid(a: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-a))


def _erf(a: np.ndarray) -> np.ndarray:
    """erf in float64 (numpy has none): its Maclaurin series below |x| 0.5, else 1 - erfc with
    Numerical Recipes' Chebyshev fit of erfc (fractional error < 1.2e-7): FP32-accurate."""
    x = np.asarray(a, np.float64)
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    erfc = t * np.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (
        0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (
            1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
    x2 = x * x
    series = x * (2.0 / np.sqrt(np.pi)) * (1.0 + x2 * (-1.0 / 3 + x2 * (1.0 / 10 + x2 * (
        -1.0 / 42 + x2 * (1.0 / 216 + x2 * (-1.0 / 1320 + x2 / 9360))))))
    out: np.ndarray = np.where(z < 0.5, series, np.sign(x) * (1.0 - erfc))
    return out


def _gelu_cdf(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + _erf(x / np.sqrt(2.0)))


_GELU_K = np.sqrt(2.0 / np.pi)


def _gelu_tanh_bwd(x: np.ndarray) -> np.ndarray:
    """d/dx of x * (1 + tanh(k (x + 0.044715 x**3))) / 2."""
    th = np.tanh(_GELU_K * (x + 0.044715 * x ** 3))
    return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * _GELU_K * (1.0 + 3 * 0.044715 * x * x)


def _gen_index(a: np.ndarray, axis: int) -> np.ndarray:
    """GEN_INDEX: each element's coordinate along ``axis`` (float64: exact for any index)."""
    shape = [1] * a.ndim
    shape[axis] = a.shape[axis]
    return np.broadcast_to(np.arange(a.shape[axis], dtype=np.float64).reshape(shape), a.shape)


def _one(value: float | None) -> float:
    return 1.0 if value is None else value  # cuDNN's default alpha/beta


def _swish_bwd(x: np.ndarray, beta: float) -> np.ndarray:
    s = _sigmoid(beta * x)
    return s + beta * x * s * (1.0 - s)


#: mode -> f(node, *fp32 inputs); RELU_BWD takes (dy, forward input).
POINTWISE_OPS: dict[PointwiseMode, Callable[..., np.ndarray]] = {
    M.RELU_FWD: lambda n, x: K.relu_forward(x, n.relu_lower_clip, n.relu_upper_clip,
                                            n.relu_lower_clip_slope),
    M.RELU_BWD: lambda n, dy, x: K.relu_backward(dy, x, n.relu_lower_clip, n.relu_upper_clip,
                                                 n.relu_lower_clip_slope),
    M.ADD: lambda n, a, b: a + b,
    M.SUB: lambda n, a, b: a - b,
    M.MUL: lambda n, a, b: a * b,
    M.DIV: lambda n, a, b: a / b,
    M.MAX: lambda n, a, b: np.maximum(a, b),
    M.MIN: lambda n, a, b: np.minimum(a, b),
    M.ADD_SQUARE: lambda n, a, b: a + b * b,
    M.IDENTITY: lambda n, a: a.copy(),  # never alias an input buffer (outputs may alias inputs)
    M.ABS: lambda n, a: np.abs(a),
    M.NEG: lambda n, a: -a,
    M.EXP: lambda n, a: np.exp(a),
    M.LOG: lambda n, a: np.log(a),
    M.SQRT: lambda n, a: np.sqrt(a),
    M.RSQRT: lambda n, a: 1.0 / np.sqrt(a),
    M.RECIPROCAL: lambda n, a: 1.0 / a,
    M.CEIL: lambda n, a: np.ceil(a),
    M.FLOOR: lambda n, a: np.floor(a),
    M.SIN: lambda n, a: np.sin(a),
    M.TAN: lambda n, a: np.tan(a),
    M.TANH_FWD: lambda n, a: np.tanh(a),
    M.SIGMOID_FWD: lambda n, a: _sigmoid(a),
    M.TANH_BWD: lambda n, dy, x: dy * (1.0 - np.tanh(x) ** 2),
    M.SIGMOID_BWD: lambda n, dy, x: dy * _sigmoid(x) * (1.0 - _sigmoid(x)),
    M.ERF: lambda n, a: _erf(a),
    M.GEN_INDEX: lambda n, a: _gen_index(a, n.axis),
    M.ELU_FWD: lambda n, a: np.where(a > 0, a, _one(n.elu_alpha) * np.expm1(np.minimum(a, 0))),
    M.ELU_BWD: lambda n, dy, x: np.where(x > 0, dy,
                                         dy * _one(n.elu_alpha) * np.exp(np.minimum(x, 0))),
    M.GELU_FWD: lambda n, a: a * _gelu_cdf(a),
    M.GELU_BWD: lambda n, dy, x: dy * (_gelu_cdf(x) + x * np.exp(-0.5 * x * x) / np.sqrt(
        2.0 * np.pi)),
    M.GELU_APPROX_TANH_FWD: lambda n, a: 0.5 * a * (1.0 + np.tanh(_GELU_K * (a + 0.044715 *
                                                                              a ** 3))),
    M.GELU_APPROX_TANH_BWD: lambda n, dy, x: dy * _gelu_tanh_bwd(x),
    M.SOFTPLUS_FWD: lambda n, a: np.logaddexp(0.0, _one(n.softplus_beta) * a) / _one(
        n.softplus_beta),
    M.SOFTPLUS_BWD: lambda n, dy, x: dy * _sigmoid(_one(n.softplus_beta) * x),
    M.SWISH_FWD: lambda n, a: a * _sigmoid(_one(n.swish_beta) * a),
    M.SWISH_BWD: lambda n, dy, x: dy * _swish_bwd(x, _one(n.swish_beta)),
    # comparisons and logical ops give 1.0 / 0.0 (cast to the output's data type)
    M.CMP_GT: lambda n, a, b: _bool(a > b),
    M.CMP_GE: lambda n, a, b: _bool(a >= b),
    M.CMP_LT: lambda n, a, b: _bool(a < b),
    M.CMP_LE: lambda n, a, b: _bool(a <= b),
    M.CMP_EQ: lambda n, a, b: _bool(a == b),
    M.CMP_NEQ: lambda n, a, b: _bool(a != b),
    M.LOGICAL_AND: lambda n, a, b: _bool((a != 0) & (b != 0)),
    M.LOGICAL_OR: lambda n, a, b: _bool((a != 0) | (b != 0)),
    M.LOGICAL_NOT: lambda n, a: _bool(a == 0),
    M.BINARY_SELECT: lambda n, a, b, mask: _select(a, b, mask),
}


def _wide(a: np.ndarray) -> bool:
    """True for values FP32 cannot hold exactly: float64 (integer tensors' values) and 32/64-bit
    integers."""
    return a.dtype == np.float64 or (a.dtype.kind in "iu" and a.dtype.itemsize >= 4)


def pointwise(node: Any, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Apply ``node.mode`` to ``inputs`` (IN_0, IN_1, ...) in FP32 (float64 when an input holds
    32/64-bit integers, so INT32 values pass exactly); returns an array of that type."""
    arrays = [np.asarray(a) for a in inputs]
    acc = np.float64 if any(_wide(a) for a in arrays) else _F32
    args = [a.astype(acc, copy=False) for a in arrays]
    return np.asarray(POINTWISE_OPS[node.mode](node, *args), dtype=acc)
