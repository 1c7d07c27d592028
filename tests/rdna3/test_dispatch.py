"""Dispatch: work-item/workgroup ids, partial workgroups, barriers with LDS, hidden kernargs."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from asm import ds, f16, f32, glob, run, smem, sop2, sopp, v, vop1, vop2, vop3, vop3sd, vopc
from rdna3 import EmulationError, Kernel, Memory, RawCode, Wave, build_kernargs, launch
from rdna3.codeobject import KernelArg

HIDDEN = [KernelArg(8, 4, "hidden_block_count_x", ""), KernelArg(12, 4, "hidden_block_count_y", ""),
          KernelArg(16, 4, "hidden_block_count_z", ""), KernelArg(20, 2, "hidden_group_size_x", ""),
          KernelArg(22, 2, "hidden_group_size_y", ""), KernelArg(24, 2, "hidden_group_size_z", ""),
          KernelArg(26, 2, "hidden_remainder_x", ""), KernelArg(28, 2, "hidden_remainder_y", ""),
          KernelArg(30, 2, "hidden_remainder_z", ""), KernelArg(40, 8, "hidden_global_offset_x", ""),
          KernelArg(64, 2, "hidden_grid_dims", "")]


def _kernel(lds: int = 0, tgid: str = "x") -> Kernel:
    rsrc2 = 14 << 1 | ("x" in tgid) << 7 | ("y" in tgid) << 8 | ("z" in tgid) << 9
    return Kernel(name="k", entry=0, group_segment_size=lds, private_segment_size=0, kernarg_size=72,
                  rsrc1=0xF0 << 12, rsrc2=rsrc2, code_properties=0x8, args=tuple(HIDDEN), wavefront_size=32)


def _global_id_store() -> bytes:
    """out[gid] = (group_id << 16) | v0 for gid = group_id * 48 + local id; 48-item groups."""
    return (smem("s_load_b64", 4, 0)                       # s[4:5] = out pointer (kernarg 0)
            + sop2("s_mul_i32", 6, 14, 255, 48)            # s6 = group x * 48
            + vop2("v_add_nc_u32", 1, 6, 0)                # v1 = global id
            + vop2("v_lshlrev_b32", 1, 130, 1)             # v1 = byte offset
            + sop2("s_lshl_b32", 7, 14, 144)               # s7 = group << 16
            + vop2("v_or_b32", 2, 7, 0)                    # v2 = group << 16 | v0
            + glob("global_store_b32", addr=1, data=2, saddr=4) + sopp("s_endpgm"))


def test_work_item_ids_and_partial_last_group() -> None:
    mem = Memory()
    out = np.full(128, 0xFFFFFFFF, np.uint32)
    k = _kernel()
    args = build_kernargs(k, struct.pack("<Q", mem.add(out)), [100, 1, 1], [48, 1, 1])
    stats = launch(RawCode(_global_id_store(), kernels={"k": k}), "k", [100, 1, 1], [48, 1, 1], args, mem)
    assert stats.workgroups == 3
    gid = np.arange(100)
    assert out[:100].tolist() == ((gid // 48) << 16 | gid % 48).tolist()
    assert (out[100:] == 0xFFFFFFFF).all()  # the partial group's missing items did not run


def test_hidden_kernel_arguments() -> None:
    seg = build_kernargs(_kernel(), b"\x01" * 8, [100, 6, 1], [48, 4, 1])
    assert len(seg) == 72 and seg[:8] == b"\x01" * 8
    assert struct.unpack_from("<3I3H3H", seg, 8) == (3, 2, 1, 48, 4, 1, 4, 2, 0)
    assert struct.unpack_from("<Q", seg, 40)[0] == 0
    assert struct.unpack_from("<H", seg, 64)[0] == 2


def test_workgroup_ids_follow_user_sgprs_and_v0_packs_xyz() -> None:
    mem = Memory()
    out = np.zeros((2, 3, 4), np.uint32)  # [group y][group x][item]
    k = _kernel(tgid="xy")
    code = (smem("s_load_b64", 4, 0)
            + sop2("s_mul_i32", 6, 15, 131) + sop2("s_add_u32", 6, 6, 14)  # s6 = gy*3 + gx
            + sop2("s_lshl_b32", 6, 6, 132)                                 # * 16 bytes
            + vop3("v_bfe_u32", 1, v(0), 138, 138)                          # y id (bits 10..19)
            + vop3("v_bfe_u32", 4, v(0), 128, 138)                          # x id (bits 0..9)
            + vop2("v_lshlrev_b32", 1, 129, 1) + vop2("v_add_nc_u32", 3, v(4), 1)  # 2y + x
            + vop2("v_lshlrev_b32", 3, 130, 3) + vop2("v_add_nc_u32", 3, 6, 3)
            + vop1("v_mov_b32", 2, v(0))
            + glob("global_store_b32", addr=3, data=2, saddr=4) + sopp("s_endpgm"))
    args = build_kernargs(k, struct.pack("<Q", mem.add(out)), [6, 4, 1], [2, 2, 1])
    launch(RawCode(code, kernels={"k": k}), "k", [6, 4, 1], [2, 2, 1], args, mem)
    assert out[1, 2].tolist() == [0, 1, 1 << 10, 1 | 1 << 10]


def test_barrier_orders_lds_between_waves() -> None:
    """64 items = 2 waves; each writes its id to LDS, barrier, reads its mirror's (63 - id)."""
    mem = Memory()
    out = np.zeros(64, np.uint32)
    k = _kernel(lds=256)
    code = (smem("s_load_b64", 4, 0)
            + vop2("v_lshlrev_b32", 1, 130, 0)                      # v1 = 4 * id
            + ds("ds_store_b32", addr=1, data0=0) + sopp("s_waitcnt") + sopp("s_barrier")
            + vop2("v_sub_nc_u32", 2, 255, 1, 252)                  # v2 = 252 - 4 * id
            + ds("ds_load_b32", vdst=3, addr=2)
            + glob("global_store_b32", addr=1, data=3, saddr=4) + sopp("s_endpgm"))
    args = build_kernargs(k, struct.pack("<Q", mem.add(out)), [64, 1, 1], [64, 1, 1])
    stats = launch(RawCode(code, kernels={"k": k}), "k", [64, 1, 1], [64, 1, 1], args, mem)
    assert out.tolist() == list(range(63, -1, -1))
    assert stats.wave_instructions == 2 * 9


