"""An RDNA3 (gfx1100, wave32) instruction emulator for running MIOpen's compiled kernels on the CPU.

Test tooling only (never shipped in the wheel). Modules, one job each:
``codeobject`` (ELF code object, kernel descriptors, argument metadata), ``decode`` (instruction
encodings), ``wave`` (registers and operands), ``salu``/``valu``/``vmem`` (instruction semantics),
``memory`` (bounds-checked buffers), ``dispatch`` (workgroups, waves, barriers, kernargs).

    from rdna3 import CodeObject, Memory, launch, build_kernargs
"""

from .codeobject import CodeObject, CodeObjectError, Kernel
from .decode import OPCODES, UnsupportedInstruction, decode
from .dispatch import EmulationError, LaunchStats, RawCode, build_kernargs, launch, run_wave
from .memory import Memory, MemoryFault
from .wave import Wave

__all__ = [
           "OPCODES",
           "CodeObject",
           "CodeObjectError",
           "EmulationError",
           "Kernel",
           "LaunchStats",
           "Memory",
           "MemoryFault",
           "RawCode",
           "UnsupportedInstruction",
           "Wave",
           "build_kernargs",
           "decode",
           "launch",
           "run_wave",
]
