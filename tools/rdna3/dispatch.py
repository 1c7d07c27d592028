"""Running a kernel: workgroups of wave32s over a grid, as the packet processor would set them up.

Per workgroup: LDS of the descriptor's ``group_segment_fixed_size``; per wave: the user SGPRs
the descriptor enables, in the ABI's order: the dispatch packet pointer (OpenCL kernels read
their group and grid sizes from the packet) then the kernarg pointer; workgroup ids in the SGPRs after
the user SGPRs for each enabled dimension, work-item ids packed in v0 (``x | y<<10 | z<<20``),
EXEC covering the wave's live work-items (the last workgroup of a dimension may be partial).
Waves of a group run in turn up to each ``s_barrier``. The kernarg segment gets the hidden
arguments the metadata declares (block counts, group sizes, remainders, zero offsets, grid dims).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .codeobject import CodeObject, Kernel
from .decode import UnsupportedInstruction, decode
from .memory import Memory, MemoryFault
from .salu import compile_scalar
from .valu import compile_valu
from .vmem import compile_vmem
from .wave import LANES, Wave

__all__ = ["EmulationError", "LaunchStats", "RawCode", "build_kernargs", "launch", "run_wave"]

MAX_WAVE_INSTRUCTIONS = 20_000_000
_SCALAR = {"SOP1", "SOP2", "SOPC", "SOPK", "SOPP", "SMEM", "MUBUF"}
_VMEM = {"DS", "GLOBAL", "MUBUF"}  # MUBUF: its buffer loads/stores (the rest are scalar no-ops)


class EmulationError(RuntimeError):
    """A kernel could not be run: names the kernel, the address and the reason."""


@dataclass
class LaunchStats:
    """What one launch did: kernel name, workgroups, wave-instructions, seconds."""

    kernel: str
    workgroups: int = 0
    wave_instructions: int = 0
    seconds: float = 0.0
    opcodes: set[str] = field(default_factory=set)


class RawCode:
    """Machine code not in a code object (tests): ``code_at`` like :class:`CodeObject`."""

    def __init__(self, code: bytes, base: int = 0, kernels: dict[str, Kernel] | None = None) -> None:
        self.code, self.base = code, base
        self.kernels: dict[str, Kernel] = kernels or {}

    def code_at(self, addr: int, n: int) -> bytes:
        off = addr - self.base
        if not 0 <= off < len(self.code):
            raise EmulationError(f"address {addr:#x} is outside the code")
        return self.code[off:off + n].ljust(n, b"\0")


class _Program:
    """The kernel's instructions, decoded and compiled once per address on first use."""

    def __init__(self, co: CodeObject | RawCode) -> None:
        self.co = co
        self.fns: dict[int, Callable[[Wave], int]] = {}
        self.names: dict[int, str] = {}

    def at(self, pc: int) -> Callable[[Wave], int]:
        fn = self.fns.get(pc)
        if fn is None:
            inst = decode(self.co.code_at(pc, 16), pc)
            if inst.fmt in _SCALAR and not inst.name.startswith(("buffer_load", "buffer_store")):
                fn = compile_scalar(inst, pc)
            elif inst.fmt in _VMEM:
                fn = compile_vmem(inst, pc)
            else:
                fn = compile_valu(inst, pc)
            self.fns[pc] = fn
            self.names[pc] = str(inst)
        return fn


_PROGRAMS: dict[int, _Program] = {}


def _program(co: CodeObject | RawCode) -> _Program:
    prog = _PROGRAMS.get(id(co))
    if prog is None or prog.co is not co:
        prog = _PROGRAMS[id(co)] = _Program(co)
    return prog


