"""AMDGPU code objects (ELF, code object v5): kernels, their descriptors and argument layouts.

Reads only what a dispatch needs: the ``.text`` bytes, each kernel's 64-byte descriptor
(``<name>.kd``) and the ``amdhsa.kernels`` metadata note (msgpack) naming the kernarg layout,
including the hidden arguments the runtime fills in.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

__all__ = ["CodeObject", "CodeObjectError", "Kernel", "KernelArg"]

EM_AMDGPU = 0xE0
NT_AMDGPU_METADATA = 32


class CodeObjectError(ValueError):
    """The bytes are not an AMDGPU code object this emulator can run."""


def _msgpack(buf: bytes, pos: int) -> tuple[Any, int]:
    """Decode one msgpack value at ``pos``; returns (value, next position)."""
    b = buf[pos]
    pos += 1
    if b <= 0x7F:
        return b, pos
    if b >= 0xE0:
        return b - 0x100, pos
    if 0x80 <= b <= 0x8F:
        return _map(buf, pos, b & 0x0F)
    if 0x90 <= b <= 0x9F:
        return _array(buf, pos, b & 0x0F)
    if 0xA0 <= b <= 0xBF:
        n = b & 0x1F
        return buf[pos:pos + n].decode(), pos + n
    fixed = {0xC0: None, 0xC2: False, 0xC3: True}
    if b in fixed:
        return fixed[b], pos
    ints = {0xCC: "B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: "b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q",
            0xCA: ">f", 0xCB: ">d"}
    if b in ints:
        fmt = ints[b]
        return struct.unpack_from(fmt, buf, pos)[0], pos + struct.calcsize(fmt)
    lens = {0xD9: ">B", 0xDA: ">H", 0xDB: ">I", 0xC4: ">B", 0xC5: ">H", 0xC6: ">I"}
    if b in lens:
        fmt = lens[b]
        n = struct.unpack_from(fmt, buf, pos)[0]
        pos += struct.calcsize(fmt)
        raw = buf[pos:pos + n]
        return (raw.decode() if b >= 0xD9 else bytes(raw)), pos + n
    if b in (0xDC, 0xDD, 0xDE, 0xDF):
        fmt = ">H" if b in (0xDC, 0xDE) else ">I"
        n = struct.unpack_from(fmt, buf, pos)[0]
        pos += struct.calcsize(fmt)
        return (_array if b < 0xDE else _map)(buf, pos, n)
    raise CodeObjectError(f"msgpack type byte {b:#x} at {pos - 1} is not supported")


def _array(buf: bytes, pos: int, n: int) -> tuple[list[Any], int]:
    out = []
    for _ in range(n):
        v, pos = _msgpack(buf, pos)
        out.append(v)
    return out, pos


def _map(buf: bytes, pos: int, n: int) -> tuple[dict[Any, Any], int]:
    out = {}
    for _ in range(n):
        k, pos = _msgpack(buf, pos)
        out[k], pos = _msgpack(buf, pos)
    return out, pos


@dataclass(frozen=True)
class KernelArg:
    """One entry of a kernel's ``.args`` metadata: byte offset, size and value kind."""

    offset: int
    size: int
    value_kind: str
    name: str


@dataclass(frozen=True)
class Kernel:
    """A kernel: entry point (offset into the code object), descriptor fields, argument layout."""

    name: str
    entry: int
    group_segment_size: int
    private_segment_size: int
    kernarg_size: int
    rsrc1: int
    rsrc2: int
    code_properties: int
    args: tuple[KernelArg, ...]
    wavefront_size: int

    @property
    def user_sgpr_count(self) -> int:
        return (self.rsrc2 >> 1) & 0x1F

    @property
    def workgroup_id_enabled(self) -> tuple[bool, bool, bool]:
        return bool(self.rsrc2 >> 7 & 1), bool(self.rsrc2 >> 8 & 1), bool(self.rsrc2 >> 9 & 1)

    @property
    def float_mode(self) -> int:
        return (self.rsrc1 >> 12) & 0xFF


