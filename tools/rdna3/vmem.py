"""Vector memory: LDS (``ds_*``) and global (``global_*``) loads and stores, EXEC-masked.

Inactive lanes compute no address and touch no memory. Global accesses go through the
bounds-checked :class:`~.memory.Memory`; LDS accesses outside the workgroup's allocation raise
:class:`~.memory.MemoryFault`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .decode import Inst, UnsupportedInstruction
from .memory import MemoryFault
from .wave import Wave

__all__ = ["compile_vmem"]

U32 = np.uint32


def _lds_access(w: Wave, addrs: np.ndarray, nbytes: int, name: str) -> np.ndarray:
    if addrs.size and int(addrs.max()) + nbytes > w.lds.size:
        raise MemoryFault(f"{name}: LDS access of {nbytes} bytes at {int(addrs.max()):#x} is outside "
                          f"the workgroup's {w.lds.size} bytes of LDS")
    return addrs.astype(np.int64)[:, None] + np.arange(nbytes, dtype=np.int64)


def _regs_to_bytes(w: Wave, first: int, ndw: int, m: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(w.v[first:first + ndw, m].T).view(np.uint8)


def _bytes_to_regs(w: Wave, first: int, data: np.ndarray, m: np.ndarray) -> None:
    words = np.ascontiguousarray(data).view(U32)
    for i in range(words.shape[1]):
        w.v[first + i][m] = words[:, i]


def compile_vmem(inst: Inst, pc: int) -> Callable[[Wave], int]:
    """A function running the memory ``inst`` on a wave and returning the next pc."""
    nxt = pc + inst.size
    return {"DS": _ds, "GLOBAL": _global, "MUBUF": _buffer}[inst.fmt](inst, nxt)


def _buffer(inst: Inst, nxt: int) -> Callable[[Wave], int]:
    """buffer_load_b32 / buffer_store_b32 on a raw buffer: the V# in SGPRs srsrc..srsrc+3 gives the
    48-bit base (word 0, word 1 bits 15:0) and NUM_RECORDS in bytes (word 2); the lane's byte
    offset is its VGPR (OFFEN) + the instruction offset. A dword whose bytes do not all lie below
    NUM_RECORDS is out of range: a load gives 0, a store is dropped (MIOpen's reduction kernels
    add 0x7fffffff to the offset of lanes that must not write). Structured buffers (IDXEN or a
    stride), swizzled ones (ADD_TID), range-check modes other than raw (OOB_SELECT 3), a non-zero
    SGPR offset and TFE are refused rather than guessed."""
    f, name = inst.f, inst.name
    load = name.startswith("buffer_load")
    if f["idxen"] or f["tfe"] or f["soffset"] != 128:  # 128: the inline constant 0
        raise UnsupportedInstruction(f"{name} with idxen/tfe/an SGPR offset is not implemented")
    rs, vaddr, vdata, off, offen = f["srsrc"], f["vaddr"], f["vdata"], f["offset"], f["offen"]

    def run(w: Wave) -> int:
        m = w.exec_mask()
        if not m.any():
            return nxt
        d0, d1, d2, d3 = (w.s[rs + i] for i in range(4))
        stride, add_tid, oob_select = (d1 >> 16) & 0x3FFF, (d3 >> 23) & 1, (d3 >> 28) & 3
        if stride or add_tid or oob_select != 3:
            raise UnsupportedInstruction(
                f"{name}: buffer resource with stride {stride}, ADD_TID {add_tid}, OOB_SELECT {oob_select} "
                "(only raw buffers, OOB_SELECT 3, are emulated)")
        base = d0 | (d1 & 0xFFFF) << 32
        offsets = (w.v[vaddr].astype(np.int64) if offen else np.zeros(32, np.int64)) + off
        ok = m & (offsets + 4 <= d2)
        addrs = (np.uint64(base) + offsets[ok].astype(np.uint64))
        try:
            if load:
                val = np.zeros(32, U32)
                if ok.any():
                    val[ok] = w.mem.gather(addrs, 4).view(U32)[:, 0]
                w.v[vdata][m] = val[m]
            elif ok.any():
                w.mem.scatter(addrs, _regs_to_bytes(w, vdata, 1, ok))
        except MemoryFault as e:
            raise MemoryFault(f"{name}: {e}") from None
        return nxt
    return run


def _permute(inst: Inst, nxt: int) -> Callable[[Wave], int]:
    """ds_bpermute_b32 (each lane reads DATA0 of lane (ADDR + OFFSET) / 4 mod 32; a disabled source
    lane gives 0) and ds_permute_b32 (each lane writes its DATA0 to that lane; the highest source
    lane wins). EXEC limits both the reads and the writes; no LDS memory is touched."""
    f, backward = inst.f, inst.name == "ds_bpermute_b32"
    offset, addr_reg, data, vdst = f["offset0"] | f["offset1"] << 8, f["addr"], f["data0"], f["vdst"]

    def run(w: Wave) -> int:
        m = w.exec_mask()
        lane = ((w.v[addr_reg].astype(np.int64) + offset) // 4) % 32
        tmp = np.zeros(32, U32)
        if backward:
            tmp = np.where(m[lane], w.v[data][lane], U32(0)).astype(U32)
        else:
            for i in np.flatnonzero(m):  # in lane order: a later source lane overwrites
                tmp[lane[i]] = w.v[data][i]
        w.v[vdst][m] = tmp[m]
        return nxt
    return run


def _ds(inst: Inst, nxt: int) -> Callable[[Wave], int]:
    f, name = inst.f, inst.name
    if name in ("ds_permute_b32", "ds_bpermute_b32"):
        return _permute(inst, nxt)
    parts = name.split("_")
    size = next(int(p[1:]) for p in parts[2:] if p[0] in "bui" and p[1:].isdigit()) // 8  # b32 -> 4 bytes
    d16_hi = name.endswith("_d16_hi")  # the high half of the VGPR (d16: the low half, the rest kept)
    d16 = d16_hi or name.endswith("_d16")
    two = "2addr" in name
    if two:
        stride = size * (64 if "stride64" in name else 1)
        offsets = [f["offset0"] * stride, f["offset1"] * stride]
    else:
        offsets = [f["offset0"] | f["offset1"] << 8]
    load = parts[1] == "load"
    addr_reg, vdst, data = f["addr"], f["vdst"], [f["data0"], f["data1"]]

    def run(w: Wave) -> int:
        m = w.exec_mask()
        if not m.any():
            return nxt
        base = w.v[addr_reg][m].astype(np.int64)
        for i, off in enumerate(offsets):
            idx = _lds_access(w, base + off, size, name)
            if size < 4:  # u8/u16 loads zero-extend (d16: into one half); stores write the low bytes
                if load:
                    val = np.ascontiguousarray(w.lds[idx]).view(np.uint8 if size == 1 else np.uint16)[:, 0].astype(U32)
                    old = w.v[vdst][m]
                    if d16_hi:
                        val = (old & U32(0xFFFF)) | (val << U32(16))
                    elif d16:
                        val = (old & U32(0xFFFF0000)) | val
                    w.v[vdst][m] = val
                else:
                    word = w.v[data[i]][m] >> U32(16) if d16_hi else w.v[data[i]][m]
                    w.lds[idx] = np.ascontiguousarray(word).view(np.uint8).reshape(-1, 4)[:, :size]
                continue
            ndw = size // 4
            if load:
                _bytes_to_regs(w, vdst + i * ndw, w.lds[idx], m)
            else:
                w.lds[idx] = _regs_to_bytes(w, data[i], ndw, m)
        return nxt
    return run


def _global(inst: Inst, nxt: int) -> Callable[[Wave], int]:
    f, name = inst.f, inst.name
    kind = name.split("_", 2)[2]  # u8 i8 u16 b32 ... d16_u8 d16_b16 d16_hi_b16
    size = int(kind.split("_")[-1][1:]) // 8
    load = name.startswith("global_load")
    saddr, vaddr, off, vdst, data = f["saddr"], f["addr"], f["offset"], f["vdst"], f["data"]
    use_saddr = saddr not in (124, 125, 127)

    offset = np.uint64(off % (1 << 64))  # uint64 arithmetic wraps: adds a negative offset

    def address(w: Wave, m: np.ndarray) -> np.ndarray:
        lo = w.v[vaddr][m].astype(np.uint64)
        if use_saddr:  # SGPR base + 32-bit unsigned VGPR offset
            return np.uint64(w.sread64(saddr, None)) + lo + offset
        return lo + (w.v[vaddr + 1][m].astype(np.uint64) << np.uint64(32)) + offset

    def run(w: Wave) -> int:
        m = w.exec_mask()
        if not m.any():
            return nxt
        addrs = address(w, m)
        try:
            if load:
                raw = w.mem.gather(addrs, size)
                if size >= 4:
                    _bytes_to_regs(w, vdst, raw, m)
                    return nxt
                val = raw.view(np.uint8 if size == 1 else np.uint16)[:, 0]
                if kind == "i8":
                    val32 = val.view(np.int8).astype(np.int32).view(U32)
                else:
                    val32 = val.astype(U32)
                old = w.v[vdst][m]
                if kind in ("d16_b16", "d16_u8"):  # the low half; the high half is kept
                    val32 = (old & U32(0xFFFF0000)) | val32
                elif kind == "d16_hi_b16":
                    val32 = (old & U32(0xFFFF)) | (val32 << U32(16))
                w.v[vdst][m] = val32
            else:
                if size >= 4:
                    w.mem.scatter(addrs, _regs_to_bytes(w, data, size // 4, m))
                else:
                    word = w.v[data][m]
                    if kind == "d16_hi_b16":
                        word = word >> U32(16)
                    b = np.ascontiguousarray(word.astype(np.uint16 if size == 2 else np.uint8))
                    w.mem.scatter(addrs, b.view(np.uint8).reshape(-1, size))
        except MemoryFault as e:
            raise MemoryFault(f"{name}: {e}") from None
        return nxt
    return run
