"""LDS and global memory opcodes: data movement, offsets, EXEC masking, bounds checks."""

from __future__ import annotations

import numpy as np
import pytest
from asm import ds, glob, mubuf, run, vop1
from rdna3 import EmulationError, Memory, Wave

M = 0xFFFFFFFF


def _wave(mem: Memory | None = None, lds: int = 1024, exec_mask: int = M) -> Wave:
    w = Wave(mem or Memory(), np.zeros(lds, np.uint8))
    w.exec = exec_mask
    return w


def _lane_addr(w: Wave, reg: int, base: int, stride: int) -> None:
    addrs = base + stride * np.arange(32, dtype=np.uint64)
    w.v[reg] = (addrs & np.uint64(M)).astype(np.uint32)
    w.v[reg + 1] = (addrs >> np.uint64(32)).astype(np.uint32)


@pytest.mark.parametrize("store,load,ndw", [("ds_store_b32", "ds_load_b32", 1), ("ds_store_b64", "ds_load_b64", 2),
                                            ("ds_store_b96", "ds_load_b96", 3),
                                            ("ds_store_b128", "ds_load_b128", 4)])
def test_ds_store_load_round_trip(store: str, load: str, ndw: int) -> None:
    w = _wave()
    w.v[1] = np.arange(32, dtype=np.uint32) * 16
    for i in range(ndw):
        w.v[10 + i] = np.arange(32, dtype=np.uint32) * 100 + i
    w = run(ds(store, addr=1, data0=10, off0=8) + ds(load, vdst=20, addr=1, off0=8), w)
    for i in range(ndw):
        assert w.v[20 + i].tolist() == (np.arange(32) * 100 + i).tolist()
    assert w.lds[8:12].view(np.uint32)[0] == 0  # lane 0, dword 0 = 0*100 + 0
    assert w.lds[24:28].view(np.uint32)[0] == 100  # lane 1 at 16 + 8


def test_ds_2addr_offsets_scale_by_size() -> None:
    w = _wave()
    w.v[1] = np.zeros(32, np.uint32)
    w.v[2], w.v[3] = np.uint32(7), np.uint32(9)
    w = run(ds("ds_store_2addr_b32", addr=1, data0=2, data1=3, off0=1, off1=3), w, )
    assert w.lds[4:8].view(np.uint32)[0] == 7 and w.lds[12:16].view(np.uint32)[0] == 9
    w = run(ds("ds_store_2addr_stride64_b32", addr=1, data0=3, data1=2, off0=0, off1=1), w)
    assert w.lds[0:4].view(np.uint32)[0] == 9 and w.lds[256:260].view(np.uint32)[0] == 7
    w = run(ds("ds_load_2addr_b32", vdst=10, addr=1, off0=1, off1=3)
            + ds("ds_load_2addr_stride64_b32", vdst=12, addr=1, off0=0, off1=1), w)
    assert (int(w.v[10][0]), int(w.v[11][0]), int(w.v[12][0]), int(w.v[13][0])) == (7, 9, 9, 7)
    w.v[4], w.v[5], w.v[6], w.v[7] = np.uint32(1), np.uint32(2), np.uint32(3), np.uint32(4)
    w = run(ds("ds_store_2addr_b64", addr=1, data0=4, data1=6, off0=2, off1=5)
            + ds("ds_load_2addr_b64", vdst=20, addr=1, off0=2, off1=5), w)
    assert [int(w.v[20 + i][0]) for i in range(4)] == [1, 2, 3, 4]
    assert w.lds[40:44].view(np.uint32)[0] == 3  # second address = 5 * 8 bytes


def test_ds_bytes() -> None:
    """ds_store_b8 writes the low byte only; ds_load_u8 zero-extends (ISA: D.u32 = {24'0, MEM.u8})."""
    w = _wave(lds=64)
    w.lds[:] = 0x11
    w.v[1] = np.arange(32, dtype=np.uint32)  # one byte per lane
    w.v[2] = np.uint32(0xABCDEF80) + np.arange(32, dtype=np.uint32)
    w.v[3] = np.full(32, 0xFFFFFFFF, np.uint32)
    w = run(ds("ds_store_b8", addr=1, data0=2, off0=3) + ds("ds_load_u8", vdst=3, addr=1, off0=3), w)
    assert w.lds[:3].tolist() == [0x11] * 3 and w.lds[35:].tolist() == [0x11] * 29
    assert w.lds[3:35].tolist() == [(0x80 + i) & 0xFF for i in range(32)]
    assert w.v[3].tolist() == [(0x80 + i) & 0xFF for i in range(32)]


