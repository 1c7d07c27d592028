"""Loading MIOpen: discovery (lazy, cached) and ``MIOpenLibrary``, the bound prototype table.

    >>> import miopen_ctypes
    >>> lib = miopen_ctypes.load()                     # doctest: +SKIP
    >>> lib.capabilities.version                       # doctest: +SKIP
    (3, 5, 0)

Tests and the emulated device inject Python callables instead of a shared library::

    >>> lib = MIOpenLibrary.from_functions({"miopenGetErrorString": lambda s: b"boom"})
    >>> lib.miopenGetErrorString(3)
    b'boom'
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ._binding import BoundLibrary
from ._discovery import DISCOVERY_ENV, LibrarySpec, forget_failures, load_remembered
from ._functions import MIOpenFunctions
from .capabilities import Capabilities
from .errors import MIOpenNotFoundError, check_status
from .prototypes import PROTOTYPES, required_handles

__all__ = ["DISCOVERY_ENV", "MIOPEN_SPEC", "MIOpenLibrary", "load"]

MIOPEN_SPEC = LibrarySpec(
    env_var="HIPDNN_MIOPEN_LIBRARY",
    linux_names=("libMIOpen.so.1",),
    windows_names=("MIOpen.dll",),
    maps_marker="libMIOpen.so",
    rocm_sdk_name="miopen",
    probe_symbol="miopenGetVersion",
    rocm_sdk_dependencies=("amdhip64",),  # _rocm_sdk_core\bin: amdhip64, hiprtc, amd_comgr
)


class MIOpenLibrary(BoundLibrary, MIOpenFunctions):
    """MIOpen's C API bound from ``PROTOTYPES``: ``lib.miopenCreate(byref(handle))``.

    A failing ``miopenStatus_t`` raises its ``MIOpenStatusError`` subclass; a function the library
    lacks raises ``MIOpenVersionError``; a NULL handle where the header forbids it raises
    ``NullArgumentError``; a wrong argument type raises ``ctypes.ArgumentError`` -- all before or
    instead of a bad C call.
    """

    _kind = "MIOpen"

    def __init__(
        self, cfuncs: Mapping[str, Any], version: tuple[int, int, int] | None, path: str | None
    ) -> None:
        super().__init__(
            PROTOTYPES, cfuncs, version or (0, 0, 0), path, self._raise_status, required_handles
        )
        if version is None:
            self.version = self._query_version()  # the stubs read it when called
        self.capabilities = Capabilities(self.version, self.symbols)

    @classmethod
    def from_cdll(cls, cdll: ctypes.CDLL, path: str | None = None) -> MIOpenLibrary:
        """Bind an already opened shared library; the version comes from miopenGetVersion."""
        return cls(cls._resolve_cdll(cdll, PROTOTYPES), None, path or getattr(cdll, "_name", None))

    @classmethod
    def from_functions(
        cls,
        functions: Mapping[str, Callable[..., Any]],
        version: tuple[int, int, int] = (3, 5, 0),
    ) -> MIOpenLibrary:
        """Bind Python callables (keyed by C name) through ``CFUNCTYPE(restype, *argtypes)``.

        Arguments reach the callables exactly as C would see them (pointers as ctypes pointers,
        ``void*`` as ``int | None``, enums as ``int``); a name absent from ``functions`` behaves
        like a symbol absent from an older library. A callable returns the status (``None``
        means success) and may raise: the exception reaches the caller unchanged.
        Unknown names raise ``ValueError``.
        """
        return cls(cls._wrap_functions(functions, PROTOTYPES), tuple(version), None)  # type: ignore[arg-type]

    def _query_version(self) -> tuple[int, int, int]:
        cfunc = self.cfunc("miopenGetVersion")
        if cfunc is None:
            return (0, 0, 0)
        parts = [ctypes.c_size_t() for _ in range(3)]
        self.miopenGetVersion(*(ctypes.byref(p) for p in parts))
        return (parts[0].value, parts[1].value, parts[2].value)

    def error_string(self, status: int) -> str | None:
        """miopenGetErrorString's text for ``status``, or ``None`` if unavailable."""
        cfunc = self.cfunc("miopenGetErrorString")
        if cfunc is None:
            return None
        try:
            text = cfunc(status)
        except Exception:
            return None
        if isinstance(text, bytes):
            return text.decode("utf-8", "replace")
        return str(text) if text else None

    def _raise_status(self, function: str, status: int) -> None:
        check_status(function, status, self.error_string(status))


#: Loaded libraries, by the ``path`` they were asked for (None: discovered).
_cache: dict[str | None, MIOpenLibrary] = {}
_lock = threading.Lock()


def load(path: str | os.PathLike[str] | None = None, *, refresh: bool = False) -> MIOpenLibrary:
    """Find, load and bind MIOpen once per process (per ``path``).

    Order (miopen_ctypes/_discovery.py): ``path``, else ``$HIPDNN_MIOPEN_LIBRARY``; else a copy
    already loaded in the process, TheRock wheels (``rocm_sdk``), PyTorch ROCm's ``torch/lib``,
    ``$ROCM_PATH``/``$HIP_PATH`` (Linux also ``/opt/rocm``; Windows also the versioned
    ``AMD\\ROCm\\<X.Y>`` folders), then the soname (Linux) or the ``PATH`` folders and System32
    (Windows). Raises ``MIOpenNotFoundError`` listing every place tried and why it failed.

    A failed search is remembered (the same error is raised again without touching the file
    system) until one of :data:`DISCOVERY_ENV` changes or ``refresh=True`` is passed, e.g.
    after installing ROCm or loading MIOpen through another package in this process.
    """
    key = None if path is None else os.fspath(path)
    with _lock:
        if refresh:
            forget_failures()
        cached = _cache.get(key)
        if cached is not None:
            return cached
        cdll, where = load_remembered(MIOPEN_SPEC, key, MIOpenNotFoundError)
        library = MIOpenLibrary.from_cdll(cdll, where)
        _cache[key] = library
        return library