class CodeObject:
    """A loaded code object: ``text`` (bytes, addressed by ELF virtual address) and ``kernels``.

    >>> co = CodeObject(open("kernel.co", "rb").read())   # doctest: +SKIP
    >>> co.kernels["MIOpenActiveFwdLite"].kernarg_size     # doctest: +SKIP
    """

    def __init__(self, image: bytes) -> None:
        image = bytes(image)
        if image[:4] != b"\x7fELF" or image[4] != 2 or image[5] != 1:
            raise CodeObjectError("not a little-endian ELF64 image")
        machine = struct.unpack_from("<H", image, 18)[0]
        if machine != EM_AMDGPU:
            raise CodeObjectError(f"ELF machine {machine:#x} is not AMDGPU ({EM_AMDGPU:#x})")
        if struct.unpack_from("<H", image, 16)[0] != 3:
            raise CodeObjectError("not a linked code object (ELF type ET_DYN expected)")
        shoff, = struct.unpack_from("<Q", image, 0x28)
        shnum, shstrndx = struct.unpack_from("<HH", image, 0x3C)
        sections = [struct.unpack_from("<IIQQQQIIQQ", image, shoff + i * 64) for i in range(shnum)]
        strtab_sec = sections[shstrndx]

        def name_at(tab: tuple[int, ...], off: int) -> str:
            start = tab[4] + off
            return image[start:image.index(b"\0", start)].decode()

        by_name = {name_at(strtab_sec, s[0]): s for s in sections}
        if ".text" not in by_name:
            raise CodeObjectError("code object has no .text section")
        text = by_name[".text"]
        self.image = image
        self.text_addr: int = text[3]
        self.text = image[text[4]:text[4] + text[5]]
        symbols: dict[str, tuple[int, int]] = {}
        if ".symtab" in by_name:
            symtab = by_name[".symtab"]
            strs = sections[symtab[6]]
            for i in range(symtab[5] // 24):
                st_name, _info, _other, _shndx, value, size = struct.unpack_from("<IBBHQQ", image, symtab[4] + i * 24)
                symbols[name_at(strs, st_name)] = (value, size)
        self.symbols = symbols
        meta = self._metadata(sections)
        self.target: str = meta.get("amdhsa.target", "")
        self.kernels: dict[str, Kernel] = {}
        for k in meta.get("amdhsa.kernels", []):
            kd_addr = symbols[k[".symbol"]][0]
            kd = self._read_vaddr(sections, kd_addr, 64)
            group, private, _kernarg = struct.unpack_from("<III", kd, 0)
            entry_off, = struct.unpack_from("<q", kd, 16)
            rsrc3, rsrc1, rsrc2, props = struct.unpack_from("<IIIH", kd, 44)
            del rsrc3
            args = tuple(KernelArg(a[".offset"], a[".size"], a[".value_kind"], a.get(".name", ""))
                         for a in k.get(".args", []))
            self.kernels[k[".name"]] = Kernel(
                name=k[".name"], entry=kd_addr + entry_off, group_segment_size=group,
                private_segment_size=private, kernarg_size=k.get(".kernarg_segment_size", 0),
                rsrc1=rsrc1, rsrc2=rsrc2, code_properties=props, args=args,
                wavefront_size=k.get(".wavefront_size", 32))

    def _read_vaddr(self, sections: list[tuple[int, ...]], addr: int, n: int) -> bytes:
        for s in sections:
            if s[1] != 8 and s[2] & 2 and s[3] <= addr < s[3] + s[5] and addr + n <= s[3] + s[5]:  # skip NOBITS
                off = s[4] + addr - s[3]
                return self.image[off:off + n]
        raise CodeObjectError(f"address {addr:#x} is in no loaded section")

    def _metadata(self, sections: list[tuple[int, ...]]) -> dict[str, Any]:
        for s in sections:
            if s[1] != 7:  # SHT_NOTE
                continue
            pos, end = s[4], s[4] + s[5]
            while pos + 12 <= end:
                namesz, descsz, ntype = struct.unpack_from("<III", self.image, pos)
                name = self.image[pos + 12:pos + 12 + namesz].rstrip(b"\0")
                desc = pos + 12 + (namesz + 3) // 4 * 4
                if ntype == NT_AMDGPU_METADATA and name == b"AMDGPU":
                    value, _ = _msgpack(self.image[desc:desc + descsz], 0)
                    return value  # type: ignore[no-any-return]
                pos = desc + (descsz + 3) // 4 * 4
        raise CodeObjectError("code object has no AMDGPU metadata note (code object v3+ required)")

    def code_at(self, addr: int, n: int) -> bytes:
        """``n`` bytes of ``.text`` at virtual address ``addr`` (zero-padded at the end)."""
        off = addr - self.text_addr
        if not 0 <= off < len(self.text):
            raise CodeObjectError(f"address {addr:#x} is outside .text")
        return self.text[off:off + n].ljust(n, b"\0")