def test_ds_halves() -> None:
    """ds_store_b16 writes the low 16 bits; ds_load_u16 zero-extends."""
    w = _wave(lds=80)
    w.lds[:] = 0x11
    w.v[1] = np.arange(32, dtype=np.uint32) * 2
    w.v[2] = np.uint32(0xABCD8000) + np.arange(32, dtype=np.uint32)
    w.v[3] = np.full(32, 0xFFFFFFFF, np.uint32)
    w = run(ds("ds_store_b16", addr=1, data0=2, off0=6) + ds("ds_load_u16", vdst=3, addr=1, off0=6), w)
    assert w.lds[:6].tolist() == [0x11] * 6 and w.lds[70:].tolist() == [0x11] * 10
    assert w.lds[6:70].view(np.uint16).tolist() == [0x8000 + i for i in range(32)]
    assert w.v[3].tolist() == [0x8000 + i for i in range(32)]


def test_ds_d16_halves() -> None:
    """d16 loads fill one half of the VGPR and keep the other; d16_hi stores write the high bits."""
    w = _wave(lds=16)
    w.v[1] = np.zeros(32, np.uint32)
    w.v[2] = np.uint32(0xCAFE1234)
    w = run(ds("ds_store_b16_d16_hi", addr=1, data0=2) + ds("ds_store_b8_d16_hi", addr=1, data0=2, off0=2)
            + ds("ds_store_b16", addr=1, data0=2, off0=4), w)
    assert w.lds[:6].tolist() == [0xFE, 0xCA, 0xFE, 0, 0x34, 0x12]
    w.v[3], w.v[4] = np.uint32(0xAAAABBBB), np.uint32(0xAAAABBBB)
    w = run(ds("ds_load_u16_d16", vdst=3, addr=1) + ds("ds_load_u16_d16_hi", vdst=4, addr=1, off0=4), w)
    assert (int(w.v[3][0]), int(w.v[4][0])) == (0xAAAACAFE, 0x1234BBBB)


def test_ds_bpermute_and_permute() -> None:
    """The ISA's 4-lane example, in lanes 0-3 of a wave32: DATA0 {A, B, C, D}, ADDR {0, 0, 12, 4}.
    bpermute reads lane ADDR/4 ({A, A, D, B}); permute writes to it ({B, D, 0, C}: lane 0 gets the
    later writer B); with EXEC 0xA a disabled source reads as 0 and disabled lanes keep VDST."""
    data = [0xA, 0xB, 0xC, 0xD] + [0] * 28
    addr = [0, 0, 12, 4] + [0] * 28
    for exec_mask, name, want in [(0xF, "ds_bpermute_b32", [0xA, 0xA, 0xD, 0xB]),
                                  (0xF, "ds_permute_b32", [0xB, 0xD, 0, 0xC]),
                                  (0xA, "ds_bpermute_b32", [7, 0, 7, 0xB]),
                                  (0xA, "ds_permute_b32", [7, 0xD, 7, 0])]:
        w = _wave(lds=0, exec_mask=exec_mask)
        w.v[1], w.v[2], w.v[3] = np.array(addr, np.uint32), np.array(data, np.uint32), np.uint32(7)
        w = run(ds(name, vdst=3, addr=1, data0=2), w)
        assert w.v[3][:4].tolist() == want, (name, exec_mask)
    w = _wave(lds=0)  # the offset adds to the address; lanes wrap mod 32
    w.v[1], w.v[2] = np.full(32, 124, np.uint32), np.arange(32, dtype=np.uint32) * 10
    w = run(ds("ds_bpermute_b32", vdst=3, addr=1, data0=2, off0=8), w)
    assert w.v[3].tolist() == [10] * 32  # (124 + 8) / 4 = 33 -> lane 1


def test_ds_inactive_lanes_touch_nothing() -> None:
    w = _wave(exec_mask=0x1, lds=16)
    w.v[1] = np.full(32, 0xFFFFF000, np.uint32)  # garbage addresses in inactive lanes
    w.v[1][0] = 4
    w.v[2] = np.uint32(5)
    w = run(ds("ds_store_b32", addr=1, data0=2), w)
    assert w.lds.view(np.uint32).tolist() == [0, 5, 0, 0]