def build_kernargs(kernel: Kernel, explicit: bytes, grid: Sequence[int], block: Sequence[int]) -> bytes:
    """The kernarg segment: the caller's explicit bytes plus the hidden arguments.

    ``grid`` counts work-items (as ``hipExtModuleLaunchKernel`` does), ``block`` work-items per group.
    """
    seg = bytearray(max(kernel.kernarg_size, len(explicit)))
    seg[:len(explicit)] = explicit
    dims = 3 if grid[2] > 1 else 2 if grid[1] > 1 else 1
    for arg in kernel.args:
        kind = arg.value_kind
        if not kind.startswith("hidden_"):
            continue
        axis = "xyz".index(kind[-1]) if kind[-2] == "_" and kind[-1] in "xyz" else 0
        value: int | None = {
            "hidden_block_count": -(-grid[axis] // block[axis]),
            "hidden_group_size": block[axis],
            "hidden_remainder": grid[axis] % block[axis],
            "hidden_global_offset": 0,
        }.get(kind[:-2]) if kind[-2] == "_" else None
        if kind == "hidden_grid_dims":
            value = dims
        if value is None:  # pointers/queues this emulator has none of: zero, as a NULL pointer
            value = 0
        seg[arg.offset:arg.offset + arg.size] = value.to_bytes(arg.size, "little")
    return bytes(seg)


def launch(co: CodeObject | RawCode, kernel_name: str, grid: Sequence[int], block: Sequence[int],
           kernargs: bytes, memory: Memory, *, kernarg_address: int | None = None) -> LaunchStats:
    """Run ``kernel_name`` over ``grid`` work-items in groups of ``block``.

    ``kernargs`` is the complete segment (see :func:`build_kernargs`). If ``kernarg_address`` is
    None it is copied into a buffer registered with ``memory``.
    """
    if kernel_name not in co.kernels:
        raise EmulationError(f"no kernel {kernel_name!r} in the code object (has {sorted(co.kernels)})")
    k = co.kernels[kernel_name]
    _check_supported(k)
    grid = [int(g) for g in ([*list(grid), 1, 1])[:3]]
    block = [int(b) for b in ([*list(block), 1, 1])[:3]]
    if any(b <= 0 for b in block) or any(g < 0 for g in grid):
        raise EmulationError(f"{kernel_name}: bad launch sizes grid={grid} block={block}")
    keep: np.ndarray | None = None
    if kernarg_address is None:
        keep = np.frombuffer(bytearray(kernargs), np.uint8).copy()
        kernarg_address = memory.add(keep)
    packet = _dispatch_packet(k, grid, block, kernarg_address)
    packet_address = memory.add(packet)
    prog = _program(co)
    stats = LaunchStats(kernel_name)
    t0 = time.perf_counter()
    counts = [-(-g // b) for g, b in zip(grid, block, strict=False)]
    for gz in range(counts[2]):
        for gy in range(counts[1]):
            for gx in range(counts[0]):
                ids = (gx, gy, gz)
                size = [min(b, g - i * b) for b, g, i in zip(block, grid, ids, strict=False)]
                stats.wave_instructions += _run_group(prog, k, ids, size, kernarg_address, memory,
                                                      packet_address)
                stats.workgroups += 1
    stats.seconds = time.perf_counter() - t0
    del keep, packet
    return stats


#: Float modes emulated: round to nearest even everywhere; f16/f64 denormals kept; f32
#: denormals kept (0xf0, HIP's default) or flushed (0xc0, OpenCL's default on AMD).
FLOAT_MODES = {0xF0: False, 0xC0: True}
_DISPATCH_PTR, _KERNARG_PTR, _WAVE32 = 0x2, 0x8, 0x400


def _dispatch_packet(k: Kernel, grid: Sequence[int], block: Sequence[int], kernarg_address: int) -> np.ndarray:
    """The ``hsa_kernel_dispatch_packet_t`` a packet processor would hand the kernel (64 bytes)."""
    dims = 3 if grid[2] > 1 else 2 if grid[1] > 1 else 1
    raw = bytearray(64)
    raw[2:4] = dims.to_bytes(2, "little")                       # setup: dimensions
    for i in range(3):
        raw[4 + 2 * i:6 + 2 * i] = int(block[i]).to_bytes(2, "little")   # workgroup_size_x/y/z
        raw[12 + 4 * i:16 + 4 * i] = int(grid[i]).to_bytes(4, "little")  # grid_size_x/y/z
    raw[24:28] = k.private_segment_size.to_bytes(4, "little")
    raw[28:32] = int(k.group_segment_size).to_bytes(4, "little")
    raw[40:48] = kernarg_address.to_bytes(8, "little")
    return np.frombuffer(raw, np.uint8).copy()


def _check_supported(k: Kernel) -> None:
    props = k.code_properties
    if props & ~(_DISPATCH_PTR | _KERNARG_PTR | _WAVE32) & 0x7F:
        raise EmulationError(f"{k.name}: user SGPRs {props & 0x7F:#x} other than the dispatch "
                             "packet and kernarg pointers")
    if k.private_segment_size:
        raise EmulationError(f"{k.name}: scratch memory ({k.private_segment_size} bytes) is not emulated")
    if k.wavefront_size != LANES:
        raise EmulationError(f"{k.name}: wave{k.wavefront_size} is not emulated (wave32 only)")
    if k.float_mode not in FLOAT_MODES:
        raise EmulationError(f"{k.name}: float mode {k.float_mode:#x} (emulated: round to nearest "
                             "even with f16/f64 denormals kept and f32 denormals kept, 0xf0, or "
                             "flushed, 0xc0)")


def _run_group(prog: _Program, k: Kernel, ids: tuple[int, int, int], size: list[int],
               kernarg_address: int, memory: Memory, packet_address: int = 0) -> int:
    lds = np.zeros(max(k.group_segment_size, 0), np.uint8)
    n_items = size[0] * size[1] * size[2]
    lin = np.arange(-(-n_items // LANES) * LANES)
    x = lin % size[0]
    y = (lin // size[0]) % size[1]
    z = lin // (size[0] * size[1])
    packed = (x | (y << 10) | (z << 20)).astype(np.uint32)
    waves = []
    first_id = k.user_sgpr_count
    for w_i in range(len(lin) // LANES):
        w = Wave(memory, lds)
        w.flush_f32 = FLOAT_MODES[k.float_mode]
        sgpr = 0
        for bit, address in ((_DISPATCH_PTR, packet_address), (_KERNARG_PTR, kernarg_address)):
            if k.code_properties & bit or (bit == _KERNARG_PTR and sgpr == 0):
                w.s[sgpr], w.s[sgpr + 1] = address & 0xFFFFFFFF, address >> 32
                sgpr += 2
        sg = first_id
        for axis, enabled in enumerate(k.workgroup_id_enabled):
            if enabled:
                w.s[sg] = ids[axis]
                sg += 1
        w.v[0] = packed[w_i * LANES:(w_i + 1) * LANES]
        live = min(LANES, n_items - w_i * LANES)
        w.exec = (1 << live) - 1
        w.pc = k.entry
        waves.append(w)
    total = 0
    while True:
        for w in waves:
            if not w.done:
                total += _run_wave(prog, k.name, w)
        if all(w.done for w in waves):
            return total
        if not all(w.done or w.at_barrier for w in waves):
            raise EmulationError(f"{k.name}: waves stopped neither at a barrier nor at the end")
        for w in waves:
            w.at_barrier = False


def run_wave(code: CodeObject | RawCode, w: Wave, name: str = "code") -> int:
    """Run one wave from ``w.pc`` to its end or next barrier (tests); returns instructions run."""
    return _run_wave(_program(code), name, w)


def _run_wave(prog: _Program, name: str, w: Wave) -> int:
    """Run ``w`` to its end or its next barrier; returns the instructions executed."""
    pc, n = w.pc, 0
    at = prog.at
    try:
        while True:
            pc_next = at(pc)(w)
            n += 1
            if w.done or w.at_barrier:
                w.pc = pc_next
                return n
            pc = pc_next
            if n > MAX_WAVE_INSTRUCTIONS:
                raise EmulationError(f"{name}: more than {MAX_WAVE_INSTRUCTIONS} instructions in one wave")
    except (UnsupportedInstruction, MemoryFault) as e:
        where = prog.names.get(pc, "?")
        raise EmulationError(f"{name} at {pc:#x} ({where}): {e}") from e

