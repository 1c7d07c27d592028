"""Vector ALU opcodes against hand-computed results, including float edge cases.

Each case: machine code, register inputs, expected outputs; lanes get the same input unless a
list is given. Values are bit patterns (f32/f16/f64 helpers spell the floats).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from asm import f16, f32, f64, run, v, vop1, vop2, vop3, vop3p, vop3sd, vopc, vopd
from rdna3 import EmulationError, Memory, Wave

NAN32, INF32, DENORM32 = 0x7FC00000, 0x7F800000, 0x00000001  # smallest f32 denormal
NINF32 = 0xFF800000
_CMP_LANES = [f32(1.0), f32(2.0), NAN32, f32(3.0)] * 8
_CMP_LANES16 = [f16(1.0), f16(2.0), 0x7E00, f16(3.0)] * 8
M = 0xFFFFFFFF


def _wave(inputs: dict[str, object]) -> Wave:
    w = Wave(Memory(), np.zeros(64, np.uint8))
    w.exec = M
    for key, val in inputs.items():
        if key.startswith("v") and key != "vcc":
            w.v[int(key[1:])] = np.array(val, dtype=np.uint64).astype(np.uint32) if isinstance(val, list) \
                else np.uint32(val)
        elif key == "vcc":
            w.s[106] = int(val)  # type: ignore[call-overload]
        elif key == "exec":
            w.exec = int(val)  # type: ignore[call-overload]
        else:
            w.s[int(key[1:])] = int(val)  # type: ignore[call-overload]
    return w


def _lanes(w: Wave, key: str) -> object:
    if key.startswith("v") and key != "vcc":
        return w.v[int(key[1:])]
    if key == "vcc":
        return w.s[106]
    if key == "exec":
        return w.exec
    return w.s[int(key[1:])]


def _check(code: bytes, inputs: dict[str, object], expected: dict[str, object]) -> None:
    w = run(code, _wave(inputs))
    for key, want in expected.items():
        got = _lanes(w, key)
        if isinstance(got, np.ndarray):
            want_arr = np.array(want, dtype=np.uint64).astype(np.uint32) if isinstance(want, list) \
                else np.full(32, want, np.uint32)
            assert got.tolist() == want_arr.tolist(), f"{key}: {[hex(x) for x in got[:4]]} != {want!r}"
        else:
            assert got == want, f"{key}: {got:#x} != {want:#x}"  # type: ignore[str-format]


CASES = [
    # moves and conversions
    ("v_mov_b32 literal", vop1("v_mov_b32", 0, 255, 0xDEADBEEF), {}, {"v0": 0xDEADBEEF}),
    ("v_mov_b32 inline -16", vop1("v_mov_b32", 0, 208), {}, {"v0": 0xFFFFFFF0}),
    ("v_mov_b32 inline 1/(2pi)", vop1("v_mov_b32", 0, 248), {}, {"v0": 0x3E22F983}),
    ("v_mov_b16 hi->lo (true16)", vop1("v_mov_b16", 0, v(1 | 128)), {"v0": 0xAAAABBBB, "v1": 0x12345678},
     {"v0": 0xAAAA1234}),
    ("v_mov_b16 lo->hi (true16)", vop1("v_mov_b16", 128, v(1)), {"v0": 0xAAAABBBB, "v1": 0x12345678},
     {"v0": 0x5678BBBB}),
    ("v_cvt_f16_f32 rne tie to even", vop1("v_cvt_f16_f32", 0, v(1)), {"v1": f32(1 + 2**-11), "v0": 0xFFFF0000},
     {"v0": 0xFFFF3C00}),
    ("v_cvt_f16_f32 tie up", vop1("v_cvt_f16_f32", 0, v(1)), {"v1": f32(1 + 3 * 2**-11)}, {"v0": 0x3C02}),
    ("v_cvt_f16_f32 to f16 denormal", vop1("v_cvt_f16_f32", 128, v(1)), {"v1": f32(2**-24), "v0": 0x1111},
     {"v0": 0x00011111}),
    ("v_cvt_f16_f32 overflow", vop1("v_cvt_f16_f32", 0, v(1)), {"v1": f32(70000.0)}, {"v0": 0x7C00}),
    ("v_cvt_f32_f16 hi half", vop1("v_cvt_f32_f16", 0, v(1 | 128)), {"v1": 0xC0000000}, {"v0": f32(-2.0)}),
    ("v_cvt_f32_f16 denormal", vop1("v_cvt_f32_f16", 0, v(1)), {"v1": 0x0001}, {"v0": f32(2**-24)}),
    ("v_cvt_f32_f64 rne", vop3("v_cvt_f32_f64", 0, v(2)), {"v2": f64(1 + 2**-24) & M, "v3": f64(1 + 2**-24) >> 32},
     {"v0": f32(1.0)}),
    ("v_cvt_f32_f64 keeps f32 denormal", vop1("v_cvt_f32_f64", 0, v(2)),
     {"v2": f64(2.0**-149) & M, "v3": f64(2.0**-149) >> 32}, {"v0": DENORM32}),
    ("v_cvt_f64_f32", vop1("v_cvt_f64_f32", 0, v(2)), {"v2": f32(-1.5)}, {"v0": 0, "v1": 0xBFF80000}),
    ("v_cvt_f32_u32 rounding", vop1("v_cvt_f32_u32", 0, v(1)), {"v1": 0xFFFFFFFF}, {"v0": f32(4294967296.0)}),
    ("v_cvt_f32_i32", vop1("v_cvt_f32_i32", 0, v(1)), {"v1": 0xFFFFFFFD}, {"v0": f32(-3.0)}),
    ("v_cvt_u32_f32 trunc/clamp/nan", vop1("v_cvt_u32_f32", 0, v(1)),
     {"v1": [f32(3.9), f32(-5.0), NAN32, f32(5e9)] * 8}, {"v0": [3, 0, 0, M] * 8}),
    ("v_cvt_i32_f32", vop1("v_cvt_i32_f32", 0, v(1)), {"v1": [f32(-3.9), f32(3e9), NAN32, f32(-3e9)] * 8},
     {"v0": [0xFFFFFFFD, 0x7FFFFFFF, 0, 0x80000000] * 8}),
    ("v_cvt_i32_f64", vop1("v_cvt_i32_f64", 0, v(2)), {"v2": f64(-7.5) & M, "v3": f64(-7.5) >> 32},
     {"v0": 0xFFFFFFF9}),
    ("v_rcp_f32", vop1("v_rcp_f32", 0, v(1)), {"v1": [f32(4.0), f32(0.0), f32(-0.0), INF32] * 8},
     {"v0": [f32(0.25), INF32, 0xFF800000, 0] * 8}),
    ("v_rcp_iflag_f32", vop1("v_rcp_iflag_f32", 0, v(1)), {"v1": f32(0.5)}, {"v0": f32(2.0)}),
    ("v_rsq_f32", vop1("v_rsq_f32", 0, v(1)), {"v1": [f32(4.0), f32(0.0), f32(-1.0), INF32] * 8},
     {"v0": [f32(0.5), INF32, NAN32, 0] * 8}),
    ("v_rsq_f64", vop1("v_rsq_f64", 0, v(2)), {"v2": f64(0.25) & M, "v3": f64(0.25) >> 32},
     {"v0": f64(2.0) & M, "v1": f64(2.0) >> 32}),
    ("v_rsq_f64 zero", vop1("v_rsq_f64", 0, v(2)), {"v2": 0, "v3": 0}, {"v0": 0, "v1": 0x7FF00000}),
    ("v_sqrt_f32", vop1("v_sqrt_f32", 0, v(1)), {"v1": f32(2.25)}, {"v0": f32(1.5)}),
    ("v_frexp_mant_f32", vop1("v_frexp_mant_f32", 0, v(1)), {"v1": [f32(12.0), f32(-0.75), DENORM32, INF32] * 8},
     {"v0": [f32(0.75), f32(-0.75), f32(0.5), NAN32] * 8}),
    ("v_frexp_exp_i32_f32", vop1("v_frexp_exp_i32_f32", 0, v(1)), {"v1": [f32(12.0), f32(0.75), DENORM32, INF32] * 8},
     {"v0": [4, 0, 0xFFFFFF6C, 0] * 8}),
    ("v_exp_f32", vop1("v_exp_f32", 0, v(1)), {"v1": [f32(3.0), f32(-1.0), f32(200.0), NINF32] * 8},
     {"v0": [f32(8.0), f32(0.5), INF32, 0] * 8}),
    ("v_log_f32", vop1("v_log_f32", 0, v(1)), {"v1": [f32(8.0), f32(0.0), f32(-1.0), INF32] * 8},
     {"v0": [f32(3.0), NINF32, NAN32, INF32] * 8}),
    ("v_rndne_f32 ties to even", vop1("v_rndne_f32", 0, v(1)), {"v1": [f32(2.5), f32(3.5), f32(-2.5), f32(-0.4)] * 8},
     {"v0": [f32(2.0), f32(4.0), f32(-2.0), 0x80000000] * 8}),
    ("v_floor_f32", vop1("v_floor_f32", 0, v(1)), {"v1": [f32(-1.5), f32(1.5)] * 16},
     {"v0": [f32(-2.0), f32(1.0)] * 16}),
    ("v_ceil_f32", vop1("v_ceil_f32", 0, v(1)), {"v1": [f32(-1.5), f32(1.5)] * 16}, {"v0": [0xBF800000, f32(2.0)] * 16}),
    ("v_trunc_f32", vop1("v_trunc_f32", 0, v(1)), {"v1": [f32(-1.5), f32(1.5)] * 16}, {"v0": [0xBF800000, f32(1.0)] * 16}),
    ("v_readfirstlane_b32", vop1("v_readfirstlane_b32", 5, v(1)), {"v1": list(range(32)), "exec": 0xF0},
     {"s5": 4}),
    # f32 arithmetic
    ("v_add_f32 denormals kept", vop2("v_add_f32", 0, v(1), v(2)), {"v1": DENORM32, "v2": DENORM32}, {"v0": 2}),
    ("v_add_f32 rne", vop2("v_add_f32", 0, v(1), v(2)), {"v1": f32(1.0), "v2": f32(2**-24)}, {"v0": f32(1.0)}),
    ("v_sub_f32", vop2("v_sub_f32", 0, v(1), v(2)), {"v1": f32(1.0), "v2": f32(3.0)}, {"v0": f32(-2.0)}),
    ("v_subrev_f32", vop2("v_subrev_f32", 0, v(1), v(2)), {"v1": f32(1.0), "v2": f32(3.0)}, {"v0": f32(2.0)}),
    ("v_mul_f32 inline 0.5", vop2("v_mul_f32", 0, 240, v(2)), {"v2": f32(3.0)}, {"v0": f32(1.5)}),
    ("v_mul_f32 to denormal", vop2("v_mul_f32", 0, v(1), v(2)), {"v1": f32(2.0**-100), "v2": f32(2.0**-40)},
     {"v0": f32(2.0**-140)}),
    ("v_max_f32 nan operand", vop2("v_max_f32", 0, v(1), v(2)), {"v1": NAN32, "v2": f32(-1.0)}, {"v0": f32(-1.0)}),
    ("v_min_f32", vop2("v_min_f32", 0, v(1), v(2)), {"v1": f32(2.0), "v2": f32(-1.0)}, {"v0": f32(-1.0)}),
    ("v_fmac_f32 single rounding", vop2("v_fmac_f32", 0, v(1), v(2)),
     {"v1": f32(1 + 2**-23), "v2": f32(1 - 2**-23), "v0": f32(-1.0)}, {"v0": f32(-(2.0**-46))}),
    ("v_fma_f32 neg/abs", vop3("v_fma_f32", 0, v(1), v(2), v(3), abs_=0b010, neg=0b001),
     {"v1": f32(2.0), "v2": f32(-3.0), "v3": f32(1.0)}, {"v0": f32(-5.0)}),
    ("v_fma_f32 double-rounding case", vop3("v_fma_f32", 0, v(1), v(2), v(3)),
     {"v1": f32(1 + 2**-12), "v2": f32(1 + 2**-12), "v3": f32(2**-80)},
     {"v0": f32(1 + 2**-11 + 2**-23)}),  # a*b is an f32 midpoint; +2**-80 must round up
    ("v_mul_f32 clamp", vop3("v_mul_f32", 0, v(1), v(2), clamp=1), {"v1": f32(3.0), "v2": f32(2.0)},
     {"v0": f32(1.0)}),
    ("v_add_f32 omod*2", vop3("v_add_f32", 0, v(1), v(2), omod=1), {"v1": f32(3.0), "v2": f32(2.0)},
     {"v0": f32(10.0)}),
    # RDNA3's fused min/max (ISA: V_MAXMIN_F32 = v_min_f32(v_max_f32(S0, S1), S2), V_MINMAX_F32 =
    # v_max_f32(v_min_f32(S0, S1), S2)); a NaN operand loses to a number as in v_max/v_min_f32.
    # Clipped ReLU clamps x to [0, alpha] with one v_maxmin_f32.
    ("v_maxmin_f32 clamps to [0, 6]", vop3("v_maxmin_f32", 0, v(1), 128, v(2)),
     {"v1": [f32(-3.0), f32(2.5), f32(7.0), NAN32, NINF32, INF32, 0x80000000, DENORM32] * 4, "v2": f32(6.0)},
     {"v0": [0, f32(2.5), f32(6.0), 0, 0, f32(6.0), 0, DENORM32] * 4}),
    ("v_maxmin_f32 NaN bound is ignored", vop3("v_maxmin_f32", 0, v(1), v(2), v(3)),
     {"v1": f32(-1.0), "v2": f32(-2.0), "v3": NAN32}, {"v0": f32(-1.0)}),
    ("v_minmax_f32", vop3("v_minmax_f32", 0, v(1), v(2), v(3)),
     {"v1": [f32(5.0), f32(-5.0), NAN32, f32(1.0)] * 8, "v2": f32(2.0), "v3": [f32(-1.0), f32(-1.0), f32(0.5), NAN32] * 8},
     {"v0": [f32(2.0), f32(-1.0), f32(2.0), f32(1.0)] * 8}),
    # the lane's position among the lanes a mask selects (ISA: D = S1 + countbits(S0 & lanes-below mask))
    ("v_mbcnt_lo_u32_b32 of -1: the lane id", vop3("v_mbcnt_lo_u32_b32", 0, 193, 128), {}, {"v0": list(range(32))}),
    ("v_mbcnt_lo_u32_b32 mask + base", vop3("v_mbcnt_lo_u32_b32", 0, v(1), 130),
     {"v1": 0x80000005}, {"v0": [2, 3, 3] + [4] * 29}),
    ("v_mbcnt_hi_u32_b32 adds nothing in wave32", vop3("v_mbcnt_hi_u32_b32", 0, 193, v(1)),
     {"v1": list(range(32))}, {"v0": list(range(32))}),
    ("v_bfi_b32 (S0 & S1) | (~S0 & S2)", vop3("v_bfi_b32", 0, v(1), v(2), v(3)),
     {"v1": 0x7FFFFFFF, "v2": f32(2.5), "v3": f32(-1.0)}, {"v0": f32(-2.5)}),
    ("v_frexp_exp_i32_f64", vop1("v_frexp_exp_i32_f64", 0, v(2)),
     {"v2": [f64(12.0) & M, f64(2.0**-1074) & M, 0, 0] * 8,
      "v3": [f64(12.0) >> 32, f64(2.0**-1074) >> 32, 0x7FF00000, 0x7FF80000] * 8},
     {"v0": [4, 0xFFFFFBCF, 0, 0] * 8}),  # 2**-1074 = 0.5 * 2**-1073: -1073
    ("v_ashrrev_i64", vop3("v_ashrrev_i64", 0, v(1), v(2)),
     {"v1": [4, 36, 64 + 4, 0] * 8, "v2": 0x00000010, "v3": 0x80000000},
     {"v0": [0x00000001, 0xF8000000, 0x00000001, 0x00000010] * 8,
      "v1": [0xF8000000, 0xFFFFFFFF, 0xF8000000, 0x80000000] * 8}),
    ("v_add_co_ci_u32 e32: carry in and out through vcc", vop2("v_add_co_ci_u32", 0, v(1), v(2)),
     {"v1": [M, M, 1, 1] * 8, "v2": [0, 1, 1, 1] * 8, "vcc": 0x11111111},
     {"v0": [0, 0, 2, 2] * 8, "vcc": 0x33333333}),
    ("v_sub_co_ci_u32 e32", vop2("v_sub_co_ci_u32", 0, v(1), v(2)),
     {"v1": [5, 5, 0, 0] * 8, "v2": [5, 5, 0, 0] * 8, "vcc": 0x55555555}, {"v0": [M, 0, M, 0] * 8, "vcc": 0x55555555}),
    ("v_subrev_co_ci_u32 e32", vop2("v_subrev_co_ci_u32", 0, v(1), v(2)),
     {"v1": [1, 2] * 16, "v2": [5, 1] * 16, "vcc": 0}, {"v0": [4, M] * 16, "vcc": 0xAAAAAAAA}),
    ("v_subrev_co_ci_u32 S1 - S0 - carry, borrow out", vop3sd("v_subrev_co_ci_u32", 0, 8, v(1), v(2), 6),
     {"v1": [1, 5, 5, 0] * 8, "v2": [5, 5, 5, 0] * 8, "s6": 0x44444444},
     {"v0": [4, 0, M, 0] * 8, "s8": 0x44444444}),
    ("v_cmp_nlt_f16 (NaN is not <)", vopc("v_cmp_nlt_f16", v(1), 2),
     {"v1": [f16(1.0), f16(3.0), 0x7E00, f16(2.0)] * 8, "v2": f16(2.0)}, {"vcc": 0xEEEEEEEE}),
    ("v_cmp_nlt_f16 e64 hi halves", vop3("v_cmp_nlt_f16", 4, v(1), v(2), opsel=0b11),
     {"v1": [f16(1.0) << 16, f16(3.0) << 16] * 16, "v2": f16(2.0) << 16}, {"s4": 0xAAAAAAAA}),
    ("v_cmp_ge_i32", vopc("v_cmp_ge_i32", v(1), 2), {"v1": [M, 0, 5, 0x80000000] * 8, "v2": 0},
     {"vcc": 0x66666666}),
    ("v_cmp_ge_i32 e64", vop3("v_cmp_ge_i32", 4, v(1), v(2)), {"v1": [M, 7] * 16, "v2": 7}, {"s4": 0xAAAAAAAA}),
    ("v_cmpx_le_u64 e64 writes exec", vop3("v_cmpx_le_u64", 126, v(2), v(4)),
     {"v2": [0xFFFFFFFF, 0, 1, 0] * 8, "v3": [0, 1, 1, 0] * 8, "v4": 0, "v5": 1, "vcc": 3}, {"exec": 0xBBBBBBBB, "vcc": 3}),
    ("v_cmpx_ne_u64", vopc("v_cmpx_ne_u64", v(2), 4),
     {"v2": [5, 5, 6, 5] * 8, "v3": [0, 1, 0, 0] * 8, "v4": 5, "v5": 0}, {"exec": 0x66666666}),
    ("v_cmpx_gt_u64 e64 writes exec", vop3("v_cmpx_gt_u64", 0, v(2), v(4)),
     {"v2": [0, 5] * 16, "v3": [1, 0] * 16, "v4": 0xFFFFFFFF, "v5": 0, "vcc": 3}, {"exec": 0x55555555, "vcc": 3}),
    # the IEEE division macro's three steps (the ISA's V_DIV_SCALE/FMAS/FIXUP_F32 pseudocode):
    # S1 is the denominator, S2 the numerator, S0 the value to scale
    ("v_div_scale_f32 plain: unchanged, vcc 0", vop3sd("v_div_scale_f32", 0, 106, v(1), v(1), v(2)),
     {"v1": f32(3.0), "v2": f32(6.0), "vcc": M}, {"v0": f32(3.0), "vcc": 0}),
    ("v_div_scale_f32 n/d near max: denominator * 2**64, vcc", vop3sd("v_div_scale_f32", 0, 106, v(1), v(1), v(2)),
     {"v1": f32(1.0), "v2": f32(2.0**100)}, {"v0": f32(2.0**64), "vcc": M}),
    ("v_div_scale_f32 n/d near max: numerator kept, vcc", vop3sd("v_div_scale_f32", 0, 106, v(2), v(1), v(2)),
     {"v1": f32(1.0), "v2": f32(2.0**100)}, {"v0": f32(2.0**100), "vcc": M}),
    ("v_div_scale_f32 denormal quotient: numerator * 2**64, vcc to an sgpr",
     vop3sd("v_div_scale_f32", 0, 8, v(2), v(1), v(2)), {"v1": f32(2.0**10), "v2": f32(2.0**-120)},
     {"v0": f32(2.0**-56), "s8": M}),
    ("v_div_scale_f32 denormal quotient: denominator kept", vop3sd("v_div_scale_f32", 0, 8, v(1), v(1), v(2)),
     {"v1": f32(2.0**10), "v2": f32(2.0**-120)}, {"v0": f32(2.0**10), "s8": M}),
    ("v_div_scale_f32 denormal denominator * 2**64, no vcc", vop3sd("v_div_scale_f32", 0, 106, v(1), v(1), v(2)),
     {"v1": f32(2.0**-140), "v2": f32(2.0**-140), "vcc": M}, {"v0": f32(2.0**-76), "vcc": 0}),
    ("v_div_scale_f32 tiny numerator * 2**64, no vcc", vop3sd("v_div_scale_f32", 0, 106, v(2), v(1), v(2)),
     {"v1": f32(1.0), "v2": f32(2.0**-110)}, {"v0": f32(2.0**-46), "vcc": 0}),
    ("v_div_scale_f32 zero denominator: NaN", vop3sd("v_div_scale_f32", 0, 106, v(2), v(1), v(2)),
     {"v1": 0x80000000, "v2": f32(1.0)}, {"v0": NAN32, "vcc": 0}),
    ("v_div_scale_f32 vcc of inactive lanes 0, null sdst keeps vcc",
     vop3sd("v_div_scale_f32", 0, 8, v(1), v(1), v(2)) + vop3sd("v_div_scale_f32", 3, 124, v(1), v(1), v(2)),
     {"v1": f32(1.0), "v2": f32(2.0**100), "exec": 0xF, "vcc": 5},
     {"s8": 0xF, "vcc": 5, "v3": [f32(2.0**64)] * 4 + [0] * 28}),
    ("v_div_fmas_f32 vcc 0: fma", vop3("v_div_fmas_f32", 0, v(1), v(2), v(3)),
     {"v1": f32(2.0), "v2": f32(3.0), "v3": f32(1.0), "vcc": 0}, {"v0": f32(7.0)}),
    ("v_div_fmas_f32 vcc, estimate >= 2: * 2**64", vop3("v_div_fmas_f32", 0, v(1), v(2), v(3)),
     {"v1": f32(1.0), "v2": f32(1.0), "v3": f32(4.0), "vcc": M}, {"v0": f32(5.0 * 2.0**64)}),
    ("v_div_fmas_f32 vcc, estimate < 2: * 2**-64", vop3("v_div_fmas_f32", 0, v(1), v(2), v(3)),
     {"v1": f32(1.0), "v2": f32(0.5), "v3": f32(0.5), "vcc": 0x1}, {"v0": [f32(2.0**-64)] + [f32(1.0)] * 31}),
    # exact 2**-150 + 2**-179 after scaling: one rounding gives the smallest denormal; rounding the
    # fma first (to 2**-86) and then scaling would land on the tie 2**-150 and give 0
    ("v_div_fmas_f32 scales into the denormals with one rounding", vop3("v_div_fmas_f32", 0, v(1), v(2), v(3)),
     {"v1": f32(2.0**-86), "v2": f32(1.0), "v3": f32(2.0**-115), "vcc": M}, {"v0": DENORM32}),
    ("v_div_fixup_f32 sign of n/d on the quotient", vop3("v_div_fixup_f32", 0, v(1), v(2), v(3)),
     {"v1": f32(2.0), "v2": f32(-1.0), "v3": f32(2.0)}, {"v0": f32(-2.0)}),
    ("v_div_fixup_f32 special cases", vop3("v_div_fixup_f32", 0, v(1), v(2), v(3)),
     {"v1": f32(5.0),
      "v2": [0, 0x80000000, 0, INF32, f32(2.0), INF32, f32(3.0), NAN32, f32(2.0**30), f32(-1.0)] + [f32(1.0)] * 22,
      "v3": [f32(1.0), f32(1.0), 0, NINF32, NINF32, f32(-1.0), NAN32, f32(1.0), f32(2.0**-140), 0] + [f32(1.0)] * 22},
     {"v0": [INF32, NINF32, NAN32, NAN32, NINF32, 0x80000000, NAN32, NAN32, 0, 0x80000000] + [f32(5.0)] * 22}),
    ("v_div_fixup_f32 NaN quotient of ordinary operands is the overflow", vop3("v_div_fixup_f32", 0, v(1), v(2), v(3)),
     {"v1": NAN32, "v2": f32(-2.0**-126), "v3": f32(2.0**127)}, {"v0": NINF32}),
    # f16
    ("v_add_f16", vop2("v_add_f16", 0, v(1), v(2)), {"v1": f16(1.5), "v2": f16(2.25), "v0": 0xAAAA0000},
     {"v0": 0xAAAA0000 | f16(3.75)}),
    ("v_mul_f16 hi halves", vop2("v_mul_f16", 128, v(1 | 128), 2 | 128),
     {"v1": f16(3.0) << 16, "v2": f16(-0.5) << 16, "v0": 0x1234}, {"v0": f16(-1.5) << 16 | 0x1234}),
    ("v_fmac_f16", vop2("v_fmac_f16", 0, v(1), v(2)), {"v1": f16(2.0), "v2": f16(3.0), "v0": f16(1.0)},
     {"v0": f16(7.0)}),
    ("v_rcp_f16 (true16 halves)", vop1("v_rcp_f16", 128, v(1)),
     {"v1": [f16(2.0), 0, 0x8000, 0x7C00, f16(3.0), 0x0001] * 5 + [0, 0], "v0": 0x1111},
     {"v0": [(x << 16) | 0x1111 for x in [f16(0.5), 0x7C00, 0xFC00, 0, f16(1 / 3), 0x7C00] * 5 + [0x7C00] * 2]}),
    ("v_pk_add_f16 with -1.0 on both halves (op_sel_hi 0 for the constant)",
     vop3p("v_pk_add_f16", 0, v(1), 243, opsel_hi=0b01),
     {"v1": f16(2.5) << 16 | f16(0.25)}, {"v0": f16(1.5) << 16 | f16(-0.75)}),
    ("v_pk_add_f16 neg_hi and op_sel", vop3p("v_pk_add_f16", 0, v(1), v(2), opsel=0b01, opsel_hi=0b10, neg_hi=0b10),
     {"v1": f16(4.0) << 16 | f16(1.0), "v2": f16(0.5) << 16 | f16(2.0)}, {"v0": f16(0.5) << 16 | f16(6.0)}),
    # (1 + 2**-6)**2 + 2**-11: one rounding gives 1 + 2**-5 + 2**-10; rounding the product first
    # would land on the tie 1 + 2**-5 + 2**-11 and stay at 1 + 2**-5
    ("v_pk_fma_f16 single rounding per half", vop3p("v_pk_fma_f16", 0, v(1), v(1), v(2)),
     {"v1": f16(1 + 2**-6) << 16 | f16(1 + 2**-6), "v2": f16(2**-11) << 16 | f16(1.0)},
     {"v0": f16(1 + 2**-5 + 2**-10) << 16 | f16(2 + 2**-5)}),
    ("v_div_fixup_f16 sign, special cases, op_sel halves", vop3("v_div_fixup_f16", 0, v(1), v(2), v(3), opsel=0b1001),
     {"v1": f16(5.0) << 16,
      "v2": [f16(-2.0), 0, 0, 0x7C00, f16(2.0), 0x7C00, 0x7E00, f16(1.0)] * 4,
      "v3": [f16(1.0), f16(-1.0), 0, 0xFC00, 0x7C00, f16(1.0), f16(1.0), 0] * 4, "v0": 0x1234},
     {"v0": [(x << 16) | 0x1234 for x in [f16(-5.0), 0xFC00, 0x7E00, 0x7E00, 0x7C00, 0, 0x7E00, 0] * 4]}),
    ("v_sub_f16 (true16 hi halves)", vop2("v_sub_f16", 128, v(1 | 128), 2 | 128),
     {"v1": f16(1.0) << 16, "v2": f16(3.5) << 16, "v0": 0x5678}, {"v0": f16(-2.5) << 16 | 0x5678}),
    # the ISA's V_MAX/MIN_F16 (IEEE mode): a quiet NaN loses, a signalling NaN gives NaN, +0 > -0
    ("v_max_f16 NaN and signed zeros", vop2("v_max_f16", 0, v(1), 2),
     {"v1": [f16(1.0), 0x7E00, f16(-3.0), 0x8000, 0, 0x7C01, 0x8000, f16(1.0)] * 4,
      "v2": [f16(2.0), f16(-1.0), 0x7E00, 0, 0x8000, f16(1.0), 0x8000, 0x7D00] * 4, "v0": 0x11110000},
     {"v0": [0x11110000 | x for x in [f16(2.0), f16(-1.0), f16(-3.0), 0, 0, 0x7E00, 0x8000, 0x7E00]] * 4}),
    ("v_min_f16 NaN and signed zeros", vop2("v_min_f16", 0, v(1), 2),
     {"v1": [f16(1.0), 0x7E00, 0, 0x8000] * 8, "v2": [f16(-1.0), f16(-1.0), 0x8000, 0] * 8},
     {"v0": [f16(-1.0), f16(-1.0), 0x8000, 0x8000] * 8}),
    ("v_max_f32 signed zeros and a signalling NaN", vop2("v_max_f32", 0, v(1), v(2)),
     {"v1": [0x80000000, 0, 0x7F800001, f32(1.0)] * 8, "v2": [0, 0x80000000, f32(1.0), 0xFF800001] * 8},
     {"v0": [0, 0, NAN32, NAN32] * 8}),
    ("v_min_f32 signed zeros", vop2("v_min_f32", 0, v(1), v(2)),
     {"v1": [0x80000000, 0, 0, NAN32] * 8, "v2": [0, 0x80000000, 0, f32(2.0)] * 8},
     {"v0": [0x80000000, 0x80000000, 0, f32(2.0)] * 8}),
    ("v_cmp_ge_f16 e64 (NaN false)", vop3("v_cmp_ge_f16", 4, v(1), v(2)),
     {"v1": [f16(1.0), f16(3.0), 0x7E00, f16(2.0)] * 8, "v2": f16(2.0)}, {"s4": 0xAAAAAAAA}),
    ("v_pk_mul_f16", vop3p("v_pk_mul_f16", 0, v(1), v(2), opsel=0, opsel_hi=0b11),
     {"v1": f16(2.0) << 16 | f16(3.0), "v2": f16(-1.0) << 16 | f16(0.5)},
     {"v0": f16(-2.0) << 16 | f16(1.5)}),
    ("v_fma_mix_f32 f16 sources", vop3p("v_fma_mix_f32", 0, v(1), v(2), v(3), opsel=0b001, opsel_hi=0b011),
     {"v1": f16(1.5) << 16, "v2": f16(2.0), "v3": f32(0.25)}, {"v0": f32(3.25)}),
    ("v_fma_mixlo_f16", vop3p("v_fma_mixlo_f16", 0, v(1), v(2), v(3), opsel_hi=0),
     {"v1": f32(1.0), "v2": f32(1.0), "v3": f32(2**-11), "v0": 0xBEEF0000}, {"v0": 0xBEEF0000 | f16(1.0)}),
    ("v_fma_mixhi_f16 neg", vop3p("v_fma_mixhi_f16", 0, v(1), v(2), v(3), opsel_hi=0, neg=0b001),
     {"v1": f32(2.0), "v2": f32(3.0), "v3": f32(1.0), "v0": 0x0000BEEF}, {"v0": f16(-5.0) << 16 | 0xBEEF}),
    # f64
    ("v_fma_f64 exact accumulate", vop3("v_fma_f64", 0, v(2), v(4), v(6)),
     {"v2": f64(1 + 2**-30) & M, "v3": f64(1 + 2**-30) >> 32, "v4": f64(1 + 2**-30) & M,
      "v5": f64(1 + 2**-30) >> 32, "v6": f64(-1.0) & M, "v7": f64(-1.0) >> 32},
     {"v0": f64(2**-29 + 2**-60) & M, "v1": f64(2**-29 + 2**-60) >> 32}),
    ("v_mul_f64 inline 2.0", vop3("v_mul_f64", 0, v(2), 244), {"v2": f64(1.25) & M, "v3": f64(1.25) >> 32},
     {"v0": f64(2.5) & M, "v1": f64(2.5) >> 32}),
    ("v_add_f64 neg", vop3("v_add_f64", 0, v(2), v(2), neg=0b10), {"v2": 5, "v3": 0x3FF00000},
     {"v0": 0, "v1": 0}),
    # integer
    ("v_add_nc_u32 wraps", vop2("v_add_nc_u32", 0, v(1), v(2)), {"v1": M, "v2": 2}, {"v0": 1}),
    ("v_sub_nc_u32", vop2("v_sub_nc_u32", 0, v(1), v(2)), {"v1": 1, "v2": 2}, {"v0": M}),
    ("v_subrev_nc_u32", vop2("v_subrev_nc_u32", 0, v(1), v(2)), {"v1": 1, "v2": 2}, {"v0": 1}),
    ("v_mul_u32_u24", vop2("v_mul_u32_u24", 0, v(1), v(2)), {"v1": 0xFF000003, "v2": 0x01000005}, {"v0": 15}),
    ("v_mul_i32_i24", vop2("v_mul_i32_i24", 0, v(1), v(2)), {"v1": 0x00FFFFFF, "v2": 7}, {"v0": 0xFFFFFFF9}),
    ("v_mad_u32_u24", vop3("v_mad_u32_u24", 0, v(1), v(2), v(3)), {"v1": 0x1000, "v2": 0x1000, "v3": 1},
     {"v0": 0x1000001}),
    ("v_mad_i32_i24", vop3("v_mad_i32_i24", 0, v(1), v(2), v(3)), {"v1": 0xFFFFFF, "v2": 3, "v3": 10}, {"v0": 7}),
    ("v_mul_lo_u32", vop3("v_mul_lo_u32", 0, v(1), v(2)), {"v1": 0x10001, "v2": 0x10001}, {"v0": 0x20001}),
    ("v_add_nc_u16 wraps", vop3("v_add_nc_u16", 0, v(1), v(2)),
     {"v0": 0x55550000, "v1": 0xFFFF, "v2": 0x0003}, {"v0": 0x55550002}),
    ("v_sub_nc_u16 wraps", vop3("v_sub_nc_u16", 0, v(1), v(2)),
     {"v0": 0x55550000, "v1": 0x0001, "v2": 0x0003}, {"v0": 0x5555FFFE}),
    ("v_mul_lo_u16 wraps, keeps the high half", vop3("v_mul_lo_u16", 0, v(1), v(2)),
     {"v0": 0xAAAA0000, "v1": 0x0001_0301, "v2": 0x0002_0101}, {"v0": 0xAAAA0401}),
    ("v_pack_b32_f16 low halves", vop3("v_pack_b32_f16", 0, v(1), v(2)),
     {"v1": 0x1111_3C00, "v2": 0x2222_C000}, {"v0": 0xC000_3C00}),
    ("v_pack_b32_f16 op_sel high halves", vop3("v_pack_b32_f16", 0, v(1), v(2), opsel=0b011),
     {"v1": 0x3C00_1111, "v2": 0xC000_2222}, {"v0": 0xC000_3C00}),
    ("v_pack_b32_f16 neg", vop3("v_pack_b32_f16", 0, v(1), v(2), neg=0b01),
     {"v1": 0x0000_3C00, "v2": 0x0000_4000}, {"v0": 0x4000_BC00}),
    ("v_mul_hi_u32", vop3("v_mul_hi_u32", 0, v(1), v(2)), {"v1": M, "v2": M}, {"v0": 0xFFFFFFFE}),
    ("v_max_i32", vop2("v_max_i32", 0, v(1), v(2)), {"v1": 0xFFFFFFFF, "v2": 0xFFFFFFFE}, {"v0": M}),
    ("v_max_u32 (unsigned)", vop2("v_max_u32", 0, v(1), 2),
     {"v1": 0xFFFFFFFF, "v2": 1}, {"v0": 0xFFFFFFFF}),
    ("v_min_u32", vop2("v_min_u32", 0, v(1), 2), {"v1": 0xFFFFFFFF, "v2": 1}, {"v0": 1}),
    ("v_min_i32", vop2("v_min_i32", 0, v(1), 2), {"v1": 0xFFFFFFFF, "v2": 1}, {"v0": 0xFFFFFFFF}),
    ("v_med3_i32", vop3("v_med3_i32", 0, v(1), v(2), v(3)), {"v1": 0xFFFFFFF0, "v2": 9, "v3": 3}, {"v0": 3}),
    ("v_and_b32", vop2("v_and_b32", 0, v(1), v(2)), {"v1": 0xF0F0, "v2": 0xFF00}, {"v0": 0xF000}),
    ("v_or_b32", vop2("v_or_b32", 0, v(1), v(2)), {"v1": 0xF0F0, "v2": 0xFF00}, {"v0": 0xFFF0}),
    ("v_xor_b32", vop2("v_xor_b32", 0, v(1), v(2)), {"v1": 0xF0F0, "v2": 0xFF00}, {"v0": 0x0FF0}),
    ("v_lshlrev_b32 mod 32", vop2("v_lshlrev_b32", 0, v(1), v(2)), {"v1": 33, "v2": 3}, {"v0": 6}),
    ("v_lshrrev_b32", vop2("v_lshrrev_b32", 0, v(1), v(2)), {"v1": 4, "v2": 0x80000000}, {"v0": 0x08000000}),
    ("v_ashrrev_i32", vop2("v_ashrrev_i32", 0, v(1), v(2)), {"v1": 4, "v2": 0x80000000}, {"v0": 0xF8000000}),
    ("v_lshlrev_b64 crosses halves", vop3("v_lshlrev_b64", 0, v(1), v(2)), {"v1": 4, "v2": 0xF0000001, "v3": 1},
     {"v0": 0x10, "v1": 0x1F}),
    ("v_add3_u32", vop3("v_add3_u32", 0, v(1), v(2), v(3)), {"v1": M, "v2": M, "v3": 3}, {"v0": 1}),
    ("v_add_lshl_u32", vop3("v_add_lshl_u32", 0, v(1), v(2), v(3)), {"v1": 1, "v2": 2, "v3": 4}, {"v0": 48}),
    ("v_lshl_add_u32", vop3("v_lshl_add_u32", 0, v(1), v(2), v(3)), {"v1": 1, "v2": 4, "v3": 2}, {"v0": 18}),
    ("v_lshl_or_b32", vop3("v_lshl_or_b32", 0, v(1), v(2), v(3)), {"v1": 1, "v2": 4, "v3": 2}, {"v0": 18}),
    ("v_and_or_b32", vop3("v_and_or_b32", 0, v(1), v(2), v(3)), {"v1": 0xFF, "v2": 0x0F, "v3": 0x100},
     {"v0": 0x10F}),
    ("v_or3_b32", vop3("v_or3_b32", 0, v(1), v(2), v(3)), {"v1": 1, "v2": 2, "v3": 4}, {"v0": 7}),
    ("v_fmamk_f32 (v1 * K + v2)", vop2("v_fmamk_f32", 0, v(1), 2, f32(3.0)), {"v1": f32(2.0), "v2": f32(0.5)},
     {"v0": f32(6.5)}),
    ("v_fmaak_f32 (v1 * v2 + K)", vop2("v_fmaak_f32", 0, v(1), 2, f32(3.0)), {"v1": f32(2.0), "v2": f32(0.5)},
     {"v0": f32(4.0)}),
    ("v_bfe_u32", vop3("v_bfe_u32", 0, v(1), v(2), v(3)), {"v1": 0xABCD, "v2": 4, "v3": 8}, {"v0": 0xBC}),
    ("v_ldexp_f32", vop3("v_ldexp_f32", 0, v(1), v(2)), {"v1": [f32(1.5), f32(1.0), f32(3.0), f32(1.0)] * 8,
     "v2": [3, 0xFFFFFFFF, 200, 0xFFFFFF6B] * 8}, {"v0": [f32(12.0), f32(0.5), INF32, DENORM32] * 8}),
    ("v_cndmask_b32 vcc", vop2("v_cndmask_b32", 0, v(1), v(2)), {"v1": 1, "v2": 2, "vcc": 0x5},
     {"v0": [2, 1, 2] + [1] * 29}),
    ("v_cndmask_b32 e64 sgpr mask + neg", vop3("v_cndmask_b32", 0, v(1), v(2), 4, neg=0b10),
     {"v1": 1, "v2": f32(2.0), "s4": 0x2}, {"v0": [1, f32(-2.0)] + [1] * 30}),
    ("v_cndmask_b16 opsel", vop3("v_cndmask_b16", 0, v(1), v(2), 4, opsel=0b0011),
     {"v1": 0x11110000, "v2": 0x22220000, "s4": 0x1, "v0": 0xAAAABBBB},
     {"v0": [0xAAAA2222] + [0xAAAA1111] * 31}),
    # carries
    ("v_add_co_u32 carry", vop3sd("v_add_co_u32", 0, 8, v(1), v(2)), {"v1": [M, 1] * 16, "v2": 1},
     {"v0": [0, 2] * 16, "s8": 0x55555555}),
    ("v_add_co_ci_u32", vop3sd("v_add_co_ci_u32", 0, 8, v(1), v(2), 6), {"v1": M, "v2": 0, "s6": 0x1},
     {"v0": [0] + [M] * 31, "s8": 0x1}),
    ("v_sub_co_u32 borrow", vop3sd("v_sub_co_u32", 0, 8, v(1), v(2)), {"v1": 1, "v2": 2}, {"v0": M, "s8": M}),
    ("v_sub_co_ci_u32", vop3sd("v_sub_co_ci_u32", 0, 8, v(1), v(2), 6), {"v1": 5, "v2": 5, "s6": 0x2},
     {"v0": [0, M] + [0] * 30, "s8": 0x2}),
    ("v_mad_u64_u32 carry out", vop3sd("v_mad_u64_u32", 0, 8, v(2), v(3), v(4)),
     {"v2": M, "v3": M, "v4": 0, "v5": 0x00000002}, {"v0": 1, "v1": 0, "s8": M}),
    ("v_mad_i64_i32", vop3sd("v_mad_i64_i32", 0, 8, v(2), v(3), v(4)), {"v2": 0xFFFFFFFE, "v3": 3, "v4": 1, "v5": 0},
     {"v0": 0xFFFFFFFB, "v1": M, "s8": 0}),
    # compares
    ("v_cmp_lt_f32 nan false", vopc("v_cmp_lt_f32", v(1), 2), {"v1": [NAN32, f32(1.0)] * 16, "v2": f32(2.0)},
     {"vcc": 0xAAAAAAAA}),
    ("v_cmp_gt_f32 literal", vopc("v_cmp_gt_f32", 255, 2, f32(1.5)), {"v2": f32(1.0)}, {"vcc": M}),
    ("v_cmp_eq_f32 -0 == +0", vop3("v_cmp_eq_f32", 4, v(1), v(2)), {"v1": 0x80000000, "v2": 0}, {"s4": M}),
    ("v_cmp_ngt_f32 nan true", vop3("v_cmp_ngt_f32", 4, v(1), v(2)), {"v1": NAN32, "v2": 0}, {"s4": M}),
    ("v_cmp_lt_f16 hi halves", vopc("v_cmp_lt_f16", v(1 | 128), 2 | 128),
     {"v1": f16(1.0) << 16, "v2": f16(2.0) << 16 | f16(0.0)}, {"vcc": M}),
    ("v_cmp_eq_f16", vop3("v_cmp_eq_f16", 4, v(1), v(2)), {"v1": f16(1.0), "v2": f16(1.0)}, {"s4": M}),
    ("v_cmp_neq_f64 nan true", vop3("v_cmp_neq_f64", 4, v(2), v(2)), {"v2": 0, "v3": 0x7FF80000}, {"s4": M}),
    ("v_cmp_eq_u64", vopc("v_cmp_eq_u64", v(2), 4), {"v2": 1, "v3": [1, 2] * 16, "v4": 1, "v5": 1},
     {"vcc": 0x55555555}),
    ("v_cmp_ne_u64 e64", vop3("v_cmp_ne_u64", 6, v(2), v(4)), {"v2": 1, "v3": [1, 2] * 16, "v4": 1, "v5": 1},
     {"s6": 0xAAAAAAAA}),
    ("v_cmp_lt_u64 high dword decides", vopc("v_cmp_lt_u64", v(2), 4), {"v2": M, "v3": 0, "v4": 0, "v5": 1},
     {"vcc": M}),
    ("v_cmp_gt_u64", vopc("v_cmp_gt_u64", v(2), 4), {"v2": 0, "v3": M, "v4": M, "v5": 1}, {"vcc": M}),
    ("v_cmp_lt_i64 negative", vopc("v_cmp_lt_i64", v(2), 4), {"v2": 0, "v3": M, "v4": 0, "v5": 0}, {"vcc": M}),
    ("v_cmp_gt_i64", vopc("v_cmp_gt_i64", v(2), 4), {"v2": 0, "v3": M, "v4": 0, "v5": 0}, {"vcc": 0}),
    ("v_cmp_class_f32", vopc("v_cmp_class_f32", v(1), 2),
     {"v1": [NAN32, INF32, f32(-1.0), DENORM32, 0x80000000, 0, f32(2.0), 0xFF800000] * 4,
      "v2": [0b10, 1 << 9, 1 << 3, 1 << 7, 1 << 5, 1 << 6, 1 << 8, 0b11] * 4}, {"vcc": 0x7F7F7F7F}),
    ("v_cmp_class_f64 e64", vop3("v_cmp_class_f64", 4, v(2), v(1)),
     {"v2": 0, "v3": [0x7FF80000, 0x80000000, 0x00000001, 0x3FF00000] * 8,
      "v1": [0b10, 1 << 5, 1 << 7, 1 << 3] * 8}, {"s4": 0x77777777}),
    ("v_cmp_lt_i32", vopc("v_cmp_lt_i32", v(1), 2), {"v1": M, "v2": 0}, {"vcc": M}),
    ("v_cmp_eq_i32", vopc("v_cmp_eq_i32", v(1), 2), {"v1": 7, "v2": 7}, {"vcc": M}),
    ("v_cmp_le_i32", vopc("v_cmp_le_i32", v(1), 2), {"v1": 0, "v2": M}, {"vcc": 0}),
    ("v_cmp_gt_i32", vopc("v_cmp_gt_i32", v(1), 2), {"v1": 0, "v2": M}, {"vcc": M}),
    ("v_cmp_lt_u32", vopc("v_cmp_lt_u32", v(1), 2), {"v1": 0, "v2": M}, {"vcc": M}),
    ("v_cmp_le_u32", vopc("v_cmp_le_u32", v(1), 2), {"v1": M, "v2": M}, {"vcc": M}),
    ("v_cmp_gt_u32 inactive lanes 0", vopc("v_cmp_gt_u32", v(1), 2), {"v1": M, "v2": 0, "exec": 0xFF},
     {"vcc": 0xFF}),
    ("v_cmp_ge_u32", vopc("v_cmp_ge_u32", v(1), 2), {"v1": 3, "v2": 3}, {"vcc": M}),
    ("v_cmp_eq_u32", vopc("v_cmp_eq_u32", 129, 2), {"v2": [1, 0] * 16}, {"vcc": 0x55555555}),
    ("v_cmp_ne_u32", vopc("v_cmp_ne_u32", 129, 2), {"v2": [1, 0] * 16}, {"vcc": 0xAAAAAAAA}),
    ("v_cmpx_eq_u32 writes exec only", vopc("v_cmpx_eq_u32", 129, 2), {"v2": [1, 0] * 16, "vcc": 7},
     {"exec": 0x55555555, "vcc": 7}),
    ("v_cmpx_gt_u32", vopc("v_cmpx_gt_u32", v(1), 2), {"v1": list(range(32)), "v2": 15}, {"exec": 0xFFFF0000}),
    ("v_cmpx_lt_i32", vopc("v_cmpx_lt_i32", v(1), 2), {"v1": M, "v2": 0}, {"exec": M}),
    ("v_cmpx_nge_f32 (NaN is not >=)", vopc("v_cmpx_nge_f32", v(1), 2),
     {"v1": [f32(1.0), f32(3.0), NAN32, f32(2.0)] * 8, "v2": f32(2.0)}, {"exec": 0x55555555}),
    ("v_cmp_nlt_f32 e64 to an sgpr", vop3("v_cmp_nlt_f32", 6, v(1), v(2)),
     {"v1": [f32(1.0), f32(3.0), NAN32, f32(2.0)] * 8, "v2": f32(2.0)}, {"s6": 0xEEEEEEEE}),
    ("v_cmp_le_u64", vopc("v_cmp_le_u64", v(2), 4), {"v2": [5, 7, 6, 0] * 8, "v3": [0, 0, 0, 1] * 8, "v4": 6, "v5": 0},
     {"vcc": 0x55555555}),
    ("v_cmp_nge_f32", vopc("v_cmp_nge_f32", v(1), 2), {"v1": [f32(1.0), f32(3.0)] * 16, "v2": f32(2.0)},
     {"vcc": 0x55555555}),
    ("v_cmpx_gt_i32 e64", vop3("v_cmpx_gt_i32", 0, v(1), v(2)), {"v1": 1, "v2": M, "exec": 0xF}, {"exec": 0xF}),
    # every f32 condition, hand-computed for lanes 1.0, 2.0, NaN, 3.0 against 2.0 (NaN is
    # unordered: only u, the negated conditions and t hold for it)
    ("v_cmp_f_f32 vs 2.0", vopc("v_cmp_f_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"vcc": 0x00000000}),
    ("v_cmpx_f_f32 vs 2.0", vopc("v_cmpx_f_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"exec": 0x00000000}),
    ("v_cmp_lt_f32 vs 2.0", vopc("v_cmp_lt_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"vcc": 0x11111111}),
    ("v_cmpx_lt_f32 vs 2.0", vopc("v_cmpx_lt_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"exec": 0x11111111}),
    ("v_cmp_eq_f32 vs 2.0", vopc("v_cmp_eq_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"vcc": 0x22222222}),
    ("v_cmpx_eq_f32 vs 2.0", vopc("v_cmpx_eq_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"exec": 0x22222222}),
    ("v_cmp_le_f32 vs 2.0", vopc("v_cmp_le_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"vcc": 0x33333333}),
    ("v_cmpx_le_f32 vs 2.0", vopc("v_cmpx_le_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"exec": 0x33333333}),
    ("v_cmp_gt_f32 vs 2.0", vopc("v_cmp_gt_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"vcc": 0x88888888}),
    ("v_cmpx_gt_f32 vs 2.0", vopc("v_cmpx_gt_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"exec": 0x88888888}),
    ("v_cmp_lg_f32 vs 2.0", vopc("v_cmp_lg_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"vcc": 0x99999999}),
    ("v_cmpx_lg_f32 vs 2.0", vopc("v_cmpx_lg_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"exec": 0x99999999}),
    ("v_cmp_ge_f32 vs 2.0", vopc("v_cmp_ge_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"vcc": 0xAAAAAAAA}),
    ("v_cmpx_ge_f32 vs 2.0", vopc("v_cmpx_ge_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"exec": 0xAAAAAAAA}),
    ("v_cmp_o_f32 vs 2.0", vopc("v_cmp_o_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"vcc": 0xBBBBBBBB}),
    ("v_cmpx_o_f32 vs 2.0", vopc("v_cmpx_o_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"exec": 0xBBBBBBBB}),
    ("v_cmp_u_f32 vs 2.0", vopc("v_cmp_u_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"vcc": 0x44444444}),
    ("v_cmpx_u_f32 vs 2.0", vopc("v_cmpx_u_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"exec": 0x44444444}),
    ("v_cmp_nge_f32 vs 2.0", vopc("v_cmp_nge_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"vcc": 0x55555555}),
    ("v_cmpx_nge_f32 vs 2.0", vopc("v_cmpx_nge_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"exec": 0x55555555}),
    ("v_cmp_nlg_f32 vs 2.0", vopc("v_cmp_nlg_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"vcc": 0x66666666}),
    ("v_cmpx_nlg_f32 vs 2.0", vopc("v_cmpx_nlg_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"exec": 0x66666666}),
    ("v_cmp_ngt_f32 vs 2.0", vopc("v_cmp_ngt_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"vcc": 0x77777777}),
    ("v_cmpx_ngt_f32 vs 2.0", vopc("v_cmpx_ngt_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"exec": 0x77777777}),
    ("v_cmp_nle_f32 vs 2.0", vopc("v_cmp_nle_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"vcc": 0xCCCCCCCC}),
    ("v_cmpx_nle_f32 vs 2.0", vopc("v_cmpx_nle_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"exec": 0xCCCCCCCC}),
    ("v_cmp_neq_f32 vs 2.0", vopc("v_cmp_neq_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"vcc": 0xDDDDDDDD}),
    ("v_cmpx_neq_f32 vs 2.0", vopc("v_cmpx_neq_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"exec": 0xDDDDDDDD}),
    ("v_cmp_nlt_f32 vs 2.0", vopc("v_cmp_nlt_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"vcc": 0xEEEEEEEE}),
    ("v_cmpx_nlt_f32 vs 2.0", vopc("v_cmpx_nlt_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"exec": 0xEEEEEEEE}),
    ("v_cmp_t_f32 vs 2.0", vopc("v_cmp_t_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"vcc": 0xFFFFFFFF}),
    ("v_cmpx_t_f32 vs 2.0", vopc("v_cmpx_t_f32", v(1), 2), {"v1": _CMP_LANES, "v2": f32(2.0)},
     {"exec": 0xFFFFFFFF}),
    # the same sixteen conditions on f16 (VOPC 0-15, v_cmpx 128-143): lanes 1.0, 2.0, NaN, 3.0 vs 2.0
    ("v_cmp_f_f16 vs 2.0", vopc("v_cmp_f_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"vcc": 0x00000000}),
    ("v_cmpx_f_f16 vs 2.0", vopc("v_cmpx_f_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"exec": 0x00000000}),
    ("v_cmp_lt_f16 vs 2.0", vopc("v_cmp_lt_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"vcc": 0x11111111}),
    ("v_cmpx_lt_f16 vs 2.0", vopc("v_cmpx_lt_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"exec": 0x11111111}),
    ("v_cmp_eq_f16 vs 2.0", vopc("v_cmp_eq_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"vcc": 0x22222222}),
    ("v_cmpx_eq_f16 vs 2.0", vopc("v_cmpx_eq_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"exec": 0x22222222}),
    ("v_cmp_le_f16 vs 2.0", vopc("v_cmp_le_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"vcc": 0x33333333}),
    ("v_cmpx_le_f16 vs 2.0", vopc("v_cmpx_le_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"exec": 0x33333333}),
    ("v_cmp_gt_f16 vs 2.0", vopc("v_cmp_gt_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"vcc": 0x88888888}),
    ("v_cmpx_gt_f16 vs 2.0", vopc("v_cmpx_gt_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"exec": 0x88888888}),
    ("v_cmp_lg_f16 vs 2.0", vopc("v_cmp_lg_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"vcc": 0x99999999}),
    ("v_cmpx_lg_f16 vs 2.0", vopc("v_cmpx_lg_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"exec": 0x99999999}),
    ("v_cmp_ge_f16 vs 2.0", vopc("v_cmp_ge_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"vcc": 0xAAAAAAAA}),
    ("v_cmpx_ge_f16 vs 2.0", vopc("v_cmpx_ge_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"exec": 0xAAAAAAAA}),
    ("v_cmp_o_f16 vs 2.0", vopc("v_cmp_o_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"vcc": 0xBBBBBBBB}),
    ("v_cmpx_o_f16 vs 2.0", vopc("v_cmpx_o_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"exec": 0xBBBBBBBB}),
    ("v_cmp_u_f16 vs 2.0", vopc("v_cmp_u_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"vcc": 0x44444444}),
    ("v_cmpx_u_f16 vs 2.0", vopc("v_cmpx_u_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"exec": 0x44444444}),
    ("v_cmp_nge_f16 vs 2.0", vopc("v_cmp_nge_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"vcc": 0x55555555}),
    ("v_cmpx_nge_f16 vs 2.0", vopc("v_cmpx_nge_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"exec": 0x55555555}),
    ("v_cmp_nlg_f16 vs 2.0", vopc("v_cmp_nlg_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"vcc": 0x66666666}),
    ("v_cmpx_nlg_f16 vs 2.0", vopc("v_cmpx_nlg_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"exec": 0x66666666}),
    ("v_cmp_ngt_f16 vs 2.0", vopc("v_cmp_ngt_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"vcc": 0x77777777}),
    ("v_cmpx_ngt_f16 vs 2.0", vopc("v_cmpx_ngt_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"exec": 0x77777777}),
    ("v_cmp_nle_f16 vs 2.0", vopc("v_cmp_nle_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"vcc": 0xCCCCCCCC}),
    ("v_cmpx_nle_f16 vs 2.0", vopc("v_cmpx_nle_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"exec": 0xCCCCCCCC}),
    ("v_cmp_neq_f16 vs 2.0", vopc("v_cmp_neq_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"vcc": 0xDDDDDDDD}),
    ("v_cmpx_neq_f16 vs 2.0", vopc("v_cmpx_neq_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"exec": 0xDDDDDDDD}),
    ("v_cmp_nlt_f16 vs 2.0", vopc("v_cmp_nlt_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"vcc": 0xEEEEEEEE}),
    ("v_cmpx_nlt_f16 vs 2.0", vopc("v_cmpx_nlt_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"exec": 0xEEEEEEEE}),
    ("v_cmp_t_f16 vs 2.0", vopc("v_cmp_t_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"vcc": 0xFFFFFFFF}),
    ("v_cmpx_t_f16 vs 2.0", vopc("v_cmpx_t_f16", v(1), 2), {"v1": _CMP_LANES16, "v2": f16(2.0)},
     {"exec": 0xFFFFFFFF}),
    # exec masking
    ("inactive lanes keep their value", vop1("v_mov_b32", 0, 129), {"v0": 9, "exec": 0x1}, {"v0": [1] + [9] * 31}),
    # dual issue: both halves read before either writes
    ("vopd mov/mov swap", vopd("v_mov_b32", "v_mov_b32", 0, 1, v(1), 0, v(0), 0), {"v0": 5, "v1": 6},
     {"v0": 6, "v1": 5}),
    ("vopd fmac/add_nc", vopd("v_fmac_f32", "v_add_nc_u32", 0, 3, v(1), 2, 129, 4),
     {"v0": f32(1.0), "v1": f32(2.0), "v2": f32(3.0), "v4": 41}, {"v0": f32(7.0), "v3": 42}),
    ("vopd fmaak/fmamk", vopd("v_fmaak_f32", "v_fmamk_f32", 0, 1, v(2), 3, v(2), 3, f32(0.5)),
     {"v2": f32(2.0), "v3": f32(4.0)}, {"v0": f32(8.5), "v1": f32(5.0)}),
    ("vopd mul/sub", vopd("v_mul_f32", "v_sub_f32", 0, 1, v(2), 3, v(2), 3), {"v2": f32(2.0), "v3": f32(4.0)},
     {"v0": f32(8.0), "v1": f32(-2.0)}),
    ("vopd add/subrev", vopd("v_add_f32", "v_subrev_f32", 0, 1, v(2), 3, v(2), 3), {"v2": f32(2.0), "v3": f32(4.0)},
     {"v0": f32(6.0), "v1": f32(2.0)}),
    ("vopd max/min", vopd("v_max_f32", "v_min_f32", 0, 1, v(2), 3, v(2), 3), {"v2": f32(2.0), "v3": f32(4.0)},
     {"v0": f32(4.0), "v1": f32(2.0)}),
    ("vopd cndmask/and", vopd("v_cndmask_b32", "v_and_b32", 0, 1, v(2), 3, v(2), 3),
     {"v2": 0xF0, "v3": 0x3C, "vcc": 1}, {"v0": [0x3C] + [0xF0] * 31, "v1": 0x30}),
    ("vopd mov/lshlrev", vopd("v_mov_b32", "v_lshlrev_b32", 0, 1, 130, 0, 130, 3), {"v3": 3}, {"v0": 2, "v1": 12}),
]


@pytest.mark.parametrize("code,inputs,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_vector_op(code: bytes, inputs: dict[str, object], expected: dict[str, object]) -> None:
    _check(code, inputs, expected)


def test_fma_f32_matches_exact_rounding_on_random_inputs() -> None:
    rng = np.random.default_rng(1)
    a, b, c = ((rng.standard_normal(32) * 2.0 ** rng.integers(-20, 20, 32)).astype(np.float32)
               for _ in range(3))
    w = run(vop3("v_fma_f32", 0, v(1), v(2), v(3)),
            _wave({"v1": a.view(np.uint32).tolist(), "v2": b.view(np.uint32).tolist(),
                   "v3": c.view(np.uint32).tolist()}))
    for i in range(32):
        exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
        got = float(w.v[0].view(np.float32)[i])
        lo = np.nextafter(np.float32(got), np.float32(-math.inf))
        hi = np.nextafter(np.float32(got), np.float32(math.inf))
        assert abs(Fraction(got) - exact) <= abs(Fraction(float(lo)) - exact)
        assert abs(Fraction(got) - exact) <= abs(Fraction(float(hi)) - exact)


def test_integer_modifier_is_refused() -> None:
    with pytest.raises(EmulationError, match="abs/neg modifier on integer operand"):
        run(vop3("v_add_nc_u32", 0, v(1), v(2), neg=1))


def test_dpp_source_is_refused() -> None:
    with pytest.raises(EmulationError, match="operand code 250"):
        run(vop2("v_add_nc_u32", 0, 250, 1, 0))


@pytest.mark.parametrize("batch", range(4))
def test_division_macro_is_ieee_division(batch: int) -> None:
    """LLVM's f32 division sequence for gfx1100 (as MIOpen's norm kernels contain it) on the
    emulator gives numpy's correctly rounded n / d bit for bit: ordinary values, huge and tiny
    ratios, denormal numerators, denominators and quotients, zeros, infinities, NaN, signs."""
    rng = np.random.default_rng(3 + batch)
    specials = [(1.0, 3.0), (2.0**100, 2.0**-30), (2.0**-120, 2.0**10), (2.0**-140, 3.0), (3.0, 2.0**-140),
                (2.0**-140, 2.0**-145), (0.0, 5.0), (-0.0, 5.0), (5.0, 0.0), (5.0, -0.0), (0.0, 0.0),
                (math.inf, 2.0), (2.0, math.inf), (math.inf, -math.inf), (math.nan, 1.0), (1.0, math.nan),
                (-7.0, 3.0), (3.4e38, 0.5), (1e-45, 1e38), (2.0**127, 2.0**-126)]
    if batch:  # the other batches: random operands only
        specials = []
    n = np.array([a for a, _ in specials], np.float32)
    d = np.array([b for _, b in specials], np.float32)
    extra = 32 - len(specials)
    n = np.concatenate([n, (rng.standard_normal(extra) * 2.0 ** rng.integers(-140, 120, extra)).astype(np.float32)])
    d = np.concatenate([d, (rng.standard_normal(extra) * 2.0 ** rng.integers(-140, 120, extra)).astype(np.float32)])
    code = (vop3sd("v_div_scale_f32", 2, 124, v(1), v(1), v(0))     # denominator, scaled
            + vop3sd("v_div_scale_f32", 5, 106, v(0), v(1), v(0))   # numerator, scaled; vcc
            + vop1("v_rcp_f32", 3, v(2))
            + vop3("v_fma_f32", 4, v(2), v(3), 242, neg=0b001)      # 1 - d*r
            + vop2("v_fmac_f32", 3, v(4), v(3))                     # r += r*e
            + vop2("v_mul_f32", 4, v(5), v(3))                      # q = n*r
            + vop3("v_fma_f32", 6, v(2), v(4), v(5), neg=0b001)     # n - d*q
            + vop2("v_fmac_f32", 4, v(6), v(3))                     # q += r*rem
            + vop3("v_fma_f32", 2, v(2), v(4), v(5), neg=0b001)     # final remainder
            + vop3("v_div_fmas_f32", 2, v(2), v(3), v(4))
            + vop3("v_div_fixup_f32", 0, v(2), v(1), v(0)))
    w = run(code, _wave({"v0": n.view(np.uint32).tolist(), "v1": d.view(np.uint32).tolist()}))
    with np.errstate(all="ignore"):
        want = n / d
    got = w.v[0].view(np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert got[ok].view(np.uint32).tolist() == want[ok].view(np.uint32).tolist(), \
        [(float(a), float(b), float(g), float(x)) for a, b, g, x in zip(n, d, got, want, strict=True) if g != x]
