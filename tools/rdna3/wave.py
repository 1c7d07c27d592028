"""State of one wave32 and its operand encoding: SGPRs, VGPRs (numpy, 32 lanes), EXEC, VCC, SCC.

Operand codes are the ISA's 9-bit source field: 0-105 SGPRs, 106/107 VCC, 124 NULL, 125 M0,
126/127 EXEC, 128-208 integer inline constants, 240-248 float inline constants, 253 SCC,
255 the instruction's literal, 256-511 VGPRs.
"""

from __future__ import annotations

import numpy as np

from .decode import UnsupportedInstruction
from .memory import Memory

__all__ = ["EXEC_LO", "LANES", "M0", "NULL", "VCC_LO", "Wave"]

LANES = 32
VCC_LO, VCC_HI, NULL, M0, EXEC_LO, EXEC_HI, SCC_SRC, LIT = 106, 107, 124, 125, 126, 127, 253, 255
_LANE_BITS = np.uint64(1) << np.arange(LANES, dtype=np.uint64)

F32_CONST = {240: 0x3F000000, 241: 0xBF000000, 242: 0x3F800000, 243: 0xBF800000, 244: 0x40000000,
             245: 0xC0000000, 246: 0x40800000, 247: 0xC0800000, 248: 0x3E22F983}
F16_CONST = {240: 0x3800, 241: 0xB800, 242: 0x3C00, 243: 0xBC00, 244: 0x4000, 245: 0xC000,
             246: 0x4400, 247: 0xC400, 248: 0x3118}
F64_CONST = {240: 0x3FE0000000000000, 241: 0xBFE0000000000000, 242: 0x3FF0000000000000,
             243: 0xBFF0000000000000, 244: 0x4000000000000000, 245: 0xC000000000000000,
             246: 0x4010000000000000, 247: 0xC010000000000000, 248: 0x3FC45F306DC9C882}


def mask_of(bits: int) -> np.ndarray:
    """32-lane boolean array of a wave32 lane mask."""
    return (np.uint64(bits) & _LANE_BITS) != 0


def bits_of(mask: np.ndarray) -> int:
    """Lane mask (int) of a 32-lane boolean array."""
    return int(np.bitwise_or.reduce(np.where(mask, _LANE_BITS, np.uint64(0))))


class Wave:
    """One wave: registers, program counter and the memories it sees."""

    def __init__(self, memory: Memory, lds: np.ndarray) -> None:
        self.s = [0] * 128
        self.v = np.zeros((256, LANES), np.uint32)
        self.exec = 0
        self.scc = 0
        self.pc = 0
        self.mem = memory
        self.lds = lds
        self.done = False
        self.at_barrier = False
        #: The kernel's FLOAT_DENORM_MODE_32 is "flush" (float mode 0xc0): f32 denormals read
        #: and written by VALU ops become zero of the same sign.
        self.flush_f32 = False

    # ---- scalar operands -------------------------------------------------------------
    def sread(self, code: int, literal: int | None) -> int:
        """32-bit value of a scalar source operand."""
        if code < VCC_LO or code in (VCC_LO, VCC_HI, M0):
            return self.s[code]
        if code == EXEC_LO:
            return self.exec
        if code in (EXEC_HI, NULL):
            return 0
        if 128 <= code <= 192:
            return code - 128
        if 193 <= code <= 208:
            return (192 - code) & 0xFFFFFFFF
        if code in F32_CONST:
            return F32_CONST[code]
        if code == SCC_SRC:
            return self.scc
        if code == 251:
            return int(self.s[VCC_LO] == 0)
        if code == 252:
            return int(self.exec == 0)
        if code == LIT and literal is not None:
            return literal
        raise UnsupportedInstruction(f"scalar operand code {code} is not implemented")

    def sread64(self, code: int, literal: int | None, float_op: bool = False) -> int:
        """64-bit value of a scalar source operand (register pair or 64-bit constant)."""
        if code < VCC_LO or code == VCC_LO:
            return self.s[code] | self.s[code + 1] << 32
        if code == EXEC_LO:
            return self.exec
        if code == NULL:
            return 0
        if 128 <= code <= 192:
            return code - 128
        if 193 <= code <= 208:
            return (192 - code) & 0xFFFFFFFFFFFFFFFF
        if code in F64_CONST:
            if not float_op:
                raise UnsupportedInstruction(f"float inline constant {code} in a 64-bit integer operand")
            return F64_CONST[code]
        if code == LIT and literal is not None and float_op:
            return literal << 32  # a 32-bit literal is the high half of an f64
        if code == LIT and literal is not None:
            return literal  # a 64-bit unsigned/bitwise operand: the literal zero-extended
        raise UnsupportedInstruction(f"64-bit scalar operand code {code} is not implemented")

    def swrite(self, code: int, value: int) -> None:
        value &= 0xFFFFFFFF
        if code < VCC_LO or code in (VCC_LO, VCC_HI, M0):
            self.s[code] = value
        elif code == EXEC_LO:
            self.exec = value
        elif code in (NULL, EXEC_HI):
            pass
        else:
            raise UnsupportedInstruction(f"scalar destination code {code} is not implemented")

    def swrite64(self, code: int, value: int) -> None:
        self.swrite(code, value & 0xFFFFFFFF)
        if code != EXEC_LO:
            self.swrite(code + 1, value >> 32)

    # ---- vector operands -------------------------------------------------------------
    def exec_mask(self) -> np.ndarray:
        return mask_of(self.exec)

    def vread(self, code: int, literal: int | None) -> np.ndarray:
        """32-bit operand as a uint32 lane array (scalars broadcast)."""
        if code >= 256:
            return self.v[code - 256]
        return np.full(LANES, self.sread(code, literal), np.uint32)

    def vread64(self, code: int, literal: int | None, float_op: bool) -> np.ndarray:
        if code >= 256:
            r = code - 256
            return self.v[r].astype(np.uint64) | (self.v[r + 1].astype(np.uint64) << np.uint64(32))
        return np.full(LANES, self.sread64(code, literal, float_op), np.uint64)

    def vread16(self, code: int, literal: int | None, hi: bool, float_op: bool) -> np.ndarray:
        """16-bit operand (uint16 lanes): low or high half of a VGPR, or a 16-bit constant."""
        if code >= 256:
            word = self.v[code - 256]
        elif float_op and code in F16_CONST:
            return np.full(LANES, F16_CONST[code], np.uint16)
        else:
            word = np.full(LANES, self.sread(code, literal), np.uint32)
        return (word >> np.uint32(16) if hi else word).astype(np.uint16)

    def vwrite(self, reg: int, value: np.ndarray) -> None:
        m = self.exec_mask()
        self.v[reg][m] = value[m]

    def vwrite64(self, reg: int, value: np.ndarray) -> None:
        m = self.exec_mask()
        value = value.astype(np.uint64)
        self.v[reg][m] = (value & np.uint64(0xFFFFFFFF)).astype(np.uint32)[m]
        self.v[reg + 1][m] = (value >> np.uint64(32)).astype(np.uint32)[m]

    def vwrite16(self, reg: int, value: np.ndarray, hi: bool) -> None:
        m = self.exec_mask()
        old = self.v[reg]
        v = value.astype(np.uint32)
        new = (old & np.uint32(0xFFFF)) | (v << np.uint32(16)) if hi else \
            (old & np.uint32(0xFFFF0000)) | v
        old[m] = new[m]