def test_unimplemented_instruction_fails_with_kernel_and_address() -> None:
    mem = Memory()
    k = _kernel()
    code = sopp("s_nop") + struct.pack("<I", 0b0111111 << 25 | 99 << 9)
    with pytest.raises(EmulationError, match=r"k at 0x4 .*VOP1 opcode 99"):
        launch(RawCode(code, kernels={"k": k}), "k", [1, 1, 1], [1, 1, 1], bytes(72), mem)


def test_out_of_bounds_store_stops_the_kernel() -> None:
    mem = Memory()
    out = np.zeros(4, np.uint32)
    k = _kernel()
    args = build_kernargs(k, struct.pack("<Q", mem.add(out)), [5, 1, 1], [5, 1, 1])
    code = (smem("s_load_b64", 4, 0) + vop2("v_lshlrev_b32", 1, 130, 0)
            + glob("global_store_b32", addr=1, data=0, saddr=4) + sopp("s_endpgm"))
    with pytest.raises(EmulationError, match=r"k at 0x\w+ \(global_store_b32\).*outside every buffer"):
        launch(RawCode(code, kernels={"k": k}), "k", [5, 1, 1], [5, 1, 1], args, mem)


def test_descriptor_features_not_emulated_are_refused() -> None:
    k = _kernel()
    scratch = Kernel(**{**k.__dict__, "private_segment_size": 16})
    with pytest.raises(EmulationError, match="scratch"):
        launch(RawCode(b"", kernels={"k": scratch}), "k", [1, 1, 1], [1, 1, 1], bytes(72), Memory())
    ftz16 = Kernel(**{**k.__dict__, "rsrc1": 0x00 << 12})  # f16/f64 denormals flushed too
    with pytest.raises(EmulationError, match="float mode 0x0 "):
        launch(RawCode(b"", kernels={"k": ftz16}), "k", [1, 1, 1], [1, 1, 1], bytes(72), Memory())
    round_up = Kernel(**{**k.__dict__, "rsrc1": 0xF1 << 12})  # f32 rounds toward +inf
    with pytest.raises(EmulationError, match="float mode 0xf1"):
        launch(RawCode(b"", kernels={"k": round_up}), "k", [1, 1, 1], [1, 1, 1], bytes(72), Memory())
    queue = Kernel(**{**k.__dict__, "code_properties": 0x8 | 0x4})  # the queue pointer
    with pytest.raises(EmulationError, match="user SGPRs 0xc"):
        launch(RawCode(b"", kernels={"k": queue}), "k", [1, 1, 1], [1, 1, 1], bytes(72), Memory())