def test_ds_out_of_range_is_an_error() -> None:
    w = _wave(lds=64)
    w.v[1] = np.full(32, 62, np.uint32)
    with pytest.raises(EmulationError, match="outside the workgroup's 64 bytes of LDS"):
        run(ds("ds_load_b32", vdst=2, addr=1), w)


@pytest.mark.parametrize("store,load,ndw", [("global_store_b32", "global_load_b32", 1),
                                            ("global_store_b64", "global_load_b64", 2),
                                            ("global_store_b128", "global_load_b128", 4)])
def test_global_round_trip_vaddr64(store: str, load: str, ndw: int) -> None:
    mem = Memory()
    buf = np.zeros(32 * 4 + 4, np.uint32)
    base = mem.add(buf)
    w = _wave(mem)
    _lane_addr(w, 2, base, 16)
    for i in range(ndw):
        w.v[10 + i] = np.arange(32, dtype=np.uint32) + 1000 * i
    w = run(glob(store, addr=2, data=10, offset=4) + glob(load, vdst=20, addr=2, offset=4), w)
    for i in range(ndw):
        assert w.v[20 + i].tolist() == (np.arange(32) + 1000 * i).tolist()
        assert buf[1 + i] == 1000 * i and buf[5 + i] == 1 + 1000 * i


def test_global_store_b96_writes_three_dwords() -> None:
    mem = Memory()
    buf = np.zeros(32 * 4 + 4, np.uint32)
    base = mem.add(buf)
    w = _wave(mem)
    _lane_addr(w, 2, base, 16)
    for i in range(4):
        w.v[10 + i] = np.arange(32, dtype=np.uint32) + 1000 * i
    w = run(glob("global_store_b96", addr=2, data=10, offset=4), w)
    lanes = buf[1:129].reshape(32, 4)
    assert lanes[:, :3].tolist() == [[k, k + 1000, k + 2000] for k in range(32)]
    assert not lanes[:, 3].any() and buf[0] == 0  # the fourth register is not stored


def test_global_saddr_and_negative_offset() -> None:
    mem = Memory()
    buf = np.arange(64, dtype=np.uint32)
    base = mem.add(buf)
    w = _wave(mem)
    w.s[4], w.s[5] = base & M, base >> 32
    w.v[1] = (np.arange(32, dtype=np.uint32) + 1) * 4  # 32-bit offsets from the SGPR base
    w = run(glob("global_load_b32", vdst=3, addr=1, saddr=4, offset=-4), w)
    assert w.v[3].tolist() == list(range(32))


def test_global_sub_dword() -> None:
    mem = Memory()
    buf = np.array([0x8081, 0xF00D, 0, 0], np.uint16)
    base = mem.add(buf)
    w = _wave(mem, exec_mask=0x1)
    _lane_addr(w, 2, base, 0)
    w.v[10] = np.uint32(0xAAAABBBB)
    w.v[11] = np.uint32(0xAAAABBBB)
    code = (glob("global_load_u8", vdst=4, addr=2) + glob("global_load_i8", vdst=5, addr=2)
            + glob("global_load_u16", vdst=6, addr=2) + glob("global_load_d16_b16", vdst=10, addr=2, offset=2)
            + glob("global_load_d16_hi_b16", vdst=11, addr=2, offset=2)
            + glob("global_load_d16_u8", vdst=13, addr=2))
    w.v[13] = np.uint32(0xAAAABBBB)
    w = run(code, w)
    # d16_u8: the byte zero-extended into the low half, the high half kept
    assert [int(w.v[r][0]) for r in (4, 5, 6, 10, 11, 13)] == [0x81, 0xFFFFFF81, 0x8081, 0xAAAAF00D, 0xF00DBBBB,
                                                               0xAAAA0081]
    w.v[12] = np.uint32(0x12345678)
    w = run(glob("global_store_b16", addr=2, data=12, offset=4) + glob("global_store_d16_hi_b16", addr=2,
                                                                       data=12, offset=6)
            + glob("global_store_b8", addr=2, data=12, offset=1), w)
    assert buf.tolist() == [0x7881, 0xF00D, 0x5678, 0x1234]


