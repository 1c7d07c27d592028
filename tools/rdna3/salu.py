"""Scalar semantics: SOP1, SOP2, SOPC, SOPK, SOPP (branches, barrier, end) and SMEM loads.

SGPRs are Python ints (32-bit); SCC is 0/1. Waits, clauses, delays, prefetch hints and nops do
nothing in an in-order emulator.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .decode import Inst, UnsupportedInstruction
from .wave import VCC_LO, Wave

__all__ = ["compile_scalar"]

M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF
NO_OPS = {"s_nop", "s_set_inst_prefetch_distance", "s_clause", "s_delay_alu", "s_waitcnt_depctr",
          "s_waitcnt", "buffer_gl0_inv", "buffer_gl1_inv"}


def _i32(x: int) -> int:
    return x - (1 << 32) if x & 0x80000000 else x


def _sop2(name: str, a: int, b: int, scc: int) -> tuple[int, int | None]:
    """(result, new SCC or None to keep it) of a 32-bit SOP2 op."""
    if name == "s_add_u32":
        r = a + b
        return r & M32, int(r > M32)
    if name == "s_addc_u32":
        r = a + b + scc
        return r & M32, int(r > M32)
    if name == "s_subb_u32":
        return (a - b - scc) & M32, int(b + scc > a)
    if name == "s_sub_u32":
        return (a - b) & M32, int(b > a)
    if name in ("s_add_i32", "s_sub_i32"):
        r = _i32(a) + _i32(b) if name == "s_add_i32" else _i32(a) - _i32(b)
        return r & M32, int(not -(1 << 31) <= r < (1 << 31))
    logic = {"s_and_b32": a & b, "s_or_b32": a | b, "s_xor_b32": a ^ b, "s_nor_b32": ~(a | b) & M32,
             "s_and_not1_b32": a & ~b & M32, "s_or_not1_b32": (a | ~b) & M32,
             "s_lshl_b32": (a << (b & 31)) & M32, "s_lshr_b32": a >> (b & 31),
             "s_ashr_i32": (_i32(a) >> (b & 31)) & M32}
    if name in logic:
        r = logic[name]
        return r, int(r != 0)
    if name in ("s_lshl1_add_u32", "s_lshl2_add_u32", "s_lshl3_add_u32", "s_lshl4_add_u32"):
        r = (a << int(name[6])) + b  # SCC: the unsigned carry out of the 32-bit result
        return r & M32, int(r > M32)
    if name in ("s_min_i32", "s_max_i32"):
        pick = min if name == "s_min_i32" else max
        r = pick(_i32(a), _i32(b))
        return r & M32, int(r == _i32(a))
    if name in ("s_min_u32", "s_max_u32"):
        r = min(a, b) if name == "s_min_u32" else max(a, b)
        return r, int(r == a)
    if name == "s_mul_i32":
        return (_i32(a) * _i32(b)) & M32, None
    if name == "s_mul_hi_u32":
        return (a * b) >> 32, None
    if name == "s_mul_hi_i32":
        return ((_i32(a) * _i32(b)) >> 32) & M32, None
    if name == "s_cselect_b32":
        return (a if scc else b), None
    raise UnsupportedInstruction(f"{name} is not implemented")


_SOPC = {"eq": lambda a, b: a == b, "lg": lambda a, b: a != b, "gt": lambda a, b: a > b,
         "ge": lambda a, b: a >= b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b}


def compile_scalar(inst: Inst, pc: int) -> Callable[[Wave], int]:
    """A function running the scalar ``inst`` on a wave and returning the next pc."""
    name, f, lit, nxt = inst.name, inst.f, inst.literal, pc + inst.size
    fmt = inst.fmt
    if fmt == "SOPP":
        return _sopp(name, f["simm16"], nxt)
    if fmt == "MUBUF":  # cache invalidations: nothing to do with one coherent memory
        if name not in NO_OPS:
            raise UnsupportedInstruction(f"{name} is a memory access, not a scalar no-op")
        return lambda w: nxt
    if fmt == "SMEM":
        return _smem(inst, nxt)
    if fmt == "SOPK":
        sdst, imm = f["sdst"], f["simm16"]

        if name == "s_waitcnt_vscnt":  # in-order emulator: stores are already done
            return lambda w: nxt

        def sopk(w: Wave) -> int:
            d = _i32(w.sread(sdst, None))
            if name == "s_movk_i32":
                w.swrite(sdst, imm & M32)
            elif name == "s_addk_i32":
                r = d + imm
                w.swrite(sdst, r & M32)
                w.scc = int(not -(1 << 31) <= r < (1 << 31))
            else:  # s_mulk_i32
                w.swrite(sdst, (d * imm) & M32)
            return nxt
        return sopk
    if fmt == "SOPC":
        a_code, b_code = f["ssrc0"], f["ssrc1"]
        parts = name.split("_")  # s_cmp_<cond>_<type> / s_bitcmp<0|1>_b32
        if name.startswith("s_bitcmp"):
            want = int(name[8])

            def bitcmp(w: Wave) -> int:
                w.scc = int((w.sread(a_code, lit) >> (w.sread(b_code, lit) & 31) & 1) == want)
                return nxt
            return bitcmp
        cond, typ = _SOPC[parts[2]], parts[3]

        def sopc(w: Wave) -> int:
            if typ == "u64":
                a, b = w.sread64(a_code, lit), w.sread64(b_code, lit)
            else:
                a, b = w.sread(a_code, lit), w.sread(b_code, lit)
                if typ == "i32":
                    a, b = _i32(a), _i32(b)
            w.scc = int(cond(a, b))
            return nxt
        return sopc
    if fmt == "SOP1":
        return _sop1(name, f["ssrc0"], f["sdst"], lit, nxt)
    a_code, b_code, sdst = f["ssrc0"], f["ssrc1"], f["sdst"]
    if name == "s_lshl_b64":
        def lshl64(w: Wave) -> int:
            r = (w.sread64(a_code, lit) << (w.sread(b_code, lit) & 63)) & M64
            w.swrite64(sdst, r)
            w.scc = int(r != 0)
            return nxt
        return lshl64
    if name == "s_or_b64":
        def or64(w: Wave) -> int:
            r = w.sread64(a_code, lit) | w.sread64(b_code, lit)
            w.swrite64(sdst, r)
            w.scc = int(r != 0)
            return nxt
        return or64
    if name == "s_bfe_i64":
        def bfe_i64(w: Wave) -> int:
            ctl = w.sread(b_code, lit)
            offset, width = ctl & 63, (ctl >> 16) & 0x7F
            r = (w.sread64(a_code, lit) >> offset) & ((1 << width) - 1) if width else 0
            if width and r >> (min(width, 64) - 1) & 1:  # sign-extend from the field's top bit
                r -= 1 << min(width, 64)
            w.swrite64(sdst, r & M64)
            w.scc = int(r & M64 != 0)
            return nxt
        return bfe_i64
    _sop2(name, 1, 1, 0)  # unknown names fail here, at decode time

    def sop2(w: Wave) -> int:
        r, scc = _sop2(name, w.sread(a_code, lit), w.sread(b_code, lit), w.scc)
        w.swrite(sdst, r)
        if scc is not None:
            w.scc = scc
        return nxt
    return sop2


def _sop1(name: str, src: int, sdst: int, lit: int | None, nxt: int) -> Callable[[Wave], int]:
    def sop1(w: Wave) -> int:
        if name == "s_mov_b32":
            w.swrite(sdst, w.sread(src, lit))
        elif name == "s_mov_b64":
            w.swrite64(sdst, w.sread64(src, lit))
        elif name in ("s_ctz_i32_b32", "s_clz_i32_u32"):  # -1 when no bit is set; SCC kept
            s0 = w.sread(src, lit)
            if s0 == 0:
                w.swrite(sdst, M32)
            else:
                w.swrite(sdst, (s0 & -s0).bit_length() - 1 if name == "s_ctz_i32_b32" else 32 - s0.bit_length())
        elif name == "s_abs_i32":
            r = abs(_i32(w.sread(src, lit))) & M32
            w.swrite(sdst, r)
            w.scc = int(r != 0)
        elif name in ("s_and_saveexec_b32", "s_and_not1_saveexec_b32"):
            saved, s0 = w.exec, w.sread(src, lit)
            w.exec = s0 & saved if name == "s_and_saveexec_b32" else s0 & ~saved & M32
            w.swrite(sdst, saved)
            w.scc = int(w.exec != 0)
        else:
            raise UnsupportedInstruction(f"{name} is not implemented")
        return nxt
    return sop1


def _sopp(name: str, simm: int, nxt: int) -> Callable[[Wave], int]:
    target = nxt + simm * 4
    if name in NO_OPS:
        return lambda w: nxt
    if name == "s_code_end":
        def code_end(w: Wave) -> int:
            raise UnsupportedInstruction(f"execution ran into s_code_end at {nxt - 4:#x}")
        return code_end
    if name == "s_endpgm":
        def endpgm(w: Wave) -> int:
            w.done = True
            return nxt
        return endpgm
    if name == "s_barrier":
        def barrier(w: Wave) -> int:
            w.at_barrier = True
            return nxt
        return barrier
    conds: dict[str, Callable[[Wave], bool]] = {
        "s_branch": lambda w: True, "s_cbranch_scc0": lambda w: w.scc == 0,
        "s_cbranch_scc1": lambda w: w.scc == 1, "s_cbranch_vccz": lambda w: w.s[VCC_LO] == 0,
        "s_cbranch_vccnz": lambda w: w.s[VCC_LO] != 0, "s_cbranch_execz": lambda w: w.exec == 0,
        "s_cbranch_execnz": lambda w: w.exec != 0}
    cond = conds[name]
    return lambda w: target if cond(w) else nxt


def _smem(inst: Inst, nxt: int) -> Callable[[Wave], int]:
    f = inst.f
    n = {"s_load_b32": 1, "s_load_b64": 2, "s_load_b128": 4, "s_load_b256": 8, "s_load_b512": 16}[inst.name]
    sbase, sdata, off, soff = f["sbase"], f["sdata"], f["offset"], f["soffset"]

    def load(w: Wave) -> int:
        addr = w.sread64(sbase, None) + off + (w.sread(soff, None) if soff != 124 else 0)
        words = w.mem.read(addr & ~3, 4 * n).view(np.uint32)
        for i in range(n):
            w.swrite(sdata + i, int(words[i]))
        return nxt
    return load
