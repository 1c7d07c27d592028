"""Instruction inventory of gfx1100 code objects: which opcodes the kernels contain, and which of
them this emulator lacks. Rerun it when the lane's cases grow (new solvers add kernels).

    python tools/rdna3/inventory.py ~/.cache/hipdnn-ctypes/rdna3/miopen-7.2.4 ~/.cache/hipdnn-ctypes/rdna3/miopen-6.4.3

Arguments are code objects or directories; ELF images are also found inside comgr cache
entries and in MIOpen's user kernel database (``*.ukdb``: SQLite, table ``kern_db``, blobs
bzip2-compressed when smaller), where MIOpen 3.4 keeps all its kernels. Each kernel is swept
linearly from its entry to the next symbol (or ``s_code_end``).
"""

from __future__ import annotations

import bz2
import collections
import sqlite3
import struct
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "rdna3"

from rdna3.codeobject import EM_AMDGPU, CodeObject, CodeObjectError
from rdna3.decode import UnsupportedInstruction, decode

__all__ = ["Inventory", "images", "inventory", "kernel_db_blobs"]


def images(blob: bytes) -> list[bytes]:
    """Linked AMDGPU ELF images inside ``blob`` (a code object or a comgr cache entry)."""
    out, i = [], blob.find(b"\x7fELF")
    while i >= 0:
        if len(blob) >= i + 0x40 and struct.unpack_from("<H", blob, i + 18)[0] == EM_AMDGPU:
            shoff, = struct.unpack_from("<Q", blob, i + 0x28)
            shnum, = struct.unpack_from("<H", blob, i + 0x3C)
            out.append(blob[i:i + shoff + shnum * 64])
        i = blob.find(b"\x7fELF", i + 4)
    return out


class Inventory:
    """Counts per opcode name, kernels seen, and the unsupported encodings met."""

    def __init__(self) -> None:
        self.ops: collections.Counter[str] = collections.Counter()
        self.kernels: set[str] = set()
        self.unsupported: collections.Counter[str] = collections.Counter()
        self.instructions = 0

    def add(self, co: CodeObject) -> None:
        starts = sorted(v for n, (v, _s) in co.symbols.items() if not n.endswith(".kd") and v >= co.text_addr)
        for k in co.kernels.values():
            self.kernels.add(k.name)
            end = next((s for s in starts if s > k.entry), co.text_addr + len(co.text))
            pc = k.entry
            while pc < end:
                try:
                    inst = decode(co.code_at(pc, 16), pc)
                except UnsupportedInstruction as exc:
                    self.unsupported[str(exc).split(" at ")[0]] += 1
                    pc += 4  # resynchronise: an unknown length; good enough for a census
                    continue
                names = [inst.name] if inst.y is None else [inst.name, inst.y.name]
                self.ops.update(names)
                self.instructions += 1
                if inst.name == "s_code_end":
                    break
                pc += inst.size


def kernel_db_blobs(path: Path) -> list[bytes]:
    """The kernel blobs of a MIOpen user kernel database, decompressed."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT kernel_blob FROM kern_db").fetchall()
    finally:
        con.close()
    return [bz2.decompress(b) if b[:3] == b"BZh" else bytes(b) for (b,) in rows]


def inventory(paths: list[Path]) -> Inventory:
    inv = Inventory()
    seen: set[bytes] = set()
    files = [f for p in paths for f in (sorted(p.rglob("*")) if p.is_dir() else [p]) if f.is_file()]
    for f in files:
        blobs = kernel_db_blobs(f) if f.suffix == ".ukdb" else [f.read_bytes()]
        for img in (i for blob in blobs for i in images(blob)):
            if img in seen:
                continue
            seen.add(img)
            try:
                inv.add(CodeObject(img))
            except CodeObjectError:
                continue  # relocatable objects in the cache: not what gets launched
    return inv


def main(argv: list[str]) -> int:
    inv = inventory([Path(a).expanduser() for a in argv])
    print(f"{len(inv.kernels)} kernels, {inv.instructions} instructions, {len(inv.ops)} distinct opcodes")
    for name, n in sorted(inv.ops.items()):
        print(f"  {name:40} {n}")
    if inv.unsupported:
        print("not implemented:")
        for what, n in inv.unsupported.most_common():
            print(f"  {what:60} {n}")
    return 1 if inv.unsupported else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
