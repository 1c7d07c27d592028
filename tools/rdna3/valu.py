"""Vector ALU semantics (VOP1, VOP2, VOPC, VOP3, VOP3SD, VOP3P, VOPD) on 32-lane numpy arrays.

Each op is (destination type, source types, function of typed lane arrays). Types: ``u32``,
``i32``, ``f32``, ``u16``, ``f16``, ``u64``, ``f64``. Float math follows the kernels' float mode
(round to nearest even; denormals kept, or for f32 flushed to signed zero on every f32 operand
read and result written when the kernel's mode says so: ``Wave.flush_f32``, except
``v_cmp_class``, which classifies what it is given): numpy's f32/f64 arithmetic is IEEE;
fused ops round once (:mod:`.fp`). ``v_rcp*``/``v_rsq``/``v_sqrt``/``v_exp``/``v_log`` are computed exactly rounded,
within the ISA's 1 ulp. 16-bit operands of e32 encodings name a VGPR half with bit 7 of the
register field (true16); VOP3 encodings use op_sel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .decode import Inst, UnsupportedInstruction
from .fp import fma_f64, fma_narrow, fma_scaled
from .wave import LANES, VCC_LO, Wave, bits_of, mask_of

__all__ = ["PLAIN", "compile_valu"]

U32, I32, F32, F16, F64, U64 = np.uint32, np.int32, np.float32, np.float16, np.float64, np.uint64
M32 = np.uint64(0xFFFFFFFF)
FLOAT_TYPES = ("f32", "f16", "f64")


def _u64(a: np.ndarray) -> np.ndarray:
    return a.astype(U64)


def _lo32(a: np.ndarray) -> np.ndarray:
    return (a.astype(U64) & M32).astype(U32)


def _sat_int(a: np.ndarray, lo: float, hi: float, dtype: type) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        t = np.trunc(a.astype(F64))
        t = np.where(np.isnan(t), 0.0, np.clip(t, lo, hi))
    return t.astype(np.int64).astype(dtype)


def _i24(a: np.ndarray) -> np.ndarray:
    return ((a << U32(8)).view(I32) >> I32(8)).astype(np.int64)


def _div(n: float, a: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return (n / a.astype(F64)).astype(F32)


def _rsq(a: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return (1.0 / np.sqrt(a.astype(F64))).astype(F32)


def _sqrt(a: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.sqrt(a.astype(F64)).astype(F32)


def _exp2(a: np.ndarray) -> np.ndarray:
    """2**a exactly rounded (the ISA allows 1 ulp)."""
    with np.errstate(over="ignore", under="ignore"):
        return np.exp2(a.astype(F64)).astype(F32)


def _ldexp(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    """a * 2**e rounded once (exact in f64 for every f32 a and clipped e, then one rounding)."""
    with np.errstate(over="ignore", under="ignore"):
        return np.ldexp(a.astype(F64), np.clip(e, -400, 400).astype(np.int32)).astype(F32)


def _frexp_mant(a: np.ndarray) -> np.ndarray:
    """The signed mantissa in [0.5, 1) (denormals normalised); NaN for +-inf and NaN."""
    m, _e = np.frexp(a.astype(F64))
    return np.where(np.isfinite(a), m, np.nan).astype(F32)


def _frexp_exp(a: np.ndarray) -> np.ndarray:
    """The exponent e of a = m * 2**e, m in [0.5, 1); 0 for +-inf and NaN."""
    _m, e = np.frexp(a.astype(F64))
    return np.where(np.isfinite(a), e, 0).astype(I32)


def _frexp_exp64(a: np.ndarray) -> np.ndarray:
    """The exponent e of an f64 a = m * 2**e, m in [0.5, 1); 0 for +-inf and NaN."""
    _m, e = np.frexp(a)
    return np.where(np.isfinite(a), e, 0).astype(I32)


def _log2(a: np.ndarray) -> np.ndarray:
    """log2(a) exactly rounded (the ISA allows 1 ulp): -inf at +-0, NaN below 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log2(a.astype(F64)).astype(F32)


_F32_MIN_NORMAL = np.float32(np.finfo(np.float32).tiny)


def flush_f32(x: np.ndarray) -> np.ndarray:
    """``x`` with f32 denormals replaced by zero of the same sign (the FLUSH denorm mode)."""
    den = (np.abs(x) < _F32_MIN_NORMAL) & (x != 0)
    return np.where(den, np.copysign(np.float32(0), x), x).astype(F32) if den.any() else x


def _exponent(x: np.ndarray) -> np.ndarray:
    """The biased exponent field of f32 values (0 for zeros and denormals, 255 for inf/NaN)."""
    return ((np.asarray(x, F32).view(U32) >> U32(23)) & U32(0xFF)).astype(np.int64)


def _is_denorm(x: np.ndarray) -> np.ndarray:
    return (_exponent(x) == 0) & (x != 0)