def test_float_mode_0xc0_flushes_f32_denormals_only() -> None:
    """OpenCL kernels (MIOpen 3.4's batchnorm) set FLOAT_DENORM_MODE_32 = flush: f32 denormal
    operands and results become signed zeros; v_cmp_class still sees the denormal."""
    tiny = float(np.float32(1e-40))
    code = (vop2("v_mul_f32", 2, 242, 256)             # v2 = 1.0 * v0
            + vop2("v_mul_f32", 3, v(1), v(1))          # v3 = 1e-20 * 1e-20 (underflows to a denormal)
            + vopc("v_cmp_class_f32", v(0), 6)          # vcc = v0 is a -denormal? (mask in v6)
            + vop1("v_cvt_f32_f16", 4, v(5)))           # f16 denormal -> f32 normal: kept (f16 mode)
    results = {}
    for flush in (False, True):
        w = Wave(Memory(), np.zeros(16, np.uint8))
        w.exec, w.flush_f32 = 0xFFFFFFFF, flush
        w.v[0], w.v[1] = np.uint32(f32(-tiny)), np.uint32(f32(1e-20))
        w.v[5], w.v[6] = np.uint32(f16(6e-8)), np.uint32(1 << 4)  # class 4: -denormal
        run(code, w)
        results[flush] = (w.v[2].view(np.float32)[0], w.v[3].view(np.float32)[0], w.s[106],
                          w.v[4].view(np.float32)[0])
    kept, flushed = results[False], results[True]
    assert kept[0] == np.float32(-tiny) and kept[1] == np.float32(1e-40)
    assert flushed[0] == 0 and np.signbit(flushed[0]) and flushed[1] == 0
    assert kept[2] == flushed[2] != 0  # v_cmp_class classified the same (unflushed) input
    assert kept[3] == flushed[3] == np.float32(np.float16(6e-8))


def test_dispatch_packet_pointer_precedes_the_kernarg_pointer() -> None:
    """With the dispatch pointer enabled (OpenCL kernels), s[0:1] points at an HSA dispatch
    packet (group and grid sizes) and the kernarg pointer moves to s[2:3]."""
    mem = Memory()
    out = np.zeros(4, np.uint32)
    k = Kernel(**{**_kernel().__dict__, "code_properties": 0x8 | 0x2, "rsrc2": 4 << 1 | 1 << 7})
    args = build_kernargs(k, struct.pack("<Q", mem.add(out)), [40, 3, 1], [8, 3, 1])
    code = (smem("s_load_b64", 6, 2)                        # s[6:7] = out pointer (kernarg 0)
            + smem("s_load_b64", 8, 0, offset=4)            # s8 = group x|y sizes, s9 = z|reserved
            + smem("s_load_b32", 10, 0, offset=12)          # s10 = grid size x
            + vop1("v_mov_b32", 1, 8) + vop1("v_mov_b32", 2, 10) + vop1("v_mov_b32", 3, 128)
            + vop1("v_mov_b32", 4, 128)
            + glob("global_store_b32", addr=3, data=1, saddr=6)
            + glob("global_store_b32", addr=3, data=2, saddr=6, offset=4) + sopp("s_endpgm"))
    launch(RawCode(code, kernels={"k": k}), "k", [40, 3, 1], [8, 3, 1], args, mem)
    assert out[0] == 8 | 3 << 16 and out[1] == 40


def test_carry_chain_64_bit_address_math() -> None:
    """v_add_co_u32 / v_add_co_ci_u32 propagate the carry into the high dword."""
    mem = Memory()
    w_code = (vop3sd("v_add_co_u32", 0, 106, v(2), v(4)) + vop3sd("v_add_co_ci_u32", 1, 106, v(3), v(5), 106))
    from asm import run
    from rdna3 import Wave
    w = Wave(mem, np.zeros(4, np.uint8))
    w.exec = 0xFFFFFFFF
    w.v[2], w.v[3], w.v[4], w.v[5] = np.uint32(0xFFFFFFF0), np.uint32(1), np.uint32(0x20), np.uint32(0)
    w = run(w_code, w)
    assert (int(w.v[0][0]), int(w.v[1][0])) == (0x10, 2)
