"""Scalar opcodes (SOP1/SOP2/SOPC/SOPK/SOPP/SMEM) against hand-computed results."""

from __future__ import annotations

import numpy as np
import pytest
from asm import mubuf, run, smem, sop1, sop2, sopc, sopk, sopp, v, vop1
from rdna3 import EmulationError, Memory, Wave

M = 0xFFFFFFFF
SCC = "scc"


def _wave(**regs: int) -> Wave:
    w = Wave(Memory(), np.zeros(16, np.uint8))
    w.exec = M
    for k, val in regs.items():
        if k == SCC:
            w.scc = val
        elif k == "exec":
            w.exec = val
        else:
            w.s[int(k[1:])] = val
    return w


CASES = [
    ("s_mov_b32 literal", sop1("s_mov_b32", 3, 255, 0x12345678), {}, {"s3": 0x12345678}),
    ("s_mov_b64", sop1("s_mov_b64", 4, 8), {"s8": 1, "s9": 2}, {"s4": 1, "s5": 2}),
    ("s_mov_b64 inline -1 sign-extends", sop1("s_mov_b64", 4, 193), {}, {"s4": M, "s5": M}),
    ("s_ctz_i32_b32", sop1("s_ctz_i32_b32", 3, 4), {"s4": 0x00A0, SCC: 1}, {"s3": 5, SCC: 1}),
    ("s_ctz_i32_b32 of 0", sop1("s_ctz_i32_b32", 3, 4), {"s4": 0}, {"s3": 0xFFFFFFFF}),
    ("s_clz_i32_u32", sop1("s_clz_i32_u32", 3, 4), {"s4": 0x00A0}, {"s3": 24}),
    ("s_clz_i32_u32 of 0", sop1("s_clz_i32_u32", 3, 4), {"s4": 0}, {"s3": 0xFFFFFFFF}),
    ("s_abs_i32", sop1("s_abs_i32", 3, 4), {"s4": 0xFFFFFFFB}, {"s3": 5, SCC: 1}),
    ("s_abs_i32 min int", sop1("s_abs_i32", 3, 4), {"s4": 0x80000000}, {"s3": 0x80000000, SCC: 1}),
    ("s_and_saveexec_b32", sop1("s_and_saveexec_b32", 3, 4), {"exec": 0xFF, "s4": 0x0F0},
     {"s3": 0xFF, "exec": 0xF0, SCC: 1}),
    ("s_and_not1_saveexec_b32", sop1("s_and_not1_saveexec_b32", 3, 4), {"exec": 0xFF, "s4": 0x0F0},
     {"s3": 0xFF, "exec": 0, SCC: 0}),
    ("s_add_u32 carry", sop2("s_add_u32", 3, 4, 5), {"s4": M, "s5": 2}, {"s3": 1, SCC: 1}),
    ("s_addc_u32 64-bit carry chain", sop2("s_add_u32", 0, 4, 6) + sop2("s_addc_u32", 1, 5, 7),
     {"s4": M, "s5": 1, "s6": 1, "s7": 2}, {"s0": 0, "s1": 4, SCC: 0}),
    ("s_sub_u32 borrow", sop2("s_sub_u32", 3, 4, 5), {"s4": 1, "s5": 2}, {"s3": M, SCC: 1}),
    ("s_add_i32 overflow", sop2("s_add_i32", 3, 4, 5), {"s4": 0x7FFFFFFF, "s5": 1}, {"s3": 0x80000000, SCC: 1}),
    ("s_sub_i32", sop2("s_sub_i32", 3, 4, 5), {"s4": 1, "s5": 3}, {"s3": 0xFFFFFFFE, SCC: 0}),
    ("s_and_b32", sop2("s_and_b32", 3, 4, 255, 0xF0), {"s4": 0x0F}, {"s3": 0, SCC: 0}),
    ("s_and_not1_b32", sop2("s_and_not1_b32", 3, 4, 5), {"s4": 0xFF, "s5": 0x0F}, {"s3": 0xF0, SCC: 1}),
    ("s_or_b32", sop2("s_or_b32", 3, 4, 5), {"s4": 1, "s5": 2}, {"s3": 3, SCC: 1}),
    ("s_or_not1_b32", sop2("s_or_not1_b32", 3, 4, 5), {"s4": 0, "s5": M}, {"s3": 0, SCC: 0}),
    ("s_nor_b32", sop2("s_nor_b32", 3, 4, 5), {"s4": 0, "s5": 0}, {"s3": M, SCC: 1}),
    ("s_xor_b32", sop2("s_xor_b32", 3, 4, 5), {"s4": 5, "s5": 5}, {"s3": 0, SCC: 0}),
    ("s_lshl_b32", sop2("s_lshl_b32", 3, 4, 5), {"s4": 0x80000001, "s5": 1}, {"s3": 2, SCC: 1}),
    ("s_lshr_b32", sop2("s_lshr_b32", 3, 4, 5), {"s4": 0x80000000, "s5": 31}, {"s3": 1, SCC: 1}),
    ("s_ashr_i32", sop2("s_ashr_i32", 3, 4, 5), {"s4": 0x80000000, "s5": 31}, {"s3": M, SCC: 1}),
    ("s_subb_u32 borrow in and out", sop2("s_subb_u32", 3, 4, 5), {"s4": 5, "s5": 5, SCC: 1}, {"s3": M, SCC: 1}),
    ("s_subb_u32 no borrow", sop2("s_subb_u32", 3, 4, 5), {"s4": 9, "s5": 5, SCC: 1}, {"s3": 3, SCC: 0}),
    ("s_or_b64", sop2("s_or_b64", 2, 4, 6), {"s4": 0x0000F000, "s5": 0x1, "s6": 0x0F, "s7": 0x80000000},
     {"s2": 0x0000F00F, "s3": 0x80000001, SCC: 1}),
    ("s_or_b64 zero clears scc", sop2("s_or_b64", 2, 4, 6), {"s4": 0, "s5": 0, "s6": 0, "s7": 0, SCC: 1},
     {"s2": 0, "s3": 0, SCC: 0}),
    ("s_lshl_b64", sop2("s_lshl_b64", 2, 4, 6), {"s4": 0x80000000, "s5": 0, "s6": 1}, {"s2": 0, "s3": 1, SCC: 1}),
    ("s_lshl2_add_u32", sop2("s_lshl2_add_u32", 3, 4, 5), {"s4": 0x40000000, "s5": 1}, {"s3": 1, SCC: 1}),
    ("s_lshl1_add_u32", sop2("s_lshl1_add_u32", 3, 4, 5), {"s4": 0x7FFFFFFF, "s5": 1}, {"s3": 0xFFFFFFFF, SCC: 0}),
    ("s_lshl3_add_u32", sop2("s_lshl3_add_u32", 3, 4, 5), {"s4": 5, "s5": 2}, {"s3": 42, SCC: 0}),
    ("s_lshl3_add_u32 carry", sop2("s_lshl3_add_u32", 3, 4, 5), {"s4": 0x20000000, "s5": 7}, {"s3": 7, SCC: 1}),
    ("s_lshl4_add_u32", sop2("s_lshl4_add_u32", 3, 4, 5), {"s4": 0x10000001, "s5": 0xFFFFFFF0}, {"s3": 0, SCC: 1}),
    ("s_min_i32", sop2("s_min_i32", 3, 4, 5), {"s4": M, "s5": 1}, {"s3": M, SCC: 1}),
    ("s_max_i32", sop2("s_max_i32", 3, 4, 5), {"s4": M, "s5": 1}, {"s3": 1, SCC: 0}),
    ("s_min_u32", sop2("s_min_u32", 3, 4, 5), {"s4": M, "s5": 1}, {"s3": 1, SCC: 0}),
    ("s_max_u32", sop2("s_max_u32", 3, 4, 5), {"s4": M, "s5": 1}, {"s3": M, SCC: 1}),
    ("s_mul_i32", sop2("s_mul_i32", 3, 4, 5), {"s4": M, "s5": 3}, {"s3": 0xFFFFFFFD}),
    ("s_mul_hi_u32", sop2("s_mul_hi_u32", 3, 4, 5), {"s4": M, "s5": M}, {"s3": 0xFFFFFFFE}),
    ("s_bfe_i64 sign-extends the low 32 bits", sop2("s_bfe_i64", 4, 8, 255, 0x200000),
     {"s8": 0x80000001, "s9": 0x1234}, {"s4": 0x80000001, "s5": M, SCC: 1}),
    ("s_bfe_i64 positive field at an offset", sop2("s_bfe_i64", 4, 8, 255, 0x080004),
     {"s8": 0x7F0, "s9": 0xFFFF}, {"s4": 0x7F, "s5": 0, SCC: 1}),
    ("s_bfe_i64 width 0 is zero", sop2("s_bfe_i64", 4, 8, 255, 0x000004),
     {"s8": M, "s9": M}, {"s4": 0, "s5": 0, SCC: 0}),
    ("s_mul_hi_i32", sop2("s_mul_hi_i32", 3, 4, 5), {"s4": M, "s5": 3}, {"s3": M}),
    ("s_cselect_b32", sop2("s_cselect_b32", 3, 4, 5), {"s4": 7, "s5": 9, SCC: 0}, {"s3": 9}),
    ("s_cmp_eq_u32", sopc("s_cmp_eq_u32", 4, 5), {"s4": 3, "s5": 3}, {SCC: 1}),
    ("s_cmp_lg_u32", sopc("s_cmp_lg_u32", 4, 5), {"s4": 3, "s5": 3}, {SCC: 0}),
    ("s_cmp_gt_u32", sopc("s_cmp_gt_u32", 4, 5), {"s4": M, "s5": 0}, {SCC: 1}),
    ("s_cmp_ge_u32", sopc("s_cmp_ge_u32", 4, 5), {"s4": 0, "s5": 0}, {SCC: 1}),
    ("s_cmp_lt_u32", sopc("s_cmp_lt_u32", 4, 5), {"s4": M, "s5": 0}, {SCC: 0}),
    ("s_cmp_le_u32", sopc("s_cmp_le_u32", 4, 5), {"s4": 1, "s5": 0}, {SCC: 0}),
    ("s_cmp_eq_i32", sopc("s_cmp_eq_i32", 4, 193), {"s4": M}, {SCC: 1}),
    ("s_cmp_lg_i32", sopc("s_cmp_lg_i32", 4, 5), {"s4": 1, "s5": 0}, {SCC: 1}),
    ("s_cmp_gt_i32", sopc("s_cmp_gt_i32", 4, 5), {"s4": M, "s5": 0}, {SCC: 0}),
    ("s_cmp_ge_i32", sopc("s_cmp_ge_i32", 4, 5), {"s4": 0, "s5": M}, {SCC: 1}),
    ("s_cmp_lt_i32", sopc("s_cmp_lt_i32", 4, 5), {"s4": M, "s5": 0}, {SCC: 1}),
    ("s_cmp_le_i32", sopc("s_cmp_le_i32", 4, 5), {"s4": 0, "s5": M}, {SCC: 0}),
    ("s_cmp_eq_u64", sopc("s_cmp_eq_u64", 4, 6), {"s4": 1, "s5": 2, "s6": 1, "s7": 3}, {SCC: 0}),
    ("s_cmp_lg_u64", sopc("s_cmp_lg_u64", 4, 6), {"s4": 1, "s5": 2, "s6": 1, "s7": 3}, {SCC: 1}),
    # a literal in a 64-bit integer operand is zero-extended (MIOpen 3.5.1's LayernormBwdWeightBias
    # compares a 64-bit loop counter with its OUTER_SIZE this way)
    ("s_cmp_eq_u64 literal", sopc("s_cmp_eq_u64", 4, 255, 0x12345678), {"s4": 0x12345678, "s5": 0}, {SCC: 1}),
    ("s_cmp_eq_u64 literal high half 0", sopc("s_cmp_eq_u64", 4, 255, 0x12345678),
     {"s4": 0x12345678, "s5": 1}, {SCC: 0}),
    ("s_cmp_lg_u64 literal", sopc("s_cmp_lg_u64", 4, 255, 0xFFFFFFFF), {"s4": M, "s5": M}, {SCC: 1}),
    ("s_bitcmp0_b32", sopc("s_bitcmp0_b32", 4, 5), {"s4": 0b100, "s5": 2}, {SCC: 0}),
    ("s_bitcmp1_b32", sopc("s_bitcmp1_b32", 4, 5), {"s4": 0b100, "s5": 2}, {SCC: 1}),
    ("s_movk_i32", sopk("s_movk_i32", 3, -2), {}, {"s3": 0xFFFFFFFE}),
    ("s_addk_i32", sopk("s_addk_i32", 3, -2), {"s3": 1}, {"s3": M, SCC: 0}),
    ("s_mulk_i32", sopk("s_mulk_i32", 3, -3), {"s3": 5}, {"s3": 0xFFFFFFF1}),
    # branches: each skips a write of s3 = 1 when taken
    ("s_branch", sopp("s_branch", 1) + sop1("s_mov_b32", 3, 129), {"s3": 0}, {"s3": 0}),
    ("s_cbranch_scc0 taken", sopp("s_cbranch_scc0", 1) + sop1("s_mov_b32", 3, 129), {SCC: 0}, {"s3": 0}),
    ("s_cbranch_scc1 not taken", sopp("s_cbranch_scc1", 1) + sop1("s_mov_b32", 3, 129), {SCC: 0}, {"s3": 1}),
    ("s_cbranch_vccz", sopp("s_cbranch_vccz", 1) + sop1("s_mov_b32", 3, 129), {"s106": 0}, {"s3": 0}),
    ("s_cbranch_vccnz", sopp("s_cbranch_vccnz", 1) + sop1("s_mov_b32", 3, 129), {"s106": 0}, {"s3": 1}),
    ("s_cbranch_execz", sopp("s_cbranch_execz", 1) + sop1("s_mov_b32", 3, 129), {"exec": 0}, {"s3": 0}),
    ("s_cbranch_execnz", sopp("s_cbranch_execnz", 1) + sop1("s_mov_b32", 3, 129), {"exec": 0}, {"s3": 1}),
    ("backward branch loop", sop1("s_mov_b32", 3, 128) + sop2("s_add_u32", 3, 3, 129)
     + sopc("s_cmp_lt_u32", 3, 133) + sopp("s_cbranch_scc1", -3), {}, {"s3": 5}),
    ("s_waitcnt_vscnt", sopk("s_waitcnt_vscnt", 124, 0), {"s3": 4}, {"s3": 4}),
    ("cache invalidations", mubuf("buffer_gl0_inv") + mubuf("buffer_gl1_inv"), {"s3": 4}, {"s3": 4}),
    ("no-ops", sopp("s_nop") + sopp("s_clause") + sopp("s_delay_alu") + sopp("s_waitcnt")
     + sopp("s_waitcnt_depctr") + sopp("s_set_inst_prefetch_distance"), {"s3": 4}, {"s3": 4}),
]