def _div_scale(s0: np.ndarray, s1: np.ndarray, s2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """V_DIV_SCALE_F32 (S0 the value to scale, S1 the denominator, S2 the numerator): the value and
    the VCC lane bits, case by case in the ISA's order (the first case that holds decides).

    The result is S0 unless a case scales it by 2**64 (or 2**-64); VCC says the quotient must be
    scaled back afterwards (by V_DIV_FMAS_F32).
    """
    f64 = np.float64
    up = _ldexp(s0, np.full(s0.shape, 64, I32))
    down = _ldexp(s0, np.full(s0.shape, -64, I32))
    nan = np.full(s0.shape, np.nan, F32)
    with np.errstate(all="ignore"):
        quot = (s2 / s1).astype(F32)  # the f32 quotient, only to ask whether it is denormal
        inv = f64(1.0) / s1.astype(f64)
    inv_denorm = (np.abs(inv) < np.finfo(f64).tiny) & (inv != 0)  # never for an f32 S1; kept as written
    quot_denorm = _is_denorm(quot)
    e1, e2 = _exponent(s1), _exponent(s2)
    # (condition, result, vcc) in the ISA's order
    cases = [
        ((s2 == 0) | (s1 == 0), nan, False),
        (e2 - e1 >= 96, np.where(s0 == s1, up, s0), True),
        (_is_denorm(s1), up, False),
        (inv_denorm & quot_denorm, np.where(s0 == s1, up, s0), True),
        (inv_denorm, down, False),
        (quot_denorm, np.where(s0 == s2, up, s0), True),
        (e2 <= 23, up, False),
    ]
    out, vcc = s0.copy(), np.zeros(s0.shape, bool)
    taken = np.zeros(s0.shape, bool)
    for cond, res, sets_vcc in cases:
        hit = cond & ~taken
        out = np.where(hit, res, out)
        if sets_vcc:
            vcc |= hit
        taken |= hit
    return out.astype(F32), vcc


def _div_fmas_scale(vcc: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """The post-scale V_DIV_FMAS_F32 applies in lanes whose VCC is set: 2**64 when the quotient
    estimate S2 is at least 2 (V_DIV_SCALE scaled the denominator up), else 2**-64 (it scaled the
    numerator up). The ISA's pseudocode prints a fixed 2**32, which would not undo either scaling."""
    big = _exponent(s2) > 127
    return np.where(vcc, np.where(big, 2.0 ** 64, 2.0 ** -64), 1.0)


def _div_fixup(q: np.ndarray, d: np.ndarray, n: np.ndarray) -> np.ndarray:
    """V_DIV_FIXUP_F32 (S0 the quotient, S1 the denominator, S2 the numerator): the special cases
    of n / d in the ISA's order, else the quotient's magnitude with the sign of n / d.

    A NaN quotient from ordinary operands is an overflow: the scaled estimate became inf and the
    Newton steps turned it into NaN (e.g. 2**127 / 2**-126); the result is then +-inf, which the
    compiler's correctly rounded division relies on (the ISA's own OVERFLOW case tests
    ``exponent(S1) == 255``, which the earlier cases already took).
    """
    sign = np.signbit(d) ^ np.signbit(n)
    inf = np.where(sign, -np.inf, np.inf).astype(F32)
    zero = np.where(sign, F32(-0.0), F32(0.0)).astype(F32)
    nan = np.full(q.shape, np.nan, F32)
    dinf, ninf = np.isinf(d), np.isinf(n)
    with np.errstate(invalid="ignore"):
        conds = [np.isnan(n), np.isnan(d), (d == 0) & (n == 0), dinf & ninf, (d == 0) | ninf,
                 dinf | (n == 0), _exponent(n) - _exponent(d) < -150, _exponent(d) == 255]
        choices = [nan, nan, nan, nan, inf, zero, zero, inf]  # UNDERFLOW rounds to 0, OVERFLOW to inf
        conds.append(np.isnan(q))
        choices.append(inf)
        mag = np.abs(q)
        return np.select(conds, choices, np.where(sign, -mag, mag)).astype(F32)


_BELOW_LANE = (np.uint64(1) << np.arange(32, dtype=np.uint64)) - np.uint64(1)  # lanes below each lane


def _mbcnt_lo(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """V_MBCNT_LO_U32_B32: b + the number of bits of the mask a set for lanes below this lane."""
    return (np.bitwise_count(a.astype(U64) & _BELOW_LANE).astype(U32) + b).astype(U32)


def _div_fixup_f16(q: np.ndarray, d: np.ndarray, n: np.ndarray) -> np.ndarray:
    """V_DIV_FIXUP_F16: the f32 version's NaN, zero and infinity cases (no exponent cases)."""
    sign = np.signbit(d) ^ np.signbit(n)
    inf = np.where(sign, -np.inf, np.inf).astype(F16)
    zero = np.where(sign, F16(-0.0), F16(0.0)).astype(F16)
    nan = np.full(q.shape, np.nan, F16)
    dinf, ninf = np.isinf(d), np.isinf(n)
    conds = [np.isnan(n), np.isnan(d), (d == 0) & (n == 0), dinf & ninf, (d == 0) | ninf, dinf | (n == 0)]
    mag = np.abs(q)
    return np.select(conds, [nan, nan, nan, nan, inf, zero], np.where(sign, -mag, mag)).astype(F16)


def _is_snan(x: np.ndarray) -> np.ndarray:
    quiet = {np.dtype(F32): (U32, 22), np.dtype(F16): (np.uint16, 9)}[x.dtype]
    return np.isnan(x) & ((x.view(quiet[0]) >> quiet[0](quiet[1])) & quiet[0](1) == 0)


def _vmax(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """V_MAX_F32/F16 in IEEE mode: a signalling NaN gives a quiet NaN, a quiet NaN loses to the
    other operand, +0 is larger than -0, otherwise the larger."""
    return _min_max(a, b, True)


def _vmin(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """V_MIN_F32/F16 in IEEE mode: as :func:`_vmax`, -0 is smaller than +0."""
    return _min_max(a, b, False)


def _min_max(a: np.ndarray, b: np.ndarray, is_max: bool) -> np.ndarray:
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    r = np.fmax(a, b) if is_max else np.fmin(a, b)
    zeros = (a == 0) & (b == 0)
    if zeros.any():  # the sign decides between zeros: max takes + unless both are -, min the reverse
        pick = (np.signbit(a) & np.signbit(b)) if is_max else (np.signbit(a) | np.signbit(b))
        r = np.where(zeros, np.where(pick, -a.dtype.type(0), a.dtype.type(0)), r)
    snan = _is_snan(a) | _is_snan(b)
    return np.where(snan, a.dtype.type(np.nan), r) if snan.any() else r


def _med3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))


Op = tuple[str, tuple[str, ...], Callable[..., Any]]
PLAIN: dict[str, Op] = {
    "v_mov_b32": ("u32", ("u32",), lambda a: a),
    "v_mov_b16": ("u16", ("u16",), lambda a: a),
    "v_add_nc_u16": ("u16", ("u16", "u16"), lambda a, b: (a.astype(U32) + b).astype(np.uint16)),
    "v_sub_nc_u16": ("u16", ("u16", "u16"), lambda a, b: (a.astype(U32) - b).astype(np.uint16)),
    "v_mul_lo_u16": ("u16", ("u16", "u16"), lambda a, b: (a.astype(U32) * b).astype(np.uint16)),
    "v_pack_b32_f16": ("u32", ("f16", "f16"),
                       lambda a, b: a.view(np.uint16).astype(U32) | b.view(np.uint16).astype(U32) << U32(16)),
    "v_cvt_f16_f32": ("f16", ("f32",), lambda a: a.astype(F16)),
    "v_cvt_f32_f16": ("f32", ("f16",), lambda a: a.astype(F32)),
    "v_cvt_f32_f64": ("f32", ("f64",), lambda a: a.astype(F32)),
    "v_cvt_f64_f32": ("f64", ("f32",), lambda a: a.astype(F64)),
    "v_cvt_f32_u32": ("f32", ("u32",), lambda a: a.astype(F32)),
    "v_cvt_f32_i32": ("f32", ("i32",), lambda a: a.astype(F32)),
    "v_cvt_u32_f32": ("u32", ("f32",), lambda a: _sat_int(a, 0, 4294967295.0, U32)),
    "v_cvt_i32_f32": ("i32", ("f32",), lambda a: _sat_int(a, -2147483648.0, 2147483647.0, I32)),
    "v_cvt_i32_f64": ("i32", ("f64",), lambda a: _sat_int(a, -2147483648.0, 2147483647.0, I32)),
    "v_rcp_f32": ("f32", ("f32",), lambda a: _div(1.0, a)),
    "v_rcp_iflag_f32": ("f32", ("f32",), lambda a: _div(1.0, a)),
    "v_rcp_f16": ("f16", ("f16",), lambda a: _div(1.0, a).astype(F16)),  # exact in f32, one more rounding
    "v_rsq_f32": ("f32", ("f32",), _rsq),
    "v_sqrt_f32": ("f32", ("f32",), _sqrt),
    "v_trunc_f32": ("f32", ("f32",), np.trunc),
    "v_ceil_f32": ("f32", ("f32",), np.ceil),
    "v_rndne_f32": ("f32", ("f32",), np.rint),  # round half to even
    "v_floor_f32": ("f32", ("f32",), np.floor),
    "v_exp_f32": ("f32", ("f32",), _exp2),
    "v_frexp_mant_f32": ("f32", ("f32",), _frexp_mant),
    "v_frexp_exp_i32_f32": ("i32", ("f32",), _frexp_exp),
    "v_frexp_exp_i32_f64": ("i32", ("f64",), _frexp_exp64),
    "v_log_f32": ("f32", ("f32",), _log2),
    "v_rsq_f64": ("f64", ("f64",), lambda a: 1.0 / np.sqrt(a)),
    "v_add_f32": ("f32", ("f32", "f32"), lambda a, b: a + b),
    "v_sub_f32": ("f32", ("f32", "f32"), lambda a, b: a - b),
    "v_subrev_f32": ("f32", ("f32", "f32"), lambda a, b: b - a),
    "v_mul_f32": ("f32", ("f32", "f32"), lambda a, b: a * b),
    "v_max_f32": ("f32", ("f32", "f32"), _vmax),
    "v_min_f32": ("f32", ("f32", "f32"), _vmin),
    "v_fmac_f32": ("f32", ("f32", "f32", "f32"), lambda a, b, c: fma_narrow(a, b, c, F32)),
    "v_fma_f32": ("f32", ("f32", "f32", "f32"), lambda a, b, c: fma_narrow(a, b, c, F32)),
    "v_div_fixup_f32": ("f32", ("f32", "f32", "f32"), _div_fixup),
    "v_div_fixup_f16": ("f16", ("f16", "f16", "f16"), _div_fixup_f16),
    "v_add_f16": ("f16", ("f16", "f16"), lambda a, b: a + b),
    "v_mul_f16": ("f16", ("f16", "f16"), lambda a, b: a * b),
    "v_sub_f16": ("f16", ("f16", "f16"), lambda a, b: a - b),
    "v_max_f16": ("f16", ("f16", "f16"), _vmax),
    "v_min_f16": ("f16", ("f16", "f16"), _vmin),
    "v_fmac_f16": ("f16", ("f16", "f16", "f16"), lambda a, b, c: fma_narrow(a, b, c, F16)),
    "v_fma_f64": ("f64", ("f64", "f64", "f64"), fma_f64),
    "v_mul_f64": ("f64", ("f64", "f64"), lambda a, b: a * b),
    "v_add_f64": ("f64", ("f64", "f64"), lambda a, b: a + b),
    "v_max_i32": ("i32", ("i32", "i32"), np.maximum),
    "v_min_i32": ("i32", ("i32", "i32"), np.minimum),
    "v_min_u32": ("u32", ("u32", "u32"), np.minimum),
    "v_max_u32": ("u32", ("u32", "u32"), np.maximum),
    "v_med3_i32": ("i32", ("i32", "i32", "i32"), _med3),
    # min/max of f32 as v_min_f32/v_max_f32 (a NaN operand loses to a number)
    "v_maxmin_f32": ("f32", ("f32", "f32", "f32"), lambda a, b, c: _vmin(_vmax(a, b), c)),
    "v_minmax_f32": ("f32", ("f32", "f32", "f32"), lambda a, b, c: _vmax(_vmin(a, b), c)),
    "v_mbcnt_lo_u32_b32": ("u32", ("u32", "u32"), _mbcnt_lo),
    # lanes 32-63 of the mask: none below any lane of a wave32
    "v_mbcnt_hi_u32_b32": ("u32", ("u32", "u32"), lambda a, b: b.copy()),
    "v_bfi_b32": ("u32", ("u32", "u32", "u32"), lambda a, b, c: (a & b) | (~a & c)),
    "v_add_nc_u32": ("u32", ("u32", "u32"), lambda a, b: a + b),
    "v_sub_nc_u32": ("u32", ("u32", "u32"), lambda a, b: a - b),
    "v_subrev_nc_u32": ("u32", ("u32", "u32"), lambda a, b: b - a),
    "v_mul_u32_u24": ("u32", ("u32", "u32"), lambda a, b: _lo32(_u64(a & U32(0xFFFFFF)) * (b & U32(0xFFFFFF)))),
    "v_mul_i32_i24": ("u32", ("u32", "u32"), lambda a, b: _lo32(_i24(a) * _i24(b))),
    "v_mad_u32_u24": ("u32", ("u32", "u32", "u32"),
                      lambda a, b, c: _lo32(_u64(a & U32(0xFFFFFF)) * (b & U32(0xFFFFFF)) + c)),
    "v_mad_i32_i24": ("u32", ("u32", "u32", "u32"), lambda a, b, c: _lo32(_i24(a) * _i24(b) + c.view(I32))),
    "v_mul_lo_u32": ("u32", ("u32", "u32"), lambda a, b: _lo32(_u64(a) * _u64(b))),
    "v_mul_hi_u32": ("u32", ("u32", "u32"), lambda a, b: (_u64(a) * _u64(b) >> U64(32)).astype(U32)),
    "v_and_b32": ("u32", ("u32", "u32"), lambda a, b: a & b),
    "v_or_b32": ("u32", ("u32", "u32"), lambda a, b: a | b),
    "v_xor_b32": ("u32", ("u32", "u32"), lambda a, b: a ^ b),
    "v_lshlrev_b32": ("u32", ("u32", "u32"), lambda a, b: b << (a & U32(31))),
    "v_lshrrev_b32": ("u32", ("u32", "u32"), lambda a, b: b >> (a & U32(31))),
    "v_ashrrev_i32": ("i32", ("u32", "i32"), lambda a, b: b >> (a & U32(31)).astype(I32)),
    "v_lshlrev_b64": ("u64", ("u32", "u64"), lambda a, b: b << (a & U32(63)).astype(U64)),
    "v_ashrrev_i64": ("i64", ("u32", "i64"), lambda a, b: b >> (a & U32(63)).astype(np.int64)),
    "v_add3_u32": ("u32", ("u32", "u32", "u32"), lambda a, b, c: a + b + c),
    "v_add_lshl_u32": ("u32", ("u32", "u32", "u32"), lambda a, b, c: (a + b) << (c & U32(31))),
    "v_lshl_add_u32": ("u32", ("u32", "u32", "u32"), lambda a, b, c: (a << (b & U32(31))) + c),
    "v_lshl_or_b32": ("u32", ("u32", "u32", "u32"), lambda a, b, c: (a << (b & U32(31))) | c),
    "v_and_or_b32": ("u32", ("u32", "u32", "u32"), lambda a, b, c: (a & b) | c),
    "v_or3_b32": ("u32", ("u32", "u32", "u32"), lambda a, b, c: a | b | c),
    "v_ldexp_f32": ("f32", ("f32", "i32"), lambda a, b: _ldexp(a, b)),
    "v_bfe_u32": ("u32", ("u32", "u32", "u32"),
                  lambda a, b, c: (a >> (b & U32(31))) & ((U32(1) << (c & U32(31))) - U32(1))),
}

_CMP_FN: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal,
    "ne": np.not_equal, "lg": lambda a, b: (a < b) | (a > b),  # ordered: false for NaN
    "ngt": lambda a, b: ~(a > b), "neq": lambda a, b: ~(a == b),
    # the negated and ordered/unordered conditions are true when unordered (a NaN) exactly as
    # the ISA defines them: "not >=" is true for NaN, "o" is false
    "nge": lambda a, b: ~(a >= b), "nle": lambda a, b: ~(a <= b), "nlt": lambda a, b: ~(a < b),
    "nlg": lambda a, b: ~((a < b) | (a > b)), "o": lambda a, b: ~(np.isnan(a) | np.isnan(b)),
    "u": lambda a, b: np.isnan(a) | np.isnan(b), "f": lambda a, b: np.zeros(np.shape(a), bool),
    "t": lambda a, b: np.ones(np.shape(a), bool)}


def _compare(name: str) -> tuple[str, Callable[[np.ndarray, np.ndarray], np.ndarray]]:
    parts = name.split("_")  # v_cmp[x]_<cond>_<type>
    return parts[3], _CMP_FN[parts[2]]


_WIDTH = {"u32": 32, "i32": 32, "f32": 32, "u16": 16, "f16": 16, "u64": 64, "i64": 64, "f64": 64}
_VIEW = {"i32": I32, "f32": F32, "f16": F16, "f64": F64, "i64": np.int64}


class _Operands:
    """Builds readers for an instruction's sources and the writer for its destination."""

    def __init__(self, inst: Inst) -> None:
        self.inst = inst
        f = inst.f
        self.vop3 = inst.fmt in ("VOP3", "VOP3SD")
        self.abs = f.get("abs", 0)
        self.neg = f.get("neg", 0)
        self.opsel = f.get("opsel", 0)

    def codes(self) -> list[int]:
        f = self.inst.f
        if self.vop3:
            return [f["src0"], f["src1"], f["src2"]]
        if self.inst.fmt in ("VOP2", "VOPC", "VOPD"):
            return [f["src0"], 256 + f["vsrc1"]]
        return [f["src0"]]

    def reader(self, i: int, code: int, typ: str, *, flushes: bool = True) -> Callable[[Wave], np.ndarray]:
        lit = self.inst.literal
        flush = flushes and typ == "f32"
        hi = False
        if _WIDTH[typ] == 16:
            if self.vop3:
                hi = bool(self.opsel >> i & 1)
            elif code >= 256:
                hi, code = bool((code - 256) >> 7), 256 + ((code - 256) & 127)
        is_float = typ in FLOAT_TYPES
        ab, ng = bool(self.abs >> i & 1), bool(self.neg >> i & 1)
        if (ab or ng) and not is_float:
            raise UnsupportedInstruction(f"{self.inst.name}: abs/neg modifier on integer operand {i}")
        width, view = _WIDTH[typ], _VIEW.get(typ)

        def read(w: Wave) -> np.ndarray:
            if width == 32:
                x = w.vread(code, lit)
            elif width == 64:
                x = w.vread64(code, lit, is_float)
            else:
                x = w.vread16(code, lit, hi, is_float)
            if view is not None:
                x = x.view(view)
            if flush and w.flush_f32:
                x = flush_f32(x)
            if ab:
                x = np.abs(x)
            if ng:
                x = -x
            return x
        return read

    def writer(self, typ: str, vdst: int) -> Callable[[Wave, np.ndarray], None]:
        f = self.inst.f
        clamp, omod = f.get("clamp", 0), f.get("omod", 0)
        if (clamp or omod) and typ not in FLOAT_TYPES:
            raise UnsupportedInstruction(f"{self.inst.name}: clamp/omod on an integer result")
        if omod and typ != "f32":
            raise UnsupportedInstruction(f"{self.inst.name}: omod on a {typ} result")
        scale = {0: 1.0, 1: 2.0, 2: 4.0, 3: 0.5}[omod]
        width = _WIDTH[typ]
        hi = False
        if width == 16:
            if self.vop3:
                hi = bool(self.opsel >> 3 & 1)
            else:
                hi, vdst = bool(vdst >> 7), vdst & 127
        dtype = {"u32": U32, "i32": I32, "f32": F32, "u16": np.uint16, "f16": F16, "i64": np.int64,
                 "u64": U64, "f64": F64}[typ]
        is_float = typ in FLOAT_TYPES
        flush = typ == "f32"
        nan = {"f32": np.array(0x7FC00000, U32).view(F32), "f16": np.array(0x7E00, np.uint16).view(F16),
               "f64": np.array(0x7FF8000000000000, U64).view(F64)}.get(typ)

        def write(w: Wave, res: np.ndarray) -> None:
            res = np.asarray(res)
            if res.dtype != dtype:
                res = res.astype(dtype)
            if omod:
                res = (res * F32(scale)).astype(F32)
            if clamp:
                res = np.where(np.isnan(res), 0, np.clip(res, 0, 1)).astype(dtype)
            if is_float and np.isnan(res).any():  # the default quiet NaN (payloads not kept)
                res = np.where(np.isnan(res), nan, res)
            if flush and w.flush_f32:
                res = flush_f32(res)
            if width == 32:
                w.vwrite(vdst, res.view(U32))
            elif width == 64:
                w.vwrite64(vdst, res.view(U64))
            else:
                w.vwrite16(vdst, res.view(np.uint16), hi)
        return write


def _bitmods(x: np.ndarray, ab: bool, ng: bool, sign: int) -> np.ndarray:
    if ab:
        x = x & x.dtype.type(~sign & (0xFFFF if sign == 0x8000 else 0xFFFFFFFF))
    if ng:
        x = x ^ x.dtype.type(sign)
    return x


def compile_valu(inst: Inst, pc: int) -> Callable[[Wave], int]:
    """A function running ``inst`` on a wave and returning the next program counter."""
    nxt = pc + inst.size
    name = inst.name
    if inst.fmt == "VOPD":
        return _compile_vopd(inst, nxt)
    if inst.fmt == "VOP3P":
        return _compile_vop3p(inst, nxt)
    ops = _Operands(inst)
    codes = ops.codes()
    if inst.fmt in ("VOPC",) or name.startswith("v_cmp"):
        return _compile_cmp(inst, ops, codes, nxt)
    if name == "v_div_scale_f32":
        return _compile_div_scale(inst, ops, codes, nxt)
    if name == "v_div_fmas_f32":
        return _compile_div_fmas(inst, ops, codes, nxt)
    if inst.fmt == "VOP3SD" or name in ("v_add_co_ci_u32", "v_sub_co_ci_u32", "v_subrev_co_ci_u32"):
        return _compile_carry(inst, ops, codes, nxt)
    if name in ("v_cndmask_b32", "v_cndmask_b16"):
        return _compile_cndmask(inst, ops, codes, nxt)
    if name == "v_readfirstlane_b32":
        src, sdst = codes[0], inst.f["vdst"]

        def readfirstlane(w: Wave) -> int:
            lane = (w.exec & -w.exec).bit_length() - 1 if w.exec else 0
            w.swrite(sdst, int(w.vread(src, inst.literal)[lane]))
            return nxt
        return readfirstlane
    if name in ("v_fmamk_f32", "v_fmaak_f32"):  # VOP2 with the constant K as literal
        ra, rb = ops.reader(0, codes[0], "f32"), ops.reader(1, codes[1], "f32")
        k = np.full(LANES, inst.literal, U32).view(F32)
        write_k = ops.writer("f32", inst.f["vdst"])
        mk = name == "v_fmamk_f32"

        def fma_k(w: Wave) -> int:
            with np.errstate(all="ignore"):
                a, b = ra(w), rb(w)
                write_k(w, fma_narrow(a, k, b, F32) if mk else fma_narrow(a, b, k, F32))
            return nxt
        return fma_k
    if name not in PLAIN:
        raise UnsupportedInstruction(f"{name} ({inst.fmt}) at {pc:#x} is not implemented")
    dtype, stypes, fn = PLAIN[name]
    if name in ("v_fmac_f32", "v_fmac_f16"):
        codes = [*codes[:2], 256 + inst.f["vdst"]]
        if inst.fmt == "VOP2" and name == "v_fmac_f16":
            codes[2] = 256 + inst.f["vdst"]
    readers = [ops.reader(i, c, t) for i, (c, t) in enumerate(zip(codes, stypes, strict=False))]
    write = ops.writer(dtype, inst.f["vdst"])

    def run(w: Wave) -> int:
        with np.errstate(all="ignore"):
            write(w, fn(*[r(w) for r in readers]))
        return nxt
    return run


def _float_class(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """v_cmp_class: is x in one of the classes whose bit is set in mask (bit 0 signalling NaN,
    1 quiet NaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf)."""
    info = np.finfo(x.dtype)
    bits = x.view(np.uint64 if x.dtype == F64 else U32)
    quiet_bit = (bits >> (51 if x.dtype == F64 else 22)) & 1
    neg = np.signbit(x)
    a = np.abs(x)
    with np.errstate(invalid="ignore"):
        classes = [np.isnan(x) & (quiet_bit == 0), np.isnan(x) & (quiet_bit == 1),
                   np.isinf(x) & neg, neg & (a >= info.tiny) & np.isfinite(x), neg & (a < info.tiny) & (a > 0),
                   neg & (a == 0), ~neg & (a == 0), ~neg & (a < info.tiny) & (a > 0),
                   ~neg & (a >= info.tiny) & np.isfinite(x), np.isinf(x) & ~neg]
    out = np.zeros(x.shape, bool)
    for i, c in enumerate(classes):
        out |= c & ((mask >> U32(i)) & U32(1)).astype(bool)
    return out


def _compile_cmp(inst: Inst, ops: _Operands, codes: list[int], nxt: int) -> Callable[[Wave], int]:
    if inst.name.startswith("v_cmp_class"):
        typ = inst.name[-3:]
        rx, rm = ops.reader(0, codes[0], typ, flushes=False), ops.reader(1, codes[1], "u32")
        sdst = inst.f["vdst"] if ops.vop3 else VCC_LO

        def cmp_class(w: Wave) -> int:
            w.swrite(sdst, bits_of(_float_class(rx(w), rm(w)) & w.exec_mask()))
            return nxt
        return cmp_class
    typ, fn = _compare(inst.name)
    typ = {"f32": "f32", "f16": "f16", "f64": "f64", "i32": "i32", "u32": "u32", "u64": "u64",
           "i64": "i64"}[typ]
    ra, rb = ops.reader(0, codes[0], typ), ops.reader(1, codes[1], typ)
    cmpx = inst.name.startswith("v_cmpx")
    sdst = inst.f["vdst"] if ops.vop3 else VCC_LO

    def run(w: Wave) -> int:
        with np.errstate(invalid="ignore"):
            bits = bits_of(fn(ra(w), rb(w)) & w.exec_mask())
        if cmpx:
            w.exec = bits
        else:
            w.swrite(sdst, bits)
        return nxt
    return run


def _compile_cndmask(inst: Inst, ops: _Operands, codes: list[int], nxt: int) -> Callable[[Wave], int]:
    b16 = inst.name.endswith("b16")
    typ, sign = ("u16", 0x8000) if b16 else ("u32", 0x80000000)
    raw = _Operands(inst)
    raw.abs = raw.neg = 0  # float modifiers of a select act on the sign bit only
    ra, rb = raw.reader(0, codes[0], typ), raw.reader(1, codes[1], typ)
    mods = [(bool(ops.abs >> i & 1), bool(ops.neg >> i & 1)) for i in (0, 1)]
    mask_code = codes[2] if ops.vop3 else VCC_LO
    write = ops.writer(typ, inst.f["vdst"])

    def run(w: Wave) -> int:
        a = _bitmods(ra(w), *mods[0], sign)
        b = _bitmods(rb(w), *mods[1], sign)
        write(w, np.where(mask_of(w.sread(mask_code, inst.literal)), b, a))
        return nxt
    return run


def _compile_div_scale(inst: Inst, ops: _Operands, codes: list[int], nxt: int) -> Callable[[Wave], int]:
    readers = [ops.reader(i, codes[i], "f32") for i in range(3)]
    write, sdst = ops.writer("f32", inst.f["vdst"]), inst.f["sdst"]

    def run(w: Wave) -> int:
        res, vcc = _div_scale(*[r(w) for r in readers])
        write(w, res)
        w.swrite(sdst, bits_of(vcc & w.exec_mask()))
        return nxt
    return run


def _compile_div_fmas(inst: Inst, ops: _Operands, codes: list[int], nxt: int) -> Callable[[Wave], int]:
    readers = [ops.reader(i, codes[i], "f32") for i in range(3)]
    write = ops.writer("f32", inst.f["vdst"])

    def run(w: Wave) -> int:
        a, b, c = (r(w) for r in readers)
        scale = _div_fmas_scale(mask_of(w.s[VCC_LO]), c)
        with np.errstate(all="ignore"):
            write(w, fma_scaled(a, b, c, scale, F32))
        return nxt
    return run


def _compile_carry(inst: Inst, ops: _Operands, codes: list[int], nxt: int) -> Callable[[Wave], int]:
    name, lit, vdst = inst.name, inst.literal, inst.f["vdst"]
    if inst.fmt == "VOP2":  # the e32 forms: carry in from VCC, carry out to VCC
        sdst, (c0, c1), c2 = VCC_LO, codes, VCC_LO
    else:
        if inst.f["clamp"] or inst.f["omod"] or inst.f["neg"]:
            raise UnsupportedInstruction(f"{name}: clamp/omod/neg modifiers are not implemented")
        sdst, (c0, c1, c2) = inst.f["sdst"], codes

    def run(w: Wave) -> int:
        m = w.exec_mask()
        a, b = w.vread(c0, lit).astype(np.int64), w.vread(c1, lit).astype(np.int64)
        if name in ("v_mad_u64_u32", "v_mad_i64_i32"):
            c = w.vread64(c2, lit, False)
            if name == "v_mad_u64_u32":
                res = a.astype(U64) * b.astype(U64) + c
                carry = res < c
            else:
                p = a.astype(U32).view(I32).astype(np.int64) * b.astype(U32).view(I32).astype(np.int64)
                ci = c.view(np.int64)
                r = p + ci
                carry = ((p ^ r) & (ci ^ r)) < 0
                res = r.view(U64)
            w.vwrite64(vdst, res)
        else:
            cin = np.zeros(LANES, np.int64)
            if name.endswith("_ci_u32"):
                cin = mask_of(w.sread(c2, lit)).astype(np.int64)
            if name.startswith("v_add"):
                full = a + b + cin
                carry = full > 0xFFFFFFFF
            elif name.startswith("v_subrev"):
                full = b - a - cin
                carry = full < 0
            else:
                full = a - b - cin
                carry = full < 0
            w.vwrite(vdst, (full & 0xFFFFFFFF).astype(U32))
        w.swrite(sdst, bits_of(carry & m))
        return nxt
    return run


def _mix_source(w: Wave, code: int, lit: int | None, is_f16: bool, hi: bool, ab: bool, ng: bool) -> np.ndarray:
    if is_f16:
        x = w.vread16(code, lit, hi, True).view(F16).astype(F32)
    else:
        x = w.vread(code, lit).view(F32)
    if ab:
        x = np.abs(x)
    return -x if ng else x


#: packed f16 ops: (number of sources, function of the f16 halves); each half rounded once
_PACKED_F16: dict[str, tuple[int, Callable[..., Any]]] = {
    "v_pk_mul_f16": (2, lambda a, b: a * b),
    "v_pk_add_f16": (2, lambda a, b: a + b),
    "v_pk_fma_f16": (3, lambda a, b, c: fma_narrow(a, b, c, F16)),
}


def _compile_vop3p(inst: Inst, nxt: int) -> Callable[[Wave], int]:
    f, lit, name = inst.f, inst.literal, inst.name
    codes = [f["src0"], f["src1"], f["src2"]]
    opsel, opsel_hi, neg, neg_hi, vdst = f["opsel"], f["opsel_hi"], f["neg"], f["neg_hi"], f["vdst"]
    if f["clamp"]:
        raise UnsupportedInstruction(f"{name}: clamp is not implemented")
    if name in _PACKED_F16:
        nsrc, fn = _PACKED_F16[name]

        def pk(w: Wave) -> int:
            halves = []  # low half: op_sel and neg; high half: op_sel_hi and neg_hi
            for sel, ng in ((opsel, neg), (opsel_hi, neg_hi)):
                srcs = []
                for i in range(nsrc):
                    x = w.vread16(codes[i], lit, bool(sel >> i & 1), True).view(F16)
                    srcs.append(-x if ng >> i & 1 else x)
                with np.errstate(all="ignore"):
                    halves.append(np.asarray(fn(*srcs), F16).view(np.uint16).astype(U32))
            w.vwrite(vdst, halves[0] | (halves[1] << U32(16)))
            return nxt
        return pk
    out = {"v_fma_mix_f32": None, "v_fma_mixlo_f16": False, "v_fma_mixhi_f16": True}[name]

    def fma_mix(w: Wave) -> int:
        a, b, c = (_mix_source(w, codes[i], lit, bool(opsel_hi >> i & 1), bool(opsel >> i & 1),
                               bool(neg_hi >> i & 1), bool(neg >> i & 1)) for i in range(3))
        with np.errstate(all="ignore"):
            if out is None:
                w.vwrite(vdst, fma_narrow(a, b, c, F32).view(U32))
            else:
                w.vwrite16(vdst, fma_narrow(a, b, c, F16).view(np.uint16), out)
        return nxt
    return fma_mix


def _vopd_half(h: Inst, lit: int | None) -> Callable[[Wave], tuple[int, np.ndarray]]:
    name, s0, s1, dst = h.name, h.f["src0"], 256 + h.f["vsrc1"], h.f["vdst"]

    def f32(w: Wave, code: int) -> np.ndarray:
        return w.vread(code, lit).view(F32)

    def run(w: Wave) -> tuple[int, np.ndarray]:
        with np.errstate(all="ignore"):
            if name == "v_mov_b32":
                r = w.vread(s0, lit).copy()
            elif name == "v_cndmask_b32":
                r = np.where(mask_of(w.s[VCC_LO]), w.vread(s1, lit), w.vread(s0, lit))
            elif name == "v_fmac_f32":
                r = fma_narrow(f32(w, s0), f32(w, s1), w.v[dst].view(F32), F32).view(U32)
            elif name == "v_fmaak_f32":
                k = np.full(LANES, lit, U32).view(F32)
                r = fma_narrow(f32(w, s0), f32(w, s1), k, F32).view(U32)
            elif name == "v_fmamk_f32":
                k = np.full(LANES, lit, U32).view(F32)
                r = fma_narrow(f32(w, s0), k, f32(w, s1), F32).view(U32)
            else:
                _t, _s, fn = PLAIN[name]
                if name.endswith("f32"):
                    r = np.asarray(fn(f32(w, s0), f32(w, s1)), F32).view(U32)
                else:
                    r = np.asarray(fn(w.vread(s0, lit), w.vread(s1, lit)), U32)
        return dst, r
    return run


def _compile_vopd(inst: Inst, nxt: int) -> Callable[[Wave], int]:
    assert inst.y is not None
    x, y = _vopd_half(inst, inst.literal), _vopd_half(inst.y, inst.literal)

    def run(w: Wave) -> int:
        dx, rx = x(w)
        dy, ry = y(w)  # both halves read before either writes
        w.vwrite(dx, rx)
        w.vwrite(dy, ry)
        return nxt
    return run

