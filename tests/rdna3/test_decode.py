"""Decoding: known encodings, every implemented opcode round-trips, and has an opcode test."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from asm import run, sop2, sopp, v, vop1, vop2, vop3
from rdna3 import OPCODES, EmulationError, UnsupportedInstruction, decode
from rdna3.codeobject import CodeObject, CodeObjectError, _msgpack

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("raw,name,fields", [
    (0xBFB00000, "s_endpgm", {}),
    (0x7E000301, "v_mov_b32", {"src0": 257, "vdst": 0}),  # v_mov_b32 v0, v1
    (0x4A000503, "v_add_nc_u32", {"src0": 259, "vsrc1": 2, "vdst": 0}),  # v_add_nc_u32 v0, v3, v2
    (0xBF850001, "s_clause", {"simm16": 1}),
])
def test_known_encodings(raw: int, name: str, fields: dict[str, int]) -> None:
    inst = decode(struct.pack("<I", raw))
    assert inst.name == name
    assert {k: inst.f[k] for k in fields} == fields


@pytest.mark.parametrize("raw,name,fields", [
    # bytes as LLVM's gfx1100 assembler encodes these (llvm-mc -mcpu=gfx1100 -show-encoding)
    ("016afcd602070a04", "v_div_scale_f32", {"vdst": 1, "sdst": 106, "src0": 258, "src1": 259, "src2": 258}),
    ("050037d601050e04", "v_div_fmas_f32", {"vdst": 5, "src0": 257, "src1": 258, "src2": 259}),
    ("050027d601050e04", "v_div_fixup_f32", {"vdst": 5, "src0": 257, "src1": 258, "src2": 259}),
])
def test_known_wide_encodings(raw: str, name: str, fields: dict[str, int]) -> None:
    inst = decode(bytes.fromhex(raw.replace(" ", "")))
    assert inst.name == name and inst.size == 8
    assert {k: inst.f[k] for k in fields} == fields


def test_literal_sizes() -> None:
    assert decode(sop2("s_add_u32", 0, 1, 255, 7)).size == 8
    assert decode(vop2("v_mul_f32", 0, 255, 1, 0x3F800000)).literal == 0x3F800000
    assert decode(vop3("v_fma_f32", 0, v(1), 255, v(2), lit=5)).size == 12
    assert decode(vop1("v_mov_b32", 0, v(1))).size == 4


def test_every_opcode_decodes_to_its_name() -> None:
    import asm
    makers = {"SOP1": lambda n: asm.sop1(n, 0, 1), "SOP2": lambda n: asm.sop2(n, 0, 1, 2),
              "SOPC": lambda n: asm.sopc(n, 0, 1), "SOPK": lambda n: asm.sopk(n, 0, 1),
              "SOPP": lambda n: asm.sopp(n), "SMEM": lambda n: asm.smem(n, 0, 0),
              "VOP1": lambda n: asm.vop1(n, 0, v(1)), "VOP2": lambda n: asm.vop2(n, 0, v(1), 2),
              "VOPC": lambda n: asm.vopc(n, v(1), 2), "VOP3": lambda n: asm.vop3(n, 0, v(1), v(2), v(3)),
              "VOP3SD": lambda n: asm.vop3sd(n, 0, 4, v(1), v(2), v(3)),
              "VOP3P": lambda n: asm.vop3p(n, 0, v(1), v(2), v(3)),
              "VOPD": lambda n: asm.vopd("v_mov_b32", n, 0, 1, v(1), 2, v(3), 4),
              "DS": lambda n: asm.ds(n), "GLOBAL": lambda n: asm.glob(n), "MUBUF": asm.mubuf}
    count = 0
    for fmt, table in OPCODES.items():
        for name in table.values():
            inst = decode(makers[fmt](name))
            got = inst.y.name if inst.y is not None else inst.name  # VOPD: tested as the Y half
            assert got == name, (fmt, name, got)
            count += 1
    assert count > 150


def test_every_implemented_opcode_has_a_semantic_test() -> None:
    """Each opcode name appears in an opcode test module (no op ships without a hand-computed case)."""
    text = "".join(p.read_text() for p in HERE.glob("test_*.py") if p.name != "test_decode.py")
    names = {n for table in OPCODES.values() for n in table.values()}
    untested = sorted(n for n in names if f'"{n}"' not in text and f"'{n}'" not in text)
    assert untested == []


def test_unknown_opcode_names_itself_and_address() -> None:
    raw = struct.pack("<I", 0b0111111 << 25 | 99 << 9)  # VOP1 opcode 99: not implemented
    with pytest.raises(UnsupportedInstruction, match=r"VOP1 opcode 99 at 0x40"):
        decode(raw, 0x40)
    with pytest.raises(EmulationError, match=r"at 0x4 .*VOP1 opcode 99"):
        run(sopp("s_nop") + raw)


def test_unknown_encodings_are_refused() -> None:
    load = struct.pack("<II", 0b111000 << 26 | 21 << 18, 0)  # buffer_load_b64: not implemented
    with pytest.raises(UnsupportedInstruction, match="MUBUF opcode 21 at 0x10"):
        decode(load, 0x10)
    mimg = struct.pack("<II", 0b111100 << 26, 0)
    with pytest.raises(UnsupportedInstruction, match="encoding 0xf0000000 at 0x10"):
        decode(mimg, 0x10)
    scratch = struct.pack("<II", 0b110111 << 26 | 1 << 16, 0)
    with pytest.raises(UnsupportedInstruction, match="segment 1"):
        decode(scratch)


def test_msgpack_subset() -> None:
    blob = bytes([0x82, 0xA1, ord("a"), 0x93, 0x01, 0xCD, 0x01, 0x00, 0xFF, 0xA1, ord("b"), 0xC3])
    assert _msgpack(blob, 0)[0] == {"a": [1, 256, -1], "b": True}


def test_code_object_refuses_non_amdgpu_images() -> None:
    with pytest.raises(CodeObjectError, match="not a little-endian ELF64"):
        CodeObject(b"not an elf")
    x86 = bytearray(64)
    x86[:6] = b"\x7fELF\x02\x01"
    x86[18:20] = struct.pack("<H", 62)
    with pytest.raises(CodeObjectError, match="machine 0x3e is not AMDGPU"):
        CodeObject(bytes(x86))


def test_inventory_finds_amdgpu_images_inside_cache_blobs() -> None:
    from rdna3.inventory import Inventory, images
    elf = bytearray(0x40)
    elf[:6] = b"\x7fELF\x02\x01"
    elf[18:20] = struct.pack("<H", 0xE0)
    elf[0x28:0x30] = struct.pack("<Q", 0x40)  # no sections: the image ends at the header
    x86 = bytes(elf[:18]) + struct.pack("<H", 62) + bytes(elf[20:])
    assert images(b"size-prefix" + bytes(elf) + b"tail" + x86) == [bytes(elf)]
    assert Inventory().instructions == 0


def test_inventory_reads_miopen_kernel_databases(tmp_path: Path) -> None:
    """MIOpen's user kernel db (SQLite kern_db, bzip2 blobs when that is smaller; 3.4 keeps every
    kernel there) yields its blobs decompressed."""
    import bz2
    import sqlite3

    from rdna3.inventory import kernel_db_blobs
    db = tmp_path / "gfx1100_48.ukdb"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE kern_db (id INTEGER PRIMARY KEY, kernel_name TEXT, kernel_blob BLOB)")
    con.executemany("INSERT INTO kern_db (kernel_name, kernel_blob) VALUES (?, ?)",
                    [("a.cl.o", bz2.compress(b"\x7fELF packed" * 20)), ("b.cl.o", b"\x7fELF raw")])
    con.commit()
    con.close()
    assert kernel_db_blobs(db) == [b"\x7fELF packed" * 20, b"\x7fELF raw"]