def test_global_exec_masked_and_bounds_checked() -> None:
    mem = Memory()
    buf = np.zeros(4, np.uint32)
    base = mem.add(buf)
    w = _wave(mem, exec_mask=0b1111)
    _lane_addr(w, 2, base, 4)  # lanes 4.. point past the buffer but are inactive
    w.v[5] = np.uint32(3)
    w = run(glob("global_store_b32", addr=2, data=5), w)
    assert buf.tolist() == [3, 3, 3, 3]
    w.exec = 0b11111
    before = buf.copy()
    with pytest.raises(EmulationError, match=r"global_store_b32.*outside every buffer"):
        run(glob("global_store_b32", addr=2, data=5) + vop1("v_mov_b32", 0, 129), w)
    assert buf.tolist() == before.tolist()


def _raw_buffer(w: Wave, base: int, num_records: int, word3: int = 0x31014000) -> None:
    """A V# in s[8:11] as MIOpen's reduction kernels build it: raw (stride 0), OOB_SELECT 3."""
    w.s[8], w.s[9], w.s[10], w.s[11] = base & M, (base >> 32) & 0xFFFF, num_records, word3


def test_buffer_load_store_raw_range_checked() -> None:
    """A dword is in range when all its bytes lie below NUM_RECORDS: out of range, a load gives 0
    and a store is dropped (0x7fffffff added to a lane's offset switches it off, as MIOpen does)."""
    mem = Memory()
    buf = np.arange(16, dtype=np.uint32) + 100
    base = mem.add(buf)
    w = _wave(mem, exec_mask=0xFF)
    _raw_buffer(w, base, 40)  # 10 dwords in range of 16
    w.v[1] = np.array([0, 4, 36, 40, 38, 0x7FFFFFFF, 8, 12] + [0] * 24, np.uint32)
    w.v[2] = np.uint32(0xEEEE)
    w = run(mubuf("buffer_load_b32", vdata=2, vaddr=1, srsrc=8, offen=1, offset=4), w)
    # offsets + 4: 4, 8, 40 (out: 40 + 4 > 40), 44, 42, huge, 12, 16; lanes 8.. inactive keep 0xEEEE
    assert w.v[2].tolist() == [101, 102, 0, 0, 0, 0, 103, 104] + [0xEEEE] * 24
    w.v[3] = np.arange(32, dtype=np.uint32) + 7
    w.v[1] = np.array([0, 0x7FFFFFFF, 36, 40, 8] + [4] * 27, np.uint32)
    w.exec = 0b11101  # lane 1 off as well
    w = run(mubuf("buffer_store_b32", vdata=3, vaddr=1, srsrc=8, offen=1), w)
    assert buf.tolist() == [7, 101, 11, 103, 104, 105, 106, 107, 108, 9, *range(110, 116)]


def test_buffer_without_offen_uses_the_instruction_offset() -> None:
    mem = Memory()
    buf = np.arange(8, dtype=np.uint32)
    base = mem.add(buf)
    w = _wave(mem)
    _raw_buffer(w, base, 32)
    w = run(mubuf("buffer_load_b32", vdata=2, srsrc=8, offset=12), w)
    assert w.v[2].tolist() == [3] * 32


@pytest.mark.parametrize("code,word3,match", [
    (mubuf("buffer_load_b32", vdata=2, vaddr=1, srsrc=8, idxen=1), 0x31014000, "idxen"),
    (mubuf("buffer_load_b32", vdata=2, vaddr=1, srsrc=8, offen=1, soffset=4), 0x31014000, "SGPR offset"),
    (mubuf("buffer_load_b32", vdata=2, vaddr=1, srsrc=8, offen=1), 0x01014000, "OOB_SELECT 0"),
    (mubuf("buffer_load_b32", vdata=2, vaddr=1, srsrc=8, offen=1), 0x31814000, "ADD_TID 1"),
])
def test_buffer_forms_not_emulated_are_refused(code: bytes, word3: int, match: str) -> None:
    mem = Memory()
    base = mem.add(np.zeros(8, np.uint32))
    w = _wave(mem)
    _raw_buffer(w, base, 32, word3)
    w.v[1] = np.zeros(32, np.uint32)
    with pytest.raises(EmulationError, match=match):
        run(code, w)
