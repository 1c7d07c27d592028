"""A tiny RDNA3 encoder for the opcode tests: instruction bytes from op names and fields.

Written from the ISA's encoding tables; opcode numbers come from the emulator's decode tables
(the tests check decoding separately, by round trip and by the fields of known encodings).
"""

from __future__ import annotations

import struct

import numpy as np
from rdna3 import OPCODES, Memory, RawCode, Wave, run_wave

LIT = 255


def _op(fmt: str, name: str) -> int:
    return {v: k for k, v in OPCODES[fmt].items()}[name]


def _w(*words: int) -> bytes:
    return struct.pack(f"<{len(words)}I", *[w & 0xFFFFFFFF for w in words])


def _lit(lit: int | None) -> bytes:
    return b"" if lit is None else _w(lit)


def sop2(name: str, sdst: int, s0: int, s1: int, lit: int | None = None) -> bytes:
    return _w(0b10 << 30 | _op("SOP2", name) << 23 | sdst << 16 | s1 << 8 | s0) + _lit(lit)


def sop1(name: str, sdst: int, s0: int, lit: int | None = None) -> bytes:
    return _w(0b101111101 << 23 | sdst << 16 | _op("SOP1", name) << 8 | s0) + _lit(lit)


def sopc(name: str, s0: int, s1: int, lit: int | None = None) -> bytes:
    return _w(0b101111110 << 23 | _op("SOPC", name) << 16 | s1 << 8 | s0) + _lit(lit)


def sopk(name: str, sdst: int, simm: int) -> bytes:
    return _w(0b1011 << 28 | _op("SOPK", name) << 23 | sdst << 16 | simm & 0xFFFF)


def sopp(name: str, simm: int = 0) -> bytes:
    return _w(0b101111111 << 23 | _op("SOPP", name) << 16 | simm & 0xFFFF)


def smem(name: str, sdata: int, sbase: int, offset: int = 0, soffset: int = 124) -> bytes:
    return _w(0b111101 << 26 | _op("SMEM", name) << 18 | sdata << 6 | sbase // 2,
              soffset << 25 | offset & 0x1FFFFF)


def vop1(name: str, vdst: int, src0: int, lit: int | None = None) -> bytes:
    return _w(0b0111111 << 25 | vdst << 17 | _op("VOP1", name) << 9 | src0) + _lit(lit)


def _vg(n: int) -> int:
    """A VGPR-only field: accepts v(n) or the bare register number."""
    return n - 256 if n >= 256 else n


def vop2(name: str, vdst: int, src0: int, vsrc1: int, lit: int | None = None) -> bytes:
    vsrc1 = _vg(vsrc1)
    return _w(_op("VOP2", name) << 25 | vdst << 17 | vsrc1 << 9 | src0) + _lit(lit)


def vopc(name: str, src0: int, vsrc1: int, lit: int | None = None) -> bytes:
    vsrc1 = _vg(vsrc1)
    return _w(0b0111110 << 25 | _op("VOPC", name) << 17 | vsrc1 << 9 | src0) + _lit(lit)


def vop3(name: str, vdst: int, src0: int, src1: int = 128, src2: int = 128, *, abs_: int = 0,
         neg: int = 0, opsel: int = 0, clamp: int = 0, omod: int = 0, lit: int | None = None) -> bytes:
    return _w(0b110101 << 26 | _op("VOP3", name) << 16 | clamp << 15 | opsel << 11 | abs_ << 8 | vdst,
              neg << 29 | omod << 27 | src2 << 18 | src1 << 9 | src0) + _lit(lit)


def vop3sd(name: str, vdst: int, sdst: int, src0: int, src1: int, src2: int = 128) -> bytes:
    return _w(0b110101 << 26 | _op("VOP3SD", name) << 16 | sdst << 8 | vdst,
              src2 << 18 | src1 << 9 | src0)


def vop3p(name: str, vdst: int, src0: int, src1: int, src2: int = 128, *, opsel: int = 0,
          opsel_hi: int = 0b111, neg: int = 0, neg_hi: int = 0) -> bytes:
    return _w(0b11001100 << 24 | _op("VOP3P", name) << 16 | (opsel_hi >> 2 & 1) << 14 | opsel << 11
              | neg_hi << 8 | vdst, neg << 29 | (opsel_hi & 3) << 27 | src2 << 18 | src1 << 9 | src0)


def vopd(x: str, y: str, vdstx: int, vdsty: int, src0x: int, vsrc1x: int, src0y: int, vsrc1y: int,
         lit: int | None = None) -> bytes:
    vsrc1x, vsrc1y = _vg(vsrc1x), _vg(vsrc1y)
    return _w(0b110010 << 26 | _op("VOPD", x) << 22 | _op("VOPD", y) << 17 | vsrc1x << 9 | src0x,
              vdstx << 24 | (vdsty >> 1) << 17 | vsrc1y << 9 | src0y) + _lit(lit)


def ds(name: str, vdst: int = 0, addr: int = 0, data0: int = 0, data1: int = 0, off0: int = 0,
       off1: int = 0) -> bytes:
    return _w(0b110110 << 26 | _op("DS", name) << 18 | off1 << 8 | off0,
              vdst << 24 | data1 << 16 | data0 << 8 | addr)


def glob(name: str, vdst: int = 0, addr: int = 0, data: int = 0, saddr: int = 124, offset: int = 0) -> bytes:
    return _w(0b110111 << 26 | _op("GLOBAL", name) << 18 | 2 << 16 | offset & 0x1FFF,
              vdst << 24 | saddr << 16 | data << 8 | addr)


def v(n: int) -> int:
    """Operand code of VGPR n."""
    return 256 + n


def run(code: bytes, wave: Wave | None = None, exec_mask: int = 0xFFFFFFFF, lds_bytes: int = 256,
        memory: Memory | None = None) -> Wave:
    """Run ``code`` + ``s_endpgm`` on a wave (a fresh one unless given) and return it."""
    if wave is None:
        wave = Wave(memory or Memory(), np.zeros(lds_bytes, np.uint8))
        wave.exec = exec_mask
    wave.pc, wave.done, wave.at_barrier = 0, False, False
    run_wave(RawCode(code + sopp("s_endpgm")), wave)
    return wave


def f32(x: float) -> int:
    return int(np.array(x, np.float32).view(np.uint32))


def f16(x: float) -> int:
    return int(np.array(x, np.float16).view(np.uint16))


def f64(x: float) -> int:
    return int(np.array(x, np.float64).view(np.uint64))


def mubuf(name: str, vdata: int = 0, vaddr: int = 0, srsrc: int = 0, offset: int = 0, offen: int = 0,
          idxen: int = 0, soffset: int = 128) -> bytes:
    return _w(0b111000 << 26 | _op("MUBUF", name) << 18 | offset & 0xFFF,
              soffset << 24 | idxen << 23 | offen << 22 | (srsrc // 4) << 16 | vdata << 8 | vaddr)
