"""EmulatedDevice: a test-side stand-in for libMIOpen + the HIP runtime, reached through the same
ctypes prototypes as the real libraries (production code never branches on it).

    >>> dev = EmulatedDevice("3.5")
    >>> handle = miopen_ctypes.types.miopenHandle_t()
    >>> dev.miopen.miopenCreate(ctypes.byref(handle))
    >>> dev.call_names()
    ['miopenCreate']

Every emulated C function is a Python callable wrapped by ``MIOpenLibrary.from_functions`` /
``HipLibrary.from_functions`` in ``CFUNCTYPE(restype, *argtypes)`` of the PROTOTYPES entry, so
arguments cross the exact ctypes conversions they cross with the real library. ``"3.4"`` omits
every prototype with ``since >= (3, 5, 0)`` (the engine then sees the 3.4 symbol set).

Device memory is host memory (numpy buffers in an allocation table, see _memory.py); every
access the emulated kernels make is bounds-checked and a bad one becomes a failing status, never
a segfault. Every call is recorded in ``calls``; ``fail(name, status, nth)`` injects a status.

MIOpen contracts the device enforces (a violation returns the library's status, see
``device.errors`` for the reason; memory misuse also lands in ``device.faults``):

- handles/descriptors: NULL, unknown, destroyed or wrong-kind handles -> BadParm; descriptor
  set/get/derive rules as the real 3.4/3.5 libraries (cross-checked in tests/live); an
  activation descriptor must be set before use (the real library crashes otherwise).
- memory: every tensor/workspace span must lie inside one live allocation (fresh allocations
  hold NaN bytes, like uninitialised memory); conv x/w/y/workspace must not overlap.
- activation (miopenActivationForward/Backward): fp32/fp16 data only (``activation_dtypes``;
  MIOpen's standalone activation kernels have no bf16 path) -> NotImplemented otherwise.
- alpha/beta: read as ``const float*``, must be 1/0 (conv Find-1.0 execute, activation, BN,
  forward bias, fused conv args); OpTensor/TransformTensor take any value, beta=0 never reads C.
- convolution: cross-correlation, groups dividing C and K, x/w/y same dtype (fp16/fp32/bf16),
  y dims = the forward output dims, all three packed in one layout family; immediate mode
  checks the solution id and workspace >= its size; Find 1.0 execute needs a prior Find on the
  handle for that problem and algorithm; Find 2.0 problems copy the conv descriptor, honour the
  workspace limit / preallocated workspace / results order, overwrite a preallocated output
  buffer while "benchmarking"; RunSolution checks ids X/W/Y and the workspace size. The used
  part of every workspace is scribbled with NaN bytes.
- batchnorm: x fully packed (rank 3..5), x/y (dy/dx) same dims and dtype, parameter
  descriptors of the mode's shape and a dtype with kernels (fp32, or fp16 for fp16 x),
  scale/bias/outputs non-NULL, saved/running pairs used only when both pointers are set; the
  3.5 *Activation calls accept PASTHRU/RELU/CLIPPEDRELU/CLAMP only (spatial).
- fusion: compile is the applicability test (``fusion_applicable``; UnsupportedOp otherwise);
  execute needs a compiled plan, the same handle, the plan's input descriptor, args for every
  op; fused BN-forward always writes saved stats and read-modify-writes the running ones (NULL
  -> BadParm); fused BN-backward reads the activation's y buffer.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

import miopen_ctypes
from miopen_ctypes.hip import HIP_PROTOTYPES, HipLibrary

from ._batchnorm import BatchNormApi
from ._conv import ConvProblem, SolutionSpec, default_catalogue
from ._core import Args, Call, Status, addr, implementations
from ._descriptors import DescriptorApi
from ._find import FindApi
from ._fusion import FusionApi, default_fusion_applicable
from ._memory import MemoryFault
from ._norms import NormApi
from ._pointwise import PointwiseApi
from ._runtime import HIP_INVALID_VALUE, HipApi, RuntimeApi, _HipStatus

__all__ = ["VERSIONS", "EmulatedDevice"]

#: Accepted ``version`` strings -> what miopenGetVersion reports (the Debian builds' versions).
VERSIONS: dict[str, tuple[int, int, int]] = {"3.4": (3, 4, 0), "3.5": (3, 5, 1)}
_V3_5 = (3, 5, 0)


def _recorded(value: Any) -> Any:
    """A call argument as recorded: pointers and handles become int addresses (NULL -> 0)."""
    if value is None:
        return 0
    if isinstance(value, (bool, int, float, bytes)):
        return value
    try:
        return addr(value)
    except TypeError:
        return value


class EmulatedDevice(
    DescriptorApi, FindApi, BatchNormApi, PointwiseApi, NormApi, FusionApi, RuntimeApi, HipApi
):
    """The emulated libMIOpen (``.miopen``) and HIP runtime (``.hip``) of one fake GPU.

    ``version``: "3.4" or "3.5". ``without``: C names to leave out (as if the library lacked
    them). ``conv_catalogue(problem) -> [SolutionSpec]`` (best first) and
    ``fusion_applicable(plan, ops, version) -> reason | None`` may be replaced at any time.
    ``gcn_arch_name`` defaults to gfx908: there the real Debian builds compile the fp32 conv +
    bias + activation fusion plan the seed's test shapes use (on gfx942 it fails with status 7,
    and on gfx90a the engine's workaround table declines it; see _fusion.py).
    """

    def __init__(
        self,
        version: str = "3.5",
        *,
        gcn_arch_name: str = "gfx908",
        device_count: int = 1,
        total_memory: int = 64 << 30,
        without: Iterable[str] = (),
        conv_catalogue: Callable[[ConvProblem], list[SolutionSpec]] = default_catalogue,
        fusion_applicable: Callable[..., str | None] = default_fusion_applicable,
    ) -> None:
        if version not in VERSIONS:
            raise ValueError(f"version must be one of {sorted(VERSIONS)}, got {version!r}")
        super().__init__()
        self.version_name = version
        self.version = VERSIONS[version]
        self.gcn_arch_name = gcn_arch_name
        self.device_count = device_count
        self.total_memory = total_memory
        self.conv_catalogue = conv_catalogue
        self.known_solvers: dict[int, int] = {}
        self.fusion_applicable = fusion_applicable
        #: (name, status, message) of every failing status the emulation returned.
        self.errors: list[tuple[str, int, str]] = []
        #: Python exceptions raised inside the emulation (bugs of the device itself).
        self.internal_errors: list[tuple[str, BaseException]] = []
        self._armed: dict[str, list[list[int]]] = {}
        omitted = set(without)
        unknown = omitted - set(miopen_ctypes.PROTOTYPES) - set(HIP_PROTOTYPES)
        if unknown:
            raise ValueError(f"without= names no known prototype: {sorted(unknown)}")
        self.miopen = miopen_ctypes.MIOpenLibrary.from_functions(self._miopen_functions(omitted), version=self.version)
        self.hip = HipLibrary.from_functions(self._hip_functions(omitted))

    # ------------------------------------------------------------------ binding
    def _miopen_functions(self, omitted: set[str]) -> dict[str, Callable[..., Any]]:
        impls = implementations(self)
        out: dict[str, Callable[..., Any]] = {}
        for name, proto in miopen_ctypes.PROTOTYPES.items():
            if name in omitted or name not in impls or (proto.since >= _V3_5 and self.version < _V3_5):
                continue
            out[name] = self._wrap_miopen(name, proto.argnames, impls[name], proto.returns_status)
        return out

    def _wrap_miopen(
        self, name: str, names: tuple[str, ...], impl: Callable[[Args], Any], returns_status: bool
    ) -> Callable[..., Any]:
        def status_of(exc: Exception) -> Status | None:
            if isinstance(exc, Status):
                return exc
            return self.fault(str(exc)) if isinstance(exc, MemoryFault) else None

        return self._emulated(name, names, lambda args: impl(Args(names, args)), returns_status, status_of)

    def _hip_functions(self, omitted: set[str]) -> dict[str, Callable[..., Any]]:
        out: dict[str, Callable[..., Any]] = {}
        for name, impl in self.hip_functions().items():
            proto = HIP_PROTOTYPES.get(name)
            if proto is None or name in omitted:
                continue
            out[name] = self._wrap_hip(name, proto.argnames, impl, proto.returns_status)
        return out

    def _wrap_hip(self, name: str, names: tuple[str, ...], impl: Any, returns_status: bool) -> Callable[..., Any]:
        def status_of(exc: Exception) -> Status | None:
            if isinstance(exc, _HipStatus):
                return Status(exc.code, str(exc))
            return Status(HIP_INVALID_VALUE, exc.message) if isinstance(exc, Status) else None

        return self._emulated(name, names, lambda args: impl(*args), returns_status, status_of)

    def _emulated(
        self,
        name: str,
        names: tuple[str, ...],
        run: Callable[[tuple[Any, ...]], Any],
        returns_status: bool,
        status_of: Callable[[Exception], Status | None],
    ) -> Callable[..., Any]:
        """The recorded, fault-injectable C function around ``run``; ``status_of`` maps an
        exception to the failing status it reports (``None``: a device bug, re-raised)."""

        def emulated(*args: Any) -> Any:
            self.calls.append(Call(name, tuple(_recorded(v) for v in args), names))
            injected = self._injected(name)
            if injected is not None:
                self.errors.append((name, injected, "injected"))
                return injected
            try:
                result = run(args)
            except Exception as exc:
                status = status_of(exc)
                if status is None:
                    self.internal_errors.append((name, exc))
                    raise
                self.errors.append((name, status.code, status.message))
                return status.code
            return result if not returns_status else 0

        emulated.__name__ = name
        return emulated

    # ------------------------------------------------------------------ recording and faults
    def call_names(self) -> list[str]:
        """Names of the recorded calls, in order."""
        return [c.name for c in self.calls]

    def calls_of(self, name: str) -> list[Call]:
        """The recorded calls of one function."""
        return [c for c in self.calls if c.name == name]

    def clear_calls(self) -> None:
        """Forget the recorded calls (and recorded error statuses)."""
        self.calls.clear()
        self.errors.clear()

    def fail(self, name: str, status: int, nth: int = 1) -> None:
        """Make the ``nth`` call of ``name`` from now on return ``status`` (once)."""
        if name not in miopen_ctypes.PROTOTYPES and name not in HIP_PROTOTYPES:
            raise ValueError(f"{name!r} is not a bound MIOpen or HIP function")
        if nth < 1 or status == 0:
            raise ValueError("nth must be >= 1 and status non-zero")
        self._armed.setdefault(name, []).append([nth, int(status)])

    def disarm(self, name: str) -> None:
        """Forget the failures armed for ``name`` that have not struck yet."""
        self._armed.pop(name, None)

    def _injected(self, name: str) -> int | None:
        armed = self._armed.get(name)
        if not armed:
            return None
        hit = None
        for entry in armed:
            entry[0] -= 1
            if entry[0] == 0 and hit is None:
                hit = entry[1]
        armed[:] = [e for e in armed if e[0] > 0]
        return hit

    # ------------------------------------------------------------------ test helpers
    def alloc(self, nbytes: int) -> int:
        """A device allocation of ``nbytes`` (garbage-filled, as hipMalloc'd memory may be)."""
        return self.memory.alloc(max(int(nbytes), 1))

    def free(self, ptr: int) -> None:
        """Release an allocation made by ``alloc``/``upload``/hipMalloc."""
        self.memory.free(ptr)

    def upload(self, array: np.ndarray) -> int:
        """Copy ``array`` (its C-order bytes) into a new allocation; returns the device pointer."""
        data = np.ascontiguousarray(array)
        ptr = self.alloc(data.nbytes)
        if data.nbytes:
            ctypes.memmove(ptr, data.ctypes.data, data.nbytes)
        return ptr

    def download(
        self, ptr: int, shape: Sequence[int], dtype: Any, strides: Sequence[int] | None = None
    ) -> np.ndarray:
        """A host copy of the tensor at ``ptr`` (``strides`` in elements; default C order)."""
        dt = np.dtype(dtype)
        dims = tuple(int(d) for d in shape)
        if strides is None:
            strides, step = [0] * len(dims), 1
            for i in reversed(range(len(dims))):
                strides[i], step = step, step * dims[i]
        return self.memory.tensor(ptr, dt, dims, tuple(strides), "download").copy()

    def fill(self, ptr: int, value: float, dtype: Any = np.float32, count: int | None = None) -> None:
        """Set ``count`` elements (default: up to the allocation's end) at ``ptr`` to ``value``."""
        dt = np.dtype(dtype)
        if count is None:
            base = max(b for b in self.memory.live() if b <= ptr)
            count = (base + self.memory.live()[base] - ptr) // dt.itemsize
        self.memory.tensor(ptr, dt, (count,), (1,), "fill")[...] = value

    def live_allocations(self) -> dict[int, int]:
        """Live device allocations: pointer -> size in bytes (for leak checks)."""
        return self.memory.live()

    def live_objects(self, kind: str | None = None) -> dict[int, Any]:
        """Live MIOpen/HIP objects (handles, descriptors, plans, ...) for leak checks."""
        return self.handles.live(kind)

    def create_stream(self) -> int:
        """A new stream of this device (as hipStreamCreate would return)."""
        return self.handles.new("stream", object())