@pytest.mark.parametrize("code,inputs,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_scalar_op(code: bytes, inputs: dict[str, int], expected: dict[str, int]) -> None:
    w = run(code, _wave(**inputs))
    for k, want in expected.items():
        got = w.scc if k == SCC else w.exec if k == "exec" else w.s[int(k[1:])]
        assert got == want, f"{k}: {got:#x} != {want:#x}"


@pytest.mark.parametrize("name,n", [("s_load_b32", 1), ("s_load_b64", 2), ("s_load_b128", 4),
                                    ("s_load_b256", 8), ("s_load_b512", 16)])
def test_s_load(name: str, n: int) -> None:
    mem = Memory()
    buf = np.arange(100, 132, dtype=np.uint32)
    addr = mem.add(buf)
    w = _wave(s0=addr & M, s1=addr >> 32)
    w.mem = mem
    w = run(smem(name, 20, 0, offset=8), w)
    assert w.s[20:20 + n] == list(range(102, 102 + n))


def test_s_load_out_of_bounds_names_address() -> None:
    mem = Memory()
    buf = np.zeros(4, np.uint32)
    addr = mem.add(buf)
    w = _wave(s0=addr & M, s1=addr >> 32)
    w.mem = mem
    with pytest.raises(EmulationError, match=f"{addr + 12:#x}.*outside every buffer"):
        run(smem("s_load_b64", 20, 0, offset=12), w)


def test_endpgm_stops_and_code_end_is_an_error() -> None:
    w = run(sopp("s_endpgm") + vop1("v_mov_b32", 0, 129))
    assert w.done and int(w.v[0][0]) == 0
    with pytest.raises(EmulationError, match="s_code_end"):
        run(sopp("s_code_end"))
    assert v(0) == 256
