"""RDNA3 instruction decoding: raw bytes -> :class:`Inst` (format, opcode name, operand fields).

Only the encodings MIOpen's gfx1100 kernels use are recognised; anything else raises
:class:`UnsupportedInstruction` with the address and the raw words, so an unknown instruction
can never run as something else. Opcode numbers are those of AMD's RDNA3 ISA reference.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

__all__ = ["OPCODES", "Inst", "UnsupportedInstruction", "decode"]


class UnsupportedInstruction(NotImplementedError):
    """An instruction (encoding or opcode) this emulator does not implement."""


SOP1 = {0: "s_mov_b32", 1: "s_mov_b64", 8: "s_ctz_i32_b32", 10: "s_clz_i32_u32", 21: "s_abs_i32", 32: "s_and_saveexec_b32",
        48: "s_and_not1_saveexec_b32"}
SOP2 = {0: "s_add_u32", 1: "s_sub_u32", 2: "s_add_i32", 3: "s_sub_i32", 4: "s_addc_u32", 5: "s_subb_u32",
        8: "s_lshl_b32", 9: "s_lshl_b64", 10: "s_lshr_b32", 12: "s_ashr_i32", 14: "s_lshl1_add_u32", 15: "s_lshl2_add_u32",
        16: "s_lshl3_add_u32", 17: "s_lshl4_add_u32",
        18: "s_min_i32", 19: "s_min_u32", 20: "s_max_i32", 21: "s_max_u32", 22: "s_and_b32",
        24: "s_or_b32", 26: "s_xor_b32", 30: "s_nor_b32", 34: "s_and_not1_b32", 36: "s_or_not1_b32",
        25: "s_or_b64", 41: "s_bfe_i64", 44: "s_mul_i32", 45: "s_mul_hi_u32", 46: "s_mul_hi_i32", 48: "s_cselect_b32"}
SOPC = {0: "s_cmp_eq_i32", 1: "s_cmp_lg_i32", 2: "s_cmp_gt_i32", 3: "s_cmp_ge_i32", 4: "s_cmp_lt_i32",
        5: "s_cmp_le_i32", 6: "s_cmp_eq_u32", 7: "s_cmp_lg_u32", 8: "s_cmp_gt_u32", 9: "s_cmp_ge_u32",
        10: "s_cmp_lt_u32", 11: "s_cmp_le_u32", 12: "s_bitcmp0_b32", 13: "s_bitcmp1_b32",
        16: "s_cmp_eq_u64", 17: "s_cmp_lg_u64"}
SOPK = {0: "s_movk_i32", 15: "s_addk_i32", 16: "s_mulk_i32", 24: "s_waitcnt_vscnt"}
SOPP = {0: "s_nop", 4: "s_set_inst_prefetch_distance", 5: "s_clause", 7: "s_delay_alu",
        8: "s_waitcnt_depctr", 9: "s_waitcnt", 31: "s_code_end", 32: "s_branch", 33: "s_cbranch_scc0",
        34: "s_cbranch_scc1", 35: "s_cbranch_vccz", 36: "s_cbranch_vccnz", 37: "s_cbranch_execz",
        38: "s_cbranch_execnz", 48: "s_endpgm", 61: "s_barrier"}
SMEM = {0: "s_load_b32", 1: "s_load_b64", 2: "s_load_b128", 3: "s_load_b256", 4: "s_load_b512"}
VOP1 = {1: "v_mov_b32", 2: "v_readfirstlane_b32", 3: "v_cvt_i32_f64", 5: "v_cvt_f32_i32",
        6: "v_cvt_f32_u32", 7: "v_cvt_u32_f32", 8: "v_cvt_i32_f32", 10: "v_cvt_f16_f32",
        11: "v_cvt_f32_f16", 15: "v_cvt_f32_f64", 16: "v_cvt_f64_f32", 28: "v_mov_b16",
        33: "v_trunc_f32", 34: "v_ceil_f32", 35: "v_rndne_f32", 36: "v_floor_f32", 37: "v_exp_f32",
        39: "v_log_f32", 42: "v_rcp_f32", 43: "v_rcp_iflag_f32", 46: "v_rsq_f32", 49: "v_rsq_f64", 51: "v_sqrt_f32",
        60: "v_frexp_exp_i32_f64", 84: "v_rcp_f16", 63: "v_frexp_exp_i32_f32", 64: "v_frexp_mant_f32"}
VOP2 = {1: "v_cndmask_b32", 3: "v_add_f32", 4: "v_sub_f32", 5: "v_subrev_f32", 8: "v_mul_f32",
        9: "v_mul_i32_i24", 11: "v_mul_u32_u24", 15: "v_min_f32", 16: "v_max_f32", 17: "v_min_i32", 18: "v_max_i32",
        19: "v_min_u32", 20: "v_max_u32",
        24: "v_lshlrev_b32", 25: "v_lshrrev_b32", 26: "v_ashrrev_i32", 27: "v_and_b32", 28: "v_or_b32",
        29: "v_xor_b32", 32: "v_add_co_ci_u32", 33: "v_sub_co_ci_u32", 34: "v_subrev_co_ci_u32", 37: "v_add_nc_u32", 38: "v_sub_nc_u32", 39: "v_subrev_nc_u32",
        43: "v_fmac_f32", 44: "v_fmamk_f32", 45: "v_fmaak_f32", 50: "v_add_f16", 51: "v_sub_f16", 53: "v_mul_f16",
        57: "v_max_f16", 58: "v_min_f16", 54: "v_fmac_f16"}
#: The sixteen floating-point conditions in opcode order (the ISA's VOPC table for each type).
_F32_CONDITIONS = ("f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle",
                   "neq", "nlt", "t")
VOPC = {1: "v_cmp_lt_f16", 2: "v_cmp_eq_f16", 6: "v_cmp_ge_f16", 14: "v_cmp_nlt_f16", 17: "v_cmp_lt_f32", 18: "v_cmp_eq_f32",
        20: "v_cmp_gt_f32", 27: "v_cmp_ngt_f32", 45: "v_cmp_neq_f64", 65: "v_cmp_lt_i32",
        66: "v_cmp_eq_i32", 67: "v_cmp_le_i32", 68: "v_cmp_gt_i32", 70: "v_cmp_ge_i32", 73: "v_cmp_lt_u32",
        74: "v_cmp_eq_u32", 75: "v_cmp_le_u32", 76: "v_cmp_gt_u32", 77: "v_cmp_ne_u32",
        78: "v_cmp_ge_u32", 81: "v_cmp_lt_i64", 84: "v_cmp_gt_i64", 89: "v_cmp_lt_u64",
        90: "v_cmp_eq_u64", 91: "v_cmp_le_u64", 92: "v_cmp_gt_u64", 93: "v_cmp_ne_u64", 193: "v_cmpx_lt_i32", 196: "v_cmpx_gt_i32", 202: "v_cmpx_eq_u32",
        126: "v_cmp_class_f32", 127: "v_cmp_class_f64", 204: "v_cmpx_gt_u32",
        219: "v_cmpx_le_u64", 220: "v_cmpx_gt_u64", 221: "v_cmpx_ne_u64",
        # the sixteen f16 comparisons (VOPC 0-15) and their exec-writing forms (128-143)
        **{i: f"v_cmp_{c}_f16" for i, c in enumerate(_F32_CONDITIONS)},
        **{128 + i: f"v_cmpx_{c}_f16" for i, c in enumerate(_F32_CONDITIONS)},
        # the rest of the f32 comparisons (VOPC 16-31) and their exec-writing forms (144-159)
        **{16 + i: f"v_cmp_{c}_f32" for i, c in enumerate(_F32_CONDITIONS)},
        **{144 + i: f"v_cmpx_{c}_f32" for i, c in enumerate(_F32_CONDITIONS)}}
VOP3_ONLY = {522: "v_mad_i32_i24", 523: "v_mad_u32_u24", 528: "v_bfe_u32", 530: "v_bfi_b32", 531: "v_fma_f32",
             551: "v_div_fixup_f32", 567: "v_div_fmas_f32",
             532: "v_fma_f64", 544: "v_med3_i32", 582: "v_lshl_add_u32", 583: "v_add_lshl_u32",
             596: "v_div_fixup_f16", 597: "v_add3_u32", 598: "v_lshl_or_b32", 599: "v_and_or_b32", 600: "v_or3_b32",
             605: "v_cndmask_b16", 606: "v_maxmin_f32", 607: "v_minmax_f32", 771: "v_add_nc_u16", 772: "v_sub_nc_u16", 773: "v_mul_lo_u16", 785: "v_pack_b32_f16", 796: "v_ldexp_f32", 799: "v_mbcnt_lo_u32_b32", 800: "v_mbcnt_hi_u32_b32", 807: "v_add_f64", 808: "v_mul_f64", 812: "v_mul_lo_u32",
             813: "v_mul_hi_u32", 828: "v_lshlrev_b64", 830: "v_ashrrev_i64"}
VOP3SD = {288: "v_add_co_ci_u32", 289: "v_sub_co_ci_u32", 290: "v_subrev_co_ci_u32", 764: "v_div_scale_f32", 766: "v_mad_u64_u32", 767: "v_mad_i64_i32",
          768: "v_add_co_u32", 769: "v_sub_co_u32"}
VOP3P = {14: "v_pk_fma_f16", 15: "v_pk_add_f16", 16: "v_pk_mul_f16", 32: "v_fma_mix_f32", 33: "v_fma_mixlo_f16", 34: "v_fma_mixhi_f16"}
VOPD = {0: "v_fmac_f32", 1: "v_fmaak_f32", 2: "v_fmamk_f32", 3: "v_mul_f32", 4: "v_add_f32",
        5: "v_sub_f32", 6: "v_subrev_f32", 8: "v_mov_b32", 9: "v_cndmask_b32", 10: "v_max_f32",
        11: "v_min_f32", 16: "v_add_nc_u32", 17: "v_lshlrev_b32", 18: "v_and_b32"}
DS = {13: "ds_store_b32", 14: "ds_store_2addr_b32", 15: "ds_store_2addr_stride64_b32", 30: "ds_store_b8", 31: "ds_store_b16",
      54: "ds_load_b32", 55: "ds_load_2addr_b32", 56: "ds_load_2addr_stride64_b32", 58: "ds_load_u8", 60: "ds_load_u16",
      77: "ds_store_b64", 78: "ds_store_2addr_b64", 118: "ds_load_b64", 119: "ds_load_2addr_b64",
      160: "ds_store_b8_d16_hi", 161: "ds_store_b16_d16_hi", 166: "ds_load_u16_d16", 167: "ds_load_u16_d16_hi",
      178: "ds_permute_b32", 179: "ds_bpermute_b32", 222: "ds_store_b96", 223: "ds_store_b128", 254: "ds_load_b96", 255: "ds_load_b128"}
GLOBAL = {16: "global_load_u8", 17: "global_load_i8", 18: "global_load_u16", 20: "global_load_b32",
          21: "global_load_b64", 23: "global_load_b128", 24: "global_store_b8", 25: "global_store_b16",
          26: "global_store_b32", 27: "global_store_b64", 28: "global_store_b96", 29: "global_store_b128",
          30: "global_load_d16_u8",
          32: "global_load_d16_b16", 35: "global_load_d16_hi_b16", 37: "global_store_d16_hi_b16"}

# untyped dword loads/stores through a buffer resource (V#), and the cache invalidations
MUBUF = {20: "buffer_load_b32", 26: "buffer_store_b32", 43: "buffer_gl0_inv", 44: "buffer_gl1_inv"}

# VOP3 (64-bit) opcode space: compares 0..255, VOP2 at 256+, VOP1 at 384+, then VOP3-only ops.
VOP3 = {**VOPC, **{256 + k: v for k, v in VOP2.items()}, **{384 + k: v for k, v in VOP1.items()},
        **VOP3_ONLY}

OPCODES: dict[str, dict[int, str]] = {
    "SOP1": SOP1, "SOP2": SOP2, "SOPC": SOPC, "SOPK": SOPK, "SOPP": SOPP, "SMEM": SMEM,
    "VOP1": VOP1, "VOP2": VOP2, "VOPC": VOPC, "VOP3": VOP3, "VOP3SD": VOP3SD, "VOP3P": VOP3P,
    "VOPD": VOPD, "DS": DS, "GLOBAL": GLOBAL, "MUBUF": MUBUF}

LITERAL = 255


@dataclass
class Inst:
    """One decoded instruction: ``fmt``, ``name`` (``s_add_u32``...), byte ``size`` and fields."""

    fmt: str
    name: str
    size: int
    f: dict[str, int] = field(default_factory=dict)
    literal: int | None = None
    y: Inst | None = None  # the second half of a VOPD dual issue

    def __str__(self) -> str:
        if self.y is not None:
            return f"{self.name} :: {self.y.name}"
        return self.name


def _bits(word: int, hi: int, lo: int) -> int:
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


def _lookup(table: dict[int, str], fmt: str, op: int, addr: int, raw: bytes) -> str:
    try:
        return table[op]
    except KeyError:
        raise UnsupportedInstruction(
            f"{fmt} opcode {op} at {addr:#x} (bytes {raw[:8].hex()}) is not implemented") from None


def decode(raw: bytes, addr: int = 0) -> Inst:
    """Decode the instruction at the start of ``raw`` (at least 12 bytes; pad with zeros)."""
    w0, w1, w2 = struct.unpack_from("<III", raw.ljust(12, b"\0"))
    top9 = w0 >> 23
    if w0 >> 30 == 0b10:  # scalar ALU
        if top9 == 0b101111101:
            inst = Inst("SOP1", _lookup(SOP1, "SOP1", _bits(w0, 15, 8), addr, raw), 4,
                        {"ssrc0": w0 & 0xFF, "sdst": _bits(w0, 22, 16)})
            srcs = [inst.f["ssrc0"]]
        elif top9 == 0b101111110:
            inst = Inst("SOPC", _lookup(SOPC, "SOPC", _bits(w0, 22, 16), addr, raw), 4,
                        {"ssrc0": w0 & 0xFF, "ssrc1": _bits(w0, 15, 8)})
            srcs = [inst.f["ssrc0"], inst.f["ssrc1"]]
        elif top9 == 0b101111111:
            simm = w0 & 0xFFFF
            return Inst("SOPP", _lookup(SOPP, "SOPP", _bits(w0, 22, 16), addr, raw), 4,
                        {"simm16": simm - 0x10000 if simm & 0x8000 else simm})
        elif w0 >> 28 == 0b1011:
            simm = w0 & 0xFFFF
            return Inst("SOPK", _lookup(SOPK, "SOPK", _bits(w0, 27, 23), addr, raw), 4,
                        {"simm16": simm - 0x10000 if simm & 0x8000 else simm, "sdst": _bits(w0, 22, 16)})
        else:
            inst = Inst("SOP2", _lookup(SOP2, "SOP2", _bits(w0, 29, 23), addr, raw), 4,
                        {"ssrc0": w0 & 0xFF, "ssrc1": _bits(w0, 15, 8), "sdst": _bits(w0, 22, 16)})
            srcs = [inst.f["ssrc0"], inst.f["ssrc1"]]
        if LITERAL in srcs:
            inst.literal, inst.size = w1, 8
        return inst
    if w0 >> 25 == 0b0111111:
        inst = Inst("VOP1", _lookup(VOP1, "VOP1", _bits(w0, 16, 9), addr, raw), 4,
                    {"src0": w0 & 0x1FF, "vdst": _bits(w0, 24, 17)})
    elif w0 >> 25 == 0b0111110:
        inst = Inst("VOPC", _lookup(VOPC, "VOPC", _bits(w0, 24, 17), addr, raw), 4,
                    {"src0": w0 & 0x1FF, "vsrc1": _bits(w0, 16, 9)})
    elif w0 >> 31 == 0:  # VOP2 (opcodes 0x3e/0x3f are the VOPC/VOP1 prefixes above)
        f = {"src0": w0 & 0x1FF, "vsrc1": _bits(w0, 16, 9), "vdst": _bits(w0, 24, 17)}
        inst = Inst("VOP2", _lookup(VOP2, "VOP2", _bits(w0, 30, 25), addr, raw), 4, f)
    else:
        return _decode_wide(w0, w1, w2, raw, addr)
    if inst.f["src0"] == LITERAL or inst.name in ("v_fmamk_f32", "v_fmaak_f32"):  # these always carry K
        inst.literal, inst.size = w1, 8
    return inst


def _decode_wide(w0: int, w1: int, w2: int, raw: bytes, addr: int) -> Inst:
    enc = w0 >> 26
    if enc == 0b110101:  # VOP3 / VOP3SD
        op = _bits(w0, 25, 16)
        srcs = {"src0": w1 & 0x1FF, "src1": _bits(w1, 17, 9), "src2": _bits(w1, 26, 18)}
        if op in VOP3SD:
            inst = Inst("VOP3SD", VOP3SD[op], 8, {"vdst": w0 & 0xFF, "sdst": _bits(w0, 14, 8),
                                                  "clamp": _bits(w0, 15, 15), **srcs,
                                                  "omod": _bits(w1, 28, 27), "neg": _bits(w1, 31, 29)})
        else:
            inst = Inst("VOP3", _lookup(VOP3, "VOP3", op, addr, raw), 8,
                        {"vdst": w0 & 0xFF, "abs": _bits(w0, 10, 8), "opsel": _bits(w0, 14, 11),
                         "clamp": _bits(w0, 15, 15), **srcs, "omod": _bits(w1, 28, 27),
                         "neg": _bits(w1, 31, 29)})
        if LITERAL in srcs.values():
            inst.literal, inst.size = w2, 12
        return inst
    if w0 >> 24 == 0b11001100:
        srcs = {"src0": w1 & 0x1FF, "src1": _bits(w1, 17, 9), "src2": _bits(w1, 26, 18)}
        inst = Inst("VOP3P", _lookup(VOP3P, "VOP3P", _bits(w0, 22, 16), addr, raw), 8,
                    {"vdst": w0 & 0xFF, "neg_hi": _bits(w0, 10, 8),
                     "opsel": _bits(w0, 13, 11), "opsel_hi": _bits(w1, 28, 27) | _bits(w0, 14, 14) << 2,
                     "clamp": _bits(w0, 15, 15), **srcs, "neg": _bits(w1, 31, 29)})
        if LITERAL in srcs.values():
            inst.literal, inst.size = w2, 12
        return inst
    if enc == 0b110010:  # VOPD
        vdstx = _bits(w1, 31, 24)
        x = Inst("VOPD", _lookup(VOPD, "VOPD-X", _bits(w0, 25, 22), addr, raw), 0,
                 {"src0": w0 & 0x1FF, "vsrc1": _bits(w0, 16, 9), "vdst": vdstx})
        y = Inst("VOPD", _lookup(VOPD, "VOPD-Y", _bits(w0, 21, 17), addr, raw), 0,
                 {"src0": w1 & 0x1FF, "vsrc1": _bits(w1, 16, 9),
                  "vdst": (_bits(w1, 23, 17) << 1) | ((vdstx & 1) ^ 1)})
        x.y, x.size = y, 8
        if LITERAL in (x.f["src0"], y.f["src0"]) or {x.name, y.name} & {"v_fmaak_f32", "v_fmamk_f32"}:
            x.literal = y.literal = w2
            x.size = 12
        return x
    if enc == 0b110110:
        return Inst("DS", _lookup(DS, "DS", _bits(w0, 25, 18), addr, raw), 8,
                    {"offset0": w0 & 0xFF, "offset1": _bits(w0, 15, 8), "gds": _bits(w0, 17, 17),
                     "addr": w1 & 0xFF, "data0": _bits(w1, 15, 8), "data1": _bits(w1, 23, 16),
                     "vdst": _bits(w1, 31, 24)})
    if enc == 0b110111:
        seg = _bits(w0, 17, 16)
        if seg != 2:
            raise UnsupportedInstruction(
                f"FLAT/SCRATCH segment {seg} at {addr:#x} (bytes {raw[:8].hex()}) is not implemented")
        off = w0 & 0x1FFF
        return Inst("GLOBAL", _lookup(GLOBAL, "GLOBAL", _bits(w0, 24, 18), addr, raw), 8,
                    {"offset": off - 0x2000 if off & 0x1000 else off, "addr": w1 & 0xFF,
                     "data": _bits(w1, 15, 8), "saddr": _bits(w1, 22, 16), "vdst": _bits(w1, 31, 24)})
    if enc == 0b111000:
        return Inst("MUBUF", _lookup(MUBUF, "MUBUF", _bits(w0, 25, 18), addr, raw), 8,
                    {"offset": w0 & 0xFFF, "vaddr": w1 & 0xFF, "vdata": _bits(w1, 15, 8),
                     "srsrc": _bits(w1, 20, 16) * 4, "tfe": _bits(w1, 21, 21), "offen": _bits(w1, 22, 22),
                     "idxen": _bits(w1, 23, 23), "soffset": w1 >> 24})
    if enc == 0b111101:
        off = w1 & 0x1FFFFF
        return Inst("SMEM", _lookup(SMEM, "SMEM", _bits(w0, 25, 18), addr, raw), 8,
                    {"sbase": (w0 & 0x3F) * 2, "sdata": _bits(w0, 12, 6),
                     "offset": off - 0x200000 if off & 0x100000 else off, "soffset": w1 >> 25})
    raise UnsupportedInstruction(
        f"instruction encoding {w0:#010x} at {addr:#x} (bytes {raw[:8].hex()}) is not implemented")
