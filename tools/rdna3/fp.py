"""Floating-point helpers: fused multiply-add with one rounding, in numpy.

numpy has no fma; a product of two values with at most 26 significant bits (f32, f16 inputs) is
exact in float64, so ``a*b + c`` needs only the sum rounded once to the target type. The sum is
formed in float64 with its exact error (TwoSum); when the float64 sum lands exactly on a
rounding midpoint of the target type, the error decides the direction (no double rounding).
"""

from __future__ import annotations

import numpy as np

__all__ = ["fma_f64", "fma_narrow", "fma_scaled", "round_to"]

_F64 = np.float64


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(invalid="ignore", over="ignore"):
        s = a + b
        bb = s - a
        e = (a - (s - bb)) + (b - bb)
    e = np.where(np.isfinite(e), e, 0.0)
    return s, e


def round_to(s: np.ndarray, e: np.ndarray, dtype: type) -> np.ndarray:
    """Round the exact value ``s + e`` (``|e|`` at most half an ulp of ``s``) to ``dtype``."""
    with np.errstate(over="ignore", invalid="ignore"):
        r = s.astype(dtype)
        r64 = r.astype(_F64)
        towards = np.where(s > r64, np.inf, -np.inf).astype(dtype)
        other = np.nextafter(r, towards).astype(_F64)
        mid = (r64 + other) / 2
        fix = (e != 0) & (s == mid) & (s != r64) & np.isfinite(other)
        if fix.any():
            nudged = np.nextafter(s[fix], np.where(e[fix] > 0, np.inf, -np.inf))
            r[fix] = nudged.astype(dtype)
    return r


def fma_narrow(a: np.ndarray, b: np.ndarray, c: np.ndarray, dtype: type) -> np.ndarray:
    """``a*b + c`` rounded once to ``dtype`` (inputs f32/f16 values, any float dtype)."""
    p = a.astype(_F64) * b.astype(_F64)  # exact: at most 2x24 significant bits
    s, e = _two_sum(p, c.astype(_F64))
    return round_to(s, e, dtype)


def fma_scaled(a: np.ndarray, b: np.ndarray, c: np.ndarray, scale: np.ndarray, dtype: type) -> np.ndarray:
    """``(a*b + c) * scale`` rounded once to ``dtype`` (``scale`` a power of two per lane).

    The exact sum and its error are both scaled (exact in float64 for f32 inputs and scales of
    2**+-64), so a result scaled into the denormal range is rounded only there.
    """
    p = a.astype(_F64) * b.astype(_F64)
    s, e = _two_sum(p, c.astype(_F64))
    with np.errstate(over="ignore", invalid="ignore"):
        return round_to(s * scale, e * scale, dtype)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(over="ignore", invalid="ignore"):
        t = a * 134217729.0  # 2**27 + 1 (Veltkamp)
        hi = t - (t - a)
    hi = np.where(np.isfinite(hi), hi, a)
    return hi, a - hi


def fma_f64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Double-precision ``a*b + c``: exact product (Dekker) and sum, then one final addition.

    Exactly rounded when ``a*b`` is exact in float64 (every f32-sourced product, as in the naive
    convolution's double accumulator); otherwise within one ulp.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        p = a * b
        ah, al = _split(a)
        bh, bl = _split(b)
        pe = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        pe = np.where(np.isfinite(pe), pe, 0.0)
        s, se = _two_sum(p, c)
        out = s + (pe + se)
    return np.where(np.isfinite(p) & np.isfinite(c), out, p + c)
